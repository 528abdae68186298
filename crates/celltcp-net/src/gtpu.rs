//! GTPv1-U encapsulation (3GPP TS 29.281), as LTE carries user packets on S1-U (eNB ⇄ S-GW/P-GW,
//! TS 36.414) and forwards them on X2-U during a handover (TS 36.424): outer IPv4, UDP to port
//! 2152, the GTP-U header, then the user's IPv4 packet.
//!
//! - GTP-U header (TS 29.281 §5.1, Figure 5.1-1): octet 1 = version 1 (bits 8–6), PT = 1 (GTP,
//!   bit 5), spare 0, E/S/PN flags; octet 2 = message type, 255 for a G-PDU (§6.1, Table 6.1-1);
//!   octets 3–4 = length of everything after the mandatory 8 octets; octets 5–8 = the TEID of the
//!   receiving tunnel endpoint. 8 bytes with no optional field.
//! - With E = 1 the optional 4 octets follow (sequence number, N-PDU number, next extension
//!   header type, §5.1 NOTE: present whenever E, S or PN is set) and the extension headers
//!   (§5.2.1): X2-U data forwarding carries the PDCP SN in the "PDCP PDU Number" extension
//!   header, type `0xC0` (§5.2.2.2; TS 36.424 §5.2), 4 octets: length 1, the number, next type 0.
//! - UDP (TS 29.281 §4.4.2.0): destination port 2152 for G-PDUs; the source port is the sender's
//!   choice (2152 here, as Linux's `gtp` module uses).
//! - Outer IPv4: DF set, identification 0 (RFC 6864 §4.1: an atomic datagram), TTL 64, the inner
//!   packet's ECN bits copied out (RFC 6040 §4.1, normal mode, which Linux's `gtp` module uses).
//!
//! Only headers are written; the user payload is zeros, and the UDP checksum is computed over
//! the pseudo-header, the headers and that zero payload, so Wireshark finds it correct.

use crate::packet::{Ipv4, Packet, IPV4_HEADER, PROTO_UDP, UDP_HEADER};
use crate::pcap::Csum;

/// UDP port of GTP-U (TS 29.281 §4.4.2.0).
pub const GTPU_PORT: u16 = 2152;
/// The mandatory GTP-U header (TS 29.281 §5.1).
pub const GTPU_HEADER: u32 = 8;
/// Bytes added around a G-PDU with no optional field: outer IPv4 20 + UDP 8 + GTP-U 8.
pub const GTPU_OVERHEAD: u32 = IPV4_HEADER + UDP_HEADER + GTPU_HEADER;
/// Message type of a G-PDU, a tunnelled user packet (TS 29.281 Table 6.1-1).
pub const MSG_G_PDU: u8 = 255;
/// Extension header type "PDCP PDU Number" (TS 29.281 §5.2.1, Figure 5.2.1-3).
pub const EXT_PDCP_PDU_NUMBER: u8 = 0xC0;

/// The outer headers of one tunnelled packet: the tunnel's end addresses and the receiver's
/// TEID; `pdcp_sn` adds the PDCP PDU Number extension header (X2-U forwarding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunnel {
    pub src: Ipv4,
    pub dst: Ipv4,
    pub teid: u32,
    pub pdcp_sn: Option<u16>,
}

impl Tunnel {
    /// Bytes of outer IPv4, UDP and GTP-U headers (36, or 44 with the PDCP extension header).
    pub fn overhead(&self) -> u32 {
        GTPU_OVERHEAD + if self.pdcp_sn.is_some() { 8 } else { 0 }
    }
}

