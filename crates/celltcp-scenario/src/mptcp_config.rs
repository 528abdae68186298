//! A TCP flow's `mptcp` key: `mptcp = true` (the defaults) or
//! `mptcp = { cc = "olia", scheduler = "minrtt", path_manager = "fullmesh", subflows = 2 }`,
//! turned into the model's [`MptcpConfig`] (RFC 8684; `docs/mptcp.md`). Each value is checked
//! here and refused with the key, the value and what was expected.

use celltcp_mptcp::path_manager::PathManagerConfig;
use celltcp_mptcp::MptcpConfig;
use serde::{Deserialize, Serialize};

/// The flow's `mptcp` value as written.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MptcpSpec {
    /// `mptcp = true`: the defaults; `false`: plain TCP.
    On(bool),
    Table(MptcpTable),
}

/// `mptcp = { ... }`; every key optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MptcpTable {
    /// `"olia"` (default), `"lia"`, `"balia"` or `"uncoupled"` (each subflow runs the flow's `cc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// `"minrtt"` (default), `"roundrobin"` or `"redundant"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// `"fullmesh"` (default), `"ndiffports"` or `"default"` (Linux's in-kernel manager).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_manager: Option<String>,
    /// The most subflows in all, the initial one included (1..=8). Default: 2 with
    /// `ndiffports`; every address pair with `fullmesh`; Linux's limit of 2 more than the
    /// initial one with `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subflows: Option<u32>,
}

impl<'de> Deserialize<'de> for MptcpSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MptcpSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or a table such as { cc = \"olia\", scheduler = \"minrtt\", path_manager = \"fullmesh\", subflows = 2 }")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<MptcpSpec, E> {
                Ok(MptcpSpec::On(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<MptcpSpec, A::Error> {
                MptcpTable::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(MptcpSpec::Table)
            }
        }
        d.deserialize_any(V)
    }
}

impl MptcpSpec {
    /// The model's configuration (its `tcp` left at the default: the caller sets the flow's),
    /// `None` for `mptcp = false`. Err: (key below `mptcp`, message).
    pub fn model(&self) -> Result<Option<MptcpConfig>, (String, String)> {
        let t = match self {
            MptcpSpec::On(false) => return Ok(None),
            MptcpSpec::On(true) => return Ok(Some(MptcpConfig::default())),
            MptcpSpec::Table(t) => t,
        };
        let mut c = MptcpConfig::default();
        if let Some(v) = &t.cc {
            c.cc = v.parse().map_err(|_| ("mptcp.cc".to_string(), format!("mptcp.cc = {v:?}: expected \"lia\", \"olia\", \"balia\" or \"uncoupled\"")))?;
        }
        if let Some(v) = &t.scheduler {
            c.scheduler = v.parse().map_err(|_| ("mptcp.scheduler".to_string(), format!("mptcp.scheduler = {v:?}: expected \"minrtt\", \"roundrobin\" or \"redundant\"")))?;
        }
        if let Some(n) = t.subflows {
            if !(1..=8).contains(&n) {
                return Err(("mptcp.subflows".into(), format!("mptcp.subflows = {n}: expected 1..=8 subflows in all (Linux MPTCP_PM_ADDR_MAX)")));
            }
        }
        let n = t.subflows.map(|n| n as u8);
        c.path_manager = match t.path_manager.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("fullmesh") => PathManagerConfig::Fullmesh,
            Some("ndiffports") => PathManagerConfig::Ndiffports { subflows: n.unwrap_or(2) },
            Some("default" | "kernel") => match n {
                Some(n) => PathManagerConfig::Kernel { subflows: n - 1, add_addr_accepted: 0 },
                None => PathManagerConfig::KERNEL_DEFAULT,
            },
            Some(_) => {
                let v = t.path_manager.as_deref().unwrap_or_default();
                return Err(("mptcp.path_manager".into(), format!("mptcp.path_manager = {v:?}: expected \"fullmesh\", \"ndiffports\" or \"default\"")));
            }
        };
        c.max_subflows = n.unwrap_or(0);
        c.validate().map_err(|m| ("mptcp".to_string(), m))?;
        Ok(Some(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_mptcp::coupled::CoupledKind;
    use celltcp_mptcp::scheduler::SchedulerKind;

    fn parse(s: &str) -> Result<MptcpSpec, String> {
        #[derive(Deserialize)]
        struct W {
            mptcp: MptcpSpec,
        }
        toml::from_str::<W>(s).map(|w| w.mptcp).map_err(|e| e.to_string())
    }

    #[test]
    fn true_gives_the_defaults_and_false_plain_tcp() {
        assert_eq!(parse("mptcp = true").unwrap().model().unwrap(), Some(MptcpConfig::default()));
        assert_eq!(parse("mptcp = false").unwrap().model().unwrap(), None);
    }

    #[test]
    fn a_table_sets_each_key() {
        let c = parse(r#"mptcp = { cc = "lia", scheduler = "roundrobin", path_manager = "ndiffports", subflows = 3 }"#).unwrap().model().unwrap().unwrap();
        assert_eq!(c.cc, CoupledKind::Lia);
        assert_eq!(c.scheduler, SchedulerKind::RoundRobin);
        assert_eq!(c.path_manager, PathManagerConfig::Ndiffports { subflows: 3 });
        assert_eq!(c.max_subflows, 3);
        let c = parse(r#"mptcp = { path_manager = "default" }"#).unwrap().model().unwrap().unwrap();
        assert_eq!(c.path_manager, PathManagerConfig::KERNEL_DEFAULT);
        assert_eq!(c.max_subflows, 0);
        let c = parse(r#"mptcp = { cc = "uncoupled", path_manager = "default", subflows = 2 }"#).unwrap().model().unwrap().unwrap();
        assert_eq!(c.path_manager, PathManagerConfig::Kernel { subflows: 1, add_addr_accepted: 0 });
        assert_eq!(c.cc, CoupledKind::Uncoupled);
    }

    #[test]
    fn bad_values_name_key_value_and_what_was_expected() {
        for (toml, key, words) in [
            (r#"mptcp = { cc = "cubic" }"#, "mptcp.cc", "\"cubic\": expected \"lia\""),
            (r#"mptcp = { scheduler = "fastest" }"#, "mptcp.scheduler", "\"fastest\": expected \"minrtt\""),
            (r#"mptcp = { path_manager = "mesh" }"#, "mptcp.path_manager", "\"mesh\": expected \"fullmesh\""),
            (r#"mptcp = { subflows = 0 }"#, "mptcp.subflows", "= 0: expected 1..=8"),
            (r#"mptcp = { subflows = 9 }"#, "mptcp.subflows", "= 9: expected 1..=8"),
        ] {
            let (k, m) = parse(toml).unwrap().model().unwrap_err();
            assert_eq!(k, key, "{toml}");
            assert!(m.contains(words), "{toml}: {m}");
        }
        let e = parse(r#"mptcp = { sched = "minrtt" }"#).unwrap_err();
        assert!(e.contains("unknown field `sched`") && e.contains("scheduler"), "{e}");
        let e = parse(r#"mptcp = "yes""#).unwrap_err();
        assert!(e.contains("true, false or a table"), "{e}");
    }
}
