//! One direction of a point-to-point link: a queue, a transmitter of fixed rate, a propagation
//! delay and a loss model — ns-3's `PointToPointNetDevice` + `PointToPointChannel` as one sans-IO
//! state machine.
//!
//! The link serialises one packet at a time: a packet of `size` bytes occupies the transmitter for
//! `size·8 / rate_bps` seconds ([`SimDuration::transmission`], rounded up to a nanosecond) and
//! reaches the far end `delay` after its last bit left (`arrive_at = tx_end + delay`). Sizes are
//! IPv4 total lengths; no layer-2 framing is added (ns-3's point-to-point PPP header is left out,
//! as Mahimahi's links also count IP bytes).
//!
//! A packet's whole fate on the link is known when its transmission *starts*: the transmitter is
//! free at `tx_start`, so `tx_end = tx_start + size·8/rate` and `arrive_at = tx_end + delay`, and
//! the loss model is drawn then. The link therefore hands out a [`Delivery`] at the start of the
//! transmission, and the run loop schedules only the arrival at the far end. The caller drives it
//! with two calls:
//! - [`Link::enqueue`]: offers a packet. If the transmitter is free and nothing waits, the packet
//!   starts at once and its delivery is pushed to `out`: an idle link costs no extra event. If
//!   the transmitter is busy, the packet waits in the queue, and when it is the first to wait the
//!   call returns the end of the current transmission, at which the caller must call
//!   [`Link::service`].
//! - [`Link::service`]: the transmitter has become free; the next waiting packet starts (the
//!   discipline dequeues it now, so CoDel/RED see transmission-start times) and its delivery is
//!   pushed, lost packets too, flagged, so they can be captured in a pcap. It returns the end of
//!   that transmission if more packets wait (the next service call), else `None`.
//!
//! So a saturated link costs one service call per packet after the first of a busy period, and
//! a link that is idle whenever a packet arrives costs none. The queue limit counts waiting
//! packets, not the one in transmission (as ns-3's device queue with its transmitter).
//!
//! [`AnyLink`] dispatches between a rate link and a [`TraceLink`] (Mahimahi trace) so callers
//! drive both alike.

use celltcp_engine::{SimDuration, SimRng, SimTime};
use serde::{Deserialize, Serialize};

use crate::loss::LossModel;
use crate::packet::Packet;
use crate::queue::{AnyQueue, QueueStats};
use crate::trace_link::TraceLink;

/// A link direction's physical parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkConfig {
    /// Transmission rate, bits per second (> 0).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: SimDuration,
    /// Largest IPv4 packet the link carries, bytes (RFC 894 Ethernet: 1500).
    pub mtu: u32,
}

impl LinkConfig {
    /// Checks rate and MTU (RFC 791 §3.1 "Total Length": every module must pass 68-byte datagrams).
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err("link: rate_bps must be positive".into());
        }
        if self.mtu < 68 {
            return Err(format!("link: mtu must be at least 68 bytes, got {}", self.mtu));
        }
        Ok(())
    }
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig { rate_bps: 100_000_000, delay: SimDuration::from_millis(1), mtu: 1500 }
    }
}

/// A packet's transmission, produced when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// First bit on the wire.
    pub tx_start: SimTime,
    /// Last bit on the wire.
    pub tx_end: SimTime,
    /// When the far end receives it: `tx_end + delay`.
    pub arrive_at: SimTime,
    /// Lost on the wire: the caller must not deliver it (it may still trace it).
    pub lost: bool,
    pub pkt: Packet,
}

/// Counters of a link direction (the queue keeps its own, see [`QueueStats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets and bytes whose transmission started, lost ones included.
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Packets and bytes the loss model destroyed.
    pub lost_pkts: u64,
    pub lost_bytes: u64,
    /// Transmission time of those packets, nanoseconds (a packet counts whole when it starts).
    pub busy_ns: u64,
    pub queue: QueueStats,
}

