//! Truncated Levy walk (TLW) of Rhee, Shin, Hong, Lee, Kim, Chong, "On the Levy-walk nature
//! of human mobility", IEEE/ACM Trans. Networking 19(3), 2011 (INFOCOM 2008): human walks are
//! a sequence of straight flights separated by pauses, where
//! - the flight length `l` follows a truncated power law `p(l) ∝ l^−(1+α)` on
//!   `[flight_min_m, flight_max_m]`, 0 < α < 2;
//! - the pause time `t_p` follows `p(t_p) ∝ t_p^−(1+β)` on `[pause_min_s, pause_max_s]`,
//!   0 < β < 2;
//! - the direction of each flight is uniform on [0, 2π).
//!
//! Both are drawn by inverting the truncated Pareto CDF,
//! `x = (lo^−a − u (lo^−a − hi^−a))^(−1/a)`, so the complementary CDF falls as `x^−a` well
//! inside the truncation (tail exponent α for flights, β for pauses).
//!
//! Defaults: α = 1.5, β = 1.0, flights 10 m – 5 km, pauses 10 s – 1000 s, walking speed uniform
//! 3.6–5.4 km/h (1–1.5 m/s). These are this crate's choices inside the model's ranges, not
//! values fitted by the paper (its fits vary by site); set them per study.
//!
//! Differences from the paper's TLW, stated: the flight duration is `l / v` with `v` drawn per
//! flight from the speed distribution, where TLW uses the empirical `Δt_f = k l^(1−ρ)`; and a
//! flight that reaches the region's boundary reflects specularly and continues, so its length
//! (and the flight-length distribution) is unchanged.

use std::collections::VecDeque;

use celltcp_engine::rng::SimRng;
use rand::Rng;

use super::{push_flight, Leg, Point, Region, SpeedDist};

/// `model = "levy_walk"`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LevyWalkConfig {
    /// Start position (inside the region); default: uniform in the region.
    pub start: Option<Point>,
    pub region: Region,
    /// Flight-length exponent α, in (0, 2).
    pub alpha: f64,
    /// Pause-time exponent β, in (0, 2).
    pub beta: f64,
    pub flight_min_m: f64,
    pub flight_max_m: f64,
    pub pause_min_s: f64,
    pub pause_max_s: f64,
    /// Speed per flight, km/h (> 0).
    pub speed: SpeedDist,
}

impl Default for LevyWalkConfig {
    fn default() -> Self {
        LevyWalkConfig {
            start: None,
            region: Region::Rect { x_min: 0.0, x_max: 1000.0, y_min: 0.0, y_max: 1000.0 },
            alpha: 1.5,
            beta: 1.0,
            flight_min_m: 10.0,
            flight_max_m: 5000.0,
            pause_min_s: 10.0,
            pause_max_s: 1000.0,
            speed: SpeedDist::Uniform { min_kmh: 3.6, max_kmh: 5.4 },
        }
    }
}

impl LevyWalkConfig {
    pub fn validate(&self) -> Result<(), String> {
        self.region.validate()?;
        for (k, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v > 0.0 && v < 2.0) {
                return Err(format!("levy_walk {k} must be in (0, 2) (truncated Levy walk, Rhee et al.); got {v}"));
            }
        }
        for (lo_k, lo, hi_k, hi) in [
            ("flight_min_m", self.flight_min_m, "flight_max_m", self.flight_max_m),
            ("pause_min_s", self.pause_min_s, "pause_max_s", self.pause_max_s),
        ] {
            if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo < hi) {
                return Err(format!("levy_walk needs 0 < {lo_k} < {hi_k} (finite); got {lo} and {hi}"));
            }
        }
        self.speed.validate("speed", true)?;
        if let Some(s) = self.start {
            if !self.region.contains(s) {
                return Err(format!("start {s:?} must be inside the region {:?}", self.region));
            }
        }
        Ok(())
    }
}

/// A draw from `p(x) ∝ x^−(1+a)` on `[lo, hi]`.
pub fn truncated_pareto(a: f64, lo: f64, hi: f64, rng: &mut SimRng) -> f64 {
    let u: f64 = rng.gen();
    let (l, h) = (lo.powf(-a), hi.powf(-a));
    (l - u * (l - h)).powf(-1.0 / a).clamp(lo, hi)
}

#[derive(Clone, Debug)]
pub(super) struct State {
    c: LevyWalkConfig,
}

impl State {
    pub(super) fn new(c: &LevyWalkConfig) -> State {
        State { c: c.clone() }
    }

