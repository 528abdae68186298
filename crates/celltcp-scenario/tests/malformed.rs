//! A corpus of malformed scenarios (issue 17): each is refused with one line that names the key
//! (and the line where there is one), never a panic, a signal or a silently changed value.

use celltcp_scenario::validate;

const WIRED: &str = r#"
duration = "5s"
[[link]]
name = "bottleneck"
between = ["a", "b"]
rate = "10Mbps"
delay = "10ms"
[[flow]]
name = "f"
from = "a"
to = "b"
app = "bulk"
"#;

const LTE: &str = r#"
duration = "2s"
[lte]
bandwidth = "10MHz"
[lte.handover]
time_to_trigger = "256ms"
[[lte.enb]]
name = "source"
position = [0.0, 0.0]
[[lte.enb]]
name = "target"
position = [750.0, 0.0]
[[lte.ue]]
name = "ue"
enb = "source"
position = [100.0, 0.0]
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "20ms"
[[flow]]
name = "dl"
app = "bulk"
from = "server"
to = "ue"
"#;

const TWO_PCAPS: &str = r#"
duration = "5s"
[[link]]
name = "a b"
between = ["a", "b"]
rate = "10Mbps"
delay = "10ms"
pcap = true
[[link]]
name = "a_b"
between = ["b", "c"]
rate = "10Mbps"
delay = "10ms"
pcap = true
[[flow]]
from = "a"
to = "c"
app = "bulk"
"#;

/// `(base, --set overrides, a word the one-line error must contain)`.
const REFUSED: &[(&str, &[&str], &str)] = &[
    // array lengths: extra elements were dropped silently
    (WIRED, &["link.0.between=[\"a\",\"b\",\"c\"]"], "between"),
    (WIRED, &["link.0.between=[\"a\"]"], "between"),
    (WIRED, &["flow.0.trace_window=[\"1s\",\"2s\",\"3s\"]"], "trace_window"),
    (LTE, &["lte.enb.0.position=[0.0,0.0,5.0]"], "position"),
    (LTE, &["lte.ue.0.position=[1.0,2.0,3.0]"], "position"),
    // casts after range checks: values that became something else
    (LTE, &["lte.handover.t310=\"4294967.296s\""], "t310"),
    (LTE, &["lte.handover.t310=\"50.5ms\""], "t310"),
    (LTE, &["lte.handover.measurement_period=\"1.5ms\""], "measurement_period"),
    // two links writing one pcap file (a torn file)
    (TWO_PCAPS, &[], "pcap/a_b.pcap"),
    // errors inside tables keep their key and line
    (WIRED, &["link.0.queue={type=\"red\", min_th=\"abc\"}"], "queue.min_th"),
    (WIRED, &["link.0.queue={type=\"red\", wrong=1}"], "queue.wrong"),
    (WIRED, &["link.0.queue={type=\"codel\", target=\"5 parsecs\"}"], "queue.target"),
    (WIRED, &["link.0.loss={model=\"gilbert-elliott\", p_good_to_bad=\"x\"}"], "loss.p_good_to_bad"),
    (WIRED, &["link.0.loss={forward=1.5}"], "loss.forward"),
    (WIRED, &["link.0.loss={forward=0.1, p=0.1}"], "not both"),
    (WIRED, &["link.0.loss={forward={forward=0.1}}"], "per-direction"),
    (WIRED, &["flow.0.window=\"64KB\"", "flow.0.window_exact=\"64KB\""], "window_exact"),
    (LTE, &["lte.ue.0.position=\"x\""], "position"),
    // inside a tagged inline table the message names the inner key, not the table
    (LTE, &["lte.ue.0.mobility={model=\"constant_velocity\", start=[1.0,2.0,3.0], heading_deg=0.0, speed={dist=\"constant\", kmh=10.0}}"], "mobility.start"),
    (LTE, &["lte.ue.0.mobility={model=\"constant_velocity\", start=[1.0,2.0], heading_deg=\"north\", speed={dist=\"constant\", kmh=10.0}}"], "mobility.heading_deg"),
    (LTE, &["lte.ue.0.mobility={model=\"constant_velocity\", start=[1.0,2.0], heading_deg=0.0, speed={dist=\"cauchy\", kmh=10.0}}"], "mobility.speed.dist"),
    (LTE, &["lte.ue.0.mobility={model=\"constant_velocity\", start=[1.0,2.0], heading_deg=0.0, speed={dist=\"constant\", kmh=\"fast\"}}"], "mobility.speed.kmh"),
    (LTE, &["lte.ue.0.mobility={model=\"teleport\", start=[1.0,2.0]}"], "mobility.model"),
    (LTE, &["lte.ue.0.mobility={model=\"constant_velocity\", start=[1.0,2.0], heading_deg=0.0, speed={dist=\"constant\", kmh=10.0, bar=2}}"], "mobility.speed.bar"),
    // flow names become parts of file names
    (WIRED, &["flow.0.name=\"\""], "flow[0].name"),
    (WIRED, &["flow.0.name=\"../x\""], "flow[0].name"),
    (WIRED, &["flow.0.name=\"a\\u0007b\""], "flow[0].name"),
    // quantities the clock or a run cannot hold
    (WIRED, &["duration=\"20000000s\""], "at most 10000000s"),
    (WIRED, &["link.0.delay=\"1e30s\""], "delay"),
    (WIRED, &["link.0.delay=\"0.5ns\""], "whole number of nanoseconds"),
    (WIRED, &["flow.0.window=\"1e30GB\""], "window"),
    (WIRED, &["flow.0.app=\"udp\"", "flow.0.rate=\"1e30Gbps\""], "rate"),
    (WIRED, &["link.0.queue=\"100000000000000p\""], "queue"),
    // --set keys that are not keys
    (WIRED, &["nonsense"], "--set"),
    // every cell failing (the failed cell went on serving its UE)
    (LTE, &["lte.handover.cell_failure=[{cell=\"source\", at=\"1s\"}, {cell=\"target\", at=\"1.5s\"}]"], "every cell would fail"),
    // keys that do not apply (the examples docs/scenario.md gives)
    (WIRED, &["flow.0.count=5"], "does not apply"),
    (WIRED, &["flow.0.app=\"udp\"", "flow.0.rate=\"1Mbps\"", "flow.0.mss=1000"], "does not apply"),
    // MPTCP (docs/mptcp.md): each key names itself, its value and what was expected
    (WIRED, &["flow.0.mptcp={cc=\"cubic\"}"], "mptcp.cc = \"cubic\": expected"),
    (WIRED, &["flow.0.mptcp={path_manager=\"mesh\"}"], "mptcp.path_manager"),
    (WIRED, &["flow.0.mptcp={subflows=20}"], "mptcp.subflows = 20"),
    (WIRED, &["flow.0.mptcp={scheduler=\"x\"}"], "mptcp.scheduler"),
    (WIRED, &["flow.0.mptcp=\"yes\""], "mptcp"),
    (WIRED, &["flow.0.app=\"udp\"", "flow.0.mptcp=true"], "mptcp"),
    // sizes that cannot work
    (LTE, &["lte.pdcp.buffer=\"0B\""], "buffer"),
    // inputs that never finish
    (WIRED, &["duration=\"1000000000000s\""], "duration"),
    (WIRED, &["link.0.rate=\"1e30Gbps\""], "rate"),
];

