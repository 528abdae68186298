//! Acknowledged mode, TS 36.322 §4.2.1.3, §5.1.3, §5.2, with the 10-bit SN (AM_Window_Size 512).
//!
//! Transmitting side (§5.1.3.1): new AMD PDUs take SN = VT(S) while VT(A) ≤ SN < VT(MS)
//! (window stall otherwise); STATUS PDUs acknowledge and NACK PDUs or byte ranges of them
//! (§5.2.1); NACKed parts are retransmitted before new data, re-segmented into AMD PDU segments
//! when the grant is too small (§5.2.1); RETX_COUNT per PDU reaching maxRetxThreshold raises
//! radio link failure. Polling (§5.2.2): every pollPDU PDUs or pollByte bytes, when both buffers
//! empty, on window stall, and on t-PollRetransmit expiry.
//!
//! Receiving side (§5.1.3.2): window VR(R) ≤ SN < VR(MR), byte-segment duplicate discard,
//! VR(H), VR(MS), t-Reordering, in-order reassembly, and STATUS reporting (§5.2.3) triggered by
//! polls (delayed while the polled SN is not yet below VR(MS)) and by t-Reordering expiry,
//! rate-limited by t-StatusProhibit and truncated to the grant.
//!
//! Simplification: SDUs are reassembled from completely received AMD PDUs only; the spec also
//! delivers SDUs that end inside the in-sequence prefix of a partly received PDU at VR(R)
//! (§5.1.3.2.3), which only saves the wait for the rest of that PDU.

use std::collections::VecDeque;
use std::fmt::Debug;

use celltcp_engine::{SimDuration, SimTime};

use super::{
    expired, li_bytes, min_deadline, AmConfig, BufferStatus, DataPdu, Nack, Reassembler, RlcPdu,
    RlcStats, Segment, StatusPdu, TxQueue, AMD_HEADER_BYTES, AMD_SEGMENT_HEADER_BYTES,
    AM_SN_MODULUS, AM_WINDOW_SIZE, LI_MAX_BYTES, SO_END_LAST_BYTE, STATUS_FIXED_BITS,
    STATUS_NACK_BITS, STATUS_SO_BITS,
};

const W: u16 = AM_WINDOW_SIZE;

/// SN distance from `from` up to `to` modulo 1024 (§7.1 modulus arithmetic).
fn dist(from: u16, to: u16) -> u16 {
    to.wrapping_sub(from) & (AM_SN_MODULUS - 1)
}

fn add(sn: u16, k: u16) -> u16 {
    sn.wrapping_add(k) & (AM_SN_MODULUS - 1)
}

/// The pieces of data field `segs` (starting at data field offset 0) inside `[from, to)`.
fn slice<P: Copy>(segs: &[Segment<P>], from: u32, to: u32) -> Vec<Segment<P>> {
    let mut out = Vec::new();
    let mut pos = 0u32;
    for s in segs {
        let (s0, s1) = (pos, pos + s.len);
        pos = s1;
        if s1 <= from {
            continue;
        }
        if s0 >= to {
            break;
        }
        let (a, b) = (s0.max(from), s1.min(to));
        out.push(Segment {
            offset: s.offset + (a - s0),
            len: b - a,
            ..*s
        });
    }
    out
}

/// A transmitted AMD PDU awaiting acknowledgement (transmission/retransmission buffer).
#[derive(Clone, Debug)]
struct TxPdu<P> {
    segments: Vec<Segment<P>>,
    data_bytes: u32,
    acked: bool,
    /// RETX_COUNT (§7.1); `None` until first considered for retransmission.
    retx_count: Option<u32>,
    /// Byte ranges `[a, b)` of the data field pending retransmission, sorted and disjoint.
    pending: Vec<(u32, u32)>,
}

impl<P> TxPdu<P> {
    /// Bytes this PDU adds to the retransmission buffer status.
    fn retx_estimate(&self) -> u32 {
        if self.pending.is_empty() {
            return 0;
        }
        let bytes: u32 = self.pending.iter().map(|(a, b)| b - a).sum();
        let lis = li_bytes(self.segments.len() as u32 - 1);
        if self.pending[..] == [(0, self.data_bytes)] {
            bytes + AMD_HEADER_BYTES + lis
        } else {
            bytes + (AMD_SEGMENT_HEADER_BYTES + lis) * self.pending.len() as u32
        }
    }

