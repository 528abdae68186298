//! Large-scale channel: path loss models, thermal noise, log-normal shadowing and received
//! power per PRB.
//!
//! Path loss models (all return a positive loss in dB):
//! - [`PathLoss::FreeSpace`]: Friis, `20 log10(4π d f / c)`.
//! - [`PathLoss::LogDistance`]: `L0 + 10 n log10(d / d0)`.
//! - [`PathLoss::OkumuraHata`]: Hata's empirical fit of Okumura's curves (150–1500 MHz).
//! - [`PathLoss::Cost231Hata`]: COST-231 extension of Hata to 1500–2000 MHz.
//! - [`PathLoss::Uma36814`]: TR 36.814 Annex A.2.1.1 macro-cell model,
//!   `128.1 + 37.6 log10(R / km)` at 2 GHz.
//! - [`PathLoss::Umi36814`]: TR 36.814 urban micro NLOS (Table B.1.2.1-1, hexagonal layout),
//!   `36.7 log10(d) + 22.7 + 26 log10(f / GHz)`; at 2 GHz it is the
//!   `140.7 + 36.7 log10(R / km)` pico-cell model of Annex A.2.1.1.
//! - [`PathLoss::Uma36873`], [`PathLoss::Umi36873`]: TR 36.873 §7.2 Table 7.2-1 3D-UMa and
//!   3D-UMi, LOS and NLOS.
//!
//! Every model clamps the 2D distance to at least [`MIN_DISTANCE_M`] = 10 m (the lower edge of
//! the TR 36.814/36.873 validity ranges), so a UE on top of the site gets a finite loss.
//! The empirical Hata models are fitted for 1–20 km, base station heights 30–200 m and UE
//! heights 1–10 m; outside those ranges they are extrapolated as written.

/// Bandwidth of one PRB: 12 subcarriers × 15 kHz.
pub const PRB_BANDWIDTH_HZ: f64 = 180e3;

/// Thermal noise power spectral density at 290 K, dBm/Hz.
pub const THERMAL_NOISE_DBM_PER_HZ: f64 = -174.0;

/// Speed of light in vacuum, m/s.
pub const SPEED_OF_LIGHT: f64 = 299_792_458.0;

/// Smallest 2D distance any path loss model is evaluated at.
pub const MIN_DISTANCE_M: f64 = 10.0;

/// Environment of the Okumura–Hata model (Hata 1980).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum HataEnvironment {
    /// Small or medium-sized city.
    UrbanSmallMedium,
    /// Large city: Hata's large-city mobile antenna correction, the ≤ 200 MHz form below
    /// 300 MHz and the ≥ 400 MHz form above.
    UrbanLarge,
    /// Suburban area: urban loss − 2 (log10(f/28))² − 5.4.
    Suburban,
    /// Open (rural) area: urban loss − 4.78 (log10 f)² + 18.33 log10 f − 40.94.
    Open,
}

/// Distance-dependent path loss model.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
pub enum PathLoss {
    /// Friis free-space loss over the 3D distance.
    FreeSpace,
    /// `ref_loss_db + 10 · exponent · log10(d_3D / ref_distance_m)`.
    LogDistance {
        exponent: f64,
        ref_distance_m: f64,
        ref_loss_db: f64,
    },
    /// Okumura–Hata (150–1500 MHz).
    OkumuraHata { urban_kind: HataEnvironment },
    /// COST-231 Hata (1500–2000 MHz); `metropolitan` adds the 3 dB metropolitan-centre term.
    Cost231Hata { metropolitan: bool },
    /// TR 36.814 macro: `128.1 + 37.6 log10(R km)` at 2 GHz, other carriers scaled by
    /// `21 log10(f / 2 GHz)` (the frequency term of the TR 36.942 §4.5.2 macro model from
    /// which 128.1 + 37.6 log10 R derives for a 15 m antenna height above rooftop).
    Uma36814,
    /// TR 36.814 urban micro NLOS, `36.7 log10(d m) + 22.7 + 26 log10(f GHz)`.
    Umi36814,
    /// TR 36.873 3D-UMa (street width 20 m, building height 20 m, h_E = 1 m).
    Uma36873 { los: bool },
    /// TR 36.873 3D-UMi (street canyon LOS, hexagonal NLOS, h_E = 1 m).
    Umi36873 { los: bool },
}

