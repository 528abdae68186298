//! A TCP relay: it accepts connections on `port` and, for each, opens its own connection to
//! `upstream` and copies the bytes both ways, closing each side once the other side's peer has
//! closed and everything is copied. This is the shape of a split-TCP proxy (RFC 3135 §2.1.1:
//! a PEP that terminates the TCP connection and opens a second one), each leg with its own
//! congestion control (`cfg_down` towards clients, `cfg_up` towards the upstream).
//!
//! The relay never holds bytes itself: it reads from one socket only as much as the other
//! socket's send buffer takes, so its memory is the two sockets' buffers, as a proxy's is.

use celltcp_engine::SimTime;
use celltcp_tcp::TcpConfig;

use crate::app::{App, SockAddr, SockId, SocketApi, SocketError, SocketEvent};

/// One relayed connection: the accepted socket and the one opened upstream.
#[derive(Clone, Copy, Debug)]
pub struct Leg {
    pub down: SockId,
    pub up: SockId,
    /// Bytes copied client -> upstream and upstream -> client.
    pub up_bytes: u64,
    pub down_bytes: u64,
    up_closed: bool,
    down_closed: bool,
}

impl Leg {
    /// The relay closed its upstream connection (the client had closed).
    pub fn up_closed(&self) -> bool {
        self.up_closed
    }
    /// The relay closed the client's connection (the upstream had closed).
    pub fn down_closed(&self) -> bool {
        self.down_closed
    }
}

#[derive(Clone, Debug)]
pub struct Relay {
    pub port: u16,
    pub upstream: SockAddr,
    pub cfg_down: TcpConfig,
    pub cfg_up: TcpConfig,
    pub listener: Option<SockId>,
    pub legs: Vec<Leg>,
    pub error: Option<SocketError>,
}

impl Relay {
    pub fn new(port: u16, upstream: SockAddr, cfg_down: TcpConfig, cfg_up: TcpConfig) -> Self {
        Relay { port, upstream, cfg_down, cfg_up, listener: None, legs: Vec::new(), error: None }
    }
}

/// Moves what `from` has to read into `to`, as much as `to`'s send buffer takes.
fn copy<S: SocketApi>(now: SimTime, net: &mut S, from: SockId, to: SockId) -> u64 {
    let room = net.tcp(to).send_buffer_free();
    let n = net.tcp(from).readable().min(room);
    if n == 0 {
        return 0;
    }
    let got = net.tcp(from).read(now, n);
    let put = net.tcp(to).write(got);
    debug_assert_eq!(put, got);
    got
}

impl App for Relay {
    fn start<S: SocketApi>(&mut self, _now: SimTime, net: &mut S) {
        match net.listen(self.port, &self.cfg_down) {
            Ok(s) => self.listener = Some(s),
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, ev: SocketEvent, net: &mut S) {
        if let SocketEvent::Accepted { .. } = ev {
            match net.connect(now, self.upstream, &self.cfg_up) {
                Ok(up) => self.legs.push(Leg { down: s, up, up_bytes: 0, down_bytes: 0, up_closed: false, down_closed: false }),
                Err(e) => {
                    self.error = Some(e);
                    net.tcp(s).close();
                }
            }
            return;
        }
        let Some(leg) = self.legs.iter_mut().find(|l| l.down == s || l.up == s) else { return };
        // both directions: an ACK on one side frees room for bytes waiting on the other
        leg.up_bytes += copy(now, net, leg.down, leg.up);
        leg.down_bytes += copy(now, net, leg.up, leg.down);
        // a side's FIN is passed on once everything before it was copied
        if !leg.up_closed && net.tcp(leg.down).peer_closed() {
            net.tcp(leg.up).close();
            leg.up_closed = true;
        }
        if !leg.down_closed && net.tcp(leg.up).peer_closed() {
            net.tcp(leg.down).close();
            leg.down_closed = true;
        }
    }
}
