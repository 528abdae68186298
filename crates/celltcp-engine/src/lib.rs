//! # celltcp-engine
//!
//! The deterministic core every celltcp model runs on. One run is one single-threaded
//! discrete-event simulation; nothing here reads a wall clock or a global.
//!
//! - [`time`]: [`SimTime`] and [`SimDuration`], integer nanoseconds (as ns-3's default resolution).
//! - [`queue`]: the [`EventQueue`], ordered by `(time, insertion sequence)`.
//! - [`id`]: typed handles ([`Id`]) into arenas ([`Arena`]).
//! - [`rng`]: one seeded random stream per component, derived from `(run seed, component id)`.
//! - [`trace`]: trace categories that cost one branch when off.
//! - [`units`]: durations written with their unit (`"200ms"`) and the serde helper for them.

pub mod id;
pub mod queue;
pub mod rng;
pub mod time;
pub mod trace;
pub mod units;

pub use id::{Arena, Id};
pub use queue::EventQueue;
pub use rng::{component_rng, SimRng};
pub use time::{SimDuration, SimTime};
