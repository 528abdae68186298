//! The sender's retransmission queue and SACK scoreboard (RFC 6675 §2-§4).
//!
//! Every transmitted segment not yet cumulatively acknowledged is kept, in sequence order, with
//! its SACKed / lost / retransmitted state and the delivery-rate bookkeeping of
//! draft-cheng-iccrg-delivery-rate-estimation §3.2. Segment boundaries never change: a
//! retransmission resends the same range.
//!
//! Byte counters are kept incrementally so that `pipe` (RFC 6675 §4 `SetPipe`) is O(1), computed
//! the way Linux computes `tcp_packets_in_flight`: `outstanding - sacked - lost + retransmitted`
//! (a lost segment leaves the pipe; its retransmission, while in flight, enters it again).
//!
//! Loss marking follows RFC 6675 §4 `IsLost`: a hole is lost when `DupThresh` discontiguous
//! SACKed segments, or more than `(DupThresh - 1) * SMSS` SACKed bytes, lie above it. Marking is
//! monotone, so a high-water mark (`lost_hint`) makes it amortised O(1) per segment.

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimTime};

/// One transmitted segment. Sequence numbers are absolute offsets from the ISN ([`crate::seq`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SentSeg {
    pub start: u64,
    /// One past the last sequence number, including the FIN's.
    pub end: u64,
    pub fin: bool,
    /// Time of the latest (re)transmission.
    pub sent_time: SimTime,
    /// Ever retransmitted (Karn's algorithm, RFC 6298 §3).
    pub retransmitted: bool,
    pub sacked: bool,
    /// Marked lost (RFC 6675 `IsLost`, or by an RTO / NewReno retransmission decision).
    pub lost: bool,
    /// A retransmission of this segment is in flight (counted in pipe).
    pub rexmit_inflight: bool,
    /// `P.delivered`, `P.delivered_time`, `P.first_sent_time`, `P.is_app_limited` (rate draft §3.2).
    pub delivered: u64,
    pub delivered_time: SimTime,
    pub first_sent_time: SimTime,
    pub is_app_limited: bool,
    /// Bytes in flight just after this segment was sent.
    pub tx_in_flight: u64,
}

impl SentSeg {
    /// Sequence space occupied.
    #[inline]
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    /// Payload bytes (sequence space less the FIN).
    #[inline]
    pub fn payload(&self) -> u64 {
        self.len() - self.fin as u64
    }
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<SentSeg>,
    outstanding: u64,
    sacked: u64,
    /// SACKed segments (Linux `sacked_out`).
    sacked_segs: u64,
    lost: u64,
    retrans: u64,
    highest_sacked: u64,
    /// Every un-SACKed segment ending at or below this is already marked lost.
    lost_hint: u64,
    /// Lost segments awaiting retransmission start at or after this.
    rtx_hint: u64,
    /// RACK: every segment ending at or below this is SACKed, lost or retransmitted (only
    /// never-retransmitted segments above it can be lost by time).
    rack_hint: u64,
    /// The previous ACK's SACK blocks, and the current ACK's being collected.
    sack_cache: [(u64, u64); 4],
    sack_cache_len: usize,
    next_cache: [(u64, u64); 4],
    next_cache_len: usize,
    /// Retransmissions in send order: (segment start, send time), for lost-retransmission
    /// detection.
    rtx_order: VecDeque<(u64, SimTime)>,
}

