//! # celltcp-tcp
//!
//! A sans-IO TCP endpoint and its congestion controls. Layer tour, bottom up:
//!
//! - [`seq`]: 32-bit sequence numbers with wrap-around (RFC 9293 §3.4) and their unwrapping into
//!   the 64-bit absolute offsets used everywhere inside.
//! - [`rtt`]: SRTT / RTTVAR / RTO with backoff, as Linux computes them or as RFC 6298 does.
//! - [`config`]: [`TcpConfig`], plain serde data with Linux-like defaults.
//! - [`scoreboard`]: the retransmission queue and SACK scoreboard (RFC 6675 §4: IsLost, pipe).
//! - [`receiver`]: reassembly, SACK blocks (RFC 2018), delayed ACKs (RFC 5681 §4.2), the
//!   advertised window (RFC 9293 §3.8.6.2) and receive-buffer autotuning.
//! - [`rack`], [`prr`]: RACK-TLP (RFC 8985) and PRR (RFC 6937) state as Linux keeps it.
//! - [`pacing`]: the send quantum of a paced sender, Linux's TSO autosizing (`tcp_tso_autosize`).
//! - [`endpoint`]: [`TcpEndpoint`], the connection state machine (RFC 9293), the sender, loss
//!   recovery (Linux's RACK-TLP + PRR by default, RFC 6675 / RFC 6582 selectable), timers,
//!   delivery-rate samples and pacing.
//! - [`cc`]: the [`cc::Controller`] trait and one file per algorithm (NewReno, CUBIC, BBR).
//!
//! Driving an endpoint: after any input (`on_segment`, `on_timeout`, `write`, `read`, `close`)
//! call `poll_transmit(now)` until it returns `None`, then re-arm a timer at `next_deadline()`.

pub mod cc;
pub mod config;
pub mod endpoint;
pub mod pacing;
pub mod prr;
pub mod rack;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod seq;

pub use config::{BufSize, Recovery, RtoEstimator, TcpConfig};
pub use pacing::PacingQuantum;
pub use endpoint::{CaState, Negotiated, TcpEndpoint, TcpSample, TcpState, TcpStats};
