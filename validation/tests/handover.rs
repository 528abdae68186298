//! Validation of mobility and X2 handover (`[lte.handover]`, `[[lte.ue]] mobility`; crates
//! celltcp-lte `ran/handover.rs`, `ran/mobility.rs`) at the scenario level, with TCP on top:
//! - A3 with hysteresis and time-to-trigger (TS 36.331 §5.5.4.4) hands a UE driving straight
//!   between two equal cells over once, after the point where the target is `hysteresis` dB
//!   stronger; with zero hysteresis and time-to-trigger and correlated shadowing along the
//!   road, it ping-pongs near the midpoint;
//! - lossless forwarding (TS 36.323 §5.2.1.1): no PDCP SDU is lost and TCP sees no loss from
//!   the handover, over random speeds, loads and start points;
//! - seamless forwarding: the packets TCP loses are exactly those the source discarded;
//! - bad `[lte.handover]` and mobility input is refused with the key and the expected range.
//! Each test prints its figures.

use celltcp_scenario::RunOutput;
use celltcp_validation::*;
use serde_json::Value;

/// Two eNBs 750 m apart (study 001), one UE driving from x0 along +x at `kmh`, a TCP bulk
/// download from a server 20 ms behind the PGW, and `extra` `[lte.handover]` keys.
fn drive(duration: &str, x0: f64, kmh: f64, shadowing_db: f64, handover: &str, flow: &str) -> String {
    format!(
        r#"duration = "{duration}"
[lte]
bandwidth = "10MHz"
shadowing = "{shadowing_db}dB"
[lte.rlc]
mode = "am"
buffer = "16MB"
[lte.pdcp]
buffer = "16MB"
# 4 MB windows hold ≈ 2900 SDUs: more than the 2048 a 12-bit SN may span (TS 36.323 §5.1.2.1.2)
sn_field_bits = 15
[lte.handover]
{handover}
[[lte.enb]]
name = "a"
position = [0.0, 0.0]
[[lte.enb]]
name = "b"
position = [750.0, 0.0]
[[lte.ue]]
name = "ue"
enb = "a"
mobility = {{ model = "constant_velocity", start = [{x0}, 0.0], heading_deg = 0.0, speed = {{ dist = "constant", kmh = {kmh} }} }}
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "20ms"
queue = "100000p"
{flow}
"#
    )
}

fn bulk(window: &str) -> String {
    format!("[[flow]]\nname = \"dl\"\napp = \"bulk\"\nfrom = \"server\"\nto = \"ue\"\ncc = \"cubic\"\nmss = 1400\nwindow = \"{window}\"\n")
}

/// The test cases' own small random source (a 64-bit LCG, Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

fn handovers(out: &RunOutput) -> Vec<Value> {
    out.summary["lte"]["handovers"].as_array().cloned().unwrap_or_default()
}

fn count(out: &RunOutput, key: &str) -> f64 {
    out.summary["lte"]["mobility"][key].as_f64().unwrap_or_else(|| panic!("lte.mobility.{key} missing"))
}

