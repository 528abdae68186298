//! TCP Hybla (C. Caini and R. Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
//! networks", International Journal of Satellite Communications and Networking 22(5), 2004).
//!
//! Hybla makes window growth independent of the RTT by normalising to a reference connection
//! with `RTT0 = 25 ms` (Caini & Firrincieli §3): with `ρ = RTT/RTT0`,
//! - slow start: `cwnd ← cwnd + (2^ρ − 1)` segments per ACKed segment;
//! - congestion avoidance: `cwnd ← cwnd + ρ²/cwnd` segments per ACKed segment;
//! - losses and timeouts are handled as in standard TCP (halving, RFC 5681 eq. 4; loss window
//!   1 SMSS after a timeout).
//!
//! `ρ` is floored at 1 (§3: connections shorter than RTT0 behave as standard TCP, which the
//! formulas reduce to at ρ = 1). It is recomputed on every ACK from the smoothed RTT
//! (RFC 6298), the RTT estimate the paper's analysis assumes. Slow start adds the full
//! `(2^ρ − 1)` per ACKed segment, without the RFC 3465 ABC limit (the paper defines the
//! increase per acknowledged segment; with ABC the per-ACK limit would cap a stretch ACK at
//! `L·(2^ρ − 1)` segments, see [`HyblaConfig::abc_limit_segments`]). Pacing, which the paper
//! recommends for large ρ, is not part of this controller.
//!
//! Units: cwnd and ssthresh are bytes; `rtt0_ms` is milliseconds.

use celltcp_engine::SimTime;

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// TCP Hybla parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HyblaConfig {
    /// Reference RTT `RTT0`, milliseconds (> 0). Caini & Firrincieli 2004 §3: 25 ms.
    pub rtt0_ms: f64,
    /// Upper bound on ρ (≥ 1), to keep `2^ρ` finite on pathological RTT samples (e.g. a
    /// 5 s RTT gives ρ = 200). Default 16 (RTT 400 ms at RTT0 = 25 ms).
    pub rho_max: f64,
    /// RFC 3465 ABC limit L in segments per ACK during slow start, applied to the acknowledged
    /// bytes before the `(2^ρ − 1)` gain (2 as in RFC 3465 §2.2; one ACK per segment is then
    /// unaffected).
    pub abc_limit_segments: u32,
}

impl Default for HyblaConfig {
    fn default() -> Self {
        HyblaConfig {
            rtt0_ms: 25.0,
            rho_max: 16.0,
            abc_limit_segments: 2,
        }
    }
}

impl HyblaConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "rtt0_ms",
            self.rtt0_ms,
            self.rtt0_ms > 0.0 && self.rtt0_ms.is_finite(),
            "a positive time in ms (Caini & Firrincieli: 25)",
        )?;
        check(
            "rho_max",
            self.rho_max,
            self.rho_max >= 1.0 && self.rho_max.is_finite(),
            "at least 1 (default 16)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct Hybla {
    cfg: HyblaConfig,
    mss: u64,
    cwnd: f64,
    ssthresh: u64,
    /// ρ from the latest srtt (1 before any sample).
    rho: f64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(f64, u64)>,
}

impl Hybla {
    pub fn new(cfg: HyblaConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Hybla {
            cfg,
            mss,
            cwnd: (initial_cwnd_pkts as u64 * mss) as f64,
            ssthresh: u64::MAX,
            rho: 1.0,
            loss: LossWindow::default(),
        }
    }

    /// The current ρ = max(srtt / RTT0, 1).
    pub fn rho(&self) -> f64 {
        self.rho
    }

    fn reduce(&mut self, flight: u64) -> u64 {
        // RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS).
        self.loss.save((self.cwnd, self.ssthresh));
        ssthresh_floor(flight / 2, self.mss)
    }
}

