//! Radio resource management of moving UEs inside the RAN: position, measurements, the
//! handover decision (through the eNB's [`crate::handover::HandoverAlgorithm`]) and radio link
//! monitoring.
//!
//! - Fast fading: a moving UE's fading runs at its own Doppler frequency v·f_c/c (its speed at
//!   the start), instead of `[lte] doppler`.
//! - Position: a UE with a [`Mobility`] moves along its trajectory; every
//!   [`MOBILITY_STEP`] its path loss to every cell follows the new distance, and its shadowing
//!   follows a spatially correlated process ([`ShadowingMap`]: Gudmundson, 50 m decorrelation,
//!   0.5 between sites, TR 36.814 Table A.2.1.1-2), so SINR, CQI and RSRP change continuously.
//! - Measurements (TS 36.331 §5.5.3): every `period_ms` of the [`MeasConfig`], RSRP (TS 36.214
//!   §5.1.1) and RSRQ (§5.1.3, with each cell's recent PRB use as its load) of every cell go
//!   through the UE's layer-3 filters and report triggers ([`UeMeasurements`]).
//! - Decision (TS 36.300 §10.1.2.1 step 3): the source eNB hands the UE over to the best
//!   the eNB's handover algorithm names (A3-RSRP by default: the best neighbour of an A3 or A4
//!   report, `handover/a3_rsrp.rs`), unless a handover is already in progress. Cells flagged
//!   as interferers only are never targets.
//! - Radio link failure (TS 36.331 §5.3.11): the serving cell's wideband downlink SINR is
//!   sampled every 10 ms into an [`RlfDetector`]; on T310 expiry the UE re-establishes (TS 36.300
//!   §10.1.6) to the cell with the best RSRP, which costs it the re-establishment delay
//!   (`HandoverConfig::reestablishment`) with no forwarding: everything in flight is lost. A
//!   handover decided but not yet executed is abandoned.

use celltcp_engine::{SimDuration, SimTime};

use super::{Ran, RanOutput};
use crate::mobility::Mobility;
use crate::phy::channel;
use crate::phy::shadowing_map::{ShadowingConfig, ShadowingMap};
use celltcp_engine::rng::{component_id, component_rng};
use crate::handover::{AnyHandoverAlgorithm, HandoverAlgorithmKind};
use crate::rrc::meas::{self, CellSample, MeasConfig, MeasReport, UeMeasurements};
use crate::rrc::rlf::{RlfConfig, RlfDetector, RlfEvent};

/// How often a moving UE's position and path losses are updated.
pub const MOBILITY_STEP: SimDuration = SimDuration::from_millis(10);
/// How often the serving cell's SINR is sampled for radio link monitoring.
pub const RLM_STEP: SimDuration = SimDuration::from_millis(10);

/// Per-UE mobility state.
#[derive(Clone, Debug)]
pub(super) struct UeMobility {
    pub mobility: Option<Mobility>,
    pub shadowing: Option<ShadowingMap>,
    pub meas: Option<UeMeasurements>,
    pub rlf: Option<RlfDetector>,
    pub next_move_at: SimTime,
    pub next_meas_at: SimTime,
    pub next_rlm_at: SimTime,
    pub meas_period: SimDuration,
}

/// A radio link failure and what followed, for the run's timeline.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RlfRecord {
    pub ue: usize,
    pub cell: usize,
    /// T310 started / expired.
    pub t310_start_s: f64,
    pub failure_s: f64,
    /// The cell the UE re-established to.
    pub reestablished_to: usize,
    /// Whether a handover was in preparation when the link failed (a handover too late).
    pub during_handover: bool,
}

