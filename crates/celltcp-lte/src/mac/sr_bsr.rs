//! Uplink requests: scheduling request (TS 36.321 §5.4.4) and buffer status reporting
//! (§5.4.5), seen from each end of the air interface.
//!
//! - [`UeSrBsr`], in the UE MAC: a UE with uplink data that it has not asked for (no bytes
//!   reported and not yet granted, no grant pending) has a Regular BSR triggered and no
//!   resources to send it, so it sends a scheduling request on the PUCCH at its next SR
//!   opportunity, the subframes n with `(n − offset) mod period = 0` (TS 36.213 §10.1.5,
//!   `sr-ConfigIndex`). It keeps the uplink grants it received (DCI 0) until their PUSCH, and
//!   every transport block it sends carries a short BSR (TS 36.321 §6.1.3.1, [`BSR_BYTES`])
//!   reporting what is left in its buffer after the block.
//! - [`EnbBsrView`], in the eNB MAC: the eNB's idea of the UE's uplink buffer, from what
//!   crossed the air only: one SR asks for [`SR_GRANT_BYTES`] (enough for a BSR and a TCP
//!   ACK), a BSR sets it, each grant given takes its size off; and the grants it gave, whose
//!   PRBs are taken for their PUSCH.
//!
//! The UE counts what it asked for the same way (the reported bytes less the grants received
//! since; an SR counts as one [`SR_GRANT_BYTES`] grant's worth): both ends follow the same
//! messages, so the two counts agree without either reading the other.
//!
//! Timing (stated simplifications): the eNB hears an SR in the subframe it is sent and can
//! grant in that subframe (no SR decoding delay); the grant reaches the UE on the PDCCH of the
//! subframe it is given in, for the PUSCH k subframes later (TS 36.213 §8.0, Table 8-2); the
//! BSR of a block is taken into account from the block's PUSCH subframe on.

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimTime};

use super::Grant;

/// Bytes the eNB grants in answer to a scheduling request, before any buffer status report
/// has told it more: enough for the buffer status report and a TCP ACK.
pub const SR_GRANT_BYTES: u32 = 128;

/// Short BSR MAC control element and its subheader (TS 36.321 §6.1.3.1).
pub const BSR_BYTES: u32 = 2;

const TTI_NS: u64 = 1_000_000;

/// An uplink grant for the PUSCH of subframe `at`.
#[derive(Clone, Copy, Debug)]
pub struct UlGrant {
    pub at: SimTime,
    pub grant: Grant,
}

/// The UE MAC's scheduling request and buffer status state.
#[derive(Clone, Debug)]
pub struct UeSrBsr {
    period_ms: u64,
    offset_ms: u64,
    /// The SR opportunity the UE waits for.
    sr_at: Option<SimTime>,
    /// Bytes asked for (last BSR, or one SR) and not yet granted.
    asked_bytes: u32,
    /// Grants received, for their PUSCH subframe, in order.
    grants: VecDeque<UlGrant>,
}

impl UeSrBsr {
    /// SR opportunities every `period` (at least 1 ms) at subframe offset `offset_ms`.
    pub fn new(period: SimDuration, offset_ms: u64) -> Self {
        let period_ms = (period.as_nanos() / TTI_NS).max(1);
        UeSrBsr { period_ms, offset_ms, sr_at: None, asked_bytes: 0, grants: VecDeque::new() }
    }

    /// The TTI at `now` with `buffer_bytes` waiting in the UE's uplink buffer: whether the UE
    /// sends a scheduling request in it.
    pub fn on_tti(&mut self, now: SimTime, buffer_bytes: u32) -> bool {
        if self.asked_bytes > 0 || !self.grants.is_empty() || buffer_bytes == 0 {
            return false;
        }
        let now_ms = now.as_nanos() / TTI_NS;
        let p = self.period_ms;
        let due = match self.sr_at {
            None => {
                // The first opportunity at or after now: (n − offset) mod period = 0.
                let next = now_ms + (self.offset_ms % p + p - now_ms % p) % p;
                self.sr_at = Some(SimTime::from_millis(next));
                next == now_ms
            }
            Some(t) => t <= now,
        };
        if due {
            self.sr_at = None;
            self.asked_bytes = SR_GRANT_BYTES;
        }
        due
    }

    /// Random access completed (handover, TS 36.321 §5.1.4): the random access response
    /// carries an uplink grant, so the UE asks no more, as after a scheduling request.
    pub fn on_random_access_grant(&mut self) {
        self.sr_at = None;
        self.asked_bytes = SR_GRANT_BYTES;
    }

    /// A grant (DCI 0) received now for the PUSCH of `g.at`.
    pub fn on_grant(&mut self, g: UlGrant) {
        self.asked_bytes = self.asked_bytes.saturating_sub(g.grant.tb_bits / 8);
        self.grants.push_back(g);
    }

    /// Grants received whose PUSCH is still to come.
    pub fn grants(&self) -> impl Iterator<Item = &UlGrant> {
        self.grants.iter()
    }

    /// The next grant whose PUSCH is at or before `now`, taken.
    pub fn take_due_grant(&mut self, now: SimTime) -> Option<Grant> {
        if self.grants.front()?.at > now {
            return None;
        }
        self.grants.pop_front().map(|g| g.grant)
    }