impl PathLoss {
    /// Path loss in dB at 2D distance `d_2d_m`, carrier `freq_hz`, base station antenna height
    /// `h_bs_m` and UE antenna height `h_ut_m`. The distance is clamped to
    /// [`MIN_DISTANCE_M`]; heights are used by the models that have them.
    pub fn loss_db(&self, d_2d_m: f64, freq_hz: f64, h_bs_m: f64, h_ut_m: f64) -> f64 {
        let d2 = d_2d_m.max(MIN_DISTANCE_M);
        let d3 = (d2 * d2 + (h_bs_m - h_ut_m).powi(2)).sqrt();
        let f_ghz = freq_hz / 1e9;
        let f_mhz = freq_hz / 1e6;
        match self {
            PathLoss::FreeSpace => free_space_db(d3, freq_hz),
            PathLoss::LogDistance {
                exponent,
                ref_distance_m,
                ref_loss_db,
            } => ref_loss_db + 10.0 * exponent * (d3 / ref_distance_m).log10(),
            PathLoss::OkumuraHata { urban_kind } => {
                let d_km = d2 / 1000.0;
                let lf = f_mhz.log10();
                let a_small = (1.1 * lf - 0.7) * h_ut_m - (1.56 * lf - 0.8);
                let a = match urban_kind {
                    HataEnvironment::UrbanLarge => {
                        if f_mhz <= 300.0 {
                            8.29 * (1.54 * h_ut_m).log10().powi(2) - 1.1
                        } else {
                            3.2 * (11.75 * h_ut_m).log10().powi(2) - 4.97
                        }
                    }
                    _ => a_small,
                };
                let urban = 69.55 + 26.16 * lf - 13.82 * h_bs_m.log10() - a
                    + (44.9 - 6.55 * h_bs_m.log10()) * d_km.log10();
                match urban_kind {
                    HataEnvironment::UrbanSmallMedium | HataEnvironment::UrbanLarge => urban,
                    HataEnvironment::Suburban => urban - 2.0 * (f_mhz / 28.0).log10().powi(2) - 5.4,
                    HataEnvironment::Open => urban - 4.78 * lf * lf + 18.33 * lf - 40.94,
                }
            }
            PathLoss::Cost231Hata { metropolitan } => {
                let d_km = d2 / 1000.0;
                let lf = f_mhz.log10();
                let a = (1.1 * lf - 0.7) * h_ut_m - (1.56 * lf - 0.8);
                let c_m = if *metropolitan { 3.0 } else { 0.0 };
                46.3 + 33.9 * lf - 13.82 * h_bs_m.log10() - a
                    + (44.9 - 6.55 * h_bs_m.log10()) * d_km.log10()
                    + c_m
            }
            PathLoss::Uma36814 => {
                128.1 + 37.6 * (d2 / 1000.0).log10() + 21.0 * (f_ghz / 2.0).log10()
            }
            PathLoss::Umi36814 => 36.7 * d2.log10() + 22.7 + 26.0 * f_ghz.log10(),
            PathLoss::Uma36873 { los } => {
                let pl_los = los_36873(d2, d3, f_ghz, h_bs_m, h_ut_m);
                if *los {
                    pl_los
                } else {
                    // Table 7.2-1, 3D-UMa NLOS, W = 20 m, h = 20 m.
                    let (w, h) = (20.0f64, 20.0f64);
                    let nlos = 161.04 - 7.1 * w.log10() + 7.5 * h.log10()
                        - (24.37 - 3.7 * (h / h_bs_m).powi(2)) * h_bs_m.log10()
                        + (43.42 - 3.1 * h_bs_m.log10()) * (d3.log10() - 3.0)
                        + 20.0 * f_ghz.log10()
                        - (3.2 * (17.625f64).log10().powi(2) - 4.97)
                        - 0.6 * (h_ut_m - 1.5);
                    nlos.max(pl_los)
                }
            }
            PathLoss::Umi36873 { los } => {
                let pl_los = los_36873(d2, d3, f_ghz, h_bs_m, h_ut_m);
                if *los {
                    pl_los
                } else {
                    let nlos =
                        36.7 * d3.log10() + 22.7 + 26.0 * f_ghz.log10() - 0.3 * (h_ut_m - 1.5);
                    nlos.max(pl_los)
                }
            }
        }
    }

    /// Short stable name (for logs and result files).
    pub fn name(&self) -> &'static str {
        match self {
            PathLoss::FreeSpace => "free-space",
            PathLoss::LogDistance { .. } => "log-distance",
            PathLoss::OkumuraHata { .. } => "okumura-hata",
            PathLoss::Cost231Hata { .. } => "cost231-hata",
            PathLoss::Uma36814 => "uma-36814",
            PathLoss::Umi36814 => "umi-36814",
            PathLoss::Uma36873 { .. } => "uma-36873",
            PathLoss::Umi36873 { .. } => "umi-36873",
        }
    }
}

