//! IPv4 fragmentation and reassembly (RFC 791 §2.3 "Fragmentation", §3.2 "Fragmentation and
//! reassembly"; hole bookkeeping in the spirit of RFC 815).
//!
//! Fragmenting splits the IPv4 payload of a datagram too big for the MTU into pieces of
//! `⌊(mtu − 20)/8⌋·8` bytes (offsets are in 8-byte units on the wire, RFC 791 §3.1 "Fragment
//! Offset"), the last one taking the remainder; every fragment but the last has More Fragments
//! set, and each fragment is a 20-byte IPv4 header plus its share. The transport header travels in
//! the first fragment (offset 0). Since payload bytes are not modelled, every fragment carries a
//! copy of the transport [`Body`](crate::packet::Body) and a [`Fragment`] saying which bytes it
//! stands for. A datagram with Don't Fragment set that does not fit is refused (the caller would
//! send ICMP "fragmentation needed", RFC 792 / RFC 1191). A fragment can be fragmented again; the
//! pieces keep the original offsets and its More Fragments flag on the last piece.
//!
//! Reassembly keys datagrams by `(source, destination, protocol, identification)` (RFC 791 §3.2),
//! merges received byte ranges (duplicates and overlaps are harmless because there are no payload
//! bytes to disagree), learns the total length from the fragment without More Fragments, and
//! releases the whole datagram once `[0, total)` is covered. Incomplete datagrams are dropped after
//! a timeout (Linux `ipfrag_time`, 30 s; RFC 791 suggests a timer of up to 15 s) and at most
//! `max_datagrams` are held at once, the oldest evicted first (as Linux's memory thresholds do).
//! A reassembled datagram is CE-marked if any fragment was (RFC 3168 §5.3).

use std::collections::{HashMap, VecDeque};

use celltcp_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use crate::packet::{Ecn, Fragment, Ipv4, Packet, IPV4_HEADER};

/// Why a packet could not be fragmented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FragError {
    /// Don't Fragment is set and the packet is larger than the MTU.
    DontFragment { size: u32, mtu: u32 },
    /// The MTU leaves no room for 8 payload bytes (RFC 791 requires every host link to take 68).
    MtuTooSmall { mtu: u32 },
}

impl std::fmt::Display for FragError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FragError::DontFragment { size, mtu } => write!(f, "{size} B packet with DF set over a {mtu} B MTU"),
            FragError::MtuTooSmall { mtu } => write!(f, "MTU of {mtu} B is too small to fragment into"),
        }
    }
}

impl std::error::Error for FragError {}

/// Pushes `pkt` to `out` whole if it fits in `mtu`, else its fragments in offset order.
pub fn fragment(pkt: Packet, mtu: u32, out: &mut Vec<Packet>) -> Result<(), FragError> {
    let size = pkt.size();
    if size <= mtu {
        out.push(pkt);
        return Ok(());
    }
    if pkt.dont_fragment {
        return Err(FragError::DontFragment { size, mtu });
    }
    // RFC 791 §3.2: fragment data lengths are multiples of 8 except the last.
    let share = (mtu.saturating_sub(IPV4_HEADER) / 8) * 8;
    if share == 0 {
        return Err(FragError::MtuTooSmall { mtu });
    }
    let (base, total, last_more) = match pkt.frag {
        Some(f) => (f.offset, f.len, f.more),
        None => (0, pkt.datagram_len(), false),
    };
    let mut off = 0;
    while off < total {
        let len = share.min(total - off);
        let more = off + len < total || last_more;
        out.push(Packet { frag: Some(Fragment { offset: base + off, len, more }), ..pkt });
        off += len;
    }
    Ok(())
}

/// Reassembly limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReassemblyConfig {
    /// How long an incomplete datagram is kept after its first fragment (Linux `ipfrag_time`).
    pub timeout: SimDuration,
    /// Most incomplete datagrams held at once; the oldest is evicted to make room.
    pub max_datagrams: usize,
}

impl Default for ReassemblyConfig {
    fn default() -> Self {
        ReassemblyConfig { timeout: SimDuration::from_secs(30), max_datagrams: 1024 }
    }
}

/// Reassembly counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReassemblyStats {
    /// Fragments received.
    pub fragments: u64,
    /// Datagrams completed.
    pub reassembled: u64,
    /// Incomplete datagrams dropped at the timeout.
    pub timed_out: u64,
    /// Incomplete datagrams dropped to respect `max_datagrams`.
    pub evicted: u64,
    /// Fragments that brought no new bytes.
    pub duplicates: u64,
    /// Fragments inconsistent with the datagram's known length, ignored.
    pub inconsistent: u64,
}

