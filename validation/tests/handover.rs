//! Validation of mobility and X2 handover (`[lte.handover]`, `[[lte.ue]] mobility`; crates
//! celltcp-lte `ran/handover.rs`, `ran/mobility.rs`) at the scenario level, with TCP on top:
//! - A3 with hysteresis and time-to-trigger (TS 36.331 §5.5.4.4) hands a UE driving straight
//!   between two equal cells over once, after the point where the target is `hysteresis` dB
//!   stronger; with zero hysteresis and time-to-trigger and correlated shadowing along the
//!   road, it ping-pongs near the midpoint;
//! - lossless forwarding (TS 36.323 §5.2.1.1): no PDCP SDU is lost and TCP sees no loss from
//!   the handover, over random speeds, loads and start points;
//! - seamless forwarding: the packets TCP loses are exactly those the source discarded;
//! - radio link failure (TS 36.331 §5.3.11) out of coverage: T310 against the closed-form
//!   SINR, re-establishment in the best cell, counts consistent; too-late handovers (TS 36.300
//!   §22.4.2.2) reported;
//! - a load surge (study 001): 20 idle UEs start downloading at one instant and the cell goes
//!   from no PRB use to full use;
//! - examples/handover.toml runs and hands over;
//! - bad `[lte.handover]` and mobility input is refused with the key and the expected range.
//!
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
    format!("[[flow]]\nname = \"dl\"\napp = \"bulk\"\nfrom = \"server\"\nto = \"ue\"\ncc = \"cubic\"\nmss = 1400\nwindow_exact = \"{window}\"\n")
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
window_exact = "512KB"
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
window_exact = "256KB"
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

/// Wideband downlink SINR (dB) at distance `d_serving` from the serving eNB with one other
/// eNB at `d_other`, every eNB at `power_dbm` over `prbs` PRBs with the default 14 dBi antenna,
/// the TR 36.814 UMa path loss `128.1 + 37.6 log10(d km) + 21 log10(f / 2 GHz)` at the default
/// 2.12 GHz carrier and thermal noise −174 dBm/Hz over a 180 kHz PRB with the UE's 9 dB noise
/// figure (TS 36.331 §5.3.11 radio link monitoring uses this SINR with every cell transmitting).
fn uma_sinr_db(power_dbm: f64, prbs: f64, d_serving: f64, d_other: f64) -> f64 {
    let rx_dbm = |d: f64| power_dbm - 10.0 * prbs.log10() + 14.0 - (128.1 + 37.6 * (d / 1000.0).log10() + 21.0 * (2.12f64 / 2.0).log10());
    let mw = |dbm: f64| 10f64.powf(dbm / 10.0);
    let noise_mw = mw(-174.0 + 10.0 * 180e3f64.log10() + 9.0);
    10.0 * (mw(rx_dbm(d_serving)) / (noise_mw + mw(rx_dbm(d_other)))).log10()
}

