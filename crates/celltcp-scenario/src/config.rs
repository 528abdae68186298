//! The scenario file: a TOML document deserialised into [`Config`] and validated before anything
//! runs. Every key is documented in `docs/scenario.md`.
//!
//! Errors name the key path (`link[0].rate`), the value and what was expected, and the line of
//! the file when it can be found. Unknown keys are errors (`deny_unknown_fields`).

use std::fmt;

use celltcp_tcp::cc::CcConfig;
use serde::{de, Deserialize, Deserializer, Serialize};

use crate::error::ScenarioError;
use crate::units::{Bytes, Dur, Length, Rate};

fn default_seed() -> u64 {
    1
}
fn default_sample_interval() -> Dur {
    Dur::parse("10ms").unwrap()
}
fn default_true() -> bool {
    true
}
fn default_mtu() -> u32 {
    1500
}
fn default_queue() -> QueueSpec {
    QueueSpec::DropTail(QueueLimitSpec::Packets(100))
}

/// A whole scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Simulated duration of the run.
    pub duration: Dur,
    /// Run seed; `--seed` overrides it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Interval of the time series (cwnd, queue length, …).
    #[serde(default = "default_sample_interval")]
    pub sample_interval: Dur,
    /// Keep every RTT sample (for distributions); off keeps only summary statistics.
    #[serde(default = "default_true")]
    pub record_rtt: bool,
    #[serde(default, rename = "node")]
    pub nodes: Vec<NodeCfg>,
    #[serde(default, rename = "link")]
    pub links: Vec<LinkCfg>,
    #[serde(default, rename = "flow")]
    pub flows: Vec<FlowCfg>,
    /// The LTE radio access network and EPC (see `docs/scenario.md`, section "LTE").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lte: Option<crate::lte_config::LteCfg>,
    /// Wi-Fi BSSs (see `docs/scenario.md`, section "Wi-Fi").
    #[serde(default, rename = "wifi", skip_serializing_if = "Vec::is_empty")]
    pub wifi: Vec<crate::wifi_config::WifiCfg>,
    /// Real programs run in network namespaces by `celltcp emu` (ignored by `celltcp run`); see
    /// `docs/emulation.md`.
    #[serde(default, rename = "exec", skip_serializing_if = "Vec::is_empty")]
    pub execs: Vec<ExecCfg>,
    /// Settings of `celltcp emu` (ignored by `celltcp run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emu: Option<EmuCfg>,
    /// Transparent split-TCP proxies (see `docs/scenario.md`, section "Transparent proxy").
    #[serde(default, rename = "proxy", skip_serializing_if = "Vec::is_empty")]
    pub proxies: Vec<crate::tproxy::ProxyCfg>,
    /// Interfaces going down and coming back up during the run (see `docs/scenario.md`,
    /// section "Events").
    #[serde(default, rename = "event", skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventCfg>,
}

/// One `[[event]]`: at `at`, the interface (link) named `interface` goes `down` or comes back
/// `up`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventCfg {
    pub at: Dur,
    /// A `[[link]]`'s name, `radio-<ue>` or `wifi-<bss>-<station>` (docs/scenario.md,
    /// "Interfaces and addresses").
    pub interface: String,
    pub state: IfaceState,
}

/// What an `[[event]]` does to its interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IfaceState {
    Down,
    Up,
}

/// One `[[exec]]` entry: a command run in the network namespace of a host by `celltcp emu`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecCfg {
    /// The host whose namespace runs the command.
    pub node: String,
    /// A command line (split as a POSIX shell would, run by `sh -c`); `{addr:NODE}` is replaced
    /// by that node's address.
    pub cmd: String,
    /// When it starts (default 0 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Dur>,
    /// A server: not waited for, ended at the end of the run (default false).
    #[serde(default)]
    pub background: bool,
}

/// The `[emu]` table: the kernel settings of the namespaces `celltcp emu` creates.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuCfg {
    /// `net.ipv4.tcp_congestion_control` of every namespace (default "cubic").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// Per host, overriding `cc`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub node_cc: std::collections::BTreeMap<String, String>,
    /// `net.ipv4.tcp_rmem` ("min default max" bytes; default the kernel's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_rmem: Option<String>,
    /// `net.ipv4.tcp_wmem`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_wmem: Option<String>,
    /// Spin instead of sleeping when the next event is closer than this (default 50us).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_poll: Option<Dur>,
    /// Segmentation offload on the TUN devices (`IFF_VNET_HDR`, TSO: the kernel hands up to
    /// 64 KB per read, the emulator cuts it into MSS-sized packets); default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload: Option<bool>,
    /// With `offload`, a train of TCP segments of one flow delivered to a device in one turn of
    /// the loop is written as one GSO packet (the receiving kernel takes it as one GRO'd skb);
    /// default true. False: one packet per write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso_writes: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

/// An explicitly declared node (hosts named only in links need no declaration).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub name: String,
    #[serde(default = "default_host")]
    pub kind: NodeKind,
    /// IPv4 address as dotted quad; default 10.0.x.y in declaration order.
    #[serde(default)]
    pub address: Option<String>,
}
fn default_host() -> NodeKind {
    NodeKind::Host
}

