//! # celltcp-emu
//!
//! `celltcp emu`: the same [`Simulation`] as `celltcp run`, driven by a wall clock, with some
//! hosts real: each a Linux network namespace with a TUN device, where the kernel's own TCP (and
//! MPTCP) and unmodified programs (`iperf3`, `ping`, `curl`) run. The simulation carries their
//! packets through the modelled links, queues, loss, traces and LTE stack; the scenario's other
//! flows keep running as simulated cross traffic. Linux only; needs root (CAP_NET_ADMIN).
//!
//! - [`setup`] (sans-IO): which hosts are real, names, MTUs, kernel settings, the commands.
//! - [`lateness`] (sans-IO): the loop's lateness histogram.
//! - [`gso`] (sans-IO): the TUN devices' segmentation offload, super-packets cut into MSS-sized ones.
//! - [`netns`]: namespaces, TUN devices and programs, and cleanup after any exit.
//! - [`turn`] (sans-IO): what one turn of the loop may read, and the sleep its real-time thread owes.
//! - [`os`]: the system calls (the only unsafe code).
//! - [`emulate`] (here): the real-time loop.
//!
//! # The loop
//!
//! Simulated time is wall time since the loop started. Each turn: post the commands that are
//! due to the spawning thread (`netns`: they start off the loop), run every event due (`step_until(wall now)`), write the packets handed to real hosts to
//! their TUN devices, read what the kernels sent and inject it at the current wall time, then
//! sleep in `ppoll(2)` on the TUN devices until the next event, a command's start or a 10 ms
//! check of the programs, whichever is first; below `emu.busy_poll` (50 µs) it spins instead,
//! since waking from a sleep costs tens of microseconds. The run ends at `duration`, when every
//! foreground command has exited, or on SIGINT/SIGTERM. The loop's thread runs under
//! `SCHED_FIFO` when it may (`os::set_realtime`; programs it starts do not inherit it); then the programs get SIGTERM, one
//! second, and the namespaces are killed.

pub mod gso;
pub mod lateness;
pub mod netns;
pub mod os;
pub mod setup;
pub mod turn;

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use celltcp_engine::SimTime;
use celltcp_scenario::{NodeId, RunOutput, Simulation};

pub use setup::ExtraExec;

/// Options of one emulation run.
#[derive(Clone, Debug, Default)]
pub struct EmuOptions {
    pub seed: Option<u64>,
    pub overrides: Vec<String>,
    /// Where the run's files go (time series, pcap, `exec/`).
    pub out_dir: PathBuf,
    /// Where relative paths of the scenario are resolved.
    pub base_dir: Option<PathBuf>,
    /// `--exec NODE -- CMD...`
    pub extra: Vec<ExtraExec>,
    /// `--shell NODE`
    pub shell: Option<String>,
}

/// The one-line refusal without root.
pub const NEED_ROOT: &str = "celltcp emu needs root (CAP_NET_ADMIN) to create network namespaces and TUN devices: run it as root (e.g. with sudo)";

