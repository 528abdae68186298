//! The node stack's socket layer: one arena of sockets for the whole run, found by their
//! 4-tuple (protocol, local address and port, remote address and port) in one table, as
//! smoltcp's `SocketSet` and the kernel's established hash do; TCP listeners and bound UDP
//! sockets by (local address, port); ICMP echo sockets by (address, identifier).
//!
//! Ephemeral ports are chosen as Linux does (`net.ipv4.ip_local_port_range` = 32768-60999,
//! RFC 6056 §3.3.4 "double-hash" in spirit: a counter per (local address, remote address,
//! remote port, protocol)); a port is taken only if the whole 4-tuple is free and no listener
//! or bound socket holds it, so 40,000 connections from one host to different servers or
//! ports never collide. When every port of the range is in use towards one remote endpoint,
//! `connect` fails with [`SocketError::PortsExhausted`], naming both ends.
//!
//! An MPTCP connection (RFC 8684) is one socket ([`SockKind::Mptcp`]) whose subflows' 4-tuples
//! all point at it in the same table; a listener of an MPTCP flow accepts an MP_CAPABLE SYN as
//! an MPTCP connection and finds the connection of an MP_JOIN SYN by the token it carries
//! (§3.2) in [`Stack::tokens`].
//!
//! The [`NodeApi`] is the [`SocketApi`] an app sees during one callback: it creates and
//! touches sockets here and queues datagrams; the run loop (`glue.rs`) then sends what was
//! queued and services what was touched.

use std::collections::HashMap;

use celltcp_apps::app::{SockAddr, SockId, SocketApi, SocketError, Stream};
use celltcp_engine::{SimRng, SimTime};
use celltcp_net::{Body, IcmpEcho, Ipv4, MptcpOption, TcpSegment, UdpDatagram};
use celltcp_mptcp::{MptcpConfig, MptcpConnection};
use celltcp_tcp::{TcpConfig, TcpEndpoint};
use rand::Rng;

use crate::world::FastMap;

/// Linux's default `ip_local_port_range`.
pub const EPHEMERAL: (u16, u16) = (32768, 60999);

pub(crate) const TCP: u8 = 6;
pub(crate) const UDP: u8 = 17;

/// A socket's metrics tag: the scenario flow it belongs to (`NO_FLOW`: none).
pub(crate) const NO_FLOW: u32 = u32::MAX;

/// The 4-tuple key of a connection (and of a connected UDP socket), hashed in two words.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tuple {
    local: u64,
    remote: u64,
}

impl Tuple {
    #[inline]
    pub fn new(proto: u8, local: SockAddr, remote: SockAddr) -> Self {
        Tuple { local: (u64::from(local.addr.0) << 24) | (u64::from(local.port) << 8) | u64::from(proto), remote: (u64::from(remote.addr.0) << 16) | u64::from(remote.port) }
    }
}

impl std::hash::Hash for Tuple {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.local);
        h.write_u64(self.remote);
    }
}

#[allow(clippy::large_enum_variant)]
pub(crate) enum SockKind {
    // inline, as connections were before: one indirection less on every segment
    Tcp(TcpEndpoint),
    Listener(TcpConfig),
    Udp,
    Echo { ident: u16 },
    /// An MPTCP connection (boxed: it is large, and rare).
    Mptcp(Box<MptcpConnection>),
}

pub(crate) struct Sock {
    pub kind: SockKind,
    pub node: u32,
    pub local: SockAddr,
    pub remote: SockAddr,
    /// The app that owns it.
    pub app: u32,
    /// The flow whose metrics it feeds (`NO_FLOW`: none).
    pub flow: u32,
    /// The pending timer event's time.
    pub timer_at: Option<SimTime>,
    /// The sender of a flow with `trace_segments`.
    pub traced: bool,
    /// Used by an app during the current callback (queued in `touched`, in the order of use).
    pub touched: bool,
    /// Changed since its last flush: by its app (`SocketApi::tcp`, `stream`) or by the stack (a
    /// segment, its timer). A flush of a socket that is neither and has no timer due does
    /// nothing, so the flush after a callback skips the touched sockets that are not dirty.
    pub dirty: bool,
    /// A connection's initial sequence number.
    pub iss: u32,
}

