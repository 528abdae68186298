//! The frames on the air: one record per MPDU or control frame the BSS transmits, and their
//! encoding as a radiotap header followed by the 802.11 frame, for a capture with link type
//! `LINKTYPE_IEEE802_11_RADIOTAP` (127).
//!
//! The BSS ([`crate::bss`]) lays out each frame exchange at its start; with the capture on
//! ([`crate::Bss::enable_air_capture`]) it also writes down what goes on the air: the RTS and
//! CTS, every MPDU of the data PPDU (with its sequence number, retry bit, and whether it was
//! received), and the ACK or block ACK. Each record is stamped with the start of its PPDU: the
//! MPDUs of one A-MPDU share the PPDU's start and the radiotap A-MPDU reference number.
//!
//! Frame formats, IEEE 802.11-2020:
//! - Frame Control (§9.2.4.1): protocol 0, type/subtype (data 0x08, QoS data 0x88, RTS 0xb4,
//!   CTS 0xc4, ACK 0xd4, BlockAck 0x94 as the first octet), To DS / From DS, Retry (bit 11).
//! - Duration (§9.2.5, §9.2.5.2 … §9.2.5.7): microseconds, a fractional value rounded up.
//!   Individually addressed data with normal ack: SIFS + the ACK (or, in an A-MPDU with an
//!   implicit block-ACK request, the BlockAck); RTS: 3·SIFS + CTS + the data PPDU + ACK/BlockAck;
//!   CTS: the RTS's value − SIFS − CTS; ACK and BlockAck that end the exchange: 0.
//! - Addresses (§9.3.2.1, Table 9-30): To DS (station → AP): A1 = BSSID, A2 = SA, A3 = DA;
//!   From DS (AP → station): A1 = DA, A2 = BSSID, A3 = SA; non-QoS data (802.11a/g) has the
//!   same three.
//! - Sequence Control (§9.2.4.4): sequence number << 4, fragment 0; counted per receiver (and
//!   TID 0 for QoS data, §10.3.2.14.2); QoS Control (§9.2.4.5): TID 0 (best effort), ack
//!   policy 0 (normal ack or implicit block-ACK request).
//! - The MSDU: LLC/SNAP `aa aa 03 00 00 00` + EtherType 0x0800 (RFC 1042), then the IP packet.
//! - ACK (§9.3.1.3), RTS (§9.3.1.2), CTS (§9.3.1.3), BlockAck (§9.3.1.8): BA Control with the
//!   compressed variant (BA type 2 in bits 1–4, TID in bits 12–15), the starting sequence
//!   control, the 8-octet bitmap (bit i: the MPDU with sequence number SSN + i received).
//! - FCS (§9.2.4.8): the IEEE CRC-32 of the frame, least significant octet first.
//!
//! Radiotap (radiotap.org): version 0, the header length, one `it_present` word, then the
//! fields in bit order, each aligned to its own size from the start of the header: TSFT (bit
//! 0, u64 µs: the PPDU's start), Flags (1: 0x10 FCS at end, 0x40 bad FCS), Rate (2, 500 kbit/s
//! units; non-HT only), Channel (3: MHz and flags 0x0040 OFDM, 0x0080 2 GHz, 0x0100 5 GHz),
//! dBm antenna signal and noise (5, 6), MCS (19; HT), A-MPDU status (20: reference, flags 0x04
//! last-known / 0x08 last), VHT (21).
//!
//! MPDUs lost to frame errors or collisions are in the capture with a wrong FCS and the
//! radiotap "bad FCS" flag (what a monitor-mode receiver beside the intended one reports with
//! `fcsfail`), so a capture shows every transmission attempt.
//!
//! MAC addresses are derived from the BSS's name and the node's index ([`mac_address`]):
//! locally administered unicast `02:h0:h1:h2:00:k`, `h` the first three octets of the FNV-1a
//! hash of the BSS's name, `k` 0 for the AP (also the BSSID) and 1 + i for station i.

use celltcp_engine::{SimDuration, SimTime};

use crate::bss::Node;
use crate::phy::{Band, PhyClass, TxVector};

/// `LINKTYPE_IEEE802_11_RADIOTAP`.
pub const LINKTYPE_IEEE802_11_RADIOTAP: u32 = 127;

/// LLC/SNAP header of an IPv4 MSDU (RFC 1042).
pub const LLC_SNAP_IPV4: [u8; 8] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];

/// A MAC address.
pub type MacAddr = [u8; 6];

