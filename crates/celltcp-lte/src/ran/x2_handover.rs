//! X2 handover of a UE between two cells (3GPP TS 36.300 §10.1.2.1, intra-MME/S-GW handover),
//! with PDCP seamless or lossless data forwarding (TS 36.323 §5.2).
//!
//! The procedure, as timed here (`t0`: the source decides, e.g. on an A3 measurement report):
//!
//! | step (TS 36.300 Figure 10.1.2.1.1-1) | when |
//! |---|---|
//! | 4–6: HANDOVER REQUEST over X2, admission, HANDOVER REQUEST ACKNOWLEDGE | `t0` → `t0 + 2·x2_delay` |
//! | 7: RRC Connection Reconfiguration (the handover command); the UE detaches, MAC is reset and RLC re-established (TS 36.322 §5.4) | `t_detach = t0 + 2·x2_delay` |
//! | 8: SN STATUS TRANSFER; data forwarding over X2-U starts | `t_detach` (forwarded SDUs arrive `x2_delay` + serialisation at `x2_rate` later) |
//! | 9–11: synchronisation and random access in the target cell, RRC Connection Reconfiguration Complete | `t_attach = t_detach + interruption` |
//! | 12–16: PATH SWITCH REQUEST, bearer modification at the S-GW, end marker | `t_switch = t_attach + path_switch_delay` |
//! | 17–18: UE CONTEXT RELEASE at the source | after `t_switch` |
//!
//! Between `t_detach` and `t_switch` every new downlink SDU still reaches the source, which
//! numbers it in PDCP and forwards it over X2 to the target; after `t_switch` it reaches the
//! target directly. (The S-GW follows [`Ran::s1_path_cell`]: the scenario's GTP-U tunnel of
//! the UE's downlink moves to the target's S1-U at the path switch.)
//!
//! What happens to the data in flight at `t_detach`:
//! - **Seamless** (no `[lte.handover] forwarding`, or `"seamless"`): the source forwards the
//!   SDUs RLC has not started to send; SDUs RLC sent in part or whole and not yet acknowledged
//!   (its transmission and retransmission buffers) are discarded (counted as discarded). The
//!   UE keeps its unsent uplink SDUs for the target; what it had sent in part is lost.
//! - **Seamless, flushing** (`"seamless-flush"`): what ns-3 3.37's LTE module does (its X2
//!   handover releases the source's RLC buffers), and what study 001 calls seamless: every SDU
//!   the source's RLC holds at `t_detach`, sent or not, is discarded; SDUs arriving afterwards
//!   are forwarded as above. The discarded data grows with the queue. Uplink as seamless.
//! - **Lossless** (RLC AM only, TS 36.323 §5.2.1.1 and §5.2.2.1): the source forwards every SDU
//!   PDCP still holds (not yet confirmed by RLC), in COUNT order, keeping their SNs, and the
//!   target holds them. At `t_attach` the UE compiles a PDCP status report (§5.3.1) and sends
//!   it on the uplink as its first PDCP PDU, in the grant of the random access response (the
//!   PUSCH 4 subframes after the first TTI in the target, received one TTI later; with HARQ
//!   retransmissions if it fails to decode). When it arrives (`status_report_s`), the target
//!   drops what the UE already has and sends the rest. The UE's PDCP holds out-of-order SDUs until the
//!   forwarded ones are in (§5.1.2.1.2), so it delivers in order without duplicates. In the
//!   uplink the UE retransmits every SDU its PDCP holds that the target's status report does
//!   not confirm (§5.2.1.1), in ascending COUNT order and before the SDUs that reached its
//!   PDCP after the command; the eNB's PDCP holds what arrives out of order until they are in.
//!
//! HARQ processes are flushed at `t_detach` (blocks in flight are lost) and RLC entities are
//! re-established: a new entity at the target and at the UE. Before it goes, each old
//! receiving entity delivers the SDUs it can reassemble from the PDUs it holds (TS 36.322
//! §5.4: UM below VR(UH), AM below VR(MR)), those received behind a PDU still in HARQ
//! retransmission: the UE's go up its PDCP, the source's go to the EPC (or, lossless, wait in
//! the eNB's PDCP for the gaps the UE fills). UM reports the SDUs cut by a gap lost.

use celltcp_engine::{SimDuration, SimTime};

use super::{HarqEntity, Ran, RanOutput};
use crate::mac::TransportBlock;
use crate::pdcp::{PdcpPdu, StatusReport};
use crate::rlc::{RlcEntity, RlcPdu};

/// RLC AM data PDU header carrying the status report (TS 36.322 §6.2.1.4, 2 bytes).
const AM_HEADER_BYTES: u32 = 2;
use crate::Direction;

/// What the source does with the data in flight at handover (TS 36.323 §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PdcpForwarding {
    /// Forward SDUs not yet sent; discard the ones in RLC's (re)transmission buffers.
    Seamless,
    /// Seamless as ns-3 3.37's LTE module does it (and study 001's seamless mode): the source
    /// releases its RLC entity with everything in it, sent or not; only SDUs that reach it
    /// after the handover decision are forwarded.
    #[serde(rename = "seamless-flush")]
    SeamlessFlush,
    /// Forward every SDU not confirmed; status reports and retransmission (RLC AM only).
    Lossless,
}

/// The X2 handover parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandoverConfig {
    /// One-way X2 latency (control and user plane). Study 001: 6 ms.
    pub x2_delay: SimDuration,
    /// X2-U forwarding rate, bit/s.
    pub x2_rate_bps: u64,
    /// From the handover command to RRC Connection Reconfiguration Complete in the target:
    /// the UE can neither send nor receive. 3GPP TR 36.881 §5.2.1 estimates 49.5 ms.
    pub interruption: SimDuration,
    /// From the UE's arrival in the target to the S-GW switching the downlink path.
    pub path_switch_delay: SimDuration,
    pub forwarding: PdcpForwarding,
    /// After a radio link failure: from T310 expiry to RRC Connection Re-establishment
    /// Complete in the chosen cell (cell selection, random access, RRC), with nothing forwarded.
    pub reestablishment: SimDuration,
}

impl Default for HandoverConfig {
    fn default() -> Self {
        HandoverConfig {
            x2_delay: SimDuration::from_millis(6),
            x2_rate_bps: 1_000_000_000,
            interruption: SimDuration::from_micros(49_500),
            path_switch_delay: SimDuration::from_millis(10),
            forwarding: PdcpForwarding::Seamless,
            reestablishment: SimDuration::from_millis(200),
        }
    }
}

/// One handover, for the run's timeline.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct HandoverEvent {
    /// `"handover"` (X2, prepared), `"reestablishment"` (after a radio link failure),
    /// `"cell-failure"` (the serving cell failed) or `"handover-abandoned"` (decided, but the
    /// link failed or the target cell failed before the UE detached; `detach_s` is NaN).
    pub kind: &'static str,
    pub ue: usize,
    pub source: usize,
    pub target: usize,
    /// When the source decided (the measurement report).
    pub decided_s: f64,
    pub detach_s: f64,
    pub attach_s: f64,
    pub path_switch_s: f64,
    /// Downlink SDUs forwarded over X2-U at detach (later ones, sent to the source before the
    /// path switch, are in `sdus_forwarded_late`).
    pub sdus_forwarded: u64,
    pub sdus_forwarded_late: u64,
    /// Downlink SDUs the source discarded (seamless: those in RLC's (re)transmission buffers)
    /// that the UE had not received: lost.
    pub sdus_discarded: u64,
    /// Downlink SDUs the source discarded that the UE had already received (not lost; their
    /// acknowledgement was still on its way).
    pub sdus_discarded_received: u64,
    /// Downlink SDUs the forwarding mode would have forwarded at detach but the source's
    /// forwarding buffer (`[lte.pdcp] forwarding_buffer`) did not keep; those the UE lacked
    /// are also counted in `sdus_discarded`.
    pub sdus_not_forwarded: u64,
    /// Forwarded SDUs the target dropped because the UE's status report showed them received.
    pub sdus_already_received: u64,
    /// Uplink SDUs the UE sent again in the target.
    pub ul_sdus_resent: u64,
    /// Lossless: when the UE's PDCP status report reached the target (NaN: none).
    pub status_report_s: f64,
    /// Downlink transport blocks in flight (HARQ) lost at detach.
    pub harq_blocks_lost: u64,
}

/// A PDCP SDU sent on X2-U from the source to the target of a handover (data forwarding,
/// TS 36.300 §10.1.2.1.1 step 8; TS 36.424): what a capture of X2-U shows.
#[derive(Clone, Copy, Debug)]
pub struct X2Sent<P> {
    /// When its transmission on X2 starts (behind what is queued at the X2 rate).
    pub at: SimTime,
    pub ue: usize,
    pub source: usize,
    pub target: usize,
    /// The index of the handover in [`Ran::handover_events`].
    pub event: usize,
    /// Its PDCP SN, carried in the GTP-U PDCP PDU Number extension header (TS 36.424 §5.2).
    pub sn: u32,
    pub sdu: P,
}

/// Where a UE is in the procedure.
#[derive(Clone, Copy, Debug)]
pub(super) enum HoPhase {
    /// Decided; the UE detaches at this time.
    Preparing { detach_at: SimTime },
    /// Detached; the UE arrives in the target at this time.
    Executing { attach_at: SimTime },
    /// In the target; the downlink path switches at this time.
    Completing { switch_at: SimTime },
}

/// Per-UE handover state.
#[derive(Clone, Debug)]
pub(super) struct HoState {
    pub phase: HoPhase,
    /// `None`: re-establishment, nothing forwarded.
    pub forwarding: Option<PdcpForwarding>,
    pub target: usize,
    /// Index of this handover in `Ran::ho_events`.
    pub event: usize,
}