/// A bidirectional point-to-point link: two independent directions with the same parameters
/// (or `rate_reverse` / `trace_reverse` for asymmetric ones).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(deserialize_with = "crate::units::exact")]
    pub between: [String; 2],
    /// Rate of the direction `between[0] → between[1]` (and of the reverse unless `rate_reverse`).
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub rate_reverse: Option<Rate>,
    /// One-way propagation delay.
    pub delay: Dur,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default = "default_queue")]
    pub queue: QueueSpec,
    /// Random loss per packet, each direction independently: one model for both directions, or
    /// `{ forward = …, reverse = … }` (forward is `between[0] → between[1]`).
    #[serde(default)]
    pub loss: LossSpec,
    /// Mahimahi trace for `between[0] → between[1]` (replaces `rate` in that direction).
    #[serde(default)]
    pub trace: Option<String>,
    /// Mahimahi trace for `between[1] → between[0]`.
    #[serde(default)]
    pub trace_reverse: Option<String>,
    /// Write `pcap/<name>.pcap` (both directions, captured as they enter the wire).
    #[serde(default)]
    pub pcap: bool,
}

/// Queue discipline: `"100p"`, `"150KB"`, or a table `{ type = "red" | "codel" | "droptail" | "step", … }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum QueueSpec {
    DropTail(QueueLimitSpec),
    Table(QueueTable),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimitSpec {
    Packets(u32),
    Bytes(u64),
}

impl QueueLimitSpec {
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Some(n) = t.strip_suffix('p') {
            return match n.trim().parse::<u32>() {
                Ok(v) if v > 0 => Ok(QueueLimitSpec::Packets(v)),
                _ => Err(format!("expected a queue limit such as \"100p\" (packets, at least 1) or \"150KB\" (bytes), got {s:?}")),
            };
        }
        match Bytes::parse(t) {
            Ok(b) if b.0 >= 1 => Ok(QueueLimitSpec::Bytes(b.0)),
            _ => Err(format!("expected a queue limit such as \"100p\" (packets, at least 1) or \"150KB\" (bytes), got {s:?}")),
        }
    }
}

impl fmt::Display for QueueLimitSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLimitSpec::Packets(n) => write!(f, "{n}p"),
            QueueLimitSpec::Bytes(b) => write!(f, "{}", Bytes(*b)),
        }
    }
}

impl Serialize for QueueLimitSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for QueueLimitSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        QueueLimitSpec::parse(&s).map_err(de::Error::custom)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueType {
    DropTail,
    Red,
    CoDel,
    /// CE marking above an instantaneous threshold K (DCTCP switches, RFC 8257 §3.1).
    Step,
}

/// A queue described as a table. Keys that do not apply to `type` are refused at validation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueTable {
    #[serde(rename = "type")]
    pub kind: QueueType,
    /// Hard limit: `"100p"` or `"150KB"` (CoDel: packets). Default 100 packets for drop-tail,
    /// 25 for RED, 1000 for CoDel (ns-3's defaults).
    #[serde(default)]
    pub limit: Option<QueueLimitSpec>,
    /// RED: minimum threshold in packets (default 5).
    #[serde(default)]
    pub min_th: Option<f64>,
    /// RED: maximum threshold in packets (default 15).
    #[serde(default)]
    pub max_th: Option<f64>,
    /// RED: drop probability at max_th (default 0.02).
    #[serde(default)]
    pub max_p: Option<f64>,
    /// RED: EWMA weight (default 0.002).
    #[serde(default)]
    pub w_q: Option<f64>,
    /// RED: gentle mode (default true).
    #[serde(default)]
    pub gentle: Option<bool>,
    /// RED/CoDel: mark ECN-capable packets instead of dropping (default false).
    #[serde(default)]
    pub ecn: Option<bool>,
    /// CoDel: target sojourn time (default 5ms).
    #[serde(default)]
    pub target: Option<Dur>,
    /// CoDel: interval (default 100ms).
    #[serde(default)]
    pub interval: Option<Dur>,
    /// Step: marking threshold K in packets (default 20); limit default 100 packets.
    #[serde(default)]
    pub k: Option<u32>,
}

