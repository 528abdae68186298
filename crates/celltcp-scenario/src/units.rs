//! Quantities written the way people write them: `"10Mbps"`, `"50ms"`, `"64KB"`, `"100p"`.
//!
//! - Rates are decimal SI (1 Mbps = 10^6 bit/s), as link rates always are.
//! - Byte sizes: `B`, `KB`/`KiB`/`K` = 1024, `MB`/`MiB`/`M` = 1024², `GB`/`GiB`/`G` = 1024³ — binary,
//!   as iperf3's `-w 64K` and Linux socket buffer sizes are; `kB` (lower-case k) is decimal 1000.
//! - Durations: `ns`, `us`, `ms`, `s`, `min`, `h`.
//! - Speeds: `km/h`, `m/s`.
//! - Radio: gains and ratios in `dB`, powers in `dBm` (or `W`/`mW`), frequencies in `Hz`, `kHz`,
//!   `MHz`, `GHz`, distances in `m` or `km`.

use std::fmt;

use celltcp_engine::SimDuration;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

use celltcp_engine::units::split_number;

/// The highest rate accepted, 10 Tbit/s: above it a 1500-byte packet serialises in less than a
/// nanosecond (the clock's resolution) and a sender at that rate makes no progress in time.
pub const MAX_RATE_BPS: f64 = 1e13;

/// A bit rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);

impl Rate {
    pub fn parse(s: &str) -> Result<Rate, String> {
        let err = || format!("expected a rate such as \"10Mbps\", \"500kbps\" or \"1Gbps\" (units bps, kbps, Mbps, Gbps), got {s:?}");
        let (v, unit) = split_number(s).ok_or_else(err)?;
        let mult = match unit {
            "bps" | "bit/s" | "b/s" => 1.0,
            "kbps" | "Kbps" | "kbit/s" | "Kbit/s" => 1e3,
            "Mbps" | "mbps" | "Mbit/s" => 1e6,
            "Gbps" | "gbps" | "Gbit/s" => 1e9,
            _ => return Err(err()),
        };
        let bps = v * mult;
        if !(bps.is_finite()) || bps < 1.0 {
            return Err(format!("expected a positive rate of at least 1 bps, got {s:?}"));
        }
        if bps > MAX_RATE_BPS {
            return Err(format!("expected a rate of at most 10Tbps (a packet must take at least a nanosecond), got {s:?}"));
        }
        Ok(Rate(bps.round() as u64))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0 as f64;
        if v >= 1e9 && self.0.is_multiple_of(1_000_000) {
            write!(f, "{}Gbps", v / 1e9)
        } else if v >= 1e6 && self.0.is_multiple_of(1000) {
            write!(f, "{}Mbps", v / 1e6)
        } else if v >= 1e3 {
            write!(f, "{}kbps", v / 1e3)
        } else {
            write!(f, "{}bps", self.0)
        }
    }
}

/// A non-negative duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dur(pub SimDuration);

impl Dur {
    /// See [`celltcp_engine::units::parse_duration`] (shared with the model crates' configs).
    pub fn parse(s: &str) -> Result<Dur, String> {
        celltcp_engine::units::parse_duration(s).map(Dur)
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

impl Bytes {
    /// See [`celltcp_engine::units::parse_bytes`] (shared with the model crates' configs).
    pub fn parse(s: &str) -> Result<Bytes, String> {
        celltcp_engine::units::parse_bytes(s).map(Bytes)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&celltcp_engine::units::format_bytes(self.0))
    }
}

/// A flow's `length`: a size (an iperf/bulk write size) or a duration (a video clip's length).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    Size(Bytes),
    Time(Dur),
}

impl Length {
    pub fn parse(s: &str) -> Result<Length, String> {
        if let Ok(b) = Bytes::parse(s) {
            return Ok(Length::Size(b));
        }
        Dur::parse(s).map(Length::Time).map_err(|_| format!("expected a size such as \"64KB\" (a write size) or a duration such as \"90s\" (a video clip), got {s:?}"))
    }

    pub fn size(self) -> Option<u64> {
        match self {
            Length::Size(b) => Some(b.0),
            Length::Time(_) => None,
        }
    }

