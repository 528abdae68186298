//! A split-connection TCP performance-enhancing proxy (RFC 3135 §2.1.1 and §2.4: the PEP
//! terminates the client's TCP connection and opens its own towards the server, each leg with
//! its own congestion control and parameters), with the buffers of a real proxy: a limit per
//! connection and a limit shared by all connections.
//!
//! **What the proxy holds.** A byte a leg's peer has sent stays the proxy's until the other
//! leg's peer has acknowledged it: in the incoming socket's receive buffer (in order and unread,
//! or out of order), in the proxy's own queue (read, not yet accepted by the outgoing socket), or
//! in the outgoing socket's send buffer (written, not yet acknowledged). [`ProxyConn::held`]
//! counts all of them, both directions: the proxy's true memory.
//!
//! **How the limits are kept.** As a splice/relay proxy does, by sizing its sockets' receive
//! buffers (a cap on each autotuned receive buffer, [`TcpEndpoint::set_rcv_buf_cap`], as
//! `SO_RCVBUF` or `tcp_rmem` bound Linux's) rather than by refusing to read: the proxy
//! reads whatever arrives (a read moves bytes from the receive buffer to the queue, the total is
//! unchanged), and what a receive buffer may still take is bounded by the window it advertised.
//! A connection's *commitment* ([`ProxyConn::committed`]) is its queued and unacknowledged
//! bytes plus, per incoming socket, the most its receive buffer can come to hold: the unread
//! bytes plus the window offered, or the buffer size if larger, plus one window-scale unit
//! less a byte (an advertised window is rounded up to it). Held bytes never exceed the commitment; the
//! commitment passes the cap by at most that rounding when a window that cannot shrink is
//! re-advertised (a few bytes: Linux rounds the same way). After every event the
//! proxy caps each leg's receive buffer so that the commitment stays within the connection's
//! cap (autotuning sizes it below the cap, so an idle direction keeps its small initial
//! window and a busy one grows to its throughput); the window already advertised is never shrunk (RFC 9293 §3.8.6.2.1), so a smaller
//! buffer closes the window as the data arrives: the sender on that side is held back
//! (backpressure, its advertised window closes) instead of a queue growing in the proxy.
//!
//! **The cap of a connection** (the fair-share policy). `per_connection_buffer`, and within the
//! shared `buffer` a connection may only grow into free space: with `n` open connections each
//! is promised a share `buffer / n`; a connection below its share may take free space up to its
//! share, one at or above it only the free space the others' shares do not claim. So the total
//! commitment never exceeds `buffer`, a connection whose client leg drains slowly cannot keep a
//! newer one (a web page, a video) from reading, and the space freed when any connection's
//! client leg drains goes first to the connections below their share. A leg opened while the
//! pool is full is capped before its SYN or SYN-ACK goes out (a zero window) but its buffer
//! starts from the autotuning start, so a rising cap opens its window with an update before
//! any byte has arrived (autotuning alone grows a buffer only as bytes are read). Each
//! direction keeps `min(64 KiB, per_connection_buffer / 8, share / 2)` of window for the other (a request
//! on a connection whose download fills it). Under pressure every connection keeps progressing,
//! as Linux lets a socket below `tcp_rmem[0]` allocate under `tcp_mem` pressure
//! (`__sk_mem_raise_allocated`): a direction keeps the first [`MIN_PROGRESS`] of its cap whatever
//! the reserve, a connection holding nothing may take that much free space above its share, and
//! space freed is offered to the least committed connections first. This mirrors a Linux splice proxy (HAProxy,
//! Squid with kernel buffers): the memory is in the sockets' buffers, sized per socket, and a
//! full pool slows the senders by their windows (RFC 3135 §5.1: a PEP's resources are bounded,
//! flow control is its tool).
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
//! **Cost.** The accounting reads every connection after each event (O(n)); it reads through
//! [`SocketApi::tcp_peek`] and sets a cap only when it changes the receiver
//! ([`TcpEndpoint::rcv_buf_cap_settled`]), so the node stack services only the sockets an event
//! changed, in the order the proxy first used them (docs/performance.md).
//!
//! Metrics: bytes read and written per leg and direction, the occupancy (now, peak, and a series
//! sampled at most every `sample_every`).

