//! The receive side: reassembly, SACK generation, delayed ACKs, the advertised window and
//! receive-buffer autotuning.
//!
//! - Reassembly: out-of-order data is kept as sorted, disjoint ranges (no payload is stored).
//! - SACK blocks (RFC 2018 §4): the first block holds the most recently received segment, the
//!   others are the most recently changed ranges, as many as the option space allows.
//! - Delayed ACK (RFC 1122 §4.2.3.2, RFC 5681 §4.2): ACK at least every second full-sized
//!   segment, otherwise within the delayed-ACK timeout; ACK at once for out-of-order data, for
//!   data filling a hole (RFC 5681 §4.2), for duplicates and for a FIN.
//! - The delayed-ACK timeout is Linux's adaptive ATO unless fixed (`delayed_ack_timeout`):
//!   - `tcp_event_data_recv`, on every in-order data segment: the first sets ato =
//!     [`ATO_MIN`] (40 ms, `TCP_ATO_MIN`); later ones, `m` after the previous, set
//!     ato = ato/2 + ATO_MIN/2 if m <= ATO_MIN/2 (so a busy flow stays at 40 ms),
//!     ato = min(ato/2 + m, RTO) if m < ato, and re-enter quick-ACK mode
//!     (`tcp_incr_quickack`) if m > RTO (the sender was idle).
//!   - `tcp_delack_timer_handler`: a delayed ACK sent by the timer doubles ato, at most RTO.
//!   - `tcp_send_delayed_ack`: the timer is ato, but when ato > `TCP_DELACK_MIN` (40 ms) at
//!     most max(SRTT, 40 ms) and 500 ms, and always at most `TCP_DELACK_MAX` (200 ms,
//!     `icsk_delack_max`); a timer already running is kept.
//!
//!   RTO and SRTT are the endpoint's own estimates ([`Receiver::set_rtt_bounds`]).
//!   Not modelled: interactive (pingpong) mode and the PSH-bit bound (both only lower the
//!   500 ms cap to 200 ms, which `TCP_DELACK_MAX` already enforces), and sending the ACK early
//!   when the running timer is within ato/4 of expiring.
//! - Quick-ACK mode (`tcp_incr_quickack`): min(rcv_wnd / (2 rcv_mss), max) in-order segments
//!   are ACKed at once, at least 2, at the first data segment and again after an idle gap
//!   longer than RTO (above); `max` is `quickack` (Linux: `TCP_MAX_QUICKACKS` = 16).
//! - Window growth (`tcp_grow_window`, called by `tcp_event_data_recv` for every in-order data
//!   segment of at least 128 bytes): `rcv_ssthresh`, the cap on the advertised window
//!   (`__tcp_select_window`), starts at the initial window (the SYN's) and grows by
//!   max(2 advmss, 2 · segment length) per segment, at most to min(window clamp, free space)
//!   (`room`); each growth sets `icsk_ack.quick |= 1`, so the segment's ACK goes at once (a
//!   quick-ACK budget of 2k becomes 2k + 1). celltcp's buffers count payload only, so a
//!   segment's truesize is its length and the kernel's check #2 (`tcp_win_from_space(truesize)
//!   <= skb->len`) always holds: the increment is never the smaller one of `__tcp_grow_window`.
//!   The window clamp is the receive buffer (grown by autotuning as Linux's `window_clamp` is
//!   in `tcp_rcv_space_adjust`). `quickack = 0` turns the ramp off with the quick ACKs (the
//!   window is then the free buffer from the start). Not modelled:
//!   growth on out-of-order segments (`tcp_data_queue_ofo`; their ACKs go at once anyway) and
//!   memory pressure.
//! - DSACK (RFC 2883 §4, Linux `tcp_dsack_set`, on by default as `tcp_dsack = 1`): a segment
//!   carrying data already received (below RCV.NXT, or inside an out-of-order range) is reported
//!   once, as the first SACK block of the next ACK, so that the sender can tell a spurious
//!   retransmission (RFC 3708) and widen RACK's reordering window (RFC 8985 §6.2).
//! - Window (RFC 9293 §3.8.6.2): the free receive buffer, never shrinking the right edge already
//!   advertised (§3.8.6.2.1), and moving the right edge only by at least
//!   `min(buffer / 2, MSS)` (receiver SWS avoidance, §3.8.6.2.2). Scaled by our shift (RFC 7323
//!   §2.3) except on SYNs.
//! - Autotuning (Linux `tcp_rcv_space_adjust`, dynamic right-sizing, as Linux 6.18 runs it):
//!   once per receiver RTT, if the application read more than in the previous measurement,
//!   the buffer becomes [`linux_rcvbuf_grow`] of the two (about twice the bytes read per RTT,
//!   more while that doubles), up to the maximum. Buffers count payload only (no skb overhead).
//! - Receiver RTT (Linux `tcp_rcv_rtt_measure[_ts]`, `tcp_rcv_rtt_update`): from echoed
//!   timestamps when negotiated (one sample per echoed value, from segments of at least one
//!   MSS: `rcv_rtt_last_tsecr`), otherwise the time to receive one window of data; a sample
//!   below the estimate replaces it (Linux >= 6.16), a larger timestamp sample is averaged in
//!   with gain 1/8. In slow start each round's first sample (its queue drained) is the
//!   smallest, so DRS runs at each round's first segment, as the kernel's trace shows. Not
//!   modelled: Linux 6.16's "skip big rtt sample if receive queue is not empty" (celltcp's
//!   readers leave nothing unread).

use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::packet::{SackBlock, TcpOptions};

use crate::config::BufSize;
use crate::seq;

/// Linux `TCP_ATO_MIN` (HZ / 25): the ATO of the first data segment, and its floor in a busy flow.
pub const ATO_MIN: SimDuration = SimDuration::from_millis(40);
/// Linux `TCP_DELACK_MIN` (HZ / 25): above this the ATO is bounded by the RTT.
pub const DELACK_MIN: SimDuration = SimDuration::from_millis(40);
/// Linux `TCP_DELACK_MAX` (HZ / 5), the default `icsk_delack_max`: the longest delayed-ACK timer.
pub const DELACK_MAX: SimDuration = SimDuration::from_millis(200);
/// `tcp_send_delayed_ack`'s `max_ato = HZ / 2` outside pingpong mode.
const ATO_CAP: SimDuration = SimDuration::from_millis(500);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OooRange {
    start: u64,
    end: u64,
    /// Recency stamp for RFC 2018 §4 block ordering.
    touched: u64,
}

/// What a received data segment did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvOutcome {
    /// Payload bytes newly made readable in order.
    pub in_order_bytes: u64,
    /// The segment was out of order (above RCV.NXT).
    pub out_of_order: bool,
    /// The segment carried nothing new.
    pub duplicate: bool,
    /// The peer's FIN was consumed by this segment (RCV.NXT advanced past it).
    pub fin: bool,
}

