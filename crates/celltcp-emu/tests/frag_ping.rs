//! A kernel's fragmented ping to a simulated host (`ping -s 3000` from a namespace over a
//! 1500-byte MTU): the three fragments, out of order and one of them twice, are reassembled by
//! the simulated host (RFC 791 §3.2), which answers with a 3028-byte echo reply (RFC 792) cut
//! into fragments for the link's MTU; the real host gets fragments whose offsets, MF flags and
//! checksums put the reply together again (checked here by hand, as the kernel's `ip_defrag`
//! would). A missing fragment gives no reply, and its companions' bytes are freed at
//! `ipfrag_time` (30 s).
//!
//! No root needed: the simulation is driven as the emulator's loop drives it, without devices.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_scenario::{load_config, Simulation};

const SCENARIO: &str = r#"
duration = "60s"
[[link]]
between = ["pinger", "router"]
rate = "100Mbps"
delay = "5ms"
[[link]]
between = ["router", "host"]
rate = "100Mbps"
delay = "5ms"
"#;

fn csum(b: &[u8]) -> u16 {
    // RFC 1071, written out
    let mut s: u32 = b.chunks(2).map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0))).sum();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Linux's ping -s 3000 echo request (3028 bytes, no DF as `-M want` leaves a datagram too big
/// for the route) cut by hand into 1500 + 1500 + 68-byte fragments (RFC 791 §3.2).
fn ping_fragments(src: [u8; 4], dst: [u8; 4], ident: u16, seq: u16) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut icmp = vec![8, 0, 0, 0, 0x0b, 0xad, (seq >> 8) as u8, seq as u8];
    icmp.extend((0..3000).map(|i| (i % 256) as u8));
    let c = csum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    let mut frags = Vec::new();
    for (off, len) in [(0usize, 1480usize), (1480, 1480), (2960, 48)] {
        let more = off + len < icmp.len();
        let total = (20 + len) as u16;
        let fo = (off / 8) as u16 | if more { 0x2000 } else { 0 };
        let mut f = vec![0x45, 0, (total >> 8) as u8, total as u8, (ident >> 8) as u8, ident as u8, (fo >> 8) as u8, fo as u8, 64, 1, 0, 0];
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        let c = csum(&f);
        f[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&icmp[off..off + len]);
        frags.push(f);
    }
    (icmp, frags)
}

/// Puts fragments together as a receiving kernel does, checking each one's header: valid
/// checksum, offsets in 8-byte units, MF on all but the last; returns the ICMP message.
fn reassemble(mut frags: Vec<Vec<u8>>) -> Vec<u8> {
    frags.sort_by_key(|f| u16::from_be_bytes([f[6], f[7]]) & 0x1fff);
    let mut out = Vec::new();
    for (i, f) in frags.iter().enumerate() {
        assert_eq!(csum(&f[..20]), 0, "fragment {i}: header checksum verifies");
        assert!(f.len() <= 1500, "fits the MTU");
        let fo = u16::from_be_bytes([f[6], f[7]]);
        assert_eq!(usize::from(fo & 0x1fff) * 8, out.len(), "fragment {i} continues the last");
        assert_eq!(fo & 0x2000 != 0, i + 1 < frags.len(), "MF on all but the last");
        assert_eq!(usize::from(u16::from_be_bytes([f[2], f[3]])), f.len());
        out.extend_from_slice(&f[20..]);
    }
    out
}

#[test]
fn fragmented_ping_to_a_simulated_host_answered_in_fragments() {
    let (cfg, plan) = load_config(SCENARIO, &[], Some(1), None).unwrap();
    let mut sim = Simulation::new(&cfg, plan, None).unwrap();
    let (pinger, host) = (sim.node("pinger").unwrap(), sim.node("host").unwrap());
    sim.set_external(pinger);
    let (p, h) = (sim.node_addr(pinger).octets(), sim.node_addr(host).octets());
    let mut t = SimTime::from_millis(1);
    for seq in 1..=3u16 {
        let (icmp, f) = ping_fragments(p, h, 0x4000 + seq, seq);
        // out of order, the middle one twice (before the last: a repeat after completion would
        // start a new datagram, held until ipfrag_time as in Linux)
        for i in [2, 1, 1, 0] {
            sim.inject_raw(pinger, &f[i], t).unwrap();
            t += SimDuration::from_micros(10);
        }
        sim.step_until(t + SimDuration::from_millis(100));
        let mut got = Vec::new();
        assert_eq!(sim.drain_external(|_, n, b| got.push((n, b.to_vec()))), 0);
        assert!(got.iter().all(|g| g.0 == pinger));
        let got: Vec<Vec<u8>> = got.into_iter().map(|g| g.1).collect();
        assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), vec![1500, 1500, 68], "seq {seq}: the reply in three fragments");
        assert!(got.iter().all(|f| f[12..16] == h && f[16..20] == p && f[9] == 1), "from the host to the pinger");
        let ident = &got[0][4..6];
        assert!(got.iter().all(|f| &f[4..6] == ident), "one identification");
        let reply = reassemble(got);
        assert_eq!(reply.len(), 3008);
        assert_eq!((reply[0], reply[1]), (0, 0), "echo reply");
        assert_eq!(csum(&reply), 0, "ICMP checksum over the whole reply verifies");
        assert_eq!(reply[4..], icmp[4..], "identifier, sequence number and 3000 bytes of data echoed");
        t += SimDuration::from_millis(200);
    }
    assert_eq!(sim.raw_store_stats().0, 0, "nothing held after the replies left");
    // a fragment missing: no reply; the two others are held until ipfrag_time, then freed
    let (_, f) = ping_fragments(p, h, 0x5000, 4);
    sim.inject_raw(pinger, &f[0], t).unwrap();
    sim.inject_raw(pinger, &f[2], t).unwrap();
    sim.step_until(t + SimDuration::from_secs(29));
    assert_eq!(sim.drain_external(|_, _, _| panic!("no reply to an incomplete datagram")), 0);
    assert_eq!(sim.raw_store_stats().0, 1500 + 48, "held for reassembly: the first fragment whole, the last's payload");
    sim.step_until(t + SimDuration::from_millis(30_011));
    assert_eq!(sim.raw_store_stats().0, 0, "freed 30 s after the first fragment reached the host");
}
