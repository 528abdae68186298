//! The `[lte]` part of a scenario: cells, UEs, bearers and the EPC, and its validation into a
//! [`LtePlan`] for [`celltcp_lte::ran::Ran`]. Every key is documented in `docs/scenario.md`
//! (section "LTE"), with defaults for a typical 20 MHz FDD macro cell.

use std::f64::consts::PI;

use celltcp_engine::rng::{component_id, component_rng};
use celltcp_engine::SimDuration;
use celltcp_lte::mac::sched_pf::PfConfig;
use celltcp_lte::mac::SchedulerKind;
use celltcp_lte::pdcp::PdcpConfig;
use celltcp_lte::phy::channel::PathLoss;
use celltcp_lte::phy::fading::FadingProfile;
use celltcp_lte::phy::tdd::Duplex;
use celltcp_lte::phy::{amc, tbs};
use celltcp_lte::mobility::MobilitySpec;
use celltcp_lte::ran::{EnbSpec, HandoverConfig, PdcpForwarding, RadioConfig, RanConfig, UeSpec};
use celltcp_lte::rrc::meas::{MeasConfig, ReportConfig, TIME_TO_TRIGGER_MS};
use celltcp_lte::rrc::rlf::RlfConfig;
use celltcp_lte::rlc::{AmConfig, RlcConfig, TmConfig, UmConfig};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
use crate::units::{Bytes, Dbm, Decibel, Dur, Hertz, Meters, Rate};

macro_rules! default_fn {
    ($name:ident, $t:ty, $e:expr) => {
        fn $name() -> $t {
            $e
        }
    };
}

default_fn!(def_bandwidth, Hertz, Hertz(20e6));
default_fn!(def_duplex, String, "fdd".into());
default_fn!(def_special, u8, 7);
default_fn!(def_sched, String, "pf".into());
default_fn!(def_ul_sched, String, "rr".into());
default_fn!(def_pf_window, Dur, Dur(SimDuration::from_millis(100)));
default_fn!(def_cfi, u8, 2);
default_fn!(def_harq, u8, 4);
default_fn!(def_ul_olla, bool, true);
default_fn!(def_dl_olla, bool, false);
default_fn!(def_cqi_period, Dur, Dur(SimDuration::from_millis(5)));
default_fn!(def_cqi_delay, Dur, Dur(SimDuration::from_millis(6)));
default_fn!(def_sr_period, Dur, Dur(SimDuration::from_millis(10)));
default_fn!(def_carrier, Hertz, Hertz(2.12e9));
default_fn!(def_pathloss, String, "36.814-uma".into());
default_fn!(def_shadowing, Decibel, Decibel(8.0));
default_fn!(def_penetration, Decibel, Decibel(0.0));
default_fn!(def_fading, String, "none".into());
default_fn!(def_doppler, Hertz, Hertz(5.0));
default_fn!(def_enb_power, Dbm, Dbm(46.0));
default_fn!(def_ue_power, Dbm, Dbm(23.0));
default_fn!(def_enb_nf, Decibel, Decibel(5.0));
default_fn!(def_ue_nf, Decibel, Decibel(9.0));
default_fn!(def_enb_gain, Decibel, Decibel(14.0));
default_fn!(def_ue_gain, Decibel, Decibel(0.0));
default_fn!(def_enb_height, Meters, Meters(25.0));
default_fn!(def_ue_height, Meters, Meters(1.5));
default_fn!(def_pgw, String, "pgw".into());
default_fn!(def_s1u_rate, Rate, Rate(10_000_000_000));
default_fn!(def_s1u_delay, Dur, Dur(SimDuration::from_millis(1)));
default_fn!(def_mtu, u32, 1500);
default_fn!(def_count, u32, 1);
default_fn!(def_rlc_mode, String, "am".into());

/// `[lte]`: the radio access network.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LteCfg {
    /// Channel bandwidth: 1.4, 3, 5, 10, 15 or 20 MHz (TS 36.101 Table 5.6-1).
    #[serde(default = "def_bandwidth")]
    pub bandwidth: Hertz,
    /// PRBs used, at most the bandwidth's (default: all of them).
    pub prbs: Option<u16>,
    /// `"fdd"` or `"tdd"`.
    #[serde(default = "def_duplex")]
    pub duplex: String,
    /// TDD uplink/downlink configuration 0..=6 (TS 36.211 Table 4.2-2).
    pub tdd_config: Option<u8>,
    /// TDD special subframe configuration 0..=9 (TS 36.211 Table 4.2-1).
    #[serde(default = "def_special")]
    pub special_subframe: u8,
    #[serde(default = "def_sched")]
    pub scheduler: String,
    #[serde(default = "def_ul_sched")]
    pub ul_scheduler: String,
    /// Averaging window of the proportional fair scheduler.
    #[serde(default = "def_pf_window")]
    pub pf_window: Dur,
    /// OFDM symbols of the control region, 1..=3.
    #[serde(default = "def_cfi")]
    pub cfi: u8,
    /// Maximum HARQ transmissions per transport block.
    #[serde(default = "def_harq")]
    pub harq_max_tx: u8,
    #[serde(default = "def_cqi_period")]
    pub cqi_period: Dur,
    #[serde(default = "def_cqi_delay")]
    pub cqi_delay: Dur,
    #[serde(default = "def_sr_period")]
    pub sr_period: Dur,
    /// Uplink outer-loop link adaptation (OLLA) towards a 10 % first-transmission BLER.
    #[serde(default = "def_ul_olla")]
    pub ul_olla: bool,
    /// Downlink outer-loop link adaptation on the UE's HARQ feedback (off: as ns-3).
    #[serde(default = "def_dl_olla")]
    pub dl_olla: bool,
    #[serde(default = "def_carrier")]
    pub carrier: Hertz,
    #[serde(default = "def_pathloss")]
    pub pathloss: String,
    /// Path-loss exponent for `pathloss = "log-distance"`.
    pub pathloss_exponent: Option<f64>,
    #[serde(default = "def_shadowing")]
    pub shadowing: Decibel,
    /// Building penetration loss added to every cell-UE path (TR 36.814: 20 dB indoors).
    #[serde(default = "def_penetration")]
    pub penetration_loss: Decibel,
    /// `"none"`, `"epa"`, `"eva"` or `"etu"` (TS 36.104 Annex B.2).
    #[serde(default = "def_fading")]
    pub fading: String,
    #[serde(default = "def_doppler")]
    pub doppler: Hertz,
    #[serde(default = "def_enb_power")]
    pub enb_power: Dbm,
    #[serde(default = "def_ue_power")]
    pub ue_power: Dbm,
    #[serde(default = "def_enb_nf")]
    pub enb_noise_figure: Decibel,
    #[serde(default = "def_ue_nf")]
    pub ue_noise_figure: Decibel,
    #[serde(default = "def_enb_gain")]
    pub enb_antenna_gain: Decibel,
    #[serde(default = "def_ue_gain")]
    pub ue_antenna_gain: Decibel,
    #[serde(default = "def_enb_height")]
    pub enb_height: Meters,
    #[serde(default = "def_ue_height")]
    pub ue_height: Meters,
    #[serde(default)]
    pub rlc: RlcCfg,
    /// `[lte.pdcp]` (TS 36.323): the model's own configuration, deserialised as it is (keys
    /// `sn_field_bits`, `discard_timer`, `buffer`; defaults from [`PdcpConfig::default`]).
    #[serde(default)]
    pub pdcp: PdcpConfig,
    #[serde(default)]
    pub epc: EpcCfg,
    #[serde(default)]
    pub handover: HandoverCfg,
    /// A generated layout instead of `[[lte.enb]]`.
    pub layout: Option<LayoutCfg>,
    /// X2 links with their own delay and rate.
    #[serde(default)]
    pub x2: Vec<X2Cfg>,
    #[serde(default, rename = "enb")]
    pub enbs: Vec<EnbCfg>,
    #[serde(default, rename = "ue")]
    pub ues: Vec<UeCfg>,
}