/// Runs the scenario `text` in real time (module doc). The output is `celltcp run`'s, with an
/// `emu` section in the summary (lateness, packets, programs) and the programs' outputs listed
/// in `files`.
pub fn emulate(text: &str, opts: &EmuOptions) -> Result<RunOutput, String> {
    if !os::is_root() {
        return Err(NEED_ROOT.into());
    }
    let (cfg, plan) = celltcp_scenario::load_config(text, &opts.overrides, opts.seed, opts.base_dir.as_deref()).map_err(|e| e.to_string())?;
    let pid = std::process::id();
    let run_id = format!("{:06x}", (u64::from(pid) ^ (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64) >> 10)) & 0xff_ffff);
    let eplan = setup::plan_emu(&cfg, &plan, &opts.extra, opts.shell.as_deref(), &run_id, pid)?;
    if eplan.hosts.is_empty() {
        return Err("no real host: add an [[exec]] entry, --exec NODE -- CMD or --shell NODE (otherwise use celltcp run)".into());
    }
    let mut sim = Simulation::new(&cfg, plan, Some(&opts.out_dir)).map_err(|e| e.to_string())?;
    let exec_dir = opts.out_dir.join("exec");
    std::fs::create_dir_all(&exec_dir).map_err(|e| format!("{}: {e}", exec_dir.display()))?;
    let signals = os::StopSignals::install(opts.shell.is_some());
    let mut ns = netns::Namespaces::create(&eplan).map_err(|e| e.to_string())?;
    let offload = ns.hosts.first().is_some_and(|h| h.vnet);
    let mut host_of_node = vec![usize::MAX; eplan.hosts.iter().map(|h| h.node + 1).max().unwrap_or(0)];
    for (i, h) in eplan.hosts.iter().enumerate() {
        sim.set_external(NodeId(h.node));
        host_of_node[h.node] = i;
    }
    // back to the normal policy however the loop ends (a panic included)
    struct Realtime(bool);
    impl Drop for Realtime {
        fn drop(&mut self) {
            if self.0 {
                os::set_normal();
            }
        }
    }
    let rt = Realtime(os::set_realtime());
    let realtime = rt.0;
    let stats = run_loop(&mut sim, &mut ns, &eplan, &host_of_node, &exec_dir, &signals, realtime);
    drop(rt);
    let stats = stats?;
    ns.end_all(Duration::from_secs(1));
    let stopped_by = signals.stopped();
    drop(signals);
    let procs: Vec<serde_json::Value> = ns
        .procs
        .iter()
        .map(|p| {
            use std::os::unix::process::ExitStatusExt;
            serde_json::json!({
                "index": p.spec.index,
                "node": eplan.hosts[p.spec.host].name,
                "cmd": p.spec.cmd,
                "background": p.spec.background,
                "due_s": p.spec.start.as_secs_f64(),
                "start_s": p.started_s,
                "end_s": p.ended_s.filter(|x| x.is_finite()),
                "exit_code": p.exit.and_then(|s| s.code()),
                "signal": p.exit.and_then(|s| s.signal()),
            })
        })
        .collect();
    let (raw_bytes, raw_peak, raw_evicted) = sim.raw_store_stats();
    let mut out = sim.into_output().map_err(|e| e.to_string())?;
    for p in &ns.procs {
        if !p.spec.interactive {
            let name = format!("{}-{}", p.spec.index, eplan.hosts[p.spec.host].name);
            out.files.push(format!("exec/{name}.out"));
            out.files.push(format!("exec/{name}.err"));
        }
    }
    let hosts: Vec<serde_json::Value> = eplan
        .hosts
        .iter()
        .map(|h| {
            let ifaces: Vec<serde_json::Value> =
                h.tuns.iter().map(|t| serde_json::json!({"iface": t.iface, "addr": t.addr.to_string(), "mtu": t.mtu, "device": t.dev})).collect();
            serde_json::json!({"node": h.name, "addr": h.addr.to_string(), "mtu": h.mtu, "cc": h.cc, "device": h.tun, "devices": ifaces})
        })
        .collect();
    let emu = serde_json::json!({
        "run_id": eplan.run_id,
        "realtime": realtime,
        "ended_by": match stopped_by { Some(s) => format!("signal {s}"), None => stats.ended_by.to_string() },
        "lateness": stats.events.to_json(),
        "delivery_lateness": stats.deliveries.to_json(),
        "worst_steps": stats.worst.to_json(),
        "packets_in": stats.pkts_in,
        "bytes_in": stats.bytes_in,
        "packets_out": stats.pkts_out,
        "bytes_out": stats.bytes_out,
        "packets_refused": stats.refused,
        "packets_expired": stats.expired,
        "write_errors": stats.write_errors,
        "offload": offload,
        "reads": stats.reads,
        "writes": stats.writes,
        "forced_sleeps": stats.forced_sleeps,
        "gso_writes": offload && eplan.gso_writes,
        "raw_store_bytes": raw_bytes,
        "raw_store_peak_bytes": raw_peak,
        "raw_store_evicted": raw_evicted,
        "hosts": hosts,
        "exec": procs,
    });
    if let Some(m) = out.summary.as_object_mut() {
        m.insert("emu".into(), emu);
    }
    Ok(out)
}

/// What the loop measured.
#[derive(Default)]
struct LoopStats {
    events: lateness::Lateness,
    deliveries: lateness::Lateness,
    /// The latest steps with their context.
    worst: lateness::Worst,
    pkts_in: u64,
    bytes_in: u64,
    pkts_out: u64,
    bytes_out: u64,
    refused: u64,
    expired: u64,
    write_errors: u64,
    /// Reads of devices with offload (each one packet or a super-packet).
    reads: u64,
    /// Device writes (each one packet or, with offload, a GSO train of several).
    writes: u64,
    /// Sleeps the real-time budget imposed (module turn).
    forced_sleeps: u64,
    ended_by: &'static str,
}

