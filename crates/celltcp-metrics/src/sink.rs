//! Time-series sinks: one [`Sink`] per table, rows pushed as the run goes.
//!
//! A sink has a fixed list of typed columns. A row is pushed one value per column, in column
//! order, and closed with [`Sink::end_row`]:
//!
//! ```
//! use celltcp_metrics::{ColType, Sink};
//! let mut s = Sink::memory("rtt", &[("time_s", ColType::F64), ("flow", ColType::I64), ("rtt_ms", ColType::F64)]);
//! s.f64(0.5).i64(0).f64(41.2).end_row();
//! assert_eq!(s.finish().unwrap().unwrap().rows(), 1);
//! ```
//!
//! Two backends:
//!
//! - **Parquet file** ([`Sink::parquet`]): rows are buffered column by column and written as one
//!   Parquet row group every `row_group_rows` rows (default [`ROW_GROUP_ROWS`]); the buffers are
//!   then cleared and reused, so a sink holds at most one row group whatever the run's length.
//!   From the first full row group on, a thread of the sink writes them (encoding a row group of
//!   65 536 rows took 12-21 ms, which held up the caller: the real-time loop of `celltcp emu`);
//!   the sink hands the full buffers over and goes on with the ones the thread gave back, and
//!   waits only when the thread is a whole row group behind (so at most three are held).
//!   [`Sink::finish`] writes the last, partial row group and the footer. Until then the file is
//!   incomplete (no footer): a run that dies leaves an unreadable file, which is why the Python
//!   API writes into a temporary directory and renames it only after success.
//! - **Memory** ([`Sink::memory`]): every row is kept and handed back as a [`Table`] by
//!   [`Sink::finish`]. Memory grows with the run; this is for short runs without an output
//!   directory (tests, `celltcp.run()` without `out`).
//!
//! Pushing a value of the wrong type, or ending a row with a value missing, is a bug in the
//! caller and panics. An I/O error while flushing is kept and returned by [`Sink::finish`]
//! (the run loop does not stop for it; later rows are dropped).

pub mod parquet;

use std::path::{Path, PathBuf};

/// Rows per Parquet row group: 64 Ki rows (4 MiB for 8 f64 columns), large enough that the
/// footer and per-group overhead stay small and readers stream well, small enough to bound a
/// sink's memory.
pub const ROW_GROUP_ROWS: usize = 64 * 1024;

/// The type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    F64,
    I64,
    Bool,
    Str,
}

/// One column's values.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
}

