//! Random Early Detection (S. Floyd, V. Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), 1993), with the "gentle" extension (Floyd 2000, as in ns-3's
//! `RedQueueDisc` `Gentle` attribute) and ECN marking (RFC 3168 §5: an ECN-capable router marks
//! where it would have dropped).
//!
//! On every arrival (paper §4, Fig. 2):
//! - the average queue size is an EWMA, `avg ← (1−w_q)·avg + w_q·q`; after an idle period of length
//!   `t` it is first aged as if `m = t / s` small packets had arrived to an empty queue,
//!   `avg ← (1−w_q)^m·avg`, with `s` the transmission time of a `mean_pkt_size` packet (§4, Fig. 2);
//! - below `min_th` nothing happens; between `min_th` and `max_th` the packet is marked with
//!   `p_b = max_p·(avg−min_th)/(max_th−min_th)`, spaced by the count of packets since the last mark:
//!   `p_a = p_b / (1 − count·p_b)` (§4, §7: inter-mark gaps roughly uniform instead of geometric);
//! - above `max_th` every packet is dropped, except in gentle mode where `p_b` rises linearly from
//!   `max_p` at `max_th` to 1 at `2·max_th`.
//!
//! Thresholds and the average are in the unit of the hard `limit`: packets for
//! [`QueueLimit::Packets`], bytes for [`QueueLimit::Bytes`] (Linux `sch_red` counts bytes; no
//! per-packet byte-mode scaling of `p_b`). With `ecn`, early marks set CE on ECN-capable packets
//! instead of dropping them; forced drops (above `max_th`, or `2·max_th` in gentle mode) and
//! overflow of the hard limit always drop (ns-3's default `UseHardDrop = true`; Linux `sch_red`
//! does this only with the `harddrop` flag).

use celltcp_engine::{SimRng, SimTime};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{mark_ce, Dequeued, Fifo, QueueLimit, QueueStats};
use crate::packet::Packet;

/// RED parameters. Defaults are ns-3's `RedQueueDisc` defaults: 25-packet limit, `min_th` 5,
/// `max_th` 15, `max_p` 1/50, `w_q` 0.002, gentle, mean packet size 500 bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RedConfig {
    /// Hard limit; also sets the unit (packets or bytes) of the thresholds.
    pub limit: QueueLimit,
    /// Lower threshold on the average queue size (limit units), `0 ≤ min_th < max_th`.
    pub min_th: f64,
    /// Upper threshold on the average queue size (limit units).
    pub max_th: f64,
    /// Marking probability at `max_th`, in `(0, 1]`.
    pub max_p: f64,
    /// EWMA weight of the average queue size, in `(0, 1]` (paper §6: 0.002).
    pub w_q: f64,
    /// Gentle mode: probability rises from `max_p` to 1 between `max_th` and `2·max_th`.
    pub gentle: bool,
    /// Mark ECN-capable packets with CE instead of dropping them early.
    pub ecn: bool,
    /// Typical packet size in bytes, used to age the average over idle periods.
    pub mean_pkt_size: u32,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit: QueueLimit::Packets(25),
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.02,
            w_q: 0.002,
            gentle: true,
            ecn: false,
            mean_pkt_size: 500,
        }
    }
}

impl RedConfig {
    /// Checks the ranges documented on the fields.
    pub fn validate(&self) -> Result<(), String> {
        super::validate_limit(self.limit)?;
        if !(self.min_th >= 0.0 && self.min_th < self.max_th) {
            return Err(format!("red: need 0 <= min_th < max_th, got {} and {}", self.min_th, self.max_th));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("red: max_p must be in (0, 1], got {}", self.max_p));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("red: w_q must be in (0, 1], got {}", self.w_q));
        }
        if self.mean_pkt_size == 0 {
            return Err("red: mean_pkt_size must be positive".into());
        }
        Ok(())
    }
}

/// What RED decided for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Accept,
    /// Probabilistic mark or drop.
    Early,
    /// Average above the (gentle) upper bound: drop.
    Forced,
}

