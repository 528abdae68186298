//! A congestion control and its parameters, as a scenario writes them: [`CcConfig`].
//!
//! A flow's `cc` is either a name, `cc = "cubic"` (the algorithm with its defaults), or a table
//! `cc = { name = "cubic", beta = 0.5, hystart = false }` whose other keys are the fields of the
//! algorithm's `Config` struct (documented with units and valid ranges in each `cc/*.rs`).
//! Deserialisation refuses an unknown parameter (naming it, its value and the parameters the
//! algorithm takes), a value of the wrong type (naming key and value) and a value out of its
//! range (each `Config::validate`), so a controller is never built from a bad configuration.
//! Serialisation always writes the table with every parameter filled in (what a manifest records).

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{
    bbr::BbrConfig, bic::BicConfig, coupled::CoupledConfig, cubic::CubicConfig, dctcp::DctcpConfig,
    highspeed::HighSpeedConfig, htcp::HtcpConfig, hybla::HyblaConfig, illinois::IllinoisConfig,
    lp::LpConfig, newreno::NewRenoConfig, scalable::ScalableConfig, vegas::VegasConfig,
    veno::VenoConfig, westwood::WestwoodConfig, yeah::YeahConfig, CcKind,
};

/// A congestion control with its parameters: the selector ([`CcConfig::kind`]) and the
/// algorithm's own `Config`. `From<CcKind>` gives the defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcConfig {
    NewReno(NewRenoConfig),
    Cubic(CubicConfig),
    Bbr(BbrConfig),
    Scalable(ScalableConfig),
    HighSpeed(HighSpeedConfig),
    Htcp(HtcpConfig),
    Hybla(HyblaConfig),
    Vegas(VegasConfig),
    Veno(VenoConfig),
    /// Westwood+ (`plus` is true).
    Westwood(WestwoodConfig),
    /// Original Westwood (`plus` is false).
    WestwoodPlain(WestwoodConfig),
    Bic(BicConfig),
    Illinois(IllinoisConfig),
    Yeah(YeahConfig),
    Lp(LpConfig),
    Dctcp(DctcpConfig),
    /// MPTCP's coupled subflow control (built by `celltcp-mptcp` only).
    Coupled(CoupledConfig),
}

impl From<CcKind> for CcConfig {
    fn from(kind: CcKind) -> Self {
        match kind {
            CcKind::NewReno => CcConfig::NewReno(Default::default()),
            CcKind::Cubic => CcConfig::Cubic(Default::default()),
            CcKind::Bbr => CcConfig::Bbr(Default::default()),
            CcKind::Scalable => CcConfig::Scalable(Default::default()),
            CcKind::HighSpeed => CcConfig::HighSpeed(Default::default()),
            CcKind::Htcp => CcConfig::Htcp(Default::default()),
            CcKind::Hybla => CcConfig::Hybla(Default::default()),
            CcKind::Vegas => CcConfig::Vegas(Default::default()),
            CcKind::Veno => CcConfig::Veno(Default::default()),
            CcKind::Westwood => CcConfig::Westwood(WestwoodConfig {
                plus: true,
                ..Default::default()
            }),
            CcKind::WestwoodPlain => CcConfig::WestwoodPlain(WestwoodConfig {
                plus: false,
                ..Default::default()
            }),
            CcKind::Bic => CcConfig::Bic(Default::default()),
            CcKind::Illinois => CcConfig::Illinois(Default::default()),
            CcKind::Yeah => CcConfig::Yeah(Default::default()),
            CcKind::Lp => CcConfig::Lp(Default::default()),
            CcKind::Dctcp => CcConfig::Dctcp(Default::default()),
            CcKind::Coupled => CcConfig::Coupled(Default::default()),
        }
    }
}

impl Default for CcConfig {
    /// NewReno with its defaults (as [`crate::TcpConfig::default`]).
    fn default() -> Self {
        CcKind::NewReno.into()
    }
}

