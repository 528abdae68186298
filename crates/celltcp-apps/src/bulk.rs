//! Bulk transfer over TCP: the sending application writes whenever the socket's send buffer has
//! room (as a blocking `write()` loop does), in units of `chunk` bytes (`iperf3 -l`), until it has
//! written `limit` bytes or reached `stop_at`; then it closes. The sink reads everything as soon as
//! it arrives, so a fixed receive buffer is never held full by the application.
//!
//! With a rate (`iperf3 -b` on TCP, or ns-3's OnOff application over TCP) the sender writes no
//! faster than that: by time `t` it has written at most `rate × (t − start)` bytes, one `chunk`
//! at a time, and [`BulkSender::next_write_at`] tells when the next chunk is due.

use celltcp_engine::SimTime;
use celltcp_tcp::TcpConfig;

use crate::app::{App, ByteStream, SockAddr, SockId, SocketApi, SocketError, SocketEvent, Stream};

/// The sending side of a bulk or iperf transfer.
#[derive(Clone, Debug)]
pub struct BulkSender {
    limit: Option<u64>,
    stop_at: Option<SimTime>,
    chunk: u64,
    written: u64,
    closed: bool,
    /// Application rate in bit/s and the time it counts from.
    rate: Option<(u64, SimTime)>,
    /// Blocks written per `select()` wake-up (iperf3's `multisend`); None: a blocking write
    /// loop.
    multisend: Option<u32>,
}

impl BulkSender {
    /// `limit`: total bytes (None = unlimited); `stop_at`: stop writing at this time; `chunk`:
    /// write unit in bytes (at least 1).
    pub fn new(limit: Option<u64>, stop_at: Option<SimTime>, chunk: u64) -> Self {
        BulkSender { limit, stop_at, chunk: chunk.max(1), written: 0, closed: false, rate: None, multisend: None }
    }

    /// Writes as iperf3 3.12's `iperf_send` does without a rate: `blocks` blocks (its
    /// `multisend`, 10), each a blocking write, then back to `select()`, which goes on at once
    /// only while the socket is writable ([`ByteStream::poll_writable`]: Linux `tcp_poll`, 2/3
    /// of the send buffer); so the buffer is topped up ~1.3 MB at a time from 2/3 full, not
    /// filled.
    pub fn with_multisend(mut self, blocks: u32) -> Self {
        self.multisend = Some(blocks.max(1));
        self
    }

    /// Limits the application to `rate_bps` from `start` on (see the module doc).
    pub fn with_rate(mut self, rate_bps: u64, start: SimTime) -> Self {
        self.rate = Some((rate_bps.max(1), start));
        self
    }

    /// Bytes the rate allows to have been written by `now` (unlimited without a rate).
    fn allowance(&self, now: SimTime) -> u64 {
        match self.rate {
            None => u64::MAX,
            Some((bps, start)) => {
                let ns = now.saturating_since(start).as_nanos() as u128;
                let allowed = (ns * bps as u128 / 8 / 1_000_000_000) as u64;
                allowed.saturating_sub(self.written)
            }
        }
    }

    /// With a rate: when the next whole chunk may be written (None when no rate, or done).
    pub fn next_write_at(&self) -> Option<SimTime> {
        let (bps, start) = self.rate?;
        if self.closed || self.limit.is_some_and(|l| self.written >= l) {
            return None;
        }
        let want = self.chunk.min(self.limit.map_or(u64::MAX, |l| l - self.written));
        let bytes = (self.written + want) as u128;
        let ns = (bytes * 8 * 1_000_000_000).div_ceil(bps as u128) as u64;
        let t = start + celltcp_engine::SimDuration::from_nanos(ns);
        match self.stop_at {
            Some(stop) if t >= stop => Some(stop),
            _ => Some(t),
        }
    }