    pub fn time(self) -> Option<celltcp_engine::SimDuration> {
        match self {
            Length::Time(d) => Some(d.0),
            Length::Size(_) => None,
        }
    }
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Length::Size(b) => b.fmt(f),
            Length::Time(d) => d.fmt(f),
        }
    }
}

/// A real quantity with a unit from a small table (`(suffix, multiplier)` pairs), kept as `f64`
/// in the base unit; `min`/`max` bound the base value.
fn parse_real(s: &str, what: &str, example: &str, units: &[(&str, f64)], min: f64, max: f64) -> Result<f64, String> {
    let names: Vec<&str> = units.iter().map(|u| u.0).collect();
    let err = || format!("expected {what} such as {example} (units {}), got {s:?}", names.join(", "));
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let mult = units.iter().find(|u| u.0 == unit).ok_or_else(err)?.1;
    let x = v * mult;
    if !x.is_finite() || x < min || x > max {
        return Err(format!("expected {what} between {min} and {max} (base unit {}), got {s:?}", units[0].0));
    }
    Ok(x)
}

/// A ratio or gain in decibels (`"8dB"`, `"-3dB"`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Decibel(pub f64);

impl Decibel {
    pub fn parse(s: &str) -> Result<Decibel, String> {
        parse_real(s, "a value in decibels", "\"8dB\"", &[("dB", 1.0)], -300.0, 300.0).map(Decibel)
    }
}

impl fmt::Display for Decibel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}dB", self.0)
    }
}

/// A power in dBm (`"46dBm"`, also `"40W"`, `"200mW"`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Dbm(pub f64);

impl Dbm {
    pub fn parse(s: &str) -> Result<Dbm, String> {
        let err = || format!("expected a power such as \"46dBm\", \"40W\" or \"200mW\" (units dBm, W, mW), got {s:?}");
        let (v, unit) = split_number(s).ok_or_else(err)?;
        let dbm = match unit {
            "dBm" => v,
            "W" | "mW" => {
                let mw = if unit == "W" { v * 1e3 } else { v };
                if mw.is_nan() || mw <= 0.0 {
                    return Err(format!("expected a positive power, got {s:?}"));
                }
                10.0 * mw.log10()
            }
            _ => return Err(err()),
        };
        if !dbm.is_finite() || !(-100.0..=80.0).contains(&dbm) {
            return Err(format!("expected a power between -100dBm and 80dBm, got {s:?}"));
        }
        Ok(Dbm(dbm))
    }
}

impl fmt::Display for Dbm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}dBm", self.0)
    }
}

/// A frequency in hertz (`"2.12GHz"`, `"20MHz"`, `"70Hz"`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Hertz(pub f64);

impl Hertz {
    pub fn parse(s: &str) -> Result<Hertz, String> {
        parse_real(s, "a frequency", "\"2.12GHz\" or \"20MHz\"", &[("Hz", 1.0), ("kHz", 1e3), ("MHz", 1e6), ("GHz", 1e9)], 0.0, 1e12).map(Hertz)
    }
}

impl fmt::Display for Hertz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v >= 1e9 {
            write!(f, "{}GHz", v / 1e9)
        } else if v >= 1e6 {
            write!(f, "{}MHz", v / 1e6)
        } else if v >= 1e3 {
            write!(f, "{}kHz", v / 1e3)
        } else {
            write!(f, "{v}Hz")
        }
    }
}

/// A non-negative distance in metres (`"500m"`, `"1.2km"`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Meters(pub f64);

impl Meters {
    pub fn parse(s: &str) -> Result<Meters, String> {
        parse_real(s, "a distance", "\"500m\" or \"1.2km\"", &[("m", 1.0), ("km", 1e3)], 0.0, 1e8).map(Meters)
    }
}

impl fmt::Display for Meters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}m", self.0)
    }
}