/// `[lte.rlc]`: the RLC entity of every bearer (TS 36.322).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RlcCfg {
    /// `"tm"`, `"um"` or `"am"`.
    #[serde(default = "def_rlc_mode")]
    pub mode: String,
    /// Transmit buffer per entity (drop-tail).
    pub buffer: Option<Bytes>,
    pub t_reordering: Option<Dur>,
    pub t_poll_retransmit: Option<Dur>,
    pub t_status_prohibit: Option<Dur>,
    pub poll_pdu: Option<u32>,
    pub poll_byte: Option<Bytes>,
    pub max_retx_threshold: Option<u32>,
    /// UM sequence number length: 5 or 10 bits.
    pub sn_field_bits: Option<u8>,
}

impl Default for RlcCfg {
    fn default() -> Self {
        RlcCfg {
            mode: def_rlc_mode(),
            buffer: None,
            t_reordering: None,
            t_poll_retransmit: None,
            t_status_prohibit: None,
            poll_pdu: None,
            poll_byte: None,
            max_retx_threshold: None,
            sn_field_bits: None,
        }
    }
}

/// `[lte.handover]`: X2 handover, measurements, radio link failure (TS 36.300 §10.1.2.1,
/// TS 36.331 §5.5, §5.3.11).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoverCfg {
    /// `"seamless"` (default) or `"lossless"` (RLC AM only).
    pub forwarding: Option<String>,
    pub x2_delay: Option<Dur>,
    pub x2_rate: Option<Rate>,
    pub interruption: Option<Dur>,
    pub path_switch_delay: Option<Dur>,
    pub reestablishment: Option<Dur>,
    /// `"a3"` (default) or `"none"` (only `[[lte.handover.manual]]`).
    pub algorithm: Option<String>,
    pub hysteresis: Option<Decibel>,
    pub time_to_trigger: Option<Dur>,
    pub a3_offset: Option<Decibel>,
    pub filter_coefficient: Option<u8>,
    pub measurement_period: Option<Dur>,
    /// Radio link monitoring of moving UEs (default true).
    pub rlf: Option<bool>,
    pub t310: Option<Dur>,
    pub n310: Option<u32>,
    pub n311: Option<u32>,
    pub qout: Option<Decibel>,
    pub qin: Option<Decibel>,
    #[serde(default)]
    pub manual: Vec<ManualHandoverCfg>,
    #[serde(default)]
    pub cell_failure: Vec<CellFailureCfg>,
}

/// `[[lte.handover.cell_failure]]`: cell `cell` fails at `at`; its UEs move to surviving cells.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellFailureCfg {
    pub cell: String,
    pub at: Dur,
}

/// `[lte.layout]`: a hexagonal grid of sites (TR 36.814 Annex A.2.1.1).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutCfg {
    /// `"hex"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Rings of sites around the centre one (0: the centre site alone).
    pub rings: u32,
    /// Rings of interfering sites outside them (never handover targets).
    #[serde(default)]
    pub interferer_rings: u32,
    /// Inter-site distance.
    pub isd: Meters,
    /// 1 (omnidirectional) or 3 sectors per site.
    #[serde(default = "def_sectors")]
    pub sectors: u8,
    #[serde(default, deserialize_with = "crate::units::exact")]
    pub centre: [f64; 2],
}

fn def_sectors() -> u8 {
    1
}

/// `[[lte.x2]]`: the X2 link between two cells.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct X2Cfg {
    #[serde(deserialize_with = "crate::units::exact")]
    pub between: [String; 2],
    pub delay: Option<Dur>,
    pub rate: Option<Rate>,
}

/// `[[lte.handover.manual]]`: a handover decided at `at`, whatever the measurements say.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManualHandoverCfg {
    pub ue: String,
    pub at: Dur,
    pub target: String,
}

/// What a UE does besides its bearer: trajectory, measurements, monitoring.
#[derive(Clone, Debug)]
pub struct UeSetup {
    pub mobility: Option<MobilitySpec>,
    pub meas: Option<MeasConfig>,
    pub rlf: Option<RlfConfig>,
}

/// `[lte.epc]`: the combined SGW/PGW and the S1-U links.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpcCfg {
    /// Name of the SGW/PGW node; servers connect to it with ordinary `[[link]]`s.
    #[serde(default = "def_pgw")]
    pub pgw: String,
    #[serde(default = "def_s1u_rate")]
    pub s1u_rate: Rate,
    #[serde(default = "def_s1u_delay")]
    pub s1u_delay: Dur,
    /// MTU of the S1-U links; GTP-U/UDP/IP adds 36 bytes to every packet, so inner packets
    /// above `s1u_mtu − 36` are fragmented.
    #[serde(default = "def_mtu")]
    pub s1u_mtu: u32,
    /// The queue of every S1-U link direction (eNB → SGW/PGW and SGW/PGW → eNB), as a
    /// `[[link]]`'s `queue`: `"100p"`, `"150KB"` or a table (`type = "red"`, `"codel"`, ...).
    /// Default: drop-tail, 100 packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s1u_queue: Option<crate::config::QueueSpec>,
    /// Capture S1-U (`pcap/s1u-<enb>.pcap`, both directions, outer IPv4/UDP/GTP-U around the
    /// UE's packet) and X2-U forwarding during handovers (`pcap/x2-<a>-<b>.pcap`).
    #[serde(default)]
    pub pcap: bool,
}

impl Default for EpcCfg {
    fn default() -> Self {
        EpcCfg { pgw: def_pgw(), s1u_rate: def_s1u_rate(), s1u_delay: def_s1u_delay(), s1u_mtu: def_mtu(), s1u_queue: None, pcap: false }
    }
}

/// `[[lte.enb]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnbCfg {
    pub name: String,
    /// `[x, y]` in metres.
    #[serde(default, deserialize_with = "crate::units::exact")]
    pub position: [f64; 2],
}

/// How the UEs of a `[[lte.ue]]` group are placed around their cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Placement {
    /// Uniformly in a disc of `radius` around the eNB.
    Disc { radius: Meters },
    /// Uniformly in the ring between `inner` and `outer`.
    Ring { inner: Meters, outer: Meters },
    /// At the given distances from the eNB, at evenly spread angles (cycled if fewer than
    /// `count`).
    Distances { distances: Vec<Meters> },
}

