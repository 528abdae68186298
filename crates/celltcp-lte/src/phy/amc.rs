//! Adaptive modulation and coding: CQI table, SINR thresholds and block error curves per MCS,
//! CQI ↔ MCS mapping, effective SINR (EESM) and HARQ Chase combining.
//!
//! # Link model
//!
//! The link abstraction is the usual system-level one: a transport block sent with MCS `m`
//! over PRBs with SINRs γ₁…γₙ is first compressed to one *effective* SINR (EESM,
//! [`effective_sinr_db`]); its block error probability is then read off an AWGN-style curve
//! for that MCS ([`bler`]).
//!
//! **Spectral efficiency of an MCS.** For the downlink, the number of data resource elements
//! per PRB pair is `12·(14 − CFI)` minus the cell-specific reference signal REs of antenna
//! port 0 that fall outside the control region (TS 36.211 §6.10.1: port 0 occupies OFDM
//! symbols 0, 4, 7 and 11, two REs per PRB each; symbol 0 is always in the control region).
//! With one antenna port that gives 150, 138, 126 and 114 data REs for CFI 1, 2, 3 and 4.
//! The efficiency of MCS `m` is `S(m) = TBS(m, 100 PRB) / (100 · data REs)` bits per RE,
//! which includes the real quantisation of the TBS table (PBCH/synchronisation REs and the
//! 24-bit CRC are ignored). For the uplink (PUSCH, SC-FDMA) a PRB pair has `12 · 12 = 144`
//! data REs (two DM-RS symbols, no SRS).
//!
//! **SINR needed for 10 % BLER.** The required SINR follows the attenuated, gap-adjusted
//! Shannon bound of Mogensen et al., *LTE capacity compared to the Shannon bound*, IEEE VTC
//! 2007-Spring, `S = η · log₂(1 + γ / Γ)`, inverted as
//! `γ₁₀ = Γ · (2^(S/η) − 1)`, with [`SHANNON_ATTENUATION`] `η = 0.85` and
//! [`SNR_GAP_DB`] `Γ = 1 dB`. Because `S` is counted per data RE, no bandwidth-efficiency
//! factor is needed (that is what Mogensen et al.'s `BW_eff` and TR 36.942 Annex A's α = 0.6
//! carry). The two constants are this crate's calibration, chosen so that the thresholds
//! reproduce the operating points commonly reported for LTE turbo-coded links in AWGN at
//! 10 % BLER: about −7 dB for the lowest CQI, about −1 dB for QPSK rate ≈ 1/3, about 7 dB
//! for 16QAM rate ≈ 1/2 and about 20 dB for CQI 15 (64QAM rate 0.93); MCS 0 needs ≈ −6.5 dB
//! and MCS 28 ≈ 20 dB at CFI 2. The curve is clamped to the modulation's limit: a transport
//! block whose effective code rate `S / Q_m` exceeds [`MAX_CODE_RATE`] = 0.930 is never
//! decoded (TS 36.213 §7.1.7.2 lets the UE skip such blocks), so its threshold is +∞.
//! That is what happens to MCS 28 over 100 PRBs with CFI 3 (code rate ≈ 0.997).
//!
//! **BLER curve.** `BLER(γ) = 1 / (1 + 9 · exp(k · (γ_dB − γ₁₀)))`: a logistic in dB through
//! exactly 10 % at the threshold, monotone decreasing in SINR and non-decreasing in MCS; `k`
//! is set so that the curve falls from 90 % to 1 % over [`BLER_WATERFALL_DB`] = 1.5 dB, the
//! steepness of long turbo-coded blocks in AWGN.
//!
//! **HARQ.** Retransmissions use Chase combining: every retransmission carries the same
//! coded bits, and maximum-ratio combining of the soft bits adds the SNRs, so the effective
//! SINR of the combined block is the *sum of the linear effective SINRs* of the
//! transmissions ([`chase_combine_db`]); the combined block's error probability is then
//! `bler(mcs, combined, cfi)`.

