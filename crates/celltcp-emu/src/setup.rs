//! What an emulation run creates, decided from the scenario alone (sans-IO): which hosts are
//! real (network namespaces), their device names, addresses, MTUs and kernel settings, and the
//! commands to run with their `{addr:NODE}` substitutions. `os.rs`/`netns.rs` carry it out.
//!
//! A host is real when a command runs on it (an `[[exec]]` entry, `--exec`, `--shell`) or a
//! command names it (`{addr:NODE}`); every other node stays simulated, so the scenario's
//! `[[flow]]`s keep running as cross traffic between simulated hosts. A flow may not end at a
//! real host (its simulated sockets would not exist there).

use celltcp_engine::SimDuration;
use celltcp_net::Ipv4;
use celltcp_scenario::config::{Config, NodeKind};
use celltcp_scenario::plan::Plan;

/// Prefix of every name an emulation run gives (TUN devices, holder processes), so that
/// `--cleanup` finds what a dead run left.
pub const NAME_PREFIX: &str = "ctemu";

/// Bytes of GTP-U/UDP/IPv4 around a packet on S1-U: a real host behind an LTE cell gets an MTU
/// that leaves room for them (the kernel's TCP sets DF, and no ICMP "fragmentation needed"
/// comes back from the simulation).
const GTPU_OVERHEAD: u32 = 36;

/// A real host: a network namespace with one TUN device per interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    /// The node's index in the plan.
    pub node: usize,
    pub name: String,
    /// Its first interface's address.
    pub addr: Ipv4,
    /// The first TUN device's MTU.
    pub mtu: u32,
    /// `net.ipv4.tcp_congestion_control` in its namespace.
    pub cc: String,
    /// The first TUN device's name (at most 15 bytes, IFNAMSIZ - 1).
    pub tun: String,
    /// The holder process's argv[0] (`ctemu-<run>-<emulator pid>-<node>`).
    pub label: String,
    /// Its TUN devices, one per interface: one for a host with one address; for a multihomed
    /// host (docs/scenario.md "Interfaces and addresses") one per interface, the first the
    /// default route, each other one with its source-address rule and an MPTCP endpoint.
    pub tuns: Vec<TunSpec>,
}

/// One TUN device of a real host: an interface of the scenario's node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunSpec {
    /// The device's name (at most 15 bytes): `ctemu<run><host>` for the first, then a letter
    /// per further interface (`b`, `c`, ...).
    pub dev: String,
    /// The interface's address (/32 on the device).
    pub addr: Ipv4,
    pub mtu: u32,
    /// The interface's name in the scenario (`wire`, `radio-ue`, a `[[link]]`'s name), for the
    /// summary; empty for a host with one address.
    pub iface: String,
    /// The routing table of its source-address rule (`ip rule add from ADDR lookup TABLE`);
    /// 0 for the first device (the main table's default route).
    pub table: u32,
}

impl HostSpec {
    /// The shell commands that address and route the TUN devices in the namespace (after they
    /// were moved there): each device up with its MTU and /32 address; the main table's default
    /// route by the first; for each other interface `k` the rule and table of the Linux Advanced
    /// Routing HOWTO §4.2 that the simulated multihomed host holds (`iface.rs`): `ip rule add
    /// from ADDR_k lookup TABLE_k`, `ip route add default dev TUN_k src ADDR_k table TABLE_k`;
    /// and, for kernel MPTCP (Documentation/networking/mptcp.rst, ip-mptcp(8)), an endpoint
    /// `ip mptcp endpoint add ADDR_k dev TUN_k subflow signal` (a client opens a subflow from
    /// it, a server announces it) and limits that allow them (`ip mptcp limits set subflows 8
    /// add_addr_accepted 8`, the kernel's maximum; set on every host so that a server accepts
    /// the joins and a client the announced addresses).
    pub fn address_script(&self) -> String {
        let mut s = String::new();
        for t in &self.tuns {
            s.push_str(&format!(
                "ip link set dev {d} mtu {m} up\nip addr add {a}/32 dev {d}\necho 0 > /proc/sys/net/ipv4/conf/{d}/rp_filter\n",
                d = t.dev,
                m = t.mtu,
                a = t.addr
            ));
        }
        s.push_str(&format!("ip route add default dev {}\n", self.tuns[0].dev));
        for t in &self.tuns[1..] {
            s.push_str(&format!(
                "ip route add default dev {d} src {a} table {n}\nip rule add from {a} lookup {n}\n",
                d = t.dev,
                a = t.addr,
                n = t.table
            ));
        }
        s.push_str("if ip mptcp limits show >/dev/null 2>&1; then\nip mptcp limits set subflows 8 add_addr_accepted 8\n");
        for t in &self.tuns[1..] {
            s.push_str(&format!("ip mptcp endpoint add {a} dev {d} subflow signal\n", a = t.addr, d = t.dev));
        }
        s.push_str("fi\n");
        s
    }
}