/// `[[lte.ue]]`: one UE, or `count` UEs named `<name>1..<name>N`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UeCfg {
    pub name: String,
    #[serde(default = "def_count")]
    pub count: u32,
    /// The serving eNB (default: the only one).
    pub enb: Option<String>,
    /// `[x, y]` in metres (one UE only).
    #[serde(default, deserialize_with = "crate::units::exact_opt")]
    pub position: Option<[f64; 2]>,
    pub placement: Option<Placement>,
    /// Fixed SINR instead of the channel model.
    pub sinr: Option<Decibel>,
    /// Fixed MCS 0..=28 instead of link adaptation.
    pub mcs: Option<u8>,
    /// A trajectory (`model = "constant_velocity" | "waypoints" | "random_waypoint" |
    /// "levy_walk" | "static"`); it gives the start position, so no `position`/`placement`.
    pub mobility: Option<MobilitySpec>,
    /// Capture the UE's side of the radio (`pcap/ue-<name>.pcap`): IP packets as it sends them
    /// (before its PDCP/RLC queue) and as it receives them (after PDCP delivers them).
    #[serde(default)]
    pub pcap: bool,
    /// An LTE–WLAN aggregation split bearer (`lwa = { ap = "…", … }`, docs/lwa.md).
    pub lwa: Option<crate::lwa_config::LwaCfg>,
}

/// The validated LTE part: what [`celltcp_lte::ran::Ran::new`] needs, and the node names.
pub struct LtePlan {
    pub ran: RanConfig,
    pub enbs: Vec<EnbSpec>,
    pub ues: Vec<UeSpec>,
    pub epc: EpcCfg,
    /// Per UE, in the order of `ues`.
    pub setup: Vec<UeSetup>,
    /// Planned handovers: (decision time, UE index, target cell index).
    pub manual: Vec<(SimDuration, usize, usize)>,
    /// Planned cell failures: (time, cell index).
    pub failures: Vec<(SimDuration, usize)>,
    /// Cells of a layout's interferer rings (never handover targets).
    pub interferers: Vec<usize>,
    /// Declared X2 links: (cell, cell, delay, rate).
    pub x2: Vec<(usize, usize, SimDuration, u64)>,
    /// Per UE, in the order of `ues`: capture its side of the radio (`[[lte.ue]] pcap`).
    pub ue_pcap: Vec<bool>,
    /// Per UE, in the order of `ues`: its LWA split bearer (`[[lte.ue]] lwa`), if any.
    pub ue_lwa: Vec<Option<crate::lwa_config::LwaUePlan>>,
}

/// An error in `[lte]` or one of its tables, with the line when it can be found.
pub(crate) fn lte_err(text: &str, table: &str, index: Option<usize>, key: &str, msg: String) -> ScenarioError {
    let path = match index {
        Some(i) => format!("{table}[{i}].{key}"),
        None if key.is_empty() => table.to_string(),
        None => format!("{table}.{key}"),
    };
    ScenarioError::new(path, msg).at_line(line_in_table(text, table, index, key))
}

/// The line of `key` inside `[table]` (or the `index`-th `[[table]]`).
fn line_in_table(text: &str, table: &str, index: Option<usize>, key: &str) -> Option<usize> {
    let header = match index {
        Some(_) => format!("[[{table}]]"),
        None => format!("[{table}]"),
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut seen = 0;
    let mut start = None;
    for (i, l) in lines.iter().enumerate() {
        if l.trim() == header {
            if index.is_none_or(|k| k == seen) {
                start = Some(i);
                break;
            }
            seen += 1;
        }
    }
    let start = start?;
    for (i, l) in lines.iter().enumerate().skip(start + 1) {
        let t = l.trim_start();
        if t.starts_with('[') {
            break;
        }
        if let Some(rest) = t.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                return Some(i + 1);
            }
        }
    }
    Some(start + 1)
}

fn pathloss(cfg: &LteCfg) -> Result<PathLoss, String> {
    Ok(match cfg.pathloss.as_str() {
        "free-space" => PathLoss::FreeSpace,
        "log-distance" => PathLoss::LogDistance {
            exponent: cfg.pathloss_exponent.unwrap_or(3.0),
            ref_distance_m: 1.0,
            // Free-space loss at 1 m for the carrier (Friis).
            ref_loss_db: 20.0 * (4.0 * PI * cfg.carrier.0 / 299_792_458.0).log10(),
        },
        "cost231" => PathLoss::Cost231Hata { metropolitan: false },
        "36.814-uma" => PathLoss::Uma36814,
        "36.814-umi" => PathLoss::Umi36814,
        "36.873-uma-los" => PathLoss::Uma36873 { los: true },
        "36.873-uma-nlos" => PathLoss::Uma36873 { los: false },
        "36.873-umi-los" => PathLoss::Umi36873 { los: true },
        "36.873-umi-nlos" => PathLoss::Umi36873 { los: false },
        other => {
            return Err(format!(
                "unknown path-loss model {other:?}; expected one of \"36.814-uma\", \"36.814-umi\", \"36.873-uma-los\", \"36.873-uma-nlos\", \"36.873-umi-los\", \"36.873-umi-nlos\", \"cost231\", \"log-distance\", \"free-space\""
            ))
        }
    })
}

fn rlc_config(text: &str, r: &RlcCfg) -> Result<RlcConfig, ScenarioError> {
    let e = |key: &str, msg: String| lte_err(text, "lte.rlc", None, key, msg);
    let ms = |d: Option<Dur>, def: SimDuration| d.map_or(def, |d| d.0);
    let cfg = match r.mode.as_str() {
        "tm" => {
            let mut c = TmConfig::default();
            if let Some(b) = r.buffer {
                c.tx_buffer_bytes = b.0;
            }
            for (k, present) in [
                ("t_reordering", r.t_reordering.is_some()),
                ("t_poll_retransmit", r.t_poll_retransmit.is_some()),
                ("t_status_prohibit", r.t_status_prohibit.is_some()),
                ("poll_pdu", r.poll_pdu.is_some()),
                ("poll_byte", r.poll_byte.is_some()),
                ("max_retx_threshold", r.max_retx_threshold.is_some()),
                ("sn_field_bits", r.sn_field_bits.is_some()),
            ] {
                if present {
                    return Err(e(k, format!("`{k}` does not apply to RLC TM (it has no sequence numbers or timers)")));
                }
            }
            RlcConfig::Tm(c)
        }
        "um" => {
            let mut c = UmConfig::default();
            if let Some(b) = r.buffer {
                c.tx_buffer_bytes = b.0;
            }
            c.t_reordering = ms(r.t_reordering, c.t_reordering);
            if let Some(sn) = r.sn_field_bits {
                if sn != 5 && sn != 10 {
                    return Err(e("sn_field_bits", format!("expected 5 or 10 (TS 36.322 §6.2.2.3), got {sn}")));
                }
                c.sn_field_bits = sn;
            }
            for (k, present) in [
                ("t_poll_retransmit", r.t_poll_retransmit.is_some()),
                ("t_status_prohibit", r.t_status_prohibit.is_some()),
                ("poll_pdu", r.poll_pdu.is_some()),
                ("poll_byte", r.poll_byte.is_some()),
                ("max_retx_threshold", r.max_retx_threshold.is_some()),
            ] {
                if present {
                    return Err(e(k, format!("`{k}` is an RLC AM setting and does not apply to mode \"um\"")));
                }
            }
            RlcConfig::Um(c)
        }
        "am" => {
            let mut c = AmConfig::default();
            if let Some(b) = r.buffer {
                c.tx_buffer_bytes = b.0;
            }
            c.t_reordering = ms(r.t_reordering, c.t_reordering);
            c.t_poll_retransmit = ms(r.t_poll_retransmit, c.t_poll_retransmit);
            c.t_status_prohibit = ms(r.t_status_prohibit, c.t_status_prohibit);
            if let Some(p) = r.poll_pdu {
                c.poll_pdu = p;
            }
            if let Some(p) = r.poll_byte {
                c.poll_byte = p.0;
            }
            if let Some(m) = r.max_retx_threshold {
                if !(1..=32).contains(&m) {
                    return Err(e("max_retx_threshold", format!("expected 1..=32 (TS 36.331 maxRetxThreshold), got {m}")));
                }
                c.max_retx_threshold = m;
            }
            if r.sn_field_bits.is_some() {
                return Err(e("sn_field_bits", "`sn_field_bits` is an RLC UM setting (AM uses 10-bit sequence numbers)".into()));
            }
            RlcConfig::Am(c)
        }
        other => return Err(e("mode", format!("unknown RLC mode {other:?}; expected \"tm\", \"um\" or \"am\""))),
    };
    if let Some(b) = r.buffer {
        if b.0 < 1500 {
            return Err(e("buffer", format!("expected an RLC buffer of at least 1500B (one packet), got \"{b}\"")));
        }
    }
    Ok(cfg)
}

