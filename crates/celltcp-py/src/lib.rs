//! Python bindings: the native module `celltcp._core`.
//!
//! This is the only crate that depends on pyo3. It converts and nothing else: a scenario crosses
//! as TOML text plus `key.path=value` override strings, and results come back as plain Python
//! data, with every time-series column as one buffer (little-endian bytes that Python reads with
//! `numpy.frombuffer`), never as one Python object per sample.
//!
//! `run` releases the GIL for the whole simulation. It takes the GIL back only for the moment of
//! a progress report (every ~2^16 events), to check for pending signals (so Ctrl-C aborts the run
//! with `KeyboardInterrupt`) and to call the user's progress callback.
//!
//! The core works on a thread of its own ([`interruptible`]) while the calling thread waits
//! without the GIL and checks for signals every 50 ms, so Ctrl-C and SIGTERM also stop the
//! building of a large scenario (which has no progress reports) at once, and a panic in the core
//! is an exception, not a dead interpreter.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use celltcp_scenario::{ColumnData, RunOptions, RunOutput};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    celltcp._core,
    ScenarioError,
    PyValueError,
    "An invalid scenario: the message names the key, the value, what was expected and the line."
);

fn scenario_err(e: celltcp_scenario::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Runs `work` on a thread of its own and waits for it without the GIL, checking for signals
/// every 50 ms. On a signal (`KeyboardInterrupt`, or what a SIGTERM handler raises) it sets
/// `cancel` and returns that error at once; the work sees `cancel` at its next progress report
/// and stops (work with no report, e.g. building a scenario, ends on its own and its result is
/// dropped). The thread has a 256 MiB stack: deep but bounded recursion in parsers never
/// overflows it.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    cancel: &Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("celltcp-core".into())
        .stack_size(256 << 20)
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("cannot start the core's thread: {e}")))?;
    let mut rx = rx;
    loop {
        // (the receiver is moved in and out: it is Send, not Sync)
        let (got, back) = py.allow_threads(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
        rx = back;
        match got {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "the simulation core panicked (a bug: please report it with the scenario)",
                ))
            }
        }
    }
}

