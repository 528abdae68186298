//! `cargo run --example emu -- SCENARIO.toml OUT_DIR`: an emulation run without Python (the
//! summary's `emu` section is printed as JSON).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: emu SCENARIO.toml OUT_DIR");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[1]);
        std::process::exit(2)
    });
    let opts = celltcp_emu::EmuOptions { out_dir: args[2].clone().into(), ..Default::default() };
    match celltcp_emu::emulate(&text, &opts) {
        Ok(out) => println!("{}", serde_json::to_string_pretty(&out.summary["emu"]).unwrap()),
        Err(e) => {
            eprintln!("emu: error: {e}");
            std::process::exit(2);
        }
    }
}