/// Writes the outer headers of `t` into `out[..t.overhead()]`, for an inner IPv4 packet of
/// `inner_len` bytes whose first bytes are `inner` (the rest of it is zeros, as pcap writes
/// payload): outer IPv4 with its checksum, UDP with its checksum, GTP-U.
pub fn write_outer(t: &Tunnel, ecn: u8, inner_len: u32, inner: &[u8], out: &mut [u8]) {
    let oh = t.overhead() as usize;
    let total = oh as u32 + inner_len;
    let udp_len = total - IPV4_HEADER;
    let o = &mut out[..oh];
    // IPv4 (RFC 791 §3.1)
    o[0] = 0x45;
    o[1] = ecn & 3;
    o[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    o[4..6].copy_from_slice(&[0, 0]);
    o[6..8].copy_from_slice(&0x4000u16.to_be_bytes());
    o[8] = 64;
    o[9] = PROTO_UDP;
    o[10..12].copy_from_slice(&[0, 0]);
    o[12..16].copy_from_slice(&t.src.octets());
    o[16..20].copy_from_slice(&t.dst.octets());
    let mut c = Csum::default();
    c.add_bytes(&o[..20]);
    let s = c.finish();
    o[10..12].copy_from_slice(&s.to_be_bytes());
    // UDP (RFC 768)
    o[20..22].copy_from_slice(&GTPU_PORT.to_be_bytes());
    o[22..24].copy_from_slice(&GTPU_PORT.to_be_bytes());
    o[24..26].copy_from_slice(&(udp_len as u16).to_be_bytes());
    o[26..28].copy_from_slice(&[0, 0]);
    // GTP-U (TS 29.281 §5.1): version 1, PT 1, E when an extension header follows
    let g = 28;
    o[g] = 0x30 | if t.pdcp_sn.is_some() { 0x04 } else { 0 };
    o[g + 1] = MSG_G_PDU;
    o[g + 2..g + 4].copy_from_slice(&((total - g as u32 - GTPU_HEADER) as u16).to_be_bytes());
    o[g + 4..g + 8].copy_from_slice(&t.teid.to_be_bytes());
    if let Some(sn) = t.pdcp_sn {
        // sequence number 0, N-PDU number 0, next extension header: PDCP PDU Number
        o[g + 8..g + 12].copy_from_slice(&[0, 0, 0, EXT_PDCP_PDU_NUMBER]);
        // length 1 (4 octets), the PDCP SN, no further extension header
        let sn = sn.to_be_bytes();
        o[g + 12..g + 16].copy_from_slice(&[1, sn[0], sn[1], 0]);
    }
    let mut c = Csum::default();
    c.add_bytes(&t.src.octets());
    c.add_bytes(&t.dst.octets());
    c.add_bytes(&[0, PROTO_UDP]);
    c.add_bytes(&(udp_len as u16).to_be_bytes());
    c.add_bytes(&o[20..oh]);
    // the inner bytes start at an even offset of the UDP payload (oh is a multiple of 4)
    c.add_bytes(inner);
    let sum = match c.finish() {
        0 => 0xffff,
        v => v,
    };
    o[26..28].copy_from_slice(&sum.to_be_bytes());
}

/// The inner packet of a packet that crosses a tunnel: the same with no tunnel bytes counted.
pub fn inner(pkt: &Packet) -> Packet {
    Packet { encap: 0, teid: 0, ..*pkt }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Body, TcpFlags, TcpOptions, TcpSegment};
    use crate::pcap::{encode_headers, PcapWriter, Snaplen};
    use celltcp_engine::SimTime;

    /// An independent RFC 1071 sum over the concatenation of `parts`.
    fn ones_sum(parts: &[&[u8]]) -> u16 {
        let mut bytes: Vec<u8> = parts.concat();
        if bytes.len() % 2 == 1 {
            bytes.push(0);
        }
        let mut s: u64 = bytes.chunks(2).map(|c| ((c[0] as u64) << 8) | c[1] as u64).sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    fn data(len: u32) -> Packet {
        let s = TcpSegment {
            src_port: 5201,
            dst_port: 40000,
            seq: 1000,
            ack: 1,
            flags: TcpFlags(TcpFlags::ACK),
            window: 500,
            options: TcpOptions { timestamps: Some((7, 8)), ..Default::default() },
            payload_len: len,
            ect: false,
        };
        Packet::new(1, Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 45, 0, 1), 9, SimTime::ZERO, Body::Tcp(s))
    }

    const ENB: Ipv4 = Ipv4::new(10, 44, 1, 1);
    const PGW: Ipv4 = Ipv4::new(10, 0, 0, 2);

    #[test]
    fn gtpu_g_pdu_header_bytes() {
        // TS 29.281 Figure 5.1-1: 0x30 (version 1, PT 1, no E/S/PN), type 255, length = inner
        // IPv4 total length, TEID; UDP 2152 -> 2152 (§4.4.2.0); outer length = inner + 36.
        let p = data(1388);
        let t = Tunnel { src: PGW, dst: ENB, teid: 0x0102_0304, pdcp_sn: None };
        let mut inner_b = Vec::new();
        encode_headers(&p, &mut inner_b);
        let mut o = [0u8; 36];
        write_outer(&t, 0, p.size(), &inner_b, &mut o);
        assert_eq!(p.size(), 1440);
        assert_eq!(&o[28..36], &[0x30, 0xff, 0x05, 0xa0, 1, 2, 3, 4]);
        assert_eq!(&o[20..26], &[0x08, 0x68, 0x08, 0x68, 0x05, 0xb0]); // 2152, 2152, 1456
        assert_eq!(u16::from_be_bytes([o[2], o[3]]), 1476);
        assert_eq!(&o[6..8], &[0x40, 0]); // DF
        assert_eq!(o[9], 17);
        assert_eq!(ones_sum(&[&o[..20]]), 0xffff, "outer IPv4 checksum");
        // UDP checksum: pseudo-header + UDP + GTP + inner headers (payload zeros) sums to 0xffff
        let pseudo = [10, 0, 0, 2, 10, 44, 1, 1, 0, 17, 0x05, 0xb0];
        assert_eq!(ones_sum(&[&pseudo, &o[20..], &inner_b]), 0xffff, "UDP checksum");
    }

    #[test]
    fn gtpu_pdcp_pdu_number_extension() {
        // TS 29.281 §5.2.2.2: E = 1, the optional octets with next type 0xC0, then the
        // extension header: length 1, PDCP PDU number, next type 0; length counts them.
        let p = data(100);
        let t = Tunnel { src: ENB, dst: Ipv4::new(10, 44, 1, 2), teid: 7, pdcp_sn: Some(0x0abc) };
        assert_eq!(t.overhead(), 44);
        let mut o = [0u8; 44];
        write_outer(&t, 2, p.size(), &[], &mut o);
        assert_eq!(o[1], 2, "ECN copied out");
        assert_eq!(o[28], 0x34);
        assert_eq!(u16::from_be_bytes([o[30], o[31]]), 8 + p.size() as u16);
        assert_eq!(&o[36..44], &[0, 0, 0, 0xc0, 1, 0x0a, 0xbc, 0]);
    }

    #[test]
    fn gtpu_real_bytes_capture_equals_the_modelled_one() {
        // The emulator's path (real bytes inside the tunnel) and the simulator's (headers from
        // the packet's fields) must write the same record for the same packet.
        let p = data(300);
        let t = Tunnel { src: ENB, dst: PGW, teid: 5, pdcp_sn: None };
        let mut a = PcapWriter::new(Vec::new(), Snaplen::Bytes(65_535)).unwrap();
        a.write_tunnelled(SimTime::from_micros(5), &t, &p).unwrap();
        let mut bytes = Vec::new();
        encode_headers(&p, &mut bytes);
        bytes.resize(p.size() as usize, 0);
        let mut b = PcapWriter::new(Vec::new(), Snaplen::Bytes(65_535)).unwrap();
        b.write_tunnelled_bytes(SimTime::from_micros(5), &t, &bytes).unwrap();
        let (a, b) = (a.into_inner().unwrap(), b.into_inner().unwrap());
        assert_eq!(a.len(), 24 + 16 + 36 + p.size() as usize);
        assert_eq!(a, b);
        // headers only: caplen = 36 + inner headers, orig_len = 36 + inner length
        let mut h = PcapWriter::new(Vec::new(), Snaplen::Headers).unwrap();
        h.write_tunnelled_bytes(SimTime::ZERO, &t, &bytes).unwrap();
        let h = h.into_inner().unwrap();
        assert_eq!(u32::from_le_bytes(h[32..36].try_into().unwrap()), 36 + 52);
        assert_eq!(u32::from_le_bytes(h[36..40].try_into().unwrap()), 36 + 352);
    }

    #[test]
    fn gtpu_tshark_decodes_g_pdu_and_inner_tcp() {
        // Wireshark's GTP dissector (on UDP 2152) must read our TEID, message type, length and
        // PDCP extension, and the inner TCP segment; with whole packets captured, every
        // checksum (outer IPv4, UDP, inner IPv4, TCP) must verify.
        let ok = std::process::Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("note: tshark not installed; skipping gtpu_tshark_decodes_g_pdu_and_inner_tcp");
            return;
        }
        let path = std::env::temp_dir().join(format!("celltcp-gtpu-test-{}.pcap", std::process::id()));
        {
            let f = std::fs::File::create(&path).unwrap();
            let mut w = PcapWriter::new(f, Snaplen::Bytes(65_535)).unwrap();
            let mut p = data(1000);
            p.encap = GTPU_OVERHEAD as u16;
            w.write_tunnelled(SimTime::from_millis(1), &Tunnel { src: PGW, dst: ENB, teid: 0xdead_beef, pdcp_sn: None }, &p).unwrap();
            w.write_tunnelled(SimTime::from_millis(2), &Tunnel { src: ENB, dst: PGW, teid: 42, pdcp_sn: Some(300) }, &data(0)).unwrap();
            w.flush().unwrap();
        }
        let out = std::process::Command::new("tshark")
            .args(["-r", path.to_str().unwrap(), "-T", "fields", "-E", "separator=;", "-E", "occurrence=a", "-E", "aggregator=,"])
            .args(["-e", "gtp.teid", "-e", "gtp.message", "-e", "gtp.length", "-e", "gtp.ext_hdr.pdcp_sn", "-e", "tcp.seq_raw", "-e", "ip.len"])
            .args(["-e", "ip.checksum.status", "-e", "udp.checksum.status", "-e", "tcp.checksum.status"])
            .args(["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"])
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(&lines[0][..6], &["0xdeadbeef", "0xff", "1052", "", "1000", "1088,1052"], "{text}");
        assert_eq!(&lines[1][..6], &["0x0000002a", "0xff", "60", "300", "1000", "96,52"], "{text}");
        for l in &lines {
            // PROTO_CHECKSUM_E_GOOD = 1, for both IPv4 headers, UDP and TCP
            assert_eq!(&l[6..9], &["1,1", "1", "1"], "{text}");
        }
    }
}
