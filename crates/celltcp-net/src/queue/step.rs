//! Step-threshold ECN marking, the "DCTCP-style" switch queue of RFC 8257 §3.1 (Alizadeh et al.,
//! SIGCOMM 2010, §3.1): an arriving packet is marked CE when the instantaneous queue holds more
//! than `K` packets; there is no averaging and no randomness.
//!
//! - Occupancy is the number of packets already queued when the packet arrives (the one being
//!   serialised is not in the queue), compared with `k` as "greater than K".
//! - Only ECN-capable packets (ECT(0), ECT(1), CE) are marked. A Not-ECT packet above K is
//!   neither marked nor dropped: it is queued as long as it fits under the hard `limit`
//!   (as with Linux `red` configured with `min = max = K` and `ecn` but without `harddrop`,
//!   and unlike RED's early drops).
//! - The hard `limit` (packets or bytes of IPv4 total length) drops whatever does not fit, as
//!   drop-tail does.

use celltcp_engine::SimTime;
use serde::{Deserialize, Serialize};

use super::{mark_ce, Dequeued, Fifo, QueueLimit, QueueStats};
use crate::packet::Packet;

/// Step-marking parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StepConfig {
    /// Marking threshold K in packets: mark when more than `k` packets are queued on arrival.
    /// RFC 8257 §3.1 / the DCTCP paper suggest about 20 packets at 1 Gbit/s and 65 at 10 Gbit/s.
    pub k: u32,
    /// Hard limit (drop-tail above it).
    pub limit: QueueLimit,
}

impl Default for StepConfig {
    fn default() -> Self {
        StepConfig {
            k: 20,
            limit: QueueLimit::Packets(100),
        }
    }
}

impl StepConfig {
    /// Checks that the limit is positive and, for a packet limit, that K is below it.
    pub fn validate(&self) -> Result<(), String> {
        super::validate_limit(self.limit)?;
        if let QueueLimit::Packets(n) = self.limit {
            if self.k >= n {
                return Err(format!(
                    "step: need k < limit, got k = {} and limit = {n} packets",
                    self.k
                ));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Step {
    pub(crate) fifo: Fifo,
    pub(crate) stats: QueueStats,
    cfg: StepConfig,
}

impl Step {
    pub fn new(cfg: StepConfig) -> Self {
        Step {
            fifo: Fifo::new(),
            stats: QueueStats::default(),
            cfg,
        }
    }

    pub fn config(&self) -> &StepConfig {
        &self.cfg
    }

    #[inline]
    pub fn enqueue(&mut self, now: SimTime, mut pkt: Packet) -> Result<(), Packet> {
        if !self.fifo.fits(self.cfg.limit, &pkt) {
            self.stats.on_drop(&pkt);
            return Err(pkt);
        }
        if self.fifo.len_pkts() > self.cfg.k as usize && mark_ce(&mut pkt) {
            self.stats.marked_pkts += 1;
        }
        self.stats.enqueued_pkts += 1;
        self.stats.enqueued_bytes += pkt.size() as u64;
        self.fifo.push(now, pkt);
        Ok(())
    }

    #[inline]
    pub fn dequeue(&mut self, now: SimTime) -> Option<Dequeued> {
        let d = self.fifo.pop(now)?;
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

    fn pkt(uid: u64, ecn: Ecn) -> Packet {
        let b = Body::Udp(UdpDatagram {
            payload_len: 1472,
            ..Default::default()
        });
        let mut p = Packet::new(
            uid,
            Ipv4::new(10, 0, 0, 1),
            Ipv4::new(10, 0, 0, 2),
            0,
            SimTime::ZERO,
            b,
        );
        p.ecn = ecn;
        p
    }

    #[test]
    fn step_marks_exactly_when_more_than_k_are_queued() {
        // RFC 8257 §3.1: instantaneous occupancy above K on arrival -> CE; at or below -> untouched.
        let mut q = Step::new(StepConfig {
            k: 3,
            limit: QueueLimit::Packets(10),
        });
        for i in 0..6 {
            q.enqueue(SimTime::ZERO, pkt(i, Ecn::Ect0)).unwrap();
        }
        // arrivals found 0,1,2,3,4,5 queued: the last two (4 and 5 > 3) are marked
        let marks: Vec<bool> = (0..6)
            .map(|_| q.dequeue(SimTime::ZERO).unwrap().pkt.ecn == Ecn::Ce)
            .collect();
        assert_eq!(marks, [false, false, false, false, true, true]);
        assert_eq!(q.stats().marked_pkts, 2);
        // after draining, marking stops again (no memory, unlike RED's average)
        q.enqueue(SimTime::ZERO, pkt(9, Ecn::Ect1)).unwrap();
        assert_eq!(q.dequeue(SimTime::ZERO).unwrap().pkt.ecn, Ecn::Ect1);
    }

    #[test]
    fn step_queues_non_ect_above_k_unmarked_and_drops_only_at_the_limit() {
        let mut q = Step::new(StepConfig {
            k: 1,
            limit: QueueLimit::Packets(4),
        });
        for i in 0..4 {
            q.enqueue(SimTime::ZERO, pkt(i, Ecn::NotEct)).unwrap();
        }
        let s = q.stats();
        assert_eq!((s.enqueued_pkts, s.dropped_pkts, s.marked_pkts), (4, 0, 0));
        // the hard limit drops, ECT or not
        assert_eq!(
            q.enqueue(SimTime::ZERO, pkt(7, Ecn::Ect0)).unwrap_err().uid,
            7
        );
        assert_eq!(q.stats().dropped_pkts, 1);
        while let Some(d) = q.dequeue(SimTime::ZERO) {
            assert_eq!(d.pkt.ecn, Ecn::NotEct);
        }
    }

    #[test]
    fn step_config_validates_k_below_limit() {
        assert!(StepConfig::default().validate().is_ok());
        let bad = StepConfig {
            k: 10,
            limit: QueueLimit::Packets(10),
        };
        assert!(bad.validate().unwrap_err().contains("k < limit"));
        assert!(StepConfig {
            k: 10,
            limit: QueueLimit::Bytes(0)
        }
        .validate()
        .is_err());
        assert!(StepConfig {
            k: 10,
            limit: QueueLimit::Bytes(15_000)
        }
        .validate()
        .is_ok());
    }
}