/// Where, between `lo_x` and `hi_x` on the line through eNBs at `serving_x` and `other_x`, the
/// wideband SINR of the serving one crosses `level_db` (bisection on the closed form; the SINR
/// is monotonic between the two eNBs).
fn sinr_crossing_x(power_dbm: f64, prbs: f64, serving_x: f64, other_x: f64, lo_x: f64, hi_x: f64, level_db: f64) -> f64 {
    let sinr = |x: f64| uma_sinr_db(power_dbm, prbs, (x - serving_x).abs(), (x - other_x).abs());
    let (mut lo, mut hi) = (lo_x, hi_x);
    let rising = sinr(hi) > sinr(lo);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if (sinr(mid) > level_db) != rising {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn rlf_records(out: &RunOutput) -> Vec<Value> {
    out.summary["lte"]["radio_link_failures"].as_array().cloned().unwrap_or_default()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} missing in {v}"))
}

// A UE driving out of its cell's coverage into a hole (eNBs at 0 dBm, 1500 m apart, no A3:
// only radio link monitoring acts) gets radio link failure (TS 36.331 §5.3.11): T310 starts
// when the 200 ms mean of its wideband SINR falls below Qout = −8 dB, i.e. about 100 ms after
// the closed-form crossing (rounded up to the 10 ms frame), and the link fails T310 = 1 s later;
// it re-establishes (TS 36.300 §10.1.6) in the cell it hears best at that instant — its old cell
// before the midpoint, the other one after — 200 ms later, until it reaches the other cell's
// coverage. Every count in the summary agrees with the records.
#[test]
fn radio_link_failure_out_of_coverage_reestablishes_in_the_best_cell() {
    let (x0, kmh, b_x) = (200.0, 108.0, 1500.0);
    let v = kmh / 3.6;
    let text = drive("60s", x0, kmh, 0.0, "algorithm = \"none\"", &bulk("256KB"))
        .replace("shadowing = \"0dB\"", "shadowing = \"0dB\"\nenb_power = \"0dBm\"")
        .replace("position = [750.0, 0.0]", &format!("position = [{b_x}, 0.0]"));
    let out = run_text(&text, 1);
    let r = rlf_records(&out);
    let ho = handovers(&out);
    let t_cross = (sinr_crossing_x(0.0, 50.0, 0.0, b_x, x0, b_x / 2.0, -8.0) - x0) / v;
    println!("out of coverage: SINR of a reaches -8 dB at t = {t_cross:.3} s (x = {:.1} m); {} radio link failures:", x0 + v * t_cross, r.len());
    for e in &r {
        println!("  T310 {:.3} s, failure {:.3} s at x = {:.0} m in {} -> {} ({})", f(e, "t310_start_s"), f(e, "failure_s"), x0 + v * f(e, "failure_s"), e["cell"], e["reestablished_to"], e["cause"]);
    }
    assert!(!r.is_empty(), "no radio link failure out of coverage");
    let first = f(&r[0], "t310_start_s");
    assert_eq!(r[0]["cell"], "a");
    assert!(first >= t_cross + 0.09 && first <= t_cross + 0.12, "T310 started at {first:.3} s, Qout crossing at {t_cross:.3} s");
    // b's SINR rises above Qin = −6 dB here: no radio problem starts after it
    let t_qin_b = (sinr_crossing_x(0.0, 50.0, b_x, 0.0, b_x / 2.0, b_x - 1.0, -6.0) - x0) / v;
    for e in &r {
        assert!((f(e, "failure_s") - f(e, "t310_start_s") - 1.0).abs() < 1e-9, "T310 = 1 s: {e}");
        let x = x0 + v * f(e, "failure_s");
        let best = if x < b_x / 2.0 { "a" } else { "b" };
        assert_eq!(e["reestablished_to"], best, "re-establishment at x = {x:.0} m: {e}");
        assert_eq!(e["during_handover"], false);
        // TS 36.300 §22.4.2.2: re-established in another cell after a long stay is "too late"
        let cause = if e["cell"] == e["reestablished_to"] { "coverage" } else { "too-late" };
        assert_eq!(e["cause"], cause, "{e}");
        assert!(f(e, "t310_start_s") < t_qin_b, "T310 started at {:.3} s, after b's SINR rose above Qin at {t_qin_b:.3} s", f(e, "t310_start_s"));
    }
    assert!(r.iter().any(|e| e["reestablished_to"] == "a") && r.iter().any(|e| e["reestablished_to"] == "b"));
    // counts agree with the records and with the re-establishment events
    let re: Vec<&Value> = ho.iter().filter(|e| e["kind"] == "reestablishment").collect();
    assert_eq!(re.len(), r.len());
    assert_eq!(ho.len(), r.len(), "no A3 handovers: {ho:?}");
    for (e, rec) in re.iter().zip(&r) {
        assert_eq!(f(e, "decided_s"), f(rec, "failure_s"));
        assert_eq!(f(e, "detach_s"), f(rec, "failure_s"));
        assert!((f(e, "attach_s") - f(e, "detach_s") - 0.2).abs() < 1e-9, "re-establishment takes 200 ms: {e}");
        assert_eq!(e["source"], rec["cell"]);
        assert_eq!(e["target"], rec["reestablished_to"]);
    }
    assert_eq!(count(&out, "radio_link_failures"), r.len() as f64);
    assert_eq!(count(&out, "reestablishments"), r.len() as f64);
    assert_eq!(count(&out, "too_late_handovers"), r.iter().filter(|e| e["cause"] == "too-late").count() as f64);
    assert_eq!(count(&out, "handovers"), 0.0);
    let ue = &out.summary["lte"]["ues"][0];
    assert_eq!(ue["radio_link_failures"].as_f64(), Some(r.len() as f64));
    assert_eq!(ue["cell"], "b", "ends in b's coverage");
    // the download goes on in b once TCP's backed-off retransmission timer fires
    assert!(out.summary["lte"]["cells"][1]["dl_throughput_bps"].as_f64().unwrap() > 0.0);
    assert!(flow_f64(&out, 0, "timeouts") >= 1.0);
}

// A handover too late (TS 36.300 §22.4.2.2) is reported as such, in two ways of being late,
// against a control on the same road that hands over in time:
// - a time-to-trigger of 5.12 s: the UE passes the point where its SINR falls below Qout
//   (465 m) while A3 (3 dB point 409 m) is still waiting, the link fails and it re-establishes
//   in the target without any handover having been decided;
// - an X2 of 1 s each way (the preparation takes 2 s) at 120 km/h: A3 decides in time but the
//   link fails while the handover is being prepared (`during_handover`).
#[test]
fn too_late_handovers_are_reported() {
    let road = |kmh: f64, handover: &str| drive("30s", 300.0, kmh, 0.0, handover, &bulk("256KB"));
    let t_cross = |kmh: f64| (sinr_crossing_x(46.0, 50.0, 0.0, 750.0, 300.0, 749.0, -8.0) - 300.0) / (kmh / 3.6);

    let control = run_text(&road(60.0, "hysteresis = \"3dB\"\ntime_to_trigger = \"256ms\""), 1);
    println!("control (256 ms, X2 6 ms, 60 km/h): {} handovers, {} RLF", count(&control, "handovers"), count(&control, "radio_link_failures"));
    assert_eq!(count(&control, "handovers"), 1.0);
    assert_eq!(count(&control, "radio_link_failures"), 0.0);
    assert_eq!(count(&control, "too_late_handovers"), 0.0);

    let ttt = run_text(&road(60.0, "hysteresis = \"3dB\"\ntime_to_trigger = \"5120ms\""), 1);
    let r = rlf_records(&ttt);
    println!("TTT 5.12 s: Qout crossing at {:.3} s; RLF {r:?}; handovers {:?}", t_cross(60.0), handovers(&ttt));
    assert!(!r.is_empty(), "no radio link failure with a 5.12 s time-to-trigger");
    assert_eq!((r[0]["cell"].as_str(), r[0]["reestablished_to"].as_str()), (Some("a"), Some("b")));
    assert_eq!(r[0]["during_handover"], false);
    assert_eq!(r[0]["cause"], "too-late");
    let t_fail = f(&r[0], "failure_s");
    assert!(handovers(&ttt).iter().all(|e| e["kind"] != "handover" || f(e, "decided_s") > t_fail), "no handover before the failure");
    assert!(count(&ttt, "too_late_handovers") >= 1.0);

    let x2 = run_text(&road(120.0, "hysteresis = \"3dB\"\ntime_to_trigger = \"256ms\"\nx2_delay = \"1000ms\"\nt310 = \"500ms\""), 1);
    let r = rlf_records(&x2);
    let h = handovers(&x2);
    println!("X2 1 s, 120 km/h: Qout crossing at {:.3} s; RLF {r:?}; handovers {h:?}", t_cross(120.0));
    assert!(!r.is_empty(), "no radio link failure with a 2 s preparation");
    assert_eq!(r[0]["during_handover"], true);
    assert_eq!(r[0]["cause"], "too-late");
    // the prepared handover was decided before the failure and would have detached after it;
    // it is reported abandoned, not as a handover
    let prepared = &h[0];
    assert_eq!(prepared["kind"], "handover-abandoned", "{h:?}");
    assert!(prepared["detach_s"].is_null());
    assert!(f(prepared, "decided_s") < f(&r[0], "failure_s") && f(prepared, "decided_s") + 2.0 > f(&r[0], "failure_s"));
    assert_eq!((h[1]["kind"].as_str(), h[1]["target"].as_str()), (Some("reestablishment"), Some("b")));
    assert_eq!(count(&x2, "handovers"), 0.0, "the abandoned preparation is no handover");
    assert!(count(&x2, "too_late_handovers") >= 1.0);
}

// Two sites at the same position would give two cells with identical RSRP everywhere: refused
// with the key, the position and both names.
#[test]
fn two_enbs_at_the_same_position_are_refused() {
    let text = drive("5s", 50.0, 40.0, 0.0, "", "").replace("position = [750.0, 0.0]", "position = [0.0, 0.0]");
    let e = celltcp_scenario::validate(&text, &[], None).expect_err("two eNBs at [0, 0]");
    println!("{}: {}", e.key, e.message);
    assert_eq!(e.key, "lte.enb[1].position");
    assert!(e.message.contains("[0, 0]") && e.message.contains("\"a\"") && e.message.contains("\"b\""), "{}", e.message);
    // one metre apart is fine
    let ok = drive("5s", 50.0, 40.0, 0.0, "", "").replace("position = [750.0, 0.0]", "position = [1.0, 0.0]");
    assert!(celltcp_scenario::validate(&ok, &[], None).is_ok());
}

// examples/handover.toml (study 001, scenario 1) parses, validates and, started 300 m from the
// source and run for 15 s instead of 40, hands over once to the target after the point where
// the target is 3 dB stronger (its hysteresis), with lossless forwarding: nothing lost.
#[test]
fn handover_example_runs_and_hands_over() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/handover.toml");
    let text = std::fs::read_to_string(path).expect("examples/handover.toml");
    let set = ["duration=15s".to_string(), "lte.ue.0.mobility.start=[300.0, 0.0]".to_string()];
    celltcp_scenario::validate(&text, &set, None).unwrap_or_else(|e| panic!("{}: {}", e.key, e.message));
    let out = celltcp_scenario::run(&text, &set, &celltcp_scenario::RunOptions::default(), &mut |_| true)
        .unwrap_or_else(|e| panic!("{}: {}", e.key, e.message));
    let h = handovers(&out);
    assert_eq!(h.len(), 1, "{h:?}");
    let e = &h[0];
    assert_eq!((e["kind"].as_str(), e["source"].as_str(), e["target"].as_str()), (Some("handover"), Some("source"), Some("target")));
    // the speed was drawn (normal, 40 km/h, σ 5): recover it from where the UE ended
    let x_end = out.summary["lte"]["ues"][0]["position_m"][0].as_f64().unwrap();
    let v = (x_end - 300.0) / 15.0;
    let x_decided = 300.0 + v * f(e, "decided_s");
    let r = 10f64.powf(3.0 / 37.6);
    let x3 = 750.0 * r / (1.0 + r);
    println!("example: {:.1} km/h, handover decided at {:.2} s, x = {x_decided:.1} m (3 dB point {x3:.1} m); {} SDUs forwarded, interruption {} ms", v * 3.6, f(e, "decided_s"), f(e, "sdus_forwarded"), e["interruption_ms"]);
    assert!(v * 3.6 > 20.0 && v * 3.6 < 60.0, "speed {:.1} km/h", v * 3.6);
    assert!(x_decided > x3 && x_decided < x3 + 40.0);
    assert!((f(e, "detach_s") - f(e, "decided_s") - 0.012).abs() < 1e-9, "2 × the example's 6 ms X2");
    assert_eq!(f(e, "interruption_ms"), 49.5);
    assert!(f(e, "sdus_forwarded") > 0.0);
    assert_eq!(f(e, "sdus_discarded"), 0.0, "lossless");
    // nothing lost on the radio (the 1 MB PDCP queue does tail-drop: that is the study's knob)
    let radio_lost: f64 = out.summary["links"].as_array().unwrap().iter().filter(|l| l["name"] == "radio-ue:source->ue").map(|l| l["lost_packets"].as_f64().unwrap()).sum();
    assert_eq!(radio_lost, 0.0);
    assert_eq!(out.summary["lte"]["ues"][0]["cell"], "target");
    assert!(flow_f64(&out, 0, "bytes_delivered") > 0.0);
}

