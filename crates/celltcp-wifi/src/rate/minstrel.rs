//! Minstrel-HT for one MCS group (one width, stream count and guard interval), after Linux
//! mac80211's `rc80211_minstrel_ht.c` (F. Fietkau) and ns-3's `MinstrelHtWifiManager` port.
//!
//! - **Statistics**: per MCS, the MPDUs attempted and acknowledged in the current interval;
//!   every [`UPDATE_INTERVAL`] the interval's success ratio enters an EWMA of the success
//!   probability (weight [`EWMA_OLD`] on the old value; the first sample is taken as is).
//! - **Throughput**: the expected throughput of an MCS is its probability (capped at 90 %, and
//!   zero below 10 %) over the airtime of one MPDU, the PPDU's fixed overhead shared among the
//!   average number of MPDUs per A-MPDU seen on the link.
//! - **Retry chain**: the PPDUs of a frame go at the best-throughput MCS, then the second best,
//!   then the most reliable (among those ≥ 95 % the fastest, else the most probable), then the
//!   slowest, [`CHAIN_TRIES`] attempts each.
//! - **Look-around**: one PPDU in [`SAMPLE_EVERY`] tries an MCS from a shuffled sample table
//!   once before the chain; MCSs slower than the best-throughput one are sampled only every
//!   [`SLOW_SAMPLE_SKIP`]-th time they come up (the link already works better than they can).
//!
//! Simplified against Linux: one group only (no switching of width or stream count), a fixed
//! number of attempts per chain stage instead of the 6 ms airtime budget, and the PPDU overhead
//! a constant [`PPDU_OVERHEAD`].

use celltcp_engine::rng::SimRng;
use celltcp_engine::{SimDuration, SimTime};
use rand::seq::SliceRandom;

use super::{RateControl, RateSet};
use crate::phy::{txtime, TxVector};

/// Statistics update interval (Linux minstrel_ht: 50 ms).
pub const UPDATE_INTERVAL: SimDuration = SimDuration::from_millis(50);
/// EWMA weight of the old probability (Linux `MINSTREL_EWMA_LEVEL`, 75 %).
pub const EWMA_OLD: f64 = 0.75;
/// One PPDU in this many is a look-around sample (10 %).
pub const SAMPLE_EVERY: u32 = 10;
/// A slower MCS is sampled once in this many times it is drawn.
pub const SLOW_SAMPLE_SKIP: u32 = 20;
/// Attempts per retry-chain stage.
pub const CHAIN_TRIES: u32 = 2;
/// Fixed overhead of a PPDU exchange (AIFS, mean backoff, SIFS and the block ACK), shared among
/// the MPDUs of an A-MPDU in the throughput estimate.
pub const PPDU_OVERHEAD: SimDuration = SimDuration::from_micros(120);

#[derive(Clone, Debug, Default)]
struct McsStats {
    attempts: u32,
    success: u32,
    prob: f64,
    known: bool,
    slow_skips: u32,
}

#[derive(Clone, Debug)]
pub struct Minstrel {
    set: RateSet,
    mpdu_bytes: u32,
    stats: Vec<McsStats>,
    next_update: SimTime,
    sample_table: Vec<usize>,
    sample_pos: usize,
    ppdus: u32,
    avg_ampdu: f64,
    max_tp: usize,
    max_tp2: usize,
    max_prob: usize,
    /// The current frame's chain: (index into the rate set, attempts).
    chain: Vec<(usize, u32)>,
}

impl Minstrel {
    pub fn new(set: RateSet, mpdu_bytes: u32, rng: &mut SimRng) -> Minstrel {
        let n = set.mcs.len();
        let mut sample_table: Vec<usize> = (0..n).collect();
        sample_table.shuffle(rng);
        Minstrel {
            stats: vec![McsStats::default(); n],
            mpdu_bytes,
            next_update: SimTime::ZERO + UPDATE_INTERVAL,
            sample_table,
            sample_pos: 0,
            ppdus: 0,
            avg_ampdu: 1.0,
            // before any statistics: start fast, fall back to the slowest
            max_tp: n - 1,
            max_tp2: n.saturating_sub(2),
            max_prob: 0,
            chain: Vec::new(),
            set,
        }
    }