impl HoState {
    pub fn next_at(&self) -> SimTime {
        match self.phase {
            HoPhase::Preparing { detach_at } => detach_at,
            HoPhase::Executing { attach_at } => attach_at,
            HoPhase::Completing { switch_at } => switch_at,
        }
    }
}

/// RLC UM or TM at re-establishment: the SDUs, once each, with a piece in a block of `harq`
/// (the sending end's HARQ entity, flushed) and none in the transmitting entity `tx`'s queue
/// nor in the receiving entity `rx`'s buffers (its re-establishment delivers those or reports
/// them lost); not the one `rx` gave up on last (reported). Called before `rx` is
/// re-established.
fn vanished<P: Copy + std::fmt::Debug>(tx: &RlcEntity<PdcpPdu<P>>, harq: &HarqEntity<TransportBlock<P>>, rx: &RlcEntity<PdcpPdu<P>>) -> Vec<P> {
    let mut in_rx: Vec<(u64, PdcpPdu<P>)> = Vec::new();
    let given_up = rx.rx_in_progress(&mut in_rx);
    let mut held: Vec<(u64, PdcpPdu<P>)> = Vec::new();
    for pid in 0..harq.n_processes() {
        for pdu in harq.process(pid).tb().map_or(&[][..], |tb| &tb.pdus[..]) {
            if let RlcPdu::Data(d) = pdu {
                held.extend(d.segments.iter().map(|g| (g.sdu_seq, g.sdu)));
            }
        }
    }
    let queued = tx.tx_seqs();
    held.sort_by_key(|h| h.0);
    held.dedup_by_key(|h| h.0);
    let in_rx: std::collections::HashSet<u64> = in_rx.iter().map(|h| h.0).collect();
    held.into_iter().filter(|h| Some(h.0) != given_up && !queued.contains(&h.0) && !in_rx.contains(&h.0)).map(|h| h.1.sdu).collect()
}

impl<P: Copy + std::fmt::Debug> Ran<P> {
    /// The source cell of UE `ue` decides at `now` to hand it over to cell `target`. Ignored
    /// (returns false) when the UE is already in a handover or `target` is its serving cell.
    pub fn request_handover(&mut self, now: SimTime, ue: usize, target: usize) -> bool {
        assert!(target < self.cells.len(), "no cell {target}");
        let u = &self.ues[ue];
        if u.ho.is_some() || u.cell == target || self.cell_failed(target) {
            return false;
        }
        let (x2_delay, x2_rate) = self.x2_of(u.cell, target);
        let detach_at = now + x2_delay + x2_delay;
        self.ues[ue].enb.x2_link = (x2_delay, x2_rate);
        let u = &self.ues[ue];
        let event = self.new_event("handover", ue, u.cell, target, now, detach_at);
        let forwarding = Some(self.cfg.handover.forwarding);
        self.ues[ue].ho = Some(HoState { phase: HoPhase::Preparing { detach_at }, forwarding, target, event });
        self.refresh(now, ue);
        true
    }

    /// Records a new handover event (steps not reached yet are NaN); returns its index.
    fn new_event(&mut self, kind: &'static str, ue: usize, source: usize, target: usize, decided: SimTime, detach: SimTime) -> usize {
        self.ho_events.push(HandoverEvent {
            kind,
            ue,
            source,
            target,
            decided_s: decided.as_secs_f64(),
            detach_s: detach.as_secs_f64(),
            attach_s: f64::NAN,
            path_switch_s: f64::NAN,
            sdus_forwarded: 0,
            sdus_forwarded_late: 0,
            sdus_discarded: 0,
            sdus_discarded_received: 0,
            sdus_not_forwarded: 0,
            sdus_already_received: 0,
            ul_sdus_resent: 0,
            status_report_s: f64::NAN,
            harq_blocks_lost: 0,
        });
        self.ho_events.len() - 1
    }

    /// Radio link failure: the UE re-establishes in `target` without preparation; what was in
    /// flight is lost (a handover in preparation is abandoned).
    pub(super) fn reestablish(&mut self, now: SimTime, ue: usize, target: usize, out: &mut Vec<RanOutput<P>>) {
        let source = self.ues[ue].cell;
        if let Some(prev) = self.ues[ue].ho.take() {
            if self.ues[ue].detached {
                // already detached for a handover: the UE lands where it was going
                self.ues[ue].ho = Some(prev);
                return;
            }
            if matches!(prev.phase, HoPhase::Preparing { .. }) {
                self.abandon(prev.event);
            }
        }
        let event = self.new_event("reestablishment", ue, source, target, now, now);
        self.detach(now, ue, target, event, None, self.cfg.handover.reestablishment, out);
    }

    /// A handover decided but never executed (the UE did not detach): reported as abandoned.
    fn abandon(&mut self, event: usize) {
        let e = &mut self.ho_events[event];
        e.kind = "handover-abandoned";
        e.detach_s = f64::NAN;
    }

    /// Plans a handover of UE `ue` to cell `target`, decided at `at` (as ns-3's
    /// `LteHelper::HandoverRequest`), whatever the measurements say.
    pub fn schedule_handover(&mut self, at: SimTime, ue: usize, target: usize) {
        assert!(target < self.cells.len(), "no cell {target}");
        let plan = &mut self.ues[ue].ho_plan;
        plan.push((at, target));
        plan.sort_by_key(|x| std::cmp::Reverse(x.0));
        self.refresh(SimTime::ZERO, ue);
    }

    /// Plans the failure of cell `c` at `at` (study 001, scenario 2): from then on it serves no
    /// one and transmits nothing; each UE it served re-establishes in the surviving cell it
    /// hears best, as after a radio link failure (nothing forwarded), and no handover targets it.
    pub fn schedule_cell_failure(&mut self, at: SimTime, c: usize) {
        assert!(c < self.cells.len(), "no cell {c}");
        self.cell_failures.push((at, c));
        self.cell_failures.sort_by_key(|x| std::cmp::Reverse(x.0));
    }

    /// Whether cell `c` has failed.
    pub fn cell_failed(&self, c: usize) -> bool {
        self.failed.get(c).copied().unwrap_or(false)
    }

    pub(super) fn cell_failures_due(&mut self, now: SimTime, out: &mut Vec<RanOutput<P>>) {
        while let Some(&(at, c)) = self.cell_failures.last() {
            if at > now {
                break;
            }
            self.cell_failures.pop();
            if self.failed.len() <= c {
                self.failed.resize(self.cells.len(), false);
            }
            self.failed[c] = true;
            self.set_interferer_only(c, true);
            let alive: Vec<usize> = (0..self.cells.len()).filter(|&x| !self.cell_failed(x)).collect();
            if alive.is_empty() {
                continue;
            }
            for ue in 0..self.ues.len() {
                let u = &self.ues[ue];
                let heading_here = u.ho.as_ref().is_some_and(|h| h.target == c);
                let best = *alive.iter().max_by(|&&a, &&b| self.rsrp_dbm(ue, a).total_cmp(&self.rsrp_dbm(ue, b))).expect("non-empty");
                if u.detached {
                    if heading_here {
                        // on its way there: it lands in the best surviving cell instead
                        if let Some(h) = self.ues[ue].ho.as_mut() {
                            h.target = best;
                        }
                    }
                    continue;
                }
                if u.cell != c {
                    if heading_here {
                        // the preparation towards it fails
                        if let Some(h) = self.ues[ue].ho.take() {
                            self.abandon(h.event);
                        }
                    }
                    continue;
                }
                if let Some(h) = self.ues[ue].ho.take() {
                    if matches!(h.phase, HoPhase::Preparing { .. }) {
                        self.abandon(h.event);
                    }
                }
                self.reestablish(now, ue, best, out);
                let e = self.ho_events.len() - 1;
                self.ho_events[e].kind = "cell-failure";
            }
        }
    }

    /// Every handover so far (the ones in progress have NaN for the steps not reached).
    pub fn handover_events(&self) -> &[HandoverEvent] {
        &self.ho_events
    }

    /// Whether UE `ue` is between the handover command and its arrival in the target.
    pub fn is_detached(&self, ue: usize) -> bool {
        self.ues[ue].detached
    }

    /// A downlink SDU numbered by the source's PDCP while the UE's path still leads there
    /// (after detach, before the path switch): it goes over X2-U to the target.
    pub(super) fn forward_late(&mut self, now: SimTime, ue: usize, pdu: PdcpPdu<P>) {
        self.push_x2(now, ue, pdu);
        let e = self.ues[ue].ho.as_ref().map(|h| h.event);
        if let Some(e) = e {
            self.ho_events[e].sdus_forwarded_late += 1;
        }
    }

    /// A downlink SDU that reached the target directly (after the path switch) while forwarded
    /// ones are still on their way: the target delivers the forwarded data first (TS 36.300
    /// §10.1.2.2, the end marker closes it), so this one waits behind them.
    pub(super) fn after_forwarded(&mut self, now: SimTime, ue: usize, pdu: PdcpPdu<P>) {
        let u = &mut self.ues[ue];
        let at = u.enb.x2_queue.back().map_or(now, |x| x.0.max(now));
        u.enb.x2_queue.push_back((at, pdu));
    }

