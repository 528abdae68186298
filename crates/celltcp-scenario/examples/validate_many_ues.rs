//! Validates an LTE scenario with many UEs (default 100,000 in 10 cells) and prints the time it
//! took: `cargo run --release -p celltcp-scenario --example validate_many_ues -- 100000`, under
//! `/usr/bin/time -v` for the peak memory.

fn main() {
    let n: usize = std::env::args().nth(1).map_or(100_000, |a| a.parse().expect("a UE count"));
    let cells = 10;
    let mut text = String::from("duration = \"10s\"\n[lte]\nbandwidth = \"20MHz\"\n");
    for c in 0..cells {
        text += &format!("[[lte.enb]]\nname = \"enb{c}\"\nposition = [{}.0, 0.0]\n", c * 1000);
    }
    for c in 0..cells {
        text += &format!(
            "[[lte.ue]]\nname = \"ue{c}-\"\ncount = {}\nenb = \"enb{c}\"\nplacement = {{ type = \"disc\", radius = \"400m\" }}\n",
            n / cells
        );
    }
    text += "[[link]]\nbetween = [\"server\", \"pgw\"]\nrate = \"10Gbps\"\ndelay = \"10ms\"\n";
    text += "[[flow]]\nname = \"dl\"\napp = \"bulk\"\nfrom = \"server\"\nto = \"ue*\"\ncc = \"cubic\"\n";
    let t0 = std::time::Instant::now();
    match celltcp_scenario::validate(&text, &[], None) {
        Ok(_) => println!("validated {n} UEs in {:.2} s", t0.elapsed().as_secs_f64()),
        Err(e) => {
            println!("refused after {:.2} s: {e}", t0.elapsed().as_secs_f64());
            std::process::exit(1);
        }
    }
}