impl<'de> Deserialize<'de> for QueueSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = QueueSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a queue limit such as \"100p\" or \"150KB\", or a table with type = \"droptail\" | \"red\" | \"codel\" | \"step\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<QueueSpec, E> {
                QueueLimitSpec::parse(s).map(QueueSpec::DropTail).map_err(E::custom)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<QueueSpec, A::Error> {
                QueueTable::deserialize(de::value::MapAccessDeserializer::new(m)).map(QueueSpec::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// Random loss: a probability (Bernoulli), or a table
/// `{ model = "bernoulli", p = … }` / `{ model = "gilbert-elliott", p_good_to_bad, p_bad_to_good, loss_good, loss_bad }`,
/// the same in both directions; or `{ forward = …, reverse = … }`, each one of those (a missing
/// side has no loss).
#[derive(Clone, Debug, PartialEq, Default)]
pub enum LossSpec {
    #[default]
    None,
    Bernoulli(f64),
    Table(LossTable),
    /// Per direction: `forward` (`between[0] → between[1]`) and `reverse`.
    Directions { forward: Box<LossSpec>, reverse: Box<LossSpec> },
}

/// Every key a loss table may have, to tell a model table from a per-direction one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLossTable {
    #[serde(default)]
    model: Option<LossModelKind>,
    #[serde(default)]
    p: Option<f64>,
    #[serde(default)]
    p_good_to_bad: Option<f64>,
    #[serde(default)]
    p_bad_to_good: Option<f64>,
    #[serde(default)]
    loss_good: Option<f64>,
    #[serde(default)]
    loss_bad: Option<f64>,
    #[serde(default)]
    forward: Option<LossSpec>,
    #[serde(default)]
    reverse: Option<LossSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossModelKind {
    Bernoulli,
    GilbertElliott,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossTable {
    pub model: LossModelKind,
    #[serde(default)]
    pub p: Option<f64>,
    #[serde(default)]
    pub p_good_to_bad: Option<f64>,
    #[serde(default)]
    pub p_bad_to_good: Option<f64>,
    #[serde(default)]
    pub loss_good: Option<f64>,
    #[serde(default)]
    pub loss_bad: Option<f64>,
}

impl Serialize for LossSpec {
    /// No loss is written `0` (as a scenario writes it), so the configuration as run reads back.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LossSpec::None => s.serialize_f64(0.0),
            LossSpec::Bernoulli(p) => s.serialize_f64(*p),
            LossSpec::Table(t) => t.serialize(s),
            LossSpec::Directions { forward, reverse } => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("forward", forward.as_ref())?;
                m.serialize_entry("reverse", reverse.as_ref())?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for LossSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = LossSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a loss probability between 0 and 1, or a table with model = \"bernoulli\" | \"gilbert-elliott\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<LossSpec, E> {
                Ok(if v == 0.0 { LossSpec::None } else { LossSpec::Bernoulli(v) })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LossSpec, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LossSpec, E> {
                self.visit_f64(v as f64)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<LossSpec, A::Error> {
                let r = RawLossTable::deserialize(de::value::MapAccessDeserializer::new(m))?;
                let model_keys = r.model.is_some()
                    || r.p.is_some()
                    || r.p_good_to_bad.is_some()
                    || r.p_bad_to_good.is_some()
                    || r.loss_good.is_some()
                    || r.loss_bad.is_some();
                if r.forward.is_some() || r.reverse.is_some() {
                    if model_keys {
                        return Err(de::Error::custom("expected either a loss model (model = …) or per-direction loss (forward = …, reverse = …), not both in one table"));
                    }
                    let nested = |x: &Option<LossSpec>| matches!(x, Some(LossSpec::Directions { .. }));
                    if nested(&r.forward) || nested(&r.reverse) {
                        return Err(de::Error::custom("expected a loss probability or model table for `forward`/`reverse`, got another per-direction table"));
                    }
                    return Ok(LossSpec::Directions {
                        forward: Box::new(r.forward.unwrap_or_default()),
                        reverse: Box::new(r.reverse.unwrap_or_default()),
                    });
                }
                let Some(model) = r.model else {
                    return Err(de::Error::missing_field("model"));
                };
                Ok(LossSpec::Table(LossTable {
                    model,
                    p: r.p,
                    p_good_to_bad: r.p_good_to_bad,
                    p_bad_to_good: r.p_bad_to_good,
                    loss_good: r.loss_good,
                    loss_bad: r.loss_bad,
                }))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    Bulk,
    Iperf,
    Udp,
    Ping,
    /// HTTP/1.1 web browsing (`celltcp-apps/src/web.rs`).
    Web,
    /// Progressive video download (`celltcp-apps/src/video.rs`).
    Video,
}

impl AppKind {
    pub fn name(self) -> &'static str {
        match self {
            AppKind::Bulk => "bulk",
            AppKind::Iperf => "iperf",
            AppKind::Udp => "udp",
            AppKind::Ping => "ping",
            AppKind::Web => "web",
            AppKind::Video => "video",
        }
    }

    /// The app runs over TCP (takes the TCP keys).
    pub fn is_tcp(self) -> bool {
        matches!(self, AppKind::Bulk | AppKind::Iperf | AppKind::Web | AppKind::Video)
    }
}

/// The page model of `app = "web"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageModelKind {
    /// NGMN / 3GPP2 C.R1002 (lognormal sizes, Pareto object counts).
    Ngmn,
    /// Every page alike: `main_size`, `embedded_objects` of `embedded_size`.
    Fixed,
}

/// How reading times are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadingDist {
    /// Exponential of mean `reading_time` (the NGMN model).
    Exponential,
    /// Exactly `reading_time`.
    Fixed,
}

/// How `app = "video"` downloads (crates/celltcp-apps/src/video.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VideoMode {
    /// One request for the whole clip, as fast as TCP allows (the default).
    Greedy,
    /// Range requests of `block` while less than `buffer_target` of media is buffered.
    Paced,
}

/// A flow: an application between two hosts. Keys that do not apply to its `app` are refused.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    #[serde(default)]
    pub name: Option<String>,
    pub app: AppKind,
    pub from: String,
    pub to: String,
    /// When the application starts.
    #[serde(default)]
    pub start: Option<Dur>,
    /// The client's source address: one of the `from` host's addresses, or the name of one of
    /// its interfaces (`docs/scenario.md`, "Interfaces and addresses"). Default: the address of
    /// the interface its route leaves by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind: Option<String>,
    // --- TCP (bulk, iperf) ---
    /// Congestion control: a name (`"cubic"`, its defaults) or a table with the algorithm's
    /// parameters (`{ name = "cubic", beta = 0.5 }`; see `docs/congestion-control.md`).
    /// Default CUBIC.
    #[serde(default)]
    pub cc: Option<CcConfig>,
    /// Multipath TCP (RFC 8684) for a bulk or iperf flow: `true` (the defaults) or
    /// `{ cc, scheduler, path_manager, subflows }` (see `docs/mptcp.md`). Default off.
    #[serde(default)]
    pub mptcp: Option<crate::mptcp_config::MptcpSpec>,
    /// Fixed socket buffers (both ends) as `iperf3 -w` sets them on Linux: the value is doubled
    /// and the receiver advertises only the kernel's payload share of it (`-w 64KB` advertises
    /// 80 KB; see `BufSize::linux_sockopt`). Default: Linux-like autotuning.
    #[serde(default)]
    pub window: Option<Bytes>,
    /// Advertise exactly this window and buffer exactly this much at the sender (both ends), for
    /// closed-form checks (W / RTT); excludes `window`.
    #[serde(default)]
    pub window_exact: Option<Bytes>,
    /// TCP payload bytes per segment (default 1448: 1500 MTU − 20 IP − 20 TCP − 12 timestamps).
    #[serde(default)]
    pub mss: Option<u32>,
    #[serde(default)]
    pub sack: Option<bool>,
    #[serde(default)]
    pub timestamps: Option<bool>,
    #[serde(default)]
    pub delayed_ack: Option<bool>,
    /// The delayed-ACK timer (default 40 ms, Linux `TCP_DELACK_MIN`; 1 ms..500 ms, RFC 5681 §4.2).
    #[serde(default)]
    pub delayed_ack_timeout: Option<Dur>,
    /// Segments ACKed at once at connection start (Linux quick-ACK mode; 0..16, default 16).
    #[serde(default)]
    pub quickack: Option<u32>,
    /// Nagle's algorithm (Linux `tcp_nagle_check`); `false` is `TCP_NODELAY` (`iperf3 -N`).
    /// Default on, as Linux.
    #[serde(default)]
    pub nagle: Option<bool>,
    #[serde(default)]
    pub pacing: Option<bool>,
    /// How a paced flow (BBR, or `pacing = true`) spaces its data: `"tso"` (default, Linux's
    /// TSO autosizing: bursts of about 1 ms of data, at least 2 segments) or `"segment"` (every
    /// segment on its own); see `docs/tcp.md`.
    #[serde(default)]
    pub pacing_quantum: Option<celltcp_tcp::PacingQuantum>,
    #[serde(default)]
    pub initial_cwnd: Option<u32>,
    #[serde(default)]
    pub min_rto: Option<Dur>,
    /// Loss recovery with SACK: `"linux"` (default: RACK-TLP, PRR, DSACK undo, as Linux) or
    /// `"rfc6675"` (RFC 6675 DupThresh recovery, as ns-3); see `docs/tcp.md`.
    #[serde(default)]
    pub recovery: Option<celltcp_tcp::Recovery>,
    /// Negotiate ECN (RFC 3168); default off. `cc = "dctcp"` turns it on by itself.
    #[serde(default)]
    pub ecn: Option<bool>,
    /// Record every data segment the sender transmits and every ACK it receives (the
    /// `segments` and `acks` tables); default off.
    #[serde(default)]
    pub trace_segments: Option<bool>,
    /// Only the segments and ACKs from `[start, end]` (times of the run), with `trace_segments`.
    #[serde(default, deserialize_with = "crate::units::exact_opt")]
    pub trace_window: Option<[Dur; 2]>,
    // --- bulk ---
    /// Bytes to transfer (default: unlimited until the end of the run).
    #[serde(default)]
    pub bytes: Option<Bytes>,
    // --- iperf ---
    /// iperf test length `-t` (default: until the end of the run).
    #[serde(default)]
    pub duration: Option<Dur>,
    /// iperf write size `-l` (default 128KB for TCP); for `video`, the clip's length (a
    /// duration, default 90s).
    #[serde(default)]
    pub length: Option<Length>,
    /// iperf `-R`: the server (`to`) sends to the client (`from`).
    #[serde(default)]
    pub reverse: Option<bool>,
    /// iperf `-P`: parallel streams, each a connection of its own (1..128, default 1); with 2
    /// or more, stream k is the flow `<name>.k` and iperf3's `[SUM]` adds them up.
    #[serde(default)]
    pub parallel: Option<u32>,
    /// iperf `--bidir`: as many streams the other way at the same time (`<name>.tx` from the
    /// client, `<name>.rx` to it).
    #[serde(default)]
    pub bidir: Option<bool>,
    /// iperf `-O`: the first part of the test, left out of its totals (its intervals are marked
    /// `omitted`); the test then runs `duration` more, as iperf3's does.
    #[serde(default)]
    pub omit: Option<Dur>,
    /// iperf report interval `-i` (default 1s) / ping interval (default 1s).
    #[serde(default)]
    pub interval: Option<Dur>,
    /// iperf over UDP: `udp` flows (`-u`) take `rate` (`-b`, default 1Mbps) and `size` (`-l`, default 1448B).
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub size: Option<Bytes>,
    /// ping: number of echo requests (default: until the end).
    #[serde(default)]
    pub count: Option<u32>,
    // --- web (docs/scenario.md "Web browsing and video") ---
    /// Pages to download (default: until the end of the run).
    #[serde(default)]
    pub pages: Option<u32>,
    /// Mean (exponential) or fixed reading time between pages (default 30s, NGMN).
    #[serde(default)]
    pub reading_time: Option<Dur>,
    #[serde(default)]
    pub reading: Option<ReadingDist>,
    /// Requests outstanding per connection (default 1: no pipelining).
    #[serde(default)]
    pub pipelining: Option<u32>,
    /// Persistent connections per host (default 6).
    #[serde(default)]
    pub connections: Option<u32>,
    /// DNS lookup before the first page (default 0s).
    #[serde(default)]
    pub dns_delay: Option<Dur>,
    #[serde(default)]
    pub page_model: Option<PageModelKind>,
    /// `page_model = "fixed"`: main object size, number and size of embedded objects.
    #[serde(default)]
    pub main_size: Option<Bytes>,
    #[serde(default)]
    pub embedded_objects: Option<u32>,
    #[serde(default)]
    pub embedded_size: Option<Bytes>,
    // --- video ---
    /// The clip's bit rate (default 512kbps).
    #[serde(default)]
    pub bitrate: Option<Rate>,
    /// Media buffered before playing and after a stall (default 2s).
    #[serde(default)]
    pub startup_threshold: Option<Dur>,
    /// `"greedy"` (default) or `"paced"` (ON/OFF blocks against `buffer_target`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<VideoMode>,
    /// Paced: media kept buffered ahead of the playhead (default 40s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_target: Option<Dur>,
    /// Paced: bytes (or media time) per range request (default 64KB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<Length>,
}

