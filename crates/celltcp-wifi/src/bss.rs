//! The BSS coordinator: one AP and N stations on one channel, by default every one of them in
//! range of every other (a single collision domain). When not every node senses every other
//! ([`Bss::set_hears`], [`crate::hears`]), the BSS runs the per-PPDU path of `bss/hidden.rs`
//! instead of the layout described below: carrier sense per node, hidden stations, RTS/CTS and
//! NAV protecting against them. Other BSSs may share the
//! channel ([`crate::medium`]): their nodes then contend, collide and defer with these as if
//! they were one BSS; this file holds the pieces of an exchange (`plan`, `collide`, `transmit`,
//! `overhear`, `finish`) and `medium::start_exchange` puts them together.
//!
//! Each node (the AP and each station) is one contender ([`crate::dcf`]): DCF for 802.11a/g,
//! EDCA best effort for 802.11n/ac. The AP keeps one queue per station and serves the stations
//! with data round robin, one receiver per PPDU; a station keeps one queue toward the AP (frames
//! for another station are relayed by the AP, IEEE 802.11-2016 §4.3.5.2 distribution). Queues
//! hold MSDUs up to a limit (default [`DEFAULT_QUEUE_LIMIT`], Linux's txqueuelen).
//!
//! The model jumps from one medium event to the next. When the medium falls idle, each
//! contender knows when its AIFS (or EIFS) ends and how many backoff slots it still has to count,
//! so the next transmission is at the earliest `resume + slots·aSlotTime` among the contenders
//! with data; all contenders reaching zero at that instant or within aCCATime (4 µs,
//! [`crate::dcf::CCA_TIME`], §17.3.10.6) after it transmit too and collide (§10.3.2.1: carrier
//! sense cannot tell a PPDU that starts in the same slot, nor report one before aCCATime; on
//! one slot grid only the same instant counts, and grids shifted by less than 4 µs occur after
//! collisions, where the transmitters resume AckTimeout + AIFS and the others EIFS after the
//! medium, 1 µs apart modulo the slot for 802.11a, or in other BSSs of the channel). At the first start
//! the others freeze their counters ([`crate::dcf::Backoff::freeze`]). The whole frame exchange
//! is then laid out at once, because in a single collision domain nothing can interrupt it:
//!
//! - **Collision**: each transmitter's PPDU (or RTS) is lost. The transmitters wait AckTimeout
//!   (or CTSTimeout) after their own PPDU, the others EIFS after the medium falls idle
//!   (§10.3.2.3.7); every transmitter doubles its CW.
//! - **One transmitter**: with RTS/CTS, RTS–SIFS–CTS–SIFS first (§10.3.2.6; the other stations
//!   set their NAV from the RTS and CTS Duration fields, §10.3.2.4, and keep it even if the data
//!   that follow fail). Each MPDU of the data PPDU survives with probability 1 − PER(SNR, MCS,
//!   MPDU length) ([`crate::error`]); if any did, the receiver answers after SIFS with an ACK
//!   (single MPDU) or a compressed block ACK (A-MPDU, §10.24.7), the transmitter's CW returns to
//!   CWmin, the acknowledged MPDUs are delivered and the others stay at the head of the queue for
//!   selective retransmission. If none did, there is no answer: the transmitter waits AckTimeout
//!   and doubles its CW; the others defer EIFS (or to the end of their NAV, whichever is later).
//! - An MPDU that has failed `dot11ShortRetryLimit` times (`dot11LongRetryLimit` when protected
//!   by RTS/CTS; an RTS failing `dot11ShortRetryLimit` times discards the frames it protected) is
//!   discarded and its CW reset (§10.3.3); the recipient's reordering buffer moves past it.
//!
//! Control frames (RTS, CTS, ACK, block ACK) go at the highest basic rate not above the data
//! rate's non-HT reference rate ([`crate::phy::TxVector::control_response`]) and are taken as
//! received (their PER at 6–24 Mbit/s is negligible wherever data at the chosen MCS decode); the
//! PHY header likewise. Propagation delay is zero (a few ns in a BSS). MSDUs are delivered at the
//! end of the data PPDU that carried them.

use std::collections::VecDeque;

use celltcp_engine::rng::{component_id, component_rng, SimRng};
use celltcp_engine::{SimDuration, SimTime};
use rand::Rng;

use crate::ampdu::{self, AmpduLen, Reorder};
use crate::channel::{default_carrier_hz, Channel};
use crate::dcf::{self, Backoff, EdcaParams, MacTiming};
use crate::error::per;
use crate::hears::Hears;
use crate::phy::{txtime, Band, PhyClass, Standard, TxVector};
use crate::rate::{AnyRate, RateControl, RateKind, RateSet};
use crate::stats::{BssStats, LinkStats, StaStats};

// air capture hook: the frames on the air (bss/capture.rs, crate::air)
mod capture;
// carrier sense per node when not every node senses every other (crate::hears)
mod hidden;
// frames of another BSS on the channel judged with each node's own SNR (crate::medium)
mod overhear;

/// Linux's default transmit queue length (txqueuelen 1000 packets), per destination at the AP.
pub const DEFAULT_QUEUE_LIMIT: usize = 1000;

/// A station's index in the BSS.
pub type StaId = u16;

/// A node of the BSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    Ap,
    Sta(StaId),
}

impl Node {
    fn from_index(i: usize) -> Node {
        if i == 0 {
            Node::Ap
        } else {
            Node::Sta((i - 1) as StaId)
        }
    }
}

/// What the BSS hands back.
#[derive(Clone, Debug, PartialEq)]
pub enum WifiOutput<P> {
    /// `pkt`, sent by `from`, reached `to` (its final destination in the BSS) at `at`.
    Delivered { at: SimTime, from: Node, to: Node, pkt: P },
    /// `pkt` was discarded at `node` at `at`: retry limit reached, or the AP's queue toward the
    /// destination of a relayed frame was full.
    Dropped { at: SimTime, node: Node, to: Node, pkt: P },
}

