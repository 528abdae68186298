//! PHY: modulation and coding, data rates, PPDU durations (TXTIME) and the PHY characteristics
//! the MAC times itself by.
//!
//! - [`ofdm`]: the 802.11a OFDM PHY (IEEE 802.11-2016 clause 17) and the 802.11g ERP-OFDM PHY
//!   (clause 18: the same PPDU plus a 6 µs signal extension in the 2.4 GHz band).
//! - [`ht`]: the 802.11n HT PHY, HT-mixed format (clause 19), MCS 0–7 per spatial stream,
//!   20/40 MHz, long or short guard interval.
//! - [`vht`]: the 802.11ac VHT PHY, single user (clause 21), MCS 0–9, 20/40/80/160 MHz.
//!
//! A transmission is described by a [`TxVector`] (the standard's TXVECTOR, reduced to what the
//! duration and the error model need) and its duration by [`txtime`]. The MAC timing constants
//! (aSlotTime, aSIFSTime, aCWmin, aCWmax, aRxPHYStartDelay) come from each PHY's characteristics
//! table (Table 17-21, Table 18-5, Table 19-25, Table 21-28) through [`PhyTiming`].

pub mod ht;
pub mod ofdm;
pub mod vht;

use celltcp_engine::SimDuration;

/// The amendment a BSS runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Standard {
    /// 802.11a: OFDM in the 5 GHz band (clause 17).
    #[serde(rename = "802.11a", alias = "11a")]
    A,
    /// 802.11g: ERP-OFDM in the 2.4 GHz band (clause 18), ERP-only BSS (short slot).
    #[serde(rename = "802.11g", alias = "11g")]
    G,
    /// 802.11n: HT (clause 19), 5 GHz unless the band says otherwise.
    #[serde(rename = "802.11n", alias = "11n")]
    N,
    /// 802.11ac: VHT (clause 21), 5 GHz.
    #[serde(rename = "802.11ac", alias = "11ac")]
    Ac,
}

impl Standard {
    /// Parses "802.11a" … "802.11ac" (also "11a" … "11ac" and "a", "g", "n", "ac").
    pub fn parse(s: &str) -> Option<Standard> {
        match s.trim().to_ascii_lowercase().trim_start_matches("802.").trim_start_matches("11") {
            "a" => Some(Standard::A),
            "g" => Some(Standard::G),
            "n" => Some(Standard::N),
            "ac" => Some(Standard::Ac),
            _ => None,
        }
    }

