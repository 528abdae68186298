//! Radio problem detection and radio link failure (TS 36.331 §5.3.11).
//!
//! The physical layer assesses the downlink radio link quality once per radio frame (10 ms)
//! and indicates out-of-sync when it is worse than `Qout`, in-sync when it is better than `Qin`
//! (TS 36.213 §4.2.1), the quality being evaluated over the last 200 ms for `Qout` and the last
//! 100 ms for `Qin` (TS 36.133 §7.6.2.1, no DRX). RRC then (TS 36.331 §5.3.11.1–3):
//! - starts T310 on `N310` consecutive out-of-sync indications ("physical layer problem");
//! - stops it on `N311` consecutive in-sync indications while it runs ("recovery");
//! - declares radio link failure when T310 expires.
//!
//! TS 36.133 §7.6.1 defines `Qout` and `Qin` as the levels at which a hypothetical PDCCH would
//! have 10 % and 2 % block error rate; as wideband SINR they are commonly taken as about −8 dB
//! and −6 dB, the defaults here ([`RlfConfig`]). Defaults of the counters and timer are the
//! TS 36.331 §9.2.5 default values T310 = 1000 ms, N310 = 1, N311 = 1 (ns-3 uses N310 = 6,
//! N311 = 2); the values accepted are those of the `RLF-TimersAndConstants` IEs.
//!
//! Model details (stated, not hidden):
//! - the caller feeds wideband SINR samples of the serving cell at any rate
//!   ([`RlfDetector::on_sinr_sample`]); sample `t` belongs to radio frame `⌊t / 10 ms⌋`, and the
//!   indication of frame `f` is issued at its end, `(f + 1) · 10 ms`;
//! - the link quality of a window is the mean SINR in dB of the samples in its frames; a window
//!   that holds fewer frames than its length (right after start or [`RlfDetector::reset`]) uses
//!   the frames it has, and a frame boundary whose windows hold no sample gives no indication;
//! - when both hold (the 100 ms mean above `Qin` while the 200 ms mean is below `Qout`, after a
//!   sharp improvement) the more recent evaluation wins: in-sync;
//! - a frame with neither indication does not break a run of consecutive indications; the
//!   opposite indication does;
//! - a T310 expiry and an indication at the same instant: the expiry comes first;
//! - after a failure the detector stays silent until [`RlfDetector::reset`] (re-establishment
//!   or handover, which also stop T310: TS 36.331 §5.3.5.4, §5.3.7.2).
//!
//! API:
//! ```text
//! let mut d = RlfDetector::new(RlfConfig::default())?;
//! d.on_sinr_sample(now, sinr_db, &mut events);      // events: PhyProblem / Recovered / Failure, each with its instant
//! d.poll(now, &mut events); d.next_deadline();       // without samples: frame ends and T310 expiry
//! d.reset();                                         // after handover or re-establishment
//! ```

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimTime};

/// Radio frame: the indication period (TS 36.213 §4.2.1).
pub const FRAME: SimDuration = SimDuration::from_millis(10);

/// Values of T310 (ms) in `RLF-TimersAndConstants`.
pub const T310_MS: [u32; 7] = [0, 50, 100, 200, 500, 1000, 2000];
/// Values of N310.
pub const N310_VALUES: [u32; 8] = [1, 2, 3, 4, 6, 8, 10, 20];
/// Values of N311.
pub const N311_VALUES: [u32; 8] = [1, 2, 3, 4, 5, 6, 8, 10];

/// Thresholds, counters and timers.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RlfConfig {
    /// Out-of-sync threshold, wideband SINR dB. Default −8.
    pub qout_db: f64,
    /// In-sync threshold, wideband SINR dB (≥ `qout_db`). Default −6.
    pub qin_db: f64,
    /// One of [`T310_MS`]. Default 1000.
    pub t310_ms: u32,
    /// One of [`N310_VALUES`]. Default 1.
    pub n310: u32,
    /// One of [`N311_VALUES`]. Default 1.
    pub n311: u32,
    /// Out-of-sync evaluation window, ms, a multiple of 10 in [10, 1000]. Default 200.
    pub eval_out_ms: u32,
    /// In-sync evaluation window, ms, a multiple of 10 in [10, 1000]. Default 100.
    pub eval_in_ms: u32,
}

impl Default for RlfConfig {
    fn default() -> Self {
        RlfConfig { qout_db: -8.0, qin_db: -6.0, t310_ms: 1000, n310: 1, n311: 1, eval_out_ms: 200, eval_in_ms: 100 }
    }
}

