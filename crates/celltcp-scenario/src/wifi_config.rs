//! The `[[wifi]]` part of a scenario: one infrastructure BSS per entry (an AP node and its
//! stations), validated into the model's own [`BssConfig`] (`celltcp-wifi`). Every key is
//! documented in `docs/scenario.md` (section "Wi-Fi") and `docs/wifi.md`.
//!
//! Defaults follow ns-3 3.37's `WifiHelper` with a constant-rate manager and the YANS channel
//! (log-distance loss, 16.0206 dBm, 7 dB noise figure) and Linux's transmit queue (1000
//! packets): the same figures `bench/ns3/wifi.cc` runs with.

use celltcp_wifi::channel::default_carrier_hz;
use celltcp_wifi::phy::PhyClass;
use celltcp_wifi::{Band, BssConfig, Channel, Hears, PathLoss, RateKind, Standard, TxVector, DEFAULT_QUEUE_LIMIT};
use serde::{Deserialize, Serialize};

use crate::config::{line_of_key, QueueLimitSpec};
use crate::error::ScenarioError;
use crate::units::{Bytes, Dbm, Decibel, Hertz, Meters};

fn def_standard() -> Standard {
    Standard::Ac
}
fn def_width() -> Hertz {
    Hertz(20e6)
}
fn def_streams() -> u8 {
    1
}
/// Distance of every station when no `distance`, `distances` or `positions` is given.
const DEFAULT_DISTANCE_M: f64 = 10.0;
fn def_tx_power() -> Dbm {
    Dbm(16.0206)
}
fn def_noise_figure() -> Decibel {
    Decibel(7.0)
}
fn def_queue() -> QueueLimitSpec {
    QueueLimitSpec::Packets(DEFAULT_QUEUE_LIMIT as u32)
}

/// The stations of a BSS: their names, or `{ prefix = "sta", count = 14 }` for `sta1` …
/// `sta14`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Stations {
    Names(Vec<String>),
    Group { prefix: String, count: u32 },
}

/// The guard interval of HT/VHT symbols.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GuardInterval {
    /// 800 ns.
    #[default]
    #[serde(alias = "800ns")]
    Long,
    /// 400 ns (HT/VHT only).
    #[serde(alias = "400ns")]
    Short,
}

/// How the MCS of each PPDU is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateControl {
    /// `mcs` always (ns-3's `ConstantRateWifiManager`).
    #[default]
    Constant,
    /// The fastest MCS whose BER at the link SNR is at most 1e-6 (`IdealWifiManager`).
    Ideal,
    /// Minstrel-HT (Linux `rc80211_minstrel_ht`).
    Minstrel,
}

/// The path-loss model that turns `distance` into an SNR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathLossName {
    /// ns-3's `LogDistancePropagationLossModel` defaults (n = 3, 46.6777 dB at 1 m).
    #[default]
    LogDistance,
    /// Friis.
    FreeSpace,
    /// ITU-R P.1238 office, one floor.
    Indoor,
}

