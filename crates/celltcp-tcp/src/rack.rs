//! RACK-TLP state (RFC 8985) as Linux keeps it (net/ipv4/tcp_recovery.c, `tp->rack`), for
//! `recovery = "linux"`.
//!
//! - `RACK.xmit_ts` / `RACK.end_seq` / `RACK.rtt` (RFC 8985 §6.2 step 2, Linux
//!   `tcp_rack_advance`): the send time, end and RTT of the most recently *sent* segment that
//!   has been delivered. A retransmitted segment whose RTT is shorter than min_rtt is ignored
//!   (its ACK was probably for the original, RFC 8985 §6.2 step 2, Linux's Karn check).
//! - The reordering window (RFC 8985 §6.2 step 4, Linux `tcp_rack_reo_wnd`): zero while no
//!   reordering has been seen and either recovery is under way or at least `DupThresh`
//!   segments are SACKed (RACK then acts like the DupThresh rule at once); otherwise
//!   `min_rtt / 4 * reo_wnd_steps`, at most SRTT.
//! - Adapting the window (RFC 8985 §6.2 step 4, Linux `tcp_rack_update_reo_wnd`): a DSACK seen
//!   once reordering has been observed widens it by one step (at most once per round trip) and
//!   keeps it for 16 recoveries (`TCP_RACK_RECOVERY_THRESH`); after that it falls back to one
//!   step.
//! - The loss rule itself (RFC 8985 §6.2 step 5, Linux `tcp_rack_detect_loss`): a segment sent
//!   before `RACK.xmit_ts` is lost once `RACK.rtt + reo_wnd - (now - sent) <= 0`; otherwise
//!   the reordering timer is armed for the remaining time ([`crate::scoreboard`] walks the
//!   segments).

use celltcp_engine::{SimDuration, SimTime};

/// Linux `TCP_RACK_RECOVERY_THRESH`: recoveries a widened reordering window persists for.
pub const RACK_RECOVERY_THRESH: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rack {
    /// `RACK.xmit_ts`: zero before the first delivery.
    pub xmit_ts: SimTime,
    /// `RACK.end_seq`.
    pub end_seq: u64,
    /// `RACK.rtt`.
    pub rtt: SimDuration,
    /// Linux `rack.advanced`: `xmit_ts` moved since the last loss detection.
    pub advanced: bool,
    /// Linux `rack.reo_wnd_steps` (1..=255).
    pub reo_wnd_steps: u32,
    /// Linux `rack.reo_wnd_persist`.
    pub reo_wnd_persist: u32,
    /// Linux `rack.dsack_seen`: a DSACK arrived since the window was last widened.
    pub dsack_seen: bool,
    /// Linux `rack.last_delivered`: C.delivered when the window was last widened.
    pub last_delivered: u64,
    /// Linux `tp->reord_seen`: reordering events observed on this connection.
    pub reord_seen: u32,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            xmit_ts: SimTime::ZERO,
            end_seq: 0,
            rtt: SimDuration::ZERO,
            advanced: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            last_delivered: 0,
            reord_seen: 0,
        }
    }
}

impl Rack {
    /// Linux `tcp_rack_advance`: a segment `[.., end)` last sent at `sent` was delivered at
    /// `now`; `retransmitted` as Karn's flag.
    pub fn advance(
        &mut self,
        now: SimTime,
        sent: SimTime,
        end: u64,
        retransmitted: bool,
        min_rtt: SimDuration,
    ) {
        let rtt = now.saturating_since(sent);
        if retransmitted && rtt < min_rtt {
            return;
        }
        self.advanced = true;
        if sent > self.xmit_ts || (sent == self.xmit_ts && end > self.end_seq) {
            self.rtt = rtt;
            self.xmit_ts = sent;
            self.end_seq = end;
        }
    }

