//! LTE radio access and EPC at 1 ms TTI granularity (system-level model).
//!
//! Layer tour, bottom up:
//! - [`phy`]: channel (path loss, shadowing, fast fading), SINR per PRB, CQI for a 10 % BLER
//!   target (TS 36.213 §7.2.3), MCS and transport block size (TS 36.213 §7.1.7), block error
//!   from effective SINR, TDD configurations (TS 36.211 §4.2).
//! - [`mac`]: HARQ (TS 36.321 §5.3.2, §5.4.2) and the MAC schedulers (round robin,
//!   proportional fair, max C/I) over resource block groups (TS 36.213 §7.1.6.1).
//! - [`rlc`]: TM, UM and AM entities (TS 36.322).
//! - [`pdcp`]: PDCP sequence numbering, in-order delivery, discard timer, status report
//!   (TS 36.323).
//! - [`lwa`]: LTE–WLAN aggregation: a split bearer's steering to an LTE or a WLAN leg, link-RTT
//!   probes, and the UE's reordering across the legs (TS 36.300 §22A, TS 36.360).
//!
//! Every protocol entity is sans-IO: methods take `now` and return or push their outputs.

pub mod bearer;
mod enb;
pub mod handover;
pub mod layout;
pub mod lwa;
pub mod mac;
pub mod mobility;
pub mod pdcp;
pub mod phy;
pub mod ran;
pub mod rlc;
pub mod rrc;
mod ue;

/// Link direction: downlink (eNB → UE, PDSCH) or uplink (UE → eNB, PUSCH).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Downlink,
    Uplink,
}