impl CcConfig {
    pub fn kind(&self) -> CcKind {
        match self {
            CcConfig::NewReno(_) => CcKind::NewReno,
            CcConfig::Cubic(_) => CcKind::Cubic,
            CcConfig::Bbr(_) => CcKind::Bbr,
            CcConfig::Scalable(_) => CcKind::Scalable,
            CcConfig::HighSpeed(_) => CcKind::HighSpeed,
            CcConfig::Htcp(_) => CcKind::Htcp,
            CcConfig::Hybla(_) => CcKind::Hybla,
            CcConfig::Vegas(_) => CcKind::Vegas,
            CcConfig::Veno(_) => CcKind::Veno,
            CcConfig::Westwood(_) => CcKind::Westwood,
            CcConfig::WestwoodPlain(_) => CcKind::WestwoodPlain,
            CcConfig::Bic(_) => CcKind::Bic,
            CcConfig::Illinois(_) => CcKind::Illinois,
            CcConfig::Yeah(_) => CcKind::Yeah,
            CcConfig::Lp(_) => CcKind::Lp,
            CcConfig::Dctcp(_) => CcKind::Dctcp,
            CcConfig::Coupled(_) => CcKind::Coupled,
        }
    }

    /// Checks every parameter against its documented range; the error names the parameter
    /// and its value (`cubic.beta = 1.5: expected a value in (0, 1)`).
    pub fn validate(&self) -> Result<(), String> {
        let r = match self {
            CcConfig::NewReno(c) => c.validate(),
            CcConfig::Cubic(c) => c.validate(),
            CcConfig::Bbr(c) => c.validate(),
            CcConfig::Scalable(c) => c.validate(),
            CcConfig::HighSpeed(c) => c.validate(),
            CcConfig::Htcp(c) => c.validate(),
            CcConfig::Hybla(c) => c.validate(),
            CcConfig::Vegas(c) => c.validate(),
            CcConfig::Veno(c) => c.validate(),
            CcConfig::Westwood(c) | CcConfig::WestwoodPlain(c) => c.validate(),
            CcConfig::Bic(c) => c.validate(),
            CcConfig::Illinois(c) => c.validate(),
            CcConfig::Yeah(c) => c.validate(),
            CcConfig::Lp(c) => c.validate(),
            CcConfig::Dctcp(c) => c.validate(),
            CcConfig::Coupled(c) => c.validate(),
        };
        r.map_err(|e| format!("{}.{e}", self.kind().name()))
    }

