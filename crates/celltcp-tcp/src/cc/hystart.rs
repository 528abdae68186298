//! HyStart++: modified slow start (RFC 9406), a helper struct a loss-based controller holds.
//!
//! RFC 9406 §4.2: per packet-timed round the sender tracks the minimum RTT of the round. Once a
//! round has at least `N_RTT_SAMPLE` samples and its minimum exceeds the previous round's minimum
//! by `RttThresh = clamp(lastRoundMinRTT / MIN_RTT_DIVISOR, MIN_RTT_THRESH, MAX_RTT_THRESH)`, slow
//! start ends and Conservative Slow Start (CSS) begins, in which the slow-start increase is divided
//! by `CSS_GROWTH_DIVISOR`. If a CSS round's minimum RTT drops below the baseline taken on entry,
//! the increase was spurious and slow start resumes; after `CSS_ROUNDS` rounds of CSS the sender
//! enters congestion avoidance (ssthresh = cwnd). A loss or ECN echo in slow start or CSS ends
//! HyStart++ for the connection, and RFC 9406 §4.3 has it used only in the initial slow start.
//!
//! Rounds (RFC 9406 §4.2 "windowEnd"): a round ends when the cumulative delivered count reaches
//! the bytes sent when the round began. The helper counts sent bytes itself from
//! [`HyStart::on_sent`] (retransmissions included, a slight over-count the RFC tolerates: it only
//! lengthens a round) and compares with `Ack::delivered`.

use celltcp_engine::SimDuration;

/// RFC 9406 §4.3: lower bound of the RTT-increase threshold.
pub const MIN_RTT_THRESH: SimDuration = SimDuration::from_millis(4);
/// RFC 9406 §4.3: upper bound of the RTT-increase threshold.
pub const MAX_RTT_THRESH: SimDuration = SimDuration::from_millis(16);
/// RFC 9406 §4.3: RttThresh = lastRoundMinRTT / MIN_RTT_DIVISOR before clamping.
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RFC 9406 §4.3: RTT samples needed in a round before it is judged.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: divisor of the slow-start increase during CSS.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: rounds spent in CSS before congestion avoidance.
pub const CSS_ROUNDS: u32 = 5;

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartState {
    /// Standard slow start, watching the RTT.
    SlowStart,
    /// Conservative slow start: `baseline` is cssBaselineMinRtt, `rounds` the rounds completed
    /// in CSS (the partial round of entry counts, RFC 9406 §4.2).
    Css { baseline: SimDuration, rounds: u32 },
    /// Finished (left for congestion avoidance, or a loss ended slow start).
    Done,
}

/// What an ACK made HyStart++ do; the controller acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartEvent {
    /// The RTT rose by at least RttThresh: enter CSS.
    EnterCss,
    /// A CSS round's minimum RTT fell below the baseline: resume standard slow start.
    ResumeSlowStart,
    /// CSS_ROUNDS rounds of CSS are complete: set ssthresh = cwnd and enter congestion avoidance.
    EnterCongestionAvoidance,
}

#[derive(Clone, Debug)]
pub struct HyStart {
    state: HyStartState,
    sent_bytes: u64,
    /// windowEnd in bytes sent; `None` before the first round starts.
    window_end: Option<u64>,
    last_round_min_rtt: Option<SimDuration>,
    current_round_min_rtt: Option<SimDuration>,
    rtt_sample_count: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        Self::new()
    }
}

impl HyStart {
    pub fn new() -> Self {
        HyStart {
            state: HyStartState::SlowStart,
            sent_bytes: 0,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
        }
    }

    pub fn state(&self) -> HyStartState {
        self.state
    }

    pub fn in_css(&self) -> bool {
        matches!(self.state, HyStartState::Css { .. })
    }

    pub fn is_done(&self) -> bool {
        self.state == HyStartState::Done
    }

    /// The divisor to apply to the slow-start increase (RFC 9406 §4.2: CSS_GROWTH_DIVISOR in CSS).
    pub fn growth_divisor(&self) -> u64 {
        if self.in_css() {
            CSS_GROWTH_DIVISOR
        } else {
            1
        }
    }

