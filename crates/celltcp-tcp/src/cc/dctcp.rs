//! DCTCP, Data Center TCP (RFC 8257; Alizadeh et al., SIGCOMM 2010).
//!
//! The rules, by section of RFC 8257:
//!
//! - §3.1 (the network) marks CE when the instantaneous queue exceeds a threshold K: see the
//!   `step` queue in `celltcp_net::queue::step`.
//! - §3.2 (the receiver) echoes the CE state of the segments it acknowledges accurately (the
//!   two-state delayed-ACK machine): in the endpoint, not here.
//! - §3.3 (the sender's estimate): over each window of data (from one `SND.NXT` snapshot,
//!   `WindowEnd`, until SND.UNA passes it) count the bytes acknowledged and the bytes
//!   acknowledged by ACKs with ECE; at the end of the window, with `M` the marked fraction,
//!   `α ← (1 − g)·α + g·M`, `g` = 1/16, then start the next window at the current SND.NXT.
//! - §3.4 (the reaction): on an ACK with ECE, at most once per window of data (the endpoint
//!   gates this and calls [`Controller::on_congestion_event`] with `ecn`):
//!   `cwnd ← cwnd·(1 − α/2)`, and ssthresh to the same value (at least 2 segments).
//! - §3.5 (loss): as standard TCP, here NewReno (RFC 5681: ssthresh = FlightSize/2 on fast
//!   retransmit, one segment after a timeout); growth is RFC 5681 slow start (with RFC 3465 ABC,
//!   L = 2) and congestion avoidance.
//!
//! α starts at 1 (RFC 8257 §4.2 leaves the choice open; Linux starts at 1, so the first mark
//! halves the window as standard ECN would).

use celltcp_engine::SimTime;

use super::loss_window::{loss_window, ssthresh_floor, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, EcnFeedback, RtoSsthresh};

/// DCTCP parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpConfig {
    /// Estimation gain `g`, in (0, 1] (RFC 8257 §3.3 and §4.2: 1/16).
    pub g: f64,
    /// α before the first window has been measured, in [0, 1] (Linux: 1).
    pub initial_alpha: f64,
    /// Appropriate Byte Counting limit in segments per ACK during slow start (RFC 3465: 2).
    pub abc_limit_segments: u32,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
            abc_limit_segments: 2,
        }
    }
}

impl DctcpConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "g",
            self.g,
            self.g > 0.0 && self.g <= 1.0,
            "a gain in (0, 1] (RFC 8257: 1/16)",
        )?;
        check(
            "initial_alpha",
            self.initial_alpha,
            (0.0..=1.0).contains(&self.initial_alpha),
            "a value in [0, 1] (Linux: 1)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    cfg: DctcpConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    ca_acked: u64,
    /// The congestion estimate α of RFC 8257 §3.3.
    alpha: f64,
    /// `DCTCP.WindowEnd` (absolute sequence), 0 before the first feedback.
    window_end: u64,
    /// `DCTCP.BytesAcked` and `DCTCP.BytesMarked` over the current window.
    bytes_acked: u64,
    bytes_marked: u64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(u64, u64)>,
}

impl Dctcp {
    pub fn new(cfg: DctcpConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        Dctcp {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts as u64 * mss,
            ssthresh: u64::MAX,
            ca_acked: 0,
            alpha: cfg.initial_alpha.clamp(0.0, 1.0),
            window_end: 0,
            bytes_acked: 0,
            bytes_marked: 0,
            loss: LossWindow::default(),
        }
    }

    /// The current congestion estimate α in [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    fn save(&mut self) {
        self.loss.save((self.cwnd, self.ssthresh));
    }
}

