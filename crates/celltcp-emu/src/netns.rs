//! Real hosts as network namespaces, and the programs run in them; cleanup by the kernel's own
//! lifetime rules.
//!
//! Each host's namespace is held by a *holder* process, `unshare --net --pid --fork
//! --kill-child=SIGKILL` running `sleep infinity` under the argv[0] `ctemu-<run>-<pid>-<node>`:
//! no name is bind-mounted under `/run/netns`, so the namespace lives exactly as long as a process
//! is in it. The holder gets `PR_SET_PDEATHSIG=SIGKILL` (it dies with the emulator, `kill -9`
//! included); `--kill-child` then kills the namespace's PID 1, and the kernel kills every other
//! process of the PID namespace with it, so the programs started there (entered with `nsenter
//! --net --pid`) cannot outlive the run either. The TUN devices are not persistent: they vanish
//! when the emulator's file descriptors close, i.e. with the emulator. `--cleanup`
//! ([`cleanup_stale`]) kills holders whose emulator is gone and removes stray devices by prefix.
//!
//! Programs are started off the real-time loop: the loop posts a request ([`Namespaces::post`])
//! to a spawning thread, which starts the program with `posix_spawn` (glibc's `clone(CLONE_VM |
//! CLONE_VFORK)`: no copy of the emulator's page tables, which `fork` took up to 13 ms for, in the
//! loop's own turn) and hands back the child with the time it started ([`Namespaces::collect`]).
//! A program still dies with the emulator: `setpriv --pdeathsig KILL` asks for SIGKILL when the
//! spawning thread ends (it lives until [`Namespaces::end_all`]), and the namespace's death
//! kills everything in it.

use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::os;
use crate::setup::{EmuPlan, ExecSpec, HostSpec, NAME_PREFIX};

/// A real host: its namespace's holder and its TUN devices (`spec.tuns`' order).
pub struct Host {
    pub spec: HostSpec,
    pub tuns: Vec<File>,
    /// Whether its devices carry a `virtio_net_hdr` (segmentation offload, `gso.rs`).
    pub vnet: bool,
    holder: Child,
    /// The host-side pid of the namespace's PID 1 (`nsenter -t` target).
    pub ns_pid: u32,
}

/// A program run in a namespace.
pub struct Proc {
    pub spec: ExecSpec,
    child: Child,
    pub exit: Option<std::process::ExitStatus>,
    /// When it started (the spawning thread's clock once `posix_spawn` returned), on the run's
    /// clock.
    pub started_s: f64,
    pub ended_s: Option<f64>,
}

/// The namespaces and programs of one run; dropping it ends them all.
#[derive(Default)]
pub struct Namespaces {
    pub hosts: Vec<Host>,
    pub procs: Vec<Proc>,
    spawner: Option<Spawner>,
}

/// A program for the spawning thread to start: its command, ready but for the start.
struct SpawnReq {
    spec: ExecSpec,
    cmd: Command,
    outputs: Option<PathBuf>,
}

/// The spawning thread and its two channels.
struct Spawner {
    tx: Option<mpsc::Sender<SpawnReq>>,
    rx: mpsc::Receiver<(ExecSpec, io::Result<Child>, Instant)>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Requests posted and not yet collected.
    in_flight: usize,
}

