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
}
