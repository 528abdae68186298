//! Constant-bit-rate UDP, as `iperf3 -u -b RATE -l SIZE`: the sender emits a datagram of `size`
//! payload bytes every `size·8/rate` seconds, each carrying a sequence number and its send time
//! (iperf3 writes both into the payload). The receiver counts datagrams, losses (sequence gaps),
//! out-of-order arrivals, and the interarrival jitter of RFC 3550 §6.4.1:
//! `J += (|D(i−1, i)| − J) / 16`, with `D` the difference of successive transit times.

use celltcp_engine::{SimDuration, SimTime};

use crate::app::{App, SockAddr, SockId, SocketApi, SocketError, SocketEvent};

#[derive(Clone, Debug)]
pub struct CbrSender {
    pub size: u32,
    pub gap: SimDuration,
    pub stop_at: SimTime,
    pub next_seq: u64,
    pub sent_bytes: u64,
}

impl CbrSender {
    pub fn new(size: u32, rate_bps: u64, stop_at: SimTime) -> Self {
        let gap = SimDuration::transmission(size as u64, rate_bps);
        CbrSender { size, gap, stop_at, next_seq: 0, sent_bytes: 0 }
    }

    /// The next datagram's sequence number, or None once past `stop_at`.
    pub fn next(&mut self, now: SimTime) -> Option<u64> {
        if now >= self.stop_at {
            return None;
        }
        let s = self.next_seq;
        self.next_seq += 1;
        self.sent_bytes += self.size as u64;
        Some(s)
    }
}

#[derive(Clone, Debug, Default)]
pub struct UdpReceiver {
    pub received: u64,
    pub received_bytes: u64,
    pub out_of_order: u64,
    pub duplicates: u64,
    max_seq: Option<u64>,
    seen: std::collections::BTreeSet<u64>,
    prev_transit: Option<i128>,
    /// RFC 3550 jitter estimate in nanoseconds.
    jitter_ns: f64,
    pub delays_ms: Vec<f64>,
}

impl UdpReceiver {
    pub fn on_datagram(&mut self, now: SimTime, seq: u64, sent_at: SimTime, payload: u32) {
        if !self.seen.insert(seq) {
            self.duplicates += 1;
            return;
        }
        // keep the set small: forget sequence numbers far behind the maximum
        if self.seen.len() > 4096 {
            let cut = *self.seen.iter().next().unwrap();
            self.seen.remove(&cut);
        }
        self.received += 1;
        self.received_bytes += payload as u64;
        match self.max_seq {
            Some(m) if seq < m => self.out_of_order += 1,
            _ => self.max_seq = Some(seq),
        }
        let transit = now.as_nanos() as i128 - sent_at.as_nanos() as i128;
        self.delays_ms.push(transit as f64 * 1e-6);
        if let Some(prev) = self.prev_transit {
            let d = (transit - prev).abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.prev_transit = Some(transit);
    }

    pub fn jitter_ms(&self) -> f64 {
        self.jitter_ns * 1e-6
    }

    /// Lost datagrams out of `sent`.
    pub fn lost(&self, sent: u64) -> u64 {
        sent.saturating_sub(self.received)
    }

    /// Datagrams expected so far: the highest sequence number received plus one (iperf3's
    /// receiver counts its losses as the gaps below it).
    pub fn expected(&self) -> u64 {
        self.max_seq.map_or(0, |s| s + 1)
    }
}

/// The CBR sender as an app: a UDP socket towards `remote`, one datagram every `gap`.
#[derive(Clone, Debug)]
pub struct CbrApp {
    pub remote: SockAddr,
    pub sender: CbrSender,
    pub sock: Option<SockId>,
    next_at: Option<SimTime>,
    pub error: Option<SocketError>,
}

impl CbrApp {
    pub fn new(remote: SockAddr, sender: CbrSender) -> Self {
        CbrApp { remote, sender, sock: None, next_at: None, error: None }
    }

    fn send<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.next_at = None;
        let Some(s) = self.sock else { return };
        let Some(seq) = self.sender.next(now) else { return };
        net.udp_send(now, s, self.sender.size, seq);
        self.next_at = Some(now + self.sender.gap);
    }
}

impl App for CbrApp {
    fn start<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        match net.udp_bind(None, Some(self.remote)) {
            Ok(s) => self.sock = Some(s),
            Err(e) => self.error = Some(e),
        }
        self.send(now, net);
    }

    fn on_socket<S: SocketApi>(&mut self, _now: SimTime, _s: SockId, _ev: SocketEvent, _net: &mut S) {}

    fn on_timer<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.send(now, net);
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.next_at
    }
}

/// The receiving end: a UDP socket bound to `port`, feeding a [`UdpReceiver`].
#[derive(Clone, Debug)]
pub struct UdpSinkApp {
    pub port: u16,
    pub recv: UdpReceiver,
    pub sock: Option<SockId>,
    pub error: Option<SocketError>,
}

impl UdpSinkApp {
    pub fn new(port: u16) -> Self {
        UdpSinkApp { port, recv: UdpReceiver::default(), sock: None, error: None }
    }
}

impl App for UdpSinkApp {
    fn start<S: SocketApi>(&mut self, _now: SimTime, net: &mut S) {
        match net.udp_bind(Some(self.port), None) {
            Ok(s) => self.sock = Some(s),
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, _s: SockId, ev: SocketEvent, _net: &mut S) {
        if let SocketEvent::Datagram { datagram: d, .. } = ev {
            self.recv.on_datagram(now, d.seq, d.sent_at, d.payload_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_spacing_matches_rate() {
        // 1250 B at 1 Mbit/s = 10 ms between datagrams
        let s = CbrSender::new(1250, 1_000_000, SimTime::from_secs(1));
        assert_eq!(s.gap, SimDuration::from_millis(10));
    }

    #[test]
    fn jitter_follows_rfc3550_estimator() {
        // transit alternates 10 ms and 12 ms: |D| = 2 ms each time, J converges to 2 ms
        let mut r = UdpReceiver::default();
        for i in 0..400u64 {
            let sent = SimTime::from_millis(i * 10);
            let transit = if i % 2 == 0 { 10 } else { 12 };
            r.on_datagram(sent + SimDuration::from_millis(transit), i, sent, 100);
        }
        assert!((r.jitter_ms() - 2.0).abs() < 1e-6, "{}", r.jitter_ms());
        // first step of the estimator: J1 = |D|/16
        let mut r = UdpReceiver::default();
        r.on_datagram(SimTime::from_millis(10), 0, SimTime::ZERO, 1);
        r.on_datagram(SimTime::from_millis(26), 1, SimTime::from_millis(10), 1);
        assert!((r.jitter_ms() - 6.0 / 16.0).abs() < 1e-9);
    }

    #[test]
    fn receiver_counts_loss_reordering_and_duplicates() {
        let mut r = UdpReceiver::default();
        for s in [0u64, 1, 3, 2, 3, 5] {
            r.on_datagram(SimTime::from_millis(s), s, SimTime::ZERO, 10);
        }
        assert_eq!(r.received, 5);
        assert_eq!(r.duplicates, 1);
        assert_eq!(r.out_of_order, 1);
        assert_eq!(r.lost(6), 1); // seq 4
    }
}
