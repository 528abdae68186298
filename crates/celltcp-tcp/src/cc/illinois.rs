//! TCP-Illinois: loss-based AIMD whose increase α and decrease β are set by the queueing delay
//! (S. Liu, T. Başar and R. Srikant, "TCP-Illinois: A Loss and Delay-Based Congestion Control
//! Algorithm for High-Speed Networks", VALUETOOLS 2006 / Performance Evaluation 65(6–7), 2008),
//! with the constants of Linux `net/ipv4/tcp_illinois.c` as the reference values.
//!
//! Rules (paper §3):
//! - Delays: `T_min` (base) and `T_max` are the smallest and largest RTT samples seen; `d_m =
//!   T_max − T_min` is the largest queueing delay, and `d_a = T_a − T_min` the average queueing
//!   delay, with `T_a` the mean RTT sample of the last round. α and β are recomputed once per
//!   round (a round ends when the data outstanding at its start is delivered, counted in
//!   delivered bytes, [`super::round`]: counting bytes *sent*, as this controller did, stretched
//!   every later round by each retransmission, so after losses the delay was sampled once per
//!   several RTTs and the θ rule took as many times longer).
//! - **α** (segments per RTT in congestion avoidance): `α_max = 10` while `d_a ≤ d_1 = 0.01·d_m`;
//!   above `d_1`, `α = κ1/(κ2 + d_a)` with κ1, κ2 chosen so that `α(d_1) = α_max` and
//!   `α(d_m) = α_min = 0.3`. Once the delay has exceeded `d_1`, α returns to `α_max` only after
//!   `θ = 5` consecutive rounds with `d_a ≤ d_1` (until then it keeps its value).
//! - **β** (fraction removed on loss): `β_min = 1/8` while `d_a ≤ d_2 = 0.1·d_m`, `β_max = 1/2`
//!   once `d_a ≥ d_3 = 0.8·d_m`, linear in between.
//! - Loss: `cwnd ← (1 − β)·cwnd` (floor 2 MSS).
//! - Small windows: below `win_thresh = 15` segments, α = 1 and β = 1/2 (Reno).
//! - Timeout: ssthresh by the loss rule, cwnd = 1 MSS (RFC 5681 §3.1), and α = 1, β = 1/2 and the
//!   θ counter reset until the next round's update (Linux on entering Loss).
//!
//! Slow start below ssthresh is Reno's (RFC 5681 §3.1, RFC 3465 ABC). With no delay variation at
//! all (`d_m = 0`) the delay is "low": α = α_max, β = β_min, as in Linux.

use celltcp_engine::{SimDuration, SimTime};

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::round::{RoundCounter, RoundEvent};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// Illinois parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IllinoisConfig {
    /// α_max, segments per RTT, > α_min: the increase at low delay (paper and Linux: 10).
    pub alpha_max: f64,
    /// α_min, segments per RTT, > 0: the increase at the largest delay (paper and Linux: 0.3).
    pub alpha_min: f64,
    /// β_min in (0, β_max]: the decrease at low delay (paper and Linux: 1/8).
    pub beta_min: f64,
    /// β_max in [β_min, 1): the decrease at high delay (paper and Linux: 1/2).
    pub beta_max: f64,
    /// d_1 / d_m (paper and Linux: 0.01).
    pub d1_fraction: f64,
    /// d_2 / d_m (paper and Linux: 0.1).
    pub d2_fraction: f64,
    /// d_3 / d_m (paper and Linux: 0.8).
    pub d3_fraction: f64,
    /// Segments: below this window α = 1, β = 1/2 (Linux `win_thresh`: 15).
    pub win_thresh: f64,
    /// θ, rounds: consecutive low-delay rounds before α returns to α_max (Linux `theta`: 5).
    pub theta: u32,
    /// Appropriate Byte Counting limit in slow start, segments per ACK (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        IllinoisConfig {
            alpha_max: 10.0,
            alpha_min: 0.3,
            beta_min: 0.125,
            beta_max: 0.5,
            d1_fraction: 0.01,
            d2_fraction: 0.1,
            d3_fraction: 0.8,
            win_thresh: 15.0,
            theta: 5,
            abc_limit_segments: 2,
        }
    }
}