use std::sync::OnceLock;

use super::tbs::{dl_modulation_order, tb_bits, ul_modulation_order, MAX_MCS};
use crate::Direction;

/// One row of TS 36.213 Table 7.2.3-1 (4-bit CQI table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CqiEntry {
    /// Modulation order Q_m (2 QPSK, 4 16QAM, 6 64QAM); 0 for "out of range".
    pub modulation_order: u8,
    /// Code rate × 1024.
    pub code_rate_x1024: u16,
    /// Efficiency in information bits per resource element.
    pub efficiency: f64,
}

const fn cqi(modulation_order: u8, code_rate_x1024: u16, efficiency: f64) -> CqiEntry {
    CqiEntry {
        modulation_order,
        code_rate_x1024,
        efficiency,
    }
}

/// TS 36.213 Table 7.2.3-1, indexed by CQI 0..=15 (CQI 0 = out of range).
pub static CQI_TABLE: [CqiEntry; 16] = [
    cqi(0, 0, 0.0),
    cqi(2, 78, 0.1523),
    cqi(2, 120, 0.2344),
    cqi(2, 193, 0.3770),
    cqi(2, 308, 0.6016),
    cqi(2, 449, 0.8770),
    cqi(2, 602, 1.1758),
    cqi(4, 378, 1.4766),
    cqi(4, 490, 1.9141),
    cqi(4, 616, 2.4063),
    cqi(6, 466, 2.7305),
    cqi(6, 567, 3.3223),
    cqi(6, 666, 3.9023),
    cqi(6, 772, 4.5234),
    cqi(6, 873, 5.1152),
    cqi(6, 948, 5.5547),
];

/// Highest CQI index.
pub const MAX_CQI: u8 = 15;

/// Block error target of CQI reporting (TS 36.213 §7.2.3).
pub const BLER_TARGET: f64 = 0.1;

/// Control format indicator assumed by [`mcs_from_cqi`] (PDCCH in the first two OFDM
/// symbols). With CFI 2 the top MCS (28) has an effective code rate of 0.91 over 100 PRBs
/// and lands under CQI 15's efficiency, so CQI 15 maps to MCS 28.
pub const DEFAULT_CFI: u8 = 2;

/// Attenuation η of the Shannon bound (per data RE); see the module doc.
pub const SHANNON_ATTENUATION: f64 = 0.85;

/// SNR gap Γ of the Shannon bound in dB; see the module doc.
pub const SNR_GAP_DB: f64 = 1.0;

/// Highest effective code rate that is decoded at all (TS 36.213 §7.1.7.2: 0.930).
pub const MAX_CODE_RATE: f64 = 0.930;

/// SINR span of the BLER waterfall from 90 % down to 1 %, in dB.
pub const BLER_WATERFALL_DB: f64 = 1.5;

/// Uplink (PUSCH) data REs per PRB pair: 12 subcarriers × 12 SC-FDMA symbols.
pub const UL_DATA_RES_PER_PRB: u32 = 144;

/// Logistic slope per dB: `ln(9 · 99) / waterfall` (90 % → 1 %).
fn bler_slope() -> f64 {
    (9.0f64 * 99.0).ln() / BLER_WATERFALL_DB
}

fn check_cfi(cfi: u8) {
    assert!(
        (1..=4).contains(&cfi),
        "CFI {cfi} out of range 1..=4 (4 only for carriers of at most 10 PRBs)"
    );
}

/// Downlink data REs per PRB pair for a control region of `cfi` OFDM symbols and one CRS
/// antenna port: `12·(14 − cfi)` minus the port-0 CRS REs in OFDM symbols ≥ `cfi`
/// (150, 138, 126, 114 for CFI 1..=4).
///
/// # Panics
/// If `cfi` is outside `1..=4`.
pub fn data_res_per_prb(cfi: u8) -> u32 {
    check_cfi(cfi);
    const CRS_SYMBOLS_PORT0: [u8; 4] = [0, 4, 7, 11];
    let crs_in_data = CRS_SYMBOLS_PORT0.iter().filter(|&&s| s >= cfi).count() as u32 * 2;
    12 * (14 - cfi as u32) - crs_in_data
}

