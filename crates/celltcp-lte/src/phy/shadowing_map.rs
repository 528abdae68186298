//! Spatially correlated log-normal shadowing that a moving UE samples along its path.
//!
//! Gudmundson's model (M. Gudmundson, "Correlation model for shadow fading in mobile radio
//! systems", Electronics Letters 27(23), 1991): the shadowing in dB seen by a UE is a
//! zero-mean Gaussian process in the distance travelled, with autocorrelation
//! `R(Δd) = σ² exp(−Δd / d_corr)`. Sampled at the positions the UE visits it is a first-order
//! autoregression on the distance moved between samples:
//!
//! ```text
//! s_new = ρ s + σ √(1 − ρ²) n,   ρ = exp(−Δd / d_corr),   n ~ N(0, 1)
//! ```
//!
//! which keeps the stationary variance σ² at any step size, gives exactly
//! `E[s(d) s(d + Δ)] = σ² exp(−Δ / d_corr)` along the path, and leaves the value unchanged when
//! the UE does not move (Δd = 0: ρ = 1, no draw). Δd is the straight distance between two
//! successive updates, so the correlation follows the path length (on a straight path, the
//! Euclidean distance).
//!
//! Decorrelation distance `d_corr`: TR 36.814 adopts the WINNER+ large-scale parameters
//! (Annex B.1.2.2), whose shadow-fading correlation distances are, also in TR 36.873 and in
//! TR 38.901 Table 7.5-6: UMa 37 m (LOS) / 50 m (NLOS), UMi 10 m (LOS) / 13 m (NLOS). The
//! default is [`DEFAULT_DECORRELATION_M`] = 50 m (UMa NLOS).
//!
//! Correlation between sites: TR 36.814 Table A.2.1.1-2 sets the shadowing correlation to 0.5
//! between sites and 1.0 between the sectors of one site. Each UE's value toward cell `c` of
//! site `k` is `√r · C + √(1 − r) · S_k`, where `C` (common to the UE) and `S_k` (one per site)
//! are independent unit-variance-scaled processes of the form above: the value toward any cell
//! keeps variance σ² and autocorrelation `exp(−Δd / d_corr)`, two sites correlate by `r`, two
//! sectors of one site by 1.
//!
//! Cost: one update draws `1 + n_sites` normals. Because the AR(1) step is exact for any Δd,
//! updating once per measurement or per metre moved gives the same statistics as updating
//! every TTI (only the sampling of the path is coarser).
//!
//! API:
//! ```text
//! let mut m = ShadowingMap::new(&ShadowingConfig::default(), &site_of_cell, start_pos, rng)?;
//! m.update(pos);          // after the UE moved
//! m.value_db(cell)        // shadowing toward cell (extra loss, dB; positive = weaker)
//! ```

use super::channel::standard_normal;
use celltcp_engine::rng::SimRng;

/// Default decorrelation distance, metres (UMa NLOS, see the module doc).
pub const DEFAULT_DECORRELATION_M: f64 = 50.0;

/// Shadowing parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShadowingConfig {
    /// Standard deviation in dB, ≥ 0 (TR 36.814 Table A.2.1.1-2 macro: 8 dB).
    pub sigma_db: f64,
    /// Decorrelation distance in metres, > 0.
    pub decorrelation_m: f64,
    /// Correlation between the shadowing toward two different sites, in [0, 1]
    /// (TR 36.814 Table A.2.1.1-2: 0.5).
    pub inter_site_correlation: f64,
}

impl Default for ShadowingConfig {
    fn default() -> Self {
        ShadowingConfig { sigma_db: 8.0, decorrelation_m: DEFAULT_DECORRELATION_M, inter_site_correlation: 0.5 }
    }
}

impl ShadowingConfig {
    /// Checks the ranges, naming the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.sigma_db.is_finite() && self.sigma_db >= 0.0) {
            return Err(format!("shadowing sigma_db must be a finite value >= 0 dB; got {}", self.sigma_db));
        }
        if !(self.decorrelation_m.is_finite() && self.decorrelation_m > 0.0) {
            return Err(format!("shadowing decorrelation_m must be a finite distance > 0 m; got {}", self.decorrelation_m));
        }
        if !(0.0..=1.0).contains(&self.inter_site_correlation) {
            return Err(format!(
                "shadowing inter_site_correlation must be in [0, 1]; got {}",
                self.inter_site_correlation
            ));
        }
        Ok(())
    }
}

