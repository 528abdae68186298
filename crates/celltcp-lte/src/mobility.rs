//! UE mobility: where a UE is, and how fast it moves, at any instant.
//!
//! A trajectory is a sequence of straight [`Leg`]s (constant velocity, possibly zero for a
//! pause) generated lazily from the model and the UE's own random stream, so it is a pure
//! function of `(spec, seed)`: querying an earlier instant replays the stream from the start
//! and gives the same answer. Positions are `(x, y)` metres, as `EnbSpec.position` in
//! [`crate::ran`]; time is [`SimTime`] at the API and seconds (`f64`) inside a leg. Positions
//! feed path loss, the spatially correlated shadowing of [`crate::phy::shadowing_map`] and the
//! Doppler of the fading (`phy::fading::doppler_hz(speed, carrier)`); mobility is what drives
//! the measurements and handovers of TS 36.300 §10.1.2.
//!
//! Models ([`MobilitySpec`]):
//! - `static`: one position forever;
//! - [`constant_velocity`]: a start, a heading and a speed (drawn once from a [`SpeedDist`], e.g.
//!   study 001's normal 40 km/h, σ 5 km/h), reflecting off the region's boundary if one is given;
//! - [`waypoints`]: a list of points, each with the speed of the leg leaving it and a pause on
//!   arrival;
//! - [`random_waypoint`]: destinations uniform in the region, a speed per leg, a pause after
//!   each;
//! - [`levy_walk`]: the truncated Levy walk of Rhee et al. (flights and pauses from truncated
//!   power laws), reflecting off the region's boundary.
//!
//! Regions ([`Region`]) are rectangles or circles. Random waypoint stays inside by construction
//! (destinations are drawn inside, and both shapes are convex); constant velocity and Levy walks
//! **reflect** specularly off the boundary, which keeps every flight's length (and so the
//! flight-length distribution) unchanged.
//!
//! Bad input is refused with the key and the expected range: speeds outside
//! [0, [`MAX_SPEED_KMH`]] km/h, negative or non-finite pauses, fewer than two waypoints, a start
//! outside the region, and (with [`MobilitySpec::validate_with_cells`]) a region that contains
//! none of the cells.
//!
//! API:
//! ```text
//! let mut m = Mobility::new(&spec, component_rng(seed, component_id("ue-mobility", name)))?;
//! m.position(now); m.velocity(now); m.speed_mps(now);
//! m.next_change(now)    // when the current leg ends (re-evaluate the channel, schedule an event)
//! m.legs()              // the whole trajectory from the start, as an iterator of legs
//! ```

pub mod constant_velocity;
pub mod levy_walk;
pub mod random_waypoint;
pub mod waypoints;

use std::collections::VecDeque;

use celltcp_engine::rng::SimRng;
use celltcp_engine::SimTime;
use rand::Rng;

use crate::phy::channel::standard_normal;

/// A position or a vector in metres.
pub type Point = (f64, f64);

/// Highest speed accepted, km/h.
pub const MAX_SPEED_KMH: f64 = 500.0;

/// Tolerance of "inside the region", metres.
const INSIDE_EPS_M: f64 = 1e-6;

/// The area a UE stays in.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "shape", rename_all = "lowercase", deny_unknown_fields)]
pub enum Region {
    /// `x_min ≤ x ≤ x_max`, `y_min ≤ y ≤ y_max`.
    Rect { x_min: f64, x_max: f64, y_min: f64, y_max: f64 },
    /// Disc of `radius_m` around `centre`.
    Circle { centre: Point, radius_m: f64 },
}

