//! A2-A4-RSRQ handover, after ns-3's `A2A4RsrqHandoverAlgorithm`
//! (`a2-a4-rsrq-handover-algorithm.cc`), on the events of TS 36.331 §5.5.4:
//!
//! - the algorithm asks every UE for an **A2** report on RSRQ (§5.5.4.3, serving becomes worse
//!   than threshold) with `Thresh = serving_cell_threshold_db`, and an **A4** report on RSRQ
//!   (§5.5.4.5, neighbour becomes better than threshold) with the lowest threshold of the
//!   RSRQ range, −19.5 dB, so that every measured neighbour is reported (ns-3: threshold 0 of
//!   the RSRQ range); both without hysteresis and time-to-trigger (ns-3's defaults), and
//!   reported again every 240 ms (A2) and 480 ms (A4) while triggered (ns-3's
//!   `reportInterval` MS240 and MS480, TS 36.331 §5.5.4.1);
//! - the neighbour RSRQs the eNB hears of (A4 reports, and the neighbour list an A2 report
//!   carries) are kept per UE;
//! - when a report shows the serving cell's RSRQ at or below the threshold (ns-3 evaluates on
//!   the A2 report), the best kept neighbour is the target if its RSRQ exceeds the serving
//!   cell's by at least `neighbour_cell_offset_db` (ns-3 `EvaluateHandover`:
//!   `bestNeighbourRsrq − servingCellRsrq >= NeighbourCellOffset`).
//!
//! ns-3 expresses both parameters in RSRQ range units (TS 36.133 §9.1.7, 0.5 dB steps);
//! here they are in dB: ns-3's defaults, `ServingCellThreshold` 30 and `NeighbourCellOffset`
//! 1, are −5.0 dB (`−20 + 30/2`, ns-3 `EutranMeasurementMapping::RsrqRange2Db`) and 0.5 dB.


use celltcp_engine::SimTime;

use super::HandoverAlgorithm;
use crate::rrc::meas::{EventType, MeasReport, Quantity, ReportConfig};

/// Lowest RSRQ threshold of the RSRQ range (TS 36.331 `RSRQ-Range`, value 0), dB.
pub const RSRQ_RANGE_MIN_DB: f64 = -19.5;

/// Parameters of [`A2A4Rsrq`].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct A2A4RsrqConfig {
    /// A2 threshold on the serving cell's RSRQ, dB, in [−19.5, −3] (0.5 dB steps). Default
    /// −5.0 dB (ns-3 `ServingCellThreshold` = 30).
    pub serving_cell_threshold_db: f64,
    /// How much better (dB, ≥ 0) the best neighbour's RSRQ must be than the serving cell's.
    /// Default 0.5 dB (ns-3 `NeighbourCellOffset` = 1).
    pub neighbour_cell_offset_db: f64,
}

impl Default for A2A4RsrqConfig {
    fn default() -> Self {
        A2A4RsrqConfig { serving_cell_threshold_db: -5.0, neighbour_cell_offset_db: 0.5 }
    }
}

impl A2A4RsrqConfig {
    /// Checks the ranges, naming the key.
    pub fn validate(&self) -> Result<(), String> {
        self.a2().validate().map_err(|e| format!("serving_cell_threshold_db: {e}"))?;
        if !(self.neighbour_cell_offset_db >= 0.0 && self.neighbour_cell_offset_db.is_finite()) {
            return Err(format!("neighbour_cell_offset_db must be ≥ 0 dB; got {}", self.neighbour_cell_offset_db));
        }
        Ok(())
    }

    fn a2(&self) -> ReportConfig {
        ReportConfig {
            event: EventType::A2,
            quantity: Quantity::Rsrq,
            threshold: self.serving_cell_threshold_db,
            hysteresis_db: 0.0,
            time_to_trigger_ms: 0,
            report_interval_ms: Some(240),
            ..ReportConfig::default()
        }
    }

    fn a4(&self) -> ReportConfig {
        ReportConfig {
            event: EventType::A4,
            quantity: Quantity::Rsrq,
            threshold: RSRQ_RANGE_MIN_DB,
            hysteresis_db: 0.0,
            time_to_trigger_ms: 0,
            report_interval_ms: Some(480),
            ..ReportConfig::default()
        }
    }
}

/// The A2-A4-RSRQ decision of one eNB, with the neighbour RSRQs it heard of per UE.
#[derive(Clone, Debug)]
pub struct A2A4Rsrq {
    cfg: A2A4RsrqConfig,
    /// Per UE: (cell, latest reported RSRQ in dB).
    neighbours: Vec<Vec<(usize, f64)>>,
}

impl A2A4Rsrq {
    pub fn new(cfg: A2A4RsrqConfig) -> Self {
        A2A4Rsrq { cfg, neighbours: Vec::new() }
    }

    fn remember(&mut self, ue: usize, report: &MeasReport) {
        if self.neighbours.len() <= ue {
            self.neighbours.resize(ue + 1, Vec::new());
        }
        let table = &mut self.neighbours[ue];
        for n in report.neighbours.iter().filter(|n| n.cell != report.serving.cell) {
            match table.iter_mut().find(|e| e.0 == n.cell) {
                Some(e) => e.1 = n.rsrq_db,
                None => table.push((n.cell, n.rsrq_db)),
            }
        }
    }
}

impl HandoverAlgorithm for A2A4Rsrq {
    fn report_configs(&self) -> Vec<ReportConfig> {
        vec![self.cfg.a2(), self.cfg.a4()]
    }

