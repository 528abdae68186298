//! The UE end of a split LWA bearer: PDCP reordering across the LTE and WLAN legs (TS 36.323
//! §5.1.2.1.4, the procedure for a DRB "when the reordering function is used", which LWA and dual
//! connectivity split bearers use; t-Reordering set to 2·max(LRTT of Wi-Fi, LRTT of LTE) as in
//! paper 002 §4).
//!
//! State, in COUNTs (the model carries each PDU's COUNT; a UE derives it from the SN within the
//! reordering window, §5.1.2.1.4.1, which is exact while fewer than half the SN space are in
//! flight, what [`PdcpTx`](crate::pdcp::PdcpTx) already guarantees):
//! - `next_deliver` = `Last_Submitted_PDCP_RX_COUNT` + 1;
//! - `next_rx` = the COUNT after the highest received (`RX_HFN`, `Next_PDCP_RX_SN`);
//! - `reordering_count` = `Reordering_PDCP_RX_COUNT`, with t-Reordering running.
//!
//! On a PDU (§5.1.2.1.4.1): one below `next_deliver` or already stored is discarded (a
//! duplicate, or a late PDU the timer gave up on); else it is stored, and the stored SDUs with
//! consecutive COUNTs from `next_deliver` go up. If t-Reordering runs and the SDU at
//! `reordering_count − 1` has gone up, it stops; if it does not run and SDUs are stored, it
//! starts with `reordering_count = next_rx`. On expiry (§5.1.2.1.4.2): every stored SDU below
//! `reordering_count` goes up (the gaps before it are given up), then the consecutive ones from
//! there; if SDUs are still stored, t-Reordering starts again with `reordering_count = next_rx`.

use std::collections::BTreeMap;

use celltcp_engine::{SimDuration, SimTime};

use super::LwaLeg;
use crate::pdcp::PdcpPdu;

/// Counters of an [`LwaRx`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReorderStats {
    /// PDUs received per leg (index [`LwaLeg`]) and their PDCP PDU bytes.
    pub pdus: [u64; 2],
    pub bytes: [u64; 2],
    /// SDUs delivered up, in order.
    pub delivered: u64,
    /// PDUs discarded as duplicates or as late (below `next_deliver`).
    pub discarded: u64,
    /// t-Reordering expiries.
    pub timeouts: u64,
    /// COUNTs given up by an expiry (never received in time: lost on a leg or too late).
    pub skipped: u64,
    /// Sum and maximum of the time SDUs waited in the reordering buffer, seconds (0 for one
    /// delivered on arrival).
    pub reorder_delay_sum_s: f64,
    pub reorder_delay_max_s: f64,
    /// SDUs that waited (were stored behind a gap).
    pub reordered: u64,
}

impl ReorderStats {
    /// Mean reordering delay over all delivered SDUs, seconds.
    pub fn mean_reorder_delay_s(&self) -> Option<f64> {
        (self.delivered > 0).then(|| self.reorder_delay_sum_s / self.delivered as f64)
    }
}

/// PDCP reordering at the UE across both legs.
#[derive(Clone, Debug)]
pub struct LwaRx<P> {
    next_deliver: u32,
    next_rx: u32,
    /// Stored SDUs by COUNT with their arrival time.
    stored: BTreeMap<u32, (P, SimTime)>,
    /// t-Reordering: (expiry, `Reordering_PDCP_RX_COUNT`).
    timer: Option<(SimTime, u32)>,
    t_reordering: SimDuration,
    /// (leg, COUNT) of every PDU received, for the eNB's LRTT and loss estimates.
    feedback: Vec<(LwaLeg, u32)>,
    /// SDUs discarded (duplicates, late), for the caller to free.
    discarded: Vec<P>,
    stats: ReorderStats,
}

