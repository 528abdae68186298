//! The public `Simulation`: stepping in pieces gives results bit-identical to one run, and
//! packets injected from outside cross the topology.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::{Body, IcmpEcho, Packet};
use celltcp_scenario::{ColumnData, RunOptions, RunOutput, Simulation};

fn bits(o: &RunOutput) -> Vec<(String, String, Vec<u64>)> {
    let mut v = Vec::new();
    for t in &o.timeseries {
        for c in &t.columns {
            let b = match &c.data {
                ColumnData::F64(x) => x.iter().map(|f| f.to_bits()).collect(),
                ColumnData::I64(x) => x.iter().map(|i| *i as u64).collect(),
                ColumnData::Bool(x) => x.iter().map(|b| *b as u64).collect(),
                ColumnData::Str(x) => x.iter().map(|s| s.len() as u64).collect(),
            };
            v.push((t.name.clone(), c.name.clone(), b));
        }
    }
    v
}

fn example(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs `text` once with `run()` and once in irregular steps (lengths from 1 ns to ~70 ms drawn
/// by an LCG, some landing exactly on the next event's time); both outputs must be equal.
fn stepping_equals_running(text: &str, overrides: &[String]) {
    let opts = RunOptions { seed: Some(3), ..Default::default() };
    let mut whole = Simulation::from_text(text, overrides, &opts).unwrap();
    assert!(whole.run(&mut |_| true));
    let a = whole.into_output().unwrap();

    let mut stepped = Simulation::from_text(text, overrides, &opts).unwrap();
    let mut x: u64 = 0x5eed;
    let mut steps = 0;
    while stepped.now() < stepped.end() {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = x >> 33;
        let t = match r % 4 {
            // exactly at the next event (and so that event runs in this step)
            0 => stepped.next_event_time().unwrap_or(stepped.end()),
            1 => stepped.now() + SimDuration::from_nanos(1 + r % 1000),
            _ => stepped.now() + SimDuration::from_micros(r % 70_000),
        };
        stepped.step_until(t);
        // the summary can be taken in the middle of a run
        if steps % 50 == 7 {
            let mid = stepped.summary();
            assert!(mid["flows"].is_array());
        }
        steps += 1;
    }
    assert!(steps > 100, "only {steps} steps");
    assert!(stepped.next_event_time().is_none());
    stepped.finish();
    let b = stepped.into_output().unwrap();
    assert_eq!(a.events, b.events);
    assert_eq!(a.sim_time_s, b.sim_time_s);
    assert_eq!(a.summary, b.summary);
    assert_eq!(bits(&a), bits(&b));
}

#[test]
fn stepping_a_dumbbell_equals_one_run() {
    stepping_equals_running(&example("dumbbell.toml"), &["duration=\"8s\"".into()]);
}

#[test]
fn stepping_an_lte_cell_equals_one_run() {
    stepping_equals_running(&example("lte-cell.toml"), &["duration=\"2s\"".into()]);
}

#[test]
fn an_injected_echo_request_crosses_the_link_and_is_answered() {
    let text = r#"
duration = "1s"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "5ms"
"#;
    let mut sim = Simulation::from_text(text, &[], &RunOptions::default()).unwrap();
    let (a, b) = (sim.node("a").unwrap(), sim.node("b").unwrap());
    sim.step_until(SimTime::from_millis(100));
    let echo = IcmpEcho { reply: false, ident: 777, seq: 1, payload_len: 56, sent_at: SimTime::from_millis(100) };
    let pkt = Packet::new(0, sim.node_addr(a), sim.node_addr(b), 1, SimTime::from_millis(100), Body::Icmp(echo));
    // not into the past
    assert!(sim.inject(a, pkt, SimTime::from_millis(50)).is_err());
    sim.inject(a, pkt, SimTime::from_millis(100)).unwrap();
    // the request reaches b after 5 ms plus its serialisation; nothing has moved before
    assert_eq!(sim.next_event_time(), Some(SimTime::from_millis(100)));
    assert!(sim.run(&mut |_| true));
    let out = sim.into_output().unwrap();
    let links = out.summary["links"].as_array().unwrap();
    // one request a->b, one reply b->a
    assert_eq!(links[0]["tx_packets"], 1, "{}", links[0]);
    assert_eq!(links[1]["tx_packets"], 1, "{}", links[1]);
    assert_eq!(links[1]["delivered_packets"], 1);
}
