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
//! A drop-tail queue goes one step further. It does nothing at dequeue, so a packet's start is
//! known on arrival: the end of the transmitter's backlog, `max(now, busy_until)`. Such a link
//! keeps only the start times of the packets still waiting (to apply the limit and report the
//! queue length, [`Link::queue_len_pkts_at`]), pushes every accepted packet's delivery from
//! `enqueue`, and never asks for a service call; the deliveries, drops and counters are exactly
//! those of the queued path (a test drives both with the same arrivals). RED and CoDel, which
//! act at dequeue, keep the queued path.
//!
//! [`AnyLink`] dispatches between a rate link and a [`TraceLink`] (Mahimahi trace) so callers
//! drive both alike.

use celltcp_engine::{SimDuration, SimRng, SimTime};
use serde::{Deserialize, Serialize};

use crate::loss::LossModel;
use crate::packet::Packet;
use std::collections::VecDeque;

use crate::queue::{AnyQueue, QueueLimit, QueueStats};
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
    /// End of the last transmission started: the transmitter is free from then on.
    busy_until: SimTime,
    /// Packets wait in the queue and a [`Link::service`] call is due at `busy_until`.
    pending: bool,
    /// For a drop-tail queue: packets are scheduled at enqueue, and this replaces the queue.
    sched: Option<Scheduled>,
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
        let sched = match &queue {
            AnyQueue::DropTail(q) => Some(Scheduled {
                limit: q.limit(),
                starts: VecDeque::new(),
                bytes: 0,
                stats: QueueStats::default(),
            }),
            _ => None,
        };
        Link {
            cfg,
            queue,
            loss,
            rng,
            busy_until: SimTime::ZERO,
            pending: false,
            sched,
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
    /// transmission). On a drop-tail link every accepted packet's delivery is pushed at once,
    /// with its future `tx_start`, and no service call is ever asked for. A packet the queue
    /// drops is counted in its stats.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Delivery>) -> Option<SimTime> {
        self.try_enqueue(now, pkt, out).unwrap_or(None)
    }

    /// As [`Link::enqueue`], but hands back a packet the queue dropped.
    pub fn try_enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Delivery>) -> Result<Option<SimTime>, Packet> {
        debug_assert!(pkt.size() <= self.cfg.mtu, "packet of {} B over a {} B MTU link", pkt.size(), self.cfg.mtu);
        if let Some(sc) = &mut self.sched {
            // Drop-tail: the packet's start is known now (the transmitter's backlog ends at
            // `busy_until`), and so is whether it fits behind the packets still waiting at `now`.
            let start = now.max(self.busy_until);
            if sc.accept(now, start, &pkt).is_err() {
                return Err(pkt);
            }
            self.transmit(start, pkt, out);
            return Ok(None);
        }
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
        self.transmit(now, d.pkt, out);
        true
    }

    /// Starts sending `pkt` at `start` (the transmitter is free then) and pushes its delivery.
    #[inline]
    fn transmit(&mut self, start: SimTime, pkt: Packet, out: &mut Vec<Delivery>) {
        let size = pkt.size() as u64;
        let tx_time = self.tx_time(size);
        let tx_end = start + tx_time;
        let lost = self.loss.lose(&mut self.rng);
        let s = &mut self.stats;
        s.tx_pkts += 1;
        s.tx_bytes += size;
        s.busy_ns += tx_time.as_nanos();
        if lost {
            s.lost_pkts += 1;
            s.lost_bytes += size;
        }
        self.busy_until = tx_end;
        out.push(Delivery { tx_start: start, tx_end, arrive_at: tx_end + self.cfg.delay, lost, pkt });
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
    /// Packets waiting (not the one in transmission) as of the last call to the link; see
    /// [`Link::queue_len_pkts_at`].
    pub fn queue_len_pkts(&self) -> usize {
        match &self.sched {
            Some(sc) => sc.starts.len(),
            None => self.queue.len_pkts(),
        }
    }
    pub fn queue_len_bytes(&self) -> u64 {
        match &self.sched {
            Some(sc) => sc.bytes,
            None => self.queue.len_bytes(),
        }
    }
    /// Packets waiting at `now` (not before the last call): a drop-tail link knows when each
    /// scheduled packet starts, so this is exact between calls too.
    pub fn queue_len_pkts_at(&self, now: SimTime) -> usize {
        match &self.sched {
            Some(sc) => sc.starts.len() - sc.starts.partition_point(|&(t, _)| t <= now),
            None => self.queue.len_pkts(),
        }
    }
    pub fn queue_len_bytes_at(&self, now: SimTime) -> u64 {
        match &self.sched {
            Some(sc) => {
                let started = sc.starts.partition_point(|&(t, _)| t <= now);
                sc.starts.range(started..).map(|&(_, b)| b as u64).sum()
            }
            None => self.queue.len_bytes(),
        }
    }
    /// The queue discipline. A drop-tail link schedules its packets itself and leaves this one
    /// empty: use [`Link::stats`] and the `queue_len_*` calls, which cover both.
    pub fn queue(&self) -> &AnyQueue {
        &self.queue
    }
    /// Link counters. A packet is counted (whole transmission time in `busy_ns`) when it starts;
    /// on a drop-tail link, when it is accepted (its start is known then).
    pub fn stats(&self) -> LinkStats {
        let queue = match &self.sched {
            Some(sc) => sc.stats,
            None => self.queue.stats(),
        };
        LinkStats { queue, ..self.stats }
    }
    /// Busy fraction of `[0, now]`: the transmissions not yet done at `now` are left out (they
    /// run back to back up to `busy_until`).
    pub fn utilisation(&self, now: SimTime) -> f64 {
        let unsent = self.busy_until.saturating_since(now).as_nanos();
        if now.as_nanos() == 0 {
            0.0
        } else {
            self.stats.busy_ns.saturating_sub(unsent) as f64 / now.as_nanos() as f64
        }
    }
}

