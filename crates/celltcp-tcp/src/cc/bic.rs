//! BIC-TCP: binary increase congestion control (L. Xu, K. Harfoush and I. Rhee, "Binary Increase
//! Congestion Control (BIC) for Fast Long-Distance Networks", IEEE INFOCOM 2004), with the
//! constants of Linux `net/ipv4/tcp_bic.c` as the reference values.
//!
//! Rules (paper §III-A, in segments; "per RTT" is one window of acknowledged data):
//! - **Binary search increase** below `W_max` (the window at the last loss): the window moves a
//!   fraction of the distance to `W_max` per RTT, `(W_max − cwnd) / B` with `B = 4` (the paper's
//!   midpoint search is `B = 2`; Linux uses 4);
//! - **additive increase** cap: the step per RTT is at most `S_max = max_increment = 16`;
//! - near `W_max` (step ≤ 1 segment) the window creeps at `B / smooth_part = 0.2` segment per RTT
//!   (the paper's `S_min`, smoothed as in Linux);
//! - **max probing** above `W_max`: the growth mirrors the search, slow at first
//!   (`0.2` per RTT within `B` segments of `W_max`), then `(cwnd − W_max) / (B − 1)` per RTT, until
//!   it reaches `S_max` per RTT;
//! - before any loss (`W_max` unset) the window grows at least `cwnd / 20` per RTT (Linux's
//!   start-up rule);
//! - at or below `low_window = 14` segments BIC is Reno: +1 per RTT and halving on loss;
//! - **loss**: `cwnd ← β·cwnd` with `β = 819/1024 ≈ 0.8`; `W_max ← cwnd` before the cut, or with
//!   **fast convergence**, when the window had not regained the previous `W_max`,
//!   `W_max ← cwnd·(1 + β)/2` (paper §III-B), so a flow that is losing bandwidth releases it;
//! - **timeout**: ssthresh by the loss rule, cwnd = 1 MSS (RFC 5681 §3.1), and the search state is
//!   forgotten (`W_max` unset), as Linux does on entering the Loss state.
//!
//! Slow start below ssthresh is Reno's (RFC 5681 §3.1 with RFC 3465 ABC). The paper applies its
//! rules to cwnd, not to the flight size; so does this controller.

use celltcp_engine::SimTime;

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// BIC parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BicConfig {
    /// Multiplicative decrease factor β, in (0, 1): cwnd ← β·cwnd on loss (Linux `beta` =
    /// 819/1024 ≈ 0.8).
    pub beta: f64,
    /// `S_max`, segments per RTT, > 0: the largest increase in one RTT (Linux `max_increment`: 16).
    pub max_increment: f64,
    /// Segments, ≥ 2: at or below this window BIC behaves as Reno (Linux `low_window`: 14).
    pub low_window: f64,
    /// Divisor of the slow creep near `W_max`: `B / smooth_part` segments per RTT (Linux
    /// `smooth_part`: 20).
    pub smooth_part: f64,
    /// `B`, > 1: the binary-search divisor; the step is `(W_max − cwnd) / B` per RTT (Linux
    /// `BICTCP_B`: 4; the paper's midpoint is 2).
    pub search_divisor: f64,
    /// Fast convergence (paper §III-B; Linux default on).
    pub fast_convergence: bool,
    /// Appropriate Byte Counting limit in slow start, segments per ACK (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig {
            beta: 819.0 / 1024.0,
            max_increment: 16.0,
            low_window: 14.0,
            smooth_part: 20.0,
            search_divisor: 4.0,
            fast_convergence: true,
            abc_limit_segments: 2,
        }
    }
}

impl BicConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "beta",
            self.beta,
            unit_open(self.beta),
            "a value in (0, 1) (Linux: 819/1024)",
        )?;
        check(
            "max_increment",
            self.max_increment,
            self.max_increment > 0.0 && self.max_increment.is_finite(),
            "a positive number of segments per RTT (Linux: 16)",
        )?;
        check(
            "low_window",
            self.low_window,
            self.low_window >= 2.0 && self.low_window.is_finite(),
            "at least 2 segments (Linux: 14)",
        )?;
        check(
            "smooth_part",
            self.smooth_part,
            self.smooth_part > 0.0 && self.smooth_part.is_finite(),
            "a positive divisor (Linux: 20)",
        )?;
        check(
            "search_divisor",
            self.search_divisor,
            self.search_divisor > 1.0 && self.search_divisor.is_finite(),
            "a divisor above 1 (Linux: 4)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct Bic {
    cfg: BicConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// `W_max` in segments (0: no loss yet).
    w_max: f64,
    /// Fractional segments of window growth not yet added (congestion avoidance).
    frac: f64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh, W_max) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(u64, u64, f64)>,
}

impl Bic {
    pub fn new(cfg: BicConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Bic {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts.max(1) as u64 * mss,
            ssthresh: u64::MAX,
            w_max: 0.0,
            frac: 0.0,
            loss: LossWindow::default(),
        }
    }

