//! Windowed running min/max filter (Kathleen Nichols' algorithm, as described for Linux
//! `lib/win_minmax.c` and used by BBR for BtlBw, draft-cardwell-iccrg-bbr-congestion-control-00
//! §4.1.1 "BtlBw max filter").
//!
//! The filter keeps the best, second-best and third-best samples of the window, each with its
//! time. A new sample that beats the best (or arrives after the whole window has gone by) resets
//! all three; otherwise it replaces the second or third when it beats them. Ageing is handled by
//! sub-windows: when the best is older than the window the others move up, and when the second
//! (third) is still the same sample as the best (second) after a quarter (half) window it is
//! replaced by the newest sample, so the estimate is always from within the window and the
//! state is O(1).
//!
//! Time is an abstract `u64` (round count for BtlBw, nanoseconds for a time-based window).

#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Max,
    Min,
}

/// A windowed max (or min) of `f64` samples over `window` time units.
#[derive(Clone, Debug)]
pub struct MinMax {
    window: u64,
    kind: Kind,
    s: [Sample; 3],
    empty: bool,
}

impl MinMax {
    /// A running maximum over `window`.
    pub fn new_max(window: u64) -> Self {
        MinMax {
            window,
            kind: Kind::Max,
            s: [Sample { t: 0, v: 0.0 }; 3],
            empty: true,
        }
    }

    /// A running minimum over `window`.
    pub fn new_min(window: u64) -> Self {
        MinMax {
            window,
            kind: Kind::Min,
            s: [Sample { t: 0, v: 0.0 }; 3],
            empty: true,
        }
    }

    /// The current best (max or min) estimate; `None` before the first sample.
    pub fn get(&self) -> Option<f64> {
        (!self.empty).then_some(self.s[0].v)
    }

    /// Forget everything.
    pub fn reset(&mut self) {
        self.empty = true;
    }

    /// `a` is at least as good as `b`.
    fn better_eq(&self, a: f64, b: f64) -> bool {
        match self.kind {
            Kind::Max => a >= b,
            Kind::Min => a <= b,
        }
    }

    /// Add sample `v` taken at time `t` (non-decreasing) and return the new estimate.
    pub fn update(&mut self, t: u64, v: f64) -> f64 {
        let val = Sample { t, v };
        if self.empty
            || self.better_eq(v, self.s[0].v)
            || t.saturating_sub(self.s[2].t) > self.window
        {
            // A new best, or nothing left in the window: restart.
            self.s = [val; 3];
            self.empty = false;
            return v;
        }
        if self.better_eq(v, self.s[1].v) {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.better_eq(v, self.s[2].v) {
            self.s[2] = val;
        }
        self.subwin_update(val)
    }

    fn subwin_update(&mut self, val: Sample) -> f64 {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > self.window {
            // The best has aged out: promote the second and third, the newest becomes third.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.saturating_sub(self.s[0].t) > self.window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > self.window / 4 {
            // A quarter window passed without a new second choice: take one from this window.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > self.window / 2 {
            // Half a window passed without a new third choice.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact windowed max by brute force over the samples with `t >= now - window`.
    fn brute_max(hist: &[(u64, f64)], now: u64, window: u64) -> f64 {
        hist.iter()
            .filter(|(t, _)| now - t <= window)
            .map(|&(_, v)| v)
            .fold(f64::MIN, f64::max)
    }

    #[test]
    fn minmax_max_holds_then_expires_after_window() {
        // The best sample is kept for the whole window, and dropped once it is older than it.
        let mut f = MinMax::new_max(10);
        assert_eq!(f.get(), None);
        assert_eq!(f.update(0, 100.0), 100.0);
        for t in 1..=10 {
            assert_eq!(f.update(t, 50.0), 100.0, "t={t}");
        }
        assert_eq!(f.update(11, 50.0), 50.0);
    }

    #[test]
    fn minmax_new_best_resets() {
        let mut f = MinMax::new_max(10);
        f.update(0, 10.0);
        f.update(1, 5.0);
        assert_eq!(f.update(2, 20.0), 20.0);
        assert_eq!(f.update(12, 1.0), 20.0);
        assert_eq!(f.update(13, 1.0), 1.0);
    }

    #[test]
    fn minmax_second_best_takes_over() {
        // After the best ages out, the second best from inside the window is the estimate, not
        // the newest sample.
        let mut f = MinMax::new_max(10);
        f.update(0, 100.0);
        f.update(3, 80.0);
        for t in 4..=10 {
            f.update(t, 10.0);
        }
        assert_eq!(f.update(11, 10.0), 80.0);
    }

    #[test]
    fn minmax_never_reports_a_value_from_outside_the_window() {
        // The estimate is always a sample from within the window and never more than the true
        // windowed max (Nichols' filter may under-estimate between sub-window refreshes).
        let mut f = MinMax::new_max(10);
        let mut hist = Vec::new();
        let mut x: u64 = 12345;
        for t in 0..500u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((x >> 33) % 1000) as f64;
            hist.push((t, v));
            let est = f.update(t, v);
            let within: Vec<f64> = hist
                .iter()
                .filter(|(s, _)| t - s <= 10)
                .map(|&(_, v)| v)
                .collect();
            assert!(within.contains(&est), "t={t}: {est} not from the window");
            assert!(est <= brute_max(&hist, t, 10));
        }
    }

    #[test]
    fn minmax_min_filter() {
        let mut f = MinMax::new_min(5);
        f.update(0, 3.0);
        assert_eq!(f.update(1, 7.0), 3.0);
        assert_eq!(f.update(2, 1.0), 1.0);
        assert_eq!(f.update(8, 9.0), 9.0);
    }
}
