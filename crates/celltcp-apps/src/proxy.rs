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
//! **SYN handling.** The client-side leg is accepted as soon as its SYN arrives (the node stack
//! answers a SYN at once); the server-side leg is opened at the same moment ("immediate" mode of
//! the issue; the "after-server" mode needs a deferred accept in the node stack and is not
//! offered yet). A FIN on one leg is passed on once everything before it has been forwarded.
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

/// One proxied connection.
#[derive(Clone, Copy, Debug)]
pub struct ProxyConn {
    pub client: SockId,
    pub server: SockId,
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
    fn new(client: SockId, server: SockId) -> Self {
        ProxyConn { client, server, queued_up: 0, queued_down: 0, read_client: 0, read_server: 0, written_server: 0, written_client: 0, server_closed: false, client_closed: false }
    }

    /// Bytes this connection holds (module doc): queued both ways plus both sockets' unacknowledged bytes.
    pub fn held<S: SocketApi>(&self, net: &mut S) -> u64 {
        self.queued_up + self.queued_down + unacked(net.tcp(self.server)) + unacked(net.tcp(self.client))
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
}

impl SplitProxy {
    pub fn new(cfg: ProxyConfig) -> Self {
        SplitProxy { cfg, listener: None, conns: Vec::new(), held: 0, peak_held: 0, occupancy: Vec::new(), error: None }
    }

    fn total_held<S: SocketApi>(&self, net: &mut S) -> u64 {
        self.conns.iter().map(|c| c.held(net)).sum()
    }

    /// Moves bytes through connection `i` as far as the buffers allow.
    fn pump<S: SocketApi>(&mut self, now: SimTime, net: &mut S, i: usize) {
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

    fn record<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.held = self.total_held(net);
        self.peak_held = self.peak_held.max(self.held);
        if self.occupancy.last().is_none_or(|&(t, _)| now.saturating_since(t) >= self.cfg.sample_every) {
            self.occupancy.push((now, self.held));
        }
    }
}

impl App for SplitProxy {
    fn start<S: SocketApi>(&mut self, _now: SimTime, net: &mut S) {
        match net.listen(self.cfg.port, &self.cfg.cfg_client) {
            Ok(s) => self.listener = Some(s),
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, ev: SocketEvent, net: &mut S) {
        if let SocketEvent::Accepted { .. } = ev {
            match net.connect(now, self.cfg.upstream, &self.cfg.cfg_server) {
                Ok(up) => self.conns.push(ProxyConn::new(s, up)),
                Err(e) => {
                    self.error = Some(e);
                    net.tcp(s).close();
                }
            }
            return;
        }
        let Some(i) = self.conns.iter().position(|c| c.client == s || c.server == s) else { return };
        let before = self.held;
        self.pump(now, net, i);
        // bytes acknowledged here may make room for a connection the shared limit held back
        if self.conns.len() > 1 && self.total_held(net) < before {
            for j in 0..self.conns.len() {
                if j != i {
                    self.pump(now, net, j);
                }
            }
        }
        self.record(now, net);
    }
}
