//! HARQ timing: when the feedback of a transmission arrives and when its process may go again,
//! for FDD and the seven TDD uplink-downlink configurations.
//!
//! - **Downlink** (asynchronous HARQ, TS 36.321 §5.3.2): the UE sends HARQ-ACK for a PDSCH in
//!   subframe n − k in uplink subframe n, k ∈ K(n), the downlink association set of TS 36.213
//!   Table 10.1.3.1-1 (FDD: k = 4, §10.1.2.1). The eNB may retransmit (or reuse the process)
//!   from 4 subframes after the HARQ-ACK (its processing time, the same 4 subframes as the
//!   UE's; this is what makes TS 36.213 Table 7-1's process counts, see `phy/tdd.rs`).
//!   FDD: 4 + 4 = 8 ms.
//! - **Uplink** (synchronous HARQ, TS 36.321 §5.4.2): the PHICH for a PUSCH in subframe n is
//!   in n + k, k from TS 36.213 Table 9.1.2-1 (FDD: 4, §9.1.2); the non-adaptive
//!   retransmission follows the PHICH as a grant in that subframe would, k of Table 8-2
//!   (at least 4). FDD: 4 + 4 = 8 ms.
//!
//! The tables themselves are in [`crate::phy::tdd`] (frame structure); this module turns them
//! into instants for the HARQ entity ([`super::harq::HarqEntity::on_feedback`] takes the
//! instant from which the process may transmit again). The model receives a block, and learns
//! whether it decoded, one TTI after it was sent (decoding is drawn then); only the reuse of
//! the process waits for the feedback instant.

use celltcp_engine::{SimDuration, SimTime};

use crate::phy::tdd::Duplex;
use crate::Direction;

/// Subframe processing time of the eNB and the UE (TS 36.213 §8.0, §10.1: 4 subframes).
pub const PROCESSING_SUBFRAMES: u64 = 4;

const TTI_NS: u64 = 1_000_000;

fn subframe(t: SimTime) -> u8 {
    ((t.as_nanos() / TTI_NS) % 10) as u8
}

fn ms(k: u64) -> SimDuration {
    SimDuration::from_millis(k)
}

/// The HARQ timing of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HarqTiming {
    pub duplex: Duplex,
}

impl HarqTiming {
    pub fn new(duplex: Duplex) -> Self {
        HarqTiming { duplex }
    }

    /// Downlink: the uplink subframe carrying HARQ-ACK for a PDSCH sent at `sent`
    /// (Table 10.1.3.1-1; FDD n + 4).
    pub fn harq_ack_at(&self, sent: SimTime) -> SimTime {
        sent + ms(u64::from(self.duplex.dl_harq_ack_delay(subframe(sent))))
    }

    /// Uplink: the subframe carrying the PHICH for a PUSCH sent at `sent` (Table 9.1.2-1;
    /// FDD n + 4).
    pub fn phich_at(&self, sent: SimTime) -> SimTime {
        sent + ms(u64::from(self.duplex.phich_delay(subframe(sent))))
    }

