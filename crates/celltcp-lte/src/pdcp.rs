//! PDCP user-plane data transfer (3GPP TS 36.323).
//!
//! - [`PdcpTx`]: SN/COUNT assignment (§5.1.1), the transmit buffer that holds SDUs until the lower
//!   layer confirms delivery (RLC AM) or transmission (RLC UM), the discard timer (§5.4), release
//!   on a received status report (§5.3.2), and the held SDUs in SN order for lossless handover
//!   (§5.2.1.1).
//! - [`split_forwarding`]: the source's forwarding buffer at handover (`[lte.pdcp]
//!   forwarding_buffer`): the SDUs it keeps for data forwarding to the target eNB, in COUNT order
//!   up to a byte bound, separate from the bearer's steady-state backlog (`buffer`).
//! - [`PdcpRx`]: the receive procedure of a DRB mapped on RLC AM (§5.1.2.1.2): COUNT derivation
//!   with `Next_PDCP_RX_SN`, `RX_HFN` and `Last_Submitted_PDCP_RX_SN`, duplicate discard, in-order
//!   delivery, and the status report (§5.3.1, format §6.2.6).
//!
//! Ciphering, integrity protection and header compression are not modelled; only their effect on
//! sizes is (the data PDU header of §6.2.3). SDUs are opaque `P` values with an explicit size in
//! bytes. The model is sans-IO: every method takes `now` and pushes its outputs into a caller's
//! buffer.

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimTime};

/// Configuration of one PDCP entity (the `PDCP-Config` IE of TS 36.331 §6.3.2, data plane part).
/// This is what a scenario's `[lte.pdcp]` table deserialises into (keys `sn_field_bits`,
/// `discard_timer`, `buffer`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PdcpConfig {
    /// Length of the PDCP SN in bits: 7, 12 (default, `pdcp-SN-Size` len12bits), 15 or 18
    /// (TS 36.323 §6.3.2).
    pub sn_field_bits: u8,
    /// `discardTimer` (TS 36.323 §5.4): how long an SDU may wait in the transmitter before it is
    /// discarded. `None` is "infinity", the value used when the IE is absent (TS 36.331).
    /// Written `discard_timer = "100ms"` in a scenario's `[lte.pdcp]`; absent means infinity.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "celltcp_engine::units::human_duration_opt"
    )]
    pub discard_timer: Option<SimDuration>,
    /// Bytes of SDU payload (headers excluded) the transmitter may hold until the lower layer
    /// confirms delivery (AM) or transmission (UM); an SDU that would exceed it is dropped at the
    /// tail. Implementation choice, not a 3GPP parameter; default 4 MiB. Written
    /// `buffer = "4MB"` in a scenario's `[lte.pdcp]`.
    #[serde(rename = "buffer", with = "celltcp_engine::units::human_bytes")]
    pub tx_buffer_bytes: u64,
    /// Bytes of SDU payload the source eNB keeps for data forwarding at handover (the "PDCP
    /// retransmission queue" study 001 sweeps): of the SDUs it would forward over X2 (TS 36.323
    /// §5.2.1.1, TS 36.300 §10.1.2.3), in COUNT order, those past this bound are not forwarded
    /// but discarded (counted as `sdus_not_forwarded`). `None` (absent, the default): no bound
    /// beyond `buffer`. Written `forwarding_buffer = "256KB"` in a scenario's `[lte.pdcp]`.
    #[serde(
        rename = "forwarding_buffer",
        skip_serializing_if = "Option::is_none",
        with = "forwarding_bytes"
    )]
    pub forwarding_buffer_bytes: Option<u64>,
}

/// `Option<u64>` written as `"256KB"` (absent: `None`), for `forwarding_buffer`.
mod forwarding_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match b {
            Some(b) => celltcp_engine::units::human_bytes::serialize(b, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        #[derive(Deserialize)]
        struct W(#[serde(with = "celltcp_engine::units::human_bytes")] u64);
        Ok(Some(W::deserialize(d)?.0))
    }
}

impl Default for PdcpConfig {
    fn default() -> Self {
        PdcpConfig {
            sn_field_bits: 12,
            discard_timer: None,
            tx_buffer_bytes: 4 * 1024 * 1024,
            forwarding_buffer_bytes: None,
        }
    }
}

impl PdcpConfig {
    /// Size of the data PDU header in bytes (TS 36.323 §6.2.3 for 12-bit SN, §6.2.4 for 7-bit,
    /// §6.2.9 for 15-bit, §6.2.15 for 18-bit): 7-bit → 1, 12-bit → 2, 15-bit → 2, 18-bit → 3.
    pub fn header_bytes(&self) -> u32 {
        match self.sn_field_bits {
            7 => 1,
            12 | 15 => 2,
            _ => 3,
        }
    }

    /// Checks the SN length is one TS 36.323 §6.3.2 defines.
    pub fn validate(&self) -> Result<(), String> {
        match self.sn_field_bits {
            7 | 12 | 15 | 18 => Ok(()),
            b => Err(format!(
                "pdcp sn_field_bits must be 7, 12, 15 or 18; got {b}"
            )),
        }
    }

    /// Number of SNs, `Maximum_PDCP_SN + 1` (TS 36.323 §7.1).
    pub fn sn_space(&self) -> u32 {
        1u32 << self.sn_field_bits
    }

