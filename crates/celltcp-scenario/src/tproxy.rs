//! Transparent split-TCP proxies in the node stack (`[[proxy]]`): a node with a proxy (the
//! SGW/PGW, an eNB, any router) intercepts the TCP connections crossing it, as Linux does with
//! an `IP_TRANSPARENT` listener fed by the TPROXY target (the kernel's
//! `Documentation/networking/tproxy.rst`): a SYN forwarded through the node (optionally only
//! to some ports) is not forwarded but held for the node's proxy app
//! ([`celltcp_apps::proxy::SplitProxy`]), which answers it as the server (the SYN's destination
//! address and port) and opens the server leg from the client's address and port, so that
//! neither end sees the proxy (RFC 3135 §2.1.1 and §2.4, a split-connection PEP). The legs are
//! sockets of the node's stack found by (node, 4-tuple) in [`crate::stack::Stack::tproxy`]:
//! their 4-tuples are those of the ends' own sockets.
//!
//! Where the packet is seen: at the PGW, an uplink packet after GTP-U decapsulation and a
//! downlink one before encapsulation; at an eNB, a downlink packet after decapsulation and an
//! uplink one (from the radio) before encapsulation. In every case the packet is plain IP in
//! [`World::arrive`]'s forwarding branch, before the TTL is decremented (PREROUTING). With a
//! proxy at the PGW and one at the eNB, the eNB intercepts the client's SYN first (on the
//! uplink) and the PGW intercepts the eNB proxy's server leg: three TCP connections in series.
//!
//! **Handover with an eNB proxy.** The proxied connections stay anchored at the eNB that
//! intercepted them: their state (two TCP connections and the proxy's buffer) is not moved by
//! an X2 handover (TS 36.423 transfers the UE context and the PDCP SDUs, not transport-layer
//! state). After a handover the anchor's client leg keeps sending to the UE (the RAN forwards
//! it to the serving cell), and the packets of anchored connections that reach another eNB
//! (the UE's uplink, and the server's downlink after the path switch) are passed to the anchor
//! over X2 (its delay); new connections are intercepted by the eNB that serves the UE when its
//! SYN crosses it. Every eNB of a run with an eNB proxy therefore looks up anchored
//! connections, also one without a proxy of its own.
//!
//! **Drops per leg.** A leg's packets carry the 4-tuple of the flow's own sockets, so a lost
//! packet cannot be told apart by its addresses. A proxy leg's packets are tagged instead:
//! their `uid` (unique within the run, for traces only) gets [`LEG_TAG`] and the leg's socket
//! index above bit 40 ([`World::tproxy_sent`]). A lost data packet is counted against the
//! socket that sent it: a leg's in the proxy's summary (`legs[].*_leg.data_packets_lost`), an
//! end's against its flow (`data_packets_lost`), each loss once.
//!
//! Cost for other runs: [`World::arrive`] tests one `Option` on the forwarding path.

use celltcp_apps::app::{AnyApp, SockAddr};
use celltcp_apps::proxy::{ProxyConfig, SplitProxy, SynMode};
use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::{Body, Packet};
use celltcp_tcp::cc::{CcConfig, CcKind};
use celltcp_tcp::TcpConfig;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::config::NodeKind;
use crate::error::ScenarioError;
use crate::glue::AppSlot;
use crate::stack::{SockKind, Tuple, NO_FLOW, TCP};
use crate::units::Bytes;
use crate::world::{Ev, World};

/// Default shared buffer of a proxy: 64 MiB (64 connections at the per-connection default;
/// beyond that the connections share it fairly, docs/scenario.md "Transparent proxy").
pub const DEFAULT_BUFFER: u64 = 64 << 20;
/// Default per-connection buffer: 1 MiB, counting both legs' socket buffers: the server leg's
/// window must cover its bandwidth-delay product at the radio's rate (50 Mbit/s x 150 ms =
/// 0.94 MB) for the proxy to keep pace, and more only queues in the proxy what the radio
/// cannot take (4 MiB at 2 Mbit/s is 16 s of data).
pub const DEFAULT_PER_CONNECTION: u64 = 1 << 20;

