//! TCP Vegas: delay-based congestion avoidance (L. S. Brakmo and L. L. Peterson, "TCP Vegas:
//! End to End Congestion Avoidance on a Global Internet", IEEE JSAC 13(8), 1995), with the
//! constants and per-round RTT rule of Linux `net/ipv4/tcp_vegas.c`.
//!
//! Rules (paper §3.2 "Congestion Avoidance" and §3.3 "Modified Slow-Start"):
//! - `BaseRTT` is the minimum RTT ever seen.
//! - Once per round trip the controller computes
//!   `diff = cwnd · (1 − BaseRTT / RTT)` in segments (Expected − Actual throughput times
//!   BaseRTT), where `RTT` is the *minimum* RTT sample of the round just ended, as Linux does
//!   (the paper used the average RTT of one timed segment; the round minimum filters out delayed
//!   ACKs and scheduling noise).
//! - Congestion avoidance: `diff < α` → cwnd += 1 MSS; `diff > β` → cwnd −= 1 MSS; otherwise
//!   hold. The sender then keeps between α and β segments queued at the bottleneck.
//! - Slow start doubles cwnd only every *other* RTT, so that the RTT measured in the quiet round
//!   is undistorted; slow start ends when `diff > γ`, and cwnd is then cut to the target window
//!   `cwnd · BaseRTT / RTT + 1` segments (Linux) with ssthresh just below it.
//! - Loss (duplicate ACKs, RTO) is handled as Reno (RFC 5681 eq. 4).
//!
//! **Rounds** are packet-timed and counted in delivered bytes ([`super::round`]): a round ends
//! when the data outstanding at its start has been delivered (Linux `beg_snd_nxt`, in sequence
//! space). Counting bytes *sent* instead, as this controller did, stretched every later round by
//! each retransmission (sent twice, delivered once), so after losses the diff test ran once per
//! several RTTs. A round whose ACKs gave fewer than [`VegasConfig::min_rtt_samples`] RTT samples
//! falls back to Reno for that round (Linux: "we don't have enough RTT samples … revert to
//! Reno", `cnt_rtt <= 2`).

use celltcp_engine::{SimDuration, SimTime};

use super::loss_window::{loss_window, reno_ssthresh, undo_cwnd, LossWindow};
use super::round::{RoundCounter, RoundEvent};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// Vegas parameters. Thresholds are in segments (queued packets at the bottleneck).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VegasConfig {
    /// α, segments, ≥ 0: below this many queued segments cwnd grows by 1 MSS per RTT.
    /// Linux `tcp_vegas.c`: 2. Brakmo & Peterson 1995 §3.2 used 1.
    pub alpha_pkts: f64,
    /// β, segments, ≥ α: above this many queued segments cwnd shrinks by 1 MSS per RTT.
    /// Linux: 4. Brakmo & Peterson 1995 §3.2 used 3.
    pub beta_pkts: f64,
    /// γ, segments, ≥ 0: slow start ends when diff exceeds it (paper §3.3 and Linux: 1).
    pub gamma_pkts: f64,
    /// RTT samples a round needs before its minimum is trusted, ≥ 1 (Linux: 3, `cnt_rtt <= 2`
    /// reverts to Reno).
    pub min_rtt_samples: u32,
    /// Multiplicative decrease factor on loss, in (0, 1) (Reno, RFC 5681 eq. 4: 0.5).
    pub loss_beta: f64,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha_pkts: 2.0,
            beta_pkts: 4.0,
            gamma_pkts: 1.0,
            min_rtt_samples: 3,
            loss_beta: 0.5,
        }
    }
}

impl VegasConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "alpha_pkts",
            self.alpha_pkts,
            self.alpha_pkts >= 0.0 && self.alpha_pkts.is_finite(),
            "a non-negative number of segments (Linux: 2)",
        )?;
        check(
            "beta_pkts",
            self.beta_pkts,
            self.beta_pkts >= self.alpha_pkts && self.beta_pkts.is_finite(),
            "at least alpha_pkts segments (Linux: 4)",
        )?;
        check(
            "gamma_pkts",
            self.gamma_pkts,
            self.gamma_pkts >= 0.0 && self.gamma_pkts.is_finite(),
            "a non-negative number of segments (Linux: 1)",
        )?;
        check(
            "min_rtt_samples",
            self.min_rtt_samples,
            self.min_rtt_samples >= 1,
            "at least 1 sample (Linux: 3)",
        )?;
        check(
            "loss_beta",
            self.loss_beta,
            unit_open(self.loss_beta),
            "a value in (0, 1) (RFC 5681: 0.5)",
        )
    }
}

