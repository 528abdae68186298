//! The application interface: an [`App`] is a sans-IO state machine that owns any number of
//! sockets over its life and reaches the network only through the [`SocketApi`] its node's
//! stack implements (the BSD socket calls, reduced to what a simulation needs: connect, listen,
//! accept, write, read, close, UDP bind/send, ICMP echo). The run loop hands it socket events
//! and fires its one timer ([`App::next_deadline`]), as quinn hands a `Connection` its
//! `Timer`s.
//!
//! Events are level-triggered, as `epoll` in level mode: each one means "this socket changed;
//! look at it", and its kind says what changed first ([`SocketEvent`]). An app that pumps its
//! socket on any event (the bulk sender and sink do) needs no more than that.
//!
//! Apps are dispatched through the closed enum [`AnyApp`] (STYLE.md B3), never `Box<dyn>`.

use celltcp_engine::SimTime;
use celltcp_net::{IcmpEcho, Ipv4, UdpDatagram};
use celltcp_mptcp::MptcpConnection;
use celltcp_tcp::{TcpConfig, TcpEndpoint};

use crate::bulk::{TcpClient, TcpServer};
use crate::http::HttpServer;
use crate::ping::PingApp;
use crate::proxy::SplitProxy;
use crate::relay::Relay;
use crate::udp::{CbrApp, UdpSinkApp};
use crate::video::VideoClient;
use crate::web::WebClient;

/// A socket of a node's stack (an index into the stack's socket arena).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SockId(pub u32);

/// An (address, port) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SockAddr {
    pub addr: Ipv4,
    pub port: u16,
}

impl SockAddr {
    pub const fn new(addr: Ipv4, port: u16) -> Self {
        SockAddr { addr, port }
    }
}

impl std::fmt::Display for SockAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.addr, self.port)
    }
}

/// Why a socket call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SocketError {
    /// Every ephemeral port towards this remote endpoint is in use (Linux: `EADDRNOTAVAIL`).
    PortsExhausted { local: Ipv4, remote: SockAddr, range: (u16, u16) },
    /// The local port is already bound (`EADDRINUSE`).
    AddrInUse(SockAddr),
    /// No route to the remote address from this node.
    Unreachable(Ipv4),
    /// The local address to bind is not one of this node's (Linux: `EADDRNOTAVAIL`).
    AddrNotAvailable(Ipv4),
    /// The socket id is not a socket of this kind on this node.
    BadSocket(SockId),
}

impl std::fmt::Display for SocketError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SocketError::PortsExhausted { local, remote, range } => {
                write!(f, "no free ephemeral port on {local} towards {remote}: all of {}-{} are in use", range.0, range.1)
            }
            SocketError::AddrInUse(a) => write!(f, "address {a} is already in use"),
            SocketError::Unreachable(a) => write!(f, "no route to {a}"),
            SocketError::AddrNotAvailable(a) => write!(f, "{a} is not an address of this node"),
            SocketError::BadSocket(s) => write!(f, "socket {} does not exist here", s.0),
        }
    }
}

impl std::error::Error for SocketError {}

/// What happened to a socket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SocketEvent {
    /// A listener accepted a new connection, `socket` (already owned by the listener's app).
    Accepted { listener: SockId },
    /// The three-way handshake completed (RFC 9293 §3.5).
    Connected,
    /// In-order bytes wait to be read, or the peer closed (a read returns what is left).
    Readable,
    /// Anything else: ACKs freed send buffer, a timer ran, a segment was sent.
    Writable,
    /// The connection is closed (both FINs, a RST, or retransmissions gave up).
    Closed,
    /// A UDP datagram arrived on a bound socket, from `from`.
    Datagram { from: SockAddr, datagram: UdpDatagram },
    /// An ICMP echo reply arrived for an echo socket.
    EchoReply(IcmpEcho),
}

