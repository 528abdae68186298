//! NewReno congestion control: slow start and congestion avoidance (RFC 5681 §3.1), the window
//! reduction on entering fast recovery (RFC 5681 §3.2 step 2 / RFC 6582 §3.2 step 2, RFC 6675 §5
//! step 4.2), and the loss window after a timeout (RFC 5681 §3.1 eq. 4).
//!
//! The reduction halves FlightSize (RFC 5681 eq. 4, as ns-3's `TcpNewReno::GetSsThresh`), or
//! with [`NewRenoConfig::ssthresh_from_cwnd`] cwnd, as Linux's `tcp_reno_ssthresh`
//! (`max(snd_cwnd >> 1, 2)`, also on an RTO through `tcp_enter_loss`). They differ where cwnd
//! has grown past the flight: in slow start Linux and celltcp grow cwnd up to twice the data in
//! flight (`tcp_is_cwnd_limited`), e.g. while a full send buffer holds the flight back.
//!
//! The recovery *mechanics* (which segment to retransmit, partial ACKs, the RFC 6582 window
//! inflation or the RFC 6675 pipe) belong to the sender; this controller only owns `cwnd` and
//! `ssthresh`.

use celltcp_engine::SimTime;

use super::loss_window::{loss_window, reno_ssthresh, undo_cwnd, LossWindow};
use super::{Ack, CongestionEvent, Controller, RtoSsthresh};

/// NewReno parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewRenoConfig {
    /// Multiplicative decrease factor on a congestion event, in (0, 1). RFC 5681 eq. 4: 0.5.
    pub beta: f64,
    /// Appropriate Byte Counting limit L in segments per ACK during slow start (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
    /// Reduce from cwnd rather than FlightSize, as Linux's `tcp_reno_ssthresh` (ssthresh =
    /// max(cwnd * beta, 2 SMSS)). Default false: RFC 5681 eq. 4 (FlightSize), as ns-3.
    pub ssthresh_from_cwnd: bool,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        NewRenoConfig {
            beta: 0.5,
            abc_limit_segments: 2,
            ssthresh_from_cwnd: false,
        }
    }
}

impl NewRenoConfig {
    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "beta",
            self.beta,
            unit_open(self.beta),
            "a value in (0, 1) (RFC 5681: 0.5)",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

#[derive(Clone, Debug)]
pub struct NewReno {
    cfg: NewRenoConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged in congestion avoidance not yet turned into window (RFC 5681 §3.1,
    /// byte counting variant: cwnd += SMSS once per cwnd bytes acknowledged).
    ca_acked: u64,
    /// RFC 5681 loss-window state: the (cwnd, ssthresh) saved for an undo, and
    /// whether a timeout is pending ([`LossWindow`]).
    loss: LossWindow<(u64, u64)>,
}

impl NewReno {
    pub fn new(cfg: NewRenoConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        NewReno {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts as u64 * mss,
            ssthresh: u64::MAX,
            ca_acked: 0,
            loss: LossWindow::default(),
        }
    }