    /// "802.11a" … "802.11ac", as the scenario writes it.
    pub fn name(self) -> &'static str {
        match self {
            Standard::A => "802.11a",
            Standard::G => "802.11g",
            Standard::N => "802.11n",
            Standard::Ac => "802.11ac",
        }
    }

    /// The PHY that carries data frames.
    pub fn class(self) -> PhyClass {
        match self {
            Standard::A | Standard::G => PhyClass::Ofdm,
            Standard::N => PhyClass::Ht,
            Standard::Ac => PhyClass::Vht,
        }
    }

    /// Whether the BSS uses QoS data frames and EDCA (HT and VHT STAs are QoS STAs,
    /// §10.2.4.1 / §11.2.3.1 of 802.11-2016: an HT STA is a QoS STA); 802.11a/g use DCF and
    /// non-QoS data frames.
    pub fn qos(self) -> bool {
        matches!(self, Standard::N | Standard::Ac)
    }

    /// The band this standard runs in by default (802.11n defaults to 5 GHz).
    pub fn default_band(self) -> Band {
        match self {
            Standard::G => Band::Ghz2_4,
            _ => Band::Ghz5,
        }
    }

    /// Largest MCS index of the data PHY (OFDM: rate index 0–7 = 6 … 54 Mbit/s).
    pub fn max_mcs(self) -> u8 {
        match self {
            Standard::Ac => 9,
            _ => 7,
        }
    }

    /// Largest A-MPDU the standard allows (HT: 65,535 octets, maximum A-MPDU length exponent
    /// 3, §9.4.2.56.3; VHT: 1,048,575 octets, exponent 7, §9.4.2.158.2); `None` for OFDM (no
    /// aggregation).
    pub fn max_ampdu_bytes(self) -> Option<u32> {
        match self {
            Standard::A | Standard::G => None,
            Standard::N => Some(65_535),
            Standard::Ac => Some(1_048_575),
        }
    }

    /// aRxPHYStartDelay, µs, of the standard's PHY (the same in both bands): OFDM and ERP-OFDM 20
    /// (IEEE 802.11-2020 Tables 17-21, 18-5), HT-mixed 28 (Table 19-25), VHT 36 + 4 × 8 + 4 = 72
    /// (Table 21-28 with the largest N_VHT-LTF, 8, Table 21-13).
    fn rx_phy_start_delay_us(self) -> u64 {
        match self {
            Standard::A | Standard::G => 20,
            Standard::N => 28,
            Standard::Ac => 36 + 4 * 8 + 4,
        }
    }

    /// The PHY characteristics the MAC needs.
    pub fn timing(self, band: Band) -> PhyTiming {
        let us = SimDuration::from_micros;
        match (self, band) {
            // Table 17-21 (OFDM, 20 MHz channel spacing).
            (Standard::A, _) | (Standard::G | Standard::N | Standard::Ac, Band::Ghz5) => PhyTiming {
                slot: us(9),
                sifs: us(16),
                cw_min: 15,
                cw_max: 1023,
                // aRxPHYStartDelay (IEEE 802.11-2020): 20 µs for OFDM at 20 MHz (Table 17-21;
                // 802.11-2012's Table 18-17 had 25 µs); HT-mixed 28 µs (Table 19-25; 24 µs
                // HT-greenfield, not modelled); VHT 36 + 4 × max N_VHT-LTF + 4 µs (Table 21-28),
                // N_VHT-LTF at most 8 (Table 21-13): 72 µs. ns-3's EhtFrameExchangeManager (ns-3-dev)
                // quotes the same entries (28 µs, 72 µs); ns-3 3.37 arms AckTimeout with the
                // response's preamble instead (20 µs: its responses are non-HT). It sets
                // AckTimeout and CTSTimeout only (dcf.rs).
                rx_phy_start_delay: us(Standard::rx_phy_start_delay_us(self)),
                signal_extension: SimDuration::ZERO,
            },
            // Table 18-5 (ERP) and Table 19-25 for HT at 2.4 GHz: SIFS 10 µs, the short slot of
            // an ERP-only BSS, 6 µs signal extension after every OFDM PPDU (§18.3.2.4,
            // §19.3.2), aRxPHYStartDelay 20 µs for ERP-OFDM (Table 18-5, as Table 17-21).
            (_, Band::Ghz2_4) => PhyTiming {
                slot: us(9),
                sifs: us(10),
                cw_min: 15,
                cw_max: 1023,
                rx_phy_start_delay: us(Standard::rx_phy_start_delay_us(self)),
                signal_extension: us(6),
            },
        }
    }
}

/// The frequency band (decides SIFS and the ERP signal extension).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Band {
    #[serde(rename = "2.4GHz")]
    Ghz2_4,
    #[serde(rename = "5GHz")]
    Ghz5,
}

/// The PHY characteristics the MAC is timed by (aSlotTime, aSIFSTime, aCWmin, aCWmax,
/// aRxPHYStartDelay) and the ERP signal extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhyTiming {
    pub slot: SimDuration,
    pub sifs: SimDuration,
    pub cw_min: u32,
    pub cw_max: u32,
    pub rx_phy_start_delay: SimDuration,
    /// Added to every PPDU's duration at 2.4 GHz (§18.3.2.4); zero at 5 GHz.
    pub signal_extension: SimDuration,
}

