//! What a run hands back: the configuration as run, the summary, and time series as columns.
//!
//! Data crosses to Python as whole columns (one buffer per column), never as one object per
//! sample.

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

impl ColumnData {
    pub fn len(&self) -> usize {
        match self {
            ColumnData::F64(v) => v.len(),
            ColumnData::I64(v) => v.len(),
            ColumnData::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub data: ColumnData,
}

/// A named table of equally long columns (a time series such as `tcp` or `queue`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
}

impl Table {
    pub fn new(name: &str) -> Self {
        Table { name: name.to_string(), columns: Vec::new() }
    }
    pub fn f64(mut self, name: &str, v: Vec<f64>) -> Self {
        self.columns.push(Column { name: name.to_string(), data: ColumnData::F64(v) });
        self
    }
    pub fn i64(mut self, name: &str, v: Vec<i64>) -> Self {
        self.columns.push(Column { name: name.to_string(), data: ColumnData::I64(v) });
        self
    }
    pub fn str(mut self, name: &str, v: Vec<String>) -> Self {
        self.columns.push(Column { name: name.to_string(), data: ColumnData::Str(v) });
        self
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.data.len())
    }
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns.iter().find(|c| c.name == name).map(|c| &c.data)
    }
}

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
    /// Time series: `tcp`, `queue`, `rtt`, and `iperf` / `ping` when such flows exist.
    pub timeseries: Vec<Table>,
    /// Files written into the output directory (relative paths), e.g. `pcap/l0.pcap`.
    pub files: Vec<String>,
}
