//! iperf3 parity (issue 18 item 3): `parallel` (`-P`), `bidir` (`--bidir`), `omit` (`-O`) and
//! UDP interval reports (`-u`), checked against what iperf3 itself does: `-P N` opens N
//! connections whose `[SUM]` shares the bottleneck, `--bidir` sends both ways at once over a
//! full-duplex link, `-O` leaves the first seconds out of the totals and then runs `-t` more,
//! and a UDP receiver's interval counts datagrams expected and lost from sequence gaps.

use celltcp_scenario::{run, ColumnData, RunOptions};
use serde_json::Value;

fn run_ok(text: &str) -> celltcp_scenario::RunOutput {
    run(text, &[], &RunOptions { seed: Some(3), ..Default::default() }, &mut |_| true).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn scenario(flow: &str, loss: f64) -> String {
    format!(
        r#"
duration = "6s"
[[link]]
between = ["a", "b"]
rate = "20Mbps"
delay = "10ms"
queue = "100KB"
loss = {loss}
[[flow]]
name = "t"
from = "a"
to = "b"
{flow}
"#
    )
}

fn col<'a>(o: &'a celltcp_scenario::RunOutput, table: &str, name: &str) -> &'a ColumnData {
    let t = o.timeseries.iter().find(|t| t.name == table).unwrap_or_else(|| panic!("no {table} table"));
    &t.columns.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no {table}.{name}")).data
}

fn f64s(d: &ColumnData) -> Vec<f64> {
    match d {
        ColumnData::F64(v) => v.clone(),
        ColumnData::I64(v) => v.iter().map(|&x| x as f64).collect(),
        _ => panic!("not numeric"),
    }
}

fn flows(o: &celltcp_scenario::RunOutput) -> &Vec<Value> {
    o.summary["flows"].as_array().unwrap()
}

/// TCP payload rate of a 20 Mbit/s link with 1500-byte packets carrying 1448 bytes.
const PAYLOAD_BPS: f64 = 20e6 * 1448.0 / 1500.0;

#[test]
fn parallel_streams_are_connections_of_their_own_sharing_the_link() {
    let o = run_ok(&scenario("app = \"iperf\"\nparallel = 4", 0.0));
    let f = flows(&o);
    let names: Vec<&str> = f.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["t.1", "t.2", "t.3", "t.4"]);
    for (k, x) in f.iter().enumerate() {
        assert_eq!((x["test"].as_str(), x["stream"].as_u64()), (Some("t"), Some(k as u64 + 1)));
        assert!(x["goodput_bps"].as_f64().unwrap() > 0.1 * PAYLOAD_BPS, "{x}");
    }
    // the [SUM] fills the link as one stream would, no more
    let sum: f64 = f.iter().map(|x| x["goodput_bps"].as_f64().unwrap()).sum();
    assert!(sum > 0.8 * PAYLOAD_BPS && sum <= PAYLOAD_BPS * 1.001, "sum {sum}");
    let flow_col = f64s(col(&o, "iperf", "flow"));
    for k in 0..4 {
        assert_eq!(flow_col.iter().filter(|&&x| x == k as f64).count(), 6, "stream {k}: one report a second");
    }
}

#[test]
fn bidir_sends_both_ways_at_once_over_a_full_duplex_link() {
    let o = run_ok(&scenario("app = \"iperf\"\nbidir = true", 0.0));
    let f = flows(&o);
    assert_eq!(f[0]["name"], "t.tx");
    assert_eq!(f[1]["name"], "t.rx");
    assert_eq!((f[0]["reverse"].as_bool(), f[1]["reverse"].as_bool()), (Some(false), Some(true)));
    // each direction has the link's rate to itself, but each queue also holds the other
    // direction's ACKs behind its data: two-way traffic through drop-tail queues loses some of
    // the capacity to ACK compression (Zhang, Shenker & Clark, SIGCOMM 1991), and how the loss
    // splits between the two directions depends on the ACK policy (16.2 + 14.8 Mbit/s with
    // delayed ACKs from the start, 18.0 + 13.0 with Linux's 16 quick ACKs; 31.0 either way)
    let g: Vec<f64> = f.iter().map(|x| x["goodput_bps"].as_f64().unwrap()).collect();
    assert!(g.iter().all(|&x| x > 0.6 * PAYLOAD_BPS), "{g:?}");
    assert!(g[0] + g[1] > 1.5 * PAYLOAD_BPS, "{g:?}");
}