/// `[[wifi]]`: one BSS.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WifiCfg {
    pub name: String,
    /// The access point: a router node created here, wired to the rest by `[[link]]`s.
    pub ap: String,
    /// The stations: hosts created here.
    pub stations: Stations,
    /// `"802.11a"`, `"802.11g"`, `"802.11n"` or `"802.11ac"` (also `"11a"` …).
    #[serde(default = "def_standard")]
    pub standard: Standard,
    /// Channel width: 20 MHz (802.11a/g), 20/40 MHz (802.11n), 20/40/80/160 MHz (802.11ac).
    #[serde(default = "def_width")]
    pub width: Hertz,
    /// Spatial streams (1 for 802.11a/g; HT 1–4; VHT 1–8).
    #[serde(default = "def_streams")]
    pub streams: u8,
    #[serde(default)]
    pub guard_interval: GuardInterval,
    #[serde(default)]
    pub rate_control: RateControl,
    /// The MCS of `rate_control = "constant"`: HT 0–7, VHT 0–9, 802.11a/g the rate index 0–7
    /// (6 … 54 Mbit/s). Default: the fastest valid one (7 for a/g/n, 8 for VHT at 20 MHz, 9 at
    /// wider widths).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcs: Option<u8>,
    /// Distance of every station to the AP (default 10 m; at most one of `distance`,
    /// `distances`, `positions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<Meters>,
    /// Per-station distances, one per station.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distances: Option<Vec<Meters>>,
    /// Per-station positions `[x, y]` in metres, one per station; the distance to
    /// `ap_position` sets each link's path loss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positions: Option<Vec<[f64; 2]>>,
    /// The AP's position `[x, y]` in metres (default the origin; only with `positions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ap_position: Option<[f64; 2]>,
    /// A fixed SNR on every link instead of the path loss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snr: Option<Decibel>,
    /// A fixed SNR per station (one per station) instead of the path loss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snrs: Option<Vec<Decibel>>,
    #[serde(default)]
    pub pathloss: PathLossName,
    #[serde(default = "def_tx_power")]
    pub tx_power: Dbm,
    #[serde(default = "def_noise_figure")]
    pub noise_figure: Decibel,
    /// A-MPDU aggregation with block ACK (default on for 802.11n/ac; refused for 802.11a/g).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ampdu: Option<bool>,
    /// Largest A-MPDU (default the standard's: 65,535 B for HT, 1,048,575 B for VHT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ampdu: Option<Bytes>,
    #[serde(default)]
    pub rts_cts: bool,
    /// The AP's queue toward each station, packets (`"1000p"`, Linux's txqueuelen).
    #[serde(default = "def_queue")]
    pub ap_queue: QueueLimitSpec,
    /// Each station's transmit queue, packets.
    #[serde(default = "def_queue")]
    pub sta_queue: QueueLimitSpec,
    /// Write `pcap/<name>.pcap`: every packet handed to the BSS, both directions.
    #[serde(default)]
    pub pcap: bool,
    /// Write `pcap/<name>.air.pcap`: the 802.11 frames on the air (radiotap + MAC headers,
    /// A-MPDUs, block ACKs, RTS/CTS), link type 127.
    #[serde(default)]
    pub pcap_air: bool,
    /// The channel number (1–14 at 2.4 GHz, 32–177 at 5 GHz): BSSs on the same channel of the
    /// same band share one medium (one contention domain). Default: a channel of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<u32>,
    /// Pairs of nodes of this BSS (the AP's or stations' names) that do not sense each other,
    /// on top of those `positions` puts beyond the CCA threshold (−82 dBm at 20 MHz): hidden
    /// stations. Symmetric. A BSS with hidden nodes must have its channel to itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<Vec<[String; 2]>>,
}

/// A validated `[[wifi]]`.
pub struct WifiPlan {
    pub name: String,
    pub bss: BssConfig,
    pub ap: String,
    pub stations: Vec<String>,
    /// Distance of each station, metres.
    pub distances_m: Vec<f64>,
    /// Position of each station and of the AP, metres (with `positions`).
    pub positions: Option<(Vec<[f64; 2]>, [f64; 2])>,
    /// Per-station fixed SNRs, dB (with `snrs`); else the channel gives each link's SNR from
    /// its distance.
    pub snrs_db: Option<Vec<f64>>,
    pub pcap: bool,
    pub pcap_air: bool,
    /// The channel number, if given (BSSs on one channel of one band share the medium).
    pub channel: Option<u32>,
    /// Who senses whom (node 0 the AP, 1 + s station s) when not every node senses every other
    /// (from `positions` and `hidden`); `None`: all do.
    pub hears: Option<Hears>,
}

fn werr(text: &str, i: usize, key: &str, msg: String) -> ScenarioError {
    ScenarioError::new(format!("wifi[{i}].{key}"), msg).at_line(line_of_key(text, Some(("wifi", i)), key))
}

fn queue_pkts(text: &str, i: usize, key: &str, q: QueueLimitSpec) -> Result<usize, ScenarioError> {
    match q {
        QueueLimitSpec::Packets(n) => Ok(n as usize),
        QueueLimitSpec::Bytes(_) => Err(werr(text, i, key, format!("expected a queue limit in packets such as \"1000p\" (the 802.11 queues hold MSDUs), got \"{q}\""))),
    }
}

