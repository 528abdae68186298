//! YeAH-TCP, "Yet Another Highspeed TCP" (A. Baiocchi, A. P. Castellani and F. Vacirca, PFLDnet
//! 2007), with the constants of Linux `net/ipv4/tcp_yeah.c` as the reference values.
//!
//! Rules (paper §3), in segments:
//! - Once per round, from the minimum RTT of the round `RTT_min` and the smallest RTT ever seen
//!   `RTT_base`: the queue estimate `Q = cwnd·(RTT_min − RTT_base)/RTT_min` and the queueing delay
//!   ratio `L = (RTT_min − RTT_base)/RTT_base`. A round ends when the data outstanding at its start
//!   is delivered, counted in delivered bytes ([`super::round`]: counting bytes *sent*, as this
//!   controller did, stretched every later round by each retransmission, so after losses the
//!   mode was decided once per several RTTs), and is used only with at least 3 RTT samples
//!   (Linux's Vegas rule).
//! - **Fast mode** (`Q < Q_max = 80` and `L < φ = 1/8`): Scalable TCP growth, +1 segment per
//!   `min(cwnd, 100)` acknowledged segments (≈ 1 % per RTT for large windows).
//! - **Slow mode** (otherwise): Reno growth, +1 segment per RTT; and if `Q > Q_max`,
//!   **decongestion**: `cwnd ← cwnd − min(Q/γ, cwnd/2^ε)` (γ = 1, ε = 1), never below
//!   `reno_count`, and ssthresh = cwnd — the flow drains the queue it built.
//! - `reno_count` estimates a competing Reno flow's window: set to `cwnd/2` on the first slow
//!   round, +1 per further slow round, halved on loss, and reset to 2 after `ζ = 50` fast rounds.
//! - **Loss**: if the flow has been in slow mode for fewer than `ρ = 16` consecutive rounds (no
//!   competing Reno traffic inferred) the reduction is the queue it estimated, bounded to
//!   `[cwnd/2^δ, cwnd/2]` with δ = 3 (at least cwnd/8); otherwise Reno's halving.
//!   `cwnd = ssthresh = cwnd − reduction` (floor 2 MSS).
//! - **Timeout**: ssthresh by the loss rule, cwnd = 1 MSS (RFC 5681 §3.1).
//!
//! Slow start below ssthresh is Reno's (RFC 5681 §3.1, RFC 3465 ABC).

use celltcp_engine::{SimDuration, SimTime};

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::round::{RoundCounter, RoundEvent};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// YeAH parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct YeahConfig {
    /// Q_max, segments, > 0: the largest queue the flow keeps at the bottleneck (Linux
    /// `TCP_YEAH_ALPHA`: 80).
    pub q_max_pkts: f64,
    /// φ, > 0: the queueing-delay-to-base-RTT ratio above which the flow is in slow mode (Linux
    /// `1/TCP_YEAH_PHY`: 1/8).
    pub phi: f64,
    /// γ ≥ 1: decongestion removes Q/γ segments (Linux `TCP_YEAH_GAMMA`: 1).
    pub gamma: f64,
    /// ε: decongestion removes at most cwnd/2^ε (Linux `TCP_YEAH_EPSILON`: 1).
    pub epsilon: u32,
    /// δ: a loss removes at least cwnd/2^δ (Linux `TCP_YEAH_DELTA`: 3).
    pub delta: u32,
    /// ρ, rounds: consecutive slow rounds after which a loss halves (Linux `TCP_YEAH_RHO`: 16).
    pub rho: u32,
    /// ζ, rounds: fast rounds after which `reno_count` resets (Linux `TCP_YEAH_ZETA`: 50).
    pub zeta: u32,
    /// Scalable TCP: +1 segment per `min(cwnd, this)` acknowledged segments (Linux
    /// `TCP_SCALABLE_AI_CNT`: 100).
    pub stcp_ai_cnt: f64,
    /// Appropriate Byte Counting limit in slow start, segments per ACK (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for YeahConfig {
    fn default() -> Self {
        YeahConfig {
            q_max_pkts: 80.0,
            phi: 0.125,
            gamma: 1.0,
            epsilon: 1,
            delta: 3,
            rho: 16,
            zeta: 50,
            stcp_ai_cnt: 100.0,
            abc_limit_segments: 2,
        }
    }
}

