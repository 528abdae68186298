//! The congestion-control interface and its algorithms, one file each.
//!
//! The sender owns the loss detection, recovery and RTT machinery (RFC 6675, RFC 6582, RFC 6298)
//! and tells its controller what happened through the small, event-named [`Controller`] trait; the
//! controller owns its state (cwnd, ssthresh, filters) and the sender asks it for [`Controller::window`]
//! and [`Controller::pacing_rate`]. A controller never writes socket fields.
//!
//! Dispatch is a closed enum, [`AnyCc`], selected by the `Copy` [`CcKind`] that parses from the
//! names users write (`"newreno"`, `"cubic"`, `"bbr"`), and built from a [`CcConfig`]: the kind
//! with its algorithm's parameters (`cc = { name = "cubic", beta = 0.5 }` in a scenario).
//! [`AnyCc`] implements [`Controller`] by forwarding every call to [`AnyCc::inner`] /
//! [`AnyCc::inner_mut`], the one `match` over the variants (smoltcp's `AnyController::inner`).
//!
//! Units: windows and byte counts are bytes; rates are bytes per second; times are [`SimTime`].

use celltcp_engine::{SimDuration, SimTime};

pub use params::CcConfig;

pub mod bbr;
pub mod bic;
pub mod coupled;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod hystart;
pub mod hystart_linux;
pub mod illinois;
pub mod loss_window;
pub mod lp;
pub mod minmax;
pub mod newreno;
pub mod params;
pub mod round;
pub mod scalable;
#[cfg(test)]
pub mod test_sender;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

/// One delivery-rate sample, computed by the sender per
/// draft-cheng-iccrg-delivery-rate-estimation-02 §3.3 when an ACK newly delivers data.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// `delivered / interval`, bytes per second (0 when `interval` is zero).
    pub delivery_rate: f64,
    /// Bytes delivered over `interval` (`C.delivered - P.delivered`).
    pub delivered: u64,
    /// `P.delivered`: the connection's delivered count when the newest acknowledged packet was sent.
    pub prior_delivered: u64,
    /// `max(send_elapsed, ack_elapsed)`, or zero when the sample is not a reliable rate
    /// (§3.3: shorter than min_rtt); the other fields are valid either way.
    pub interval: SimDuration,
    /// The RTT of the newest packet acknowledged by this ACK.
    pub rtt: SimDuration,
    /// True when the sample was taken while the sender was application-limited.
    pub is_app_limited: bool,
    /// Bytes in flight when the newest acknowledged packet was sent.
    pub tx_in_flight: u64,
    /// Bytes newly marked lost by this ACK.
    pub newly_lost: u64,
}

/// What an ACK did, as the controller sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ack {
    /// Bytes newly acknowledged (cumulatively or by SACK) by this ACK.
    pub acked_bytes: u64,
    /// Bytes in flight before this ACK was processed.
    pub prior_in_flight: u64,
    /// Bytes in flight after it.
    pub bytes_in_flight: u64,
    /// The RTT sample this ACK gave (RFC 7323 timestamps or Karn-safe timing), if any.
    pub rtt: Option<SimDuration>,
    /// The smoothed RTT (RFC 6298) after this ACK.
    pub srtt: SimDuration,
    /// The minimum RTT seen by the connection.
    pub min_rtt: SimDuration,
    /// Total bytes delivered by the connection so far (`C.delivered`).
    pub delivered: u64,
    /// The delivery-rate sample: present whenever this ACK delivered data (an unreliable rate is
    /// marked by a zero `interval`, not by leaving the sample out).
    pub rate: Option<RateSample>,
    /// True while the sender is in fast recovery (the controller should not grow cwnd:
    /// RFC 5681 §3.2 / RFC 6675 §5).
    pub in_recovery: bool,
    /// True when the sender did not fill the window before this ACK (RFC 7661 / Linux
    /// `tcp_is_cwnd_limited`): loss-based controls do not grow cwnd then.
    pub app_limited: bool,
    /// Sender MSS in bytes.
    pub mss: u32,
    /// The earliest departure time of the sender's next transmission (Linux `tcp_wstamp_ns`, as
    /// `bbr_packets_in_net_at_edt` reads it): ahead of `now` while pacing holds the next burst;
    /// any time not after `now` (the default) means nothing is held.
    pub next_departure: SimTime,
}

