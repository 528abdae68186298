//! The transparent split-TCP proxy of the node stack (`[[proxy]]`, `tproxy.rs`): interception at
//! the PGW, an eNB and both; byte conservation under loss and across a handover; the buffer
//! limit and backpressure; the short-transfer closed form; the `after-server` SYN mode.

use celltcp_scenario::{RunOptions, Simulation};
use serde_json::Value;

fn sim(text: &str, seed: u64) -> Simulation {
    Simulation::from_text(text, &[], &RunOptions { seed: Some(seed), ..Default::default() }).unwrap_or_else(|e| panic!("{e}"))
}

fn run(text: &str, seed: u64) -> (Simulation, Value) {
    let mut s = sim(text, seed);
    assert!(s.run(&mut |_| true));
    s.finish();
    let v = s.summary();
    (s, v)
}

#[test]
fn the_example_runs_and_every_download_crosses_the_pgw_proxy() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/proxy.toml")).unwrap();
    let (s, v) = run(&text, 1);
    let p = s.proxy("pgw").expect("a proxy at the PGW");
    assert_eq!(p.conns.len(), 4, "{:#}", v["proxies"]);
    let delivered: u64 = v["flows"].as_array().unwrap().iter().map(|f| f["bytes_delivered"].as_u64().unwrap()).sum();
    let (mut read, mut written) = (0, 0);
    for c in &p.conns {
        assert_eq!(c.read_client, 0, "a download: the UE sends nothing");
        assert!(c.client_closed() && c.server_closed());
        read += c.read_server;
        written += c.written_client;
    }
    // iperf counts the bytes read by the end of its 8 s; the proxy passed on everything, also
    // what the servers had sent by then and the UEs read later
    assert!(delivered > 4_000_000 && written >= delivered, "{delivered} {written}");
    assert_eq!(read, written, "every byte read from the server legs was written into the UE legs");
    let legs = v["proxies"][0]["legs"].as_array().unwrap();
    assert_eq!(legs.len(), 4);
    for l in legs {
        assert_eq!(l["client_leg"]["cc"], "newreno");
        assert_eq!(l["server_leg"]["cc"], "cubic");
        // the server leg's RTT is the Internet's (2 x 75 ms), not the radio's
        let srtt = l["server_leg"]["srtt_ms"].as_f64().unwrap();
        assert!((150.0..155.0).contains(&srtt), "{l:#}");
    }
}

use celltcp_apps::app::{AnyApp, SockAddr};
use celltcp_apps::bulk::{BulkSender, Role, Sink, TcpClient, TcpServer};
use celltcp_apps::proxy::SplitProxy;
use celltcp_engine::{SimDuration, SimTime};
use celltcp_scenario::AppId;
use celltcp_tcp::{BufSize, TcpConfig};

/// client — px — srv on wires, `px` a router with the given `[[proxy]]` keys.
fn wired(client_leg: &str, server_leg: &str, proxy: &str) -> String {
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
[[proxy]]
node = "px"
{proxy}
"#
    )
}

/// A download of `bytes` that `client` starts at `start` from a server on `server`, port 80
/// (the apps added from Rust; the connection crosses the proxies of the scenario).
struct Download {
    client: AppId,
    server: AppId,
    start: SimTime,
}

fn download(s: &mut Simulation, client: &str, server: &str, bytes: u64, start: SimTime, cfg: TcpConfig) -> Download {
    download_on(s, client, server, 80, bytes, start, cfg)
}

fn download_on(s: &mut Simulation, client: &str, server: &str, port: u16, bytes: u64, start: SimTime, cfg: TcpConfig) -> Download {
    let (cl, srv) = (s.node(client).unwrap(), s.node(server).unwrap());
    let to = SockAddr::new(s.node_addr(srv), port);
    let server = s.add_app(srv, AnyApp::TcpServer(TcpServer::new(port, cfg, Role::Writer(BulkSender::new(Some(bytes), None, 64 * 1024)))), SimTime::ZERO);
    let client = s.add_app(cl, AnyApp::TcpClient(TcpClient::new(to, cfg, Role::Sink(Sink::expecting(Some(bytes))))), start);
    Download { client, server, start }
}

