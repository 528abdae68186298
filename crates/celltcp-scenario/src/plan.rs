//! Semantic validation: turns a type-checked [`Config`] into a [`Plan`] of resolved nodes, links
//! and flows, or refuses it with an error naming the key, the value and what was expected.

use std::collections::{HashMap, HashSet};

use celltcp_engine::SimDuration;
use celltcp_net::loss::LossConfig;
use celltcp_net::queue::{CoDelConfig, QueueConfig, QueueLimit, RedConfig, StepConfig};
use celltcp_net::routing::Routes;
use celltcp_net::Ipv4;
use celltcp_tcp::cc::{CcConfig, CcKind};

use crate::config::*;
use crate::error::ScenarioError;

pub struct PlanNode {
    pub name: String,
    /// Its address: that of its first interface.
    pub addr: Ipv4,
    pub kind: NodeKind,
    /// Its interfaces, the first carrying `addr` (a router's links all carry its one address;
    /// see `iface.rs`).
    pub ifaces: Vec<PlanIface>,
}

/// One interface of a host: a link it is an endpoint of.
pub struct PlanIface {
    /// The link's name (`radio-<ue>`, `wifi-<bss>-<station>`, or the `[[link]]`'s).
    pub name: String,
    pub addr: Ipv4,
    /// `"lte"`, `"wifi"` or `"link"`.
    pub device: &'static str,
    pub link: usize,
    /// The directions leaving by it (host → peer) and arriving (peer → host).
    pub out_dir: usize,
    pub in_dir: usize,
    /// The node at its far end.
    pub peer: usize,
}

/// One direction of a link.
pub struct PlanLinkDir {
    /// `"<link name>:<from>-><to>"`
    pub name: String,
    pub link: usize,
    pub from: usize,
    pub to: usize,
    pub rate_bps: Option<u64>,
    pub trace: Option<Vec<u64>>,
    pub delay: SimDuration,
    pub mtu: u32,
    pub queue: QueueConfig,
    pub loss: LossConfig,
    pub kind: DirKind,
}

/// What carries a link direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DirKind {
    /// An ordinary link (rate or trace).
    Wire,
    /// An S1-U link: packets carry GTP-U encapsulation.
    S1u,
    /// The LTE radio between an eNB and UE `ue` (index into [`crate::lte_config::LtePlan::ues`]).
    Radio { ue: usize, downlink: bool },
    /// The Wi-Fi medium between BSS `bss`'s AP and its station `sta` (index into
    /// [`PlanWifi::sta_node`]): AP → station when `downlink`.
    Wifi { bss: usize, sta: usize, downlink: bool },
}

pub struct PlanLink {
    pub name: String,
    pub pcap: bool,
    pub dirs: [usize; 2],
}

pub struct Plan {
    pub nodes: Vec<PlanNode>,
    pub links: Vec<PlanLink>,
    pub dirs: Vec<PlanLinkDir>,
    pub routes: Routes,
    /// Every address's owner, the multihomed hosts' interfaces and source rules.
    pub ifaces: crate::iface::Ifaces,
    pub flows: Vec<PlanFlow>,
    pub lte: Option<PlanLte>,
    pub wifi: Vec<PlanWifi>,
    /// The transparent proxies (`[[proxy]]`, `tproxy.rs`).
    pub proxies: Vec<crate::tproxy::PlanProxy>,
    /// The `[[event]]`s, in file order.
    pub events: Vec<PlanEvent>,
}

/// An `[[event]]`: link `link` (its two directions) goes down, or comes back up, at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanEvent {
    pub at: SimDuration,
    pub link: usize,
    pub up: bool,
}

/// One BSS in the topology.
pub struct PlanWifi {
    pub plan: crate::wifi_config::WifiPlan,
    pub ap_node: usize,
    pub sta_node: Vec<usize>,
    /// Downlink (AP → station) and uplink directions of each station.
    pub sta_dirs: Vec<[usize; 2]>,
}

/// The LTE part of the topology.
pub struct PlanLte {
    pub plan: crate::lte_config::LtePlan,
    pub ue_node: Vec<usize>,
    pub enb_node: Vec<usize>,
    pub pgw_node: usize,
    /// Downlink and uplink radio directions of each UE.
    pub ue_dirs: Vec<[usize; 2]>,
}

pub struct PlanFlow {
    pub name: String,
    /// The `[[flow]]` this is a stream of (its own name unless `parallel`/`bidir` split it).
    pub test: String,
    /// The stream's number in its test (1..), or 0 for a flow that is not split.
    pub stream: u32,
    pub cfg: FlowCfg,
    pub src: usize,
    pub dst: usize,
    /// The congestion control and its parameters (default CUBIC with its defaults).
    pub cc: CcConfig,
    /// MPTCP (`mptcp = ...`), its `tcp` still the default (the run sets the flow's).
    pub mptcp: Option<celltcp_mptcp::MptcpConfig>,
    /// The client's source address (`bind`), if it binds one.
    pub bind: Option<Ipv4>,
}

fn err(text: &str, array: Option<(&str, usize)>, key: &str, msg: String) -> ScenarioError {
    let path = match array {
        Some((a, i)) if key.is_empty() => format!("{a}[{i}]"),
        Some((a, i)) => format!("{a}[{i}].{key}"),
        None => key.to_string(),
    };
    let last = key.rsplit('.').next().unwrap_or(key);
    ScenarioError::new(path, msg).at_line(crate::config::line_of_key(text, array, last))
}

fn check_prob(text: &str, i: usize, key: &str, v: Option<f64>, name: &str) -> Result<f64, ScenarioError> {
    let v = v.ok_or_else(|| err(text, Some(("link", i)), key, format!("`{name}` is required for this loss model")))?;
    if !(0.0..=1.0).contains(&v) || v.is_nan() {
        return Err(err(text, Some(("link", i)), key, format!("expected a probability between 0 and 1, got {v}")));
    }
    Ok(v)
}

/// The loss models of a link's two directions, `[forward, reverse]`.
fn loss_config(text: &str, i: usize, l: &LossSpec) -> Result<[LossConfig; 2], ScenarioError> {
    Ok(match l {
        LossSpec::Directions { forward, reverse } => {
            [loss_model(text, i, "loss.forward", forward)?, loss_model(text, i, "loss.reverse", reverse)?]
        }
        _ => [loss_model(text, i, "loss", l)?; 2],
    })
}

