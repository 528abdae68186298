//! State-machine unit tests: one fixture builder per state, tests grouped under state banners
//! (the smoltcp `socket/tcp.rs` layout). Segments are exchanged by hand with zero delay.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::packet::{TcpFlags, TcpSegment};

use super::*;
use crate::cc::{CcKind, RtoSsthresh};
use crate::config::{BufSize, Recovery};

const MSS: u64 = 1448;

fn cfg() -> TcpConfig {
    TcpConfig::default()
}

fn t(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

fn drain(e: &mut TcpEndpoint, now: SimTime) -> Vec<TcpSegment> {
    std::iter::from_fn(|| e.poll_transmit(now)).collect()
}

/// Two endpoints and a clock; `exchange` delivers everything both ways instantly.
struct Pair {
    a: TcpEndpoint,
    b: TcpEndpoint,
    now: SimTime,
}

impl Pair {
    /// Delivers segments back and forth until both are quiet; returns (A's, B's) segments.
    fn exchange(&mut self) -> (Vec<TcpSegment>, Vec<TcpSegment>) {
        let (mut from_a, mut from_b) = (vec![], vec![]);
        loop {
            let sa = drain(&mut self.a, self.now);
            let sb = drain(&mut self.b, self.now);
            if sa.is_empty() && sb.is_empty() {
                return (from_a, from_b);
            }
            for s in &sa {
                self.b.on_segment(self.now, s, false);
            }
            for s in &sb {
                self.a.on_segment(self.now, s, false);
            }
            from_a.extend(sa);
            from_b.extend(sb);
        }
    }

    /// Moves the clock, firing due timers on both sides.
    fn advance(&mut self, d: SimDuration) {
        self.now += d;
        self.a.on_timeout(self.now);
        self.b.on_timeout(self.now);
    }
}

// ---------------------------------------------------------------- fixtures per state

/// SYN-SENT: an active opener and the SYN it emitted.
fn syn_sent(c: TcpConfig) -> (TcpEndpoint, TcpSegment) {
    let mut a = TcpEndpoint::connect(c, 1000, 80, 100, t(0));
    let syn = a.poll_transmit(t(0)).unwrap();
    assert!(a.poll_transmit(t(0)).is_none());
    (a, syn)
}

/// SYN-RECEIVED: a passive opener and its SYN-ACK (plus the client in SYN-SENT).
fn syn_received(ca: TcpConfig, cb: TcpConfig) -> (TcpEndpoint, TcpEndpoint, TcpSegment) {
    let (a, syn) = syn_sent(ca);
    let mut b = TcpEndpoint::accept(cb, 80, 1000, 5000, &syn, t(0));
    let synack = b.poll_transmit(t(0)).unwrap();
    (a, b, synack)
}

/// ESTABLISHED on both sides.
fn established(c: TcpConfig) -> Pair {
    let (mut a, mut b, synack) = syn_received(c, c);
    a.on_segment(t(1), &synack, false);
    let ack = a.poll_transmit(t(1)).unwrap();
    b.on_segment(t(1), &ack, false);
    let mut p = Pair { a, b, now: t(1) };
    p.exchange();
    assert_eq!(
        (p.a.state(), p.b.state()),
        (TcpState::Established, TcpState::Established)
    );
    p
}

/// One segment from A acknowledged 40 ms later: A has an RTT sample and B has advertised its
/// full window (a window update is not a duplicate ACK: RFC 5681 §2 condition (e)).
fn warm_up(p: &mut Pair) {
    p.a.write(MSS);
    p.exchange();
    p.advance(SimDuration::from_millis(40));
    p.exchange();
}

/// FIN-WAIT-2 (A) / CLOSE-WAIT (B): A closed and B acknowledged the FIN.
fn fin_wait_2() -> Pair {
    let mut p = established(cfg());
    p.a.close();
    p.exchange();
    assert_eq!(
        (p.a.state(), p.b.state()),
        (TcpState::FinWait2, TcpState::CloseWait)
    );
    p
}

// ---------------------------------------------------------------- SYN-SENT

#[test]
fn syn_sent_offers_configured_options() {
    let (a, syn) = syn_sent(cfg());
    assert_eq!(a.state(), TcpState::SynSent);
    assert!(syn.flags.syn() && !syn.flags.ack());
    assert_eq!(syn.seq, 100);
    assert_eq!(syn.options.mss, Some(1460));
    assert_eq!(syn.options.wscale, Some(7));
    assert!(syn.options.sack_permitted && syn.options.timestamps.is_some());
    assert_eq!(
        a.next_deadline(),
        Some(t(1_000)),
        "RFC 6298 §2.1: initial RTO 1 s"
    );
}

#[test]
fn syn_sent_gives_up_after_syn_retries() {
    // Linux tcp_syn_retries; RFC 6298 §5.5 backoff between attempts.
    let c = TcpConfig {
        syn_retries: 2,
        ..cfg()
    };
    let (mut a, _) = syn_sent(c);
    let mut times = vec![];
    while let Some(d) = a.next_deadline() {
        a.on_timeout(d);
        if a.poll_transmit(d).is_some() {
            times.push(d);
        }
    }
    assert_eq!(times, vec![t(1_000), t(3_000)]);
    assert!(a.is_closed() && a.was_reset());
}

#[test]
fn syn_sent_ignores_synack_with_wrong_ack() {
    let (mut a, _, mut synack) = syn_received(cfg(), cfg());
    synack.ack = synack.ack.wrapping_add(5);
    a.on_segment(t(1), &synack, false);
    assert_eq!(a.state(), TcpState::SynSent);
}

// ---------------------------------------------------------------- SYN-RECEIVED

#[test]
fn syn_received_answers_only_offered_options() {
    // RFC 7323 §2.2, RFC 2018 §2
    let ca = TcpConfig {
        sack: false,
        window_scaling: false,
        ..cfg()
    };
    let (_, b, synack) = syn_received(ca, cfg());
    assert!(synack.flags.syn() && synack.flags.ack());
    assert!(!synack.options.sack_permitted && synack.options.wscale.is_none());
    assert!(synack.options.timestamps.is_some());
    let n = b.negotiated();
    assert!(!n.sack && n.timestamps && !n.window_scaling);
}

#[test]
fn syn_received_resends_synack_on_duplicate_syn() {
    let (a, mut b, _) = syn_received(cfg(), cfg());
    let _ = a;
    let (_, syn) = syn_sent(cfg());
    b.on_segment(t(5), &syn, false);
    let again = b.poll_transmit(t(5)).unwrap();
    assert!(again.flags.syn() && again.flags.ack());
}

#[test]
fn syn_received_to_established_on_ack() {
    let p = established(cfg());
    assert!(p.a.is_established() && p.b.is_established());
    assert_eq!(
        p.a.sample(p.now).srtt,
        SimDuration::from_millis(1),
        "SYN RTT sample"
    );
}

// ---------------------------------------------------------------- ESTABLISHED

#[test]
fn established_initial_window_is_ten_segments() {
    // RFC 6928: IW = 10 segments.
    let mut p = established(TcpConfig {
        snd_buf: BufSize::Fixed(1 << 20),
        ..cfg()
    });
    assert_eq!(p.a.write(1 << 20), 1 << 20);
    let segs = drain(&mut p.a, p.now);
    assert_eq!(segs.len(), 10);
    assert!(segs.iter().all(|s| s.payload_len as u64 == MSS));
    assert_eq!(p.a.sample(p.now).bytes_in_flight, 10 * MSS);
}

#[test]
fn established_controller_gets_cc_seed() {
    // TcpConfig::cc_seed reaches the controller, also when it is rebuilt for a smaller
    // negotiated MSS (RFC 9293 §3.7.1). Regression: AnyCc::new always used seed 0.
    let c = TcpConfig {
        cc: crate::cc::CcKind::Bbr.into(),
        cc_seed: 0xDEAD_BEEF,
        ..cfg()
    };
    for peer_mss in [1448, 1000] {
        let (mut a, b, synack) = syn_received(c, TcpConfig { mss: peer_mss, ..c });
        a.on_segment(t(1), &synack, false);
        assert_eq!(a.mss(), peer_mss);
        for e in [&a, &b] {
            match e.controller() {
                AnyCc::Bbr(bbr) => assert_eq!(bbr.config().seed, 0xDEAD_BEEF),
                other => panic!("{:?}", other.kind()),
            }
        }
    }
}

#[test]
fn established_write_bounded_by_send_buffer() {
    let mut p = established(TcpConfig {
        snd_buf: BufSize::Fixed(10_000),
        ..cfg()
    });
    assert_eq!(p.a.write(50_000), 10_000);
    assert_eq!(p.a.send_buffer_free(), 0);
    p.exchange();
    p.advance(SimDuration::from_millis(40)); // the lone tail segment's delayed ACK
    p.exchange();
    assert_eq!(
        p.a.send_buffer_free(),
        10_000,
        "acknowledged bytes free the buffer"
    );
}

#[test]
fn autotuned_send_buffer_follows_linux_tcp_sndbuf_expand() {
    // Linux tcp_init_buffer_space -> tcp_sndbuf_expand at establishment: sndbuf_expand (BBR 3,
    // bbr_sndbuf_expand; else 2) x max(cwnd, TCP_INIT_CWND = 10) segments x per_mss, where
    // per_mss = roundup_pow_of_two(1448 + MAX_TCP_HEADER 192 + skb_shared_info 320 = 1960)
    // = 2048 + sizeof(struct sk_buff) 256 = 2304 (the oracle host's `ss` tb: 184,320 at
    // cwnd 40); capped at tcp_wmem[2] = 4 MiB.
    let p = established(cfg());
    assert_eq!(p.a.snd_buf(), 2 * 10 * 2304, "CUBIC: 46,080 bytes");
    let p = established(TcpConfig { cc: CcKind::Bbr.into(), ..cfg() });
    assert_eq!(p.a.snd_buf(), 3 * 10 * 2304, "BBR: 69,120 bytes");
    // Later on an ACK that frees space while the writer waits (tcp_check_space with
    // SOCK_NOSPACE -> tcp_new_space): the first ACK of the initial window grows it to
    // 2 x cwnd x 2304 ...
    let mut p = established(cfg());
    p.a.write(1 << 20);
    assert_eq!(p.a.send_buffer_writable(), 0, "the writer waits");
    let segs = drain(&mut p.a, p.now);
    assert_eq!(segs.len(), 10);
    for s in &segs {
        p.b.on_segment(p.now, s, false);
    }
    let acks = drain(&mut p.b, p.now);
    p.a.on_segment(p.now, &acks[0], false);
    let cwnd = p.a.sample(p.now).cwnd_bytes / MSS;
    assert!(cwnd > 10, "{cwnd}");
    assert_eq!(p.a.snd_buf(), 2 * cwnd * 2304);
    // ... and it follows cwnd up.
    p.exchange();
    let segs = p.a.sample(p.now).cwnd_bytes / MSS;
    assert!(segs > cwnd, "{segs}");
    assert_eq!(p.a.snd_buf(), 2 * segs * 2304);
    // A writer that does not wait (it never filled the buffer) grows nothing.
    let mut p = established(cfg());
    p.a.write(20 * MSS);
    for _ in 0..3 {
        p.exchange();
        p.advance(SimDuration::from_millis(40));
    }
    assert_eq!(p.a.snd_buf(), 46_080);
    // ... and it stops at the maximum.
    let p = established(TcpConfig { snd_buf: BufSize::Auto { initial: 16_384, max: 40_000 }, ..cfg() });
    assert_eq!(p.a.snd_buf(), 40_000);
}

#[test]
fn autotuned_send_buffer_is_charged_linux_truesize() {
    // Linux charges sk_wmem_queued with skb->truesize: payload + 832 bytes of head per skb
    // (tcp_stream_alloc_skb; SKB_TRUESIZE of the small-head cache's 256-byte head). A write
    // copies into skbs of the size goal, 45 segments = 65,160 bytes (tcp_xmit_size_goal), and
    // starts a new one while the charge is below the buffer (sk_stream_memory_free at
    // new_segment): 4 skbs charge 263,968 < 300,000, so a fifth is filled.
    let c = TcpConfig { snd_buf: BufSize::Auto { initial: 300_000, max: 300_000 }, ..cfg() };
    let mut p = established(c);
    assert_eq!(p.a.write(1 << 20), 5 * 65_160, "whole skbs while the buffer is not full");
    assert_eq!(p.a.send_buffer_charge(), 5 * 65_160 + 5 * 832);
    assert_eq!(p.a.send_buffer_free(), 0);
    assert_eq!(p.a.write(1), 0, "full: the tail skb is full too");
    // tso_fragment cuts what is sent into skbs of the TSO quantum, each with its own head
    // (tcp_tso_segs: here the short-path allowance of a ~0 ms RTT, capped by tcp_cwnd_test's
    // half window, 5): 10 segments in 2 skbs; the 311,320 unsent bytes still in 5.
    let segs = drain(&mut p.a, p.now);
    assert_eq!(segs.len(), 10);
    assert_eq!(p.a.send_buffer_charge(), 5 * 65_160 + 7 * 832);
    assert_eq!(p.a.send_buffer_used(), 5 * 65_160, "the payload");
    // A fixed buffer (`window`, SO_SNDBUF doubled) is charged its payload and filled exactly.
    let mut p = established(TcpConfig { snd_buf: BufSize::Fixed(300_000), ..cfg() });
    assert_eq!(p.a.write(1 << 20), 300_000);
    drain(&mut p.a, p.now);
    assert_eq!(p.a.send_buffer_charge(), 300_000);
}

#[test]
fn a_writer_that_filled_the_send_buffer_waits_until_it_is_a_third_free() {
    // Linux sk_stream_wait_memory / sk_stream_write_space: a write that finds the buffer full
    // sets SOCK_NOSPACE and the writer is woken only once __sk_stream_is_writeable holds,
    // sk_stream_wspace (free) >= sk_stream_min_wspace (sk_wmem_queued / 2), both in truesize
    // (the payload and 832 bytes per 65,160-byte unsent skb). Acknowledgements are stood in for
    // by SND.UNA (what the rule reads: bytes written and not yet acknowledged).
    let mut p = established(TcpConfig { snd_buf: BufSize::Auto { initial: 150_000, max: 150_000 }, ..cfg() });
    assert_eq!(p.a.send_buffer_writable(), 195_480, "3 skbs: 2 charge 131,984 < 150,000");
    assert_eq!(p.a.write(1 << 20), 195_480);
    assert_eq!(p.a.send_buffer_writable(), 0);
    p.a.snd_una = 1 + 96_000; // 99,480 bytes in 2 skbs: 101,144 charged, 48,856 free
    assert_eq!(p.a.send_buffer_free(), 48_856);
    assert_eq!(p.a.send_buffer_writable(), 0, "48,856 < 101,144 / 2: still asleep");
    p.a.snd_una = 1 + 98_000; // 99,144 charged, 50,856 free
    assert_eq!(p.a.send_buffer_writable(), 98_000, "woken: the tail skb's 32,840 and one more");
    // A write that does not fill the buffer leaves the writer awake whatever the ratio.
    assert_eq!(p.a.write(10_000), 10_000);
    assert_eq!(p.a.send_buffer_writable(), 88_000, "40,856 free < 109,144 / 2, never slept");
    // poll()/select() (tcp_poll) finds it not writable and marks the writer as waiting
    assert!(!p.a.poll_writable());
    assert_eq!(p.a.send_buffer_writable(), 0, "waits though the buffer is not full");
    p.a.snd_una = 1 + 108_000; // 99,144 charged again
    assert!(p.a.poll_writable());
    assert_eq!(p.a.send_buffer_writable(), 98_000);
    // A fixed buffer (`window`) is not held back yet (see send_buffer_writable).
    let mut p = established(TcpConfig { snd_buf: BufSize::Fixed(30_000), ..cfg() });
    assert_eq!(p.a.write(50_000), 30_000);
    p.a.snd_una = 1 + 9_000;
    assert_eq!(p.a.send_buffer_writable(), 9_000);
    assert!(p.a.poll_writable());
}

#[test]
fn nagle_holds_a_partial_segment_only_behind_an_unacked_partial_one() {
    // Linux tcp_nagle_check with tcp_minshall_check (RFC 896 with Minshall's refinement): the
    // first partial segment goes at once even with a full one in flight; a second partial one
    // waits until the first is acknowledged.
    let payloads = |v: &[TcpSegment]| v.iter().filter(|s| s.payload_len > 0).map(|s| s.payload_len).collect::<Vec<_>>();
    // the receiver ACKs at once (Linux's quick-ACK start), so the ACK of the small segment
    // comes back within the exchange; the rule under test is the sender's
    let mut p = established(TcpConfig { quickack_segments: 16, ..cfg() });
    p.a.write(MSS + 100);
    let segs = drain(&mut p.a, p.now);
    assert_eq!(payloads(&segs), vec![MSS as u32, 100]);
    p.a.write(200);
    assert_eq!(payloads(&drain(&mut p.a, p.now)), Vec::<u32>::new(), "held behind the 100-byte segment");
    for s in &segs {
        p.b.on_segment(p.now, s, false);
    }
    let (from_a, _) = p.exchange();
    assert_eq!(payloads(&from_a), vec![200], "released by the ACK of the small segment");
    // TCP_NODELAY (iperf3 -N): every partial segment goes at once
    let mut p = established(TcpConfig { nagle: false, ..cfg() });
    p.a.write(MSS + 100);
    let segs = drain(&mut p.a, p.now);
    p.a.write(200);
    let more = drain(&mut p.a, p.now);
    assert_eq!((payloads(&segs), payloads(&more)), (vec![MSS as u32, 100], vec![200]));
}

#[test]
fn established_ack_of_unsent_data_is_answered_and_ignored() {
    // RFC 9293 §3.10.7.4: SEG.ACK > SND.NXT -> send an ACK, drop the segment.
    let mut p = established(cfg());
    let mut bogus = drain(&mut p.b, p.now).pop().unwrap_or_else(|| {
        p.b.rcv.ack_now = true;
        p.b.poll_transmit(p.now).unwrap()
    });
    bogus.ack = bogus.ack.wrapping_add(10_000);
    p.a.on_segment(p.now, &bogus, false);
    assert_eq!(p.a.sample(p.now).snd_una, 1);
    let ack = p.a.poll_transmit(p.now).unwrap();
    assert!(ack.flags.ack() && ack.payload_len == 0);
}

#[test]
fn established_three_dupacks_start_newreno_fast_retransmit() {
    // RFC 6582 §3.2 step 2 (SACK off): third duplicate ACK -> retransmit, cwnd = ssthresh + 3 SMSS.
    let c = TcpConfig {
        sack: false,
        ..cfg()
    };
    let mut p = established(c);
    // warm up so that B has advertised its full window (a window update is not a duplicate
    // ACK: RFC 5681 §2 condition (e))
    warm_up(&mut p);
    p.a.write(10 * MSS);
    let segs = drain(&mut p.a, p.now);
    assert_eq!(segs.len(), 10);
    // segment 0 lost; 1..4 arrive -> B sends duplicate ACKs
    let mut dups = vec![];
    for s in &segs[1..4] {
        p.b.on_segment(p.now, s, false);
        dups.extend(drain(&mut p.b, p.now));
    }
    assert_eq!(dups.len(), 3);
    assert!(dups.iter().all(|d| d.ack == segs[0].seq));
    for (k, d) in dups.iter().enumerate() {
        p.a.on_segment(p.now, d, false);
        let out = drain(&mut p.a, p.now);
        if k < 2 {
            assert!(out.is_empty());
        } else {
            assert_eq!(out.len(), 1, "fast retransmit");
            assert_eq!(out[0].seq, segs[0].seq);
        }
    }
    assert_eq!(p.a.ca_state(), CaState::Recovery);
    assert_eq!(p.a.stats().fast_recoveries, 1);
    let s = p.a.sample(p.now);
    assert_eq!(s.ssthresh_bytes, 5 * MSS);
    assert_eq!(s.cwnd_bytes, 5 * MSS + 3 * MSS);
}

#[test]
fn established_timestamps_echo_ts_recent() {
    // RFC 7323 §4.3: TSecr echoes the TSval of the segment that advanced Last.ACK.sent.
    let mut p = established(cfg());
    p.now = t(50);
    p.a.write(2 * MSS);
    let segs = drain(&mut p.a, p.now);
    let tsval = segs[0].options.timestamps.unwrap().0;
    for s in &segs {
        p.b.on_segment(t(60), s, false);
    }
    let ack = p.b.poll_transmit(t(60)).unwrap();
    assert_eq!(ack.options.timestamps.unwrap().1, tsval);
}

// ---------------------------------------------------------------- closing states

#[test]
fn fin_wait_1_to_fin_wait_2_on_ack_of_fin() {
    let p = fin_wait_2();
    assert!(p.b.peer_closed());
    assert!(!p.a.peer_closed());
}

#[test]
fn fin_wait_2_to_time_wait_then_closed() {
    // RFC 9293 §3.6; TIME-WAIT shortened to `time_wait` (1 s).
    let mut p = fin_wait_2();
    p.b.close();
    assert_eq!(p.b.state(), TcpState::LastAck);
    p.exchange();
    assert_eq!(p.a.state(), TcpState::TimeWait);
    assert!(p.b.is_closed());
    assert_eq!(p.a.next_deadline(), Some(p.now + SimDuration::from_secs(1)));
    p.advance(SimDuration::from_secs(1));
    assert!(p.a.is_closed() && !p.a.was_reset());
}

#[test]
fn simultaneous_close_passes_closing() {
    let mut p = established(cfg());
    p.a.close();
    p.b.close();
    let fa = drain(&mut p.a, p.now);
    let fb = drain(&mut p.b, p.now);
    for s in &fb {
        p.a.on_segment(p.now, s, false);
    }
    for s in &fa {
        p.b.on_segment(p.now, s, false);
    }
    assert_eq!(
        (p.a.state(), p.b.state()),
        (TcpState::Closing, TcpState::Closing)
    );
    p.exchange();
    assert_eq!(
        (p.a.state(), p.b.state()),
        (TcpState::TimeWait, TcpState::TimeWait)
    );
}

#[test]
fn time_wait_reacks_retransmitted_fin() {
    let mut p = fin_wait_2();
    p.b.close();
    let fin = drain(&mut p.b, p.now).pop().unwrap();
    p.a.on_segment(p.now, &fin, false);
    let _lost_ack = drain(&mut p.a, p.now);
    assert_eq!(p.a.state(), TcpState::TimeWait);
    p.a.on_segment(p.now + SimDuration::from_millis(300), &fin, false);
    let again = drain(&mut p.a, p.now + SimDuration::from_millis(300));
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].ack, fin.seq.wrapping_add(1));
}

