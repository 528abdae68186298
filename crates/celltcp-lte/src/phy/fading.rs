//! Small-scale fading: the EPA, EVA and ETU tapped delay line models of TS 36.104
//! Annex B.2 with Rayleigh taps and the classical (Jakes/Clarke) Doppler spectrum.
//!
//! Each tap is a sum of sinusoids following Zheng & Xiao, *Simulation models with correct
//! statistical properties for Rayleigh fading channels*, IEEE Trans. Commun. 51(6), 2003:
//!
//! ```text
//! X_c(t) = √(2/M) Σₙ cos(ω_d t cos αₙ + φₙ),   X_s(t) = √(2/M) Σₙ cos(ω_d t sin αₙ + ψₙ),
//! αₙ = (2πn − π + θ) / (4M),  n = 1..M,   h(t) = (X_c + j X_s) / √2,
//! ```
//!
//! with θ, φₙ, ψₙ drawn once, uniform on [−π, π). Its ensemble autocorrelation is
//! `E[h(t) h*(t+τ)] = J₀(2π f_d τ)` (Clarke), and E|h|² = 1. [`SINUSOIDS_PER_TAP`] = 8
//! sinusoids per quadrature component (16 cosines per tap).
//!
//! The gain at PRB `k` of an `N`-PRB carrier is `|Σ_l √p_l h_l(t) e^{−j2π f_k τ_l}|²`, with
//! `f_k = (k − (N−1)/2) · 180 kHz` the PRB centre relative to the carrier and `p_l` the tap
//! powers normalised to sum 1, so the gain has mean 1 (over realisations, and over time for
//! a long enough window). The channel is a pure function of time: [`FadingChannel::prb_gains`]
//! can be evaluated lazily at any instant, in any order.

use super::channel::{PRB_BANDWIDTH_HZ, SPEED_OF_LIGHT};
use super::tbs::MAX_PRB;
use std::f64::consts::PI;

/// Sinusoids per quadrature component of each tap.
pub const SINUSOIDS_PER_TAP: usize = 8;

/// Most taps of any profile (EVA, ETU).
const MAX_TAPS: usize = 9;

/// Multipath delay profile of TS 36.104 Annex B.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FadingProfile {
    /// Extended Pedestrian A (Table B.2-2): 7 taps, 410 ns.
    Epa,
    /// Extended Vehicular A (Table B.2-3): 9 taps, 2510 ns.
    Eva,
    /// Extended Typical Urban (Table B.2-4): 9 taps, 5000 ns.
    Etu,
}

/// (excess tap delay ns, relative power dB), TS 36.104 Table B.2-2.
const EPA_TAPS: [(f64, f64); 7] = [
    (0.0, 0.0),
    (30.0, -1.0),
    (70.0, -2.0),
    (90.0, -3.0),
    (110.0, -8.0),
    (190.0, -17.2),
    (410.0, -20.8),
];

/// TS 36.104 Table B.2-3.
const EVA_TAPS: [(f64, f64); 9] = [
    (0.0, 0.0),
    (30.0, -1.5),
    (150.0, -1.4),
    (310.0, -3.6),
    (370.0, -0.6),
    (710.0, -9.1),
    (1090.0, -7.0),
    (1730.0, -12.0),
    (2510.0, -16.9),
];

/// TS 36.104 Table B.2-4.
const ETU_TAPS: [(f64, f64); 9] = [
    (0.0, -1.0),
    (50.0, -1.0),
    (120.0, -1.0),
    (200.0, 0.0),
    (230.0, 0.0),
    (500.0, 0.0),
    (1600.0, -3.0),
    (2300.0, -5.0),
    (5000.0, -7.0),
];

impl FadingProfile {
    /// The taps as (excess delay in ns, relative power in dB), exactly as in Annex B.2.
    pub fn taps(&self) -> &'static [(f64, f64)] {
        match self {
            FadingProfile::Epa => &EPA_TAPS,
            FadingProfile::Eva => &EVA_TAPS,
            FadingProfile::Etu => &ETU_TAPS,
        }
    }

    /// Lower-case name ("epa", "eva", "etu").
    pub fn name(&self) -> &'static str {
        match self {
            FadingProfile::Epa => "epa",
            FadingProfile::Eva => "eva",
            FadingProfile::Etu => "etu",
        }
    }

    /// Maximum Doppler of the usual conformance combination (TS 36.104 Table B.2-5 style
    /// names EPA5, EVA70, ETU300).
    pub fn default_doppler_hz(&self) -> f64 {
        match self {
            FadingProfile::Epa => 5.0,
            FadingProfile::Eva => 70.0,
            FadingProfile::Etu => 300.0,
        }
    }

    /// RMS delay spread in seconds (power-weighted, from the tap table).
    pub fn rms_delay_spread_s(&self) -> f64 {
        let taps = self.taps();
        let p: Vec<f64> = taps.iter().map(|&(_, db)| 10f64.powf(db / 10.0)).collect();
        let sp: f64 = p.iter().sum();
        let mean = taps.iter().zip(&p).map(|(&(d, _), &w)| d * w).sum::<f64>() / sp;
        let m2 = taps
            .iter()
            .zip(&p)
            .map(|(&(d, _), &w)| d * d * w)
            .sum::<f64>()
            / sp;
        (m2 - mean * mean).sqrt() * 1e-9
    }
}

