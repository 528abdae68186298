//! The 802.11n HT PHY, HT-mixed format (IEEE 802.11-2016 clause 19), BCC coding, equal
//! modulation on all streams.
//!
//! MCS 0–7 per spatial stream (Table 19-27 … 19-30; the standard's MCS 8–15 are MCS 0–7 with
//! `nss = 2`), 52 data subcarriers at 20 MHz and 108 at 40 MHz (Table 19-6). TXTIME (§19.4.3,
//! Eq. 19-135 and 19-136): T_LEG_PREAMBLE (16 µs) + T_L-SIG (4 µs) + T_HT-SIG (8 µs) + T_HT-STF
//! (4 µs) + N_HT-LTF × 4 µs + the data symbols; with the short guard interval the data
//! portion is rounded up to a whole 4 µs symbol, T_SYM·⌈T_SYMS·N_SYM / T_SYM⌉.

use super::{CodeRate, Modulation, TxVector};

/// Modulation and coding of HT MCS `mcs` mod 8 (Table 19-27).
pub fn modulation(mcs: u8) -> (Modulation, CodeRate) {
    match mcs % 8 {
        0 => (Modulation::Bpsk, CodeRate::R1_2),
        1 => (Modulation::Qpsk, CodeRate::R1_2),
        2 => (Modulation::Qpsk, CodeRate::R3_4),
        3 => (Modulation::Qam16, CodeRate::R1_2),
        4 => (Modulation::Qam16, CodeRate::R3_4),
        5 => (Modulation::Qam64, CodeRate::R2_3),
        6 => (Modulation::Qam64, CodeRate::R3_4),
        _ => (Modulation::Qam64, CodeRate::R5_6),
    }
}

/// Data subcarriers (N_SD, Table 19-6).
pub fn n_sd(width_mhz: u16) -> u32 {
    if width_mhz >= 40 {
        108
    } else {
        52
    }
}

/// N_DBPS = N_SD · N_BPSCS · R · N_SS.
pub fn n_dbps(v: &TxVector) -> u32 {
    let (m, r) = modulation(v.mcs);
    let (num, den) = r.ratio();
    n_sd(v.width_mhz) * m.bits() * num / den * v.nss as u32
}

/// HT-LTFs for `nss` streams without STBC (Table 19-13).
pub fn n_ltf(nss: u8) -> u64 {
    match nss {
        1 => 1,
        2 => 2,
        _ => 4,
    }
}

pub fn is_valid(v: &TxVector) -> bool {
    v.mcs <= 7 && matches!(v.width_mhz, 20 | 40) && (1..=4).contains(&v.nss)
}

/// TXTIME in ns (without the 2.4 GHz signal extension). One BCC encoder (N_ES = 1 up to 300
/// Mbit/s, which covers two streams at 40 MHz).
pub fn txtime_ns(v: &TxVector, psdu_bytes: u32) -> u64 {
    let preamble = 16_000 + 4_000 + 8_000 + 4_000 + 4_000 * n_ltf(v.nss);
    let n_sym = super::bcc_symbols(psdu_bytes, n_dbps(v), 1);
    let data = if v.short_gi { super::short_gi_data_ns(n_sym) } else { 4_000 * n_sym };
    preamble + data
}

#[cfg(test)]
mod tests {
    use super::super::PhyClass;
    use super::*;

    fn ht(mcs: u8, width_mhz: u16, short_gi: bool) -> TxVector {
        TxVector { class: PhyClass::Ht, mcs, width_mhz, nss: 1, short_gi }
    }

    #[test]
    fn ht_rates_match_table_19_27() {
        // MCS 7 20 MHz: 65 / 72.2 Mbit/s; MCS 7 40 MHz: 135 / 150; MCS 0 20 MHz: 6.5.
        assert_eq!(ht(7, 20, false).data_rate_bps(), 65e6);
        assert!((ht(7, 20, true).data_rate_bps() - 72.222e6).abs() < 1e3);
        assert_eq!(ht(7, 40, false).data_rate_bps(), 135e6);
        assert!((ht(7, 40, true).data_rate_bps() - 150e6).abs() < 1.0);
        assert_eq!(ht(0, 20, false).data_rate_bps(), 6.5e6);
        let two = TxVector { nss: 2, ..ht(7, 40, true) };
        assert!((two.data_rate_bps() - 300e6).abs() < 1.0);
    }

    #[test]
    fn ht_txtime_long_gi_matches_ns3() {
        // ns-3's tx-duration-test.cc (HT-mixed, 5 GHz, 800 ns GI): MCS 7 20 MHz 1536/76/14 B →
        // 228/48/40 µs; MCS 7 40 MHz → 128/44/40 µs.
        for (w, bytes, us) in [(20, 1536, 228), (20, 76, 48), (20, 14, 40), (40, 1536, 128), (40, 76, 44), (40, 14, 40)] {
            assert_eq!(txtime_ns(&ht(7, w, false), bytes), us * 1_000, "{w} MHz {bytes} B");
        }
    }

    #[test]
    fn ht_txtime_short_gi_rounds_to_whole_symbols() {
        // ns-3 gives MCS 0 20 MHz short GI 1536 B = 1742.4 µs (36 µs + 474 × 3.6 µs), i.e. it
        // does not round the data portion; Eq. 19-136 rounds 1706.4 µs up to 1708 µs.
        assert_eq!(txtime_ns(&ht(0, 20, true), 1536), 36_000 + 1_708_000);
        // MCS 7 40 MHz short GI 1536 B: ns-3 118.8 µs (36 + 23 × 3.6); standard 36 + 84.
        assert_eq!(txtime_ns(&ht(7, 40, true), 1536), 36_000 + 84_000);
    }
}