/// The socket calls a node's stack offers its apps. `now` is the simulated time of the call.
pub trait SocketApi {
    /// The node's (primary) address.
    fn local_addr(&self) -> Ipv4;
    /// Active open towards `remote` from an ephemeral port (RFC 6056 range 32768-60999 as
    /// Linux uses); the SYN leaves once the app returns.
    fn connect(&mut self, now: SimTime, remote: SockAddr, cfg: &TcpConfig) -> Result<SockId, SocketError>;
    /// A listener on `port`: each SYN creates a connection with `cfg` and an
    /// [`SocketEvent::Accepted`] event for it.
    fn listen(&mut self, port: u16, cfg: &TcpConfig) -> Result<SockId, SocketError>;
    /// [`SocketApi::connect`] from the local address `local` (`bind()` before `connect()`):
    /// one of the node's addresses, else [`SocketError::AddrNotAvailable`]. `None`: the
    /// address of the interface the route to `remote` leaves by (Linux's preferred source).
    fn connect_from(&mut self, now: SimTime, local: Option<Ipv4>, remote: SockAddr, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        match local {
            Some(a) if a != self.local_addr() => Err(SocketError::AddrNotAvailable(a)),
            _ => self.connect(now, remote, cfg),
        }
    }
    /// [`SocketApi::listen`] on one local address only (`None`: the node's first address,
    /// which on a multihomed node also takes connections to its other addresses, as a listener
    /// on `0.0.0.0` would).
    fn listen_on(&mut self, local: Option<Ipv4>, port: u16, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        match local {
            Some(a) if a != self.local_addr() => Err(SocketError::AddrNotAvailable(a)),
            _ => self.listen(port, cfg),
        }
    }
    /// The TCP endpoint of a connection: `write`, `read`, `close` and its state. Panics on
    /// an MPTCP connection: apps that may be given one use [`SocketApi::stream`].
    fn tcp(&mut self, s: SockId) -> &mut TcpEndpoint;
    /// The TCP endpoint of a connection, to read its state only. [`SocketApi::tcp`] tells the
    /// stack the socket may have changed (it sends what became sendable and re-arms the
    /// socket's timer once the app returns); this does not, so an app that reads many
    /// connections per event and changes a few (the proxy's buffer accounting) costs the
    /// stack only the ones it changed. The stack keeps the order the app used its sockets in,
    /// read or changed, for the order it services the changed ones. The default is
    /// [`SocketApi::tcp`].
    fn tcp_peek(&mut self, s: SockId) -> &TcpEndpoint {
        self.tcp(s)
    }
    /// A connection's byte stream: its TCP endpoint, or its MPTCP connection when the flow
    /// asked for MPTCP (the stack decides at `connect` and `listen`; the app does not know).
    fn stream(&mut self, s: SockId) -> Stream<'_> {
        Stream::Tcp(self.tcp(s))
    }
    /// A UDP socket bound to `port` (an ephemeral one with `None`), sending to `peer` if given.
    fn udp_bind(&mut self, port: Option<u16>, peer: Option<SockAddr>) -> Result<SockId, SocketError>;
    /// Sends one datagram of `payload_len` bytes carrying `seq` (and the send time) to the
    /// socket's peer.
    fn udp_send(&mut self, now: SimTime, s: SockId, payload_len: u32, seq: u64);
    /// An ICMP echo socket towards `dst` (its identifier is allocated by the stack).
    fn echo_open(&mut self, dst: Ipv4) -> Result<SockId, SocketError>;

    // ---- transparent proxying (Linux IP_TRANSPARENT + TPROXY; see `proxy.rs`): only a node
    // with a `[[proxy]]` offers them, the defaults refuse.

    /// A connection's local and remote address (`getsockname`, `getpeername`): for a
    /// connection a transparent proxy accepted, the local one is the original destination.
    fn sock_names(&mut self, s: SockId) -> Result<(SockAddr, SockAddr), SocketError> {
        Err(SocketError::BadSocket(s))
    }
    /// Accepts the SYN the node's transparent listener holds from `peer` to `orig` (the
    /// intercepted client): the connection answers as `orig`.
    fn accept_held(&mut self, now: SimTime, orig: SockAddr, peer: SockAddr, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        let _ = (now, peer, cfg);
        Err(SocketError::AddrNotAvailable(orig.addr))
    }
    /// Refuses the SYN held from `peer` to `orig`: a RST answers it as `orig` (RFC 9293
    /// §3.10.7.1, the reply of a closed port).
    fn refuse_held(&mut self, now: SimTime, orig: SockAddr, peer: SockAddr) {
        let _ = (now, orig, peer);
    }
    /// Active open from a foreign address (`IP_TRANSPARENT` and `bind()` to `local`, then
    /// `connect()`): the server-side leg of a transparent proxy, from the client's address.
    fn connect_transparent(&mut self, now: SimTime, local: SockAddr, remote: SockAddr, cfg: &TcpConfig) -> Result<SockId, SocketError> {
        let _ = (now, remote, cfg);
        Err(SocketError::AddrNotAvailable(local.addr))
    }
    /// Sends an echo request (RFC 792) with `seq` and `payload_len` bytes.
    fn echo_send(&mut self, now: SimTime, s: SockId, seq: u16, payload_len: u32);
}

/// What apps do with a connection's bytes: the calls a [`TcpEndpoint`] and an MPTCP
/// connection (RFC 8684 §3.3: one byte stream over the subflows) both answer.
pub trait ByteStream {
    /// The handshake completed (for MPTCP: the keys are exchanged, a subflow carries data).
    fn is_established(&self) -> bool;
    fn send_buffer_free(&self) -> u64;
    /// What a blocking writer may add now: the free space, or nothing while a writer that
    /// filled the buffer waits to be woken (TCP: [`TcpEndpoint::send_buffer_writable`]).
    fn send_buffer_writable(&self) -> u64 {
        self.send_buffer_free()
    }
    /// `poll()`/`select()` on the socket: is it writable? A socket that is not marks its
    /// writer as waiting, as Linux `tcp_poll` sets `SOCK_NOSPACE` (TCP:
    /// [`TcpEndpoint::poll_writable`]).
    fn poll_writable(&mut self) -> bool {
        self.send_buffer_writable() > 0
    }
    /// Writes up to `bytes`; returns how many fit in the send buffer.
    fn write(&mut self, bytes: u64) -> u64;
    fn readable(&self) -> u64;
    /// Reads up to `max` in-order bytes.
    fn read(&mut self, now: SimTime, max: u64) -> u64;
    /// The peer closed (FIN, or DATA_FIN) and everything before it has been read.
    fn peer_closed(&self) -> bool;
    /// Closes our direction (FIN, or DATA_FIN after all data).
    fn close(&mut self);
}

