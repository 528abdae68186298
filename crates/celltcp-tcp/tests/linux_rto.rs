//! The issue-12 scenario: a 100 Mbit/s, 100 ms RTT path with 1e-4 random loss on the data
//! direction. Linux (RTO >= SRTT + tcp_rto_min, `tcp_rtt_estimator`/`tcp_set_rto`) repairs each
//! loss by fast retransmit and never times out there; an RTO while a fast retransmit is pending
//! would resend the whole window go-back-N.

mod common;

use celltcp_tcp::cc::cubic::{CubicConfig, HyStartMode};
use celltcp_tcp::cc::CcConfig;
use celltcp_tcp::{RtoEstimator, TcpConfig};
use common::*;

fn lossy_long_fat(cc: CcConfig, seed: u64, queue: usize, rto: RtoEstimator) -> Wire {
    let cfg = TcpConfig {
        cc,
        rto_estimator: rto,
        ..Default::default()
    };
    let mut w = Wire::new(cfg, cfg, 7, 9, ms(50));
    w.rate_bps = 100_000_000;
    w.queue_pkts = queue;
    w.to_write = 1 << 40;
    w.close_after_write = false;
    w.rng = <celltcp_engine::SimRng as rand::SeedableRng>::seed_from_u64(seed);
    // loss on A's data only (the papers drop data, not ACKs)
    let mut inner = random_fate(1e-4, 0.0, 0.0, ms(1));
    w.fate = Box::new(move |s, rng| {
        if s.from == Side::A && s.seg.payload_len > 0 {
            inner(s, rng)
        } else {
            Fate::Deliver
        }
    });
    w
}

#[test]
fn linux_rto_no_timeout_while_fast_retransmit_pending_on_lossy_long_fat_path() {
    // A 2000-packet buffer lets the queueing delay pass 200 ms: with HyStart++ the first slow
    // start overshoots and loses tens of packets at the buffer, and with RFC 6298's RTO
    // (SRTT + 4 RTTVAR, floored at 200 ms) the timer expires while their fast retransmits are
    // on their way and the window goes back N (measured: 421-955 retransmissions for 59-69
    // losses, one RTO per run). Linux's RTO >= SRTT + tcp_rto_min never fires here. With Linux's
    // HyStart slow start ends before the buffer overflows (3-6 losses, all random).
    let mut rfc_timeouts = 0;
    for (seed, hystart) in [1, 2, 5, 1, 2, 5].into_iter().zip(
        [HyStartMode::HyStartPlusPlus; 3]
            .into_iter()
            .chain([HyStartMode::Linux; 3]),
    ) {
        let cc = CcConfig::Cubic(CubicConfig::with_hystart(hystart));
        let mut w = lossy_long_fat(cc, seed, 2000, RtoEstimator::Linux);
        w.run_until(at_ms(20_000), |_| false);
        let s = *w.a.stats();
        let lost = w.log.iter().filter(|x| x.fate == Fate::Drop).count() as u64 + w.queue_drops;
        assert_eq!(s.timeouts, 0, "seed {seed}: an RTO fired: {s:?}");
        assert!(s.fast_recoveries > 0);
        // Each loss is repaired by fast retransmit (a lost retransmission needs a second copy).
        assert!(
            s.retransmitted_segments <= 2 * lost,
            "seed {seed}: {} retransmissions for {lost} losses",
            s.retransmitted_segments
        );
        eprintln!(
            "{hystart:?} seed {seed}: {} RTOs, {} retransmissions, {lost} losses",
            s.timeouts, s.retransmitted_segments
        );
        let mut w = lossy_long_fat(cc, seed, 2000, RtoEstimator::Rfc6298);
        w.run_until(at_ms(20_000), |_| false);
        rfc_timeouts += w.a.stats().timeouts;
    }
    // The path does provoke the RFC 6298 timer: the check above is not vacuous.
    assert!(rfc_timeouts >= 2, "RFC 6298 RTOs: {rfc_timeouts}");
}
