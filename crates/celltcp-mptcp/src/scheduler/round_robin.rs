//! Round-robin: the subflows take turns (Linux out-of-tree `mptcp_rr.c` with `cwnd_limited`
//! on: a subflow without window room is skipped rather than waited for).

use super::{Candidate, Scheduler};

#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobin {
    /// The subflow index served last.
    last: Option<usize>,
}

impl Scheduler for RoundRobin {
    fn pick(&mut self, cands: &[Candidate], out: &mut Vec<usize>) {
        if cands.is_empty() {
            return;
        }
        // The first candidate after the last one served, cyclically by subflow index.
        let after = self.last.map_or(0, |l| l + 1);
        let i = cands
            .iter()
            .enumerate()
            .filter(|(_, c)| c.subflow >= after)
            .min_by_key(|(_, c)| c.subflow)
            .or_else(|| cands.iter().enumerate().min_by_key(|(_, c)| c.subflow))
            .map(|(i, _)| i)
            .unwrap();
        self.last = Some(cands[i].subflow);
        out.push(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::SimDuration;

    #[test]
    fn round_robin_takes_turns_and_skips_full_subflows() {
        let c = |subflow| Candidate {
            subflow,
            srtt: SimDuration::from_millis(10),
            room: 1000,
        };
        let mut rr = RoundRobin::default();
        let mut seq = Vec::new();
        for _ in 0..5 {
            let mut out = Vec::new();
            rr.pick(&[c(0), c(1), c(2)], &mut out);
            seq.push(out[0]);
        }
        assert_eq!(seq, [0, 1, 2, 0, 1]);
        // subflow 2 has no room: after 1 comes 0
        let mut out = Vec::new();
        rr.pick(&[c(0), c(1)], &mut out);
        assert_eq!(out, [0]);
    }
}
