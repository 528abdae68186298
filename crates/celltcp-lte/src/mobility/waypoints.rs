//! A fixed route: a list of waypoints, each with the speed of the leg that leaves it and a
//! pause on arrival. The UE starts at the first waypoint (pausing there first if it has a
//! pause), drives straight from one waypoint to the next, and stays at the last one.
//!
//! Arrival time at waypoint `i + 1` = departure from `i` + `|p_{i+1} − p_i| / speed_i`;
//! departure from `i` = arrival at `i` + `pause_i` ([`WaypointsConfig::arrival_times_s`]).

use std::collections::VecDeque;

use super::{speed_in_range, Leg, Point};

/// One waypoint.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waypoint {
    /// Position, metres.
    pub position: Point,
    /// Speed of the leg from this waypoint to the next, km/h, in (0, 500] (ignored on the last).
    #[serde(default)]
    pub speed_kmh: f64,
    /// Pause on arrival here, before leaving, s (≥ 0). Default 0.
    #[serde(default)]
    pub pause_s: f64,
}

/// `model = "waypoints"`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaypointsConfig {
    /// At least two waypoints.
    pub points: Vec<Waypoint>,
}

impl WaypointsConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.points.len() < 2 {
            return Err(format!("waypoints.points must hold at least 2 waypoints; got {}", self.points.len()));
        }
        let last = self.points.len() - 1;
        for (i, w) in self.points.iter().enumerate() {
            if !(w.position.0.is_finite() && w.position.1.is_finite()) {
                return Err(format!("waypoints.points[{i}].position must be finite metres; got {:?}", w.position));
            }
            if !(w.pause_s.is_finite() && w.pause_s >= 0.0) {
                return Err(format!("waypoints.points[{i}].pause_s must be a finite pause >= 0 s; got {}", w.pause_s));
            }
            if i < last {
                speed_in_range(&format!("waypoints.points[{i}].speed_kmh"), w.speed_kmh)?;
                let next = self.points[i + 1].position;
                let moves = (next.0 - w.position.0).hypot(next.1 - w.position.1) > 0.0;
                if moves && w.speed_kmh <= 0.0 {
                    return Err(format!(
                        "waypoints.points[{i}].speed_kmh must be in (0, 500] km/h to reach the next waypoint; got {}",
                        w.speed_kmh
                    ));
                }
            }
        }
        Ok(())
    }

    /// Arrival time at every waypoint, s (the first is 0).
    pub fn arrival_times_s(&self) -> Vec<f64> {
        let mut t = 0.0;
        let mut v = vec![0.0];
        for w in self.points.windows(2) {
            let d = (w[1].position.0 - w[0].position.0).hypot(w[1].position.1 - w[0].position.1);
            t += w[0].pause_s + if d > 0.0 { d / (w[0].speed_kmh / 3.6) } else { 0.0 };
            v.push(t);
        }
        v
    }
}

#[derive(Clone, Debug)]
pub(super) struct State {
    points: Vec<Waypoint>,
    /// The waypoint the UE is at.
    at: usize,
}

impl State {
    pub(super) fn new(c: &WaypointsConfig) -> State {
        State { points: c.points.clone(), at: 0 }
    }

