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

/// One step of the loop with what happened before it: the `emu.worst_steps` trace. A step's
/// lateness is at most the wall time since the previous turn started (the event was not due
/// then), so it splits into the previous turn's own work (`prev_*`) and the `gap` after it, which
/// holds the sleep the turn asked for (`asked`) and any time the thread did not run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Simulated (= wall) time of the step.
    pub at_ns: u64,
    pub late_ns: u64,
    /// Wall time from the end of the previous turn to the start of this one.
    pub gap_ns: u64,
    /// The sleep the previous turn asked for (0: none, it went on or spun).
    pub asked_ns: u64,
    /// The previous turn's parts: starting programs, running events, writing to the devices,
    /// reading them.
    pub prev_spawn_ns: u64,
    pub prev_step_ns: u64,
    pub prev_write_ns: u64,
    pub prev_read_ns: u64,
    pub prev_events: u64,
    pub prev_written: u64,
    pub prev_read: u64,
    /// Involuntary context switches of the loop's thread (preemptions) since the last check,
    /// at most 10 ms before the previous turn.
    pub preempted: u64,
}

impl Step {
    pub fn to_json(&self) -> serde_json::Value {
        let us = |ns: u64| (ns as f64 / 1e3 * 10.0).round() / 10.0;
        serde_json::json!({
            "at_s": self.at_ns as f64 / 1e9,
            "late_us": us(self.late_ns),
            "gap_us": us(self.gap_ns),
            "asked_sleep_us": us(self.asked_ns),
            "prev_spawn_us": us(self.prev_spawn_ns),
            "prev_step_us": us(self.prev_step_ns),
            "prev_write_us": us(self.prev_write_ns),
            "prev_read_us": us(self.prev_read_ns),
            "prev_events": self.prev_events,
            "prev_written": self.prev_written,
            "prev_read": self.prev_read,
            "preempted": self.preempted,
        })
    }
}

/// The `k` latest steps (ties: the earlier kept), latest first (the default keeps none).
#[derive(Clone, Debug, Default)]
pub struct Worst {
    k: usize,
    steps: Vec<Step>,
}

impl Worst {
    pub fn new(k: usize) -> Self {
        Worst { k, steps: Vec::with_capacity(k + 1) }
    }

    /// Whether a step `late_ns` late would be kept (to skip gathering its context otherwise).
    pub fn wants(&self, late_ns: u64) -> bool {
        self.k > 0 && (self.steps.len() < self.k || self.steps.last().is_some_and(|s| late_ns > s.late_ns))
    }

    pub fn offer(&mut self, s: Step) {
        if !self.wants(s.late_ns) {
            return;
        }
        let i = self.steps.partition_point(|x| x.late_ns >= s.late_ns);
        self.steps.insert(i, s);
        self.steps.truncate(self.k);
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Array(self.steps.iter().map(Step::to_json).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_keeps_the_k_latest_steps_latest_first() {
        // a reference: sort all and take the first k (stable: the earlier of equal ones first)
        let lates = [5u64, 1, 9, 9, 3, 12, 0, 7, 12, 2, 8];
        let mut w = Worst::new(4);
        for (i, &l) in lates.iter().enumerate() {
            w.offer(Step { at_ns: i as u64, late_ns: l, ..Step::default() });
        }
        let mut all: Vec<(u64, u64)> = lates.iter().enumerate().map(|(i, &l)| (l, i as u64)).collect();
        all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let got: Vec<(u64, u64)> = w.steps().iter().map(|s| (s.late_ns, s.at_ns)).collect();
        assert_eq!(got, all[..4].to_vec());
        assert!(!w.wants(9), "not later than the 4th latest (9)");
        assert!(w.wants(10));
        assert!(!Worst::new(0).wants(u64::MAX));
        w.offer(Step { late_ns: 52_947_919, gap_ns: 512, ..Step::default() });
        assert_eq!(w.steps().len(), 4);
        assert_eq!(w.to_json()[0]["late_us"], serde_json::json!(52947.9));
        assert_eq!(w.to_json()[0]["gap_us"], serde_json::json!(0.5));
    }

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
