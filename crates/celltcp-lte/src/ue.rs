//! The UE's side of the air interface (ns-3's `LteUeMac` / `LteUeRrc`, without the SAPs).
//!
//! [`UeStack`] holds the UE's end of the bearer (PDCP over RLC, `bearer.rs`), its uplink HARQ
//! entity (`mac/harq.rs`), its scheduling requests, buffer status reports and received grants
//! (`mac/sr_bsr.rs`), and, after a lossless handover, the PDCP status report waiting for an
//! uplink transport block and the uplink SDUs to send again in the target.
//!
//! The UE learns about the eNB only through what the eNB sends: grants (DCI 0), HARQ
//! feedback, RLC STATUS PDUs and its data. Its channel and measurements (RSRP/RSRQ,
//! `rrc/meas.rs`) are evaluated by the RAN from the UE's position (`ran/rrm.rs`).

use crate::bearer::Bearer;
use crate::mac::harq::HarqEntity;
use crate::mac::sr_bsr::UeSrBsr;
use crate::mac::TransportBlock;
use crate::pdcp::{PdcpPdu, StatusReport};
use crate::ran::RanConfig;

/// The UE's own stack.
pub(crate) struct UeStack<P: Copy + std::fmt::Debug> {
    /// The UE's end of its data radio bearer (PDCP over RLC).
    pub(crate) bearer: Bearer<P>,
    pub(crate) ul_harq: HarqEntity<TransportBlock<P>>,
    /// Scheduling requests, buffer status reports, the grants received.
    pub(crate) sr_bsr: UeSrBsr,
    /// The PDCP status report compiled at PDCP re-establishment (lossless handover, TS 36.323
    /// §5.3.1) waiting for an uplink transport block, with its size on the air.
    pub(crate) status_report_pending: Option<(StatusReport, u32)>,
    /// Uplink SDUs to send again in the target.
    pub(crate) ul_resend: Vec<PdcpPdu<P>>,
    /// Lossless handover: the PDCP receiver reorders until this COUNT is confirmed.
    pub(crate) reorder_until: Option<u32>,
}

impl<P: Copy + std::fmt::Debug> UeStack<P> {
    pub(crate) fn new(cfg: &RanConfig, n_ul_harq: u8, sr_offset_ms: u64) -> Self {
        UeStack {
            bearer: Bearer::lte(cfg.pdcp, &cfg.rlc),
            ul_harq: HarqEntity::new(n_ul_harq, cfg.harq_max_tx),
            sr_bsr: UeSrBsr::new(cfg.sr_period, sr_offset_ms),
            status_report_pending: None,
            ul_resend: Vec::new(),
            reorder_until: None,
        }
    }

    /// Bytes the UE has to send on the uplink: its bearer's, and a pending status report.
    pub(crate) fn ul_pending_bytes(&self) -> u32 {
        self.bearer.leg.buffered_bytes() + self.status_report_pending.as_ref().map_or(0, |r| r.1)
    }

    /// `ul_pending_bytes() > 0`, in O(1).
    #[inline]
    pub(crate) fn has_ul_pending(&self) -> bool {
        self.bearer.leg.has_buffered()
            || self.status_report_pending.as_ref().is_some_and(|r| r.1 > 0)
    }
}