impl Controller for Hybla {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if ack.srtt.as_nanos() > 0 {
            // Caini & Firrincieli §3: ρ = RTT/RTT0, at least 1.
            self.rho = (ack.srtt.as_millis_f64() / self.cfg.rtt0_ms).clamp(1.0, self.cfg.rho_max);
        }
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        let mss = self.mss as f64;
        if (self.cwnd as u64) < self.ssthresh {
            // Caini & Firrincieli §3: cwnd += (2^ρ − 1) segments per ACKed segment.
            let acked = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss) as f64;
            let inc = (self.rho.exp2() - 1.0) * acked;
            self.cwnd = (self.cwnd + inc).min((self.ssthresh as f64).max(self.cwnd));
        } else {
            // Caini & Firrincieli §3: cwnd += ρ²/cwnd segments per ACKed segment.
            self.cwnd += self.rho * self.rho * mss * ack.acked_bytes as f64 / self.cwnd;
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, ev: &CongestionEvent) {
        // Loss handling as standard TCP (RFC 5681 eq. 4, RFC 6675 §5 step 4.2).
        self.ssthresh = self.reduce(ev.bytes_in_flight);
        self.cwnd = self.ssthresh as f64;
    }

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1: LW = 1 SMSS; ssthresh by eq. 4, held on a repeated timeout.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reduce(bytes_in_flight);
        }
        self.cwnd = loss_window(self.mss) as f64;
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

    fn sender(iw: u32, rtt_ms: u64) -> TestSender<Hybla> {
        TestSender::new(
            Hybla::new(HyblaConfig::default(), MSS, iw),
            MSS,
            SimDuration::from_millis(rtt_ms),
        )
    }

    #[test]
    fn hybla_slow_start_growth_scales_with_2_pow_rho() {
        // Caini & Firrincieli §3: in slow start each ACKed segment adds 2^ρ − 1 segments.
        // RTT 100 ms: ρ = 4, +15 segments per ACK; RTT 50 ms: ρ = 2, +3; RTT 25 ms: ρ = 1, +1.
        for (rtt_ms, gain) in [(100u64, 15u64), (50, 3), (25, 1)] {
            let mut s = sender(10, rtt_ms);
            s.send(3);
            s.advance(SimDuration::from_millis(rtt_ms));
            s.ack_n(3);
            assert_eq!(s.window(), (10 + 3 * gain) * M, "rtt {rtt_ms} ms");
        }
    }

    #[test]
    fn hybla_ca_growth_scales_with_rho_squared() {
        // Caini & Firrincieli §3: in congestion avoidance each ACKed segment adds ρ²/cwnd
        // segments, i.e. about ρ² segments per RTT (16 at ρ = 4, 1 at ρ = 1 as Reno).
        for (rtt_ms, rho2) in [(100u64, 16.0), (50, 4.0), (25, 1.0)] {
            let mut s = sender(200, rtt_ms);
            s.send_window();
            s.congestion_event(); // cwnd = ssthresh = 100 segments
            s.advance(SimDuration::from_millis(rtt_ms)); // srtt = rtt, so ρ = rtt/25 ms
            s.ack_all();
            s.exit_recovery();
            let w0 = s.window() as f64;
            assert_eq!(w0 as u64, 100 * M);
            s.send(1);
            s.advance(SimDuration::from_millis(rtt_ms));
            s.ack_n(1);
            let want = w0 + rho2 * (M * M) as f64 / w0;
            assert!(
                (s.cc.cwnd - want).abs() < 1e-6,
                "rtt {rtt_ms}: {} vs {want}",
                s.cc.cwnd
            );
        }
    }

    #[test]
    fn hybla_rho_is_floored_at_one() {
        // Caini & Firrincieli §3: ρ ≥ 1, so a path shorter than RTT0 grows as standard TCP.
        let mut s = sender(10, 10);
        s.run_rounds(1);
        assert_eq!(s.cc.rho(), 1.0);
        assert_eq!(s.window(), 20 * M);
    }

    #[test]
    fn hybla_halves_on_loss_as_reno() {
        // Loss recovery as standard TCP: ssthresh = cwnd = max(FlightSize/2, 2*SMSS).
        let mut s = sender(40, 100);
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.window(), 20 * M);
        assert_eq!(s.cc.ssthresh(), 20 * M);
    }

    #[test]
    fn hybla_rto_sets_loss_window() {
        // RFC 5681 §3.1: cwnd = 1 SMSS after a timeout, ssthresh by eq. 4, held on a repeat.
        let mut s = sender(40, 100);
        s.send_window();
        s.rto();
        assert_eq!(s.window(), M);
        assert_eq!(s.cc.ssthresh(), 20 * M);
        s.send(1);
        s.rto();
        assert_eq!(s.cc.ssthresh(), 20 * M);
    }

    #[test]
    fn hybla_no_growth_in_recovery_or_app_limited() {
        // RFC 5681 §3.2 / RFC 7661: no growth in recovery or while app-limited.
        let mut s = sender(40, 100);
        s.send_window();
        s.lose_n(1);
        let w = s.window();
        s.advance(SimDuration::from_millis(100));
        s.ack_n(20);
        assert_eq!(s.window(), w);
        let mut s = sender(10, 100);
        s.set_app_limited(Some(4));
        s.run_rounds(3);
        assert_eq!(s.window(), 10 * M);
    }
}