type Key = (Ipv4, Ipv4, u8, u16);

#[derive(Debug)]
struct Partial {
    gen: u64,
    /// Header fields and transport body; taken from the offset-0 fragment once it arrives.
    template: Packet,
    total: Option<u32>,
    /// Received byte ranges `[start, end)`, sorted and disjoint.
    ranges: Vec<(u32, u32)>,
    ce: bool,
}

/// Reassembles IPv4 datagrams from fragments.
#[derive(Debug, Default)]
pub struct Reassembler {
    cfg: ReassemblyConfig,
    partial: HashMap<Key, Partial>,
    /// Creation order: (deadline, key, generation); stale records are skipped.
    order: VecDeque<(SimTime, Key, u64)>,
    next_gen: u64,
    /// Range vectors of finished datagrams, reused to avoid allocating per datagram.
    spare: Vec<Vec<(u32, u32)>>,
    stats: ReassemblyStats,
}

/// Inserts `[s, e)` into sorted disjoint `ranges`, merging touching ones; false if nothing new.
fn insert_range(ranges: &mut Vec<(u32, u32)>, s: u32, e: u32) -> bool {
    if s >= e {
        return false;
    }
    // First range that ends at or after s (could touch or overlap).
    let i = ranges.partition_point(|&(_, re)| re < s);
    if i < ranges.len() && ranges[i].0 <= s && ranges[i].1 >= e {
        return false;
    }
    let mut j = i;
    let (mut ns, mut ne) = (s, e);
    while j < ranges.len() && ranges[j].0 <= e {
        ns = ns.min(ranges[j].0);
        ne = ne.max(ranges[j].1);
        j += 1;
    }
    ranges.splice(i..j, std::iter::once((ns, ne)));
    true
}

impl Reassembler {
    pub fn new(cfg: ReassemblyConfig) -> Self {
        Reassembler { cfg, ..Default::default() }
    }

    pub fn stats(&self) -> ReassemblyStats {
        self.stats
    }

    /// Incomplete datagrams held.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }

