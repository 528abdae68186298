//! Radio Link Control, 3GPP TS 36.322 (E-UTRA RLC), Rel-8 PDU formats.
//!
//! One [`RlcEntity`] per side per radio bearer (§4.2.1). An AM entity is bidirectional by
//! definition (§4.2.1.3: it sends data and STATUS, and receives both). For TM and UM the spec has
//! a separate transmitting and receiving entity (§4.2.1.1, §4.2.1.2); here one struct holds both
//! halves, because both directions of a TCP bearer carry data (downlink segments, uplink ACKs).
//!
//! - [`tm`]: transparent mode (§5.1.1): whole SDUs, no header.
//! - [`um`]: unacknowledged mode (§5.1.2): segmentation/concatenation, reordering, t-Reordering.
//! - [`am`]: acknowledged mode (§5.1.3, §5.2): ARQ with STATUS PDUs, re-segmentation, polling,
//!   t-PollRetransmit, t-StatusProhibit, maxRetxThreshold.
//!
//! Payloads are generic (`P: Copy + Debug`, usually a packet value); sizes are explicit, so the
//! model never touches bytes. Each [`Segment`] records which SDU it came from and which bytes it
//! carries, so the receiver reassembles by offsets exactly as the FI/LI fields would let a real
//! receiver do (§6.2.2). PDU sizes on air ([`RlcPdu::bytes`]) follow §6.2.1.
//!
//! The MAC drives the entity: [`RlcEntity::buffer_status`] every TTI (O(1)),
//! [`RlcEntity::on_tx_opportunity`] per grant (one PDU per call; the MAC may call again with the
//! bytes left over, as the spec lets a STATUS PDU and a data PDU share one transport block), and
//! [`RlcEntity::on_timeout`] at [`RlcEntity::next_deadline`]. Callers must run `on_timeout` for
//! every deadline `<= now` before other calls at `now`.

use std::collections::VecDeque;
use std::fmt::Debug;

use celltcp_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

pub mod am;
pub mod tm;
pub mod um;

pub use am::AmEntity;
pub use tm::TmEntity;
pub use um::UmEntity;

/// Largest value of an 11-bit LI field (§6.2.2): a data field element that is followed by
/// another one in the same PDU can be at most this long.
pub const LI_MAX_BYTES: u32 = 2047;
/// SOend value meaning "up to the last byte of the AMD PDU" (§6.2.2).
pub const SO_END_LAST_BYTE: u32 = 0x7FFF;
/// AM sequence number modulus for the 10-bit SN (§7.1, §6.2.2).
pub const AM_SN_MODULUS: u16 = 1024;
/// AM_Window_Size for the 10-bit SN (§7.2).
pub const AM_WINDOW_SIZE: u16 = 512;
/// Fixed part of an AMD PDU header: D/C, RF, P, FI, E, SN(10) (§6.2.1.4).
pub const AMD_HEADER_BYTES: u32 = 2;
/// Fixed part of an AMD PDU segment header: AMD header plus LSF and SO(15) (§6.2.1.5).
pub const AMD_SEGMENT_HEADER_BYTES: u32 = 4;
/// STATUS PDU fixed part in bits: D/C(1), CPT(3), ACK_SN(10), E1(1) (§6.2.1.6).
pub const STATUS_FIXED_BITS: u32 = 15;
/// Bits per NACK_SN entry: NACK_SN(10), E1(1), E2(1) (§6.2.1.6).
pub const STATUS_NACK_BITS: u32 = 12;
/// Extra bits of a NACK_SN entry carrying SOstart(15) and SOend(15) (§6.2.1.6).
pub const STATUS_SO_BITS: u32 = 30;

/// Bytes of the E/LI extension part for `n_li` length indicators: 12 bits each (E 1 + LI 11),
/// padded to a whole octet when `n_li` is odd (§6.2.1.3, §6.2.1.4).
pub const fn li_bytes(n_li: u32) -> u32 {
    (12 * n_li).div_ceil(8)
}

/// One piece of an RLC SDU carried in a PDU (a "data field element", §6.2.1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment<P> {
    /// The SDU this piece belongs to.
    pub sdu: P,
    /// Size of the whole SDU.
    pub sdu_bytes: u32,
    /// Offset of this piece inside the SDU.
    pub offset: u32,
    /// Length of this piece.
    pub len: u32,
    /// Transmitter-assigned SDU sequence number. Simulation bookkeeping, not on air (a real
    /// receiver infers SDU boundaries from FI and LI); it lets the receiver report each SDU it
    /// gives up on exactly once.
    pub sdu_seq: u64,
}

/// A TMD, UMD or AMD PDU, or an AMD PDU segment (§6.2.1.2–§6.2.1.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataPdu<P> {
    /// Sequence number (UM: 5 or 10 bits, AM: 10 bits; 0 for TM).
    pub sn: u16,
    /// AM re-segment: offset of this segment in the original AMD PDU's data field (SO, §6.2.2).
    pub so: u32,
    /// True for an AMD PDU segment (RF = 1, §6.2.2).
    pub is_resegment: bool,
    /// LSF (§6.2.2): this segment ends the AMD PDU. True for whole PDUs.
    pub last_segment: bool,
    /// AM polling bit (§6.2.2).
    pub poll: bool,
    /// The data field, in order.
    pub segments: Vec<Segment<P>>,
    /// Header size on air, E/LI extension and SO field included (§6.2.1).
    pub header_bytes: u32,
}

