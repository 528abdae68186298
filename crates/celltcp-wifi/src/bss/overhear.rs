//! Frames of another BSS on the same channel, judged with the link that matters: the
//! overhearing node's own SNR from the frame's transmitter (positions give it), not the SNR of
//! the transmitting link ([`crate::medium`]).
//!
//! Across BSSs the whole-range assumption still holds for carrier sense: every node senses every
//! frame on the channel and freezes its counter. What the node's own SNR decides is what it
//! does after the exchange (IEEE 802.11-2020 §10.3.2.3.7, §10.3.2.4):
//! - a successful exchange ends with the ACK or BlockAck from the receiver: a node that decodes
//!   it (1 − PER at the control rate, from the receiver's position) resumes AIFS after it, one
//!   that does not resumes EIFS after it (a frame received in error);
//! - a data PPDU that failed at its receiver (no ACK follows): a node that decodes its first
//!   MPDU (1 − PER of that MPDU at the data rate, from the transmitter's position) sets its NAV
//!   from the Duration field to the end of the expected ACK and resumes AIFS after it; one that
//!   does not resumes EIFS after the PPDU (or after a NAV set by RTS/CTS, whichever is later);
//! - collisions are frames in error for everyone, as before.
//!
//! The transmitter's power and the path loss are those of the overhearing BSS's channel model;
//! the draws come from a random stream of the overhearing BSS of its own (`wifi-overhear`), so
//! the other streams, and every run without positions on a shared channel, are unchanged.

use celltcp_engine::rng::{component_id, component_rng, SimRng};
use celltcp_engine::SimTime;
use rand::Rng;

use super::{Bss, Heard, Node};
use crate::channel::Channel;
use crate::error::per;
use crate::phy::TxVector;

pub(crate) fn index(n: Node) -> usize {
    match n {
        Node::Ap => 0,
        Node::Sta(i) => i as usize + 1,
    }
}

/// Where a BSS's nodes are, and its stream for judging other BSSs' frames.
pub(crate) struct Geometry {
    /// Node k's `[x, y]`, metres (0 the AP).
    pos: Vec<[f64; 2]>,
    rng: SimRng,
}

/// The frames of one exchange, as another BSS's nodes receive them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frames {
    pub tx: usize,
    pub rx: usize,
    pub data: TxVector,
    pub first_mpdu_bytes: u32,
    pub ctrl: TxVector,
    pub resp_bytes: u32,
    /// End of the ACK or BlockAck (expected, when the data failed).
    pub resp_end: SimTime,
}

/// [`Frames`] with the transmitter's and the receiver's positions.
pub(crate) struct Placed {
    f: Frames,
    tx: [f64; 2],
    rx: [f64; 2],
}

impl<P> Bss<P> {
    /// The positions `[x, y]` (metres) of the AP and of each station, in a frame shared with the
    /// other BSSs of the channel: their nodes then judge this BSS's frames, and this BSS's nodes
    /// theirs, with their own SNR (`bss/overhear.rs`). `seed` and `name` name the random stream.
    pub fn set_positions(&mut self, ap: [f64; 2], stations: &[[f64; 2]], seed: u64, name: &str) {
        assert_eq!(stations.len(), self.n_stations(), "one position per station");
        let pos = std::iter::once(ap).chain(stations.iter().copied()).collect();
        self.geometry = Some(Box::new(Geometry { pos, rng: component_rng(seed, component_id("wifi-overhear", name)) }));
    }

    pub(crate) fn frames_at_positions(&self, f: Frames) -> Option<Placed> {
        let g = self.geometry.as_ref()?;
        Some(Placed { f, tx: g.pos[f.tx], rx: g.pos[f.rx] })
    }

    /// Another BSS's exchange, as this BSS's nodes heard it: with positions on both sides each
    /// node judges it with its own SNR; otherwise all take the transmitting link's verdict
    /// ([`Bss::overhear`]).
    pub(crate) fn overhear_other(&mut self, heard: &Heard, frames: Option<&Placed>) {
        let (Some(pl), Some(g), Channel::PathLoss { .. }) = (frames, self.geometry.as_mut(), self.cfg.channel) else {
            return self.overhear(heard);
        };
        let tm = self.timing;
        let width = self.cfg.width_mhz;
        let ch = self.cfg.channel;
        let dist = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
        let busy = match *heard {
            Heard::Success { end, busy } => {
                for (k, c) in self.nodes.iter_mut().enumerate() {
                    let snr = ch.snr_db(dist(pl.rx, g.pos[k]), width);
                    let ok = g.rng.gen::<f64>() >= per(&pl.f.ctrl, snr, pl.f.resp_bytes);
                    c.backoff.resume = if ok { tm.resume_after_success(end) } else { end + tm.eifs };
                }
                busy
            }
            Heard::Error { medium_end, nav_end, busy } => {
                for (k, c) in self.nodes.iter_mut().enumerate() {
                    let snr = ch.snr_db(dist(pl.tx, g.pos[k]), width);
                    let ok = g.rng.gen::<f64>() >= per(&pl.f.data, snr, pl.f.first_mpdu_bytes);
                    c.backoff.resume = if ok { pl.f.resp_end.max(medium_end) + tm.aifs } else { tm.resume_after_error(medium_end, nav_end) };
                }
                busy
            }
        };
        self.bss_stats.busy_ns += busy.as_nanos();
    }
}

