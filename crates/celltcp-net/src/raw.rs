//! Real IPv4 packets inside the simulation (emulation, `celltcp emu`).
//!
//! A packet read from a TUN device is parsed once ([`parse_ipv4`], RFC 791 §3.1) into a
//! [`Packet`] whose body is [`Body::Raw`]: addresses, identification, TTL, ECN, DF and fragment
//! fields become the packet's own fields, the protocol and the ports (RFC 9293 §3.1, RFC 768)
//! classify it, and the original bytes go to a [`RawStore`] under a key. The simulation moves
//! the packet like any other (queues, loss, fragmentation on a smaller MTU, the LTE stack), may
//! decrement its TTL or mark it CE (RFC 3168 §5); when it leaves the simulation (to a TUN
//! device, or to a pcap file) [`wire_bytes`] rebuilds it: the IPv4 header from the packet's
//! fields (checksum recomputed, RFC 1071), the payload from the stored bytes (the fragment's
//! share of it, RFC 791 §3.2). Only IPv4 without options (IHL 5, what Linux sends) is accepted.
//!
//! The store counts the packets that carry a key ([`RawStore::retain`] when a packet is cut into
//! fragments, [`RawStore::release`] when one leaves the simulation or is dropped): the bytes are
//! freed when the last packet carrying them is gone, so memory follows the packets in flight,
//! not the run's length. The simulation releases at every drop it knows of (queue overflow,
//! loss, a medium's discards, no route, TTL, a simulated host's IP layer); an entry whose
//! packets vanish without a release is freed by age (first in, first out) once the store holds
//! more than its capacity, and a packet whose bytes were evicted is lost when it leaves
//! (counted by the caller). Entries live in a map by key, so one such entry holds nothing but
//! itself (a first-in first-out array would keep every slot behind it).

use std::collections::HashMap;

use crate::packet::{Body, Ecn, Fragment, Ipv4, Packet, RawIp, IPV4_HEADER, PROTO_TCP, PROTO_UDP};
use crate::pcap::Csum;
use celltcp_engine::SimTime;

/// Why a buffer is not an acceptable IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawError {
    TooShort(usize),
    NotIpv4(u8),
    HasOptions(u8),
    BadLength { total: u16, got: usize },
}

impl std::fmt::Display for RawError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawError::TooShort(n) => write!(f, "packet of {n} bytes: expected at least a 20-byte IPv4 header"),
            RawError::NotIpv4(v) => write!(f, "IP version {v}: expected 4"),
            RawError::HasOptions(ihl) => write!(f, "IPv4 header length {ihl} words: expected 5 (no options)"),
            RawError::BadLength { total, got } => write!(f, "IPv4 total length {total} but {got} bytes read"),
        }
    }
}

impl std::error::Error for RawError {}

/// Parses the IPv4 packet `b` into a [`Packet`] with a [`Body::Raw`] body under store key
/// `key`; `now` becomes its creation time. Bytes past the IPv4 total length are ignored.
pub fn parse_ipv4(b: &[u8], key: u64, now: SimTime) -> Result<Packet, RawError> {
    if b.len() < IPV4_HEADER as usize {
        return Err(RawError::TooShort(b.len()));
    }
    if b[0] >> 4 != 4 {
        return Err(RawError::NotIpv4(b[0] >> 4));
    }
    if b[0] & 0x0f != 5 {
        return Err(RawError::HasOptions(b[0] & 0x0f));
    }
    let total = u16::from_be_bytes([b[2], b[3]]);
    if (total as usize) < IPV4_HEADER as usize || total as usize > b.len() {
        return Err(RawError::BadLength { total, got: b.len() });
    }
    let ecn = match b[1] & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    };
    let flags_off = u16::from_be_bytes([b[6], b[7]]);
    let offset = u32::from(flags_off & 0x1fff) * 8;
    let more = flags_off & 0x2000 != 0;
    let payload = u32::from(total) - IPV4_HEADER;
    let frag = (more || offset > 0).then_some(Fragment { offset, len: payload, more });
    let proto = b[9];
    let (mut src_port, mut dst_port) = (0, 0);
    if offset == 0 && (proto == PROTO_TCP || proto == PROTO_UDP) && payload >= 4 {
        src_port = u16::from_be_bytes([b[20], b[21]]);
        dst_port = u16::from_be_bytes([b[22], b[23]]);
    }
    let src = Ipv4(u32::from_be_bytes([b[12], b[13], b[14], b[15]]));
    let dst = Ipv4(u32::from_be_bytes([b[16], b[17], b[18], b[19]]));
    let ident = u16::from_be_bytes([b[4], b[5]]);
    let body = Body::Raw(RawIp { key, proto, src_port, dst_port, payload_len: payload });
    let mut p = Packet::new(0, src, dst, ident, now, body);
    p.ttl = b[8];
    p.ecn = ecn;
    p.dont_fragment = flags_off & 0x4000 != 0;
    p.frag = frag;
    Ok(p)
}