fn column<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a [f64] {
    let t = out.timeseries.iter().find(|t| t.name == table).unwrap_or_else(|| panic!("no {table} table"));
    match t.column(col) {
        Some(celltcp_scenario::ColumnData::F64(v)) => v,
        other => panic!("{table}.{col}: {other:?}"),
    }
}

fn column_i64<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a [i64] {
    let t = out.timeseries.iter().find(|t| t.name == table).unwrap_or_else(|| panic!("no {table} table"));
    match t.column(col) {
        Some(celltcp_scenario::ColumnData::I64(v)) => v,
        other => panic!("{table}.{col}: {other:?}"),
    }
}

// Study 001's load surge: 20 UEs attached from the start, idle, all start a download at 2 s.
// No flow delivers anything before 2 s, every flow delivers its first bytes within 300 ms of
// it (and not before the SYN and SYN-ACK have crossed the 11 ms of wired delay each way), all
// within 30 ms of each other; the
// cell's downlink PRB use (10 ms samples of `lte_cell`) is exactly 0 before the instant and
// jumps to full use within 300 ms, staying there.
#[test]
fn load_surge_all_flows_start_together_and_fill_the_cell() {
    let start = 2.0;
    let text = format!(
        r#"duration = "4s"
[lte]
bandwidth = "10MHz"
[[lte.enb]]
name = "enb"
position = [0.0, 0.0]
[[lte.ue]]
name = "ue"
count = 20
enb = "enb"
placement = {{ type = "disc", radius = "250m" }}
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "10ms"
queue = "100000p"
[[flow]]
name = "dl"
app = "bulk"
from = "server"
to = "ue*"
cc = "cubic"
mss = 1400
window_exact = "1MB"
start = "{start}s"
"#
    );
    let out = run_text(&text, 1);
    let flows = out.summary["flows"].as_array().unwrap().len();
    assert_eq!(flows, 20);
    let (t, flow, delivered) = (column(&out, "tcp", "time_s"), column_i64(&out, "tcp", "flow"), column(&out, "tcp", "delivered_bytes"));
    let mut first = vec![f64::INFINITY; flows];
    for ((&t, &f), &d) in t.iter().zip(flow).zip(delivered) {
        if d > 0.0 {
            first[f as usize] = first[f as usize].min(t);
        }
    }
    let (lo, hi) = first.iter().fold((f64::INFINITY, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
    println!("20 flows starting at {start} s: first bytes delivered between {lo:.3} s and {hi:.3} s");
    // one-way wired delay server–PGW 10 ms + S1-U 1 ms: the handshake needs twice that
    assert!(lo > start + 0.022, "a flow delivered data at {lo:.3} s, before its handshake could end");
    assert!(hi <= start + 0.3, "a flow delivered nothing until {hi:.3} s");
    // together: the UEs' handshakes differ by their scheduling-request opportunities (10 ms
    // period), a few TTIs of contention and the 10 ms sampling
    assert!(hi - lo < 0.03, "first deliveries spread over {:.3} s", hi - lo);
    let (ct, cell, util) = (column(&out, "lte_cell", "time_s"), column_i64(&out, "lte_cell", "cell"), column(&out, "lte_cell", "dl_prb_utilization"));
    let series: Vec<(f64, f64)> = ct.iter().zip(cell).zip(util).filter(|((_, &c), _)| c == 0).map(|((&t, _), &u)| (t, u)).collect();
    let before: Vec<f64> = series.iter().filter(|x| x.0 <= start + 1e-9).map(|x| x.1).collect();
    let surge = series.iter().filter(|x| x.0 > start && x.0 <= start + 0.3).map(|x| x.1).fold(0f64, f64::max);
    let after: Vec<f64> = series.iter().filter(|x| x.0 > start + 0.3).map(|x| x.1).collect();
    let mean_after = after.iter().sum::<f64>() / after.len() as f64;
    let first_busy = series.iter().find(|x| x.1 > 0.0).map(|x| x.0).unwrap();
    println!("cell PRB use: {} samples before {start} s, max {:.3}; first non-zero sample at {first_busy:.2} s; max {surge:.3} within 300 ms; mean {mean_after:.3} after", before.len(), before.iter().fold(0f64, |a, &b| a.max(b)));
    assert!(before.len() >= 150 && before.iter().all(|&u| u == 0.0), "the cell carried data before the surge");
    assert!(first_busy > start, "{first_busy}");
    assert!(surge >= 0.95, "PRB use {surge:.3} within 300 ms of the surge");
    assert!(mean_after >= 0.95, "PRB use {mean_after:.3} after the surge");
}