/// Configuration of a BSS.
#[derive(Clone, Debug)]
pub struct BssConfig {
    pub standard: Standard,
    pub band: Band,
    pub width_mhz: u16,
    pub nss: u8,
    pub short_gi: bool,
    pub rate: RateKind,
    /// A-MPDU aggregation with block ACK (HT/VHT only).
    pub ampdu: bool,
    /// Largest A-MPDU in octets; `None`: the standard's limit.
    pub max_ampdu_bytes: Option<u32>,
    /// RTS/CTS before every data PPDU.
    pub rts_cts: bool,
    /// MSDUs per transmit queue at the AP (one queue per station).
    pub queue_limit_pkts: usize,
    /// MSDUs in each station's transmit queue; `None`: the same as `queue_limit_pkts`.
    pub sta_queue_limit_pkts: Option<usize>,
    /// Contention parameters; `None`: DCF for 802.11a/g, EDCA best effort for 802.11n/ac.
    pub edca: Option<EdcaParams>,
    pub channel: Channel,
}

impl BssConfig {
    /// Defaults: 20 MHz, one stream, long GI, the fastest MCS of the standard valid at 20 MHz,
    /// aggregation on for HT/VHT, no RTS/CTS, ns-3's default log-distance channel.
    pub fn new(standard: Standard) -> BssConfig {
        let band = standard.default_band();
        BssConfig {
            standard,
            band,
            width_mhz: 20,
            nss: 1,
            short_gi: false,
            rate: RateKind::Constant(7),
            ampdu: standard.class() != PhyClass::Ofdm,
            max_ampdu_bytes: None,
            rts_cts: false,
            queue_limit_pkts: DEFAULT_QUEUE_LIMIT,
            sta_queue_limit_pkts: None,
            edca: None,
            channel: Channel::ns3_default(default_carrier_hz(band)),
        }
    }

    fn base_vector(&self) -> TxVector {
        TxVector { class: self.standard.class(), mcs: 0, width_mhz: self.width_mhz, nss: self.nss, short_gi: self.short_gi }
    }
}

struct Msdu<P> {
    pkt: P,
    bytes: u32,
    src: Node,
    dst: Node,
    enq: SimTime,
}

struct Mpdu<P> {
    msdu: Msdu<P>,
    seq: u64,
    failures: u32,
    sent: bool,
}

struct Link<P> {
    rx: Node,
    pending: VecDeque<Mpdu<P>>,
    next_seq: u64,
    reorder: Reorder<Msdu<P>>,
    rate: AnyRate,
}

struct Contender {
    backoff: Backoff,
    /// RTS failures of the current frame (station short retry count, §10.3.3).
    ssrc: u32,
    queued: usize,
    /// When the node last went from no data to data.
    avail_since: SimTime,
    rng: SimRng,
    /// AP only: the station served last.
    rr: usize,
}

/// One transmitter's share of an exchange, applied when its data PPDU (or RTS) ends.
struct Sent {
    link: usize,
    n: usize,
    txv: TxVector,
    ok: u64,
    dropped: u64,
}

/// One transmitter's PPDU of an exchange: laid out when its counter reaches zero, before it is
/// known whether it collides.
pub(crate) struct Plan {
    /// When it starts: its counter's zero (up to aCCATime after the medium's first PPDU).
    at: SimTime,
    k: usize,
    link: usize,
    txv: TxVector,
    n: usize,
    ba: bool,
    dur: SimDuration,
    ctrl: TxVector,
}

/// What the nodes that did not transmit heard of a lone transmitter's exchange.
pub(crate) enum Heard {
    /// Frames decoded to the ACK or block ACK ending at `end`.
    Success { end: SimTime, busy: SimDuration },
    /// A data PPDU in error ending at `medium_end`, with the NAV set by RTS/CTS (if any).
    Error { medium_end: SimTime, nav_end: Option<SimTime>, busy: SimDuration },
}

/// One AP and its stations.
pub struct Bss<P> {
    cfg: BssConfig,
    edca: EdcaParams,
    timing: MacTiming,
    qos: bool,
    max_ampdu_bytes: u32,
    nodes: Vec<Contender>,
    /// 2·i: AP → station i; 2·i + 1: station i → AP.
    links: Vec<Link<P>>,
    snr_db: Vec<f64>,
    inflight: Vec<Sent>,
    pub(crate) inflight_at: Option<SimTime>,
    pub(crate) next_tx: Option<SimTime>,
    sta_stats: Vec<StaStats>,
    bss_stats: BssStats,
    scratch: Vec<Msdu<P>>,
    /// air capture hook: the frames on the air, when recorded (bss/capture.rs).
    air: Option<crate::air::AirLog<P>>,
    /// The per-PPDU path when not every node senses every other (bss/hidden.rs).
    hidden: Option<Box<hidden::Hidden>>,
    /// Positions (AP, then stations) and the random stream with which its nodes judge other
    /// BSSs' frames (bss/overhear.rs).
    geometry: Option<Box<overhear::Geometry>>,
    /// The last exchange's frames as another BSS's nodes receive them (bss/overhear.rs).
    pub(crate) last_frames: Option<overhear::Frames>,
}

impl<P> Bss<P> {
    /// A BSS named `name` (names the random streams) with one station per entry of
    /// `distances_m` (its distance to the AP).
    pub fn new(cfg: BssConfig, distances_m: &[f64], seed: u64, name: &str) -> Bss<P> {
        let snr_db: Vec<f64> = distances_m.iter().map(|&d| cfg.channel.snr_db(d, cfg.width_mhz)).collect();
        Bss::with_snrs(cfg, &snr_db, seed, name)
    }