    /// Queues `pdu` on the X2-U of UE `ue`: it reaches the target after serialisation at the
    /// X2 rate (behind what is already queued) and the X2 delay.
    fn push_x2(&mut self, now: SimTime, ue: usize, pdu: PdcpPdu<P>) {
        let u = &mut self.ues[ue];
        let (delay, rate) = u.enb.x2_link;
        let start = u.enb.x2_free_at.max(now);
        if let (Some(log), Some(h)) = (self.x2_log.as_mut(), u.ho.as_ref()) {
            let e = &self.ho_events[h.event];
            log.push(X2Sent { at: start, ue, source: e.source, target: e.target, event: h.event, sn: pdu.sn, sdu: pdu.sdu });
        }
        let tx = SimDuration::from_nanos((u64::from(pdu.bytes) * 8 * 1_000_000_000).div_ceil(rate.max(1)));
        u.enb.x2_free_at = start + tx;
        u.enb.x2_queue.push_back((start + tx + delay, pdu));
    }

    /// Logs every PDU sent on X2-U from now on (`on`), for [`Ran::take_x2_log`].
    pub fn log_x2(&mut self, on: bool) {
        self.x2_log = on.then(Vec::new);
    }

    /// Hands out the PDUs sent on X2-U since the last call, in the order they were queued.
    pub fn take_x2_log(&mut self, mut f: impl FnMut(&X2Sent<P>)) {
        if let Some(log) = self.x2_log.as_mut() {
            for x in log.drain(..) {
                f(&x);
            }
        }
    }

    /// Whether PDUs were sent on X2-U since the last [`Ran::take_x2_log`].
    #[inline]
    pub fn has_x2_log(&self) -> bool {
        self.x2_log.as_ref().is_some_and(|l| !l.is_empty())
    }

    /// The cell whose eNB the S-GW sends UE `ue`'s downlink to: the serving cell, except during
    /// a prepared handover from the UE's detach until the path switch (TS 23.401 §5.5.1.1.2;
    /// TS 36.300 §10.1.2.1.1 steps 12–16), when it is still the source.
    #[inline]
    pub fn s1_path_cell(&self, ue: usize) -> usize {
        let u = &self.ues[ue];
        match &u.ho {
            Some(h) if !matches!(h.phase, HoPhase::Preparing { .. }) => self.ho_events[h.event].source,
            _ => u.cell,
        }
    }

    /// Declares the X2 link between cells `a` and `b` with its one-way delay and rate
    /// (otherwise every pair uses `[lte.handover]`'s `x2_delay` and `x2_rate`).
    pub fn set_x2(&mut self, a: usize, b: usize, delay: SimDuration, rate_bps: u64) {
        self.x2_links.retain(|&(x, y, _, _)| !((x, y) == (a, b) || (x, y) == (b, a)));
        self.x2_links.push((a, b, delay, rate_bps));
    }

    /// Delay and rate of the X2 link between cells `a` and `b`.
    pub fn x2_of(&self, a: usize, b: usize) -> (SimDuration, u64) {
        self.x2_links
            .iter()
            .find(|&&(x, y, _, _)| (x, y) == (a, b) || (x, y) == (b, a))
            .map_or((self.cfg.handover.x2_delay, self.cfg.handover.x2_rate_bps), |&(_, _, d, r)| (d, r))
    }

    /// Runs the handover steps of UE `ue` due at `now`, and moves forwarded SDUs that arrived
    /// into the target's RLC.
    pub(super) fn handover_step(&mut self, now: SimTime, ue: usize, out: &mut Vec<RanOutput<P>>) {
        while let Some(&(at, target)) = self.ues[ue].ho_plan.last() {
            if at > now {
                break;
            }
            self.ues[ue].ho_plan.pop();
            self.request_handover(at, ue, target);
        }
        while let Some(ho) = self.ues[ue].ho.clone() {
            if ho.next_at() > now {
                break;
            }
            match ho.phase {
                HoPhase::Preparing { detach_at } => {
                    let gap = self.cfg.handover.interruption;
                    self.detach(detach_at, ue, ho.target, ho.event, ho.forwarding, gap, out)
                }
                HoPhase::Executing { attach_at } => self.attach(attach_at, ue, ho.target, ho.event, ho.forwarding, out),
                HoPhase::Completing { switch_at } => {
                    self.ho_events[ho.event].path_switch_s = switch_at.as_secs_f64();
                    self.ues[ue].ho = None;
                }
            }
        }
        self.drain_x2(now, ue, out);
    }

    /// Forwarded SDUs that reached the target go into its RLC (after the UE's status report,
    /// when lossless, has removed the ones it already has).
    fn drain_x2(&mut self, now: SimTime, ue: usize, out: &mut Vec<RanOutput<P>>) {
        let u = &mut self.ues[ue];
        if u.enb.awaiting_status_report.is_some() {
            return;
        }
        while let Some(&(t, pdu)) = u.enb.x2_queue.front() {
            if t > now {
                break;
            }
            u.enb.x2_queue.pop_front();
            if u.enb.bearer.leg.rlc_mut().confirms_delivery() && !u.enb.bearer.pdcp_tx.holds(pdu.count) {
                continue; // released meanwhile (status report)
            }
            if let Err(p) = u.enb.bearer.leg.rlc_mut().on_sdu(now, pdu, pdu.bytes) {
                u.enb.bearer.pdcp_tx.forget(p.sn);
                u.stats.dl_sdus_dropped += 1;
                out.push(RanOutput::Dropped { ue, dir: Direction::Downlink, sdu: p.sdu });
            }
        }
    }

