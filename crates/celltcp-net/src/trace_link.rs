//! Trace-driven links in the Mahimahi format (K. Netravali et al., "Mahimahi: Accurate
//! Record-and-Replay for HTTP", USENIX ATC 2015, §3 `mm-link`; traces from Winstein et al.,
//! "Stochastic Forecasts Achieve High Throughput and Low Delay over Cellular Networks", NSDI 2013).
//!
//! A trace file holds one non-decreasing integer per line: a time in milliseconds at which the
//! link may deliver one MTU-sized packet (a *delivery opportunity*); a timestamp repeated `k` times
//! is `k` opportunities in that millisecond. The file `1` is a link of one 1500-byte packet per
//! millisecond, 12 Mbit/s. The semantics follow `mm-link` (`link_queue.cc`):
//!
//! - The trace repeats: after the last line the schedule restarts, offset by the last timestamp,
//!   so the period is the last timestamp (which must be non-zero).
//! - Each opportunity carries `mtu` bytes (`mm-link` uses 1504, its TUN payload size; here the
//!   IPv4 MTU of the config, 1500 by default, as the trace README describes). A packet may use
//!   parts of several opportunities: a packet in transit keeps the bytes it still needs across
//!   opportunities, and the surplus of an opportunity after a packet completes goes to the next
//!   queued packet. Bytes of an opportunity that no queued packet can use are lost, never banked.
//! - An opportunity at time `t` serves only packets that arrived before `t` (`mm-link` burns
//!   opportunities up to the present before queueing an arrival).
//! - A packet leaves at the opportunity that completes it (`tx_end`), and reaches the far end
//!   `delay` later (`mm-delay` in series).
//!
//! The schedule is anchored at simulated time zero. The same sans-IO calls as [`crate::link::Link`]:
//! [`TraceLink::enqueue`] returns the time of the next opportunity when the link was idle (it
//! never delivers at once: its `out` argument, there for the common API, stays untouched), and
//! [`TraceLink::service`] runs the opportunities due at `now`, pushes the packets they complete,
//! and returns the next opportunity while packets remain.

use celltcp_engine::{SimDuration, SimRng, SimTime};
use serde::{Deserialize, Serialize};

use crate::link::{Delivery, LinkStats};
use crate::loss::LossModel;
use crate::packet::Packet;
use crate::queue::AnyQueue;

const NS_PER_MS: u64 = 1_000_000;

/// A trace link's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceLinkConfig {
    /// Delivery opportunities, milliseconds from the start of the trace, non-decreasing; the last
    /// one (> 0) is the period.
    pub opportunities_ms: Vec<u64>,
    /// One-way propagation delay added after the trace link.
    pub delay: SimDuration,
    /// Bytes per opportunity and largest packet, bytes.
    pub mtu: u32,
}

impl TraceLinkConfig {
    /// Checks the schedule as [`parse_mahimahi`] does, and the MTU.
    pub fn validate(&self) -> Result<(), String> {
        let o = &self.opportunities_ms;
        if o.is_empty() {
            return Err("trace link: empty trace".into());
        }
        if let Some(i) = o.windows(2).position(|w| w[1] < w[0]) {
            return Err(format!("trace link: timestamp {} at index {} decreases", o[i + 1], i + 1));
        }
        if o.last() == Some(&0) {
            return Err("trace link: trace must last a non-zero time".into());
        }
        if self.mtu < 68 {
            return Err(format!("trace link: mtu must be at least 68 bytes, got {}", self.mtu));
        }
        Ok(())
    }
}

/// The largest timestamp a trace may hold: a quarter of the clock's range (u64 nanoseconds), so
/// that the times of its repetitions within a run cannot overflow.
pub const MAX_TIMESTAMP_MS: u64 = u64::MAX / 1_000_000 / 4;

