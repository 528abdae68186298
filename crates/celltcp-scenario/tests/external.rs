//! External nodes and real packets (the simulation side of `celltcp emu`): a real IPv4 packet
//! injected at one host crosses the modelled link and is handed out at an external host with the
//! arrival time the link's rate and delay give (closed form) and its bytes intact but for the
//! TTL the forwarding hop decrements (RFC 791 §3.2) and the header checksum.

use celltcp_engine::SimTime;
use celltcp_scenario::{RunOptions, Simulation};

const SCENARIO: &str = r#"
duration = "1s"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "20ms"
"#;

fn echo_request(src: [u8; 4], dst: [u8; 4], len: usize) -> Vec<u8> {
    let mut b = vec![0x45, 0, (len >> 8) as u8, len as u8, 0x12, 0x34, 0x40, 0, 64, 1, 0, 0];
    b.extend_from_slice(&src);
    b.extend_from_slice(&dst);
    b.extend_from_slice(&[8, 0, 0, 0, 0, 1, 0, 1]);
    b.resize(len, 0x5a);
    let mut s: u32 = b[..20].chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    b[10..12].copy_from_slice(&(!(s as u16)).to_be_bytes());
    b
}

#[test]
fn external_node_gets_injected_bytes_after_serialisation_and_delay() {
    let mut sim = Simulation::from_text(SCENARIO, &[], &RunOptions::default()).unwrap();
    let (a, b) = (sim.node("a").unwrap(), sim.node("b").unwrap());
    sim.set_external(b);
    let pkt = echo_request(sim.node_addr(a).octets(), sim.node_addr(b).octets(), 1000);
    let t0 = SimTime::from_millis(5);
    sim.inject_raw(a, &pkt, t0).unwrap();
    sim.step_until(SimTime::from_millis(100));
    let mut got = Vec::new();
    let lost = sim.drain_external(|t, n, bytes| got.push((t, n, bytes.to_vec())));
    assert_eq!(lost, 0);
    assert_eq!(got.len(), 1);
    let (t, n, bytes) = &got[0];
    assert_eq!(*n, b);
    // 1000 bytes at 10 Mbit/s = 800 us, then 20 ms of propagation
    assert_eq!(t.as_nanos() - t0.as_nanos(), 800_000 + 20_000_000);
    assert_eq!(bytes.len(), 1000);
    assert_eq!(bytes[8], 63, "one forwarding hop");
    assert_eq!(bytes[20..], pkt[20..]);
    // the checksum is valid (RFC 1071)
    let mut s: u32 = bytes[..20].chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    assert_eq!(s, 0xffff);
    // nothing more, and the simulated stack never saw it (no echo reply came back to `a`)
    assert_eq!(sim.drain_external(|_, _, _| panic!("drained twice")), 0);
}

#[test]
fn raw_echo_request_to_a_simulated_host_is_answered_and_bad_bytes_refused() {
    let mut sim = Simulation::from_text(SCENARIO, &[], &RunOptions::default()).unwrap();
    let (a, b) = (sim.node("a").unwrap(), sim.node("b").unwrap());
    sim.set_external(a);
    let pkt = echo_request(sim.node_addr(a).octets(), sim.node_addr(b).octets(), 84);
    sim.inject_raw(a, &pkt, SimTime::ZERO).unwrap();
    sim.step_until(SimTime::from_millis(200));
    // the simulated host's IP layer answers (RFC 792): one echo reply back at `a`, after the
    // request's and the reply's 84 bytes at 10 Mbit/s (67.2 us each) and 20 ms each way
    let mut got = Vec::new();
    assert_eq!(sim.drain_external(|t, n, bytes| got.push((t, n, bytes.to_vec()))), 0);
    assert_eq!(got.len(), 1, "one echo reply");
    let (t, n, r) = &got[0];
    assert_eq!(*n, a);
    assert_eq!(t.as_nanos(), 2 * (67_200 + 20_000_000));
    assert_eq!(r.len(), 84);
    assert_eq!(r[20], 0, "ICMP type 0, echo reply");
    assert_eq!(r[12..16], pkt[16..20], "from the address the request was sent to");
    assert_eq!(r[16..20], pkt[12..16]);
    assert_eq!(r[24..], pkt[24..], "identifier, sequence number and data echoed");
    let err = sim.inject_raw(a, &pkt[..10], SimTime::from_millis(300)).unwrap_err();
    assert!(err.contains("20-byte IPv4 header"), "{err}");
    let err = sim.inject_raw(a, &pkt, SimTime::from_millis(1)).unwrap_err();
    assert!(err.contains("before now"), "{err}");
}
