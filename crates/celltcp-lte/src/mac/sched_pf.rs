//! Proportional fair MAC scheduler (Jalali, Padovani & Pankaj, VTC 2000; for LTE, Sesia, Toufik
//! & Baker, "LTE – The UMTS Long Term Evolution", 2nd ed., §12.3.1.2, eq. 12.3).
//!
//! Downlink: each free RBG (TS 36.213 §7.1.6.1 type 0) goes to the UE that maximises
//! `achievable_rate(ue, rbg) / avg_throughput(ue)`, where the achievable rate is the spectral
//! efficiency of the UE's CQI on that RBG (TS 36.213 Table 7.2.3-1) times the RBG's PRBs, and the
//! average is the exponential moving average `T ← (1 − 1/W)·T + r/W` per TTI over the bits the UE
//! was served (`on_served`), W = `window_ttis`. A UE stops competing once its RBGs carry its
//! buffer. Uplink: UEs are taken in decreasing order of the wideband metric and given equal
//! shares as contiguous runs (TS 36.213 §8.1.1 type 0), as ns-3's `PfFfMacScheduler` shares the
//! uplink equally.
//!
//! The averages are updated lazily: each UE keeps its average and the TTI of its last update, and
//! the decay `(1 − 1/W)^Δ` of the Δ TTIs in which it received nothing is applied when the value
//! is read, so idle UEs cost nothing per TTI.

use celltcp_engine::SimTime;

use super::{
    allocate_dl_per_rbg, allocate_ul_contiguous, emit_grants, rbg_prb_mask, Grant, SchedUe,
    Scheduler, Scratch, CQI_EFFICIENCY,
};
use crate::Direction;

/// TTI length used to index the averages (1 ms, TS 36.211 §4).
const TTI_NANOS: u64 = 1_000_000;

/// Floor of the average throughput in the metric's denominator (bits per TTI), so that a UE
/// never served ranks first, ordered among its peers by achievable rate.
const MIN_AVG_BITS_PER_TTI: f64 = 1e-9;

/// Configuration of the proportional fair scheduler.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PfConfig {
    /// Time constant W of the throughput average, in TTIs (≥ 1). Default 99, the value of
    /// ns-3's `PfFfMacScheduler` (`m_timeWindow`); Jalali et al. used 1000 slots of 1.67 ms.
    pub window_ttis: f64,
}

impl Default for PfConfig {
    fn default() -> Self {
        PfConfig { window_ttis: 99.0 }
    }
}

impl PfConfig {
    /// Checks `window_ttis >= 1`.
    pub fn validate(&self) -> Result<(), String> {
        if self.window_ttis.is_finite() && self.window_ttis >= 1.0 {
            Ok(())
        } else {
            Err(format!(
                "pf window_ttis must be >= 1; got {}",
                self.window_ttis
            ))
        }
    }
}

/// A UE's lazily decayed average.
#[derive(Clone, Copy, Debug)]
struct PfAvg {
    /// The average in bits per TTI as of the end of TTI `last_tti`.
    avg_bits_per_tti: f64,
    last_tti: u64,
}

/// Proportional fair scheduler state.
#[derive(Clone, Debug)]
pub struct ProportionalFair {
    cfg: PfConfig,
    /// `1 − 1/W`.
    beta: f64,
    /// Averages indexed by UE id (ids are dense indices; a `Vec` costs a bounds check where a
    /// hash map cost a SipHash per read, 14 M instructions on the 14-UE cell).
    avgs: Vec<Option<PfAvg>>,
    scratch: Scratch,
}