    /// A BSS with one station per entry of `snr_db`: the SNR of its link (both directions), dB,
    /// whatever `cfg.channel` says (per-station fixed SNRs, or SNRs the caller computed from
    /// positions).
    pub fn with_snrs(cfg: BssConfig, snr_db: &[f64], seed: u64, name: &str) -> Bss<P> {
        let phy = cfg.standard.timing(cfg.band);
        let edca = cfg.edca.unwrap_or(if cfg.standard.qos() { EdcaParams::best_effort(&phy) } else { EdcaParams::dcf(&phy) });
        let timing = MacTiming::new(&phy, &edca);
        let qos = cfg.standard.qos();
        let max_ampdu_bytes = cfg.max_ampdu_bytes.or(cfg.standard.max_ampdu_bytes()).unwrap_or(0);
        let nodes = (0..=snr_db.len())
            .map(|k| Contender {
                backoff: Backoff::new(edca.cw_min),
                ssrc: 0,
                queued: 0,
                avail_since: SimTime::ZERO,
                rng: component_rng(seed, component_id("wifi-node", &format!("{name}/{k}"))),
                rr: 0,
            })
            .collect();
        let set = RateSet::new(cfg.base_vector(), cfg.standard.max_mcs());
        assert!(!set.mcs.is_empty(), "no valid MCS for {:?}", cfg.base_vector());
        if let RateKind::Constant(m) = cfg.rate {
            assert!(set.mcs.contains(&m), "MCS {m} is not valid for {:?}", cfg.base_vector());
        }
        let snr_db = snr_db.to_vec();
        let mut links = Vec::with_capacity(2 * snr_db.len());
        for (i, &snr) in snr_db.iter().enumerate() {
            for (l, rx) in [(2 * i, Node::Sta(i as StaId)), (2 * i + 1, Node::Ap)] {
                let mut rng = component_rng(seed, component_id("wifi-rate", &format!("{name}/{l}")));
                links.push(Link {
                    rx,
                    pending: VecDeque::new(),
                    next_seq: 0,
                    reorder: Reorder::default(),
                    rate: AnyRate::new(cfg.rate, set.clone(), snr, ampdu::mpdu_bytes(1500, qos), &mut rng),
                });
            }
        }
        Bss {
            edca,
            timing,
            qos,
            max_ampdu_bytes,
            nodes,
            links,
            sta_stats: vec![StaStats::default(); snr_db.len()],
            snr_db,
            inflight: Vec::new(),
            inflight_at: None,
            next_tx: None,
            bss_stats: BssStats::default(),
            scratch: Vec::new(),
            air: None,
            hidden: None,
            geometry: None,
            last_frames: None,
            cfg,
        }
    }

    pub fn config(&self) -> &BssConfig {
        &self.cfg
    }
    pub fn timing(&self) -> &MacTiming {
        &self.timing
    }
    pub fn edca(&self) -> &EdcaParams {
        &self.edca
    }
    pub fn n_stations(&self) -> usize {
        self.snr_db.len()
    }
    /// SNR of station `sta`'s link, dB.
    pub fn snr_db(&self, sta: StaId) -> f64 {
        self.snr_db[sta as usize]
    }
    pub fn sta_stats(&self, sta: StaId) -> &StaStats {
        &self.sta_stats[sta as usize]
    }
    pub fn bss_stats(&self) -> &BssStats {
        &self.bss_stats
    }
    /// Who senses whom among the AP (node 0) and the stations (1 + s), [`crate::hears`]. With
    /// every pair sensing each other the BSS keeps the whole-range path (an exchange laid out at
    /// its start); otherwise each PPDU is an event and each node senses the medium on its own
    /// (`bss/hidden.rs`). Call it before the first `enqueue`; such a BSS must have its channel
    /// to itself ([`crate::Medium::add`] refuses it on a shared one).
    pub fn set_hears(&mut self, hears: Hears) {
        if hears.is_full() {
            self.hidden = None;
        } else {
            self.set_hears_per_ppdu(hears);
        }
    }

    /// As [`Bss::set_hears`], but always on the per-PPDU path, even when every node senses
    /// every other (to check that the two paths agree).
    pub fn set_hears_per_ppdu(&mut self, hears: Hears) {
        assert_eq!(hears.len(), self.nodes.len(), "one node per row of the hears relation");
        self.hidden = Some(Box::new(hidden::Hidden::new(hears)));
    }

    /// The per-node carrier sense relation, when the BSS is on the per-PPDU path.
    pub fn hears(&self) -> Option<&Hears> {
        self.hidden.as_ref().map(|h| h.hears())
    }

    /// Sets the limit of every transmit queue, MSDUs (queued MSDUs above it stay).
    pub fn set_queue_limit(&mut self, pkts: usize) {
        self.cfg.queue_limit_pkts = pkts;
        self.cfg.sta_queue_limit_pkts = None;
    }

    /// MSDUs waiting (or in flight) at `from` toward `to`.
    pub fn queue_len(&self, from: Node, to: Node) -> usize {
        self.link_of(from, to).map_or(0, |l| self.links[l].pending.len())
    }

    fn link_of(&self, from: Node, to: Node) -> Option<usize> {
        match (from, to) {
            (Node::Ap, Node::Sta(i)) if (i as usize) < self.n_stations() => Some(2 * i as usize),
            (Node::Sta(i), t) if (i as usize) < self.n_stations() && t != from => match t {
                Node::Sta(j) if j as usize >= self.n_stations() => None,
                _ => Some(2 * i as usize + 1),
            },
            _ => None,
        }
    }

    fn link_stats(&mut self, link: usize) -> &mut LinkStats {
        let s = &mut self.sta_stats[link / 2];
        if link.is_multiple_of(2) {
            &mut s.down
        } else {
            &mut s.up
        }
    }

    /// Queues `pkt` (an MSDU of `bytes` octets) at `from` for `to`. Refused (and handed back)
    /// when the queue is full or the pair is not a link of this BSS.
    pub fn enqueue(&mut self, now: SimTime, from: Node, to: Node, pkt: P, bytes: u32) -> Result<(), P> {
        let Some(link) = self.link_of(from, to) else { return Err(pkt) };
        let r = self.push(now, link, Msdu { pkt, bytes, src: from, dst: to, enq: now });
        self.refresh();
        r.map_err(|m| m.pkt)
    }

