//! The split-TCP proxy app (`celltcp-apps/src/proxy.rs`) between a client and a server: byte
//! conservation under loss on either leg, the buffer limit, and backpressure.

use celltcp_apps::app::{AnyApp, SockAddr};
use celltcp_apps::bulk::{BulkSender, Role, Sink, TcpClient, TcpServer};
use celltcp_apps::proxy::{ProxyConfig, SplitProxy};
use celltcp_engine::{SimDuration, SimTime};
use celltcp_scenario::{AppId, RunOptions, Simulation};
use celltcp_tcp::cc::CcKind;
use celltcp_tcp::{BufSize, TcpConfig};

/// client — px — srv; the client leg and the server leg have their own rate, delay and loss.
fn topo(client_leg: &str, server_leg: &str) -> String {
    format!(
        r#"
duration = "60s"
[[node]]
name = "px"
kind = "router"
[[link]]
between = ["client", "px"]
{client_leg}
[[link]]
between = ["px", "srv"]
{server_leg}
"#
    )
}

struct Setup {
    sim: Simulation,
    proxy: AppId,
    client: AppId,
    server: AppId,
}

/// A download of `bytes` from the server to the client through the proxy.
fn setup(text: &str, bytes: u64, buffer: u64, per_conn: u64) -> Setup {
    let mut sim = Simulation::from_text(text, &[], &RunOptions { seed: Some(9), ..Default::default() }).unwrap();
    let (cl, px, srv) = (sim.node("client").unwrap(), sim.node("px").unwrap(), sim.node("srv").unwrap());
    let radio = TcpConfig { cc: CcKind::NewReno.into(), ..TcpConfig::default() };
    let core = TcpConfig { cc: CcKind::Cubic.into(), ..TcpConfig::default() };
    let server = sim.add_app(srv, AnyApp::TcpServer(TcpServer::new(80, core, Role::Writer(BulkSender::new(Some(bytes), None, 64 * 1024)))), SimTime::ZERO);
    let cfg = ProxyConfig {
        port: 8080,
        upstream: SockAddr::new(sim.node_addr(srv), 80),
        cfg_client: radio,
        cfg_server: core,
        buffer,
        per_connection_buffer: per_conn,
        sample_every: SimDuration::from_millis(10),
    };
    let proxy = sim.add_app(px, AnyApp::Proxy(SplitProxy::new(cfg)), SimTime::ZERO);
    let client = sim.add_app(cl, AnyApp::TcpClient(TcpClient::new(SockAddr::new(sim.node_addr(px), 8080), radio, Role::Sink(Sink::expecting(Some(bytes))))), SimTime::from_millis(10));
    Setup { sim, proxy, client, server }
}

fn proxy(s: &Simulation, a: AppId) -> &SplitProxy {
    match s.app(a) {
        AnyApp::Proxy(p) => p,
        other => panic!("{other:?}"),
    }
}

fn received(s: &Simulation, a: AppId) -> u64 {
    match s.app(a) {
        AnyApp::TcpClient(c) => match &c.role {
            Role::Sink(k) => k.received(),
            Role::Writer(_) => panic!(),
        },
        _ => panic!(),
    }
}

