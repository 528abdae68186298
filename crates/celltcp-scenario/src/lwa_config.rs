//! `[[lte.ue]] lwa = { … }`: an LTE–WLAN aggregation split bearer for a UE (docs/lwa.md; the
//! model is `celltcp_lte::lwa`, TS 36.300 §22A, paper 002).
//!
//! ```toml
//! lwa = { ap = "ap", xw_rate = "1Gbps", xw_delay = "1ms", steering = "static", ratio = 0.5 }
//! ```
//! The UE must also be a station of the `[[wifi]]` whose `ap` is named (checked when the run is
//! built, with the BSSs known).

use celltcp_engine::SimDuration;
use celltcp_lte::lwa::{LwaConfig, SteeringKind, PAPER_PROBE_INTERVAL};
use serde::{Deserialize, Serialize};

use crate::units::{Dur, Rate};

/// The `lwa` table of a `[[lte.ue]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LwaCfg {
    /// The `[[wifi]]` AP that is the WLAN termination; the UE must be one of its stations.
    pub ap: String,
    /// Xw link (eNB → AP) rate and one-way delay (defaults 1 Gbit/s and 1 ms).
    pub xw_rate: Option<Rate>,
    pub xw_delay: Option<Dur>,
    /// `"static"` (a fixed `ratio` of PDUs to the WLAN) or `"dynamic"` (paper 002 §3.2).
    #[serde(default = "def_steering")]
    pub steering: String,
    /// Static steering: the fraction of PDUs sent on the WLAN, 0..=1 (default 0.5).
    pub ratio: Option<f64>,
    /// Dynamic steering: the largest steering window in PDUs (default 10).
    pub window: Option<u32>,
    /// The probe interval Pᵢ (default 3 ms, the paper's); α = 1/Pᵢ.
    pub probe_interval: Option<Dur>,
    /// A fixed t-Reordering at the UE instead of 2·max(LRTT) (`"auto"`, the default).
    pub t_reordering: Option<String>,
}

fn def_steering() -> String {
    "dynamic".into()
}

/// A validated `lwa` table.
#[derive(Clone, Debug, PartialEq)]
pub struct LwaUePlan {
    pub ap: String,
    pub xw_rate_bps: u64,
    pub xw_delay: SimDuration,
    pub cfg: LwaConfig,
}

/// Validates `lwa`; `Err((key, message))` names the key (under `lwa.`), the value and what was
/// expected.
pub fn plan_lwa(c: &LwaCfg) -> Result<LwaUePlan, (String, String)> {
    let err = |k: &str, m: String| Err((format!("lwa.{k}"), m));
    if c.ap.is_empty() {
        return err("ap", "expected the name of a [[wifi]] ap".into());
    }
    let steering = match c.steering.as_str() {
        "static" => {
            if c.window.is_some() {
                return err("window", "only dynamic steering has a window (steering = \"dynamic\")".into());
            }
            SteeringKind::Static { wlan_fraction: c.ratio.unwrap_or(0.5) }
        }
        "dynamic" => {
            if let Some(r) = c.ratio {
                return err("ratio", format!("ratio = {r}: only static steering has a ratio (steering = \"static\")"));
            }
            SteeringKind::Dynamic { max_window: c.window.unwrap_or(10) }
        }
        s => return err("steering", format!("expected \"static\" or \"dynamic\", got {s:?}")),
    };
    let t_reordering_fixed = match c.t_reordering.as_deref() {
        None | Some("auto") => None,
        Some(s) => match celltcp_engine::units::parse_duration(s) {
            Ok(d) if d > SimDuration::ZERO => Some(d),
            _ => return err("t_reordering", format!("expected \"auto\" (2·max(LRTT)) or a positive duration such as \"40ms\", got {s:?}")),
        },
    };
    let cfg = LwaConfig {
        steering,
        probe_interval: c.probe_interval.map_or(PAPER_PROBE_INTERVAL, |d| d.0),
        t_reordering_fixed,
        ..LwaConfig::default()
    };
    if let Err(m) = cfg.validate() {
        let key = if m.starts_with("lwa ratio") { "ratio" } else if m.starts_with("lwa window") { "window" } else { "probe_interval" };
        return err(key, m);
    }
    let xw_rate_bps = c.xw_rate.map_or(1_000_000_000, |r| r.0);
    if xw_rate_bps == 0 {
        return err("xw_rate", "expected a positive rate such as \"1Gbps\", got 0".into());
    }
    Ok(LwaUePlan { ap: c.ap.clone(), xw_rate_bps, xw_delay: c.xw_delay.map_or(SimDuration::from_millis(1), |d| d.0), cfg })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(steering: &str) -> LwaCfg {
        LwaCfg { ap: "ap".into(), xw_rate: None, xw_delay: None, steering: steering.into(), ratio: None, window: None, probe_interval: None, t_reordering: None }
    }

    #[test]
    fn lwa_cfg_defaults_and_errors() {
        let p = plan_lwa(&cfg("static")).unwrap();
        assert_eq!(p.cfg.steering, SteeringKind::Static { wlan_fraction: 0.5 });
        assert_eq!((p.xw_rate_bps, p.xw_delay), (1_000_000_000, SimDuration::from_millis(1)));
        assert_eq!(plan_lwa(&cfg("dynamic")).unwrap().cfg.steering, SteeringKind::Dynamic { max_window: 10 });
        let e = plan_lwa(&cfg("fancy")).unwrap_err();
        assert_eq!(e.0, "lwa.steering");
        assert!(e.1.contains("\"fancy\""));
        let e = plan_lwa(&LwaCfg { ratio: Some(1.2), ..cfg("static") }).unwrap_err();
        assert_eq!(e.0, "lwa.ratio");
        assert!(e.1.contains("1.2") && e.1.contains("[0, 1]"));
        let e = plan_lwa(&LwaCfg { ratio: Some(0.3), ..cfg("dynamic") }).unwrap_err();
        assert_eq!(e.0, "lwa.ratio");
        let e = plan_lwa(&LwaCfg { t_reordering: Some("soon".into()), ..cfg("dynamic") }).unwrap_err();
        assert_eq!(e.0, "lwa.t_reordering");
    }
}