/// Appends the wire bytes of `pkt` (a [`Body::Raw`] packet) to `out`, from `orig`, the bytes
/// of the packet as it entered: the IPv4 header rebuilt from `pkt`'s fields (TTL, ECN,
/// identification, DF/MF, offset, total length; the DSCP bits and the protocol kept) with its
/// checksum, then `pkt`'s share of the original payload. Returns false (appending nothing) when
/// `pkt` is not raw or its range is not inside `orig`.
pub fn wire_bytes(pkt: &Packet, orig: &[u8], out: &mut Vec<u8>) -> bool {
    let Body::Raw(_) = pkt.body else { return false };
    let h = IPV4_HEADER as usize;
    if orig.len() < h {
        return false;
    }
    let total = u16::from_be_bytes([orig[2], orig[3]]) as usize;
    let orig_off = (u32::from(u16::from_be_bytes([orig[6], orig[7]]) & 0x1fff) * 8) as usize;
    let (off, len, more) = match pkt.frag {
        Some(f) => (f.offset as usize, f.len as usize, f.more),
        None => (0, total.saturating_sub(h), false),
    };
    if off < orig_off || h + (off - orig_off) + len > total.min(orig.len()) {
        return false;
    }
    let start = out.len();
    let mut flags_off: u16 = ((off / 8) as u16) & 0x1fff;
    if more {
        flags_off |= 0x2000;
    }
    if pkt.dont_fragment {
        flags_off |= 0x4000;
    }
    out.push(0x45);
    out.push((orig[1] & 0xfc) | pkt.ecn.bits());
    out.extend_from_slice(&((h + len) as u16).to_be_bytes());
    out.extend_from_slice(&pkt.ident.to_be_bytes());
    out.extend_from_slice(&flags_off.to_be_bytes());
    out.push(pkt.ttl);
    out.push(orig[9]);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&pkt.src.octets());
    out.extend_from_slice(&pkt.dst.octets());
    let mut c = Csum::default();
    c.add_bytes(&out[start..start + h]);
    out[start + 10..start + 12].copy_from_slice(&c.finish().to_be_bytes());
    let p0 = h + (off - orig_off);
    out.extend_from_slice(&orig[p0..p0 + len]);
    true
}

/// The bytes of a real IPv4 packet's headers: the IPv4 header, plus the TCP header (its data
/// offset) or the 8-byte UDP/ICMP header in a first fragment; at most the packet.
pub fn headers_len(b: &[u8]) -> usize {
    if b.len() < IPV4_HEADER as usize {
        return b.len();
    }
    let ihl = usize::from(b[0] & 0x0f) * 4;
    let first = u16::from_be_bytes([b[6], b[7]]) & 0x1fff == 0;
    let t = match b[9] {
        PROTO_TCP if first && b.len() > ihl + 12 => usize::from(b[ihl + 12] >> 4) * 4,
        _ if first => 8,
        _ => 0,
    };
    (ihl + t).min(b.len())
}

/// The echo reply a host's IP layer sends to the real ICMP echo request `req` (RFC 792: type 8
/// answered with type 0, the same code, identifier, sequence number and data; the checksum of
/// the ICMP message recomputed; addresses swapped), appended to `out`. The IPv4 header is the
/// one Linux's `icmp_reply` gives: the request's DSCP, not ECN-capable, identification `ident`,
/// no DF (the ICMP socket's `IP_PMTUDISC_DONT`), TTL 64 (`net.ipv4.ip_default_ttl`). Returns
/// false (appending nothing) when `req` is not a whole echo request (IPv4 without options,
/// not a fragment, ICMP type 8 code 0).
pub fn echo_reply(req: &[u8], ident: u16, out: &mut Vec<u8>) -> bool {
    let h = IPV4_HEADER as usize;
    if req.len() < h + 8 || req[0] != 0x45 || req[9] != 1 || u16::from_be_bytes([req[6], req[7]]) & 0x3fff != 0 {
        return false;
    }
    let total = usize::from(u16::from_be_bytes([req[2], req[3]]));
    if total < h + 8 || total > req.len() || req[h] != 8 || req[h + 1] != 0 {
        return false;
    }
    let start = out.len();
    out.extend_from_slice(&req[..total]);
    let r = &mut out[start..];
    r[1] = req[1] & 0xfc;
    r[4..6].copy_from_slice(&ident.to_be_bytes());
    r[6..8].fill(0);
    r[8] = 64;
    r[10..12].fill(0);
    r[12..16].copy_from_slice(&req[16..20]);
    r[16..20].copy_from_slice(&req[12..16]);
    let mut c = Csum::default();
    c.add_bytes(&r[..h]);
    let c = c.finish();
    r[10..12].copy_from_slice(&c.to_be_bytes());
    r[h] = 0;
    r[h + 2..h + 4].fill(0);
    let mut c = Csum::default();
    c.add_bytes(&r[h..]);
    let c = c.finish();
    r[h + 2..h + 4].copy_from_slice(&c.to_be_bytes());
    true
}