impl Region {
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Region::Rect { x_min, x_max, y_min, y_max } => {
                if !([x_min, x_max, y_min, y_max].iter().all(|v| v.is_finite()) && x_min < x_max && y_min < y_max) {
                    return Err(format!(
                        "region rect needs finite x_min < x_max and y_min < y_max (metres); got x {x_min}..{x_max}, y {y_min}..{y_max}"
                    ));
                }
            }
            Region::Circle { centre, radius_m } => {
                if !(centre.0.is_finite() && centre.1.is_finite() && radius_m.is_finite() && radius_m > 0.0) {
                    return Err(format!("region circle needs a finite centre and radius_m > 0; got centre {centre:?}, radius_m {radius_m}"));
                }
            }
        }
        Ok(())
    }

    /// Whether `p` is inside (boundary included, with a micrometre tolerance).
    pub fn contains(&self, p: Point) -> bool {
        self.distance_outside(p) <= INSIDE_EPS_M
    }

    /// Distance from `p` to the region (0 inside).
    pub fn distance_outside(&self, p: Point) -> f64 {
        match *self {
            Region::Rect { x_min, x_max, y_min, y_max } => {
                let dx = (x_min - p.0).max(p.0 - x_max).max(0.0);
                let dy = (y_min - p.1).max(p.1 - y_max).max(0.0);
                dx.hypot(dy)
            }
            Region::Circle { centre, radius_m } => ((p.0 - centre.0).hypot(p.1 - centre.1) - radius_m).max(0.0),
        }
    }

    /// Refuses a region that contains none of `cells` (a UE there could never be served),
    /// naming the nearest cell.
    pub fn check_contains_a_cell(&self, cells: &[Point]) -> Result<(), String> {
        if cells.iter().any(|&c| self.contains(c)) {
            return Ok(());
        }
        let nearest = cells
            .iter()
            .enumerate()
            .map(|(i, &c)| (i, c, self.distance_outside(c)))
            .min_by(|a, b| a.2.total_cmp(&b.2));
        Err(match nearest {
            Some((i, c, d)) => format!(
                "mobility region {self:?} must contain at least one cell; it contains none of the {} cells (nearest: cell {i} at ({}, {}), {d:.1} m outside)",
                cells.len(),
                c.0,
                c.1
            ),
            None => format!("mobility region {self:?} must contain at least one cell; there are no cells"),
        })
    }

    /// A point uniformly distributed over the region.
    pub fn sample(&self, rng: &mut SimRng) -> Point {
        match *self {
            Region::Rect { x_min, x_max, y_min, y_max } => (x_min + rng.gen::<f64>() * (x_max - x_min), y_min + rng.gen::<f64>() * (y_max - y_min)),
            Region::Circle { centre, radius_m } => {
                let r = radius_m * rng.gen::<f64>().sqrt();
                let a = rng.gen::<f64>() * std::f64::consts::TAU;
                (centre.0 + r * a.cos(), centre.1 + r * a.sin())
            }
        }
    }

    /// Distance from `p` (inside) along unit direction `d` to the boundary.
    fn exit_distance(&self, p: Point, d: Point) -> f64 {
        match *self {
            Region::Rect { x_min, x_max, y_min, y_max } => {
                let axis = |p: f64, d: f64, lo: f64, hi: f64| {
                    if d > 0.0 {
                        (hi - p) / d
                    } else if d < 0.0 {
                        (lo - p) / d
                    } else {
                        f64::INFINITY
                    }
                };
                axis(p.0, d.0, x_min, x_max).min(axis(p.1, d.1, y_min, y_max)).max(0.0)
            }
            Region::Circle { centre, radius_m } => {
                let w = (p.0 - centre.0, p.1 - centre.1);
                let b = d.0 * w.0 + d.1 * w.1;
                let c = w.0 * w.0 + w.1 * w.1 - radius_m * radius_m;
                (-b + (b * b - c).max(0.0).sqrt()).max(0.0)
            }
        }
    }

    /// Specular reflection of unit direction `d` at boundary point `q` (only the components
    /// that point outward are turned).
    fn reflect(&self, q: Point, d: Point) -> Point {
        match *self {
            Region::Rect { x_min, x_max, y_min, y_max } => {
                let eps = 1e-9 * (x_max - x_min).max(y_max - y_min);
                let mut r = d;
                if (q.0 >= x_max - eps && d.0 > 0.0) || (q.0 <= x_min + eps && d.0 < 0.0) {
                    r.0 = -r.0;
                }
                if (q.1 >= y_max - eps && d.1 > 0.0) || (q.1 <= y_min + eps && d.1 < 0.0) {
                    r.1 = -r.1;
                }
                r
            }
            Region::Circle { centre, .. } => {
                let (nx, ny) = (q.0 - centre.0, q.1 - centre.1);
                let len = nx.hypot(ny);
                if len == 0.0 {
                    return d;
                }
                let n = (nx / len, ny / len);
                let dn = d.0 * n.0 + d.1 * n.1;
                if dn > 0.0 {
                    (d.0 - 2.0 * dn * n.0, d.1 - 2.0 * dn * n.1)
                } else {
                    d
                }
            }
        }
    }

    /// `p` moved onto the region if rounding put it just outside.
    fn clamp(&self, p: Point) -> Point {
        match *self {
            Region::Rect { x_min, x_max, y_min, y_max } => (p.0.clamp(x_min, x_max), p.1.clamp(y_min, y_max)),
            Region::Circle { centre, radius_m } => {
                let w = (p.0 - centre.0, p.1 - centre.1);
                let r = w.0.hypot(w.1);
                if r > radius_m {
                    (centre.0 + w.0 * radius_m / r, centre.1 + w.1 * radius_m / r)
                } else {
                    p
                }
            }
        }
    }
}

