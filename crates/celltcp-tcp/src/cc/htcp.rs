//! H-TCP (D. Leith and R. Shorten, "H-TCP: TCP for high-speed and long-distance networks",
//! Proc. PFLDnet 2004; also Leith, Shorten, Lee, "H-TCP: A framework for congestion control
//! in high-speed and long-distance networks", HI Tech. Report, 2005).
//!
//! Congestion avoidance grows cwnd by `α` segments per RTT (`α/cwnd` per ACKed segment), where
//! `α` depends on `Δ`, the time elapsed since the last congestion event (Leith & Shorten §3):
//! - `α(Δ) = 1` for `Δ ≤ Δ_L`, and `α(Δ) = 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²` (Δ in seconds)
//!   for `Δ > Δ_L`, with `Δ_L = 1 s` (the low-speed regime: Reno-like for a second after each
//!   backoff);
//! - the increase actually applied is `2(1 − β)·α(Δ)`, so that the average throughput is
//!   unchanged by the adaptive backoff below (§3, "adaptive backoff");
//! - on a congestion event `cwnd ← β·cwnd` with the **adaptive backoff**
//!   `β = RTT_min / RTT_max` clamped to `[0.5, 0.8]` (§3), where `RTT_max` is the largest RTT
//!   sample since the previous congestion event and `RTT_min` the connection's minimum RTT.
//!   With no RTT sample since the last event, β = 0.5.
//!
//! **Not implemented** from the papers: the "throughput-change" guard (use β = 0.5 when the
//! achieved throughput changed by more than 20 % between congestion epochs), which needs a
//! per-epoch rate the controller does not track.
//!
//! **RTT scaling** (Leith & Shorten §3, optional): `α` may be multiplied by
//! `RTT_min / RTT_ref` so that flows with different RTTs gain similar throughput. It is off by
//! default ([`HtcpConfig::rtt_scaling`]); when on, the factor is `RTT_min / rtt_ref` clamped to
//! `[0.5, 10]` (the Linux implementation's reference of 100 ms and clamp range).
//!
//! Slow start is RFC 5681 §3.1 with RFC 3465 ABC; `Δ` is measured from the start of the
//! connection until the first congestion event. After a timeout cwnd = 1 SMSS
//! (RFC 5681 §3.1) and ssthresh = β·cwnd.
//!
//! Units: cwnd and ssthresh are bytes; Δ and RTTs are [`SimDuration`]s.

use celltcp_engine::{SimDuration, SimTime};

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// H-TCP parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HtcpConfig {
    /// `Δ_L`, seconds (≥ 0): Reno-like increase for this long after a congestion event.
    /// Leith & Shorten 2004 §3: 1 s.
    pub delta_l_s: f64,
    /// Lower clamp of the adaptive backoff β, in (0, 1). Leith & Shorten §3: 0.5.
    pub beta_min: f64,
    /// Upper clamp of the adaptive backoff β, in [`beta_min`, 1). Leith & Shorten §3: 0.8.
    pub beta_max: f64,
    /// Use β = RTT_min/RTT_max (true) or the fixed β = `beta_min` (false).
    pub adaptive_backoff: bool,
    /// Multiply α by `RTT_min / rtt_ref` (clamped to [0.5, 10]). Off by default.
    pub rtt_scaling: bool,
    /// Reference RTT for RTT scaling, seconds (> 0). Linux: 0.1 s.
    pub rtt_ref_s: f64,
    /// Appropriate Byte Counting limit L in segments per ACK during slow start (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig {
            delta_l_s: 1.0,
            beta_min: 0.5,
            beta_max: 0.8,
            adaptive_backoff: true,
            rtt_scaling: false,
            rtt_ref_s: 0.1,
            abc_limit_segments: 2,
        }
    }
}

impl HtcpConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "delta_l_s",
            self.delta_l_s,
            self.delta_l_s >= 0.0 && self.delta_l_s.is_finite(),
            "a non-negative time in seconds (Leith & Shorten: 1)",
        )?;
        check(
            "beta_min",
            self.beta_min,
            unit_open(self.beta_min),
            "a value in (0, 1) (Leith & Shorten: 0.5)",
        )?;
        check(
            "beta_max",
            self.beta_max,
            self.beta_max >= self.beta_min && self.beta_max < 1.0,
            "a value in [beta_min, 1) (Leith & Shorten: 0.8)",
        )?;
        check(
            "rtt_ref_s",
            self.rtt_ref_s,
            self.rtt_ref_s > 0.0 && self.rtt_ref_s.is_finite(),
            "a positive time in seconds (Linux: 0.1)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct Htcp {
    cfg: HtcpConfig,
    mss: u64,
    cwnd: f64,
    ssthresh: u64,
    /// The backoff factor in force (the last one applied; `beta_min` before any event).
    beta: f64,
    /// When the last congestion event happened (connection start before the first).
    last_event: SimTime,
    /// Minimum RTT seen by the connection.
    rtt_min: SimDuration,
    /// Largest RTT sample since the last congestion event (zero: none yet).
    rtt_max: SimDuration,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh, beta) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(f64, u64, f64)>,
}

