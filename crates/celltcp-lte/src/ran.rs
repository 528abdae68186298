//! The radio access network: eNBs and UEs wired from the layers of this crate, run at 1 ms
//! TTI granularity.
//!
//! One [`Ran`] holds every cell and every UE of a run. Each UE has one default data radio
//! bearer (TS 36.300 §13.1): on the eNB side a PDCP transmitter, an RLC entity and a PDCP
//! receiver, and the same on the UE side. Every TTI with work to do:
//!
//! 1. transport blocks sent in the previous TTI are received: those the PHY decoded go up
//!    through RLC and PDCP; HARQ feedback (TS 36.321 §5.3.2.2) frees the process or schedules a
//!    retransmission one HARQ round trip after the first transmission (FDD: 8 ms; TDD: the
//!    acknowledgement delay of TS 36.213 Table 10.1.3.1-1 plus 4 subframes);
//! 2. the downlink scheduler of each cell serves HARQ retransmissions first, then shares the
//!    remaining resource block groups among the UEs with data (TS 36.213 §7.1.6.1); the
//!    modulation and coding scheme comes from the UE's last CQI report, taken with a period
//!    and a delay (TS 36.213 §7.2.2);
//! 3. each transport block is filled with RLC PDUs (STATUS first, TS 36.322 §5.2.3), and its
//!    decoding is drawn from the block error rate at the effective SINR over its PRBs, with
//!    interference from the other cells' transmissions on the same PRBs in this TTI (downlink:
//!    the other eNBs; uplink: the UE each other cell scheduled on that PRB);
//! 4. the uplink: a UE with data and no grant sends a scheduling request at its next SR
//!    opportunity (TS 36.321 §5.4.4); the eNB answers with a grant for the PUSCH 4 subframes
//!    later (TS 36.213 §8.0, Table 8-2 for TDD); every uplink transport block carries a buffer
//!    status report (TS 36.321 §5.4.5) from which later grants are sized; uplink HARQ is
//!    synchronous and non-adaptive (TS 36.321 §5.4.2.2): a retransmission reuses the PRBs one
//!    HARQ round trip later.
//!
//! An idle UE costs nothing: only UEs with data, a HARQ process in flight, a pending request or
//! a running RLC/PDCP timer are visited, and a CQI is computed only when a UE is scheduled (the
//! channel is a deterministic function of time, so the report "taken" at the last report
//! instant can be evaluated late).
//!
//! Simplifications (stated, not hidden): the uplink transmit power per PRB is the UE's maximum
//! power spread over the whole uplink band (no closed-loop power control); the CQI is measured
//! against the other cells' most recent PRB use (if less than one CQI period old); fast fading applies to the serving link only;
//! PDCP hands every SDU to RLC at once (the RLC transmit buffer is the bearer's queue) and,
//! with RLC UM or TM, releases it then (with AM it holds it until RLC confirms delivery, TS
//! 36.323 §5.4); the eNB answers a scheduling request in the subframe it receives it (no SR
//! decoding delay), with a grant sized for [`SR_GRANT_BYTES`] for the PUSCH 4 subframes later.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use celltcp_engine::rng::{component_id, component_rng, SimRng};
use celltcp_engine::{SimDuration, SimTime};
use rand::Rng;

use crate::enb::{EnbStack, EnbUeContext};
use crate::mac::TransportBlock as Tb;
use crate::ue::UeStack;
use crate::handover::{AnyHandoverAlgorithm, HandoverAlgorithmKind};
use crate::mac::harq::{HarqEntity, HarqOutcome};
use crate::mac::harq_timing::HarqTiming;
use crate::mac::sr_bsr::{UlGrant, BSR_BYTES};
use crate::mac::sched_pf::PfConfig;
use crate::mac::{rbg_prb_mask, AnyScheduler, Grant, SchedUe, Scheduler, SchedulerKind};
use crate::bearer::LowerLeg;
use crate::lwa::{LwaConfig, LwaLeg, LwaRx, LwaTx, LwaTxStats, ReorderStats};
use crate::pdcp::{PdcpConfig, PdcpPdu};
use crate::phy::channel::{self, PathLoss};
use crate::phy::fading::{FadingChannel, FadingProfile};
use crate::phy::cqi::{self, CqiReport};
use crate::phy::tdd::Duplex;
use crate::phy::{amc, tbs};
use crate::rlc::{RlcConfig, RlcEntity, RlcPdu};
use crate::Direction;

mod x2_handover;
mod rrm;
#[cfg(test)]
mod tests;
pub use x2_handover::{HandoverConfig, HandoverEvent, PdcpForwarding, X2Sent};
pub use rrm::{RlfRecord, MOBILITY_STEP};
use x2_handover::HoState;
use rrm::UeMobility;

pub use crate::mac::sr_bsr::SR_GRANT_BYTES;

/// One TTI (TS 36.211 §4: a 1 ms subframe).
pub const TTI: SimDuration = SimDuration::from_millis(1);

/// Radio settings shared by every cell.
#[derive(Clone, Debug)]
pub struct RadioConfig {
    pub carrier_hz: f64,
    pub pathloss: PathLoss,
    pub shadowing_sigma_db: f64,
    /// Building penetration loss, dB, added to every cell-UE path (TR 36.814 Table A.2.1.1-2:
    /// 20 dB for indoor UEs of the macro case; 0 for outdoor UEs).
    pub penetration_loss_db: f64,
    pub fading: Option<FadingProfile>,
    pub doppler_hz: f64,
    pub enb_tx_power_dbm: f64,
    pub ue_tx_power_dbm: f64,
    pub enb_noise_figure_db: f64,
    pub ue_noise_figure_db: f64,
    pub enb_antenna_gain_dbi: f64,
    pub ue_antenna_gain_dbi: f64,
    pub enb_height_m: f64,
    pub ue_height_m: f64,
}

/// Uplink outer-loop link adaptation (OLLA; K. I. Pedersen et al., "Frequency domain
/// scheduling for OFDMA with limited and noisy channel feedback", IEEE VTC 2007-Fall): the eNB
/// backs the SINR it measured off by an offset that rises by this step on every failed first
/// transmission and falls by step × t/(1 − t) on every success, so that the first-transmission
/// BLER settles at the target t = [`OLLA_BLER_TARGET`] (in steady state P(fail) · up = P(ok) ·
/// down). It corrects what the measured SINR misses, chiefly other-cell uplink interference,
/// which changes every TTI with the neighbours' schedules. The offset stays within
/// 0..=[`OLLA_MAX_DB`]: it never makes the choice more aggressive than the measurement.
pub const OLLA_STEP_UP_DB: f64 = 0.5;
/// First-transmission BLER target of the outer loop (the 10 % of TS 36.213 §7.2.3).
pub const OLLA_BLER_TARGET: f64 = 0.1;
/// Largest back-off of the outer loop, dB.
pub const OLLA_MAX_DB: f64 = 20.0;

/// Everything a [`Ran`] needs besides its cells and UEs.
#[derive(Clone, Debug)]
pub struct RanConfig {
    pub dl_prbs: u16,
    pub ul_prbs: u16,
    pub duplex: Duplex,
    pub dl_scheduler: SchedulerKind,
    pub ul_scheduler: SchedulerKind,
    pub pf: PfConfig,
    /// Control format indicator: OFDM symbols of the control region (TS 36.211 §6.7), 1..=3.
    pub cfi: u8,
    /// Maximum HARQ transmissions of one transport block (TS 36.321 §5.4.2.1 maxHARQ-Tx).
    pub harq_max_tx: u8,
    pub cqi_period: SimDuration,
    pub cqi_delay: SimDuration,
    pub sr_period: SimDuration,
    /// Uplink outer-loop link adaptation (see [`OLLA_STEP_UP_DB`]); `false`: the MCS follows
    /// the measured SINR alone.
    pub ul_olla: bool,
    /// Downlink outer-loop link adaptation: the same loop on the UE's HARQ ACK/NACK of first
    /// transmissions, backing off the SINR the reported CQI stands for (see [`Ran::mcs_for`]);
    /// `false`: the MCS follows the CQI alone, as in ns-3's LTE module.
    pub dl_olla: bool,
    pub rlc: RlcConfig,
    pub pdcp: PdcpConfig,
    pub radio: RadioConfig,
    pub handover: HandoverConfig,
}