    fn push(&mut self, now: SimTime, link: usize, msdu: Msdu<P>) -> Result<(), Msdu<P>> {
        let limit = if link.is_multiple_of(2) { self.cfg.queue_limit_pkts } else { self.cfg.sta_queue_limit_pkts.unwrap_or(self.cfg.queue_limit_pkts) };
        if self.links[link].pending.len() >= limit {
            self.link_stats(link).queue_drops += 1;
            return Err(msdu);
        }
        let bytes = msdu.bytes as u64;
        let st = self.link_stats(link);
        st.enqueued_pkts += 1;
        st.enqueued_bytes += bytes;
        let l = &mut self.links[link];
        l.pending.push_back(Mpdu { msdu, seq: l.next_seq, failures: 0, sent: false });
        l.next_seq += 1;
        let tx = if link.is_multiple_of(2) { 0 } else { link / 2 + 1 };
        let slot = self.timing.slot;
        let c = &mut self.nodes[tx];
        if c.queued == 0 {
            c.avail_since = now;
            // a frame that finds the medium busy (or still inside AIFS) with a zero counter
            // invokes the backoff procedure (§10.3.4.3)
            if now < c.backoff.resume && c.backoff.remaining_at(now, slot) == 0 {
                c.backoff.draw(&mut c.rng);
            }
        }
        c.queued += 1;
        Ok(())
    }

    /// When [`Bss::on_timer`] has work: the end of the PPDU in flight, or the next
    /// transmission start.
    pub fn next_deadline(&self) -> Option<SimTime> {
        match (self.inflight_at, self.next_tx) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn tx_at(&self, k: usize) -> Option<SimTime> {
        if self.hidden.as_ref().is_some_and(|h| h.in_exchange(k)) {
            return None;
        }
        let c = &self.nodes[k];
        (c.queued > 0).then(|| c.backoff.ready_at(self.timing.slot).max(c.avail_since))
    }

    pub(crate) fn refresh(&mut self) {
        self.next_tx = (0..self.nodes.len()).filter_map(|k| self.tx_at(k)).min();
    }

    /// Advances the MAC to `now`, pushing delivered and dropped packets into `out`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<WifiOutput<P>>) {
        if self.hidden.is_some() {
            return self.hidden_on_timer(now, out);
        }
        loop {
            if let Some(at) = self.inflight_at {
                if at <= now {
                    self.finish(at, out);
                    self.refresh();
                    continue;
                }
                break;
            }
            match self.next_tx {
                Some(t) if t <= now => {
                    self.start(t);
                    self.refresh();
                }
                _ => break,
            }
        }
        self.bss_stats.last_event = now;
    }

    pub(crate) fn note_event(&mut self, now: SimTime) {
        self.bss_stats.last_event = now;
    }

    /// The link the transmitter `k` serves next.
    fn pick_link(&mut self, k: usize) -> usize {
        if k > 0 {
            return 2 * (k - 1) + 1;
        }
        let n = self.n_stations();
        let start = self.nodes[0].rr;
        for d in 1..=n {
            let i = (start + d) % n;
            if !self.links[2 * i].pending.is_empty() {
                self.nodes[0].rr = i;
                return 2 * i;
            }
        }
        unreachable!("AP has data but no queue holds any")
    }

    /// How many head MPDUs of `link` go in one PPDU with `txv`, and the PSDU length.
    fn aggregate(&self, link: usize, txv: &TxVector) -> (usize, u32, bool) {
        let pending = &self.links[link].pending;
        let first = ampdu::mpdu_bytes(pending[0].msdu.bytes, self.qos);
        let aggregating = self.cfg.ampdu && txv.class != PhyClass::Ofdm;
        if !aggregating {
            // a VHT PPDU carries even a single MPDU in an A-MPDU (§10.13.1)
            let len = if txv.class == PhyClass::Vht { first + ampdu::DELIMITER_BYTES } else { first };
            return (1, len, false);
        }
        let win_end = pending[0].seq + ampdu::BA_WINDOW as u64;
        let mut a = AmpduLen::default();
        for m in pending.iter().take(ampdu::BA_WINDOW) {
            if m.seq >= win_end {
                break;
            }
            let len = ampdu::mpdu_bytes(m.msdu.bytes, self.qos);
            let total = a.with(len);
            if a.n > 0 && (total > self.max_ampdu_bytes || txtime(txv, total, self.timing.signal_extension) > ampdu::PPDU_MAX_TIME) {
                break;
            }
            a.push(len);
        }
        (a.n as usize, a.bytes(), a.n > 1)
    }

    /// Starts the exchange at `t` of this BSS alone (its own medium).
    fn start(&mut self, t: SimTime) {
        crate::medium::start_exchange(&mut [self], t);
    }

    /// The contenders whose counters reach zero from `t` to `until` (both included), with
    /// that instant.
    pub(crate) fn transmitters_within(&self, t: SimTime, until: SimTime) -> Vec<(usize, SimTime)> {
        (0..self.nodes.len()).filter_map(|k| self.tx_at(k).filter(|&r| r >= t && r <= until).map(|r| (k, r))).collect()
    }

    /// The medium turns busy at `t`: every counter freezes with the idle slots before `t`
    /// counted (the exchange then sets each node's new resume instant).
    pub(crate) fn freeze_all(&mut self, t: SimTime) {
        let slot = self.timing.slot;
        for c in &mut self.nodes {
            c.backoff.freeze(t, slot);
        }
    }

