//! The eNB's side of the air interface (ns-3's `LteEnbMac` / `LteEnbRrc` split, without its SAP
//! boilerplate).
//!
//! - [`EnbStack`]: one cell's eNB: its downlink and uplink MAC schedulers, the PRBs it used
//!   (what its neighbours see as interference), its counters, and its handover algorithm
//!   (`handover/`).
//! - [`EnbUeContext`]: what the serving eNB keeps for one UE: its end of the bearer (PDCP over
//!   RLC, `bearer.rs`), the downlink HARQ entity (`mac/harq.rs`), its view of the UE's uplink
//!   buffer and the grants it gave (`mac/sr_bsr.rs`), the CQI reports it received and the
//!   measured uplink quality (`phy/cqi.rs`), the uplink outer loop, and during a handover the
//!   X2-U forwarding state (`ran/x2_handover.rs`).
//!
//! The eNB learns about a UE only through what the UE sends over the air: CQI reports (with
//! their period and delay), scheduling requests and buffer status reports, HARQ feedback,
//! RLC STATUS PDUs, and the PDCP status report after a lossless handover. The RAN
//! (`ran.rs`) keeps each UE's context in the UE's slot, owned by the serving cell (`Ue::cell`):
//! at handover the target takes the context over (SN STATUS TRANSFER, TS 36.300 §10.1.2.1.1
//! step 8), with a new RLC entity and HARQ entity.

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimTime};

use crate::bearer::Bearer;
use crate::handover::AnyHandoverAlgorithm;
use crate::mac::harq::HarqEntity;
use crate::mac::sr_bsr::EnbBsrView;
use crate::mac::{AnyScheduler, TransportBlock};
use crate::pdcp::PdcpPdu;
use crate::phy::cqi::CqiReport;
use crate::ran::{CellStats, RanConfig};

pub(crate) struct EnbStack {
    pub(crate) position: (f64, f64),
    pub(crate) boresight_deg: Option<f64>,
    pub(crate) dl_active: Vec<u32>,
    pub(crate) ul_active: Vec<u32>,
    pub(crate) dl_sched: AnyScheduler,
    pub(crate) ul_sched: AnyScheduler,
    /// PRBs used in the most recent TTI that had a transmission, for the interference seen by
    /// CQI reports and RSRQ measurements, and that TTI; a mask older than one CQI period is
    /// not counted (the cell has gone quiet, or failed).
    pub(crate) last_dl_mask: u128,
    pub(crate) last_ul_mask: u128,
    pub(crate) last_dl_at: SimTime,
    pub(crate) last_ul_at: SimTime,
    pub(crate) dl_mask_now: u128,
    pub(crate) ul_mask_now: u128,
    /// The UE sending on each UL PRB of `ul_mask_now` / `last_ul_mask` (entries outside the
    /// mask are stale): the uplink interference a neighbour cell sees comes from that UE.
    pub(crate) ul_owner_now: Vec<u32>,
    pub(crate) last_ul_owner: Vec<u32>,
    pub(crate) stats: CellStats,
    /// The cell's handover decision (TS 36.300 §10.1.2.1.1 step 3).
    pub(crate) ho_algo: AnyHandoverAlgorithm,
}

impl EnbStack {
    /// The PRBs of the cell's most recent downlink transmission, if it was less than `memory`
    /// before `t` (or after it); none otherwise.
    pub(crate) fn recent_dl_mask(&self, t: SimTime, memory: SimDuration) -> u128 {
        if self.last_dl_at + memory > t { self.last_dl_mask } else { 0 }
    }

    /// The same for the uplink.
    pub(crate) fn recent_ul_mask(&self, t: SimTime, memory: SimDuration) -> u128 {
        if self.last_ul_at + memory > t { self.last_ul_mask } else { 0 }
    }
}

/// The serving eNB's context for one UE.
pub(crate) struct EnbUeContext<P: Copy + std::fmt::Debug> {
    /// The eNB's end of the UE's data radio bearer (PDCP over RLC).
    pub(crate) bearer: Bearer<P>,
    pub(crate) dl_harq: HarqEntity<TransportBlock<P>>,
    /// Its idea of the UE's uplink buffer (from SRs and BSRs, less what it granted since) and
    /// the grants it gave.
    pub(crate) bsr: EnbBsrView,
    /// The CQI report in force (downlink) and the measured uplink quality.
    pub(crate) dl_cqi: CqiReport,
    pub(crate) ul_cqi: CqiReport,
    /// Uplink outer-loop offset, dB (0..=OLLA_MAX_DB).
    pub(crate) ul_olla_db: f64,
    /// Downlink outer-loop offset, dB (0..=OLLA_MAX_DB), applied to the reported CQI.
    pub(crate) dl_olla_db: f64,
    /// Target eNB (lossless handover): forwarded SDUs wait for the UE's status report; the
    /// handover's index in `Ran::ho_events`.
    pub(crate) awaiting_status_report: Option<usize>,
    /// Lossless handover: the uplink PDCP receiver holds out-of-order SDUs until the UE has
    /// no SDU up to this COUNT left to send again.
    pub(crate) ul_reorder_until: Option<u32>,
    /// Downlink SDUs on their way over X2-U to the target: (arrival, PDU).
    pub(crate) x2_queue: VecDeque<(SimTime, PdcpPdu<P>)>,
    /// When X2-U finishes serialising what is queued.
    pub(crate) x2_free_at: SimTime,
    /// New downlink SDUs go over X2 until the path switch.
    pub(crate) x2_until: SimTime,
    /// X2 delay and rate between the cells of the handover in progress.
    pub(crate) x2_link: (SimDuration, u64),
}

impl<P: Copy + std::fmt::Debug> EnbUeContext<P> {
    pub(crate) fn new(cfg: &RanConfig, n_dl_harq: u8) -> Self {
        EnbUeContext {
            bearer: Bearer::lte(cfg.pdcp, &cfg.rlc),
            dl_harq: HarqEntity::new(n_dl_harq, cfg.harq_max_tx),
            bsr: EnbBsrView::default(),
            dl_cqi: CqiReport::NONE,
            ul_cqi: CqiReport::NONE,
            ul_olla_db: 0.0,
            dl_olla_db: 0.0,
            awaiting_status_report: None,
            ul_reorder_until: None,
            x2_queue: VecDeque::new(),
            x2_free_at: SimTime::ZERO,
            x2_until: SimTime::ZERO,
            x2_link: (cfg.handover.x2_delay, cfg.handover.x2_rate_bps),
        }
    }
}