impl YeahConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "q_max_pkts",
            self.q_max_pkts,
            self.q_max_pkts > 0.0 && self.q_max_pkts.is_finite(),
            "a positive number of segments (Linux: 80)",
        )?;
        check(
            "phi",
            self.phi,
            self.phi > 0.0 && self.phi.is_finite(),
            "a positive ratio (Linux: 1/8)",
        )?;
        check(
            "gamma",
            self.gamma,
            self.gamma >= 1.0 && self.gamma.is_finite(),
            "at least 1 (Linux: 1)",
        )?;
        check(
            "epsilon",
            self.epsilon,
            self.epsilon < 32,
            "a shift below 32 (Linux: 1)",
        )?;
        check(
            "delta",
            self.delta,
            self.delta < 32,
            "a shift below 32 (Linux: 3)",
        )?;
        check(
            "stcp_ai_cnt",
            self.stcp_ai_cnt,
            self.stcp_ai_cnt >= 1.0 && self.stcp_ai_cnt.is_finite(),
            "at least 1 segment (Linux: 100)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct Yeah {
    cfg: YeahConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    base_rtt: Option<SimDuration>,
    round_min_rtt: Option<SimDuration>,
    round_samples: u32,
    /// Packet-timed rounds in delivered bytes (module doc).
    rounds: RoundCounter,
    /// Q of the last usable round, segments.
    last_q: f64,
    /// Consecutive slow rounds (0: fast mode).
    doing_reno_now: u32,
    /// Segments; the floor of decongestion.
    reno_count: f64,
    fast_count: u32,
    frac: f64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(u64, u64)>,
}

impl Yeah {
    pub fn new(cfg: YeahConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Yeah {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts.max(1) as u64 * mss,
            ssthresh: u64::MAX,
            base_rtt: None,
            round_min_rtt: None,
            round_samples: 0,
            rounds: RoundCounter::new(),
            last_q: 0.0,
            doing_reno_now: 0,
            reno_count: 2.0,
            fast_count: 0,
            frac: 0.0,
            loss: LossWindow::default(),
        }
    }

    /// The queue estimate Q of the last round, segments.
    pub fn queue_pkts(&self) -> f64 {
        self.last_q
    }

    /// True in fast (Scalable) mode.
    pub fn fast_mode(&self) -> bool {
        self.doing_reno_now == 0
    }

    /// Consecutive rounds in slow mode.
    pub fn slow_rounds(&self) -> u32 {
        self.doing_reno_now
    }

    fn pkts(&self) -> f64 {
        self.cwnd as f64 / self.mss as f64
    }

    fn end_of_round(&mut self) {
        if let (Some(base), Some(rtt), true) =
            (self.base_rtt, self.round_min_rtt, self.round_samples > 2)
        {
            let (base, rtt) = (base.as_secs_f64(), rtt.as_secs_f64().max(1e-9));
            let w = self.pkts();
            let q = w * (rtt - base) / rtt;
            if q > self.cfg.q_max_pkts || rtt - base > base * self.cfg.phi {
                // Slow mode; decongestion when the queue exceeds Q_max.
                if q > self.cfg.q_max_pkts && w > self.reno_count {
                    let cut = (q / self.cfg.gamma).min(w / 2f64.powi(self.cfg.epsilon as i32));
                    let new_w = (w - cut).max(self.reno_count);
                    self.cwnd = (new_w.floor() as u64).max(2) * self.mss;
                    self.ssthresh = self.cwnd;
                    self.frac = 0.0;
                }
                if self.reno_count <= 2.0 {
                    self.reno_count = (self.pkts() / 2.0).max(2.0);
                } else {
                    self.reno_count += 1.0;
                }
                self.doing_reno_now = self.doing_reno_now.saturating_add(1);
            } else {
                self.fast_count += 1;
                if self.fast_count > self.cfg.zeta {
                    self.reno_count = 2.0;
                    self.fast_count = 0;
                }
                self.doing_reno_now = 0;
            }
            self.last_q = q;
        }
        self.round_min_rtt = None;
        self.round_samples = 0;
    }

    fn grow(&mut self, ack: &Ack) {
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
        let acked_pkts = ack.acked_bytes as f64 / self.mss as f64;
        let w = self.pkts();
        // Fast mode: STCP, +1 per min(cwnd, 100) segments; slow mode: Reno, +1 per cwnd. Whole
        // segments, as Linux.
        let per = if self.fast_mode() {
            w.min(self.cfg.stcp_ai_cnt)
        } else {
            w
        };
        self.frac += acked_pkts / per.max(1.0);
        let add = (self.frac + 1e-9).floor(); // 1e-9: float sums of 1/w
        self.frac -= add;
        self.cwnd += add as u64 * self.mss;
    }