    /// When the process that sent at `sent` may transmit again (a retransmission, or a new block
    /// once this one is acknowledged): FDD `sent + 8` in both directions; TDD downlink
    /// HARQ-ACK + 4; TDD uplink PHICH + k of Table 8-2 for the PHICH subframe (at least 4).
    pub fn next_tx_at(&self, sent: SimTime, dir: Direction) -> SimTime {
        match (self.duplex, dir) {
            (Duplex::Fdd, _) => sent + ms(2 * PROCESSING_SUBFRAMES),
            (_, Direction::Downlink) => self.harq_ack_at(sent) + ms(PROCESSING_SUBFRAMES),
            (d, Direction::Uplink) => {
                let phich = self.phich_at(sent);
                let g = u64::from(d.ul_grant_delay(subframe(phich))).max(PROCESSING_SUBFRAMES);
                phich + ms(g)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::tdd::SubframeKind;

    /// TS 36.211 Table 4.2-2, uplink-downlink configurations 0..=6 (D, S, U).
    const FRAME: [&str; 7] = ["DSUUUDSUUU", "DSUUDDSUUD", "DSUDDDSUDD", "DSUUUDDDDD", "DSUUDDDDDD", "DSUDDDDDDD", "DSUUUDSUUD"];

    /// TS 36.213 Table 9.1.2-1: k for PHICH in n + k after a PUSCH in subframe n, per
    /// configuration and subframe (blank = no PUSCH).
    const TABLE_9_1_2_1: [[Option<u8>; 10]; 7] = {
        const N: Option<u8> = None;
        [
            [N, N, Some(4), Some(7), Some(6), N, N, Some(4), Some(7), Some(6)],
            [N, N, Some(4), Some(6), N, N, N, Some(4), Some(6), N],
            [N, N, Some(6), N, N, N, N, Some(6), N, N],
            [N, N, Some(6), Some(6), Some(6), N, N, N, N, N],
            [N, N, Some(6), Some(6), N, N, N, N, N, N],
            [N, N, Some(6), N, N, N, N, N, N, N],
            [N, N, Some(4), Some(6), Some(6), N, N, Some(4), Some(7), N],
        ]
    };

    /// TS 36.213 Table 10.1.3.1-1: downlink association set K = {k0, k1, …} of uplink
    /// subframe n (HARQ-ACK in n for PDSCH in n − k).
    const TABLE_10_1_3_1_1: [[&[u8]; 10]; 7] = [
        [&[], &[], &[6], &[], &[4], &[], &[], &[6], &[], &[4]],
        [&[], &[], &[7, 6], &[4], &[], &[], &[], &[7, 6], &[4], &[]],
        [&[], &[], &[8, 7, 4, 6], &[], &[], &[], &[], &[8, 7, 4, 6], &[], &[]],
        [&[], &[], &[7, 6, 11], &[6, 5], &[5, 4], &[], &[], &[], &[], &[]],
        [&[], &[], &[12, 8, 7, 11], &[6, 5, 4, 7], &[], &[], &[], &[], &[], &[]],
        [&[], &[], &[13, 12, 9, 8, 7, 5, 4, 11, 6], &[], &[], &[], &[], &[], &[], &[]],
        [&[], &[], &[7], &[7], &[5], &[], &[], &[7], &[7], &[]],
    ];

    fn at(frame: u64, sf: u64) -> SimTime {
        SimTime::from_millis(10 * frame + sf)
    }

    fn k(a: SimTime, b: SimTime) -> u64 {
        (a.as_nanos() - b.as_nanos()) / TTI_NS
    }

    // FDD (TS 36.213 §9.1.2, §10.1.2.1): PHICH and HARQ-ACK 4 subframes after the
    // transmission, the process free again 8 subframes after it, in every subframe and frame.
    #[test]
    fn harq_timing_fdd_is_4_and_8() {
        let t = HarqTiming::new(Duplex::Fdd);
        for frame in 0..3 {
            for sf in 0..10 {
                let sent = at(frame, sf);
                assert_eq!(k(t.harq_ack_at(sent), sent), 4);
                assert_eq!(k(t.phich_at(sent), sent), 4);
                assert_eq!(k(t.next_tx_at(sent, Direction::Downlink), sent), 8);
                assert_eq!(k(t.next_tx_at(sent, Direction::Uplink), sent), 8);
            }
        }
    }

    // Every TDD configuration against the two tables typed from the spec: the PHICH of each
    // PUSCH subframe is k of Table 9.1.2-1 later and lands in a subframe with a PHICH (D or S);
    // the uplink retransmission is in an uplink subframe at least 4 subframes after the PHICH.
    // The HARQ-ACK of each PDSCH subframe (D or S) is in the uplink subframe n whose set K(n)
    // of Table 10.1.3.1-1 holds the delay, every entry of every K(n) is used by exactly one
    // PDSCH subframe, and the process may go again 4 subframes after the HARQ-ACK.
    #[test]
    fn harq_timing_tdd_matches_tables_9_1_2_1_and_10_1_3_1_1() {
        for c in 0..7u8 {
            let t = HarqTiming::new(Duplex::new_tdd(c, 7).unwrap());
            let kind = |sf: u64| FRAME[c as usize].as_bytes()[(sf % 10) as usize];
            // The frame pattern the model uses is TS 36.211 Table 4.2-2.
            for sf in 0..10u8 {
                let want = match kind(u64::from(sf)) {
                    b'D' => SubframeKind::Downlink,
                    b'S' => SubframeKind::Special,
                    _ => SubframeKind::Uplink,
                };
                assert_eq!(t.duplex.subframe_kind(sf), want, "config {c} sf {sf}");
            }
            let mut used: Vec<Vec<u8>> = vec![Vec::new(); 10];
            for frame in 0..2 {
                for sf in 0..10u64 {
                    let sent = at(frame, sf);
                    if kind(sf) == b'U' {
                        let kp = TABLE_9_1_2_1[c as usize][sf as usize].expect("every U subframe has a PHICH k");
                        let phich = t.phich_at(sent);
                        assert_eq!(k(phich, sent), u64::from(kp), "config {c}: PHICH of PUSCH in sf {sf}");
                        assert_ne!(kind(k(phich, SimTime::ZERO)), b'U', "config {c}: PHICH in a D/S subframe");
                        let retx = t.next_tx_at(sent, Direction::Uplink);
                        assert_eq!(kind(k(retx, SimTime::ZERO)), b'U', "config {c}: UL retransmission of sf {sf} in a U subframe");
                        assert!(k(retx, phich) >= 4, "config {c}: 4 subframes to prepare the retransmission");
                    } else {
                        assert_eq!(TABLE_9_1_2_1[c as usize][sf as usize], None);
                        let ack = t.harq_ack_at(sent);
                        let d = k(ack, sent) as u8;
                        let n = (k(ack, SimTime::ZERO) % 10) as usize;
                        assert!(TABLE_10_1_3_1_1[c as usize][n].contains(&d), "config {c}: PDSCH in sf {sf} acknowledged in sf {n}, k = {d}, K(n) = {:?}", TABLE_10_1_3_1_1[c as usize][n]);
                        if frame == 0 {
                            used[n].push(d);
                        }
                        assert_eq!(k(t.next_tx_at(sent, Direction::Downlink), ack), 4, "config {c} sf {sf}");
                    }
                }
            }
            for n in 0..10 {
                let mut want = TABLE_10_1_3_1_1[c as usize][n].to_vec();
                want.sort_unstable();
                used[n].sort_unstable();
                assert_eq!(used[n], want, "config {c}: every k of K({n}) used once");
            }
        }
    }

    // Spot values worked by hand: configuration 1, PUSCH in subframe 3 → PHICH in 9 (k = 6),
    // retransmission in 9 + 4 = 13 (subframe 3 of the next frame, Table 8-2 k = 4): 10 ms.
    // Configuration 0, PUSCH in 3 → PHICH in 10 (k = 7), Table 8-2 for subframe 0: k = 4 →
    // 14. Configuration 5, PDSCH in subframe 9 → HARQ-ACK in 22 (k = 13), free from 26.
    #[test]
    fn harq_timing_tdd_spot_values() {
        let c1 = HarqTiming::new(Duplex::new_tdd(1, 7).unwrap());
        assert_eq!(k(c1.next_tx_at(at(0, 3), Direction::Uplink), at(0, 3)), 10);
        let c0 = HarqTiming::new(Duplex::new_tdd(0, 7).unwrap());
        assert_eq!(c0.next_tx_at(at(0, 3), Direction::Uplink), at(1, 4));
        let c5 = HarqTiming::new(Duplex::new_tdd(5, 7).unwrap());
        assert_eq!(c5.harq_ack_at(at(0, 9)), at(2, 2));
        assert_eq!(c5.next_tx_at(at(0, 9), Direction::Downlink), at(2, 6));
    }
}
