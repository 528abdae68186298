//! HARQ entity with stop-and-wait processes (3GPP TS 36.321 §5.3.2 downlink, §5.4.2 uplink).
//!
//! One [`HarqEntity`] serves one UE in one direction. Each process holds one transport block
//! until it is acknowledged or has been sent `max_tx` times. The timing (feedback 4 subframes
//! after a transmission, synchronous uplink retransmission 8 subframes later, TS 36.213 §7.3,
//! §8.0) is applied by the caller, which calls [`HarqEntity::on_feedback`] when the ACK/NACK is
//! due and [`HarqEntity::retransmit`] when it schedules a retransmission.
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
    /// A transmission is on the air; its ACK/NACK is due.
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
}

impl<T> HarqProcess<T> {
    fn idle() -> Self {
        HarqProcess {
            state: HarqState::Idle,
            tb: None,
            first_tx_at: SimTime::ZERO,
            last_tx_at: SimTime::ZERO,
            n_prb: 0,
            mcs: 0,
            tx_count: 0,
            combined_sinr_lin: 0.0,
        }
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
            processes: (0..n_processes).map(|_| HarqProcess::idle()).collect(),
            max_tx,
            next_pid: 0,
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

    /// First transmission of block `tb` on idle process `pid`, received at effective SINR
    /// `eff_sinr_db` over `n_prb` PRBs with MCS index `mcs`.
    pub fn start(&mut self, pid: u8, now: SimTime, tb: T, eff_sinr_db: f64, n_prb: u16, mcs: u8) {
        let p = &mut self.processes[pid as usize];
        assert_eq!(p.state, HarqState::Idle, "HARQ process {pid} is busy");
        *p = HarqProcess {
            state: HarqState::AwaitingFeedback,
            tb: Some(tb),
            first_tx_at: now,
            last_tx_at: now,
            n_prb,
            mcs,
            tx_count: 1,
            combined_sinr_lin: db_to_lin(eff_sinr_db),
        };
        self.next_pid = ((pid as usize + 1) % self.processes.len()) as u8;
        self.stats.tbs_tx += 1;
    }

    /// The ACK (`decoded`) or NACK of the latest transmission on `pid`.
    pub fn on_feedback(&mut self, pid: u8, decoded: bool) -> HarqOutcome<T> {
        let max_tx = self.max_tx;
        let p = &mut self.processes[pid as usize];
        assert_eq!(
            p.state,
            HarqState::AwaitingFeedback,
            "no feedback due on HARQ process {pid}"
        );
        if decoded {
            self.stats.tbs_delivered += 1;
            let tb = p.tb.take().expect("busy process holds a block");
            *p = HarqProcess::idle();
            HarqOutcome::Delivered(tb)
        } else if p.tx_count >= max_tx {
            // TS 36.321 §5.4.2.2: flush the buffer once CURRENT_TX_NB reaches maxHARQ-Tx.
            self.stats.tbs_failed += 1;
            let tb = p.tb.take().expect("busy process holds a block");
            *p = HarqProcess::idle();
            HarqOutcome::Failed(tb)
        } else {
            p.state = HarqState::PendingRetx;
            HarqOutcome::Retransmit
        }
    }

    /// Retransmission of the block on `pid`, received at `eff_sinr_db`. Returns the
    /// Chase-combined SINR in dB after this transmission: `10·log10(Σ 10^(sinr_k/10))` over all
    /// transmissions so far, which the caller maps to a block error probability.
    pub fn retransmit(&mut self, pid: u8, now: SimTime, eff_sinr_db: f64) -> f64 {
        let p = &mut self.processes[pid as usize];
        assert_eq!(
            p.state,
            HarqState::PendingRetx,
            "HARQ process {pid} has no pending retransmission"
        );
        p.state = HarqState::AwaitingFeedback;
        p.tx_count += 1;
        p.last_tx_at = now;
        p.combined_sinr_lin += db_to_lin(eff_sinr_db);
        self.stats.tbs_retx += 1;
        p.combined_sinr_db()
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
            *p = HarqProcess::idle();
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

    /// One new block per TTI with feedback 4 TTIs later: 8 processes are used in turn and the
    /// 9th TTI reuses process 0 (FDD round trip of 8 TTIs, TS 36.213 §7).
    #[test]
    fn harq_eight_processes_cycle() {
        let mut h = HarqEntity::<u32>::new(N_HARQ_PROCESSES_FDD, DEFAULT_MAX_TX_DL);
        let mut used = Vec::new();
        for tti in 0..24u32 {
            let now = SimTime::from_millis(tti as u64);
            if tti >= 4 {
                // the ACK for the block sent at tti - 4
                let pid = used[(tti - 4) as usize];
                assert_eq!(h.on_feedback(pid, true), HarqOutcome::Delivered(tti - 4));
            }
            let pid = h.idle_process().expect("a free process");
            h.start(pid, now, tti, 10.0, 6, 10);
            used.push(pid);
        }
        assert_eq!(&used[..9], &[0, 1, 2, 3, 4, 5, 6, 7, 0]);
        // all busy: no idle process
        let mut h2 = HarqEntity::<u32>::new(8, 4);
        for i in 0..8 {
            let pid = h2.idle_process().unwrap();
            h2.start(pid, T0, i, 0.0, 1, 0);
        }
        assert_eq!(h2.idle_process(), None);
    }

    /// A block NACKed max_tx times fails; one NACKed fewer times asks for retransmission.
    #[test]
    fn harq_max_tx_failure() {
        let mut h = HarqEntity::<&str>::new(8, DEFAULT_MAX_TX_DL);
        h.start(3, T0, "tb", -5.0, 10, 5);
        for k in 1..DEFAULT_MAX_TX_DL {
            assert_eq!(h.on_feedback(3, false), HarqOutcome::Retransmit);
            assert_eq!(h.pending_retx().collect::<Vec<_>>(), vec![3]);
            assert_eq!(h.idle_process(), Some(4));
            h.retransmit(3, SimTime::from_millis(8 * k as u64), -5.0);
            assert_eq!(h.process(3).tx_count(), k + 1);
        }
        assert_eq!(h.on_feedback(3, false), HarqOutcome::Failed("tb"));
        assert_eq!(h.process(3).state(), HarqState::Idle);
        assert_eq!(h.pending_retx().count(), 0);
        let s = h.stats();
        assert_eq!(
            (s.tbs_tx, s.tbs_retx, s.tbs_failed, s.tbs_delivered),
            (1, 3, 1, 0)
        );
    }

    /// Chase combining: SINRs add in linear scale, so two equal transmissions gain 3 dB.
    #[test]
    fn harq_combining_increases_sinr() {
        let mut h = HarqEntity::<()>::new(8, 4);
        h.start(0, T0, (), 2.0, 4, 7);
        assert!((h.process(0).combined_sinr_db() - 2.0).abs() < 1e-12);
        h.on_feedback(0, false);
        let c2 = h.retransmit(0, SimTime::from_millis(8), 2.0);
        assert!((c2 - (2.0 + 10.0 * 2f64.log10())).abs() < 1e-9, "{c2}");
        h.on_feedback(0, false);
        let c3 = h.retransmit(0, SimTime::from_millis(16), -10.0);
        let expect = 10.0 * (2.0 * 10f64.powf(0.2) + 0.1).log10();
        assert!((c3 - expect).abs() < 1e-9 && c3 > c2);
        // PRBs and MCS are kept by the retransmission
        assert_eq!((h.process(0).n_prb(), h.process(0).mcs()), (4, 7));
        assert_eq!(h.process(0).last_tx_at(), SimTime::from_millis(16));
        assert_eq!(h.on_feedback(0, true), HarqOutcome::Delivered(()));
    }

    #[test]
    fn harq_stats_and_reset() {
        let mut h = HarqEntity::<u32>::new(4, 2);
        for i in 0..4 {
            h.start(i as u8, T0, i, 0.0, 1, 1);
        }
        h.on_feedback(0, true);
        h.on_feedback(1, false);
        h.retransmit(1, SimTime::from_millis(8), 0.0);
        assert_eq!(h.on_feedback(1, false), HarqOutcome::Failed(1));
        h.on_feedback(2, false);
        let mut flushed = Vec::new();
        h.reset(&mut flushed);
        assert_eq!(flushed, vec![2, 3]);
        let s = h.stats();
        assert_eq!(
            (s.tbs_tx, s.tbs_retx, s.tbs_delivered, s.tbs_failed),
            (4, 1, 1, 1)
        );
        assert_eq!(h.idle_process(), Some(0));
    }
}
