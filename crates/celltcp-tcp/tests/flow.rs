//! Flow control and buffers over the test wire: zero window, window update and the persist
//! timer (RFC 9293 §3.8.6.1, §3.8.6.2.2), receive-buffer autotuning (Linux DRS), send-buffer
//! growth, pacing (per segment, and in Linux's TSO bursts: `celltcp_tcp::pacing`).

mod common;

use celltcp_engine::{SimDuration, SimTime};
use celltcp_tcp::cc::CcKind;
use celltcp_tcp::{BufSize, PacingQuantum, TcpConfig, TcpState};
use common::*;

fn zero_window_wire() -> Wire {
    let a = TcpConfig::default();
    let b = TcpConfig {
        rcv_buf: BufSize::Fixed(20_000),
        ..Default::default()
    };
    let mut w = Wire::new(a, b, 11, 22, ms(10));
    w.b_reads = false;
    w.to_write = 100_000;
    w
}

#[test]
fn zero_window_then_window_update_resumes() {
    // RFC 9293 §3.8.6.2.2: the receiver reopens the window once the application reads.
    let mut w = zero_window_wire();
    w.run_until(at_ms(1_000), |_| false);
    assert_eq!(
        w.b().readable(),
        20_000,
        "the buffer filled (the last sub-MSS piece by a persist probe)"
    );
    assert_eq!(w.a.snd_wnd(), 0, "B advertised a zero window");
    assert_eq!(
        w.a.stats().timeouts,
        0,
        "no RTO: the persist timer runs instead"
    );
    w.b_reads = true;
    let n = w.b_mut().read(SimTime::from_millis(1_000), u64::MAX);
    w.read_by_b += n;
    w.run_until(at_ms(5_000), |w| w.both_closed());
    assert_eq!(w.read_by_b, 100_000);
    assert!(w.both_closed());
}

#[test]
fn persist_timer_probes_with_backoff_and_recovers_lost_window_update() {
    // RFC 9293 §3.8.6.1: with a zero window the sender probes, backing off; a lost window
    // update is recovered by the next probe.
    let mut w = zero_window_wire();
    w.run_until(at_ms(8_000), |_| false);
    let probes: Vec<SimTime> = w
        .log
        .iter()
        .filter(|s| s.from == Side::A && s.seg.payload_len == 0 && s.time > at_ms(50))
        .map(|s| s.time)
        .collect();
    assert!(probes.len() >= 3, "{probes:?}");
    let gaps: Vec<SimDuration> = probes.windows(2).map(|p| p[1] - p[0]).collect();
    assert!(
        gaps.windows(2).all(|g| g[1] == g[0] * 2),
        "doubling intervals: {gaps:?}"
    );
    assert_eq!(w.a.stats().window_probes_sent as usize, probes.len());
    // every probe was answered with the (still zero) window
    assert_eq!(w.a.snd_wnd(), 0);
    // now read, but lose B's window update: the next probe finds the open window
    let t = w.now;
    w.fate = Box::new(move |s, _| {
        if s.from == Side::B && s.time >= t && s.time < t + ms(1) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    w.b_reads = true;
    let n = w.b_mut().read(t, u64::MAX);
    w.read_by_b += n;
    w.run_until(at_ms(60_000), |w| w.both_closed());
    assert_eq!(w.read_by_b, 100_000);
    assert!(w.both_closed());
}

#[test]
fn receive_buffer_autotunes_to_bdp() {
    // Linux tcp_rcv_space_adjust: the buffer grows to about twice the data read per RTT, so a
    // 100 Mbit/s x 100 ms path (1.25 MB BDP) is filled with the default 128 KiB start.
    let cfg = TcpConfig::default();
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(50));
    w.rate_bps = 100_000_000;
    w.queue_pkts = 2_000;
    w.to_write = 200_000_000;
    w.run_until(at_ms(6_000), |_| false);
    let r0 = w.read_by_b;
    w.run_until(at_ms(10_000), |_| false);
    let rate_bps = (w.read_by_b - r0) as f64 * 8.0 / 4.0;
    assert!(w.b().rcv_buf() > 1_250_000, "rcv_buf {}", w.b().rcv_buf());
    assert!(w.b().rcv_buf() <= 6 * 1024 * 1024);
    assert!(rate_bps > 85e6, "goodput {rate_bps:.0} bit/s");
    assert!(
        w.a.snd_buf() > 1_250_000,
        "send buffer grew with cwnd: {}",
        w.a.snd_buf()
    );
}

#[test]
fn fixed_receive_buffer_does_not_grow() {
    let cfg = TcpConfig {
        rcv_buf: BufSize::Fixed(100_000),
        ..Default::default()
    };
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(50));
    w.to_write = 5_000_000;
    w.run_until(at_ms(3_000), |_| false);
    assert_eq!(w.b().rcv_buf(), 100_000);
}

