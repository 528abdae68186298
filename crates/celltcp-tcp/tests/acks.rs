//! Receiver ACK behaviour over the test wire: delayed ACKs (RFC 5681 §4.2, RFC 1122
//! §4.2.3.2), immediate ACKs with SACK blocks for out-of-order data (RFC 5681 §4.2, RFC 2018 §4).

mod common;

use celltcp_tcp::seq;
use celltcp_tcp::TcpConfig;
use common::*;

#[test]
fn delayed_ack_one_ack_per_two_full_segments() {
    // RFC 5681 §4.2: "an ACK SHOULD be generated for at least every second full-sized segment".
    // A fixed 128 KiB receive buffer, so that tcp_grow_window's ramp ends (below).
    let cfg = TcpConfig {
        quickack_segments: 16,
        rcv_buf: celltcp_tcp::BufSize::Fixed(131_072),
        ..TcpConfig::default()
    };
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(10));
    w.rate_bps = 10_000_000; // segments arrive spaced by their transmission time
    w.to_write = 1_448 * 200;
    w.close_after_write = false;
    w.run_until(at_ms(5_000), |_| false);
    assert_eq!(w.read_by_b, 1_448 * 200);
    let acks = w.b_acks().len() as u64;
    // Linux: tcp_grow_window raises rcv_ssthresh from the SYN's 65,535 by 2 advmss = 2896 per
    // segment up to the free space with the segment queued, 131,072 - 1448 = 129,624: 23
    // segments, each ACKed at once (icsk_ack.quick |= 1; 16 | 1 = 17 keeps the quick-ACK start
    // at 16); then the 16 of the quick-ACK start (tcp_incr_quickack); then one ACK per two:
    // 23 + 16 + 161 / 2 = 120 (plus at most a few for the handshake / an odd segment)
    assert!((120..=122).contains(&acks), "{acks} ACKs for 200 segments");
    // without the quick ACKs (quickack = 0 also turns the ramp off): 200 segments -> 100 ACKs
    let cfg = TcpConfig { quickack_segments: 0, ..cfg };
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(10));
    w.rate_bps = 10_000_000;
    w.to_write = 1_448 * 200;
    w.close_after_write = false;
    w.run_until(at_ms(5_000), |_| false);
    let acks = w.b_acks().len() as u64;
    assert!((100..=102).contains(&acks), "{acks} ACKs for 200 segments");
}

#[test]
fn delayed_ack_lone_segment_acked_after_40ms() {
    // RFC 1122 §4.2.3.2 / Linux TCP_DELACK_MIN: a lone segment waits for the 40 ms timer
    // (once the quick-ACK start is over: here none).
    let cfg = TcpConfig { quickack_segments: 0, ..TcpConfig::default() };
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(10));
    w.close_after_write = false;
    // warm up: some data, so that B has advertised its full (post-SYN) window
    w.to_write = 10 * 1_448;
    w.run_until(at_ms(500), |_| false);
    w.to_write = 500;
    w.run_until(at_ms(1_000), |_| false);
    let (arrive, _) = *w
        .b_arrivals
        .iter()
        .find(|(_, s)| s.payload_len == 500)
        .unwrap();
    let (acked, ack) = *w.b_acks().last().unwrap();
    assert_eq!(acked - arrive, ms(40));
    assert_eq!(ack.ack, seq::wrap(1, 1 + 10 * 1_448 + 500));
}

#[test]
fn delayed_ack_off_acks_every_segment() {
    let cfg = TcpConfig {
        delayed_ack: false,
        ..Default::default()
    };
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(10));
    w.rate_bps = 10_000_000;
    w.to_write = 1_448 * 50;
    w.close_after_write = false;
    w.run_until(at_ms(5_000), |_| false);
    assert_eq!(w.b_acks().len(), 50);
}

#[test]
fn out_of_order_acked_at_once_with_sack_blocks_in_rfc2018_order() {
    // RFC 5681 §4.2: out-of-order data is ACKed immediately; RFC 2018 §4: the first SACK block
    // holds the most recently received segment, then the most recently reported others.
    let cfg = TcpConfig::default();
    let mut w = Wire::new(cfg, cfg, 100, 200, ms(10));
    w.rate_bps = 10_000_000;
    w.fate = drop_data(&[3, 6]);
    w.to_write = 1_448 * 10;
    w.close_after_write = false;
    w.run_until(at_ms(2_000), |_| false);
    assert_eq!(w.read_by_b, 1_448 * 10);
    let mss = 1_448u32;
    let off = |k: u32| seq::wrap(100, 1 + (k * mss) as u64);
    // segment 4 arrives out of order: an ACK at the same instant with one block [4, 5)
    let (t4, _) = *w
        .b_arrivals
        .iter()
        .find(|(_, s)| s.payload_len > 0 && s.seq == off(4))
        .unwrap();
    let acks = w.b_acks();
    let (ta, a) = *acks.iter().find(|(t, _)| *t >= t4).unwrap();
    assert_eq!(ta, t4, "immediate ACK");
    assert_eq!(a.ack, off(3));
    assert_eq!(a.options.sack_blocks().len(), 1);
    assert_eq!(
        (a.options.sack[0].left, a.options.sack[0].right),
        (off(4), off(5))
    );
    // segment 7 arrives: blocks [7, 8) first, then [4, 6)
    let (t7, _) = *w
        .b_arrivals
        .iter()
        .find(|(_, s)| s.payload_len > 0 && s.seq == off(7))
        .unwrap();
    let (tb, b) = *acks.iter().find(|(t, _)| *t >= t7).unwrap();
    assert_eq!(tb, t7);
    let blocks: Vec<(u32, u32)> = b
        .options
        .sack_blocks()
        .iter()
        .map(|s| (s.left, s.right))
        .collect();
    assert_eq!(blocks, vec![(off(7), off(8)), (off(4), off(6))]);
    // the retransmission of 3 fills the first hole: immediate ACK up to 6, SACK [7, ...)
    let (t3, _) = *w
        .b_arrivals
        .iter()
        .rfind(|(_, s)| s.payload_len > 0 && s.seq == off(3))
        .unwrap();
    let (tc, c) = *acks.iter().find(|(t, _)| *t >= t3).unwrap();
    assert_eq!(tc, t3);
    assert_eq!(c.ack, off(6));
    assert_eq!(c.options.sack[0].left, off(7));
}

#[test]
fn quickack_acks_first_segments_immediately() {
    // Linux quickack mode (TCP_MAX_QUICKACKS = 16) when configured.
    // With the default autotuned buffer the window clamp grows every receiver RTT, so
    // tcp_grow_window keeps finding room and ACKs most segments at once (as the kernel's ACK
    // trains at one segment's spacing show, docs/validation.md); with a fixed buffer the ramp
    // ends (delayed_ack_one_ack_per_two_full_segments).
    let cfg = TcpConfig {
        quickack_segments: 16,
        ..Default::default()
    };
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(10));
    w.rate_bps = 10_000_000;
    w.to_write = 1_448 * 200;
    w.close_after_write = false;
    w.run_until(at_ms(5_000), |_| false);
    let acks = w.b_acks().len() as u64;
    // More than the quick-ACK start alone (16 singly, the other 184 in pairs: 108 to 110).
    assert!(acks > 16 + 94, "{acks}");
    assert!(acks <= 202, "{acks}");
}