impl Sock {
    #[inline]
    pub fn ep(&mut self) -> &mut TcpEndpoint {
        match &mut self.kind {
            SockKind::Tcp(ep) => ep,
            _ => panic!("socket {} is not a TCP connection", self.local),
        }
    }
    #[inline]
    pub fn ep_ref(&self) -> Option<&TcpEndpoint> {
        match &self.kind {
            SockKind::Tcp(ep) => Some(ep),
            _ => None,
        }
    }
}

/// What an app's callback left to do: datagrams to send, sockets it created or touched.
#[derive(Default)]
pub(crate) struct Pending {
    /// (node, source, destination, body, flow), in the order the app sent them.
    pub tx: Vec<(u32, Ipv4, Ipv4, Body, u32)>,
    pub created: Vec<u32>,
    pub touched: Vec<u32>,
}

#[derive(Default)]
pub(crate) struct Stack {
    pub socks: Vec<Sock>,
    pub conns: FastMap<Tuple, u32>,
    pub listeners: FastMap<(Ipv4, u16), u32>,
    pub udp_bound: FastMap<(Ipv4, u16), u32>,
    pub echo: FastMap<(Ipv4, u16), u32>,
    /// Next ephemeral port to try per (protocol, local, remote, remote port).
    eph_next: HashMap<(u8, Ipv4, Ipv4, u16), u16>,
    /// Next ICMP identifier per local address.
    echo_next: HashMap<Ipv4, u16>,
    /// Initial sequence numbers: one seeded stream per flow (so flows are independent of one
    /// another and runs reproducible; RFC 6528 asks for unpredictability, which a simulator
    /// does not need), and one for sockets of no flow.
    pub flow_rng: Vec<SimRng>,
    pub other_rng: Option<SimRng>,
    pub pending: Pending,
    /// Socket flushes so far ([`crate::sim::Simulation::sock_flushes`]).
    pub flushes: u64,
    /// Per flow: its MPTCP configuration, `None` for plain TCP (and flows of no TCP).
    pub flow_mptcp: Vec<Option<MptcpConfig>>,
    /// MPTCP connections accepted by listeners, by their token (RFC 8684 §3.2).
    pub tokens: FastMap<u32, u32>,
    /// Transparent proxies' connections (`tproxy.rs`), by (node, 4-tuple): they hold other
    /// hosts' addresses (the legs have the 4-tuples of the ends' own sockets), so they are
    /// found per node, apart from `conns`.
    pub tproxy: FastMap<(u32, Tuple), u32>,
    /// The SYNs transparent listeners hold, by (node, the client leg's 4-tuple).
    pub held: FastMap<(u32, Tuple), TcpSegment>,
}

impl Stack {
    /// An empty stack whose sockets of no flow draw their ISS from `rng`.
    pub fn new(rng: SimRng) -> Self {
        Stack { other_rng: Some(rng), ..Stack::default() }
    }
}

impl Stack {
    /// The socket holding the 4-tuple.
    #[inline]
    pub fn lookup(&self, proto: u8, local: SockAddr, remote: SockAddr) -> Option<u32> {
        self.conns.get(&Tuple::new(proto, local, remote)).copied()
    }

    fn port_taken(&self, proto: u8, local: SockAddr, remote: SockAddr) -> bool {
        let bound = match proto {
            TCP => self.listeners.contains_key(&(local.addr, local.port)),
            _ => self.udp_bound.contains_key(&(local.addr, local.port)),
        };
        bound || self.conns.contains_key(&Tuple::new(proto, local, remote))
    }

    /// An ephemeral port for a connection from `local` to `remote`.
    pub fn ephemeral(&mut self, proto: u8, local: Ipv4, remote: SockAddr) -> Result<u16, SocketError> {
        let (lo, hi) = EPHEMERAL;
        let n = u32::from(hi - lo) + 1;
        let start = *self.eph_next.get(&(proto, local, remote.addr, remote.port)).unwrap_or(&lo);
        for k in 0..n {
            let port = lo + ((u32::from(start - lo) + k) % n) as u16;
            if !self.port_taken(proto, SockAddr::new(local, port), remote) {
                let next = if port == hi { lo } else { port + 1 };
                self.eph_next.insert((proto, local, remote.addr, remote.port), next);
                return Ok(port);
            }
        }
        Err(SocketError::PortsExhausted { local, remote, range: EPHEMERAL })
    }

    fn iss(&mut self, flow: u32) -> u32 {
        match self.flow_rng.get_mut(flow as usize) {
            Some(r) => r.gen(),
            None => self.other_rng.as_mut().expect("stack rng").gen(),
        }
    }