    /// `W_max` in segments (0 before the first loss).
    pub fn w_max_pkts(&self) -> f64 {
        self.w_max
    }

    /// The increase, in segments per RTT, at a window of `w` segments (paper §III-A).
    pub fn increase_per_rtt(&self, w: f64) -> f64 {
        let c = &self.cfg;
        if w <= c.low_window {
            return 1.0; // Reno
        }
        let b = c.search_divisor;
        let creep = b / c.smooth_part;
        let inc = if w < self.w_max {
            // Binary search increase, capped by additive increase S_max.
            let dist = (self.w_max - w) / b;
            if dist > c.max_increment {
                c.max_increment
            } else if dist <= 1.0 {
                creep
            } else {
                dist
            }
        } else if w < self.w_max + b {
            // Max probing, just above W_max: slow.
            creep
        } else if w < self.w_max + c.max_increment * (b - 1.0) {
            // Max probing: the mirror image of the search.
            (w - self.w_max) / (b - 1.0)
        } else {
            c.max_increment
        };
        if self.w_max == 0.0 {
            // No loss yet: at least cwnd/20 per RTT (Linux start-up rule).
            inc.max(w / 20.0)
        } else {
            inc
        }
    }

    fn reduce(&mut self) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh, self.w_max));
        let w = self.cwnd as f64 / self.mss as f64;
        // Paper §III-B fast convergence: a flow below its previous maximum lowers W_max further.
        self.w_max = if self.cfg.fast_convergence && w < self.w_max {
            w * (1.0 + self.cfg.beta) / 2.0
        } else {
            w
        };
        let f = if w <= self.cfg.low_window {
            0.5
        } else {
            self.cfg.beta
        };
        // Whole segments, as Linux keeps cwnd; floor 2 (RFC 5681 eq. 4).
        ssthresh_floor((w * f).floor() as u64 * self.mss, self.mss)
    }
}

