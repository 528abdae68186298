//! The 802.11ac VHT PHY, single user (IEEE 802.11-2016 clause 21), BCC coding.
//!
//! MCS 0–9 (Table 21-29 … 21-37) with 52, 108, 234 or 468 data subcarriers at 20, 40, 80 or 160
//! MHz (Table 21-5). Some combinations do not exist: MCS 9 at 20 MHz with 1, 2, 4, 5, 7 or 8
//! streams (N_DBPS would not be an integer), MCS 6 at 80 MHz with 3 or 7 streams, MCS 9 at 80
//! MHz with 6 streams and at 160 MHz with 3 streams.
//!
//! TXTIME (§21.4.3): T_LEG_PREAMBLE (16 µs) + T_L-SIG (4 µs) + T_VHT-SIG-A (8 µs) + T_VHT-STF
//! (4 µs) + N_VHT-LTF × 4 µs + T_VHT-SIG-B (4 µs) + the data symbols (rounded to a whole 4 µs
//! symbol with the short guard interval). N_SYM for BCC = ⌈(8·APEP_LENGTH + 16 + 6·N_ES) /
//! N_DBPS⌉. ns-3 3.37 leaves T_VHT-SIG-B out of single-user PPDUs and does not round the
//! short-GI data portion; the tests below state both differences against its figures.

use super::{CodeRate, Modulation, TxVector};

/// Modulation and coding of VHT MCS `mcs` (Table 21-29).
pub fn modulation(mcs: u8) -> (Modulation, CodeRate) {
    match mcs {
        0..=7 => super::ht::modulation(mcs),
        8 => (Modulation::Qam256, CodeRate::R3_4),
        _ => (Modulation::Qam256, CodeRate::R5_6),
    }
}

/// Data subcarriers (N_SD, Table 21-5).
pub fn n_sd(width_mhz: u16) -> u32 {
    match width_mhz {
        20 => 52,
        40 => 108,
        80 => 234,
        _ => 468,
    }
}

/// N_DBPS = N_SD · N_BPSCS · R · N_SS.
pub fn n_dbps(v: &TxVector) -> u32 {
    let (m, r) = modulation(v.mcs);
    let (num, den) = r.ratio();
    n_sd(v.width_mhz) * m.bits() * v.nss as u32 * num / den
}

pub fn is_valid(v: &TxVector) -> bool {
    if v.mcs > 9 || !matches!(v.width_mhz, 20 | 40 | 80 | 160) || !(1..=8).contains(&v.nss) {
        return false;
    }
    let excluded = matches!(
        (v.width_mhz, v.mcs, v.nss),
        (20, 9, 1 | 2 | 4 | 5 | 7 | 8) | (80, 6, 3 | 7) | (80, 9, 6) | (160, 9, 3)
    );
    !excluded
}

/// VHT-LTFs for `nss` streams (Table 21-13).
pub fn n_ltf(nss: u8) -> u64 {
    match nss {
        1 => 1,
        2 => 2,
        3 | 4 => 4,
        5 | 6 => 6,
        _ => 8,
    }
}

/// BCC encoders: one per 600 Mbit/s of the short-GI rate (the N_ES column of Tables
/// 21-30 … 21-37 for the rates this crate runs).
pub fn n_es(v: &TxVector) -> u32 {
    let sgi_rate = n_dbps(v) as f64 / 3.6e-6;
    ((sgi_rate / 600e6).ceil() as u32).max(1)
}

/// TXTIME in ns of a PPDU whose A-MPDU (APEP) is `psdu_bytes` long.
pub fn txtime_ns(v: &TxVector, psdu_bytes: u32) -> u64 {
    let preamble = 16_000 + 4_000 + 8_000 + 4_000 + 4_000 * n_ltf(v.nss) + 4_000;
    let n_sym = super::bcc_symbols(psdu_bytes, n_dbps(v), n_es(v));
    let data = if v.short_gi { super::short_gi_data_ns(n_sym) } else { 4_000 * n_sym };
    preamble + data
}

#[cfg(test)]
mod tests {
    use super::super::PhyClass;
    use super::*;

    fn vht(mcs: u8, width_mhz: u16, short_gi: bool) -> TxVector {
        TxVector { class: PhyClass::Vht, mcs, width_mhz, nss: 1, short_gi }
    }

    #[test]
    fn vht_rates_match_table_21_30() {
        // 20 MHz 1 stream, long GI: 6.5, 13, 19.5, 26, 39, 52, 58.5, 65, 78 Mbit/s (MCS 0–8).
        let want = [6.5, 13.0, 19.5, 26.0, 39.0, 52.0, 58.5, 65.0, 78.0];
        for (m, r) in want.iter().enumerate() {
            assert_eq!(vht(m as u8, 20, false).data_rate_bps(), r * 1e6);
        }
        assert!(!vht(9, 20, false).is_valid());
        assert!(vht(9, 40, false).is_valid());
        // 80 MHz MCS 9 short GI 1 stream: 433.3 Mbit/s; 2 streams 866.7 with two encoders.
        assert!((vht(9, 80, true).data_rate_bps() - 433.33e6).abs() < 1e4);
        let two = TxVector { nss: 2, ..vht(9, 80, true) };
        assert!((two.data_rate_bps() - 866.67e6).abs() < 1e4);
        assert_eq!(n_es(&two), 2);
        assert_eq!(n_es(&vht(9, 80, true)), 1);
    }

    #[test]
    fn vht_txtime_long_gi_is_ns3_plus_sig_b() {
        // ns-3's tx-duration-test.cc (VHT SU, 800 ns GI) without VHT-SIG-B: MCS 8 20 MHz
        // 1536/76/14 B → 196/48/40 µs; MCS 9 40 MHz → 108/40/40; MCS 0 80 MHz → 460/60/44;
        // MCS 9 80 MHz → 68/40/40. The standard adds the 4 µs VHT-SIG-B to each.
        let cases = [
            (8, 20, [196, 48, 40]),
            (9, 40, [108, 40, 40]),
            (0, 80, [460, 60, 44]),
            (9, 80, [68, 40, 40]),
        ];
        for (mcs, w, us) in cases {
            for (bytes, ns3_us) in [1536u32, 76, 14].into_iter().zip(us) {
                assert_eq!(txtime_ns(&vht(mcs, w, false), bytes), (ns3_us + 4) * 1_000, "MCS {mcs} {w} MHz {bytes} B");
            }
        }
    }

    #[test]
    fn vht_txtime_short_gi_rounds_to_whole_symbols() {
        // ns-3: MCS 8 20 MHz short GI 1536 B = 180 µs = 36 + 40 × 3.6; the standard: 40 µs of
        // preamble (with VHT-SIG-B) + 4·⌈144/4⌉ = 184 µs.
        assert_eq!(txtime_ns(&vht(8, 20, true), 1536), 184_000);
        // MCS 0 80 MHz short GI 1536 B: ns-3 417.6 = 36 + 106 × 3.6; here 40 + 4·⌈381.6/4⌉.
        assert_eq!(txtime_ns(&vht(0, 80, true), 1536), 40_000 + 384_000);
    }
}
