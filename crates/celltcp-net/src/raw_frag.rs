//! Reassembly of real IPv4 fragments' bytes (emulation, `celltcp emu`): what a simulated host's
//! IP layer does with the fragments a kernel sent it (a `ping -s 3000` over a 1500-byte MTU
//! arrives as three), so that it can answer the whole datagram ([`crate::raw::echo_reply`]).
//!
//! RFC 791 §3.2 ("Fragmentation and Reassembly"): fragments belong together by (source,
//! destination, protocol, identification) — here also by the host that receives them; the
//! offset counts 8-byte units; the fragment without More Fragments gives the total length; the
//! datagram is whole once `[0, total)` is covered, and gets the offset-0 fragment's header with
//! the fragment fields cleared and the total length and checksum (RFC 1071) rewritten. Linux's
//! rules where RFC 791 leaves a choice (`net/ipv4/ip_fragment.c`, `ip_frag_queue`,
//! `inet_frag_queue_insert`):
//! - a fragment that repeats one held exactly (same offset and end) is dropped, the datagram
//!   kept; one that overlaps any other way drops the whole datagram (the rule RFC 5722 §4 set
//!   for IPv6, which Linux applies to IPv4 too since the FragmentSmack fixes);
//! - a last fragment ending before bytes already held, or a second last fragment with another
//!   end, or a fragment past a known end, is dropped (inconsistent);
//! - an incomplete datagram is dropped `ipfrag_time` (30 s) after its first fragment arrived;
//! - no fragment is taken while the bytes held exceed `ipfrag_high_thresh` (4 MiB).
//!
//! A reassembled datagram is CE-marked if any fragment was (RFC 3168 §5.3). The bytes held are
//! the fragments' payloads and the offset-0 fragment's header.

use std::collections::{HashMap, VecDeque};

use celltcp_engine::{SimDuration, SimTime};

use crate::pcap::Csum;

/// Linux `net.ipv4.ipfrag_time`: an incomplete datagram's lifetime.
pub const IPFRAG_TIME: SimDuration = SimDuration::from_secs(30);
/// Linux `net.ipv4.ipfrag_high_thresh`: no fragment is taken beyond this many bytes held.
pub const IPFRAG_HIGH_THRESH: usize = 4 << 20;

const H: usize = 20;

/// (receiving host, source, destination, protocol, identification).
type Key = (u32, [u8; 4], [u8; 4], u8, u16);

/// Counters of a [`RawReassembler`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawReassemblyStats {
    pub fragments: u64,
    pub reassembled: u64,
    /// Incomplete datagrams dropped at `ipfrag_time`.
    pub timed_out: u64,
    /// Exact repeats of a fragment held (dropped, the datagram kept).
    pub duplicates: u64,
    /// Datagrams dropped because two fragments overlapped.
    pub overlaps: u64,
    /// Fragments inconsistent with the datagram's end, or malformed (dropped).
    pub inconsistent: u64,
    /// Fragments refused because the bytes held exceeded `ipfrag_high_thresh`.
    pub over_limit: u64,
}

#[derive(Debug)]
struct Partial {
    gen: u64,
    /// The offset-0 fragment's header, once it arrived.
    header: Option<[u8; H]>,
    /// Payload bytes by offset (grown as fragments arrive).
    data: Vec<u8>,
    /// Fragments held as `[start, end)`, sorted, disjoint.
    frags: Vec<(usize, usize)>,
    total: Option<usize>,
    ce: bool,
    /// Bytes counted against the limit.
    bytes: usize,
}

/// Reassembles real IPv4 fragments (module doc).
#[derive(Debug)]
pub struct RawReassembler {
    timeout: SimDuration,
    high_thresh: usize,
    partial: HashMap<Key, Partial>,
    /// (deadline, key, generation) in arrival order of first fragments.
    order: VecDeque<(SimTime, Key, u64)>,
    next_gen: u64,
    bytes: usize,
    stats: RawReassemblyStats,
}

impl Default for RawReassembler {
    fn default() -> Self {
        RawReassembler::new(IPFRAG_TIME, IPFRAG_HIGH_THRESH)
    }
}