fn sink(s: &Simulation, d: &Download) -> (u64, Option<SimTime>) {
    let AnyApp::TcpClient(c) = s.app(d.client) else { panic!() };
    let Role::Sink(k) = &c.role else { panic!() };
    (k.received(), k.completed_at)
}

fn client_sock<'a>(s: &'a Simulation, d: &Download) -> Option<&'a celltcp_tcp::TcpEndpoint> {
    let AnyApp::TcpClient(c) = s.app(d.client) else { panic!() };
    c.sock.and_then(|k| s.tcp(k))
}

fn server_sock<'a>(s: &'a Simulation, d: &Download) -> Option<&'a celltcp_tcp::TcpEndpoint> {
    let AnyApp::TcpServer(c) = s.app(d.server) else { panic!() };
    c.conns.first().and_then(|k| s.tcp(k.0))
}

/// Every byte the proxy read from one leg was written into the other, nothing is left queued,
/// and both legs are closed.
fn conserved(p: &SplitProxy, bytes: u64) {
    assert_eq!(p.conns.len(), 1, "one intercepted connection");
    let c = p.conns[0];
    assert_eq!((c.read_server, c.written_client, c.read_client, c.written_server), (bytes, bytes, 0, 0));
    assert_eq!((c.queued_up, c.queued_down), (0, 0));
    assert!(c.client_closed() && c.server_closed(), "the FINs were passed on");
}

#[test]
fn bytes_are_conserved_through_the_transparent_proxy_with_loss_on_either_leg() {
    let bytes = 3_000_000;
    for (client_leg, server_leg, lossy) in [
        ("rate = \"10Mbps\"\ndelay = \"20ms\"\nloss = 0.01", "rate = \"100Mbps\"\ndelay = \"10ms\"", "client"),
        ("rate = \"10Mbps\"\ndelay = \"20ms\"", "rate = \"100Mbps\"\ndelay = \"10ms\"\nloss = 0.01", "server"),
    ] {
        let mut s = sim(&wired(client_leg, server_leg, "client_cc = \"newreno\""), 9);
        let d = download(&mut s, "client", "srv", bytes, SimTime::from_millis(10), TcpConfig::default());
        assert!(s.run(&mut |_| true));
        assert_eq!(sink(&s, &d).0, bytes, "{lossy} leg lossy: every byte arrives");
        let p = s.proxy("px").unwrap();
        conserved(p, bytes);
        // transparent: the client's socket talks to the server's address, the server's to the client's
        let (cl, srv) = (s.node_addr(s.node("client").unwrap()), s.node_addr(s.node("srv").unwrap()));
        assert_eq!((p.conns[0].peer.addr, p.conns[0].orig), (cl, SockAddr::new(srv, 80)));
        // the loss was repaired by the lossy leg's sender: the proxy on the client leg, the server on the server leg
        let (down, up) = (s.tcp(p.conns[0].client).unwrap().stats().retransmitted_segments, server_sock(&s, &d).unwrap().stats().retransmitted_segments);
        let lossy_rtx = if lossy == "client" { down } else { up };
        assert!(lossy_rtx >= 10, "{lossy} leg lossy: client-leg retransmissions {down}, server-leg {up}");
        // the legs' own congestion controls
        assert_eq!(s.tcp(p.conns[0].client).unwrap().controller().kind().name(), "newreno");
        assert_eq!(s.tcp(p.conns[0].server).unwrap().controller().kind().name(), "cubic");
    }
}

