//! The configuration as run (`validate()`, `run()`'s `config`, manifest.json) has every default
//! filled in and, read back as a scenario, runs exactly the same.

use celltcp_scenario::config::Config;
use celltcp_scenario::{run, validate, RunOptions};

const APPS: &str = r#"
duration = "5s"
[[link]]
between = ["a", "r"]
rate = "20Mbps"
delay = "5ms"
[[link]]
between = ["r", "b"]
rate = "10Mbps"
delay = "10ms"
queue = "50p"
loss = 0.001
[[flow]]
app = "bulk"
from = "a"
to = "b"
[[flow]]
app = "iperf"
from = "a"
to = "b"
cc = "dctcp"
start = "1s"
[[flow]]
app = "udp"
from = "b"
to = "a"
[[flow]]
app = "ping"
from = "a"
to = "b"
"#;

/// The summary of a run, and the summary of the run of its configuration as run.
fn twice(text: &str, overrides: &[String]) -> (serde_json::Value, serde_json::Value, serde_json::Value) {
    let base_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let opts = RunOptions { base_dir: Some(base_dir), ..RunOptions::default() };
    let a = run(text, overrides, &opts, &mut |_| true).unwrap();
    let cfg: Config = serde_json::from_value(a.config.clone()).unwrap();
    let again = toml::to_string(&cfg).unwrap();
    let b = run(&again, &[], &opts, &mut |_| true).unwrap_or_else(|e| panic!("{e}\n{again}"));
    assert_eq!(a.config, b.config, "the configuration as run is a fixed point");
    (a.summary, b.summary, a.config)
}

#[test]
fn every_default_is_written_out_and_runs_the_same() {
    let (a, b, cfg) = twice(APPS, &[]);
    assert_eq!(a, b);
    let flows = cfg["flow"].as_array().unwrap();
    let bulk = &flows[0];
    assert_eq!(bulk["name"], "flow0");
    assert_eq!(bulk["cc"]["name"], "cubic");
    assert_eq!(bulk["cc"]["beta"], 0.7);
    assert_eq!(bulk["mss"], 1448);
    assert_eq!(bulk["initial_cwnd"], 10);
    assert_eq!(bulk["min_rto"], "200ms");
    assert_eq!(bulk["sack"], true);
    assert_eq!(bulk["recovery"], "linux");
    assert_eq!(flows[1]["ecn"], true, "DCTCP runs with ECN, and the manifest says so");
    assert_eq!(flows[1]["interval"], "1s");
    assert_eq!(flows[2]["rate"], "1Mbps");
    assert_eq!(flows[3]["size"], "56B");
    assert_eq!(cfg["link"][1]["name"], "r-b");
    assert_eq!(cfg["link"][1]["queue"], "50p");
}