/// A store of packet bytes under increasing keys, each entry with the count of packets that
/// carry it, bounded in bytes (module doc).
#[derive(Debug)]
pub struct RawStore {
    entries: HashMap<u64, RawEntry>,
    /// The key the next [`RawStore::put`] returns.
    next: u64,
    /// Every key below `low` is gone (the front of the eviction order).
    low: u64,
    bytes: usize,
    peak_bytes: usize,
    cap_bytes: usize,
    evicted: u64,
}

#[derive(Debug)]
struct RawEntry {
    bytes: Box<[u8]>,
    /// Packets of the simulation carrying this key.
    refs: u32,
}

impl RawStore {
    /// A store that holds at most `cap_bytes` (the oldest entries are evicted beyond it).
    pub fn new(cap_bytes: usize) -> Self {
        RawStore { entries: HashMap::new(), next: 0, low: 0, bytes: 0, peak_bytes: 0, cap_bytes, evicted: 0 }
    }

    /// The key the next [`RawStore::put`] will return.
    pub fn next_key(&self) -> u64 {
        self.next
    }

    /// Stores `b`, carried by one packet, and returns its key.
    pub fn put(&mut self, b: &[u8]) -> u64 {
        let key = self.next;
        self.next += 1;
        self.bytes += b.len();
        self.entries.insert(key, RawEntry { bytes: b.into(), refs: 1 });
        while self.bytes > self.cap_bytes && self.entries.len() > 1 {
            if let Some(e) = self.entries.remove(&self.low) {
                self.bytes -= e.bytes.len();
                self.evicted += 1;
            }
            self.low += 1;
        }
        self.peak_bytes = self.peak_bytes.max(self.bytes);
        key
    }

    /// The bytes under `key`, unless released or evicted.
    pub fn get(&self, key: u64) -> Option<&[u8]> {
        self.entries.get(&key).map(|e| &*e.bytes)
    }

    /// `n` more packets carry `key` (a packet cut into `n + 1` fragments).
    pub fn retain(&mut self, key: u64, n: u32) {
        if let Some(e) = self.entries.get_mut(&key) {
            e.refs += n;
        }
    }

