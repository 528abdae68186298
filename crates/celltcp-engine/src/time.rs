//! Simulated time as integer nanoseconds.
//!
//! `SimTime` is an instant since the start of the run, `SimDuration` a span. Both are `u64`
//! nanoseconds (about 584 years of range), so arithmetic is exact and every run is reproducible;
//! floats appear only at the edges (rates, reports).

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// An instant of simulated time, nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct SimTime(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later (never panics).
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_finite() && s > 0.0 {
            SimDuration((s * 1e9).round() as u64)
        } else {
            SimDuration(0)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    /// Time to serialise `bytes` at `rate_bps` bits per second, rounded up to a nanosecond.
    #[inline]
    pub fn transmission(bytes: u64, rate_bps: u64) -> Self {
        debug_assert!(rate_bps > 0);
        // bytes · 8e9 fits a u64 below 2^64 / 8e9 ≈ 2.3 GB, so every packet takes the 64-bit
        // division (a 128-bit one is a library call); the result is the same either way.
        if bytes <= u64::MAX / 8_000_000_000 {
            SimDuration((bytes * 8_000_000_000).div_ceil(rate_bps))
        } else {
            let bits = bytes as u128 * 8 * 1_000_000_000;
            SimDuration(bits.div_ceil(rate_bps as u128) as u64)
        }
    }
    pub fn saturating_sub(self, o: SimDuration) -> Self {
        SimDuration(self.0.saturating_sub(o.0))
    }
    pub fn mul_f64(self, k: f64) -> Self {
        SimDuration::from_secs_f64(self.as_secs_f64() * k)
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimDuration> for SimTime {
    type Output = SimTime;
    fn sub(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_sub(d.0))
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Saturates at zero.
    fn sub(self, o: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(o.0))
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(o.0))
    }
}
impl AddAssign for SimDuration {
    fn add_assign(&mut self, o: SimDuration) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(o.0))
    }
}
impl SubAssign for SimDuration {
    fn sub_assign(&mut self, o: SimDuration) {
        self.0 = self.0.saturating_sub(o.0);
    }
}
impl Mul<u64> for SimDuration {
    type Output = SimDuration;
    fn mul(self, k: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(k))
    }
}
impl Div<u64> for SimDuration {
    type Output = SimDuration;
    fn div(self, k: u64) -> SimDuration {
        SimDuration(self.0 / k)
    }
}

fn fmt_ns(ns: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    // exact decimal digits (no f64), so that the printed value parses back to the same count
    let (unit_ns, unit) = if ns >= 1_000_000_000 && ns.is_multiple_of(1_000_000) {
        (1_000_000_000, "s")
    } else if ns >= 1_000_000 {
        (1_000_000, "ms")
    } else if ns >= 1_000 {
        (1_000, "us")
    } else {
        return write!(f, "{ns}ns");
    };
    let (int, frac) = (ns / unit_ns, ns % unit_ns);
    if frac == 0 {
        return write!(f, "{int}{unit}");
    }
    let width = unit_ns.ilog10() as usize;
    let digits = format!("{frac:0width$}");
    write!(f, "{int}.{}{unit}", digits.trim_end_matches('0'))
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ns(self.0, f)
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ns(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_of_a_full_frame_at_10mbps() {
        // 1500 B * 8 / 10e6 = 1.2 ms exactly.
        assert_eq!(SimDuration::transmission(1500, 10_000_000), SimDuration::from_micros(1200));
        // rounds up: 1 byte at 3 bit/s = 2.666..s
        assert_eq!(SimDuration::transmission(1, 3).0, 2_666_666_667);
        // the 64-bit and 128-bit paths agree at their boundary and beyond
        let edge = u64::MAX / 8_000_000_000;
        for bytes in [edge - 1, edge, edge + 1, 1 << 40] {
            for rate in [1u64, 3, 10_000_000, 999_999_937, u64::MAX] {
                let exact = (bytes as u128 * 8_000_000_000).div_ceil(rate as u128);
                if exact <= u64::MAX as u128 {
                    assert_eq!(SimDuration::transmission(bytes, rate).0 as u128, exact, "{bytes} B at {rate} bit/s");
                }
            }
        }
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(SimTime::from_millis(1) - SimTime::from_millis(2), SimDuration::ZERO);
        assert_eq!(SimTime::MAX + SimDuration::from_secs(1), SimTime::MAX);
    }

    #[test]
    fn display_uses_units() {
        assert_eq!(SimTime::from_millis(1500).to_string(), "1.5s");
        assert_eq!(SimTime::from_micros(2500).to_string(), "2.5ms");
        assert_eq!(SimTime::from_secs(2).to_string(), "2s");
        assert_eq!(SimDuration::from_micros(40).to_string(), "40us");
    }
}
