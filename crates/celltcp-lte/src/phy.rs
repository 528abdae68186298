//! Physical-layer abstraction for a 1 ms TTI system-level LTE model.
//!
//! Nothing here simulates waveforms: each TTI the link is summarised by an SINR per PRB,
//! which is mapped to an effective SINR (EESM), a channel quality report and a block error
//! probability.
//!
//! - [`tbs`]: MCS tables and the exact transport block size table (TS 36.213 §7.1.7),
//!   bandwidth → PRBs (TS 36.101 Table 5.6-1), resource block groups (TS 36.213 §7.1.6.1).
//! - [`amc`]: CQI table (TS 36.213 Table 7.2.3-1), SINR thresholds and BLER curves per MCS,
//!   CQI ↔ MCS, EESM, HARQ Chase combining.
//! - [`cqi`]: CQI reports (TS 36.213 §7.2): report instants with period and delay, the
//!   wideband value from per-PRB SINRs.
//! - [`channel`]: path loss models (free space, log-distance, Okumura–Hata, COST-231 Hata,
//!   TR 36.814, TR 36.873), thermal noise, log-normal shadowing, received power per PRB.
//! - [`fading`]: EPA/EVA/ETU tapped delay lines (TS 36.104 Annex B.2) with sum-of-sinusoids
//!   Rayleigh taps, evaluated lazily as a function of time.
//! - [`tdd`]: FDD/TDD frame structure (TS 36.211 Table 4.2-2) and the HARQ and scheduling
//!   timing tables of TS 36.213.

pub mod amc;
pub mod channel;
pub mod cqi;
pub mod fading;
pub mod shadowing_map;
pub mod tbs;
pub mod tdd;