    fn on_report(&mut self, _now: SimTime, ue: usize, report: &MeasReport, accept: &dyn Fn(usize) -> bool) -> Option<usize> {
        if report.quantity != Quantity::Rsrq || !matches!(report.event, EventType::A2 | EventType::A4) {
            return None;
        }
        self.remember(ue, report);
        let serving = report.serving.rsrq_db;
        if serving > self.cfg.serving_cell_threshold_db {
            return None;
        }
        let best = self.neighbours[ue]
            .iter()
            .filter(|&&(c, _)| c != report.serving.cell && accept(c))
            .copied()
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        (best.1 - serving >= self.cfg.neighbour_cell_offset_db).then_some(best.0)
    }

    fn on_ue_left(&mut self, ue: usize) {
        if let Some(t) = self.neighbours.get_mut(ue) {
            t.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handover::test_reports::{cell, report};
    use crate::rrc::meas::{CellSample, MeasConfig, UeMeasurements};

    const T: SimTime = SimTime::ZERO;

    // ns-3 EvaluateHandover: serving RSRQ at or below ServingCellThreshold and the best
    // neighbour better by at least NeighbourCellOffset → hand over to it.
    #[test]
    fn a2a4_hands_over_below_threshold_to_best_neighbour() {
        let mut a = A2A4Rsrq::new(A2A4RsrqConfig::default());
        let r = report(EventType::A2, Quantity::Rsrq, cell(0, -100.0, -8.0), vec![cell(2, -99.0, -6.0), cell(1, -98.0, -7.0)]);
        assert_eq!(a.on_report(T, 0, &r, &|_| true), Some(2));
        // the cell the eNB may not use is skipped
        assert_eq!(a.on_report(T, 0, &r, &|c| c != 2), Some(1));
    }

    // The offset is a strict margin: 0.5 dB better hands over, 0.4 dB better does not.
    #[test]
    fn a2a4_neighbour_offset_is_required() {
        let mut a = A2A4Rsrq::new(A2A4RsrqConfig::default());
        let close = report(EventType::A2, Quantity::Rsrq, cell(0, -100.0, -8.0), vec![cell(1, -99.0, -7.6)]);
        assert_eq!(a.on_report(T, 0, &close, &|_| true), None);
        let enough = report(EventType::A2, Quantity::Rsrq, cell(0, -100.0, -8.0), vec![cell(1, -99.0, -7.5)]);
        assert_eq!(a.on_report(T, 0, &enough, &|_| true), Some(1));
    }

    // Above the serving threshold nothing happens, however good the neighbour; what an A4
    // report told the eNB is kept for the next A2 (which here lists no neighbour).
    #[test]
    fn a2a4_serving_above_threshold_keeps_ue_and_remembers_a4() {
        let mut a = A2A4Rsrq::new(A2A4RsrqConfig::default());
        let a4 = report(EventType::A4, Quantity::Rsrq, cell(0, -90.0, -4.0), vec![cell(3, -85.0, -3.0)]);
        assert_eq!(a.on_report(T, 7, &a4, &|_| true), None);
        let a2 = report(EventType::A2, Quantity::Rsrq, cell(0, -100.0, -9.0), vec![]);
        assert_eq!(a.on_report(T, 7, &a2, &|_| true), Some(3));
        // after the UE left, the table is gone
        a.on_ue_left(7);
        assert_eq!(a.on_report(T, 7, &a2, &|_| true), None);
        // RSRP reports and A3 reports are not this algorithm's
        let rsrp = report(EventType::A2, Quantity::Rsrp, cell(0, -130.0, -15.0), vec![cell(1, -80.0, -3.0)]);
        assert_eq!(a.on_report(T, 0, &rsrp, &|_| true), None);
    }

    // The report configurations drive the UE's measurements: feeding samples to a UE with
    // them, the serving RSRQ falling from −4 to −6 dB (threshold −5) with a neighbour at
    // −5.2 dB triggers A2 and the handover decision in that same sample (TTT 0, hysteresis
    // 0, filter k = 0: the raw values, TS 36.331 §5.5.3.2 with a = 1).
    #[test]
    fn a2a4_report_configs_trigger_through_ue_measurements() {
        let mut a = A2A4Rsrq::new(A2A4RsrqConfig::default());
        let cfg = MeasConfig { filter_coefficient: 0, reports: a.report_configs(), ..MeasConfig::default() };
        cfg.validate().unwrap();
        let mut m = UeMeasurements::new(cfg, 0).unwrap();
        let mut decided = Vec::new();
        for (k, (serving, neighbour)) in [(-4.0, -9.0), (-4.5, -7.0), (-6.0, -5.2)].into_iter().enumerate() {
            let now = SimTime::from_millis(200 * k as u64);
            let mut reports = Vec::new();
            let s = [CellSample { cell: 0, rsrp_dbm: -90.0, rsrq_db: serving }, CellSample { cell: 1, rsrp_dbm: -92.0, rsrq_db: neighbour }];
            m.on_measurement(now, &s, &mut reports);
            for r in &reports {
                if let Some(t) = a.on_report(now, 0, r, &|_| true) {
                    decided.push((k, t));
                }
            }
        }
        assert_eq!(decided, vec![(2, 1)]);
    }

    #[test]
    fn a2a4_config_validation() {
        assert!(A2A4RsrqConfig::default().validate().is_ok());
        assert!(A2A4RsrqConfig { serving_cell_threshold_db: -2.0, ..A2A4RsrqConfig::default() }.validate().is_err());
        assert!(A2A4RsrqConfig { neighbour_cell_offset_db: -1.0, ..A2A4RsrqConfig::default() }.validate().is_err());
    }
}
