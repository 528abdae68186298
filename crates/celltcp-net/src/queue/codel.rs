//! Controlled Delay, CoDel (RFC 8289).
//!
//! Section references below are by name, after RFC 8289's own headings: the overview ("Overview
//! of the CoDel AQM": "Setting TARGET", "Setting INTERVAL") and the annotated pseudocode (§5:
//! `dequeue()`, `dodequeue()`, `control_law()`).
//!
//! CoDel acts at dequeue on the sojourn time of the packet leaving:
//! - while the sojourn time stays at or above `target` (5 ms, "Setting TARGET") for a full
//!   `interval` (100 ms, "Setting INTERVAL") — and more than one maximum-size packet is queued
//!   (`maxpacket` in `dodequeue()`) — it enters the dropping state and drops the head packet;
//! - in the dropping state it drops again at `drop_next`, spaced by the control law
//!   `interval / sqrt(count)` (`control_law()`), until a packet's sojourn falls below `target`;
//! - on re-entering the dropping state soon after leaving it (within 16 intervals of the last
//!   scheduled drop) it starts from the drop rate it reached before, `count = count − lastcount`
//!   (`dequeue()`, the variant the RFC calls "the Linux version").
//!
//! With `ecn`, ECN-capable packets are marked CE instead of dropped and leave the queue; the
//! dropping schedule advances as for a drop (as Linux `codel_dequeue` does). The queue also has a
//! hard packet limit, tail-dropped at enqueue (Linux `sch_codel` default 1000 packets). The
//! control law uses an exact square root where Linux uses a Newton-step approximation.

use celltcp_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use super::{mark_ce, Dequeued, Fifo, QueueLimit, QueueStats};
use crate::packet::Packet;

/// CoDel parameters (RFC 8289 "Setting TARGET" / "Setting INTERVAL", Linux `sch_codel` defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CoDelConfig {
    /// Hard limit in packets, tail-dropped at enqueue.
    pub limit_pkts: u32,
    /// Acceptable standing queue delay (RFC 8289 "Setting TARGET": 5 ms).
    pub target: SimDuration,
    /// Sliding window over which the minimum sojourn must exceed `target` ("Setting INTERVAL": 100 ms).
    pub interval: SimDuration,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl Default for CoDelConfig {
    fn default() -> Self {
        CoDelConfig {
            limit_pkts: 1000,
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            ecn: false,
        }
    }
}

