//! Frame structure and HARQ/scheduling timing for FDD (frame structure type 1) and TDD
//! (type 2), normal cyclic prefix.
//!
//! Tables:
//! - uplink-downlink configurations 0..=6: TS 36.211 Table 4.2-2;
//! - special subframe configurations 0..=9 (DwPTS length): TS 36.211 Table 4.2-1; DwPTS of
//!   configurations 0 and 5 (3 OFDM symbols) carries no PDSCH (TS 36.213 §7.1.7);
//! - DL HARQ processes: TS 36.213 Table 7-1; UL HARQ processes: Table 8-1;
//! - UL grant → PUSCH delay k: Table 8-2 (plus the configuration-0 `n+7` option of §8.0);
//! - PUSCH → PHICH delay: Table 9.1.2-1;
//! - PDSCH → HARQ-ACK delay: inverse of the downlink association set of Table 10.1.3.1-1.
//!
//! Subframe arguments are taken modulo 10, so a TTI counter can be passed directly.

/// What a subframe carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubframeKind {
    /// Downlink subframe.
    Downlink,
    /// Uplink subframe.
    Uplink,
    /// Special subframe: DwPTS, guard period, UpPTS.
    Special,
}

/// Duplex mode of the cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Duplex {
    /// Paired spectrum: every subframe carries both a downlink and an uplink subframe.
    Fdd,
    /// TDD with uplink-downlink configuration `config` (0..=6) and special subframe
    /// configuration `special_config` (0..=9); build it with [`Duplex::new_tdd`].
    Tdd { config: u8, special_config: u8 },
}

use SubframeKind::{Downlink as D, Special as S, Uplink as U};

/// TS 36.211 Table 4.2-2.
const PATTERN: [[SubframeKind; 10]; 7] = [
    [D, S, U, U, U, D, S, U, U, U],
    [D, S, U, U, D, D, S, U, U, D],
    [D, S, U, D, D, D, S, U, D, D],
    [D, S, U, U, U, D, D, D, D, D],
    [D, S, U, U, D, D, D, D, D, D],
    [D, S, U, D, D, D, D, D, D, D],
    [D, S, U, U, U, D, S, U, U, D],
];

/// DwPTS length in OFDM symbols for special subframe configurations 0..=9, normal CP in
/// both directions (TS 36.211 Table 4.2-1).
const DWPTS_SYMBOLS: [u8; 10] = [3, 9, 10, 11, 12, 3, 9, 10, 11, 6];

/// TS 36.213 Table 7-1: maximum number of DL HARQ processes.
const DL_HARQ_PROCESSES: [u8; 7] = [4, 7, 10, 9, 12, 15, 6];

/// TS 36.213 Table 8-1: number of synchronous UL HARQ processes.
const UL_HARQ_PROCESSES: [u8; 7] = [7, 4, 2, 3, 2, 1, 6];

/// TS 36.213 Table 8-2: PDCCH (DCI 0) / PHICH in subframe n → PUSCH in n + k (0 = none).
const K_PUSCH: [[u8; 10]; 7] = [
    [4, 6, 0, 0, 0, 4, 6, 0, 0, 0],
    [0, 6, 0, 0, 4, 0, 6, 0, 0, 4],
    [0, 0, 0, 4, 0, 0, 0, 0, 4, 0],
    [4, 0, 0, 0, 0, 0, 0, 0, 4, 4],
    [0, 0, 0, 0, 0, 0, 0, 0, 4, 4],
    [0, 0, 0, 0, 0, 0, 0, 0, 4, 0],
    [7, 7, 0, 0, 0, 7, 7, 0, 0, 5],
];

/// TS 36.213 Table 9.1.2-1: PUSCH in subframe n → PHICH in n + k (0 = none).
const K_PHICH: [[u8; 10]; 7] = [
    [0, 0, 4, 7, 6, 0, 0, 4, 7, 6],
    [0, 0, 4, 6, 0, 0, 0, 4, 6, 0],
    [0, 0, 6, 0, 0, 0, 0, 6, 0, 0],
    [0, 0, 6, 6, 6, 0, 0, 0, 0, 0],
    [0, 0, 6, 6, 0, 0, 0, 0, 0, 0],
    [0, 0, 6, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 4, 6, 6, 0, 0, 4, 7, 0],
];