    /// `Reordering_Window`: half the SN space (TS 36.323 §7.1).
    pub fn reordering_window(&self) -> u32 {
        self.sn_space() / 2
    }
}

/// A PDCP data PDU: an SDU with its SN and COUNT (TS 36.323 §6.3.2, §6.3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PdcpPdu<P> {
    /// PDCP SN carried in the header.
    pub sn: u32,
    /// COUNT = HFN · 2^sn_field_bits + SN (§6.3.3). Not on the air: the receiver derives its own.
    pub count: u32,
    /// The SDU.
    pub sdu: P,
    /// SDU size in bytes.
    pub sdu_bytes: u32,
    /// PDU size in bytes, header included.
    pub bytes: u32,
}

/// A PDCP status report (TS 36.323 §6.2.6, §6.3.9, §6.3.10).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusReport {
    /// First Missing PDCP SN (FMS): every SDU before it has been received.
    pub fms: u32,
    /// `bitmap[i]` is true when the SDU with SN `FMS + 1 + i` (mod SN space) has been received.
    /// Its length is a multiple of 8 (§5.3.1), trailing bits being false.
    pub bitmap: Vec<bool>,
}

impl StatusReport {
    /// Size of the status report control PDU in bytes for an SN of `sn_field_bits` bits: a 2-byte
    /// header with a 12-bit FMS (§6.2.6), 3 bytes with a 15-bit (§6.2.10) or 18-bit (§6.2.16) FMS,
    /// plus the bitmap.
    pub fn bytes(&self, sn_field_bits: u8) -> u32 {
        let header = if sn_field_bits <= 12 { 2 } else { 3 };
        header + self.bitmap.len().div_ceil(8) as u32
    }
}

/// Counters of a [`PdcpTx`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PdcpTxStats {
    /// SDUs accepted and numbered.
    pub sdus_tx: u64,
    /// SDU bytes accepted.
    pub sdu_bytes_tx: u64,
    /// SDUs dropped because the transmit buffer was full.
    pub sdus_dropped_buffer: u64,
    /// SDUs discarded by the discard timer (§5.4).
    pub sdus_discarded_timer: u64,
    /// SDUs released because the lower layer confirmed them.
    pub sdus_released_lower_layer: u64,
    /// SDUs released by a status report (§5.3.2).
    pub sdus_released_status_report: u64,
}

#[derive(Clone, Debug)]
struct Held<P> {
    pdu: PdcpPdu<P>,
    /// When the discard timer expires (`SimTime::MAX` when it is infinite).
    deadline: SimTime,
}

/// The transmitting PDCP entity (TS 36.323 §5.1.1).
#[derive(Clone, Debug)]
pub struct PdcpTx<P> {
    cfg: PdcpConfig,
    /// COUNT of the next SDU: `TX_HFN` in the high bits, `Next_PDCP_TX_SN` in the low ones.
    next_count: u32,
    /// Held SDUs, index `i` ↔ COUNT `front_count + i`; `None` marks a released one. The front is
    /// always `Some` (or the deque is empty).
    held: VecDeque<Option<Held<P>>>,
    front_count: u32,
    held_bytes: u64,
    stats: PdcpTxStats,
}