impl Spawner {
    /// The thread, under `SCHED_FIFO` as the loop when it may (`os::set_realtime`: it starts a
    /// program as soon as asked on a loaded machine; the programs do not inherit the policy).
    fn start() -> io::Result<Spawner> {
        let (tx, req_rx) = mpsc::channel::<SpawnReq>();
        let (done_tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new().name("ctemu-spawn".into()).spawn(move || {
            os::set_realtime();
            for mut r in req_rx {
                let child = (|| {
                    if let Some(base) = &r.outputs {
                        r.cmd.stdout(File::create(base.with_extension("out"))?);
                        r.cmd.stderr(File::create(base.with_extension("err"))?);
                    }
                    r.cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot run setpriv and nsenter (util-linux): {e}")))
                })();
                if done_tx.send((r.spec, child, Instant::now())).is_err() {
                    break;
                }
            }
        })?;
        Ok(Spawner { tx: Some(tx), rx, thread: Some(thread), in_flight: 0 })
    }
}

fn run_checked(cmd: &mut Command, what: &str) -> io::Result<()> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| io::Error::new(e.kind(), format!("{what}: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(io::Error::other(format!("{what}: {}", err.trim())));
    }
    Ok(())
}

fn in_ns(pid: u32, script: &str) -> Command {
    let mut c = Command::new("nsenter");
    c.args(["-t", &pid.to_string(), "-n", "--", "sh", "-ec", script]);
    c
}

impl Namespaces {
    /// Creates every host of `plan`: holder, namespace settings, TUN device, address, route.
    pub fn create(plan: &EmuPlan) -> io::Result<Namespaces> {
        let mut ns = Namespaces::default();
        for h in &plan.hosts {
            allow_cc(&h.cc)?;
        }
        for h in &plan.hosts {
            let mut cmd = Command::new("unshare");
            cmd.args(["--net", "--pid", "--fork", "--kill-child=SIGKILL", "bash", "-c", &format!("exec -a {} sleep infinity", h.label)]);
            cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            os::die_with_parent(&mut cmd, true);
            let mut holder = cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot run unshare (util-linux): {e}")))?;
            let ns_pid = match inner_pid(holder.id()) {
                Ok(p) => p,
                Err(e) => {
                    let _ = holder.kill();
                    let _ = holder.wait();
                    return Err(e);
                }
            };
            // the TUN devices are created here and moved in; their files stay with the emulator
            let mut tuns = Vec::with_capacity(h.tuns.len());
            let mut vnet = plan.offload;
            for t in &h.tuns {
                match os::open_tun(&t.dev, vnet) {
                    Ok((f, v)) => {
                        vnet = v;
                        tuns.push(f);
                    }
                    Err(e) => {
                        let _ = holder.kill();
                        let _ = holder.wait();
                        return Err(io::Error::new(e.kind(), format!("cannot create TUN device {}: {e}", t.dev)));
                    }
                }
            }
            let host = Host { spec: h.clone(), tuns, vnet, holder, ns_pid };
            ns.hosts.push(host);
            let mut script = String::from(
                "ip link set lo up\n\
                 echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6\n\
                 echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6\n\
                 echo 1 > /proc/sys/net/ipv4/tcp_no_metrics_save\n\
                 echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter\n\
                 echo 0 > /proc/sys/net/ipv4/conf/default/rp_filter\n",
            );
            script.push_str(&format!(
                "echo {cc} > /proc/sys/net/ipv4/tcp_congestion_control || {{ echo \"emu.cc: {cc:?} is not a congestion control of this kernel (expected one of: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control))\" >&2; exit 1; }}\n",
                cc = h.cc
            ));
            script.push_str("if [ -e /proc/sys/net/mptcp/enabled ]; then echo 1 > /proc/sys/net/mptcp/enabled; fi\n");
            if let Some(v) = &plan.tcp_rmem {
                script.push_str(&format!("echo '{v}' > /proc/sys/net/ipv4/tcp_rmem\n"));
            }
            if let Some(v) = &plan.tcp_wmem {
                script.push_str(&format!("echo '{v}' > /proc/sys/net/ipv4/tcp_wmem\n"));
            }
            run_checked(&mut in_ns(ns_pid, &script), &format!("setting up the namespace of {}", h.name))?;
            for t in &h.tuns {
                run_checked(Command::new("ip").args(["link", "set", "dev", &t.dev, "netns", &ns_pid.to_string()]), &format!("moving {} into its namespace", t.dev))?;
            }
            run_checked(&mut in_ns(ns_pid, &h.address_script()), &format!("addressing {}", h.name))?;
        }
        Ok(ns)
    }