impl<P: Copy + std::fmt::Debug> Ran<P> {
    /// Gives UE `ue` a trajectory (`None`: it stays where it is) and, with `meas`,
    /// measurements and A3/A4-triggered handovers; with `rlf`, radio link monitoring.
    /// Call before the first TTI.
    pub fn set_mobility(&mut self, ue: usize, mobility: Option<Mobility>, meas: Option<MeasConfig>, rlf: Option<RlfConfig>) -> Result<(), String> {
        let serving = self.ues[ue].cell;
        // The report configurations the eNBs' handover algorithm asks for (none for A3-RSRP).
        let meas = meas.map(|mut m| {
            m.reports.extend(self.cells[serving].ho_algo.inner_ref().report_configs());
            m
        });
        let period = SimDuration::from_millis(meas.as_ref().map_or(meas::DEFAULT_MEAS_PERIOD_MS, |m| m.period_ms) as u64);
        let meas = meas.map(|m| UeMeasurements::new(m, serving)).transpose()?;
        let rlf = rlf.map(RlfDetector::new).transpose()?;
        let moving = mobility.is_some();
        let sigma = self.cfg.radio.shadowing_sigma_db;
        let shadowing = if moving && sigma > 0.0 {
            let cfg = ShadowingConfig { sigma_db: sigma, ..ShadowingConfig::default() };
            let sites: Vec<usize> = (0..self.cells.len()).collect();
            let rng = component_rng(self.seed, component_id("ue-shadowing", &self.ues[ue].name));
            let map = ShadowingMap::new(&cfg, &sites, self.ues[ue].position, rng)?;
            self.ues[ue].shadow_db = map.values_db().to_vec();
            let p = self.ues[ue].position;
            self.set_position(ue, p);
            Some(map)
        } else {
            None
        };
        // Fast fading at the UE's own Doppler, f_d = v · f_c / c (its speed at the start).
        if let (Some(profile), Some(m)) = (self.cfg.radio.fading, mobility.as_ref()) {
            let v = m.clone().speed_mps(SimTime::ZERO);
            if v > 0.0 {
                let fd = crate::phy::fading::doppler_hz(v, self.cfg.radio.carrier_hz);
                let u = &mut self.ues[ue];
                u.fading = Some(crate::phy::fading::FadingChannel::new(profile, fd, &mut u.rng));
            }
        }
        self.ues[ue].mob = Some(UeMobility {
            mobility,
            shadowing,
            next_move_at: if moving { SimTime::ZERO } else { SimTime::MAX },
            next_meas_at: if meas.is_some() { SimTime::ZERO } else { SimTime::MAX },
            next_rlm_at: if rlf.is_some() { SimTime::ZERO } else { SimTime::MAX },
            meas,
            rlf,
            meas_period: period,
        });
        self.refresh(SimTime::ZERO, ue);
        Ok(())
    }

    /// Chooses the handover algorithm of every eNB (default [`HandoverAlgorithmKind::A3Rsrp`]).
    /// Call before [`Ran::set_mobility`]: the algorithm's report configurations join each UE's
    /// measurement configuration there.
    pub fn set_handover_algorithm(&mut self, kind: HandoverAlgorithmKind) -> Result<(), String> {
        if let HandoverAlgorithmKind::A2A4Rsrq(c) = &kind {
            c.validate()?;
        }
        if self.ues.iter().any(|u| u.mob.as_ref().is_some_and(|m| m.meas.is_some())) {
            return Err("set_handover_algorithm must come before set_mobility".into());
        }
        for cell in &mut self.cells {
            cell.ho_algo = AnyHandoverAlgorithm::new(kind);
        }
        Ok(())
    }

    /// Marks cell `c` as carrying interference only: never a handover target.
    pub fn set_interferer_only(&mut self, c: usize, on: bool) {
        if self.interferer_only.len() <= c {
            self.interferer_only.resize(c + 1, false);
        }
        self.interferer_only[c] = on;
    }

    /// Radio link failures so far.
    pub fn rlf_records(&self) -> &[RlfRecord] {
        &self.rlf_records
    }

    /// The next instant UE `ue`'s mobility needs attention.
    pub(super) fn mobility_next(&self, ue: usize) -> Option<SimTime> {
        let m = self.ues[ue].mob.as_ref()?;
        // A detached UE evaluates no trigger (its pending time-to-trigger waits for the
        // measurements to resume in the target), so its deadline does not count.
        let ttt = if self.ues[ue].detached { None } else { m.meas.as_ref().and_then(|x| x.next_deadline()) }.unwrap_or(SimTime::MAX);
        let t = m.next_move_at.min(m.next_meas_at).min(m.next_rlm_at).min(ttt);
        (t != SimTime::MAX).then_some(t)
    }

    /// Runs what UE `ue`'s mobility has due at `now`: a position update, a measurement (and a
    /// handover decision), radio link monitoring.
    pub(super) fn mobility_step(&mut self, now: SimTime, ue: usize, out: &mut Vec<RanOutput<P>>) {
        let Some(mut m) = self.ues[ue].mob.take() else { return };
        if m.next_move_at <= now {
            if let Some(mob) = m.mobility.as_mut() {
                let p = mob.position(now);
                if let Some(map) = m.shadowing.as_mut() {
                    map.update(p);
                    self.ues[ue].shadow_db.copy_from_slice(map.values_db());
                }
                self.set_position(ue, p);
            }
            m.next_move_at = now + MOBILITY_STEP;
        }
        let mut reports: Vec<MeasReport> = Vec::new();
        let detached = self.ues[ue].detached;
        if let Some(meas) = m.meas.as_mut() {
            if m.next_meas_at <= now {
                if !detached {
                    let samples = self.measure(ue);
                    meas.on_measurement(now, &samples, &mut reports);
                }
                m.next_meas_at = now + m.meas_period;
            } else if !detached {
                meas.on_timeout(now, &mut reports);
            }
        }
        let mut rlf_events = Vec::new();
        if let Some(rlf) = m.rlf.as_mut() {
            if m.next_rlm_at <= now {
                if !detached {
                    let sinr = self.wideband_sinr_db(ue);
                    rlf.on_sinr_sample(now, sinr, &mut rlf_events);
                }
                m.next_rlm_at = now + RLM_STEP;
            }
            rlf.poll(now, &mut rlf_events);
        }
        self.ues[ue].mob = Some(m);
        let serving = self.ues[ue].cell;
        for r in &reports {
            let blocked = &self.interferer_only;
            let accept = |c: usize| !blocked.get(c).copied().unwrap_or(false);
            if let Some(target) = self.cells[serving].ho_algo.inner().on_report(now, ue, r, &accept) {
                self.request_handover(now, ue, target);
            }
        }
        for e in rlf_events {
            match e {
                RlfEvent::PhyProblem { at } => self.ues[ue].t310_started = Some(at),
                RlfEvent::Recovered { .. } => self.ues[ue].t310_started = None,
                RlfEvent::Failure { at } => self.radio_link_failed(at.max(now), ue, out),
            }
        }
    }

