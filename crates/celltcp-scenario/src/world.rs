//! The topology and the dispatch of the run loop: builds nodes, link directions, the LTE RAN,
//! the node stack's sockets and the apps from a [`Plan`], and runs one event with one `match`
//! ([`World::dispatch`]; the loop itself is [`crate::sim::Simulation`]). Components are
//! addressed by index; protocol code is sans-IO (it takes `now` and returns what to send).
//!
//! Here: the IP layer (output, forwarding, fragmentation, reassembly) and the links. Sockets
//! and apps: `glue.rs` over `stack.rs`; metrics and sampling: `metrics.rs`; LTE: `cellular.rs`.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use celltcp_apps::app::{AnyApp, SockAddr};
use celltcp_apps::bulk::{BulkSender, Role, Sink, TcpClient, TcpServer};
use celltcp_apps::interval::IntervalMeter;
use celltcp_apps::ping::{PingApp, Pinger};
use celltcp_apps::udp::{CbrApp, CbrSender, UdpSinkApp};
use celltcp_engine::rng::component_id;
use celltcp_engine::{component_rng, EventQueue, SimDuration, SimTime};
use celltcp_net::frag::{fragment, ReassemblyConfig, Reassembler};
use celltcp_net::link::{AnyLink, Delivery, Link, LinkConfig};
use celltcp_net::loss::LossModel;
use celltcp_net::pcap::{PcapWriter, Snaplen};
use celltcp_net::queue::AnyQueue;
use celltcp_net::trace_link::{TraceLink, TraceLinkConfig};
use celltcp_net::gtpu::Tunnel;
use celltcp_net::{Body, Ipv4, Packet};
use celltcp_tcp::{BufSize, TcpConfig};

use crate::iface::Out;
use crate::cellular::{radio_port, LteMedium, GTPU_OVERHEAD_BYTES};
use crate::gtpu::GtpTunnels;
use crate::device::{AnyMedium, Device, MediumOutput, MediumSlot};
use crate::wlan::wifi_port;
use crate::config::{AppKind, Config};
use crate::error::ScenarioError;
use crate::glue::AppSlot;
use crate::metrics::{FlowNet, SegTrace};
use crate::sinks::Sinks;
use celltcp_metrics::StreamStats;
use crate::plan::{DirKind, Plan};
use crate::stack::{Stack, NO_FLOW};
use celltcp_lte::ran::Ran;

/// iperf3 3.12's `multisend` (iperf_api.c `iperf_send`): blocks written per `select()` without
/// a rate.
const IPERF3_MULTISEND: u32 = 10;

/// Events of the run loop.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// A link direction's transmitter is free and packets wait (or a trace link has a delivery
    /// opportunity).
    LinkService(u32),
    /// A packet (a slot of the packet slab) arrives at a node.
    Arrive(u32, u32),
    /// A socket's (TCP connection's) timer may be due.
    SockTimer(u32),
    /// A scenario flow starts (its client app; its interval meter for iperf).
    FlowStart(u32),
    /// An app added to a running simulation starts.
    AppStart(u32),
    /// An app's timer may be due.
    AppTimer(u32),
    /// An iperf flow's interval report is due.
    Meter(u32),
    Sample,
    /// A shared medium (an LTE RAN) may have work now (`device.rs`).
    MediumTimer(u32),
    /// An `[[event]]` (index into `World::events`): an interface goes down or comes back up.
    Iface(u32),
}

