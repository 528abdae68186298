//! # celltcp-scenario
//!
//! The "helper" layer: from a TOML scenario to a finished run.
//!
//! - [`config`]: the serde [`config::Config`]; [`edit`]: the one path editor (`--set`, sweeps,
//!   Python), addressing list entries by name or index; [`units`]: `"10Mbps"`, `"25ms"`, `"64KB"`.
//! - [`plan`]: semantic validation and resolution (nodes, link directions, routes, flows).
//! - `world`: the topology and the event loop (one `match` over plain-data events).
//! - [`sinks`]: the time-series tables, streamed to `DIR/timeseries/*.parquet` as the run goes
//!   (or kept in memory without an output directory).
//! - `summary`: `summary.json`, and the `iperf` / `ping` tables built at the end.
//! - [`output`]: what a run returns.

mod cellular;
pub mod config;
pub mod edit;
pub mod error;
pub mod lte_config;
pub mod output;
pub mod plan;
pub mod sinks;
mod summary;
pub mod units;
mod world;

use std::path::PathBuf;
use std::time::Instant;

pub use error::ScenarioError;
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

fn load(text: &str, overrides: &[String], seed: Option<u64>, base_dir: Option<&std::path::Path>) -> Result<(config::Config, plan::Plan, String), ScenarioError> {
    let text = config::apply_overrides(text, overrides)?;
    let mut cfg = config::parse(&text)?;
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let p = plan::plan(&text, &cfg, base_dir)?;
    Ok((cfg, p, text))
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
    let (cfg, plan, _) = load(text, overrides, opts.seed, opts.base_dir.as_deref())?;
    let config = serde_json::to_value(cfg.as_run(&plan)).map_err(|e| ScenarioError::new("", e.to_string()))?;
    let mut w = world::World::build(&cfg, plan, cfg.seed, opts.out_dir.as_deref())
        .map_err(|e| ScenarioError::new("", format!("cannot create output files: {e}")))?;
    let t0 = Instant::now();
    if !w.run(progress) {
        return Err(ScenarioError::new("", "run interrupted"));
    }
    let wall = t0.elapsed().as_secs_f64();
    let summary = summary::summary(&w);
    let (iperf, ping) = summary::app_tables(&w);
    let (events, mut files) = (w.events_processed(), w.files.clone());
    let (timeseries, written) = w.sinks.finish(iperf, ping).map_err(|e| ScenarioError::new("", e.to_string()))?;
    files.extend(written);
    Ok(RunOutput { config, seed: cfg.seed, summary, events, sim_time_s: cfg.duration.0.as_secs_f64(), wall_time_s: wall, timeseries, files })
}

/// The congestion controls, `(name, one-line description)`.
pub fn list_cc() -> Vec<(&'static str, &'static str)> {
    celltcp_tcp::cc::CcKind::ALL.iter().map(|k| (k.name(), k.describe())).collect()
}
