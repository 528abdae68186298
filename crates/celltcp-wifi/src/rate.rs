//! Rate control: which MCS the next PPDU of a link is sent with.
//!
//! - [`constant`]: one MCS always (ns-3's `ConstantRateWifiManager`).
//! - [`ideal`]: the fastest MCS whose decoded bit error rate at the link's SNR is at most 10⁻⁶
//!   (ns-3's `IdealWifiManager`, which knows the SNR from the receiver).
//! - [`minstrel`]: Minstrel-HT (F. Fietkau's Linux mac80211 `rc80211_minstrel_ht`, the
//!   algorithm ns-3's `MinstrelHtWifiManager` ports): success probabilities per MCS as an
//!   EWMA updated every interval, expected throughput per MCS, a retry chain (best throughput,
//!   second best, best probability, lowest) and look-around sampling of other rates.
//!
//! The trait is small: the coordinator asks [`RateControl::select`] for the vector of the next
//! PPDU (with the number of failed attempts of its head MPDU, so that a retry chain can step
//! down) and reports what became of each PPDU with [`RateControl::report`].

pub mod constant;
pub mod ideal;
pub mod minstrel;

use celltcp_engine::{rng::SimRng, SimTime};

use crate::phy::TxVector;

/// The MCS a link may use: a base vector (PHY class, width, streams, guard interval) and the
/// valid MCS indices for it, slowest first.
#[derive(Clone, Debug)]
pub struct RateSet {
    pub base: TxVector,
    pub mcs: Vec<u8>,
}

impl RateSet {
    /// Every valid MCS of `base`'s class up to `max_mcs`.
    pub fn new(base: TxVector, max_mcs: u8) -> RateSet {
        let mcs = (0..=max_mcs).filter(|&m| TxVector { mcs: m, ..base }.is_valid()).collect();
        RateSet { base, mcs }
    }
    pub fn vector(&self, mcs: u8) -> TxVector {
        TxVector { mcs, ..self.base }
    }
}

/// What every rate controller answers.
pub trait RateControl {
    /// The vector of the next PPDU; `attempt` is the number of failed attempts of its head MPDU.
    fn select(&mut self, now: SimTime, attempt: u32) -> TxVector;
    /// A PPDU sent with `txv` carried `sent` MPDUs of which `acked` were acknowledged
    /// (zero on a collision or when no ACK/block ACK came back).
    fn report(&mut self, _now: SimTime, _txv: TxVector, _sent: u32, _acked: u32) {}
}

/// The rate control a BSS is configured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateKind {
    Constant(u8),
    Ideal,
    Minstrel,
}

/// Closed dispatch over the controllers.
#[derive(Clone, Debug)]
pub enum AnyRate {
    Constant(constant::Constant),
    Ideal(ideal::Ideal),
    Minstrel(minstrel::Minstrel),
}

impl AnyRate {
    /// A controller for a link of `snr_db` carrying MPDUs of about `mpdu_bytes`.
    pub fn new(kind: RateKind, set: RateSet, snr_db: f64, mpdu_bytes: u32, rng: &mut SimRng) -> AnyRate {
        match kind {
            RateKind::Constant(m) => AnyRate::Constant(constant::Constant::new(set.vector(m))),
            RateKind::Ideal => AnyRate::Ideal(ideal::Ideal::new(&set, snr_db)),
            RateKind::Minstrel => AnyRate::Minstrel(minstrel::Minstrel::new(set, mpdu_bytes, rng)),
        }
    }
}

impl RateControl for AnyRate {
    fn select(&mut self, now: SimTime, attempt: u32) -> TxVector {
        match self {
            AnyRate::Constant(r) => r.select(now, attempt),
            AnyRate::Ideal(r) => r.select(now, attempt),
            AnyRate::Minstrel(r) => r.select(now, attempt),
        }
    }
    fn report(&mut self, now: SimTime, txv: TxVector, sent: u32, acked: u32) {
        match self {
            AnyRate::Constant(r) => r.report(now, txv, sent, acked),
            AnyRate::Ideal(r) => r.report(now, txv, sent, acked),
            AnyRate::Minstrel(r) => r.report(now, txv, sent, acked),
        }
    }
}
