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
//! Writes go the other way ([`Coalescer`]): consecutive TCP segments of one flow that the
//! simulation delivers to the same device in one turn of the loop (their delivery times all
//! come) are written as one `VIRTIO_NET_HDR_GSO_TCPV4` packet, so the receiving kernel takes a
//! train of segments in one `write(2)` as one GRO'd skb (`drivers/net/tun.c` `tun_get_user`,
//! `include/linux/virtio_net.h` `virtio_net_hdr_to_skb`). Segments merge only when resegmenting
//! the result (`tcp_gso_segment`, [`split`]) gives them back byte for byte, the rule of the
//! kernel's own GRO (`net/ipv4/tcp_offload.c` `tcp_gro_receive`, `net/ipv4/af_inet.c`
//! `inet_gro_receive`): same addresses, ports, TOS/ECN, TTL, DF, acknowledgment, data offset,
//! flags, window, urgent pointer and options; sequence numbers contiguous; IPv4 identification
//! +1 per segment; every payload `gso_size` (that of the first) except the last, which may be
//! shorter; PSH or FIN only on the last; no SYN, RST, URG or CWR; no fragment, no IP options;
//! at most 64 KB. The header says `NEEDS_CSUM` from the TCP header (csum_start = IHL × 4,
//! csum_offset 16) with the pseudo-header sum in the checksum field, as `__tcp_v4_send_check`
//! leaves it. Anything else is written alone with a zero header ([`PLAIN_HDR`]): one full
//! packet with its checksums done.

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

/// TCP flags (RFC 9293 §3.1).
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const PSH: u8 = 0x08;
const URG: u8 = 0x20;
const CWR: u8 = 0x80;
/// The largest IPv4 datagram (total length is 16 bits).
const MAX_GSO_BYTES: usize = 65_535;

/// Builds the device writes of a run of packets for one TUN device with `IFF_VNET_HDR`
/// (module doc): [`Coalescer::push`] each packet in delivery order, [`Coalescer::flush`] at the
/// end of the turn; `write` gets each buffer to write (header, then the packet), with the
/// number of wire packets it carries and their bytes.
#[derive(Default)]
pub struct Coalescer {
    /// The pending write: `virtio_net_hdr`, then the first segment's headers and every payload.
    buf: Vec<u8>,
    /// Segments in `buf` (0: none).
    segs: u16,
    /// IPv4 + TCP header bytes of the first segment.
    hl: usize,
    /// The first segment's payload (the `gso_size`).
    mss: usize,
    /// Sequence number after the last segment, and its IPv4 identification.
    next_seq: u32,
    last_id: u16,
    /// No segment may follow (a short one, PSH or FIN, or not TCP).
    closed: bool,
    /// The pending packets' bytes as they were pushed.
    wire: usize,
}

/// The fields of a TCP/IPv4 packet the merging rule reads, if it is one that may merge.
struct Seg {
    hl: usize,
    ihl: usize,
    payload: usize,
    seq: u32,
    id: u16,
    flags: u8,
}

fn seg_of(p: &[u8]) -> Option<Seg> {
    if p.len() < 40 || p[0] != 0x45 || p[9] != 6 {
        return None;
    }
    let total = usize::from(u16::from_be_bytes([p[2], p[3]]));
    let frag = u16::from_be_bytes([p[6], p[7]]);
    if total != p.len() || frag & 0x3fff != 0 {
        return None; // a fragment (MF or an offset)
    }
    let ihl = 20;
    let thl = usize::from(p[ihl + 12] >> 4) * 4;
    if thl < 20 || p.len() < ihl + thl {
        return None;
    }
    let flags = p[ihl + 13];
    if flags & (SYN | RST | URG | CWR) != 0 {
        return None;
    }
    Some(Seg {
        hl: ihl + thl,
        ihl,
        payload: p.len() - ihl - thl,
        seq: u32::from_be_bytes([p[ihl + 4], p[ihl + 5], p[ihl + 6], p[ihl + 7]]),
        id: u16::from_be_bytes([p[4], p[5]]),
        flags,
    })
}

impl Coalescer {
    /// Segments waiting to be written.
    pub fn pending(&self) -> u16 {
        self.segs
    }

