//! Frame error rate from SNR: the NIST OFDM error model that ns-3 uses by default
//! (`NistErrorRateModel`).
//!
//! The model (G. Pei and T. R. Henderson, "Validation of OFDM error rate model in ns-3", Boeing
//! Research & Technology, 2010; the NIST model by M. Miller et al.) takes the uncoded bit error
//! rate of the constellation in AWGN at the SNR (per symbol, noise in the channel width),
//!
//! - BPSK: ½·erfc(√snr); QPSK: ½·erfc(√(snr/2));
//! - 16-QAM: ¾·½·erfc(√(snr/10)); 64-QAM: 7/12·½·erfc(√(snr/42));
//!   256-QAM: 15/32·½·erfc(√(snr/170)) (the square-QAM nearest-neighbour approximation,
//!   (1 − 1/√M)·(2/log₂M)·erfc(√(3·snr / (2(M − 1))))),
//!
//! then the first-event error probability of the punctured K = 7 convolutional code after
//! hard-decision Viterbi decoding, the union bound of M. B. Pursley and D. J. Taipale, "Error
//! probabilities for spread-spectrum packet radio with convolutional codes and Viterbi
//! decoding", IEEE Trans. Commun. 35(1), 1987: with D = √(4p(1 − p)),
//! P_e = (1/b)·Σ_d c_d·D^d over the code's distance spectrum {c_d} (b = the puncturing period's
//! input bits: 1 for rate 1/2, 2 for 2/3, 3 for 3/4, 5 for 5/6; the spectra are those of the
//! rate-1/2 (133, 171) code and its standard puncturings, J. Conan / Haccoun & Bégin). A chunk
//! of n bits survives with probability (1 − P_e)^n. The PHY header is not counted (at the SNRs
//! where data decode, the BPSK-1/2 header practically always does).
//!
//! The test at the foot checks the model against the frame success rates ns-3's own test suite
//! lists for 2000-byte frames at the eight OFDM rates (`wifi-error-rate-models-test.cc`, values
//! from its `ofdm-validation.cc`).

use crate::phy::{CodeRate, Modulation, TxVector};

/// erfc(x) with fractional error below 1.2·10⁻⁷ everywhere (the Chebyshev fit of W. H. Press
/// et al., Numerical Recipes, 2nd ed., §6.2, `erfcc`).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07 + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Uncoded bit error rate of `m` at linear SNR `snr`.
pub fn uncoded_ber(m: Modulation, snr: f64) -> f64 {
    let snr = snr.max(0.0);
    match m {
        Modulation::Bpsk => 0.5 * erfc(snr.sqrt()),
        Modulation::Qpsk => 0.5 * erfc((snr / 2.0).sqrt()),
        Modulation::Qam16 => 0.75 * 0.5 * erfc((snr / 10.0).sqrt()),
        Modulation::Qam64 => 7.0 / 12.0 * 0.5 * erfc((snr / 42.0).sqrt()),
        Modulation::Qam256 => 15.0 / 32.0 * 0.5 * erfc((snr / 170.0).sqrt()),
    }
}

/// Distance spectra (c_d from d_free on) and the period b of each punctured code.
fn spectrum(r: CodeRate) -> (u32, f64, &'static [f64]) {
    match r {
        // d_free = 10, odd distances have no paths.
        CodeRate::R1_2 => (10, 1.0, &[36.0, 0.0, 211.0, 0.0, 1404.0, 0.0, 11633.0, 0.0, 77433.0, 0.0, 502690.0, 0.0, 3322763.0, 0.0, 21292910.0, 0.0, 134365911.0]),
        CodeRate::R2_3 => (6, 2.0, &[3.0, 70.0, 285.0, 1276.0, 6160.0, 27128.0, 117019.0, 498860.0, 2103891.0, 8784123.0]),
        CodeRate::R3_4 => (5, 3.0, &[42.0, 201.0, 1492.0, 10469.0, 62935.0, 379644.0, 2253373.0, 13073811.0, 75152755.0, 428005675.0]),
        CodeRate::R5_6 => (4, 5.0, &[92.0, 528.0, 8694.0, 79453.0, 792114.0, 7375573.0, 67884974.0, 610875423.0, 5427275376.0, 47664215639.0]),
    }
}

/// Decoded bit error probability of code `r` at raw bit error rate `p` (Pursley–Taipale union
/// bound), at most 1.
pub fn coded_ber(r: CodeRate, p: f64) -> f64 {
    let (d_free, b, c) = spectrum(r);
    let d = (4.0 * p * (1.0 - p)).sqrt();
    let mut pow = d.powi(d_free as i32);
    let mut sum = 0.0;
    for &cd in c {
        sum += cd * pow;
        pow *= d;
    }
    (sum / (2.0 * b)).min(1.0)
}