// ---------------------------------------------------------------- CLOSED

#[test]
fn closed_answers_with_rst_and_peer_in_last_ack_closes_quietly() {
    // RFC 9293 §3.10.7.1 and §3.10.7.4 (RST in LAST-ACK: close, no reset reported).
    let mut p = fin_wait_2();
    p.b.close();
    let fin = drain(&mut p.b, p.now).pop().unwrap();
    p.a.on_segment(p.now, &fin, false);
    drain(&mut p.a, p.now); // ACK lost
    p.advance(SimDuration::from_secs(1));
    assert!(p.a.is_closed());
    p.a.on_segment(p.now, &fin, false);
    let rst = p.a.poll_transmit(p.now).unwrap();
    assert!(rst.flags.rst());
    assert_eq!(rst.seq, fin.ack);
    p.b.on_segment(p.now, &rst, false);
    assert!(p.b.is_closed() && !p.b.was_reset());
    let _ = TcpFlags::RST;
}

// ---------------------------------------------------------------- ECN (RFC 3168 §6.1, RFC 8257 §3.2)

fn ecn_cfg() -> TcpConfig {
    TcpConfig {
        ecn: true,
        delayed_ack: false,
        snd_buf: BufSize::Fixed(1 << 22),
        ..cfg()
    }
}