/// Spectral efficiency of downlink MCS `mcs` in bits per data RE at control format `cfi`:
/// `TBS(mcs, 100 PRB) / (100 · data_res_per_prb(cfi))`.
pub fn spectral_efficiency(mcs: u8, cfi: u8) -> f64 {
    tb_bits(Direction::Downlink, mcs, 100) as f64 / (100.0 * data_res_per_prb(cfi) as f64)
}

/// Spectral efficiency of uplink MCS `mcs` in bits per PUSCH data RE.
pub fn ul_spectral_efficiency(mcs: u8) -> f64 {
    tb_bits(Direction::Uplink, mcs, 100) as f64 / (100.0 * UL_DATA_RES_PER_PRB as f64)
}

/// Effective code rate `S / Q_m` of downlink MCS `mcs` at control format `cfi`.
pub fn effective_code_rate(mcs: u8, cfi: u8) -> f64 {
    spectral_efficiency(mcs, cfi) / dl_modulation_order(mcs) as f64
}

/// SINR (dB) at which the gap-adjusted, attenuated Shannon bound carries `efficiency` bits
/// per RE, and +∞ when the code rate `efficiency / q_m` exceeds [`MAX_CODE_RATE`].
fn threshold_db(efficiency: f64, q_m: u8) -> f64 {
    if efficiency / q_m as f64 > MAX_CODE_RATE {
        return f64::INFINITY;
    }
    let linear = 10f64.powf(SNR_GAP_DB / 10.0) * ((efficiency / SHANNON_ATTENUATION).exp2() - 1.0);
    10.0 * linear.log10()
}

fn dl_thresholds() -> &'static [[f64; 29]; 4] {
    static T: OnceLock<[[f64; 29]; 4]> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = [[0.0; 29]; 4];
        for (c, row) in t.iter_mut().enumerate() {
            let cfi = c as u8 + 1;
            for (m, v) in row.iter_mut().enumerate() {
                let m = m as u8;
                *v = threshold_db(spectral_efficiency(m, cfi), dl_modulation_order(m));
            }
        }
        t
    })
}

fn ul_thresholds() -> &'static [f64; 29] {
    static T: OnceLock<[f64; 29]> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0.0; 29];
        for (m, v) in t.iter_mut().enumerate() {
            let m = m as u8;
            *v = threshold_db(ul_spectral_efficiency(m), ul_modulation_order(m));
        }
        t
    })
}

fn check_mcs(mcs: u8) -> usize {
    assert!(mcs <= MAX_MCS, "MCS {mcs} out of range 0..=28");
    mcs as usize
}

/// Effective SINR (dB) at which downlink MCS `mcs` has a block error rate of exactly 10 %,
/// for a control region of `cfi` symbols; +∞ if that MCS is undecodable at that CFI (code
/// rate above 0.930). Used for the "fixed MCS" option and for link adaptation.
///
/// # Panics
/// If `mcs > 28` or `cfi` is outside `1..=4`.
pub fn sinr_db_for_mcs(mcs: u8, cfi: u8) -> f64 {
    check_cfi(cfi);
    dl_thresholds()[cfi as usize - 1][check_mcs(mcs)]
}

/// Effective SINR (dB) at which uplink MCS `mcs` has a block error rate of 10 %.
pub fn ul_sinr_db_for_mcs(mcs: u8) -> f64 {
    ul_thresholds()[check_mcs(mcs)]
}

fn logistic_bler(threshold_db: f64, eff_sinr_db: f64) -> f64 {
    if threshold_db == f64::INFINITY || eff_sinr_db == f64::NEG_INFINITY {
        return 1.0;
    }
    1.0 / (1.0 + 9.0 * (bler_slope() * (eff_sinr_db - threshold_db)).exp())
}