fn loss_model(text: &str, i: usize, key: &str, l: &LossSpec) -> Result<LossConfig, ScenarioError> {
    let k = |f: &str| format!("{key}.{f}");
    Ok(match l {
        LossSpec::None => LossConfig::None,
        LossSpec::Bernoulli(p) => {
            if !(0.0..=1.0).contains(p) || p.is_nan() {
                return Err(err(text, Some(("link", i)), key, format!("expected a loss probability between 0 and 1, got {p}")));
            }
            LossConfig::Bernoulli { p: *p }
        }
        LossSpec::Table(t) => match t.model {
            LossModelKind::Bernoulli => LossConfig::Bernoulli { p: check_prob(text, i, &k("p"), t.p, "p")? },
            LossModelKind::GilbertElliott => LossConfig::GilbertElliott {
                p_good_to_bad: check_prob(text, i, &k("p_good_to_bad"), t.p_good_to_bad, "p_good_to_bad")?,
                p_bad_to_good: check_prob(text, i, &k("p_bad_to_good"), t.p_bad_to_good, "p_bad_to_good")?,
                loss_good: check_prob(text, i, &k("loss_good"), t.loss_good.or(Some(0.0)), "loss_good")?,
                loss_bad: check_prob(text, i, &k("loss_bad"), t.loss_bad.or(Some(1.0)), "loss_bad")?,
            },
        },
        LossSpec::Directions { .. } => {
            return Err(err(text, Some(("link", i)), key, "expected a loss probability or a model table, got another per-direction table".into()));
        }
    })
}

fn limit(l: QueueLimitSpec) -> QueueLimit {
    match l {
        QueueLimitSpec::Packets(n) => QueueLimit::Packets(n),
        QueueLimitSpec::Bytes(b) => QueueLimit::Bytes(b),
    }
}

fn queue_config(text: &str, i: usize, q: &QueueSpec) -> Result<QueueConfig, ScenarioError> {
    queue_config_with(q, &|key: &str, msg: String| err(text, Some(("link", i)), key, msg))
}

/// `[lte.epc] s1u_queue`: errors name `lte.epc.s1u_queue.<key>`.
fn s1u_queue_config(text: &str, q: &QueueSpec) -> Result<QueueConfig, ScenarioError> {
    queue_config_with(q, &|key: &str, msg: String| crate::lte_config::lte_err(text, "lte.epc", None, &key.replacen("queue", "s1u_queue", 1), msg))
}

/// A queue discipline from its specification; `e(key, message)` makes the error of a key
/// (`queue` or `queue.<field>`).
fn queue_config_with(q: &QueueSpec, e: &dyn Fn(&str, String) -> ScenarioError) -> Result<QueueConfig, ScenarioError> {
    Ok(match q {
        QueueSpec::DropTail(l) => QueueConfig::DropTail { limit: limit(*l) },
        QueueSpec::Table(t) => {
            let not_for = |present: bool, key: &str| -> Result<(), ScenarioError> {
                if present {
                    Err(e(&format!("queue.{key}"), format!("`{key}` does not apply to a {:?} queue", t.kind).to_lowercase()))
                } else {
                    Ok(())
                }
            };
            match t.kind {
                QueueType::DropTail => {
                    for (p, k) in [(t.min_th.is_some(), "min_th"), (t.max_th.is_some(), "max_th"), (t.max_p.is_some(), "max_p"), (t.w_q.is_some(), "w_q"), (t.gentle.is_some(), "gentle"), (t.ecn.is_some(), "ecn"), (t.target.is_some(), "target"), (t.interval.is_some(), "interval"), (t.k.is_some(), "k")] {
                        not_for(p, k)?;
                    }
                    QueueConfig::DropTail { limit: t.limit.map_or(QueueLimit::Packets(100), limit) }
                }
                QueueType::Red => {
                    not_for(t.target.is_some(), "target")?;
                    not_for(t.interval.is_some(), "interval")?;
                    not_for(t.k.is_some(), "k")?;
                    let mut c = RedConfig::default();
                    if let Some(l) = t.limit {
                        c.limit = limit(l);
                    }
                    if let Some(v) = t.min_th {
                        c.min_th = v;
                    }
                    if let Some(v) = t.max_th {
                        c.max_th = v;
                    }
                    if let Some(v) = t.max_p {
                        c.max_p = v;
                    }
                    if let Some(v) = t.w_q {
                        c.w_q = v;
                    }
                    if let Some(v) = t.gentle {
                        c.gentle = v;
                    }
                    if let Some(v) = t.ecn {
                        c.ecn = v;
                    }
                    if !(c.min_th > 0.0 && c.max_th > c.min_th) {
                        return Err(e("queue.max_th", format!("expected 0 < min_th < max_th, got min_th = {} and max_th = {}", c.min_th, c.max_th)));
                    }
                    if !(c.max_p > 0.0 && c.max_p <= 1.0) {
                        return Err(e("queue.max_p", format!("expected a probability in (0, 1], got {}", c.max_p)));
                    }
                    if !(c.w_q > 0.0 && c.w_q <= 1.0) {
                        return Err(e("queue.w_q", format!("expected a weight in (0, 1], got {}", c.w_q)));
                    }
                    QueueConfig::Red(c)
                }
                QueueType::CoDel => {
                    for (p, k) in [(t.min_th.is_some(), "min_th"), (t.max_th.is_some(), "max_th"), (t.max_p.is_some(), "max_p"), (t.w_q.is_some(), "w_q"), (t.gentle.is_some(), "gentle"), (t.k.is_some(), "k")] {
                        not_for(p, k)?;
                    }
                    let mut c = CoDelConfig::default();
                    match t.limit {
                        Some(QueueLimitSpec::Packets(n)) => c.limit_pkts = n,
                        Some(QueueLimitSpec::Bytes(_)) => {
                            return Err(e("queue.limit", format!("a CoDel limit is in packets (RFC 8289 keeps a packet limit), such as \"1000p\"; got \"{}\"", t.limit.unwrap())))
                        }
                        None => {}
                    }
                    if let Some(v) = t.target {
                        c.target = v.0;
                    }
                    if let Some(v) = t.interval {
                        c.interval = v.0;
                    }
                    if let Some(v) = t.ecn {
                        c.ecn = v;
                    }
                    if c.target.as_nanos() == 0 || c.interval.as_nanos() == 0 {
                        return Err(e("queue.target", "expected target and interval greater than zero".into()));
                    }
                    QueueConfig::CoDel(c)
                }
                QueueType::Step => {
                    for (p, k) in [(t.min_th.is_some(), "min_th"), (t.max_th.is_some(), "max_th"), (t.max_p.is_some(), "max_p"), (t.w_q.is_some(), "w_q"), (t.gentle.is_some(), "gentle"), (t.ecn.is_some(), "ecn"), (t.target.is_some(), "target"), (t.interval.is_some(), "interval")] {
                        not_for(p, k)?;
                    }
                    let mut c = StepConfig::default();
                    if let Some(l) = t.limit {
                        c.limit = limit(l);
                    }
                    if let Some(v) = t.k {
                        c.k = v;
                    }
                    if let QueueLimit::Packets(n) = c.limit {
                        if c.k >= n {
                            return Err(e("queue.k", format!("expected a threshold below the limit ({n} packets), got k = {}", c.k)));
                        }
                    }
                    QueueConfig::Step(c)
                }
            }
        }
    })
}

fn read_trace(text: &str, i: usize, key: &str, path: &str, base_dir: Option<&std::path::Path>) -> Result<Vec<u64>, ScenarioError> {
    let p = std::path::Path::new(path);
    let full = match base_dir {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    };
    let body = std::fs::read_to_string(&full).map_err(|e| err(text, Some(("link", i)), key, format!("cannot read Mahimahi trace {:?}: {e}", full.display().to_string())))?;
    celltcp_net::trace_link::parse_mahimahi(&body).map_err(|e| err(text, Some(("link", i)), key, format!("invalid Mahimahi trace {path:?}: {e}")))
}

