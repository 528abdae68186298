//! Byte conservation under random loss, duplication and reordering (both directions), and
//! sequence-number wrap-around (RFC 9293 §3.4). The wire harness also asserts, after every
//! segment, that B never holds more bytes than have arrived contiguously or than A wrote.

mod common;

use celltcp_engine::{SimDuration, SimRng};
use celltcp_tcp::cc::CcKind;
use celltcp_tcp::{BufSize, TcpConfig};
use common::*;
use rand::{Rng, SeedableRng};

/// One random scenario; returns (retransmitted segments, timeouts, fast recoveries) of A.
fn run_seed(seed: u64, cc: CcKind) -> (u64, u64, u64) {
    let mut rng = SimRng::seed_from_u64(seed);
    let loss = rng.gen_range(0.0..0.10);
    let dup = rng.gen_range(0.0..0.03);
    let reorder = rng.gen_range(0.0..0.10);
    let cfg = TcpConfig {
        sack: rng.gen_bool(0.7),
        timestamps: rng.gen_bool(0.7),
        window_scaling: rng.gen_bool(0.8),
        delayed_ack: rng.gen_bool(0.8),
        mss: [536, 1000, 1448, 3000][rng.gen_range(0..4)],
        rcv_buf: if rng.gen_bool(0.5) {
            BufSize::Fixed(rng.gen_range(8_000..200_000))
        } else {
            BufSize::RCV_DEFAULT
        },
        pacing: rng.gen_bool(0.3),
        quickack_segments: if rng.gen_bool(0.3) { 16 } else { 0 },
        cc: cc.into(),
        ..Default::default()
    };
    let a_iss: u32 = rng.gen();
    let b_iss: u32 = rng.gen();
    let bytes = if rng.gen_bool(0.1) {
        rng.gen_range(0..3_000_000u64)
    } else {
        rng.gen_range(0..400_000u64)
    };
    let delay = SimDuration::from_micros(rng.gen_range(1_000..60_000));
    let mut w = Wire::new(cfg, cfg, a_iss, b_iss, delay);
    w.rate_bps = [0, 10_000_000, 50_000_000][rng.gen_range(0..3)];
    w.queue_pkts = rng.gen_range(10..200);
    w.rng = SimRng::seed_from_u64(seed ^ 0xabcdef);
    w.fate = random_fate(loss, dup, reorder, SimDuration::from_millis(8));
    w.to_write = bytes;
    w.run_until(at_ms(20_000_000), |w| w.both_closed());
    let ctx = format!("seed {seed} cc {cc} loss {loss:.3} cfg {cfg:?} bytes {bytes}");
    assert_eq!(w.written, bytes, "{ctx}");
    assert_eq!(w.read_by_b, bytes, "{ctx}");
    assert_eq!(w.b().stats().bytes_delivered, bytes, "{ctx}");
    assert!(
        w.both_closed(),
        "{ctx}: A {:?} B {:?}",
        w.a.state(),
        w.b().state()
    );
    assert!(!w.a.was_reset() && !w.b().was_reset(), "{ctx}");
    assert!(w.b().peer_closed() && w.a.peer_closed(), "{ctx}");
    let s = w.a.stats();
    (s.retransmitted_segments, s.timeouts, s.fast_recoveries)
}

fn sum(a: (u64, u64, u64), b: (u64, u64, u64)) -> (u64, u64, u64) {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2)
}

#[test]
fn byte_conservation_random_loss_reorder_duplicates_newreno() {
    let mut t = (0, 0, 0);
    for seed in 0..300 {
        t = sum(t, run_seed(seed, CcKind::NewReno));
    }
    // the scenarios did exercise recovery and timeouts
    assert!(t.0 > 1_000 && t.1 > 50 && t.2 > 100, "{t:?}");
}

#[test]
fn byte_conservation_all_controllers() {
    for (i, cc) in CcKind::ALL.into_iter().enumerate() {
        let mut t = (0, 0, 0);
        for seed in 0..60 {
            t = sum(t, run_seed(1_000 + 100 * i as u64 + seed, cc));
        }
        assert!(t.0 > 100 && t.2 > 10, "{cc}: {t:?}");
    }
}