/// One `[[proxy]]` entry (`docs/scenario.md`, section "Transparent proxy").
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyCfg {
    /// The node that intercepts: the PGW, an eNB, or a router, by name.
    pub node: String,
    /// The most bytes all its connections hold together (default 64 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<Bytes>,
    /// The most bytes one connection holds (default 1 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_connection_buffer: Option<Bytes>,
    /// `"immediate"` (default) or `"after-server"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn: Option<String>,
    /// Congestion control of the client leg and of the server leg (default CUBIC both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cc: Option<CcConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cc: Option<CcConfig>,
    /// Only connections to these destination ports (default: every TCP connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<u16>>,
}

/// A validated `[[proxy]]`.
#[derive(Clone, Debug)]
pub struct PlanProxy {
    pub node: usize,
    pub buffer: u64,
    pub per_connection_buffer: u64,
    pub syn: SynMode,
    pub client_cc: CcConfig,
    pub server_cc: CcConfig,
    /// Empty: every port.
    pub ports: Vec<u16>,
    /// The node is an eNB (handover anchoring, module doc).
    pub enb: bool,
}

/// Validates the `[[proxy]]` entries: `nodes` the topology's (name, kind), `lte` the PGW's
/// and the eNBs' node indices.
pub(crate) fn plan_proxies(text: &str, cfg: &[ProxyCfg], nodes: &[(String, NodeKind)], lte: Option<(usize, &[usize])>) -> Result<Vec<PlanProxy>, ScenarioError> {
    let mut out: Vec<PlanProxy> = Vec::new();
    for (i, p) in cfg.iter().enumerate() {
        let e = |key: &str, msg: String| ScenarioError::new(format!("proxy[{i}].{key}"), msg).at_line(crate::config::line_of_key(text, Some(("proxy", i)), key));
        let node = nodes.iter().position(|(n, _)| *n == p.node).ok_or_else(|| e("node", format!("expected the name of the PGW, an eNB or a router, got {:?} (no such node)", p.node)))?;
        let (is_pgw, enb) = match lte {
            Some((pgw, enbs)) => (pgw == node, enbs.contains(&node)),
            None => (false, false),
        };
        if !is_pgw && !enb && nodes[node].1 != NodeKind::Router {
            return Err(e("node", format!("expected the PGW, an eNB or a router (a node that forwards), got {:?}, a host", p.node)));
        }
        if out.iter().any(|o| o.node == node) {
            return Err(e("node", format!("expected one [[proxy]] per node, got a second one for {:?}", p.node)));
        }
        let bytes = |key: &str, v: Option<Bytes>, default: u64| -> Result<u64, ScenarioError> {
            match v {
                Some(Bytes(0)) => Err(e(key, "expected at least 1 byte, got 0".into())),
                Some(Bytes(b)) => Ok(b),
                None => Ok(default),
            }
        };
        let buffer = bytes("buffer", p.buffer, DEFAULT_BUFFER)?;
        let per_connection_buffer = bytes("per_connection_buffer", p.per_connection_buffer, DEFAULT_PER_CONNECTION.min(buffer))?;
        let syn = match p.syn.as_deref() {
            None | Some("immediate") => SynMode::Immediate,
            Some("after-server") => SynMode::AfterServer,
            Some(o) => return Err(e("syn", format!("expected \"immediate\" or \"after-server\", got {o:?}"))),
        };
        let ports = match &p.ports {
            None => Vec::new(),
            Some(v) if v.is_empty() => return Err(e("ports", "expected at least one port (leave `ports` out to intercept every port), got []".into())),
            Some(v) if v.contains(&0) => return Err(e("ports", format!("expected ports 1-65535, got {v:?}"))),
            Some(v) => v.clone(),
        };
        out.push(PlanProxy {
            node,
            buffer,
            per_connection_buffer,
            syn,
            client_cc: p.client_cc.clone().unwrap_or(CcKind::Cubic.into()),
            server_cc: p.server_cc.clone().unwrap_or(CcKind::Cubic.into()),
            ports,
            enb,
        });
    }
    Ok(out)
}