/// An eNB (one cell) at a position.
#[derive(Clone, Debug, Default)]
pub struct EnbSpec {
    pub name: String,
    pub position: (f64, f64),
    /// Boresight of a sector antenna (degrees counter-clockwise from +x) with the TR 36.814
    /// Table A.2.1.1-2 pattern; `None`: omnidirectional.
    pub boresight_deg: Option<f64>,
}

/// Linear gain from a cell at `cell` (sector boresight `boresight`) to a UE at `pos`: antenna
/// gains and sector pattern, minus path loss, penetration loss and `shadow_db`.
pub(crate) fn link_gain(r: &RadioConfig, cell: (f64, f64), boresight: Option<f64>, pos: (f64, f64), shadow_db: f64) -> f64 {
    let d = ((pos.0 - cell.0).powi(2) + (pos.1 - cell.1).powi(2)).sqrt();
    let loss = r.pathloss.loss_db(d, r.carrier_hz, r.enb_height_m, r.ue_height_m);
    let pattern = match boresight {
        Some(b) if d > 0.0 => crate::layout::sector_pattern_db((pos.1 - cell.1).atan2(pos.0 - cell.0).to_degrees() - b),
        _ => 0.0,
    };
    channel::db_to_linear(r.enb_antenna_gain_dbi + r.ue_antenna_gain_dbi + pattern - loss - r.penetration_loss_db - shadow_db)
}

/// A UE attached to a cell.
#[derive(Clone, Debug)]
pub struct UeSpec {
    pub name: String,
    pub enb: usize,
    pub position: (f64, f64),
    /// Fixed SINR on every PRB in both directions, instead of the channel model.
    pub fixed_sinr_db: Option<f64>,
    /// Fixed MCS in both directions instead of link adaptation (the channel still decides
    /// whether blocks decode).
    pub fixed_mcs: Option<u8>,
}

/// What a TTI hands back to the caller.
#[derive(Clone, Copy, Debug)]
pub enum RanOutput<P> {
    /// A downlink SDU reached the UE's IP layer.
    ToUe { ue: usize, sdu: P },
    /// An uplink SDU left the eNB towards the EPC (S1-U).
    ToEpc { enb: usize, ue: usize, sdu: P },
    /// An SDU was dropped inside the RAN (buffer full, RLC UM loss, HARQ failure in TM).
    Dropped { ue: usize, dir: Direction, sdu: P },
}

/// Counters of one UE (both directions); the summary reads them at the end of a run.
#[derive(Clone, Debug, Default)]
pub struct UeStats {
    /// Transport blocks scheduled for this UE by CQI value at scheduling time (index = CQI).
    pub dl_cqi_hist: [u64; 16],
    pub dl_mcs_hist: [u64; 29],
    pub ul_mcs_hist: [u64; 29],
    /// Effective SINR (dB) of first transmissions: sum, sum of squares, count, min, max.
    pub dl_sinr_db_sum: f64,
    pub dl_sinr_db_n: u64,
    pub dl_sinr_db_min: f64,
    pub dl_sinr_db_max: f64,
    pub ul_sinr_db_sum: f64,
    pub ul_sinr_db_n: u64,
    pub dl_prbs: u64,
    pub ul_prbs: u64,
    pub dl_ttis: u64,
    pub ul_ttis: u64,
    pub dl_tb_tx: u64,
    pub dl_tb_retx: u64,
    pub dl_tb_failed: u64,
    pub dl_tb_errors: u64,
    /// First transmissions that failed to decode (the quantity link adaptation aims at 10 %).
    pub dl_tb_first_errors: u64,
    pub ul_tb_first_errors: u64,
    pub ul_tb_tx: u64,
    pub ul_tb_retx: u64,
    pub ul_tb_failed: u64,
    pub ul_tb_errors: u64,
    pub dl_bits: u64,
    pub ul_bits: u64,
    pub dl_sdus_dropped: u64,
    pub ul_sdus_dropped: u64,
    pub scheduling_requests: u64,
    /// Handovers executed (the UE detached from one cell towards another).
    pub handovers: u64,
    /// Radio link failures (T310 expiries).
    pub radio_link_failures: u64,
}

/// Counters of one cell.
#[derive(Clone, Debug, Default)]
pub struct CellStats {
    /// PRBs used, summed over TTIs (first transmissions and HARQ retransmissions).
    pub dl_prbs_used: u64,
    pub ul_prbs_used: u64,
    /// Bits of the transport blocks decoded, in each direction.
    pub dl_bits: u64,
    pub ul_bits: u64,
}

/// A snapshot of one UE's queues for the time series.
#[derive(Clone, Copy, Debug, Default)]
pub struct UeQueues {
    /// eNB RLC transmission buffer (new data; with AM also while the window is stalled).
    pub enb_rlc_tx_bytes: u64,
    /// UE RLC transmission and retransmission buffers.
    pub ue_rlc_tx_bytes: u64,
    /// eNB RLC AM retransmission buffer.
    pub enb_rlc_retx_bytes: u64,
    /// SDU bytes the eNB's PDCP transmitter holds (TS 36.323 §5.1.1): with RLC AM every SDU
    /// not yet confirmed delivered by RLC (what lossless handover forwards, §5.2.1.1); with
    /// UM/TM nothing, as PDCP lets an SDU go once RLC has it.
    pub enb_pdcp_held_bytes: u64,
    /// The same for the UE's PDCP transmitter (uplink).
    pub ue_pdcp_held_bytes: u64,
    /// The last DL CQI reported.
    pub cqi: u8,
}


/// One UE as the RAN sees it: its radio link (the channel to every cell), the UE's own stack,
/// the serving eNB's context for it, and the handover and mobility bookkeeping.
struct Ue<P: Copy + std::fmt::Debug> {
    name: String,
    /// The serving cell: the eNB whose context `enb` is.
    cell: usize,
    /// Linear gain (path loss, shadowing, antenna gains) to every cell.
    gain: Vec<f64>,
    fading: Option<FadingChannel>,
    fixed_sinr_db: Option<f64>,
    fixed_mcs: Option<u8>,
    /// Block errors of this UE's transport blocks (both directions).
    rng: SimRng,
    /// The UE's stack (`ue.rs`).
    ue: UeStack<P>,
    /// The serving eNB's context for the UE (`enb.rs`).
    enb: EnbUeContext<P>,
    in_dl: bool,
    in_ul: bool,
    timer_at: Option<SimTime>,
    stats: UeStats,
    position: (f64, f64),
    /// Shadowing towards each cell, dB (drawn at the start).
    shadow_db: Vec<f64>,
    /// Handover in progress.
    ho: Option<HoState>,
    /// Between the handover command and the arrival in the target.
    detached: bool,
    /// Trajectory, measurements, radio link monitoring.
    mob: Option<UeMobility>,
    /// The UE has changed position since the start: its channel is not static, so a CQI report
    /// cannot be reused past its report instant.
    moved: bool,
    /// T310 running since.
    t310_started: Option<SimTime>,
    /// Planned handovers (decision time, target), latest first.
    ho_plan: Vec<(SimTime, usize)>,
}

struct InFlight {
    ue: u32,
    dir: Direction,
    pid: u8,
    decoded: bool,
    sent: SimTime,
    prb_mask: u128,
    mcs: u8,
    /// Transport block size (a DwPTS block has the TBS of N'_PRB, TS 36.213 §7.1.7).
    tb_bits: u32,
    /// Whether this is a block's first transmission (for the outer loop).
    first_tx: bool,
}

/// The radio access network of a run: every cell and UE.
pub struct Ran<P: Copy + std::fmt::Debug> {
    cfg: RanConfig,
    cells: Vec<EnbStack>,
    ues: Vec<Ue<P>>,
    timers: BinaryHeap<Reverse<(SimTime, u32)>>,
    inflight: Vec<InFlight>,
    /// The last TTI processed (its start time).
    last_tti: Option<SimTime>,
    noise_dl_mw: f64,
    noise_ul_mw: f64,
    enb_prb_mw: f64,
    ue_prb_mw: f64,
    // Scratch buffers, reused every TTI.
    sched_in: Vec<SchedUe<'static>>,
    grants: Vec<Grant>,
    delivered_rlc: Vec<PdcpPdu<P>>,
    delivered_pdcp: Vec<P>,
    sinr_buf: Vec<f64>,
    fading_buf: Vec<f32>,
    lost: Vec<PdcpPdu<P>>,
    ho_events: Vec<HandoverEvent>,
    interferer_only: Vec<bool>,
    rlf_records: Vec<RlfRecord>,
    seed: u64,
    /// Planned cell failures (time, cell), latest first.
    cell_failures: Vec<(SimTime, usize)>,
    /// Cells that failed (no longer serve or transmit).
    failed: Vec<bool>,
    /// Declared X2 links: (cell, cell, delay, rate).
    x2_links: Vec<(usize, usize, SimDuration, u64)>,
    /// Every PDU sent on X2-U since the last [`Ran::take_x2_log`], when logging is on
    /// ([`Ran::log_x2`]; for pcap).
    x2_log: Option<Vec<X2Sent<P>>>,
}

