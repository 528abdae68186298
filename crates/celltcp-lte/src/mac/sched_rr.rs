//! Round-robin MAC scheduler.
//!
//! The free resource of a TTI is shared equally among the UEs with data, in the manner of ns-3's
//! `RrFfMacScheduler`: UEs are taken in order of id starting from a pointer that moves every TTI,
//! each gets `ceil(free units left / UEs left)` units (RBGs in the downlink, TS 36.213 §7.1.6.1
//! type 0; a contiguous run of PRBs in the uplink, §8.1.1 type 0), or fewer when fewer carry its
//! buffer, the rest going to the UEs after it. The first UEs in the rotation get the leftover
//! units, so the leftovers rotate too. In the downlink, units still free after a pass go to the
//! UEs that want more in further passes, so no RBG idles while a UE has data.
//!
//! When every UE was served the pointer advances by one UE; when the resource ran out first it
//! moves to the UE after the last one served, so UEs left out are first next time.

use celltcp_engine::SimTime;

use super::{
    allocate_ul_contiguous, emit_grants, enough, n_rbg, rbg_prb_mask, Grant, SchedUe, Scheduler,
    Scratch,
};
use crate::Direction;

/// Round-robin scheduler state: the rotation pointer and scratch buffers.
#[derive(Clone, Debug, Default)]
pub struct RoundRobin {
    /// The UE id the next TTI starts from (the first id at or above it, wrapping).
    next_ue: u32,
    scratch: Scratch,
}

