//! Cell layouts: sites at explicit positions or on a hexagonal grid, optional three-sector
//! sites with the TR 36.814 antenna pattern, an outer ring of interfering sites, and the
//! neighbour relation that X2 links follow (TS 36.300 §10.1.2: X2 handover runs between
//! neighbouring eNBs).
//!
//! API in a few lines:
//! ```text
//! let hex = Layout::hexagonal(&HexLayout { rings: 1, interferer_rings: 1, isd_m: 500.0, sectors: 3, centre: (0.0, 0.0) })?;
//! let two = Layout::explicit(&[("a".into(), (0.0, 0.0)), ("b".into(), (750.0, 0.0))], 1)?;
//! layout.sites() / layout.cells() / layout.neighbours(site) / layout.x2_pairs()
//! layout.cells()[c].gain_toward_db(ue_position)          // A(θ) of TR 36.814 Table A.2.1.1-2
//! ```
//!
//! **Hexagonal grid.** Site 0 is at the centre; ring `k` holds the `6k` sites at hexagonal
//! distance `k`, so `N` rings hold `1 + 3N(N+1)` sites. Positions use axial coordinates
//! `(q, r)`: `x = ISD (q + r/2)`, `y = ISD (r √3/2)`, so the six nearest sites of any site lie
//! at exactly one inter-site distance (ISD), in the directions 0°, 60°, …, 300° (angles are
//! counter-clockwise from the +x axis). The corner sites of ring `k` are `k · ISD` from the
//! centre and the sites half-way along its edges (even `k`) `k · ISD · √3/2`. Each ring is
//! listed starting from its corner at 240° and walking counter-clockwise.
//!
//! **Interferer rings.** `interferer_rings` more rings outside the measured ones carry traffic
//! for interference only: their sites and cells have `measured = false` and must get no
//! measured UEs (the double ring of TR 25.814 Annex A used by study 004: 7 served sites inside
//! 12 interferers).
//!
//! **Sectors.** With `sectors = 3` each site has three cells with boresights 30°, 150° and 270°
//! (each boresight points between two neighbouring sites, the usual 3GPP three-sector
//! "clover" arrangement). The horizontal pattern is TR 36.814 Table A.2.1.1-2:
//! `A(θ) = −min(12 (θ/θ3dB)², Am)`, θ3dB = 70°, Am = 20 dB, θ measured from the boresight and
//! wrapped to [−180°, 180°]. The pattern is relative (0 dB on the boresight); the antenna's
//! maximum gain (14 dBi in Table A.2.1.1-2) is the radio configuration's `enb_antenna_gain_dbi`.
//! With `sectors = 1` cells are omnidirectional (0 dB in every direction).
//!
//! **Neighbours.** Two sites are neighbours when no third site lies strictly inside the circle
//! whose diameter is the segment between them (the Gabriel graph, a subgraph of the Delaunay
//! triangulation). On a hexagonal grid this is exactly the set of pairs one ISD apart; for
//! explicit positions it gives the natural "adjacent" relation without a distance threshold
//! (two sites alone are always neighbours). Cells of one site are neighbours of each other
//! (intra-eNB handover needs no X2).
//!
//! **Validation.** Two sites closer than [`SAME_POSITION_M`] are refused with both names; a
//! sector count other than 1 or 3, a non-positive or non-finite ISD, an empty site list or a
//! non-finite coordinate are refused with the key and the expected range.

use std::f64::consts::PI;

/// Two sites closer than this (metres) are "at the same position".
pub const SAME_POSITION_M: f64 = 1e-3;

/// Half-power beamwidth θ3dB of the sector antenna, TR 36.814 Table A.2.1.1-2.
pub const THETA_3DB_DEG: f64 = 70.0;

/// Front-to-back ratio Am (maximum attenuation) of the sector antenna, TR 36.814 Table A.2.1.1-2.
pub const MAX_ATTENUATION_DB: f64 = 20.0;

/// Boresights of the three sectors of a site, degrees counter-clockwise from +x.
pub const SECTOR_BORESIGHTS_DEG: [f64; 3] = [30.0, 150.0, 270.0];