/// The `[[proxy]]` tables as run (`Config::as_run`): the buffers, the SYN mode and both legs'
/// congestion control with all their parameters. `ports` stays absent when every port is
/// intercepted (an empty list is refused).
pub(crate) fn as_run(cfg: &mut [ProxyCfg], plan: &[PlanProxy]) {
    for (c, p) in cfg.iter_mut().zip(plan) {
        c.buffer = Some(Bytes(p.buffer));
        c.per_connection_buffer = Some(Bytes(p.per_connection_buffer));
        c.syn = Some(syn_name(p.syn).to_string());
        c.client_cc = Some(p.client_cc.clone());
        c.server_cc = Some(p.server_cc.clone());
        if !p.ports.is_empty() {
            c.ports = Some(p.ports.clone());
        }
    }
}

fn syn_name(s: SynMode) -> &'static str {
    match s {
        SynMode::Immediate => "immediate",
        SynMode::AfterServer => "after-server",
    }
}

/// The tag of a packet a proxy's leg sent (module doc): bit 63 of its `uid`, the sending
/// socket's index in bits 40..63, the run's packet counter below (2^40 packets).
pub(crate) const LEG_TAG: u64 = 1 << 63;
const LEG_SHIFT: u32 = 40;
const UID_MASK: u64 = (1 << LEG_SHIFT) - 1;
const SOCK_MASK: u64 = (1 << (63 - LEG_SHIFT)) - 1;

/// A leg's data packets sent and lost (module doc).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LegCount {
    pub sent: u64,
    pub lost: u64,
}

/// What a node does with the TCP packets it forwards.
const NONE: u32 = u32::MAX;
/// An eNB without a proxy in a run with eNB proxies: it passes on anchored connections' packets.
const ANCHOR: u32 = u32::MAX - 1;

/// The run's transparent proxies.
pub(crate) struct Tproxies {
    /// Per node: the index of its proxy in `list`, [`NONE`] or [`ANCHOR`].
    at: Vec<u32>,
    pub list: Vec<(PlanProxy, u32)>,
    /// The eNB nodes with a proxy, and the X2 delay to each from each eNB (by node).
    enb_proxies: Vec<usize>,
    x2_delay: Vec<Vec<SimDuration>>,
    /// Per proxy: packets of its connections another eNB passed to it over X2.
    x2_passed: Vec<u64>,
    /// Per leg socket (by index): its data packets sent and lost.
    legs: crate::world::FastMap<u32, LegCount>,
}

/// The TCP configuration of a leg.
fn leg_config(cc: &CcConfig, seed: u64, which: &str, node: &str) -> TcpConfig {
    TcpConfig { cc: cc.clone(), cc_seed: celltcp_engine::rng::component_id(which, node) ^ seed, record_rtt_samples: false, ..TcpConfig::default() }
}

/// Adds the proxies' apps to `w` (`enb_nodes` the eNBs' node indices, `x2(a, b)` the X2 delay
/// between the eNBs of nodes `a` and `b`).
pub(crate) fn install(w: &mut World, proxies: Vec<PlanProxy>, seed: u64, enb_nodes: &[usize], x2: impl Fn(usize, usize) -> SimDuration) {
    if proxies.is_empty() {
        return;
    }
    let n = w.nodes.len();
    let mut at = vec![NONE; n];
    let mut list = Vec::new();
    for (k, p) in proxies.into_iter().enumerate() {
        let name = w.nodes[p.node].name.clone();
        let cfg = ProxyConfig {
            port: 0,
            upstream: SockAddr::new(celltcp_net::Ipv4(0), 0),
            cfg_client: leg_config(&p.client_cc, seed, "proxy-client", &name),
            cfg_server: leg_config(&p.server_cc, seed, "proxy-server", &name),
            buffer: p.buffer,
            per_connection_buffer: p.per_connection_buffer,
            sample_every: w.sample_interval,
        };
        w.apps.push(AppSlot { app: AnyApp::Proxy(SplitProxy::transparent(cfg, p.syn)), node: p.node as u32, flow: NO_FLOW, timer_at: None, bind: None });
        at[p.node] = k as u32;
        list.push((p, (w.apps.len() - 1) as u32));
    }
    let enb_proxies: Vec<usize> = list.iter().filter(|(p, _)| p.enb).map(|(p, _)| p.node).collect();
    let mut x2_delay = vec![Vec::new(); n];
    if !enb_proxies.is_empty() {
        for &e in enb_nodes {
            if at[e] == NONE {
                at[e] = ANCHOR;
            }
            x2_delay[e] = enb_proxies.iter().map(|&a| x2(e, a)).collect();
        }
    }
    let x2_passed = vec![0; list.len()];
    w.tproxy = Some(Box::new(Tproxies { at, list, enb_proxies, x2_delay, x2_passed, legs: Default::default() }));
    w.sinks.open_proxy();
}

