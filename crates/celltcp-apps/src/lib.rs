//! # celltcp-apps
//!
//! Applications as sans-IO state machines that the run loop drives:
//!
//! - [`bulk`]: a sender that keeps a TCP socket's buffer full (a file of N bytes, unlimited, or
//!   until a deadline as `iperf3 -t` does) and a sink that reads everything.
//! - [`udp`]: constant-bit-rate UDP like `iperf3 -u -b`, with the receiver's loss, reordering and
//!   RFC 3550 jitter.
//! - [`ping`]: ICMP echo at an interval with RTT samples.
//! - [`interval`]: iperf3-style interval reports.

pub mod bulk;
pub mod interval;
pub mod ping;
pub mod udp;
