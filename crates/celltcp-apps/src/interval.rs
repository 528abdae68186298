//! iperf3-style interval reports: bytes transferred per interval, bits per second and the
//! sender's retransmissions in that interval, like the lines iperf3 prints every `-i` seconds.
//! Over UDP (`iperf3 -u`) a report carries, as iperf3's receiver reports do (`iperf_udp.c`,
//! `iperf_api.c`), the datagrams expected in the interval (the highest sequence number seen
//! plus one, differenced), those lost (expected minus received) and the receiver's running
//! jitter estimate (RFC 3550 §6.4.1) at the interval's end. Reports that end within the
//! `-O` omit period are marked `omitted` and, as in iperf3, left out of the test's totals.

use celltcp_engine::{SimDuration, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalReport {
    pub start: SimTime,
    pub end: SimTime,
    pub bytes: u64,
    pub bits_per_second: f64,
    pub retransmits: u64,
    /// UDP: datagrams expected in the interval (sequence numbers covered), and lost of them.
    pub packets: Option<u64>,
    pub lost_packets: Option<u64>,
    /// UDP: the receiver's jitter estimate at the end of the interval.
    pub jitter_ms: Option<f64>,
    /// Within iperf3's `-O` omit period (not counted in the test's totals).
    pub omitted: bool,
}

/// Turns cumulative counters sampled at interval boundaries into per-interval reports.
#[derive(Clone, Debug)]
pub struct IntervalMeter {
    last_time: SimTime,
    last_bytes: u64,
    last_retx: u64,
    last_packets: u64,
    last_lost: u64,
    /// The end of the `-O` omit period (the start when nothing is omitted).
    pub omit_until: SimTime,
    pub reports: Vec<IntervalReport>,
}

impl IntervalMeter {
    pub fn new(start: SimTime) -> Self {
        IntervalMeter { last_time: start, last_bytes: 0, last_retx: 0, last_packets: 0, last_lost: 0, omit_until: start, reports: Vec::new() }
    }

    /// A meter whose reports up to `omit_until` are marked omitted (`iperf3 -O`).
    pub fn with_omit(start: SimTime, omit_until: SimTime) -> Self {
        IntervalMeter { omit_until, ..IntervalMeter::new(start) }
    }

    /// When the interval that starts at `now` ends: `now + interval`, cut at the end of the omit
    /// period (iperf3 restarts its interval timer when the omitted part ends).
    pub fn next_tick(&self, now: SimTime, interval: SimDuration) -> SimTime {
        let next = now + interval;
        if now < self.omit_until && next > self.omit_until {
            self.omit_until
        } else {
            next
        }
    }

    /// Closes the interval ending at `now` given cumulative bytes and retransmissions.
    pub fn tick(&mut self, now: SimTime, bytes_total: u64, retx_total: u64) {
        self.push(now, bytes_total, retx_total, None);
    }

    /// Closes the interval ending at `now` of a UDP flow, given the receiver's cumulative bytes,
    /// datagrams expected (highest sequence number + 1), datagrams lost, and its jitter.
    pub fn tick_udp(&mut self, now: SimTime, bytes_total: u64, expected_total: u64, lost_total: u64, jitter_ms: f64) {
        self.push(now, bytes_total, 0, Some((expected_total, lost_total, jitter_ms)));
    }

    fn push(&mut self, now: SimTime, bytes_total: u64, retx_total: u64, udp: Option<(u64, u64, f64)>) {
        let dt = (now - self.last_time).as_secs_f64();
        if dt <= 0.0 {
            return;
        }
        let bytes = bytes_total.saturating_sub(self.last_bytes);
        let (last_packets, last_lost) = (self.last_packets, self.last_lost);
        self.reports.push(IntervalReport {
            start: self.last_time,
            end: now,
            bytes,
            bits_per_second: bytes as f64 * 8.0 / dt,
            retransmits: retx_total.saturating_sub(self.last_retx),
            packets: udp.map(|(p, _, _)| p.saturating_sub(last_packets)),
            lost_packets: udp.map(|(_, l, _)| l.saturating_sub(last_lost)),
            jitter_ms: udp.map(|(_, _, j)| j),
            omitted: now <= self.omit_until,
        });
        self.last_time = now;
        self.last_bytes = bytes_total;
        self.last_retx = retx_total;
        if let Some((p, l, _)) = udp {
            self.last_packets = p;
            self.last_lost = l;
        }
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
        assert!(!m.reports[0].omitted && m.reports[0].packets.is_none());
    }

    #[test]
    fn omit_marks_the_first_intervals_and_restarts_the_timer() {
        // iperf3 -O 1.5 -i 1: reports at 1 s and 1.5 s are omitted, then 2.5 s, 3.5 s, ...
        let t = |ms| SimTime::from_millis(ms);
        let iv = SimDuration::from_secs(1);
        let mut m = IntervalMeter::with_omit(SimTime::ZERO, t(1500));
        assert_eq!(m.next_tick(SimTime::ZERO, iv), t(1000));
        assert_eq!(m.next_tick(t(1000), iv), t(1500));
        assert_eq!(m.next_tick(t(1500), iv), t(2500));
        for (k, now) in [1000, 1500, 2500].into_iter().enumerate() {
            m.tick(t(now), 1000 * (k as u64 + 1), 0);
        }
        let omitted: Vec<bool> = m.reports.iter().map(|r| r.omitted).collect();
        assert_eq!(omitted, [true, true, false]);
        assert_eq!(m.reports[1].bits_per_second, 1000.0 * 8.0 / 0.5);
    }

    #[test]
    fn udp_intervals_difference_expected_and_lost_datagrams() {
        let mut m = IntervalMeter::new(SimTime::ZERO);
        m.tick_udp(SimTime::from_secs(1), 100 * 1448, 100, 0, 0.1);
        m.tick_udp(SimTime::from_secs(2), 190 * 1448, 200, 10, 0.2);
        let r = m.reports[1];
        assert_eq!((r.packets, r.lost_packets, r.jitter_ms), (Some(100), Some(10), Some(0.2)));
        assert_eq!(r.bytes, 90 * 1448);
    }
}
