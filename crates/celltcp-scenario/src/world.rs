//! The run loop: builds the topology from a [`Plan`], then pops events in `(time, seq)` order
//! and dispatches each with one `match`. Components are addressed by index; protocol code is
//! sans-IO (it takes `now` and returns what to send), and this file is the only place where
//! packets move between them.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use celltcp_apps::bulk::{BulkSender, Sink};
use celltcp_apps::interval::IntervalMeter;
use celltcp_apps::ping::Pinger;
use celltcp_apps::udp::{CbrSender, UdpReceiver};
use celltcp_engine::rng::component_id;
use celltcp_engine::{component_rng, EventQueue, SimDuration, SimRng, SimTime};
use celltcp_net::frag::{fragment, ReassemblyConfig, Reassembler};
use celltcp_net::link::{AnyLink, Delivery, Link, LinkConfig};
use celltcp_net::loss::LossModel;
use celltcp_net::pcap::{PcapWriter, Snaplen};
use celltcp_net::queue::AnyQueue;
use celltcp_net::trace_link::{TraceLink, TraceLinkConfig};
use celltcp_net::{Body, IcmpEcho, Ipv4, Packet, TcpSegment, UdpDatagram};
use celltcp_tcp::{seq, BufSize, TcpConfig, TcpEndpoint};
use rand::Rng;

use crate::cellular::{LteState, RadioDir, GTPU_OVERHEAD_BYTES};
use crate::config::{AppKind, Config};
use crate::plan::{DirKind, Plan};
use celltcp_lte::ran::Ran;
use celltcp_lte::Direction;

/// Events of the run loop.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// A link direction's transmitter is free and packets wait (or a trace link has a delivery
    /// opportunity).
    LinkService(u32),
    /// A packet (a slot of the packet slab) arrives at a node.
    Arrive(u32, u32),
    /// A TCP connection's timer may be due.
    ConnTimer(u32),
    FlowStart(u32),
    UdpSend(u32),
    PingSend(u32),
    IperfTick(u32),
    Sample,
    /// The LTE RAN has work in the TTI starting now.
    LteTti,
}

pub(crate) struct Node {
    pub name: String,
    pub addr: Ipv4,
    reasm: Reassembler,
    ident: u16,
}

pub(crate) struct LinkDir {
    pub name: String,
    pub link: AnyLink,
    pub from: usize,
    pub to: usize,
    pub mtu: u32,
    pub pcap: Option<usize>,
    pub drops_pkts: u64,
    pub drops_bytes: u64,
    pub lost_pkts: u64,
    pub delivered_pkts: u64,
    pub rate_bps: Option<u64>,
    pub delay: SimDuration,
    /// The LTE radio between an eNB and a UE: packets go to the RAN, not to `link`.
    pub radio: Option<RadioDir>,
    /// An S1-U link: packets carry GTP-U encapsulation across it.
    pub s1u: bool,
}

/// What a TCP connection's application does.
pub(crate) enum ConnApp {
    Writer(BulkSender),
    Sink(Sink),
}

pub(crate) struct Conn {
    pub ep: TcpEndpoint,
    node: usize,
    remote: Ipv4,
    pub flow: usize,
    pub app: ConnApp,
    timer_at: Option<SimTime>,
    /// The sender of a flow with `trace_segments`: its segments and the ACKs it receives go
    /// to the flow's [`SegTrace`].
    traced: bool,
}

#[derive(Clone, Copy)]
enum PortUse {
    /// A server waiting for the SYN of `flow`.
    Listen(usize),
    Conn(usize),
    Udp(usize),
}

pub(crate) enum FlowState {
    Tcp {
        /// Connection ids: client (at `from`) and server (at `to`), once they exist.
        client: Option<usize>,
        server: Option<usize>,
        /// True when the server sends (`iperf -R`).
        reverse: bool,
        meter: Option<IntervalMeter>,
        interval: SimDuration,
        stop_at: Option<SimTime>,
    },
    Udp {
        sender: CbrSender,
        recv: UdpReceiver,
    },
    Ping {
        pinger: Pinger,
    },
}

/// Per-flow measurements taken in the network (one-way delay, jitter, drops).
#[derive(Default)]
pub(crate) struct FlowNet {
    pub owd_ms: Vec<f32>,
    prev_transit: Option<i128>,
    jitter_ns: f64,
    pub data_pkts_sent: u64,
    pub data_pkts_dropped: u64,
    pub first_data_at: Option<SimTime>,
    pub last_data_at: Option<SimTime>,
}