impl<P: Copy + std::fmt::Debug> PdcpTx<P> {
    /// A transmitter with `Next_PDCP_TX_SN = 0` and `TX_HFN = 0` (§7.1).
    pub fn new(cfg: PdcpConfig) -> Self {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        PdcpTx {
            cfg,
            next_count: 0,
            held: VecDeque::new(),
            front_count: 0,
            held_bytes: 0,
            stats: PdcpTxStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &PdcpConfig {
        &self.cfg
    }

    /// `Next_PDCP_TX_SN` (§7.1).
    pub fn next_pdcp_tx_sn(&self) -> u32 {
        self.next_count & (self.cfg.sn_space() - 1)
    }

    /// `TX_HFN` (§7.1).
    pub fn tx_hfn(&self) -> u32 {
        self.next_count >> self.cfg.sn_field_bits
    }

    /// An SDU from the upper layer (§5.1.1): numbered with the next SN and held until the lower
    /// layer confirms it. `Err(sdu)` (tail drop) when holding it would exceed `tx_buffer_bytes`, or
    /// when the held SDUs would span a full reordering window (half the SN space), past which the
    /// receiver could no longer tell new SNs from old ones.
    pub fn on_sdu(&mut self, now: SimTime, sdu: P, bytes: u32) -> Result<PdcpPdu<P>, P> {
        let span = self.next_count.wrapping_sub(self.front_count);
        if self.held_bytes + bytes as u64 > self.cfg.tx_buffer_bytes
            || (!self.held.is_empty() && span >= self.cfg.reordering_window())
        {
            self.stats.sdus_dropped_buffer += 1;
            return Err(sdu);
        }
        let count = self.next_count;
        let pdu = PdcpPdu {
            sn: count & (self.cfg.sn_space() - 1),
            count,
            sdu,
            sdu_bytes: bytes,
            bytes: bytes + self.cfg.header_bytes(),
        };
        // §5.1.1: Next_PDCP_TX_SN wraps to 0 and TX_HFN is incremented; both are the COUNT.
        self.next_count = count.wrapping_add(1);
        if self.held.is_empty() {
            self.front_count = count;
        }
        let deadline = match self.cfg.discard_timer {
            Some(d) => now + d,
            None => SimTime::MAX,
        };
        self.held.push_back(Some(Held { pdu, deadline }));
        self.held_bytes += bytes as u64;
        self.stats.sdus_tx += 1;
        self.stats.sdu_bytes_tx += bytes as u64;
        Ok(pdu)
    }

    /// The index in `held` of the held SDU with SN `sn`, if any.
    fn index_of_sn(&self, sn: u32) -> Option<usize> {
        let mask = self.cfg.sn_space() - 1;
        let front_sn = self.front_count & mask;
        let idx = (sn.wrapping_sub(front_sn) & mask) as usize;
        match self.held.get(idx) {
            Some(Some(h)) if h.pdu.sn == sn => Some(idx),
            _ => None,
        }
    }

    /// Releases the SDU at `idx` without trimming the front (indices stay valid).
    fn take(&mut self, idx: usize) -> Option<PdcpPdu<P>> {
        let h = self.held[idx].take()?;
        self.held_bytes -= h.pdu.sdu_bytes as u64;
        Some(h.pdu)
    }

    /// Pops released entries off the front so that the front is held (or the deque empty).
    fn trim_front(&mut self) {
        while let Some(None) = self.held.front() {
            self.held.pop_front();
            self.front_count = self.front_count.wrapping_add(1);
        }
    }

    fn release(&mut self, idx: usize) -> Option<PdcpPdu<P>> {
        let pdu = self.take(idx);
        self.trim_front();
        pdu
    }

    /// The lower layer (RLC AM) confirms the SDU with SN `sn` was delivered: stop holding it and
    /// stop its discard timer (§5.4). Unknown or already released SNs are ignored.
    pub fn on_lower_layer_ack(&mut self, sn: u32) {
        if let Some(idx) = self.index_of_sn(sn) {
            self.release(idx);
            self.stats.sdus_released_lower_layer += 1;
        }
    }

    /// Whether the SDU with COUNT `count` is still held (not confirmed, discarded or released).
    pub fn holds(&self, count: u32) -> bool {
        let idx = count.wrapping_sub(self.front_count) as usize;
        matches!(self.held.get(idx), Some(Some(h)) if h.pdu.count == count)
    }

    /// The lower layer refused the SDU with SN `sn` (its buffer was full): stop holding it,
    /// counted as neither delivered nor discarded here (the caller counts the drop).
    pub fn forget(&mut self, sn: u32) {
        if let Some(idx) = self.index_of_sn(sn) {
            self.release(idx);
        }
    }

    /// The lower layer (RLC UM) transmitted the SDU with SN `sn`: for UM bearers nothing is
    /// retransmitted, so the SDU is released at transmission.
    pub fn on_transmitted(&mut self, sn: u32) {
        self.on_lower_layer_ack(sn);
    }

    /// When the next discard timer expires, `None` if no SDU is held or the timer is infinite.
    pub fn next_deadline(&self) -> Option<SimTime> {
        match self.held.front() {
            Some(Some(h)) if h.deadline != SimTime::MAX => Some(h.deadline),
            _ => None,
        }
    }

    /// Discard timer expiry (§5.4): every held SDU whose timer expired at or before `now` is
    /// discarded and pushed onto `discarded` in SN order; the caller asks RLC to discard them.
    pub fn on_timeout(&mut self, now: SimTime, discarded: &mut Vec<PdcpPdu<P>>) {
        // SDUs arrive in COUNT order and share one timer length, so deadlines are monotone.
        while let Some(Some(h)) = self.held.front() {
            if h.deadline > now {
                break;
            }
            if let Some(pdu) = self.release(0) {
                self.stats.sdus_discarded_timer += 1;
                discarded.push(pdu);
            }
        }
    }

    /// The held SDUs in SN (COUNT) order: what the source forwards to the target eNB, or the UE
    /// retransmits, for lossless handover (§5.2.1.1).
    pub fn held(&self) -> impl Iterator<Item = &PdcpPdu<P>> {
        self.held.iter().flatten().map(|h| &h.pdu)
    }

    /// A status report from the peer receiver (§5.3.2): release the SDUs with SN before FMS
    /// (within half the SN space) and those the bitmap marks as received.
    pub fn on_status_report(&mut self, report: &StatusReport) {
        let mask = self.cfg.sn_space() - 1;
        let window = self.cfg.reordering_window();
        for idx in 0..self.held.len() {
            let Some(h) = &self.held[idx] else { continue };
            let sn = h.pdu.sn;
            let behind = report.fms.wrapping_sub(sn) & mask;
            let ahead = sn.wrapping_sub(report.fms) & mask;
            let received = (1..=window).contains(&behind)
                || (ahead >= 1 && report.bitmap.get(ahead as usize - 1) == Some(&true));
            if received && self.take(idx).is_some() {
                self.stats.sdus_released_status_report += 1;
            }
        }
        self.trim_front();
    }

    /// SDU bytes held.
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    /// Counters.
    pub fn stats(&self) -> PdcpTxStats {
        self.stats
    }
}

/// Counters of a [`PdcpRx`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PdcpRxStats {
    /// SDUs delivered to the upper layer.
    pub delivered_sdus: u64,
    /// SDU bytes delivered.
    pub delivered_bytes: u64,
    /// PDUs discarded as duplicates: an SDU with the same COUNT was stored or already delivered.
    pub duplicates_discarded: u64,
    /// PDUs discarded because they arrived after their COUNT had been passed over by a flush (or
    /// more than a reordering window late).
    pub out_of_window_discarded: u64,
}

/// Most COUNT ranges skipped by flushes that are remembered to classify late arrivals.
const MAX_SKIPPED_RANGES: usize = 32;

/// The receiving PDCP entity of a DRB mapped on RLC AM (TS 36.323 §5.1.2.1.2).
#[derive(Clone, Debug)]
pub struct PdcpRx<P> {
    cfg: PdcpConfig,
    /// `Next_PDCP_RX_SN` (§7.1).
    next_pdcp_rx_sn: u32,
    /// `RX_HFN` (§7.1).
    rx_hfn: u32,
    /// `Last_Submitted_PDCP_RX_SN` (§7.1).
    last_submitted_pdcp_rx_sn: u32,
    /// COUNT of the last submitted SDU (wrapping: `u32::MAX` before the first).
    last_submitted_count: u32,
    /// Stored SDUs: index `i` ↔ COUNT `last_submitted_count + 1 + i`.
    stored: VecDeque<Option<(P, u32)>>,
    /// Whether out-of-order SDUs are held for reordering (after re-establishment).
    reordering: bool,
    /// COUNT ranges `[start, end)` passed over by flushes without delivery.
    skipped: VecDeque<(u32, u32)>,
    /// SDUs discarded since the last [`PdcpRx::take_discarded`] without ever being delivered
    /// (out of window: their COUNT passed over). Duplicates are not among them: a copy of
    /// theirs was delivered or is stored.
    discarded: Vec<P>,
    stats: PdcpRxStats,
}

impl<P: Copy + std::fmt::Debug> PdcpRx<P> {
    /// A receiver in its initial state (§7.1): `Next_PDCP_RX_SN = 0`, `RX_HFN = 0`,
    /// `Last_Submitted_PDCP_RX_SN = Maximum_PDCP_SN`; reordering off.
    pub fn new(cfg: PdcpConfig) -> Self {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        PdcpRx {
            cfg,
            next_pdcp_rx_sn: 0,
            rx_hfn: 0,
            last_submitted_pdcp_rx_sn: cfg.sn_space() - 1,
            last_submitted_count: u32::MAX,
            stored: VecDeque::new(),
            reordering: false,
            skipped: VecDeque::new(),
            discarded: Vec::new(),
            stats: PdcpRxStats::default(),
        }
    }

