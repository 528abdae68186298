//! HighSpeed TCP (S. Floyd, RFC 3649, "HighSpeed TCP for Large Congestion Windows", December
//! 2003).
//!
//! Above `Low_Window` segments, congestion avoidance uses a window-dependent increase `a(w)`
//! and decrease `b(w)` (RFC 3649 §5):
//! - per ACK: `w ← w + a(w)/w` segments; on a congestion event: `w ← (1 − b(w))·w`;
//! - `b(w) = (High_Decrease − 0.5)·(log w − log Low_Window)/(log High_Window − log Low_Window)
//!   + 0.5`;
//! - `a(w) = w²·p(w)·2·b(w)/(2 − b(w))`, where `p(w)` is the HighSpeed response function
//!   (§5): the straight line on log-log scales through `(Low_P, Low_Window)` and
//!   `(High_P, High_Window)`, i.e.
//!   `log p(w) = log Low_P + (log w − log Low_Window)/(log High_Window − log Low_Window)·(log High_P − log Low_P)`.
//!
//! At or below `Low_Window` the rules are standard TCP (RFC 3649 §5: `a = 1`, `b = 0.5`; RFC
//! 5681). Slow start is RFC 5681 §3.1 with RFC 3465 ABC (RFC 3649 leaves it unchanged; Limited
//! Slow-Start, RFC 3742, is not implemented).
//!
//! **Response table** (RFC 3649 Appendix B; Linux `hstcp_aimd_vals`): `a(w)` and `b(w)` are
//! looked up in a table rather than computed per ACK. [`HighSpeed::new`] builds it from the
//! formulas above: one row per integer `a = 1, 2, …`, starting at the smallest integer window `w`
//! (segments) where `a(w) ≥ a`, with `b` taken as `b(w)` at that row's window. The window used for
//! lookup is the row with the largest start window ≤ cwnd. The RFC's printed rows (38/1/0.50,
//! 118/2/0.44, 221/3/0.41, 347/4/0.38, …) start a few segments later than this rule gives
//! (116, 217, 340, …) but have the same `a` and `b` to the table's two decimals at those
//! windows; the unit tests check both.
//!
//! Units: cwnd and ssthresh are bytes; the response function works in segments.

use celltcp_engine::SimTime;

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// HighSpeed TCP parameters (RFC 3649 §5).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HighSpeedConfig {
    /// `Low_Window`, segments (≥ 1): standard TCP at or below it. RFC 3649 §5: 38.
    pub low_window_pkts: f64,
    /// `High_Window`, segments (> `low_window_pkts`). RFC 3649 §5: 83000.
    pub high_window_pkts: f64,
    /// `Low_P`, the loss rate at `Low_Window`, in (0, 1). RFC 3649 §5: 10⁻³ (standard TCP's
    /// `w = 1.2/sqrt(p)` gives 38 segments there).
    pub low_p: f64,
    /// `High_P`, the loss rate at `High_Window`, in (0, `low_p`). RFC 3649 §5: 10⁻⁷.
    pub high_p: f64,
    /// `High_Decrease`, `b(High_Window)`, in (0, 0.5]. RFC 3649 §5: 0.1.
    pub high_decrease: f64,
    /// Appropriate Byte Counting limit L in segments per ACK during slow start (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for HighSpeedConfig {
    fn default() -> Self {
        HighSpeedConfig {
            low_window_pkts: 38.0,
            high_window_pkts: 83000.0,
            low_p: 1e-3,
            high_p: 1e-7,
            high_decrease: 0.1,
            abc_limit_segments: 2,
        }
    }
}