impl ByteStream for TcpEndpoint {
    #[inline]
    fn is_established(&self) -> bool {
        TcpEndpoint::is_established(self)
    }
    #[inline]
    fn send_buffer_free(&self) -> u64 {
        TcpEndpoint::send_buffer_free(self)
    }
    #[inline]
    fn send_buffer_writable(&self) -> u64 {
        TcpEndpoint::send_buffer_writable(self)
    }
    #[inline]
    fn poll_writable(&mut self) -> bool {
        TcpEndpoint::poll_writable(self)
    }
    #[inline]
    fn write(&mut self, bytes: u64) -> u64 {
        TcpEndpoint::write(self, bytes)
    }
    #[inline]
    fn readable(&self) -> u64 {
        TcpEndpoint::readable(self)
    }
    #[inline]
    fn read(&mut self, now: SimTime, max: u64) -> u64 {
        TcpEndpoint::read(self, now, max)
    }
    #[inline]
    fn peer_closed(&self) -> bool {
        TcpEndpoint::peer_closed(self)
    }
    #[inline]
    fn close(&mut self) {
        TcpEndpoint::close(self)
    }
}

impl ByteStream for MptcpConnection {
    fn is_established(&self) -> bool {
        MptcpConnection::is_established(self)
    }
    fn send_buffer_free(&self) -> u64 {
        MptcpConnection::send_buffer_free(self)
    }
    fn write(&mut self, bytes: u64) -> u64 {
        MptcpConnection::write(self, bytes)
    }
    fn readable(&self) -> u64 {
        MptcpConnection::readable(self)
    }
    fn read(&mut self, now: SimTime, max: u64) -> u64 {
        MptcpConnection::read(self, now, max)
    }
    fn peer_closed(&self) -> bool {
        MptcpConnection::peer_closed(self)
    }
    fn close(&mut self) {
        MptcpConnection::close(self)
    }
}

/// A connection as [`SocketApi::stream`] hands it out (closed-enum dispatch, STYLE.md B3).
pub enum Stream<'a> {
    Tcp(&'a mut TcpEndpoint),
    Mptcp(&'a mut MptcpConnection),
}

/// An application.
pub trait App {
    /// The app starts (at its start time): it opens its sockets.
    fn start<S: SocketApi>(&mut self, now: SimTime, net: &mut S);
    /// Socket `s` (one of the app's) changed.
    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, ev: SocketEvent, net: &mut S);
    /// The app's deadline is due.
    fn on_timer<S: SocketApi>(&mut self, _now: SimTime, _net: &mut S) {}
    /// When [`App::on_timer`] should run next (None: no timer).
    fn next_deadline(&self) -> Option<SimTime> {
        None
    }
}

/// Every app, for closed-enum dispatch.
#[derive(Clone, Debug)]
pub enum AnyApp {
    TcpClient(TcpClient),
    TcpServer(TcpServer),
    Cbr(CbrApp),
    UdpSink(UdpSinkApp),
    Ping(PingApp),
    Relay(Relay),
    Http(HttpServer),
    /// Boxed: its RNG and connection table make it the largest app.
    Web(Box<WebClient>),
    Video(VideoClient),
    Proxy(SplitProxy),
}

macro_rules! each {
    ($self:expr, $a:ident => $e:expr) => {
        match $self {
            AnyApp::TcpClient($a) => $e,
            AnyApp::TcpServer($a) => $e,
            AnyApp::Cbr($a) => $e,
            AnyApp::UdpSink($a) => $e,
            AnyApp::Ping($a) => $e,
            AnyApp::Relay($a) => $e,
            AnyApp::Http($a) => $e,
            AnyApp::Web($a) => $e,
            AnyApp::Video($a) => $e,
            AnyApp::Proxy($a) => $e,
        }
    };
}

impl App for AnyApp {
    #[inline]
    fn start<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        each!(self, a => a.start(now, net))
    }
    #[inline]
    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, ev: SocketEvent, net: &mut S) {
        each!(self, a => a.on_socket(now, s, ev, net))
    }
    #[inline]
    fn on_timer<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        each!(self, a => a.on_timer(now, net))
    }
    #[inline]
    fn next_deadline(&self) -> Option<SimTime> {
        each!(self, a => a.next_deadline())
    }
}
