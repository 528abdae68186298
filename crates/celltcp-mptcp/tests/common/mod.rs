//! A small two-host, multi-path network for MPTCP tests: host A (the client, one address per
//! path) and host B (the listener, one address; or one per path, announced with ADD_ADDR: see
//! [`Net::with_listener_paths`]), paths made of a rate link each way with a drop-tail queue
//! (`celltcp-net`), driven by the engine's event queue. A writes (an upload) and B reads; B may
//! write too (a download, [`Net::b_to_write`]), A then reads. Beside the MPTCP connection, plain
//! TCP flows can share any path. Optional impairments per path: random loss, random extra delay
//! (reordering), and a time from which the path drops everything.
#![allow(dead_code)]

use celltcp_engine::{EventQueue, SimDuration, SimRng, SimTime};
use celltcp_mptcp::{MptcpConfig, MptcpConnection, SockAddr};
use celltcp_net::{
    AnyQueue, Body, Ipv4, Link, LinkConfig, LossModel, MptcpOption, MptcpSideTable, Packet,
    QueueConfig, QueueLimit, TcpSegment,
};
use celltcp_tcp::{TcpConfig, TcpEndpoint};
use rand::{Rng, SeedableRng};

pub const B_IP: Ipv4 = Ipv4::new(10, 9, 0, 1);
pub const MP_PORT: u16 = 80;

pub fn a_ip(k: usize) -> Ipv4 {
    Ipv4::new(10, 0, k as u8, 1)
}

/// B's address `k` (`b_ip(0)` is [`B_IP`]).
pub fn b_ip(k: usize) -> Ipv4 {
    Ipv4::new(10, 9, k as u8, 1)
}

#[derive(Clone, Copy, Debug)]
pub struct PathCfg {
    pub rate_bps: u64,
    /// One-way propagation delay, each direction.
    pub delay: SimDuration,
    pub queue_pkts: u32,
    /// Random loss on the A->B direction (after the queue).
    pub loss: f64,
    /// Probability that a packet (either direction) gets an extra random delay up to `jitter`.
    pub reorder: f64,
    pub jitter: SimDuration,
    /// From this time on the path drops every packet (a subflow that dies)...
    pub dies_at: Option<SimTime>,
    /// ... until this time, if given (the interface comes back).
    pub back_at: Option<SimTime>,
}

impl PathCfg {
    /// The path drops what it carries at `t`.
    fn dead_at(&self, t: SimTime) -> bool {
        self.dies_at.is_some_and(|d| t >= d) && self.back_at.is_none_or(|b| t < b)
    }
}

impl PathCfg {
    pub fn new(rate_mbps: u64, delay_ms: u64, queue_pkts: u32) -> Self {
        PathCfg {
            rate_bps: rate_mbps * 1_000_000,
            delay: SimDuration::from_millis(delay_ms),
            queue_pkts,
            loss: 0.0,
            reorder: 0.0,
            jitter: SimDuration::ZERO,
            dies_at: None,
            back_at: None,
        }
    }
}

struct PathLinks {
    cfg: PathCfg,
    fwd: Link,
    rev: Link,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A packet reaches B (`to_b`) or A.
    Arrive {
        to_b: bool,
        pkt: Packet,
    },
    Timer(usize),
}

/// A plain TCP bulk flow from A to B over one path.
pub struct TcpFlow {
    pub path: usize,
    pub a: TcpEndpoint,
    pub b: Option<TcpEndpoint>,
    pub port: u16,
    pub read: u64,
    pub start: SimTime,
}

