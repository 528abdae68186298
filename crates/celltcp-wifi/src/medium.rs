//! Several BSSs on one channel: one medium, one contention domain.
//!
//! Overlapping BSSs on the same channel share the air (IEEE 802.11-2020 §10.3.2.1: carrier
//! sense does not look at the BSSID). The model keeps the whole-range assumption of `bss.rs`:
//! every node of every BSS on the medium hears every other. So the contenders of all those
//! BSSs count their backoff down together; those reaching zero in the same slot collide, across
//! BSSs as within one; a lone transmitter's exchange is heard by all the others, which set their
//! NAV from its Duration fields (§10.3.2.4, the same for a frame of another BSS, §26.2.4 only
//! adds a second NAV for 802.11ax) and resume AIFS after its ACK, or EIFS after a frame in error
//! (§10.3.2.3.7); every BSS's busy time counts every frame on the medium. Each BSS keeps its own
//! MAC timing, queues, rate control and counters; `txops` and `collisions` of a BSS count the
//! exchanges one of its own nodes started. A contender whose counter reaches zero within
//! aCCATime (4 µs) after another's PPDU starts, in its own BSS or another, has not sensed it
//! and collides with it ([`start_exchange`]); BSSs whose slot grids drift apart (EIFS after
//! frames they cannot decode, below) meet this. When both BSSs have positions (in one coordinate
//! frame, [`crate::Bss::set_positions`]), a node of one BSS judges the other's frames with its
//! own SNR from their transmitter, not the transmitting link's: it resumes AIFS after an ACK it
//! decodes, EIFS after one it does not, and takes a NAV from a failed data frame it decodes
//! (`bss/overhear.rs`); it still senses every frame on the channel. A BSS with hidden nodes ([`crate::hears`]) must
//! have its channel to itself ([`Medium::add`] refuses it on a shared one): the per-node
//! carrier sense of `bss/hidden.rs` does not reach across BSSs yet.
//!
//! [`start_exchange`] lays out one medium access over the BSSs of one medium (a lone BSS is a
//! medium of one: [`crate::Bss::on_timer`] calls it with itself); [`Medium`] holds the BSSs of a
//! run, groups them by channel, and drives each group.

use celltcp_engine::SimTime;

use crate::bss::{Bss, Plan, WifiOutput};
use crate::dcf::CCA_TIME;
use crate::phy::{Band, Standard};

/// The contenders of `bsss` (the BSSs on one medium) whose counters reach zero at `t` (the
/// earliest) access the medium, and so do those reaching zero within aCCATime after it
/// ([`CCA_TIME`], IEEE 802.11-2020 §17.3.10.6: their CCA has not reported the first PPDU yet;
/// the per-PPDU path of `bss/hidden.rs` applies the same rule): all others freeze at `t`; one
/// transmitter's exchange is laid out in its BSS and heard by the others; two or more collide,
/// each PPDU from its own start.
pub(crate) fn start_exchange<P>(bsss: &mut [&mut Bss<P>], t: SimTime) {
    let txs: Vec<Vec<(usize, SimTime)>> = bsss.iter().map(|b| b.transmitters_within(t, t + CCA_TIME)).collect();
    debug_assert!(txs.iter().flatten().any(|&(_, r)| r == t));
    for b in bsss.iter_mut() {
        b.freeze_all(t);
    }
    let mut plans: Vec<Vec<Plan>> = bsss.iter_mut().zip(&txs).map(|(b, ks)| ks.iter().map(|&(k, r)| b.plan(r, k)).collect()).collect();
    let total: usize = plans.iter().map(Vec::len).sum();
    if total > 1 {
        // collision: everything on the air is lost; the medium is busy to the longest frame
        let medium_end = bsss.iter().zip(&plans).flat_map(|(b, ps)| ps.iter().map(|p| b.own_end(p))).max().expect("transmitters");
        for (b, ps) in bsss.iter_mut().zip(plans) {
            b.collide(t, medium_end, ps);
        }
        return;
    }
    let i = plans.iter().position(|ps| !ps.is_empty()).expect("a transmitter");
    let p = plans[i].pop().expect("a transmitter");
    let heard = bsss[i].transmit(t, p);
    // with positions, each node of the other BSSs judges the frames with its own SNR
    let frames = bsss[i].last_frames.take().and_then(|f| bsss[i].frames_at_positions(f));
    for (j, b) in bsss.iter_mut().enumerate() {
        if j != i {
            b.overhear_other(&heard, frames.as_ref());
        }
    }
}

