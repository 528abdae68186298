//! Quantities written with their unit, the way scenario files write them (`"200ms"`, `"10s"`),
//! parsed once here so that model crates' serde configs and the scenario layer read them alike.
//!
//! [`human_duration`] is a `#[serde(with = ...)]` helper for [`SimDuration`] fields of model
//! configs: it writes `"200ms"` and reads a duration with its unit (or integer nanoseconds).

use crate::SimDuration;

/// Splits `"10.5ms"` into `(10.5, "ms")`; `None` when no number leads.
pub fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+' || *c == 'e' || *c == 'E'))
        .map_or(s.len(), |(i, _)| i);
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    Some((v, unit.trim()))
}

/// A non-negative duration such as `"25ms"`, `"1.5s"`, `"100us"` (units ns, us, ms, s, min, h).
pub fn parse_duration(s: &str) -> Result<SimDuration, String> {
    let err = || format!("expected a duration such as \"25ms\", \"1.5s\" or \"100us\" (units ns, us, ms, s, min, h), got {s:?}");
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let unit_ns: u64 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(err()),
    };
    if !v.is_finite() || v < 0.0 {
        return Err(format!("expected a non-negative duration, got {s:?}"));
    }
    let too_long = || format!("expected a duration below 584 years (the clock counts u64 nanoseconds), got {s:?}");
    let fraction = || format!("expected a whole number of nanoseconds (the clock's resolution), got {s:?}");
    // Plain decimals ("12.5ms") are read exactly, so every value the clock can hold round-trips
    // through its printed form; exponents ("1e3ms") go through f64.
    let num = s.trim().strip_suffix(unit).unwrap_or("").trim_end();
    if let Some((int, frac)) = plain_decimal(num) {
        let whole = (int as u128) * unit_ns as u128;
        let scale = 10u128.pow(frac.len() as u32);
        let f: u128 = if frac.is_empty() { 0 } else { frac.parse().map_err(|_| err())? };
        let part = f * unit_ns as u128;
        if part % scale != 0 {
            return Err(fraction());
        }
        let ns = whole + part / scale;
        return u64::try_from(ns).map(SimDuration::from_nanos).map_err(|_| too_long());
    }
    let ns = v * unit_ns as f64;
    // u64 nanoseconds end at 584 years; refuse rather than clamp
    if ns >= u64::MAX as f64 {
        return Err(too_long());
    }
    if (ns - ns.round()).abs() > 1e-3 {
        return Err(fraction());
    }
    Ok(SimDuration::from_nanos(ns.round() as u64))
}

/// `"12.50"` → `(12, "50")`: digits, optionally a point and at most 30 more digits; `None` for
/// anything else (signs, exponents, integer parts beyond u64).
fn plain_decimal(num: &str) -> Option<(u64, &str)> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || frac.len() > 30 {
        return None;
    }
    Some((int.parse().ok()?, frac))
}

/// A size such as `"1500B"`, `"64KB"`, `"4MB"`: `B`, `KB`/`KiB`/`K` = 1024, `MB`/`MiB`/`M` =
/// 1024², `GB`/`GiB`/`G` = 1024³ (binary, as iperf3's `-w 64K` and Linux buffer sizes are);
/// `kB` (lower-case k) is decimal 1000; a bare number is bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let err = || format!("expected a size such as \"1500B\", \"64KB\" or \"4MB\" (units B, KB, MB, GB = 1024-based; kB = 1000), got {s:?}");
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let mult: f64 = match unit {
        "B" | "" => 1.0,
        "kB" => 1e3,
        "K" | "KB" | "KiB" => 1024.0,
        "M" | "MB" | "MiB" => 1024.0 * 1024.0,
        "G" | "GB" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(err()),
    };
    if !v.is_finite() || v < 0.0 {
        return Err(format!("expected a non-negative size, got {s:?}"));
    }
    let b = v * mult;
    if b >= u64::MAX as f64 {
        return Err(format!("expected a size below 16EB, got {s:?}"));
    }
    if (b - b.round()).abs() > 1e-6 {
        return Err(format!("expected a whole number of bytes, got {s:?}"));
    }
    Ok(b.round() as u64)
}

/// A size in bytes as [`parse_bytes`] reads it back: `"4MB"`, `"64KB"`, `"1500B"`.
pub fn format_bytes(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}MB", b >> 20)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}KB", b >> 10)
    } else {
        format!("{b}B")
    }
}

/// `#[serde(with = "celltcp_engine::units::human_bytes")]`: a byte count written `"4MB"` and
/// read from a size with a unit or from an integer.
pub mod human_bytes {
    use std::fmt;

    use serde::{de, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_bytes(*b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = u64;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size such as \"64KB\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<u64, E> {
                super::parse_bytes(s).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, b: u64) -> Result<u64, E> {
                Ok(b)
            }
            fn visit_i64<E: de::Error>(self, b: i64) -> Result<u64, E> {
                u64::try_from(b).map_err(|_| E::custom(format!("expected a non-negative size, got {b}")))
            }
        }
        d.deserialize_any(V)
    }
}

