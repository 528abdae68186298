//! Router and link queues: drop-tail, RED, CoDel and step marking.
//!
//! A queue holds the packets waiting for a link; the packet being serialised is not in it (as a
//! Linux qdisc or an ns-3 `QueueDisc` sees it). All three disciplines share one FIFO ([`Fifo`])
//! that remembers each packet's enqueue time, so every dequeue reports the packet's sojourn time.
//!
//! - [`droptail`]: tail drop at a packet or byte limit.
//! - [`red`]: Random Early Detection (Floyd & Jacobson 1993), with gentle mode and ECN marking.
//! - [`codel`]: Controlled Delay (RFC 8289), with ECN marking.
//! - [`step`]: CE marking above an instantaneous threshold K (DCTCP switches, RFC 8257 §3.1).
//!
//! [`QueueConfig`] is the plain-data description a scenario file holds; [`AnyQueue`] is the closed
//! enum built from it that the links own. Dropped or rejected packets are handed back from
//! [`AnyQueue::enqueue`]; CoDel also drops at dequeue, which [`AnyQueue::dequeue_into`] reports
//! (and [`QueueStats`] always counts).

pub mod codel;
pub mod droptail;
pub mod red;
pub mod step;

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimRng, SimTime};
use serde::{Deserialize, Serialize};

use crate::packet::{Ecn, Packet};

pub use codel::{CoDel, CoDelConfig};
pub use droptail::DropTail;
pub use red::{Red, RedConfig};
pub use step::{Step, StepConfig};

/// The capacity of a queue, in packets or in bytes (IPv4 total length).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

impl Default for QueueLimit {
    /// 1000 packets, Linux's default `txqueuelen`.
    fn default() -> Self {
        QueueLimit::Packets(1000)
    }
}

/// Which queue discipline a link uses, as plain data for scenario files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QueueConfig {
    /// Tail drop when the limit is reached.
    DropTail { limit: QueueLimit },
    /// Random Early Detection (Floyd & Jacobson 1993).
    Red(RedConfig),
    /// Controlled Delay (RFC 8289).
    #[serde(rename = "codel")]
    CoDel(CoDelConfig),
    /// CE marking when more than K packets are queued (RFC 8257 §3.1).
    Step(StepConfig),
}

impl QueueConfig {
    /// Checks ranges and units; the message names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            QueueConfig::DropTail { limit } => validate_limit(*limit),
            QueueConfig::Red(c) => c.validate(),
            QueueConfig::CoDel(c) => c.validate(),
            QueueConfig::Step(c) => c.validate(),
        }
    }
}

fn validate_limit(limit: QueueLimit) -> Result<(), String> {
    match limit {
        QueueLimit::Packets(0) | QueueLimit::Bytes(0) => Err("queue limit must be positive".into()),
        _ => Ok(()),
    }
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::DropTail { limit: QueueLimit::default() }
    }
}

/// Counters kept by every queue. Drops include CoDel's drops at dequeue; marks are ECN CE marks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Packets accepted into the queue.
    pub enqueued_pkts: u64,
    pub enqueued_bytes: u64,
    /// Packets rejected at enqueue or dropped at dequeue.
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    /// Packets whose ECN field was set to CE instead of being dropped.
    pub marked_pkts: u64,
    /// Sum of the sojourn times of the dequeued (not dropped) packets, nanoseconds.
    pub sojourn_sum_ns: u64,
    /// Packets handed to the link.
    pub dequeued_pkts: u64,
}

impl QueueStats {
    /// Mean sojourn time of the dequeued packets (zero if none).
    pub fn mean_sojourn(&self) -> SimDuration {
        match self.dequeued_pkts {
            0 => SimDuration::ZERO,
            n => SimDuration(self.sojourn_sum_ns / n),
        }
    }
    #[inline]
    pub(crate) fn on_drop(&mut self, pkt: &Packet) {
        self.dropped_pkts += 1;
        self.dropped_bytes += pkt.size() as u64;
    }
}