impl IllinoisConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "alpha_min",
            self.alpha_min,
            self.alpha_min > 0.0,
            "a positive number of segments per RTT (paper: 0.3)",
        )?;
        check(
            "alpha_max",
            self.alpha_max,
            self.alpha_max > self.alpha_min && self.alpha_max.is_finite(),
            "more than alpha_min (paper: 10)",
        )?;
        check(
            "beta_min",
            self.beta_min,
            self.beta_min > 0.0 && self.beta_min <= self.beta_max,
            "a value in (0, beta_max] (paper: 1/8)",
        )?;
        check(
            "beta_max",
            self.beta_max,
            self.beta_max >= self.beta_min && self.beta_max < 1.0,
            "a value in [beta_min, 1) (paper: 1/2)",
        )?;
        check(
            "d1_fraction",
            self.d1_fraction,
            (0.0..=1.0).contains(&self.d1_fraction),
            "a fraction in [0, 1] (paper: 0.01)",
        )?;
        check(
            "d2_fraction",
            self.d2_fraction,
            self.d2_fraction > self.d1_fraction && self.d2_fraction <= 1.0,
            "a fraction in (d1_fraction, 1] (paper: 0.1)",
        )?;
        check(
            "d3_fraction",
            self.d3_fraction,
            self.d3_fraction > self.d2_fraction && self.d3_fraction <= 1.0,
            "a fraction in (d2_fraction, 1] (paper: 0.8)",
        )?;
        check(
            "win_thresh",
            self.win_thresh,
            self.win_thresh >= 0.0 && self.win_thresh.is_finite(),
            "a non-negative number of segments (Linux: 15)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

/// The paper's α(d_a) above `d_1`: `κ1/(κ2 + d_a)` through `(d_1, α_max)` and `(d_m, α_min)`.
/// Delays in seconds; `da ≤ d1` gives α_max.
pub fn alpha_of_delay(cfg: &IllinoisConfig, da: f64, dm: f64) -> f64 {
    let d1 = cfg.d1_fraction * dm;
    if da <= d1 {
        return cfg.alpha_max;
    }
    // With x = d_a − d_1, y = d_m − d_1: α = α_max·y / (y + x·(α_max − α_min)/α_min), which is
    // κ1/(κ2 + d_a) with κ1 = α_max·α_min·y/(α_max − α_min), κ2 = κ1/α_max − d_1.
    let (x, y) = (da - d1, dm - d1);
    cfg.alpha_max * y / (y + x * (cfg.alpha_max - cfg.alpha_min) / cfg.alpha_min)
}

/// The paper's β(d_a): β_min up to `d_2`, β_max from `d_3`, linear in between.
pub fn beta_of_delay(cfg: &IllinoisConfig, da: f64, dm: f64) -> f64 {
    let (d2, d3) = (cfg.d2_fraction * dm, cfg.d3_fraction * dm);
    if da <= d2 {
        cfg.beta_min
    } else if da >= d3 || d3 <= d2 {
        cfg.beta_max
    } else {
        cfg.beta_min + (cfg.beta_max - cfg.beta_min) * (da - d2) / (d3 - d2)
    }
}

#[derive(Clone, Debug)]
pub struct Illinois {
    cfg: IllinoisConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    alpha: f64,
    beta: f64,
    base_rtt: Option<SimDuration>,
    max_rtt: SimDuration,
    /// Sum and count of the RTT samples of the current round.
    sum_rtt_s: f64,
    cnt_rtt: u64,
    /// The delay has exceeded d_1 since α was last α_max.
    rtt_above: bool,
    /// Consecutive low-delay rounds while `rtt_above`.
    rtt_low: u32,
    /// Packet-timed rounds in delivered bytes (module doc).
    rounds: RoundCounter,
    frac: f64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(u64, u64)>,
}

impl Illinois {
    pub fn new(cfg: IllinoisConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Illinois {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts.max(1) as u64 * mss,
            ssthresh: u64::MAX,
            alpha: cfg.alpha_max,
            beta: cfg.beta_max,
            base_rtt: None,
            max_rtt: SimDuration::ZERO,
            sum_rtt_s: 0.0,
            cnt_rtt: 0,
            rtt_above: false,
            rtt_low: 0,
            rounds: RoundCounter::new(),
            frac: 0.0,
            loss: LossWindow::default(),
        }
    }

    /// Current α, segments per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Current β, the fraction of cwnd removed on loss.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    fn end_of_round(&mut self) {
        let w = self.cwnd as f64 / self.mss as f64;
        if w < self.cfg.win_thresh {
            self.alpha = 1.0;
            self.beta = 0.5;
        } else if let (Some(base), true) = (self.base_rtt, self.cnt_rtt > 0) {
            let base = base.as_secs_f64();
            let dm = self.max_rtt.as_secs_f64() - base;
            let da = (self.sum_rtt_s / self.cnt_rtt as f64 - base).max(0.0);
            self.alpha = if da <= self.cfg.d1_fraction * dm {
                // θ rule: back to α_max only after θ low-delay rounds.
                if !self.rtt_above {
                    self.cfg.alpha_max
                } else {
                    self.rtt_low += 1;
                    if self.rtt_low < self.cfg.theta {
                        self.alpha
                    } else {
                        self.rtt_low = 0;
                        self.rtt_above = false;
                        self.cfg.alpha_max
                    }
                }
            } else {
                self.rtt_above = true;
                self.rtt_low = 0;
                alpha_of_delay(&self.cfg, da, dm)
            };
            self.beta = beta_of_delay(&self.cfg, da, dm);
        }
        self.sum_rtt_s = 0.0;
        self.cnt_rtt = 0;
    }

    fn reduce(&mut self) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh));
        // Paper §3: cwnd ← (1 − β)·cwnd in whole segments (as Linux); floor 2 (RFC 5681 eq. 4).
        let w = self.cwnd as f64 / self.mss as f64;
        ssthresh_floor((w * (1.0 - self.beta)).floor() as u64 * self.mss, self.mss)
    }
}