#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// BaseRTT: the minimum RTT seen (paper §3.2).
    base_rtt: Option<SimDuration>,
    /// Minimum RTT sample of the current round, and how many samples it has seen.
    round_min_rtt: Option<SimDuration>,
    round_samples: u32,
    /// Packet-timed rounds in delivered bytes (module doc).
    rounds: RoundCounter,
    /// Slow start grows cwnd only in every other round (paper §3.3).
    ss_grow_round: bool,
    /// The last diff computed, segments (for tests and traces).
    last_diff_pkts: Option<f64>,
    /// Bytes acknowledged toward the Reno fallback's +1 MSS in congestion avoidance.
    ca_acked: u64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(u64, u64)>,
}

impl Vegas {
    pub fn new(cfg: VegasConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Vegas {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts.max(1) as u64 * mss,
            ssthresh: u64::MAX,
            base_rtt: None,
            round_min_rtt: None,
            round_samples: 0,
            rounds: RoundCounter::new(),
            ss_grow_round: true,
            last_diff_pkts: None,
            ca_acked: 0,
            loss: LossWindow::default(),
        }
    }

    /// BaseRTT, the minimum RTT seen.
    pub fn base_rtt(&self) -> Option<SimDuration> {
        self.base_rtt
    }

    /// The diff (segments queued) computed at the end of the last full round.
    pub fn last_diff_pkts(&self) -> Option<f64> {
        self.last_diff_pkts
    }

    fn reno_reduce(&mut self, flight: u64) -> u64 {
        // RFC 5681 eq. 4: ssthresh = max(FlightSize · β, 2 SMSS).
        self.loss.save((self.cwnd, self.ssthresh));
        reno_ssthresh(flight, self.cfg.loss_beta, self.mss)
    }

    fn reset_round(&mut self) {
        self.round_min_rtt = None;
        self.round_samples = 0;
    }

    /// The once-per-RTT Vegas decision (paper §3.2, §3.3).
    fn end_of_round(&mut self, ack: &Ack) {
        self.ss_grow_round = !self.ss_grow_round;
        let (Some(base), Some(rtt)) = (self.base_rtt, self.round_min_rtt) else {
            return;
        };
        if self.round_samples < self.cfg.min_rtt_samples || ack.in_recovery || ack.app_limited {
            // Too few samples: Reno for this round (Linux `cnt_rtt <= 2`). In slow start the
            // per-ACK growth already happened; in CA add Reno's 1 MSS per RTT.
            if self.round_samples < self.cfg.min_rtt_samples
                && !ack.in_recovery
                && !ack.app_limited
                && self.cwnd >= self.ssthresh
            {
                self.cwnd += self.mss;
            }
            return;
        }
        let rtt_s = rtt.as_secs_f64().max(1e-9);
        let cwnd_pkts = self.cwnd as f64 / self.mss as f64;
        // Paper §3.2: diff = (Expected − Actual) · BaseRTT = cwnd · (1 − BaseRTT/RTT).
        let target_pkts = cwnd_pkts * base.as_secs_f64() / rtt_s;
        let diff = cwnd_pkts - target_pkts;
        self.last_diff_pkts = Some(diff);
        if self.cwnd < self.ssthresh {
            // Paper §3.3: leave slow start when diff > γ. Linux: cwnd = min(cwnd, target + 1),
            // ssthresh = min(ssthresh, cwnd − 1 segment), so the next rounds are in CA.
            if diff > self.cfg.gamma_pkts {
                let target = (target_pkts.floor() as u64 + 1) * self.mss;
                self.cwnd = self.cwnd.min(target).max(2 * self.mss);
                self.ssthresh = self
                    .ssthresh
                    .min(self.cwnd.saturating_sub(self.mss))
                    .max(2 * self.mss);
                self.ca_acked = 0;
            }
        } else if diff < self.cfg.alpha_pkts {
            // Paper §3.2: too little queued, grow linearly (+1 MSS this RTT).
            self.cwnd += self.mss;
        } else if diff > self.cfg.beta_pkts {
            // Paper §3.2: too much queued, shrink linearly (−1 MSS this RTT). Linux also lowers
            // ssthresh to cwnd − 1 segment so the smaller window is not taken for slow start.
            self.cwnd = self.cwnd.saturating_sub(self.mss).max(2 * self.mss);
            self.ssthresh = self
                .ssthresh
                .min(self.cwnd.saturating_sub(self.mss))
                .max(2 * self.mss);
        }
        // α ≤ diff ≤ β: hold (paper §3.2).
    }
}

