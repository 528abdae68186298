//! TCP Westwood+ and TCP Westwood: Reno whose reaction to loss sets ssthresh from an end-to-end
//! bandwidth estimate (BWE) instead of halving.
//!
//! - TCP Westwood: S. Mascolo, C. Casetti, M. Gerla, M. Y. Sanadidi and R. Wang, "TCP Westwood:
//!   Bandwidth Estimation for Enhanced Transport over Wireless Links", ACM MobiCom 2001.
//! - TCP Westwood+: L. A. Grieco and S. Mascolo, "Performance Evaluation and Comparison of
//!   Westwood+, New Reno, and Vegas TCP Congestion Control", ACM SIGCOMM CCR 34(2), 2004; the
//!   estimator Linux `net/ipv4/tcp_westwood.c` implements.
//!
//! Rules (both variants):
//! - Growth is Reno's (RFC 5681 §3.1, RFC 3465 ABC), never while in recovery or app-limited.
//! - After duplicate ACKs (a congestion event): `ssthresh = max(BWE · RTTmin, 2 MSS)` and
//!   `cwnd = min(cwnd, ssthresh)`.
//! - After an RTO: the same ssthresh, `cwnd = 1 MSS` (a repeated RTO holds ssthresh, RFC 5681
//!   §3.1). `RTTmin` is the minimum RTT sample seen.
//! - Before the first bandwidth sample exists the reaction is Reno's (halve the flight size);
//!   that fallback is this crate's choice.
//!
//! **The two estimators** ([`WestwoodConfig::plus`]; selected as `westwood` and `westwoodplain`):
//! - *Westwood+* (`plus = true`, default): one bandwidth sample per RTT, `b = bytes ACKed during
//!   the last RTT / that interval`, where an interval closes at the first ACK after
//!   `max(srtt, 50 ms)` has passed (Linux `TCP_WESTWOOD_RTT_MIN` = 50 ms; Linux compares with the
//!   latest RTT sample, this controller with srtt). Samples are low-pass filtered by a
//!   constant-gain EWMA with gain 7/8, applied twice in cascade as Linux does
//!   (`bw_ns_est ← 7/8·bw_ns_est + 1/8·b`, then `BWE ← 7/8·BWE + 1/8·bw_ns_est`); the first
//!   sample initialises both stages.
//! - *Westwood* (`plus = false`): one sample per ACK, `b_k = d_k / Δ_k` (bytes acknowledged by
//!   the ACK over the time since the previous ACK), filtered by the discrete (Tustin) form of a
//!   first-order low-pass filter with cut-off frequency `1/τ`:
//!   `BWE_k = α_k·BWE_{k−1} + (1 − α_k)·(b_k + b_{k−1})/2`, `α_k = (2τ − Δ_k)/(2τ + Δ_k)`.
//!   ACKs arriving at the same instant (`Δ_k = 0`) are merged into the next sample. The paper's
//!   "virtual null samples" inserted when no ACK arrives for a while are not implemented.
//!
//! The difference: Grieco & Mascolo (2004) show that per-ACK samples overestimate the bandwidth
//! when ACKs are compressed in the reverse path (bursts of ACKs give huge `d_k/Δ_k`), and
//! Westwood+ fixes it by counting the ACKed bytes over a whole RTT before dividing.

use celltcp_engine::{SimDuration, SimTime};

use super::loss_window::{loss_window, reno_ssthresh, ssthresh_floor, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// Westwood(+) parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WestwoodConfig {
    /// `true`: Westwood+ (one sample per RTT, EWMA 7/8; Grieco & Mascolo 2004, Linux).
    /// `false`: original Westwood (per-ACK samples, Tustin low-pass filter; Mascolo et al. 2001).
    pub plus: bool,
    /// Westwood+: the shortest sampling interval, milliseconds, > 0 (Linux
    /// `TCP_WESTWOOD_RTT_MIN`: 50 ms). A sample closes after `max(srtt, this)`.
    pub min_sample_interval_ms: u64,
    /// Westwood+: EWMA weight of the old estimate, in [0, 1) (Linux: 7/8).
    pub ewma_old_weight: f64,
    /// Original Westwood: the filter time constant τ in seconds, > 0 (cut-off frequency 1/τ).
    /// The default 0.5 s is this crate's choice.
    pub filter_tau_s: f64,
    /// Reno decrease factor used only before the first bandwidth sample, in (0, 1) (RFC 5681
    /// eq. 4: 0.5).
    pub fallback_beta: f64,
    /// Appropriate Byte Counting limit in slow start, segments per ACK (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for WestwoodConfig {
    fn default() -> Self {
        WestwoodConfig {
            plus: true,
            min_sample_interval_ms: 50,
            ewma_old_weight: 7.0 / 8.0,
            filter_tau_s: 0.5,
            fallback_beta: 0.5,
            abc_limit_segments: 2,
        }
    }
}