#[test]
fn proxy_conserves_bytes_under_loss_on_either_leg() {
    let bytes = 3_000_000;
    for (client_leg, server_leg, lossy) in [
        ("rate = \"10Mbps\"\ndelay = \"20ms\"\nloss = 0.01", "rate = \"100Mbps\"\ndelay = \"10ms\"", "client"),
        ("rate = \"10Mbps\"\ndelay = \"20ms\"", "rate = \"100Mbps\"\ndelay = \"10ms\"\nloss = 0.01", "server"),
    ] {
        let mut s = setup(&topo(client_leg, server_leg), bytes, 1 << 20, 512 * 1024);
        assert!(s.sim.run(&mut |_| true));
        let p = proxy(&s.sim, s.proxy);
        assert_eq!(p.conns.len(), 1);
        let c = p.conns[0];
        assert_eq!(received(&s.sim, s.client), bytes, "{lossy} leg lossy: every byte arrives");
        assert_eq!((c.read_server, c.written_client), (bytes, bytes), "{lossy}: read from the server leg = written to the client leg");
        assert_eq!((c.queued_down, c.queued_up, c.read_client), (0, 0, 0));
        // the loss was recovered on the lossy leg only: the other leg never retransmitted
        let rtx = |sock| s.sim.tcp(sock).unwrap().stats().retransmitted_segments;
        // the senders: the proxy on the client leg, the server on the server leg
        let AnyApp::TcpServer(srv) = s.sim.app(s.server) else { panic!() };
        let (down, up) = (rtx(c.client), rtx(srv.conns[0].0));
        // the loss happened (and was repaired) where configured: the lossy leg's sender
        // retransmitted (the clean leg may retransmit too, after drops in its own queue)
        let lossy_rtx = if lossy == "client" { down } else { up };
        assert!(lossy_rtx >= 10, "{lossy} leg lossy: client-leg retransmissions {down}, server-leg {up}");
        assert!(c.client_closed(), "the server's FIN was passed on to the client");
    }
}

#[test]
fn proxy_never_holds_more_than_its_buffer_and_a_slow_radio_leg_closes_the_server_window() {
    // a 2 Mbit/s client leg behind a 100 Mbit/s server leg: the proxy fills its 64 KB and then
    // stops reading, so the server's receive-window view of the proxy drops to zero
    let limit = 64 * 1024;
    let mut s = setup(&topo("rate = \"2Mbps\"\ndelay = \"30ms\"\nqueue = \"1000p\"", "rate = \"100Mbps\"\ndelay = \"5ms\""), 2_000_000, limit, limit);
    let mut min_wnd = u64::MAX;
    let mut t = SimTime::ZERO;
    let mut server_ahead_max = 0u64;
    while t < SimTime::from_secs(12) {
        t += SimDuration::from_millis(5);
        s.sim.step_until(t);
        let p = proxy(&s.sim, s.proxy);
        assert!(p.held <= limit, "the proxy holds {} > {limit}", p.held);
        if let Some(c) = p.conns.first() {
            let up = s.sim.tcp(c.server).unwrap();
            if up.is_established() && c.read_server > 100_000 {
                // the server's sender sees the proxy's advertised window
                let AnyApp::TcpServer(srv) = s.sim.app(s.server) else { panic!() };
                let ss = s.sim.tcp(srv.conns[0].0).unwrap();
                min_wnd = min_wnd.min(ss.snd_wnd());
                // what the server has sent beyond what the client has read is bounded by the
                // proxy's buffer and its receive window, not by the transfer size
                let ahead = ss.stats().bytes_sent.saturating_sub(received(&s.sim, s.client));
                server_ahead_max = server_ahead_max.max(ahead);
            }
        }
    }
    let p = proxy(&s.sim, s.proxy);
    // it fills but for the 8 KB of window the upstream direction keeps (min(64 KB, limit / 8))
    assert!(p.peak_held <= limit && p.peak_held > limit * 3 / 4, "the buffer fills to its limit: peak {}", p.peak_held);
    // closed: less than one segment left, so the server may not send (sender SWS avoidance,
    // RFC 9293 §3.8.6.2.1) until the proxy reads
    assert!(min_wnd < 1448, "the server's window closed: its smallest was {min_wnd} bytes");
    assert!(server_ahead_max < 1_000_000, "the server ran {server_ahead_max} bytes ahead of the client");
    assert!(!p.occupancy.is_empty());
}