/// Distribution of a UE's speed, in km/h.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum SpeedDist {
    Constant { kmh: f64 },
    /// Uniform in `[min_kmh, max_kmh]`.
    Uniform { min_kmh: f64, max_kmh: f64 },
    /// Normal, truncated to (0, 500] km/h by re-drawing (study 001: mean 40, σ 5).
    Normal { mean_kmh: f64, sigma_kmh: f64 },
}

fn speed_in_range(key: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && (0.0..=MAX_SPEED_KMH).contains(&v) {
        Ok(())
    } else {
        Err(format!("{key} must be in [0, {MAX_SPEED_KMH}] km/h; got {v}"))
    }
}

impl SpeedDist {
    /// Checks the ranges; `key` names the field in errors. With `moving`, speeds must also be
    /// strictly positive (a walk with speeds near 0 takes forever to finish a leg; for random
    /// waypoint with `min_kmh = 0` the mean speed decays to 0: Yoon, Liu, Noble, INFOCOM 2003).
    pub fn validate(&self, key: &str, moving: bool) -> Result<(), String> {
        match *self {
            SpeedDist::Constant { kmh } => {
                speed_in_range(&format!("{key}.kmh"), kmh)?;
                if moving && kmh <= 0.0 {
                    return Err(format!("{key}.kmh must be > 0 km/h for this model; got {kmh}"));
                }
            }
            SpeedDist::Uniform { min_kmh, max_kmh } => {
                speed_in_range(&format!("{key}.min_kmh"), min_kmh)?;
                speed_in_range(&format!("{key}.max_kmh"), max_kmh)?;
                if min_kmh > max_kmh {
                    return Err(format!("{key}.min_kmh must be <= {key}.max_kmh; got {min_kmh} > {max_kmh}"));
                }
                if moving && min_kmh <= 0.0 {
                    return Err(format!(
                        "{key}.min_kmh must be > 0 km/h for this model (with 0 the mean speed decays to 0); got {min_kmh}"
                    ));
                }
            }
            SpeedDist::Normal { mean_kmh, sigma_kmh } => {
                speed_in_range(&format!("{key}.mean_kmh"), mean_kmh)?;
                if !(sigma_kmh.is_finite() && sigma_kmh >= 0.0) {
                    return Err(format!("{key}.sigma_kmh must be a finite value >= 0 km/h; got {sigma_kmh}"));
                }
                if mean_kmh <= 0.0 {
                    return Err(format!("{key}.mean_kmh must be > 0 km/h (the normal is truncated to (0, {MAX_SPEED_KMH}]); got {mean_kmh}"));
                }
            }
        }
        Ok(())
    }

    /// One draw, in m/s.
    pub fn draw_mps(&self, rng: &mut SimRng) -> f64 {
        let kmh = match *self {
            SpeedDist::Constant { kmh } => kmh,
            SpeedDist::Uniform { min_kmh, max_kmh } => min_kmh + rng.gen::<f64>() * (max_kmh - min_kmh),
            SpeedDist::Normal { mean_kmh, sigma_kmh } => {
                let mut v = mean_kmh;
                for _ in 0..1000 {
                    let x = mean_kmh + sigma_kmh * standard_normal(rng);
                    if x > 0.0 && x <= MAX_SPEED_KMH {
                        v = x;
                        break;
                    }
                }
                v
            }
        };
        kmh / 3.6
    }
}

/// Distribution of a pause, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum PauseDist {
    None,
    Constant { s: f64 },
    /// Uniform in `[min_s, max_s]`.
    Uniform { min_s: f64, max_s: f64 },
    Exponential { mean_s: f64 },
}

fn nonneg(key: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{key} must be a finite pause >= 0 s; got {v}"))
    }
}