/// The shadowing one UE sees toward every cell.
#[derive(Clone, Debug)]
pub struct ShadowingMap {
    sigma_db: f64,
    decorrelation_m: f64,
    w_common: f64,
    w_site: f64,
    /// Unit-variance AR(1) states: the common one and one per site.
    common: f64,
    sites: Vec<f64>,
    site_of_cell: Vec<usize>,
    /// Cached value per cell in dB.
    values: Vec<f64>,
    last_pos: (f64, f64),
    rng: SimRng,
}

impl ShadowingMap {
    /// A map for the cells whose sites are `site_of_cell` (cell index → site index), starting
    /// at `start` with an independent stationary draw of every process.
    pub fn new(cfg: &ShadowingConfig, site_of_cell: &[usize], start: (f64, f64), mut rng: SimRng) -> Result<Self, String> {
        cfg.validate()?;
        let n_sites = site_of_cell.iter().map(|&s| s + 1).max().unwrap_or(0);
        let common = standard_normal(&mut rng);
        let sites = (0..n_sites).map(|_| standard_normal(&mut rng)).collect();
        let mut m = ShadowingMap {
            sigma_db: cfg.sigma_db,
            decorrelation_m: cfg.decorrelation_m,
            w_common: cfg.inter_site_correlation.sqrt(),
            w_site: (1.0 - cfg.inter_site_correlation).sqrt(),
            common,
            sites,
            site_of_cell: site_of_cell.to_vec(),
            values: vec![0.0; site_of_cell.len()],
            last_pos: start,
            rng,
        };
        m.refresh();
        Ok(m)
    }

    fn refresh(&mut self) {
        for (v, &s) in self.values.iter_mut().zip(&self.site_of_cell) {
            *v = self.sigma_db * (self.w_common * self.common + self.w_site * self.sites[s]);
        }
    }

    /// Moves the UE to `pos`: every process takes one AR(1) step over the distance moved.
    /// No movement, no change.
    pub fn update(&mut self, pos: (f64, f64)) {
        let d = ((pos.0 - self.last_pos.0).powi(2) + (pos.1 - self.last_pos.1).powi(2)).sqrt();
        self.last_pos = pos;
        if d == 0.0 {
            return;
        }
        let rho = (-d / self.decorrelation_m).exp();
        let innov = (1.0 - rho * rho).sqrt();
        self.common = rho * self.common + innov * standard_normal(&mut self.rng);
        for s in self.sites.iter_mut() {
            *s = rho * *s + innov * standard_normal(&mut self.rng);
        }
        self.refresh();
    }

    /// Shadowing toward `cell` in dB at the last position (extra loss: positive = weaker).
    pub fn value_db(&self, cell: usize) -> f64 {
        self.values[cell]
    }

    /// Every cell's value, indexed by cell.
    pub fn values_db(&self) -> &[f64] {
        &self.values
    }