#[test]
fn recovery_key_selects_rfc6675_and_refuses_unknown_values() {
    let cfg = validate(APPS, &["flow.flow0.recovery=\"rfc6675\"".into()], None).unwrap();
    assert_eq!(cfg["flow"][0]["recovery"], "rfc6675");
    let e = validate(APPS, &["flow.flow0.recovery=\"newreno\"".into()], None).unwrap_err().to_string();
    assert!(e.contains("recovery") && e.contains("newreno") && e.contains("rfc6675"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn pacing_quantum_key_selects_segment_pacing_and_refuses_unknown_values() {
    // Default: Linux's TSO autosizing (docs/tcp.md, "Pacing"), written out as run.
    let cfg = validate(APPS, &[], None).unwrap();
    assert_eq!(cfg["flow"][0]["pacing_quantum"], "tso");
    let cfg = validate(APPS, &["flow.flow0.pacing_quantum=\"segment\"".into()], None).unwrap();
    assert_eq!(cfg["flow"][0]["pacing_quantum"], "segment");
    let e = validate(APPS, &["flow.flow0.pacing_quantum=\"skb\"".into()], None).unwrap_err().to_string();
    assert!(e.contains("pacing_quantum") && e.contains("skb") && e.contains("segment") && e.contains("tso"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    // a TCP key: refused on a UDP flow
    let e = validate(APPS, &["flow.flow2.pacing_quantum=\"segment\"".into()], None).unwrap_err().to_string();
    assert!(e.contains("pacing_quantum"), "{e}");
}

#[test]
fn ack_policy_keys_are_checked_and_written_out() {
    let cfg = validate(APPS, &["flow.flow0.delayed_ack_timeout=\"200ms\"".into(), "flow.flow0.quickack=16".into(), "flow.flow0.nagle=false".into()], None).unwrap();
    assert_eq!(cfg["flow"][0]["delayed_ack_timeout"], "200ms");
    assert_eq!(cfg["flow"][0]["quickack"], 16);
    assert_eq!(cfg["flow"][0]["nagle"], false);
    // defaults: Linux's adaptive ATO (no fixed timer written), Linux's quick-ACK start (16), Nagle on
    assert!(cfg["flow"][1]["delayed_ack_timeout"].is_null(), "{}", cfg["flow"][1]);
    assert_eq!(cfg["flow"][1]["quickack"], 16);
    assert_eq!(cfg["flow"][1]["nagle"], true);
    let e = validate(APPS, &["flow.flow0.delayed_ack_timeout=\"2s\"".into()], None).unwrap_err().to_string();
    assert!(e.contains("delayed_ack_timeout") && e.contains("2s") && e.contains("500ms"), "{e}");
    let e = validate(APPS, &["flow.flow0.quickack=17".into()], None).unwrap_err().to_string();
    assert!(e.contains("quickack") && e.contains("17"), "{e}");
}

#[test]
fn lte_defaults_are_written_out_and_run_the_same() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/handover.toml")).unwrap();
    let (a, b, cfg) = twice(&text, &["duration=\"4s\"".into()]);
    assert_eq!(a, b);
    let lte = &cfg["lte"];
    assert_eq!(lte["prbs"], 50, "10 MHz has 50 PRBs");
    assert_eq!(lte["rlc"]["t_poll_retransmit"], "45ms", "TS 36.331 §9.2.1.1 default");
    assert_eq!(lte["rlc"]["max_retx_threshold"], 4);
    assert_eq!(lte["pdcp"]["sn_field_bits"], 12);
    assert_eq!(lte["pdcp"]["buffer"], "1MB", "as the file sets it");
    assert!(lte["pdcp"].get("discard_timer").is_none(), "no discard timer: infinity (TS 36.331)");
    assert_eq!(lte["handover"]["time_to_trigger"], "256ms", "as the file sets it");
    assert_eq!(lte["handover"]["algorithm"], "a3");
    assert!(lte["handover"]["t310"].is_string(), "{}", lte["handover"]);
    // `validate` returns the same configuration as `run`
    assert_eq!(validate(&text, &["duration=\"4s\"".into()], None).unwrap(), cfg);
}

#[test]
fn proxy_defaults_are_written_out_and_run_the_same() {
    // a router proxy with only `node` and `client_cc` given, and one on a second router with
    // every key set: the as-run file lists every key, defaults filled in
    let text = r#"
duration = "3s"
[[node]]
name = "px"
kind = "router"
[[node]]
name = "px2"
kind = "router"
[[link]]
between = ["a", "px"]
rate = "10Mbps"
delay = "10ms"
loss = 0.002
[[link]]
between = ["px", "px2"]
rate = "100Mbps"
delay = "5ms"
[[link]]
between = ["px2", "b"]
rate = "100Mbps"
delay = "20ms"
[[proxy]]
node = "px"
client_cc = "newreno"
[[proxy]]
node = "px2"
buffer = "2MB"
per_connection_buffer = "256KB"
syn = "after-server"
server_cc = { name = "cubic", beta = 0.8 }
ports = [5201]
[[flow]]
app = "iperf"
from = "a"
to = "b"
reverse = true
"#;
    let (a, b, cfg) = twice(text, &[]);
    assert_eq!(a, b);
    let p = &cfg["proxy"][0];
    assert_eq!(p["buffer"], "64MB", "{p:#}");
    assert_eq!(p["per_connection_buffer"], "1MB");
    assert_eq!(p["syn"], "immediate");
    assert_eq!(p["client_cc"]["name"], "newreno");
    assert_eq!(p["server_cc"]["name"], "cubic");
    assert_eq!(p["server_cc"]["beta"], 0.7, "the default leg's parameters are written out");
    assert!(p.get("ports").is_none(), "every port: the key stays absent");
    let q = &cfg["proxy"][1];
    assert_eq!(q["buffer"], "2MB");
    assert_eq!(q["per_connection_buffer"], "256KB");
    assert_eq!(q["syn"], "after-server");
    assert_eq!(q["client_cc"]["name"], "cubic");
    assert_eq!(q["server_cc"]["beta"], 0.8);
    assert_eq!(q["ports"], serde_json::json!([5201]));
    // both proxies ran: px intercepted the client's SYN, px2 px's server leg
    assert_eq!(a["proxies"].as_array().unwrap().len(), 2);
    assert_eq!(a["proxies"][1]["connections"], 1, "{:#}", a["proxies"]);
    // a per-connection buffer larger than the shared one is clamped to it, and the manifest says so
    let cfg = validate(text, &["proxy.0.buffer=\"1MB\"".into()], None).unwrap();
    assert_eq!(cfg["proxy"][0]["per_connection_buffer"], "1MB");
}

#[test]
fn wifi_as_run_omits_unset_keys_as_the_toml_does_and_runs_the_same() {
    // examples/wifi.toml sets `mcs`, `distances` and `ampdu`; `distance`, `positions`,
    // `ap_position`, `snr`, `snrs` and `max_ampdu` are unset: absent from the JSON manifest as
    // from its TOML form (before: written as null), and the as-run file runs the same.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/wifi.toml")).unwrap();
    let (a, b, cfg) = twice(&text, &["duration=\"1s\"".into()]);
    assert_eq!(a, b);
    let w = cfg["wifi"][0].as_object().unwrap();
    let nulls: Vec<&String> = w.iter().filter(|(_, v)| v.is_null()).map(|(k, _)| k).collect();
    assert!(nulls.is_empty(), "keys written as null: {nulls:?}");
    for k in ["distance", "positions", "ap_position", "snr", "snrs", "max_ampdu"] {
        assert!(!w.contains_key(k), "{k} was not set: {}", cfg["wifi"][0]);
    }
    assert_eq!(w["mcs"], 7);
    assert_eq!(w["ampdu"], true);
    assert_eq!(w["distances"], serde_json::json!(["5m", "10m", "15m", "20m"]));
    // the JSON keys are those of the TOML as-run form
    let toml_keys: std::collections::BTreeSet<String> = {
        let c: Config = serde_json::from_value(cfg.clone()).unwrap();
        let t: toml::Value = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
        t["wifi"][0].as_table().unwrap().keys().cloned().collect()
    };
    assert_eq!(w.keys().cloned().collect::<std::collections::BTreeSet<_>>(), toml_keys);
    // a BSS without `mcs` (rate control other than constant would leave it unset too) and
    // with `positions`: the default `mcs` of the constant rate is filled in
    let pos = text.replace("mcs = 7\n", "").replace("distances = [\"5m\", \"10m\", \"15m\", \"20m\"]", "positions = [[5.0, 0.0], [0.0, 10.0], [15.0, 0.0], [0.0, 20.0]]");
    let cfg = validate(&pos, &[], None).unwrap();
    let w = cfg["wifi"][0].as_object().unwrap();
    assert!(w.values().all(|v| !v.is_null()), "{}", cfg["wifi"][0]);
    assert!(w["mcs"].is_u64() && w.contains_key("positions") && !w.contains_key("distances"), "{}", cfg["wifi"][0]);
}
