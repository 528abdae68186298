//! Output: choosing and building the next segment ([`TcpEndpoint::poll_transmit`]): SYN /
//! SYN-ACK, RFC 6675 §4 `NextSeg` (lost data, new data, rules 3 and 4), the cwnd and peer-window
//! checks with sender SWS avoidance (RFC 9293 §3.8.6.2.1), pacing, window probes and pure ACKs.
//!
//! Pacing with `pacing_quantum = "tso"` (the default) is Linux's per-skb pacing
//! ([`crate::pacing`]): a burst ("skb") of up to [`TcpEndpoint::send_quantum_segs`] segments
//! leaves at one instant once `pacing_next` (`tcp_wstamp_ns`) has come (`tcp_pacing_check`), and
//! `pacing_next` becomes the burst's departure time plus its payload / pacing rate, less up to
//! half of that for time the sender fell behind (`credit`), not advanced at all while the
//! connection has sent fewer than 10 data segments (`tcp_update_skb_after_send`). With
//! `"segment"` each segment waits for `pacing_next` and moves it by its bytes (payload and TCP
//! header) / pacing rate.

use celltcp_engine::SimDuration;
use celltcp_engine::SimTime;
use celltcp_net::packet::{TcpFlags, TcpOptions, TcpSegment};

use super::{CaState, TcpEndpoint, TcpState, TS_OPTION_BYTES};
use crate::cc::Controller;
use crate::pacing::{PacingQuantum, UNPACED_INITIAL_SEGS};
use crate::scoreboard::SentSeg;
use crate::seq;

/// The burst ("skb") a paced sender is sending with `pacing_quantum = "tso"`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Burst {
    /// When it left; later segments join it only at this same instant.
    at: SimTime,
    /// Segments it may still take.
    left: u32,
    /// Its departure time (`tcp_wstamp_ns` after `max(tcp_wstamp_ns, now)`) and the
    /// departure time the previous burst had set (`prior_wstamp`).
    wstamp: SimTime,
    prior_wstamp: SimTime,
    /// Payload bytes in it so far (`skb->len`).
    bytes: u64,
}

