//! LTE–WLAN aggregation (LWA), the eNB and UE ends of a split bearer (TS 36.300 §22A.1, §22A.3;
//! TS 36.360 LWAAP; the reordering of TS 36.323 §5.1.2.1.4; Pasca et al., "MPTCP over LWA",
//! paper 002 §3).
//!
//! A split LWA bearer's PDCP numbers every downlink SDU as usual and then *steers* the PDU to one
//! of two legs (TS 36.300 §22A.3.1): RLC over the LTE MAC, or the WLAN leg — the PDU in an LWAAP
//! PDU (a one-byte header carrying the DRB identity, TS 36.360 §6.2.2) that crosses the Xw
//! interface to the WLAN termination (the AP) and the BSS to the UE's station. As in the paper
//! (§3: "LWA employs Wi-Fi link to be used only in the downlink"), the WLAN leg carries downlink
//! PDUs only; uplink data and TCP ACKs stay on LTE. A PDU sent on the WLAN leg is released by
//! PDCP at once (nothing on the WLAN confirms delivery to PDCP, like RLC UM).
//!
//! - [`LwaTx`] (eNB): the steering ([`Steering`] behind the closed enum [`AnySteering`]: a static
//!   fraction to the WLAN, [`static_ratio`], or the paper's dynamic scheme, [`dynamic`]); the
//!   link-RTT (LRTT) estimates from probes every `probe_interval` (3 ms in the paper), smoothed
//!   as SLRTT = (1 − α)·LRTT + α·SLRTT with α = 1/Pᵢ (paper §3.2); each leg's loss rate; and the
//!   per-leg counters.
//! - [`LwaRx`] (UE): PDCP reordering across the two legs with t-Reordering
//!   ([`reorder`], TS 36.323 §5.1.2.1.4) set to 2·max(LRTT of Wi-Fi, LRTT of LTE) (paper §4).
//!
//! **Probes.** The paper's probes are small ICMP packets sent by the LWA node's PDCP on each leg
//! every 3 ms, whose responses come back over the LTE uplink. Here a probe rides on a data PDU:
//! the first PDU steered to a leg once that leg's probe is due is marked, and its one-way delay
//! over the leg (eNB PDCP → UE PDCP) plus `probe_return`, the response's way back over the LTE
//! uplink (the same for both legs in the paper, not simulated packet by packet: the caller sets
//! it from the uplink's access delay, e.g. the scenario's mean SR wait + grant delay), is the
//! LRTT sample. The dynamic steering
//! forces a PDU onto a leg whose probe is due, so a leg with a small share is still measured.
//!
//! The model is sans-IO: the caller (the RAN) carries WLAN-leg PDUs ([`LwaTx::take_wlan`]) and
//! reports arrivals at the UE ([`LwaRx::take_feedback`] → [`LwaTx::on_arrival`]).

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimTime};

use crate::pdcp::PdcpPdu;

pub mod dynamic;
pub mod reorder;
pub mod static_ratio;

pub use dynamic::DynamicSteering;
pub use reorder::{LwaRx, ReorderStats};
pub use static_ratio::StaticRatio;

/// Bytes of the LWAAP header that a PDU carries on the WLAN (TS 36.360 §6.2.2: one octet, three
/// reserved bits and the 5-bit DRB identity).
pub const LWAAP_HEADER_BYTES: u32 = 1;

/// The EtherType of LWAAP frames on the WLAN (TS 36.360 §5.1, IEEE registered 0x9E65).
pub const LWAAP_ETHERTYPE: u16 = 0x9E65;

/// The paper's probe interval Pᵢ (§3.2: "generated at an interval of 3msec").
pub const PAPER_PROBE_INTERVAL: SimDuration = SimDuration::from_millis(3);

/// One of the two legs of a split LWA bearer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LwaLeg {
    /// RLC over the LTE MAC.
    Lte = 0,
    /// LWAAP over Xw and the WLAN.
    Wlan = 1,
}

