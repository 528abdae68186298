//! Sequence numbers modulo 2^32 (RFC 9293 §3.4) and their 64-bit unwrapping.
//!
//! On the wire a sequence number is a `u32` that wraps. Inside the endpoint every sequence number
//! is kept as a `u64` *absolute offset from the initial sequence number* (ISN = 0, the first data
//! byte = 1), so comparisons are plain integer comparisons and wrap-around happens only at the
//! edge, in [`wrap`] and [`unwrap`]. [`SeqNum`] gives the RFC's modular comparisons for code that
//! must reason about wire values directly.

/// A 32-bit TCP sequence number with modular comparisons (RFC 9293 §3.4: "comparisons ... must
/// use modulo 2^32 arithmetic"; valid while the two values are less than 2^31 apart).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeqNum(pub u32);

impl SeqNum {
    #[inline]
    pub fn plus(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(n))
    }
    /// `self - other` as a signed distance.
    #[inline]
    pub fn diff(self, other: SeqNum) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }
    #[inline]
    pub fn lt(self, o: SeqNum) -> bool {
        self.diff(o) < 0
    }
    #[inline]
    pub fn le(self, o: SeqNum) -> bool {
        self.diff(o) <= 0
    }
    #[inline]
    pub fn gt(self, o: SeqNum) -> bool {
        self.diff(o) > 0
    }
    #[inline]
    pub fn ge(self, o: SeqNum) -> bool {
        self.diff(o) >= 0
    }
}

/// The wire value of absolute offset `abs` for a stream that started at `isn`.
#[inline]
pub fn wrap(isn: u32, abs: u64) -> u32 {
    isn.wrapping_add(abs as u32)
}

/// The absolute offset (from `isn`) of wire value `wire`, choosing the one of the values
/// congruent modulo 2^32 that is nearest to `reference` (an absolute offset known to be close, e.g.
/// SND.UNA or RCV.NXT). Values that would fall before the ISN saturate to 0.
#[inline]
pub fn unwrap(isn: u32, wire: u32, reference: u64) -> u64 {
    let rel = wire.wrapping_sub(isn);
    let ref_lo = reference as u32;
    let d = rel.wrapping_sub(ref_lo) as i32 as i64;
    let v = reference as i64 + d;
    v.max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seqnum_compares_across_wrap() {
        // RFC 9293 §3.4: 2^32 - 1 < 0 < 5 in modular order.
        let a = SeqNum(u32::MAX);
        let b = a.plus(6);
        assert_eq!(b, SeqNum(5));
        assert!(a.lt(b) && b.gt(a) && a.le(a) && b.ge(b));
        assert_eq!(b.diff(a), 6);
    }

    #[test]
    fn unwrap_inverts_wrap_near_2_pow_32() {
        let isn = u32::MAX - 10;
        for abs in [0u64, 1, 10, 11, 12, 5_000_000, (1 << 32) + 7, (3 << 32) - 1] {
            let w = wrap(isn, abs);
            assert_eq!(unwrap(isn, w, abs), abs);
            assert_eq!(unwrap(isn, w, abs + 1_000_000), abs);
            assert_eq!(unwrap(isn, w, abs.saturating_sub(1_000_000)), abs);
        }
        // a value just before the ISN saturates
        assert_eq!(unwrap(isn, isn.wrapping_sub(1), 0), 0);
    }
}
