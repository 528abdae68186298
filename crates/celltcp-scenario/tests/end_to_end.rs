//! End-to-end runs of the scenario layer: byte conservation, determinism, bad input, pcap.

use celltcp_scenario::{run, validate, ColumnData, RunOptions};

fn run_ok(text: &str, seed: u64) -> celltcp_scenario::RunOutput {
    run(text, &[], &RunOptions { seed: Some(seed), ..Default::default() }, &mut |_| true).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A tiny deterministic generator for the property test's parameters (independent of the
/// simulator's own RNG streams).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.next() as usize % v.len()]
    }
}

#[test]
fn every_written_byte_arrives_once_in_order_under_loss_and_fragmentation() {
    // Property: over random chains, loss rates, segment sizes (3000 B segments fragment over a
    // 1500 B MTU) and congestion controls, the receiving application reads exactly the bytes the
    // sender wrote, and the connection closes. The TCP receiver delivers only in-order data, so
    // a duplicate or a gap would change the count or stall the close.
    let mut g = Lcg(0x5eed);
    for case in 0..24 {
        let hops = 1 + g.next() % 3;
        let loss = *g.pick(&[0.0, 0.001, 0.01, 0.03, 0.05]);
        let mss = *g.pick(&[536u32, 1000, 1448, 3000]);
        let cc = *g.pick(&["newreno", "cubic", "bbr"]);
        let sack = *g.pick(&[true, false]);
        let bytes = 20_000 + g.next() % 400_000;
        let mut text = String::from("duration = \"120s\"\n");
        for h in 0..hops {
            let a = if h == 0 { "src".to_string() } else { format!("r{h}") };
            let b = if h + 1 == hops { "dst".to_string() } else { format!("r{}", h + 1) };
            text += &format!(
                "[[link]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{}Mbps\"\ndelay = \"{}ms\"\nqueue = \"{}p\"\nloss = {loss}\n",
                2 + g.next() % 50,
                1 + g.next() % 40,
                5 + g.next() % 100
            );
        }
        text += &format!("[[flow]]\napp = \"bulk\"\nfrom = \"src\"\nto = \"dst\"\ncc = \"{cc}\"\nmss = {mss}\nsack = {sack}\nbytes = \"{bytes}B\"\n");
        let out = run_ok(&text, case);
        let f = &out.summary["flows"][0];
        assert_eq!(f["bytes_delivered"].as_u64(), Some(bytes), "case {case}: {f}\n{text}");
        assert_eq!(f["completed"], true, "case {case}\n{text}");
    }
}

#[test]
fn same_seed_gives_identical_results_and_another_seed_differs() {
    let text = r#"
duration = "10s"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "20ms"
queue = "50p"
loss = 0.01
[[flow]]
app = "bulk"
from = "a"
to = "b"
cc = "cubic"
[[flow]]
app = "iperf"
from = "a"
to = "b"
cc = "bbr"
start = "1s"
"#;
    let a = run_ok(text, 7);
    let b = run_ok(text, 7);
    assert_eq!(a.summary, b.summary);
    assert_eq!(bits(&a), bits(&b), "time series differ between two runs with the same seed");
    assert_eq!(a.events, b.events);
    let c = run_ok(text, 8);
    assert_ne!(bits(&a), bits(&c), "a different seed must change the random losses");
    assert!(a.summary["flows"][0]["retransmitted_segments"].as_u64().unwrap() > 0);
}

/// Every time-series value as raw bits (NaN marks "not pacing" and must compare equal to itself).
fn bits(o: &celltcp_scenario::RunOutput) -> Vec<(String, String, Vec<u64>)> {
    let mut v = Vec::new();
    for t in &o.timeseries {
        for c in &t.columns {
            let b = match &c.data {
                ColumnData::F64(x) => x.iter().map(|f| f.to_bits()).collect(),
                ColumnData::I64(x) => x.iter().map(|i| *i as u64).collect(),
                ColumnData::Bool(x) => x.iter().map(|b| u64::from(*b)).collect(),
                ColumnData::Str(x) => x.iter().map(|s| s.len() as u64).collect(),
            };
            v.push((t.name.clone(), c.name.clone(), b));
        }
    }
    v
}

const GOOD: &str = r#"duration = "5s"