/// Delivers `segs` to `to`, CE-marked when `ce(i)`, and returns everything `to` sends back.
fn deliver(to: &mut TcpEndpoint, now: SimTime, segs: &[TcpSegment], ce: impl Fn(usize) -> bool) -> Vec<TcpSegment> {
    let mut out = vec![];
    for (i, s) in segs.iter().enumerate() {
        to.on_segment(now, s, ce(i));
        out.extend(drain(to, now));
    }
    out
}

#[test]
fn ecn_negotiated_when_both_ends_ask() {
    // RFC 3168 §6.1.1: ECN-setup SYN carries ECE and CWR, the SYN-ACK ECE only.
    let (mut a, mut b, synack) = syn_received(ecn_cfg(), ecn_cfg());
    let (_, syn) = syn_sent(ecn_cfg());
    assert!(syn.flags.ece() && syn.flags.cwr());
    assert!(synack.flags.ece() && !synack.flags.cwr());
    assert!(!syn.ect && !synack.ect, "SYNs are not ECT (§6.1.1)");
    a.on_segment(t(1), &synack, false);
    let ack = a.poll_transmit(t(1)).unwrap();
    b.on_segment(t(1), &ack, false);
    assert!(a.negotiated().ecn && b.negotiated().ecn);
    // new data is ECT(0); the receiver's pure ACKs are not (§6.1.4)
    a.write(3 * MSS);
    let data = drain(&mut a, t(1));
    assert_eq!(data.len(), 3);
    assert!(data.iter().all(|s| s.ect));
    let acks = deliver(&mut b, t(1), &data, |_| false);
    assert!(!acks.is_empty() && acks.iter().all(|s| !s.ect && !s.flags.ece()));
}