impl LinkStats {
    /// Fraction of `elapsed` the transmitter was busy.
    pub fn utilisation(&self, elapsed: SimDuration) -> f64 {
        if elapsed.as_nanos() == 0 {
            0.0
        } else {
            self.busy_ns as f64 / elapsed.as_nanos() as f64
        }
    }
}

/// One direction of a point-to-point link.
#[derive(Clone, Debug)]
pub struct Link {
    cfg: LinkConfig,
    queue: AnyQueue,
    loss: LossModel,
    rng: SimRng,
    /// Start and end of the last transmission started; the transmitter is free from `busy_until`.
    last_start: SimTime,
    busy_until: SimTime,
    /// Packets wait in the queue and a [`Link::service`] call is due at `busy_until`.
    pending: bool,
    /// `8e9 / rate_bps` when that is a whole number (10 Mbit/s: 800 ns a byte), else 0: the
    /// transmission time is then a multiplication, exactly [`SimDuration::transmission`].
    ns_per_byte: u64,
    stats: LinkStats,
}

impl Link {
    /// A link with its queue, loss model and own random stream (for RED and the loss model).
    pub fn new(cfg: LinkConfig, mut queue: AnyQueue, loss: LossModel, rng: SimRng) -> Self {
        assert!(cfg.rate_bps > 0, "link rate must be positive");
        queue.set_link_rate(cfg.rate_bps);
        Link {
            cfg,
            queue,
            loss,
            rng,
            last_start: SimTime::ZERO,
            busy_until: SimTime::ZERO,
            pending: false,
            ns_per_byte: if 8_000_000_000 % cfg.rate_bps == 0 { 8_000_000_000 / cfg.rate_bps } else { 0 },
            stats: LinkStats::default(),
        }
    }