#[test]
fn pacing_spreads_segments() {
    // Linux tcp_update_pacing_rate: 2 x cwnd / srtt in slow start; with per-segment pacing no
    // back-to-back bursts.
    let cfg = TcpConfig {
        pacing: true,
        pacing_quantum: PacingQuantum::Segment,
        ..Default::default()
    };
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(20));
    w.to_write = 2_000_000;
    w.run_until(at_ms(20_000), |w| w.both_closed());
    assert_eq!(w.read_by_b, 2_000_000);
    let data = w.a_data();
    let after_first_rtt: Vec<SimTime> = data
        .iter()
        .filter(|d| d.0 > at_ms(100))
        .map(|d| d.0)
        .collect();
    let same_instant = after_first_rtt.windows(2).filter(|p| p[0] == p[1]).count();
    assert!(
        same_instant * 20 < after_first_rtt.len(),
        "{same_instant} of {} segments back to back",
        after_first_rtt.len()
    );
    assert!(w.a.sample(w.now).pacing_rate.is_some());
    // and without pacing the same transfer sends bursts
    let cfg = TcpConfig::default();
    let mut w = Wire::new(cfg, cfg, 1, 2, ms(20));
    w.to_write = 2_000_000;
    w.run_until(at_ms(20_000), |w| w.both_closed());
    let data = w.a_data();
    let bursts = data.windows(2).filter(|p| p[0].0 == p[1].0).count();
    assert!(bursts * 2 > data.len());
    assert_eq!(w.a.state(), TcpState::Closed);
}

// ---------------------------------------------------------------- TSO bursts (Linux per-skb pacing)

const MSS: u64 = 1448;

/// The segments sent at one instant: (time, segments, payload bytes).
type Burst = (SimTime, u64, u64);

/// A BBR bulk transfer over a `rate_bps` bottleneck (25 ms each way, 1000-packet queue) until
/// `end_ms`, with the sender's pacing rate after every event: A's data segments as bursts (the
/// segments sent at one instant: time, count, payload) and the pacing-rate record.
fn bbr_bursts(rate_bps: u64, quantum: PacingQuantum, end_ms: u64) -> (Wire, Vec<Burst>, Vec<(SimTime, f64)>) {
    let cfg = TcpConfig { cc: CcKind::Bbr.into(), pacing_quantum: quantum, ..Default::default() };
    let mut w = Wire::new(cfg, TcpConfig::default(), 1, 2, ms(25));
    w.rate_bps = rate_bps;
    w.queue_pkts = 1000;
    w.to_write = u64::MAX / 4;
    w.close_after_write = false;
    let mut rates: Vec<(SimTime, f64)> = Vec::new();
    w.run_until(at_ms(end_ms), |w| {
        if let Some(r) = w.a.sample(w.now).pacing_rate {
            rates.push((w.now, r));
        }
        false
    });
    let mut bursts: Vec<Burst> = Vec::new();
    for (t, _, len) in w.a_data() {
        match bursts.last_mut() {
            Some(b) if b.0 == t => {
                b.1 += 1;
                b.2 += len as u64;
            }
            _ => bursts.push((t, 1, len as u64)),
        }
    }
    (w, bursts, rates)
}

/// The pacing rate in force at `t` (the last one recorded at or before it).
fn rate_at(rates: &[(SimTime, f64)], t: SimTime) -> f64 {
    let i = rates.partition_point(|r| r.0 <= t);
    rates[i.max(1) - 1].1
}

/// The bursts that start in [from, to) and the one after each.
fn window(bursts: &[Burst], from: u64, to: u64) -> Vec<(Burst, SimTime)> {
    bursts.windows(2).filter(|p| p[0].0 >= at_ms(from) && p[0].0 < at_ms(to)).map(|p| (p[0], p[1].0)).collect()
}