    /// The configuration of `kind` from `params` (the table's keys other than `name`),
    /// validated.
    fn from_params(kind: CcKind, mut params: Vec<(String, ParamValue)>) -> Result<Self, String> {
        let name = kind.name();
        let cfg = match kind {
            CcKind::NewReno => CcConfig::NewReno(read(name, params)?),
            CcKind::Cubic => CcConfig::Cubic(read(name, params)?),
            CcKind::Bbr => CcConfig::Bbr(read(name, params)?),
            CcKind::Scalable => CcConfig::Scalable(read(name, params)?),
            CcKind::HighSpeed => CcConfig::HighSpeed(read(name, params)?),
            CcKind::Htcp => CcConfig::Htcp(read(name, params)?),
            CcKind::Hybla => CcConfig::Hybla(read(name, params)?),
            CcKind::Vegas => CcConfig::Vegas(read(name, params)?),
            CcKind::Veno => CcConfig::Veno(read(name, params)?),
            CcKind::Westwood | CcKind::WestwoodPlain => {
                // `plus` is chosen by the name; written out, it must agree with it.
                let plus = kind == CcKind::Westwood;
                if let Some((_, v)) = params.iter().find(|(k, _)| k == "plus") {
                    if !matches!(v, ParamValue::Bool(b) if *b == plus) {
                        return Err(format!(
                            "{name}.plus = {v}: the name chooses the variant (\"westwood\" is Westwood+, \"westwoodplain\" the original); expected {plus} or no `plus`"
                        ));
                    }
                } else {
                    params.push(("plus".into(), ParamValue::Bool(plus)));
                }
                let c: WestwoodConfig = read(name, params)?;
                if plus {
                    CcConfig::Westwood(c)
                } else {
                    CcConfig::WestwoodPlain(c)
                }
            }
            CcKind::Bic => CcConfig::Bic(read(name, params)?),
            CcKind::Illinois => CcConfig::Illinois(read(name, params)?),
            CcKind::Yeah => CcConfig::Yeah(read(name, params)?),
            CcKind::Lp => CcConfig::Lp(read(name, params)?),
            CcKind::Dctcp => CcConfig::Dctcp(read(name, params)?),
            CcKind::Coupled => CcConfig::Coupled(read(name, params)?),
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

/// `key = value: expected {want}` unless `ok`; the helper every `Config::validate` uses.
pub(crate) fn check(
    key: &str,
    value: impl fmt::Display,
    ok: bool,
    want: &str,
) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{key} = {value}: expected {want}"))
    }
}

/// The RFC 3465 §2.2 ABC limit L: at least one segment per ACK.
pub(crate) fn check_abc(l: u32) -> Result<(), String> {
    check(
        "abc_limit_segments",
        l,
        l >= 1,
        "at least 1 segment per ACK (RFC 3465 §2.2: 2)",
    )
}

/// `x` in the open interval (0, 1).
pub(crate) fn unit_open(x: f64) -> bool {
    x > 0.0 && x < 1.0
}

impl Serialize for CcConfig {
    /// `{ name = "<kind>", <every parameter> }`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Named<'a, T> {
            name: &'static str,
            #[serde(flatten)]
            params: &'a T,
        }
        let name = self.kind().name();
        match self {
            CcConfig::NewReno(c) => Named { name, params: c }.serialize(s),
            CcConfig::Cubic(c) => Named { name, params: c }.serialize(s),
            CcConfig::Bbr(c) => Named { name, params: c }.serialize(s),
            CcConfig::Scalable(c) => Named { name, params: c }.serialize(s),
            CcConfig::HighSpeed(c) => Named { name, params: c }.serialize(s),
            CcConfig::Htcp(c) => Named { name, params: c }.serialize(s),
            CcConfig::Hybla(c) => Named { name, params: c }.serialize(s),
            CcConfig::Vegas(c) => Named { name, params: c }.serialize(s),
            CcConfig::Veno(c) => Named { name, params: c }.serialize(s),
            CcConfig::Westwood(c) | CcConfig::WestwoodPlain(c) => {
                Named { name, params: c }.serialize(s)
            }
            CcConfig::Bic(c) => Named { name, params: c }.serialize(s),
            CcConfig::Illinois(c) => Named { name, params: c }.serialize(s),
            CcConfig::Yeah(c) => Named { name, params: c }.serialize(s),
            CcConfig::Lp(c) => Named { name, params: c }.serialize(s),
            CcConfig::Dctcp(c) => Named { name, params: c }.serialize(s),
            CcConfig::Coupled(c) => Named { name, params: c }.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for CcConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CcConfig;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a congestion control name such as \"cubic\", or a table { name = \"cubic\", beta = 0.5, ... }")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CcConfig, E> {
                s.parse::<CcKind>().map(CcConfig::from).map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<CcConfig, A::Error> {
                let mut name = None;
                let mut params = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    let v: ParamValue = m
                        .next_value()
                        .map_err(|e| de::Error::custom(format!("cc parameter `{k}`: {e}")))?;
                    if k == "name" {
                        match v {
                            ParamValue::Str(s) => name = Some(s),
                            other => return Err(de::Error::custom(format!("cc.name = {other}: expected a congestion control name such as \"cubic\""))),
                        }
                    } else {
                        params.push((k, v));
                    }
                }
                let names = || {
                    CcKind::ALL
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let name = name.ok_or_else(|| {
                    de::Error::custom(format!("a cc table needs `name` (one of {})", names()))
                })?;
                let kind = name.parse::<CcKind>().map_err(de::Error::custom)?;
                CcConfig::from_params(kind, params).map_err(de::Error::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// One parameter value of a cc table, held until the table's `name` is known.
#[derive(Clone, Debug, PartialEq)]
enum ParamValue {
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(v) => write!(f, "{v}"),
            ParamValue::I64(v) => write!(f, "{v}"),
            ParamValue::U64(v) => write!(f, "{v}"),
            ParamValue::F64(v) => write!(f, "{v}"),
            ParamValue::Str(v) => write!(f, "{v:?}"),
        }
    }
}

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ParamValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number, a boolean or a string")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ParamValue, E> {
                Ok(ParamValue::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ParamValue, E> {
                Ok(ParamValue::I64(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamValue, E> {
                Ok(ParamValue::U64(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ParamValue, E> {
                Ok(ParamValue::F64(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ParamValue, E> {
                Ok(ParamValue::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

type ParamError = de::value::Error;

impl<'de> Deserializer<'de> for ParamValue {
    type Error = ParamError;
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ParamError> {
        match self {
            ParamValue::Bool(b) => v.visit_bool(b),
            ParamValue::I64(x) => v.visit_i64(x),
            ParamValue::U64(x) => v.visit_u64(x),
            ParamValue::F64(x) => v.visit_f64(x),
            ParamValue::Str(s) => v.visit_string(s),
        }
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl IntoDeserializer<'_, ParamError> for ParamValue {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// The parameters of one algorithm, deserialised into its `Config` (`T`).
struct Params {
    cc: &'static str,
    entries: Vec<(String, ParamValue)>,
}

fn read<T: for<'de> Deserialize<'de>>(
    cc: &'static str,
    entries: Vec<(String, ParamValue)>,
) -> Result<T, String> {
    T::deserialize(Params { cc, entries }).map_err(|e| e.to_string())
}

impl<'de> Deserializer<'de> for Params {
    type Error = ParamError;
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, ParamError> {
        v.visit_map(ParamAccess {
            cc: self.cc,
            it: self.entries.into_iter(),
            cur: None,
        })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, ParamError> {
        if let Some((k, val)) = self
            .entries
            .iter()
            .find(|(k, _)| !fields.contains(&k.as_str()))
        {
            let takes: Vec<&str> = fields.iter().copied().filter(|f| *f != "seed").collect();
            return Err(de::Error::custom(format!(
                "unknown {} parameter `{k}` = {val}; {} takes {}",
                self.cc,
                self.cc,
                takes.join(", ")
            )));
        }
        self.deserialize_any(v)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// A map over the buffered parameters whose value errors name the key and the value.
struct ParamAccess {
    cc: &'static str,
    it: std::vec::IntoIter<(String, ParamValue)>,
    cur: Option<(String, ParamValue)>,
}

impl<'de> MapAccess<'de> for ParamAccess {
    type Error = ParamError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ParamError> {
        let Some((k, v)) = self.it.next() else {
            return Ok(None);
        };
        let key = seed.deserialize(k.as_str().into_deserializer())?;
        self.cur = Some((k, v));
        Ok(Some(key))
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, ParamError> {
        let (k, v) = self.cur.take().expect("next_value after next_key");
        let shown = v.to_string();
        seed.deserialize(v)
            .map_err(|e| de::Error::custom(format!("{}.{k} = {shown}: {e}", self.cc)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::MapDeserializer;

    /// A cc table as the TOML/JSON deserialisers hand it over.
    fn table(entries: &[(&str, ParamValue)]) -> Result<CcConfig, String> {
        let it = entries.iter().map(|(k, v)| (k.to_string(), v.clone()));
        let d: MapDeserializer<'_, _, ParamError> = MapDeserializer::new(it);
        CcConfig::deserialize(d).map_err(|e| e.to_string())
    }

    #[test]
    fn a_name_alone_is_the_defaults() {
        for k in CcKind::ALL {
            let d: de::value::StrDeserializer<'_, ParamError> = k.name().into_deserializer();
            let c = CcConfig::deserialize(d).unwrap();
            assert_eq!(c, CcConfig::from(k));
            assert_eq!(c.kind(), k);
            c.validate()
                .unwrap_or_else(|e| panic!("default {k} is out of range: {e}"));
        }
    }

    #[test]
    fn a_table_sets_parameters_in_any_order() {
        let c = table(&[
            ("beta", ParamValue::F64(0.5)),
            ("name", ParamValue::Str("cubic".into())),
            ("hystart", ParamValue::Bool(false)),
        ])
        .unwrap();
        let CcConfig::Cubic(cfg) = c else {
            panic!("{c:?}")
        };
        assert_eq!(
            cfg,
            CubicConfig {
                beta: 0.5,
                hystart: false,
                ..CubicConfig::default()
            }
        );
        // an integer where a float is expected is the float
        let c = table(&[
            ("name", ParamValue::Str("bic".into())),
            ("max_increment", ParamValue::I64(8)),
        ])
        .unwrap();
        assert!(matches!(c, CcConfig::Bic(b) if b.max_increment == 8.0));
    }

    #[test]
    fn cubic_hystart_takes_linux_hystartpp_or_a_boolean() {
        use crate::cc::cubic::HyStartMode;
        let mode = |v: ParamValue| match table(&[("name", ParamValue::Str("cubic".into())), ("hystart", v)]).unwrap() {
            CcConfig::Cubic(c) => c.hystart_mode(),
            c => panic!("{c:?}"),
        };
        let both = |a: ParamValue, b: &str| table(&[("name", ParamValue::Str("cubic".into())), ("hystart", a), ("hystart_variant", ParamValue::Str(b.into()))]);
        assert!(matches!(both(ParamValue::Bool(true), "hystart++"), Ok(CcConfig::Cubic(c)) if c.hystart_mode() == HyStartMode::HyStartPlusPlus));
        assert!(matches!(both(ParamValue::Bool(false), "hystart++"), Ok(CcConfig::Cubic(c)) if c.hystart_mode() == HyStartMode::Off));
        let e = both(ParamValue::Str("linux".into()), "hystart++").unwrap_err();
        assert!(e.contains("disagree"), "{e}");
        assert_eq!(mode(ParamValue::Str("linux".into())), HyStartMode::Linux);
        assert_eq!(mode(ParamValue::Str("hystart++".into())), HyStartMode::HyStartPlusPlus);
        // the boolean of before: true is the default (Linux's HyStart), false turns it off
        assert_eq!(mode(ParamValue::Bool(true)), HyStartMode::Linux);
        assert_eq!(mode(ParamValue::Bool(false)), HyStartMode::Off);
        // and what is written reads back
        for m in [HyStartMode::Linux, HyStartMode::HyStartPlusPlus, HyStartMode::Off] {
            let c = CcConfig::Cubic(CubicConfig::with_hystart(m));
            let back: CcConfig = serde_json::from_value(serde_json::to_value(c).unwrap()).unwrap();
            assert_eq!(back, c);
        }
    }

    #[test]
    fn unknown_parameter_names_key_value_and_what_exists() {
        let e = table(&[
            ("name", ParamValue::Str("cubic".into())),
            ("betta", ParamValue::F64(0.5)),
        ])
        .unwrap_err();
        assert!(
            e.contains("betta") && e.contains("0.5") && e.contains("fast_convergence"),
            "{e}"
        );
        let e = table(&[("beta", ParamValue::F64(0.5))]).unwrap_err();
        assert!(e.contains("needs `name`"), "{e}");
        let e = table(&[("name", ParamValue::Str("cubc".into()))]).unwrap_err();
        assert!(e.contains("\"cubc\""), "{e}");
    }

    #[test]
    fn wrong_type_and_out_of_range_name_key_and_value() {
        let e = table(&[
            ("name", ParamValue::Str("cubic".into())),
            ("hystart", ParamValue::Str("yes".into())),
        ])
        .unwrap_err();
        assert!(e.contains("cubic.hystart = \"yes\""), "{e}");
        let e = table(&[
            ("name", ParamValue::Str("cubic".into())),
            ("beta", ParamValue::F64(1.5)),
        ])
        .unwrap_err();
        assert!(
            e.contains("cubic.beta = 1.5") && e.contains("(0, 1)"),
            "{e}"
        );
        let e = table(&[
            ("name", ParamValue::Str("newreno".into())),
            ("abc_limit_segments", ParamValue::I64(-1)),
        ])
        .unwrap_err();
        assert!(e.contains("newreno.abc_limit_segments = -1"), "{e}");
        let e = table(&[
            ("name", ParamValue::Str("bbr".into())),
            ("probe_rtt_duration", ParamValue::Str("2 parsecs".into())),
        ])
        .unwrap_err();
        assert!(
            e.contains("probe_rtt_duration") && e.contains("2 parsecs"),
            "{e}"
        );
    }

    #[test]
    fn westwood_variant_is_the_name() {
        let c = table(&[
            ("name", ParamValue::Str("westwoodplain".into())),
            ("filter_tau_s", ParamValue::F64(1.0)),
        ])
        .unwrap();
        assert!(matches!(c, CcConfig::WestwoodPlain(w) if !w.plus && w.filter_tau_s == 1.0));
        let e = table(&[
            ("name", ParamValue::Str("westwood".into())),
            ("plus", ParamValue::Bool(false)),
        ])
        .unwrap_err();
        assert!(e.contains("westwood.plus = false"), "{e}");
        let c = table(&[
            ("name", ParamValue::Str("westwood".into())),
            ("plus", ParamValue::Bool(true)),
        ])
        .unwrap();
        assert_eq!(c, CcConfig::from(CcKind::Westwood));
    }

    #[test]
    fn every_config_round_trips_through_its_written_table() {
        // What a manifest records is every parameter, and reads back as the same configuration.
        for k in CcKind::ALL {
            let c = CcConfig::from(k);
            let written = serde_json::to_value(c).unwrap();
            assert_eq!(written["name"], k.name());
            let back: CcConfig = serde_json::from_value(written.clone()).unwrap();
            assert_eq!(back, c, "{k}: {written}");
        }
        let bbr = serde_json::to_value(CcConfig::from(CcKind::Bbr)).unwrap();
        assert_eq!(bbr["probe_rtt_duration"], "200ms");
        assert!(bbr.get("seed").is_none(), "{bbr}");
        let cubic = serde_json::to_value(CcConfig::from(CcKind::Cubic)).unwrap();
        assert_eq!(cubic, serde_json::json!({"name": "cubic", "c": 0.4, "beta": 0.7, "fast_convergence": true, "hystart": true, "hystart_variant": "linux", "abc_limit_segments": 2, "ssthresh_from_cwnd": true}));
    }

    /// The window after one loss at a window of `w` segments, through [`super::super::AnyCc`]
    /// built from a scenario's `cc` value.
    fn window_after_loss(cc: serde_json::Value, w: u32) -> u64 {
        use crate::cc::test_sender::TestSender;
        use crate::cc::AnyCc;
        use celltcp_engine::{SimDuration, SimTime};
        let cfg: CcConfig = serde_json::from_value(cc).unwrap();
        let rtt = SimDuration::from_millis(100);
        let mut s = TestSender::new(AnyCc::new(cfg, 1000, w, SimTime::ZERO, 0), 1000, rtt);
        s.send_window();
        s.lose_n(1);
        s.advance(rtt);
        s.ack_all();
        s.exit_recovery();
        s.window()
    }

    #[test]
    fn cubic_beta_from_the_scenario_sets_the_decrease() {
        // RFC 9438 §4.6: cwnd = ssthresh = flight_size * beta_cubic after a loss. The default
        // beta 0.7 leaves 70 of 100 segments; `beta = 0.5` from the scenario leaves 50.
        use serde_json::json;
        assert_eq!(
            window_after_loss(json!({"name": "cubic", "hystart": false}), 100),
            70_000
        );
        assert_eq!(
            window_after_loss(json!({"name": "cubic", "beta": 0.5, "hystart": false}), 100),
            50_000
        );
        // ssthresh_from_cwnd reaches CUBIC's configuration (the unit tests in cubic.rs show the
        // two rules apart); true by default; a wrong type names the key and the value.
        let off = table(&[
            ("name", ParamValue::Str("cubic".into())),
            ("ssthresh_from_cwnd", ParamValue::Bool(false)),
        ]);
        assert!(matches!(off, Ok(CcConfig::Cubic(c)) if !c.ssthresh_from_cwnd));
        assert!(matches!(CcConfig::from(CcKind::Cubic), CcConfig::Cubic(c) if c.ssthresh_from_cwnd));
        let e = table(&[
            ("name", ParamValue::Str("cubic".into())),
            ("ssthresh_from_cwnd", ParamValue::Str("yes".into())),
        ])
        .unwrap_err();
        assert!(e.contains("cubic.ssthresh_from_cwnd = \"yes\""), "{e}");
        // RFC 5681 eq. 4 with NewReno's beta: FlightSize/2 by default, FlightSize * 0.8 when set.
        assert_eq!(window_after_loss(json!("newreno"), 100), 50_000);
        assert_eq!(
            window_after_loss(json!({"name": "reno", "beta": 0.8}), 100),
            80_000
        );
        // Scalable TCP (Kelly 2003 §2): cwnd * (1 - b); b = 0.125 by default, 0.25 when set.
        assert_eq!(
            window_after_loss(json!({"name": "scalable", "b": 0.25}), 100),
            75_000
        );
    }

    #[test]
    fn the_documentation_lists_every_parameter_with_its_default() {
        // docs/congestion-control.md, section Parameters: one `key = default` line per field.
        let doc = include_str!("../../../../docs/congestion-control.md");
        for k in CcKind::ALL
            .into_iter()
            .filter(|k| *k != CcKind::WestwoodPlain)
        {
            let v = serde_json::to_value(CcConfig::from(k)).unwrap();
            assert!(
                doc.contains(&format!("**`{}`**", k.name())),
                "{k} has no parameter section"
            );
            for (key, default) in v
                .as_object()
                .unwrap()
                .iter()
                .filter(|(key, _)| *key != "name")
            {
                let line = format!("- `{key} = {default}`: ");
                assert!(
                    doc.contains(&line),
                    "docs/congestion-control.md lacks {line:?} ({k})"
                );
            }
        }
    }
}
