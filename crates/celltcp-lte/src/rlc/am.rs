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
    fn insert(&mut self, so: u32, pieces: Vec<Segment<P>>, last: bool) -> bool {
        let len: u32 = pieces.iter().map(|s| s.len).sum();
        let end = so + len;
        if self.parts.is_empty()
            && len > 0
            && pieces.first().is_some_and(|s| s.len > 0)
            && pieces.last().is_some_and(|s| s.len > 0)
        {
            // Nothing of this PDU was received yet (the common case): all of its bytes are
            // new, and `slice(&pieces, 0, len)` would be `pieces` itself (no empty piece at
            // either end), so they are kept without a copy.
            if last {
                self.total = Some(end);
            }
            self.parts.push((so, end, pieces));
            return true;
        }
        let pieces = &pieces[..];
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

    /// Number of missing byte ranges (what [`RxPdu::gaps`] would list).
    fn gap_count(&self) -> u32 {
        let mut n = 0;
        let mut cur = 0;
        for &(a, b, _) in &self.parts {
            n += (a > cur) as u32;
            cur = b;
        }
        match self.total {
            Some(t) if cur < t => n + 1,
            None => n + 1,
            _ => n,
        }
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
    /// SDUs whose every piece is positively acknowledged, not yet taken by the upper layer.
    delivered_tx: Vec<P>,
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
            delivered_tx: Vec::new(),
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

    /// Bytes waiting in the transmission buffer, new data whether or not the transmitting
    /// window is stalled (unlike [`Self::buffer_status`], which reports what may be sent).
    /// The retransmission buffer is [`BufferStatus::retx_bytes`].
    pub fn queued_bytes(&self) -> u32 {
        self.tx.pdu_estimate(AMD_HEADER_BYTES)
    }

    /// `buffer_status().total() > 0` without sizing the STATUS PDU (which has at least its
    /// fixed part, §6.2.1.6, whenever one is due).
    #[inline]
    pub fn has_pending(&self) -> bool {
        (self.status_triggered && self.t_status_prohibit.is_none())
            || self.retx_bytes > 0
            || (!self.window_stalled() && self.tx.pdu_estimate(AMD_HEADER_BYTES) > 0)
    }

    /// New data (0 while the window is stalled), pending retransmissions and a due STATUS PDU.
    pub fn buffer_status(&self) -> BufferStatus {
        let status_bytes = if self.status_triggered && self.t_status_prohibit.is_none() {
            self.status_bytes_needed()
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

    /// Size of the complete STATUS PDU (§6.2.1.6), without building it.
    fn status_bytes_needed(&self) -> u32 {
        let mut bits = STATUS_FIXED_BITS;
        for k in 0..dist(self.vr_r, self.vr_ms) {
            bits += match self.rx_buf.get(k as usize).and_then(|e| e.as_ref()) {
                Some(r) => r.gap_count() * (STATUS_NACK_BITS + STATUS_SO_BITS),
                None => STATUS_NACK_BITS,
            };
        }
        bits.div_ceil(8)
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
        // VT(A) = first SN not positively acknowledged. An SDU whose last piece leaves with
        // VT(A) has every piece acknowledged (its pieces are in this PDU and earlier ones): it
        // is indicated to the upper layer as delivered (§5.1.3.1.1). SDUs whose last piece sits
        // in a PDU acknowledged above a hole wait until VT(A) passes it.
        while self.tx_buf.front().is_some_and(|t| t.acked) {
            let t = self.tx_buf.pop_front().expect("front exists");
            for s in &t.segments {
                if s.offset + s.len == s.sdu_bytes {
                    self.delivered_tx.push(s.sdu);
                }
            }
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
            discarded = !entry.insert(so, pdu.segments, last);
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

    /// Re-establishment of the receiving side (§5.4): "when possible, reassemble RLC SDUs from
    /// any byte segments of AMD PDUs with SN < VR(MR) [...] and deliver all reassembled RLC
    /// SDUs to upper layer in ascending order of the RLC SN, if not delivered before; discard
    /// the remaining AMD PDUs and byte segments". The received byte ranges of the reception
    /// window (every SN in it is below VR(MR) = VR(R) + AM_Window_Size) go through reassembly
    /// in SN and byte order; an SDU whose bytes are not all there is not delivered, and not
    /// reported lost either (the peer's PDCP holds it until confirmed). Then the receiving
    /// timers stop and VR(R), VR(MR)'s base, VR(X), VR(MS), VR(H) go back to 0.
    pub fn reestablish_rx(&mut self, delivered: &mut Vec<P>) {
        let mut cut = Vec::new();
        for r in self.rx_buf.drain(..).flatten() {
            for (_, _, pieces) in &r.parts {
                for s in pieces {
                    self.reasm.push(s, delivered, &mut cut);
                }
            }
        }
        self.reasm.abandon(&mut cut);
        self.t_reordering = None;
        self.status_triggered = false;
        self.delayed_polls.clear();
        (self.vr_r, self.vr_x, self.vr_ms, self.vr_h) = (0, 0, 0, 0);
    }

    /// §5.3: drop queued SDUs not yet mapped to any PDU for which `pred` holds.
    pub fn discard_untransmitted(&mut self, pred: impl FnMut(&P) -> bool) -> Vec<P> {
        self.tx.discard(pred)
    }

    /// Moves the SDUs acknowledged since the last call into `out` (TS 36.322 §5.1.3.1.1:
    /// "indicate to upper layers successful delivery"), in SN order: PDCP releases them.
    pub fn take_delivered(&mut self, out: &mut Vec<P>) {
        out.append(&mut self.delivered_tx);
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

#[cfg(test)]
mod tests {
    use super::super::test_util::{pieces, Pair};
    use super::super::{RlcConfig, RlcEntity};
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// Polling only when the buffers empty (pollPDU/pollByte infinite), no status prohibit.
    fn quiet_cfg() -> AmConfig {
        AmConfig {
            poll_pdu: u32::MAX,
            poll_byte: u64::MAX,
            t_status_prohibit: SimDuration::ZERO,
            max_retx_threshold: 1000,
            tx_buffer_bytes: 1 << 22,
            ..AmConfig::default()
        }
    }

    /// Transmitter holding SDUs of the given sizes (ids 1, 2, …).
    fn tx_with(cfg: &AmConfig, sizes: &[u32]) -> AmEntity<u32> {
        let mut e = AmEntity::new(cfg);
        for (i, &b) in sizes.iter().enumerate() {
            e.on_sdu(t(0), i as u32 + 1, b).unwrap();
        }
        e
    }

    fn data(p: Option<RlcPdu<u32>>) -> DataPdu<u32> {
        match p {
            Some(RlcPdu::Data(d)) => d,
            other => panic!("expected a data PDU, got {other:?}"),
        }
    }

    fn status(p: Option<RlcPdu<u32>>) -> StatusPdu {
        match p {
            Some(RlcPdu::Status(s)) => s,
            other => panic!("expected a STATUS PDU, got {other:?}"),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Transmitting side: PDU formats (§6.2.1.4, §6.2.1.5)
    // ---------------------------------------------------------------------------------------

    // AMD PDU: 2-byte fixed header + 12 bits per LI. 500 + 500 + part of a third SDU in 1200:
    // header 2 + 3 = 5, data 1195 (500, 500, 195).
    #[test]
    fn am_queued_bytes_reported_while_window_stalled() {
        // TS 36.322 §5.1.3.1.1: no new AMD PDU outside the transmitting window; the data still
        // waits in the buffer, and the occupancy metric must show it.
        let sizes = vec![100u32; W as usize + 5];
        let mut e = tx_with(&quiet_cfg(), &sizes);
        for _ in 0..W {
            assert!(e.on_tx_opportunity(t(0), 2 + 100).is_some());
        }
        assert!(e.window_stalled());
        assert_eq!(e.buffer_status().new_tx_bytes, 0);
        // §6.2.1.4: one 2-byte header, 4 E+LI fields of 12 bits (6 bytes), 5 SDUs of 100 B
        assert_eq!(e.queued_bytes(), 2 + 6 + 5 * 100);
    }

    #[test]
    fn am_new_pdu_header_and_concatenation() {
        let mut e = tx_with(&quiet_cfg(), &[500, 500, 500]);
        assert_eq!(e.buffer_status().new_tx_bytes, 2 + 3 + 1500);
        let p = e.on_tx_opportunity(t(0), 1200).unwrap();
        assert_eq!(p.bytes(), 1200);
        assert_eq!(pieces(&p), vec![(1, 0, 500), (2, 0, 500), (3, 0, 195)]);
        let d = data(Some(p));
        assert_eq!((d.sn, d.header_bytes, d.is_resegment), (0, 5, false));
        assert!(!d.poll, "data is still queued, pollPDU/pollByte infinite");
        let d2 = data(e.on_tx_opportunity(t(0), 1200));
        assert_eq!(d2.sn, 1);
        assert!(d2.poll, "§5.2.2.1: buffers empty after this PDU");
        assert_eq!(e.vt(), (0, 2));
    }

    // §5.2.1 re-segmentation: a NACKed 1005-byte PDU (SDUs 500 + 500 + 5 bytes of a third)
    // retransmitted in 300-byte grants: AMD PDU segments with a 4-byte fixed header, SO, LSF on
    // the last, LIs where a segment holds two elements.
    #[test]
    fn am_resegments_retransmission_to_fit_grant() {
        let cfg = quiet_cfg();
        let mut tx = tx_with(&cfg, &[500, 500, 5]);
        let orig = tx.on_tx_opportunity(t(0), 2000).unwrap();
        assert_eq!(orig.bytes(), 2 + 3 + 1005);
        tx.on_rx_pdu(
            t(5),
            RlcPdu::Status(StatusPdu {
                ack_sn: 1,
                nacks: vec![Nack { sn: 0, so: None }],
                bytes: 4,
            }),
            &mut vec![],
        );
        assert_eq!(tx.buffer_status().retx_bytes, 1010);
        let mut rx: AmEntity<u32> = AmEntity::new(&cfg);
        let mut out = vec![];
        let mut segs = vec![];
        while let Some(p) = tx.on_tx_opportunity(t(6), 300) {
            assert!(p.bytes() <= 300);
            segs.push(data(Some(p.clone())));
            rx.on_rx_pdu(t(7), p, &mut out);
        }
        let so: Vec<u32> = segs.iter().map(|d| d.so).collect();
        // 296 + (2-byte LI: 4+2 header, 200+ ...) hand-computed:
        // seg0: [0,296) of SDU1, header 4.
        // seg1: SDU1 [296,500) = 204, LI, SDU2 [0,90): header 6, data 294.
        // seg2: SDU2 [90,386): header 4, 296.
        // seg3: SDU2 [386,500) = 114, LI, SDU3 [0,5): header 6, data 119, LSF.
        assert_eq!(so, vec![0, 296, 590, 886]);
        assert_eq!(
            segs.iter().map(|d| d.header_bytes).collect::<Vec<_>>(),
            vec![4, 6, 4, 6]
        );
        assert_eq!(
            segs.iter().map(|d| d.last_segment).collect::<Vec<_>>(),
            vec![false, false, false, true]
        );
        assert!(segs.iter().all(|d| d.is_resegment && d.sn == 0));
        assert_eq!(
            pieces(&RlcPdu::Data(segs[1].clone())),
            vec![(1, 296, 204), (2, 0, 90)]
        );
        assert_eq!(out, vec![1, 2, 3]);
        assert_eq!(tx.stats().pdus_retx, 4);
        assert_eq!(tx.buffer_status().retx_bytes, 0);
    }

    // ---------------------------------------------------------------------------------------
    // Receiving side: STATUS construction (§5.2.3, §6.2.1.6)
    // ---------------------------------------------------------------------------------------

    /// Receiver that got SN 0, 2 and the first 40 bytes of SN 3 (of 100-byte PDUs) and whose
    /// t-Reordering expired.
    fn receiver_with_holes() -> AmEntity<u32> {
        let cfg = quiet_cfg();
        let mut tx = tx_with(&cfg, &[98; 5]);
        let p: Vec<_> = (0..5)
            .map(|_| data(tx.on_tx_opportunity(t(0), 100)))
            .collect();
        let mut rx: AmEntity<u32> = AmEntity::new(&cfg);
        let mut out = vec![];
        rx.on_rx_pdu(t(1), RlcPdu::Data(p[0].clone()), &mut out);
        rx.on_rx_pdu(t(1), RlcPdu::Data(p[2].clone()), &mut out);
        let mut part = p[3].clone();
        part.is_resegment = true;
        part.last_segment = false;
        part.segments[0].len = 40;
        part.header_bytes = 4;
        rx.on_rx_pdu(t(1), RlcPdu::Data(part), &mut out);
        assert_eq!(out, vec![1]);
        assert_eq!(rx.vr(), (1, 1, 4));
        rx.on_timeout(rx.next_deadline().unwrap(), &mut out);
        assert_eq!(
            rx.vr(),
            (1, 3, 4),
            "§5.1.3.2.4: VR(MS) = first incomplete SN ≥ VR(X)"
        );
        rx
    }

    // §5.4, re-establishment of the receiving side: the SDUs that can be reassembled from the
    // AMD PDUs and byte segments in the window are delivered, in SN order: SDU 3 (SN 2, whole,
    // held behind the missing SN 1), not SDU 4 (only 40 of its 98 bytes, in a segment of SN 3);
    // nothing is reported lost (the peer's PDCP holds the rest); the state variables go to 0.
    #[test]
    fn am_reestablishment_delivers_what_it_can_reassemble() {
        let mut rx = receiver_with_holes();
        let mut out = vec![1];
        rx.reestablish_rx(&mut out);
        assert_eq!(out, vec![1, 3]);
        let mut lost = vec![];
        rx.take_lost(&mut lost);
        assert!(lost.is_empty());
        assert_eq!((rx.vr(), rx.next_deadline()), ((0, 0, 0), None));
    }

    // §5.4 "from any byte segments of AMD PDUs": SN 0 is missing and only a segment of SN 1
    // came, bytes [0, 60) of its data field, which hold SDUs 2 and 3 whole (30 bytes each) but
    // not SDU 4: re-establishment delivers 2 and 3.
    #[test]
    fn am_reestablishment_reassembles_from_byte_segments() {
        let cfg = quiet_cfg();
        let mut tx = tx_with(&cfg, &[98, 30, 30, 38]);
        let _sn0 = data(tx.on_tx_opportunity(t(0), 100));
        let sn1 = data(tx.on_tx_opportunity(t(0), 2 + 3 + 98));
        assert_eq!(pieces(&RlcPdu::Data(sn1.clone())), vec![(2, 0, 30), (3, 0, 30), (4, 0, 38)]);
        let mut seg = sn1.clone();
        seg.is_resegment = true;
        seg.last_segment = false;
        seg.segments.truncate(2);
        let mut rx: AmEntity<u32> = AmEntity::new(&cfg);
        let mut out = vec![];
        rx.on_rx_pdu(t(1), RlcPdu::Data(seg), &mut out);
        assert!(out.is_empty());
        rx.reestablish_rx(&mut out);
        assert_eq!(out, vec![2, 3]);
    }

    // §5.2.3: NACK SN 1 (whole) and SN 3 bytes 40.. (SOend = 0x7FFF, last segment unknown);
    // but only SNs below VR(MS) are reported: VR(MS) = 3, so only SN 1, and ACK_SN = 3.
    #[test]
    fn am_status_lists_missing_pdus_and_byte_ranges() {
        let mut rx = receiver_with_holes();
        let st = status(rx.on_tx_opportunity(t(40), 100));
        assert_eq!(st.ack_sn, 3);
        assert_eq!(st.nacks, vec![Nack { sn: 1, so: None }]);
        assert_eq!(st.bytes, 4); // 15 + 12 bits
                                 // After SN 4 and the rest of t-Reordering, the partial SN 3 is reported with SO.
        let mut out = vec![];
        rx.on_timeout(t(200), &mut out);
        let mut b = rx.clone();
        b.vr_ms = 5;
        b.status_triggered = true;
        let st = status(b.on_tx_opportunity(t(200), 100));
        assert_eq!(
            st.nacks,
            vec![
                Nack { sn: 1, so: None },
                Nack {
                    sn: 3,
                    so: Some((40, SO_END_LAST_BYTE))
                },
                Nack { sn: 4, so: None }
            ]
        );
        assert_eq!(st.ack_sn, 5);
        assert_eq!(st.bytes, (15u32 + 12 + 42 + 12).div_ceil(8));
    }

    // §5.2.3: entries that do not fit the grant are left out and ACK_SN is the first SN left out.
    #[test]
    fn am_status_truncated_to_grant() {
        let mut rx = receiver_with_holes();
        rx.vr_ms = 5;
        let full = rx.build_status(u32::MAX).unwrap();
        assert_eq!(full.nacks.len(), 3);
        assert_eq!(rx.buffer_status().status_bytes, full.bytes);
        let st = status(rx.on_tx_opportunity(t(40), 5));
        assert_eq!((st.ack_sn, st.nacks.len(), st.bytes), (3, 1, 4));
    }

    // ---------------------------------------------------------------------------------------
    // Polling (§5.2.2)
    // ---------------------------------------------------------------------------------------

    // pollPDU = 4: every 4th new PDU carries P while data remains queued.
    #[test]
    fn am_poll_every_poll_pdu() {
        let cfg = AmConfig {
            poll_pdu: 4,
            ..quiet_cfg()
        };
        let mut tx = tx_with(&cfg, &[98; 20]);
        let polls: Vec<bool> = (0..20)
            .map(|_| data(tx.on_tx_opportunity(t(0), 100)).poll)
            .collect();
        let at: Vec<usize> = polls
            .iter()
            .enumerate()
            .filter(|p| *p.1)
            .map(|p| p.0)
            .collect();
        assert_eq!(at, vec![3, 7, 11, 15, 19]);
        assert_eq!(tx.next_deadline(), Some(t(45)));
    }

    // pollByte = 1000: the poll goes on the PDU that brings the count to ≥ 1000 data bytes.
    #[test]
    fn am_poll_every_poll_byte() {
        let cfg = AmConfig {
            poll_byte: 1000,
            ..quiet_cfg()
        };
        let mut tx = tx_with(&cfg, &[298; 20]);
        let polls: Vec<bool> = (0..20)
            .map(|_| data(tx.on_tx_opportunity(t(0), 300)).poll)
            .collect();
        let at: Vec<usize> = polls
            .iter()
            .enumerate()
            .filter(|p| *p.1)
            .map(|p| p.0)
            .collect();
        // 298 × 4 = 1192 ≥ 1000
        assert_eq!(at, vec![3, 7, 11, 15, 19]);
    }

    // §5.2.2.3: the last PDU (the one with the poll) is lost, so no STATUS comes; on
    // t-PollRetransmit expiry VT(S) − 1 is retransmitted with a poll and everything arrives.
    #[test]
    fn am_t_poll_retransmit_recovers_lost_last_pdu() {
        let cfg = quiet_cfg();
        let mut tx = tx_with(&cfg, &[98; 3]);
        let mut rx: AmEntity<u32> = AmEntity::new(&cfg);
        let mut out = vec![];
        let p: Vec<_> = (0..3)
            .map(|_| tx.on_tx_opportunity(t(0), 100).unwrap())
            .collect();
        assert!(data(Some(p[2].clone())).poll);
        rx.on_rx_pdu(t(1), p[0].clone(), &mut out);
        rx.on_rx_pdu(t(1), p[1].clone(), &mut out);
        assert_eq!(out, vec![1, 2]);
        assert!(
            rx.on_tx_opportunity(t(1), 100).is_none(),
            "no poll seen, no STATUS"
        );
        assert_eq!(tx.next_deadline(), Some(t(45)));
        tx.on_timeout(t(45), &mut vec![]);
        assert_eq!(tx.buffer_status().retx_bytes, 100);
        let re = data(tx.on_tx_opportunity(t(45), 100));
        assert_eq!((re.sn, re.poll, re.is_resegment), (2, true, false));
        rx.on_rx_pdu(t(46), RlcPdu::Data(re), &mut out);
        assert_eq!(out, vec![1, 2, 3]);
        let st = status(rx.on_tx_opportunity(t(46), 100));
        assert_eq!((st.ack_sn, st.nacks.len()), (3, 0));
        tx.on_rx_pdu(t(47), RlcPdu::Status(st), &mut vec![]);
        assert_eq!(tx.vt(), (3, 3));
        assert_eq!(
            tx.next_deadline(),
            None,
            "§5.2.2.2: STATUS covering POLL_SN stops the timer"
        );
        assert_eq!(tx.stats().pdus_retx, 1);
    }

    // §5.2.3: with t-StatusProhibit = 10 ms and a poll in every PDU (1 PDU per ms), the receiver
    // sends at most one STATUS per 10 ms; with 0 ms it answers every poll.
    #[test]
    fn am_t_status_prohibit_limits_status_rate() {
        // Polls reach B from 2 ms on; the last two are still in flight when the loop ends.
        for (prohibit_ms, range) in [(10u64, 9..=11), (0, 97..=100)] {
            let cfg = AmConfig {
                poll_pdu: 1,
                t_status_prohibit: SimDuration::from_millis(prohibit_ms),
                ..quiet_cfg()
            };
            let mut pair = Pair::new(&RlcConfig::Am(cfg), 1, 0.0, 0.0);
            for i in 0..100u32 {
                pair.a.on_sdu(pair.now, i, 98).unwrap();
                pair.tti(100, 100);
            }
            let sent = pair.b.stats().status_tx;
            assert!(
                range.contains(&sent),
                "prohibit {prohibit_ms} ms: {sent} STATUS PDUs"
            );
        }
    }

    // ---------------------------------------------------------------------------------------
    // ARQ over a lossy channel (§5.2.1)
    // ---------------------------------------------------------------------------------------

    // Every SDU is delivered exactly once and in order under random loss of data and STATUS
    // PDUs, 0–30 %, with grants that force segmentation and re-segmentation.
    #[test]
    fn am_delivers_every_sdu_once_in_order_under_loss() {
        for seed in 0..10u64 {
            for loss in [0.0, 0.05, 0.1, 0.2, 0.3] {
                let cfg = AmConfig {
                    tx_buffer_bytes: 1 << 24,
                    max_retx_threshold: 10_000,
                    ..AmConfig::default()
                };
                let mut pair = Pair::new(&RlcConfig::Am(cfg), seed, loss, loss);
                let n = 1500u32;
                for i in 1..=n {
                    pair.a.on_sdu(pair.now, i, 1400).unwrap();
                }
                // §5.1.3.1.1 delivery indications: each SDU confirmed once, in order, and
                // only once the receiver has delivered it.
                let mut confirmed = Vec::new();
                for k in 0..20_000u32 {
                    let grant = 600 + (k * 7919 % 2900);
                    pair.tti(grant, 200);
                    pair.a.take_delivered(&mut confirmed);
                    if let Some(&last) = confirmed.last() {
                        assert!(pair.delivered_b.len() >= last as usize, "SDU {last} confirmed before delivery");
                    }
                    if pair.delivered_b.len() == n as usize && pair.a.buffer_status().total() == 0 {
                        break;
                    }
                }
                pair.run_until_idle(2000, 5000);
                pair.a.take_delivered(&mut confirmed);
                let expected: Vec<u32> = (1..=n).collect();
                assert_eq!(pair.delivered_b, expected, "seed {seed} loss {loss}");
                assert_eq!(confirmed, expected, "delivery indications, seed {seed} loss {loss}");
                assert_eq!(pair.a.untransmitted_and_unacked(), Vec::<u32>::new());
                let mut lost = vec![];
                pair.b.take_lost(&mut lost);
                assert!(lost.is_empty());
            }
        }
    }

    // With independent loss p per PDU and no STATUS loss, each PDU needs 1/(1 − p)
    // transmissions on average, so retransmissions ≈ p/(1 − p) × new PDUs. Grants are big
    // enough that retransmissions are never re-segmented. Tolerance ±20 % (relative), which
    // covers the sampling spread (≈ 5 % at 4 000 PDUs) and the rare extra retransmission from
    // t-PollRetransmit.
    #[test]
    fn am_retransmissions_match_loss_rate() {
        for (seed, loss) in [(1u64, 0.05), (2, 0.1), (3, 0.2), (4, 0.3)] {
            let cfg = AmConfig {
                tx_buffer_bytes: 1 << 24,
                max_retx_threshold: 10_000,
                ..AmConfig::default()
            };
            let mut pair = Pair::new(&RlcConfig::Am(cfg), seed, loss, 0.0);
            let n = 4000u32;
            for i in 1..=n {
                pair.a.on_sdu(pair.now, i, 1000).unwrap();
            }
            // one SDU per PDU: grant 1002 = header + 1000
            for _ in 0..40_000 {
                pair.tti(1002, 200);
                if pair.delivered_b.len() == n as usize {
                    break;
                }
            }
            assert_eq!(pair.delivered_b.len(), n as usize);
            let s = pair.a.stats();
            let new = s.pdus_tx - s.pdus_retx;
            assert_eq!(new, n as u64);
            let expect = loss / (1.0 - loss) * new as f64;
            let got = s.pdus_retx as f64;
            assert!(
                (got - expect).abs() <= 0.2 * expect,
                "loss {loss}: {got} retransmissions, expected ≈ {expect:.0}"
            );
        }
    }

    // §5.2.1: RETX_COUNT reaching maxRetxThreshold indicates radio link failure.
    #[test]
    fn am_max_retx_threshold_triggers_radio_link_failure() {
        let cfg = AmConfig {
            max_retx_threshold: 3,
            ..quiet_cfg()
        };
        let mut pair = Pair::new(&RlcConfig::Am(cfg), 7, 1.0, 0.0);
        pair.a.on_sdu(pair.now, 1, 500).unwrap();
        let mut rlf_at = None;
        for k in 0..1000u32 {
            pair.tti(1000, 1000);
            if pair.a.radio_link_failure() {
                rlf_at = Some(k);
                break;
            }
        }
        // Considered for retx at each t-PollRetransmit expiry (45 ms): RETX_COUNT 0, 1, 2, 3.
        let k = rlf_at.expect("radio link failure");
        assert!((4 * 45..4 * 45 + 5).contains(&k), "at TTI {k}");
        // the PDU is retransmitted right after each consideration, the 4th in the same TTI
        assert_eq!(pair.a.stats().pdus_retx, 4);
        assert!(!pair.b.radio_link_failure());
    }

    // ---------------------------------------------------------------------------------------
    // Receiving side details (§5.1.3.2)
    // ---------------------------------------------------------------------------------------

    // §5.1.3.2.2: duplicate byte segments and PDUs outside the window are discarded; a poll on
    // a discarded PDU still triggers a STATUS.
    #[test]
    fn am_discards_duplicates_and_answers_their_polls() {
        let cfg = quiet_cfg();
        let mut tx = tx_with(&cfg, &[98; 2]);
        let p0 = data(tx.on_tx_opportunity(t(0), 100));
        let mut rx: AmEntity<u32> = AmEntity::new(&cfg);
        let mut out = vec![];
        rx.on_rx_pdu(t(1), RlcPdu::Data(p0.clone()), &mut out);
        let mut dup = p0.clone();
        dup.poll = true;
        rx.on_rx_pdu(t(1), RlcPdu::Data(dup), &mut out);
        assert_eq!(out, vec![1]);
        assert_eq!(rx.buffer_status().status_bytes, 2);
        // SN 600 is outside [VR(R), VR(MR)) = [1, 513)
        let mut far = p0;
        far.sn = 600;
        rx.on_rx_pdu(t(1), RlcPdu::Data(far), &mut out);
        assert_eq!(out, vec![1]);
        assert_eq!(rx.vr(), (1, 1, 1));
    }

    // §5.2.3: a poll on a PDU above VR(MS) delays the STATUS until the gap below is filled.
    #[test]
    fn am_poll_above_vr_ms_is_delayed() {
        let cfg = quiet_cfg();
        let mut tx = tx_with(&cfg, &[98; 2]);
        let p0 = tx.on_tx_opportunity(t(0), 100).unwrap();
        let p1 = data(tx.on_tx_opportunity(t(0), 100));
        assert!(p1.poll);
        let mut rx: AmEntity<u32> = AmEntity::new(&cfg);
        let mut out = vec![];
        rx.on_rx_pdu(t(1), RlcPdu::Data(p1), &mut out);
        assert_eq!(
            rx.buffer_status().status_bytes,
            0,
            "SN 1 ≥ VR(MS) = 0: delayed"
        );
        rx.on_rx_pdu(t(2), p0, &mut out);
        assert_eq!(out, vec![1, 2]);
        let st = status(rx.on_tx_opportunity(t(2), 10));
        assert_eq!((st.ack_sn, st.nacks.len()), (2, 0));
    }

    // ---------------------------------------------------------------------------------------
    // Transmit buffer (§5.3)
    // ---------------------------------------------------------------------------------------

    // Drop-tail at tx_buffer_bytes; discard_untransmitted only takes SDUs with no byte sent;
    // untransmitted_and_unacked lists SDUs in flight and queued, once each, in order.
    #[test]
    fn am_tx_buffer_drop_tail_and_discard() {
        let cfg = AmConfig {
            tx_buffer_bytes: 1000,
            ..quiet_cfg()
        };
        let mut e: RlcEntity<u32> = RlcEntity::new(&RlcConfig::Am(cfg));
        for i in 1..=4 {
            e.on_sdu(t(0), i, 250).unwrap();
        }
        assert_eq!(e.on_sdu(t(0), 5, 1), Err(5));
        let s = e.stats();
        assert_eq!(
            (
                s.sdus_in,
                s.sdus_dropped_buffer,
                s.bytes_dropped_buffer,
                s.tx_buffer_bytes
            ),
            (4, 1, 1, 1000)
        );
        // 2 + 2 + 250 + 146: SDU 1 whole, SDU 2 cut
        let p = e.on_tx_opportunity(t(0), 400).unwrap();
        assert_eq!(pieces(&p), vec![(1, 0, 250), (2, 0, 146)]);
        assert_eq!(e.stats().tx_buffer_bytes, 604);
        assert_eq!(e.discard_untransmitted(|_| true), vec![3, 4]);
        assert_eq!(e.stats().tx_buffer_bytes, 104);
        assert_eq!(e.untransmitted_and_unacked(), vec![1, 2]);
        e.on_sdu(t(1), 6, 500).unwrap();
        assert_eq!(e.untransmitted_and_unacked(), vec![1, 2, 6]);
        assert_eq!(e.buffer_status().hol_sdu_arrival, Some(t(0)));
        assert_eq!(e.buffer_status().new_tx_bytes, 2 + 2 + 104 + 500);
    }

    // No timer and no allocation-triggering state when idle.
    #[test]
    fn am_idle_entity_has_no_deadline() {
        let e: AmEntity<u32> = AmEntity::new(&AmConfig::default());
        assert_eq!(e.next_deadline(), None);
        assert_eq!(e.buffer_status(), BufferStatus::default());
    }
}