/// TS 36.213 Table 10.1.3.1-1: downlink association set K for the uplink subframe n that
/// carries HARQ-ACK for PDSCH in subframes n − k, k ∈ K.
const DL_ASSOCIATION: [[&[u8]; 10]; 7] = [
    [&[], &[], &[6], &[], &[4], &[], &[], &[6], &[], &[4]],
    [&[], &[], &[7, 6], &[4], &[], &[], &[], &[7, 6], &[4], &[]],
    [
        &[],
        &[],
        &[8, 7, 4, 6],
        &[],
        &[],
        &[],
        &[],
        &[8, 7, 4, 6],
        &[],
        &[],
    ],
    [
        &[],
        &[],
        &[7, 6, 11],
        &[6, 5],
        &[5, 4],
        &[],
        &[],
        &[],
        &[],
        &[],
    ],
    [
        &[],
        &[],
        &[12, 8, 7, 11],
        &[6, 5, 4, 7],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
    ],
    [
        &[],
        &[],
        &[13, 12, 9, 8, 7, 5, 4, 11, 6],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
    ],
    [&[], &[], &[7], &[7], &[5], &[], &[], &[7], &[7], &[]],
];

/// FDD timing: HARQ-ACK, UL grant and PHICH all 4 subframes later (TS 36.213 §10.1.2,
/// §8.0, §9.1.2); 8 HARQ processes each way.
const FDD_K: u8 = 4;

impl Duplex {
    /// A TDD cell with uplink-downlink configuration `config` (0..=6) and special subframe
    /// configuration `special_config` (0..=9, normal cyclic prefix).
    pub fn new_tdd(config: u8, special_config: u8) -> Result<Duplex, String> {
        if config > 6 {
            return Err(format!(
                "TDD uplink-downlink configuration {config} is not in the allowed range 0..=6"
            ));
        }
        if special_config > 9 {
            return Err(format!(
                "TDD special subframe configuration {special_config} is not in the allowed range 0..=9"
            ));
        }
        Ok(Duplex::Tdd {
            config,
            special_config,
        })
    }

    /// Kind of subframe `sf` (mod 10). FDD returns `Downlink` for every subframe, but every
    /// FDD subframe also carries an uplink subframe: use [`is_dl`](Self::is_dl) and
    /// [`is_ul`](Self::is_ul) for scheduling decisions.
    pub fn subframe_kind(&self, sf: u8) -> SubframeKind {
        match *self {
            Duplex::Fdd => SubframeKind::Downlink,
            Duplex::Tdd { config, .. } => PATTERN[config as usize][(sf % 10) as usize],
        }
    }

    /// DwPTS length in OFDM symbols of the special subframe (TDD), `None` for FDD.
    pub fn dwpts_symbols(&self) -> Option<u8> {
        match *self {
            Duplex::Fdd => None,
            Duplex::Tdd { special_config, .. } => Some(DWPTS_SYMBOLS[special_config as usize]),
        }
    }

    /// Whether the special subframe's DwPTS carries PDSCH (not for special configurations 0
    /// and 5, whose 3-symbol DwPTS holds only the control region). `false` for FDD.
    pub fn special_has_pdsch(&self) -> bool {
        matches!(self, Duplex::Tdd { special_config, .. } if *special_config != 0 && *special_config != 5)
    }

    /// Whether subframe `sf` can carry PDSCH: always for FDD; for TDD a downlink subframe, or
    /// a special subframe whose DwPTS carries PDSCH.
    pub fn is_dl(&self, sf: u8) -> bool {
        match self.subframe_kind(sf) {
            SubframeKind::Downlink => true,
            SubframeKind::Special => self.special_has_pdsch(),
            SubframeKind::Uplink => false,
        }
    }

    /// Whether subframe `sf` carries PUSCH: always for FDD; for TDD an uplink subframe.
    pub fn is_ul(&self, sf: u8) -> bool {
        match self {
            Duplex::Fdd => true,
            Duplex::Tdd { .. } => self.subframe_kind(sf) == SubframeKind::Uplink,
        }
    }