impl Controller for Dctcp {
    fn on_ecn_feedback(&mut self, _now: SimTime, fb: &EcnFeedback) {
        // RFC 8257 §3.3 steps 1-5.
        if self.window_end == 0 {
            self.window_end = fb.snd_nxt;
        }
        self.bytes_acked += fb.acked_bytes;
        if fb.ece {
            self.bytes_marked += fb.acked_bytes;
        }
        if fb.snd_una > self.window_end {
            if self.bytes_acked > 0 {
                let m = self.bytes_marked as f64 / self.bytes_acked as f64;
                self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * m;
            }
            self.window_end = fb.snd_nxt;
            self.bytes_acked = 0;
            self.bytes_marked = 0;
        }
    }

    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            let inc = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss);
            self.cwnd = (self.cwnd + inc).min(self.ssthresh.max(self.cwnd));
            if self.cwnd >= self.ssthresh {
                self.ca_acked = 0;
            }
        } else {
            self.ca_acked += ack.acked_bytes;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, ev: &CongestionEvent) {
        self.save();
        self.ssthresh = if ev.ecn {
            // RFC 8257 §3.4.
            ssthresh_floor(
                (self.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64,
                self.mss,
            )
        } else {
            // RFC 8257 §3.5 / RFC 5681 eq. 4.
            ssthresh_floor(ev.bytes_in_flight / 2, self.mss)
        };
        self.cwnd = self.ssthresh;
        self.ca_acked = 0;
    }

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        if self.loss.on_rto(ss) {
            self.save();
            self.ssthresh = ssthresh_floor(bytes_in_flight / 2, self.mss);
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
    const RTT: SimDuration = SimDuration::from_millis(10);

    fn sender(cfg: DctcpConfig, iw: u32) -> TestSender<Dctcp> {
        TestSender::new(Dctcp::new(cfg, MSS, iw), MSS, RTT)
    }

    /// One window: send what cwnd allows, wait one RTT, acknowledge every segment one ACK each,
    /// with ECE on the ACKs of the first `marked` segments. Feedback goes to the controller before
    /// the ACK, as the endpoint does (snd_una/snd_nxt in bytes).
    fn window(s: &mut TestSender<Dctcp>, marked: usize) -> usize {
        let n = s.send_window() as usize;
        s.advance(RTT);
        for i in 0..n {
            let snd_una = s.delivered() + MSS as u64;
            let snd_nxt = s.delivered() + s.bytes_in_flight();
            let fb = EcnFeedback {
                acked_bytes: MSS as u64,
                ece: i < marked,
                snd_una,
                snd_nxt,
            };
            let now = s.now();
            s.cc.on_ecn_feedback(now, &fb);
            s.ack_n(1);
        }
        n
    }

    #[test]
    fn alpha_is_an_ewma_with_gain_one_sixteenth_once_per_window() {
        // RFC 8257 §3.3: α ← (1 − g)α + g·M when SND.UNA passes WindowEnd (the SND.NXT of the
        // window start), g = 1/16, α starts at 1.
        let mut s = sender(DctcpConfig::default(), 10);
        assert_eq!(s.cc.alpha(), 1.0);
        assert_eq!(window(&mut s, 0), 10);
        // SND.UNA == WindowEnd: the window is not over yet
        assert_eq!(s.cc.alpha(), 1.0);
        // the first ACK of the next window (marked) ends it: M = 1/11
        assert_eq!(window(&mut s, usize::MAX), 20);
        let a = s.cc.alpha();
        let want = 15.0 / 16.0 + (1.0 / 16.0) * (1.0 / 11.0);
        assert!((a - want).abs() < 1e-12, "alpha {a}, want {want}");
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        // With a quarter of every window's bytes marked, α → 0.25 (fixed point of the EWMA).
        let cfg = DctcpConfig {
            initial_alpha: 0.0,
            ..Default::default()
        };
        let mut s = sender(cfg, 8);
        for _ in 0..200 {
            // a fixed 8-segment window isolates the estimator from growth
            s.cc.cwnd = 8 * MSS as u64;
            s.cc.ssthresh = 8 * MSS as u64;
            assert_eq!(window(&mut s, 2), 8);
        }
        let a = s.cc.alpha();
        assert!((a - 0.25).abs() < 0.01, "alpha {a}");
    }

    #[test]
    fn ecn_cut_is_alpha_over_two() {
        // RFC 8257 §3.4: cwnd ← cwnd·(1 − α/2); with α = 0.25 a 40-segment window becomes 35.
        let cfg = DctcpConfig {
            initial_alpha: 0.25,
            ..Default::default()
        };
        let mut s = sender(cfg, 40);
        s.send_window();
        s.congestion_event(); // the endpoint's once-per-window ECN event
        assert_eq!(s.cc.window(), 35 * MSS as u64);
        assert_eq!(s.cc.ssthresh(), 35 * MSS as u64);
        // α = 1 (the default start) halves, as standard ECN.
        let mut s = sender(DctcpConfig::default(), 40);
        s.send_window();
        s.congestion_event();
        assert_eq!(s.cc.window(), 20 * MSS as u64);
        // α = 0: no cut at all.
        let mut s = sender(
            DctcpConfig {
                initial_alpha: 0.0,
                ..Default::default()
            },
            40,
        );
        s.send_window();
        s.congestion_event();
        assert_eq!(s.cc.window(), 40 * MSS as u64);
    }

    #[test]
    fn loss_halves_as_newreno_whatever_alpha() {
        // RFC 8257 §3.5: loss is handled as standard TCP (FlightSize / 2), not by α.
        let cfg = DctcpConfig {
            initial_alpha: 0.1,
            ..Default::default()
        };
        let mut s = sender(cfg, 40);
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.cc.window(), 20 * MSS as u64);
        s.rto();
        assert_eq!(s.cc.window(), MSS as u64);
    }

    #[test]
    fn unmarked_windows_grow_like_reno() {
        // No ECE: slow start doubles per round until ssthresh, then +1 MSS per round.
        let mut s = sender(DctcpConfig::default(), 10);
        window(&mut s, 0);
        assert_eq!(s.cc.window(), 20 * MSS as u64);
        s.cc.ssthresh = 20 * MSS as u64;
        window(&mut s, 0);
        assert_eq!(s.cc.window(), 21 * MSS as u64);
    }
}
