//! Constant rate: every PPDU of the link with the same vector (ns-3's
//! `ConstantRateWifiManager`).

use celltcp_engine::SimTime;

use super::RateControl;
use crate::phy::TxVector;

#[derive(Clone, Debug)]
pub struct Constant {
    txv: TxVector,
}

impl Constant {
    pub fn new(txv: TxVector) -> Constant {
        Constant { txv }
    }
}

impl RateControl for Constant {
    fn select(&mut self, _now: SimTime, _attempt: u32) -> TxVector {
        self.txv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_never_changes() {
        let mut c = Constant::new(TxVector::ofdm(5));
        c.report(SimTime::ZERO, TxVector::ofdm(5), 1, 0);
        assert_eq!(c.select(SimTime::from_secs(1), 6), TxVector::ofdm(5));
    }
}