impl HighSpeedConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "low_window_pkts",
            self.low_window_pkts,
            self.low_window_pkts >= 1.0,
            "at least 1 segment (RFC 3649: 38)",
        )?;
        check(
            "high_window_pkts",
            self.high_window_pkts,
            self.high_window_pkts > self.low_window_pkts && self.high_window_pkts.is_finite(),
            "more segments than low_window_pkts (RFC 3649: 83000)",
        )?;
        check(
            "low_p",
            self.low_p,
            unit_open(self.low_p),
            "a loss rate in (0, 1) (RFC 3649: 1e-3)",
        )?;
        check(
            "high_p",
            self.high_p,
            self.high_p > 0.0 && self.high_p < self.low_p,
            "a loss rate in (0, low_p) (RFC 3649: 1e-7)",
        )?;
        check(
            "high_decrease",
            self.high_decrease,
            self.high_decrease > 0.0 && self.high_decrease <= 0.5,
            "a value in (0, 0.5] (RFC 3649: 0.1)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

impl HighSpeedConfig {
    /// Position of `w` between Low_Window and High_Window on a log scale (0 at Low_Window).
    fn log_frac(&self, w: f64) -> f64 {
        (w.ln() - self.low_window_pkts.ln())
            / (self.high_window_pkts.ln() - self.low_window_pkts.ln())
    }

    /// RFC 3649 §5: `b(w)`.
    pub fn b_formula(&self, w_pkts: f64) -> f64 {
        (self.high_decrease - 0.5) * self.log_frac(w_pkts) + 0.5
    }

    /// RFC 3649 §5: the response function's loss rate `p(w)`.
    pub fn p_formula(&self, w_pkts: f64) -> f64 {
        (self.low_p.ln() + self.log_frac(w_pkts) * (self.high_p.ln() - self.low_p.ln())).exp()
    }

    /// RFC 3649 §5: `a(w) = w²·p(w)·2·b(w)/(2 − b(w))`.
    pub fn a_formula(&self, w_pkts: f64) -> f64 {
        let b = self.b_formula(w_pkts);
        w_pkts * w_pkts * self.p_formula(w_pkts) * 2.0 * b / (2.0 - b)
    }
}

/// One response-table row (RFC 3649 Appendix B): from `w_pkts` up, increase by `a` segments
/// per RTT and decrease by the fraction `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HighSpeedRow {
    pub w_pkts: u64,
    pub a: f64,
    pub b: f64,
}

#[derive(Clone, Debug)]
pub struct HighSpeed {
    cfg: HighSpeedConfig,
    mss: u64,
    table: Vec<HighSpeedRow>,
    /// cwnd in bytes, fractional so that `a(w)/w` per ACK accumulates.
    cwnd: f64,
    ssthresh: u64,
    /// Bytes acknowledged in standard (below Low_Window) congestion avoidance not yet turned
    /// into window (RFC 3465 §2.1 byte counting).
    ca_acked: u64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(f64, u64)>,
}

impl HighSpeed {
    pub fn new(cfg: HighSpeedConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        HighSpeed {
            table: Self::build_table(&cfg),
            cfg,
            mss,
            cwnd: (initial_cwnd_pkts as u64 * mss) as f64,
            ssthresh: u64::MAX,
            ca_acked: 0,
            loss: LossWindow::default(),
        }
    }

    /// RFC 3649 Appendix B: one row per integer `a(w)` from Low_Window (a = 1, b = 0.5) to
    /// High_Window.
    fn build_table(cfg: &HighSpeedConfig) -> Vec<HighSpeedRow> {
        let lw = cfg.low_window_pkts.ceil().max(1.0) as u64;
        let hw = cfg.high_window_pkts.floor() as u64;
        let mut table = vec![HighSpeedRow {
            w_pkts: lw,
            a: 1.0,
            b: 0.5,
        }];
        let mut next_a = 2.0;
        let mut w = lw + 1;
        while w <= hw {
            if cfg.a_formula(w as f64) >= next_a {
                table.push(HighSpeedRow {
                    w_pkts: w,
                    a: next_a,
                    b: cfg.b_formula(w as f64),
                });
                next_a += 1.0;
            } else {
                w += 1;
            }
        }
        table
    }

    /// The response table built at construction.
    pub fn table(&self) -> &[HighSpeedRow] {
        &self.table
    }

    /// `(a(w), b(w))` for a window of `w_pkts` segments: standard TCP (1, 0.5) at or below
    /// Low_Window (RFC 3649 §5), otherwise the table row covering `w_pkts`.
    pub fn response(&self, w_pkts: f64) -> (f64, f64) {
        if w_pkts <= self.cfg.low_window_pkts {
            return (1.0, 0.5);
        }
        let i = self.table.partition_point(|r| r.w_pkts as f64 <= w_pkts);
        let r = self.table[i.saturating_sub(1)];
        (r.a, r.b)
    }