    /// One measurement sample per cell: RSRP and RSRQ with the cells' recent load.
    fn measure(&self, ue: usize) -> Vec<CellSample> {
        let n = self.cfg.dl_prbs;
        let rsrp: Vec<f64> = (0..self.cells.len()).map(|c| self.rsrp_dbm(ue, c)).collect();
        let (now, memory) = (self.last_tti.unwrap_or(SimTime::ZERO), self.cfg.cqi_period.max(super::TTI));
        let load: Vec<f64> = self.cells.iter().map(|c| f64::from(c.recent_dl_mask(now, memory).count_ones()) / f64::from(n.max(1)).min(1.0)).collect();
        let pairs: Vec<(f64, f64)> = rsrp.iter().copied().zip(load).enumerate().filter(|&(c, _)| !self.cell_failed(c)).map(|(_, x)| x).collect();
        let noise = channel::thermal_noise_dbm(channel::PRB_BANDWIDTH_HZ * f64::from(n), self.cfg.radio.ue_noise_figure_db);
        let rssi = meas::rssi_dbm(&pairs, n, noise);
        rsrp.iter()
            .enumerate()
            .filter(|&(c, _)| !self.cell_failed(c))
            .map(|(c, &r)| CellSample { cell: c, rsrp_dbm: r, rsrq_db: meas::rsrq_db(r, rssi, n) })
            .collect()
    }

    /// The serving cell's wideband downlink SINR (dB) with every other cell transmitting (the
    /// reference-signal SINR a UE monitors the radio link with).
    pub fn wideband_sinr_db(&self, ue: usize) -> f64 {
        let u = &self.ues[ue];
        if let Some(s) = u.fixed_sinr_db {
            return s;
        }
        let signal = self.enb_prb_mw * u.gain[u.cell];
        let interference: f64 = (0..self.cells.len()).filter(|&c| c != u.cell && !self.cell_failed(c)).map(|c| self.enb_prb_mw * u.gain[c]).sum();
        channel::linear_to_db(signal / (self.noise_dl_mw + interference))
    }

    /// T310 expired: the UE re-establishes to the best cell (TS 36.300 §10.1.6). Nothing is
    /// forwarded: it is a handover without preparation.
    fn radio_link_failed(&mut self, now: SimTime, ue: usize, out: &mut Vec<RanOutput<P>>) {
        let best = (0..self.cells.len())
            .filter(|&c| !self.interferer_only.get(c).copied().unwrap_or(false))
            .max_by(|&a, &b| self.rsrp_dbm(ue, a).total_cmp(&self.rsrp_dbm(ue, b)))
            .unwrap_or(self.ues[ue].cell);
        let during = self.ues[ue].ho.is_some();
        let cell = self.ues[ue].cell;
        self.rlf_records.push(RlfRecord {
            ue,
            cell,
            t310_start_s: self.ues[ue].t310_started.map_or(f64::NAN, |t| t.as_secs_f64()),
            failure_s: now.as_secs_f64(),
            reestablished_to: best,
            during_handover: during,
        });
        self.ues[ue].t310_started = None;
        self.ues[ue].stats.radio_link_failures += 1;
        if let Some(r) = self.ues[ue].mob.as_mut().and_then(|m| m.rlf.as_mut()) {
            r.reset();
        }
        self.reestablish(now, ue, best, out);
    }

    /// After a handover or re-establishment the UE's measurements follow the new serving cell.
    pub(super) fn measurements_follow(&mut self, now: SimTime, ue: usize, cell: usize) {
        if let Some(m) = self.ues[ue].mob.as_mut().and_then(|m| m.meas.as_mut()) {
            m.on_handover(now, cell);
        }
    }
}
