//! Packets with real header sizes.
//!
//! Payload bytes are not stored (a simulator need not carry them); every header field that a
//! protocol or a pcap reader needs is. Sizes on the wire follow the standards:
//!
//! - IPv4: 20 bytes, no options (RFC 791 §3.1).
//! - TCP: 20 bytes plus options padded to a multiple of 4 (RFC 9293 §3.1), laid out as Linux does:
//!   SYN `MSS(4) SACK_PERM(2) TS(10) NOP WS(3)` = 20 bytes; data with timestamps `NOP NOP TS(10)` =
//!   12 bytes; SACK `NOP NOP kind len 8·n` (RFC 2018 §3), at most 4 blocks, 3 with timestamps.
//! - MPTCP (RFC 8684 §3, option kind 30): at most one per segment, padded with NOPs to a multiple
//!   of 4 as Linux's `mptcp_write_options` does. Its raw bytes ([`MptcpOption`]) travel beside
//!   the packet in an [`MptcpSideTable`] keyed by the packet's uid; the packet carries only their
//!   length ([`Packet::mptcp_len`]), so that every packet stays small (see [`Packet`]).
//! - UDP: 8 bytes (RFC 768). ICMP echo: 8 bytes (RFC 792).

use std::collections::HashMap;

use celltcp_engine::SimTime;

/// An IPv4 address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ipv4(pub u32);

impl Ipv4 {
    pub const fn new(a: u8, b: u8, c: u8, d: u8) -> Self {
        Ipv4(u32::from_be_bytes([a, b, c, d]))
    }
    pub fn octets(self) -> [u8; 4] {
        self.0.to_be_bytes()
    }
}

impl std::fmt::Display for Ipv4 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = self.octets();
        write!(f, "{}.{}.{}.{}", o[0], o[1], o[2], o[3])
    }
}

pub const IPV4_HEADER: u32 = 20;
pub const TCP_HEADER: u32 = 20;
pub const UDP_HEADER: u32 = 8;
pub const ICMP_HEADER: u32 = 8;

/// IP protocol numbers (IANA).
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// TCP flags (RFC 9293 §3.1, RFC 3168 §6.1 for ECE/CWR).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;

    #[inline]
    pub fn has(self, f: u8) -> bool {
        self.0 & f != 0
    }
    pub fn syn(self) -> bool {
        self.has(Self::SYN)
    }
    pub fn fin(self) -> bool {
        self.has(Self::FIN)
    }
    pub fn ack(self) -> bool {
        self.has(Self::ACK)
    }
    pub fn rst(self) -> bool {
        self.has(Self::RST)
    }
    /// ECN-Echo (RFC 3168 §6.1).
    pub fn ece(self) -> bool {
        self.has(Self::ECE)
    }
    /// Congestion Window Reduced (RFC 3168 §6.1).
    pub fn cwr(self) -> bool {
        self.has(Self::CWR)
    }
}

/// A SACK block `[left, right)` in sequence space (RFC 2018).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub left: u32,
    pub right: u32,
}

/// TCP options carried by a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    /// Maximum segment size (kind 2), SYN only.
    pub mss: Option<u16>,
    /// Window scale shift (kind 3, RFC 7323 §2), SYN only.
    pub wscale: Option<u8>,
    /// SACK permitted (kind 4, RFC 2018), SYN only.
    pub sack_permitted: bool,
    /// Timestamps `(TSval, TSecr)` (kind 8, RFC 7323 §3).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (kind 5), first `sack_len` entries valid.
    pub sack: [SackBlock; 4],
    pub sack_len: u8,
}

/// The bytes of one MPTCP option (RFC 8684 §3: kind 30, length, subtype, ...), kept raw so
/// that sizes and pcap output are exact and this crate needs no MPTCP knowledge; encoding and
/// decoding live in `celltcp-mptcp`. The largest option celltcp sends is a DSS with a 64-bit
/// DATA_ACK, a 64-bit DSN mapping and a checksum: 28 bytes. Not a field of [`TcpOptions`]: it
/// rides beside its packet in an [`MptcpSideTable`] (29 more bytes on every packet cost 7 % of
/// the instructions of a plain-TCP run: see [`Packet`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MptcpOption {
    /// Valid bytes in `bytes` (0: no option).
    pub len: u8,
    pub bytes: [u8; MptcpOption::MAX_LEN],
}

