//! Linux's loss recovery (`recovery = "linux"`, the default): RACK-TLP (RFC 8985), PRR
//! (RFC 6937) and DSACK (RFC 2883 / RFC 3708), each against the kernel's rule
//! (net/ipv4/tcp_recovery.c `tcp_rack_detect_loss`, `tcp_rack_reo_timeout`; tcp_output.c
//! `tcp_schedule_loss_probe`, `tcp_send_loss_probe`; tcp_input.c `tcp_cwnd_reduction`,
//! `tcp_try_undo_dsack`), with `recovery = "rfc6675"` as the contrast.

mod common;

use celltcp_engine::SimTime;
use celltcp_tcp::{Recovery, TcpConfig};
use common::*;

const MSS: u64 = 1448;

fn cfg(recovery: Recovery) -> TcpConfig {
    TcpConfig {
        recovery,
        ..Default::default()
    }
}

/// `segs` full segments over a 40 ms RTT path without a bottleneck.
fn tail(recovery: Recovery, segs: u64, drops: &'static [u64]) -> Wire {
    let mut w = Wire::new(cfg(recovery), cfg(recovery), 7, 9, ms(20));
    w.to_write = segs * MSS;
    w.fate = drop_data(drops);
    w.run_until(at_ms(20_000), |w| w.both_closed());
    assert_eq!(w.read_by_b, segs * MSS);
    w
}

/// Send times of the data segment at stream offset `off`.
fn sends_of(w: &Wire, off: u64) -> Vec<SimTime> {
    w.a_data()
        .iter()
        .filter(|d| d.1 == off)
        .map(|d| d.0)
        .collect()
}

#[test]
fn rack_reo_timer_repairs_a_hole_with_two_sacks() {
    // 12 segments; the initial window (10) holds segments 0-9 and segment 7 is lost: only 8
    // and 9 are SACKed one RTT later, never three duplicate ACKs. RACK (RFC 8985 §6.2-6.3):
    // with fewer than DupThresh SACKed segments and no reordering seen, reo_wnd = min_rtt / 4
    // = 10 ms; the hole is lost RACK.rtt (40 ms) + reo_wnd after it was sent, and Linux's
    // reordering timer adds TCP_TIMEOUT_MIN (2 ms): the retransmission leaves 52 ms after the
    // original.
    let w = tail(Recovery::Linux, 12, &[7]);
    let tx = sends_of(&w, 7 * MSS);
    assert_eq!(tx.len(), 2, "{tx:?}");
    assert_eq!(sends_of(&w, 9 * MSS)[0], tx[0], "one burst");
    let gap = tx[1] - tx[0];
    assert!(gap >= ms(52) && gap <= ms(53), "retransmitted after {gap}");
    let s = w.a.stats();
    assert_eq!(
        (s.timeouts, s.fast_recoveries, s.retransmitted_segments),
        (0, 1, 1),
        "{s:?}"
    );
    // RFC 6675 needs DupThresh duplicate ACKs; segments 10 and 11 bring the third one a round
    // trip later.
    let w = tail(Recovery::Rfc6675, 12, &[7]);
    let tx = sends_of(&w, 7 * MSS);
    assert!(tx[1] - tx[0] >= ms(80), "{tx:?}");
}

#[test]
fn tlp_probes_a_silent_tail_instead_of_waiting_for_the_rto() {
    // The last three of 30 segments lost: no ACK comes back for them. TLP (RFC 8985 §7.2,
    // Linux tcp_schedule_loss_probe): PTO = 2 SRTT + 2 ms after the last ACK with more than one
    // segment outstanding; the probe (no new data: the last segment again, §7.3) is SACKed,
    // RACK marks the two below it lost and fast recovery repairs them. No RTO.
    let w = tail(Recovery::Linux, 30, &[27, 28, 29]);
    let s = *w.a.stats();
    assert_eq!(
        (s.timeouts, s.tlp_probes, s.fast_recoveries),
        (0, 1, 1),
        "{s:?}"
    );
    let probe = sends_of(&w, 29 * MSS);
    assert_eq!(probe.len(), 2, "{probe:?}");
    // the probe leaves 2 SRTT + 2 ms after the last ACK arrived (SRTT between the path's 40 ms
    // and the 80 ms a delayed ACK measures), far sooner than the RTO (>= SRTT + 200 ms)
    let last_ack = w
        .b_acks()
        .iter()
        .map(|a| a.0)
        .filter(|&t| t < probe[1])
        .max()
        .unwrap()
        + ms(20);
    let pto = probe[1] - last_ack;
    assert!(pto >= ms(82) && pto <= ms(162), "PTO {pto}");
    // RFC 6675 without TLP: the RTO, then go-back-N from SND.UNA.
    let w = tail(Recovery::Rfc6675, 30, &[27, 28, 29]);
    assert_eq!(w.a.stats().timeouts, 1);
    assert_eq!(w.a.stats().tlp_probes, 0);
}