/// Parses a Mahimahi trace: one integer millisecond timestamp per line, non-decreasing, at least
/// one line, ending after time zero. Errors name the 1-based line. Surrounding whitespace and a
/// final newline are accepted; blank lines are not (as in `mm-link`).
pub fn parse_mahimahi(text: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.trim().is_empty() {
        return Err("empty trace: no timestamps".into());
    }
    for (i, line) in text.split('\n').enumerate() {
        let line_no = i + 1;
        let s = line.trim();
        if s.is_empty() {
            return Err(format!("line {line_no}: empty line"));
        }
        let ms: u64 = s.parse().map_err(|_| format!("line {line_no}: not a millisecond timestamp: {s:?}"))?;
        if ms > MAX_TIMESTAMP_MS {
            return Err(format!("line {line_no}: timestamp {ms} ms is beyond the clock (at most {MAX_TIMESTAMP_MS} ms, about 146 years)"));
        }
        if let Some(&prev) = out.last() {
            if ms < prev {
                return Err(format!("line {line_no}: timestamp {ms} is before the previous one ({prev})"));
            }
        }
        out.push(ms);
    }
    if out.last() == Some(&0) {
        return Err("trace must last a non-zero time (last timestamp is 0)".into());
    }
    Ok(out)
}

/// The packet taking bytes from the opportunities.
#[derive(Clone, Copy, Debug)]
struct InTransit {
    pkt: Packet,
    /// When it entered the link's queue; it may use only later opportunities.
    arrived: SimTime,
    /// First opportunity that gave it bytes.
    tx_start: Option<SimTime>,
    /// Bytes it still needs.
    remaining: u32,
}

/// Opportunity counters of a trace link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Opportunities processed while packets were waiting (idle ones are skipped, not counted).
    pub busy_opportunities: u64,
    /// Bytes of opportunities that carried packet bytes.
    pub used_bytes: u64,
}

/// A link whose capacity follows a Mahimahi trace.
#[derive(Clone, Debug)]
pub struct TraceLink {
    cfg: TraceLinkConfig,
    queue: AnyQueue,
    loss: LossModel,
    rng: SimRng,
    period_ns: u64,
    /// Global index of the next unused opportunity: trace line `next % len` of cycle `next / len`.
    next: u64,
    tx: Option<InTransit>,
    /// The pending service call, if any.
    scheduled: Option<SimTime>,
    stats: LinkStats,
    trace_stats: TraceStats,
}

impl TraceLink {
    pub fn new(cfg: TraceLinkConfig, mut queue: AnyQueue, loss: LossModel, rng: SimRng) -> Self {
        assert!(!cfg.opportunities_ms.is_empty(), "empty trace");
        assert!(cfg.opportunities_ms.windows(2).all(|w| w[0] <= w[1]), "trace timestamps must not decrease");
        let last = *cfg.opportunities_ms.last().unwrap_or(&0);
        assert!(last > 0, "trace must last a non-zero time");
        let period_ns = last * NS_PER_MS;
        queue.set_link_rate(Self::rate_of(&cfg));
        TraceLink {
            cfg,
            queue,
            loss,
            rng,
            period_ns,
            next: 0,
            tx: None,
            scheduled: None,
            stats: LinkStats::default(),
            trace_stats: TraceStats::default(),
        }
    }

    fn rate_of(cfg: &TraceLinkConfig) -> u64 {
        let period_ms = cfg.opportunities_ms.last().copied().unwrap_or(1).max(1);
        cfg.opportunities_ms.len() as u64 * cfg.mtu as u64 * 8 * 1000 / period_ms
    }

    /// Long-run capacity, bits per second: `opportunities · mtu · 8 / period`.
    pub fn mean_rate_bps(&self) -> u64 {
        Self::rate_of(&self.cfg)
    }

    pub fn config(&self) -> &TraceLinkConfig {
        &self.cfg
    }

    /// Time of opportunity `g` (global index).
    #[inline]
    fn time_of(&self, g: u64) -> SimTime {
        let len = self.cfg.opportunities_ms.len() as u64;
        SimTime((g / len) * self.period_ns + self.cfg.opportunities_ms[(g % len) as usize] * NS_PER_MS)
    }

    /// Number of opportunities at or before `now` since time zero.
    fn opportunities_through(&self, now: SimTime) -> u64 {
        let len = self.cfg.opportunities_ms.len() as u64;
        let cycles = now.as_nanos() / self.period_ns;
        let within_ns = now.as_nanos() % self.period_ns;
        let within = self.cfg.opportunities_ms.partition_point(|&ms| ms * NS_PER_MS <= within_ns) as u64;
        cycles * len + within
    }