/// Block error probability of a downlink transport block sent with `mcs` whose effective SINR
/// is `eff_sinr_db`, with a control region of `cfi` symbols (see the module doc for the
/// curve). Exactly [`BLER_TARGET`] at [`sinr_db_for_mcs`]; 1 for undecodable code rates.
pub fn bler(mcs: u8, eff_sinr_db: f64, cfi: u8) -> f64 {
    logistic_bler(sinr_db_for_mcs(mcs, cfi), eff_sinr_db)
}

/// Block error probability of an uplink (PUSCH) transport block sent with `mcs` at
/// effective SINR `eff_sinr_db`; same curve shape as [`bler`].
pub fn ul_bler(mcs: u8, eff_sinr_db: f64) -> f64 {
    logistic_bler(ul_sinr_db_for_mcs(mcs), eff_sinr_db)
}

/// Highest uplink MCS with BLER ≤ 10 % at `eff_sinr_db` (uplink link adaptation from an
/// SRS/PUSCH SINR estimate); `None` when even MCS 0 fails.
pub fn ul_mcs_for_sinr_db(eff_sinr_db: f64) -> Option<u8> {
    (0..=MAX_MCS)
        .rev()
        .find(|&m| ul_bler(m, eff_sinr_db) <= BLER_TARGET)
}

/// Downlink MCS for a reported CQI: the highest MCS whose spectral efficiency at
/// [`DEFAULT_CFI`] does not exceed the CQI's efficiency (Table 7.2.3-1). CQI 15 → MCS 28.
///
/// CQI 1 (0.15 bit/RE) is below even MCS 0's efficiency and also maps to MCS 0.
/// CQI 0 means "out of range": nothing should be scheduled, and this returns 0 only so that
/// the function is total — callers must not schedule a UE whose CQI is 0.
///
/// # Panics
/// If `cqi > 15`.
pub fn mcs_from_cqi(cqi: u8) -> u8 {
    assert!(cqi <= MAX_CQI, "CQI {cqi} out of range 0..=15");
    static T: OnceLock<[u8; 16]> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0u8; 16];
        for (q, v) in t.iter_mut().enumerate().skip(1) {
            let eff = CQI_TABLE[q].efficiency;
            *v = (0..=MAX_MCS)
                .rev()
                .find(|&m| spectral_efficiency(m, DEFAULT_CFI) <= eff)
                .unwrap_or(0);
        }
        t
    })[cqi as usize]
}

/// Wideband CQI a UE reports for effective SINR `eff_sinr_db` with a control region of `cfi`
/// symbols: the highest CQI in 1..=15 whose MCS ([`mcs_from_cqi`]) has `bler(..) ≤ 0.1`,
/// or 0 ("out of range") when even CQI 1 fails. Consistent with [`bler`] by construction.
pub fn cqi_from_sinr_db(eff_sinr_db: f64, cfi: u8) -> u8 {
    (1..=MAX_CQI)
        .rev()
        .find(|&q| bler(mcs_from_cqi(q), eff_sinr_db, cfi) <= BLER_TARGET)
        .unwrap_or(0)
}

/// EESM calibration factor β for MCS 0..=28.
///
/// Values of the EESM model of the 5G-LENA simulator for NR MCS Table 1 (TS 38.214
/// Table 5.1.3.1-1), from S. Lagén et al., *New Radio Physical Layer Abstraction for
/// System-Level Simulations of 5G Networks*, IEEE ICC 2020. That MCS table has the same
/// modulation boundaries as the LTE PDSCH table (QPSK 0–9, 16QAM 10–16, 64QAM 17–28) and
/// nearly the same code rates, and β is dominated by the modulation (β ≈ 1.6 for QPSK,
/// ≈ 4–6.5 for 16QAM, 10–34 for 64QAM, growing with the code rate); it is applied here to the
/// LTE MCS of the same index.
#[rustfmt::skip]
const EESM_BETA: [f64; 29] = [
    1.6, 1.61, 1.63, 1.65, 1.67, 1.7, 1.73, 1.76, 1.79, 1.82, // QPSK
    3.97, 4.27, 4.71, 5.16, 5.66, 6.16, 6.5, // 16QAM
    9.95, 10.97, 12.92, 14.96, 17.06, 19.33, 21.85, 24.51, 27.14, 29.94, 32.05, 34.28, // 64QAM
];