impl Controller for Bic {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
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
        // `increase_per_rtt` segments per cwnd bytes acknowledged, added in whole segments.
        let w = self.cwnd as f64 / self.mss as f64;
        self.frac += self.increase_per_rtt(w) * ack.acked_bytes as f64 / self.cwnd as f64;
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
        // RFC 5681 §3.1: LW = 1 SMSS; a repeated timeout holds ssthresh. Linux forgets the
        // search state on entering Loss.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reduce();
        }
        self.w_max = 0.0;
        self.cwnd = loss_window(self.mss);
        self.frac = 0.0;
    }

    fn on_spurious(&mut self, _now: SimTime) {
        if let Some((cwnd, ssthresh, w_max)) = self.loss.saved() {
            self.cwnd = undo_cwnd(self.cwnd, cwnd);
            self.ssthresh = ssthresh;
            self.w_max = w_max;
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

    fn sender(iw: u32) -> TestSender<Bic> {
        TestSender::new(Bic::new(BicConfig::default(), MSS, iw), MSS, RTT)
    }

    /// A loss at `w` segments; ACK the recovery; congestion avoidance at cwnd = ⌊0.8·w⌋.
    fn after_loss_at(w: u32) -> TestSender<Bic> {
        let mut s = sender(w);
        s.send_window();
        s.lose_n(1);
        s.advance(RTT);
        s.ack_all();
        s.exit_recovery();
        s
    }

    fn pkts(s: &TestSender<Bic>) -> f64 {
        s.window_pkts()
    }

    #[test]
    fn bic_loss_cuts_to_beta_and_records_w_max() {
        // Paper §III-B / Linux: cwnd ← β·cwnd, β = 819/1024; W_max ← cwnd before the cut.
        let s = after_loss_at(100);
        // ⌊100 · 819/1024⌋ = 79 whole segments.
        assert_eq!(s.window(), 79 * MSS as u64);
        assert_eq!(s.cc.ssthresh(), s.window());
        assert_eq!(s.cc.w_max_pkts(), 100.0);
    }

    #[test]
    fn bic_fast_convergence_lowers_w_max() {
        // Paper §III-B: a loss below the previous W_max sets W_max = cwnd·(1 + β)/2.
        let mut s = after_loss_at(100); // cwnd 79, W_max 100
        let w = s.window();
        s.send_window();
        s.lose_n(1);
        let wp = w as f64 / MSS as f64;
        assert!((s.cc.w_max_pkts() - wp * (1.0 + 0.7998046875) / 2.0).abs() < 1e-9);
        // Without fast convergence W_max is simply the window at the loss.
        let cfg = BicConfig {
            fast_convergence: false,
            ..BicConfig::default()
        };
        let mut s = TestSender::new(Bic::new(cfg, MSS, 100), MSS, RTT);
        s.send_window();
        s.lose_n(1);
        s.exit_recovery();
        let w = s.window_pkts();
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.cc.w_max_pkts(), w);
    }

    #[test]
    fn bic_binary_search_step_is_a_quarter_of_the_distance() {
        // Paper §III-A binary search increase (Linux B = 4): W_max = 200, after the cut cwnd =
        // 159; distance/B = 10.25 < S_max, so one RTT adds ≈ 10 segments.
        let mut s = after_loss_at(200);
        let w0 = pkts(&s);
        let want = (200.0 - w0) / 4.0;
        assert!((s.cc.increase_per_rtt(w0) - want).abs() < 1e-9);
        s.run_rounds(1);
        let grew = pkts(&s) - w0;
        // The step is recomputed per ACK from the current window, so it shrinks as cwnd closes
        // in during the round, and growth is in whole segments: between 8 and 10.25 — neither
        // S_max (16), the whole distance (41) nor Reno's 1.
        assert!((8.0..=want).contains(&grew), "grew {grew}, want ≈ {want}");
    }

    #[test]
    fn bic_step_capped_by_max_increment() {
        // Paper §III-A: when the midpoint is farther than S_max, increase by S_max = 16 per RTT
        // (additive increase). W_max = 1000, cwnd ≈ 800: (1000 − 800)/4 = 50 > 16.
        let mut s = after_loss_at(1000);
        let w0 = pkts(&s);
        assert_eq!(s.cc.increase_per_rtt(w0), 16.0);
        s.run_rounds(3);
        let grew = pkts(&s) - w0;
        assert!((grew - 48.0).abs() <= 1.5, "grew {grew}");
    }

    #[test]
    fn bic_converges_to_w_max_and_creeps_near_it() {
        // Paper §III-A: the search converges on W_max; within one step of it (distance/B ≤ 1) the
        // window creeps at B/smooth_part = 0.2 segment per RTT instead of overshooting.
        let mut s = after_loss_at(200);
        s.run_rounds(20);
        let w = pkts(&s);
        assert!(w > 195.0 && w < 200.5, "after 20 RTTs cwnd {w}");
        assert!((s.cc.increase_per_rtt(198.0) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn bic_max_probing_accelerates_past_w_max() {
        // Paper §III-A max probing: above W_max growth starts slow (0.2/RTT within B of it), then
        // (cwnd − W_max)/(B − 1) per RTT, then S_max.
        let s = after_loss_at(200);
        let c = &s.cc;
        assert!((c.increase_per_rtt(202.0) - 0.2).abs() < 1e-12);
        assert!((c.increase_per_rtt(212.0) - 4.0).abs() < 1e-12);
        assert_eq!(c.increase_per_rtt(260.0), 16.0);
        // Driven: once past W_max the per-RTT increase grows round by round.
        // The plateau: from ≈96 segments (step ≤ 1) to W_max + B = 104 at 0.2 per RTT takes
        // tens of RTTs.
        let mut s = after_loss_at(100);
        let mut rounds = 0;
        while pkts(&s) < 104.0 {
            s.run_rounds(1);
            rounds += 1;
            assert!(rounds < 200);
        }
        assert!(rounds >= 30, "reached W_max + B after {rounds} RTTs");
        let mut last = 0.0;
        let mut incs = Vec::new();
        for _ in 0..6 {
            let w0 = pkts(&s);
            s.run_rounds(1);
            let inc = pkts(&s) - w0;
            incs.push(inc);
            assert!(inc + 0.5 >= last, "probing slowed: {incs:?}");
            last = inc;
        }
        assert!(pkts(&s) > 110.0 && incs[5] > 3.0, "{} {incs:?}", pkts(&s));
    }

    #[test]
    fn bic_is_reno_below_low_window() {
        // Linux low_window = 14: at or below it +1 per RTT and halving on loss.
        let mut s = after_loss_at(12);
        assert_eq!(s.window(), 6 * MSS as u64);
        s.run_rounds(3);
        assert_eq!(s.window(), 9 * MSS as u64);
    }

    #[test]
    fn bic_grows_at_least_cwnd_over_20_before_any_loss() {
        // Linux start-up rule: with no W_max, at least cwnd/20 per RTT in congestion avoidance.
        let mut s = sender(100);
        s.send_window();
        s.rto(); // ssthresh = 80, W_max forgotten
        assert_eq!(s.cc.w_max_pkts(), 0.0);
        assert_eq!(s.cc.ssthresh(), 79 * MSS as u64);
        assert_eq!(s.window(), MSS as u64);
        assert!((s.cc.increase_per_rtt(400.0) - 20.0).abs() < 1e-12);
        // Control: once W_max is set the same window above it gets S_max = 16.
        let s = after_loss_at(100);
        assert_eq!(s.cc.increase_per_rtt(400.0), 16.0);
    }

    #[test]
    fn bic_no_growth_when_app_limited_or_in_recovery() {
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

    #[test]
    fn bic_spurious_undo_restores_window_and_w_max() {
        // RFC 3522 / RFC 4015.
        let mut s = after_loss_at(100);
        s.send_window();
        let w = s.window();
        s.lose_n(1);
        s.spurious();
        assert_eq!(s.window(), w);
        assert_eq!(s.cc.w_max_pkts(), 100.0);
    }
}
