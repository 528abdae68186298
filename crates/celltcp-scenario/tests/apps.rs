//! Apps in the arena over the node stack's sockets: a server accepting several connections on
//! one port, and a relay that terminates one TCP connection and opens another (split TCP).

use celltcp_apps::app::{AnyApp, SockAddr};
use celltcp_apps::bulk::{BulkSender, Role, Sink, TcpClient, TcpServer};
use celltcp_apps::relay::Relay;
use celltcp_engine::SimTime;
use celltcp_scenario::{AppId, RunOptions, Simulation};
use celltcp_tcp::cc::CcKind;
use celltcp_tcp::TcpConfig;

fn sim(text: &str) -> Simulation {
    Simulation::from_text(text, &[], &RunOptions { seed: Some(5), ..Default::default() }).unwrap()
}

fn client(sim: &Simulation, a: AppId) -> &TcpClient {
    match sim.app(a) {
        AnyApp::TcpClient(c) => c,
        other => panic!("not a client: {other:?}"),
    }
}

fn sink_received(r: &Role) -> u64 {
    match r {
        Role::Sink(s) => s.received(),
        Role::Writer(_) => panic!("a writer"),
    }
}

const STAR: &str = r#"
duration = "30s"
[[node]]
name = "r"
kind = "router"
[[link]]
between = ["c1", "r"]
rate = "10Mbps"
delay = "5ms"
[[link]]
between = ["c2", "r"]
rate = "10Mbps"
delay = "7ms"
[[link]]
between = ["r", "srv"]
rate = "20Mbps"
delay = "3ms"
queue = "30p"
"#;

#[test]
fn a_server_accepts_several_connections_on_one_port() {
    let mut sim = sim(STAR);
    let (c1, c2, srv) = (sim.node("c1").unwrap(), sim.node("c2").unwrap(), sim.node("srv").unwrap());
    let cfg = TcpConfig::default();
    let server = sim.add_app(srv, AnyApp::TcpServer(TcpServer::new(80, cfg, Role::Sink(Sink::default()))), SimTime::ZERO);
    let to = SockAddr::new(sim.node_addr(srv), 80);
    // two clients on c1 (two ephemeral ports towards the same server port) and one on c2,
    // starting at different times, each writing a different amount
    let sizes = [300_000u64, 1_000_000, 450_000];
    let mut clients = Vec::new();
    let placed = [(c1, 0), (c1, 200), (c2, 1000)];
    for (k, (node, at)) in placed.into_iter().enumerate() {
        let app = TcpClient::new(to, cfg, Role::Writer(BulkSender::new(Some(sizes[k]), None, 64 * 1024)));
        clients.push(sim.add_app(node, AnyApp::TcpClient(app), SimTime::from_millis(at)));
    }
    assert!(sim.run(&mut |_| true));

    let AnyApp::TcpServer(s) = sim.app(server) else { panic!() };
    assert_eq!(s.conns.len(), 3, "three connections accepted on port 80");
    assert!(s.error.is_none());
    let mut ports = std::collections::HashSet::new();
    for (k, &a) in clients.iter().enumerate() {
        let c = client(&sim, a);
        let ep = sim.tcp(c.sock.unwrap()).unwrap();
        assert!((32768..=60999).contains(&ep.local_port()), "{}", ep.local_port());
        assert_eq!(ep.remote_port(), 80);
        // the two clients on c1 use two ports (c2 may reuse one: another local address)
        assert!(ports.insert((placed[k].0, ep.local_port())), "two clients of one host share a port");
        // the server connection whose peer is this client read exactly what it wrote
        let mine: Vec<_> = s.conns.iter().filter(|(sock, _)| sim.tcp(*sock).unwrap().remote_port() == ep.local_port()).collect();
        let (_, role) = match mine.len() {
            1 => mine[0],
            // c1 and c2 may share a port number: tell them by the bytes they wrote
            _ => *mine.iter().find(|(_, r)| sink_received(r) == sizes[k]).expect("accepted"),
        };
        assert_eq!(sink_received(role), sizes[k], "client {k}");
        assert!(ep.stats().bytes_sent >= sizes[k], "bytes_sent counts retransmissions too");
    }
}

const CHAIN: &str = r#"
duration = "30s"
[[link]]
between = ["client", "proxy"]
rate = "5Mbps"
delay = "20ms"
queue = "20p"
loss = 0.005
[[link]]
between = ["proxy", "srv"]
rate = "50Mbps"
delay = "2ms"
"#;

#[test]
fn a_relay_terminates_one_connection_and_opens_another() {
    let mut sim = sim(CHAIN);
    let (cl, px, srv) = (sim.node("client").unwrap(), sim.node("proxy").unwrap(), sim.node("srv").unwrap());
    let down = TcpConfig { cc: CcKind::NewReno.into(), ..TcpConfig::default() };
    let up = TcpConfig { cc: CcKind::Bbr.into(), ..TcpConfig::default() };
    let server = sim.add_app(srv, AnyApp::TcpServer(TcpServer::new(80, up, Role::Sink(Sink::default()))), SimTime::ZERO);
    let relay = sim.add_app(px, AnyApp::Relay(Relay::new(8080, SockAddr::new(sim.node_addr(srv), 80), down, up)), SimTime::ZERO);
    let bytes = 2_000_000;
    let writer = TcpClient::new(SockAddr::new(sim.node_addr(px), 8080), down, Role::Writer(BulkSender::new(Some(bytes), None, 64 * 1024)));
    let cli = sim.add_app(cl, AnyApp::TcpClient(writer), SimTime::from_millis(10));
    assert!(sim.run(&mut |_| true));

    let AnyApp::Relay(r) = sim.app(relay) else { panic!() };
    assert_eq!(r.legs.len(), 1);
    let leg = r.legs[0];
    assert_eq!(leg.up_bytes, bytes, "every byte relayed upstream");
    assert_eq!(leg.down_bytes, 0);
    // two distinct connections: client<->proxy:8080 and proxy<->srv:80, each with its own cc
    let (d, u) = (sim.tcp(leg.down).unwrap(), sim.tcp(leg.up).unwrap());
    assert_eq!(d.local_port(), 8080);
    assert_eq!(u.remote_port(), 80);
    assert_eq!(d.controller().kind(), CcKind::NewReno);
    assert_eq!(u.controller().kind(), CcKind::Bbr);
    // the lossy client leg retransmits; the clean server leg does not
    let c = sim.tcp(client(&sim, cli).sock.unwrap()).unwrap();
    assert!(c.stats().retransmitted_segments > 0);
    assert_eq!(u.stats().retransmitted_segments, 0);
    // the server read everything, and the FIN was passed on: the server's side saw it
    let AnyApp::TcpServer(s) = sim.app(server) else { panic!() };
    assert_eq!(s.conns.len(), 1);
    assert_eq!(sink_received(&s.conns[0].1), bytes);
    assert!(sim.tcp(s.conns[0].0).unwrap().peer_closed());
    assert!(leg.up_closed() && leg.down_closed(), "both legs closed");
}