    /// N_PRB to look the downlink TBS up with for an allocation of `n_prb` PRBs in subframe
    /// `sf` (TS 36.213 §7.1.7.2.1): `n_prb` in a downlink subframe; in DwPTS
    /// `max(⌊0.75 · n_prb⌋, 1)`, or `max(⌊0.375 · n_prb⌋, 1)` for special configuration 9
    /// (its 6-symbol DwPTS, Rel-11 rule); 0 where no PDSCH is possible (uplink subframes,
    /// special configurations 0 and 5) or when `n_prb == 0`.
    pub fn dl_prbs_usable(&self, sf: u8, n_prb: u16) -> u16 {
        if n_prb == 0 || !self.is_dl(sf) {
            return 0;
        }
        match (*self, self.subframe_kind(sf)) {
            (
                Duplex::Tdd {
                    special_config: 9, ..
                },
                SubframeKind::Special,
            ) => ((n_prb as u32 * 3 / 8) as u16).max(1),
            (Duplex::Tdd { .. }, SubframeKind::Special) => ((n_prb as u32 * 3 / 4) as u16).max(1),
            _ => n_prb,
        }
    }

    /// PDSCH in subframe `sf` → HARQ-ACK on PUCCH/PUSCH in `sf + k`: 4 for FDD; for TDD the k
    /// for which `(sf + k) mod 10` is an uplink subframe whose association set
    /// (Table 10.1.3.1-1) contains k. Returns 0 for a TDD uplink subframe (no PDSCH).
    pub fn dl_harq_ack_delay(&self, sf: u8) -> u8 {
        let config = match *self {
            Duplex::Fdd => return FDD_K,
            Duplex::Tdd { config, .. } => config as usize,
        };
        let sf = sf % 10;
        for k in 4u8..=13 {
            let n = ((sf + k) % 10) as usize;
            if DL_ASSOCIATION[config][n].contains(&k) {
                return k;
            }
        }
        0
    }

    /// UL grant (DCI 0) or PHICH in subframe `sf` → PUSCH in `sf + k`: 4 for FDD, Table 8-2 for
    /// TDD; 0 if the subframe carries no UL grant. For configuration 0 this is the k of
    /// Table 8-2; the UL index may instead (or also) point to `sf + 7`, see
    /// [`ul_grant_delays`](Self::ul_grant_delays).
    pub fn ul_grant_delay(&self, sf: u8) -> u8 {
        match *self {
            Duplex::Fdd => FDD_K,
            Duplex::Tdd { config, .. } => K_PUSCH[config as usize][(sf % 10) as usize],
        }
    }