fn ceil_tti(t: SimTime) -> SimTime {
    let ms = TTI.as_nanos();
    SimTime::from_nanos(t.as_nanos().div_ceil(ms) * ms)
}

fn subframe(t: SimTime) -> u8 {
    ((t.as_nanos() / TTI.as_nanos()) % 10) as u8
}

fn mask_prbs(mask: u128) -> u16 {
    mask.count_ones() as u16
}

/// MAC subheader bytes for a MAC SDU of `len` bytes (TS 36.321 §6.1.2: R/F2/E/LCID plus a
/// 7-bit or 15-bit length field).
fn mac_subheader(len: u32) -> u32 {
    if len <= 127 {
        2
    } else {
        3
    }
}


impl<P: Copy + std::fmt::Debug> Ran<P> {
    /// Builds the network. `seed` is the run seed: every UE draws its shadowing, fading and
    /// block errors from its own stream, so adding a UE does not change another's randomness.
    pub fn new(cfg: RanConfig, enbs: &[EnbSpec], ues: &[UeSpec], seed: u64) -> Self {
        let r = &cfg.radio;
        let noise_dl_mw = channel::dbm_to_mw(channel::thermal_noise_dbm(channel::PRB_BANDWIDTH_HZ, r.ue_noise_figure_db));
        let noise_ul_mw = channel::dbm_to_mw(channel::thermal_noise_dbm(channel::PRB_BANDWIDTH_HZ, r.enb_noise_figure_db));
        let enb_prb_mw = channel::dbm_to_mw(r.enb_tx_power_dbm) / f64::from(cfg.dl_prbs);
        let ue_prb_mw = channel::dbm_to_mw(r.ue_tx_power_dbm) / f64::from(cfg.ul_prbs);
        let cells = enbs
            .iter()
            .map(|e| EnbStack {
                position: e.position,
                boresight_deg: e.boresight_deg,
                dl_active: Vec::new(),
                ul_active: Vec::new(),
                dl_sched: AnyScheduler::new(cfg.dl_scheduler, cfg.pf),
                ul_sched: AnyScheduler::new(cfg.ul_scheduler, cfg.pf),
                last_dl_mask: 0,
                last_ul_mask: 0,
                last_dl_at: SimTime::ZERO,
                last_ul_at: SimTime::ZERO,
                dl_mask_now: 0,
                ul_mask_now: 0,
                ul_owner_now: vec![0; cfg.ul_prbs as usize],
                last_ul_owner: vec![0; cfg.ul_prbs as usize],
                stats: CellStats::default(),
                ho_algo: AnyHandoverAlgorithm::new(HandoverAlgorithmKind::default()),
            })
            .collect::<Vec<_>>();
        let sr_ms = (cfg.sr_period.as_nanos() / TTI.as_nanos()).max(1);
        let ues = ues
            .iter()
            .enumerate()
            .map(|(i, u)| {
                let mut rng = component_rng(seed, component_id("ue", &u.name));
                let mut shadow_db = Vec::with_capacity(cells.len());
                let gain = cells
                    .iter()
                    .map(|c| {
                        let shadow = if r.shadowing_sigma_db > 0.0 { channel::shadowing_db(r.shadowing_sigma_db, &mut rng) } else { 0.0 };
                        shadow_db.push(shadow);
                        link_gain(r, c.position, c.boresight_deg, u.position, shadow)
                    })
                    .collect();
                let fading = r.fading.map(|p| FadingChannel::new(p, r.doppler_hz, &mut rng));
                let n_dl = cfg.duplex.dl_harq_processes() as usize;
                let n_ul = cfg.duplex.ul_harq_processes();
                Ue {
                    name: u.name.clone(),
                    cell: u.enb,
                    gain,
                    fading,
                    fixed_sinr_db: u.fixed_sinr_db,
                    fixed_mcs: u.fixed_mcs,
                    rng,
                    ue: UeStack::new(&cfg, n_ul, i as u64 % sr_ms),
                    enb: EnbUeContext::new(&cfg, n_dl as u8),
                    in_dl: false,
                    in_ul: false,
                    timer_at: None,
                    stats: UeStats { dl_sinr_db_min: f64::INFINITY, dl_sinr_db_max: f64::NEG_INFINITY, ..UeStats::default() },
                    position: u.position,
                    shadow_db,
                    ho: None,
                    detached: false,
                    mob: None,
                    moved: false,
                    t310_started: None,
                    ho_plan: Vec::new(),
                }
            })
            .collect();
        Ran {
            cfg,
            cells,
            ues,
            timers: BinaryHeap::new(),
            inflight: Vec::new(),
            last_tti: None,
            noise_dl_mw,
            noise_ul_mw,
            enb_prb_mw,
            ue_prb_mw,
            sched_in: Vec::new(),
            grants: Vec::new(),
            delivered_rlc: Vec::new(),
            delivered_pdcp: Vec::new(),
            sinr_buf: Vec::new(),
            fading_buf: Vec::new(),
            lost: Vec::new(),
            ho_events: Vec::new(),
            interferer_only: Vec::new(),
            rlf_records: Vec::new(),
            seed,
            cell_failures: Vec::new(),
            failed: Vec::new(),
            x2_links: Vec::new(),
            x2_log: None,
        }
    }

    /// The configuration the network was built with.
    pub fn config(&self) -> &RanConfig {
        &self.cfg
    }

    /// Number of UEs.
    pub fn n_ues(&self) -> usize {
        self.ues.len()
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.cells.len()
    }

    /// The serving cell of UE `ue`.
    pub fn serving_cell(&self, ue: usize) -> usize {
        self.ues[ue].cell
    }

    /// A downlink IP packet for UE `ue` arrives at its eNB (after GTP-U decapsulation).
    /// Returns the SDU back when the bearer's buffer is full (drop-tail).
    pub fn on_downlink_sdu(&mut self, now: SimTime, ue: usize, sdu: P, bytes: u32) -> Result<(), P> {
        let u = &mut self.ues[ue];
        let pdu = match u.enb.bearer.number(now, sdu, bytes) {
            Ok(p) => p,
            Err(p) => {
                u.stats.dl_sdus_dropped += 1;
                return Err(p);
            }
        };
        if now < u.enb.x2_until {
            // handover: the source forwards it to the target (until the path switch)
            self.forward_late(now, ue, pdu);
            self.refresh(now, ue);
            return Ok(());
        }
        if !u.enb.x2_queue.is_empty() {
            // after the path switch, behind the forwarded data
            self.after_forwarded(now, ue, pdu);
            self.refresh(now, ue);
            return Ok(());
        }
        if let Err(sdu) = u.enb.bearer.submit(now, pdu) {
            u.stats.dl_sdus_dropped += 1;
            return Err(sdu);
        }
        self.refresh(now, ue);
        Ok(())
    }

    /// An uplink IP packet leaves UE `ue`'s IP layer. Returns the SDU back when the UE's
    /// bearer buffer is full.
    pub fn on_uplink_sdu(&mut self, now: SimTime, ue: usize, sdu: P, bytes: u32) -> Result<(), P> {
        let u = &mut self.ues[ue];
        if let Err(sdu) = u.ue.bearer.send(now, sdu, bytes) {
            u.stats.ul_sdus_dropped += 1;
            return Err(sdu);
        }
        self.refresh(now, ue);
        Ok(())
    }

    /// The start of the next TTI at which the network has work, if any.
    pub fn next_tti(&self, now: SimTime) -> Option<SimTime> {
        let busy = !self.inflight.is_empty()
            || self.cells.iter().any(|c| !c.dl_active.is_empty() || !c.ul_active.is_empty());
        let after = match self.last_tti {
            Some(t) => t + TTI,
            None => SimTime::ZERO,
        };
        let earliest = ceil_tti(now).max(after);
        if busy {
            return Some(earliest);
        }
        let failure = self.cell_failures.last().map(|x| x.0);
        let timer = self.timers.peek().map(|Reverse((t, _))| *t);
        [failure, timer].into_iter().flatten().min().map(|t| ceil_tti(t).max(earliest))
    }