    /// Lays out the PPDU that transmitter `k` sends at `t` (its link, rate, aggregate and
    /// duration) and counts it.
    pub(crate) fn plan(&mut self, t: SimTime, k: usize) -> Plan {
        let sig = self.timing.signal_extension;
        let link = self.pick_link(k);
        let attempt = self.links[link].pending[0].failures;
        let txv = self.links[link].rate.select(t, attempt);
        let (n, psdu, ba) = self.aggregate(link, &txv);
        let dur = txtime(&txv, psdu, sig);
        let ctrl = txv.control_response();
        let mut retx = 0;
        let mut qd_sum = 0;
        let mut qd_n = 0;
        for m in self.links[link].pending.iter_mut().take(n) {
            if m.sent {
                retx += 1;
            } else {
                m.sent = true;
                qd_sum += (t - m.msdu.enq).as_nanos();
                qd_n += 1;
            }
        }
        let st = self.link_stats(link);
        st.mpdu_tx += n as u64;
        st.mpdu_retx += retx;
        st.ppdu_tx += 1;
        st.queue_delay_ns_sum += qd_sum;
        st.queue_delay_n += qd_n;
        st.mcs_hist[(txv.mcs as usize).min(9)] += 1;
        if ba {
            st.ampdus += 1;
            st.ampdu_mpdus += n as u64;
        }
        Plan { at: t, k, link, txv, n, ba, dur, ctrl }
    }

    /// When the transmitter's own frame of a collision ends: its RTS, or its data PPDU.
    pub(crate) fn own_end(&self, p: &Plan) -> SimTime {
        p.at + if self.cfg.rts_cts { self.timing.rts_cts(&p.ctrl).0 } else { p.dur }
    }

    /// A collision on the medium from `t` (its first PPDU's start) to `medium_end`, `plans`
    /// being this BSS's transmitters in it, each from its own start (none: its nodes are
    /// bystanders of other BSSs' collision). Each transmitter's PPDU (or RTS) is lost.
    pub(crate) fn collide(&mut self, t: SimTime, medium_end: SimTime, plans: Vec<Plan>) {
        let tm = self.timing;
        let rts = self.cfg.rts_cts;
        self.bss_stats.busy_ns += (medium_end - t).as_nanos();
        for c in &mut self.nodes {
            c.backoff.resume = tm.resume_after_error(medium_end, None);
        }
        if plans.is_empty() {
            return;
        }
        self.bss_stats.txops += 1;
        self.bss_stats.collisions += 1;
        if self.air.is_some() {
            // air capture hook: the colliding PPDUs (or RTSs)
            for p in &plans {
                self.capture(p.at, p.at, capture::AirTx { link: p.link, txv: p.txv, n: p.n, ba: p.ba, dur: p.dur, ctrl: p.ctrl }, None);
            }
        }
        let mut sent = Vec::with_capacity(plans.len());
        for p in &plans {
            let end = self.own_end(p);
            let st = self.link_stats(p.link);
            st.collisions += 1;
            st.airtime_ns += (end - p.at).as_nanos();
            let dropped = self.fail(p.k, p.link, p.n, 0, rts, true);
            let c = &mut self.nodes[p.k];
            c.backoff.resume = tm.resume_after_timeout(end, medium_end);
            c.backoff.draw(&mut c.rng);
            sent.push(Sent { link: p.link, n: p.n, txv: p.txv, ok: 0, dropped });
        }
        self.inflight = sent;
        self.inflight_at = Some(medium_end);
    }

    /// The frame exchange of the lone transmitter `p` from `t`, laid out to its end: RTS–CTS
    /// when configured, the data PPDU with its per-MPDU errors, the ACK or block ACK if any
    /// MPDU got through. Returns what the other nodes of the medium heard.
    pub(crate) fn transmit(&mut self, t: SimTime, p: Plan) -> Heard {
        let tm = self.timing;
        let sig = tm.signal_extension;
        let rts = self.cfg.rts_cts;
        self.bss_stats.txops += 1;
        let mut ds = t;
        let mut busy = SimDuration::ZERO;
        if rts {
            let (r, c) = tm.rts_cts(&p.ctrl);
            ds = t + r + tm.sifs + c + tm.sifs;
            busy += r + c;
        }
        let de = ds + p.dur;
        busy += p.dur;
        let snr = self.snr_db[p.link / 2];
        let mut ok = 0u64;
        {
            let qos = self.qos;
            let rng = &mut self.nodes[p.k].rng;
            for (i, m) in self.links[p.link].pending.iter().take(p.n).enumerate() {
                let e = per(&p.txv, snr, ampdu::mpdu_bytes(m.msdu.bytes, qos));
                if rng.gen::<f64>() >= e {
                    ok |= 1 << i;
                }
            }
        }
        if self.air.is_some() {
            // air capture hook: RTS/CTS, the data MPDUs, the ACK or block ACK
            self.capture(t, ds, capture::AirTx { link: p.link, txv: p.txv, n: p.n, ba: p.ba, dur: p.dur, ctrl: p.ctrl }, Some(ok));
        }
        let resp = txtime(&p.ctrl, if p.ba { dcf::BLOCK_ACK_BYTES } else { dcf::ACK_BYTES }, sig);
        if self.geometry.is_some() {
            let first = ampdu::mpdu_bytes(self.links[p.link].pending[0].msdu.bytes, self.qos);
            self.last_frames = Some(overhear::Frames { tx: p.k, rx: overhear::index(self.links[p.link].rx), data: p.txv, first_mpdu_bytes: first, ctrl: p.ctrl, resp_bytes: if p.ba { dcf::BLOCK_ACK_BYTES } else { dcf::ACK_BYTES }, resp_end: de + tm.sifs + resp });
        }
        let dropped;
        let heard;
        if ok != 0 {
            let end = de + tm.sifs + resp;
            busy += resp;
            heard = Heard::Success { end, busy };
            self.overhear(&heard);
            self.link_stats(p.link).airtime_ns += (end - t).as_nanos();
            dropped = self.fail(p.k, p.link, p.n, ok, rts, false);
            let c = &mut self.nodes[p.k];
            c.backoff.reset_cw(self.edca.cw_min);
            c.ssrc = 0;
        } else {
            // no ACK: the others saw a frame in error (EIFS) or hold a NAV to the end of the
            // expected ACK (RTS/CTS)
            heard = Heard::Error { medium_end: de, nav_end: rts.then(|| de + tm.sifs + resp), busy };
            self.overhear(&heard);
            let st = self.link_stats(p.link);
            st.ppdu_failed += 1;
            st.airtime_ns += (de - t).as_nanos();
            dropped = self.fail(p.k, p.link, p.n, 0, rts, false);
            self.nodes[p.k].backoff.resume = tm.resume_after_timeout(de, de);
        }
        let c = &mut self.nodes[p.k];
        c.backoff.draw(&mut c.rng);
        self.inflight = vec![Sent { link: p.link, n: p.n, txv: p.txv, ok, dropped }];
        self.inflight_at = Some(de);
        heard
    }

