//! Input: the peer's SYN options, segment acceptance and the state machine on receipt, and
//! ACK processing (RTT and rate samples, SACK scoreboard, the controller, recovery entry and exit).

use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::packet::TcpSegment;

use super::rate::RsBuild;
use super::{CaState, TcpEndpoint, TcpState, DEFAULT_PEER_MSS, TS_OPTION_BYTES};
use crate::cc::{Ack, AnyCc, CcKind, CongestionEvent, Controller, EcnFeedback};
use crate::seq;

/// Linux `tcp_sndbuf_expand`'s `per_mss` besides the segment: `MAX_TCP_HEADER` and
/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` (320), rounded up to a power of two with the
/// segment ... `MAX_TCP_HEADER` = `L1_CACHE_ALIGN(128 + MAX_HEADER)` is 192 on the kernel
/// oracle's host (Linux 6.18 without `CONFIG_HYPERV_NET`, WLAN or IP tunnels: `MAX_HEADER` =
/// `LL_MAX_HEADER` = 32; distribution kernels with them have 320): `ss -tinm` shows `tb` =
/// 2 x cwnd x 2,304 bytes there (2 x 40 x 2,304 = 184,320 at cwnd 40), where 320 would make
/// 2 x cwnd x 4,352.
pub(super) const LINUX_MAX_TCP_HEADER: u64 = 192;
const LINUX_SKB_HEADROOM: u64 = LINUX_MAX_TCP_HEADER + 320;
/// ... plus `SKB_DATA_ALIGN(sizeof(struct sk_buff))` (256).
const LINUX_SKB_STRUCT: u64 = 256;

impl TcpEndpoint {
    pub(super) fn on_peer_syn(&mut self, syn: &TcpSegment, now: SimTime) {
        let o = &syn.options;
        // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR, an ECN-setup SYN-ACK ECE only.
        let f = syn.flags;
        let peer_ecn = if f.ack() { f.ece() && !f.cwr() } else { f.ece() && f.cwr() };
        self.ecn_ok = self.cfg.ecn_enabled() && peer_ecn;
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        // RFC 7323 §2.2: scaling is on only if both SYNs carry the option; shift <= 14 (§2.3).
        self.wscale_ok = self.cfg.window_scaling && o.wscale.is_some();
        if self.wscale_ok {
            self.snd_wscale = o.wscale.unwrap_or(0).min(14);
            self.rcv.wscale = self.cfg.wscale_shift();
        } else {
            self.snd_wscale = 0;
            self.rcv.wscale = 0;
        }
        let peer_mss = o.mss.map_or(DEFAULT_PEER_MSS, u32::from);
        let overhead = if self.ts_ok { TS_OPTION_BYTES } else { 0 };
        self.mss = self.cfg.mss.min(peer_mss.saturating_sub(overhead)).max(1);
        self.rcv.on_syn(syn.seq, now);
        self.rcv.set_mss(self.mss as u64);
        self.rcv.init_quickack(self.cfg.quickack_segments);
        self.rcv.dsack_enabled = self.sack_ok && self.cfg.dsack;
        if let Some((tsval, _)) = o.timestamps {
            self.rcv.ts_recent = tsval;
        }
        // RFC 7323 §2.2: the window in a SYN is never scaled.
        self.snd_wnd = syn.window as u64;
        self.max_snd_wnd = self.snd_wnd;
        self.peer_syn_seen = true;
        // The controller was built with the configured MSS; rebuild it for the negotiated one.
        if self.mss != self.cfg.mss {
            self.cc = AnyCc::new(
                self.cfg.cc,
                self.mss,
                self.cfg.initial_cwnd_pkts,
                now,
                self.cfg.cc_seed,
            );
        }
    }

    // ================================================================== input

    /// A segment arrived from the peer; `ce` is true when its IP header carried CE (RFC 3168).
    pub fn on_segment(&mut self, now: SimTime, seg: &TcpSegment, ce: bool) {
        self.stats.segments_received += 1;
        if ce {
            self.stats.ce_received += 1;
        }
        let f = seg.flags;
        match self.state {
            TcpState::Closed => {
                // RFC 9293 §3.10.7.1: a segment without RST reaching CLOSED is answered with
                // a RST (e.g. a FIN retransmitted after our TIME-WAIT ended).
                if !f.rst() && self.peer_syn_seen {
                    self.rst_pending = Some(if f.ack() {
                        (seg.ack, None)
                    } else {
                        (0, Some(seg.seq.wrapping_add(seg.seq_len())))
                    });
                }
                return;
            }
            TcpState::SynSent => {
                if f.rst() {
                    if f.ack() && seq::wrap(self.iss, 1) == seg.ack {
                        self.reset = true;
                        self.enter_closed();
                    }
                    return;
                }
                // RFC 9293 §3.10.7.3: a SYN-ACK acknowledging our SYN.
                if !(f.syn() && f.ack() && seg.ack == seq::wrap(self.iss, 1)) {
                    return;
                }
                self.on_peer_syn(seg, now);
                self.snd_una = 1;
                self.handshake_rtt(now, seg);
                self.rto_deadline = None;
                self.state = TcpState::Established;
                self.expand_sndbuf();
                self.snd_wl1 = 0;
                self.snd_wl2 = 1;
                self.rcv.ack_now = true;
                return;
            }
            TcpState::SynReceived => {
                if f.rst() {
                    self.reset = true;
                    self.enter_closed();
                    return;
                }
                if f.syn() {
                    if !f.ack() && seg.seq == self.rcv.irs {
                        // our SYN-ACK was lost: send it again
                        self.syn_pending = true;
                    }
                    return;
                }
                if !f.ack() || seg.ack != seq::wrap(self.iss, 1) {
                    return;
                }
                self.snd_una = 1;
                self.handshake_rtt(now, seg);
                self.rto_deadline = None;
                self.expand_sndbuf();
                self.state = if self.fin_queued {
                    TcpState::FinWait1
                } else {
                    TcpState::Established
                };
                self.snd_wl1 = 0;
                self.snd_wl2 = 1;
                // fall through: the ACK may carry data and a window
            }
            _ => {}
        }
        if f.syn() {
            // a retransmitted SYN-ACK: our ACK of it was lost (RFC 9293 §3.10.7.4)
            self.rcv.ack_now = true;
            return;
        }
        let seg_abs = seq::unwrap(self.rcv.irs, seg.seq, self.rcv.rcv_nxt);
        let seg_len = seg.payload_len as u64 + f.fin() as u64;
        let acceptable = self.rcv.acceptable(seg_abs, seg_len);
        if f.rst() {
            // RFC 9293 §3.10.7.4 (RFC 5961 §3 tightens this to an exact match; in-window is
            // enough here). In CLOSING, LAST-ACK and TIME-WAIT the connection simply closes;
            // elsewhere the user is told of a reset.
            if acceptable {
                if !matches!(
                    self.state,
                    TcpState::Closing | TcpState::LastAck | TcpState::TimeWait
                ) {
                    self.reset = true;
                }
                self.enter_closed();
            }
            return;
        }
        if self.state == TcpState::TimeWait {
            // a retransmitted FIN: ACK it and restart the 2 MSL timer (RFC 9293 §3.10.7.4)
            if f.fin() {
                self.rcv.ack_now = true;
                self.time_wait_deadline = Some(now + self.cfg.time_wait);
            }
            return;
        }
        if self.ecn_ok {
            self.ecn_receive(now, seg, ce);
        }
        // RFC 7323 §4.3: TS.Recent from segments that cover Last.ACK.sent.
        if self.ts_ok {
            if let Some((tsval, tsecr)) = seg.options.timestamps {
                if seg_abs <= self.rcv.last_ack_sent
                    && (tsval.wrapping_sub(self.rcv.ts_recent) as i32) >= 0
                {
                    self.rcv.ts_recent = tsval;
                }
                if seg.payload_len > 0 {
                    self.rcv.on_tsecr(Self::ts_now(now), tsecr, seg.payload_len as u64);
                }
            }
        }
        if f.ack() {
            self.process_ack(now, seg, seg_abs);
            if self.state == TcpState::Closed {
                return;
            }
        }
        if seg_len == 0 {
            if !acceptable {
                // RFC 9293 §3.10.7.4: answer an unacceptable segment (e.g. a window probe) with an ACK.
                self.rcv.ack_now = true;
            }
            return;
        }
        let receiving = matches!(
            self.state,
            TcpState::Established | TcpState::FinWait1 | TcpState::FinWait2
        );
        if !acceptable || !receiving {
            self.stats.duplicate_segments_received += 1;
            self.rcv.ack_now = true;
            if seg_abs < self.rcv.rcv_nxt {
                // RFC 2883 §4 / Linux `tcp_send_dupack`: report the old data with DSACK.
                let end = (seg_abs + seg.payload_len as u64).min(self.rcv.rcv_nxt);
                self.rcv.set_dsack(seg_abs, end);
            }
            return;
        }
        self.rcv.set_rtt_bounds(self.rtt.rto(), self.rtt.srtt());
        let out = self
            .rcv
            .on_data(now, seg_abs, seg.payload_len as u64, f.fin());
        if out.out_of_order {
            self.stats.ooo_segments_received += 1;
        }
        if out.duplicate {
            self.stats.duplicate_segments_received += 1;
        }
        if out.fin {
            match self.state {
                TcpState::Established => self.state = TcpState::CloseWait,
                TcpState::FinWait1 => self.state = TcpState::Closing,
                TcpState::FinWait2 => self.enter_time_wait(now),
                _ => {}
            }
        }
    }

    /// The receiver's ECN echo state (RFC 3168 §6.1.3; with DCTCP RFC 8257 §3.2).
    pub(super) fn ecn_receive(&mut self, now: SimTime, seg: &TcpSegment, ce: bool) {
        if self.cfg.cc.kind().needs_ecn() {
            if seg.payload_len == 0 || ce == self.ece_out {
                return;
            }
            // The CE state changed: the data held for a delayed ACK is acknowledged now with
            // the old state, then this segment is acknowledged at once with the new one.
            if self.rcv.delack_deadline.is_some() && self.peer_syn_seen {
                self.stats.pure_acks_sent += 1;
                let a = self.build(now, self.snd_nxt, 0, false);
                self.ack_before = Some(a);
                self.rcv.delack_deadline = None;
            }
            self.ece_out = ce;
            self.rcv.ack_now = true;
        } else {
            if seg.flags.cwr() {
                self.ece_out = false;
            }
            if ce {
                self.ece_out = true;
            }
        }
    }

    pub(super) fn handshake_rtt(&mut self, now: SimTime, seg: &TcpSegment) {
        if self.syn_tx_count == 1 {
            self.record_rtt(now.saturating_since(self.syn_sent_time));
        } else if let (true, Some((_, ecr))) = (self.ts_ok, seg.options.timestamps) {
            if ecr != 0 {
                let ms = Self::ts_now(now).wrapping_sub(ecr) as u64;
                self.record_rtt(SimDuration::from_millis(ms.max(1)));
            }
        }
    }

    pub(super) fn process_ack(&mut self, now: SimTime, seg: &TcpSegment, seg_abs: u64) {
        let ack = seq::unwrap(self.iss, seg.ack, self.snd_una);
        if ack > self.snd_nxt {
            // RFC 9293 §3.10.7.4: an ACK for something not yet sent: ACK and drop.
            self.rcv.ack_now = true;
            return;
        }
        if ack < self.snd_una {
            return; // old
        }
        let mss = self.mss as u64;
        let prior_in_flight = self.sb.in_flight();
        let prior_outstanding = self.sb.outstanding();
        // --- send window (RFC 9293 §3.10.7.4, SND.WL1/SND.WL2)
        let wnd = (seg.window as u64) << self.snd_wscale;
        let mut window_changed = false;
        if self.snd_wl1 < seg_abs || (self.snd_wl1 == seg_abs && self.snd_wl2 <= ack) {
            window_changed = wnd != self.snd_wnd;
            self.snd_wnd = wnd;
            self.max_snd_wnd = self.max_snd_wnd.max(wnd);
            self.snd_wl1 = seg_abs;
            self.snd_wl2 = ack;
            if wnd > 0 && window_changed {
                self.persist_deadline = None;
                self.persist_backoff = 0;
            }
        }
        // --- SACK scoreboard and delivery-rate bookkeeping
        let mut rs = RsBuild::default();
        let mut newly_sacked = 0u64;
        let mut sack_rtt_from: Option<SimTime> = None;
        let mut delivered = self.delivered;
        // RFC 8985 §6.2 RACK.xmit_ts: the latest send time among segments this ACK delivered
        // (a retransmitted segment counts only if its RTT is plausible).
        let min_rtt = self.rtt.min_rtt();
        let mut rack_time = SimTime::ZERO;
        // Linux FLAG_ORIG_SACK_ACKED: this ACK newly delivered a segment sent before the RTO
        // (at or below high_seq) and never retransmitted (F-RTO, RFC 5682 §3.1 step 3.b).
        let high_seq = self.recovery_point;
        let mut orig_acked = false;
        // RACK (Linux recovery): RACK.xmit_ts advances on every delivery; reordering is seen
        // when a never-retransmitted segment below the highest SACK arrives (Linux
        // `tcp_check_sack_reordering`).
        let linux = self.linux_recovery();
        let prior_hs = self.sb.highest_sacked();
        let mut reordered = false;
        let rack = &mut self.rack;
        // Linux `tcp_skb_spurious_retrans` (cumulative ACKs, `tcp_clean_rtx_queue`): an ACK
        // echoing a TSval older than a segment's retransmission was caused by the original;
        // it does not advance RACK.
        let ecr = match (self.ts_ok, seg.options.timestamps) {
            (true, Some((_, e))) if e != 0 => Some(e),
            _ => None,
        };
        let spurious_rtx = move |s: &crate::scoreboard::SentSeg| {
            s.retransmitted
                && ecr.is_some_and(|e| (e.wrapping_sub(Self::ts_now(s.sent_time)) as i32) < 0)
        };
        let mut dsack = None;
        if self.sack_ok {
            let blocks = seg.options.sack_blocks();
            // RFC 2883 §4 (Linux `tcp_check_dsack`): a first block below the cumulative ACK, or
            // inside the second block, reports a duplicate.
            if let Some(b0) = blocks.first() {
                let l0 = seq::unwrap(self.iss, b0.left, self.snd_una);
                let r0 = seq::unwrap(self.iss, b0.right, self.snd_una);
                let inside = blocks.get(1).is_some_and(|b1| {
                    let l1 = seq::unwrap(self.iss, b1.left, self.snd_una);
                    let r1 = seq::unwrap(self.iss, b1.right, self.snd_una);
                    l1 <= l0 && r0 <= r1
                });
                if r0 > l0 && (l0 < ack || inside) {
                    dsack = Some((l0, r0));
                }
            }
            for (k, b) in blocks.iter().enumerate() {
                if k == 0 && dsack.is_some() {
                    continue;
                }
                let l = seq::unwrap(self.iss, b.left, self.snd_una);
                let r = seq::unwrap(self.iss, b.right, self.snd_una);
                if r <= l || r <= ack || r > self.snd_nxt {
                    continue; // stale or bogus
                }
                self.sb.sack(l.max(ack), r, |s| {
                    if !s.retransmitted || now.saturating_since(s.sent_time) >= min_rtt {
                        rack_time = rack_time.max(s.sent_time);
                    }
                    if linux {
                        // (`tcp_sacktag_one`: the min_rtt check only)
                        rack.advance(now, s.sent_time, s.end, s.retransmitted, min_rtt);
                    }
                    if linux {
                        reordered |= !s.retransmitted && s.end <= prior_hs;
                    }
                    newly_sacked += s.payload();
                    orig_acked |= !s.retransmitted && s.end <= high_seq;
                    delivered += s.payload();
                    rs.update(s, delivered, now);
                    if !s.retransmitted {
                        sack_rtt_from = Some(
                            sack_rtt_from.map_or(s.sent_time, |t: SimTime| t.min(s.sent_time)),
                        );
                    }
                });
            }
            self.sb.end_sack_round();
        }
        // --- cumulative ACK
        let newly_acked_seq = ack - self.snd_una;
        let mut newly_acked = 0u64; // payload bytes newly delivered by the cumulative ACK
        let mut cum_payload = 0u64;
        let mut oldest_clean: Option<SimTime> = None;
        let mut any_retrans = false;
        if newly_acked_seq > 0 {
            self.sb.cum_ack(ack, |s, newly| {
                cum_payload += s.payload();
                if s.retransmitted {
                    any_retrans = true;
                } else if oldest_clean.is_none() {
                    oldest_clean = Some(s.sent_time);
                }
                if newly {
                    if !s.retransmitted || now.saturating_since(s.sent_time) >= min_rtt {
                        rack_time = rack_time.max(s.sent_time);
                    }
                    if linux && !spurious_rtx(s) {
                        rack.advance(now, s.sent_time, s.end, s.retransmitted, min_rtt);
                    }
                    if linux {
                        reordered |= !s.retransmitted && s.end <= prior_hs;
                    }
                    newly_acked += s.payload();
                    orig_acked |= !s.retransmitted && s.end <= high_seq;
                    delivered += s.payload();
                    rs.update(s, delivered, now);
                }
            });
            self.snd_una = ack;
            self.retries = 0;
            self.stats.bytes_acked += cum_payload;
        }
        self.delivered = delivered;
        if reordered {
            self.rack.reord_seen += 1;
        }
        let tlp_dsack = dsack.is_some_and(|d| self.on_dsack(d));
        if linux && rs.set {
            self.rack.update_reo_wnd(rs.prior_delivered, self.delivered);
        }
        if rs.set {
            self.delivered_time = now;
            self.first_sent_time = rs.sent_time;
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        // --- RTT (see module doc: Linux order, RFC 7323 §4, Karn)
        let mut rtt_sample = None;
        if newly_acked_seq > 0 {
            if let (Some(t), false) = (oldest_clean, any_retrans) {
                rtt_sample = Some(now.saturating_since(t));
            } else if let (true, Some((_, ecr))) = (self.ts_ok, seg.options.timestamps) {
                if ecr != 0 {
                    let ms = Self::ts_now(now).wrapping_sub(ecr) as u64;
                    rtt_sample = Some(SimDuration::from_millis(ms.max(1)));
                }
            }
        }
        if rtt_sample.is_none() {
            rtt_sample = sack_rtt_from.map(|t| now.saturating_since(t));
        }
        if let Some(r) = rtt_sample {
            self.record_rtt(r.max(SimDuration::from_nanos(1)));
        }
        // --- Eifel detection (RFC 3522 §2): the ACK covering the first retransmission echoes a
        // TSval older than that retransmission -> the original arrived; undo. In fast recovery
        // the first ACK advancing SND.UNA need not cover a retransmission (RACK may have resent
        // later segments while the head was only queued), so, as Linux `tcp_try_undo_partial`,
        // an old echo there undoes only when no retransmission is still in flight
        // (`retrans_out`); otherwise the check waits for a later ACK, and an echo at or after
        // the retransmission (the hole was filled by it) ends it. Regression: every in-order
        // partial ACK after a recovery began "proved" it spurious; BBR re-entered and undid
        // recovery on each ACK (1,922 times in the golden 8-packet run), each undo resetting
        // its full-pipe count (Linux `bbr_undo_cwnd`), so it never left STARTUP.
        //
        // A partial undo (Linux recovery, SND.UNA still below the recovery point) is Linux's
        // `tcp_try_undo_partial` -> `tcp_undo_cwnd_reduction(sk, true)`: every loss mark is
        // cleared (`TCPCB_LOST`, `lost_out = 0`), `rack.advanced` is set so that RACK looks
        // again at the next ACK, and `tcp_fastretrans_alert` returns, so this ACK marks and
        // resends nothing. Regression: the marks stayed and the ACK that undid the episode
        // resent the other segments RACK had marked, at once (tests/linux_recovery.rs).
        //
        // The reference is Linux's `retrans_stamp` (`tcp_packet_delayed`), the TSval of the
        // episode's first retransmission, not the episode's start: an echo between the two
        // comes from a segment sent before anything was resent, so the hole was filled by an
        // original. While nothing has been retransmitted yet (the fast retransmit still waits,
        // e.g. for pacing), an ACK advancing SND.UNA shows the "lost" segment was only delayed,
        // timestamps or not (Linux 6.16+, `tcp_packet_delayed` after commit e37ab7373696 "tcp:
        // fix to allow timestamp undo if no retransmits were sent" and its fix for non-SACK
        // connections at the recovery point). Regression: the reference was the episode's
        // start, so a timeout inside a recovery whose check had already ended took the
        // timeout's own time as the reference, and the late-arriving retransmission of the
        // recovery (sent before the timeout) "proved" the timeout spurious.
        let mut partial_undo = false;
        if self.undo_armed && self.ca_state != CaState::Open && self.snd_una > self.undo_marker {
            let delayed = match self.retrans_stamp {
                Some(tv) => seg
                    .options
                    .timestamps
                    .is_some_and(|(_, ecr)| ecr != 0 && (ecr.wrapping_sub(tv) as i32) < 0),
                None => self.sack_ok || self.snd_una < self.recovery_point,
            };
            if !delayed {
                self.undo_armed = false;
            } else if self.ca_state != CaState::Recovery || self.sb.retrans_bytes() == 0 {
                partial_undo = linux && self.ca_state == CaState::Recovery && self.snd_una < self.recovery_point;
                self.undo_armed = false;
                self.undo_spurious(now);
                if partial_undo {
                    self.sb.undo_loss_marks();
                    self.rack.advanced = true;
                }
            }
        }
        // --- DSACK undo (RFC 3708, Linux `tcp_try_undo_dsack` / `tcp_may_undo`): every
        // retransmission of the episode was reported needless. Also after a fast recovery ended
        // (Linux keeps `undo_marker` past recovery and `tcp_fastretrans_alert` calls
        // `tcp_try_undo_dsack` in Open and Disorder for a DSACKing ACK): the original and the
        // retransmission may both arrive after the ACK that ends recovery. (After a timeout's
        // Loss state the episode's undo information is dropped at its end, as before.)
        if linux && self.dsack_undo.is_some_and(|(_, n)| n == 0) {
            self.dsack_undo = None;
            self.stats.dsack_undos += 1;
            self.undo_spurious(now);
        }
        // --- TLP outcome (RFC 8985 §7.4, Linux `tcp_process_tlp_ack`)
        if let Some(h) = self.tlp_high_seq {
            if ack >= h {
                if !self.tlp_retrans || tlp_dsack {
                    // New data probed, or the DSACK says original and probe both arrived.
                    self.tlp_high_seq = None;
                } else if ack > h {
                    // The probe repaired a loss: reduce cwnd once (Linux CWR).
                    self.tlp_high_seq = None;
                    self.stats.tlp_recoveries += 1;
                    if self.cc.kind() != CcKind::Bbr {
                        let ev = CongestionEvent {
                            bytes_in_flight: prior_in_flight,
                            lost_sent_at: now,
                            ecn: false,
                            mss: self.mss,
                        };
                        self.cc.on_congestion_event(now, &ev);
                        self.cc.on_recovery_exit(now);
                    }
                } else if newly_acked_seq == 0 && newly_sacked == 0 && seg.payload_len == 0 {
                    // A pure duplicate ACK: original and probe both arrived.
                    self.tlp_high_seq = None;
                }
            }
        }
        // --- duplicate ACKs (RFC 5681 §2; RFC 6675 §2 with SACK)
        let is_dup = if self.sack_ok {
            newly_acked_seq == 0 && newly_sacked > 0
        } else {
            newly_acked_seq == 0
                && seg.payload_len == 0
                && !seg.flags.fin()
                && !window_changed
                && prior_outstanding > 0
        };
        if is_dup {
            self.dupacks += 1;
            self.stats.dup_acks_received += 1;
        } else if newly_acked_seq > 0 {
            self.dupacks = 0;
        }
        // --- F-RTO (RFC 5682 §3.1, SACK-enhanced as Linux's `tcp_process_loss`)
        self.frto_new_only = false;
        if self.ca_state == CaState::Loss && self.frto {
            let dup = newly_sacked > 0 || is_dup;
            self.frto_process(now, newly_acked_seq > 0, orig_acked, dup);
        }
        // --- loss detection and recovery
        let mut newly_lost = 0;
        if linux && partial_undo {
            // `tcp_try_undo_partial` returned true: no loss detection on this ACK.
        } else if linux {
            // RFC 8985 §6.2 (Linux `tcp_rack_mark_lost`); recovery starts as soon as anything
            // is lost (Linux `tcp_time_to_recover` with RACK: no DupThresh).
            if self.rack.advanced {
                newly_lost += self.rack_detect(now);
            }
            if self.ca_state == CaState::Open && self.sb.lost_bytes() > 0 {
                self.enter_recovery(now, prior_in_flight);
            }
        } else if self.sack_ok {
            if rack_time > SimTime::ZERO {
                // RFC 8985 §6.2: reordering window min_rtt / 4.
                newly_lost += self.sb.detect_lost_retransmits(rack_time, min_rtt / 4);
            }
            newly_lost += self.sb.detect_losses(self.cfg.dupthresh, mss);
            // RFC 6675 §5: DupAcks >= DupThresh, or IsLost(HighACK + 1), starts recovery.
            if self.ca_state == CaState::Open
                && !self.sb.is_empty()
                && (self.dupacks >= self.cfg.dupthresh || self.sb.front_lost())
            {
                newly_lost += self.sb.mark_front_lost();
                self.enter_recovery(now, prior_in_flight);
            }
        } else {
            match self.ca_state {
                CaState::Open => {
                    // RFC 6582 §3.2 step 2: only if the ACK covers more than `recover`.
                    if is_dup && self.dupacks == self.cfg.dupthresh && ack > self.recover {
                        newly_lost += self.sb.mark_front_lost();
                        self.enter_recovery(now, prior_in_flight);
                        // RFC 6582 §3.2 step 2: cwnd = ssthresh + 3 * SMSS.
                        self.inflation = self.cfg.dupthresh as u64 * mss;
                    }
                }
                CaState::Recovery => {
                    if is_dup {
                        // RFC 6582 §3.2 step 4: inflate by one SMSS per further duplicate ACK.
                        self.inflation += mss;
                    } else if newly_acked_seq > 0 && ack < self.recovery_point {
                        // RFC 6582 §3.2 step 5: partial ACK: retransmit the first unacknowledged
                        // segment, deflate by the amount acknowledged, add back one SMSS if at
                        // least one SMSS was acknowledged.
                        newly_lost += self.sb.mark_front_lost();
                        self.force_rtx = true;
                        self.inflation = self.inflation.saturating_sub(newly_acked_seq);
                        if newly_acked_seq >= mss {
                            self.inflation += mss;
                        }
                    }
                }
                CaState::Loss => {}
            }
        }
        // --- recovery exit on the cumulative ACK of RecoveryPoint (RFC 6675 §5, RFC 6582 §3.2 step 6)
        if self.ca_state != CaState::Open && self.snd_una >= self.recovery_point {
            if self.ca_state == CaState::Recovery {
                self.cc.on_recovery_exit(now);
                self.rack.on_recovery_exit();
            } else {
                self.dsack_undo = None;
            }
            self.ca_state = CaState::Open;
            self.inflation = 0;
            self.dupacks = 0;
            self.undo_armed = false;
            self.retrans_stamp = None;
            self.prr = None;
            self.prr_cwnd = None;
        }
        // --- the controller
        let acked_bytes = newly_acked + newly_sacked;
        if self.ecn_ok && acked_bytes > 0 {
            let fb = EcnFeedback {
                acked_bytes,
                ece: seg.flags.ece(),
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
            };
            self.cc.on_ecn_feedback(now, &fb);
        }
        if acked_bytes > 0 {
            let cwnd = self.cc.window();
            let slow_start = cwnd < self.cc.ssthresh();
            let cwnd_limited = self.cwnd_limited
                || (slow_start && 2 * prior_in_flight > cwnd)
                || prior_in_flight + mss > cwnd;
            let rate = rs.finish(self.delivered, self.rtt.min_rtt(), newly_lost);
            let a = Ack {
                acked_bytes,
                prior_in_flight,
                bytes_in_flight: self.sb.in_flight(),
                rtt: rtt_sample,
                srtt: self.rtt.srtt().unwrap_or(SimDuration::ZERO),
                min_rtt: self.rtt.min_rtt(),
                delivered: self.delivered,
                rate,
                in_recovery: self.ca_state == CaState::Recovery,
                app_limited: !cwnd_limited,
                mss: self.mss,
                next_departure: self.pacing_next,
            };
            self.cc.on_ack(now, &a);
            // PRR (RFC 6937, Linux `tcp_cwnd_reduction`) after the controller, as
            // `tcp_cong_control` orders it.
            if self.ca_state == CaState::Recovery {
                if let Some(p) = self.prr.as_mut() {
                    let c = p.on_ack(
                        acked_bytes,
                        self.sb.in_flight(),
                        self.cc.ssthresh(),
                        newly_acked_seq > 0,
                        newly_lost > 0,
                        mss,
                    );
                    if c.is_some() {
                        self.prr_cwnd = c;
                    }
                }
            }
        }
        if self.ecn_ok && seg.flags.ece() {
            self.ecn_echo(now, prior_in_flight);
        }
        self.cwnd_limited = false;
        // Linux grows the buffer only for a writer that waits for room, when an ACK has freed
        // some (`tcp_data_snd_check` -> `tcp_check_space` -> `tcp_new_space`)
        if self.snd_nospace && newly_acked_seq > 0 {
            self.expand_sndbuf();
        }
        // --- RTO timer (RFC 6298 §5.2, §5.3)
        if newly_acked_seq > 0 {
            self.rto_deadline = if self.sb.is_empty() {
                None
            } else {
                Some(now + self.rtt.rto())
            };
        }
        if self.sb.is_empty() {
            self.rack_deadline = None;
        }
        // RFC 8985 §7.2: (re)arm the probe timer on every ACK of data.
        if linux && (acked_bytes > 0 || self.sb.is_empty()) {
            self.arm_tlp(now);
        }
        // --- our FIN acknowledged
        if let Some(fe) = self.fin_end {
            if !self.fin_acked && self.snd_una >= fe {
                self.fin_acked = true;
                match self.state {
                    TcpState::FinWait1 => self.state = TcpState::FinWait2,
                    TcpState::Closing => self.enter_time_wait(now),
                    TcpState::LastAck => self.enter_closed(),
                    _ => {}
                }
            }
        }
    }

    /// Starts fast recovery. `flight` is the pipe before the triggering ACK: FlightSize of
    /// RFC 5681 eq. 4 less SACKed and lost data (counting SACKed data would ratchet ssthresh up
    /// when recoveries follow each other, since new data keeps flowing during recovery).
    /// Send-buffer autotuning as Linux `tcp_sndbuf_expand`: `sndbuf_expand` (3 for BBR,
    /// `bbr_sndbuf_expand`; 2 for the others) x max(cwnd, 10) segments x the worst-case charge
    /// of a one-segment buffer (`per_mss`: the segment, `MAX_TCP_HEADER` and
    /// `skb_shared_info` rounded up to a power of two, plus `struct sk_buff`: 2,304 bytes for
    /// a 1448-byte MSS on the oracle's host), never shrinking, up to the maximum
    /// (`tcp_wmem[2]`). Run when the connection is established (`tcp_init_buffer_space`) and on
    /// an ACK that frees space while the writer waits for room (the caller: `tcp_data_snd_check`
    /// -> `tcp_check_space`, which acts only with `SOCK_NOSPACE` set -> `tcp_new_space`), so
    /// the buffer stays as it was while the writer has room. Not modelled:
    /// `tcp_should_expand_sndbuf`'s refusal when `tcp_packets_in_flight >= cwnd`; on the
    /// oracle's host `ss` shows `tb` following 2 x cwnd x 2,304 while the sender is cwnd-limited
    /// (CUBIC, 5-packet queue: 69,120 bytes at cwnd 15 with 15 segments unacknowledged and
    /// 30 kB unsent), and modelling the check made that row lose 38 segments instead of the
    /// kernel's 10-11 (probably the check runs before the ACK's own transmissions, which TCP
    /// small queues defers; not verified).
    /// The buffer is charged `truesize` ([`TcpEndpoint::send_buffer_charge`]); with
    /// [`TcpEndpoint::send_buffer_writable`]'s wake-up rule a blocking writer waits from 2/3
    /// of it.
    pub(super) fn expand_sndbuf(&mut self) {
        if self.cfg.snd_buf.is_auto() {
            let expand = if self.cc.kind() == CcKind::Bbr { 3 } else { 2 };
            let segs = (self.cc.window() / self.mss.max(1) as u64).max(10);
            let per_mss = (self.mss as u64 + LINUX_SKB_HEADROOM).next_power_of_two() + LINUX_SKB_STRUCT;
            let want = (expand * segs * per_mss).min(self.cfg.snd_buf.max());
            self.snd_buf = self.snd_buf.max(want);
        }
    }
}