/// Horizontal antenna pattern of TR 36.814 Table A.2.1.1-2, in dB relative to the boresight:
/// `−min(12 (θ/θ3dB)², Am)`, θ in degrees off the boresight (any value; wrapped to ±180°).
pub fn sector_pattern_db(theta_deg: f64) -> f64 {
    let t = wrap_deg(theta_deg);
    -(12.0 * (t / THETA_3DB_DEG).powi(2)).min(MAX_ATTENUATION_DB)
}

/// Wraps an angle in degrees to [−180, 180).
fn wrap_deg(a: f64) -> f64 {
    (a + 180.0).rem_euclid(360.0) - 180.0
}

/// One site (eNB location).
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub name: String,
    pub position: (f64, f64),
    /// Hexagonal ring index (0 = centre); 0 for explicit layouts.
    pub ring: u32,
    /// `false` for sites of the interferer rings: they get no measured UEs.
    pub measured: bool,
}

/// One cell (sector) of a site.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub name: String,
    /// Index of the site in [`Layout::sites`].
    pub site: usize,
    pub position: (f64, f64),
    /// Boresight in degrees counter-clockwise from +x; `None` for an omnidirectional cell.
    pub boresight_deg: Option<f64>,
    /// Copied from the site.
    pub measured: bool,
}

impl Cell {
    /// Relative antenna gain (dB, ≤ 0) of this cell toward `pos`: the TR 36.814 pattern at the
    /// angle between the boresight and the direction to `pos`, or 0 dB for an omnidirectional
    /// cell or a point on top of the site.
    pub fn gain_toward_db(&self, pos: (f64, f64)) -> f64 {
        let Some(b) = self.boresight_deg else { return 0.0 };
        let (dx, dy) = (pos.0 - self.position.0, pos.1 - self.position.1);
        if dx == 0.0 && dy == 0.0 {
            return 0.0;
        }
        let az = dy.atan2(dx).to_degrees();
        sector_pattern_db(az - b)
    }
}

/// A hexagonal layout request.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HexLayout {
    /// Rings of measured sites around the centre site (0 = the centre site alone).
    pub rings: u32,
    /// Rings of interfering sites outside them (no measured UEs). Default 0.
    #[serde(default)]
    pub interferer_rings: u32,
    /// Inter-site distance in metres (> 0). TR 36.814 case 1: 500 m.
    pub isd_m: f64,
    /// 1 (omnidirectional) or 3 sectors per site. Default 1.
    #[serde(default = "one")]
    pub sectors: u8,
    /// Position of the centre site. Default (0, 0).
    #[serde(default)]
    pub centre: (f64, f64),
}

fn one() -> u8 {
    1
}

/// Sites, their cells and the neighbour relation.
#[derive(Clone, Debug)]
pub struct Layout {
    sites: Vec<Site>,
    cells: Vec<Cell>,
    /// Per site, the neighbouring sites in ascending index order.
    neighbours: Vec<Vec<usize>>,
}

/// Axial unit steps in the directions 0°, 60°, …, 300°.
const AXIAL_DIRS: [(i64, i64); 6] = [(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)];

impl Layout {
    /// Sites at explicit positions, each with `sectors` (1 or 3) cells.
    pub fn explicit(sites: &[(String, (f64, f64))], sectors: u8) -> Result<Layout, String> {
        let sites: Vec<Site> = sites
            .iter()
            .map(|(name, p)| Site { name: name.clone(), position: *p, ring: 0, measured: true })
            .collect();
        Layout::build(sites, sectors)
    }

    /// A hexagonal grid (see the module doc).
    pub fn hexagonal(h: &HexLayout) -> Result<Layout, String> {
        if !(h.isd_m.is_finite() && h.isd_m > 0.0) {
            return Err(format!("layout isd_m must be a finite distance > 0 m; got {}", h.isd_m));
        }
        let total = h.rings.checked_add(h.interferer_rings).filter(|&t| t <= 50).ok_or_else(|| {
            format!(
                "layout rings + interferer_rings must be at most 50 (7651 sites); got {} + {}",
                h.rings, h.interferer_rings
            )
        })?;
        let sq3 = 3f64.sqrt();
        let mut sites = Vec::with_capacity(hex_site_count(total));
        let push = |q: i64, r: i64, ring: u32, sites: &mut Vec<Site>| {
            let x = h.centre.0 + h.isd_m * (q as f64 + r as f64 / 2.0);
            let y = h.centre.1 + h.isd_m * (r as f64 * sq3 / 2.0);
            let i = sites.len();
            sites.push(Site { name: format!("site{i}"), position: (x, y), ring, measured: ring <= h.rings });
        };
        push(0, 0, 0, &mut sites);
        for k in 1..=total as i64 {
            // start at k steps in direction 240° and walk the six edges counter-clockwise
            let (mut q, mut r) = (AXIAL_DIRS[4].0 * k, AXIAL_DIRS[4].1 * k);
            for d in AXIAL_DIRS {
                for _ in 0..k {
                    push(q, r, k as u32, &mut sites);
                    q += d.0;
                    r += d.1;
                }
            }
        }
        Layout::build(sites, h.sectors)
    }

