//! Prints the summary of a scenario file: `cargo run --release -p celltcp-validation --example summary -- FILE [SEED]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("scenario file");
    let seed = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(1);
    let out = celltcp_validation::run_text(&text, seed);
    println!("{}", serde_json::to_string_pretty(&out.summary["flows"]).unwrap());
    println!("events {} wall {:.3}s", out.events, out.wall_time_s);
}
