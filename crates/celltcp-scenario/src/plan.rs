//! Semantic validation: turns a type-checked [`Config`] into a [`Plan`] of resolved nodes, links
//! and flows, or refuses it with an error naming the key, the value and what was expected.

use std::collections::HashMap;

use celltcp_engine::SimDuration;
use celltcp_net::loss::LossConfig;
use celltcp_net::queue::{CoDelConfig, QueueConfig, QueueLimit, RedConfig, StepConfig};
use celltcp_net::routing::Routes;
use celltcp_net::Ipv4;
use celltcp_tcp::cc::CcKind;

use crate::config::*;
use crate::error::ScenarioError;

pub struct PlanNode {
    pub name: String,
    pub addr: Ipv4,
    pub kind: NodeKind,
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
    pub flows: Vec<PlanFlow>,
}

pub struct PlanFlow {
    pub name: String,
    pub cfg: FlowCfg,
    pub src: usize,
    pub dst: usize,
    pub cc: CcKind,
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

fn loss_config(text: &str, i: usize, l: &LossSpec) -> Result<LossConfig, ScenarioError> {
    Ok(match l {
        LossSpec::None => LossConfig::None,
        LossSpec::Bernoulli(p) => {
            if !(0.0..=1.0).contains(p) || p.is_nan() {
                return Err(err(text, Some(("link", i)), "loss", format!("expected a loss probability between 0 and 1, got {p}")));
            }
            LossConfig::Bernoulli { p: *p }
        }
        LossSpec::Table(t) => match t.model {
            LossModelKind::Bernoulli => LossConfig::Bernoulli { p: check_prob(text, i, "loss.p", t.p, "p")? },
            LossModelKind::GilbertElliott => LossConfig::GilbertElliott {
                p_good_to_bad: check_prob(text, i, "loss.p_good_to_bad", t.p_good_to_bad, "p_good_to_bad")?,
                p_bad_to_good: check_prob(text, i, "loss.p_bad_to_good", t.p_bad_to_good, "p_bad_to_good")?,
                loss_good: check_prob(text, i, "loss.loss_good", t.loss_good.or(Some(0.0)), "loss_good")?,
                loss_bad: check_prob(text, i, "loss.loss_bad", t.loss_bad.or(Some(1.0)), "loss_bad")?,
            },
        },
    })
}

fn limit(l: QueueLimitSpec) -> QueueLimit {
    match l {
        QueueLimitSpec::Packets(n) => QueueLimit::Packets(n),
        QueueLimitSpec::Bytes(b) => QueueLimit::Bytes(b),
    }
}

fn queue_config(text: &str, i: usize, q: &QueueSpec) -> Result<QueueConfig, ScenarioError> {
    let e = |key: &str, msg: String| err(text, Some(("link", i)), key, msg);
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

/// Validates `cfg` (parsed from `text`, used to find lines) and resolves it into a plan.
pub fn plan(text: &str, cfg: &Config, base_dir: Option<&std::path::Path>) -> Result<Plan, ScenarioError> {
    if cfg.duration.0.as_nanos() == 0 {
        return Err(err(text, None, "duration", "expected a duration greater than zero, got \"0s\"".into()));
    }
    if cfg.sample_interval.0.as_nanos() < 1_000 {
        return Err(err(text, None, "sample_interval", format!("expected at least 1us, got \"{}\"", cfg.sample_interval)));
    }
    let mut nodes: Vec<PlanNode> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let auto_addr = |i: usize| Ipv4::new(10, 0, (i / 250) as u8, (i % 250 + 1) as u8);
    for (i, n) in cfg.nodes.iter().enumerate() {
        if n.name.is_empty() {
            return Err(err(text, Some(("node", i)), "name", "expected a non-empty name".into()));
        }
        if by_name.contains_key(&n.name) {
            return Err(err(text, Some(("node", i)), "name", format!("node {:?} is declared twice", n.name)));
        }
        let addr = match &n.address {
            Some(a) => parse_ipv4(a).ok_or_else(|| err(text, Some(("node", i)), "address", format!("expected a dotted-quad IPv4 address such as \"10.0.0.1\", got {a:?}")))?,
            None => auto_addr(nodes.len()),
        };
        by_name.insert(n.name.clone(), nodes.len());
        nodes.push(PlanNode { name: n.name.clone(), addr, kind: n.kind });
    }
    if cfg.links.is_empty() {
        return Err(ScenarioError::new("link", "expected at least one [[link]]"));
    }
    let mut links = Vec::new();
    let mut dirs = Vec::new();
    let mut link_names = HashMap::new();
    for (i, l) in cfg.links.iter().enumerate() {
        let e = |key: &str, msg: String| err(text, Some(("link", i)), key, msg);
        let [a, b] = &l.between;
        if a.is_empty() || b.is_empty() {
            return Err(e("between", "expected two non-empty node names".into()));
        }
        if a == b {
            return Err(e("between", format!("expected two different nodes, got [{a:?}, {b:?}]")));
        }
        let mut idx = |name: &String| -> usize {
            if let Some(&k) = by_name.get(name) {
                return k;
            }
            let k = nodes.len();
            nodes.push(PlanNode { name: name.clone(), addr: auto_addr(k), kind: NodeKind::Host });
            by_name.insert(name.clone(), k);
            k
        };
        let (ia, ib) = (idx(a), idx(b));
        let name = l.name.clone().unwrap_or_else(|| format!("{a}-{b}"));
        if link_names.insert(name.clone(), i).is_some() {
            return Err(e("name", format!("link name {name:?} is used twice; give the links distinct `name`s")));
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
        for (from, to, rate, trace) in [(ia, ib, rate_fwd, trace_fwd), (ib, ia, rate_rev, trace_rev)] {
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
            });
        }
        links.push(PlanLink { name, pcap: l.pcap, dirs: [d0, d0 + 1] });
    }
    let mut seen_addr = HashMap::new();
    for n in &nodes {
        if let Some(other) = seen_addr.insert(n.addr, n.name.clone()) {
            return Err(ScenarioError::new("node", format!("nodes {other:?} and {:?} share the address {}", n.name, n.addr)));
        }
    }
    let edges: Vec<(usize, usize, usize)> = dirs.iter().enumerate().map(|(k, d)| (d.from, d.to, k)).collect();
    let routes = Routes::compute(nodes.len(), &edges);
    let mut flows = Vec::new();
    let mut flow_names = HashMap::new();
    for (i, f) in cfg.flows.iter().enumerate() {
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
        if routes.path(src, dst).is_none() || routes.path(dst, src).is_none() {
            return Err(e("to", format!("no route between {:?} and {:?}: the links do not connect them", f.from, f.to)));
        }
        let name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
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
            ("mss", f.mss.is_some()),
            ("sack", f.sack.is_some()),
            ("timestamps", f.timestamps.is_some()),
            ("delayed_ack", f.delayed_ack.is_some()),
            ("pacing", f.pacing.is_some()),
            ("initial_cwnd", f.initial_cwnd.is_some()),
            ("min_rto", f.min_rto.is_some()),
            ("ecn", f.ecn.is_some()),
        ];
        let allowed: &[&str] = match f.app {
            AppKind::Bulk => &["bytes"],
            AppKind::Iperf => &["duration", "length", "reverse", "interval"],
            AppKind::Udp => &["duration", "rate", "size"],
            AppKind::Ping => &["interval", "count", "size"],
        };
        let other_keys = [
            ("bytes", f.bytes.is_some()),
            ("duration", f.duration.is_some()),
            ("length", f.length.is_some()),
            ("reverse", f.reverse.is_some()),
            ("interval", f.interval.is_some()),
            ("rate", f.rate.is_some()),
            ("size", f.size.is_some()),
            ("count", f.count.is_some()),
        ];
        let is_tcp = matches!(f.app, AppKind::Bulk | AppKind::Iperf);
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
        if let Some(m) = f.mss {
            if !(64..=65_000).contains(&m) {
                return Err(e("mss", format!("expected a segment size between 64 and 65000 bytes, got {m}")));
            }
        }
        if let Some(w) = f.window {
            if w.0 < 2048 || w.0 > (1 << 30) {
                return Err(e("window", format!("expected a window between 2KB and 1GB, got \"{w}\"")));
            }
        }
        if let Some(c) = f.initial_cwnd {
            if !(1..=1000).contains(&c) {
                return Err(e("initial_cwnd", format!("expected 1..1000 segments, got {c}")));
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
            if l.0 == 0 {
                return Err(e("length", "expected a write size of at least 1 byte".into()));
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
        flows.push(PlanFlow { name, cfg: f.clone(), src, dst, cc: f.cc.unwrap_or(CcKind::Cubic) });
    }
    Ok(Plan { nodes, links, dirs, routes, flows })
}

fn parse_ipv4(s: &str) -> Option<Ipv4> {
    let parts: Vec<u8> = s.split('.').map(|p| p.parse().ok()).collect::<Option<Vec<_>>>()?;
    (parts.len() == 4).then(|| Ipv4::new(parts[0], parts[1], parts[2], parts[3]))
}
