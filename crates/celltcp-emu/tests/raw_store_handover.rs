//! The store of real packets' bytes (`celltcp_net::raw::RawStore`) through LTE handovers: real
//! datagrams (what the emulator reads from a TUN device) downloaded by a UE that drives between
//! two cells, and some sent up, with every handover path the RAN has for data in flight: RLC
//! re-establishment at detach (its transmission, retransmission and reassembly buffers), HARQ
//! blocks in flight, X2-U forwarding (seamless, flushing seamless, lossless) and the source's
//! forwarding buffer, the target's RLC buffer overflowing with forwarded data, the PDCP discard
//! timer, a radio link failure out of coverage and the re-establishment after it (nothing
//! forwarded), a cell failure. Each packet either leaves at a real host or is dropped by the
//! model: once the UE is back in coverage and the queues have drained, nothing may be held.
//! Before the handover paths released their bytes, every packet they discarded stayed in the
//! store until the 256 MiB cap evicted it.
//!
//! No root needed: the simulation is driven as the emulator's loop drives it, without devices.

mod common;
use common::udp;
use celltcp_engine::{SimDuration, SimTime};
use celltcp_scenario::{load_config, Simulation};

/// Two cells 600 m apart; the UE drives between them at 300 km/h, four times across (A3
/// handovers; with a large hysteresis they come too late, after radio link failures) and back
/// to the first cell, where it stays. `extra` goes into `[lte.pdcp]`, `ho` into `[lte.handover]`.
fn scenario(rlc: &str, forwarding: &str, extra: &str, ho: &str) -> String {
    format!(
        r#"
duration = "60s"
seed = 5
[lte]
bandwidth = "5MHz"
shadowing = "0dB"
[lte.rlc]
mode = "{rlc}"
buffer = "96KB"
[lte.pdcp]
buffer = "256KB"
forwarding_buffer = "48KB"
{extra}
[lte.handover]
forwarding = "{forwarding}"
x2_delay = "6ms"
x2_rate = "20Mbps"
{ho}
[[lte.enb]]
name = "a"
position = [0.0, 0.0]
[[lte.enb]]
name = "b"
position = [600.0, 0.0]
[[lte.ue]]
name = "ue"
enb = "a"
mobility = {{ model = "waypoints", points = [
  {{ position = [50.0, 0.0], speed_kmh = 300.0 }},
  {{ position = [550.0, 0.0], speed_kmh = 300.0, pause_s = 2.0 }},
  {{ position = [50.0, 0.0], speed_kmh = 300.0, pause_s = 2.0 }},
  {{ position = [550.0, 0.0], speed_kmh = 300.0, pause_s = 2.0 }},
  {{ position = [50.0, 0.0] }},
] }}
[[link]]
between = ["server", "pgw"]
rate = "100Mbps"
delay = "10ms"
"#
    )
}