    /// Every node of this BSS heard an exchange (its own BSS's or another's on the same
    /// medium): the medium was busy `busy`, and each node resumes after the exchange by the
    /// rules of its own MAC timing (AIFS after a success, EIFS or NAV after an error).
    pub(crate) fn overhear(&mut self, heard: &Heard) {
        let tm = self.timing;
        let (resume, busy) = match *heard {
            Heard::Success { end, busy } => (tm.resume_after_success(end), busy),
            Heard::Error { medium_end, nav_end, busy } => (tm.resume_after_error(medium_end, nav_end), busy),
        };
        for c in &mut self.nodes {
            c.backoff.resume = resume;
        }
        self.bss_stats.busy_ns += busy.as_nanos();
    }
    /// Retry accounting for the `n` head MPDUs of `link` sent by `k`, of which the `ok` mask was
    /// acknowledged; `rts_failed` when the RTS itself collided. Updates failures and the CW and
    /// returns the mask of MPDUs to discard.
    fn fail(&mut self, k: usize, link: usize, n: usize, ok: u64, rts: bool, rts_failed: bool) -> u64 {
        let e = self.edca;
        let mut dropped = 0u64;
        if rts && rts_failed {
            let c = &mut self.nodes[k];
            c.ssrc += 1;
            if c.ssrc >= e.short_retry_limit {
                c.ssrc = 0;
                c.backoff.reset_cw(e.cw_min);
                return if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
            }
            c.backoff.double_cw(e.cw_max);
            return 0;
        }
        let limit = if rts { e.long_retry_limit } else { e.short_retry_limit };
        for (i, m) in self.links[link].pending.iter_mut().take(n).enumerate() {
            if ok & (1 << i) == 0 {
                m.failures += 1;
                if m.failures >= limit {
                    dropped |= 1 << i;
                }
            }
        }
        if ok == 0 {
            let c = &mut self.nodes[k];
            if dropped & 1 != 0 {
                c.backoff.reset_cw(e.cw_min);
                c.ssrc = 0;
            } else {
                c.backoff.double_cw(e.cw_max);
            }
        }
        dropped
    }

    pub(crate) fn finish(&mut self, at: SimTime, out: &mut Vec<WifiOutput<P>>) {
        self.inflight_at = None;
        let sent = std::mem::take(&mut self.inflight);
        for s in sent {
            let tx = if s.link.is_multiple_of(2) { 0 } else { s.link / 2 + 1 };
            let mut keep: Vec<Mpdu<P>> = Vec::new();
            let mut released = std::mem::take(&mut self.scratch);
            let mut n_ok = 0u32;
            let mut n_drop = 0usize;
            for i in 0..s.n {
                let m = self.links[s.link].pending.pop_front().expect("in-flight MPDU");
                let l = &mut self.links[s.link];
                if s.ok & (1 << i) != 0 {
                    n_ok += 1;
                    l.reorder.receive(m.seq, m.msdu, &mut |x| released.push(x));
                } else if s.dropped & (1 << i) != 0 {
                    n_drop += 1;
                    let to = m.msdu.dst;
                    out.push(WifiOutput::Dropped { at, node: Node::from_index(tx), to, pkt: m.msdu.pkt });
                    l.reorder.skip(m.seq, &mut |x| released.push(x));
                } else {
                    keep.push(m);
                }
            }
            {
                let l = &mut self.links[s.link];
                for m in keep.into_iter().rev() {
                    l.pending.push_front(m);
                }
                l.rate.report(at, s.txv, s.n as u32, n_ok);
            }
            self.nodes[tx].queued -= n_ok as usize + n_drop;
            self.link_stats(s.link).retry_drops += n_drop as u64;
            let rx = self.links[s.link].rx;
            for msdu in released.drain(..) {
                self.deliver(at, s.link, rx, msdu, out);
            }
            self.scratch = released;
        }
    }

