//! BALIA, the Balanced Linked Adaptation algorithm (Peng, Walid, Hwang, Low, "Multipath TCP:
//! Analysis, Design, and Implementation", IEEE/ACM ToN 24(1), 2016, §VI, eq. (14)-(15)), as
//! Linux's out-of-tree `mptcp_balia.c` computes it.
//!
//! With `x_k = w_k / rtt_k` (packets per second) and `alpha_r = max_k x_k / x_r`:
//! for each ACK on path r, `w_r += x_r / (rtt_r (sum_k x_k)^2) * (1 + alpha_r)/2 *
//! (4 + alpha_r)/5`; for each loss on r, `w_r -= w_r/2 * min(alpha_r, 1.5)`. So the increase per
//! byte acknowledged is the bracket above and the decrease fraction `min(alpha_r, 1.5) / 2`.

use celltcp_tcp::cc::coupled::Coupling;

use super::{CoupledCc, PathView};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Balia;

impl CoupledCc for Balia {
    fn coupling(&self, paths: &[PathView], r: usize) -> Coupling {
        let x = |p: &PathView| p.w() / p.srtt;
        let p = paths[r];
        let sum: f64 = paths.iter().map(x).sum();
        let max = paths.iter().map(x).fold(0.0, f64::max);
        let a = max / x(&p);
        let inc = x(&p) / (p.srtt * sum * sum) * (1.0 + a) / 2.0 * (4.0 + a) / 5.0;
        // min(alpha, 1.5) / 2 is at most 0.75 and at least 0.5 (alpha >= 1).
        Coupling {
            increase: Some(inc),
            decrease: a.min(1.5) / 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balia_closed_form_two_paths() {
        // w = (10, 20) packets, rtt = (0.1, 0.1) s: x = (100, 200), alpha = (2, 1).
        let p = [
            PathView {
                cwnd: 10_000.0,
                srtt: 0.1,
                mss: 1000.0,
                inter_loss_bytes: 0.0,
            },
            PathView {
                cwnd: 20_000.0,
                srtt: 0.1,
                mss: 1000.0,
                inter_loss_bytes: 0.0,
            },
        ];
        // path 0: 100 / (0.1 * 300^2) * 3/2 * 6/5 = 0.0111.. * 1.8 = 0.02
        let c0 = Balia.coupling(&p, 0);
        assert!((c0.increase.unwrap() - 100.0 / (0.1 * 90_000.0) * 1.5 * 1.2).abs() < 1e-12);
        assert!((c0.decrease - 0.75).abs() < 1e-12, "min(2, 1.5)/2");
        // path 1: 200 / 9000 * 1 * 1 = 0.0222
        let c1 = Balia.coupling(&p, 1);
        assert!((c1.increase.unwrap() - 200.0 / 9000.0).abs() < 1e-12);
        assert!((c1.decrease - 0.5).abs() < 1e-12);
    }
}
