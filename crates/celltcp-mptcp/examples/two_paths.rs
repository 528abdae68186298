//! An MPTCP bulk transfer over two disjoint paths (an "LTE-like" 10 Mbit/s, 30 ms path and a
//! "Wi-Fi-like" 20 Mbit/s, 10 ms path), printing per-subflow and total goodput.
//!
//! ```text
//! cargo run --release -p celltcp-mptcp --example two_paths [olia|lia|balia|uncoupled] [minrtt|roundrobin|redundant]
//! ```
//!
//! It uses the small two-path network of the crate's tests (`tests/common/mod.rs`): rate links
//! with drop-tail queues from `celltcp-net`, driven by the engine's event queue.

#[path = "../tests/common/mod.rs"]
mod common;

use celltcp_mptcp::MptcpConfig;
use common::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let cc = args.next().unwrap_or_else(|| "olia".into());
    let sched = args.next().unwrap_or_else(|| "minrtt".into());
    let cfg = MptcpConfig {
        cc: cc.parse().unwrap_or_else(|e| panic!("{e}")),
        scheduler: sched.parse().unwrap_or_else(|e| panic!("{e}")),
        ..MptcpConfig::default()
    };
    let lte = PathCfg::new(10, 30, 50);
    let wifi = PathCfg::new(20, 10, 50);
    let secs = 20;
    let mut n = Net::new(&[lte, wifi], &[0, 1], cfg, 1);
    n.run_until(ms(secs * 1000), |_| false);
    let (per, total) = n.mptcp_bytes();
    let mbps = |b: u64| b as f64 * 8.0 / secs as f64 / 1e6;
    println!("mptcp cc={cc} scheduler={sched}, {secs} s");
    for (i, b) in per.iter().enumerate() {
        let (l, r) = n.a.subflow_addrs(i);
        let s = n.a.subflow_sample(i, n.now);
        println!(
            "subflow {i} {}:{} -> {}:{}  goodput {:6.2} Mbit/s  cwnd {:7} B  srtt {:6.1} ms",
            l.ip,
            l.port,
            r.ip,
            r.port,
            mbps(*b),
            s.cwnd_bytes,
            s.srtt.as_millis_f64()
        );
    }
    println!(
        "total goodput {:6.2} Mbit/s (paths: 10 + 20 Mbit/s)",
        mbps(total)
    );
}