/// `#[serde(with = "celltcp_engine::units::human_duration_opt")]`: an optional [`SimDuration`]
/// written `"200ms"` (absent: `None`; use with `#[serde(default, skip_serializing_if =
/// "Option::is_none")]`).
pub mod human_duration_opt {
    use serde::{Deserializer, Serializer};

    use crate::SimDuration;

    pub fn serialize<S: Serializer>(d: &Option<SimDuration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::human_duration::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SimDuration>, D::Error> {
        super::human_duration::deserialize(d).map(Some)
    }
}

/// `#[serde(with = "celltcp_engine::units::human_duration")]`: a [`SimDuration`] written as
/// `"200ms"` and read from a string with a unit or from integer nanoseconds.
pub mod human_duration {
    use std::fmt;

    use serde::{de, Deserializer, Serializer};

    use crate::SimDuration;

    pub fn serialize<S: Serializer>(d: &SimDuration, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(d)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimDuration, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = SimDuration;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as \"200ms\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<SimDuration, E> {
                super::parse_duration(s).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, ns: u64) -> Result<SimDuration, E> {
                Ok(SimDuration(ns))
            }
            fn visit_i64<E: de::Error>(self, ns: i64) -> Result<SimDuration, E> {
                u64::try_from(ns).map(SimDuration).map_err(|_| E::custom(format!("expected a non-negative duration, got {ns} ns")))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_their_unit_and_print_back() {
        assert_eq!(parse_duration("200ms"), Ok(SimDuration::from_millis(200)));
        assert_eq!(parse_duration("1.5s"), Ok(SimDuration::from_millis(1500)));
        assert_eq!(parse_duration("2min"), Ok(SimDuration::from_secs(120)));
        assert_eq!(SimDuration::from_millis(200).to_string(), "200ms");
        assert_eq!(parse_duration(&SimDuration::from_secs(10).to_string()), Ok(SimDuration::from_secs(10)));
        assert!(parse_duration("5 fortnights").unwrap_err().contains("5 fortnights"));
        assert!(parse_duration("-1s").unwrap_err().contains("non-negative"));
    }

    #[test]
    fn every_duration_round_trips_through_its_printed_form_exactly() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for i in 0..20_000u32 {
            // all magnitudes, from nanoseconds to the clock's end
            let ns: u64 = rng.gen::<u64>() >> (i % 64);
            let d = SimDuration::from_nanos(ns);
            assert_eq!(parse_duration(&d.to_string()), Ok(d), "{ns} ns printed as {d}");
            assert_eq!(parse_duration(&format!("{ns}ns")), Ok(d));
        }
        for ms in [0u64, 1, 50, 999, 1001, 4_294_967_296, 10_000_000_000] {
            assert_eq!(parse_duration(&format!("{ms}ms")), Ok(SimDuration::from_millis(ms)));
        }
    }

    #[test]
    fn durations_the_clock_cannot_hold_are_refused_not_changed() {
        assert!(parse_duration("0.5ns").unwrap_err().contains("whole number of nanoseconds"));
        assert!(parse_duration("1.0000000001s").unwrap_err().contains("whole number of nanoseconds"));
        assert!(parse_duration("1000000000000s").unwrap_err().contains("584 years"));
        assert!(parse_duration("1e30s").unwrap_err().contains("584 years"));
        assert!(parse_duration("18446744073.709551616s").unwrap_err().contains("584 years"));
        assert_eq!(parse_duration("18446744073.709551615s"), Ok(SimDuration::from_nanos(u64::MAX)));
        assert_eq!(parse_duration("1e3ms"), Ok(SimDuration::from_secs(1)));
        assert_eq!(parse_duration("50.5ms"), Ok(SimDuration::from_micros(50_500)));
        assert!(parse_bytes("1.5B").unwrap_err().contains("whole number of bytes"));
        assert!(parse_bytes("1e30GB").unwrap_err().contains("16EB"));
    }

    #[test]
    fn sizes_are_binary_except_lower_case_kb_and_print_back() {
        assert_eq!(parse_bytes("64KB"), Ok(65536));
        assert_eq!(parse_bytes("64K"), Ok(65536));
        assert_eq!(parse_bytes("1kB"), Ok(1000));
        assert_eq!(parse_bytes("4MB"), Ok(4 << 20));
        assert_eq!(parse_bytes("300000B"), Ok(300_000));
        assert_eq!(format_bytes(4 << 20), "4MB");
        assert_eq!(format_bytes(65536), "64KB");
        assert_eq!(format_bytes(25_000), "25000B");
        assert!(parse_bytes("4 parsecs").unwrap_err().contains("4 parsecs"));
    }
}