impl RawReassembler {
    /// A reassembler with Linux's `ipfrag_time` and `ipfrag_high_thresh` set to these values.
    pub fn new(timeout: SimDuration, high_thresh: usize) -> Self {
        RawReassembler { timeout, high_thresh, partial: HashMap::new(), order: VecDeque::new(), next_gen: 0, bytes: 0, stats: RawReassemblyStats::default() }
    }

    /// Bytes held (fragments waiting for the rest of their datagram).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Incomplete datagrams held.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }

    pub fn stats(&self) -> RawReassemblyStats {
        self.stats
    }

    /// When the oldest incomplete datagram expires (perhaps one completed meanwhile).
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.order.front().map(|o| o.0)
    }

    fn remove(&mut self, key: &Key) -> Option<Partial> {
        let p = self.partial.remove(key)?;
        self.bytes -= p.bytes;
        Some(p)
    }

    /// Drops the incomplete datagrams whose `ipfrag_time` has passed at `now`.
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

    /// Takes the fragment `b` (an IPv4 packet without options with MF set or a non-zero offset)
    /// received by `host` at `now`; returns the whole datagram's bytes when it completes one.
    pub fn push(&mut self, now: SimTime, host: u32, b: &[u8]) -> Option<Vec<u8>> {
        self.expire(now);
        self.stats.fragments += 1;
        if b.len() < H || b[0] != 0x45 {
            self.stats.inconsistent += 1;
            return None;
        }
        let total_len = usize::from(u16::from_be_bytes([b[2], b[3]]));
        let flags_off = u16::from_be_bytes([b[6], b[7]]);
        let more = flags_off & 0x2000 != 0;
        let start = usize::from(flags_off & 0x1fff) * 8;
        if total_len < H || total_len > b.len() || (!more && start == 0) {
            self.stats.inconsistent += 1;
            return None;
        }
        let payload = &b[H..total_len];
        let end = start + payload.len();
        if end == start || (more && !payload.len().is_multiple_of(8)) || end > 65_535 - H {
            // RFC 791 §3.2: every fragment but the last carries a multiple of 8 bytes
            self.stats.inconsistent += 1;
            return None;
        }
        if self.bytes > self.high_thresh {
            self.stats.over_limit += 1;
            return None;
        }
        let key: Key = (host, [b[12], b[13], b[14], b[15]], [b[16], b[17], b[18], b[19]], b[9], u16::from_be_bytes([b[4], b[5]]));
        if !self.partial.contains_key(&key) {
            let gen = self.next_gen;
            self.next_gen += 1;
            self.partial.insert(key, Partial { gen, header: None, data: Vec::new(), frags: Vec::new(), total: None, ce: false, bytes: 0 });
            self.order.push_back((now + self.timeout, key, gen));
        }
        let p = self.partial.get_mut(&key).expect("inserted");
        // the datagram's end (ip_frag_queue): a last fragment may not end before bytes held or
        // differ from an earlier last fragment; no fragment may pass a known end
        let held_end = p.frags.last().map_or(0, |f| f.1);
        let bad = match (more, p.total) {
            (false, Some(t)) => end != t,
            (false, None) => end < held_end,
            (true, Some(t)) => end > t,
            (true, None) => false,
        };
        if bad {
            self.stats.inconsistent += 1;
            return None;
        }
        // where it goes among the fragments held: an exact repeat is dropped, an overlap drops
        // the datagram (inet_frag_queue_insert: IPFRAG_DUP, IPFRAG_OVERLAP)
        let i = p.frags.partition_point(|f| f.1 <= start);
        if let Some(&(s, e)) = p.frags.get(i) {
            if (s, e) == (start, end) {
                self.stats.duplicates += 1;
                return None;
            }
            if s < end {
                self.remove(&key);
                self.stats.overlaps += 1;
                return None;
            }
        }
        p.frags.insert(i, (start, end));
        if !more {
            p.total = Some(end);
        }
        if p.data.len() < end {
            p.data.resize(end, 0);
        }
        p.data[start..end].copy_from_slice(payload);
        p.ce |= b[1] & 3 == 3;
        let mut add = payload.len();
        if start == 0 {
            let mut h = [0u8; H];
            h.copy_from_slice(&b[..H]);
            p.header = Some(h);
            add += H;
        }
        p.bytes += add;
        self.bytes += add;
        // whole: the fragments held touch one another from 0 to the end
        let whole = p.header.is_some() && p.total.is_some_and(|t| p.frags.last().is_some_and(|f| f.1 == t)) && p.frags.windows(2).all(|w| w[0].1 == w[1].0);
        if !whole {
            return None;
        }
        let p = self.remove(&key).expect("held");
        self.stats.reassembled += 1;
        let mut out = Vec::with_capacity(H + p.data.len());
        out.extend_from_slice(&p.header.expect("offset 0 held"));
        out.extend_from_slice(&p.data);
        let n = out.len() as u16;
        out[2..4].copy_from_slice(&n.to_be_bytes());
        // fragment fields cleared (DF kept as the first fragment had it)
        out[6] &= 0x40;
        out[7] = 0;
        if p.ce {
            out[1] |= 3;
        }
        out[10..12].fill(0);
        let mut c = Csum::default();
        c.add_bytes(&out[..H]);
        let c = c.finish();
        out[10..12].copy_from_slice(&c.to_be_bytes());
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A datagram of `len` payload bytes from 10.0.0.1 to 10.0.0.2, protocol ICMP, its payload
    /// a pattern; and its fragments for `mtu`, cut by hand as RFC 791 §3.2 says (shares of
    /// ⌊(mtu − 20)/8⌋·8 bytes, MF on all but the last, offsets in 8-byte units).
    fn datagram(len: usize, ident: u16) -> Vec<u8> {
        let mut b = vec![0x45, 0, 0, 0, (ident >> 8) as u8, ident as u8, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        b.extend((0..len).map(|i| (i * 7 % 251) as u8));
        let n = b.len() as u16;
        b[2..4].copy_from_slice(&n.to_be_bytes());
        set_csum(&mut b);
        b
    }

    fn set_csum(b: &mut [u8]) {
        b[10..12].fill(0);
        // RFC 1071, written out
        let mut s: u32 = b[..20].chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        let c = !(s as u16);
        b[10..12].copy_from_slice(&c.to_be_bytes());
    }

    fn frags(d: &[u8], mtu: usize) -> Vec<Vec<u8>> {
        let share = (mtu - 20) / 8 * 8;
        let payload = &d[20..];
        let mut out = Vec::new();
        let mut off = 0;
        while off < payload.len() {
            let n = share.min(payload.len() - off);
            let mut f = d[..20].to_vec();
            f.extend_from_slice(&payload[off..off + n]);
            let more = off + n < payload.len();
            let fo = (off / 8) as u16 | if more { 0x2000 } else { 0 };
            f[6..8].copy_from_slice(&fo.to_be_bytes());
            let len = f.len() as u16;
            f[2..4].copy_from_slice(&len.to_be_bytes());
            set_csum(&mut f);
            out.push(f);
            off += n;
        }
        out
    }

    const T0: SimTime = SimTime::ZERO;

    #[test]
    fn raw_frag_ping_3000_in_any_order_with_duplicates_is_the_datagram() {
        // ping -s 3000: 3028 bytes, over a 1500-byte MTU 1500 + 1500 + 68 (1480 + 1480 + 48)
        let d = datagram(3008, 0x1234);
        let f = frags(&d, 1500);
        assert_eq!(f.iter().map(Vec::len).collect::<Vec<_>>(), vec![1500, 1500, 68]);
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1]] {
            let mut r = RawReassembler::default();
            assert_eq!(r.push(T0, 7, &f[order[0]]), None);
            // an exact repeat changes nothing
            assert_eq!(r.push(T0, 7, &f[order[0]]), None);
            assert_eq!(r.push(T0, 7, &f[order[1]]), None);
            assert_eq!(r.bytes(), f[order[0]].len() - 20 + f[order[1]].len() - 20 + if order[..2].contains(&0) { 20 } else { 0 });
            let whole = r.push(T0, 7, &f[order[2]]).expect("complete");
            assert_eq!(whole, d, "{order:?}: the datagram byte for byte, header checksum included");
            assert_eq!((r.bytes(), r.pending(), r.stats().duplicates), (0, 0, 1));
        }
    }

    #[test]
    fn raw_frag_missing_fragment_no_datagram_and_bytes_freed_at_ipfrag_time() {
        let f = frags(&datagram(3008, 9), 1500);
        let mut r = RawReassembler::default();
        assert_eq!(r.push(T0, 1, &f[0]), None);
        assert_eq!(r.push(SimTime::from_secs(10), 1, &f[2]), None);
        assert_eq!((r.pending(), r.bytes()), (1, 1500 + 48));
        assert_eq!(r.next_deadline(), Some(SimTime::from_secs(30)), "30 s after the first fragment");
        r.expire(SimTime::from_secs(29));
        assert_eq!(r.pending(), 1);
        r.expire(SimTime::from_secs(30));
        assert_eq!((r.pending(), r.bytes(), r.stats().timed_out), (0, 0, 1));
        // the missing one alone, later, completes nothing
        assert_eq!(r.push(SimTime::from_secs(31), 1, &f[1]), None);
    }

    #[test]
    fn raw_frag_overlap_drops_the_datagram_and_keys_keep_datagrams_apart() {
        let d = datagram(3008, 5);
        let f = frags(&d, 1500);
        // the same datagram cut for a 1000-byte MTU: its second piece (offset 976) overlaps the
        // first 1500-byte fragment's [0, 1480) without repeating it
        let g = frags(&d, 1000);
        let mut r = RawReassembler::default();
        assert_eq!(r.push(T0, 1, &f[0]), None);
        assert_eq!(r.push(T0, 1, &g[1]), None);
        assert_eq!((r.pending(), r.bytes(), r.stats().overlaps), (0, 0, 1), "RFC 5722 §4 / Linux: all dropped");
        // fragments of two datagrams (other identification, other host) do not mix
        let e = datagram(3008, 6);
        let fe = frags(&e, 1500);
        assert_eq!(r.push(T0, 1, &f[0]), None);
        assert_eq!(r.push(T0, 1, &fe[1]), None);
        assert_eq!(r.push(T0, 2, &f[1]), None);
        assert_eq!(r.push(T0, 1, &fe[2]), None);
        assert_eq!(r.push(T0, 1, &fe[0]).as_deref(), Some(&e[..]));
        assert_eq!(r.push(T0, 1, &f[2]), None);
        assert_eq!(r.push(T0, 1, &f[1]).as_deref(), Some(&d[..]));
        assert_eq!(r.pending(), 1, "host 2's fragment waits alone");
    }

    #[test]
    fn raw_frag_inconsistent_ends_and_memory_limit() {
        let d = datagram(3008, 5);
        let f = frags(&d, 1500);
        let mut r = RawReassembler::default();
        r.push(T0, 1, &f[2]);
        // a fragment past the known end, a last fragment with another end
        let mut past = f[1].clone();
        past[6..8].copy_from_slice(&(0x2000u16 | (2960 / 8)).to_be_bytes());
        assert_eq!(r.push(T0, 1, &past), None);
        let mut other_end = f[2].clone();
        other_end[6..8].copy_from_slice(&((2960 / 8 + 1) as u16).to_be_bytes());
        assert_eq!(r.push(T0, 1, &other_end), None);
        assert_eq!(r.stats().inconsistent, 2);
        // beyond ipfrag_high_thresh nothing more is taken (checked before each fragment)
        let mut small = RawReassembler::new(IPFRAG_TIME, 2000);
        assert_eq!(small.push(T0, 1, &f[0]), None);
        assert_eq!(small.push(T0, 1, &f[1]), None);
        assert_eq!(small.bytes(), 2980, "1500 held before the second: under the threshold, taken");
        assert_eq!(small.push(T0, 1, &f[2]), None, "2980 held: refused, the datagram never completes");
        assert_eq!(small.stats().over_limit, 1);
    }
}
