//! Lowest-RTT-first: the subflow with the smallest smoothed RTT among those with window room
//! (Linux out-of-tree `mptcp_sched.c` "default", `get_available_subflow`; upstream
//! `mptcp_subflow_get_send` weighs by pacing rate but also prefers the fastest path). A subflow
//! without an RTT sample yet counts as RTT 0 (tried first, as the kernel does). Ties: the lower
//! subflow index.

use super::{Candidate, Scheduler};

#[derive(Clone, Copy, Debug, Default)]
pub struct MinRtt;

impl Scheduler for MinRtt {
    fn pick(&mut self, cands: &[Candidate], out: &mut Vec<usize>) {
        if let Some((i, _)) = cands
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| (c.srtt, c.subflow))
        {
            out.push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::SimDuration;

    #[test]
    fn minrtt_picks_the_fastest_subflow_with_room() {
        let c = |subflow, ms| Candidate {
            subflow,
            srtt: SimDuration::from_millis(ms),
            room: 1000,
        };
        let mut out = Vec::new();
        MinRtt.pick(&[c(0, 50), c(1, 20), c(2, 30)], &mut out);
        assert_eq!(out, [1]);
        out.clear();
        MinRtt.pick(&[], &mut out);
        assert!(out.is_empty());
    }
}