    fn push(&mut self, s: Sock) -> u32 {
        self.socks.push(s);
        (self.socks.len() - 1) as u32
    }

    /// Active open (see [`SocketApi::connect`]).
    pub fn connect(&mut self, now: SimTime, node: u32, app: u32, flow: u32, local: Ipv4, remote: SockAddr, cfg: &TcpConfig) -> Result<u32, SocketError> {
        let port = self.ephemeral(TCP, local, remote)?;
        let iss = self.iss(flow);
        let ep = TcpEndpoint::connect(*cfg, port, remote.port, iss, now);
        let l = SockAddr::new(local, port);
        let s = self.push(Sock { kind: SockKind::Tcp(ep), node, local: l, remote, app, flow, timer_at: None, traced: false, touched: false, dirty: false, iss });
        self.conns.insert(Tuple::new(TCP, l, remote), s);
        Ok(s)
    }

    fn mptcp_cfg(&self, flow: u32) -> Option<MptcpConfig> {
        self.flow_mptcp.get(flow as usize).copied().flatten()
    }

    /// Active open of an MPTCP connection with `cfg` from `local` (address id 0; `others` are the
    /// node's other addresses, ids 1, 2, ... for the path manager): its initial subflow.
    #[allow(clippy::too_many_arguments)]
    pub fn connect_mptcp(&mut self, now: SimTime, node: u32, app: u32, flow: u32, local: Ipv4, others: &[Ipv4], remote: SockAddr, cfg: MptcpConfig) -> Result<u32, SocketError> {
        let port = self.ephemeral(TCP, local, remote)?;
        let iss = self.iss(flow);
        let key = self.key(flow);
        let mut addrs = vec![local];
        addrs.extend(others.iter().copied().filter(|&a| a != local));
        let m = MptcpConnection::connect(cfg, key, &addrs, port, msa(remote), iss, now);
        let l = SockAddr::new(local, port);
        let s = self.push(Sock { kind: SockKind::Mptcp(Box::new(m)), node, local: l, remote, app, flow, timer_at: None, traced: false, touched: false, dirty: false, iss });
        self.conns.insert(Tuple::new(TCP, l, remote), s);
        Ok(s)
    }

    /// A 64-bit MPTCP key (RFC 8684 §3.1: random), from the flow's seeded stream.
    fn key(&mut self, flow: u32) -> u64 {
        match self.flow_rng.get_mut(flow as usize) {
            Some(r) => r.gen(),
            None => self.other_rng.as_mut().expect("stack rng").gen(),
        }
    }

    /// Listener `lst` of an MPTCP flow and an MP_CAPABLE SYN to `to` (its address, or another
    /// of its node's): the new MPTCP connection (its token registered; `others` are the node's
    /// other addresses, announced with ADD_ADDR). `None`: the listener's flow is plain TCP, or the SYN has no
    /// MP_CAPABLE (plain TCP then, as Linux falls back).
    #[allow(clippy::too_many_arguments)]
    pub fn accept_mptcp(&mut self, now: SimTime, lst: u32, to: Ipv4, remote: SockAddr, seg: &TcpSegment, opt: &MptcpOption, others: &[Ipv4]) -> Option<u32> {
        let (node, app, flow, local) = {
            let l = &self.socks[lst as usize];
            (l.node, l.app, l.flow, SockAddr::new(to, l.local.port))
        };
        let cfg = self.mptcp_cfg(flow)?;
        let key = self.key(flow);
        let mut addrs = vec![local.addr];
        addrs.extend(others.iter().copied().filter(|&a| a != local.addr));
        let m = MptcpConnection::accept(cfg, key, &addrs, msa(local), msa(remote), seg, opt, now)?;
        let token = m.token();
        let iss = 0; // (the segment trace, which reads it, is plain TCP only)
        let s = self.push(Sock { kind: SockKind::Mptcp(Box::new(m)), node, local, remote, app, flow, timer_at: None, traced: false, touched: false, dirty: false, iss });
        self.conns.insert(Tuple::new(TCP, local, remote), s);
        self.tokens.insert(token, s);
        Some(s)
    }

    /// Registers the 4-tuples of MPTCP socket `s`'s subflows from index `from` on (those it
    /// opened or accepted since).
    pub fn register_subflows(&mut self, s: u32, from: usize) {
        let SockKind::Mptcp(m) = &self.socks[s as usize].kind else { return };
        for i in from..m.subflow_count() {
            let (l, r) = m.subflow_addrs(i);
            self.conns.insert(Tuple::new(TCP, asa(l), asa(r)), s);
        }
    }