pub use crate::edit::apply_overrides;

/// Application defaults the run uses when a flow leaves the key out (written into the
/// configuration as run by [`Config::as_run`]).
pub mod app_defaults {
    /// Bulk write size (bytes) when `length` is not given.
    pub const BULK_LENGTH: u64 = 64 * 1024;
    /// iperf write size `-l` (bytes), TCP.
    pub const IPERF_LENGTH: u64 = 128 * 1024;
    /// iperf `-i` / ping interval.
    pub const INTERVAL_MS: u64 = 1000;
    /// UDP `-b` (bit/s) and payload `-l` (bytes).
    pub const UDP_RATE_BPS: u64 = 1_000_000;
    pub const UDP_SIZE: u64 = 1448;
    /// ping payload (bytes), as `ping -s 56`.
    pub const PING_SIZE: u64 = 56;
    /// web: connections per host, pipelining depth, reading time (s, NGMN mean).
    pub const WEB_CONNECTIONS: u32 = 6;
    pub const WEB_PIPELINING: u32 = 1;
    pub const WEB_READING_S: u64 = 30;
    /// `page_model = "fixed"` defaults: the NGMN means (10710 B, 5.64 ~ 6 objects of 7758 B).
    pub const WEB_MAIN_SIZE: u64 = 10_710;
    pub const WEB_EMBEDDED_OBJECTS: u32 = 6;
    pub const WEB_EMBEDDED_SIZE: u64 = 7_758;
    /// video: bit rate (bit/s), clip length (s), start-up threshold (ms).
    pub const VIDEO_BITRATE_BPS: u64 = 512_000;
    pub const VIDEO_LENGTH_S: u64 = 90;
    pub const VIDEO_STARTUP_MS: u64 = 2_000;
    /// Paced video: media kept buffered and the block per request. Not verified against Rao et
    /// al. (CoNEXT 2011), to whom they used to be attributed (YouTube's Flash player: ~40 s
    /// buffered, 64 KB blocks): only the paper's abstract could be checked (docs/scenario.md,
    /// "Paced video").
    pub const VIDEO_BUFFER_TARGET_S: u64 = 40;
    pub const VIDEO_BLOCK: u64 = 64 * 1024;
}