impl PauseDist {
    pub fn validate(&self, key: &str) -> Result<(), String> {
        match *self {
            PauseDist::None => Ok(()),
            PauseDist::Constant { s } => nonneg(&format!("{key}.s"), s),
            PauseDist::Uniform { min_s, max_s } => {
                nonneg(&format!("{key}.min_s"), min_s)?;
                nonneg(&format!("{key}.max_s"), max_s)?;
                if min_s > max_s {
                    return Err(format!("{key}.min_s must be <= {key}.max_s; got {min_s} > {max_s}"));
                }
                Ok(())
            }
            PauseDist::Exponential { mean_s } => nonneg(&format!("{key}.mean_s"), mean_s),
        }
    }

    pub fn draw_s(&self, rng: &mut SimRng) -> f64 {
        match *self {
            PauseDist::None => 0.0,
            PauseDist::Constant { s } => s,
            PauseDist::Uniform { min_s, max_s } => min_s + rng.gen::<f64>() * (max_s - min_s),
            PauseDist::Exponential { mean_s } => -mean_s * (1.0 - rng.gen::<f64>()).ln(),
        }
    }

    /// The mean pause, s.
    pub fn mean_s(&self) -> f64 {
        match *self {
            PauseDist::None => 0.0,
            PauseDist::Constant { s } => s,
            PauseDist::Uniform { min_s, max_s } => (min_s + max_s) / 2.0,
            PauseDist::Exponential { mean_s } => mean_s,
        }
    }
}

/// A straight piece of trajectory: from `p0` at `t0_s`, velocity `v` (m/s), until `t1_s`
/// (`f64::INFINITY` for the last leg of a finite trajectory).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leg {
    pub t0_s: f64,
    pub t1_s: f64,
    pub p0: Point,
    pub v: Point,
}

impl Leg {
    /// A pause (or a final rest) at `p` over `[t0, t1)`.
    pub fn rest(t0_s: f64, t1_s: f64, p: Point) -> Leg {
        Leg { t0_s, t1_s, p0: p, v: (0.0, 0.0) }
    }

    pub fn position(&self, t_s: f64) -> Point {
        let dt = t_s - self.t0_s;
        (self.p0.0 + self.v.0 * dt, self.p0.1 + self.v.1 * dt)
    }

    pub fn end(&self) -> Point {
        if self.t1_s.is_finite() {
            self.position(self.t1_s)
        } else {
            self.p0
        }
    }

    pub fn speed_mps(&self) -> f64 {
        self.v.0.hypot(self.v.1)
    }

    pub fn length_m(&self) -> f64 {
        if self.t1_s.is_finite() {
            self.speed_mps() * (self.t1_s - self.t0_s)
        } else if self.speed_mps() == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    }

    pub fn is_pause(&self) -> bool {
        self.v == (0.0, 0.0)
    }
}

/// Appends the legs of a straight flight of `length` metres from `p` at `t0` along unit
/// direction `d` at `speed` (> 0), reflecting off `region`'s boundary. Returns the end time,
/// point and direction.
pub(crate) fn push_flight(region: Option<&Region>, t0: f64, p: Point, d: Point, length: f64, speed: f64, out: &mut VecDeque<Leg>) -> (f64, Point, Point) {
    let (mut t, mut p, mut d, mut left) = (t0, p, d, length);
    let mut tiny = 0;
    while left > 0.0 {
        let s = region.map_or(f64::INFINITY, |r| r.exit_distance(p, d));
        let seg = s.min(left);
        if seg > 0.0 {
            let dur = seg / speed;
            out.push_back(Leg { t0_s: t, t1_s: t + dur, p0: p, v: (d.0 * speed, d.1 * speed) });
            t += dur;
            p = (p.0 + d.0 * seg, p.1 + d.1 * seg);
            left -= seg;
        }
        if left <= 1e-9 * length.max(1.0) {
            break;
        }
        if let Some(r) = region {
            p = r.clamp(p);
            d = r.reflect(p, d);
            // stuck in a corner by rounding: turn back
            tiny = if seg < 1e-9 { tiny + 1 } else { 0 };
            if tiny > 3 {
                d = (-d.0, -d.1);
                tiny = 0;
            }
        }
    }
    (t, p, d)
}