#[test]
fn the_proxy_never_holds_more_than_its_buffer_and_a_slow_client_leg_closes_the_server_window() {
    // a 2 Mbit/s client leg behind a 100 Mbit/s server leg: the proxy fills its 64 KB, then
    // stops reading, so the server's view of the proxy's receive window closes
    let limit = 64 * 1024;
    let text = wired("rate = \"2Mbps\"\ndelay = \"30ms\"\nqueue = \"1000p\"", "rate = \"100Mbps\"\ndelay = \"5ms\"", "buffer = \"64KB\"\nper_connection_buffer = \"64KB\"");
    let mut s = sim(&text, 3);
    let d = download(&mut s, "client", "srv", 2_000_000, SimTime::from_millis(10), TcpConfig::default());
    let (mut min_wnd, mut ahead_max, mut t) = (u64::MAX, 0u64, SimTime::ZERO);
    while t < SimTime::from_secs(12) {
        t += SimDuration::from_millis(5);
        s.step_until(t);
        let p = s.proxy("px").unwrap();
        assert!(p.held <= limit, "the proxy holds {} > {limit}", p.held);
        if p.conns.first().is_some_and(|c| c.read_server > 100_000) {
            let ss = server_sock(&s, &d).unwrap();
            min_wnd = min_wnd.min(ss.snd_wnd());
            // what the server sent beyond what the client read is bounded by the proxy's
            // buffer and windows, not by the transfer size
            ahead_max = ahead_max.max(ss.stats().bytes_sent.saturating_sub(sink(&s, &d).0));
        }
    }
    let p = s.proxy("px").unwrap();
    assert!(p.peak_held <= limit && p.peak_held > limit * 9 / 10, "the buffer fills to its limit: peak {}", p.peak_held);
    assert!(min_wnd < 1448, "the server's window closed: its smallest was {min_wnd} bytes");
    assert!(ahead_max < 1_000_000, "the server ran {ahead_max} bytes ahead of the client (of 2 MB)");
    // the occupancy series (the `proxy` table) stays within the limit too
    s.finish();
    let v = s.summary();
    assert!(v["proxies"][0]["peak_held_bytes"].as_u64().unwrap() <= limit);
}

/// When the client's socket became established (stepping 0.1 ms), from its start.
fn handshake_time(s: &mut Simulation, d: &Download, until: SimTime) -> Option<f64> {
    let mut t = SimTime::ZERO;
    while t < until {
        t += SimDuration::from_micros(100);
        s.step_until(t);
        if client_sock(s, d).is_some_and(|e| e.is_established()) {
            return Some((t - d.start).as_secs_f64());
        }
    }
    None
}

#[test]
fn after_server_answers_the_client_one_server_rtt_later_and_refuses_when_the_server_does_not_answer() {
    // r1 = 40 ms (client leg), r2 = 100 ms (server leg). `immediate`: the client's handshake
    // takes r1; `after-server`: the proxy holds the SYN until the server's SYN-ACK, which is
    // back at the proxy r1/2 + r2 after the client's start, so the client's SYN-ACK arrives at
    // r1 + r2. Both deliver every byte, and the transfer ends at the same time (the server leg
    // is the longer one either way: data reaches the client at r1 + 2 r2 + rounds).
    let legs = ("rate = \"100Mbps\"\ndelay = \"20ms\"", "rate = \"100Mbps\"\ndelay = \"50ms\"");
    let mut done = Vec::new();
    for (syn, want) in [("immediate", 0.040), ("after-server", 0.140)] {
        let mut s = sim(&wired(legs.0, legs.1, &format!("syn = \"{syn}\"")), 1);
        let d = download(&mut s, "client", "srv", 100_000, SimTime::from_millis(10), TcpConfig::default());
        let hs = handshake_time(&mut s, &d, SimTime::from_secs(1)).expect("connected");
        assert!((hs - want).abs() < 0.0005, "{syn}: handshake {hs:.4} s, expected {want} s");
        assert!(s.run(&mut |_| true));
        let (got, at) = sink(&s, &d);
        assert_eq!(got, 100_000, "{syn}");
        conserved(s.proxy("px").unwrap(), 100_000);
        done.push((at.unwrap() - d.start).as_secs_f64());
    }
    assert!((done[0] - done[1]).abs() < 0.002, "completion: immediate {:.4} s, after-server {:.4} s", done[0], done[1]);

    // no server on the port: the server leg's SYN retries run out (Linux tcp_syn_retries = 6:
    // 1 + 2 + ... + 64 = 127 s) and the held SYN is refused with a RST; the client (9 retries
    // here, so it outlasts the proxy) sees the reset. `immediate` would have answered at once.
    let text = wired(legs.0, legs.1, "syn = \"after-server\"").replace("duration = \"60s\"", "duration = \"200s\"");
    let mut s = sim(&text, 1);
    let (cl, srv) = (s.node("client").unwrap(), s.node("srv").unwrap());
    let cfg = TcpConfig { syn_retries: 9, ..TcpConfig::default() };
    let c = s.add_app(cl, AnyApp::TcpClient(TcpClient::new(SockAddr::new(s.node_addr(srv), 81), cfg, Role::Sink(Sink::expecting(Some(1))))), SimTime::ZERO);
    assert!(s.run(&mut |_| true));
    let AnyApp::TcpClient(tc) = s.app(c) else { panic!() };
    let ep = s.tcp(tc.sock.unwrap()).unwrap();
    assert!(ep.was_reset() && !ep.is_established(), "the client was refused with a RST");
    let p = s.proxy("px").unwrap();
    assert!(p.conns[0].refused && p.conns[0].client_pending());
    assert_eq!(ep.stats().syn_retransmits, 7, "refused after the proxy's 7th SYN had timed out (127 s; the client's SYNs at 1, 3, ... 127 s)");
}