impl Config {
    /// The configuration as it ran, every default filled in: a flow's congestion control with
    /// all its parameters, its TCP options (from [`celltcp_tcp::TcpConfig::default`]) and
    /// application defaults, link and flow names, node addresses, and the `[lte]` values the
    /// model used ([`crate::lte_config::LteCfg::as_run`]). Keys still absent mean "none" (no
    /// byte limit, autotuned buffers, until the end of the run). Read back as a scenario it
    /// runs the same (`tests/as_run.rs`).
    pub fn as_run(&self, plan: &crate::plan::Plan) -> Config {
        use celltcp_tcp::cc::CcKind;
        let mut c = self.clone();
        let tcp = celltcp_tcp::TcpConfig::default();
        if !c.nodes.is_empty() {
            let addr: std::collections::HashMap<&str, _> = plan.nodes.iter().map(|p| (p.name.as_str(), p.addr)).collect();
            for n in &mut c.nodes {
                if let Some(a) = addr.get(n.name.as_str()) {
                    n.address.get_or_insert_with(|| a.to_string());
                }
            }
        }
        for (l, pl) in c.links.iter_mut().zip(&plan.links) {
            l.name.get_or_insert_with(|| pl.name.clone());
        }
        let ms = |v: u64| Dur(celltcp_engine::SimDuration::from_millis(v));
        for (i, f) in c.flows.iter_mut().enumerate() {
            f.name.get_or_insert_with(|| format!("flow{i}"));
            f.start.get_or_insert(Dur(celltcp_engine::SimDuration::ZERO));
            if f.app.is_tcp() {
                let cc = *f.cc.get_or_insert(CcKind::Cubic.into());
                f.mss.get_or_insert(tcp.mss);
                f.sack.get_or_insert(tcp.sack);
                f.timestamps.get_or_insert(tcp.timestamps);
                f.delayed_ack.get_or_insert(tcp.delayed_ack);
                if let Some(d) = tcp.delayed_ack_timeout {
                    f.delayed_ack_timeout.get_or_insert(Dur(d));
                }
                f.quickack.get_or_insert(tcp.quickack_segments);
                f.nagle.get_or_insert(tcp.nagle);
                f.pacing.get_or_insert(tcp.pacing);
                f.pacing_quantum.get_or_insert(tcp.pacing_quantum);
                f.initial_cwnd.get_or_insert(tcp.initial_cwnd_pkts);
                f.min_rto.get_or_insert(Dur(tcp.min_rto));
                f.recovery.get_or_insert(tcp.recovery);
                f.ecn.get_or_insert(tcp.ecn || cc.kind().needs_ecn());
                f.trace_segments.get_or_insert(false);
            }
            match f.app {
                AppKind::Bulk | AppKind::Iperf => {
                    let iperf = f.app == AppKind::Iperf;
                    f.length.get_or_insert(Length::Size(Bytes(if iperf { app_defaults::IPERF_LENGTH } else { app_defaults::BULK_LENGTH })));
                    if iperf {
                        f.reverse.get_or_insert(false);
                        f.interval.get_or_insert(ms(app_defaults::INTERVAL_MS));
                    }
                }
                AppKind::Udp => {
                    f.rate.get_or_insert(Rate(app_defaults::UDP_RATE_BPS));
                    f.size.get_or_insert(Bytes(app_defaults::UDP_SIZE));
                }
                AppKind::Ping => {
                    f.interval.get_or_insert(ms(app_defaults::INTERVAL_MS));
                    f.size.get_or_insert(Bytes(app_defaults::PING_SIZE));
                }
                AppKind::Web | AppKind::Video => {
                    if f.app == AppKind::Web {
                        f.connections.get_or_insert(app_defaults::WEB_CONNECTIONS);
                        f.pipelining.get_or_insert(app_defaults::WEB_PIPELINING);
                        f.reading_time.get_or_insert(ms(app_defaults::WEB_READING_S * 1000));
                        f.reading.get_or_insert(ReadingDist::Exponential);
                        f.dns_delay.get_or_insert(ms(0));
                        if *f.page_model.get_or_insert(PageModelKind::Ngmn) == PageModelKind::Fixed {
                            f.main_size.get_or_insert(Bytes(app_defaults::WEB_MAIN_SIZE));
                            f.embedded_objects.get_or_insert(app_defaults::WEB_EMBEDDED_OBJECTS);
                            f.embedded_size.get_or_insert(Bytes(app_defaults::WEB_EMBEDDED_SIZE));
                        }
                    } else {
                        f.bitrate.get_or_insert(Rate(app_defaults::VIDEO_BITRATE_BPS));
                        f.length.get_or_insert(Length::Time(ms(app_defaults::VIDEO_LENGTH_S * 1000)));
                        f.startup_threshold.get_or_insert(ms(app_defaults::VIDEO_STARTUP_MS));
                        if f.mode == Some(VideoMode::Paced) {
                            f.buffer_target.get_or_insert(ms(app_defaults::VIDEO_BUFFER_TARGET_S * 1000));
                            f.block.get_or_insert(Length::Size(Bytes(app_defaults::VIDEO_BLOCK)));
                        }
                    }
                }
            }
        }
        // [[wifi]]: the MCS and aggregation the BSS runs with
        for (w, pw) in c.wifi.iter_mut().zip(&plan.wifi) {
            if let celltcp_wifi::RateKind::Constant(m) = pw.plan.bss.rate {
                w.mcs.get_or_insert(m);
            }
            w.ampdu.get_or_insert(pw.plan.bss.ampdu);
        }
        if let (Some(l), Some(pl)) = (&mut c.lte, &plan.lte) {
            *l = l.as_run(&pl.plan);
        }
        crate::tproxy::as_run(&mut c.proxies, &plan.proxies);
        c
    }
}