impl FlowNet {
    /// RFC 3550 §6.4.1 interarrival jitter over the flow's data packets.
    fn on_data_arrival(&mut self, now: SimTime, created: SimTime) {
        let transit = now.as_nanos() as i128 - created.as_nanos() as i128;
        self.owd_ms.push((transit as f64 * 1e-6) as f32);
        if let Some(prev) = self.prev_transit {
            let d = (transit - prev).abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.prev_transit = Some(transit);
        self.first_data_at.get_or_insert(now);
        self.last_data_at = Some(now);
    }
    pub fn jitter_ms(&self) -> f64 {
        self.jitter_ns * 1e-6
    }
}

pub(crate) struct Flow {
    pub name: String,
    pub app: AppKind,
    pub src: usize,
    pub dst: usize,
    pub start: SimTime,
    pub state: FlowState,
    pub net: FlowNet,
    pub rtt_ms: Vec<f32>,
    pub rtt_time: Vec<f32>,
    rng: SimRng,
    client_port: u16,
    server_port: u16,
    pub tcp_cfg: Option<TcpConfig>,
    pub cc: celltcp_tcp::cc::CcKind,
    pub completed_at: Option<SimTime>,
    pub bytes_limit: Option<u64>,
    /// Application rate of a TCP sender (`rate` on bulk/iperf flows).
    app_rate: Option<u64>,
    /// Application write size (`iperf3 -l`).
    chunk: u64,
    /// The sender's segments and the ACKs it receives, when `trace_segments` is on.
    pub seg_trace: Option<Box<SegTrace>>,
}

/// The per-segment trace of a TCP flow's sender (`trace_segments = true`): what tcptrace and
/// Wireshark's "Stevens" graph plot. Sequence numbers are byte offsets of the stream's data
/// (the first data byte is 0, the SYN at −1), unwrapped to 64 bits with [`seq::unwrap`]
/// (RFC 9293 §3.4), so the trace of a flow longer than 4 GB stays monotone.
pub(crate) struct SegTrace {
    /// The sending connection's initial sequence number (the wire value of its SYN).
    isn: u32,
    /// The latest absolute offset seen, the reference for unwrapping (RFC 9293 §3.4: values
    /// in use are within 2^31 of it).
    reference: u64,
    /// The sender's `retransmitted_segments` after the last segment it sent: a segment after
    /// which it has grown is a retransmission.
    rtx_seen: u64,
    /// Rows are kept from `from` to `until` (`trace_window`), the whole run without one.
    from: SimTime,
    until: SimTime,
    pub seg_time: Vec<f64>,
    pub seg_seq: Vec<i64>,
    pub seg_len: Vec<i64>,
    pub seg_rtx: Vec<i64>,
    pub ack_time: Vec<f64>,
    pub ack: Vec<i64>,
    pub ack_sack: Vec<i64>,
}

impl SegTrace {
    fn new(from: SimTime, until: SimTime) -> Self {
        SegTrace {
            isn: 0,
            reference: 0,
            rtx_seen: 0,
            from,
            until,
            seg_time: Vec::new(),
            seg_seq: Vec::new(),
            seg_len: Vec::new(),
            seg_rtx: Vec::new(),
            ack_time: Vec::new(),
            ack: Vec::new(),
            ack_sack: Vec::new(),
        }
    }

    /// The stream offset of wire sequence number `wire` (first data byte 0).
    fn offset(&mut self, wire: u32) -> i64 {
        let abs = seq::unwrap(self.isn, wire, self.reference);
        self.reference = self.reference.max(abs);
        abs as i64 - 1
    }

    /// A segment the sender transmitted; `rtx_total` is its `retransmitted_segments` after it.
    fn on_sent(&mut self, now: SimTime, seg: &TcpSegment, rtx_total: u64) {
        let rtx = rtx_total > self.rtx_seen;
        self.rtx_seen = rtx_total;
        if seg.payload_len == 0 {
            return;
        }
        // outside the window too: the unwrapping reference must follow the stream
        let off = self.offset(seg.seq);
        if now < self.from || now > self.until {
            return;
        }
        self.seg_time.push(now.as_secs_f64());
        self.seg_seq.push(off);
        self.seg_len.push(seg.payload_len as i64);
        self.seg_rtx.push(rtx as i64);
    }