    fn add_pending(&mut self, a: u32, b: u32) {
        let mut v: Vec<(u32, u32)> = Vec::with_capacity(self.pending.len() + 1);
        let (mut a, mut b) = (a, b);
        for &(x, y) in &self.pending {
            if y < a || x > b {
                v.push((x, y));
            } else {
                a = a.min(x);
                b = b.max(y);
            }
        }
        v.push((a, b));
        v.sort_unstable();
        self.pending = v;
    }
}

/// A PDU in the reception buffer: byte ranges received so far.
#[derive(Clone, Debug)]
struct RxPdu<P> {
    /// `(start, end, pieces)`, end exclusive, sorted, disjoint, adjacent ranges merged.
    parts: Vec<(u32, u32, Vec<Segment<P>>)>,
    /// Data field length, known once the last segment (LSF = 1) or a whole PDU arrived.
    total: Option<u32>,
}

impl<P: Copy> RxPdu<P> {
    fn complete(&self) -> bool {
        matches!(self.total, Some(t) if self.parts.len() == 1 && self.parts[0].0 == 0 && self.parts[0].1 == t)
    }

    /// Store the new bytes of a segment at `so`; false when all of them were received already
    /// (§5.1.3.2.2 duplicate byte segments are discarded).
    fn insert(&mut self, so: u32, pieces: &[Segment<P>], last: bool) -> bool {
        let len: u32 = pieces.iter().map(|s| s.len).sum();
        let end = so + len;
        let mut fresh = Vec::new();
        let mut cur = so;
        for &(a, b, _) in &self.parts {
            if b <= cur {
                continue;
            }
            if a >= end {
                break;
            }
            if a > cur {
                fresh.push((cur, a));
            }
            cur = cur.max(b);
        }
        if cur < end {
            fresh.push((cur, end));
        }
        if last {
            self.total = Some(end);
        }
        if fresh.is_empty() {
            return false;
        }
        for (a, b) in fresh {
            let part = slice(pieces, a - so, b - so);
            let pos = self.parts.partition_point(|p| p.0 < a);
            self.parts.insert(pos, (a, b, part));
        }
        // merge adjacent ranges
        let mut merged: Vec<(u32, u32, Vec<Segment<P>>)> = Vec::with_capacity(self.parts.len());
        for p in self.parts.drain(..) {
            match merged.last_mut() {
                Some(m) if m.1 == p.0 => {
                    m.1 = p.1;
                    m.2.extend(p.2);
                }
                _ => merged.push(p),
            }
        }
        self.parts = merged;
        true
    }

    /// Missing byte ranges as (SOstart, SOend) inclusive, SOend = 0x7FFF when open (§5.2.3).
    fn gaps(&self, out: &mut Vec<(u32, u32)>) {
        let mut cur = 0;
        for &(a, b, _) in &self.parts {
            if a > cur {
                out.push((cur, a - 1));
            }
            cur = b;
        }
        match self.total {
            Some(t) if cur < t => out.push((cur, t - 1)),
            None => out.push((cur, SO_END_LAST_BYTE)),
            _ => {}
        }
    }
}

/// An AM entity: transmitting and receiving side of one bearer end (§4.2.1.3).
#[derive(Clone, Debug)]
pub struct AmEntity<P> {
    cfg: AmConfig,
    tx: TxQueue<P>,
    // ---- transmitting side (§7.1)
    /// VT(A): SN of the next PDU whose acknowledgement is awaited in sequence.
    vt_a: u16,
    /// VT(S): SN of the next new AMD PDU.
    vt_s: u16,
    /// POLL_SN: VT(S) − 1 when the last poll was sent.
    poll_sn: u16,
    pdu_without_poll: u32,
    byte_without_poll: u64,
    /// Transmitted PDUs; index i holds SN = VT(A) + i.
    tx_buf: VecDeque<TxPdu<P>>,
    /// SNs with bytes pending retransmission, in the order they were NACKed.
    retx_queue: VecDeque<u16>,
    retx_bytes: u32,
    poll_pending: bool,
    t_poll_retransmit: Option<SimTime>,
    rlf: bool,
    // ---- receiving side (§7.1)
    /// VR(R): SN after the last in-sequence completely received PDU.
    vr_r: u16,
    /// VR(X): SN following the one that triggered t-Reordering.
    vr_x: u16,
    /// VR(MS): highest SN ACK_SN may take.
    vr_ms: u16,
    /// VR(H): SN following the highest SN received.
    vr_h: u16,
    /// Reception buffer; index i holds SN = VR(R) + i.
    rx_buf: VecDeque<Option<RxPdu<P>>>,
    t_reordering: Option<SimTime>,
    status_triggered: bool,
    /// Polled SNs whose STATUS trigger is delayed (§5.2.3).
    delayed_polls: Vec<u16>,
    t_status_prohibit: Option<SimTime>,
    reasm: Reassembler<P>,
    stats: RlcStats,
    /// Unused by AM (never gives up an SDU), kept so `take_lost` has a uniform shape.
    lost: Vec<P>,
}

