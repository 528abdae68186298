//! TCP Veno: Reno with a Vegas-style backlog estimate that tells random (wireless) loss from
//! congestive loss (C. P. Fu and S. C. Liew, "TCP Veno: TCP Enhancement for Transmission Over
//! Wireless Access Networks", IEEE JSAC 21(2), 2003), as Linux `net/ipv4/tcp_veno.c` also does.
//!
//! Rules (paper §II):
//! - `BaseRTT` is the minimum RTT seen; the backlog at the bottleneck queue is
//!   `N = cwnd · (RTT − BaseRTT) / RTT` segments (paper eq. (3), `N = Actual · (RTT − BaseRTT)`
//!   with `Actual = cwnd / RTT`).
//! - Slow start as Reno (RFC 5681 §3.1).
//! - Congestion avoidance (paper §II-B "refined additive increase"): while `N < β` the path is
//!   not congested and cwnd grows as Reno, 1 MSS per RTT; once `N ≥ β` it grows 1 MSS every
//!   *other* RTT, staying longer near the optimal operating point.
//! - Loss by duplicate ACKs (paper §II-A "refined multiplicative decrease"): if `N < β` the
//!   loss is taken as random, `ssthresh = cwnd · 4/5`; otherwise congestive,
//!   `ssthresh = cwnd / 2`. cwnd = ssthresh (floor 2 MSS). β = 3 segments (paper and Linux).
//! - RTO: cwnd = 1 MSS with the same ssthresh rule (Linux calls the same `ssthresh` hook).
//!
//! **RTT and N**: `RTT` is the minimum RTT sample of the last packet-timed round (as Vegas in
//! Linux), and N is recomputed once per round; the loss rule uses the latest N. A round ends when
//! the data outstanding at its start has been delivered, counted in delivered bytes
//! ([`super::round`]; counting bytes *sent*, as this controller did, stretched every later round
//! by each retransmission, so after losses N lagged the queue by several RTTs). Until a round
//! has given an N, the loss is treated as congestive (Reno's halving). The paper applies its rules to cwnd, not to
//! the flight size; so does this controller.

use celltcp_engine::{SimDuration, SimTime};

use super::loss_window::{loss_window, reno_ssthresh, undo_cwnd, LossWindow};
use super::round::{RoundCounter, RoundEvent};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// Veno parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VenoConfig {
    /// β, segments, > 0: the backlog above which the path is deemed congested (Fu & Liew 2003
    /// §II and Linux `tcp_veno.c`: 3).
    pub beta_pkts: f64,
    /// Decrease factor for a loss judged random (N < β), in (0, 1): paper §II-A 4/5.
    pub random_loss_factor: f64,
    /// Decrease factor for a loss judged congestive (N ≥ β), in (0, 1): paper §II-A 1/2 (Reno).
    pub congestive_loss_factor: f64,
    /// Appropriate Byte Counting limit in slow start, segments per ACK (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for VenoConfig {
    fn default() -> Self {
        VenoConfig {
            beta_pkts: 3.0,
            random_loss_factor: 0.8,
            congestive_loss_factor: 0.5,
            abc_limit_segments: 2,
        }
    }
}

impl VenoConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "beta_pkts",
            self.beta_pkts,
            self.beta_pkts > 0.0 && self.beta_pkts.is_finite(),
            "a positive number of segments (Fu & Liew: 3)",
        )?;
        check(
            "random_loss_factor",
            self.random_loss_factor,
            unit_open(self.random_loss_factor),
            "a value in (0, 1) (Fu & Liew: 0.8)",
        )?;
        check(
            "congestive_loss_factor",
            self.congestive_loss_factor,
            unit_open(self.congestive_loss_factor),
            "a value in (0, 1) (Fu & Liew: 0.5)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct Veno {
    cfg: VenoConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    base_rtt: Option<SimDuration>,
    round_min_rtt: Option<SimDuration>,
    /// Packet-timed rounds in delivered bytes (module doc).
    rounds: RoundCounter,
    /// Backlog N in segments from the last completed round (paper eq. (3)).
    backlog_pkts: Option<f64>,
    ca_acked: u64,
    /// With N ≥ β cwnd grows only on every other window's worth of ACKs (paper §II-B).
    inc_toggle: bool,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(u64, u64)>,
}

