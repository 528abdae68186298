//! Packet-timed rounds counted in delivered bytes: the "once per RTT" clock of the controls that
//! act once per round trip (Vegas, Veno, Illinois, YeAH, TCP-LP). A helper struct each of them
//! holds, as [`super::minmax`] is for BBR.
//!
//! A round that starts at an ACK with `C.delivered = D` (the connection's delivered count,
//! draft-cheng-iccrg-delivery-rate-estimation-02 §3.1) and `bytes_in_flight = F` ends at the
//! first ACK whose `C.delivered` reaches `D + F`: the data outstanding at its start has been
//! delivered, or as much later data when some of it was lost. The next round starts at that ACK.
//!
//! **Why delivered bytes and not bytes sent.** Linux times these rounds with sequence numbers
//! (`beg_snd_nxt` in `tcp_vegas.c`: the round ends when the ACK passes the `snd_nxt` recorded at
//! its start), which a retransmission does not move. A count of bytes *sent* is moved by it: a
//! retransmitted segment is sent twice but delivered once, so a round ending when the bytes sent
//! by its start are delivered ends late by every byte ever retransmitted, and each loss made all
//! later rounds longer (the controls then acted once per several RTTs). `D + F` counts a
//! retransmission once, when it is delivered. Without losses `D + F` is the bytes sent so far, so
//! loss-free rounds are unchanged.
//!
//! In lockstep (one ACK per segment, each ACK clocking out one new segment after it is processed)
//! a round spans a window less one segment: the segment clocked out by the ACK that starts the
//! round is not yet in flight when `F` is read.

use super::Ack;

/// Where an ACK falls in the round structure (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundEvent {
    /// The connection's first ACK: the first round starts here.
    First,
    /// The ACK is inside the current round.
    Within,
    /// The ACK ended the round that was to end when `C.delivered` reached `end`, and started
    /// the next one, which ends at `next_end`.
    Ended { end: u64, next_end: u64 },
}

/// Packet-timed round tracking in delivered bytes (module doc).
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundCounter {
    /// The current round ends when `C.delivered` reaches this; `None` before the first ACK.
    end: Option<u64>,
    /// Rounds ended so far.
    count: u64,
}

impl RoundCounter {
    pub fn new() -> Self {
        RoundCounter::default()
    }

    /// Everything sent so far counted once: delivered or still in flight (module doc).
    pub fn mark(ack: &Ack) -> u64 {
        ack.delivered + ack.bytes_in_flight
    }

    /// Account for one ACK that acknowledged data.
    pub fn on_ack(&mut self, ack: &Ack) -> RoundEvent {
        let next_end = Self::mark(ack);
        match self.end {
            None => {
                self.end = Some(next_end);
                RoundEvent::First
            }
            Some(end) if ack.delivered >= end => {
                self.end = Some(next_end);
                self.count += 1;
                RoundEvent::Ended { end, next_end }
            }
            Some(_) => RoundEvent::Within,
        }
    }

    /// Rounds ended so far.
    pub fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use celltcp_engine::{SimDuration, SimTime};

    use super::*;
    use crate::cc::test_sender::TestSender;
    use crate::cc::{CongestionEvent, Controller, RtoSsthresh};

    const MSS: u32 = 1000;
    const RTT: SimDuration = SimDuration::from_millis(100);

    /// A fixed window of `.0` bytes that only counts rounds.
    struct Fixed(u64, RoundCounter);
    impl Controller for Fixed {
        fn on_ack(&mut self, _: SimTime, ack: &Ack) {
            self.1.on_ack(ack);
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

    fn sender(pkts: u64) -> TestSender<Fixed> {
        TestSender::new(Fixed(pkts * MSS as u64, RoundCounter::new()), MSS, RTT)
    }

    #[test]
    fn round_ends_when_the_data_outstanding_at_its_start_is_delivered() {
        // Module doc: a round starting with D delivered and F in flight ends when C.delivered
        // reaches D + F, and the next starts at that ACK.
        let mut s = sender(10);
        s.send_window();
        s.advance(RTT);
        s.ack_n(1); // first ACK: D = 1 segment, F = 9
        assert_eq!(s.cc.1.count(), 0);
        s.send(5); // sent during the round: not part of it
        s.ack_n(8);
        assert_eq!(s.cc.1.count(), 0, "delivered 9 < D + F = 10");
        s.ack_n(1);
        assert_eq!(s.cc.1.count(), 1, "delivered 10 = D + F");
        s.ack_n(4);
        assert_eq!(
            s.cc.1.count(),
            1,
            "the 5 sent before the round ended are the next round"
        );
        s.ack_n(1);
        assert_eq!(s.cc.1.count(), 2);
    }

    #[test]
    fn round_is_not_stretched_by_retransmissions() {
        // Regression (Vegas, Veno, Illinois, YeAH, LP): a round used to end when the bytes
        // *sent* by its start were delivered; a retransmission is sent twice and delivered once,
        // so every loss made all later rounds longer. Half a window lost and retransmitted: the
        // rounds after the recovery are still one per RTT (lockstep: a window less one segment).
        let mut s = sender(20);
        s.run_rounds(3);
        for _ in 0..3 {
            s.lose_n(10);
            s.send(10); // their retransmissions
            s.run_rounds(1);
            s.exit_recovery();
        }
        let r0 = s.cc.1.count();
        s.run_rounds(19);
        assert_eq!(
            s.cc.1.count() - r0,
            20,
            "19 RTTs of 19-segment rounds on a 20-segment window"
        );
    }

    #[test]
    fn round_first_ack_starts_the_first_round() {
        let mut c = RoundCounter::new();
        let ack = |delivered, bytes_in_flight| Ack {
            delivered,
            bytes_in_flight,
            ..Ack::default()
        };
        assert_eq!(c.on_ack(&ack(1, 9)), RoundEvent::First);
        assert_eq!(c.on_ack(&ack(9, 5)), RoundEvent::Within);
        assert_eq!(
            c.on_ack(&ack(10, 5)),
            RoundEvent::Ended {
                end: 10,
                next_end: 15
            }
        );
        assert_eq!(c.count(), 1);
    }
}