use celltcp_engine::{SimDuration, SimTime};
use celltcp_tcp::{BufSize, TcpConfig, TcpEndpoint};

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
    /// The smallest window the server leg advertised while the server was sending (from its
    /// first byte read until its FIN), as seen after each event: 0 when backpressure closed it.
    pub min_server_window: Option<u64>,
    server_closed: bool,
    client_closed: bool,
}

/// Bytes written into a socket and not yet acknowledged by its peer (none once it is closed).
fn unacked(tcp: &TcpEndpoint) -> u64 {
    if tcp.is_closed() {
        return 0;
    }
    tcp.send_buffer_used()
}

/// Bytes in a socket's receive buffer.
fn rcv_held(tcp: &TcpEndpoint) -> u64 {
    if tcp.is_closed() {
        return 0;
    }
    tcp.rcv_used()
}

/// The most a socket's receive buffer can come to hold without the proxy enlarging it (module
/// doc): the unread bytes plus the window offered, or the buffer plus one window-scale unit.
fn rcv_potential(tcp: &TcpEndpoint) -> u64 {
    if tcp.is_closed() {
        return 0;
    }
    let c = tcp.rcv_committed();
    if tcp.peer_fin_received() {
        return c;
    }
    // the window is rounded up to the scale unit, also when it does not grow (no shrinking)
    c.max(tcp.rcv_buf()) + tcp.rcv_wnd_granularity() - 1
}

/// The free space an idle connection may always take ([`SplitProxy::cap`]): Linux's
/// `tcp_rmem[0]`, the receive memory a socket is granted even under memory pressure
/// (`__sk_mem_raise_allocated`: an allocation below `sysctl_rmem[0]` always succeeds).
const MIN_PROGRESS: u64 = 4096;

/// The window each direction keeps for the other (module doc).
fn leg_reserve(per_connection: u64) -> u64 {
    (64 * 1024).min(per_connection / 8)
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
            min_server_window: None,
            server_closed: false,
            client_closed: false,
        }
    }

    /// The client's SYN is held until the server answers (`AfterServer`).
    pub fn client_pending(&self) -> bool {
        self.client == HELD
    }

    /// Bytes this connection holds (module doc): both receive buffers, both queues and both
    /// sockets' unacknowledged bytes.
    pub fn held<S: SocketApi>(&self, net: &mut S) -> u64 {
        let mut h = self.queued_up + self.queued_down + rcv_held(net.tcp_peek(self.server)) + unacked(net.tcp_peek(self.server));
        if !self.client_pending() {
            h += rcv_held(net.tcp_peek(self.client)) + unacked(net.tcp_peek(self.client));
        }
        h
    }

    /// The most bytes this connection can come to hold before the proxy enlarges a receive
    /// buffer (module doc); never below [`ProxyConn::held`].
    pub fn committed<S: SocketApi>(&self, net: &mut S) -> u64 {
        let mut h = self.queued_up + self.queued_down + rcv_potential(net.tcp_peek(self.server)) + unacked(net.tcp_peek(self.server));
        if !self.client_pending() {
            h += rcv_potential(net.tcp_peek(self.client)) + unacked(net.tcp_peek(self.client));
        }
        h
    }

    /// Open: it counts for the fair share (not refused, a leg still open or bytes held).
    fn open(&self) -> bool {
        !(self.refused || self.client_closed && self.server_closed)
    }

    /// Bytes a leg has delivered: read from it, plus written into it and acknowledged.
    fn moved<S: SocketApi>(&self, net: &mut S, client_leg: bool) -> u64 {
        if self.client_pending() {
            return 0;
        }
        let (sock, read, written) = if client_leg { (self.client, self.read_client, self.written_client) } else { (self.server, self.read_server, self.written_server) };
        read + written.saturating_sub(unacked(net.tcp_peek(sock)))
    }

    /// The server leg was closed by the proxy (the client had closed), and the client leg.
    pub fn server_closed(&self) -> bool {
        self.server_closed
    }
    pub fn client_closed(&self) -> bool {
        self.client_closed
    }
}