    fn build(sites: Vec<Site>, sectors: u8) -> Result<Layout, String> {
        if sectors != 1 && sectors != 3 {
            return Err(format!("layout sectors must be 1 or 3; got {sectors}"));
        }
        if sites.is_empty() {
            return Err("layout needs at least one site; got none".into());
        }
        for s in &sites {
            if !(s.position.0.is_finite() && s.position.1.is_finite()) {
                return Err(format!("site '{}' position must be finite metres; got {:?}", s.name, s.position));
            }
        }
        let n = sites.len();
        for i in 0..n {
            for j in i + 1..n {
                if dist(sites[i].position, sites[j].position) < SAME_POSITION_M {
                    return Err(format!(
                        "sites '{}' and '{}' are at the same position {:?}: sites must be at least {} m apart",
                        sites[i].name, sites[j].name, sites[j].position, SAME_POSITION_M
                    ));
                }
            }
        }
        let mut cells = Vec::with_capacity(n * sectors as usize);
        for (i, s) in sites.iter().enumerate() {
            if sectors == 1 {
                cells.push(Cell { name: s.name.clone(), site: i, position: s.position, boresight_deg: None, measured: s.measured });
            } else {
                for (k, b) in SECTOR_BORESIGHTS_DEG.iter().enumerate() {
                    cells.push(Cell {
                        name: format!("{}.{k}", s.name),
                        site: i,
                        position: s.position,
                        boresight_deg: Some(*b),
                        measured: s.measured,
                    });
                }
            }
        }
        let neighbours = gabriel_neighbours(&sites);
        Ok(Layout { sites, cells, neighbours })
    }

    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// Neighbouring sites of `site` (ascending indices).
    pub fn neighbours(&self, site: usize) -> &[usize] {
        &self.neighbours[site]
    }

    /// Every neighbouring site pair `(a, b)` with `a < b`: the X2 links of the layout.
    pub fn x2_pairs(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for (a, ns) in self.neighbours.iter().enumerate() {
            v.extend(ns.iter().filter(|&&b| b > a).map(|&b| (a, b)));
        }
        v
    }

    /// Whether cells `a` and `b` are neighbours: same site, or neighbouring sites.
    pub fn cells_adjacent(&self, a: usize, b: usize) -> bool {
        let (sa, sb) = (self.cells[a].site, self.cells[b].site);
        a != b && (sa == sb || self.neighbours[sa].binary_search(&sb).is_ok())
    }

    /// Index of the site called `name`.
    pub fn site_index(&self, name: &str) -> Option<usize> {
        self.sites.iter().position(|s| s.name == name)
    }

    /// Resolves X2 links given by site names, refusing unknown names (with the known ones)
    /// and self-links.
    pub fn resolve_x2(&self, links: &[(String, String)]) -> Result<Vec<(usize, usize)>, String> {
        let known = || self.sites.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ");
        links
            .iter()
            .map(|(a, b)| {
                let ia = self.site_index(a).ok_or_else(|| format!("x2 link names site '{a}', which does not exist (sites: {})", known()))?;
                let ib = self.site_index(b).ok_or_else(|| format!("x2 link names site '{b}', which does not exist (sites: {})", known()))?;
                if ia == ib {
                    return Err(format!("x2 link must join two different sites; got '{a}' to itself"));
                }
                Ok((ia.min(ib), ia.max(ib)))
            })
            .collect()
    }

    /// Positions of every cell (to check that a mobility region contains a cell).
    pub fn cell_positions(&self) -> Vec<(f64, f64)> {
        self.cells.iter().map(|c| c.position).collect()
    }
}

