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

pub use connection::{
    MptcpConfig, MptcpConnection, MptcpStats, Outgoing, Role, SockAddr, SubflowState, SubflowStats,
};
pub mod connection;
pub mod coupled;
pub mod crypto;
pub mod options;
pub mod path_manager;
pub mod scheduler;