/// What a UE does. Each variant's fields are documented on its config struct.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum MobilitySpec {
    Static { position: Point },
    ConstantVelocity(constant_velocity::ConstantVelocityConfig),
    Waypoints(waypoints::WaypointsConfig),
    RandomWaypoint(random_waypoint::RandomWaypointConfig),
    LevyWalk(levy_walk::LevyWalkConfig),
}

impl MobilitySpec {
    /// Checks every field, naming the key and the expected range.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            MobilitySpec::Static { position } => {
                if position.0.is_finite() && position.1.is_finite() {
                    Ok(())
                } else {
                    Err(format!("position must be finite metres; got {position:?}"))
                }
            }
            MobilitySpec::ConstantVelocity(c) => c.validate(),
            MobilitySpec::Waypoints(c) => c.validate(),
            MobilitySpec::RandomWaypoint(c) => c.validate(),
            MobilitySpec::LevyWalk(c) => c.validate(),
        }
    }

    /// The region the UE stays in, if the model has one.
    pub fn region(&self) -> Option<&Region> {
        match self {
            MobilitySpec::Static { .. } | MobilitySpec::Waypoints(_) => None,
            MobilitySpec::ConstantVelocity(c) => c.region.as_ref(),
            MobilitySpec::RandomWaypoint(c) => Some(&c.region),
            MobilitySpec::LevyWalk(c) => Some(&c.region),
        }
    }

    /// [`MobilitySpec::validate`], and the region (if any) must contain one of `cells`.
    pub fn validate_with_cells(&self, cells: &[Point]) -> Result<(), String> {
        self.validate()?;
        match self.region() {
            Some(r) => r.check_contains_a_cell(cells),
            None => Ok(()),
        }
    }
}

/// Per-model generator state.
#[derive(Clone, Debug)]
enum Model {
    Static(Point),
    ConstantVelocity(constant_velocity::State),
    Waypoints(waypoints::State),
    RandomWaypoint(random_waypoint::State),
    LevyWalk(levy_walk::State),
}

/// The whole trajectory from the start, leg by leg (infinite for random models).
#[derive(Clone, Debug)]
pub struct LegIter {
    model: Model,
    rng: SimRng,
    queue: VecDeque<Leg>,
    t: f64,
    p: Point,
    done: bool,
}

impl LegIter {
    fn new(spec: &MobilitySpec, mut rng: SimRng) -> LegIter {
        let (model, p) = match spec {
            MobilitySpec::Static { position } => (Model::Static(*position), *position),
            MobilitySpec::ConstantVelocity(c) => {
                let s = constant_velocity::State::new(c, &mut rng);
                (Model::ConstantVelocity(s), c.start)
            }
            MobilitySpec::Waypoints(c) => (Model::Waypoints(waypoints::State::new(c)), c.points[0].position),
            MobilitySpec::RandomWaypoint(c) => {
                let p = c.start.unwrap_or_else(|| c.region.sample(&mut rng));
                (Model::RandomWaypoint(random_waypoint::State::new(c)), p)
            }
            MobilitySpec::LevyWalk(c) => {
                let p = c.start.unwrap_or_else(|| c.region.sample(&mut rng));
                (Model::LevyWalk(levy_walk::State::new(c)), p)
            }
        };
        LegIter { model, rng, queue: VecDeque::new(), t: 0.0, p, done: false }
    }

    /// Where the trajectory starts.
    pub fn start(&self) -> Point {
        self.p
    }
}

impl Iterator for LegIter {
    type Item = Leg;

    fn next(&mut self) -> Option<Leg> {
        if self.queue.is_empty() {
            if self.done {
                return None;
            }
            let (t, p) = (self.t, self.p);
            match &mut self.model {
                Model::Static(p) => self.queue.push_back(Leg::rest(t, f64::INFINITY, *p)),
                Model::ConstantVelocity(s) => s.extend(t, p, &mut self.queue),
                Model::Waypoints(s) => s.extend(t, p, &mut self.queue),
                Model::RandomWaypoint(s) => s.extend(t, p, &mut self.rng, &mut self.queue),
                Model::LevyWalk(s) => s.extend(t, p, &mut self.rng, &mut self.queue),
            }
        }
        let leg = self.queue.pop_front()?;
        if leg.t1_s.is_finite() {
            self.t = leg.t1_s;
            self.p = leg.end();
        } else {
            self.done = true;
            self.queue.clear();
        }
        Some(leg)
    }
}

