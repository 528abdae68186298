//! Unacknowledged mode, TS 36.322 §4.2.1.2 and §5.1.2.
//!
//! Transmitting half (§5.1.2.1): SDUs are segmented and concatenated into UMD PDUs that fill the
//! grant; each PDU takes SN = VT(US), which then advances. Header (§6.2.1.3): 1 byte (5-bit SN)
//! or 2 bytes (10-bit SN), plus 12 bits of E/LI per extra data field element, octet-aligned.
//!
//! Receiving half (§5.1.2.2): reordering window VR(UH) − UM_Window_Size ≤ SN < VR(UH)
//! (UM_Window_Size = 16 or 512, §7.2), duplicate discard (§5.1.2.2.2), in-order reassembly as
//! VR(UR) advances (§5.1.2.2.3), and t-Reordering (§5.1.2.2.4), on whose expiry missing PDUs are
//! given up and the SDUs they cut are reported lost ([`UmEntity::take_lost`]).

use std::collections::VecDeque;
use std::fmt::Debug;

use celltcp_engine::{SimDuration, SimTime};

use super::{expired, BufferStatus, DataPdu, Reassembler, RlcPdu, RlcStats, TxQueue, UmConfig};

/// A UM entity: transmitting and receiving half of one bearer side.
#[derive(Clone, Debug)]
pub struct UmEntity<P> {
    sn_modulus: u16,
    window: u16,
    header_bytes: u32,
    t_reordering_duration: SimDuration,
    tx: TxQueue<P>,
    /// VT(US): SN of the next new UMD PDU (§7.1).
    vt_us: u16,
    /// VR(UR): earliest SN still considered for reordering (§7.1).
    vr_ur: u16,
    /// VR(UX): SN following the one that triggered t-Reordering (§7.1).
    vr_ux: u16,
    /// VR(UH): SN following the highest SN received; upper edge of the window (§7.1).
    vr_uh: u16,
    /// Reception buffer; index i holds SN = VR(UR) + i.
    rx_buf: VecDeque<Option<DataPdu<P>>>,
    t_reordering: Option<SimTime>,
    reasm: Reassembler<P>,
    lost: Vec<P>,
    pdus_tx: u64,
    bytes_tx: u64,
}

impl<P: Copy + Debug> UmEntity<P> {
    /// A fresh entity, all state variables 0 (§7.1).
    pub fn new(cfg: &UmConfig) -> Self {
        let bits = if cfg.sn_field_bits == 5 { 5 } else { 10 };
        let sn_modulus = 1u16 << bits;
        UmEntity {
            sn_modulus,
            window: sn_modulus / 2,
            header_bytes: if bits == 5 { 1 } else { 2 },
            t_reordering_duration: cfg.t_reordering,
            tx: TxQueue::new(cfg.tx_buffer_bytes),
            vt_us: 0,
            vr_ur: 0,
            vr_ux: 0,
            vr_uh: 0,
            rx_buf: VecDeque::new(),
            t_reordering: None,
            reasm: Reassembler::new(),
            lost: Vec::new(),
            pdus_tx: 0,
            bytes_tx: 0,
        }
    }

    /// VR(UR), for tests and traces.
    pub fn vr_ur(&self) -> u16 {
        self.vr_ur
    }

    /// VR(UH), for tests and traces.
    pub fn vr_uh(&self) -> u16 {
        self.vr_uh
    }

    /// Drop-tail enqueue (§5.1.2.1).
    pub fn on_sdu(&mut self, now: SimTime, sdu: P, bytes: u32) -> Result<(), P> {
        self.tx.push(now, sdu, bytes)
    }

    /// Queued bytes plus the header of one UMD PDU carrying them all. O(1).
    /// Bytes waiting in the transmission buffer (the occupancy metric).
    pub fn queued_bytes(&self) -> u32 {
        self.tx.pdu_estimate(self.header_bytes)
    }

    /// `buffer_status().total() > 0`.
    #[inline]
    pub fn has_pending(&self) -> bool {
        self.tx.pdu_estimate(self.header_bytes) > 0
    }

