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
    let mult = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(err()),
    };
    if !v.is_finite() || v < 0.0 {
        return Err(format!("expected a non-negative duration, got {s:?}"));
    }
    Ok(SimDuration::from_secs_f64(v * mult))
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
    Ok((v * mult).round() as u64)
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