    /// A segment the sender received: its cumulative ACK and the right edge of its highest
    /// SACK block (RFC 2018 §3), or the ACK again when it carries none.
    fn on_ack(&mut self, now: SimTime, seg: &TcpSegment) {
        if !seg.flags.ack() || now < self.from || now > self.until {
            return;
        }
        let ack = self.offset(seg.ack);
        let mut sack = ack;
        for b in seg.options.sack_blocks() {
            sack = sack.max(self.offset(b.right));
        }
        self.ack_time.push(now.as_secs_f64());
        self.ack.push(ack);
        self.ack_sack.push(sack);
    }
}

/// Columnar time series being collected.
#[derive(Default)]
pub(crate) struct Series {
    pub tcp_time: Vec<f64>,
    pub tcp_flow: Vec<i64>,
    pub tcp_cwnd: Vec<f64>,
    pub tcp_ssthresh: Vec<f64>,
    pub tcp_srtt_ms: Vec<f64>,
    pub tcp_inflight: Vec<f64>,
    pub tcp_pacing_bps: Vec<f64>,
    pub tcp_delivered: Vec<f64>,
    pub q_time: Vec<f64>,
    pub q_link: Vec<i64>,
    pub q_bytes: Vec<f64>,
    pub q_pkts: Vec<f64>,
}

pub(crate) struct World {
    pub(crate) q: EventQueue<Ev>,
    pub nodes: Vec<Node>,
    pub dirs: Vec<LinkDir>,
    routes: celltcp_net::routing::Routes,
    addr_to_node: FastMap<Ipv4, usize>,
    ports: FastMap<(usize, u16), PortUse>,
    pub conns: Vec<Conn>,
    pub flows: Vec<Flow>,
    pub pcaps: Vec<(String, PcapWriter<BufWriter<File>>)>,
    pub series: Series,
    pub end: SimTime,
    sample_interval: SimDuration,
    record_rtt: bool,
    next_uid: u64,
    scratch: Vec<Delivery>,
    /// Packets in flight between links and nodes; events carry their slot, so the event queue
    /// moves 32-byte entries rather than whole packets.
    slab: Slab,
    drop_scratch: Vec<Packet>,
    /// Datagrams (by uid) one of whose fragments was lost: a datagram counts once in a flow's
    /// `data_pkts_dropped`, however many of its fragments are lost.
    lost_fragmented: FastMap<u64, ()>,
    frag_out: Vec<Packet>,
    rtt_scratch: Vec<SimDuration>,
    pub files: Vec<String>,
    pub(crate) lte: Option<LteState>,
}

impl World {
    pub fn build(cfg: &Config, mut plan: Plan, seed: u64, out_dir: Option<&Path>) -> std::io::Result<World> {
        let nodes: Vec<Node> = plan
            .nodes
            .iter()
            .map(|n| Node { name: n.name.clone(), addr: n.addr, reasm: Reassembler::new(ReassemblyConfig::default()), ident: 0 })
            .collect();
        let addr_to_node = nodes.iter().enumerate().map(|(i, n)| (n.addr, i)).collect();
        let mut pcaps = Vec::new();
        let mut files = Vec::new();
        let mut pcap_of_link = vec![None; plan.links.len()];
        if let Some(dir) = out_dir {
            for (i, l) in plan.links.iter().enumerate() {
                if l.pcap {
                    let pdir = dir.join("pcap");
                    std::fs::create_dir_all(&pdir)?;
                    let fname = format!("{}.pcap", sanitize(&l.name));
                    let w = PcapWriter::new(BufWriter::new(File::create(pdir.join(&fname))?), Snaplen::Headers)?;
                    pcap_of_link[i] = Some(pcaps.len());
                    pcaps.push((l.name.clone(), w));
                    files.push(format!("pcap/{fname}"));
                }
            }
        }
        let dirs: Vec<LinkDir> = plan
            .dirs
            .iter()
            .map(|d| {
                let rng = component_rng(seed, component_id("link", &d.name));
                let queue = AnyQueue::new(&d.queue);
                let loss = LossModel::new(d.loss);
                let link = match &d.trace {
                    Some(ops) => AnyLink::Trace(TraceLink::new(
                        TraceLinkConfig { opportunities_ms: ops.clone(), delay: d.delay, mtu: d.mtu },
                        queue,
                        loss,
                        rng,
                    )),
                    // A radio direction never uses its link (the RAN carries its packets).
                    None => AnyLink::Rate(Link::new(LinkConfig { rate_bps: d.rate_bps.unwrap_or(u64::MAX / 2), delay: d.delay, mtu: d.mtu }, queue, loss, rng)),
                };
                let radio = match d.kind {
                    DirKind::Radio { ue, downlink } => Some(RadioDir { ue, dir: if downlink { Direction::Downlink } else { Direction::Uplink } }),
                    _ => None,
                };
                LinkDir {
                    name: d.name.clone(),
                    link,
                    from: d.from,
                    to: d.to,
                    mtu: d.mtu,
                    pcap: pcap_of_link[d.link],
                    drops_pkts: 0,
                    drops_bytes: 0,
                    lost_pkts: 0,
                    delivered_pkts: 0,
                    rate_bps: d.rate_bps,
                    delay: d.delay,
                    radio,
                    s1u: d.kind == DirKind::S1u,
                }
            })
            .collect();
        let lte = plan.lte.take().map(|pl| {
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
            LteState::new(ran, pl.ue_node, pl.enb_node, pl.ue_dirs, &pl.plan.enbs)
        });
        let mut q = EventQueue::new();
        let mut ports = FastMap::default();
        let mut flows = Vec::new();
        let end = SimTime::ZERO + cfg.duration.0;
        for (i, pf) in plan.flows.iter().enumerate() {
            let f = &pf.cfg;
            let start = SimTime::ZERO + f.start.map_or(SimDuration::ZERO, |d| d.0);
            let client_port = 40_000 + i as u16;
            let server_port = 5_201 + i as u16;
            let mut tcp_cfg = None;
            let state = match f.app {
                AppKind::Bulk | AppKind::Iperf => {
                    let mut c = TcpConfig { cc: pf.cc, ..TcpConfig::default() };
                    c.cc_seed = component_id("flow", &pf.name) ^ seed;
                    if let Some(m) = f.mss {
                        c.mss = m;
                    }
                    if let Some(w) = f.window {
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
                    if let Some(v) = f.pacing {
                        c.pacing = v;
                    }
                    if let Some(v) = f.initial_cwnd {
                        c.initial_cwnd_pkts = v;
                    }
                    if let Some(v) = f.min_rto {
                        c.min_rto = v.0;
                    }
                    if let Some(v) = f.ecn {
                        c.ecn = v;
                    }
                    c.record_rtt_samples = cfg.record_rtt;
                    tcp_cfg = Some(c);
                    ports.insert((pf.dst, server_port), PortUse::Listen(i));
                    let iperf = f.app == AppKind::Iperf;
                    let interval = f.interval.map_or(SimDuration::from_secs(1), |d| d.0);
                    FlowState::Tcp {
                        client: None,
                        server: None,
                        reverse: f.reverse.unwrap_or(false),
                        meter: iperf.then(|| IntervalMeter::new(start)),
                        interval,
                        stop_at: f.duration.map(|d| start + d.0),
                    }
                }
                AppKind::Udp => {
                    ports.insert((pf.dst, server_port), PortUse::Udp(i));
                    let rate = f.rate.map_or(1_000_000, |r| r.0);
                    let size = f.size.map_or(1448, |s| s.0 as u32);
                    let stop = f.duration.map_or(end, |d| start + d.0);
                    FlowState::Udp { sender: CbrSender::new(size, rate, stop), recv: UdpReceiver::default() }
                }
                AppKind::Ping => {
                    let iv = f.interval.map_or(SimDuration::from_secs(1), |d| d.0);
                    FlowState::Ping { pinger: Pinger::new(iv, f.count, f.size.map_or(56, |s| s.0 as u32)) }
                }
            };
            q.push(start, Ev::FlowStart(i as u32));
            flows.push(Flow {
                name: pf.name.clone(),
                app: f.app,
                src: pf.src,
                dst: pf.dst,
                start,
                state,
                net: FlowNet::default(),
                rtt_ms: Vec::new(),
                rtt_time: Vec::new(),
                rng: component_rng(seed, component_id("flow", &pf.name)),
                client_port,
                server_port,
                tcp_cfg,
                cc: pf.cc,
                completed_at: None,
                bytes_limit: f.bytes.map(|b| b.0),
                app_rate: if matches!(f.app, AppKind::Bulk | AppKind::Iperf) { f.rate.map(|r| r.0) } else { None },
                chunk: f.length.map_or(if f.app == AppKind::Iperf { 128 * 1024 } else { 64 * 1024 }, |l| l.0),
                seg_trace: f.trace_segments.unwrap_or(false).then(|| {
                    let (from, until) = f.trace_window.map_or((SimTime::ZERO, end), |[a, b]| (SimTime::ZERO + a.0, SimTime::ZERO + b.0));
                    Box::new(SegTrace::new(from, until))
                }),
            });
        }
        q.push(SimTime::ZERO, Ev::Sample);
        let mut lte = lte;
        if let Some(t) = lte.as_mut().and_then(|l| l.first_tti()) {
            q.push(t, Ev::LteTti);
        }
        Ok(World {
            q,
            nodes,
            dirs,
            routes: plan.routes,
            addr_to_node,
            ports,
            conns: Vec::new(),
            flows,
            pcaps,
            series: Series::default(),
            end,
            sample_interval: cfg.sample_interval.0,
            record_rtt: cfg.record_rtt,
            next_uid: 0,
            scratch: Vec::new(),
            slab: Slab::default(),
            drop_scratch: Vec::new(),
            lost_fragmented: FastMap::default(),
            frag_out: Vec::new(),
            rtt_scratch: Vec::new(),
            files,
            lte,
        })
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
            Ev::ConnTimer(c) => {
                let c = c as usize;
                if self.conns[c].timer_at == Some(now) {
                    self.conns[c].timer_at = None;
                }
                self.conns[c].ep.on_timeout(now);
                self.service_conn(now, c);
            }
            Ev::FlowStart(f) => self.flow_start(now, f as usize),
            Ev::UdpSend(f) => self.udp_send(now, f as usize),
            Ev::PingSend(f) => self.ping_send(now, f as usize),
            Ev::IperfTick(f) => self.iperf_tick(now, f as usize),
            Ev::Sample => self.sample(now),
            Ev::LteTti => self.lte_tti(now),
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

    fn alloc_packet(&mut self, now: SimTime, node: usize, dst: Ipv4, body: Body) -> Packet {
        let n = &mut self.nodes[node];
        n.ident = n.ident.wrapping_add(1);
        self.next_uid += 1;
        Packet::new(self.next_uid, n.addr, dst, n.ident, now, body)
    }

    /// Sends `pkt` from `node` towards its destination (the IP output path).
    fn ip_output(&mut self, now: SimTime, node: usize, pkt: Packet) {
        let Some(&dst) = self.addr_to_node.get(&pkt.dst) else { return };
        if dst == node {
            self.local_deliver(now, node, pkt);
            return;
        }
        let Some(d) = self.routes.next_hop(node, dst) else { return };
        // On S1-U the GTP-U headers count against the MTU: the inner packet is fragmented to
        // leave room for them.
        let encap = if self.dirs[d].s1u { GTPU_OVERHEAD_BYTES } else { 0 };
        let mtu = self.dirs[d].mtu - encap;
        if pkt.size() <= mtu {
            self.dir_send(now, d, pkt, encap);
        } else {
            let mut out = std::mem::take(&mut self.frag_out);
            out.clear();
            if fragment(pkt, mtu, &mut out).is_ok() {
                for p in out.drain(..) {
                    self.dir_send(now, d, p, encap);
                }
            } else {
                self.count_drop(d, &pkt);
            }
            self.frag_out = out;
        }
    }

    #[inline]
    fn dir_send(&mut self, now: SimTime, d: usize, mut pkt: Packet, encap: u32) {
        if let Some(r) = self.dirs[d].radio {
            self.radio_send(now, d, r, pkt);
        } else {
            pkt.encap = encap as u16;
            self.link_enqueue(now, d, pkt);
        }
    }

    /// Offers `pkt` to link direction `d`. A packet that starts at once comes back as a
    /// delivery (handled as in [`World::link_service`]); a busy link may ask for a service call.
    fn link_enqueue(&mut self, now: SimTime, d: usize, pkt: Packet) {
        let mut out = std::mem::take(&mut self.scratch);
        match self.dirs[d].link.try_enqueue(now, pkt, &mut out) {
            Ok(Some(t)) => self.q.push(t, Ev::LinkService(d as u32)),
            Ok(None) => {}
            Err(dropped) => self.count_drop(d, &dropped),
        }
        self.take_deliveries(d, &mut out);
        self.scratch = out;
    }

    pub(crate) fn count_drop(&mut self, d: usize, pkt: &Packet) {
        self.dirs[d].drops_pkts += 1;
        self.dirs[d].drops_bytes += pkt.size() as u64;
        self.count_loss(pkt);
    }

    /// Counts a data packet of a flow that will not arrive: a whole datagram once, even when
    /// several of its IP fragments are lost (`data_pkts_sent` counts datagrams too).
    pub(crate) fn count_loss(&mut self, pkt: &Packet) {
        if let Some(f) = self.flow_of(pkt) {
            if is_data(pkt) && (pkt.frag.is_none() || self.lost_fragmented.insert(pkt.uid, ()).is_none()) {
                self.flows[f].net.data_pkts_dropped += 1;
            }
        }
    }

    /// A link direction's transmitter is free: it starts its next packet. The links ask for a
    /// service call only when none is pending, so there is exactly one event per call.
    fn link_service(&mut self, now: SimTime, d: usize) {
        let mut out = std::mem::take(&mut self.scratch);
        let mut drops = std::mem::take(&mut self.drop_scratch);
        let next = self.dirs[d].link.service_with_drops(now, &mut out, &mut drops);
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
        // By reference: each packet is copied once, into the slab (draining would copy the
        // whole delivery out first).
        for del in out.iter() {
            if let Some(p) = self.dirs[d].pcap {
                let _ = self.pcaps[p].1.write_packet(del.tx_start, &del.pkt);
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

    pub(crate) fn arrive(&mut self, now: SimTime, node: usize, mut pkt: Packet) {
        pkt.encap = 0;
        if pkt.dst != self.nodes[node].addr {
            if pkt.ttl <= 1 {
                return;
            }
            pkt.ttl -= 1;
            self.ip_output(now, node, pkt);
            return;
        }
        let pkt = if pkt.frag.is_some() {
            match self.nodes[node].reasm.push(now, pkt) {
                Some(p) => p,
                None => return,
            }
        } else {
            pkt
        };
        self.local_deliver(now, node, pkt);
    }

    /// Which flow a packet belongs to, from its ports (each flow has its own port pair).
    fn flow_of(&self, pkt: &Packet) -> Option<usize> {
        let (sp, dp) = match &pkt.body {
            Body::Tcp(s) => (s.src_port, s.dst_port),
            Body::Udp(u) => (u.src_port, u.dst_port),
            Body::Icmp(i) => return Some(i.ident as usize).filter(|f| *f < self.flows.len()),
        };
        let f = if (40_000..40_000 + self.flows.len() as u32).contains(&(sp as u32)) {
            sp - 40_000
        } else if (40_000..40_000 + self.flows.len() as u32).contains(&(dp as u32)) {
            dp - 40_000
        } else {
            return None;
        };
        Some(f as usize)
    }

    fn local_deliver(&mut self, now: SimTime, node: usize, pkt: Packet) {
        match pkt.body {
            Body::Tcp(seg) => self.tcp_input(now, node, &pkt, seg),
            Body::Udp(u) => {
                if let Some(&PortUse::Udp(f)) = self.ports.get(&(node, u.dst_port)) {
                    let fl = &mut self.flows[f];
                    fl.net.on_data_arrival(now, pkt.created);
                    if let FlowState::Udp { recv, .. } = &mut fl.state {
                        recv.on_datagram(now, u.seq, u.sent_at, u.payload_len);
                    }
                }
            }
            Body::Icmp(icmp) => {
                if !icmp.reply {
                    let reply = IcmpEcho { reply: true, ..icmp };
                    let p = self.alloc_packet(now, node, pkt.src, Body::Icmp(reply));
                    self.ip_output(now, node, p);
                } else if let Some(f) = Some(icmp.ident as usize).filter(|f| *f < self.flows.len()) {
                    if let FlowState::Ping { pinger } = &mut self.flows[f].state {
                        pinger.on_reply(now, icmp.seq, icmp.sent_at);
                        let rtt = (now - icmp.sent_at).as_millis_f64();
                        self.flows[f].rtt_ms.push(rtt as f32);
                        self.flows[f].rtt_time.push(now.as_secs_f64() as f32);
                    }
                }
            }
        }
    }

    // ---------------------------------------------------------------- TCP

    fn tcp_input(&mut self, now: SimTime, node: usize, pkt: &Packet, seg: TcpSegment) {
        let Some(&pu) = self.ports.get(&(node, seg.dst_port)) else { return };
        let c = match pu {
            PortUse::Conn(c) => c,
            PortUse::Listen(f) => {
                if !seg.flags.syn() || seg.flags.ack() {
                    return;
                }
                let fl = &mut self.flows[f];
                let cfg = fl.tcp_cfg.unwrap();
                let iss: u32 = fl.rng.gen();
                let ep = TcpEndpoint::accept(cfg, seg.dst_port, seg.src_port, iss, &seg, now);
                let FlowState::Tcp { reverse, stop_at, .. } = &fl.state else { unreachable!() };
                if let (true, Some(tr)) = (*reverse, fl.seg_trace.as_mut()) {
                    tr.isn = iss;
                }
                let app = if *reverse { ConnApp::Writer(with_app_rate(fl.app_rate, fl.start, BulkSender::new(fl.bytes_limit, *stop_at, fl.chunk))) } else { ConnApp::Sink(Sink::default()) };
                let c = self.conns.len();
                let traced = fl.seg_trace.is_some() && matches!(app, ConnApp::Writer(_));
                self.conns.push(Conn { ep, node, remote: pkt.src, flow: f, app, timer_at: None, traced });
                if let FlowState::Tcp { server, .. } = &mut self.flows[f].state {
                    *server = Some(c);
                }
                self.ports.insert((node, seg.dst_port), PortUse::Conn(c));
                self.service_conn(now, c);
                return;
            }
            PortUse::Udp(_) => return,
        };
        if seg.payload_len > 0 {
            let f = self.conns[c].flow;
            self.flows[f].net.on_data_arrival(now, pkt.created);
        }
        if self.conns[c].traced {
            self.trace_ack(now, c, &seg);
        }
        let ce = pkt.ecn == celltcp_net::Ecn::Ce;
        self.conns[c].ep.on_segment(now, &seg, ce);
        self.service_conn(now, c);
    }

    fn write_chunk(&self, f: usize) -> u64 {
        self.flows[f].chunk
    }

    /// Sends every segment connection `c` may send now.
    fn transmit_conn(&mut self, now: SimTime, c: usize) {
        let (node, remote, f) = (self.conns[c].node, self.conns[c].remote, self.conns[c].flow);
        let traced = self.conns[c].traced;
        while let Some(seg) = self.conns[c].ep.poll_transmit(now) {
            if seg.payload_len > 0 {
                self.flows[f].net.data_pkts_sent += 1;
            }
            if traced {
                self.trace_sent(now, c, f, &seg);
            }
            let mut p = self.alloc_packet(now, node, remote, Body::Tcp(seg));
            if seg.ect {
                p.ecn = celltcp_net::Ecn::Ect0; // RFC 3168 §6.1.2: ECN-capable transport
            }
            self.ip_output(now, node, p);
        }
    }

    /// Records a segment of a traced sender (out of line: the untraced path stays small).
    #[inline(never)]
    fn trace_sent(&mut self, now: SimTime, c: usize, f: usize, seg: &TcpSegment) {
        let rtx_total = self.conns[c].ep.stats().retransmitted_segments;
        if let Some(tr) = self.flows[f].seg_trace.as_mut() {
            tr.on_sent(now, seg, rtx_total);
        }
    }

    /// Records a segment a traced sender received.
    #[inline(never)]
    fn trace_ack(&mut self, now: SimTime, c: usize, seg: &TcpSegment) {
        let f = self.conns[c].flow;
        if let Some(tr) = self.flows[f].seg_trace.as_mut() {
            tr.on_ack(now, seg);
        }
    }

    /// After any change to a connection: run its application, send what it may send, and
    /// re-arm its timer.
    fn service_conn(&mut self, now: SimTime, c: usize) {
        {
            let conn = &mut self.conns[c];
            match &mut conn.app {
                ConnApp::Writer(w) => w.pump(now, &mut conn.ep),
                ConnApp::Sink(s) => s.pump(now, &mut conn.ep),
            }
        }
        let f = self.conns[c].flow;
        self.transmit_conn(now, c);
        // the sender may have room again after sending (e.g. a window update)
        let conn = &mut self.conns[c];
        if let ConnApp::Writer(w) = &mut conn.app {
            let before = conn.ep.send_buffer_free();
            w.pump(now, &mut conn.ep);
            if conn.ep.send_buffer_free() != before {
                self.transmit_conn(now, c);
            }
        }
        if self.record_rtt {
            let mut v = std::mem::take(&mut self.rtt_scratch);
            self.conns[c].ep.drain_rtt_samples(&mut v);
            let t = now.as_secs_f64() as f32;
            for r in v.drain(..) {
                self.flows[f].rtt_ms.push(r.as_millis_f64() as f32);
                self.flows[f].rtt_time.push(t);
            }
            self.rtt_scratch = v;
        }
        // completion of a finite transfer: the receiving app has read everything
        if self.flows[f].completed_at.is_none() {
            if let (Some(limit), ConnApp::Sink(s)) = (self.flows[f].bytes_limit, &self.conns[c].app) {
                if s.received() >= limit {
                    self.flows[f].completed_at = Some(now);
                }
            }
        }
        let app_due = match &self.conns[c].app {
            // Only a wait for the rate: a writer blocked by a full socket buffer is woken by
            // the ACKs that free it.
            ConnApp::Writer(w) => w.next_write_at().filter(|&t| t > now),
            ConnApp::Sink(_) => None,
        };
        let due = match (self.conns[c].ep.next_deadline(), app_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(t) = due {
            let t = t.max(now);
            if self.conns[c].timer_at.is_none_or(|s| t < s) {
                self.conns[c].timer_at = Some(t);
                self.q.push(t, Ev::ConnTimer(c as u32));
            }
        }
    }

    // ---------------------------------------------------------------- applications

    fn flow_start(&mut self, now: SimTime, f: usize) {
        let fl = &mut self.flows[f];
        let (src, dst_addr) = (fl.src, self.nodes[fl.dst].addr);
        match &mut fl.state {
            FlowState::Tcp { client, reverse, stop_at, meter, interval, .. } => {
                let cfg = fl.tcp_cfg.unwrap();
                let iss: u32 = fl.rng.gen();
                let ep = TcpEndpoint::connect(cfg, fl.client_port, fl.server_port, iss, now);
                if let (false, Some(tr)) = (*reverse, fl.seg_trace.as_mut()) {
                    tr.isn = iss;
                }
                let app = if *reverse { ConnApp::Sink(Sink::default()) } else { ConnApp::Writer(with_app_rate(fl.app_rate, fl.start, BulkSender::new(fl.bytes_limit, *stop_at, 0))) };
                let c = self.conns.len();
                *client = Some(c);
                let iv = *interval;
                let has_meter = meter.is_some();
                let port = fl.client_port;
                let traced = fl.seg_trace.is_some() && matches!(app, ConnApp::Writer(_));
                self.conns.push(Conn { ep, node: src, remote: dst_addr, flow: f, app, timer_at: None, traced });
                let chunk = self.write_chunk(f);
                if let ConnApp::Writer(w) = &mut self.conns[c].app {
                    *w = BulkSender::new(self.flows[f].bytes_limit, stop_at_of(&self.flows[f]), chunk);
                    if let Some(r) = self.flows[f].app_rate {
                        *w = w.clone().with_rate(r, self.flows[f].start);
                    }
                }
                self.ports.insert((src, port), PortUse::Conn(c));
                if has_meter {
                    self.q.push(now + iv, Ev::IperfTick(f as u32));
                }
                self.service_conn(now, c);
            }
            FlowState::Udp { .. } => self.udp_send(now, f),
            FlowState::Ping { .. } => self.ping_send(now, f),
        }
    }

    fn udp_send(&mut self, now: SimTime, f: usize) {
        let fl = &mut self.flows[f];
        let FlowState::Udp { sender, .. } = &mut fl.state else { return };
        let Some(seq) = sender.next(now) else { return };
        let (gap, size) = (sender.gap, sender.size);
        let d = UdpDatagram { src_port: fl.client_port, dst_port: fl.server_port, payload_len: size, seq, sent_at: now };
        let (src, dst) = (fl.src, self.nodes[fl.dst].addr);
        fl.net.data_pkts_sent += 1;
        let p = self.alloc_packet(now, src, dst, Body::Udp(d));
        self.ip_output(now, src, p);
        self.q.push(now + gap, Ev::UdpSend(f as u32));
    }

    fn ping_send(&mut self, now: SimTime, f: usize) {
        let fl = &mut self.flows[f];
        let FlowState::Ping { pinger } = &mut fl.state else { return };
        let Some(seq) = pinger.next_request() else { return };
        let echo = IcmpEcho { reply: false, ident: f as u16, seq, payload_len: pinger.payload, sent_at: now };
        let iv = pinger.interval;
        let (src, dst) = (fl.src, self.nodes[fl.dst].addr);
        let p = self.alloc_packet(now, src, dst, Body::Icmp(echo));
        self.ip_output(now, src, p);
        self.q.push(now + iv, Ev::PingSend(f as u32));
    }

    fn iperf_tick(&mut self, now: SimTime, f: usize) {
        let (recv_bytes, retx) = self.tcp_progress(f);
        let fl = &mut self.flows[f];
        let FlowState::Tcp { meter: Some(m), interval, stop_at, .. } = &mut fl.state else { return };
        m.tick(now, recv_bytes, retx);
        let next = now + *interval;
        if stop_at.is_none_or(|s| next <= s + SimDuration::from_millis(1)) {
            self.q.push(next, Ev::IperfTick(f as u32));
        }
    }

    /// (bytes read by the receiving application, sender retransmitted segments) of a TCP flow.
    pub(crate) fn tcp_progress(&self, f: usize) -> (u64, u64) {
        let (snd, rcv) = self.tcp_roles(f);
        let recv = rcv.map_or(0, |c| self.conns[c].ep.stats().bytes_delivered);
        let retx = snd.map_or(0, |c| self.conns[c].ep.stats().retransmitted_segments);
        (recv, retx)
    }

    /// (sending connection, receiving connection) of a TCP flow.
    pub(crate) fn tcp_roles(&self, f: usize) -> (Option<usize>, Option<usize>) {
        match &self.flows[f].state {
            FlowState::Tcp { client, server, reverse, .. } => {
                if *reverse {
                    (*server, *client)
                } else {
                    (*client, *server)
                }
            }
            _ => (None, None),
        }
    }

    fn sample(&mut self, now: SimTime) {
        let t = now.as_secs_f64();
        if now == SimTime::ZERO {
            self.reserve_series();
        }
        for f in 0..self.flows.len() {
            let (snd, _) = self.tcp_roles(f);
            if let Some(c) = snd {
                let s = self.conns[c].ep.sample(now);
                let se = &mut self.series;
                se.tcp_time.push(t);
                se.tcp_flow.push(f as i64);
                se.tcp_cwnd.push(s.cwnd_bytes as f64);
                se.tcp_ssthresh.push(s.ssthresh_bytes as f64);
                se.tcp_srtt_ms.push(s.srtt.as_millis_f64());
                se.tcp_inflight.push(s.bytes_in_flight as f64);
                se.tcp_pacing_bps.push(s.pacing_rate.map_or(f64::NAN, |r| r * 8.0));
                se.tcp_delivered.push(s.delivered_bytes as f64);
            }
        }
        self.sample_lte(now);
        for (i, d) in self.dirs.iter().enumerate() {
            if d.radio.is_some() {
                continue;
            }
            let se = &mut self.series;
            se.q_time.push(t);
            se.q_link.push(i as i64);
            se.q_bytes.push(d.link.queue_len_bytes_at(now) as f64);
            se.q_pkts.push(d.link.queue_len_pkts_at(now) as f64);
        }
        let next = now + self.sample_interval;
        if next <= self.end {
            self.q.push(next, Ev::Sample);
        }
    }

    /// Sizes the time-series columns for the whole run up front (capped), so that they are
    /// written once instead of being copied at every doubling: with 100 flows and 204 link
    /// directions sampled every 10 ms for 60 s that is 77 MB, and the copies cost more than
    /// the simulation.
    fn reserve_series(&mut self) {
        const MAX_ROWS: usize = 4 << 20;
        let samples = (self.end.as_nanos() / self.sample_interval.as_nanos().max(1)) as usize + 1;
        let tcp = self.flows.iter().filter(|f| matches!(f.state, FlowState::Tcp { .. })).count();
        let tcp_rows = samples.saturating_mul(tcp).min(MAX_ROWS);
        let q_rows = samples.saturating_mul(self.dirs.len()).min(MAX_ROWS);
        let se = &mut self.series;
        for v in [&mut se.tcp_time, &mut se.tcp_cwnd, &mut se.tcp_ssthresh, &mut se.tcp_srtt_ms] {
            v.reserve(tcp_rows);
        }
        for v in [&mut se.tcp_inflight, &mut se.tcp_pacing_bps, &mut se.tcp_delivered] {
            v.reserve(tcp_rows);
        }
        se.tcp_flow.reserve(tcp_rows);
        for v in [&mut se.q_time, &mut se.q_bytes, &mut se.q_pkts] {
            v.reserve(q_rows);
        }
        se.q_link.reserve(q_rows);
    }

    pub(crate) fn finish(&mut self) {
        for (_, w) in &mut self.pcaps {
            let _ = w.flush();
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

type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fnv>>;

fn stop_at_of(f: &Flow) -> Option<SimTime> {
    match &f.state {
        FlowState::Tcp { stop_at, .. } => *stop_at,
        _ => None,
    }
}

fn is_data(p: &Packet) -> bool {
    match &p.body {
        Body::Tcp(s) => s.payload_len > 0,
        Body::Udp(_) => true,
        Body::Icmp(_) => false,
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' }).collect()
}
