//! ICMP echo (RFC 792) at a fixed interval, like `ping -i`: the sender records one RTT per reply;
//! the destination host's IP layer answers each request.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::Ipv4;

use crate::app::{App, SockId, SocketApi, SocketError, SocketEvent};

#[derive(Clone, Debug)]
pub struct Pinger {
    pub interval: SimDuration,
    pub count: Option<u32>,
    pub payload: u32,
    pub sent: u32,
    /// `(seq, send time, rtt)` of each reply.
    pub replies: Vec<(u16, SimTime, SimDuration)>,
}

impl Pinger {
    pub fn new(interval: SimDuration, count: Option<u32>, payload: u32) -> Self {
        Pinger { interval, count, payload, sent: 0, replies: Vec::new() }
    }

    /// The sequence number of the next request, or None when `count` is reached.
    pub fn next_request(&mut self) -> Option<u16> {
        if self.count.is_some_and(|c| self.sent >= c) {
            return None;
        }
        let s = self.sent as u16;
        self.sent += 1;
        Some(s)
    }

    pub fn on_reply(&mut self, now: SimTime, seq: u16, sent_at: SimTime) {
        self.replies.push((seq, sent_at, now - sent_at));
    }
}

/// The pinger as an app: an echo socket towards `dst`, one request every `interval`.
#[derive(Clone, Debug)]
pub struct PingApp {
    pub dst: Ipv4,
    pub pinger: Pinger,
    pub sock: Option<SockId>,
    next_at: Option<SimTime>,
    pub error: Option<SocketError>,
}

impl PingApp {
    pub fn new(dst: Ipv4, pinger: Pinger) -> Self {
        PingApp { dst, pinger, sock: None, next_at: None, error: None }
    }

    fn send<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.next_at = None;
        let Some(s) = self.sock else { return };
        let Some(seq) = self.pinger.next_request() else { return };
        net.echo_send(now, s, seq, self.pinger.payload);
        // like `ping -c N`, wait one more interval after the last request
        self.next_at = Some(now + self.pinger.interval);
    }
}

impl App for PingApp {
    fn start<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        match net.echo_open(self.dst) {
            Ok(s) => self.sock = Some(s),
            Err(e) => self.error = Some(e),
        }
        self.send(now, net);
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, _s: SockId, ev: SocketEvent, _net: &mut S) {
        if let SocketEvent::EchoReply(e) = ev {
            self.pinger.on_reply(now, e.seq, e.sent_at);
        }
    }

    fn on_timer<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.send(now, net);
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.next_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_limits_requests() {
        let mut p = Pinger::new(SimDuration::from_secs(1), Some(3), 56);
        assert_eq!((p.next_request(), p.next_request(), p.next_request(), p.next_request()), (Some(0), Some(1), Some(2), None));
        p.on_reply(SimTime::from_millis(50), 0, SimTime::ZERO);
        assert_eq!(p.replies[0].2, SimDuration::from_millis(50));
    }
}
