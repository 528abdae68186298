//! MAC: HARQ (3GPP TS 36.321 §5.3.2, §5.4.2) and the schedulers that share a TTI's PRBs among
//! the UEs of a cell (TS 36.213 §7.1.6.1 downlink resource allocation type 0, §8.1.1 uplink
//! resource allocation type 0).
//!
//! - [`harq`]: the per-UE HARQ entity with Chase combining.
//! - [`sched_rr`], [`sched_pf`], [`sched_maxci`]: round robin, proportional fair and max C/I, all
//!   behind the [`Scheduler`] trait and selected with [`SchedulerKind`] / [`AnyScheduler`].
//!
//! A scheduler sees only what the eNB MAC knows at the TTI: each UE's CQI (wideband and
//! optionally per RBG), its MCS and its buffer status. The transport block size function is
//! passed in (`tbs(mcs, n_prb)` in bits, TS 36.213 §7.1.7), so this module does not depend on
//! the PHY. HARQ retransmissions are served first by the caller, which removes their resource
//! from the free mask before calling [`Scheduler::schedule`].
//!
//! Downlink grants are sets of RBGs (type 0 allows any set). Uplink grants are contiguous runs of
//! PRBs (SC-FDMA, type 0) whose length has no prime factor other than 2, 3 and 5 (the DFT sizes
//! of TS 36.211 §5.3.3).

pub mod harq;
pub mod harq_timing;
pub mod sr_bsr;
pub mod sched_maxci;
pub mod sched_pf;
pub mod sched_rr;

use celltcp_engine::SimTime;

use crate::pdcp::{PdcpPdu, StatusReport};
use crate::rlc::RlcPdu;
use crate::Direction;

/// A MAC PDU on the shared channel: the RLC PDUs of the bearer and, on the uplink after a
/// lossless handover, the UE's PDCP status report (a PDCP control PDU, TS 36.323 §6.2.6) with
/// its size on the air. Simplification: the report rides in the MAC PDU beside the RLC PDUs
/// rather than inside an RLC AM PDU; HARQ protects it, and a block HARQ gives up on puts it
/// back in the UE's queue (as RLC AM would resend it).
#[derive(Debug)]
pub struct TransportBlock<P: Copy + std::fmt::Debug> {
    pub pdus: Vec<RlcPdu<PdcpPdu<P>>>,
    pub status_report: Option<(StatusReport, u32)>,
}

/// Spectral efficiency in bits per resource element of each 4-bit CQI index (TS 36.213
/// Table 7.2.3-1: modulation order × code rate / 1024); index 0 is "out of range".
pub const CQI_EFFICIENCY: [f64; 16] = [
    0.0, 0.1523, 0.2344, 0.3770, 0.6016, 0.8770, 1.1758, 1.4766, 1.9141, 2.4063, 2.7305, 3.3223,
    3.9023, 4.5234, 5.1152, 5.5547,
];

/// Most PRBs of a carrier (20 MHz, TS 36.101 Table 5.6-1 lists 100; 110 is the DCI maximum).
pub const MAX_PRB: u16 = 110;

/// RBG size `P` for a downlink bandwidth of `n_prb` PRBs (TS 36.213 Table 7.1.6.1-1).
pub fn rbg_size_for(n_prb: u16) -> u16 {
    match n_prb {
        0..=10 => 1,
        11..=26 => 2,
        27..=63 => 3,
        _ => 4,
    }
}

/// Number of RBGs of size `rbg_size` in `n_prb` PRBs (the last one may be smaller,
/// TS 36.213 §7.1.6.1).
pub fn n_rbg(n_prb: u16, rbg_size: u16) -> u16 {
    n_prb.div_ceil(rbg_size)
}

/// PRB mask of RBG `rbg` (bit i = PRB i).
pub fn rbg_prb_mask(rbg: u16, rbg_size: u16, n_prb: u16) -> u128 {
    let first = rbg * rbg_size;
    let count = rbg_size.min(n_prb.saturating_sub(first));
    if count == 0 {
        return 0;
    }
    ((1u128 << count) - 1) << first
}

