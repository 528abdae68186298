//! Static steering: a fixed fraction of a split bearer's PDUs to the WLAN leg (paper 002 §3.1:
//! "for every x + y packets x packets will be sent through an interface, and y packets will be
//! sent through the other"; TS 36.300 §22A.3.1 leaves the split to the eNB).
//!
//! The n-th PDU (from 0) goes to the WLAN iff ⌊(n+1)·r⌋ > ⌊n·r⌋, so after n PDUs exactly ⌊n·r⌋
//! took the WLAN, spread as evenly as the integers allow (a ratio x : y is r = y / (x + y)).

use celltcp_engine::SimTime;

use super::{LegState, LwaLeg, Steering};

/// A fixed fraction `r` of PDUs to the WLAN.
#[derive(Clone, Debug)]
pub struct StaticRatio {
    wlan_fraction: f64,
    n: u64,
}

impl StaticRatio {
    pub fn new(wlan_fraction: f64) -> Self {
        StaticRatio { wlan_fraction: wlan_fraction.clamp(0.0, 1.0), n: 0 }
    }

    fn wlan_after(&self, n: u64) -> u64 {
        (n as f64 * self.wlan_fraction + 1e-9).floor() as u64
    }
}

impl Steering for StaticRatio {
    fn steer(&mut self, _now: SimTime, _legs: &LegState) -> LwaLeg {
        let leg = if self.wlan_after(self.n + 1) > self.wlan_after(self.n) { LwaLeg::Wlan } else { LwaLeg::Lte };
        self.n += 1;
        leg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Closed form: after n PDUs, ⌊n·r⌋ took the WLAN, for every prefix n.
    #[test]
    fn static_ratio_splits_as_configured() {
        for &r in &[0.0, 0.1, 0.25, 1.0 / 3.0, 0.5, 0.7, 0.9, 1.0] {
            let mut s = StaticRatio::new(r);
            let mut wlan = 0u64;
            for n in 1..=10_000u64 {
                if s.steer(SimTime::ZERO, &LegState::default()) == LwaLeg::Wlan {
                    wlan += 1;
                }
                assert_eq!(wlan, (n as f64 * r + 1e-9).floor() as u64, "r = {r}, n = {n}");
            }
        }
    }

    // x : y = 1 : 1 alternates, LTE first; 2 : 1 (r = 1/3) sends every third PDU to the WLAN.
    #[test]
    fn static_ratio_interleaves() {
        let mut s = StaticRatio::new(0.5);
        let legs: Vec<_> = (0..4).map(|_| s.steer(SimTime::ZERO, &LegState::default())).collect();
        assert_eq!(legs, [LwaLeg::Lte, LwaLeg::Wlan, LwaLeg::Lte, LwaLeg::Wlan]);
        let mut s = StaticRatio::new(1.0 / 3.0);
        let legs: Vec<_> = (0..6).map(|_| s.steer(SimTime::ZERO, &LegState::default())).collect();
        assert_eq!(legs, [LwaLeg::Lte, LwaLeg::Lte, LwaLeg::Wlan, LwaLeg::Lte, LwaLeg::Lte, LwaLeg::Wlan]);
    }
}
