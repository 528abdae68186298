//! Speed of the BSS model: 14 saturated stations and a saturated AP on 802.11ac, VHT MCS 7,
//! 20 MHz, A-MPDU with block ACK, 1500-byte packets, 10 simulated seconds; prints simulated
//! seconds per wall-clock second.
//!
//! `cargo run --release -p celltcp-wifi --example wifi_speed [stations] [seconds]`

use std::time::Instant;

use celltcp_engine::SimTime;
use celltcp_wifi::{Bss, BssConfig, Channel, Node, RateKind, Standard, WifiOutput};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(14);
    let secs: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let mut cfg = BssConfig::new(Standard::Ac);
    cfg.rate = RateKind::Constant(7);
    cfg.channel = Channel::FixedSnr(35.0);
    let mut bss: Bss<u64> = Bss::new(cfg, &vec![10.0; n], 1, "speed");
    let mut flows: Vec<(Node, Node)> = (0..n as u16).map(|i| (Node::Sta(i), Node::Ap)).collect();
    flows.extend((0..n as u16).map(|i| (Node::Ap, Node::Sta(i))));
    let end = SimTime::from_secs(secs);
    let mut out = Vec::new();
    let (mut delivered, mut bytes, mut events, mut id) = (0u64, 0u64, 0u64, 0u64);
    let wall = Instant::now();
    let mut now = SimTime::ZERO;
    while now < end {
        for &(a, b) in &flows {
            while bss.queue_len(a, b) < 100 {
                let _ = bss.enqueue(now, a, b, id, 1500);
                id += 1;
            }
        }
        now = bss.next_deadline().unwrap();
        bss.on_timer(now, &mut out);
        events += 1;
        for o in out.drain(..) {
            if let WifiOutput::Delivered { .. } = o {
                delivered += 1;
                bytes += 1500;
            }
        }
    }
    let w = wall.elapsed().as_secs_f64();
    let s = bss.bss_stats();
    println!(
        "{n} stations + AP saturated, 802.11ac VHT MCS 7 20 MHz A-MPDU: {secs} s simulated in {w:.3} s wall = {:.0} simulated s per wall s",
        secs as f64 / w
    );
    println!(
        "  {events} events, {} TXOPs, {} collisions, {delivered} packets delivered, goodput {:.2} Mbit/s, channel busy {:.1} %",
        s.txops,
        s.collisions,
        bytes as f64 * 8.0 / secs as f64 / 1e6,
        100.0 * s.busy_fraction(end - SimTime::ZERO)
    );
    let agg: f64 = (0..n as u16).map(|i| bss.sta_stats(i).up.mean_ampdu_mpdus()).sum::<f64>() / n as f64;
    println!("  mean A-MPDU (uplink) {agg:.1} MPDUs");
}