    /// Opens the subflows MPTCP socket `s`'s path manager wants (each from an ephemeral port
    /// of its local address, with an ISS from the flow's stream); returns how many.
    pub fn open_wanted_subflows(&mut self, now: SimTime, s: u32) -> usize {
        let SockKind::Mptcp(m) = &self.socks[s as usize].kind else { return 0 };
        let wanted = m.wanted_subflows();
        if wanted.is_empty() {
            return 0;
        }
        let flow = self.socks[s as usize].flow;
        let mut opened = 0;
        for (lid, rid) in wanted {
            let SockKind::Mptcp(m) = &self.socks[s as usize].kind else { unreachable!() };
            let n = m.subflow_count();
            let (Some(lip), Some(rip)) = (m.local_addr(lid), m.remote_addr(rid)) else { continue };
            let rport = m.subflow_addrs(0).1.port;
            let Ok(port) = self.ephemeral(TCP, lip, SockAddr::new(rip, rport)) else { continue };
            let iss = self.iss(flow);
            let SockKind::Mptcp(m) = &mut self.socks[s as usize].kind else { unreachable!() };
            if m.open_subflow(now, lid, rid, port, iss).is_some() {
                self.register_subflows(s, n);
                opened += 1;
            }
        }
        opened
    }

    /// A connection accepted by listener `lst` from the SYN `seg` sent by `remote` to `to` (the
    /// listener's address, or another address of its node).
    pub fn accept(&mut self, now: SimTime, lst: u32, to: Ipv4, remote: SockAddr, seg: &TcpSegment) -> u32 {
        let (node, app, flow, local) = {
            let l = &self.socks[lst as usize];
            (l.node, l.app, l.flow, SockAddr::new(to, l.local.port))
        };
        let SockKind::Listener(cfg) = self.socks[lst as usize].kind else { unreachable!("not a listener") };
        let iss = self.iss(flow);
        let ep = TcpEndpoint::accept(cfg, local.port, remote.port, iss, seg, now);
        let s = self.push(Sock { kind: SockKind::Tcp(ep), node, local, remote, app, flow, timer_at: None, traced: false, touched: false, dirty: false, iss });
        self.conns.insert(Tuple::new(TCP, local, remote), s);
        s
    }

    /// A transparent proxy's client leg on `node`: the SYN held from `peer` to `orig`,
    /// answered as `orig` (Linux: `accept()` on an `IP_TRANSPARENT` listener fed by TPROXY).
    #[allow(clippy::too_many_arguments)]
    pub fn accept_held(&mut self, now: SimTime, node: u32, app: u32, orig: SockAddr, peer: SockAddr, cfg: &TcpConfig) -> Result<u32, SocketError> {
        let key = (node, Tuple::new(TCP, orig, peer));
        let seg = self.held.remove(&key).ok_or(SocketError::AddrNotAvailable(orig.addr))?;
        let iss = self.iss(NO_FLOW);
        let ep = TcpEndpoint::accept(*cfg, orig.port, peer.port, iss, &seg, now);
        let s = self.push(Sock { kind: SockKind::Tcp(ep), node, local: orig, remote: peer, app, flow: NO_FLOW, timer_at: None, traced: false, touched: false, dirty: false, iss });
        self.tproxy.insert(key, s);
        Ok(s)
    }

    /// A transparent proxy's server leg on `node`, from the foreign address `local` (the
    /// client's address and port: `IP_TRANSPARENT`, `bind()`, `connect()`).
    pub fn connect_transparent(&mut self, now: SimTime, node: u32, app: u32, local: SockAddr, remote: SockAddr, cfg: &TcpConfig) -> Result<u32, SocketError> {
        let key = (node, Tuple::new(TCP, local, remote));
        if self.tproxy.contains_key(&key) {
            return Err(SocketError::AddrInUse(local));
        }
        let iss = self.iss(NO_FLOW);
        let ep = TcpEndpoint::connect(*cfg, local.port, remote.port, iss, now);
        let s = self.push(Sock { kind: SockKind::Tcp(ep), node, local, remote, app, flow: NO_FLOW, timer_at: None, traced: false, touched: false, dirty: false, iss });
        self.tproxy.insert(key, s);
        Ok(s)
    }