/// Validates `[lte]` and places the UEs (the placement draws from its own random stream of
/// the run seed, so it does not depend on anything else in the scenario).
pub fn plan_lte(text: &str, cfg: &LteCfg, seed: u64) -> Result<LtePlan, ScenarioError> {
    let e = |key: &str, msg: String| lte_err(text, "lte", None, key, msg);
    let mhz = cfg.bandwidth.0 / 1e6;
    let max_prbs = tbs::prbs_for_bandwidth_mhz(mhz).ok_or_else(|| {
        e("bandwidth", format!("expected an LTE channel bandwidth: \"1.4MHz\", \"3MHz\", \"5MHz\", \"10MHz\", \"15MHz\" or \"20MHz\", got \"{}\"", cfg.bandwidth))
    })?;
    let prbs = cfg.prbs.unwrap_or(max_prbs);
    if prbs == 0 || prbs > max_prbs {
        return Err(e("prbs", format!("expected 1..={max_prbs} PRBs for a {} channel, got {prbs}", cfg.bandwidth)));
    }
    let duplex = match cfg.duplex.as_str() {
        "fdd" => {
            if cfg.tdd_config.is_some() {
                return Err(e("tdd_config", "`tdd_config` applies only with duplex = \"tdd\"".into()));
            }
            Duplex::Fdd
        }
        "tdd" => {
            let c = cfg.tdd_config.ok_or_else(|| e("tdd_config", "duplex = \"tdd\" needs `tdd_config`, an uplink/downlink configuration 0..=6 (TS 36.211 Table 4.2-2)".into()))?;
            if c > 6 {
                return Err(e("tdd_config", format!("expected a TDD uplink/downlink configuration 0..=6 (TS 36.211 Table 4.2-2), got {c}")));
            }
            if cfg.special_subframe > 9 {
                return Err(e("special_subframe", format!("expected a special subframe configuration 0..=9 (TS 36.211 Table 4.2-1), got {}", cfg.special_subframe)));
            }
            Duplex::new_tdd(c, cfg.special_subframe).map_err(|m| e("tdd_config", m))?
        }
        other => return Err(e("duplex", format!("expected \"fdd\" or \"tdd\", got {other:?}"))),
    };
    let sched = |key: &str, v: &str| -> Result<SchedulerKind, ScenarioError> {
        v.parse::<SchedulerKind>().map_err(|_| e(key, format!("unknown scheduler {v:?}; expected \"rr\" (round robin), \"pf\" (proportional fair) or \"maxci\" (max C/I)")))
    };
    let dl_scheduler = sched("scheduler", &cfg.scheduler)?;
    let ul_scheduler = sched("ul_scheduler", &cfg.ul_scheduler)?;
    if !(1..=3).contains(&cfg.cfi) {
        return Err(e("cfi", format!("expected 1..=3 control symbols (TS 36.211 §6.7), got {}", cfg.cfi)));
    }
    if !(1..=28).contains(&cfg.harq_max_tx) {
        return Err(e("harq_max_tx", format!("expected 1..=28 transmissions (TS 36.331 maxHARQ-Tx), got {}", cfg.harq_max_tx)));
    }
    let ttis = |key: &str, v: Dur, lo: u64, hi: u64| -> Result<SimDuration, ScenarioError> {
        let ms = v.0.as_nanos() / 1_000_000;
        if !v.0.as_nanos().is_multiple_of(1_000_000) || ms < lo || ms > hi {
            return Err(e(key, format!("expected a whole number of milliseconds between {lo}ms and {hi}ms, got \"{v}\"")));
        }
        Ok(v.0)
    };
    let cqi_period = ttis("cqi_period", cfg.cqi_period, 1, 160)?;
    let cqi_delay = ttis("cqi_delay", cfg.cqi_delay, 0, 100)?;
    let sr_period = ttis("sr_period", cfg.sr_period, 1, 80)?;
    let pf_window_ttis = cfg.pf_window.0.as_nanos() as f64 / 1e6;
    if pf_window_ttis < 1.0 {
        return Err(e("pf_window", format!("expected at least 1ms, got \"{}\"", cfg.pf_window)));
    }
    if !(400e6..=6e9).contains(&cfg.carrier.0) {
        return Err(e("carrier", format!("expected an LTE carrier frequency between 400MHz and 6GHz, got \"{}\"", cfg.carrier)));
    }
    let pl = pathloss(cfg).map_err(|m| e("pathloss", m))?;
    if cfg.pathloss_exponent.is_some() && cfg.pathloss != "log-distance" {
        return Err(e("pathloss_exponent", "`pathloss_exponent` applies only to pathloss = \"log-distance\"".into()));
    }
    if let Some(x) = cfg.pathloss_exponent {
        if !(1.5..=6.0).contains(&x) {
            return Err(e("pathloss_exponent", format!("expected an exponent between 1.5 and 6, got {x}")));
        }
    }
    if !(0.0..=60.0).contains(&cfg.penetration_loss.0) {
        return Err(e("penetration_loss", format!("expected a penetration loss between 0dB and 60dB, got \"{}\"", cfg.penetration_loss)));
    }
    if !(0.0..=20.0).contains(&cfg.shadowing.0) {
        return Err(e("shadowing", format!("expected a shadowing standard deviation between 0dB and 20dB, got \"{}\"", cfg.shadowing)));
    }
    let fading = match cfg.fading.as_str() {
        "none" => None,
        "epa" => Some(FadingProfile::Epa),
        "eva" => Some(FadingProfile::Eva),
        "etu" => Some(FadingProfile::Etu),
        other => return Err(e("fading", format!("unknown fading profile {other:?}; expected \"none\", \"epa\", \"eva\" or \"etu\""))),
    };
    if !(0.0..=2000.0).contains(&cfg.doppler.0) {
        return Err(e("doppler", format!("expected a Doppler frequency between 0Hz and 2kHz, got \"{}\"", cfg.doppler)));
    }
    for (k, v) in [("enb_power", cfg.enb_power.0), ("ue_power", cfg.ue_power.0)] {
        if !(0.0..=60.0).contains(&v) {
            return Err(e(k, format!("expected a transmit power between 0dBm and 60dBm, got \"{v}dBm\"")));
        }
    }
    for (k, v) in [("enb_noise_figure", cfg.enb_noise_figure.0), ("ue_noise_figure", cfg.ue_noise_figure.0)] {
        if !(0.0..=30.0).contains(&v) {
            return Err(e(k, format!("expected a noise figure between 0dB and 30dB, got \"{v}dB\"")));
        }
    }
    for (k, v) in [("enb_height", cfg.enb_height.0), ("ue_height", cfg.ue_height.0)] {
        if !(0.5..=500.0).contains(&v) {
            return Err(e(k, format!("expected an antenna height between 0.5m and 500m, got \"{v}m\"")));
        }
    }
    let rlc = rlc_config(text, &cfg.rlc)?;
    let pdcp = cfg.pdcp;
    if ![7, 12, 15, 18].contains(&pdcp.sn_field_bits) {
        return Err(lte_err(text, "lte.pdcp", None, "sn_field_bits", format!("expected 7, 12, 15 or 18 (TS 36.323 §6.3.2), got {}", pdcp.sn_field_bits)));
    }
    if pdcp.tx_buffer_bytes < 1500 {
        // a buffer smaller than one full-size SDU drops every such SDU at the tail
        return Err(lte_err(text, "lte.pdcp", None, "buffer", format!("expected at least one full-size SDU (1500B), got \"{}\"", Bytes(pdcp.tx_buffer_bytes))));
    }
    let epc = cfg.epc.clone();
    if epc.pgw.is_empty() {
        return Err(lte_err(text, "lte.epc", None, "pgw", "expected a non-empty node name".into()));
    }
    if !(576..=65535).contains(&epc.s1u_mtu) {
        return Err(lte_err(text, "lte.epc", None, "s1u_mtu", format!("expected an MTU between 576 and 65535 bytes, got {}", epc.s1u_mtu)));
    }

    let mut enbs: Vec<EnbSpec> = Vec::new();
    let mut interferers: Vec<usize> = Vec::new();
    if let Some(l) = &cfg.layout {
        let le = |key: &str, msg: String| lte_err(text, "lte.layout", None, key, msg);
        if !cfg.enbs.is_empty() {
            return Err(le("type", "give either [lte.layout] or [[lte.enb]] tables, not both".into()));
        }
        if l.kind != "hex" {
            return Err(le("type", format!("expected \"hex\", got {:?}", l.kind)));
        }
        if l.rings + l.interferer_rings > 10 {
            return Err(le("rings", format!("expected rings + interferer_rings <= 10, got {}", l.rings + l.interferer_rings)));
        }
        let hex = celltcp_lte::layout::HexLayout {
            rings: l.rings,
            interferer_rings: l.interferer_rings,
            isd_m: l.isd.0,
            sectors: l.sectors,
            centre: (l.centre[0], l.centre[1]),
        };
        let layout = celltcp_lte::layout::Layout::hexagonal(&hex).map_err(|m| {
            let key = if m.contains("sectors") { "sectors" } else if m.contains("isd") { "isd" } else { "rings" };
            le(key, m)
        })?;
        for (i, c) in layout.cells().iter().enumerate() {
            enbs.push(EnbSpec { name: c.name.clone(), position: c.position, boresight_deg: c.boresight_deg });
            if !c.measured {
                interferers.push(i);
            }
        }
    } else if cfg.enbs.is_empty() {
        return Err(e("enb", "expected at least one [[lte.enb]] (or an [lte.layout])".into()));
    }
    for (i, en) in cfg.enbs.iter().enumerate() {
        let ee = |key: &str, msg: String| lte_err(text, "lte.enb", Some(i), key, msg);
        if en.name.is_empty() {
            return Err(ee("name", "expected a non-empty name".into()));
        }
        if enbs.iter().any(|o| o.name == en.name) {
            return Err(ee("name", format!("eNB {:?} is declared twice", en.name)));
        }
        if !en.position.iter().all(|x| x.is_finite()) {
            return Err(ee("position", "expected finite coordinates in metres".into()));
        }
        let pos = (en.position[0], en.position[1]);
        if let Some(o) = enbs.iter().find(|o| o.position == pos) {
            return Err(ee("position", format!("expected a position no other eNB has: eNB {:?} at [{}, {}] is at the same position as {:?}", en.name, pos.0, pos.1, o.name)));
        }
        enbs.push(EnbSpec { name: en.name.clone(), position: pos, boresight_deg: None });
    }
    if cfg.ues.is_empty() {
        return Err(e("ue", "expected at least one [[lte.ue]]".into()));
    }
    let mut ues: Vec<UeSpec> = Vec::new();
    let mut ue_pcap: Vec<bool> = Vec::new();
    let mut ue_lwa = Vec::new();
    let mut ue_names: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut mobility: Vec<Option<MobilitySpec>> = Vec::new();
    for (i, u) in cfg.ues.iter().enumerate() {
        let ue_e = |key: &str, msg: String| lte_err(text, "lte.ue", Some(i), key, msg);
        if u.name.is_empty() {
            return Err(ue_e("name", "expected a non-empty name".into()));
        }
        let lwa = match &u.lwa {
            Some(c) => Some(crate::lwa_config::plan_lwa(c).map_err(|(k, m)| ue_e(&k, m))?),
            None => None,
        };
        if u.count == 0 || u.count > 1_000_000 {
            return Err(ue_e("count", format!("expected 1..=1000000 UEs, got {}", u.count)));
        }
        // the whole RAN too: a validation of 1,000,000 UEs takes about 1.3 GB, so many groups of a
        // million would abort in allocation instead of being refused
        if ues.len() as u64 + u64::from(u.count) > 1_000_000 {
            return Err(ue_e("count", format!("expected at most 1000000 UEs in all [[lte.ue]] groups together, got {} with this group's {}", ues.len() as u64 + u64::from(u.count), u.count)));
        }
        let enb = match &u.enb {
            Some(n) => enbs.iter().position(|x| &x.name == n).ok_or_else(|| {
                ue_e("enb", format!("no eNB named {n:?}; eNBs are {:?}", enbs.iter().map(|x| x.name.as_str()).collect::<Vec<_>>()))
            })?,
            None if enbs.len() == 1 => 0,
            None => return Err(ue_e("enb", "expected the serving eNB's name (there are several eNBs)".into())),
        };
        if let Some(m) = u.mcs {
            if m > amc_max_mcs() {
                return Err(ue_e("mcs", format!("expected an MCS 0..=28 (TS 36.213 Table 7.1.7.1-1), got {m}")));
            }
        }
        if let Some(s) = u.sinr {
            if !(-20.0..=60.0).contains(&s.0) {
                return Err(ue_e("sinr", format!("expected a SINR between -20dB and 60dB, got \"{s}\"")));
            }
        }
        let mob_rng = |name: &str| component_rng(seed, component_id("ue-mobility", name));
        let names: Vec<String> = (0..u.count as usize).map(|k| if u.count == 1 { u.name.clone() } else { format!("{}{}", u.name, k + 1) }).collect();
        if let Some(spec) = &u.mobility {
            if u.position.is_some() || u.placement.is_some() {
                return Err(ue_e("mobility", "a UE with `mobility` starts where its trajectory starts: give no `position` or `placement`".into()));
            }
            let cells: Vec<(f64, f64)> = enbs.iter().map(|x| x.position).collect();
            spec.validate_with_cells(&cells).map_err(|m| ue_e("mobility", m))?;
        }
        let positions: Vec<(f64, f64)> = match (&u.position, &u.placement) {
            _ if u.mobility.is_some() => {
                let spec = u.mobility.as_ref().unwrap();
                names
                    .iter()
                    .map(|n| {
                        celltcp_lte::mobility::Mobility::new(spec, mob_rng(n))
                            .map(|mut m| m.position(celltcp_engine::SimTime::ZERO))
                            .map_err(|m| ue_e("mobility", m))
                    })
                    .collect::<Result<_, _>>()?
            }
            (Some(_), Some(_)) => return Err(ue_e("placement", "give either `position` or `placement`, not both".into())),
            (Some(p), None) => {
                if u.count != 1 {
                    return Err(ue_e("position", format!("`position` places one UE; this group has count = {} (use `placement`)", u.count)));
                }
                vec![(p[0], p[1])]
            }
            (None, None) => return Err(ue_e("placement", "expected `position = [x, y]` or a `placement` table".into())),
            (None, Some(pl)) => {
                let c = enbs[enb].position;
                let mut rng = component_rng(seed, component_id("ue-placement", &u.name));
                let n = u.count as usize;
                match pl {
                    Placement::Disc { radius } => {
                        if radius.0 <= 0.0 {
                            return Err(ue_e("placement.radius", "expected a radius greater than 0m".into()));
                        }
                        (0..n)
                            .map(|_| {
                                let r = radius.0 * rng.gen::<f64>().sqrt();
                                let a = 2.0 * PI * rng.gen::<f64>();
                                (c.0 + r * a.cos(), c.1 + r * a.sin())
                            })
                            .collect()
                    }
                    Placement::Ring { inner, outer } => {
                        if !(inner.0 >= 0.0 && outer.0 > inner.0) {
                            return Err(ue_e("placement.outer", format!("expected outer > inner >= 0, got inner \"{inner}\" and outer \"{outer}\"")));
                        }
                        (0..n)
                            .map(|_| {
                                let r = (inner.0.powi(2) + (outer.0.powi(2) - inner.0.powi(2)) * rng.gen::<f64>()).sqrt();
                                let a = 2.0 * PI * rng.gen::<f64>();
                                (c.0 + r * a.cos(), c.1 + r * a.sin())
                            })
                            .collect()
                    }
                    Placement::Distances { distances } => {
                        if distances.is_empty() {
                            return Err(ue_e("placement.distances", "expected at least one distance".into()));
                        }
                        (0..n)
                            .map(|k| {
                                let r = distances[k % distances.len()].0;
                                let a = 2.0 * PI * k as f64 / n as f64;
                                (c.0 + r * a.cos(), c.1 + r * a.sin())
                            })
                            .collect()
                    }
                }
            }
        };
        for (k, pos) in positions.into_iter().enumerate() {
            let name = if u.count == 1 { u.name.clone() } else { format!("{}{}", u.name, k + 1) };
            // a set, not a scan of the UEs so far: 100,000 UEs must not cost 5·10⁹ comparisons
            if !ue_names.insert(name.clone()) {
                return Err(ue_e("name", format!("UE name {name:?} is used twice")));
            }
            ues.push(UeSpec { name, enb, position: pos, fixed_sinr_db: u.sinr.map(|s| s.0), fixed_mcs: u.mcs });
            ue_pcap.push(u.pcap);
            ue_lwa.push(lwa.clone());
            mobility.push(u.mobility.clone());
        }
    }
    let ran = RanConfig {
        dl_prbs: prbs,
        ul_prbs: prbs,
        duplex,
        dl_scheduler,
        ul_scheduler,
        pf: PfConfig { window_ttis: pf_window_ttis },
        cfi: cfg.cfi,
        harq_max_tx: cfg.harq_max_tx,
        cqi_period,
        cqi_delay,
        sr_period,
        ul_olla: cfg.ul_olla,
        dl_olla: cfg.dl_olla,
        handover: handover_config(text, cfg)?,
        rlc,
        pdcp,
        radio: RadioConfig {
            carrier_hz: cfg.carrier.0,
            pathloss: pl,
            shadowing_sigma_db: cfg.shadowing.0,
            penetration_loss_db: cfg.penetration_loss.0,
            fading,
            doppler_hz: cfg.doppler.0,
            enb_tx_power_dbm: cfg.enb_power.0,
            ue_tx_power_dbm: cfg.ue_power.0,
            enb_noise_figure_db: cfg.enb_noise_figure.0,
            ue_noise_figure_db: cfg.ue_noise_figure.0,
            enb_antenna_gain_dbi: cfg.enb_antenna_gain.0,
            ue_antenna_gain_dbi: cfg.ue_antenna_gain.0,
            enb_height_m: cfg.enb_height.0,
            ue_height_m: cfg.ue_height.0,
        },
    };
    // A UE no cell can serve, even without shadowing, is a mistake in the scenario (a UE that
    // later fades out of coverage is not: it is reported).
    for (k, u) in ues.iter().enumerate() {
        if u.fixed_sinr_db.is_some() {
            continue;
        }
        let sinr = celltcp_lte::ran::median_sinr_db(&ran, &enbs[u.enb], u.position);
        if amc::cqi_from_sinr_db(sinr, ran.cfi) == 0 {
            let group = cfg.ues.iter().position(|g| u.name.starts_with(&g.name)).unwrap_or(0);
            let dist = ((u.position.0 - enbs[u.enb].position.0).powi(2) + (u.position.1 - enbs[u.enb].position.1).powi(2)).sqrt();
            return Err(lte_err(
                text,
                "lte.ue",
                Some(group),
                if cfg.ues[group].position.is_some() { "position" } else { "placement" },
                format!("UE {:?} ({k}) is {dist:.0} m from eNB {:?}: its median SINR is {sinr:.1} dB, below the lowest CQI, so no cell is in range; move it closer or raise the powers", u.name, enbs[u.enb].name),
            ));
        }
    }
    let (meas, rlf) = measurement_config(text, &cfg.handover)?;
    let setup = mobility
        .into_iter()
        .map(|m| {
            let moving = m.as_ref().is_some_and(|s| !matches!(s, MobilitySpec::Static { .. }));
            UeSetup { mobility: m, meas: if moving && enbs.len() > 1 { meas.clone() } else { None }, rlf: if moving { rlf.clone() } else { None } }
        })
        .collect();
    let mut manual = Vec::new();
    for (i, m) in cfg.handover.manual.iter().enumerate() {
        let me = |key: &str, msg: String| lte_err(text, "lte.handover.manual", Some(i), key, msg);
        let ue = ues.iter().position(|u| u.name == m.ue).ok_or_else(|| {
            me("ue", format!("no UE named {:?}; UEs are {:?}", m.ue, ues.iter().map(|u| u.name.as_str()).collect::<Vec<_>>()))
        })?;
        let target = enbs.iter().position(|x| x.name == m.target).ok_or_else(|| {
            me("target", format!("no eNB named {:?}; eNBs are {:?}", m.target, enbs.iter().map(|x| x.name.as_str()).collect::<Vec<_>>()))
        })?;
        manual.push((m.at.0, ue, target));
    }
    let mut failures = Vec::new();
    for (i, f) in cfg.handover.cell_failure.iter().enumerate() {
        let fe = |key: &str, msg: String| lte_err(text, "lte.handover.cell_failure", Some(i), key, msg);
        let c = enbs.iter().position(|x| x.name == f.cell).ok_or_else(|| {
            fe("cell", format!("no eNB named {:?}; eNBs are {:?}", f.cell, enbs.iter().map(|x| x.name.as_str()).collect::<Vec<_>>()))
        })?;
        if enbs.len() < 2 {
            return Err(fe("cell", "a cell failure needs another cell for its UEs to move to".into()));
        }
        failures.push((f.at.0, c));
        let failed: std::collections::HashSet<usize> = failures.iter().map(|x| x.1).collect();
        if failed.len() == enbs.len() {
            // with no surviving cell the UEs would have nowhere to go (and were served on)
            return Err(fe("cell", format!("every cell would fail; at least one of {:?} must survive for the UEs to re-establish in", enbs.iter().map(|x| x.name.as_str()).collect::<Vec<_>>())));
        }
    }
    let mut x2 = Vec::new();
    for (i, l) in cfg.x2.iter().enumerate() {
        let xe = |key: &str, msg: String| lte_err(text, "lte.x2", Some(i), key, msg);
        let mut ends = [0usize; 2];
        for (k, n) in l.between.iter().enumerate() {
            ends[k] = enbs.iter().position(|x| &x.name == n).ok_or_else(|| {
                xe("between", format!("no eNB named {n:?}; eNBs are {:?}", enbs.iter().map(|x| x.name.as_str()).collect::<Vec<_>>()))
            })?;
        }
        if ends[0] == ends[1] {
            return Err(xe("between", format!("an X2 link joins two different eNBs, got {:?} twice", l.between[0])));
        }
        let delay = l.delay.map_or(ran.handover.x2_delay, |d| d.0);
        if delay > SimDuration::from_secs(1) {
            return Err(xe("delay", format!("expected an X2 delay up to 1s, got \"{}\"", l.delay.unwrap())));
        }
        let rate = l.rate.map_or(ran.handover.x2_rate_bps, |r| r.0);
        if rate == 0 {
            return Err(xe("rate", "expected a rate above 0".into()));
        }
        x2.push((ends[0], ends[1], delay, rate));
    }
    Ok(LtePlan { ran, enbs, ues, epc, setup, manual, failures, interferers, x2, ue_pcap, ue_lwa })
}