    fn w_pkts(&self) -> f64 {
        self.cwnd / self.mss as f64
    }

    fn reduce(&mut self, flight: u64) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh));
        let w = self.w_pkts();
        if w <= self.cfg.low_window_pkts {
            // RFC 5681 eq. 4.
            ssthresh_floor(flight / 2, self.mss)
        } else {
            // RFC 3649 §5: w ← (1 − b(w))·w.
            let (_, b) = self.response(w);
            ssthresh_floor((self.cwnd * (1.0 - b)) as u64, self.mss)
        }
    }
}

impl Controller for HighSpeed {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if (self.cwnd as u64) < self.ssthresh {
            // RFC 5681 §3.1 eq. 2 with RFC 3465 ABC.
            let inc = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss);
            self.cwnd = (self.cwnd + inc as f64).min((self.ssthresh as f64).max(self.cwnd));
            self.ca_acked = 0;
        } else if self.w_pkts() > self.cfg.low_window_pkts {
            // RFC 3649 §5: w += a(w)/w per acknowledged segment (byte-counted).
            let (a, _) = self.response(self.w_pkts());
            self.cwnd += a * self.mss as f64 * ack.acked_bytes as f64 / self.cwnd;
        } else {
            // Standard TCP: RFC 5681 §3.1, +1 SMSS per cwnd acknowledged.
            self.ca_acked += ack.acked_bytes;
            if self.ca_acked as f64 >= self.cwnd {
                self.ca_acked -= self.cwnd as u64;
                self.cwnd += self.mss as f64;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, ev: &CongestionEvent) {
        self.ssthresh = self.reduce(ev.bytes_in_flight);
        self.cwnd = self.ssthresh as f64;
        self.ca_acked = 0;
    }

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1: LW = 1 SMSS; ssthresh by the decrease rule, held on a repeated timeout.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reduce(bytes_in_flight);
        }
        self.cwnd = loss_window(self.mss) as f64;
        self.ca_acked = 0;
    }

    fn on_spurious(&mut self, _now: SimTime) {
        if let Some((cwnd, ssthresh)) = self.loss.saved() {
            self.cwnd = undo_cwnd(self.cwnd, cwnd);
            self.ssthresh = ssthresh;
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
    use celltcp_engine::SimDuration;

    use super::*;
    use crate::cc::test_sender::TestSender;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const RTT: SimDuration = SimDuration::from_millis(100);

    fn hs(iw: u32) -> HighSpeed {
        HighSpeed::new(HighSpeedConfig::default(), MSS, iw)
    }

    fn sender(iw: u32) -> TestSender<HighSpeed> {
        TestSender::new(hs(iw), MSS, RTT)
    }

    /// RFC 3649 §5 formulas written out independently of the implementation.
    fn rfc_b(w: f64) -> f64 {
        let f = (w.ln() - 38f64.ln()) / (83000f64.ln() - 38f64.ln());
        (0.1 - 0.5) * f + 0.5
    }
    fn rfc_a(w: f64) -> f64 {
        let f = (w.ln() - 38f64.ln()) / (83000f64.ln() - 38f64.ln());
        let p = (1e-3f64.ln() + f * (1e-7f64.ln() - 1e-3f64.ln())).exp();
        let b = rfc_b(w);
        w * w * p * 2.0 * b / (2.0 - b)
    }

    #[test]
    fn highspeed_a_and_b_follow_rfc3649_table_at_several_windows() {
        // RFC 3649 §5 / Appendix B: the table gives a(w) = floor of the formula's a(w) (one row
        // per integer a) and b(w) from the formula at the row's start window w0 (the smallest
        // window whose formula a reaches that integer), so b(w0) ≥ b(w) slightly.
        let c = hs(10);
        for w in [39.0, 100.0, 118.0, 500.0, 1058.0, 5000.0, 20000.0, 83000.0] {
            let (a, b) = c.response(w);
            let a_int = rfc_a(w).floor().max(1.0);
            assert_eq!(a, a_int, "a({w})");
            let b_row = if a_int <= 1.0 {
                0.5
            } else {
                let w0 = (38u64..).find(|&x| rfc_a(x as f64) >= a_int).unwrap();
                rfc_b(w0 as f64)
            };
            assert!((b - b_row).abs() < 1e-9, "b({w}) = {b} vs {b_row}");
            assert!(b >= rfc_b(w) - 1e-9 && b - rfc_b(w) < 0.06, "b({w}) = {b}");
        }
        // Rows of RFC 3649 Appendix B's printed table: (w, a(w), b(w)).
        for (w, a_rfc, b_rfc) in [
            (38.0, 1.0, 0.50),
            (118.0, 2.0, 0.44),
            (221.0, 3.0, 0.41),
            (347.0, 4.0, 0.38),
            (495.0, 5.0, 0.37),
            (663.0, 6.0, 0.35),
            (851.0, 7.0, 0.34),
            (1058.0, 8.0, 0.33),
        ] {
            let (a, b) = c.response(w);
            assert_eq!(a, a_rfc, "a({w})");
            assert!((b - b_rfc).abs() <= 0.01, "b({w}) = {b} vs RFC {b_rfc}");
        }
        // The table ends near High_Window with b = High_Decrease and a(83000) ≈ 72 (§5).
        let last = *c.table().last().unwrap();
        assert_eq!(last.a, 72.0);
        assert!((c.response(83000.0).1 - 0.1).abs() < 0.005);
    }

    #[test]
    fn highspeed_reno_at_or_below_low_window() {
        // RFC 3649 §5: at or below Low_Window = 38 segments HighSpeed TCP is standard TCP:
        // halve on loss, +1 SMSS per RTT.
        let mut s = sender(30);
        s.send_window();
        s.congestion_event();
        assert_eq!(s.window(), 15 * M);
        s.ack_all();
        s.exit_recovery();
        for want in 16u64..=19 {
            s.run_rounds(1);
            assert_eq!(s.window(), want * M);
        }
    }

    #[test]
    fn highspeed_ca_adds_a_w_over_w_per_ack() {
        // RFC 3649 §5: above Low_Window, w += a(w)/w segments per ACK.
        let mut s = sender(2000);
        s.send_window();
        s.congestion_event();
        s.ack_all();
        s.exit_recovery();
        let w0 = s.window() as f64;
        let (a, _) = s.cc.response(w0 / M as f64);
        assert!(a >= 9.0, "{a}");
        s.send_window();
        s.advance(RTT);
        s.ack_n(1);
        let want = w0 + a * (M as f64) * (M as f64) / w0;
        assert!(
            (s.window() as f64 - want).abs() <= 1.0,
            "{} vs {want}",
            s.window()
        );
    }

    #[test]
    fn highspeed_decrease_is_b_w() {
        // RFC 3649 §5: on a congestion event w ← (1 − b(w))·w; b(2000) ≈ 0.30 by the formula.
        let mut s = sender(2000);
        s.send_window();
        s.lose_n(1);
        let (_, b) = hs(10).response(2000.0);
        assert!((b - rfc_b(2000.0)).abs() < 0.01);
        assert_eq!(s.window(), (2000.0 * M as f64 * (1.0 - b)) as u64);
        assert_eq!(s.cc.ssthresh(), s.window());
    }

    #[test]
    fn highspeed_rto_sets_loss_window() {
        // RFC 5681 §3.1: cwnd = 1 SMSS after a timeout.
        let mut s = sender(2000);
        s.send_window();
        s.rto();
        assert_eq!(s.window(), M);
        let (_, b) = hs(10).response(2000.0);
        assert_eq!(s.cc.ssthresh(), (2000.0 * M as f64 * (1.0 - b)) as u64);
    }

    #[test]
    fn highspeed_no_growth_in_recovery_or_app_limited() {
        // RFC 5681 §3.2 / RFC 7661: no growth in recovery or while app-limited.
        let mut s = sender(200);
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