impl MptcpOption {
    pub const MAX_LEN: usize = 28;

    /// The option from its bytes; `None` when longer than [`MptcpOption::MAX_LEN`].
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() > Self::MAX_LEN {
            return None;
        }
        let mut o = MptcpOption { len: b.len() as u8, ..Default::default() };
        o.bytes[..b.len()].copy_from_slice(b);
        Some(o)
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Bytes on the wire with the NOP padding to a multiple of 4.
    pub fn padded_len(&self) -> u32 {
        (self.len as u32).div_ceil(4) * 4
    }
}

impl TcpOptions {
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_len as usize]
    }

    /// Appends a SACK block; returns false when the option space is full
    /// (4 blocks, or 3 when timestamps are present: RFC 2018 §3).
    pub fn push_sack(&mut self, b: SackBlock) -> bool {
        let max = if self.timestamps.is_some() { 3 } else { 4 };
        if (self.sack_len as usize) < max {
            self.sack[self.sack_len as usize] = b;
            self.sack_len += 1;
            true
        } else {
            false
        }
    }

    /// Length of the options on the wire, with the NOP padding Linux uses so that every option
    /// group is 4-byte aligned: `MSS(4)`, `[NOP NOP] SACK_PERM` or `SACK_PERM TS` or
    /// `NOP NOP TS` (4 or 12), `NOP WS(3)` (4), `NOP NOP SACK(2 + 8n)`.
    pub fn wire_len(&self) -> u32 {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        n += match (self.sack_permitted, self.timestamps.is_some()) {
            (true, true) | (false, true) => 12,
            (true, false) => 4,
            (false, false) => 0,
        };
        if self.wscale.is_some() {
            n += 4;
        }
        if self.sack_len > 0 {
            n += 4 + 8 * self.sack_len as u32;
        }
        n
    }
}

/// A TCP segment's header and payload length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSegment {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// The raw 16-bit window field (scaled by the peer's shift, except on SYNs: RFC 7323 §2.2).
    pub window: u16,
    pub options: TcpOptions,
    pub payload_len: u32,
    /// Not a TCP header field: the sender asks IP to mark the packet ECT(0) (RFC 3168 §6.1.2 —
    /// set on new data once ECN is negotiated, never on pure ACKs or retransmissions, §6.1.5).
    pub ect: bool,
}

impl TcpSegment {
    pub fn header_len(&self) -> u32 {
        TCP_HEADER + self.options.wire_len()
    }
    /// Sequence space this segment occupies: payload plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload_len + self.flags.syn() as u32 + self.flags.fin() as u32
    }
}

/// A UDP datagram. `seq` and `sent_at` model the application payload of an iperf-style UDP test
/// (iperf3 writes a sequence number and a timestamp into each datagram).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpDatagram {
    pub src_port: u16,
    pub dst_port: u16,
    pub payload_len: u32,
    pub seq: u64,
    pub sent_at: SimTime,
}

/// An ICMP echo request or reply (RFC 792).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IcmpEcho {
    pub reply: bool,
    pub ident: u16,
    pub seq: u16,
    pub payload_len: u32,
    pub sent_at: SimTime,
}

/// A real IPv4 packet from outside the simulation (an emulator's TUN device): its bytes are
/// kept in a [`crate::raw::RawStore`] under `key`; the fields here are what the simulation
/// needs of it (the protocol and ports for classification, the length for sizes). See
/// [`crate::raw`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawIp {
    /// The store key of the original packet's bytes.
    pub key: u64,
    /// The IPv4 protocol field.
    pub proto: u8,
    /// TCP/UDP ports (zero for other protocols or a non-first fragment).
    pub src_port: u16,
    pub dst_port: u16,
    /// The IPv4 payload length of the whole datagram (transport header and data).
    pub payload_len: u32,
}

