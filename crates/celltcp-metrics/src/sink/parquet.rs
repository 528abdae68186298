//! A Parquet file written one row group at a time, through the `parquet` crate's low-level
//! column writers (no Arrow).
//!
//! The layout follows the Apache Parquet format specification (`parquet.thrift`): a flat
//! schema of `REQUIRED` leaf columns — `DOUBLE` for f64, `INT64` for i64, `BOOLEAN` for bool,
//! `BYTE_ARRAY` annotated `STRING` (UTF-8) for strings — so pandas/pyarrow read them back as
//! `float64`, `int64`, `bool` and `object` (str) columns, the dtypes the Python API wrote
//! before the core wrote the files itself. Pages are Snappy-compressed. The writer is
//! deterministic: the same rows give the same bytes.
//!
//! Dictionary encoding (`RLE_DICTIONARY`, the `parquet` crate's default) is kept for the
//! integer and string columns (ids, names: few distinct values) and turned off
//! for `DOUBLE` columns, whose values (times, rates, windows) rarely repeat: for them the
//! dictionary only grew until the writer fell back to `PLAIN`, and building it cost about a
//! third of the sinks' instructions (22 M of 62 M on `examples/lte-cell.toml`). The values and
//! their type are the same either way; only the page encoding differs.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

use super::{ColType, Column, ColumnData};

/// An open Parquet file: the header is written, row groups follow, the footer at [`close`].
///
/// [`close`]: ParquetFile::close
pub(crate) struct ParquetFile {
    path: PathBuf,
    writer: SerializedFileWriter<File>,
}