fn radio_dl_lost(out: &RunOutput) -> f64 {
    out.summary["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["name"].as_str().is_some_and(|n| n.starts_with("radio-") && n.ends_with("->ue")))
        .map(|l| l["lost_packets"].as_f64().unwrap() + l["drops"].as_f64().unwrap())
        .sum()
}

// RSRP with the same powers and path loss on both sides is equal at the midpoint (375 m); A3
// with hysteresis H needs the target H dB stronger for the time-to-trigger. With the 36.814
// UMa law (37.6 log10 d) the target is 3 dB stronger where d_a / d_b = 10^(3/37.6), at
// x = 750 · r / (1 + r) ≈ 409 m; the UE then drives TTT further plus up to one measurement
// period and the L3 filter's lag.
#[test]
fn a3_with_hysteresis_hands_over_once_after_the_hysteresis_point() {
    let text = drive("60s", 50.0, 40.0, 0.0, "hysteresis = \"3dB\"\ntime_to_trigger = \"256ms\"", &bulk("1MB"));
    let out = run_text(&text, 1);
    let h = handovers(&out);
    assert_eq!(h.len(), 1, "one handover, never back: {h:?}");
    let t = h[0]["decided_s"].as_f64().unwrap();
    let x = 50.0 + 40.0 / 3.6 * t;
    let r = 10f64.powf(3.0 / 37.6);
    let x3 = 750.0 * r / (1.0 + r);
    println!("A3 3 dB / 256 ms: handover decided at t = {t:.3} s, x = {x:.1} m (3 dB point {x3:.1} m)");
    assert!(x > x3 && x < x3 + 40.0, "decided at x = {x:.1} m, expected just after {x3:.1} m");
    assert_eq!(h[0]["target"], "b");
    assert_eq!(count(&out, "ping_pongs"), 0.0);
}

// Zero hysteresis and time-to-trigger with 8 dB correlated shadowing along the road: every
// crossing of the two RSRP curves near the midpoint triggers; some seed shows a ping-pong,
// while 3 dB / 256 ms on the same roads hands over about once.
#[test]
fn zero_hysteresis_ping_pongs_with_shadowing_where_hysteresis_does_not() {
    let (mut ho0, mut pp0, mut ho3) = (0.0, 0.0, 0.0);
    for seed in 1..=8 {
        let zero = run_text(&drive("60s", 50.0, 40.0, 8.0, "hysteresis = \"0dB\"\ntime_to_trigger = \"0ms\"\nrlf = false", ""), seed);
        let three = run_text(&drive("60s", 50.0, 40.0, 8.0, "hysteresis = \"3dB\"\ntime_to_trigger = \"256ms\"\nrlf = false", ""), seed);
        ho0 += count(&zero, "handovers");
        pp0 += count(&zero, "ping_pongs");
        ho3 += count(&three, "handovers");
    }
    println!("8 roads: 0 dB / 0 ms {ho0} handovers ({pp0} ping-pongs); 3 dB / 256 ms {ho3} handovers");
    assert!(pp0 >= 1.0, "no ping-pong without hysteresis");
    assert!(ho0 > ho3, "hysteresis and TTT should hand over less: {ho0} vs {ho3}");
}

// Lossless: over random speeds, start points and windows, nothing is lost in the RAN and TCP
// retransmits nothing; the handover forwarded data (the property is not vacuous).
#[test]
fn lossless_handover_loses_nothing_and_tcp_sees_no_loss() {
    let mut rng = Lcg(4);
    for case in 0..6 {
        let kmh = rng.range(30.0, 60.0);
        let x0 = rng.range(250.0, 350.0);
        let window = ["256KB", "512KB", "1MB", "2MB"][rng.range(0.0, 4.0) as usize];
        let text = drive("20s", x0, kmh, 0.0, "forwarding = \"lossless\"\nhysteresis = \"3dB\"\ntime_to_trigger = \"256ms\"", &bulk(window));
        let out = run_text(&text, case + 1);
        let h = handovers(&out);
        assert_eq!(h.len(), 1, "case {case}: one handover expected");
        let fwd = h[0]["sdus_forwarded"].as_f64().unwrap() + h[0]["sdus_forwarded_late"].as_f64().unwrap();
        let lost = radio_dl_lost(&out);
        let retx = flow_f64(&out, 0, "retransmitted_segments");
        let goodput = flow_f64(&out, 0, "goodput_bps") / 1e6;
        println!("lossless case {case}: {kmh:.1} km/h from {x0:.0} m, window {window}: {fwd} SDUs forwarded, {lost} lost, {retx} TCP retransmissions, {goodput:.2} Mbit/s");
        assert!(fwd > 0.0, "case {case}: nothing forwarded");
        assert_eq!(lost, 0.0, "case {case}: SDUs lost in a lossless handover");
        assert_eq!(flow_f64(&out, 0, "data_packets_lost"), 0.0, "case {case}");
        assert_eq!(retx, 0.0, "case {case}: TCP retransmitted");
    }
}

// Seamless: the packets lost are exactly the SDUs the source discarded from RLC's buffers
// that the UE did not have; TCP recovers them.
#[test]
fn seamless_handover_loses_exactly_what_the_source_discarded() {
    let mut rng = Lcg(5);
    let mut total = 0.0;
    for case in 0..6 {
        let kmh = rng.range(30.0, 60.0);
        let x0 = rng.range(250.0, 350.0);
        let window = ["512KB", "1MB", "2MB", "4MB"][rng.range(0.0, 4.0) as usize];
        let text = drive("20s", x0, kmh, 0.0, "forwarding = \"seamless\"\nhysteresis = \"3dB\"\ntime_to_trigger = \"256ms\"", &bulk(window));
        let out = run_text(&text, case + 1);
        let h = handovers(&out);
        assert_eq!(h.len(), 1, "case {case}");
        let discarded = h[0]["sdus_discarded"].as_f64().unwrap();
        let lost = radio_dl_lost(&out);
        let flow_lost = flow_f64(&out, 0, "data_packets_lost");
        println!("seamless case {case}: {kmh:.1} km/h, window {window}: {discarded} discarded, {lost} lost on the radio, {flow_lost} data packets lost, {} TCP retransmissions", flow_f64(&out, 0, "retransmitted_segments"));
        assert_eq!(lost, discarded, "case {case}");
        assert_eq!(flow_lost, discarded, "case {case}: no other loss");
        total += discarded;
    }
    assert!(total > 0.0, "no handover had anything in RLC's buffers");
}

#[test]
fn bad_handover_and_mobility_input_is_refused_with_key_and_range() {
    let cases: Vec<(String, &str)> = vec![
        (drive("5s", 50.0, 40.0, 0.0, "forwarding = \"lossless\"", "").replace("mode = \"am\"", "mode = \"um\""), "lte.handover.forwarding"),
        (drive("5s", 50.0, 40.0, 0.0, "time_to_trigger = \"250ms\"", ""), "time_to_trigger"),
        (drive("5s", 50.0, 40.0, 0.0, "hysteresis = \"40dB\"", ""), "hysteresis"),
        (drive("5s", 50.0, 40.0, 0.0, "forwarding = \"maybe\"", ""), "forwarding"),
        (drive("5s", 50.0, 900.0, 0.0, "", ""), "mobility"),
        (drive("5s", 50.0, 40.0, 0.0, "[[lte.handover.manual]]\nue = \"ue\"\nat = \"1s\"\ntarget = \"c\"", ""), "target"),
        (
            drive("5s", 50.0, 40.0, 0.0, "", "").replace(
                "mobility = { model = \"constant_velocity\", start = [50, 0.0], heading_deg = 0.0, speed = { dist = \"constant\", kmh = 40 } }",
                "mobility = { model = \"random_waypoint\", region = { shape = \"rect\", x_min = 5000.0, x_max = 6000.0, y_min = 5000.0, y_max = 6000.0 }, speed = { dist = \"uniform\", min_kmh = 3.0, max_kmh = 5.0 } }",
            ),
            "mobility",
        ),
    ];
    for (text, key) in cases {
        let err = celltcp_scenario::validate(&text, &[], None).err().map(|e| format!("{}: {}", e.key, e.message)).unwrap_or_default();
        println!("{key}: {err}");
        assert!(err.contains(key), "expected an error naming {key:?}, got {err:?}");
    }
}

// Study 001, scenario 2: a cell fails and its UEs move to the surviving cell (a load surge
// there). Every UE of the failed cell re-establishes in the other one, and its download goes
// on.
#[test]
fn cell_failure_moves_its_ues_to_the_surviving_cell() {
    let text = r#"duration = "6s"
[lte]
bandwidth = "10MHz"
shadowing = "0dB"
[lte.handover]
reestablishment = "200ms"
[[lte.handover.cell_failure]]
cell = "a"
at = "3s"
[[lte.enb]]
name = "a"
position = [0.0, 0.0]
[[lte.enb]]
name = "b"
position = [500.0, 0.0]
[[lte.ue]]
name = "ua"
count = 5
enb = "a"
placement = { type = "disc", radius = "150m" }
[[lte.ue]]
name = "ub"
count = 3
enb = "b"
placement = { type = "disc", radius = "150m" }
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "10ms"
queue = "100000p"
[[flow]]
name = "dl"
app = "bulk"
from = "server"
to = "u*"
cc = "cubic"
mss = 1400
window = "512KB"
"#;
    let out = run_text(text, 3);
    let h = handovers(&out);
    let moved: Vec<&Value> = h.iter().filter(|e| e["kind"] == "cell-failure").collect();
    println!("cell a failed at 3 s: {} UEs moved; cells {}", moved.len(), out.summary["lte"]["cells"]);
    assert_eq!(moved.len(), 5, "every UE of cell a moves: {h:?}");
    assert!(moved.iter().all(|e| e["target"] == "b" && (e["detach_s"].as_f64().unwrap() - 3.0).abs() < 1e-9));
    for u in out.summary["lte"]["ues"].as_array().unwrap() {
        assert_eq!(u["cell"], "b", "{} ends in b", u["name"]);
    }
    // the UEs of a still download after the failure: more than 3 s' worth at a's rate alone
    for (i, f) in out.summary["flows"].as_array().unwrap().iter().enumerate() {
        let delivered = f["bytes_delivered"].as_f64().unwrap();
        println!("{}: {:.2} MB", f["name"], delivered / 1e6);
        assert!(delivered > 0.0, "flow {i} delivered nothing");
    }
    let b_bps = out.summary["lte"]["cells"][1]["dl_throughput_bps"].as_f64().unwrap();
    assert!(b_bps > 0.0);
}

// A hexagonal layout (TR 36.814: 1 ring of measured sites, 1 ring of interferers, ISD 500 m,
// 3 sectors): 57 cells; a UE driving through the measured area hands over between measured
// cells only, with per-pair X2 delays taken from [[lte.x2]].
#[test]
fn hex_layout_with_interferer_ring_and_x2_links() {
    let text = r#"duration = "40s"
[lte]
bandwidth = "5MHz"
[lte.layout]
type = "hex"
rings = 1
interferer_rings = 1
isd = "500m"
sectors = 3
[[lte.x2]]
between = ["site0.0", "site1.0"]
delay = "15ms"
[[lte.ue]]
name = "car"
enb = "site0.0"
mobility = { model = "constant_velocity", start = [20.0, 10.0], heading_deg = 30.0, speed = { dist = "constant", kmh = 60.0 } }
[[lte.ue]]
name = "edge"
enb = "site8.0"
position = [1000.0, 10.0]
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "10ms"
[[flow]]
name = "dl"
app = "bulk"
from = "server"
to = "car"
cc = "cubic"
mss = 1400
window = "256KB"
"#;
    let out = run_text(text, 2);
    let cells = out.summary["lte"]["cells"].as_array().unwrap().len();
    assert_eq!(cells, 57, "19 sites × 3 sectors");
    let h = handovers(&out);
    println!("hex layout: {cells} cells, {} handovers: {:?}", h.len(), h.iter().map(|e| format!("{}→{} at {:.2}s", e["source"], e["target"], e["decided_s"])).collect::<Vec<_>>());
    assert!(!h.is_empty(), "a 60 km/h drive over 660 m crosses cells");
    let outer: Vec<String> = (7..19).map(|k| format!("site{k}")).collect();
    for e in &h {
        let t = e["target"].as_str().unwrap();
        assert!(!outer.iter().any(|o| t.starts_with(&format!("{o}."))), "handover into an interferer cell {t}");
    }
    if let Some(first) = h.iter().find(|e| e["source"] == "site0.0" && e["target"] == "site1.0") {
        let d = first["detach_s"].as_f64().unwrap() - first["decided_s"].as_f64().unwrap();
        assert!((d - 0.030).abs() < 1e-9, "2 × the declared 15 ms X2 delay, got {d}");
    }
    // X2 between cells that do not exist is refused
    let bad = text.replace("between = [\"site0.0\", \"site1.0\"]", "between = [\"site0.0\", \"site99.0\"]");
    let e = celltcp_scenario::validate(&bad, &[], None).expect_err("unknown X2 end");
    println!("{}: {}", e.key, e.message);
    assert_eq!(e.key, "lte.x2[0].between");
}
