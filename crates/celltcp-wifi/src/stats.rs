//! Counters of a BSS: per link direction of each station and for the whole channel. They are
//! cumulative; a caller samples them to make time series (airtime per station over time, channel
//! busy time per interval).

use celltcp_engine::{SimDuration, SimTime};

/// One direction of one station's link (AP → station or station → AP).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    /// MSDUs accepted into the transmit queue, and their bytes.
    pub enqueued_pkts: u64,
    pub enqueued_bytes: u64,
    /// MSDUs refused because the queue was full.
    pub queue_drops: u64,
    /// MSDUs passed up at the receiver (once each, in order), and their bytes.
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// MSDUs discarded at the retry limit.
    pub retry_drops: u64,
    /// MPDU transmissions, first and repeated, and the repeated ones alone (MAC retries).
    pub mpdu_tx: u64,
    pub mpdu_retx: u64,
    /// PPDUs sent, PPDUs lost to a collision, and PPDUs that got no ACK/block ACK otherwise.
    pub ppdu_tx: u64,
    pub collisions: u64,
    pub ppdu_failed: u64,
    /// A-MPDUs (PPDUs with a block ACK) and the MPDUs they carried (mean aggregation size =
    /// `ampdu_mpdus / ampdus`).
    pub ampdus: u64,
    pub ampdu_mpdus: u64,
    /// Queueing delay (enqueue → first transmission attempt), summed over MSDUs, and the count.
    pub queue_delay_ns_sum: u64,
    pub queue_delay_n: u64,
    /// MAC delay (enqueue → delivery at the receiver), summed over delivered MSDUs.
    pub mac_delay_ns_sum: u64,
    /// Airtime of this direction's exchanges (from the first PPDU's start to the end of the
    /// ACK/block ACK, or of the failed PPDU).
    pub airtime_ns: u64,
    /// PPDUs per MCS index.
    pub mcs_hist: [u64; 10],
}

impl LinkStats {
    /// Goodput in bit/s of the MSDU bytes delivered over `elapsed`.
    pub fn goodput_bps(&self, elapsed: SimDuration) -> f64 {
        if elapsed.as_nanos() == 0 {
            0.0
        } else {
            self.delivered_bytes as f64 * 8.0 / elapsed.as_secs_f64()
        }
    }
    /// Mean MPDUs per A-MPDU.
    pub fn mean_ampdu_mpdus(&self) -> f64 {
        if self.ampdus == 0 {
            0.0
        } else {
            self.ampdu_mpdus as f64 / self.ampdus as f64
        }
    }
    /// Mean queueing delay, seconds.
    pub fn mean_queue_delay_s(&self) -> f64 {
        if self.queue_delay_n == 0 {
            0.0
        } else {
            self.queue_delay_ns_sum as f64 * 1e-9 / self.queue_delay_n as f64
        }
    }
}

/// A station's two directions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StaStats {
    /// AP → station.
    pub down: LinkStats,
    /// Station → AP.
    pub up: LinkStats,
}

impl StaStats {
    /// Airtime of both directions.
    pub fn airtime_ns(&self) -> u64 {
        self.down.airtime_ns + self.up.airtime_ns
    }
}

/// The channel as a whole.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BssStats {
    /// Time some PPDU (data, control, or colliding frames) was on the air.
    pub busy_ns: u64,
    /// Exchanges started, and those that were collisions (two or more transmitters in the same
    /// slot).
    pub txops: u64,
    pub collisions: u64,
    /// Time of the last event the BSS processed.
    pub last_event: SimTime,
}

impl BssStats {
    /// Share of `elapsed` the channel was busy.
    pub fn busy_fraction(&self, elapsed: SimDuration) -> f64 {
        if elapsed.as_nanos() == 0 {
            0.0
        } else {
            self.busy_ns as f64 / elapsed.as_nanos() as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_figures() {
        let l = LinkStats { delivered_bytes: 1_250_000, ampdus: 4, ampdu_mpdus: 10, queue_delay_ns_sum: 3_000_000, queue_delay_n: 3, ..Default::default() };
        assert_eq!(l.goodput_bps(SimDuration::from_secs(1)), 10e6);
        assert_eq!(l.mean_ampdu_mpdus(), 2.5);
        assert!((l.mean_queue_delay_s() - 1e-3).abs() < 1e-12);
        let b = BssStats { busy_ns: 250, ..Default::default() };
        assert_eq!(b.busy_fraction(SimDuration::from_nanos(1000)), 0.25);
    }
}
