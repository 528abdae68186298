//! Loss-recovery helpers: the Eifel/DSACK undo, F-RTO, ECN echo, entering fast recovery,
//! RACK detection and its timer, TLP, and DSACK bookkeeping.

use celltcp_engine::{SimDuration, SimTime};

use super::{CaState, TcpEndpoint};
use crate::cc::{CcKind, CongestionEvent, Controller};
use crate::prr::Prr;

impl TcpEndpoint {
    /// The Eifel response (RFC 4015 §2, as Linux `tcp_try_undo_recovery` / `tcp_try_undo_loss`):
    /// the controller restores its state, the episode ends, and after a spurious RTO the data
    /// marked lost but not yet resent is considered in flight again (no go-back-N).
    pub(super) fn undo_spurious(&mut self, now: SimTime) {
        self.stats.spurious += 1;
        self.cc.on_spurious(now);
        if self.ca_state == CaState::Recovery {
            self.rack.on_recovery_exit();
        }
        self.prr = None;
        self.prr_cwnd = None;
        self.dsack_undo = None;
        if self.ca_state == CaState::Loss {
            self.sb.undo_loss_marks();
        }
        self.ca_state = CaState::Open;
        self.retrans_stamp = None;
        self.inflation = 0;
        self.dupacks = 0;
        self.force_rtx = false;
    }

    /// F-RTO on an ACK in the Loss state (RFC 5682 §3.1 and Appendix A's SACK-enhanced
    /// variant, in the order of Linux `tcp_process_loss` after the Eifel check).
    pub(super) fn frto_process(
        &mut self,
        now: SimTime,
        una_advanced: bool,
        orig_acked: bool,
        dup: bool,
    ) {
        if orig_acked {
            // Step 3.b: data sent before the timeout and never retransmitted arrived: the RTO
            // was spurious (`tcp_try_undo_loss(sk, true)`).
            self.frto = false;
            self.stats.spurious_rtos += 1;
            self.undo_spurious(now);
            return;
        }
        if self.snd_nxt > self.recovery_point {
            // New data went out after the first ACK (step 2.b); a duplicate ACK or SACK now
            // means the loss was real (step 3.a): conventional recovery from here.
            if dup {
                self.frto = false;
            }
        } else if una_advanced && self.snd_una < self.recovery_point {
            // Step 2.b: the first ACK advancing SND.UNA: send new data instead of the rest of
            // the window (Linux `REXMIT_NEW`), and wait for the next ACK.
            self.recovery_point = self.snd_nxt;
            let unsent = 1 + self.written > self.snd_nxt;
            let wnd_open = self.snd_una + self.snd_wnd > self.snd_nxt;
            if unsent && wnd_open {
                self.frto_new_only = true;
            } else {
                self.frto = false;
            }
        }
    }

    /// An ACK with ECE (RFC 3168 §6.1.2): reduce once per window of data, not during loss
    /// recovery or after a reduction for loss in the same window; CWR goes on the next new data.
    pub(super) fn ecn_echo(&mut self, now: SimTime, flight: u64) {
        self.stats.ece_received += 1;
        if self.ca_state != CaState::Open || self.snd_una <= self.ecn_high.max(self.recover) {
            return;
        }
        self.ecn_high = self.snd_nxt;
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        if self.cc.kind() != CcKind::Bbr {
            let ev = CongestionEvent {
                bytes_in_flight: flight,
                lost_sent_at: now,
                ecn: true,
                mss: self.mss,
            };
            self.cc.on_congestion_event(now, &ev);
        }
    }

    pub(super) fn enter_recovery(&mut self, now: SimTime, flight: u64) {
        let prior_cwnd = self.cc.window();
        if self.linux_recovery() {
            // Linux `tcp_init_cwnd_reduction` / `tcp_init_undo`; BBR keeps its own window.
            if self.cc.kind() != CcKind::Bbr {
                self.prr = Some(Prr::start(prior_cwnd));
            }
            self.prr_cwnd = None;
            self.dsack_undo = Some((self.snd_una, -1));
            self.tlp_high_seq = None;
            self.tlp_deadline = None;
            self.tlp_pending = false;
        }
        self.ca_state = CaState::Recovery;
        self.recovery_point = self.snd_nxt;
        self.recover = self.snd_nxt;
        self.rescue_done = false;
        self.force_rtx = true;
        // Linux `tcp_enter_recovery` -> `tcp_init_undo`; the timestamp reference is the first
        // retransmission of the episode (`retrans_stamp`, set when it leaves), not its start.
        self.undo_armed = true;
        self.undo_marker = self.snd_una;
        self.stats.fast_recoveries += 1;
        let lost_sent_at = self.sb.front().map_or(now, |s| s.sent_time);
        let ev = CongestionEvent {
            bytes_in_flight: flight,
            lost_sent_at,
            ecn: false,
            mss: self.mss,
        };
        self.cc.on_congestion_event(now, &ev);
    }