    pub fn buffer_status(&self) -> BufferStatus {
        BufferStatus {
            new_tx_bytes: self.tx.pdu_estimate(self.header_bytes),
            retx_bytes: 0,
            status_bytes: 0,
            hol_sdu_arrival: self.tx.hol_arrival(),
        }
    }

    /// One UMD PDU of at most `bytes` (§5.1.2.1).
    pub fn on_tx_opportunity(&mut self, _now: SimTime, bytes: u32) -> Option<RlcPdu<P>> {
        let (segments, header_bytes) = self.tx.build(self.header_bytes, bytes)?;
        let pdu = DataPdu {
            sn: self.vt_us,
            so: 0,
            is_resegment: false,
            last_segment: true,
            poll: false,
            segments,
            header_bytes,
        };
        self.vt_us = (self.vt_us + 1) % self.sn_modulus;
        self.pdus_tx += 1;
        self.bytes_tx += (header_bytes + pdu.data_bytes()) as u64;
        Some(RlcPdu::Data(pdu))
    }

    /// SN relative to the modulus base VR(UH) − UM_Window_Size (§7.1).
    fn rel(&self, sn: u16) -> u16 {
        sn.wrapping_sub(self.vr_uh).wrapping_add(self.window) & (self.sn_modulus - 1)
    }

    /// Distance from `from` up to `to` in SN space.
    fn dist(&self, from: u16, to: u16) -> u16 {
        to.wrapping_sub(from) & (self.sn_modulus - 1)
    }

    /// Pop `n` slots from the front of the reception buffer, reassembling what they hold, and
    /// advance VR(UR) by `n`.
    fn flush(&mut self, n: u16, delivered: &mut Vec<P>) {
        for _ in 0..n {
            if let Some(Some(pdu)) = self.rx_buf.pop_front() {
                for s in &pdu.segments {
                    self.reasm.push(s, delivered, &mut self.lost);
                }
            }
        }
        self.vr_ur = (self.vr_ur + n) % self.sn_modulus;
    }

    /// Advance VR(UR) past received PDUs, delivering them.
    fn flush_received(&mut self, delivered: &mut Vec<P>) {
        let mut n = 0;
        while matches!(self.rx_buf.get(n as usize), Some(Some(_))) {
            n += 1;
        }
        if n > 0 {
            self.flush(n, delivered);
        }
    }

    /// UMD PDU reception (§5.1.2.2.2, §5.1.2.2.3).
    pub fn on_rx_pdu(&mut self, now: SimTime, pdu: RlcPdu<P>, delivered: &mut Vec<P>) {
        let RlcPdu::Data(pdu) = pdu else { return };
        let x = pdu.sn % self.sn_modulus;
        let (rx, rur) = (self.rel(x), self.rel(self.vr_ur));
        let w = self.window;
        // §5.1.2.2.2: discard duplicates inside (VR(UR), VR(UH)) and anything in
        // [VR(UH) − UM_Window_Size, VR(UR)).
        if rx < rur {
            return;
        }
        if rx < w {
            let idx = self.dist(self.vr_ur, x) as usize;
            if matches!(self.rx_buf.get(idx), Some(Some(_))) {
                return;
            }
        } else {
            // §5.1.2.2.3: x is outside the window: VR(UH) = x + 1; PDUs now below the window are
            // reassembled and VR(UR) is moved up to the new lower edge if it fell outside.
            let new_uh = (x + 1) % self.sn_modulus;
            let new_base = new_uh.wrapping_sub(w) & (self.sn_modulus - 1);
            // In old coordinates, the new base is in [1, W] and VR(UR) in [0, W].
            let base_rel = self.rel(new_base);
            if rur < base_rel {
                self.flush(base_rel - rur, delivered);
            }
            self.vr_uh = new_uh;
        }
        let idx = self.dist(self.vr_ur, x) as usize;
        if self.rx_buf.len() <= idx {
            self.rx_buf.resize_with(idx + 1, || None);
        }
        self.rx_buf[idx] = Some(pdu);
        // §5.1.2.2.3: if SN = VR(UR) is now received, advance VR(UR) and deliver.
        self.flush_received(delivered);
        // t-Reordering (§5.1.2.2.3).
        if self.t_reordering.is_some() {
            let (ux, ur) = (self.rel(self.vr_ux), self.rel(self.vr_ur));
            if ux <= ur || (ux >= w && self.vr_ux != self.vr_uh) {
                self.t_reordering = None;
            }
        }
        self.maybe_start_reordering(now);
    }