/// One UE's trajectory with a cursor for fast queries at non-decreasing times.
#[derive(Clone, Debug)]
pub struct Mobility {
    spec: MobilitySpec,
    rng0: SimRng,
    iter: LegIter,
    current: Leg,
}

impl Mobility {
    /// Validates `spec` and builds the trajectory drawn from `rng` (the UE's own stream, e.g.
    /// `component_rng(seed, component_id("ue-mobility", name))`).
    pub fn new(spec: &MobilitySpec, rng: SimRng) -> Result<Mobility, String> {
        spec.validate()?;
        let mut iter = LegIter::new(spec, rng.clone());
        let current = iter.next().expect("every trajectory has a first leg");
        Ok(Mobility { spec: spec.clone(), rng0: rng, iter, current })
    }

    pub fn spec(&self) -> &MobilitySpec {
        &self.spec
    }

    /// The trajectory from its start (independent of the cursor).
    pub fn legs(&self) -> LegIter {
        LegIter::new(&self.spec, self.rng0.clone())
    }

    fn seek(&mut self, t_s: f64) {
        if t_s < self.current.t0_s {
            *self = Mobility::new(&self.spec, self.rng0.clone()).expect("validated at construction");
        }
        while t_s >= self.current.t1_s {
            match self.iter.next() {
                Some(l) => self.current = l,
                None => break,
            }
        }
    }

    /// The leg in force at `t`.
    pub fn leg_at(&mut self, t: SimTime) -> Leg {
        self.seek(t.as_secs_f64());
        self.current
    }

    pub fn position(&mut self, t: SimTime) -> Point {
        let ts = t.as_secs_f64();
        self.seek(ts);
        self.current.position(ts)
    }

    /// Velocity vector in m/s.
    pub fn velocity(&mut self, t: SimTime) -> Point {
        self.seek(t.as_secs_f64());
        self.current.v
    }

    pub fn speed_mps(&mut self, t: SimTime) -> f64 {
        self.seek(t.as_secs_f64());
        self.current.speed_mps()
    }

