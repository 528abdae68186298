//! Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation-02 §3.3).

use celltcp_engine::{SimDuration, SimTime};

use super::TcpEndpoint;
use crate::cc::RateSample;
use crate::scoreboard::SentSeg;

/// Builds one rate sample (draft-cheng-iccrg-delivery-rate-estimation-02 §3.3).
#[derive(Default)]
pub(super) struct RsBuild {
    pub(super) set: bool,
    prior_delivered: u64,
    prior_time: SimTime,
    is_app_limited: bool,
    send_elapsed: SimDuration,
    ack_elapsed: SimDuration,
    pub(super) sent_time: SimTime,
    tx_in_flight: u64,
    /// RTT of the most recently sent, never retransmitted segment delivered (zero if none).
    rtt: SimDuration,
    rtt_set: bool,
}

impl RsBuild {
    /// A segment was newly delivered; `delivered` is C.delivered after counting it.
    pub(super) fn update(&mut self, s: &SentSeg, _delivered: u64, now: SimTime) {
        // The sample's RTT is Karn-safe (Linux rs->rtt_us comes from never-retransmitted data):
        // a retransmission acknowledged early by its original's delivery would fake a tiny RTT.
        if !s.retransmitted {
            let d = now.saturating_since(s.sent_time);
            self.rtt = if self.rtt_set { self.rtt.min(d) } else { d };
            self.rtt_set = true;
        }
        if !self.set || s.delivered >= self.prior_delivered {
            self.set = true;
            self.prior_delivered = s.delivered;
            self.prior_time = s.delivered_time;
            self.is_app_limited = s.is_app_limited;
            self.send_elapsed = s.sent_time.saturating_since(s.first_sent_time);
            self.ack_elapsed = now.saturating_since(s.delivered_time);
            self.sent_time = s.sent_time;
            self.tx_in_flight = s.tx_in_flight;
        }
    }

    pub(super) fn finish(&self, ep: &TcpEndpoint, newly_lost: u64) -> Option<RateSample> {
        if !self.set {
            return None;
        }
        let delivered = ep.delivered - self.prior_delivered;
        let interval = self.send_elapsed.max(self.ack_elapsed);
        // §3.3: an interval below min_rtt is unreliable (Linux marks the sample invalid).
        if interval == SimDuration::ZERO || interval < ep.rtt.min_rtt() {
            return None;
        }
        Some(RateSample {
            delivery_rate: delivered as f64 / interval.as_secs_f64(),
            delivered,
            prior_delivered: self.prior_delivered,
            interval,
            rtt: self.rtt,
            is_app_limited: self.is_app_limited,
            tx_in_flight: self.tx_in_flight,
            newly_lost,
        })
    }
}