impl<P: Copy + Debug> AmEntity<P> {
    /// A fresh entity, all state variables 0 (§7.1).
    pub fn new(cfg: &AmConfig) -> Self {
        AmEntity {
            cfg: cfg.clone(),
            tx: TxQueue::new(cfg.tx_buffer_bytes),
            vt_a: 0,
            vt_s: 0,
            poll_sn: 0,
            pdu_without_poll: 0,
            byte_without_poll: 0,
            tx_buf: VecDeque::new(),
            retx_queue: VecDeque::new(),
            retx_bytes: 0,
            poll_pending: false,
            t_poll_retransmit: None,
            rlf: false,
            vr_r: 0,
            vr_x: 0,
            vr_ms: 0,
            vr_h: 0,
            rx_buf: VecDeque::new(),
            t_reordering: None,
            status_triggered: false,
            delayed_polls: Vec::new(),
            t_status_prohibit: None,
            reasm: Reassembler::new(),
            stats: RlcStats::default(),
            lost: Vec::new(),
        }
    }

    /// (VT(A), VT(S)), for tests and traces.
    pub fn vt(&self) -> (u16, u16) {
        (self.vt_a, self.vt_s)
    }

    /// (VR(R), VR(MS), VR(H)), for tests and traces.
    pub fn vr(&self) -> (u16, u16, u16) {
        (self.vr_r, self.vr_ms, self.vr_h)
    }

    /// Drop-tail enqueue (§5.1.3.1.1).
    pub fn on_sdu(&mut self, now: SimTime, sdu: P, bytes: u32) -> Result<(), P> {
        self.tx.push(now, sdu, bytes)
    }

    fn window_stalled(&self) -> bool {
        dist(self.vt_a, self.vt_s) >= W
    }

    /// New data (0 while the window is stalled), pending retransmissions and a due STATUS PDU.
    pub fn buffer_status(&self) -> BufferStatus {
        let status_bytes = if self.status_triggered && self.t_status_prohibit.is_none() {
            self.build_status(u32::MAX).map_or(0, |s| s.bytes)
        } else {
            0
        };
        BufferStatus {
            new_tx_bytes: if self.window_stalled() {
                0
            } else {
                self.tx.pdu_estimate(AMD_HEADER_BYTES)
            },
            retx_bytes: self.retx_bytes,
            status_bytes,
            hol_sdu_arrival: self.tx.hol_arrival(),
        }
    }

    /// §5.2.3 STATUS PDU construction: NACKs for SNs in [VR(R), VR(MS)) not completely received,
    /// in order, as many as fit in `max_bytes`; ACK_SN is the first SN not reported.
    fn build_status(&self, max_bytes: u32) -> Option<StatusPdu> {
        if max_bytes < STATUS_FIXED_BITS.div_ceil(8) {
            return None;
        }
        let mut nacks = Vec::new();
        let mut gaps = Vec::new();
        let mut bits = STATUS_FIXED_BITS;
        let mut ack_sn = self.vr_ms;
        for k in 0..dist(self.vr_r, self.vr_ms) {
            let sn = add(self.vr_r, k);
            let before = nacks.len();
            let mut more = 0;
            match self.rx_buf.get(k as usize).and_then(|e| e.as_ref()) {
                Some(r) if r.complete() => continue,
                Some(r) => {
                    gaps.clear();
                    r.gaps(&mut gaps);
                    for &g in &gaps {
                        nacks.push(Nack { sn, so: Some(g) });
                        more += STATUS_NACK_BITS + STATUS_SO_BITS;
                    }
                }
                None => {
                    nacks.push(Nack { sn, so: None });
                    more += STATUS_NACK_BITS;
                }
            }
            if (bits + more).div_ceil(8) > max_bytes {
                nacks.truncate(before);
                ack_sn = sn;
                break;
            }
            bits += more;
        }
        Some(StatusPdu {
            ack_sn,
            nacks,
            bytes: bits.div_ceil(8),
        })
    }