/// The pcap file of a link, `<name>.pcap` with every character other than ASCII letters,
/// digits, `-`, `_` and `.` written `_` (two links whose files would collide are refused).
pub(crate) fn pcap_file(link_name: &str) -> String {
    let stem: String = link_name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' }).collect();
    format!("{stem}.pcap")
}

/// The longest simulated time a run accepts: 10^7 s (about 116 days). Longer runs would not finish
/// on any machine with traffic in them, and the clock (u64 nanoseconds) ends at 584 years.
pub const MAX_DURATION: SimDuration = SimDuration::from_secs(10_000_000);

/// Validates `cfg` (parsed from `text`, used to find lines) and resolves it into a plan.
pub fn plan(text: &str, cfg: &Config, base_dir: Option<&std::path::Path>) -> Result<Plan, ScenarioError> {
    if cfg.duration.0.as_nanos() == 0 {
        return Err(err(text, None, "duration", "expected a duration greater than zero, got \"0s\"".into()));
    }
    if cfg.duration.0 > MAX_DURATION {
        return Err(err(text, None, "duration", format!("expected at most {} (the longest simulated time a run accepts), got \"{}\"", crate::units::Dur(MAX_DURATION), cfg.duration)));
    }
    if cfg.sample_interval.0.as_nanos() < 1_000 {
        return Err(err(text, None, "sample_interval", format!("expected at least 1us, got \"{}\"", cfg.sample_interval)));
    }
    let mut nodes: Vec<PlanNode> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let auto_addr = |i: usize| AUTO_POOL.addr(i);
    for (i, n) in cfg.nodes.iter().enumerate() {
        if n.name.is_empty() {
            return Err(err(text, Some(("node", i)), "name", "expected a non-empty name".into()));
        }
        if by_name.contains_key(&n.name) {
            return Err(err(text, Some(("node", i)), "name", format!("node {:?} is declared twice", n.name)));
        }
        let addr = match &n.address {
            Some(a) => parse_ipv4(a).ok_or_else(|| err(text, Some(("node", i)), "address", format!("expected a dotted-quad IPv4 address such as \"10.0.0.1\", got {a:?}")))?,
            None => auto_addr(nodes.len()).map_err(|m| err(text, Some(("node", i)), "address", m))?,
        };
        by_name.insert(n.name.clone(), nodes.len());
        nodes.push(PlanNode { name: n.name.clone(), addr, kind: n.kind, ifaces: Vec::new() });
    }
    // LTE nodes first, so that `[[link]]`s can name the PGW and flows the UEs.
    let lte = match &cfg.lte {
        Some(l) => {
            let lp = crate::lte_config::plan_lte(text, l, cfg.seed)?;
            let mut add = |name: &str, kind: NodeKind, addr: Ipv4, table: &str| -> Result<usize, ScenarioError> {
                if by_name.contains_key(name) {
                    return Err(crate::lte_config::lte_err(text, table, None, "name", format!("{name:?} is also declared as a [[node]]; LTE nodes are created by [lte]")));
                }
                by_name.insert(name.to_string(), nodes.len());
                nodes.push(PlanNode { name: name.to_string(), addr, kind, ifaces: Vec::new() });
                Ok(nodes.len() - 1)
            };
            let pgw_node = add(&lp.epc.pgw, NodeKind::Router, Ipv4::new(10, 44, 0, 1), "lte.epc")?;
            let mut enb_node = Vec::new();
            for (k, e) in lp.enbs.iter().enumerate() {
                let addr = ENB_POOL.addr(k).map_err(|m| crate::lte_config::lte_err(text, "lte.enb", None, "name", m))?;
                enb_node.push(add(&e.name, NodeKind::Router, addr, "lte.enb")?);
            }
            // UE addresses from the PGW's UE pool, in order.
            let mut ue_node = Vec::new();
            for (k, u) in lp.ues.iter().enumerate() {
                let addr = UE_POOL.addr(k).map_err(|m| crate::lte_config::lte_err(text, "lte.ue", None, "count", m))?;
                ue_node.push(add(&u.name, NodeKind::Host, addr, "lte.ue")?);
            }
            Some((lp, ue_node, enb_node, pgw_node))
        }
        None => None,
    };
    // Wi-Fi nodes next: the AP is wired to the rest by `[[link]]`s, flows name the stations.
    let mut wifi_nodes = Vec::new();
    for (i, w) in cfg.wifi.iter().enumerate() {
        let wp = crate::wifi_config::plan_wifi(text, i, w)?;
        if cfg.wifi[..i].iter().any(|o| o.name == w.name) {
            return Err(err(text, Some(("wifi", i)), "name", format!("BSS name {:?} is used twice", w.name)));
        }
        // BSSs on one channel share the medium: they must run the same PHY
        if let Some((o, _, _)) = wifi_nodes.iter().find(|(o, _, _): &&(crate::wifi_config::WifiPlan, usize, Vec<usize>)| o.channel.is_some() && o.channel == wp.channel && o.bss.band == wp.bss.band) {
            if o.bss.standard != wp.bss.standard {
                return Err(err(text, Some(("wifi", i)), "channel", format!("channel {} is shared with BSS {:?} ({}); BSSs on one channel must use the same standard, got {}", wp.channel.unwrap_or(0), o.name, o.bss.standard.name(), wp.bss.standard.name())));
            }
            if o.hears.is_some() || wp.hears.is_some() {
                return Err(err(text, Some(("wifi", i)), "channel", format!("channel {} is shared with BSS {:?}, and a BSS with hidden nodes (`hidden`, or `positions` beyond the CCA range) must have its channel to itself", wp.channel.unwrap_or(0), o.name)));
            }
        }
        let mut add = |name: &str, kind: NodeKind, key: &str| -> Result<usize, ScenarioError> {
            if let Some(&k) = by_name.get(name) {
                // a host (an LTE UE, a [[node]]) may also be a station: a Wi-Fi interface more
                if key == "stations" && nodes[k].kind == NodeKind::Host && !wifi_nodes.iter().any(|w: &(crate::wifi_config::WifiPlan, usize, Vec<usize>)| w.2.contains(&k)) {
                    return Ok(k);
                }
                return Err(err(text, Some(("wifi", i)), key, format!("{name:?} is already a node; the AP of a [[wifi]] is created by it, and a station may be an existing host in one BSS only")));
            }
            let k = nodes.len();
            let addr = auto_addr(k).map_err(|m| err(text, Some(("wifi", i)), key, m))?;
            by_name.insert(name.to_string(), k);
            nodes.push(PlanNode { name: name.to_string(), addr, kind, ifaces: Vec::new() });
            Ok(k)
        };
        let ap_node = add(&wp.ap, NodeKind::Router, "ap")?;
        let sta_node = wp.stations.iter().map(|s| add(s, NodeKind::Host, "stations")).collect::<Result<Vec<_>, _>>()?;
        wifi_nodes.push((wp, ap_node, sta_node));
    }
    if cfg.links.is_empty() && lte.is_none() {
        return Err(ScenarioError::new("link", "expected at least one [[link]]"));
    }
    let mut links = Vec::new();
    let mut dirs = Vec::new();
    let mut link_names = HashMap::new();
    let mut pcap_files = HashMap::new();
    for (i, l) in cfg.links.iter().enumerate() {
        let e = |key: &str, msg: String| err(text, Some(("link", i)), key, msg);
        let [a, b] = &l.between;
        if a.is_empty() || b.is_empty() {
            return Err(e("between", "expected two non-empty node names".into()));
        }
        if a == b {
            return Err(e("between", format!("expected two different nodes, got [{a:?}, {b:?}]")));
        }
        let mut idx = |name: &String| -> Result<usize, ScenarioError> {
            if let Some(&k) = by_name.get(name) {
                return Ok(k);
            }
            let k = nodes.len();
            nodes.push(PlanNode { name: name.clone(), addr: auto_addr(k).map_err(|m| e("between", m))?, kind: NodeKind::Host, ifaces: Vec::new() });
            by_name.insert(name.clone(), k);
            Ok(k)
        };
        let (ia, ib) = (idx(a)?, idx(b)?);
        let name = l.name.clone().unwrap_or_else(|| format!("{a}-{b}"));
        if link_names.insert(name.clone(), i).is_some() {
            return Err(e("name", format!("link name {name:?} is used twice; give the links distinct `name`s")));
        }
        if l.pcap {
            let file = pcap_file(&name);
            if let Some(other) = pcap_files.insert(file.clone(), name.clone()) {
                return Err(e("name", format!("links {other:?} and {name:?} would both write pcap/{file}; give them names that differ in letters, digits, '-', '_' or '.'")));
            }
        }
        if !(68..=65535).contains(&l.mtu) {
            return Err(e("mtu", format!("expected an MTU between 68 and 65535 bytes (RFC 791), got {}", l.mtu)));
        }
        let trace_fwd = l.trace.as_ref().map(|p| read_trace(text, i, "trace", p, base_dir)).transpose()?;
        let trace_rev = l.trace_reverse.as_ref().map(|p| read_trace(text, i, "trace_reverse", p, base_dir)).transpose()?;
        if l.rate.is_none() && (trace_fwd.is_none() || trace_rev.is_none()) {
            return Err(e("rate", "expected a rate such as \"10Mbps\" (required unless both `trace` and `trace_reverse` are given)".into()));
        }
        let rate_fwd = if trace_fwd.is_some() { None } else { l.rate.map(|r| r.0) };
        let rate_rev = if trace_rev.is_some() { None } else { l.rate_reverse.or(l.rate).map(|r| r.0) };
        let queue = queue_config(text, i, &l.queue)?;
        let loss = loss_config(text, i, &l.loss)?;
        let d0 = dirs.len();
        for ((from, to, rate, trace), loss) in [(ia, ib, rate_fwd, trace_fwd), (ib, ia, rate_rev, trace_rev)].into_iter().zip(loss) {
            dirs.push(PlanLinkDir {
                name: format!("{name}:{}->{}", nodes[from].name, nodes[to].name),
                link: i,
                from,
                to,
                rate_bps: rate,
                trace,
                delay: l.delay.0,
                mtu: l.mtu,
                queue: queue.clone(),
                loss,
                kind: DirKind::Wire,
            });
        }
        links.push(PlanLink { name, pcap: l.pcap, dirs: [d0, d0 + 1] });
    }
    let s1u_queue = match lte.as_ref().and_then(|l| l.0.epc.s1u_queue.as_ref()) {
        Some(q) => s1u_queue_config(text, q)?,
        None => QueueConfig::default(),
    };
    let lte = lte.map(|(lp, ue_node, enb_node, pgw_node)| {
        let mut push_link = |name: String, a: usize, b: usize, rate: Option<u64>, delay: SimDuration, mtu: u32, kinds: [DirKind; 2], pcap: bool| {
            let d0 = dirs.len();
            for ((from, to), kind) in [(a, b), (b, a)].into_iter().zip(kinds) {
                dirs.push(PlanLinkDir {
                    name: format!("{name}:{}->{}", nodes[from].name, nodes[to].name),
                    link: links.len(),
                    from,
                    to,
                    rate_bps: rate,
                    trace: None,
                    delay,
                    mtu,
                    // the S1-U queue as configured; radio directions queue in the RAN (RLC)
                    queue: if kind == DirKind::S1u { s1u_queue.clone() } else { QueueConfig::default() },
                    loss: LossConfig::None,
                    kind,
                });
            }
            links.push(PlanLink { name, pcap, dirs: [d0, d0 + 1] });
            [d0, d0 + 1]
        };
        for (k, &en) in enb_node.iter().enumerate() {
            let name = format!("s1u-{}", lp.enbs[k].name);
            push_link(name, en, pgw_node, Some(lp.epc.s1u_rate.0), lp.epc.s1u_delay.0, lp.epc.s1u_mtu, [DirKind::S1u, DirKind::S1u], lp.epc.pcap);
        }
        let mut ue_dirs = Vec::new();
        for (k, &un) in ue_node.iter().enumerate() {
            let en = enb_node[lp.ues[k].enb];
            let name = format!("radio-{}", lp.ues[k].name);
            let kinds = [DirKind::Radio { ue: k, downlink: true }, DirKind::Radio { ue: k, downlink: false }];
            ue_dirs.push(push_link(name, en, un, None, SimDuration::ZERO, 1500, kinds, lp.ue_pcap[k]));
        }
        PlanLte { plan: lp, ue_node, enb_node, pgw_node, ue_dirs }
    });
    let mut wifi = Vec::new();
    for (b, (wp, ap_node, sta_node)) in wifi_nodes.into_iter().enumerate() {
        let mut sta_dirs = Vec::new();
        for (k, &sn) in sta_node.iter().enumerate() {
            let name = format!("wifi-{}-{}", wp.name, nodes[sn].name);
            let d0 = dirs.len();
            for (from, to, downlink) in [(ap_node, sn, true), (sn, ap_node, false)] {
                dirs.push(PlanLinkDir {
                    name: format!("{name}:{}->{}", nodes[from].name, nodes[to].name),
                    link: links.len(),
                    from,
                    to,
                    rate_bps: None,
                    trace: None,
                    delay: SimDuration::ZERO,
                    // IP over 802.11 with LLC/SNAP: the Ethernet MTU (RFC 1042), as Linux
                    mtu: 1500,
                    queue: QueueConfig::default(),
                    loss: LossConfig::None,
                    kind: DirKind::Wifi { bss: b, sta: k, downlink },
                });
            }
            links.push(PlanLink { name, pcap: false, dirs: [d0, d0 + 1] });
            sta_dirs.push([d0, d0 + 1]);
        }
        wifi.push(PlanWifi { plan: wp, ap_node, sta_node, sta_dirs });
    }
    let extra_dirs = assign_interfaces(text, cfg, &mut nodes, &links, &dirs)?;
    let mut seen_addr = HashMap::new();
    for n in &nodes {
        let addrs = std::iter::once(n.addr).chain(n.ifaces.iter().skip(1).map(|i| i.addr).filter(|&a| a != n.addr));
        for a in addrs {
            if let Some(other) = seen_addr.insert(a, n.name.clone()) {
                return Err(ScenarioError::new("node", format!("nodes {other:?} and {:?} share the address {a}", n.name)));
            }
        }
    }
    // a multihomed host's other interfaces are not in the network-wide routes (`iface.rs`)
    let edges: Vec<(usize, usize, usize)> = dirs.iter().enumerate().filter(|(k, _)| !extra_dirs.contains(k)).map(|(k, d)| (d.from, d.to, k)).collect();
    let routes = Routes::compute(nodes.len(), &edges);
    let mut ifaces = crate::iface::Ifaces::new(nodes.iter().map(|n| n.addr));
    for (k, n) in nodes.iter().enumerate() {
        if n.ifaces.len() > 1 && n.ifaces[1].addr != n.addr {
            let list = n.ifaces.iter().map(|i| crate::iface::Iface { addr: i.addr, out_dir: i.out_dir as u32, in_dir: i.in_dir as u32, peer: i.peer as u32 }).collect();
            ifaces.add_multihomed(nodes.len(), k, list);
        }
    }
    ifaces.build_fib(&routes);
    let mut flows = Vec::new();
    let mut flow_names = HashMap::new();
    // `from` or `to` ending in `*` stands for every host whose name starts with the rest
    // (e.g. `to = "ue*"`): one flow per host, named `<flow>-<host>`.
    let mut expanded: Vec<(usize, FlowCfg, Option<String>)> = Vec::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        let (from_pat, to_pat) = (f.from.strip_suffix('*'), f.to.strip_suffix('*'));
        let (key, prefix) = match (from_pat, to_pat) {
            (Some(_), Some(_)) => return Err(err(text, Some(("flow", i)), "to", "only one of `from` and `to` may end in `*`".into())),
            (None, None) => {
                expanded.push((i, f.clone(), None));
                continue;
            }
            (Some(p), None) => ("from", p),
            (None, Some(p)) => ("to", p),
        };
        let matches: Vec<&PlanNode> = nodes.iter().filter(|n| n.kind == NodeKind::Host && n.name.starts_with(prefix)).collect();
        if matches.is_empty() {
            return Err(err(text, Some(("flow", i)), key, format!("no host name starts with {prefix:?} (pattern {:?})", if key == "to" { &f.to } else { &f.from })));
        }
        for n in matches {
            let mut g = f.clone();
            if key == "to" {
                g.to = n.name.clone();
            } else {
                g.from = n.name.clone();
            }
            expanded.push((i, g, Some(n.name.clone())));
        }
    }
    for (i, f, suffix) in &expanded {
        let (i, f) = (*i, f);
        let e = |key: &str, msg: String| err(text, Some(("flow", i)), key, msg);
        let host = |key: &str, name: &str| -> Result<usize, ScenarioError> {
            let k = *by_name.get(name).ok_or_else(|| e(key, format!("no node named {name:?}; nodes are {:?}", nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>())))?;
            if nodes[k].kind == NodeKind::Router {
                return Err(e(key, format!("{name:?} is a router; flows run between hosts")));
            }
            Ok(k)
        };
        let src = host("from", &f.from)?;
        let dst = host("to", &f.to)?;
        if src == dst {
            return Err(e("to", format!("expected a host other than `from`, got {:?}", f.to)));
        }
        let bind = match &f.bind {
            None => None,
            Some(b) => Some(bind_addr(&nodes[src], b).map_err(|m| e("bind", m))?),
        };
        // the client's address: the bound one, else the preferred source towards the server
        let src_addr = match bind {
            Some(a) => Some(a),
            None => ifaces.preferred_source(&routes, src, nodes[src].addr, nodes[dst].addr),
        };
        let reach = |a: usize, a_addr: Ipv4, b: usize, b_addr: Ipv4| {
            let Some((_, kb)) = ifaces.owner(b_addr) else { return false };
            // walk the routes as packets from `a_addr` to `b_addr` would go
            let mut at = a;
            for _ in 0..=nodes.len() {
                if at == b {
                    return true;
                }
                let d = match ifaces.route(&routes, at, a_addr, b_addr, b, kb) {
                    Some(d) => d,
                    None => return false,
                };
                at = dirs[d].to;
            }
            false
        };
        let ok = src_addr.is_some_and(|sa| reach(src, sa, dst, nodes[dst].addr) && reach(dst, nodes[dst].addr, src, sa));
        if !ok {
            return Err(e("to", format!("no route between {:?} and {:?}: the links do not connect them", f.from, f.to)));
        }
        if let Some(n) = &f.name {
            // a flow's name becomes part of file names (figures, per-flow outputs) and labels
            if n.is_empty() || n.contains(['/', '\\']) || n.chars().any(char::is_control) {
                return Err(e("name", format!("expected a non-empty name without '/', '\\' or control characters, got {}", crate::error::quote_short(n))));
            }
        }
        let mut name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
        if let Some(host) = suffix {
            name = format!("{name}-{host}");
        }
        if flow_names.insert(name.clone(), i).is_some() {
            return Err(e("name", format!("flow name {name:?} is used twice")));
        }
        if let Some(s) = f.start {
            if s.0 >= cfg.duration.0 {
                return Err(e("start", format!("expected a start time before the end of the run ({}), got \"{}\"", cfg.duration, s)));
            }
        }
        // keys that do not apply to the app
        let tcp_keys = [
            ("cc", f.cc.is_some()),
            ("window", f.window.is_some()),
            ("window_exact", f.window_exact.is_some()),
            ("mss", f.mss.is_some()),
            ("sack", f.sack.is_some()),
            ("timestamps", f.timestamps.is_some()),
            ("delayed_ack", f.delayed_ack.is_some()),
            ("delayed_ack_timeout", f.delayed_ack_timeout.is_some()),
            ("quickack", f.quickack.is_some()),
            ("nagle", f.nagle.is_some()),
            ("pacing", f.pacing.is_some()),
            ("pacing_quantum", f.pacing_quantum.is_some()),
            ("initial_cwnd", f.initial_cwnd.is_some()),
            ("min_rto", f.min_rto.is_some()),
            ("recovery", f.recovery.is_some()),
            ("ecn", f.ecn.is_some()),
            ("trace_segments", f.trace_segments.is_some()),
            ("trace_window", f.trace_window.is_some()),
        ];
        let allowed: &[&str] = match f.app {
            AppKind::Bulk => &["bytes", "rate", "length"],
            AppKind::Iperf => &["duration", "length", "reverse", "interval", "rate", "parallel", "bidir", "omit"],
            AppKind::Udp => &["duration", "rate", "size", "interval", "parallel", "omit"],
            AppKind::Ping => &["interval", "count", "size"],
            AppKind::Web => &["pages", "reading_time", "reading", "pipelining", "connections", "dns_delay", "page_model", "main_size", "embedded_objects", "embedded_size"],
            AppKind::Video => &["bitrate", "length", "startup_threshold", "mode", "buffer_target", "block"],
        };
        let other_keys = [
            ("bytes", f.bytes.is_some()),
            ("duration", f.duration.is_some()),
            ("length", f.length.is_some()),
            ("reverse", f.reverse.is_some()),
            ("parallel", f.parallel.is_some()),
            ("bidir", f.bidir.is_some()),
            ("omit", f.omit.is_some()),
            ("interval", f.interval.is_some()),
            ("rate", f.rate.is_some()),
            ("size", f.size.is_some()),
            ("count", f.count.is_some()),
            ("pages", f.pages.is_some()),
            ("reading_time", f.reading_time.is_some()),
            ("reading", f.reading.is_some()),
            ("pipelining", f.pipelining.is_some()),
            ("connections", f.connections.is_some()),
            ("dns_delay", f.dns_delay.is_some()),
            ("page_model", f.page_model.is_some()),
            ("main_size", f.main_size.is_some()),
            ("embedded_objects", f.embedded_objects.is_some()),
            ("embedded_size", f.embedded_size.is_some()),
            ("bitrate", f.bitrate.is_some()),
            ("startup_threshold", f.startup_threshold.is_some()),
            ("mode", f.mode.is_some()),
            ("buffer_target", f.buffer_target.is_some()),
            ("block", f.block.is_some()),
        ];
        let is_tcp = f.app.is_tcp();
        for (k, present) in tcp_keys {
            if present && !is_tcp {
                return Err(e(k, format!("`{k}` is a TCP setting and does not apply to app {:?}", f.app.name())));
            }
        }
        for (k, present) in other_keys {
            if present && !allowed.contains(&k) {
                return Err(e(k, format!("`{k}` does not apply to app {:?} (its keys: {})", f.app.name(), allowed.join(", "))));
            }
        }
        let mut mptcp = None;
        if let Some(spec) = &f.mptcp {
            mptcp = spec.model().map_err(|(k, m)| e(&k, m))?;
            if mptcp.is_some() && !matches!(f.app, AppKind::Bulk | AppKind::Iperf) {
                return Err(e("mptcp", format!("`mptcp` applies to bulk and iperf flows, not to app {:?}", f.app.name())));
            }
            if mptcp.is_some() && f.trace_segments == Some(true) {
                return Err(e("mptcp", "`trace_segments` follows one TCP connection: it does not apply to an MPTCP flow (its subflows are in the `mptcp_subflows` table)".into()));
            }
        }
        if let Some(m) = f.mss {
            if !(64..=65_000).contains(&m) {
                return Err(e("mss", format!("expected a segment size between 64 and 65000 bytes, got {m}")));
            }
        }
        for (k, w) in [("window", f.window), ("window_exact", f.window_exact)] {
            if let Some(w) = w {
                if w.0 < 2048 || w.0 > (1 << 30) {
                    return Err(e(k, format!("expected a window between 2KB and 1GB, got \"{w}\"")));
                }
            }
        }
        if f.window.is_some() && f.window_exact.is_some() {
            return Err(e("window_exact", "expected either `window` (iperf3 -w, Linux semantics) or `window_exact` (this advertised window), not both".into()));
        }
        if let Some(d) = f.delayed_ack_timeout {
            let ms = d.0.as_nanos() as f64 / 1e6;
            if !(1.0..=500.0).contains(&ms) {
                return Err(e("delayed_ack_timeout", format!("expected a delayed-ACK timer between 1ms and 500ms (RFC 5681 §4.2), got \"{d}\"")));
            }
        }
        if let Some(q) = f.quickack {
            if q > 16 {
                return Err(e("quickack", format!("expected 0..16 segments (Linux TCP_MAX_QUICKACKS), got {q}")));
            }
        }
        if let Some(c) = f.initial_cwnd {
            if !(1..=1000).contains(&c) {
                return Err(e("initial_cwnd", format!("expected 1..1000 segments, got {c}")));
            }
        }
        if let Some([a, b]) = f.trace_window {
            if f.trace_segments != Some(true) {
                return Err(e("trace_window", "`trace_window` limits the segment trace: it needs `trace_segments = true`".into()));
            }
            if a.0 >= b.0 {
                return Err(e("trace_window", format!("expected [start, end] with start before end, got [\"{a}\", \"{b}\"]")));
            }
        }
        if let Some(b) = f.bytes {
            if b.0 == 0 {
                return Err(e("bytes", "expected at least 1 byte".into()));
            }
        }
        if let Some(d) = f.duration {
            if d.0.as_nanos() == 0 {
                return Err(e("duration", "expected a duration greater than zero".into()));
            }
        }
        if let Some(l) = f.length {
            match (f.app, l) {
                (AppKind::Video, crate::units::Length::Time(d)) if d.0 > SimDuration::ZERO => {}
                (AppKind::Video, _) => return Err(e("length", format!("expected the clip's length, a duration greater than zero such as \"90s\", got \"{l}\""))),
                (_, crate::units::Length::Size(b)) if b.0 > 0 => {}
                _ => return Err(e("length", format!("expected a write size of at least 1 byte such as \"64KB\", got \"{l}\""))),
            }
        }
        if f.mode != Some(crate::config::VideoMode::Paced) {
            for (k, present) in [("buffer_target", f.buffer_target.is_some()), ("block", f.block.is_some())] {
                if present {
                    return Err(e(k, format!("`{k}` applies to a paced player: it needs `mode = \"paced\"`")));
                }
            }
        }
        if let Some(t) = f.buffer_target {
            let threshold = f.startup_threshold.map_or(SimDuration::from_millis(crate::config::app_defaults::VIDEO_STARTUP_MS), |d| d.0);
            if t.0 < threshold || t.0 == SimDuration::ZERO {
                return Err(e("buffer_target", format!("expected a buffer target greater than zero and at least the startup_threshold ({threshold}), got \"{t}\"")));
            }
        }
        if let Some(b) = f.block {
            let ok = match b {
                crate::units::Length::Size(n) => n.0 > 0,
                crate::units::Length::Time(d) => d.0 > SimDuration::ZERO,
            };
            if !ok {
                return Err(e("block", format!("expected a block of at least 1 byte (\"64KB\") or a media duration greater than zero (\"1s\"), got \"{b}\"")));
            }
        }
        for (k, v) in [("pages", f.pages), ("pipelining", f.pipelining), ("connections", f.connections)] {
            if v == Some(0) {
                return Err(e(k, format!("expected `{k}` of at least 1, got 0")));
            }
        }
        if f.connections.is_some_and(|c| c > 64) {
            return Err(e("connections", format!("expected at most 64 connections per host, got {}", f.connections.unwrap_or(0))));
        }
        let fixed_keys = [("main_size", f.main_size.is_some()), ("embedded_objects", f.embedded_objects.is_some()), ("embedded_size", f.embedded_size.is_some())];
        for (k, present) in fixed_keys {
            if present && f.page_model != Some(crate::config::PageModelKind::Fixed) {
                return Err(e(k, format!("`{k}` describes a fixed page: it needs `page_model = \"fixed\"`")));
            }
        }
        if f.main_size.is_some_and(|b| b.0 == 0) || f.embedded_size.is_some_and(|b| b.0 == 0) {
            let k = if f.main_size.is_some_and(|b| b.0 == 0) { "main_size" } else { "embedded_size" };
            return Err(e(k, format!("expected an object of at least 1 byte, got \"0B\" for `{k}`")));
        }
        if let Some(r) = f.bitrate {
            if r.0 < 1000 {
                return Err(e("bitrate", format!("expected a bit rate of at least 1kbps, got \"{r}\"")));
            }
        }
        if let Some(iv) = f.interval {
            if iv.0 < SimDuration::from_millis(1) {
                return Err(e("interval", format!("expected an interval of at least 1ms, got \"{iv}\"")));
            }
        }
        if let Some(s) = f.size {
            // the largest UDP or ICMP payload of one IPv4 datagram: 65535 − 20 − 8
            let max = 65_507;
            if s.0 == 0 || s.0 > max {
                return Err(e("size", format!("expected a payload between 1 and {max} bytes, got \"{s}\"")));
            }
        }
        if let Some(p) = f.parallel {
            if !(1..=128).contains(&p) {
                return Err(e("parallel", format!("expected 1..128 streams (iperf3's -P limit), got {p}")));
            }
        }
        if f.bidir == Some(true) && f.reverse == Some(true) {
            return Err(e("bidir", "`bidir = true` sends both ways: it does not go with `reverse = true` (iperf3 refuses -R with --bidir)".into()));
        }
        if f.omit.is_some_and(|d| d.0.as_nanos() == 0) {
            return Err(e("omit", "expected a duration greater than zero".into()));
        }
        let cc = f.cc.unwrap_or(CcKind::Cubic.into());
        for (stream, suffix, reverse) in iperf_streams(f) {
            let mut cfg = f.clone();
            cfg.reverse = reverse.or(f.reverse);
            let stream_name = format!("{name}{suffix}");
            flows.push(PlanFlow { name: stream_name, cfg, src, dst, cc, test: name.clone(), stream, mptcp: mptcp.clone(), bind });
        }
    }
    let mut seen = HashSet::new();
    if let Some(dup) = flows.iter().find(|f| !seen.insert(f.name.as_str())) {
        return Err(err(text, None, "flow", format!("two flows are named {:?} (an iperf stream `<flow>.k` or `<flow>.tx`/`.rx` takes the name of another flow)", dup.name)));
    }
    let names: Vec<(String, NodeKind)> = nodes.iter().map(|n| (n.name.clone(), n.kind)).collect();
    let proxies = crate::tproxy::plan_proxies(text, &cfg.proxies, &names, lte.as_ref().map(|l| (l.pgw_node, l.enb_node.as_slice())))?;
    let events = plan_events(text, cfg, &links, &dirs)?;
    Ok(Plan { nodes, links, dirs, routes, ifaces, flows, lte, wifi, proxies, events })
}