#[test]
fn ecn_not_used_when_one_side_is_off() {
    let off = TcpConfig { ecn: false, ..ecn_cfg() };
    // the passive side is off: its SYN-ACK carries no ECE
    let (mut a, b, synack) = syn_received(ecn_cfg(), off);
    assert!(!synack.flags.ece());
    a.on_segment(t(1), &synack, false);
    assert!(!a.negotiated().ecn && !b.negotiated().ecn);
    a.poll_transmit(t(1));
    a.write(MSS);
    assert!(drain(&mut a, t(1)).iter().all(|s| !s.ect));
    // the active side is off: no ECE/CWR on the SYN, the passive side does not answer with ECE
    let (a, syn) = syn_sent(off);
    assert!(!syn.flags.ece() && !syn.flags.cwr());
    let (_, b, synack) = syn_received(off, ecn_cfg());
    assert!(!synack.flags.ece() && !b.negotiated().ecn && !a.negotiated().ecn);
}

#[test]
fn ecn_receiver_echoes_ece_until_cwr_and_sender_cuts_once() {
    // RFC 3168 §6.1.3 (ECE from a CE until CWR) and §6.1.2 (one reduction, CWR on new data).
    let mut p = established(ecn_cfg());
    p.a.write(1 << 20);
    let w1 = drain(&mut p.a, p.now);
    assert_eq!(w1.len(), 10);
    let cwnd0 = p.a.sample(p.now).cwnd_bytes;
    // only the first segment is CE; every ACK after it carries ECE
    let acks = deliver(&mut p.b, p.now, &w1, |i| i == 0);
    assert_eq!(acks.len(), 10);
    assert!(acks.iter().all(|s| s.flags.ece()));
    assert_eq!(p.b.stats().ce_received, 1);
    let mut w2 = vec![];
    for (k, ack) in acks.iter().enumerate() {
        p.a.on_segment(p.now, ack, false);
        w2.extend(drain(&mut p.a, p.now));
        if k == 0 {
            // halved (NewReno: FlightSize / 2) without retransmitting anything
            assert_eq!(p.a.sample(p.now).cwnd_bytes, cwnd0 / 2);
        }
    }
    let st = p.a.stats();
    assert_eq!((st.ece_received, st.ecn_reductions), (10, 1), "one reduction per window");
    assert_eq!(st.retransmitted_segments, 0);
    assert_eq!(p.a.ca_state(), CaState::Open);
    // the first new data segment after the reduction carries CWR, later ones do not
    assert!(w2[0].flags.cwr() && w2[0].ect);
    assert!(w2[1..].iter().all(|s| !s.flags.cwr()));
    // the receiver stops echoing once it sees CWR
    let acks2 = deliver(&mut p.b, p.now, &w2, |_| false);
    assert!(acks2.iter().all(|s| !s.flags.ece()));
}