    /// Re-evaluates whether UE `ue` needs TTIs (data, HARQ, requests) or a timer.
    fn refresh(&mut self, _now: SimTime, ue: usize) {
        let mob_next = self.mobility_next(ue);
        let u = &mut self.ues[ue];
        if u.detached {
            let t = [u.ho.as_ref().map(|h| h.next_at()), u.enb.x2_queue.front().filter(|_| u.enb.awaiting_status_report.is_none()).map(|x| x.0), mob_next, u.ho_plan.last().map(|x| x.0)].into_iter().flatten().min();
            if let Some(t) = t {
                if u.timer_at.is_none_or(|old| t < old) {
                    u.timer_at = Some(t);
                    self.timers.push(Reverse((t, ue as u32)));
                }
            }
            return;
        }
        let dl_busy = u.enb.bearer.leg.has_buffered() || u.enb.dl_harq.has_pending_retx();
        if dl_busy && !u.in_dl {
            u.in_dl = true;
            self.cells[u.cell].dl_active.push(ue as u32);
        }
        let ul_busy = u.ue.has_ul_pending()
            || u.ue.ul_harq.has_pending_retx()
            || u.ue.sr_bsr.busy();
        if ul_busy && !u.in_ul {
            u.in_ul = true;
            self.cells[u.cell].ul_active.push(ue as u32);
        }
        let deadline = [
            u.enb.bearer.leg.rlc_mut().next_deadline(),
            u.ue.bearer.leg.rlc_mut().next_deadline(),
            u.enb.bearer.pdcp_tx.next_deadline(),
            u.ue.bearer.pdcp_tx.next_deadline(),
            u.ue.bearer.leg.lwa_deadline(),
            u.ho.as_ref().map(|h| h.next_at()),
            u.enb.x2_queue.front().filter(|_| u.enb.awaiting_status_report.is_none()).map(|x| x.0),
            mob_next,
            u.ho_plan.last().map(|x| x.0),
        ]
        .into_iter()
        .flatten()
        .min();
        if let Some(t) = deadline {
            if u.timer_at.is_none_or(|old| t < old) {
                u.timer_at = Some(t);
                self.timers.push(Reverse((t, ue as u32)));
            }
        }
    }

    /// Runs the TTI starting at `now` (a multiple of 1 ms; see [`Ran::next_tti`]).
    pub fn on_tti(&mut self, now: SimTime, out: &mut Vec<RanOutput<P>>) {
        debug_assert_eq!(now.as_nanos() % TTI.as_nanos(), 0, "TTIs start on millisecond boundaries");
        self.last_tti = Some(now);
        self.cell_failures_due(now, out);
        self.fire_timers(now, out);
        self.receive(now, out);
        let sf = subframe(now);
        for c in 0..self.cells.len() {
            self.cells[c].dl_mask_now = 0;
            self.cells[c].ul_mask_now = 0;
        }
        for c in 0..self.cells.len() {
            self.uplink_requests(now, c);
            if self.cfg.duplex.is_dl(sf) {
                self.schedule_dl(now, c, sf);
            }
            // Every PUSCH this subframe's UL grants can address: one (Table 8-2), or with TDD
            // configuration 0 also n + 7 (UL index, TS 36.213 §8.0), without which its uplink
            // subframes 3 and 8 are never granted.
            for &k in self.cfg.duplex.ul_grant_delays(sf) {
                self.schedule_ul(now, c, now + SimDuration::from_millis(u64::from(k)));
            }
        }
        if self.cfg.duplex.is_ul(sf) {
            for c in 0..self.cells.len() {
                self.transmit_ul(now, c);
            }
        }
        // Decoding is drawn once every cell has chosen its PRBs, so interference is known.
        self.draw_decoding(now);
        let multi_cell = self.cells.len() > 1;
        for c in 0..self.cells.len() {
            let cell = &mut self.cells[c];
            if cell.dl_mask_now != 0 {
                cell.last_dl_mask = cell.dl_mask_now;
                cell.last_dl_at = now;
            }
            if cell.ul_mask_now != 0 {
                cell.last_ul_mask = cell.ul_mask_now;
                cell.last_ul_at = now;
                if multi_cell {
                    let (now_o, last_o) = (&cell.ul_owner_now, &mut cell.last_ul_owner);
                    last_o.copy_from_slice(now_o);
                }
            }
            cell.stats.dl_prbs_used += u64::from(mask_prbs(cell.dl_mask_now));
            cell.stats.ul_prbs_used += u64::from(mask_prbs(cell.ul_mask_now));
        }
        self.retire_idle(now);
    }

    fn fire_timers(&mut self, now: SimTime, out: &mut Vec<RanOutput<P>>) {
        while let Some(&Reverse((t, ue))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            let ue = ue as usize;
            if self.ues[ue].timer_at != Some(t) {
                continue;
            }
            self.ues[ue].timer_at = None;
            self.mobility_step(now, ue, out);
            self.handover_step(now, ue, out);
            if self.ues[ue].detached {
                self.refresh(now, ue);
                continue;
            }
            let mut rlc_out = std::mem::take(&mut self.delivered_rlc);
            rlc_out.clear();
            {
                let u = &mut self.ues[ue];
                u.enb.bearer.on_leg_timeout(now, &mut rlc_out, &mut self.delivered_pdcp);
                for sdu in self.delivered_pdcp.drain(..) {
                    out.push(RanOutput::ToEpc { enb: u.cell, ue, sdu });
                }
                u.ue.bearer.on_leg_timeout(now, &mut rlc_out, &mut self.delivered_pdcp);
                for sdu in self.delivered_pdcp.drain(..) {
                    out.push(RanOutput::ToUe { ue, sdu });
                }
                // PDCP discard timers (TS 36.323 §5.4), the eNB's then the UE's.
                let mut dropped = Vec::new();
                for dir in [Direction::Downlink, Direction::Uplink] {
                    let bearer = match dir {
                        Direction::Downlink => &mut u.enb.bearer,
                        Direction::Uplink => &mut u.ue.bearer,
                    };
                    bearer.on_discard_timeout(now, &mut self.lost, &mut dropped);
                    for sdu in dropped.drain(..) {
                        match dir {
                            Direction::Downlink => u.stats.dl_sdus_dropped += 1,
                            Direction::Uplink => u.stats.ul_sdus_dropped += 1,
                        }
                        out.push(RanOutput::Dropped { ue, dir, sdu });
                    }
                }
                Self::collect_lost(u, ue, out);
            }
            self.delivered_rlc = rlc_out;
            self.refresh(now, ue);
        }
    }

    /// SDUs the receiving RLC gave up on (UM reassembly failures) are reported as dropped.
    fn collect_lost(u: &mut Ue<P>, ue: usize, out: &mut Vec<RanOutput<P>>) {
        let mut lost = Vec::new();
        u.ue.bearer.leg.rlc_mut().take_lost(&mut lost);
        for p in lost.drain(..) {
            out.push(RanOutput::Dropped { ue, dir: Direction::Downlink, sdu: p.sdu });
        }
        u.enb.bearer.leg.rlc_mut().take_lost(&mut lost);
        for p in lost.drain(..) {
            out.push(RanOutput::Dropped { ue, dir: Direction::Uplink, sdu: p.sdu });
        }
        // PDCP receivers: SDUs that arrived after their COUNT was passed over (an uplink SDU
        // resent in the target behind newer ones, say), never delivered
        let mut gone = Vec::new();
        u.ue.bearer.pdcp_rx.take_discarded(&mut gone);
        out.extend(gone.drain(..).map(|sdu| RanOutput::Dropped { ue, dir: Direction::Downlink, sdu }));
        u.enb.bearer.pdcp_rx.take_discarded(&mut gone);
        out.extend(gone.drain(..).map(|sdu| RanOutput::Dropped { ue, dir: Direction::Uplink, sdu }));
        if let LowerLeg::LwaUe(_, rx) = &mut u.ue.bearer.leg {
            // duplicates and PDUs that came after t-Reordering gave up on them
            let mut gone = Vec::new();
            rx.take_discarded(&mut gone);
            for sdu in gone {
                out.push(RanOutput::Dropped { ue, dir: Direction::Downlink, sdu });
            }
        }
    }