pub(crate) struct Node {
    pub name: String,
    pub addr: Ipv4,
    /// Its interfaces (name, address, device), for the summary.
    pub ifaces: Vec<(String, Ipv4, &'static str)>,
    pub(crate) reasm: Reassembler,
    ident: u16,
    /// Packets for it leave the simulation (emulation: a real host's TUN device).
    pub external: bool,
}

pub(crate) struct LinkDir {
    pub name: String,
    /// What carries its packets: a link of its own or a port of a shared medium.
    pub dev: Device,
    pub from: usize,
    pub to: usize,
    pub mtu: u32,
    /// Its capture: of a link, packets as they start on the wire; of a direction attached to
    /// a medium, packets as its sending node hands them to the medium (a UE's uplink).
    pub pcap: Option<usize>,
    /// Of a direction attached to a medium: the capture of packets the medium delivers at its
    /// far end (a UE's downlink, as the UE receives it).
    pub pcap_rx: Option<usize>,
    pub drops_pkts: u64,
    pub drops_bytes: u64,
    pub lost_pkts: u64,
    pub delivered_pkts: u64,
    pub rate_bps: Option<u64>,
    pub delay: SimDuration,
    /// An S1-U link: packets carry GTP-U encapsulation across it.
    pub s1u: bool,
    /// Its interface is down (an `[[event]]`): what is offered to it, or leaves its queue or
    /// its medium, is dropped.
    pub down: bool,
}

/// A scenario flow: its apps (client at `src`, server at `dst`), its TCP sockets once they
/// exist, and what is measured of it.
pub(crate) struct Flow {
    pub name: String,
    /// The `[[flow]]` this is a stream of, and the stream's number (0: not split; see plan.rs).
    pub test: String,
    pub stream: u32,
    pub app: AppKind,
    pub src: usize,
    pub dst: usize,
    pub start: SimTime,
    pub net: FlowNet,
    /// RTT samples, ms (f32-rounded, as they were when kept); the rows go to the `rtt` sink.
    pub rtt_ms: StreamStats,
    pub cc: celltcp_tcp::cc::CcKind,
    /// The server sends (`iperf3 -R`).
    pub reverse: bool,
    pub stop_at: Option<SimTime>,
    pub meter: Option<IntervalMeter>,
    pub interval: SimDuration,
    pub client_app: u32,
    pub server_app: Option<u32>,
    /// The TCP sockets of the client and the server, once they exist.
    pub client: Option<u32>,
    pub server: Option<u32>,
    /// The sender's segments and the ACKs it receives, when `trace_segments` is on.
    pub seg_trace: Option<Box<SegTrace>>,
}

impl Flow {
    pub fn is_tcp(&self) -> bool {
        self.app.is_tcp()
    }
}

pub(crate) struct World {
    pub(crate) q: EventQueue<Ev>,
    pub nodes: Vec<Node>,
    pub dirs: Vec<LinkDir>,
    pub(crate) routes: celltcp_net::routing::Routes,
    /// Every address's owner (node, interface); multihomed hosts' interfaces and rules.
    pub(crate) ifaces: crate::iface::Ifaces,
    /// The sockets of every node.
    pub(crate) stack: Stack,
    /// The apps of every node.
    pub(crate) apps: Vec<AppSlot>,
    pub flows: Vec<Flow>,
    pub pcaps: Vec<(String, PcapWriter<BufWriter<File>>)>,
    /// The time-series tables, streamed to files or kept in memory.
    pub sinks: Sinks,
    pub end: SimTime,
    pub(crate) sample_interval: SimDuration,
    pub(crate) record_rtt: bool,
    next_uid: u64,
    /// The MPTCP options of packets in flight (celltcp_net::MptcpSideTable: packets carry only
    /// their length).
    pub(crate) mptcp_opts: celltcp_net::MptcpSideTable,
    scratch: Vec<Delivery>,
    /// Packets in flight between links and nodes; events carry their slot, so the event queue
    /// moves 32-byte entries rather than whole packets.
    slab: Slab,
    drop_scratch: Vec<Packet>,
    /// Datagrams (by uid) one of whose fragments was lost: a datagram counts once in a flow's
    /// `data_pkts_dropped`, however many of its fragments are lost.
    lost_fragmented: FastMap<u64, ()>,
    frag_out: Vec<Packet>,
    pub(crate) rtt_scratch: Vec<SimDuration>,
    pub files: Vec<String>,
    /// The shared media (`device.rs`): the LTE RAN, if any.
    pub(crate) media: Vec<MediumSlot>,
    pub(crate) medium_out: Vec<MediumOutput>,
    /// Real packets' bytes (emulation; empty otherwise).
    pub(crate) raw: celltcp_net::raw::RawStore,
    /// Real fragments waiting for the rest of their datagram at simulated hosts (emulation).
    pub(crate) raw_frag: celltcp_net::raw_frag::RawReassembler,
    /// Packets that arrived at external nodes, with their arrival time, until taken.
    pub(crate) external_out: Vec<(SimTime, u32, Packet)>,
    raw_scratch: Vec<u8>,
    /// The transparent proxies (`tproxy.rs`), if the run has any.
    pub(crate) tproxy: Option<Box<crate::tproxy::Tproxies>>,
    /// The `[[event]]`s, each with its link's two directions.
    events: Vec<(crate::plan::PlanEvent, [usize; 2])>,
}

impl World {
    pub fn build(cfg: &Config, mut plan: Plan, seed: u64, out_dir: Option<&Path>) -> Result<World, ScenarioError> {
        let io = |e: std::io::Error| ScenarioError::new("", format!("cannot create output files: {e}"));
        let nodes: Vec<Node> = plan
            .nodes
            .iter()
            .map(|n| Node { name: n.name.clone(), addr: n.addr, ifaces: n.ifaces.iter().map(|i| (i.name.clone(), i.addr, i.device)).collect(), reasm: Reassembler::new(ReassemblyConfig::default()), ident: 0, external: false })
            .collect();
        let mut pcaps = Vec::new();
        let mut files = Vec::new();
        let mut pcap_of_link = vec![None; plan.links.len()];
        if let Some(dir) = out_dir {
            for (i, l) in plan.links.iter().enumerate() {
                if l.pcap {
                    let pdir = dir.join("pcap");
                    std::fs::create_dir_all(&pdir).map_err(io)?;
                    // a UE's radio link is captured at the UE (`ue-<name>.pcap`)
                    let fname = match (&plan.dirs[l.dirs[0]].kind, l.name.strip_prefix("radio-")) {
                        (DirKind::Radio { .. }, Some(ue)) => crate::plan::pcap_file(&format!("ue-{ue}")),
                        _ => crate::plan::pcap_file(&l.name),
                    };
                    let w = PcapWriter::new(BufWriter::new(File::create(pdir.join(&fname)).map_err(io)?), Snaplen::Headers).map_err(io)?;
                    pcap_of_link[i] = Some(pcaps.len());
                    pcaps.push((l.name.clone(), w));
                    files.push(format!("pcap/{fname}"));
                }
            }
        }
        // the Wi-Fi BSSs are one medium after the LTE RAN's; port of the k-th station overall
        let wifi_medium = plan.lte.is_some() as u32;
        let sta_base: Vec<usize> = plan.wifi.iter().scan(0, |acc, w| {
            let b = *acc;
            *acc += w.sta_node.len();
            Some(b)
        }).collect();
        let node_names: Vec<String> = plan.nodes.iter().map(|n| n.name.clone()).collect();
        let wifi = (!plan.wifi.is_empty()).then(|| crate::wlan::build(std::mem::take(&mut plan.wifi), &node_names, seed, out_dir, &mut files)).transpose()?;
        let dirs: Vec<LinkDir> = plan
            .dirs
            .iter()
            .map(|d| {
                let rng = component_rng(seed, component_id("link", &d.name));
                let queue = AnyQueue::new(&d.queue);
                let loss = LossModel::new(d.loss);
                let dev = match (&d.kind, &d.trace) {
                    // the LTE RAN is medium 0 (pushed below)
                    (DirKind::Radio { ue, downlink }, _) => Device::Attached { medium: 0, port: radio_port(*ue, !downlink) },
                    (DirKind::Wifi { bss, sta, downlink }, _) => Device::Attached { medium: wifi_medium, port: wifi_port(sta_base[*bss] + sta, !downlink) },
                    (_, Some(ops)) => Device::Link(AnyLink::Trace(TraceLink::new(
                        TraceLinkConfig { opportunities_ms: ops.clone(), delay: d.delay, mtu: d.mtu },
                        queue,
                        loss,
                        rng,
                    ))),
                    (_, None) => Device::Link(AnyLink::Rate(Link::new(LinkConfig { rate_bps: d.rate_bps.unwrap_or(u64::MAX / 2), delay: d.delay, mtu: d.mtu }, queue, loss, rng))),
                };
                LinkDir {
                    name: d.name.clone(),
                    dev,
                    from: d.from,
                    to: d.to,
                    mtu: d.mtu,
                    // a radio link's capture is at the UE: its uplink as sent, its downlink as received
                    pcap: if matches!(d.kind, DirKind::Radio { downlink: true, .. }) { None } else { pcap_of_link[d.link] },
                    pcap_rx: if matches!(d.kind, DirKind::Radio { downlink: true, .. }) { pcap_of_link[d.link] } else { None },
                    drops_pkts: 0,
                    drops_bytes: 0,
                    lost_pkts: 0,
                    delivered_pkts: 0,
                    rate_bps: d.rate_bps,
                    delay: d.delay,
                    s1u: d.kind == DirKind::S1u,
                    down: false,
                }
            })
            .collect();
        let ue_lwa = plan.lte.as_mut().map(|l| std::mem::take(&mut l.plan.ue_lwa)).unwrap_or_default();
        let mut wifi = wifi;
        // the eNBs' nodes and the X2 delays between them, for eNB proxies (`tproxy.rs`)
        let proxy_enbs: Vec<usize> = plan.lte.as_ref().map_or(Vec::new(), |pl| pl.enb_node.clone());
        let proxy_x2 = {
            let x2 = plan.lte.as_ref().map(|pl| (pl.plan.ran.handover.x2_delay, pl.plan.x2.iter().map(|&(a, b, d, _)| (pl.enb_node[a], pl.enb_node[b], d)).collect::<Vec<_>>()));
            move |a: usize, b: usize| match &x2 {
                Some((def, pairs)) => pairs.iter().find(|&&(x, y, _)| (x, y) == (a, b) || (y, x) == (a, b)).map_or(*def, |p| p.2),
                None => SimDuration::ZERO,
            }
        };
        let mut lte = plan.lte.take().map(|pl| {
            let mut ran = Ran::new(pl.plan.ran.clone(), &pl.plan.enbs, &pl.plan.ues, seed);
            for (i, s) in pl.plan.setup.iter().enumerate() {
                if s.mobility.is_none() && s.meas.is_none() && s.rlf.is_none() {
                    continue;
                }
                let name = &pl.plan.ues[i].name;
                let mob = s.mobility.as_ref().map(|spec| {
                    celltcp_lte::mobility::Mobility::new(spec, celltcp_engine::rng::component_rng(seed, component_id("ue-mobility", name)))
                        .expect("validated by plan_lte")
                });
                ran.set_mobility(i, mob, s.meas.clone(), s.rlf.clone()).expect("validated by plan_lte");
            }
            for &(at, ue, target) in &pl.plan.manual {
                ran.schedule_handover(SimTime::ZERO + at, ue, target);
            }
            for &(at, c) in &pl.plan.failures {
                ran.schedule_cell_failure(SimTime::ZERO + at, c);
            }
            for &c in &pl.plan.interferers {
                ran.set_interferer_only(c, true);
            }
            for &(a, b, d, r) in &pl.plan.x2 {
                ran.set_x2(a, b, d, r);
            }
            // the GTP-U tunnels at attach, and the X2-U capture (`gtpu.rs`)
            let s1u_dl_dir: Vec<u32> = pl.enb_node.iter().map(|&en| {
                plan.dirs.iter().position(|d| d.kind == DirKind::S1u && d.from == pl.pgw_node && d.to == en).expect("every eNB has an S1-U link") as u32
            }).collect();
            let serving: Vec<usize> = pl.plan.ues.iter().map(|u| u.enb).collect();
            let mut gtp = GtpTunnels::new(plan.nodes.len(), &pl.ue_node, &pl.enb_node, pl.pgw_node, &serving, s1u_dl_dir);
            gtp.index_ue_addresses(plan.ifaces.addresses());
            let x2_pcap = match (out_dir, pl.plan.epc.pcap) {
                (Some(dir), true) => {
                    ran.log_x2(true);
                    Some(crate::cellular::X2Pcap::new(dir.join("pcap"), pl.enb_node.iter().map(|&n| plan.nodes[n].addr).collect()))
                }
                _ => None,
            };
            LteMedium::new(ran, pl.ue_node, pl.enb_node, pl.ue_dirs, &pl.plan.enbs, gtp, x2_pcap)
        });
        // LTE–WLAN aggregation: split bearers over the APs' BSSs (`lwa.rs`)
        crate::lwa::wire(lte.as_mut(), wifi.as_mut(), &ue_lwa, wifi_medium, &sta_base)?;
        let mut media: Vec<MediumSlot> = lte.into_iter().map(|l| MediumSlot { medium: AnyMedium::Lte(Box::new(l)), timer_at: None }).collect();
        media.extend(wifi.map(|w| MediumSlot { medium: AnyMedium::Wifi(Box::new(w)), timer_at: None }));
        let mut q = EventQueue::new();
        let mut stack = Stack::new(component_rng(seed, component_id("stack", "iss")));
        let mut apps: Vec<AppSlot> = Vec::new();
        // the next server port of each destination host (iperf3's 5201 upwards)
        let mut server_port_of: HashMap<usize, u32> = HashMap::new();
        let mut flows = Vec::new();
        let end = SimTime::ZERO + cfg.duration.0;
        for (i, pf) in plan.flows.iter().enumerate() {
            let f = &pf.cfg;
            let start = SimTime::ZERO + f.start.map_or(SimDuration::ZERO, |d| d.0);
            let next_port = server_port_of.entry(pf.dst).or_insert(5_201);
            let server_port = *next_port;
            if server_port > u32::from(u16::MAX) {
                return Err(ScenarioError::new(format!("flow[{i}]"), format!("host {:?} serves more flows than it has ports (5201-65535)", plan.nodes[pf.dst].name)));
            }
            // a web server has two hosts (ports): the site's and the static content's
            *next_port += if f.app == AppKind::Web { 2 } else { 1 };
            if *next_port > u32::from(u16::MAX) + 1 {
                return Err(ScenarioError::new(format!("flow[{i}]"), format!("host {:?} serves more flows than it has ports (5201-65535)", plan.nodes[pf.dst].name)));
            }
            let server_port = server_port as u16;
            let dst_addr = plan.nodes[pf.dst].addr;
            let remote = SockAddr::new(dst_addr, server_port);
            // iperf3 -O: the omitted part comes before the `-t` test time
            let omit = f.omit.map_or(SimDuration::ZERO, |d| d.0);
            let stop_at = f.duration.map(|d| start + omit + d.0);
            let bytes_limit = f.bytes.map(|b| b.0);
            // web and video: the server sends
            let reverse = f.reverse.unwrap_or(false) || matches!(f.app, AppKind::Web | AppKind::Video);
            let app_rate = if matches!(f.app, AppKind::Bulk | AppKind::Iperf) { f.rate.map(|r| r.0) } else { None };
            let chunk = f.length.and_then(|l| l.size()).unwrap_or(if f.app == AppKind::Iperf { 128 * 1024 } else { 64 * 1024 });
            // iperf3 without a rate writes 10 blocks per select() (`multisend`)
            let multisend = (f.app == AppKind::Iperf && app_rate.is_none()).then_some(IPERF3_MULTISEND);
            let writer = || {
                let w = BulkSender::new(bytes_limit, stop_at, chunk);
                let w = match multisend { Some(m) => w.with_multisend(m), None => w };
                Role::Writer(with_app_rate(app_rate, start, w))
            };
            let (client, server) = match f.app {
                AppKind::Bulk | AppKind::Iperf => {
                    let c = tcp_config(f, pf, seed, cfg.record_rtt);
                    let (client_role, server_role) = if reverse { (Role::Sink(Sink::default()), writer()) } else { (writer(), Role::Sink(Sink::expecting(bytes_limit))) };
                    (AnyApp::TcpClient(TcpClient::new(remote, c, client_role)), Some(AnyApp::TcpServer(TcpServer::new(server_port, c, server_role))))
                }
                AppKind::Udp => {
                    let rate = f.rate.map_or(1_000_000, |r| r.0);
                    let size = f.size.map_or(1448, |s| s.0 as u32);
                    let stop = stop_at.unwrap_or(end);
                    (AnyApp::Cbr(CbrApp::new(remote, CbrSender::new(size, rate, stop))), Some(AnyApp::UdpSink(UdpSinkApp::new(server_port))))
                }
                AppKind::Ping => {
                    let iv = f.interval.map_or(SimDuration::from_secs(1), |d| d.0);
                    (AnyApp::Ping(PingApp::new(dst_addr, Pinger::new(iv, f.count, f.size.map_or(56, |s| s.0 as u32)))), None)
                }
                AppKind::Web | AppKind::Video => {
                    let c = tcp_config(f, pf, seed, cfg.record_rtt);
                    crate::web_apps::build(f, c, seed ^ component_id("http", &pf.name), dst_addr, server_port)
                }
            };
            let server_app = server.map(|app| {
                apps.push(AppSlot { app, node: pf.dst as u32, flow: i as u32, timer_at: None, bind: None });
                (apps.len() - 1) as u32
            });
            apps.push(AppSlot { app: client, node: pf.src as u32, flow: i as u32, timer_at: None, bind: pf.bind });
            let client_app = (apps.len() - 1) as u32;
            stack.flow_rng.push(component_rng(seed, component_id("flow", &pf.name)));
            stack.flow_mptcp.push(pf.mptcp.map(|m| celltcp_mptcp::MptcpConfig { tcp: tcp_config(f, pf, seed, cfg.record_rtt), ..m }));
            q.push(start, Ev::FlowStart(i as u32));
            let metered = matches!(f.app, AppKind::Iperf | AppKind::Udp);
            flows.push(Flow {
                name: pf.name.clone(),
                test: pf.test.clone(),
                stream: pf.stream,
                app: f.app,
                src: pf.src,
                dst: pf.dst,
                start,
                net: FlowNet::default(),
                rtt_ms: StreamStats::default(),
                cc: pf.cc.kind(),
                reverse,
                stop_at,
                meter: metered.then(|| IntervalMeter::with_omit(start, start + omit)),
                interval: f.interval.map_or(SimDuration::from_secs(1), |d| d.0),
                client_app,
                server_app,
                client: None,
                server: None,
                seg_trace: f.trace_segments.unwrap_or(false).then(|| {
                    let (from, until) = f.trace_window.map_or((SimTime::ZERO, end), |[a, b]| (SimTime::ZERO + a.0, SimTime::ZERO + b.0));
                    Box::new(SegTrace::new(from, until))
                }),
            });
        }
        q.push(SimTime::ZERO, Ev::Sample);
        let events: Vec<_> = plan.events.iter().map(|&e| (e, plan.links[e.link].dirs)).collect();
        for (i, (e, _)) in events.iter().enumerate() {
            q.push(SimTime::ZERO + e.at, Ev::Iface(i as u32));
        }
        let traced = flows.iter().any(|f| f.seg_trace.is_some());
        let has_wifi = media.iter().any(|m| matches!(m.medium, AnyMedium::Wifi(_)));
        let has_lte = media.iter().any(|m| matches!(m.medium, AnyMedium::Lte(_)));
        let has_mptcp = plan.flows.iter().any(|f| f.mptcp.is_some());
        let sinks = Sinks::open(out_dir, has_lte, has_wifi, traced, has_mptcp).map_err(|e| ScenarioError::new("", format!("cannot create output files: {e}")))?;
        let mut w = World {
            q,
            nodes,
            dirs,
            routes: plan.routes,
            ifaces: std::mem::take(&mut plan.ifaces),
            stack,
            apps,
            flows,
            pcaps,
            sinks,
            end,
            sample_interval: cfg.sample_interval.0,
            record_rtt: cfg.record_rtt,
            next_uid: 0,
            mptcp_opts: celltcp_net::MptcpSideTable::default(),
            scratch: Vec::new(),
            slab: Slab::default(),
            drop_scratch: Vec::new(),
            lost_fragmented: FastMap::default(),
            frag_out: Vec::new(),
            rtt_scratch: Vec::new(),
            files,
            media,
            medium_out: Vec::new(),
            raw: celltcp_net::raw::RawStore::new(256 << 20),
            raw_frag: Default::default(),
            external_out: Vec::new(),
            raw_scratch: Vec::new(),
            tproxy: None,
            events,
        };
        crate::tproxy::install(&mut w, std::mem::take(&mut plan.proxies), seed, &proxy_enbs, |a, b| proxy_x2(a, b));
        // the work a medium has on its own (moving UEs, planned handovers) before any packet
        for m in 0..w.media.len() {
            w.medium_arm(SimTime::ZERO, m as u32);
        }
        // servers listen (and UDP receivers bind) from the start; that queues no event
        for f in 0..w.flows.len() {
            if let Some(a) = w.flows[f].server_app {
                w.app_start(SimTime::ZERO, a);
            }
        }
        Ok(w)
    }