#[test]
fn omit_leaves_the_first_seconds_out_and_then_runs_the_test_time() {
    // iperf3 -t 3 -O 1.5 -i 1: the test lasts 4.5 s; reports end at 1, 1.5 (omitted), 2.5, 3.5, 4.5
    let o = run_ok(&scenario("app = \"iperf\"\nduration = \"3s\"\nomit = \"1.5s\"", 0.0));
    let end = f64s(col(&o, "iperf", "end_s"));
    let omitted = f64s(col(&o, "iperf", "omitted"));
    assert_eq!(end, [1.0, 1.5, 2.5, 3.5, 4.5]);
    assert_eq!(omitted, [1.0, 1.0, 0.0, 0.0, 0.0]);
    let bytes = f64s(col(&o, "iperf", "bytes"));
    let f = &flows(&o)[0];
    assert_eq!(f["omit_s"].as_f64(), Some(1.5));
    let kept: f64 = bytes[2..].iter().sum::<f64>() * 8.0 / 3.0;
    assert!((f["goodput_bps"].as_f64().unwrap() - kept).abs() < 1.0, "{f} vs {kept}");
    // slow start is in the omitted part: the kept rate is above the whole test's mean
    let all: f64 = bytes.iter().sum::<f64>() * 8.0 / 4.5;
    assert!(kept > all, "{kept} <= {all}");
}

#[test]
fn udp_intervals_count_expected_and_lost_datagrams_from_sequence_gaps() {
    // 5 Mbit/s of 1448-byte datagrams = 431.6 a second; 10% random loss on the link
    let o = run_ok(&scenario("app = \"udp\"\nrate = \"5Mbps\"\ninterval = \"2s\"", 0.1));
    let packets = f64s(col(&o, "iperf", "packets"));
    let lost = f64s(col(&o, "iperf", "lost_packets"));
    let bytes = f64s(col(&o, "iperf", "bytes"));
    let jitter = f64s(col(&o, "iperf", "jitter_ms"));
    assert_eq!(packets.len(), 3);
    for k in 0..3 {
        // the first interval misses the ~5 datagrams still on the 10 ms link at its end
        assert!((packets[k] - 2.0 * 5e6 / 8.0 / 1448.0).abs() <= 6.0, "{packets:?}");
        assert_eq!(bytes[k], (packets[k] - lost[k]) * 1448.0);
        assert!(jitter[k] >= 0.0);
    }
    let f = &flows(&o)[0];
    let ratio = lost.iter().sum::<f64>() / packets.iter().sum::<f64>();
    assert!((ratio - 0.1).abs() < 0.03, "lost {ratio}");
    assert_eq!(lost.iter().sum::<f64>() + bytes.iter().sum::<f64>() / 1448.0, packets.iter().sum::<f64>());
    assert!(f["datagrams_received"].as_f64().unwrap() >= bytes.iter().sum::<f64>() / 1448.0);
    assert!(f64s(col(&o, "iperf", "retransmits")).iter().all(|x| x.is_nan()));
}

#[test]
fn bad_iperf_keys_are_refused_naming_the_key() {
    for (flow, key, want) in [
        ("app = \"iperf\"\nparallel = 0", "parallel", "expected 1..128 streams"),
        ("app = \"iperf\"\nparallel = 129", "parallel", "expected 1..128 streams"),
        ("app = \"iperf\"\nbidir = true\nreverse = true", "bidir", "does not go with `reverse = true`"),
        ("app = \"iperf\"\nomit = \"0s\"", "omit", "greater than zero"),
        ("app = \"bulk\"\nomit = \"1s\"", "omit", "does not apply to app \"bulk\""),
        ("app = \"udp\"\nbidir = true", "bidir", "does not apply to app \"udp\""),
    ] {
        let e = run(&scenario(flow, 0.0), &[], &RunOptions::default(), &mut |_| true).err().unwrap_or_else(|| panic!("accepted: {flow}")).to_string();
        assert!(e.contains(&format!("flow[0].{key}")) && e.contains(want), "{flow}: {e}");
    }
    let text = scenario("app = \"iperf\"\nparallel = 2", 0.0) + "[[flow]]\nname = \"t.2\"\napp = \"bulk\"\nfrom = \"a\"\nto = \"b\"\n";
    let e = run(&text, &[], &RunOptions::default(), &mut |_| true).err().unwrap().to_string();
    assert!(e.contains("two flows are named \"t.2\""), "{e}");
}