/// A command to run in a host's namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecSpec {
    /// Its index (scenario entries first, then `--exec`, then `--shell`): outputs go to
    /// `exec/<index>-<node>.out` and `.err`.
    pub index: usize,
    /// Index into [`EmuPlan::hosts`].
    pub host: usize,
    /// The command line after substitution (run by `sh -c`).
    pub cmd: String,
    pub start: SimDuration,
    pub background: bool,
    /// `--shell`: the terminal's stdin/stdout/stderr, not files.
    pub interactive: bool,
}

/// A command given on the command line (`--exec NODE -- CMD ARGS...`).
#[derive(Clone, Debug)]
pub struct ExtraExec {
    pub node: String,
    pub argv: Vec<String>,
}

/// Everything an emulation run sets up.
#[derive(Clone, Debug)]
pub struct EmuPlan {
    pub run_id: String,
    pub hosts: Vec<HostSpec>,
    pub execs: Vec<ExecSpec>,
    pub tcp_rmem: Option<String>,
    pub tcp_wmem: Option<String>,
    pub busy_poll: SimDuration,
    /// TUN devices with segmentation offload (`emu.offload`, default true; `gso.rs`).
    pub offload: bool,
    /// Trains of segments written as one GSO packet (`emu.gso_writes`, default true; needs
    /// `offload`).
    pub gso_writes: bool,
}