    /// Holds out-of-order SDUs until the gap is filled (`true`, the behaviour for PDUs received
    /// because of the re-establishment of lower layers, §5.1.2.1.2), or delivers every SDU on
    /// arrival together with the consecutive stored ones (`false`, normal operation over RLC AM,
    /// which delivers in order). The caller turns it on at handover and off (after a [`flush`])
    /// once the forwarded data has drained, as a t-Reordering would.
    ///
    /// [`flush`]: PdcpRx::flush
    pub fn set_reordering(&mut self, on: bool) {
        self.reordering = on;
    }

    /// `Next_PDCP_RX_SN`.
    pub fn next_pdcp_rx_sn(&self) -> u32 {
        self.next_pdcp_rx_sn
    }

    /// `RX_HFN`.
    pub fn rx_hfn(&self) -> u32 {
        self.rx_hfn
    }

    /// `Last_Submitted_PDCP_RX_SN`.
    pub fn last_submitted_pdcp_rx_sn(&self) -> u32 {
        self.last_submitted_pdcp_rx_sn
    }

    fn set_last_submitted(&mut self, count: u32) {
        self.last_submitted_count = count;
        self.last_submitted_pdcp_rx_sn = count & (self.cfg.sn_space() - 1);
    }

    /// Whether the SDU with COUNT `count` reached this receiver (delivered, or stored out of
    /// order), as its status report would say (§5.3.1).
    pub fn has_received(&self, count: u32) -> bool {
        let ahead = count.wrapping_sub(self.last_submitted_count.wrapping_add(1));
        if (ahead as i32) < 0 {
            return !self.was_skipped(count);
        }
        matches!(self.stored.get(ahead as usize), Some(Some(_)))
    }

    /// Pops the front stored slot (COUNT `last_submitted_count + 1`), delivering it if present.
    fn pop_front(&mut self, delivered: &mut Vec<P>) {
        let count = self.last_submitted_count.wrapping_add(1);
        match self.stored.pop_front().flatten() {
            Some((sdu, bytes)) => {
                delivered.push(sdu);
                self.stats.delivered_sdus += 1;
                self.stats.delivered_bytes += bytes as u64;
            }
            None => self.note_skipped(count),
        }
        self.set_last_submitted(count);
    }

    fn note_skipped(&mut self, count: u32) {
        if let Some(last) = self.skipped.back_mut() {
            if last.1 == count {
                last.1 = count.wrapping_add(1);
                return;
            }
        }
        if self.skipped.len() == MAX_SKIPPED_RANGES {
            self.skipped.pop_front();
        }
        self.skipped.push_back((count, count.wrapping_add(1)));
    }

    fn was_skipped(&self, count: u32) -> bool {
        self.skipped
            .iter()
            .any(|&(s, e)| count.wrapping_sub(s) < e.wrapping_sub(s))
    }