    pub fn events_processed(&self) -> u64 {
        self.q.events_processed()
    }

    /// Runs one event (the one `match` of the loop; [`crate::sim::Simulation`] pops them).
    #[inline]
    pub(crate) fn dispatch(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::LinkService(d) => self.link_service(now, d as usize),
            Ev::Arrive(n, slot) => {
                let pkt = self.slab.take(slot);
                self.arrive(now, n as usize, pkt)
            }
            Ev::SockTimer(s) => self.sock_timer(now, s),
            Ev::FlowStart(f) => self.flow_start(now, f as usize),
            Ev::AppStart(a) => self.app_start(now, a),
            Ev::AppTimer(a) => self.app_timer(now, a),
            Ev::Meter(f) => self.meter_tick(now, f as usize),
            Ev::Sample => self.sample(now),
            Ev::MediumTimer(m) => self.medium_timer(now, m),
            Ev::Iface(i) => self.iface_event(now, i as usize),
        }
    }

    // ---------------------------------------------------------------- IP layer

    pub(crate) fn fresh_uid(&mut self) -> u64 {
        self.next_uid += 1;
        self.next_uid
    }

    pub(crate) fn slab_put(&mut self, p: Packet) -> u32 {
        self.slab.put(p)
    }

    #[allow(dead_code)] // the sources now name their address (alloc_packet_from); kept for other callers
    pub(crate) fn alloc_packet(&mut self, now: SimTime, node: usize, dst: Ipv4, body: Body) -> Packet {
        let src = self.nodes[node].addr;
        self.alloc_packet_from(now, node, src, dst, body)
    }