impl<P> DataPdu<P> {
    /// Bytes of the data field.
    pub fn data_bytes(&self) -> u32 {
        self.segments.iter().map(|s| s.len).sum()
    }
}

/// One NACK_SN entry of a STATUS PDU, with the optional byte range (§6.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nack {
    /// NACK_SN: the missing AMD PDU.
    pub sn: u16,
    /// `(SOstart, SOend)`, both inclusive; SOend = [`SO_END_LAST_BYTE`] means "to the end".
    /// `None`: the whole PDU is missing.
    pub so: Option<(u32, u32)>,
}

/// A STATUS PDU (§6.2.1.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusPdu {
    /// ACK_SN: next SN not received and not reported missing; everything below it that is not
    /// NACKed is acknowledged (§6.2.2).
    pub ack_sn: u16,
    /// NACK entries in increasing SN (and SO) order.
    pub nacks: Vec<Nack>,
    /// Size on air (fixed part, NACK entries and SO fields, rounded up to octets).
    pub bytes: u32,
}

impl StatusPdu {
    /// Size on air of a STATUS PDU with these entries (§6.2.1.6).
    pub fn size_bytes(nacks: &[Nack]) -> u32 {
        let bits: u32 = STATUS_FIXED_BITS
            + nacks
                .iter()
                .map(|n| STATUS_NACK_BITS + if n.so.is_some() { STATUS_SO_BITS } else { 0 })
                .sum::<u32>();
        bits.div_ceil(8)
    }
}

/// An RLC PDU as handed to the MAC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RlcPdu<P> {
    /// TMD, UMD or AMD PDU (segment).
    Data(DataPdu<P>),
    /// AM STATUS PDU.
    Status(StatusPdu),
}

impl<P> RlcPdu<P> {
    /// Exact size on air: header (fixed part, E/LI fields, SO field) plus payload (§6.2.1).
    pub fn bytes(&self) -> u32 {
        match self {
            RlcPdu::Data(d) => d.header_bytes + d.data_bytes(),
            RlcPdu::Status(s) => s.bytes,
        }
    }
}

/// RLC mode selector (what configuration files and Python see).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RlcMode {
    /// Transparent mode (§4.2.1.1).
    Tm,
    /// Unacknowledged mode (§4.2.1.2).
    Um,
    /// Acknowledged mode (§4.2.1.3).
    Am,
}

impl RlcMode {
    /// Every mode.
    pub const ALL: [RlcMode; 3] = [RlcMode::Tm, RlcMode::Um, RlcMode::Am];
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            RlcMode::Tm => "tm",
            RlcMode::Um => "um",
            RlcMode::Am => "am",
        }
    }
}

impl std::str::FromStr for RlcMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "tm" => Ok(RlcMode::Tm),
            "um" => Ok(RlcMode::Um),
            "am" => Ok(RlcMode::Am),
            _ => Err(format!("expected one of tm, um, am; got {s:?}")),
        }
    }
}

impl std::fmt::Display for RlcMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Default transmit buffer per entity: 2 MiB. This holds a bandwidth-delay product of
/// 150 Mbit/s × 100 ms (1.9 MB), so the RLC queue never caps TCP below the radio rate. ns-3's
/// `LteRlcUm`/`LteRlcAm` `MaxTxBufferSize` default of 10 KiB (10 × 1024 bytes) silently limits a
/// TCP flow to about buffer/RTT (10 KiB / 50 ms ≈ 1.6 Mbit/s) with tail drops; set a smaller value
/// here on purpose when studying buffer sizing or AQM. Real eNBs buffer much more than 10 KiB
/// (bufferbloat in cellular networks: Jiang et al., "Tackling bufferbloat in 3G/4G networks",
/// IMC 2012).
pub const DEFAULT_TX_BUFFER_BYTES: u64 = 2 * 1024 * 1024;

/// Serde helper: a [`SimDuration`] written as integer milliseconds (RRC timer values are whole
/// milliseconds, TS 36.331 §6.3.2 `T-Reordering`, `T-PollRetransmit`, `T-StatusProhibit`).
mod duration_ms {
    use celltcp_engine::SimDuration;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &SimDuration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_nanos() / 1_000_000)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimDuration, D::Error> {
        Ok(SimDuration::from_millis(u64::deserialize(d)?))
    }
}

/// TM configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TmConfig {
    /// Drop-tail limit on queued SDU bytes. Default [`DEFAULT_TX_BUFFER_BYTES`].
    pub tx_buffer_bytes: u64,
}

impl Default for TmConfig {
    fn default() -> Self {
        TmConfig {
            tx_buffer_bytes: DEFAULT_TX_BUFFER_BYTES,
        }
    }
}

/// UM configuration (TS 36.331 §6.3.2 `UL-UM-RLC`, `DL-UM-RLC`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UmConfig {
    /// `sn-FieldLength`: 5 or 10 bits. Default 10 (size10, the usual DRB setting).
    pub sn_field_bits: u8,
    /// `t-Reordering` (§7.3), whole ms in configuration files (`t_reordering_ms`). Default 35 ms,
    /// the TS 36.331 §9.2.1.1 default-configuration value.
    #[serde(rename = "t_reordering_ms", with = "duration_ms")]
    pub t_reordering: SimDuration,
    /// Drop-tail limit on bytes of SDUs not yet fully transmitted. Default
    /// [`DEFAULT_TX_BUFFER_BYTES`].
    pub tx_buffer_bytes: u64,
}