impl RoundRobin {
    /// A scheduler whose first TTI starts from the lowest UE id.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fills `scratch.order` with the eligible UEs sorted by id, rotated to start at `next_ue`.
    fn rotation(&mut self, ues: &[SchedUe<'_>]) {
        let order = &mut self.scratch.order;
        order.clear();
        order.extend((0..ues.len()).filter(|&i| !self.scratch.work[i].done));
        order.sort_unstable_by_key(|&i| ues[i].ue);
        let start = order
            .iter()
            .position(|&i| ues[i].ue >= self.next_ue)
            .unwrap_or(0);
        order.rotate_left(start);
    }

    /// Moves the pointer after a TTI in which the UEs of `order` were offered resource.
    fn advance(&mut self, ues: &[SchedUe<'_>]) {
        let order = &self.scratch.order;
        if order.is_empty() {
            return;
        }
        let work = &self.scratch.work;
        let served = order.iter().filter(|&&i| work[i].n_prb > 0).count();
        self.next_ue = if served == order.len() {
            ues[order[1 % order.len()]].ue
        } else {
            let last = order.iter().rev().find(|&&i| work[i].n_prb > 0);
            match last {
                Some(&i) => ues[i].ue.wrapping_add(1),
                None => self.next_ue,
            }
        };
    }

    fn schedule_dl(
        &mut self,
        n_prb: u16,
        rbg_size: u16,
        free_rbg_mask: u128,
        ues: &[SchedUe<'_>],
        tbs: &dyn Fn(u8, u16) -> u32,
    ) {
        let n_rbgs = n_rbg(n_prb, rbg_size);
        let mut free = free_rbg_mask
            & if n_rbgs >= 128 {
                u128::MAX
            } else {
                (1u128 << n_rbgs) - 1
            };
        let work = &mut self.scratch.work;
        let order = &self.scratch.order;
        loop {
            let mut left = order.iter().filter(|&&i| !work[i].done).count() as u32;
            if left == 0 || free == 0 {
                break;
            }
            for &i in order {
                if work[i].done || free == 0 {
                    continue;
                }
                let quota = free.count_ones().div_ceil(left);
                left -= 1;
                let w = &mut work[i];
                for _ in 0..quota {
                    let rbg = free.trailing_zeros() as u16;
                    free &= free - 1;
                    let mask = rbg_prb_mask(rbg, rbg_size, n_prb);
                    w.prb_mask |= mask;
                    w.n_prb += mask.count_ones() as u16;
                    if enough(tbs, ues[i].mcs, w.n_prb, ues[i].bytes_pending) {
                        w.done = true;
                        break;
                    }
                }
            }
        }
    }
}

impl Scheduler for RoundRobin {
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
        self.scratch.reset(ues);
        self.rotation(ues);
        match dir {
            Direction::Downlink => self.schedule_dl(n_prb, rbg_size, free_rbg_mask, ues, tbs),
            Direction::Uplink => allocate_ul_contiguous(
                n_prb,
                free_rbg_mask,
                ues,
                &self.scratch.order,
                true,
                tbs,
                &mut self.scratch.work,
            ),
        }
        self.advance(ues);
        emit_grants(ues, &self.scratch.work, tbs, out);
    }

    fn on_served(&mut self, _now: SimTime, _ue: u32, _bits: u32) {}
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    fn backlogged(n: u32, cqi: u8) -> Vec<SchedUe<'static>> {
        (0..n)
            .map(|ue| SchedUe {
                ue,
                cqi,
                mcs: mcs_for(cqi),
                rbg_cqi: None,
                bytes_pending: 1_000_000,
            })
            .collect()
    }

    fn rbgs_of(g: &Grant, rbg_size: u16) -> u32 {
        g.n_prb.div_ceil(rbg_size) as u32
    }

    /// 25 PRBs in 13 RBGs of 2 (TS 36.213 Table 7.1.6.1-1) among 4 equal UEs: 4,3,3,3 per TTI
    /// with the extra RBG rotating, so over 4 TTIs each UE gets exactly 13 RBGs.
    #[test]
    fn rr_shares_equally_and_rotates_leftovers() {
        let mut s = RoundRobin::new();
        let ues = backlogged(4, 9);
        let free = (1u128 << 13) - 1;
        let mut totals = [0u32; 4];
        let mut out = Vec::new();
        for tti in 0..4u64 {
            out.clear();
            s.schedule(
                SimTime::from_millis(tti),
                Direction::Downlink,
                25,
                2,
                free,
                &ues,
                &tbs,
                &mut out,
            );
            check_grants(Direction::Downlink, 25, 2, free, &ues, &out);
            let mut per: Vec<u32> = out.iter().map(|g| rbgs_of(g, 2)).collect();
            per.sort_unstable();
            assert_eq!(per, vec![3, 3, 3, 4], "tti {tti}");
            for g in &out {
                totals[g.ue as usize] += rbgs_of(g, 2);
            }
        }
        assert_eq!(totals, [13; 4]);
    }

    /// More UEs than RBGs: each TTI serves as many UEs as there are RBGs and the next TTI starts
    /// after the last one served, so every UE is served equally often.
    #[test]
    fn rr_more_ues_than_rbgs() {
        let mut s = RoundRobin::new();
        let ues = backlogged(5, 7);
        let free = 0b111u128;
        let mut count = [0u32; 5];
        let mut out = Vec::new();
        for tti in 0..5u64 {
            out.clear();
            s.schedule(
                SimTime::from_millis(tti),
                Direction::Downlink,
                6,
                2,
                free,
                &ues,
                &tbs,
                &mut out,
            );
            assert_eq!(out.len(), 3);
            for g in &out {
                count[g.ue as usize] += 1;
            }
        }
        assert_eq!(count, [3; 5]);
    }

    /// A UE needing little takes only what it needs; the others share the rest, and nothing idles.
    #[test]
    fn rr_small_buffer_leaves_rest_to_others() {
        let mut s = RoundRobin::new();
        let mut ues = backlogged(3, 9);
        ues[0].bytes_pending = 20; // one RBG of 2 PRBs carries it
        let free = (1u128 << 13) - 1;
        let mut out = Vec::new();
        s.schedule(
            SimTime::ZERO,
            Direction::Downlink,
            25,
            2,
            free,
            &ues,
            &tbs,
            &mut out,
        );
        check_grants(Direction::Downlink, 25, 2, free, &ues, &out);
        let g0 = out.iter().find(|g| g.ue == 0).unwrap();
        assert_eq!(g0.n_prb, 2);
        let total: u16 = out.iter().map(|g| g.n_prb).sum();
        assert_eq!(total, 25);
        // CQI 0: nothing
        ues[1].cqi = 0;
        out.clear();
        s.schedule(
            SimTime::from_millis(1),
            Direction::Downlink,
            25,
            2,
            free,
            &ues,
            &tbs,
            &mut out,
        );
        assert!(out.iter().all(|g| g.ue != 1));
    }

    /// Uplink: contiguous runs that skip busy PRBs (e.g. PUCCH at the band edges), valid PUSCH
    /// lengths, equal shares.
    #[test]
    fn rr_uplink_contiguous() {
        let mut s = RoundRobin::new();
        let ues = backlogged(3, 9);
        // 50 PRBs, PUCCH on PRBs 0-1 and 48-49, and PRBs 20-21 busy
        let free = ((1u128 << 48) - 1) & !0b11 & !(0b11 << 20);
        let mut out = Vec::new();
        s.schedule(
            SimTime::ZERO,
            Direction::Uplink,
            50,
            1,
            free,
            &ues,
            &tbs,
            &mut out,
        );
        check_grants(Direction::Uplink, 50, 1, free, &ues, &out);
        // 44 free PRBs in runs of 18 and 26: shares of 15, 15 and the 10 that fit in what is left
        let mut n: Vec<u16> = out.iter().map(|g| g.n_prb).collect();
        n.sort_unstable();
        assert_eq!(n, vec![10, 15, 15]);
    }
}
