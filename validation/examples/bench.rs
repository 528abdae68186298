//! Runs a scenario file `REPS` times and prints one JSON line per run with the speed figures
//! `bench/run.py` reads: `cargo run --release -p celltcp-validation --example bench -- FILE [REPS]`.
//!
//! `wall_seconds` is the event loop only (setup and the summary are left out, as the ns-3 side
//! times `Simulator::Run()` only). `bottleneck_tx_pkts` counts packets sent by the link direction
//! named `bottleneck` from `left` to `right` (the dumbbell's data direction), `null` if absent.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: bench FILE [REPS]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("bench: cannot read {path}: {e}");
        std::process::exit(2);
    });
    let reps: usize = args.get(2).map_or(1, |s| s.parse().expect("REPS must be a number"));
    for _ in 0..reps {
        let out = celltcp_validation::run_text(&text, 1);
        let flows = out.summary["flows"].as_array().cloned().unwrap_or_default();
        let goodput: f64 = flows.iter().filter_map(|f| f["goodput_bps"].as_f64()).sum();
        let bytes: u64 = flows.iter().filter_map(|f| f["bytes_delivered"].as_u64()).sum();
        let bottleneck = out.summary["links"]
            .as_array()
            .and_then(|ls| ls.iter().find(|l| l["name"].as_str().is_some_and(|n| n.starts_with("bottleneck")) && l["from"] == "left"))
            .cloned();
        let line = serde_json::json!({
            "simulator": "celltcp",
            "flows": flows.len(),
            "sim_seconds": out.sim_time_s,
            "wall_seconds": out.wall_time_s,
            "events": out.events,
            "goodput_bps_total": goodput,
            "per_flow_goodput_bps": flows.iter().map(|f| f["goodput_bps"].as_f64().unwrap_or(0.0)).collect::<Vec<_>>(),
            "bytes_delivered": bytes,
            "bottleneck_tx_pkts": bottleneck.as_ref().map(|l| l["tx_packets"].clone()),
            "bottleneck_drops": bottleneck.as_ref().map(|l| l["drops"].clone()),
        });
        println!("{line}");
    }
}
