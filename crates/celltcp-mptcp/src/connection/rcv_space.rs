//! The connection-level receive buffer and window of [`MptcpConnection`] (RFC 8684 §3.3.4: one
//! receive window for the whole connection, relative to the DATA_ACK, carried by every
//! subflow's window field; §3.3.6: its right edge never moves left), as Linux runs them
//! (net/mptcp/protocol.c, options.c, subflow.c):
//!
//! - Autotuning (`mptcp_rcv_space_adjust`, `mptcp_rcvbuf_grow`): the connection measures the
//!   bytes its application reads per RTT, the RTT being the largest receiver RTT estimate of
//!   its subflows (`rcv_rtt_est`; "Use highest rtt estimate of the subflows in use"); when a
//!   measurement exceeds the previous one, the buffer becomes 2·copied plus twice
//!   2·copied·(copied − previous)/previous ("slow start: allow the sender to double its rate"),
//!   at most `tcp_rmem[2]`, and never shrinks. It starts at the subflows' initial buffer
//!   (`mptcp_init_sock`: `tcp_rmem[1]`) and the first measurement is min(the initial
//!   subflow's window, 10 MSS) (`mptcp_rcv_space_init`). A fixed buffer (`SO_RCVBUF`,
//!   `SOCK_RCVBUF_LOCK`) never grows. Buffers count payload only, as in `celltcp-tcp`
//!   (`mptcp_space_from_win` is the identity).
//! - Propagation: every subflow's receive buffer and window clamp follow the connection's
//!   ("Make subflows follow along", `tcp_rcvbuf_grow` on each subflow); a subflow runs no
//!   autotuning of its own (its data is moved to the connection, never read through
//!   `tcp_recvmsg`). The model gives each subflow the connection's buffer itself, where Linux
//!   recomputes it from the subflow's own previous measurement: the same size once both have
//!   seen a measurement.
//! - The window a subflow offers (`__tcp_select_window` with `mptcp_space` on a subflow): the
//!   connection's free space, capped by the subflow's own `rcv_ssthresh`, which ramps with its
//!   own in-order data (`tcp_grow_window`, up to the propagated buffer); never shrunk at the
//!   subflow level. Then `mptcp_set_rwin`: the data-level right edge it gives, DATA_ACK +
//!   window, becomes the connection's (`msk->rcv_wnd_sent`) if it is further right; if it is
//!   left of the edge already advertised on any subflow, the segment carries that edge
//!   instead and the subflow accepts up to it ("raise_win"). So the connection's window grows
//!   with its fastest-ramping subflow and a joining subflow offers the connection's at once.
//!   The field is rounded up to the window-scale granularity (Linux rounds this raised value
//!   down, a few bytes left of the edge; §3.3.6 asks that it never move left).
//! - Window updates (`mptcp_cleanup_rbuf`, after each application read): when the read
//!   leaves a free space at least twice the window last advertised (`msk->old_wspace`, the
//!   window of the last segment sent), each subflow whose own remaining window is at most
//!   half its clamp and that would now offer at least twice that (`tcp_cleanup_rbuf`) sends an
//!   ACK at once. A closed window therefore always reopens with an update. Not modelled:
//!   `mptcp_subflow_could_cleanup` (a subflow's delayed ACK flushed by the read; the model's
//!   subflows ACK every second full segment at once anyway).

use celltcp_tcp::BufSize;

use super::*;

/// Linux `TCP_INIT_CWND`: the first measurement is at most this many MSS.
const INIT_SPACE_SEGMENTS: u64 = 10;

/// Linux `msk->rcvq_space` and `sk_rcvbuf`: the connection's receive buffer and its
/// autotuning state.
#[derive(Clone, Copy, Debug)]
pub(super) struct RcvSpace {
    /// The buffer now (`sk_rcvbuf`), payload bytes.
    pub(super) buf: u64,
    /// The most autotuning grows it to (`tcp_rmem[2]`).
    max: u64,
    /// Autotuning on (off: a fixed buffer, `SOCK_RCVBUF_LOCK`).
    auto: bool,
    /// `rcvspace_init`: the first application read started the measurement.
    init: bool,
    /// `rcvq_space.space`: the bytes read in the last measurement that grew.
    space: u64,
    /// `rcvq_space.copied`: the bytes read since `time`.
    copied: u64,
    /// `rcvq_space.time`: the start of the measurement.
    time: SimTime,
    /// `rcvq_space.rtt_us`: the subflows' largest receiver RTT estimate, last seen.
    rtt: SimDuration,
}