/// One LTE cell (20 MHz, one UE 100 m from the eNB) behind the PGW, the server `d2_ms` beyond
/// it, with the given `[[proxy]]` tables.
fn lte(d2_ms: u64, proxies: &str, extra: &str) -> String {
    format!(
        r#"
duration = "30s"
[lte]
bandwidth = "20MHz"
{extra}
[lte.rlc]
mode = "am"
[[lte.enb]]
name = "enb"
position = [0.0, 0.0]
[[lte.ue]]
name = "ue"
position = [100.0, 0.0]
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "{d2_ms}ms"
{proxies}
"#
    )
}

#[test]
fn short_transfers_over_lte_follow_the_slow_start_closed_form_with_the_pgw_proxy() {
    // A 35-segment download (k = 3 slow-start rounds from an initial window of 10; MSS 1400 so
    // that GTP-U does not fragment). Without the proxy each round is an end-to-end RTT
    // R = r1 + r2 and the server writes after the handshake: T = (k + 1) R (tests/proxy.rs).
    // With it (immediate SYN), the server leg delivers round j at the proxy at a_j = u1 + (j +
    // 1) r2 (u1 the UE -> PGW one-way time) and the radio leg forwards it at once when r2 > r1:
    // T = r1 + (k + 1) r2, a gain of k radio-leg RTTs. r1 (the radio leg's RTT: scheduling,
    // HARQ, S1-U) is the proxy's client-leg smallest RTT sample; r2 = 2 d2.
    let k = 3.0;
    let bytes = 35 * 1400;
    let cfg = TcpConfig { mss: 1400, snd_buf: BufSize::Fixed(1 << 20), rcv_buf: BufSize::Fixed(1 << 20), ..TcpConfig::default() };
    for d2_ms in [50u64, 75, 125] {
        let r2 = 2.0 * d2_ms as f64 / 1000.0;
        let mut t = Vec::new();
        let mut r1 = 0.0;
        for proxies in ["", "[[proxy]]\nnode = \"pgw\""] {
            let mut s = sim(&lte(d2_ms, proxies, ""), 1);
            let d = download(&mut s, "ue", "server", bytes, SimTime::from_millis(200), cfg);
            assert!(s.run(&mut |_| true));
            let (got, at) = sink(&s, &d);
            assert_eq!(got, bytes);
            t.push((at.unwrap() - d.start).as_secs_f64());
            if let Some(p) = s.proxy("pgw") {
                conserved(p, bytes);
                r1 = s.tcp(p.conns[0].client).unwrap().stats().rtt_min.as_secs_f64();
            }
        }
        assert!(r1 > 0.005 && r1 < 0.05, "radio-leg RTT {r1}");
        let (direct_want, split_want) = ((k + 1.0) * (r1 + r2), r1 + (k + 1.0) * r2);
        // the radio's serialisation and scheduling add a few ms to either
        assert!((t[0] - direct_want).abs() < 0.015, "d2 {d2_ms} ms: direct {:.4} s vs closed form {direct_want:.4} s (r1 {r1:.4})", t[0]);
        assert!((t[1] - split_want).abs() < 0.015, "d2 {d2_ms} ms: split {:.4} s vs closed form {split_want:.4} s (r1 {r1:.4})", t[1]);
        assert!(t[0] - t[1] > 2.0 * r1, "d2 {d2_ms} ms: the proxy saves about k radio RTTs: {:.4} vs {:.4}", t[0], t[1]);
    }
}

