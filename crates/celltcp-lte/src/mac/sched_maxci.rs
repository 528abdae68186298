//! Maximum carrier-to-interference (max C/I, "maximum throughput") MAC scheduler.
//!
//! Downlink: each free RBG (TS 36.213 §7.1.6.1 type 0) goes to the UE with the highest CQI on it
//! (per-RBG CQI when reported, else wideband; ties to the higher wideband CQI, then the lower UE
//! id). Uplink: UEs in decreasing wideband CQI each take, as one contiguous run (TS 36.213 §8.1.1
//! type 0), all they need before the next is served. This maximises cell throughput and starves
//! UEs whose channel is never the best (the reference point of Sesia, Toufik & Baker, "LTE – The
//! UMTS Long Term Evolution", 2nd ed., §12.3.1.1).

use celltcp_engine::SimTime;

use super::{
    allocate_dl_per_rbg, allocate_ul_contiguous, emit_grants, Grant, SchedUe, Scheduler, Scratch,
};
use crate::Direction;

/// Max C/I scheduler (stateless but for its scratch buffers).
#[derive(Clone, Debug, Default)]
pub struct MaxCi {
    scratch: Scratch,
}

impl MaxCi {
    /// A new scheduler.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Scheduler for MaxCi {
    fn schedule(
        &mut self,
        _now: SimTime,
        dir: Direction,
        n_prb: u16,
        rbg_size: u16,
        free_rbg_mask: u128,
        ues: &[SchedUe<'_>],
        tbs: &dyn Fn(u8, u16) -> u32,
        out: &mut Vec<Grant>,
    ) {
        let scratch = &mut self.scratch;
        scratch.reset(ues);
        match dir {
            Direction::Downlink => {
                allocate_dl_per_rbg(
                    n_prb,
                    rbg_size,
                    free_rbg_mask,
                    ues,
                    tbs,
                    &mut scratch.work,
                    |i, rbg| {
                        // CQI on the RBG first, wideband CQI as tie-break (ties left: lower index)
                        ues[i].cqi_on(rbg) as f64 * 16.0 + ues[i].cqi as f64
                    },
                );
            }
            Direction::Uplink => {
                scratch.order.clear();
                scratch
                    .order
                    .extend((0..ues.len()).filter(|&i| !scratch.work[i].done));
                scratch.order.sort_unstable_by(|&a, &b| {
                    ues[b].cqi.cmp(&ues[a].cqi).then(ues[a].ue.cmp(&ues[b].ue))
                });
                allocate_ul_contiguous(
                    n_prb,
                    free_rbg_mask,
                    ues,
                    &scratch.order,
                    false,
                    tbs,
                    &mut scratch.work,
                );
            }
        }
        emit_grants(ues, &scratch.work, tbs, out);
    }

    fn on_served(&mut self, _now: SimTime, _ue: u32, _bits: u32) {}
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    fn ue(ue: u32, cqi: u8, bytes: u32) -> SchedUe<'static> {
        SchedUe {
            ue,
            cqi,
            mcs: mcs_for(cqi),
            rbg_cqi: None,
            bytes_pending: bytes,
        }
    }

    /// Backlogged UEs: the best one takes everything, every TTI; the worst gets nothing.
    #[test]
    fn maxci_starves_worst_ue() {
        let mut s = MaxCi::new();
        let ues = [ue(1, 5, 1 << 30), ue(2, 14, 1 << 30), ue(3, 2, 1 << 30)];
        let free = (1u128 << 17) - 1;
        let mut out = Vec::new();
        for tti in 0..100 {
            out.clear();
            s.schedule(
                SimTime::from_millis(tti),
                Direction::Downlink,
                50,
                3,
                free,
                &ues,
                &tbs,
                &mut out,
            );
            assert_eq!(out.len(), 1);
            assert_eq!((out[0].ue, out[0].n_prb), (2, 50));
        }
        out.clear();
        s.schedule(
            SimTime::ZERO,
            Direction::Uplink,
            50,
            1,
            (1u128 << 50) - 1,
            &ues,
            &tbs,
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].ue, out[0].n_prb), (2, 50));
    }

    /// Once the best UE's buffer is covered the next best gets the rest, and so on.
    #[test]
    fn maxci_serves_in_cqi_order_within_buffers() {
        let mut s = MaxCi::new();
        let ues = [
            ue(1, 5, 1 << 30),
            ue(2, 14, 300),
            ue(3, 9, 200),
            ue(4, 0, 1 << 30),
        ];
        let free = (1u128 << 17) - 1;
        let mut out = Vec::new();
        s.schedule(
            SimTime::ZERO,
            Direction::Downlink,
            50,
            3,
            free,
            &ues,
            &tbs,
            &mut out,
        );
        check_grants(Direction::Downlink, 50, 3, free, &ues, &out);
        let prbs = |u: u32| out.iter().find(|g| g.ue == u).map_or(0, |g| g.n_prb);
        assert!(prbs(2) > 0 && prbs(3) > 0 && prbs(1) > 0 && prbs(4) == 0);
        assert_eq!(prbs(1) + prbs(2) + prbs(3), 50);
        // per-RBG CQI: a UE with a weaker wideband CQI wins the RBGs where it is best
        let sel = [15u8, 15, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];
        let ues2 = [
            SchedUe {
                rbg_cqi: Some(&sel),
                ..ue(7, 6, 1 << 30)
            },
            ue(8, 10, 1 << 30),
        ];
        out.clear();
        s.schedule(
            SimTime::ZERO,
            Direction::Downlink,
            50,
            3,
            free,
            &ues2,
            &tbs,
            &mut out,
        );
        let g7 = out.iter().find(|g| g.ue == 7).unwrap();
        assert_eq!(g7.prb_mask, 0b111111);
    }
}