impl TcpEndpoint {
    /// The next segment to send at `now`, or `None`. Call until `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<TcpSegment> {
        match self.state {
            TcpState::Closed => {
                let (seq, ack) = self.rst_pending.take()?;
                self.stats.segments_sent += 1;
                let mut flags = TcpFlags::RST;
                if ack.is_some() {
                    flags |= TcpFlags::ACK;
                }
                return Some(TcpSegment {
                    src_port: self.local_port,
                    dst_port: self.remote_port,
                    seq,
                    ack: ack.unwrap_or(0),
                    flags: TcpFlags(flags),
                    ..Default::default()
                });
            }
            TcpState::SynSent | TcpState::SynReceived => {
                if self.syn_pending {
                    return Some(self.send_syn(now));
                }
                if self.state == TcpState::SynSent {
                    return None;
                }
            }
            _ => {}
        }
        if let Some(a) = self.ack_before.take() {
            return Some(a);
        }
        if let Some(s) = self.send_data(now) {
            return Some(s);
        }
        if self.probe_pending {
            self.probe_pending = false;
            self.stats.window_probes_sent += 1;
            // Linux tcp_xmit_probe_skb: an old sequence number forces the peer to answer.
            return Some(self.build(now, self.snd_una.saturating_sub(1), 0, false));
        }
        if self.rcv.ack_now && self.peer_syn_seen {
            self.stats.pure_acks_sent += 1;
            return Some(self.build(now, self.snd_nxt, 0, false));
        }
        None
    }

    fn send_syn(&mut self, now: SimTime) -> TcpSegment {
        self.syn_pending = false;
        self.syn_tx_count += 1;
        self.syn_sent_time = now;
        let passive = self.state == TcpState::SynReceived;
        let mut o = TcpOptions {
            mss: Some(
                (self.cfg.mss
                    + if self.cfg.timestamps {
                        TS_OPTION_BYTES
                    } else {
                        0
                    })
                .min(65_535) as u16,
            ),
            ..Default::default()
        };
        let tsval = Self::ts_now(now);
        if passive {
            // RFC 7323 §2.2 / RFC 2018 §2: answer only the options the peer offered.
            o.wscale = self.wscale_ok.then_some(self.rcv.wscale);
            o.sack_permitted = self.sack_ok;
            o.timestamps = self.ts_ok.then_some((tsval, self.rcv.ts_recent));
        } else {
            o.wscale = self.cfg.window_scaling.then_some(self.cfg.wscale_shift());
            o.sack_permitted = self.cfg.sack;
            o.timestamps = self.cfg.timestamps.then_some((tsval, 0));
        }
        let mut flags = if passive {
            TcpFlags::SYN | TcpFlags::ACK
        } else {
            TcpFlags::SYN
        };
        // RFC 3168 §6.1.1: ECN-setup SYN (ECE, CWR) and SYN-ACK (ECE).
        if passive && self.ecn_ok {
            flags |= TcpFlags::ECE;
        } else if !passive && self.cfg.ecn_enabled() {
            flags |= TcpFlags::ECE | TcpFlags::CWR;
        }
        let seg = TcpSegment {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.iss,
            ack: if passive {
                seq::wrap(self.rcv.irs, self.rcv.rcv_nxt)
            } else {
                0
            },
            flags: TcpFlags(flags),
            window: self.rcv.syn_window(),
            options: o,
            payload_len: 0,
            ect: false,
        };
        if passive {
            self.rcv.on_ack_sent();
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.stats.segments_sent += 1;
        seg
    }

    /// A segment with the ACK flag, current window, timestamps and SACK blocks.
    pub(super) fn build(&mut self, now: SimTime, seq_abs: u64, payload: u32, fin: bool) -> TcpSegment {
        let mut flags = TcpFlags::ACK;
        if fin {
            flags |= TcpFlags::FIN;
        }
        if payload > 0 {
            flags |= TcpFlags::PSH;
        }
        if self.ecn_ok && self.ece_out {
            flags |= TcpFlags::ECE;
        }
        let mut options = TcpOptions::default();
        if self.ts_ok {
            options.timestamps = Some((Self::ts_now(now), self.rcv.ts_recent));
        }
        if self.sack_ok && self.rcv.has_sack_info() {
            self.rcv.fill_sack(&mut options);
        }
        let window = self.rcv.advertise(true);
        self.rcv.on_ack_sent();
        self.stats.segments_sent += 1;
        TcpSegment {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: seq::wrap(self.iss, seq_abs),
            ack: seq::wrap(self.rcv.irs, self.rcv.rcv_nxt),
            flags: TcpFlags(flags),
            window,
            options,
            payload_len: payload,
            ect: false,
        }
    }

    /// New data that may be sent now: `(payload, fin)`. Applies the peer's window with sender
    /// SWS avoidance (RFC 9293 §3.8.6.2.1) and the partial-segment rule (module doc).
    /// Nagle's rule as Linux applies it (`tcp_nagle_check`): with Nagle on, a partial segment
    /// is held while data is in flight and the last partial segment sent is not yet
    /// acknowledged (`tcp_minshall_check`: SND.UNA < snd_sml <= SND.NXT; RFC 896 holds it while
    /// anything at all is unacknowledged, Minshall's refinement only behind a small segment).
    fn nagle_holds(&self) -> bool {
        self.cfg.nagle
            && self.sb.outstanding() > 0
            && self.snd_sml > self.snd_una
            && self.snd_sml <= self.snd_nxt
    }

    fn new_data(&mut self) -> Option<(u64, bool)> {
        let data_end = 1 + self.written;
        let avail = data_end.saturating_sub(self.snd_nxt);
        let mss = self.mss as u64;
        if avail == 0 {
            return (self.fin_queued && self.fin_end.is_none()).then_some((0, true));
        }
        let mut len = avail.min(mss);
        let allowed = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        if len > allowed {
            // RFC 9293 §3.8.6.2.1: send a window-limited piece only if it is at least half the
            // largest window the peer has offered.
            // When the persist timer fires with a small but non-zero window, send what fits
            // (the RFC 1122 §4.2.3.4 override timeout; Linux tcp_write_wakeup).
            if allowed > 0 && (allowed >= self.max_snd_wnd / 2 || self.probe_pending) {
                len = allowed;
            } else {
                self.rwnd_blocked = true;
                return None;
            }
        }
        if len < mss && len == avail && !self.fin_queued && self.nagle_holds() {
            return None; // Nagle: wait for more data or for the small segment's ACK
        }
        let fin = self.fin_queued && self.snd_nxt + len == data_end;
        if len > 0 {
            // any data segment also serves as the window probe
            self.probe_pending = false;
        }
        Some((len, fin))
    }

    fn send_data(&mut self, now: SimTime) -> Option<TcpSegment> {
        if !matches!(
            self.state,
            TcpState::Established
                | TcpState::CloseWait
                | TcpState::FinWait1
                | TcpState::Closing
                | TcpState::LastAck
        ) {
            return None;
        }
        self.rwnd_blocked = false;
        let in_flight = self.sb.in_flight();
        let cwnd = self.cwnd();
        enum Pick {
            Rtx(usize),
            New(u64, bool),
        }
        // F-RTO step 2.b (RFC 5682 §3.1, Linux `REXMIT_NEW`): new data only; with none to send,
        // fall back to conventional recovery.
        let frto_new = if self.frto_new_only {
            match self.new_data() {
                Some(x) => Some(x),
                None if self.snd_nxt > self.recovery_point => {
                    return self.idle(now, in_flight, cwnd);
                }
                None => {
                    self.frto_new_only = false;
                    self.frto = false;
                    None
                }
            }
        } else {
            None
        };
        // TLP (RFC 8985 §7.3, Linux `tcp_send_loss_probe`): new data if the peer's window
        // allows, else the last segment not SACKed; sent regardless of cwnd.
        let mut tlp = None;
        if self.tlp_pending && frto_new.is_none() {
            self.tlp_pending = false;
            tlp = match self.new_data() {
                Some((len, fin)) if len > 0 || fin => Some(Pick::New(len, fin)),
                _ => self.sb.last_unsacked().map(Pick::Rtx),
            };
        }
        let is_tlp = tlp.is_some();
        // RFC 6675 §4 NextSeg: rule 1 (lost), rule 2 (new data), rules 3 and 4 in recovery.
        let pick = if let Some(p) = tlp {
            p
        } else if let Some((len, fin)) = frto_new {
            Pick::New(len, fin)
        } else if let Some(i) = self.sb.next_lost() {
            Pick::Rtx(i)
        } else if let Some((len, fin)) = self.new_data() {
            Pick::New(len, fin)
        } else if self.ca_state == CaState::Recovery && self.sack_ok {
            if let Some(i) = self.sb.next_rule3() {
                Pick::Rtx(i)
            } else if !self.rescue_done && self.snd_una < self.recovery_point && !self.rwnd_blocked
            {
                match self.sb.rescue() {
                    Some(i) => {
                        self.rescue_done = true;
                        Pick::Rtx(i)
                    }
                    None => return self.idle(now, in_flight, cwnd),
                }
            } else {
                return self.idle(now, in_flight, cwnd);
            }
        } else {
            return self.idle(now, in_flight, cwnd);
        };
        let len = match pick {
            Pick::Rtx(i) => self.sb.get(i).len(),
            Pick::New(l, f) => l + f as u64,
        };
        // RFC 5681 §3.1 / RFC 6675 §5 step C: send while pipe + segment <= cwnd.
        let forced = is_tlp || (self.force_rtx && matches!(pick, Pick::Rtx(0)));
        if in_flight > 0 && in_flight + len > cwnd && !forced {
            self.cwnd_limited = true;
            return None;
        }
        // Pacing: the next segment, or with TSO bursts the next burst, may leave at
        // `pacing_next` (Linux `tcp_pacing_check` on `tcp_wstamp_ns`).
        let pacing_rate = self.pacing_rate();
        let tso = self.cfg.pacing_quantum == PacingQuantum::Tso;
        let in_burst = tso && self.burst.left > 0 && self.burst.at == now;
        if pacing_rate.is_some() && !in_burst && now < self.pacing_next {
            self.pacing_blocked = true;
            self.tlp_pending |= is_tlp;
            return None;
        }
        // draft-cheng §3.2: a new flight starts the sampling interval afresh.
        if in_flight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let is_new = matches!(pick, Pick::New(..));
        let (seq_abs, payload, fin) = match pick {
            Pick::Rtx(i) => {
                if i == 0 {
                    self.force_rtx = false;
                    // Resending the oldest outstanding segment restarts the retransmission
                    // timer, as Linux `tcp_xmit_retransmit_queue` does for the head of its
                    // queue: its ACK cannot come sooner than one RTT from now, and the timer
                    // armed at the last cumulative ACK (RFC 6298 §5.3) would otherwise expire
                    // while a re-sent lost retransmission of it is still on its way.
                    // Regression: BBR in STARTUP took a needless RTO 45 ms after resending the
                    // first hole a third time.
                    self.rto_deadline = Some(now + self.rtt.rto());
                }
                let (delivered, dt, fst, al) = (
                    self.delivered,
                    self.delivered_time,
                    self.first_sent_time,
                    self.app_limited_until != 0,
                );
                let s = self.sb.on_retransmit(i, now);
                s.delivered = delivered;
                s.delivered_time = dt;
                s.first_sent_time = fst;
                s.is_app_limited = al;
                s.tx_in_flight = in_flight + s.len();
                let s = *s;
                if !is_tlp {
                    // Linux `tcp_retransmit_skb` (a TLP probe goes through
                    // `__tcp_retransmit_skb` and counts in neither): `undo_retrans`, the
                    // retransmissions a DSACK may yet show needless, and `retrans_stamp`, the
                    // first retransmission of the episode (the timestamp undo's reference).
                    if let Some((_, n)) = self.dsack_undo.as_mut() {
                        *n = (*n).max(0) + 1;
                    }
                    self.retrans_stamp.get_or_insert(Self::ts_now(now));
                }
                self.stats.retransmitted_segments += 1;
                self.stats.retransmitted_bytes += s.payload();
                (s.start, s.payload(), s.fin)
            }
            Pick::New(l, fin) => {
                let start = self.snd_nxt;
                let end = start + l + fin as u64;
                if l < self.mss as u64 {
                    self.snd_sml = end; // Linux tcp_minshall_update
                }
                self.sb.push(SentSeg {
                    start,
                    end,
                    fin,
                    sent_time: now,
                    delivered: self.delivered,
                    delivered_time: self.delivered_time,
                    first_sent_time: self.first_sent_time,
                    is_app_limited: self.app_limited_until != 0,
                    tx_in_flight: in_flight + l + fin as u64,
                    ..Default::default()
                });
                self.snd_nxt = end;
                if fin {
                    self.fin_end = Some(end);
                }
                (start, l, fin)
            }
        };
        if payload > 0 {
            self.stats.data_segments_sent += 1;
            self.stats.bytes_sent += payload;
        }
        if self.ca_state == CaState::Recovery {
            if let Some(p) = self.prr.as_mut() {
                p.on_sent(len); // RFC 6937 prr_out
            }
        }
        if is_tlp {
            self.stats.tlp_probes += 1;
            self.tlp_high_seq = Some(self.snd_nxt);
            self.tlp_retrans = !is_new;
        } else if is_new && self.linux_recovery() {
            // RFC 8985 §7.2: a new transmission re-arms the probe timer.
            self.arm_tlp(now);
        }
        self.cc.on_sent(now, payload, self.sb.in_flight());
        // RFC 6298 §5.1
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.persist_deadline = None;
        let mut seg = self.build(now, seq_abs, payload as u32, fin);
        // RFC 3168 §6.1.2 / §6.1.5: ECT(0) and CWR on new data only.
        if self.ecn_ok && is_new && payload > 0 {
            seg.ect = true;
            if self.cwr_pending {
                self.cwr_pending = false;
                seg.flags.0 |= TcpFlags::CWR;
            }
        }
        match pacing_rate {
            Some(rate) if tso => self.pace_burst(now, rate, payload, in_burst),
            Some(rate) => {
                let wire = payload + seg.header_len() as u64;
                let d = SimDuration::from_secs_f64(wire as f64 / rate.max(1.0));
                self.pacing_next = self.pacing_next.max(now) + d;
            }
            None => {}
        }
        self.pacing_blocked = false;
        Some(seg)
    }

    /// A segment of `payload` bytes joined the current burst (`in_burst`) or opened a new one:
    /// Linux `tcp_update_skb_after_send` for the burst so far (module doc).
    fn pace_burst(&mut self, now: SimTime, rate: f64, payload: u64, in_burst: bool) {
        if !in_burst {
            let wstamp = self.pacing_next.max(now);
            self.burst = Burst {
                at: now,
                left: self.send_quantum_segs(rate),
                wstamp,
                prior_wstamp: self.pacing_next,
                bytes: 0,
            };
        }
        let b = &mut self.burst;
        b.left = b.left.saturating_sub(1);
        b.bytes += payload;
        if self.stats.data_segments_sent < UNPACED_INITIAL_SEGS {
            self.pacing_next = b.wstamp;
            return;
        }
        let len_ns = (b.bytes as f64 * 1e9 / rate.max(1.0)) as u64;
        let credit = (b.wstamp - b.prior_wstamp).as_nanos();
        self.pacing_next = b.wstamp + SimDuration::from_nanos(len_ns - (len_ns / 2).min(credit));
    }

    /// App-limited marking (draft-cheng §3.4, Linux `tcp_rate_check_app_limited`): less than a
    /// segment unsent, cwnd not full and no lost segment waiting: every segment in flight now,
    /// and every one sent before they are delivered, gives an app-limited rate sample.
    pub(super) fn check_app_limited(&mut self, in_flight: u64, cwnd: u64) {
        let unsent = (1 + self.written).saturating_sub(self.snd_nxt);
        if unsent < self.mss as u64 && in_flight < cwnd && self.sb.lost_bytes() == 0 {
            self.app_limited_until = (self.delivered + in_flight).max(1);
        }
    }

    /// Nothing to send: app-limited marking ([`Self::check_app_limited`]) unless the writer is
    /// asleep on a full send buffer (Linux checks at `tcp_sendmsg` only, and a sleeping writer
    /// makes no call: it is checked when it wakes, in [`TcpEndpoint::write`]), and the persist
    /// timer (RFC 9293 §3.8.6.1).
    fn idle(&mut self, now: SimTime, in_flight: u64, cwnd: u64) -> Option<TcpSegment> {
        if !self.snd_nospace {
            self.check_app_limited(in_flight, cwnd);
        }
        if self.rwnd_blocked && self.sb.is_empty() {
            if self.persist_deadline.is_none() {
                self.persist_deadline = Some(now + self.persist_interval());
            }
        } else if !self.rwnd_blocked {
            self.persist_deadline = None;
            self.persist_backoff = 0;
        }
        None
    }
}
