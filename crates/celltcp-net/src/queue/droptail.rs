//! Drop-tail FIFO: a packet that does not fit under the limit is dropped on arrival.
//!
//! This is ns-3's `DropTailQueue` and Linux's `pfifo`/`bfifo`: the limit counts packets
//! (`pfifo`, ns-3 `MaxSize "100p"`) or bytes of IPv4 total length (`bfifo`, ns-3 `"64KB"`).

use celltcp_engine::SimTime;

use super::{Dequeued, Fifo, QueueLimit, QueueStats};
use crate::packet::Packet;

#[derive(Clone, Debug)]
pub struct DropTail {
    pub(crate) fifo: Fifo,
    pub(crate) stats: QueueStats,
    limit: QueueLimit,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> Self {
        DropTail { fifo: Fifo::new(), stats: QueueStats::default(), limit }
    }

    pub fn limit(&self) -> QueueLimit {
        self.limit
    }

    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Result<(), Packet> {
        if self.fifo.fits(self.limit, &pkt) {
            self.stats.enqueued_pkts += 1;
            self.stats.enqueued_bytes += pkt.size() as u64;
            self.fifo.push(now, pkt);
            Ok(())
        } else {
            self.stats.on_drop(&pkt);
            Err(pkt)
        }
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
    use crate::packet::{Body, Ipv4, UdpDatagram};

    fn udp(uid: u64, size: u32) -> Packet {
        let b = Body::Udp(UdpDatagram { payload_len: size - 28, ..Default::default() });
        Packet::new(uid, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0, SimTime::ZERO, b)
    }

    #[test]
    fn droptail_packet_limit_drops_the_arrival_that_overflows() {
        // pfifo: at most `limit` packets queued; the arriving packet is the one dropped.
        let mut q = DropTail::new(QueueLimit::Packets(3));
        for i in 0..3 {
            q.enqueue(SimTime::ZERO, udp(i, 1500)).unwrap();
        }
        let rejected = q.enqueue(SimTime::ZERO, udp(99, 40)).unwrap_err();
        assert_eq!(rejected.uid, 99);
        assert_eq!(q.len_pkts(), 3);
        let s = q.stats();
        assert_eq!((s.enqueued_pkts, s.dropped_pkts, s.dropped_bytes), (3, 1, 40));
        // FIFO order, and space frees up after a dequeue.
        assert_eq!(q.dequeue(SimTime::ZERO).unwrap().pkt.uid, 0);
        q.enqueue(SimTime::ZERO, udp(4, 1500)).unwrap();
    }

    #[test]
    fn droptail_byte_limit_counts_ip_total_length() {
        // bfifo: a packet is accepted only if queued bytes + its size stay within the limit.
        let mut q = DropTail::new(QueueLimit::Bytes(4000));
        q.enqueue(SimTime::ZERO, udp(0, 1500)).unwrap();
        q.enqueue(SimTime::ZERO, udp(1, 1500)).unwrap();
        assert!(q.enqueue(SimTime::ZERO, udp(2, 1500)).is_err()); // 4500 > 4000
        q.enqueue(SimTime::ZERO, udp(3, 1000)).unwrap(); // exactly 4000 fits
        assert_eq!(q.len_bytes(), 4000);
        assert!(q.enqueue(SimTime::ZERO, udp(4, 28)).is_err());
        assert_eq!(q.stats().dropped_bytes, 1528);
    }

    #[test]
    fn droptail_accumulates_sojourn() {
        // Sojourn is the time between enqueue and dequeue; the stats keep the sum.
        let mut q = DropTail::new(QueueLimit::Packets(10));
        q.enqueue(SimTime::from_millis(1), udp(0, 100)).unwrap();
        q.enqueue(SimTime::from_millis(2), udp(1, 100)).unwrap();
        q.dequeue(SimTime::from_millis(3));
        q.dequeue(SimTime::from_millis(6));
        let s = q.stats();
        assert_eq!(s.sojourn_sum_ns, 6_000_000);
        assert_eq!(s.mean_sojourn().as_nanos(), 3_000_000);
        assert!(q.dequeue(SimTime::from_millis(7)).is_none());
    }
}