    /// The earliest time an incomplete datagram may expire (possibly one already completed; calling
    /// [`Reassembler::expire`] then is harmless).
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.order.front().map(|r| r.0)
    }

    fn remove(&mut self, key: &Key) -> Option<Partial> {
        let mut p = self.partial.remove(key)?;
        let mut v = std::mem::take(&mut p.ranges);
        v.clear();
        self.spare.push(v);
        Some(p)
    }

    /// Drops the incomplete datagrams whose timeout has passed.
    pub fn expire(&mut self, now: SimTime) {
        while let Some(&(deadline, key, gen)) = self.order.front() {
            if deadline > now {
                break;
            }
            self.order.pop_front();
            if self.partial.get(&key).is_some_and(|p| p.gen == gen) {
                self.remove(&key);
                self.stats.timed_out += 1;
            }
        }
    }

    fn evict_oldest(&mut self) {
        while let Some((_, key, gen)) = self.order.pop_front() {
            if self.partial.get(&key).is_some_and(|p| p.gen == gen) {
                self.remove(&key);
                self.stats.evicted += 1;
                return;
            }
        }
    }

    /// Accepts a packet from the network: a whole datagram comes straight back; a fragment is
    /// held, and the datagram it completes is returned whole (`frag = None`).
    pub fn push(&mut self, now: SimTime, pkt: Packet) -> Option<Packet> {
        self.expire(now);
        let Some(f) = pkt.frag else { return Some(pkt) };
        self.stats.fragments += 1;
        let key = (pkt.src, pkt.dst, pkt.body.protocol(), pkt.ident);
        if !self.partial.contains_key(&key) {
            if self.partial.len() >= self.cfg.max_datagrams.max(1) {
                self.evict_oldest();
            }
            let gen = self.next_gen;
            self.next_gen += 1;
            let ranges = self.spare.pop().unwrap_or_default();
            self.partial.insert(key, Partial { gen, template: pkt, total: None, ranges, ce: false });
            self.order.push_back((now + self.cfg.timeout, key, gen));
        }
        let p = self.partial.get_mut(&key)?;
        let end = f.offset + f.len;
        // Inconsistent with a known end: past it, or a different last fragment.
        let bad_total = match p.total {
            Some(t) => end > t || (!f.more && end != t),
            None => !f.more && p.ranges.last().is_some_and(|r| r.1 > end),
        };
        if bad_total {
            self.stats.inconsistent += 1;
            return None;
        }
        if !f.more {
            p.total = Some(end);
        }
        if f.offset == 0 {
            p.template = pkt;
        }
        p.ce |= pkt.ecn == Ecn::Ce;
        if !insert_range(&mut p.ranges, f.offset, end) {
            self.stats.duplicates += 1;
        }
        let complete = p.total.is_some_and(|t| p.ranges.len() == 1 && p.ranges[0] == (0, t));
        if !complete {
            return None;
        }
        let p = self.remove(&key)?;
        self.stats.reassembled += 1;
        let mut whole = Packet { frag: None, ..p.template };
        if p.ce {
            whole.ecn = Ecn::Ce;
        }
        debug_assert_eq!(Some(whole.datagram_len()), p.total, "reassembled length differs from the body");
        Some(whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Body, TcpSegment, UdpDatagram};
    use celltcp_engine::component_rng;
    use rand::seq::SliceRandom;

    fn tcp(ip_size: u32, ident: u16) -> Packet {
        let s = TcpSegment { seq: 1000, payload_len: ip_size - 40, ..Default::default() };
        Packet::new(9, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), ident, SimTime::ZERO, Body::Tcp(s))
    }

    #[test]
    fn frag_3000_byte_segment_over_1500_mtu() {
        // RFC 791 §3.2: 1480-byte shares (multiple of 8) in 1500-byte fragments, MF on all but the
        // last, the last carrying the remainder: 2980 = 1480 + 1480 + 20 → sizes 1500, 1500, 40.
        let mut out = Vec::new();
        fragment(tcp(3000, 1), 1500, &mut out).unwrap();
        let sizes: Vec<u32> = out.iter().map(|p| p.size()).collect();
        assert_eq!(sizes, vec![1500, 1500, 40]);
        let frags: Vec<Fragment> = out.iter().map(|p| p.frag.unwrap()).collect();
        assert_eq!(
            frags,
            vec![
                Fragment { offset: 0, len: 1480, more: true },
                Fragment { offset: 1480, len: 1480, more: true },
                Fragment { offset: 2960, len: 20, more: false },
            ]
        );
        assert!(frags.iter().all(|f| f.offset % 8 == 0));
    }

    #[test]
    fn frag_fitting_packet_passes_unchanged_and_df_is_refused() {
        // A datagram within the MTU is not touched; DF and too big is an error (RFC 791 §2.3).
        let mut out = Vec::new();
        fragment(tcp(1500, 1), 1500, &mut out).unwrap();
        assert_eq!(out, vec![tcp(1500, 1)]);
        let mut p = tcp(1501, 1);
        p.dont_fragment = true;
        assert_eq!(fragment(p, 1500, &mut out), Err(FragError::DontFragment { size: 1501, mtu: 1500 }));
        assert_eq!(fragment(tcp(100, 1), 27, &mut out), Err(FragError::MtuTooSmall { mtu: 27 }));
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn frag_reassembles_in_any_order_with_duplicates() {
        // RFC 791 §3.2 / RFC 815: arrival order does not matter; duplicates and overlaps are ignored.
        let mut rng = component_rng(17, 1);
        for trial in 0..300u16 {
            let size = 1600 + (trial as u32 * 37) % 8000;
            let orig = tcp(size, trial);
            let mut frags = Vec::new();
            let mtu = [576, 1006, 1500][trial as usize % 3];
            fragment(orig, mtu, &mut frags).unwrap();
            // Some fragments again over a smaller MTU (overlapping pieces), some duplicated.
            let mut pieces = frags.clone();
            // (All but the first sub-piece, so that the extras can never make a second copy.)
            if trial % 2 == 0 {
                let mut sub = Vec::new();
                fragment(frags[0], 300, &mut sub).unwrap();
                pieces.extend_from_slice(&sub[1..]);
                pieces.push(*frags.last().unwrap());
            }
            pieces.shuffle(&mut rng);
            let mut r = Reassembler::new(ReassemblyConfig::default());
            let mut got = Vec::new();
            for p in &pieces {
                got.extend(r.push(SimTime::ZERO, *p));
            }
            assert_eq!(got.len(), 1, "trial {trial}: {got:?}");
            assert_eq!(got[0], orig);
            // Duplicates arriving after completion start a new datagram that only times out.
            r.expire(SimTime::from_secs(30));
            assert_eq!(r.pending(), 0);
        }
    }

    #[test]
    fn frag_missing_fragment_delivers_nothing_and_times_out() {
        // Without every byte nothing is delivered; the datagram is dropped and counted once the
        // timeout (Linux ipfrag_time, 30 s) passes.
        let mut frags = Vec::new();
        fragment(tcp(4000, 5), 1500, &mut frags).unwrap();
        let mut r = Reassembler::new(ReassemblyConfig::default());
        assert!(r.push(SimTime::from_secs(1), frags[0]).is_none());
        assert!(r.push(SimTime::from_secs(2), frags[2]).is_none());
        assert_eq!(r.pending(), 1);
        assert_eq!(r.next_deadline(), Some(SimTime::from_secs(31)));
        r.expire(SimTime::from_secs(30));
        assert_eq!(r.pending(), 1);
        r.expire(SimTime::from_secs(31));
        assert_eq!(r.pending(), 0);
        assert_eq!(r.stats().timed_out, 1);
        // The late fragment starts a new, incomplete datagram.
        assert!(r.push(SimTime::from_secs(32), frags[1]).is_none());
    }

    #[test]
    fn frag_keys_separate_datagrams_and_memory_is_bounded() {
        // Key = (src, dst, protocol, ident): interleaved datagrams do not mix; beyond
        // max_datagrams the oldest incomplete one is evicted.
        let mut r = Reassembler::new(ReassemblyConfig { max_datagrams: 2, ..Default::default() });
        let (mut a, mut b) = (Vec::new(), Vec::new());
        fragment(tcp(3000, 1), 1500, &mut a).unwrap();
        fragment(tcp(2000, 2), 1500, &mut b).unwrap();
        let udp = Packet::new(
            1,
            Ipv4::new(10, 0, 0, 1),
            Ipv4::new(10, 0, 0, 2),
            1,
            SimTime::ZERO,
            Body::Udp(UdpDatagram { payload_len: 2000, ..Default::default() }),
        );
        let mut c = Vec::new();
        fragment(udp, 1500, &mut c).unwrap();
        assert!(r.push(SimTime::ZERO, a[0]).is_none());
        assert!(r.push(SimTime::ZERO, b[0]).is_none());
        assert_eq!(r.push(SimTime::ZERO, b[1]), Some(tcp(2000, 2)));
        assert!(r.push(SimTime::ZERO, c[0]).is_none()); // same ident as a, other protocol
        assert!(r.push(SimTime::ZERO, a[1]).is_none());
        assert_eq!(r.push(SimTime::ZERO, c[1]), Some(udp));
        assert_eq!(r.push(SimTime::ZERO, a[2]), Some(tcp(3000, 1)));
        // Three concurrent datagrams with room for two: the first is evicted.
        let mut d = Vec::new();
        for id in 10..13 {
            fragment(tcp(3000, id), 1500, &mut d).unwrap();
        }
        for p in d.iter().filter(|p| p.frag.unwrap().offset == 0) {
            r.push(SimTime::ZERO, *p);
        }
        assert_eq!((r.pending(), r.stats().evicted), (2, 1));
    }

    #[test]
    fn frag_ce_on_any_fragment_marks_the_datagram() {
        // RFC 3168 §5.3: if any fragment carries CE, the reassembled packet is CE.
        let mut p = tcp(3000, 3);
        p.ecn = Ecn::Ect0;
        let mut frags = Vec::new();
        fragment(p, 1500, &mut frags).unwrap();
        frags[1].ecn = Ecn::Ce;
        let mut r = Reassembler::new(ReassemblyConfig::default());
        let whole = frags.iter().filter_map(|f| r.push(SimTime::ZERO, *f)).next().unwrap();
        assert_eq!(whole.ecn, Ecn::Ce);
    }

    #[test]
    fn frag_range_merge() {
        // Hole bookkeeping: touching and overlapping ranges merge; contained ones add nothing.
        let mut v = Vec::new();
        assert!(insert_range(&mut v, 16, 24));
        assert!(insert_range(&mut v, 0, 8));
        assert!(insert_range(&mut v, 8, 16));
        assert_eq!(v, vec![(0, 24)]);
        assert!(!insert_range(&mut v, 4, 20));
        assert!(insert_range(&mut v, 40, 48));
        assert!(insert_range(&mut v, 20, 44));
        assert_eq!(v, vec![(0, 48)]);
    }
}
