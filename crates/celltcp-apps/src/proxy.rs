//! A split-connection TCP performance-enhancing proxy (RFC 3135 §2.1.1 and §2.4: the PEP
//! terminates the client's TCP connection and opens its own towards the server, each leg with
//! its own congestion control and parameters), with the buffers of a real proxy: a limit per
//! connection and a limit shared by all connections.
//!
//! **What the proxy holds.** A byte the proxy has read from one leg stays its responsibility
//! until the other leg's peer has acknowledged it: it is either in the proxy's own queue (read,
//! not yet accepted by the outgoing socket) or in the outgoing socket's send buffer (written, not
//! yet acknowledged). The proxy counts both ([`ProxyConn::held`]) and reads from a leg only while
//! the connection holds less than `per_connection_buffer` and all connections together less than
//! `buffer`. When full it stops reading, so the incoming leg's receive buffer fills and its
//! advertised window closes: the sender on that side is held back (backpressure) instead of a
//! queue growing in the proxy.
//!
//! **Explicit or transparent.** Made with [`SplitProxy::new`] it is an explicit proxy: clients
//! connect to its own address and port and it opens its leg to `upstream`. Made with
//! [`SplitProxy::transparent`] it is the app of a node's `[[proxy]]`: the node stack
//! intercepts TCP connections crossing the node as Linux's TPROXY does (an `IP_TRANSPARENT`
//! listener takes SYNs addressed to other hosts; `getsockname` on the accepted socket gives
//! the original destination) and hands each held SYN to [`SplitProxy::intercepted`]; the
//! client leg answers as the server (its address and port) and the server leg is opened from
//! the client's address and port (`IP_TRANSPARENT` + `bind()`), so neither end sees the proxy.
//!
//! **SYN handling** ([`SynMode`]). `Immediate`: the client's SYN is answered at once and the
//! server leg opened at the same moment (the explicit proxy always works so). `AfterServer`:
//! only the server leg is opened; the client's SYN is answered when the server's SYN-ACK has
//! arrived, and refused with a RST if the server leg fails (a RST from the server, or its SYN
//! retries exhausted), so the client sees the server's answer, one server-leg RTT later. A FIN
//! on one leg is passed on once everything before it has been forwarded; a reset leg resets
//! the other.
//!
//! Metrics: bytes read and written per leg and direction, the occupancy (now, peak, and a series
//! sampled at most every `sample_every`).

use celltcp_engine::{SimDuration, SimTime};
use celltcp_tcp::{TcpConfig, TcpEndpoint};

use crate::app::{App, SockAddr, SockId, SocketApi, SocketError, SocketEvent};

/// The proxy's settings.
#[derive(Clone, Copy, Debug)]
pub struct ProxyConfig {
    /// The port clients connect to.
    pub port: u16,
    /// The server the proxy opens its leg to.
    pub upstream: SockAddr,
    /// TCP of the client-side leg and of the server-side leg (congestion control per leg).
    pub cfg_client: TcpConfig,
    pub cfg_server: TcpConfig,
    /// Bytes held by all connections together (the proxy's memory), at least 1.
    pub buffer: u64,
    /// Bytes held by one connection, at least 1.
    pub per_connection_buffer: u64,
    /// The occupancy series keeps at most one sample per this interval.
    pub sample_every: SimDuration,
}

/// When a transparent proxy answers the client's SYN (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynMode {
    Immediate,
    AfterServer,
}

/// The client leg of a connection whose client SYN is still held (`AfterServer`).
const HELD: SockId = SockId(u32::MAX);

/// One proxied connection.
#[derive(Clone, Copy, Debug)]
pub struct ProxyConn {
    /// The client leg ([`ProxyConn::client_pending`] until accepted).
    pub client: SockId,
    pub server: SockId,
    /// The client's address and the original destination (the server's), for a transparent
    /// proxy; for an explicit one the client's and the proxy's own.
    pub peer: SockAddr,
    pub orig: SockAddr,
    /// When the connection was intercepted, and when each leg last moved bytes (read from it
    /// or acknowledged on it): the span of the legs' goodput.
    pub opened_at: SimTime,
    pub client_last: SimTime,
    pub server_last: SimTime,
    /// Bytes each leg had delivered at its last movement.
    pub client_moved: u64,
    pub server_moved: u64,
    /// The client's SYN was refused (the server leg failed in `AfterServer` mode).
    pub refused: bool,
    /// Read, not yet written into the other leg: towards the server and towards the client.
    pub queued_up: u64,
    pub queued_down: u64,
    /// Bytes read from the client leg and from the server leg.
    pub read_client: u64,
    pub read_server: u64,
    /// Bytes written into the server leg and into the client leg.
    pub written_server: u64,
    pub written_client: u64,
    server_closed: bool,
    client_closed: bool,
}

/// Bytes written into a socket and not yet acknowledged by its peer.
fn unacked(tcp: &TcpEndpoint) -> u64 {
    tcp.snd_buf().saturating_sub(tcp.send_buffer_free())
}

