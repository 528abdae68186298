//! A3-RSRP handover: hand the UE over to the best neighbour of an A3 report (TS 36.331
//! §5.5.4.4, neighbour becomes offset better than serving), the rule of ns-3's
//! `A3RsrpHandoverAlgorithm` (`a3-rsrp-handover-algorithm.cc`: `DoReportUeMeas` hands over to
//! the best cell of the report's neighbour list).
//!
//! The event's hysteresis, a3-Offset and time-to-trigger live in the UE's measurement
//! configuration (`rrc::meas`, default A3 on RSRP, 3 dB hysteresis, 256 ms), so the algorithm
//! adds no report configuration. An A4 report (neighbour better than a threshold) is taken the
//! same way, and an A2 report decides nothing: that is what the RAN did before the decision
//! moved behind [`HandoverAlgorithm`], so results are unchanged.

use celltcp_engine::SimTime;

use super::HandoverAlgorithm;
use crate::rrc::meas::{handover_target, MeasReport};

/// The A3-RSRP decision (stateless).
#[derive(Clone, Copy, Debug, Default)]
pub struct A3Rsrp;

impl HandoverAlgorithm for A3Rsrp {
    fn on_report(&mut self, _now: SimTime, _ue: usize, report: &MeasReport, accept: &dyn Fn(usize) -> bool) -> Option<usize> {
        handover_target(report, accept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handover::test_reports::{cell, report};
    use crate::rrc::meas::{EventType, Quantity};

    // ns-3 A3RsrpHandoverAlgorithm: the best reported neighbour (reports list them best first),
    // skipping the cells the eNB may not use; A2 reports decide nothing.
    #[test]
    fn a3_rsrp_picks_best_accepted_neighbour() {
        let mut a = A3Rsrp;
        let r = report(EventType::A3, Quantity::Rsrp, cell(0, -100.0, -12.0), vec![cell(2, -90.0, -8.0), cell(1, -95.0, -9.0)]);
        assert_eq!(a.on_report(SimTime::ZERO, 0, &r, &|_| true), Some(2));
        assert_eq!(a.on_report(SimTime::ZERO, 0, &r, &|c| c != 2), Some(1));
        assert_eq!(a.on_report(SimTime::ZERO, 0, &r, &|_| false), None);
        let a2 = report(EventType::A2, Quantity::Rsrp, cell(0, -120.0, -15.0), vec![cell(1, -90.0, -8.0)]);
        assert_eq!(a.on_report(SimTime::ZERO, 0, &a2, &|_| true), None);
        assert!(a.report_configs().is_empty());
    }
}