    /// A packet of `node` from its address `src` (that of one of its interfaces).
    #[inline]
    pub(crate) fn alloc_packet_from(&mut self, now: SimTime, node: usize, src: Ipv4, dst: Ipv4, body: Body) -> Packet {
        let n = &mut self.nodes[node];
        n.ident = n.ident.wrapping_add(1);
        self.next_uid += 1;
        Packet::new(self.next_uid, src, dst, n.ident, now, body)
    }

    /// The next IPv4 identification of `node` (as [`World::alloc_packet_from`] takes it).
    pub(crate) fn next_ident(&mut self, node: usize) -> u16 {
        let n = &mut self.nodes[node];
        n.ident = n.ident.wrapping_add(1);
        n.ident
    }

    /// Sends `pkt` from `node` towards its destination (the IP output path).
    pub(crate) fn ip_output(&mut self, now: SimTime, node: usize, mut pkt: Packet) {
        // the node's forwarding table, by longest-prefix match (`iface.rs`); a multihomed host
        // first asks its source-address rules
        let mut d = match self.ifaces.out(node, pkt.dst) {
            Out::Dir(d) => d,
            Out::Local => {
                self.local_deliver(now, node, pkt);
                return;
            }
            Out::Unreachable => return self.raw_release(&pkt),
            Out::Policy => {
                let Some((dst, ifc)) = self.ifaces.owner(pkt.dst) else { return self.raw_release(&pkt) };
                if dst as usize == node {
                    self.local_deliver(now, node, pkt);
                    return;
                }
                let Some(d) = self.ifaces.route(&self.routes, node, pkt.src, pkt.dst, dst as usize, ifc) else { return self.raw_release(&pkt) };
                d
            }
        };
        // GTP-U on S1-U (`gtpu.rs`): the packet goes into a tunnel, whose headers count against
        // the MTU, so the inner packet is fragmented to leave room for them (each fragment in
        // the same tunnel).
        let mut encap = 0;
        if self.dirs[d].s1u {
            let (dd, teid) = self.gtp_encap(node, pkt.dst, pkt.src, pkt.teid, d);
            d = dd;
            if let Some(teid) = teid {
                pkt.teid = teid;
                encap = GTPU_OVERHEAD_BYTES;
            }
        }
        let mtu = self.dirs[d].mtu - encap;
        if pkt.size() <= mtu {
            self.dir_send(now, d, pkt, encap);
        } else {
            let mut out = std::mem::take(&mut self.frag_out);
            out.clear();
            if fragment(pkt, mtu, &mut out).is_ok() {
                if let Body::Raw(r) = pkt.body {
                    // each fragment carries the key (`RawStore`)
                    self.raw.retain(r.key, out.len() as u32 - 1);
                }
                for p in out.drain(..) {
                    self.dir_send(now, d, p, encap);
                }
            } else {
                self.count_drop(d, &pkt);
            }
            self.frag_out = out;
        }
    }