    pub fn listen(&mut self, node: u32, app: u32, flow: u32, local: SockAddr, cfg: &TcpConfig) -> Result<u32, SocketError> {
        if self.listeners.contains_key(&(local.addr, local.port)) {
            return Err(SocketError::AddrInUse(local));
        }
        let s = self.push(Sock { kind: SockKind::Listener(*cfg), node, local, remote: SockAddr::new(Ipv4(0), 0), app, flow, timer_at: None, traced: false, touched: false, dirty: false, iss: 0 });
        self.listeners.insert((local.addr, local.port), s);
        Ok(s)
    }

    pub fn udp_bind(&mut self, node: u32, app: u32, flow: u32, local: Ipv4, port: Option<u16>, peer: Option<SockAddr>) -> Result<u32, SocketError> {
        let any = SockAddr::new(Ipv4(0), 0);
        let port = match (port, peer) {
            (Some(p), _) => {
                if self.udp_bound.contains_key(&(local, p)) {
                    return Err(SocketError::AddrInUse(SockAddr::new(local, p)));
                }
                p
            }
            (None, Some(r)) => self.ephemeral(UDP, local, r)?,
            (None, None) => self.ephemeral(UDP, local, any)?,
        };
        let l = SockAddr::new(local, port);
        let s = self.push(Sock { kind: SockKind::Udp, node, local: l, remote: peer.unwrap_or(any), app, flow, timer_at: None, traced: false, touched: false, dirty: false, iss: 0 });
        match peer {
            Some(r) => {
                self.conns.insert(Tuple::new(UDP, l, r), s);
            }
            None => {
                self.udp_bound.insert((local, port), s);
            }
        }
        Ok(s)
    }

    pub fn echo_open(&mut self, node: u32, app: u32, flow: u32, local: Ipv4, dst: Ipv4) -> Result<u32, SocketError> {
        let next = self.echo_next.entry(local).or_insert(0);
        let start = *next;
        let mut ident = start;
        while self.echo.contains_key(&(local, ident)) {
            ident = ident.wrapping_add(1);
            if ident == start {
                return Err(SocketError::AddrInUse(SockAddr::new(local, 0)));
            }
        }
        *self.echo_next.get_mut(&local).unwrap() = ident.wrapping_add(1);
        let s = self.push(Sock { kind: SockKind::Echo { ident }, node, local: SockAddr::new(local, ident), remote: SockAddr::new(dst, 0), app, flow, timer_at: None, traced: false, touched: false, dirty: false, iss: 0 });
        self.echo.insert((local, ident), s);
        Ok(s)
    }
}

/// The model's address type from the apps' one, and back.
#[inline]
pub(crate) fn msa(a: SockAddr) -> celltcp_mptcp::SockAddr {
    celltcp_mptcp::SockAddr { ip: a.addr, port: a.port }
}
#[inline]
pub(crate) fn asa(a: celltcp_mptcp::SockAddr) -> SockAddr {
    SockAddr::new(a.ip, a.port)
}

/// The socket API of node `node` for app `app` during one callback.
pub(crate) struct NodeApi<'a> {
    pub stack: &'a mut Stack,
    pub node: u32,
    /// The node's first address.
    pub addr: Ipv4,
    pub app: u32,
    pub flow: u32,
    /// The app's bound source address (a flow's `bind`), if any.
    pub bind: Option<Ipv4>,
    /// For the preferred source address of a multihomed node.
    pub routes: &'a celltcp_net::routing::Routes,
    pub ifaces: &'a crate::iface::Ifaces,
}

impl NodeApi<'_> {
    /// The source address towards `dst`: the app's bound one, else the address of the
    /// interface the route leaves by (Linux's preferred source; the node's address when it has
    /// one interface).
    #[inline]
    fn src_for(&self, dst: Ipv4) -> Ipv4 {
        match self.bind {
            Some(a) => a,
            None if self.ifaces.plain(self.node as usize) => self.addr,
            None => self.ifaces.preferred_source(self.routes, self.node as usize, self.addr, dst).unwrap_or(self.addr),
        }
    }

    /// `local` if it is one of the node's addresses.
    fn own(&self, local: Ipv4) -> Result<Ipv4, SocketError> {
        let mine = local == self.addr || self.ifaces.owner(local).is_some_and(|(n, _)| n == self.node);
        if mine {
            Ok(local)
        } else {
            Err(SocketError::AddrNotAvailable(local))
        }
    }

    fn mine(&self, s: SockId) -> &Sock {
        let k = &self.stack.socks[s.0 as usize];
        assert!(k.app == self.app, "app {} used socket {} of app {}", self.app, s.0, k.app);
        k
    }
}

