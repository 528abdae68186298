//! Trace categories. A run switches categories on individually; a model checks its category with
//! one branch (`if mask.has(TraceMask::CWND)`) before building a record, so a trace that is off
//! costs one predictable branch.

/// A bit set of enabled trace categories.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceMask(pub u32);

impl TraceMask {
    pub const NONE: TraceMask = TraceMask(0);
    /// Per-flow TCP state samples (cwnd, ssthresh, srtt, in flight, pacing rate, delivered).
    pub const TCP: TraceMask = TraceMask(1);
    /// Per-link queue length samples.
    pub const QUEUE: TraceMask = TraceMask(2);
    /// Packet capture of marked links.
    pub const PCAP: TraceMask = TraceMask(4);
    /// RTT samples of every ACK (for distributions).
    pub const RTT: TraceMask = TraceMask(8);

    #[inline]
    pub fn has(self, c: TraceMask) -> bool {
        self.0 & c.0 != 0
    }
    pub fn with(self, c: TraceMask) -> TraceMask {
        TraceMask(self.0 | c.0)
    }
}
