//! Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation-02 §3.3).

use celltcp_engine::{SimDuration, SimTime};

use crate::cc::RateSample;
use crate::scoreboard::SentSeg;

/// Builds one rate sample (draft-cheng-iccrg-delivery-rate-estimation-02 §3.3).
#[derive(Default)]
pub(super) struct RsBuild {
    pub(super) set: bool,
    pub(super) prior_delivered: u64,
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

    /// The sample for this ACK, given `C.delivered` after it, the connection's min_rtt and the
    /// bytes it newly marked lost; `None` only if the ACK delivered nothing.
    ///
    /// §3.3: a sample whose interval is shorter than min_rtt is not a reliable rate (an ACK
    /// compressed behind a retransmission, or a burst sent after idle). It is still reported, with
    /// `interval` and `delivery_rate` zero, because the other fields are facts the controller
    /// needs: BBR counts packet-timed rounds from `prior_delivered` (draft-cardwell-iccrg-bbr-
    /// congestion-control-00 §4.1.1.3) and takes the losses (`newly_lost`, Linux `rs->losses`)
    /// from every ACK. Regression: the whole sample was dropped, and the losses with it.
    pub(super) fn finish(
        &self,
        delivered: u64,
        min_rtt: SimDuration,
        newly_lost: u64,
    ) -> Option<RateSample> {
        if !self.set {
            return None;
        }
        let rs_delivered = delivered - self.prior_delivered;
        let mut interval = self.send_elapsed.max(self.ack_elapsed);
        if interval < min_rtt {
            interval = SimDuration::ZERO;
        }
        let delivery_rate = if interval > SimDuration::ZERO {
            rs_delivered as f64 / interval.as_secs_f64()
        } else {
            0.0
        };
        Some(RateSample {
            delivery_rate,
            delivered: rs_delivered,
            prior_delivered: self.prior_delivered,
            interval,
            rtt: self.rtt,
            is_app_limited: self.is_app_limited,
            tx_in_flight: self.tx_in_flight,
            newly_lost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> SimDuration = SimDuration::from_millis;

    /// A 1000-byte segment sent at `sent_ms`, when `C.delivered` was `delivered` (last changed at
    /// `delivered_ms`) and the flight had started at `first_ms`.
    fn seg(sent_ms: u64, delivered: u64, delivered_ms: u64, first_ms: u64) -> SentSeg {
        SentSeg {
            start: 1,
            end: 1001,
            sent_time: SimTime::ZERO + MS(sent_ms),
            delivered,
            delivered_time: SimTime::ZERO + MS(delivered_ms),
            first_sent_time: SimTime::ZERO + MS(first_ms),
            tx_in_flight: 5000,
            ..Default::default()
        }
    }

    #[test]
    fn rate_sample_valid_interval() {
        // §3.3: interval = max(send_elapsed, ack_elapsed); rate = delivered / interval.
        let mut b = RsBuild::default();
        b.update(&seg(100, 10_000, 90, 60), 20_000, SimTime::ZERO + MS(150));
        let rs = b.finish(20_000, MS(50), 0).unwrap();
        assert_eq!(rs.interval, MS(60)); // ack_elapsed 150 - 90 > send_elapsed 100 - 60
        assert_eq!((rs.delivered, rs.prior_delivered), (10_000, 10_000));
        assert!((rs.delivery_rate - 10_000.0 / 0.060).abs() < 1e-6);
        assert_eq!(rs.rtt, MS(50));
    }

    #[test]
    fn rate_sample_rtt_skips_retransmitted_segments() {
        // Karn (RFC 6298 §3), as Linux takes rs->rtt_us only from never-retransmitted data: a
        // retransmission acknowledged 1 ms after it was resent (the original had arrived) says
        // nothing about the path. Regression: it became the sample's RTT and BBR's RTprop.
        let mut b = RsBuild::default();
        let mut clean = seg(10, 0, 0, 0);
        clean.start = 1001;
        clean.end = 2001;
        let rtx = SentSeg {
            retransmitted: true,
            ..seg(59, 1000, 40, 10)
        };
        b.update(&clean, 1000, SimTime::ZERO + MS(60));
        b.update(&rtx, 2000, SimTime::ZERO + MS(60));
        let rs = b.finish(2000, MS(50), 0).unwrap();
        assert_eq!(rs.rtt, MS(50), "from the clean segment only");
        assert_eq!(
            rs.prior_delivered, 1000,
            "the rate still comes from the newest segment"
        );
        // Only retransmitted data delivered: no RTT at all (zero).
        let mut b = RsBuild::default();
        b.update(&rtx, 2000, SimTime::ZERO + MS(60));
        assert_eq!(b.finish(2000, MS(50), 0).unwrap().rtt, SimDuration::ZERO);
    }

    #[test]
    fn rate_sample_short_interval_is_reported_invalid_with_losses() {
        // §3.3: an interval below min_rtt gives no rate, but the sample (prior_delivered for
        // BBR's round counting, the losses of this ACK) must still reach the controller, with
        // interval and delivery_rate zero. Regression: finish() returned None and the ACK's
        // newly lost bytes never reached BBR's cwnd (draft-cardwell-00 §4.2.3.4).
        let mut b = RsBuild::default();
        b.update(&seg(100, 10_000, 130, 99), 11_000, SimTime::ZERO + MS(150));
        let rs = b
            .finish(11_000, MS(50), 3000)
            .expect("a sample even when invalid");
        assert_eq!(rs.interval, SimDuration::ZERO);
        assert_eq!(rs.delivery_rate, 0.0);
        assert_eq!(
            (rs.delivered, rs.prior_delivered, rs.newly_lost),
            (1000, 10_000, 3000)
        );
        assert_eq!(rs.tx_in_flight, 5000);
        // Nothing delivered: no sample at all.
        assert_eq!(RsBuild::default().finish(11_000, MS(50), 0), None);
    }
}