impl ProxyConn {
    fn new(now: SimTime, client: SockId, server: SockId, peer: SockAddr, orig: SockAddr) -> Self {
        ProxyConn {
            client,
            server,
            peer,
            orig,
            opened_at: now,
            client_last: now,
            server_last: now,
            client_moved: 0,
            server_moved: 0,
            refused: false,
            queued_up: 0,
            queued_down: 0,
            read_client: 0,
            read_server: 0,
            written_server: 0,
            written_client: 0,
            server_closed: false,
            client_closed: false,
        }
    }

    /// The client's SYN is held until the server answers (`AfterServer`).
    pub fn client_pending(&self) -> bool {
        self.client == HELD
    }

    /// Bytes this connection holds (module doc): queued both ways plus both sockets' unacknowledged bytes.
    pub fn held<S: SocketApi>(&self, net: &mut S) -> u64 {
        if self.client_pending() {
            return 0;
        }
        self.queued_up + self.queued_down + unacked(net.tcp(self.server)) + unacked(net.tcp(self.client))
    }

    /// Bytes a leg has delivered: read from it, plus written into it and acknowledged.
    fn moved<S: SocketApi>(&self, net: &mut S, client_leg: bool) -> u64 {
        if self.client_pending() {
            return 0;
        }
        let (sock, read, written) = if client_leg { (self.client, self.read_client, self.written_client) } else { (self.server, self.read_server, self.written_server) };
        read + written.saturating_sub(unacked(net.tcp(sock)))
    }

    /// The server leg was closed by the proxy (the client had closed), and the client leg.
    pub fn server_closed(&self) -> bool {
        self.server_closed
    }
    pub fn client_closed(&self) -> bool {
        self.client_closed
    }
}

/// The split-TCP proxy app (module doc).
#[derive(Clone, Debug)]
pub struct SplitProxy {
    pub cfg: ProxyConfig,
    pub listener: Option<SockId>,
    pub conns: Vec<ProxyConn>,
    /// Bytes held by all connections, as of the last event, and the most ever held.
    pub held: u64,
    pub peak_held: u64,
    /// (time, bytes held), at most one sample per `sample_every`.
    pub occupancy: Vec<(SimTime, u64)>,
    pub error: Option<SocketError>,
    /// A transparent proxy's SYN mode (`None`: an explicit proxy).
    pub transparent: Option<SynMode>,
}

impl SplitProxy {
    /// An explicit proxy: it listens on `cfg.port` and connects to `cfg.upstream`.
    pub fn new(cfg: ProxyConfig) -> Self {
        SplitProxy { cfg, listener: None, conns: Vec::new(), held: 0, peak_held: 0, occupancy: Vec::new(), error: None, transparent: None }
    }

    /// The app of a node's transparent proxy (`cfg.port` and `cfg.upstream` unused): the node
    /// stack hands it the connections it intercepts ([`SplitProxy::intercepted`]).
    pub fn transparent(cfg: ProxyConfig, syn: SynMode) -> Self {
        SplitProxy { transparent: Some(syn), ..SplitProxy::new(cfg) }
    }

    /// The node stack intercepted a SYN from `peer` to `orig` and holds it: the server leg is
    /// opened from `peer`, and the client leg accepted at once (`Immediate`) or once the
    /// server answered (`AfterServer`).
    pub fn intercepted<S: SocketApi>(&mut self, now: SimTime, orig: SockAddr, peer: SockAddr, net: &mut S) {
        let syn = self.transparent.unwrap_or(SynMode::Immediate);
        let client = match syn {
            SynMode::Immediate => match net.accept_held(now, orig, peer, &self.cfg.cfg_client) {
                Ok(c) => c,
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            },
            SynMode::AfterServer => HELD,
        };
        match net.connect_transparent(now, peer, orig, &self.cfg.cfg_server) {
            Ok(up) => self.conns.push(ProxyConn::new(now, client, up, peer, orig)),
            Err(e) => {
                self.error = Some(e);
                if client == HELD {
                    net.refuse_held(now, orig, peer);
                } else {
                    net.tcp(client).close();
                }
            }
        }
    }

    /// A held client SYN (`AfterServer`): accepted once the server leg is established,
    /// refused once it failed.
    fn settle_held<S: SocketApi>(&mut self, now: SimTime, net: &mut S, i: usize) {
        let c = self.conns[i];
        let up = net.tcp(c.server);
        if up.is_established() {
            match net.accept_held(now, c.orig, c.peer, &self.cfg.cfg_client) {
                Ok(s) => self.conns[i].client = s,
                Err(e) => {
                    self.error = Some(e);
                    net.tcp(c.server).close();
                    self.conns[i].refused = true;
                }
            }
        } else if up.is_closed() && !c.refused {
            net.refuse_held(now, c.orig, c.peer);
            self.conns[i].refused = true;
            self.conns[i].client_closed = true;
            self.conns[i].server_closed = true;
        }
    }

