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
//! ## How it plugs into the node stack (`celltcp-scenario`)
//!
//! The model owns its subflows' `TcpEndpoint`s; the scenario layer has one more socket kind and
//! the TCP path is unchanged:
//!
//! - `stack.rs`: `SockKind::Mptcp(Box<MptcpConnection>)`; every subflow's 4-tuple
//!   ([`MptcpConnection::subflow_addrs`]) points at the one socket; `Stack::tokens` maps a
//!   listener-side connection's [`MptcpConnection::token`] to it for MP_JOIN SYNs (RFC 8684
//!   §3.2). A flow with `mptcp = ...` connects with [`MptcpConnection::connect`] (id 0 the
//!   route's preferred source or the flow's `bind`, then the host's other interfaces; the key
//!   from the flow's seeded stream); its listener accepts an MP_CAPABLE SYN with
//!   [`MptcpConnection::accept`] (`None`: plain TCP). Each `wanted_subflows()` pair gets an
//!   ephemeral port and an ISS, then `open_subflow`.
//! - `glue.rs`: segments go to [`MptcpConnection::on_segment`] (a refused join is ignored, as a
//!   closed port is); a flush opens wanted subflows, drains [`MptcpConnection::poll_transmit`]
//!   (each [`Outgoing`] leaves from `o.local`: source rules pick the interface) and arms the
//!   socket timer at [`MptcpConnection::next_deadline`]. Apps see the connection as a byte
//!   stream (`celltcp_apps::app::ByteStream`, `SocketApi::stream`).
//! - Metrics: per subflow `subflow_sample(i)` and [`SubflowStats`] (`mptcp_subflows` table,
//!   `flows[].mptcp` in the summary); per connection [`MptcpStats`] (bytes read = goodput).
//! - Interfaces going down and up (a scenario's `[[event]]`, `world.rs`/`glue.rs`):
//!   [`MptcpConnection::remove_local_addr`] fails the address's subflows, reinjects and sends
//!   REMOVE_ADDR; [`MptcpConnection::add_local_addr`] brings it back under a new id.
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