/// Runs one variant: 24 Mbit/s of 1400-byte datagrams down (more than the cell carries at its
/// edge: the buffers fill) and 1 Mbit/s up for 40 s, then 20 s to drain. Returns the bytes held
/// at the end, the packets missing their bytes when they left, the entries evicted, the
/// handovers, re-establishments and radio link failures.
fn run(rlc: &str, forwarding: &str, extra: &str, ho: &str) -> (usize, u64, u64, u64, u64, u64) {
    let text = scenario(rlc, forwarding, extra, ho);
    let (cfg, plan) = load_config(&text, &[], Some(7), None).unwrap();
    let mut sim = Simulation::new(&cfg, plan, None).unwrap();
    let (ue, server) = (sim.node("ue").unwrap(), sim.node("server").unwrap());
    sim.set_external(ue);
    sim.set_external(server);
    let (u, s) = (sim.node_addr(ue).octets(), sim.node_addr(server).octets());
    let gap = SimDuration::from_nanos(1400 * 8 * 1_000_000_000 / 24_000_000);
    let (mut lost, mut got) = (0u64, 0u64);
    let mut t = SimTime::ZERO;
    let mut i = 0u32;
    while t < SimTime::ZERO + SimDuration::from_secs(40) {
        i += 1;
        sim.step_until(t);
        sim.inject_raw(server, &udp(s, u, i as u16, 64, true, 1400), t).unwrap();
        if i.is_multiple_of(24) {
            sim.inject_raw(ue, &udp(u, s, i as u16, 64, true, 1400), t).unwrap();
        }
        lost += sim.drain_external(|_, _, _| got += 1);
        t += gap;
    }
    sim.step_until(t + SimDuration::from_secs(20));
    lost += sim.drain_external(|_, _, _| got += 1);
    let (held, peak, evicted) = sim.raw_store_stats();
    let summary = sim.summary();
    let lte = &summary["lte"];
    let kinds = |k: &str| lte["handovers"].as_array().unwrap().iter().filter(|e| e["kind"] == k).count() as u64;
    let (ho, re) = (kinds("handover"), kinds("reestablishment"));
    let rlf = lte["radio_link_failures"].as_array().map_or(0, |a| a.len() as u64);
    println!("{rlc} {forwarding} [{extra}]: {i} datagrams down, {} up, {got} delivered; {ho} handovers, {re} re-establishments, {rlf} RLF; store: {held} bytes held at the end, peak {peak}, {evicted} evicted, {lost} without bytes", i / 24);
    (held, lost, evicted, ho, re, rlf)
}

/// Handovers in time (A3 with a small hysteresis).
const TIMELY: &str = "hysteresis = \"1dB\"\ntime_to_trigger = \"40ms\"";
/// Handovers too late: the UE loses the source's signal first (radio link failure, T310) and
/// re-establishes in the other cell with nothing forwarded.
const LATE: &str = "hysteresis = \"15dB\"\ntime_to_trigger = \"1024ms\"";
/// Cell b fails at 35 s (the UE, served by it, re-establishes in a).
const CELL_FAILURE: &str = "hysteresis = \"1dB\"\ntime_to_trigger = \"40ms\"\n[[lte.handover.cell_failure]]\ncell = \"b\"\nat = \"35s\"";

fn check(rlc: &str, forwarding: &str, extra: &str, ho: &str) {
    let (held, lost, evicted, handovers, re, rlf) = run(rlc, forwarding, extra, ho);
    if ho == LATE {
        assert!(rlf >= 2 && re >= 2, "{rlc} {forwarding}: radio link failures ({rlf}) and re-establishments ({re})");
    } else {
        assert!(handovers >= 3, "{rlc} {forwarding}: several handovers ({handovers})");
    }
    assert_eq!((lost, evicted), (0, 0), "{rlc} {forwarding}: no packet's bytes were missing when it left");
    assert_eq!(held, 0, "{rlc} {forwarding}: every packet left or was dropped: nothing held");
}

#[test]
fn raw_store_empty_after_lte_handovers_rlc_am_lossless() {
    check("am", "lossless", "", TIMELY);
}

#[test]
fn raw_store_empty_after_lte_handovers_rlc_am_seamless_discard_timer() {
    check("am", "seamless", "discard_timer = \"300ms\"", TIMELY);
}

#[test]
fn raw_store_empty_after_lte_handovers_rlc_am_seamless_flush_cell_failure() {
    check("am", "seamless-flush", "", CELL_FAILURE);
}

#[test]
fn raw_store_empty_after_lte_handovers_rlc_um_seamless_discard_timer() {
    check("um", "seamless", "discard_timer = \"300ms\"", TIMELY);
}

#[test]
fn raw_store_empty_after_lte_handovers_rlc_um_seamless_flush() {
    check("um", "seamless-flush", "", TIMELY);
}

#[test]
fn raw_store_empty_after_lte_radio_link_failures_rlc_am() {
    check("am", "lossless", "", LATE);
}

#[test]
fn raw_store_empty_after_lte_radio_link_failures_rlc_um() {
    check("um", "seamless", "", LATE);
}
