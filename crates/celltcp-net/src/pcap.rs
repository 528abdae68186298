//! libpcap capture files with real IPv4/TCP/UDP/ICMP headers, for Wireshark and tshark.
//!
//! Format: classic pcap (the "libpcap file format", draft-ietf-opsawg-pcap §4–5) with the
//! nanosecond magic `0xa1b23c4d`, written little-endian, link type `LINKTYPE_RAW` (101: each
//! record starts with an IPv4 header). Each [`Packet`] is encoded with its real header fields:
//!
//! - IPv4 (RFC 791 §3.1): version 4, IHL 5, DSCP 0 and the ECN bits (RFC 3168 §5), total length,
//!   identification, DF/MF flags and fragment offset in 8-byte units, TTL, protocol, the header
//!   checksum, addresses.
//! - TCP (RFC 9293 §3.1): ports, sequence and acknowledgment numbers, data offset, flags, window,
//!   checksum, options in the Linux layout that [`TcpOptions::wire_len`] documents: `MSS`,
//!   `SACK_PERM TS` (or `NOP NOP TS`, or `NOP NOP SACK_PERM`), `NOP WS`, `NOP NOP SACK` (RFC 7323,
//!   RFC 2018).
//! - UDP (RFC 768) and ICMP echo (RFC 792) headers.
//!
//! Payload bytes are not modelled; they are written as zeros, and the transport checksums are
//! computed over the pseudo-header, the header and that zero payload, so Wireshark finds them
//! correct. By default only headers are captured (`caplen` = headers, `orig_len` = the full IPv4
//! length, as `tcpdump -s` with a short snaplen does); [`Snaplen::Bytes`] captures zero-filled
//! payload up to a limit. A fragment carries the part of the transport header that lies in its
//! byte range: the first fragment the whole header, later ones only the IPv4 header and zeros.

use std::io::{self, BufWriter, Write};

use celltcp_engine::SimTime;

use crate::gtpu::Tunnel;
use crate::packet::{Body, MptcpOption, Packet, TcpOptions, IPV4_HEADER, PROTO_TCP, PROTO_UDP};

/// A record's 16-byte header: seconds and nanoseconds of `t`, the captured and the original
/// length (little-endian, as the file header's magic says).
fn record_header(t: SimTime, caplen: u32, orig: u32) -> [u8; 16] {
    let ns = t.as_nanos();
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    h[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    h[8..12].copy_from_slice(&caplen.to_le_bytes());
    h[12..16].copy_from_slice(&orig.to_le_bytes());
    h
}

/// Nanosecond-resolution pcap magic.
pub const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
/// `LINKTYPE_RAW`: raw IPv4/IPv6 with no link-layer header.
pub const LINKTYPE_RAW: u32 = 101;

/// How much of each packet to capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Snaplen {
    /// IPv4 and transport headers only.
    #[default]
    Headers,
    /// Up to this many bytes from the start of the IPv4 header (payload as zeros).
    Bytes(u32),
}

/// Internet checksum accumulator (RFC 1071): 16-bit ones-complement sum.
#[derive(Clone, Copy, Default)]
pub(crate) struct Csum(u32);

impl Csum {
    pub(crate) fn add_bytes(&mut self, b: &[u8]) {
        let mut chunks = b.chunks_exact(2);
        for c in &mut chunks {
            self.0 += u16::from_be_bytes([c[0], c[1]]) as u32;
        }
        if let [last] = chunks.remainder() {
            self.0 += (*last as u32) << 8;
        }
    }
    fn add_u16(&mut self, v: u16) {
        self.0 += v as u32;
    }
    pub(crate) fn finish(self) -> u16 {
        let mut s = self.0;
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }
}

