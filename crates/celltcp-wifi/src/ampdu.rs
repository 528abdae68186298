//! Frame sizes, A-MPDU aggregation and the block-ACK recipient's reordering buffer.
//!
//! - An MSDU (an IP packet) travels in an MPDU with an LLC/SNAP header (8 octets, IEEE 802.2),
//!   the MAC header (24 octets for a non-QoS data frame, 26 with the QoS Control field,
//!   §9.3.2.1) and the 4-octet FCS.
//! - An A-MPDU (§10.13) is a run of subframes, each a 4-octet MPDU delimiter followed by the
//!   MPDU, padded to a multiple of 4 octets except the last. Its length is bounded by the
//!   recipient's maximum A-MPDU length (HT 65,535 octets, §9.4.2.56.3; VHT 1,048,575,
//!   §9.4.2.158.2), the PPDU by aPPDUMaxTime = 5.484 ms (Table 19-25, Table 21-28), and the
//!   MPDUs by the block-ACK window (64 sequence numbers from the oldest unacknowledged one,
//!   §10.24.7 WinSizeO). A VHT PPDU always carries an A-MPDU, a single MPDU included (§10.13.1).
//! - Every MPDU has its own FCS, so each one fails or survives on its own; the recipient
//!   answers with a compressed block ACK whose bitmap names the survivors (§10.24.7), and the
//!   originator retransmits only the others, in front of new MPDUs.
//! - The recipient passes MSDUs up in sequence order (§10.24.7.6): an MPDU after a gap waits in
//!   [`Reorder`] until the gap is filled or the originator gives the missing one up (it then
//!   moves the window on with a block ACK request; here the drop is known to the model at once).

use std::collections::BTreeMap;

use celltcp_engine::SimDuration;

/// LLC/SNAP header in front of the IP packet.
pub const LLC_SNAP_BYTES: u32 = 8;
/// MPDU delimiter of an A-MPDU subframe.
pub const DELIMITER_BYTES: u32 = 4;
/// aPPDUMaxTime (HT and VHT).
pub const PPDU_MAX_TIME: SimDuration = SimDuration::from_micros(5_484);
/// Block-ACK window size (WinSizeO) with a 64-bit compressed bitmap.
pub const BA_WINDOW: usize = 64;

/// MPDU length of an MSDU of `msdu_bytes`.
pub fn mpdu_bytes(msdu_bytes: u32, qos: bool) -> u32 {
    msdu_bytes + LLC_SNAP_BYTES + if qos { 26 } else { 24 } + 4
}

/// Length of an A-MPDU subframe carrying an MPDU of `mpdu` octets, padded (not last).
pub fn subframe_bytes(mpdu: u32) -> u32 {
    (DELIMITER_BYTES + mpdu).next_multiple_of(4)
}

/// Incremental A-MPDU length: add MPDUs one at a time and read the length with the last
/// subframe unpadded.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmpduLen {
    /// Padded subframes before the last one.
    prefix: u32,
    last: u32,
    pub n: u32,
}

impl AmpduLen {
    /// The length if `mpdu` were added.
    pub fn with(&self, mpdu: u32) -> u32 {
        let before = if self.n > 0 { self.prefix + subframe_bytes(self.last) } else { 0 };
        before + DELIMITER_BYTES + mpdu
    }
    pub fn push(&mut self, mpdu: u32) {
        if self.n > 0 {
            self.prefix += subframe_bytes(self.last);
        }
        self.last = mpdu;
        self.n += 1;
    }
    pub fn bytes(&self) -> u32 {
        if self.n == 0 {
            0
        } else {
            self.prefix + DELIMITER_BYTES + self.last
        }
    }
}

/// The recipient side of one link: in-order release of MSDUs.
#[derive(Clone, Debug)]
pub struct Reorder<T> {
    next: u64,
    held: BTreeMap<u64, Option<T>>,
}

impl<T> Default for Reorder<T> {
    fn default() -> Self {
        Reorder { next: 0, held: BTreeMap::new() }
    }
}

impl<T> Reorder<T> {
    /// MPDU `seq` arrived: releases it and whatever it unblocks, in order, into `out`.
    pub fn receive(&mut self, seq: u64, item: T, out: &mut impl FnMut(T)) {
        if seq < self.next {
            return; // duplicate
        }
        self.held.insert(seq, Some(item));
        self.release(out);
    }

    /// The originator gave MPDU `seq` up: the window moves past it.
    pub fn skip(&mut self, seq: u64, out: &mut impl FnMut(T)) {
        if seq < self.next {
            return;
        }
        self.held.insert(seq, None);
        self.release(out);
    }

    fn release(&mut self, out: &mut impl FnMut(T)) {
        while let Some(e) = self.held.first_entry() {
            if *e.key() != self.next {
                break;
            }
            if let Some(item) = e.remove() {
                out(item);
            }
            self.next += 1;
        }
    }

    /// MPDUs waiting for a gap to fill.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ampdu_length_pads_all_but_the_last() {
        let mut a = AmpduLen::default();
        a.push(1538); // 4 + 1538 = 1542 → padded 1544 once another follows
        assert_eq!(a.bytes(), 1542);
        assert_eq!(a.with(100), 1544 + 104);
        a.push(100);
        assert_eq!(a.bytes(), 1544 + 104);
        a.push(101);
        assert_eq!(a.bytes(), 1544 + 104 + 105);
        assert_eq!(a.n, 3);
        assert_eq!(mpdu_bytes(1500, true), 1538);
        assert_eq!(mpdu_bytes(1500, false), 1536);
    }

    #[test]
    fn reorder_releases_in_order_and_skips_given_up_mpdus() {
        let mut r = Reorder::default();
        let mut got = Vec::new();
        r.receive(1, 'b', &mut |x| got.push(x));
        r.receive(2, 'c', &mut |x| got.push(x));
        assert!(got.is_empty());
        assert_eq!(r.held(), 2);
        r.receive(0, 'a', &mut |x| got.push(x));
        assert_eq!(got, vec!['a', 'b', 'c']);
        r.receive(4, 'e', &mut |x| got.push(x));
        r.skip(3, &mut |x| got.push(x));
        assert_eq!(got, vec!['a', 'b', 'c', 'e']);
        r.receive(4, 'x', &mut |x| got.push(x)); // duplicate
        assert_eq!(got.len(), 4);
        assert_eq!(r.held(), 0);
    }
}
