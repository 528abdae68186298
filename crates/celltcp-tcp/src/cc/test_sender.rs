//! A scripted sender for congestion-control tests, so tests read as ACK and loss scripts (the
//! shape of quiche's `TestSender`).
//!
//! It owns a [`Controller`], a fake clock and a FIFO of segments in flight, and builds the
//! [`Ack`] and [`RateSample`] structs a real sender would: delivery-rate samples follow
//! draft-cheng-iccrg-delivery-rate-estimation-02 §3.2 (per-packet send state) and §3.3 (the
//! sample at ACK time, `interval = max(send_elapsed, ack_elapsed)`, rejected when shorter than
//! min_rtt), and srtt follows RFC 6298 §2.
//!
//! Two ways to drive it:
//! - **scripted**: [`TestSender::send`] / [`TestSender::send_window`], [`TestSender::advance`],
//!   [`TestSender::ack_n`], [`TestSender::lose_n`], [`TestSender::rto`] — nothing happens unless
//!   the test says so; RTT samples are `now - sent`.
//! - **event loop**: [`TestSender::run_for`] and [`TestSender::run_rounds`] send whatever the
//!   window (and the pacing rate, if the controller paces) allows and process each ACK at its
//!   arrival time. A segment's ACK arrives `rtt` after it leaves the optional bottleneck
//!   ([`TestSender::with_bottleneck`]), which serialises segments at a fixed rate with an
//!   unlimited FIFO queue; without one, every segment's ACK arrives exactly `rtt` after it is sent,
//!   so one round is one RTT (lockstep rounds).
//!
//! One ACK acknowledges one segment unless the test asks for a stretch ACK
//! ([`TestSender::ack_stretch`]).

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimTime};

use super::{Ack, CongestionEvent, Controller, RateSample, RtoSsthresh};

/// Per-segment send state (draft-cheng-iccrg-delivery-rate-estimation-02 §3.2).
#[derive(Clone, Copy, Debug)]
struct Segment {
    seq: u64,
    bytes: u64,
    sent: SimTime,
    ack_at: SimTime,
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    is_app_limited: bool,
    tx_in_flight: u64,
}

pub struct TestSender<C: Controller> {
    pub cc: C,
    pub mss: u32,
    now: SimTime,
    rtt: SimDuration,
    bottleneck_bytes_per_s: Option<f64>,
    last_departure: SimTime,
    last_ack_at: SimTime,
    flight: VecDeque<Segment>,
    bytes_in_flight: u64,
    next_seq: u64,
    // Connection delivery state, draft-cheng §3.1.
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    /// `C.app_limited`: 0 or the delivered count that ends the app-limited phase.
    app_limited_until: u64,
    /// The application supplies at most this many segments in flight (`None`: unlimited).
    app_limit_pkts: Option<u64>,
    /// Whether app-limited phases mark rate samples (`true` as draft-cheng §3.4 says); tests turn
    /// it off to show what would break without the marking.
    pub mark_app_limited: bool,
    pending_lost: u64,
    in_recovery: bool,
    recovery_point: u64,
    srtt: Option<SimDuration>,
    min_rtt: SimDuration,
    next_send_time: SimTime,
    rounds: u64,
    next_round_delivered: u64,
    /// Number of ACKs delivered to the controller.
    pub acks: u64,
}

impl<C: Controller> TestSender<C> {
    pub fn new(cc: C, mss: u32, rtt: SimDuration) -> Self {
        TestSender {
            cc,
            mss,
            now: SimTime::ZERO,
            rtt,
            bottleneck_bytes_per_s: None,
            last_departure: SimTime::ZERO,
            last_ack_at: SimTime::ZERO,
            flight: VecDeque::new(),
            bytes_in_flight: 0,
            next_seq: 0,
            delivered: 0,
            delivered_time: SimTime::ZERO,
            first_sent_time: SimTime::ZERO,
            app_limited_until: 0,
            app_limit_pkts: None,
            mark_app_limited: true,
            pending_lost: 0,
            in_recovery: false,
            recovery_point: 0,
            srtt: None,
            min_rtt: SimDuration::MAX,
            next_send_time: SimTime::ZERO,
            rounds: 0,
            next_round_delivered: 0,
            acks: 0,
        }
    }