    /// The BSR placed in a transport block being built, with `buffer_bytes` left after it
    /// (TS 36.321 §5.4.5): the value reported.
    pub fn bsr(&mut self, buffer_bytes: u32) -> u32 {
        self.asked_bytes = buffer_bytes;
        buffer_bytes
    }

    /// Whether anything is under way (an SR to send, bytes asked for, a grant pending).
    pub fn busy(&self) -> bool {
        self.asked_bytes > 0 || !self.grants.is_empty() || self.sr_at.is_some()
    }

    /// MAC reset (TS 36.321 §5.9, at handover): pending SR, BSR and grants are cancelled.
    pub fn reset(&mut self) {
        self.sr_at = None;
        self.asked_bytes = 0;
        self.grants.clear();
    }
}

/// The eNB MAC's view of one UE's uplink requests.
#[derive(Clone, Debug, Default)]
pub struct EnbBsrView {
    bytes: u32,
    /// Grants given whose PUSCH is still to come.
    granted: VecDeque<UlGrant>,
}

impl EnbBsrView {
    /// Bytes the UE is believed to wait to send.
    pub fn bytes(&self) -> u32 {
        self.bytes
    }

    /// A scheduling request was received.
    pub fn on_sr(&mut self) {
        self.bytes = SR_GRANT_BYTES;
    }

    /// A buffer status report was received.
    pub fn on_bsr(&mut self, bytes: u32) {
        self.bytes = bytes;
    }

    /// A grant was given.
    pub fn on_grant(&mut self, g: UlGrant) {
        self.bytes = self.bytes.saturating_sub(g.grant.tb_bits / 8);
        self.granted.push_back(g);
    }

    /// Grants given whose PUSCH is still to come.
    pub fn granted(&self) -> impl Iterator<Item = &UlGrant> {
        self.granted.iter()
    }

    /// The PUSCH of the grant at the front arrived (or its subframe passed).
    pub fn on_pusch(&mut self, now: SimTime) {
        while self.granted.front().is_some_and(|g| g.at <= now) {
            self.granted.pop_front();
        }
    }

    /// Whether the eNB expects anything from the UE.
    pub fn busy(&self) -> bool {
        self.bytes > 0 || !self.granted.is_empty()
    }

    /// The UE left (handover): forget it.
    pub fn reset(&mut self) {
        *self = EnbBsrView::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    fn grant(at: u64, tb_bits: u32) -> UlGrant {
        UlGrant { at: ms(at), grant: Grant { ue: 0, prb_mask: 0b11, n_prb: 2, mcs: 5, tb_bits } }
    }

    // TS 36.213 §10.1.5: SR opportunities are the subframes with (n − offset) mod period = 0.
    // With period 10 ms and offset 3, data arriving at 5 ms waits for 13 ms; data arriving on
    // an opportunity (23 ms) goes out at once.
    #[test]
    fn sr_waits_for_the_next_opportunity() {
        let mut u = UeSrBsr::new(SimDuration::from_millis(10), 3);
        let sent: Vec<u64> = (5..14).filter(|&t| u.on_tti(ms(t), 100)).collect();
        assert_eq!(sent, vec![13]);
        // asked for: no second SR until that is granted
        assert!(!u.on_tti(ms(23), 100));
        u.on_grant(grant(17, SR_GRANT_BYTES * 8));
        assert!(!u.on_tti(ms(17), 100), "a grant is pending");
        assert_eq!(u.take_due_grant(ms(16)).map(|g| g.tb_bits), None);
        assert_eq!(u.take_due_grant(ms(17)).map(|g| g.tb_bits), Some(1024));
        // the block reported an empty buffer; new data at 23 ms: SR on that opportunity
        assert_eq!(u.bsr(0), 0);
        assert!(!u.busy());
        assert!(u.on_tti(ms(23), 50));
    }

    // Both ends follow the same messages (SR, grants, BSR), so the UE's count of bytes asked
    // for and the eNB's view of its buffer agree at every step.
    #[test]
    fn ue_and_enb_counts_agree() {
        let mut ue = UeSrBsr::new(SimDuration::from_millis(5), 0);
        let mut enb = EnbBsrView::default();
        let mut buffer = 3000u32;
        for t in 0..200u64 {
            let now = ms(t);
            if ue.on_tti(now, buffer) {
                enb.on_sr();
            }
            if let Some(g) = ue.take_due_grant(now) {
                enb.on_pusch(now);
                buffer = buffer.saturating_sub(g.tb_bits / 8 - BSR_BYTES);
                enb.on_bsr(ue.bsr(buffer));
            }
            if enb.bytes() > 0 && t % 3 == 0 && enb.granted().count() < 2 {
                let g = grant(t + 4, (enb.bytes().min(400) + BSR_BYTES) * 8);
                enb.on_grant(g);
                ue.on_grant(g);
            }
            assert_eq!(ue.asked_bytes, enb.bytes(), "at {t} ms");
            assert_eq!(ue.grants().count(), enb.granted().count());
            if t == 20 {
                buffer += 700;
            }
        }
        assert_eq!(buffer, 0);
        assert!(!ue.busy() && !enb.busy());
    }
}
