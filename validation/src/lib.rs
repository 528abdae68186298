//! Shared helpers for the validation checks in `tests/`: run a scenario text and read numbers out
//! of its summary.

use celltcp_scenario::{run, RunOptions, RunOutput};
use serde_json::Value;

/// Runs `text` with `seed`; panics with the scenario error if it is refused.
pub fn run_text(text: &str, seed: u64) -> RunOutput {
    run(text, &[], &RunOptions { seed: Some(seed), ..Default::default() }, &mut |_| true).unwrap_or_else(|e| panic!("scenario refused: {e}\n{text}"))
}

/// A numeric field of flow `i` of the summary.
pub fn flow_f64(out: &RunOutput, i: usize, key: &str) -> f64 {
    let v: &Value = &out.summary["flows"][i][key];
    v.as_f64().unwrap_or_else(|| panic!("flows[{i}].{key} is not a number: {v}"))
}

/// A numeric field of link direction `i`.
pub fn link_f64(out: &RunOutput, i: usize, key: &str) -> f64 {
    let v: &Value = &out.summary["links"][i][key];
    v.as_f64().unwrap_or_else(|| panic!("links[{i}].{key} is not a number: {v}"))
}

/// A two-host scenario: one link `sender`–`receiver` and one bulk flow.
pub fn single_link(duration: &str, rate: &str, delay: &str, queue: &str, loss: f64, flow_extra: &str) -> String {
    format!(
        r#"duration = "{duration}"
record_rtt = true

[[link]]
between = ["sender", "receiver"]
rate = "{rate}"
delay = "{delay}"
queue = "{queue}"
loss = {loss}

[[flow]]
app = "bulk"
from = "sender"
to = "receiver"
{flow_extra}
"#
    )
}

/// Mathis et al. 1997: `MSS/RTT · C/√p` with `C = √(3/(2b))`, `b` segments per ACK.
pub fn mathis_bps(mss: f64, rtt_s: f64, p: f64, b: f64) -> f64 {
    mss * 8.0 / rtt_s * (3.0 / (2.0 * b)).sqrt() / p.sqrt()
}

/// Padhye et al. 1998 (the full model with timeouts, without the window limit), bits/s.
pub fn padhye_bps(mss: f64, rtt_s: f64, p: f64, b: f64, t0_s: f64) -> f64 {
    let denom = rtt_s * (2.0 * b * p / 3.0).sqrt() + t0_s * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    mss * 8.0 / denom
}

/// The link utilisation of one TCP-LP flow alone on a bottleneck (the closed form of its
/// sawtooth, from the paper's rules): see [`celltcp_tcp::cc::lp::alone_utilisation`].
pub use celltcp_tcp::cc::lp::alone_utilisation as lp_alone_utilisation;

/// A float column of time series `table` of a run; panics naming the table and column.
pub fn f64_column<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a [f64] {
    let t = out.timeseries.iter().find(|t| t.name == table).unwrap_or_else(|| panic!("no {table} table"));
    match t.column(col) {
        Some(celltcp_scenario::ColumnData::F64(v)) => v,
        other => panic!("{table}.{col}: {other:?}"),
    }
}