impl Veno {
    pub fn new(cfg: VenoConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Veno {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts.max(1) as u64 * mss,
            ssthresh: u64::MAX,
            base_rtt: None,
            round_min_rtt: None,
            rounds: RoundCounter::new(),
            backlog_pkts: None,
            ca_acked: 0,
            inc_toggle: false,
            loss: LossWindow::default(),
        }
    }

    /// The backlog estimate N (segments) from the last completed round.
    pub fn backlog_pkts(&self) -> Option<f64> {
        self.backlog_pkts
    }

    fn congested(&self) -> bool {
        self.backlog_pkts.is_none_or(|n| n >= self.cfg.beta_pkts)
    }

    fn reduce(&mut self) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh));
        // Paper §II-A: random loss (N < β) → 4/5; congestive → 1/2. Floor 2 MSS (RFC 5681 eq. 4).
        let f = if self.congested() {
            self.cfg.congestive_loss_factor
        } else {
            self.cfg.random_loss_factor
        };
        reno_ssthresh(self.cwnd, f, self.mss)
    }

    fn end_of_round(&mut self) {
        if let (Some(base), Some(rtt)) = (self.base_rtt, self.round_min_rtt) {
            let rtt_s = rtt.as_secs_f64().max(1e-9);
            let cwnd_pkts = self.cwnd as f64 / self.mss as f64;
            // Paper eq. (3): N = cwnd · (RTT − BaseRTT) / RTT.
            self.backlog_pkts = Some(cwnd_pkts * (rtt_s - base.as_secs_f64()) / rtt_s);
        }
        self.round_min_rtt = None;
    }
}

