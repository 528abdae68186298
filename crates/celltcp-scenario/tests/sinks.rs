//! Time series through sinks: a run with an output directory streams its tables to
//! `timeseries/*.parquet` in row groups, and the files hold exactly the rows an in-memory run
//! returns (same columns, same types, same bits).

use std::path::Path;

use celltcp_scenario::{run, ColumnData, RunOptions, RunOutput, Table};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

/// Two bulk flows (one with a segment trace), an iperf flow and a ping flow over one
/// bottleneck, sampled every millisecond for 40 s: the `tcp` table has over 100,000 rows, more
/// than one 64 Ki-row group.
const SCENARIO: &str = r#"duration = "40s"
sample_interval = "1ms"

[[node]]
name = "r"
kind = "router"

[[link]]
between = ["a", "r"]
rate = "100Mbps"
delay = "1ms"

[[link]]
between = ["b", "r"]
rate = "100Mbps"
delay = "1ms"

[[link]]
between = ["r", "dst"]
rate = "10Mbps"
delay = "20ms"
queue = "50p"
loss = 0.001

[[flow]]
app = "bulk"
from = "a"
to = "dst"
cc = "cubic"
trace_segments = true

[[flow]]
app = "bulk"
from = "b"
to = "dst"
cc = "newreno"
start = "2s"

[[flow]]
app = "iperf"
from = "a"
to = "dst"
start = "5s"
duration = "10s"

[[flow]]
app = "ping"
from = "b"
to = "dst"
interval = "500ms"
"#;

fn run_into(dir: Option<&Path>) -> RunOutput {
    let opts = RunOptions { seed: Some(5), out_dir: dir.map(Path::to_path_buf), ..Default::default() };
    run(SCENARIO, &[], &opts, &mut |_| true).unwrap_or_else(|e| panic!("{e}"))
}

/// A Parquet file read back as a table, and its number of row groups.
fn read_parquet(path: &Path, name: &str) -> (Table, usize) {
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let groups = r.metadata().num_row_groups();
    let schema = r.metadata().file_metadata().schema_descr_ptr();
    let mut cols: Vec<(String, ColumnData)> = schema
        .columns()
        .iter()
        .map(|c| {
            let data = match c.physical_type() {
                parquet::basic::Type::DOUBLE => ColumnData::F64(Vec::new()),
                parquet::basic::Type::INT64 => ColumnData::I64(Vec::new()),
                parquet::basic::Type::BOOLEAN => ColumnData::Bool(Vec::new()),
                parquet::basic::Type::BYTE_ARRAY => ColumnData::Str(Vec::new()),
                other => panic!("{name}.{}: unexpected type {other:?}", c.name()),
            };
            (c.name().to_string(), data)
        })
        .collect();
    for row in r.get_row_iter(None).unwrap() {
        let row = row.unwrap();
        for ((_, f), (_, col)) in row.get_column_iter().zip(cols.iter_mut()) {
            match (f, col) {
                (Field::Double(x), ColumnData::F64(v)) => v.push(*x),
                (Field::Long(x), ColumnData::I64(v)) => v.push(*x),
                (Field::Bool(x), ColumnData::Bool(v)) => v.push(*x),
                (Field::Str(x), ColumnData::Str(v)) => v.push(x.clone()),
                (f, _) => panic!("{name}: unexpected field {f:?}"),
            }
        }
    }
    let mut t = Table::new(name);
    for (n, data) in cols {
        t.columns.push(celltcp_scenario::Column { name: n, data });
    }
    (t, groups)
}

/// Every value as raw bits (NaN, "not pacing", equals itself).
fn bits(t: &Table) -> Vec<(String, Vec<u64>)> {
    t.columns
        .iter()
        .map(|c| {
            let b = match &c.data {
                ColumnData::F64(x) => x.iter().map(|f| f.to_bits()).collect(),
                ColumnData::I64(x) => x.iter().map(|i| *i as u64).collect(),
                ColumnData::Bool(x) => x.iter().map(|b| u64::from(*b)).collect(),
                ColumnData::Str(x) => x.iter().map(|s| s.len() as u64).collect(),
            };
            (c.name.clone(), b)
        })
        .collect()
}

