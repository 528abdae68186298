//! RRC connected-mode mobility on the UE side: what the UE measures, when it reports, and when
//! it declares radio link failure. These are the inputs of the X2 handover of TS 36.300
//! §10.1.2.1 (step 1–3: measurement control, measurement report, handover decision at the
//! source eNB) and of the re-establishment after a failure (TS 36.300 §10.1.6).
//!
//! - [`meas`]: RSRP and RSRQ (TS 36.214 §5.1.1, §5.1.3), layer-3 filtering (TS 36.331
//!   §5.5.3.2), events A2, A3 and A4 with hysteresis, offsets and time-to-trigger (TS 36.331
//!   §5.5.4), measurement reports, and the handover target decision.
//! - [`rlf`]: radio problem detection and radio link failure with N310 / N311 / T310
//!   (TS 36.331 §5.3.11) on in-sync / out-of-sync indications (TS 36.213 §4.2.1,
//!   TS 36.133 §7.6).
//!
//! Both are sans-IO: they take `now` and samples, push events into a caller's `Vec`, and expose
//! `next_deadline()` for their timers (time-to-trigger, T310), so the caller's event loop
//! decides when to call them. Cells are identified by `usize` indices chosen by the caller
//! (the cell indices of [`crate::layout::Layout`] or of the RAN).

pub mod meas;
pub mod rlf;
