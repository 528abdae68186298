//! HyStart as Linux's CUBIC runs it (net/ipv4/tcp_cubic.c: `bictcp_hystart_reset`,
//! `hystart_update`, `cubictcp_acked`; Ha and Rhee, "Taming the elephants: New TCP slow start",
//! Computer Networks 55(9), 2011), a helper struct the controller holds.
//!
//! Slow start ends (ssthresh = cwnd) at the first of two signals, judged per round (a round
//! begins with the first ACK past the data sent when the previous round began, Linux
//! `end_seq = snd_nxt`; rounds are counted from the first ACK on, below the low window too, so
//! that a round is one flight: `hystart_update` resets the round before its low-window test
//! since "tcp_cubic: fix incorrect HyStart round start detection", 2025, which the oracle's
//! Linux 6.18 has):
//!
//! - **ACK train** (`HYSTART_ACK_TRAIN`): ACKs that arrive within [`ACK_DELTA`] (2 ms,
//!   `hystart_ack_delta_us`) of the previous close one extend the train; once the train has
//!   lasted longer than `(delay_min + ack_delay) / 2` since the round began, the window fills the
//!   path. `ack_delay` is Linux's `hystart_ack_delay`, `min(1 ms, 4 · 64 KB / pacing_rate)`,
//!   with `pacing_rate = 2 · cwnd / SRTT` (`tcp_update_pacing_rate` in slow start); the halving
//!   applies when the socket is not paced (`SK_PACING_NONE`, our default).
//! - **Delay** (`HYSTART_DELAY`): after [`MIN_SAMPLES`] (8) RTT samples in the round, the
//!   round's minimum RTT exceeds `delay_min + clamp(delay_min / 8, 4 ms, 16 ms)`.
//!
//! `delay_min` is the smallest RTT sample since the connection began or the last RTO. Nothing
//! is judged while cwnd is below [`LOW_WINDOW`] (16 segments, `hystart_low_window`), once slow
//! start has been left this way (`found`), or outside slow start. An RTO (`TCP_CA_Loss`,
//! `bictcp_reset`) forgets `found` and `delay_min`, so HyStart runs again in the slow start that
//! follows, as in the kernel.
//!
//! Where ACKs come back in clumps (an LTE uplink returns them one uplink grant at a time, 5 ms
//! apart in validation/tests/lte.rs's cell), RTT samples move in steps larger than the 4 ms
//! threshold of a 30 ms path: a round whose first nine ACKs ride late clumps ends slow start
//! without any queue. The kernel's rule does the same with the same samples; where a round
//! boundary falls against the clumps decides it (Linux's quick-ACK start moved the exit in that
//! cell from 145 to 77 segments at 10 ms, from 146 to 137 at 8 ms, from 274 to 515 at 11 ms).
//!
//! The RTT sample is the newest newly acknowledged segment's, as Linux's `ca_rtt_us`
//! (`tcp_clean_rtx_queue`'s `last_ackt`; [`super::cubic`] passes the rate sample's RTT, the
//! connection's sample only where that has none). With an ACK for every second segment (RFC
//! 5681's delayed ACK) at 10 Mbit/s the ACKs come 2.4 ms apart, more than [`ACK_DELTA`], and
//! the ACK train never forms; Linux's receiver ACKs every segment while it grows its window
//! in slow start (`tcp_grow_window`), which is what makes the kernel's trains.
//!
//! Differences from the kernel: rounds are counted in bytes sent and
//! delivered (cumulatively or by SACK) rather than by SND.UNA passing `end_seq`; the kernel's
//! "no delay samples within 1 s of a CUBIC epoch start" only guards `delay_min` after fast
//! recovery, when slow start is over, and is not modelled.

use celltcp_engine::{SimDuration, SimTime};