#[test]
fn ecn_second_reduction_only_in_the_next_window() {
    // §6.1.2: ECE for data sent before the reduction does not cut again; a CE in the next
    // window does.
    let mut p = established(ecn_cfg());
    p.a.write(1 << 20);
    let w1 = drain(&mut p.a, p.now);
    // every segment of the first window is CE
    let acks = deliver(&mut p.b, p.now, &w1, |_| true);
    let mut w2 = vec![];
    for ack in &acks {
        p.a.on_segment(p.now, ack, false);
        w2.extend(drain(&mut p.a, p.now));
    }
    assert_eq!(p.a.stats().ecn_reductions, 1);
    let cwnd1 = p.a.sample(p.now).cwnd_bytes;
    // the next window: its first segment is CE again
    let acks2 = deliver(&mut p.b, p.now, &w2, |i| i == 0);
    assert!(acks2[0].flags.ece());
    for ack in &acks2 {
        p.a.on_segment(p.now, ack, false);
        drain(&mut p.a, p.now);
    }
    assert_eq!(p.a.stats().ecn_reductions, 2);
    assert!(p.a.sample(p.now).cwnd_bytes < cwnd1);
}

#[test]
fn ecn_retransmissions_and_acks_are_not_ect() {
    // RFC 3168 §6.1.5: retransmitted data is sent Not-ECT.
    let mut p = established(TcpConfig { delayed_ack: true, ..ecn_cfg() });
    warm_up(&mut p);
    p.a.write(10 * MSS);
    let segs = drain(&mut p.a, p.now);
    assert!(segs.iter().all(|s| s.ect));
    // segment 0 lost; SACKs of 1..4 trigger the fast retransmit
    let dups = deliver(&mut p.b, p.now, &segs[1..4], |_| false);
    assert!(dups.iter().all(|s| !s.ect));
    let mut rtx = vec![];
    for d in &dups {
        p.a.on_segment(p.now, d, false);
        rtx.extend(drain(&mut p.a, p.now));
    }
    assert_eq!(p.a.stats().retransmitted_segments, 1);
    let r = rtx.iter().find(|s| s.seq == segs[0].seq).expect("fast retransmit");
    assert!(!r.ect);
}