/// The PHY a PPDU is sent with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhyClass {
    /// Non-HT OFDM (clause 17/18); `mcs` is the rate index 0–7 = 6, 9, 12, 18, 24, 36, 48, 54
    /// Mbit/s.
    Ofdm,
    /// HT-mixed (clause 19); `mcs` 0–7 is the per-stream MCS (the standard's MCS 8–15 are MCS
    /// 0–7 with two streams).
    Ht,
    /// VHT SU (clause 21).
    Vht,
}

/// Constellation of the data subcarriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Modulation {
    Bpsk,
    Qpsk,
    Qam16,
    Qam64,
    Qam256,
}

impl Modulation {
    /// Coded bits per subcarrier per stream (N_BPSCS).
    pub fn bits(self) -> u32 {
        match self {
            Modulation::Bpsk => 1,
            Modulation::Qpsk => 2,
            Modulation::Qam16 => 4,
            Modulation::Qam64 => 6,
            Modulation::Qam256 => 8,
        }
    }
}

/// Convolutional code rate (the rate-1/2 K = 7 code of §17.3.5.6, punctured).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeRate {
    R1_2,
    R2_3,
    R3_4,
    R5_6,
}

impl CodeRate {
    /// (numerator, denominator).
    pub fn ratio(self) -> (u32, u32) {
        match self {
            CodeRate::R1_2 => (1, 2),
            CodeRate::R2_3 => (2, 3),
            CodeRate::R3_4 => (3, 4),
            CodeRate::R5_6 => (5, 6),
        }
    }
}

/// The parameters of one PPDU that its duration and its error rate depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TxVector {
    pub class: PhyClass,
    pub mcs: u8,
    pub width_mhz: u16,
    pub nss: u8,
    pub short_gi: bool,
}

impl TxVector {
    /// A non-HT OFDM vector at rate index `idx` (0–7).
    pub const fn ofdm(idx: u8) -> TxVector {
        TxVector { class: PhyClass::Ofdm, mcs: idx, width_mhz: 20, nss: 1, short_gi: false }
    }

    /// Modulation and code rate.
    pub fn modulation(&self) -> (Modulation, CodeRate) {
        match self.class {
            PhyClass::Ofdm => ofdm::modulation(self.mcs),
            PhyClass::Ht => ht::modulation(self.mcs),
            PhyClass::Vht => vht::modulation(self.mcs),
        }
    }

    /// Whether the combination exists in the standard's MCS tables.
    pub fn is_valid(&self) -> bool {
        match self.class {
            PhyClass::Ofdm => self.mcs <= 7 && self.width_mhz == 20 && self.nss == 1 && !self.short_gi,
            PhyClass::Ht => ht::is_valid(self),
            PhyClass::Vht => vht::is_valid(self),
        }
    }

    /// Data bits per OFDM symbol (N_DBPS).
    pub fn n_dbps(&self) -> u32 {
        match self.class {
            PhyClass::Ofdm => ofdm::N_DBPS[self.mcs as usize],
            PhyClass::Ht => ht::n_dbps(self),
            PhyClass::Vht => vht::n_dbps(self),
        }
    }

    /// Symbol duration in nanoseconds: 4 µs with the 800 ns guard interval, 3.6 µs with the 400
    /// ns one.
    pub fn symbol_ns(&self) -> u64 {
        if self.short_gi {
            3_600
        } else {
            4_000
        }
    }

    /// PHY data rate in bit/s (N_DBPS per symbol).
    pub fn data_rate_bps(&self) -> f64 {
        self.n_dbps() as f64 * 1e9 / self.symbol_ns() as f64
    }

    /// The non-HT reference rate in Mbit/s of the modulation and coding (§10.6.6.5.2, Table
    /// 10-7): the rate a control response to this PPDU is chosen from.
    pub fn non_ht_reference_mbps(&self) -> u32 {
        match self.modulation() {
            (Modulation::Bpsk, CodeRate::R1_2) => 6,
            (Modulation::Bpsk, _) => 9,
            (Modulation::Qpsk, CodeRate::R1_2) => 12,
            (Modulation::Qpsk, _) => 18,
            (Modulation::Qam16, CodeRate::R1_2) => 24,
            (Modulation::Qam16, _) => 36,
            (Modulation::Qam64, CodeRate::R2_3) => 48,
            _ => 54,
        }
    }