impl LteCfg {
    /// The `[lte]` table as it ran: every optional key that `plan` resolved to a default is
    /// written out with the value the model uses (PRBs, the RLC entity of the chosen mode,
    /// handover, measurement and radio-link-monitoring parameters), so that the manifest says
    /// exactly what ran and, read back as a scenario, runs the same.
    pub fn as_run(&self, plan: &LtePlan) -> LteCfg {
        let mut c = self.clone();
        let ran = &plan.ran;
        c.prbs = Some(ran.dl_prbs);
        let r = &mut c.rlc;
        match &ran.rlc {
            RlcConfig::Tm(t) => r.buffer = Some(Bytes(t.tx_buffer_bytes)),
            RlcConfig::Um(u) => {
                r.buffer = Some(Bytes(u.tx_buffer_bytes));
                r.t_reordering = Some(Dur(u.t_reordering));
                r.sn_field_bits = Some(u.sn_field_bits);
            }
            RlcConfig::Am(a) => {
                r.buffer = Some(Bytes(a.tx_buffer_bytes));
                r.t_reordering = Some(Dur(a.t_reordering));
                r.t_poll_retransmit = Some(Dur(a.t_poll_retransmit));
                r.t_status_prohibit = Some(Dur(a.t_status_prohibit));
                r.poll_pdu = Some(a.poll_pdu);
                r.poll_byte = Some(Bytes(a.poll_byte));
                r.max_retx_threshold = Some(a.max_retx_threshold);
            }
        }
        // [lte.pdcp] is the model's PdcpConfig: complete as it is
        let h = &mut c.handover;
        let ho = &ran.handover;
        h.forwarding = Some(
            match ho.forwarding {
                PdcpForwarding::Seamless => "seamless",
                PdcpForwarding::SeamlessFlush => "seamless-flush",
                PdcpForwarding::Lossless => "lossless",
            }
            .to_string(),
        );
        h.x2_delay = Some(Dur(ho.x2_delay));
        h.x2_rate = Some(Rate(ho.x2_rate_bps));
        h.interruption = Some(Dur(ho.interruption));
        h.path_switch_delay = Some(Dur(ho.path_switch_delay));
        h.reestablishment = Some(Dur(ho.reestablishment));
        // validated when the plan was made, so this cannot fail
        let (meas, rlf) = measurement_config("", &self.handover).expect("validated by plan_lte");
        h.algorithm = Some(if meas.is_some() { "a3" } else { "none" }.to_string());
        if let Some(m) = meas {
            let rc = &m.reports[0];
            h.hysteresis = Some(Decibel(rc.hysteresis_db));
            h.a3_offset = Some(Decibel(rc.offset_db));
            h.time_to_trigger = Some(Dur(SimDuration::from_millis(rc.time_to_trigger_ms as u64)));
            h.filter_coefficient = Some(m.filter_coefficient);
            h.measurement_period = Some(Dur(SimDuration::from_millis(m.period_ms as u64)));
        }
        h.rlf = Some(rlf.is_some());
        if let Some(r) = rlf {
            h.t310 = Some(Dur(SimDuration::from_millis(r.t310_ms as u64)));
            h.n310 = Some(r.n310);
            h.n311 = Some(r.n311);
            h.qout = Some(Decibel(r.qout_db));
            h.qin = Some(Decibel(r.qin_db));
        }
        c
    }
}