    /// GTP-U on S1-U direction `d` leaving `node` (`gtpu.rs`), for a packet from `src` to `dst` that
    /// last came out of tunnel `teid_in` (0: none). At the SGW/PGW a UE's downlink goes into
    /// its tunnel to the eNB that holds it (the target's after a handover's path switch); at
    /// an eNB a UE's uplink goes into its uplink tunnel. Returns the direction and the TEID
    /// (`Some(0)`: not a UE's packet, e.g. one for the eNB itself), or `None` with the UE's
    /// radio direction when `node` is an eNB relaying a downlink packet it took out of one of
    /// its tunnels (the routes lead to the UE through its first eNB; after a path switch the
    /// packet reaches another, which relays it to the bearer by TEID).
    #[inline(never)]
    fn gtp_encap(&mut self, node: usize, dst: Ipv4, src: Ipv4, teid_in: u32, d: usize) -> (usize, Option<u32>) {
        let Some(MediumSlot { medium: AnyMedium::Lte(lte), .. }) = self.media.first_mut() else { return (d, Some(0)) };
        let lte = &mut **lte;
        if lte.gtp.is_pgw(node) {
            return match lte.gtp.ue_at(dst) {
                Some(ue) => {
                    let (d, teid) = lte.gtp.downlink(&lte.ran, ue);
                    (d, Some(teid))
                }
                None => (d, Some(0)),
            };
        }
        if teid_in != 0 {
            if let Some(ue) = lte.gtp.enb_decap(node, teid_in) {
                return (lte.ue_dirs[ue][0], None);
            }
        }
        match lte.gtp.ue_at(src) {
            Some(ue) => (d, Some(lte.gtp.uplink(ue))),
            // an eNB proxy's client leg sending to a UE whose route leads over S1-U (the UE
            // attached first to another eNB and was handed over here): to the UE's bearer, as
            // a relayed packet above, not up to the PGW, which would tunnel it back here and
            // the proxy would take it for its own server leg's (`tproxy.rs`)
            None if self.tproxy.is_some() => match lte.gtp.ue_at(dst) {
                Some(ue) => (lte.ue_dirs[ue][0], None),
                None => (d, Some(0)),
            },
            None => (d, Some(0)),
        }
    }