#[test]
fn bbr_at_10mbps_sends_two_segment_bursts_spaced_by_their_payload_over_the_pacing_rate() {
    // Linux tcp_tso_autosize: pacing_rate >> 10 at 10 Mbit/s is ~1.2 KB, under one segment, so
    // an skb is bbr_min_tso_segs = 2 segments; tcp_update_skb_after_send moves tcp_wstamp_ns by
    // skb->len (2 x 1448 B of payload) / pacing_rate, and tcp_pacing_check holds the next skb
    // until then. Per-segment pacing (celltcp before issue 12) sends bursts of one.
    let (w, bursts, rates) = bbr_bursts(10_000_000, PacingQuantum::Tso, 4_000);
    let steady = window(&bursts, 2_000, 4_000);
    assert!(steady.len() > 500, "{} bursts", steady.len());
    assert!(steady.iter().all(|(b, _)| b.1 <= 2), "a burst above 2 segments");
    let pairs = steady.iter().filter(|(b, _)| b.1 == 2).count();
    assert!(pairs * 10 >= steady.len() * 9, "{pairs} of {} bursts carry 2 segments", steady.len());
    // EDT: the next burst never leaves before this one's payload / rate, less at most half of it
    // (the `credit` of a late burst); when the sender is not waiting for cwnd, exactly then.
    let mut exact = 0;
    for (b, next) in &steady {
        let spacing = b.2 as f64 / rate_at(&rates, b.0);
        let gap = (*next - b.0).as_secs_f64();
        assert!(gap >= spacing / 2.0 - 1e-9, "burst at {}: gap {gap} s < half of {spacing} s", b.0);
        if b.1 == 2 && (gap - spacing).abs() < 1e-6 {
            assert_eq!(b.2, 2 * MSS);
            exact += 1;
        }
    }
    assert!(exact * 2 > steady.len(), "{exact} of {} bursts spaced 2 x 1448 B / pacing rate", steady.len());
    // The first 10 data segments are not paced (tcp_update_skb_after_send: data_segs_out >= 10).
    let first = w.a_data();
    assert!(first[..10].iter().all(|d| d.0 == first[0].0), "the initial window leaves at once");
    // The old behaviour, still selectable: one segment at a time.
    let (_, bursts, _) = bbr_bursts(10_000_000, PacingQuantum::Segment, 4_000);
    assert!(window(&bursts, 2_000, 4_000).iter().all(|(b, _)| b.1 == 1));
}

#[test]
fn bbr_at_100mbps_bursts_the_kernels_tso_autosize() {
    // tcp_tso_autosize: (pacing_rate >> sk_pacing_shift) / mss segments, sk_pacing_shift = 10
    // (min RTT 50 ms: no short-path allowance). At 100 Mbit/s about 8 segments of 1448 B.
    let (_, bursts, rates) = bbr_bursts(100_000_000, PacingQuantum::Tso, 3_000);
    let steady = window(&bursts, 2_000, 3_000);
    assert!(steady.len() > 500, "{} bursts", steady.len());
    let autosize = |r: f64| (((r as u64) >> 10) / MSS).max(2);
    let mut full = 0;
    for (b, _) in &steady {
        let n = autosize(rate_at(&rates, b.0));
        assert!(b.1 <= n, "burst at {} of {} segments, autosize {n}", b.0, b.1);
        full += (b.1 == n) as usize;
    }
    assert!(full * 10 >= steady.len() * 8, "{full} of {} bursts of the full autosize", steady.len());
    assert!(steady.iter().any(|(b, _)| b.1 >= 7), "bursts of ~8 segments at 100 Mbit/s");
}

#[test]
fn bbr_below_1_2_mbps_sends_one_segment_at_a_time() {
    // bbr_min_tso_segs: 1 below bbr_min_tso_rate = 1.2 Mbit/s. On a 0.8 Mbit/s link the pacing
    // rate stays below it after STARTUP (1.25 x 0.99 x 0.77 Mbit/s of payload in the 5/4 phase).
    let (_, bursts, rates) = bbr_bursts(800_000, PacingQuantum::Tso, 9_000);
    let steady = window(&bursts, 4_000, 9_000);
    assert!(steady.len() > 200, "{} bursts", steady.len());
    assert!(steady.iter().all(|(b, _)| rate_at(&rates, b.0) < 1.2e6 / 8.0));
    assert!(steady.iter().all(|(b, _)| b.1 == 1), "one segment per burst below 1.2 Mbit/s");
}

#[test]
fn bbr_tso_bursts_send_at_the_pacing_rate_on_average() {
    // Over a stretch where BBR is paced, not cwnd-limited (1000-packet queue, cwnd 2 BDP), the
    // payload sent equals the integral of the pacing rate: bursts only regroup the bytes.
    // Per-segment pacing counts the TCP header too and sends 1448/1480 of it.
    let sent_over_rate = |q| {
        let (_, bursts, rates) = bbr_bursts(10_000_000, q, 6_000);
        let (from, to) = (at_ms(2_000), at_ms(6_000));
        let sent: u64 = bursts.iter().filter(|b| b.0 >= from && b.0 < to).map(|b| b.2).sum();
        let mut integral = 0.0;
        let mut t = from;
        let mut i = rates.partition_point(|r| r.0 <= from);
        while t < to {
            let next = rates.get(i).map_or(to, |r| r.0.min(to));
            integral += rate_at(&rates, t) * (next - t).as_secs_f64();
            t = next;
            i += 1;
        }
        sent as f64 / integral
    };
    let tso = sent_over_rate(PacingQuantum::Tso);
    assert!((tso - 1.0).abs() < 0.01, "TSO bursts: sent / paced = {tso}");
    let seg = sent_over_rate(PacingQuantum::Segment);
    assert!((seg - 1448.0 / 1480.0).abs() < 0.01, "per segment: sent / paced = {seg}");
}