    /// Asks the spawning thread (module doc) to start `spec` in its host's namespace now;
    /// stdout/stderr to `exec_dir/<index>-<node>.out/.err` (the terminal for an interactive
    /// shell). The program joins [`Namespaces::procs`] when [`Namespaces::collect`] finds it
    /// started. The thread starts with the first request.
    pub fn post(&mut self, spec: &ExecSpec, exec_dir: &Path) -> io::Result<()> {
        let h = &self.hosts[spec.host];
        // no pre_exec closure: Rust's `Command` then uses posix_spawn (vfork-like), not fork
        let mut cmd = Command::new("setpriv");
        cmd.args(["--pdeathsig", "KILL", "--", "nsenter", "-t", &h.ns_pid.to_string(), "-n", "-p", "--", "sh", "-c", &spec.cmd]);
        cmd.env("CELLTCP_EMU_NODE", &h.spec.name);
        let mut outputs = None;
        if !spec.interactive {
            outputs = Some(exec_dir.join(format!("{}-{}", spec.index, h.spec.name)));
            cmd.stdin(Stdio::null());
            // its own process group: the terminal's Ctrl-C reaches only the emulator, which
            // then ends the programs in order (`end_all` signals the group)
            cmd.process_group(0);
        }
        if self.spawner.is_none() {
            self.spawner = Some(Spawner::start()?);
        }
        let s = self.spawner.as_mut().unwrap();
        s.tx.as_ref().unwrap().send(SpawnReq { spec: spec.clone(), cmd, outputs }).map_err(|_| io::Error::other("the spawning thread has ended"))?;
        s.in_flight += 1;
        Ok(())
    }

    /// Takes the programs the spawning thread has started (their start times on the clock
    /// that started at `t0`); with `wait`, until every request posted is answered. A program
    /// that could not start is an error.
    pub fn collect(&mut self, t0: Instant, wait: bool) -> io::Result<()> {
        let Some(s) = self.spawner.as_mut() else { return Ok(()) };
        while s.in_flight > 0 {
            let got = if wait { s.rx.recv_timeout(Duration::from_secs(5)).ok() } else { s.rx.try_recv().ok() };
            let Some((spec, child, at)) = got else { break };
            s.in_flight -= 1;
            let started_s = at.saturating_duration_since(t0).as_secs_f64();
            self.procs.push(Proc { spec, child: child?, exit: None, started_s, ended_s: None });
        }
        Ok(())
    }

    /// Programs asked for and not yet collected.
    pub fn starting(&self) -> usize {
        self.spawner.as_ref().map_or(0, |s| s.in_flight)
    }

    /// Notes which programs have exited; returns true when every foreground program started so
    /// far has.
    pub fn reap(&mut self, now_s: f64) -> bool {
        let mut all = true;
        for p in &mut self.procs {
            if p.exit.is_none() {
                if let Ok(Some(st)) = p.child.try_wait() {
                    p.exit = Some(st);
                    p.ended_s = Some(now_s);
                }
            }
            if !p.spec.background && p.exit.is_none() {
                all = false;
            }
        }
        all
    }