    /// STATUS first (§5.2.3), then retransmissions (§5.2.1), then new data (§5.1.3.1.1).
    pub fn on_tx_opportunity(&mut self, now: SimTime, bytes: u32) -> Option<RlcPdu<P>> {
        if expired(self.t_status_prohibit, now) {
            self.t_status_prohibit = None;
        }
        if self.status_triggered && self.t_status_prohibit.is_none() {
            let st = self.build_status(bytes)?;
            self.status_triggered = false;
            if self.cfg.t_status_prohibit > SimDuration::ZERO {
                self.t_status_prohibit = Some(now + self.cfg.t_status_prohibit);
            }
            self.stats.status_tx += 1;
            self.stats.bytes_tx += st.bytes as u64;
            return Some(RlcPdu::Status(st));
        }
        while let Some(&sn) = self.retx_queue.front() {
            let k = dist(self.vt_a, sn) as usize;
            if k >= self.tx_buf.len() || self.tx_buf[k].acked || self.tx_buf[k].pending.is_empty() {
                self.retx_queue.pop_front();
                continue;
            }
            let mut pdu = self.build_retx(k, sn, bytes)?;
            if self.tx_buf[k].pending.is_empty() {
                self.retx_queue.pop_front();
            }
            // §5.2.2.1: poll when nothing else is left to send or no new PDU can be sent.
            if self.poll_pending
                || (self.tx.is_empty() && self.retx_bytes == 0)
                || self.window_stalled()
            {
                self.set_poll(now, &mut pdu);
            }
            self.stats.pdus_tx += 1;
            self.stats.pdus_retx += 1;
            self.stats.bytes_tx += (pdu.header_bytes + pdu.data_bytes()) as u64;
            return Some(RlcPdu::Data(pdu));
        }
        if self.window_stalled() {
            return None;
        }
        let (segments, header_bytes) = self.tx.build(AMD_HEADER_BYTES, bytes)?;
        let data_bytes: u32 = segments.iter().map(|s| s.len).sum();
        self.tx_buf.push_back(TxPdu {
            segments: segments.clone(),
            data_bytes,
            acked: false,
            retx_count: None,
            pending: Vec::new(),
        });
        let mut pdu = DataPdu {
            sn: self.vt_s,
            so: 0,
            is_resegment: false,
            last_segment: true,
            poll: false,
            segments,
            header_bytes,
        };
        self.vt_s = add(self.vt_s, 1);
        // §5.2.2.1 polling counters.
        self.pdu_without_poll += 1;
        self.byte_without_poll += data_bytes as u64;
        if self.poll_pending
            || self.pdu_without_poll >= self.cfg.poll_pdu
            || self.byte_without_poll >= self.cfg.poll_byte
            || (self.tx.is_empty() && self.retx_bytes == 0)
            || self.window_stalled()
        {
            self.set_poll(now, &mut pdu);
        }
        self.stats.pdus_tx += 1;
        self.stats.bytes_tx += (header_bytes + data_bytes) as u64;
        Some(RlcPdu::Data(pdu))
    }

    /// §5.2.2.1: set P, reset the counters, POLL_SN = VT(S) − 1, (re)start t-PollRetransmit.
    fn set_poll(&mut self, now: SimTime, pdu: &mut DataPdu<P>) {
        pdu.poll = true;
        self.pdu_without_poll = 0;
        self.byte_without_poll = 0;
        self.poll_pending = false;
        self.poll_sn = self.vt_s.wrapping_sub(1) & (AM_SN_MODULUS - 1);
        self.t_poll_retransmit = Some(now + self.cfg.t_poll_retransmit);
    }

