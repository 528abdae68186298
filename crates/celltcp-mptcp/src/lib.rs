//! # celltcp-mptcp
//!
//! Multipath TCP (RFC 8684) as a sans-IO model: a connection of ordinary `celltcp-tcp`
//! subflows. Layer tour, bottom up:
//!
//! - [`crypto`]: SHA-256 and HMAC-SHA256; key → token and IDSN (§2.1), MP_JOIN and ADD_ADDR
//!   HMACs (§3.2, §3.4.1).
//! - [`options`]: the MPTCP options with their real bytes (§3), carried by
//!   `celltcp_net::TcpOptions::mptcp`.
//! - [`coupled`]: LIA, OLIA, BALIA and uncoupled, one file each.
//! - [`scheduler`]: lowest-RTT-first, round-robin, redundant.
//! - [`path_manager`]: fullmesh, ndiffports, Linux's in-kernel manager.
//! - [`connection`]: [`MptcpConnection`], the data sequence space over the subflows.
//!
//! ## How it plugs into the node stack (to be done once nodes have several interfaces)
//!
//! The model owns its subflows' `TcpEndpoint`s, so the scenario layer needs one new socket kind
//! and no change to the TCP path:
//!
//! - `crates/celltcp-scenario/src/stack.rs`: a `SockKind::Mptcp(Box<MptcpConnection>)` in the
//!   socket arena (boxed: it is large). Its subflows' 4-tuples all go into the 4-tuple table,
//!   pointing at the same socket (`register` once per [`MptcpConnection::subflow_addrs`]), so
//!   `lookup` finds the connection for any subflow. A listener that accepts MPTCP keeps a second
//!   map, token → socket ([`MptcpConnection::token`]), for joining SYNs (RFC 8684 §3.2), whose
//!   4-tuple is new. `connect` with `mptcp = {...}` calls [`MptcpConnection::connect`] with the
//!   node's addresses (id 0 the one routing picks, then the other interfaces), a key from the
//!   socket's RNG stream and the usual ephemeral port and ISS; each `wanted_subflows()` pair gets
//!   a port from `ephemeral(TCP, local, remote)` and an ISS the same way, then `open_subflow`.
//!   The listener path: a SYN with MP_CAPABLE to a listener whose config enables MPTCP goes to
//!   [`MptcpConnection::accept`] (`None`: no MP_CAPABLE, plain TCP as today).
//! - `crates/celltcp-scenario/src/glue.rs`: `tcp_input` passes the segment with its 4-tuple to
//!   [`MptcpConnection::on_segment`] instead of `TcpEndpoint::on_segment` (a `false` return is a
//!   refused join: answer RST as for a closed port); `transmit_sock` drains
//!   [`MptcpConnection::poll_transmit`], and each [`Outgoing`] leaves from `o.local` to
//!   `o.remote` (source-address routing picks the interface); the socket timer is armed at
//!   [`MptcpConnection::next_deadline`] and fires [`MptcpConnection::on_timeout`]. Apps keep the
//!   same `SocketApi`: `write`, `read`, `close`, `readable`, `peer_closed` map one to one.
//! - Metrics (`metrics.rs::sample`): per subflow, `subflow_sample(i)` (cwnd, srtt, bytes in
//!   flight) and [`SubflowStats`]; per connection, [`MptcpStats`] (bytes read = goodput).
//! - Interface down: [`MptcpConnection::remove_local_addr`] fails its subflows and reinjects.
//!
//! The option bytes ride beside the segment ([`Outgoing::mptcp`], and the `mptcp` argument of
//! [`MptcpConnection::on_segment`]); on the network they travel in a
//! [`celltcp_net::MptcpSideTable`] keyed by packet uid while the packet carries their length
//! (`Packet::mptcp_len`: counted in its size, written by the pcap writer), so links, queues and
//! fragmentation need nothing more and plain-TCP packets stay small.

pub mod connection;
pub mod coupled;
pub mod crypto;
pub mod options;
pub mod path_manager;
pub mod scheduler;

pub use connection::{
    MptcpConfig, MptcpConnection, MptcpStats, Outgoing, Role, SockAddr, SubflowState, SubflowStats,
};
