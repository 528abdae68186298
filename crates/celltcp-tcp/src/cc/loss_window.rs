//! The RFC 5681 loss-window rules that the loss-based controllers share, held once as a helper
//! they compose (STYLE.md B3: no base Reno to inherit from).
//!
//! - RFC 5681 §3.1 eq. 4: on a loss, `ssthresh = max(FlightSize / 2, 2 * SMSS)`; controllers
//!   choose their own reduction and apply the floor with [`ssthresh_floor`] (or the whole
//!   rule, with a decrease factor, with [`reno_ssthresh`]).
//! - §3.1: after a retransmission timeout, `cwnd = LW = 1 SMSS`, and, by the implementation
//!   note on eq. 4, a timeout that fires again before new data has been acknowledged holds
//!   ssthresh (the flight size is then the one retransmitted segment and would collapse it):
//!   [`LossWindow::on_rto`] says whether this timeout may recompute ssthresh,
//!   [`LossWindow::on_ack`] ends the run of repeated timeouts.
//! - Linux `tcp_enter_loss` (net/ipv4/tcp_input.c, "Reduce ssthresh if it has not yet been made
//!   inside this window"): the sender decides whether a timeout may reduce at all
//!   ([`RtoSsthresh`]); a timeout inside an unfinished fast recovery holds ssthresh.
//! - RFC 3522 / RFC 4015 (undo): the state from before the last reduction is kept
//!   ([`LossWindow::save`]) so that a congestion event later found spurious can be undone
//!   ([`LossWindow::saved`]; cwnd goes back to at least its prior value, [`undo_cwnd`]).

use super::RtoSsthresh;

/// The per-connection part of the rules: the state saved for an undo (`S`, the controller's
/// own tuple: cwnd and ssthresh, plus whatever else it restores) and whether a timeout is
/// pending.
#[derive(Clone, Copy, Debug)]
pub struct LossWindow<S: Copy> {
    prior: Option<S>,
    rto_pending: bool,
}

impl<S: Copy> Default for LossWindow<S> {
    fn default() -> Self {
        LossWindow {
            prior: None,
            rto_pending: false,
        }
    }
}

impl<S: Copy> LossWindow<S> {
    /// Keeps `prior`, the state before the reduction about to be made, for an undo.
    #[inline]
    pub fn save(&mut self, prior: S) {
        self.prior = Some(prior);
    }

    /// The state saved before the last reduction (none before the first): what an undo of a
    /// spurious congestion event restores (RFC 4015 §3.2).
    #[inline]
    pub fn saved(&self) -> Option<S> {
        self.prior
    }

    /// An ACK acknowledged `acked_bytes` of new data: a later timeout is a new loss event.
    #[inline]
    pub fn on_ack(&mut self, acked_bytes: u64) {
        if acked_bytes > 0 {
            self.rto_pending = false;
        }
    }

    /// The retransmission timer expired: true when this timeout may recompute ssthresh (RFC
    /// 5681 eq. 4), false for a repeated timeout of the same data, which holds it (note on
    /// eq. 4), and false whenever the sender says [`RtoSsthresh::Hold`] (Linux
    /// `tcp_enter_loss`: a timeout inside a fast recovery whose window is not yet
    /// acknowledged keeps the ssthresh, and the undo state, that recovery set). The caller
    /// saves its state for an undo and recomputes ssthresh only when this is true, and sets
    /// cwnd to the loss window, [`loss_window`], either way.
    #[inline]
    pub fn on_rto(&mut self, ss: RtoSsthresh) -> bool {
        let first = !self.rto_pending;
        self.rto_pending = true;
        first && ss == RtoSsthresh::Reduce
    }
}

/// RFC 5681 eq. 4's floor: an ssthresh of at least two segments.
#[inline]
pub fn ssthresh_floor(ssthresh: u64, mss: u64) -> u64 {
    ssthresh.max(2 * mss)
}

/// RFC 5681 eq. 4 with a decrease factor: `max(flight * beta, 2 * SMSS)` (beta = 1/2 in the
/// RFC), in whole bytes.
#[inline]
pub fn reno_ssthresh(flight: u64, beta: f64, mss: u64) -> u64 {
    ssthresh_floor((flight as f64 * beta) as u64, mss)
}

/// RFC 5681 §3.1: the loss window after a retransmission timeout, `LW = 1 SMSS`.
#[inline]
pub fn loss_window(mss: u64) -> u64 {
    mss
}

/// RFC 4015 §3.2 undo of a spurious reduction: cwnd goes back to at least `prior`.
#[inline]
pub fn undo_cwnd<W: PartialOrd>(cwnd: W, prior: W) -> W {
    if prior > cwnd {
        prior
    } else {
        cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn eq_4_halves_the_flight_with_a_two_segment_floor() {
        // RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 * SMSS).
        assert_eq!(reno_ssthresh(20 * MSS, 0.5, MSS), 10 * MSS);
        assert_eq!(reno_ssthresh(3 * MSS, 0.5, MSS), 2 * MSS);
        assert_eq!(
            reno_ssthresh(20_001, 0.5, MSS),
            10_000,
            "whole bytes, rounded down"
        );
        assert_eq!(reno_ssthresh(100 * MSS, 0.7, MSS), 70 * MSS);
        assert_eq!(ssthresh_floor(MSS, MSS), 2 * MSS);
        assert_eq!(loss_window(MSS), MSS);
    }

    #[test]
    fn repeated_rto_holds_ssthresh_until_new_data_is_acknowledged() {
        // RFC 5681 §3.1, note on eq. 4.
        use RtoSsthresh::Reduce;
        let mut lw = LossWindow::<(u64, u64)>::default();
        assert!(lw.on_rto(Reduce), "the first timeout recomputes ssthresh");
        assert!(!lw.on_rto(Reduce), "a repeated timeout holds it");
        lw.on_ack(0);
        assert!(
            !lw.on_rto(Reduce),
            "an ACK of no new data does not end the run"
        );
        lw.on_ack(MSS);
        assert!(
            lw.on_rto(Reduce),
            "after new data is acknowledged a timeout is a new event"
        );
    }

    #[test]
    fn a_timeout_the_sender_holds_never_recomputes_and_still_starts_a_run() {
        // Linux tcp_enter_loss: a timeout inside an unfinished fast recovery keeps ssthresh;
        // a repeated timeout after it holds too (RFC 5681 note on eq. 4 / `icsk_retransmits`).
        let mut lw = LossWindow::<(u64, u64)>::default();
        assert!(!lw.on_rto(RtoSsthresh::Hold), "held by the sender");
        assert!(
            !lw.on_rto(RtoSsthresh::Reduce),
            "the repeat of a held timeout holds too"
        );
        lw.on_ack(MSS);
        assert!(lw.on_rto(RtoSsthresh::Reduce));
    }

    #[test]
    fn undo_restores_what_was_saved_and_never_shrinks_cwnd() {
        // RFC 4015 §3.2: cwnd back to (at least) its value before the spurious reduction.
        let mut lw = LossWindow::<(u64, u64)>::default();
        assert_eq!(lw.saved(), None);
        lw.save((40 * MSS, u64::MAX));
        assert_eq!(lw.saved(), Some((40 * MSS, u64::MAX)));
        assert_eq!(undo_cwnd(20 * MSS, 40 * MSS), 40 * MSS);
        assert_eq!(undo_cwnd(50 * MSS, 40 * MSS), 50 * MSS);
        assert_eq!(undo_cwnd(20.5, 40.25), 40.25);
    }
}