impl World {
    /// A packet `node` forwards, in a run with proxies: `true` when a proxy took it (a segment
    /// of an intercepted connection, or a SYN to intercept), or passed it to the anchor of its
    /// connection over X2.
    #[inline(never)]
    pub(crate) fn tproxy_input(&mut self, now: SimTime, node: usize, pkt: &Packet) -> bool {
        let Body::Tcp(seg) = pkt.body else { return false };
        let tp = self.tproxy.as_ref().expect("proxies");
        let px = tp.at[node];
        if px == NONE {
            return false;
        }
        let local = SockAddr::new(pkt.dst, seg.dst_port);
        let remote = SockAddr::new(pkt.src, seg.src_port);
        let key = (node as u32, Tuple::new(TCP, local, remote));
        if let Some(&s) = self.stack.tproxy.get(&key) {
            let pkt = if pkt.frag.is_some() {
                match self.nodes[node].reasm.push(now, *pkt) {
                    Some(p) => p,
                    None => return true,
                }
            } else {
                *pkt
            };
            let Body::Tcp(seg) = pkt.body else { return true };
            let ce = pkt.ecn == celltcp_net::Ecn::Ce;
            let SockKind::Tcp(ep) = &mut self.stack.socks[s as usize].kind else { return true };
            let was = ep.is_established();
            ep.on_segment(now, &seg, ce);
            let ev = crate::glue::classify(was, ep);
            self.service_sock(now, s, ev);
            return true;
        }
        if px != ANCHOR && seg.flags.syn() && !seg.flags.ack() {
            let (p, app) = &tp.list[px as usize];
            if p.ports.is_empty() || p.ports.contains(&seg.dst_port) {
                let app = *app;
                // a retransmitted SYN while the server is asked (`after-server`) is dropped
                if self.stack.held.insert(key, seg).is_none() {
                    self.app_call(now, app, |a, api| {
                        if let AnyApp::Proxy(p) = a {
                            p.intercepted(now, local, remote, api);
                        }
                    });
                }
                return true;
            }
        }
        // a connection anchored at another eNB's proxy (module doc): to it over X2
        if !tp.enb_proxies.is_empty() {
            for (k, &a) in tp.enb_proxies.iter().enumerate() {
                if a != node && self.stack.tproxy.contains_key(&(a as u32, key.1)) {
                    let at = now + tp.x2_delay[node].get(k).copied().unwrap_or(SimDuration::ZERO);
                    let px = tp.at[a] as usize;
                    self.tproxy.as_mut().expect("proxies").x2_passed[px] += 1;
                    let slot = self.slab_put(*pkt);
                    self.q.push(at, Ev::Arrive(a as u32, slot));
                    return true;
                }
            }
        }
        false
    }

    /// A packet socket `s` (a flowless socket in a run with proxies) sends: if `s` is a proxy's
    /// leg, tags it and counts a data packet (module doc).
    #[inline(never)]
    pub(crate) fn tproxy_sent(&mut self, pkt: &mut Packet, s: u32) {
        let k = &self.stack.socks[s as usize];
        let key = (k.node, Tuple::new(TCP, k.local, k.remote));
        if self.stack.tproxy.get(&key) != Some(&s) {
            return;
        }
        debug_assert!(pkt.uid <= UID_MASK && u64::from(s) <= SOCK_MASK);
        pkt.uid = LEG_TAG | (u64::from(s) & SOCK_MASK) << LEG_SHIFT | (pkt.uid & UID_MASK);
        if matches!(pkt.body, Body::Tcp(seg) if seg.payload_len > 0) {
            let tp = self.tproxy.as_mut().expect("proxies");
            tp.legs.entry(s).or_default().sent += 1;
        }
    }

