//! Proportional Rate Reduction (RFC 6937), as Linux runs it in `tcp_cwnd_reduction`
//! (net/ipv4/tcp_input.c, Linux 6.x): the sending rule of fast recovery with
//! `recovery = "linux"`.
//!
//! On entering recovery (`tcp_init_cwnd_reduction`) the controller sets ssthresh and PRR
//! remembers `prior_cwnd` (RFC 6937 `RecoverFS`); `prr_delivered` and `prr_out` start at zero.
//! On every ACK in recovery that delivers data (cumulatively or by SACK):
//!
//! - `prr_delivered += newly_acked_sacked`;
//! - while the pipe is above ssthresh (RFC 6937 §3.1, the proportional part):
//!   `sndcnt = ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out`;
//! - otherwise (the Slow Start Reduction Bound, PRR-SSRB, RFC 6937 §3.1):
//!   `sndcnt = min(ssthresh - pipe, max(prr_delivered - prr_out, newly_acked_sacked) + x)` where
//!   Linux adds one segment (`x = 1 MSS`) when the ACK advanced SND.UNA and marked nothing
//!   newly lost, and none otherwise;
//! - `sndcnt >= 1 MSS` while nothing has been sent in this recovery (the fast retransmit);
//! - `cwnd = pipe + sndcnt`.
//!
//! Linux counts segments; this works in bytes with one MSS for one segment and rounds the
//! proportional share up to whole segments, which gives the kernel's windows when every
//! segment is full-sized. `prr_out` counts every byte sent during
//! recovery (new data and retransmissions, Linux `tcp_event_new_data_sent` /
//! `tcp_retransmit_skb`). BBR is not reduced by PRR (Linux calls `tcp_cwnd_reduction` only for
//! controllers without `cong_control`).

/// PRR state for one recovery episode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// RFC 6937 `RecoverFS`; Linux `prior_cwnd`: cwnd when recovery began (bytes).
    pub prior_cwnd: u64,
    /// RFC 6937 `prr_delivered`: bytes delivered to the receiver since recovery began.
    pub prr_delivered: u64,
    /// RFC 6937 `prr_out`: bytes sent since recovery began.
    pub prr_out: u64,
}

impl Prr {
    /// Linux `tcp_init_cwnd_reduction`.
    pub fn start(prior_cwnd: u64) -> Self {
        Prr {
            prior_cwnd: prior_cwnd.max(1),
            prr_delivered: 0,
            prr_out: 0,
        }
    }

    /// `bytes` (new data or a retransmission) went out during recovery.
    pub fn on_sent(&mut self, bytes: u64) {
        self.prr_out += bytes;
    }