/// Validates the `i`-th `[[wifi]]` (from `text`, to find lines) into a [`WifiPlan`].
pub fn plan_wifi(text: &str, i: usize, w: &WifiCfg) -> Result<WifiPlan, ScenarioError> {
    let e = |key: &str, msg: String| werr(text, i, key, msg);
    if w.name.is_empty() {
        return Err(e("name", "expected a non-empty name".into()));
    }
    if w.ap.is_empty() {
        return Err(e("ap", "expected the access point's node name".into()));
    }
    let stations: Vec<String> = match &w.stations {
        Stations::Names(v) => v.clone(),
        Stations::Group { prefix, count } => {
            if prefix.is_empty() {
                return Err(e("stations", "expected a non-empty `prefix`".into()));
            }
            (1..=*count).map(|k| format!("{prefix}{k}")).collect()
        }
    };
    if stations.is_empty() || stations.len() > u16::MAX as usize {
        return Err(e("stations", format!("expected 1..=65535 stations, got {}", stations.len())));
    }
    let mut seen = std::collections::HashSet::new();
    for s in &stations {
        if s.is_empty() || s == &w.ap || !seen.insert(s.as_str()) {
            return Err(e("stations", format!("expected distinct non-empty station names other than the AP {:?}, got {s:?}", w.ap)));
        }
    }
    let class = w.standard.class();
    let width = w.width.0 / 1e6;
    let widths: &[u16] = match w.standard {
        Standard::A | Standard::G => &[20],
        Standard::N => &[20, 40],
        Standard::Ac => &[20, 40, 80, 160],
    };
    let Some(&width_mhz) = widths.iter().find(|&&x| (f64::from(x) - width).abs() < 1e-6) else {
        return Err(e("width", format!("expected one of {} MHz for {:?}, got \"{}\"", widths.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/"), w.standard.name(), w.width)));
    };
    let max_streams = match class {
        PhyClass::Ofdm => 1,
        PhyClass::Ht => 4,
        PhyClass::Vht => 8,
    };
    if !(1..=max_streams).contains(&w.streams) {
        return Err(e("streams", format!("expected 1..={max_streams} spatial streams for {}, got {}", w.standard.name(), w.streams)));
    }
    let short_gi = w.guard_interval == GuardInterval::Short;
    if short_gi && class == PhyClass::Ofdm {
        return Err(e("guard_interval", format!("expected \"long\": {} has no short guard interval", w.standard.name())));
    }
    let base = TxVector { class, mcs: 0, width_mhz, nss: w.streams, short_gi };
    let valid: Vec<u8> = (0..=w.standard.max_mcs()).filter(|&m| TxVector { mcs: m, ..base }.is_valid()).collect();
    if valid.is_empty() {
        return Err(e("streams", format!("no MCS is valid for {} streams at {width_mhz} MHz", w.streams)));
    }
    let rate = match w.rate_control {
        RateControl::Constant => {
            let m = w.mcs.unwrap_or(*valid.last().unwrap());
            if !valid.contains(&m) {
                return Err(e("mcs", format!("expected one of MCS {valid:?} for {} at {width_mhz} MHz with {} stream(s), got {m}", w.standard.name(), w.streams)));
            }
            RateKind::Constant(m)
        }
        other => {
            if w.mcs.is_some() {
                return Err(e("mcs", format!("`mcs` fixes the rate of rate_control = \"constant\"; rate_control is {:?}", format!("{other:?}").to_lowercase())));
            }
            if other == RateControl::Ideal {
                RateKind::Ideal
            } else {
                RateKind::Minstrel
            }
        }
    };
    let ampdu = w.ampdu.unwrap_or(class != PhyClass::Ofdm);
    if ampdu && class == PhyClass::Ofdm {
        return Err(e("ampdu", format!("expected false: {} has no A-MPDU (HT and VHT only)", w.standard.name())));
    }
    let max_ampdu_bytes = match w.max_ampdu {
        None => None,
        Some(b) => {
            let lim = w.standard.max_ampdu_bytes().unwrap_or(0) as u64;
            if !ampdu {
                return Err(e("max_ampdu", "applies only with ampdu = true".into()));
            }
            if b.0 < 1600 || b.0 > lim {
                return Err(e("max_ampdu", format!("expected 1600B..={lim}B for {}, got \"{b}\"", w.standard.name())));
            }
            Some(b.0 as u32)
        }
    };
    let given: Vec<&str> = [("distance", w.distance.is_some()), ("distances", w.distances.is_some()), ("positions", w.positions.is_some())].into_iter().filter(|g| g.1).map(|g| g.0).collect();
    if given.len() > 1 {
        return Err(e(given[1], format!("expected only one of `distance`, `distances`, `positions`; got both `{}` and `{}`", given[0], given[1])));
    }
    if w.ap_position.is_some() && w.positions.is_none() {
        return Err(e("ap_position", "applies only with `positions` (the stations' [x, y] in metres)".into()));
    }
    let mut positions = None;
    let distances_m: Vec<f64> = match (&w.distances, &w.positions) {
        (Some(d), _) => {
            if d.len() != stations.len() {
                return Err(e("distances", format!("expected one distance per station ({}), got {}", stations.len(), d.len())));
            }
            d.iter().map(|m| m.0).collect()
        }
        (None, Some(p)) => {
            if p.len() != stations.len() {
                return Err(e("positions", format!("expected one [x, y] position in metres per station ({}), got {}", stations.len(), p.len())));
            }
            let ap = w.ap_position.unwrap_or([0.0, 0.0]);
            if !ap.iter().all(|x| x.is_finite()) {
                return Err(e("ap_position", format!("expected finite [x, y] coordinates in metres, got {ap:?}")));
            }
            if let Some(bad) = p.iter().find(|q| !q.iter().all(|x| x.is_finite())) {
                return Err(e("positions", format!("expected finite [x, y] coordinates in metres, got {bad:?}")));
            }
            positions = Some((p.clone(), ap));
            p.iter().map(|q| (q[0] - ap[0]).hypot(q[1] - ap[1])).collect()
        }
        (None, None) => vec![w.distance.map_or(DEFAULT_DISTANCE_M, |m| m.0); stations.len()],
    };
    if w.snr.is_some() && w.snrs.is_some() {
        return Err(e("snrs", "expected only one of `snr` (every link) and `snrs` (one per station); got both".into()));
    }
    let snr_range = -10.0..=100.0;
    let snrs_db = match &w.snrs {
        None => None,
        Some(v) => {
            if v.len() != stations.len() {
                return Err(e("snrs", format!("expected one SNR per station ({}), got {}", stations.len(), v.len())));
            }
            if let Some(bad) = v.iter().find(|s| !snr_range.contains(&s.0)) {
                return Err(e("snrs", format!("expected SNRs between -10dB and 100dB, got \"{bad}\"")));
            }
            Some(v.iter().map(|s| s.0).collect::<Vec<f64>>())
        }
    };
    let band = w.standard.default_band();
    let carrier_hz = match w.channel {
        None => default_carrier_hz(band),
        Some(c) => channel_carrier_hz(band, c).ok_or_else(|| e("channel", format!("expected a {} channel number ({}) for {}, got {c}", band_name(band), if band == Band::Ghz2_4 { "1-14" } else { "32-177" }, w.standard.name())))?,
    };
    let channel = match w.snr {
        Some(s) => {
            if !snr_range.contains(&s.0) {
                return Err(e("snr", format!("expected an SNR between -10dB and 100dB, got \"{s}\"")));
            }
            Channel::FixedSnr(s.0)
        }
        None => Channel::PathLoss {
            model: match w.pathloss {
                PathLossName::LogDistance => PathLoss::NS3_LOG_DISTANCE,
                PathLossName::FreeSpace => PathLoss::FreeSpace,
                PathLossName::Indoor => PathLoss::indoor_office(carrier_hz),
            },
            carrier_hz,
            tx_power_dbm: w.tx_power.0,
            noise_figure_db: w.noise_figure.0,
        },
    };
    let mut bss = BssConfig::new(w.standard);
    bss.band = band;
    bss.width_mhz = width_mhz;
    bss.nss = w.streams;
    bss.short_gi = short_gi;
    bss.rate = rate;
    bss.ampdu = ampdu;
    bss.max_ampdu_bytes = max_ampdu_bytes;
    bss.rts_cts = w.rts_cts;
    bss.queue_limit_pkts = queue_pkts(text, i, "ap_queue", w.ap_queue)?;
    bss.sta_queue_limit_pkts = Some(queue_pkts(text, i, "sta_queue", w.sta_queue)?);
    // who senses whom: the CCA threshold over the path loss between positions, then the
    // pairs declared hidden
    let mut hears = match &positions {
        Some((p, ap)) => Hears::from_positions(*ap, p, &channel, width_mhz),
        None => Hears::all(stations.len() + 1),
    };
    for pair in w.hidden.iter().flatten() {
        let index = |name: &str| if name == w.ap { Some(0) } else { stations.iter().position(|s| s == name).map(|k| k + 1) };
        let (Some(a), Some(b)) = (index(&pair[0]), index(&pair[1])) else {
            let bad = if index(&pair[0]).is_none() { &pair[0] } else { &pair[1] };
            return Err(e("hidden", format!("expected pairs of this BSS's node names (the AP {:?} or its stations), got {bad:?}", w.ap)));
        };
        if a == b {
            return Err(e("hidden", format!("expected two different nodes in a pair, got [{:?}, {:?}]", pair[0], pair[1])));
        }
        hears.set_hidden(a, b);
    }
    let hears = (!hears.is_full()).then_some(hears);
    bss.channel = channel;
    Ok(WifiPlan { name: w.name.clone(), bss, ap: w.ap.clone(), stations, distances_m, positions, snrs_db, pcap: w.pcap, pcap_air: w.pcap_air, channel: w.channel, hears })
}

fn band_name(band: Band) -> &'static str {
    match band {
        Band::Ghz2_4 => "2.4 GHz",
        Band::Ghz5 => "5 GHz",
    }
}

/// The centre frequency of 20 MHz channel `c` (IEEE 802.11-2020 §19.3.15.2 and §17.3.8.4.2:
/// 2407 + 5·c MHz at 2.4 GHz, channel 14 at 2484 MHz; 5000 + 5·c MHz at 5 GHz), or `None` when
/// `c` is not a channel of the band.
pub fn channel_carrier_hz(band: Band, c: u32) -> Option<f64> {
    match band {
        Band::Ghz2_4 if c == 14 => Some(2.484e9),
        Band::Ghz2_4 if (1..=13).contains(&c) => Some((2407 + 5 * c) as f64 * 1e6),
        Band::Ghz5 if (32..=177).contains(&c) => Some((5000 + 5 * c) as f64 * 1e6),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(extra: &str) -> Result<WifiPlan, ScenarioError> {
        let text = format!("[[wifi]]\nname = \"bss\"\nap = \"ap\"\nstations = [\"a\", \"b\"]\n{extra}\n");
        #[derive(Deserialize)]
        struct Doc {
            wifi: Vec<WifiCfg>,
        }
        let d: Doc = toml::from_str(&text).map_err(|e| ScenarioError::new("", e.to_string()))?;
        plan_wifi(&text, 0, &d.wifi[0])
    }

    #[test]
    fn defaults_are_ns3s_vht_bss() {
        let p = cfg("").unwrap();
        assert_eq!(p.bss.standard, Standard::Ac);
        assert_eq!((p.bss.width_mhz, p.bss.nss, p.bss.short_gi, p.bss.ampdu, p.bss.rts_cts), (20, 1, false, true, false));
        // VHT MCS 9 is invalid at 20 MHz with one stream (Table 21-30): the fastest is 8
        assert_eq!(p.bss.rate, RateKind::Constant(8));
        assert_eq!((p.bss.queue_limit_pkts, p.bss.sta_queue_limit_pkts), (1000, Some(1000)));
        assert_eq!(p.distances_m, vec![10.0, 10.0]);
        assert_eq!(p.bss.channel, Channel::ns3_default(5.18e9));
    }

    #[test]
    fn keys_reach_the_model() {
        let p = cfg("standard = \"11g\"\nmcs = 3\nsnr = \"25dB\"\nrts_cts = true\nap_queue = \"50p\"\nsta_queue = \"20p\"\ndistances = [\"1m\", \"2m\"]").unwrap();
        assert_eq!((p.bss.standard, p.bss.ampdu, p.bss.rate), (Standard::G, false, RateKind::Constant(3)));
        assert_eq!(p.bss.channel, Channel::FixedSnr(25.0));
        assert_eq!((p.bss.queue_limit_pkts, p.bss.sta_queue_limit_pkts), (50, Some(20)));
        assert_eq!(p.distances_m, vec![1.0, 2.0]);
        let p = cfg("standard = \"802.11n\"\nwidth = \"40MHz\"\nstreams = 2\nguard_interval = \"short\"\nrate_control = \"minstrel\"").unwrap();
        assert_eq!((p.bss.width_mhz, p.bss.nss, p.bss.short_gi, p.bss.rate), (40, 2, true, RateKind::Minstrel));
        assert_eq!((p.positions, p.snrs_db), (None, None));
        // positions: the distance to the AP (3-4-5 and 5-12-13 triangles around [1, 1])
        let p = cfg("positions = [[4.0, 5.0], [-4.0, -11.0]]\nap_position = [1.0, 1.0]").unwrap();
        assert_eq!(p.distances_m, vec![5.0, 13.0]);
        assert_eq!(p.positions, Some((vec![[4.0, 5.0], [-4.0, -11.0]], [1.0, 1.0])));
        let p = cfg("positions = [[0.0, 3.0], [0.0, 0.0]]").unwrap();
        assert_eq!(p.distances_m, vec![3.0, 0.0]);
        let p = cfg("snrs = [\"30dB\", \"12dB\"]").unwrap();
        assert_eq!(p.snrs_db, Some(vec![30.0, 12.0]));
        // a channel number sets the carrier: 802.11g channel 6 at 2437 MHz, 802.11ac 44 at 5220
        assert_eq!(cfg("").unwrap().channel, None);
        let p = cfg("standard = \"11g\"\nchannel = 6\npathloss = \"free-space\"").unwrap();
        assert_eq!(p.channel, Some(6));
        assert!(matches!(p.bss.channel, Channel::PathLoss { carrier_hz, .. } if carrier_hz == 2.437e9));
        // hidden pairs, symmetric; stations 80 m apart, 40 m either side of the AP, are hidden
        // from each other (the CCA range of ns-3's log-distance model at 16 dBm is 51.5 m)
        assert_eq!(cfg("").unwrap().hears, None);
        let h = cfg("hidden = [[\"a\", \"b\"]]").unwrap().hears.unwrap();
        assert!(!h.hears(1, 2) && !h.hears(2, 1) && h.hears(0, 1) && h.hears(2, 0));
        let h = cfg("hidden = [[\"ap\", \"b\"]]").unwrap().hears.unwrap();
        assert!(!h.hears(0, 2) && h.hears(1, 2));
        let h = cfg("positions = [[-40.0, 0.0], [40.0, 0.0]]").unwrap().hears.unwrap();
        assert!(!h.hears(1, 2) && h.hears(0, 1) && h.hears(0, 2));
        assert_eq!(cfg("positions = [[-20.0, 0.0], [20.0, 0.0]]").unwrap().hears, None);
        let p = cfg("channel = 44").unwrap();
        assert!(matches!(p.bss.channel, Channel::PathLoss { carrier_hz, .. } if carrier_hz == 5.22e9));
    }

    #[test]
    fn bad_values_name_key_value_and_expectation() {
        for (extra, key, words) in [
            ("standard = \"11g\"\nwidth = \"40MHz\"", "wifi[0].width", "20 MHz"),
            ("mcs = 9", "wifi[0].mcs", "got 9"),
            ("standard = \"11a\"\nampdu = true", "wifi[0].ampdu", "no A-MPDU"),
            ("standard = \"11g\"\nguard_interval = \"short\"", "wifi[0].guard_interval", "no short guard"),
            ("streams = 9", "wifi[0].streams", "got 9"),
            ("ap_queue = \"10KB\"", "wifi[0].ap_queue", "packets"),
            ("standard = \"11g\"\nchannel = 36", "wifi[0].channel", "2.4 GHz channel number (1-14) for 802.11g, got 36"),
            ("channel = 6", "wifi[0].channel", "5 GHz channel number (32-177) for 802.11ac, got 6"),
            ("distances = [\"1m\"]", "wifi[0].distances", "one distance per station"),
            ("rate_control = \"ideal\"\nmcs = 3", "wifi[0].mcs", "constant"),
            ("max_ampdu = \"100B\"", "wifi[0].max_ampdu", "1600B"),
            ("distance = \"5m\"\ndistances = [\"1m\", \"2m\"]", "wifi[0].distances", "only one of"),
            ("distances = [\"1m\", \"2m\"]\npositions = [[1.0, 0.0], [0.0, 2.0]]", "wifi[0].positions", "only one of"),
            ("positions = [[1.0, 0.0]]", "wifi[0].positions", "one [x, y] position in metres per station (2), got 1"),
            ("ap_position = [1.0, 2.0]", "wifi[0].ap_position", "only with `positions`"),
            ("snrs = [\"30dB\"]", "wifi[0].snrs", "one SNR per station (2), got 1"),
            ("snr = \"20dB\"\nsnrs = [\"30dB\", \"12dB\"]", "wifi[0].snrs", "got both"),
            ("snrs = [\"30dB\", \"200dB\"]", "wifi[0].snrs", "200dB"),
            ("hidden = [[\"a\", \"x\"]]", "wifi[0].hidden", "node names (the AP \"ap\" or its stations), got \"x\""),
            ("hidden = [[\"b\", \"b\"]]", "wifi[0].hidden", "two different nodes"),
        ] {
            let err = cfg(extra).err().unwrap_or_else(|| panic!("{extra} accepted"));
            assert_eq!(err.key, key, "{extra}: {err}");
            assert!(err.message.contains(words), "{extra}: {err}");
            assert!(err.line.is_some(), "{extra}: {err}");
        }
    }
}