#[test]
fn an_enb_proxy_and_both_in_series_conserve_bytes() {
    let bytes = 5_000_000;
    for (proxies, nodes) in [("[[proxy]]\nnode = \"enb\"", &["enb"][..]), ("[[proxy]]\nnode = \"pgw\"\n[[proxy]]\nnode = \"enb\"\nclient_cc = \"newreno\"", &["pgw", "enb"][..])] {
        let mut s = sim(&lte(50, proxies, ""), 1);
        let d = download(&mut s, "ue", "server", bytes, SimTime::from_millis(100), TcpConfig { mss: 1400, ..TcpConfig::default() });
        assert!(s.run(&mut |_| true));
        assert_eq!(sink(&s, &d).0, bytes, "{nodes:?}");
        for n in nodes {
            // in series each proxy intercepts once: the eNB the UE's SYN, the PGW the eNB's server leg
            conserved(s.proxy(n).unwrap(), bytes);
        }
        if nodes.len() == 2 {
            let (e, p) = (s.proxy("enb").unwrap().conns[0], s.proxy("pgw").unwrap().conns[0]);
            assert_eq!((e.peer, e.orig), (p.peer, p.orig), "both legs keep the UE's and the server's addresses");
            assert_eq!(s.tcp(e.client).unwrap().controller().kind().name(), "newreno");
        }
    }
}

/// Two cells (X2 6 ms), the UE between them served by `source` and handed over to `target`
/// at 2 s, a server 50 ms behind the PGW.
fn two_cells(proxies: &str) -> String {
    format!(
        r#"
duration = "30s"
[lte]
bandwidth = "10MHz"
shadowing = "0dB"
[lte.rlc]
mode = "am"
[lte.handover]
forwarding = "lossless"
x2_delay = "6ms"
algorithm = "none"
[[lte.handover.manual]]
ue = "ue"
at = "2s"
target = "target"
[[lte.enb]]
name = "source"
position = [0.0, 0.0]
[[lte.enb]]
name = "target"
position = [400.0, 0.0]
[[lte.ue]]
name = "ue"
enb = "source"
position = [200.0, 0.0]
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "50ms"
{proxies}
"#
    )
}

