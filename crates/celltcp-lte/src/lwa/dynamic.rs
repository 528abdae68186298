//! The dynamic steering of paper 002 (Pasca et al., §3.2): from each leg's smoothed link RTT
//! (SLRTT, from probes every 3 ms, EWMA with α = 1/Pᵢ — kept by [`LwaTx`](super::LwaTx)) and its
//! packet loss rate, a steering ratio x : y (LTE : Wi-Fi) over a *variable* steering window of
//! x + y PDUs (one cycle).
//!
//! The paper names the inputs and the window but gives no formula for the ratio; ours (stated,
//! not the paper's): each leg's weight is its delivery rate per unit of delay,
//! wᵢ = (1 − lossᵢ) / SLRTTᵢ, so that a leg whose queue grows (its SLRTT rises) or that loses
//! more gets less. At each cycle start the WLAN share f = w_wifi / (w_lte + w_wifi) is turned
//! into the smallest window W ≤ `max_window` whose x : y is nearest to f (the window is
//! variable, as in the paper); within a cycle the two legs are interleaved. A leg whose probe is
//! due takes the next PDU whatever the cycle says, so a leg with a small share is still probed
//! every Pᵢ. Before both legs have an SLRTT the split is 1 : 1.

use celltcp_engine::SimTime;

use super::{LegState, LwaLeg, Steering};

/// The paper's dynamic steering with a variable window of at most `max_window` PDUs.
#[derive(Clone, Debug)]
pub struct DynamicSteering {
    max_window: u32,
    /// PDUs per leg in the current cycle and PDUs still to send per leg.
    cycle: [u32; 2],
    left: [u32; 2],
    /// Cycles started (for the metrics and tests).
    pub cycles: u64,
}

impl DynamicSteering {
    pub fn new(max_window: u32) -> Self {
        DynamicSteering { max_window: max_window.max(2), cycle: [0; 2], left: [0; 2], cycles: 0 }
    }

    /// The WLAN share the legs' state asks for.
    pub fn wlan_share(legs: &LegState) -> f64 {
        match legs.slrtt {
            [Some(l), Some(w)] => {
                let wl = (1.0 - legs.loss[0]).max(0.0) / l.as_secs_f64().max(1e-6);
                let ww = (1.0 - legs.loss[1]).max(0.0) / w.as_secs_f64().max(1e-6);
                if wl + ww > 0.0 {
                    ww / (wl + ww)
                } else {
                    0.5
                }
            }
            _ => 0.5,
        }
    }

    /// The smallest window `W ≤ max` and WLAN count `y` with `y / W` nearest to `f`.
    pub fn window_for(f: f64, max: u32) -> (u32, u32) {
        let mut best = (1, if f >= 0.5 { 1 } else { 0 }, f64::INFINITY);
        for w in 1..=max {
            let y = (f * w as f64).round() as u32;
            let err = (y as f64 / w as f64 - f).abs();
            if err + 1e-12 < best.2 {
                best = (w, y, err);
            }
        }
        (best.0, best.1)
    }

    /// The current cycle's x : y.
    pub fn ratio(&self) -> (u32, u32) {
        (self.cycle[0], self.cycle[1])
    }
}

impl Steering for DynamicSteering {
    fn steer(&mut self, _now: SimTime, legs: &LegState) -> LwaLeg {
        if self.left == [0, 0] {
            let (w, y) = Self::window_for(Self::wlan_share(legs), self.max_window);
            self.cycle = [w - y, y];
            self.left = self.cycle;
            self.cycles += 1;
        }
        let leg = if legs.probe_due[0] != legs.probe_due[1] {
            if legs.probe_due[0] { LwaLeg::Lte } else { LwaLeg::Wlan }
        } else if legs.probe_due[0] {
            // both probes due: the leg with more left in the cycle first, LTE on a tie
            if self.left[1] > self.left[0] { LwaLeg::Wlan } else { LwaLeg::Lte }
        } else if self.left[0] == 0 {
            LwaLeg::Wlan
        } else if self.left[1] == 0 {
            LwaLeg::Lte
        } else {
            // interleave: the leg further behind its share of the cycle so far
            let sent = [self.cycle[0] - self.left[0], self.cycle[1] - self.left[1]];
            if u64::from(sent[1]) * u64::from(self.cycle[0]) < u64::from(sent[0]) * u64::from(self.cycle[1]) {
                LwaLeg::Wlan
            } else {
                LwaLeg::Lte
            }
        };
        let i = leg as usize;
        self.left[i] = self.left[i].saturating_sub(1);
        leg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::SimDuration;

    fn legs(lte_ms: u64, wlan_ms: u64, loss: [f64; 2]) -> LegState {
        LegState {
            slrtt: [Some(SimDuration::from_millis(lte_ms)), Some(SimDuration::from_millis(wlan_ms))],
            loss,
            probe_due: [false, false],
        }
    }

    // wᵢ = (1 − lossᵢ)/SLRTTᵢ: equal legs split 1 : 1; a WLAN twice as slow gets a third.
    #[test]
    fn dynamic_share_follows_slrtt_and_loss() {
        assert!((DynamicSteering::wlan_share(&legs(10, 10, [0.0; 2])) - 0.5).abs() < 1e-12);
        assert!((DynamicSteering::wlan_share(&legs(10, 20, [0.0; 2])) - 1.0 / 3.0).abs() < 1e-12);
        // half the WLAN's PDUs lost: (0.5/10) / (1/10 + 0.5/10) = 1/3
        assert!((DynamicSteering::wlan_share(&legs(10, 10, [0.0, 0.5])) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(DynamicSteering::wlan_share(&LegState::default()), 0.5);
    }

    // The variable window: the smallest W whose y/W is nearest the share.
    #[test]
    fn dynamic_window_is_the_smallest_nearest_fraction() {
        assert_eq!(DynamicSteering::window_for(0.5, 10), (2, 1));
        assert_eq!(DynamicSteering::window_for(1.0 / 3.0, 10), (3, 1));
        assert_eq!(DynamicSteering::window_for(0.3, 10), (10, 3));
        assert_eq!(DynamicSteering::window_for(0.0, 10), (1, 0));
        assert_eq!(DynamicSteering::window_for(1.0, 10), (1, 1));
    }

    // Over many cycles with no probe due, the legs get exactly x : y; a due probe takes the PDU.
    #[test]
    fn dynamic_steering_follows_the_cycle_and_probes() {
        let mut s = DynamicSteering::new(10);
        let st = legs(10, 20, [0.0; 2]);
        let mut n = [0u32; 2];
        for _ in 0..300 {
            n[s.steer(SimTime::ZERO, &st) as usize] += 1;
        }
        assert_eq!(n, [200, 100]);
        assert_eq!(s.ratio(), (2, 1));
        let mut due = st;
        due.probe_due = [false, true];
        let mut s = DynamicSteering::new(10);
        let st0 = legs(10, 1000, [0.0; 2]); // WLAN share 1/101: rounds to 0 in a 10-window
        assert_eq!(s.steer(SimTime::ZERO, &st0), LwaLeg::Lte);
        due.slrtt = st0.slrtt;
        assert_eq!(s.steer(SimTime::ZERO, &due), LwaLeg::Wlan, "a due probe goes out on its leg");
    }
}