/// A host's interfaces (see `iface.rs`): one per link it is an endpoint of, the LTE radio
/// first, then its Wi-Fi association, then its `[[link]]`s in file order. A host whose
/// interfaces (two or more) all lead to routers is multihomed: the first interface carries its
/// address, each other one an address of [`IFACE_POOL`]; any other host's interfaces all carry
/// its address (it forwards between them as before). Returns the directions of the multihomed
/// hosts' other interfaces.
fn assign_interfaces(text: &str, cfg: &Config, nodes: &mut [PlanNode], links: &[PlanLink], dirs: &[PlanLinkDir]) -> Result<std::collections::HashSet<usize>, ScenarioError> {
    let mut next_extra = 0usize;
    let mut extra = std::collections::HashSet::new();
    for (li, l) in links.iter().enumerate() {
        let [d0, d1] = l.dirs;
        let (a, b) = (dirs[d0].from, dirs[d0].to);
        let device = match dirs[d0].kind {
            DirKind::Radio { .. } => "lte",
            DirKind::Wifi { .. } => "wifi",
            DirKind::Wire | DirKind::S1u => "link",
        };
        for (me, peer, out_dir, in_dir) in [(a, b, d0, d1), (b, a, d1, d0)] {
            let addr = nodes[me].addr;
            nodes[me].ifaces.push(PlanIface { name: l.name.clone(), addr, device, link: li, out_dir, in_dir, peer });
        }
    }
    let rank = |d: &str| match d {
        "lte" => 0,
        "wifi" => 1,
        _ => 2,
    };
    for k in 0..nodes.len() {
        if nodes[k].ifaces.len() < 2 || nodes[k].kind == NodeKind::Router {
            continue;
        }
        nodes[k].ifaces.sort_by_key(|i| rank(i.device));
        if !nodes[k].ifaces.iter().all(|i| nodes[i.peer].kind == NodeKind::Router) {
            continue;
        }
        for j in 1..nodes[k].ifaces.len() {
            let i = &nodes[k].ifaces[j];
            let addr = IFACE_POOL.addr(next_extra).map_err(|m| match i.link {
                li if li < cfg.links.len() => err(text, Some(("link", li)), "between", m),
                _ => ScenarioError::new("wifi", m),
            })?;
            next_extra += 1;
            extra.insert(i.out_dir);
            extra.insert(i.in_dir);
            nodes[k].ifaces[j].addr = addr;
        }
    }
    Ok(extra)
}