/// The drop-tail queue of a link, kept as the start times of the accepted packets that have
/// not started yet: a FIFO with no dequeue-time behaviour serves each packet at a time known on
/// arrival, so the packet itself need not wait anywhere.
#[derive(Clone, Debug)]
struct Scheduled {
    limit: QueueLimit,
    /// `(tx_start, size)` of the packets waiting, in order (as of the last `accept`).
    starts: VecDeque<(SimTime, u32)>,
    /// Their bytes.
    bytes: u64,
    stats: QueueStats,
}

impl Scheduled {
    /// Admits `pkt` arriving at `now`, to start at `start`, if it fits under the limit on top of
    /// the packets still waiting at `now` (those starting after it), as [`crate::queue::DropTail`].
    #[inline]
    fn accept(&mut self, now: SimTime, start: SimTime, pkt: &Packet) -> Result<(), ()> {
        while let Some(&(t, b)) = self.starts.front() {
            if t > now {
                break;
            }
            self.starts.pop_front();
            self.bytes -= b as u64;
        }
        let size = pkt.size();
        let fits = match self.limit {
            QueueLimit::Packets(n) => self.starts.len() < n as usize,
            QueueLimit::Bytes(b) => self.bytes + size as u64 <= b,
        };
        let s = &mut self.stats;
        if !fits {
            s.dropped_pkts += 1;
            s.dropped_bytes += size as u64;
            return Err(());
        }
        s.enqueued_pkts += 1;
        s.enqueued_bytes += size as u64;
        // Its departure from the queue is known too.
        s.dequeued_pkts += 1;
        s.sojourn_sum_ns += (start - now).as_nanos();
        if start > now {
            self.starts.push_back((start, size));
            self.bytes += size as u64;
        }
        Ok(())
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
    /// Packets waiting at `now` (see [`Link::queue_len_pkts_at`]).
    pub fn queue_len_pkts_at(&self, now: SimTime) -> usize {
        match self {
            AnyLink::Rate(l) => l.queue_len_pkts_at(now),
            AnyLink::Trace(l) => l.queue_len_pkts(),
        }
    }
    pub fn queue_len_bytes_at(&self, now: SimTime) -> u64 {
        match self {
            AnyLink::Rate(l) => l.queue_len_bytes_at(now),
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

    /// A drop-tail link; `scheduled = false` keeps the packets in the queue and uses service
    /// calls, as every other discipline does, so both paths run the same checks.
    fn link_kind(rate_bps: u64, delay_ms: u64, limit: u32, loss: LossConfig, scheduled: bool) -> Link {
        let cfg = LinkConfig { rate_bps, delay: SimDuration::from_millis(delay_ms), mtu: 1500 };
        let q = AnyQueue::new(&QueueConfig::DropTail { limit: QueueLimit::Packets(limit) });
        let mut l = Link::new(cfg, q, LossModel::new(loss), component_rng(1, 42));
        if !scheduled {
            l.sched = None;
        }
        l
    }

    fn link(rate_bps: u64, delay_ms: u64, limit: u32, loss: LossConfig) -> Link {
        link_kind(rate_bps, delay_ms, limit, loss, true)
    }

    /// Both paths of a drop-tail link.
    fn both(rate_bps: u64, delay_ms: u64, limit: u32, loss: LossConfig) -> [Link; 2] {
        [link_kind(rate_bps, delay_ms, limit, loss, true), link_kind(rate_bps, delay_ms, limit, loss, false)]
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

    /// Drives `l` through timed arrivals as a run loop does (service calls due at an arrival's
    /// time run first). Returns the deliveries, the uids dropped, and the service calls made.
    fn drive(l: &mut Link, arrivals: &[(SimTime, Packet)]) -> (Vec<Delivery>, Vec<u64>, usize) {
        let (mut out, mut dropped, mut calls, mut next) = (Vec::new(), Vec::new(), 0, None::<SimTime>);
        for (t, p) in arrivals {
            while let Some(s) = next.filter(|s| s <= t) {
                next = l.service(s, &mut out);
                calls += 1;
            }
            match l.try_enqueue(*t, *p, &mut out) {
                Ok(Some(s)) => {
                    assert!(next.is_none(), "a second service call was asked for");
                    next = Some(s);
                }
                Ok(None) => {}
                Err(p) => dropped.push(p.uid),
            }
        }
        while let Some(s) = next {
            next = l.service(s, &mut out);
            calls += 1;
        }
        (out, dropped, calls)
    }

    #[test]
    fn link_back_to_back_packets_spaced_by_transmission_time() {
        // A busy transmitter sends packet k+1 the instant packet k's last bit leaves: at 10 Mbit/s a
        // 1500 B packet takes exactly 1.2 ms.
        for mut l in both(10_000_000, 5, 100, LossConfig::None) {
            let mut out = Vec::new();
            let first = offer(&mut l, SimTime::ZERO, 5, 1500, &mut out);
            assert_eq!(l.queue_len_pkts_at(SimTime::ZERO), 4);
            assert_eq!(l.queue_len_bytes_at(SimTime::ZERO), 6000);
            drain(&mut l, first, &mut out);
            assert_eq!(out.len(), 5);
            for (k, d) in out.iter().enumerate() {
                assert_eq!(d.pkt.uid, k as u64);
                assert_eq!(d.tx_start, SimTime::from_micros(1200 * k as u64));
                assert_eq!(d.tx_end, SimTime::from_micros(1200 * (k as u64 + 1)));
            }
            assert!(!l.busy());
            assert_eq!(l.busy_until(), SimTime::from_micros(6000));
            assert_eq!(l.queue_len_pkts_at(SimTime::from_micros(6000)), 0);
        }
    }

    #[test]
    fn link_waiting_packets_cost_one_service_call_each_unless_drop_tail() {
        // The first packet of a burst starts inside enqueue; with a queue that acts at dequeue
        // each waiting one needs a service call, asked for once, at the end of the one before.
        // A drop-tail link knows every start time on arrival: all deliveries come out of
        // enqueue, and the queue length still follows the schedule.
        let mut l = link_kind(10_000_000, 5, 100, LossConfig::None, false);
        let mut out = Vec::new();
        assert_eq!(l.enqueue(SimTime::ZERO, udp(0, 1500), &mut out), None);
        assert_eq!((out.len(), l.busy()), (1, false));
        assert_eq!(l.enqueue(SimTime::ZERO, udp(1, 1500), &mut out), Some(SimTime::from_micros(1200)));
        assert_eq!(l.enqueue(SimTime::ZERO, udp(2, 1500), &mut out), None);
        assert_eq!((out.len(), l.queue_len_pkts()), (1, 2));
        assert_eq!(l.next_deadline(), Some(SimTime::from_micros(1200)));
        assert_eq!(l.service(SimTime::from_micros(1200), &mut out), Some(SimTime::from_micros(2400)));
        assert_eq!(l.service(SimTime::from_micros(2400), &mut out), None);
        assert_eq!(out.len(), 3);

        let mut l = link(10_000_000, 5, 100, LossConfig::None);
        let mut out = Vec::new();
        assert_eq!(offer(&mut l, SimTime::ZERO, 3, 1500, &mut out), None);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].tx_start, SimTime::from_micros(2400));
        assert_eq!(l.next_deadline(), None);
        assert_eq!(l.queue_len_pkts_at(SimTime::from_micros(1199)), 2);
        assert_eq!(l.queue_len_pkts_at(SimTime::from_micros(1200)), 1);
        assert_eq!(l.queue_len_bytes_at(SimTime::from_micros(1200)), 1500);
    }

    #[test]
    fn drop_tail_schedule_matches_the_queued_path_exactly() {
        // Random bursts into a small drop-tail queue, through both paths: the same deliveries
        // (times, order, losses), the same drops, the same link and queue counters.
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut t = 0u64;
        let mut arrivals = Vec::new();
        for uid in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += [0, 0, 0, 50_000, 300_000, 1_200_000, 5_000_000][(x % 7) as usize];
            arrivals.push((SimTime(t), udp(uid, 40 + (x >> 8) as u32 % 1461)));
        }
        let [mut a, mut b] = both(10_000_000, 3, 8, LossConfig::Bernoulli { p: 0.05 });
        let (out_a, drop_a, calls_a) = drive(&mut a, &arrivals);
        let (out_b, drop_b, calls_b) = drive(&mut b, &arrivals);
        assert_eq!(calls_a, 0);
        assert!(calls_b > 1000, "{calls_b}");
        assert!(drop_a.len() > 100, "{}", drop_a.len());
        assert_eq!(drop_a, drop_b);
        assert_eq!(out_a, out_b);
        assert_eq!(a.stats(), b.stats());
        assert_eq!(a.busy_until(), b.busy_until());
    }

    #[test]
    fn link_arrival_is_tx_end_plus_delay() {
        // Propagation: the far end gets the packet `delay` after the last bit was sent; a 100 B
        // packet at 1 Mbit/s takes 800 us.
        for mut l in both(1_000_000, 20, 10, LossConfig::None) {
            let t0 = SimTime::from_millis(3);
            let mut out = Vec::new();
            let next = offer(&mut l, t0, 2, 100, &mut out);
            drain(&mut l, next, &mut out);
            let end = t0 + SimDuration::from_micros(800);
            assert_eq!((out[0].tx_start, out[0].tx_end), (t0, end));
            assert_eq!(out[0].arrive_at, end + SimDuration::from_millis(20));
            assert_eq!(out[1].arrive_at, end + SimDuration::from_micros(800) + SimDuration::from_millis(20));
            assert!(!out[0].lost);
        }
    }

    #[test]
    fn link_utilisation_counts_busy_time() {
        // utilisation = busy time / elapsed: 10 packets of 1200 us each in a 24 ms window is 50%;
        // a packet half sent counts half.
        for mut l in both(10_000_000, 1, 100, LossConfig::None) {
            let mut out = Vec::new();
            let first = offer(&mut l, SimTime::ZERO, 10, 1500, &mut out);
            drain(&mut l, first, &mut out);
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
    }

    #[test]
    fn link_queue_overflow_is_dropped_not_sent() {
        // Drop-tail behind the transmitter: with 1 in transmission and 2 waiting, the 4th is
        // dropped; the limit counts waiting packets only.
        for mut l in both(1_000_000, 1, 2, LossConfig::None) {
            let mut out = Vec::new();
            let first = offer(&mut l, SimTime::ZERO, 3, 1000, &mut out);
            assert_eq!(l.try_enqueue(SimTime::ZERO, udp(3, 1000), &mut out).unwrap_err().uid, 3);
            drain(&mut l, first, &mut out);
            assert_eq!(out.iter().map(|d| d.pkt.uid).collect::<Vec<_>>(), vec![0, 1, 2]);
            let s = l.stats();
            assert_eq!((s.tx_pkts, s.queue.dropped_pkts), (3, 1));
        }
        // Once the first has left (8 ms) and the second is sending, one place is free again.
        for mut l in both(1_000_000, 1, 2, LossConfig::None) {
            let t = SimTime::from_millis(8);
            let arrivals: Vec<_> = [(0, 0), (0, 1), (0, 2), (8, 3), (8, 4)]
                .iter()
                .map(|&(ms, uid)| (SimTime::from_millis(ms), udp(uid, 1000)))
                .collect();
            let (out, dropped, _) = drive(&mut l, &arrivals);
            assert_eq!(dropped, vec![4]);
            assert_eq!(out.len(), 4);
            assert_eq!(out[3].tx_start, t + SimDuration::from_millis(16));
        }
    }

    #[test]
    fn link_lost_packets_are_reported_and_counted() {
        // The loss model acts on the wire: lost packets still occupy the transmitter and are pushed
        // with lost = true (for pcap), and the loss rate matches the model.
        for mut l in both(1_000_000_000, 1, 100_000, LossConfig::Bernoulli { p: 0.1 }) {
            let mut out = Vec::new();
            let first = offer(&mut l, SimTime::ZERO, 20_000, 100, &mut out);
            drain(&mut l, first, &mut out);
            let lost = out.iter().filter(|d| d.lost).count() as u64;
            assert_eq!(out.len(), 20_000);
            assert_eq!(l.stats().lost_pkts, lost);
            assert!((lost as f64 / 20_000.0 - 0.1).abs() < 0.01, "{lost}");
        }
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
    fn link_reports_codel_dequeue_drops() {
        // RFC 8289 drops at dequeue; service_with_drops hands those packets to the caller, and
        // every packet is either delivered or dropped exactly once.
        let cfg = LinkConfig { rate_bps: 12_000_000, delay: SimDuration::ZERO, mtu: 1500 };
        let q = AnyQueue::new(&QueueConfig::CoDel(crate::queue::CoDelConfig::default()));
        let mut l = Link::new(cfg, q, LossModel::none(), component_rng(1, 5));
        let mut out = Vec::new();
        let mut drops = Vec::new();
        let mut next = offer(&mut l, SimTime::ZERO, 600, 1500, &mut out);
        assert!(next.is_some());
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
        for mut l in both(8_000_000, 0, 10, LossConfig::None) {
            let mut out = Vec::new();
            assert_eq!(l.enqueue(SimTime::ZERO, udp(0, 1000), &mut out), None);
            assert_eq!(out[0].tx_end, SimTime::from_millis(1));
            assert_eq!(l.enqueue(SimTime::from_millis(10), udp(1, 1000), &mut out), None);
            assert_eq!((out[1].tx_start, out[1].tx_end), (SimTime::from_millis(10), SimTime::from_millis(11)));
            assert_eq!(l.next_deadline(), None);
            let t = l.enqueue(SimTime::from_micros(10_500), udp(2, 1000), &mut out);
            drain(&mut l, t, &mut out);
            assert_eq!((out[2].tx_start, out[2].tx_end), (SimTime::from_millis(11), SimTime::from_millis(12)));
            // Arriving exactly when the transmitter frees up: it starts at once.
            assert_eq!(l.enqueue(SimTime::from_millis(12), udp(3, 1000), &mut out), None);
            assert_eq!(out[3].tx_start, SimTime::from_millis(12));
        }
    }
}