    /// RACK loss detection (RFC 8985 §6.2 step 5, Linux `tcp_rack_detect_loss`) with the current
    /// reordering window; arms the reordering timer (§6.3, plus Linux's `TCP_TIMEOUT_MIN`,
    /// 2 ms) for segments not yet late enough. Returns the bytes newly marked lost.
    pub(super) fn rack_detect(&mut self, now: SimTime) -> u64 {
        self.rack.advanced = false;
        if self.rack.xmit_ts == SimTime::ZERO {
            return 0;
        }
        let reo = self.rack.reo_wnd(
            self.ca_state != CaState::Open,
            self.sb.sacked_segs(),
            self.cfg.dupthresh,
            self.rtt.min_rtt(),
            self.rtt.srtt().unwrap_or(SimDuration::ZERO),
        );
        let mut n = self.sb.detect_lost_retransmits(self.rack.xmit_ts, reo);
        let (lost, wait) = self.sb.rack_detect_originals(
            now,
            self.rack.xmit_ts,
            self.rack.end_seq,
            self.rack.rtt,
            reo,
        );
        n += lost;
        self.rack_deadline = wait.map(|w| now + w + SimDuration::from_millis(2));
        n
    }

    /// RACK's reordering timer expired (RFC 8985 §6.3, Linux `tcp_rack_reo_timeout`): detect
    /// again; a loss found outside recovery starts it, with one PRR step.
    pub(super) fn on_rack_timeout(&mut self, now: SimTime) {
        self.rack_deadline = None;
        if !self.linux_recovery() || self.sb.is_empty() {
            return;
        }
        let lost = self.rack_detect(now);
        if lost > 0 && self.ca_state == CaState::Open {
            let flight = self.sb.in_flight() + lost;
            self.enter_recovery(now, flight);
            let (pipe, ssthresh, mss) = (self.sb.in_flight(), self.cc.ssthresh(), self.mss as u64);
            if let Some(p) = self.prr.as_mut() {
                self.prr_cwnd = p.on_ack(mss, pipe, ssthresh, false, true, mss);
            }
        }
    }

    /// Arms the tail-loss probe (RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`): in the Open
    /// state with data outstanding and no probe already out, PTO = 2 SRTT, plus `min_rto` when a
    /// single segment is outstanding (for a delayed ACK) and Linux's 2 ms otherwise, never later
    /// than the RTO.
    pub(super) fn arm_tlp(&mut self, now: SimTime) {
        self.tlp_deadline = None;
        if self.ca_state != CaState::Open || self.sb.is_empty() || self.tlp_high_seq.is_some() {
            return;
        }
        let Some(srtt) = self.rtt.srtt() else { return };
        let extra = if self.sb.len() == 1 {
            self.cfg.min_rto
        } else {
            SimDuration::from_millis(2)
        };
        let mut at = now + SimDuration(2 * srtt.0) + extra;
        if let Some(r) = self.rto_deadline {
            at = at.min(r);
        }
        self.tlp_deadline = Some(at);
    }

    /// The probe timer expired (RFC 8985 §7.3, Linux `tcp_send_loss_probe`): one probe goes out
    /// on the next poll, and the RTO restarts from now.
    pub(super) fn on_tlp_timeout(&mut self, now: SimTime) {
        self.tlp_deadline = None;
        if self.ca_state != CaState::Open || self.sb.is_empty() || self.tlp_high_seq.is_some() {
            return;
        }
        self.tlp_pending = true;
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// A DSACK block `[l, r)` (RFC 2883, Linux `tcp_check_dsack` / `tcp_dsack_seen`): counts it,
    /// feeds RACK's window adaptation and the undo count. Returns true if it reports the TLP
    /// probe as a duplicate (Linux `FLAG_DSACK_TLP`).
    pub(super) fn on_dsack(&mut self, (l, r): (u64, u64)) -> bool {
        let segs = (r - l).div_ceil(self.mss as u64).max(1);
        self.dsack_dups += segs;
        // Linux skips a DSACK reporting more duplicates than were ever retransmitted.
        if self.dsack_dups > self.stats.retransmitted_segments {
            return false;
        }
        self.stats.dsacks_received += 1;
        if !self.linux_recovery() {
            return false;
        }
        let tlp = self.tlp_retrans && self.tlp_high_seq == Some(r);
        if !tlp {
            self.rack.on_dsack();
        }
        if let Some((marker, n)) = self.dsack_undo.as_mut() {
            if *n > 0 && r > *marker {
                *n = (*n - segs as i64).max(0);
            }
        }
        tlp
    }
}