pub struct Net {
    q: EventQueue<Ev>,
    paths: Vec<PathLinks>,
    /// Which path each of A's addresses uses.
    pub route: Vec<usize>,
    /// Which path each of B's addresses uses, when B has more than one (then B's address
    /// decides the path, not A's).
    pub b_route: Vec<usize>,
    pub a: MptcpConnection,
    pub b: Option<MptcpConnection>,
    pub bcfg: MptcpConfig,
    pub tcp: Vec<TcpFlow>,
    /// Bytes A still has to write (u64::MAX: unlimited), and whether A closes after them.
    pub to_write: u64,
    pub close_after: bool,
    pub b_read: u64,
    pub b_closed: bool,
    /// Bytes B still has to write (0: none, u64::MAX: unlimited), and whether B closes after.
    pub b_to_write: u64,
    pub b_close_after: bool,
    /// Bytes A has read (a download).
    pub a_read: u64,
    armed: Vec<Option<SimTime>>,
    rng: SimRng,
    uid: u64,
    next_port: u16,
    out: Vec<celltcp_net::Delivery>,
    /// (time, B bytes read) samples taken by `goodput_between`.
    pub now: SimTime,
    /// Every packet as it leaves its host, when on.
    pub capture: Option<Vec<(SimTime, Packet, MptcpOption)>>,
    /// The MPTCP options of the packets in flight.
    pub opts: MptcpSideTable,
    /// A's key.
    pub a_key: u64,
}

const T_A: usize = 0;
const T_B: usize = 1;