/// A packet leaving a queue with the time it spent there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub pkt: Packet,
    pub sojourn: SimDuration,
}

/// The FIFO under every discipline: packets with their enqueue times, and a byte count.
#[derive(Clone, Debug, Default)]
pub struct Fifo {
    buf: VecDeque<(Packet, SimTime)>,
    bytes: u64,
}

impl Fifo {
    pub fn new() -> Self {
        Fifo::default()
    }
    #[inline]
    pub fn len_pkts(&self) -> usize {
        self.buf.len()
    }
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// Whether `pkt` fits under `limit` on top of what is queued.
    #[inline]
    pub fn fits(&self, limit: QueueLimit, pkt: &Packet) -> bool {
        match limit {
            QueueLimit::Packets(n) => self.buf.len() < n as usize,
            QueueLimit::Bytes(b) => self.bytes + pkt.size() as u64 <= b,
        }
    }
    #[inline]
    pub fn push(&mut self, now: SimTime, pkt: Packet) {
        self.bytes += pkt.size() as u64;
        self.buf.push_back((pkt, now));
    }
    #[inline]
    pub fn pop(&mut self, now: SimTime) -> Option<Dequeued> {
        let (pkt, t) = self.buf.pop_front()?;
        self.bytes -= pkt.size() as u64;
        Some(Dequeued { pkt, sojourn: now.saturating_since(t) })
    }
}

/// Sets CE on an ECN-capable packet (RFC 3168 §5); returns false for Not-ECT packets, which must
/// be dropped instead.
#[inline]
pub(crate) fn mark_ce(pkt: &mut Packet) -> bool {
    match pkt.ecn {
        Ecn::NotEct => false,
        Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce => {
            pkt.ecn = Ecn::Ce;
            true
        }
    }
}

/// A queue of any discipline (closed-enum dispatch).
#[derive(Clone, Debug)]
pub enum AnyQueue {
    DropTail(DropTail),
    Red(Red),
    CoDel(CoDel),
    Step(Step),
}

impl AnyQueue {
    pub fn new(cfg: &QueueConfig) -> Self {
        match cfg {
            QueueConfig::DropTail { limit } => AnyQueue::DropTail(DropTail::new(*limit)),
            QueueConfig::Red(c) => AnyQueue::Red(Red::new(c.clone())),
            QueueConfig::CoDel(c) => AnyQueue::CoDel(CoDel::new(c.clone())),
            QueueConfig::Step(c) => AnyQueue::Step(Step::new(c.clone())),
        }
    }

