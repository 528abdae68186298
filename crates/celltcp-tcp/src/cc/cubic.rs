//! CUBIC congestion control (RFC 9438), leaving slow start by HyStart as Linux does
//! ([`super::hystart_linux`], the default) or by HyStart++ (RFC 9406, [`super::hystart`]).
//!
//! - Window growth (§4.2): `W_cubic(t) = C * (t - K)^3 + W_max`, `K = cbrt((W_max - cwnd_epoch) / C)`,
//!   with `t` the time since the current congestion-avoidance epoch began and windows in segments.
//! - Reno-friendly region (§4.3): `W_est` grows by `alpha_cubic * segments_acked / cwnd` per ACK,
//!   `alpha_cubic = 3 (1 - beta) / (1 + beta)`, as Linux's tcp_cubic.c (`beta_scale`, a
//!   constant) however far it gets; RFC 9438's switch to 1 once `W_est >= cwnd_prior` with
//!   `alpha_switch = true`; when `W_cubic(t) < W_est`, cwnd follows `W_est`.
//! - Concave and convex regions (§4.4, §4.5): `target = W_cubic(t + RTT)` clamped to
//!   `[cwnd, 1.5 cwnd]`, and each ACK adds `(target - cwnd) / cwnd` segments per segment acknowledged.
//! - Multiplicative decrease: `ssthresh = max(cwnd * beta_cubic, 2 SMSS)`, `cwnd = ssthresh`,
//!   from cwnd as Linux's `bictcp_recalc_ssthresh` (net/ipv4/tcp_cubic.c: `max(tcp_snd_cwnd *
//!   beta / BICTCP_BETA_SCALE, 2U)`) and ns-3's `TcpCubic::GetSsThresh` do (the default,
//!   [`CubicConfig::ssthresh_from_cwnd`]); or from the flight, RFC 9438 §4.6's
//!   `ssthresh = max(flight_size * beta_cubic, 2 SMSS)` (the RFC notes that using cwnd instead
//!   can keep the window too large when the sender was application-limited). They differ where
//!   the flight is below cwnd at the loss (app-limited or send-buffer-limited senders). Fast
//!   convergence (§4.7) lowers `W_max` to `cwnd (1 + beta) / 2` when a loss comes before the
//!   previous `W_max` was regained.
//! - Timeout (§4.8): cwnd to one segment, ssthresh as on a loss (Linux's `tcp_enter_loss` calls
//!   the same `ssthresh()` hook; held on a repeated timeout of the same segment, RFC 5681 §3.1),
//!   and the next epoch starts with `K = 0`, `W_max = cwnd`.
//! - Spurious congestion events (§4.9): the state saved before the reduction is restored.
//! - Slow start is RFC 5681 §3.1 with RFC 3465 byte counting. [`CubicConfig::hystart`] chooses
//!   and [`CubicConfig::hystart_variant`] choose how it ends before a loss: `"linux"` (default) is Linux's HyStart (ACK train and delay
//!   increase, `hystart_update`; ssthresh = cwnd when found; runs again after an RTO, as
//!   `bictcp_reset` forgets `found`); `"hystart++"` is RFC 9406 (delay only, conservative slow
//!   start, only while no congestion event has happened yet, §4.3); `false` is plain slow start.
//!
//! cwnd is not grown while the sender is not cwnd-limited (RFC 9438 §5.8 referring to RFC 7661),
//! and the app-limited time is taken out of the epoch clock so that `t` does not run on while the
//! window is unused (as Linux shifts its epoch on idle). No growth happens during fast recovery.
//!
//! The RTT in `W_cubic(t + RTT)` is the connection's minimum RTT, as Linux's `bictcp_update`
//! looks ahead by `delay_min` (`t += usecs_to_jiffies(ca->delay_min)`); RFC 9438 §4.4 says "RTT
//! is the smoothed round-trip time", which runs the curve ahead by the standing queue's delay too
//! (with a 1000-packet queue at 10 Mbit/s, by up to a second). Linux's `delay_min` forgets on an
//! RTO and skips samples within 1 s of an epoch's start; the connection's minimum here does
//! neither (on a fixed path they are the same).
//!
//! Linux's floor before the first loss (net/ipv4/tcp_cubic.c `bictcp_update`, Linux 6.x:
//! `if (ca->last_max_cwnd == 0 && ca->cnt > 20) ca->cnt = 20;`, "the initial growth of cubic
//! function may be too conservative"): while no loss has set W_max, congestion avoidance adds at
//! least one segment per 20 acknowledged, i.e. cwnd grows by at least 5 % per RTT, whatever the
//! cubic curve (or W_est) asks for. RFC 9438 has no such rule. A slow-start exit by HyStart does
//! not count as a loss (Linux leaves `last_max_cwnd` at 0 then); a timeout forgets the loss again
//! (`cubictcp_state` → `bictcp_reset` zeroes `last_max_cwnd`), so the floor returns after an RTO.

use celltcp_engine::{SimDuration, SimTime};

use super::hystart::{HyStart, HyStartEvent, HyStartState};
use super::hystart_linux::{HyStartAck, LinuxHyStart};
use super::{Ack, CcMetrics, CongestionEvent, Controller, RtoSsthresh};

/// Linux's floor before the first loss: `cnt <= 20` in `bictcp_update`, i.e. at least 1/20 of a
/// segment per segment acknowledged.
const LINUX_FLOOR_PER_SEGMENT: f64 = 1.0 / 20.0;

/// How CUBIC leaves slow start before a loss (the effective choice of
/// [`CubicConfig::hystart`] and [`CubicConfig::hystart_variant`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HyStartMode {
    /// Linux's HyStart (net/ipv4/tcp_cubic.c, [`super::hystart_linux`]).
    #[default]
    Linux,
    /// HyStart++ (RFC 9406, [`super::hystart`]).
    HyStartPlusPlus,
    /// Plain slow start until the first loss.
    Off,
}

/// Which HyStart runs when [`CubicConfig::hystart`] is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum HyStartVariant {
    /// Linux's HyStart (ACK train and delay increase).
    #[default]
    #[serde(rename = "linux")]
    Linux,
    /// HyStart++ (RFC 9406, delay increase and conservative slow start).
    #[serde(rename = "hystart++")]
    HyStartPlusPlus,
}

/// What `hystart` may be written as: a boolean, or the variant's name (which also turns it on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HyStartSetting {
    On(bool),
    Variant(HyStartVariant),
}

