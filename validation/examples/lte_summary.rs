//! Prints the LTE and flow summary of a scenario file:
//! `cargo run --release -p celltcp-validation --example lte_summary -- FILE [SEED]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("scenario file");
    let seed = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(1);
    let out = celltcp_validation::run_text(&text, seed);
    let s = &out.summary;
    for f in s["flows"].as_array().unwrap() {
        println!(
            "{:<12} goodput {:>8.3} Mbps  rtt mean {:>7.1} ms  retx {} timeouts {} recoveries {} lost {}",
            f["name"].as_str().unwrap(),
            f["goodput_bps"].as_f64().unwrap_or(0.0) / 1e6,
            f["rtt_mean_ms"].as_f64().unwrap_or(f64::NAN),
            f["retransmitted_segments"],
            f["timeouts"],
            f["fast_recoveries"],
            f["data_packets_lost"]
        );
    }
    if let Some(l) = s.get("lte") {
        println!("{}", serde_json::to_string_pretty(&l["cells"]).unwrap());
        if std::env::var_os("UE").is_some() {
            println!("{}", serde_json::to_string_pretty(&l["ues"][0]).unwrap());
        }
        if l["handovers"].as_array().is_some_and(|a| !a.is_empty()) || l["radio_link_failures"].as_array().is_some_and(|a| !a.is_empty()) {
            println!("handovers {}", serde_json::to_string_pretty(&l["handovers"]).unwrap());
            println!("radio link failures {}", serde_json::to_string(&l["radio_link_failures"]).unwrap());
            println!("mobility {}", l["mobility"]);
        }
    }
    println!("events {} wall {:.3}s sim/wall {:.1}", out.events, out.wall_time_s, out.sim_time_s / out.wall_time_s);
}