impl Controller for Veno {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if let Some(rtt) = ack.rtt {
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
            self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        match self.rounds.on_ack(ack) {
            RoundEvent::First => self.round_min_rtt = ack.rtt,
            RoundEvent::Ended { .. } => self.end_of_round(),
            RoundEvent::Within => {}
        }
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // Slow start as Reno (RFC 5681 §3.1, RFC 3465 ABC).
            let inc = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss);
            self.cwnd = (self.cwnd + inc).min(self.ssthresh.max(self.cwnd));
            if self.cwnd >= self.ssthresh {
                self.ca_acked = 0;
            }
            return;
        }
        // Paper §II-B: one window of ACKs is one RTT; grow on every such window while N < β,
        // on every other one when N ≥ β.
        self.ca_acked += ack.acked_bytes;
        if self.ca_acked >= self.cwnd {
            self.ca_acked -= self.cwnd;
            if !self.congested() {
                self.cwnd += self.mss;
            } else {
                if self.inc_toggle {
                    self.cwnd += self.mss;
                }
                self.inc_toggle = !self.inc_toggle;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, _ev: &CongestionEvent) {
        self.ssthresh = self.reduce();
        self.cwnd = self.ssthresh;
        self.ca_acked = 0;
    }

    fn on_rto(&mut self, _now: SimTime, _bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1: LW = 1 SMSS; a repeated timeout holds ssthresh.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reduce();
        }
        self.cwnd = loss_window(self.mss);
        self.ca_acked = 0;
    }

    fn on_spurious(&mut self, _now: SimTime) {
        if let Some((cwnd, ssthresh)) = self.loss.saved() {
            self.cwnd = undo_cwnd(self.cwnd, cwnd);
            self.ssthresh = ssthresh;
        }
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use celltcp_engine::SimDuration;

    use super::*;
    use crate::cc::test_sender::TestSender;

    const MSS: u32 = 1000;
    const RTT: SimDuration = SimDuration::from_millis(100);

    fn sender(iw: u32) -> TestSender<Veno> {
        TestSender::new(Veno::new(VenoConfig::default(), MSS, iw), MSS, RTT)
    }

    /// Congestion avoidance with cwnd = ssthresh = `pkts` segments and BaseRTT = RTT.
    fn in_ca(pkts: u64) -> TestSender<Veno> {
        let mut s = sender(pkts as u32 * 2);
        s.send_window();
        s.congestion_event(); // no N yet: congestive, halves
        s.advance(RTT);
        s.ack_all();
        s.exit_recovery();
        assert_eq!(s.window(), pkts * MSS as u64);
        s
    }

    #[test]
    fn veno_random_loss_cuts_to_four_fifths() {
        // Paper §II-A: a loss with N < β is random: ssthresh = cwnd · 4/5, cwnd = ssthresh.
        // No queue (RTT = BaseRTT) gives N = 0.
        let mut s = in_ca(20);
        s.run_rounds(3);
        assert!(s.cc.backlog_pkts().unwrap() < 3.0);
        let w = s.window();
        s.lose_n(1);
        assert_eq!(s.cc.ssthresh(), w * 4 / 5);
        assert_eq!(s.window(), w * 4 / 5);
    }

    #[test]
    fn veno_congestive_loss_halves() {
        // Paper §II-A: a loss with N ≥ β is congestive: ssthresh = cwnd / 2. Doubling the RTT
        // over BaseRTT puts N = cwnd / 2 ≥ 3.
        let mut s = in_ca(20);
        s.set_rtt(RTT * 2);
        s.run_rounds(3);
        assert!(s.cc.backlog_pkts().unwrap() >= 3.0);
        let w = s.window();
        s.lose_n(1);
        assert_eq!(s.cc.ssthresh(), w / 2);
        assert_eq!(s.window(), w / 2);
    }

    #[test]
    fn veno_slows_growth_when_backlog_exceeds_beta() {
        // Paper §II-B: N < β → +1 MSS per RTT (Reno); N ≥ β → +1 MSS every other RTT.
        let mut fast = in_ca(20);
        fast.run_rounds(1);
        let f0 = fast.window();
        fast.run_rounds(8);
        let fast_growth = (fast.window() - f0) / MSS as u64;

        let mut slow = in_ca(20);
        slow.set_rtt(RTT * 2);
        slow.run_rounds(1);
        let s0 = slow.window();
        slow.run_rounds(8); // 8 rounds of the current RTT (2·RTT)
        assert!(slow.cc.backlog_pkts().unwrap() >= 3.0);
        let slow_growth = (slow.window() - s0) / MSS as u64;
        assert!((7..=9).contains(&fast_growth), "{fast_growth}");
        assert!((3..=5).contains(&slow_growth), "{slow_growth}");
    }

    #[test]
    fn veno_backlog_follows_the_queue_once_per_rtt_after_retransmissions() {
        // Paper §II: N is estimated once per RTT, so within a round or two of the queue
        // draining a loss is again judged random. Regression: a round ended when the bytes
        // *sent* by its start were delivered; a retransmitted segment is sent twice but
        // delivered once, so each loss lengthened every later round by the bytes lost (here 10
        // segments on a 10-segment window: rounds of two RTTs, and N lagged the queue by
        // several RTTs).
        let mut s = in_ca(20);
        s.set_rtt(RTT * 2);
        s.run_rounds(3);
        assert!(s.cc.backlog_pkts().unwrap() >= 3.0);
        s.lose_n(10);
        s.send(10); // their retransmissions
        s.run_rounds(2);
        assert!(s.cc.backlog_pkts().unwrap() >= 3.0);
        s.set_rtt(RTT); // the queue is gone
        let mut rtts = 0;
        while s.cc.backlog_pkts().unwrap() >= 3.0 {
            s.run_rounds(1);
            rtts += 1;
            assert!(rtts < 20, "N still {:?}", s.cc.backlog_pkts());
        }
        // Segments sent before the drop still come back at the old delay, ACKs in order.
        assert!(rtts <= 3, "N below β after {rtts} RTTs");
    }

    #[test]
    fn veno_rto_sets_one_mss() {
        // RFC 5681 §3.1: cwnd = 1 MSS after a timeout; ssthresh by the Veno rule (no N yet:
        // congestive, cwnd/2).
        let mut s = sender(16);
        s.send_window();
        s.rto();
        assert_eq!(s.window(), MSS as u64);
        assert_eq!(s.cc.ssthresh(), 8 * MSS as u64);
    }

    #[test]
    fn veno_no_growth_when_app_limited_or_in_recovery() {
        // RFC 7661 / RFC 5681 §3.2.
        let mut s = sender(10);
        s.set_app_limited(Some(4));
        s.run_rounds(5);
        assert_eq!(s.window(), 10 * MSS as u64);
        let mut s = sender(20);
        s.send_window();
        s.lose_n(1);
        let w = s.window();
        s.advance(RTT);
        s.ack_n(10);
        assert!(s.in_recovery());
        assert_eq!(s.window(), w);
    }
}