impl ProportionalFair {
    /// A scheduler with no history.
    pub fn new(cfg: PfConfig) -> Self {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        let w = cfg.window_ttis.max(1.0);
        ProportionalFair {
            cfg,
            beta: 1.0 - 1.0 / w,
            avgs: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// UE `ue`'s average, if it was ever served.
    #[inline]
    fn avg(&self, ue: u32) -> Option<&PfAvg> {
        self.avgs.get(ue as usize).and_then(Option::as_ref)
    }

    /// The configuration.
    pub fn config(&self) -> &PfConfig {
        &self.cfg
    }

    fn decay(&self, a: &PfAvg, ttis: u64) -> f64 {
        if ttis == 0 {
            a.avg_bits_per_tti
        } else {
            a.avg_bits_per_tti * self.beta.powi(ttis.min(i32::MAX as u64) as i32)
        }
    }

    /// UE `ue`'s average throughput in bits per TTI over the TTIs before the one at `now`
    /// (zero for a UE never served).
    pub fn avg_throughput_bits_per_tti(&self, now: SimTime, ue: u32) -> f64 {
        let tti = now.as_nanos() / TTI_NANOS;
        match self.avg(ue) {
            Some(a) => self.decay(a, tti.saturating_sub(a.last_tti + 1)),
            None => 0.0,
        }
    }

    /// Drops UE `ue`'s history (it left the cell).
    pub fn forget(&mut self, ue: u32) {
        if let Some(a) = self.avgs.get_mut(ue as usize) {
            *a = None;
        }
    }
}

impl Scheduler for ProportionalFair {
    fn schedule(
        &mut self,
        now: SimTime,
        dir: Direction,
        n_prb: u16,
        rbg_size: u16,
        free_rbg_mask: u128,
        ues: &[SchedUe<'_>],
        tbs: &dyn Fn(u8, u16) -> u32,
        out: &mut Vec<Grant>,
    ) {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.reset(ues);
        // 1 / average per UE, read (and decayed) once per TTI.
        scratch.metric.clear();
        scratch.metric.extend(ues.iter().map(|u| {
            1.0 / self
                .avg_throughput_bits_per_tti(now, u.ue)
                .max(MIN_AVG_BITS_PER_TTI)
        }));
        match dir {
            Direction::Downlink => {
                let inv_avg = &scratch.metric;
                allocate_dl_per_rbg(
                    n_prb,
                    rbg_size,
                    free_rbg_mask,
                    ues,
                    tbs,
                    &mut scratch.work,
                    |i, rbg| {
                        let prbs = rbg_prb_mask(rbg, rbg_size, n_prb).count_ones() as f64;
                        CQI_EFFICIENCY[ues[i].cqi_on(rbg).min(15) as usize] * prbs * inv_avg[i]
                    },
                );
            }
            Direction::Uplink => {
                scratch.order.clear();
                scratch
                    .order
                    .extend((0..ues.len()).filter(|&i| !scratch.work[i].done));
                let key =
                    |i: usize| CQI_EFFICIENCY[ues[i].cqi.min(15) as usize] * scratch.metric[i];
                scratch.order.sort_unstable_by(|&a, &b| {
                    key(b).total_cmp(&key(a)).then(ues[a].ue.cmp(&ues[b].ue))
                });
                allocate_ul_contiguous(
                    n_prb,
                    free_rbg_mask,
                    ues,
                    &scratch.order,
                    true,
                    tbs,
                    &mut scratch.work,
                );
            }
        }
        emit_grants(ues, &scratch.work, tbs, out);
        self.scratch = scratch;
    }

    fn on_served(&mut self, now: SimTime, ue: u32, bits: u32) {
        let tti = now.as_nanos() / TTI_NANOS;
        let w = self.cfg.window_ttis.max(1.0);
        let a = self.avg(ue).copied();
        let decayed = match a {
            Some(a) => self.decay(&a, tti.saturating_sub(a.last_tti)),
            None => 0.0,
        };
        let i = ue as usize;
        if self.avgs.len() <= i {
            self.avgs.resize(i + 1, None);
        }
        self.avgs[i] = Some(PfAvg {
            avg_bits_per_tti: decayed + bits as f64 / w,
            last_tti: tti.max(a.map_or(0, |a| a.last_tti)),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::n_rbg;
    use super::super::sched_maxci::MaxCi;
    use super::super::sched_rr::RoundRobin;
    use super::super::test_support::*;
    use super::*;
    use celltcp_engine::rng::{component_id, component_rng};
    use rand::Rng;

    /// The lazy average equals the per-TTI recursion T ← (1 − 1/W)·T + r/W.
    #[test]
    fn pf_lazy_average_matches_eager_recursion() {
        let cfg = PfConfig { window_ttis: 20.0 };
        let mut pf = ProportionalFair::new(cfg);
        let mut rng = component_rng(3, component_id("test", "pf_avg"));
        let mut eager = 0.0f64;
        for tti in 0..500u64 {
            let now = SimTime::from_millis(tti);
            let lazy = pf.avg_throughput_bits_per_tti(now, 9);
            assert!(
                (lazy - eager).abs() <= 1e-9 * eager.max(1.0),
                "tti {tti}: {lazy} vs {eager}"
            );
            let r = if rng.gen_bool(0.3) {
                rng.gen_range(0..10_000u32)
            } else {
                0
            };
            if r > 0 {
                pf.on_served(now, 9, r);
            }
            eager = (1.0 - 1.0 / 20.0) * eager + r as f64 / 20.0;
        }
    }

    /// Runs `sched` for `ttis` TTIs over 10 MHz (50 PRBs, 17 RBGs of 3) with backlogged UEs of
    /// fixed per-RBG CQIs; returns each UE's bits.
    fn run(sched: &mut dyn Scheduler, profiles: &[Vec<u8>], ttis: u64) -> Vec<f64> {
        let mut served = vec![0.0; profiles.len()];
        let mut out = Vec::new();
        let free = (1u128 << n_rbg(50, 3)) - 1;
        for tti in 0..ttis {
            let now = SimTime::from_millis(tti);
            // the MCS follows the mean CQI of the UE (the grant is sent at one MCS)
            let ues: Vec<SchedUe> = profiles
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let wb = (p.iter().map(|&c| c as u32).sum::<u32>() / p.len() as u32) as u8;
                    SchedUe {
                        ue: i as u32,
                        cqi: wb,
                        mcs: mcs_for(wb),
                        rbg_cqi: Some(p),
                        bytes_pending: 10_000_000,
                    }
                })
                .collect();
            out.clear();
            sched.schedule(now, Direction::Downlink, 50, 3, free, &ues, &tbs, &mut out);
            check_grants(Direction::Downlink, 50, 3, free, &ues, &out);
            for g in &out {
                // bits actually carried: the RBG CQIs decide (a frequency-selective channel)
                let mut bits = 0.0;
                for r in 0..n_rbg(50, 3) {
                    let m = rbg_prb_mask(r, 3, 50);
                    if g.prb_mask & m != 0 {
                        bits += 120.0
                            * CQI_EFFICIENCY[profiles[g.ue as usize][r as usize] as usize]
                            * m.count_ones() as f64;
                    }
                }
                served[g.ue as usize] += bits;
                sched.on_served(now, g.ue, bits as u32);
            }
        }
        served
    }

    /// With unequal, frequency-selective (fixed) CQIs, PF carries more than RR (it picks each
    /// UE's good RBGs) and is fairer than max C/I (which starves the weak UE).
    #[test]
    fn pf_beats_rr_throughput_and_maxci_fairness() {
        let mut rng = component_rng(11, component_id("test", "pf_vs"));
        // four UEs: mean CQI from cell centre to cell edge, ±3 across RBGs
        let means = [12i32, 9, 7, 4];
        let profiles: Vec<Vec<u8>> = means
            .iter()
            .map(|&m| {
                (0..17)
                    .map(|_| (m + rng.gen_range(-3..=3)).clamp(1, 15) as u8)
                    .collect()
            })
            .collect();
        let pf = run(
            &mut ProportionalFair::new(PfConfig::default()),
            &profiles,
            1000,
        );
        let rr = run(&mut RoundRobin::new(), &profiles, 1000);
        let mc = run(&mut MaxCi::new(), &profiles, 1000);
        let total = |v: &[f64]| v.iter().sum::<f64>();
        assert!(
            total(&pf) > 1.05 * total(&rr),
            "pf {} rr {}",
            total(&pf),
            total(&rr)
        );
        assert!(
            jain(&pf) > jain(&mc) + 0.2,
            "jain pf {} maxci {}",
            jain(&pf),
            jain(&mc)
        );
        assert!(pf.iter().all(|&b| b > 0.0), "PF serves everyone: {pf:?}");
    }

    /// Two UEs, equal CQI, flat channel: PF alternates and converges to equal shares.
    #[test]
    fn pf_equal_ues_share_equally() {
        let profiles = vec![vec![9u8; 17], vec![9u8; 17]];
        let pf = run(
            &mut ProportionalFair::new(PfConfig::default()),
            &profiles,
            1000,
        );
        assert!((pf[0] - pf[1]).abs() / pf[0] < 0.02, "{pf:?}");
    }

    /// Averages are kept per UE id: serving one UE leaves the others' at zero, and `forget`
    /// drops only the named UE's history.
    #[test]
    fn pf_averages_are_per_ue_and_forget_drops_one() {
        let mut pf = ProportionalFair::new(PfConfig { window_ttis: 10.0 });
        let t0 = SimTime::ZERO;
        pf.on_served(t0, 7, 1000);
        pf.on_served(t0, 2, 500);
        let t1 = SimTime::from_millis(1);
        assert_eq!(pf.avg_throughput_bits_per_tti(t1, 7), 100.0);
        assert_eq!(pf.avg_throughput_bits_per_tti(t1, 2), 50.0);
        assert_eq!(pf.avg_throughput_bits_per_tti(t1, 3), 0.0);
        assert_eq!(pf.avg_throughput_bits_per_tti(t1, 1_000), 0.0);
        pf.forget(7);
        pf.forget(1_000);
        assert_eq!(pf.avg_throughput_bits_per_tti(t1, 7), 0.0);
        assert_eq!(pf.avg_throughput_bits_per_tti(t1, 2), 50.0);
    }
}
