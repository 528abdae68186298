//! Redundant: every chunk goes on every subflow that can take it (Linux out-of-tree
//! `mptcp_redundant.c`): the receiver keeps the first copy (data-level reassembly drops the
//! rest), trading capacity for latency and robustness.

use super::{Candidate, Scheduler};

#[derive(Clone, Copy, Debug, Default)]
pub struct Redundant;

impl Scheduler for Redundant {
    fn pick(&mut self, cands: &[Candidate], out: &mut Vec<usize>) {
        out.extend(0..cands.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::SimDuration;

    #[test]
    fn redundant_picks_every_candidate() {
        let c = |subflow| Candidate {
            subflow,
            srtt: SimDuration::from_millis(10),
            room: 1000,
        };
        let mut out = Vec::new();
        Redundant.pick(&[c(0), c(3)], &mut out);
        assert_eq!(out, [0, 1]);
    }
}