#[derive(Clone, Debug)]
pub struct Red {
    pub(crate) fifo: Fifo,
    pub(crate) stats: QueueStats,
    cfg: RedConfig,
    /// Average queue size, in limit units.
    avg: f64,
    /// Packets since the last mark, −1 below `min_th` (paper Fig. 2).
    count: i64,
    /// Start of the current idle period (`q_time`), when the queue is empty.
    idle_since: Option<SimTime>,
    /// Seconds to send a `mean_pkt_size` packet on the link; 0 disables idle aging.
    s_secs: f64,
}

impl Red {
    pub fn new(cfg: RedConfig) -> Self {
        debug_assert!(cfg.min_th < cfg.max_th && cfg.max_p > 0.0 && cfg.w_q > 0.0 && cfg.w_q <= 1.0);
        Red {
            fifo: Fifo::new(),
            stats: QueueStats::default(),
            cfg,
            avg: 0.0,
            count: -1,
            idle_since: Some(SimTime::ZERO),
            s_secs: 0.0,
        }
    }

    /// The link rate, for aging the average over idle periods; without it (rate 0) the average
    /// keeps its value across idle periods.
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        self.s_secs = if rate_bps == 0 { 0.0 } else { self.cfg.mean_pkt_size as f64 * 8.0 / rate_bps as f64 };
    }

    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// The current average queue size, in limit units.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    fn queue_size(&self) -> f64 {
        match self.cfg.limit {
            QueueLimit::Packets(_) => self.fifo.len_pkts() as f64,
            QueueLimit::Bytes(_) => self.fifo.len_bytes() as f64,
        }
    }

    fn update_avg(&mut self, now: SimTime) {
        if let Some(t0) = self.idle_since.take() {
            // Paper §4: while idle the average decays as if m small packets had found the queue empty.
            if self.s_secs > 0.0 {
                let m = now.saturating_since(t0).as_secs_f64() / self.s_secs;
                self.avg *= (1.0 - self.cfg.w_q).powf(m);
            }
        }
        self.avg = (1.0 - self.cfg.w_q) * self.avg + self.cfg.w_q * self.queue_size();
    }

    /// `p_a` from `p_b` with the count spacing of §4 (`count·p_b ≥ 1` marks surely).
    fn early(&mut self, p_b: f64, rng: &mut SimRng) -> Verdict {
        self.count += 1;
        let cp = self.count as f64 * p_b;
        let p_a = if cp >= 1.0 { 1.0 } else { p_b / (1.0 - cp) };
        if rng.gen::<f64>() < p_a {
            self.count = 0;
            Verdict::Early
        } else {
            Verdict::Accept
        }
    }

    fn decide(&mut self, rng: &mut SimRng) -> Verdict {
        let RedConfig { min_th, max_th, max_p, gentle, .. } = self.cfg;
        let avg = self.avg;
        if avg < min_th {
            self.count = -1;
            Verdict::Accept
        } else if avg < max_th {
            let p_b = max_p * (avg - min_th) / (max_th - min_th);
            self.early(p_b, rng)
        } else if gentle && avg < 2.0 * max_th {
            // Gentle RED: linear from max_p at max_th to 1 at 2·max_th.
            let p_b = max_p + (1.0 - max_p) * (avg - max_th) / max_th;
            self.early(p_b, rng)
        } else {
            self.count = 0;
            Verdict::Forced
        }
    }

    pub fn enqueue(&mut self, now: SimTime, mut pkt: Packet, rng: &mut SimRng) -> Result<(), Packet> {
        self.update_avg(now);
        let accept = match self.decide(rng) {
            Verdict::Accept => true,
            Verdict::Early if self.cfg.ecn && mark_ce(&mut pkt) => {
                self.stats.marked_pkts += 1;
                true
            }
            Verdict::Early | Verdict::Forced => false,
        };
        if accept && self.fifo.fits(self.cfg.limit, &pkt) {
            self.stats.enqueued_pkts += 1;
            self.stats.enqueued_bytes += pkt.size() as u64;
            self.fifo.push(now, pkt);
            Ok(())
        } else {
            self.stats.on_drop(&pkt);
            if self.fifo.is_empty() {
                // Still idle; the average has been aged up to now.
                self.idle_since = Some(now);
            }
            Err(pkt)
        }
    }

    pub fn dequeue(&mut self, now: SimTime) -> Option<Dequeued> {
        let d = self.fifo.pop(now)?;
        self.stats.dequeued_pkts += 1;
        self.stats.sojourn_sum_ns += d.sojourn.as_nanos();
        if self.fifo.is_empty() {
            // Paper Fig. 2: "when queue becomes empty, q_time ← time".
            self.idle_since = Some(now);
        }
        Some(d)
    }

    pub fn len_pkts(&self) -> usize {
        self.fifo.len_pkts()
    }
    pub fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
    pub fn stats(&self) -> QueueStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Body, Ecn, Ipv4, UdpDatagram};
    use celltcp_engine::component_rng;

    fn udp(size: u32) -> Packet {
        let b = Body::Udp(UdpDatagram { payload_len: size - 28, ..Default::default() });
        Packet::new(0, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0, SimTime::ZERO, b)
    }

    /// Holds the instantaneous queue at `q` packets and offers `n` arrivals; returns the fraction
    /// dropped (or marked).
    fn early_fraction(red: &mut Red, q: usize, n: usize, pkt: Packet, rng: &mut SimRng) -> f64 {
        while red.len_pkts() < q {
            red.fifo.push(SimTime::ZERO, pkt);
        }
        let before = red.stats();
        for _ in 0..n {
            if red.enqueue(SimTime::ZERO, pkt, rng).is_ok() {
                red.dequeue(SimTime::ZERO);
            }
        }
        let s = red.stats();
        ((s.dropped_pkts - before.dropped_pkts) + (s.marked_pkts - before.marked_pkts)) as f64 / n as f64
    }

    /// The mean gap between marks implied by `p_a = p_b / (1 − count·p_b)` with count reset to 0
    /// at a mark and incremented before each decision: E[X] = Σ_n P(X ≥ n).
    fn expected_fraction(p_b: f64) -> f64 {
        let (mut survive, mut mean) = (1.0, 0.0);
        for k in 1.. {
            mean += survive;
            let cp = k as f64 * p_b;
            let p_a = if cp >= 1.0 { 1.0 } else { p_b / (1.0 - cp) };
            survive *= 1.0 - p_a;
            if survive <= 0.0 {
                break;
            }
        }
        1.0 / mean
    }

    #[test]
    fn red_average_tracks_queue_as_ewma() {
        // Paper §4: avg ← (1−w_q)·avg + w_q·q on every arrival; held at q, avg → q and after n
        // arrivals is q·(1 − (1−w_q)^n).
        let cfg = RedConfig { limit: QueueLimit::Packets(1000), min_th: 500.0, max_th: 900.0, ..Default::default() };
        let mut red = Red::new(cfg);
        let mut rng = component_rng(1, 2);
        early_fraction(&mut red, 10, 1000, udp(1000), &mut rng);
        let expect = 10.0 * (1.0 - 0.998f64.powi(1000));
        assert!((red.avg() - expect).abs() < 1e-9, "{} vs {expect}", red.avg());
        early_fraction(&mut red, 10, 5000, udp(1000), &mut rng);
        assert!((red.avg() - 10.0).abs() < 0.01, "{}", red.avg());
    }

    #[test]
    fn red_average_decays_over_idle_time() {
        // Paper §4: after idle time t, avg ← (1−w_q)^m·avg with m = t/s, s the time to send a
        // mean-size packet (here 1000 B at 8 Mbit/s = 1 ms, so 100 ms idle gives m = 100), then
        // the usual update with q = 0.
        let cfg = RedConfig { limit: QueueLimit::Packets(1000), mean_pkt_size: 1000, ..Default::default() };
        let mut red = Red::new(cfg);
        red.set_link_rate(8_000_000);
        red.avg = 10.0;
        red.idle_since = Some(SimTime::from_millis(50));
        red.enqueue(SimTime::from_millis(150), udp(100), &mut component_rng(1, 1)).unwrap();
        let expect = 10.0 * 0.998f64.powf(100.0) * 0.998;
        assert!((red.avg() - expect).abs() < 1e-9, "{} vs {expect}", red.avg());
        assert!(red.idle_since.is_none());
    }

    #[test]
    fn red_drop_probability_follows_the_curve() {
        // Paper §4: p_b = max_p·(avg−min_th)/(max_th−min_th) between the thresholds, count-spaced;
        // gentle mode p_b = max_p + (1−max_p)(avg−max_th)/max_th up to 2·max_th; none below
        // min_th; all above 2·max_th. With w_q = 1 the average is the queue seen on arrival.
        let cfg = RedConfig {
            limit: QueueLimit::Packets(1000),
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 1.0,
            gentle: true,
            ..Default::default()
        };
        let mut rng = component_rng(7, 3);
        let n = 200_000;
        for (q, p_b) in [(3usize, 0.0), (6, 0.01), (10, 0.05), (14, 0.09), (20, 0.1 + 0.9 * 5.0 / 15.0)] {
            let mut red = Red::new(cfg.clone());
            let got = early_fraction(&mut red, q, n, udp(1000), &mut rng);
            let want = if p_b == 0.0 { 0.0 } else { expected_fraction(p_b) };
            assert!((got - want).abs() <= 0.05 * want + 1e-9, "q={q}: got {got}, want {want}");
            // Uniform spacing roughly doubles the geometric rate p_b (paper §7).
            if p_b > 0.0 && p_b < 0.1 {
                assert!(got > 1.7 * p_b && got < 2.1 * p_b, "q={q}: {got} vs 2·{p_b}");
            }
        }
        let mut red = Red::new(cfg.clone());
        assert_eq!(early_fraction(&mut red, 30, 1000, udp(1000), &mut rng), 1.0);
        let mut red = Red::new(RedConfig { gentle: false, ..cfg });
        assert_eq!(early_fraction(&mut red, 15, 1000, udp(1000), &mut rng), 1.0);
    }

    #[test]
    fn red_ecn_marks_ect_packets_instead_of_dropping() {
        // RFC 3168 §5: an ECN-capable RED router sets CE where it would have dropped early; Not-ECT
        // packets are still dropped; forced drops above the gentle range still drop.
        let cfg = RedConfig { limit: QueueLimit::Packets(1000), max_p: 0.5, w_q: 1.0, ecn: true, ..Default::default() };
        let mut rng = component_rng(3, 3);
        let mut ect = udp(1000);
        ect.ecn = Ecn::Ect0;
        let mut red = Red::new(cfg.clone());
        let f = early_fraction(&mut red, 12, 10_000, ect, &mut rng);
        let s = red.stats();
        assert!(f > 0.2 && s.dropped_pkts == 0 && s.marked_pkts > 0, "{f} {s:?}");
        let mut red = Red::new(cfg.clone());
        early_fraction(&mut red, 12, 10_000, udp(1000), &mut rng);
        assert!(red.stats().dropped_pkts > 0 && red.stats().marked_pkts == 0);
        // Marked packets come out with CE.
        let mut red = Red::new(cfg.clone());
        for _ in 0..12 {
            red.fifo.push(SimTime::ZERO, ect);
        }
        let mut saw_ce = false;
        for _ in 0..100 {
            red.enqueue(SimTime::ZERO, ect, &mut rng).unwrap();
            saw_ce |= red.fifo.buf.back().unwrap().0.ecn == Ecn::Ce;
            red.fifo.buf.pop_back();
            red.fifo.bytes -= 1000;
        }
        assert!(saw_ce);
        let mut red = Red::new(cfg);
        assert_eq!(early_fraction(&mut red, 40, 100, ect, &mut rng), 1.0);
        assert_eq!(red.stats().marked_pkts, 0);
    }

    #[test]
    fn red_bytes_mode_counts_bytes() {
        // Thresholds in bytes compare against the average of the byte backlog.
        let cfg = RedConfig {
            limit: QueueLimit::Bytes(100_000),
            min_th: 5000.0,
            max_th: 15000.0,
            w_q: 1.0,
            gentle: false,
            ..Default::default()
        };
        let mut red = Red::new(cfg);
        let mut rng = component_rng(1, 9);
        // 4 packets of 1000 B: below min_th in bytes, never dropped.
        assert_eq!(early_fraction(&mut red, 4, 1000, udp(1000), &mut rng), 0.0);
        assert_eq!(red.avg(), 4000.0);
        // 16 packets: above max_th, always dropped.
        assert_eq!(early_fraction(&mut red, 16, 100, udp(1000), &mut rng), 1.0);
    }
}