    /// Ends the run's programs (SIGTERM to each program's process group, `grace` to exit, then
    /// SIGKILL of the namespaces: everything in them dies) and the namespaces.
    pub fn end_all(&mut self, grace: Duration) {
        // the programs being started join the others first (the clock does not matter now)
        let _ = self.collect(Instant::now(), true);
        for p in &self.procs {
            if p.exit.is_none() {
                let pid = p.child.id() as i32;
                os::kill(if p.spec.interactive { pid } else { -pid }, libc::SIGTERM);
            }
        }
        let t0 = Instant::now();
        while self.procs.iter().any(|p| p.exit.is_none()) && t0.elapsed() < grace {
            self.reap(f64::NAN);
            std::thread::sleep(Duration::from_millis(5));
        }
        for h in &mut self.hosts {
            let _ = h.holder.kill();
            let _ = h.holder.wait();
        }
        for p in &mut self.procs {
            if p.exit.is_none() {
                let _ = p.child.kill();
                p.exit = p.child.wait().ok();
            }
        }
        self.hosts.clear(); // closes the TUN files: the devices go
        // the spawning thread ends last: its end SIGKILLs what it started (`--pdeathsig`)
        if let Some(mut s) = self.spawner.take() {
            s.tx = None;
            if let Some(t) = s.thread.take() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        if !self.hosts.is_empty() || self.spawner.is_some() || self.procs.iter().any(|p| p.exit.is_none()) {
            self.end_all(Duration::from_millis(200));
        }
    }
}

/// A namespace other than the initial one may only default to a congestion control of the
/// host's `net.ipv4.tcp_allowed_congestion_control` (the kernel's `tcp_set_default_congestion_control`
/// refuses others with EPERM); adds `cc` to that list when the kernel has it. This is the one
/// host setting an emulation changes (it only lets unprivileged sockets choose `cc` too).
fn allow_cc(cc: &str) -> io::Result<()> {
    const ALLOWED: &str = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";
    const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
    let allowed = std::fs::read_to_string(ALLOWED)?;
    if allowed.split_whitespace().any(|c| c == cc) {
        return Ok(());
    }
    let available = std::fs::read_to_string(AVAILABLE).unwrap_or_default();
    if !available.split_whitespace().any(|c| c == cc) {
        // try loading its module (tcp_<cc>), as `sysctl` would on first use
        let _ = Command::new("modprobe").arg(format!("tcp_{cc}")).stderr(Stdio::null()).status();
    }
    let available = std::fs::read_to_string(AVAILABLE).unwrap_or_default();
    if !available.split_whitespace().any(|c| c == cc) {
        return Err(io::Error::other(format!("emu.cc: {cc:?} is not a congestion control of this kernel (expected one of: {})", available.trim())));
    }
    std::fs::write(ALLOWED, format!("{} {cc}", allowed.trim()))
}

/// The pid of the child `unshare --fork` made (PID 1 of the new namespaces).
fn inner_pid(unshare_pid: u32) -> io::Result<u32> {
    let path = format!("/proc/{unshare_pid}/task/{unshare_pid}/children");
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        if let Ok(s) = std::fs::read_to_string(&path) {
            if let Some(p) = s.split_whitespace().next().and_then(|x| x.parse().ok()) {
                return Ok(p);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Err(io::Error::other("unshare did not start its namespace in 5 s"))
}

/// What `--cleanup` removed.
#[derive(Debug, Default)]
pub struct Cleaned {
    pub processes: Vec<String>,
    pub devices: Vec<String>,
    pub netns: Vec<String>,
}

/// Removes what dead runs left: holders (`ctemu-<run>-<pid>-<node>`) whose emulator `pid` no
/// longer runs, with their namespaces' processes (killing the `unshare` parent kills them all),
/// TUN devices and named namespaces whose names start with `ctemu`. A live run is left alone.
pub fn cleanup_stale() -> io::Result<Cleaned> {
    let mut c = Cleaned::default();
    for e in std::fs::read_dir("/proc")? {
        let Ok(e) = e else { continue };
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let argv0 = String::from_utf8_lossy(cmdline.split(|&b| b == 0).next().unwrap_or_default()).into_owned();
        let Some(rest) = argv0.strip_prefix(&format!("{NAME_PREFIX}-")) else { continue };
        let emu_pid: Option<i32> = rest.split('-').nth(1).and_then(|p| p.parse().ok());
        if emu_pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists() && is_emulator(p)) {
            continue;
        }
        // its parent is the `unshare` holding the namespaces; kill both
        let ppid = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| s.rsplit(')').next().and_then(|r| r.split_whitespace().nth(1)).and_then(|p| p.parse::<i32>().ok()));
        if let Some(pp) = ppid.filter(|&p| p > 1) {
            os::kill(pp, libc::SIGKILL);
        }
        os::kill(pid, libc::SIGKILL);
        c.processes.push(format!("{pid} {argv0}"));
    }
    if let Ok(out) = Command::new("ip").args(["-o", "link", "show"]).output() {
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some(name) = line.split(": ").nth(1).map(|n| n.split('@').next().unwrap_or(n)) {
                if name.starts_with(NAME_PREFIX) && Command::new("ip").args(["link", "del", name]).status().is_ok_and(|s| s.success()) {
                    c.devices.push(name.to_string());
                }
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir("/run/netns") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(NAME_PREFIX) && Command::new("ip").args(["netns", "del", &name]).status().is_ok_and(|s| s.success()) {
                c.netns.push(name);
            }
        }
    }
    Ok(c)
}

/// Whether process `pid` looks like a running emulator (any process that is not itself a
/// holder: a pid reused by an unrelated program keeps a stale run alive until it exits, which
/// errs on the side of not killing a live run).
fn is_emulator(pid: i32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.starts_with(NAME_PREFIX.as_bytes()))
}