impl WestwoodConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "min_sample_interval_ms",
            self.min_sample_interval_ms,
            self.min_sample_interval_ms > 0,
            "a positive time in ms (Linux: 50)",
        )?;
        check(
            "ewma_old_weight",
            self.ewma_old_weight,
            (0.0..1.0).contains(&self.ewma_old_weight),
            "a weight in [0, 1) (Linux: 7/8)",
        )?;
        check(
            "filter_tau_s",
            self.filter_tau_s,
            self.filter_tau_s > 0.0 && self.filter_tau_s.is_finite(),
            "a positive time in seconds (default 0.5)",
        )?;
        check(
            "fallback_beta",
            self.fallback_beta,
            unit_open(self.fallback_beta),
            "a value in (0, 1) (RFC 5681: 0.5)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct Westwood {
    cfg: WestwoodConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// The filtered bandwidth estimate BWE, bytes per second (0 before the first sample).
    bw_est: f64,
    /// Westwood+: the first EWMA stage (Linux `bw_ns_est`).
    bw_ns_est: f64,
    /// Westwood+: bytes ACKed in the current sampling interval and when it started.
    bk: u64,
    win_start: Option<SimTime>,
    /// Original Westwood: time of the previous ACK, the previous raw sample, bytes merged from
    /// same-instant ACKs.
    last_ack: Option<SimTime>,
    prev_sample: f64,
    pending_bytes: u64,
    rtt_min: Option<SimDuration>,
    ca_acked: u64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(u64, u64)>,
}

impl Westwood {
    pub fn new(cfg: WestwoodConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Westwood {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts.max(1) as u64 * mss,
            ssthresh: u64::MAX,
            bw_est: 0.0,
            bw_ns_est: 0.0,
            bk: 0,
            win_start: None,
            last_ack: None,
            prev_sample: 0.0,
            pending_bytes: 0,
            rtt_min: None,
            ca_acked: 0,
            loss: LossWindow::default(),
        }
    }

    /// The bandwidth estimate BWE, bytes per second (0 before the first sample).
    pub fn bandwidth_estimate(&self) -> f64 {
        self.bw_est
    }

    /// RTTmin, the minimum RTT sample seen.
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.rtt_min
    }

    /// Westwood+ (Grieco & Mascolo 2004): one sample per RTT, cascaded 7/8 EWMA (Linux).
    fn sample_plus(&mut self, now: SimTime, ack: &Ack) {
        self.bk += ack.acked_bytes;
        let Some(start) = self.win_start else {
            self.win_start = Some(now);
            return;
        };
        let delta = now - start;
        let min_iv = SimDuration::from_millis(self.cfg.min_sample_interval_ms);
        if delta <= ack.srtt.max(min_iv) {
            return;
        }
        let b = self.bk as f64 / delta.as_secs_f64();
        let g = self.cfg.ewma_old_weight;
        if self.bw_est == 0.0 && self.bw_ns_est == 0.0 {
            self.bw_ns_est = b;
            self.bw_est = b;
        } else {
            self.bw_ns_est = g * self.bw_ns_est + (1.0 - g) * b;
            self.bw_est = g * self.bw_est + (1.0 - g) * self.bw_ns_est;
        }
        self.bk = 0;
        self.win_start = Some(now);
    }

    /// Original Westwood (Mascolo et al. 2001): per-ACK sample, Tustin low-pass filter.
    fn sample_per_ack(&mut self, now: SimTime, ack: &Ack) {
        self.pending_bytes += ack.acked_bytes;
        let Some(last) = self.last_ack else {
            self.last_ack = Some(now);
            self.pending_bytes = 0;
            return;
        };
        let delta = (now - last).as_secs_f64();
        if delta <= 0.0 {
            return; // same instant: merge into the next sample
        }
        let b = self.pending_bytes as f64 / delta;
        let two_tau = 2.0 * self.cfg.filter_tau_s;
        let alpha = ((two_tau - delta) / (two_tau + delta)).max(0.0);
        if self.bw_est == 0.0 {
            self.bw_est = b;
        } else {
            self.bw_est = alpha * self.bw_est + (1.0 - alpha) * (b + self.prev_sample) / 2.0;
        }
        self.prev_sample = b;
        self.pending_bytes = 0;
        self.last_ack = Some(now);
    }

    /// `ssthresh = max(BWE · RTTmin, 2 MSS)` (both papers); Reno halving before any sample.
    fn loss_ssthresh(&mut self, flight: u64) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh));
        match self.rtt_min {
            Some(rtt) if self.bw_est > 0.0 => {
                ssthresh_floor((self.bw_est * rtt.as_secs_f64()) as u64, self.mss)
            }
            _ => reno_ssthresh(flight, self.cfg.fallback_beta, self.mss),
        }
    }
}