    #[inline]
    fn dir_send(&mut self, now: SimTime, d: usize, mut pkt: Packet, encap: u32) {
        if self.dirs[d].down {
            return self.count_drop(d, &pkt);
        }
        match self.dirs[d].dev {
            Device::Link(_) => {
                pkt.encap = encap as u16;
                self.link_enqueue(now, d, pkt);
            }
            Device::Attached { medium, port } => self.medium_send(now, d, medium, port, pkt),
        }
    }

    /// The point-to-point link of direction `d` (a direction attached to a medium has none).
    #[inline]
    fn link_mut(&mut self, d: usize) -> &mut AnyLink {
        match &mut self.dirs[d].dev {
            Device::Link(l) => l,
            Device::Attached { .. } => unreachable!("link direction {d} is attached to a medium"),
        }
    }

    /// Offers `pkt` to link direction `d`. A packet that starts at once comes back as a
    /// delivery (handled as in [`World::link_service`]); a busy link may ask for a service call.
    fn link_enqueue(&mut self, now: SimTime, d: usize, pkt: Packet) {
        let mut out = std::mem::take(&mut self.scratch);
        match self.link_mut(d).try_enqueue(now, pkt, &mut out) {
            Ok(Some(t)) => self.q.push(t, Ev::LinkService(d as u32)),
            Ok(None) => {}
            Err(dropped) => self.count_drop(d, &dropped),
        }
        self.take_deliveries(d, &mut out);
        self.scratch = out;
    }

    /// A real packet (emulation) is gone: its bytes' reference in the store with it (`RawStore`).
    #[inline]
    pub(crate) fn raw_release(&mut self, pkt: &Packet) {
        if let Body::Raw(r) = pkt.body {
            self.raw.release(r.key);
        }
    }

    pub(crate) fn count_drop(&mut self, d: usize, pkt: &Packet) {
        self.dirs[d].drops_pkts += 1;
        self.dirs[d].drops_bytes += pkt.size() as u64;
        self.count_loss(pkt);
    }

    /// Counts a data packet of a flow that will not arrive: a whole datagram once, even when
    /// several of its IP fragments are lost (`data_pkts_sent` counts datagrams too).
    pub(crate) fn count_loss(&mut self, pkt: &Packet) {
        self.raw_release(pkt);
        if pkt.mptcp_len > 0 && pkt.frag.is_none() {
            self.mptcp_opts.forget(pkt.uid);
        }
        if !is_data(pkt) {
            return;
        }
        if pkt.uid & crate::tproxy::LEG_TAG != 0 {
            // sent by a proxy's leg: counted against the leg, not the flow (`tproxy.rs`)
            if pkt.frag.is_none() || self.lost_fragmented.insert(pkt.uid, ()).is_none() {
                self.tproxy_lost(pkt);
            }
            return;
        }
        if let Some(f) = self.flow_of(pkt) {
            if pkt.frag.is_none() || self.lost_fragmented.insert(pkt.uid, ()).is_none() {
                self.flows[f].net.data_pkts_dropped += 1;
            }
        }
    }

    /// A link direction's transmitter is free: it starts its next packet. The links ask for a
    /// service call only when none is pending, so there is exactly one event per call.
    fn link_service(&mut self, now: SimTime, d: usize) {
        let mut out = std::mem::take(&mut self.scratch);
        let mut drops = std::mem::take(&mut self.drop_scratch);
        let next = self.link_mut(d).service_with_drops(now, &mut out, &mut drops);
        for p in drops.drain(..) {
            self.count_drop(d, &p);
        }
        self.drop_scratch = drops;
        self.take_deliveries(d, &mut out);
        self.scratch = out;
        if let Some(t) = next {
            self.q.push(t, Ev::LinkService(d as u32));
        }
    }