/// A column converted off the GIL: numbers as little-endian bytes, strings as they are.
enum Buffer {
    Bytes(&'static str, Vec<u8>),
    Strings(Vec<String>),
}

fn to_buffer(data: ColumnData) -> Buffer {
    match data {
        ColumnData::F64(v) => Buffer::Bytes("f8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        ColumnData::I64(v) => Buffer::Bytes("i8", v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        ColumnData::Bool(v) => Buffer::Bytes("b1", v.iter().map(|x| u8::from(*x)).collect()),
        ColumnData::Str(v) => Buffer::Strings(v),
    }
}

type Tables = Vec<(String, Vec<(String, Buffer)>)>;

/// Everything of a `RunOutput` that is costly to convert, done without the GIL.
fn prepare(out: RunOutput) -> (RunOutput, Tables, String, String) {
    let mut out = out;
    let tables = std::mem::take(&mut out.timeseries)
        .into_iter()
        .map(|t| {
            let cols = t
                .columns
                .into_iter()
                .map(|c| (c.name, to_buffer(c.data)))
                .collect();
            (t.name, cols)
        })
        .collect();
    let config = out.config.to_string();
    let summary = out.summary.to_string();
    (out, tables, config, summary)
}

/// Run a scenario (TOML text) and return its results as a dict.
///
/// `out_dir` receives the files the run writes: the time series, streamed to
/// `timeseries/<name>.parquet` in row groups as the run goes (bounded memory), and pcap. Without
/// it the time series come back in memory. `base_dir` is where relative paths in the scenario
/// (traces) are resolved, normally the scenario file's directory.
///
/// Keys: `config` and `summary` (JSON text), `seed`, `events`, `sim_time_s`, `wall_time_s`,
/// `files` (paths relative to `out_dir`), and `timeseries`:
/// `{table: {column: (dtype, data)}}` where dtype is `"f8"` or `"i8"` with data as
/// little-endian bytes, `"b1"` with one byte (0 or 1) per value, or `"str"` with data as a list
/// of str; empty with `out_dir` (the tables are files, listed in `files`).
#[pyfunction]
#[pyo3(signature = (scenario, *, seed=None, overrides=Vec::new(), out_dir=None, base_dir=None, progress=None, intervals=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    scenario: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    out_dir: Option<PathBuf>,
    base_dir: Option<PathBuf>,
    progress: Option<PyObject>,
    intervals: Option<PyObject>,
) -> PyResult<PyObject> {
    let opts = RunOptions {
        seed,
        out_dir,
        base_dir,
    };
    // The first Python error raised while reporting progress (an exception from the callback);
    // it takes precedence over the abort error it causes. Signals are the waiting thread's.
    let cancel = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&cancel);
    let scenario = scenario.to_string();
    let (result, py_err) = interruptible(py, &cancel, move || {
        let mut py_err: Option<PyErr> = None;
        let mut report = |fraction: f64, live: Vec<celltcp_scenario::sim::LiveInterval>| -> bool {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            if let (Some(cb), false) = (&intervals, live.is_empty()) {
                // (flow, start_s, end_s, bytes, bits_per_second, retransmits, packets,
                // lost_packets, jitter_ms, omitted) per report, in the order they completed
                let sent = Python::with_gil(|py| {
                    let rows: Vec<_> = live
                        .into_iter()
                        .map(|l| {
                            let r = l.report;
                            (l.flow, l.start_s, l.end_s, r.bytes, r.bits_per_second, r.retransmits, r.packets, r.lost_packets, r.jitter_ms, r.omitted)
                        })
                        .collect();
                    cb.call1(py, (rows,)).map(|_| ())
                });
                if let Err(e) = sent {
                    py_err = Some(e);
                    return false;
                }
            }
            let Some(cb) = &progress else { return true };
            Python::with_gil(|py| {
                let step = cb.call1(py, (fraction,)).and_then(|ret| {
                    // `None` means carry on; anything else is read as a bool.
                    if ret.is_none(py) {
                        Ok(true)
                    } else {
                        ret.is_truthy(py)
                    }
                });
                step.unwrap_or_else(|e| {
                    py_err = Some(e);
                    false
                })
            })
        };
        let r = celltcp_scenario::run_live(&scenario, &overrides, &opts, &mut report).map(prepare);
        (r, py_err)
    })?;
    if let Some(e) = py_err {
        return Err(e);
    }
    let (out, tables, config, summary) = result.map_err(scenario_err)?;
    to_dict(py, out, tables, config, summary)
}

/// The dict `run` and `emu` return (see `run`).
fn to_dict(py: Python<'_>, out: RunOutput, tables: Tables, config: String, summary: String) -> PyResult<PyObject> {
    let d = PyDict::new(py);
    d.set_item("config", config)?;
    d.set_item("summary", summary)?;
    d.set_item("seed", out.seed)?;
    d.set_item("events", out.events)?;
    d.set_item("sim_time_s", out.sim_time_s)?;
    d.set_item("wall_time_s", out.wall_time_s)?;
    d.set_item("files", PyList::new(py, &out.files)?)?;
    let ts = PyDict::new(py);
    for (name, cols) in tables {
        let t = PyDict::new(py);
        for (col, buf) in cols {
            match buf {
                Buffer::Bytes(dtype, bytes) => {
                    t.set_item(col, (dtype, PyBytes::new(py, &bytes)))?;
                }
                Buffer::Strings(v) => t.set_item(col, ("str", PyList::new(py, v)?))?,
            }
        }
        ts.set_item(name, t)?;
    }
    d.set_item("timeseries", ts)?;
    Ok(d.into_any().unbind())
}

