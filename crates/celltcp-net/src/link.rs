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
//! The caller (the run loop) drives it with two calls:
//! - [`Link::enqueue`]: offers a packet; if the link was idle it starts sending at once and
//!   returns the end of serialisation, at which the caller must call [`Link::service`].
//! - [`Link::service`]: the packet in transmission has finished; it is pushed as a [`Delivery`]
//!   (lost packets too, flagged, so they can be captured in a pcap), the next queued packet
//!   starts, and its end of serialisation is returned (or `None` when the link goes idle).
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

/// A packet that finished crossing the transmitter.
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
    /// Packets and bytes that finished serialisation, lost ones included.
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Packets and bytes the loss model destroyed.
    pub lost_pkts: u64,
    pub lost_bytes: u64,
    /// Time the transmitter spent sending completed packets, nanoseconds.
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

/// The packet on the wire.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    pkt: Packet,
    tx_start: SimTime,
    tx_end: SimTime,
}

/// One direction of a point-to-point link.
#[derive(Clone, Debug)]
pub struct Link {
    cfg: LinkConfig,
    queue: AnyQueue,
    loss: LossModel,
    rng: SimRng,
    tx: Option<InFlight>,
    stats: LinkStats,
}

impl Link {
    /// A link with its queue, loss model and own random stream (for RED and the loss model).
    pub fn new(cfg: LinkConfig, mut queue: AnyQueue, loss: LossModel, rng: SimRng) -> Self {
        assert!(cfg.rate_bps > 0, "link rate must be positive");
        queue.set_link_rate(cfg.rate_bps);
        Link { cfg, queue, loss, rng, tx: None, stats: LinkStats::default() }
    }

    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Offers a packet. Returns `Some(t)` when the link was idle and has started sending it: the
    /// caller must call [`Link::service`] at `t`. A packet the queue drops is counted in its stats.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Option<SimTime> {
        self.try_enqueue(now, pkt).unwrap_or(None)
    }

    /// As [`Link::enqueue`], but hands back a packet the queue dropped.
    pub fn try_enqueue(&mut self, now: SimTime, pkt: Packet) -> Result<Option<SimTime>, Packet> {
        debug_assert!(pkt.size() <= self.cfg.mtu, "packet of {} B over a {} B MTU link", pkt.size(), self.cfg.mtu);
        // The packet passes through the queue even when the link is idle, so that every
        // discipline sees every arrival (RED's average, CoDel's zero sojourns).
        self.queue.enqueue(now, pkt, &mut self.rng)?;
        if self.tx.is_none() {
            // A queue of one never drops at dequeue (CoDel keeps at least one MTU, RFC 8289 §5.7).
            Ok(self.start_next(now, &mut Vec::new()))
        } else {
            Ok(None)
        }
    }

    fn start_next(&mut self, now: SimTime, drops: &mut Vec<Packet>) -> Option<SimTime> {
        let d = self.queue.dequeue_into(now, drops)?;
        let tx_end = now + SimDuration::transmission(d.pkt.size() as u64, self.cfg.rate_bps);
        self.tx = Some(InFlight { pkt: d.pkt, tx_start: now, tx_end });
        Some(tx_end)
    }

    /// The packet in transmission has finished serialising (`now` is the time [`Link::enqueue`]
    /// or the previous `service` returned). Pushes it to `out`, starts the next packet, and
    /// returns when that one ends, or `None` if the link is now idle.
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
        let Some(f) = self.tx.take() else {
            debug_assert!(false, "Link::service called while idle");
            return None;
        };
        debug_assert_eq!(now, f.tx_end, "Link::service called at the wrong time");
        let lost = self.loss.lose(&mut self.rng);
        let size = f.pkt.size() as u64;
        let s = &mut self.stats;
        s.tx_pkts += 1;
        s.tx_bytes += size;
        s.busy_ns += (f.tx_end - f.tx_start).as_nanos();
        if lost {
            s.lost_pkts += 1;
            s.lost_bytes += size;
        }
        out.push(Delivery {
            tx_start: f.tx_start,
            tx_end: f.tx_end,
            arrive_at: f.tx_end + self.cfg.delay,
            lost,
            pkt: f.pkt,
        });
        self.start_next(now, drops)
    }

    /// Whether a packet is being serialised.
    pub fn busy(&self) -> bool {
        self.tx.is_some()
    }
    /// End of the current serialisation, if any.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.tx.map(|f| f.tx_end)
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
    pub fn stats(&self) -> LinkStats {
        LinkStats { queue: self.queue.stats(), ..self.stats }
    }
    /// Busy fraction of `[0, now]`, counting the part of the current packet already sent.
    pub fn utilisation(&self, now: SimTime) -> f64 {
        let partial = self.tx.map_or(0, |f| now.min(f.tx_end).saturating_since(f.tx_start).as_nanos());
        if now.as_nanos() == 0 {
            0.0
        } else {
            (self.stats.busy_ns + partial) as f64 / now.as_nanos() as f64
        }
    }
}

