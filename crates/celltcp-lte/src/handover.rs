//! Handover decision algorithms of the source eNB (TS 36.300 §10.1.2.1.1, step 3: "the source
//! eNB makes a decision based on MEASUREMENT REPORT and RRM information to hand off the UE";
//! the algorithm itself is left to the implementation).
//!
//! An algorithm sees only what reaches the eNB over the air: the UE's measurement reports
//! (TS 36.331 §5.5.5), each triggered by an event of the UE's measurement configuration
//! (§5.5.4). It may ask for report configurations of its own
//! ([`HandoverAlgorithm::report_configs`]), which the RAN adds to every UE's measurement
//! configuration, and it answers each report with a target cell or nothing. Executing the
//! handover (X2, forwarding) is the RAN's job (`ran/x2_handover.rs`).
//!
//! - [`a3_rsrp`]: the best neighbour of an A3 (or A4) report (ns-3's `A3RsrpHandoverAlgorithm`;
//!   the default, and what every scenario used before this trait existed).
//! - [`a2_a4_rsrq`]: serving RSRQ below a threshold (A2), best neighbour by RSRQ (A4) better by
//!   an offset (ns-3's `A2A4RsrqHandoverAlgorithm`).
//!
//! Dispatch is a closed enum, [`AnyHandoverAlgorithm`], selected by [`HandoverAlgorithmKind`].

use celltcp_engine::SimTime;

use crate::rrc::meas::{MeasReport, ReportConfig};

pub mod a2_a4_rsrq;
pub mod a3_rsrp;

pub use a2_a4_rsrq::{A2A4Rsrq, A2A4RsrqConfig};
pub use a3_rsrp::A3Rsrp;

/// A handover decision algorithm at the serving eNB.
pub trait HandoverAlgorithm {
    /// Report configurations the algorithm needs in every UE's measurement configuration, on
    /// top of the scenario's own (none by default).
    fn report_configs(&self) -> Vec<ReportConfig> {
        Vec::new()
    }

    /// UE `ue`'s measurement report reached the eNB at `now`. Returns the cell to hand the UE
    /// over to, among those `accept` admits (not failed, not interferer-only), or `None`.
    fn on_report(&mut self, now: SimTime, ue: usize, report: &MeasReport, accept: &dyn Fn(usize) -> bool) -> Option<usize>;

    /// UE `ue` left this eNB (handover, re-establishment): forget what was kept about it.
    fn on_ue_left(&mut self, _ue: usize) {}
}

/// Which handover algorithm the eNBs run.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum HandoverAlgorithmKind {
    /// [`A3Rsrp`]: hand over to the best neighbour of an A3 (or A4) report.
    #[default]
    A3Rsrp,
    /// [`A2A4Rsrq`] with its configuration.
    A2A4Rsrq(A2A4RsrqConfig),
}

/// The algorithms behind one type (closed-enum dispatch).
#[derive(Clone, Debug)]
pub enum AnyHandoverAlgorithm {
    A3Rsrp(A3Rsrp),
    A2A4Rsrq(A2A4Rsrq),
}

impl AnyHandoverAlgorithm {
    pub fn new(kind: HandoverAlgorithmKind) -> Self {
        match kind {
            HandoverAlgorithmKind::A3Rsrp => AnyHandoverAlgorithm::A3Rsrp(A3Rsrp),
            HandoverAlgorithmKind::A2A4Rsrq(c) => AnyHandoverAlgorithm::A2A4Rsrq(A2A4Rsrq::new(c)),
        }
    }

    /// The algorithm inside.
    pub fn inner(&mut self) -> &mut dyn HandoverAlgorithm {
        match self {
            AnyHandoverAlgorithm::A3Rsrp(a) => a,
            AnyHandoverAlgorithm::A2A4Rsrq(a) => a,
        }
    }

    /// The algorithm inside, shared.
    pub fn inner_ref(&self) -> &dyn HandoverAlgorithm {
        match self {
            AnyHandoverAlgorithm::A3Rsrp(a) => a,
            AnyHandoverAlgorithm::A2A4Rsrq(a) => a,
        }
    }
}

#[cfg(test)]
pub(crate) mod test_reports {
    //! Reports built by hand for the algorithms' unit tests.
    use crate::rrc::meas::{CellResult, EventType, MeasReport, Quantity};
    use celltcp_engine::SimTime;

    pub fn cell(cell: usize, rsrp_dbm: f64, rsrq_db: f64) -> CellResult {
        CellResult { cell, rsrp_dbm, rsrq_db }
    }

    pub fn report(event: EventType, quantity: Quantity, serving: CellResult, neighbours: Vec<CellResult>) -> MeasReport {
        MeasReport { at: SimTime::ZERO, report: 0, event, quantity, serving, new_cells: neighbours.iter().map(|c| c.cell).collect(), neighbours }
    }
}
