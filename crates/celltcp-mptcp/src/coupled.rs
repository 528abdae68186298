//! Coupled congestion control for MPTCP: how the connection sets each subflow's increase and
//! decrease from every subflow's window and RTT.
//!
//! Each subflow runs `celltcp-tcp`'s [`Coupled`](celltcp_tcp::cc::coupled::Coupled) controller
//! (Reno's slow start, loss window and undo); before a subflow processes a segment the
//! connection computes a [`Coupling`] for it from a [`PathView`] of every established subflow
//! and hands it over with `TcpEndpoint::controller_mut`. One file per algorithm:
//!
//! - [`lia`]: Linked Increases, RFC 6356 §4 (Linux's out-of-tree `mptcp_coupled.c`).
//! - [`olia`]: Opportunistic LIA, Khalili, Gast, Popovic, Le Boudec, IEEE/ACM ToN 21(5), 2013
//!   (Linux's out-of-tree `mptcp_olia.c`).
//! - [`balia`]: Balanced LIA, Peng, Walid, Hwang, Low, IEEE/ACM ToN 24(1), 2016
//!   (Linux's out-of-tree `mptcp_balia.c`).
//! - [`uncoupled`]: every subflow runs its own celltcp control (any [`celltcp_tcp::cc::CcKind`]),
//!   as upstream Linux MPTCP does today.
//!
//! Units: windows in bytes in [`PathView`]; the formulas of the papers are in packets
//! (`w = cwnd / mss`) and seconds, and each file says how it converts.

use celltcp_tcp::cc::coupled::Coupling;

pub mod balia;
pub mod lia;
pub mod olia;
pub mod uncoupled;

/// What the coupled algorithms see of one established subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathView {
    /// Congestion window, bytes (Linux `mptcp_get_crt_cwnd`: ssthresh while in fast recovery).
    pub cwnd: f64,
    /// Smoothed RTT, seconds (> 0; paths without an RTT sample are left out by the caller).
    pub srtt: f64,
    /// Sender MSS, bytes.
    pub mss: f64,
    /// OLIA's inter-loss distance `l_r`, bytes: the larger of the bytes acknowledged between
    /// the last two losses and since the last loss.
    pub inter_loss_bytes: f64,
}

impl PathView {
    /// Window in packets.
    pub fn w(&self) -> f64 {
        self.cwnd / self.mss
    }
}

/// A coupled increase/decrease rule.
pub trait CoupledCc {
    /// The coupling for path `r` of `paths` (the established subflows with an RTT sample).
    fn coupling(&self, paths: &[PathView], r: usize) -> Coupling;
}

/// Which multipath congestion control a connection uses.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum CoupledKind {
    /// Each subflow runs the flow's single-path control, independently.
    Uncoupled,
    Lia,
    /// The default of paper 002 (Pasca et al.) and of the out-of-tree Linux MPTCP's users.
    #[default]
    Olia,
    Balia,
}

impl CoupledKind {
    pub const ALL: [CoupledKind; 4] = [
        CoupledKind::Uncoupled,
        CoupledKind::Lia,
        CoupledKind::Olia,
        CoupledKind::Balia,
    ];
    pub fn name(self) -> &'static str {
        match self {
            CoupledKind::Uncoupled => "uncoupled",
            CoupledKind::Lia => "lia",
            CoupledKind::Olia => "olia",
            CoupledKind::Balia => "balia",
        }
    }
}

impl std::str::FromStr for CoupledKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let l = s.to_ascii_lowercase();
        CoupledKind::ALL
            .into_iter()
            .find(|k| k.name() == l || (l == "coupled" && *k == CoupledKind::Lia))
            .ok_or_else(|| format!("mptcp.cc = {s:?}: expected one of uncoupled, lia, olia, balia"))
    }
}

impl TryFrom<String> for CoupledKind {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// Closed-enum dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnyCoupled {
    Uncoupled(uncoupled::Uncoupled),
    Lia(lia::Lia),
    Olia(olia::Olia),
    Balia(balia::Balia),
}

impl AnyCoupled {
    pub fn new(kind: CoupledKind) -> Self {
        match kind {
            CoupledKind::Uncoupled => AnyCoupled::Uncoupled(uncoupled::Uncoupled),
            CoupledKind::Lia => AnyCoupled::Lia(lia::Lia),
            CoupledKind::Olia => AnyCoupled::Olia(olia::Olia),
            CoupledKind::Balia => AnyCoupled::Balia(balia::Balia),
        }
    }
    pub fn kind(&self) -> CoupledKind {
        match self {
            AnyCoupled::Uncoupled(_) => CoupledKind::Uncoupled,
            AnyCoupled::Lia(_) => CoupledKind::Lia,
            AnyCoupled::Olia(_) => CoupledKind::Olia,
            AnyCoupled::Balia(_) => CoupledKind::Balia,
        }
    }
    /// Whether subflows run the coupled controller (false: their own single-path control).
    pub fn is_coupled(&self) -> bool {
        !matches!(self, AnyCoupled::Uncoupled(_))
    }
    fn inner(&self) -> &dyn CoupledCc {
        match self {
            AnyCoupled::Uncoupled(c) => c,
            AnyCoupled::Lia(c) => c,
            AnyCoupled::Olia(c) => c,
            AnyCoupled::Balia(c) => c,
        }
    }
}

impl CoupledCc for AnyCoupled {
    fn coupling(&self, paths: &[PathView], r: usize) -> Coupling {
        self.inner().coupling(paths, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_every_coupled_rule_is_reno_on_one_path() {
        // RFC 6356 §3 (and the OLIA/BALIA papers): with one path every rule is Reno's
        // increase of 1/w per packet acknowledged and halving.
        let one = [PathView {
            cwnd: 20_000.0,
            srtt: 0.05,
            mss: 1000.0,
            inter_loss_bytes: 1e6,
        }];
        for k in CoupledKind::ALL {
            assert_eq!(k.name().parse::<CoupledKind>(), Ok(k));
            let c = AnyCoupled::new(k).coupling(&one, 0);
            let inc = c.increase.unwrap_or(1000.0 / 20_000.0);
            assert!((inc - 0.05).abs() < 1e-12, "{k:?}: {inc}");
            assert!((c.decrease - 0.5).abs() < 1e-12, "{k:?}");
        }
        assert!("cubic".parse::<CoupledKind>().unwrap_err().contains("olia"));
    }
}