impl Scoreboard {
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    pub fn front(&self) -> Option<&SentSeg> {
        self.segs.front()
    }
    pub fn get(&self, i: usize) -> &SentSeg {
        &self.segs[i]
    }
    /// Sequence space sent and not cumulatively acknowledged (FlightSize of RFC 5681).
    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }
    /// SACKed segments (Linux `sacked_out`).
    pub fn sacked_segs(&self) -> u64 {
        self.sacked_segs
    }
    pub fn lost_bytes(&self) -> u64 {
        self.lost
    }
    pub fn retrans_bytes(&self) -> u64 {
        self.retrans
    }
    pub fn highest_sacked(&self) -> u64 {
        self.highest_sacked
    }
    /// RFC 6675 §4 `pipe`, Linux style.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        (self.outstanding + self.retrans).saturating_sub(self.sacked + self.lost)
    }

    /// A new segment was transmitted for the first time.
    pub fn push(&mut self, seg: SentSeg) {
        debug_assert_eq!(self.segs.back().map_or(seg.start, |b| b.end), seg.start);
        self.outstanding += seg.len();
        self.segs.push_back(seg);
    }

    fn uncount(&mut self, s: &SentSeg) {
        let l = s.len();
        self.outstanding -= l;
        if s.sacked {
            self.sacked -= l;
            self.sacked_segs -= 1;
        }
        if s.lost {
            self.lost -= l;
        }
        if s.rexmit_inflight {
            self.retrans -= l;
        }
    }

    /// Removes every segment ending at or below `ack` (a cumulative ACK), calling
    /// `f(segment, newly_delivered)` for each: `newly_delivered` is false for segments already
    /// SACKed. A segment only partly covered is trimmed (its front counted as delivered).
    pub fn cum_ack(&mut self, ack: u64, mut f: impl FnMut(&SentSeg, bool)) {
        while let Some(s) = self.segs.front().copied() {
            if s.end <= ack {
                self.segs.pop_front();
                self.uncount(&s);
                f(&s, !s.sacked);
            } else if s.start < ack {
                // partial: trim (happens only if the peer acknowledged inside a segment)
                self.uncount(&s);
                let mut head = s;
                head.end = ack;
                head.fin = false;
                let mut rest = s;
                rest.start = ack;
                self.outstanding += rest.len();
                if rest.sacked {
                    self.sacked += rest.len();
                    self.sacked_segs += 1;
                }
                if rest.lost {
                    self.lost += rest.len();
                }
                if rest.rexmit_inflight {
                    self.retrans += rest.len();
                }
                self.segs[0] = rest;
                f(&head, !head.sacked);
                break;
            } else {
                break;
            }
        }
        self.lost_hint = self.lost_hint.max(ack);
        self.rtx_hint = self.rtx_hint.max(ack);
        self.rack_hint = self.rack_hint.max(ack);
        self.highest_sacked = self.highest_sacked.max(ack);
    }

    /// Marks the segments wholly inside SACK block `[left, right)`, calling `f` for each newly
    /// SACKed one (RFC 6675 §4 `Update()`). A SACKed segment is neither lost nor in flight.
    ///
    /// Only the parts of the block not covered by the previous ACK's blocks are walked (Linux
    /// `recv_sack_cache`), so a long block that is re-reported on every ACK costs O(1); call
    /// [`end_sack_round`](Self::end_sack_round) after each ACK.
    pub fn sack(&mut self, left: u64, right: u64, mut f: impl FnMut(&SentSeg)) {
        if self.next_cache_len < self.next_cache.len() {
            self.next_cache[self.next_cache_len] = (left, right);
            self.next_cache_len += 1;
        }
        let mut pieces = [(0u64, 0u64); 8];
        pieces[0] = (left, right);
        let mut n = 1;
        for &(cl, cr) in &self.sack_cache[..self.sack_cache_len] {
            let mut out = [(0u64, 0u64); 8];
            let mut m = 0;
            for &(pl, pr) in &pieces[..n] {
                if cr <= pl || cl >= pr {
                    out[m] = (pl, pr);
                    m += 1;
                } else {
                    if pl < cl {
                        out[m] = (pl, cl);
                        m += 1;
                    }
                    if cr < pr {
                        out[m] = (cr, pr);
                        m += 1;
                    }
                }
            }
            pieces = out;
            n = m;
        }
        for &(lo, hi) in &pieces[..n] {
            self.sack_range(lo, hi, left, right, &mut f);
        }
    }

    /// Ends one ACK's SACK processing: its blocks become the cache for the next.
    pub fn end_sack_round(&mut self) {
        self.sack_cache = self.next_cache;
        self.sack_cache_len = self.next_cache_len;
        self.next_cache_len = 0;
    }

    /// Walks the segments overlapping `[lo, hi)` and SACKs those wholly inside `[left, right)`.
    fn sack_range(
        &mut self,
        lo: u64,
        hi: u64,
        left: u64,
        right: u64,
        f: &mut impl FnMut(&SentSeg),
    ) {
        let mut i = self.segs.partition_point(|s| s.end <= lo);
        while i < self.segs.len() && self.segs[i].start < hi {
            let s = self.segs[i];
            // A receiver's SACK blocks end before a FIN it holds out of order (the FIN is not
            // data): a segment with payload counts as SACKed when its payload is covered.
            let end = if s.fin && s.payload() > 0 {
                s.end - 1
            } else {
                s.end
            };
            if !s.sacked && s.start >= left && end <= right {
                let l = s.len();
                let seg = &mut self.segs[i];
                seg.sacked = true;
                self.sacked += l;
                self.sacked_segs += 1;
                if seg.lost {
                    seg.lost = false;
                    self.lost -= l;
                }
                if seg.rexmit_inflight {
                    seg.rexmit_inflight = false;
                    self.retrans -= l;
                }
                self.highest_sacked = self.highest_sacked.max(s.end);
                f(&s);
            }
            i += 1;
        }
    }

    fn mark_lost_at(&mut self, i: usize) -> u64 {
        let s = &mut self.segs[i];
        if s.sacked || s.lost {
            return 0;
        }
        s.lost = true;
        let l = s.len();
        if s.rexmit_inflight {
            s.rexmit_inflight = false;
            self.retrans -= l;
        }
        self.lost += l;
        self.rtx_hint = self.rtx_hint.min(s.start);
        l
    }

    /// RFC 6675 §4 `IsLost` applied to every hole below the highest SACK; returns the bytes
    /// newly marked lost.
    pub fn detect_losses(&mut self, dupthresh: u32, mss: u64) -> u64 {
        // Nothing SACKed above the holes already examined: no hole can be lost (the common case,
        // on every ACK of a loss-free flow; the searches below are not free on a deque of
        // thousands of segments).
        if self.highest_sacked <= self.lost_hint || self.segs.is_empty() {
            return 0;
        }
        // Skip the run above `lost_hint` that is already SACKed or lost: keeps the walk below
        // short when one old hole sits under a long SACKed run.
        let mut k = self.segs.partition_point(|s| s.end <= self.lost_hint);
        while k < self.segs.len()
            && self.segs[k].end <= self.highest_sacked
            && (self.segs[k].sacked || self.segs[k].lost)
        {
            self.lost_hint = self.segs[k].end;
            k += 1;
        }
        if self.highest_sacked <= self.lost_hint || self.segs.is_empty() {
            return 0;
        }
        let top = self.segs.partition_point(|s| s.end <= self.highest_sacked);
        let (mut cnt, mut bytes) = (0u32, 0u64);
        let mut boundary = None;
        let mut i = top;
        while i > 0 {
            i -= 1;
            let s = &self.segs[i];
            if s.end <= self.lost_hint {
                break;
            }
            if s.sacked {
                cnt += 1;
                bytes += s.len();
            } else if cnt >= dupthresh || bytes > (dupthresh as u64 - 1) * mss {
                boundary = Some(i);
                break;
            }
        }
        let Some(b) = boundary else { return 0 };
        let new_hint = self.segs[b].end;
        let mut newly = 0;
        let mut j = b + 1;
        while j > 0 {
            j -= 1;
            if self.segs[j].end <= self.lost_hint {
                break;
            }
            newly += self.mark_lost_at(j);
        }
        self.lost_hint = self.lost_hint.max(new_hint);
        newly
    }

    /// Marks the first un-SACKed segment lost (fast retransmit, RFC 6675 §5 step 4.3 /
    /// RFC 6582 §3.2 steps 2 and 5). Returns the bytes newly marked.
    pub fn mark_front_lost(&mut self) -> u64 {
        match self.segs.iter().position(|s| !s.sacked) {
            Some(i) => {
                let n = self.mark_lost_at(i);
                if n == 0 && self.segs[i].lost && !self.segs[i].rexmit_inflight {
                    return 0;
                }
                if n == 0 && self.segs[i].rexmit_inflight {
                    // NewReno partial ACK: the retransmission itself was lost; send it again.
                    let l = self.segs[i].len();
                    self.segs[i].rexmit_inflight = false;
                    self.retrans -= l;
                    self.rtx_hint = self.rtx_hint.min(self.segs[i].start);
                }
                n
            }
            None => 0,
        }
    }

    /// After an RTO every un-SACKed segment is lost and nothing is in flight (Linux
    /// `tcp_enter_loss`; SACKed data is kept, RFC 6675 §5.1).
    pub fn mark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            let s = &mut self.segs[i];
            if s.rexmit_inflight {
                s.rexmit_inflight = false;
                self.retrans -= s.len();
            }
            if !s.sacked && !s.lost {
                s.lost = true;
                self.lost += s.len();
            }
        }
        if let Some(b) = self.segs.back() {
            self.lost_hint = self.lost_hint.max(b.end);
        }
        self.rtx_hint = self.segs.front().map_or(self.rtx_hint, |s| s.start);
        self.rtx_order.clear();
    }

    /// Undoes the loss marks of an RTO found spurious (RFC 4015): lost segments not yet
    /// retransmitted are in flight again; loss marking restarts from SND.UNA.
    pub fn undo_loss_marks(&mut self) {
        for s in self.segs.iter_mut() {
            if s.lost && !s.rexmit_inflight && !s.sacked {
                s.lost = false;
                self.lost -= s.len();
            }
        }
        let front = self.segs.front().map_or(self.lost_hint, |s| s.start);
        self.lost_hint = front;
        self.rtx_hint = front;
        self.rack_hint = front;
    }

    /// RACK for segments never retransmitted (RFC 8985 §6.2 step 5, Linux
    /// `tcp_rack_detect_loss`): walking them in send order (which is sequence order), each one
    /// sent before (`xmit_ts`, `end_seq`) is lost once `rtt + reo_wnd - (now - sent) <= 0`.
    /// Returns the bytes newly marked and, if a segment is not lost yet, the longest time still
    /// to wait (the reordering timer). Retransmitted segments are left to
    /// [`detect_lost_retransmits`](Self::detect_lost_retransmits).
    pub fn rack_detect_originals(
        &mut self,
        now: SimTime,
        xmit_ts: SimTime,
        end_seq: u64,
        rtt: SimDuration,
        reo_wnd: SimDuration,
    ) -> (u64, Option<SimDuration>) {
        let mut i = self.segs.partition_point(|s| s.end <= self.rack_hint);
        let mut settled = true;
        let mut newly = 0;
        let mut wait = None;
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.sacked || s.lost || s.retransmitted {
                if settled {
                    self.rack_hint = s.end;
                }
                i += 1;
                continue;
            }
            // RFC 8985 RACK_sent_after(xmit_ts, end_seq, s.sent, s.end)
            if !(xmit_ts > s.sent_time || (xmit_ts == s.sent_time && end_seq > s.end)) {
                break;
            }
            let deadline = s.sent_time + rtt + reo_wnd;
            if deadline <= now {
                newly += self.mark_lost_at(i);
                self.lost_hint = self.lost_hint.max(s.end);
                if settled {
                    self.rack_hint = s.end;
                }
            } else {
                settled = false;
                let rem = deadline.saturating_since(now);
                wait = Some(wait.map_or(rem, |w: SimDuration| w.max(rem)));
            }
            i += 1;
        }
        (newly, wait)
    }

    /// The last segment not SACKed (the TLP retransmission, RFC 8985 §7.3).
    pub fn last_unsacked(&self) -> Option<usize> {
        (0..self.segs.len()).rev().find(|&i| !self.segs[i].sacked)
    }

    /// RFC 6675 §4 `NextSeg()` rule 1: the first lost, un-SACKed segment not yet retransmitted.
    pub fn next_lost(&mut self) -> Option<usize> {
        if self.lost == 0 {
            return None;
        }
        let mut i = self.segs.partition_point(|s| s.start < self.rtx_hint);
        while i < self.segs.len() {
            let s = &self.segs[i];
            if s.lost && !s.sacked && !s.rexmit_inflight {
                self.rtx_hint = s.start;
                return Some(i);
            }
            if s.start >= self.lost_hint {
                break;
            }
            i += 1;
        }
        self.rtx_hint = self.lost_hint;
        None
    }

    /// RFC 6675 §4 `NextSeg()` rule 3: an un-SACKed hole below the highest SACK that is not
    /// (yet) lost and never retransmitted.
    pub fn next_rule3(&self) -> Option<usize> {
        let i0 = self.segs.partition_point(|s| s.end <= self.lost_hint);
        (i0..self.segs.len())
            .take_while(|&i| self.segs[i].end <= self.highest_sacked)
            .find(|&i| {
                let s = &self.segs[i];
                !s.sacked && !s.lost && !s.retransmitted
            })
    }

    /// RFC 6675 §4 `NextSeg()` rule 4 (RescueRxt): the highest un-SACKed segment not in
    /// retransmission.
    pub fn rescue(&self) -> Option<usize> {
        (0..self.segs.len()).rev().find(|&i| {
            let s = &self.segs[i];
            !s.sacked && !s.rexmit_inflight
        })
    }

    /// Detects retransmissions that were lost again (RFC 6675 has no rule for this; Linux
    /// `tcp_mark_lost_retrans`, and RACK's time order, RFC 8985 §6.2): a retransmission sent more
    /// than `reo_wnd` before the latest-sent segment this ACK delivered is lost. The segment
    /// stays lost and becomes eligible for NextSeg rule 1 again. Returns the bytes affected.
    pub fn detect_lost_retransmits(
        &mut self,
        rack_xmit_time: SimTime,
        reo_wnd: SimDuration,
    ) -> u64 {
        let mut newly = 0;
        while let Some(&(start, sent)) = self.rtx_order.front() {
            if sent + reo_wnd >= rack_xmit_time {
                break;
            }
            self.rtx_order.pop_front();
            let i = self.segs.partition_point(|s| s.start < start);
            if i < self.segs.len() {
                let s = &mut self.segs[i];
                if s.start == start && s.rexmit_inflight && s.sent_time == sent && !s.sacked {
                    s.rexmit_inflight = false;
                    let l = s.len();
                    self.retrans -= l;
                    if !s.lost {
                        s.lost = true;
                        self.lost += l;
                    }
                    self.rtx_hint = self.rtx_hint.min(start);
                    newly += l;
                }
            }
        }
        newly
    }

    /// Records a retransmission of segment `i` at `now`; the caller fills the rate fields.
    pub fn on_retransmit(&mut self, i: usize, now: SimTime) -> &mut SentSeg {
        self.rtx_order.push_back((self.segs[i].start, now));
        let s = &mut self.segs[i];
        s.sent_time = now;
        if !s.rexmit_inflight {
            s.rexmit_inflight = true;
            self.retrans += s.len();
        }
        s.retransmitted = true;
        s
    }

    /// True when the first un-acknowledged segment is marked lost.
    pub fn front_lost(&self) -> bool {
        self.segs.front().is_some_and(|s| s.lost)
    }

    #[cfg(test)]
    fn check(&self) {
        let (mut o, mut sk, mut l, mut r, mut n) = (0, 0, 0, 0, 0);
        for s in &self.segs {
            o += s.len();
            if s.sacked {
                sk += s.len();
                n += 1;
            }
            if s.lost {
                l += s.len();
            }
            if s.rexmit_inflight {
                r += s.len();
            }
        }
        assert_eq!(
            (o, sk, l, r),
            (self.outstanding, self.sacked, self.lost, self.retrans)
        );
        assert_eq!(n, self.sacked_segs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// A scoreboard holding `n` full segments starting at sequence 1.
    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for k in 0..n {
            b.push(SentSeg {
                start: 1 + k * MSS,
                end: 1 + (k + 1) * MSS,
                ..Default::default()
            });
        }
        b
    }

    fn seg_start(k: u64) -> u64 {
        1 + k * MSS
    }

    #[test]
    fn scoreboard_rack_marks_by_time_and_reports_the_wait() {
        // RFC 8985 §6.2 step 5 / Linux tcp_rack_detect_loss: segment k sent at k ms; segment 5
        // (sent at 5 ms) is SACKed at 55 ms, so RACK.rtt = 50 ms.
        let ms = SimDuration::from_millis;
        let at = |v: u64| SimTime::ZERO + ms(v);
        let mut b = Scoreboard::default();
        for k in 0..8 {
            b.push(SentSeg {
                start: seg_start(k),
                end: seg_start(k + 1),
                sent_time: at(k),
                ..Default::default()
            });
        }
        b.sack(seg_start(5), seg_start(6), |_| {});
        b.end_sack_round();
        let (xmit, end, rtt) = (at(5), seg_start(6), ms(50));
        // reo_wnd 2 ms: segment k is lost when k + 50 + 2 <= now (55): k <= 3; segment 4 waits
        // 1 ms; 6 and 7 were sent after RACK.xmit_ts and are not judged.
        let (lost, wait) = b.rack_detect_originals(at(55), xmit, end, rtt, ms(2));
        assert_eq!(lost, 4 * MSS);
        assert_eq!(wait, Some(ms(1)));
        assert!(b.get(3).lost && !b.get(4).lost && !b.get(6).lost);
        // The reordering timer fires: segment 4 is lost now; nothing more to wait for.
        let (lost, wait) = b.rack_detect_originals(at(56), xmit, end, rtt, ms(2));
        assert_eq!((lost, wait), (MSS, None));
        assert_eq!(b.next_lost(), Some(0));
        assert_eq!(b.in_flight(), 2 * MSS);
        b.check();
    }

    #[test]
    fn scoreboard_pipe_counts_outstanding() {
        let b = board(10);
        assert_eq!(b.in_flight(), 10 * MSS);
        b.check();
    }

    #[test]
    fn scoreboard_is_lost_after_dupthresh_sacked_segments() {
        // RFC 6675 §4 IsLost: segment 0 lost once 3 segments above it are SACKed.
        let mut b = board(10);
        b.sack(seg_start(1), seg_start(3), |_| {});
        assert_eq!(b.detect_losses(3, MSS), 0);
        b.sack(seg_start(3), seg_start(4), |_| {});
        assert_eq!(b.detect_losses(3, MSS), MSS);
        assert!(b.front_lost());
        assert_eq!(b.in_flight(), 10 * MSS - 3 * MSS - MSS);
        assert_eq!(b.next_lost(), Some(0));
        b.on_retransmit(0, SimTime::ZERO);
        assert_eq!(b.next_lost(), None);
        assert_eq!(b.in_flight(), 10 * MSS - 3 * MSS);
        b.check();
    }

    #[test]
    fn scoreboard_cum_ack_removes_and_reports_sacked() {
        let mut b = board(5);
        b.sack(seg_start(2), seg_start(3), |_| {});
        let mut newly = vec![];
        b.cum_ack(seg_start(3), |s, n| newly.push((s.start, n)));
        assert_eq!(
            newly,
            vec![
                (seg_start(0), true),
                (seg_start(1), true),
                (seg_start(2), false)
            ]
        );
        assert_eq!(b.outstanding(), 2 * MSS);
        b.check();
    }

    #[test]
    fn scoreboard_rto_marks_all_unsacked_lost() {
        // Linux tcp_enter_loss; RFC 6675 §5.1 keeps SACKed data.
        let mut b = board(6);
        b.sack(seg_start(4), seg_start(5), |_| {});
        b.mark_all_lost();
        assert_eq!(b.in_flight(), 0);
        assert_eq!(b.lost_bytes(), 5 * MSS);
        let mut order = vec![];
        while let Some(i) = b.next_lost() {
            order.push(b.get(i).start);
            b.on_retransmit(i, SimTime::ZERO);
        }
        assert_eq!(
            order,
            vec![
                seg_start(0),
                seg_start(1),
                seg_start(2),
                seg_start(3),
                seg_start(5)
            ]
        );
        b.check();
    }

    #[test]
    fn scoreboard_sack_cache_skips_rereported_blocks_but_stays_exact() {
        // Linux recv_sack_cache: a re-reported block is not walked again.
        let mut b = board(20);
        let mut n = 0;
        b.sack(seg_start(2), seg_start(5), |_| n += 1);
        b.end_sack_round();
        b.sack(seg_start(2), seg_start(8), |_| n += 1); // grows to the right
        b.sack(seg_start(10), seg_start(11), |_| n += 1);
        b.end_sack_round();
        b.sack(seg_start(1), seg_start(8), |_| n += 1); // grows to the left
        b.sack(seg_start(10), seg_start(11), |_| n += 1);
        b.end_sack_round();
        assert_eq!(n, 8);
        assert_eq!(b.sacked_bytes(), 8 * MSS);
        b.check();
    }

    #[test]
    fn scoreboard_lost_retransmission_detected_by_later_delivery() {
        // RFC 8985 §6.2 time order: segment 0's retransmission at 10 ms is lost once a segment
        // sent at 30 ms is delivered (reordering window 5 ms).
        let t = SimTime::from_millis;
        let mut b = board(6);
        b.sack(seg_start(1), seg_start(4), |_| {});
        b.end_sack_round();
        b.detect_losses(3, MSS);
        let i = b.next_lost().unwrap();
        b.on_retransmit(i, t(10));
        assert_eq!(b.next_lost(), None);
        assert_eq!(
            b.detect_lost_retransmits(t(12), SimDuration::from_millis(5)),
            0
        );
        assert_eq!(
            b.detect_lost_retransmits(t(30), SimDuration::from_millis(5)),
            MSS
        );
        assert_eq!(b.next_lost(), Some(0));
        b.check();
    }

    #[test]
    fn scoreboard_undo_loss_marks_returns_unsent_to_flight() {
        let mut b = board(4);
        b.mark_all_lost();
        let i = b.next_lost().unwrap();
        b.on_retransmit(i, SimTime::ZERO);
        b.undo_loss_marks();
        assert_eq!(
            b.lost_bytes(),
            MSS,
            "the retransmitted segment stays lost-and-resent"
        );
        assert_eq!(b.in_flight(), 4 * MSS);
        assert_eq!(b.next_lost(), None);
        b.check();
    }

    #[test]
    fn scoreboard_rule3_and_rescue() {
        let mut b = board(6);
        b.sack(seg_start(2), seg_start(3), |_| {});
        assert_eq!(b.next_rule3(), Some(0));
        assert_eq!(b.rescue(), Some(5));
    }
}
