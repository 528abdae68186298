//! # celltcp-scenario
//!
//! The "helper" layer: from a TOML scenario to a finished run.
//!
//! - [`config`]: the serde [`config::Config`]; [`edit`]: the one path editor (`--set`, sweeps,
//!   Python), addressing list entries by name or index; [`units`]: `"10Mbps"`, `"25ms"`, `"64KB"`.
//! - [`plan`]: semantic validation and resolution (nodes, link directions, routes, flows).
//! - [`sim`]: the public [`Simulation`]: `run`, `step_until`, `next_event_time`, `inject`.
//! - `world`: the topology, the event dispatch (one `match` over plain-data events), the IP
//!   layer and the links; `stack`: each node's sockets (4-tuple table, listeners, ephemeral
//!   ports); `glue`: sockets to apps ([`celltcp_apps::app::App`]); `metrics`: per-flow
//!   measurements and the sampled time series; `cellular`: the LTE RAN and its metrics.
//! - [`sinks`]: the time-series tables, streamed to `DIR/timeseries/*.parquet` as the run goes
//!   (or kept in memory without an output directory).
//! - `summary`: `summary.json`, and the `iperf` / `ping` tables built at the end.
//! - [`output`]: what a run returns.

mod cellular;
mod device;
mod fairness;
pub mod config;
pub mod edit;
pub mod error;
mod glue;
mod gtpu;
pub mod lte_config;
pub mod lwa_config;
mod lwa;
mod metrics;
pub mod mptcp_config;
pub mod output;
pub mod plan;
pub mod sim;
pub mod sinks;
mod stack;
mod summary;
mod tproxy;
mod web_apps;
pub mod units;
pub mod wifi_config;
mod wlan;
mod world;
pub mod iface;

use std::path::PathBuf;

pub use error::ScenarioError;
pub use sim::{AppId, NodeId, Simulation};
pub use output::{Column, ColumnData, RunOutput, Table};

/// The celltcp version (the crates share one).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The embedded default scenario that `celltcp demo` runs.
pub const DEMO_SCENARIO: &str = include_str!("demo.toml");

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Overrides the scenario's `seed`.
    pub seed: Option<u64>,
    /// Directory for files the run writes (`timeseries/*.parquet`, streamed as the run goes,
    /// and pcap); without it the time series are returned in memory and no file is written.
    pub out_dir: Option<PathBuf>,
    /// Directory relative paths in the scenario (traces) are resolved against.
    pub base_dir: Option<PathBuf>,
}

pub(crate) fn load(text: &str, overrides: &[String], seed: Option<u64>, base_dir: Option<&std::path::Path>) -> Result<(config::Config, plan::Plan, String), ScenarioError> {
    let text = config::apply_overrides(text, overrides)?;
    let mut cfg = config::parse(&text)?;
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let p = plan::plan(&text, &cfg, base_dir)?;
    Ok((cfg, p, text))
}

/// Parses and validates a scenario (after `overrides`, with `seed` if given) into its typed
/// configuration and its plan, as [`run`] does before building: for drivers that build the
/// [`Simulation`] themselves (the emulator).
pub fn load_config(text: &str, overrides: &[String], seed: Option<u64>, base_dir: Option<&std::path::Path>) -> Result<(config::Config, plan::Plan), ScenarioError> {
    load(text, overrides, seed, base_dir).map(|(c, p, _)| (c, p))
}

/// Parses and validates a scenario; returns the configuration as it would run, every default
/// filled in ([`config::Config::as_run`]).
pub fn validate(text: &str, overrides: &[String], seed: Option<u64>) -> Result<serde_json::Value, ScenarioError> {
    let (cfg, plan, _) = load(text, overrides, seed, None)?;
    serde_json::to_value(cfg.as_run(&plan)).map_err(|e| ScenarioError::new("", e.to_string()))
}

/// Runs a scenario. `progress(fraction)` is called every 65536 events; returning false aborts
/// the run with an error (nothing is returned).
pub fn run(text: &str, overrides: &[String], opts: &RunOptions, progress: &mut dyn FnMut(f64) -> bool) -> Result<RunOutput, ScenarioError> {
    let mut sim = Simulation::from_text(text, overrides, opts)?;
    if !sim.run(progress) {
        return Err(ScenarioError::new("", "run interrupted"));
    }
    sim.into_output()
}

/// [`run`], with the iperf interval reports that completed since the last call handed to
/// `progress(fraction, intervals)` (for live iperf3-style lines during a long run).
pub fn run_live(text: &str, overrides: &[String], opts: &RunOptions, progress: &mut dyn FnMut(f64, Vec<sim::LiveInterval>) -> bool) -> Result<RunOutput, ScenarioError> {
    let mut sim = Simulation::from_text(text, overrides, opts)?;
    let mut cursors = Vec::new();
    if !sim.run_with(&mut |f, s| progress(f, s.new_intervals(&mut cursors))) {
        return Err(ScenarioError::new("", "run interrupted"));
    }
    sim.into_output()
}

/// The congestion controls, `(name, one-line description)`.
pub fn list_cc() -> Vec<(&'static str, &'static str)> {
    celltcp_tcp::cc::CcKind::ALL.iter().map(|k| (k.name(), k.describe())).collect()
}