    /// Step 7: the UE leaves the source. MAC reset, RLC re-established, data forwarded.
    #[allow(clippy::too_many_arguments)]
    fn detach(&mut self, now: SimTime, ue: usize, target: usize, event: usize, forwarding: Option<PdcpForwarding>, gap: SimDuration, out: &mut Vec<RanOutput<P>>) {
        let h = self.cfg.handover;
        let source = self.ues[ue].cell;
        let source_failed = self.cell_failed(source);
        self.cells[source].ho_algo.inner().on_ue_left(ue);
        // Out of the source's scheduler lists.
        self.cells[source].dl_active.retain(|&x| x as usize != ue);
        self.cells[source].ul_active.retain(|&x| x as usize != ue);
        // ... and out of its schedulers' memory (a proportional fair average)
        self.cells[source].dl_sched.forget(ue as u32);
        self.cells[source].ul_sched.forget(ue as u32);
        let before = self.inflight.len();
        self.inflight.retain(|f| f.ue as usize != ue);
        let lost_blocks = (before - self.inflight.len()) as u64;
        let rlc_cfg = self.cfg.rlc.clone();
        let n_dl = self.cfg.duplex.dl_harq_processes();
        let n_ul = self.cfg.duplex.ul_harq_processes();
        let harq_max = self.cfg.harq_max_tx;
        let u = &mut self.ues[ue];
        u.in_dl = false;
        u.in_ul = false;
        u.detached = true;
        let old_dl_harq = std::mem::replace(&mut u.enb.dl_harq, HarqEntity::new(n_dl, harq_max));
        let old_ul_harq = std::mem::replace(&mut u.ue.ul_harq, HarqEntity::new(n_ul, harq_max));
        u.ue.sr_bsr.reset();
        u.enb.bsr.reset();
        u.ue.status_report_pending = None;
        // Lossless: the target holds what is forwarded to it until the UE's status report
        // tells it what the UE already has (TS 36.323 §5.3.2, §5.2.1.1).
        u.enb.awaiting_status_report = (forwarding == Some(PdcpForwarding::Lossless)).then_some(event);
        // RLC UM or TM: the SDUs with a piece in a HARQ block lost here and nowhere else
        // (reported at the end), found before the receiving entities are re-established.
        // The SDUs a transmitting entity still has (in part) are dealt with below, so the
        // receiving end's re-establishment does not report them lost.
        let in_tx = |rlc: &RlcEntity<PdcpPdu<P>>| rlc.untransmitted_and_unacked().iter().map(|p| p.count).collect::<std::collections::HashSet<u32>>();
        let (dl_vanished, ul_vanished, dl_in_tx, ul_in_tx) = if u.enb.bearer.leg.confirms_delivery() {
            Default::default()
        } else {
            let (dl, ul) = (u.enb.bearer.leg.rlc(), u.ue.bearer.leg.rlc());
            (vanished(dl, &old_dl_harq, ul), vanished(ul, &old_ul_harq, dl), in_tx(dl), in_tx(ul))
        };
        // RLC re-establishment at both ends (TS 36.322 §5.4): each receiving entity first
        // delivers the SDUs it can reassemble from what it holds (the UE's downlink, the
        // source's uplink, to the EPC). Lossless: the PDCP receivers hold what arrives out of
        // order from then on (TS 36.323 §5.1.2.1.2), until what the peer sends again is in
        // (`end_reordering_if_done`, `end_ul_reordering_if_done`); the status reports show
        // what they hold.
        if forwarding == Some(PdcpForwarding::Lossless) {
            u.ue.bearer.pdcp_rx.set_reordering(true);
            u.enb.ul_reorder_until = u.ue.bearer.pdcp_tx.held().last().map(|p| p.count);
            u.enb.bearer.pdcp_rx.set_reordering(u.enb.ul_reorder_until.is_some());
        }
        let mut up = Vec::new();
        let mut old = if source_failed {
            // A failed cell delivers nothing: what its receiving entity could reassemble is
            // lost with it (with RLC AM the UE still holds those SDUs, and drops them below).
            let mut old = u.enb.bearer.leg.re_establish(&rlc_cfg);
            let mut gone = Vec::new();
            old.reestablish_rx(&mut gone);
            if !old.confirms_delivery() {
                out.extend(gone.into_iter().map(|p| RanOutput::Dropped { ue, dir: Direction::Uplink, sdu: p.sdu }));
            }
            old
        } else {
            u.enb.bearer.re_establish(now, &rlc_cfg, &mut up)
        };
        out.extend(up.drain(..).map(|sdu| RanOutput::ToEpc { enb: source, ue, sdu }));
        let mut old_ue = u.ue.bearer.re_establish(now, &rlc_cfg, &mut up);
        out.extend(up.drain(..).map(|sdu| RanOutput::ToUe { ue, sdu }));
        // Downlink: the source's RLC entity is gone; what it held is forwarded or discarded.
        let mut forwarded: Vec<PdcpPdu<P>> = Vec::new();
        let mut discarded = 0u64;
        let mut discarded_received = 0u64;
        match forwarding {
            Some(PdcpForwarding::Lossless) => {
                forwarded.extend(u.enb.bearer.pdcp_tx.held().copied());
            }
            // Re-establishment: nothing reaches the new cell. Flushing seamless (ns-3's
            // handover): the source's RLC entity goes with everything it holds.
            None | Some(PdcpForwarding::SeamlessFlush) => {
                for p in old.untransmitted_and_unacked() {
                    u.enb.bearer.pdcp_tx.forget(p.sn);
                    if u.ue.bearer.pdcp_rx.has_received(p.count) {
                        discarded_received += 1;
                    } else {
                        discarded += 1;
                        out.push(RanOutput::Dropped { ue, dir: Direction::Downlink, sdu: p.sdu });
                    }
                }
            }
            Some(PdcpForwarding::Seamless) => {
                let unsent = old.discard_untransmitted(|_| true);
                let unsent_counts: std::collections::HashSet<u32> = unsent.iter().map(|p| p.count).collect();
                // Sent in part or whole and not confirmed: discarded.
                for p in old.untransmitted_and_unacked() {
                    if !unsent_counts.contains(&p.count) {
                        u.enb.bearer.pdcp_tx.forget(p.sn);
                        if u.ue.bearer.pdcp_rx.has_received(p.count) {
                            discarded_received += 1;
                        } else {
                            discarded += 1;
                            out.push(RanOutput::Dropped { ue, dir: Direction::Downlink, sdu: p.sdu });
                        }
                    }
                }
                forwarded = unsent;
            }
        }
        // The source's forwarding buffer (TS 36.323 §5.2.1.1, TS 36.300 §10.1.2.3): what does
        // not fit is not forwarded; the UE's PDCP passes over the gaps it leaves once the
        // forwarded data has drained (`end_reordering_if_done`).
        let (kept, dropped) = crate::pdcp::split_forwarding(forwarded, self.cfg.pdcp.forwarding_buffer_bytes);
        forwarded = kept;
        let not_forwarded = dropped.len() as u64;
        for p in dropped {
            u.enb.bearer.pdcp_tx.forget(p.sn);
            if u.ue.bearer.pdcp_rx.has_received(p.count) {
                discarded_received += 1;
            } else {
                discarded += 1;
                out.push(RanOutput::Dropped { ue, dir: Direction::Downlink, sdu: p.sdu });
            }
        }
        // Uplink: what the UE's old RLC entity held.
        u.ue.ul_resend.clear();
        match forwarding {
            Some(PdcpForwarding::Lossless) => {} // decided at attach, from the target's status report
            // (an SDU the eNB's PDCP has received is not lost: its acknowledgement was still on
            // its way to the UE)
            None => {
                for p in old_ue.untransmitted_and_unacked() {
                    u.ue.bearer.pdcp_tx.forget(p.sn);
                    if !u.enb.bearer.pdcp_rx.has_received(p.count) {
                        out.push(RanOutput::Dropped { ue, dir: Direction::Uplink, sdu: p.sdu });
                    }
                }
            }
            Some(PdcpForwarding::Seamless | PdcpForwarding::SeamlessFlush) => {
                let unsent = old_ue.discard_untransmitted(|_| true);
                let unsent_counts: std::collections::HashSet<u32> = unsent.iter().map(|p| p.count).collect();
                for p in old_ue.untransmitted_and_unacked() {
                    if !unsent_counts.contains(&p.count) {
                        u.ue.bearer.pdcp_tx.forget(p.sn);
                        if !u.enb.bearer.pdcp_rx.has_received(p.count) {
                            out.push(RanOutput::Dropped { ue, dir: Direction::Uplink, sdu: p.sdu });
                        }
                    }
                }
                u.ue.ul_resend = unsent;
            }
        }
        // What else the old entities and HARQ processes held goes with them: SDUs a receiver
        // gave up on and had not reported yet, and with RLC UM or TM (neither end keeps what
        // it sent) those with a piece in a HARQ block lost here or in the receiving RLC's
        // buffers, and none left in the transmit queue (dealt with above). Each is reported
        // dropped, once, so that nothing vanishes unaccounted (a real packet's bytes are
        // released on it, `RanOutput::Dropped`).
        let mut gone = Vec::new();
        old_ue.take_lost(&mut gone);
        out.extend(gone.drain(..).filter(|p| !dl_in_tx.contains(&p.count)).map(|p| RanOutput::Dropped { ue, dir: Direction::Downlink, sdu: p.sdu }));
        old.take_lost(&mut gone);
        out.extend(gone.drain(..).filter(|p| !ul_in_tx.contains(&p.count)).map(|p| RanOutput::Dropped { ue, dir: Direction::Uplink, sdu: p.sdu }));
        out.extend(dl_vanished.into_iter().map(|sdu| RanOutput::Dropped { ue, dir: Direction::Downlink, sdu }));
        out.extend(ul_vanished.into_iter().map(|sdu| RanOutput::Dropped { ue, dir: Direction::Uplink, sdu }));
        let attach_at = now + gap;
        u.enb.x2_until = if forwarding.is_some() { attach_at + h.path_switch_delay } else { SimTime::ZERO };
        u.ho = Some(HoState { phase: HoPhase::Executing { attach_at }, forwarding, target, event });
        let n_fwd = forwarded.len() as u64;
        for p in forwarded {
            self.push_x2(now, ue, p);
        }
        let e = &mut self.ho_events[event];
        e.sdus_forwarded = n_fwd;
        e.sdus_discarded = discarded;
        e.sdus_discarded_received = discarded_received;
        e.sdus_not_forwarded = not_forwarded;
        e.harq_blocks_lost = lost_blocks;
        self.ues[ue].stats.handovers += 1;
    }

    /// Step 11: the UE is in the target cell. Status reports (lossless), uplink resend.
    fn attach(&mut self, now: SimTime, ue: usize, target: usize, event: usize, forwarding: Option<PdcpForwarding>, out: &mut Vec<RanOutput<P>>) {
        let h = self.cfg.handover;
        let u = &mut self.ues[ue];
        u.cell = target;
        u.detached = false;
        u.enb.dl_cqi = crate::phy::cqi::CqiReport::NONE;
        u.enb.ul_cqi = crate::phy::cqi::CqiReport::NONE;
        u.enb.ul_olla_db = 0.0;
        u.enb.dl_olla_db = 0.0;
        let mut resent = 0u64;
        // Uplink SDUs that reached the UE's PDCP while it was detached wait, unsent, in its new
        // RLC entity (nothing is sent while detached). PDCP re-establishment puts the SDUs it
        // sends again ahead of them, in ascending COUNT order (TS 36.323 §5.2.1.1: from the
        // first SDU whose delivery was not confirmed, before new ones): they are taken out
        // here and queued again behind. (Queued behind, the ones sent again would reach the
        // target's PDCP after COUNTs it had already passed over, and be discarded there.)
        let newer = u.ue.bearer.leg.rlc_mut().discard_untransmitted(|_| true);
        if forwarding == Some(PdcpForwarding::Lossless) {
            // Downlink: at PDCP re-establishment the UE compiles a status report (TS 36.323
            // §5.3.1) and sends it on the uplink as its first PDCP PDU; the target holds the
            // forwarded SDUs until it arrives ([`Ran::on_status_report`]). The UE's PDCP
            // delivers in order meanwhile (§5.1.2.1.2).
            let report = u.ue.bearer.pdcp_rx.status_report();
            let bytes = report.bytes(self.cfg.pdcp.sn_field_bits) + AM_HEADER_BYTES;
            u.ue.status_report_pending = Some((report, bytes));
            u.ue.bearer.pdcp_rx.set_reordering(true);
            // The random access in the target (steps 9–11) ends with an uplink grant, which
            // the eNB sizes as for a scheduling request (TS 36.321 §5.1.4: the RAR's grant).
            u.ue.sr_bsr.on_random_access_grant();
            u.enb.bsr.on_sr();
            // Uplink: the target's status report; the UE resends what it does not confirm.
            let report = u.enb.bearer.pdcp_rx.status_report();
            u.ue.bearer.pdcp_tx.on_status_report(&report);
            // (§5.4: those the report confirms are not sent again; the newer ones, numbered
            // after the re-establishment, are not sent again but for the first time, below)
            let first_new = newer.first().map(|p| p.count);
            u.ue.ul_resend = u.ue.bearer.pdcp_tx.held().filter(|p| first_new.is_none_or(|c| (p.count.wrapping_sub(c) as i32) < 0)).copied().collect();
        }
        let resend = std::mem::take(&mut u.ue.ul_resend);
        for (p, again) in resend.into_iter().map(|p| (p, true)).chain(newer.into_iter().map(|p| (p, false))) {
            if u.ue.bearer.leg.rlc_mut().on_sdu(now, p, p.bytes).is_ok() {
                resent += u64::from(again);
            } else {
                // the UE's RLC buffer is full
                u.ue.bearer.pdcp_tx.forget(p.sn);
                u.stats.ul_sdus_dropped += 1;
                out.push(RanOutput::Dropped { ue, dir: Direction::Uplink, sdu: p.sdu });
            }
        }
        let switch_at = if forwarding.is_some() { now + h.path_switch_delay } else { now };
        u.ho = Some(HoState { phase: HoPhase::Completing { switch_at }, forwarding, target, event });
        let e = &mut self.ho_events[event];
        e.attach_s = now.as_secs_f64();
        e.ul_sdus_resent = resent;
        self.measurements_follow(now, ue, target);
        self.refresh(now, ue);
    }

