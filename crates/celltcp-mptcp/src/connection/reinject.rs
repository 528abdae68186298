//! Reinjection and subflow failure of [`MptcpConnection`]: a subflow whose retransmission timer
//! fires gives its data not yet DATA_ACKed back to the other subflows and is stale until it makes
//! progress (upstream Linux `mptcp_retransmit_timer`, stale subflows); a subflow reset, aborted or
//! whose address is removed fails and gives back all its data.

use super::*;

impl MptcpConnection {
    /// Subflow `i` failed: all its data not DATA_ACKed goes back to the reinjection queue.
    pub(super) fn fail(&mut self, i: usize) {
        if self.subflows[i].state == SubflowState::Failed {
            return;
        }
        self.subflows[i].state = SubflowState::Failed;
        self.stats.subflows_failed += 1;
        self.reinject_from(i, 0);
        self.subflows[i].ep.close();
    }

    /// Queues again the data of subflow `i` at subflow offsets >= `from` (not yet DATA_ACKed).
    pub(super) fn reinject_from(&mut self, i: usize, from: u64) {
        let una = self.data_una;
        let mut ranges = Vec::new();
        for m in self.subflows[i].tx_maps.iter_mut() {
            if m.ssn_off + m.len > from && !m.reinjected && m.dsn_off + m.len > una {
                m.reinjected = true;
                ranges.push((m.dsn_off.max(una), m.dsn_off + m.len));
            }
        }
        for (a, b) in ranges {
            self.stats.reinjected_bytes += b - a;
            self.reinject.push_back((a, b));
        }
        let mut v: Vec<_> = self.reinject.drain(..).collect();
        v.sort_unstable();
        self.reinject = v.into();
    }

    /// After any input or timer on subflow `i`: timeouts make it stale and reinject its
    /// outstanding data; a reset or abort fails it.
    pub(super) fn check_health(&mut self, i: usize) {
        let s = &mut self.subflows[i];
        if s.state == SubflowState::Failed {
            return;
        }
        let sample = s.sample();
        let timeouts = s.ep.stats().timeouts;
        if s.ep.was_reset() || (s.ep.is_closed() && !(self.data_fin_acked && self.fin_rcvd)) {
            self.fail(i);
            return;
        }
        // OLIA's inter-loss distances
        let losses = s.ep.stats().fast_recoveries + timeouts;
        if losses > s.losses_seen {
            s.losses_seen = losses;
            s.loss_marks = [s.loss_marks[1], sample.delivered_bytes];
        }
        if s.stale && sample.snd_una > s.stale_una {
            s.stale = false;
        }
        if timeouts > s.timeouts_seen {
            s.timeouts_seen = timeouts;
            if s.state == SubflowState::Established {
                s.stale = true;
                s.stale_una = sample.snd_una;
                let from = sample.snd_una.saturating_sub(1);
                if self.subflows.iter().any(|t| t.usable() && !t.stale) {
                    self.reinject_from(i, from);
                }
            }
        }
        let una = self.data_una;
        // forget mappings acknowledged at both levels
        let s = &mut self.subflows[i];
        let acked = sample.snd_una.saturating_sub(1);
        while let Some(m) = s.tx_maps.front() {
            if m.ssn_off + m.len <= acked && m.dsn_off + m.len <= una {
                s.tx_maps.pop_front();
            } else {
                break;
            }
        }
    }
}