/// Plans an emulation run of `cfg`/`plan`. `pid` is the emulator's process id (it goes into
/// the holders' names). Errors name the key, the value and what was expected.
pub fn plan_emu(cfg: &Config, plan: &Plan, extra: &[ExtraExec], shell: Option<&str>, run_id: &str, pid: u32) -> Result<EmuPlan, String> {
    let node_of = |name: &str, key: &str| -> Result<usize, String> {
        let i = plan.nodes.iter().position(|n| n.name == name).ok_or_else(|| {
            let hosts: Vec<&str> = plan.nodes.iter().filter(|n| n.kind == NodeKind::Host).map(|n| n.name.as_str()).collect();
            format!("{key}: {name:?} is not a node of the scenario (expected a host: {})", hosts.join(", "))
        })?;
        if plan.nodes[i].kind != NodeKind::Host {
            return Err(format!("{key}: {name:?} is a router (expected a host: commands run on hosts)"));
        }
        Ok(i)
    };
    // (key, node, cmd, start, background, interactive)
    let mut raw: Vec<(String, usize, String, SimDuration, bool, bool)> = Vec::new();
    for (i, e) in cfg.execs.iter().enumerate() {
        let key = format!("exec[{i}]");
        let n = node_of(&e.node, &format!("{key}.node"))?;
        if e.cmd.trim().is_empty() {
            return Err(format!("{key}.cmd: empty (expected a command line)"));
        }
        raw.push((key, n, e.cmd.clone(), e.start.map_or(SimDuration::ZERO, |d| d.0), e.background, false));
    }
    for (i, e) in extra.iter().enumerate() {
        let key = format!("--exec[{i}]");
        let n = node_of(&e.node, &key)?;
        if e.argv.is_empty() {
            return Err(format!("{key}: no command after the node (expected --exec NODE -- CMD ARGS...)"));
        }
        let cmd = e.argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
        raw.push((key, n, cmd, SimDuration::ZERO, false, false));
    }
    if let Some(s) = shell {
        let n = node_of(s, "--shell")?;
        raw.push(("--shell".into(), n, "exec ${SHELL:-/bin/bash} -i".into(), SimDuration::ZERO, false, true));
    }
    // real hosts: those running a command or named by one, in plan order
    let mut real = vec![false; plan.nodes.len()];
    let mut cmds = Vec::with_capacity(raw.len());
    for (key, n, cmd, ..) in &raw {
        real[*n] = true;
        let (c, named) = substitute(cmd, |name| {
            // a router (the PGW, an eNB) stays simulated: its address only (e.g. to ping it)
            if let Some(r) = plan.nodes.iter().find(|n| n.name == name && n.kind != NodeKind::Host) {
                return Ok((usize::MAX, r.addr));
            }
            let i = node_of(name, &format!("{key}.cmd {{addr:{name}}}"))?;
            Ok((i, plan.nodes[i].addr))
        })?;
        for i in named.into_iter().filter(|&i| i != usize::MAX) {
            real[i] = true;
        }
        cmds.push(c);
    }
    let emu = cfg.emu.clone().unwrap_or_default();
    for name in emu.node_cc.keys() {
        node_of(name, &format!("emu.node_cc.{name}"))?;
    }
    let lte = plan.lte.is_some();
    let mut hosts = Vec::new();
    let mut host_of = vec![usize::MAX; plan.nodes.len()];
    for (i, n) in plan.nodes.iter().enumerate() {
        if !real[i] {
            continue;
        }
        let mtu = plan.dirs.iter().filter(|d| d.from == i).map(|d| d.mtu).min().unwrap_or(1500);
        let mtu = if lte { mtu.saturating_sub(GTPU_OVERHEAD) } else { mtu };
        let cc = emu.node_cc.get(&n.name).or(emu.cc.as_ref()).cloned().unwrap_or_else(|| "cubic".into());
        if cc.is_empty() || !cc.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("emu.cc: {cc:?} is not a congestion control name (expected e.g. cubic, reno, bbr)"));
        }
        host_of[i] = hosts.len();
        let tun = format!("{NAME_PREFIX}{run_id}{}", hosts.len());
        let mut tuns = vec![TunSpec { dev: tun.clone(), addr: n.addr, mtu, iface: String::new(), table: 0 }];
        if !plan.ifaces.of(i).is_empty() {
            // multihomed: a device per interface, in the plan's order (the first carries the
            // node's address); GTP-U's room only on the LTE radio (the other paths do not
            // cross S1-U)
            tuns.clear();
            for (k, pi) in n.ifaces.iter().enumerate() {
                if k >= 26 {
                    return Err(format!("node {:?}: more than 26 interfaces (expected at most 26 for TUN device names)", n.name));
                }
                let m = plan.dirs[pi.out_dir].mtu;
                let m = if pi.device == "lte" { m.saturating_sub(GTPU_OVERHEAD) } else { m };
                let dev = if k == 0 { tun.clone() } else { format!("{tun}{}", (b'a' + k as u8) as char) };
                tuns.push(TunSpec { dev, addr: pi.addr, mtu: m, iface: pi.name.clone(), table: if k == 0 { 0 } else { 100 + k as u32 } });
            }
        }
        if tuns.iter().any(|t| t.dev.len() > 15) {
            return Err(format!("too many real hosts ({}): device names would pass 15 bytes", hosts.len() + 1));
        }
        let (mtu, addr) = (tuns[0].mtu, tuns[0].addr);
        hosts.push(HostSpec { node: i, name: n.name.clone(), addr, mtu, cc, tun, label: format!("{NAME_PREFIX}-{run_id}-{pid}-{}", n.name), tuns });
    }
    for (i, f) in plan.flows.iter().enumerate() {
        for (end, n) in [("from", f.src), ("to", f.dst)] {
            if real[n] {
                return Err(format!(
                    "flow[{i}].{end}: {:?} is a real host in this emulation (it runs or is named by a command); a simulated flow needs simulated hosts at both ends",
                    plan.nodes[n].name
                ));
            }
        }
    }
    let execs = raw
        .into_iter()
        .zip(cmds)
        .enumerate()
        .map(|(index, ((_, n, _, start, background, interactive), cmd))| ExecSpec { index, host: host_of[n], cmd, start, background, interactive })
        .collect();
    for (key, v) in [("emu.tcp_rmem", &emu.tcp_rmem), ("emu.tcp_wmem", &emu.tcp_wmem)] {
        if let Some(v) = v {
            let ok = v.split_whitespace().count() == 3 && v.split_whitespace().all(|x| x.parse::<u64>().is_ok());
            if !ok {
                return Err(format!("{key}: {v:?} (expected three byte counts, \"min default max\", e.g. \"4096 131072 6291456\")"));
            }
        }
    }
    Ok(EmuPlan {
        run_id: run_id.to_string(),
        hosts,
        execs,
        tcp_rmem: emu.tcp_rmem,
        tcp_wmem: emu.tcp_wmem,
        busy_poll: emu.busy_poll.map_or(SimDuration::from_micros(50), |d| d.0),
        offload: emu.offload.unwrap_or(true),
        gso_writes: emu.gso_writes.unwrap_or(true),
    })
}