    /// Lossless: the UE's PDCP status report reached the target eNB (TS 36.323 §5.3.2). It
    /// releases what the UE already has (those SDUs are not sent again), and the forwarded
    /// SDUs that arrived meanwhile go to RLC.
    pub(super) fn on_status_report(&mut self, now: SimTime, ue: usize, report: &StatusReport, out: &mut Vec<RanOutput<P>>) {
        let u = &mut self.ues[ue];
        let Some(event) = u.enb.awaiting_status_report.take() else { return };
        let held_before = u.enb.bearer.pdcp_tx.held().count();
        u.enb.bearer.pdcp_tx.on_status_report(report);
        let already = (held_before - u.enb.bearer.pdcp_tx.held().count()) as u64;
        let tx = &u.enb.bearer.pdcp_tx;
        u.enb.bearer.leg.rlc_mut().discard_untransmitted(|p| !tx.holds(p.count));
        // In-order delivery of what is retransmitted (§5.1.2.1.2), until all of it is in.
        u.ue.reorder_until = u.enb.bearer.pdcp_tx.held().last().map(|p| p.count);
        if u.ue.reorder_until.is_none() {
            // nothing to wait for: what the UE holds out of order (delivered by its RLC's
            // re-establishment behind SDUs that will not come) goes up
            let mut up = Vec::new();
            u.ue.bearer.pdcp_rx.flush(&mut up);
            out.extend(up.into_iter().map(|sdu| RanOutput::ToUe { ue, sdu }));
            u.ue.bearer.pdcp_rx.set_reordering(false);
        }
        let e = &mut self.ho_events[event];
        e.sdus_already_received = already;
        e.status_report_s = now.as_secs_f64();
        self.drain_x2(now, ue, out);
    }

    /// Lossless: once every forwarded SDU is confirmed, the UE's PDCP stops holding
    /// out-of-order SDUs.
    pub(super) fn end_reordering_if_done(&mut self, ue: usize, delivered: &mut Vec<P>) {
        let u = &mut self.ues[ue];
        let Some(last) = u.ue.reorder_until else { return };
        // Reordering may stop once every forwarded SDU is confirmed and nothing waits behind
        // a gap (a flush would skip SDUs still on their way).
        let pending = u.enb.bearer.pdcp_tx.held().next().is_some_and(|p| p.count.wrapping_sub(last) as i32 <= 0);
        if !pending && u.ue.bearer.pdcp_rx.stored_sdus() == 0 {
            u.ue.bearer.pdcp_rx.set_reordering(false);
            u.ue.reorder_until = None;
        } else if !pending && self.cfg.pdcp.forwarding_buffer_bytes.is_some() {
            // Every forwarded SDU is in, yet SDUs wait behind a gap: ones the forwarding
            // buffer did not keep, which will never come. Pass over them as on expiry of
            // t-Reordering (TS 36.323 §5.1.2.1.4). Without the bound nothing is missing here.
            u.ue.bearer.pdcp_rx.flush(delivered);
            u.ue.bearer.pdcp_rx.set_reordering(false);
            u.ue.reorder_until = None;
        }
    }

    /// Lossless, uplink: once the UE has no SDU numbered before the handover left to send
    /// again (all confirmed, or discarded), the eNB's PDCP stops holding out-of-order SDUs;
    /// any it still holds wait behind SDUs that will not come, and it passes over the gaps as
    /// on expiry of t-Reordering (TS 36.323 §5.1.2.1.4).
    pub(super) fn end_ul_reordering_if_done(&mut self, ue: usize, delivered: &mut Vec<P>) {
        let u = &mut self.ues[ue];
        let Some(last) = u.enb.ul_reorder_until else { return };
        if u.ue.bearer.pdcp_tx.held().next().is_some_and(|p| p.count.wrapping_sub(last) as i32 <= 0) {
            return;
        }
        u.enb.bearer.pdcp_rx.flush(delivered);
        u.enb.bearer.pdcp_rx.set_reordering(false);
        u.enb.ul_reorder_until = None;
    }

    /// Moves UE `ue` to `pos` (metres): its path loss to every cell follows; its shadowing
    /// (drawn per cell at the start) stays.
    pub fn set_position(&mut self, ue: usize, pos: (f64, f64)) {
        let r = &self.cfg.radio;
        let u = &mut self.ues[ue];
        u.moved |= u.position != pos;
        u.position = pos;
        for (c, cell) in self.cells.iter().enumerate() {
            u.gain[c] = super::link_gain(r, cell.position, cell.boresight_deg, pos, u.shadow_db[c]);
        }
        // Cached CQI reports stay (they are taken at report instants); the next report sees
        // the new gains.
    }

    /// Reference signal received power (dBm) of cell `c` at UE `ue` (TS 36.214 §5.1.1: the
    /// power of one resource element of the cell's reference signal), from the eNB power
    /// spread evenly over the 12·N_PRB subcarriers, the gains, path loss and shadowing.
    pub fn rsrp_dbm(&self, ue: usize, c: usize) -> f64 {
        let r = &self.cfg.radio;
        let per_re = r.enb_tx_power_dbm - 10.0 * (12.0 * f64::from(self.cfg.dl_prbs)).log10();
        per_re + crate::phy::channel::linear_to_db(self.ues[ue].gain[c])
    }