#[test]
fn dctcp_receiver_echoes_ce_state_of_acknowledged_segments() {
    // RFC 8257 §3.2: ECE reflects the CE bit of the data acknowledged; a change of CE state
    // ACKs the data held so far (with the old state) and then the new segment at once.
    let c = TcpConfig {
        cc: CcKind::Dctcp.into(),
        delayed_ack: true,
        quickack_segments: 0,
        ..ecn_cfg()
    };
    // DCTCP turns ECN on by itself
    let c = TcpConfig { ecn: false, ..c };
    let mut p = established(c);
    assert!(p.a.negotiated().ecn && p.b.negotiated().ecn);
    p.a.write(1 << 20);
    let w = drain(&mut p.a, p.now);
    assert_eq!(w.len(), 10);
    // CE on segments 3 and 4 only
    let ce = |i: usize| (3..5).contains(&i);
    let mut got = vec![];
    for (i, s) in w.iter().enumerate().take(6) {
        p.b.on_segment(p.now, s, ce(i));
        for a in drain(&mut p.b, p.now) {
            // (arrival index, segments acknowledged, ECE)
            got.push((i, a.ack.wrapping_sub(w[0].seq) / MSS as u32, a.flags.ece()));
        }
    }
    assert_eq!(
        got,
        vec![
            (1, 2, false), // delayed ACK of 0-1
            (3, 3, false), // 3 is CE: first the held segment 2 with the old state...
            (3, 4, true),  // ...then 3 at once with ECE
            (5, 5, true),  // 5 is not CE: held 4 with ECE...
            (5, 6, false), // ...then 5 at once without
        ]
    );
}

// ---------------------------------------------------------------- RTO inside recovery (Linux `tcp_enter_loss`)

/// An established pair with controller `cc` and recovery `rec` whose sender has sent ten
/// segments and lost `lost` of them (indices); the others reached B, whose ACKs A has
/// processed (firing RACK's reordering timer if needed), and A's answer (the retransmissions)
/// is returned undelivered.
fn after_losses(
    cc: CcKind,
    rec: Recovery,
    lost: &[usize],
) -> (Pair, Vec<TcpSegment>, Vec<TcpSegment>) {
    let mut p = established(TcpConfig {
        cc: cc.into(),
        recovery: rec,
        ..cfg()
    });
    // warm up: an RTT sample and B's full window advertised
    warm_up(&mut p);
    p.a.write(10 * MSS);
    let segs = send_paced(&mut p, 10);
    assert_eq!(segs.len(), 10, "{cc}: initial window");
    p.advance(SimDuration::from_millis(3));
    let mut acks = vec![];
    for (i, s) in segs.iter().enumerate() {
        if !lost.contains(&i) {
            p.b.on_segment(p.now, s, false);
            acks.extend(drain(&mut p.b, p.now));
        }
    }
    let mut out = vec![];
    for a in &acks {
        p.a.on_segment(p.now, a, false);
        out.extend(drain(&mut p.a, p.now));
    }
    for _ in 0..10 {
        if p.a.ca_state() == CaState::Recovery {
            break;
        }
        p.now += SimDuration::from_millis(1);
        p.a.on_timeout(p.now);
        out.extend(drain(&mut p.a, p.now));
    }
    assert_eq!(
        p.a.ca_state(),
        CaState::Recovery,
        "{cc} {rec:?}: fast recovery"
    );
    (p, segs, out)
}

/// A's next `n` segments, moving its clock in 0.1 ms steps while pacing holds them.
fn send_paced(p: &mut Pair, n: usize) -> Vec<TcpSegment> {
    let mut segs = drain(&mut p.a, p.now);
    while segs.len() < n {
        p.now += SimDuration::from_micros(100);
        p.a.on_timeout(p.now);
        segs.extend(drain(&mut p.a, p.now));
    }
    segs
}