/// Friis free-space loss over `d_m` metres at `freq_hz`: `20 log10(4π d f / c)`.
pub fn free_space_db(d_m: f64, freq_hz: f64) -> f64 {
    20.0 * (4.0 * std::f64::consts::PI * d_m * freq_hz / SPEED_OF_LIGHT).log10()
}

/// TR 36.873 Table 7.2-1 LOS loss shared by 3D-UMa and 3D-UMi (effective environment height
/// h_E = 1 m): 22 log10(d3) + 28 + 20 log10(fc) up to the breakpoint
/// d'_BP = 4 h'_BS h'_UT fc / c, then 40 log10(d3) + 28 + 20 log10(fc)
/// − 9 log10(d'_BP² + (h_BS − h_UT)²).
fn los_36873(d2: f64, d3: f64, f_ghz: f64, h_bs: f64, h_ut: f64) -> f64 {
    let h_e = 1.0;
    let d_bp = 4.0 * (h_bs - h_e).max(0.1) * (h_ut - h_e).max(0.1) * f_ghz * 1e9 / SPEED_OF_LIGHT;
    if d2 <= d_bp {
        22.0 * d3.log10() + 28.0 + 20.0 * f_ghz.log10()
    } else {
        40.0 * d3.log10() + 28.0 + 20.0 * f_ghz.log10()
            - 9.0 * (d_bp * d_bp + (h_bs - h_ut).powi(2)).log10()
    }
}

/// Thermal noise power in dBm over `bandwidth_hz` with receiver noise figure
/// `noise_figure_db`: `−174 + 10 log10(B) + NF`.
pub fn thermal_noise_dbm(bandwidth_hz: f64, noise_figure_db: f64) -> f64 {
    THERMAL_NOISE_DBM_PER_HZ + 10.0 * bandwidth_hz.log10() + noise_figure_db
}