    /// Put a bottleneck of `bytes_per_s` (FIFO, unlimited buffer) before the receiver.
    pub fn with_bottleneck(mut self, bytes_per_s: f64) -> Self {
        self.bottleneck_bytes_per_s = Some(bytes_per_s);
        self
    }

    pub fn now(&self) -> SimTime {
        self.now
    }
    pub fn window(&self) -> u64 {
        self.cc.window()
    }
    pub fn window_pkts(&self) -> f64 {
        self.cc.window() as f64 / self.mss as f64
    }
    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }
    pub fn pkts_in_flight(&self) -> usize {
        self.flight.len()
    }
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// Packet-timed rounds seen by the sender (a round ends when a segment sent after the
    /// previous round ended is acknowledged).
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    pub fn set_rtt(&mut self, rtt: SimDuration) {
        self.rtt = rtt;
    }
    pub fn rtt(&self) -> SimDuration {
        self.rtt
    }

    /// Limit the application to `pkts` segments in flight (`None`: always has data).
    pub fn set_app_limited(&mut self, pkts: Option<u64>) {
        self.app_limit_pkts = pkts;
    }

    /// Move the clock without processing anything.
    pub fn advance(&mut self, d: SimDuration) {
        self.now += d;
    }

    fn mss64(&self) -> u64 {
        self.mss as u64
    }

    fn app_cap_bytes(&self) -> u64 {
        self.app_limit_pkts.map_or(u64::MAX, |p| p * self.mss64())
    }

    /// True when the application, not the window, limits what is in flight (RFC 7661 §3).
    fn app_is_limiting(&self) -> bool {
        self.app_cap_bytes().saturating_add(self.mss64()) <= self.cc.window()
    }

    fn window_allows(&self) -> bool {
        self.bytes_in_flight + self.mss64() <= self.cc.window()
    }

    fn app_allows(&self) -> bool {
        self.bytes_in_flight + self.mss64() <= self.app_cap_bytes()
    }

    /// Send `n` segments now, whatever the window says.
    pub fn send(&mut self, n: u64) {
        for _ in 0..n {
            self.send_segment();
        }
    }

    /// Send as many segments as the window (and the application limit) allow, ignoring pacing.
    /// Returns how many were sent.
    pub fn send_window(&mut self) -> u64 {
        let mut n = 0;
        while self.window_allows() && self.app_allows() {
            self.send_segment();
            n += 1;
        }
        self.mark_if_app_limited();
        n
    }

    /// draft-cheng §3.4: when the application has nothing more to send and the window is not
    /// full, mark `C.app_limited` so samples taken until this data is delivered are app-limited.
    fn mark_if_app_limited(&mut self) {
        if self.mark_app_limited && self.window_allows() && !self.app_allows() {
            self.app_limited_until = (self.delivered + self.bytes_in_flight).max(1);
        }
    }

    fn send_segment(&mut self) {
        let bytes = self.mss64();
        // draft-cheng §3.2: restart the sampling interval when nothing is in flight.
        if self.bytes_in_flight == 0 {
            self.first_sent_time = self.now;
            self.delivered_time = self.now;
        }
        let depart = match self.bottleneck_bytes_per_s {
            Some(r) => {
                self.now.max(self.last_departure) + SimDuration::from_secs_f64(bytes as f64 / r)
            }
            None => self.now,
        };
        self.last_departure = depart;
        // No reordering: an ACK never overtakes an earlier one.
        let ack_at = (depart + self.rtt).max(self.last_ack_at);
        self.last_ack_at = ack_at;
        self.bytes_in_flight += bytes;
        self.flight.push_back(Segment {
            seq: self.next_seq,
            bytes,
            sent: self.now,
            ack_at,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited_until != 0,
            tx_in_flight: self.bytes_in_flight,
        });
        self.next_seq += 1;
        self.cc.on_sent(self.now, bytes, self.bytes_in_flight);
    }

    /// Acknowledge the `n` oldest segments now, one ACK each.
    pub fn ack_n(&mut self, n: usize) {
        for _ in 0..n {
            self.ack_segments(1);
        }
    }

    /// Acknowledge everything in flight now, one ACK per segment.
    pub fn ack_all(&mut self) {
        let n = self.flight.len();
        self.ack_n(n);
    }

    /// Acknowledge the `n` oldest segments with one (stretch) ACK.
    pub fn ack_stretch(&mut self, n: usize) {
        self.ack_segments(n);
    }

    fn ack_segments(&mut self, n: usize) {
        let n = n.min(self.flight.len());
        if n == 0 {
            return;
        }
        let prior_in_flight = self.bytes_in_flight;
        let mut acked = 0;
        let mut newest = None;
        for _ in 0..n {
            let s = self.flight.pop_front().expect("n <= len");
            acked += s.bytes;
            newest = Some(s);
        }
        let s = newest.expect("n >= 1");
        self.bytes_in_flight -= acked;
        self.delivered += acked;
        self.delivered_time = self.now;

        // RFC 6298 §2.2/2.3 smoothed RTT.
        let rtt = self.now - s.sent;
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(srtt) => SimDuration::from_nanos((srtt.as_nanos() * 7 + rtt.as_nanos()) / 8),
        });
        self.min_rtt = self.min_rtt.min(rtt);

        // draft-cheng §3.3: the sample from the newest acknowledged segment.
        self.first_sent_time = s.sent;
        let send_elapsed = s.sent - s.first_sent_time;
        let ack_elapsed = self.delivered_time - s.delivered_time;
        let mut interval = send_elapsed.max(ack_elapsed);
        let rs_delivered = self.delivered - s.delivered;
        if interval < self.min_rtt {
            // Not a reliable sample (draft-cheng §3.3): report it with a zero interval.
            interval = SimDuration::ZERO;
        }
        let delivery_rate = if interval > SimDuration::ZERO {
            rs_delivered as f64 / interval.as_secs_f64()
        } else {
            0.0
        };
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let rate = RateSample {
            delivery_rate,
            delivered: rs_delivered,
            prior_delivered: s.delivered,
            interval,
            rtt,
            is_app_limited: s.is_app_limited,
            tx_in_flight: s.tx_in_flight,
            newly_lost: std::mem::take(&mut self.pending_lost),
        };

        if s.delivered >= self.next_round_delivered {
            self.next_round_delivered = self.delivered;
            self.rounds += 1;
        }
        // RFC 6582 §3.2 step 6 / RFC 6675 §5: recovery ends when the recovery point is acknowledged.
        if self.in_recovery && s.seq >= self.recovery_point {
            self.in_recovery = false;
            self.cc.on_recovery_exit(self.now);
        }
        let ack = Ack {
            acked_bytes: acked,
            prior_in_flight,
            bytes_in_flight: self.bytes_in_flight,
            rtt: Some(rtt),
            srtt: self.srtt.unwrap_or(rtt),
            min_rtt: self.min_rtt,
            delivered: self.delivered,
            rate: Some(rate),
            in_recovery: self.in_recovery,
            app_limited: self.app_is_limiting(),
            mss: self.mss,
            next_departure: SimTime::ZERO,
        };
        self.acks += 1;
        self.cc.on_ack(self.now, &ack);
    }

    /// The `n` oldest segments are lost: remove them from flight and, unless already in
    /// recovery, start a congestion event (one per window, RFC 5681 §3.2 / RFC 6675 §5).
    pub fn lose_n(&mut self, n: usize) {
        let n = n.min(self.flight.len());
        let flight_before = self.bytes_in_flight;
        let mut lost_sent_at = self.now;
        for i in 0..n {
            let s = self.flight.pop_front().expect("n <= len");
            if i == 0 {
                lost_sent_at = s.sent;
            }
            self.bytes_in_flight -= s.bytes;
            self.pending_lost += s.bytes;
        }
        if !self.in_recovery {
            self.enter_recovery(flight_before, lost_sent_at, false);
        }
    }

    /// A congestion event without losing anything (e.g. an ECN echo, RFC 3168 §6.1.2).
    pub fn congestion_event(&mut self) {
        self.enter_recovery(self.bytes_in_flight, self.now, true);
    }

    fn enter_recovery(&mut self, flight: u64, lost_sent_at: SimTime, ecn: bool) {
        self.in_recovery = true;
        self.recovery_point = self.next_seq;
        let ev = CongestionEvent {
            bytes_in_flight: flight,
            lost_sent_at,
            ecn,
            mss: self.mss,
        };
        self.cc.on_congestion_event(self.now, &ev);
    }

    /// Leave recovery now (as if the recovery point had been acknowledged).
    pub fn exit_recovery(&mut self) {
        if self.in_recovery {
            self.in_recovery = false;
            self.cc.on_recovery_exit(self.now);
        }
    }

    /// The retransmission timer fires: everything in flight is deemed lost (RFC 5681 §3.1, RFC
    /// 6298 §5) and the controller is told with the flight size at expiry.
    pub fn rto(&mut self) {
        self.rto_with(RtoSsthresh::Reduce);
    }

    /// [`TestSender::rto`], with the sender's ssthresh decision (`Hold`: a timeout inside a
    /// fast recovery whose window is not yet acknowledged, Linux `tcp_enter_loss`).
    pub fn rto_with(&mut self, ss: RtoSsthresh) {
        let flight = self.bytes_in_flight;
        self.pending_lost += flight;
        self.flight.clear();
        self.bytes_in_flight = 0;
        self.in_recovery = false;
        self.last_departure = self.last_departure.min(self.now);
        self.last_ack_at = self.now;
        self.cc.on_rto(self.now, flight, self.mss, ss);
    }

    /// The last congestion event was spurious.
    pub fn spurious(&mut self) {
        self.in_recovery = false;
        self.cc.on_spurious(self.now);
    }

    // ---- event loop -------------------------------------------------------------------------

    fn try_send(&mut self) {
        while self.window_allows() && self.app_allows() {
            let rate = self.cc.pacing_rate();
            if let Some(r) = rate {
                if self.now < self.next_send_time {
                    break;
                }
                self.send_segment();
                if r > 0.0 {
                    let gap = SimDuration::from_secs_f64(self.mss as f64 / r);
                    self.next_send_time = self.next_send_time.max(self.now) + gap;
                }
            } else {
                self.send_segment();
            }
        }
        self.mark_if_app_limited();
    }

    /// Process events up to `deadline` (inclusive); stop early once the sender's round count
    /// reaches `stop_round`. Returns true if stopped by the round count.
    fn run_until(&mut self, deadline: SimTime, stop_round: Option<u64>) -> bool {
        loop {
            self.try_send();
            let next_ack = self.flight.front().map(|s| s.ack_at);
            let next_send = (self.window_allows()
                && self.app_allows()
                && self.cc.pacing_rate().is_some()
                && self.next_send_time > self.now)
                .then_some(self.next_send_time);
            let t = match (next_ack, next_send) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (None, None) => break,
            };
            if t > deadline {
                break;
            }
            self.now = self.now.max(t);
            if next_ack == Some(t) {
                self.ack_segments(1);
                if stop_round.is_some_and(|r| self.rounds >= r) {
                    return true;
                }
            }
        }
        if deadline != SimTime::MAX {
            self.now = self.now.max(deadline);
        }
        false
    }

    /// Run the ACK-clocked (and, if the controller paces, paced) loop for `d`.
    pub fn run_for(&mut self, d: SimDuration) {
        let deadline = self.now + d;
        self.run_until(deadline, None);
    }

    /// Run `k` rounds. Without a bottleneck a round is exactly one RTT (send a window, its ACKs
    /// come back one RTT later): the loop runs for `k * rtt`. With a bottleneck it runs until the
    /// sender's packet-timed round count has advanced by `k`.
    pub fn run_rounds(&mut self, k: u64) {
        if self.bottleneck_bytes_per_s.is_none() {
            self.run_for(self.rtt * k);
        } else {
            let target = self.rounds + k;
            let stopped = self.run_until(SimTime::MAX, Some(target));
            assert!(stopped, "the loop went idle before {k} rounds");
        }
    }
}

