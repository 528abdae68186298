//! ICMP echo (RFC 792) at a fixed interval, like `ping -i`: the sender records one RTT per reply;
//! the destination host's IP layer answers each request.

use celltcp_engine::{SimDuration, SimTime};

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