macro_rules! serde_via_str {
    ($t:ty, $what:literal) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$t, E> {
                        <$t>::parse(s).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$t, E> {
                        Err(E::custom(format!("expected {} with a unit, got the bare number {v}", $what)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$t, E> {
                        Err(E::custom(format!("expected {} with a unit, got the bare number {v}", $what)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$t, E> {
                        Err(E::custom(format!("expected {} with a unit, got the bare number {v}", $what)))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
    };
}

serde_via_str!(Rate, "a rate string such as \"10Mbps\"");
serde_via_str!(Dur, "a duration string such as \"25ms\"");
serde_via_str!(Bytes, "a size string such as \"64KB\"");
serde_via_str!(Length, "a size string such as \"64KB\" or a duration such as \"90s\"");
serde_via_str!(Decibel, "a decibel string such as \"8dB\"");
serde_via_str!(Dbm, "a power string such as \"46dBm\"");
serde_via_str!(Hertz, "a frequency string such as \"2.12GHz\"");
serde_via_str!(Meters, "a distance string such as \"500m\"");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_decimal() {
        assert_eq!(Rate::parse("10Mbps").unwrap().0, 10_000_000);
        assert_eq!(Rate::parse("1.5 Gbps").unwrap().0, 1_500_000_000);
        assert_eq!(Rate::parse("500kbps").unwrap().0, 500_000);
        assert!(Rate::parse("10Mbs").unwrap_err().contains("10Mbs"));
        assert!(Rate::parse("-1Mbps").is_err());
        assert!(Rate::parse("0bps").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(Dur::parse("25ms").unwrap().0, SimDuration::from_millis(25));
        assert_eq!(Dur::parse("1.5s").unwrap().0, SimDuration::from_millis(1500));
        assert_eq!(Dur::parse("40us").unwrap().0, SimDuration::from_micros(40));
        assert!(Dur::parse("-5ms").unwrap_err().contains("non-negative"));
        assert!(Dur::parse("5 parsecs").is_err());
    }

    #[test]
    fn bytes_are_binary_like_iperf() {
        assert_eq!(Bytes::parse("64KB").unwrap().0, 65536);
        assert_eq!(Bytes::parse("64K").unwrap().0, 65536);
        assert_eq!(Bytes::parse("4MB").unwrap().0, 4 << 20);
        assert_eq!(Bytes::parse("1.5kB").unwrap().0, 1500);
        assert_eq!(Bytes::parse("1500B").unwrap().0, 1500);
        assert!(Bytes::parse("12 parsecs").is_err());
    }

    #[test]
    fn radio_units() {
        assert_eq!(Decibel::parse("-3dB").unwrap().0, -3.0);
        assert!((Dbm::parse("40W").unwrap().0 - 46.0206).abs() < 1e-3);
        assert_eq!(Dbm::parse("23dBm").unwrap().0, 23.0);
        assert_eq!(Hertz::parse("2.12GHz").unwrap().0, 2.12e9);
        assert_eq!(Meters::parse("1.2km").unwrap().0, 1200.0);
        let e = Meters::parse("-5m").unwrap_err();
        assert!(e.contains("between"), "{e}");
        assert!(Hertz::parse("20 MHzz").unwrap_err().contains("GHz"));
        assert!(Dbm::parse("0W").is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in ["10Mbps", "1Gbps", "500kbps"] {
            assert_eq!(Rate::parse(s).unwrap().to_string(), s);
        }
        for s in ["64KB", "4MB", "1500B"] {
            assert_eq!(Bytes::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(Dur::parse(&Dur::parse("25ms").unwrap().to_string()).unwrap(), Dur::parse("25ms").unwrap());
    }
}

/// `#[serde(deserialize_with = "exact")]` for `[T; N]` fields: refuses arrays of any other
/// length. (The TOML deserializer hands a fixed-size array the first `N` elements of a longer
/// one and drops the rest silently: `between = ["a", "b", "c"]` would be a link from a to b.)
pub fn exact<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(d: D) -> Result<[T; N], D::Error> {
    let v: Vec<T> = Vec::deserialize(d)?;
    let n = v.len();
    v.try_into().map_err(|_| de::Error::invalid_length(n, &format!("an array of exactly {N} elements").as_str()))
}

/// [`exact`] for `Option<[T; N]>` fields (use with `#[serde(default)]`).
pub fn exact_opt<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(d: D) -> Result<Option<[T; N]>, D::Error> {
    let Some(v) = Option::<Vec<T>>::deserialize(d)? else { return Ok(None) };
    let n = v.len();
    v.try_into().map(Some).map_err(|_| de::Error::invalid_length(n, &format!("an array of exactly {N} elements").as_str()))
}