/// The MAC address of `node` in the BSS named `bss`.
pub fn mac_address(bss: &str, node: Node) -> MacAddr {
    let mut h: u32 = 0x811c_9dc5;
    for b in bss.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    let k: u16 = match node {
        Node::Ap => 0,
        Node::Sta(i) => i + 1,
    };
    let h = h.to_be_bytes();
    let k = k.to_be_bytes();
    [0x02, h[0], h[1], h[2], k[0], k[1]]
}

/// IEEE 802.3 CRC-32 (reflected polynomial 0xEDB88320), as the 802.11 FCS.
pub fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            }
            *e = c;
        }
        t
    });
    !data.iter().fold(!0u32, |c, &b| t[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8))
}

/// A Duration value: `d` in microseconds, rounded up (§9.2.5.1), at most 32,767.
pub fn duration_us(d: SimDuration) -> u16 {
    d.as_nanos().div_ceil(1000).min(32_767) as u16
}

/// What a frame is.
#[derive(Clone, Debug, PartialEq)]
pub enum FrameKind<P> {
    /// A data MPDU carrying one MSDU (`msdu_bytes` octets: the IP packet `pkt`).
    Data {
        to_ds: bool,
        qos: bool,
        addr: [MacAddr; 3],
        seq: u16,
        retry: bool,
        pkt: P,
        msdu_bytes: u32,
    },
    Rts {
        ra: MacAddr,
        ta: MacAddr,
    },
    Cts {
        ra: MacAddr,
    },
    Ack {
        ra: MacAddr,
    },
    /// Compressed BlockAck, TID 0.
    BlockAck {
        ra: MacAddr,
        ta: MacAddr,
        ssn: u16,
        bitmap: u64,
    },
}

/// A-MPDU membership of an MPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmpduStatus {
    pub reference: u32,
    pub last: bool,
}

/// One frame on the air.
#[derive(Clone, Debug, PartialEq)]
pub struct AirFrame<P> {
    /// Start of the PPDU that carries it.
    pub at: SimTime,
    pub txv: TxVector,
    /// In an A-MPDU (every VHT data PPDU, and HT ones with aggregation).
    pub ampdu: Option<AmpduStatus>,
    /// Received with a good FCS (false: lost to a frame error or a collision).
    pub fcs_ok: bool,
    pub duration_us: u16,
    /// Received power and noise at the receiver, dBm.
    pub signal_dbm: i8,
    pub noise_dbm: i8,
    pub kind: FrameKind<P>,
}

/// The channel of a BSS as radiotap names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadioChannel {
    pub freq_mhz: u16,
    pub flags: u16,
}

impl RadioChannel {
    /// Channel 1 (2,412 MHz) or 36 (5,180 MHz), OFDM: the carriers [`crate::channel`] assumes.
    pub fn of(band: Band) -> RadioChannel {
        match band {
            Band::Ghz2_4 => RadioChannel { freq_mhz: 2412, flags: 0x0040 | 0x0080 },
            Band::Ghz5 => RadioChannel { freq_mhz: 5180, flags: 0x0040 | 0x0100 },
        }
    }
}

/// The frames a BSS put on the air since the last drain.
pub struct AirLog<P> {
    pub(crate) copy: fn(&P) -> P,
    pub(crate) frames: Vec<AirFrame<P>>,
    pub(crate) next_ampdu: u32,
    pub channel: RadioChannel,
    pub bss_name: String,
}

impl<P> AirLog<P> {
    pub(crate) fn new(copy: fn(&P) -> P, band: Band, bss_name: &str) -> AirLog<P> {
        AirLog { copy, frames: Vec::new(), next_ampdu: 0, channel: RadioChannel::of(band), bss_name: bss_name.to_string() }
    }

    /// The frames recorded so far, in the order they went on the air (start times never go
    /// back).
    pub fn drain(&mut self) -> std::vec::Drain<'_, AirFrame<P>> {
        self.frames.drain(..)
    }
}

/// Rate index 0–7 of non-HT OFDM in 500 kbit/s units.
const OFDM_RATE_500K: [u8; 8] = [12, 18, 24, 36, 48, 72, 96, 108];

fn align(out: &mut Vec<u8>, start: usize, to: usize) {
    while !(out.len() - start).is_multiple_of(to) {
        out.push(0);
    }
}