impl RlfConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !T310_MS.contains(&self.t310_ms) {
            return Err(format!("t310_ms must be one of {T310_MS:?} (TS 36.331 RLF-TimersAndConstants); got {}", self.t310_ms));
        }
        if !N310_VALUES.contains(&self.n310) {
            return Err(format!("n310 must be one of {N310_VALUES:?}; got {}", self.n310));
        }
        if !N311_VALUES.contains(&self.n311) {
            return Err(format!("n311 must be one of {N311_VALUES:?}; got {}", self.n311));
        }
        if !(self.qout_db.is_finite() && self.qin_db.is_finite() && self.qin_db >= self.qout_db) {
            return Err(format!("qin_db must be >= qout_db (both finite dB); got qin_db {} and qout_db {}", self.qin_db, self.qout_db));
        }
        for (k, v) in [("eval_out_ms", self.eval_out_ms), ("eval_in_ms", self.eval_in_ms)] {
            if v % 10 != 0 || !(10..=1000).contains(&v) {
                return Err(format!("{k} must be a multiple of 10 ms in [10, 1000]; got {v}"));
            }
        }
        Ok(())
    }
}

/// What the detector reports, each at the instant it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RlfEvent {
    /// N310 consecutive out-of-sync: T310 started.
    PhyProblem { at: SimTime },
    /// N311 consecutive in-sync while T310 ran: T310 stopped.
    Recovered { at: SimTime },
    /// T310 expired: radio link failure.
    Failure { at: SimTime },
}

/// Per-frame sum of SINR (dB) and sample count.
#[derive(Clone, Copy, Debug)]
struct Frame {
    idx: u64,
    sum_db: f64,
    n: u32,
}

/// The RLF state machine of one UE.
#[derive(Clone, Debug)]
pub struct RlfDetector {
    cfg: RlfConfig,
    /// Recent frames with samples, oldest first (at most `eval_out` frames back).
    frames: VecDeque<Frame>,
    /// The next frame whose end has not been processed yet.
    next_frame: u64,
    out_count: u32,
    in_count: u32,
    t310_expiry: Option<SimTime>,
    failed: bool,
}

impl RlfDetector {
    pub fn new(cfg: RlfConfig) -> Result<Self, String> {
        cfg.validate()?;
        Ok(RlfDetector { cfg, frames: VecDeque::new(), next_frame: 0, out_count: 0, in_count: 0, t310_expiry: None, failed: false })
    }

    pub fn config(&self) -> &RlfConfig {
        &self.cfg
    }

    pub fn t310_running(&self) -> bool {
        self.t310_expiry.is_some()
    }

    pub fn failed(&self) -> bool {
        self.failed
    }

    fn frame_of(t: SimTime) -> u64 {
        t.as_nanos() / FRAME.as_nanos()
    }

    fn frame_end(f: u64) -> SimTime {
        SimTime::from_nanos((f + 1) * FRAME.as_nanos())
    }

    /// Feeds a wideband SINR sample of the serving cell taken at `now` (non-decreasing).
    pub fn on_sinr_sample(&mut self, now: SimTime, sinr_db: f64, out: &mut Vec<RlfEvent>) {
        self.poll(now, out);
        if self.failed {
            return;
        }
        let f = Self::frame_of(now);
        match self.frames.back_mut() {
            Some(last) if last.idx == f => {
                last.sum_db += sinr_db;
                last.n += 1;
            }
            _ => self.frames.push_back(Frame { idx: f, sum_db: sinr_db, n: 1 }),
        }
    }

    /// Processes every frame end and T310 expiry at or before `now`.
    pub fn poll(&mut self, now: SimTime, out: &mut Vec<RlfEvent>) {
        if self.failed {
            return;
        }
        let current = Self::frame_of(now);
        let n_out = (self.cfg.eval_out_ms / 10) as u64;
        while self.next_frame < current {
            let f = self.next_frame;
            // skip runs of frames whose windows hold no sample
            let newest = self.frames.back().map(|fr| fr.idx);
            if !matches!(newest, Some(n) if n + n_out > f) {
                self.frames.clear();
                self.next_frame = current;
                break;
            }
            let end = Self::frame_end(f);
            if self.expire(end, out) {
                return;
            }
            self.indicate(f, end, out);
            self.next_frame = f + 1;
        }
        self.expire(now, out);
    }

    /// Fires T310 if it expires at or before `t`; true on failure.
    fn expire(&mut self, t: SimTime, out: &mut Vec<RlfEvent>) -> bool {
        match self.t310_expiry {
            Some(x) if x <= t => {
                self.t310_expiry = None;
                self.failed = true;
                out.push(RlfEvent::Failure { at: x });
                true
            }
            _ => false,
        }
    }

    /// Mean SINR over the frames `(f − len, f]`, if any sample.
    fn window_mean(&self, f: u64, len: u64) -> Option<f64> {
        let (s, n) = self
            .frames
            .iter()
            .filter(|fr| fr.idx <= f && fr.idx + len > f)
            .fold((0.0, 0u32), |(s, n), fr| (s + fr.sum_db, n + fr.n));
        (n > 0).then(|| s / n as f64)
    }