/// Moves A's clock in 10 ms steps, dropping all it sends, until its `n`-th timeout; returns
/// what A sent at that timeout.
fn until_timeout(p: &mut Pair, n: u64) -> Vec<TcpSegment> {
    for _ in 0..2_000 {
        p.now += SimDuration::from_millis(10);
        p.a.on_timeout(p.now);
        let sent = drain(&mut p.a, p.now);
        if p.a.stats().timeouts >= n {
            return sent;
        }
    }
    panic!("no timeout {n}");
}

#[test]
fn rto_inside_linux_fast_recovery_holds_ssthresh_for_every_controller() {
    // Linux tcp_enter_loss (net/ipv4/tcp_input.c): ssthresh is recomputed only when
    // `icsk_ca_state <= TCP_CA_Disorder`, or `!after(high_seq, snd_una)`, or in Loss with no
    // retransmission yet; an RTO during Recovery whose recovery point is not acknowledged keeps
    // the ssthresh recovery set (and its undo state) and only drops cwnd. One rule in the sender
    // for every controller. Regression: every controller recomputed ssthresh from the (tiny)
    // flight at the timeout, e.g. NewReno 2 MSS instead of recovery's half of ten segments.
    let mut changed_by_old_rule = 0;
    for cc in CcKind::ALL {
        let (mut p, _, _) = after_losses(cc, Recovery::Linux, &[0]);
        let in_recovery = p.a.cc.ssthresh();
        until_timeout(&mut p, 1);
        assert_eq!(p.a.ca_state(), CaState::Loss, "{cc}");
        assert_eq!(
            p.a.cc.ssthresh(),
            in_recovery,
            "{cc}: the RTO inside recovery holds ssthresh"
        );
        assert_eq!(
            p.a.cc.window(),
            MSS,
            "{cc}: cwnd is the loss window all the same"
        );
        assert_eq!(
            p.a.dsack_undo.map(|d| d.0),
            Some(p.a.undo_marker),
            "{cc}: recovery's undo state kept"
        );
        // a repeated RTO holds it too (Loss with `icsk_retransmits` > 0)
        until_timeout(&mut p, 2);
        assert_eq!(p.a.cc.ssthresh(), in_recovery, "{cc}: repeated RTO");
        // the RFC 5681 / ns-3 rule (`recovery = "rfc6675"`) recomputes on the first RTO
        let (mut q, _, _) = after_losses(cc, Recovery::Rfc6675, &[0]);
        let before = q.a.cc.ssthresh();
        until_timeout(&mut q, 1);
        changed_by_old_rule += (q.a.cc.ssthresh() != before) as u32;
        if matches!(cc, CcKind::NewReno | CcKind::Cubic) {
            assert_ne!(
                q.a.cc.ssthresh(),
                before,
                "{cc}: ns-3 ReTxTimeout recomputes in CA_RECOVERY"
            );
        }
    }
    assert!(
        changed_by_old_rule >= 10,
        "the old rule moved {changed_by_old_rule} controllers' ssthresh"
    );
}

#[test]
fn rto_in_open_recomputes_ssthresh_and_a_repeated_rto_holds_it() {
    // Linux tcp_enter_loss: in Open (`icsk_ca_state <= TCP_CA_Disorder`) the timeout calls the
    // controller's ssthresh(); a second timeout of the same data (Loss, `icsk_retransmits` 1)
    // keeps it. After SND.UNA advanced in Loss (`icsk_retransmits` back to 0) a timeout
    // recomputes again. BBR has no ssthresh.
    for cc in CcKind::ALL.into_iter().filter(|&k| k != CcKind::Bbr) {
        let mut p = established(TcpConfig {
            cc: cc.into(),
            ..cfg()
        });
        warm_up(&mut p);
        p.a.write(10 * MSS);
        let segs = send_paced(&mut p, 10);
        assert_eq!(p.a.cc.ssthresh(), u64::MAX, "{cc}: slow start");
        assert_eq!(p.a.rto_ssthresh(), RtoSsthresh::Reduce);
        until_timeout(&mut p, 1);
        let first = p.a.cc.ssthresh();
        assert!(
            first < u64::MAX,
            "{cc}: the RTO in Open recomputes ssthresh"
        );
        assert_eq!(
            p.a.rto_ssthresh(),
            RtoSsthresh::Hold,
            "{cc}: Loss, no progress"
        );
        let rtx = until_timeout(&mut p, 2);
        assert_eq!(p.a.cc.ssthresh(), first, "{cc}: the repeated RTO holds it");
        // its retransmission arrives: SND.UNA advances inside Loss, so the next timeout may
        // reduce
        assert_eq!(rtx[0].seq, segs[0].seq);
        p.b.on_segment(p.now, &rtx[0], false);
        for a in drain(&mut p.b, p.now) {
            p.a.on_segment(p.now, &a, false);
        }
        assert_eq!(p.a.ca_state(), CaState::Loss, "{cc}");
        assert_eq!(
            p.a.rto_ssthresh(),
            RtoSsthresh::Reduce,
            "{cc}: Loss after progress"
        );
    }
}