/// `hystart_low_window`: HyStart does not judge below this cwnd, in segments.
pub const LOW_WINDOW: u64 = 16;
/// `hystart_ack_delta_us`: ACKs closer than this belong to one train.
pub const ACK_DELTA: SimDuration = SimDuration::from_millis(2);
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
pub const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`: clamp of the delay threshold `delay_min / 8`.
pub const DELAY_MIN: SimDuration = SimDuration::from_millis(4);
pub const DELAY_MAX: SimDuration = SimDuration::from_millis(16);
/// `hystart_ack_delay`: at most 1 ms, or 4 GSO bursts (`gso_max_size` 64 KB) at the pacing rate.
const ACK_DELAY_MAX: SimDuration = SimDuration::from_millis(1);
const GSO_MAX_BYTES: f64 = 65_536.0;

/// Which test ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartExit {
    AckTrain,
    Delay,
}

/// What the controller tells HyStart about one ACK.
#[derive(Clone, Copy, Debug)]
pub struct HyStartAck {
    /// `C.delivered` after this ACK, bytes.
    pub delivered: u64,
    /// The RTT sample of this ACK, if any.
    pub rtt: Option<SimDuration>,
    pub cwnd_bytes: u64,
    pub mss: u64,
    pub srtt: SimDuration,
    /// The controller is in slow start.
    pub slow_start: bool,
    /// The socket is paced (Linux `sk_pacing_status != SK_PACING_NONE`).
    pub paced: bool,
}

#[derive(Clone, Debug, Default)]
pub struct LinuxHyStart {
    found: bool,
    delay_min: Option<SimDuration>,
    round_start: SimTime,
    last_ack: SimTime,
    /// Bytes sent when the current round began; `None` before the first round.
    end_seq: Option<u64>,
    sent_bytes: u64,
    curr_rtt: Option<SimDuration>,
    sample_cnt: u32,
}

impl LinuxHyStart {
    pub fn new() -> Self {
        Self::default()
    }

    /// `HYSTART_DELAY_THRESH(delay_min >> 3)`.
    pub fn delay_thresh(delay_min: SimDuration) -> SimDuration {
        (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX)
    }

    /// `hystart_ack_delay` for a pacing rate of 2 · cwnd / SRTT.
    pub fn ack_delay(cwnd_bytes: u64, srtt: SimDuration) -> SimDuration {
        let secs = srtt.as_secs_f64();
        if cwnd_bytes == 0 || secs <= 0.0 {
            return SimDuration::ZERO;
        }
        let rate = 2.0 * cwnd_bytes as f64 / secs;
        SimDuration::from_secs_f64(4.0 * GSO_MAX_BYTES / rate).min(ACK_DELAY_MAX)
    }

    /// Slow start was left by HyStart (Linux `ca->found`).
    pub fn found(&self) -> bool {
        self.found
    }

    pub fn delay_min(&self) -> Option<SimDuration> {
        self.delay_min
    }

    pub fn on_sent(&mut self, bytes: u64) {
        self.sent_bytes += bytes;
    }

    /// An RTO: `bictcp_reset` + `bictcp_hystart_reset` (HyStart runs again).
    pub fn on_rto(&mut self) {
        self.found = false;
        self.delay_min = None;
        self.end_seq = None;
    }

    /// `bictcp_hystart_reset`: a new round begins now.
    fn reset(&mut self, now: SimTime) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = Some(self.sent_bytes);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `cubictcp_acked` and `hystart_update`: `Some` when slow start should end now
    /// (the controller sets ssthresh = cwnd).
    pub fn on_ack(&mut self, now: SimTime, a: &HyStartAck) -> Option<HyStartExit> {
        let delay = a.rtt?.max(SimDuration::from_nanos(1));
        let delay_min = self.delay_min.map_or(delay, |d| d.min(delay));
        self.delay_min = Some(delay_min);
        if self.found || !a.slow_start {
            return None;
        }
        // The round boundary is found on every ACK, the low-window test comes after it
        // (`hystart_update` since "tcp_cubic: fix incorrect HyStart round start detection",
        // 2025, in the oracle's 6.18): a round begins with a flight's first ACK, not with the
        // ACK that took cwnd to 16.
        if self.end_seq.is_none_or(|e| a.delivered > e) {
            self.reset(now);
        }
        if a.cwnd_bytes < LOW_WINDOW * a.mss {
            return None;
        }
        let mut exit = None;
        // ACK train.
        if now.saturating_since(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            let mut threshold = delay_min + Self::ack_delay(a.cwnd_bytes, a.srtt);
            if !a.paced {
                threshold = threshold / 2;
            }
            if now.saturating_since(self.round_start) > threshold {
                self.found = true;
                exit = Some(HyStartExit::AckTrain);
            }
        }
        // Delay increase.
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self
            .curr_rtt
            .is_some_and(|c| c > delay_min + Self::delay_thresh(delay_min))
        {
            self.found = true;
            exit = exit.or(Some(HyStartExit::Delay));
        }
        exit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn ack(delivered: u64, rtt: SimDuration, cwnd_pkts: u64) -> HyStartAck {
        HyStartAck {
            delivered,
            rtt: Some(rtt),
            cwnd_bytes: cwnd_pkts * MSS,
            mss: MSS,
            srtt: rtt,
            slow_start: true,
            paced: false,
        }
    }

    /// Feeds one round: the sender has `n` more segments in flight when it begins, then `n`
    /// ACKs of one segment each arrive `gap` apart from `t0`, with RTT `rtt`. Returns the first
    /// exit and the index of its ACK.
    fn round(
        h: &mut LinuxHyStart,
        t0: SimTime,
        delivered: &mut u64,
        n: u64,
        gap: SimDuration,
        rtt: SimDuration,
        cwnd: u64,
    ) -> Option<(u64, HyStartExit)> {
        h.on_sent(n * MSS);
        for i in 0..n {
            *delivered += MSS;
            if let Some(e) = h.on_ack(t0 + gap * i, &ack(*delivered, rtt, cwnd)) {
                return Some((i, e));
            }
        }
        None
    }

    #[test]
    fn hystart_linux_delay_thresh_clamps_4_to_16_ms() {
        // HYSTART_DELAY_THRESH(delay_min >> 3) with HYSTART_DELAY_MIN/MAX = 4 ms / 16 ms.
        assert_eq!(LinuxHyStart::delay_thresh(ms(10)), ms(4));
        assert_eq!(LinuxHyStart::delay_thresh(ms(80)), ms(10));
        assert_eq!(LinuxHyStart::delay_thresh(ms(1000)), ms(16));
    }

    #[test]
    fn hystart_linux_ack_delay_is_at_most_1_ms() {
        // hystart_ack_delay: min(1 ms, 4 * gso_max_size / pacing_rate).
        assert_eq!(LinuxHyStart::ack_delay(100_000, ms(50)), ms(1));
        // 2 * 100 MB / 50 ms = 4 GB/s: 4 * 64 KiB / 4e9 = 65.536 us
        let d = LinuxHyStart::ack_delay(100_000_000, ms(50));
        assert!((d.as_secs_f64() - 65.536e-6).abs() < 1e-9, "{d}");
    }

    #[test]
    fn hystart_linux_ack_train_exits_after_half_delay_min() {
        // hystart_update: ACKs 1 ms apart (< hystart_ack_delta_us) form a train; it triggers
        // once it spans more than (delay_min + ack_delay) / 2 = (40 + 1) / 2 = 20.5 ms, i.e.
        // at the ACK 21 ms into the round. The RTT does not rise (no delay signal).
        let mut h = LinuxHyStart::new();
        let mut d = 0;
        let r = round(
            &mut h,
            SimTime::from_millis(100),
            &mut d,
            100,
            ms(1),
            ms(40),
            32,
        );
        assert_eq!(r, Some((21, HyStartExit::AckTrain)));
        assert!(h.found());
        // found: nothing more until an RTO
        assert_eq!(
            h.on_ack(SimTime::from_millis(200), &ack(d + MSS, ms(90), 64)),
            None
        );
    }

    #[test]
    fn hystart_linux_spread_acks_do_not_make_a_train() {
        // ACKs 3 ms apart (> 2 ms) never extend the train.
        let mut h = LinuxHyStart::new();
        let mut d = 0;
        let r = round(
            &mut h,
            SimTime::from_millis(100),
            &mut d,
            100,
            ms(3),
            ms(40),
            32,
        );
        assert_eq!(r, None);
    }

    #[test]
    fn hystart_linux_delay_exit_needs_min_samples_and_threshold() {
        // HYSTART_MIN_SAMPLES = 8 samples of a round are only collected; from the 9th the
        // round's minimum is compared with delay_min + clamp(delay_min / 8, 4, 16) ms.
        let mut h = LinuxHyStart::new();
        let mut d = 0;
        let t = SimTime::from_millis(100);
        // round 1 sets delay_min = 80 ms (threshold 10 ms); gaps of 3 ms: no train
        assert_eq!(round(&mut h, t, &mut d, 20, ms(3), ms(80), 32), None);
        // round 2 begins once delivered passes what was sent when round 1 began
        let t2 = SimTime::from_millis(300);
        // +10 ms is not more than the threshold
        assert_eq!(round(&mut h, t2, &mut d, 60, ms(3), ms(90), 32), None);
        // a later round at +11 ms: the 9th sample of the round triggers
        let r = round(
            &mut h,
            SimTime::from_millis(600),
            &mut d,
            60,
            ms(3),
            ms(91),
            32,
        );
        assert_eq!(r, Some((8, HyStartExit::Delay)));
    }

    #[test]
    fn hystart_linux_idle_below_low_window_and_after_rto_runs_again() {
        // hystart_low_window = 16: nothing judged at cwnd 15 (even a doubled RTT).
        let mut h = LinuxHyStart::new();
        let mut d = 0;
        let t = SimTime::from_millis(100);
        assert_eq!(round(&mut h, t, &mut d, 50, ms(1), ms(40), 15), None);
        assert_eq!(h.delay_min(), Some(ms(40)), "delay_min still tracked");
        let r = round(
            &mut h,
            SimTime::from_millis(300),
            &mut d,
            50,
            ms(1),
            ms(40),
            16,
        );
        assert!(r.is_some());
        // bictcp_reset on TCP_CA_Loss: found and delay_min forgotten
        h.on_rto();
        assert!(!h.found());
        assert_eq!(h.delay_min(), None);
        let r = round(
            &mut h,
            SimTime::from_millis(900),
            &mut d,
            50,
            ms(1),
            ms(40),
            16,
        );
        assert_eq!(r, Some((21, HyStartExit::AckTrain)));
    }

    #[test]
    fn hystart_linux_delay_exit_on_one_late_ack_clump() {
        // What ends slow start early in validation/tests/lte.rs's 20 MHz cell: the uplink
        // returns ACKs in clumps, one per grant, 5 ms apart, so RTT samples come in 5 ms steps
        // (29-30, 34-35, 39-40 ms ...). delay_min = 30 ms gives a threshold of
        // clamp(30 / 8, 4, 16) = 4 ms < 5 ms: a round whose first HYSTART_MIN_SAMPLES + 1 = 9
        // ACKs all ride late clumps ends slow start by the delay test, with no queue at all.
        // The kernel's hystart_update applies the same rule to the same samples.
        let mut h = LinuxHyStart::new();
        let mut d = 0;
        // a round that sees the best clump: delay_min = 30 ms
        let t = SimTime::from_millis(100);
        assert_eq!(round(&mut h, t, &mut d, 16, ms(3), ms(30), 16), None);
        assert_eq!(LinuxHyStart::delay_thresh(ms(30)), ms(4));
        // next round (cwnd 32): clumps of 8 ACKs 5 ms apart at 35, 30, 35 ms: the minimum of
        // the first 9 samples is 30 ms, no exit
        h.on_sent(32 * MSS);
        let rtts = [35, 30, 35, 35];
        let mut exit = None;
        for (c, rtt) in rtts.iter().enumerate() {
            for i in 0..8 {
                d += MSS;
                let now = SimTime::from_millis(200 + 5 * c as u64) + SimDuration::from_micros(70 * i);
                exit = exit.or(h.on_ack(now, &ack(d, ms(*rtt), 32)));
            }
        }
        assert_eq!(exit, None);
        // next round (cwnd 64): its first 8 ACKs share one clump at 35 ms, the 9th opens the
        // next clump (its oldest segment waited 49 ms): 35 > 30 + 4 ms, slow start ends at 64
        // segments although the rest of that clump is back at 30 ms
        h.on_sent(64 * MSS);
        let mut exit = None;
        for (c, rtt) in [[35; 8], [49, 30, 30, 30, 30, 30, 30, 30]].iter().enumerate() {
            for (i, r) in rtt.iter().enumerate() {
                d += MSS;
                let now = SimTime::from_millis(300 + 5 * c as u64) + SimDuration::from_micros(70 * i as u64);
                exit = exit.or(h.on_ack(now, &ack(d, ms(*r), 64)).map(|e| (c, i, e)));
            }
        }
        assert_eq!(exit, Some((1, 0, HyStartExit::Delay)));
    }

    /// Slow start with an ACK for every segment at 10 Mbit/s (one 1500 B segment per 1.2 ms),
    /// 50 ms RTT, initial window 10: flight k has 10 * 2^k segments whose ACKs come back to
    /// back, 1.2 ms apart, each taking cwnd up by one (hystart_update sees cwnd before the
    /// increase) and sending two. Returns the exit as (flight, ACK index in it, cwnd, kind).
    fn slow_start_flights(
        h: &mut LinuxHyStart,
        gap: SimDuration,
        acked_per_ack: u64,
    ) -> Option<(u64, u64, u64, HyStartExit)> {
        let mut delivered = 0;
        let mut cwnd = 10;
        h.on_sent(cwnd * MSS);
        let mut flight = cwnd;
        for k in 0..4 {
            let t0 = SimTime::from_millis(100 + 60 * k);
            let n = flight / acked_per_ack;
            for i in 0..n {
                delivered += acked_per_ack * MSS;
                let a = ack(delivered, ms(50), cwnd);
                if let Some(e) = h.on_ack(t0 + gap * i, &a) {
                    return Some((k, i, cwnd, e));
                }
                cwnd += acked_per_ack;
                h.on_sent(2 * acked_per_ack * MSS);
            }
            flight *= 2;
        }
        None
    }

    #[test]
    fn hystart_linux_rounds_start_with_a_flight_below_the_low_window() {
        // hystart_update (Linux 6.18): `after(snd_una, end_seq)` -> bictcp_hystart_reset comes
        // before the hystart_low_window test, so the round of the flight of 40 begins at its
        // first ACK. Threshold (delay_min + hystart_ack_delay) / 2 = (50 + 1) / 2 = 25.5 ms:
        // the flight of 20 spans 19 x 1.2 = 22.8 ms (no exit), the flight of 40 exits at its
        // 23rd ACK, 22 x 1.2 = 26.4 ms after its first, at cwnd 40 + 22 = 62 (the kernel's
        // TcpExtTCPHystartTrainCwnd on this path: 63 and 102). Before that fix rounds began
        // at the ACK that took cwnd to 16, mid-flight, the trains of the flights of 20 and 40
        // were cut by the flight's end after 8.4 and 18 ms, and the exit came a flight later,
        // at cwnd 150.
        let mut h = LinuxHyStart::new();
        let r = slow_start_flights(&mut h, SimDuration::from_micros(1200), 1);
        assert_eq!(r, Some((2, 22, 62, HyStartExit::AckTrain)));
    }

    #[test]
    fn hystart_linux_delayed_acks_at_10_mbit_make_no_train() {
        // The same flights ACKed every second segment: ACKs 2.4 ms apart, more than
        // hystart_ack_delta_us (2 ms), never extend a train; with no queue (the RTT stays at
        // delay_min) nothing ends slow start.
        let mut h = LinuxHyStart::new();
        assert_eq!(
            slow_start_flights(&mut h, SimDuration::from_micros(2400), 2),
            None
        );
        // 2 ms apart still belongs to a train (`<= hystart_ack_delta_us`)
        let mut h = LinuxHyStart::new();
        let r = slow_start_flights(&mut h, ms(2), 2);
        assert!(matches!(r, Some((_, _, _, HyStartExit::AckTrain))), "{r:?}");
    }

    #[test]
    fn hystart_linux_paced_train_threshold_is_not_halved() {
        // hystart_update: `threshold >>= 1` only when sk_pacing_status == SK_PACING_NONE; a
        // paced socket needs a train longer than delay_min + ack_delay = 41 ms.
        let mut h = LinuxHyStart::new();
        h.on_sent(100 * MSS);
        let mut exit = None;
        for i in 0..100u64 {
            let mut a = ack((i + 1) * MSS, ms(40), 32);
            a.paced = true;
            if let Some(e) = h.on_ack(SimTime::from_millis(100 + i), &a) {
                exit = Some((i, e));
                break;
            }
        }
        assert_eq!(exit, Some((42, HyStartExit::AckTrain)));
    }
}