    /// [`SimDuration::transmission`] of `bytes` at this link's rate.
    #[inline]
    fn tx_time(&self, bytes: u64) -> SimDuration {
        if self.ns_per_byte != 0 {
            SimDuration(bytes * self.ns_per_byte)
        } else {
            SimDuration::transmission(bytes, self.cfg.rate_bps)
        }
    }

    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Offers a packet. If the transmitter is free and nothing waits, the packet starts at once
    /// and its [`Delivery`] is pushed to `out`. Otherwise it waits in the queue, and `Some(t)` is
    /// returned when the link newly needs a [`Link::service`] call at `t` (the end of the current
    /// transmission). A packet the queue drops is counted in its stats.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Delivery>) -> Option<SimTime> {
        self.try_enqueue(now, pkt, out).unwrap_or(None)
    }

    /// As [`Link::enqueue`], but hands back a packet the queue dropped.
    pub fn try_enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Delivery>) -> Result<Option<SimTime>, Packet> {
        debug_assert!(pkt.size() <= self.cfg.mtu, "packet of {} B over a {} B MTU link", pkt.size(), self.cfg.mtu);
        // The packet passes through the queue even when the link is idle, so that every
        // discipline sees every arrival (RED's average, CoDel's zero sojourns).
        self.queue.enqueue(now, pkt, &mut self.rng)?;
        if self.pending {
            // Others wait ahead of it; the pending service call will reach it.
            return Ok(None);
        }
        // Nothing was waiting, so this packet is alone in the queue.
        if now >= self.busy_until {
            // A queue of one never drops at dequeue (CoDel keeps at least one MTU, RFC 8289 §5.7).
            self.start_next(now, out, &mut Vec::new());
            Ok(None)
        } else {
            self.pending = true;
            Ok(Some(self.busy_until))
        }
    }

    /// Dequeues the next packet (the queue may drop some first, into `drops`), starts sending it
    /// at `now` and pushes its delivery. Returns false if the queue had nothing to send.
    #[inline]
    fn start_next(&mut self, now: SimTime, out: &mut Vec<Delivery>, drops: &mut Vec<Packet>) -> bool {
        let Some(d) = self.queue.dequeue_into(now, drops) else { return false };
        let size = d.pkt.size() as u64;
        let tx_time = self.tx_time(size);
        let tx_end = now + tx_time;
        let lost = self.loss.lose(&mut self.rng);
        let s = &mut self.stats;
        s.tx_pkts += 1;
        s.tx_bytes += size;
        s.busy_ns += tx_time.as_nanos();
        if lost {
            s.lost_pkts += 1;
            s.lost_bytes += size;
        }
        self.last_start = now;
        self.busy_until = tx_end;
        out.push(Delivery { tx_start: now, tx_end, arrive_at: tx_end + self.cfg.delay, lost, pkt: d.pkt });
        true
    }

    /// The transmitter has become free (`now` is the time the previous [`Link::enqueue`] or
    /// `service` returned). Starts the next waiting packet, pushes its delivery to `out`, and
    /// returns when it ends if more packets wait (the next service call), or `None`.
    #[inline]
    pub fn service(&mut self, now: SimTime, out: &mut Vec<Delivery>) -> Option<SimTime> {
        // Allocates only if CoDel drops a packet.
        self.service_with_drops(now, out, &mut Vec::new())
    }

    /// As [`Link::service`], also pushing to `drops` the packets the queue dropped at dequeue
    /// (CoDel), so callers can account them per flow.
    pub fn service_with_drops(
        &mut self,
        now: SimTime,
        out: &mut Vec<Delivery>,
        drops: &mut Vec<Packet>,
    ) -> Option<SimTime> {
        debug_assert!(self.pending, "Link::service called with nothing waiting");
        debug_assert_eq!(now, self.busy_until, "Link::service called at the wrong time");
        self.pending = false;
        if self.start_next(now, out, drops) && !self.queue.is_empty() {
            self.pending = true;
            Some(self.busy_until)
        } else {
            None
        }
    }

    /// Whether packets wait for a pending service call.
    pub fn busy(&self) -> bool {
        self.pending
    }
    /// When the pending service call is due, if any.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.pending.then_some(self.busy_until)
    }
    /// When the transmitter is free (the end of the last transmission started).
    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }
    pub fn queue_len_pkts(&self) -> usize {
        self.queue.len_pkts()
    }
    pub fn queue_len_bytes(&self) -> u64 {
        self.queue.len_bytes()
    }
    pub fn queue(&self) -> &AnyQueue {
        &self.queue
    }
    /// Link counters. A packet is counted (whole transmission time in `busy_ns`) when it starts.
    pub fn stats(&self) -> LinkStats {
        LinkStats { queue: self.queue.stats(), ..self.stats }
    }
    /// Busy fraction of `[0, now]`: the part of the current packet not yet sent is left out.
    pub fn utilisation(&self, now: SimTime) -> f64 {
        let unsent = self.busy_until.saturating_since(now.max(self.last_start)).as_nanos();
        if now.as_nanos() == 0 {
            0.0
        } else {
            (self.stats.busy_ns - unsent) as f64 / now.as_nanos() as f64
        }
    }
}

/// A rate link or a trace link, driven through the same calls: `enqueue` and `service` push
/// deliveries to `out` and return the time of the next service call when one is newly needed, so
/// exactly one service call is pending while packets wait. (A rate link delivers at transmission
/// start, a trace link at the opportunity that completes the packet; callers treat both alike.)
#[derive(Clone, Debug)]
pub enum AnyLink {
    Rate(Link),
    Trace(TraceLink),
}