    /// Retransmit the first pending range of PDU `k`: whole if it is the whole PDU and fits,
    /// otherwise as an AMD PDU segment cut to the grant (§5.2.1).
    fn build_retx(&mut self, k: usize, sn: u16, bytes: u32) -> Option<DataPdu<P>> {
        let t = &self.tx_buf[k];
        let (a, b) = t.pending[0];
        let full_header = AMD_HEADER_BYTES + li_bytes(t.segments.len() as u32 - 1);
        let old_est = t.retx_estimate();
        let pdu = if a == 0 && b == t.data_bytes && full_header + t.data_bytes <= bytes {
            DataPdu {
                sn,
                so: 0,
                is_resegment: false,
                last_segment: true,
                poll: false,
                segments: t.segments.clone(),
                header_bytes: full_header,
            }
        } else {
            let mut out: Vec<Segment<P>> = Vec::new();
            let mut data = 0u32;
            let mut pos = 0u32;
            for s in &t.segments {
                let (s0, s1) = (pos, pos + s.len);
                pos = s1;
                if s1 <= a {
                    continue;
                }
                if s0 >= b {
                    break;
                }
                if out.last().is_some_and(|l| l.len > LI_MAX_BYTES) {
                    break;
                }
                let hdr = AMD_SEGMENT_HEADER_BYTES + li_bytes(out.len() as u32);
                if hdr + data >= bytes {
                    break;
                }
                let (start, end) = (s0.max(a), s1.min(b));
                let take = (end - start).min(bytes - hdr - data);
                out.push(Segment {
                    offset: s.offset + (start - s0),
                    len: take,
                    ..*s
                });
                data += take;
                if take < end - start {
                    break;
                }
            }
            if out.is_empty() {
                return None;
            }
            let header_bytes = AMD_SEGMENT_HEADER_BYTES + li_bytes(out.len() as u32 - 1);
            DataPdu {
                sn,
                so: a,
                is_resegment: true,
                last_segment: a + data == t.data_bytes,
                poll: false,
                segments: out,
                header_bytes,
            }
        };
        let sent = pdu.data_bytes();
        let t = &mut self.tx_buf[k];
        if a + sent >= b {
            t.pending.remove(0);
        } else {
            t.pending[0].0 = a + sent;
        }
        self.retx_bytes = self.retx_bytes - old_est + t.retx_estimate();
        Some(pdu)
    }

    /// §5.2.1: consider bytes `[a, b)` of PDU `k` for retransmission, counting RETX_COUNT.
    fn consider_for_retx(&mut self, k: usize, a: u32, b: u32) {
        let max = self.cfg.max_retx_threshold;
        let sn = add(self.vt_a, k as u16);
        let t = &mut self.tx_buf[k];
        if t.acked || a >= b {
            return;
        }
        let count = match t.retx_count {
            None => 0,
            Some(c) if t.pending.is_empty() => c + 1,
            Some(c) => c,
        };
        t.retx_count = Some(count);
        if count >= max {
            self.rlf = true;
        }
        let old_est = t.retx_estimate();
        let was_idle = t.pending.is_empty();
        t.add_pending(a, b.min(t.data_bytes));
        self.retx_bytes = self.retx_bytes - old_est + t.retx_estimate();
        if was_idle {
            self.retx_queue.push_back(sn);
        }
    }

    fn ack(&mut self, k: usize) {
        let t = &mut self.tx_buf[k];
        if !t.acked {
            t.acked = true;
            self.retx_bytes -= t.retx_estimate();
            t.pending.clear();
        }
    }

