//! The subflow half of MPTCP's coupled congestion controls (RFC 6356 LIA, OLIA of Khalili et al.
//! 2013, BALIA of Peng et al. 2016): Reno's mechanics (slow start with RFC 3465 byte counting,
//! RFC 5681 §3.1 loss window after a timeout, undo of spurious events) with the congestion-
//! avoidance increase and the multiplicative decrease set from outside by the MPTCP connection,
//! which alone sees every subflow's window and RTT.
//!
//! The connection (`celltcp-mptcp`, `coupled/{lia,olia,balia}.rs`) computes, before it feeds a
//! subflow a segment, a [`Coupling`]: `increase`, the growth of cwnd in bytes per byte acknowledged
//! in congestion avoidance (Reno: `mss / cwnd`; LIA, RFC 6356 §4:
//! `min(alpha * mss / cwnd_total, mss / cwnd_i)`), and `decrease`, the fraction of the flight
//! removed on a congestion event (Reno, LIA, OLIA: 1/2; BALIA: `min(alpha_r, 1.5) / 2`). It
//! hands it over with [`Coupled::set_coupling`] through
//! [`crate::TcpEndpoint::controller_mut`]. Until told otherwise the controller is NewReno with
//! beta 1/2, so a lone subflow behaves as a single-path TCP (RFC 6356 §3, goal 1's base case).
//!
//! This controller is built only by `celltcp-mptcp` (it is not in [`super::CcKind::ALL`] and its
//! name does not parse): a scenario selects a coupled control with the flow's `mptcp.cc`.

use celltcp_engine::SimTime;

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// No parameters of its own: everything comes from the connection through [`Coupling`].
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoupledConfig {}

impl CoupledConfig {
    pub fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// What the connection sets on a subflow's controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coupling {
    /// cwnd growth in congestion avoidance, bytes per byte acknowledged; `None`: Reno's
    /// `mss / cwnd`. May be negative (OLIA moves window away from the largest-window paths);
    /// cwnd never falls below one MSS that way.
    pub increase: Option<f64>,
    /// Fraction of the flight removed on a congestion event, in (0, 1) (Reno: 0.5).
    pub decrease: f64,
}

impl Default for Coupling {
    fn default() -> Self {
        Coupling {
            increase: None,
            decrease: 0.5,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Coupled {
    mss: u64,
    /// Kept fractional: a coupled increase per ACK is often far below one byte.
    cwnd: f64,
    ssthresh: u64,
    coupling: Coupling,
    loss: LossWindow<(f64, u64)>,
}

impl Coupled {
    pub fn new(_cfg: CoupledConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        Coupled {
            mss: mss as u64,
            cwnd: (initial_cwnd_pkts as u64 * mss as u64) as f64,
            ssthresh: u64::MAX,
            coupling: Coupling::default(),
            loss: LossWindow::default(),
        }
    }

    /// The increase and decrease rules to apply from now on.
    pub fn set_coupling(&mut self, c: Coupling) {
        debug_assert!(
            c.decrease > 0.0 && c.decrease < 1.0,
            "decrease {}",
            c.decrease
        );
        self.coupling = c;
    }

    pub fn coupling(&self) -> Coupling {
        self.coupling
    }

    /// The window in bytes without rounding.
    pub fn cwnd_f64(&self) -> f64 {
        self.cwnd
    }

    fn reduce(&mut self, flight: u64) -> u64 {
        self.loss.save((self.cwnd, self.ssthresh));
        ssthresh_floor(
            (flight as f64 * (1.0 - self.coupling.decrease)) as u64,
            self.mss,
        )
    }
}

impl Controller for Coupled {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if (self.cwnd as u64) < self.ssthresh {
            // RFC 6356 §3: slow start is unchanged (RFC 5681 eq. 2 with RFC 3465 ABC, L = 2).
            let inc = ack.acked_bytes.min(2 * self.mss) as f64;
            self.cwnd = (self.cwnd + inc).min((self.ssthresh as f64).max(self.cwnd));
        } else {
            let per_byte = self
                .coupling
                .increase
                .unwrap_or(self.mss as f64 / self.cwnd);
            self.cwnd = (self.cwnd + per_byte * ack.acked_bytes as f64).max(self.mss as f64);
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, ev: &CongestionEvent) {
        // RFC 6356 §3: "the decrease ... is unchanged" (halving; BALIA sets its own factor).
        self.ssthresh = self.reduce(ev.bytes_in_flight);
        self.cwnd = self.ssthresh as f64;
    }

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1 eq. 4, ssthresh held on a repeated timeout.
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
        (self.cwnd as u64).max(self.mss)
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_sender::TestSender;
    use celltcp_engine::SimDuration;

    const MSS: u32 = 1000;

    fn in_ca(w_pkts: u64) -> TestSender<Coupled> {
        let mut c = Coupled::new(CoupledConfig::default(), MSS, w_pkts as u32);
        c.ssthresh = w_pkts * MSS as u64;
        TestSender::new(c, MSS, SimDuration::from_millis(100))
    }

    #[test]
    fn coupled_uncoupled_is_reno_one_mss_per_rtt() {
        // RFC 5681 §3.1: + 1 SMSS per window of ACKed data when no coupling is set.
        let mut s = in_ca(20);
        s.send_window();
        s.advance(SimDuration::from_millis(100));
        s.ack_n(20);
        let w = s.cc.cwnd_f64();
        assert!((w - 21_000.0).abs() < 600.0, "{w}");
    }

    #[test]
    fn coupled_increase_applied_per_acked_byte() {
        // With increase k per byte, one window W of ACKs adds k * W bytes.
        let mut s = in_ca(20);
        s.cc.set_coupling(Coupling {
            increase: Some(0.01),
            decrease: 0.5,
        });
        s.send_window();
        s.advance(SimDuration::from_millis(100));
        s.ack_n(20);
        let w = s.cc.cwnd_f64();
        assert!((w - (20_000.0 + 0.01 * 20_000.0)).abs() < 1e-6, "{w}");
    }

    #[test]
    fn coupled_decrease_sets_ssthresh_from_flight() {
        // BALIA-style decrease: ssthresh = flight * (1 - d), floor 2 SMSS (RFC 5681 eq. 4).
        let mut c = Coupled::new(CoupledConfig::default(), MSS, 40);
        c.set_coupling(Coupling {
            increase: None,
            decrease: 0.75,
        });
        let ev = CongestionEvent {
            bytes_in_flight: 40_000,
            mss: MSS,
            ..Default::default()
        };
        c.on_congestion_event(SimTime::ZERO, &ev);
        assert_eq!(c.ssthresh(), 10_000);
        assert_eq!(c.window(), 10_000);
        c.on_spurious(SimTime::ZERO);
        assert_eq!(c.window(), 40_000);
    }
}