/// The transport part of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    Tcp(TcpSegment),
    Udp(UdpDatagram),
    Icmp(IcmpEcho),
    /// Real bytes (emulation): carried, never interpreted by celltcp's own stack.
    Raw(RawIp),
}

impl Body {
    pub fn protocol(&self) -> u8 {
        match self {
            Body::Tcp(_) => PROTO_TCP,
            Body::Udp(_) => PROTO_UDP,
            Body::Icmp(_) => PROTO_ICMP,
            Body::Raw(r) => r.proto,
        }
    }
    /// Transport header plus payload length: the IPv4 payload length.
    pub fn len(&self) -> u32 {
        match self {
            Body::Tcp(s) => s.header_len() + s.payload_len,
            Body::Udp(u) => UDP_HEADER + u.payload_len,
            Body::Icmp(i) => ICMP_HEADER + i.payload_len,
            Body::Raw(r) => r.payload_len,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// ECN codepoint in the IPv4 header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

impl Ecn {
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        }
    }
}

/// IPv4 fragment information (RFC 791 §2.3, §3.2). `offset` is in bytes of the original IPv4
/// payload and a multiple of 8; `len` is the number of payload bytes this fragment carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fragment {
    pub offset: u32,
    pub len: u32,
    pub more: bool,
}

/// An IPv4 packet.
///
/// Plain `Copy` data of at most 128 bytes, on purpose: every packet is moved by value through the
/// packet slab, the event queue, link queues, PDCP and RLC, many times over its life. Up to 128
/// bytes a move is 8 vector loads and stores inline; beyond it LLVM calls `memcpy` (x86-64). An
/// MPTCP option slot of 29 bytes in [`TcpOptions`] made this 152 bytes and cost +6.7 % of the
/// instructions of a plain-TCP LTE cell and +5 % of a dumbbell (docs/performance.md); a test
/// pins the size. Keep large, rarely used fields out of line, as [`MptcpSideTable`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique id within a run (for traces); not on the wire.
    pub uid: u64,
    pub src: Ipv4,
    pub dst: Ipv4,
    pub ident: u16,
    pub ttl: u8,
    pub ecn: Ecn,
    pub dont_fragment: bool,
    /// Present on a fragment; `None` on a whole datagram.
    pub frag: Option<Fragment>,
    /// When the sending host handed the packet to IP (for one-way delay); not on the wire.
    pub created: SimTime,
    pub body: Body,
    /// Bytes of tunnel headers around this packet while it crosses a tunnel (GTP-U/UDP/IPv4 on
    /// an LTE S1-U link: 36); counted by [`Packet::size`], zero elsewhere.
    pub encap: u16,
    /// Length of the MPTCP option (RFC 8684 §3) of this TCP segment, 0 if none: part of the TCP
    /// header on the wire (after its other options, NOP-padded to a multiple of 4: counted by
    /// [`Packet::size`] and [`Packet::tcp_header_len`]); its bytes are in the sender's
    /// [`MptcpSideTable`] under this packet's `uid`.
    pub mptcp_len: u8,
    /// The GTP-U TEID of the tunnel the packet is in while `encap` is non-zero (TS 29.281
    /// §5.1; `crate::gtpu`), or last came out of (the eNB at the tunnel's end relays it to the
    /// bearer by it); 0 (a reserved TEID, never a bearer's) when it carries no user packet of
    /// a bearer. Not counted in any size (it is inside `encap`'s bytes).
    pub teid: u32,
}

impl Packet {
    pub fn new(uid: u64, src: Ipv4, dst: Ipv4, ident: u16, created: SimTime, body: Body) -> Self {
        Packet {
            uid,
            src,
            dst,
            ident,
            ttl: 64,
            ecn: Ecn::NotEct,
            dont_fragment: false,
            frag: None,
            created,
            body,
            encap: 0,
            mptcp_len: 0,
            teid: 0,
        }
    }