#[test]
fn across_a_handover_the_enb_proxy_keeps_its_connections_and_no_byte_is_lost() {
    // The download runs from 0.1 s to well after the 2 s handover. With the proxy at the PGW
    // the handover is below it (the RAN's lossless forwarding). With proxies at the eNBs the
    // connection stays anchored at the source's proxy (tproxy.rs): after the handover the
    // UE's ACKs and, after the path switch, the server's data reach the target eNB, which
    // passes them to the anchor over X2; the target's own proxy intercepts nothing.
    let bytes = 20_000_000;
    for (proxies, anchor) in [("[[proxy]]\nnode = \"pgw\"", "pgw"), ("[[proxy]]\nnode = \"source\"", "source"), ("[[proxy]]\nnode = \"source\"\n[[proxy]]\nnode = \"target\"", "source")] {
        let mut s = sim(&two_cells(proxies), 1);
        let d = download(&mut s, "ue", "server", bytes, SimTime::from_millis(100), TcpConfig { mss: 1400, ..TcpConfig::default() });
        assert!(s.run(&mut |_| true));
        s.finish();
        let v = s.summary();
        assert_eq!(v["lte"]["handovers"].as_array().map(|h| h.len()), Some(1), "{}", v["lte"]["handovers"]);
        let (got, at) = sink(&s, &d);
        assert_eq!(got, bytes, "{anchor}: every byte arrives");
        assert!(at.unwrap() > SimTime::from_millis(2500), "the download spans the handover: done at {:?}", at);
        conserved(s.proxy(anchor).unwrap(), bytes);
        if anchor == "source" {
            let px = v["proxies"].as_array().unwrap().iter().find(|p| p["node"] == "source").unwrap();
            assert!(px["x2_passed_packets"].as_u64().unwrap() > 100, "the target passed the anchored connection's packets: {px:#}");
        }
        if let Some(t) = s.proxy("target") {
            assert!(t.conns.is_empty(), "the target intercepted nothing: the connection stays at its anchor");
        }
    }
}

#[test]
fn a_lost_packet_is_counted_once_against_the_leg_or_the_end_that_sent_it() {
    // A 4 s download (iperf -R) through a router proxy, 1 % loss on one leg only. Both legs'
    // packets carry the flow's 4-tuple; each loss must be counted once, against its sender:
    // on the client leg the proxy sends the data (the leg's `data_packets_lost`), on the server
    // leg the server does (the flow's `data_packets_lost`). The independent count is the link
    // direction's packets lost or dropped by its queue (every packet, data or not: the data
    // packets are all but a handful of handshake/FIN segments).
    let flow = "[[flow]]\nname = \"dl\"\napp = \"iperf\"\nfrom = \"client\"\nto = \"srv\"\nreverse = true\nduration = \"4s\"\n";
    for (client_leg, server_leg, lossy) in [
        ("rate = \"10Mbps\"\ndelay = \"20ms\"\nloss = 0.01", "rate = \"100Mbps\"\ndelay = \"10ms\"", "client"),
        ("rate = \"10Mbps\"\ndelay = \"20ms\"", "rate = \"100Mbps\"\ndelay = \"10ms\"\nloss = 0.01", "server"),
    ] {
        let text = wired(client_leg, server_leg, "") + flow;
        let (_, v) = run(&text.replace("duration = \"60s\"", "duration = \"8s\""), 3);
        let f = &v["flows"][0];
        let leg = &v["proxies"][0]["legs"][0];
        let (cl, sl) = (&leg["client_leg"], &leg["server_leg"]);
        let dir = |from: &str, to: &str| {
            let l = v["links"].as_array().unwrap().iter().find(|l| l["from"] == from && l["to"] == to).unwrap();
            (l["lost_packets"].as_u64().unwrap(), l["drops"].as_u64().unwrap())
        };
        let (client_dir, server_dir) = (dir("px", "client"), dir("srv", "px"));
        let lossy_dir = if lossy == "client" { client_dir } else { server_dir };
        assert!(lossy_dir.0 > 20, "{lossy}: the lossy leg lost data packets: {lossy_dir:?}");
        let (flow_lost, cl_lost) = (f["data_packets_lost"].as_u64().unwrap(), cl["data_packets_lost"].as_u64().unwrap());
        assert_eq!(sl["data_packets_sent"], 0, "a download: the proxy sends no data to the server");
        assert_eq!(sl["data_packets_lost"], 0, "{lossy}: {sl:#}");
        assert!(cl["data_packets_sent"].as_u64().unwrap() > 2000, "{cl:#}");
        let (c, s) = (client_dir.0 + client_dir.1, server_dir.0 + server_dir.1);
        assert!(cl_lost <= c && cl_lost + 3 >= c, "{lossy}: the client leg lost {cl_lost} data packets, its link {c}");
        assert!(flow_lost <= s && flow_lost + 3 >= s, "{lossy}: the flow (the server) lost {flow_lost} data packets, its link {s}");
        // each leg's sender retransmitted what it lost (SACK recovery or RTO)
        assert!(cl["retransmitted_segments"].as_u64().unwrap() >= cl_lost && f["retransmitted_segments"].as_u64().unwrap() >= flow_lost, "{lossy}");
    }
}