#[derive(Clone, Debug)]
pub struct Receiver {
    pub irs: u32,
    /// Absolute RCV.NXT (the peer's SYN is 0).
    pub rcv_nxt: u64,
    ooo: Vec<OooRange>,
    ooo_bytes: u64,
    tick: u64,
    /// In-order bytes not yet read by the application.
    pub readable: u64,
    /// Bytes read by the application so far.
    pub delivered: u64,
    /// Sequence number of the peer's FIN, once seen (possibly out of order).
    fin_seq: Option<u64>,
    pub fin_received: bool,
    pub buf: u64,
    buf_max: u64,
    auto: bool,
    /// The size autotuning asks for, and the application's cap on it (`buf` = the smaller).
    want: u64,
    cap: u64,
    /// Right edge of the window last advertised (RCV.NXT + RCV.WND).
    pub rcv_adv: u64,
    pub wscale: u8,
    pub mss: u64,
    // --- ACK generation
    delayed_ack: bool,
    /// `delayed_ack_timeout` when set; `None`: Linux's adaptive ATO.
    delack_fixed: Option<SimDuration>,
    /// Linux `icsk_ack.ato` (zero before the first data segment).
    ato: SimDuration,
    /// Linux `icsk_ack.lrcvtime`: when the last in-order data segment arrived.
    lrcvtime: Option<SimTime>,
    /// The endpoint's RTO and SRTT, bounding the ATO.
    rto: SimDuration,
    srtt: Option<SimDuration>,
    bytes_unacked: u64,
    /// In-order segments still to be ACKed at once (Linux quickack mode).
    pub quickack: u32,
    /// The quick-ACK budget's maximum (`quickack`; Linux `TCP_MAX_QUICKACKS`).
    quickack_max: u32,
    /// An MPTCP subflow: the connection's free receive space (Linux `mptcp_space`), which
    /// [`Receiver::advertise`] offers instead of this buffer's own free space
    /// ([`Receiver::set_mptcp_space`]).
    shared_free: Option<u64>,
    /// Linux `tp->rcv_ssthresh`: the most the advertised window may offer, grown by
    /// [`Receiver::grow_window`] (`tcp_grow_window`).
    pub rcv_ssthresh: u64,
    pub ack_now: bool,
    pub delack_deadline: Option<SimTime>,
    /// Report duplicates with DSACK (RFC 2883).
    pub dsack_enabled: bool,
    /// The duplicate range to report in the next ACK's first SACK block.
    pub dsack: Option<(u64, u64)>,
    /// RFC 7323 §4.3 TS.Recent and Last.ACK.sent.
    pub ts_recent: u32,
    pub last_ack_sent: u64,
    // --- autotuning (Linux rcvq_space, rcv_rtt_est)
    space: u64,
    space_seq: u64,
    space_time: SimTime,
    rtt_est: SimDuration,
    rtt_seq: u64,
    rtt_time: SimTime,
    /// Linux `rcv_rtt_last_tsecr`: the echoed TSval the last receiver RTT sample came from.
    rtt_last_tsecr: Option<u32>,
}

/// Linux `tcp_rcvbuf_grow` (and `mptcp_rcvbuf_grow`, the same rule), as Linux 6.18 runs it:
/// the receive window for `new` bytes read in the last receiver RTT after `old` in the
/// measurement before, 2·new ("DRS is always one RTT late") plus twice 2·new·(new − old)/old
/// ("slow start: allow the sender to double its rate"), at most `max`; payload bytes (the
/// kernel's `sk_rcvbuf` is `tcp_space_from_win` of it and `window_clamp` this value). Checked
/// against the kernel's `tcp:tcp_rcvbuf_grow` trace (receiver::tests). Older kernels (before
/// 6.16) added a 16-segment cushion to 2·new and grew by (2·new + cushion)·(new − old)/old.
pub fn linux_rcvbuf_grow(old: u64, new: u64, max: u64) -> u64 {
    let rcvwin = 2 * new;
    let grow = rcvwin * new.saturating_sub(old) / old.max(1);
    (rcvwin + 2 * grow).min(max)
}

impl Receiver {
    pub fn new(
        buf: BufSize,
        wscale: u8,
        mss: u64,
        delayed_ack: bool,
        delack_timeout: Option<SimDuration>,
    ) -> Self {
        Receiver {
            irs: 0,
            rcv_nxt: 0,
            ooo: Vec::new(),
            ooo_bytes: 0,
            tick: 0,
            readable: 0,
            delivered: 0,
            fin_seq: None,
            fin_received: false,
            buf: buf.initial(),
            buf_max: buf.max(),
            auto: buf.is_auto(),
            want: buf.initial(),
            cap: u64::MAX,
            rcv_adv: 0,
            wscale,
            mss,
            delayed_ack,
            delack_fixed: delack_timeout,
            ato: SimDuration::ZERO,
            lrcvtime: None,
            rto: SimDuration::from_secs(1),
            srtt: None,
            bytes_unacked: 0,
            quickack: 0,
            quickack_max: 0,
            shared_free: None,
            rcv_ssthresh: buf.initial().min(65_535),
            ack_now: false,
            delack_deadline: None,
            dsack_enabled: false,
            dsack: None,
            ts_recent: 0,
            last_ack_sent: 0,
            space: 0,
            space_seq: 0,
            space_time: SimTime::ZERO,
            rtt_est: SimDuration::ZERO,
            rtt_seq: 0,
            rtt_time: SimTime::ZERO,
            rtt_last_tsecr: None,
        }
    }

    /// The peer's SYN (sequence `irs`) was received: RCV.NXT = IRS + 1.
    pub fn on_syn(&mut self, irs: u32, now: SimTime) {
        self.irs = irs;
        self.rcv_nxt = 1;
        // Linux tcp_init_buffer_space: rcvq_space starts at the initial window, 10 segments.
        self.space = (10 * self.mss).min(self.buf);
        self.space_time = now;
        self.space_seq = 0;
        self.rtt_seq = 1;
        self.rtt_time = now;
        // the window our SYN or SYN-ACK offered, unscaled (RFC 7323 §2.2)
        self.rcv_adv = 1 + self.syn_window() as u64;
        // tcp_connect_init / tcp_openreq_init_rwin: rcv_ssthresh = the initial rcv_wnd.
        self.rcv_ssthresh = self.syn_window() as u64;
    }

    /// The window field of a SYN or SYN-ACK: never scaled (RFC 7323 §2.2).
    pub fn syn_window(&self) -> u16 {
        self.buf.min(65_535) as u16
    }

    pub fn set_mss(&mut self, mss: u64) {
        self.mss = mss;
        self.space = (10 * mss).min(self.buf);
    }

    /// Quick-ACK budget for the start of the connection, at most `max` segments (0: none):
    /// Linux `tcp_event_data_recv` calls `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)` on the first
    /// data segment, which allows rcv_wnd / (2 rcv_mss) immediate ACKs, at least 2, at most the
    /// maximum (16).
    /// `quickack = 0` also turns off the `rcv_ssthresh` ramp ([`Receiver::grow_window`]): the
    /// window is then the free buffer from the start, as before the ramp was modelled.
    pub fn init_quickack(&mut self, max: u32) {
        self.quickack_max = max;
        self.quickack = 0;
        self.incr_quickack();
        if max == 0 {
            self.rcv_ssthresh = u64::MAX;
        }
    }

    /// An MPTCP subflow (RFC 8684 §3.3.4): the receive buffer is the connection's, `buf` bytes,
    /// fixed here (a subflow runs no autotuning of its own: the connection grows every
    /// subflow's buffer and window clamp, Linux `mptcp_rcv_space_adjust` -> `tcp_rcvbuf_grow`),
    /// and the window offered is at most the connection's free space `free` (Linux
    /// `__tcp_select_window` takes `mptcp_space` on a subflow), capped by `rcv_ssthresh`, which
    /// still ramps with this subflow's own in-order data ([`Receiver::grow_window`], room from
    /// this subflow's own free space, `tcp_space(ssk)`). Queues no ACK (the connection decides
    /// its window updates, `mptcp_cleanup_rbuf`).
    pub fn set_mptcp_space(&mut self, buf: u64, free: u64) {
        self.auto = false;
        self.buf = buf;
        self.buf_max = buf;
        self.want = buf;
        self.cap = u64::MAX;
        self.shared_free = Some(free);
    }