[[link]]
between = ["sender", "receiver"]
rate = "10Mbps"
delay = "25ms"
queue = "100p"
loss = 0.001

[[flow]]
app = "bulk"
from = "sender"
to = "receiver"
cc = "newreno"
window = "64KB"
"#;

fn refused(text: &str) -> celltcp_scenario::ScenarioError {
    validate(text, &[], None)
        .err()
        .or_else(|| run(text, &[], &RunOptions::default(), &mut |_| true).err())
        .expect("must be refused")
}

#[test]
fn bad_input_is_refused_naming_key_value_and_expectation() {
    let e = refused(&GOOD.replace("10Mbps", "10Mbs"));
    assert_eq!(e.key, "link[0].rate");
    assert!(e.message.contains("10Mbs") && e.message.contains("Mbps"), "{e}");
    assert_eq!(e.line, Some(5));

    let e = refused(&GOOD.replace("\"25ms\"", "\"-25ms\""));
    assert_eq!(e.key, "link[0].delay");
    assert!(e.message.contains("non-negative"), "{e}");

    let e = refused(&GOOD.replace("loss = 0.001", "loss = 1.5"));
    assert_eq!(e.key, "link[0].loss");
    assert!(e.message.contains("1.5") && e.message.contains("between 0 and 1"), "{e}");
    assert_eq!(e.line, Some(8));

    let e = refused(&GOOD.replace("queue = \"100p\"", "queue = \"100p\"\ncolour = \"red\""));
    assert!(e.to_string().contains("colour"), "{e}");

    let e = refused(
        &(GOOD.to_string() + "[[link]]\nbetween = [\"x\", \"y\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n").replace("to = \"receiver\"", "to = \"y\""),
    );
    assert_eq!(e.key, "flow[0].to");
    assert!(e.message.contains("no route"), "{e}");

    let e = refused(&GOOD.replace("cc = \"newreno\"", "cc = \"vegas2\""));
    assert_eq!(e.key, "flow[0].cc");
    assert!(e.message.contains("vegas2"), "{e}");

    let e = refused(&GOOD.replace("app = \"bulk\"", "app = \"ping\""));
    assert!(e.message.contains("does not apply"), "{e}");

    let e = refused(&GOOD.replace("cc = \"newreno\"", "cc = \"newreno\"\ntrace_segments = \"yes\""));
    assert_eq!(e.key, "flow[0].trace_segments");
    assert!(e.message.contains("yes") && e.message.contains("bool"), "{e}");

    let e = refused(&GOOD.replace("cc = \"newreno\"", "trace_segments = true").replace("window = \"64KB\"\n", "").replace("app = \"bulk\"", "app = \"udp\""));
    assert_eq!(e.key, "flow[0].trace_segments");
    assert!(e.message.contains("TCP setting") && e.message.contains("udp"), "{e}");

    let e = refused(&GOOD.replace("cc = \"newreno\"", "trace_window = [\"1s\", \"2s\"]"));
    assert_eq!(e.key, "flow[0].trace_window");
    assert!(e.message.contains("trace_segments = true"), "{e}");

    let e = refused(&GOOD.replace("cc = \"newreno\"", "trace_segments = true\ntrace_window = [\"2s\", \"1s\"]"));
    assert_eq!(e.key, "flow[0].trace_window");
    assert!(e.message.contains("start before end") && e.message.contains("2s"), "{e}");
}