/// dB → linear power ratio.
pub fn db_to_linear(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

/// Linear power ratio → dB (−∞ for 0).
pub fn linear_to_db(x: f64) -> f64 {
    10.0 * x.log10()
}

/// dBm → mW.
pub fn dbm_to_mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

/// mW → dBm (−∞ for 0).
pub fn mw_to_dbm(mw: f64) -> f64 {
    10.0 * mw.log10()
}

/// One draw of log-normal shadowing: a zero-mean Gaussian in dB with standard deviation
/// `sigma_db` (Box–Muller transform of two uniform draws).
pub fn shadowing_db(sigma_db: f64, rng: &mut impl rand::Rng) -> f64 {
    sigma_db * standard_normal(rng)
}

/// A standard normal draw by the Box–Muller transform.
pub fn standard_normal(rng: &mut impl rand::Rng) -> f64 {
    // u1 in (0, 1] so that ln(u1) is finite.
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Received power per PRB in dBm when `tx_power_dbm` is spread evenly over `n_prb` PRBs:
/// `P_tx − 10 log10(n_prb) + G_tx + G_rx − L − X`, where `shadowing_db` (X) counts as extra
/// loss (positive = weaker signal).
///
/// # Panics
/// If `n_prb == 0`.
pub fn rx_power_per_prb_dbm(
    tx_power_dbm: f64,
    n_prb: u16,
    tx_gain_dbi: f64,
    rx_gain_dbi: f64,
    loss_db: f64,
    shadowing_db: f64,
) -> f64 {
    assert!(n_prb > 0, "power cannot be spread over 0 PRBs");
    tx_power_dbm - 10.0 * (n_prb as f64).log10() + tx_gain_dbi + rx_gain_dbi
        - loss_db
        - shadowing_db
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    #[test]
    fn free_space_anchor() {
        // FSPL(1 km, 2 GHz) = 20 log10(1) + 20 log10(2000 MHz) + 32.44 = 98.46 dB.
        close(free_space_db(1000.0, 2e9), 98.46, 0.01);
        close(
            PathLoss::FreeSpace.loss_db(1000.0, 2e9, 1.5, 1.5),
            98.46,
            0.01,
        );
        // +6 dB per doubling of distance.
        close(
            free_space_db(2000.0, 2e9) - free_space_db(1000.0, 2e9),
            6.02,
            0.01,
        );
    }

    #[test]
    fn log_distance() {
        let m = PathLoss::LogDistance {
            exponent: 3.5,
            ref_distance_m: 1.0,
            ref_loss_db: 40.0,
        };
        close(m.loss_db(100.0, 2e9, 1.5, 1.5), 40.0 + 70.0, 1e-9);
    }

    #[test]
    fn uma_36814_anchor() {
        let m = PathLoss::Uma36814;
        close(m.loss_db(1000.0, 2e9, 25.0, 1.5), 128.1, 1e-9);
        close(
            m.loss_db(500.0, 2e9, 25.0, 1.5),
            128.1 + 37.6 * 0.5f64.log10(),
            1e-9,
        );
        close(m.loss_db(100.0, 2e9, 25.0, 1.5), 128.1 - 37.6, 1e-9);
        // Clamped below 10 m.
        assert_eq!(
            m.loss_db(1.0, 2e9, 25.0, 1.5),
            m.loss_db(10.0, 2e9, 25.0, 1.5)
        );
    }

    #[test]
    fn umi_36814_matches_pico_formula_at_2ghz() {
        for d in [50.0, 200.0, 1000.0] {
            close(
                PathLoss::Umi36814.loss_db(d, 2e9, 10.0, 1.5),
                140.7 + 36.7 * (d / 1000.0).log10(),
                0.1,
            );
        }
    }

    #[test]
    fn hata_anchors() {
        // Hata urban, 900 MHz, h_b = 30 m, h_m = 1.5 m, d = 1 km: a(h_m) = 0.016 dB and
        // L = 69.55 + 26.16·2.9542 − 13.82·1.4771 − 0.016 = 126.40 dB.
        let m = PathLoss::OkumuraHata {
            urban_kind: HataEnvironment::UrbanSmallMedium,
        };
        close(m.loss_db(1000.0, 900e6, 30.0, 1.5), 126.40, 0.01);
        // Slope (44.9 − 6.55 log10 30) = 35.22 dB/decade.
        close(
            m.loss_db(10_000.0, 900e6, 30.0, 1.5) - m.loss_db(1000.0, 900e6, 30.0, 1.5),
            35.22,
            0.01,
        );
        let sub = PathLoss::OkumuraHata {
            urban_kind: HataEnvironment::Suburban,
        };
        let open = PathLoss::OkumuraHata {
            urban_kind: HataEnvironment::Open,
        };
        let u = m.loss_db(3000.0, 900e6, 30.0, 1.5);
        assert!(sub.loss_db(3000.0, 900e6, 30.0, 1.5) < u);
        assert!(open.loss_db(3000.0, 900e6, 30.0, 1.5) < sub.loss_db(3000.0, 900e6, 30.0, 1.5));
        // COST-231 Hata, 1800 MHz, h_b = 30 m, h_m = 1.5 m, 1 km: 46.3 + 33.9·3.2553
        // − 13.82·1.4771 − a(1.5 m) = 136.20 dB (a = 0.043 dB); metropolitan +3 dB.
        let c = PathLoss::Cost231Hata {
            metropolitan: false,
        };
        close(c.loss_db(1000.0, 1.8e9, 30.0, 1.5), 136.20, 0.01);
        close(
            PathLoss::Cost231Hata { metropolitan: true }.loss_db(1000.0, 1.8e9, 30.0, 1.5)
                - c.loss_db(1000.0, 1.8e9, 30.0, 1.5),
            3.0,
            1e-9,
        );
    }

    #[test]
    fn tr36873_models() {
        // 3D-UMa LOS before the breakpoint (h_BS = 25 m, h_UT = 1.5 m, 2 GHz:
        // d'_BP = 4·24·0.5·2e9/c ≈ 320 m): 22 log10(d3) + 28 + 20 log10(2).
        let los = PathLoss::Uma36873 { los: true };
        let d3 = (100.0f64.powi(2) + 23.5f64.powi(2)).sqrt();
        close(
            los.loss_db(100.0, 2e9, 25.0, 1.5),
            22.0 * d3.log10() + 28.0 + 20.0 * 2f64.log10(),
            1e-9,
        );
        // Continuity at the breakpoint is within a dB (the formulas meet there by design).
        let bp = 4.0 * 24.0 * 0.5 * 2e9 / SPEED_OF_LIGHT;
        let a = los.loss_db(bp - 0.01, 2e9, 25.0, 1.5);
        let b = los.loss_db(bp + 0.01, 2e9, 25.0, 1.5);
        close(a, b, 1.0);
        // 3D-UMa NLOS with h_BS = 25 m, h_UT = 1.5 m, 2 GHz: the full TR 36.873 formula
        // (W = h = 20 m) gives 136.83 dB at 1 km. TR 38.901 Table 7.4.1-1 later condensed that
        // same formula to 13.54 + 39.08 log10(d3) + 20 log10(fc): check agreement within
        // 0.5 dB over 100 m–5 km as an independent anchor, and NLOS ≥ LOS.
        let nlos = PathLoss::Uma36873 { los: false };
        close(nlos.loss_db(1000.0, 2e9, 25.0, 1.5), 136.83, 0.01);
        for d in [100.0f64, 300.0, 1000.0, 2000.0, 5000.0] {
            let d3 = (d * d + 23.5f64.powi(2)).sqrt();
            let l = nlos.loss_db(d, 2e9, 25.0, 1.5);
            close(l, 13.54 + 39.08 * d3.log10() + 20.0 * 2f64.log10(), 0.5);
            assert!(l >= los.loss_db(d, 2e9, 25.0, 1.5));
        }
        let umi_nlos = PathLoss::Umi36873 { los: false };
        let umi_los = PathLoss::Umi36873 { los: true };
        assert!(umi_nlos.loss_db(200.0, 2e9, 10.0, 1.5) >= umi_los.loss_db(200.0, 2e9, 10.0, 1.5));
        let d3 = (200.0f64.powi(2) + 8.5f64.powi(2)).sqrt();
        close(
            umi_nlos.loss_db(200.0, 2e9, 10.0, 1.5),
            36.7 * d3.log10() + 22.7 + 26.0 * 2f64.log10(),
            1e-9,
        );
        // Monotone in distance.
        for m in [
            los,
            nlos,
            umi_los,
            umi_nlos,
            PathLoss::Uma36814,
            PathLoss::Umi36814,
            PathLoss::FreeSpace,
        ] {
            let mut prev = 0.0;
            let mut d = 10.0;
            while d < 5000.0 {
                let l = m.loss_db(d, 2e9, 25.0, 1.5);
                assert!(l >= prev - 1e-9, "{} at {d}", m.name());
                prev = l;
                d *= 1.1;
            }
        }
    }

    #[test]
    fn names_are_distinct() {
        let all = [
            PathLoss::FreeSpace,
            PathLoss::LogDistance {
                exponent: 3.0,
                ref_distance_m: 1.0,
                ref_loss_db: 40.0,
            },
            PathLoss::OkumuraHata {
                urban_kind: HataEnvironment::Open,
            },
            PathLoss::Cost231Hata {
                metropolitan: false,
            },
            PathLoss::Uma36814,
            PathLoss::Umi36814,
            PathLoss::Uma36873 { los: true },
            PathLoss::Umi36873 { los: false },
        ];
        let mut names: Vec<_> = all.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }

    #[test]
    fn noise_and_units() {
        // 10 MHz, NF 9 dB: −174 + 70 + 9 = −95 dBm.
        close(thermal_noise_dbm(10e6, 9.0), -95.0, 1e-9);
        // One PRB, NF 0: −174 + 52.55 = −121.45 dBm.
        close(thermal_noise_dbm(PRB_BANDWIDTH_HZ, 0.0), -121.447, 1e-3);
        close(db_to_linear(3.0), 1.9953, 1e-4);
        close(linear_to_db(100.0), 20.0, 1e-12);
        close(dbm_to_mw(30.0), 1000.0, 1e-9);
        close(mw_to_dbm(1.0), 0.0, 1e-12);
        close(mw_to_dbm(dbm_to_mw(-87.3)), -87.3, 1e-9);
    }

    #[test]
    fn rx_power() {
        // 46 dBm over 50 PRBs, 15 dBi + 0 dBi, 120 dB loss, 2 dB shadow loss.
        close(
            rx_power_per_prb_dbm(46.0, 50, 15.0, 0.0, 120.0, 2.0),
            46.0 - 16.9897 + 15.0 - 120.0 - 2.0,
            1e-3,
        );
    }

    #[test]
    fn shadowing_statistics() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| shadowing_db(8.0, &mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.1, "{mean}");
        assert!((var.sqrt() - 8.0).abs() < 0.1, "{}", var.sqrt());
        // Gaussian tail: P(|X| > 2σ) ≈ 4.55 %.
        let tail = xs.iter().filter(|x| x.abs() > 16.0).count() as f64 / n as f64;
        assert!((tail - 0.0455).abs() < 0.003, "{tail}");
    }
}
