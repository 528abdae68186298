//! HARQ entity with stop-and-wait processes (3GPP TS 36.321 §5.3.2 downlink, §5.4.2 uplink).
//!
//! One [`HarqEntity`] serves one UE in one direction, and is the only HARQ state of the model:
//! each process holds its transport block, the PRBs and size it was sent with, and the instants
//! that govern it — when the process may transmit again (one HARQ round trip after its last
//! transmission, [`super::harq_timing`]) and, after a NACK, when the retransmission is due.
//! A process holds its block until it is acknowledged or has been sent `max_tx` times.
//!
//! Life of a block: [`HarqEntity::start`] (first transmission, on a process that
//! [`HarqEntity::free_process`] found), [`HarqEntity::combine`] (the block's reception at an
//! effective SINR), [`HarqEntity::on_feedback`] (ACK/NACK, with the instant from which the
//! process may go again), then on a NACK [`HarqEntity::begin_retx`] and `combine` again.
//!
//! Soft combining model: Chase combining with maximum-ratio combining of identical
//! retransmissions, so the post-combining SINR is the sum of the linear effective SINRs of all
//! transmissions of the block (Chase 1985; the usual system-level abstraction, e.g. the Vienna LTE
//! simulators). The caller maps the combined SINR to a block error probability with the MCS of
//! the first transmission, which a retransmission keeps (the block size must not change,
//! TS 36.213 §7.1.7.2). Incremental redundancy gains are not modelled.

use celltcp_engine::SimTime;

/// HARQ processes per UE and direction in FDD (TS 36.213 §7: "a maximum of 8 downlink HARQ
/// processes"; §8: 8 uplink processes for FDD).
pub const N_HARQ_PROCESSES_FDD: u8 = 8;

/// Default maximum number of transmissions of a downlink transport block: 4, i.e. 3
/// retransmissions. The DL limit is an eNB implementation choice (TS 36.321 §5.3.2.1 leaves it
/// to the eNB); 4 is the common value, and ns-3's schedulers drop a process once its redundancy
/// version reaches 3, i.e. after 4 transmissions.
pub const DEFAULT_MAX_TX_DL: u8 = 4;

/// Default maximum number of transmissions of an uplink transport block: `maxHARQ-Tx` n5, its
/// default value in `MAC-MainConfig` (TS 36.331 §9.2.2).
pub const DEFAULT_MAX_TX_UL: u8 = 5;

/// State of one HARQ process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HarqState {
    /// No transport block held: the process can take a new one.
    Idle,
    /// A transmission is on the air (or just started); its ACK/NACK is due.
    AwaitingFeedback,
    /// NACKed and waiting for the scheduler to retransmit.
    PendingRetx,
}

/// One stop-and-wait HARQ process (TS 36.321 §5.3.2.2, §5.4.2.2).
#[derive(Clone, Debug)]
pub struct HarqProcess<T> {
    state: HarqState,
    tb: Option<T>,
    first_tx_at: SimTime,
    last_tx_at: SimTime,
    n_prb: u16,
    mcs: u8,
    tx_count: u8,
    combined_sinr_lin: f64,
    /// PRBs of the latest transmission (bit i = PRB i).
    prb_mask: u128,
    /// Transport block size, bits (kept by retransmissions).
    tb_bits: u32,
    /// The process may transmit again from this instant (HARQ round trip).
    free_at: SimTime,
    /// After a NACK: the retransmission is due from this instant (`SimTime::MAX`: none).
    retx_at: SimTime,
    /// Order of the NACKs, so that synchronous retransmissions go out first-NACKed first.
    nack_seq: u64,
}

impl<T> HarqProcess<T> {
    fn idle(free_at: SimTime) -> Self {
        HarqProcess {
            state: HarqState::Idle,
            tb: None,
            first_tx_at: SimTime::ZERO,
            last_tx_at: SimTime::ZERO,
            n_prb: 0,
            mcs: 0,
            tx_count: 0,
            combined_sinr_lin: 0.0,
            prb_mask: 0,
            tb_bits: 0,
            free_at,
            retx_at: SimTime::MAX,
            nack_seq: 0,
        }
    }

    /// Whether the process can take a new block at `t`: idle, and its round trip is over.
    pub fn is_free(&self, t: SimTime) -> bool {
        self.state == HarqState::Idle && self.free_at <= t
    }