/// Replaces every `{addr:NODE}` in `cmd` by the address `lookup(NODE)` gives; returns the
/// result and the nodes named. An unclosed `{addr:` is an error.
pub fn substitute(cmd: &str, mut lookup: impl FnMut(&str) -> Result<(usize, Ipv4), String>) -> Result<(String, Vec<usize>), String> {
    let mut out = String::with_capacity(cmd.len());
    let mut named = Vec::new();
    let mut rest = cmd;
    while let Some(p) = rest.find("{addr:") {
        out.push_str(&rest[..p]);
        let after = &rest[p + 6..];
        let Some(end) = after.find('}') else {
            return Err(format!("cmd {cmd:?}: unclosed {{addr: (expected {{addr:NODE}})"));
        };
        let (i, a) = lookup(&after[..end])?;
        named.push(i);
        out.push_str(&a.to_string());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok((out, named))
}

/// Quotes `s` for `sh` (single quotes; a single quote as `'\''`), leaving plain words bare.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+{}".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> (Config, Plan) {
        celltcp_scenario::load_config(text, &[], None, None).unwrap()
    }

    const WIRED: &str = r#"
duration = "5s"
[[link]]
between = ["client", "r"]
rate = "100Mbps"
delay = "1ms"
[[link]]
between = ["r", "server"]
rate = "10Mbps"
delay = "10ms"
mtu = 1400
[[node]]
name = "r"
kind = "router"
[[exec]]
node = "server"
cmd = "iperf3 -s -1"
background = true
[[exec]]
node = "client"
cmd = "iperf3 -c {addr:server} -t 2"
start = "0.5s"
[emu]
cc = "reno"
node_cc = { server = "cubic" }
"#;

    #[test]
    fn emu_plan_hosts_names_and_substitution() {
        let (cfg, plan) = load(WIRED);
        let p = plan_emu(&cfg, &plan, &[], None, "a1b2c3", 42).unwrap();
        let names: Vec<&str> = p.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["client", "server"], "plan order; the router stays simulated");
        let server = plan.nodes.iter().find(|n| n.name == "server").unwrap().addr;
        assert_eq!(p.execs[1].cmd, format!("iperf3 -c {server} -t 2"));
        assert_eq!(p.execs[1].start, SimDuration::from_millis(500));
        assert!(p.execs[0].background && !p.execs[1].background);
        assert_eq!((p.hosts[0].cc.as_str(), p.hosts[1].cc.as_str()), ("reno", "cubic"));
        assert_eq!((p.hosts[0].mtu, p.hosts[1].mtu), (1500, 1400), "the MTU of the host's own link");
        assert_eq!(p.hosts[0].tun, "ctemua1b2c30");
        assert!(p.hosts.iter().all(|h| h.tun.len() <= 15 && h.label.starts_with("ctemu-a1b2c3-42-")));
    }

    #[test]
    fn emu_plan_extra_exec_quoted_and_shell_last() {
        // {addr:ROUTER}: its address, and the router stays simulated
        let (mut cfg, plan) = load(WIRED);
        cfg.execs[1].cmd = "ping -c 1 {addr:r}".into();
        cfg.execs.remove(0);
        let p = plan_emu(&cfg, &plan, &[], None, "x", 1).unwrap();
        let r = plan.nodes.iter().find(|n| n.name == "r").unwrap().addr;
        assert_eq!(p.execs[0].cmd, format!("ping -c 1 {r}"));
        assert_eq!(p.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(), ["client"]);
        let (cfg, plan) = load(WIRED);
        let extra = [ExtraExec { node: "client".into(), argv: vec!["echo".into(), "it's {addr:client}".into()] }];
        let p = plan_emu(&cfg, &plan, &extra, Some("server"), "x", 1).unwrap();
        let client = plan.nodes.iter().find(|n| n.name == "client").unwrap().addr;
        assert_eq!(p.execs[2].cmd, format!("echo 'it'\\''s {client}'"));
        assert!(p.execs[3].interactive && p.execs[3].index == 3);
    }

    #[test]
    fn emu_plan_errors_name_key_value_and_expectation() {
        let (mut cfg, plan) = load(WIRED);
        cfg.execs[0].node = "nope".into();
        let e = plan_emu(&cfg, &plan, &[], None, "x", 1).unwrap_err();
        assert!(e.starts_with("exec[0].node: \"nope\" is not a node") && e.contains("client"), "{e}");
        let (mut cfg, plan) = load(WIRED);
        cfg.execs[0].node = "r".into();
        let e = plan_emu(&cfg, &plan, &[], None, "x", 1).unwrap_err();
        assert!(e.contains("is a router"), "{e}");
        let (mut cfg, plan) = load(WIRED);
        cfg.execs[1].cmd = "ping {addr:server".into();
        assert!(plan_emu(&cfg, &plan, &[], None, "x", 1).unwrap_err().contains("unclosed"));
        let (mut cfg, plan) = load(WIRED);
        cfg.emu.as_mut().unwrap().tcp_rmem = Some("1 2".into());
        assert!(plan_emu(&cfg, &plan, &[], None, "x", 1).unwrap_err().starts_with("emu.tcp_rmem: \"1 2\""));
    }

    #[test]
    fn emu_plan_refuses_simulated_flow_at_a_real_host() {
        let text = format!("{WIRED}\n[[flow]]\napp = \"bulk\"\nfrom = \"client\"\nto = \"server\"\n");
        let (cfg, plan) = load(&text);
        let e = plan_emu(&cfg, &plan, &[], None, "x", 1).unwrap_err();
        assert!(e.starts_with("flow[0].from: \"client\" is a real host"), "{e}");
    }

    /// Two paths of 10 and 20 Mbit/s from a phone to a server, as examples/emu-mptcp.toml.
    const TWO_PATHS: &str = r#"
