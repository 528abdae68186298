//! TCP segmentation of the kernel's super-packets (sans-IO): with `IFF_VNET_HDR` and
//! `TUNSETOFFLOAD(TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN)` a TUN device lets the kernel's TCP
//! hand over up to 64 KB in one read (TSO), each read prefixed with a `struct virtio_net_hdr`
//! (`include/uapi/linux/virtio_net.h`: flags, gso_type, hdr_len, gso_size, csum_start,
//! csum_offset, 10 bytes), and leave checksums to the device (`VIRTIO_NET_HDR_F_NEEDS_CSUM`: the
//! checksum field holds the pseudo-header sum, the rest is summed from `csum_start`). The
//! emulator is that device: it cuts a `VIRTIO_NET_HDR_GSO_TCPV4` packet into `gso_size`
//! segments as the kernel's software GSO does (`net/ipv4/tcp_offload.c` `tcp_gso_segment`,
//! `net/ipv4/af_inet.c` `inet_gso_segment`): sequence number advanced by the payload before,
//! FIN and PSH only on the last segment, CWR only on the first, IPv4 identification incremented
//! per segment, total length and both checksums recomputed (RFC 791, RFC 9293 §3.1 with the
//! pseudo-header, RFC 1071's sum). So the emulated link carries MSS-sized packets, one read of
//! the device carries up to 45 of them, and the sender's kernel skips its own segmentation.
//!
//! Writes into a device with the header carry a zero header ([`PLAIN_HDR`]): one full packet
//! with its checksums done.

/// Bytes of `struct virtio_net_hdr` (the default `TUNSETVNETHDRSZ`).
pub const VNET_HDR_LEN: usize = 10;
/// The header of a plain packet (no GSO, checksums complete).
pub const PLAIN_HDR: [u8; VNET_HDR_LEN] = [0; VNET_HDR_LEN];

const F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_ECN: u8 = 0x80;