    /// STATUS PDU reception (§5.2.1, §5.2.2.2).
    fn on_status(&mut self, st: &StatusPdu) {
        let ack_rel = dist(self.vt_a, st.ack_sn);
        if ack_rel > dist(self.vt_a, self.vt_s) {
            return; // stale or invalid ACK_SN
        }
        // §5.2.2.2: a STATUS covering POLL_SN stops t-PollRetransmit.
        if self.t_poll_retransmit.is_some() && dist(self.vt_a, self.poll_sn) < ack_rel {
            self.t_poll_retransmit = None;
        }
        let mut nacks: Vec<(u16, &Nack)> = st
            .nacks
            .iter()
            .map(|n| (dist(self.vt_a, n.sn), n))
            .filter(|(r, _)| *r < ack_rel)
            .collect();
        nacks.sort_by_key(|(r, n)| (*r, n.so.map_or(0, |s| s.0)));
        let mut ni = 0;
        for k in 0..ack_rel {
            let mut nacked = false;
            while ni < nacks.len() && nacks[ni].0 == k {
                nacked = true;
                let len = self.tx_buf[k as usize].data_bytes;
                let (a, b) = match nacks[ni].1.so {
                    None => (0, len),
                    Some((s, e)) if e == SO_END_LAST_BYTE || e >= len => (s, len),
                    Some((s, e)) => (s, e + 1),
                };
                self.consider_for_retx(k as usize, a, b);
                ni += 1;
            }
            if !nacked {
                self.ack(k as usize);
            }
        }
        // VT(A) = first SN not positively acknowledged.
        while self.tx_buf.front().is_some_and(|t| t.acked) {
            self.tx_buf.pop_front();
            self.vt_a = add(self.vt_a, 1);
        }
    }

    fn complete_at(&self, k: u16) -> bool {
        matches!(self.rx_buf.get(k as usize), Some(Some(r)) if r.complete())
    }

    /// Advance VR(MS) from index `k` (relative to VR(R)) over completely received PDUs.
    fn advance_vr_ms_from(&mut self, mut k: u16) {
        while self.complete_at(k) {
            k += 1;
        }
        self.vr_ms = add(self.vr_r, k);
    }

    fn trigger_status(&mut self, now: SimTime) {
        self.status_triggered = true;
        if expired(self.t_status_prohibit, now) {
            self.t_status_prohibit = None;
        }
    }

    /// §5.2.3: a delayed poll fires once SN < VR(MS) or SN ≥ VR(MR).
    fn check_delayed_polls(&mut self, now: SimTime) {
        if self.delayed_polls.is_empty() {
            return;
        }
        let (vr_r, ms) = (self.vr_r, dist(self.vr_r, self.vr_ms));
        let before = self.delayed_polls.len();
        self.delayed_polls.retain(|&x| {
            let r = dist(vr_r, x);
            !(r < ms || r >= W)
        });
        if self.delayed_polls.len() != before {
            self.trigger_status(now);
        }
    }

    /// AMD PDU (segment) reception (§5.1.3.2.2, §5.1.3.2.3) and STATUS reception.
    pub fn on_rx_pdu(&mut self, now: SimTime, pdu: RlcPdu<P>, delivered: &mut Vec<P>) {
        let pdu = match pdu {
            RlcPdu::Status(st) => return self.on_status(&st),
            RlcPdu::Data(d) => d,
        };
        let x = pdu.sn & (AM_SN_MODULUS - 1);
        let rel = dist(self.vr_r, x);
        let so = if pdu.is_resegment { pdu.so } else { 0 };
        let last = !pdu.is_resegment || pdu.last_segment;
        let mut discarded = rel >= W || pdu.data_bytes() == 0;
        if !discarded {
            let idx = rel as usize;
            if self.rx_buf.len() <= idx {
                self.rx_buf.resize_with(idx + 1, || None);
            }
            let entry = self.rx_buf[idx].get_or_insert_with(|| RxPdu {
                parts: Vec::new(),
                total: None,
            });
            discarded = !entry.insert(so, &pdu.segments, last);
        }
        if !discarded {
            // §5.1.3.2.3
            if rel >= dist(self.vr_r, self.vr_h) {
                self.vr_h = add(x, 1);
            }
            let ms = dist(self.vr_r, self.vr_ms);
            if self.complete_at(ms) {
                self.advance_vr_ms_from(ms);
            }
            if rel == 0 && self.complete_at(0) {
                while matches!(self.rx_buf.front(), Some(Some(r)) if r.complete()) {
                    let r = self.rx_buf.pop_front().flatten().expect("checked");
                    for (_, _, pieces) in &r.parts {
                        for s in pieces {
                            self.reasm.push(s, delivered, &mut self.lost);
                        }
                    }
                    self.vr_r = add(self.vr_r, 1);
                }
                if dist(self.vr_r, self.vr_ms) > W {
                    self.advance_vr_ms_from(0);
                }
            }
            if self.t_reordering.is_some() {
                let xr = dist(self.vr_r, self.vr_x);
                if xr == 0 || xr > W {
                    self.t_reordering = None;
                }
            }
            self.maybe_start_reordering(now);
        }
        if pdu.poll {
            let r = dist(self.vr_r, x);
            if discarded || r < dist(self.vr_r, self.vr_ms) || r >= W {
                self.trigger_status(now);
            } else if !self.delayed_polls.contains(&x) {
                self.delayed_polls.push(x);
            }
        }
        self.check_delayed_polls(now);
    }