impl LwaLeg {
    /// Both legs, LTE first.
    pub const BOTH: [LwaLeg; 2] = [LwaLeg::Lte, LwaLeg::Wlan];

    fn idx(self) -> usize {
        self as usize
    }
}

/// Which steering a split bearer uses (the scenario's `steering = "static" | "dynamic"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SteeringKind {
    /// A fixed fraction of PDUs to the WLAN leg ([`StaticRatio`]).
    Static { wlan_fraction: f64 },
    /// The paper's dynamic scheme from SLRTT and loss rates ([`DynamicSteering`]); the steering
    /// window holds at most `max_window` PDUs.
    Dynamic { max_window: u32 },
}

/// Configuration of one split LWA bearer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LwaConfig {
    pub steering: SteeringKind,
    /// Probe interval Pᵢ (paper §3.2: 3 ms). α = 1/Pᵢ with Pᵢ in milliseconds, at most 1.
    pub probe_interval: SimDuration,
    /// t-Reordering at the UE before any LRTT is known (TS 36.331 `t-Reordering`; the paper's
    /// 2·max(LRTT) takes over with the first probes of both legs).
    pub t_reordering_initial: SimDuration,
    /// A fixed t-Reordering instead of 2·max(LRTT) (`None`: the paper's rule).
    pub t_reordering_fixed: Option<SimDuration>,
    /// The probe response's return time over the LTE uplink, added to each probe's forward
    /// delay to make its LRTT sample.
    pub probe_return: SimDuration,
}

impl Default for LwaConfig {
    fn default() -> Self {
        LwaConfig {
            steering: SteeringKind::Dynamic { max_window: 10 },
            probe_interval: PAPER_PROBE_INTERVAL,
            t_reordering_initial: SimDuration::from_millis(50),
            t_reordering_fixed: None,
            probe_return: SimDuration::ZERO,
        }
    }
}

impl LwaConfig {
    /// Checks the values; the message names the field, the value and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        match self.steering {
            SteeringKind::Static { wlan_fraction } if !(0.0..=1.0).contains(&wlan_fraction) => {
                return Err(format!("lwa ratio = {wlan_fraction}: expected a fraction of PDUs to the WLAN in [0, 1]"))
            }
            SteeringKind::Dynamic { max_window } if max_window < 2 => {
                return Err(format!("lwa window = {max_window}: expected at least 2 PDUs (one per leg)"))
            }
            _ => {}
        }
        if self.probe_interval < SimDuration::from_millis(1) {
            return Err(format!("lwa probe_interval = {}: expected at least 1ms", self.probe_interval));
        }
        Ok(())
    }

    /// α = 1/Pᵢ (paper §3.2), with Pᵢ in milliseconds.
    pub fn alpha(&self) -> f64 {
        (1e6 / self.probe_interval.as_nanos() as f64).min(1.0)
    }
}

/// What the steering sees of the legs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LegState {
    /// Smoothed link RTT per leg (index [`LwaLeg`]), `None` before the first probe.
    pub slrtt: [Option<SimDuration>; 2],
    /// Packet loss rate per leg, in [0, 1].
    pub loss: [f64; 2],
    /// Whether a leg's probe is due (its next PDU carries the probe).
    pub probe_due: [bool; 2],
}

/// A steering algorithm: which leg the next PDU takes.
pub trait Steering {
    /// The leg of the next downlink PDU.
    fn steer(&mut self, now: SimTime, legs: &LegState) -> LwaLeg;
}

/// The steering algorithms (closed-enum dispatch).
#[derive(Clone, Debug)]
pub enum AnySteering {
    Static(StaticRatio),
    Dynamic(DynamicSteering),
}

impl AnySteering {
    pub fn new(kind: SteeringKind) -> Self {
        match kind {
            SteeringKind::Static { wlan_fraction } => AnySteering::Static(StaticRatio::new(wlan_fraction)),
            SteeringKind::Dynamic { max_window } => AnySteering::Dynamic(DynamicSteering::new(max_window)),
        }
    }
}