/// A loss detected by duplicate ACKs or SACK: the start of one congestion event
/// (one per window of data, RFC 5681 §3.2 / RFC 6675 §5).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CongestionEvent {
    /// Bytes in flight when the loss was detected (FlightSize of RFC 5681 eq. 4).
    pub bytes_in_flight: u64,
    /// When the lost segment was sent.
    pub lost_sent_at: SimTime,
    /// True for an ECN echo (RFC 3168 §6.1.2) rather than a loss.
    pub ecn: bool,
    pub mss: u32,
}

/// Whether a retransmission timeout may reduce ssthresh: the sender decides, because the rule
/// depends on its recovery state, once for every controller (Linux `tcp_enter_loss`,
/// net/ipv4/tcp_input.c: "Reduce ssthresh if it has not yet been made inside this window").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoSsthresh {
    /// Recompute ssthresh (RFC 5681 §3.1 eq. 4, or the controller's own decrease) and save the
    /// state before it for an undo; a controller still holds ssthresh for a repeated timeout of
    /// the same data (RFC 5681's note on eq. 4, [`loss_window::LossWindow::on_rto`]).
    Reduce,
    /// Keep ssthresh and the undo state of the reduction already made in this window of data
    /// (the sender is in a fast recovery whose recovery point is not yet acknowledged, or in
    /// ECN's CWR): only cwnd drops to the loss window.
    Hold,
}

/// The ECN feedback of one ACK that acknowledged data, on a connection that negotiated ECN
/// (RFC 3168 §6.1); given to the controller before [`Controller::on_ack`]. DCTCP estimates the
/// marked fraction from it (RFC 8257 §3.3). Sequence numbers are absolute (our SYN is 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EcnFeedback {
    /// Bytes newly acknowledged (cumulatively or by SACK) by this ACK.
    pub acked_bytes: u64,
    /// The ACK carried ECE.
    pub ece: bool,
    /// SND.UNA after this ACK, and SND.NXT.
    pub snd_una: u64,
    pub snd_nxt: u64,
}

/// A snapshot of controller state for time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcMetrics {
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: u64,
    /// Bytes per second, when the controller paces.
    pub pacing_rate: Option<f64>,
    /// Algorithm state as a small integer (e.g. BBR mode), for traces.
    pub state: u8,
}

/// A congestion controller. Every method takes `now` first; defaults are no-ops where that is
/// safe.
pub trait Controller {
    /// A segment of `bytes` left the sender with `bytes_in_flight` outstanding after it.
    fn on_sent(&mut self, _now: SimTime, _bytes: u64, _bytes_in_flight: u64) {}
    /// An ACK acknowledged new data (cumulatively or by SACK).
    fn on_ack(&mut self, now: SimTime, ack: &Ack);
    /// ECN feedback of an ACK that acknowledged data (ECN connections only), before `on_ack`.
    fn on_ecn_feedback(&mut self, _now: SimTime, _fb: &EcnFeedback) {}
    /// Loss detected by duplicate ACKs/SACK (or an ECN echo): fast retransmit and recovery
    /// begin. Called once per congestion event.
    fn on_congestion_event(&mut self, now: SimTime, ev: &CongestionEvent);
    /// Fast recovery ended (the recovery point was cumulatively acknowledged).
    fn on_recovery_exit(&mut self, _now: SimTime) {}
    /// The retransmission timer expired (RFC 5681 §3.1 eq. 4, cwnd to the loss window); `ss`
    /// says whether ssthresh may be recomputed ([`RtoSsthresh`]).
    fn on_rto(&mut self, now: SimTime, bytes_in_flight: u64, mss: u32, ss: RtoSsthresh);
    /// The last congestion event was spurious (e.g. detected with timestamps, RFC 3522): undo it.
    fn on_spurious(&mut self, _now: SimTime) {}
    /// The congestion window in bytes.
    fn window(&self) -> u64;
    /// The slow-start threshold in bytes (`u64::MAX` when unset).
    fn ssthresh(&self) -> u64;
    /// The pacing rate in bytes per second, or `None` to send as the window allows.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    /// The fewest segments a paced burst carries (Linux `ca_ops->min_tso_segs`, else the
    /// `tcp_min_tso_segs` sysctl, 2); see [`crate::pacing`].
    fn min_tso_segs(&self) -> u32 {
        crate::pacing::MIN_TSO_SEGS
    }
    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.window(),
            ssthresh_bytes: self.ssthresh(),
            pacing_rate: self.pacing_rate(),
            state: 0,
        }
    }
}