    /// Handles the transmissions a link direction started (rate links: at their start; trace
    /// links: when complete): pcap capture at `tx_start`, loss accounting, and the arrival at the
    /// far end. Leaves `out` empty.
    #[inline]
    fn take_deliveries(&mut self, d: usize, out: &mut Vec<Delivery>) {
        if out.is_empty() {
            return;
        }
        let to = self.dirs[d].to;
        if self.dirs[d].down {
            // the interface went down with packets in its queue: they go with it, as Linux
            // resets a device's qdisc when it goes down (`dev_deactivate`)
            for del in out.drain(..) {
                self.count_drop(d, &del.pkt);
            }
            return;
        }
        // By reference: each packet is copied once, into the slab (draining would copy the
        // whole delivery out first).
        for del in out.iter() {
            if let Some(p) = self.dirs[d].pcap {
                self.capture_link(p, d, del.tx_start, &del.pkt);
            }
            if del.lost {
                self.dirs[d].lost_pkts += 1;
                self.count_loss(&del.pkt);
            } else {
                self.dirs[d].delivered_pkts += 1;
                let slot = self.slab.put(del.pkt);
                self.q.push(del.arrive_at, Ev::Arrive(to as u32, slot));
            }
        }
        out.clear();
    }

    /// `[[event]]` `i`: its link's two directions go down (every packet offered to them, or
    /// leaving their queue or medium, is dropped, counted as a drop of the direction) or come
    /// back up. At a multihomed end the interface's routes go or come back (`iface.rs`), and
    /// the MPTCP connections of that host remove or add its address (`glue.rs`).
    fn iface_event(&mut self, now: SimTime, i: usize) {
        let (e, dirs) = self.events[i];
        for d in dirs {
            self.dirs[d].down = !e.up;
        }
        for d in dirs {
            let node = self.dirs[d].from;
            if let Some(addr) = self.ifaces.set_down(node, d as u32, !e.up) {
                self.mptcp_iface(now, node, addr, e.up);
            }
        }
    }

    pub(crate) fn arrive(&mut self, now: SimTime, node: usize, mut pkt: Packet) {
        // the end of a GTP-U tunnel (S1-U): the packet keeps the TEID it came in (`teid`),
        // by which an eNB relays it to the UE's bearer (`gtp_encap`)
        pkt.encap = 0;
        if self.nodes[node].external && (pkt.dst == self.nodes[node].addr || self.ifaces.is_other_addr_of(node, pkt.dst)) {
            // a real host reassembles for itself (any of its addresses: a multihomed host has
            // one TUN device per interface)
            self.external_out.push((now, node as u32, pkt));
            return;
        }
        if pkt.dst != self.nodes[node].addr && !self.ifaces.is_other_addr_of(node, pkt.dst) {
            // a transparent proxy's interception (`tproxy.rs`), before forwarding (PREROUTING)
            if self.tproxy.is_some() && self.tproxy_input(now, node, &pkt) {
                return;
            }
            if pkt.ttl <= 1 {
                return self.raw_release(&pkt);
            }
            pkt.ttl -= 1;
            self.ip_output(now, node, pkt);
            return;
        }
        let pkt = if pkt.frag.is_some() {
            if let Body::Raw(r) = pkt.body {
                return self.raw_fragment_in(now, node, &pkt, r.key);
            }
            match self.nodes[node].reasm.push(now, pkt) {
                Some(p) => p,
                None => return,
            }
        } else {
            pkt
        };
        self.local_deliver(now, node, pkt);
    }

    /// A real fragment (emulation) for simulated host `node`: its bytes go to the reassembler
    /// (`raw_frag.rs`, RFC 791 §3.2 with Linux's limits) and its reference in the store with
    /// them; a datagram it completes enters the store whole and is delivered (a kernel's
    /// fragmented `ping -s 3000` is answered).
    #[cold]
    fn raw_fragment_in(&mut self, now: SimTime, node: usize, pkt: &Packet, key: u64) {
        let mut b = std::mem::take(&mut self.raw_scratch);
        b.clear();
        let ok = self.raw.get(key).is_some_and(|orig| celltcp_net::raw::wire_bytes(pkt, orig, &mut b));
        self.raw.release(key);
        let whole = if ok { self.raw_frag.push(now, node as u32, &b) } else { None };
        self.raw_scratch = b;
        let Some(whole) = whole else { return };
        let Ok(mut p) = celltcp_net::raw::parse_ipv4(&whole, self.raw.next_key(), pkt.created) else { return };
        self.raw.put(&whole);
        p.uid = self.fresh_uid();
        self.local_deliver(now, node, p);
    }

    // ---------------------------------------------------------------- flows

    /// Flow `f` starts: its interval meter (iperf) and its client app.
    fn flow_start(&mut self, now: SimTime, f: usize) {
        if let Some(m) = &self.flows[f].meter {
            self.q.push(m.next_tick(now, self.flows[f].interval), Ev::Meter(f as u32));
        }
        self.app_start(now, self.flows[f].client_app);
    }

    /// Adds `app` on `node`, started at `at` (not before now); its sockets feed no flow.
    pub(crate) fn add_app(&mut self, node: usize, app: AnyApp, at: SimTime) -> u32 {
        self.apps.push(AppSlot { app, node: node as u32, flow: NO_FLOW, timer_at: None, bind: None });
        let a = (self.apps.len() - 1) as u32;
        self.q.push(at, Ev::AppStart(a));
        a
    }

    /// [`World::capture`] of a packet starting on link direction `d` at `t`: a tunnelled one
    /// (GTP-U on S1-U) with the link's ends as the outer addresses.
    #[cold]
    #[inline(never)]
    fn capture_link(&mut self, p: usize, d: usize, t: SimTime, pkt: &Packet) {
        let dir = &self.dirs[d];
        let tun = (pkt.encap != 0).then(|| Tunnel { src: self.nodes[dir.from].addr, dst: self.nodes[dir.to].addr, teid: pkt.teid, pdcp_sn: None });
        self.capture(p, t, pkt, tun.as_ref());
    }