impl Steering for AnySteering {
    fn steer(&mut self, now: SimTime, legs: &LegState) -> LwaLeg {
        match self {
            AnySteering::Static(s) => s.steer(now, legs),
            AnySteering::Dynamic(s) => s.steer(now, legs),
        }
    }
}

/// Counters of one split bearer's eNB end, per leg (index [`LwaLeg`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LwaTxStats {
    /// PDUs steered to each leg.
    pub pdus: [u64; 2],
    /// PDCP PDU bytes steered to each leg (the LWAAP header not included).
    pub bytes: [u64; 2],
    /// PDUs that reached the UE's PDCP over each leg.
    pub arrived: [u64; 2],
    /// PDUs presumed lost on each leg (a later PDU of the same leg arrived first).
    pub lost: [u64; 2],
    /// Sum and maximum of the one-way leg delay (eNB PDCP → UE PDCP) of arrived PDUs, seconds.
    pub delay_sum_s: [f64; 2],
    pub delay_max_s: [f64; 2],
    /// Probes (marked PDUs) that came back with an LRTT sample.
    pub probes: [u64; 2],
}

impl LwaTxStats {
    /// Mean one-way delay of leg `leg`, seconds.
    pub fn mean_delay_s(&self, leg: LwaLeg) -> Option<f64> {
        let i = leg.idx();
        (self.arrived[i] > 0).then(|| self.delay_sum_s[i] / self.arrived[i] as f64)
    }
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    count: u32,
    at: SimTime,
    probe: bool,
}

/// The eNB end of a split LWA bearer: steering, LRTT and loss estimation, the WLAN leg's queue.
#[derive(Clone, Debug)]
pub struct LwaTx<P> {
    cfg: LwaConfig,
    steering: AnySteering,
    legs: LegState,
    next_probe_at: [SimTime; 2],
    /// PDUs sent on each leg and not yet reported, in COUNT order.
    sent: [VecDeque<Sent>; 2],
    /// PDUs steered to the WLAN, for the caller to carry.
    wlan_out: Vec<PdcpPdu<P>>,
    stats: LwaTxStats,
}

/// Weight of one outcome in the loss-rate average (1/16: an implementation choice; the paper
/// takes "the packet loss rate" of each link without saying over what span).
const LOSS_GAIN: f64 = 1.0 / 16.0;

impl<P: Copy> LwaTx<P> {
    pub fn new(cfg: LwaConfig) -> Self {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        LwaTx {
            cfg,
            steering: AnySteering::new(cfg.steering),
            legs: LegState::default(),
            next_probe_at: [SimTime::ZERO; 2],
            sent: [VecDeque::new(), VecDeque::new()],
            wlan_out: Vec::new(),
            stats: LwaTxStats::default(),
        }
    }

    pub fn config(&self) -> &LwaConfig {
        &self.cfg
    }

    /// Steers a numbered PDU (TS 36.300 §22A.3.1). A WLAN PDU is queued for [`take_wlan`]
    /// (Self::take_wlan); an LTE PDU is the caller's to hand to RLC.
    pub fn steer(&mut self, now: SimTime, pdu: PdcpPdu<P>) -> LwaLeg {
        for leg in LwaLeg::BOTH {
            self.legs.probe_due[leg.idx()] = now >= self.next_probe_at[leg.idx()];
        }
        let leg = self.steering.steer(now, &self.legs);
        let i = leg.idx();
        let probe = self.legs.probe_due[i];
        if probe {
            self.next_probe_at[i] = now + self.cfg.probe_interval;
        }
        self.sent[i].push_back(Sent { count: pdu.count, at: now, probe });
        self.stats.pdus[i] += 1;
        self.stats.bytes[i] += u64::from(pdu.bytes);
        if leg == LwaLeg::Wlan {
            self.wlan_out.push(pdu);
        }
        leg
    }