    /// The indication at the end of frame `f` (instant `end`) and the counters it drives.
    fn indicate(&mut self, f: u64, end: SimTime, out: &mut Vec<RlfEvent>) {
        let n_out = (self.cfg.eval_out_ms / 10) as u64;
        let n_in = (self.cfg.eval_in_ms / 10) as u64;
        while self.frames.front().is_some_and(|fr| fr.idx + n_out.max(n_in) <= f) {
            self.frames.pop_front();
        }
        let in_sync = self.window_mean(f, n_in).is_some_and(|m| m > self.cfg.qin_db);
        let out_of_sync = !in_sync && self.window_mean(f, n_out).is_some_and(|m| m < self.cfg.qout_db);
        if in_sync {
            self.out_count = 0;
            if self.t310_expiry.is_some() {
                self.in_count += 1;
                if self.in_count >= self.cfg.n311 {
                    self.t310_expiry = None;
                    self.in_count = 0;
                    out.push(RlfEvent::Recovered { at: end });
                }
            }
        } else if out_of_sync {
            self.in_count = 0;
            if self.t310_expiry.is_none() {
                self.out_count += 1;
                if self.out_count >= self.cfg.n310 {
                    self.out_count = 0;
                    self.t310_expiry = Some(end + SimDuration::from_millis(self.cfg.t310_ms as u64));
                    out.push(RlfEvent::PhyProblem { at: end });
                }
            }
        }
    }