/// Maximum Doppler shift `v f / c` for a UE moving at `speed_mps` on carrier `carrier_hz`.
pub fn doppler_hz(speed_mps: f64, carrier_hz: f64) -> f64 {
    speed_mps * carrier_hz / SPEED_OF_LIGHT
}

#[derive(Clone, Debug)]
struct Tap {
    /// √(p_l / M) with p_l normalised so that Σ p_l = 1.
    amp: f64,
    delay_s: f64,
    /// Angular frequencies ω_d cos αₙ and phases φₙ of the in-phase component.
    w_c: [f64; SINUSOIDS_PER_TAP],
    ph_c: [f64; SINUSOIDS_PER_TAP],
    /// ω_d sin αₙ and ψₙ of the quadrature component.
    w_s: [f64; SINUSOIDS_PER_TAP],
    ph_s: [f64; SINUSOIDS_PER_TAP],
}

/// One realisation of a frequency-selective Rayleigh fading channel.
#[derive(Clone, Debug)]
pub struct FadingChannel {
    profile: FadingProfile,
    doppler_hz: f64,
    taps: Vec<Tap>,
}

impl FadingChannel {
    /// The maximum Doppler shift of this realisation, Hz.
    pub fn doppler(&self) -> f64 {
        self.doppler_hz
    }

    /// Draws a realisation of `profile` with maximum Doppler `doppler_hz` (all random phases
    /// and angles are drawn here, so the channel is fixed by `rng`'s state).
    pub fn new(profile: FadingProfile, doppler_hz: f64, rng: &mut impl rand::Rng) -> Self {
        let taps_spec = profile.taps();
        let total: f64 = taps_spec.iter().map(|&(_, db)| 10f64.powf(db / 10.0)).sum();
        let wd = 2.0 * PI * doppler_hz;
        let m = SINUSOIDS_PER_TAP as f64;
        let mut uniform_pi = || (rng.gen::<f64>() * 2.0 - 1.0) * PI;
        let taps = taps_spec
            .iter()
            .map(|&(delay_ns, db)| {
                let p = 10f64.powf(db / 10.0) / total;
                let theta = uniform_pi();
                let mut tap = Tap {
                    amp: (p / m).sqrt(),
                    delay_s: delay_ns * 1e-9,
                    w_c: [0.0; SINUSOIDS_PER_TAP],
                    ph_c: [0.0; SINUSOIDS_PER_TAP],
                    w_s: [0.0; SINUSOIDS_PER_TAP],
                    ph_s: [0.0; SINUSOIDS_PER_TAP],
                };
                for n in 0..SINUSOIDS_PER_TAP {
                    let alpha = (2.0 * PI * (n + 1) as f64 - PI + theta) / (4.0 * m);
                    tap.w_c[n] = wd * alpha.cos();
                    tap.w_s[n] = wd * alpha.sin();
                    tap.ph_c[n] = uniform_pi();
                    tap.ph_s[n] = uniform_pi();
                }
                tap
            })
            .collect();
        FadingChannel {
            profile,
            doppler_hz,
            taps,
        }
    }

    /// The delay profile.
    pub fn profile(&self) -> FadingProfile {
        self.profile
    }

    /// The maximum Doppler shift in Hz.
    pub fn doppler_hz(&self) -> f64 {
        self.doppler_hz
    }

    /// Number of taps.
    pub fn num_taps(&self) -> usize {
        self.taps.len()
    }

    /// Complex coefficient (re, im) of tap `tap` at time `t_secs`, including its share
    /// `√p_l` of the power (so `Σ_l E|h_l|² = 1`).
    ///
    /// # Panics
    /// If `tap >= num_taps()`.
    pub fn tap_coefficient(&self, tap: usize, t_secs: f64) -> (f64, f64) {
        let tp = &self.taps[tap];
        let mut re = 0.0;
        let mut im = 0.0;
        for n in 0..SINUSOIDS_PER_TAP {
            re += (tp.w_c[n] * t_secs + tp.ph_c[n]).cos();
            im += (tp.w_s[n] * t_secs + tp.ph_s[n]).cos();
        }
        (tp.amp * re, tp.amp * im)
    }

