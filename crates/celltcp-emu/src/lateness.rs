//! Lateness of the real-time loop: how long after its simulated time an event actually ran.
//!
//! One sample per step of the loop: the earliest event the step runs (the latest of its batch,
//! so the statistics are an upper bound over every event), and one per packet written to a TUN
//! device (wall time of the write minus its simulated arrival). Samples go into a log-linear
//! histogram (HdrHistogram-style: 32 linear sub-buckets per power of two, relative error under
//! 1/32), so memory is fixed however long the run; percentiles are by the nearest-rank method.

/// Sub-buckets per power of two.
const SUB: u64 = 32;
const SUB_BITS: u32 = 5;

/// A histogram of nanosecond durations.
#[derive(Clone, Debug)]
pub struct Lateness {
    counts: Vec<u64>,
    n: u64,
    max_ns: u64,
    sum_ns: u128,
    /// Samples later than [`LATE_NS`] (counted exactly, not from the buckets).
    late: u64,
}

/// The lateness beyond which a sample counts as the loop falling behind real time (1 ms).
pub const LATE_NS: u64 = 1_000_000;

impl Default for Lateness {
    fn default() -> Self {
        Lateness { counts: vec![0; (64 * SUB) as usize], n: 0, max_ns: 0, sum_ns: 0, late: 0 }
    }
}

fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let hi = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = hi - SUB_BITS;
    let sub = (v >> shift) - SUB; // 0..SUB
    ((u64::from(hi - SUB_BITS + 1)) * SUB + sub) as usize
}

/// The largest value of bucket `b` (what a percentile in it reports: conservative).
fn bucket_high(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let shift = b / SUB - 1;
    let sub = b % SUB;
    ((SUB + sub + 1) << shift) - 1
}

impl Lateness {
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.n += 1;
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
        self.late += u64::from(ns > LATE_NS);
    }

    /// Samples later than [`LATE_NS`].
    pub fn late(&self) -> u64 {
        self.late
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The `q`-quantile (0..=1) by nearest rank, as the upper edge of its bucket (at most the
    /// maximum); 0 without samples.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_high(b).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// `{"count", "mean_us", "p50_us", "p99_us", "max_us", "late_1ms"}` (`late_1ms`: samples
    /// later than 1 ms).
    pub fn to_json(&self) -> serde_json::Value {
        let us = |ns: u64| ns as f64 / 1e3;
        serde_json::json!({
            "count": self.n,
            "mean_us": if self.n == 0 { 0.0 } else { self.sum_ns as f64 / self.n as f64 / 1e3 },
            "p50_us": us(self.quantile_ns(0.5)),
            "p99_us": us(self.quantile_ns(0.99)),
            "max_us": us(self.max_ns),
            "late_1ms": self.late,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_buckets_cover_values_with_bounded_error() {
        for v in [0u64, 1, 31, 32, 33, 63, 64, 100, 1_000, 65_535, 1 << 40, u64::MAX >> 1] {
            let b = bucket(v);
            let hi = bucket_high(b);
            assert!(hi >= v, "{v} in bucket {b} up to {hi}");
            assert!((hi - v) as f64 <= v as f64 / 32.0 + 1.0, "{v}: {hi}");
            if b > 0 {
                assert!(bucket_high(b - 1) < v, "{v}: bucket {b} starts after the previous one");
            }
        }
    }

    #[test]
    fn lateness_quantiles_match_nearest_rank_on_a_known_sample() {
        // 1..=1000 us: nearest-rank p50 = 500 us, p99 = 990 us (a sorted-list reference)
        let mut l = Lateness::default();
        let mut v: Vec<u64> = (1..=1000u64).map(|u| u * 1000).collect();
        v.reverse();
        for &x in &v {
            l.record(x);
        }
        v.sort_unstable();
        for q in [0.5, 0.99] {
            let want = v[((q * 1000.0_f64).ceil() as usize) - 1];
            let got = l.quantile_ns(q);
            assert!(got >= want && got - want <= want / 32, "q{q}: {got} vs {want}");
        }
        assert_eq!(l.max_ns(), 1_000_000);
        assert_eq!(l.quantile_ns(1.0), 1_000_000);
        assert_eq!(Lateness::default().quantile_ns(0.99), 0);
        assert_eq!(l.late(), 0, "1 ms itself is not later than 1 ms");
        l.record(1_000_001);
        assert_eq!(l.late(), 1);
    }
}
