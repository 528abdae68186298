//! UE measurements, layer-3 filtering, measurement events and the handover decision.
//!
//! **Quantities** (TS 36.214 §5.1.1, §5.1.3):
//! - RSRP is the average received power of one resource element carrying the cell-specific
//!   reference signal. With the eNB power spread evenly over its `12 N_PRB` subcarriers, the
//!   power per RE is `P_tx − 10 log10(12 N_PRB)` and [`rsrp_dbm`] =
//!   `P_tx − 10 log10(12 N_PRB) + G_tx + G_rx − L − X` (path loss `L`, shadowing `X`).
//! - RSSI is the total received power over the `N` resource blocks of the measurement bandwidth
//!   in an OFDM symbol that carries reference signals: from every cell, its reference signal
//!   REs (2 per PRB per such symbol for antenna port 0, TS 36.211 §6.10.1.2) and its data REs
//!   in proportion to its load, plus thermal noise ([`rssi_dbm`]).
//! - RSRQ = `N · RSRP / RSSI` ([`rsrq_db`]). A lone cell without noise gives −3.0 dB when empty
//!   (only its 2 reference-signal REs per PRB on the air: `N·RSRP / (2N·RSRP)`) and −10.8 dB
//!   when fully loaded (`1/12`), the usual limits of RSRQ.
//!
//! **Measurement period.** The physical layer delivers one sample per cell every
//! [`DEFAULT_MEAS_PERIOD_MS`] = 200 ms (the intra-frequency measurement period of TS 36.133
//! §8.1.2.2, also ns-3's `UeMeasurementsFilterPeriod`); the caller decides when to sample and
//! passes the period in [`MeasConfig::period_ms`] for reference.
//!
//! **Layer-3 filter** (TS 36.331 §5.5.3.2): `F_n = (1 − a) F_{n−1} + a M_n`, `a = 1/2^(k/4)`,
//! `k` = filterCoefficient (default fc4, `a = 1/2`), applied to dBm/dB values; the first sample
//! initialises `F_1 = M_1`. `k` is defined for one sample per 200 ms; other sample intervals Δt
//! use `a' = 1 − (1 − a)^(Δt/200 ms)`, which keeps the filter's time constant (the adaptation
//! the clause asks for).
//!
//! **Events** (TS 36.331 §5.5.4), on the filtered trigger quantity (RSRP or RSRQ), with `Mp`
//! the serving cell, `Mn` a neighbour, `Ocn`/`Ocp` the cell individual offsets (default 0),
//! `Hys` the hysteresis and `Off` the a3-Offset (intra-frequency, so `Ofn = Ofp` cancels):
//! - A2 (§5.5.4.3): entering `Mp + Hys < Thresh`, leaving `Mp − Hys > Thresh`;
//! - A3 (§5.5.4.4): entering `Mn + Ocn − Hys > Mp + Ocp + Off`, leaving
//!   `Mn + Ocn + Hys < Mp + Ocp + Off`;
//! - A4 (§5.5.4.5): entering `Mn + Ocn − Hys > Thresh`, leaving `Mn + Ocn + Hys < Thresh`.
//!
//! A cell joins the event's `cellsTriggeredList` when the entering condition has held for
//! `timeToTrigger` (§5.5.4.1) and the UE then sends one report (report on trigger,
//! `reportAmount = 1`; periodic re-reporting is not modelled). It leaves the list, without a
//! report, once the leaving condition has held for `timeToTrigger`. Filtered values change only
//! when samples arrive, so "held for TTT" is exact: a pending trigger fires at
//! `entry + TTT` ([`UeMeasurements::next_deadline`]), unless a sample before that instant breaks
//! the condition. Time-to-trigger accepts only the values of the `TimeToTrigger` IE.
//! On handover ([`UeMeasurements::on_handover`]) every triggered list and pending
//! time-to-trigger is cleared (§5.5.6.1); the filter states are kept.
//!
//! **Handover decision** ([`handover_target`]): the source eNB hands over to the best cell of an
//! A3 (or A4) report, by the report's trigger quantity, among the cells it accepts (TS 36.300
//! §10.1.2.1.1 step 3 leaves the algorithm to the eNB; this is the ns-3 `A3RsrpHandoverAlgorithm`
//! rule).
//!
//! API:
//! ```text
//! let samples = measure_cells(&links, n_prb, ue_noise_figure_db);   // (CellSample, RS SINR) per cell
//! let mut m = UeMeasurements::new(MeasConfig::default(), serving)?;
//! m.on_measurement(now, &[CellSample { cell, rsrp_dbm, rsrq_db }, ...], &mut reports);
//! if let Some(t) = m.next_deadline() { /* at t: */ m.on_timeout(t, &mut reports) }
//! for r in &reports { if let Some(target) = handover_target(r, |c| allowed(c)) { ... m.on_handover(now, target) } }
//! ```

use celltcp_engine::SimTime;

use crate::phy::channel::{dbm_to_mw, mw_to_dbm};

/// Default measurement (sampling) period, ms.
pub const DEFAULT_MEAS_PERIOD_MS: u32 = 200;

/// Sample interval the filterCoefficient is defined for, ms (TS 36.331 §5.5.3.2).
pub const FILTER_REFERENCE_MS: f64 = 200.0;

/// Values of the `TimeToTrigger` IE (TS 36.331 §6.3.5), ms.
pub const TIME_TO_TRIGGER_MS: [u32; 16] = [0, 40, 64, 80, 100, 128, 160, 256, 320, 480, 512, 640, 1024, 1280, 2560, 5120];

/// Values of the `ReportInterval` IE (TS 36.331 §6.3.5), ms.
pub const REPORT_INTERVAL_MS: [u32; 13] = [120, 240, 480, 640, 1024, 2048, 5120, 10240, 60_000, 360_000, 720_000, 1_800_000, 3_600_000];

/// Values of the TS 36.331 `FilterCoefficient` IE (fc0 … fc9, fc11, fc13, fc15, fc17, fc19).
pub const FILTER_COEFFICIENTS: [u8; 15] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 17, 19];

/// Reference-signal REs per PRB in an OFDM symbol that carries them, antenna port 0
/// (TS 36.211 §6.10.1.2: every sixth subcarrier).
pub const RS_RE_PER_PRB: f64 = 2.0;

