//! Timers: the next deadline and what fires at it (delayed ACK, TLP, RACK reordering timer,
//! RTO with its Loss-state entry and Linux's rule for when it reduces ssthresh, persist, TIME-WAIT, pacing).

use celltcp_engine::{SimDuration, SimTime};

use super::{CaState, TcpEndpoint, TcpState};
use crate::cc::{Controller, RtoSsthresh};

impl TcpEndpoint {
    // ================================================================== timers

    /// The earliest time [`on_timeout`](Self::on_timeout) has something to do.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let pace = if self.pacing_blocked {
            Some(self.pacing_next)
        } else {
            None
        };
        [
            self.rto_deadline,
            self.rack_deadline,
            self.tlp_deadline,
            self.rcv.delack_deadline,
            self.persist_deadline,
            self.time_wait_deadline,
            pace,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Handles every timer due at `now`; harmless when none is.
    pub fn on_timeout(&mut self, now: SimTime) {
        if self.rcv.delack_deadline.is_some_and(|t| t <= now) {
            // RFC 5681 §4.2: the delayed-ACK timer expired (Linux `tcp_delack_timer_handler`
            // inflates the ATO).
            self.rcv.delack_deadline = None;
            self.rcv.set_rtt_bounds(self.rtt.rto(), self.rtt.srtt());
            self.rcv.on_delack_timer();
            self.rcv.ack_now = true;
        }
        if self.tlp_deadline.is_some_and(|t| t <= now) {
            self.on_tlp_timeout(now);
        }
        if self.rack_deadline.is_some_and(|t| t <= now) {
            self.on_rack_timeout(now);
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.rto_deadline = None;
            self.on_rto(now);
        }
        if self.persist_deadline.is_some_and(|t| t <= now) {
            // RFC 9293 §3.8.6.1: probe the zero window, backing off like the RTO.
            self.probe_pending = true;
            self.persist_backoff = (self.persist_backoff + 1).min(16);
            self.persist_deadline = Some(now + self.persist_interval());
        }
        if self.time_wait_deadline.is_some_and(|t| t <= now) {
            self.enter_closed();
        }
        if self.pacing_blocked && self.pacing_next <= now {
            self.pacing_blocked = false;
        }
    }

    pub(super) fn persist_interval(&self) -> SimDuration {
        let base = self.rtt.base_rto().0;
        SimDuration(base.saturating_mul(1 << self.persist_backoff)).min(self.cfg.max_rto)
    }

    pub(super) fn on_rto(&mut self, now: SimTime) {
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => {
                if self.syn_tx_count > self.cfg.syn_retries {
                    self.reset = true;
                    self.enter_closed();
                    return;
                }
                self.rtt.backoff();
                self.syn_pending = true;
                self.stats.syn_retransmits += 1;
            }
            TcpState::Closed | TcpState::TimeWait => {}
            _ => {
                if self.sb.is_empty() {
                    return;
                }
                // decided before this timeout counts (Linux `icsk_retransmits` is raised after
                // `tcp_enter_loss`)
                let ss = self.rto_ssthresh();
                self.retries += 1;
                if self.retries > self.cfg.max_retries {
                    self.reset = true;
                    self.enter_closed();
                    return;
                }
                self.stats.timeouts += 1;
                self.prr = None;
                self.prr_cwnd = None;
                self.rack_deadline = None;
                self.tlp_deadline = None;
                self.tlp_pending = false;
                self.tlp_high_seq = None;
                // RFC 5681 §3.1 eq. 4, FlightSize taken as the pipe before everything is marked
                // lost (close to cwnd, as Linux's tcp_enter_loss uses). On a repeated RTO the
                // controller holds ssthresh; inside an unfinished fast recovery the sender
                // holds it too with the Linux recovery (`rto_ssthresh`).
                self.cc.on_rto(now, self.sb.in_flight(), self.mss, ss);
                // Linux `tcp_enter_loss` -> `tcp_init_undo`: a timeout that reduces starts a new
                // undo episode (`undo_marker = snd_una`; `undo_retrans = -1`, every
                // retransmission still out having just been marked lost); one that holds keeps
                // the undo state of the reduction it holds. `retrans_stamp`, the reference of
                // the timestamp undo, is not touched: it stays the first retransmission of the
                // episode under way, or is set by the one this timeout sends.
                if ss == RtoSsthresh::Reduce {
                    self.dsack_undo = Some((self.snd_una, -1));
                    self.undo_marker = self.snd_una;
                    self.undo_armed = true;
                }
                // RFC 5682 §3.1 step 1 / §3.2, Linux `tcp_enter_loss`: F-RTO unless a loss
                // recovery was already under way, except for repeated timeouts of the same
                // SND.UNA.
                let new_recovery = self.ca_state == CaState::Open;
                self.frto = self.cfg.frto && (new_recovery || self.retries > 1);
                self.frto_new_only = false;
                self.ca_state = CaState::Loss;
                self.recovery_point = self.snd_nxt;
                self.recover = self.snd_nxt;
                self.inflation = 0;
                self.dupacks = 0;
                self.force_rtx = false;
                self.sb.mark_all_lost();
                self.rtt.backoff(); // RFC 6298 §5.5
                self.pacing_next = now;
                self.pacing_blocked = false;
            }
        }
    }

    /// Whether this retransmission timeout may reduce ssthresh. With `recovery = "linux"`, as
    /// Linux `tcp_enter_loss` (net/ipv4/tcp_input.c, "Reduce ssthresh if it has not yet been
    /// made inside this window"): only when `icsk_ca_state <= TCP_CA_Disorder` (Open here; not
    /// in ECN's CWR, which lasts until an ACK passes the `high_seq` it set, Linux
    /// `tcp_fastretrans_alert`), or `!after(high_seq, snd_una)` (the recovery point is
    /// acknowledged), or in Loss with `icsk_retransmits == 0` (SND.UNA advanced since the last
    /// timeout: `retries`, before this timeout counts). An RTO inside a fast recovery whose window
    /// is not yet acknowledged therefore keeps the ssthresh recovery set, and a repeated RTO
    /// keeps the first one's. With `recovery = "rfc6675"`, RFC 5681 §3.1 as ns-3's
    /// `TcpSocketBase::ReTxTimeout` does it (tcp-socket-base.cc: ssthresh = `GetSsThresh` unless
    /// already in CA_LOSS with the head retransmitted): every first timeout reduces, also in
    /// fast recovery; the controllers hold a repeated one themselves (`LossWindow::on_rto`).
    pub(super) fn rto_ssthresh(&self) -> RtoSsthresh {
        if !self.linux_recovery() {
            return RtoSsthresh::Reduce;
        }
        let cwr = self.ca_state == CaState::Open && self.snd_una < self.ecn_high;
        let reduce = match self.ca_state {
            CaState::Open => !cwr,
            CaState::Recovery => self.snd_una >= self.recovery_point,
            CaState::Loss => self.snd_una >= self.recovery_point || self.retries == 0,
        };
        if reduce {
            RtoSsthresh::Reduce
        } else {
            RtoSsthresh::Hold
        }
    }

    pub(super) fn enter_closed(&mut self) {
        self.state = TcpState::Closed;
        self.rto_deadline = None;
        self.rack_deadline = None;
        self.tlp_deadline = None;
        self.persist_deadline = None;
        self.time_wait_deadline = None;
        self.rcv.delack_deadline = None;
        self.rcv.ack_now = false;
        self.syn_pending = false;
        self.probe_pending = false;
        self.pacing_blocked = false;
    }

    pub(super) fn enter_time_wait(&mut self, now: SimTime) {
        self.state = TcpState::TimeWait;
        self.rto_deadline = None;
        self.rack_deadline = None;
        self.tlp_deadline = None;
        self.persist_deadline = None;
        if self.cfg.time_wait == SimDuration::ZERO {
            // the final ACK still goes out on the next poll
            self.time_wait_deadline = Some(now);
        } else {
            self.time_wait_deadline = Some(now + self.cfg.time_wait);
        }
    }
}
