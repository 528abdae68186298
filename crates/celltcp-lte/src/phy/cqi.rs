//! Channel quality reporting (TS 36.213 §7.2): what the eNB knows of a link's quality, and
//! when.
//!
//! - Downlink: the UE sends a periodic wideband CQI (TS 36.213 §7.2.2, PUCCH mode 1-0) every
//!   `period`; the eNB uses the report taken at the last report instant at or before
//!   `now − delay` (the report's transmission and decoding). The CQI is the highest index of
//!   Table 7.2.3-1 whose MCS would meet the 10 % BLER target at the wideband SINR
//!   ([`amc::cqi_from_sinr_db`]).
//! - Uplink: the eNB measures the SINR itself (sounding reference signals, same period and
//!   delay) and picks the highest MCS meeting the BLER target; the value kept is that MCS + 1
//!   (0: none), so that 0 means "do not schedule" in both directions.
//!
//! The wideband SINR is the linear mean over the PRBs when they are all alike, and the
//! effective (EESM) SINR when they differ, under frequency-selective fading or interference on
//! some PRBs only, which the clean PRBs would otherwise dominate.
//!
//! The channel is a deterministic function of time, so a report taken at an instant can be
//! computed late, when the scheduler first needs it ([`CqiReport`] caches it).

use celltcp_engine::{SimDuration, SimTime};

use super::{amc, channel};
use crate::Direction;

/// One report: its instant, the value and the wideband effective SINR behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CqiReport {
    /// Report instant, ns (`u64::MAX`: none yet).
    pub at_ns: u64,
    /// Downlink: CQI 0..=15. Uplink: MCS + 1 (0: none).
    pub cqi: u8,
    pub eff_sinr_db: f64,
}

impl CqiReport {
    /// No report yet (at the start, and after a handover).
    pub const NONE: CqiReport = CqiReport { at_ns: u64::MAX, cqi: 0, eff_sinr_db: 0.0 };

    /// Whether a report exists.
    pub fn is_some(&self) -> bool {
        self.at_ns != u64::MAX
    }
}

/// The report instant in force at `now`: the last multiple of `period` at or before
/// `now − delay`, in ns.
pub fn report_instant(now: SimTime, period: SimDuration, delay: SimDuration) -> u64 {
    let period = period.as_nanos().max(1);
    let t = now.as_nanos().saturating_sub(delay.as_nanos());
    t / period * period
}

/// The wideband report from the linear SINR of each PRB (`frequency_selective`: the PRBs may
/// differ by fading), with `cfi` control symbols: (value, effective SINR in dB), see the
/// module doc.
pub fn wideband(sinr_lin: &[f64], frequency_selective: bool, cfi: u8, dir: Direction) -> (u8, f64) {
    let n = sinr_lin.len().max(1) as f64;
    let mean_db = channel::linear_to_db(sinr_lin.iter().sum::<f64>() / n);
    let guess = amc::mcs_from_cqi(amc::cqi_from_sinr_db(mean_db, cfi));
    let differ = frequency_selective || sinr_lin.iter().any(|&x| x != sinr_lin[0]);
    let eff = if differ { amc::effective_sinr_db(sinr_lin, guess) } else { mean_db };
    let value = match dir {
        Direction::Downlink => amc::cqi_from_sinr_db(eff, cfi),
        Direction::Uplink => amc::ul_mcs_for_sinr_db(eff).map_or(0, |m| m + 1),
    };
    (value, eff)
}

#[cfg(test)]
mod tests {
    use super::*;

    // TS 36.213 §7.2.2: a report every 5 ms used 4 ms later: at 13 ms the eNB uses the report
    // taken at 5 ms (13 − 4 = 9 → 5); at 14 ms the one of 10 ms.
    #[test]
    fn cqi_report_instant_period_and_delay() {
        let p = SimDuration::from_millis(5);
        let d = SimDuration::from_millis(4);
        let at = |t| report_instant(SimTime::from_millis(t), p, d) / 1_000_000;
        assert_eq!((at(13), at(14), at(3), at(0)), (5, 10, 0, 0));
    }

    // Flat PRBs: the wideband SINR is their value, and the CQI is Table 7.2.3-1's index for
    // it; one PRB much worse pulls the EESM value below the linear mean.
    #[test]
    fn cqi_wideband_flat_and_selective() {
        let flat = vec![channel::db_to_linear(10.0); 25];
        let (cqi, eff) = wideband(&flat, false, 3, Direction::Downlink);
        assert!((eff - 10.0).abs() < 1e-9);
        assert_eq!(cqi, amc::cqi_from_sinr_db(10.0, 3));
        let mut sel = flat.clone();
        sel[0] = channel::db_to_linear(-10.0);
        let mean_db = channel::linear_to_db(sel.iter().sum::<f64>() / 25.0);
        let (_, eff_sel) = wideband(&sel, false, 3, Direction::Downlink);
        assert!(eff_sel < mean_db, "EESM {eff_sel} below the linear mean {mean_db}");
        let (ul, _) = wideband(&flat, false, 3, Direction::Uplink);
        assert_eq!(ul, amc::ul_mcs_for_sinr_db(10.0).map_or(0, |m| m + 1));
        assert!(!CqiReport::NONE.is_some());
    }
}