impl Controller for Illinois {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if let Some(rtt) = ack.rtt {
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
            self.max_rtt = self.max_rtt.max(rtt);
            self.sum_rtt_s += rtt.as_secs_f64();
            self.cnt_rtt += 1;
        }
        if let RoundEvent::Ended { .. } = self.rounds.on_ack(ack) {
            self.end_of_round();
        }
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 slow start with RFC 3465 ABC.
            let inc = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss);
            self.cwnd = (self.cwnd + inc).min(self.ssthresh.max(self.cwnd));
            self.frac = 0.0;
            return;
        }
        // Paper §3: cwnd += α/cwnd per acknowledged segment, i.e. α segments per RTT, added in
        // whole segments (as Linux).
        self.frac += self.alpha * ack.acked_bytes as f64 / self.cwnd as f64;
        let add = (self.frac + 1e-9).floor(); // 1e-9: float sums of 1/w
        self.frac -= add;
        self.cwnd += add as u64 * self.mss;
    }

    fn on_congestion_event(&mut self, _now: SimTime, _ev: &CongestionEvent) {
        self.ssthresh = self.reduce();
        self.cwnd = self.ssthresh;
        self.frac = 0.0;
    }

    fn on_rto(&mut self, _now: SimTime, _bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1: LW = 1 SMSS; a repeated timeout holds ssthresh. Linux resets α, β and
        // the θ counter on entering Loss.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reduce();
        }
        self.cwnd = loss_window(self.mss);
        self.frac = 0.0;
        self.alpha = 1.0;
        self.beta = 0.5;
        self.rtt_above = false;
        self.rtt_low = 0;
        self.sum_rtt_s = 0.0;
        self.cnt_rtt = 0;
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

    fn sender(iw: u32) -> TestSender<Illinois> {
        TestSender::new(Illinois::new(IllinoisConfig::default(), MSS, iw), MSS, RTT)
    }

    /// Congestion avoidance at cwnd = ssthresh = `pkts` (via an ECN-style event at 2·pkts with
    /// β = 1/2 before any round ended).
    fn in_ca(pkts: u64) -> TestSender<Illinois> {
        let mut s = sender(pkts as u32 * 2);
        s.send_window();
        s.congestion_event();
        s.advance(RTT);
        s.ack_all();
        s.exit_recovery();
        assert_eq!(s.window(), pkts * MSS as u64);
        s
    }

    #[test]
    fn illinois_alpha_max_at_zero_queueing_delay() {
        // Paper §3: d_a ≤ d_1 → α = α_max = 10 segments per RTT.
        let mut s = in_ca(50);
        s.run_rounds(2);
        assert_eq!(s.cc.alpha(), 10.0);
        let w0 = s.window_pkts();
        s.run_rounds(3);
        let grew = s.window_pkts() - w0;
        assert!((grew - 30.0).abs() < 3.0, "grew {grew} in 3 RTTs");
    }

    #[test]
    fn illinois_alpha_min_at_the_largest_delay() {
        // Paper §3: α(d_m) = α_min = 0.3 when the average delay is the largest seen.
        let mut s = in_ca(50);
        s.run_rounds(2);
        s.set_rtt(RTT * 2);
        s.run_rounds(2);
        // The round's mean may include a sample or two from before the change: α within 0.01.
        assert!((s.cc.alpha() - 0.3).abs() < 0.01, "{}", s.cc.alpha());
        let w0 = s.window_pkts();
        s.run_rounds(10);
        let grew = s.window_pkts() - w0;
        assert!((grew - 3.0).abs() < 0.6, "grew {grew} in 10 RTTs");
    }

    #[test]
    fn illinois_alpha_is_kappa1_over_kappa2_plus_delay() {
        // Paper §3: α = κ1/(κ2 + d_a) above d_1, through (d_1, α_max) and (d_m, α_min).
        let c = IllinoisConfig::default();
        let dm = 0.1;
        let d1 = 0.01 * dm;
        assert_eq!(alpha_of_delay(&c, d1, dm), 10.0);
        assert!((alpha_of_delay(&c, d1 + 1e-12, dm) - 10.0).abs() < 1e-6);
        assert!((alpha_of_delay(&c, dm, dm) - 0.3).abs() < 1e-12);
        let y = dm - d1;
        let k1 = 10.0 * 0.3 * y / (10.0 - 0.3);
        let k2 = k1 / 10.0 - d1;
        for da in [0.002, 0.01, 0.05, 0.09] {
            let a = alpha_of_delay(&c, da, dm);
            assert!((a - k1 / (k2 + da)).abs() < 1e-9, "α({da}) = {a}");
        }
    }

    #[test]
    fn illinois_beta_interpolates_between_d2_and_d3() {
        // Paper §3: β = 1/8 for d_a ≤ d_2 = 0.1 d_m, 1/2 for d_a ≥ d_3 = 0.8 d_m, linear between.
        let c = IllinoisConfig::default();
        let dm = 0.2;
        assert_eq!(beta_of_delay(&c, 0.01, dm), 0.125);
        assert_eq!(beta_of_delay(&c, 0.02, dm), 0.125);
        assert_eq!(beta_of_delay(&c, 0.17, dm), 0.5);
        let mid = beta_of_delay(&c, 0.09, dm); // (0.09 − 0.02)/(0.16 − 0.02) = 1/2 of the way
        assert!((mid - 0.3125).abs() < 1e-12, "{mid}");
    }

    #[test]
    fn illinois_loss_removes_beta_of_cwnd() {
        // Paper §3: cwnd ← (1 − β)·cwnd: β_min = 1/8 at low delay, β_max = 1/2 at high delay.
        let mut s = in_ca(50);
        s.run_rounds(2);
        assert_eq!(s.cc.beta(), 0.125);
        s.send_window();
        let w = s.window();
        s.lose_n(1);
        assert_eq!(s.window(), w / MSS as u64 * 7 / 8 * MSS as u64);

        let mut s = in_ca(50);
        s.run_rounds(2);
        s.set_rtt(RTT * 2);
        s.run_rounds(2);
        assert_eq!(s.cc.beta(), 0.5);
        let w = s.window();
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.window(), w / MSS as u64 / 2 * MSS as u64);
    }

    #[test]
    fn illinois_alpha_returns_to_max_after_theta_low_rounds() {
        // Linux θ = 5: after high delay, α stays at its value until 5 consecutive rounds with
        // d_a ≤ d_1, then becomes α_max.
        let mut s = in_ca(50);
        s.run_rounds(2);
        s.set_rtt(RTT * 2);
        s.run_rounds(2);
        s.set_rtt(RTT);
        let mut seen = Vec::new();
        for _ in 0..8 {
            s.run_rounds(1);
            seen.push(s.cc.alpha());
        }
        let first_max = seen.iter().position(|a| *a == 10.0).expect("α back to max");
        assert!(seen[..first_max].iter().all(|a| *a < 10.0), "{seen:?}");
        // One round may mix high and low samples; then θ = 5 low rounds.
        assert!((4..=6).contains(&first_max), "{seen:?}");
    }

    #[test]
    fn illinois_samples_the_delay_once_per_rtt_after_retransmissions() {
        // Paper §3: d_a is the average delay of one RTT, and α returns to α_max after θ = 5
        // consecutive low-delay rounds, i.e. about 5 RTTs after the queue drains. Regression: a
        // round ended when the bytes *sent* by its start were delivered; a retransmitted segment
        // is sent twice but delivered once, so each loss lengthened every later round by the
        // bytes lost (here 25 segments on a 25-segment window: rounds of two RTTs, and α stayed
        // low twice as long).
        let mut s = in_ca(50);
        s.run_rounds(2);
        s.set_rtt(RTT * 2);
        s.run_rounds(2);
        assert!(s.cc.alpha() < 1.0);
        s.lose_n(25);
        s.send(25); // their retransmissions
        s.set_rtt(RTT);
        let mut rtts = 0;
        while s.cc.alpha() < 10.0 {
            s.run_rounds(1);
            rtts += 1;
            assert!(rtts < 20, "α still {}", s.cc.alpha());
        }
        // One or two RTTs for the segments sent at the old delay to drain, then θ rounds.
        assert!((5..=8).contains(&rtts), "α back to α_max after {rtts} RTTs");
    }

    #[test]
    fn illinois_is_reno_below_win_thresh() {
        // Linux win_thresh = 15: smaller windows use α = 1, β = 1/2.
        let mut s = in_ca(10);
        s.run_rounds(2);
        assert_eq!((s.cc.alpha(), s.cc.beta()), (1.0, 0.5));
        let w = s.window();
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.window(), w / MSS as u64 / 2 * MSS as u64);
    }

    #[test]
    fn illinois_rto_resets_to_one_mss_and_reno_parameters() {
        // RFC 5681 §3.1 LW = 1 SMSS; Linux resets α = 1, β = 1/2 on entering Loss.
        let mut s = in_ca(50);
        s.run_rounds(2);
        s.send_window();
        let w = s.window();
        s.rto();
        assert_eq!(s.window(), MSS as u64);
        assert_eq!(s.cc.ssthresh(), w / MSS as u64 * 7 / 8 * MSS as u64);
        assert_eq!((s.cc.alpha(), s.cc.beta()), (1.0, 0.5));
    }

    #[test]
    fn illinois_no_growth_when_app_limited_or_in_recovery() {
        // RFC 7661 / RFC 5681 §3.2.
        let mut s = sender(10);
        s.set_app_limited(Some(4));
        s.run_rounds(5);
        assert_eq!(s.window(), 10 * MSS as u64);
        let mut s = sender(40);
        s.send_window();
        s.lose_n(1);
        let w = s.window();
        s.advance(RTT);
        s.ack_n(20);
        assert!(s.in_recovery());
        assert_eq!(s.window(), w);
    }
}