impl AnyLink {
    /// Offers a packet: deliveries that start at once are pushed to `out` (rate links only; a
    /// trace link delivers at its opportunities), and `Some(t)` asks for a service call at `t`.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Delivery>) -> Option<SimTime> {
        match self {
            AnyLink::Rate(l) => l.enqueue(now, pkt, out),
            AnyLink::Trace(l) => l.enqueue(now, pkt, out),
        }
    }
    /// As [`AnyLink::enqueue`], but hands back a packet the queue dropped.
    #[inline]
    pub fn try_enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Delivery>) -> Result<Option<SimTime>, Packet> {
        match self {
            AnyLink::Rate(l) => l.try_enqueue(now, pkt, out),
            AnyLink::Trace(l) => l.try_enqueue(now, pkt, out),
        }
    }
    #[inline]
    pub fn service(&mut self, now: SimTime, out: &mut Vec<Delivery>) -> Option<SimTime> {
        match self {
            AnyLink::Rate(l) => l.service(now, out),
            AnyLink::Trace(l) => l.service(now, out),
        }
    }
    #[inline]
    pub fn service_with_drops(
        &mut self,
        now: SimTime,
        out: &mut Vec<Delivery>,
        drops: &mut Vec<Packet>,
    ) -> Option<SimTime> {
        match self {
            AnyLink::Rate(l) => l.service_with_drops(now, out, drops),
            AnyLink::Trace(l) => l.service_with_drops(now, out, drops),
        }
    }
    /// Whether a service call is pending.
    pub fn busy(&self) -> bool {
        match self {
            AnyLink::Rate(l) => l.busy(),
            AnyLink::Trace(l) => l.busy(),
        }
    }
    /// When the pending service call is due.
    pub fn next_deadline(&self) -> Option<SimTime> {
        match self {
            AnyLink::Rate(l) => l.next_deadline(),
            AnyLink::Trace(l) => l.next_deadline(),
        }
    }
    pub fn queue(&self) -> &AnyQueue {
        match self {
            AnyLink::Rate(l) => l.queue(),
            AnyLink::Trace(l) => l.queue(),
        }
    }
    pub fn mtu(&self) -> u32 {
        match self {
            AnyLink::Rate(l) => l.cfg.mtu,
            AnyLink::Trace(l) => l.config().mtu,
        }
    }
    pub fn delay(&self) -> SimDuration {
        match self {
            AnyLink::Rate(l) => l.cfg.delay,
            AnyLink::Trace(l) => l.config().delay,
        }
    }
    pub fn queue_len_pkts(&self) -> usize {
        match self {
            AnyLink::Rate(l) => l.queue_len_pkts(),
            AnyLink::Trace(l) => l.queue_len_pkts(),
        }
    }
    pub fn queue_len_bytes(&self) -> u64 {
        match self {
            AnyLink::Rate(l) => l.queue_len_bytes(),
            AnyLink::Trace(l) => l.queue_len_bytes(),
        }
    }
    pub fn stats(&self) -> LinkStats {
        match self {
            AnyLink::Rate(l) => l.stats(),
            AnyLink::Trace(l) => l.stats(),
        }
    }
    pub fn utilisation(&self, now: SimTime) -> f64 {
        match self {
            AnyLink::Rate(l) => l.utilisation(now),
            AnyLink::Trace(l) => l.utilisation(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossConfig;
    use crate::packet::{Body, Ipv4, UdpDatagram};
    use crate::queue::{QueueConfig, QueueLimit};
    use celltcp_engine::component_rng;

    fn udp(uid: u64, size: u32) -> Packet {
        let b = Body::Udp(UdpDatagram { payload_len: size - 28, ..Default::default() });
        Packet::new(uid, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0, SimTime::ZERO, b)
    }

    fn link(rate_bps: u64, delay_ms: u64, limit: u32, loss: LossConfig) -> Link {
        let cfg = LinkConfig { rate_bps, delay: SimDuration::from_millis(delay_ms), mtu: 1500 };
        let q = AnyQueue::new(&QueueConfig::DropTail { limit: QueueLimit::Packets(limit) });
        Link::new(cfg, q, LossModel::new(loss), component_rng(1, 42))
    }

    /// Runs the link to idle, calling service at each returned time; returns the last call's time.
    fn drain(l: &mut Link, mut next: Option<SimTime>, out: &mut Vec<Delivery>) -> SimTime {
        let mut last = SimTime::ZERO;
        while let Some(t) = next {
            last = t;
            next = l.service(t, out);
        }
        last
    }

    /// Offers `n` packets of `size` bytes at `now`; returns the service time asked for, if any.
    fn offer(l: &mut Link, now: SimTime, n: u64, size: u32, out: &mut Vec<Delivery>) -> Option<SimTime> {
        let mut next = None;
        for i in 0..n {
            let t = l.enqueue(now, udp(i, size), out);
            assert!(t.is_none() || next.is_none(), "a second service call was asked for");
            next = next.or(t);
        }
        next
    }

    #[test]
    fn link_back_to_back_packets_spaced_by_transmission_time() {
        // A busy transmitter sends packet k+1 the instant packet k's last bit leaves: at 10 Mbit/s a
        // 1500 B packet takes exactly 1.2 ms. The first packet starts at once (its delivery comes
        // out of enqueue); the others wait, and one service call is asked for, at the first's end.
        let mut l = link(10_000_000, 5, 100, LossConfig::None);
        let mut out = Vec::new();
        assert_eq!(l.enqueue(SimTime::ZERO, udp(0, 1500), &mut out), None);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tx_end, SimTime::from_micros(1200));
        assert!(!l.busy());
        let first = l.enqueue(SimTime::ZERO, udp(1, 1500), &mut out);
        assert_eq!(first, Some(SimTime::from_micros(1200)));
        for i in 2..5 {
            assert_eq!(l.enqueue(SimTime::ZERO, udp(i, 1500), &mut out), None);
        }
        assert_eq!(out.len(), 1);
        assert_eq!(l.queue_len_pkts(), 4);
        assert_eq!(l.queue_len_bytes(), 6000);
        assert_eq!(l.next_deadline(), first);
        // Each service call starts one packet and asks for the next call at its end.
        let last = drain(&mut l, first, &mut out);
        assert_eq!(last, SimTime::from_micros(4 * 1200));
        assert_eq!(out.len(), 5);
        for (k, d) in out.iter().enumerate() {
            assert_eq!(d.pkt.uid, k as u64);
            assert_eq!(d.tx_start, SimTime::from_micros(1200 * k as u64));
            assert_eq!(d.tx_end, SimTime::from_micros(1200 * (k as u64 + 1)));
        }
        assert!(!l.busy());
        assert_eq!(l.busy_until(), SimTime::from_micros(6000));
    }

    #[test]
    fn link_transmission_time_is_exact_at_any_rate() {
        // Rates dividing 8e9 multiply by ns per byte; others divide and round up: the same figures.
        for rate in [1_000_000u64, 10_000_000, 100_000_000, 1_000_000_000, 7_000_000, 12_345_678, 3] {
            let l = link(rate, 0, 10, LossConfig::None);
            for bytes in [1u64, 40, 52, 1500, 65_535] {
                assert_eq!(l.tx_time(bytes), SimDuration::transmission(bytes, rate), "{bytes} B at {rate}");
            }
        }
    }

    #[test]
    fn link_arrival_is_tx_end_plus_delay() {
        // Propagation: the far end gets the packet `delay` after the last bit was sent; a 100 B
        // packet at 1 Mbit/s takes 800 us.
        let mut l = link(1_000_000, 20, 10, LossConfig::None);
        let t0 = SimTime::from_millis(3);
        let mut out = Vec::new();
        assert_eq!(l.enqueue(t0, udp(7, 100), &mut out), None);
        let end = t0 + SimDuration::from_micros(800);
        assert_eq!((out[0].tx_start, out[0].tx_end), (t0, end));
        assert_eq!(out[0].arrive_at, end + SimDuration::from_millis(20));
        assert!(!out[0].lost);
    }

    #[test]
    fn link_utilisation_counts_busy_time() {
        // utilisation = busy time / elapsed: 10 packets of 1200 us each in a 24 ms window is 50%;
        // a packet half sent counts half.
        let mut l = link(10_000_000, 1, 100, LossConfig::None);
        let mut out = Vec::new();
        let first = offer(&mut l, SimTime::ZERO, 10, 1500, &mut out);
        let last = drain(&mut l, first, &mut out);
        assert_eq!(last, SimTime::from_micros(10_800));
        assert_eq!(l.busy_until(), SimTime::from_millis(12));
        assert_eq!(l.stats().busy_ns, 12_000_000);
        assert_eq!(l.stats().tx_bytes, 15_000);
        assert!((l.utilisation(SimTime::from_millis(24)) - 0.5).abs() < 1e-12);
        assert!((l.stats().utilisation(SimDuration::from_millis(24)) - 0.5).abs() < 1e-12);
        // The last packet is half sent at 11.4 ms: 11.4 ms of 11.4 ms busy.
        assert!((l.utilisation(SimTime::from_micros(11_400)) - 1.0).abs() < 1e-12);
        l.enqueue(SimTime::from_millis(24), udp(99, 1500), &mut out);
        assert!((l.utilisation(SimTime::from_micros(24_600)) - 12.6 / 24.6).abs() < 1e-12);
    }

    #[test]
    fn link_queue_overflow_is_dropped_not_sent() {
        // Drop-tail behind the transmitter: with 1 in transmission and 2 waiting, the 4th is
        // dropped; the limit counts waiting packets only.
        let mut l = link(1_000_000, 1, 2, LossConfig::None);
        let mut out = Vec::new();
        assert_eq!(l.enqueue(SimTime::ZERO, udp(0, 1000), &mut out), None);
        let first = l.enqueue(SimTime::ZERO, udp(1, 1000), &mut out);
        l.enqueue(SimTime::ZERO, udp(2, 1000), &mut out);
        assert_eq!(l.try_enqueue(SimTime::ZERO, udp(3, 1000), &mut out).unwrap_err().uid, 3);
        drain(&mut l, first, &mut out);
        assert_eq!(out.iter().map(|d| d.pkt.uid).collect::<Vec<_>>(), vec![0, 1, 2]);
        let s = l.stats();
        assert_eq!((s.tx_pkts, s.queue.dropped_pkts), (3, 1));
        // Once the first has left and the second is sending, one place is free again.
        let mut l = link(1_000_000, 1, 2, LossConfig::None);
        let mut out = Vec::new();
        let first = offer(&mut l, SimTime::ZERO, 3, 1000, &mut out).unwrap();
        let next = l.service(first, &mut out);
        assert!(l.try_enqueue(first, udp(3, 1000), &mut out).is_ok());
        assert!(l.try_enqueue(first, udp(4, 1000), &mut out).is_err());
        drain(&mut l, next, &mut out);
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn link_lost_packets_are_reported_and_counted() {
        // The loss model acts on the wire: lost packets still occupy the transmitter and are pushed
        // with lost = true (for pcap), and the loss rate matches the model.
        let mut l = link(1_000_000_000, 1, 100_000, LossConfig::Bernoulli { p: 0.1 });
        let mut out = Vec::new();
        let first = offer(&mut l, SimTime::ZERO, 20_000, 100, &mut out);
        drain(&mut l, first, &mut out);
        let lost = out.iter().filter(|d| d.lost).count() as u64;
        assert_eq!(out.len(), 20_000);
        assert_eq!(l.stats().lost_pkts, lost);
        assert!((lost as f64 / 20_000.0 - 0.1).abs() < 0.01, "{lost}");
    }

    #[test]
    fn link_reports_codel_dequeue_drops() {
        // RFC 8289 drops at dequeue; service_with_drops hands those packets to the caller, and
        // every packet is either delivered or dropped exactly once.
        let cfg = LinkConfig { rate_bps: 12_000_000, delay: SimDuration::ZERO, mtu: 1500 };
        let q = AnyQueue::new(&QueueConfig::CoDel(crate::queue::CoDelConfig::default()));
        let mut l = Link::new(cfg, q, LossModel::none(), component_rng(1, 5));
        let mut out = Vec::new();
        let mut drops = Vec::new();
        let mut next = offer(&mut l, SimTime::ZERO, 600, 1500, &mut out);
        while let Some(t) = next {
            next = l.service_with_drops(t, &mut out, &mut drops);
        }
        assert!(!drops.is_empty());
        assert_eq!(drops.len() as u64, l.stats().queue.dropped_pkts);
        assert!(!l.busy());
        assert!(l.queue().is_empty());
        let mut uids: Vec<u64> = out.iter().map(|d| d.pkt.uid).chain(drops.iter().map(|p| p.uid)).collect();
        uids.sort_unstable();
        assert_eq!(uids, (0..600).collect::<Vec<_>>());
        // Back to back: each delivered packet starts when the previous one ends.
        for w in out.windows(2) {
            assert_eq!(w[1].tx_start, w[0].tx_end);
        }
    }

    #[test]
    fn any_link_drives_rate_and_trace_links_alike() {
        // The same enqueue/service loop runs both kinds: 12 Mbit/s as a rate and as the trace "1"
        // deliver 1500 B packets 1 ms apart (the trace at whole milliseconds, from 1 ms).
        let rate = Link::new(
            LinkConfig { rate_bps: 12_000_000, delay: SimDuration::from_millis(5), mtu: 1500 },
            AnyQueue::new(&QueueConfig::default()),
            LossModel::none(),
            component_rng(1, 1),
        );
        let trace = TraceLink::new(
            crate::trace_link::TraceLinkConfig {
                opportunities_ms: vec![1],
                delay: SimDuration::from_millis(5),
                mtu: 1500,
            },
            AnyQueue::new(&QueueConfig::default()),
            LossModel::none(),
            component_rng(1, 2),
        );
        for mut l in [AnyLink::Rate(rate), AnyLink::Trace(trace)] {
            let (mut next, mut out) = (None, Vec::new());
            for i in 0..10 {
                next = next.or(l.enqueue(SimTime::ZERO, udp(i, 1500), &mut out));
            }
            assert_eq!(l.next_deadline(), next);
            while let Some(t) = next {
                next = l.service(t, &mut out);
            }
            let ends: Vec<SimTime> = out.iter().map(|d| d.tx_end).collect();
            assert_eq!(ends, (1..=10).map(SimTime::from_millis).collect::<Vec<_>>());
            assert_eq!(out[9].arrive_at, SimTime::from_millis(15));
            assert!(!l.busy());
            assert_eq!(l.stats().tx_bytes, 15_000);
            assert!((l.utilisation(SimTime::from_millis(20)) - 0.5).abs() < 1e-12);
        }
    }

    #[test]
    fn link_restarts_after_idle() {
        // After going idle, the next enqueue starts sending immediately at its own time, with no
        // service call; a packet arriving while it is sent waits for its end.
        let mut l = link(8_000_000, 0, 10, LossConfig::None);
        let mut out = Vec::new();
        assert_eq!(l.enqueue(SimTime::ZERO, udp(0, 1000), &mut out), None);
        assert_eq!(out[0].tx_end, SimTime::from_millis(1));
        assert_eq!(l.enqueue(SimTime::from_millis(10), udp(1, 1000), &mut out), None);
        assert_eq!((out[1].tx_start, out[1].tx_end), (SimTime::from_millis(10), SimTime::from_millis(11)));
        assert_eq!(l.next_deadline(), None);
        let t = l.enqueue(SimTime::from_micros(10_500), udp(2, 1000), &mut out);
        assert_eq!(t, Some(SimTime::from_millis(11)));
        assert_eq!(l.next_deadline(), t);
        assert_eq!(l.service(t.unwrap(), &mut out), None);
        assert_eq!((out[2].tx_start, out[2].tx_end), (SimTime::from_millis(11), SimTime::from_millis(12)));
        // Arriving exactly when the transmitter frees up: it starts at once.
        assert_eq!(l.enqueue(SimTime::from_millis(12), udp(3, 1000), &mut out), None);
        assert_eq!(out[3].tx_start, SimTime::from_millis(12));
    }
}
