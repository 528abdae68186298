//! The device seam: what carries a packet that leaves a node's interface.
//!
//! A link direction (the transmit side of an interface towards one neighbour) has a
//! [`Device`]:
//!
//! - [`Device::Link`]: a point-to-point device of its own, a rate link or a Mahimahi trace link
//!   ([`AnyLink`], `celltcp-net/src/link.rs`), served by `Ev::LinkService`;
//! - [`Device::Attached`]: an attachment point (a *port*) of a shared medium. A medium serves many
//!   interfaces at once: one LTE RAN carries the downlink and uplink of every UE of every cell,
//!   one Wi-Fi BSS carries the AP and all its stations. Media sit in the world's arena and are
//!   dispatched through the closed enum [`AnyMedium`] behind the small trait [`Medium`]:
//!   [`Medium::send`] at a port, [`Medium::next_deadline`], [`Medium::on_timer`] with the
//!   deliveries and losses out, and [`Medium::sample`] / [`Medium::summary`] for the metrics.
//!
//! The run loop knows only this trait: `World::dir_send` hands a packet to its direction's
//! device; one event, `Ev::MediumTimer(m)`, runs medium `m` when its deadline comes; a
//! [`MediumOutput::Deliver`] arrives at its node as a packet from a wire would (forwarded or
//! delivered locally), a [`MediumOutput::Lost`] is counted against its link direction and flow.
//!
//! # Adding a device (Wi-Fi, say)
//!
//! 1. One file, `src/wifi.rs`, holding a struct (e.g. `WifiMedium { bss: Bss<Packet>, .. }`) that
//!    maps ports to the technology's own endpoints (a port per direction AP→station and
//!    station→AP) and back (a delivery names the link direction it went over and the node it
//!    reaches), and implements [`Medium`].
//! 2. One variant in [`AnyMedium`] and one arm in each method of its `Medium` impl below.
//! 3. In `plan.rs`, a [`crate::plan::DirKind`] for the directions it carries, and in
//!    `World::build` the medium pushed into `World::media` and those directions made
//!    [`Device::Attached`] to it (see how `[lte]` does both).
//!
//! Nothing in the run loop, the IP layer or another device changes.

use celltcp_engine::SimTime;
use celltcp_net::link::{AnyLink, LinkStats};
use celltcp_net::Packet;
use serde_json::Value;

use crate::cellular::LteMedium;
use crate::wlan::WifiMedium;
use crate::sinks::Sinks;

/// What carries the packets of one link direction.
// The link is held inline, as it was before the seam: a box would add a pointer chase to every
// packet on the wired path; the few attached directions waste the space.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Device {
    /// A point-to-point device of its own.
    Link(AnyLink),
    /// Port `port` of shared medium `medium` (an index into `World::media`).
    Attached { medium: u32, port: u32 },
}

impl Device {
    /// The point-to-point link's counters; a shared medium keeps its own (in its summary).
    pub fn stats(&self) -> LinkStats {
        match self {
            Device::Link(l) => l.stats(),
            Device::Attached { .. } => LinkStats::default(),
        }
    }

    /// Busy fraction of `[0, now]` of a point-to-point link (0 for a port of a medium).
    pub fn utilisation(&self, now: SimTime) -> f64 {
        match self {
            Device::Link(l) => l.utilisation(now),
            Device::Attached { .. } => 0.0,
        }
    }
}

/// What a medium hands back from [`Medium::on_timer`].
pub(crate) enum MediumOutput {
    /// `pkt` went over link direction `dir` and reaches node `node` now.
    Deliver { dir: u32, node: u32, pkt: Packet },
    /// `pkt`, sent on link direction `dir`, is lost (retries exhausted, discarded).
    Lost { dir: u32, pkt: Packet },
    /// `pkt` goes on to port `port` of medium `medium` now, not through IP: LWA's WLAN leg, a
    /// PDCP PDU that the LTE RAN hands over Xw to the AP's BSS, and that the BSS hands back to
    /// the UE's PDCP (`cellular.rs`, docs/lwa.md). A refusal counts as a drop of `dir`.
    Relay { dir: u32, medium: u32, port: u32, pkt: Packet },
}