/// `[lte.handover]` → the X2 procedure parameters.
fn handover_config(text: &str, cfg: &LteCfg) -> Result<HandoverConfig, ScenarioError> {
    let h = &cfg.handover;
    let e = |key: &str, msg: String| lte_err(text, "lte.handover", None, key, msg);
    let mut out = HandoverConfig::default();
    if let Some(f) = &h.forwarding {
        out.forwarding = match f.as_str() {
            "seamless" => PdcpForwarding::Seamless,
            "lossless" => PdcpForwarding::Lossless,
            "seamless-flush" => PdcpForwarding::SeamlessFlush,
            other => return Err(e("forwarding", format!("expected \"seamless\", \"lossless\" or \"seamless-flush\", got {other:?}"))),
        };
        if out.forwarding == PdcpForwarding::Lossless && cfg.rlc.mode != "am" {
            return Err(e("forwarding", format!("lossless forwarding needs RLC AM (TS 36.323 §5.2.1.1), but [lte.rlc] mode is {:?}", cfg.rlc.mode)));
        }
    }
    let ms = |key: &str, d: Option<Dur>, lo: u64, hi: u64, dflt: SimDuration| -> Result<SimDuration, ScenarioError> {
        match d {
            None => Ok(dflt),
            Some(d) if d.0 >= SimDuration::from_millis(lo) && d.0 <= SimDuration::from_millis(hi) => Ok(d.0),
            Some(d) => Err(e(key, format!("expected a duration between {lo}ms and {hi}ms, got \"{d}\""))),
        }
    };
    out.x2_delay = ms("x2_delay", h.x2_delay, 0, 1000, out.x2_delay)?;
    out.interruption = ms("interruption", h.interruption, 0, 5000, out.interruption)?;
    out.path_switch_delay = ms("path_switch_delay", h.path_switch_delay, 0, 5000, out.path_switch_delay)?;
    out.reestablishment = ms("reestablishment", h.reestablishment, 0, 10000, out.reestablishment)?;
    if let Some(r) = h.x2_rate {
        if r.0 == 0 {
            return Err(e("x2_rate", "expected a rate above 0".into()));
        }
        out.x2_rate_bps = r.0;
    }
    Ok(out)
}