impl RcvSpace {
    /// From the subflows' `tcp.rcv_buf` (autotuned from its initial size, or fixed) and the
    /// connection's bound `rcv_buf` (see [`MptcpConfig::rcv_buf`]).
    pub(super) fn new(cfg: &MptcpConfig) -> Self {
        let (buf, max, auto) = match cfg.tcp.rcv_buf {
            BufSize::Fixed(b) => (b.min(cfg.rcv_buf), b.min(cfg.rcv_buf), false),
            BufSize::Auto { initial, .. } => {
                let max = cfg.tcp.rcv_buf.max().min(cfg.rcv_buf);
                (initial.min(max), max, true)
            }
        };
        RcvSpace {
            buf,
            max,
            auto,
            init: false,
            space: 0,
            copied: 0,
            time: SimTime::ZERO,
            rtt: SimDuration::ZERO,
        }
    }
}

// Linux `mptcp_rcvbuf_grow`: the same rule as TCP's `tcp_rcvbuf_grow`
// (`celltcp_tcp::receiver::linux_rcvbuf_grow`), on the connection's bytes.
use celltcp_tcp::receiver::linux_rcvbuf_grow as rcvbuf_grow;

impl MptcpConnection {
    /// The connection's receive buffer now, bytes (grown by autotuning unless fixed).
    pub fn rcv_buf(&self) -> u64 {
        self.rcv_space.buf
    }

    /// The connection's free receive space, bytes (Linux `__mptcp_space`).
    pub(super) fn rcv_free(&self) -> u64 {
        self.adv_edge() - self.rcv_nxt
    }

    /// Gives every subflow the connection's buffer (its window clamp) and free space (the most
    /// its window offers): Linux's subflows read both from the msk.
    pub(super) fn sync_rcv_space(&mut self) {
        let buf = self.rcv_space.buf;
        let free = self.rcv_free();
        for s in &mut self.subflows {
            s.ep.set_mptcp_rcv_space(buf, free);
        }
    }

    /// Linux `mptcp_rcv_space_adjust` after the application read `copied` bytes.
    pub(super) fn rcv_space_adjust(&mut self, now: SimTime, copied: u64) {
        if copied == 0 {
            return;
        }
        if !self.rcv_space.init {
            // mptcp_rcv_space_init: min(the initial subflow's window, TCP_INIT_CWND advmss)
            let first = &self.subflows[0].ep;
            let space = first
                .rcv_wnd()
                .min(INIT_SPACE_SEGMENTS * u64::from(first.mss()));
            let rs = &mut self.rcv_space;
            rs.init = true;
            rs.space = if space == 0 {
                INIT_SPACE_SEGMENTS * 536
            } else {
                space
            };
            rs.copied = 0;
            rs.rtt = SimDuration::ZERO;
            rs.time = now;
        }
        self.rcv_space.copied += copied;
        let time = now.saturating_since(self.rcv_space.time);
        if self.rcv_space.rtt > SimDuration::ZERO && time < self.rcv_space.rtt {
            return;
        }
        let rtt = self
            .subflows
            .iter()
            .filter(|s| s.state != SubflowState::Failed)
            .map(|s| s.ep.rcv_rtt_est())
            .max()
            .unwrap_or(SimDuration::ZERO);
        let rs = &mut self.rcv_space;
        rs.rtt = rtt;
        if rtt == SimDuration::ZERO || time < rtt {
            return;
        }
        let mut grown = false;
        if rs.copied > rs.space {
            // mptcp_rcvbuf_grow
            let (old, new) = (rs.space, rs.copied);
            rs.space = new;
            if rs.auto {
                let nb = rcvbuf_grow(old, new, rs.max);
                if nb > rs.buf {
                    rs.buf = nb;
                    grown = true;
                }
            }
        }
        rs.copied = 0;
        rs.time = now;
        if grown {
            self.sync_rcv_space();
        }
    }

