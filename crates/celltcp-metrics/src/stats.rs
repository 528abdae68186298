//! Streaming summary statistics in bounded memory: exact count, mean, min and max, and
//! quantiles from a log-linear histogram.
//!
//! [`LogHistogram`] is the HdrHistogram / DDSketch idea in its simplest form: a positive f64's
//! bucket is its IEEE 754 exponent and the top [`SUB_BUCKET_BITS`] bits of its mantissa, i.e.
//! `bits >> (52 − SUB_BUCKET_BITS)`, so each power of two is split into 2^SUB_BUCKET_BITS equal
//! buckets and no logarithm is computed per sample. A bucket `[lo, hi)` has
//! `hi − lo ≤ lo · 2^−SUB_BUCKET_BITS`; reporting its midpoint errs by at most
//! [`RELATIVE_ERROR`] = 2^−(SUB_BUCKET_BITS+1) of the true value (about 0.39%). Negative values
//! go to a mirror histogram and zeros to a counter, with the same bound (for an interpolation
//! between two samples of one sign; RTTs and delays are never negative).
//!
//! Quantiles interpolate linearly between the two closest ranks (numpy's default, as the
//! exact [`percentile`] does on sorted data); since each order statistic is within the bound
//! and interpolation is a convex combination, so is the interpolated value. Estimates are
//! also clamped to the exact `[min, max]`. Histograms merge by adding counts (per-flow
//! sketches can be pooled).
//!
//! Memory: one `u64` per bucket between the smallest and largest bucket seen, i.e. 128 per
//! factor of two of spread (a spread of 1 µs to 100 s is 27 octaves, 28 KiB), whatever the
//! number of samples.

/// Mantissa bits kept in a bucket index: 2^7 = 128 buckets per power of two.
pub const SUB_BUCKET_BITS: u32 = 7;

/// The largest relative error of a quantile estimate: 2^−8 ≈ 0.0039.
pub const RELATIVE_ERROR: f64 = 1.0 / (1u64 << (SUB_BUCKET_BITS + 1)) as f64;

const SHIFT: u32 = 52 - SUB_BUCKET_BITS;

/// Percentile by linear interpolation between closest ranks (numpy's default), on sorted
/// data: the exact reference for [`StreamStats::percentile`].
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64))
}

/// Counts of positive values per log-linear bucket (see the module doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogHistogram {
    /// Bucket index of `counts[0]`.
    first: u64,
    counts: Vec<u64>,
    total: u64,
}

impl LogHistogram {
    /// The bucket of a positive, finite or infinite `x`.
    #[inline]
    fn bucket(x: f64) -> u64 {
        x.to_bits() >> SHIFT
    }

    /// The midpoint of bucket `b`.
    fn value(b: u64) -> f64 {
        let lo = f64::from_bits(b << SHIFT);
        let hi = f64::from_bits((b + 1) << SHIFT);
        if hi.is_finite() {
            lo + (hi - lo) / 2.0
        } else {
            lo
        }
    }

    /// Adds a positive value (the caller routes zeros, negatives and NaN elsewhere).
    #[inline]
    pub fn add(&mut self, x: f64) {
        self.add_n(Self::bucket(x), 1);
    }

    fn add_n(&mut self, b: u64, n: u64) {
        if self.counts.is_empty() {
            self.first = b;
            self.counts.push(0);
        } else if b < self.first {
            let grow = (self.first - b) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = b;
        } else if b >= self.first + self.counts.len() as u64 {
            self.counts.resize((b - self.first) as usize + 1, 0);
        }
        self.counts[(b - self.first) as usize] += n;
        self.total += n;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// Buckets held (the memory it takes, in `u64`s).
    pub fn buckets(&self) -> usize {
        self.counts.len()
    }

    /// The estimate of the `k`-th smallest value (0-based), `k < count()`.
    pub fn value_at_rank(&self, k: u64) -> f64 {
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if k < seen {
                return Self::value(self.first + i as u64);
            }
        }
        panic!("rank {k} of {} values", self.total)
    }