#[test]
fn every_malformed_input_is_refused_with_one_line_naming_its_key() {
    let mut failures = Vec::new();
    for (i, (base, sets, word)) in REFUSED.iter().enumerate() {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match validate(base, &sets, None) {
            Ok(_) => failures.push(format!("#{i} {sets:?}: accepted")),
            Err(e) => {
                let msg = e.to_string();
                eprintln!("#{i}: {msg}");
                if !msg.contains(word) || msg.contains('\n') || msg.len() > 400 {
                    failures.push(format!("#{i} {sets:?}: {msg:?} does not name {word:?} on one short line"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn nesting_and_sizes_that_would_crash_are_refused() {
    // a --set path 10,000 levels deep (overflowed the stack: SIGSEGV)
    let deep = format!("{}=1", vec!["a"; 10_000].join("."));
    let e = validate(WIRED, &[deep], None).unwrap_err().to_string();
    assert!(e.contains("--set") && e.len() < 400, "{e}");
    // TOML nested 10,000 levels deep
    let text = format!("{WIRED}\nx = {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let e = validate(&text, &[], None).unwrap_err().to_string();
    eprintln!("{e}");
    assert!(e.len() < 400, "{e}");
    let text = format!("{WIRED}\nx = {}1{}\n", "{a=".repeat(10_000), "}".repeat(10_000));
    let e = validate(&text, &[], None).unwrap_err().to_string();
    eprintln!("{e}");
    assert!(e.len() < 400, "{e}");
    // a megabyte key is not echoed in full
    let text = format!("{WIRED}\n{} = 1\n", "k".repeat(1 << 20));
    let e = validate(&text, &[], None).unwrap_err().to_string();
    assert!(e.len() < 1000 && e.contains("unknown field"), "{}", &e[..e.len().min(2000)]);
    // a billion UEs (aborted in allocation)
    let many = LTE.replace("position = [100.0, 0.0]\n", "count = 1000000000\nplacement = { type = \"disc\", radius = \"100m\" }\n");
    let e = validate(&many, &[], None);
    let e = e.unwrap_err().to_string();
    eprintln!("{e}");
    assert!(e.contains("count"), "{e}");
    // two groups of 600,000 UEs: 1.2 million in all
    let two = many.replace("count = 1000000000", "count = 600000");
    let two = format!("{two}\n[[lte.ue]]\nname = \"v\"\ncount = 600000\nplacement = {{ type = \"disc\", radius = \"100m\" }}\n");
    let e = validate(&two, &[], None).unwrap_err().to_string();
    assert!(e.contains("in all") && e.contains("lte.ue[1].count"), "{e}");
}

#[test]
fn the_bases_are_valid() {
    validate(WIRED, &[], None).unwrap();
    validate(LTE, &[], None).unwrap();
}