#[cfg(test)]
mod tests {
    use celltcp_engine::SimDuration;

    use super::*;
    use crate::bss::{BssConfig, WifiOutput};
    use crate::channel::default_carrier_hz;
    use crate::phy::{txtime, Band, Standard};
    use crate::{dcf, Medium};

    const US: fn(u64) -> SimDuration = SimDuration::from_micros;

    /// BSS "one" (AP at the origin, its station 5 m away) and BSS "two" (AP at `x2`, its station
    /// 5 m beyond) on channel 36, 802.11a at 54 Mbit/s, ns-3's log-distance channel; with
    /// `positions` false neither has positions. One frame from station 0 of "one" at `t0`.
    fn two_bsss(x2: f64, positions: bool) -> (Medium<u32>, SimTime) {
        let mut cfg = BssConfig::new(Standard::A);
        cfg.channel = Channel::ns3_default(default_carrier_hz(Band::Ghz5));
        let mut m = Medium::new();
        for (name, ap) in [("one", [0.0, 0.0]), ("two", [x2, 0.0])] {
            let sta = [ap[0] + 5.0, 0.0];
            let mut b = Bss::new(cfg.clone(), &[5.0], 1, name);
            if positions {
                b.set_positions(ap, &[sta], 1, name);
            }
            m.add(b, Some(36)).unwrap();
        }
        let t0 = SimTime::from_millis(1);
        m.bss_mut(0).enqueue(t0, Node::Sta(0), Node::Ap, 1, 1500).unwrap();
        let mut out: Vec<(usize, WifiOutput<u32>)> = vec![];
        m.on_timer(t0, &mut out);
        (m, t0)
    }

    #[test]
    fn another_bss_judges_the_ack_with_its_own_snr() {
        let data = txtime(&TxVector::ofdm(7), 1536, SimDuration::ZERO);
        let ack = txtime(&TxVector::ofdm(4), dcf::ACK_BYTES, SimDuration::ZERO);
        let check = |x2: f64, positions: bool, eifs: bool| {
            let (m, t0) = two_bsss(x2, positions);
            let end = t0 + data + US(16) + ack;
            // DIFS 34 µs after an ACK decoded, EIFS 94 µs after one in error (§10.3.2.3.7)
            let want = end + if eifs { US(94) } else { US(34) };
            for k in 0..2 {
                assert_eq!(m.bss(1).nodes[k].backoff.resume, want, "x2 {x2} positions {positions} node {k}");
            }
            // the transmitting BSS's own bystander (its AP received) is unchanged: DIFS
            assert_eq!(m.bss(0).nodes[0].backoff.resume, end + US(34));
        };
        // 20 m away the ACK (24 Mbit/s, from "one"'s AP) is decoded; 300 m away the SNR is
        // 16.02 − 46.68 − 30·log10(300) + 93.97 = −11 dB and it is not
        check(20.0, true, false);
        check(300.0, true, true);
        // without positions the transmitting link's verdict stands for everyone
        check(300.0, false, false);
    }

    #[test]
    fn a_failed_frame_decoded_by_another_bss_sets_its_nav() {
        // the AP of "one" at 60 m from its station: 54 Mbit/s fails there (SNR ≈ 10 dB), while
        // "two", 5 m beyond that station, decodes the failed frame's header and defers to the
        // end of the expected ACK + DIFS instead of EIFS after the PPDU
        let mut cfg = BssConfig::new(Standard::A);
        cfg.channel = Channel::ns3_default(default_carrier_hz(Band::Ghz5));
        let mut m: Medium<u32> = Medium::new();
        let mut one = Bss::new(cfg.clone(), &[60.0], 1, "one");
        one.set_positions([0.0, 0.0], &[[60.0, 0.0]], 1, "one");
        let mut two = Bss::new(cfg, &[5.0], 1, "two");
        two.set_positions([65.0, 0.0], &[[70.0, 0.0]], 1, "two");
        m.add(one, Some(36)).unwrap();
        m.add(two, Some(36)).unwrap();
        let t0 = SimTime::from_millis(1);
        m.bss_mut(0).enqueue(t0, Node::Sta(0), Node::Ap, 1, 1500).unwrap();
        let mut out = vec![];
        m.on_timer(t0, &mut out);
        assert_eq!(m.bss(0).sta_stats(0).up.ppdu_failed, 1, "the frame should fail at 60 m");
        let de = t0 + txtime(&TxVector::ofdm(7), 1536, SimDuration::ZERO);
        let ack = txtime(&TxVector::ofdm(4), dcf::ACK_BYTES, SimDuration::ZERO);
        for k in 0..2 {
            assert_eq!(m.bss(1).nodes[k].backoff.resume, de + US(16) + ack + US(34), "node {k}");
        }
        // the AP of "one" saw a frame in error: EIFS
        assert_eq!(m.bss(0).nodes[0].backoff.resume, de + US(94));
    }
}