    fn rate(&self, i: usize) -> f64 {
        self.set.vector(self.set.mcs[i]).data_rate_bps()
    }

    /// Airtime of one MPDU at index `i`, ns, with the PPDU overhead shared over the average
    /// aggregate.
    fn mpdu_time_ns(&self, i: usize) -> f64 {
        let agg = self.avg_ampdu.round().max(1.0) as u32;
        let v = self.set.vector(self.set.mcs[i]);
        let t = txtime(&v, self.mpdu_bytes * agg, SimDuration::ZERO) + PPDU_OVERHEAD;
        t.as_nanos() as f64 / agg as f64
    }

    /// Expected throughput of index `i`, MPDUs per ns.
    fn throughput(&self, i: usize) -> f64 {
        let s = &self.stats[i];
        if !s.known || s.prob < 0.1 {
            return 0.0;
        }
        s.prob.min(0.9) / self.mpdu_time_ns(i)
    }

    fn update(&mut self) {
        for s in &mut self.stats {
            if s.attempts > 0 {
                let cur = s.success as f64 / s.attempts as f64;
                s.prob = if s.known { EWMA_OLD * s.prob + (1.0 - EWMA_OLD) * cur } else { cur };
                s.known = true;
                s.attempts = 0;
                s.success = 0;
            }
        }
        let n = self.stats.len();
        if !self.stats.iter().any(|s| s.known) {
            return;
        }
        let tp: Vec<f64> = (0..n).map(|i| self.throughput(i)).collect();
        let mut order: Vec<usize> = (0..n).collect();
        // best throughput first; ties go to the faster MCS
        order.sort_by(|&a, &b| tp[b].total_cmp(&tp[a]).then(b.cmp(&a)));
        self.max_tp = order[0];
        self.max_tp2 = if n > 1 { order[1] } else { order[0] };
        let reliable = (0..n).filter(|&i| self.stats[i].known && self.stats[i].prob >= 0.95).max_by(|&a, &b| tp[a].total_cmp(&tp[b]).then(a.cmp(&b)));
        self.max_prob = reliable.unwrap_or_else(|| {
            (0..n).max_by(|&a, &b| self.stats[a].prob.total_cmp(&self.stats[b].prob).then(b.cmp(&a))).unwrap_or(0)
        });
    }

    fn build_chain(&mut self) {
        self.ppdus = self.ppdus.wrapping_add(1);
        self.chain.clear();
        if self.ppdus.is_multiple_of(SAMPLE_EVERY) && !self.sample_table.is_empty() {
            let c = self.sample_table[self.sample_pos % self.sample_table.len()];
            self.sample_pos += 1;
            let mut sample = c != self.max_tp && c != self.max_prob;
            if sample && self.rate(c) < self.rate(self.max_tp) {
                let s = &mut self.stats[c];
                s.slow_skips += 1;
                if s.slow_skips < SLOW_SAMPLE_SKIP {
                    sample = false;
                } else {
                    s.slow_skips = 0;
                }
            }
            if sample {
                self.chain.push((c, 1));
            }
        }
        for i in [self.max_tp, self.max_tp2, self.max_prob, 0] {
            match self.chain.last_mut() {
                Some((last, n)) if *last == i => *n += CHAIN_TRIES,
                _ => self.chain.push((i, CHAIN_TRIES)),
            }
        }
    }

    /// The MCS Minstrel currently believes gives the best throughput.
    pub fn best_mcs(&self) -> u8 {
        self.set.mcs[self.max_tp]
    }

    /// The EWMA success probability of `mcs`, if known.
    pub fn probability(&self, mcs: u8) -> Option<f64> {
        let i = self.set.mcs.iter().position(|&m| m == mcs)?;
        self.stats[i].known.then_some(self.stats[i].prob)
    }
}