    /// Bytes of the MPTCP option on the wire, with its NOP padding to a multiple of 4.
    #[inline]
    pub fn mptcp_padded_len(&self) -> u32 {
        (self.mptcp_len as u32).div_ceil(4) * 4
    }

    /// The IPv4 payload length of the whole datagram: the body's length plus the padded MPTCP
    /// option, if any (a fragment carries a share of it: [`Packet::ip_payload_len`]).
    #[inline]
    pub fn datagram_len(&self) -> u32 {
        self.body.len() + self.mptcp_padded_len()
    }

    /// Bytes of the IPv4 payload carried by this packet (a fragment's share, or the whole body).
    #[inline]
    pub fn ip_payload_len(&self) -> u32 {
        match self.frag {
            Some(f) => f.len,
            None => self.datagram_len(),
        }
    }

    /// The TCP header of a segment with all its options, the MPTCP option included.
    pub fn tcp_header_len(&self) -> Option<u32> {
        self.tcp().map(|s| s.header_len() + self.mptcp_padded_len())
    }

    /// Size on the wire at the IP layer: the IPv4 total length, plus the tunnel headers while
    /// the packet is encapsulated.
    #[inline]
    pub fn size(&self) -> u32 {
        IPV4_HEADER + self.ip_payload_len() + u32::from(self.encap)
    }

    pub fn tcp(&self) -> Option<&TcpSegment> {
        match &self.body {
            Body::Tcp(s) => Some(s),
            _ => None,
        }
    }
}

/// The MPTCP options of packets in flight, by packet uid: the bytes that [`Packet::mptcp_len`]
/// counts. Whoever moves MPTCP packets (a node stack, a test network) keeps one: it attaches the
/// option when the packet is built ([`MptcpSideTable::attach`]), hands it to the receiver on
/// delivery ([`MptcpSideTable::take`]) and forgets the packets it drops
/// ([`MptcpSideTable::forget`]). Fragments share their datagram's uid, so they share its entry;
/// a copy of a packet (a pcap capture) reads it with [`MptcpSideTable::get`].
#[derive(Clone, Debug, Default)]
pub struct MptcpSideTable {
    by_uid: HashMap<u64, MptcpOption>,
}