    /// Linux `tcp_rack_reo_wnd`. `sacked_segs` is the number of SACKed segments, `dupthresh`
    /// Linux's `tp->reordering` (3).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segs: u64,
        dupthresh: u32,
        min_rtt: SimDuration,
        srtt: SimDuration,
    ) -> SimDuration {
        if self.reord_seen == 0 && (in_recovery || sacked_segs >= dupthresh as u64) {
            return SimDuration::ZERO;
        }
        SimDuration((min_rtt.0 / 4).saturating_mul(self.reo_wnd_steps as u64)).min(srtt)
    }

    /// Linux `tcp_rack_update_reo_wnd`, once per ACK that delivered data; `prior_delivered` is
    /// the rate sample's `P.delivered` (C.delivered when the newest delivered segment was sent).
    pub fn update_reo_wnd(&mut self, prior_delivered: u64, delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        // Disregard a DSACK if a round trip has not passed since the window was widened.
        if prior_delivered < self.last_delivered {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(255);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }

    /// A recovery ended (Linux decrements `reo_wnd_persist` in `tcp_rack_...` on recovery
    /// exit, see `tcp_try_to_open`/`tcp_end_cwnd_reduction`).
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    /// Linux `tcp_dsack_seen`: the window adapts to DSACKs only once reordering has been seen
    /// (and not for DSACKs of a TLP probe, which the caller filters).
    pub fn on_dsack(&mut self) {
        if self.reord_seen > 0 {
            self.dsack_seen = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }
    fn t(v: u64) -> SimTime {
        SimTime::ZERO + ms(v)
    }

    #[test]
    fn rack_reo_wnd_follows_tcp_rack_reo_wnd() {
        // RFC 8985 §6.2 step 4 / Linux tcp_rack_reo_wnd.
        let mut r = Rack::default();
        let (min_rtt, srtt) = (ms(40), ms(60));
        // No reordering seen: zero in recovery or with DupThresh SACKed segments.
        assert_eq!(r.reo_wnd(true, 0, 3, min_rtt, srtt), SimDuration::ZERO);
        assert_eq!(r.reo_wnd(false, 3, 3, min_rtt, srtt), SimDuration::ZERO);
        // Fewer SACKs: min_rtt / 4.
        assert_eq!(r.reo_wnd(false, 2, 3, min_rtt, srtt), ms(10));
        // Once reordering was seen: min_rtt / 4 * steps, even in recovery, capped at SRTT.
        r.reord_seen = 1;
        assert_eq!(r.reo_wnd(true, 5, 3, min_rtt, srtt), ms(10));
        r.reo_wnd_steps = 4;
        assert_eq!(r.reo_wnd(true, 5, 3, min_rtt, srtt), ms(40));
        r.reo_wnd_steps = 10;
        assert_eq!(r.reo_wnd(true, 5, 3, min_rtt, srtt), srtt);
    }

    #[test]
    fn rack_advance_keeps_latest_sent_and_skips_implausible_retransmits() {
        let mut r = Rack::default();
        r.advance(t(100), t(50), 2000, false, ms(40));
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt), (t(50), 2000, ms(50)));
        // An older segment delivered later does not move RACK back.
        r.advance(t(110), t(40), 1000, false, ms(40));
        assert_eq!(r.xmit_ts, t(50));
        // Same send time, higher end: it moves (RFC 8985 RACK_sent_after).
        r.advance(t(110), t(50), 3000, false, ms(40));
        assert_eq!((r.end_seq, r.rtt), (3000, ms(60)));
        // A retransmission ACKed sooner than min_rtt: probably the original's ACK; ignored.
        r.advance(t(120), t(100), 4000, true, ms(40));
        assert_eq!(r.xmit_ts, t(50));
        r.advance(t(150), t(100), 4000, true, ms(40));
        assert_eq!((r.xmit_ts, r.rtt), (t(100), ms(50)));
    }

    #[test]
    fn rack_dsack_widens_window_once_per_round_and_persists_16_recoveries() {
        // Linux tcp_rack_update_reo_wnd / tcp_dsack_seen.
        let mut r = Rack::default();
        r.on_dsack();
        assert!(
            !r.dsack_seen,
            "a DSACK without reordering seen does not count"
        );
        r.reord_seen = 1;
        r.on_dsack();
        r.update_reo_wnd(100, 200);
        assert_eq!(
            (r.reo_wnd_steps, r.reo_wnd_persist, r.last_delivered),
            (2, 16, 200)
        );
        // A second DSACK within the same round trip (prior_delivered < last_delivered): ignored.
        r.on_dsack();
        r.update_reo_wnd(150, 260);
        assert_eq!(r.reo_wnd_steps, 2);
        // Next round: widened again.
        r.on_dsack();
        r.update_reo_wnd(210, 320);
        assert_eq!(r.reo_wnd_steps, 3);
        for _ in 0..16 {
            r.update_reo_wnd(400, 500);
            assert_eq!(r.reo_wnd_steps, 3);
            r.on_recovery_exit();
        }
        r.update_reo_wnd(400, 500);
        assert_eq!(r.reo_wnd_steps, 1);
    }
}
