//! Scalable TCP (T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
//! Networks", ACM SIGCOMM CCR 33(2), April 2003).
//!
//! Kelly §2 replaces Reno's congestion-avoidance rules by multiplicative-increase /
//! multiplicative-decrease:
//! - for each acknowledged segment in congestion avoidance, `cwnd ← cwnd + a` segments, with
//!   `a = 0.01` (so cwnd grows by about 1 % per RTT, independent of the window);
//! - on a congestion event, `cwnd ← cwnd − b·cwnd`, with `b = 0.125`.
//!
//! **Legacy window** (Kelly §2, "lwnd"): below `lwnd` segments the flow behaves exactly as
//! standard TCP (Reno increase of one segment per RTT, halving on loss), so Scalable TCP is no
//! more aggressive than Reno on low-bandwidth paths. Kelly's paper and the Linux implementation
//! use `lwnd = 16` segments; the switch is made on the current cwnd.
//!
//! Slow start is unchanged (RFC 5681 §3.1 with RFC 3465 ABC, as in [`super::newreno`]); the loss
//! window after a timeout is 1 SMSS (RFC 5681 §3.1 eq. 4), with ssthresh from the same
//! decrease rule as a congestion event.
//!
//! Units: cwnd and ssthresh are bytes; `a` and `b` are dimensionless.

use celltcp_engine::SimTime;

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// Scalable TCP parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScalableConfig {
    /// Additive increase per acknowledged segment in congestion avoidance, in segments, in
    /// (0, 1). Kelly 2003 §2: `a = 0.01`.
    pub a: f64,
    /// Multiplicative decrease on a congestion event, in (0, 1). Kelly 2003 §2: `b = 0.125`.
    pub b: f64,
    /// Legacy window in segments (≥ 0): at or below it the flow uses standard Reno rules.
    /// Kelly 2003 §2 / Linux `TCP_SCALABLE_LOW_WINDOW`: 16.
    pub legacy_window_pkts: u32,
    /// Appropriate Byte Counting limit L in segments per ACK during slow start (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for ScalableConfig {
    fn default() -> Self {
        ScalableConfig {
            a: 0.01,
            b: 0.125,
            legacy_window_pkts: 16,
            abc_limit_segments: 2,
        }
    }
}

impl ScalableConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "a",
            self.a,
            unit_open(self.a),
            "a value in (0, 1) segments (Kelly 2003: 0.01)",
        )?;
        check(
            "b",
            self.b,
            unit_open(self.b),
            "a value in (0, 1) (Kelly 2003: 0.125)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct Scalable {
    cfg: ScalableConfig,
    mss: u64,
    /// cwnd in bytes, fractional so that `a·SMSS` per ACK accumulates exactly.
    cwnd: f64,
    ssthresh: u64,
    /// Bytes acknowledged in Reno (legacy) congestion avoidance not yet turned into window.
    ca_acked: u64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(f64, u64)>,
}

impl Scalable {
    pub fn new(cfg: ScalableConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Scalable {
            cfg,
            mss,
            cwnd: (initial_cwnd_pkts as u64 * mss) as f64,
            ssthresh: u64::MAX,
            ca_acked: 0,
            loss: LossWindow::default(),
        }
    }

    fn legacy_bytes(&self) -> f64 {
        (self.cfg.legacy_window_pkts as u64 * self.mss) as f64
    }

    /// The new ssthresh on a congestion event or timeout.
    fn reduce(&mut self, flight: u64) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh));
        if self.cwnd > self.legacy_bytes() {
            // Kelly 2003 §2: cwnd ← cwnd − b·cwnd.
            ssthresh_floor((self.cwnd * (1.0 - self.cfg.b)) as u64, self.mss)
        } else {
            // Legacy window: RFC 5681 eq. 4, ssthresh = max(FlightSize / 2, 2*SMSS).
            ssthresh_floor(flight / 2, self.mss)
        }
    }
}

