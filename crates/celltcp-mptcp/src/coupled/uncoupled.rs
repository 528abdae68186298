//! Uncoupled: each subflow runs the flow's own single-path congestion control (any celltcp
//! [`CcKind`](celltcp_tcp::cc::CcKind)), independently, as upstream Linux MPTCP does (it has no
//! coupled control). Not fair to single-path TCP at a shared bottleneck (RFC 6356 §1).

use celltcp_tcp::cc::coupled::Coupling;

use super::{CoupledCc, PathView};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uncoupled;

impl CoupledCc for Uncoupled {
    /// Reno's own rule (used only if the subflows run the coupled controller anyway).
    fn coupling(&self, _paths: &[PathView], _r: usize) -> Coupling {
        Coupling::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncoupled_leaves_reno_rules() {
        let p = [PathView {
            cwnd: 1e4,
            srtt: 0.1,
            mss: 1e3,
            inter_loss_bytes: 0.0,
        }; 2];
        assert_eq!(
            Uncoupled.coupling(&p, 1),
            Coupling {
                increase: None,
                decrease: 0.5
            }
        );
    }
}