/// Writes TCP options in Linux's order and padding (`tcp_options_write`), then the MPTCP option's
/// bytes NOP-padded to `mptcp_padded` bytes; appends exactly `o.wire_len() + mptcp_padded` bytes.
/// (A packet whose option bytes are not at hand gets `mptcp_padded` NOPs: the sizes stay exact.)
fn write_tcp_options(o: &TcpOptions, mptcp: &[u8], mptcp_padded: u32, out: &mut Vec<u8>) {
    const NOP: u8 = 1;
    if let Some(mss) = o.mss {
        out.extend_from_slice(&[2, 4]);
        out.extend_from_slice(&mss.to_be_bytes());
    }
    match (o.sack_permitted, o.timestamps) {
        (sp, Some((tsval, tsecr))) => {
            if sp {
                out.extend_from_slice(&[4, 2, 8, 10]);
            } else {
                out.extend_from_slice(&[NOP, NOP, 8, 10]);
            }
            out.extend_from_slice(&tsval.to_be_bytes());
            out.extend_from_slice(&tsecr.to_be_bytes());
        }
        (true, None) => out.extend_from_slice(&[NOP, NOP, 4, 2]),
        (false, None) => {}
    }
    if let Some(ws) = o.wscale {
        out.extend_from_slice(&[NOP, 3, 3, ws]);
    }
    let blocks = o.sack_blocks();
    if !blocks.is_empty() {
        out.extend_from_slice(&[NOP, NOP, 5, 2 + 8 * blocks.len() as u8]);
        for b in blocks {
            out.extend_from_slice(&b.left.to_be_bytes());
            out.extend_from_slice(&b.right.to_be_bytes());
        }
    }
    if mptcp_padded > 0 {
        // RFC 8684 §3: the option's own bytes, NOP-padded after it as Linux pads.
        let m = &mptcp[..mptcp.len().min(mptcp_padded as usize)];
        out.extend_from_slice(m);
        for _ in m.len() as u32..mptcp_padded {
            out.push(NOP);
        }
    }
}

/// Pseudo-header sum for TCP/UDP checksums (RFC 9293 §3.1, RFC 768).
fn pseudo(pkt: &Packet, proto: u8, len: u32) -> Csum {
    let mut c = Csum::default();
    c.add_bytes(&pkt.src.octets());
    c.add_bytes(&pkt.dst.octets());
    c.add_u16(proto as u16);
    c.add_u16(len as u16);
    c
}

/// Appends the full transport header (with checksum over a zero payload) of `pkt.body`; an
/// MPTCP option ([`Packet::mptcp_len`]) is written as NOPs (its bytes are in a side table:
/// [`encode_transport_header_mptcp`]).
pub fn encode_transport_header(pkt: &Packet, out: &mut Vec<u8>) {
    encode_transport_header_mptcp(pkt, &[], out);
}