#[test]
fn streamed_files_hold_the_rows_of_an_in_memory_run() {
    let dir = std::env::temp_dir().join(format!("celltcp-sinks-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mem = run_into(None);
    let file = run_into(Some(&dir));
    assert_eq!(mem.summary, file.summary, "where the rows go must not change the run");
    assert_eq!(mem.events, file.events);
    assert!(file.timeseries.is_empty(), "a run with an output directory returns no columns");
    let names: Vec<&str> = mem.timeseries.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["tcp", "queue", "rtt", "iperf", "segments", "acks", "ping"]);
    let want: Vec<String> = names.iter().map(|n| format!("timeseries/{n}.parquet")).collect();
    assert_eq!(file.files, want);
    for t in &mem.timeseries {
        let (back, groups) = read_parquet(&dir.join(format!("timeseries/{}.parquet", t.name)), &t.name);
        assert_eq!(back.schema(), t.schema(), "{}: columns and types", t.name);
        assert_eq!(back.rows(), t.rows(), "{}: rows", t.name);
        assert!(bits(&back) == bits(t), "{}: values differ", t.name);
        // one row group per started 64 Ki rows
        assert_eq!(groups, t.rows().div_ceil(64 * 1024), "{}: row groups", t.name);
    }
    let tcp = mem.timeseries.iter().find(|t| t.name == "tcp").unwrap();
    assert!(tcp.rows() > 64 * 1024, "the test needs more than one row group: {}", tcp.rows());
    // rows are in push order: time order across flows
    for name in ["tcp", "rtt", "segments", "acks"] {
        let t = mem.timeseries.iter().find(|t| t.name == name).unwrap();
        let Some(ColumnData::F64(time)) = t.column("time_s") else { panic!("{name}.time_s") };
        assert!(time.windows(2).all(|w| w[0] <= w[1]), "{name} not in time order");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The RTT statistics of summary.json come from a streaming histogram: mean, min and max
/// exact, percentiles within 2^-8 of the exact ones of the `rtt` table's samples.
#[test]
fn summary_rtt_statistics_match_the_rtt_table() {
    let out = run_into(None);
    let rtt = out.timeseries.iter().find(|t| t.name == "rtt").unwrap();
    let (Some(ColumnData::I64(flow)), Some(ColumnData::F64(ms))) = (rtt.column("flow"), rtt.column("rtt_ms")) else { panic!() };
    for (f, fl) in out.summary["flows"].as_array().unwrap().iter().enumerate() {
        let mut v: Vec<f64> = flow.iter().zip(ms).filter(|(g, _)| **g == f as i64).map(|(_, x)| *x).collect();
        assert_eq!(fl["rtt_samples"].as_u64().unwrap(), v.len() as u64);
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!((fl["rtt_mean_ms"].as_f64().unwrap() - mean).abs() <= 1e-9 * mean);
        assert_eq!(fl["rtt_min_ms"].as_f64().unwrap(), v[0]);
        assert_eq!(fl["rtt_max_ms"].as_f64().unwrap(), *v.last().unwrap());
        for (key, p) in [("rtt_p50_ms", 50.0), ("rtt_p95_ms", 95.0), ("rtt_p99_ms", 99.0)] {
            let exact = celltcp_metrics_percentile(&v, p);
            let got = fl[key].as_f64().unwrap();
            assert!((got - exact).abs() <= exact / 256.0 * (1.0 + 1e-9), "flow {f} {key}: {got} vs exact {exact}");
        }
    }
}

/// numpy's linear-interpolation percentile on sorted data (the pre-sink exact computation).
fn celltcp_metrics_percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}