/// The `[[event]]`s: each names an interface (a link other than S1-U: a `[[link]]`, a UE's
/// radio, a Wi-Fi association) and a time within the run.
fn plan_events(text: &str, cfg: &Config, links: &[PlanLink], dirs: &[PlanLinkDir]) -> Result<Vec<PlanEvent>, ScenarioError> {
    let mut out = Vec::with_capacity(cfg.events.len());
    for (i, ev) in cfg.events.iter().enumerate() {
        let e = |k: &str, m: String| err(text, Some(("event", i)), k, m);
        let named = |l: &PlanLink| !matches!(dirs[l.dirs[0]].kind, DirKind::S1u);
        let Some(link) = links.iter().position(|l| l.name == ev.interface && named(l)) else {
            let names: Vec<&str> = links.iter().filter(|l| named(l)).map(|l| l.name.as_str()).collect();
            let shown = if names.len() > 12 { format!("{}, … ({} in all)", names[..12].join(", "), names.len()) } else { names.join(", ") };
            return Err(e("interface", format!("expected the name of an interface (a [[link]]'s name, radio-<ue>, wifi-<bss>-<station>), got {}; the scenario's interfaces: {shown}", crate::error::quote_short(&ev.interface))));
        };
        if ev.at.0 >= cfg.duration.0 {
            return Err(e("at", format!("expected a time before the end of the run ({}), got \"{}\"", cfg.duration, ev.at)));
        }
        out.push(PlanEvent { at: ev.at.0, link, up: ev.state == crate::config::IfaceState::Up });
    }
    Ok(out)
}