/// [`encode_transport_header`] with the bytes of the packet's MPTCP option.
pub fn encode_transport_header_mptcp(pkt: &Packet, mptcp: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    match &pkt.body {
        Body::Tcp(s) => {
            let hl = s.header_len() + pkt.mptcp_padded_len();
            out.extend_from_slice(&s.src_port.to_be_bytes());
            out.extend_from_slice(&s.dst_port.to_be_bytes());
            out.extend_from_slice(&s.seq.to_be_bytes());
            out.extend_from_slice(&s.ack.to_be_bytes());
            out.push(((hl / 4) as u8) << 4);
            out.push(s.flags.0);
            out.extend_from_slice(&s.window.to_be_bytes());
            out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
            write_tcp_options(&s.options, mptcp, pkt.mptcp_padded_len(), out);
            debug_assert_eq!(out.len() - start, hl as usize);
            let mut c = pseudo(pkt, PROTO_TCP, hl + s.payload_len);
            c.add_bytes(&out[start..]);
            out[start + 16..start + 18].copy_from_slice(&c.finish().to_be_bytes());
        }
        Body::Udp(u) => {
            let len = pkt.body.len();
            out.extend_from_slice(&u.src_port.to_be_bytes());
            out.extend_from_slice(&u.dst_port.to_be_bytes());
            out.extend_from_slice(&(len as u16).to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            let mut c = pseudo(pkt, PROTO_UDP, len);
            c.add_bytes(&out[start..]);
            // RFC 768: a computed zero is sent as all ones.
            let sum = match c.finish() {
                0 => 0xffff,
                v => v,
            };
            out[start + 6..start + 8].copy_from_slice(&sum.to_be_bytes());
        }
        // Real bytes are written by `write_bytes` (see `crate::raw`); nothing to synthesise.
        Body::Raw(_) => {}
        Body::Icmp(i) => {
            out.extend_from_slice(&[if i.reply { 0 } else { 8 }, 0, 0, 0]);
            out.extend_from_slice(&i.ident.to_be_bytes());
            out.extend_from_slice(&i.seq.to_be_bytes());
            let mut c = Csum::default();
            c.add_bytes(&out[start..]);
            out[start + 2..start + 4].copy_from_slice(&c.finish().to_be_bytes());
        }
    }
}

/// Appends the 20-byte IPv4 header of `pkt` (with its header checksum).
pub fn encode_ipv4_header(pkt: &Packet, out: &mut Vec<u8>) {
    let start = out.len();
    let mut flags_off: u16 = 0;
    if pkt.dont_fragment {
        flags_off |= 0x4000;
    }
    if let Some(f) = pkt.frag {
        if f.more {
            flags_off |= 0x2000;
        }
        flags_off |= ((f.offset / 8) as u16) & 0x1fff;
    }
    out.push(0x45);
    out.push(pkt.ecn.bits());
    out.extend_from_slice(&(pkt.size() as u16).to_be_bytes());
    out.extend_from_slice(&pkt.ident.to_be_bytes());
    out.extend_from_slice(&flags_off.to_be_bytes());
    out.push(pkt.ttl);
    out.push(pkt.body.protocol());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&pkt.src.octets());
    out.extend_from_slice(&pkt.dst.octets());
    let mut c = Csum::default();
    c.add_bytes(&out[start..]);
    out[start + 10..start + 12].copy_from_slice(&c.finish().to_be_bytes());
}

/// Appends the bytes of `pkt` as captured with headers only: the IPv4 header, then the part of
/// the transport header inside this packet's byte range. Returns the number of bytes appended.
pub fn encode_headers(pkt: &Packet, out: &mut Vec<u8>) -> usize {
    encode_headers_mptcp(pkt, &[], out)
}

/// [`encode_headers`] with the bytes of the packet's MPTCP option.
pub fn encode_headers_mptcp(pkt: &Packet, mptcp: &[u8], out: &mut Vec<u8>) -> usize {
    let start = out.len();
    encode_ipv4_header(pkt, out);
    let t0 = out.len();
    encode_transport_header_mptcp(pkt, mptcp, out);
    let th = (out.len() - t0) as u32;
    let (off, len) = match pkt.frag {
        Some(f) => (f.offset, f.len),
        None => (0, pkt.datagram_len()),
    };
    // Keep transport-header bytes [off, off+len) ∩ [0, th).
    let lo = off.min(th) as usize;
    let hi = (off + len).min(th) as usize;
    out.copy_within(t0 + lo..t0 + hi, t0);
    out.truncate(t0 + (hi - lo));
    out.len() - start
}

/// A pcap file writer (buffered).
pub struct PcapWriter<W: Write> {
    w: BufWriter<W>,
    snaplen: Snaplen,
    buf: Vec<u8>,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header (link type [`LINKTYPE_RAW`]).
    pub fn new(w: W, snaplen: Snaplen) -> io::Result<Self> {
        Self::with_link_type(w, snaplen, LINKTYPE_RAW)
    }