/// `[lte.handover]` → the UE measurement and radio link monitoring configuration.
fn measurement_config(text: &str, h: &HandoverCfg) -> Result<(Option<MeasConfig>, Option<RlfConfig>), ScenarioError> {
    let e = |key: &str, msg: String| lte_err(text, "lte.handover", None, key, msg);
    let meas = match h.algorithm.as_deref().unwrap_or("a3") {
        "none" => None,
        "a3" => {
            let mut rc = ReportConfig::default();
            if let Some(x) = h.hysteresis {
                rc.hysteresis_db = x.0;
            }
            if let Some(x) = h.a3_offset {
                rc.offset_db = x.0;
            }
            if let Some(t) = h.time_to_trigger {
                let ms = t.0.as_nanos() / 1_000_000;
                if t.0.as_nanos() % 1_000_000 != 0 || !TIME_TO_TRIGGER_MS.contains(&(ms as u32)) {
                    return Err(e("time_to_trigger", format!("expected one of {TIME_TO_TRIGGER_MS:?} ms (TS 36.331 TimeToTrigger), got \"{t}\"")));
                }
                rc.time_to_trigger_ms = ms as u32;
            }
            let mut mc = MeasConfig { reports: vec![rc], ..MeasConfig::default() };
            if let Some(k) = h.filter_coefficient {
                mc.filter_coefficient = k;
            }
            if let Some(p) = h.measurement_period {
                let ms = p.0.as_nanos() / 1_000_000;
                if p.0.as_nanos() % 1_000_000 != 0 || !(1..=10_000).contains(&ms) {
                    return Err(e("measurement_period", format!("expected a whole number of milliseconds between 1ms and 10s, got \"{p}\"")));
                }
                mc.period_ms = ms as u32;
            }
            mc.validate().map_err(|m| {
                let key = if m.contains("hysteresis") {
                    "hysteresis"
                } else if m.contains("offset") {
                    "a3_offset"
                } else if m.contains("filter") {
                    "filter_coefficient"
                } else {
                    "algorithm"
                };
                e(key, m)
            })?;
            Some(mc)
        }
        other => return Err(e("algorithm", format!("expected \"a3\" or \"none\", got {other:?}"))),
    };
    let rlf = if h.rlf.unwrap_or(true) {
        let mut r = RlfConfig::default();
        if let Some(t) = h.t310 {
            // TS 36.331 T310: ms0 ... ms6000 (RLF-TimersAndConstants); whole milliseconds only,
            // so the value the model runs is the value written.
            let ms = t.0.as_nanos() / 1_000_000;
            if t.0.as_nanos() % 1_000_000 != 0 || ms > 6000 {
                return Err(e("t310", format!("expected a whole number of milliseconds between 0ms and 6000ms (TS 36.331 T310), got \"{t}\"")));
            }
            r.t310_ms = ms as u32;
        }
        if let Some(n) = h.n310 {
            r.n310 = n;
        }
        if let Some(n) = h.n311 {
            r.n311 = n;
        }
        if let Some(q) = h.qout {
            r.qout_db = q.0;
        }
        if let Some(q) = h.qin {
            r.qin_db = q.0;
        }
        r.validate().map_err(|m| {
            let key = ["t310", "n310", "n311", "qin", "qout"].into_iter().find(|k| m.starts_with(k)).unwrap_or("rlf");
            e(key, m)
        })?;
        Some(r)
    } else {
        None
    };
    Ok((meas, rlf))
}