/// The address `bind` names on `node`: one of its addresses, or the name of one of its
/// interfaces.
fn bind_addr(node: &PlanNode, b: &str) -> Result<Ipv4, String> {
    let found = match parse_ipv4(b) {
        Some(a) => (a == node.addr || node.ifaces.iter().any(|i| i.addr == a)).then_some(a),
        None => node.ifaces.iter().find(|i| i.name == b).map(|i| i.addr),
    };
    found.ok_or_else(|| {
        let list: Vec<String> = node.ifaces.iter().map(|i| format!("{} ({}, {})", i.name, i.addr, i.device)).collect();
        format!("expected an address or interface name of host {:?}, got {b:?}; its interfaces: {}", node.name, if list.is_empty() { node.addr.to_string() } else { list.join(", ") })
    })
}

/// The streams of a flow (`iperf3 -P N --bidir`): (number from 1, name suffix, `reverse`
/// override), or the flow itself (number 0) when it is not split.
fn iperf_streams(f: &FlowCfg) -> Vec<(u32, String, Option<bool>)> {
    let n = f.parallel.unwrap_or(1);
    let bidir = f.bidir == Some(true);
    if n == 1 && !bidir {
        return vec![(0, String::new(), None)];
    }
    let dirs: &[(&str, Option<bool>)] = if bidir { &[(".tx", Some(false)), (".rx", Some(true))] } else { &[("", None)] };
    let mut out = Vec::new();
    for &(d, reverse) in dirs {
        for k in 1..=n {
            let number = out.len() as u32 + 1;
            out.push((number, if n > 1 { format!("{d}.{k}") } else { d.to_string() }, reverse));
        }
    }
    out
}