impl<P> AirFrame<P> {
    /// Appends the radiotap header for this frame (the 802.11 frame follows it with its FCS).
    pub fn encode_radiotap(&self, ch: RadioChannel, out: &mut Vec<u8>) {
        let start = out.len();
        let v = &self.txv;
        let mut present: u32 = 1 << 0 | 1 << 1 | 1 << 3 | 1 << 5 | 1 << 6;
        match v.class {
            PhyClass::Ofdm => present |= 1 << 2,
            PhyClass::Ht => present |= 1 << 19,
            PhyClass::Vht => present |= 1 << 21,
        }
        if self.ampdu.is_some() {
            present |= 1 << 20;
        }
        out.extend_from_slice(&[0, 0, 0, 0]); // version, pad, length (below)
        out.extend_from_slice(&present.to_le_bytes());
        align(out, start, 8);
        out.extend_from_slice(&(self.at.as_nanos() / 1000).to_le_bytes()); // TSFT
        out.push(0x10 | if self.fcs_ok { 0 } else { 0x40 }); // Flags: FCS at end, bad FCS
        if v.class == PhyClass::Ofdm {
            out.push(OFDM_RATE_500K[v.mcs as usize]);
        }
        align(out, start, 2);
        out.extend_from_slice(&ch.freq_mhz.to_le_bytes());
        out.extend_from_slice(&ch.flags.to_le_bytes());
        out.push(self.signal_dbm as u8);
        out.push(self.noise_dbm as u8);
        if v.class == PhyClass::Ht {
            // known: bandwidth, MCS index, guard interval, HT format, FEC type
            out.push(0x1f);
            out.push(u8::from(v.width_mhz == 40) | u8::from(v.short_gi) << 2);
            out.push(v.mcs + 8 * (v.nss - 1));
        }
        if let Some(a) = self.ampdu {
            align(out, start, 4);
            out.extend_from_slice(&a.reference.to_le_bytes());
            let flags: u16 = 0x0004 | if a.last { 0x0008 } else { 0 };
            out.extend_from_slice(&flags.to_le_bytes());
            out.extend_from_slice(&[0, 0]); // delimiter CRC, reserved
        }
        if v.class == PhyClass::Vht {
            align(out, start, 2);
            // known: guard interval, bandwidth
            out.extend_from_slice(&(0x0004u16 | 0x0040).to_le_bytes());
            out.push(u8::from(v.short_gi) << 2);
            out.push(match v.width_mhz {
                40 => 1,
                80 => 4,
                160 => 11,
                _ => 0,
            });
            out.extend_from_slice(&[v.mcs << 4 | v.nss, 0, 0, 0]);
            out.extend_from_slice(&[0, 0, 0, 0]); // coding (BCC), group id, partial AID
        }
        let len = (out.len() - start) as u16;
        out[start + 2..start + 4].copy_from_slice(&len.to_le_bytes());
    }

    /// Appends the 802.11 frame with its FCS; `msdu` appends the IP packet of a data frame.
    /// Returns the frame's length.
    pub fn encode_mac(&self, msdu: &mut impl FnMut(&P, &mut Vec<u8>), out: &mut Vec<u8>) -> usize {
        let start = out.len();
        let dur = self.duration_us.to_le_bytes();
        match &self.kind {
            FrameKind::Data { to_ds, qos, addr, seq, retry, pkt, .. } => {
                let fc1 = if *to_ds { 0x01 } else { 0x02 } | if *retry { 0x08 } else { 0 };
                out.extend_from_slice(&[if *qos { 0x88 } else { 0x08 }, fc1]);
                out.extend_from_slice(&dur);
                for a in addr {
                    out.extend_from_slice(a);
                }
                out.extend_from_slice(&((seq & 0x0fff) << 4).to_le_bytes());
                if *qos {
                    out.extend_from_slice(&[0, 0]); // TID 0, normal ack / implicit BAR
                }
                out.extend_from_slice(&LLC_SNAP_IPV4);
                msdu(pkt, out);
            }
            FrameKind::Rts { ra, ta } => {
                out.extend_from_slice(&[0xb4, 0]);
                out.extend_from_slice(&dur);
                out.extend_from_slice(ra);
                out.extend_from_slice(ta);
            }
            FrameKind::Cts { ra } | FrameKind::Ack { ra } => {
                out.extend_from_slice(&[if matches!(self.kind, FrameKind::Cts { .. }) { 0xc4 } else { 0xd4 }, 0]);
                out.extend_from_slice(&dur);
                out.extend_from_slice(ra);
            }
            FrameKind::BlockAck { ra, ta, ssn, bitmap } => {
                out.extend_from_slice(&[0x94, 0]);
                out.extend_from_slice(&dur);
                out.extend_from_slice(ra);
                out.extend_from_slice(ta);
                out.extend_from_slice(&0x0004u16.to_le_bytes()); // compressed, TID 0
                out.extend_from_slice(&((ssn & 0x0fff) << 4).to_le_bytes());
                out.extend_from_slice(&bitmap.to_le_bytes());
            }
        }
        let fcs = crc32(&out[start..]);
        out.extend_from_slice(&(if self.fcs_ok { fcs } else { !fcs }).to_le_bytes());
        out.len() - start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: FrameKind<u32>, txv: TxVector) -> AirFrame<u32> {
        AirFrame { at: SimTime::from_micros(1_000_003), txv, ampdu: None, fcs_ok: true, duration_us: 0, signal_dbm: -60, noise_dbm: -94, kind }
    }

