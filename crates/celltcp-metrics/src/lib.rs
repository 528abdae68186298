//! # celltcp-metrics
//!
//! Where a run's measurements go, in bounded memory whatever the simulated duration.
//!
//! - [`sink`]: a [`Sink`] per time-series table. Rows are pushed as the run goes (typed columns:
//!   f64, i64, bool, string) and, when the sink writes a file, flushed to Parquet in row groups
//!   of [`sink::ROW_GROUP_ROWS`] rows, so a sink never holds more than one row group. An
//!   in-memory sink keeps every row and hands back a [`Table`] (runs without an output
//!   directory). [`sink::parquet`] is the file format, through the `parquet` crate's low-level
//!   column writers (Apache Parquet format specification, `parquet.thrift`).
//! - [`stats`]: streaming summary statistics that replace "keep every sample, sort at the end":
//!   exact count, mean, min and max, and quantiles from a mergeable log-linear histogram whose
//!   relative error is at most [`stats::RELATIVE_ERROR`].
//!
//! Nothing here knows about TCP or LTE: the scenario layer declares its tables and pushes rows.

pub mod sink;
pub mod stats;

pub use sink::{ColType, Column, ColumnData, Sink, SinkError, Table};
pub use stats::{LogHistogram, StreamStats};