/// Which congestion control a flow uses; what users and Python see. Serialised as its
/// [`CcKind::name`]; deserialised through [`std::str::FromStr`], so a scenario file accepts
/// exactly the names and aliases (`reno`, `tcp-lp`, `westwood+`, any case) that `parse` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum CcKind {
    NewReno,
    Cubic,
    Bbr,
    Scalable,
    HighSpeed,
    Htcp,
    Hybla,
    Vegas,
    Veno,
    Westwood,
    WestwoodPlain,
    Bic,
    Illinois,
    Yeah,
    Lp,
    Dctcp,
    /// The subflow half of an MPTCP coupled control ([`coupled`]); built only by `celltcp-mptcp`,
    /// so it is not in [`CcKind::ALL`] and its name does not parse.
    Coupled,
}

impl CcKind {
    pub const ALL: [CcKind; 16] = [
        CcKind::NewReno,
        CcKind::Cubic,
        CcKind::Bbr,
        CcKind::Scalable,
        CcKind::HighSpeed,
        CcKind::Htcp,
        CcKind::Hybla,
        CcKind::Vegas,
        CcKind::Veno,
        CcKind::Westwood,
        CcKind::WestwoodPlain,
        CcKind::Bic,
        CcKind::Illinois,
        CcKind::Yeah,
        CcKind::Lp,
        CcKind::Dctcp,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CcKind::NewReno => "newreno",
            CcKind::Cubic => "cubic",
            CcKind::Bbr => "bbr",
            CcKind::Scalable => "scalable",
            CcKind::HighSpeed => "highspeed",
            CcKind::Htcp => "htcp",
            CcKind::Hybla => "hybla",
            CcKind::Vegas => "vegas",
            CcKind::Veno => "veno",
            CcKind::Westwood => "westwood",
            CcKind::WestwoodPlain => "westwoodplain",
            CcKind::Bic => "bic",
            CcKind::Illinois => "illinois",
            CcKind::Yeah => "yeah",
            CcKind::Lp => "lp",
            CcKind::Dctcp => "dctcp",
            CcKind::Coupled => "coupled",
        }
    }

    /// Whether the algorithm needs ECN (RFC 8257 §3: DCTCP); such a flow negotiates ECN even
    /// when [`crate::TcpConfig::ecn`] is off.
    pub fn needs_ecn(self) -> bool {
        matches!(self, CcKind::Dctcp)
    }

    /// One line per algorithm, for `celltcp list cc`.
    pub fn describe(self) -> &'static str {
        match self {
            CcKind::NewReno => "NewReno: AIMD slow start / congestion avoidance (RFC 5681, RFC 6582)",
            CcKind::Cubic => "CUBIC: cubic window growth with Reno-friendly region and HyStart++ (RFC 9438, RFC 9406)",
            CcKind::Bbr => "BBR v1: model-based, paced at the estimated bottleneck bandwidth (Cardwell et al. 2016)",
            CcKind::Scalable => "Scalable TCP: MIMD, +0.01 MSS per ACK, cut by 1/8 (Kelly 2003)",
            CcKind::HighSpeed => "HighSpeed TCP: a(w), b(w) from the response function (RFC 3649)",
            CcKind::Htcp => "H-TCP: increase grows with time since the last loss, adaptive backoff (Leith & Shorten 2004)",
            CcKind::Hybla => "Hybla: growth scaled by (RTT/25 ms)^2 for long-RTT paths (Caini & Firrincieli 2004)",
            CcKind::Vegas => "Vegas: keeps alpha..beta segments queued from expected vs actual rate (Brakmo & Peterson 1995)",
            CcKind::Veno => "Veno: Vegas backlog estimate tells random from congestive loss (Fu & Liew 2003)",
            CcKind::Westwood => "Westwood+: ssthresh from the filtered bandwidth estimate after a loss (Grieco & Mascolo 2004)",
            CcKind::WestwoodPlain => "Westwood: as Westwood+ but per-ACK bandwidth samples through a low-pass filter (Mascolo et al. 2001)",
            CcKind::Bic => "BIC: binary search toward the last loss window, max probing beyond it, cut to 0.8 (Xu, Harfoush & Rhee 2004)",
            CcKind::Illinois => "Illinois: increase 10..0.3 and decrease 1/8..1/2 set by the average queueing delay (Liu, Basar & Srikant 2006)",
            CcKind::Yeah => "YeAH: Scalable growth while the queue is short, Reno plus queue draining otherwise (Baiocchi et al. 2007)",
            CcKind::Lp => "TCP-LP: low priority, halves when the one-way delay passes 15 % of its range, 1 MSS if again within 3 RTT (Kuzmanovic & Knightly 2003)",
            CcKind::Dctcp => "DCTCP: cwnd cut by alpha/2, alpha = EWMA of the CE-marked fraction; turns ECN on (RFC 8257)",
            CcKind::Coupled => "MPTCP subflow: Reno with the increase and decrease set by the connection (LIA/OLIA/BALIA)",
        }
    }
}