    /// The rate of a control frame (ACK, block ACK, CTS, RTS) sent in answer to or in front of a
    /// data PPDU with this vector: the highest rate of the basic rate set {6, 12, 24} Mbit/s
    /// (the mandatory OFDM rates) not above the data frame's non-HT reference rate (§10.6.6.5.2).
    pub fn control_response(&self) -> TxVector {
        let r = self.non_ht_reference_mbps();
        TxVector::ofdm(if r >= 24 {
            4
        } else if r >= 12 {
            2
        } else {
            0
        })
    }
}

/// Duration of a PPDU carrying a PSDU of `psdu_bytes` octets (TXTIME), plus the signal
/// extension of the band (§17.4.3 Eq. 17-29, §19.4.3 Eq. 19-135/19-136, §21.4.3 Eq. 21-105).
pub fn txtime(v: &TxVector, psdu_bytes: u32, signal_extension: SimDuration) -> SimDuration {
    let ns = match v.class {
        PhyClass::Ofdm => ofdm::txtime_ns(v.mcs, psdu_bytes),
        PhyClass::Ht => ht::txtime_ns(v, psdu_bytes),
        PhyClass::Vht => vht::txtime_ns(v, psdu_bytes),
    };
    SimDuration::from_nanos(ns) + signal_extension
}

/// Data symbols of a BCC-coded PSDU: ⌈(16 + 8·L + 6·N_ES) / N_DBPS⌉ (SERVICE field, PSDU, tail
/// bits; §17.3.5.4 Eq. 17-11, §19.3.11 Eq. 19-32, §21.4.3 N_SYM for BCC).
pub(crate) fn bcc_symbols(psdu_bytes: u32, n_dbps: u32, n_es: u32) -> u64 {
    let bits = 16 + 8 * psdu_bytes as u64 + 6 * n_es as u64;
    bits.div_ceil(n_dbps as u64)
}

/// Data-portion duration for `n_sym` symbols with the short guard interval, rounded up to a
/// whole long symbol as the TXTIME equations for short GI do: T_SYM·⌈T_SYMS·N_SYM / T_SYM⌉.
pub(crate) fn short_gi_data_ns(n_sym: u64) -> u64 {
    4_000 * (3_600 * n_sym).div_ceil(4_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_response_follows_the_basic_rate_set() {
        // 54 Mbit/s data → ACK at 24; 18 → 12; 9 → 6 (§10.6.6.5.2 with basic rates 6/12/24).
        assert_eq!(TxVector::ofdm(7).control_response(), TxVector::ofdm(4));
        assert_eq!(TxVector::ofdm(3).control_response(), TxVector::ofdm(2));
        assert_eq!(TxVector::ofdm(1).control_response(), TxVector::ofdm(0));
        // VHT MCS 7 (64-QAM 5/6) → non-HT reference 54 → 24 Mbit/s.
        let v = TxVector { class: PhyClass::Vht, mcs: 7, width_mhz: 20, nss: 1, short_gi: false };
        assert_eq!(v.control_response(), TxVector::ofdm(4));
    }

    #[test]
    fn standards_parse_and_timing() {
        assert_eq!(Standard::parse("802.11ac"), Some(Standard::Ac));
        assert_eq!(Standard::parse("g"), Some(Standard::G));
        assert_eq!(Standard::parse("802.11b"), None);
        let g = Standard::G.timing(Band::Ghz2_4);
        assert_eq!((g.slot.as_nanos(), g.sifs.as_nanos(), g.signal_extension.as_nanos()), (9_000, 10_000, 6_000));
        let a = Standard::A.timing(Band::Ghz5);
        assert_eq!((a.slot.as_nanos(), a.sifs.as_nanos(), a.cw_min, a.cw_max), (9_000, 16_000, 15, 1023));
    }
}