/// Advances the BSSs of one medium to `now`: exchanges in flight end (in time order), then the
/// next access starts, until neither is due. Outputs are tagged with the BSS's index in `bsss`.
fn run_medium<P>(bsss: &mut [&mut Bss<P>], now: SimTime, scratch: &mut Vec<WifiOutput<P>>, out: &mut Vec<(usize, WifiOutput<P>)>, ids: &[usize]) {
    loop {
        if let Some((at, i)) = bsss.iter().enumerate().filter_map(|(i, b)| b.inflight_at.map(|a| (a, i))).min() {
            if at > now {
                break;
            }
            bsss[i].finish(at, scratch);
            bsss[i].refresh();
            out.extend(scratch.drain(..).map(|o| (ids[i], o)));
            continue;
        }
        match bsss.iter().filter_map(|b| b.next_tx).min() {
            Some(t) if t <= now => {
                start_exchange(bsss, t);
                for b in bsss.iter_mut() {
                    b.refresh();
                }
            }
            _ => break,
        }
    }
    for b in bsss.iter_mut() {
        b.note_event(now);
    }
}

/// Every BSS of a run, grouped into media by channel.
pub struct Medium<P> {
    bsss: Vec<Bss<P>>,
    /// The BSSs of each medium, by index.
    groups: Vec<Vec<usize>>,
    /// (band, channel number) of each group that has one.
    keys: Vec<Option<(Band, u32)>>,
    scratch: Vec<WifiOutput<P>>,
}

impl<P> Default for Medium<P> {
    fn default() -> Self {
        Medium { bsss: Vec::new(), groups: Vec::new(), keys: Vec::new(), scratch: Vec::new() }
    }
}

impl<P> Medium<P> {
    pub fn new() -> Medium<P> {
        Medium::default()
    }

    /// Adds `bss` on channel `channel` of its band (`None`: a channel of its own) and returns its
    /// index. BSSs on the same channel of the same band share one medium; they must use the same
    /// standard (the same slot, SIFS and PHY), else the error says which.
    pub fn add(&mut self, bss: Bss<P>, channel: Option<u32>) -> Result<usize, String> {
        let b = self.bsss.len();
        let key = channel.map(|c| (bss.config().band, c));
        match key.and_then(|k| self.keys.iter().position(|&x| x == Some(k))) {
            Some(g) => {
                let first = &self.bsss[self.groups[g][0]];
                if bss.hears().is_some() || first.hears().is_some() {
                    return Err(format!("channel {} is shared with another BSS, and a BSS with hidden nodes (stations that do not all sense each other) must have its channel to itself", channel.unwrap_or(0)));
                }
                let (s0, s1): (Standard, Standard) = (first.config().standard, bss.config().standard);
                if s0 != s1 {
                    return Err(format!("channel {} is shared with a {} BSS, and BSSs on one channel must use the same standard, not {}", channel.unwrap_or(0), s0.name(), s1.name()));
                }
                self.groups[g].push(b);
            }
            None => {
                self.groups.push(vec![b]);
                self.keys.push(key);
            }
        }
        self.bsss.push(bss);
        Ok(b)
    }

    pub fn len(&self) -> usize {
        self.bsss.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bsss.is_empty()
    }
    pub fn bss(&self, b: usize) -> &Bss<P> {
        &self.bsss[b]
    }
    pub fn bss_mut(&mut self, b: usize) -> &mut Bss<P> {
        &mut self.bsss[b]
    }
    /// The indices of the BSSs sharing a medium with `b` (itself included).
    pub fn cochannel(&self, b: usize) -> &[usize] {
        self.groups.iter().find(|g| g.contains(&b)).map_or(&[], |g| g.as_slice())
    }

    /// The earliest deadline of any BSS.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.bsss.iter().filter_map(|b| b.next_deadline()).min()
    }

    /// Advances every medium whose deadline has come to `now`; outputs are tagged with their
    /// BSS's index.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<(usize, WifiOutput<P>)>) {
        for g in &self.groups {
            if g.iter().filter_map(|&b| self.bsss[b].next_deadline()).min().is_none_or(|t| t > now) {
                continue;
            }
            if let [b] = g[..] {
                self.bsss[b].on_timer(now, &mut self.scratch);
                out.extend(self.scratch.drain(..).map(|o| (b, o)));
                continue;
            }
            let mut refs: Vec<&mut Bss<P>> = self.bsss.iter_mut().enumerate().filter(|(i, _)| g.contains(i)).map(|(_, b)| b).collect();
            run_medium(&mut refs, now, &mut self.scratch, out, g);
        }
    }
}
