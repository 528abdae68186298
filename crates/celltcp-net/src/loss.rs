//! Random packet loss on a link: independent (Bernoulli) or bursty (Gilbert–Elliott).
//!
//! The Gilbert–Elliott model (E. N. Gilbert, "Capacity of a burst-noise channel", BSTJ 1960;
//! E. O. Elliott, "Estimates of error rates for codes on burst-noise channels", BSTJ 1963) is a
//! two-state Markov chain stepped once per packet: in state Good a packet is lost with
//! probability `loss_good`, in state Bad with `loss_bad`; after each packet the chain moves
//! Good→Bad with probability `p = p_good_to_bad` and Bad→Good with `r = p_bad_to_good`. The
//! stationary probability of Bad is `π_B = p / (p + r)`, the mean loss rate
//! `π_G·loss_good + π_B·loss_bad`, and a stay in Bad lasts `1/r` packets on average (so with
//! `loss_bad = 1`, `loss_good = 0` — Gilbert's original model — loss bursts average `1/r`).
//! The chain starts in Good.

use celltcp_engine::SimRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// A loss model as plain data for scenario files. Probabilities are in `[0, 1]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LossConfig {
    #[default]
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Two-state Markov loss (see the module docs).
    GilbertElliott { p_good_to_bad: f64, p_bad_to_good: f64, loss_good: f64, loss_bad: f64 },
}

impl LossConfig {
    /// Checks that every probability is in `[0, 1]`.
    pub fn validate(&self) -> Result<(), String> {
        let probs: &[(&str, f64)] = match self {
            LossConfig::None => &[],
            LossConfig::Bernoulli { p } => &[("p", *p)],
            LossConfig::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => &[
                ("p_good_to_bad", *p_good_to_bad),
                ("p_bad_to_good", *p_bad_to_good),
                ("loss_good", *loss_good),
                ("loss_bad", *loss_bad),
            ],
        };
        for (name, v) in probs {
            if !(0.0..=1.0).contains(v) {
                return Err(format!("loss: {name} must be in [0, 1], got {v}"));
            }
        }
        Ok(())
    }
}

/// A loss model's state; draws come from the caller's (the link's) random stream.
#[derive(Clone, Debug)]
pub struct LossModel {
    cfg: LossConfig,
    bad: bool,
}

impl LossModel {
    pub fn new(cfg: LossConfig) -> Self {
        LossModel { cfg, bad: false }
    }

    /// A model that never loses a packet.
    pub fn none() -> Self {
        LossModel::new(LossConfig::None)
    }

    pub fn config(&self) -> LossConfig {
        self.cfg
    }

    /// Whether the Gilbert–Elliott chain is in its Bad state.
    pub fn in_bad_state(&self) -> bool {
        self.bad
    }

    /// Decides the fate of the next packet: `true` = lost. Consumes no randomness for
    /// [`LossConfig::None`] (the common case, inlined into the link: a call per packet was
    /// 0.1 % of a run's instructions).
    #[inline]
    pub fn lose(&mut self, rng: &mut SimRng) -> bool {
        if matches!(self.cfg, LossConfig::None) {
            return false;
        }
        self.lose_random(rng)
    }

    #[inline(never)]
    fn lose_random(&mut self, rng: &mut SimRng) -> bool {
        match self.cfg {
            LossConfig::None => false,
            LossConfig::Bernoulli { p } => rng.gen::<f64>() < p,
            LossConfig::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                let lost = rng.gen::<f64>() < if self.bad { loss_bad } else { loss_good };
                let flip = if self.bad { p_bad_to_good } else { p_good_to_bad };
                if rng.gen::<f64>() < flip {
                    self.bad = !self.bad;
                }
                lost
            }
        }
    }

    /// The long-run loss rate: `p` for Bernoulli; `π_G·loss_good + π_B·loss_bad` with
    /// `π_B = p/(p+r)` for Gilbert–Elliott (a chain that never moves stays Good).
    pub fn mean_loss(&self) -> f64 {
        match self.cfg {
            LossConfig::None => 0.0,
            LossConfig::Bernoulli { p } => p,
            LossConfig::GilbertElliott { p_good_to_bad: p, p_bad_to_good: r, loss_good, loss_bad } => {
                if p + r == 0.0 {
                    return loss_good;
                }
                let pi_b = p / (p + r);
                (1.0 - pi_b) * loss_good + pi_b * loss_bad
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_engine::component_rng;

    #[test]
    fn loss_config_validates_probabilities() {
        // Probabilities outside [0, 1] are refused.
        assert!(LossConfig::Bernoulli { p: 0.1 }.validate().is_ok());
        assert!(LossConfig::Bernoulli { p: 1.1 }.validate().is_err());
        let ge = LossConfig::GilbertElliott { p_good_to_bad: 0.1, p_bad_to_good: -0.1, loss_good: 0.0, loss_bad: 1.0 };
        assert!(ge.validate().unwrap_err().contains("p_bad_to_good"));
    }

    #[test]
    fn none_never_loses() {
        // LossConfig::None: no packet is lost.
        let mut m = LossModel::none();
        let mut rng = component_rng(1, 1);
        assert!((0..10_000).all(|_| !m.lose(&mut rng)));
        assert_eq!(m.mean_loss(), 0.0);
    }

    #[test]
    fn bernoulli_rate_matches_p() {
        // Independent loss: the empirical rate converges to p (tolerance ~5 standard deviations).
        for p in [0.001, 0.01, 0.1, 0.5] {
            let mut m = LossModel::new(LossConfig::Bernoulli { p });
            let mut rng = component_rng(11, (p * 1e6) as u64);
            let n = 400_000;
            let lost = (0..n).filter(|_| m.lose(&mut rng)).count() as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((lost - n as f64 * p).abs() < 5.0 * sd, "p={p}: {lost}");
            assert_eq!(m.mean_loss(), p);
        }
    }

    #[test]
    fn gilbert_elliott_matches_stationary_law_and_burst_length() {
        // π_B = p/(p+r); mean loss = π_G·h_G + π_B·h_B; with h_B = 1, h_G = 0 the mean loss burst
        // length is 1/r (a geometric stay in Bad).
        let (p, r) = (0.01, 0.25);
        let cfg = LossConfig::GilbertElliott { p_good_to_bad: p, p_bad_to_good: r, loss_good: 0.0, loss_bad: 1.0 };
        let mut m = LossModel::new(cfg);
        let mut rng = component_rng(5, 5);
        let n = 2_000_000;
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = m.lose(&mut rng);
            lost += l as u64;
            bursts += (l && !prev) as u64;
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        let want = p / (p + r);
        assert!((m.mean_loss() - want).abs() < 1e-12);
        assert!((rate - want).abs() < 0.03 * want, "{rate} vs {want}");
        let burst = lost as f64 / bursts as f64;
        assert!((burst - 1.0 / r).abs() < 0.03 / r, "{burst} vs {}", 1.0 / r);

        // Partial losses in both states.
        let cfg =
            LossConfig::GilbertElliott { p_good_to_bad: 0.05, p_bad_to_good: 0.2, loss_good: 0.01, loss_bad: 0.5 };
        let mut m = LossModel::new(cfg);
        let rate = (0..n).filter(|_| m.lose(&mut rng)).count() as f64 / n as f64;
        let want = 0.8 * 0.01 + 0.2 * 0.5;
        assert!((m.mean_loss() - want).abs() < 1e-12);
        assert!((rate - want).abs() < 0.03 * want, "{rate} vs {want}");
    }
}
