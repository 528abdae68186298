//! LIA, the Linked Increases Algorithm of RFC 6356.
//!
//! §4: for each ACK of `bytes_acked` on subflow i in congestion avoidance,
//! `cwnd_i += min(alpha * bytes_acked * MSS_i / cwnd_total, bytes_acked * MSS_i / cwnd_i)` with
//! `alpha = cwnd_total * max_i(cwnd_i / rtt_i^2) / (sum_i cwnd_i / rtt_i)^2` (§4, eq. 2);
//! the decrease is unchanged, halving (§3). The increase per byte acknowledged is thus
//! `min(alpha * MSS_i / cwnd_total, MSS_i / cwnd_i)`.

use celltcp_tcp::cc::coupled::Coupling;

use super::{CoupledCc, PathView};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lia;

/// RFC 6356 §4's alpha.
pub fn alpha(paths: &[PathView]) -> f64 {
    let total: f64 = paths.iter().map(|p| p.cwnd).sum();
    let best = paths
        .iter()
        .map(|p| p.cwnd / (p.srtt * p.srtt))
        .fold(0.0, f64::max);
    let denom: f64 = paths.iter().map(|p| p.cwnd / p.srtt).sum();
    if denom <= 0.0 {
        return 1.0;
    }
    total * best / (denom * denom)
}

impl CoupledCc for Lia {
    fn coupling(&self, paths: &[PathView], r: usize) -> Coupling {
        let total: f64 = paths.iter().map(|p| p.cwnd).sum();
        let p = paths[r];
        let inc = (alpha(paths) * p.mss / total).min(p.mss / p.cwnd);
        Coupling {
            increase: Some(inc),
            decrease: 0.5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pv(cwnd_pkts: f64, rtt_ms: f64) -> PathView {
        PathView {
            cwnd: cwnd_pkts * 1000.0,
            srtt: rtt_ms / 1000.0,
            mss: 1000.0,
            inter_loss_bytes: 0.0,
        }
    }

    #[test]
    fn lia_alpha_equal_paths_is_one_over_n() {
        // RFC 6356 §4: n equal paths (same cwnd and RTT): alpha = n w (w/r^2) / (n w / r)^2 = 1/n,
        // so each subflow grows by 1/(n * cwnd_total) per byte: the whole connection as one TCP.
        for n in 1..=4 {
            let p = vec![pv(10.0, 100.0); n];
            assert!((alpha(&p) - 1.0 / n as f64).abs() < 1e-12);
            let c = Lia.coupling(&p, 0).increase.unwrap();
            assert!(
                (c - 1000.0 / (n as f64 * n as f64 * 10_000.0)).abs() < 1e-15,
                "{n}: {c}"
            );
        }
    }

    #[test]
    fn lia_alpha_closed_form_unequal_paths() {
        // w1 = 10 pkts at 10 ms, w2 = 40 pkts at 100 ms (bytes, seconds):
        // alpha = 50000 * max(10000/0.0001, 40000/0.01) / (10000/0.01 + 40000/0.1)^2
        //       = 50000 * 1e8 / (1.4e6)^2 = 2.5510204...
        let p = [pv(10.0, 10.0), pv(40.0, 100.0)];
        let want = 50_000.0 * 1e8 / (1.4e6f64 * 1.4e6);
        assert!((alpha(&p) - want).abs() < 1e-9, "{}", alpha(&p));
        // subflow 1: min(alpha * 1000 / 50000, 1000 / 10000) = min(0.0510, 0.1) = 0.0510
        let c1 = Lia.coupling(&p, 0).increase.unwrap();
        assert!((c1 - want * 1000.0 / 50_000.0).abs() < 1e-12);
        // subflow 2: min(0.0510, 1000/40000 = 0.025) = 0.025: never more than a single TCP (goal 1)
        let c2 = Lia.coupling(&p, 1).increase.unwrap();
        assert!((c2 - 0.025).abs() < 1e-12);
    }
}