#[test]
fn tlp_repairs_a_lost_flight_without_rto() {
    // A whole flight lost in mid-transfer (the F-RTO scenario of tests/recovery.rs): with TLP
    // the probe carries new data, its SACK shows the flight lost (RACK) and fast recovery
    // repairs it; Linux takes no RTO here.
    let mut w = Wire::new(cfg(Recovery::Linux), cfg(Recovery::Linux), 7, 9, ms(20));
    w.rate_bps = 20_000_000;
    w.queue_pkts = 1000;
    w.to_write = 30_000;
    w.close_after_write = false;
    w.run_until(at_ms(1_000), |_| false);
    let until = w.now + ms(1);
    w.fate = Box::new(move |s, _| {
        if s.seg.payload_len > 0 && s.time < until {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    w.to_write = 200_000;
    w.run_until(at_ms(10_000), |w| w.read_by_b == 230_000);
    assert_eq!(w.read_by_b, 230_000);
    let s = *w.a.stats();
    assert_eq!(s.timeouts, 0, "{s:?}");
    assert!(s.tlp_probes >= 1 && s.fast_recoveries >= 1, "{s:?}");
}

#[test]
fn dsack_widens_rack_window_so_reordering_stops_causing_retransmissions() {
    // Reordering only, no loss: 2 % of packets are delayed up to 15 ms (about 12 segments at
    // 10 Mbit/s). RFC 6675's DupThresh retransmits needlessly every time. RACK (RFC 8985
    // §6.2 step 4, Linux tcp_rack_update_reo_wnd): once reordering is seen the window is
    // min_rtt / 4 = 10 ms, and each round with a DSACK (the receiver reports the needless
    // retransmission, RFC 2883) widens it by another 10 ms, so the needless retransmissions
    // stop; DSACKs also undo the reductions (RFC 3708).
    let run = |rec: Recovery| {
        // window-limited (100 kB < the queue), so that reordering is the only trouble
        let c = TcpConfig {
            rcv_buf: celltcp_tcp::BufSize::Fixed(100_000),
            ..cfg(rec)
        };
        let mut w = Wire::new(c, c, 7, 9, ms(20));
        w.rate_bps = 10_000_000;
        w.queue_pkts = 1000;
        w.to_write = 6_000_000;
        w.fate = random_fate(0.0, 0.0, 0.02, ms(15));
        w.run_until(at_ms(60_000), |w| w.both_closed());
        assert_eq!(w.read_by_b, 6_000_000);
        *w.a.stats()
    };
    let linux = run(Recovery::Linux);
    let rfc = run(Recovery::Rfc6675);
    assert!(linux.dsacks_received > 0 && linux.spurious > 0, "{linux:?}");
    assert!(
        linux.retransmitted_segments * 4 < rfc.retransmitted_segments,
        "linux {} vs rfc6675 {} retransmissions",
        linux.retransmitted_segments,
        rfc.retransmitted_segments
    );
}

#[test]
fn dsack_after_the_end_of_fast_recovery_still_undoes_it() {
    // Segment 60 is held 150 ms on the way (10 Mbit/s, 40 ms RTT): RACK marks it lost and the
    // retransmission arrives first, fills the hole, and its cumulative ACK ends the fast
    // recovery (RFC 6675 §5: RecoveryPoint ACKed). The original arrives afterwards and the
    // receiver reports it as a duplicate (DSACK, RFC 2883 §4); that ACK reaches the sender in
    // Open. Linux keeps `undo_marker` past the end of recovery (`tcp_try_undo_recovery` does
    // not clear it) and `tcp_fastretrans_alert` calls `tcp_try_undo_dsack` in Open and
    // Disorder: with `undo_retrans` down to 0 the reduction is undone (RFC 3708).
    let mut w = Wire::new(cfg(Recovery::Linux), cfg(Recovery::Linux), 7, 9, ms(20));
    w.rate_bps = 10_000_000;
    w.queue_pkts = 1000;
    w.to_write = 600_000;
    w.fate = Box::new(|s, _| {
        if s.data_idx == Some(60) {
            Fate::Delay(ms(150))
        } else {
            Fate::Deliver
        }
    });
    // ssthresh before the episode, then run until the recovery has ended.
    let mut ssthresh0 = 0;
    w.run_until(at_ms(20_000), |w| {
        let s = w.a.sample(w.now);
        if w.a.stats().fast_recoveries == 0 {
            ssthresh0 = s.ssthresh_bytes;
        }
        w.a.stats().fast_recoveries == 1 && s.ca_state == celltcp_tcp::CaState::Open
    });
    let s = *w.a.stats();
    assert_eq!(
        (s.fast_recoveries, s.dsacks_received, s.spurious),
        (1, 0, 0),
        "{s:?}"
    );
    assert!(
        w.a.sample(w.now).ssthresh_bytes < ssthresh0,
        "the recovery reduced ssthresh"
    );
    // The DSACK comes in Open and undoes the episode: ssthresh back to its value before.
    w.run_until(at_ms(20_000), |w| w.a.stats().dsacks_received > 0);
    let s = *w.a.stats();
    assert_eq!(
        (s.dsacks_received, s.dsack_undos, s.spurious),
        (1, 1, 1),
        "{s:?}"
    );
    assert_eq!(w.a.sample(w.now).ssthresh_bytes, ssthresh0);
    w.run_until(at_ms(20_000), |w| w.both_closed());
    assert_eq!(w.read_by_b, 600_000);
    assert_eq!((w.a.stats().fast_recoveries, w.a.stats().timeouts), (1, 0));
}

#[test]
fn partial_undo_clears_the_loss_marks_and_resends_nothing_on_its_ack() {
    // Linux `tcp_try_undo_partial`: an ACK advancing SND.UNA with an echoed timestamp older
    // than the episode's first retransmission (`tcp_packet_delayed`) while no retransmission
    // is in flight undoes the reduction by `tcp_undo_cwnd_reduction(sk, true)`, which clears
    // every `TCPCB_LOST` mark (`lost_out = 0`) and sets `rack.advanced`; `tcp_fastretrans_alert`
    // then returns, so that ACK resends nothing and RACK looks again at the next one.
    // Segments 5-7 of the initial window (sent at 40 ms) are late: 5 by 25 ms, 6 and 7 by
    // 200 ms. RACK's reordering timer marks all three lost at 92 ms and PRR resends 5. The
    // original 5 arrives at 85 ms; its ACK (at A at 105 ms, echoing the original's TSval)
    // covers 5 and removes its retransmission from flight: partial undo. 6 and 7 go out again
    // only when the next ACK (120 ms) lets RACK mark them anew, not on the undoing ACK.
    let mut w = Wire::new(cfg(Recovery::Linux), cfg(Recovery::Linux), 7, 9, ms(20));
    w.to_write = 40 * MSS;
    w.fate = Box::new(|s, _| match s.data_idx {
        Some(5) => Fate::Delay(ms(25)),
        Some(6) | Some(7) => Fate::Delay(ms(200)),
        _ => Fate::Deliver,
    });
    w.run_until(at_ms(20_000), |w| w.both_closed());
    assert_eq!(w.read_by_b, 40 * MSS);
    assert_eq!(sends_of(&w, 5 * MSS), vec![at_ms(40), at_ms(92)]);
    assert!(w.a.stats().spurious >= 1, "{:?}", w.a.stats());
    for seg in [6, 7] {
        let tx = sends_of(&w, seg * MSS);
        assert_eq!(tx.len(), 2, "segment {seg}: {tx:?}");
        assert!(tx[1] > at_ms(105), "segment {seg} resent by the undoing ACK: {tx:?}");
    }
}