    /// Adds `other`'s counts to this one.
    pub fn merge(&mut self, other: &LogHistogram) {
        for (i, &c) in other.counts.iter().enumerate() {
            if c > 0 {
                self.add_n(other.first + i as u64, c);
            }
        }
    }
}

/// Count, mean, min, max and quantiles of a stream of samples, in bounded memory.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamStats {
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
    pos: LogHistogram,
    /// Magnitudes of the negative samples.
    neg: LogHistogram,
    zeros: u64,
}

impl Default for StreamStats {
    fn default() -> Self {
        StreamStats { n: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY, pos: LogHistogram::default(), neg: LogHistogram::default(), zeros: 0 }
    }
}

impl StreamStats {
    /// Adds a sample; NaN is ignored.
    #[inline]
    pub fn add(&mut self, x: f64) {
        if x.is_nan() {
            return;
        }
        self.n += 1;
        self.sum += x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        if x > 0.0 {
            self.pos.add(x);
        } else if x < 0.0 {
            self.neg.add(-x);
        } else {
            self.zeros += 1;
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The exact mean (samples summed in arrival order), `None` without samples.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    /// The exact smallest sample.
    pub fn min(&self) -> Option<f64> {
        (self.n > 0).then_some(self.min)
    }

    /// The exact largest sample.
    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }

    /// The estimate of the `k`-th smallest sample (0-based), within [`RELATIVE_ERROR`].
    fn value_at_rank(&self, k: u64) -> f64 {
        let nneg = self.neg.count();
        let v = if k < nneg {
            -self.neg.value_at_rank(nneg - 1 - k)
        } else if k < nneg + self.zeros {
            0.0
        } else {
            self.pos.value_at_rank(k - nneg - self.zeros)
        };
        v.clamp(self.min, self.max)
    }

    /// The `p`-th percentile (0–100), interpolated between the closest ranks like
    /// [`percentile`]; within [`RELATIVE_ERROR`] of the exact value. `None` without samples.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = p.clamp(0.0, 100.0) / 100.0 * (self.n - 1) as f64;
        let lo = rank.floor() as u64;
        let hi = rank.ceil() as u64;
        let (a, b) = (self.value_at_rank(lo), self.value_at_rank(hi));
        Some(a + (b - a) * (rank - lo as f64))
    }

    /// Pools `other`'s samples into this one.
    pub fn merge(&mut self, other: &StreamStats) {
        self.n += other.n;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.pos.merge(&other.pos);
        self.neg.merge(&other.neg);
        self.zeros += other.zeros;
    }

