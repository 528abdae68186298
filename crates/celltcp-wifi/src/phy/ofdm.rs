//! The 802.11a OFDM PHY (IEEE 802.11-2016 clause 17) and its ERP-OFDM use in 802.11g
//! (clause 18), 20 MHz channel spacing.
//!
//! Rates (Table 17-4): 6, 9, 12, 18, 24, 36, 48 and 54 Mbit/s, indexed 0–7 here. A PPDU is the
//! 16 µs preamble (T_PREAMBLE, 10 short + 2 long training symbols), the 4 µs SIGNAL symbol and
//! ⌈(16 + 8·LENGTH + 6) / N_DBPS⌉ data symbols of 4 µs (§17.4.3 Eq. 17-29). ERP-OFDM adds a
//! 6 µs signal extension (§18.3.2.4), applied by [`super::txtime`].

use super::{CodeRate, Modulation};

/// Nominal rates in Mbit/s of indices 0–7.
pub const RATES_MBPS: [u32; 8] = [6, 9, 12, 18, 24, 36, 48, 54];

/// Data bits per symbol of each rate (Table 17-4).
pub const N_DBPS: [u32; 8] = [24, 36, 48, 72, 96, 144, 192, 216];

/// T_PREAMBLE + T_SIGNAL (Table 17-5), ns.
pub const PREAMBLE_NS: u64 = 20_000;

/// Modulation and coding of rate index `idx` (Table 17-4).
pub fn modulation(idx: u8) -> (Modulation, CodeRate) {
    match idx {
        0 => (Modulation::Bpsk, CodeRate::R1_2),
        1 => (Modulation::Bpsk, CodeRate::R3_4),
        2 => (Modulation::Qpsk, CodeRate::R1_2),
        3 => (Modulation::Qpsk, CodeRate::R3_4),
        4 => (Modulation::Qam16, CodeRate::R1_2),
        5 => (Modulation::Qam16, CodeRate::R3_4),
        6 => (Modulation::Qam64, CodeRate::R2_3),
        _ => (Modulation::Qam64, CodeRate::R3_4),
    }
}

/// TXTIME of a PSDU of `psdu_bytes` at rate index `idx`, ns (Eq. 17-29), without the ERP
/// signal extension.
pub fn txtime_ns(idx: u8, psdu_bytes: u32) -> u64 {
    PREAMBLE_NS + 4_000 * super::bcc_symbols(psdu_bytes, N_DBPS[idx as usize], 1)
}

/// The rate index of `mbps`, if it is one of the eight OFDM rates.
pub fn index_of_mbps(mbps: u32) -> Option<u8> {
    RATES_MBPS.iter().position(|&r| r == mbps).map(|i| i as u8)
}

#[cfg(test)]
mod tests {
    use super::super::{txtime, TxVector};
    use super::*;
    use celltcp_engine::SimDuration;

    #[test]
    fn ofdm_ndbps_matches_modulation_and_coding() {
        // N_DBPS = 48 data subcarriers × N_BPSCS × R (Table 17-4).
        for i in 0..8u8 {
            let (m, r) = modulation(i);
            let (num, den) = r.ratio();
            assert_eq!(48 * m.bits() * num / den, N_DBPS[i as usize]);
            assert_eq!(N_DBPS[i as usize] / 4, RATES_MBPS[i as usize]);
            assert_eq!(TxVector::ofdm(i).data_rate_bps(), RATES_MBPS[i as usize] as f64 * 1e6);
        }
        assert_eq!(index_of_mbps(24), Some(4));
        assert_eq!(index_of_mbps(11), None);
    }

    #[test]
    fn ofdm_txtime_matches_published_durations() {
        // 802.11a at 54 Mbit/s: 1536 B → 248 µs, 76 B → 32 µs, 14 B (ACK) → 24 µs; 802.11g adds
        // 6 µs (254, 38, 30) — the figures of ns-3's tx-duration-test.cc, from M. Gast's
        // O'Reilly 802.11 throughput article.
        for (bytes, a_us) in [(1536, 248), (76, 32), (14, 24)] {
            assert_eq!(txtime(&TxVector::ofdm(7), bytes, SimDuration::ZERO), SimDuration::from_micros(a_us));
            assert_eq!(txtime(&TxVector::ofdm(7), bytes, SimDuration::from_micros(6)), SimDuration::from_micros(a_us + 6));
        }
        // ACK at 6 Mbit/s: 16 + 4 + 4·⌈134/24⌉ = 44 µs; at 24 Mbit/s: 20 + 4·⌈134/96⌉ = 28 µs.
        assert_eq!(txtime_ns(0, 14), 44_000);
        assert_eq!(txtime_ns(4, 14), 28_000);
    }
}