/// `1 + 3N(N+1)` sites in `N` rings.
pub fn hex_site_count(rings: u32) -> usize {
    let n = rings as usize;
    1 + 3 * n * (n + 1)
}

fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Gabriel graph: i ~ j iff no k lies strictly inside the circle with diameter ij, i.e.
/// |k − m|² < (|i − j|/2)² with m the midpoint (a relative 1e-9 margin keeps grid points on the
/// circle outside). A k inside that circle is strictly closer to i than j is (the angle ikj is
/// obtuse), so for each i the candidates k are scanned nearest first and the scan stops at j:
/// the nearest blocker is usually found at once, which keeps large layouts fast.
fn gabriel_neighbours(sites: &[Site]) -> Vec<Vec<usize>> {
    let n = sites.len();
    let mut nb = vec![Vec::new(); n];
    let mut order: Vec<(f64, usize)> = Vec::with_capacity(n);
    for i in 0..n {
        let pi = sites[i].position;
        order.clear();
        order.extend((0..n).filter(|&k| k != i).map(|k| (dist(pi, sites[k].position), k)));
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (idx, &(d_ij, j)) in order.iter().enumerate() {
            if j < i {
                continue;
            }
            let pj = sites[j].position;
            let m = ((pi.0 + pj.0) / 2.0, (pi.1 + pj.1) / 2.0);
            let r2 = (d_ij / 2.0).powi(2) * (1.0 - 1e-9);
            let blocked = order[..idx].iter().any(|&(_, k)| {
                let pk = sites[k].position;
                (pk.0 - m.0).powi(2) + (pk.1 - m.1).powi(2) < r2
            });
            if !blocked {
                nb[i].push(j);
                nb[j].push(i);
            }
        }
    }
    for v in &mut nb {
        v.sort_unstable();
    }
    nb
}