impl Htcp {
    pub fn new(cfg: HtcpConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Htcp {
            beta: cfg.beta_min,
            cfg,
            mss,
            cwnd: (initial_cwnd_pkts as u64 * mss) as f64,
            ssthresh: u64::MAX,
            last_event: SimTime::ZERO,
            rtt_min: SimDuration::MAX,
            rtt_max: SimDuration::ZERO,
            loss: LossWindow::default(),
        }
    }

    /// Leith & Shorten 2004 §3: the unscaled increase `α(Δ)` in segments per RTT.
    pub fn alpha(&self, delta: SimDuration) -> f64 {
        let d = delta.as_secs_f64() - self.cfg.delta_l_s;
        if d <= 0.0 {
            1.0
        } else {
            1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
        }
    }

    /// The backoff factor β in force (set at the last congestion event).
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The increase applied per RTT at `now`: `2(1 − β)·α(Δ)`, times the RTT-scaling factor when
    /// enabled.
    pub fn increase_pkts_per_rtt(&self, now: SimTime) -> f64 {
        let delta = now.saturating_since(self.last_event);
        let mut a = 2.0 * (1.0 - self.beta) * self.alpha(delta);
        if self.cfg.rtt_scaling && self.rtt_min != SimDuration::MAX {
            a *= (self.rtt_min.as_secs_f64() / self.cfg.rtt_ref_s).clamp(0.5, 10.0);
        }
        a
    }

    /// The adaptive backoff: β = RTT_min/RTT_max clamped to [beta_min, beta_max].
    fn next_beta(&self) -> f64 {
        if !self.cfg.adaptive_backoff
            || self.rtt_max == SimDuration::ZERO
            || self.rtt_min == SimDuration::MAX
        {
            return self.cfg.beta_min;
        }
        (self.rtt_min.as_secs_f64() / self.rtt_max.as_secs_f64())
            .clamp(self.cfg.beta_min, self.cfg.beta_max)
    }

    fn reduce(&mut self, now: SimTime) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh, self.beta));
        self.beta = self.next_beta();
        self.last_event = now;
        self.rtt_max = SimDuration::ZERO;
        ssthresh_floor((self.cwnd * self.beta) as u64, self.mss)
    }
}

