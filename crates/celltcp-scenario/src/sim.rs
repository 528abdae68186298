//! The public run loop: a [`Simulation`] built from a validated [`Plan`], driven either to its
//! end in one call ([`Simulation::run`]) or in pieces ([`Simulation::step_until`]) by a virtual
//! or a wall clock, in the manner of nexosim's `Simulation::step_until`.
//!
//! # Stepping contract
//!
//! Events pop in `(time, insertion seq)` order (see `celltcp_engine::queue`). `step_until(t)`
//! runs every event whose time is `<= t` (and `<= end`), then moves the clock to `t`; it pushes no
//! event of its own. So any sequence of steps runs exactly the same events in exactly the same
//! order as one [`Simulation::run`], and the results are bit-identical (tested below and in
//! `tests/stepping.rs`). Nothing in the loop assumes it runs to the end in one call: sampling is
//! an ordinary event, pcap files are flushed by [`Simulation::finish`] (which [`Simulation::run`]
//! calls), and [`Simulation::into_output`] reports the run as of [`Simulation::now`].
//!
//! # Injection
//!
//! [`Simulation::inject`] hands a packet from outside (an emulator's tap, a test) to a node at
//! a time not before `now`, as if a device had delivered it there: the node forwards it by its
//! routes or delivers it locally.
//!
//! # External nodes (emulation)
//!
//! A node marked with [`Simulation::set_external`] is a real host (a network namespace behind a
//! TUN device): packets addressed to it are not delivered to celltcp's own stack but kept, with
//! their arrival time, until [`Simulation::drain_external`] hands them out as wire bytes.
//! [`Simulation::inject_raw`] brings a real IPv4 packet in; its bytes are kept in the world's
//! [`celltcp_net::raw::RawStore`] and it travels as a [`celltcp_net::Body::Raw`] packet (see
//! `celltcp_net::raw`). A packet of a simulated app that reaches an external node leaves with
//! its real headers and a zero payload (as pcap writes it).

use std::path::Path;
use std::time::Instant;

use celltcp_apps::app::{AnyApp, SockId};
use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::Packet;

use crate::config::Config;
use crate::error::ScenarioError;
use crate::output::RunOutput;
use crate::plan::Plan;
use crate::world::{Ev, World};

/// An app of the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AppId(pub u32);

/// A node of the topology, by index (the order of [`Plan::nodes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeId(pub usize);

/// A simulation that can be run to its end or stepped.
/// One iperf interval report of a flow, as [`Simulation::new_intervals`] hands it out: the
/// report, with its times as iperf3 prints them.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveInterval {
    pub flow: String,
    pub start_s: f64,
    pub end_s: f64,
    pub report: celltcp_apps::interval::IntervalReport,
}

pub struct Simulation {
    world: World,
    config: serde_json::Value,
    seed: u64,
    /// The clock: the time up to which every event has run.
    now: SimTime,
    /// Wall-clock seconds spent inside the event loop so far.
    wall_s: f64,
    finished: bool,
}

impl Simulation {
    /// Builds the topology of `plan` (validated from `cfg`); files (pcap) go to `out_dir`.
    pub fn new(cfg: &Config, plan: Plan, out_dir: Option<&Path>) -> Result<Simulation, ScenarioError> {
        let config = serde_json::to_value(cfg.as_run(&plan)).map_err(|e| ScenarioError::new("", e.to_string()))?;
        let world = World::build(cfg, plan, cfg.seed, out_dir)?;
        Ok(Simulation { world, config, seed: cfg.seed, now: SimTime::ZERO, wall_s: 0.0, finished: false })
    }

    /// Parses, validates and builds a scenario, as [`crate::run`] does.
    pub fn from_text(text: &str, overrides: &[String], opts: &crate::RunOptions) -> Result<Simulation, ScenarioError> {
        let (cfg, plan, _) = crate::load(text, overrides, opts.seed, opts.base_dir.as_deref())?;
        Simulation::new(&cfg, plan, opts.out_dir.as_deref())
    }

    /// The time up to which every event has run.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// The end of the run (the scenario's `duration`).
    pub fn end(&self) -> SimTime {
        self.world.end
    }