/// EESM β for `mcs`: the 5G-LENA NR MCS Table 1 values of Lagén et al. (IEEE ICC 2020)
/// applied to the LTE MCS of the same index (see the source). Panics if `mcs > 28`.
pub fn eesm_beta(mcs: u8) -> f64 {
    EESM_BETA[check_mcs(mcs)]
}

/// Exponential effective SINR mapping (EESM) of per-PRB linear SINRs for a block sent with
/// `mcs`: `γ_eff = −β · ln( (1/N) Σ exp(−γ_i / β) )`, returned in dB.
///
/// Equals the common SINR when all PRBs are equal, and is below the arithmetic mean
/// otherwise. Computed in log-sum-exp form (relative to the smallest SINR) so large SINRs do
/// not underflow. Returns −∞ for an empty slice or when a PRB has SINR 0 and β is tiny.
pub fn effective_sinr_db(sinr_linear_per_prb: &[f64], mcs: u8) -> f64 {
    let beta = eesm_beta(mcs);
    if sinr_linear_per_prb.is_empty() {
        return f64::NEG_INFINITY;
    }
    let min = sinr_linear_per_prb
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .max(0.0);
    let n = sinr_linear_per_prb.len() as f64;
    let sum: f64 = sinr_linear_per_prb
        .iter()
        .map(|&g| (-(g.max(0.0) - min) / beta).exp())
        .sum();
    let eff = min - beta * (sum / n).ln();
    if eff <= 0.0 {
        f64::NEG_INFINITY
    } else {
        10.0 * eff.log10()
    }
}