impl std::str::FromStr for CcKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "newreno" | "reno" => Ok(CcKind::NewReno),
            "cubic" => Ok(CcKind::Cubic),
            "bbr" | "bbr1" | "bbrv1" => Ok(CcKind::Bbr),
            "scalable" => Ok(CcKind::Scalable),
            "highspeed" => Ok(CcKind::HighSpeed),
            "htcp" => Ok(CcKind::Htcp),
            "hybla" => Ok(CcKind::Hybla),
            "vegas" => Ok(CcKind::Vegas),
            "veno" => Ok(CcKind::Veno),
            "westwood" | "westwoodplus" | "westwood+" => Ok(CcKind::Westwood),
            "westwoodplain" | "westwood-plain" => Ok(CcKind::WestwoodPlain),
            "bic" => Ok(CcKind::Bic),
            "illinois" => Ok(CcKind::Illinois),
            "yeah" => Ok(CcKind::Yeah),
            "lp" | "tcp-lp" | "tcplp" => Ok(CcKind::Lp),
            "dctcp" => Ok(CcKind::Dctcp),
            _ => Err(format!(
                "expected one of {}; got {s:?}",
                CcKind::ALL
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl TryFrom<String> for CcKind {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl std::fmt::Display for CcKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Closed-enum dispatch over the algorithms.
#[derive(Clone, Debug)]
pub enum AnyCc {
    NewReno(newreno::NewReno),
    Cubic(cubic::Cubic),
    Bbr(bbr::Bbr),
    Scalable(scalable::Scalable),
    HighSpeed(highspeed::HighSpeed),
    Htcp(htcp::Htcp),
    Hybla(hybla::Hybla),
    Vegas(vegas::Vegas),
    Veno(veno::Veno),
    Westwood(westwood::Westwood),
    /// Original Westwood: the same controller with `WestwoodConfig { plus: false }`.
    WestwoodPlain(westwood::Westwood),
    Bic(bic::Bic),
    Illinois(illinois::Illinois),
    Yeah(yeah::Yeah),
    Lp(lp::Lp),
    Dctcp(dctcp::Dctcp),
    Coupled(coupled::Coupled),
}

impl AnyCc {
    /// A controller built from `cfg` (a [`CcKind`] converts to its defaults), for a sender with
    /// `mss` and an initial window of `initial_cwnd_pkts` segments (RFC 6928: 10). `seed` seeds
    /// the controller's random choices (BBR's PROBE_BW start phase; unused by the others): give
    /// each connection its own ([`crate::TcpConfig::cc_seed`]).
    pub fn new(
        cfg: impl Into<CcConfig>,
        mss: u32,
        initial_cwnd_pkts: u32,
        now: SimTime,
        seed: u64,
    ) -> Self {
        let iw = initial_cwnd_pkts;
        match cfg.into() {
            CcConfig::NewReno(c) => AnyCc::NewReno(newreno::NewReno::new(c, mss, iw)),
            CcConfig::Cubic(c) => AnyCc::Cubic(cubic::Cubic::new(c, mss, iw)),
            CcConfig::Bbr(c) => {
                AnyCc::Bbr(bbr::Bbr::new(bbr::BbrConfig { seed, ..c }, mss, iw, now))
            }
            CcConfig::Scalable(c) => AnyCc::Scalable(scalable::Scalable::new(c, mss, iw)),
            CcConfig::HighSpeed(c) => AnyCc::HighSpeed(highspeed::HighSpeed::new(c, mss, iw)),
            CcConfig::Htcp(c) => AnyCc::Htcp(htcp::Htcp::new(c, mss, iw)),
            CcConfig::Hybla(c) => AnyCc::Hybla(hybla::Hybla::new(c, mss, iw)),
            CcConfig::Vegas(c) => AnyCc::Vegas(vegas::Vegas::new(c, mss, iw)),
            CcConfig::Veno(c) => AnyCc::Veno(veno::Veno::new(c, mss, iw)),
            CcConfig::Westwood(c) => AnyCc::Westwood(westwood::Westwood::new(c, mss, iw)),
            CcConfig::WestwoodPlain(c) => AnyCc::WestwoodPlain(westwood::Westwood::new(c, mss, iw)),
            CcConfig::Bic(c) => AnyCc::Bic(bic::Bic::new(c, mss, iw)),
            CcConfig::Illinois(c) => AnyCc::Illinois(illinois::Illinois::new(c, mss, iw)),
            CcConfig::Yeah(c) => AnyCc::Yeah(yeah::Yeah::new(c, mss, iw)),
            CcConfig::Lp(c) => AnyCc::Lp(lp::Lp::new(c, mss, iw)),
            CcConfig::Dctcp(c) => AnyCc::Dctcp(dctcp::Dctcp::new(c, mss, iw)),
            CcConfig::Coupled(c) => AnyCc::Coupled(coupled::Coupled::new(c, mss, iw)),
        }
    }

    pub fn kind(&self) -> CcKind {
        match self {
            AnyCc::NewReno(_) => CcKind::NewReno,
            AnyCc::Cubic(_) => CcKind::Cubic,
            AnyCc::Bbr(_) => CcKind::Bbr,
            AnyCc::Scalable(_) => CcKind::Scalable,
            AnyCc::HighSpeed(_) => CcKind::HighSpeed,
            AnyCc::Htcp(_) => CcKind::Htcp,
            AnyCc::Hybla(_) => CcKind::Hybla,
            AnyCc::Vegas(_) => CcKind::Vegas,
            AnyCc::Veno(_) => CcKind::Veno,
            AnyCc::Westwood(_) => CcKind::Westwood,
            AnyCc::WestwoodPlain(_) => CcKind::WestwoodPlain,
            AnyCc::Bic(_) => CcKind::Bic,
            AnyCc::Illinois(_) => CcKind::Illinois,
            AnyCc::Yeah(_) => CcKind::Yeah,
            AnyCc::Lp(_) => CcKind::Lp,
            AnyCc::Dctcp(_) => CcKind::Dctcp,
            AnyCc::Coupled(_) => CcKind::Coupled,
        }
    }

    /// The controller inside, as the trait (smoltcp `AnyController::inner`).
    #[inline]
    pub fn inner(&self) -> &dyn Controller {
        match self {
            AnyCc::NewReno(c) => c,
            AnyCc::Cubic(c) => c,
            AnyCc::Bbr(c) => c,
            AnyCc::Scalable(c) => c,
            AnyCc::HighSpeed(c) => c,
            AnyCc::Htcp(c) => c,
            AnyCc::Hybla(c) => c,
            AnyCc::Vegas(c) => c,
            AnyCc::Veno(c) => c,
            AnyCc::Westwood(c) | AnyCc::WestwoodPlain(c) => c,
            AnyCc::Bic(c) => c,
            AnyCc::Illinois(c) => c,
            AnyCc::Yeah(c) => c,
            AnyCc::Lp(c) => c,
            AnyCc::Dctcp(c) => c,
            AnyCc::Coupled(c) => c,
        }
    }

    /// The controller inside, mutably.
    #[inline]
    pub fn inner_mut(&mut self) -> &mut dyn Controller {
        match self {
            AnyCc::NewReno(c) => c,
            AnyCc::Cubic(c) => c,
            AnyCc::Bbr(c) => c,
            AnyCc::Scalable(c) => c,
            AnyCc::HighSpeed(c) => c,
            AnyCc::Htcp(c) => c,
            AnyCc::Hybla(c) => c,
            AnyCc::Vegas(c) => c,
            AnyCc::Veno(c) => c,
            AnyCc::Westwood(c) | AnyCc::WestwoodPlain(c) => c,
            AnyCc::Bic(c) => c,
            AnyCc::Illinois(c) => c,
            AnyCc::Yeah(c) => c,
            AnyCc::Lp(c) => c,
            AnyCc::Dctcp(c) => c,
            AnyCc::Coupled(c) => c,
        }
    }
}

impl AnyCc {
    /// The MPTCP coupled controller, when this is one (for the connection to set its
    /// [`coupled::Coupling`]).
    pub fn as_coupled_mut(&mut self) -> Option<&mut coupled::Coupled> {
        match self {
            AnyCc::Coupled(c) => Some(c),
            _ => None,
        }
    }
}

impl Controller for AnyCc {
    fn on_sent(&mut self, now: SimTime, bytes: u64, in_flight: u64) {
        self.inner_mut().on_sent(now, bytes, in_flight)
    }
    fn on_ack(&mut self, now: SimTime, ack: &Ack) {
        self.inner_mut().on_ack(now, ack)
    }
    fn on_ecn_feedback(&mut self, now: SimTime, fb: &EcnFeedback) {
        self.inner_mut().on_ecn_feedback(now, fb)
    }
    fn on_congestion_event(&mut self, now: SimTime, ev: &CongestionEvent) {
        self.inner_mut().on_congestion_event(now, ev)
    }
    fn on_recovery_exit(&mut self, now: SimTime) {
        self.inner_mut().on_recovery_exit(now)
    }
    fn on_rto(&mut self, now: SimTime, in_flight: u64, mss: u32, ss: RtoSsthresh) {
        self.inner_mut().on_rto(now, in_flight, mss, ss)
    }
    fn on_spurious(&mut self, now: SimTime) {
        self.inner_mut().on_spurious(now)
    }
    fn window(&self) -> u64 {
        self.inner().window()
    }
    fn ssthresh(&self) -> u64 {
        self.inner().ssthresh()
    }
    fn pacing_rate(&self) -> Option<f64> {
        self.inner().pacing_rate()
    }
    fn min_tso_segs(&self) -> u32 {
        self.inner().min_tso_segs()
    }
    fn metrics(&self) -> CcMetrics {
        self.inner().metrics()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_from_its_name_and_builds_itself() {
        for k in CcKind::ALL {
            assert_eq!(k.name().parse::<CcKind>(), Ok(k));
            assert_eq!(AnyCc::new(k, 1448, 10, SimTime::ZERO, 1).kind(), k);
        }
        let mut names: Vec<_> = CcKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CcKind::ALL.len());
        assert_eq!("TCP-LP".parse::<CcKind>(), Ok(CcKind::Lp));
        assert_eq!("westwood+".parse::<CcKind>(), Ok(CcKind::Westwood));
        let err = "lp2".parse::<CcKind>().unwrap_err();
        assert!(err.contains("lp2") && err.contains("westwoodplain"), "{err}");
    }

    #[test]
    fn serde_accepts_what_from_str_accepts() {
        // Regression: the derived Deserialize knew only the lowercase variant names, so a
        // scenario refused `cc = "reno"` or `cc = "tcp-lp"` although `parse` accepts them.
        use serde::de::{value::StrDeserializer, Deserialize, IntoDeserializer};
        let de = |v: &'static str| {
            let d: StrDeserializer<'_, serde::de::value::Error> = v.into_deserializer();
            CcKind::deserialize(d).map_err(|e| e.to_string())
        };
        for (alias, kind) in [
            ("reno", CcKind::NewReno),
            ("tcp-lp", CcKind::Lp),
            ("TCPLP", CcKind::Lp),
            ("westwood+", CcKind::Westwood),
            ("westwood-plain", CcKind::WestwoodPlain),
            ("bbrv1", CcKind::Bbr),
        ] {
            assert_eq!(alias.parse::<CcKind>(), Ok(kind));
            assert_eq!(de(alias), Ok(kind), "{alias}");
        }
        for k in CcKind::ALL {
            assert_eq!(de(k.name()), Ok(k));
        }
        assert_eq!(de("vegas2"), "vegas2".parse::<CcKind>());
    }
}