impl Default for UmConfig {
    fn default() -> Self {
        UmConfig {
            sn_field_bits: 10,
            t_reordering: SimDuration::from_millis(35),
            tx_buffer_bytes: DEFAULT_TX_BUFFER_BYTES,
        }
    }
}

/// AM configuration (TS 36.331 §6.3.2 `UL-AM-RLC`, `DL-AM-RLC`).
///
/// Defaults are the TS 36.331 §9.2.1.1 default RLC configuration (t-PollRetransmit ms45,
/// maxRetxThreshold t4, t-Reordering ms35) with the polling triggers of a typical data bearer
/// (pollPDU p32, pollByte kB25, where the §9.2.1.1 SRB default is "infinity") and
/// t-StatusProhibit ms10 (the SRB default ms0 would send a STATUS PDU for every poll).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AmConfig {
    /// `t-PollRetransmit` (§7.3), `t_poll_retransmit_ms` in files. Default 45 ms.
    #[serde(rename = "t_poll_retransmit_ms", with = "duration_ms")]
    pub t_poll_retransmit: SimDuration,
    /// `pollPDU` (§7.4): poll every this many new PDUs; `u32::MAX` = pInfinity. Default 32.
    pub poll_pdu: u32,
    /// `pollByte` (§7.4): poll every this many new data bytes; `u64::MAX` = kBinfinity.
    /// Default 25 000 (kB25).
    pub poll_byte: u64,
    /// `t-Reordering` (§7.3), `t_reordering_ms` in files. Default 35 ms.
    #[serde(rename = "t_reordering_ms", with = "duration_ms")]
    pub t_reordering: SimDuration,
    /// `t-StatusProhibit` (§7.3), `t_status_prohibit_ms` in files. Default 10 ms.
    #[serde(rename = "t_status_prohibit_ms", with = "duration_ms")]
    pub t_status_prohibit: SimDuration,
    /// `maxRetxThreshold` (§7.4): RETX_COUNT at which radio link failure is indicated. Default 4.
    pub max_retx_threshold: u32,
    /// Drop-tail limit on bytes of SDUs not yet fully transmitted (the retransmission buffer is
    /// bounded by AM_Window_Size instead). Default [`DEFAULT_TX_BUFFER_BYTES`].
    pub tx_buffer_bytes: u64,
}

impl Default for AmConfig {
    fn default() -> Self {
        AmConfig {
            t_poll_retransmit: SimDuration::from_millis(45),
            poll_pdu: 32,
            poll_byte: 25_000,
            t_reordering: SimDuration::from_millis(35),
            t_status_prohibit: SimDuration::from_millis(10),
            max_retx_threshold: 4,
            tx_buffer_bytes: DEFAULT_TX_BUFFER_BYTES,
        }
    }
}

/// Configuration of one entity, tagged by mode (`mode = "am"` plus the mode's fields).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum RlcConfig {
    /// Transparent mode.
    Tm(TmConfig),
    /// Unacknowledged mode.
    Um(UmConfig),
    /// Acknowledged mode.
    Am(AmConfig),
}

impl Default for RlcConfig {
    fn default() -> Self {
        RlcConfig::Am(AmConfig::default())
    }
}

impl RlcConfig {
    /// The mode of this configuration.
    pub fn mode(&self) -> RlcMode {
        match self {
            RlcConfig::Tm(_) => RlcMode::Tm,
            RlcConfig::Um(_) => RlcMode::Um,
            RlcConfig::Am(_) => RlcMode::Am,
        }
    }
    /// Default configuration of a mode.
    pub fn default_for(mode: RlcMode) -> Self {
        match mode {
            RlcMode::Tm => RlcConfig::Tm(TmConfig::default()),
            RlcMode::Um => RlcConfig::Um(UmConfig::default()),
            RlcMode::Am => RlcConfig::Am(AmConfig::default()),
        }
    }
    /// Check value ranges.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            RlcConfig::Um(c) if c.sn_field_bits != 5 && c.sn_field_bits != 10 => Err(format!(
                "rlc um: sn_field_bits must be 5 or 10, got {}",
                c.sn_field_bits
            )),
            RlcConfig::Am(c) if c.poll_pdu == 0 || c.poll_byte == 0 => {
                Err("rlc am: poll_pdu and poll_byte must be positive".into())
            }
            RlcConfig::Am(c) if c.max_retx_threshold == 0 => {
                Err("rlc am: max_retx_threshold must be positive".into())
            }
            _ => Ok(()),
        }
    }
}

/// What an entity has to send, for the MAC scheduler and the buffer status report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferStatus {
    /// New data not yet sent, with the header of one PDU carrying all of it.
    pub new_tx_bytes: u32,
    /// AM data pending retransmission, with headers.
    pub retx_bytes: u32,
    /// Size of the STATUS PDU to send (0 if none is due or t-StatusProhibit runs).
    pub status_bytes: u32,
    /// Arrival time of the oldest SDU not yet fully sent (head-of-line delay).
    pub hol_sdu_arrival: Option<SimTime>,
}

impl BufferStatus {
    /// Everything that wants to go out.
    pub fn total(&self) -> u32 {
        self.new_tx_bytes
            .saturating_add(self.retx_bytes)
            .saturating_add(self.status_bytes)
    }
}