/// Probability that `bits` bits sent with `v` at linear SNR `snr` all decode.
pub fn chunk_success_rate(v: &TxVector, snr: f64, bits: u64) -> f64 {
    let (m, r) = v.modulation();
    let pe = coded_ber(r, uncoded_ber(m, snr));
    if pe >= 1.0 {
        return 0.0;
    }
    (bits as f64 * (-pe).ln_1p()).exp()
}

/// Packet error rate of an MPDU of `bytes` octets at `snr_db`.
pub fn per(v: &TxVector, snr_db: f64, bytes: u32) -> f64 {
    1.0 - chunk_success_rate(v, db_to_linear(snr_db), 8 * bytes as u64)
}

pub fn db_to_linear(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::PhyClass;

    #[test]
    fn erfc_matches_known_values() {
        // Abramowitz & Stegun Table 7.1: erfc(0.5) = 0.4795001, erfc(1) = 0.1572992,
        // erfc(2) = 0.004677735; erfc(3) = 2.209050e-5.
        for (x, want) in [(0.5, 0.479_500_1), (1.0, 0.157_299_2), (2.0, 0.004_677_735), (3.0, 2.209_050e-5)] {
            assert!((erfc(x) - want).abs() / want < 2e-7, "erfc({x}) = {}", erfc(x));
        }
        assert!((erfc(-1.0) - (2.0 - 0.157_299_2)).abs() < 1e-7);
    }

    #[test]
    fn nist_matches_ns3_reference_points() {
        // (rate index, SNR dB, frame success rate of a 2000-byte frame, tolerance): the spot
        // values of ns-3's wifi-error-rate-models-test.cc ("WifiErrorRateModel test case NIST").
        let pts: [(u8, f64, f64, f64); 24] = [
            (0, 2.5, 2.04e-10, 1e-10),
            (0, 3.0, 0.020, 0.001),
            (0, 4.0, 0.885, 0.001),
            (0, 5.0, 0.997, 0.001),
            (1, 6.0, 0.097, 0.001),
            (1, 7.0, 0.918, 0.001),
            (1, 8.0, 0.998, 0.001),
            (2, 6.0, 0.0174, 0.001),
            (2, 7.0, 0.881, 0.001),
            (2, 8.0, 0.997, 0.001),
            (3, 8.5, 2.85e-6, 1e-6),
            (3, 9.5, 0.623, 0.001),
            (3, 10.5, 0.985, 0.001),
            (4, 12.0, 2.22e-7, 1e-7),
            (4, 13.0, 0.495, 0.001),
            (4, 14.0, 0.974, 0.001),
            (5, 15.5, 0.012, 0.001),
            (5, 16.5, 0.818, 0.001),
            (5, 17.5, 0.993, 0.001),
            (6, 20.0, 1.3e-4, 1e-4),
            (6, 21.0, 0.649, 0.001),
            (6, 22.0, 0.983, 0.001),
            (7, 22.0, 0.410, 0.001),
            (7, 23.0, 0.958, 0.001),
        ];
        for (idx, snr_db, want, tol) in pts {
            let got = chunk_success_rate(&TxVector::ofdm(idx), db_to_linear(snr_db), 2000 * 8);
            assert!((got - want).abs() <= tol, "rate {idx} at {snr_db} dB: {got} vs {want}");
        }
    }

    #[test]
    fn nist_matches_ns3_ht_mcs0_chunk() {
        // ns-3's "WifiErrorRateModel test case MIMO": HT MCS 0, 20 MHz, SNR 4 dB, a 2 ms chunk
        // (13,000 bits at 6.5 Mbit/s) succeeds with probability 0.905685.
        let v = TxVector { class: PhyClass::Ht, mcs: 0, width_mhz: 20, nss: 1, short_gi: false };
        let got = chunk_success_rate(&v, db_to_linear(4.0), 13_000);
        assert!((got - 0.905_685).abs() < 1e-5, "{got}");
    }

    #[test]
    fn per_is_monotone_in_snr_and_mcs() {
        for mcs in 0..=9u8 {
            let v = TxVector { class: PhyClass::Vht, mcs, width_mhz: 40, nss: 1, short_gi: false };
            let mut last = 1.0;
            for tenth_db in -50..400 {
                let p = per(&v, tenth_db as f64 / 10.0, 1500);
                assert!(p <= last + 1e-12, "MCS {mcs} not monotone at {} dB", tenth_db as f64 / 10.0);
                last = p;
            }
            assert!(per(&v, 40.0, 1500) < 1e-6);
            if mcs > 0 {
                let lower = TxVector { mcs: mcs - 1, ..v };
                for snr in [5.0, 10.0, 15.0, 20.0, 25.0, 30.0] {
                    assert!(per(&v, snr, 1500) >= per(&lower, snr, 1500) - 1e-12, "MCS {mcs} beats {} at {snr} dB", mcs - 1);
                }
            }
        }
    }
}