    pub(super) fn extend(&mut self, t0: f64, p0: Point, rng: &mut SimRng, out: &mut VecDeque<Leg>) {
        let c = &self.c;
        let l = truncated_pareto(c.alpha, c.flight_min_m, c.flight_max_m, rng);
        let th = rng.gen::<f64>() * std::f64::consts::TAU;
        let v = c.speed.draw_mps(rng);
        let (t, p, _) = push_flight(Some(&c.region), t0, p0, (th.cos(), th.sin()), l, v, out);
        let pause = truncated_pareto(c.beta, c.pause_min_s, c.pause_max_s, rng);
        out.push_back(Leg::rest(t, t + pause, p));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::rng;
    use super::super::{Mobility, MobilitySpec};
    use super::*;
    use celltcp_engine::SimTime;

    /// Hill's estimator of a Pareto tail exponent above `lo`: n / Σ ln(x / lo).
    fn hill(xs: &[f64], lo: f64) -> f64 {
        xs.len() as f64 / xs.iter().map(|x| (x / lo).ln()).sum::<f64>()
    }

    /// Flights (sums of consecutive moving legs) and pauses of a walk.
    fn flights_and_pauses(spec: &MobilitySpec, n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let m = Mobility::new(spec, rng(seed)).unwrap();
        let (mut flights, mut pauses, mut cur) = (Vec::new(), Vec::new(), 0.0);
        for l in m.legs() {
            if l.is_pause() {
                flights.push(cur);
                pauses.push(l.t1_s - l.t0_s);
                cur = 0.0;
                if flights.len() == n {
                    break;
                }
            } else {
                cur += l.length_m();
            }
        }
        (flights, pauses)
    }

    #[test]
    fn flight_and_pause_tail_exponents_match_alpha_and_beta() {
        // wide truncation (4 decades) so the Hill estimator is unbiased to < 0.1 %;
        // the 2 km circle makes long flights reflect many times, which must keep their length
        let cfg = LevyWalkConfig {
            region: Region::Circle { centre: (0.0, 0.0), radius_m: 2000.0 },
            alpha: 1.5,
            beta: 0.8,
            flight_min_m: 10.0,
            flight_max_m: 1e6,
            pause_min_s: 1.0,
            pause_max_s: 1e6,
            ..Default::default()
        };
        let spec = MobilitySpec::LevyWalk(cfg);
        let (f, p) = flights_and_pauses(&spec, 50_000, 21);
        let a = hill(&f, 10.0);
        let b = hill(&p, 1.0);
        assert!((a / 1.5 - 1.0).abs() < 0.03, "alpha {a}");
        assert!((b / 0.8 - 1.0).abs() < 0.03, "beta {b}");
        assert!(f.iter().all(|&x| (10.0 - 1e-6..=1e6 + 1e-3).contains(&x)));
        // log-log CCDF slope between 30 m and 3 km is −α
        let ccdf = |x: f64| f.iter().filter(|&&v| v > x).count() as f64 / f.len() as f64;
        let slope = (ccdf(3000.0).ln() - ccdf(30.0).ln()) / (3000f64.ln() - 30f64.ln());
        assert!((slope + 1.5).abs() < 0.1, "slope {slope}");
    }

    #[test]
    fn truncation_bounds_and_default_mean() {
        // E[l] of p(l) ∝ l^−(1+α) on [lo, hi]:
        // α/(α−1) · (lo^(1−α) − hi^(1−α)) / (lo^−α − hi^−α)
        let (a, lo, hi) = (1.5f64, 10.0f64, 5000.0f64);
        let expect = a / (a - 1.0) * (lo.powf(1.0 - a) - hi.powf(1.0 - a)) / (lo.powf(-a) - hi.powf(-a));
        let mut r = rng(3);
        let n = 400_000;
        let xs: Vec<f64> = (0..n).map(|_| truncated_pareto(a, lo, hi, &mut r)).collect();
        assert!(xs.iter().all(|&x| (lo..=hi).contains(&x)));
        let mean = xs.iter().sum::<f64>() / n as f64;
        assert!((mean / expect - 1.0).abs() < 0.02, "{mean} vs {expect}");
    }

    #[test]
    fn stays_inside_and_moves_at_walking_speed() {
        for region in [Region::Circle { centre: (100.0, 100.0), radius_m: 400.0 }, Region::Rect { x_min: 0.0, x_max: 500.0, y_min: 0.0, y_max: 300.0 }] {
            let spec = MobilitySpec::LevyWalk(LevyWalkConfig { region, ..Default::default() });
            let mut m = Mobility::new(&spec, rng(8)).unwrap();
            for i in 0..200_000u64 {
                let t = SimTime::from_millis(i * 173);
                assert!(region.contains(m.position(t)), "{:?}", m.position(t));
                let v = m.speed_mps(t);
                assert!(v == 0.0 || (1.0 - 1e-9..=1.5 + 1e-9).contains(&v), "{v}");
            }
        }
    }

    #[test]
    fn validation() {
        let e = LevyWalkConfig { alpha: 2.0, ..Default::default() }.validate().unwrap_err();
        assert!(e.contains("alpha") && e.contains("(0, 2)"), "{e}");
        let e = LevyWalkConfig { pause_min_s: 0.0, ..Default::default() }.validate().unwrap_err();
        assert!(e.contains("pause_min_s"), "{e}");
    }
}