    /// Handles the transport blocks sent in the previous TTI.
    fn receive(&mut self, now: SimTime, out: &mut Vec<RanOutput<P>>) {
        let inflight = std::mem::take(&mut self.inflight);
        for f in &inflight {
            let ue = f.ue as usize;
            let next_tx_at = HarqTiming::new(self.cfg.duplex).next_tx_at(f.sent, f.dir);
            let u = &mut self.ues[ue];
            let harq = match f.dir {
                Direction::Downlink => &mut u.enb.dl_harq,
                Direction::Uplink => &mut u.ue.ul_harq,
            };
            if !f.decoded {
                match f.dir {
                    Direction::Downlink => u.stats.dl_tb_errors += 1,
                    Direction::Uplink => u.stats.ul_tb_errors += 1,
                }
            }
            if f.first_tx && !f.decoded {
                match f.dir {
                    Direction::Downlink => u.stats.dl_tb_first_errors += 1,
                    Direction::Uplink => u.stats.ul_tb_first_errors += 1,
                }
            }
            if f.first_tx && (if f.dir == Direction::Uplink { self.cfg.ul_olla } else { self.cfg.dl_olla }) {
                let step = if f.decoded { -OLLA_STEP_UP_DB * OLLA_BLER_TARGET / (1.0 - OLLA_BLER_TARGET) } else { OLLA_STEP_UP_DB };
                let offset = if f.dir == Direction::Uplink { &mut u.enb.ul_olla_db } else { &mut u.enb.dl_olla_db };
                *offset = (*offset + step).clamp(0.0, OLLA_MAX_DB);
            }
            match harq.on_feedback(f.pid, f.decoded, next_tx_at) {
                // The process holds the block; the downlink scheduler or the synchronous uplink
                // retransmission picks it up when due.
                HarqOutcome::Retransmit => {}
                HarqOutcome::Failed(tb) => {
                    let dir = f.dir;
                    // The block is lost. RLC AM recovers it by ARQ; UM reports the SDUs it
                    // saw part of when reassembly gives up (TS 36.322 §5.1.2.2.3); SDUs that
                    // were wholly inside this block are reported here, as the receiver never
                    // learns of them.
                    if !matches!(self.cfg.rlc, RlcConfig::Am(_)) {
                        for pdu in &tb.pdus {
                            if let RlcPdu::Data(d) = pdu {
                                for seg in d.segments.iter().filter(|g| g.offset == 0 && g.len == g.sdu_bytes) {
                                    out.push(RanOutput::Dropped { ue, dir, sdu: seg.sdu.sdu });
                                }
                            }
                        }
                    }
                    match dir {
                        Direction::Downlink => u.stats.dl_tb_failed += 1,
                        Direction::Uplink => u.stats.ul_tb_failed += 1,
                    }
                    if let Some(r) = tb.status_report {
                        u.ue.status_report_pending.get_or_insert(r);
                    }
                }
                HarqOutcome::Delivered(tb) => {
                    let dir = f.dir;
                    // The receiving end's bearer: its PDCP delivers in order, and the STATUS
                    // PDUs in the block release what that end had sent (TS 36.323 §5.4).
                    let bearer = match dir {
                        Direction::Downlink => &mut u.ue.bearer,
                        Direction::Uplink => &mut u.enb.bearer,
                    };
                    let mut rlc_out = std::mem::take(&mut self.delivered_rlc);
                    bearer.on_rx(now, tb.pdus, &mut rlc_out, &mut self.delivered_pdcp);
                    self.delivered_rlc = rlc_out;
                    if let Some((report, _)) = tb.status_report {
                        self.on_status_report(now, ue, &report, out);
                    }
                    let u = &mut self.ues[ue];
                    if dir == Direction::Downlink && u.ue.reorder_until.is_some() {
                        let mut d = std::mem::take(&mut self.delivered_pdcp);
                        self.end_reordering_if_done(ue, &mut d);
                        self.delivered_pdcp = d;
                    }
                    let u = &mut self.ues[ue];
                    if dir == Direction::Uplink && u.enb.ul_reorder_until.is_some() {
                        let mut d = std::mem::take(&mut self.delivered_pdcp);
                        self.end_ul_reordering_if_done(ue, &mut d);
                        self.delivered_pdcp = d;
                    }
                    let u = &mut self.ues[ue];
                    for sdu in self.delivered_pdcp.drain(..) {
                        out.push(match dir {
                            Direction::Downlink => RanOutput::ToUe { ue, sdu },
                            Direction::Uplink => RanOutput::ToEpc { enb: u.cell, ue, sdu },
                        });
                    }
                    Self::collect_lost(u, ue, out);
                    if dir == Direction::Downlink {
                        Self::lwa_feedback(u, now);
                    }
                }
            }
            self.refresh(now, ue);
        }
        let mut v = inflight;
        v.clear();
        if self.inflight.is_empty() {
            self.inflight = v;
        }
    }

    /// The CQI report in force at `now` for UE `ue` (taken at the last report instant at or
    /// before `now − cqi_delay`, TS 36.213 §7.2.2), computed lazily.
    fn cqi(&mut self, now: SimTime, ue: usize, dir: Direction) -> (u8, f64) {
        let report = cqi::report_instant(now, self.cfg.cqi_period, self.cfg.cqi_delay);
        let u = &self.ues[ue];
        let cached = match dir {
            Direction::Downlink => u.enb.dl_cqi,
            Direction::Uplink => u.enb.ul_cqi,
        };
        // One cell, no fading and a UE that stays put: every report is the same, compute it once.
        let static_channel = u.fading.is_none() && self.cells.len() == 1 && !u.moved;
        if cached.at_ns == report || (static_channel && cached.is_some()) {
            return (cached.cqi, cached.eff_sinr_db);
        }
        let n = match dir {
            Direction::Downlink => self.cfg.dl_prbs,
            Direction::Uplink => self.cfg.ul_prbs,
        };
        let all = if n >= 128 { u128::MAX } else { (1u128 << n) - 1 };
        let fading = self.sinr_per_prb(SimTime::from_nanos(report), ue, dir, all, true);
        let (cqi, eff) = cqi::wideband(&self.sinr_buf, fading, self.cfg.cfi, dir);
        let r = CqiReport { at_ns: report, cqi, eff_sinr_db: eff };
        let u = &mut self.ues[ue];
        match dir {
            Direction::Downlink => u.enb.dl_cqi = r,
            Direction::Uplink => u.enb.ul_cqi = r,
        }
        (cqi, eff)
    }

    /// Fills `self.sinr_buf` with the linear SINR of each PRB in `mask` for UE `ue` at `t`.
    /// `for_report` uses the interferers' latest activity instead of this TTI's. Returns
    /// whether the PRBs may differ (frequency-selective fading).
    fn sinr_per_prb(&mut self, t: SimTime, ue: usize, dir: Direction, mask: u128, for_report: bool) -> bool {
        self.sinr_buf.clear();
        let u = &self.ues[ue];
        if let Some(db) = u.fixed_sinr_db {
            let s = channel::db_to_linear(db);
            for _ in 0..mask.count_ones() {
                self.sinr_buf.push(s);
            }
            return false;
        }
        let n_prb = match dir {
            Direction::Downlink => self.cfg.dl_prbs,
            Direction::Uplink => self.cfg.ul_prbs,
        };
        let fading = if let Some(f) = &u.fading {
            self.fading_buf.resize(n_prb as usize, 1.0);
            f.prb_gains(t.as_secs_f64(), n_prb, &mut self.fading_buf);
            true
        } else {
            false
        };
        let (p_prb, noise) = match dir {
            Direction::Downlink => (self.enb_prb_mw, self.noise_dl_mw),
            Direction::Uplink => (self.ue_prb_mw, self.noise_ul_mw),
        };
        let signal = p_prb * u.gain[u.cell];
        let memory = self.cfg.cqi_period.max(TTI);
        let mut m = mask;
        while m != 0 {
            let prb = m.trailing_zeros();
            m &= m - 1;
            let bit = 1u128 << prb;
            let mut interference = 0.0;
            for (c, cell) in self.cells.iter().enumerate() {
                if c == u.cell {
                    continue;
                }
                let used = match (dir, for_report) {
                    (Direction::Downlink, false) => cell.dl_mask_now,
                    (Direction::Downlink, true) => cell.recent_dl_mask(t, memory),
                    (Direction::Uplink, false) => cell.ul_mask_now,
                    (Direction::Uplink, true) => cell.recent_ul_mask(t, memory),
                };
                if used & bit != 0 {
                    interference += p_prb
                        * match dir {
                            // the other eNB's power reaching this UE
                            Direction::Downlink => u.gain[c],
                            // the power of the other cell's UE sending on this PRB, reaching
                            // this UE's eNB
                            Direction::Uplink => {
                                let owners = if for_report { &cell.last_ul_owner } else { &cell.ul_owner_now };
                                self.ues[owners[prb as usize] as usize].gain[u.cell]
                            }
                        };
                }
            }
            let f = if fading { f64::from(self.fading_buf[prb as usize]) } else { 1.0 };
            self.sinr_buf.push(signal * f / (noise + interference));
        }
        fading
    }

