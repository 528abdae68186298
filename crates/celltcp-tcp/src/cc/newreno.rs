//! NewReno congestion control: slow start and congestion avoidance (RFC 5681 §3.1), the window
//! reduction on entering fast recovery (RFC 5681 §3.2 step 2 / RFC 6582 §3.2 step 2, RFC 6675 §5
//! step 4.2), and the loss window after a timeout (RFC 5681 §3.1 eq. 4).
//!
//! The recovery *mechanics* (which segment to retransmit, partial ACKs, the RFC 6582 window
//! inflation or the RFC 6675 pipe) belong to the sender; this controller only owns `cwnd` and
//! `ssthresh`.

use celltcp_engine::SimTime;

use super::{Ack, CongestionEvent, Controller};

/// NewReno parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewRenoConfig {
    /// Multiplicative decrease factor on a congestion event, in (0, 1). RFC 5681 eq. 4: 0.5.
    pub beta: f64,
    /// Appropriate Byte Counting limit L in segments per ACK during slow start (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        NewRenoConfig { beta: 0.5, abc_limit_segments: 2 }
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
    /// State before the last reduction, for `on_spurious`.
    prior: (u64, u64),
}

impl NewReno {
    pub fn new(cfg: NewRenoConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as u64;
        NewReno { cfg, mss, cwnd: initial_cwnd_pkts as u64 * mss, ssthresh: u64::MAX, ca_acked: 0, prior: (0, 0) }
    }

    fn reduce(&mut self, flight: u64) -> u64 {
        // RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 * SMSS)
        self.prior = (self.cwnd, self.ssthresh);
        ((flight as f64 * self.cfg.beta) as u64).max(2 * self.mss)
    }
}

impl Controller for NewReno {
    fn on_ack(&mut self, _now: SimTime, ack: &Ack) {
        if ack.in_recovery || ack.app_limited || ack.acked_bytes == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 eq. 2 with RFC 3465 ABC: cwnd += min(N, L*SMSS)
            let inc = ack.acked_bytes.min(self.cfg.abc_limit_segments as u64 * self.mss);
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

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32) {
        // RFC 5681 §3.1 eq. 4 and "LW = 1 SMSS".
        self.ssthresh = self.reduce(bytes_in_flight);
        self.cwnd = self.mss;
        self.ca_acked = 0;
    }

    fn on_spurious(&mut self, _now: SimTime) {
        if self.prior.0 > 0 {
            self.cwnd = self.cwnd.max(self.prior.0);
            self.ssthresh = self.prior.1;
        }
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}