duration = "5s"
[[node]]
name = "ap"
kind = "router"
[[node]]
name = "cell"
kind = "router"
[[node]]
name = "core"
kind = "router"
[[link]]
name = "wifi"
between = ["phone", "ap"]
rate = "20Mbps"
delay = "5ms"
mtu = 1400
[[link]]
name = "lte"
between = ["phone", "cell"]
rate = "10Mbps"
delay = "20ms"
[[link]]
between = ["ap", "core"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["cell", "core"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["core", "server"]
rate = "1Gbps"
delay = "1ms"
[[exec]]
node = "phone"
cmd = "mptcpize run iperf3 -c {addr:server}"
"#;

    #[test]
    fn emu_plan_multihomed_host_gets_a_device_per_interface_with_its_rules() {
        let (cfg, plan) = load(TWO_PATHS);
        let p = plan_emu(&cfg, &plan, &[], None, "a1b2c3", 1).unwrap();
        let phone = plan.nodes.iter().position(|n| n.name == "phone").unwrap();
        let h = p.hosts.iter().find(|h| h.name == "phone").unwrap();
        // the plan's interfaces, in its order: the first carries the node's address
        let want: Vec<(Ipv4, &str)> = plan.nodes[phone].ifaces.iter().map(|i| (i.addr, i.name.as_str())).collect();
        let got: Vec<(Ipv4, &str)> = h.tuns.iter().map(|t| (t.addr, t.iface.as_str())).collect();
        assert_eq!(got, want);
        assert_eq!(h.tuns.len(), 2);
        assert_eq!(h.tuns[0].addr, plan.nodes[phone].addr);
        assert_ne!(h.tuns[1].addr, h.tuns[0].addr, "each interface has its own address");
        assert_eq!((h.tuns[0].dev.as_str(), h.tuns[1].dev.as_str()), ("ctemua1b2c30", "ctemua1b2c30b"));
        let mtu_of = |name: &str| if name == "wifi" { 1400 } else { 1500 };
        assert!(h.tuns.iter().all(|t| t.mtu == mtu_of(&t.iface)), "{:?}", h.tuns);
        // the rules of the simulated host (iface.rs): from ADDR_k lookup k, default dev k
        let s = h.address_script();
        let t = &h.tuns[1];
        assert!(s.contains(&format!("ip route add default dev {}\n", h.tuns[0].dev)), "{s}");
        assert!(s.contains(&format!("ip route add default dev {} src {} table {}\n", t.dev, t.addr, t.table)), "{s}");
        assert!(s.contains(&format!("ip rule add from {} lookup {}\n", t.addr, t.table)), "{s}");
        assert!(s.contains(&format!("ip mptcp endpoint add {} dev {} subflow signal\n", t.addr, t.dev)), "{s}");
        assert!(!s.contains(&format!("endpoint add {} ", h.tuns[0].addr)), "no endpoint for the first address: {s}");
        // a host with one address keeps one device, no rule, no endpoint
        let srv = p.hosts.iter().find(|h| h.name == "server").unwrap();
        assert_eq!(srv.tuns.len(), 1);
        assert_eq!((srv.tuns[0].addr, srv.tuns[0].table), (srv.addr, 0));
        let s = srv.address_script();
        assert!(!s.contains("ip rule") && !s.contains("endpoint add") && s.contains("limits set subflows 8"), "{s}");
    }
}
