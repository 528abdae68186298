//! Random waypoint (Johnson & Maltz 1996; analysed by Bettstetter et al. and by Le Boudec &
//! Vojnović): from its position the UE picks a destination uniformly in the region, a speed
//! from the speed distribution, drives there in a straight line, pauses for a time drawn from
//! the pause distribution, and repeats. Both region shapes are convex, so the UE never leaves
//! the region.
//!
//! The long-run time-average speed is not the mean of the speed distribution: with leg
//! lengths `D` independent of speeds `V`, it is `E[D] / (E[D] E[1/V] + E[P])`, which for
//! speeds uniform in `[v_min, v_max]` without pauses is `(v_max − v_min) / ln(v_max / v_min)`
//! (lower than the arithmetic mean, since slow legs last longer). Hence speeds must be > 0:
//! with `v_min = 0` the average decays to 0 (Yoon, Liu, Noble, "Random waypoint considered
//! harmful", INFOCOM 2003).
//!
//! The first leg starts at `start` (or at a point drawn uniformly in the region); this is not
//! the stationary distribution of the process (which favours the centre and slow legs), so
//! long runs or a warm-up are needed for stationary statistics.

use std::collections::VecDeque;

use celltcp_engine::rng::SimRng;

use super::{Leg, PauseDist, Point, Region, SpeedDist};

/// `model = "random_waypoint"`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomWaypointConfig {
    /// Start position (inside the region); default: uniform in the region.
    #[serde(default)]
    pub start: Option<Point>,
    pub region: Region,
    /// Speed per leg, km/h (> 0). Default uniform 3.6–54 km/h (1–15 m/s).
    #[serde(default = "default_speed")]
    pub speed: SpeedDist,
    /// Pause after each leg. Default none.
    #[serde(default = "default_pause")]
    pub pause: PauseDist,
}

fn default_speed() -> SpeedDist {
    SpeedDist::Uniform { min_kmh: 3.6, max_kmh: 54.0 }
}

fn default_pause() -> PauseDist {
    PauseDist::None
}

impl Default for RandomWaypointConfig {
    fn default() -> Self {
        RandomWaypointConfig {
            start: None,
            region: Region::Rect { x_min: 0.0, x_max: 1000.0, y_min: 0.0, y_max: 1000.0 },
            speed: default_speed(),
            pause: default_pause(),
        }
    }
}