    /// One ACK in recovery (Linux `tcp_cwnd_reduction`): returns the new cwnd in bytes, or
    /// `None` when the ACK delivered nothing (cwnd unchanged). `pipe` is the bytes in flight
    /// after the ACK was processed.
    pub fn on_ack(
        &mut self,
        newly_acked_sacked: u64,
        pipe: u64,
        ssthresh: u64,
        una_advanced: bool,
        newly_lost: bool,
        mss: u64,
    ) -> Option<u64> {
        if newly_acked_sacked == 0 {
            return None;
        }
        self.prr_delivered += newly_acked_sacked;
        let sndcnt = if pipe > ssthresh {
            // RFC 6937 §3.1: proportional reduction, rounded up to whole segments as the
            // kernel's packet arithmetic does.
            let share = (ssthresh as u128 * self.prr_delivered as u128)
                .div_ceil(self.prior_cwnd as u128) as u64;
            (share.div_ceil(mss.max(1)) * mss.max(1)).saturating_sub(self.prr_out)
        } else {
            // PRR-SSRB; Linux adds a segment on an ACK that advanced SND.UNA without new loss.
            let mut s = self
                .prr_delivered
                .saturating_sub(self.prr_out)
                .max(newly_acked_sacked);
            if una_advanced && !newly_lost {
                s += mss;
            }
            s.min(ssthresh - pipe)
        };
        // Force the fast retransmit on entering recovery.
        let sndcnt = if self.prr_out == 0 {
            sndcnt.max(mss)
        } else {
            sndcnt
        };
        Some(pipe + sndcnt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Linux `tcp_cwnd_reduction` in segments, written from the kernel's rule as an independent
    /// oracle (integer packets, the kernel's own rounding).
    #[allow(clippy::too_many_arguments)]
    fn linux_sndcnt(
        ssthresh: i64,
        pipe: i64,
        prior_cwnd: i64,
        prr_delivered: i64,
        prr_out: i64,
        newly: i64,
        una_adv: bool,
        lost: bool,
    ) -> i64 {
        let delta = ssthresh - pipe;
        let mut sndcnt = if delta < 0 {
            (ssthresh * prr_delivered + prior_cwnd - 1) / prior_cwnd - prr_out
        } else {
            let mut s = (prr_delivered - prr_out).max(newly);
            if una_adv && !lost {
                s += 1;
            }
            delta.min(s)
        };
        sndcnt = sndcnt.max(if prr_out > 0 { 0 } else { 1 });
        pipe + sndcnt
    }

    #[test]
    fn prr_rfc6937_example_halves_over_one_rtt() {
        // RFC 6937 §5 (Figure 1, Reno halving): cwnd 20 segments, ssthresh 10, one loss, then
        // one segment delivered per ACK. PRR sends one segment for every two delivered, so the
        // pipe falls from 19 to ssthresh smoothly instead of stalling then bursting.
        let mut p = Prr::start(20 * MSS);
        let ssthresh = 10 * MSS;
        let mut pipe = 19 * MSS; // one segment lost, 19 in flight
        let mut sent = Vec::new();
        for _ in 0..19 {
            pipe -= MSS; // the ACK delivered one segment
            let cwnd = p.on_ack(MSS, pipe, ssthresh, false, false, MSS).unwrap();
            let n = cwnd.saturating_sub(pipe) / MSS;
            sent.push(n);
            p.on_sent(n * MSS);
            pipe += n * MSS;
        }
        // ceil(10 * k / 20) - prr_out: 1, 0, 1, 0, ...
        assert_eq!(&sent[..6], &[1, 0, 1, 0, 1, 0]);
        assert_eq!(p.prr_out, (19 * 10u64).div_ceil(20) * MSS);
        assert!(pipe <= ssthresh);
    }

    #[test]
    fn prr_matches_linux_tcp_cwnd_reduction() {
        // A scripted episode of mixed ACKs (cumulative, SACK-only, multi-segment, with and without
        // new losses) against the kernel's integer rule.
        let (prior, ssth) = (40i64, 28i64);
        let mut p = Prr::start(prior as u64 * MSS);
        let (mut delivered, mut out) = (0i64, 0i64);
        let script: [(i64, i64, bool, bool, i64); 9] = [
            // (newly delivered, pipe after the ACK, una advanced, newly lost, segments sent)
            (1, 36, false, true, 1),
            (2, 35, false, false, 1),
            (1, 33, true, false, 1),
            (3, 31, true, false, 2),
            (1, 29, false, false, 1),
            (4, 26, true, false, 3),
            (1, 25, true, true, 2),
            (2, 24, false, false, 2),
            (5, 20, true, false, 6),
        ];
        for (newly, pipe, adv, lost, send) in script {
            let ours = p
                .on_ack(
                    newly as u64 * MSS,
                    pipe as u64 * MSS,
                    ssth as u64 * MSS,
                    adv,
                    lost,
                    MSS,
                )
                .unwrap();
            delivered += newly;
            let want = linux_sndcnt(ssth, pipe, prior, delivered, out, newly, adv, lost);
            assert_eq!(
                ours,
                want as u64 * MSS,
                "pipe {pipe}, delivered {delivered}"
            );
            let n = send.min(want - pipe).max(0);
            p.on_sent(n as u64 * MSS);
            out += n;
        }
    }

    #[test]
    fn prr_forces_fast_retransmit_and_ignores_empty_acks() {
        let mut p = Prr::start(10 * MSS);
        assert_eq!(p.on_ack(0, 9 * MSS, 7 * MSS, false, false, MSS), None);
        // pipe 9 > ssthresh 7: ceil(7 * 1 / 10) = 1 segment, the retransmission.
        assert_eq!(
            p.on_ack(MSS, 9 * MSS, 7 * MSS, false, true, MSS),
            Some(10 * MSS)
        );
        // Even when the proportional share rounds to zero, the first send is allowed.
        let mut q = Prr::start(100 * MSS);
        assert_eq!(
            q.on_ack(1, 99 * MSS, 50 * MSS, false, true, MSS),
            Some(100 * MSS)
        );
    }
}
