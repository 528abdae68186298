//! Flow control and buffers over the test wire: zero window, window update and the persist
//! timer (RFC 9293 §3.8.6.1, §3.8.6.2.2), receive-buffer autotuning (Linux DRS), send-buffer
//! growth, pacing.

mod common;

use celltcp_engine::{SimDuration, SimTime};
use celltcp_tcp::{BufSize, TcpConfig, TcpState};
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
    // Linux tcp_update_pacing_rate: 2 x cwnd / srtt in slow start; no back-to-back bursts.
    let cfg = TcpConfig {
        pacing: true,
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