/// Why a read could not be turned into packets.
#[derive(Debug, PartialEq, Eq)]
pub enum GsoError {
    Short,
    /// A GSO type other than TCPv4 (none is enabled).
    Type(u8),
    /// Headers that do not fit or are not IPv4/TCP.
    Malformed(&'static str),
}

/// RFC 1071's one's-complement sum of `data` added to `acc` (not folded).
fn sum(mut acc: u32, data: &[u8]) -> u32 {
    let mut it = data.chunks_exact(2);
    for w in &mut it {
        acc += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [b] = it.remainder() {
        acc += u32::from(*b) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Writes the IPv4 header checksum of `ip` (its first IHL × 4 bytes).
fn ip_checksum(ip: &mut [u8], ihl: usize) {
    ip[10..12].fill(0);
    let c = !fold(sum(0, &ip[..ihl]));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Writes the TCP checksum of the segment `pkt` (IPv4 header of `ihl` bytes, then TCP).
fn tcp_checksum(pkt: &mut [u8], ihl: usize) {
    let tcp_len = pkt.len() - ihl;
    pkt[ihl + 16..ihl + 18].fill(0);
    let mut acc = sum(0, &pkt[12..20]); // source and destination addresses
    acc += 6 + tcp_len as u32;
    acc = sum(acc, &pkt[ihl..]);
    let c = !fold(acc);
    pkt[ihl + 16..ihl + 18].copy_from_slice(&c.to_be_bytes());
}

/// Turns one read of a TUN device with the header (`buf`: header, then the packet) into wire
/// packets, handing each to `f`. `scratch` holds a segment while it is built.
pub fn split(buf: &mut [u8], scratch: &mut Vec<u8>, mut f: impl FnMut(&[u8])) -> Result<usize, GsoError> {
    if buf.len() < VNET_HDR_LEN + 20 {
        return Err(GsoError::Short);
    }
    let (hdr, pkt) = buf.split_at_mut(VNET_HDR_LEN);
    let flags = hdr[0];
    let gso_type = hdr[1] & !GSO_ECN;
    let gso_size = usize::from(u16::from_le_bytes([hdr[4], hdr[5]]));
    let csum_start = usize::from(u16::from_le_bytes([hdr[6], hdr[7]]));
    let csum_offset = usize::from(u16::from_le_bytes([hdr[8], hdr[9]]));
    if gso_type == GSO_NONE {
        if flags & F_NEEDS_CSUM != 0 {
            // the field holds the pseudo-header's sum: sum from csum_start over it (skb_checksum_help)
            let at = csum_start + csum_offset;
            if at + 2 > pkt.len() || csum_start > pkt.len() {
                return Err(GsoError::Malformed("checksum offset past the packet"));
            }
            let c = !fold(sum(0, &pkt[csum_start..]));
            // a UDP checksum that computes to 0 is sent as 0xffff (RFC 768)
            let c = if c == 0 && pkt[9] == 17 { 0xffff } else { c };
            pkt[at..at + 2].copy_from_slice(&c.to_be_bytes());
        }
        f(pkt);
        return Ok(1);
    }
    if gso_type != GSO_TCPV4 {
        return Err(GsoError::Type(hdr[1]));
    }
    if pkt[0] >> 4 != 4 || pkt[9] != 6 {
        return Err(GsoError::Malformed("TCPv4 GSO on a packet that is not IPv4/TCP"));
    }
    let ihl = usize::from(pkt[0] & 0xf) * 4;
    if ihl < 20 || pkt.len() < ihl + 20 {
        return Err(GsoError::Malformed("IPv4 header"));
    }
    let thl = usize::from(pkt[ihl + 12] >> 4) * 4;
    let hl = ihl + thl;
    if thl < 20 || pkt.len() < hl || gso_size == 0 {
        return Err(GsoError::Malformed("TCP header or gso_size"));
    }
    let payload = pkt.len() - hl;
    let n = payload.div_ceil(gso_size).max(1);
    let id0 = u16::from_be_bytes([pkt[4], pkt[5]]);
    let seq0 = u32::from_be_bytes([pkt[ihl + 4], pkt[ihl + 5], pkt[ihl + 6], pkt[ihl + 7]]);
    let tcp_flags = pkt[ihl + 13];
    const FIN: u8 = 0x01;
    const PSH: u8 = 0x08;
    const CWR: u8 = 0x80;
    for i in 0..n {
        let off = i * gso_size;
        let len = gso_size.min(payload - off);
        scratch.clear();
        scratch.extend_from_slice(&pkt[..hl]);
        scratch.extend_from_slice(&pkt[hl + off..hl + off + len]);
        let s = &mut scratch[..];
        let total = (hl + len) as u16;
        s[2..4].copy_from_slice(&total.to_be_bytes());
        s[4..6].copy_from_slice(&id0.wrapping_add(i as u16).to_be_bytes());
        s[ihl + 4..ihl + 8].copy_from_slice(&seq0.wrapping_add(off as u32).to_be_bytes());
        let mut fl = tcp_flags;
        if i + 1 < n {
            fl &= !(FIN | PSH);
        }
        if i > 0 {
            fl &= !CWR;
        }
        s[ihl + 13] = fl;
        ip_checksum(s, ihl);
        tcp_checksum(s, ihl);
        f(s);
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An independent check (RFC 1071 §1, "(3) To check a checksum, the 1's complement sum is
    /// computed over the same set of octets, including the checksum field. If the result is all
    /// 1 bits (-0 in 1's complement arithmetic), the check succeeds"), written out bytewise.
    fn verifies(data: &[u8]) -> bool {
        let mut acc: u64 = 0;
        let mut i = 0;
        while i < data.len() {
            let hi = u64::from(data[i]);
            let lo = if i + 1 < data.len() { u64::from(data[i + 1]) } else { 0 };
            acc += hi * 256 + lo;
            i += 2;
        }
        while acc >> 16 != 0 {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        acc == 0xffff
    }

    fn tcp_ok(seg: &[u8]) -> bool {
        let ihl = usize::from(seg[0] & 0xf) * 4;
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&seg[12..20]);
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&((seg.len() - ihl) as u16).to_be_bytes());
        pseudo.extend_from_slice(&seg[ihl..]);
        verifies(&pseudo)
    }

    /// A super-packet as the kernel hands it: IPv4 (DF, id 0x1234), TCP with timestamps
    /// (32-byte header), `payload` bytes, flags `flags`, a stale checksum (the pseudo-header sum).
    fn super_packet(payload: usize, flags: u8, gso_size: u16, gso_type: u8) -> Vec<u8> {
        let mut b = vec![F_NEEDS_CSUM, gso_type];
        b.extend_from_slice(&52u16.to_le_bytes()); // hdr_len
        b.extend_from_slice(&gso_size.to_le_bytes());
        b.extend_from_slice(&20u16.to_le_bytes()); // csum_start
        b.extend_from_slice(&16u16.to_le_bytes()); // csum_offset
        let total = (52 + payload) as u16;
        b.extend_from_slice(&[0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        b[VNET_HDR_LEN + 2..VNET_HDR_LEN + 4].copy_from_slice(&total.to_be_bytes());
        b.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51]); // ports 40000 -> 5201
        b.extend_from_slice(&0xffff_f000u32.to_be_bytes()); // seq, wraps within the packet
        b.extend_from_slice(&7u32.to_be_bytes()); // ack
        b.extend_from_slice(&[0x80, flags, 0x01, 0x00, 0xab, 0xcd, 0, 0]); // doff 8, window, csum, urg
        b.extend_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]); // NOP NOP TS
        b.extend((0..payload).map(|i| (i * 7 + 3) as u8));
        b
    }

    #[test]
    fn gso_segments_like_tcp_gso_segment_with_valid_checksums() {
        let (payload, mss) = (10_000usize, 1448u16);
        let mut b = super_packet(payload, 0x18 | 0x01 | 0x80, mss, GSO_TCPV4 | GSO_ECN); // PSH ACK FIN CWR
        let orig = b.clone();
        let mut segs: Vec<Vec<u8>> = Vec::new();
        let n = split(&mut b, &mut Vec::new(), |s| segs.push(s.to_vec())).unwrap();
        assert_eq!(n, 7);
        assert_eq!(segs.len(), 7, "ceil(10000 / 1448)");
        let mut data = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let len = if i < 6 { 1448 } else { 10_000 - 6 * 1448 };
            assert_eq!(s.len(), 52 + len);
            assert_eq!(u16::from_be_bytes([s[2], s[3]]) as usize, s.len(), "total length");
            assert_eq!(u16::from_be_bytes([s[4], s[5]]), 0x1234 + i as u16, "IP id per segment");
            assert!(verifies(&s[..20]), "IPv4 header checksum of segment {i}");
            assert!(tcp_ok(s), "TCP checksum of segment {i}");
            let seq = u32::from_be_bytes([s[24], s[25], s[26], s[27]]);
            assert_eq!(seq, 0xffff_f000u32.wrapping_add((i * 1448) as u32));
            let fl = s[33];
            assert_eq!(fl & 0x10, 0x10, "ACK on every segment");
            assert_eq!(fl & 0x09 != 0, i == 6, "FIN and PSH only on the last");
            assert_eq!(fl & 0x80 != 0, i == 0, "CWR only on the first");
            assert_eq!(&s[8..10], &orig[VNET_HDR_LEN + 8..VNET_HDR_LEN + 10], "TTL, protocol");
            assert_eq!(&s[12..20], &orig[VNET_HDR_LEN + 12..VNET_HDR_LEN + 20], "addresses");
            assert_eq!(&s[40..52], &orig[VNET_HDR_LEN + 40..VNET_HDR_LEN + 52], "options copied");
            data.extend_from_slice(&s[52..]);
        }
        assert_eq!(data, &orig[VNET_HDR_LEN + 52..], "the payload, in order, once");
    }

    #[test]
    fn gso_none_completes_a_partial_checksum_and_passes_a_plain_packet() {
        // a single segment with NEEDS_CSUM: the field holds the pseudo-header sum, as the
        // kernel's __tcp_v4_send_check leaves it (~tcp_v4_check(len, saddr, daddr, 0))
        let mut b = super_packet(100, 0x10, 0, GSO_NONE);
        let len = b.len() - VNET_HDR_LEN;
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&b[VNET_HDR_LEN + 12..VNET_HDR_LEN + 20]);
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&((len - 20) as u16).to_be_bytes());
        let seed = fold(sum(0, &pseudo));
        b[VNET_HDR_LEN + 36..VNET_HDR_LEN + 38].copy_from_slice(&seed.to_be_bytes());
        let mut hdr = b.clone();
        ip_checksum(&mut hdr[VNET_HDR_LEN..], 20);
        let mut got = Vec::new();
        split(&mut hdr, &mut Vec::new(), |s| got = s.to_vec()).unwrap();
        assert_eq!(got.len(), len);
        assert!(tcp_ok(&got), "completed checksum verifies");
        // a plain packet (zero header) passes unchanged
        let mut plain = PLAIN_HDR.to_vec();
        plain.extend_from_slice(&got);
        let mut same = Vec::new();
        split(&mut plain, &mut Vec::new(), |s| same = s.to_vec()).unwrap();
        assert_eq!(same, got);
    }

    #[test]
    fn gso_refuses_what_it_cannot_cut() {
        let mut b = super_packet(3000, 0x10, 1448, 4); // UDP GSO: not enabled
        assert_eq!(split(&mut b, &mut Vec::new(), |_| ()), Err(GsoError::Type(4)));
        assert_eq!(split(&mut [0u8; 12], &mut Vec::new(), |_| ()), Err(GsoError::Short));
        let mut b = super_packet(3000, 0x10, 0, GSO_TCPV4);
        assert!(matches!(split(&mut b, &mut Vec::new(), |_| ()), Err(GsoError::Malformed(_))));
    }
}
