//! Bulk transfer over TCP: the sending application writes whenever the socket's send buffer has
//! room (as a blocking `write()` loop does), in units of `chunk` bytes (`iperf3 -l`), until it has
//! written `limit` bytes or reached `stop_at`; then it closes. The sink reads everything as soon as
//! it arrives, so a fixed receive buffer is never held full by the application.

use celltcp_engine::SimTime;
use celltcp_tcp::TcpEndpoint;

/// The sending side of a bulk or iperf transfer.
#[derive(Clone, Debug)]
pub struct BulkSender {
    limit: Option<u64>,
    stop_at: Option<SimTime>,
    chunk: u64,
    written: u64,
    closed: bool,
}

impl BulkSender {
    /// `limit`: total bytes (None = unlimited); `stop_at`: stop writing at this time; `chunk`:
    /// write unit in bytes (at least 1).
    pub fn new(limit: Option<u64>, stop_at: Option<SimTime>, chunk: u64) -> Self {
        BulkSender { limit, stop_at, chunk: chunk.max(1), written: 0, closed: false }
    }

    /// Writes as much as the socket accepts, in whole chunks (the last one may be partial), and
    /// closes once done. Call after every change of the socket.
    pub fn pump(&mut self, now: SimTime, tcp: &mut TcpEndpoint) {
        if self.closed || !tcp.is_established() {
            return;
        }
        let deadline_passed = self.stop_at.is_some_and(|t| now >= t);
        if !deadline_passed {
            loop {
                let remaining = self.limit.map_or(u64::MAX, |l| l - self.written);
                let free = tcp.send_buffer_free();
                if remaining == 0 || free == 0 {
                    break;
                }
                // a blocking write of `chunk` bytes copies what fits and waits for the rest
                let want = self.chunk.min(remaining).min(free);
                let n = tcp.write(want);
                self.written += n;
                if n < want {
                    break;
                }
            }
        }
        if deadline_passed || self.limit.is_some_and(|l| self.written >= l) {
            tcp.close();
            self.closed = true;
        }
    }

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
}

impl Sink {
    pub fn pump(&mut self, now: SimTime, tcp: &mut TcpEndpoint) {
        let n = tcp.read(now, u64::MAX);
        if n > 0 {
            self.received += n;
            self.last_read = Some(now);
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