    /// [`World::capture`] of an untunnelled packet, out of the hot path.
    #[cold]
    #[inline(never)]
    pub(crate) fn capture_cold(&mut self, p: usize, t: SimTime, pkt: &Packet) {
        self.capture(p, t, pkt, None);
    }

    /// Writes `pkt` seen at `t` to capture `p`, inside GTP-U tunnel `tun` if given.
    #[inline]
    pub(crate) fn capture(&mut self, p: usize, t: SimTime, pkt: &Packet, tun: Option<&Tunnel>) {
        if let Body::Raw(r) = pkt.body {
            self.pcap_raw(p, t, pkt, r.key, tun);
            return;
        }
        // an MPTCP segment's option bytes are in the side table (`MptcpSideTable`), not the packet
        let mptcp = if pkt.mptcp_len > 0 { self.mptcp_opts.get(pkt) } else { Default::default() };
        let w = &mut self.pcaps[p].1;
        let _ = match tun {
            Some(tun) => w.write_tunnelled_mptcp(t, tun, pkt, &mptcp),
            None => w.write_packet_mptcp(t, pkt, &mptcp),
        };
    }

    /// Captures a real packet (its bytes as they are, the IPv4 header as the simulation has it).
    #[cold]
    fn pcap_raw(&mut self, p: usize, t: SimTime, pkt: &Packet, key: u64, tun: Option<&Tunnel>) {
        let mut buf = std::mem::take(&mut self.raw_scratch);
        buf.clear();
        if let Some(orig) = self.raw.get(key) {
            if celltcp_net::raw::wire_bytes(&celltcp_net::gtpu::inner(pkt), orig, &mut buf) {
                let w = &mut self.pcaps[p].1;
                let _ = match tun {
                    Some(tun) => w.write_tunnelled_bytes(t, tun, &buf),
                    None => w.write_bytes(t, &buf),
                };
            }
        }
        self.raw_scratch = buf;
    }

    pub(crate) fn finish(&mut self) {
        for (_, w) in &mut self.pcaps {
            let _ = w.flush();
        }
        // the X2-U captures, opened when a handover first forwarded data
        if let Some(MediumSlot { medium: AnyMedium::Lte(lte), .. }) = self.media.first_mut() {
            if let Some(x2) = lte.x2_pcap.as_mut() {
                for f in x2.flush() {
                    if !self.files.contains(&f) {
                        self.files.push(f);
                    }
                }
            }
        }
    }
}


/// A TCP sender limited to the flow's application rate, if it has one.
fn with_app_rate(rate: Option<u64>, start: SimTime, w: BulkSender) -> BulkSender {
    match rate {
        Some(r) => w.with_rate(r, start),
        None => w,
    }
}

/// A free-list store of packets in propagation.
#[derive(Default)]
struct Slab {
    items: Vec<Packet>,
    free: Vec<u32>,
}

impl Slab {
    fn put(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = p;
                i
            }
            None => {
                self.items.push(p);
                (self.items.len() - 1) as u32
            }
        }
    }
    fn take(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.items[i as usize]
    }
}

/// FNV-1a hashing for the small integer keys of the port and address maps (SipHash's DoS
/// resistance buys nothing inside a simulator and costs a few percent of a run).
#[derive(Default, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for b in bytes {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        self.0 = h;
    }
    // Whole integers in one step (the map keys are addresses, node indices and ports): one
    // multiply instead of one per byte. Only lookups use these maps, never their iteration order.
    #[inline]
    fn write_u16(&mut self, x: u16) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        let h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        self.0 = (h ^ x).wrapping_mul(0x0000_0100_0000_01B3);
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fnv>>;


fn is_data(p: &Packet) -> bool {
    match &p.body {
        Body::Tcp(s) => s.payload_len > 0,
        Body::Udp(_) => true,
        Body::Icmp(_) | Body::Raw(_) => false,
    }
}



/// The TCP configuration of a bulk or iperf flow.
fn tcp_config(f: &crate::config::FlowCfg, pf: &crate::plan::PlanFlow, seed: u64, record_rtt: bool) -> TcpConfig {
    let mut c = TcpConfig { cc: pf.cc, ..TcpConfig::default() };
    c.cc_seed = component_id("flow", &pf.name) ^ seed;
    if let Some(m) = f.mss {
        c.mss = m;
    }
    if let Some(w) = f.window {
        (c.snd_buf, c.rcv_buf) = BufSize::linux_sockopt(w.0);
    }
    if let Some(w) = f.window_exact {
        c.snd_buf = BufSize::Fixed(w.0);
        c.rcv_buf = BufSize::Fixed(w.0);
    }
    if let Some(v) = f.sack {
        c.sack = v;
    }
    if let Some(v) = f.timestamps {
        c.timestamps = v;
    }
    if let Some(v) = f.delayed_ack {
        c.delayed_ack = v;
    }
    if let Some(v) = f.delayed_ack_timeout {
        c.delayed_ack_timeout = Some(v.0);
    }
    if let Some(v) = f.quickack {
        c.quickack_segments = v;
    }
    if let Some(v) = f.nagle {
        c.nagle = v;
    }
    if let Some(v) = f.pacing {
        c.pacing = v;
    }
    if let Some(v) = f.pacing_quantum {
        c.pacing_quantum = v;
    }
    if let Some(v) = f.initial_cwnd {
        c.initial_cwnd_pkts = v;
    }
    if let Some(v) = f.min_rto {
        c.min_rto = v.0;
    }
    if let Some(v) = f.recovery {
        c.recovery = v;
    }
    if let Some(v) = f.ecn {
        c.ecn = v;
    }
    c.record_rtt_samples = record_rtt;
    c
}