/// Whether `n` PRBs is a valid PUSCH allocation length: `n = 2^a · 3^b · 5^c` (TS 36.211 §5.3.3).
pub fn is_valid_pusch_n_prb(n: u16) -> bool {
    if n == 0 {
        return false;
    }
    let mut m = n;
    for p in [2, 3, 5] {
        while m.is_multiple_of(p) {
            m /= p;
        }
    }
    m == 1
}

/// What the scheduler knows about one UE with data at a TTI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedUe<'a> {
    /// UE id (C-RNTI or index), unique in the cell.
    pub ue: u32,
    /// Wideband CQI, 1..=15; 0 means out of range: the UE is not scheduled.
    pub cqi: u8,
    /// MCS index for a new transmission (0..=28), chosen by the caller from the CQI.
    pub mcs: u8,
    /// Optional per-RBG CQI (per PRB in the uplink), used by frequency-selective PF and max C/I
    /// to choose RBGs; the grant still uses `mcs`. Shorter slices fall back to `cqi`.
    pub rbg_cqi: Option<&'a [u8]>,
    /// Bytes waiting, RLC headers included (downlink: the RLC buffer status; uplink: the last
    /// buffer status report).
    pub bytes_pending: u32,
}

impl SchedUe<'_> {
    /// CQI on RBG `rbg`: the per-RBG value if reported, else the wideband one.
    pub fn cqi_on(&self, rbg: u16) -> u8 {
        self.rbg_cqi
            .and_then(|c| c.get(rbg as usize).copied())
            .unwrap_or(self.cqi)
    }

    fn eligible(&self) -> bool {
        self.cqi > 0 && self.bytes_pending > 0
    }
}

/// A resource grant for one UE in one TTI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The UE.
    pub ue: u32,
    /// PRBs granted (bit i = PRB i).
    pub prb_mask: u128,
    /// Number of PRBs granted.
    pub n_prb: u16,
    /// MCS index.
    pub mcs: u8,
    /// Transport block size in bits, `tbs(mcs, n_prb)`.
    pub tb_bits: u32,
}

/// A MAC scheduler: shares the free resource of a TTI among the UEs with data.
pub trait Scheduler {
    /// Assigns the free resource to the UEs in `ues` and appends one [`Grant`] per served UE to
    /// `out` (which is not cleared: the caller may already have put HARQ retransmissions there).
    ///
    /// Downlink: `free_rbg_mask` bit i = RBG i of `rbg_size` PRBs. Uplink: `free_rbg_mask` is a
    /// PRB mask (`rbg_size` is ignored and taken as 1) and each UE gets one contiguous run.
    /// No UE gets more resource than `tbs(mcs, n_prb) / 8 >= bytes_pending` needs; a UE with
    /// CQI 0 or no bytes gets nothing. `tbs(mcs, n_prb)` must be non-decreasing in `n_prb`.
    #[allow(clippy::too_many_arguments)]
    fn schedule(
        &mut self,
        now: SimTime,
        dir: Direction,
        n_prb: u16,
        rbg_size: u16,
        free_rbg_mask: u128,
        ues: &[SchedUe<'_>],
        tbs: &dyn Fn(u8, u16) -> u32,
        out: &mut Vec<Grant>,
    );

    /// After the TTI: UE `ue` had `bits` delivered (downlink) or sent (uplink), so PF can update
    /// its average. Called at most once per UE and TTI, only for UEs that got something.
    fn on_served(&mut self, now: SimTime, ue: u32, bits: u32);
}

/// Which scheduler a cell uses; what users and Python see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SchedulerKind {
    /// Round robin ([`sched_rr`]).
    #[serde(rename = "rr")]
    RoundRobin,
    /// Proportional fair ([`sched_pf`]).
    #[serde(rename = "pf")]
    ProportionalFair,
    /// Maximum carrier-to-interference ([`sched_maxci`]).
    #[serde(rename = "maxci")]
    MaxCi,
}