#[test]
fn sequence_wraparound_near_2_pow_32() {
    // RFC 9293 §3.4: both ISNs just below 2^32 so every stream wraps during the transfer.
    for (sack, drops) in [
        (true, &[3u64, 50, 51, 400][..]),
        (false, &[3u64, 50, 400][..]),
    ] {
        let cfg = TcpConfig {
            sack,
            ..Default::default()
        };
        let mut w = Wire::new(cfg, cfg, u32::MAX - 20_000, u32::MAX - 3, ms(10));
        w.rate_bps = 20_000_000;
        w.queue_pkts = 100;
        let set: Vec<u64> = drops.to_vec();
        w.fate = Box::new(move |s, _| {
            if s.data_idx.is_some_and(|i| set.contains(&i)) {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        w.to_write = 2_000_000;
        w.run_until(at_ms(60_000), |w| w.both_closed());
        assert_eq!(w.read_by_b, 2_000_000);
        assert!(w.both_closed());
        assert_eq!(w.a.stats().timeouts, 0, "sack={sack}");
        assert!(w.a.stats().retransmitted_segments >= drops.len() as u64);
        // the sender's sequence numbers did wrap
        assert!(w
            .log
            .iter()
            .any(|s| s.from == Side::A && s.seg.seq < 1_000_000));
    }
}

#[test]
fn same_seed_gives_identical_segment_trace() {
    // STYLE B5 / determinism: the same seed twice gives a bit-identical trace.
    let trace = |seed: u64| {
        let cfg = TcpConfig::default();
        let mut w = Wire::new(cfg, cfg, 5, 6, ms(15));
        w.rate_bps = 10_000_000;
        w.queue_pkts = 30;
        w.rng = SimRng::seed_from_u64(seed);
        w.fate = random_fate(0.03, 0.01, 0.05, ms(5));
        w.to_write = 1_000_000;
        w.run_until(at_ms(600_000), |w| w.both_closed());
        assert_eq!(w.read_by_b, 1_000_000);
        w.log
            .iter()
            .map(|s| (s.time, s.from, s.seg, s.fate))
            .collect::<Vec<_>>()
    };
    let a = trace(42);
    assert_eq!(a, trace(42));
    assert_ne!(a, trace(43));
}

#[test]
fn mss_1000_and_3000_segment_sizes() {
    // TcpConfig::mss is the payload per segment, whatever the path MTU (IP fragments it).
    for mss in [1000u32, 3000] {
        let cfg = TcpConfig {
            mss,
            ..Default::default()
        };
        let mut w = Wire::new(cfg, cfg, 5, 6, ms(10));
        w.to_write = 100 * mss as u64 + 7;
        w.run_until(at_ms(60_000), |w| w.both_closed());
        assert_eq!(w.read_by_b, 100 * mss as u64 + 7);
        let sizes: Vec<u32> = w.a_data().iter().map(|d| d.2).collect();
        assert_eq!(sizes.iter().filter(|&&s| s == mss).count(), 100);
        assert!(sizes.iter().all(|&s| s == mss || s == 7));
        assert_eq!(w.log[0].seg.options.mss, Some(mss as u16 + 12));
    }
}

#[test]
fn byte_conservation_bidirectional() {
    // Data both ways at once: piggybacked ACKs, SACK and window updates on data segments.
    for seed in 0..60u64 {
        let mut rng = SimRng::seed_from_u64(seed + 7_000);
        let loss = rng.gen_range(0.0..0.08);
        let cfg = TcpConfig {
            sack: rng.gen_bool(0.7),
            timestamps: rng.gen_bool(0.7),
            rcv_buf: if rng.gen_bool(0.5) {
                BufSize::Fixed(rng.gen_range(20_000..200_000))
            } else {
                BufSize::RCV_DEFAULT
            },
            ..Default::default()
        };
        let mut w = Wire::new(
            cfg,
            cfg,
            rng.gen(),
            rng.gen(),
            SimDuration::from_micros(rng.gen_range(1_000..40_000)),
        );
        w.rate_bps = 20_000_000;
        w.queue_pkts = 50;
        w.rng = SimRng::seed_from_u64(seed);
        w.fate = random_fate(loss, 0.01, 0.05, SimDuration::from_millis(5));
        let (ab, ba) = (rng.gen_range(0..500_000u64), rng.gen_range(0..500_000u64));
        w.to_write = ab;
        w.b_to_write = ba;
        w.run_until(at_ms(20_000_000), |w| w.both_closed());
        let ctx = format!("seed {seed} loss {loss:.3} {cfg:?}");
        assert_eq!((w.read_by_b, w.read_by_a), (ab, ba), "{ctx}");
        assert_eq!(w.b_written, ba, "{ctx}");
        assert!(
            w.both_closed() && !w.a.was_reset() && !w.b().was_reset(),
            "{ctx}"
        );
    }
}
