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

/// The link utilisation of one TCP-LP flow alone on a bottleneck of `bdp_pkts` packets with a
/// drop-tail buffer of `buffer_pkts` (Kuzmanovic & Knightly 2003, §III; δ = 0.15, inference
/// time-out 3 RTTs). Once the first loss has calibrated `d_max` to the full buffer, the early
/// indication fires when the standing queue passes δ·B, at a window of `W = BDP + δ·B`; cwnd
/// halves, holds for the inference time-out (the queue is empty since W/2 < BDP) and grows by
/// 1 MSS per round back to W, without another loss. Below BDP a round lasts the base RTT and
/// carries the window; above it the link is busy and a round lasts `W/C`. Exact only to a few
/// packets of W (the indication reads a round's smallest RTT, delayed ACKs move the queue in
/// steps of 2), about 1 % of utilisation per packet on a 40-packet BDP.
pub fn lp_alone_utilisation(bdp_pkts: f64, buffer_pkts: f64) -> f64 {
    let (delta, itt_rounds) = (0.15, 3.0);
    let w = bdp_pkts + delta * buffer_pkts;
    let lo = w / 2.0;
    assert!(lo < bdp_pkts && w > bdp_pkts, "the model needs W/2 < BDP < W");
    // Packets sent and time elapsed (base RTTs) over one cycle: the inference time-out at W/2,
    // the climb to BDP, the climb from BDP to W with the link busy.
    let sent = itt_rounds * lo + (bdp_pkts - lo) * (lo + bdp_pkts) / 2.0 + (w - bdp_pkts) * (w + bdp_pkts) / 2.0;
    let time = itt_rounds + (bdp_pkts - lo) + (w - bdp_pkts) * (w + bdp_pkts) / 2.0 / bdp_pkts;
    sent / time / bdp_pkts
}