impl MptcpSideTable {
    /// Puts `opt` on `pkt`: its length into the packet, its bytes here under the packet's uid
    /// (nothing for an empty option).
    pub fn attach(&mut self, pkt: &mut Packet, opt: MptcpOption) {
        pkt.mptcp_len = opt.len;
        if opt.is_empty() {
            self.by_uid.remove(&pkt.uid);
        } else {
            self.by_uid.insert(pkt.uid, opt);
        }
    }
    /// The option of `pkt` (empty when it has none).
    pub fn get(&self, pkt: &Packet) -> MptcpOption {
        if pkt.mptcp_len == 0 {
            return MptcpOption::default();
        }
        self.by_uid.get(&pkt.uid).copied().unwrap_or_default()
    }
    /// The option of a delivered `pkt`, removed from the table.
    pub fn take(&mut self, pkt: &Packet) -> MptcpOption {
        if pkt.mptcp_len == 0 {
            return MptcpOption::default();
        }
        self.by_uid.remove(&pkt.uid).unwrap_or_default()
    }
    /// Drops the entry of a packet that will not be delivered.
    pub fn forget(&mut self, uid: u64) {
        self.by_uid.remove(&uid);
    }
    /// Options held (packets in flight with one).
    pub fn len(&self) -> usize {
        self.by_uid.len()
    }
    pub fn is_empty(&self) -> bool {
        self.by_uid.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(opts: TcpOptions, len: u32) -> Packet {
        let s = TcpSegment { options: opts, payload_len: len, ..Default::default() };
        Packet::new(0, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0, SimTime::ZERO, Body::Tcp(s))
    }

    #[test]
    fn linux_syn_options_take_20_bytes() {
        let o = TcpOptions { mss: Some(1460), wscale: Some(7), sack_permitted: true, timestamps: Some((1, 0)), ..Default::default() };
        assert_eq!(o.wire_len(), 20);
        assert_eq!(seg(o, 0).size(), 60);
    }

    #[test]
    fn full_data_segment_with_timestamps_is_1500_bytes_at_mss_1448() {
        let o = TcpOptions { timestamps: Some((1, 2)), ..Default::default() };
        assert_eq!(o.wire_len(), 12);
        assert_eq!(seg(o, 1448).size(), 1500);
    }

    #[test]
    fn sack_blocks_limited_and_sized_per_rfc2018() {
        let mut o = TcpOptions { timestamps: Some((1, 2)), ..Default::default() };
        for i in 0..4 {
            let ok = o.push_sack(SackBlock { left: i, right: i + 1 });
            assert_eq!(ok, i < 3);
        }
        // 12 (NOP NOP TS) + 2 + 24 = 38 -> 40
        assert_eq!(o.wire_len(), 40);
        let mut o = TcpOptions::default();
        assert!(o.push_sack(SackBlock::default()));
        assert_eq!(o.wire_len(), 12); // 10 -> 12
    }

    #[test]
    fn mptcp_option_counts_padded_in_header() {
        // A DSS with an 8-byte DATA_ACK and an 8-byte DSN mapping, no checksum: 26 bytes,
        // padded to 28 (RFC 8684 §3.3; Linux pads with NOPs).
        let m = MptcpOption::from_bytes(&[30; 26]).unwrap();
        let o = TcpOptions { timestamps: Some((1, 2)), ..Default::default() };
        let mut p = seg(o, 1420);
        let mut table = MptcpSideTable::default();
        table.attach(&mut p, m);
        assert_eq!(p.tcp_header_len(), Some(20 + 12 + 28));
        assert_eq!(p.tcp().unwrap().header_len(), 20 + 12);
        assert_eq!((p.datagram_len(), p.size()), (1480, 1500));
        assert!(MptcpOption::from_bytes(&[0; 29]).is_none());
        assert_eq!(MptcpOption::default().padded_len(), 0);
        // The bytes travel beside the packet: read by a capture, taken once on delivery.
        assert_eq!(table.get(&p).as_bytes(), &[30; 26][..]);
        assert_eq!(table.take(&p), m);
        assert!(table.is_empty() && table.get(&p).is_empty());
        let mut q = seg(o, 100);
        q.uid = 7;
        table.attach(&mut q, m);
        table.forget(7);
        assert!(table.is_empty());
        table.attach(&mut q, MptcpOption::default());
        assert_eq!((q.mptcp_len, q.size()), (0, 20 + 32 + 100));
    }

    /// Every packet is moved by value many times over its life (slab, event queue, link queues,
    /// PDCP, RLC): up to 128 bytes such a move is inline, beyond it a `memcpy` call. A 29-byte
    /// MPTCP option slot inline made `Packet` 152 bytes and cost +6.7 % instructions on the
    /// plain-TCP LTE cell and +5 % on the dumbbell (docs/performance.md, 2026-11-25). If this
    /// fails, put the new field out of line (as `MptcpSideTable` does) rather than grow it.
    #[test]
    fn packet_stays_within_an_inline_copy() {
        let n = std::mem::size_of::<Packet>();
        assert!(n <= 128, "Packet is {n} bytes");
        assert_eq!(n, 120, "Packet changed size: if it grew, measure (docs/performance.md)");
    }

    #[test]
    fn udp_and_icmp_sizes() {
        let u = Body::Udp(UdpDatagram { payload_len: 1472, ..Default::default() });
        assert_eq!(u.len() + IPV4_HEADER, 1500);
        let i = Body::Icmp(IcmpEcho { payload_len: 56, ..Default::default() });
        assert_eq!(i.len() + IPV4_HEADER, 84); // the size of a default `ping`
    }
}