    /// PRBs of the latest transmission.
    pub fn prb_mask(&self) -> u128 {
        self.prb_mask
    }

    /// Transport block size, bits.
    pub fn tb_bits(&self) -> u32 {
        self.tb_bits
    }

    /// When a NACKed block's retransmission is due (`SimTime::MAX`: none pending).
    pub fn retx_at(&self) -> SimTime {
        self.retx_at
    }

    /// The process state.
    pub fn state(&self) -> HarqState {
        self.state
    }

    /// The transport block held, if any.
    pub fn tb(&self) -> Option<&T> {
        self.tb.as_ref()
    }

    /// PRBs of the transmission (kept by retransmissions).
    pub fn n_prb(&self) -> u16 {
        self.n_prb
    }

    /// MCS index of the first transmission (kept by retransmissions).
    pub fn mcs(&self) -> u8 {
        self.mcs
    }

    /// Transmissions so far (`CURRENT_TX_NB + 1` in TS 36.321 §5.4.2.2 terms).
    pub fn tx_count(&self) -> u8 {
        self.tx_count
    }

    /// Chase-combined effective SINR of all transmissions so far, in dB (`-inf` when idle).
    pub fn combined_sinr_db(&self) -> f64 {
        10.0 * self.combined_sinr_lin.log10()
    }

    /// Time of the first transmission of the current block.
    pub fn first_tx_at(&self) -> SimTime {
        self.first_tx_at
    }

    /// Time of the latest transmission of the current block.
    pub fn last_tx_at(&self) -> SimTime {
        self.last_tx_at
    }
}

/// What the feedback of a transmission means for its transport block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HarqOutcome<T> {
    /// ACK: the block is decoded; hand it up. The process is idle again.
    Delivered(T),
    /// NACK with transmissions left: the process waits for [`HarqEntity::retransmit`].
    Retransmit,
    /// NACK after `max_tx` transmissions: the block is lost (RLC AM recovers it). The process is
    /// idle again.
    Failed(T),
}

/// Counters of a [`HarqEntity`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HarqStats {
    /// New transport blocks sent (first transmissions).
    pub tbs_tx: u64,
    /// Retransmissions sent.
    pub tbs_retx: u64,
    /// Blocks decoded.
    pub tbs_delivered: u64,
    /// Blocks given up after `max_tx` transmissions.
    pub tbs_failed: u64,
}

/// The HARQ entity of one UE in one direction (TS 36.321 §5.3.2.1, §5.4.2.1).
#[derive(Clone, Debug)]
pub struct HarqEntity<T> {
    processes: Vec<HarqProcess<T>>,
    max_tx: u8,
    /// Where the search for an idle process starts, so processes are used in turn.
    next_pid: u8,
    nacks: u64,
    stats: HarqStats,
}

