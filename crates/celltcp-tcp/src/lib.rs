//! # celltcp-tcp
//!
//! A sans-IO TCP endpoint and its congestion controls.
//!
//! - [`cc`]: the [`cc::Controller`] trait and one file per algorithm (NewReno, CUBIC, BBR).

pub mod cc;
