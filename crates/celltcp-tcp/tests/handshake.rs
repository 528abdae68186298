//! Connection establishment and release over the test wire (RFC 9293 §3.5, §3.6; option
//! negotiation per RFC 7323 §2-§3 and RFC 2018 §2).

mod common;

use celltcp_engine::SimTime;
use celltcp_tcp::{BufSize, TcpConfig, TcpState};
use common::*;

fn wire(a: TcpConfig, b: TcpConfig) -> Wire {
    Wire::new(a, b, 1_000, 2_000_000, ms(10))
}

#[test]
fn handshake_negotiates_all_options() {
    // RFC 7323 §2.2/§3.2, RFC 2018 §2: options offered by both sides are used.
    let mut w = wire(TcpConfig::default(), TcpConfig::default());
    w.close_after_write = false;
    w.run_until(at_ms(100), |_| false);
    assert_eq!(w.a.state(), TcpState::Established);
    assert_eq!(w.b().state(), TcpState::Established);
    let syn = w.log[0].seg;
    assert!(syn.flags.syn() && !syn.flags.ack());
    assert_eq!(syn.options.mss, Some(1460));
    assert_eq!(syn.options.wscale, Some(7));
    assert!(syn.options.sack_permitted);
    assert!(syn.options.timestamps.is_some());
    assert_eq!(syn.header_len(), 40, "Linux SYN: 20 + 20 bytes of options");
    for ep in [&w.a, w.b()] {
        let n = ep.negotiated();
        assert!(n.sack && n.timestamps && n.window_scaling);
        assert_eq!(n.mss, 1448);
        assert_eq!((n.rcv_wscale, n.snd_wscale), (7, 7));
    }
    // handshake RTT sample: 2 x 10 ms
    assert_eq!(w.a.sample(w.now).srtt, ms(20));
}

#[test]
fn handshake_falls_back_without_sack_and_timestamps() {
    // RFC 2018 §2 / RFC 7323 §3.2: not offered by the peer -> not used; MSS without timestamp room.
    let b = TcpConfig {
        sack: false,
        timestamps: false,
        window_scaling: false,
        ..Default::default()
    };
    let mut w = wire(TcpConfig::default(), b);
    w.close_after_write = false;
    w.run_until(at_ms(100), |_| false);
    let synack = w.log.iter().find(|s| s.from == Side::B).unwrap().seg;
    assert!(synack.flags.syn() && synack.flags.ack());
    assert!(
        !synack.options.sack_permitted
            && synack.options.timestamps.is_none()
            && synack.options.wscale.is_none()
    );
    for ep in [&w.a, w.b()] {
        let n = ep.negotiated();
        assert!(!n.sack && !n.timestamps && !n.window_scaling);
        assert_eq!((n.rcv_wscale, n.snd_wscale), (0, 0));
        assert_eq!(n.mss, 1448);
    }
    // the data segments then carry no timestamp option
    w.to_write = 10_000;
    w.run_until(at_ms(300), |_| false);
    assert!(w
        .log
        .iter()
        .filter(|s| s.from == Side::A && !s.seg.flags.syn())
        .all(|s| s.seg.options.timestamps.is_none()));
}

#[test]
fn handshake_syn_window_unscaled_then_scaled() {
    // RFC 7323 §2.2: the SYN window is never scaled; later windows are shifted.
    let cfg = TcpConfig {
        rcv_buf: BufSize::Fixed(1 << 20),
        ..Default::default()
    };
    let mut w = wire(cfg, cfg);
    w.close_after_write = false;
    w.to_write = 1_000;
    w.run_until(at_ms(100), |_| false);
    let synack = w.log.iter().find(|s| s.from == Side::B).unwrap().seg;
    assert_eq!(synack.window, 65_535);
    assert_eq!(w.b().negotiated().rcv_wscale, 5); // 1 MiB >> 5 = 32768
    // Linux: the window after the handshake is rcv_ssthresh, which starts at the SYN's 65,535
    // and grows per data segment (tcp_grow_window: + max(2 advmss, 2 len) = 2896 for the 1000
    // bytes): 68,431, a window only a scaled field can carry, rounded up to 32 bytes.
    assert_eq!(
        w.a.snd_wnd(),
        68_448,
        "the ACKed window is scaled, at most rcv_ssthresh"
    );
    // Without Linux's quick ACKs and window ramp: the full buffer at once.
    let cfg = TcpConfig {
        quickack_segments: 0,
        ..cfg
    };
    let mut w = wire(cfg, cfg);
    w.close_after_write = false;
    w.to_write = 1_000;
    w.run_until(at_ms(100), |_| false);
    assert_eq!(
        w.a.snd_wnd(),
        1 << 20,
        "the ACKed window is scaled to the full buffer"
    );
}

#[test]
fn handshake_syn_retransmitted_with_backoff() {
    // RFC 6298 §2.1 (1 s initial RTO) and §5.5 (doubling).
    let mut w = wire(TcpConfig::default(), TcpConfig::default());
    w.fate = Box::new(|s, _| {
        if s.seg.flags.syn() && !s.seg.flags.ack() && s.time < at_ms(2_500) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    w.close_after_write = false;
    w.run_until(at_ms(5_000), |_| false);
    let syns: Vec<SimTime> = w
        .log
        .iter()
        .filter(|s| s.from == Side::A && s.seg.flags.syn())
        .map(|s| s.time)
        .collect();
    assert_eq!(syns, vec![at_ms(0), at_ms(1_000), at_ms(3_000)]);
    assert_eq!(w.a.state(), TcpState::Established);
    assert_eq!(w.a.stats().syn_retransmits, 2);
}

#[test]
fn close_both_ways_reaches_closed() {
    // RFC 9293 §3.6: FIN, ACK of FIN both ways; the active closer passes TIME-WAIT.
    let mut w = wire(TcpConfig::default(), TcpConfig::default());
    w.to_write = 50_000;
    w.run_until(at_ms(500), |w| w.b.as_ref().is_some_and(|b| b.is_closed()));
    assert!(w.b().is_closed(), "B went CLOSE-WAIT -> LAST-ACK -> CLOSED");
    assert_eq!(w.a.state(), TcpState::TimeWait);
    assert_eq!(w.read_by_b, 50_000);
    w.run_until(at_ms(5_000), |_| false);
    assert!(w.both_closed());
    assert!(!w.a.was_reset());
}

#[test]
fn rst_closes_at_once() {
    let mut w = wire(TcpConfig::default(), TcpConfig::default());
    w.close_after_write = false;
    w.run_until(at_ms(100), |_| false);
    let mut rst = w.log.iter().rev().find(|s| s.from == Side::B).unwrap().seg;
    rst.flags.0 = celltcp_net::packet::TcpFlags::RST;
    rst.seq = rst.seq.wrapping_add(1); // the SYN-ACK's sequence number plus its SYN
    let now = w.now;
    w.a.on_segment(now, &rst, false);
    assert!(w.a.is_closed() && w.a.was_reset());
}
