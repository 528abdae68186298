//! Constant velocity: a start, a heading and a speed, the speed drawn once per UE from a
//! [`SpeedDist`] (study 001: normal, mean 40 km/h, σ 5 km/h, UEs driving between two eNBs).
//! With a region the UE reflects specularly off its boundary (and so drives back and forth
//! along a line for a heading perpendicular to a rectangle's side); without one it drives on
//! forever.
//!
//! Heading convention: degrees counter-clockwise from the +x axis (0° = +x, 90° = +y).

use std::collections::VecDeque;

use celltcp_engine::rng::SimRng;

use super::{Leg, Point, Region, SpeedDist};

/// `model = "constant_velocity"`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantVelocityConfig {
    /// Start position, metres.
    pub start: Point,
    /// Heading in degrees counter-clockwise from +x. Default 0.
    #[serde(default)]
    pub heading_deg: f64,
    /// Speed distribution (km/h), drawn once.
    pub speed: SpeedDist,
    /// Optional region to reflect off; the start must be inside it.
    #[serde(default)]
    pub region: Option<Region>,
}

impl ConstantVelocityConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.start.0.is_finite() && self.start.1.is_finite() && self.heading_deg.is_finite()) {
            return Err(format!("start and heading_deg must be finite; got {:?}, {}", self.start, self.heading_deg));
        }
        self.speed.validate("speed", false)?;
        if let Some(r) = &self.region {
            r.validate()?;
            if !r.contains(self.start) {
                return Err(format!("start {:?} must be inside the region {r:?}", self.start));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub(super) struct State {
    speed_mps: f64,
    dir: Point,
    region: Option<Region>,
}

impl State {
    pub(super) fn new(c: &ConstantVelocityConfig, rng: &mut SimRng) -> State {
        let h = c.heading_deg.to_radians();
        State { speed_mps: c.speed.draw_mps(rng), dir: (h.cos(), h.sin()), region: c.region }
    }

    pub(super) fn extend(&mut self, t0: f64, p0: Point, out: &mut VecDeque<Leg>) {
        let v = (self.dir.0 * self.speed_mps, self.dir.1 * self.speed_mps);
        let Some(r) = self.region.filter(|_| self.speed_mps > 0.0) else {
            out.push_back(Leg { t0_s: t0, t1_s: f64::INFINITY, p0, v });
            return;
        };
        let s = r.exit_distance(p0, self.dir);
        let dur = s / self.speed_mps;
        out.push_back(Leg { t0_s: t0, t1_s: t0 + dur, p0, v });
        let end = r.clamp((p0.0 + self.dir.0 * s, p0.1 + self.dir.1 * s));
        self.dir = r.reflect(end, self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::rng;
    use super::super::{Mobility, MobilitySpec};
    use super::*;
    use celltcp_engine::SimTime;

    fn cv(start: Point, heading_deg: f64, kmh: f64, region: Option<Region>) -> Mobility {
        let spec = MobilitySpec::ConstantVelocity(ConstantVelocityConfig { start, heading_deg, speed: SpeedDist::Constant { kmh }, region });
        Mobility::new(&spec, rng(1)).unwrap()
    }

    #[test]
    fn position_is_exact() {
        // 36 km/h = 10 m/s at 30°: after 7.5 s, 75 m along (cos 30°, sin 30°)
        let mut m = cv((10.0, 20.0), 30.0, 36.0, None);
        let p = m.position(SimTime::from_millis(7500));
        let h = 30f64.to_radians();
        assert!((p.0 - (10.0 + 75.0 * h.cos())).abs() < 1e-9 && (p.1 - (20.0 + 75.0 * h.sin())).abs() < 1e-9, "{p:?}");
        assert!((m.speed_mps(SimTime::ZERO) - 10.0).abs() < 1e-12);
        assert_eq!(m.next_change(SimTime::ZERO), None);
        // study 001: 40 km/h along the line between two eNBs 750 m apart takes 67.5 s
        let mut m = cv((0.0, 0.0), 0.0, 40.0, None);
        assert!((m.position(SimTime::from_millis(67_500)).0 - 750.0).abs() < 1e-9);
    }

    #[test]
    fn reflects_back_and_forth_in_a_rectangle() {
        // 10 m/s along +x from x = 50 in [0, 100]: x(t) is the triangle wave folding 50 + 10 t
        let r = Region::Rect { x_min: 0.0, x_max: 100.0, y_min: -1.0, y_max: 1.0 };
        let mut m = cv((50.0, 0.0), 0.0, 36.0, Some(r));
        for i in 0..2000u64 {
            let t = i as f64 * 0.37;
            let u = (50.0 + 10.0 * t).rem_euclid(200.0);
            let expect = if u <= 100.0 { u } else { 200.0 - u };
            let p = m.position(SimTime::from_nanos((t * 1e9).round() as u64));
            assert!((p.0 - expect).abs() < 1e-6 && p.1.abs() < 1e-9, "t {t}: {p:?} vs {expect}");
        }
        assert_eq!(m.next_change(SimTime::ZERO), Some(SimTime::from_secs(5)));
    }

    #[test]
    fn stays_in_a_circle_at_constant_speed() {
        let r = Region::Circle { centre: (0.0, 0.0), radius_m: 300.0 };
        let mut m = cv((100.0, 50.0), 77.0, 50.0, Some(r));
        for i in 0..20_000u64 {
            let t = SimTime::from_millis(i * 97);
            assert!(r.contains(m.position(t)));
            assert!((m.speed_mps(t) - 50.0 / 3.6).abs() < 1e-9);
        }
        let spec = MobilitySpec::ConstantVelocity(ConstantVelocityConfig {
            start: (400.0, 0.0),
            heading_deg: 0.0,
            speed: SpeedDist::Constant { kmh: 10.0 },
            region: Some(r),
        });
        assert!(spec.validate().unwrap_err().contains("inside the region"));
    }
}