pub(crate) fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|b| *b == b'\n').count() + 1
}

/// Finds the line of `key` inside the `index`-th `[[array]]` table, or of a top-level key.
pub(crate) fn line_of_key(text: &str, array: Option<(&str, usize)>, key: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut start = 0;
    let mut end = lines.len();
    if let Some((name, idx)) = array {
        let header = format!("[[{name}]]");
        let mut seen = 0;
        let mut found = None;
        for (i, l) in lines.iter().enumerate() {
            if l.trim() == header {
                if seen == idx {
                    found = Some(i);
                }
                seen += 1;
            } else if found.is_some() && l.trim_start().starts_with('[') {
                end = i;
                break;
            }
        }
        start = found?;
        if key.is_empty() {
            return Some(start + 1);
        }
    } else if let Some(first) = lines.iter().position(|l| l.trim_start().starts_with('[')) {
        end = first;
    }
    (start..end).find(|&i| {
        let l = lines[i].trim_start();
        l.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('='))
    })
    .map(|i| i + 1)
}

/// Parses and type-checks a scenario (no semantic validation yet).
pub fn parse(text: &str) -> Result<Config, ScenarioError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize::<_, Config>(de).map_err(|e| {
        let path = e.path().to_string();
        let segments = e.path().clone();
        let inner = e.into_inner();
        let line = inner.span().map(|s| line_of_offset(text, s.start));
        let mut key = if path == "." { String::new() } else { path };
        let mut msg = inner.message().to_string();
        if let Some(inner_key) = key_inside_inline_table(text, &segments, &msg) {
            key.push('.');
            key.push_str(&inner_key);
        }
        if msg.contains("recursion limit") {
            msg = "arrays or tables nested too deeply: expected at most 80 levels (the TOML parser's limit)".into();
        }
        if msg.len() > 600 {
            // a megabyte key or value is not echoed in full
            let cut: String = msg.chars().take(300).collect();
            msg = format!("{cut}… ({} characters in all)", msg.chars().count());
        }
        let key = if key.len() > 200 { format!("{}…", key.chars().take(60).collect::<String>()) } else { key };
        ScenarioError::new(key, msg).at_line(line)
    })
}

