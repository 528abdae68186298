//! Who hears whom: the carrier-sense relation among the nodes of a BSS.
//!
//! Node j senses node i's PPDUs when their received power at j is at least the CCA threshold:
//! the start of a valid OFDM PPDU received at or above the minimum sensitivity of the lowest
//! rate makes CCA report busy (IEEE 802.11-2020 §17.3.10.6 for OFDM: −82 dBm in 20 MHz;
//! §19.3.19.5.2 for HT and §21.3.18.5.3 for VHT: −82 dBm for a 20 MHz PPDU, −79 dBm for 40 MHz,
//! −76 dBm for 80 MHz, −73 dBm for 160 MHz, i.e. +3 dB per doubled width, [`cca_threshold_dbm`]).
//! The received power is the transmit power less the path loss of [`crate::channel`] over the
//! distance between the two positions (no fading: the relation is fixed for the run), so it is
//! symmetric. A node that does not sense another neither defers to it nor decodes its frames
//! (no NAV from them), and their PPDUs still overlap at a third node that senses both.
//!
//! On top of the positions, pairs can be declared hidden explicitly (as ns-3's
//! `MatrixPropagationLossModel` does for wifi-hidden-terminal.cc). With a fixed SNR, or
//! distances without positions, there is no geometry: every node senses every other unless a
//! pair is declared hidden.
//!
//! Node indices are those of [`crate::Bss`]'s contenders: 0 the AP, 1 + s station s.

use crate::bss::Node;
use crate::channel::Channel;

/// CCA threshold for the start of a PPDU `width_mhz` wide, dBm: −82 dBm at 20 MHz, +3 dB per
/// doubling of the width (§17.3.10.6, §19.3.19.5.2, §21.3.18.5.3).
pub fn cca_threshold_dbm(width_mhz: u16) -> f64 {
    -82.0 + 3.0 * (f64::from(width_mhz.max(20)) / 20.0).log2()
}

/// The symmetric "senses" relation over `n` nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hears {
    n: usize,
    bits: Vec<bool>,
}

impl Hears {
    /// Every node senses every other (the whole-range assumption).
    pub fn all(n: usize) -> Hears {
        Hears { n, bits: vec![true; n * n] }
    }

    /// From the positions (`[x, y]` metres) of the AP and of each station: node j senses node i
    /// when the power received over their distance reaches the CCA threshold. A fixed-SNR channel
    /// has no geometry: every node senses every other.
    pub fn from_positions(ap: [f64; 2], stations: &[[f64; 2]], channel: &Channel, width_mhz: u16) -> Hears {
        let mut h = Hears::all(stations.len() + 1);
        let Channel::PathLoss { model, carrier_hz, tx_power_dbm, .. } = *channel else { return h };
        let at = |k: usize| if k == 0 { ap } else { stations[k - 1] };
        let cca = cca_threshold_dbm(width_mhz);
        for i in 0..h.n {
            for j in i + 1..h.n {
                let (a, b) = (at(i), at(j));
                let d = (a[0] - b[0]).hypot(a[1] - b[1]);
                if tx_power_dbm - model.loss_db(d, carrier_hz) < cca {
                    h.set_hidden(i, j);
                }
            }
        }
        h
    }

    /// Nodes `i` and `j` do not sense each other (both ways).
    pub fn set_hidden(&mut self, i: usize, j: usize) {
        assert!(i < self.n && j < self.n && i != j, "hidden pair ({i}, {j}) of {} nodes", self.n);
        self.bits[i * self.n + j] = false;
        self.bits[j * self.n + i] = false;
    }

    /// Whether node `j` senses node `i` (a node senses itself).
    pub fn hears(&self, j: usize, i: usize) -> bool {
        self.bits[j * self.n + i]
    }

    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Every pair senses each other.
    pub fn is_full(&self) -> bool {
        self.bits.iter().all(|&b| b)
    }

    /// The pairs that do not sense each other, as nodes, each once.
    pub fn hidden_pairs(&self) -> Vec<(Node, Node)> {
        let node = |k: usize| if k == 0 { Node::Ap } else { Node::Sta((k - 1) as u16) };
        (0..self.n).flat_map(|i| (i + 1..self.n).map(move |j| (i, j))).filter(|&(i, j)| !self.hears(j, i)).map(|(i, j)| (node(i), node(j))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::PathLoss;

    #[test]
    fn cca_threshold_per_width() {
        // §21.3.18.5.3: −82, −79, −76, −73 dBm for 20, 40, 80, 160 MHz
        for (w, want) in [(20, -82.0), (40, -79.0), (80, -76.0), (160, -73.0)] {
            assert!((cca_threshold_dbm(w) - want).abs() < 0.01, "{w} MHz");
        }
    }

    #[test]
    fn hidden_beyond_the_cca_range() {
        // ns-3 log-distance at 5.18 GHz, 16.02 dBm: 46.68 + 30·log10(d) dB reaches 98.02 dB
        // (received −82 dBm) at d = 10^((98.02 − 46.68)/30) = 51.5 m (reference loss 46.6777 dB
        // holds at any carrier here: it is the model's constant).
        let ch = Channel::PathLoss { model: PathLoss::NS3_LOG_DISTANCE, carrier_hz: 5.18e9, tx_power_dbm: 16.0206, noise_figure_db: 7.0 };
        let range = 10f64.powf((16.0206 + 82.0 - 46.6777) / 30.0);
        assert!((range - 51.5).abs() < 0.1, "{range}");
        // AP in the middle, stations 50 m either side: each hears the AP, not each other
        let h = Hears::from_positions([0.0, 0.0], &[[-50.0, 0.0], [50.0, 0.0]], &ch, 20);
        assert!(h.hears(0, 1) && h.hears(1, 0) && h.hears(0, 2) && h.hears(2, 0));
        assert!(!h.hears(1, 2) && !h.hears(2, 1));
        assert_eq!(h.hidden_pairs(), vec![(Node::Sta(0), Node::Sta(1))]);
        // 40 MHz raises the threshold by 3 dB: range 51.5 / 10^(3/30) = 40.9 m; stations 35 m
        // from the AP and 49.5 m apart are hidden at 40 MHz, not at 20 MHz
        let pos = [[-35.0, 0.0], [0.0, 35.0]];
        let h = Hears::from_positions([0.0, 0.0], &pos, &ch, 40);
        assert!(!h.hears(1, 2) && h.hears(0, 1) && h.hears(0, 2));
        assert!(Hears::from_positions([0.0, 0.0], &pos, &ch, 20).is_full());
        let h = Hears::from_positions([0.0, 0.0], &[[-20.0, 0.0], [20.0, 0.0]], &ch, 20);
        assert!(h.is_full());
        // no geometry with a fixed SNR
        assert!(Hears::from_positions([0.0, 0.0], &[[-1e4, 0.0], [1e4, 0.0]], &Channel::FixedSnr(30.0), 20).is_full());
    }
}