/// Counters of one entity (both directions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RlcStats {
    /// SDUs accepted from PDCP.
    pub sdus_in: u64,
    /// SDUs refused because the transmit buffer was full.
    pub sdus_dropped_buffer: u64,
    /// Bytes of those SDUs.
    pub bytes_dropped_buffer: u64,
    /// Data PDUs sent, retransmissions included.
    pub pdus_tx: u64,
    /// AM data PDUs (or segments) that were retransmissions.
    pub pdus_retx: u64,
    /// Bytes on air of all PDUs sent (data and STATUS).
    pub bytes_tx: u64,
    /// STATUS PDUs sent.
    pub status_tx: u64,
    /// SDUs delivered to PDCP.
    pub sdus_delivered: u64,
    /// Bytes of those SDUs.
    pub bytes_delivered: u64,
    /// SDUs the receiver gave up on (UM reassembly failures).
    pub sdus_lost: u64,
    /// Current transmit buffer occupancy (bytes of SDUs not yet fully sent).
    pub tx_buffer_bytes: u64,
}

/// One RLC entity of a radio bearer, any mode.
///
/// Not boxed although the AM variant is the largest: entities live in per-bearer arenas and the
/// MAC touches them every TTI, so an extra pointer chase would cost more than the space.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum RlcEntity<P> {
    /// Transparent mode.
    Tm(TmEntity<P>),
    /// Unacknowledged mode.
    Um(UmEntity<P>),
    /// Acknowledged mode.
    Am(AmEntity<P>),
}

macro_rules! dispatch {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            RlcEntity::Tm($e) => $body,
            RlcEntity::Um($e) => $body,
            RlcEntity::Am($e) => $body,
        }
    };
}