fn db_to_lin(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

impl<T> HarqEntity<T> {
    /// An entity with `n_processes` processes (8 in FDD, [`N_HARQ_PROCESSES_FDD`]) and at most
    /// `max_tx` transmissions per block ([`DEFAULT_MAX_TX_DL`], [`DEFAULT_MAX_TX_UL`]).
    pub fn new(n_processes: u8, max_tx: u8) -> Self {
        assert!(n_processes >= 1, "at least one HARQ process");
        assert!(max_tx >= 1, "max_tx counts the first transmission");
        HarqEntity {
            processes: (0..n_processes).map(|_| HarqProcess::idle(SimTime::ZERO)).collect(),
            max_tx,
            next_pid: 0,
            nacks: 0,
            stats: HarqStats::default(),
        }
    }

    /// Number of processes.
    pub fn n_processes(&self) -> u8 {
        self.processes.len() as u8
    }

    /// Maximum transmissions per block.
    pub fn max_tx(&self) -> u8 {
        self.max_tx
    }

    /// An idle process for a new block, searching round-robin from the one after the last
    /// started, so that with one new block per TTI the processes are used cyclically.
    pub fn idle_process(&self) -> Option<u8> {
        let n = self.processes.len();
        (0..n)
            .map(|k| (self.next_pid as usize + k) % n)
            .find(|&p| self.processes[p].state == HarqState::Idle)
            .map(|p| p as u8)
    }

    /// The lowest-numbered process free for a new block at `t` (idle, round trip over).
    pub fn free_process(&self, t: SimTime) -> Option<u8> {
        self.processes.iter().position(|p| p.is_free(t)).map(|p| p as u8)
    }

    /// First transmission at `now` of block `tb` on process `pid` (idle), on the PRBs of
    /// `prb_mask` (`n_prb` of them) with MCS index `mcs` and `tb_bits` bits. Its reception is
    /// given by [`combine`](Self::combine).
    #[allow(clippy::too_many_arguments)]
    pub fn start(&mut self, pid: u8, now: SimTime, tb: T, n_prb: u16, mcs: u8, prb_mask: u128, tb_bits: u32) {
        let p = &mut self.processes[pid as usize];
        assert_eq!(p.state, HarqState::Idle, "HARQ process {pid} is busy");
        let free_at = p.free_at;
        *p = HarqProcess {
            state: HarqState::AwaitingFeedback,
            tb: Some(tb),
            first_tx_at: now,
            last_tx_at: now,
            n_prb,
            mcs,
            tx_count: 1,
            combined_sinr_lin: 0.0,
            prb_mask,
            tb_bits,
            free_at,
            retx_at: SimTime::MAX,
            nack_seq: 0,
        };
        self.next_pid = ((pid as usize + 1) % self.processes.len()) as u8;
        self.stats.tbs_tx += 1;
    }

    /// The latest transmission on `pid` was received at effective SINR `eff_sinr_db`. Returns
    /// the SINR to decode with: that SINR for a first transmission, else the Chase-combined
    /// `10·log10(Σ 10^(sinr_k/10))` over all transmissions so far.
    pub fn combine(&mut self, pid: u8, eff_sinr_db: f64) -> f64 {
        let p = &mut self.processes[pid as usize];
        assert_eq!(p.state, HarqState::AwaitingFeedback, "nothing on the air on HARQ process {pid}");
        p.combined_sinr_lin += db_to_lin(eff_sinr_db);
        if p.tx_count == 1 {
            eff_sinr_db
        } else {
            p.combined_sinr_db()
        }
    }

    /// The ACK (`decoded`) or NACK of the latest transmission on `pid`; the process may
    /// transmit again (retransmit, or take a new block) from `next_tx_at`
    /// ([`super::harq_timing::HarqTiming::next_tx_at`]).
    pub fn on_feedback(&mut self, pid: u8, decoded: bool, next_tx_at: SimTime) -> HarqOutcome<T> {
        let max_tx = self.max_tx;
        let p = &mut self.processes[pid as usize];
        assert_eq!(p.state, HarqState::AwaitingFeedback, "no feedback due on HARQ process {pid}");
        if decoded {
            self.stats.tbs_delivered += 1;
            let tb = p.tb.take().expect("busy process holds a block");
            *p = HarqProcess::idle(next_tx_at);
            HarqOutcome::Delivered(tb)
        } else if p.tx_count >= max_tx {
            // TS 36.321 §5.4.2.2: flush the buffer once CURRENT_TX_NB reaches maxHARQ-Tx.
            self.stats.tbs_failed += 1;
            let tb = p.tb.take().expect("busy process holds a block");
            *p = HarqProcess::idle(next_tx_at);
            HarqOutcome::Failed(tb)
        } else {
            p.state = HarqState::PendingRetx;
            p.free_at = next_tx_at;
            p.retx_at = next_tx_at;
            p.nack_seq = self.nacks;
            self.nacks += 1;
            HarqOutcome::Retransmit
        }
    }

    /// Retransmission at `now` of the NACKed block on `pid`, on the PRBs of `prb_mask` (as
    /// many as the first transmission). Its reception is given by [`combine`](Self::combine).
    pub fn begin_retx(&mut self, pid: u8, now: SimTime, prb_mask: u128) {
        let p = &mut self.processes[pid as usize];
        assert_eq!(p.state, HarqState::PendingRetx, "HARQ process {pid} has no pending retransmission");
        p.state = HarqState::AwaitingFeedback;
        p.tx_count += 1;
        p.last_tx_at = now;
        p.prb_mask = prb_mask;
        p.retx_at = SimTime::MAX;
        self.stats.tbs_retx += 1;
    }

    /// Whether a NACKed block waits for its retransmission.
    pub fn has_pending_retx(&self) -> bool {
        self.processes.iter().any(|p| p.state == HarqState::PendingRetx)
    }

    /// Synchronous HARQ (uplink, TS 36.321 §5.4.2.2): the process NACKed first, if its
    /// retransmission is due at `now`.
    pub fn next_due_retx(&self, now: SimTime) -> Option<u8> {
        let (pid, p) = self.processes.iter().enumerate().filter(|(_, p)| p.state == HarqState::PendingRetx).min_by_key(|(_, p)| p.nack_seq)?;
        (p.retx_at <= now).then_some(pid as u8)
    }

    /// Processes waiting for a retransmission, in process order.
    pub fn pending_retx(&self) -> impl Iterator<Item = u8> + '_ {
        self.processes
            .iter()
            .enumerate()
            .filter(|(_, p)| p.state == HarqState::PendingRetx)
            .map(|(i, _)| i as u8)
    }

    /// Process `pid`.
    pub fn process(&self, pid: u8) -> &HarqProcess<T> {
        &self.processes[pid as usize]
    }

    /// Drops every held block (MAC reset at handover, TS 36.321 §5.9) and returns them in process
    /// order; RLC AM recovers their content.
    pub fn reset(&mut self, flushed: &mut Vec<T>) {
        for p in &mut self.processes {
            if let Some(tb) = p.tb.take() {
                flushed.push(tb);
            }
            *p = HarqProcess::idle(SimTime::ZERO);
        }
        self.next_pid = 0;
    }

    /// Counters.
    pub fn stats(&self) -> HarqStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: SimTime = SimTime::ZERO;

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    /// One new block per TTI, decoded, with the FDD round trip of 8 TTIs (TS 36.213 §7, §8):
    /// 8 processes are used in turn, the 9th TTI reuses process 0, and a process is not free
    /// before its round trip is over even though its block was acknowledged.
    #[test]
    fn harq_eight_processes_cycle() {
        let mut h = HarqEntity::<u32>::new(N_HARQ_PROCESSES_FDD, DEFAULT_MAX_TX_DL);
        let mut used = Vec::new();
        for tti in 0..24u64 {
            let now = ms(tti);
            if tti >= 1 {
                // decoded one TTI later; the process may go again 8 TTIs after the transmission
                let pid = used[(tti - 1) as usize];
                assert_eq!(h.on_feedback(pid, true, ms(tti - 1 + 8)), HarqOutcome::Delivered(tti as u32 - 1));
                assert!(!h.process(pid).is_free(now), "round trip not over at {tti}");
            }
            let pid = h.free_process(now).expect("a free process");
            h.start(pid, now, tti as u32, 6, 10, 0b111111, 1000);
            assert_eq!(h.combine(pid, 10.0), 10.0);
            used.push(pid);
        }
        assert_eq!(&used[..9], &[0, 1, 2, 3, 4, 5, 6, 7, 0]);
        // all busy: no free process
        let mut h2 = HarqEntity::<u32>::new(8, 4);
        for i in 0..8 {
            let pid = h2.free_process(T0).unwrap();
            h2.start(pid, T0, i, 1, 0, 1, 16);
        }
        assert_eq!(h2.free_process(T0), None);
        assert_eq!(h2.idle_process(), None);
    }

    /// A block NACKed max_tx times fails; one NACKed fewer times asks for retransmission at
    /// the instant given with the feedback.
    #[test]
    fn harq_max_tx_failure() {
        let mut h = HarqEntity::<&str>::new(8, DEFAULT_MAX_TX_DL);
        h.start(3, T0, "tb", 10, 5, 0b1010, 500);
        h.combine(3, -5.0);
        for k in 1..DEFAULT_MAX_TX_DL {
            let due = ms(8 * k as u64);
            assert_eq!(h.on_feedback(3, false, due), HarqOutcome::Retransmit);
            assert_eq!(h.pending_retx().collect::<Vec<_>>(), vec![3]);
            assert!(h.has_pending_retx());
            assert_eq!(h.process(3).retx_at(), due);
            assert_eq!(h.next_due_retx(due - celltcp_engine::SimDuration::from_millis(1)), None);
            assert_eq!(h.next_due_retx(due), Some(3));
            assert_eq!(h.free_process(due), Some(0));
            h.begin_retx(3, due, 0b0101);
            h.combine(3, -5.0);
            assert_eq!(h.process(3).tx_count(), k + 1);
            assert_eq!((h.process(3).prb_mask(), h.process(3).tb_bits()), (0b0101, 500));
            assert_eq!(h.process(3).retx_at(), SimTime::MAX);
        }
        assert_eq!(h.on_feedback(3, false, ms(40)), HarqOutcome::Failed("tb"));
        assert_eq!(h.process(3).state(), HarqState::Idle);
        assert!(!h.process(3).is_free(ms(39)) && h.process(3).is_free(ms(40)));
        assert_eq!(h.pending_retx().count(), 0);
        let s = h.stats();
        assert_eq!((s.tbs_tx, s.tbs_retx, s.tbs_failed, s.tbs_delivered), (1, 3, 1, 0));
    }

    /// Synchronous uplink HARQ: retransmissions go out in the order of their NACKs, and the
    /// first-NACKed one holds the others back until it is due.
    #[test]
    fn harq_retransmissions_in_nack_order() {
        let mut h = HarqEntity::<u8>::new(4, 4);
        for pid in [2u8, 0, 1] {
            h.start(pid, T0, pid, 1, 1, 1, 16);
            h.combine(pid, 0.0);
        }
        assert_eq!(h.on_feedback(2, false, ms(9)), HarqOutcome::Retransmit);
        assert_eq!(h.on_feedback(0, false, ms(8)), HarqOutcome::Retransmit);
        assert_eq!(h.on_feedback(1, true, ms(8)), HarqOutcome::Delivered(1));
        assert_eq!(h.next_due_retx(ms(8)), None, "process 2 was NACKed first and is due at 9");
        assert_eq!(h.next_due_retx(ms(9)), Some(2));
        h.begin_retx(2, ms(9), 1);
        assert_eq!(h.next_due_retx(ms(9)), Some(0));
    }

    /// Chase combining: SINRs add in linear scale, so two equal transmissions gain 3 dB.
    #[test]
    fn harq_combining_increases_sinr() {
        let mut h = HarqEntity::<()>::new(8, 4);
        h.start(0, T0, (), 4, 7, 0b1111, 800);
        assert_eq!(h.combine(0, 2.0), 2.0);
        assert!((h.process(0).combined_sinr_db() - 2.0).abs() < 1e-12);
        h.on_feedback(0, false, ms(8));
        h.begin_retx(0, ms(8), 0b1111);
        let c2 = h.combine(0, 2.0);
        assert!((c2 - (2.0 + 10.0 * 2f64.log10())).abs() < 1e-9, "{c2}");
        h.on_feedback(0, false, ms(16));
        h.begin_retx(0, ms(16), 0b1111);
        let c3 = h.combine(0, -10.0);
        let expect = 10.0 * (2.0 * 10f64.powf(0.2) + 0.1).log10();
        assert!((c3 - expect).abs() < 1e-9 && c3 > c2);
        // PRBs and MCS are kept by the retransmission
        assert_eq!((h.process(0).n_prb(), h.process(0).mcs()), (4, 7));
        assert_eq!(h.process(0).last_tx_at(), ms(16));
        assert_eq!(h.on_feedback(0, true, ms(24)), HarqOutcome::Delivered(()));
    }

    #[test]
    fn harq_stats_and_reset() {
        let mut h = HarqEntity::<u32>::new(4, 2);
        for i in 0..4 {
            h.start(i as u8, T0, i, 1, 1, 1, 16);
            h.combine(i as u8, 0.0);
        }
        h.on_feedback(0, true, ms(8));
        h.on_feedback(1, false, ms(8));
        h.begin_retx(1, ms(8), 1);
        h.combine(1, 0.0);
        assert_eq!(h.on_feedback(1, false, ms(16)), HarqOutcome::Failed(1));
        h.on_feedback(2, false, ms(8));
        let mut flushed = Vec::new();
        h.reset(&mut flushed);
        assert_eq!(flushed, vec![2, 3]);
        let s = h.stats();
        assert_eq!((s.tbs_tx, s.tbs_retx, s.tbs_delivered, s.tbs_failed), (4, 1, 1, 1));
        assert_eq!(h.idle_process(), Some(0));
        assert_eq!(h.free_process(T0), Some(0), "a reset frees every process at once");
    }
}