fn amc_max_mcs() -> u8 {
    tbs::MAX_MCS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_of_100000_ues_plans_in_linear_time() {
        // Regression: each UE's name was checked against every UE before it (5·10⁹ string
        // comparisons for 100,000 UEs); now a set. Quadratic, this takes minutes.
        let text = "[[enb]]\nname = \"enb\"\n[[ue]]\nname = \"ue\"\ncount = 100000\nplacement = { type = \"disc\", radius = \"300m\" }\n";
        let cfg: LteCfg = toml::from_str(text).unwrap();
        let t0 = std::time::Instant::now();
        let plan = plan_lte(text, &cfg, 1).unwrap();
        let took = t0.elapsed();
        eprintln!("planned 100,000 UEs in {took:?}");
        assert_eq!(plan.ues.len(), 100_000);
        assert_eq!(plan.ues[99_999].name, "ue100000");
        assert!(took < std::time::Duration::from_secs(10), "planning 100,000 UEs took {took:?}");
        let dup = format!("{text}[[ue]]\nname = \"ue1000\"\nposition = [10.0, 0.0]\n");
        let cfg: LteCfg = toml::from_str(&dup).unwrap();
        let e = plan_lte(&dup, &cfg, 1).err().expect("a duplicate UE name is refused");
        assert!(e.message.contains("\"ue1000\" is used twice"), "{e}");
    }

    #[test]
    fn pdcp_is_the_models_config_with_errors_naming_key_value_and_line() {
        // [lte.pdcp] deserialises straight into celltcp_lte::pdcp::PdcpConfig.
        let text = "duration = \"1s\"\n[lte.pdcp]\nbuffer = \"64KB\"\ndiscard_timer = \"150ms\"\n";
        let cfg = crate::config::parse(text).unwrap();
        let pdcp = cfg.lte.unwrap().pdcp;
        assert_eq!(pdcp, PdcpConfig { tx_buffer_bytes: 65536, discard_timer: Some(SimDuration::from_millis(150)), ..PdcpConfig::default() });
        let e = crate::config::parse(&text.replace("64KB", "64KBB")).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("lte.pdcp.buffer", Some(3)), "{e}");
        assert!(e.message.contains("64KBB"), "{e}");
        let e = crate::config::parse(&text.replace("buffer", "bufer")).unwrap_err();
        assert!(e.to_string().contains("bufer"), "{e}");
        // The forwarding buffer is its own key; absent, it is unbounded and `buffer` keeps its
        // meaning.
        assert_eq!(pdcp.forwarding_buffer_bytes, None);
        let fwd = format!("{text}forwarding_buffer = \"256KB\"\n");
        let pdcp = crate::config::parse(&fwd).unwrap().lte.unwrap().pdcp;
        assert_eq!((pdcp.tx_buffer_bytes, pdcp.forwarding_buffer_bytes), (65536, Some(256 * 1024)));
        let e = crate::config::parse(&fwd.replace("256KB", "lots")).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("lte.pdcp.forwarding_buffer", Some(5)), "{e}");
        assert!(e.message.contains("lots"), "{e}");
    }
}