/// An address pool: `n_blocks` consecutive /16s from `10.<first>.0.0`, each holding 250 hosts
/// in each of its 256 /24s (`.1` to `.250`, as the pools always numbered them). It never wraps:
/// asking past its end is refused with a message naming the pool.
pub struct AddrPool {
    pub name: &'static str,
    first: u8,
    /// Third octet of the first /24 used in each /16.
    first_24: u8,
    n_blocks: u8,
}

/// Nodes without an `address`: 10.0.0.0/11 (2,048,000 hosts).
pub const AUTO_POOL: AddrPool = AddrPool { name: "10.0.0.0/11 (nodes without an address)", first: 0, first_24: 0, n_blocks: 32 };
/// The other interfaces of multihomed hosts: 10.32.0.0 to 10.43.255.250 (768,000 addresses).
pub const IFACE_POOL: AddrPool = AddrPool { name: "10.32.0.0-10.43.255.255 (hosts' other interfaces)", first: 32, first_24: 0, n_blocks: 12 };
/// eNBs: 10.44.1.0 to 10.44.255.250 (63,750 eNBs); the PGW is 10.44.0.1.
pub const ENB_POOL: AddrPool = AddrPool { name: "10.44.1.0-10.44.255.255 (eNBs)", first: 44, first_24: 1, n_blocks: 1 };
/// UEs: 10.45.0.0 to 10.63.255.250 (1,216,000 UEs); the first 64,000 in 10.45.0.0/16.
pub const UE_POOL: AddrPool = AddrPool { name: "10.45.0.0-10.63.255.255 (UEs)", first: 45, first_24: 0, n_blocks: 19 };