/// Run a scenario (TOML text) in real time with real hosts (`celltcp emu`, Linux, root): the
/// hosts that run commands (`[[exec]]`, `execs` as `(node, argv)`, `shell`) become network
/// namespaces behind TUN devices; the rest is simulated. Returns what `run` returns (the time
/// series are files in `out_dir`), with an `emu` section in the summary. The GIL is released for
/// the whole run; SIGINT/SIGTERM end it early (outputs kept), as the end of the commands does.
/// Raises `PermissionError` without root and `ScenarioError` for a bad scenario or set-up.
#[pyfunction]
#[pyo3(signature = (scenario, *, out_dir, seed=None, overrides=Vec::new(), base_dir=None, execs=Vec::new(), shell=None))]
#[allow(clippy::too_many_arguments)]
fn emu(
    py: Python<'_>,
    scenario: &str,
    out_dir: PathBuf,
    seed: Option<u64>,
    overrides: Vec<String>,
    base_dir: Option<PathBuf>,
    execs: Vec<(String, Vec<String>)>,
    shell: Option<String>,
) -> PyResult<PyObject> {
    let opts = celltcp_emu::EmuOptions {
        seed,
        overrides,
        out_dir,
        base_dir,
        extra: execs.into_iter().map(|(node, argv)| celltcp_emu::ExtraExec { node, argv }).collect(),
        shell,
    };
    let result = py.allow_threads(|| celltcp_emu::emulate(scenario, &opts).map(prepare));
    let (out, tables, config, summary) = result.map_err(|e| {
        if e == celltcp_emu::NEED_ROOT {
            pyo3::exceptions::PyPermissionError::new_err(e)
        } else {
            ScenarioError::new_err(e)
        }
    })?;
    to_dict(py, out, tables, config, summary)
}

/// Remove what dead `celltcp emu` runs left (holder processes, TUN devices, named namespaces
/// whose names start with `ctemu`); a live run is left alone. Returns the removed items.
#[pyfunction]
fn emu_cleanup(py: Python<'_>) -> PyResult<Vec<String>> {
    if !celltcp_emu::os::is_root() {
        return Err(pyo3::exceptions::PyPermissionError::new_err(celltcp_emu::NEED_ROOT));
    }
    let c = py
        .allow_threads(celltcp_emu::netns::cleanup_stale)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    let mut v: Vec<String> = c.processes.into_iter().map(|p| format!("process {p}")).collect();
    v.extend(c.devices.into_iter().map(|d| format!("device {d}")));
    v.extend(c.netns.into_iter().map(|n| format!("netns {n}")));
    Ok(v)
}

/// Validate a scenario (TOML text) and return the configuration as it would run, as JSON text.
#[pyfunction]
#[pyo3(signature = (scenario, *, seed=None, overrides=Vec::new()))]
fn validate(
    py: Python<'_>,
    scenario: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
) -> PyResult<String> {
    let scenario = scenario.to_string();
    let cancel = Arc::new(AtomicBool::new(false));
    interruptible(py, &cancel, move || celltcp_scenario::validate(&scenario, &overrides, seed))?
        .map(|v| v.to_string())
        .map_err(scenario_err)
}

/// Apply `key.path=value` overrides to a scenario's TOML text and return the edited text (the
/// editor `--set` and sweeps use: list entries by `name`, index or `*`; comments and line
/// numbers kept).
#[pyfunction]
fn apply_overrides(scenario: &str, overrides: Vec<String>) -> PyResult<String> {
    celltcp_scenario::edit::apply_overrides(scenario, &overrides).map_err(scenario_err)
}

/// The concrete paths (indices only) a dotted `path` sets in the scenario: `flow.*.cc` gives
/// `["flow.0.cc", "flow.1.cc"]`, `link.bottleneck.rate` gives `["link.0.rate"]`.
#[pyfunction]
fn resolve_path(scenario: &str, path: &str) -> PyResult<Vec<String>> {
    celltcp_scenario::edit::resolve_path(scenario, path).map_err(scenario_err)
}

/// The congestion controls available, as (name, one-line description) pairs.
#[pyfunction]
fn list_cc() -> Vec<(&'static str, &'static str)> {
    celltcp_scenario::list_cc()
}

/// The version of the native core.
#[pyfunction]
fn version() -> &'static str {
    celltcp_scenario::VERSION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("DEMO_SCENARIO", celltcp_scenario::DEMO_SCENARIO)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(apply_overrides, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_path, m)?)?;
    m.add_function(wrap_pyfunction!(list_cc, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(emu, m)?)?;
    m.add_function(wrap_pyfunction!(emu_cleanup, m)?)?;
    Ok(())
}