    /// One packet carrying `key` is gone (it left the simulation or was dropped): the bytes are
    /// freed with the last one.
    pub fn release(&mut self, key: u64) {
        let Some(e) = self.entries.get_mut(&key) else { return };
        e.refs -= 1;
        if e.refs == 0 {
            let e = self.entries.remove(&key).unwrap();
            self.bytes -= e.bytes.len();
            // the front moves past the keys already gone
            while self.low < self.next && !self.entries.contains_key(&self.low) {
                self.low += 1;
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The most bytes held at once.
    pub fn peak_bytes(&self) -> usize {
        self.peak_bytes
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entry held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries evicted for room (their packets, if still in flight, are lost when they leave).
    pub fn evicted(&self) -> u64 {
        self.evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ICMP echo request laid out as Linux's `ping -c1 10.0.0.2` sends it from 10.0.0.1: 84
    /// bytes, DF set, TTL 64, ident 0x4b2d; the header checksum 0xdb79 computed independently of
    /// this code (RFC 1071 one's complement sum, by hand in Python).
    fn ping_bytes() -> Vec<u8> {
        let mut b = vec![
            0x45, 0x00, 0x00, 0x54, 0x4b, 0x2d, 0x40, 0x00, 0x40, 0x01, 0xdb, 0x79, 10, 0, 0, 1, 10, 0, 0, 2, //
            0x08, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x01,
        ];
        b.resize(84, 0xab);
        b
    }

    fn ip_checksum_ok(h: &[u8]) -> bool {
        // RFC 1071: the one's complement sum over a header with its checksum is 0xffff.
        let mut s: u32 = h.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        s == 0xffff
    }

    #[test]
    fn raw_parse_reads_rfc791_fields() {
        let b = ping_bytes();
        assert!(ip_checksum_ok(&b[..20]), "the reference header's own checksum");
        let p = parse_ipv4(&b, 7, SimTime::ZERO).unwrap();
        assert_eq!((p.src, p.dst, p.ident, p.ttl), (Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0x4b2d, 64));
        assert!(p.dont_fragment && p.frag.is_none());
        assert_eq!(p.size(), 84);
        assert_eq!(p.body.protocol(), 1);
        let Body::Raw(r) = p.body else { panic!() };
        assert_eq!((r.key, r.payload_len), (7, 64));
    }

    #[test]
    fn raw_wire_bytes_unchanged_packet_is_identical() {
        let b = ping_bytes();
        let p = parse_ipv4(&b, 0, SimTime::ZERO).unwrap();
        let mut out = Vec::new();
        assert!(wire_bytes(&p, &b, &mut out));
        assert_eq!(out, b, "same fields: the same bytes, checksum included");
    }

    #[test]
    fn raw_wire_bytes_ttl_and_ce_patched_with_valid_checksum() {
        let b = ping_bytes();
        let mut p = parse_ipv4(&b, 0, SimTime::ZERO).unwrap();
        p.ttl = 61;
        p.ecn = Ecn::Ce;
        let mut out = Vec::new();
        assert!(wire_bytes(&p, &b, &mut out));
        assert_eq!((out[8], out[1] & 3), (61, 3));
        assert!(ip_checksum_ok(&out[..20]));
        assert_eq!(out[20..], b[20..]);
    }

    #[test]
    fn raw_fragments_rebuild_the_payload() {
        // a 1500-byte UDP datagram without DF, fragmented to a 1000-byte MTU (RFC 791 §3.2)
        let mut b = vec![0x45, 0, 0x05, 0xdc, 0, 9, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        b.extend((0..1480u32).map(|i| (i % 251) as u8));
        let p = parse_ipv4(&b, 0, SimTime::ZERO).unwrap();
        let Body::Raw(r) = p.body else { panic!() };
        assert_eq!((r.src_port, r.dst_port), (u16::from_be_bytes([b[20], b[21]]), u16::from_be_bytes([b[22], b[23]])));
        let mut frags = Vec::new();
        crate::frag::fragment(p, 1000, &mut frags).unwrap();
        assert_eq!(frags.len(), 2);
        let mut payload = Vec::new();
        for f in &frags {
            let mut out = Vec::new();
            assert!(wire_bytes(f, &b, &mut out));
            assert!(ip_checksum_ok(&out[..20]));
            // parsing the fragment back gives the same fragment fields
            let q = parse_ipv4(&out, 0, SimTime::ZERO).unwrap();
            assert_eq!(q.frag, f.frag);
            payload.extend_from_slice(&out[20..]);
        }
        assert_eq!(payload, b[20..]);
    }

    #[test]
    fn raw_bad_input_refused() {
        assert_eq!(parse_ipv4(&[0x45; 10], 0, SimTime::ZERO), Err(RawError::TooShort(10)));
        let mut b = ping_bytes();
        b[0] = 0x60;
        assert_eq!(parse_ipv4(&b, 0, SimTime::ZERO), Err(RawError::NotIpv4(6)));
        b[0] = 0x46;
        assert_eq!(parse_ipv4(&b, 0, SimTime::ZERO), Err(RawError::HasOptions(6)));
        let b = ping_bytes();
        assert!(matches!(parse_ipv4(&b[..60], 0, SimTime::ZERO), Err(RawError::BadLength { total: 84, got: 60 })));
    }

    #[test]
    fn raw_store_evicts_oldest_beyond_capacity_and_frees_released() {
        let mut s = RawStore::new(250);
        let k: Vec<u64> = (0..3).map(|i| s.put(&[i as u8; 100])).collect();
        assert_eq!(k, vec![0, 1, 2]);
        assert!(s.get(0).is_none(), "300 bytes > 250: the oldest is evicted");
        assert_eq!(s.get(2), Some(&[2u8; 100][..]));
        assert_eq!((s.bytes(), s.evicted()), (200, 1));
        s.release(1);
        assert_eq!(s.bytes(), 100);
        assert!(s.get(1).is_none());
        assert_eq!(s.put(&[9; 10]), 3);
        assert_eq!(s.get(2).map(|b| b.len()), Some(100));
        assert_eq!(s.peak_bytes(), 200, "the cap holds: 300 bytes never held at once");
    }

    #[test]
    fn raw_store_front_entry_released_lets_the_store_shrink_with_exact_bytes() {
        // a packet dropped by the model (key 0) and then many that leave: once 0 is released,
        // nothing is held; the bytes are the sum of the entries held, checked after every call
        // against a plain list of (key, size, refs) kept beside it
        let mut s = RawStore::new(1 << 30);
        let mut model: Vec<(u64, usize, u32)> = Vec::new();
        let check = |s: &RawStore, m: &[(u64, usize, u32)]| {
            assert_eq!(s.bytes(), m.iter().map(|e| e.1).sum::<usize>());
            assert_eq!(s.len(), m.len());
            for &(k, n, _) in m {
                assert_eq!(s.get(k).map(<[u8]>::len), Some(n));
            }
        };
        let k0 = s.put(&[0; 1500]);
        model.push((k0, 1500, 1));
        for i in 1..1000u64 {
            let n = 40 + (i as usize * 37) % 1460;
            let k = s.put(&vec![i as u8; n]);
            model.push((k, n, 1));
            if i % 3 == 0 {
                // cut into three fragments, which leave one by one
                s.retain(k, 2);
                for left in [2, 1] {
                    s.release(k);
                    assert_eq!(s.get(k).map(<[u8]>::len), Some(n), "{left} fragments left");
                }
            }
            s.release(k);
            model.pop();
            check(&s, &model);
        }
        assert_eq!((s.len(), s.bytes()), (1, 1500), "only the front entry is held");
        s.release(k0);
        model.clear();
        check(&s, &model);
        assert!(s.is_empty());
        let largest = (1..1000usize).map(|i| 40 + (i * 37) % 1460).max().unwrap();
        assert_eq!(s.peak_bytes(), 1500 + largest, "the front entry and one more at most");
        // a key released twice, or unknown, changes nothing
        s.release(k0);
        s.release(12_345);
        s.retain(k0, 1);
        assert_eq!((s.len(), s.bytes(), s.evicted()), (0, 0, 0));
        // the eviction order's front has moved past every key gone: a new entry beyond the cap
        // evicts itself last, not a stale key
        let mut s2 = RawStore::new(100);
        let a = s2.put(&[1; 60]);
        s2.release(a);
        let b = s2.put(&[2; 60]);
        let c = s2.put(&[3; 60]);
        assert!(s2.get(b).is_none() && s2.get(c).is_some(), "the oldest held entry is evicted");
        assert_eq!((s2.bytes(), s2.evicted()), (60, 1));
    }

    #[test]
    fn raw_headers_len_tcp_and_later_fragments() {
        let mut b = vec![0u8; 100];
        b[0] = 0x45;
        b[9] = 6;
        b[32] = 8 << 4; // data offset 8 words
        assert_eq!(headers_len(&b), 52);
        b[7] = 10; // a later fragment
        assert_eq!(headers_len(&b), 20);
    }

    #[test]
    fn echo_reply_answers_a_real_ping_as_rfc_792_says() {
        let mut req = ping_bytes();
        // the ICMP checksum of the request, so that it is a valid one (RFC 1071, written out)
        let icmp_sum = |m: &[u8]| {
            let mut s: u32 = m.chunks(2).map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0))).sum();
            while s >> 16 != 0 {
                s = (s & 0xffff) + (s >> 16);
            }
            s as u16
        };
        let c = !icmp_sum(&req[20..]);
        req[22..24].copy_from_slice(&c.to_be_bytes());
        assert_eq!(icmp_sum(&req[20..]), 0xffff);
        let mut out = vec![0xee];
        assert!(echo_reply(&req, 0x0102, &mut out));
        let r = &out[1..];
        assert_eq!(r.len(), 84);
        assert!(ip_checksum_ok(&r[..20]), "IPv4 header checksum");
        assert_eq!(&r[12..16], &[10, 0, 0, 2], "from the address pinged");
        assert_eq!(&r[16..20], &[10, 0, 0, 1], "to the pinger");
        assert_eq!((r[8], r[9], &r[4..8]), (64, 1, &[1u8, 2, 0, 0][..]), "TTL 64, ICMP, ident, no DF");
        assert_eq!((r[20], r[21]), (0, 0), "echo reply, code 0");
        assert_eq!(&r[24..], &req[24..], "identifier, sequence number and data echoed");
        assert_eq!(icmp_sum(&r[20..]), 0xffff, "ICMP checksum verifies");
        // not an echo request: a reply, a fragment, another protocol
        for f in [|b: &mut Vec<u8>| b[20] = 0, |b: &mut Vec<u8>| b[6] = 0x20, |b: &mut Vec<u8>| b[9] = 17] {
            let mut b = req.clone();
            f(&mut b);
            let mut o = Vec::new();
            assert!(!echo_reply(&b, 1, &mut o) && o.is_empty());
        }
    }
}