    fn total_held<S: SocketApi>(&self, net: &mut S) -> u64 {
        self.conns.iter().map(|c| c.held(net)).sum()
    }

    /// Moves bytes through connection `i` as far as the buffers allow.
    fn pump<S: SocketApi>(&mut self, now: SimTime, net: &mut S, i: usize) {
        if self.conns[i].client_pending() {
            return;
        }
        loop {
            let mut moved = 0;
            // room: per connection and shared (what the other connections hold counts)
            let others = self.total_held(net) - self.conns[i].held(net);
            let c = &mut self.conns[i];
            for up in [true, false] {
                let (from, to) = if up { (c.client, c.server) } else { (c.server, c.client) };
                // write what is queued
                let q = if up { &mut c.queued_up } else { &mut c.queued_down };
                if *q > 0 {
                    let n = net.tcp(to).write(*q);
                    *q -= n;
                    if up {
                        c.written_server += n;
                    } else {
                        c.written_client += n;
                    }
                    moved += n;
                }
                // read what the buffers allow
                let held = c.held(net);
                let room = self.cfg.per_connection_buffer.saturating_sub(held).min(self.cfg.buffer.saturating_sub(others + held));
                let n = net.tcp(from).readable().min(room);
                if n > 0 {
                    let got = net.tcp(from).read(now, n);
                    if up {
                        c.queued_up += got;
                        c.read_client += got;
                    } else {
                        c.queued_down += got;
                        c.read_server += got;
                    }
                    moved += got;
                }
            }
            if moved == 0 {
                break;
            }
        }
        // a FIN is passed on once everything before it was forwarded
        let c = &mut self.conns[i];
        if !c.server_closed && c.queued_up == 0 && net.tcp(c.client).peer_closed() && net.tcp(c.client).readable() == 0 {
            net.tcp(c.server).close();
            c.server_closed = true;
        }
        if !c.client_closed && c.queued_down == 0 && net.tcp(c.server).peer_closed() && net.tcp(c.server).readable() == 0 {
            net.tcp(c.client).close();
            c.client_closed = true;
        }
    }

    fn record<S: SocketApi>(&mut self, now: SimTime, net: &mut S, i: Option<usize>) {
        if let Some(i) = i {
            // the legs' last movement (the span of their goodput)
            let (cm, sm) = (self.conns[i].moved(net, true), self.conns[i].moved(net, false));
            let c = &mut self.conns[i];
            if cm != c.client_moved {
                c.client_moved = cm;
                c.client_last = now;
            }
            if sm != c.server_moved {
                c.server_moved = sm;
                c.server_last = now;
            }
        }
        self.held = self.total_held(net);
        self.peak_held = self.peak_held.max(self.held);
        if self.occupancy.last().is_none_or(|&(t, _)| now.saturating_since(t) >= self.cfg.sample_every) {
            self.occupancy.push((now, self.held));
        }
    }
}

impl App for SplitProxy {
    fn start<S: SocketApi>(&mut self, _now: SimTime, net: &mut S) {
        if self.transparent.is_some() {
            return; // the node's transparent listener hands it connections
        }
        match net.listen(self.cfg.port, &self.cfg.cfg_client) {
            Ok(s) => self.listener = Some(s),
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, ev: SocketEvent, net: &mut S) {
        if let SocketEvent::Accepted { .. } = ev {
            let (orig, peer) = net.sock_names(s).unwrap_or((SockAddr::new(net.local_addr(), self.cfg.port), SockAddr::new(celltcp_net::Ipv4(0), 0)));
            match net.connect(now, self.cfg.upstream, &self.cfg.cfg_server) {
                Ok(up) => self.conns.push(ProxyConn::new(now, s, up, peer, orig)),
                Err(e) => {
                    self.error = Some(e);
                    net.tcp(s).close();
                }
            }
            return;
        }
        let Some(i) = self.conns.iter().position(|c| c.client == s || c.server == s) else { return };
        if self.conns[i].client_pending() {
            self.settle_held(now, net, i);
            if self.conns[i].client_pending() {
                return;
            }
        }
        // a leg reset (or given up) resets nothing else in the model: the other leg is closed
        // once what it holds is sent (RFC 3135 §4.1: the PEP cannot pass on a RST's meaning)
        let before = self.held;
        self.pump(now, net, i);
        let c = &mut self.conns[i];
        if !c.refused {
            if !c.server_closed && net.tcp(c.server).is_closed() && !net.tcp(c.client).is_closed() && c.queued_down == 0 {
                // the server leg died (RST or retries exhausted) before a FIN: the client sees a close
                c.server_closed = true;
                c.client_closed = true;
                net.tcp(c.client).close();
            }
        }
        // bytes acknowledged here may make room for a connection the shared limit held back
        if self.conns.len() > 1 && self.total_held(net) < before {
            for j in 0..self.conns.len() {
                if j != i {
                    self.pump(now, net, j);
                }
            }
        }
        self.record(now, net, Some(i));
    }
}