impl SocketApi for NodeApi<'_> {
    fn local_addr(&self) -> Ipv4 {
        self.addr
    }

    fn connect(&mut self, now: SimTime, remote: SockAddr, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        self.connect_from(now, None, remote, cfg)
    }

    fn listen(&mut self, port: u16, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        self.listen_on(None, port, cfg)
    }

    fn connect_from(&mut self, now: SimTime, local: Option<Ipv4>, remote: SockAddr, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        let local = match local {
            Some(a) => self.own(a)?,
            None => self.src_for(remote.addr),
        };
        let s = match self.stack.mptcp_cfg(self.flow) {
            None => self.stack.connect(now, self.node, self.app, self.flow, local, remote, cfg)?,
            Some(m) => {
                // the path manager's other addresses: the node's other interfaces
                let others: Vec<Ipv4> = self.ifaces.of(self.node as usize).iter().map(|i| i.addr).collect();
                self.stack.connect_mptcp(now, self.node, self.app, self.flow, local, &others, remote, m)?
            }
        };
        self.stack.pending.created.push(s);
        Ok(SockId(s))
    }

    fn listen_on(&mut self, local: Option<Ipv4>, port: u16, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        let local = match local.or(self.bind) {
            Some(a) => self.own(a)?,
            None => self.addr,
        };
        self.stack.listen(self.node, self.app, self.flow, SockAddr::new(local, port), cfg).map(SockId)
    }

    #[inline]
    fn tcp(&mut self, s: SockId) -> &mut TcpEndpoint {
        debug_assert_eq!(self.stack.socks[s.0 as usize].app, self.app);
        let k = &mut self.stack.socks[s.0 as usize];
        k.dirty = true;
        if !k.touched {
            k.touched = true;
            self.stack.pending.touched.push(s.0);
        }
        k.ep()
    }

    #[inline]
    fn tcp_peek(&mut self, s: SockId) -> &TcpEndpoint {
        debug_assert_eq!(self.stack.socks[s.0 as usize].app, self.app);
        let k = &mut self.stack.socks[s.0 as usize];
        // queued in the order of use all the same: the sockets changed later in the callback
        // are flushed in the order they were first used (glue.rs)
        if !k.touched {
            k.touched = true;
            self.stack.pending.touched.push(s.0);
        }
        k.ep_ref().unwrap_or_else(|| panic!("socket {} is not a TCP connection", s.0))
    }

    #[inline]
    fn stream(&mut self, s: SockId) -> Stream<'_> {
        debug_assert_eq!(self.stack.socks[s.0 as usize].app, self.app);
        let k = &mut self.stack.socks[s.0 as usize];
        k.dirty = true;
        if !k.touched {
            k.touched = true;
            self.stack.pending.touched.push(s.0);
        }
        match &mut k.kind {
            SockKind::Tcp(ep) => Stream::Tcp(ep),
            SockKind::Mptcp(m) => Stream::Mptcp(m),
            _ => panic!("socket {} is not a connection", s.0),
        }
    }

    fn udp_bind(&mut self, port: Option<u16>, peer: Option<SockAddr>) -> Result<SockId, SocketError> {
        let local = match peer {
            Some(p) => self.src_for(p.addr),
            None => self.bind.unwrap_or(self.addr),
        };
        self.stack.udp_bind(self.node, self.app, self.flow, local, port, peer).map(SockId)
    }

    fn udp_send(&mut self, now: SimTime, s: SockId, payload_len: u32, seq: u64) {
        let k = self.mine(s);
        let d = UdpDatagram { src_port: k.local.port, dst_port: k.remote.port, payload_len, seq, sent_at: now };
        let (src, dst, flow) = (k.local.addr, k.remote.addr, k.flow);
        self.stack.pending.tx.push((self.node, src, dst, Body::Udp(d), flow));
    }

    fn echo_open(&mut self, dst: Ipv4) -> Result<SockId, SocketError> {
        let local = self.src_for(dst);
        self.stack.echo_open(self.node, self.app, self.flow, local, dst).map(SockId)
    }

    fn sock_names(&mut self, s: SockId) -> Result<(SockAddr, SockAddr), SocketError> {
        match self.stack.socks.get(s.0 as usize) {
            Some(k) if k.app == self.app => Ok((k.local, k.remote)),
            _ => Err(SocketError::BadSocket(s)),
        }
    }

    fn accept_held(&mut self, now: SimTime, orig: SockAddr, peer: SockAddr, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        let s = self.stack.accept_held(now, self.node, self.app, orig, peer, cfg)?;
        self.stack.pending.created.push(s);
        Ok(SockId(s))
    }

    fn refuse_held(&mut self, _now: SimTime, orig: SockAddr, peer: SockAddr) {
        let Some(syn) = self.stack.held.remove(&(self.node, Tuple::new(TCP, orig, peer))) else { return };
        // RFC 9293 §3.10.7.1: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
        let rst = TcpSegment {
            src_port: orig.port,
            dst_port: peer.port,
            seq: 0,
            ack: syn.seq.wrapping_add(syn.seq_len()),
            flags: celltcp_net::TcpFlags(celltcp_net::TcpFlags::RST | celltcp_net::TcpFlags::ACK),
            window: 0,
            options: Default::default(),
            payload_len: 0,
            ect: false,
        };
        self.stack.pending.tx.push((self.node, orig.addr, peer.addr, Body::Tcp(rst), NO_FLOW));
    }

    fn connect_transparent(&mut self, now: SimTime, local: SockAddr, remote: SockAddr, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        let s = self.stack.connect_transparent(now, self.node, self.app, local, remote, cfg)?;
        self.stack.pending.created.push(s);
        Ok(SockId(s))
    }

    fn echo_send(&mut self, now: SimTime, s: SockId, seq: u16, payload_len: u32) {
        let k = self.mine(s);
        let SockKind::Echo { ident, .. } = k.kind else { panic!("socket {} is not an echo socket", s.0) };
        let echo = IcmpEcho { reply: false, ident, seq, payload_len, sent_at: now };
        let (src, dst, flow) = (k.local.addr, k.remote.addr, k.flow);
        self.stack.pending.tx.push((self.node, src, dst, Body::Icmp(echo), flow));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::component_rng;

    fn stack() -> Stack {
        Stack::new(component_rng(1, 2))
    }

    #[test]
    fn forty_thousand_connections_from_one_host_never_share_a_4_tuple() {
        // 40,000 connections from one host: to 4 servers x 5 ports (2,000 each) plus 20,000 to
        // one server port (the most one remote endpoint can take is 60999 - 32768 + 1 = 28232).
        let mut st = stack();
        let me = Ipv4::new(10, 0, 0, 1);
        let cfg = TcpConfig::default();
        let mut seen = std::collections::HashSet::new();
        let mut n = 0;
        for srv in 0..4u8 {
            for port in 0..5u16 {
                for _ in 0..1000 {
                    let r = SockAddr::new(Ipv4::new(10, 1, 0, srv), 5201 + port);
                    let s = st.connect(SimTime::ZERO, 0, 0, NO_FLOW, me, r, &cfg).unwrap();
                    let k = &st.socks[s as usize];
                    assert!(seen.insert((k.local, k.remote)), "4-tuple reused: {} -> {}", k.local, k.remote);
                    assert!((EPHEMERAL.0..=EPHEMERAL.1).contains(&k.local.port));
                    n += 1;
                }
            }
        }
        let one = SockAddr::new(Ipv4::new(10, 2, 0, 1), 80);
        for _ in 0..20_000 {
            let s = st.connect(SimTime::ZERO, 0, 0, NO_FLOW, me, one, &cfg).unwrap();
            let k = &st.socks[s as usize];
            assert!(seen.insert((k.local, k.remote)));
            n += 1;
        }
        assert_eq!(n, 40_000);
        assert_eq!(st.conns.len(), 40_000);
        // each connection is found again by its 4-tuple
        for (i, k) in st.socks.iter().enumerate() {
            assert_eq!(st.lookup(TCP, k.local, k.remote), Some(i as u32));
        }
    }

    #[test]
    fn exhausted_ports_are_refused_naming_both_ends() {
        let mut st = stack();
        let me = Ipv4::new(10, 0, 0, 1);
        let r = SockAddr::new(Ipv4::new(10, 1, 0, 1), 443);
        let cfg = TcpConfig::default();
        let range = u32::from(EPHEMERAL.1 - EPHEMERAL.0) + 1;
        for _ in 0..range {
            st.connect(SimTime::ZERO, 0, 0, NO_FLOW, me, r, &cfg).unwrap();
        }
        let e = st.connect(SimTime::ZERO, 0, 0, NO_FLOW, me, r, &cfg).unwrap_err();
        assert_eq!(e, SocketError::PortsExhausted { local: me, remote: r, range: EPHEMERAL });
        assert!(e.to_string().contains("10.1.0.1:443"), "{e}");
        // another remote port still has all its ephemeral ports
        assert!(st.connect(SimTime::ZERO, 0, 0, NO_FLOW, me, SockAddr::new(r.addr, 444), &cfg).is_ok());
    }

    #[test]
    fn an_ephemeral_port_skips_a_listening_port() {
        let mut st = stack();
        let me = Ipv4::new(10, 0, 0, 1);
        st.listen(0, 0, NO_FLOW, SockAddr::new(me, EPHEMERAL.0), &TcpConfig::default()).unwrap();
        let s = st.connect(SimTime::ZERO, 0, 0, NO_FLOW, me, SockAddr::new(Ipv4::new(10, 1, 0, 1), 80), &TcpConfig::default()).unwrap();
        assert_eq!(st.socks[s as usize].local.port, EPHEMERAL.0 + 1);
        assert!(matches!(st.listen(0, 0, NO_FLOW, SockAddr::new(me, EPHEMERAL.0), &TcpConfig::default()), Err(SocketError::AddrInUse(_))));
    }

    #[test]
    fn connect_from_binds_the_local_address_and_the_4_tuple_has_it() {
        // node 0 is multihomed (10.45.0.1 first, 10.32.0.1 other, behind routers 1 and 2); node
        // 3 (10.0.0.9) is a server behind both routers
        use celltcp_apps::app::SocketApi;
        let edges = [(0, 1, 0), (1, 0, 1), (1, 3, 2), (3, 1, 3), (2, 3, 4), (3, 2, 5), (0, 2, 6), (2, 0, 7)];
        let routes = celltcp_net::routing::Routes::compute(4, &edges[..6]);
        let (first, other, server) = (Ipv4::new(10, 45, 0, 1), Ipv4::new(10, 32, 0, 1), Ipv4::new(10, 0, 0, 9));
        let mut ifaces = crate::iface::Ifaces::new([first, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), server].into_iter());
        let i = |addr, out_dir, in_dir, peer| crate::iface::Iface { addr, out_dir, in_dir, peer };
        ifaces.add_multihomed(4, 0, vec![i(first, 0, 1, 1), i(other, 6, 7, 2)]);
        let mut st = stack();
        let cfg = TcpConfig::default();
        let remote = SockAddr::new(server, 5201);
        let mut api = NodeApi { stack: &mut st, node: 0, addr: first, app: 0, flow: NO_FLOW, bind: None, routes: &routes, ifaces: &ifaces };
        // an address the node does not have: EADDRNOTAVAIL, naming it
        let e = api.connect_from(SimTime::ZERO, Some(server), remote, &cfg).unwrap_err();
        assert_eq!(e, SocketError::AddrNotAvailable(server));
        assert!(e.to_string().contains("10.0.0.9"));
        assert_eq!(api.listen_on(Some(Ipv4::new(10, 9, 9, 9)), 80, &cfg).unwrap_err(), SocketError::AddrNotAvailable(Ipv4::new(10, 9, 9, 9)));
        // unbound: the route's source (the first interface's); bound: the other address
        let a = api.connect(SimTime::ZERO, remote, &cfg).unwrap();
        let b = api.connect_from(SimTime::ZERO, Some(other), remote, &cfg).unwrap();
        let (la, lb) = (st.socks[a.0 as usize].local, st.socks[b.0 as usize].local);
        assert_eq!((la.addr, lb.addr), (first, other));
        // the 4-tuple demultiplexes by the local address: each is found under its own
        assert_eq!(st.lookup(TCP, la, remote), Some(a.0));
        assert_eq!(st.lookup(TCP, lb, remote), Some(b.0));
        assert_eq!(st.lookup(TCP, SockAddr::new(first, lb.port), remote).filter(|&s| s == b.0), None);
        // an app bound by its flow's `bind` takes that address for every socket
        let mut bound = NodeApi { stack: &mut st, node: 0, addr: first, app: 0, flow: NO_FLOW, bind: Some(other), routes: &routes, ifaces: &ifaces };
        let c = bound.connect(SimTime::ZERO, remote, &cfg).unwrap();
        let u = bound.udp_bind(None, Some(remote)).unwrap();
        assert_eq!((st.socks[c.0 as usize].local.addr, st.socks[u.0 as usize].local.addr), (other, other));
    }
}