    /// The time of the next event, or `None` when no event is left before the end.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.world.q.peek_time().filter(|&t| t <= self.world.end)
    }

    /// Events run so far.
    pub fn events_processed(&self) -> u64 {
        self.world.events_processed()
    }

    /// Socket flushes so far (a socket's TCP output sent and its timer re-armed, after the
    /// socket changed or its app used it; glue.rs): the stack's servicing cost, which tests
    /// compare against the events that needed it.
    pub fn sock_flushes(&self) -> u64 {
        self.world.stack.flushes
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.world.nodes.iter().position(|n| n.name == name).map(NodeId)
    }

    /// The address of a node.
    pub fn node_addr(&self, n: NodeId) -> celltcp_net::Ipv4 {
        self.world.nodes[n.0].addr
    }

    /// Runs every event up to `t` (at most the end) and moves the clock there. Returns the
    /// number of events run. A `t` before [`Simulation::now`] runs nothing.
    pub fn step_until(&mut self, t: SimTime) -> u64 {
        let t = t.min(self.world.end);
        let t0 = Instant::now();
        let before = self.world.events_processed();
        while let Some(at) = self.world.q.peek_time() {
            if at > t {
                break;
            }
            let (now, ev) = self.world.q.pop().unwrap();
            self.world.dispatch(now, ev);
        }
        // real fragments that waited out `ipfrag_time` for the rest of their datagram
        self.world.raw_frag.expire(t);
        self.now = self.now.max(t);
        self.wall_s += t0.elapsed().as_secs_f64();
        self.world.events_processed() - before
    }

    /// Runs for `d` of simulated time from now.
    pub fn step(&mut self, d: SimDuration) -> u64 {
        self.step_until(self.now + d)
    }

    /// The iperf interval reports completed since `cursors` (one position per flow, grown as
    /// needed and advanced past what is returned): what `iperf3` prints as it goes, for live
    /// output while a long run proceeds. Times are seconds since the flow's test started, or
    /// since its omitted part (`omit`, iperf3 -O) ended for the intervals after it.
    pub fn new_intervals(&self, cursors: &mut Vec<usize>) -> Vec<LiveInterval> {
        let flows = &self.world.flows;
        cursors.resize(flows.len(), 0);
        let mut out = Vec::new();
        for (i, fl) in flows.iter().enumerate() {
            let Some(mt) = &fl.meter else { continue };
            for r in &mt.reports[cursors[i].min(mt.reports.len())..] {
                // as iperf3 -O: the clock restarts at 0 when the omitted part ends
                let base = if r.omitted { fl.start } else { mt.omit_until.max(fl.start) };
                out.push(LiveInterval {
                    flow: fl.name.clone(),
                    start_s: (r.start - base).as_secs_f64(),
                    end_s: (r.end - base).as_secs_f64(),
                    report: *r,
                });
            }
            cursors[i] = mt.reports.len();
        }
        out
    }

    /// [`Simulation::run`], handing `progress` the simulation too (e.g. for
    /// [`Simulation::new_intervals`]).
    pub fn run_with(&mut self, progress: &mut dyn FnMut(f64, &Simulation) -> bool) -> bool {
        let end = self.world.end;
        let end_ns = end.as_nanos().max(1) as f64;
        let t0 = Instant::now();
        while let Some(at) = self.world.q.peek_time() {
            if at > end {
                break;
            }
            let (now, ev) = self.world.q.pop().unwrap();
            self.now = now;
            self.world.dispatch(now, ev);
            if self.world.events_processed() & 0xFFFF == 0 && !progress(now.as_nanos() as f64 / end_ns, self) {
                self.wall_s += t0.elapsed().as_secs_f64();
                return false;
            }
        }
        self.now = end;
        self.wall_s += t0.elapsed().as_secs_f64();
        self.finish();
        progress(1.0, self);
        true
    }

    /// Runs to the end and finishes. `progress(fraction)` is called every 65536 events and may
    /// return false to stop (the simulation stays usable: it can be stepped further).
    pub fn run(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> bool {
        self.run_with(&mut |f, _| progress(f))
    }

    /// Flushes the files the run writes (pcap). Stepping further after it is allowed (the
    /// files are flushed again by the next call).
    pub fn finish(&mut self) {
        self.world.finish();
        self.finished = true;
    }

    /// Hands `pkt` to node `node` at time `at` (not before [`Simulation::now`]), as if one of
    /// its devices had received it: the node forwards it or delivers it locally. The packet
    /// gets a fresh uid of this run. Refused (with the packet back) when `at` is in the past.
    pub fn inject(&mut self, node: NodeId, pkt: Packet, at: SimTime) -> Result<(), Packet> {
        if at < self.now || node.0 >= self.world.nodes.len() {
            return Err(pkt);
        }
        self.world.inject(node.0, pkt, at);
        Ok(())
    }

    /// Marks `node` as external (module doc): packets for it are handed out, not delivered.
    pub fn set_external(&mut self, node: NodeId) {
        self.world.nodes[node.0].external = true;
    }

    /// Brings the real IPv4 packet `bytes` into the simulation at `node` at time `at` (not
    /// before [`Simulation::now`]), as [`Simulation::inject`] does. Refused with a one-line
    /// reason when `at` is in the past or the bytes are not an IPv4 packet without options.
    pub fn inject_raw(&mut self, node: NodeId, bytes: &[u8], at: SimTime) -> Result<(), String> {
        if at < self.now || node.0 >= self.world.nodes.len() {
            return Err(format!("injection at {at} before now ({}) or at an unknown node", self.now));
        }
        let key = self.world.raw.next_key();
        let pkt = celltcp_net::raw::parse_ipv4(bytes, key, at).map_err(|e| e.to_string())?;
        self.world.raw.put(&bytes[..pkt.size() as usize]);
        self.world.inject(node.0, pkt, at);
        Ok(())
    }

    /// The store of real packets' bytes (emulation, [`celltcp_net::raw::RawStore`]): bytes held
    /// now (with the real fragments simulated hosts hold for reassembly,
    /// [`celltcp_net::raw_frag::RawReassembler`]), the most held at once in the store, entries
    /// evicted for room.
    pub fn raw_store_stats(&self) -> (usize, usize, u64) {
        let r = &self.world.raw;
        (r.bytes() + self.world.raw_frag.bytes(), r.peak_bytes(), r.evicted())
    }

    /// Hands out the packets that arrived at external nodes since the last call, in arrival
    /// order: `f(arrival time, node, wire bytes)`. Returns how many could not be rebuilt (their
    /// bytes evicted from the store: lost).
    pub fn drain_external(&mut self, mut f: impl FnMut(SimTime, NodeId, &[u8])) -> u64 {
        let mut lost = 0;
        let mut buf = Vec::with_capacity(2048);
        let out = std::mem::take(&mut self.world.external_out);
        for (t, node, pkt) in &out {
            buf.clear();
            if let celltcp_net::Body::Raw(r) = pkt.body {
                let ok = self.world.raw.get(r.key).is_some_and(|orig| celltcp_net::raw::wire_bytes(pkt, orig, &mut buf));
                // this packet (or fragment) has left: the bytes go with the last one
                self.world.raw.release(r.key);
                if !ok {
                    lost += 1;
                    continue;
                }
            } else {
                celltcp_net::pcap::encode_headers(pkt, &mut buf);
                buf.resize(pkt.size() as usize, 0);
            }
            f(*t, NodeId(*node as usize), &buf);
        }
        let mut out = out;
        out.clear();
        if self.world.external_out.is_empty() {
            self.world.external_out = out;
        }
        lost
    }

    /// The summary as of [`Simulation::now`] (the whole run's after [`Simulation::run`]); the
    /// simulation goes on. The time series are in its sinks until [`Simulation::into_output`].
    pub fn summary(&self) -> serde_json::Value {
        crate::summary::summary(&self.world, self.now)
    }

    /// Ends the run's tables and hands back the results as of [`Simulation::now`]: with an output
    /// directory the time series are files (`RunOutput::files`), without one they are columns.
    pub fn into_output(mut self) -> Result<RunOutput, ScenarioError> {
        if !self.finished {
            self.finish();
        }
        let at = self.now;
        let summary = crate::summary::summary(&self.world, at);
        let (iperf, ping) = crate::summary::app_tables(&self.world);
        let events = self.world.events_processed();
        let mut files = std::mem::take(&mut self.world.files);
        let (timeseries, written) = self.world.sinks.finish(iperf, ping).map_err(|e| ScenarioError::new("", e.to_string()))?;
        files.extend(written);
        Ok(RunOutput { config: self.config, seed: self.seed, summary, events, sim_time_s: at.as_secs_f64(), wall_time_s: self.wall_s, timeseries, files })
    }

    /// Adds `app` on `node`, to start at `at` (not before [`Simulation::now`]). Its sockets
    /// feed no flow's metrics; read its state back with [`Simulation::app`].
    pub fn add_app(&mut self, node: NodeId, app: AnyApp, at: SimTime) -> AppId {
        AppId(self.world.add_app(node.0, app, at.max(self.now)))
    }

    /// An app's current state.
    pub fn app(&self, a: AppId) -> &AnyApp {
        &self.world.apps[a.0 as usize].app
    }

    /// A TCP connection's endpoint (state and statistics), by the socket id its app holds.
    pub fn tcp(&self, s: SockId) -> Option<&celltcp_tcp::TcpEndpoint> {
        self.world.stack.socks.get(s.0 as usize).and_then(|k| k.ep_ref())
    }

    /// The transparent proxy of node `node` (`[[proxy]]`), if it has one.
    pub fn proxy(&self, node: &str) -> Option<&celltcp_apps::proxy::SplitProxy> {
        let n = self.node(node)?.0;
        let tp = self.world.tproxy.as_ref()?;
        tp.list.iter().find(|(p, _)| p.node == n).and_then(|&(_, a)| match &self.world.apps[a as usize].app {
            AnyApp::Proxy(p) => Some(p),
            _ => None,
        })
    }

    /// Whether [`Simulation::finish`] has run.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    #[allow(dead_code)]
    pub(crate) fn world(&self) -> &World {
        &self.world
    }
}

impl World {
    /// Queues the arrival of an outside packet at `node` (see [`Simulation::inject`]).
    pub(crate) fn inject(&mut self, node: usize, mut pkt: Packet, at: SimTime) {
        pkt.uid = self.fresh_uid();
        let slot = self.slab_put(pkt);
        self.q.push(at, Ev::Arrive(node as u32, slot));
    }
}
