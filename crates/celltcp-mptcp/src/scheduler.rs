//! Packet schedulers: which subflow carries the next chunk of data (RFC 8684 leaves this to
//! the implementation; Linux's out-of-tree MPTCP has `default` (lowest RTT first),
//! `roundrobin` and `redundant`, upstream Linux the lowest-RTT `mptcp_subflow_get_send`).
//!
//! The connection offers the subflows that may take data now ([`Candidate`]: established,
//! neither stale nor failed, with congestion-window room) and the scheduler names one (or, for
//! redundant, all) of them.

pub mod minrtt;
pub mod redundant;
pub mod round_robin;

use celltcp_engine::SimDuration;

/// A subflow that can take data now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Index of the subflow in the connection.
    pub subflow: usize,
    pub srtt: SimDuration,
    /// Congestion-window room, bytes (> 0).
    pub room: u64,
}

/// A scheduler. `pick` returns the chosen candidates' positions in `cands` (empty: none).
pub trait Scheduler {
    fn pick(&mut self, cands: &[Candidate], out: &mut Vec<usize>);
}

/// Which scheduler a connection uses.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum SchedulerKind {
    #[default]
    MinRtt,
    RoundRobin,
    Redundant,
}

impl SchedulerKind {
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::MinRtt => "minrtt",
            SchedulerKind::RoundRobin => "roundrobin",
            SchedulerKind::Redundant => "redundant",
        }
    }
}

impl std::str::FromStr for SchedulerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "minrtt" | "default" | "lowrtt" => Ok(SchedulerKind::MinRtt),
            "roundrobin" | "round-robin" | "rr" => Ok(SchedulerKind::RoundRobin),
            "redundant" => Ok(SchedulerKind::Redundant),
            _ => Err(format!(
                "mptcp.scheduler = {s:?}: expected one of minrtt, roundrobin, redundant"
            )),
        }
    }
}

impl TryFrom<String> for SchedulerKind {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// Closed-enum dispatch.
#[derive(Clone, Debug)]
pub enum AnyScheduler {
    MinRtt(minrtt::MinRtt),
    RoundRobin(round_robin::RoundRobin),
    Redundant(redundant::Redundant),
}

impl AnyScheduler {
    pub fn new(kind: SchedulerKind) -> Self {
        match kind {
            SchedulerKind::MinRtt => AnyScheduler::MinRtt(minrtt::MinRtt),
            SchedulerKind::RoundRobin => {
                AnyScheduler::RoundRobin(round_robin::RoundRobin::default())
            }
            SchedulerKind::Redundant => AnyScheduler::Redundant(redundant::Redundant),
        }
    }
    pub fn kind(&self) -> SchedulerKind {
        match self {
            AnyScheduler::MinRtt(_) => SchedulerKind::MinRtt,
            AnyScheduler::RoundRobin(_) => SchedulerKind::RoundRobin,
            AnyScheduler::Redundant(_) => SchedulerKind::Redundant,
        }
    }
}

impl Scheduler for AnyScheduler {
    fn pick(&mut self, cands: &[Candidate], out: &mut Vec<usize>) {
        match self {
            AnyScheduler::MinRtt(s) => s.pick(cands, out),
            AnyScheduler::RoundRobin(s) => s.pick(cands, out),
            AnyScheduler::Redundant(s) => s.pick(cands, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_names_parse() {
        for k in [
            SchedulerKind::MinRtt,
            SchedulerKind::RoundRobin,
            SchedulerKind::Redundant,
        ] {
            assert_eq!(k.name().parse::<SchedulerKind>(), Ok(k));
            assert_eq!(AnyScheduler::new(k).kind(), k);
        }
        assert!("blest"
            .parse::<SchedulerKind>()
            .unwrap_err()
            .contains("minrtt"));
    }
}
