//! What a run hands back: the configuration as run, the summary, and the time series, as
//! columns (a run without an output directory) or as the files its sinks wrote.
//!
//! Data crosses to Python as whole columns (one buffer per column), never as one object per
//! sample.

pub use celltcp_metrics::{Column, ColumnData, Table};

/// Everything one run produces.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The validated configuration as run (after overrides and defaults), as JSON.
    pub config: serde_json::Value,
    pub seed: u64,
    /// `summary.json`'s content.
    pub summary: serde_json::Value,
    /// Events popped from the event queue.
    pub events: u64,
    /// Simulated seconds.
    pub sim_time_s: f64,
    /// Wall-clock seconds the event loop took (measured outside the simulation core).
    pub wall_time_s: f64,
    /// Time series kept in memory: `tcp`, `queue`, `rtt`, and `iperf` / `ping` / `lte_ue` /
    /// `lte_cell` / `segments` / `acks` when the run has them. Empty when the run had an output
    /// directory: the tables were then streamed to `timeseries/<name>.parquet` (in `files`).
    pub timeseries: Vec<Table>,
    /// Files written into the output directory (relative paths), e.g. `pcap/l0.pcap`,
    /// `timeseries/tcp.parquet`.
    pub files: Vec<String>,
}