    /// The position of the last update.
    pub fn position(&self) -> (f64, f64) {
        self.last_pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::rng::{component_id, component_rng};

    fn map(sigma: f64, dcorr: f64, r: f64, site_of_cell: &[usize], seed: u64) -> ShadowingMap {
        let cfg = ShadowingConfig { sigma_db: sigma, decorrelation_m: dcorr, inter_site_correlation: r };
        ShadowingMap::new(&cfg, site_of_cell, (0.0, 0.0), component_rng(seed, component_id("ue", "t"))).unwrap()
    }

    /// Walks `steps` steps of `step_m` along x and returns cell 0's value after each.
    fn walk(m: &mut ShadowingMap, steps: usize, step_m: f64) -> Vec<f64> {
        (1..=steps)
            .map(|i| {
                m.update((i as f64 * step_m, 0.0));
                m.value_db(0)
            })
            .collect()
    }

    #[test]
    fn stationary_sigma_and_zero_mean() {
        let mut m = map(8.0, 50.0, 0.0, &[0], 1);
        let xs = walk(&mut m, 400_000, 10.0);
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!(mean.abs() < 0.15, "{mean}");
        assert!((sd - 8.0).abs() < 0.1, "{sd}");
    }

    #[test]
    fn autocorrelation_matches_gudmundson() {
        // Sampled every 5 m along a straight path; lags of 10, 25, 50, 100 m must correlate as
        // exp(−Δd/50) = 0.819, 0.607, 0.368, 0.135.
        let mut m = map(6.0, 50.0, 0.5, &[0], 2);
        let xs = walk(&mut m, 400_000, 5.0);
        let n = xs.len();
        let var = xs.iter().map(|x| x * x).sum::<f64>() / n as f64;
        for lag_m in [10.0, 25.0, 50.0, 100.0] {
            let k = (lag_m / 5.0) as usize;
            let c = (0..n - k).map(|i| xs[i] * xs[i + k]).sum::<f64>() / (n - k) as f64 / var;
            let expect = (-lag_m / 50.0f64).exp();
            assert!((c - expect).abs() < 0.02, "lag {lag_m}: {c} vs {expect}");
        }
    }

    #[test]
    fn step_size_does_not_change_the_statistics() {
        // one 50 m step and ten 5 m steps give the same correlation with the start value
        let trials = 20_000;
        let (mut big, mut small) = (0.0, 0.0);
        let mut v0 = 0.0;
        for t in 0..trials {
            let mut a = map(1.0, 50.0, 0.0, &[0], 1000 + t);
            let s0 = a.value_db(0);
            a.update((50.0, 0.0));
            big += s0 * a.value_db(0);
            let mut b = map(1.0, 50.0, 0.0, &[0], 500_000 + t);
            let z0 = b.value_db(0);
            walk(&mut b, 10, 5.0);
            small += z0 * b.value_db(0);
            v0 += s0 * s0;
        }
        let (big, small, v0) = (big / trials as f64, small / trials as f64, v0 / trials as f64);
        let e = (-1.0f64).exp();
        assert!((v0 - 1.0).abs() < 0.03, "{v0}");
        assert!((big - e).abs() < 0.03, "{big}");
        assert!((small - e).abs() < 0.03, "{small}");
    }

    #[test]
    fn zero_movement_keeps_the_value() {
        let mut m = map(8.0, 50.0, 0.5, &[0, 0, 0, 1, 1, 1], 3);
        m.update((12.0, 5.0));
        let before = m.values_db().to_vec();
        for _ in 0..10 {
            m.update((12.0, 5.0));
        }
        assert_eq!(m.values_db(), &before[..]);
        // a tiny move changes it only a little (ρ ≈ 1)
        m.update((12.001, 5.0));
        for (a, b) in m.values_db().iter().zip(&before) {
            assert!((a - b).abs() < 0.5, "{a} {b}");
        }
    }

    #[test]
    fn sites_correlate_by_r_and_sectors_fully() {
        // cells 0..2 on site 0, cells 3..5 on site 1
        let mut m = map(8.0, 20.0, 0.5, &[0, 0, 0, 1, 1, 1], 4);
        let (mut s01, mut s03, mut v0, mut v3) = (0.0, 0.0, 0.0, 0.0);
        let n = 200_000;
        for i in 1..=n {
            m.update((i as f64 * 20.0, 0.0));
            let v = m.values_db();
            s01 += v[0] * v[1];
            s03 += v[0] * v[3];
            v0 += v[0] * v[0];
            v3 += v[3] * v[3];
        }
        assert!((s01 / v0 - 1.0).abs() < 1e-9);
        let r = s03 / (v0 * v3).sqrt();
        assert!((r - 0.5).abs() < 0.02, "{r}");
        assert!(((v3 / n as f64).sqrt() - 8.0).abs() < 0.15);
    }

    #[test]
    fn deterministic_per_seed_and_validated() {
        let mut a = map(8.0, 50.0, 0.5, &[0, 1], 9);
        let mut b = map(8.0, 50.0, 0.5, &[0, 1], 9);
        assert_eq!(walk(&mut a, 100, 3.0), walk(&mut b, 100, 3.0));
        let bad = ShadowingConfig { sigma_db: 8.0, decorrelation_m: 0.0, inter_site_correlation: 0.5 };
        let e = ShadowingMap::new(&bad, &[0], (0.0, 0.0), component_rng(1, 1)).unwrap_err();
        assert!(e.contains("decorrelation_m"), "{e}");
        let bad = ShadowingConfig { inter_site_correlation: 1.5, ..Default::default() };
        assert!(bad.validate().unwrap_err().contains("inter_site_correlation"));
    }
}