    fn reduce(&mut self, flight: u64) -> u64 {
        // RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 * SMSS); Linux tcp_reno_ssthresh
        // halves cwnd instead.
        self.loss.save((self.cwnd, self.ssthresh));
        let base = if self.cfg.ssthresh_from_cwnd {
            self.cwnd
        } else {
            flight
        };
        reno_ssthresh(base, self.cfg.beta, self.mss)
    }
}

impl Controller for NewReno {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        self.loss.on_ack(ack.acked_bytes);
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 eq. 2 with RFC 3465 ABC: cwnd += min(N, L*SMSS)
            let inc = ack
                .acked_bytes
                .min(self.cfg.abc_limit_segments as u64 * self.mss);
            self.cwnd = (self.cwnd + inc).min(self.ssthresh.max(self.cwnd));
            if self.cwnd >= self.ssthresh {
                self.ca_acked = 0;
            }
        } else {
            // RFC 5681 §3.1: cwnd += SMSS per RTT, counted in bytes acknowledged (RFC 3465 §2.1).
            self.ca_acked += ack.acked_bytes;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, ev: &CongestionEvent) {
        self.ssthresh = self.reduce(ev.bytes_in_flight);
        // RFC 6675 §5 step 4.2 / RFC 6582 §3.2 step 2 (the +3 SMSS inflation is the sender's).
        self.cwnd = self.ssthresh;
        self.ca_acked = 0;
    }

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        // RFC 5681 §3.1 eq. 4 and "LW = 1 SMSS". When the timer expires again before any new
        // data is acknowledged, ssthresh is held (RFC 5681 §3.1, implementation note on eq. 4):
        // the flight size is then the one retransmitted segment and would collapse ssthresh.
        if self.loss.on_rto(ss) {
            self.ssthresh = self.reduce(bytes_in_flight);
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

    fn sender(iw: u32) -> TestSender<NewReno> {
        TestSender::new(NewReno::new(NewRenoConfig::default(), MSS, iw), MSS, RTT)
    }

    /// Put the sender in congestion avoidance with cwnd = ssthresh = `pkts` segments.
    fn in_ca(pkts: u64) -> TestSender<NewReno> {
        let mut s = sender(pkts as u32 * 2);
        s.send_window();
        s.congestion_event(); // FlightSize = 2*pkts segments -> ssthresh = pkts
        s.ack_all(); // acks in recovery do not grow cwnd
        s.exit_recovery();
        assert_eq!(s.window(), pkts * MSS as u64);
        assert_eq!(s.cc.ssthresh(), pkts * MSS as u64);
        s
    }

    #[test]
    fn newreno_slow_start_doubles_per_rtt() {
        // RFC 5681 §3.1 eq. 2 with RFC 3465 ABC (L = 2): one ACK per segment adds one SMSS,
        // so a window of W segments acknowledged in one RTT becomes 2W.
        let mut s = sender(10);
        for want in [20u64, 40, 80, 160] {
            s.run_rounds(1);
            assert_eq!(s.window(), want * MSS as u64);
        }
        assert_eq!(s.cc.ssthresh(), u64::MAX);
    }

    #[test]
    fn newreno_abc_limits_stretch_ack_to_l_segments() {
        // RFC 3465 §2.2: during slow start cwnd += min(N, L*SMSS) with L = 2.
        let mut s = sender(10);
        s.send_window();
        s.advance(RTT);
        s.ack_stretch(5);
        assert_eq!(s.window(), 12 * MSS as u64);
        s.ack_stretch(1);
        assert_eq!(s.window(), 13 * MSS as u64);
    }

    #[test]
    fn newreno_slow_start_stops_at_ssthresh() {
        // RFC 5681 §3.1: slow start while cwnd < ssthresh; the increase does not overshoot it,
        // and growth continues at one SMSS per RTT above it.
        let mut s = sender(10);
        s.send_window();
        s.rto(); // ssthresh = 5 SMSS, cwnd = 1 SMSS
        assert_eq!(s.cc.ssthresh(), 5 * MSS as u64);
        for want in [2u64, 4, 5, 6] {
            s.run_rounds(1);
            assert_eq!(s.window(), want * MSS as u64);
        }
    }

    #[test]
    fn newreno_ca_adds_one_mss_per_rtt() {
        // RFC 5681 §3.1 eq. 3 (byte-counting form, RFC 3465 §2.1): +1 SMSS per cwnd acknowledged.
        let mut s = in_ca(10);
        for want in 11u64..=16 {
            s.run_rounds(1);
            assert_eq!(s.window(), want * MSS as u64);
        }
    }

    #[test]
    fn newreno_halves_on_congestion_event() {
        // RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS); cwnd = ssthresh on entering
        // recovery (RFC 6675 §5 step 4.2).
        let mut s = sender(20);
        s.send_window();
        s.lose_n(1); // FlightSize at detection = 20 segments
        assert_eq!(s.cc.ssthresh(), 10 * MSS as u64);
        assert_eq!(s.window(), 10 * MSS as u64);
    }

    #[test]
    fn newreno_congestion_event_floor_is_two_mss() {
        // RFC 5681 eq. 4: the 2*SMSS floor applies when FlightSize is small.
        let mut s = sender(10);
        s.send(3);
        s.lose_n(1);
        assert_eq!(s.cc.ssthresh(), 2 * MSS as u64);
        assert_eq!(s.window(), 2 * MSS as u64);
    }

    #[test]
    fn newreno_rto_sets_loss_window_and_ssthresh() {
        // RFC 5681 §3.1: after a timeout cwnd = LW = 1 SMSS and ssthresh by eq. 4.
        let mut s = sender(16);
        s.send_window();
        s.rto();
        assert_eq!(s.window(), MSS as u64);
        assert_eq!(s.cc.ssthresh(), 8 * MSS as u64);
    }

    #[test]
    fn newreno_repeated_rto_holds_ssthresh() {
        // RFC 5681 §3.1, note on eq. 4: a repeated timeout of the same segment holds ssthresh.
        // Regression: the flight size at the second expiry is the one retransmitted segment, so
        // recomputing eq. 4 collapsed ssthresh to 2*SMSS.
        let mut s = sender(16);
        s.send_window();
        s.rto();
        s.send(1);
        s.rto();
        assert_eq!(s.cc.ssthresh(), 8 * MSS as u64);
        assert_eq!(s.window(), MSS as u64);
        // Once new data is acknowledged, a later timeout reduces again.
        s.send(1);
        s.advance(RTT);
        s.ack_all();
        s.send_window();
        let flight = s.bytes_in_flight();
        s.rto();
        assert_eq!(s.cc.ssthresh(), (flight / 2).max(2 * MSS as u64));
    }

    #[test]
    fn newreno_no_growth_when_app_limited() {
        // RFC 7661 §4.2 / RFC 5681 §3.1: cwnd is not grown while the sender does not fill it.
        let mut s = sender(10);
        s.set_app_limited(Some(4));
        s.run_rounds(5);
        assert_eq!(s.window(), 10 * MSS as u64);
        // Control: with the application unlimited the same rounds grow cwnd.
        s.set_app_limited(None);
        s.run_rounds(1);
        assert!(s.window() > 10 * MSS as u64);
    }

    #[test]
    fn newreno_no_growth_in_recovery() {
        // RFC 5681 §3.2 / RFC 6675 §5: no window growth from ACKs during fast recovery.
        let mut s = sender(20);
        s.send_window();
        s.lose_n(1);
        let w = s.window();
        s.advance(RTT);
        s.ack_n(10);
        assert!(s.in_recovery());
        assert_eq!(s.window(), w);
    }

    #[test]
    fn newreno_spurious_undo_restores_window() {
        // RFC 3522 / RFC 4015: undo the reduction of a spurious congestion event.
        let mut s = sender(20);
        s.send_window();
        s.lose_n(1);
        s.spurious();
        assert_eq!(s.window(), 20 * MSS as u64);
        assert_eq!(s.cc.ssthresh(), u64::MAX);
    }

    #[test]
    fn newreno_linux_ssthresh_halves_cwnd_not_flight() {
        // What the kernel-oracle's Reno at 1e-4 shows: in slow start cwnd grew to 3,600
        // segments while a full send buffer held the flight at 2,897. RFC 5681 eq. 4 halves
        // FlightSize (1,448 segments); Linux tcp_reno_ssthresh halves cwnd (1,800).
        let ev = CongestionEvent {
            bytes_in_flight: 2_897 * 1000,
            mss: 1000,
            ..CongestionEvent::default()
        };
        let mut rfc = NewReno::new(NewRenoConfig::default(), 1000, 3_600);
        rfc.on_congestion_event(SimTime::ZERO, &ev);
        assert_eq!(rfc.ssthresh(), 1_448_500);
        let cfg = NewRenoConfig {
            ssthresh_from_cwnd: true,
            ..NewRenoConfig::default()
        };
        let mut linux = NewReno::new(cfg, 1000, 3_600);
        linux.on_congestion_event(SimTime::ZERO, &ev);
        assert_eq!(linux.ssthresh(), 1_800_000);
        assert_eq!(linux.window(), 1_800_000);
        // an RTO (tcp_enter_loss -> ssthresh()): also from cwnd; floor 2 SMSS
        let mut l2 = NewReno::new(cfg, 1000, 3);
        l2.on_rto(SimTime::ZERO, 100_000, 1000, RtoSsthresh::Reduce);
        assert_eq!(l2.ssthresh(), 2_000);
        let mut l3 = NewReno::new(cfg, 1000, 40);
        l3.on_rto(SimTime::ZERO, 10_000, 1000, RtoSsthresh::Reduce);
        assert_eq!(l3.ssthresh(), 20_000);
    }
}