impl RandomWaypointConfig {
    pub fn validate(&self) -> Result<(), String> {
        self.region.validate()?;
        self.speed.validate("speed", true)?;
        self.pause.validate("pause")?;
        if let Some(s) = self.start {
            if !self.region.contains(s) {
                return Err(format!("start {s:?} must be inside the region {:?}", self.region));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub(super) struct State {
    region: Region,
    speed: SpeedDist,
    pause: PauseDist,
}

impl State {
    pub(super) fn new(c: &RandomWaypointConfig) -> State {
        State { region: c.region, speed: c.speed, pause: c.pause }
    }

    pub(super) fn extend(&mut self, t0: f64, p0: Point, rng: &mut SimRng, out: &mut VecDeque<Leg>) {
        let dest = self.region.sample(rng);
        let v = self.speed.draw_mps(rng);
        let (dx, dy) = (dest.0 - p0.0, dest.1 - p0.1);
        let dur = dx.hypot(dy) / v;
        let mut t = t0;
        if dur > 0.0 {
            out.push_back(Leg { t0_s: t, t1_s: t + dur, p0, v: (dx / dur, dy / dur) });
            t += dur;
        }
        let p = self.pause.draw_s(rng);
        if p > 0.0 || out.is_empty() {
            out.push_back(Leg::rest(t, t + p, dest));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::rng;
    use super::super::{Mobility, MobilitySpec};
    use super::*;
    use celltcp_engine::SimTime;

    const A: f64 = 1000.0;
    const SQUARE: Region = Region::Rect { x_min: 0.0, x_max: A, y_min: 0.0, y_max: A };
    /// Mean distance between two uniform points in a unit square,
    /// (2 + √2 + 5 ln(1 + √2)) / 15.
    fn square_mean_distance() -> f64 {
        let s2 = 2f64.sqrt();
        (2.0 + s2 + 5.0 * (1.0 + s2).ln()) / 15.0
    }

    fn spec(pause: PauseDist) -> MobilitySpec {
        MobilitySpec::RandomWaypoint(RandomWaypointConfig {
            start: Some((500.0, 500.0)),
            region: SQUARE,
            speed: SpeedDist::Uniform { min_kmh: 3.6, max_kmh: 72.0 }, // 1..20 m/s
            pause,
        })
    }

    #[test]
    fn long_run_mean_speed_matches_the_closed_form() {
        // (v_max − v_min) / ln(v_max / v_min) = 19 / ln 20 = 6.342 m/s, not the mean 10.5 m/s
        let expect = 19.0 / 20f64.ln();
        assert!((expect - 6.342).abs() < 1e-3);
        let m = Mobility::new(&spec(PauseDist::None), rng(11)).unwrap();
        let (mut dist, mut time) = (0.0, 0.0);
        for l in m.legs().take(40_000) {
            dist += l.length_m();
            time += l.t1_s - l.t0_s;
        }
        let avg = dist / time;
        assert!((avg / expect - 1.0).abs() < 0.02, "leg average {avg} vs {expect}");
        // the same through the time-sampling API: mean |v(t)| over 4·10^6 s
        let mut m = Mobility::new(&spec(PauseDist::None), rng(12)).unwrap();
        let n = 1_000_000u64;
        let s: f64 = (0..n).map(|i| m.speed_mps(SimTime::from_secs(4 * i))).sum();
        let avg_t = s / n as f64;
        assert!((avg_t / expect - 1.0).abs() < 0.03, "time average {avg_t} vs {expect}");
    }

    #[test]
    fn mean_speed_with_pauses() {
        // E[D] / (E[D] E[1/V] + E[P]) with E[D] = 0.5214 a, E[1/V] = ln 20 / 19, P = 30 s:
        // 521.4 / (82.2 + 30) = 4.647 m/s
        let ed = square_mean_distance() * A;
        let expect = ed / (ed * 20f64.ln() / 19.0 + 30.0);
        assert!((expect - 4.647).abs() < 1e-3, "{expect}");
        let m = Mobility::new(&spec(PauseDist::Constant { s: 30.0 }), rng(13)).unwrap();
        let (mut dist, mut time, mut moving) = (0.0, 0.0, 0);
        for l in m.legs().take(60_000) {
            dist += l.length_m();
            time += l.t1_s - l.t0_s;
            moving += (!l.is_pause()) as usize;
        }
        assert_eq!(moving, 30_000);
        // mean leg length
        assert!((dist / moving as f64 / ed - 1.0).abs() < 0.01, "{}", dist / moving as f64);
        assert!((dist / time / expect - 1.0).abs() < 0.02, "{} vs {expect}", dist / time);
    }

    #[test]
    fn stays_inside_the_region() {
        let c = Region::Circle { centre: (200.0, 100.0), radius_m: 300.0 };
        let spec = MobilitySpec::RandomWaypoint(RandomWaypointConfig { start: None, region: c, ..Default::default() });
        let mut m = Mobility::new(&spec, rng(3)).unwrap();
        for i in 0..200_000u64 {
            assert!(c.contains(m.position(SimTime::from_millis(i * 131))));
        }
        let mut m = Mobility::new(&spec_square(), rng(4)).unwrap();
        for i in 0..200_000u64 {
            assert!(SQUARE.contains(m.position(SimTime::from_millis(i * 131))));
        }
    }

    fn spec_square() -> MobilitySpec {
        spec(PauseDist::Uniform { min_s: 0.0, max_s: 20.0 })
    }

    #[test]
    fn validation() {
        let bad = RandomWaypointConfig { start: Some((2000.0, 0.0)), ..Default::default() };
        assert!(bad.validate().unwrap_err().contains("inside the region"));
        let bad = RandomWaypointConfig { speed: SpeedDist::Uniform { min_kmh: 0.0, max_kmh: 10.0 }, ..Default::default() };
        assert!(bad.validate().unwrap_err().contains("speed.min_kmh"));
        let bad = RandomWaypointConfig { pause: PauseDist::Exponential { mean_s: -1.0 }, ..Default::default() };
        assert!(bad.validate().unwrap_err().contains("pause.mean_s"));
    }
}