impl CoDelConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.limit_pkts == 0 {
            return Err("codel: limit_pkts must be positive".into());
        }
        if self.target.as_nanos() == 0 || self.interval.as_nanos() == 0 {
            return Err("codel: target and interval must be positive".into());
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct CoDel {
    pub(crate) fifo: Fifo,
    pub(crate) stats: QueueStats,
    cfg: CoDelConfig,
    /// Largest packet seen (bytes); below one such packet queued, CoDel never drops (`dodequeue()`).
    maxpacket: u64,
    /// Drops (or marks) since entering the dropping state (`count_`).
    count: u32,
    /// `count` when the dropping state was last entered (`lastcount_`).
    lastcount: u32,
    dropping: bool,
    /// When the sojourn time will have been above target for an interval (`first_above_time_`; `None` = 0).
    first_above_time: Option<SimTime>,
    /// When the next drop is due in the dropping state.
    drop_next: SimTime,
}

/// One `dodequeue()` (RFC 8289 §5): the head packet and whether it may be dropped.
struct DoDequeue {
    d: Option<Dequeued>,
    ok_to_drop: bool,
}

impl CoDel {
    pub fn new(cfg: CoDelConfig) -> Self {
        CoDel {
            fifo: Fifo::new(),
            stats: QueueStats::default(),
            cfg,
            maxpacket: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
            first_above_time: None,
            drop_next: SimTime::ZERO,
        }
    }

    pub fn config(&self) -> &CoDelConfig {
        &self.cfg
    }
    /// Whether CoDel is in its dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }
    /// Drops since the dropping state was entered.
    pub fn count(&self) -> u32 {
        self.count
    }
    /// When the next drop is scheduled (meaningful in the dropping state).
    pub fn drop_next(&self) -> SimTime {
        self.drop_next
    }

    pub fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Result<(), Packet> {
        if !self.fifo.fits(QueueLimit::Packets(self.cfg.limit_pkts), &pkt) {
            self.stats.on_drop(&pkt);
            return Err(pkt);
        }
        let size = pkt.size() as u64;
        self.maxpacket = self.maxpacket.max(size);
        self.stats.enqueued_pkts += 1;
        self.stats.enqueued_bytes += size;
        self.fifo.push(now, pkt);
        Ok(())
    }

    /// RFC 8289 `control_law()`: `t + interval / sqrt(count)`.
    fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        let ns = self.cfg.interval.as_nanos() as f64 / (count.max(1) as f64).sqrt();
        t + SimDuration(ns.round() as u64)
    }

    /// RFC 8289 `dodequeue()`.
    fn dodequeue(&mut self, now: SimTime) -> DoDequeue {
        let Some(d) = self.fifo.pop(now) else {
            self.first_above_time = None;
            return DoDequeue { d: None, ok_to_drop: false };
        };
        let mut ok_to_drop = false;
        if d.sojourn < self.cfg.target || self.fifo.len_bytes() <= self.maxpacket {
            // Below target, or less than one MTU left: not a standing queue.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + self.cfg.interval),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        DoDequeue { d: Some(d), ok_to_drop }
    }

    fn drop(&mut self, d: &Dequeued, drops: &mut Vec<Packet>) {
        self.stats.on_drop(&d.pkt);
        drops.push(d.pkt);
    }

    /// Marks `d` CE if ECN is on and the packet is ECN-capable (RFC 8289 §5; RFC 3168).
    fn try_mark(&mut self, d: &mut Dequeued) -> bool {
        if self.cfg.ecn && mark_ce(&mut d.pkt) {
            self.stats.marked_pkts += 1;
            true
        } else {
            false
        }
    }

    /// RFC 8289 `dequeue()`; dropped packets are counted in the stats only.
    pub fn dequeue(&mut self, now: SimTime) -> Option<Dequeued> {
        // Allocates only if a packet is dropped.
        self.dequeue_into(now, &mut Vec::new())
    }

    /// RFC 8289 `dequeue()`, pushing the packets dropped on the way to `drops`.
    pub fn dequeue_into(&mut self, now: SimTime, drops: &mut Vec<Packet>) -> Option<Dequeued> {
        let mut r = self.dodequeue(now);
        if self.dropping {
            if !r.ok_to_drop {
                // Sojourn below target: leave the dropping state.
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                let Some(mut d) = r.d else { break };
                self.count = self.count.wrapping_add(1);
                if self.try_mark(&mut d) {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                    r.d = Some(d);
                    break;
                }
                self.drop(&d, drops);
                r = self.dodequeue(now);
                if !r.ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                }
            }
        } else if r.ok_to_drop {
            // A full interval above target: drop (or mark) and enter the dropping state.
            if let Some(mut d) = r.d {
                if self.try_mark(&mut d) {
                    r.d = Some(d);
                } else {
                    self.drop(&d, drops);
                    r = self.dodequeue(now);
                }
            }
            self.dropping = true;
            // `dequeue()`: reuse the previous drop rate if the last dropping episode was recent.
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = 1;
            if delta > 1 && now.saturating_since(self.drop_next) < self.cfg.interval * 16 {
                self.count = delta;
            }
            self.drop_next = self.control_law(now, self.count);
            self.lastcount = self.count;
        }
        let d = r.d?;
        self.stats.dequeued_pkts += 1;
        self.stats.sojourn_sum_ns += d.sojourn.as_nanos();
        Some(d)
    }

    pub fn len_pkts(&self) -> usize {
        self.fifo.len_pkts()
    }
    pub fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
    pub fn stats(&self) -> QueueStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Body, Ecn, Ipv4, UdpDatagram};

    fn udp(uid: u64) -> Packet {
        let b = Body::Udp(UdpDatagram { payload_len: 1472, ..Default::default() });
        Packet::new(uid, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0, SimTime::ZERO, b)
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn codel_drops_nothing_below_target() {
        // "Setting TARGET": a sojourn below target is never a reason to drop, however long it lasts.
        // Two packets a millisecond in and out over a standing backlog of 8 (far above one MTU),
        // for 10 s: every packet stays exactly 4 ms, below the 5 ms target.
        let mut q = CoDel::new(CoDelConfig::default());
        for i in 0..8 {
            q.enqueue(ms(0), udp(i)).unwrap();
        }
        for t in 1..10_000u64 {
            q.enqueue(ms(t), udp(t)).unwrap();
            q.enqueue(ms(t), udp(t)).unwrap();
            assert!(q.dequeue(ms(t)).unwrap().sojourn <= SimDuration::from_millis(4));
            assert!(q.dequeue(ms(t)).unwrap().sojourn <= SimDuration::from_millis(4));
        }
        assert_eq!(q.stats().dropped_pkts, 0);
        assert!(!q.dropping());
    }

    #[test]
    fn codel_enters_dropping_after_an_interval_and_follows_control_law() {
        // `dodequeue()`: the first drop comes one interval after the sojourn first exceeds target;
        // `control_law()`: later drops at drop_next += interval / sqrt(count).
        let mut q = CoDel::new(CoDelConfig::default());
        for i in 0..600 {
            q.enqueue(ms(0), udp(i)).unwrap();
        }
        // A 12 Mbit/s link takes one 1500 B packet per ms; every packet was enqueued at 0, so the
        // sojourn at t ms is t ms: above target from t = 5 ms, so the first drop is at 105 ms.
        let mut drop_times = Vec::new();
        let mut dropped = 0;
        for t in 1..=500u64 {
            assert!(q.dequeue(ms(t)).is_some());
            let s = q.stats();
            for _ in dropped..s.dropped_pkts {
                drop_times.push(t);
            }
            dropped = s.dropped_pkts;
        }
        let mut want = vec![105u64];
        let mut next_ns: f64 = 105e6 + 100e6; // count = 1: drop_next = 105 + 100/sqrt(1)
        for k in 2.. {
            let t_ms = (next_ns / 1e6).ceil() as u64;
            if t_ms > 500 {
                break;
            }
            want.push(t_ms);
            next_ns += 100e6 / (k as f64).sqrt();
        }
        assert_eq!(drop_times, want);
        assert_eq!(&want[..4], &[105, 205, 276, 334]);
        assert!(q.dropping());
    }

    #[test]
    fn codel_leaves_dropping_and_reuses_count() {
        // `dequeue()`: leaving the dropping state when a sojourn drops below target, then re-entering
        // soon after restarts from count − lastcount instead of 1.
        let mut q = CoDel::new(CoDelConfig::default());
        for i in 0..600 {
            q.enqueue(ms(0), udp(i)).unwrap();
        }
        for t in 1..=400u64 {
            q.dequeue(ms(t));
        }
        assert!(q.dropping());
        let count_before = q.count();
        assert!(count_before > 2);
        // Drain, then a fresh packet with low sojourn: leave the dropping state.
        while q.len_pkts() > 0 {
            q.fifo.pop(ms(400));
        }
        q.enqueue(ms(401), udp(0)).unwrap();
        q.enqueue(ms(401), udp(0)).unwrap();
        q.enqueue(ms(401), udp(0)).unwrap();
        q.dequeue(ms(401));
        assert!(!q.dropping());
        // A new standing queue right away: enters dropping with count = count − lastcount (lastcount 1).
        for i in 0..300 {
            q.enqueue(ms(402), udp(i)).unwrap();
        }
        let mut t = 402;
        while !q.dropping() {
            t += 1;
            q.dequeue(ms(t));
        }
        assert_eq!(q.count(), count_before - 1);
    }

    #[test]
    fn codel_ecn_marks_instead_of_dropping() {
        // RFC 8289 §5 / RFC 3168: with ECN, ECT packets are marked CE and delivered, not dropped.
        let mut q = CoDel::new(CoDelConfig { ecn: true, ..Default::default() });
        for i in 0..600 {
            let mut p = udp(i);
            p.ecn = Ecn::Ect0;
            q.enqueue(ms(0), p).unwrap();
        }
        let mut ce = Vec::new();
        for t in 1..=300u64 {
            if q.dequeue(ms(t)).unwrap().pkt.ecn == Ecn::Ce {
                ce.push(t);
            }
        }
        assert_eq!(q.stats().dropped_pkts, 0);
        assert_eq!(&ce[..3], &[105, 205, 276]);
        assert_eq!(q.stats().marked_pkts, ce.len() as u64);
    }

    #[test]
    fn codel_tail_drops_at_the_packet_limit() {
        // Linux sch_codel: a hard limit on queued packets, enforced at enqueue.
        let mut q = CoDel::new(CoDelConfig { limit_pkts: 2, ..Default::default() });
        q.enqueue(ms(0), udp(0)).unwrap();
        q.enqueue(ms(0), udp(1)).unwrap();
        assert_eq!(q.enqueue(ms(0), udp(2)).unwrap_err().uid, 2);
        assert_eq!(q.stats().dropped_pkts, 1);
    }
}