impl Controller for Htcp {
    fn on_ack(&mut self, now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if let Some(rtt) = ack.rtt {
            self.rtt_min = self.rtt_min.min(rtt);
            self.rtt_max = self.rtt_max.max(rtt);
        }
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if (self.cwnd as u64) < self.ssthresh {
            // RFC 5681 §3.1 eq. 2 with RFC 3465 ABC.
            let inc = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss);
            self.cwnd = (self.cwnd + inc as f64).min((self.ssthresh as f64).max(self.cwnd));
        } else {
            // Leith & Shorten §3: cwnd += 2(1−β)α(Δ)/cwnd segments per ACKed segment.
            let a = self.increase_pkts_per_rtt(now);
            self.cwnd += a * self.mss as f64 * ack.acked_bytes as f64 / self.cwnd;
        }
    }

    fn on_congestion_event(&mut self, now: SimTime, _ev: &CongestionEvent) {
        // Leith & Shorten §3: cwnd ← β·cwnd; Δ restarts.
        self.ssthresh = self.reduce(now);
        self.cwnd = self.ssthresh as f64;
    }

    fn on_rto(&mut self, now: SimTime, _bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1: LW = 1 SMSS; ssthresh = β·cwnd, held on a repeated timeout.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reduce(now);
        }
        self.cwnd = loss_window(self.mss) as f64;
    }

    fn on_spurious(&mut self, _now: SimTime) {
        if let Some((cwnd, ssthresh, beta)) = self.loss.saved() {
            self.cwnd = undo_cwnd(self.cwnd, cwnd);
            self.ssthresh = ssthresh;
            self.beta = beta;
        }
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_sender::TestSender;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const RTT: SimDuration = SimDuration::from_millis(100);

    fn sender(iw: u32) -> TestSender<Htcp> {
        TestSender::new(Htcp::new(HtcpConfig::default(), MSS, iw), MSS, RTT)
    }

    /// One round with RTT samples of `rtt`: send `n`, wait `rtt`, ack them.
    fn round(s: &mut TestSender<Htcp>, n: u64, rtt: SimDuration) {
        s.send(n);
        s.advance(rtt);
        s.ack_all();
    }

    #[test]
    fn htcp_alpha_grows_after_delta_l() {
        // Leith & Shorten §3: α = 1 for Δ ≤ Δ_L = 1 s, then 1 + 10(Δ−Δ_L) + ((Δ−Δ_L)/2)².
        let c = Htcp::new(HtcpConfig::default(), MSS, 10);
        assert_eq!(c.alpha(SimDuration::from_millis(500)), 1.0);
        assert_eq!(c.alpha(SimDuration::from_secs(1)), 1.0);
        assert!((c.alpha(SimDuration::from_secs(2)) - (1.0 + 10.0 + 0.25)).abs() < 1e-9);
        assert!((c.alpha(SimDuration::from_secs(3)) - (1.0 + 20.0 + 1.0)).abs() < 1e-9);
        assert!((c.alpha(SimDuration::from_secs(11)) - (1.0 + 100.0 + 25.0)).abs() < 1e-9);
    }

    #[test]
    fn htcp_ca_increase_is_scaled_alpha_over_cwnd() {
        // Leith & Shorten §3: per ACK cwnd += 2(1−β)α(Δ)/cwnd; Reno-like before Δ_L, much
        // faster once Δ − Δ_L = 2 s (α = 22).
        let mut s = sender(100);
        round(&mut s, 10, RTT);
        s.send_window();
        s.congestion_event(); // constant RTT: β = 1 clamped to 0.8
        let beta = s.cc.beta();
        assert!((beta - 0.8).abs() < 1e-12);
        assert_eq!(s.window(), (110.0 * 0.8 * M as f64) as u64);
        s.ack_all();
        s.exit_recovery();
        s.send(1);
        let w0 = s.cc.cwnd;
        s.ack_n(1); // Δ ≈ 0: α = 1
        let want = w0 + 2.0 * (1.0 - beta) * 1.0 * (M * M) as f64 / w0;
        assert!((s.cc.cwnd - want).abs() < 1e-6, "{} vs {want}", s.cc.cwnd);
        s.advance(SimDuration::from_secs(3));
        s.send(1);
        let w1 = s.cc.cwnd;
        s.ack_n(1); // Δ = 3 s: α = 22
        let want = w1 + 2.0 * (1.0 - beta) * 22.0 * (M * M) as f64 / w1;
        assert!((s.cc.cwnd - want).abs() < 1e-6, "{} vs {want}", s.cc.cwnd);
    }

    #[test]
    fn htcp_beta_is_rtt_ratio_clamped() {
        // Leith & Shorten §3: β = RTT_min/RTT_max over the last epoch, clamped to [0.5, 0.8];
        // cwnd ← β·cwnd.
        let ms = SimDuration::from_millis;
        for (rtt_max, want) in [(150u64, 100.0 / 150.0), (110, 0.8), (400, 0.5)] {
            let mut s = sender(100);
            round(&mut s, 5, ms(100));
            round(&mut s, 5, ms(rtt_max));
            let w = s.cc.cwnd;
            s.send_window();
            s.congestion_event();
            assert!(
                (s.cc.beta() - want).abs() < 1e-9,
                "β = {} want {want}",
                s.cc.beta()
            );
            assert_eq!(s.window(), (w * want) as u64);
        }
        // RTT_max is measured afresh after each event: a constant RTT now gives 0.8.
        let mut s = sender(100);
        round(&mut s, 5, ms(100));
        round(&mut s, 5, ms(400));
        s.congestion_event();
        s.exit_recovery();
        round(&mut s, 5, ms(100));
        s.congestion_event();
        assert!((s.cc.beta() - 0.8).abs() < 1e-9);
    }

    #[test]
    fn htcp_rtt_scaling_multiplies_alpha() {
        // Leith & Shorten §3 (optional RTT scaling): α × RTT_min/RTT_ref, here 200/100 ms = 2.
        let cfg = HtcpConfig {
            rtt_scaling: true,
            ..HtcpConfig::default()
        };
        let mut s = TestSender::new(Htcp::new(cfg, MSS, 10), MSS, RTT);
        round(&mut s, 5, SimDuration::from_millis(200));
        let now = s.now();
        let plain = 2.0 * (1.0 - s.cc.beta()) * s.cc.alpha(now.saturating_since(SimTime::ZERO));
        assert!((s.cc.increase_pkts_per_rtt(now) - 2.0 * plain).abs() < 1e-9);
    }

    #[test]
    fn htcp_rto_sets_loss_window() {
        // RFC 5681 §3.1: cwnd = 1 SMSS after a timeout; ssthresh = β·cwnd.
        let mut s = sender(100);
        round(&mut s, 5, RTT);
        s.send_window();
        s.rto();
        assert_eq!(s.window(), M);
        assert_eq!(s.cc.ssthresh(), (105.0 * 0.8 * M as f64) as u64);
    }

    #[test]
    fn htcp_no_growth_in_recovery_or_app_limited() {
        // RFC 5681 §3.2 / RFC 7661: no growth in recovery or while app-limited.
        let mut s = sender(100);
        s.send_window();
        s.lose_n(1);
        let w = s.window();
        s.advance(RTT);
        s.ack_n(50);
        assert_eq!(s.window(), w);
        let mut s = sender(10);
        s.set_app_limited(Some(4));
        s.run_rounds(3);
        assert_eq!(s.window(), 10 * M);
    }
}