#[test]
fn eifel_reference_is_the_first_retransmission_not_a_later_timeout() {
    // Linux tcp_packet_delayed: an echo is "delayed" only when older than `retrans_stamp`, the
    // TSval of the episode's first retransmission (tcp_retransmit_skb, set when zero); an RTO
    // inside the recovery keeps it (tcp_enter_loss neither clears it nor re-inits the undo).
    // Two holes: the first retransmission repairs hole 1 (a partial ACK echoing it: no undo);
    // hole 2's retransmission, sent with it, is held in the network past an RTO and arrives
    // after it, echoing its own TSval. Linux: echo = retrans_stamp, not delayed, no undo -- the
    // loss was real. Regression: the held RTO took its own time as the reference and the echo,
    // older than that, undid the reduction as spurious.
    let (mut p, segs, out) = after_losses(CcKind::Cubic, Recovery::Linux, &[0, 5]);
    let ssthresh = p.a.cc.ssthresh();
    p.advance(SimDuration::from_millis(5));
    let mut out = out;
    out.extend(drain(&mut p.a, p.now));
    let h1 = *out
        .iter()
        .find(|s| s.seq == segs[0].seq)
        .expect("hole 1 resent");
    let h2 = *out
        .iter()
        .find(|s| s.seq == segs[5].seq)
        .expect("hole 2 resent");
    let first_rtx_ts = h1.options.timestamps.unwrap().0;
    // hole 1 repaired: a partial ACK echoing the first retransmission
    p.now += SimDuration::from_millis(5);
    p.b.on_segment(p.now, &h1, false);
    for a in drain(&mut p.b, p.now) {
        assert_eq!(a.options.timestamps.unwrap().1, first_rtx_ts);
        p.a.on_segment(p.now, &a, false);
    }
    assert_eq!(p.a.ca_state(), CaState::Recovery);
    assert_eq!(p.a.stats().spurious, 0);
    // the RTO inside recovery (hole 2's retransmission still on its way)
    until_timeout(&mut p, 1);
    assert_eq!(p.a.ca_state(), CaState::Loss);
    assert_eq!(
        p.a.retrans_stamp,
        Some(first_rtx_ts),
        "kept through the timeout"
    );
    // hole 2's first retransmission arrives at last: the loss was real
    p.now += SimDuration::from_millis(10);
    p.b.on_segment(p.now, &h2, false);
    let acks = drain(&mut p.b, p.now);
    assert!(acks
        .iter()
        .all(|a| a.options.timestamps.unwrap().1 >= first_rtx_ts));
    for a in &acks {
        p.a.on_segment(p.now, a, false);
    }
    assert_eq!(p.a.ca_state(), CaState::Open, "everything acknowledged");
    assert_eq!(p.a.stats().spurious, 0, "no Eifel undo of a real loss");
    assert_eq!(p.a.cc.ssthresh(), ssthresh, "the reduction stays");
}

#[test]
fn an_ack_before_the_paced_fast_retransmit_leaves_undoes_without_timestamps() {
    // Linux tcp_packet_delayed (6.16+: commit e37ab7373696 "tcp: fix to allow timestamp undo if
    // no retransmits were sent" and its fix for non-SACK connections): while `retrans_stamp`
    // is zero -- nothing of the episode retransmitted yet, here because pacing holds the fast
    // retransmit -- an ACK advancing SND.UNA shows the "lost" segment was merely delayed, and
    // tcp_try_undo_recovery undoes, timestamps or not. Regression: without timestamps there
    // was no such undo at all.
    let mut p = established(TcpConfig {
        cc: CcKind::Cubic.into(),
        pacing: true,
        timestamps: false,
        ..cfg()
    });
    // warm up over a path of about 100 ms: pacing then spaces segments milliseconds apart
    for _ in 0..8 {
        p.a.write(MSS);
        let s = drain(&mut p.a, p.now);
        p.now += SimDuration::from_millis(50);
        for x in &s {
            p.b.on_segment(p.now, x, false);
        }
        p.advance(SimDuration::from_millis(40));
        let acks = drain(&mut p.b, p.now);
        p.now += SimDuration::from_millis(50);
        for a in &acks {
            p.a.on_segment(p.now, a, false);
        }
    }
    assert!(p.a.rtt.srtt().unwrap() > SimDuration::from_millis(50));
    p.a.write(10 * MSS);
    let segs = send_paced(&mut p, 10);
    let before = p.a.cc.ssthresh();
    // segment 0 is late; the others arrive and are SACKed: RACK declares it lost
    p.now += SimDuration::from_micros(500);
    for s in &segs[1..] {
        p.b.on_segment(p.now, s, false);
        for a in drain(&mut p.b, p.now) {
            p.a.on_segment(p.now, &a, false);
        }
    }
    assert_eq!(p.a.ca_state(), CaState::Recovery);
    assert_ne!(p.a.cc.ssthresh(), before);
    assert!(
        drain(&mut p.a, p.now).is_empty(),
        "pacing holds the fast retransmit"
    );
    assert_eq!(p.a.retrans_stamp, None);
    // the original arrives before the retransmission left
    p.b.on_segment(p.now, &segs[0], false);
    for a in drain(&mut p.b, p.now) {
        p.a.on_segment(p.now, &a, false);
    }
    assert_eq!(p.a.ca_state(), CaState::Open);
    assert_eq!(
        p.a.stats().spurious,
        1,
        "undone: nothing had been retransmitted"
    );
    assert_eq!(p.a.cc.ssthresh(), before, "ssthresh restored");
    assert_eq!(p.a.stats().retransmitted_segments, 0);
}

#[test]
fn rto_in_ecn_cwr_holds_the_ecn_reduction() {
    // Linux tcp_enter_loss: CWR (> TCP_CA_Disorder) with `high_seq` not yet acknowledged keeps
    // the ssthresh ECN set (tcp_enter_cwr -> tcp_init_cwnd_reduction); CWR ends only when an
    // ACK passes `high_seq` (tcp_fastretrans_alert). Regression: recomputed from the flight.
    let mut p = established(ecn_cfg());
    p.a.write(1 << 20);
    let w1 = drain(&mut p.a, p.now);
    assert_eq!(w1.len(), 10);
    let acks = deliver(&mut p.b, p.now, &w1[..1], |_| true);
    for a in &acks {
        p.a.on_segment(p.now, a, false);
    }
    drain(&mut p.a, p.now);
    assert_eq!(p.a.stats().ecn_reductions, 1);
    let ecn_ssthresh = p.a.cc.ssthresh();
    assert_eq!(p.a.rto_ssthresh(), RtoSsthresh::Hold);
    until_timeout(&mut p, 1);
    assert_eq!(p.a.cc.ssthresh(), ecn_ssthresh);
    assert_eq!(p.a.cc.window(), MSS);
}