    /// The SINR of a block when it is the same on all its PRBs (fixed SINR, or no fading and no
    /// other cell transmitting on them): the effective SINR is then that value, and the
    /// per-PRB evaluation is skipped.
    fn flat_sinr_db(&self, ue: usize, dir: Direction, mask: u128) -> Option<f64> {
        let u = &self.ues[ue];
        if let Some(db) = u.fixed_sinr_db {
            return Some(db);
        }
        if u.fading.is_some() {
            return None;
        }
        let interfered = self.cells.iter().enumerate().any(|(c, cell)| {
            c != u.cell
                && match dir {
                    Direction::Downlink => cell.dl_mask_now & mask != 0,
                    Direction::Uplink => cell.ul_mask_now & mask != 0,
                }
        });
        if interfered {
            return None;
        }
        let (p_prb, noise) = match dir {
            Direction::Downlink => (self.enb_prb_mw, self.noise_dl_mw),
            Direction::Uplink => (self.ue_prb_mw, self.noise_ul_mw),
        };
        Some(channel::linear_to_db(p_prb * u.gain[u.cell] / noise))
    }

    /// (CQI-like priority for the scheduler, 0 = do not schedule; MCS).
    fn mcs_for(&mut self, now: SimTime, ue: usize, dir: Direction) -> (u8, u8) {
        let (mut cqi, eff) = self.cqi(now, ue, dir);
        let olla = self.ues[ue].enb.ul_olla_db;
        if dir == Direction::Uplink && olla > 0.0 {
            cqi = amc::ul_mcs_for_sinr_db(eff - olla).map_or(0, |m| m + 1);
        }
        let dl_olla = self.ues[ue].enb.dl_olla_db;
        if dir == Direction::Downlink && dl_olla > 0.0 && cqi > 0 {
            // The eNB knows the CQI, not the SINR behind it: take the SINR that CQI's MCS needs
            // for the BLER target (its threshold), back it off by the offset, and report the
            // CQI that SINR would have given. Never above the reported CQI.
            let cfi = self.cfg.cfi;
            let est = amc::sinr_db_for_mcs(amc::mcs_from_cqi(cqi), cfi) - dl_olla;
            cqi = amc::cqi_from_sinr_db(est, cfi).min(cqi);
        }
        let (cqi, mcs) = match dir {
            Direction::Downlink => (cqi, if cqi == 0 { 0 } else { amc::mcs_from_cqi(cqi) }),
            // The schedulers rank by a CQI in 1..=15: map the uplink MCS onto that scale.
            Direction::Uplink => (if cqi == 0 { 0 } else { 1 + (cqi - 1) / 2 }, cqi.saturating_sub(1)),
        };
        match self.ues[ue].fixed_mcs {
            Some(m) => (cqi.max(1), m),
            None => (cqi, mcs),
        }
    }

    fn schedule_dl(&mut self, now: SimTime, c: usize, sf: u8) {
        if self.cells[c].dl_active.is_empty() {
            return;
        }
        let n_prb = self.cfg.dl_prbs;
        let rbg = crate::mac::rbg_size_for(n_prb);
        let n_rbg = crate::mac::n_rbg(n_prb, rbg);
        let mut free: u128 = (1u128 << n_rbg) - 1;
        let usable = self.cfg.duplex.dl_prbs_usable(sf, n_prb);
        if usable == 0 {
            return;
        }
        let active = std::mem::take(&mut self.cells[c].dl_active);
        // 1. HARQ retransmissions first, on the same number of PRBs (TS 36.321 §5.3.2.1).
        for &ue in &active {
            let ue = ue as usize;
            for pid in 0..self.ues[ue].enb.dl_harq.n_processes() {
                let p = self.ues[ue].enb.dl_harq.process(pid);
                if p.retx_at() > now {
                    continue;
                }
                let need = mask_prbs(p.prb_mask());
                let need_rbg = need.div_ceil(rbg);
                if (free.count_ones() as u16) < need_rbg {
                    break;
                }
                let mut prb_mask = 0u128;
                for _ in 0..need_rbg {
                    let b = free.trailing_zeros();
                    prb_mask |= rbg_prb_mask(b as u16, rbg, n_prb);
                    free &= !(1u128 << b);
                }
                self.cells[c].dl_mask_now |= prb_mask;
                self.start_retx(now, ue, Direction::Downlink, pid, prb_mask);
            }
        }
        // 2. New data for the UEs with a free HARQ process.
        self.sched_in.clear();
        for &ue in &active {
            let ue = ue as usize;
            let leg = &self.ues[ue].enb.bearer.leg;
            if !leg.has_buffered() || self.ues[ue].enb.dl_harq.free_process(now).is_none() {
                continue;
            }
            let bytes = leg.buffered_bytes();
            let (cqi, mcs) = self.mcs_for(now, ue, Direction::Downlink);
            if cqi == 0 {
                continue;
            }
            self.sched_in.push(SchedUe { ue: ue as u32, cqi, mcs, rbg_cqi: None, bytes_pending: bytes + 3 });
        }
        self.grants.clear();
        if !self.sched_in.is_empty() && free != 0 {
            // In a special subframe the TBS is that of N'_PRB (TS 36.213 §7.1.7: 0.75·N_PRB, or
            // 0.375·N_PRB for the 6-symbol DwPTS of special configuration 9).
            let duplex = self.cfg.duplex;
            let special = usable != n_prb;
            let tbs_fn = move |mcs: u8, n: u16| {
                let n = if special { duplex.dl_prbs_usable(sf, n).max(1) } else { n };
                tbs::tb_bits(Direction::Downlink, mcs, n)
            };
            let mut grants = std::mem::take(&mut self.grants);
            self.cells[c].dl_sched.schedule(now, Direction::Downlink, n_prb, rbg, free, &self.sched_in, &tbs_fn, &mut grants);
            for g in &grants {
                self.cells[c].dl_mask_now |= g.prb_mask;
                self.transmit_new(now, g.ue as usize, Direction::Downlink, g);
                let bits = g.tb_bits;
                self.cells[c].dl_sched.on_served(now, g.ue, bits);
            }
            self.grants = grants;
        }
        self.cells[c].dl_active = active;
    }

    /// Fills a new transport block for `g` from the sender's RLC entity and starts HARQ.
    fn transmit_new(&mut self, now: SimTime, ue: usize, dir: Direction, g: &Grant) {
        let u = &mut self.ues[ue];
        let harq = match dir {
            Direction::Downlink => &u.enb.dl_harq,
            Direction::Uplink => &u.ue.ul_harq,
        };
        let Some(pid) = harq.free_process(now) else { return };
        let mut room = g.tb_bits / 8;
        if dir == Direction::Uplink {
            room = room.saturating_sub(BSR_BYTES);
        }
        let mut tb: Tb<P> = Tb { pdus: Vec::new(), status_report: None };
        if dir == Direction::Uplink && u.ue.status_report_pending.as_ref().is_some_and(|r| r.1 + mac_subheader(r.1) <= room) {
            // The status report is the first PDCP PDU after re-establishment (TS 36.323 §5.3.1).
            let r = u.ue.status_report_pending.take().expect("checked");
            room -= r.1 + mac_subheader(r.1);
            tb.status_report = Some(r);
        }
        let rlc = match dir {
            Direction::Downlink => u.enb.bearer.leg.rlc_mut(),
            Direction::Uplink => u.ue.bearer.leg.rlc_mut(),
        };
        while room > 3 {
            let Some(pdu) = rlc.on_tx_opportunity(now, room - 3) else { break };
            let b = pdu.bytes();
            room = room.saturating_sub(b + mac_subheader(b));
            tb.pdus.push(pdu);
        }
        match dir {
            Direction::Downlink => {
                u.stats.dl_prbs += u64::from(g.n_prb);
                u.stats.dl_ttis += 1;
                u.stats.dl_mcs_hist[g.mcs.min(28) as usize] += 1;
                u.stats.dl_cqi_hist[u.enb.dl_cqi.cqi.min(15) as usize] += 1;
                u.stats.dl_tb_tx += 1;
            }
            Direction::Uplink => {
                u.stats.ul_prbs += u64::from(g.n_prb);
                u.stats.ul_ttis += 1;
                u.stats.ul_mcs_hist[g.mcs.min(28) as usize] += 1;
                u.stats.ul_tb_tx += 1;
                // The BSR in this block reports what is left after it (TS 36.321 §5.4.5).
                let bsr = u.ue.sr_bsr.bsr(u.ue.ul_pending_bytes());
                u.enb.bsr.on_bsr(bsr);
            }
        }
        let harq = match dir {
            Direction::Downlink => &mut u.enb.dl_harq,
            Direction::Uplink => &mut u.ue.ul_harq,
        };
        harq.start(pid, now, tb, mask_prbs(g.prb_mask), g.mcs, g.prb_mask, g.tb_bits);
        // Its decoding is drawn in `draw_decoding`, once every cell's PRBs (and so the
        // interference) are known.
        self.inflight.push(InFlight { ue: ue as u32, dir, pid, decoded: false, sent: now, prb_mask: g.prb_mask, mcs: g.mcs, tb_bits: g.tb_bits, first_tx: true });
    }