    /// A PDU from the lower layer (§5.1.2.1.2). SDUs ready for the upper layer are pushed onto
    /// `delivered` in ascending COUNT order.
    pub fn on_pdu(&mut self, _now: SimTime, pdu: PdcpPdu<P>, delivered: &mut Vec<P>) {
        let sn = pdu.sn as i64;
        let space = self.cfg.sn_space();
        let bits = self.cfg.sn_field_bits;
        let w = self.cfg.reordering_window() as i64;
        let next = self.next_pdcp_rx_sn as i64;
        let last = self.last_submitted_pdcp_rx_sn as i64;
        let count_of = |hfn: u32| (hfn << bits) | pdu.sn;

        // §5.1.2.1.2, first branch: at or before Last_Submitted_PDCP_RX_SN within the window,
        // i.e. a duplicate of something delivered (or passed over): discard.
        if sn - last > w || (0..w).contains(&(last - sn)) {
            let count = if sn > next {
                count_of(self.rx_hfn.wrapping_sub(1))
            } else {
                count_of(self.rx_hfn)
            };
            if self.was_skipped(count) {
                self.stats.out_of_window_discarded += 1;
                self.discarded.push(pdu.sdu);
            } else {
                self.stats.duplicates_discarded += 1;
            }
            return;
        }
        let count = if next - sn > w {
            // The SN wrapped: a new HFN.
            self.rx_hfn = self.rx_hfn.wrapping_add(1);
            self.next_pdcp_rx_sn = pdu.sn + 1;
            count_of(self.rx_hfn)
        } else if sn - next >= w {
            // An old SN from before the last wrap.
            count_of(self.rx_hfn.wrapping_sub(1))
        } else if sn >= next {
            let c = count_of(self.rx_hfn);
            self.next_pdcp_rx_sn = pdu.sn + 1;
            if self.next_pdcp_rx_sn == space {
                self.next_pdcp_rx_sn = 0;
                self.rx_hfn = self.rx_hfn.wrapping_add(1);
            }
            c
        } else {
            count_of(self.rx_hfn)
        };
        // The slot in the store; the first branch guarantees it lies within the window.
        let idx = count
            .wrapping_sub(self.last_submitted_count)
            .wrapping_sub(1) as usize;
        if idx >= w as usize {
            self.stats.out_of_window_discarded += 1;
            self.discarded.push(pdu.sdu);
            return;
        }
        if idx == 0 && self.stored.is_empty() {
            // In sequence with nothing stored (the common case): deliver at once, as storing
            // it and popping the front would.
            delivered.push(pdu.sdu);
            self.stats.delivered_sdus += 1;
            self.stats.delivered_bytes += pdu.sdu_bytes as u64;
            self.set_last_submitted(count);
            return;
        }
        if self.stored.len() <= idx {
            self.stored.resize(idx + 1, None);
        }
        if self.stored[idx].is_some() {
            self.stats.duplicates_discarded += 1;
            return;
        }
        self.stored[idx] = Some((pdu.sdu, pdu.sdu_bytes));
        if !self.reordering {
            // Normal operation: deliver from this SDU on. Stored SDUs with a lower COUNT (left
            // from a reordering phase) go first so delivery stays in ascending COUNT order.
            for _ in 0..idx {
                self.pop_front(delivered);
            }
        }
        // Deliver the consecutive run starting right after Last_Submitted_PDCP_RX_SN.
        while let Some(Some(_)) = self.stored.front() {
            self.pop_front(delivered);
        }
    }

    /// Moves the SDUs discarded out of window since the last call (never delivered: lost) into
    /// `out`, for the caller to count as dropped.
    pub fn take_discarded(&mut self, out: &mut Vec<P>) {
        out.append(&mut self.discarded);
    }

    /// Delivers every stored SDU in ascending COUNT order, passing over the gaps, as on expiry of
    /// t-Reordering (§5.1.2.1.4). Later arrivals of the skipped COUNTs are discarded.
    pub fn flush(&mut self, delivered: &mut Vec<P>) {
        while !self.stored.is_empty() {
            self.pop_front(delivered);
        }
    }

    /// The status report (§5.3.1): FMS is the SN after `Last_Submitted_PDCP_RX_SN` (the first
    /// missing one); the bitmap covers the stored out-of-sequence SDUs, rounded up to whole bytes.
    pub fn status_report(&self) -> StatusReport {
        let mask = self.cfg.sn_space() - 1;
        let fms = self.last_submitted_count.wrapping_add(1) & mask;
        // stored[0] is always missing (else it would have been delivered).
        let last = self.stored.iter().rposition(|s| s.is_some());
        let bitmap = match last {
            Some(l) if l >= 1 => {
                let mut b: Vec<bool> = self
                    .stored
                    .iter()
                    .skip(1)
                    .take(l)
                    .map(|s| s.is_some())
                    .collect();
                b.resize(l.div_ceil(8) * 8, false);
                b
            }
            _ => Vec::new(),
        };
        StatusReport { fms, bitmap }
    }

    /// Number of out-of-order SDUs stored.
    pub fn stored_sdus(&self) -> usize {
        self.stored.iter().flatten().count()
    }