    #[test]
    fn crc32_check_value() {
        // the CRC-32/ISO-HDLC check value (the catalogue's "123456789")
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn mac_addresses_are_local_unicast_and_distinct() {
        let ap = mac_address("home", Node::Ap);
        assert_eq!(ap[0], 0x02);
        assert_eq!(&ap[4..], &[0, 0]);
        assert_eq!(&mac_address("home", Node::Sta(0))[..4], &ap[..4]);
        assert_eq!(&mac_address("home", Node::Sta(299))[4..], &[1, 44]);
        assert_ne!(mac_address("home", Node::Ap), mac_address("office", Node::Ap));
        // FNV-1a("a") = 0xe40c292c
        assert_eq!(mac_address("a", Node::Sta(0)), [0x02, 0xe4, 0x0c, 0x29, 0, 1]);
    }

    #[test]
    fn duration_rounds_up() {
        assert_eq!(duration_us(SimDuration::from_nanos(44_000)), 44);
        assert_eq!(duration_us(SimDuration::from_nanos(44_001)), 45);
    }

    #[test]
    fn ack_frame_bytes() {
        let ra = [2, 1, 2, 3, 0, 1];
        let mut f = frame(FrameKind::Ack { ra }, TxVector::ofdm(4));
        let mut out = vec![];
        let n = f.encode_mac(&mut |_, _| unreachable!(), &mut out);
        let body = [0xd4, 0x00, 0x00, 0x00, 2, 1, 2, 3, 0, 1];
        assert_eq!(n, 14);
        assert_eq!(&out[..10], &body);
        assert_eq!(&out[10..], &crc32(&body).to_le_bytes());
        // a bad FCS is the complement
        f.fcs_ok = false;
        out.clear();
        f.encode_mac(&mut |_, _| {}, &mut out);
        assert_eq!(&out[10..], &(!crc32(&body)).to_le_bytes());
    }

    #[test]
    fn qos_data_frame_bytes() {
        let (bssid, sta, da) = ([2, 9, 9, 9, 0, 0], [2, 9, 9, 9, 0, 1], [2, 9, 9, 9, 0, 0]);
        let mut f = frame(
            FrameKind::Data { to_ds: true, qos: true, addr: [bssid, sta, da], seq: 4097, retry: true, pkt: 0xdead_beef, msdu_bytes: 4 },
            TxVector { class: PhyClass::Ht, mcs: 7, width_mhz: 20, nss: 1, short_gi: false },
        );
        f.duration_us = 44;
        let mut out = vec![];
        let n = f.encode_mac(&mut |p: &u32, o: &mut Vec<u8>| o.extend_from_slice(&p.to_be_bytes()), &mut out);
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            0x88, 0x09,             // QoS data; To DS, Retry
            44, 0,                  // Duration
            2, 9, 9, 9, 0, 0,       // A1 BSSID
            2, 9, 9, 9, 0, 1,       // A2 SA
            2, 9, 9, 9, 0, 0,       // A3 DA
            0x10, 0x00,             // sequence 4097 mod 4096 = 1, fragment 0
            0x00, 0x00,             // QoS control: TID 0
            0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00, // LLC/SNAP, IPv4
            0xde, 0xad, 0xbe, 0xef, // the "packet"
        ];
        assert_eq!(&out[..want.len()], &want[..]);
        assert_eq!(n, want.len() + 4);
        // the model's MPDU length: MSDU + LLC/SNAP + 26-octet QoS header + FCS
        assert_eq!(n as u32, crate::ampdu::mpdu_bytes(4, true));
    }