    /// Linux `mptcp_set_rwin` for the segment `seg` leaving subflow `i`, whose window field
    /// the subflow filled from the connection's free space: advertise the connection's right
    /// edge if it lies further right, else make it the connection's.
    pub(super) fn set_rwin(&mut self, i: usize, seg: &mut TcpSegment) {
        let shift = self.subflows[i].ep.negotiated().rcv_wscale as u32;
        let wnd = u64::from(seg.window) << shift;
        let edge = self.rcv_nxt + wnd;
        self.old_wspace = if edge >= self.last_adv_edge {
            self.last_adv_edge = edge;
            wnd
        } else {
            let field = (self.last_adv_edge - self.rcv_nxt)
                .div_ceil(1 << shift)
                .min(65_535);
            seg.window = field as u16;
            self.subflows[i].ep.raise_rcv_window(field << shift);
            field << shift
        };
    }

    /// Linux `mptcp_cleanup_rbuf` after the application read `copied` bytes: a window update
    /// on each subflow that `tcp_cleanup_rbuf` would send one on, when the free space is at
    /// least twice the window last advertised.
    pub(super) fn cleanup_rbuf(&mut self, copied: u64) {
        let space = self.rcv_free();
        if copied == 0 || space == 0 || space < 2 * self.old_wspace {
            return;
        }
        let clamp = self.rcv_space.buf;
        for s in self.subflows.iter_mut().filter(|s| s.usable()) {
            // tcp_cleanup_rbuf: `2 * rcv_window_now <= window_clamp`, and the new window
            // (`__tcp_select_window`: none below an MSS when less than half the buffer is
            // free) at least twice what is left of the one advertised
            let now_wnd = s.ep.rcv_wnd();
            if 2 * now_wnd > clamp {
                continue;
            }
            let mss = u64::from(s.ep.mss());
            let new = if space < clamp / 2 && space < mss {
                0
            } else {
                space.min(s.ep.rcv_ssthresh())
            };
            if new > 0 && new >= 2 * now_wnd {
                s.ep.send_ack_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rcvbuf_grow_is_linux_mptcp_rcvbuf_grow() {
        // By hand from mptcp_rcvbuf_grow: old = 10 MSS of 1420 = 14200, 100000 read in the
        // last RTT: rcvwin = 200000, grow = 200000 * 85800 / 14200 = 1208450 (integer),
        // rcvwin + 2 grow = 2616900.
        assert_eq!(rcvbuf_grow(14_200, 100_000, 6 << 20), 2_616_900);
        // a steady rate (new == old): twice the bytes per RTT
        assert_eq!(rcvbuf_grow(500_000, 500_000, 6 << 20), 1_000_000);
        // capped at tcp_rmem[2]
        assert_eq!(rcvbuf_grow(14_200, 100_000, 1 << 20), 1 << 20);
    }

    #[test]
    fn the_buffer_follows_tcp_rcv_buf_bounded_by_rcv_buf() {
        // autotuned: from the payload share of tcp_rmem[1] (128 KiB x 160/256 = 80 KiB,
        // `tcp_win_from_space`) up to 6 MiB
        let c = MptcpConfig::default();
        let r = RcvSpace::new(&c);
        assert_eq!((r.buf, r.max, r.auto), (80 * 1024, 6 << 20, true));
        // `mptcp.rcv_buf` bounds the growth
        let r = RcvSpace::new(&MptcpConfig {
            rcv_buf: 1 << 20,
            ..c
        });
        assert_eq!((r.buf, r.max, r.auto), (80 * 1024, 1 << 20, true));
        // SO_RCVBUF (the flow's `window`): fixed
        let mut t = c.tcp;
        t.rcv_buf = BufSize::Fixed(300_000);
        let r = RcvSpace::new(&MptcpConfig { tcp: t, ..c });
        assert_eq!((r.buf, r.max, r.auto), (300_000, 300_000, false));
    }
}