#[test]
fn a_connection_opened_after_an_a3_handover_is_intercepted_by_the_target_enb_proxy() {
    // Both eNBs have a proxy. The UE drives from the source towards the target at 100 km/h and
    // is handed over by A3 (3 dB, 256 ms) around 4 s; a download it opened at 0.1 s stays
    // anchored at the source's proxy (passed to it over X2 after the handover), and a second
    // download it opens at 9 s, from the target's cell, is intercepted by the target's proxy.
    let text = two_cells("[[proxy]]\nnode = \"source\"\n[[proxy]]\nnode = \"target\"")
        .replace("algorithm = \"none\"\n[[lte.handover.manual]]\nue = \"ue\"\nat = \"2s\"\ntarget = \"target\"\n", "hysteresis = \"3dB\"\ntime_to_trigger = \"256ms\"\n")
        .replace(
            "position = [200.0, 0.0]",
            "mobility = { model = \"constant_velocity\", start = [100.0, 0.0], heading_deg = 0.0, speed = { dist = \"constant\", kmh = 100.0 } }",
        )
        .replace("duration = \"30s\"", "duration = \"20s\"");
    let mut s = sim(&text, 1);
    let cfg = TcpConfig { mss: 1400, ..TcpConfig::default() };
    let (b1, b2) = (30_000_000, 5_000_000);
    let d1 = download_on(&mut s, "ue", "server", 80, b1, SimTime::from_millis(100), cfg);
    let d2 = download_on(&mut s, "ue", "server", 81, b2, SimTime::from_secs(9), cfg);
    assert!(s.run(&mut |_| true));
    s.finish();
    let v = s.summary();
    let ho = v["lte"]["handovers"].as_array().unwrap();
    assert_eq!(ho.len(), 1, "{ho:?}");
    assert_eq!((ho[0]["source"].as_str(), ho[0]["target"].as_str()), (Some("source"), Some("target")));
    let t_ho = ho[0]["path_switch_s"].as_f64().unwrap_or_else(|| panic!("{:#}", ho[0]));
    assert!(t_ho > 2.0 && t_ho < 9.0, "A3 hands the UE over before the second download: {t_ho}");
    let (got1, at1) = sink(&s, &d1);
    assert_eq!((got1, sink(&s, &d2).0), (b1, b2), "every byte of both downloads arrives {:#}", v["proxies"]);
    assert!(at1.unwrap().as_secs_f64() > t_ho, "the first download spans the handover");
    let (src, tgt) = (s.proxy("source").unwrap(), s.proxy("target").unwrap());
    let port = |d: &Download| client_sock(&s, d).map(|e| e.local_port());
    // the old connection stays with the source's proxy, the new one is the target's
    conserved(src, b1);
    conserved(tgt, b2);
    assert_eq!(Some(src.conns[0].peer.port), port(&d1));
    assert_eq!(Some(tgt.conns[0].peer.port), port(&d2));
    assert_eq!(tgt.conns[0].orig.port, 81);
    assert!(tgt.conns[0].opened_at >= SimTime::from_secs(9));
    let px = |n: &str| v["proxies"].as_array().unwrap().iter().find(|p| p["node"] == n).unwrap().clone();
    let (ps, pt) = (px("source"), px("target"));
    assert!(ps["x2_passed_packets"].as_u64().unwrap() > 100, "the target passed the anchored connection's packets: {ps:#}");
    assert_eq!(pt["x2_passed_packets"], 0, "nothing anchored at the target is seen by the source");
    // the target's per-leg counters: its client leg carried the second download
    let leg = &pt["legs"][0]["client_leg"];
    assert_eq!(leg["bytes_written"], b2);
    assert!(leg["data_packets_sent"].as_u64().unwrap() >= b2 / 1400, "{leg:#}");
}