impl<'de> serde::Deserialize<'de> for HyStartSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = HyStartSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a bool, \"linux\" or \"hystart++\"")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<HyStartSetting, E> {
                Ok(HyStartSetting::On(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<HyStartSetting, E> {
                match v {
                    "linux" => Ok(HyStartSetting::Variant(HyStartVariant::Linux)),
                    "hystart++" => Ok(HyStartSetting::Variant(HyStartVariant::HyStartPlusPlus)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// [`CubicConfig`] as written, before `hystart` = a variant's name is split into the two fields.
#[derive(serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RawCubicConfig {
    c: f64,
    beta: f64,
    fast_convergence: bool,
    hystart: HyStartSetting,
    hystart_variant: GivenVariant,
    abc_limit_segments: u32,
    ssthresh_from_cwnd: bool,
    initial_ssthresh: u32,
    alpha_switch: bool,
}

impl<'de> serde::Deserialize<'de> for HyStartVariant {
    /// From its name (a plain string, as the parameter tables give it).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match HyStartSetting::deserialize(d)? {
            HyStartSetting::Variant(v) => Ok(v),
            HyStartSetting::On(b) => Err(serde::de::Error::invalid_value(
                serde::de::Unexpected::Bool(b),
                &"\"linux\" or \"hystart++\"",
            )),
        }
    }
}

/// `hystart_variant` if written (a plain value: the parameter tables have no `Option`).
#[derive(Clone, Copy, Debug, Default)]
struct GivenVariant(Option<HyStartVariant>);

impl<'de> serde::Deserialize<'de> for GivenVariant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        HyStartVariant::deserialize(d).map(|v| GivenVariant(Some(v)))
    }
}

impl Default for RawCubicConfig {
    fn default() -> Self {
        let d = CubicConfig::default();
        RawCubicConfig {
            c: d.c,
            beta: d.beta,
            fast_convergence: d.fast_convergence,
            hystart: HyStartSetting::On(d.hystart),
            hystart_variant: GivenVariant(None),
            abc_limit_segments: d.abc_limit_segments,
            ssthresh_from_cwnd: d.ssthresh_from_cwnd,
            initial_ssthresh: d.initial_ssthresh,
            alpha_switch: d.alpha_switch,
        }
    }
}

impl TryFrom<RawCubicConfig> for CubicConfig {
    type Error = String;
    fn try_from(r: RawCubicConfig) -> Result<Self, String> {
        let (hystart, hystart_variant) = match (r.hystart, r.hystart_variant.0) {
            (HyStartSetting::On(on), v) => (on, v.unwrap_or_default()),
            (HyStartSetting::Variant(a), Some(b)) if a != b => {
                return Err(format!(
                    "hystart = {a:?} and hystart_variant = {b:?} disagree; give one"
                ))
            }
            (HyStartSetting::Variant(a), _) => (true, a),
        };
        Ok(CubicConfig {
            c: r.c,
            beta: r.beta,
            fast_convergence: r.fast_convergence,
            hystart,
            hystart_variant,
            abc_limit_segments: r.abc_limit_segments,
            ssthresh_from_cwnd: r.ssthresh_from_cwnd,
            initial_ssthresh: r.initial_ssthresh,
            alpha_switch: r.alpha_switch,
        })
    }
}

/// CUBIC parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "RawCubicConfig")]
pub struct CubicConfig {
    /// The cubic scaling constant C, in segments / s^3, > 0. RFC 9438 §5.1: 0.4.
    pub c: f64,
    /// The multiplicative decrease factor beta_cubic, in (0, 1). RFC 9438 §4.6: 0.7.
    pub beta: f64,
    /// Fast convergence (RFC 9438 §4.7). Default true.
    pub fast_convergence: bool,
    /// End slow start before a loss by HyStart (default true; false: plain slow start). May
    /// also be written as the variant's name, `hystart = "hystart++"` (which sets both fields).
    pub hystart: bool,
    /// Which HyStart: `"linux"` (default; Linux's, ACK train and delay increase, tcp_cubic.c)
    /// or `"hystart++"` (RFC 9406).
    pub hystart_variant: HyStartVariant,
    /// Appropriate Byte Counting limit L in segments per ACK during slow start, >= 1
    /// (RFC 3465 §2.2: 2).
    pub abc_limit_segments: u32,
    /// Reduce from cwnd on a loss or timeout, as Linux's `bictcp_recalc_ssthresh` and ns-3's
    /// `TcpCubic::GetSsThresh` (default true); false: from the flight size, RFC 9438 §4.6.
    pub ssthresh_from_cwnd: bool,
    /// The slow-start threshold at the start, in segments; 0 (default): none, slow start runs
    /// until HyStart or a loss ends it. Linux's `initial_ssthresh` module parameter of
    /// tcp_cubic.c, which `cubictcp_init` applies only without HyStart (`if (!hystart &&
    /// initial_ssthresh)`): here it needs `hystart = false`. Not serialized while 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub initial_ssthresh: u32,
    /// RFC 9438 §4.3's switch of the Reno-friendly increase to 1 segment per RTT once `W_est`
    /// reaches `cwnd_prior` (true). Default false, as Linux's tcp_cubic.c: `W_est` grows by
    /// `alpha_cubic` per RTT however far it gets (`beta_scale` is a constant), which the kernel
    /// oracle's 5-packet CUBIC run shows (docs/validation.md). Not serialized while false.
    #[serde(skip_serializing_if = "is_false")]
    pub alpha_switch: bool,
}

fn is_false(x: &bool) -> bool {
    !*x
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            hystart: true,
            hystart_variant: HyStartVariant::Linux,
            abc_limit_segments: 2,
            ssthresh_from_cwnd: true,
            initial_ssthresh: 0,
            alpha_switch: false,
        }
    }
}

impl CubicConfig {
    /// The defaults with slow start ending as `mode` says.
    pub fn with_hystart(mode: HyStartMode) -> Self {
        let (hystart, hystart_variant) = match mode {
            HyStartMode::Linux => (true, HyStartVariant::Linux),
            HyStartMode::HyStartPlusPlus => (true, HyStartVariant::HyStartPlusPlus),
            HyStartMode::Off => (false, HyStartVariant::Linux),
        };
        CubicConfig {
            hystart,
            hystart_variant,
            ..Default::default()
        }
    }

    /// How slow start ends before a loss.
    pub fn hystart_mode(&self) -> HyStartMode {
        match (self.hystart, self.hystart_variant) {
            (false, _) => HyStartMode::Off,
            (true, HyStartVariant::Linux) => HyStartMode::Linux,
            (true, HyStartVariant::HyStartPlusPlus) => HyStartMode::HyStartPlusPlus,
        }
    }

    /// Checks every parameter against the range documented on it; the error names the
    /// parameter and its value.
    pub fn validate(&self) -> Result<(), String> {
        use super::params::*;
        check(
            "c",
            self.c,
            self.c > 0.0 && self.c.is_finite(),
            "a positive value in segments/s^3 (RFC 9438 §5.1: 0.4)",
        )?;
        check(
            "beta",
            self.beta,
            unit_open(self.beta),
            "a value in (0, 1) (RFC 9438 §4.6: 0.7)",
        )?;
        check(
            "initial_ssthresh",
            self.initial_ssthresh,
            self.initial_ssthresh == 0 || !self.hystart,
            "0 while hystart is on (Linux's cubictcp_init applies initial_ssthresh only with hystart = 0); set hystart = false",
        )?;
        check_abc(self.abc_limit_segments)
    }
}