    fn start_retx(&mut self, now: SimTime, ue: usize, dir: Direction, pid: u8, prb_mask: u128) {
        let u = &mut self.ues[ue];
        let harq = match dir {
            Direction::Downlink => {
                u.stats.dl_tb_retx += 1;
                &mut u.enb.dl_harq
            }
            Direction::Uplink => {
                u.stats.ul_tb_retx += 1;
                &mut u.ue.ul_harq
            }
        };
        harq.begin_retx(pid, now, prb_mask);
        let p = harq.process(pid);
        let (mcs, tb_bits) = (p.mcs(), p.tb_bits());
        self.inflight.push(InFlight { ue: ue as u32, dir, pid, decoded: false, sent: now, prb_mask, mcs, tb_bits, first_tx: false });
    }

    /// Draws the decoding of every block sent in this TTI from its effective SINR.
    fn draw_decoding(&mut self, now: SimTime) {
        let mut inflight = std::mem::take(&mut self.inflight);
        for f in inflight.iter_mut().filter(|f| f.sent == now) {
            let ue = f.ue as usize;
            let (mask, mcs, first) = (f.prb_mask, f.mcs, f.first_tx);
            let eff = match self.flat_sinr_db(ue, f.dir, mask) {
                Some(db) => db,
                None => {
                    self.sinr_per_prb(now, ue, f.dir, mask, false);
                    amc::effective_sinr_db(&self.sinr_buf, mcs)
                }
            };
            let u = &mut self.ues[ue];
            let harq = match f.dir {
                Direction::Downlink => &mut u.enb.dl_harq,
                Direction::Uplink => &mut u.ue.ul_harq,
            };
            let combined = harq.combine(f.pid, eff);
            let p = match f.dir {
                Direction::Downlink => amc::bler(mcs, combined, self.cfg.cfi),
                Direction::Uplink => amc::ul_bler(mcs, combined),
            };
            f.decoded = u.rng.gen::<f64>() >= p;
            if first {
                match f.dir {
                    Direction::Downlink => {
                        let s = &mut u.stats;
                        s.dl_sinr_db_sum += eff;
                        s.dl_sinr_db_n += 1;
                        s.dl_sinr_db_min = s.dl_sinr_db_min.min(eff);
                        s.dl_sinr_db_max = s.dl_sinr_db_max.max(eff);
                    }
                    Direction::Uplink => {
                        u.stats.ul_sinr_db_sum += eff;
                        u.stats.ul_sinr_db_n += 1;
                    }
                }
            }
            let bits = u64::from(f.tb_bits);
            if f.decoded {
                let cell = &mut self.cells[u.cell].stats;
                match f.dir {
                    Direction::Downlink => {
                        u.stats.dl_bits += bits;
                        cell.dl_bits += bits;
                    }
                    Direction::Uplink => {
                        u.stats.ul_bits += bits;
                        cell.ul_bits += bits;
                    }
                }
            }
        }
        self.inflight = inflight;
    }

    /// Scheduling requests (`mac/sr_bsr.rs`): a UE with uplink data it has not asked for sends
    /// one at its next SR opportunity; the eNB hears it in the same subframe.
    fn uplink_requests(&mut self, now: SimTime, c: usize) {
        for i in 0..self.cells[c].ul_active.len() {
            let ue = self.cells[c].ul_active[i] as usize;
            let u = &mut self.ues[ue];
            if u.ue.sr_bsr.on_tti(now, u.ue.ul_pending_bytes()) {
                u.enb.bsr.on_sr();
                u.stats.scheduling_requests += 1;
            }
        }
    }

    /// Decides the uplink grants for the PUSCH of TTI `pusch`.
    fn schedule_ul(&mut self, now: SimTime, c: usize, pusch: SimTime) {
        if self.cells[c].ul_active.is_empty() {
            return;
        }
        let n_prb = self.cfg.ul_prbs;
        let mut free: u128 = if n_prb >= 128 { u128::MAX } else { (1u128 << n_prb) - 1 };
        // Synchronous HARQ retransmissions due at that PUSCH keep their PRBs.
        for &ue in &self.cells[c].ul_active {
            let harq = &self.ues[ue as usize].ue.ul_harq;
            for pid in harq.pending_retx() {
                let p = harq.process(pid);
                if p.retx_at() == pusch {
                    free &= !p.prb_mask();
                }
            }
        }
        // Grants already given for that PUSCH keep their PRBs (none in FDD; in TDD
        // configuration 0 two DL subframes may grant the same PUSCH).
        for &ue in &self.cells[c].ul_active {
            for g in self.ues[ue as usize].enb.bsr.granted() {
                if g.at == pusch {
                    free &= !g.grant.prb_mask;
                }
            }
        }
        self.sched_in.clear();
        let active = std::mem::take(&mut self.cells[c].ul_active);
        for &ue in &active {
            let u = &self.ues[ue as usize];
            if u.enb.bsr.bytes() == 0 || u.ue.ul_harq.free_process(pusch).is_none() {
                continue;
            }
            let (cqi, mcs) = self.mcs_for(now, ue as usize, Direction::Uplink);
            if cqi == 0 {
                continue;
            }
            let bytes = self.ues[ue as usize].enb.bsr.bytes() + BSR_BYTES + 3;
            self.sched_in.push(SchedUe { ue, cqi, mcs, rbg_cqi: None, bytes_pending: bytes });
        }
        if !self.sched_in.is_empty() && free != 0 {
            let mut grants = std::mem::take(&mut self.grants);
            grants.clear();
            let tbs_fn = |mcs: u8, n: u16| tbs::tb_bits(Direction::Uplink, mcs, n);
            self.cells[c].ul_sched.schedule(now, Direction::Uplink, n_prb, 1, free, &self.sched_in, &tbs_fn, &mut grants);
            for g in &grants {
                let u = &mut self.ues[g.ue as usize];
                // DCI 0 on this subframe's PDCCH: the eNB records it, the UE receives it.
                let ug = UlGrant { at: pusch, grant: *g };
                u.enb.bsr.on_grant(ug);
                u.ue.sr_bsr.on_grant(ug);
                self.cells[c].ul_sched.on_served(now, g.ue, g.tb_bits);
            }
            self.grants = grants;
        }
        self.cells[c].ul_active = active;
    }

    /// Records that UE `ue` of cell `c` sends on the UL PRBs of `mask` in this TTI.
    fn mark_ul(&mut self, c: usize, ue: usize, mask: u128) {
        let multi_cell = self.cells.len() > 1;
        let cell = &mut self.cells[c];
        cell.ul_mask_now |= mask;
        if multi_cell {
            let mut m = mask;
            while m != 0 {
                cell.ul_owner_now[m.trailing_zeros() as usize] = ue as u32;
                m &= m - 1;
            }
        }
    }