impl<P: Copy + Debug> RlcEntity<P> {
    /// A fresh entity with state variables at their initial values (§7.1).
    pub fn new(cfg: &RlcConfig) -> Self {
        match cfg {
            RlcConfig::Tm(c) => RlcEntity::Tm(TmEntity::new(c)),
            RlcConfig::Um(c) => RlcEntity::Um(UmEntity::new(c)),
            RlcConfig::Am(c) => RlcEntity::Am(AmEntity::new(c)),
        }
    }
    /// The mode.
    pub fn mode(&self) -> RlcMode {
        match self {
            RlcEntity::Tm(_) => RlcMode::Tm,
            RlcEntity::Um(_) => RlcMode::Um,
            RlcEntity::Am(_) => RlcMode::Am,
        }
    }
    /// Enqueue an SDU from PDCP; `Err(sdu)` when the transmit buffer would overflow (drop-tail).
    /// `bytes` must be at least 1.
    pub fn on_sdu(&mut self, now: SimTime, sdu: P, bytes: u32) -> Result<(), P> {
        dispatch!(self, e => e.on_sdu(now, sdu, bytes))
    }
    /// What is waiting to be sent. O(1) except while an AM STATUS PDU is due.
    pub fn buffer_status(&self) -> BufferStatus {
        dispatch!(self, e => e.buffer_status())
    }
    /// Whether anything waits to be sent: `buffer_status().total() > 0`, always O(1) (the MAC
    /// asks this of every active UE every TTI; it needs no STATUS PDU size).
    #[inline]
    pub fn has_pending(&self) -> bool {
        dispatch!(self, e => e.has_pending())
    }
    /// Bytes of new data waiting in the transmission buffer (the occupancy reported in the
    /// metrics; for AM also while the window is stalled, when [`Self::buffer_status`] reports
    /// nothing to send).
    pub fn queued_bytes(&self) -> u32 {
        dispatch!(self, e => e.queued_bytes())
    }
    /// A transmission opportunity of `bytes` (header included): at most one PDU of at most
    /// `bytes`, or `None` when nothing fits.
    pub fn on_tx_opportunity(&mut self, now: SimTime, bytes: u32) -> Option<RlcPdu<P>> {
        dispatch!(self, e => e.on_tx_opportunity(now, bytes))
    }
    /// A PDU from the peer; SDUs completed in order are appended to `delivered`.
    pub fn on_rx_pdu(&mut self, now: SimTime, pdu: RlcPdu<P>, delivered: &mut Vec<P>) {
        dispatch!(self, e => e.on_rx_pdu(now, pdu, delivered))
    }
    /// Earliest running timer, if any.
    pub fn next_deadline(&self) -> Option<SimTime> {
        dispatch!(self, e => e.next_deadline())
    }
    /// Run every timer that expired at or before `now`.
    pub fn on_timeout(&mut self, now: SimTime, delivered: &mut Vec<P>) {
        dispatch!(self, e => e.on_timeout(now, delivered))
    }
    /// SDU discard (§5.3): remove SDUs no segment of which has been mapped to a PDU yet and for
    /// which `pred` holds; returns them in queue order.
    pub fn discard_untransmitted(&mut self, pred: impl FnMut(&P) -> bool) -> Vec<P> {
        dispatch!(self, e => e.discard_untransmitted(pred))
    }
    /// Move the SDUs whose delivery the peer acknowledged (since the last call) into `out`:
    /// AM only (TS 36.322 §5.1.3.1.1); TM and UM never confirm delivery.
    pub fn take_delivered(&mut self, out: &mut Vec<P>) {
        if let RlcEntity::Am(e) = self {
            e.take_delivered(out);
        }
    }
    /// Whether the entity confirms delivery (AM), so that PDCP holds SDUs until it does.
    pub fn confirms_delivery(&self) -> bool {
        matches!(self, RlcEntity::Am(_))
    }
    /// Move the SDUs the receiver gave up on (since the last call) into `out`.
    pub fn take_lost(&mut self, out: &mut Vec<P>) {
        dispatch!(self, e => e.take_lost(out))
    }
    /// True once an AM PDU reached maxRetxThreshold (§5.2.1); always false for TM and UM.
    pub fn radio_link_failure(&self) -> bool {
        match self {
            RlcEntity::Am(e) => e.radio_link_failure(),
            _ => false,
        }
    }
    /// Counters.
    pub fn stats(&self) -> RlcStats {
        dispatch!(self, e => e.stats())
    }
    /// SDUs not yet fully acknowledged (AM) or not yet fully sent (TM, UM), in order, for
    /// forwarding at handover.
    pub fn untransmitted_and_unacked(&self) -> Vec<P> {
        dispatch!(self, e => e.untransmitted_and_unacked())
    }
    /// Re-establishment of the receiving side (TS 36.322 §5.4): the SDUs that can be
    /// reassembled from the PDUs received (UM: UMD PDUs with SN < VR(UH); AM: AMD PDUs and
    /// byte segments with SN < VR(MR)) and were not delivered before go to `delivered`, in
    /// ascending SN order; the rest is discarded and the receiving state variables are reset.
    /// UM reports the SDUs it had a piece of but cannot complete as lost
    /// ([`RlcEntity::take_lost`]); AM does not (its peer's PDCP still holds them). TM has no
    /// receive buffer.
    pub fn reestablish_rx(&mut self, delivered: &mut Vec<P>) {
        match self {
            RlcEntity::Tm(_) => {}
            RlcEntity::Um(e) => e.reestablish_rx(delivered),
            RlcEntity::Am(e) => e.reestablish_rx(delivered),
        }
    }
    /// UM: the transmitter sequence numbers of the SDUs still in the transmit queue (whole, or
    /// the rest of one cut into pieces); TM and AM: none (a TM SDU leaves the queue whole; AM's
    /// [`RlcEntity::untransmitted_and_unacked`] covers every SDU its peer may hold a piece of).
    pub fn tx_seqs(&self) -> Vec<u64> {
        match self {
            RlcEntity::Um(e) => e.tx_seqs(),
            _ => Vec::new(),
        }
    }
    /// UM: the SDUs the receiving side has in progress, each with its transmitter sequence
    /// number: the one under reassembly and those with a piece in a PDU waiting for reordering,
    /// but not the one reassembly gave up on last (reported already), whose sequence number it
    /// returns (its pieces still on the way are to be discarded silently). What
    /// re-establishment ([`RlcEntity::reestablish_rx`]) delivers or reports lost. TM keeps
    /// nothing; AM's transmitter holds every such SDU until acknowledged.
    pub fn rx_in_progress(&self, out: &mut Vec<(u64, P)>) -> Option<u64> {
        match self {
            RlcEntity::Um(e) => e.rx_in_progress(out),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Shared machinery: the SDU transmit queue (segmentation and concatenation) and reassembly.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct TxSdu<P> {
    sdu: P,
    bytes: u32,
    /// Bytes already mapped to PDUs.
    sent: u32,
    seq: u64,
    arrival: SimTime,
}

/// SDUs waiting for their first (or next) transmission, with running counters so that the
/// buffer status is O(1).
#[derive(Clone, Debug)]
pub(crate) struct TxQueue<P> {
    q: VecDeque<TxSdu<P>>,
    unsent_bytes: u64,
    limit_bytes: u64,
    next_seq: u64,
    pub(crate) sdus_in: u64,
    pub(crate) sdus_dropped: u64,
    pub(crate) bytes_dropped: u64,
}

impl<P: Copy> TxQueue<P> {
    pub(crate) fn new(limit_bytes: u64) -> Self {
        TxQueue {
            q: VecDeque::new(),
            unsent_bytes: 0,
            limit_bytes,
            next_seq: 0,
            sdus_in: 0,
            sdus_dropped: 0,
            bytes_dropped: 0,
        }
    }

    /// Drop-tail enqueue.
    pub(crate) fn push(&mut self, now: SimTime, sdu: P, bytes: u32) -> Result<(), P> {
        debug_assert!(bytes > 0, "RLC SDUs are at least one byte");
        if bytes == 0 || self.unsent_bytes + bytes as u64 > self.limit_bytes {
            self.sdus_dropped += 1;
            self.bytes_dropped += bytes as u64;
            return Err(sdu);
        }
        self.q.push_back(TxSdu {
            sdu,
            bytes,
            sent: 0,
            seq: self.next_seq,
            arrival: now,
        });
        self.next_seq += 1;
        self.unsent_bytes += bytes as u64;
        self.sdus_in += 1;
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    pub(crate) fn unsent_bytes(&self) -> u64 {
        self.unsent_bytes
    }

    pub(crate) fn hol_arrival(&self) -> Option<SimTime> {
        self.q.front().map(|s| s.arrival)
    }

    /// Size of one PDU with fixed header `fixed` carrying everything queued.
    pub(crate) fn pdu_estimate(&self, fixed: u32) -> u32 {
        if self.q.is_empty() {
            return 0;
        }
        let n = self.q.len() as u64;
        let total = self.unsent_bytes + fixed as u64 + (12 * (n - 1)).div_ceil(8);
        total.min(u32::MAX as u64) as u32
    }

    /// Segment and concatenate queued SDUs into one data field that, with a header of `fixed`
    /// bytes plus the E/LI fields, fits `max_bytes` (§5.1.2.1, §5.1.3.1.1). Returns the pieces
    /// and the header size, or `None` when not even one data byte fits.
    pub(crate) fn build(&mut self, fixed: u32, max_bytes: u32) -> Option<(Vec<Segment<P>>, u32)> {
        if self.q.is_empty() || max_bytes <= fixed {
            return None;
        }
        let mut segs: Vec<Segment<P>> = Vec::new();
        let mut data = 0u32;
        for s in self.q.iter() {
            let n = segs.len() as u32;
            if let Some(last) = segs.last() {
                // The previous element needs an LI, which is only 11 bits long (§6.2.2).
                if last.len > LI_MAX_BYTES {
                    break;
                }
            }
            let hdr = fixed + li_bytes(n);
            if hdr + data >= max_bytes {
                break;
            }
            let avail = max_bytes - hdr - data;
            let remaining = s.bytes - s.sent;
            let take = remaining.min(avail);
            segs.push(Segment {
                sdu: s.sdu,
                sdu_bytes: s.bytes,
                offset: s.sent,
                len: take,
                sdu_seq: s.seq,
            });
            data += take;
            if take < remaining {
                break;
            }
        }
        // Commit: whole SDUs leave the queue, a cut one keeps its remainder at the head.
        for seg in &segs {
            let head = self.q.front_mut().expect("piece came from the queue");
            head.sent += seg.len;
            if head.sent == head.bytes {
                self.q.pop_front();
            }
        }
        self.unsent_bytes -= data as u64;
        let header = fixed + li_bytes(segs.len() as u32 - 1);
        Some((segs, header))
    }

    /// §5.3: remove SDUs not yet (even partly) mapped to a PDU for which `pred` holds.
    pub(crate) fn discard(&mut self, mut pred: impl FnMut(&P) -> bool) -> Vec<P> {
        let mut out = Vec::new();
        let mut removed = 0u64;
        self.q.retain(|s| {
            if s.sent == 0 && pred(&s.sdu) {
                out.push(s.sdu);
                removed += s.bytes as u64;
                false
            } else {
                true
            }
        });
        self.unsent_bytes -= removed;
        out
    }

    /// Queued SDUs in order, with their transmitter sequence numbers.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, P)> + '_ {
        self.q.iter().map(|s| (s.seq, s.sdu))
    }
}

/// Partial SDU being reassembled.
#[derive(Clone, Debug)]
struct Partial<P> {
    sdu: P,
    seq: u64,
    next_offset: u32,
    bytes: u32,
}

/// SDU reassembly from data field elements taken in SN order (§5.1.2.2.3, §5.1.3.2.3): an SDU is
/// delivered when its bytes arrive contiguously from offset 0 to the end; a piece that does not
/// continue the SDU under reassembly means bytes in between were lost, and the SDU is given up.
#[derive(Clone, Debug)]
pub(crate) struct Reassembler<P> {
    partial: Option<Partial<P>>,
    /// Last SDU given up on; its later pieces are discarded silently.
    skip_seq: Option<u64>,
    pub(crate) sdus_delivered: u64,
    pub(crate) bytes_delivered: u64,
    pub(crate) sdus_lost: u64,
}

impl<P: Copy> Reassembler<P> {
    pub(crate) fn new() -> Self {
        Reassembler {
            partial: None,
            skip_seq: None,
            sdus_delivered: 0,
            bytes_delivered: 0,
            sdus_lost: 0,
        }
    }

    fn deliver(&mut self, sdu: P, bytes: u32, delivered: &mut Vec<P>) {
        self.sdus_delivered += 1;
        self.bytes_delivered += bytes as u64;
        delivered.push(sdu);
    }

    /// The SDU under reassembly, if any, with its sequence number.
    pub(crate) fn in_progress(&self) -> Option<(u64, P)> {
        self.partial.as_ref().map(|p| (p.seq, p.sdu))
    }

    /// The SDU given up on last: its later pieces are discarded silently.
    pub(crate) fn given_up(&self) -> Option<u64> {
        self.skip_seq
    }

    fn lose(&mut self, sdu: P, seq: u64, lost: &mut Vec<P>) {
        self.sdus_lost += 1;
        self.skip_seq = Some(seq);
        lost.push(sdu);
    }

    /// Gives up the SDU under reassembly, if any (re-establishment, §5.4: what cannot be
    /// reassembled is discarded), and forgets the one given up last: a re-established peer
    /// numbers its SDUs afresh.
    pub(crate) fn abandon(&mut self, lost: &mut Vec<P>) {
        if let Some(p) = self.partial.take() {
            self.lose(p.sdu, p.seq, lost);
        }
        self.skip_seq = None;
    }

    /// Feed the next data field element in order.
    pub(crate) fn push(&mut self, seg: &Segment<P>, delivered: &mut Vec<P>, lost: &mut Vec<P>) {
        if let Some(p) = self.partial.as_mut() {
            if p.seq == seg.sdu_seq && p.next_offset == seg.offset {
                p.next_offset += seg.len;
                if p.next_offset == p.bytes {
                    let (sdu, bytes) = (p.sdu, p.bytes);
                    self.partial = None;
                    self.deliver(sdu, bytes, delivered);
                }
                return;
            }
            let (sdu, seq) = (p.sdu, p.seq);
            self.partial = None;
            self.lose(sdu, seq, lost);
        }
        if seg.offset == 0 {
            if seg.len == seg.sdu_bytes {
                self.deliver(seg.sdu, seg.sdu_bytes, delivered);
            } else {
                self.partial = Some(Partial {
                    sdu: seg.sdu,
                    seq: seg.sdu_seq,
                    next_offset: seg.len,
                    bytes: seg.sdu_bytes,
                });
            }
        } else if self.skip_seq != Some(seg.sdu_seq) {
            self.lose(seg.sdu, seg.sdu_seq, lost);
        }
    }
}

/// A deadline `Some(t)` that has passed at `now`.
pub(crate) fn expired(t: Option<SimTime>, now: SimTime) -> bool {
    matches!(t, Some(t) if t <= now)
}

/// Minimum of optional deadlines.
pub(crate) fn min_deadline(ts: &[Option<SimTime>]) -> Option<SimTime> {
    ts.iter().flatten().copied().min()
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Stub neighbours for RLC tests, in the spirit of ns-3's `lte-test-entities`: a pair of
    //! entities joined by a lossy channel with a fixed delay, driven TTI by TTI.
    use super::*;
    use celltcp_engine::rng::{component_id, component_rng};
    use celltcp_engine::SimRng;
    use rand::Rng;

    /// Test payload: an SDU id.
    pub type Id = u32;

    /// Two entities, A → B data with STATUS B → A, over a channel losing each PDU with
    /// probability `loss` (data) and `status_loss` (STATUS), with one-way delay `delay`.
    pub struct Pair {
        pub a: RlcEntity<Id>,
        pub b: RlcEntity<Id>,
        pub now: SimTime,
        pub delay: SimDuration,
        pub loss: f64,
        pub status_loss: f64,
        pub rng: SimRng,
        /// PDUs in flight: (arrival time, to_b, pdu).
        pub in_flight: VecDeque<(SimTime, bool, RlcPdu<Id>)>,
        pub delivered_b: Vec<Id>,
        pub delivered_a: Vec<Id>,
        pub data_pdus_sent: u64,
        pub data_pdus_lost: u64,
        /// SDUs (by id) that had at least one segment on a lost PDU.
        pub hit_sdus: std::collections::BTreeSet<Id>,
        /// SDUs (by id) that had at least one segment on a PDU that was not lost.
        pub got_piece: std::collections::BTreeSet<Id>,
    }

    impl Pair {
        pub fn new(cfg: &RlcConfig, seed: u64, loss: f64, status_loss: f64) -> Self {
            Pair {
                a: RlcEntity::new(cfg),
                b: RlcEntity::new(cfg),
                now: SimTime::ZERO,
                delay: SimDuration::from_millis(2),
                loss,
                status_loss,
                rng: component_rng(seed, component_id("rlc-test", "channel")),
                in_flight: VecDeque::new(),
                delivered_b: Vec::new(),
                delivered_a: Vec::new(),
                data_pdus_sent: 0,
                data_pdus_lost: 0,
                hit_sdus: Default::default(),
                got_piece: Default::default(),
            }
        }

        fn send(&mut self, to_b: bool, pdu: RlcPdu<Id>) {
            let p = match &pdu {
                RlcPdu::Data(_) => self.loss,
                RlcPdu::Status(_) => self.status_loss,
            };
            let lost = p > 0.0 && self.rng.gen_bool(p);
            if let RlcPdu::Data(d) = &pdu {
                self.data_pdus_sent += 1;
                if lost {
                    self.data_pdus_lost += 1;
                    self.hit_sdus.extend(d.segments.iter().map(|s| s.sdu));
                } else {
                    self.got_piece.extend(d.segments.iter().map(|s| s.sdu));
                }
            }
            if !lost {
                self.in_flight.push_back((self.now + self.delay, to_b, pdu));
            }
        }

        /// `has_pending` agrees with `buffer_status` on both sides (checked at every step).
        fn check_pending(&self) {
            for (side, e) in [("A", &self.a), ("B", &self.b)] {
                let bs = e.buffer_status();
                assert_eq!(
                    e.has_pending(),
                    bs.total() > 0,
                    "{side} at {}: {bs:?}",
                    self.now
                );
            }
        }

        /// One 1 ms TTI: timers, deliveries, then grants of `grant_a` bytes to A and
        /// `grant_b` to B (each side may send several PDUs until the grant is used up).
        pub fn tti(&mut self, grant_a: u32, grant_b: u32) {
            let now = self.now;
            self.check_pending();
            while expired(self.a.next_deadline(), now) {
                self.a.on_timeout(now, &mut self.delivered_a);
            }
            while expired(self.b.next_deadline(), now) {
                self.b.on_timeout(now, &mut self.delivered_b);
            }
            while self.in_flight.front().is_some_and(|f| f.0 <= now) {
                let (_, to_b, pdu) = self.in_flight.pop_front().unwrap();
                if to_b {
                    self.b.on_rx_pdu(now, pdu, &mut self.delivered_b);
                } else {
                    self.a.on_rx_pdu(now, pdu, &mut self.delivered_a);
                }
            }
            for (to_b, grant) in [(true, grant_a), (false, grant_b)] {
                let mut left = grant;
                loop {
                    let ent = if to_b { &mut self.a } else { &mut self.b };
                    let Some(pdu) = ent.on_tx_opportunity(now, left) else {
                        break;
                    };
                    let size = pdu.bytes();
                    assert!(size <= left, "PDU of {size} bytes in a {left}-byte grant");
                    left -= size;
                    self.send(to_b, pdu);
                    self.check_pending();
                }
            }
            self.check_pending();
            self.now = now + SimDuration::from_millis(1);
        }

        /// Run TTIs until both sides are idle (nothing queued, nothing in flight, no timer) or
        /// `max_ttis` passed.
        pub fn run_until_idle(&mut self, grant: u32, max_ttis: u32) {
            for _ in 0..max_ttis {
                self.tti(grant, grant);
                if self.in_flight.is_empty()
                    && self.a.buffer_status().total() == 0
                    && self.b.buffer_status().total() == 0
                    && self.a.next_deadline().is_none()
                    && self.b.next_deadline().is_none()
                {
                    return;
                }
            }
        }
    }

    /// A data PDU's segments as (sdu, offset, len) triples.
    pub fn pieces(pdu: &RlcPdu<Id>) -> Vec<(Id, u32, u32)> {
        match pdu {
            RlcPdu::Data(d) => d
                .segments
                .iter()
                .map(|s| (s.sdu, s.offset, s.len))
                .collect(),
            RlcPdu::Status(_) => vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // §6.2.1.3/§6.2.1.4: 12 bits per LI, odd counts padded with 4 bits.
    #[test]
    fn rlc_li_bytes_pad_to_octets() {
        assert_eq!(li_bytes(0), 0);
        assert_eq!(li_bytes(1), 2);
        assert_eq!(li_bytes(2), 3);
        assert_eq!(li_bytes(3), 5);
        assert_eq!(li_bytes(4), 6);
    }

    // §6.2.1.6: 15 bits fixed, 12 per NACK_SN, 30 more with SOstart/SOend.
    #[test]
    fn rlc_status_pdu_size() {
        assert_eq!(StatusPdu::size_bytes(&[]), 2);
        let n = Nack { sn: 3, so: None };
        let s = Nack {
            sn: 4,
            so: Some((0, 99)),
        };
        assert_eq!(StatusPdu::size_bytes(&[n]), 4); // 27 bits
        assert_eq!(StatusPdu::size_bytes(&[n, n]), 5); // 39 bits
        assert_eq!(StatusPdu::size_bytes(&[s]), 8); // 57 bits
    }

    #[test]
    fn rlc_mode_parses_and_lists_allowed_values() {
        assert_eq!("AM".parse::<RlcMode>(), Ok(RlcMode::Am));
        assert_eq!("um".parse::<RlcMode>(), Ok(RlcMode::Um));
        let e = "xx".parse::<RlcMode>().unwrap_err();
        assert!(e.contains("tm, um, am"), "{e}");
        for m in RlcMode::ALL {
            assert_eq!(m.name().parse::<RlcMode>(), Ok(m));
            assert_eq!(RlcEntity::<u32>::new(&RlcConfig::default_for(m)).mode(), m);
        }
    }

    #[test]
    fn rlc_config_validate_rejects_bad_sn_length() {
        let mut c = UmConfig::default();
        assert!(RlcConfig::Um(c.clone()).validate().is_ok());
        c.sn_field_bits = 7;
        assert!(RlcConfig::Um(c).validate().is_err());
        let a = AmConfig {
            max_retx_threshold: 0,
            ..AmConfig::default()
        };
        assert!(RlcConfig::Am(a).validate().is_err());
    }

    // Configuration files: timers in whole milliseconds under `*_ms` names, unknown keys refused.
    #[test]
    fn rlc_config_deserializes_ms_fields_and_rejects_unknown_keys() {
        use serde::de::value::{Error, MapDeserializer};
        fn de<T: serde::de::DeserializeOwned>(kv: &[(&'static str, u64)]) -> Result<T, Error> {
            T::deserialize(MapDeserializer::<_, Error>::new(kv.iter().copied()))
        }
        let um: UmConfig = de(&[("sn_field_bits", 5), ("t_reordering_ms", 50)]).unwrap();
        assert_eq!(um.sn_field_bits, 5);
        assert_eq!(um.t_reordering, SimDuration::from_millis(50));
        assert_eq!(um.tx_buffer_bytes, DEFAULT_TX_BUFFER_BYTES);
        let am: AmConfig = de(&[("t_poll_retransmit_ms", 80), ("poll_pdu", 16)]).unwrap();
        assert_eq!(am.t_poll_retransmit, SimDuration::from_millis(80));
        assert_eq!((am.poll_pdu, am.max_retx_threshold), (16, 4));
        assert!(de::<AmConfig>(&[("t_reordering", 35)]).is_err());
        assert!(de::<TmConfig>(&[("tx_buffer_bytes", 10), ("x", 1)]).is_err());
    }

    // Reassembly gives up on an SDU with a missing middle piece exactly once.
    #[test]
    fn rlc_reassembler_reports_each_broken_sdu_once() {
        let mut r = Reassembler::<u32>::new();
        let (mut d, mut l) = (vec![], vec![]);
        let seg = |sdu: u32, off, len| Segment {
            sdu,
            sdu_bytes: 300,
            offset: off,
            len,
            sdu_seq: sdu as u64,
        };
        r.push(&seg(1, 0, 100), &mut d, &mut l);
        // piece [100, 200) of SDU 1 lost
        r.push(&seg(1, 200, 100), &mut d, &mut l);
        r.push(&seg(2, 0, 300), &mut d, &mut l);
        // SDU 3's first piece lost; two later pieces arrive
        r.push(&seg(3, 100, 100), &mut d, &mut l);
        r.push(&seg(3, 200, 100), &mut d, &mut l);
        r.push(&seg(4, 0, 150), &mut d, &mut l);
        r.push(&seg(4, 150, 150), &mut d, &mut l);
        assert_eq!(d, vec![2, 4]);
        assert_eq!(l, vec![1, 3]);
        assert_eq!(r.sdus_lost, 2);
        assert_eq!(r.bytes_delivered, 600);
    }
}
