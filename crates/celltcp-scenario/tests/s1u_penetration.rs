//! `[lte.epc] s1u_queue` (the queue of the S1-U links between the eNBs and the SGW/PGW) and
//! `[lte] penetration_loss`.

use celltcp_scenario::{RunOptions, Simulation};
use serde_json::Value;

fn run(text: &str) -> Value {
    let mut sim = Simulation::from_text(text, &[], &RunOptions { seed: Some(1), ..Default::default() }).unwrap();
    assert!(sim.run(&mut |_| true));
    sim.summary()
}

fn cell(extra_lte: &str, epc: &str) -> String {
    format!(
        r#"
duration = "3s"
[lte]
bandwidth = "10MHz"
shadowing = "0dB"
fading = "none"
{extra_lte}
[lte.epc]
{epc}
[[lte.enb]]
name = "enb"
position = [0.0, 0.0]
[[lte.ue]]
name = "ue"
position = [300.0, 0.0]
[[link]]
between = ["server", "pgw"]
rate = "10Gbps"
delay = "10ms"
[[flow]]
app = "bulk"
from = "server"
to = "ue"
mss = 1400
window = "128KB"
"#
    )
}

fn s1u_down(s: &Value) -> &Value {
    s["links"].as_array().unwrap().iter().find(|l| l["name"].as_str().unwrap().starts_with("s1u-enb") && l["to"] == "enb").expect("the S1-U direction towards the eNB")
}

#[test]
fn penetration_loss_lowers_the_sinr_by_its_value() {
    // one cell, no shadowing, no fading, no other cell: the SINR is the SNR, and penetration
    // loss divides the received power by its value: exactly 10 dB less SINR
    let a = run(&cell("", ""));
    let b = run(&cell("penetration_loss = \"10dB\"", ""));
    let sinr = |s: &Value| s["lte"]["ues"][0]["dl"]["sinr_db_mean"].as_f64().unwrap();
    let d = sinr(&a) - sinr(&b);
    assert!((d - 10.0).abs() < 1e-6, "{} vs {}: {d}", sinr(&a), sinr(&b));
}

#[test]
fn s1u_queue_is_the_configured_discipline() {
    // a 5 Mbit/s S1-U is the bottleneck of a 128 KB window (about 90 packets in flight):
    // a 1000-packet queue holds them all, a 4-packet queue drops, RED drops early
    let s1u = |q: &str| format!("s1u_rate = \"5Mbps\"\ns1u_queue = {q}");
    let big = run(&cell("", &s1u("\"1000p\"")));
    let small = run(&cell("", &s1u("\"4p\"")));
    let red = run(&cell("", &s1u("{ type = \"red\", limit = \"1000p\", min_th = 5, max_th = 15, max_p = 0.1 }")));
    assert_eq!(s1u_down(&big)["drops"], 0, "{}", s1u_down(&big));
    assert!(s1u_down(&small)["drops"].as_u64().unwrap() > 0);
    assert!(s1u_down(&red)["drops"].as_u64().unwrap() > 0, "RED drops before its limit");
    // and RED keeps the queue short: mean queueing delay well under the drop-tail 1000p's
    let qd = |s: &Value| s1u_down(s)["queue_delay_mean_ms"].as_f64().unwrap();
    assert!(qd(&red) < qd(&big) / 2.0, "red {} vs droptail {}", qd(&red), qd(&big));
}

#[test]
fn s1u_queue_errors_name_the_key() {
    let text = cell("", "s1u_queue = { type = \"red\", limit = \"100p\", min_th = 20, max_th = 10, max_p = 0.1 }");
    let e = Simulation::from_text(&text, &[], &RunOptions::default()).err().expect("an error").to_string();
    assert!(e.contains("lte.epc.s1u_queue.max_th"), "{e}");
    let text = cell("penetration_loss = \"-3dB\"", "");
    let e = Simulation::from_text(&text, &[], &RunOptions::default()).err().expect("an error").to_string();
    assert!(e.contains("penetration_loss"), "{e}");
}