    /// A lost data packet a proxy's leg sent (tagged by [`World::tproxy_sent`]).
    #[cold]
    pub(crate) fn tproxy_lost(&mut self, pkt: &Packet) {
        let s = ((pkt.uid >> LEG_SHIFT) & SOCK_MASK) as u32;
        if let Some(tp) = self.tproxy.as_mut() {
            tp.legs.entry(s).or_default().lost += 1;
        }
    }

    /// One row per proxy into the `proxy` table: the bytes it holds and its open connections.
    #[cold]
    pub(crate) fn sample_proxies(&mut self, t: f64) {
        let Some(tp) = self.tproxy.as_ref() else { return };
        let Some(sink) = self.sinks.proxy.as_mut() else { return };
        for (k, (_, app)) in tp.list.iter().enumerate() {
            if let AnyApp::Proxy(p) = &self.apps[*app as usize].app {
                let open = p.conns.iter().filter(|c| !(c.client_closed() && c.server_closed())).count();
                sink.f64(t).i64(k as i64).f64(p.held as f64).i64(open as i64).end_row();
            }
        }
    }
}

/// The `proxies` section of the summary (`docs/outputs.md`): per proxy its settings, peak
/// occupancy and, per intercepted connection, both legs.
pub(crate) fn summary(w: &World, end: SimTime) -> Option<Value> {
    let tp = w.tproxy.as_ref()?;
    let leg = |s: u32, read: u64, written: u64, opened: SimTime, last: SimTime, cc: &CcConfig| -> Value {
        let Some(ep) = w.stack.socks.get(s as usize).and_then(|k| k.ep_ref()) else { return Value::Null };
        let st = ep.stats();
        let span = last.saturating_since(opened).as_secs_f64();
        let moved = read + written.saturating_sub(ep.send_buffer_used());
        let n = tp.legs.get(&s).copied().unwrap_or_default();
        json!({
            "cc": cc.kind().name(),
            "bytes_read": read,
            "bytes_written": written,
            "retransmitted_segments": st.retransmitted_segments,
            "timeouts": st.timeouts,
            "data_packets_sent": n.sent,
            "data_packets_lost": n.lost,
            "srtt_ms": ep.sample(end).srtt.as_millis_f64(),
            "goodput_bps": if span > 0.0 { moved as f64 * 8.0 / span } else { 0.0 },
        })
    };
    let mut out = Vec::new();
    for (k, (p, app)) in tp.list.iter().enumerate() {
        let AnyApp::Proxy(px) = &w.apps[*app as usize].app else { continue };
        let conns: Vec<Value> = px
            .conns
            .iter()
            .map(|c| {
                json!({
                    "client": c.peer.to_string(),
                    "server": c.orig.to_string(),
                    "opened_s": c.opened_at.as_secs_f64(),
                    "refused": c.refused,
                    "client_leg": if c.client_pending() { Value::Null } else { leg(c.client.0, c.read_client, c.written_client, c.opened_at, c.client_last, &p.client_cc) },
                    "server_leg": leg(c.server.0, c.read_server, c.written_server, c.opened_at, c.server_last, &p.server_cc),
                    "server_window_min_bytes": c.min_server_window,
                })
            })
            .collect();
        out.push(json!({
            "node": w.nodes[p.node].name,
            "syn": syn_name(p.syn),
            "buffer_bytes": p.buffer,
            "per_connection_buffer_bytes": p.per_connection_buffer,
            "peak_held_bytes": px.peak_held,
            "peak_committed_bytes": px.peak_committed,
            "connections": conns.len(),
            "error": px.error.as_ref().map(|e| e.to_string()),
            "x2_passed_packets": tp.x2_passed[k],
            "legs": conns,
        }));
    }
    Some(Value::Array(out))
}