fn run_loop(
    sim: &mut Simulation,
    ns: &mut netns::Namespaces,
    eplan: &setup::EmuPlan,
    host_of_node: &[usize],
    exec_dir: &std::path::Path,
    signals: &os::StopSignals,
    realtime: bool,
) -> Result<LoopStats, String> {
    let mut st = LoopStats { worst: lateness::Worst::new(WORST_STEPS), ..LoopStats::default() };
    let mut pending: Vec<&setup::ExecSpec> = eplan.execs.iter().collect();
    pending.sort_by_key(|e| (e.start, e.index));
    pending.reverse(); // pop() gives the next
    let has_foreground = eplan.execs.iter().any(|e| !e.background);
    let fds: Vec<_> = ns.hosts.iter().flat_map(|h| h.tuns.iter().map(|t| t.as_raw_fd())).collect();
    let mut ready = Vec::with_capacity(fds.len());
    // a read of a device with offload holds a virtio_net_hdr and up to 64 KB of super-packet
    let mut buf = vec![0u8; 65_536 + gso::VNET_HDR_LEN + 256];
    let mut seg = Vec::with_capacity(65_536);
    // one coalescer per device (hosts' devices in order, from first_tun[host])
    let mut first_tun = Vec::with_capacity(ns.hosts.len());
    let mut n_tuns = 0;
    for h in &ns.hosts {
        first_tun.push(n_tuns);
        n_tuns += h.tuns.len();
    }
    let mut co: Vec<gso::Coalescer> = (0..n_tuns).map(|_| gso::Coalescer::default()).collect();
    let mut wst = WriteStats::default();
    let busy = Duration::from_nanos(eplan.busy_poll.as_nanos());
    let end = sim.end();
    let t0 = Instant::now();
    let clock = |t0: &Instant| SimTime::from_nanos(t0.elapsed().as_nanos() as u64);
    let mut next_reap = SimTime::ZERO;
    // the previous turn, for the worst steps' trace
    let mut prev = lateness::Step::default();
    let mut prev_end = 0u64;
    let mut nivcsw = os::involuntary_switches();
    // the devices in read order (host, interface), and the one the next turn reads first
    let devs: Vec<(usize, usize)> = ns.hosts.iter().enumerate().flat_map(|(i, h)| (0..h.tuns.len()).map(move |k| (i, k))).collect();
    let mut next_dev = 0;
    // the sleep a real-time thread owes the kernel (module turn); none without SCHED_FIFO
    let mut sleep_budget = if realtime { os::rt_bandwidth().and_then(|(r, p)| turn::SleepBudget::for_rt_bandwidth(r, p, turn::WINDOW_NS)) } else { None };
    loop {
        let now = clock(&t0);
        let t_spawn = t0.elapsed().as_nanos() as u64;
        // programs due are posted to the spawning thread (`netns`), which starts them off the loop
        while pending.last().is_some_and(|e| SimTime::ZERO + e.start <= now) {
            let e = pending.pop().unwrap();
            ns.post(e, exec_dir).map_err(|e| e.to_string())?;
        }
        ns.collect(t0, false).map_err(|e| e.to_string())?;
        if let Some(t) = sim.next_event_time().filter(|&t| t <= now) {
            let late = now.as_nanos() - t.as_nanos();
            st.events.record(late);
            if st.worst.wants(late) {
                let n = os::involuntary_switches();
                let gap_ns = now.as_nanos().saturating_sub(prev_end);
                st.worst.offer(lateness::Step { at_ns: now.as_nanos(), late_ns: late, gap_ns, preempted: n - nivcsw, ..prev });
                nivcsw = n;
            }
        }
        let t_step = t0.elapsed().as_nanos() as u64;
        prev = lateness::Step { prev_spawn_ns: t_step.saturating_sub(t_spawn), prev_events: sim.step_until(now), ..lateness::Step::default() };
        let t_write = t0.elapsed().as_nanos() as u64;
        prev.prev_step_ns = t_write - t_step;
        let written_before = wst.pkts;
        let hosts = &mut ns.hosts;
        st.expired += sim.drain_external(|t, node, bytes| {
            let h = &mut hosts[host_of_node[node.0]];
            // a multihomed host: the device of the interface whose address the packet is for
            let k = if h.tuns.len() == 1 || bytes.len() < 20 {
                0
            } else {
                let dst = celltcp_net::Ipv4::new(bytes[16], bytes[17], bytes[18], bytes[19]);
                h.spec.tuns.iter().position(|t| t.addr == dst).unwrap_or(0)
            };
            if h.vnet {
                // segments of one flow that arrive in this turn go out as one GSO write
                let tun = &mut h.tuns[k];
                let out = &mut wst;
                let c = &mut co[first_tun[host_of_node[node.0]] + k];
                c.push(bytes, &mut |b: &[u8], n: u16, wire: usize| out.write(tun, b, n, wire));
                if !eplan.gso_writes {
                    c.flush(&mut |b: &[u8], n: u16, wire: usize| out.write(tun, b, n, wire));
                }
            } else {
                wst.write(&mut h.tuns[k], bytes, 1, bytes.len());
            }
            st.deliveries.record(t0.elapsed().as_nanos() as u64 - t.as_nanos().min(t0.elapsed().as_nanos() as u64));
        });
        for (i, h) in ns.hosts.iter_mut().enumerate() {
            for (k, tun) in h.tuns.iter_mut().enumerate() {
                let out = &mut wst;
                co[first_tun[i] + k].flush(&mut |b: &[u8], n: u16, wire: usize| out.write(tun, b, n, wire));
            }
        }
        let t_read = t0.elapsed().as_nanos() as u64;
        prev.prev_write_ns = t_read - t_write;
        prev.prev_written = wst.pkts - written_before;
        let read_before = st.pkts_in + st.refused;
        // at most turn::READ_BUDGET packets per turn, so that a burst does not hold up the
        // events due (module turn)
        let hosts = &mut ns.hosts;
        let got = turn::read_round(devs.len(), &mut next_dev, turn::READ_BUDGET, |d| {
            let (i, k) = devs[d];
            let h = &mut hosts[i];
            match h.tuns[k].read(&mut buf) {
                Ok(n) => {
                    let at = clock(&t0).max(sim.now());
                    let node = NodeId(h.spec.node);
                    st.reads += u64::from(h.vnet);
                    let before = st.pkts_in + st.refused;
                    let mut inject = |p: &[u8]| match sim.inject_raw(node, p, at) {
                        Ok(()) => {
                            st.pkts_in += 1;
                            st.bytes_in += p.len() as u64;
                        }
                        Err(_) => st.refused += 1,
                    };
                    if h.vnet {
                        // a super-packet: cut into the packets the link carries
                        if gso::split(&mut buf[..n], &mut seg, &mut inject).is_err() {
                            st.refused += 1;
                        }
                    } else {
                        inject(&buf[..n]);
                    }
                    Ok(Some((st.pkts_in + st.refused - before).max(1) as usize))
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(Some(0)),
                Err(e) => Err(format!("reading {}: {e}", h.spec.tuns[k].dev)),
            }
        })? > 0;
        prev_end = t0.elapsed().as_nanos() as u64;
        prev.prev_read_ns = prev_end - t_read;
        prev.prev_read = st.pkts_in + st.refused - read_before;
        if now >= end {
            st.ended_by = "duration";
            break;
        }
        if signals.stopped().is_some() {
            st.ended_by = "signal";
            break;
        }
        if now >= next_reap {
            next_reap = now + celltcp_engine::SimDuration::from_millis(10);
            nivcsw = os::involuntary_switches();
            let fg_done = ns.reap(now.as_secs_f64());
            if has_foreground && pending.iter().all(|e| e.background) && ns.starting() == 0 && fg_done {
                st.ended_by = "commands exited";
                break;
            }
        }
        if let Some(b) = sleep_budget.as_mut() {
            let owed = b.due(t0.elapsed().as_nanos() as u64);
            if owed > 0 {
                st.forced_sleeps += 1;
                std::thread::sleep(Duration::from_nanos(owed));
                prev.asked_ns = owed;
                continue;
            }
        }
        if got {
            continue;
        }
        let mut next = sim.next_event_time().unwrap_or(end).min(end).min(next_reap);
        if let Some(e) = pending.last() {
            next = next.min(SimTime::ZERO + e.start);
        }
        let wall = clock(&t0);
        let wait = Duration::from_nanos(next.as_nanos().saturating_sub(wall.as_nanos()));
        prev.asked_ns = wait.as_nanos() as u64;
        if wait > busy {
            let t = Instant::now();
            os::wait_readable(&fds, Some(wait - busy), &mut ready).map_err(|e| e.to_string())?;
            if let Some(b) = sleep_budget.as_mut() {
                b.slept(t.elapsed().as_nanos() as u64);
            }
        } else if !wait.is_zero() {
            os::wait_readable(&fds, None, &mut ready).map_err(|e| e.to_string())?;
        }
    }
    st.pkts_out = wst.pkts;
    st.bytes_out = wst.bytes;
    st.writes = wst.writes;
    st.write_errors = wst.errors;
    Ok(st)
}

/// How many of the latest steps the summary lists (`emu.worst_steps`).
const WORST_STEPS: usize = 8;

/// Counts of the device writes.
#[derive(Default)]
struct WriteStats {
    pkts: u64,
    bytes: u64,
    writes: u64,
    errors: u64,
}

impl WriteStats {
    /// Writes `b` (carrying `n` wire packets of `wire` bytes) to `tun`.
    fn write(&mut self, tun: &mut std::fs::File, b: &[u8], n: u16, wire: usize) {
        match tun.write(b) {
            // a TUN device takes the whole packet or none of it (`tun_get_user`)
            Ok(w) if w == b.len() => {
                self.pkts += u64::from(n);
                self.bytes += wire as u64;
                self.writes += 1;
            }
            _ => self.errors += 1,
        }
    }
}