impl RateControl for Minstrel {
    fn select(&mut self, now: SimTime, attempt: u32) -> TxVector {
        while now >= self.next_update {
            self.update();
            self.next_update += UPDATE_INTERVAL;
        }
        if attempt == 0 || self.chain.is_empty() {
            self.build_chain();
        }
        let mut left = attempt;
        for &(i, n) in &self.chain {
            if left < n {
                return self.set.vector(self.set.mcs[i]);
            }
            left -= n;
        }
        self.set.vector(self.set.mcs[0])
    }

    fn report(&mut self, _now: SimTime, txv: TxVector, sent: u32, acked: u32) {
        if sent == 0 {
            return;
        }
        if let Some(i) = self.set.mcs.iter().position(|&m| m == txv.mcs) {
            self.stats[i].attempts += sent;
            self.stats[i].success += acked;
        }
        self.avg_ampdu = 0.9 * self.avg_ampdu + 0.1 * sent as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::per;
    use crate::phy::PhyClass;
    use celltcp_engine::rng::component_rng;
    use rand::Rng;

    /// Drives Minstrel over a static channel of `snr_db` with PPDUs of `agg` MPDUs whose losses
    /// follow the NIST PER; returns the share of the last second's PPDUs per MCS.
    fn drive(snr_db: f64, agg: u32, secs: u64) -> (Minstrel, Vec<f64>) {
        let base = TxVector { class: PhyClass::Vht, mcs: 0, width_mhz: 20, nss: 1, short_gi: false };
        let set = RateSet::new(base, 9);
        let mut rng = component_rng(3, 4);
        let mut m = Minstrel::new(set.clone(), 1538, &mut rng);
        let mut now = SimTime::ZERO;
        let mut hist = [0u32; 10];
        let mut attempt = 0;
        while now < SimTime::from_secs(secs) {
            let v = m.select(now, attempt);
            let p = per(&v, snr_db, 1538);
            let ok = (0..agg).filter(|_| rng.gen::<f64>() >= p).count() as u32;
            m.report(now, v, agg, ok);
            attempt = if ok == 0 { attempt + 1 } else { 0 };
            if now >= SimTime::from_secs(secs - 1) {
                hist[v.mcs as usize] += 1;
            }
            now += txtime(&v, 1538 * agg, SimDuration::ZERO) + PPDU_OVERHEAD;
        }
        let total: u32 = hist.iter().sum();
        (m, hist.iter().map(|&h| h as f64 / total as f64).collect())
    }

    /// The MCS with the highest (1 − PER)·rate at `snr_db` (the closed-form optimum).
    fn optimum(snr_db: f64) -> u8 {
        (0..=8u8)
            .max_by(|&a, &b| {
                let g = |m: u8| {
                    let v = TxVector { class: PhyClass::Vht, mcs: m, width_mhz: 20, nss: 1, short_gi: false };
                    (1.0 - per(&v, snr_db, 1538)) * v.data_rate_bps()
                };
                g(a).total_cmp(&g(b))
            })
            .unwrap()
    }

    #[test]
    fn minstrel_settles_on_the_best_throughput_mcs() {
        for snr in [8.0, 14.0, 20.0, 26.0, 35.0] {
            let (m, share) = drive(snr, 16, 4);
            let best = optimum(snr);
            assert_eq!(m.best_mcs(), best, "SNR {snr} dB: {share:?}");
            // look-around and the retry chain take a minority of the PPDUs
            assert!(share[best as usize] > 0.75, "SNR {snr} dB: {share:?}");
        }
    }

    #[test]
    fn minstrel_ewma_tracks_the_success_ratio() {
        let (m, _) = drive(20.0, 16, 3);
        let best = m.best_mcs();
        let v = TxVector { class: PhyClass::Vht, mcs: best, width_mhz: 20, nss: 1, short_gi: false };
        let want = 1.0 - per(&v, 20.0, 1538);
        let got = m.probability(best).unwrap();
        assert!((got - want).abs() < 0.05, "MCS {best}: EWMA {got} vs 1 − PER {want}");
    }
}