impl Controller for Westwood {
    fn on_sent(&mut self, now: SimTime, _bytes: u64, _bytes_in_flight: u64) {
        // Westwood+: the first sampling interval starts with the first transmission (Linux
        // initialises `rtt_win_sx` when the connection starts).
        if self.win_start.is_none() {
            self.win_start = Some(now);
        }
    }

    fn on_ack(&mut self, now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if let Some(rtt) = ack.rtt {
            self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
        }
        // The estimate counts every acknowledged byte, in recovery too (ACKs during recovery
        // still measure the delivery rate; both papers sample all ACKs, duplicates included).
        if self.cfg.plus {
            self.sample_plus(now, ack);
        } else {
            self.sample_per_ack(now, ack);
        }
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // Reno slow start (RFC 5681 §3.1 eq. 2, RFC 3465 ABC).
            let inc = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss);
            self.cwnd = (self.cwnd + inc).min(self.ssthresh.max(self.cwnd));
            if self.cwnd >= self.ssthresh {
                self.ca_acked = 0;
            }
        } else {
            // Reno congestion avoidance: +1 MSS per cwnd acknowledged (RFC 5681 §3.1).
            self.ca_acked += ack.acked_bytes;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, ev: &CongestionEvent) {
        // Westwood: after duplicate ACKs ssthresh = BWE·RTTmin; cwnd = min(cwnd, ssthresh).
        self.ssthresh = self.loss_ssthresh(ev.bytes_in_flight);
        self.cwnd = self.cwnd.min(self.ssthresh);
        self.ca_acked = 0;
    }

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // Westwood: after a timeout ssthresh = BWE·RTTmin, cwnd = 1 MSS; a repeated timeout
        // holds ssthresh (RFC 5681 §3.1).
        if self.loss.on_rto(ss) {
            self.ssthresh = self.loss_ssthresh(bytes_in_flight);
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

    fn sender(cfg: WestwoodConfig, iw: u32) -> TestSender<Westwood> {
        TestSender::new(Westwood::new(cfg, MSS, iw), MSS, RTT)
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b
    }

    #[test]
    fn westwood_estimate_converges_to_delivery_rate() {
        // Westwood+ (Grieco & Mascolo 2004): samples of bytes ACKed per RTT, low-pass filtered,
        // track the delivery rate. The application delivers 20, then 30 segments per RTT. The
        // cascaded 7/8 EWMA (Linux) is slow: it needs tens of samples (one per 2 RTTs here,
        // since an interval closes at the first ACK *after* srtt has passed).
        let mut s = sender(WestwoodConfig::default(), 40);
        s.set_app_limited(Some(20));
        s.run_rounds(120);
        let bwe = s.cc.bandwidth_estimate();
        assert!(close(bwe, 200_000.0, 0.02), "{bwe}");
        s.set_app_limited(Some(30));
        s.run_rounds(120);
        let bwe = s.cc.bandwidth_estimate();
        assert!(close(bwe, 300_000.0, 0.02), "{bwe}");
    }

    #[test]
    fn westwood_estimate_converges_to_bottleneck_rate() {
        // With a full pipe the ACK rate is the bottleneck rate, and so is the estimate. The
        // application keeps 60 segments in flight (BDP = 50), so the queue and RTT stay bounded.
        let rate = 1e6;
        let mut s = TestSender::new(
            Westwood::new(WestwoodConfig::default(), MSS, 60),
            MSS,
            SimDuration::from_millis(50),
        )
        .with_bottleneck(rate);
        s.set_app_limited(Some(60));
        s.run_for(SimDuration::from_secs(10));
        let bwe = s.cc.bandwidth_estimate();
        assert!(close(bwe, rate, 0.05), "{bwe}");
    }

    #[test]
    fn westwood_original_per_ack_filter_converges() {
        // Mascolo et al. 2001: per-ACK samples d_k/Δ_k through the Tustin low-pass filter. ACKs
        // spaced by the bottleneck's 1 ms serialisation give samples of the link rate.
        let rate = 1e6;
        let cfg = WestwoodConfig {
            plus: false,
            ..WestwoodConfig::default()
        };
        let mut s = TestSender::new(
            Westwood::new(cfg, MSS, 60),
            MSS,
            SimDuration::from_millis(50),
        )
        .with_bottleneck(rate);
        s.run_for(SimDuration::from_secs(3));
        let bwe = s.cc.bandwidth_estimate();
        assert!(close(bwe, rate, 0.05), "{bwe}");
    }

    #[test]
    fn westwood_ssthresh_is_bwe_times_min_rtt_after_loss() {
        // Westwood: after duplicate ACKs ssthresh = BWE · RTTmin and cwnd = min(cwnd, ssthresh).
        // BWE = 20 segments per 100 ms, RTTmin = 100 ms → 20 segments, below cwnd = 40.
        let mut s = sender(WestwoodConfig::default(), 40);
        s.set_app_limited(Some(20));
        s.run_rounds(120);
        let want = (s.cc.bandwidth_estimate() * s.cc.min_rtt().unwrap().as_secs_f64()) as u64;
        assert!(close(want as f64, 20_000.0, 0.02), "{want}");
        s.set_app_limited(None);
        s.lose_n(1);
        assert_eq!(s.cc.ssthresh(), want);
        assert_eq!(s.window(), want);
    }

    #[test]
    fn westwood_loss_keeps_cwnd_below_ssthresh() {
        // cwnd = min(cwnd, ssthresh): a window already below BWE·RTTmin is not cut.
        let mut s = sender(WestwoodConfig::default(), 40);
        s.set_app_limited(Some(20));
        s.run_rounds(120);
        let mut small = s;
        small.rto(); // cwnd = 1 MSS, ssthresh = BWE·RTTmin
        let ssthresh = small.cc.ssthresh();
        assert_eq!(small.window(), MSS as u64);
        assert!(close(ssthresh as f64, 20_000.0, 0.02), "{ssthresh}");
        small.send(1);
        small.lose_n(1);
        assert_eq!(small.window(), MSS as u64, "not raised to ssthresh");
    }

    #[test]
    fn westwood_rto_sets_one_mss_and_bwe_ssthresh() {
        // Westwood: after a timeout cwnd = 1 MSS, ssthresh = BWE·RTTmin (≥ 2 MSS).
        let mut s = sender(WestwoodConfig::default(), 40);
        s.set_app_limited(Some(20));
        s.run_rounds(120);
        let want = (s.cc.bandwidth_estimate() * s.cc.min_rtt().unwrap().as_secs_f64()) as u64;
        s.rto();
        assert_eq!(s.window(), MSS as u64);
        assert_eq!(s.cc.ssthresh(), want);
    }

    #[test]
    fn westwood_ssthresh_floor_is_two_mss() {
        // ssthresh = max(BWE·RTTmin, 2 MSS).
        let mut s = sender(WestwoodConfig::default(), 4);
        s.set_app_limited(Some(1));
        s.run_rounds(120); // 1 segment per RTT → BWE·RTTmin ≈ 1 MSS
        s.lose_n(1);
        assert_eq!(s.cc.ssthresh(), 2 * MSS as u64);
    }

    #[test]
    fn westwood_grows_as_reno_but_not_when_app_limited_or_in_recovery() {
        // Growth is Reno's: slow start doubles per RTT with one ACK per segment.
        let mut s = sender(WestwoodConfig::default(), 10);
        s.run_rounds(2);
        assert_eq!(s.window(), 40 * MSS as u64);
        let mut s = sender(WestwoodConfig::default(), 10);
        s.set_app_limited(Some(4));
        s.run_rounds(5);
        assert_eq!(s.window(), 10 * MSS as u64);
        let mut s = sender(WestwoodConfig::default(), 20);
        s.send_window();
        s.lose_n(1);
        let w = s.window();
        s.advance(RTT);
        s.ack_n(10);
        assert!(s.in_recovery());
        assert_eq!(s.window(), w);
    }
}