impl SchedulerKind {
    /// Every scheduler.
    pub const ALL: [SchedulerKind; 3] = [
        SchedulerKind::RoundRobin,
        SchedulerKind::ProportionalFair,
        SchedulerKind::MaxCi,
    ];

    /// The name used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::RoundRobin => "rr",
            SchedulerKind::ProportionalFair => "pf",
            SchedulerKind::MaxCi => "maxci",
        }
    }

    /// One line per scheduler, for listings.
    pub fn describe(self) -> &'static str {
        match self {
            SchedulerKind::RoundRobin => {
                "round robin: equal shares of the RBGs, start rotating every TTI"
            }
            SchedulerKind::ProportionalFair => {
                "proportional fair: per RBG, max achievable rate / average throughput"
            }
            SchedulerKind::MaxCi => {
                "max C/I: per RBG, the UE with the highest CQI (starves cell-edge UEs)"
            }
        }
    }
}

impl std::str::FromStr for SchedulerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "rr" | "round_robin" | "roundrobin" => Ok(SchedulerKind::RoundRobin),
            "pf" | "proportional_fair" | "proportionalfair" => Ok(SchedulerKind::ProportionalFair),
            "maxci" | "max_ci" | "mt" => Ok(SchedulerKind::MaxCi),
            _ => Err(format!(
                "expected one of {}; got {s:?}",
                SchedulerKind::ALL
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl std::fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Closed-enum dispatch over the schedulers.
#[derive(Clone, Debug)]
pub enum AnyScheduler {
    /// Round robin.
    RoundRobin(sched_rr::RoundRobin),
    /// Proportional fair.
    ProportionalFair(sched_pf::ProportionalFair),
    /// Max C/I.
    MaxCi(sched_maxci::MaxCi),
}

impl AnyScheduler {
    /// A scheduler of kind `kind`; `pf` configures the proportional fair one (the others have
    /// no parameters).
    pub fn new(kind: SchedulerKind, pf: sched_pf::PfConfig) -> Self {
        match kind {
            SchedulerKind::RoundRobin => AnyScheduler::RoundRobin(sched_rr::RoundRobin::new()),
            SchedulerKind::ProportionalFair => {
                AnyScheduler::ProportionalFair(sched_pf::ProportionalFair::new(pf))
            }
            SchedulerKind::MaxCi => AnyScheduler::MaxCi(sched_maxci::MaxCi::new()),
        }
    }

    /// Drops what the scheduler remembers of UE `ue`, which left the cell (a handover): the
    /// proportional fair average (a UE that comes back starts afresh, as ns-3's
    /// `PfFfMacScheduler` erases its flow statistics on `CschedUeReleaseReq`); the others keep
    /// nothing per UE.
    pub fn forget(&mut self, ue: u32) {
        match self {
            AnyScheduler::ProportionalFair(s) => s.forget(ue),
            AnyScheduler::RoundRobin(_) | AnyScheduler::MaxCi(_) => {}
        }
    }

    /// Which scheduler this is.
    pub fn kind(&self) -> SchedulerKind {
        match self {
            AnyScheduler::RoundRobin(_) => SchedulerKind::RoundRobin,
            AnyScheduler::ProportionalFair(_) => SchedulerKind::ProportionalFair,
            AnyScheduler::MaxCi(_) => SchedulerKind::MaxCi,
        }
    }
}

impl Scheduler for AnyScheduler {
    fn schedule(
        &mut self,
        now: SimTime,
        dir: Direction,
        n_prb: u16,
        rbg_size: u16,
        free_rbg_mask: u128,
        ues: &[SchedUe<'_>],
        tbs: &dyn Fn(u8, u16) -> u32,
        out: &mut Vec<Grant>,
    ) {
        match self {
            AnyScheduler::RoundRobin(s) => {
                s.schedule(now, dir, n_prb, rbg_size, free_rbg_mask, ues, tbs, out)
            }
            AnyScheduler::ProportionalFair(s) => {
                s.schedule(now, dir, n_prb, rbg_size, free_rbg_mask, ues, tbs, out)
            }
            AnyScheduler::MaxCi(s) => {
                s.schedule(now, dir, n_prb, rbg_size, free_rbg_mask, ues, tbs, out)
            }
        }
    }

    fn on_served(&mut self, now: SimTime, ue: u32, bits: u32) {
        match self {
            AnyScheduler::RoundRobin(s) => s.on_served(now, ue, bits),
            AnyScheduler::ProportionalFair(s) => s.on_served(now, ue, bits),
            AnyScheduler::MaxCi(s) => s.on_served(now, ue, bits),
        }
    }
}

// ---- shared allocation machinery ------------------------------------------------------------

/// Whether `n_prb` PRBs at `mcs` carry `bytes`.
fn enough(tbs: &dyn Fn(u8, u16) -> u32, mcs: u8, n_prb: u16, bytes: u32) -> bool {
    n_prb > 0 && tbs(mcs, n_prb) / 8 >= bytes
}

/// The fewest PRBs (at most `max`) that carry `bytes` at `mcs`, by bisection (`tbs` is
/// non-decreasing in the PRB count); `None` if even `max` does not.
fn min_prbs(tbs: &dyn Fn(u8, u16) -> u32, mcs: u8, bytes: u32, max: u16) -> Option<u16> {
    if !enough(tbs, mcs, max, bytes) {
        return None;
    }
    let (mut lo, mut hi) = (1u16, max);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if enough(tbs, mcs, mid, bytes) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// Allocation in progress for one UE (index into `ues`).
#[derive(Clone, Copy, Debug, Default)]
struct Work {
    prb_mask: u128,
    n_prb: u16,
    done: bool,
}

/// Per-TTI buffers a scheduler keeps so that scheduling does not allocate in steady state.
#[derive(Clone, Debug, Default)]
struct Scratch {
    work: Vec<Work>,
    order: Vec<usize>,
    metric: Vec<f64>,
}

impl Scratch {
    fn reset(&mut self, ues: &[SchedUe<'_>]) {
        self.work.clear();
        self.work.extend(ues.iter().map(|u| Work {
            done: !u.eligible(),
            ..Work::default()
        }));
    }
}

/// Downlink: gives each free RBG (ascending) to the not-yet-satisfied eligible UE with the
/// highest `metric(ue_index, rbg)` (ties: the lower index). A UE leaves the competition once its
/// RBGs carry its `bytes_pending`.
fn allocate_dl_per_rbg(
    n_prb: u16,
    rbg_size: u16,
    free_rbg_mask: u128,
    ues: &[SchedUe<'_>],
    tbs: &dyn Fn(u8, u16) -> u32,
    work: &mut [Work],
    mut metric: impl FnMut(usize, u16) -> f64,
) {
    // Without per-RBG CQI every RBG ranks the UEs the same way (the metric only scales with the
    // RBG's PRB count): rank once, then fill the best UE's need before the next one's.
    if ues.iter().all(|u| u.rbg_cqi.is_none()) {
        let mut best_order: Vec<(usize, f64)> = (0..work.len()).filter(|&i| !work[i].done).map(|i| (i, metric(i, 0))).collect();
        // Stable: ties keep the order of `ues`, as the per-RBG scan below would.
        best_order.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut k = 0;
        for rbg in 0..n_rbg(n_prb, rbg_size) {
            if free_rbg_mask & (1u128 << rbg) == 0 {
                continue;
            }
            while k < best_order.len() && work[best_order[k].0].done {
                k += 1;
            }
            let Some(&(i, _)) = best_order.get(k) else { break };
            let mask = rbg_prb_mask(rbg, rbg_size, n_prb);
            let w = &mut work[i];
            w.prb_mask |= mask;
            w.n_prb += mask.count_ones() as u16;
            w.done = enough(tbs, ues[i].mcs, w.n_prb, ues[i].bytes_pending);
        }
        return;
    }
    for rbg in 0..n_rbg(n_prb, rbg_size) {
        if free_rbg_mask & (1u128 << rbg) == 0 {
            continue;
        }
        let mut best: Option<(usize, f64)> = None;
        for (i, w) in work.iter().enumerate() {
            if w.done {
                continue;
            }
            let m = metric(i, rbg);
            if best.is_none_or(|(_, bm)| m > bm) {
                best = Some((i, m));
            }
        }
        let Some((i, _)) = best else { break };
        let mask = rbg_prb_mask(rbg, rbg_size, n_prb);
        let w = &mut work[i];
        w.prb_mask |= mask;
        w.n_prb += mask.count_ones() as u16;
        w.done = enough(tbs, ues[i].mcs, w.n_prb, ues[i].bytes_pending);
    }
}

/// Mask of `len` PRBs from `start`.
fn run_mask(start: u16, len: u16) -> u128 {
    if len >= 128 {
        u128::MAX
    } else {
        ((1u128 << len) - 1) << start
    }
}

/// The lowest free run of at least `target` PRBs, else the longest one (the lowest of equals):
/// `(start, len)`.
fn pick_run(free: u128, target: u16) -> Option<(u16, u16)> {
    let mut rest = free;
    let mut longest: Option<(u16, u16)> = None;
    while rest != 0 {
        let start = rest.trailing_zeros() as u16;
        let len = (!(rest >> start)).trailing_zeros() as u16;
        if len >= target {
            return Some((start, len));
        }
        if longest.is_none_or(|(_, l)| len > l) {
            longest = Some((start, len));
        }
        rest &= !run_mask(start, len);
    }
    longest
}

/// Uplink: serves the UEs of `order` (indices into `ues`) in turn, each with one contiguous run
/// of free PRBs. With `equal_share` a UE is offered `ceil(free PRBs left / UEs left)`, else all
/// that is free; it takes the smallest valid PUSCH length that carries its buffer, or the
/// largest that fits in what it is offered. The run is the lowest free one long enough, else the
/// longest (a run never crosses a busy PRB).
fn allocate_ul_contiguous(
    n_prb: u16,
    free_prb_mask: u128,
    ues: &[SchedUe<'_>],
    order: &[usize],
    equal_share: bool,
    tbs: &dyn Fn(u8, u16) -> u32,
    work: &mut [Work],
) {
    let mut free = free_prb_mask & run_mask(0, n_prb);
    let mut left = order.iter().filter(|&&i| !work[i].done).count() as u32;
    for &i in order {
        if work[i].done {
            continue;
        }
        if free == 0 {
            break;
        }
        let n_free = free.count_ones();
        let quota = if equal_share {
            n_free.div_ceil(left)
        } else {
            n_free
        } as u16;
        left -= 1;
        let ue = &ues[i];
        let need = min_prbs(tbs, ue.mcs, ue.bytes_pending, n_free as u16)
            .and_then(|n| (n..=n_free as u16).find(|&v| is_valid_pusch_n_prb(v)));
        let target = quota.min(need.unwrap_or(u16::MAX));
        let Some((start, len)) = pick_run(free, target) else {
            break;
        };
        let cap = target.min(len);
        let n = if Some(cap) == need {
            cap
        } else {
            (1..=cap)
                .rev()
                .find(|&n| is_valid_pusch_n_prb(n))
                .unwrap_or(0)
        };
        if n == 0 {
            continue;
        }
        let mask = run_mask(start, n);
        free &= !mask;
        work[i] = Work {
            prb_mask: mask,
            n_prb: n,
            done: true,
        };
    }
}

/// Appends the grants of `work` (in `ues` order).
fn emit_grants(
    ues: &[SchedUe<'_>],
    work: &[Work],
    tbs: &dyn Fn(u8, u16) -> u32,
    out: &mut Vec<Grant>,
) {
    for (u, w) in ues.iter().zip(work) {
        if w.n_prb > 0 {
            out.push(Grant {
                ue: u.ue,
                prb_mask: w.prb_mask,
                n_prb: w.n_prb,
                mcs: u.mcs,
                tb_bits: tbs(u.mcs, w.n_prb),
            });
        }
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A TBS stand-in and checks shared by the scheduler tests.
    use super::*;

    /// Bits of `n_prb` PRBs at `mcs`: 120 data REs per PRB times an efficiency that grows with
    /// the MCS (about the shape of TS 36.213 Table 7.1.7.2.1-1).
    pub fn tbs(mcs: u8, n_prb: u16) -> u32 {
        let eff = 0.15 + 0.19 * mcs as f64;
        (120.0 * eff * n_prb as f64) as u32
    }

    /// The MCS matching a CQI in this stand-in (efficiency-equivalent).
    pub fn mcs_for(cqi: u8) -> u8 {
        ((CQI_EFFICIENCY[cqi as usize] - 0.15) / 0.19)
            .round()
            .clamp(0.0, 28.0) as u8
    }

    /// Checks the invariants every scheduler must keep: no PRB twice, only free resource, no UE
    /// with CQI 0, no more than needed (dropping the highest RBG, or for the uplink the next
    /// smaller valid length, would not carry the bytes), uplink runs contiguous.
    pub fn check_grants(
        dir: Direction,
        n_prb: u16,
        rbg_size: u16,
        free: u128,
        ues: &[SchedUe<'_>],
        grants: &[Grant],
    ) {
        let mut used = 0u128;
        let free_prbs = match dir {
            Direction::Uplink => free,
            Direction::Downlink => (0..n_rbg(n_prb, rbg_size))
                .filter(|r| free & (1 << r) != 0)
                .fold(0, |m, r| m | rbg_prb_mask(r, rbg_size, n_prb)),
        };
        for g in grants {
            assert_eq!(used & g.prb_mask, 0, "PRB granted twice");
            used |= g.prb_mask;
            assert_eq!(g.prb_mask & !free_prbs, 0, "busy PRB granted");
            assert_eq!(g.prb_mask.count_ones() as u16, g.n_prb);
            assert_eq!(g.tb_bits, tbs(g.mcs, g.n_prb));
            let ue = ues.iter().find(|u| u.ue == g.ue).unwrap();
            assert!(ue.cqi > 0 && ue.bytes_pending > 0);
            match dir {
                Direction::Downlink => {
                    let top = 127 - g.prb_mask.leading_zeros() as u16;
                    let last = rbg_prb_mask(top / rbg_size, rbg_size, n_prb);
                    let fewer = g.n_prb - last.count_ones() as u16;
                    assert!(
                        fewer == 0 || tbs(g.mcs, fewer) / 8 < ue.bytes_pending,
                        "ue {} over-allocated: {} PRBs for {} bytes",
                        g.ue,
                        g.n_prb,
                        ue.bytes_pending
                    );
                }
                Direction::Uplink => {
                    let run = g.prb_mask >> g.prb_mask.trailing_zeros();
                    assert_eq!(run & (run + 1), 0, "uplink grant not contiguous");
                    assert!(is_valid_pusch_n_prb(g.n_prb));
                    let smaller = (1..g.n_prb).rev().find(|&n| is_valid_pusch_n_prb(n));
                    if let Some(s) = smaller {
                        assert!(
                            tbs(g.mcs, s) / 8 < ue.bytes_pending,
                            "ue {} over-allocated",
                            g.ue
                        );
                    }
                }
            }
        }
    }

    /// Jain's fairness index of `x`.
    pub fn jain(x: &[f64]) -> f64 {
        let s: f64 = x.iter().sum();
        let s2: f64 = x.iter().map(|v| v * v).sum();
        s * s / (x.len() as f64 * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use celltcp_engine::rng::{component_id, component_rng};
    use rand::Rng;

    #[test]
    fn rbg_geometry_follows_7_1_6_1() {
        assert_eq!(rbg_size_for(6), 1);
        assert_eq!(rbg_size_for(25), 2);
        assert_eq!(rbg_size_for(50), 3);
        assert_eq!(rbg_size_for(100), 4);
        assert_eq!(n_rbg(50, 3), 17);
        assert_eq!(rbg_prb_mask(16, 3, 50), 0b11 << 48, "last RBG has 2 PRBs");
        assert_eq!(rbg_prb_mask(1, 4, 100), 0b1111 << 4);
        let valid: Vec<u16> = (1..=20).filter(|&n| is_valid_pusch_n_prb(n)).collect();
        assert_eq!(valid, vec![1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 18, 20]);
    }

    #[test]
    fn scheduler_kind_parses_and_serialises() {
        for k in SchedulerKind::ALL {
            assert_eq!(k.name().parse::<SchedulerKind>(), Ok(k));
            assert_eq!(
                AnyScheduler::new(k, sched_pf::PfConfig::default()).kind(),
                k
            );
        }
        let err = "wfq".parse::<SchedulerKind>().unwrap_err();
        assert!(err.contains("rr, pf, maxci"), "{err}");
        use serde::de::value::{Error, StrDeserializer};
        use serde::de::IntoDeserializer;
        use serde::Deserialize;
        let de: StrDeserializer<'_, Error> = "maxci".into_deserializer();
        assert_eq!(SchedulerKind::deserialize(de), Ok(SchedulerKind::MaxCi));
    }

    /// Every scheduler, both directions, random cells: the shared invariants hold.
    #[test]
    fn schedulers_keep_invariants_and_never_over_allocate() {
        let mut rng = component_rng(7, component_id("test", "mac_invariants"));
        for kind in SchedulerKind::ALL {
            let mut s = AnyScheduler::new(kind, sched_pf::PfConfig::default());
            let mut out = Vec::new();
            for tti in 0..300u64 {
                let now = SimTime::from_millis(tti);
                let dir = if tti % 2 == 0 {
                    Direction::Downlink
                } else {
                    Direction::Uplink
                };
                let n_prb = [6u16, 25, 50, 100][rng.gen_range(0..4)];
                let rbg = match dir {
                    Direction::Downlink => rbg_size_for(n_prb),
                    Direction::Uplink => 1,
                };
                let n_units = match dir {
                    Direction::Downlink => n_rbg(n_prb, rbg),
                    Direction::Uplink => n_prb,
                };
                let free: u128 = rng.gen::<u128>() & ((1u128 << n_units) - 1);
                let n_ue = rng.gen_range(1..8);
                let profiles: Vec<Vec<u8>> = (0..n_ue)
                    .map(|_| (0..n_units).map(|_| rng.gen_range(1..=15)).collect())
                    .collect();
                let ues: Vec<SchedUe> = (0..n_ue)
                    .map(|i| {
                        let cqi = rng.gen_range(0..=15);
                        SchedUe {
                            ue: i as u32 * 3,
                            cqi,
                            mcs: mcs_for(cqi.max(1)),
                            rbg_cqi: if rng.gen_bool(0.5) {
                                Some(&profiles[i][..])
                            } else {
                                None
                            },
                            bytes_pending: rng.gen_range(1..5000),
                        }
                    })
                    .collect();
                out.clear();
                s.schedule(now, dir, n_prb, rbg, free, &ues, &tbs, &mut out);
                check_grants(dir, n_prb, rbg, free, &ues, &out);
                for g in &out {
                    s.on_served(now, g.ue, g.tb_bits);
                }
                // work conservation: if a UE with CQI > 0 got nothing or less than it needs,
                // then no free resource is left unused (downlink, where runs do not matter)
                if dir == Direction::Downlink {
                    let used: u128 = out.iter().fold(0, |m, g| m | g.prb_mask);
                    let unserved = ues.iter().any(|u| {
                        u.cqi > 0
                            && out
                                .iter()
                                .find(|g| g.ue == u.ue)
                                .is_none_or(|g| g.tb_bits / 8 < u.bytes_pending)
                    });
                    if unserved {
                        for r in 0..n_units {
                            if free & (1 << r) != 0 {
                                assert_ne!(
                                    used & rbg_prb_mask(r, rbg, n_prb),
                                    0,
                                    "{kind} left RBG {r} idle"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