/// RSRP in dBm (TS 36.214 §5.1.1): `P_tx − 10 log10(12 N_PRB) + G_tx + G_rx − L − X`.
///
/// # Panics
/// If `n_prb == 0`.
pub fn rsrp_dbm(tx_power_dbm: f64, n_prb: u16, tx_gain_dbi: f64, rx_gain_dbi: f64, loss_db: f64, shadowing_db: f64) -> f64 {
    assert!(n_prb > 0, "RSRP needs at least one PRB");
    tx_power_dbm - 10.0 * (12.0 * n_prb as f64).log10() + tx_gain_dbi + rx_gain_dbi - loss_db - shadowing_db
}

/// RSSI in dBm over `n_prb` PRBs in a reference-signal symbol: each cell `(rsrp_dbm, load)`
/// contributes `N · RSRP · (2 + 10 · load)` (its RS REs always, its 10 other REs per PRB in
/// proportion to `load` ∈ [0, 1]), plus `noise_dbm` (thermal noise over `N · 180 kHz`, e.g.
/// [`crate::phy::channel::thermal_noise_dbm`]; `f64::NEG_INFINITY` for none).
pub fn rssi_dbm(cells: &[(f64, f64)], n_prb: u16, noise_dbm: f64) -> f64 {
    let n = n_prb as f64;
    let data_re = 12.0 - RS_RE_PER_PRB;
    let mw: f64 = cells
        .iter()
        .map(|&(rsrp, load)| n * dbm_to_mw(rsrp) * (RS_RE_PER_PRB + data_re * load.clamp(0.0, 1.0)))
        .sum::<f64>()
        + dbm_to_mw(noise_dbm);
    mw_to_dbm(mw)
}

/// RSRQ in dB (TS 36.214 §5.1.3): `10 log10(N) + RSRP − RSSI`.
pub fn rsrq_db(rsrp_dbm: f64, rssi_dbm: f64, n_prb: u16) -> f64 {
    10.0 * (n_prb as f64).log10() + rsrp_dbm - rssi_dbm
}

/// One UE's view of one cell for [`measure_cells`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellLink {
    pub cell: usize,
    /// eNB transmit power over the whole carrier, dBm.
    pub tx_power_dbm: f64,
    /// Total gain of the link in dB: antenna gains (with the sector pattern toward the UE)
    /// minus path loss minus shadowing.
    pub gain_db: f64,
    /// Fraction of the cell's data REs in use, [0, 1].
    pub load: f64,
}

/// The physical-layer samples (RSRP, RSRQ) of every cell in `links` for a UE whose receiver
/// has `noise_figure_db`, on a carrier of `n_prb` PRBs (RSSI over the whole carrier, all
/// links interfering). Also returns the reference-signal SINR of each cell
/// ([`rs_sinr_db`]), the wideband quality the radio link monitoring of [`super::rlf`] uses.
pub fn measure_cells(links: &[CellLink], n_prb: u16, noise_figure_db: f64) -> Vec<(CellSample, f64)> {
    use crate::phy::channel::{thermal_noise_dbm, PRB_BANDWIDTH_HZ};
    let n = n_prb as f64;
    let data_re = 12.0 - RS_RE_PER_PRB;
    // per cell: RSRP (dBm) and its mean power per RE in mW, (RS + load · data) / 12 · RSRP
    let per: Vec<(f64, f64)> = links
        .iter()
        .map(|l| {
            let rsrp = rsrp_dbm(l.tx_power_dbm, n_prb, 0.0, 0.0, -l.gain_db, 0.0);
            (rsrp, dbm_to_mw(rsrp) * (RS_RE_PER_PRB + data_re * l.load.clamp(0.0, 1.0)) / 12.0)
        })
        .collect();
    let total_mw: f64 = per.iter().map(|p| p.1).sum();
    let noise_re_mw = dbm_to_mw(thermal_noise_dbm(15e3, noise_figure_db));
    // RSSI: 12 N REs of every cell's mean RE power, plus noise over N · 180 kHz (= 12 N REs)
    let rssi = mw_to_dbm(12.0 * n * total_mw + dbm_to_mw(thermal_noise_dbm(n * PRB_BANDWIDTH_HZ, noise_figure_db)));
    links
        .iter()
        .zip(&per)
        .map(|(l, &(rsrp, own_mw))| {
            let interference = (total_mw - own_mw).max(0.0);
            (
                CellSample { cell: l.cell, rsrp_dbm: rsrp, rsrq_db: rsrq_db(rsrp, rssi, n_prb) },
                rsrp - mw_to_dbm(interference + noise_re_mw),
            )
        })
        .collect()
}

/// SINR of a cell's reference-signal REs: its RSRP over the mean power per RE of the other
/// cells (`(rsrp, load)`: RS REs always on, data REs in proportion to load, as in
/// [`rssi_dbm`], averaged over the 12 REs of a PRB) plus the thermal noise of one RE.
pub fn rs_sinr_db(rsrp_dbm: f64, others: &[(f64, f64)], noise_per_re_dbm: f64) -> f64 {
    let data_re = 12.0 - RS_RE_PER_PRB;
    let i_mw: f64 = others.iter().map(|&(p, load)| dbm_to_mw(p) * (RS_RE_PER_PRB + data_re * load.clamp(0.0, 1.0)) / 12.0).sum();
    rsrp_dbm - mw_to_dbm(i_mw + dbm_to_mw(noise_per_re_dbm))
}

/// The layer-3 filter of TS 36.331 §5.5.3.2 on one quantity (dB domain).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct L3Filter {
    /// `a` for the 200 ms reference interval.
    a: f64,
    state: Option<(f64, SimTime)>,
}

impl L3Filter {
    /// A filter with filterCoefficient `k` (unchecked; see [`FILTER_COEFFICIENTS`]).
    pub fn new(k: u8) -> Self {
        L3Filter { a: Self::coefficient(k), state: None }
    }

    /// `a = 1 / 2^(k/4)`.
    pub fn coefficient(k: u8) -> f64 {
        0.5f64.powf(k as f64 / 4.0)
    }

    /// Feeds sample `m` taken at `now` and returns the filtered value. The first sample
    /// initialises the filter; later ones use `a' = 1 − (1 − a)^(Δt / 200 ms)`.
    pub fn update(&mut self, now: SimTime, m: f64) -> f64 {
        let f = match self.state {
            None => m,
            Some((prev, t)) => {
                let dt_ms = now.saturating_since(t).as_millis_f64();
                let a = if dt_ms == FILTER_REFERENCE_MS { self.a } else { 1.0 - (1.0 - self.a).powf(dt_ms / FILTER_REFERENCE_MS) };
                (1.0 - a) * prev + a * m
            }
        };
        self.state = Some((f, now));
        f
    }