/// The shared buffer over the open connections during one event (module doc): the share of
/// each, the total commitment, and the space the connections below their share may still claim.
#[derive(Clone, Copy, Debug)]
struct Pool {
    share: u64,
    total: u64,
    claimed: u64,
    open: usize,
}

/// The split-TCP proxy app (module doc).
#[derive(Clone, Debug)]
pub struct SplitProxy {
    pub cfg: ProxyConfig,
    pub listener: Option<SockId>,
    pub conns: Vec<ProxyConn>,
    /// Bytes held by all connections (receive buffers, queues, send buffers), after the last
    /// event, and the most ever held after an event.
    pub held: u64,
    pub peak_held: u64,
    /// The connections' commitment after the last event (never below `held`, never above
    /// `buffer`), and the most ever.
    pub committed: u64,
    pub peak_committed: u64,
    /// (time, bytes held), at most one sample per `sample_every`.
    pub occupancy: Vec<(SimTime, u64)>,
    pub error: Option<SocketError>,
    /// A transparent proxy's SYN mode (`None`: an explicit proxy).
    pub transparent: Option<SynMode>,
    /// Per connection, its commitment during the current event.
    commit: Vec<u64>,
    /// Open connections after the last event.
    open_last: usize,
}

impl SplitProxy {
    /// An explicit proxy: it listens on `cfg.port` and connects to `cfg.upstream`.
    pub fn new(cfg: ProxyConfig) -> Self {
        SplitProxy {
            cfg,
            listener: None,
            conns: Vec::new(),
            held: 0,
            peak_held: 0,
            committed: 0,
            peak_committed: 0,
            occupancy: Vec::new(),
            error: None,
            transparent: None,
            commit: Vec::new(),
            open_last: 0,
        }
    }

    /// The app of a node's transparent proxy (`cfg.port` and `cfg.upstream` unused): the node
    /// stack hands it the connections it intercepts ([`SplitProxy::intercepted`]).
    pub fn transparent(cfg: ProxyConfig, syn: SynMode) -> Self {
        SplitProxy { transparent: Some(syn), ..SplitProxy::new(cfg) }
    }

    /// A leg's configuration: its receive buffer starts at `initial` bytes and autotunes up to
    /// `per_connection_buffer` (which sets the window-scale shift), under the cap the proxy
    /// sets after every event ([`TcpEndpoint::set_rcv_buf_cap`]).
    fn leg_cfg(&self, base: &TcpConfig, initial: u64) -> TcpConfig {
        let max = self.cfg.per_connection_buffer.max(initial).max(1);
        TcpConfig { rcv_buf: BufSize::Auto { initial, max }, ..*base }
    }

    /// The size autotuning starts a leg's receive buffer from (Linux: `tcp_rmem[1]`), the
    /// reserve of a direction; the cap set at once ([`SplitProxy::initial_rcv_buf`]) may hold
    /// the buffer below it, down to 0 when the pool is full, and raising the cap opens the window
    /// up to it at once (a window update), whatever the connection has received so far.
    fn leg_initial(&self) -> u64 {
        leg_reserve(self.cfg.per_connection_buffer)
    }

