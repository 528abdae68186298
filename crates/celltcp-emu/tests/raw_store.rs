//! The store of real packets' bytes (`celltcp_net::raw::RawStore`) follows the packets in
//! flight, not the run's length: real packets (what the emulator reads from a TUN device) sent
//! through a lossy link with a small queue, some fragmented on a smaller MTU, some with TTL 1,
//! some to an address no route covers. Every packet either leaves at the real host or is dropped
//! by the model; after the last one nothing may be held, and the peak is bounded by what fits in
//! flight. Before drops released their bytes, every dropped packet stayed in the store (the
//! 256 MiB cap was the only bound): the end held every dropped packet's bytes.
//!
//! No root needed: the simulation is driven as the emulator's loop drives it, without devices.

mod common;
use celltcp_engine::{SimDuration, SimTime};
use common::udp;
use celltcp_scenario::{load_config, Simulation};

const SCENARIO: &str = r#"
duration = "30s"
[[link]]
between = ["client", "router"]
rate = "10Mbps"
delay = "5ms"
loss = 0.05
queue = { type = "droptail", limit = "8p" }
[[link]]
between = ["router", "server"]
rate = "20Mbps"
delay = "5ms"
mtu = 1400
"#;

#[test]
fn raw_store_holds_only_the_packets_in_flight_through_loss_overflow_fragments_ttl_and_no_route() {
    let (cfg, plan) = load_config(SCENARIO, &[], Some(7), None).unwrap();
    let mut sim = Simulation::new(&cfg, plan, None).unwrap();
    let (client, server) = (sim.node("client").unwrap(), sim.node("server").unwrap());
    sim.set_external(client);
    sim.set_external(server);
    let (c, s) = (sim.node_addr(client).octets(), sim.node_addr(server).octets());
    // 15 Mbit/s of 1400-byte datagrams into a 10 Mbit/s link for 10 s: the queue overflows;
    // every 7th is 2,800 bytes without DF (cut into three on the 1400-byte MTU), every 11th
    // has TTL 1 (expires at the router), every 13th goes to an address no route covers, every
    // 17th is 1,460 bytes with DF (too big for the second link: dropped at the router)
    let gap = SimDuration::from_nanos(1400 * 8 * 1_000_000_000 / 15_000_000);
    let (mut sent, mut got_bytes, mut lost) = (0u64, 0u64, 0u64);
    let mut t = SimTime::ZERO;
    let mut i = 0u16;
    while t < SimTime::ZERO + SimDuration::from_secs(10) {
        i = i.wrapping_add(1);
        let b = match i {
            _ if i.is_multiple_of(17) => udp(c, s, i, 64, true, 1460),
            _ if i.is_multiple_of(13) => udp(c, [192, 0, 2, 1], i, 64, true, 1400),
            _ if i.is_multiple_of(11) => udp(c, s, i, 1, true, 1400),
            _ if i.is_multiple_of(7) => udp(c, s, i, 64, false, 2800),
            _ => udp(c, s, i, 64, true, 1400),
        };
        sim.step_until(t);
        sim.inject_raw(client, &b, t).unwrap();
        sent += 1;
        lost += sim.drain_external(|_, node, bytes| {
            assert_eq!(node, server);
            got_bytes += bytes.len() as u64;
        });
        t += gap;
    }
    sim.step_until(t + SimDuration::from_secs(2));
    lost += sim.drain_external(|_, _, bytes| got_bytes += bytes.len() as u64);
    let (held, peak, evicted) = sim.raw_store_stats();
    let summary = sim.summary();
    let drops: u64 = summary["links"].as_array().unwrap().iter().map(|l| l["drops"].as_u64().unwrap() + l["lost_packets"].as_u64().unwrap_or(0)).sum();
    println!("{sent} datagrams sent, {got_bytes} bytes delivered, {drops} dropped or lost on links; store: {held} bytes held at the end, peak {peak}, {evicted} evicted");
    assert!(drops > 500, "the model dropped packets: {drops}");
    assert_eq!((lost, evicted), (0, 0), "no packet's bytes were missing when it left");
    assert_eq!(held, 0, "every packet left or was dropped: nothing held");
    // in flight at most: 8 queued + 1 on the wire + 5 ms of propagation at 10 Mbit/s (about
    // five packets) on the first link, the second link never queues (20 Mbit/s: under 10
    // packets in its pipe), each entry at most 2,800 bytes
    let bound = (8 + 1 + 5 + 10 + 2) * 2800;
    assert!(peak <= bound, "peak {peak} bytes > {bound}");
}
