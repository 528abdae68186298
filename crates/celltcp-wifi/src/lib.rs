//! IEEE 802.11a/g/n/ac infrastructure BSS, sans-IO, event-driven.
//!
//! Layer tour, bottom up:
//! - [`phy`]: OFDM (clause 17), ERP-OFDM (clause 18), HT (clause 19) and VHT (clause 21) rates
//!   and PPDU durations (TXTIME), and each PHY's MAC timing characteristics.
//! - [`error`]: frame error rate from SNR per MCS (the NIST model ns-3 uses).
//! - [`channel`]: path loss (free space, log-distance, ITU-R P.1238 indoor) and the SNR of a
//!   link, or a fixed SNR.
//! - [`hears`]: who senses whom (the CCA threshold over the path loss between positions, or
//!   pairs declared hidden).
//! - [`dcf`]: DCF/EDCA best-effort contention: AIFS, EIFS, AckTimeout, binary exponential
//!   backoff counted in closed form over idle slots.
//! - [`air`]: the frames on the air (RTS, CTS, data MPDUs, ACK, block ACK) as radiotap +
//!   802.11 records, for a capture Wireshark reads.
//! - [`ampdu`]: MPDU and A-MPDU framing and limits, block-ACK reordering at the recipient.
//! - [`rate`]: rate control behind a small trait: constant, ideal, Minstrel-HT.
//! - [`bss`]: the coordinator, [`Bss`]: one AP, N stations, queues, collisions, ACK / block
//!   ACK, retries, RTS/CTS and NAV; with hidden nodes, carrier sense per node and a per-PPDU
//!   path (`bss/hidden.rs`).
//! - [`medium`]: several BSSs on one channel, one contention domain ([`Medium`]).
//! - [`stats`]: per-station and per-BSS counters (goodput, retries, collisions, aggregation,
//!   queue delay, channel busy time, airtime).
//!
//! Like the LTE model, [`Bss`] is generic over the packet type `P`, takes `now` in every method
//! and never reads a clock: `enqueue` packets, ask `next_deadline`, call `on_timer` then, and
//! collect [`WifiOutput`]s. Randomness (backoff draws, frame errors, Minstrel's sample table)
//! comes from per-node and per-link streams of `celltcp_engine::rng`.

pub mod air;
pub mod ampdu;
pub mod bss;
pub mod channel;
pub mod dcf;
pub mod error;
pub mod hears;
pub mod medium;
pub mod phy;
pub mod rate;
pub mod stats;

pub use bss::{Bss, BssConfig, Node, StaId, WifiOutput, DEFAULT_QUEUE_LIMIT};
pub use channel::{Channel, PathLoss};
pub use hears::Hears;
pub use medium::Medium;
pub use phy::{Band, Standard, TxVector};
pub use rate::RateKind;
pub use stats::{BssStats, LinkStats, StaStats};