    /// Linear power gain of PRBs `0..n_prb` at time `t_secs` (PRB centres spaced 180 kHz,
    /// symmetric about the carrier), written to `out[..n_prb]`. Mean 1.
    ///
    /// # Panics
    /// If `n_prb > 110` or `out.len() < n_prb`.
    pub fn prb_gains(&self, t_secs: f64, n_prb: u16, out: &mut [f32]) {
        let n = n_prb as usize;
        assert!(n_prb <= MAX_PRB, "N_PRB {n_prb} out of range 0..=110");
        assert!(out.len() >= n, "output slice shorter than n_prb");
        // Per tap: coefficient h_l and the unit rotator e^{−j2π f_k τ_l}, stepped by 180 kHz.
        // PRBs outer, taps inner: the taps' rotations are independent dependency chains.
        let nt = self.taps.len();
        let mut hr = [0.0f64; MAX_TAPS];
        let mut hi = [0.0f64; MAX_TAPS];
        let mut zr = [0.0f64; MAX_TAPS];
        let mut zi = [0.0f64; MAX_TAPS];
        let mut wr = [0.0f64; MAX_TAPS];
        let mut wi = [0.0f64; MAX_TAPS];
        let f0 = -((n as f64 - 1.0) / 2.0) * PRB_BANDWIDTH_HZ;
        for (l, tap) in self.taps.iter().enumerate() {
            (hr[l], hi[l]) = self.tap_coefficient(l, t_secs);
            let start = -2.0 * PI * f0 * tap.delay_s;
            let step = -2.0 * PI * PRB_BANDWIDTH_HZ * tap.delay_s;
            (zi[l], zr[l]) = start.sin_cos();
            (wi[l], wr[l]) = step.sin_cos();
        }
        for g in out[..n].iter_mut() {
            let (mut re, mut im) = (0.0, 0.0);
            for l in 0..nt {
                re += hr[l] * zr[l] - hi[l] * zi[l];
                im += hr[l] * zi[l] + hi[l] * zr[l];
                let nr = zr[l] * wr[l] - zi[l] * wi[l];
                zi[l] = zr[l] * wi[l] + zi[l] * wr[l];
                zr[l] = nr;
            }
            *g = (re * re + im * im) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Bessel J0 by the integral (1/π) ∫₀^π cos(x sin θ) dθ (Simpson, 2000 intervals).
    fn j0(x: f64) -> f64 {
        let n = 2000;
        let h = PI / n as f64;
        let f = |th: f64| (x * th.sin()).cos();
        let mut s = f(0.0) + f(PI);
        for i in 1..n {
            s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i as f64 * h);
        }
        s * h / 3.0 / PI
    }

    #[test]
    fn tables_match_annex_b2() {
        assert_eq!(FadingProfile::Epa.taps().len(), 7);
        assert_eq!(FadingProfile::Eva.taps().len(), 9);
        assert_eq!(FadingProfile::Etu.taps().len(), 9);
        assert_eq!(FadingProfile::Epa.taps()[6], (410.0, -20.8));
        assert_eq!(FadingProfile::Eva.taps()[8], (2510.0, -16.9));
        assert_eq!(FadingProfile::Etu.taps()[8], (5000.0, -7.0));
        // RMS delay spreads quoted in TS 36.104 Table B.2-1: 43, 357, 991 ns.
        assert!((FadingProfile::Epa.rms_delay_spread_s() * 1e9 - 43.0).abs() < 1.5);
        assert!((FadingProfile::Eva.rms_delay_spread_s() * 1e9 - 357.0).abs() < 1.5);
        assert!((FadingProfile::Etu.rms_delay_spread_s() * 1e9 - 991.0).abs() < 1.5);
    }

    #[test]
    fn deterministic_function_of_time() {
        let a = FadingChannel::new(FadingProfile::Eva, 70.0, &mut ChaCha8Rng::seed_from_u64(3));
        let b = FadingChannel::new(FadingProfile::Eva, 70.0, &mut ChaCha8Rng::seed_from_u64(3));
        let mut ga = [0f32; 50];
        let mut gb = [0f32; 50];
        // Evaluate b out of order; results must match a's in-order evaluation.
        let times = [0.0, 0.123, 7.5, 1000.001];
        b.prb_gains(times[3], 50, &mut gb);
        for &t in &times {
            a.prb_gains(t, 50, &mut ga);
            b.prb_gains(t, 50, &mut gb);
            assert_eq!(ga, gb);
        }
        let c = FadingChannel::new(FadingProfile::Eva, 70.0, &mut ChaCha8Rng::seed_from_u64(4));
        let mut gc = [0f32; 50];
        c.prb_gains(0.5, 50, &mut gc);
        a.prb_gains(0.5, 50, &mut ga);
        assert_ne!(ga, gc);
    }

    #[test]
    fn mean_power_is_one() {
        // Average over 40 realisations × 2000 instants (20 s) × 50 PRBs. The estimate's
        // standard error is about 1 %; tolerance 5 %.
        for profile in [FadingProfile::Epa, FadingProfile::Eva, FadingProfile::Etu] {
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let mut sum = 0.0;
            let mut count = 0usize;
            let mut g = [0f32; 50];
            for _ in 0..40 {
                let ch = FadingChannel::new(profile, 70.0, &mut rng);
                for i in 0..2000 {
                    ch.prb_gains(i as f64 * 0.01, 50, &mut g);
                    sum += g.iter().map(|&x| x as f64).sum::<f64>();
                    count += 50;
                }
            }
            let mean = sum / count as f64;
            assert!((mean - 1.0).abs() < 0.05, "{}: {mean}", profile.name());
        }
    }

    #[test]
    fn tap_autocorrelation_is_clarke() {
        // Ensemble Re E[h(t) h*(t+τ)] / E|h|² over 1000 realisations × 10 origins, single
        // tap, compared with J0(2π f_d τ). Tolerance 0.05 (standard error ≈ 0.01–0.02).
        let fd = 100.0;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let lags = [0.0, 0.5e-3, 1.0e-3, 2.0e-3, 2.405 / (2.0 * PI * fd), 5.0e-3];
        let mut acc = vec![0.0; lags.len()];
        let mut power = 0.0;
        for _ in 0..1000 {
            let ch = FadingChannel::new(FadingProfile::Epa, fd, &mut rng);
            for o in 0..10 {
                let t0 = o as f64 * 0.37;
                let (ar, ai) = ch.tap_coefficient(0, t0);
                power += ar * ar + ai * ai;
                for (j, &tau) in lags.iter().enumerate() {
                    let (br, bi) = ch.tap_coefficient(0, t0 + tau);
                    acc[j] += ar * br + ai * bi;
                }
            }
        }
        for (j, &tau) in lags.iter().enumerate() {
            let r = acc[j] / power;
            let want = j0(2.0 * PI * fd * tau);
            assert!((r - want).abs() < 0.05, "tau {tau}: {r} vs J0 {want}");
        }
        assert!((j0(2.405)).abs() < 1e-3);
    }

    fn freq_correlation(profile: FadingProfile, sep: usize) -> f64 {
        // Correlation coefficient of the power gains of PRB 10 and PRB 10+sep (100 PRBs).
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let (mut sx, mut sy, mut sxx, mut syy, mut sxy, mut n) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        let mut g = [0f32; 100];
        for _ in 0..200 {
            let ch = FadingChannel::new(profile, 10.0, &mut rng);
            for i in 0..50 {
                ch.prb_gains(i as f64 * 0.05, 100, &mut g);
                let (x, y) = (g[10] as f64, g[10 + sep] as f64);
                sx += x;
                sy += y;
                sxx += x * x;
                syy += y * y;
                sxy += x * y;
                n += 1.0;
            }
        }
        let cov = sxy / n - sx / n * sy / n;
        cov / ((sxx / n - (sx / n).powi(2)).sqrt() * (syy / n - (sy / n).powi(2)).sqrt())
    }

    #[test]
    fn etu_decorrelates_faster_across_prbs_than_epa() {
        let epa = freq_correlation(FadingProfile::Epa, 5);
        let eva = freq_correlation(FadingProfile::Eva, 5);
        let etu = freq_correlation(FadingProfile::Etu, 5);
        // 900 kHz apart: EPA (43 ns rms) stays strongly correlated, ETU (991 ns) does not.
        assert!(epa > 0.8, "EPA {epa}");
        assert!(etu < 0.4, "ETU {etu}");
        assert!(epa > eva && eva > etu, "{epa} {eva} {etu}");
    }

    #[test]
    fn doppler_from_speed() {
        // 120 km/h at 2 GHz ≈ 222 Hz.
        assert!((doppler_hz(120.0 / 3.6, 2e9) - 222.4).abs() < 0.1);
    }
}