/// A shared medium with attachment points (ports). Sans-IO: every call takes `now`.
pub(crate) trait Medium {
    /// Offers `pkt` at `port`. A refused packet (a full buffer) is handed back and counted as
    /// a drop of the port's link direction.
    fn send(&mut self, now: SimTime, port: u32, pkt: Packet) -> Result<(), Packet>;
    /// The earliest time not before `after` at which [`Medium::on_timer`] has work, if any.
    /// Asked after every `send` (with `after = now`) and every `on_timer` (with `after` just
    /// past `now`).
    fn next_deadline(&mut self, after: SimTime) -> Option<SimTime>;
    /// Advances the medium to `now`, pushing what it delivers or loses into `out`, in order.
    fn on_timer(&mut self, now: SimTime, out: &mut Vec<MediumOutput>);
    /// Pushes the medium's time-series rows for a sample at `now`.
    fn sample(&mut self, now: SimTime, sinks: &mut Sinks);
    /// The medium's section of `summary.json` (its key and value) over a run of `secs`.
    fn summary(&self, secs: f64) -> Option<(&'static str, Value)>;
}

/// The shared media of a run (closed-enum dispatch, as `AnyCc` and `AnyLink`).
pub(crate) enum AnyMedium {
    /// An LTE RAN (every cell and UE of `[lte]`).
    Lte(Box<LteMedium>),
    /// Every Wi-Fi BSS of `[[wifi]]` (`wlan.rs`).
    Wifi(Box<WifiMedium>),
}

impl Medium for AnyMedium {
    #[inline]
    fn send(&mut self, now: SimTime, port: u32, pkt: Packet) -> Result<(), Packet> {
        match self {
            AnyMedium::Lte(m) => m.send(now, port, pkt),
            AnyMedium::Wifi(m) => m.send(now, port, pkt),
        }
    }
    #[inline]
    fn next_deadline(&mut self, after: SimTime) -> Option<SimTime> {
        match self {
            AnyMedium::Lte(m) => m.next_deadline(after),
            AnyMedium::Wifi(m) => m.next_deadline(after),
        }
    }
    fn on_timer(&mut self, now: SimTime, out: &mut Vec<MediumOutput>) {
        match self {
            AnyMedium::Lte(m) => m.on_timer(now, out),
            AnyMedium::Wifi(m) => m.on_timer(now, out),
        }
    }
    fn sample(&mut self, now: SimTime, sinks: &mut Sinks) {
        match self {
            AnyMedium::Lte(m) => m.sample(now, sinks),
            AnyMedium::Wifi(m) => m.sample(now, sinks),
        }
    }
    fn summary(&self, secs: f64) -> Option<(&'static str, Value)> {
        match self {
            AnyMedium::Lte(m) => m.summary(secs),
            AnyMedium::Wifi(m) => m.summary(secs),
        }
    }
}

/// A medium in the world's arena, with the time of its pending timer event.
pub(crate) struct MediumSlot {
    pub medium: AnyMedium,
    pub timer_at: Option<SimTime>,
}

impl crate::world::World {
    /// Hands `pkt` to port `port` of medium `m` (for link direction `d`) and asks the medium
    /// when it next has work.
    #[inline]
    pub(crate) fn medium_send(&mut self, now: SimTime, d: usize, m: u32, port: u32, pkt: Packet) {
        if let Some(p) = self.dirs[d].pcap {
            // as the sending node hands it to the medium (a UE's uplink capture)
            self.capture_cold(p, now, &pkt);
        }
        if let Err(p) = self.media[m as usize].medium.send(now, port, pkt) {
            self.count_drop(d, &p);
            return;
        }
        self.medium_arm(now, m);
    }

    /// Queues medium `m`'s timer event for its next deadline not before `after`, unless one is
    /// pending no later (a stale event finds `timer_at` changed and does nothing).
    pub(crate) fn medium_arm(&mut self, after: SimTime, m: u32) {
        let slot = &mut self.media[m as usize];
        if let Some(t) = slot.medium.next_deadline(after) {
            if slot.timer_at.is_none_or(|old| t < old) {
                slot.timer_at = Some(t);
                self.q.push(t, crate::world::Ev::MediumTimer(m));
            }
        }
    }

    /// Medium `m`'s timer event: runs it and hands what it delivers to the nodes.
    pub(crate) fn medium_timer(&mut self, now: SimTime, m: u32) {
        let slot = &mut self.media[m as usize];
        if slot.timer_at != Some(now) {
            return;
        }
        slot.timer_at = None;
        let mut out = std::mem::take(&mut self.medium_out);
        slot.medium.on_timer(now, &mut out);
        for o in out.drain(..) {
            match o {
                MediumOutput::Deliver { dir, pkt, .. } if self.dirs[dir as usize].down => self.count_drop(dir as usize, &pkt),
                MediumOutput::Deliver { dir, node, pkt } => {
                    self.dirs[dir as usize].delivered_pkts += 1;
                    if let Some(p) = self.dirs[dir as usize].pcap_rx {
                        // as the receiving node sees it (a UE's capture)
                        self.capture_cold(p, now, &pkt);
                    }
                    self.arrive(now, node as usize, pkt);
                }
                MediumOutput::Lost { dir, pkt } => {
                    self.dirs[dir as usize].lost_pkts += 1;
                    self.count_loss(&pkt);
                }
                MediumOutput::Relay { dir, medium, port, pkt } => self.medium_send(now, dir as usize, medium, port, pkt),
            }
        }
        self.medium_out = out;
        self.medium_arm(now + celltcp_engine::SimDuration::from_nanos(1), m);
    }
}