    /// Adds the wire packet `p` (complete checksums) to the pending write, writing that first
    /// when `p` may not join it.
    pub fn push(&mut self, p: &[u8], write: &mut impl FnMut(&[u8], u16, usize)) {
        if self.segs > 0 && !self.closed && self.joins(p) {
            let s = seg_of(p).expect("joins checked it");
            self.buf.extend_from_slice(&p[s.hl..]);
            self.segs += 1;
            self.wire += p.len();
            self.next_seq = s.seq.wrapping_add(s.payload as u32);
            self.last_id = s.id;
            let at = VNET_HDR_LEN + s.ihl + 13;
            self.buf[at] |= s.flags & (PSH | FIN);
            self.closed = s.payload < self.mss || s.flags & (PSH | FIN) != 0;
            return;
        }
        self.flush(write);
        self.buf.clear();
        self.buf.extend_from_slice(&PLAIN_HDR);
        self.buf.extend_from_slice(p);
        self.segs = 1;
        self.wire = p.len();
        match seg_of(p) {
            Some(s) if s.payload > 0 && s.flags & (PSH | FIN) == 0 => {
                self.hl = s.hl;
                self.mss = s.payload;
                self.next_seq = s.seq.wrapping_add(s.payload as u32);
                self.last_id = s.id;
                self.closed = false;
            }
            _ => self.closed = true,
        }
    }

    /// Whether `p` may follow the pending segments (module doc: the GRO rule).
    fn joins(&self, p: &[u8]) -> bool {
        let Some(s) = seg_of(p) else { return false };
        let first = &self.buf[VNET_HDR_LEN..VNET_HDR_LEN + self.hl];
        let ihl = s.ihl;
        s.hl == self.hl
            && s.payload > 0
            && s.payload <= self.mss
            && self.buf.len() - VNET_HDR_LEN + s.payload <= MAX_GSO_BYTES
            && s.seq == self.next_seq
            && s.id == self.last_id.wrapping_add(1)
            // TOS/ECN; DF; TTL and protocol; addresses
            && p[1] == first[1]
            && p[6..10] == first[6..10]
            && p[12..20] == first[12..20]
            // ports; acknowledgment; data offset, flags but PSH/FIN, window; urgent; options
            && p[ihl..ihl + 4] == first[ihl..ihl + 4]
            && p[ihl + 8..ihl + 13] == first[ihl + 8..ihl + 13]
            && p[ihl + 13] & !(PSH | FIN) == first[ihl + 13]
            && p[ihl + 14..ihl + 16] == first[ihl + 14..ihl + 16]
            && p[ihl + 18..s.hl] == first[ihl + 18..s.hl]
    }

    /// Writes the pending segments (one plain packet, or a GSO packet of several).
    pub fn flush(&mut self, write: &mut impl FnMut(&[u8], u16, usize)) {
        if self.segs == 0 {
            return;
        }
        if self.segs > 1 {
            let b = &mut self.buf[..];
            let (hdr, pkt) = b.split_at_mut(VNET_HDR_LEN);
            let ihl = 20;
            hdr[0] = F_NEEDS_CSUM;
            hdr[1] = GSO_TCPV4;
            hdr[2..4].copy_from_slice(&(self.hl as u16).to_le_bytes());
            hdr[4..6].copy_from_slice(&(self.mss as u16).to_le_bytes());
            hdr[6..8].copy_from_slice(&(ihl as u16).to_le_bytes());
            hdr[8..10].copy_from_slice(&16u16.to_le_bytes());
            let total = pkt.len() as u16;
            pkt[2..4].copy_from_slice(&total.to_be_bytes());
            ip_checksum(pkt, ihl);
            // the pseudo-header's sum, not complemented (`__tcp_v4_send_check`,
            // `~tcp_v4_check(len, saddr, daddr, 0)`): the device sums the rest from csum_start
            let mut acc = sum(0, &pkt[12..20]);
            acc += 6 + (pkt.len() - ihl) as u32;
            pkt[ihl + 16..ihl + 18].copy_from_slice(&fold(acc).to_be_bytes());
        }
        write(&self.buf, self.segs, self.wire);
        self.segs = 0;
        self.closed = false;
    }
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