    /// The cap each leg of a new connection starts with (set before its SYN or SYN-ACK goes
    /// out): half of what the new connection may commit at once (its share of the free space),
    /// at most the reserve of a direction, less one window-scale unit (module doc); the proxy
    /// raises it as the pool allows and autotuning grows the buffer below it.
    fn initial_rcv_buf<S: SocketApi>(&mut self, net: &mut S, base: &TcpConfig) -> u64 {
        let pool = self.pool(net);
        let n = pool.open as u64 + 1;
        let share = (self.cfg.buffer / n).min(self.cfg.per_connection_buffer);
        let claimed: u64 = self.conns.iter().zip(&self.commit).filter(|(c, _)| c.open()).map(|(_, &h)| share.saturating_sub(h)).sum();
        let free = self.cfg.buffer.saturating_sub(pool.total);
        let grow = free.saturating_sub(claimed).max(free.min(share)).min(self.cfg.per_connection_buffer);
        let g = 1u64 << self.leg_cfg(base, 0).wscale_shift();
        (grow / 2).min(leg_reserve(self.cfg.per_connection_buffer)).saturating_sub(g - 1)
    }

    /// The node stack intercepted a SYN from `peer` to `orig` and holds it: the server leg is
    /// opened from `peer`, and the client leg accepted at once (`Immediate`) or once the
    /// server answered (`AfterServer`).
    pub fn intercepted<S: SocketApi>(&mut self, now: SimTime, orig: SockAddr, peer: SockAddr, net: &mut S) {
        let syn = self.transparent.unwrap_or(SynMode::Immediate);
        let client = match syn {
            SynMode::Immediate => {
                let b = self.initial_rcv_buf(net, &self.cfg.cfg_client.clone());
                let cfg = self.leg_cfg(&self.cfg.cfg_client, self.leg_initial());
                match net.accept_held(now, orig, peer, &cfg) {
                    Ok(c) => {
                        net.tcp(c).set_rcv_buf_cap(b);
                        c
                    }
                    Err(e) => {
                        self.error = Some(e);
                        return;
                    }
                }
            }
            SynMode::AfterServer => HELD,
        };
        let b = self.initial_rcv_buf(net, &self.cfg.cfg_server.clone());
        let cfg = self.leg_cfg(&self.cfg.cfg_server, self.leg_initial());
        match net.connect_transparent(now, peer, orig, &cfg) {
            Ok(up) => {
                net.tcp(up).set_rcv_buf_cap(b);
                self.conns.push(ProxyConn::new(now, client, up, peer, orig));
                self.record(now, net, None);
            }
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
        let up = net.tcp_peek(c.server);
        if up.is_established() {
            let b = self.initial_rcv_buf(net, &self.cfg.cfg_client.clone());
            let cfg = self.leg_cfg(&self.cfg.cfg_client, self.leg_initial());
            match net.accept_held(now, c.orig, c.peer, &cfg) {
                Ok(s) => {
                    net.tcp(s).set_rcv_buf_cap(b);
                    self.conns[i].client = s;
                }
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

    /// The connections' commitments (into `self.commit`) and the pool they make.
    fn pool<S: SocketApi>(&mut self, net: &mut S) -> Pool {
        self.commit.clear();
        for c in &self.conns {
            self.commit.push(c.committed(net));
        }
        let open = self.conns.iter().filter(|c| c.open()).count();
        let share = (self.cfg.buffer / open.max(1) as u64).min(self.cfg.per_connection_buffer);
        let total = self.commit.iter().sum();
        let claimed = self.conns.iter().zip(&self.commit).filter(|(c, _)| c.open()).map(|(_, &h)| share.saturating_sub(h)).sum();
        Pool { share, total, claimed, open }
    }

    /// Connection `i`'s commitment is now `new`.
    fn update(&mut self, pool: &mut Pool, i: usize, new: u64) {
        let old = self.commit[i];
        pool.total = pool.total.saturating_sub(old) + new;
        if self.conns[i].open() {
            pool.claimed = pool.claimed.saturating_sub(pool.share.saturating_sub(old)) + pool.share.saturating_sub(new);
        }
        self.commit[i] = new;
    }

    /// The most connection `i` may commit now (module doc): it grows only into free space, up
    /// to its share whatever the others claim, beyond it into what they do not claim.
    /// A connection that holds no byte (`idle`: nothing of it left to drain, so no event of its
    /// own will free space) may still take [`MIN_PROGRESS`] of the free space, as Linux lets a
    /// socket below `tcp_rmem[0]` allocate under memory pressure: without it a connection whose
    /// commitment is above its share (a window advertised before more connections came, which
    /// cannot be shrunk) never moved again while newer ones claimed all the free space.
    fn cap(&self, pool: &Pool, i: usize, idle: bool) -> u64 {
        let h = self.commit[i];
        let free = self.cfg.buffer.saturating_sub(pool.total);
        let own = if self.conns[i].open() { pool.share.saturating_sub(h) } else { 0 };
        let others = pool.claimed.saturating_sub(own);
        let floor = if idle { free.min(MIN_PROGRESS) } else { 0 };
        let grow = free.saturating_sub(others).max(free.min(pool.share.saturating_sub(h))).max(floor);
        (h + grow).min(self.cfg.per_connection_buffer)
    }

    /// Sizes the receive buffers of connection `i`'s legs so that its commitment stays within
    /// `cap` (module doc).
    fn grant<S: SocketApi>(&mut self, net: &mut S, pool: &mut Pool, i: usize, cap: u64) {
        let c = self.conns[i];
        // the reserve comes out of the connection's fair share, at most half of it: a reserve
        // larger than the share (16 connections in a 256 KB pool: 32 KB each way, share 16 KB)
        // left every direction's window closed for the other's unused reserve (a deadlock)
        let reserve = leg_reserve(self.cfg.per_connection_buffer).min(pool.share / 2);
        for (from, other) in [(c.server, c.client), (c.client, c.server)] {
            if from == HELD {
                continue;
            }
            let t = net.tcp_peek(from);
            if !t.is_established() || t.is_closed() || t.peer_fin_received() {
                continue;
            }
            let own = rcv_potential(t);
            let g = t.rcv_wnd_granularity();
            // the other direction keeps a window while it can still receive
            let keep = if other == HELD {
                reserve
            } else {
                let o = net.tcp_peek(other);
                if o.is_closed() || o.peer_fin_received() {
                    0
                } else {
                    reserve.saturating_sub(rcv_potential(o))
                }
            };
            let rest = self.commit[i].saturating_sub(own);
            // the reserve never takes a direction's first MIN_PROGRESS of the cap: with a
            // small share, space freed in small pieces otherwise never opened a window
            let target = cap.saturating_sub(rest + keep).max(cap.saturating_sub(rest).min(MIN_PROGRESS));
            let buf = (target + 1).saturating_sub(g);
            // a cap already in force changes nothing: the socket is only read, so the stack need
            // not service it (the survey of every connection after space was freed)
            if !net.tcp_peek(from).rcv_buf_cap_settled(buf) {
                net.tcp(from).set_rcv_buf_cap(buf);
            }
            let new = rest + rcv_potential(net.tcp_peek(from));
            self.update(pool, i, new);
        }
    }

    /// Moves bytes through connection `i` (everything readable is read: the receive buffers
    /// bound what the connection holds) and sizes its receive buffers.
    fn pump<S: SocketApi>(&mut self, net: &mut S, pool: &mut Pool, now: SimTime, i: usize) {
        if self.conns[i].client_pending() {
            let cap = self.cap(pool, i, false);
            self.grant(net, pool, i, cap);
            return;
        }
        // the cap before the reads: a read moves bytes from a receive buffer into the queue,
        // and the buffers are then sized to it
        let idle = self.conns[i].held(net) == 0;
        let cap = self.cap(pool, i, idle);
        loop {
            let mut moved = 0;
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
                let n = net.tcp_peek(from).readable();
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
        if !c.server_closed && c.queued_up == 0 && net.tcp_peek(c.client).peer_closed() && net.tcp_peek(c.client).readable() == 0 {
            net.tcp(c.server).close();
            c.server_closed = true;
        }
        if !c.client_closed && c.queued_down == 0 && net.tcp_peek(c.server).peer_closed() && net.tcp_peek(c.server).readable() == 0 {
            net.tcp(c.client).close();
            c.client_closed = true;
        }
        let h = self.conns[i].committed(net);
        self.update(pool, i, h);
        self.grant(net, pool, i, cap);
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
            let up = net.tcp_peek(c.server);
            if c.read_server > 0 && !up.is_closed() && !up.peer_fin_received() {
                let w = up.rcv_wnd();
                c.min_server_window = Some(c.min_server_window.map_or(w, |m| m.min(w)));
            }
        }
        let (mut held, mut committed) = (0, 0);
        for c in &self.conns {
            held += c.held(net);
            committed += c.committed(net);
        }
        self.held = held;
        self.peak_held = self.peak_held.max(held);
        self.committed = committed;
        self.peak_committed = self.peak_committed.max(committed);
        self.open_last = self.conns.iter().filter(|c| c.open()).count();
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
        // an explicit proxy's client legs are accepted by the listener, before the proxy sees
        // them: they start with a window the pool's eighth bounds
        let initial = (self.cfg.buffer / 8).min(leg_reserve(self.cfg.per_connection_buffer));
        let cfg = self.leg_cfg(&self.cfg.cfg_client, initial);
        match net.listen(self.cfg.port, &cfg) {
            Ok(s) => self.listener = Some(s),
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, ev: SocketEvent, net: &mut S) {
        if let SocketEvent::Accepted { .. } = ev {
            let (orig, peer) = net.sock_names(s).unwrap_or((SockAddr::new(net.local_addr(), self.cfg.port), SockAddr::new(celltcp_net::Ipv4(0), 0)));
            let b = self.initial_rcv_buf(net, &self.cfg.cfg_server.clone());
            let cfg = self.leg_cfg(&self.cfg.cfg_server, self.leg_initial());
            match net.connect(now, self.cfg.upstream, &cfg) {
                Ok(up) => {
                    net.tcp(up).set_rcv_buf_cap(b);
                    self.conns.push(ProxyConn::new(now, s, up, peer, orig));
                    self.record(now, net, None);
                }
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
        }
        // a leg reset (or given up) resets nothing else in the model: the other leg is closed
        // once what it holds is sent (RFC 3135 §4.1: the PEP cannot pass on a RST's meaning)
        let mut pool = self.pool(net);
        let (before, open_before) = (self.committed, self.open_last);
        self.pump(net, &mut pool, now, i);
        let c = &mut self.conns[i];
        if !c.refused && !c.client_pending() && !c.server_closed && net.tcp_peek(c.server).is_closed() && !net.tcp_peek(c.client).is_closed() && c.queued_down == 0 {
            // the server leg died (RST or retries exhausted) before a FIN: the client sees a close
            c.server_closed = true;
            c.client_closed = true;
            net.tcp(c.client).close();
        }
        // space freed here (bytes acknowledged, a connection closed) may let the others' windows open
        if self.conns.len() > 1 && (pool.total < before || self.conns.iter().filter(|c| c.open()).count() < open_before) {
            let mut pool = self.pool(net);
            // the connections committing least first: the freed space goes to the most starved
            // (in index order a full pool's newest connections never saw any of it)
            let mut order: Vec<usize> = (0..self.conns.len()).collect();
            order.sort_by_key(|&j| self.commit[j]);
            for j in order {
                if j != i {
                    let idle = self.conns[j].held(net) == 0;
                    let cap = self.cap(&pool, j, idle);
                    self.grant(net, &mut pool, j, cap);
                }
            }
        }
        self.record(now, net, Some(i));
    }
}