    pub(super) fn extend(&mut self, t0: f64, _p0: Point, out: &mut VecDeque<Leg>) {
        let w = self.points[self.at];
        let mut t = t0;
        if w.pause_s > 0.0 {
            out.push_back(Leg::rest(t, t + w.pause_s, w.position));
            t += w.pause_s;
        }
        if self.at + 1 == self.points.len() {
            out.push_back(Leg::rest(t, f64::INFINITY, w.position));
            return;
        }
        let next = self.points[self.at + 1].position;
        let (dx, dy) = (next.0 - w.position.0, next.1 - w.position.1);
        let d = dx.hypot(dy);
        if d > 0.0 {
            let dur = d / (w.speed_kmh / 3.6);
            out.push_back(Leg { t0_s: t, t1_s: t + dur, p0: w.position, v: (dx / dur, dy / dur) });
        } else if out.is_empty() {
            // zero-length hop without pause: an empty rest keeps the iterator moving
            out.push_back(Leg::rest(t, t, w.position));
        }
        self.at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::rng;
    use super::super::{Mobility, MobilitySpec};
    use super::*;
    use celltcp_engine::SimTime;

    /// Floating point km/h → m/s conversions leave at most a few ulps.
    fn close_all(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-9, "{a:?} vs {b:?}");
        }
    }

    fn wp(position: Point, speed_kmh: f64, pause_s: f64) -> Waypoint {
        Waypoint { position, speed_kmh, pause_s }
    }

    #[test]
    fn arrival_times_are_exact() {
        // (0,0) → (300,400): 500 m at 36 km/h = 50 s; pause 5 s; → (300,0): 400 m at 72 km/h
        // = 20 s, arriving at 75 s; pause 10 s at the end and stay.
        let cfg = WaypointsConfig { points: vec![wp((0.0, 0.0), 36.0, 0.0), wp((300.0, 400.0), 72.0, 5.0), wp((300.0, 0.0), 0.0, 10.0)] };
        close_all(&cfg.arrival_times_s(), &[0.0, 50.0, 75.0]);
        let mut m = Mobility::new(&MobilitySpec::Waypoints(cfg), rng(1)).unwrap();
        let p = m.position(SimTime::from_secs(50));
        assert!((p.0 - 300.0).abs() < 1e-9 && (p.1 - 400.0).abs() < 1e-9, "{p:?}");
        assert_eq!(m.position(SimTime::from_millis(52_500)), (300.0, 400.0));
        assert_eq!(m.speed_mps(SimTime::from_secs(52)), 0.0);
        assert!((m.speed_mps(SimTime::from_secs(60)) - 20.0).abs() < 1e-12);
        let p = m.position(SimTime::from_secs(75));
        assert!((p.0 - 300.0).abs() < 1e-9 && p.1.abs() < 1e-9, "{p:?}");
        assert_eq!(m.position(SimTime::from_secs(10_000)), (300.0, 0.0));
        // halfway along the first leg at 25 s
        let p = m.position(SimTime::from_secs(25));
        assert!((p.0 - 150.0).abs() < 1e-9 && (p.1 - 200.0).abs() < 1e-9);
        // leg boundaries
        // move, pause 5 s, move, pause 10 s at the last waypoint, then rest forever
        let ends: Vec<f64> = m.legs().take(6).map(|l| l.t1_s).collect();
        assert_eq!(ends.len(), 5);
        close_all(&ends[..4], &[50.0, 55.0, 75.0, 85.0]);
        assert_eq!(ends[4], f64::INFINITY);
        let nc = m.next_change(SimTime::from_secs(1)).unwrap();
        assert!(nc.as_secs_f64() >= 50.0 && nc.as_secs_f64() < 50.0 + 1e-8);
    }

    #[test]
    fn bad_waypoint_lists_are_refused() {
        let one = WaypointsConfig { points: vec![wp((0.0, 0.0), 10.0, 0.0)] };
        let e = one.validate().unwrap_err();
        assert!(e.contains("at least 2") && e.contains("got 1"), "{e}");
        let neg = WaypointsConfig { points: vec![wp((0.0, 0.0), 10.0, -1.0), wp((1.0, 0.0), 0.0, 0.0)] };
        assert!(neg.validate().unwrap_err().contains("points[0].pause_s"));
        let fast = WaypointsConfig { points: vec![wp((0.0, 0.0), 900.0, 0.0), wp((1.0, 0.0), 0.0, 0.0)] };
        let e = fast.validate().unwrap_err();
        assert!(e.contains("points[0].speed_kmh") && e.contains("[0, 500]"), "{e}");
        let stuck = WaypointsConfig { points: vec![wp((0.0, 0.0), 0.0, 0.0), wp((1.0, 0.0), 0.0, 0.0)] };
        assert!(stuck.validate().unwrap_err().contains("(0, 500]"));
        // a repeated point with a pause is fine
        let rep = WaypointsConfig { points: vec![wp((0.0, 0.0), 0.0, 3.0), wp((0.0, 0.0), 36.0, 0.0), wp((10.0, 0.0), 0.0, 0.0)] };
        rep.validate().unwrap();
        close_all(&rep.arrival_times_s(), &[0.0, 3.0, 4.0]);
        let mut m = Mobility::new(&MobilitySpec::Waypoints(rep), rng(1)).unwrap();
        assert!((m.position(SimTime::from_secs(4)).0 - 10.0).abs() < 1e-9);
        assert_eq!(m.position(SimTime::from_secs(2)), (0.0, 0.0));
    }
}
