//! # celltcp-net
//!
//! The wired network every scenario is built from, as sans-IO pieces that the run loop drives:
//!
//! - [`packet`]: IPv4 packets with TCP/UDP/ICMP bodies and their real header sizes.
//! - [`frag`]: IPv4 fragmentation and reassembly (RFC 791).
//! - [`queue`]: drop-tail, RED (Floyd & Jacobson 1993) and CoDel (RFC 8289) queues.
//! - [`loss`]: Bernoulli and Gilbert–Elliott loss models.
//! - [`link`]: point-to-point links with rate, propagation delay and MTU.
//! - [`trace_link`]: trace-driven links in the Mahimahi format.
//! - [`pcap`]: libpcap files with real IPv4/TCP/UDP headers.
//! - [`gtpu`]: GTPv1-U encapsulation (TS 29.281) of S1-U and X2-U, as pcap writes it.
//! - [`raw`]: real IPv4 packets (emulation): parsing, a bounded byte store, the wire bytes.
//! - [`routing`]: static shortest-path routing over a small graph of hosts and routers.
//! - [`policy`]: a node's own longest-prefix tables and source-address rules (Linux `ip rule`).

// A `Packet` is plain `Copy` data of about 150 bytes since TCP options carry an MPTCP option
// (`packet::MptcpOption`); queues hand a dropped packet back by value on purpose.
#![allow(clippy::result_large_err)]

pub mod fib;
pub mod frag;
pub mod gtpu;
pub mod link;
pub mod loss;
pub mod packet;
pub mod pcap;
pub mod policy;
pub mod queue;
pub mod raw;
pub mod raw_frag;
pub mod routing;
pub mod trace_link;

pub use frag::{fragment, FragError, Reassembler, ReassemblyConfig, ReassemblyStats};
pub use link::{AnyLink, Delivery, Link, LinkConfig, LinkStats};
pub use loss::{LossConfig, LossModel};
pub use packet::*;
pub use pcap::{PcapWriter, Snaplen};
pub use queue::{AnyQueue, CoDelConfig, Dequeued, QueueConfig, QueueLimit, QueueStats, RedConfig};
pub use routing::Routes;
pub use trace_link::{parse_mahimahi, TraceLink, TraceLinkConfig, TraceStats};
