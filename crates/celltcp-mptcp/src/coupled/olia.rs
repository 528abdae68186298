//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic, Le Boudec,
//! "MPTCP is not Pareto-optimal: performance issues and a possible solution", IEEE/ACM ToN
//! 21(5), 2013, eq. (5)), as Linux's out-of-tree `mptcp_olia.c` computes it.
//!
//! For each ACK on path r in congestion avoidance, in packets (`w = cwnd / mss`, RTT in
//! seconds): `w_r += (w_r / rtt_r^2) / (sum_p w_p / rtt_p)^2 + alpha_r / w_r`, where with
//! `l_r` the inter-loss distance, `B` the paths with the largest `l_r / rtt_r^2` (the kernel's
//! comparison), `M` the paths with the largest window and `R` all paths:
//! `alpha_r = 1 / (|R| |B\M|)` for r in `B\M`, `-1 / (|R| |M|)` for r in `M` when `B\M` is not
//! empty, 0 otherwise. The decrease is Reno's halving. Per byte acknowledged the increase of
//! cwnd in bytes equals the per-packet increase of `w` in packets.

use celltcp_tcp::cc::coupled::Coupling;

use super::{CoupledCc, PathView};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Olia;

/// OLIA's `alpha_r` for every path.
pub fn alphas(paths: &[PathView]) -> Vec<f64> {
    let n = paths.len() as f64;
    let max_w = paths.iter().map(|p| p.cwnd).fold(0.0, f64::max);
    let score = |p: &PathView| p.inter_loss_bytes / (p.srtt * p.srtt);
    let best = paths.iter().map(score).fold(0.0, f64::max);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    let in_m: Vec<bool> = paths.iter().map(|p| close(p.cwnd, max_w)).collect();
    let in_b_not_m: Vec<bool> = paths
        .iter()
        .zip(&in_m)
        .map(|(p, &m)| !m && close(score(p), best))
        .collect();
    let m = in_m.iter().filter(|&&x| x).count() as f64;
    let bm = in_b_not_m.iter().filter(|&&x| x).count() as f64;
    (0..paths.len())
        .map(|r| {
            if bm == 0.0 {
                0.0
            } else if in_b_not_m[r] {
                1.0 / (n * bm)
            } else if in_m[r] {
                -1.0 / (n * m)
            } else {
                0.0
            }
        })
        .collect()
}

impl CoupledCc for Olia {
    fn coupling(&self, paths: &[PathView], r: usize) -> Coupling {
        let p = paths[r];
        let sum: f64 = paths.iter().map(|q| q.w() / q.srtt).sum();
        let first = (p.w() / (p.srtt * p.srtt)) / (sum * sum);
        let inc = first + alphas(paths)[r] / p.w();
        Coupling {
            increase: Some(inc),
            decrease: 0.5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pv(w: f64, rtt_ms: f64, l: f64) -> PathView {
        PathView {
            cwnd: w * 1000.0,
            srtt: rtt_ms / 1000.0,
            mss: 1000.0,
            inter_loss_bytes: l,
        }
    }

    #[test]
    fn olia_moves_window_from_the_largest_window_to_the_best_path() {
        // Path 0 has the larger window, path 1 the longer inter-loss distance (less congested):
        // B\M = {1}: alpha_1 = 1/(2*1) = +1/2, alpha_0 = -1/(2*1) = -1/2 (eq. 5).
        let p = [pv(40.0, 50.0, 1e5), pv(10.0, 50.0, 1e6)];
        assert_eq!(alphas(&p), vec![-0.5, 0.5]);
        // increase_1 = (10/0.05^2) / (40/0.05 + 10/0.05)^2 + 0.5/10 = 4000 / 1e6 + 0.05 = 0.054
        let c1 = Olia.coupling(&p, 1).increase.unwrap();
        assert!((c1 - 0.054).abs() < 1e-12, "{c1}");
        // increase_0 = (40/0.0025)/1e6 - 0.5/40 = 0.016 - 0.0125 = 0.0035
        let c0 = Olia.coupling(&p, 0).increase.unwrap();
        assert!((c0 - 0.0035).abs() < 1e-12, "{c0}");
    }

    #[test]
    fn olia_alpha_zero_when_best_paths_have_the_largest_windows() {
        let p = [pv(40.0, 50.0, 1e6), pv(10.0, 50.0, 1e5)];
        assert_eq!(alphas(&p), vec![0.0, 0.0]);
        // equal paths: (w/r^2)/(2w/r)^2 = 1/(4w): the pair grows as one TCP
        let q = [pv(10.0, 50.0, 1e5); 2];
        let c = Olia.coupling(&q, 0).increase.unwrap();
        assert!((c - 1.0 / 40.0).abs() < 1e-12);
    }
}