/// The Parquet schema of a table: one required leaf per column.
fn schema(columns: &[(&str, ColType)]) -> Result<Type, String> {
    let fields = columns
        .iter()
        .map(|(name, t)| {
            let (phys, logical) = match t {
                ColType::F64 => (PhysicalType::DOUBLE, None),
                ColType::I64 => (PhysicalType::INT64, None),
                ColType::Bool => (PhysicalType::BOOLEAN, None),
                ColType::Str => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(name, phys).with_repetition(Repetition::REQUIRED).with_logical_type(logical).build().map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    Type::group_type_builder("schema").with_fields(fields).build().map_err(|e| e.to_string())
}

impl ParquetFile {
    /// Creates `path` (truncating it) and writes the file header.
    pub fn create(path: &Path, columns: &[(&str, ColType)]) -> Result<ParquetFile, String> {
        let schema = Arc::new(schema(columns)?);
        let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
        for (name, t) in columns {
            if *t == ColType::F64 {
                props = props.set_column_dictionary_enabled(ColumnPath::from(*name), false);
            }
        }
        let props = Arc::new(props.build());
        let file = File::create(path).map_err(|e| e.to_string())?;
        let writer = SerializedFileWriter::new(file, schema, props).map_err(|e| e.to_string())?;
        Ok(ParquetFile { path: path.to_path_buf(), writer })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `cols` (equally long, in schema order) as one row group.
    pub fn write_row_group(&mut self, cols: &[Column]) -> Result<(), String> {
        let err = |e: parquet::errors::ParquetError| e.to_string();
        let mut rg = self.writer.next_row_group().map_err(err)?;
        for c in cols {
            let mut w = rg.next_column().map_err(err)?.ok_or("more columns than the schema has")?;
            match &c.data {
                ColumnData::F64(v) => w.typed::<DoubleType>().write_batch(v, None, None),
                ColumnData::I64(v) => w.typed::<Int64Type>().write_batch(v, None, None),
                ColumnData::Bool(v) => w.typed::<BoolType>().write_batch(v, None, None),
                ColumnData::Str(v) => {
                    let b: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_bytes().to_vec())).collect();
                    w.typed::<ByteArrayType>().write_batch(&b, None, None)
                }
            }
            .map_err(err)?;
            w.close().map_err(err)?;
        }
        rg.close().map_err(err)?;
        Ok(())
    }

    /// Writes the footer and closes the file.
    pub fn close(self) -> Result<(), String> {
        let file = self.writer.into_inner().map_err(|e| e.to_string())?;
        file.sync_all().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    use crate::sink::{ColType, Sink};

    const COLS: &[(&str, ColType)] = &[("time_s", ColType::F64), ("flow", ColType::I64), ("up", ColType::Bool), ("name", ColType::Str)];

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("celltcp-metrics-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(format!("{name}.parquet"))
    }

    fn read_rows(path: &std::path::Path) -> (usize, Vec<(f64, i64, bool, String)>) {
        let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
        let groups = r.metadata().num_row_groups();
        let rows = r
            .get_row_iter(None)
            .unwrap()
            .map(|row| {
                let row = row.unwrap();
                let f: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
                match (f[0], f[1], f[2], f[3]) {
                    (Field::Double(t), Field::Long(fl), Field::Bool(u), Field::Str(n)) => (*t, *fl, *u, n.clone()),
                    other => panic!("unexpected fields {other:?}"),
                }
            })
            .collect();
        (groups, rows)
    }

    /// Written in row groups of 4, 10 rows read back whole and in order: 3 groups (4+4+2),
    /// and the sink never held more than a row group.
    #[test]
    fn file_sink_round_trips_in_row_groups() {
        let path = tmp("roundtrip");
        let mut s = Sink::parquet(&path, "t", COLS, 4).unwrap();
        let mut most = 0;
        for i in 0..10i64 {
            s.f64(i as f64 / 3.0).i64(i).bool(i % 3 == 0).str(&format!("n{i}")).end_row();
            most = most.max(s.buffered_rows());
        }
        assert_eq!(most, 3, "a full group is written as soon as it fills");
        assert_eq!(s.buffered_rows(), 2);
        assert!(s.finish().unwrap().is_none());
        let (groups, rows) = read_rows(&path);
        assert_eq!(groups, 3);
        assert_eq!(rows.len(), 10);
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(*r, (i as f64 / 3.0, i as i64, i % 3 == 0, format!("n{i}")));
        }
        std::fs::remove_file(&path).unwrap();
    }

    /// Memory stays bounded structurally: while a long series (a million rows, 250 row groups)
    /// is pushed into a file sink, it never holds more than one row group of rows, and its
    /// buffers never grow past what one row group needs (plus `reserve`'s rounding), however
    /// many rows went through. `reserve` for the whole run is capped at one row group too.
    #[test]
    fn file_sink_memory_is_bounded_by_the_row_group() {
        let path = tmp("bounded");
        const GROUP: usize = 4000;
        let mut s = Sink::parquet(&path, "t", COLS, GROUP).unwrap();
        s.reserve(1_000_000);
        assert!(s.buffer_capacity() < 2 * GROUP, "reserve is capped at a row group: {}", s.buffer_capacity());
        let mut most_rows = 0;
        let mut most_capacity = 0;
        for i in 0..1_000_000i64 {
            s.f64(i as f64).i64(i).bool(i & 1 == 0).str("x").end_row();
            most_rows = most_rows.max(s.buffered_rows());
            most_capacity = most_capacity.max(s.buffer_capacity());
        }
        assert_eq!(s.rows(), 1_000_000);
        assert_eq!(most_rows, GROUP - 1, "a full row group is written at once");
        assert!(most_capacity < 2 * GROUP, "buffers grew to {most_capacity} values");
        s.finish().unwrap();
        let (groups, rows) = read_rows(&path);
        assert_eq!(groups, 250);
        assert_eq!(rows.len(), 1_000_000);
        assert_eq!(rows[999_999].1, 999_999);
        std::fs::remove_file(&path).unwrap();
    }

    /// `DOUBLE` columns are written without a dictionary, ids and strings with one (all read
    /// back the same, as `file_sink_round_trips_in_row_groups` checks).
    #[test]
    fn file_sink_uses_a_dictionary_except_for_doubles() {
        let path = tmp("dict");
        let mut s = Sink::parquet(&path, "t", COLS, 100).unwrap();
        for i in 0..50i64 {
            s.f64((i % 3) as f64).i64(i % 2).bool(i % 5 == 0).str("same").end_row();
        }
        s.finish().unwrap();
        let r = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let rg = r.metadata().row_group(0);
        let dict: Vec<bool> = (0..4).map(|i| rg.column(i).dictionary_page_offset().is_some()).collect();
        // (BOOLEAN columns never have one: the `parquet` crate does not dictionary-encode them)
        assert_eq!(dict, [false, true, false, true], "time_s, flow, up, name");
        std::fs::remove_file(&path).unwrap();
    }

    /// A table with no rows is still a valid file with its columns.
    #[test]
    fn empty_file_sink_has_the_schema() {
        let path = tmp("empty");
        Sink::parquet(&path, "t", COLS, 4).unwrap().finish().unwrap();
        let r = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let md = r.metadata();
        assert_eq!(md.num_row_groups(), 0);
        let names: Vec<&str> = md.file_metadata().schema_descr().columns().iter().map(|c| c.name()).collect();
        assert_eq!(names, ["time_s", "flow", "up", "name"]);
        std::fs::remove_file(&path).unwrap();
    }

    /// Same rows, same bytes (runs with the same seed give identical files).
    #[test]
    fn file_sink_is_deterministic() {
        let write = |name: &str| {
            let path = tmp(name);
            let mut s = Sink::parquet(&path, "t", COLS, 3).unwrap();
            for i in 0..7i64 {
                s.f64(f64::NAN).i64(i).bool(false).str("x").end_row();
            }
            s.finish().unwrap();
            let b = std::fs::read(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            b
        };
        assert_eq!(write("det_a"), write("det_b"));
    }

    /// An unwritable path is an error naming the file.
    #[test]
    fn unwritable_path_is_an_error() {
        let e = Sink::parquet(std::path::Path::new("/nonexistent-dir/x.parquet"), "t", COLS, 4).err().unwrap();
        assert!(e.to_string().contains("/nonexistent-dir/x.parquet"), "{e}");
    }
}
