//! iperf3-style interval reports: bytes transferred per interval, bits per second and the
//! sender's retransmissions in that interval, like the lines iperf3 prints every `-i` seconds.

use celltcp_engine::SimTime;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalReport {
    pub start: SimTime,
    pub end: SimTime,
    pub bytes: u64,
    pub bits_per_second: f64,
    pub retransmits: u64,
}

/// Turns cumulative counters sampled at interval boundaries into per-interval reports.
#[derive(Clone, Debug)]
pub struct IntervalMeter {
    last_time: SimTime,
    last_bytes: u64,
    last_retx: u64,
    pub reports: Vec<IntervalReport>,
}

impl IntervalMeter {
    pub fn new(start: SimTime) -> Self {
        IntervalMeter { last_time: start, last_bytes: 0, last_retx: 0, reports: Vec::new() }
    }

    /// Closes the interval ending at `now` given cumulative bytes and retransmissions.
    pub fn tick(&mut self, now: SimTime, bytes_total: u64, retx_total: u64) {
        let dt = (now - self.last_time).as_secs_f64();
        if dt <= 0.0 {
            return;
        }
        let bytes = bytes_total.saturating_sub(self.last_bytes);
        self.reports.push(IntervalReport {
            start: self.last_time,
            end: now,
            bytes,
            bits_per_second: bytes as f64 * 8.0 / dt,
            retransmits: retx_total.saturating_sub(self.last_retx),
        });
        self.last_time = now;
        self.last_bytes = bytes_total;
        self.last_retx = retx_total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_difference_cumulative_counters() {
        let mut m = IntervalMeter::new(SimTime::ZERO);
        m.tick(SimTime::from_secs(1), 1_250_000, 2);
        m.tick(SimTime::from_secs(2), 2_000_000, 2);
        assert_eq!(m.reports[0].bits_per_second, 10e6);
        assert_eq!(m.reports[0].retransmits, 2);
        assert_eq!(m.reports[1].bytes, 750_000);
        assert_eq!(m.reports[1].retransmits, 0);
    }
}