    /// Writes as much as the socket accepts, in whole chunks (the last one may be partial), and
    /// closes once done. Call after every change of the socket.
    pub fn pump<T: ByteStream + ?Sized>(&mut self, now: SimTime, tcp: &mut T) {
        if self.closed || !tcp.is_established() {
            return;
        }
        let deadline_passed = self.stop_at.is_some_and(|t| now >= t);
        if !deadline_passed {
            let mut blocks = 0u32;
            loop {
                if let Some(m) = self.multisend {
                    if blocks > 0 && blocks.is_multiple_of(m) && !tcp.poll_writable() {
                        break;
                    }
                }
                let remaining = self.limit.map_or(u64::MAX, |l| l - self.written);
                // as a blocking writer: after filling the buffer, only once Linux would wake it
                let free = tcp.send_buffer_writable();
                let chunk = self.chunk.min(remaining);
                // a rate-limited application writes only whole chunks that are due
                if remaining == 0 || free == 0 || self.allowance(now) < chunk {
                    break;
                }
                // a blocking write of `chunk` bytes copies what fits and waits for the rest
                let want = chunk.min(free);
                let n = tcp.write(want);
                self.written += n;
                if n < want {
                    break;
                }
                blocks += 1;
            }
        }
        if deadline_passed || self.limit.is_some_and(|l| self.written >= l) {
            tcp.close();
            self.closed = true;
        }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }
}

/// The receiving side: reads everything, closes when the peer has closed.
#[derive(Clone, Debug, Default)]
pub struct Sink {
    received: u64,
    closed: bool,
    /// When the last byte was read.
    pub last_read: Option<SimTime>,
    /// The transfer's size, when known: [`Sink::completed_at`] is when it was all read.
    pub expect: Option<u64>,
    pub completed_at: Option<SimTime>,
}

impl Sink {
    /// A sink that records when `bytes` have been read.
    pub fn expecting(bytes: Option<u64>) -> Self {
        Sink { expect: bytes, ..Sink::default() }
    }

    pub fn pump<T: ByteStream + ?Sized>(&mut self, now: SimTime, tcp: &mut T) {
        let n = tcp.read(now, u64::MAX);
        if n > 0 {
            self.received += n;
            self.last_read = Some(now);
        }
        if self.completed_at.is_none() && self.expect.is_some_and(|e| self.received >= e) {
            self.completed_at = Some(now);
        }
        if !self.closed && tcp.peer_closed() {
            tcp.close();
            self.closed = true;
        }
    }

    pub fn received(&self) -> u64 {
        self.received
    }
}

/// What an app does with one TCP connection: write (a [`BulkSender`]) or read (a [`Sink`]).
#[derive(Clone, Debug)]
pub enum Role {
    Writer(BulkSender),
    Sink(Sink),
}

impl Role {
    #[inline]
    pub fn pump<T: ByteStream + ?Sized>(&mut self, now: SimTime, tcp: &mut T) {
        match self {
            Role::Writer(w) => w.pump(now, tcp),
            Role::Sink(s) => s.pump(now, tcp),
        }
    }

    /// [`Role::pump`] on a TCP or MPTCP connection (one branch, then monomorphic code).
    #[inline]
    pub fn pump_stream(&mut self, now: SimTime, stream: Stream<'_>) {
        match stream {
            Stream::Tcp(t) => self.pump(now, t),
            Stream::Mptcp(m) => self.pump(now, m),
        }
    }

    /// A rate-limited writer's next write (see [`BulkSender::next_write_at`]).
    pub fn next_write_at(&self) -> Option<SimTime> {
        match self {
            Role::Writer(w) => w.next_write_at(),
            Role::Sink(_) => None,
        }
    }

    pub fn is_writer(&self) -> bool {
        matches!(self, Role::Writer(_))
    }
}

/// The client of a bulk or iperf transfer: connects to `remote` at its start and then writes
/// or reads the one connection according to its [`Role`] (`iperf3 -R` reads).
#[derive(Clone, Debug)]
pub struct TcpClient {
    pub remote: SockAddr,
    pub cfg: TcpConfig,
    pub role: Role,
    pub sock: Option<SockId>,
    /// Why `connect` failed, if it did.
    pub error: Option<SocketError>,
}

impl TcpClient {
    pub fn new(remote: SockAddr, cfg: TcpConfig, role: Role) -> Self {
        TcpClient { remote, cfg, role, sock: None, error: None }
    }
}

impl App for TcpClient {
    fn start<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        match net.connect(now, self.remote, &self.cfg) {
            Ok(s) => self.sock = Some(s),
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, _ev: SocketEvent, net: &mut S) {
        self.role.pump_stream(now, net.stream(s));
    }

    fn on_timer<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        if let Some(s) = self.sock {
            self.role.pump_stream(now, net.stream(s));
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.role.next_write_at()
    }
}