    /// RFC 9406 §4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
    /// MAX_RTT_THRESH)).
    pub fn rtt_thresh(last_round_min_rtt: SimDuration) -> SimDuration {
        (last_round_min_rtt / MIN_RTT_DIVISOR)
            .min(MAX_RTT_THRESH)
            .max(MIN_RTT_THRESH)
    }

    /// Count `bytes` sent (advances SND.NXT for round tracking).
    pub fn on_sent(&mut self, bytes: u64) {
        self.sent_bytes += bytes;
    }

    /// A loss or ECN echo during slow start or CSS: HyStart++ is over (RFC 9406 §4.2, and §4.3:
    /// used only for the initial slow start).
    pub fn on_congestion(&mut self) {
        self.state = HyStartState::Done;
    }

    /// An ACK arrived while the controller is in slow start (or CSS). `delivered` is the
    /// connection's cumulative delivered bytes after it, `rtt` its RTT sample if any.
    pub fn on_ack(&mut self, delivered: u64, rtt: Option<SimDuration>) -> Option<HyStartEvent> {
        if self.is_done() {
            return None;
        }
        // RFC 9406 §4.2: at the start of each round, roll the per-round minimum. A new round
        // starts with the first ACK that delivers data sent after the previous round began.
        let new_round = match self.window_end {
            None => true,
            Some(end) => delivered > end,
        };
        if new_round {
            self.window_end = Some(self.sent_bytes);
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            if let HyStartState::Css { baseline, rounds } = self.state {
                let rounds = rounds + 1;
                // RFC 9406 §4.2: "If CSS_ROUNDS rounds are complete, enter congestion avoidance".
                if rounds >= CSS_ROUNDS {
                    self.state = HyStartState::Done;
                    return Some(HyStartEvent::EnterCongestionAvoidance);
                }
                self.state = HyStartState::Css { baseline, rounds };
            }
        }
        let rtt = rtt?;
        self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.rtt_sample_count += 1;
        let current = self.current_round_min_rtt.expect("just set");
        match self.state {
            HyStartState::SlowStart => {
                let last = self.last_round_min_rtt?;
                if self.rtt_sample_count >= N_RTT_SAMPLE && current >= last + Self::rtt_thresh(last)
                {
                    // RFC 9406 §4.2: cssBaselineMinRtt = currentRoundMinRTT; exit slow start, enter CSS.
                    self.state = HyStartState::Css {
                        baseline: current,
                        rounds: 0,
                    };
                    return Some(HyStartEvent::EnterCss);
                }
                None
            }
            HyStartState::Css { baseline, .. } => {
                if self.rtt_sample_count >= N_RTT_SAMPLE && current < baseline {
                    // RFC 9406 §4.2: the RTT increase was spurious; resume slow start.
                    self.state = HyStartState::SlowStart;
                    return Some(HyStartEvent::ResumeSlowStart);
                }
                None
            }
            HyStartState::Done => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> SimDuration = SimDuration::from_millis;

    /// Drive one round: `sent` bytes were sent before it, then `samples` ACKs with `rtt` each.
    /// Rounds are delimited by sending a fresh window before the first ACK of the round.
    struct Driver {
        hs: HyStart,
        delivered: u64,
    }

    impl Driver {
        fn new() -> Self {
            Driver {
                hs: HyStart::new(),
                delivered: 0,
            }
        }
        /// Send `n` segments of 1000 B, then acknowledge them with `rtt` samples; returns the
        /// events in order.
        fn round(&mut self, n: u32, rtt: SimDuration) -> Vec<HyStartEvent> {
            self.hs.on_sent(n as u64 * 1000);
            let mut ev = Vec::new();
            for _ in 0..n {
                self.delivered += 1000;
                ev.extend(self.hs.on_ack(self.delivered, Some(rtt)));
            }
            ev
        }
    }

    #[test]
    fn hystart_rtt_thresh_is_clamped() {
        // RFC 9406 §4.2: RttThresh = max(4 ms, min(lastRoundMinRTT / 8, 16 ms)).
        assert_eq!(HyStart::rtt_thresh(MS(20)), MS(4));
        assert_eq!(HyStart::rtt_thresh(MS(80)), MS(10));
        assert_eq!(HyStart::rtt_thresh(MS(400)), MS(16));
    }

    #[test]
    fn hystart_enters_css_on_rtt_increase_of_thresh() {
        // RFC 9406 §4.2: currentRoundMinRTT >= lastRoundMinRTT + RttThresh ends slow start.
        let mut d = Driver::new();
        assert!(d.round(10, MS(80)).is_empty());
        // 80 ms -> thresh 10 ms: 89 ms is not enough.
        assert!(d.round(10, MS(89)).is_empty());
        assert_eq!(d.hs.state(), HyStartState::SlowStart);
        // Against last round's 89 ms the threshold is 11.125 ms: 100.125 ms triggers.
        let ev = d.round(10, MS(89) + HyStart::rtt_thresh(MS(89)));
        assert_eq!(ev, vec![HyStartEvent::EnterCss]);
        assert!(d.hs.in_css());
        assert_eq!(d.hs.growth_divisor(), CSS_GROWTH_DIVISOR);
    }

    #[test]
    fn hystart_needs_n_rtt_samples() {
        // RFC 9406 §4.2: the check needs rttSampleCount >= N_RTT_SAMPLE (8) in the round.
        let mut d = Driver::new();
        d.round(10, MS(40));
        d.hs.on_sent(10_000);
        for i in 1..=8u32 {
            d.delivered += 1000;
            let ev = d.hs.on_ack(d.delivered, Some(MS(60)));
            if i < N_RTT_SAMPLE {
                assert_eq!(ev, None, "sample {i}");
            } else {
                assert_eq!(ev, Some(HyStartEvent::EnterCss));
            }
        }
    }

    #[test]
    fn hystart_first_round_never_exits() {
        // RFC 9406 §4.2: lastRoundMinRTT must be known (not infinity) before comparing.
        let mut d = Driver::new();
        assert!(d.round(20, MS(500)).is_empty());
        assert_eq!(d.hs.state(), HyStartState::SlowStart);
    }

    #[test]
    fn hystart_css_resumes_slow_start_when_rtt_drops() {
        // RFC 9406 §4.2: in CSS, currentRoundMinRTT < cssBaselineMinRtt resumes slow start.
        let mut d = Driver::new();
        d.round(10, MS(40));
        assert_eq!(d.round(10, MS(50)), vec![HyStartEvent::EnterCss]);
        assert_eq!(
            d.hs.state(),
            HyStartState::Css {
                baseline: MS(50),
                rounds: 0
            }
        );
        // A round at the baseline stays in CSS ...
        assert!(d.round(10, MS(50)).is_empty());
        assert!(d.hs.in_css());
        // ... one below it resumes slow start.
        assert_eq!(d.round(10, MS(45)), vec![HyStartEvent::ResumeSlowStart]);
        assert_eq!(d.hs.state(), HyStartState::SlowStart);
        assert_eq!(d.hs.growth_divisor(), 1);
    }

    #[test]
    fn hystart_css_enters_ca_after_css_rounds() {
        // RFC 9406 §4.2: after CSS_ROUNDS (5) rounds in CSS (the partial round of entry counts),
        // enter congestion avoidance.
        let mut d = Driver::new();
        d.round(10, MS(40));
        assert_eq!(d.round(10, MS(50)), vec![HyStartEvent::EnterCss]); // entry in round 2
        for _ in 0..(CSS_ROUNDS - 1) {
            assert!(d.round(10, MS(50)).is_empty());
            assert!(d.hs.in_css());
        }
        // The first ACK of the next round completes the 5th CSS round.
        assert_eq!(
            d.round(10, MS(50)),
            vec![HyStartEvent::EnterCongestionAvoidance]
        );
        assert!(d.hs.is_done());
        assert_eq!(d.hs.on_ack(d.delivered + 1000, Some(MS(10))), None);
    }

    #[test]
    fn hystart_congestion_ends_it() {
        // RFC 9406 §4.2/§4.3: a loss during slow start or CSS ends HyStart++ for good.
        let mut d = Driver::new();
        d.round(10, MS(40));
        d.hs.on_congestion();
        assert!(d.hs.is_done());
        assert!(d.round(10, MS(100)).is_empty());
    }
}