/// A 35-segment download (3 slow-start rounds from an initial window of 10) at 1 Gbit/s on both
/// legs (one-way delays `d1_ms` client leg, `d2_ms` server leg), without and with the proxy;
/// returns the completion times (s) from the client's start.
fn short_transfer(d1_ms: u64, d2_ms: u64) -> (f64, f64) {
    let bytes = 35 * 1448;
    let text = topo(&format!("rate = \"1Gbps\"\ndelay = \"{d1_ms}ms\""), &format!("rate = \"1Gbps\"\ndelay = \"{d2_ms}ms\""));
    let fixed = |cc: CcKind| TcpConfig { cc: cc.into(), snd_buf: BufSize::Fixed(1 << 20), rcv_buf: BufSize::Fixed(1 << 20), ..TcpConfig::default() };
    let mut times = Vec::new();
    for proxied in [false, true] {
        let mut sim = Simulation::from_text(&text, &[], &RunOptions { seed: Some(1), ..Default::default() }).unwrap();
        let (cl, px, srv) = (sim.node("client").unwrap(), sim.node("px").unwrap(), sim.node("srv").unwrap());
        sim.add_app(srv, AnyApp::TcpServer(TcpServer::new(80, fixed(CcKind::Cubic), Role::Writer(BulkSender::new(Some(bytes), None, 64 * 1024)))), SimTime::ZERO);
        let to = if proxied {
            let cfg = ProxyConfig {
                port: 8080,
                upstream: SockAddr::new(sim.node_addr(srv), 80),
                cfg_client: fixed(CcKind::Cubic),
                cfg_server: fixed(CcKind::Cubic),
                buffer: 1 << 22,
                per_connection_buffer: 1 << 21,
                sample_every: SimDuration::from_millis(10),
            };
            sim.add_app(px, AnyApp::Proxy(SplitProxy::new(cfg)), SimTime::ZERO);
            SockAddr::new(sim.node_addr(px), 8080)
        } else {
            SockAddr::new(sim.node_addr(srv), 80)
        };
        let start = SimTime::from_millis(10);
        let c = sim.add_app(cl, AnyApp::TcpClient(TcpClient::new(to, fixed(CcKind::Cubic), Role::Sink(Sink::expecting(Some(bytes))))), start);
        assert!(sim.run(&mut |_| true));
        let AnyApp::TcpClient(tc) = sim.app(c) else { panic!() };
        let Role::Sink(k) = &tc.role else { panic!() };
        times.push((k.completed_at.expect("completed") - start).as_secs_f64());
    }
    (times[0], times[1])
}

#[test]
fn proxy_short_transfer_gain_matches_the_slow_start_closed_form() {
    // k = 3 slow-start rounds. End to end (RTT R = r1 + r2): the server writes when the
    // handshake's ACK arrives (1.5 R), the first flight reaches the client at 2 R, the last at
    // (k + 1) R. Split: the server leg delivers round j at the proxy at a_j = r1/2 + (j + 1) r2;
    // the client leg's round i leaves the proxy at b_i = max(b_{i-1} + r1, a_i), with
    // b_1 = max(1.5 r1, a_1) (its handshake completes at the proxy at 1.5 r1), and arrives r1/2
    // later: T = b_k + r1/2. With a short server leg this is the issue's "(k + 1) rounds of the
    // radio leg's RTT"; with a long one the server leg paces the client leg.
    let k = 3;
    let r1 = 0.040;
    // the Internet (server-leg) one-way delays of the paper's Figs. 4-6
    for d2_ms in [50u64, 75, 125] {
        let r2 = 2.0 * d2_ms as f64 / 1000.0;
        let direct_want = (k as f64 + 1.0) * (r1 + r2);
        let a = |j: usize| r1 / 2.0 + (j as f64 + 1.0) * r2;
        let mut b = (1.5 * r1).max(a(1));
        for i in 2..=k {
            b = (b + r1).max(a(i));
        }
        let split_want = b + r1 / 2.0;
        let (direct, split) = short_transfer(20, d2_ms);
        assert!((direct - direct_want).abs() < 0.003, "d2 {d2_ms} ms: direct {direct:.4} s vs closed form {direct_want:.4} s");
        assert!((split - split_want).abs() < 0.003, "d2 {d2_ms} ms: split {split:.4} s vs closed form {split_want:.4} s");
        assert!(split < direct);
    }
}