#[cfg(test)]
mod tests {
    //! The driver itself: its rate samples and rounds must be right for the CC tests to mean
    //! anything.
    use super::*;

    /// A fixed window of `w` bytes.
    struct Fixed(u64);
    impl Controller for Fixed {
        fn on_ack(&mut self, _: SimTime, _: &Ack) {}
        fn on_congestion_event(&mut self, _: SimTime, _: &CongestionEvent) {}
        fn on_rto(&mut self, _: SimTime, _: u64, _: u32, _: RtoSsthresh) {}
        fn window(&self) -> u64 {
            self.0
        }
        fn ssthresh(&self) -> u64 {
            u64::MAX
        }
    }

    /// Records every ACK.
    struct Log(u64, Vec<Ack>);
    impl Controller for Log {
        fn on_ack(&mut self, _: SimTime, a: &Ack) {
            self.1.push(*a);
        }
        fn on_congestion_event(&mut self, _: SimTime, _: &CongestionEvent) {}
        fn on_rto(&mut self, _: SimTime, _: u64, _: u32, _: RtoSsthresh) {}
        fn window(&self) -> u64 {
            self.0
        }
        fn ssthresh(&self) -> u64 {
            u64::MAX
        }
    }

    const RTT: SimDuration = SimDuration::from_millis(50);