/// Angle in degrees (counter-clockwise from +x) of the direction from `from` to `to`.
pub fn azimuth_deg(from: (f64, f64), to: (f64, f64)) -> f64 {
    (to.1 - from.1).atan2(to.0 - from.0) * 180.0 / PI
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(rings: u32, interferer_rings: u32, sectors: u8) -> Layout {
        Layout::hexagonal(&HexLayout { rings, interferer_rings, isd_m: 500.0, sectors, centre: (0.0, 0.0) }).unwrap()
    }

    #[test]
    fn hex_site_counts_follow_1_plus_3n_n_plus_1() {
        for (n, expect) in [(0, 1), (1, 7), (2, 19), (3, 37), (4, 61)] {
            let l = hex(n, 0, 1);
            assert_eq!(l.sites().len(), expect, "rings {n}");
            assert_eq!(hex_site_count(n), expect);
            // ring k has 6k sites
            for k in 1..=n {
                assert_eq!(l.sites().iter().filter(|s| s.ring == k).count(), 6 * k as usize);
            }
        }
        // three sectors: three cells per site
        assert_eq!(hex(2, 0, 3).cells().len(), 57);
    }

    #[test]
    fn hex_neighbours_are_exactly_one_isd_apart() {
        let l = hex(3, 0, 1);
        let s = l.sites();
        for i in 0..s.len() {
            for j in 0..s.len() {
                if i == j {
                    continue;
                }
                let d = dist(s[i].position, s[j].position);
                let adjacent = l.neighbours(i).contains(&j);
                // adjacency (Gabriel graph) == distance exactly ISD
                assert_eq!(adjacent, (d - 500.0).abs() < 1e-6, "{i} {j} d={d}");
                // and no two sites are closer than one ISD
                assert!(d > 500.0 - 1e-6);
            }
        }
        // interior sites (rings 0..=2) have six neighbours; x2 pairs counted once
        for (i, site) in s.iter().enumerate() {
            if site.ring <= 2 {
                assert_eq!(l.neighbours(i).len(), 6);
            }
        }
        let pairs = l.x2_pairs();
        let total: usize = (0..s.len()).map(|i| l.neighbours(i).len()).sum();
        assert_eq!(pairs.len() * 2, total);
        // against a direct count over all pairs
        let direct = (0..s.len())
            .flat_map(|i| (i + 1..s.len()).map(move |j| (i, j)))
            .filter(|&(i, j)| (dist(s[i].position, s[j].position) - 500.0).abs() < 1e-6)
            .count();
        assert_eq!(pairs.len(), direct);
        assert_eq!(direct, 90); // 3·37 − 3·(2·3 + 1) = 111 − 21 = 90 edges of a 37-site hexagon
    }

    #[test]
    fn ring_distances() {
        let l = hex(4, 0, 1);
        let sq3 = 3f64.sqrt();
        for k in 1..=4u32 {
            let d: Vec<f64> = l.sites().iter().filter(|s| s.ring == k).map(|s| dist(s.position, (0.0, 0.0))).collect();
            let max = d.iter().cloned().fold(0.0, f64::max);
            // six corners at exactly k·ISD, nothing farther
            assert!((max - 500.0 * k as f64).abs() < 1e-6, "ring {k}: {max}");
            assert_eq!(d.iter().filter(|&&x| (x - 500.0 * k as f64).abs() < 1e-6).count(), 6);
            // nothing closer than the edge midpoint distance k·ISD·√3/2
            let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
            assert!(min >= 500.0 * k as f64 * sq3 / 2.0 - 1e-6, "ring {k}: {min}");
            if k % 2 == 0 {
                assert!((min - 500.0 * k as f64 * sq3 / 2.0).abs() < 1e-6);
            }
        }
        // ring 1 directions are 0°, 60°, ..., 300°
        let mut az: Vec<f64> = l.sites()[1..7].iter().map(|s| azimuth_deg((0.0, 0.0), s.position).rem_euclid(360.0)).collect();
        az.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for (i, a) in az.iter().enumerate() {
            assert!((a - 60.0 * i as f64).abs() < 1e-9, "{az:?}");
        }
    }

    #[test]
    fn interferer_ring_is_flagged_unmeasured() {
        // study 004: 7 served sites, 12 interferers
        let l = hex(1, 1, 1);
        assert_eq!(l.sites().len(), 19);
        assert_eq!(l.sites().iter().filter(|s| s.measured).count(), 7);
        assert!(l.sites().iter().all(|s| s.measured == (s.ring <= 1)));
        assert_eq!(l.cells().iter().filter(|c| !c.measured).count(), 12);
        // centred elsewhere
        let c = Layout::hexagonal(&HexLayout { rings: 1, interferer_rings: 0, isd_m: 300.0, sectors: 1, centre: (1000.0, -50.0) }).unwrap();
        assert_eq!(c.sites()[0].position, (1000.0, -50.0));
        assert!((dist(c.sites()[3].position, (1000.0, -50.0)) - 300.0).abs() < 1e-9);
    }

    #[test]
    fn antenna_pattern_values() {
        // TR 36.814 Table A.2.1.1-2: 0 dB on boresight, −3 dB at ±θ3dB/2 = ±35°,
        // −12·(60/70)² = −8.816 dB at ±60°, capped at −Am = −20 dB behind.
        assert_eq!(sector_pattern_db(0.0), 0.0);
        assert!((sector_pattern_db(35.0) + 3.0).abs() < 1e-12);
        assert!((sector_pattern_db(-35.0) + 3.0).abs() < 1e-12);
        assert!((sector_pattern_db(60.0) + 12.0 * (60.0f64 / 70.0).powi(2)).abs() < 1e-12);
        assert!((sector_pattern_db(60.0) + 8.816).abs() < 1e-3);
        assert!((sector_pattern_db(-60.0) - sector_pattern_db(60.0)).abs() < 1e-12);
        assert_eq!(sector_pattern_db(180.0), -20.0);
        assert_eq!(sector_pattern_db(-120.0), -20.0);
        // the cap starts where 12(θ/70)² = 20, θ = 70·√(5/3) = 90.37°
        assert!(sector_pattern_db(90.0) > -20.0);
        assert_eq!(sector_pattern_db(90.5), -20.0);
        // wrapping: 350° off = −10° off
        assert!((sector_pattern_db(350.0) - sector_pattern_db(-10.0)).abs() < 1e-12);
    }

    #[test]
    fn sector_gain_toward_a_ue() {
        let l = hex(0, 0, 3);
        let c = l.cells();
        assert_eq!(c.len(), 3);
        let at = |deg: f64| {
            let r = deg.to_radians();
            (100.0 * r.cos(), 100.0 * r.sin())
        };
        // UE on the boresight of sector 0 (30°)
        assert!(c[0].gain_toward_db(at(30.0)).abs() < 1e-9);
        assert!((c[0].gain_toward_db(at(65.0)) + 3.0).abs() < 1e-9);
        assert!((c[0].gain_toward_db(at(-5.0)) + 3.0).abs() < 1e-9);
        assert_eq!(c[0].gain_toward_db(at(210.0)), -20.0);
        // sector 2 (270°): UE straight south
        assert!(c[2].gain_toward_db((0.0, -50.0)).abs() < 1e-9);
        // omni
        assert_eq!(hex(0, 0, 1).cells()[0].gain_toward_db(at(123.0)), 0.0);
        // cells of a site are adjacent
        assert!(l.cells_adjacent(0, 2));
    }

    #[test]
    fn gabriel_matches_the_brute_force_definition() {
        use rand::Rng;
        let mut r = celltcp_engine::rng::component_rng(5, 5);
        let pts: Vec<(String, (f64, f64))> = (0..60).map(|i| (format!("s{i}"), (r.gen::<f64>() * 5000.0, r.gen::<f64>() * 5000.0))).collect();
        let l = Layout::explicit(&pts, 1).unwrap();
        let p: Vec<(f64, f64)> = pts.iter().map(|x| x.1).collect();
        for i in 0..p.len() {
            for j in 0..p.len() {
                if i == j {
                    continue;
                }
                let m = ((p[i].0 + p[j].0) / 2.0, (p[i].1 + p[j].1) / 2.0);
                let r2 = (dist(p[i], p[j]) / 2.0).powi(2);
                let brute = !(0..p.len()).any(|k| k != i && k != j && dist(p[k], m).powi(2) < r2);
                assert_eq!(l.neighbours(i).contains(&j), brute, "{i} {j}");
            }
        }
        // a planar graph: at most 3n − 6 edges; connected
        assert!(l.x2_pairs().len() <= 3 * 60 - 6);
        let mut seen = [false; 60];
        let mut stack = vec![0];
        while let Some(v) = stack.pop() {
            if !std::mem::replace(&mut seen[v], true) {
                stack.extend(l.neighbours(v));
            }
        }
        assert!(seen.iter().all(|&b| b));
        // a large hex layout stays fast (1 + 3·20·21 = 1261 sites)
        let big = hex(15, 5, 1);
        assert_eq!(big.sites().len(), 1261);
        assert_eq!(big.neighbours(0).len(), 6);
    }

    #[test]
    fn explicit_layout_and_validation() {
        let l = Layout::explicit(&[("a".into(), (0.0, 0.0)), ("b".into(), (750.0, 0.0))], 1).unwrap();
        assert_eq!(l.x2_pairs(), vec![(0, 1)]);
        // three collinear sites: the middle one blocks the outer pair
        let l3 = Layout::explicit(&[("a".into(), (0.0, 0.0)), ("b".into(), (500.0, 0.0)), ("c".into(), (1000.0, 0.0))], 1).unwrap();
        assert_eq!(l3.x2_pairs(), vec![(0, 1), (1, 2)]);
        let e = Layout::explicit(&[("a".into(), (0.0, 0.0)), ("b".into(), (10.0, 0.0)), ("c".into(), (0.0, 0.0))], 1).unwrap_err();
        assert!(e.contains("'a'") && e.contains("'c'") && e.contains("same position"), "{e}");
        let e = Layout::explicit(&[("a".into(), (0.0, 0.0))], 2).unwrap_err();
        assert!(e.contains("sectors") && e.contains("1 or 3") && e.contains('2'), "{e}");
        let e = Layout::hexagonal(&HexLayout { rings: 1, interferer_rings: 0, isd_m: 0.0, sectors: 1, centre: (0.0, 0.0) }).unwrap_err();
        assert!(e.contains("isd_m"), "{e}");
        assert!(Layout::explicit(&[], 1).is_err());
        // X2 by name
        assert_eq!(l3.resolve_x2(&[("c".into(), "b".into())]).unwrap(), vec![(1, 2)]);
        let e = l3.resolve_x2(&[("a".into(), "z".into())]).unwrap_err();
        assert!(e.contains("'z'") && e.contains("does not exist"), "{e}");
    }
}
