//! Round-trip time estimation and the retransmission timeout: RFC 6298 as Linux computes it
//! (`tcp_rtt_estimator`, `tcp_set_rto`/`__tcp_set_rto` in net/ipv4/tcp_input.c), or RFC 6298 to
//! the letter ([`RtoEstimator::Rfc6298`], for ns-3-like comparisons).
//!
//! **Linux** ([`RtoEstimator::Linux`], the default). SRTT is RFC 6298's (gain 1/8). The
//! deviation `mdev` holds 4·|error| smoothed with gain 1/4 (so it is RFC 6298's `K·RTTVAR`), but
//! a sample *below* SRTT moves it with gain 1/32 only (the kernel's answer to Eifel's "RTT
//! decreases must not inflate the RTO"). Per window of data (`rtt_seq`: once SND.UNA passes the
//! SND.NXT of the previous update) the largest `mdev` of the window, `mdev_max`, which starts
//! each window at `tcp_rto_min`, feeds `rttvar`: `rttvar` jumps up to `mdev_max` at once and decays
//! a quarter of the way down to it at the end of each window. So `rttvar >= min_rto` always and
//!
//! `RTO = SRTT + rttvar >= SRTT + min_rto`
//!
//! (`__tcp_set_rto`), capped at `max_rto` (`tcp_bound_rto`). On a 100 ms path the RTO is about
//! 300 ms, where RFC 6298 with a 200 ms floor gives 200 ms, shorter than a fast retransmit takes.
//! The first sample sets `SRTT = R`, `mdev = 2R` and `rttvar = max(2R, min_rto)`, so
//! `RTO = max(3R, R + min_rto)`. [`RttEstimator::rttvar`] reports `mdev / 4`, the RFC's RTTVAR
//! (what the kernel's `tcp_info.tcpi_rttvar` reports).
//!
//! **RFC 6298** ([`RtoEstimator::Rfc6298`]):
//! - §2.2 first sample: `SRTT = R`, `RTTVAR = R/2`.
//! - §2.3 later samples: `RTTVAR = (1 - beta) RTTVAR + beta |SRTT - R|`,
//!   `SRTT = (1 - alpha) SRTT + alpha R` with alpha = 1/8, beta = 1/4.
//! - `RTO = SRTT + max(G, K * RTTVAR)`, K = 4, clock granularity G = 1 ms, then floored at
//!   `min_rto` (§2.4 says 1 s; Linux's 200 ms is our default) and capped at `max_rto` (§2.5).
//!
//! Both: §5.5 exponential backoff on expiry; the backoff is kept until a new sample arrives
//! (§5.7 and Karn's algorithm, §3; Linux clears `icsk_backoff` in `tcp_ack_update_rtt`). Before
//! any sample the RTO is `initial_rto` (§2.1: 1 s; Linux `TCP_TIMEOUT_INIT`).

use celltcp_engine::SimDuration;

/// Clock granularity G (RFC 6298 §2.2; our TCP timestamp clock ticks in ms).
pub const CLOCK_GRANULARITY: SimDuration = SimDuration::from_millis(1);
/// K (RFC 6298 §2.2).
pub const K: u64 = 4;
/// Largest backoff exponent we apply (2^16 times the base is beyond any `max_rto`).
const MAX_BACKOFF: u32 = 16;

/// How the RTO is computed from the RTT samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoEstimator {
    /// Linux `tcp_rtt_estimator` + `__tcp_set_rto`: RTO = SRTT + rttvar, rttvar >= `min_rto`.
    #[default]
    Linux,
    /// RFC 6298 §2: RTO = max(`min_rto`, SRTT + max(G, 4·RTTVAR)) (ns-3's `RttMeanDeviation`).
    Rfc6298,
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    mode: RtoEstimator,
    srtt: Option<SimDuration>,
    /// RFC 6298 mode: RTTVAR. Linux mode: `rttvar_us`, the smoothed `mdev_max` (>= `min_rto`).
    rttvar: SimDuration,
    /// Linux `mdev_us`: 4 x the smoothed mean deviation.
    mdev: SimDuration,
    /// Linux `mdev_max_us`: the largest `mdev` in the current window of data.
    mdev_max: SimDuration,
    /// Linux `rtt_seq`: SND.NXT when the current window of data began.
    rtt_seq: u64,
    latest: SimDuration,
    min_rtt: SimDuration,
    base_rto: SimDuration,
    backoff: u32,
    min_rto: SimDuration,
    max_rto: SimDuration,
}

impl RttEstimator {
    pub fn new(initial_rto: SimDuration, min_rto: SimDuration, max_rto: SimDuration) -> Self {
        Self::with_mode(RtoEstimator::Linux, initial_rto, min_rto, max_rto)
    }