    /// The filtered value, if any sample arrived.
    pub fn value(&self) -> Option<f64> {
        self.state.map(|s| s.0)
    }
}

/// The quantity an event compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Quantity {
    Rsrp,
    Rsrq,
}

/// Which event a report configuration watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventType {
    /// Serving becomes worse than threshold.
    A2,
    /// Neighbour becomes offset better than serving.
    A3,
    /// Neighbour becomes better than threshold.
    A4,
}

/// One `reportConfig` (TS 36.331 §6.3.5 ReportConfigEUTRA) with event triggering.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReportConfig {
    pub event: EventType,
    /// Trigger quantity. Default RSRP.
    pub quantity: Quantity,
    /// a3-Offset in dB, −15 … 15 in 0.5 dB steps (A3 only). Default 0.
    pub offset_db: f64,
    /// Threshold for A2/A4: dBm for RSRP (−140 … −44), dB for RSRQ (−19.5 … −3).
    pub threshold: f64,
    /// Hysteresis in dB, 0 … 15 in 0.5 dB steps. Default 3 dB (ns-3 A3RsrpHandoverAlgorithm).
    pub hysteresis_db: f64,
    /// Time-to-trigger in ms, one of [`TIME_TO_TRIGGER_MS`]. Default 256 ms.
    pub time_to_trigger_ms: u32,
    /// Most neighbour results in a report (maxReportCells, 1 … 8). Default 8.
    pub max_report_cells: usize,
    /// reportInterval in ms, one of [`REPORT_INTERVAL_MS`]: after the report on trigger, the UE
    /// reports again every interval while the triggered list is not empty (TS 36.331
    /// §5.5.4.1, `reportAmount` infinity). Default `None`: one report on trigger only.
    pub report_interval_ms: Option<u32>,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            event: EventType::A3,
            quantity: Quantity::Rsrp,
            offset_db: 0.0,
            threshold: -110.0,
            hysteresis_db: 3.0,
            time_to_trigger_ms: 256,
            max_report_cells: 8,
            report_interval_ms: None,
        }
    }
}

fn half_db_steps(x: f64) -> bool {
    (x * 2.0 - (x * 2.0).round()).abs() < 1e-9
}

impl ReportConfig {
    /// Checks every field against its IE range, naming the key.
    pub fn validate(&self) -> Result<(), String> {
        if !TIME_TO_TRIGGER_MS.contains(&self.time_to_trigger_ms) {
            return Err(format!(
                "time_to_trigger_ms must be one of {:?} (TS 36.331 TimeToTrigger); got {}",
                TIME_TO_TRIGGER_MS, self.time_to_trigger_ms
            ));
        }
        if !((0.0..=15.0).contains(&self.hysteresis_db) && half_db_steps(self.hysteresis_db)) {
            return Err(format!("hysteresis_db must be in [0, 15] dB in 0.5 dB steps (TS 36.331 Hysteresis); got {}", self.hysteresis_db));
        }
        if !((-15.0..=15.0).contains(&self.offset_db) && half_db_steps(self.offset_db)) {
            return Err(format!("offset_db (a3-Offset) must be in [-15, 15] dB in 0.5 dB steps; got {}", self.offset_db));
        }
        if self.event != EventType::A3 {
            let (lo, hi, unit) = match self.quantity {
                Quantity::Rsrp => (-140.0, -44.0, "dBm (RSRP-Range)"),
                Quantity::Rsrq => (-19.5, -3.0, "dB (RSRQ-Range)"),
            };
            if !(lo..=hi).contains(&self.threshold) {
                return Err(format!("threshold must be in [{lo}, {hi}] {unit}; got {}", self.threshold));
            }
        }
        if let Some(i) = self.report_interval_ms {
            if !REPORT_INTERVAL_MS.contains(&i) {
                return Err(format!("report_interval_ms must be one of {REPORT_INTERVAL_MS:?} (TS 36.331 ReportInterval); got {i}"));
            }
        }
        if !(1..=8).contains(&self.max_report_cells) {
            return Err(format!("max_report_cells must be in [1, 8]; got {}", self.max_report_cells));
        }
        Ok(())
    }
}

/// Measurement configuration of one UE.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeasConfig {
    /// filterCoefficient `k`, one of [`FILTER_COEFFICIENTS`]. Default 4.
    pub filter_coefficient: u8,
    /// Sampling period in ms the caller uses (≥ 1). Default 200.
    pub period_ms: u32,
    /// The report configurations (measIds). Default: one A3 on RSRP, 0 dB offset, 3 dB
    /// hysteresis, 256 ms time-to-trigger.
    pub reports: Vec<ReportConfig>,
}

impl Default for MeasConfig {
    fn default() -> Self {
        MeasConfig { filter_coefficient: 4, period_ms: DEFAULT_MEAS_PERIOD_MS, reports: vec![ReportConfig::default()] }
    }
}

impl MeasConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !FILTER_COEFFICIENTS.contains(&self.filter_coefficient) {
            return Err(format!(
                "filter_coefficient must be one of {:?} (TS 36.331 FilterCoefficient); got {}",
                FILTER_COEFFICIENTS, self.filter_coefficient
            ));
        }
        if self.period_ms == 0 {
            return Err("period_ms must be at least 1 ms; got 0".into());
        }
        for (i, r) in self.reports.iter().enumerate() {
            r.validate().map_err(|e| format!("reports[{i}]: {e}"))?;
        }
        Ok(())
    }
}

/// One physical-layer sample of a cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellSample {
    pub cell: usize,
    pub rsrp_dbm: f64,
    pub rsrq_db: f64,
}

/// Filtered results of one cell, as carried in a report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellResult {
    pub cell: usize,
    pub rsrp_dbm: f64,
    pub rsrq_db: f64,
}

impl CellResult {
    fn get(&self, q: Quantity) -> f64 {
        match q {
            Quantity::Rsrp => self.rsrp_dbm,
            Quantity::Rsrq => self.rsrq_db,
        }
    }
}