    fn maybe_start_reordering(&mut self, now: SimTime) {
        if self.t_reordering.is_none() && dist(self.vr_r, self.vr_h) > 0 {
            self.t_reordering = Some(now + self.cfg.t_reordering);
            self.vr_x = self.vr_h;
        }
    }

    /// Earliest of t-PollRetransmit, t-Reordering and (while a STATUS waits) t-StatusProhibit.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let prohibit = if self.status_triggered {
            self.t_status_prohibit
        } else {
            None
        };
        min_deadline(&[self.t_poll_retransmit, self.t_reordering, prohibit])
    }

    /// Timer expiries (§5.1.3.2.4, §5.2.2.3, §5.2.3).
    pub fn on_timeout(&mut self, now: SimTime, _delivered: &mut Vec<P>) {
        if expired(self.t_status_prohibit, now) {
            self.t_status_prohibit = None;
        }
        if expired(self.t_reordering, now) {
            // §5.1.3.2.4: VR(MS) = first SN ≥ VR(X) not completely received; STATUS triggered.
            self.t_reordering = None;
            let k = dist(self.vr_r, self.vr_x);
            self.advance_vr_ms_from(if k > W { 0 } else { k });
            if dist(self.vr_r, self.vr_h) > dist(self.vr_r, self.vr_ms) {
                self.t_reordering = Some(now + self.cfg.t_reordering);
                self.vr_x = self.vr_h;
            }
            self.trigger_status(now);
            self.check_delayed_polls(now);
        }
        if expired(self.t_poll_retransmit, now) {
            // §5.2.2.3
            self.t_poll_retransmit = None;
            if (self.tx.is_empty() && self.retx_bytes == 0) || self.window_stalled() {
                if let Some(last) = self.tx_buf.len().checked_sub(1) {
                    let k = if self.tx_buf[last].acked { 0 } else { last };
                    let len = self.tx_buf[k].data_bytes;
                    self.consider_for_retx(k, 0, len);
                }
            }
            self.poll_pending = true;
        }
    }

    /// §5.3: drop queued SDUs not yet mapped to any PDU for which `pred` holds.
    pub fn discard_untransmitted(&mut self, pred: impl FnMut(&P) -> bool) -> Vec<P> {
        self.tx.discard(pred)
    }

    /// AM never gives up an SDU (maxRetxThreshold raises radio link failure instead).
    pub fn take_lost(&mut self, out: &mut Vec<P>) {
        out.append(&mut self.lost);
    }

    /// True once a PDU's RETX_COUNT reached maxRetxThreshold (§5.2.1). The entity keeps
    /// working; RRC (the caller) decides what to do.
    pub fn radio_link_failure(&self) -> bool {
        self.rlf
    }

    /// Counters.
    pub fn stats(&self) -> RlcStats {
        RlcStats {
            sdus_in: self.tx.sdus_in,
            sdus_dropped_buffer: self.tx.sdus_dropped,
            bytes_dropped_buffer: self.tx.bytes_dropped,
            sdus_delivered: self.reasm.sdus_delivered,
            bytes_delivered: self.reasm.bytes_delivered,
            sdus_lost: self.reasm.sdus_lost,
            tx_buffer_bytes: self.tx.unsent_bytes(),
            ..self.stats
        }
    }

    /// SDUs not yet fully acknowledged, in order: those with a piece in an unacknowledged PDU,
    /// then those still queued.
    pub fn untransmitted_and_unacked(&self) -> Vec<P> {
        let mut out = Vec::new();
        let mut last = None;
        let in_flight = self
            .tx_buf
            .iter()
            .filter(|t| !t.acked)
            .flat_map(|t| t.segments.iter().map(|s| (s.sdu_seq, s.sdu)));
        for (seq, sdu) in in_flight.chain(self.tx.iter()) {
            if last != Some(seq) {
                out.push(sdu);
                last = Some(seq);
            }
        }
        out
    }
}