    /// Writes the global header with another link type (e.g. 127, 802.11 with radiotap),
    /// whose records are then written whole with [`PcapWriter::write_frame`].
    pub fn with_link_type(w: W, snaplen: Snaplen, link_type: u32) -> io::Result<Self> {
        let mut w = BufWriter::with_capacity(1 << 16, w);
        let file_snaplen = match snaplen {
            Snaplen::Headers => 65_535,
            Snaplen::Bytes(n) => n,
        };
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&file_snaplen.to_le_bytes());
        h.extend_from_slice(&link_type.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w, snaplen, buf: Vec::with_capacity(256) })
    }

    /// Writes one packet seen at simulated time `t` (an MPTCP option as NOPs: see
    /// [`PcapWriter::write_packet_mptcp`]).
    pub fn write_packet(&mut self, t: SimTime, pkt: &Packet) -> io::Result<()> {
        self.write_packet_mptcp(t, pkt, &MptcpOption::default())
    }

    /// Writes one packet seen at `t` with the bytes of its MPTCP option (from the
    /// [`crate::MptcpSideTable`] of whoever moves it).
    pub fn write_packet_mptcp(&mut self, t: SimTime, pkt: &Packet, mptcp: &MptcpOption) -> io::Result<()> {
        self.buf.clear();
        // Room for the 16-byte record header, filled in below.
        self.buf.extend_from_slice(&[0; 16]);
        let hdr = encode_headers_mptcp(pkt, mptcp.as_bytes(), &mut self.buf) as u32;
        let orig = pkt.size();
        debug_assert!(hdr >= IPV4_HEADER && hdr <= orig);
        self.finish_record(t, hdr, orig)
    }

    /// Writes one packet seen at `t` inside the GTP-U tunnel `tun` (`crate::gtpu`): outer
    /// IPv4, UDP 2152, GTP-U, then `pkt` as [`PcapWriter::write_packet`] writes it (its
    /// `encap` bytes are not counted twice: the inner packet is `pkt` without them).
    pub fn write_tunnelled(&mut self, t: SimTime, tun: &Tunnel, pkt: &Packet) -> io::Result<()> {
        self.write_tunnelled_mptcp(t, tun, pkt, &MptcpOption::default())
    }

    /// [`PcapWriter::write_tunnelled`] with the bytes of the inner segment's MPTCP option (as
    /// [`PcapWriter::write_packet_mptcp`]).
    pub fn write_tunnelled_mptcp(&mut self, t: SimTime, tun: &Tunnel, pkt: &Packet, mptcp: &MptcpOption) -> io::Result<()> {
        let inner = crate::gtpu::inner(pkt);
        let oh = tun.overhead() as usize;
        self.buf.clear();
        self.buf.resize(16 + oh, 0);
        let ih = encode_headers_mptcp(&inner, mptcp.as_bytes(), &mut self.buf);
        let (head, rest) = self.buf.split_at_mut(16 + oh);
        crate::gtpu::write_outer(tun, inner.ecn.bits(), inner.size(), rest, &mut head[16..]);
        self.finish_record(t, (oh + ih) as u32, oh as u32 + inner.size())
    }

    /// Writes one real IPv4 packet (`bytes`, as on the wire) seen at `t` inside the GTP-U
    /// tunnel `tun`; with [`Snaplen::Headers`] the outer, inner IPv4 and transport headers are
    /// captured.
    pub fn write_tunnelled_bytes(&mut self, t: SimTime, tun: &Tunnel, bytes: &[u8]) -> io::Result<()> {
        let oh = tun.overhead() as usize;
        let orig = (oh + bytes.len()) as u32;
        let caplen = match self.snaplen {
            Snaplen::Headers => (oh + crate::raw::headers_len(bytes)) as u32,
            Snaplen::Bytes(n) => n.min(orig),
        };
        let mut outer = [0u8; 44];
        let ecn = bytes.get(1).copied().unwrap_or(0);
        crate::gtpu::write_outer(tun, ecn, bytes.len() as u32, bytes, &mut outer);
        self.w.write_all(&record_header(t, caplen, orig))?;
        let c = caplen as usize;
        self.w.write_all(&outer[..oh.min(c)])?;
        self.w.write_all(&bytes[..c.saturating_sub(oh)])
    }

    /// Completes the record in `buf` (16 bytes of room, then `hdr` bytes of headers) for a
    /// packet of `orig` bytes: the record header, the capture, zeros up to `caplen`.
    fn finish_record(&mut self, t: SimTime, hdr: u32, orig: u32) -> io::Result<()> {
        let caplen = match self.snaplen {
            Snaplen::Headers => hdr,
            Snaplen::Bytes(n) => n.min(orig),
        };
        self.buf.truncate(16 + caplen.min(hdr) as usize);
        self.buf[..16].copy_from_slice(&record_header(t, caplen, orig));
        self.w.write_all(&self.buf)?;
        // Zero payload up to caplen.
        static ZEROS: [u8; 4096] = [0; 4096];
        let mut pad = caplen.saturating_sub(hdr) as usize;
        while pad > 0 {
            let n = pad.min(ZEROS.len());
            self.w.write_all(&ZEROS[..n])?;
            pad -= n;
        }
        Ok(())
    }

    /// Writes one real IPv4 packet (`bytes`, as on the wire) seen at `t`: with
    /// [`Snaplen::Headers`] the IPv4 and transport headers are captured (`caplen`), with
    /// [`Snaplen::Bytes`] up to that many bytes; `orig_len` is the whole packet.
    pub fn write_bytes(&mut self, t: SimTime, bytes: &[u8]) -> io::Result<()> {
        let orig = bytes.len() as u32;
        let caplen = match self.snaplen {
            Snaplen::Headers => crate::raw::headers_len(bytes) as u32,
            Snaplen::Bytes(n) => n.min(orig),
        };
        self.w.write_all(&record_header(t, caplen, orig))?;
        self.w.write_all(&bytes[..caplen as usize])
    }

    /// Writes one link-layer frame (`bytes`, whole) seen at `t`.
    pub fn write_frame(&mut self, t: SimTime, bytes: &[u8]) -> io::Result<()> {
        let n = bytes.len() as u32;
        self.w.write_all(&record_header(t, n, n))?;
        self.w.write_all(bytes)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(self) -> io::Result<W> {
        self.w.into_inner().map_err(|e| e.into_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frag::fragment;
    use crate::packet::{Ecn, IcmpEcho, Ipv4, SackBlock, TcpFlags, TcpSegment, UdpDatagram};

    /// An independent RFC 1071 sum: 0xffff over data that includes a correct checksum.
    fn ones_sum(parts: &[&[u8]]) -> u16 {
        let mut bytes = Vec::new();
        for p in parts {
            bytes.extend_from_slice(p);
        }
        if bytes.len() % 2 == 1 {
            bytes.push(0);
        }
        let mut s: u64 = bytes.chunks(2).map(|c| ((c[0] as u64) << 8) | c[1] as u64).sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    fn syn() -> Packet {
        let opts = TcpOptions {
            mss: Some(1460),
            wscale: Some(7),
            sack_permitted: true,
            timestamps: Some((1, 0)),
            ..Default::default()
        };
        let s = TcpSegment {
            src_port: 40000,
            dst_port: 5201,
            seq: 0x0102_0304,
            ack: 0,
            flags: TcpFlags(TcpFlags::SYN),
            window: 64240,
            options: opts,
            payload_len: 0,
            ect: false,
        };
        let mut p = Packet::new(1, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 0, 0, 2), 0x1234, SimTime::ZERO, Body::Tcp(s));
        p.dont_fragment = true;
        p
    }

    #[test]
    fn pcap_syn_golden_bytes() {
        // RFC 791 §3.1 IPv4 header and RFC 9293 §3.1 TCP header with Linux's SYN options
        // MSS, SACK_PERM+TS, NOP WS (20 bytes); checksums verified by an independent sum.
        let mut b = Vec::new();
        let n = encode_headers(&syn(), &mut b);
        assert_eq!(n, 60);
        #[rustfmt::skip]
        let want: [u8; 60] = [
            // IPv4: 45, tos 0, len 60, id 0x1234, DF, ttl 64, TCP, checksum 0x1486 (by hand), src, dst
            0x45, 0x00, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0x14, 0x86,
            10, 0, 0, 1, 10, 0, 0, 2,
            // TCP: 40000 -> 5201, seq, ack 0, data offset 10 words, SYN, window 64240, csum, urg
            0x9c, 0x40, 0x14, 0x51, 0x01, 0x02, 0x03, 0x04, 0, 0, 0, 0, 0xa0, 0x02, 0xfa, 0xf0,
            b[36], b[37], 0, 0,
            // MSS 1460 | SACK_PERM TS(1, 0) | NOP WS 7
            2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
        ];
        assert_eq!(b, want);
        assert_eq!(ones_sum(&[&b[..20]]), 0xffff);
        let pseudo = [10, 0, 0, 1, 10, 0, 0, 2, 0, 6, 0, 40];
        assert_eq!(ones_sum(&[&pseudo, &b[20..]]), 0xffff);
        assert_ne!((b[36], b[37]), (0, 0));
    }

    #[test]
    fn ecn_setup_flags_and_ect_are_on_the_wire() {
        // RFC 3168 §6.1.1 / RFC 9293 §3.1: CWR is bit 0x80 and ECE 0x40 of the flags byte (TCP
        // header byte 13); the ECN field is the low two bits of the IPv4 TOS byte (ECT(0) = 2).
        let mut p = syn();
        if let Body::Tcp(s) = &mut p.body {
            s.flags = TcpFlags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR);
        }
        p.ecn = Ecn::Ect0;
        let mut b = Vec::new();
        encode_headers(&p, &mut b);
        assert_eq!(b[20 + 13], 0xc2);
        assert_eq!(b[1], 2);
        assert_eq!(ones_sum(&[&b[..20]]), 0xffff, "IPv4 checksum covers the TOS byte");
    }

    #[test]
    fn mptcp_option_from_the_side_table_follows_the_other_options() {
        // RFC 8684 §3: kind 30 after the other options, NOP-padded (Linux); the data offset and
        // the IPv4 total length count it. Without its bytes the same space is NOPs.
        let mut p = syn();
        let opt = MptcpOption::from_bytes(&[30, 12, 0x01, 0x81, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).unwrap();
        crate::MptcpSideTable::default().attach(&mut p, opt);
        let (mut with, mut without) = (Vec::new(), Vec::new());
        assert_eq!(encode_headers_mptcp(&p, opt.as_bytes(), &mut with), 20 + 40 + 16);
        assert_eq!(encode_headers(&p, &mut without), 20 + 40 + 16);
        assert_eq!(p.size(), 20 + 40 + 16);
        assert_eq!(&with[2..4], &(76u16).to_be_bytes());
        assert_eq!(with[20 + 12] >> 4, 14); // 56-byte TCP header
        assert_eq!(&with[60..74], opt.as_bytes());
        assert_eq!(&with[74..76], &[1, 1]);
        assert_eq!(&without[60..76], &[1; 16]);
        assert_eq!(ones_sum(&[&with[..20]]), 0xffff);
    }

    #[test]
    fn pcap_option_layouts_match_wire_len() {
        // Every combination of options encodes to exactly TcpOptions::wire_len bytes (Linux layout).
        for mss in [None, Some(1460)] {
            for ws in [None, Some(7)] {
                for sp in [false, true] {
                    for ts in [None, Some((5, 6))] {
                        for nsack in 0..=3u8 {
                            let mut o = TcpOptions {
                                mss,
                                wscale: ws,
                                sack_permitted: sp,
                                timestamps: ts,
                                ..Default::default()
                            };
                            for k in 0..nsack {
                                o.push_sack(SackBlock { left: k as u32, right: k as u32 + 1 });
                            }
                            let mut v = Vec::new();
                            write_tcp_options(&o, &[], 0, &mut v);
                            assert_eq!(v.len() as u32, o.wire_len(), "{o:?}");
                            assert_eq!(v.len() % 4, 0);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn pcap_udp_icmp_checksums_and_data_checksum() {
        // RFC 768 / RFC 792 / RFC 9293: checksums over pseudo-header (not ICMP), header and the
        // zero payload verify to 0xffff.
        let src = Ipv4::new(192, 168, 1, 10);
        let dst = Ipv4::new(8, 8, 8, 8);
        let u = Packet::new(
            1,
            src,
            dst,
            7,
            SimTime::ZERO,
            Body::Udp(UdpDatagram { src_port: 5000, dst_port: 5001, payload_len: 1000, ..Default::default() }),
        );
        let mut b = Vec::new();
        encode_headers(&u, &mut b);
        assert_eq!(b.len(), 28);
        let mut ps = Vec::new();
        ps.extend_from_slice(&src.octets());
        ps.extend_from_slice(&dst.octets());
        ps.extend_from_slice(&[0, 17, 0x03, 0xf0]); // length 1008
        assert_eq!(ones_sum(&[&ps, &b[20..]]), 0xffff);
        let i = Packet::new(
            1,
            src,
            dst,
            7,
            SimTime::ZERO,
            Body::Icmp(IcmpEcho { reply: false, ident: 99, seq: 3, payload_len: 56, ..Default::default() }),
        );
        let mut b = Vec::new();
        encode_headers(&i, &mut b);
        assert_eq!(&b[20..22], &[8, 0]);
        assert_eq!(ones_sum(&[&b[20..]]), 0xffff);
        let mut d = syn();
        let mut o = TcpOptions { timestamps: Some((77, 66)), ..Default::default() };
        o.push_sack(SackBlock { left: 10, right: 20 });
        d.body = Body::Tcp(TcpSegment {
            flags: TcpFlags(TcpFlags::ACK | TcpFlags::PSH),
            options: o,
            payload_len: 1000,
            ..*d.tcp().unwrap()
        });
        d.ecn = Ecn::Ce;
        let mut b = Vec::new();
        encode_headers(&d, &mut b);
        assert_eq!(b[1], 3); // CE
        let tcp_len = (b.len() - 20 + 1000) as u16;
        let mut ps = vec![10, 0, 0, 1, 10, 0, 0, 2, 0, 6];
        ps.extend_from_slice(&tcp_len.to_be_bytes());
        assert_eq!(ones_sum(&[&ps, &b[20..]]), 0xffff);
    }

    #[test]
    fn pcap_fragments_carry_header_only_in_the_first() {
        // RFC 791: MF and offset/8 in the flags field; the transport header is in fragment 0 only.
        let mut p = syn();
        p.dont_fragment = false;
        if let Body::Tcp(s) = &mut p.body {
            s.payload_len = 2940;
        }
        let mut frags = Vec::new();
        fragment(p, 1500, &mut frags).unwrap();
        let mut b = Vec::new();
        assert_eq!(encode_headers(&frags[0], &mut b), 60);
        assert_eq!(&b[6..8], &[0x20, 0x00]); // MF, offset 0
        b.clear();
        assert_eq!(encode_headers(&frags[1], &mut b), 20);
        assert_eq!(u16::from_be_bytes([b[6], b[7]]), 0x2000 | (1480 / 8));
        assert_eq!(u16::from_be_bytes([b[2], b[3]]), 1500);
        b.clear();
        encode_headers(&frags[2], &mut b);
        assert_eq!(u16::from_be_bytes([b[6], b[7]]), 2960 / 8);
    }

    #[test]
    fn other_link_types_write_whole_frames() {
        // LINKTYPE_IEEE802_11_RADIOTAP = 127 in the global header; a record is the frame whole
        let mut w = PcapWriter::with_link_type(Vec::new(), Snaplen::Bytes(65_535), 127).unwrap();
        w.write_frame(SimTime::from_nanos(1_500_000_000), &[1, 2, 3]).unwrap();
        let v = w.into_inner().unwrap();
        assert_eq!(u32::from_le_bytes(v[16..20].try_into().unwrap()), 65_535);
        assert_eq!(u32::from_le_bytes(v[20..24].try_into().unwrap()), 127);
        assert_eq!(&v[24..], &[1, 0, 0, 0, 0x00, 0x65, 0xcd, 0x1d, 3, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3]);
    }

    #[test]
    fn pcap_file_layout_and_snaplen() {
        // Global header: ns magic, v2.4, LINKTYPE_RAW; records: ts sec/nsec, caplen, orig_len.
        let mut w = PcapWriter::new(Vec::new(), Snaplen::Headers).unwrap();
        let mut p = syn();
        if let Body::Tcp(s) = &mut p.body {
            s.payload_len = 1000;
        }
        w.write_packet(SimTime::from_nanos(2_000_000_123), &p).unwrap();
        let v = w.into_inner().unwrap();
        assert_eq!(&v[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u32::from_le_bytes(v[20..24].try_into().unwrap()), 101);
        let r = &v[24..];
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), 2);
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 123);
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 60);
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 1060);
        assert_eq!(r.len(), 16 + 60);
        // With a snaplen, zero payload up to it (or to the packet's end).
        let mut w = PcapWriter::new(Vec::new(), Snaplen::Bytes(200)).unwrap();
        w.write_packet(SimTime::ZERO, &p).unwrap();
        w.write_packet(SimTime::ZERO, &syn()).unwrap();
        let v = w.into_inner().unwrap();
        let r = &v[24..];
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 200);
        assert!(r[16 + 60..16 + 200].iter().all(|&x| x == 0));
        let r2 = &r[16 + 200..];
        assert_eq!(u32::from_le_bytes(r2[8..12].try_into().unwrap()), 60);
        assert_eq!(r2.len(), 16 + 60);
    }

    #[test]
    fn pcap_tshark_reads_our_fields() {
        // Wireshark's dissector must agree with the fields we wrote (skipped without tshark).
        let ok = std::process::Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("note: tshark not installed; skipping pcap_tshark_reads_our_fields");
            return;
        }
        let path = std::env::temp_dir().join(format!("celltcp-pcap-test-{}.pcap", std::process::id()));
        let mut data = syn();
        let mut o = TcpOptions { timestamps: Some((100, 200)), ..Default::default() };
        o.push_sack(SackBlock { left: 5000, right: 6000 });
        data.body = Body::Tcp(TcpSegment {
            seq: 0xdead_beef,
            ack: 12345,
            flags: TcpFlags(TcpFlags::ACK),
            window: 501,
            options: o,
            payload_len: 1400,
            ..*syn().tcp().unwrap()
        });
        {
            let f = std::fs::File::create(&path).unwrap();
            // Whole packets (zero payload), so that tshark can verify the TCP checksum too.
            let mut w = PcapWriter::new(f, Snaplen::Bytes(65_535)).unwrap();
            w.write_packet(SimTime::from_millis(1), &syn()).unwrap();
            w.write_packet(SimTime::from_millis(2), &data).unwrap();
            w.flush().unwrap();
        }
        let out = std::process::Command::new("tshark")
            .args(["-r", path.to_str().unwrap(), "-T", "fields", "-E", "separator=;"])
            .args(["-e", "tcp.seq_raw", "-e", "tcp.ack_raw", "-e", "tcp.flags", "-e", "tcp.options.mss_val"])
            .args([
                "-e",
                "tcp.window_size_value",
                "-e",
                "ip.len",
                "-e",
                "ip.checksum.status",
                "-e",
                "tcp.checksum.status",
            ])
            .args(["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"])
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(&lines[0][..6], &["16909060", "0", "0x0002", "1460", "64240", "60"], "{text}");
        assert_eq!(&lines[1][..6], &["3735928559", "12345", "0x0010", "", "501", "1464"], "{text}");
        // IPv4 and TCP checksums verified good (PROTO_CHECKSUM_E_GOOD = 1).
        for l in &lines {
            assert_eq!(&l[6..8], &["1", "1"], "{text}");
        }
    }
}