impl ColumnData {
    /// An empty column of type `t`.
    pub fn empty(t: ColType) -> Self {
        match t {
            ColType::F64 => ColumnData::F64(Vec::new()),
            ColType::I64 => ColumnData::I64(Vec::new()),
            ColType::Bool => ColumnData::Bool(Vec::new()),
            ColType::Str => ColumnData::Str(Vec::new()),
        }
    }
    pub fn col_type(&self) -> ColType {
        match self {
            ColumnData::F64(_) => ColType::F64,
            ColumnData::I64(_) => ColType::I64,
            ColumnData::Bool(_) => ColType::Bool,
            ColumnData::Str(_) => ColType::Str,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            ColumnData::F64(v) => v.len(),
            ColumnData::I64(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn clear(&mut self) {
        match self {
            ColumnData::F64(v) => v.clear(),
            ColumnData::I64(v) => v.clear(),
            ColumnData::Bool(v) => v.clear(),
            ColumnData::Str(v) => v.clear(),
        }
    }
    fn capacity(&self) -> usize {
        match self {
            ColumnData::F64(v) => v.capacity(),
            ColumnData::I64(v) => v.capacity(),
            ColumnData::Bool(v) => v.capacity(),
            ColumnData::Str(v) => v.capacity(),
        }
    }
    fn reserve(&mut self, n: usize) {
        match self {
            ColumnData::F64(v) => v.reserve(n),
            ColumnData::I64(v) => v.reserve(n),
            ColumnData::Bool(v) => v.reserve(n),
            ColumnData::Str(v) => v.reserve(n),
        }
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
    pub fn bool(mut self, name: &str, v: Vec<bool>) -> Self {
        self.columns.push(Column { name: name.to_string(), data: ColumnData::Bool(v) });
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
    /// The column names and types.
    pub fn schema(&self) -> Vec<(&str, ColType)> {
        self.columns.iter().map(|c| (c.name.as_str(), c.data.col_type())).collect()
    }
}

/// A failure to write a sink's file.
#[derive(Debug)]
pub struct SinkError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for SinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for SinkError {}

/// The rows of one table, pushed as the run goes. See the module doc.
pub struct Sink {
    name: String,
    cols: Vec<Column>,
    /// The column the next pushed value goes to.
    cursor: usize,
    /// Complete rows in the buffers.
    buffered: usize,
    /// Rows pushed since the start.
    rows: u64,
    row_group_rows: usize,
    file: Option<parquet::ParquetFile>,
    /// The thread writing the row groups, once the first is full (module doc).
    writer: Option<Writer>,
    /// The first write error (the file is abandoned after it).
    error: Option<SinkError>,
}

/// A file sink's writing thread: row groups to it, emptied buffers back.
struct Writer {
    path: PathBuf,
    tx: std::sync::mpsc::SyncSender<Vec<Column>>,
    back: std::sync::mpsc::Receiver<Vec<Column>>,
    thread: std::thread::JoinHandle<Result<parquet::ParquetFile, String>>,
}

impl Writer {
    /// Starts the thread and hands it `file` (taken only once the thread runs: without a
    /// thread the caller keeps writing on its own).
    fn start(file: &mut Option<parquet::ParquetFile>) -> Option<Writer> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Column>>(1);
        let (back_tx, back) = std::sync::mpsc::channel();
        let (ftx, frx) = std::sync::mpsc::channel::<parquet::ParquetFile>();
        let thread = std::thread::Builder::new()
            .name("celltcp-sink".into())
            .spawn(move || {
                let mut file = frx.recv().map_err(|e| e.to_string())?;
                for mut cols in rx {
                    file.write_row_group(&cols)?;
                    for c in &mut cols {
                        c.data.clear();
                    }
                    let _ = back_tx.send(cols);
                }
                Ok(file)
            })
            .ok()?;
        let f = file.take()?;
        let path = f.path().to_path_buf();
        ftx.send(f).expect("the writing thread waits for its file");
        Some(Writer { path, tx, back, thread })
    }
}

impl Sink {
    fn with_columns(name: &str, columns: &[(&str, ColType)]) -> Sink {
        let cols = columns.iter().map(|(n, t)| Column { name: (*n).to_string(), data: ColumnData::empty(*t) }).collect();
        Sink { name: name.to_string(), cols, cursor: 0, buffered: 0, rows: 0, row_group_rows: usize::MAX, file: None, writer: None, error: None }
    }

    /// A sink that keeps every row in memory.
    pub fn memory(name: &str, columns: &[(&str, ColType)]) -> Sink {
        Sink::with_columns(name, columns)
    }

    /// A sink that streams to the Parquet file `path` in row groups of `row_group_rows` rows
    /// (at least 1). The file is created now.
    pub fn parquet(path: &Path, name: &str, columns: &[(&str, ColType)], row_group_rows: usize) -> Result<Sink, SinkError> {
        let file = parquet::ParquetFile::create(path, columns).map_err(|e| SinkError { path: path.to_path_buf(), message: e })?;
        let mut s = Sink::with_columns(name, columns);
        s.row_group_rows = row_group_rows.max(1);
        s.file = Some(file);
        Ok(s)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// True when the rows go to a file.
    pub fn is_file(&self) -> bool {
        self.file.is_some() || self.writer.is_some()
    }

    /// Rows pushed so far (written or buffered).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Complete rows held in memory now.
    pub fn buffered_rows(&self) -> usize {
        self.buffered
    }

    /// The largest number of values any column's buffer can hold without growing: what the
    /// sink's memory is proportional to.
    pub fn buffer_capacity(&self) -> usize {
        self.cols.iter().map(|c| c.data.capacity()).max().unwrap_or(0)
    }

    /// The most rows a file sink ever holds (`usize::MAX` for a memory sink).
    pub fn row_group_rows(&self) -> usize {
        self.row_group_rows
    }

    /// Expects about `rows` more rows: reserves buffer space for them (a file sink for at most
    /// one row group), so the columns are not copied at every doubling.
    pub fn reserve(&mut self, rows: usize) {
        let n = rows.min(self.row_group_rows.saturating_sub(self.buffered));
        for c in &mut self.cols {
            c.data.reserve(n);
        }
    }

    #[cold]
    #[inline(never)]
    fn wrong_type(&self, want: ColType) -> ! {
        match self.cols.get(self.cursor) {
            Some(c) => panic!("sink {}: column {} is {:?}, a {want:?} was pushed", self.name, c.name, c.data.col_type()),
            None => panic!("sink {}: a {want:?} was pushed past the last column (missing end_row?)", self.name),
        }
    }

    /// Pushes the current row's next value (an f64 column).
    #[inline]
    pub fn f64(&mut self, v: f64) -> &mut Self {
        match self.cols.get_mut(self.cursor).map(|c| &mut c.data) {
            Some(ColumnData::F64(b)) => b.push(v),
            _ => self.wrong_type(ColType::F64),
        }
        self.cursor += 1;
        self
    }

    /// Pushes the current row's next value (an i64 column).
    #[inline]
    pub fn i64(&mut self, v: i64) -> &mut Self {
        match self.cols.get_mut(self.cursor).map(|c| &mut c.data) {
            Some(ColumnData::I64(b)) => b.push(v),
            _ => self.wrong_type(ColType::I64),
        }
        self.cursor += 1;
        self
    }

    /// Pushes the current row's next value (a bool column).
    #[inline]
    pub fn bool(&mut self, v: bool) -> &mut Self {
        match self.cols.get_mut(self.cursor).map(|c| &mut c.data) {
            Some(ColumnData::Bool(b)) => b.push(v),
            _ => self.wrong_type(ColType::Bool),
        }
        self.cursor += 1;
        self
    }

    /// Pushes the current row's next value (a string column).
    #[inline]
    pub fn str(&mut self, v: &str) -> &mut Self {
        match self.cols.get_mut(self.cursor).map(|c| &mut c.data) {
            Some(ColumnData::Str(b)) => b.push(v.to_string()),
            _ => self.wrong_type(ColType::Str),
        }
        self.cursor += 1;
        self
    }

    /// Closes the current row; a file sink writes a row group when it has `row_group_rows`.
    #[inline]
    pub fn end_row(&mut self) {
        assert!(self.cursor == self.cols.len(), "sink {}: row ended after {} of {} values", self.name, self.cursor, self.cols.len());
        self.cursor = 0;
        self.buffered += 1;
        self.rows += 1;
        if self.buffered >= self.row_group_rows {
            self.flush();
        }
    }

    /// Appends every row of `t`, whose columns must match this sink's (names and types).
    pub fn push_table(&mut self, t: &Table) {
        assert_eq!(t.schema(), self.cols.iter().map(|c| (c.name.as_str(), c.data.col_type())).collect::<Vec<_>>(), "sink {}: table {} has other columns", self.name, t.name);
        for r in 0..t.rows() {
            for c in &t.columns {
                match &c.data {
                    ColumnData::F64(v) => self.f64(v[r]),
                    ColumnData::I64(v) => self.i64(v[r]),
                    ColumnData::Bool(v) => self.bool(v[r]),
                    ColumnData::Str(v) => self.str(&v[r]),
                };
            }
            self.end_row();
        }
    }

    /// Writes the buffered rows as one row group (file sinks; nothing to do for memory ones).
    #[cold]
    #[inline(never)]
    fn flush(&mut self) {
        if self.buffered == 0 || !self.is_file() {
            return;
        }
        if self.writer.is_none() && self.error.is_none() {
            self.writer = Writer::start(&mut self.file);
        }
        if self.error.is_none() {
            if let Some(w) = &self.writer {
                // the full buffers to the thread; the sink goes on with emptied ones
                let fresh = w.back.try_recv().unwrap_or_else(|_| {
                    let n = self.row_group_rows;
                    self.cols
                        .iter()
                        .map(|c| {
                            let mut data = ColumnData::empty(c.data.col_type());
                            data.reserve(n);
                            Column { name: c.name.clone(), data }
                        })
                        .collect()
                });
                let full = std::mem::replace(&mut self.cols, fresh);
                // a closed channel: the thread stopped at an error, which `finish` reports
                let _ = w.tx.send(full);
                self.buffered = 0;
                return;
            }
            if let Some(file) = self.file.as_mut() {
                if let Err(message) = file.write_row_group(&self.cols) {
                    self.error = Some(SinkError { path: file.path().to_path_buf(), message });
                }
            }
        }
        for c in &mut self.cols {
            c.data.clear();
        }
        self.buffered = 0;
    }

    /// Ends the table: a memory sink returns its [`Table`]; a file sink writes its last row
    /// group and the footer, and returns `None`.
    pub fn finish(mut self) -> Result<Option<Table>, SinkError> {
        assert!(self.cursor == 0, "sink {}: finished in the middle of a row", self.name);
        if !self.is_file() {
            return Ok(Some(Table { name: self.name, columns: self.cols }));
        }
        self.flush();
        if let Some(w) = self.writer.take() {
            let Writer { path, tx, back, thread } = w;
            drop((tx, back));
            match thread.join() {
                Ok(Ok(file)) => self.file = Some(file),
                Ok(Err(message)) => return Err(self.error.take().unwrap_or(SinkError { path, message })),
                Err(_) => return Err(SinkError { path, message: "the writing thread panicked".into() }),
            }
        }
        let file = self.file.take().expect("a file sink");
        if let Some(e) = self.error {
            return Err(e);
        }
        let path = file.path().to_path_buf();
        file.close().map_err(|message| SinkError { path, message })?;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: &[(&str, ColType)] = &[("time_s", ColType::F64), ("flow", ColType::I64), ("up", ColType::Bool), ("name", ColType::Str)];

    #[test]
    fn memory_sink_keeps_rows_in_push_order() {
        let mut s = Sink::memory("t", COLS);
        for i in 0..5 {
            s.f64(i as f64 * 0.5).i64(i).bool(i % 2 == 0).str(&format!("r{i}")).end_row();
        }
        assert_eq!(s.rows(), 5);
        assert_eq!(s.buffered_rows(), 5);
        let t = s.finish().unwrap().unwrap();
        assert_eq!(t.name, "t");
        assert_eq!(t.rows(), 5);
        assert_eq!(t.column("flow"), Some(&ColumnData::I64(vec![0, 1, 2, 3, 4])));
        assert_eq!(t.column("up"), Some(&ColumnData::Bool(vec![true, false, true, false, true])));
        assert_eq!(t.column("name"), Some(&ColumnData::Str((0..5).map(|i| format!("r{i}")).collect())));
    }

    #[test]
    #[should_panic(expected = "column flow is I64, a F64 was pushed")]
    fn wrong_type_panics_naming_the_column() {
        let mut s = Sink::memory("t", COLS);
        s.f64(1.0).f64(2.0);
    }

    #[test]
    #[should_panic(expected = "row ended after 2 of 4 values")]
    fn short_row_panics() {
        let mut s = Sink::memory("t", COLS);
        s.f64(1.0).i64(2).end_row();
    }

    #[test]
    fn push_table_appends_rows() {
        let t = Table::new("x").f64("time_s", vec![1.0, 2.0]).i64("flow", vec![3, 4]).bool("up", vec![true, false]).str("name", vec!["a".into(), "b".into()]);
        let mut s = Sink::memory("x", COLS);
        s.push_table(&t);
        s.push_table(&t);
        let out = s.finish().unwrap().unwrap();
        assert_eq!(out.column("time_s"), Some(&ColumnData::F64(vec![1.0, 2.0, 1.0, 2.0])));
    }
}