impl Net {
    /// A with one address per entry of `route` (address k on path `route[k]`), B with one.
    pub fn new(paths: &[PathCfg], route: &[usize], cfg: MptcpConfig, seed: u64) -> Self {
        let links = paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mk = |dir: u64| {
                    let lc = LinkConfig {
                        rate_bps: p.rate_bps,
                        delay: p.delay,
                        mtu: 1500,
                    };
                    let q = AnyQueue::new(&QueueConfig::DropTail {
                        limit: QueueLimit::Packets(p.queue_pkts),
                    });
                    Link::new(
                        lc,
                        q,
                        LossModel::none(),
                        SimRng::seed_from_u64(seed ^ (i as u64 * 2 + dir)),
                    )
                };
                PathLinks {
                    cfg: *p,
                    fwd: mk(0),
                    rev: mk(1),
                }
            })
            .collect();
        let addrs: Vec<Ipv4> = (0..route.len()).map(a_ip).collect();
        let key_a = 0x0a0a_0000_0000_0000 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let a = MptcpConnection::connect(
            cfg,
            key_a,
            &addrs,
            40_000,
            SockAddr {
                ip: B_IP,
                port: MP_PORT,
            },
            seed as u32 ^ 0x1234_5678,
            SimTime::ZERO,
        );
        Net {
            q: EventQueue::new(),
            paths: links,
            route: route.to_vec(),
            b_route: vec![0],
            a,
            b: None,
            bcfg: cfg,
            tcp: Vec::new(),
            to_write: u64::MAX,
            close_after: false,
            b_read: 0,
            b_closed: false,
            b_to_write: 0,
            b_close_after: false,
            a_read: 0,
            armed: vec![None; 2],
            rng: SimRng::seed_from_u64(seed ^ 0xdead_beef),
            uid: 0,
            next_port: 40_001,
            out: Vec::new(),
            now: SimTime::ZERO,
            capture: None,
            opts: MptcpSideTable::default(),
            a_key: key_a,
        }
    }

    /// B gets one address per entry of `b_route` (address k on path `b_route[k]`), the others
    /// than the first announced with ADD_ADDR (RFC 8684 §3.4.1): the paths of the MPTCP
    /// connection are then chosen by B's address (A normally has one address).
    pub fn with_listener_paths(mut self, b_route: &[usize]) -> Self {
        self.b_route = b_route.to_vec();
        self
    }

    /// Adds a plain TCP bulk flow from A's address `addr` (on its path) to B, started at `start`.
    pub fn add_tcp(&mut self, addr: usize, cfg: TcpConfig, start: SimTime) {
        let port = 50_000 + self.tcp.len() as u16;
        let a = TcpEndpoint::connect(cfg, port, 81, 777 + port as u32, start);
        self.tcp.push(TcpFlow {
            path: addr,
            a,
            b: None,
            port,
            read: 0,
            start,
        });
        self.armed.push(None);
        self.q.push(start, Ev::Timer(2 + self.tcp.len() - 1));
    }

    fn send(
        &mut self,
        now: SimTime,
        from_a: bool,
        src: Ipv4,
        dst: Ipv4,
        seg: TcpSegment,
        mptcp: MptcpOption,
    ) {
        self.uid += 1;
        let mut pkt = Packet::new(self.uid, src, dst, 0, now, Body::Tcp(seg));
        self.opts.attach(&mut pkt, mptcp);
        if let Some(c) = &mut self.capture {
            c.push((now, pkt, mptcp));
        }
        let a_addr = if from_a { src } else { dst };
        let b_addr = if from_a { dst } else { src };
        let path = match (0..self.b_route.len()).find(|&k| b_ip(k) == b_addr) {
            Some(k) if self.b_route.len() > 1 => self.b_route[k],
            _ => {
                let k = (0..self.route.len())
                    .find(|&k| a_ip(k) == a_addr)
                    .expect("address of A");
                self.route[k]
            }
        };
        let p = &mut self.paths[path];
        if p.cfg.dead_at(now) {
            self.opts.forget(pkt.uid);
            return;
        }
        self.out.clear();
        let link = if from_a { &mut p.fwd } else { &mut p.rev };
        if let Err(dropped) = link.try_enqueue(now, pkt, &mut self.out) {
            self.opts.forget(dropped.uid);
        }
        let cfg = p.cfg;
        for d in std::mem::take(&mut self.out) {
            if d.lost || (from_a && cfg.loss > 0.0 && self.rng.gen_bool(cfg.loss)) {
                self.opts.forget(d.pkt.uid);
                continue;
            }
            let mut at = d.arrive_at;
            if cfg.reorder > 0.0 && self.rng.gen_bool(cfg.reorder) {
                at += SimDuration(self.rng.gen_range(0..=cfg.jitter.0));
            }
            if cfg.dead_at(at) {
                self.opts.forget(d.pkt.uid);
                continue;
            }
            self.q.push(
                at,
                Ev::Arrive {
                    to_b: from_a,
                    pkt: d.pkt,
                },
            );
        }
    }

    fn arm(&mut self, id: usize, dl: Option<SimTime>) {
        if let Some(t) = dl {
            if self.armed[id].is_none_or(|a| t < a) {
                self.armed[id] = Some(t);
                self.q.push(t, Ev::Timer(id));
            }
        }
    }

    fn pump(&mut self, now: SimTime) {
        // A: path manager, application, output
        for (l, r) in self.a.wanted_subflows() {
            let port = self.next_port;
            self.next_port += 1;
            self.a.open_subflow(now, l, r, port, 1000 + port as u32);
        }
        if self.to_write > 0 {
            let n = self.a.write(self.to_write);
            if self.to_write != u64::MAX {
                self.to_write -= n;
            }
        }
        if self.to_write == 0 && self.close_after {
            self.a.close();
        }
        self.a_read += self.a.read(now, u64::MAX);
        while let Some(o) = self.a.poll_transmit(now) {
            self.send(now, true, o.local.ip, o.remote.ip, o.seg, o.mptcp);
        }
        let dl = self.a.next_deadline();
        self.arm(T_A, dl);
        if let Some(b) = &mut self.b {
            if self.b_to_write > 0 && b.is_established() {
                let n = b.write(self.b_to_write);
                if self.b_to_write != u64::MAX {
                    self.b_to_write -= n;
                }
                if self.b_to_write == 0 && self.b_close_after {
                    b.close();
                }
            }
            let n = b.read(now, u64::MAX);
            self.b_read += n;
            if b.peer_closed() && !self.b_closed && self.b_to_write == 0 {
                self.b_closed = true;
                b.close();
            }
            let mut outs = Vec::new();
            while let Some(o) = b.poll_transmit(now) {
                outs.push(o);
            }
            let dl = b.next_deadline();
            for o in outs {
                self.send(now, false, o.local.ip, o.remote.ip, o.seg, o.mptcp);
            }
            self.arm(T_B, dl);
        }
        for i in 0..self.tcp.len() {
            if now < self.tcp[i].start {
                continue;
            }
            let f = &mut self.tcp[i];
            f.a.write(u64::MAX);
            let mut segs = Vec::new();
            while let Some(s) = f.a.poll_transmit(now) {
                segs.push((true, s));
            }
            if let Some(b) = &mut f.b {
                f.read += b.read(now, u64::MAX);
                while let Some(s) = b.poll_transmit(now) {
                    segs.push((false, s));
                }
            }
            let dl = [
                f.a.next_deadline(),
                f.b.as_ref().and_then(|b| b.next_deadline()),
            ]
            .into_iter()
            .flatten()
            .min();
            let addr = a_ip(f.path);
            for (from_a, s) in segs {
                if from_a {
                    self.send(now, true, addr, B_IP, s, MptcpOption::default());
                } else {
                    self.send(now, false, B_IP, addr, s, MptcpOption::default());
                }
            }
            self.arm(2 + i, dl);
        }
    }

    fn deliver(&mut self, now: SimTime, to_b: bool, pkt: Packet) {
        let mptcp = self.opts.take(&pkt);
        let Body::Tcp(seg) = pkt.body else { return };
        if seg.dst_port == 81 || seg.src_port == 81 {
            let Some(f) = self
                .tcp
                .iter_mut()
                .find(|f| f.port == seg.src_port || f.port == seg.dst_port)
            else {
                return;
            };
            if to_b {
                match &mut f.b {
                    Some(b) => b.on_segment(now, &seg, false),
                    None => {
                        f.b = Some(TcpEndpoint::accept(
                            *f.a.config(),
                            81,
                            f.port,
                            99,
                            &seg,
                            now,
                        ))
                    }
                }
            } else {
                f.a.on_segment(now, &seg, false);
            }
            return;
        }
        let local_b = SockAddr {
            ip: pkt.dst,
            port: seg.dst_port,
        };
        let remote_b = SockAddr {
            ip: pkt.src,
            port: seg.src_port,
        };
        if to_b {
            match &mut self.b {
                Some(b) => {
                    b.on_segment(now, local_b, remote_b, &seg, &mptcp, false);
                }
                None => {
                    let key_b = 0x0b0b_0000_0000_0000 ^ self.uid;
                    let b_addrs: Vec<Ipv4> = (0..self.b_route.len()).map(b_ip).collect();
                    self.b = MptcpConnection::accept(
                        self.bcfg, key_b, &b_addrs, local_b, remote_b, &seg, &mptcp, now,
                    );
                }
            }
        } else {
            self.a
                .on_segment(now, local_b, remote_b, &seg, &mptcp, false);
        }
    }

    /// Runs until `until` or until `done` holds after an event.
    pub fn run_until(&mut self, until: SimTime, mut done: impl FnMut(&Net) -> bool) {
        self.pump(self.now);
        while let Some(t) = self.q.peek_time() {
            if t > until {
                break;
            }
            let (now, ev) = self.q.pop().unwrap();
            self.now = now;
            match ev {
                Ev::Arrive { to_b, pkt } => self.deliver(now, to_b, pkt),
                Ev::Timer(id) => {
                    if self.armed[id] == Some(now) {
                        self.armed[id] = None;
                    }
                    match id {
                        T_A => {
                            if self.a.next_deadline().is_some_and(|d| d <= now) {
                                self.a.on_timeout(now);
                            }
                        }
                        T_B => {
                            if let Some(b) = &mut self.b {
                                if b.next_deadline().is_some_and(|d| d <= now) {
                                    b.on_timeout(now);
                                }
                            }
                        }
                        k => {
                            let f = &mut self.tcp[k - 2];
                            if f.a.next_deadline().is_some_and(|d| d <= now) {
                                f.a.on_timeout(now);
                            }
                            if let Some(b) = &mut f.b {
                                if b.next_deadline().is_some_and(|d| d <= now) {
                                    b.on_timeout(now);
                                }
                            }
                        }
                    }
                }
            }
            self.pump(now);
            if done(self) {
                return;
            }
        }
        self.now = self.now.max(until);
    }

    /// Bytes B has read of the MPTCP connection, per subflow (as received on each) and total.
    pub fn mptcp_bytes(&self) -> (Vec<u64>, u64) {
        let Some(b) = &self.b else { return (vec![], 0) };
        (
            (0..b.subflow_count())
                .map(|i| b.subflow_stats(i).bytes_received)
                .collect(),
            self.b_read,
        )
    }
}

pub fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}