    /// All PUSCH delays a UL grant in subframe `sf` can address: `[k]` from Table 8-2, and
    /// for TDD configuration 0 also 7 (UL index LSB set, TS 36.213 §8.0), which is how its
    /// uplink subframes 3 and 8 are scheduled. Empty if the subframe carries no UL grant.
    pub fn ul_grant_delays(&self, sf: u8) -> &'static [u8] {
        match self.ul_grant_delay(sf) {
            0 => &[],
            4 if matches!(self, Duplex::Tdd { config: 0, .. }) => &[4, 7],
            6 if matches!(self, Duplex::Tdd { config: 0, .. }) => &[6, 7],
            4 => &[4],
            5 => &[5],
            6 => &[6],
            7 => &[7],
            _ => unreachable!("Table 8-2 holds only 4..=7"),
        }
    }

    /// PUSCH in subframe `sf` → PHICH in `sf + k`: 4 for FDD, Table 9.1.2-1 for TDD; 0 if
    /// `sf` is not an uplink subframe.
    pub fn phich_delay(&self, sf: u8) -> u8 {
        match *self {
            Duplex::Fdd => FDD_K,
            Duplex::Tdd { config, .. } => K_PHICH[config as usize][(sf % 10) as usize],
        }
    }

    /// PUSCH in subframe `sf` → non-adaptive retransmission (after a NACK on PHICH) in
    /// `sf + d`: 8 for FDD. For TDD, `d = k_PHICH + k`, where k is Table 8-2's delay for the
    /// PHICH subframe; in configuration 0 a PHICH in subframe 1 or 6, or with I_PHICH = 1
    /// (PUSCH in subframe 4 or 9), leads to `n + 7` instead (TS 36.213 §8.0). 0 if `sf` is
    /// not an uplink subframe.
    pub fn ul_retx_delay(&self, sf: u8) -> u8 {
        let config = match *self {
            Duplex::Fdd => return 2 * FDD_K,
            Duplex::Tdd { config, .. } => config,
        };
        let sf = sf % 10;
        let kp = self.phich_delay(sf);
        if kp == 0 {
            return 0;
        }
        let phich_sf = (sf + kp) % 10;
        let k = if config == 0 && (matches!(phich_sf, 1 | 6) || matches!(sf, 4 | 9)) {
            7
        } else {
            self.ul_grant_delay(phich_sf)
        };
        kp + k
    }

    /// Number of downlink HARQ processes: 8 for FDD, Table 7-1 for TDD.
    pub fn dl_harq_processes(&self) -> u8 {
        match *self {
            Duplex::Fdd => 8,
            Duplex::Tdd { config, .. } => DL_HARQ_PROCESSES[config as usize],
        }
    }

    /// Number of uplink HARQ processes: 8 for FDD, Table 8-1 for TDD.
    pub fn ul_harq_processes(&self) -> u8 {
        match *self {
            Duplex::Fdd => 8,
            Duplex::Tdd { config, .. } => UL_HARQ_PROCESSES[config as usize],
        }
    }

    /// (downlink, special, uplink) subframes per 10 ms frame; FDD counts (10, 0, 10).
    pub fn subframe_counts(&self) -> (u8, u8, u8) {
        match self {
            Duplex::Fdd => (10, 0, 10),
            Duplex::Tdd { .. } => {
                let mut c = (0, 0, 0);
                for sf in 0..10 {
                    match self.subframe_kind(sf) {
                        SubframeKind::Downlink => c.0 += 1,
                        SubframeKind::Special => c.1 += 1,
                        SubframeKind::Uplink => c.2 += 1,
                    }
                }
                c
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tdd(c: u8) -> Duplex {
        Duplex::new_tdd(c, 7).unwrap()
    }

    #[test]
    fn validation() {
        assert!(Duplex::new_tdd(6, 9).is_ok());
        let e = Duplex::new_tdd(7, 0).unwrap_err();
        assert!(e.contains("0..=6"), "{e}");
        let e = Duplex::new_tdd(0, 10).unwrap_err();
        assert!(e.contains("0..=9"), "{e}");
    }

    #[test]
    fn subframe_fractions() {
        // (D, S, U) per frame, TS 36.211 Table 4.2-2.
        let want = [
            (2, 2, 6),
            (4, 2, 4),
            (6, 2, 2),
            (6, 1, 3),
            (7, 1, 2),
            (8, 1, 1),
            (3, 2, 5),
        ];
        for c in 0..7u8 {
            assert_eq!(tdd(c).subframe_counts(), want[c as usize], "config {c}");
            let d = tdd(c);
            // Subframes 0 and 5 are always D (except 5 in... never U), 1 always S, 2 always U.
            assert_eq!(d.subframe_kind(0), SubframeKind::Downlink);
            assert_eq!(d.subframe_kind(1), SubframeKind::Special);
            assert_eq!(d.subframe_kind(2), SubframeKind::Uplink);
            assert_eq!(d.subframe_kind(5), SubframeKind::Downlink);
            // Taken mod 10.
            assert_eq!(d.subframe_kind(12), d.subframe_kind(2));
        }
        // Config 1: D S U U D D S U U D.
        let c1 = tdd(1);
        let kinds: Vec<_> = (0..10).map(|s| c1.subframe_kind(s)).collect();
        assert_eq!(kinds, vec![D, S, U, U, D, D, S, U, U, D]);
        assert_eq!(Duplex::Fdd.subframe_counts(), (10, 0, 10));
        for sf in 0..10 {
            assert!(Duplex::Fdd.is_dl(sf) && Duplex::Fdd.is_ul(sf));
            assert_eq!(Duplex::Fdd.subframe_kind(sf), SubframeKind::Downlink);
        }
    }

    #[test]
    fn special_subframe_pdsch_and_tbs_prbs() {
        let with = Duplex::new_tdd(1, 7).unwrap();
        let without = Duplex::new_tdd(1, 0).unwrap();
        let cfg5 = Duplex::new_tdd(1, 5).unwrap();
        let cfg9 = Duplex::new_tdd(1, 9).unwrap();
        assert!(with.is_dl(1) && !with.is_ul(1));
        assert!(!without.is_dl(1) && !cfg5.is_dl(6));
        assert_eq!(with.dl_prbs_usable(0, 100), 100);
        assert_eq!(with.dl_prbs_usable(1, 100), 75);
        assert_eq!(with.dl_prbs_usable(6, 25), 18);
        assert_eq!(with.dl_prbs_usable(1, 1), 1);
        assert_eq!(with.dl_prbs_usable(2, 100), 0);
        assert_eq!(with.dl_prbs_usable(1, 0), 0);
        assert_eq!(without.dl_prbs_usable(1, 100), 0);
        assert_eq!(cfg9.dl_prbs_usable(1, 100), 37);
        assert_eq!(cfg9.dl_prbs_usable(1, 2), 1);
        assert_eq!(Duplex::Fdd.dl_prbs_usable(1, 50), 50);
        assert_eq!(with.dwpts_symbols(), Some(10));
        assert_eq!(cfg9.dwpts_symbols(), Some(6));
        assert_eq!(Duplex::Fdd.dwpts_symbols(), None);
    }

    #[test]
    fn fdd_timing() {
        let f = Duplex::Fdd;
        for sf in 0..10 {
            assert_eq!(f.dl_harq_ack_delay(sf), 4);
            assert_eq!(f.ul_grant_delay(sf), 4);
            assert_eq!(f.phich_delay(sf), 4);
            assert_eq!(f.ul_retx_delay(sf), 8);
        }
        assert_eq!(f.dl_harq_processes(), 8);
        assert_eq!(f.ul_harq_processes(), 8);
    }

    #[test]
    fn harq_ack_delays_match_table_10_1_3_1_1() {
        // Expected k per subframe (0 for U), derived by hand from Table 10.1.3.1-1.
        let want: [[u8; 10]; 7] = [
            [4, 6, 0, 0, 0, 4, 6, 0, 0, 0],
            [7, 6, 0, 0, 4, 7, 6, 0, 0, 4],
            [7, 6, 0, 4, 8, 7, 6, 0, 4, 8],
            [4, 11, 0, 0, 0, 7, 6, 6, 5, 5],
            [12, 11, 0, 0, 8, 7, 7, 6, 5, 4],
            [12, 11, 0, 9, 8, 7, 6, 5, 4, 13],
            [7, 7, 0, 0, 0, 7, 7, 0, 0, 5],
        ];
        for c in 0..7u8 {
            let d = tdd(c);
            for sf in 0..10u8 {
                let k = d.dl_harq_ack_delay(sf);
                assert_eq!(k, want[c as usize][sf as usize], "config {c} sf {sf}");
                if d.subframe_kind(sf) != SubframeKind::Uplink {
                    assert!(k >= 4);
                    assert_eq!(d.subframe_kind(sf + k), SubframeKind::Uplink);
                }
            }
            // Every association entry is hit by exactly one DL/S subframe.
            let entries: usize = DL_ASSOCIATION[c as usize].iter().map(|s| s.len()).sum();
            let dl = (0..10)
                .filter(|&s| d.subframe_kind(s) != SubframeKind::Uplink)
                .count();
            assert_eq!(entries, dl, "config {c}");
        }
    }

    #[test]
    fn ul_grant_and_phich_tables_are_consistent() {
        for c in 0..7u8 {
            let d = tdd(c);
            for sf in 0..10u8 {
                let k = d.ul_grant_delay(sf);
                if k != 0 {
                    assert_ne!(d.subframe_kind(sf), SubframeKind::Uplink);
                    for &k in d.ul_grant_delays(sf) {
                        assert_eq!(
                            d.subframe_kind(sf + k),
                            SubframeKind::Uplink,
                            "config {c} sf {sf}"
                        );
                    }
                }
                let kp = d.phich_delay(sf);
                assert_eq!(
                    kp != 0,
                    d.subframe_kind(sf) == SubframeKind::Uplink,
                    "config {c} sf {sf}"
                );
                if kp != 0 {
                    // PHICH lands in a DL/S subframe that can also carry the UL grant.
                    assert_ne!(d.subframe_kind(sf + kp), SubframeKind::Uplink);
                    assert_ne!(d.ul_grant_delay(sf + kp), 0, "config {c} sf {sf}");
                    // Retransmission lands on the same kind of subframe: uplink.
                    let r = d.ul_retx_delay(sf);
                    assert_eq!(d.subframe_kind(sf + r), SubframeKind::Uplink);
                }
            }
            // Every uplink subframe is reachable by some grant.
            for ul in (0..10u8).filter(|&s| d.subframe_kind(s) == SubframeKind::Uplink) {
                let reachable =
                    (0..10u8).any(|g| d.ul_grant_delays(g).iter().any(|&k| (g + k) % 10 == ul));
                assert!(reachable, "config {c} UL sf {ul}");
            }
        }
        // Spot values of Table 8-2 and Table 9.1.2-1.
        assert_eq!(tdd(6).ul_grant_delay(9), 5);
        assert_eq!(tdd(6).ul_grant_delay(0), 7);
        assert_eq!(tdd(0).ul_grant_delay(1), 6);
        assert_eq!(tdd(0).phich_delay(3), 7);
        assert_eq!(tdd(6).phich_delay(8), 7);
        assert_eq!(tdd(3).phich_delay(4), 6);
    }

    /// UL HARQ processes = transmissions that fit in one synchronous retransmission cycle:
    /// follow PUSCH → PHICH → PUSCH from subframe 2 until the chain returns to subframe 2;
    /// the cycle lasts T ms with m transmissions, and the uplink subframes in T ms are shared
    /// by `U·T/10 / m` processes. Reproduces Table 8-1 from Tables 8-2 and 9.1.2-1.
    #[test]
    fn ul_harq_processes_follow_from_timing() {
        for c in 0..7u8 {
            let d = tdd(c);
            let (_, _, u) = d.subframe_counts();
            let mut t = 2u32;
            let mut m = 0u32;
            loop {
                t += d.ul_retx_delay((t % 10) as u8) as u32;
                m += 1;
                if t % 10 == 2 {
                    break;
                }
                assert!(m < 100);
            }
            let cycle = t - 2;
            assert_eq!(cycle % 10, 0);
            let procs = u as u32 * cycle / 10 / m;
            assert_eq!(procs as u8, d.ul_harq_processes(), "config {c}");
        }
        assert_eq!(tdd(1).ul_retx_delay(2), 10);
        assert_eq!(tdd(0).ul_retx_delay(4), 13);
        assert_eq!(tdd(6).ul_retx_delay(8), 14);
    }

    /// DL HARQ processes (Table 7-1) = the most DL/S subframes in a window from a PDSCH to the
    /// first DL/S subframe at least 4 ms after its HARQ-ACK (eNB processing).
    #[test]
    fn dl_harq_processes_follow_from_timing() {
        for c in 0..7u8 {
            let d = tdd(c);
            let is_dl = |s: u32| d.subframe_kind((s % 10) as u8) != SubframeKind::Uplink;
            let mut max = 0;
            for sf in (0..10u32).filter(|&s| is_dl(s)) {
                let mut retx = sf + d.dl_harq_ack_delay(sf as u8) as u32 + 4;
                while !is_dl(retx) {
                    retx += 1;
                }
                let n = (sf..retx).filter(|&s| is_dl(s)).count();
                max = max.max(n);
            }
            assert_eq!(max as u8, d.dl_harq_processes(), "config {c}");
        }
    }
}