    /// The next instant at which [`RlfDetector::poll`] has something to do: the end of the
    /// current frame while samples are in the windows, or the T310 expiry.
    pub fn next_deadline(&self) -> Option<SimTime> {
        if self.failed {
            return None;
        }
        let frame = (!self.frames.is_empty()).then(|| Self::frame_end(self.next_frame));
        match (frame, self.t310_expiry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handover or re-establishment: T310 stopped, counters and windows cleared, failure
    /// state left.
    pub fn reset(&mut self) {
        self.frames.clear();
        self.out_count = 0;
        self.in_count = 0;
        self.t310_expiry = None;
        self.failed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    /// Feeds a sample every ms over [from, to) from `sinr(t)`; returns the events.
    fn feed(d: &mut RlfDetector, from: u64, to: u64, sinr: impl Fn(u64) -> f64) -> Vec<RlfEvent> {
        let mut out = Vec::new();
        for t in from..to {
            d.on_sinr_sample(ms(t), sinr(t), &mut out);
        }
        out
    }

    fn det(n310: u32, n311: u32) -> RlfDetector {
        RlfDetector::new(RlfConfig { n310, n311, ..Default::default() }).unwrap()
    }

    #[test]
    fn t310_expiry_time_is_exact() {
        // SINR −20 dB from t = 0: frame 0 ends at 10 ms with an out-of-sync indication;
        // N310 = 1 starts T310 there, so RLF at 10 + 1000 = 1010 ms.
        let mut d = det(1, 1);
        let ev = feed(&mut d, 0, 2000, |_| -20.0);
        assert_eq!(ev, vec![RlfEvent::PhyProblem { at: ms(10) }, RlfEvent::Failure { at: ms(1010) }]);
        assert!(d.failed());
        // N310 = 6: the sixth indication at 60 ms, RLF at 1060 ms
        let mut d = det(6, 1);
        let ev = feed(&mut d, 0, 2000, |_| -20.0);
        assert_eq!(ev, vec![RlfEvent::PhyProblem { at: ms(60) }, RlfEvent::Failure { at: ms(1060) }]);
        // T310 = 200 ms
        let mut d = RlfDetector::new(RlfConfig { t310_ms: 200, ..Default::default() }).unwrap();
        let ev = feed(&mut d, 0, 500, |_| -20.0);
        assert_eq!(ev.last(), Some(&RlfEvent::Failure { at: ms(210) }));
    }

    #[test]
    fn expiry_without_samples_and_deadlines() {
        // the signal vanishes (no samples at all): T310 still expires, found by poll
        let mut d = det(1, 1);
        let mut ev = feed(&mut d, 0, 10, |_| -20.0);
        assert_eq!(d.next_deadline(), Some(ms(10)));
        d.poll(ms(10), &mut ev);
        assert_eq!(ev, vec![RlfEvent::PhyProblem { at: ms(10) }]);
        assert_eq!(d.next_deadline(), Some(ms(20)));
        d.poll(ms(5000), &mut ev);
        assert_eq!(ev.last(), Some(&RlfEvent::Failure { at: ms(1010) }));
        assert_eq!(d.next_deadline(), None);
    }

    #[test]
    fn n311_in_sync_recovers() {
        // −20 dB until 300 ms, then +20 dB. T310 starts at 10 ms. The 100 ms in-sync window
        // (10 frames) first averages above −6 dB with m good frames when
        // (20 m − 20 (10 − m)) / 10 > −6, m ≥ 4: frames 30..=33, indication at 340 ms.
        let mut d = det(1, 1);
        let ev = feed(&mut d, 0, 3000, |t| if t < 300 { -20.0 } else { 20.0 });
        assert_eq!(ev, vec![RlfEvent::PhyProblem { at: ms(10) }, RlfEvent::Recovered { at: ms(340) }]);
        assert!(!d.t310_running() && !d.failed());
        // N311 = 2: one frame later
        let mut d = det(1, 2);
        let ev = feed(&mut d, 0, 3000, |t| if t < 300 { -20.0 } else { 20.0 });
        assert_eq!(ev, vec![RlfEvent::PhyProblem { at: ms(10) }, RlfEvent::Recovered { at: ms(350) }]);
        // recovery too late: good signal from 1005 ms does not stop T310 expiring at 1010 ms
        let mut d = det(1, 1);
        let ev = feed(&mut d, 0, 3000, |t| if t < 1005 { -20.0 } else { 20.0 });
        assert_eq!(ev.last(), Some(&RlfEvent::Failure { at: ms(1010) }));
    }

    #[test]
    fn between_thresholds_gives_no_indication() {
        // −7 dB sits between Qout (−8) and Qin (−6): nothing ever happens
        let mut d = det(1, 1);
        assert!(feed(&mut d, 0, 3000, |_| -7.0).is_empty());
        // good signal: no event either
        let mut d = det(1, 1);
        assert!(feed(&mut d, 0, 3000, |_| 5.0).is_empty());
        // a short 50 ms fade with N310 = 10 (needs 10 consecutive indications):
        // the 200 ms window mean of a 50 ms fade at −30 dB in +10 dB is
        // (−30·5 + 10·15)/20 = 0 > Qout, so no out-of-sync at all
        let mut d = RlfDetector::new(RlfConfig { n310: 10, ..Default::default() }).unwrap();
        let ev = feed(&mut d, 0, 3000, |t| if (1000..1050).contains(&t) { -30.0 } else { 10.0 });
        assert!(ev.is_empty(), "{ev:?}");
    }

    #[test]
    fn in_sync_breaks_the_out_of_sync_run() {
        // alternate 40 ms bad (−20) / 40 ms good (+20), in-sync window 10 ms, out window 10 ms:
        // never 6 consecutive out-of-sync, so T310 never starts with N310 = 6 …
        let cfg = RlfConfig { n310: 6, eval_out_ms: 10, eval_in_ms: 10, ..Default::default() };
        let mut d = RlfDetector::new(cfg.clone()).unwrap();
        let ev = feed(&mut d, 0, 5000, |t| if (t / 40) % 2 == 0 { -20.0 } else { 20.0 });
        assert!(ev.is_empty(), "{ev:?}");
        // … but with N310 = 4 the fourth bad frame starts it at 40 ms
        let mut d = RlfDetector::new(RlfConfig { n310: 4, ..cfg }).unwrap();
        let ev = feed(&mut d, 0, 100, |t| if (t / 40) % 2 == 0 { -20.0 } else { 20.0 });
        assert_eq!(ev[0], RlfEvent::PhyProblem { at: ms(40) });
    }

    #[test]
    fn reset_clears_and_validation_names_the_key() {
        let mut d = det(1, 1);
        let mut ev = feed(&mut d, 0, 2000, |_| -20.0);
        assert!(d.failed());
        d.reset();
        assert!(!d.failed() && !d.t310_running());
        ev.clear();
        // fresh start at 5000 ms: indication at 5010, failure at 6010
        for t in 5000..7000 {
            d.on_sinr_sample(ms(t), -20.0, &mut ev);
        }
        assert_eq!(ev, vec![RlfEvent::PhyProblem { at: ms(5010) }, RlfEvent::Failure { at: ms(6010) }]);
        let e = RlfDetector::new(RlfConfig { t310_ms: 300, ..Default::default() }).unwrap_err();
        assert!(e.contains("t310_ms") && e.contains("300"), "{e}");
        let e = RlfDetector::new(RlfConfig { n310: 5, ..Default::default() }).unwrap_err();
        assert!(e.contains("n310"), "{e}");
        let e = RlfDetector::new(RlfConfig { qin_db: -9.0, ..Default::default() }).unwrap_err();
        assert!(e.contains("qin_db"), "{e}");
        let e = RlfDetector::new(RlfConfig { eval_in_ms: 15, ..Default::default() }).unwrap_err();
        assert!(e.contains("eval_in_ms"), "{e}");
    }
}