    /// PDUs steered to the WLAN since the last call, in order.
    pub fn take_wlan(&mut self, out: &mut Vec<PdcpPdu<P>>) {
        out.append(&mut self.wlan_out);
    }

    /// Whether PDUs wait for [`take_wlan`](Self::take_wlan).
    pub fn has_wlan(&self) -> bool {
        !self.wlan_out.is_empty()
    }

    /// The PDU with COUNT `count` reached the UE's PDCP over `leg` at `now`: the leg delay, an
    /// LRTT sample if it carried a probe, and the PDUs of the leg sent before it and not
    /// reported are counted lost (each leg delivers in order: RLC AM/UM in order, the Xw link
    /// and the AP's queue first in, first out).
    pub fn on_arrival(&mut self, now: SimTime, leg: LwaLeg, count: u32) {
        let i = leg.idx();
        let alpha = self.cfg.alpha();
        while let Some(s) = self.sent[i].front().copied() {
            if s.count.wrapping_sub(count) as i32 > 0 {
                return; // a late PDU already counted lost
            }
            self.sent[i].pop_front();
            let loss = &mut self.legs.loss[i];
            if s.count != count {
                self.stats.lost[i] += 1;
                *loss += LOSS_GAIN * (1.0 - *loss);
                continue;
            }
            *loss -= LOSS_GAIN * *loss;
            let d = now.saturating_since(s.at);
            let ds = d.as_secs_f64();
            self.stats.arrived[i] += 1;
            self.stats.delay_sum_s[i] += ds;
            self.stats.delay_max_s[i] = self.stats.delay_max_s[i].max(ds);
            if s.probe {
                self.stats.probes[i] += 1;
                let d = d + self.cfg.probe_return;
                // paper §3.2: SLRTT = (1 − α)·LRTT + α·SLRTT, α = 1/Pᵢ
                self.legs.slrtt[i] = Some(match self.legs.slrtt[i] {
                    None => d,
                    Some(old) => SimDuration::from_nanos(
                        ((1.0 - alpha) * d.as_nanos() as f64 + alpha * old.as_nanos() as f64).round() as u64,
                    ),
                });
            }
            return;
        }
    }

    /// What the steering sees: SLRTT and loss rate per leg.
    pub fn leg_state(&self) -> &LegState {
        &self.legs
    }

    /// t-Reordering for the UE: 2·max(SLRTT of Wi-Fi, SLRTT of LTE) (paper §4) once both legs
    /// have been probed, else the configured initial value; or the fixed value if one is set.
    pub fn t_reordering(&self) -> SimDuration {
        if let Some(t) = self.cfg.t_reordering_fixed {
            return t;
        }
        match self.legs.slrtt {
            [Some(a), Some(b)] => SimDuration::from_nanos(2 * a.as_nanos().max(b.as_nanos())),
            _ => self.cfg.t_reordering_initial,
        }
    }

    pub fn stats(&self) -> &LwaTxStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdu(count: u32) -> PdcpPdu<u32> {
        PdcpPdu { sn: count & 4095, count, sdu: count, sdu_bytes: 1000, bytes: 1002 }
    }

