//! The radio channel between the AP and a station: path loss models, the noise floor and the
//! resulting SNR. The channel is static (no fading): a link's SNR is fixed by the distance.
//!
//! - [`PathLoss::FreeSpace`]: Friis, 20·log₁₀(4π·d·f / c).
//! - [`PathLoss::LogDistance`]: L₀ + 10·n·log₁₀(d / d₀), with ns-3's defaults (n = 3, d₀ = 1 m,
//!   L₀ = 46.6777 dB, the free-space loss at 1 m and 5.15 GHz).
//! - [`PathLoss::Indoor`]: ITU-R P.1238 (site-general indoor model), L = 20·log₁₀ f[MHz] +
//!   N·log₁₀ d[m] + L_f(n) − 28, with the office distance power loss coefficient N (Table 2:
//!   30 at 2.4 GHz, 31 at 5.2 GHz) and L_f the floor penetration loss (0 on one floor).
//! - [`Channel::FixedSnr`]: a given SNR, whatever the distance.
//!
//! The noise floor is thermal noise k·T·B at 290 K over the channel width plus the receiver's
//! noise figure (ns-3's default 7 dB), i.e. −174 dBm/Hz + 10·log₁₀ B + NF.

/// Speed of light, m/s.
const C: f64 = 299_792_458.0;

/// A path loss model.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum PathLoss {
    FreeSpace,
    LogDistance { exponent: f64, reference_m: f64, reference_loss_db: f64 },
    /// ITU-R P.1238 with distance power loss coefficient `n` and floor loss `floor_loss_db`.
    Indoor { n: f64, floor_loss_db: f64 },
}

impl PathLoss {
    /// ns-3's `LogDistancePropagationLossModel` defaults.
    pub const NS3_LOG_DISTANCE: PathLoss = PathLoss::LogDistance { exponent: 3.0, reference_m: 1.0, reference_loss_db: 46.6777 };

    /// ITU-R P.1238 office environment at `carrier_hz` (Table 2: N = 30 at 2.4 GHz, 31 at 5.2
    /// GHz), one floor.
    pub fn indoor_office(carrier_hz: f64) -> PathLoss {
        PathLoss::Indoor { n: if carrier_hz < 4e9 { 30.0 } else { 31.0 }, floor_loss_db: 0.0 }
    }

    /// Loss in dB over `d_m` metres at `carrier_hz` (distances below 1 cm are taken as 1 cm).
    pub fn loss_db(&self, d_m: f64, carrier_hz: f64) -> f64 {
        let d = d_m.max(0.01);
        match *self {
            PathLoss::FreeSpace => 20.0 * (4.0 * std::f64::consts::PI * d * carrier_hz / C).log10(),
            PathLoss::LogDistance { exponent, reference_m, reference_loss_db } => {
                if d <= reference_m {
                    reference_loss_db
                } else {
                    reference_loss_db + 10.0 * exponent * (d / reference_m).log10()
                }
            }
            PathLoss::Indoor { n, floor_loss_db } => {
                (20.0 * (carrier_hz / 1e6).log10() + n * d.log10() + floor_loss_db - 28.0).max(0.0)
            }
        }
    }
}

/// How a link's SNR is obtained.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Channel {
    /// The same SNR on every link, dB.
    FixedSnr(f64),
    /// SNR from transmit power, path loss and noise.
    PathLoss {
        model: PathLoss,
        carrier_hz: f64,
        tx_power_dbm: f64,
        noise_figure_db: f64,
    },
}

impl Channel {
    /// ns-3's defaults: log-distance loss, 16.0206 dBm transmit power, 7 dB noise figure, at
    /// `carrier_hz`.
    pub fn ns3_default(carrier_hz: f64) -> Channel {
        Channel::PathLoss { model: PathLoss::NS3_LOG_DISTANCE, carrier_hz, tx_power_dbm: 16.0206, noise_figure_db: 7.0 }
    }

    /// SNR in dB of a link of `d_m` metres over a channel `width_mhz` wide.
    pub fn snr_db(&self, d_m: f64, width_mhz: u16) -> f64 {
        match *self {
            Channel::FixedSnr(s) => s,
            Channel::PathLoss { model, carrier_hz, tx_power_dbm, noise_figure_db } => {
                tx_power_dbm - model.loss_db(d_m, carrier_hz) - noise_floor_dbm(width_mhz, noise_figure_db)
            }
        }
    }
}

/// Thermal noise over `width_mhz` at 290 K plus the noise figure, dBm.
pub fn noise_floor_dbm(width_mhz: u16, noise_figure_db: f64) -> f64 {
    // k·T at 290 K = 1.380649e-23 × 290 W/Hz = −173.975 dBm/Hz.
    10.0 * (1.380_649e-23 * 290.0 * width_mhz as f64 * 1e6 * 1e3).log10() + noise_figure_db
}

/// The usual carrier of a band: channel 36 (5.18 GHz) or channel 1 (2.412 GHz).
pub fn default_carrier_hz(band: crate::phy::Band) -> f64 {
    match band {
        crate::phy::Band::Ghz5 => 5.18e9,
        crate::phy::Band::Ghz2_4 => 2.412e9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_at_one_metre_is_ns3_reference_loss() {
        // Friis at 1 m and 5.15 GHz = 46.68 dB (ns-3's log-distance reference loss 46.6777 dB
        // is the same figure computed with c = 3·10⁸ m/s).
        let fs = PathLoss::FreeSpace.loss_db(1.0, 5.15e9);
        assert!((fs - 46.6777).abs() < 0.01, "{fs}");
        // doubling the distance adds 6.02 dB in free space, 9.03 dB with exponent 3.
        let d = PathLoss::FreeSpace.loss_db(20.0, 5.15e9) - PathLoss::FreeSpace.loss_db(10.0, 5.15e9);
        assert!((d - 6.0206).abs() < 1e-3);
        let l = PathLoss::NS3_LOG_DISTANCE;
        assert!((l.loss_db(20.0, 5.15e9) - l.loss_db(10.0, 5.15e9) - 9.0309).abs() < 1e-3);
    }

    #[test]
    fn indoor_p1238_and_noise_floor() {
        // P.1238 at 2.4 GHz (2400 MHz), 10 m, office N = 30: 67.60 + 30 − 28 = 69.60 dB.
        let l = PathLoss::indoor_office(2.4e9).loss_db(10.0, 2.4e9);
        assert!((l - 69.604).abs() < 1e-2, "{l}");
        // kTB over 20 MHz = −100.97 dBm; with NF 7 dB, −93.97 dBm.
        assert!((noise_floor_dbm(20, 7.0) + 93.97).abs() < 0.01);
        assert_eq!(Channel::FixedSnr(25.0).snr_db(1e3, 20), 25.0);
        // SNR falls with distance.
        let ch = Channel::ns3_default(5.18e9);
        assert!(ch.snr_db(5.0, 20) > ch.snr_db(50.0, 20));
    }
}