/// A server listening on `port`: every accepted connection gets its own copy of the `template`
/// role (a sink for an upload, a writer for `iperf3 -R`), so it serves any number of clients.
#[derive(Clone, Debug)]
pub struct TcpServer {
    pub port: u16,
    pub cfg: TcpConfig,
    pub template: Role,
    pub listener: Option<SockId>,
    /// The accepted connections and their roles, in the order they were accepted.
    pub conns: Vec<(SockId, Role)>,
    pub error: Option<SocketError>,
}

impl TcpServer {
    pub fn new(port: u16, cfg: TcpConfig, template: Role) -> Self {
        TcpServer { port, cfg, template, listener: None, conns: Vec::new(), error: None }
    }

    fn role_of(&mut self, s: SockId) -> Option<&mut Role> {
        // few connections per server in practice; newest first (the busiest is usually the last)
        self.conns.iter_mut().rev().find(|(c, _)| *c == s).map(|(_, r)| r)
    }
}

impl App for TcpServer {
    fn start<S: SocketApi>(&mut self, _now: SimTime, net: &mut S) {
        match net.listen(self.port, &self.cfg) {
            Ok(s) => self.listener = Some(s),
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, ev: SocketEvent, net: &mut S) {
        if let SocketEvent::Accepted { .. } = ev {
            self.conns.push((s, self.template.clone()));
        }
        if let Some(r) = self.role_of(s) {
            r.pump_stream(now, net.stream(s));
        }
    }

    fn on_timer<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        for (s, r) in &mut self.conns {
            if r.next_write_at().is_some_and(|t| t <= now) {
                r.pump_stream(now, net.stream(*s));
            }
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.conns.iter().filter_map(|(_, r)| r.next_write_at()).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limited_writer_is_due_one_chunk_at_a_time() {
        // 1 Mbit/s in 1000-byte writes: one write every 8 ms, counted from the start.
        let start = SimTime::from_millis(100);
        let w = BulkSender::new(None, None, 1000).with_rate(1_000_000, start);
        assert_eq!(w.next_write_at(), Some(SimTime::from_millis(108)));
        assert_eq!(w.allowance(SimTime::from_millis(107)), 875);
        assert_eq!(w.allowance(SimTime::from_millis(116)), 2000);
        let mut w2 = w.clone();
        w2.written = 2000;
        assert_eq!(w2.next_write_at(), Some(SimTime::from_millis(124)));
        // a finite transfer stops asking once written
        let mut w3 = BulkSender::new(Some(1000), None, 1000).with_rate(1_000_000, start);
        w3.written = 1000;
        assert_eq!(w3.next_write_at(), None);
        // no rate: never due by the clock
        assert_eq!(BulkSender::new(None, None, 1000).next_write_at(), None);
    }

    /// A socket with room for `room` bytes that `select()` finds writable while fewer than
    /// `poll_limit` bytes are held.
    struct Sock {
        room: u64,
        held: u64,
        poll_limit: u64,
        polls: u32,
    }

    impl ByteStream for Sock {
        fn is_established(&self) -> bool {
            true
        }
        fn send_buffer_free(&self) -> u64 {
            self.room - self.held
        }
        fn poll_writable(&mut self) -> bool {
            self.polls += 1;
            self.held < self.poll_limit
        }
        fn write(&mut self, bytes: u64) -> u64 {
            let n = bytes.min(self.room - self.held);
            self.held += n;
            n
        }
        fn readable(&self) -> u64 {
            0
        }
        fn read(&mut self, _now: SimTime, _max: u64) -> u64 {
            0
        }
        fn peer_closed(&self) -> bool {
            false
        }
        fn close(&mut self) {}
    }

    #[test]
    fn iperf3_writes_its_multisend_blocks_then_asks_select() {
        // iperf3 3.12 `iperf_send`: 10 blocks, then select(); it goes on while the socket is
        // writable. Here select() says no from 25 blocks on: 30 blocks (3 rounds, 3 polls).
        let now = SimTime::from_millis(1);
        let mut sock = Sock { room: 1 << 30, held: 0, poll_limit: 25_000, polls: 0 };
        let mut w = BulkSender::new(None, None, 1000).with_multisend(10);
        w.pump(now, &mut sock);
        assert_eq!((w.written(), sock.polls), (30_000, 3));
        // a blocking write loop (no multisend) fills the buffer and never polls
        let mut sock = Sock { room: 45_500, held: 0, poll_limit: 25_000, polls: 0 };
        let mut w = BulkSender::new(None, None, 1000);
        w.pump(now, &mut sock);
        assert_eq!((w.written(), sock.polls), (45_500, 0));
    }
}