/// State saved before a reduction, restored by a spurious-event undo (RFC 9438 §4.9).
#[derive(Clone, Copy, Debug)]
struct Saved {
    cwnd: f64,
    ssthresh: u64,
    w_max: f64,
    k: f64,
    t_epoch: Option<SimTime>,
    cwnd_epoch: f64,
    w_est: f64,
    cwnd_prior: f64,
    loss_set_w_max: bool,
}

#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    mss: f64,
    /// Congestion window in bytes (fractional: per-ACK increases are often below a byte's
    /// worth of rounding at large windows).
    cwnd: f64,
    ssthresh: u64,
    /// W_max in segments (RFC 9438 §4.1).
    w_max: f64,
    /// K in seconds (RFC 9438 eq. 2).
    k: f64,
    /// Start of the current congestion-avoidance epoch (shifted forward by app-limited time).
    t_epoch: Option<SimTime>,
    /// cwnd in segments when the epoch began.
    cwnd_epoch: f64,
    /// W_est in segments (RFC 9438 §4.3).
    w_est: f64,
    /// cwnd in segments before the last reduction (RFC 9438 §4.6 cwnd_prior).
    cwnd_prior: f64,
    /// The next epoch follows a timeout: K = 0, W_max = cwnd (RFC 9438 §4.8).
    after_rto: bool,
    /// A loss (congestion event) has set W_max: Linux's `last_max_cwnd != 0`. Until then
    /// congestion avoidance grows at least 5 % per RTT (`bictcp_update`, `cnt <= 20`).
    loss_set_w_max: bool,
    /// An RTO fired and nothing new has been acknowledged since (RFC 5681 §3.1 note on eq. 4).
    rto_pending: bool,
    last_ack: Option<SimTime>,
    hystart: HyStart,
    linux_hystart: LinuxHyStart,
    saved: Option<Saved>,
}

impl Cubic {
    pub fn new(cfg: CubicConfig, mss: u32, initial_cwnd_pkts: u32) -> Self {
        let mss = mss as f64;
        let mut hystart = HyStart::new();
        if cfg.hystart_mode() != HyStartMode::HyStartPlusPlus {
            hystart.on_congestion();
        }
        Cubic {
            cfg,
            mss,
            cwnd: initial_cwnd_pkts as f64 * mss,
            // cubictcp_init: `if (!hystart && initial_ssthresh) snd_ssthresh = initial_ssthresh`
            ssthresh: match cfg.initial_ssthresh {
                0 => u64::MAX,
                w => w as u64 * mss as u64,
            },
            w_max: 0.0,
            k: 0.0,
            t_epoch: None,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            cwnd_prior: 0.0,
            after_rto: false,
            loss_set_w_max: false,
            rto_pending: false,
            last_ack: None,
            hystart,
            linux_hystart: LinuxHyStart::new(),
            saved: None,
        }
    }

    /// alpha_cubic = 3 (1 - beta) / (1 + beta) (RFC 9438 §4.3 eq. 5).
    pub fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta)
    }

    /// K in seconds for the current epoch.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// W_max in segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// W_est in segments.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    /// Start of the current epoch, if one is running.
    pub fn epoch_start(&self) -> Option<SimTime> {
        self.t_epoch
    }

    /// HyStart++'s state (`Done` unless `hystart = "hystart++"`).
    pub fn hystart_state(&self) -> HyStartState {
        self.hystart.state()
    }

    /// Linux HyStart's `found` (slow start was left by it).
    pub fn hystart_found(&self) -> bool {
        self.linux_hystart.found()
    }

    /// W_cubic(t) in segments, `t` in seconds since the epoch began (RFC 9438 eq. 1).
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.cfg.c * (t - self.k).powi(3) + self.w_max
    }

    fn cwnd_seg(&self) -> f64 {
        self.cwnd / self.mss
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh as f64
    }

    /// Begin a congestion-avoidance epoch (RFC 9438 §4.2; §4.8 after a timeout).
    fn start_epoch(&mut self, now: SimTime) {
        let w = self.cwnd_seg();
        self.t_epoch = Some(now);
        self.cwnd_epoch = w;
        self.w_est = w;
        if self.after_rto || self.w_max <= w {
            // §4.8, and slow-start exit without a loss: K = 0 and W_max = cwnd.
            self.w_max = w;
            self.k = 0.0;
        } else {
            // §4.2 eq. 2.
            self.k = ((self.w_max - self.cwnd_epoch) / self.cfg.c).cbrt();
        }
        self.after_rto = false;
    }

    fn save(&mut self) {
        self.saved = Some(Saved {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            w_max: self.w_max,
            k: self.k,
            t_epoch: self.t_epoch,
            cwnd_epoch: self.cwnd_epoch,
            w_est: self.w_est,
            cwnd_prior: self.cwnd_prior,
            loss_set_w_max: self.loss_set_w_max,
        });
    }

    /// ssthresh after a loss or timeout with the 2 SMSS floor, in bytes: from cwnd as Linux's
    /// `bictcp_recalc_ssthresh`, or from `flight` as RFC 9438 §4.6 ([`CubicConfig::ssthresh_from_cwnd`]).
    fn reduced_ssthresh(&self, flight: u64) -> f64 {
        let base = if self.cfg.ssthresh_from_cwnd {
            self.cwnd
        } else {
            flight as f64
        };
        (base * self.cfg.beta).max(2.0 * self.mss).floor()
    }

    fn slow_start_ack(&mut self, now: SimTime, ack: &Ack) {
        if self.cfg.hystart_mode() == HyStartMode::Linux {
            // Linux passes `ca_rtt_us`, the RTT of the newest segment this ACK covers (the
            // rate sample's, Karn-safe); the connection's sample (the oldest's) otherwise.
            let newest = ack.rate.map(|r| r.rtt).filter(|r| *r > SimDuration::ZERO);
            let h = HyStartAck {
                delivered: ack.delivered,
                rtt: newest.or(ack.rtt),
                cwnd_bytes: self.cwnd as u64,
                mss: self.mss as u64,
                srtt: ack.srtt,
                slow_start: true,
                paced: false,
            };
            if self.linux_hystart.on_ack(now, &h).is_some() {
                // hystart_update: snd_ssthresh = cwnd; congestion avoidance from here.
                self.ssthresh = self.cwnd as u64;
                self.cwnd = self.ssthresh as f64;
                self.start_epoch(now);
                return;
            }
        }
        if !self.hystart.is_done() {
            if let Some(HyStartEvent::EnterCongestionAvoidance) =
                self.hystart.on_ack(ack.delivered, ack.rtt)
            {
                // RFC 9406 §4.2: after CSS_ROUNDS, ssthresh = cwnd and congestion avoidance.
                self.ssthresh = self.cwnd as u64;
                self.cwnd = self.ssthresh as f64;
                self.start_epoch(now);
                return;
            }
        }
        if ack.app_limited {
            return;
        }
        // RFC 5681 §3.1 eq. 2 with RFC 3465 L; RFC 9406 §4.2 divides it by CSS_GROWTH_DIVISOR in CSS.
        let limit = self.cfg.abc_limit_segments as f64 * self.mss;
        let inc = (ack.acked_bytes as f64).min(limit) / self.hystart.growth_divisor() as f64;
        self.cwnd = (self.cwnd + inc).min(self.ssthresh as f64);
    }

    fn congestion_avoidance_ack(&mut self, now: SimTime, ack: &Ack) {
        if ack.app_limited {
            // RFC 9438 §5.8: no growth when not cwnd-limited; keep the epoch clock still.
            if let (Some(te), Some(last)) = (self.t_epoch, self.last_ack) {
                self.t_epoch = Some(te + (now - last));
            }
            return;
        }
        let t_epoch = match self.t_epoch {
            Some(t) => t,
            None => {
                self.start_epoch(now);
                now
            }
        };
        let t = (now - t_epoch).as_secs_f64();
        // Linux bictcp_update looks ahead by `delay_min` (`t += usecs_to_jiffies(ca->delay_min)`),
        // the smallest RTT, not the smoothed one RFC 9438 §4.4 names.
        let rtt = if ack.min_rtt > SimDuration::ZERO && ack.min_rtt < SimDuration::MAX {
            ack.min_rtt
        } else if ack.srtt > SimDuration::ZERO {
            ack.srtt
        } else {
            ack.rtt.unwrap_or_default()
        };
        let w = self.cwnd_seg();
        let cwnd_before = self.cwnd;
        let segs_acked = ack.acked_bytes as f64 / self.mss;

        // §4.3: the Reno-friendly estimate.
        // (RFC 9438 switches to 1 at cwnd_prior; Linux keeps alpha_cubic: `alpha_switch`)
        let alpha = if self.cfg.alpha_switch && self.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.alpha_cubic()
        };
        self.w_est += alpha * segs_acked / w;

        if self.w_cubic(t) < self.w_est {
            // §4.3: Reno-friendly region, cwnd = W_est (never lowered by an ACK).
            self.cwnd = self.cwnd.max(self.w_est * self.mss);
        } else {
            // §4.4/§4.5: target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd].
            let target = self.w_cubic(t + rtt.as_secs_f64()).clamp(w, 1.5 * w);
            self.cwnd += (target - w) / w * ack.acked_bytes as f64;
        }
        if !self.loss_set_w_max {
            // Linux bictcp_update: cnt <= 20 while last_max_cwnd == 0, one segment per 20
            // acknowledged (5 % per RTT) at least.
            self.cwnd = self
                .cwnd
                .max(cwnd_before + LINUX_FLOOR_PER_SEGMENT * ack.acked_bytes as f64);
        }
    }
}