impl Controller for Vegas {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        // RTT bookkeeping happens in every state: BaseRTT and the round minimum.
        if let Some(rtt) = ack.rtt {
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
            self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.round_samples += 1;
        }
        let may_grow = !(ack.in_recovery || ack.app_limited || ack.acked_bytes == 0);
        // Slow start growth by ACK, only in "grow" rounds (paper §3.3: every other RTT), with
        // RFC 3465 ABC L = 2.
        if may_grow && self.cwnd < self.ssthresh && self.ss_grow_round {
            let inc = ack.acked_bytes.min(2 * self.mss);
            self.cwnd = (self.cwnd + inc).min(self.ssthresh.max(self.cwnd));
        }
        match self.rounds.on_ack(ack) {
            // First ACK: the first round ends when everything outstanding now is delivered.
            RoundEvent::First => self.reset_round(),
            RoundEvent::Ended { .. } => {
                self.end_of_round(ack);
                self.reset_round();
            }
            RoundEvent::Within => {}
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, ev: &CongestionEvent) {
        // Loss as Reno (paper §3.4 keeps Reno's reaction; RFC 5681 eq. 4, RFC 6675 §5 step 4.2).
        self.ssthresh = self.reno_reduce(ev.bytes_in_flight);
        self.cwnd = self.ssthresh;
        self.ca_acked = 0;
    }

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1: LW = 1 SMSS; a repeated timeout holds ssthresh.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reno_reduce(bytes_in_flight);
        }
        self.cwnd = loss_window(self.mss);
        self.ca_acked = 0;
        self.ss_grow_round = true;
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

    fn sender(iw: u32) -> TestSender<Vegas> {
        TestSender::new(Vegas::new(VegasConfig::default(), MSS, iw), MSS, RTT)
    }

    /// Congestion avoidance with cwnd = ssthresh = `pkts` segments and BaseRTT = RTT.
    fn in_ca(pkts: u64) -> TestSender<Vegas> {
        let mut s = sender(pkts as u32 * 2);
        s.send_window();
        s.congestion_event(); // Reno: ssthresh = FlightSize / 2
        s.advance(RTT);
        s.ack_all();
        s.exit_recovery();
        assert_eq!(s.window(), pkts * MSS as u64);
        assert_eq!(s.cc.base_rtt(), Some(RTT));
        s
    }

    #[test]
    fn vegas_grows_when_diff_below_alpha() {
        // Paper §3.2: diff < α → +1 MSS per RTT. No queue (RTT = BaseRTT) gives diff = 0.
        let mut s = in_ca(10);
        s.run_rounds(6);
        let w = s.window_pkts();
        assert!((15.0..=17.0).contains(&w), "{w}");
        assert!(s.cc.last_diff_pkts().unwrap() < 1e-9);
    }

    #[test]
    fn vegas_shrinks_when_diff_above_beta() {
        // Paper §3.2: diff > β → −1 MSS per RTT. RTT doubles to 2·BaseRTT, so
        // diff = cwnd/2 = 10 segments > β = 4.
        let mut s = in_ca(20);
        s.set_rtt(RTT * 2);
        s.run_rounds(2); // transition: the first round still holds segments sent at the old RTT
        let w0 = s.window();
        s.run_rounds(3); // three rounds of the new RTT (run_rounds uses the current RTT)
        assert!(s.cc.last_diff_pkts().unwrap() > 4.0);
        assert!(s.window() < w0, "{} !< {}", s.window(), w0);
        // Linear: one MSS per round, not a multiplicative cut.
        assert!(
            s.window() >= w0 - 4 * MSS as u64,
            "{} vs {}",
            s.window(),
            w0
        );
    }

    #[test]
    fn vegas_holds_between_alpha_and_beta() {
        // Paper §3.2: α ≤ diff ≤ β → hold. A bottleneck makes Vegas settle with α..β packets
        // queued: cwnd ∈ [BDP + α, BDP + β] (+1 for the one being serialised), then constant.
        let rate = 1e6; // 1 MB/s · 50 ms → BDP = 50 segments
        let rtt = SimDuration::from_millis(50);
        let mut s = TestSender::new(Vegas::new(VegasConfig::default(), MSS, 10), MSS, rtt)
            .with_bottleneck(rate);
        s.run_rounds(80);
        let w = s.window_pkts();
        assert!((52.0..=56.0).contains(&w), "{w}");
        let d = s.cc.last_diff_pkts().unwrap();
        assert!((2.0..=4.0).contains(&d), "{d}");
        s.run_rounds(20);
        assert_eq!(s.window_pkts(), w, "held between α and β");
    }

    #[test]
    fn vegas_leaves_slow_start_when_diff_exceeds_gamma() {
        // Paper §3.3: slow start ends once diff > γ = 1; cwnd goes to the target window + 1
        // (Linux) and ssthresh below it.
        let mut s = sender(10);
        s.run_rounds(1);
        assert_eq!(s.cc.ssthresh(), u64::MAX);
        s.set_rtt(RTT * 3 / 2); // diff = cwnd/3 ≫ γ
        s.run_rounds(4);
        assert!(s.cc.ssthresh() < u64::MAX, "left slow start");
        assert!(s.window() >= s.cc.ssthresh(), "now in congestion avoidance");
        assert!(
            s.window_pkts() <= 30.0,
            "cut toward the target window, {}",
            s.window_pkts()
        );
    }

    #[test]
    fn vegas_slow_start_doubles_every_other_rtt() {
        // Paper §3.3: exponential growth only every other RTT, so cwnd after 4 RTTs is about
        // 4× (two doublings), not Reno's 16×.
        let mut s = sender(10);
        s.run_rounds(4);
        let w = s.window_pkts();
        assert!((30.0..=60.0).contains(&w), "{w}");
        assert_eq!(s.cc.ssthresh(), u64::MAX);
    }

    #[test]
    fn vegas_decides_once_per_rtt_after_retransmissions() {
        // Paper §3.2: the diff test, and with no queue its +1 MSS, happens once per RTT.
        // Regression: a round ended when the bytes *sent* by its start were delivered; a
        // retransmitted segment is sent twice but delivered once, so each loss lengthened every
        // later round by the bytes lost (here 10 segments on a 10-segment window: rounds of two
        // RTTs, so cwnd grew half as fast as the paper's rule).
        let mut s = in_ca(20);
        s.send_window();
        s.lose_n(10);
        s.send(10); // their retransmissions
        s.advance(RTT);
        s.ack_all();
        s.exit_recovery();
        assert_eq!(
            s.cc.ssthresh(),
            10 * MSS as u64,
            "Reno cut of the 20-segment flight"
        );
        s.run_rounds(1);
        let w0 = s.window_pkts();
        s.run_rounds(10);
        let grew = s.window_pkts() - w0;
        assert!((9.0..=11.0).contains(&grew), "grew {grew} MSS in 10 RTTs");
    }

    #[test]
    fn vegas_loss_is_reno() {
        // Paper §3.4 / RFC 5681 eq. 4: halve on duplicate-ACK loss; RTO → 1 MSS.
        let mut s = sender(20);
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.window(), 10 * MSS as u64);
        assert_eq!(s.cc.ssthresh(), 10 * MSS as u64);
        let mut s = sender(16);
        s.send_window();
        s.rto();
        assert_eq!(s.window(), MSS as u64);
        assert_eq!(s.cc.ssthresh(), 8 * MSS as u64);
    }

    #[test]
    fn vegas_no_growth_when_app_limited_or_in_recovery() {
        // RFC 7661 / RFC 5681 §3.2: no growth from app-limited ACKs or during recovery.
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