/// A measurement report (TS 36.331 §5.5.5).
#[derive(Clone, Debug, PartialEq)]
pub struct MeasReport {
    /// When the report was triggered (entry + time-to-trigger).
    pub at: SimTime,
    /// Index of the report configuration in [`MeasConfig::reports`] (the measId).
    pub report: usize,
    pub event: EventType,
    pub quantity: Quantity,
    /// Serving cell's filtered results.
    pub serving: CellResult,
    /// Cells newly added to the triggered list by this report.
    pub new_cells: Vec<usize>,
    /// A3/A4: the cells of `cellsTriggeredList`; A2: the best measured neighbours. Best first
    /// by the trigger quantity, at most `max_report_cells`.
    pub neighbours: Vec<CellResult>,
}

/// The handover target of a report: the best reported neighbour of an A3 or A4 report that
/// `accept` admits (e.g. not an interferer-only cell), or `None` (A2 reports, nothing
/// acceptable).
pub fn handover_target(report: &MeasReport, accept: impl Fn(usize) -> bool) -> Option<usize> {
    match report.event {
        EventType::A2 => None,
        EventType::A3 | EventType::A4 => report.neighbours.iter().find(|c| c.cell != report.serving.cell && accept(c.cell)).map(|c| c.cell),
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    triggered: bool,
    /// Entering (not triggered) or leaving (triggered) condition holds since.
    since: Option<SimTime>,
}

#[derive(Clone, Copy, Debug)]
struct Filters {
    rsrp: L3Filter,
    rsrq: L3Filter,
}

/// The measurement state of one UE.
#[derive(Clone, Debug)]
pub struct UeMeasurements {
    cfg: MeasConfig,
    serving: usize,
    filters: Vec<Option<Filters>>,
    /// Cell individual offsets Ocn, dB.
    offsets: Vec<f64>,
    /// `entries[report][cell]`; for A2 only the serving cell's entry is used.
    entries: Vec<Vec<Entry>>,
    /// Per report configuration: when the next periodic report is due (reportInterval).
    periodic: Vec<Option<SimTime>>,
}

impl UeMeasurements {
    pub fn new(cfg: MeasConfig, serving: usize) -> Result<Self, String> {
        cfg.validate()?;
        let entries = vec![Vec::new(); cfg.reports.len()];
        let periodic = vec![None; cfg.reports.len()];
        Ok(UeMeasurements { cfg, serving, filters: Vec::new(), offsets: Vec::new(), entries, periodic })
    }

    pub fn config(&self) -> &MeasConfig {
        &self.cfg
    }

    pub fn serving(&self) -> usize {
        self.serving
    }

    /// Sets the cellIndividualOffset of `cell` (Q-OffsetRange, −24 … 24 dB).
    pub fn set_cell_offset(&mut self, cell: usize, offset_db: f64) -> Result<(), String> {
        if !(-24.0..=24.0).contains(&offset_db) {
            return Err(format!("cell_offset_db must be in [-24, 24] dB (Q-OffsetRange); got {offset_db}"));
        }
        if self.offsets.len() <= cell {
            self.offsets.resize(cell + 1, 0.0);
        }
        self.offsets[cell] = offset_db;
        Ok(())
    }

    fn ocn(&self, cell: usize) -> f64 {
        self.offsets.get(cell).copied().unwrap_or(0.0)
    }

    /// Filtered results of `cell`, if it was ever measured.
    pub fn filtered(&self, cell: usize) -> Option<CellResult> {
        let f = self.filters.get(cell).copied().flatten()?;
        Some(CellResult { cell, rsrp_dbm: f.rsrp.value()?, rsrq_db: f.rsrq.value()? })
    }

    /// Feeds one sample per measured cell taken at `now` (the serving cell among them),
    /// first firing any time-to-trigger that expired up to `now`. Reports go to `out`.
    pub fn on_measurement(&mut self, now: SimTime, samples: &[CellSample], out: &mut Vec<MeasReport>) {
        self.on_timeout(now, out);
        let k = self.cfg.filter_coefficient;
        for s in samples {
            if self.filters.len() <= s.cell {
                self.filters.resize(s.cell + 1, None);
            }
            let f = self.filters[s.cell].get_or_insert(Filters { rsrp: L3Filter::new(k), rsrq: L3Filter::new(k) });
            f.rsrp.update(now, s.rsrp_dbm);
            f.rsrq.update(now, s.rsrq_db);
        }
        for r in 0..self.cfg.reports.len() {
            self.evaluate(now, r, out);
        }
    }

    /// Entering and leaving conditions of report `r` for `cell` (None: not evaluable).
    fn conditions(&self, r: usize, cell: usize) -> Option<(bool, bool)> {
        let rc = &self.cfg.reports[r];
        let q = rc.quantity;
        let mp = self.filtered(self.serving)?.get(q);
        let hys = rc.hysteresis_db;
        match rc.event {
            EventType::A2 => Some((mp + hys < rc.threshold, mp - hys > rc.threshold)),
            EventType::A3 => {
                let mn = self.filtered(cell)?.get(q) + self.ocn(cell);
                let rhs = mp + self.ocn(self.serving) + rc.offset_db;
                Some((mn - hys > rhs, mn + hys < rhs))
            }
            EventType::A4 => {
                let mn = self.filtered(cell)?.get(q) + self.ocn(cell);
                Some((mn - hys > rc.threshold, mn + hys < rc.threshold))
            }
        }
    }

    /// Cells report `r` watches.
    fn watched(&self, r: usize) -> Vec<usize> {
        match self.cfg.reports[r].event {
            EventType::A2 => vec![self.serving],
            _ => (0..self.filters.len()).filter(|&c| c != self.serving && self.filters[c].is_some()).collect(),
        }
    }

    fn entry(&mut self, r: usize, cell: usize) -> &mut Entry {
        let e = &mut self.entries[r];
        if e.len() <= cell {
            e.resize(cell + 1, Entry::default());
        }
        &mut e[cell]
    }

    fn evaluate(&mut self, now: SimTime, r: usize, out: &mut Vec<MeasReport>) {
        let ttt_zero = self.cfg.reports[r].time_to_trigger_ms == 0;
        let mut new_cells = Vec::new();
        for cell in self.watched(r) {
            let Some((enter, leave)) = self.conditions(r, cell) else { continue };
            let e = self.entry(r, cell);
            let cond = if e.triggered { leave } else { enter };
            if !cond {
                e.since = None;
                continue;
            }
            e.since.get_or_insert(now);
            if ttt_zero {
                e.since = None;
                e.triggered = !e.triggered;
                if e.triggered {
                    new_cells.push(cell);
                }
            }
        }
        if !new_cells.is_empty() {
            self.send(now, r, new_cells, out);
        }
    }

    /// Sends a report of configuration `r` and schedules the next periodic one, if any.
    fn send(&mut self, now: SimTime, r: usize, new_cells: Vec<usize>, out: &mut Vec<MeasReport>) {
        out.push(self.report(now, r, new_cells));
        self.periodic[r] = self.cfg.reports[r].report_interval_ms.map(|i| now + celltcp_engine::SimDuration::from_millis(u64::from(i)));
    }

    fn report(&self, now: SimTime, r: usize, new_cells: Vec<usize>) -> MeasReport {
        let rc = &self.cfg.reports[r];
        let q = rc.quantity;
        let serving = self.filtered(self.serving).expect("a report needs a measured serving cell");
        let mut neighbours: Vec<CellResult> = match rc.event {
            EventType::A2 => (0..self.filters.len()).filter(|&c| c != self.serving).filter_map(|c| self.filtered(c)).collect(),
            _ => self.entries[r].iter().enumerate().filter(|(_, e)| e.triggered).filter_map(|(c, _)| self.filtered(c)).collect(),
        };
        neighbours.sort_by(|a, b| b.get(q).total_cmp(&a.get(q)).then(a.cell.cmp(&b.cell)));
        neighbours.truncate(rc.max_report_cells);
        MeasReport { at: now, report: r, event: rc.event, quantity: q, serving, new_cells, neighbours }
    }

    /// The earliest instant at which a pending time-to-trigger expires.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let ttt = self
            .entries
            .iter()
            .enumerate()
            .flat_map(|(r, es)| {
                let ttt = celltcp_engine::SimDuration::from_millis(self.cfg.reports[r].time_to_trigger_ms as u64);
                es.iter().filter_map(move |e| e.since.map(|s| s + ttt))
            })
            .min();
        ttt.into_iter().chain(self.periodic.iter().flatten().copied()).min()
    }

    /// Fires every time-to-trigger that expired at or before `now`, in time order; each report
    /// carries its exact expiry instant.
    pub fn on_timeout(&mut self, now: SimTime, out: &mut Vec<MeasReport>) {
        while let Some(d) = self.next_deadline().filter(|&d| d <= now) {
            for r in 0..self.entries.len() {
                let ttt = celltcp_engine::SimDuration::from_millis(self.cfg.reports[r].time_to_trigger_ms as u64);
                let mut new_cells = Vec::new();
                for (cell, e) in self.entries[r].iter_mut().enumerate() {
                    if e.since.is_some_and(|s| s + ttt == d) {
                        e.since = None;
                        e.triggered = !e.triggered;
                        if e.triggered {
                            new_cells.push(cell);
                        }
                    }
                }
                if !new_cells.is_empty() {
                    self.send(d, r, new_cells, out);
                } else if self.periodic[r] == Some(d) {
                    // reportInterval elapsed: report again while cells stay triggered.
                    self.periodic[r] = None;
                    if self.entries[r].iter().any(|e| e.triggered) {
                        self.send(d, r, Vec::new(), out);
                    }
                }
            }
        }
    }

    /// The UE now camps on `new_serving` (handover or re-establishment): triggered lists and
    /// pending time-to-trigger are cleared (TS 36.331 §5.5.6.1); filters are kept.
    pub fn on_handover(&mut self, _now: SimTime, new_serving: usize) {
        self.serving = new_serving;
        for e in &mut self.entries {
            e.clear();
        }
        self.periodic.iter_mut().for_each(|p| *p = None);
    }

    /// Whether `cell` is in report `r`'s triggered list.
    pub fn is_triggered(&self, r: usize, cell: usize) -> bool {
        self.entries.get(r).and_then(|e| e.get(cell)).is_some_and(|e| e.triggered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::channel::{standard_normal, thermal_noise_dbm};
    use celltcp_engine::rng::{component_id, component_rng};

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    // ---------------------------------------------------------------- quantities

    #[test]
    fn rsrp_is_power_per_re() {
        // 46 dBm over 50 PRBs = 600 subcarriers: 46 − 27.78 = 18.22 dBm per RE
        close(rsrp_dbm(46.0, 50, 0.0, 0.0, 0.0, 0.0), 46.0 - 10.0 * 600f64.log10(), 1e-12);
        close(rsrp_dbm(46.0, 50, 0.0, 0.0, 0.0, 0.0), 18.2185, 1e-4);
        // gains add, loss and shadowing subtract
        close(rsrp_dbm(46.0, 100, 14.0, 0.0, 120.0, 3.0), 46.0 - 30.792 + 14.0 - 123.0, 1e-3);
    }

    #[test]
    fn rsrq_range_limits() {
        // Lone cell, no noise: empty → N·RSRP/(2N·RSRP) = −3.01 dB; full → 1/12 = −10.79 dB.
        let p = -80.0;
        let empty = rsrq_db(p, rssi_dbm(&[(p, 0.0)], 50, f64::NEG_INFINITY), 50);
        let full = rsrq_db(p, rssi_dbm(&[(p, 1.0)], 50, f64::NEG_INFINITY), 50);
        close(empty, -10.0 * 2f64.log10(), 1e-9);
        close(full, -10.0 * 12f64.log10(), 1e-9);
        close(full, -10.79, 0.01);
        // an equal, fully loaded neighbour halves it again (−3 dB); noise at the RSSI level too
        let two = rsrq_db(p, rssi_dbm(&[(p, 1.0), (p, 1.0)], 50, f64::NEG_INFINITY), 50);
        close(two, full - 10.0 * 2f64.log10(), 1e-9);
        // RSSI of one full cell = its total received power 12·N·RSRP
        close(rssi_dbm(&[(p, 1.0)], 50, f64::NEG_INFINITY), p + 10.0 * 600f64.log10(), 1e-9);
        let n = thermal_noise_dbm(50.0 * 180e3, 9.0);
        assert!(rssi_dbm(&[], 50, n) == n);
    }

    #[test]
    fn measure_cells_two_equal_cells_and_noise_limited() {
        // two equal, fully loaded cells, negligible noise (huge gains): RSRQ = 1/24 = −13.8 dB,
        // SINR 0 dB
        let l = |cell, load| CellLink { cell, tx_power_dbm: 46.0, gain_db: -60.0, load };
        let m = measure_cells(&[l(0, 1.0), l(1, 1.0)], 50, 9.0);
        close(m[0].0.rsrq_db, -10.0 * 24f64.log10(), 1e-6);
        close(m[0].1, 0.0, 1e-6);
        assert_eq!(m[1].0.cell, 1);
        close(m[0].0.rsrp_dbm, 46.0 - 10.0 * 600f64.log10() - 60.0, 1e-12);
        // an empty neighbour interferes with its RS REs only: 2/12 of its RE power
        let m = measure_cells(&[l(0, 1.0), l(1, 0.0)], 50, 9.0);
        close(m[0].1, 10.0 * 6f64.log10(), 1e-6);
        // agrees with the separate rssi_dbm / rs_sinr_db definitions on an uneven mix
        let mix = [
            CellLink { cell: 4, tx_power_dbm: 46.0, gain_db: -95.0, load: 0.3 },
            CellLink { cell: 7, tx_power_dbm: 43.0, gain_db: -101.0, load: 1.0 },
            CellLink { cell: 9, tx_power_dbm: 46.0, gain_db: -110.0, load: 0.0 },
        ];
        let m = measure_cells(&mix, 25, 7.0);
        let pairs: Vec<(f64, f64)> = m.iter().zip(&mix).map(|(x, l)| (x.0.rsrp_dbm, l.load)).collect();
        let rssi = rssi_dbm(&pairs, 25, thermal_noise_dbm(25.0 * 180e3, 7.0));
        for (i, x) in m.iter().enumerate() {
            close(x.0.rsrq_db, rsrq_db(x.0.rsrp_dbm, rssi, 25), 1e-9);
            let others: Vec<(f64, f64)> = pairs.iter().enumerate().filter(|&(k, _)| k != i).map(|(_, &p)| p).collect();
            close(x.1, rs_sinr_db(x.0.rsrp_dbm, &others, thermal_noise_dbm(15e3, 7.0)), 1e-9);
        }
        // alone and far: SINR = RSRP − noise per RE (−174 + 41.76 + 9 = −123.2 dBm)
        let far = CellLink { cell: 0, tx_power_dbm: 46.0, gain_db: -140.0, load: 1.0 };
        let m = measure_cells(&[far], 50, 9.0);
        close(m[0].1, m[0].0.rsrp_dbm - (-174.0 + 10.0 * 15e3f64.log10() + 9.0), 1e-9);
    }

    // ---------------------------------------------------------------- layer-3 filter

    #[test]
    fn l3_filter_step_response_is_closed_form() {
        for k in [0u8, 1, 4, 8, 19] {
            let a = 1.0 / 2f64.powf(k as f64 / 4.0);
            let mut f = L3Filter::new(k);
            assert_eq!(f.update(ms(0), 0.0), 0.0); // first sample initialises
            for n in 1..=20u32 {
                let v = f.update(ms(200 * n as u64), 1.0);
                close(v, 1.0 - (1.0 - a).powi(n as i32), 1e-12);
            }
        }
        // fc4: a = 1/2
        close(L3Filter::coefficient(4), 0.5, 1e-15);
        // first sample initialises at its own value
        let mut f = L3Filter::new(4);
        assert_eq!(f.update(ms(5), -93.0), -93.0);
    }

    #[test]
    fn l3_filter_keeps_its_time_constant_at_other_rates() {
        // two 100 ms steps == one 200 ms step; five 40 ms steps too
        let mut a = L3Filter::new(4);
        let mut b = L3Filter::new(4);
        let mut c = L3Filter::new(4);
        a.update(ms(0), 0.0);
        b.update(ms(0), 0.0);
        c.update(ms(0), 0.0);
        a.update(ms(200), 1.0);
        b.update(ms(100), 1.0);
        b.update(ms(200), 1.0);
        for i in 1..=5 {
            c.update(ms(40 * i), 1.0);
        }
        close(b.value().unwrap(), a.value().unwrap(), 1e-12);
        close(c.value().unwrap(), 0.5, 1e-12);
    }

    // ---------------------------------------------------------------- validation

    #[test]
    fn bad_configs_are_refused_with_the_key() {
        let e = ReportConfig { time_to_trigger_ms: 250, ..Default::default() }.validate().unwrap_err();
        assert!(e.contains("time_to_trigger_ms") && e.contains("256") && e.contains("250"), "{e}");
        let e = ReportConfig { hysteresis_db: 16.0, ..Default::default() }.validate().unwrap_err();
        assert!(e.contains("hysteresis_db"), "{e}");
        let e = ReportConfig { hysteresis_db: 0.3, ..Default::default() }.validate().unwrap_err();
        assert!(e.contains("0.5 dB steps"), "{e}");
        let e = ReportConfig { event: EventType::A2, threshold: -30.0, ..Default::default() }.validate().unwrap_err();
        assert!(e.contains("threshold") && e.contains("-140"), "{e}");
        let e = MeasConfig { filter_coefficient: 10, ..Default::default() }.validate().unwrap_err();
        assert!(e.contains("filter_coefficient"), "{e}");
        let e = UeMeasurements::new(
            MeasConfig { reports: vec![ReportConfig { time_to_trigger_ms: 1, ..Default::default() }], ..Default::default() },
            0,
        )
        .unwrap_err();
        assert!(e.starts_with("reports[0]: time_to_trigger_ms"), "{e}");
        for v in TIME_TO_TRIGGER_MS {
            assert!(ReportConfig { time_to_trigger_ms: v, ..Default::default() }.validate().is_ok());
        }
        let mut m = UeMeasurements::new(MeasConfig::default(), 0).unwrap();
        assert!(m.set_cell_offset(1, 30.0).unwrap_err().contains("cell_offset_db"));
    }

    // ---------------------------------------------------------------- A3 and time-to-trigger

    fn a3(hys: f64, ttt: u32, k: u8) -> UeMeasurements {
        let cfg = MeasConfig {
            filter_coefficient: k,
            period_ms: 200,
            reports: vec![ReportConfig { hysteresis_db: hys, time_to_trigger_ms: ttt, ..Default::default() }],
        };
        UeMeasurements::new(cfg, 0).unwrap()
    }

    fn sample(cell: usize, rsrp: f64) -> CellSample {
        CellSample { cell, rsrp_dbm: rsrp, rsrq_db: -10.0 }
    }

    /// Drives `m` with fixed RSRPs for cells 0 and 1 at `t` (ms), handling timeouts up to t.
    fn step(m: &mut UeMeasurements, t: u64, p0: f64, p1: f64, out: &mut Vec<MeasReport>) {
        m.on_measurement(ms(t), &[sample(0, p0), sample(1, p1)], out);
    }

    #[test]
    fn ttt_shorter_hold_never_triggers() {
        // no filtering (k = 0), hysteresis 3 dB, TTT 256 ms, samples every 8 ms
        let mut m = a3(3.0, 256, 0);
        let mut out = Vec::new();
        step(&mut m, 0, -90.0, -95.0, &mut out);
        // neighbour 4 dB better (> Hys) from the sample at 8 ms until the sample at 256 ms
        // breaks it: held 248 ms < TTT
        let mut t = 8;
        while t < 256 {
            step(&mut m, t, -90.0, -86.0, &mut out);
            t += 8;
        }
        step(&mut m, 256, -90.0, -95.0, &mut out);
        for t in (264..5000).step_by(8) {
            step(&mut m, t, -90.0, -95.0, &mut out);
        }
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(m.next_deadline(), None);
    }

    #[test]
    fn ttt_exact_hold_triggers_at_entry_plus_ttt() {
        let mut m = a3(3.0, 256, 0);
        let mut out = Vec::new();
        step(&mut m, 0, -90.0, -95.0, &mut out);
        step(&mut m, 100, -90.0, -86.0, &mut out); // entry at 100 ms
        assert_eq!(m.next_deadline(), Some(ms(356)));
        assert!(out.is_empty());
        // the condition holds until a sample at exactly entry + TTT breaks it
        step(&mut m, 356, -90.0, -95.0, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].at, ms(356));
        assert_eq!(out[0].event, EventType::A3);
        assert_eq!(out[0].new_cells, vec![1]);
        assert_eq!(handover_target(&out[0], |_| true), Some(1));
        assert_eq!(handover_target(&out[0], |c| c != 1), None);
        // one millisecond short: no trigger
        let mut m = a3(3.0, 256, 0);
        let mut out = Vec::new();
        step(&mut m, 0, -90.0, -95.0, &mut out);
        step(&mut m, 100, -90.0, -86.0, &mut out);
        step(&mut m, 355, -90.0, -95.0, &mut out);
        m.on_timeout(ms(10_000), &mut out);
        assert!(out.is_empty());
        // a timeout without any sample fires at the exact deadline
        let mut m = a3(3.0, 640, 0);
        let mut out = Vec::new();
        step(&mut m, 0, -90.0, -86.0, &mut out);
        m.on_timeout(ms(639), &mut out);
        assert!(out.is_empty());
        m.on_timeout(ms(5000), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].at, ms(640));
    }

    #[test]
    fn hysteresis_boundary_is_strict() {
        // Mn − Hys > Mp: exactly 3 dB better with 3 dB hysteresis does not enter
        let mut m = a3(3.0, 0, 0);
        let mut out = Vec::new();
        step(&mut m, 0, -90.0, -87.0, &mut out);
        assert!(out.is_empty());
        step(&mut m, 200, -90.0, -86.9, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].at, ms(200));
    }

    /// RSRP of a cell at `site_x` for a UE at `x` on the line between two sites 750 m apart,
    /// 46 dBm over 50 PRBs, TR 36.814 macro path loss at 2 GHz.
    fn rsrp_on_line(x: f64, site_x: f64) -> f64 {
        let d = (x - site_x).abs().max(10.0);
        rsrp_dbm(46.0, 50, 0.0, 0.0, 128.1 + 37.6 * (d / 1000.0).log10(), 0.0)
    }

    /// Drives a UE from x0 to x1 at 40 km/h, sampling every 200 ms (+ noise σ), and performs
    /// every A3 handover. Returns (time ms, position, new serving) per handover.
    fn drive(mut m: UeMeasurements, x0: f64, x1: f64, noise_db: f64, seed: u64) -> Vec<(u64, f64, usize)> {
        let v = 40.0 / 3.6;
        let mut rng = component_rng(seed, component_id("ue", "drive"));
        let mut hos = Vec::new();
        let mut out = Vec::new();
        let mut t = 0u64;
        loop {
            let x = x0 + (x1 - x0).signum() * v * t as f64 / 1000.0;
            if (x - x0).abs() > (x1 - x0).abs() {
                break;
            }
            let p0 = rsrp_on_line(x, 0.0) + noise_db * standard_normal(&mut rng);
            let p1 = rsrp_on_line(x, 750.0) + noise_db * standard_normal(&mut rng);
            out.clear();
            m.on_measurement(ms(t), &[sample(0, p0), sample(1, p1)], &mut out);
            for r in &out {
                if let Some(target) = handover_target(r, |_| true) {
                    hos.push((r.at.as_nanos() / 1_000_000, x, target));
                    m.on_handover(r.at, target);
                    break;
                }
            }
            t += 200;
        }
        hos
    }

    #[test]
    fn a3_hands_over_once_driving_between_two_equal_cells() {
        // hysteresis 3 dB, TTT 256 ms, fc4, deterministic RSRP ramp, 50 m → 700 m at 40 km/h
        let hos = drive(a3(3.0, 256, 4), 50.0, 700.0, 0.0, 1);
        assert_eq!(hos.len(), 1, "{hos:?}");
        let (t, x, target) = hos[0];
        assert_eq!(target, 1);
        // Independent bound: raw RSRP difference exceeds 3 dB where
        // 37.6 log10((750 − x)/x) = −3 ⇒ x = 750 / (1 + 10^(−3/37.6)) = 409.4 m. The trigger
        // comes after that point, within TTT plus the fc4 filter lag (a few 200 ms samples at
        // 11.1 m/s ≈ 50 m) of it.
        let x3 = 750.0 / (1.0 + 10f64.powf(-3.0 / 37.6));
        assert!((x3 - 409.4).abs() < 0.1, "{x3}");
        assert!(x > x3 && x < x3 + 60.0, "handover at x = {x} (t = {t} ms)");
        // and never back: with B serving, drive from just past the handover point to the far end
        let mut m = a3(3.0, 256, 4);
        m.on_handover(ms(0), 1);
        assert!(drive(m, 420.0, 700.0, 0.0, 2).is_empty());
    }

    #[test]
    fn zero_hysteresis_and_ttt_ping_pongs_near_the_midpoint() {
        // noisy RSRP (σ = 2 dB per sample), no filtering, Hys = 0, TTT = 0, crossing the
        // midpoint: the serving cell flips back and forth
        let hos = drive(a3(0.0, 0, 0), 300.0, 450.0, 2.0, 7);
        assert!(hos.len() >= 2, "{hos:?}");
        // successive handovers alternate between the two cells
        for w in hos.windows(2) {
            assert_ne!(w[0].2, w[1].2);
        }
        // the 3 dB / 256 ms / fc4 setting on the same noisy path hands over once
        let calm = drive(a3(3.0, 256, 4), 300.0, 700.0, 2.0, 7);
        assert_eq!(calm.len(), 1, "{calm:?}");
    }

    #[test]
    fn a2_and_a4_thresholds_and_leaving() {
        let cfg = MeasConfig {
            filter_coefficient: 0,
            period_ms: 200,
            reports: vec![
                ReportConfig { event: EventType::A2, threshold: -100.0, hysteresis_db: 1.0, time_to_trigger_ms: 0, ..Default::default() },
                ReportConfig { event: EventType::A4, threshold: -95.0, hysteresis_db: 1.0, time_to_trigger_ms: 0, ..Default::default() },
            ],
        };
        let mut m = UeMeasurements::new(cfg, 0).unwrap();
        let mut out = Vec::new();
        step(&mut m, 0, -99.5, -97.0, &mut out); // A2: −99.5 + 1 < −100? no. A4: −97 − 1 > −95? no
        assert!(out.is_empty());
        step(&mut m, 200, -101.5, -93.0, &mut out); // A2 enters, A4 enters
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].event, out[0].new_cells.clone()), (EventType::A2, vec![0]));
        assert_eq!(out[0].neighbours[0].cell, 1);
        assert_eq!(handover_target(&out[0], |_| true), None);
        assert_eq!((out[1].event, handover_target(&out[1], |_| true)), (EventType::A4, Some(1)));
        assert!(m.is_triggered(0, 0) && m.is_triggered(1, 1));
        // within hysteresis: still triggered, no new report
        out.clear();
        step(&mut m, 400, -99.5, -95.5, &mut out);
        assert!(out.is_empty() && m.is_triggered(0, 0) && m.is_triggered(1, 1));
        // leave both (Ms − Hys > Thresh; Mn + Hys < Thresh): silently removed
        step(&mut m, 600, -98.5, -96.5, &mut out);
        assert!(out.is_empty() && !m.is_triggered(0, 0) && !m.is_triggered(1, 1));
    }

    #[test]
    fn handover_clears_triggered_lists_and_pending_ttt() {
        let mut m = a3(3.0, 256, 0);
        let mut out = Vec::new();
        step(&mut m, 0, -90.0, -80.0, &mut out);
        assert_eq!(m.next_deadline(), Some(ms(256)));
        m.on_handover(ms(100), 1);
        assert_eq!(m.next_deadline(), None);
        assert_eq!(m.serving(), 1);
        // filters kept
        assert_eq!(m.filtered(0).unwrap().rsrp_dbm, -90.0);
        // the old serving cell is now a neighbour, 10 dB worse: nothing triggers
        for t in (200..3000).step_by(200) {
            step(&mut m, t, -90.0, -80.0, &mut out);
        }
        assert!(out.is_empty());
    }

    #[test]
    fn reports_sort_neighbours_best_first_and_apply_cell_offsets() {
        let mut m = a3(0.0, 0, 0);
        let mut out = Vec::new();
        m.on_measurement(ms(0), &[sample(0, -90.0), sample(1, -88.0), sample(2, -85.0), sample(3, -95.0)], &mut out);
        assert_eq!(out.len(), 1);
        let cells: Vec<usize> = out[0].neighbours.iter().map(|c| c.cell).collect();
        assert_eq!(cells, vec![2, 1]);
        assert_eq!(handover_target(&out[0], |_| true), Some(2));
        assert_eq!(handover_target(&out[0], |c| c != 2), Some(1));
        // Ocn = +6 dB lets cell 3 (5 dB worse) enter A3
        out.clear();
        m.set_cell_offset(3, 6.0).unwrap();
        m.on_measurement(ms(200), &[sample(0, -90.0), sample(1, -88.0), sample(2, -85.0), sample(3, -95.0)], &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].new_cells, vec![3]);
    }

    // ---------------------------------------------------------------- periodic reporting

    // TS 36.331 §5.5.4.1 with reportInterval 240 ms: after the report on trigger the UE reports
    // again every 240 ms while the cell stays triggered, and stops once it has left.
    #[test]
    fn periodic_reports_while_triggered() {
        let rc = ReportConfig { event: EventType::A2, quantity: Quantity::Rsrp, threshold: -100.0, hysteresis_db: 0.0, time_to_trigger_ms: 0, report_interval_ms: Some(240), ..ReportConfig::default() };
        let cfg = MeasConfig { filter_coefficient: 0, period_ms: 200, reports: vec![rc] };
        let mut m = UeMeasurements::new(cfg, 0).unwrap();
        let mut out = Vec::new();
        let sample = |rsrp: f64| [CellSample { cell: 0, rsrp_dbm: rsrp, rsrq_db: -10.0 }];
        m.on_measurement(ms(0), &sample(-105.0), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(m.next_deadline(), Some(ms(240)));
        m.on_measurement(ms(200), &sample(-106.0), &mut out);
        m.on_timeout(ms(480), &mut out);
        let at: Vec<u64> = out.iter().map(|r| r.at.as_nanos() / 1_000_000).collect();
        assert_eq!(at, vec![0, 240, 480]);
        assert!(out[1].new_cells.is_empty(), "a periodic report adds no cell");
        // leaves (Mp − Hys > Thresh) at 600: the report due at 720 is not sent
        m.on_measurement(ms(600), &sample(-90.0), &mut out);
        m.on_timeout(ms(2000), &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(m.next_deadline(), None);
        let bad = ReportConfig { report_interval_ms: Some(100), ..ReportConfig::default() };
        assert!(bad.validate().is_err());
    }
}