    #[test]
    fn rts_cts_block_ack_bytes() {
        let (a, b) = ([2, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 1]);
        let v = TxVector::ofdm(4);
        let mut out = vec![];
        let mut rts = frame(FrameKind::Rts { ra: a, ta: b }, v);
        rts.duration_us = 0x0123;
        assert_eq!(rts.encode_mac(&mut |_, _| {}, &mut out), crate::dcf::RTS_BYTES as usize);
        assert_eq!(&out[..16], &[0xb4, 0, 0x23, 0x01, 2, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1]);
        out.clear();
        assert_eq!(frame(FrameKind::Cts { ra: b }, v).encode_mac(&mut |_, _| {}, &mut out), crate::dcf::CTS_BYTES as usize);
        assert_eq!(&out[..4], &[0xc4, 0, 0, 0]);
        out.clear();
        let ba = frame(FrameKind::BlockAck { ra: b, ta: a, ssn: 4095, bitmap: 0x8000_0000_0000_0005 }, v);
        assert_eq!(ba.encode_mac(&mut |_, _| {}, &mut out), crate::dcf::BLOCK_ACK_BYTES as usize);
        #[rustfmt::skip]
        let want = [
            0x94, 0, 0, 0, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0,
            0x04, 0x00,             // BA control: compressed (type 2 in bits 1-4), TID 0
            0xf0, 0xff,             // SSC: SSN 4095 << 4
            0x05, 0, 0, 0, 0, 0, 0, 0x80, // bitmap, bit 0 first
        ];
        assert_eq!(&out[..28], &want);
    }

    #[test]
    fn radiotap_ofdm_header_bytes() {
        let f = frame(FrameKind::Ack { ra: [0; 6] }, TxVector::ofdm(4));
        let mut out = vec![];
        f.encode_radiotap(RadioChannel::of(Band::Ghz2_4), &mut out);
        #[rustfmt::skip]
        let want = [
            0, 0, 24, 0,                    // version, pad, length 24
            0x6f, 0, 0, 0,                  // TSFT, flags, rate, channel, signal, noise
            0x43, 0x42, 0x0f, 0, 0, 0, 0, 0, // TSFT 1,000,003 µs
            0x10,                           // flags: FCS at end
            48,                             // 24 Mbit/s
            0x6c, 0x09, 0xc0, 0x00,         // 2412 MHz, 2 GHz + OFDM
            (-60i8) as u8, (-94i8) as u8,
        ];
        assert_eq!(out, want);
    }

    #[test]
    fn radiotap_ht_in_ampdu_and_vht_header_bytes() {
        let mut f = frame(FrameKind::Ack { ra: [0; 6] }, TxVector { class: PhyClass::Ht, mcs: 3, width_mhz: 40, nss: 2, short_gi: true });
        f.ampdu = Some(AmpduStatus { reference: 7, last: true });
        f.fcs_ok = false;
        let mut out = vec![];
        f.encode_radiotap(RadioChannel::of(Band::Ghz5), &mut out);
        #[rustfmt::skip]
        let want = [
            0, 0, 36, 0,
            0x6b, 0, 0x18, 0,               // TSFT, flags, channel, signal, noise, MCS, A-MPDU
            0x43, 0x42, 0x0f, 0, 0, 0, 0, 0,
            0x50,                           // FCS at end, bad FCS
            0,                              // padding to the channel's 2-octet alignment
            0x3c, 0x14, 0x40, 0x01,         // 5180 MHz, 5 GHz + OFDM
            (-60i8) as u8, (-94i8) as u8,
            0x1f, 0x05, 11,                 // MCS known, 40 MHz + short GI, MCS 3 x 2 streams
            0,                              // padding to 4
            7, 0, 0, 0, 0x0c, 0, 0, 0,      // reference 7, last known + last
        ];
        assert_eq!(out, want);
        let f = frame(FrameKind::Ack { ra: [0; 6] }, TxVector { class: PhyClass::Vht, mcs: 9, width_mhz: 80, nss: 1, short_gi: false });
        out.clear();
        f.encode_radiotap(RadioChannel::of(Band::Ghz5), &mut out);
        assert_eq!(&out[4..8], &[0x6b, 0, 0x20, 0]);
        // the VHT field after the noise octet (23) at 24: known, flags, bandwidth, mcs_nss[0..2]
        assert_eq!(&out[24..30], &[0x44, 0, 0, 4, 0x91, 0]);
        assert_eq!(out.len(), 36);
    }
}