    /// Raises the advertised right edge to RCV.NXT + `wnd` (never lowers it): an MPTCP subflow
    /// whose segment advertised the connection's right edge, beyond the subflow's own window,
    /// accepts what it advertised (Linux `mptcp_set_rwin`: "The msk-level rcv wnd is after the
    /// tcp level one, sync the latter", `tp->rcv_wnd = rcv_wnd_old - ack_seq`).
    pub fn raise_window(&mut self, wnd: u64) {
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + wnd);
    }

    /// The free space the advertised window is taken from: the buffer's own, or the MPTCP
    /// connection's ([`Receiver::set_mptcp_space`]).
    fn free_space(&self) -> u64 {
        self.shared_free
            .unwrap_or_else(|| self.buf.saturating_sub(self.used()))
    }

    /// Linux `tcp_incr_quickack(sk, max)`: the budget becomes at least
    /// min(rcv_wnd / (2 rcv_mss), max), rcv_wnd / (2 rcv_mss) counting as at least 2.
    fn incr_quickack(&mut self) {
        let by_window = (self.buf / (2 * self.mss.max(1))).max(2);
        let q = by_window.min(self.quickack_max as u64) as u32;
        self.quickack = self.quickack.max(q);
    }

    /// Linux `tcp_grow_window` for an in-order data segment of `len` bytes: raise `rcv_ssthresh`
    /// by max(2 advmss, 2 len) within `room` = min(window clamp, free space) - rcv_ssthresh, and
    /// if it grew, `icsk_ack.quick |= 1` (the ACK goes at once). Returns whether it grew.
    fn grow_window(&mut self, len: u64) -> bool {
        // tcp_event_data_recv: `if (skb->len >= 128) tcp_grow_window(sk, skb, true);`
        if len < 128 {
            return false;
        }
        let free = self.buf.saturating_sub(self.used());
        let room = self.buf.min(free).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        // Check #2 holds (payload-only buffers): incr = 2 advmss, then max(incr, 2 skb->len).
        let incr = (2 * self.mss).max(2 * len);
        self.rcv_ssthresh += room.min(incr);
        self.quickack |= 1;
        true
    }

    /// The endpoint's current RTO and SRTT (Linux reads `icsk_rto` and `srtt_us` of the same
    /// socket): they bound the adaptive ATO.
    pub fn set_rtt_bounds(&mut self, rto: SimDuration, srtt: Option<SimDuration>) {
        self.rto = rto;
        self.srtt = srtt;
    }

    /// Linux `tcp_event_data_recv`'s ATO estimate from the arrival of in-order data.
    fn ato_on_data(&mut self, now: SimTime) {
        match self.lrcvtime {
            None => self.ato = ATO_MIN,
            Some(last) => {
                let m = now.saturating_since(last);
                if m <= ATO_MIN / 2 {
                    self.ato = self.ato / 2 + ATO_MIN / 2;
                } else if m < self.ato {
                    self.ato = (self.ato / 2 + m).min(self.rto);
                } else if m > self.rto {
                    // "Too long gap. Apparently sender failed to restart window."
                    self.incr_quickack();
                }
            }
        }
        self.lrcvtime = Some(now);
    }

    /// Linux `icsk_ack.ato` (zero before the first data segment).
    pub fn ato(&self) -> SimDuration {
        self.ato
    }

    /// The delayed-ACK timer to arm now: `delayed_ack_timeout` if set, otherwise Linux's
    /// `tcp_send_delayed_ack` bound of the ATO.
    pub fn delack_timeout(&self) -> SimDuration {
        if let Some(fixed) = self.delack_fixed {
            return fixed;
        }
        let mut ato = self.ato.max(SimDuration::from_nanos(1));
        if ato > DELACK_MIN {
            let mut max_ato = ATO_CAP;
            if let Some(srtt) = self.srtt {
                max_ato = max_ato.min(srtt.max(DELACK_MIN));
            }
            ato = ato.min(max_ato);
        }
        ato.min(DELACK_MAX)
    }

    /// The delayed-ACK timer expired with an ACK pending (Linux `tcp_delack_timer_handler`
    /// outside pingpong mode: "Delayed ACK missed: inflate ATO", ato = min(2 ato, RTO)).
    pub fn on_delack_timer(&mut self) {
        if self.delack_fixed.is_none() {
            self.ato = (self.ato * 2).min(self.rto);
        }
    }

    pub fn ooo_is_empty(&self) -> bool {
        self.ooo.is_empty()
    }

    /// Buffered bytes (unread in-order plus out-of-order).
    pub fn used(&self) -> u64 {
        self.readable + self.ooo_bytes
    }

    /// The window currently offered to the peer (right edge minus RCV.NXT).
    pub fn window(&self) -> u64 {
        self.rcv_adv.saturating_sub(self.rcv_nxt)
    }

    /// Whether `[start, end)` (zero length allowed) is acceptable (RFC 9293 §3.10.7.4 table).
    pub fn acceptable(&self, start: u64, len: u64) -> bool {
        let wnd = self.window();
        match (len, wnd) {
            (0, 0) => start == self.rcv_nxt,
            (0, _) => start >= self.rcv_nxt && start < self.rcv_nxt + wnd,
            (_, 0) => false,
            (_, _) => {
                let end = start + len;
                (start >= self.rcv_nxt && start < self.rcv_nxt + wnd)
                    || (end > self.rcv_nxt && end <= self.rcv_nxt + wnd)
            }
        }
    }

    /// Data `[start, start + payload)` (and a FIN after it if `fin`) arrived.
    pub fn on_data(&mut self, now: SimTime, start: u64, payload: u64, fin: bool) -> RecvOutcome {
        let mut out = RecvOutcome::default();
        let mut end = start + payload;
        if fin {
            self.fin_seq = Some(end);
        }
        // Trim anything beyond the advertised right edge (RFC 9293 §3.10.7.4).
        let right = self.rcv_adv.max(self.rcv_nxt);
        if end > right {
            end = right;
        }
        let had_hole = !self.ooo.is_empty();
        if end <= self.rcv_nxt && !(fin && self.fin_seq == Some(self.rcv_nxt) && !self.fin_received)
        {
            // Nothing new: answer at once (RFC 5681 §4.2 / RFC 9293: ACK an unacceptable segment).
            out.duplicate = true;
            self.ack_now = true;
            self.set_dsack(start, end.min(self.rcv_nxt));
            return out;
        }
        if start < self.rcv_nxt {
            // Partly old: the old part is a duplicate (Linux `tcp_data_queue`).
            self.set_dsack(start, self.rcv_nxt);
        }
        if start <= self.rcv_nxt {
            let before = self.rcv_nxt;
            self.rcv_nxt = self.rcv_nxt.max(end);
            // Pull in any out-of-order ranges now contiguous.
            while let Some(r) = self.ooo.first().copied() {
                if r.start > self.rcv_nxt {
                    break;
                }
                self.ooo.remove(0);
                self.ooo_bytes -= r.end - r.start;
                self.rcv_nxt = self.rcv_nxt.max(r.end);
            }
            // ooo ranges overlapping rcv_nxt were removed entirely; their bytes are now in order.
            let adv = self.rcv_nxt - before;
            self.readable += adv;
            out.in_order_bytes = adv;
            if payload > 0 {
                self.ato_on_data(now);
                self.grow_window(payload);
            }
            if had_hole {
                // RFC 5681 §4.2: ACK at once when a segment fills (part of) a hole.
                self.ack_now = true;
            } else if !self.delayed_ack {
                self.ack_now = true;
            } else if self.quickack > 0 {
                // Linux quickack mode: ACK at once while the counter lasts.
                self.quickack -= 1;
                self.ack_now = true;
            } else {
                self.bytes_unacked += adv;
                // "at least every second full-sized segment" (RFC 5681 §4.2; Linux: > 1 rcv_mss).
                if self.bytes_unacked >= 2 * self.mss {
                    self.ack_now = true;
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + self.delack_timeout());
                }
            }
            self.rtt_measure_window(now);
        } else {
            out.out_of_order = true;
            // Data already held out of order (Linux `tcp_data_queue_ofo`): DSACK the overlap.
            if let Some(r) = self.ooo.iter().find(|r| r.start < end && start < r.end) {
                let (l, h) = (start.max(r.start), end.min(r.end));
                self.set_dsack(l, h);
                out.duplicate = l == start && h == end;
            }
            if end > start {
                self.insert_ooo(start, end);
            }
            // RFC 5681 §4.2: an out-of-order segment is acknowledged at once (with SACK).
            self.ack_now = true;
        }
        if let Some(f) = self.fin_seq {
            if !self.fin_received && self.rcv_nxt == f {
                self.rcv_nxt += 1;
                self.fin_received = true;
                out.fin = true;
                self.ack_now = true;
            }
        }
        out
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        self.tick += 1;
        let mut s = start;
        let mut e = end;
        // find overlapping/adjacent ranges and merge
        let i = self.ooo.partition_point(|r| r.end < s);
        let mut removed = 0;
        while i < self.ooo.len() && self.ooo[i].start <= e {
            let r = self.ooo.remove(i);
            s = s.min(r.start);
            e = e.max(r.end);
            removed += r.end - r.start;
        }
        self.ooo_bytes = self.ooo_bytes - removed + (e - s);
        self.ooo.insert(
            i,
            OooRange {
                start: s,
                end: e,
                touched: self.tick,
            },
        );
    }

    /// Remembers `[start, end)` as a duplicate to report (RFC 2883 §4: the first duplicate
    /// since the last ACK is the one reported).
    pub fn set_dsack(&mut self, start: u64, end: u64) {
        if self.dsack_enabled && end > start && self.dsack.is_none() {
            self.dsack = Some((start, end));
        }
    }

    /// Whether the next ACK has SACK blocks to carry.
    pub fn has_sack_info(&self) -> bool {
        !self.ooo.is_empty() || self.dsack.is_some()
    }

    /// Appends up to the option space's SACK blocks: the pending DSACK first (RFC 2883 §4,
    /// reported once), then the out-of-order ranges in RFC 2018 §4 order.
    pub fn fill_sack(&mut self, opts: &mut TcpOptions) {
        if let Some((l, r)) = self.dsack.take() {
            opts.push_sack(SackBlock {
                left: seq::wrap(self.irs, l),
                right: seq::wrap(self.irs, r),
            });
        }
        let mut prev = u64::MAX;
        loop {
            // the most recently touched range not yet emitted (touched stamps are unique)
            let best = self
                .ooo
                .iter()
                .filter(|r| r.touched < prev)
                .max_by_key(|r| r.touched);
            let Some(r) = best else { break };
            prev = r.touched;
            let b = SackBlock {
                left: seq::wrap(self.irs, r.start),
                right: seq::wrap(self.irs, r.end),
            };
            if !opts.push_sack(b) {
                break;
            }
        }
    }

    /// The raw window field for the next segment, updating the advertised right edge.
    pub fn advertise(&mut self, scaled: bool) -> u16 {
        // Linux __tcp_select_window: the free space, at most rcv_ssthresh.
        let full = self.buf.min(self.rcv_ssthresh);
        let free = self.free_space().min(full);
        let cur = self.window();
        // RFC 9293 §3.8.6.2.2: move the right edge only by a worthwhile amount.
        let thresh = (self.buf / 2).min(self.mss);
        let wnd = if free >= cur + thresh || (free > cur && free == full) {
            free
        } else {
            cur
        };
        let shift = if scaled { self.wscale } else { 0 };
        // round up so that the right edge never moves left (RFC 9293 §3.8.6.2.1)
        let field = wnd.div_ceil(1 << shift).min(65_535);
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + (field << shift));
        field as u16
    }

    /// An ACK carrying RCV.NXT is going out.
    pub fn on_ack_sent(&mut self) {
        self.ack_now = false;
        self.delack_deadline = None;
        self.bytes_unacked = 0;
        self.last_ack_sent = self.rcv_nxt;
    }

    /// Would a window update be worth sending now (RFC 9293 §3.8.6.2.2; Linux
    /// `tcp_cleanup_rbuf`): the window can open by at least `min(2 MSS, buffer / 2)`.
    pub fn window_update_due(&self) -> bool {
        let free = self.free_space().min(self.buf.min(self.rcv_ssthresh));
        let cur = self.window();
        free >= cur + (2 * self.mss).min(self.buf / 2).max(1)
    }

    /// The application reads up to `max` bytes.
    pub fn read(&mut self, now: SimTime, max: u64) -> u64 {
        let n = self.readable.min(max);
        self.readable -= n;
        self.delivered += n;
        if n > 0 && self.auto {
            self.space_adjust(now);
        }
        if n > 0 && self.window_update_due() {
            self.ack_now = true;
        }
        n
    }

    /// Linux `tcp_rcv_space_adjust` (DRS): once a receiver RTT has passed since the last
    /// measurement, if the application read more than `space` bytes in it (less what is still
    /// unread, `copied -= inq`; celltcp's readers leave none), the buffer grows to
    /// [`linux_rcvbuf_grow`] of the two.
    fn space_adjust(&mut self, now: SimTime) {
        if self.rtt_est == SimDuration::ZERO || now.saturating_since(self.space_time) < self.rtt_est
        {
            return;
        }
        let copied = self.delivered - self.space_seq;
        if copied > self.space {
            let nb = linux_rcvbuf_grow(self.space, copied, self.buf_max);
            if nb > self.want {
                self.want = nb;
                self.buf = nb.min(self.cap);
            }
            self.space = copied;
        }
        self.space_seq = self.delivered;
        self.space_time = now;
    }

    /// Linux `tcp_rcv_rtt_update` (since 6.16, "tcp: always seek for minimal rtt in
    /// tcp_rcv_rtt_update()"): a sample below the estimate replaces it at once; a larger one
    /// is averaged in with gain 1/8 if it came from a timestamp, and ignored if it came from
    /// the time to receive a window (an upper bound).
    fn rtt_sample(&mut self, s: SimDuration, win_dep: bool) {
        let s = s.max(SimDuration::from_micros(1));
        if self.rtt_est == SimDuration::ZERO || s < self.rtt_est {
            self.rtt_est = s;
        } else if !win_dep {
            self.rtt_est = SimDuration((self.rtt_est.0 * 7 + s.0) / 8);
        }
    }

    /// Linux `tcp_rcv_rtt_measure`: time to receive one window (used without timestamps).
    fn rtt_measure_window(&mut self, now: SimTime) {
        if self.rcv_nxt >= self.rtt_seq {
            if self.rtt_seq > 1 {
                self.rtt_sample(now.saturating_since(self.rtt_time), true);
            }
            self.rtt_seq = self.rcv_nxt + self.window().max(self.mss);
            self.rtt_time = now;
        }
    }

    /// Linux `tcp_rcv_rtt_measure_ts`: an echoed timestamp on a data segment.
    pub fn rtt_measure_ts(&mut self, sample: SimDuration) {
        self.rtt_sample(sample, false);
    }

    /// A data segment of `payload` bytes echoing `tsecr` arrived when our TSval clock read
    /// `ts_now` (1 ms ticks). Linux `tcp_rcv_rtt_measure_ts` samples the receiver's RTT once
    /// per echoed value (`rcv_rtt_last_tsecr`: the segments a sender sends on one ACK all echo
    /// that ACK's TSval, and only the first measures the round trip; the later ones add the
    /// time they waited behind it) and only from segments of at least one MSS (`rcv_mss`).
    pub fn on_tsecr(&mut self, ts_now: u32, tsecr: u32, payload: u64) {
        if tsecr == 0 || self.rtt_last_tsecr == Some(tsecr) {
            return;
        }
        self.rtt_last_tsecr = Some(tsecr);
        if payload >= self.mss {
            let ms = ts_now.wrapping_sub(tsecr) as i32;
            if ms >= 0 {
                self.rtt_measure_ts(SimDuration::from_millis(ms.max(1) as u64));
            }
        }
    }

    /// The receiver's RTT estimate (zero before any).
    pub fn rtt_est(&self) -> SimDuration {
        self.rtt_est
    }

    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// The application sets the buffer (`SO_RCVBUF`): fixed from now on (no autotuning). A
    /// smaller buffer never shrinks the window already advertised (RFC 9293 §3.8.6.2.1); a
    /// larger one queues a window update when it is worth one ([`Receiver::window_update_due`]).
    pub fn set_buf(&mut self, bytes: u64) {
        self.buf = bytes;
        self.buf_max = bytes;
        self.want = bytes;
        self.cap = u64::MAX;
        self.auto = false;
        if self.window_update_due() {
            self.ack_now = true;
        }
    }

    /// Caps the buffer at `cap` bytes, autotuning still on below it (a proxy sizing its sockets
    /// to its memory): the buffer is the smaller of what autotuning asks for and the cap, the
    /// window already advertised is never shrunk, and a larger cap may queue a window update.
    pub fn set_cap(&mut self, cap: u64) {
        self.cap = cap;
        self.buf = self.want.min(cap);
        // rcv_ssthresh never stays below the window a socket starts with once the cap allows it:
        // a side created while its cap was 0 took rcv_ssthresh = 0 from its SYN window, and the
        // ramp only grows with data, which a zero window never lets in
        if self.rcv_ssthresh != u64::MAX {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.buf.min(65_535));
        }
        if self.rcv_nxt == 1 && self.last_ack_sent == 0 {
            // the peer's SYN is in and our SYN-ACK not yet sent: it will offer the capped
            // buffer, so the right edge and the initial space are the capped buffer's
            self.rcv_adv = 1 + self.syn_window() as u64;
            self.space = (10 * self.mss).min(self.buf);
        }
        if self.window_update_due() {
            self.ack_now = true;
        }
    }

    /// Would [`Receiver::set_cap`]`(cap)` leave every field as it is (the cap and the buffer
    /// already its, `rcv_ssthresh` not raised, no SYN-ACK pending, no window update queued that
    /// is not queued already)? A proxy re-granting many sockets the caps they have asks this
    /// first, so that only the sockets whose state a cap changes need servicing.
    pub fn cap_settled(&self, cap: u64) -> bool {
        let buf = self.want.min(cap);
        self.cap == cap
            && self.buf == buf
            && (self.rcv_ssthresh == u64::MAX || self.rcv_ssthresh >= buf.min(65_535))
            && !(self.rcv_nxt == 1 && self.last_ack_sent == 0)
            && (self.ack_now || !self.window_update_due())
    }

    /// The most bytes the receive buffer can come to hold without a new advertisement: the
    /// unread bytes plus the window offered (out-of-order bytes lie inside it); only the unread
    /// bytes once the peer's FIN has arrived.
    pub fn committed(&self) -> u64 {
        if self.fin_received {
            self.readable
        } else {
            self.readable + self.window()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    // ---------------------------------------------------------------- fixtures

    /// An established receiver with a 64 kB fixed buffer that has advertised its window.
    fn established() -> Receiver {
        let mut r = Receiver::new(
            BufSize::Fixed(64_000),
            0,
            MSS,
            true,
            Some(SimDuration::from_millis(40)),
        );
        r.on_syn(1000, SimTime::ZERO);
        r.advertise(false);
        r.on_ack_sent();
        r
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    // ---------------------------------------------------------------- in order

    #[test]
    fn receiver_delays_ack_until_second_full_segment() {
        // RFC 5681 §4.2: ACK at least every second full-sized segment.
        let mut r = established();
        r.on_data(t(0), 1, MSS, false);
        assert!(!r.ack_now);
        assert_eq!(r.delack_deadline, Some(t(40)));
        r.on_data(t(1), 1 + MSS, MSS, false);
        assert!(r.ack_now);
        assert_eq!(r.readable, 2 * MSS);
    }

    // ---------------------------------------------------------------- out of order

    #[test]
    fn receiver_sack_blocks_most_recent_first() {
        // RFC 2018 §4: the first block reports the most recent segment, then the others by recency.
        let mut r = established();
        r.on_data(t(0), 1 + 2 * MSS, MSS, false); // block A
        r.on_data(t(0), 1 + 5 * MSS, MSS, false); // block B
        r.on_data(t(0), 1 + 8 * MSS, MSS, false); // block C
        r.on_data(t(0), 1 + 3 * MSS, MSS, false); // extends A: A is most recent
        assert!(r.ack_now);
        let mut o = TcpOptions {
            timestamps: Some((1, 1)),
            ..Default::default()
        };
        r.fill_sack(&mut o);
        let w = |a: u64| seq::wrap(1000, a);
        assert_eq!(
            o.sack_blocks(),
            &[
                SackBlock {
                    left: w(1 + 2 * MSS),
                    right: w(1 + 4 * MSS)
                },
                SackBlock {
                    left: w(1 + 8 * MSS),
                    right: w(1 + 9 * MSS)
                },
                SackBlock {
                    left: w(1 + 5 * MSS),
                    right: w(1 + 6 * MSS)
                },
            ]
        );
        // filling the first hole acknowledges at once and merges
        r.on_ack_sent();
        let out = r.on_data(t(1), 1, 2 * MSS, false);
        assert!(r.ack_now);
        assert_eq!(out.in_order_bytes, 4 * MSS);
        assert_eq!(r.rcv_nxt, 1 + 4 * MSS);
        assert_eq!(r.ooo_bytes(), 2 * MSS);
    }

    #[test]
    fn receiver_quickack_acks_first_segments_at_once() {
        // Linux tcp_enter_quickack_mode at connection start.
        let mut r = established();
        r.quickack = 2;
        for k in 0..3 {
            r.on_ack_sent();
            r.on_data(t(k), 1 + k * MSS, MSS, false);
            assert_eq!(r.ack_now, k < 2, "segment {k}");
        }
    }

    #[test]
    fn receiver_quickack_budget_is_linux_tcp_incr_quickack() {
        // tcp_incr_quickack(sk, TCP_MAX_QUICKACKS): min(rcv_wnd / (2 rcv_mss), 16), at least 2.
        let mut r = established(); // 64,000-byte buffer, MSS 1000: 32 -> 16
        r.init_quickack(16);
        assert_eq!(r.quickack, 16);
        r.buf = 16 * 1024; // 16384 / 2000 = 8
        r.init_quickack(16);
        assert_eq!(r.quickack, 8);
        r.buf = 2000; // below one MSS: still 2
        r.init_quickack(16);
        assert_eq!(r.quickack, 2);
        r.init_quickack(0); // `quickack = 0`: none
        assert_eq!(r.quickack, 0);
    }

    /// A receiver with a fixed 200,000-byte buffer and Linux's quick ACKs (`quickack = 16`):
    /// rcv_ssthresh starts at the SYN's window, 65,535.
    fn growing() -> Receiver {
        let mut r = Receiver::new(
            BufSize::Fixed(200_000),
            2,
            MSS,
            true,
            Some(SimDuration::from_millis(40)),
        );
        r.on_syn(1000, SimTime::ZERO);
        r.init_quickack(16);
        r.advertise(true);
        r.on_ack_sent();
        r
    }

    #[test]
    fn receiver_grow_window_raises_rcv_ssthresh_by_two_advmss_up_to_the_clamp() {
        // tcp_grow_window: room = min(window_clamp, tcp_space) - rcv_ssthresh; with check #2
        // holding (payload-only buffers) incr = max(2 advmss, 2 skb->len) = 2000 per full
        // segment, rcv_ssthresh += min(room, incr). The application reads everything after each
        // segment, but tcp_grow_window runs with the segment queued (tcp_queue_rcv comes first),
        // so the free space then is 200,000 - 1000 and bounds it below the clamp.
        let mut r = growing();
        assert_eq!(r.rcv_ssthresh, 65_535);
        // __tcp_select_window: the advertised window is at most rcv_ssthresh.
        assert_eq!(r.window(), 65_536); // 65,535 rounded up to the window scale (4)
        let mut want = 65_535u64;
        for k in 0..80u64 {
            r.on_data(t(k), 1 + k * MSS, MSS, false);
            r.read(t(k), u64::MAX);
            want = (want + 2 * MSS).min(200_000 - MSS);
            assert_eq!(r.rcv_ssthresh, want, "segment {k}");
            r.advertise(true);
            r.on_ack_sent();
            assert!(r.window() <= r.rcv_ssthresh + 3, "window {}", r.window());
        }
        // 65,535 + 67 * 2000 > 199,000
        assert_eq!(r.rcv_ssthresh, 199_000);
        // A segment below 128 bytes does not grow it (tcp_event_data_recv: skb->len >= 128).
        let mut r = growing();
        r.on_data(t(0), 1, 127, false);
        assert_eq!(r.rcv_ssthresh, 65_535);
        r.on_data(t(1), 128, 128, false);
        assert_eq!(r.rcv_ssthresh, 65_535 + 2 * MSS);
        // Unread data leave less room: the free space (tcp_space) bounds it too.
        let mut r = growing();
        r.rcv_ssthresh = 150_000;
        r.on_data(t(0), 1, 60 * MSS, false); // 60,000 unread: free 140,000 < 150,000
        assert_eq!(r.rcv_ssthresh, 150_000);
    }

    #[test]
    fn receiver_grow_window_sets_quick_so_the_ack_goes_at_once() {
        // tcp_grow_window: `inet_csk(sk)->icsk_ack.quick |= 1` whenever rcv_ssthresh grows, so a
        // segment that would otherwise wait for its pair (RFC 5681 §4.2) is ACKed at once.
        let mut r = growing();
        r.quickack = 0; // the quick-ACK start is over
        for k in 0..4 {
            r.on_data(t(k), 1 + k * MSS, MSS, false);
            r.read(t(k), u64::MAX);
            assert!(r.ack_now, "segment {k}: rcv_ssthresh grew, the ACK goes at once");
            assert_eq!(r.quickack, 0, "quick |= 1 was spent on this ACK");
            r.on_ack_sent();
        }
        // Once rcv_ssthresh reaches the clamp, one ACK per two full segments again.
        r.rcv_ssthresh = 200_000;
        r.advertise(true); // the window opened to the clamp
        r.on_ack_sent();
        r.on_data(t(10), 1 + 4 * MSS, MSS, false);
        r.read(t(10), u64::MAX);
        assert!(!r.ack_now, "no growth: the ACK waits for the second segment");
        r.on_data(t(11), 1 + 5 * MSS, MSS, false);
        assert!(r.ack_now);
        // `quick |= 1` on an even budget adds one (16 | 1 = 17), spent on this segment's ACK.
        let mut r = growing();
        assert_eq!(r.quickack, 16);
        r.on_data(t(0), 1, MSS, false);
        assert!(r.ack_now);
        assert_eq!(r.quickack, 16);
        // `quickack = 0` turns the ramp off: no rcv_ssthresh cap, no quick ACK.
        let mut r = growing();
        r.init_quickack(0);
        r.on_data(t(0), 1, MSS, false);
        assert!(!r.ack_now);
        assert_eq!(r.rcv_ssthresh, u64::MAX);
    }

    /// Which in-order segments of a slow-starting sender's first two rounds (10 and 20
    /// full-sized segments, 1.2 ms apart, 40 ms between the rounds, each read at once) a
    /// receiver with buffer `buf` and Linux's quick ACKs ACKs at once.
    fn acked_at_once_in_two_rounds(buf: BufSize) -> Vec<bool> {
        const SEG: u64 = 1448;
        let mut r = Receiver::new(buf, 7, SEG, true, None);
        r.on_syn(1000, SimTime::ZERO);
        r.init_quickack(16);
        r.advertise(false);
        r.on_ack_sent();
        r.set_rtt_bounds(SimDuration::from_millis(250), Some(SimDuration::from_millis(50)));
        let mut at_once = Vec::new();
        for k in 0..30u64 {
            let now = SimTime::from_micros(1200 * k + if k >= 10 { 40_000 } else { 0 });
            r.on_data(now, 1 + k * SEG, SEG, false);
            r.read(now, u64::MAX);
            at_once.push(r.ack_now);
            if r.ack_now {
                r.advertise(true);
                r.on_ack_sent();
            }
        }
        at_once
    }

    #[test]
    fn receiver_default_buffer_acks_half_the_second_round_in_pairs_as_linux() {
        // Linux 6.18 (measured through `celltcp emu`, docs/tcp.md "The receiver's ACKs in slow
        // start"): the 128 KiB tcp_rmem[1] offers a window_clamp of tcp_win_from_space = 160/256
        // of it, 81,920 bytes, so tcp_grow_window's room (clamp - rcv_ssthresh 65,535) lasts six
        // segments; the quick-ACK budget (16) the next 16; then, until DRS raises the clamp
        // (one receiver RTT later), an ACK for every second segment.
        let got = acked_at_once_in_two_rounds(BufSize::RCV_DEFAULT);
        assert!(got[..22].iter().all(|&a| a), "{got:?}");
        assert_eq!(got[22..], [false, true, false, true, false, true, false, true], "{got:?}");
        // A clamp of the whole 128 KiB would grow rcv_ssthresh through both rounds and ACK
        // every segment at once: the ACK train CUBIC's HyStart then sees is unbroken.
        let whole = acked_at_once_in_two_rounds(BufSize::Auto { initial: 128 * 1024, max: 6 << 20 });
        assert!(whole.iter().all(|&a| a), "{whole:?}");
    }

    #[test]
    fn receiver_rtt_samples_each_echoed_timestamp_once_from_full_segments() {
        // tcp_rcv_rtt_measure_ts: `if (rx_opt.rcv_tsecr == rcv_rtt_last_tsecr) return;`, then
        // the sample only if the segment is at least rcv_mss long.
        let mut r = established();
        r.on_tsecr(151, 100, MSS); // 51 ms
        assert_eq!(r.rtt_est(), SimDuration::from_millis(51));
        // the second segment sent on the same ACK echoes the same TSval: no sample
        r.on_tsecr(153, 100, MSS);
        assert_eq!(r.rtt_est(), SimDuration::from_millis(51));
        // a short segment with a new echo: no sample, but its echo is the last one seen
        r.on_tsecr(160, 101, MSS - 1);
        assert_eq!(r.rtt_est(), SimDuration::from_millis(51));
        r.on_tsecr(161, 101, MSS);
        assert_eq!(r.rtt_est(), SimDuration::from_millis(51));
        // a new echo on a full segment: 7/8 x 51 + 1/8 x 59 = 52 ms
        r.on_tsecr(161, 102, MSS);
        assert_eq!(r.rtt_est(), SimDuration::from_millis(52));
        // no echo (TSecr 0) is no sample
        r.on_tsecr(500, 0, MSS);
        assert_eq!(r.rtt_est(), SimDuration::from_millis(52));
    }

    #[test]
    fn rcvbuf_grow_is_what_linux_6_18_traced() {
        // `tcp:tcp_rcvbuf_grow` on Linux 6.18 (the receiver of a CUBIC flow through `celltcp
        // emu`, 10 Mbit/s, 50 ms): each event prints the state before it acts; the next one
        // shows the window_clamp it set. copied 28,960 after space 15,928 -> window_clamp
        // 152,697; copied 56,472 after 28,960 -> 327,535 (the kernel's clamp is this value
        // through tcp_space_from_win and back, a byte lower).
        assert_eq!(linux_rcvbuf_grow(15_928, 28_960, 32 << 20), 152_698);
        assert_eq!(linux_rcvbuf_grow(28_960, 56_472, 32 << 20), 327_536);
        // copied 15,928 after 14,480: 38,226, below the 81,920 clamp, so no change (the
        // event after it still shows 131,072 of buffer)
        assert_eq!(linux_rcvbuf_grow(14_480, 15_928, 32 << 20), 38_226);
        assert_eq!(linux_rcvbuf_grow(14_480, 100_000, 1 << 20), 1 << 20);
    }

    #[test]
    fn receiver_rtt_latches_a_smaller_sample_and_averages_a_larger_one() {
        // tcp_rcv_rtt_update since Linux 6.16: `if (old_sample == 0 || m < old_sample)
        // new_sample = m;` else, for a timestamp sample, EWMA with gain 1/8; a window-based
        // (win_dep) larger sample is ignored.
        let mut r = established();
        r.rtt_measure_ts(SimDuration::from_millis(60));
        r.rtt_measure_ts(SimDuration::from_millis(68)); // 60 + 8/8
        assert_eq!(r.rtt_est(), SimDuration::from_millis(61));
        r.rtt_measure_ts(SimDuration::from_millis(51)); // smaller: latched at once
        assert_eq!(r.rtt_est(), SimDuration::from_millis(51));
        r.rtt_sample(SimDuration::from_millis(90), true); // a window's time: an upper bound
        assert_eq!(r.rtt_est(), SimDuration::from_millis(51));
        r.rtt_sample(SimDuration::from_millis(40), true);
        assert_eq!(r.rtt_est(), SimDuration::from_millis(40));
    }

    /// An established receiver with Linux's adaptive ATO (no fixed timer), RTO 300 ms.
    fn adaptive(srtt: Option<SimDuration>) -> Receiver {
        let mut r = Receiver::new(BufSize::Fixed(64_000), 0, MSS, true, None);
        r.on_syn(1000, SimTime::ZERO);
        r.advertise(false);
        r.on_ack_sent();
        r.set_rtt_bounds(SimDuration::from_millis(300), srtt);
        r
    }

    #[test]
    fn receiver_ato_starts_at_ato_min_and_stays_there_in_a_busy_flow() {
        // tcp_event_data_recv: the first data segment sets ato = TCP_ATO_MIN (40 ms); a gap
        // m <= TCP_ATO_MIN / 2 gives ato/2 + 20 ms, whose fixed point is 40 ms.
        let mut r = adaptive(Some(SimDuration::from_millis(10)));
        assert_eq!(r.ato(), SimDuration::ZERO);
        r.on_data(t(0), 1, MSS, false);
        assert_eq!(r.ato(), ATO_MIN);
        assert_eq!(r.delack_deadline, Some(t(40)), "tcp_send_delayed_ack: ato = 40 ms");
        r.on_ack_sent();
        for k in 1..20 {
            r.on_data(t(k), 1 + k * MSS, MSS, false);
            r.on_ack_sent();
        }
        assert_eq!(r.ato(), ATO_MIN);
    }

    #[test]
    fn receiver_ato_follows_the_inter_arrival_time_bounded_by_rto_and_srtt() {
        // tcp_event_data_recv: TCP_ATO_MIN/2 < m < ato -> ato = ato/2 + m, at most icsk_rto.
        let mut r = adaptive(Some(SimDuration::from_millis(100)));
        r.on_data(t(0), 1, MSS, false); // ato 40
        r.on_ack_sent();
        r.on_data(t(30), 1 + MSS, MSS, false); // 40/2 + 30 = 50
        assert_eq!(r.ato(), SimDuration::from_millis(50));
        r.on_ack_sent();
        r.on_data(t(75), 1 + 2 * MSS, MSS, false); // m = 45 < 50: 25 + 45 = 70
        assert_eq!(r.ato(), SimDuration::from_millis(70));
        r.on_ack_sent();
        // a lone segment: the timer is the ATO, bounded by max(SRTT, TCP_DELACK_MIN) = 100 ms
        r.on_data(t(140), 1 + 3 * MSS, MSS, false); // m = 65 < 70: 35 + 65 = 100
        assert_eq!(r.ato(), SimDuration::from_millis(100));
        assert_eq!(r.delack_deadline, Some(t(240)));
        // m >= ato: unchanged
        r.on_ack_sent();
        r.on_data(t(250), 1 + 4 * MSS, MSS, false);
        assert_eq!(r.ato(), SimDuration::from_millis(100));
        // the bound by SRTT (tcp_send_delayed_ack): SRTT 60 ms caps a 100 ms ATO at 60 ms
        r.on_ack_sent();
        r.set_rtt_bounds(SimDuration::from_millis(300), Some(SimDuration::from_millis(60)));
        r.on_data(t(350), 1 + 5 * MSS, MSS, false);
        assert_eq!(r.delack_deadline, Some(t(410)));
        // and by RTO in the estimate itself: RTO 210 ms, ato/2 + m = 50 + 190 > 210
        r.on_ack_sent();
        r.set_rtt_bounds(SimDuration::from_millis(210), None);
        r.ato = SimDuration::from_millis(300);
        r.on_data(t(540), 1 + 6 * MSS, MSS, false);
        assert_eq!(r.ato(), SimDuration::from_millis(210));
        // without an RTT estimate the cap is 500 ms, then TCP_DELACK_MAX = 200 ms
        assert_eq!(r.delack_deadline, Some(t(740)));
    }

    #[test]
    fn receiver_delack_timer_inflates_ato_up_to_rto() {
        // tcp_delack_timer_handler (not pingpong): "Delayed ACK missed: inflate ATO",
        // ato = min(ato << 1, icsk_rto); the timer then is bounded by tcp_send_delayed_ack.
        let mut r = adaptive(Some(SimDuration::from_millis(150)));
        r.on_data(t(0), 1, MSS, false);
        r.on_delack_timer();
        assert_eq!(r.ato(), SimDuration::from_millis(80));
        r.on_delack_timer();
        r.on_delack_timer();
        assert_eq!(r.ato(), SimDuration::from_millis(300), "min(320, RTO 300)");
        r.on_ack_sent();
        r.on_data(t(1000), 1 + MSS, MSS, false); // m = 1000 > ato: ato unchanged
        assert_eq!(r.delack_deadline, Some(t(1150)), "bounded by SRTT 150 ms");
        // a fixed delayed_ack_timeout is not adapted
        let mut f = established();
        f.on_data(t(0), 1, MSS, false);
        f.on_delack_timer();
        f.on_ack_sent();
        f.on_data(t(500), 1 + MSS, MSS, false);
        assert_eq!(f.delack_deadline, Some(t(540)));
    }

    #[test]
    fn receiver_reenters_quickack_after_an_idle_gap_longer_than_rto() {
        // tcp_event_data_recv: m > icsk_rto -> tcp_incr_quickack(sk, TCP_MAX_QUICKACKS).
        let mut r = adaptive(Some(SimDuration::from_millis(50)));
        r.init_quickack(16);
        for k in 0..20 {
            r.on_data(t(k), 1 + k * MSS, MSS, false);
            r.on_ack_sent();
        }
        assert_eq!(r.quickack, 0, "the 16 quick ACKs of the start are spent");
        r.on_data(t(100), 1 + 20 * MSS, MSS, false); // 81 ms < RTO: delayed
        assert!(!r.ack_now);
        r.on_ack_sent();
        r.on_data(t(401), 1 + 21 * MSS, MSS, false); // 301 ms > RTO 300 ms: quick again
        assert!(r.ack_now);
        assert_eq!(r.quickack, 15);
        // with quickack = 0 there is nothing to re-enter
        let mut z = adaptive(None);
        z.init_quickack(0);
        z.on_data(t(0), 1, MSS, false);
        z.on_ack_sent();
        z.on_data(t(1000), 1 + MSS, MSS, false);
        assert!(!z.ack_now);
    }

    #[test]
    fn receiver_duplicate_acked_at_once() {
        let mut r = established();
        r.on_data(t(0), 1, MSS, false);
        r.on_ack_sent();
        let out = r.on_data(t(1), 1, MSS, false);
        assert!(out.duplicate && r.ack_now);
    }

    #[test]
    fn receiver_dsack_reports_duplicate_first_and_once() {
        // RFC 2883 §4 example 1 (duplicate below the cumulative ACK) and example 4 (a duplicate
        // of out-of-order data: the DSACK block, then the SACK block containing it).
        let mut r = established();
        r.dsack_enabled = true;
        r.on_data(t(0), 1, MSS, false);
        r.on_data(t(0), 1 + MSS, MSS, false);
        r.on_ack_sent();
        r.on_data(t(1), 1, MSS, false);
        let mut o = TcpOptions::default();
        r.fill_sack(&mut o);
        let irs = r.irs;
        let wrap = |v: u64| seq::wrap(irs, v);
        assert_eq!(
            o.sack_blocks(),
            &[SackBlock {
                left: wrap(1),
                right: wrap(1 + MSS)
            }]
        );
        let mut o = TcpOptions::default();
        r.fill_sack(&mut o);
        assert!(o.sack_blocks().is_empty(), "a DSACK is reported once");
        // Out-of-order duplicate.
        r.on_data(t(2), 1 + 3 * MSS, MSS, false);
        r.on_data(t(3), 1 + 3 * MSS, MSS, false);
        let mut o = TcpOptions::default();
        r.fill_sack(&mut o);
        let blk = SackBlock {
            left: wrap(1 + 3 * MSS),
            right: wrap(1 + 4 * MSS),
        };
        assert_eq!(o.sack_blocks(), &[blk, blk]);
        // Off (Linux tcp_dsack = 0, or SACK not negotiated): nothing.
        let mut q = established();
        q.on_data(t(0), 1, MSS, false);
        q.on_data(t(1), 1, MSS, false);
        assert!(!q.has_sack_info());
    }

    // ---------------------------------------------------------------- window

    #[test]
    fn receiver_window_never_shrinks_and_reopens_after_read() {
        // RFC 9293 §3.8.6.2.1 / §3.8.6.2.2
        let mut r = established();
        assert_eq!(r.window(), 64_000);
        r.on_data(t(0), 1, 64_000, false);
        r.advertise(false);
        assert_eq!(r.window(), 0);
        r.read(t(1), 500);
        assert!(
            !r.window_update_due(),
            "500 bytes is below min(2 MSS, buf/2)"
        );
        r.read(t(1), 2_000);
        assert!(r.window_update_due() && r.ack_now);
        assert_eq!(r.advertise(false), 2_500);
    }

    #[test]
    fn receiver_set_buf_never_shrinks_the_window_and_bounds_what_it_holds() {
        // SO_RCVBUF set below what was advertised: the right edge stays (RFC 9293 §3.8.6.2.1),
        // the committed bytes (unread + window) do not grow past it; a larger buffer reopens.
        let mut r = established();
        r.on_data(t(0), 1, 10_000, false);
        assert_eq!(r.committed(), 64_000);
        r.on_ack_sent();
        r.set_buf(20_000);
        assert!(!r.ack_now, "a smaller buffer sends nothing");
        r.read(t(1), 10_000);
        r.advertise(false);
        assert_eq!((r.window(), r.committed()), (54_000, 54_000), "the window already offered stays");
        r.on_data(t(2), 10_001, 54_000, false);
        r.read(t(3), 54_000);
        assert_eq!(r.advertise(false), 20_000, "then the new buffer is the window");
        assert_eq!(r.committed(), 20_000);
        r.on_data(t(4), 64_001, 20_000, false);
        assert_eq!((r.advertise(false), r.committed()), (0, 20_000));
        r.on_ack_sent();
        r.set_buf(30_000);
        assert!(r.ack_now, "10 000 more bytes of window: an update is due");
        assert_eq!(r.advertise(false), 10_000);
        assert_eq!(r.committed(), 30_000);
        // the peer's FIN: nothing more can arrive, only the unread bytes count
        r.on_data(t(5), 84_001, 0, true);
        assert_eq!(r.committed(), 20_000);
    }

    #[test]
    fn receiver_cap_bounds_the_autotuned_buffer_and_lifts_to_what_autotuning_wants() {
        let mut r = Receiver::new(BufSize::Auto { initial: 20_000, max: 1_000_000 }, 5, MSS, true, None);
        r.on_syn(0, t(0));
        r.rtt_measure_ts(SimDuration::from_millis(10));
        r.set_cap(30_000);
        let mut seq = 1;
        for k in 1..=20 {
            r.on_data(t(k * 10), seq, 20_000, false);
            seq += 20_000;
            r.read(t(k * 10), 20_000);
            assert!(r.buf <= 30_000, "capped: {}", r.buf);
        }
        assert_eq!(r.buf, 30_000, "autotuning asked for more than the cap");
        r.on_ack_sent();
        r.set_cap(u64::MAX);
        assert!(r.buf > 30_000 && r.ack_now, "lifting the cap gives the autotuned size at once: {}", r.buf);
    }

    #[test]
    fn receiver_cap_settled_exactly_when_set_cap_changes_nothing() {
        // `cap_settled(c)` must be true only if `set_cap(c)` leaves the receiver as it was
        // (compared field by field through `Debug`; it may say false for a no-op, which only
        // costs a service), and true after a `set_cap(c)` that nothing followed; walked through a connection's life: SYN pending, capped to 0, data, reads
        // that autotune the buffer, the cap lifted and lowered.
        let mut r = Receiver::new(BufSize::Auto { initial: 20_000, max: 1_000_000 }, 3, MSS, true, None);
        let check = |r: &Receiver, caps: &[u64]| {
            for &c in caps {
                let mut after = r.clone();
                after.set_cap(c);
                let same = format!("{after:?}") == format!("{r:?}");
                assert!(!r.cap_settled(c) || same, "cap {c}: settled, but set_cap changes the receiver");
                let mut again = after.clone();
                again.set_cap(c);
                assert_eq!(format!("{again:?}"), format!("{after:?}"), "a second set_cap({c}) must change nothing");
                // settled after it, but while the SYN-ACK is pending (the cap moves the right
                // edge it will offer) it always answers no, which only costs a service
                let syn_pending = after.rcv_nxt == 1 && after.last_ack_sent == 0;
                assert!(after.cap_settled(c) || syn_pending, "settled after set_cap({c})");
            }
        };
        let caps = [0, 4_000, 20_000, 30_000, 65_535, 200_000, u64::MAX];
        check(&r, &caps);
        r.on_syn(0, t(0));
        check(&r, &caps); // the SYN-ACK not yet sent
        r.set_cap(0);
        r.on_ack_sent();
        check(&r, &caps);
        r.rtt_measure_ts(SimDuration::from_millis(10));
        r.set_cap(30_000);
        let mut seq = 1;
        for k in 1..=12 {
            r.advertise(false);
            r.on_ack_sent();
            r.on_data(t(k * 10), seq, 8_000, false);
            seq += 8_000;
            check(&r, &caps);
            r.read(t(k * 10), if k % 3 == 0 { 0 } else { 8_000 });
            check(&r, &caps);
            r.set_cap(if k % 4 == 0 { 4_000 } else { 30_000 + 10_000 * k });
            check(&r, &caps);
        }
        r.on_data(t(200), seq, 0, true);
        check(&r, &caps);
    }

    #[test]
    fn receiver_capped_to_zero_before_its_syn_ack_opens_when_the_cap_rises_without_data() {
        // A proxy's leg opened with its pool full: the SYN-ACK offers nothing (cap 0, RFC 9293
        // §3.8.6.2.1 lets a receiver offer a zero window), and the right edge is that offer.
        // When the cap rises the window opens to the autotuned size at once, with an update
        // (§3.8.6.2.2), though no byte has arrived (autotuning grows only on reads).
        let mut r = Receiver::new(BufSize::Auto { initial: 20_000, max: 1_000_000 }, 0, MSS, true, None);
        r.on_syn(0, t(0));
        assert_eq!(r.committed(), 20_000, "as constructed: the autotuning start");
        r.set_cap(0);
        assert_eq!((r.syn_window(), r.window(), r.committed()), (0, 0, 0));
        assert!(!r.ack_now);
        r.on_ack_sent(); // the SYN-ACK
        r.set_cap(8_000);
        assert!(r.ack_now, "8 000 bytes of window: an update is due");
        assert_eq!(r.advertise(false), 8_000);
        r.on_ack_sent();
        r.set_cap(u64::MAX);
        assert!(r.ack_now);
        assert_eq!(r.advertise(false), 20_000, "up to the autotuning start");
        // once the SYN-ACK is out, a lower cap never pulls the right edge back
        r.set_cap(0);
        assert_eq!(r.window(), 20_000);
    }

    #[test]
    fn receiver_fin_after_data_consumed_in_order() {
        let mut r = established();
        let o = r.on_data(t(0), 1 + MSS, 0, true); // FIN out of order
        assert!(!o.fin);
        let o = r.on_data(t(0), 1, MSS, false);
        assert!(o.fin && r.fin_received);
        assert_eq!(r.rcv_nxt, 2 + MSS);
    }

    #[test]
    fn receiver_autotune_grows_buffer_with_delivery() {
        // Linux tcp_rcv_space_adjust: ~2x bytes read per RTT.
        let mut r = Receiver::new(
            BufSize::Auto {
                initial: 20_000,
                max: 1_000_000,
            },
            0,
            MSS,
            true,
            Some(SimDuration::from_millis(40)),
        );
        r.on_syn(0, t(0));
        r.rtt_measure_ts(SimDuration::from_millis(10));
        let mut seq = 1;
        for ms in 0..100 {
            r.advertise(false);
            let w = r.window().min(40 * MSS);
            r.on_data(t(ms), seq, w, false);
            seq += w;
            r.read(t(ms), u64::MAX);
        }
        assert!(r.buf > 20_000, "buffer grew to {}", r.buf);
        assert!(r.buf <= 1_000_000);
    }
}