    // Paper §3.2: SLRTT = (1 − α)·LRTT + α·SLRTT with α = 1/Pᵢ; Pᵢ = 3 ms gives α = 1/3.
    #[test]
    fn lwa_slrtt_is_the_papers_ewma() {
        let cfg = LwaConfig { steering: SteeringKind::Static { wlan_fraction: 1.0 }, ..LwaConfig::default() };
        assert!((cfg.alpha() - 1.0 / 3.0).abs() < 1e-12);
        let mut tx = LwaTx::<u32>::new(cfg);
        let t0 = SimTime::ZERO;
        assert_eq!(tx.steer(t0, pdu(0)), LwaLeg::Wlan);
        tx.on_arrival(t0 + SimDuration::from_millis(9), LwaLeg::Wlan, 0);
        assert_eq!(tx.leg_state().slrtt[1], Some(SimDuration::from_millis(9)), "first sample taken as is");
        // not a probe (sent before the next probe is due): no sample
        tx.steer(t0 + SimDuration::from_millis(1), pdu(1));
        tx.on_arrival(t0 + SimDuration::from_millis(20), LwaLeg::Wlan, 1);
        assert_eq!(tx.leg_state().slrtt[1], Some(SimDuration::from_millis(9)));
        // the probe at 3 ms sees 3 ms: SLRTT = 2/3·3 + 1/3·9 = 5 ms
        tx.steer(t0 + SimDuration::from_millis(3), pdu(2));
        tx.on_arrival(t0 + SimDuration::from_millis(6), LwaLeg::Wlan, 2);
        assert_eq!(tx.leg_state().slrtt[1], Some(SimDuration::from_millis(5)));
        assert_eq!(tx.stats().probes[1], 2);
        assert_eq!(tx.stats().arrived[1], 3);
        // t-Reordering: only the WLAN is probed, so the initial value stays
        assert_eq!(tx.t_reordering(), cfg.t_reordering_initial);
    }

    // A PDU of a leg that arrives after a later one of the same leg was reported is counted lost
    // once, and the loss rate moves towards 1 by LOSS_GAIN per loss.
    #[test]
    fn lwa_counts_leg_losses_in_order() {
        let cfg = LwaConfig { steering: SteeringKind::Static { wlan_fraction: 1.0 }, ..LwaConfig::default() };
        let mut tx = LwaTx::<u32>::new(cfg);
        for c in 0..4 {
            tx.steer(SimTime::ZERO, pdu(c));
        }
        let mut q = Vec::new();
        tx.take_wlan(&mut q);
        assert_eq!(q.len(), 4);
        tx.on_arrival(SimTime::from_millis(5), LwaLeg::Wlan, 2);
        assert_eq!(tx.stats().lost[1], 2);
        assert!((tx.leg_state().loss[1] - (1.0 - (1.0 - LOSS_GAIN).powi(2)) * (1.0 - LOSS_GAIN)).abs() < 1e-12);
        tx.on_arrival(SimTime::from_millis(6), LwaLeg::Wlan, 1); // late: ignored
        tx.on_arrival(SimTime::from_millis(6), LwaLeg::Wlan, 3);
        assert_eq!((tx.stats().lost[1], tx.stats().arrived[1]), (2, 2));
    }

    // Paper §4: t-Reordering = 2·max(LRTT of Wi-Fi, LRTT of LTE).
    #[test]
    fn lwa_t_reordering_is_twice_the_larger_lrtt() {
        let mut tx = LwaTx::<u32>::new(LwaConfig { steering: SteeringKind::Dynamic { max_window: 10 }, ..LwaConfig::default() });
        let t0 = SimTime::ZERO;
        // both probes are due at 0: the dynamic steering puts the first PDU on each leg
        let a = tx.steer(t0, pdu(0));
        let b = tx.steer(t0, pdu(1));
        assert_ne!(a, b, "one probe per leg");
        let (lte, wlan) = if a == LwaLeg::Lte { (0, 1) } else { (1, 0) };
        tx.on_arrival(t0 + SimDuration::from_millis(12), LwaLeg::Lte, lte);
        tx.on_arrival(t0 + SimDuration::from_millis(4), LwaLeg::Wlan, wlan);
        assert_eq!(tx.t_reordering(), SimDuration::from_millis(24));
    }

    #[test]
    fn lwa_config_errors_name_the_value() {
        let bad = LwaConfig { steering: SteeringKind::Static { wlan_fraction: 1.5 }, ..LwaConfig::default() };
        assert!(bad.validate().unwrap_err().contains("ratio = 1.5"));
        let bad = LwaConfig { steering: SteeringKind::Dynamic { max_window: 1 }, ..LwaConfig::default() };
        assert!(bad.validate().unwrap_err().contains("window = 1"));
    }
}