    /// The PUSCH of this TTI: new blocks for the grants due now, and HARQ retransmissions.
    fn transmit_ul(&mut self, now: SimTime, c: usize) {
        let active = std::mem::take(&mut self.cells[c].ul_active);
        for &ue in &active {
            let ue = ue as usize;
            while let Some(pid) = self.ues[ue].ue.ul_harq.next_due_retx(now) {
                let mask = self.ues[ue].ue.ul_harq.process(pid).prb_mask();
                self.mark_ul(c, ue, mask);
                self.start_retx(now, ue, Direction::Uplink, pid, mask);
            }
            while let Some(g) = self.ues[ue].ue.sr_bsr.take_due_grant(now) {
                self.ues[ue].enb.bsr.on_pusch(now);
                self.mark_ul(c, ue, g.prb_mask);
                self.transmit_new(now, ue, Direction::Uplink, &g);
            }
        }
        self.cells[c].ul_active = active;
    }

    /// Drops UEs with nothing left to do from the active lists.
    fn retire_idle(&mut self, now: SimTime) {
        for c in 0..self.cells.len() {
            let in_flight = &self.inflight;
            let mut dl = std::mem::take(&mut self.cells[c].dl_active);
            dl.retain(|&ue| {
                let u = &mut self.ues[ue as usize];
                let keep = u.enb.bearer.leg.has_buffered()
                    || u.enb.dl_harq.has_pending_retx()
                    || in_flight.iter().any(|f| f.ue == ue);
                u.in_dl = keep;
                keep
            });
            self.cells[c].dl_active = dl;
            let mut ul = std::mem::take(&mut self.cells[c].ul_active);
            ul.retain(|&ue| {
                let u = &mut self.ues[ue as usize];
                let keep = u.ue.has_ul_pending()
                    || u.ue.ul_harq.has_pending_retx()
                    || u.ue.sr_bsr.busy()
                    || in_flight.iter().any(|f| f.ue == ue);
                u.in_ul = keep;
                keep
            });
            self.cells[c].ul_active = ul;
        }
        let _ = now;
    }

    /// Makes UE `ue`'s bearer a split LWA bearer (TS 36.300 §22A.1): the eNB steers its
    /// downlink PDUs to RLC or to the WLAN leg, the UE reorders across both. Call before traffic.
    pub fn enable_lwa(&mut self, ue: usize, cfg: LwaConfig) {
        let u = &mut self.ues[ue];
        let take = |leg: &mut LowerLeg<P>| std::mem::replace(leg.rlc_mut(), RlcEntity::new(&self.cfg.rlc));
        let rlc = take(&mut u.enb.bearer.leg);
        u.enb.bearer.leg = LowerLeg::LwaEnb(rlc, Box::new(LwaTx::new(cfg)));
        let rlc = take(&mut u.ue.bearer.leg);
        u.ue.bearer.leg = LowerLeg::LwaUe(rlc, Box::new(LwaRx::new(cfg.t_reordering_fixed.unwrap_or(cfg.t_reordering_initial))));
    }

    /// The downlink PDUs UE `ue`'s eNB steered to the WLAN leg since the last call (to be
    /// carried in LWAAP over Xw and the BSS, then handed to [`Ran::on_wlan_pdu`]).
    pub fn take_wlan(&mut self, ue: usize, out: &mut Vec<PdcpPdu<P>>) {
        if let LowerLeg::LwaEnb(_, tx) = &mut self.ues[ue].enb.bearer.leg {
            tx.take_wlan(out);
        }
    }

    /// A downlink PDU reached UE `ue` over the WLAN leg: into PDCP's reordering; SDUs it lets go
    /// up are `RanOutput::ToUe`.
    pub fn on_wlan_pdu(&mut self, now: SimTime, ue: usize, pdu: PdcpPdu<P>, out: &mut Vec<RanOutput<P>>) {
        let u = &mut self.ues[ue];
        let LowerLeg::LwaUe(_, rx) = &mut u.ue.bearer.leg else {
            out.push(RanOutput::Dropped { ue, dir: Direction::Downlink, sdu: pdu.sdu });
            return;
        };
        rx.on_pdu(now, LwaLeg::Wlan, pdu, &mut self.delivered_pdcp);
        for sdu in self.delivered_pdcp.drain(..) {
            out.push(RanOutput::ToUe { ue, sdu });
        }
        Self::collect_lost(u, ue, out);
        Self::lwa_feedback(u, now);
        self.refresh(now, ue);
    }

    /// The UE's arrivals go to the eNB's LRTT and loss estimates (the probe responses, paper
    /// §3.2), and t-Reordering follows 2·max(SLRTT).
    fn lwa_feedback(u: &mut Ue<P>, now: SimTime) {
        if let (LowerLeg::LwaUe(_, rx), LowerLeg::LwaEnb(_, tx)) = (&mut u.ue.bearer.leg, &mut u.enb.bearer.leg) {
            for (leg, count) in rx.drain_feedback() {
                tx.on_arrival(now, leg, count);
            }
            rx.set_t_reordering(tx.t_reordering());
        }
    }

    /// UE `ue`'s split-bearer counters: the eNB's steering and legs, the UE's reordering.
    pub fn lwa_stats(&self, ue: usize) -> Option<(LwaTxStats, ReorderStats, SimDuration)> {
        let u = &self.ues[ue];
        match (&u.enb.bearer.leg, &u.ue.bearer.leg) {
            (LowerLeg::LwaEnb(_, tx), LowerLeg::LwaUe(_, rx)) => Some((*tx.stats(), *rx.stats(), rx.t_reordering())),
            _ => None,
        }
    }

    /// Counters of UE `ue`.
    pub fn ue_stats(&self, ue: usize) -> &UeStats {
        &self.ues[ue].stats
    }

    /// RLC counters of UE `ue`: (eNB entity, UE entity).
    pub fn rlc_stats(&self, ue: usize) -> (crate::rlc::RlcStats, crate::rlc::RlcStats) {
        (self.ues[ue].enb.bearer.leg.rlc().stats(), self.ues[ue].ue.bearer.leg.rlc().stats())
    }

    /// Counters of cell `c`.
    pub fn cell_stats(&self, c: usize) -> &CellStats {
        &self.cells[c].stats
    }

    /// Where cell `c`'s antenna is (metres) and its sector boresight (degrees counter-clockwise
    /// from +x; `None`: omnidirectional), for maps of the run.
    pub fn cell_site(&self, c: usize) -> ((f64, f64), Option<f64>) {
        (self.cells[c].position, self.cells[c].boresight_deg)
    }

    /// Queue occupancy of UE `ue` now.
    pub fn ue_queues(&self, ue: usize) -> UeQueues {
        let u = &self.ues[ue];
        let e = u.enb.bearer.leg.rlc().buffer_status();
        UeQueues {
            enb_rlc_tx_bytes: u64::from(u.enb.bearer.leg.rlc().queued_bytes()),
            enb_rlc_retx_bytes: u64::from(e.retx_bytes),
            ue_rlc_tx_bytes: u64::from(u.ue.bearer.leg.rlc().queued_bytes() + u.ue.bearer.leg.rlc().buffer_status().retx_bytes),
            enb_pdcp_held_bytes: u.enb.bearer.pdcp_tx.held_bytes(),
            ue_pdcp_held_bytes: u.ue.bearer.pdcp_tx.held_bytes(),
            cqi: u.enb.dl_cqi.cqi,
        }
    }

    /// Whether an RLC AM entity of UE `ue` reached maxRetxThreshold (TS 36.322 §5.2.1: radio
    /// link failure is indicated to RRC).
    pub fn radio_link_failure(&self, ue: usize) -> bool {
        self.ues[ue].enb.bearer.leg.rlc().radio_link_failure() || self.ues[ue].ue.bearer.leg.rlc().radio_link_failure()
    }

    /// The name of UE `ue`.
    pub fn ue_name(&self, ue: usize) -> &str {
        &self.ues[ue].name
    }
}

/// Median downlink SINR (dB, no shadowing or fading, no interference) of a UE at `pos` served
/// by `enb`: used to refuse scenarios with UEs out of every cell's range.
pub fn median_sinr_db(cfg: &RanConfig, enb: &EnbSpec, pos: (f64, f64)) -> f64 {
    let r = &cfg.radio;
    let g_db = channel::linear_to_db(link_gain(r, enb.position, enb.boresight_deg, pos, 0.0));
    let rx = r.enb_tx_power_dbm - 10.0 * f64::from(cfg.dl_prbs).log10() + g_db;
    rx - channel::thermal_noise_dbm(channel::PRB_BANDWIDTH_HZ, r.ue_noise_figure_db)
}