    pub fn with_mode(
        mode: RtoEstimator,
        initial_rto: SimDuration,
        min_rto: SimDuration,
        max_rto: SimDuration,
    ) -> Self {
        RttEstimator {
            mode,
            srtt: None,
            rttvar: SimDuration::ZERO,
            mdev: SimDuration::ZERO,
            mdev_max: SimDuration::ZERO,
            rtt_seq: 0,
            latest: SimDuration::ZERO,
            min_rtt: SimDuration::MAX,
            base_rto: initial_rto,
            backoff: 0,
            min_rto,
            max_rto,
        }
    }

    /// Feeds one RTT measurement and clears the backoff (RFC 6298 §5.7). `snd_una` and `snd_nxt`
    /// (absolute offsets) delimit Linux's per-window `mdev_max` tracking; RFC 6298 mode ignores
    /// them.
    pub fn on_sample(&mut self, r: SimDuration, snd_una: u64, snd_nxt: u64) {
        self.latest = r;
        self.min_rtt = self.min_rtt.min(r);
        match self.mode {
            RtoEstimator::Linux => self.linux_sample(r, snd_una, snd_nxt),
            RtoEstimator::Rfc6298 => self.rfc_sample(r),
        }
        self.backoff = 0;
    }

    /// `tcp_rtt_estimator` then `__tcp_set_rto` / `tcp_bound_rto`.
    fn linux_sample(&mut self, r: SimDuration, snd_una: u64, snd_nxt: u64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.mdev = r * 2; // "make sure rto = 3*rtt"
                self.rttvar = self.mdev.max(self.min_rto);
                self.mdev_max = self.rttvar;
                self.rtt_seq = snd_nxt;
            }
            Some(s) => {
                let (r_ns, s_ns) = (r.0 as i128, s.0 as i128);
                let err = r_ns - s_ns;
                let srtt = (s_ns + err / 8).max(1);
                let quarter = self.mdev.0 as i128 / 4;
                let mut m = err.abs() - quarter;
                if err < 0 && m > 0 {
                    // RTT fell: the deviation grows with gain 1/32 only.
                    m /= 8;
                }
                self.mdev = SimDuration((self.mdev.0 as i128 + m).max(0) as u64);
                if self.mdev > self.mdev_max {
                    self.mdev_max = self.mdev;
                    self.rttvar = self.rttvar.max(self.mdev_max);
                }
                if snd_una > self.rtt_seq {
                    // A window of data has passed: rttvar decays a quarter towards mdev_max.
                    if self.mdev_max < self.rttvar {
                        self.rttvar = self.rttvar - (self.rttvar - self.mdev_max) / 4;
                    }
                    self.rtt_seq = snd_nxt;
                    self.mdev_max = self.min_rto;
                }
                self.srtt = Some(SimDuration(srtt as u64));
            }
        }
        let s = self.srtt.unwrap_or(r);
        self.base_rto = (s + self.rttvar).min(self.max_rto);
    }

    /// RFC 6298 §2.2-§2.4.
    fn rfc_sample(&mut self, r: SimDuration) {
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

    /// RFC 6298's RTTVAR (Linux mode: `mdev / 4`, as `tcp_info.tcpi_rttvar`).
    pub fn rttvar(&self) -> SimDuration {
        match self.mode {
            RtoEstimator::Linux => self.mdev / 4,
            RtoEstimator::Rfc6298 => self.rttvar,
        }
    }

    pub fn mode(&self) -> RtoEstimator {
        self.mode
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

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn us(x: u64) -> SimDuration {
        SimDuration::from_micros(x)
    }

    fn est() -> RttEstimator {
        RttEstimator::with_mode(RtoEstimator::Rfc6298, ms(1000), ms(200), ms(120_000))
    }

    fn linux() -> RttEstimator {
        RttEstimator::new(ms(1000), ms(200), ms(120_000))
    }

    // ------------------------------------------------------------------ RFC 6298 mode

    #[test]
    fn rtt_initial_rto_is_one_second() {
        // RFC 6298 §2.1
        assert_eq!(est().rto(), ms(1000));
        assert_eq!(linux().rto(), ms(1000));
    }

    #[test]
    fn rtt_first_sample_sets_srtt_and_half_rttvar() {
        // RFC 6298 §2.2: RTO = R + 4 * R/2 = 3R (floored at min_rto)
        let mut e = est();
        e.on_sample(ms(100), 0, 0);
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(300));
        let mut e = est();
        e.on_sample(ms(10), 0, 0);
        assert_eq!(e.rto(), ms(200), "floored at min_rto");
    }

    #[test]
    fn rtt_ewma_uses_alpha_eighth_beta_quarter() {
        // RFC 6298 §2.3
        let mut e = est();
        e.on_sample(ms(100), 0, 0);
        e.on_sample(ms(200), 0, 0);
        // rttvar = 3/4*50 + 1/4*100 = 62.5; srtt = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar(), us(62_500));
        assert_eq!(e.srtt(), Some(us(112_500)));
        assert_eq!(e.rto(), us(112_500 + 250_000));
    }

    #[test]
    fn rtt_backoff_doubles_caps_and_clears_on_sample() {
        // RFC 6298 §5.5 and §2.5
        for mut e in [est(), linux()] {
            e.on_sample(ms(100), 0, 0);
            e.backoff();
            assert_eq!(e.rto(), ms(600));
            for _ in 0..20 {
                e.backoff();
            }
            assert_eq!(e.rto(), ms(120_000));
            e.on_sample(ms(100), 0, 0);
            assert_eq!(e.backoff_count(), 0);
        }
    }

    // ------------------------------------------------------------------ Linux mode

    #[test]
    fn linux_rto_first_sample_is_max_of_3r_and_r_plus_rto_min() {
        // tcp_rtt_estimator, no previous measure: mdev = 2R, rttvar = max(mdev, tcp_rto_min).
        let mut e = linux();
        e.on_sample(ms(100), 0, 10);
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50), "reported as mdev/4, like tcpi_rttvar");
        assert_eq!(e.rto(), ms(300));
        let mut e = linux();
        e.on_sample(ms(10), 0, 10);
        // RFC 6298 with a 200 ms floor gives 200 ms; Linux SRTT + rto_min = 210 ms.
        assert_eq!(e.rto(), ms(210));
    }

    #[test]
    fn linux_rto_steady_path_converges_to_srtt_plus_rto_min() {
        // __tcp_set_rto: RTO = SRTT + rttvar and rttvar never falls below tcp_rto_min, so on a
        // steady 100 ms path the RTO settles at 300 ms (RFC 6298: 200 ms, the floor).
        let (mut l, mut r) = (linux(), est());
        let mut nxt = 0;
        for k in 0..400u64 {
            nxt += 10;
            let una = if k % 10 == 0 { nxt - 5 } else { nxt - 20 }; // a window passes every 10 samples
            l.on_sample(ms(100), una, nxt);
            r.on_sample(ms(100), una, nxt);
            assert!(l.rto() >= ms(300), "sample {k}: rto {}", l.rto());
        }
        assert_eq!(l.rto(), ms(300));
        assert_eq!(r.rto(), ms(200));
    }

    #[test]
    fn linux_rto_rtt_decrease_moves_mdev_with_gain_one_32nd() {
        // tcp_rtt_estimator: for a sample below SRTT, m = |err| - mdev/4 and, if positive, m/8
        // (gain 1/32 instead of 1/4).
        let mut down = linux();
        down.on_sample(ms(100), 0, 10); // mdev 200 ms
        down.on_sample(ms(20), 0, 10); // err -80: m = 80 - 50 = 30 -> 3.75
        assert_eq!(down.srtt(), Some(ms(90)));
        assert_eq!(down.rttvar(), SimDuration(203_750_000 / 4));
        assert_eq!(down.rto(), us(90_000 + 203_750));
        let mut up = linux();
        up.on_sample(ms(100), 0, 10);
        up.on_sample(ms(180), 0, 10); // err +80: m = 30 -> mdev 230
        assert_eq!(up.srtt(), Some(ms(110)));
        assert_eq!(up.rto(), ms(110 + 230));
    }

    #[test]
    fn linux_rto_rttvar_follows_mdev_max_and_decays_per_window() {
        // tcp_rtt_estimator: rttvar jumps up to mdev_max at once and, each time SND.UNA passes
        // rtt_seq, decays by (rttvar - mdev_max) / 4; mdev_max restarts at tcp_rto_min.
        let mut e = linux();
        e.on_sample(ms(400), 0, 10); // mdev 800, rttvar 800, mdev_max 800, rtt_seq 10
        e.on_sample(ms(400), 5, 10); // same window: mdev 600
        assert_eq!(e.rto(), ms(1200));
        e.on_sample(ms(400), 11, 20); // mdev 450; mdev_max 800 == rttvar: no decay; restart
        assert_eq!(e.rto(), ms(1200));
        e.on_sample(ms(400), 21, 30); // mdev 337.5 = mdev_max; rttvar -= (800 - 337.5) / 4
        assert_eq!(e.rto(), us(400_000 + 684_375));
        // a jump in the deviation raises rttvar at once, within the window
        e.on_sample(ms(1400), 22, 30); // err +1000: mdev = 337.5 + 1000 - 84.375
        assert_eq!(e.srtt(), Some(ms(525)));
        assert_eq!(e.rto(), us(525_000 + 1_253_125));
    }
}