    /// A wire TCP/IPv4 segment as the simulation hands it out: DF, TTL 63, timestamps option,
    /// complete checksums (checked by the independent [`verifies`]).
    fn wire(seq: u32, id: u16, payload: usize, flags: u8) -> Vec<u8> {
        let mut b = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 63, 6, 0, 0, 10, 0, 0, 2, 10, 0, 0, 1];
        b[2..4].copy_from_slice(&((52 + payload) as u16).to_be_bytes());
        b[4..6].copy_from_slice(&id.to_be_bytes());
        b.extend_from_slice(&[0x14, 0x51, 0x9c, 0x40]); // ports 5201 -> 40000
        b.extend_from_slice(&seq.to_be_bytes());
        b.extend_from_slice(&99u32.to_be_bytes()); // ack
        b.extend_from_slice(&[0x80, flags, 0x01, 0xf5, 0, 0, 0, 0]); // doff 8, window 501
        b.extend_from_slice(&[1, 1, 8, 10, 0, 0, 0x10, 0, 0, 0, 0x20, 0]); // NOP NOP TS
        b.extend((0..payload).map(|i| (seq as usize + i) as u8));
        ip_checksum(&mut b, 20);
        tcp_checksum(&mut b, 20);
        assert!(verifies(&b[..20]) && tcp_ok(&b));
        b
    }

    /// Pushes `pkts` and flushes: the writes, with the segments each carries.
    fn coalesce(pkts: &[Vec<u8>]) -> Vec<(Vec<u8>, u16)> {
        let mut c = Coalescer::default();
        let mut out = Vec::new();
        let mut w = |b: &[u8], n: u16, wire: usize| {
            let segs = b.len() - VNET_HDR_LEN + (usize::from(n) - 1) * 52;
            assert_eq!(wire, segs, "the wire bytes of the segments");
            out.push((b.to_vec(), n));
        };
        for p in pkts {
            c.push(p, &mut w);
        }
        c.flush(&mut w);
        assert_eq!(c.pending(), 0);
        out
    }

    const ACK: u8 = 0x10;

    #[test]
    fn coalescer_writes_a_train_as_one_gso_packet_that_resegments_to_the_same_bytes() {
        let mss = 1448;
        let mut pkts: Vec<Vec<u8>> = (0..5u32).map(|i| wire(0xffff_f000u32.wrapping_add(i * 1448), 7 + i as u16, mss, ACK)).collect();
        pkts.push(wire(0xffff_f000u32.wrapping_add(5 * 1448), 12, 500, ACK | PSH));
        let w = coalesce(&pkts);
        assert_eq!(w.len(), 1, "one write");
        let (b, n) = &w[0];
        assert_eq!(*n, 6);
        // struct virtio_net_hdr (include/uapi/linux/virtio_net.h), little-endian fields
        let le = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        assert_eq!(b[0], 1, "VIRTIO_NET_HDR_F_NEEDS_CSUM");
        assert_eq!(b[1], 1, "VIRTIO_NET_HDR_GSO_TCPV4");
        assert_eq!(le(2), 52, "hdr_len: IPv4 + TCP headers");
        assert_eq!(le(4), 1448, "gso_size: the MSS");
        assert_eq!((le(6), le(8)), (20, 16), "csum_start at TCP, csum_offset of th->check");
        let pkt = &b[VNET_HDR_LEN..];
        assert_eq!(pkt.len(), 52 + 5 * 1448 + 500);
        assert_eq!(u16::from_be_bytes([pkt[2], pkt[3]]) as usize, pkt.len(), "IPv4 total length");
        assert!(verifies(&pkt[..20]), "IPv4 header checksum (RFC 1071)");
        assert_eq!(u16::from_be_bytes([pkt[4], pkt[5]]), 7, "the first segment's identification");
        assert_eq!(pkt[33], ACK | PSH, "PSH of the last segment on the train");
        // RFC 9293 §3.1: pseudo-header = source, destination, zero, PTCL, TCP length; the field
        // holds its folded sum (the partial checksum the device completes)
        let tcp_len = (pkt.len() - 20) as u64;
        let mut acc: u64 = 0;
        for i in (12..20).step_by(2) {
            acc += u64::from(pkt[i]) * 256 + u64::from(pkt[i + 1]);
        }
        acc += 6 + tcp_len;
        while acc >> 16 != 0 {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        assert_eq!(u64::from(u16::from_be_bytes([pkt[36], pkt[37]])), acc, "pseudo-header sum in th->check");
        // completing it over the segment gives a checksum that verifies
        let mut one = PLAIN_HDR.to_vec();
        one[0] = F_NEEDS_CSUM;
        one[6..8].copy_from_slice(&20u16.to_le_bytes());
        one[8..10].copy_from_slice(&16u16.to_le_bytes());
        one.extend_from_slice(pkt);
        let mut done = Vec::new();
        split(&mut one, &mut Vec::new(), |s| done = s.to_vec()).unwrap();
        assert!(tcp_ok(&done), "the partial checksum completes to a valid one");
        // the receiving side's segmentation (tcp_gso_segment) gives the segments back exactly
        let mut b = b.clone();
        let mut back = Vec::new();
        split(&mut b, &mut Vec::new(), |s| back.push(s.to_vec())).unwrap();
        assert_eq!(back, pkts);
    }

    #[test]
    fn coalescer_keeps_apart_what_must_not_merge() {
        let a = wire(1000, 1, 1448, ACK);
        let next = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = wire(2448, 2, 1448, ACK);
            f(&mut b);
            ip_checksum(&mut b, 20);
            tcp_checksum(&mut b, 20);
            b
        };
        let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
            ("another flow (port)", a.clone(), next(&|b| b[21] ^= 1)),
            ("another destination", a.clone(), next(&|b| b[19] = 9)),
            ("sequence not contiguous", a.clone(), wire(2449, 2, 1448, ACK)),
            ("identification not +1", a.clone(), wire(2448, 3, 1448, ACK)),
            ("PSH ends a train", wire(1000, 1, 1448, ACK | PSH), wire(2448, 2, 1448, ACK)),
            ("FIN ends a train", wire(1000, 1, 1448, ACK | FIN), wire(2448, 2, 1448, ACK)),
            ("RST", a.clone(), wire(2448, 2, 1448, ACK | RST)),
            ("SYN", a.clone(), wire(2448, 2, 1448, ACK | SYN)),
            ("URG", a.clone(), wire(2448, 2, 1448, ACK | URG)),
            ("CWR", a.clone(), wire(2448, 2, 1448, ACK | CWR)),
            ("ECE differs", a.clone(), wire(2448, 2, 1448, ACK | 0x40)),
            ("options differ (TSval)", a.clone(), next(&|b| b[47] = 1)),
            ("acknowledgment differs", a.clone(), next(&|b| b[31] = 100)),
            ("window differs", a.clone(), next(&|b| b[35] = 0)),
            ("ECN: CE on one", a.clone(), next(&|b| b[1] = 3)),
            ("TTL differs", a.clone(), next(&|b| b[8] = 62)),
            ("DF differs", a.clone(), next(&|b| b[6] = 0)),
            ("a fragment", a.clone(), next(&|b| b[6] = 0x20)),
            ("longer than the first", wire(1000, 1, 1000, ACK), wire(2000, 2, 1448, ACK)),
            ("a pure ACK", wire(1000, 1, 0, ACK), wire(1000, 2, 0, ACK)),
        ];
        for (why, p, q) in cases {
            let w = coalesce(&[p.clone(), q.clone()]);
            assert_eq!(w.len(), 2, "{why}: two writes");
            for ((b, n), orig) in w.iter().zip([&p, &q]) {
                assert_eq!(*n, 1, "{why}");
                assert_eq!(&b[..VNET_HDR_LEN], &PLAIN_HDR, "{why}: plain header");
                assert_eq!(&b[VNET_HDR_LEN..], &orig[..], "{why}: the packet unchanged");
            }
        }
        // nothing after a short segment: 1448, 1000, 1448 -> [1448 + 1000], [1448]
        let w = coalesce(&[wire(0, 1, 1448, ACK), wire(1448, 2, 1000, ACK), wire(2448, 3, 1448, ACK)]);
        assert_eq!(w.iter().map(|x| x.1).collect::<Vec<_>>(), vec![2, 1]);
    }

    #[test]
    fn coalescer_stays_within_an_ipv4_datagram() {
        // 52 + 45 x 1448 = 65 212 bytes fit in 65 535; a 46th segment would not
        let pkts: Vec<Vec<u8>> = (0..50u32).map(|i| wire(i * 1448, i as u16, 1448, ACK)).collect();
        let w = coalesce(&pkts);
        assert_eq!(w.iter().map(|x| x.1).collect::<Vec<_>>(), vec![45, 5]);
        let mut back = Vec::new();
        for (b, _) in w {
            let mut b = b;
            split(&mut b, &mut Vec::new(), |s| back.push(s.to_vec())).unwrap();
        }
        assert_eq!(back, pkts);
    }
}
