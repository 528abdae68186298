//! Ideal rate control: the fastest MCS whose decoded bit error rate at the link's SNR is at most
//! 10⁻⁶, as ns-3's `IdealWifiManager` (attribute `BerThreshold`, default 10⁻⁶) picks it from
//! the SNR the receiver reports. The channel is static, so the choice is made once per link.

use celltcp_engine::SimTime;

use super::{RateControl, RateSet};
use crate::error::{chunk_success_rate, db_to_linear};
use crate::phy::TxVector;

/// ns-3's `BerThreshold`.
pub const BER_THRESHOLD: f64 = 1e-6;

#[derive(Clone, Debug)]
pub struct Ideal {
    txv: TxVector,
}

impl Ideal {
    pub fn new(set: &RateSet, snr_db: f64) -> Ideal {
        let snr = db_to_linear(snr_db);
        let best = set
            .mcs
            .iter()
            .map(|&m| set.vector(m))
            .filter(|v| chunk_success_rate(v, snr, 1) >= 1.0 - BER_THRESHOLD)
            .max_by(|a, b| a.data_rate_bps().total_cmp(&b.data_rate_bps()))
            .unwrap_or_else(|| set.vector(set.mcs[0]));
        Ideal { txv: best }
    }
    pub fn vector(&self) -> TxVector {
        self.txv
    }
}

impl RateControl for Ideal {
    fn select(&mut self, _now: SimTime, _attempt: u32) -> TxVector {
        self.txv
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::per;

    #[test]
    fn ideal_picks_the_fastest_rate_under_the_ber_threshold() {
        let set = RateSet::new(TxVector::ofdm(0), 7);
        let mut last = 0.0;
        for snr in [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0] {
            let v = Ideal::new(&set, snr).vector();
            // the choice never slows down as the SNR grows, and its 1500-byte PER stays low
            // whenever the slowest rate would itself be usable.
            assert!(v.data_rate_bps() >= last);
            last = v.data_rate_bps();
            if per(&TxVector::ofdm(0), snr, 1500) < 0.01 {
                assert!(per(&v, snr, 1500) < 0.05, "{snr} dB → {v:?}");
            }
            // the next faster rate would break the threshold.
            if v.mcs < 7 {
                let next = TxVector::ofdm(v.mcs + 1);
                assert!(chunk_success_rate(&next, db_to_linear(snr), 1) < 1.0 - BER_THRESHOLD);
            }
        }
        assert_eq!(Ideal::new(&set, 40.0).vector(), TxVector::ofdm(7));
        assert_eq!(Ideal::new(&set, -5.0).vector(), TxVector::ofdm(0));
    }
}