    fn deliver(&mut self, at: SimTime, link: usize, rx: Node, msdu: Msdu<P>, out: &mut Vec<WifiOutput<P>>) {
        let st = self.link_stats(link);
        st.delivered_pkts += 1;
        st.delivered_bytes += msdu.bytes as u64;
        st.mac_delay_ns_sum += (at - msdu.enq).as_nanos();
        if msdu.dst == rx {
            out.push(WifiOutput::Delivered { at, from: msdu.src, to: msdu.dst, pkt: msdu.pkt });
            return;
        }
        // station → station: the AP relays it
        let next = self.link_of(Node::Ap, msdu.dst).expect("relay destination is a station");
        let relay = Msdu { enq: at, ..msdu };
        if let Err(m) = self.push(at, next, relay) {
            out.push(WifiOutput::Dropped { at, node: Node::Ap, to: m.dst, pkt: m.pkt });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: fn(u64) -> SimDuration = SimDuration::from_micros;

    fn bss_a(n: usize, snr_db: f64, rts: bool) -> Bss<u32> {
        let mut cfg = BssConfig::new(Standard::A);
        cfg.channel = Channel::FixedSnr(snr_db);
        cfg.rts_cts = rts;
        Bss::new(cfg, &vec![1.0; n], 5, "unit")
    }

    fn drain(b: &mut Bss<u32>, out: &mut Vec<WifiOutput<u32>>) {
        while let Some(t) = b.next_deadline() {
            b.on_timer(t, out);
        }
    }

    /// 802.11a, 54 Mbit/s data, ACK at 24 Mbit/s, 1500-byte MSDU (1536-byte MPDU).
    fn data_ack() -> (SimDuration, SimDuration) {
        (txtime(&TxVector::ofdm(7), 1536, SimDuration::ZERO), txtime(&TxVector::ofdm(4), dcf::ACK_BYTES, SimDuration::ZERO))
    }

    #[test]
    fn lone_frame_goes_at_once_and_the_next_waits_difs_and_backoff() {
        // idle medium for longer than DIFS and a zero counter: immediate access (§10.3.4.3)
        let mut b = bss_a(2, 60.0, false);
        let t0 = SimTime::from_millis(1);
        b.enqueue(t0, Node::Sta(1), Node::Ap, 7, 1500).unwrap();
        assert_eq!(b.next_deadline(), Some(t0));
        let mut out = vec![];
        drain(&mut b, &mut out);
        let (data, ack) = data_ack();
        assert_eq!(out, vec![WifiOutput::Delivered { at: t0 + data, from: Node::Sta(1), to: Node::Ap, pkt: 7 }]);
        // a frame arriving while the ACK is still on the air waits for DIFS after it and then a
        // whole number of slots, at most CWmin
        b.enqueue(t0 + data, Node::Sta(1), Node::Ap, 8, 1500).unwrap();
        let idle_from = t0 + data + US(16) + ack;
        let start = b.next_deadline().unwrap();
        assert!(start >= idle_from + US(34));
        let k = (start - (idle_from + US(34))).as_nanos();
        assert!(k.is_multiple_of(9_000) && k / 9_000 <= 15, "{k} ns after DIFS");
        assert_eq!(b.sta_stats(1).up.airtime_ns, (data + US(16) + ack).as_nanos());
        assert_eq!(b.bss_stats().busy_ns, (data + ack).as_nanos());
    }

    #[test]
    fn queue_limit_refuses_and_counts() {
        let mut b = bss_a(2, 60.0, false);
        assert_eq!(b.config().queue_limit_pkts, DEFAULT_QUEUE_LIMIT);
        b.set_queue_limit(3);
        for k in 0..3 {
            b.enqueue(SimTime::ZERO, Node::Ap, Node::Sta(0), k, 100).unwrap();
        }
        assert_eq!(b.enqueue(SimTime::ZERO, Node::Ap, Node::Sta(0), 3, 100), Err(3));
        assert_eq!(b.sta_stats(0).down.queue_drops, 1);
        // one queue per destination: the other station's is untouched
        assert!(b.enqueue(SimTime::ZERO, Node::Ap, Node::Sta(1), 4, 100).is_ok());
        assert_eq!(b.queue_len(Node::Ap, Node::Sta(0)), 3);
    }

    #[test]
    fn station_queue_limit_is_its_own() {
        let mut cfg = BssConfig::new(Standard::A);
        cfg.channel = Channel::FixedSnr(60.0);
        cfg.queue_limit_pkts = 5;
        cfg.sta_queue_limit_pkts = Some(2);
        let mut b: Bss<u32> = Bss::new(cfg, &[1.0], 5, "unit");
        for k in 0..2 {
            b.enqueue(SimTime::ZERO, Node::Sta(0), Node::Ap, k, 100).unwrap();
        }
        assert_eq!(b.enqueue(SimTime::ZERO, Node::Sta(0), Node::Ap, 2, 100), Err(2));
        assert_eq!(b.sta_stats(0).up.queue_drops, 1);
        for k in 0..5 {
            b.enqueue(SimTime::ZERO, Node::Ap, Node::Sta(0), k, 100).unwrap();
        }
        assert_eq!(b.enqueue(SimTime::ZERO, Node::Ap, Node::Sta(0), 5, 100), Err(5));
    }

    #[test]
    fn simultaneous_access_collides_doubles_cw_and_defers_by_ack_timeout_and_eifs() {
        let mut b = bss_a(3, 60.0, false);
        let t0 = SimTime::from_millis(1);
        b.enqueue(t0, Node::Sta(0), Node::Ap, 1, 1500).unwrap();
        b.enqueue(t0, Node::Sta(1), Node::Ap, 2, 1500).unwrap();
        let mut out = vec![];
        b.on_timer(t0, &mut out);
        assert_eq!(b.bss_stats().collisions, 1);
        let (data, _) = data_ack();
        let end = t0 + data;
        for k in [1, 2] {
            assert_eq!(b.nodes[k].backoff.cw, 31);
            // AckTimeout = 16 + 9 + 20 µs (Table 17-21), then DIFS
            assert_eq!(b.nodes[k].backoff.resume, end + US(45) + US(34));
        }
        // the bystanders (AP, station 2) saw a frame in error: EIFS = 16 + 44 + 34 µs
        assert_eq!(b.nodes[0].backoff.resume, end + US(94));
        assert_eq!(b.nodes[3].backoff.resume, end + US(94));
        drain(&mut b, &mut out);
        let mut got: Vec<u32> = out.iter().map(|o| if let WifiOutput::Delivered { pkt, .. } = o { *pkt } else { 0 }).collect();
        got.sort();
        assert_eq!(got, vec![1, 2]);
        assert_eq!(b.sta_stats(0).up.collisions + b.sta_stats(1).up.collisions, 2 * b.bss_stats().collisions);
    }

    /// Two one-station 802.11a BSSs on one channel, each station with a frame, station 0 of
    /// the first BSS reaching zero at `t0` and that of the second `offset` later.
    fn cochannel_offset(t0: SimTime, offset: SimDuration) -> crate::Medium<u32> {
        let mut air = crate::Medium::new();
        for name in ["a", "b"] {
            let mut cfg = BssConfig::new(Standard::A);
            cfg.channel = Channel::FixedSnr(60.0);
            air.add(Bss::new(cfg, &[1.0], 5, name), Some(36)).unwrap();
        }
        for (i, at) in [(0, t0), (1, t0 + offset)] {
            let b = air.bss_mut(i);
            b.enqueue(SimTime::ZERO, Node::Sta(0), Node::Ap, i as u32, 1500).unwrap();
            // its view of the medium: idle from `at` (AIFS or EIFS over), no slot left to count
            b.nodes[1].backoff.resume = at;
            b.nodes[1].backoff.slots = 0;
            b.refresh();
        }
        air
    }

    #[test]
    fn cochannel_backoff_ending_within_cca_time_collides() {
        // aCCATime < 4 µs (§17.3.10.6, Table 17-21): the second BSS's station reaches zero 2 µs
        // after the first's PPDU starts, before its CCA reports it: it transmits, both lose
        // their frames (the per-PPDU path of bss/hidden.rs has the same rule)
        let t0 = SimTime::from_millis(1);
        let mut air = cochannel_offset(t0, US(2));
        let mut out = vec![];
        air.on_timer(t0, &mut out);
        assert!(out.is_empty());
        assert_eq!((air.bss(0).bss_stats().collisions, air.bss(1).bss_stats().collisions), (1, 1));
        let (data, _) = data_ack();
        // each collider waits AckTimeout (45 µs) after its own PPDU, which starts at its own
        // instant, then DIFS; the medium was busy from t0 to the later PPDU's end
        assert_eq!(air.bss(0).nodes[1].backoff.resume, t0 + data + US(79));
        assert_eq!(air.bss(1).nodes[1].backoff.resume, t0 + US(2) + data + US(79));
        assert_eq!(air.bss(0).sta_stats(0).up.airtime_ns, data.as_nanos());
        assert_eq!(air.bss(1).sta_stats(0).up.airtime_ns, data.as_nanos());
        assert_eq!(air.bss(0).bss_stats().busy_ns, (US(2) + data).as_nanos());
        // the APs (bystanders) defer EIFS after the medium
        assert_eq!(air.bss(0).nodes[0].backoff.resume, t0 + US(2) + data + US(94));
        while let Some(t) = air.next_deadline() {
            air.on_timer(t, &mut out);
        }
        assert_eq!(out.iter().filter(|(_, o)| matches!(o, WifiOutput::Delivered { .. })).count(), 2);
    }

    #[test]
    fn cochannel_backoff_ending_after_cca_time_defers() {
        // 5 µs after the start the CCA reports the PPDU: the second station freezes (with its
        // counter at zero it goes AIFS after the exchange, having drawn no new backoff)
        let t0 = SimTime::from_millis(1);
        let mut air = cochannel_offset(t0, US(5));
        let mut out = vec![];
        air.on_timer(t0, &mut out);
        assert_eq!((air.bss(0).bss_stats().collisions, air.bss(1).bss_stats().collisions), (0, 0));
        let (data, ack) = data_ack();
        assert_eq!(air.bss(1).nodes[1].backoff.resume, t0 + data + US(16) + ack + US(34));
        while let Some(t) = air.next_deadline() {
            air.on_timer(t, &mut out);
        }
        assert_eq!(out[0], (0, WifiOutput::Delivered { at: t0 + data, from: Node::Sta(0), to: Node::Ap, pkt: 0 }));
        assert_eq!(out.len(), 2);
        assert_eq!((air.bss(0).bss_stats().collisions, air.bss(1).bss_stats().collisions), (0, 0));
    }

    #[test]
    fn rts_cts_precedes_the_data() {
        let mut b = bss_a(1, 60.0, true);
        let t0 = SimTime::from_millis(2);
        b.enqueue(t0, Node::Ap, Node::Sta(0), 9, 1500).unwrap();
        let mut out = vec![];
        drain(&mut b, &mut out);
        let (data, _) = data_ack();
        let rts = txtime(&TxVector::ofdm(4), dcf::RTS_BYTES, SimDuration::ZERO);
        let cts = txtime(&TxVector::ofdm(4), dcf::CTS_BYTES, SimDuration::ZERO);
        assert_eq!(out, vec![WifiOutput::Delivered { at: t0 + rts + US(16) + cts + US(16) + data, from: Node::Ap, to: Node::Sta(0), pkt: 9 }]);
    }

    #[test]
    fn undecodable_frame_is_retried_to_the_short_limit_then_dropped() {
        // 54 Mbit/s at 5 dB never decodes
        let mut b = bss_a(2, 5.0, false);
        let t0 = SimTime::from_millis(1);
        b.enqueue(t0, Node::Sta(0), Node::Ap, 1, 1500).unwrap();
        let mut out = vec![];
        b.on_timer(t0, &mut out);
        let (data, _) = data_ack();
        // no ACK: the sender waits AckTimeout, everyone else EIFS
        assert_eq!(b.nodes[1].backoff.resume, t0 + data + US(45) + US(34));
        assert_eq!(b.nodes[0].backoff.resume, t0 + data + US(94));
        assert_eq!(b.nodes[1].backoff.cw, 31);
        drain(&mut b, &mut out);
        assert!(matches!(out[..], [WifiOutput::Dropped { node: Node::Sta(0), to: Node::Ap, pkt: 1, .. }]));
        let s = &b.sta_stats(0).up;
        assert_eq!((s.ppdu_tx, s.ppdu_failed, s.mpdu_retx, s.retry_drops), (7, 7, 6, 1));
        // the discard resets CW (§10.3.3)
        assert_eq!(b.nodes[1].backoff.cw, 15);
    }
}