/// `a < b` in COUNT space (modulo 2³²).
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl<P: Copy> LwaRx<P> {
    pub fn new(t_reordering: SimDuration) -> Self {
        LwaRx {
            next_deliver: 0,
            next_rx: 0,
            stored: BTreeMap::new(),
            timer: None,
            t_reordering,
            feedback: Vec::new(),
            discarded: Vec::new(),
            stats: ReorderStats::default(),
        }
    }

    /// The current t-Reordering (a running timer keeps the value it started with).
    pub fn t_reordering(&self) -> SimDuration {
        self.t_reordering
    }

    /// RRC sets a new t-Reordering (here: 2·max(SLRTT) from the eNB's probes).
    pub fn set_t_reordering(&mut self, t: SimDuration) {
        self.t_reordering = t;
    }

    /// A PDU from leg `leg` (§5.1.2.1.4.1). SDUs delivered in order go to `up`.
    pub fn on_pdu(&mut self, now: SimTime, leg: LwaLeg, pdu: PdcpPdu<P>, up: &mut Vec<P>) {
        let i = leg as usize;
        self.stats.pdus[i] += 1;
        self.stats.bytes[i] += u64::from(pdu.bytes);
        self.feedback.push((leg, pdu.count));
        let c = pdu.count;
        if before(c, self.next_deliver) || self.stored.contains_key(&c) {
            self.stats.discarded += 1;
            self.discarded.push(pdu.sdu);
            return;
        }
        if !before(c, self.next_rx) {
            self.next_rx = c.wrapping_add(1);
        }
        self.stored.insert(c, (pdu.sdu, now));
        if c == self.next_deliver {
            self.deliver_consecutive(now, up);
        }
        if let Some((_, rc)) = self.timer {
            // stop when the PDU that triggered it (reordering_count − 1) has gone up
            if !before(self.next_deliver, rc) {
                self.timer = None;
            }
        }
        if self.timer.is_none() && !self.stored.is_empty() {
            self.timer = Some((now + self.t_reordering, self.next_rx));
        }
    }

    fn deliver_one(&mut self, now: SimTime, count: u32, up: &mut Vec<P>) {
        if let Some((sdu, at)) = self.stored.remove(&count) {
            let w = now.saturating_since(at).as_secs_f64();
            self.stats.delivered += 1;
            self.stats.reorder_delay_sum_s += w;
            if w > 0.0 {
                self.stats.reordered += 1;
                self.stats.reorder_delay_max_s = self.stats.reorder_delay_max_s.max(w);
            }
            up.push(sdu);
        }
    }

    fn deliver_consecutive(&mut self, now: SimTime, up: &mut Vec<P>) {
        while self.stored.contains_key(&self.next_deliver) {
            self.deliver_one(now, self.next_deliver, up);
            self.next_deliver = self.next_deliver.wrapping_add(1);
        }
    }

    /// When t-Reordering expires, if it runs.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.timer.map(|t| t.0)
    }

    /// t-Reordering expiry (§5.1.2.1.4.2), if due at `now`.
    pub fn on_timeout(&mut self, now: SimTime, up: &mut Vec<P>) {
        let Some((at, rc)) = self.timer else { return };
        if at > now {
            return;
        }
        self.timer = None;
        self.stats.timeouts += 1;
        // every stored SDU below Reordering_PDCP_RX_COUNT, gaps given up
        while let Some((&c, _)) = self.stored.first_key_value() {
            if !before(c, rc) {
                break;
            }
            self.stats.skipped += u64::from(c.wrapping_sub(self.next_deliver));
            self.deliver_one(now, c, up);
            self.next_deliver = c.wrapping_add(1);
        }
        if before(self.next_deliver, rc) {
            self.stats.skipped += u64::from(rc.wrapping_sub(self.next_deliver));
            self.next_deliver = rc;
        }
        self.deliver_consecutive(now, up);
        if !self.stored.is_empty() {
            self.timer = Some((now + self.t_reordering, self.next_rx));
        }
    }

    /// (leg, COUNT) of the PDUs received since the last call.
    pub fn take_feedback(&mut self, out: &mut Vec<(LwaLeg, u32)>) {
        out.append(&mut self.feedback);
    }

    /// (leg, COUNT) of the PDUs received since the last call, drained.
    pub fn drain_feedback(&mut self) -> std::vec::Drain<'_, (LwaLeg, u32)> {
        self.feedback.drain(..)
    }

    /// SDUs discarded since the last call (duplicates and late PDUs).
    pub fn take_discarded(&mut self, out: &mut Vec<P>) {
        out.append(&mut self.discarded);
    }

    /// SDUs waiting behind a gap.
    pub fn stored(&self) -> usize {
        self.stored.len()
    }

    pub fn stats(&self) -> &ReorderStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lwa::{LwaConfig, LwaTx, SteeringKind};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn pdu(count: u32) -> PdcpPdu<u32> {
        PdcpPdu { sn: count & 4095, count, sdu: count, sdu_bytes: 100, bytes: 102 }
    }

    const MS: SimDuration = SimDuration::from_millis(1);

    // §5.1.2.1.4.2: a gap waits exactly t-Reordering: one tick before, nothing; at expiry the
    // SDUs behind it go up and the gap is counted skipped.
    #[test]
    fn reorder_gap_waits_exactly_t_reordering() {
        let t = SimDuration::from_millis(24); // 2·max(LRTT) with LRTTs 12 and 4 ms
        let mut rx = LwaRx::<u32>::new(t);
        let mut up = Vec::new();
        let t0 = SimTime::from_millis(100);
        rx.on_pdu(t0, LwaLeg::Lte, pdu(0), &mut up);
        assert_eq!(up, [0]);
        rx.on_pdu(t0, LwaLeg::Wlan, pdu(2), &mut up);
        rx.on_pdu(t0 + MS, LwaLeg::Wlan, pdu(3), &mut up);
        assert_eq!(rx.next_deadline(), Some(t0 + t), "started by the first PDU after the gap");
        rx.on_timeout(t0 + t - SimDuration::from_nanos(1), &mut up);
        assert_eq!(up, [0], "not yet");
        rx.on_timeout(t0 + t, &mut up);
        assert_eq!(up, [0, 2, 3]);
        assert_eq!((rx.stats().timeouts, rx.stats().skipped), (1, 1));
        assert!((rx.stats().reorder_delay_max_s - t.as_secs_f64()).abs() < 1e-12);
        // the lost PDU turns up late: discarded, not delivered
        rx.on_pdu(t0 + t + MS, LwaLeg::Lte, pdu(1), &mut up);
        assert_eq!(up, [0, 2, 3]);
        assert_eq!(rx.stats().discarded, 1);
        assert_eq!(rx.next_deadline(), None);
    }

    // The gap filled in time: the timer stops, everything goes up in order at once.
    #[test]
    fn reorder_filled_gap_stops_the_timer() {
        let mut rx = LwaRx::<u32>::new(SimDuration::from_millis(10));
        let mut up = Vec::new();
        rx.on_pdu(SimTime::ZERO, LwaLeg::Wlan, pdu(1), &mut up);
        rx.on_pdu(SimTime::ZERO, LwaLeg::Wlan, pdu(2), &mut up);
        assert!(rx.next_deadline().is_some());
        rx.on_pdu(SimTime::from_millis(3), LwaLeg::Lte, pdu(0), &mut up);
        assert_eq!(up, [0, 1, 2]);
        assert_eq!(rx.next_deadline(), None);
        assert_eq!(rx.stats().reordered, 2);
        // a duplicate is discarded
        rx.on_pdu(SimTime::from_millis(4), LwaLeg::Lte, pdu(2), &mut up);
        assert_eq!((up.len(), rx.stats().discarded), (3, 1));
    }

    // An expiry with a second gap above Reordering_PDCP_RX_COUNT restarts the timer for it
    // (§5.1.2.1.4.2), which then also waits exactly t-Reordering.
    #[test]
    fn reorder_restarts_for_a_later_gap() {
        let t = SimDuration::from_millis(10);
        let mut rx = LwaRx::<u32>::new(t);
        let mut up = Vec::new();
        rx.on_pdu(SimTime::ZERO, LwaLeg::Wlan, pdu(1), &mut up); // gap at 0, rc = 2
        rx.on_pdu(SimTime::from_millis(5), LwaLeg::Wlan, pdu(4), &mut up); // gap at 2, 3
        rx.on_timeout(SimTime::from_millis(10), &mut up);
        assert_eq!(up, [1]);
        assert_eq!(rx.next_deadline(), Some(SimTime::from_millis(20)));
        rx.on_timeout(SimTime::from_millis(20), &mut up);
        assert_eq!(up, [1, 4]);
        assert_eq!((rx.stats().timeouts, rx.stats().skipped), (2, 3));
    }

    /// One property case: PDUs steered by `tx` over two legs with random delays and losses.
    fn run_case(seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let steering = if rng.gen_bool(0.5) {
            SteeringKind::Static { wlan_fraction: rng.gen_range(0.0..=1.0) }
        } else {
            SteeringKind::Dynamic { max_window: rng.gen_range(2..=16) }
        };
        let mut tx = LwaTx::<u32>::new(LwaConfig { steering, ..LwaConfig::default() });
        let mut rx = LwaRx::<u32>::new(SimDuration::from_millis(50));
        let base = [rng.gen_range(1..20u64), rng.gen_range(1..40u64)];
        let jitter = [rng.gen_range(0..5u64), rng.gen_range(0..30u64)];
        let loss = [rng.gen_range(0.0..0.05), rng.gen_range(0.0..0.2)];
        let n = rng.gen_range(100..2000u32);
        // (arrival, leg, count); each leg is FIFO: its arrival times never decrease
        let mut arrivals: Vec<(SimTime, LwaLeg, u32)> = Vec::new();
        let mut last = [SimTime::ZERO; 2];
        let mut lost = std::collections::HashSet::new();
        let mut wl = Vec::new();
        for c in 0..n {
            let now = SimTime::from_micros(u64::from(c) * rng.gen_range(100..1500u64) / 2 + u64::from(c) * 200);
            let leg = tx.steer(now, pdu(c));
            tx.take_wlan(&mut wl);
            let i = leg as usize;
            if rng.gen_bool(loss[i]) {
                lost.insert(c);
                continue;
            }
            let d = SimDuration::from_micros(1000 * base[i] + rng.gen_range(0..=1000 * jitter[i]));
            let at = (now + d).max(last[i]);
            last[i] = at;
            arrivals.push((at, leg, c));
        }
        assert_eq!(wl.len() as u64, tx.stats().pdus[1]);
        arrivals.sort_by_key(|a| a.0);
        let mut up = Vec::new();
        let mut fb = Vec::new();
        for (at, leg, c) in arrivals {
            while let Some(d) = rx.next_deadline().filter(|&d| d <= at) {
                rx.on_timeout(d, &mut up);
            }
            rx.on_pdu(at, leg, pdu(c), &mut up);
            rx.take_feedback(&mut fb);
            for (l, c) in fb.drain(..) {
                tx.on_arrival(at, l, c);
            }
            rx.set_t_reordering(tx.t_reordering());
        }
        while let Some(d) = rx.next_deadline() {
            rx.on_timeout(d, &mut up);
        }
        // in order, no duplicates
        assert!(up.windows(2).all(|w| w[0] < w[1]), "seed {seed}: out of order or duplicated");
        let mut late = Vec::new();
        rx.take_discarded(&mut late);
        // every SDU is delivered, lost on a leg, or given up by the timer (late)
        let s = rx.stats();
        assert_eq!(up.len() as u64 + late.len() as u64 + lost.len() as u64, u64::from(n), "seed {seed}");
        assert_eq!(s.delivered, up.len() as u64);
        for c in &up {
            assert!(!lost.contains(c));
        }
        // the skipped COUNTs are exactly the lost and the late ones below the last delivered
        let top = *up.last().unwrap_or(&0);
        let gaps = lost.iter().chain(late.iter()).filter(|&&c| c < top).count() as u64;
        assert_eq!(s.skipped, gaps, "seed {seed}");
        assert_eq!(tx.stats().pdus[0] + tx.stats().pdus[1], u64::from(n));
    }

    // Property (issue 15): over random leg delays, jitter and losses, every PDCP SDU goes up in
    // order without duplicates, or is counted lost past the timer.
    #[test]
    fn reorder_property_in_order_no_duplicates() {
        for seed in 0..300 {
            run_case(seed);
        }
    }
}