    #[test]
    fn lockstep_round_is_one_rtt_and_rate_is_window_over_rtt() {
        // Without a bottleneck a window of W bytes is delivered per RTT: after the first round
        // (whose samples start from an idle connection) each sample is W / RTT.
        let mut s = TestSender::new(Log(10_000, Vec::new()), 1000, RTT);
        s.run_rounds(3);
        assert_eq!(s.rounds(), 3);
        assert_eq!(s.delivered(), 30_000);
        assert_eq!(s.now(), SimTime::ZERO + RTT * 3);
        let last = s.cc.1.last().unwrap();
        let rs = last.rate.unwrap();
        assert!(
            (rs.delivery_rate - 10_000.0 / RTT.as_secs_f64()).abs() < 1e-6,
            "{}",
            rs.delivery_rate
        );
        assert_eq!(last.rtt, Some(RTT));
        assert_eq!(last.srtt, RTT);
        assert!(!rs.is_app_limited && !last.app_limited);
    }

    #[test]
    fn bottleneck_rate_samples_equal_link_rate() {
        // With a window above the BDP the bottleneck queue never empties and every sample after
        // the first window is the link rate (draft-cheng §3.3: the ack-rate interval).
        let rate = 1e6; // BDP = 50 KB at 50 ms
        let mut s = TestSender::new(Log(100_000, Vec::new()), 1000, RTT).with_bottleneck(rate);
        s.run_for(SimDuration::from_secs(1));
        let acks = &s.cc.1;
        assert!(acks.len() > 500);
        for a in &acks[200..] {
            let r = a.rate.unwrap().delivery_rate;
            assert!((r - rate).abs() < rate * 1e-6, "{r}");
        }
        // RTT samples include the standing queue: (window - BDP) / rate.
        let rtt = acks.last().unwrap().rtt.unwrap().as_secs_f64();
        assert!((rtt - (RTT.as_secs_f64() + 0.05)).abs() < 2e-3, "{rtt}");
    }