impl Controller for Cubic {
    fn on_sent(&mut self, _now: SimTime, bytes: u64, _bytes_in_flight: u64) {
        self.hystart.on_sent(bytes);
        self.linux_hystart.on_sent(bytes);
    }

    fn on_ack(&mut self, now: SimTime, ack: &Ack) {
        if ack.acked_bytes == 0 {
            return;
        }
        self.rto_pending = false;
        if ack.in_recovery {
            // RFC 5681 §3.2 / RFC 6675 §5: no growth during fast recovery.
            self.last_ack = Some(now);
            return;
        }
        if self.in_slow_start() {
            self.slow_start_ack(now, ack);
        } else {
            self.congestion_avoidance_ack(now, ack);
        }
        self.last_ack = Some(now);
    }

    fn on_congestion_event(&mut self, _now: SimTime, ev: &CongestionEvent) {
        self.save();
        // RFC 9406 §4.2: a congestion event in slow start or CSS ends HyStart++.
        self.hystart.on_congestion();
        let w = self.cwnd_seg();
        // §4.7 fast convergence.
        self.w_max = if self.cfg.fast_convergence && w < self.w_max {
            w * (1.0 + self.cfg.beta) / 2.0
        } else {
            w
        };
        self.cwnd_prior = w;
        self.loss_set_w_max = true;
        // §4.6 multiplicative decrease.
        let ss = self.reduced_ssthresh(ev.bytes_in_flight);
        self.ssthresh = ss as u64;
        self.cwnd = ss;
        self.t_epoch = None;
    }

    fn on_rto(&mut self, _now: SimTime, bytes_in_flight: u64, _mss: u32, ss: RtoSsthresh) {
        self.hystart.on_congestion();
        // Linux cubictcp_state(TCP_CA_Loss): bictcp_reset + bictcp_hystart_reset.
        self.linux_hystart.on_rto();
        // bictcp_reset also zeroes last_max_cwnd: the 5 %-per-RTT floor applies again.
        self.loss_set_w_max = false;
        if !self.rto_pending && ss == RtoSsthresh::Reduce {
            // §4.8: ssthresh as on a loss (tcp_enter_loss -> bictcp_recalc_ssthresh, from the
            // cwnd before it drops to the loss window); held on a repeated timeout (RFC 5681
            // §3.1 note on eq. 4) or when the sender says so (an RTO inside fast recovery,
            // Linux `tcp_enter_loss`), and so is the state saved for an undo (`prior_ssthresh`
            // and `prior_cwnd` are set only when ssthresh is).
            self.save();
            self.cwnd_prior = self.cwnd_seg();
            self.ssthresh = self.reduced_ssthresh(bytes_in_flight) as u64;
        }
        self.rto_pending = true;
        // RFC 5681 §3.1: loss window of one segment.
        self.cwnd = self.mss;
        self.t_epoch = None;
        self.after_rto = true;
    }