    /// Buckets held by both histograms (its memory, in `u64`s).
    pub fn buckets(&self) -> usize {
        self.pos.buckets() + self.neg.buckets()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: a small, fixed generator so the test samples do not depend on a crate.
    struct Rng(u64);
    impl Rng {
        fn unit(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
    }

    fn check_against_exact(samples: &[f64]) -> f64 {
        let mut st = StreamStats::default();
        for &x in samples {
            st.add(x);
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut worst: f64 = 0.0;
        for p in [0.0, 1.0, 5.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
            let exact = percentile(&sorted, p).unwrap();
            let est = st.percentile(p).unwrap();
            let rel = (est - exact).abs() / exact.abs().max(f64::MIN_POSITIVE);
            assert!(rel <= RELATIVE_ERROR * (1.0 + 1e-9) || est == exact, "p{p}: estimate {est}, exact {exact}, relative error {rel}");
            worst = worst.max(rel);
        }
        assert_eq!(st.min(), sorted.first().copied());
        assert_eq!(st.max(), sorted.last().copied());
        assert_eq!(st.count(), samples.len() as u64);
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        assert!((st.mean().unwrap() - mean).abs() <= 1e-12 * mean.abs());
        worst
    }

    /// Quantiles of 200,000 exponential RTT-like samples (mean 40 ms, inverse-CDF sampling)
    /// against the exact sample percentiles: every estimate within 2^−8, and the bound is
    /// not vacuous (some estimate does err, by more than a tenth of it).
    #[test]
    fn quantiles_within_bound_on_exponential() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let v: Vec<f64> = (0..200_000).map(|_| 20.0 - 40.0 * rng.unit().ln()).collect();
        let worst = check_against_exact(&v);
        assert!(worst > RELATIVE_ERROR / 10.0, "worst {worst}");
    }

    /// Log-normal samples spread over six decades, and f32-rounded values as the run records.
    #[test]
    fn quantiles_within_bound_on_wide_lognormal() {
        let mut rng = Rng(12345);
        let v: Vec<f64> = (0..100_000)
            .map(|_| {
                // Box–Muller
                let z = (-2.0 * rng.unit().ln()).sqrt() * (2.0 * std::f64::consts::PI * rng.unit()).cos();
                f64::from((2.0 * z).exp() as f32)
            })
            .collect();
        check_against_exact(&v);
    }

    /// The standard uniform on [0, 1): the p-th percentile of the distribution is p/100, and
    /// with 10^6 samples the estimate is that within the sketch bound plus sampling error.
    #[test]
    fn uniform_percentiles_match_the_distribution() {
        let mut rng = Rng(7);
        let mut st = StreamStats::default();
        for _ in 0..1_000_000 {
            st.add(rng.unit());
        }
        for p in [10.0, 50.0, 95.0, 99.0] {
            let q = p / 100.0;
            assert!((st.percentile(p).unwrap() - q).abs() <= q * RELATIVE_ERROR + 0.003, "p{p}: {}", st.percentile(p).unwrap());
        }
    }

    #[test]
    fn negatives_zeros_and_small_samples() {
        check_against_exact(&[-5.0, -1.0, 0.0, 0.0, 2.0, 3.0, 1000.0]);
        check_against_exact(&[-3.0, -2.0, -1.0]);
        // one sample: every percentile is that sample (clamped to the exact min = max)
        let mut st = StreamStats::default();
        st.add(41.7);
        assert_eq!(st.percentile(95.0), Some(41.7));
        assert_eq!(StreamStats::default().percentile(50.0), None);
        assert_eq!(StreamStats::default().mean(), None);
        st.add(f64::NAN);
        assert_eq!(st.count(), 1);
    }

    /// Merging two halves gives the histogram of the whole.
    #[test]
    fn merge_equals_one_stream() {
        let mut rng = Rng(99);
        let v: Vec<f64> = (0..10_000).map(|_| rng.unit() * 100.0 - 10.0).collect();
        let (mut a, mut b, mut all) = (StreamStats::default(), StreamStats::default(), StreamStats::default());
        for (i, &x) in v.iter().enumerate() {
            all.add(x);
            if i % 3 == 0 { a.add(x) } else { b.add(x) }
        }
        a.merge(&b);
        for p in [1.0, 50.0, 99.0] {
            assert_eq!(a.percentile(p), all.percentile(p));
        }
        assert_eq!((a.count(), a.min(), a.max()), (all.count(), all.min(), all.max()));
    }

    /// Memory does not grow with the number of samples, only with their spread.
    #[test]
    fn memory_bounded_by_spread_not_count() {
        let mut st = StreamStats::default();
        let mut rng = Rng(3);
        for _ in 0..1_000_000 {
            st.add(10.0 + 90.0 * rng.unit()); // within [10, 100): under 4 octaves
        }
        assert!(st.buckets() <= 4 * 128 + 1, "{}", st.buckets());
    }

    #[test]
    fn percentile_matches_numpy_linear() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), Some(2.5));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&v, 100.0), Some(4.0));
        assert!((percentile(&v, 95.0).unwrap() - 3.85).abs() < 1e-12);
        assert_eq!(percentile(&[], 50.0), None);
    }
}