/// Effective SINR (dB) after Chase combining a retransmission with effective SINR `new_db`
/// into a soft buffer whose combined effective SINR is `prev_db`: the linear SINRs add.
/// `f64::NEG_INFINITY` stands for an empty buffer.
pub fn chase_combine_db(prev_db: f64, new_db: f64) -> f64 {
    let lin = |db: f64| {
        if db == f64::NEG_INFINITY {
            0.0
        } else {
            10f64.powf(db / 10.0)
        }
    };
    let sum = lin(prev_db) + lin(new_db);
    if sum <= 0.0 {
        f64::NEG_INFINITY
    } else {
        10.0 * sum.log10()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_res() {
        assert_eq!(data_res_per_prb(1), 150);
        assert_eq!(data_res_per_prb(2), 138);
        assert_eq!(data_res_per_prb(3), 126);
        assert_eq!(data_res_per_prb(4), 114);
    }

    #[test]
    fn cqi_table_consistent() {
        // efficiency = Q_m · rate / 1024 to the table's 4 decimals.
        for e in CQI_TABLE.iter().skip(1) {
            let eff = e.modulation_order as f64 * e.code_rate_x1024 as f64 / 1024.0;
            assert!((eff - e.efficiency).abs() < 6e-5, "{e:?}");
        }
        assert_eq!(CQI_TABLE[15].code_rate_x1024, 948);
        assert_eq!(CQI_TABLE[7].modulation_order, 4);
        assert_eq!(CQI_TABLE[10].modulation_order, 6);
    }

    #[test]
    fn mcs_from_cqi_mapping() {
        assert_eq!(mcs_from_cqi(15), 28);
        assert_eq!(mcs_from_cqi(0), 0);
        assert_eq!(mcs_from_cqi(1), 0);
        let expect = [0, 0, 0, 2, 4, 6, 10, 12, 14, 18, 19, 21, 23, 26, 27, 28];
        for q in 0..=15u8 {
            assert_eq!(mcs_from_cqi(q), expect[q as usize], "CQI {q}");
        }
        for q in 1..15u8 {
            assert!(mcs_from_cqi(q + 1) >= mcs_from_cqi(q));
        }
        // The chosen MCS never exceeds the CQI's efficiency (except the MCS 0 floor).
        for q in 2..=15u8 {
            let m = mcs_from_cqi(q);
            assert!(spectral_efficiency(m, DEFAULT_CFI) <= CQI_TABLE[q as usize].efficiency);
            if m < MAX_MCS {
                assert!(spectral_efficiency(m + 1, DEFAULT_CFI) > CQI_TABLE[q as usize].efficiency);
            }
        }
    }

    #[test]
    fn thresholds_monotone_and_plausible() {
        for cfi in 1..=3 {
            for m in 0..MAX_MCS {
                assert!(sinr_db_for_mcs(m + 1, cfi) >= sinr_db_for_mcs(m, cfi));
            }
        }
        // Published-order operating points at CFI 2 (AWGN, 10 % BLER): MCS 0 near −6.5 dB,
        // QPSK ≈ 1/3 near −1 dB, 16QAM ≈ 1/2 near 7 dB, MCS 28 near 20 dB.
        let t = |m| sinr_db_for_mcs(m, 2);
        assert!((-8.0..=-5.0).contains(&t(0)), "{}", t(0));
        assert!((-2.5..=0.5).contains(&t(5)), "{}", t(5)); // rate 0.32
        assert!((6.0..=9.0).contains(&t(15)), "{}", t(15)); // 16QAM rate 0.51
        assert!((18.5..=21.5).contains(&t(28)), "{}", t(28));
        // Threshold of the CQI table's own efficiencies: CQI 1 ≈ −7.8, CQI 15 ≈ 20.6 dB.
        let q1 = threshold_db(CQI_TABLE[1].efficiency, 2);
        let q15 = threshold_db(CQI_TABLE[15].efficiency, 6);
        assert!((-9.0..=-6.0).contains(&q1), "{q1}");
        assert!((19.0..=22.0).contains(&q15), "{q15}");
        // MCS 28 over 100 PRB with CFI 3 has code rate ≈ 0.997 > 0.93: never decoded.
        assert!(effective_code_rate(28, 3) > MAX_CODE_RATE);
        assert_eq!(sinr_db_for_mcs(28, 3), f64::INFINITY);
        assert_eq!(bler(28, 60.0, 3), 1.0);
        assert!(effective_code_rate(28, 2) < MAX_CODE_RATE);
        // A larger control region needs more SINR for the same MCS.
        for m in 0..=27 {
            assert!(sinr_db_for_mcs(m, 3) > sinr_db_for_mcs(m, 1));
        }
    }

    #[test]
    fn bler_curve_shape() {
        for m in 0..=MAX_MCS {
            let th = sinr_db_for_mcs(m, 2);
            assert!((bler(m, th, 2) - 0.1).abs() < 1e-12);
            // 90 % → 1 % over 1.5 dB.
            let s90 = th - (81.0f64).ln() / bler_slope();
            let s01 = th + (11.0f64).ln() / bler_slope();
            assert!((bler(m, s90, 2) - 0.9).abs() < 1e-9);
            assert!((bler(m, s01, 2) - 0.01).abs() < 1e-9);
            assert!((s01 - s90 - BLER_WATERFALL_DB).abs() < 1e-9);
            assert!(bler(m, th + 3.0, 2) < 1e-3);
            assert!(bler(m, th - 3.0, 2) > 0.99);
        }
        // Monotone decreasing in SINR, non-decreasing in MCS.
        let mut s = -15.0;
        while s < 30.0 {
            for m in 0..=MAX_MCS {
                assert!(bler(m, s + 0.1, 2) <= bler(m, s, 2));
                if m < MAX_MCS {
                    assert!(bler(m + 1, s, 2) >= bler(m, s, 2));
                }
            }
            s += 0.1;
        }
        assert_eq!(bler(0, f64::NEG_INFINITY, 2), 1.0);
        assert_eq!(bler(0, f64::INFINITY, 2), 0.0);
    }

    #[test]
    fn cqi_consistent_with_bler_over_sweep() {
        for cfi in 1..=3u8 {
            let mut prev = 0;
            let mut s = -20.0;
            while s <= 35.0 {
                let q = cqi_from_sinr_db(s, cfi);
                // Monotone in SINR.
                assert!(q >= prev, "cfi {cfi} sinr {s}");
                prev = q;
                if q == 0 {
                    assert!(bler(mcs_from_cqi(1), s, cfi) > BLER_TARGET);
                } else {
                    assert!(bler(mcs_from_cqi(q), s, cfi) <= BLER_TARGET);
                    for higher in q + 1..=MAX_CQI {
                        assert!(bler(mcs_from_cqi(higher), s, cfi) > BLER_TARGET);
                    }
                }
                s += 0.05;
            }
        }
        assert_eq!(cqi_from_sinr_db(-20.0, 2), 0);
        assert_eq!(cqi_from_sinr_db(30.0, 2), 15);
        // CFI 3 can never report CQI 15 (its MCS 28 is undecodable there).
        assert_eq!(cqi_from_sinr_db(40.0, 3), 14);
    }

    #[test]
    fn eesm_equal_prbs_is_plain_sinr() {
        for m in [0u8, 9, 16, 28] {
            for db in [-5.0f64, 0.0, 13.0, 25.0, 45.0] {
                let lin = 10f64.powf(db / 10.0);
                let eff = effective_sinr_db(&[lin; 25], m);
                assert!((eff - db).abs() < 1e-9, "mcs {m} {db} → {eff}");
            }
        }
    }

    #[test]
    fn eesm_between_min_and_mean() {
        let sinrs = [0.5, 2.0, 8.0, 30.0, 100.0];
        let mean = sinrs.iter().sum::<f64>() / sinrs.len() as f64;
        for m in 0..=MAX_MCS {
            let eff = 10f64.powf(effective_sinr_db(&sinrs, m) / 10.0);
            assert!(eff > 0.5 && eff < mean, "mcs {m}: {eff}");
        }
        // Larger β (higher MCS) is closer to the mean.
        let lo = effective_sinr_db(&sinrs, 0);
        let hi = effective_sinr_db(&sinrs, 28);
        assert!(hi > lo);
        assert_eq!(effective_sinr_db(&[], 3), f64::NEG_INFINITY);
        // Huge SINRs do not underflow.
        assert!(effective_sinr_db(&[1e6, 2e6], 0).is_finite());
    }

    #[test]
    fn chase_combining_adds_linear_sinr() {
        assert!((chase_combine_db(3.0, 3.0) - (3.0 + 10.0 * 2f64.log10())).abs() < 1e-12);
        assert!((chase_combine_db(f64::NEG_INFINITY, 7.0) - 7.0).abs() < 1e-12);
        assert_eq!(
            chase_combine_db(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        // A failed first transmission 2 dB short of the threshold succeeds when combined.
        let th = sinr_db_for_mcs(20, 2);
        let once = th - 2.0;
        assert!(bler(20, once, 2) > 0.5);
        assert!(bler(20, chase_combine_db(once, once), 2) < 0.1);
    }

    #[test]
    fn uplink_link_adaptation() {
        for m in 0..MAX_MCS {
            assert!(ul_sinr_db_for_mcs(m + 1) >= ul_sinr_db_for_mcs(m));
        }
        assert!(ul_sinr_db_for_mcs(28).is_finite()); // 144 REs: code rate ≈ 0.87
        assert_eq!(ul_mcs_for_sinr_db(-30.0), None);
        assert_eq!(ul_mcs_for_sinr_db(40.0), Some(28));
        let m = ul_mcs_for_sinr_db(10.0).unwrap();
        assert!(ul_bler(m, 10.0) <= BLER_TARGET);
        assert!(ul_bler(m + 1, 10.0) > BLER_TARGET);
    }
}