    fn on_spurious(&mut self, _now: SimTime) {
        // §4.9: restore the state from before the spurious reduction.
        if let Some(s) = self.saved.take() {
            self.cwnd = self.cwnd.max(s.cwnd);
            self.ssthresh = s.ssthresh;
            self.w_max = s.w_max;
            self.k = s.k;
            self.t_epoch = s.t_epoch;
            self.cwnd_epoch = s.cwnd_epoch;
            self.w_est = s.w_est;
            self.cwnd_prior = s.cwnd_prior;
            self.loss_set_w_max = s.loss_set_w_max;
            self.after_rto = false;
            self.rto_pending = false;
        }
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn metrics(&self) -> CcMetrics {
        // state: 0 slow start, 1 conservative slow start (HyStart++), 2 congestion avoidance.
        let state = if !self.in_slow_start() {
            2
        } else if self.hystart.in_css() {
            1
        } else {
            0
        };
        CcMetrics {
            cwnd_bytes: self.window(),
            ssthresh_bytes: self.ssthresh,
            pacing_rate: None,
            state,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_sender::TestSender;
    use crate::cc::RateSample;

    const MSS: u32 = 1000;
    const RTT: SimDuration = SimDuration::from_millis(100);

    fn no_hystart() -> CubicConfig {
        CubicConfig {
            hystart: false,
            ..CubicConfig::default()
        }
    }

    fn sender(cfg: CubicConfig, iw: u32, rtt: SimDuration) -> TestSender<Cubic> {
        TestSender::new(Cubic::new(cfg, MSS, iw), MSS, rtt)
    }

    /// A sender that had a loss at a full window of `w` segments and then left recovery; the
    /// next ACK starts the CA epoch.
    fn after_loss_at(cfg: CubicConfig, w: u32, rtt: SimDuration) -> TestSender<Cubic> {
        let mut s = sender(cfg, w, rtt);
        s.send_window();
        s.lose_n(1);
        s.advance(rtt);
        s.ack_all(); // still in recovery: no growth
        s.exit_recovery();
        s
    }

    fn pkts(s: &TestSender<Cubic>) -> f64 {
        s.cc.cwnd / MSS as f64
    }

    #[test]
    fn cubic_beta_0_7_on_loss() {
        // RFC 9438 §4.6 (flight_size = cwnd here) and Linux bictcp_recalc_ssthresh: ssthresh =
        // 0.7 cwnd, cwnd = ssthresh; W_max = cwnd (§4.7 with no previous W_max).
        let s = after_loss_at(no_hystart(), 100, RTT);
        assert_eq!(s.window(), 70 * MSS as u64);
        assert_eq!(s.cc.ssthresh(), 70 * MSS as u64);
        assert_eq!(s.cc.w_max(), 100.0);
    }

    #[test]
    fn cubic_reduces_from_cwnd_as_linux_when_the_flight_is_smaller() {
        // Linux bictcp_recalc_ssthresh (net/ipv4/tcp_cubic.c) returns
        // max(tcp_snd_cwnd * beta / BICTCP_BETA_SCALE, 2) and sets last_max_cwnd from cwnd
        // too; ns-3's TcpCubic::GetSsThresh also uses cwnd. An app-limited sender with cwnd 100
        // and 40 segments in flight keeps 70 (from cwnd), not 28 (RFC 9438 §4.6, flight_size).
        let mut s = sender(no_hystart(), 100, RTT);
        s.send(40);
        s.lose_n(1);
        assert_eq!(s.cc.ssthresh(), 70 * MSS as u64);
        assert_eq!(s.window(), 70 * MSS as u64);
        assert_eq!(s.cc.w_max(), 100.0);
        // ssthresh_from_cwnd = false: RFC 9438 §4.6, 0.7 of the 40 segments in flight.
        let cfg = CubicConfig {
            ssthresh_from_cwnd: false,
            ..no_hystart()
        };
        let mut s = sender(cfg, 100, RTT);
        s.send(40);
        s.lose_n(1);
        assert_eq!(s.cc.ssthresh(), 28 * MSS as u64);
        assert_eq!(s.window(), 28 * MSS as u64);
        assert_eq!(s.cc.w_max(), 100.0, "W_max is cwnd in both (RFC 9438 §4.6 too)");
    }

    #[test]
    fn cubic_rto_reduces_from_cwnd_as_linux() {
        // tcp_enter_loss calls icsk_ca_ops->ssthresh(), bictcp_recalc_ssthresh: from the cwnd
        // at the timeout (100 segments), not the 40 in flight, before cwnd drops to one segment.
        for (from_cwnd, want) in [(true, 70), (false, 28)] {
            let cfg = CubicConfig {
                ssthresh_from_cwnd: from_cwnd,
                ..no_hystart()
            };
            let mut s = sender(cfg, 100, RTT);
            s.send(40);
            s.rto();
            assert_eq!(s.cc.ssthresh(), want * MSS as u64, "from_cwnd {from_cwnd}");
            assert_eq!(s.window(), MSS as u64);
        }
    }

    #[test]
    fn cubic_loss_floor_is_two_segments() {
        // RFC 9438 §4.6: ssthresh = max(ssthresh, 2) segments.
        let mut s = sender(no_hystart(), 2, RTT);
        s.send_window();
        s.lose_n(1);
        assert_eq!(s.cc.ssthresh(), 2 * MSS as u64);
        assert_eq!(s.window(), 2 * MSS as u64);
    }

    #[test]
    fn cubic_k_matches_closed_form() {
        // RFC 9438 eq. 2: K = cbrt((W_max - cwnd_epoch) / C) = cbrt(W_max (1 - beta) / C) after a
        // full-window loss.
        let mut s = after_loss_at(no_hystart(), 100, RTT);
        assert!(s.cc.epoch_start().is_none());
        s.run_rounds(1);
        let k = (100.0f64 * (1.0 - 0.7) / 0.4).cbrt();
        assert!((s.cc.k() - k).abs() < 1e-12, "K {} vs {k}", s.cc.k());
        assert!((k - 4.217).abs() < 1e-3);
    }

    #[test]
    fn cubic_window_follows_w_cubic_over_time() {
        // RFC 9438 eq. 1 and §4.4/4.5: cwnd tracks W(t) = C (t - K)^3 + W_max through the
        // concave region (below W_max) and the convex one (above it). Each ACK moves cwnd toward
        // W(t + RTT), so after the ACKs of a round arriving at time t, cwnd lies between W(t) (less
        // the per-ACK lag, under one segment) and W(t + RTT). W_max = 1000 segments keeps the
        // Reno-friendly estimate below W(t) for the whole run (checked), so §4.3 does not interfere.
        let mut s = after_loss_at(no_hystart(), 1000, RTT);
        s.run_rounds(1);
        let t0 = s.cc.epoch_start().expect("epoch started");
        let k = s.cc.k();
        let (c, w_max) = (0.4, 1000.0);
        let w = |t: f64| c * (t - k).powi(3) + w_max;
        let rounds = (2.0 * k / RTT.as_secs_f64()) as u64;
        let (mut below, mut above) = (false, false);
        for _ in 0..rounds {
            s.run_rounds(1);
            let t = (s.now() - t0).as_secs_f64();
            let cwnd = pkts(&s);
            assert!(s.cc.w_est() < w(t), "t={t:.2}: left the CUBIC region");
            assert!(
                cwnd >= w(t) - 1.0,
                "t={t:.2}: cwnd {cwnd:.2} < W(t) {:.2}",
                w(t)
            );
            assert!(
                cwnd <= w(t + RTT.as_secs_f64()) + 1e-9,
                "t={t:.2}: cwnd {cwnd:.2} > W(t+RTT) {:.2}",
                w(t + 0.1)
            );
            below |= t < k - 1.0 && cwnd < w_max - 10.0;
            above |= t > k + 1.0 && cwnd > w_max + 10.0;
        }
        assert!(below && above, "the run covered both regions");
    }

    #[test]
    fn cubic_target_looks_ahead_by_the_minimum_rtt_as_linux() {
        // tcp_cubic.c bictcp_update: `t += usecs_to_jiffies(ca->delay_min)`: the target is
        // W(t + min RTT), not W(t + SRTT) (RFC 9438 §4.4). After a loss at 1000 segments (cwnd
        // 700, K = cbrt(300 / 0.4) = 9.09 s) an ACK of one segment 1 s into the epoch, with a
        // queue that has taken SRTT to 800 ms over a minimum of 100 ms, adds (W(1.1) - w) / w
        // segments: 96.3 / 700 = 0.138 (with SRTT it would be W(1.8): 0.207).
        let s = after_loss_at(no_hystart(), 1000, RTT);
        let mut c = s.cc.clone();
        let ack = |srtt: u64| Ack {
            acked_bytes: MSS as u64,
            rtt: Some(SimDuration::from_millis(srtt)),
            srtt: SimDuration::from_millis(srtt),
            min_rtt: RTT,
            mss: MSS,
            ..Ack::default()
        };
        let t0 = s.now();
        c.on_ack(t0, &ack(100)); // the epoch begins
        assert_eq!(c.epoch_start(), Some(t0));
        let w = c.cwnd_seg();
        assert!(c.w_est() < c.w_cubic(1.0), "the CUBIC region");
        c.on_ack(t0 + SimDuration::from_secs(1), &ack(800));
        let want = (c.w_cubic(1.1) - w) / w;
        let got = c.cwnd_seg() - w;
        assert!(
            (got - want).abs() < 1e-9,
            "grew {got:.4} segments, W(t + min RTT) gives {want:.4}, W(t + SRTT) {:.4}",
            (c.w_cubic(1.8) - w) / w
        );
        assert!((want - 0.1376).abs() < 0.001, "{want}");
    }

    #[test]
    fn cubic_fast_convergence() {
        // RFC 9438 §4.7: a loss before W_max is regained sets W_max = cwnd (1 + beta) / 2.
        for (fast, want) in [(true, 70.0 * 1.7 / 2.0), (false, 70.0)] {
            let cfg = CubicConfig {
                fast_convergence: fast,
                ..no_hystart()
            };
            let mut s = after_loss_at(cfg, 100, RTT); // W_max = 100, cwnd = 70
            s.send_window();
            s.lose_n(1); // second loss at cwnd 70 < W_max 100
            assert!(
                (s.cc.w_max() - want).abs() < 1e-9,
                "fast={fast}: W_max {}",
                s.cc.w_max()
            );
            assert_eq!(s.window(), 49 * MSS as u64);
        }
    }

    #[test]
    fn cubic_reno_friendly_keeps_alpha_past_cwnd_prior_as_linux() {
        // tcp_cubic.c bictcp_update (tcp_friendliness): tcp_cwnd gains one segment per
        // cwnd * beta_scale / 8 segments acknowledged, beta_scale a constant, so W_est keeps
        // growing by alpha_cubic (~0.53) per RTT after it passes cwnd_prior; RFC 9438 §4.3
        // switches to 1 there (`alpha_switch`). From cwnd 14 after a loss at 20, 40 rounds:
        // Linux's rule about 14 + 40 x 0.53 = 35 segments, the RFC's about 20 + 29 = 49.
        let rtt = SimDuration::from_millis(2);
        let grown = |cfg: CubicConfig| {
            let mut s = after_loss_at(cfg, 20, rtt);
            s.run_rounds(41);
            pkts(&s)
        };
        let linux = grown(no_hystart());
        let rfc = grown(CubicConfig { alpha_switch: true, ..no_hystart() });
        assert!((32.0..=37.0).contains(&linux), "Linux: {linux}");
        assert!(rfc > linux + 8.0, "RFC 9438: {rfc} against Linux {linux}");
    }

    #[test]
    fn cubic_reno_friendly_region_at_short_rtt() {
        // RFC 9438 §4.3: at a short RTT and a small window, W_cubic(t) grows more slowly than
        // the AIMD estimate W_est, and cwnd follows W_est: alpha_cubic = 3(1-0.7)/(1+0.7) segments
        // per RTT until W_est reaches cwnd_prior, then 1 per RTT.
        let rtt = SimDuration::from_millis(2);
        let rfc = CubicConfig { alpha_switch: true, ..no_hystart() };
        let mut s = after_loss_at(rfc, 20, rtt); // cwnd 14, W_max 20, K = 2.47 s
        s.run_rounds(1);
        let t0 = s.cc.epoch_start().expect("epoch started");
        let alpha = s.cc.alpha_cubic();
        assert!((alpha - 0.9 / 1.7).abs() < 1e-12);
        let mut aimd = 14.0f64;
        for _ in 0..40 {
            let before = pkts(&s);
            s.run_rounds(1);
            // One round of ACKs adds about alpha (then 1) segment to W_est.
            aimd += if aimd >= 20.0 { 1.0 } else { alpha };
            let t = (s.now() - t0).as_secs_f64();
            assert!(
                s.cc.w_cubic(t) < s.cc.w_est(),
                "in the Reno-friendly region"
            );
            assert!(pkts(&s) >= before);
        }
        // Per-ACK accumulation of alpha * acked / cwnd against a growing cwnd falls a little
        // short of alpha per round; allow one segment for it.
        assert!(pkts(&s) >= aimd - 1.0, "cwnd {} vs AIMD {aimd}", pkts(&s));
        assert!(pkts(&s) > 30.0);
        let t = (s.now() - t0).as_secs_f64();
        assert!(
            s.cc.w_cubic(t) < pkts(&s) / 2.0,
            "CUBIC alone would have stayed near cwnd_epoch"
        );
    }

    /// Congestion avoidance from `w` segments with no loss yet (as after a HyStart exit):
    /// ssthresh = cwnd, W_max unset.
    fn avoidance_without_loss(w: u32, rtt: SimDuration) -> TestSender<Cubic> {
        let mut s = sender(no_hystart(), w, rtt);
        s.cc.ssthresh = w as u64 * MSS as u64;
        s
    }

    #[test]
    fn cubic_linux_floor_5_percent_per_rtt_before_first_loss() {
        // tcp_cubic.c bictcp_update: `if (ca->last_max_cwnd == 0 && ca->cnt > 20) ca->cnt = 20;`
        // one segment per 20 acknowledged, so each round of ACKs raises cwnd by 5 %, while the
        // cubic curve from W_max = cwnd_epoch = 100 (K = 0) would add only C (t + RTT)^3 < 1
        // segment in the first second. Checked against the closed form 100 * 1.05^n.
        let mut s = avoidance_without_loss(100, RTT);
        let mut prev = pkts(&s);
        for n in 1..=10 {
            s.run_rounds(1);
            let w = pkts(&s);
            // send_window sends floor(cwnd) segments: a round grows by 5 % of that.
            let floor = prev.floor();
            assert!(
                w >= prev + 0.05 * floor - 1e-9,
                "round {n}: {prev:.3} -> {w:.3} is below 5 %"
            );
            assert!(
                w <= prev + 0.05 * floor + 0.2,
                "round {n}: {prev:.3} -> {w:.3}: more than the floor while the curve is flat"
            );
            prev = w;
        }
        let want = 100.0 * 1.05f64.powi(10);
        assert!((prev - want).abs() / want < 0.02, "cwnd {prev:.2} vs {want:.2}");
        assert!(s.cc.w_cubic(1.1) < 101.0, "the curve alone stays near 100");

        // After a loss W_max is set: the plain cubic curve, which near K grows by well under
        // 5 % per RTT (concave region, RFC 9438 §4.4).
        s.send_window();
        s.lose_n(1);
        s.advance(RTT);
        s.ack_all();
        s.exit_recovery();
        s.run_rounds(1);
        let k = s.cc.k();
        assert!(k > 1.0, "K {k}");
        while (s.now() - s.cc.epoch_start().expect("epoch")).as_secs_f64() < k - 0.5 {
            s.run_rounds(1);
        }
        let before = pkts(&s);
        s.run_rounds(1);
        let after = pkts(&s);
        assert!(
            after < before * 1.01,
            "near K the curve grows {before:.2} -> {after:.2}, more than 1 %"
        );
    }

    #[test]
    fn cubic_initial_ssthresh_ends_slow_start_there_without_a_loss() {
        // tcp_cubic.c cubictcp_init: `if (!hystart && initial_ssthresh) tp->snd_ssthresh =
        // initial_ssthresh`. Slow start doubles 10 -> 20 -> 40 and stops at 62 (tcp_slow_start:
        // cwnd = min(cwnd + acked, ssthresh)); no loss has set W_max (last_max_cwnd stays 0),
        // so congestion avoidance then grows by the 5 % floor per round, as after a HyStart exit.
        let cfg = CubicConfig {
            initial_ssthresh: 62,
            ..no_hystart()
        };
        assert_eq!(cfg.validate(), Ok(()));
        let mut s = sender(cfg, 10, RTT);
        assert_eq!(s.cc.ssthresh(), 62 * MSS as u64);
        s.run_rounds(3);
        assert_eq!(
            pkts(&s),
            62.0 + 0.05 * 18.0,
            "40 + 22 in slow start, 18 ACKs past 62 at cnt 20"
        );
        assert!(!s.cc.in_slow_start() && !s.cc.loss_set_w_max);
        assert_eq!(s.cc.ssthresh(), 62 * MSS as u64);
        let prev = pkts(&s);
        s.run_rounds(1);
        assert!(
            (pkts(&s) - prev * 1.05).abs() < 0.2,
            "{prev:.2} -> {:.2}",
            pkts(&s)
        );
        // without it (the default, 0) slow start runs on
        let mut plain = sender(no_hystart(), 10, RTT);
        plain.run_rounds(4);
        assert_eq!(pkts(&plain), 160.0);
        // Linux applies it only without HyStart; here that is an error naming the key
        let e = CubicConfig {
            initial_ssthresh: 62,
            ..CubicConfig::default()
        }
        .validate()
        .unwrap_err();
        assert!(
            e.contains("initial_ssthresh = 62") && e.contains("hystart = false"),
            "{e}"
        );
    }

    #[test]
    fn cubic_linux_floor_returns_after_rto() {
        // cubictcp_state(TCP_CA_Loss) -> bictcp_reset zeroes last_max_cwnd: after a timeout the
        // floor applies again in the next congestion avoidance, although a loss came before.
        let mut s = after_loss_at(no_hystart(), 100, RTT);
        assert!(s.cc.loss_set_w_max);
        s.send_window();
        s.rto();
        assert!(!s.cc.loss_set_w_max);
        s.run_rounds(8); // slow start up to ssthresh, then the epoch
        let prev = pkts(&s);
        assert!(!s.cc.in_slow_start());
        s.run_rounds(1);
        assert!(
            pkts(&s) >= prev + 0.05 * prev.floor() - 1e-9,
            "{prev:.2} -> {:.2}",
            pkts(&s)
        );
    }

    #[test]
    fn cubic_target_clamped_to_1_5_cwnd() {
        // RFC 9438 §4.4: target is at most 1.5 cwnd, so one ACK adds at most half the bytes it
        // acknowledges.
        let mut s = after_loss_at(no_hystart(), 100, RTT);
        s.run_rounds(1);
        s.send_window();
        s.advance(SimDuration::from_secs(60)); // far into the convex region
        let before = s.cc.cwnd;
        s.ack_n(1);
        assert!(
            (s.cc.cwnd - before - 0.5 * MSS as f64).abs() < 1e-6,
            "increase {}",
            s.cc.cwnd - before
        );
    }

    #[test]
    fn cubic_rto_loss_window_and_ssthresh() {
        // RFC 9438 §4.8: cwnd = 1 segment, ssthresh = cwnd (= flight_size here) * beta_cubic; the next epoch
        // uses K = 0 and W_max = cwnd at its start even though the old W_max was larger.
        let mut s = sender(no_hystart(), 40, RTT);
        s.send_window();
        s.rto();
        assert_eq!(s.window(), MSS as u64);
        assert_eq!(s.cc.ssthresh(), 28 * MSS as u64);
        s.run_rounds(6); // 1, 2, 4, 8, 16, 28 (capped), then the epoch starts
        assert!(s.cc.epoch_start().is_some());
        assert_eq!(s.cc.k(), 0.0);
        assert!((s.cc.w_max() - 28.0).abs() < 1e-9, "W_max {}", s.cc.w_max());
    }

    #[test]
    fn cubic_repeated_rto_holds_ssthresh() {
        // RFC 5681 §3.1 (note on eq. 4), used by RFC 9438 §4.8: a second timeout before any new
        // ACK keeps ssthresh instead of computing it from the one-segment flight.
        let mut s = sender(no_hystart(), 40, RTT);
        s.send_window();
        s.rto();
        s.send(1);
        s.rto();
        s.send(1);
        s.rto();
        assert_eq!(s.cc.ssthresh(), 28 * MSS as u64);
        assert_eq!(s.window(), MSS as u64);
    }

    #[test]
    fn cubic_spurious_undo_restores_state() {
        // RFC 9438 §4.9: undo restores cwnd, ssthresh, W_max and the epoch.
        let mut s = after_loss_at(no_hystart(), 100, RTT);
        s.run_rounds(3);
        let (cwnd, ss, wmax, k, ep) = (
            s.window(),
            s.cc.ssthresh(),
            s.cc.w_max(),
            s.cc.k(),
            s.cc.epoch_start(),
        );
        s.send_window();
        s.lose_n(1);
        assert!(s.window() < cwnd);
        s.spurious();
        assert_eq!(
            (
                s.window(),
                s.cc.ssthresh(),
                s.cc.w_max(),
                s.cc.k(),
                s.cc.epoch_start()
            ),
            (cwnd, ss, wmax, k, ep)
        );
    }

    #[test]
    fn cubic_no_growth_when_app_limited() {
        // RFC 9438 §5.8 / RFC 7661: no growth when not cwnd-limited, in slow start and in CA;
        // the app-limited time does not count toward t.
        let mut s = sender(no_hystart(), 10, RTT);
        s.set_app_limited(Some(3));
        s.run_rounds(4);
        assert_eq!(s.window(), 10 * MSS as u64);

        let mut s = after_loss_at(no_hystart(), 100, RTT);
        s.run_rounds(1);
        let w = s.window();
        let ep = s.cc.epoch_start().unwrap();
        s.set_app_limited(Some(10));
        s.run_rounds(20);
        assert_eq!(s.window(), w);
        assert_eq!(
            s.cc.epoch_start().unwrap(),
            ep + RTT * 20,
            "epoch shifted by the app-limited time"
        );
    }

    #[test]
    fn cubic_no_growth_in_recovery() {
        // RFC 5681 §3.2 / RFC 6675 §5: ACKs during fast recovery do not grow cwnd.
        let mut s = sender(no_hystart(), 50, RTT);
        s.send_window();
        s.lose_n(1);
        let w = s.window();
        s.advance(RTT);
        s.ack_n(30);
        assert!(s.in_recovery());
        assert_eq!(s.window(), w);
    }

    #[test]
    fn cubic_hystart_leaves_slow_start_on_rtt_increase() {
        // RFC 9406 §4.2 inside CUBIC: an RTT rise of RttThresh enters CSS (growth / 4); after
        // CSS_ROUNDS rounds ssthresh = cwnd. Without HyStart++ the same script stays in slow start.
        for pp in [true, false] {
            let hystart = if pp {
                HyStartMode::HyStartPlusPlus
            } else {
                HyStartMode::Off
            };
            let cfg = CubicConfig::with_hystart(hystart);
            let mut s = sender(cfg, 10, RTT);
            s.run_rounds(2); // cwnd 40, the 40 in flight come back at RTT 100 ms
            s.set_rtt(SimDuration::from_millis(120)); // new segments see 120 ms >= 100 + 12.5 ms
            s.run_for(RTT); // round 3 at 100 ms: cwnd 80, sent with the new RTT
            assert_eq!(s.window(), 80 * MSS as u64);
            s.run_for(SimDuration::from_millis(120)); // round 4: 80 ACKs with 120 ms samples
            if pp {
                assert!(matches!(s.cc.hystart_state(), HyStartState::Css { .. }));
                assert_eq!(s.cc.metrics().state, 1);
                // The 8th sample triggers CSS before its own increase: 7 ACKs add a full
                // segment, the other 73 a quarter each.
                assert!(
                    (pkts(&s) - (80.0 + 7.0 + 73.0 / 4.0)).abs() < 1e-9,
                    "{}",
                    pkts(&s)
                );
                s.run_rounds(5);
                assert_eq!(s.cc.hystart_state(), HyStartState::Done);
                // ssthresh was set to cwnd at the transition; the rest of that round's ACKs grow
                // cwnd in CA by Linux's floor before a loss (1/20 segment per segment, under 5 %
                // of the window in all; W(t + RTT) - W_max = C RTT^3 is less than a segment).
                assert!(s.cc.ssthresh() < u64::MAX);
                assert!(
                    s.window() >= s.cc.ssthresh()
                        && (s.window() as f64) < s.cc.ssthresh() as f64 * 1.05 + MSS as f64,
                    "{} {}",
                    s.window(),
                    s.cc.ssthresh()
                );
                assert_eq!(s.cc.metrics().state, 2);
                // RFC 9438 §4.2: the epoch that follows starts at W_max = cwnd with K = 0.
                assert_eq!(s.cc.k(), 0.0);
                assert!((s.cc.w_max() * MSS as f64 - s.cc.ssthresh() as f64).abs() < MSS as f64);
            } else {
                assert_eq!(s.window(), 160 * MSS as u64);
                s.run_rounds(5);
                assert_eq!(s.cc.ssthresh(), u64::MAX);
            }
        }
    }

    #[test]
    fn cubic_through_any_cc() {
        // AnyCc dispatch reaches CUBIC with RFC 9438 defaults.
        use crate::cc::{AnyCc, CcKind};
        let mut cc = AnyCc::new(CcKind::Cubic, MSS, 10, SimTime::ZERO, 0);
        assert_eq!(cc.kind(), CcKind::Cubic);
        let ev = CongestionEvent {
            bytes_in_flight: 10_000,
            lost_sent_at: SimTime::ZERO,
            ecn: false,
            mss: MSS,
        };
        cc.on_congestion_event(SimTime::ZERO, &ev);
        assert_eq!(cc.window(), 7_000);
        assert_eq!(cc.pacing_rate(), None);
    }

    #[test]
    fn cubic_linux_hystart_takes_the_newest_segments_rtt() {
        // cubictcp_acked gets `sample->rtt_us` = ca_rtt_us, the RTT of the newest segment the
        // ACK covers (tcp_clean_rtx_queue's last_ackt), not the oldest's. A delayed ACK for two
        // segments at 10 Mbit/s: the oldest waited 1.2 ms more. Round 1 sets delay_min = 50 ms
        // (threshold 50 + clamp(50 / 8, 4, 16) = 56.25 ms); in round 2 the oldest segments'
        // RTT is 57 ms but the newest's 55 ms: no exit. In round 3 the newest's is 57 ms: the
        // 9th sample (HYSTART_MIN_SAMPLES + 1) ends slow start, ssthresh = cwnd.
        let mut c = Cubic::new(CubicConfig::default(), MSS, 20);
        let mut delivered = 0;
        let mut t = SimTime::from_millis(100);
        let mut round = |c: &mut Cubic, n: u64, oldest: u64, newest: u64| {
            c.on_sent(t, n * MSS as u64, 0);
            for _ in 0..n / 2 {
                delivered += 2 * MSS as u64;
                t += SimDuration::from_millis(3); // no ACK train
                let ack = Ack {
                    acked_bytes: 2 * MSS as u64,
                    rtt: Some(SimDuration::from_millis(oldest)),
                    srtt: SimDuration::from_millis(50),
                    min_rtt: SimDuration::from_millis(50),
                    delivered,
                    rate: Some(RateSample {
                        rtt: SimDuration::from_millis(newest),
                        ..RateSample::default()
                    }),
                    mss: MSS,
                    ..Ack::default()
                };
                c.on_ack(t, &ack);
                if c.ssthresh != u64::MAX {
                    return;
                }
            }
        };
        round(&mut c, 20, 50, 50);
        round(&mut c, 40, 57, 55);
        assert_eq!(c.ssthresh, u64::MAX, "still in slow start");
        assert!(!c.hystart_found());
        round(&mut c, 80, 58, 57);
        assert!(c.hystart_found());
        assert_eq!(c.ssthresh, c.cwnd as u64);
        // initial 20 + 60 segments acknowledged in rounds 1-2, then 8 ACKs of 2 segments
        // before the 9th in round 3
        assert_eq!(c.ssthresh, (20 + 60 + 16) * MSS as u64);
    }
}