#[test]
fn pcap_holds_every_transmitted_packet_of_marked_links() {
    let dir = std::env::temp_dir().join(format!("celltcp-pcap-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = GOOD.replace("loss = 0.001", "loss = 0.01\npcap = true").replace("5s", "3s");
    let out = run(&text, &[], &RunOptions { seed: Some(3), out_dir: Some(dir.clone()), ..Default::default() }, &mut |_| true).unwrap();
    // with an output directory the time series are files too (streamed, not returned)
    assert_eq!(out.files, ["pcap/sender-receiver.pcap", "timeseries/tcp.parquet", "timeseries/queue.parquet", "timeseries/rtt.parquet"]);
    assert!(out.timeseries.is_empty());
    let bytes = std::fs::read(dir.join("pcap/sender-receiver.pcap")).unwrap();
    assert!(bytes.len() > 24 + 16 * 100, "pcap too small: {}", bytes.len());
    // every transmitted packet of both directions is in the capture
    let tx: u64 = out.summary["links"].as_array().unwrap().iter().map(|l| l["tx_packets"].as_u64().unwrap()).sum();
    let mut n = 0u64;
    let mut off = 24;
    while off + 16 <= bytes.len() {
        let caplen = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().unwrap()) as usize;
        off += 16 + caplen;
        n += 1;
    }
    assert_eq!(n, tx);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn time_series_are_sampled_at_the_interval() {
    let out = run_ok(&GOOD.replace("duration = \"5s\"", "duration = \"1s\"\nsample_interval = \"100ms\""), 1);
    let tcp = out.timeseries.iter().find(|t| t.name == "tcp").unwrap();
    let ColumnData::F64(t) = tcp.column("time_s").unwrap() else { panic!() };
    assert_eq!(t.len(), 11); // 0, 0.1, …, 1.0
    assert!((t[3] - 0.3).abs() < 1e-12);
}

#[test]
fn per_direction_loss_drops_only_the_direction_it_names() {
    // `loss = { forward = p }`: the data direction (between[0] -> between[1]) loses about p of
    // its packets (Bernoulli: within 5 standard deviations), the ACK direction none.
    let p = 0.02;
    let text = GOOD.replace("loss = 0.001", &format!("loss = {{ forward = {p} }}"));
    let out = run(&text, &[], &RunOptions { seed: Some(5), ..Default::default() }, &mut |_| true).unwrap();
    let links = out.summary["links"].as_array().unwrap();
    let (fwd, rev) = (&links[0], &links[1]);
    assert_eq!(fwd["from"], "sender");
    let n = fwd["tx_packets"].as_f64().unwrap();
    let lost = fwd["lost_packets"].as_f64().unwrap();
    let sd = (n * p * (1.0 - p)).sqrt();
    assert!((lost - n * p).abs() < 5.0 * sd, "forward lost {lost} of {n}, expected about {}", n * p);
    assert!(rev["tx_packets"].as_u64().unwrap() > 100);
    assert_eq!(rev["lost_packets"].as_u64(), Some(0));
    // and the reverse side alone
    let text = GOOD.replace("loss = 0.001", &format!("loss = {{ reverse = {{ model = \"bernoulli\", p = {p} }} }}"));
    let out = run(&text, &[], &RunOptions { seed: Some(5), ..Default::default() }, &mut |_| true).unwrap();
    let links = out.summary["links"].as_array().unwrap();
    assert_eq!(links[0]["lost_packets"].as_u64(), Some(0));
    assert!(links[1]["lost_packets"].as_u64().unwrap() > 0);
}

#[test]
fn iperf_summary_counts_only_the_tests_own_bytes() {
    // A 2.5 s iperf test on 10 Mbit/s with a 1000-packet queue: when the test ends the send
    // buffer and the queue still hold data that arrives later. iperf3 counts what arrived by
    // the end of the test, so the goodput cannot exceed the link's payload rate (closed form
    // 10 Mbit/s x 1448/1500), and the summary's bytes equal the interval reports' sum, the last
    // of them a partial interval ending with the test.
    let text = r#"duration = "6s"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "10ms"
queue = "1000p"
[[flow]]
app = "iperf"
from = "a"
to = "b"
duration = "2.5s"
"#;
    let out = run_ok(text, 1);
    let f = &out.summary["flows"][0];
    let bytes = f["bytes_delivered"].as_f64().unwrap();
    let g = f["goodput_bps"].as_f64().unwrap();
    assert!(g <= 10e6 * 1448.0 / 1500.0 * 1.001 && g > 7e6, "goodput {g}");
    let t = out.timeseries.iter().find(|t| t.name == "iperf").expect("iperf table");
    let col = |n: &str| match &t.columns.iter().find(|c| c.name == n).unwrap().data {
        ColumnData::F64(x) => x.clone(),
        _ => panic!("{n}"),
    };
    let (ends, sum) = (col("end_s"), col("bytes").iter().sum::<f64>());
    assert_eq!(ends, vec![1.0, 2.0, 2.5]);
    assert_eq!(sum, bytes);
    // the sender's own count shows data still went out after the test
    assert!(f["bytes_sent"].as_f64().unwrap() > bytes + 10_000.0, "{f}");
}