    /// Counters.
    pub fn stats(&self) -> PdcpRxStats {
        self.stats
    }
}

/// The source's forwarding buffer at handover (TS 36.323 §5.2.1.1, TS 36.300 §10.1.2.3): of
/// `candidates` (the SDUs the forwarding mode would send over X2, in ascending COUNT order), the
/// leading ones whose SDU bytes fit in `bound` are forwarded; the rest (first element of the
/// pair: forwarded, second: not forwarded) are the ones a full buffer did not keep. Tail drop as
/// for [`PdcpTx::on_sdu`]: an SDU that would exceed the bound is not kept, and neither is any
/// later one (the buffer is a FIFO filled in COUNT order). `None`: everything is forwarded.
pub fn split_forwarding<P>(candidates: Vec<PdcpPdu<P>>, bound: Option<u64>) -> (Vec<PdcpPdu<P>>, Vec<PdcpPdu<P>>) {
    let Some(bound) = bound else { return (candidates, Vec::new()) };
    let mut kept = 0u64;
    let cut = candidates
        .iter()
        .position(|p| {
            kept += u64::from(p.sdu_bytes);
            kept > bound
        })
        .unwrap_or(candidates.len());
    let mut forwarded = candidates;
    let rest = forwarded.split_off(cut);
    (forwarded, rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::rng::{component_id, component_rng};
    use rand::Rng;

    fn cfg(bits: u8) -> PdcpConfig {
        PdcpConfig {
            sn_field_bits: bits,
            ..PdcpConfig::default()
        }
    }

    const T0: SimTime = SimTime::ZERO;

    #[test]
    fn header_sizes_follow_6_2() {
        assert_eq!(cfg(7).header_bytes(), 1);
        assert_eq!(cfg(12).header_bytes(), 2);
        assert_eq!(cfg(15).header_bytes(), 2);
        assert_eq!(cfg(18).header_bytes(), 3);
        assert!(cfg(10).validate().is_err());
        use serde::de::value::{Error, MapDeserializer};
        use serde::Deserialize;
        let de = MapDeserializer::<_, Error>::new([("sn_field_bits", 15u8)].into_iter());
        let c = PdcpConfig::deserialize(de).unwrap();
        assert_eq!(c.sn_field_bits, 15);
        assert_eq!(c.discard_timer, None);
        assert_eq!(c.tx_buffer_bytes, PdcpConfig::default().tx_buffer_bytes);
        let de = MapDeserializer::<_, Error>::new([("sn_bits", 15u8)].into_iter());
        assert!(PdcpConfig::deserialize(de).is_err(), "deny_unknown_fields");
    }

    /// §5.1.2.1.2 with reordering on: whatever the order and duplication of arrivals, each SDU
    /// is delivered exactly once and in COUNT order, across several SN wraps.
    #[test]
    fn pdcp_rx_in_order_without_duplicates_under_reordering() {
        for bits in [7u8, 12] {
            for seed in 0..40u64 {
                let c = cfg(bits);
                let mut rng = component_rng(seed, component_id("test", "pdcp_reorder"));
                let mut tx = PdcpTx::<u32>::new(c);
                let mut rx = PdcpRx::<u32>::new(c);
                rx.set_reordering(true);
                let n = 3 * c.sn_space() + 17;
                // Arrivals: each PDU is released at a random delay below a quarter window, and
                // one in five is duplicated with another delay.
                let max_delay = (c.reordering_window() / 4) as u64;
                let mut arrivals: Vec<(u64, u64, PdcpPdu<u32>)> = Vec::new();
                for i in 0..n {
                    let pdu = tx.on_sdu(T0, i, 100).unwrap();
                    tx.on_lower_layer_ack(pdu.sn);
                    arrivals.push((i as u64 + rng.gen_range(0..max_delay), rng.gen(), pdu));
                    if rng.gen_bool(0.2) {
                        arrivals.push((i as u64 + rng.gen_range(0..max_delay), rng.gen(), pdu));
                    }
                }
                arrivals.sort_by_key(|a| (a.0, a.1));
                let mut out = Vec::new();
                for (_, _, pdu) in arrivals {
                    rx.on_pdu(T0, pdu, &mut out);
                }
                assert_eq!(out, (0..n).collect::<Vec<_>>(), "bits {bits} seed {seed}");
                assert_eq!(rx.stored_sdus(), 0);
                assert_eq!(rx.stats().delivered_sdus, n as u64);
                assert_eq!(rx.stats().out_of_window_discarded, 0);
            }
        }
    }

    /// In normal operation (RLC AM delivers in order), SDUs flow straight through and HFN
    /// advances at each wrap; duplicates are dropped.
    #[test]
    fn pdcp_sn_wraparound_7_and_12_bits() {
        for bits in [7u8, 12] {
            let c = cfg(bits);
            let mut tx = PdcpTx::<u32>::new(c);
            let mut rx = PdcpRx::<u32>::new(c);
            let n = 2 * c.sn_space() + 5;
            let mut out = Vec::new();
            for i in 0..n {
                let pdu = tx.on_sdu(T0, i, 10).unwrap();
                assert_eq!(pdu.sn, i % c.sn_space());
                assert_eq!(pdu.count, i);
                tx.on_lower_layer_ack(pdu.sn);
                rx.on_pdu(T0, pdu, &mut out);
                // a duplicate right after is discarded
                rx.on_pdu(T0, pdu, &mut out);
            }
            assert_eq!(out, (0..n).collect::<Vec<_>>());
            assert_eq!(tx.tx_hfn(), 2);
            assert_eq!(tx.next_pdcp_tx_sn(), 5);
            assert_eq!(rx.rx_hfn(), 2);
            assert_eq!(rx.next_pdcp_rx_sn(), 5);
            assert_eq!(rx.last_submitted_pdcp_rx_sn(), 4);
            assert_eq!(rx.stats().duplicates_discarded, n as u64);
            assert_eq!(tx.held_bytes(), 0);
        }
    }

    /// t-Reordering-like flush passes over a gap; the late SDU is then out of window.
    #[test]
    fn pdcp_flush_skips_gap_and_discards_late_arrival() {
        let c = cfg(12);
        let mut tx = PdcpTx::<u32>::new(c);
        let mut rx = PdcpRx::<u32>::new(c);
        rx.set_reordering(true);
        let pdus: Vec<_> = (0..5).map(|i| tx.on_sdu(T0, i, 10).unwrap()).collect();
        let mut out = Vec::new();
        for i in [0usize, 2, 3] {
            rx.on_pdu(T0, pdus[i], &mut out);
        }
        assert_eq!(out, vec![0]);
        rx.flush(&mut out);
        assert_eq!(out, vec![0, 2, 3]);
        rx.on_pdu(T0, pdus[1], &mut out);
        assert_eq!(rx.stats().out_of_window_discarded, 1);
        rx.on_pdu(T0, pdus[4], &mut out);
        assert_eq!(out, vec![0, 2, 3, 4]);
    }

    /// Reordering switched off with SDUs still stored (a gap never filled): the next in-order
    /// arrival first releases the stored ones, so delivery stays in ascending COUNT order.
    #[test]
    fn pdcp_reordering_off_keeps_count_order() {
        let c = cfg(12);
        let mut tx = PdcpTx::<u32>::new(c);
        let mut rx = PdcpRx::<u32>::new(c);
        rx.set_reordering(true);
        let pdus: Vec<_> = (0..6).map(|i| tx.on_sdu(T0, i, 10).unwrap()).collect();
        let mut out = Vec::new();
        rx.on_pdu(T0, pdus[0], &mut out);
        rx.on_pdu(T0, pdus[2], &mut out);
        rx.on_pdu(T0, pdus[3], &mut out);
        assert_eq!(out, vec![0]);
        assert_eq!(rx.stored_sdus(), 2);
        rx.set_reordering(false);
        rx.on_pdu(T0, pdus[5], &mut out);
        assert_eq!(out, vec![0, 2, 3, 5]);
        assert_eq!(rx.last_submitted_pdcp_rx_sn(), 5);
        rx.on_pdu(T0, pdus[4], &mut out);
        rx.on_pdu(T0, pdus[1], &mut out);
        assert_eq!(out.len(), 4);
        assert_eq!(rx.stats().out_of_window_discarded, 2);
    }

    /// §5.4: SDUs are discarded when their timer expires, in SN order, and acked ones are not.
    #[test]
    fn pdcp_discard_timer() {
        let c = PdcpConfig {
            discard_timer: Some(SimDuration::from_millis(100)),
            ..cfg(12)
        };
        let mut tx = PdcpTx::<u32>::new(c);
        assert_eq!(tx.next_deadline(), None);
        let a = tx.on_sdu(SimTime::from_millis(0), 0, 10).unwrap();
        tx.on_sdu(SimTime::from_millis(10), 1, 10).unwrap();
        tx.on_sdu(SimTime::from_millis(20), 2, 10).unwrap();
        tx.on_sdu(SimTime::from_millis(30), 3, 10).unwrap();
        assert_eq!(tx.next_deadline(), Some(SimTime::from_millis(100)));
        tx.on_lower_layer_ack(a.sn);
        assert_eq!(tx.next_deadline(), Some(SimTime::from_millis(110)));
        let mut d = Vec::new();
        tx.on_timeout(SimTime::from_millis(109), &mut d);
        assert!(d.is_empty());
        tx.on_timeout(SimTime::from_millis(120), &mut d);
        assert_eq!(d.iter().map(|p| p.sdu).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(tx.next_deadline(), Some(SimTime::from_millis(130)));
        assert_eq!(tx.held_bytes(), 10);
        assert_eq!(tx.stats().sdus_discarded_timer, 2);
        // infinite timer: never a deadline
        let mut tx2 = PdcpTx::<u32>::new(cfg(12));
        tx2.on_sdu(T0, 0, 10).unwrap();
        assert_eq!(tx2.next_deadline(), None);
    }

    /// §5.3: the receiver's report releases at the transmitter exactly the SDUs it has received.
    #[test]
    fn pdcp_status_report_round_trip() {
        for bits in [12u8, 15] {
            let c = cfg(bits);
            let mut tx = PdcpTx::<u32>::new(c);
            let mut rx = PdcpRx::<u32>::new(c);
            rx.set_reordering(true);
            // start near the wrap so the report straddles it
            let mut out = Vec::new();
            for i in 0..c.sn_space() - 10 {
                let p = tx.on_sdu(T0, i, 10).unwrap();
                tx.on_lower_layer_ack(p.sn);
                rx.on_pdu(T0, p, &mut out);
            }
            let base = c.sn_space() - 10;
            let pdus: Vec<_> = (0..40)
                .map(|i| tx.on_sdu(T0, base + i, 10).unwrap())
                .collect();
            let received: Vec<u32> = (0..40)
                .filter(|i| i % 3 != 1 && *i != 0 || *i < 4)
                .collect();
            for &i in &received {
                rx.on_pdu(T0, pdus[i as usize], &mut out);
            }
            let report = rx.status_report();
            assert_eq!(report.fms, (base + 4) % c.sn_space());
            assert_eq!(report.bitmap.len() % 8, 0);
            tx.on_status_report(&report);
            let held: Vec<u32> = tx.held().map(|p| p.sdu - base).collect();
            let expect: Vec<u32> = (0..40).filter(|i| !received.contains(i)).collect();
            assert_eq!(held, expect, "bits {bits}");
            assert_eq!(tx.held_bytes(), 10 * expect.len() as u64);
            assert_eq!(
                tx.stats().sdus_released_status_report,
                received.len() as u64
            );
            assert_eq!(
                report.bytes(bits),
                if bits == 12 { 2 } else { 3 } + report.bitmap.len() as u32 / 8
            );
        }
    }

    #[test]
    fn pdcp_empty_status_report() {
        let c = cfg(12);
        let rx = PdcpRx::<u32>::new(c);
        let r = rx.status_report();
        assert_eq!(r.fms, 0);
        assert!(r.bitmap.is_empty());
    }

    /// Drop-tail at `tx_buffer_bytes`, space freed by acknowledgements; and the reordering
    /// window bound.
    #[test]
    fn pdcp_tx_buffer_limit() {
        let c = PdcpConfig {
            tx_buffer_bytes: 1000,
            ..cfg(12)
        };
        let mut tx = PdcpTx::<u32>::new(c);
        let p0 = tx.on_sdu(T0, 0, 600).unwrap();
        assert_eq!(p0.bytes, 602);
        assert_eq!(tx.on_sdu(T0, 1, 500), Err(1));
        let p2 = tx.on_sdu(T0, 2, 400).unwrap();
        assert_eq!(p2.sn, 1, "a dropped SDU takes no SN");
        assert_eq!(tx.held_bytes(), 1000);
        tx.on_transmitted(p0.sn);
        assert_eq!(tx.held_bytes(), 400);
        assert!(tx.on_sdu(T0, 3, 500).is_ok());
        assert_eq!(tx.stats().sdus_dropped_buffer, 1);
        assert_eq!(tx.held().map(|p| p.sdu).collect::<Vec<_>>(), vec![2, 3]);

        let mut tx7 = PdcpTx::<u32>::new(cfg(7));
        for i in 0..64 {
            tx7.on_sdu(T0, i, 1).unwrap();
        }
        assert!(
            tx7.on_sdu(T0, 64, 1).is_err(),
            "would span more than the window"
        );
        tx7.on_lower_layer_ack(0);
        assert!(tx7.on_sdu(T0, 64, 1).is_ok());
    }

    /// The forwarding buffer keeps the leading SDUs (COUNT order) whose bytes fit the bound,
    /// checked against the definition over random SDU sizes and bounds: the kept prefix fits,
    /// adding the next SDU would not, nothing is reordered or lost from the union, and `None`
    /// keeps everything.
    #[test]
    fn forwarding_buffer_keeps_the_leading_sdus_that_fit() {
        let c = cfg(12);
        let mut rng = component_rng(7, component_id("pdcp", "forwarding"));
        for _ in 0..200 {
            let mut tx = PdcpTx::<u32>::new(c);
            let n = rng.gen_range(0..40);
            for i in 0..n {
                tx.on_sdu(T0, i, rng.gen_range(40..1500)).unwrap();
            }
            let held: Vec<PdcpPdu<u32>> = tx.held().copied().collect();
            let bound = rng.gen_range(0..30_000u64);
            let (fwd, rest) = split_forwarding(held.clone(), Some(bound));
            let fwd_bytes: u64 = fwd.iter().map(|p| u64::from(p.sdu_bytes)).sum();
            assert!(fwd_bytes <= bound, "{fwd_bytes} > {bound}");
            if let Some(next) = rest.first() {
                assert!(fwd_bytes + u64::from(next.sdu_bytes) > bound, "the next SDU would have fitted");
            }
            let joined: Vec<u32> = fwd.iter().chain(&rest).map(|p| p.count).collect();
            assert_eq!(joined, held.iter().map(|p| p.count).collect::<Vec<_>>());
            let (all, none) = split_forwarding(held.clone(), None);
            assert_eq!((all.len(), none.len()), (held.len(), 0));
        }
        // By hand: 600 + 500 > 1000, so only the first of three is kept (tail drop, even though
        // the third, 300 B, would fit after it).
        let mut tx = PdcpTx::<u32>::new(c);
        for (i, b) in [600, 500, 300].into_iter().enumerate() {
            tx.on_sdu(T0, i as u32, b).unwrap();
        }
        let (fwd, rest) = split_forwarding(tx.held().copied().collect(), Some(1000));
        assert_eq!(fwd.iter().map(|p| p.sdu).collect::<Vec<_>>(), vec![0]);
        assert_eq!(rest.iter().map(|p| p.sdu).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(PdcpConfig::default().forwarding_buffer_bytes, None, "unbounded unless set");
    }
}