impl AddrPool {
    /// Hosts the pool holds.
    pub const fn capacity(&self) -> usize {
        self.n_blocks as usize * (256 - self.first_24 as usize) * 250
    }

    /// The `i`-th address of the pool.
    pub fn addr(&self, i: usize) -> Result<Ipv4, String> {
        if i >= self.capacity() {
            return Err(format!("the address pool {} is exhausted: it holds {} addresses", self.name, self.capacity()));
        }
        let per_block = (256 - self.first_24 as usize) * 250;
        let (block, rest) = (i / per_block, i % per_block);
        Ok(Ipv4::new(10, self.first + block as u8, self.first_24 + (rest / 250) as u8, (rest % 250 + 1) as u8))
    }
}

fn parse_ipv4(s: &str) -> Option<Ipv4> {
    let parts: Vec<u8> = s.split('.').map(|p| p.parse().ok()).collect::<Option<Vec<_>>>()?;
    (parts.len() == 4).then(|| Ipv4::new(parts[0], parts[1], parts[2], parts[3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_keep_the_old_numbering_and_never_wrap() {
        // the formulas the pools replace, where they did not wrap yet
        for i in [0usize, 1, 249, 250, 12_345, 63_999] {
            assert_eq!(AUTO_POOL.addr(i).unwrap(), Ipv4::new(10, 0, (i / 250) as u8, (i % 250 + 1) as u8));
            assert_eq!(UE_POOL.addr(i).unwrap(), Ipv4::new(10, 45, (i / 250) as u8, (i % 250 + 1) as u8));
        }
        for k in [0usize, 249, 250, 63_749] {
            assert_eq!(ENB_POOL.addr(k).unwrap(), Ipv4::new(10, 44, 1 + (k / 250) as u8, (k % 250 + 1) as u8));
        }
        // past 64,000 UEs: the next /16, where the old formula wrapped onto 10.45.0.1
        assert_eq!(UE_POOL.addr(64_000).unwrap(), Ipv4::new(10, 46, 0, 1));
        assert_eq!(UE_POOL.addr(99_999).unwrap(), Ipv4::new(10, 46, 143, 250));
        // every address of a pool is distinct, none is a network (.0) or broadcast (.255) one
        for pool in [&ENB_POOL, &UE_POOL] {
            let mut seen = std::collections::HashSet::new();
            for i in 0..pool.capacity() {
                let a = pool.addr(i).unwrap();
                assert!(seen.insert(a), "{} repeats {a}", pool.name);
                let last = a.0 & 0xff;
                assert!((1..=250).contains(&last));
            }
        }
        // the pools do not overlap each other or the PGW
        assert!(AUTO_POOL.addr(AUTO_POOL.capacity() - 1).unwrap() < IFACE_POOL.addr(0).unwrap());
        assert!(IFACE_POOL.addr(IFACE_POOL.capacity() - 1).unwrap() < Ipv4::new(10, 44, 0, 1));
        assert!(IFACE_POOL.addr(IFACE_POOL.capacity()).unwrap_err().contains("hosts' other interfaces"));
        assert!(Ipv4::new(10, 44, 0, 1) < ENB_POOL.addr(0).unwrap());
        assert!(ENB_POOL.addr(ENB_POOL.capacity() - 1).unwrap() < UE_POOL.addr(0).unwrap());
        // exhausted: refused, naming the pool
        let e = UE_POOL.addr(UE_POOL.capacity()).unwrap_err();
        assert!(e.contains("10.45.0.0-10.63.255.255 (UEs)") && e.contains("exhausted"), "{e}");
        assert_eq!(UE_POOL.capacity(), 19 * 64_000);
        assert!(ENB_POOL.addr(63_750).is_err());
    }
}