    /// Offers a packet; returns the next opportunity when the link was idle (a service call is
    /// then due). `out` is not used: a trace link delivers only at opportunities.
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Delivery>) -> Option<SimTime> {
        self.try_enqueue(now, pkt, out).unwrap_or(None)
    }

    /// As [`TraceLink::enqueue`], but hands back a packet the queue dropped.
    pub fn try_enqueue(&mut self, now: SimTime, pkt: Packet, _out: &mut Vec<Delivery>) -> Result<Option<SimTime>, Packet> {
        debug_assert!(
            pkt.size() <= self.cfg.mtu,
            "packet of {} B over a {} B MTU trace link",
            pkt.size(),
            self.cfg.mtu
        );
        self.queue.enqueue(now, pkt, &mut self.rng)?;
        if self.scheduled.is_some() {
            return Ok(None);
        }
        // Idle: opportunities up to now passed unused (not banked).
        self.next = self.next.max(self.opportunities_through(now));
        let t = self.time_of(self.next);
        self.scheduled = Some(t);
        Ok(Some(t))
    }

    /// Runs the opportunities due at `now` (the time the previous call returned), pushes the
    /// packets they complete, and returns the next opportunity while packets remain.
    #[inline]
    pub fn service(&mut self, now: SimTime, out: &mut Vec<Delivery>) -> Option<SimTime> {
        self.service_with_drops(now, out, &mut Vec::new())
    }

    /// As [`TraceLink::service`], also pushing to `drops` the packets the queue dropped at
    /// dequeue (CoDel).
    pub fn service_with_drops(
        &mut self,
        now: SimTime,
        out: &mut Vec<Delivery>,
        drops: &mut Vec<Packet>,
    ) -> Option<SimTime> {
        debug_assert_eq!(self.scheduled, Some(now), "TraceLink::service called at the wrong time");
        self.scheduled = None;
        while self.time_of(self.next) <= now {
            let t = self.time_of(self.next);
            self.next += 1;
            self.run_opportunity(t, out, drops);
        }
        if self.tx.is_some() || !self.queue.is_empty() {
            let t = self.time_of(self.next);
            self.scheduled = Some(t);
            Some(t)
        } else {
            None
        }
    }

    fn run_opportunity(&mut self, t: SimTime, out: &mut Vec<Delivery>, drops: &mut Vec<Packet>) {
        let mut budget = self.cfg.mtu;
        let mut used = false;
        while budget > 0 {
            if self.tx.is_none() {
                let Some(d) = self.queue.dequeue_into(t, drops) else { break };
                let arrived = t - d.sojourn;
                self.tx = Some(InTransit { pkt: d.pkt, arrived, tx_start: None, remaining: d.pkt.size() });
            }
            let Some(tr) = self.tx.as_mut() else { break };
            if tr.arrived >= t {
                // Arrived at this very instant: the opportunity was already burning.
                break;
            }
            used = true;
            tr.tx_start.get_or_insert(t);
            let take = budget.min(tr.remaining);
            tr.remaining -= take;
            budget -= take;
            if tr.remaining == 0 {
                let tr = *tr;
                self.tx = None;
                self.deliver(tr, t, out);
            }
        }
        if used {
            self.trace_stats.busy_opportunities += 1;
            self.trace_stats.used_bytes += (self.cfg.mtu - budget) as u64;
        }
    }

    fn deliver(&mut self, tr: InTransit, t: SimTime, out: &mut Vec<Delivery>) {
        let lost = self.loss.lose(&mut self.rng);
        let size = tr.pkt.size() as u64;
        let tx_start = tr.tx_start.unwrap_or(t);
        let s = &mut self.stats;
        s.tx_pkts += 1;
        s.tx_bytes += size;
        s.busy_ns += (t - tx_start).as_nanos();
        if lost {
            s.lost_pkts += 1;
            s.lost_bytes += size;
        }
        out.push(Delivery { tx_start, tx_end: t, arrive_at: t + self.cfg.delay, lost, pkt: tr.pkt });
    }

    pub fn busy(&self) -> bool {
        self.scheduled.is_some()
    }
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.scheduled
    }
    /// Queued packets, not counting one partly sent.
    pub fn queue_len_pkts(&self) -> usize {
        self.queue.len_pkts()
    }
    pub fn queue_len_bytes(&self) -> u64 {
        self.queue.len_bytes()
    }
    pub fn queue(&self) -> &AnyQueue {
        &self.queue
    }
    /// Link counters; `busy_ns` sums each packet's time from its first to its last opportunity.
    pub fn stats(&self) -> LinkStats {
        LinkStats { queue: self.queue.stats(), ..self.stats }
    }
    pub fn trace_stats(&self) -> TraceStats {
        self.trace_stats
    }
    /// Fraction of the opportunity bytes offered in `[0, now]` that carried packet bytes.
    pub fn utilisation(&self, now: SimTime) -> f64 {
        let offered = self.opportunities_through(now) * self.cfg.mtu as u64;
        if offered == 0 {
            0.0
        } else {
            self.trace_stats.used_bytes as f64 / offered as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossConfig;
    use crate::packet::{Body, Ipv4, UdpDatagram};
    use crate::queue::{QueueConfig, QueueLimit};
    use celltcp_engine::component_rng;

    fn udp(uid: u64, size: u32) -> Packet {
        let b = Body::Udp(UdpDatagram { payload_len: size - 28, ..Default::default() });
        Packet::new(uid, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0, SimTime::ZERO, b)
    }

    fn trace_link(trace: &str, delay_ms: u64) -> TraceLink {
        let cfg = TraceLinkConfig {
            opportunities_ms: parse_mahimahi(trace).unwrap(),
            delay: SimDuration::from_millis(delay_ms),
            mtu: 1500,
        };
        let q = AnyQueue::new(&QueueConfig::DropTail { limit: QueueLimit::Packets(100_000) });
        TraceLink::new(cfg, q, LossModel::new(LossConfig::None), component_rng(1, 3))
    }

    /// Offers `pkts` at their times and runs the link until `until`, collecting deliveries.
    fn run(l: &mut TraceLink, pkts: &[(SimTime, Packet)], until: SimTime) -> Vec<Delivery> {
        let mut out = Vec::new();
        let mut next: Option<SimTime> = None;
        let mut i = 0;
        loop {
            let arrival = pkts.get(i).map(|p| p.0);
            // Arrivals first at equal times (the link must not let them use that opportunity).
            match (arrival, next) {
                (Some(a), n) if !matches!(n, Some(n) if a > n) => {
                    if let Some(t) = l.enqueue(a, pkts[i].1, &mut out) {
                        next = Some(t);
                    }
                    i += 1;
                }
                (_, Some(n)) if n <= until => next = l.service(n, &mut out),
                _ => break,
            }
        }
        out
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn parse_accepts_mahimahi_and_names_bad_lines() {
        // One non-decreasing integer per line; errors carry the line number.
        assert_eq!(parse_mahimahi("1\n").unwrap(), vec![1]);
        assert_eq!(parse_mahimahi("0\n3\n3\n7").unwrap(), vec![0, 3, 3, 7]);
        assert_eq!(parse_mahimahi("1\r\n2\r\n").unwrap(), vec![1, 2]);
        assert!(parse_mahimahi("").unwrap_err().contains("empty"));
        assert!(parse_mahimahi("1\n2\nx\n").unwrap_err().starts_with("line 3"));
        assert!(parse_mahimahi("5\n4\n").unwrap_err().starts_with("line 2"));
        assert!(parse_mahimahi("1\n\n2\n").unwrap_err().starts_with("line 2"));
        assert!(parse_mahimahi("0\n0\n").unwrap_err().contains("non-zero"));
        assert!(parse_mahimahi("1\n18446744073709551615\n").unwrap_err().starts_with("line 2: timestamp 18446744073709551615 ms is beyond the clock"));
    }

    #[test]
    fn trace_one_per_ms_carries_12_mbit() {
        // README: a file containing just "1" is one MTU packet per millisecond, i.e. 12 Mbit/s.
        let mut l = trace_link("1\n", 0);
        assert_eq!(l.mean_rate_bps(), 12_000_000);
        let pkts: Vec<_> = (0..2000).map(|i| (SimTime::ZERO, udp(i, 1500))).collect();
        let out = run(&mut l, &pkts, ms(1000));
        // Opportunities at 1, 2, ..., 1000 ms: 1000 packets of 1500 B in one second.
        assert_eq!(out.len(), 1000);
        let bits: u64 = out.iter().map(|d| d.pkt.size() as u64 * 8).sum();
        assert_eq!(bits, 12_000_000);
        assert_eq!(out[0].tx_end, ms(1));
        assert_eq!(out[999].tx_end, ms(1000));
        assert!((l.utilisation(ms(1000)) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn trace_wraps_around_offset_by_the_last_timestamp() {
        // mm-link repeats the schedule, adding the last timestamp each time: "2 2 5" gives
        // opportunities at 2, 2, 5, 7, 7, 10, 12, 12, 15 ...
        let mut l = trace_link("2\n2\n5\n", 3);
        let pkts: Vec<_> = (0..9).map(|i| (SimTime::ZERO, udp(i, 1500))).collect();
        let out = run(&mut l, &pkts, ms(100));
        let ends: Vec<u64> = out.iter().map(|d| d.tx_end.as_nanos() / 1_000_000).collect();
        assert_eq!(ends, vec![2, 2, 5, 7, 7, 10, 12, 12, 15]);
        // Arrival at the far end is the completing opportunity plus the delay.
        assert_eq!(out[3].arrive_at, ms(10));
    }

    #[test]
    fn trace_idle_opportunities_are_not_banked() {
        // Opportunities with nothing queued are lost: after 100 ms idle, a burst of 5 packets still
        // leaves one per millisecond, and an arrival at exactly an opportunity cannot use it.
        let mut l = trace_link("1\n", 0);
        let pkts: Vec<_> = (0..5).map(|i| (ms(100), udp(i, 1500))).collect();
        let out = run(&mut l, &pkts, ms(1000));
        let ends: Vec<u64> = out.iter().map(|d| d.tx_end.as_nanos() / 1_000_000).collect();
        assert_eq!(ends, vec![101, 102, 103, 104, 105]);
        assert!((l.utilisation(ms(200)) - 5.0 / 200.0).abs() < 1e-12);
    }

    #[test]
    fn trace_small_packets_share_and_large_ones_span_opportunities() {
        // mm-link: the surplus of an opportunity goes to the next queued packet; a packet keeps the
        // bytes it still needs across opportunities. 1000 B packets on 1500 B opportunities: 3
        // packets every 2 opportunities.
        let mut l = trace_link("1\n", 0);
        let pkts: Vec<_> = (0..6).map(|i| (SimTime::ZERO, udp(i, 1000))).collect();
        let out = run(&mut l, &pkts, ms(100));
        let ends: Vec<u64> = out.iter().map(|d| d.tx_end.as_nanos() / 1_000_000).collect();
        assert_eq!(ends, vec![1, 2, 2, 3, 4, 4]);
        assert_eq!(out[1].tx_start, ms(1));
        // 100 B packets: 15 per opportunity.
        let mut l = trace_link("1\n", 0);
        let pkts: Vec<_> = (0..30).map(|i| (SimTime::ZERO, udp(i, 100))).collect();
        let out = run(&mut l, &pkts, ms(100));
        assert_eq!(out.iter().filter(|d| d.tx_end == ms(1)).count(), 15);
        assert_eq!(out.iter().filter(|d| d.tx_end == ms(2)).count(), 15);
    }

    #[test]
    fn trace_average_rate_is_opportunities_times_mtu_over_period() {
        // Saturated, a trace delivers opportunities·1500·8/period bits per second over whole periods.
        let trace = "3\n3\n3\n10\n11\n11\n20\n";
        let mut l = trace_link(trace, 0);
        assert_eq!(l.mean_rate_bps(), 7 * 1500 * 8 * 1000 / 20);
        let pkts: Vec<_> = (0..10_000).map(|i| (SimTime::ZERO, udp(i, 1500))).collect();
        let out = run(&mut l, &pkts, ms(20 * 50));
        let bits: u64 = out.iter().map(|d| d.pkt.size() as u64 * 8).sum();
        assert_eq!(bits as f64 / 1.0, l.mean_rate_bps() as f64);
        assert_eq!(out.len(), 7 * 50);
    }
}