    #[test]
    fn app_limited_marking_and_ack_flag() {
        // draft-cheng §3.4: samples of data sent while the application could not fill the window
        // are app-limited, and the ACK says the sender is not cwnd-limited (RFC 7661).
        let mut s = TestSender::new(Log(10_000, Vec::new()), 1000, RTT);
        s.set_app_limited(Some(3));
        s.run_rounds(2);
        assert_eq!(s.pkts_in_flight(), 3);
        let a = s.cc.1.last().unwrap();
        assert!(a.app_limited && a.rate.unwrap().is_app_limited);
        let mut s2 = TestSender::new(Fixed(10_000), 1000, RTT);
        s2.set_app_limited(Some(3));
        s2.run_rounds(1);
        assert_eq!(s2.delivered(), 3000);
    }

    #[test]
    fn loss_and_recovery_bookkeeping() {
        // lose_n starts one congestion event per window; recovery ends when data sent after it
        // is acknowledged (RFC 6582 §3.2); rto clears the flight.
        let mut s = TestSender::new(Log(10_000, Vec::new()), 1000, RTT);
        s.send_window();
        s.lose_n(1);
        assert!(s.in_recovery());
        s.lose_n(1); // same window: no second event
        assert_eq!(s.pkts_in_flight(), 8);
        s.advance(RTT);
        s.ack_all();
        assert!(s.in_recovery(), "recovery point not yet acknowledged");
        assert_eq!(s.cc.1[0].rate.unwrap().newly_lost, 2000);
        s.send(1);
        s.advance(RTT);
        s.ack_all();
        assert!(!s.in_recovery());
        s.send(4);
        s.rto();
        assert_eq!(s.bytes_in_flight(), 0);
    }
}