    fn reduce(&mut self) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh));
        let w = self.pkts();
        let half = (w / 2.0).max(2.0);
        let cut = if self.doing_reno_now < self.cfg.rho {
            // No competing Reno flow inferred: remove the estimated queue, within
            // [cwnd/2^δ, cwnd/2].
            self.last_q
                .min(half)
                .max(w / 2f64.powi(self.cfg.delta as i32))
        } else {
            half
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count / 2.0).max(2.0);
        // Whole segments, as Linux; floor 2 (RFC 5681 eq. 4).
        ssthresh_floor((w - cut).floor() as u64 * self.mss, self.mss)
    }
}

impl Controller for Yeah {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if let Some(rtt) = ack.rtt {
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
            self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.round_samples += 1;
        }
        self.grow(ack);
        // Linux checks the round after the growth, from cong_avoid (so not during recovery).
        if let RoundEvent::Ended { .. } = self.rounds.on_ack(ack) {
            if !ack.in_recovery {
                self.end_of_round();
            } else {
                self.round_min_rtt = None;
                self.round_samples = 0;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, _ev: &CongestionEvent) {
        self.ssthresh = self.reduce();
        self.cwnd = self.ssthresh;
        self.frac = 0.0;
    }

    fn on_rto(&mut self, _now: SimTime, _bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1: LW = 1 SMSS; a repeated timeout holds ssthresh.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reduce();
        }
        self.cwnd = loss_window(self.mss);
        self.frac = 0.0;
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

    fn sender(iw: u32) -> TestSender<Yeah> {
        TestSender::new(Yeah::new(YeahConfig::default(), MSS, iw), MSS, RTT)
    }

    /// Congestion avoidance from cwnd = ssthresh = `pkts`, BaseRTT = RTT, after two rounds.
    fn in_ca(pkts: u64) -> TestSender<Yeah> {
        let mut s = sender(pkts as u32);
        s.cc.ssthresh = pkts * MSS as u64;
        s.run_rounds(2);
        s
    }

    /// ⌊w·7/8⌋ segments of a window of `w` bytes: the loss cut at Q = 0 (cwnd/8).
    fn seven_eighths(w: u64) -> u64 {
        w / MSS as u64 * 7 / 8 * MSS as u64
    }

    #[test]
    fn yeah_fast_mode_grows_like_scalable_tcp() {
        // Paper §3 fast mode: no queue → STCP, +1 segment per 100 acknowledged (1 % per RTT).
        let mut s = in_ca(300);
        assert!(s.cc.fast_mode());
        let w0 = s.window_pkts();
        s.run_rounds(10);
        let want = w0 * 1.01f64.powi(10);
        assert!(
            (s.window_pkts() - want).abs() < 2.0,
            "{} vs {want}",
            s.window_pkts()
        );
    }

    #[test]
    fn yeah_slow_mode_grows_like_reno() {
        // Paper §3: queueing delay above φ·RTT_base (here the RTT doubles, Q = cwnd/2 < Q_max)
        // → slow mode, Reno's +1 segment per RTT.
        let mut s = in_ca(60);
        s.set_rtt(RTT * 2);
        s.run_rounds(3);
        assert!(!s.cc.fast_mode());
        let w0 = s.window_pkts();
        s.run_rounds(6);
        let grew = s.window_pkts() - w0;
        assert!((grew - 6.0).abs() < 0.8, "grew {grew}");
    }

    #[test]
    fn yeah_small_delay_stays_fast() {
        // Paper §3: L = 0.1 < φ = 1/8 and Q = cwnd·0.1/1.1 < Q_max → still fast mode.
        let mut s = in_ca(100);
        s.set_rtt(SimDuration::from_millis(110));
        s.run_rounds(3);
        assert!(s.cc.fast_mode());
        assert!(s.cc.queue_pkts() > 8.0 && s.cc.queue_pkts() < 10.0);
    }

    #[test]
    fn yeah_decongestion_removes_the_estimated_queue() {
        // Paper §3: Q > Q_max → cwnd −= min(Q/γ, cwnd/2) and ssthresh = cwnd. cwnd = 300 at
        // twice the base RTT: Q = 150 > 80, the cut is min(150, 150) = half; at 1.5× base RTT:
        // Q = 100, the cut is Q.
        let mut s = in_ca(300);
        s.set_rtt(SimDuration::from_millis(150));
        let mut w_before = s.window_pkts();
        let mut rounds = 0;
        while s.cc.fast_mode() {
            w_before = s.window_pkts();
            s.run_rounds(1);
            rounds += 1;
            assert!(rounds < 5);
        }
        let q = s.cc.queue_pkts();
        assert!(q > 80.0, "Q {q}");
        let w = s.window_pkts();
        assert!((w - (w_before - q)).abs() < 4.0, "{w_before} − {q} vs {w}");
        // ssthresh = cwnd at the cut (later ACKs of the round may have grown cwnd since).
        let ss = s.cc.ssthresh() as f64 / MSS as f64;
        assert!(
            (ss - (w_before - q)).abs() < 4.0 && ss <= w,
            "ssthresh {ss}"
        );
    }

    #[test]
    fn yeah_loss_removes_the_queue_within_an_eighth_and_a_half() {
        // Paper §3 loss rule (fewer than ρ slow rounds): reduction = Q bounded to
        // [cwnd/8, cwnd/2].
        // Q = 0: the floor cwnd/8.
        let mut s = in_ca(100);
        let w = s.window();
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.window(), seven_eighths(w));
        // Q = 40 of 100 (RTT 5/3 of base): the queue.
        let mut s = in_ca(100);
        s.set_rtt(SimDuration::from_nanos(166_666_667));
        s.run_rounds(3);
        let (w, q) = (s.window_pkts(), s.cc.queue_pkts());
        assert!(q > 30.0 && q < w / 2.0, "{q} {w}");
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.window_pkts(), (w - q).floor(), "w {w} q {q}");
        // Q = 75 of 100 (RTT 4× base, below Q_max so no decongestion): the cap cwnd/2.
        let mut s = in_ca(100);
        s.set_rtt(RTT * 4);
        s.run_rounds(3);
        let w = s.window();
        assert!(s.cc.queue_pkts() > w as f64 / 2000.0);
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.window(), w / MSS as u64 / 2 * MSS as u64);
    }

    #[test]
    fn yeah_loss_halves_after_rho_slow_rounds() {
        // Paper §3: after ρ = 16 consecutive slow rounds a competing Reno flow is assumed and a
        // loss halves. L = 0.2 > φ, Q = cwnd/6 ≈ 8: before ρ rounds the cut would be cwnd/8.
        let mut s = in_ca(50);
        s.set_rtt(SimDuration::from_millis(120));
        s.run_rounds(20);
        assert!(s.cc.slow_rounds() >= 16, "{}", s.cc.slow_rounds());
        let w = s.window();
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.window(), w / MSS as u64 / 2 * MSS as u64);
    }

    #[test]
    fn yeah_decides_the_mode_once_per_rtt_after_retransmissions() {
        // Paper §3: the fast/slow decision is taken once per RTT, so with a standing queueing
        // delay above φ the count of consecutive slow rounds (which ρ is compared with) grows
        // by one per RTT. Regression: a round ended when the bytes *sent* by its start were
        // delivered; a retransmitted segment is sent twice but delivered once, so each loss
        // lengthened every later round by the bytes lost (here 30 segments: rounds of almost two
        // RTTs, and ρ = 16 slow rounds took 30 RTTs).
        let mut s = in_ca(60);
        s.set_rtt(SimDuration::from_millis(120)); // L = 0.2 > φ, Q = cwnd/6 < Q_max
        s.run_rounds(3);
        assert!(!s.cc.fast_mode());
        s.lose_n(30);
        s.send(30); // their retransmissions
        s.run_rounds(2); // recovery: rounds ending in it are not used (Linux)
        let r0 = s.cc.slow_rounds();
        s.run_rounds(10);
        let r = s.cc.slow_rounds() - r0;
        assert!((9..=11).contains(&r), "{r} slow rounds in 10 RTTs");
    }

    #[test]
    fn yeah_rto_sets_one_mss() {
        // RFC 5681 §3.1; ssthresh by the loss rule (Q = 0: cwnd − cwnd/8).
        let mut s = in_ca(80);
        let w = s.window();
        s.send_window();
        s.rto();
        assert_eq!(s.window(), MSS as u64);
        assert_eq!(s.cc.ssthresh(), seven_eighths(w));
    }

    #[test]
    fn yeah_no_growth_when_app_limited_or_in_recovery() {
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