    /// The UE's position.
    pub fn position(&self, ue: usize) -> (f64, f64) {
        self.ues[ue].position
    }

}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mac::SchedulerKind;
    use crate::pdcp::PdcpConfig;
    use crate::ran::{EnbSpec, RanConfig, UeSpec};
    use crate::rlc::{AmConfig, RlcConfig};
    use rand::Rng;

    fn config(h: HandoverConfig) -> RanConfig {
        RanConfig {
            dl_scheduler: SchedulerKind::ProportionalFair,
            ul_olla: true,
            dl_olla: false,
            rlc: RlcConfig::Am(AmConfig { tx_buffer_bytes: 1 << 26, ..AmConfig::default() }),
            pdcp: PdcpConfig { tx_buffer_bytes: 1 << 26, ..PdcpConfig::default() },
            handover: h,
            ..crate::ran::tests::config(10, 5, 6)
        }
    }

    /// What one run saw: downlink SDU ids in delivery order with their times, the ids
    /// reported dropped, and the handover event.
    struct Trace {
        delivered: Vec<(u32, SimTime)>,
        dropped: Vec<u32>,
        event: HandoverEvent,
        sent: u32,
    }

    /// One UE at a fixed SINR in cell 0 receives `per_ms` SDUs of `bytes` every ms for
    /// `ms` ms (and sends one small uplink SDU every 5 ms); a handover to cell 1 is decided at
    /// `ho_ms`. The run continues until everything is delivered or 3 s more have passed.
    fn run(h: HandoverConfig, ho_ms: u64, per_ms: u32, bytes: u32, sinr_db: f64, ms: u64) -> Trace {
        run_with(config(h), ho_ms, per_ms, bytes, sinr_db, ms)
    }

    /// Cells a and b 500 m apart, one UE between them in a at a fixed SINR, its handover to b
    /// decided at `ho_ms`.
    fn two_cells(cfg: RanConfig, sinr_db: f64, ho_ms: u64) -> Ran<u32> {
        let enbs = [
            EnbSpec { name: "a".into(), position: (0.0, 0.0), boresight_deg: None },
            EnbSpec { name: "b".into(), position: (500.0, 0.0), boresight_deg: None },
        ];
        let ues = [UeSpec { name: "ue".into(), enb: 0, position: (250.0, 10.0), fixed_sinr_db: Some(sinr_db), fixed_mcs: None }];
        let mut ran: Ran<u32> = Ran::new(cfg, &enbs, &ues, 7);
        ran.schedule_handover(SimTime::from_millis(ho_ms), 0, 1);
        ran
    }

    /// [`run`] with a whole RAN configuration.
    fn run_with(cfg: RanConfig, ho_ms: u64, per_ms: u32, bytes: u32, sinr_db: f64, ms: u64) -> Trace {
        let mut ran = two_cells(cfg, sinr_db, ho_ms);
        let mut out = Vec::new();
        let (mut delivered, mut dropped) = (Vec::new(), Vec::new());
        let mut id = 0u32;
        for k in 0..ms + 3000 {
            let now = SimTime::from_millis(k);
            if k < ms {
                for _ in 0..per_ms {
                    if ran.on_downlink_sdu(now, 0, id, bytes).is_err() {
                        let u = &ran.ues[0];
                        panic!(
                            "SDU {id} refused at {now:?}: x2 queue {} (front {:?}), PDCP holds {} (first {:?}), RLC queued {} B, detached {}, ho {:?}, events {:?}",
                            u.enb.x2_queue.len(),
                            u.enb.x2_queue.front().map(|x| x.0),
                            u.enb.bearer.pdcp_tx.held().count(),
                            u.enb.bearer.pdcp_tx.held().next().map(|p| p.sdu),
                            u.enb.bearer.leg.rlc().queued_bytes(),
                            u.detached,
                            u.ho,
                            ran.handover_events()
                        );
                    }
                    id += 1;
                }
                if k % 5 == 0 {
                    let _ = ran.on_uplink_sdu(now, 0, u32::MAX - k as u32, 60);
                }
            }
            ran.on_tti(now, &mut out);
            for o in out.drain(..) {
                match o {
                    RanOutput::ToUe { sdu, .. } => delivered.push((sdu, now)),
                    RanOutput::Dropped { dir: Direction::Downlink, sdu, .. } => dropped.push(sdu),
                    _ => {}
                }
            }
            if k >= ms && delivered.len() + dropped.len() == id as usize {
                break;
            }
        }
        Trace { delivered, dropped, event: ran.handover_events()[0].clone(), sent: id }
    }

    /// What differs between `ids` and 0..sent: missing and repeated ids, and the first
    /// out-of-order position.
    fn diff(ids: &[u32], sent: u32) -> String {
        let mut seen = vec![0u32; sent as usize];
        for &i in ids {
            seen[i as usize] += 1;
        }
        let missing: Vec<u32> = (0..sent).filter(|&i| seen[i as usize] == 0).collect();
        let dup: Vec<u32> = (0..sent).filter(|&i| seen[i as usize] > 1).collect();
        let disorder = ids.windows(2).position(|w| w[0] >= w[1]).map(|p| (p, ids[p], ids[p + 1]));
        format!("{} missing {:?}, {} repeated {:?}, first disorder {:?}", missing.len(), &missing[..missing.len().min(20)], dup.len(), &dup[..dup.len().min(20)], disorder)
    }

    fn h(forwarding: PdcpForwarding) -> HandoverConfig {
        HandoverConfig { forwarding, ..HandoverConfig::default() }
    }

    // TS 36.323 §5.2.1.1 / §5.1.2.1.2: with lossless forwarding every SDU arrives once and in
    // order, whatever the load and the instant of the handover.
    #[test]
    fn lossless_handover_delivers_every_sdu_once_in_order() {
        let mut rng = celltcp_engine::rng::component_rng(0, 11);
        for case in 0..12 {
            let ho = rng.gen_range(300..1500);
            // offered load 1.6–6.4 Mbit/s, below what 25 PRBs carry at 12 dB and above
            let per_ms = 1;
            let bytes = rng.gen_range(200..800);
            let sinr = rng.gen_range(12.0..25.0);
            let t = run(h(PdcpForwarding::Lossless), ho, per_ms, bytes, sinr, 2000);
            let ids: Vec<u32> = t.delivered.iter().map(|x| x.0).collect();
            let expected: Vec<u32> = (0..t.sent).collect();
            assert!(t.dropped.is_empty(), "case {case}: dropped {:?}", t.dropped);
            if ids != expected {
                panic!("case {case}: ho {ho} ms, {per_ms}×{bytes} B/ms, {sinr:.1} dB: {}; event {:?}", diff(&ids, t.sent), t.event);
            }
            assert!(t.event.sdus_forwarded > 0, "case {case}: nothing was in flight to forward");
            assert!(t.event.attach_s.is_finite());
            // The status report comes up the uplink (grant, PUSCH 4 ms later, reception): at
            // least 5 ms after the attach, and the UE receives nothing from the target before.
            let (attach, report) = (t.event.attach_s, t.event.status_report_s);
            assert!(report >= attach + 0.005 - 1e-9, "case {case}: report at {report} s, attach at {attach} s");
            let detach = SimTime::from_nanos((t.event.detach_s * 1e9).round() as u64);
            let first = t.delivered.iter().map(|x| x.1).find(|&at| at > detach).expect("a delivery in the target");
            assert!(first.as_secs_f64() > report, "case {case}: first delivery {first:?} before the report at {report} s");
        }
    }

    // Seamless: the SDUs lost are exactly those in RLC's (re)transmission buffers at the
    // handover that the UE did not have; everything else arrives once, in order.
    #[test]
    fn seamless_handover_loses_exactly_the_discarded_sdus() {
        let mut rng = celltcp_engine::rng::component_rng(0, 12);
        let mut lost_total = 0;
        for case in 0..12 {
            let ho = rng.gen_range(300..1500);
            // offered load 1.6–6.4 Mbit/s, below what 25 PRBs carry at 12 dB and above
            let per_ms = 1;
            let bytes = rng.gen_range(200..800);
            let sinr = rng.gen_range(12.0..25.0);
            let t = run(h(PdcpForwarding::Seamless), ho, per_ms, bytes, sinr, 2000);
            assert_eq!(t.dropped.len() as u64, t.event.sdus_discarded, "case {case}");
            let mut all: Vec<u32> = t.delivered.iter().map(|x| x.0).chain(t.dropped.iter().copied()).collect();
            all.sort_unstable();
            if all != (0..t.sent).collect::<Vec<_>>() {
                panic!("case {case}: every SDU delivered or dropped, once: {}; event {:?}", diff(&all, t.sent), t.event);
            }
            let ids: Vec<u32> = t.delivered.iter().map(|x| x.0).collect();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "case {case}: in order");
            lost_total += t.dropped.len();
        }
        assert!(lost_total > 0, "some handover should have had SDUs in flight");
    }

    /// What one uplink run saw: uplink SDU ids as the eNB passed them to the EPC, with the
    /// times, the ids reported dropped with the times, and the handover event.
    struct UlTrace {
        delivered: Vec<(u32, SimTime)>,
        dropped: Vec<(u32, SimTime)>,
        event: HandoverEvent,
        sent: u32,
    }

    /// One UE at a fixed SINR in cell 0 sends `bytes`-byte uplink SDUs, one every `every_ms`,
    /// for `ms` ms, through a handover to cell 1 decided at `ho_ms`; ids count up, so they are
    /// in COUNT order. The run continues until every SDU is delivered or dropped.
    fn run_ul(cfg: RanConfig, ho_ms: u64, every_ms: u64, bytes: u32, sinr_db: f64, ms: u64) -> UlTrace {
        let mut ran = two_cells(cfg, sinr_db, ho_ms);
        let mut out = Vec::new();
        let (mut delivered, mut dropped) = (Vec::new(), Vec::new());
        let mut id = 0u32;
        for k in 0..ms + 3000 {
            let now = SimTime::from_millis(k);
            if k < ms && k % every_ms == 0 {
                if ran.on_uplink_sdu(now, 0, id, bytes).is_err() {
                    dropped.push((id, now));
                }
                id += 1;
            }
            ran.on_tti(now, &mut out);
            for o in out.drain(..) {
                match o {
                    RanOutput::ToEpc { sdu, .. } => delivered.push((sdu, now)),
                    RanOutput::Dropped { dir: Direction::Uplink, sdu, .. } => dropped.push((sdu, now)),
                    _ => {}
                }
            }
            if k >= ms && delivered.len() + dropped.len() == id as usize {
                break;
            }
        }
        UlTrace { delivered, dropped, event: ran.handover_events()[0].clone(), sent: id }
    }

    // TS 36.323 §5.2.1.1: at re-establishment the UE sends again the uplink SDUs whose delivery
    // was not confirmed (lossless: those the target's status report does not show received;
    // seamless here: those RLC had not started to send), in ascending COUNT order, before the
    // SDUs that reached its PDCP afterwards (here, while it was detached for 49.5 ms). Before
    // the fix they queued behind those newer SDUs: the target's PDCP, already past their
    // COUNTs, discarded them (in these 8 cases lossless lost 4–112 SDUs, seamless 2–110 on
    // top of those dropped at the command; lossless also sent the ~50 newer SDUs twice). Now
    // lossless delivers every uplink SDU once and in ascending COUNT order; seamless loses
    // only what RLC had sent in part or whole at the command (dropped then), nothing later.
    #[test]
    fn uplink_sdus_sent_again_after_a_handover_go_before_newer_ones() {
        let mut rng = celltcp_engine::rng::component_rng(0, 13);
        for case in 0..8 {
            let ho = rng.gen_range(300..900);
            let bytes = rng.gen_range(300..1200);
            let sinr = rng.gen_range(5.0..15.0);
            for fwd in [PdcpForwarding::Lossless, PdcpForwarding::Seamless] {
                let t = run_ul(config(h(fwd)), ho, 1, bytes, sinr, 1500);
                let e = &t.event;
                let ids: Vec<u32> = t.delivered.iter().map(|x| x.0).collect();
                let what = format!("case {case} {fwd:?}: ho {ho} ms, {bytes} B/ms, {sinr:.1} dB; event {e:?}");
                println!("{what}: {} delivered, {} dropped", ids.len(), t.dropped.len());
                assert!(e.ul_sdus_resent > 0, "{what}: nothing to send again");
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{what}: uplink out of COUNT order: {}", diff(&ids, t.sent));
                let detach = SimTime::from_nanos((e.detach_s * 1e9).round() as u64);
                match fwd {
                    PdcpForwarding::Lossless => {
                        assert!(t.dropped.is_empty(), "{what}: dropped {:?}", t.dropped);
                        assert!(ids == (0..t.sent).collect::<Vec<_>>(), "{what}: {}", diff(&ids, t.sent));
                    }
                    _ => {
                        let late: Vec<_> = t.dropped.iter().filter(|d| d.1 > detach).collect();
                        assert!(late.is_empty(), "{what}: dropped after the command: {late:?}");
                        let mut all: Vec<u32> = ids.iter().copied().chain(t.dropped.iter().map(|d| d.0)).collect();
                        all.sort_unstable();
                        assert!(all == (0..t.sent).collect::<Vec<_>>(), "{what}: {}", diff(&all, t.sent));
                    }
                }
            }
        }
    }

    // TS 36.322 §5.4: at the handover command each receiving RLC entity delivers the SDUs it
    // can reassemble from the PDUs it holds (UM: below VR(UH); AM: below VR(MR)), those behind
    // a PDU still in HARQ retransmission here. They go up at the command's instant, when
    // nothing else arrives (the block sent then is flushed): before the fix no SDU did, and
    // these SDUs were reported lost (UM) or, AM seamless, counted among the source's discards.
    // Every SDU is still delivered or dropped once, in ascending order.
    #[test]
    fn reestablishment_delivers_what_the_receiving_rlc_can_reassemble() {
        use crate::rlc::UmConfig;
        // EPA fading at 70 Hz: blocks fail now and then, and HARQ retransmits them while the
        // blocks sent after them are decoded
        let faded = |mut c: RanConfig| {
            c.radio.fading = Some(crate::phy::fading::FadingProfile::Epa);
            c.radio.doppler_hz = 70.0;
            c
        };
        let mut rng = celltcp_engine::rng::component_rng(0, 14);
        let um = RlcConfig::Um(UmConfig { tx_buffer_bytes: 1 << 26, ..UmConfig::default() });
        let am = config(h(PdcpForwarding::Seamless)).rlc;
        let (mut dl_at_detach, mut ul_at_detach) = ([0usize; 2], 0usize);
        for case in 0..10 {
            let ho = rng.gen_range(300..900);
            let bytes = rng.gen_range(400..1200);
            let sinr = rng.gen_range(8.0..16.0);
            for (m, rlc) in [&um, &am].into_iter().enumerate() {
                let mut cfg = faded(config(h(PdcpForwarding::Seamless)));
                cfg.rlc = rlc.clone();
                let t = run_with(cfg, ho, 1, bytes, sinr, 1500);
                let what = format!("case {case} {:?}: ho {ho} ms, {bytes} B/ms, {sinr:.1} dB; event {:?}", rlc.mode(), t.event);
                let detach = SimTime::from_nanos((t.event.detach_s * 1e9).round() as u64);
                let n = t.delivered.iter().filter(|d| d.1 == detach).count();
                println!("{what}: {n} delivered at the command, {} dropped", t.dropped.len());
                dl_at_detach[m] += n;
                let mut all: Vec<u32> = t.delivered.iter().map(|x| x.0).chain(t.dropped.iter().copied()).collect();
                all.sort_unstable();
                assert!(all == (0..t.sent).collect::<Vec<_>>(), "{what}: {}", diff(&all, t.sent));
                let ids: Vec<u32> = t.delivered.iter().map(|x| x.0).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{what}: {}", diff(&ids, t.sent));
                if m == 1 {
                    assert_eq!(t.dropped.len() as u64, t.event.sdus_discarded, "{what}");
                }
            }
            let mut cfg = faded(config(h(PdcpForwarding::Seamless)));
            cfg.rlc = um.clone();
            let t = run_ul(cfg, ho, 1, bytes, sinr, 1500);
            let detach = SimTime::from_nanos((t.event.detach_s * 1e9).round() as u64);
            ul_at_detach += t.delivered.iter().filter(|d| d.1 == detach).count();
            let mut all: Vec<u32> = t.delivered.iter().map(|x| x.0).chain(t.dropped.iter().map(|d| d.0)).collect();
            all.sort_unstable();
            assert!(all == (0..t.sent).collect::<Vec<_>>(), "case {case} uplink UM: {}", diff(&all, t.sent));
        }
        println!("delivered at the command: downlink UM {}, AM {}; uplink UM {ul_at_detach}", dl_at_detach[0], dl_at_detach[1]);
        assert!(dl_at_detach.iter().all(|&n| n > 0) && ul_at_detach > 0, "{dl_at_detach:?} {ul_at_detach}");
    }

    // Flushing seamless (ns-3's): everything the source's RLC holds at the command is lost, so
    // the loss grows with the backlog, while 3GPP seamless loses only what RLC had sent; every
    // SDU is still delivered or dropped exactly once, in order.
    #[test]
    fn flushing_seamless_handover_discards_the_whole_rlc_backlog() {
        // 2 SDUs of 1000 B per ms (16 Mbit/s) into a cell that carries less at 8 dB: a backlog
        // builds in RLC before the handover at 1 s.
        let (mut flush_lost, mut seamless_lost) = (0, 0);
        for (fwd, lost) in [(PdcpForwarding::SeamlessFlush, &mut flush_lost), (PdcpForwarding::Seamless, &mut seamless_lost)] {
            let t = run(h(fwd), 1000, 2, 1000, 8.0, 1500);
            assert_eq!(t.dropped.len() as u64, t.event.sdus_discarded, "{fwd:?}");
            let mut all: Vec<u32> = t.delivered.iter().map(|x| x.0).chain(t.dropped.iter().copied()).collect();
            all.sort_unstable();
            assert!(all == (0..t.sent).collect::<Vec<_>>(), "{fwd:?}: {}", diff(&all, t.sent));
            let ids: Vec<u32> = t.delivered.iter().map(|x| x.0).collect();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{fwd:?}: in order");
            *lost = t.dropped.len();
        }
        assert!(flush_lost > 20 * seamless_lost.max(1), "flush lost {flush_lost}, seamless {seamless_lost}");
    }

    // The forwarding buffer (`[lte.pdcp] forwarding_buffer`, TS 36.323 §5.2.1.1): with a
    // backlog larger than the bound, the source forwards exactly the leading ⌊bound / SDU⌋
    // SDUs (1000-byte SDUs here: the closed form) and discards the rest, counted; the UE's
    // PDCP passes over the gap once the forwarded data is in, so everything is delivered or
    // dropped exactly once, in order, and nothing stalls. A bound larger than the backlog
    // changes nothing (the same deliveries, at the same instants, as no bound).
    #[test]
    fn forwarding_buffer_bounds_what_the_source_forwards() {
        let with = |fwd: PdcpForwarding, bound: Option<u64>| {
            let mut c = config(h(fwd));
            c.pdcp.forwarding_buffer_bytes = bound;
            c
        };
        for fwd in [PdcpForwarding::Lossless, PdcpForwarding::Seamless] {
            let free = run_with(with(fwd, None), 1000, 2, 1000, 8.0, 1500);
            assert!(free.event.sdus_forwarded > 60, "{fwd:?}: a backlog to bound: {:?}", free.event);
            for bound in [0u64, 20_000, 50_500] {
                let t = run_with(with(fwd, Some(bound)), 1000, 2, 1000, 8.0, 1500);
                let e = &t.event;
                let fit = bound / 1000;
                assert_eq!(e.sdus_forwarded, fit, "{fwd:?} {bound}: {e:?}");
                assert_eq!(e.sdus_not_forwarded, free.event.sdus_forwarded - fit, "{fwd:?} {bound}: {e:?}");
                assert_eq!(t.dropped.len() as u64, e.sdus_discarded, "{fwd:?} {bound}");
                let mut all: Vec<u32> = t.delivered.iter().map(|x| x.0).chain(t.dropped.iter().copied()).collect();
                all.sort_unstable();
                assert!(all == (0..t.sent).collect::<Vec<_>>(), "{fwd:?} {bound}: {}", diff(&all, t.sent));
                let ids: Vec<u32> = t.delivered.iter().map(|x| x.0).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "{fwd:?} {bound}: in order");
            }
            let big = run_with(with(fwd, Some(1 << 30)), 1000, 2, 1000, 8.0, 1500);
            assert_eq!(big.delivered, free.delivered, "{fwd:?}: an inert bound changes nothing");
            assert_eq!(big.event.sdus_not_forwarded, 0);
        }
    }

    // The gap the UE sees (TS 36.300 §10.1.2.1): the source serves it until the handover
    // command (step 7, `t_detach`); from then on two things run in parallel — the UE detaches
    // and completes random access in the target (steps 9–11, `interruption`), and the source
    // forwards its buffered SDUs over X2-U (step 8: `x2_delay` after their serialisation at
    // `x2_rate`, in COUNT order). The target can send the first SDU the UE needs when both are
    // done, at the first TTI at or after
    //     t_detach + max(interruption, x2_delay + (k + 1) · ⌈8 · PDU bytes / x2_rate⌉),
    // where k SDUs ahead of it in the forwarded stream are ones the UE already has (lossless:
    // those the UE's status report confirms; seamless forwards only unsent SDUs, k = 0). That
    // TTI's transport block is received one TTI later. The source's last delivery is in the TTI
    // before the command (the block sent then is flushed with HARQ), so the largest gap between
    // deliveries is exactly that plus 1 ms: no tolerance beyond the TTI rounding, which the
    // formula contains. At 30 dB every block decodes at the first attempt (CQI 15 with ~10 dB
    // of margin), so no HARQ retransmission (8 ms) enters.
    #[test]
    fn interruption_is_the_longer_of_detach_to_attach_and_x2_forwarding() {
        let ms = SimDuration::from_millis(1);
        // (interruption µs, X2 delay ms, X2 rate bit/s, forwarding)
        let cases = [
            (49_500u64, 6u64, 1_000_000_000u64, PdcpForwarding::Lossless), // interruption dominates
            (20_000, 5, 1_000_000_000, PdcpForwarding::Lossless),
            (10_000, 30, 1_000_000_000, PdcpForwarding::Lossless), // X2 delay dominates
            (60_000, 2, 1_000_000_000, PdcpForwarding::Seamless),
            (10_000, 5, 1_000_000, PdcpForwarding::Lossless), // serialisation of what the UE has
            (49_500, 6, 2_000_000, PdcpForwarding::Seamless),
            (5_000, 2, 500_000, PdcpForwarding::Seamless), // serialisation of one PDU: 8.032 ms
        ];
        let mut dominated_by_x2 = 0;
        for (interruption_us, x2_ms, rate, fwd) in cases {
            let cfg = HandoverConfig {
                interruption: SimDuration::from_micros(interruption_us),
                x2_delay: SimDuration::from_millis(x2_ms),
                x2_rate_bps: rate,
                forwarding: fwd,
                ..HandoverConfig::default()
            };
            let bytes = 500u32;
            let t = run(cfg, 1000, 1, bytes, 30.0, 2000);
            let e = &t.event;
            assert!((e.detach_s - e.decided_s - 2.0 * x2_ms as f64 / 1e3).abs() < 1e-9);
            assert!((e.attach_s - e.detach_s - interruption_us as f64 / 1e6).abs() < 1e-9);
            let detach = SimTime::from_nanos((e.detach_s * 1e9).round() as u64);
            // TS 36.323 §6.2.3: a 12-bit SN data PDU has a 2-byte header
            let pdu_tx = SimDuration::from_nanos((u64::from(bytes + 2) * 8 * 1_000_000_000).div_ceil(rate));
            let k = match fwd {
                PdcpForwarding::Lossless => e.sdus_already_received,
                PdcpForwarding::Seamless | PdcpForwarding::SeamlessFlush => 0,
            };
            let x2_path = SimDuration::from_millis(x2_ms) + SimDuration::from_nanos(pdu_tx.as_nanos() * (k + 1));
            let tti_at_or_after = |t: SimTime| SimTime::from_nanos(t.as_nanos().div_ceil(ms.as_nanos()) * ms.as_nanos());
            let first_tti = match fwd {
                // Lossless: the target sends nothing forwarded before the UE's status report
                // has come up the uplink: the random access grant in the first TTI after the
                // attach (n), the PUSCH in n + 4 (TS 36.213 §8.0), received in n + 5.
                PdcpForwarding::Lossless => {
                    let attach = SimTime::from_nanos((e.attach_s * 1e9).round() as u64);
                    let report = tti_at_or_after(attach) + SimDuration::from_millis(5);
                    assert_eq!(SimTime::from_nanos((e.status_report_s * 1e9).round() as u64), report, "status report's uplink delay");
                    tti_at_or_after(detach + x2_path).max(report)
                }
                PdcpForwarding::Seamless | PdcpForwarding::SeamlessFlush => {
                    assert!(e.status_report_s.is_nan());
                    tti_at_or_after(detach + cfg.interruption.max(x2_path))
                }
            };
            let expected_first = first_tti + ms;
            let first = t.delivered.iter().map(|x| x.1).find(|&at| at > detach).expect("a delivery in the target");
            let last_before = t.delivered.iter().map(|x| x.1).rfind(|&at| at <= detach).expect("a delivery in the source");
            let gap = t.delivered.windows(2).map(|w| w[1].1 - w[0].1).max().unwrap();
            println!(
                "interruption {:.1} ms, X2 {x2_ms} ms at {:.1} Mbit/s, {fwd:?}: k = {k}, X2 path {:.3} ms; first delivery in the target {:.1} ms after detach (expected {:.1}), last in the source {:.1} ms before, largest gap {:.1} ms; status report at {:.1} ms",
                interruption_us as f64 / 1e3,
                rate as f64 / 1e6,
                x2_path.as_secs_f64() * 1e3,
                (first - detach).as_secs_f64() * 1e3,
                (expected_first - detach).as_secs_f64() * 1e3,
                (detach - last_before).as_secs_f64() * 1e3,
                gap.as_secs_f64() * 1e3,
                (e.status_report_s - e.detach_s) * 1e3
            );
            assert_eq!(first, expected_first, "first delivery in the target");
            assert_eq!(last_before, detach - ms, "the source serves until the TTI before the command");
            assert_eq!(gap, expected_first - (detach - ms), "the largest gap between deliveries is the handover's");
            assert!(e.harq_blocks_lost >= 1, "the block sent in the TTI before the command is flushed");
            let report_path = if fwd == PdcpForwarding::Lossless { SimDuration::from_millis(6) } else { SimDuration::ZERO };
            if x2_path > cfg.interruption + report_path {
                dominated_by_x2 += 1;
            }
        }
        assert!(dominated_by_x2 >= 3, "the cases should exercise the X2 side of the max: {dominated_by_x2}");
    }

    // TR 36.814 Table A.2.1.1-2: a sector's RSRP toward a UE follows −min(12(θ/70°)², 20 dB)
    // of the angle off boresight, at equal distance.
    #[test]
    fn sector_pattern_shapes_rsrp() {
        let enbs = [EnbSpec { name: "s".into(), position: (0.0, 0.0), boresight_deg: Some(30.0) }];
        let at = |deg: f64| {
            let r = 200.0;
            let p = (r * deg.to_radians().cos(), r * deg.to_radians().sin());
            UeSpec { name: format!("u{deg}"), enb: 0, position: p, fixed_sinr_db: None, fixed_mcs: None }
        };
        let ues = [at(30.0), at(65.0), at(90.0), at(210.0)];
        let ran: Ran<u32> = Ran::new(config(HandoverConfig::default()), &enbs, &ues, 1);
        let d: Vec<f64> = (0..4).map(|u| ran.rsrp_dbm(u, 0) - ran.rsrp_dbm(0, 0)).collect();
        let expected = [0.0, -12.0 * (35.0f64 / 70.0).powi(2), -12.0 * (60.0f64 / 70.0).powi(2), -20.0];
        for (got, want) in d.iter().zip(expected) {
            assert!((got - want).abs() < 1e-9, "{d:?} vs {expected:?}");
        }
    }

    // A moving UE's fading runs at its own Doppler v·f_c/c: 108 km/h at 2.12 GHz is 212 Hz.
    #[test]
    fn moving_ue_fades_at_its_doppler() {
        use crate::mobility::{constant_velocity::ConstantVelocityConfig, Mobility, MobilitySpec, SpeedDist};
        let mut cfg = config(HandoverConfig::default());
        cfg.radio.fading = Some(crate::phy::fading::FadingProfile::Epa);
        cfg.radio.doppler_hz = 5.0;
        let enbs = [EnbSpec { name: "a".into(), position: (0.0, 0.0), boresight_deg: None }];
        let ues = [UeSpec { name: "car".into(), enb: 0, position: (100.0, 0.0), fixed_sinr_db: None, fixed_mcs: None }];
        let mut ran: Ran<u32> = Ran::new(cfg, &enbs, &ues, 1);
        assert_eq!(ran.ues[0].fading.as_ref().unwrap().doppler(), 5.0);
        let spec = MobilitySpec::ConstantVelocity(ConstantVelocityConfig {
            start: (100.0, 0.0),
            heading_deg: 0.0,
            speed: SpeedDist::Constant { kmh: 108.0 },
            region: None,
        });
        let m = Mobility::new(&spec, celltcp_engine::rng::component_rng(1, 1)).unwrap();
        ran.set_mobility(0, Some(m), None, None).unwrap();
        let fd = ran.ues[0].fading.as_ref().unwrap().doppler();
        assert!((fd - 30.0 * 2.12e9 / 299_792_458.0).abs() < 1e-9, "{fd}");
    }

    /// The source's proportional fair average of UE `ue` at `now` (0 when it has none).
    fn pf_avg(ran: &Ran<u32>, cell: usize, now: SimTime, ue: u32) -> f64 {
        match &ran.cells[cell].dl_sched {
            crate::mac::AnyScheduler::ProportionalFair(pf) => pf.avg_throughput_bits_per_tti(now, ue),
            other => panic!("expected the PF scheduler, got {:?}", other.kind()),
        }
    }

    // A UE that leaves a cell leaves no proportional fair average behind (ns-3's
    // PfFfMacScheduler erases a released UE's flow statistics): after the handover from a to
    // b the source's average of the UE is 0 (it would rank as a UE never served, were it back),
    // not the decayed (1 - 1/99)^Δ of what it had; the same for b after the UE returns to a.
    #[test]
    fn a_departed_ue_leaves_no_pf_average_in_the_source() {
        let enbs = [
            EnbSpec { name: "a".into(), position: (0.0, 0.0), boresight_deg: None },
            EnbSpec { name: "b".into(), position: (500.0, 0.0), boresight_deg: None },
        ];
        let ues = [UeSpec { name: "ue".into(), enb: 0, position: (250.0, 10.0), fixed_sinr_db: Some(15.0), fixed_mcs: None }];
        let mut ran: Ran<u32> = Ran::new(config(h(PdcpForwarding::Lossless)), &enbs, &ues, 7);
        ran.schedule_handover(SimTime::from_millis(300), 0, 1);
        ran.schedule_handover(SimTime::from_millis(700), 0, 0);
        let mut out = Vec::new();
        let (mut before, mut in_b) = (0.0f64, 0.0f64);
        for k in 0..1100u64 {
            let now = SimTime::from_millis(k);
            let _ = ran.on_downlink_sdu(now, 0, k as u32, 500);
            ran.on_tti(now, &mut out);
            out.clear();
            let next = now + SimDuration::from_millis(1);
            let serving = ran.ues[0].cell;
            let ev = ran.handover_events();
            let left = |i: usize| ev.get(i).is_some_and(|e| e.detach_s.is_finite() && e.detach_s <= now.as_secs_f64());
            if !left(0) {
                before = before.max(pf_avg(&ran, 0, next, 0));
            } else if !left(1) {
                assert_eq!(pf_avg(&ran, 0, next, 0), 0.0, "at {now:?} the source a still holds an average of the departed UE");
                if serving == 1 {
                    in_b = in_b.max(pf_avg(&ran, 1, next, 0));
                }
            } else {
                assert_eq!(pf_avg(&ran, 1, next, 0), 0.0, "at {now:?} b still holds an average of the UE back in a");
            }
        }
        let ev = ran.handover_events();
        assert_eq!(ev.len(), 2, "{ev:?}");
        assert!(ev.iter().all(|e| e.detach_s.is_finite() && e.attach_s.is_finite()), "{ev:?}");
        assert!(before > 100.0 && in_b > 100.0, "served in a ({before:.0} bits/TTI) and in b ({in_b:.0})");
    }
}