/// The keys that select the variant of an internally tagged table (`placement = { type = … }`,
/// `mobility = { model = … }`, `speed = { dist = … }`, `shape`, `mode`, `kind`, `name`).
const TAG_KEYS: [&str; 7] = ["type", "model", "dist", "shape", "mode", "kind", "name"];

/// serde reports an error inside an internally tagged table (`mobility = { model =
/// "constant_velocity", heading_deg = "north" }`) at the table's key, `lte.ue[0].mobility`: it
/// buffers the table before it knows the variant, and the inner key's path is lost. This finds
/// the inner key (`heading_deg`), so the message names the key itself:
/// - `unknown field `x``: the key `x`, and `unknown variant `v``: the key whose string value
///   is `v`, at any depth inside the table;
/// - otherwise by elimination: serde reads the fields in order and fails on the bad one before it
///   checks for missing fields, so removing an innocent key leaves the same error and removing
///   the bad one changes it (the tag key changes it too, and is set aside); recursing into inner
///   tables.
///
/// `None` when the error is not at an inline table or the key cannot be told for certain.
fn key_inside_inline_table(text: &str, path: &serde_path_to_error::Path, msg: &str) -> Option<String> {
    use serde_path_to_error::Segment;
    let root: toml::Value = toml::from_str(text).ok()?;
    let mut at: Vec<Result<usize, String>> = Vec::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => at.push(Ok(*index)),
            Segment::Map { key } => at.push(Err(key.clone())),
            _ => return None,
        }
    }
    fn get<'a>(v: &'a toml::Value, at: &[Result<usize, String>]) -> Option<&'a toml::Value> {
        at.iter().try_fold(v, |v, s| match s {
            Ok(i) => v.as_array()?.get(*i),
            Err(k) => v.as_table()?.get(k),
        })
    }
    fn get_mut<'a>(v: &'a mut toml::Value, at: &[Result<usize, String>]) -> Option<&'a mut toml::Value> {
        at.iter().try_fold(v, |v, s| match s {
            Ok(i) => v.as_array_mut()?.get_mut(*i),
            Err(k) => v.as_table_mut()?.get_mut(k),
        })
    }
    fn find_str(t: &toml::Table, want: &str) -> Option<String> {
        t.iter().find_map(|(k, v)| match v {
            toml::Value::String(s) if s == want => Some(k.clone()),
            toml::Value::Table(inner) => find_str(inner, want).map(|p| format!("{k}.{p}")),
            _ => None,
        })
    }
    fn find_key(t: &toml::Table, want: &str) -> Option<String> {
        if t.contains_key(want) {
            return Some(want.to_string());
        }
        t.iter().find_map(|(k, v)| find_key(v.as_table()?, want).map(|p| format!("{k}.{p}")))
    }
    let table = get(&root, &at)?.as_table()?;
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        return find_key(table, rest.split('`').next()?);
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        return find_str(table, rest.split('`').next()?);
    }
    let error_of = |v: toml::Value| Config::deserialize(v).err().map(|e| e.to_string());
    let base = error_of(root.clone())?;
    let mut found = Vec::new();
    loop {
        let table = get(&root, &at)?.as_table()?;
        let mut culprits = table.keys().filter(|k| {
            let mut v = root.clone();
            get_mut(&mut v, &at).and_then(|t| t.as_table_mut()).map(|t| t.remove(*k));
            error_of(v).as_deref() != Some(base.as_str())
        });
        let mut candidates: Vec<&String> = culprits.by_ref().collect();
        if candidates.len() > 1 {
            candidates.retain(|k| !TAG_KEYS.contains(&k.as_str()));
        }
        let [k] = candidates[..] else { break };
        found.push(k.clone());
        at.push(Err(k.clone()));
        if !get(&root, &at)?.is_table() {
            break;
        }
    }
    (!found.is_empty()).then(|| found.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_tcp::cc::CcKind;

    const BASE: &str = r#"
duration = "60s"
seed = 1

[[link]]
between = ["sender", "receiver"]
rate = "10Mbps"
delay = "25ms"
queue = "100p"
loss = 0.001
pcap = true

[[flow]]
app = "bulk"
from = "sender"
to = "receiver"
cc = "newreno"
window = "64KB"
"#;

    #[test]
    fn the_issue_example_parses() {
        let c = parse(BASE).unwrap();
        assert_eq!(c.links[0].rate.unwrap().0, 10_000_000);
        assert_eq!(c.links[0].queue, QueueSpec::DropTail(QueueLimitSpec::Packets(100)));
        assert_eq!(c.links[0].loss, LossSpec::Bernoulli(0.001));
        let per_dir = BASE.replace("loss = 0.001", "loss = { forward = 1e-3 }");
        let c = parse(&per_dir).unwrap();
        assert_eq!(
            c.links[0].loss,
            LossSpec::Directions { forward: Box::new(LossSpec::Bernoulli(1e-3)), reverse: Box::new(LossSpec::None) }
        );
        assert_eq!(c.flows[0].window.unwrap().0, 65536);
    }

    #[test]
    fn wrong_unit_names_key_value_and_line() {
        let bad = BASE.replace("\"10Mbps\"", "\"10Mbs\"");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.key, "link[0].rate");
        assert!(e.message.contains("10Mbs"), "{e}");
        assert_eq!(e.line, Some(7));
    }

    #[test]
    fn unknown_key_is_refused_with_its_name() {
        let bad = BASE.replace("pcap = true", "pcapp = true");
        let e = parse(&bad).unwrap_err();
        assert!(e.to_string().contains("pcapp"), "{e}");
        assert_eq!(e.line, Some(11));
    }

    #[test]
    fn cc_accepts_every_name_from_str_accepts() {
        // The selector goes through `CcKind::from_str`: its aliases and any case are accepted
        // (they were refused before, serde knowing only the lowercase variant names), and the
        // written-back scenario has the canonical name with every parameter filled in.
        for (alias, kind) in [("reno", CcKind::NewReno), ("tcp-lp", CcKind::Lp), ("Westwood+", CcKind::Westwood), ("BBRv1", CcKind::Bbr)] {
            let c = parse(&BASE.replace("cc = \"newreno\"", &format!("cc = \"{alias}\""))).unwrap();
            assert_eq!(c.flows[0].cc, Some(kind.into()), "{alias}");
            let written = toml::to_string(&c).unwrap();
            assert!(written.contains(&format!("name = \"{}\"", kind.name())), "{written}");
            assert_eq!(parse(&written).unwrap().flows[0].cc, Some(kind.into()), "{written}");
        }
        let e = parse(&BASE.replace("cc = \"newreno\"", "cc = \"reno2\"")).unwrap_err();
        assert_eq!(e.key, "flow[0].cc");
        assert_eq!(e.line, Some(17));
        assert!(e.message.contains("\"reno2\"") && e.message.contains("newreno, cubic, bbr"), "{e}");
    }

    #[test]
    fn cc_table_takes_the_algorithms_parameters() {
        let c = parse(&BASE.replace("cc = \"newreno\"", "cc = { name = \"cubic\", beta = 0.5, hystart = false }")).unwrap();
        let want = CcConfig::Cubic(celltcp_tcp::cc::cubic::CubicConfig { beta: 0.5, hystart: false, ..Default::default() });
        assert_eq!(c.flows[0].cc, Some(want));
        let c = parse(&BASE.replace("cc = \"newreno\"", "cc = { name = \"bbr\", probe_rtt_duration = \"100ms\" }")).unwrap();
        assert!(matches!(c.flows[0].cc, Some(CcConfig::Bbr(b)) if b.probe_rtt_duration == celltcp_engine::SimDuration::from_millis(100)));
        // errors name the key path, the parameter, its value and the line
        // (the key is the parameter's own when one parameter is at fault)
        for (table, key, needles) in [
            ("{ name = \"cubic\", betta = 0.5 }", "flow[0].cc.betta", &["betta", "0.5", "fast_convergence"][..]),
            ("{ name = \"cubic\", beta = 1.5 }", "flow[0].cc.beta", &["cubic.beta = 1.5", "(0, 1)"][..]),
            ("{ name = \"cubic\", hystart = \"no\" }", "flow[0].cc.hystart", &["cubic.hystart = \"no\"", "bool"][..]),
            ("{ beta = 0.5 }", "flow[0].cc", &["needs `name`"][..]),
        ] {
            let e = parse(&BASE.replace("cc = \"newreno\"", &format!("cc = {table}"))).unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert_eq!(e.line, Some(17), "{e}");
            for n in needles {
                assert!(e.message.contains(n), "{n}: {e}");
            }
        }
    }

    #[test]
    fn overrides_edit_nested_keys_and_keep_lines() {
        let t = apply_overrides(BASE, &["link.0.rate=20Mbps".into(), "flow.0.cc=cubic".into(), "duration=\"5s\"".into()]).unwrap();
        let c = parse(&t).unwrap();
        assert_eq!(c.links[0].rate.unwrap().0, 20_000_000);
        assert_eq!(c.flows[0].cc, Some(CcKind::Cubic.into()));
        assert_eq!(c.duration.0, celltcp_engine::SimDuration::from_secs(5));
        let e = apply_overrides(BASE, &["link.3.rate=1Mbps".into()]).unwrap_err();
        assert!(e.message.contains("out of range"), "{e}");
    }

    #[test]
    fn line_of_key_finds_keys_in_array_tables() {
        assert_eq!(line_of_key(BASE, Some(("flow", 0)), "cc"), Some(17));
        assert_eq!(line_of_key(BASE, None, "seed"), Some(3));
        assert_eq!(line_of_key(BASE, Some(("link", 0)), "loss"), Some(10));
    }
}
