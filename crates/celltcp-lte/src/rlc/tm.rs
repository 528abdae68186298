//! Transparent mode, TS 36.322 §4.2.1.1 and §5.1.1.
//!
//! A TMD PDU is the SDU itself: no header, no segmentation, no concatenation (§6.2.1.2). An SDU
//! goes out only in a grant at least as large as it; the receiver delivers every PDU at once.

use std::collections::VecDeque;
use std::fmt::Debug;

use celltcp_engine::SimTime;

use super::{BufferStatus, DataPdu, RlcPdu, RlcStats, Segment, TmConfig};

/// A TM entity: a transmitting half (SDU queue) and a receiving half (pass-through).
#[derive(Clone, Debug)]
pub struct TmEntity<P> {
    q: VecDeque<(P, u32, SimTime)>,
    queued_bytes: u64,
    limit_bytes: u64,
    stats: RlcStats,
}

impl<P: Copy + Debug> TmEntity<P> {
    /// An empty entity.
    pub fn new(cfg: &TmConfig) -> Self {
        TmEntity {
            q: VecDeque::new(),
            queued_bytes: 0,
            limit_bytes: cfg.tx_buffer_bytes,
            stats: RlcStats::default(),
        }
    }

    /// Drop-tail enqueue (§5.1.1.1).
    pub fn on_sdu(&mut self, now: SimTime, sdu: P, bytes: u32) -> Result<(), P> {
        debug_assert!(bytes > 0, "RLC SDUs are at least one byte");
        if bytes == 0 || self.queued_bytes + bytes as u64 > self.limit_bytes {
            self.stats.sdus_dropped_buffer += 1;
            self.stats.bytes_dropped_buffer += bytes as u64;
            return Err(sdu);
        }
        self.q.push_back((sdu, bytes, now));
        self.queued_bytes += bytes as u64;
        self.stats.sdus_in += 1;
        Ok(())
    }

    /// Queued bytes (no header in TM). O(1).
    /// Bytes waiting in the transmission buffer (the occupancy metric).
    pub fn queued_bytes(&self) -> u32 {
        self.buffer_status().new_tx_bytes
    }

    /// `buffer_status().total() > 0`.
    #[inline]
    pub fn has_pending(&self) -> bool {
        self.queued_bytes > 0
    }

    pub fn buffer_status(&self) -> BufferStatus {
        BufferStatus {
            new_tx_bytes: self.queued_bytes.min(u32::MAX as u64) as u32,
            retx_bytes: 0,
            status_bytes: 0,
            hol_sdu_arrival: self.q.front().map(|s| s.2),
        }
    }

    /// The head SDU as a TMD PDU if it fits in `bytes` (§5.1.1.1: no segmentation).
    pub fn on_tx_opportunity(&mut self, _now: SimTime, bytes: u32) -> Option<RlcPdu<P>> {
        let &(sdu, len, _) = self.q.front()?;
        if len > bytes {
            return None;
        }
        self.q.pop_front();
        self.queued_bytes -= len as u64;
        self.stats.pdus_tx += 1;
        self.stats.bytes_tx += len as u64;
        let seq = self.stats.pdus_tx;
        Some(RlcPdu::Data(DataPdu {
            sn: 0,
            so: 0,
            is_resegment: false,
            last_segment: true,
            poll: false,
            segments: vec![Segment {
                sdu,
                sdu_bytes: len,
                offset: 0,
                len,
                sdu_seq: seq,
            }],
            header_bytes: 0,
        }))
    }

    /// Deliver a TMD PDU as it is (§5.1.1.2). STATUS PDUs do not exist in TM and are ignored.
    pub fn on_rx_pdu(&mut self, _now: SimTime, pdu: RlcPdu<P>, delivered: &mut Vec<P>) {
        if let RlcPdu::Data(d) = pdu {
            for s in d.segments {
                self.stats.sdus_delivered += 1;
                self.stats.bytes_delivered += s.len as u64;
                delivered.push(s.sdu);
            }
        }
    }

    /// TM has no timers.
    pub fn next_deadline(&self) -> Option<SimTime> {
        None
    }

    /// TM has no timers.
    pub fn on_timeout(&mut self, _now: SimTime, _delivered: &mut Vec<P>) {}

    /// §5.3: drop queued SDUs matching `pred`.
    pub fn discard_untransmitted(&mut self, mut pred: impl FnMut(&P) -> bool) -> Vec<P> {
        let mut out = Vec::new();
        let mut removed = 0u64;
        self.q.retain(|&(sdu, len, _)| {
            if pred(&sdu) {
                out.push(sdu);
                removed += len as u64;
                false
            } else {
                true
            }
        });
        self.queued_bytes -= removed;
        out
    }

    /// TM never gives up on an SDU.
    pub fn take_lost(&mut self, _out: &mut Vec<P>) {}

    /// Counters.
    pub fn stats(&self) -> RlcStats {
        RlcStats {
            tx_buffer_bytes: self.queued_bytes,
            ..self.stats
        }
    }

    /// Queued SDUs in order.
    pub fn untransmitted_and_unacked(&self) -> Vec<P> {
        self.q.iter().map(|s| s.0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(limit: u64) -> TmEntity<u32> {
        TmEntity::new(&TmConfig {
            tx_buffer_bytes: limit,
        })
    }

    // §5.1.1.1: no header, no segmentation; an SDU waits for a grant it fits in.
    #[test]
    fn tm_sends_whole_sdus_without_header() {
        let mut tm = entity(10_000);
        let t = SimTime::ZERO;
        tm.on_sdu(t, 1, 100).unwrap();
        tm.on_sdu(t, 2, 50).unwrap();
        assert_eq!(tm.buffer_status().new_tx_bytes, 150);
        assert!(tm.on_tx_opportunity(t, 99).is_none());
        let pdu = tm.on_tx_opportunity(t, 120).unwrap();
        assert_eq!(pdu.bytes(), 100);
        let mut out = vec![];
        let mut rx = entity(0);
        rx.on_rx_pdu(t, pdu, &mut out);
        assert_eq!(out, vec![1]);
        assert_eq!(tm.buffer_status().new_tx_bytes, 50);
    }

    #[test]
    fn tm_drop_tail_and_discard() {
        let mut tm = entity(250);
        let t = SimTime::ZERO;
        tm.on_sdu(t, 1, 100).unwrap();
        tm.on_sdu(t, 2, 100).unwrap();
        assert_eq!(tm.on_sdu(t, 3, 100), Err(3));
        assert_eq!(tm.stats().sdus_dropped_buffer, 1);
        assert_eq!(tm.discard_untransmitted(|&p| p == 1), vec![1]);
        assert_eq!(tm.stats().tx_buffer_bytes, 100);
        assert_eq!(tm.untransmitted_and_unacked(), vec![2]);
    }
}
