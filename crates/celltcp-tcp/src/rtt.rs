//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! - §2.2 first sample: `SRTT = R`, `RTTVAR = R/2`.
//! - §2.3 later samples: `RTTVAR = (1 - beta) RTTVAR + beta |SRTT - R|`,
//!   `SRTT = (1 - alpha) SRTT + alpha R` with alpha = 1/8, beta = 1/4.
//! - `RTO = SRTT + max(G, K * RTTVAR)`, K = 4, clock granularity G = 1 ms, then floored at
//!   `min_rto` (§2.4 says 1 s; Linux uses 200 ms, our default) and capped at `max_rto` (§2.5).
//! - §5.5 exponential backoff on expiry; the backoff is kept until a new sample arrives (§5.7 and
//!   Karn's algorithm, §3).
//! - Before any sample the RTO is `initial_rto` (§2.1: 1 s).

use celltcp_engine::SimDuration;

/// Clock granularity G (RFC 6298 §2.2; our TCP timestamp clock ticks in ms).
pub const CLOCK_GRANULARITY: SimDuration = SimDuration::from_millis(1);
/// K (RFC 6298 §2.2).
pub const K: u64 = 4;
/// Largest backoff exponent we apply (2^16 times the base is beyond any `max_rto`).
const MAX_BACKOFF: u32 = 16;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<SimDuration>,
    rttvar: SimDuration,
    latest: SimDuration,
    min_rtt: SimDuration,
    base_rto: SimDuration,
    backoff: u32,
    min_rto: SimDuration,
    max_rto: SimDuration,
}

impl RttEstimator {
    pub fn new(initial_rto: SimDuration, min_rto: SimDuration, max_rto: SimDuration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: SimDuration::ZERO,
            latest: SimDuration::ZERO,
            min_rtt: SimDuration::MAX,
            base_rto: initial_rto,
            backoff: 0,
            min_rto,
            max_rto,
        }
    }

    /// Feeds one RTT measurement (RFC 6298 §2.2/§2.3) and clears the backoff (§5.7).
    pub fn on_sample(&mut self, r: SimDuration) {
        self.latest = r;
        self.min_rtt = self.min_rtt.min(r);
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let err = if s > r { s - r } else { r - s };
                self.rttvar = SimDuration((self.rttvar.0 * 3 + err.0) / 4);
                self.srtt = Some(SimDuration((s.0 * 7 + r.0) / 8));
            }
        }
        let s = self.srtt.unwrap_or(r);
        let rto = s + CLOCK_GRANULARITY.max(self.rttvar * K);
        self.base_rto = rto.max(self.min_rto).min(self.max_rto);
        self.backoff = 0;
    }

    /// The current timeout with backoff applied (RFC 6298 §5.5), capped at `max_rto`.
    pub fn rto(&self) -> SimDuration {
        let shift = self.backoff.min(MAX_BACKOFF);
        SimDuration(self.base_rto.0.saturating_mul(1 << shift)).min(self.max_rto)
    }

    /// The timeout without backoff.
    pub fn base_rto(&self) -> SimDuration {
        self.base_rto
    }

    /// Doubles the timeout (RFC 6298 §5.5).
    pub fn backoff(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
    }

    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }

    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt
    }

    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }

    pub fn latest(&self) -> SimDuration {
        self.latest
    }

    /// Minimum RTT seen, `SimDuration::ZERO` before the first sample.
    pub fn min_rtt(&self) -> SimDuration {
        if self.min_rtt == SimDuration::MAX {
            SimDuration::ZERO
        } else {
            self.min_rtt
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            SimDuration::from_secs(1),
            SimDuration::from_millis(200),
            SimDuration::from_secs(120),
        )
    }

    #[test]
    fn rtt_initial_rto_is_one_second() {
        // RFC 6298 §2.1
        assert_eq!(est().rto(), SimDuration::from_secs(1));
    }

    #[test]
    fn rtt_first_sample_sets_srtt_and_half_rttvar() {
        // RFC 6298 §2.2: RTO = R + 4 * R/2 = 3R (floored at min_rto)
        let mut e = est();
        e.on_sample(SimDuration::from_millis(100));
        assert_eq!(e.srtt(), Some(SimDuration::from_millis(100)));
        assert_eq!(e.rttvar(), SimDuration::from_millis(50));
        assert_eq!(e.rto(), SimDuration::from_millis(300));
        let mut e = est();
        e.on_sample(SimDuration::from_millis(10));
        assert_eq!(e.rto(), SimDuration::from_millis(200), "floored at min_rto");
    }

    #[test]
    fn rtt_ewma_uses_alpha_eighth_beta_quarter() {
        // RFC 6298 §2.3
        let mut e = est();
        e.on_sample(SimDuration::from_millis(100));
        e.on_sample(SimDuration::from_millis(200));
        // rttvar = 3/4*50 + 1/4*100 = 62.5; srtt = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar(), SimDuration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(112_500)));
        assert_eq!(e.rto(), SimDuration::from_micros(112_500 + 250_000));
    }

    #[test]
    fn rtt_backoff_doubles_caps_and_clears_on_sample() {
        // RFC 6298 §5.5 and §2.5
        let mut e = est();
        e.on_sample(SimDuration::from_millis(100));
        e.backoff();
        assert_eq!(e.rto(), SimDuration::from_millis(600));
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), SimDuration::from_secs(120));
        e.on_sample(SimDuration::from_millis(100));
        assert_eq!(e.backoff_count(), 0);
    }
}