impl Controller for Scalable {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if (self.cwnd as u64) < self.ssthresh {
            // Slow start as NewReno: RFC 5681 §3.1 eq. 2 with RFC 3465 ABC.
            let inc = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss);
            self.cwnd = (self.cwnd + inc as f64).min((self.ssthresh as f64).max(self.cwnd));
            self.ca_acked = 0;
        } else if self.cwnd > self.legacy_bytes() {
            // Kelly 2003 §2: cwnd += a segments per acknowledged segment (byte-counted).
            self.cwnd += self.cfg.a * ack.acked_bytes as f64;
        } else {
            // Legacy window: RFC 5681 §3.1, +1 SMSS per cwnd of bytes acknowledged.
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
        // RFC 5681 §3.1: LW = 1 SMSS; a repeated timeout before new data is acknowledged holds
        // ssthresh (note on eq. 4).
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

    fn sender(iw: u32) -> TestSender<Scalable> {
        TestSender::new(Scalable::new(ScalableConfig::default(), MSS, iw), MSS, RTT)
    }

    #[test]
    fn scalable_adds_0_01_per_ack_and_cuts_by_0_125() {
        // Kelly 2003 §2: above lwnd, cwnd += 0.01 segment per ACKed segment in congestion
        // avoidance, and cwnd -= 0.125·cwnd on a congestion event.
        let mut s = sender(160);
        s.send_window();
        s.congestion_event(); // 160 * (1 - 0.125) = 140 segments
        assert_eq!(s.window(), 140 * M);
        assert_eq!(s.cc.ssthresh(), 140 * M);
        s.ack_all();
        s.exit_recovery();
        s.send_window();
        s.advance(RTT);
        s.ack_n(10);
        assert_eq!(s.window(), 140 * M + 10 * 10); // 10 ACKs × 0.01 × 1000 bytes
        let before = s.window() as f64;
        s.lose_n(1);
        assert_eq!(s.window(), (before * 0.875) as u64);
    }

    #[test]
    fn scalable_grows_about_one_percent_per_rtt() {
        // Kelly 2003 §2: the increase is multiplicative, (1 + a) per RTT whatever the window, so
        // the time to recover from a loss does not depend on the rate.
        let mut s = sender(1000);
        s.send_window();
        s.congestion_event();
        s.ack_all();
        s.exit_recovery();
        let w0 = s.window_pkts();
        s.run_rounds(10);
        let ratio = s.window_pkts() / w0;
        let want = 1.01f64.powi(10);
        assert!((ratio - want).abs() < 0.01, "{ratio} vs {want}");
    }

    #[test]
    fn scalable_slow_start_as_newreno() {
        // Slow start unchanged: RFC 5681 §3.1 with RFC 3465 ABC doubles cwnd per RTT.
        let mut s = sender(10);
        for want in [20u64, 40, 80] {
            s.run_rounds(1);
            assert_eq!(s.window(), want * M);
        }
    }

    #[test]
    fn scalable_reno_below_legacy_window() {
        // Kelly 2003 §2: at or below lwnd = 16 segments the flow is standard TCP: halve on loss
        // (RFC 5681 eq. 4) and add one SMSS per RTT.
        let mut s = sender(12);
        s.send_window();
        s.congestion_event();
        assert_eq!(s.window(), 6 * M);
        s.ack_all();
        s.exit_recovery();
        for want in 7u64..=10 {
            s.run_rounds(1);
            assert_eq!(s.window(), want * M);
        }
    }

    #[test]
    fn scalable_rto_sets_loss_window() {
        // RFC 5681 §3.1: cwnd = 1 SMSS after a timeout; ssthresh from Kelly's decrease rule.
        let mut s = sender(160);
        s.send_window();
        s.rto();
        assert_eq!(s.window(), M);
        assert_eq!(s.cc.ssthresh(), 140 * M);
        s.send(1);
        s.rto(); // repeated timeout holds ssthresh
        assert_eq!(s.cc.ssthresh(), 140 * M);
    }

    #[test]
    fn scalable_no_growth_in_recovery_or_app_limited() {
        // RFC 5681 §3.2 / RFC 7661: no growth from ACKs in recovery or while app-limited.
        let mut s = sender(160);
        s.send_window();
        s.lose_n(1);
        let w = s.window();
        s.advance(RTT);
        s.ack_n(20);
        assert_eq!(s.window(), w);
        let mut s = sender(10);
        s.set_app_limited(Some(4));
        s.run_rounds(3);
        assert_eq!(s.window(), 10 * M);
    }
}