    /// Tells the queue the rate of the link it feeds. RED needs it to age its average over idle
    /// periods (Floyd & Jacobson 1993 §4); links call this when they take the queue.
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        if let AnyQueue::Red(q) = self {
            q.set_link_rate(rate_bps);
        }
    }

    /// Offers a packet to the queue; `Err` hands back a packet that was dropped or rejected.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet, rng: &mut SimRng) -> Result<(), Packet> {
        match self {
            AnyQueue::DropTail(q) => q.enqueue(now, pkt),
            AnyQueue::Red(q) => q.enqueue(now, pkt, rng),
            AnyQueue::CoDel(q) => q.enqueue(now, pkt),
            AnyQueue::Step(q) => q.enqueue(now, pkt),
        }
    }

    /// The next packet for the link, if any. Packets CoDel drops on the way are only counted.
    #[inline]
    pub fn dequeue(&mut self, now: SimTime) -> Option<Dequeued> {
        match self {
            AnyQueue::DropTail(q) => q.dequeue(now),
            AnyQueue::Red(q) => q.dequeue(now),
            AnyQueue::CoDel(q) => q.dequeue(now),
            AnyQueue::Step(q) => q.dequeue(now),
        }
    }

    /// As [`AnyQueue::dequeue`], also pushing the packets dropped at dequeue (CoDel) to `drops`.
    #[inline]
    pub fn dequeue_into(&mut self, now: SimTime, drops: &mut Vec<Packet>) -> Option<Dequeued> {
        match self {
            AnyQueue::DropTail(q) => q.dequeue(now),
            AnyQueue::Red(q) => q.dequeue(now),
            AnyQueue::CoDel(q) => q.dequeue_into(now, drops),
            AnyQueue::Step(q) => q.dequeue(now),
        }
    }

    #[inline]
    fn fifo(&self) -> &Fifo {
        match self {
            AnyQueue::DropTail(q) => &q.fifo,
            AnyQueue::Red(q) => &q.fifo,
            AnyQueue::CoDel(q) => &q.fifo,
            AnyQueue::Step(q) => &q.fifo,
        }
    }

    pub fn len_pkts(&self) -> usize {
        self.fifo().len_pkts()
    }
    pub fn len_bytes(&self) -> u64 {
        self.fifo().len_bytes()
    }
    pub fn is_empty(&self) -> bool {
        self.fifo().is_empty()
    }
    pub fn stats(&self) -> QueueStats {
        match self {
            AnyQueue::DropTail(q) => q.stats,
            AnyQueue::Red(q) => q.stats,
            AnyQueue::CoDel(q) => q.stats,
            AnyQueue::Step(q) => q.stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Body, Ipv4, UdpDatagram};

    fn udp(len: u32) -> Packet {
        let b = Body::Udp(UdpDatagram { payload_len: len - 28, ..Default::default() });
        Packet::new(0, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0, SimTime::ZERO, b)
    }

    #[test]
    fn fifo_reports_sojourn_and_bytes() {
        // The sojourn time is dequeue time minus enqueue time (RFC 8289 §4.1's timestamping).
        let mut f = Fifo::new();
        f.push(SimTime::from_millis(1), udp(100));
        f.push(SimTime::from_millis(2), udp(200));
        assert_eq!(f.len_bytes(), 300);
        let d = f.pop(SimTime::from_millis(5)).unwrap();
        assert_eq!(d.sojourn, SimDuration::from_millis(4));
        assert_eq!(f.len_bytes(), 200);
    }

    #[test]
    fn configs_validate_ranges() {
        // Defaults are valid; out-of-range parameters are refused with the field named.
        assert!(QueueConfig::default().validate().is_ok());
        assert!(QueueConfig::Red(RedConfig::default()).validate().is_ok());
        assert!(QueueConfig::CoDel(CoDelConfig::default()).validate().is_ok());
        let bad = QueueConfig::Red(RedConfig { min_th: 20.0, ..Default::default() });
        assert!(bad.validate().unwrap_err().contains("min_th"));
        let bad = QueueConfig::Red(RedConfig { max_p: 1.5, ..Default::default() });
        assert!(bad.validate().unwrap_err().contains("max_p"));
        assert!(QueueConfig::DropTail { limit: QueueLimit::Bytes(0) }.validate().is_err());
    }

    #[test]
    fn any_queue_builds_every_config() {
        // Each config variant builds its own discipline.
        let cfgs = [
            QueueConfig::default(),
            QueueConfig::Red(RedConfig::default()),
            QueueConfig::CoDel(CoDelConfig::default()),
            QueueConfig::Step(StepConfig::default()),
        ];
        let mut rng = celltcp_engine::component_rng(1, 1);
        for c in &cfgs {
            let mut q = AnyQueue::new(c);
            q.set_link_rate(10_000_000);
            q.enqueue(SimTime::ZERO, udp(1000), &mut rng).unwrap();
            assert_eq!((q.len_pkts(), q.len_bytes()), (1, 1000));
            let d = q.dequeue(SimTime::from_micros(10)).unwrap();
            assert_eq!(d.sojourn, SimDuration::from_micros(10));
            assert_eq!(q.stats().dequeued_pkts, 1);
            assert!(q.is_empty());
        }
    }
}