/// A rate link or a trace link, driven through the same calls.
#[derive(Clone, Debug)]
pub enum AnyLink {
    Rate(Link),
    Trace(TraceLink),
}

impl AnyLink {
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Option<SimTime> {
        match self {
            AnyLink::Rate(l) => l.enqueue(now, pkt),
            AnyLink::Trace(l) => l.enqueue(now, pkt),
        }
    }
    #[inline]
    pub fn try_enqueue(&mut self, now: SimTime, pkt: Packet) -> Result<Option<SimTime>, Packet> {
        match self {
            AnyLink::Rate(l) => l.try_enqueue(now, pkt),
            AnyLink::Trace(l) => l.try_enqueue(now, pkt),
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

    /// Runs the link to idle, calling service at each returned time.
    fn drain(l: &mut Link, mut next: Option<SimTime>, out: &mut Vec<Delivery>) -> SimTime {
        let mut last = SimTime::ZERO;
        while let Some(t) = next {
            last = t;
            next = l.service(t, out);
        }
        last
    }

    #[test]
    fn link_back_to_back_packets_spaced_by_transmission_time() {
        // A busy transmitter sends packet k+1 the instant packet k's last bit leaves: at 10 Mbit/s a
        // 1500 B packet takes exactly 1.2 ms.
        let mut l = link(10_000_000, 5, 100, LossConfig::None);
        let first = l.enqueue(SimTime::ZERO, udp(0, 1500));
        assert_eq!(first, Some(SimTime::from_micros(1200)));
        for i in 1..5 {
            assert_eq!(l.enqueue(SimTime::ZERO, udp(i, 1500)), None);
        }
        assert_eq!(l.queue_len_pkts(), 4);
        assert_eq!(l.queue_len_bytes(), 6000);
        let mut out = Vec::new();
        drain(&mut l, first, &mut out);
        assert_eq!(out.len(), 5);
        for (k, d) in out.iter().enumerate() {
            assert_eq!(d.pkt.uid, k as u64);
            assert_eq!(d.tx_start, SimTime::from_micros(1200 * k as u64));
            assert_eq!(d.tx_end, SimTime::from_micros(1200 * (k as u64 + 1)));
        }
        assert!(!l.busy());
    }

    #[test]
    fn link_arrival_is_tx_end_plus_delay() {
        // Propagation: the far end gets the packet `delay` after the last bit was sent; a 100 B
        // packet at 1 Mbit/s takes 800 us.
        let mut l = link(1_000_000, 20, 10, LossConfig::None);
        let t0 = SimTime::from_millis(3);
        let end = l.enqueue(t0, udp(7, 100)).unwrap();
        assert_eq!(end, t0 + SimDuration::from_micros(800));
        let mut out = Vec::new();
        assert_eq!(l.service(end, &mut out), None);
        assert_eq!(out[0].arrive_at, end + SimDuration::from_millis(20));
        assert!(!out[0].lost);
    }

    #[test]
    fn link_utilisation_counts_busy_time() {
        // utilisation = busy_ns / elapsed: 10 packets of 1200 us each in a 24 ms window is 50%;
        // a packet half sent counts half.
        let mut l = link(10_000_000, 1, 100, LossConfig::None);
        let mut out = Vec::new();
        let first = (0..10).map(|i| l.enqueue(SimTime::ZERO, udp(i, 1500))).collect::<Vec<_>>()[0];
        let end = drain(&mut l, first, &mut out);
        assert_eq!(end, SimTime::from_millis(12));
        assert_eq!(l.stats().busy_ns, 12_000_000);
        assert_eq!(l.stats().tx_bytes, 15_000);
        assert!((l.utilisation(SimTime::from_millis(24)) - 0.5).abs() < 1e-12);
        assert!((l.stats().utilisation(SimDuration::from_millis(24)) - 0.5).abs() < 1e-12);
        l.enqueue(SimTime::from_millis(24), udp(99, 1500));
        assert!((l.utilisation(SimTime::from_micros(24_600)) - 12.6 / 24.6).abs() < 1e-12);
    }

    #[test]
    fn link_queue_overflow_is_dropped_not_sent() {
        // Drop-tail behind the transmitter: with 1 in service and 2 queued, the 4th is dropped.
        let mut l = link(1_000_000, 1, 2, LossConfig::None);
        let first = l.enqueue(SimTime::ZERO, udp(0, 1000));
        l.enqueue(SimTime::ZERO, udp(1, 1000));
        l.enqueue(SimTime::ZERO, udp(2, 1000));
        assert_eq!(l.try_enqueue(SimTime::ZERO, udp(3, 1000)).unwrap_err().uid, 3);
        let mut out = Vec::new();
        drain(&mut l, first, &mut out);
        assert_eq!(out.iter().map(|d| d.pkt.uid).collect::<Vec<_>>(), vec![0, 1, 2]);
        let s = l.stats();
        assert_eq!((s.tx_pkts, s.queue.dropped_pkts), (3, 1));
    }

    #[test]
    fn link_lost_packets_are_reported_and_counted() {
        // The loss model acts on the wire: lost packets still occupy the transmitter and are pushed
        // with lost = true (for pcap), and the loss rate matches the model.
        let mut l = link(1_000_000_000, 1, 100_000, LossConfig::Bernoulli { p: 0.1 });
        let first = (0..20_000).map(|i| l.enqueue(SimTime::ZERO, udp(i, 100))).collect::<Vec<_>>()[0];
        let mut out = Vec::new();
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
        let first = (0..600).map(|i| l.enqueue(SimTime::ZERO, udp(i, 1500))).collect::<Vec<_>>()[0];
        let (mut out, mut drops, mut next) = (Vec::new(), Vec::new(), first);
        while let Some(t) = next {
            next = l.service_with_drops(t, &mut out, &mut drops);
        }
        assert!(!drops.is_empty());
        assert_eq!(drops.len() as u64, l.stats().queue.dropped_pkts);
        let mut uids: Vec<u64> = out.iter().map(|d| d.pkt.uid).chain(drops.iter().map(|p| p.uid)).collect();
        uids.sort_unstable();
        assert_eq!(uids, (0..600).collect::<Vec<_>>());
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
            let mut next = None;
            for i in 0..10 {
                next = next.or(l.enqueue(SimTime::ZERO, udp(i, 1500)));
            }
            assert_eq!(l.next_deadline(), next);
            let mut out = Vec::new();
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
        // After going idle, the next enqueue starts sending immediately at its own time.
        let mut l = link(8_000_000, 0, 10, LossConfig::None);
        let mut out = Vec::new();
        let t = l.enqueue(SimTime::ZERO, udp(0, 1000)).unwrap();
        assert_eq!(l.service(t, &mut out), None);
        let t2 = l.enqueue(SimTime::from_millis(10), udp(1, 1000)).unwrap();
        assert_eq!(t2, SimTime::from_millis(11));
        assert_eq!(l.next_deadline(), Some(t2));
    }
}