    fn maybe_start_reordering(&mut self, now: SimTime) {
        if self.t_reordering.is_none() && self.vr_uh != self.vr_ur {
            self.t_reordering = Some(now + self.t_reordering_duration);
            self.vr_ux = self.vr_uh;
        }
    }

    /// t-Reordering, when running.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.t_reordering
    }

    /// t-Reordering expiry (§5.1.2.2.4): VR(UR) moves to the first missing SN ≥ VR(UX); PDUs
    /// below it are reassembled (SDUs cut by the gap are reported lost); restart if needed.
    pub fn on_timeout(&mut self, now: SimTime, delivered: &mut Vec<P>) {
        if !expired(self.t_reordering, now) {
            return;
        }
        self.t_reordering = None;
        let n = self.dist(self.vr_ur, self.vr_ux);
        if n <= self.window {
            self.flush(n, delivered);
        }
        self.flush_received(delivered);
        self.maybe_start_reordering(now);
    }

    /// Re-establishment of the receiving side (§5.4): "when possible, reassemble RLC SDUs from
    /// any UMD PDUs with SN < VR(UH) [...] and deliver all reassembled RLC SDUs to upper layer
    /// in ascending order of the RLC SN, if not delivered before; discard all remaining UMD
    /// PDUs". As t-Reordering's expiry does up to VR(UH) (§5.1.2.2.4): the SDUs cut by a
    /// missing PDU, and the one under reassembly whose rest never came, are reported lost.
    /// Then t-Reordering stops and VR(UR), VR(UX), VR(UH) go back to 0 (§5.4, §7.1).
    pub fn reestablish_rx(&mut self, delivered: &mut Vec<P>) {
        let n = self.dist(self.vr_ur, self.vr_uh);
        self.flush(n, delivered);
        self.reasm.abandon(&mut self.lost);
        self.rx_buf.clear();
        self.t_reordering = None;
        (self.vr_ur, self.vr_ux, self.vr_uh) = (0, 0, 0);
    }

    /// §5.3: drop queued SDUs not yet mapped to a PDU for which `pred` holds.
    pub fn discard_untransmitted(&mut self, pred: impl FnMut(&P) -> bool) -> Vec<P> {
        self.tx.discard(pred)
    }

    /// [`super::RlcEntity::tx_seqs`].
    pub fn tx_seqs(&self) -> Vec<u64> {
        self.tx.iter().map(|(seq, _)| seq).collect()
    }

    /// [`super::RlcEntity::rx_in_progress`].
    pub fn rx_in_progress(&self, out: &mut Vec<(u64, P)>) -> Option<u64> {
        out.extend(self.reasm.in_progress());
        let gone = self.reasm.given_up();
        for pdu in self.rx_buf.iter().flatten() {
            out.extend(pdu.segments.iter().filter(|s| Some(s.sdu_seq) != gone).map(|s| (s.sdu_seq, s.sdu)));
        }
        gone
    }

    /// SDUs given up by reassembly since the last call.
    pub fn take_lost(&mut self, out: &mut Vec<P>) {
        out.append(&mut self.lost);
    }

    /// Counters.
    pub fn stats(&self) -> RlcStats {
        RlcStats {
            sdus_in: self.tx.sdus_in,
            sdus_dropped_buffer: self.tx.sdus_dropped,
            bytes_dropped_buffer: self.tx.bytes_dropped,
            pdus_tx: self.pdus_tx,
            pdus_retx: 0,
            bytes_tx: self.bytes_tx,
            status_tx: 0,
            sdus_delivered: self.reasm.sdus_delivered,
            bytes_delivered: self.reasm.bytes_delivered,
            sdus_lost: self.reasm.sdus_lost,
            tx_buffer_bytes: self.tx.unsent_bytes(),
        }
    }

    /// SDUs not yet fully sent, in order (a partly sent head SDU included).
    pub fn untransmitted_and_unacked(&self) -> Vec<P> {
        self.tx.iter().map(|(_, p)| p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{pieces, Pair};
    use super::super::{RlcConfig, RlcEntity};
    use super::*;

    fn cfg(bits: u8) -> UmConfig {
        UmConfig {
            sn_field_bits: bits,
            t_reordering: SimDuration::from_millis(35),
            tx_buffer_bytes: 1 << 20,
        }
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// A transmitter holding SDUs of the given sizes (ids 1, 2, …).
    fn tx_with(bits: u8, sizes: &[u32]) -> UmEntity<u32> {
        let mut e = UmEntity::new(&cfg(bits));
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

    // ---------------------------------------------------------------------------------------
    // Transmitting half: segmentation, concatenation, header sizes (§5.1.2.1, §6.2.1.3)
    // ---------------------------------------------------------------------------------------

    // 10-bit SN: 2-byte fixed header. Three 100-byte SDUs in 320 bytes: 2 + 3 (two LIs) +
    // 300 = 305 bytes, all three whole.
    #[test]
    fn um_concatenation_header_two_lis() {
        let mut e = tx_with(10, &[100, 100, 100]);
        assert_eq!(e.buffer_status().new_tx_bytes, 305);
        let pdu = e.on_tx_opportunity(t(0), 320).unwrap();
        assert_eq!(pdu.bytes(), 305);
        assert_eq!(pieces(&pdu), vec![(1, 0, 100), (2, 0, 100), (3, 0, 100)]);
        assert_eq!(e.buffer_status().total(), 0);
    }

    // Grant of 200: SDU 1 whole (100) + LI (2 bytes, 12 bits padded) + 96 bytes of SDU 2:
    // 2 + 2 + 196 = 200 exactly. The next grant of 50 carries 48 bytes of SDU 2's remaining 4
    // ... (4 bytes) + LI + 44 bytes of SDU 3: 2 + 2 + 4 + 42 = 50.
    #[test]
    fn um_segmentation_fills_grant_exactly() {
        let mut e = tx_with(10, &[100, 100, 100]);
        let p1 = e.on_tx_opportunity(t(0), 200).unwrap();
        assert_eq!(p1.bytes(), 200);
        assert_eq!(pieces(&p1), vec![(1, 0, 100), (2, 0, 96)]);
        let p2 = e.on_tx_opportunity(t(0), 50).unwrap();
        assert_eq!(p2.bytes(), 50);
        assert_eq!(pieces(&p2), vec![(2, 96, 4), (3, 0, 42)]);
        assert_eq!(data(Some(p2)).sn, 1);
        // 58 bytes left of SDU 3: one PDU of 2 + 58.
        assert_eq!(e.buffer_status().new_tx_bytes, 60);
        assert_eq!(e.on_tx_opportunity(t(0), 1000).unwrap().bytes(), 60);
    }

    // 5-bit SN: 1-byte fixed header. When only one byte would be left after a whole SDU and
    // an LI costs two, the PDU is one byte short of the grant (MAC pads).
    #[test]
    fn um_five_bit_header_and_li_that_does_not_fit() {
        let mut e = tx_with(5, &[100, 100]);
        assert_eq!(e.buffer_status().new_tx_bytes, 1 + 2 + 200);
        let p = e.on_tx_opportunity(t(0), 102).unwrap();
        assert_eq!(pieces(&p), vec![(1, 0, 100)]);
        assert_eq!(p.bytes(), 101);
        // Too small for header + one byte.
        assert!(e.on_tx_opportunity(t(0), 1).is_none());
        assert_eq!(e.on_tx_opportunity(t(0), 2).unwrap().bytes(), 2);
    }

    // §6.2.2: the LI field is 11 bits, so an element longer than 2047 bytes ends the PDU.
    #[test]
    fn um_no_concatenation_after_element_longer_than_li_max() {
        let mut e = tx_with(10, &[3000, 100]);
        let p = e.on_tx_opportunity(t(0), 5000).unwrap();
        assert_eq!(pieces(&p), vec![(1, 0, 3000)]);
        assert_eq!(p.bytes(), 3002);
    }

    // SNs wrap modulo 2^5.
    #[test]
    fn um_sn_wraps_at_modulus() {
        let mut e = tx_with(5, &[10; 40]);
        let sns: Vec<u16> = (0..40)
            .map(|_| data(e.on_tx_opportunity(t(0), 11)).sn)
            .collect();
        assert_eq!(sns[31], 31);
        assert_eq!(sns[32], 0);
        assert_eq!(sns[39], 7);
    }

    // ---------------------------------------------------------------------------------------
    // Receiving half: reordering, duplicates, t-Reordering (§5.1.2.2)
    // ---------------------------------------------------------------------------------------

    /// Five PDUs, each one whole 100-byte SDU (ids 1..=5, SN 0..=4).
    fn five_pdus() -> Vec<RlcPdu<u32>> {
        let mut e = tx_with(10, &[100; 5]);
        (0..5)
            .map(|_| e.on_tx_opportunity(t(0), 102).unwrap())
            .collect()
    }

    /// A receiver (window 10) given [`five_pdus`] SN 0, 2 and 3 at 1 ms: SN 1 missing, SDU 1
    /// delivered. Returns the PDUs, the receiver and what it delivered.
    fn received_with_sn1_missing() -> (Vec<RlcPdu<u32>>, UmEntity<u32>, Vec<u32>) {
        let p = five_pdus();
        let mut rx: UmEntity<u32> = UmEntity::new(&cfg(10));
        let mut out = vec![];
        for i in [0usize, 2, 3] {
            rx.on_rx_pdu(t(1), p[i].clone(), &mut out);
        }
        (p, rx, out)
    }

    // §5.1.2.2.3: PDUs received out of order inside the window are delivered in SN order once
    // the gap fills, and t-Reordering stops.
    #[test]
    fn um_reorders_within_window() {
        let (p, mut rx, mut out) = received_with_sn1_missing();
        assert_eq!(out, vec![1]);
        assert_eq!(rx.next_deadline(), Some(t(36)));
        rx.on_rx_pdu(t(2), p[1].clone(), &mut out);
        assert_eq!(out, vec![1, 2, 3, 4]);
        assert_eq!(rx.vr_ur(), 4);
        assert_eq!(rx.next_deadline(), None);
    }

    // §5.1.2.2.2: a second copy of a PDU is discarded, whether still buffered or already
    // below VR(UR).
    #[test]
    fn um_discards_duplicates() {
        let p = five_pdus();
        let mut rx: UmEntity<u32> = UmEntity::new(&cfg(10));
        let mut out = vec![];
        rx.on_rx_pdu(t(1), p[0].clone(), &mut out);
        rx.on_rx_pdu(t(1), p[2].clone(), &mut out);
        rx.on_rx_pdu(t(1), p[2].clone(), &mut out);
        rx.on_rx_pdu(t(1), p[0].clone(), &mut out);
        rx.on_rx_pdu(t(1), p[1].clone(), &mut out);
        rx.on_rx_pdu(t(1), p[1].clone(), &mut out);
        assert_eq!(out, vec![1, 2, 3]);
        assert_eq!(rx.stats().sdus_delivered, 3);
    }

    // §5.1.2.2.4: when t-Reordering expires, VR(UR) jumps past the missing SN, what follows is
    // delivered, and an SDU cut by the missing PDU is reported lost.
    #[test]
    fn um_t_reordering_expiry_delivers_and_reports_lost() {
        // SDUs of 150 bytes in PDUs of 102 bytes: SDU 1 = SN0[0,100) + SN1[0,50), etc.
        let mut tx = tx_with(10, &[150, 150, 150]);
        let p: Vec<_> = (0..5)
            .map(|_| tx.on_tx_opportunity(t(0), 102).unwrap())
            .collect();
        assert_eq!(pieces(&p[1]), vec![(1, 100, 50), (2, 0, 48)]);
        let mut rx: UmEntity<u32> = UmEntity::new(&cfg(10));
        let mut out = vec![];
        rx.on_rx_pdu(t(0), p[0].clone(), &mut out);
        // SN 1 lost (it carries the end of SDU 1 and the start of SDU 2)
        rx.on_rx_pdu(t(0), p[2].clone(), &mut out);
        rx.on_rx_pdu(t(0), p[3].clone(), &mut out);
        rx.on_rx_pdu(t(0), p[4].clone(), &mut out);
        assert!(out.is_empty());
        let deadline = rx.next_deadline().unwrap();
        assert_eq!(deadline, t(35));
        rx.on_timeout(t(34), &mut out);
        assert!(out.is_empty(), "not expired yet");
        rx.on_timeout(deadline, &mut out);
        assert_eq!(out, vec![3]);
        let mut lost = vec![];
        rx.take_lost(&mut lost);
        assert_eq!(lost, vec![1, 2]);
        assert_eq!(rx.stats().sdus_lost, 2);
        assert_eq!(rx.next_deadline(), None);
        // A late copy of SN 1 is now below VR(UR) and discarded.
        rx.on_rx_pdu(t(40), p[1].clone(), &mut out);
        assert_eq!(out, vec![3]);
    }

    // §5.4, re-establishment of the receiving side: the SDUs that can be reassembled from the
    // UMD PDUs below VR(UH) are delivered in SN order, without waiting for t-Reordering (SN 1
    // missing: SDUs 3 and 4 go up behind 1); the state variables go back to 0, so the
    // re-established peer's SN 0 is new data, not a duplicate.
    #[test]
    fn um_reestablishment_delivers_what_it_can_reassemble() {
        let (_, mut rx, mut out) = received_with_sn1_missing();
        assert_eq!(out, vec![1]);
        rx.reestablish_rx(&mut out);
        assert_eq!(out, vec![1, 3, 4]);
        assert_eq!((rx.vr_ur(), rx.vr_uh(), rx.next_deadline()), (0, 0, None));
        let mut lost = vec![];
        rx.take_lost(&mut lost);
        assert!(lost.is_empty(), "every SDU it had a piece of was whole: {lost:?}");
        let mut fresh = tx_with(10, &[100]);
        rx.on_rx_pdu(t(2), fresh.on_tx_opportunity(t(2), 102).unwrap(), &mut out);
        assert_eq!(out, vec![1, 3, 4, 1], "SN 0 after re-establishment is delivered");
    }

    // §5.4: what cannot be reassembled is discarded: the SDUs cut by a missing PDU (the same
    // outcome as t-Reordering's expiry, `um_t_reordering_expiry_delivers_and_reports_lost`),
    // and the SDU under reassembly whose last piece never came.
    #[test]
    fn um_reestablishment_discards_what_it_cannot_reassemble() {
        // SDUs of 150 bytes in PDUs of 102 bytes: SDU 1 = SN0[0,100) + SN1[0,50), etc.
        let mut tx = tx_with(10, &[150, 150, 150]);
        let p: Vec<_> = (0..5).map(|_| tx.on_tx_opportunity(t(0), 102).unwrap()).collect();
        let run = |got: &[usize]| {
            let mut rx: UmEntity<u32> = UmEntity::new(&cfg(10));
            let mut out = vec![];
            for &i in got {
                rx.on_rx_pdu(t(0), p[i].clone(), &mut out);
            }
            rx.reestablish_rx(&mut out);
            let mut lost = vec![];
            rx.take_lost(&mut lost);
            (out, lost)
        };
        assert_eq!(run(&[0, 2, 3, 4]), (vec![3], vec![1, 2]), "SN 1 missing");
        assert_eq!(run(&[0, 1, 2, 3]), (vec![1, 2], vec![3]), "SN 4, the end of SDU 3, missing");
    }

    // §5.1.2.2.3: an SN beyond VR(UH) moves the window; PDUs that fall below it are delivered
    // without waiting for t-Reordering (5-bit SN, UM_Window_Size 16).
    #[test]
    fn um_window_moves_when_sn_beyond_vr_uh() {
        let mut tx = tx_with(5, &[10; 20]);
        let p: Vec<_> = (0..20)
            .map(|_| tx.on_tx_opportunity(t(0), 11).unwrap())
            .collect();
        let mut rx: UmEntity<u32> = UmEntity::new(&cfg(5));
        let mut out = vec![];
        rx.on_rx_pdu(t(0), p[1].clone(), &mut out); // SN 0 missing
        assert!(out.is_empty());
        rx.on_rx_pdu(t(0), p[17].clone(), &mut out); // VR(UH) = 18, lower edge 2
        assert_eq!(out, vec![2]);
        assert_eq!(rx.vr_ur(), 2);
        assert_eq!(rx.vr_uh(), 18);
    }

    // ---------------------------------------------------------------------------------------
    // Pair over a lossy channel
    // ---------------------------------------------------------------------------------------

    // With random PDU loss, exactly the SDUs with a segment on a lost PDU are missing, the rest
    // arrive in order, and every SDU of which a piece arrived is reported lost exactly once.
    #[test]
    fn um_random_loss_loses_exactly_the_hit_sdus() {
        for seed in 0..12u64 {
            let loss = [0.0, 0.05, 0.1, 0.3][seed as usize % 4];
            let bits = if (seed / 4) % 2 == 0 { 10 } else { 5 };
            let cfg = RlcConfig::Um(cfg(bits));
            let mut pair = Pair::new(&cfg, seed, loss, 0.0);
            let n = 600u32;
            let mut next = 1u32;
            for _ in 0..400 {
                // 1400-byte SDUs, grants that cut them at varying points
                for _ in 0..2 {
                    if next <= n {
                        pair.a.on_sdu(pair.now, next, 1400).unwrap();
                        next += 1;
                    }
                }
                let grant = 700 + (pair.now.as_nanos() / 1_000_000 % 7) as u32 * 300;
                pair.tti(grant, 0);
            }
            // a loss-free tail so the last broken SDU is resolved
            pair.loss = 0.0;
            pair.a.on_sdu(pair.now, n + 1, 100).unwrap();
            pair.run_until_idle(3000, 500);
            let expected: Vec<u32> = (1..=n + 1).filter(|i| !pair.hit_sdus.contains(i)).collect();
            assert_eq!(
                pair.delivered_b, expected,
                "seed {seed} loss {loss} sn bits {bits}"
            );
            let mut lost = vec![];
            pair.b.take_lost(&mut lost);
            let mut sorted = lost.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                lost.len(),
                "an SDU reported twice (seed {seed})"
            );
            // Reported lost: exactly the hit SDUs of which some piece did arrive (an SDU whose
            // every piece was lost is invisible to the receiver).
            let expected_lost: Vec<u32> = (1..=n + 1)
                .filter(|i| pair.hit_sdus.contains(i) && pair.got_piece.contains(i))
                .collect();
            assert_eq!(sorted, expected_lost, "seed {seed} loss {loss}");
            if loss == 0.0 {
                assert!(lost.is_empty());
            }
        }
    }

    // RlcEntity dispatch covers UM.
    #[test]
    fn um_through_rlc_entity() {
        let mut e: RlcEntity<u32> = RlcEntity::new(&RlcConfig::Um(cfg(10)));
        e.on_sdu(t(0), 7, 10).unwrap();
        assert_eq!(e.buffer_status().new_tx_bytes, 12);
        assert!(!e.radio_link_failure());
        assert_eq!(e.untransmitted_and_unacked(), vec![7]);
    }
}