    /// The end of the leg in force at `t` (rounded up to the nanosecond), or `None` if the UE
    /// stays where it is (or keeps its velocity) forever.
    pub fn next_change(&mut self, t: SimTime) -> Option<SimTime> {
        self.seek(t.as_secs_f64());
        let t1 = self.current.t1_s;
        t1.is_finite().then(|| SimTime::from_nanos((t1 * 1e9).ceil() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::rng::{component_id, component_rng};

    pub(crate) fn rng(seed: u64) -> SimRng {
        component_rng(seed, component_id("ue-mobility", "t"))
    }

    const SQUARE: Region = Region::Rect { x_min: 0.0, x_max: 1000.0, y_min: 0.0, y_max: 1000.0 };

    #[test]
    fn study_001_speed_draw_mean_and_sigma() {
        // normal, mean 40 km/h, σ 5 km/h
        let d = SpeedDist::Normal { mean_kmh: 40.0, sigma_kmh: 5.0 };
        d.validate("speed", true).unwrap();
        let mut r = rng(1);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| d.draw_mps(&mut r) * 3.6).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((mean - 40.0).abs() < 0.05, "{mean}");
        assert!((sd - 5.0).abs() < 0.05, "{sd}");
        // truncation at > 0: a normal straddling 0 never gives a non-positive speed, and its
        // mean is the truncated-normal mean μ + σ φ(μ/σ)/Φ(μ/σ) = 0 + 10·0.7979 = 7.98 km/h
        let t = SpeedDist::Normal { mean_kmh: 0.001, sigma_kmh: 10.0 };
        let ys: Vec<f64> = (0..n).map(|_| t.draw_mps(&mut r) * 3.6).collect();
        assert!(ys.iter().all(|&v| v > 0.0));
        let m = ys.iter().sum::<f64>() / n as f64;
        assert!((m - 10.0 * (2.0 / std::f64::consts::PI).sqrt()).abs() < 0.1, "{m}");
    }

    #[test]
    fn speed_and_pause_validation_names_the_key_and_range() {
        let e = SpeedDist::Constant { kmh: 600.0 }.validate("speed", false).unwrap_err();
        assert!(e.contains("speed.kmh") && e.contains("[0, 500] km/h") && e.contains("600"), "{e}");
        let e = SpeedDist::Uniform { min_kmh: -1.0, max_kmh: 5.0 }.validate("speed", false).unwrap_err();
        assert!(e.contains("speed.min_kmh"), "{e}");
        let e = SpeedDist::Uniform { min_kmh: 0.0, max_kmh: 5.0 }.validate("speed", true).unwrap_err();
        assert!(e.contains("> 0"), "{e}");
        let e = PauseDist::Constant { s: -2.0 }.validate("pause").unwrap_err();
        assert!(e.contains("pause.s") && e.contains(">= 0"), "{e}");
        let e = PauseDist::Uniform { min_s: 5.0, max_s: 1.0 }.validate("pause").unwrap_err();
        assert!(e.contains("pause.min_s"), "{e}");
    }

    #[test]
    fn region_containing_no_cell_is_refused() {
        let cells = [(0.0, 0.0), (750.0, 0.0)];
        let far = Region::Rect { x_min: 2000.0, x_max: 3000.0, y_min: 0.0, y_max: 100.0 };
        let e = far.check_contains_a_cell(&cells).unwrap_err();
        assert!(e.contains("must contain at least one cell") && e.contains("cell 1") && e.contains("1250.0 m"), "{e}");
        assert!(SQUARE.check_contains_a_cell(&cells).is_ok());
        let c = Region::Circle { centre: (375.0, 300.0), radius_m: 200.0 };
        assert!(c.check_contains_a_cell(&cells).is_err());
        let spec = MobilitySpec::RandomWaypoint(random_waypoint::RandomWaypointConfig { region: far, ..Default::default() });
        assert!(spec.validate().is_ok());
        assert!(spec.validate_with_cells(&cells).unwrap_err().contains("region"));
        assert!(Region::Circle { centre: (0.0, 0.0), radius_m: 0.0 }.validate().unwrap_err().contains("radius_m"));
    }

    #[test]
    fn region_geometry() {
        let mut r = rng(2);
        let c = Region::Circle { centre: (10.0, -5.0), radius_m: 100.0 };
        // uniform over the disc: P(r < R/2) = 1/4
        let n = 100_000;
        let inner = (0..n).filter(|_| {
            let p = c.sample(&mut r);
            assert!(c.contains(p));
            (p.0 - 10.0).hypot(p.1 + 5.0) < 50.0
        });
        let frac = inner.count() as f64 / n as f64;
        assert!((frac - 0.25).abs() < 0.005, "{frac}");
        // exit distance from the centre is the radius in any direction; reflection reverses a
        // radial direction
        assert!((c.exit_distance((10.0, -5.0), (0.6, 0.8)) - 100.0).abs() < 1e-9);
        let q = (110.0, -5.0);
        assert_eq!(c.reflect(q, (1.0, 0.0)), (-1.0, 0.0));
        assert!((SQUARE.exit_distance((500.0, 500.0), (1.0, 0.0)) - 500.0).abs() < 1e-12);
        assert_eq!(SQUARE.reflect((1000.0, 1000.0), (0.6, 0.8)), (-0.6, -0.8));
        assert_eq!(SQUARE.reflect((1000.0, 300.0), (0.6, 0.8)), (-0.6, 0.8));
    }

    #[test]
    fn static_and_replay_are_deterministic() {
        let mut s = Mobility::new(&MobilitySpec::Static { position: (3.0, 4.0) }, rng(1)).unwrap();
        assert_eq!(s.position(SimTime::from_secs(1000)), (3.0, 4.0));
        assert_eq!(s.speed_mps(SimTime::ZERO), 0.0);
        assert_eq!(s.next_change(SimTime::ZERO), None);
        // a random walk queried forward, then backward, then forward again
        let spec = MobilitySpec::RandomWaypoint(random_waypoint::RandomWaypointConfig { region: SQUARE, ..Default::default() });
        let mut a = Mobility::new(&spec, rng(5)).unwrap();
        let mut b = Mobility::new(&spec, rng(5)).unwrap();
        let times: Vec<SimTime> = (0..200).map(|i| SimTime::from_millis(i * 7919)).collect();
        let pa: Vec<Point> = times.iter().map(|&t| a.position(t)).collect();
        let pb: Vec<Point> = times.iter().rev().map(|&t| b.position(t)).collect();
        assert_eq!(pa, pb.into_iter().rev().collect::<Vec<_>>());
        let mut c = Mobility::new(&spec, rng(6)).unwrap();
        assert_ne!(c.position(times[100]), pa[100]);
    }
}
