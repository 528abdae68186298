//! A tiny in-test "wire" for two TCP endpoints: a fixed one-way delay each way, a bottleneck
//! rate with a drop-tail queue from A to B, and a scripted fate per packet (drop, duplicate,
//! extra delay for reordering). A minimal discrete-event loop over `celltcp_engine::EventQueue`.
#![allow(dead_code)]

use celltcp_engine::{EventQueue, SimDuration, SimRng, SimTime};
use celltcp_net::packet::{TcpSegment, IPV4_HEADER};
use celltcp_tcp::{seq, TcpConfig, TcpEndpoint};
use rand::{Rng, SeedableRng};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// What happens to one packet on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Deliver twice.
    Duplicate,
    /// Deliver after this much extra delay (reordering).
    Delay(SimDuration),
}

#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub time: SimTime,
    pub from: Side,
    pub seg: TcpSegment,
    pub fate: Fate,
    /// Index among A's data-carrying segments (for scripted drops), if any.
    pub data_idx: Option<u64>,
}

enum Ev {
    Arrive(Side, TcpSegment),
    Timer(Side),
}

pub type FateFn = Box<dyn FnMut(&Sent, &mut SimRng) -> Fate>;

pub struct Wire {
    pub now: SimTime,
    pub a: TcpEndpoint,
    pub b: Option<TcpEndpoint>,
    pub b_cfg: TcpConfig,
    pub b_iss: u32,
    pub delay: SimDuration,
    /// Bottleneck A -> B in bits per second (0: infinite).
    pub rate_bps: u64,
    pub queue_pkts: usize,
    /// The A -> B link serves nothing during `[start, end)` (a handover-like stall); packets
    /// wait in the queue and leave in order afterwards. Needs `rate_bps > 0`.
    pub stall: Option<(SimTime, SimTime)>,
    link_free: SimTime,
    departures: std::collections::VecDeque<SimTime>,
    q: EventQueue<Ev>,
    pub fate: FateFn,
    pub rng: SimRng,
    pub log: Vec<Sent>,
    pub queue_drops: u64,
    data_count: u64,
    // application model
    /// Bytes A's app still wants to write.
    pub to_write: u64,
    pub written: u64,
    pub close_after_write: bool,
    /// B's app reads whatever is readable.
    pub b_reads: bool,
    /// B closes once the peer has closed and everything is read.
    pub b_close_on_eof: bool,
    pub read_by_b: u64,
    /// Bytes B's app still wants to write (bidirectional tests), and A's reads.
    pub b_to_write: u64,
    pub b_written: u64,
    pub read_by_a: u64,
    timer_armed: [Option<SimTime>; 2],
    /// Byte ranges (stream offsets) that arrived at B, for the exactly-once check.
    arrived: Vec<(u64, u64)>,
    pub b_arrivals: Vec<(SimTime, TcpSegment)>,
    pub a_arrivals: Vec<(SimTime, TcpSegment)>,
}

pub const A_PORT: u16 = 40000;
pub const B_PORT: u16 = 5201;

impl Wire {
    pub fn new(
        a_cfg: TcpConfig,
        b_cfg: TcpConfig,
        a_iss: u32,
        b_iss: u32,
        delay: SimDuration,
    ) -> Self {
        let now = SimTime::ZERO;
        Wire {
            now,
            a: TcpEndpoint::connect(a_cfg, A_PORT, B_PORT, a_iss, now),
            b: None,
            b_cfg,
            b_iss,
            delay,
            rate_bps: 0,
            queue_pkts: usize::MAX,
            stall: None,
            link_free: now,
            departures: Default::default(),
            q: EventQueue::new(),
            fate: Box::new(|_, _| Fate::Deliver),
            rng: SimRng::seed_from_u64(1),
            log: Vec::new(),
            queue_drops: 0,
            data_count: 0,
            to_write: 0,
            written: 0,
            close_after_write: true,
            b_reads: true,
            b_close_on_eof: true,
            read_by_b: 0,
            b_to_write: 0,
            b_written: 0,
            read_by_a: 0,
            timer_armed: [None, None],
            arrived: Vec::new(),
            b_arrivals: Vec::new(),
            a_arrivals: Vec::new(),
        }
    }

    pub fn b(&self) -> &TcpEndpoint {
        self.b.as_ref().expect("B not yet created")
    }

    pub fn b_mut(&mut self) -> &mut TcpEndpoint {
        self.b.as_mut().expect("B not yet created")
    }

    fn ep(&mut self, s: Side) -> Option<&mut TcpEndpoint> {
        match s {
            Side::A => Some(&mut self.a),
            Side::B => self.b.as_mut(),
        }
    }

    fn transmit(&mut self, from: Side, seg: TcpSegment) {
        let data_idx = if from == Side::A && seg.payload_len > 0 {
            self.data_count += 1;
            Some(self.data_count - 1)
        } else {
            None
        };
        let mut sent = Sent {
            time: self.now,
            from,
            seg,
            fate: Fate::Deliver,
            data_idx,
        };
        let fate = (self.fate)(&sent, &mut self.rng);
        sent.fate = fate;
        self.log.push(sent);
        let to = if from == Side::A { Side::B } else { Side::A };
        let mut arrive = self.now + self.delay;
        if from == Side::A && self.rate_bps > 0 {
            while self.departures.front().is_some_and(|&t| t <= self.now) {
                self.departures.pop_front();
            }
            if self.departures.len() >= self.queue_pkts {
                self.queue_drops += 1;
                return;
            }
            let size = (seg.header_len() + seg.payload_len + IPV4_HEADER) as u64;
            let mut start = self.link_free.max(self.now);
            if let Some((s0, s1)) = self.stall {
                if start >= s0 && start < s1 {
                    start = s1;
                }
            }
            self.link_free = start + SimDuration::transmission(size, self.rate_bps);
            self.departures.push_back(self.link_free);
            arrive = self.link_free + self.delay;
        }
        match fate {
            Fate::Deliver => self.q.push(arrive, Ev::Arrive(to, seg)),
            Fate::Drop => {}
            Fate::Duplicate => {
                self.q.push(arrive, Ev::Arrive(to, seg));
                self.q
                    .push(arrive + SimDuration::from_micros(10), Ev::Arrive(to, seg));
            }
            Fate::Delay(d) => self.q.push(arrive + d, Ev::Arrive(to, seg)),
        }
    }

    /// Application actions, then drain both endpoints' output and re-arm timers.
    pub fn pump(&mut self) {
        let now = self.now;
        for _ in 0..4 {
            if self.to_write > 0 {
                // a blocking writer: after filling the buffer, only once Linux would wake it
                let n = self.a.write(self.to_write.min(self.a.send_buffer_writable()));
                self.to_write -= n;
                self.written += n;
            }
            if self.to_write == 0 && self.close_after_write && self.a.is_established() {
                self.a.close();
            }
            self.read_by_a += self.a.read(now, u64::MAX);
            if let Some(b) = self.b.as_mut() {
                if self.b_reads {
                    self.read_by_b += b.read(now, u64::MAX);
                }
                if self.b_to_write > 0 {
                    let n = b.write(self.b_to_write);
                    self.b_to_write -= n;
                    self.b_written += n;
                }
                if self.b_close_on_eof && self.b_to_write == 0 && b.peer_closed() {
                    b.close();
                }
            }
            let mut any = false;
            while let Some(seg) = self.a.poll_transmit(now) {
                self.transmit(Side::A, seg);
                any = true;
            }
            while let Some(seg) = self.b.as_mut().and_then(|b| b.poll_transmit(now)) {
                self.transmit(Side::B, seg);
                any = true;
            }
            if !any {
                break;
            }
        }
        for (i, side) in [Side::A, Side::B].into_iter().enumerate() {
            let d = self.ep(side).and_then(|e| e.next_deadline());
            if let Some(t) = d {
                if self.timer_armed[i] != Some(t) {
                    self.timer_armed[i] = Some(t);
                    self.q.push(t.max(now), Ev::Timer(side));
                }
            }
        }
    }

    fn note_arrival_at_b(&mut self, seg: &TcpSegment) {
        if seg.payload_len == 0 {
            return;
        }
        let iss = self.a_iss();
        let reference = self.arrived.last().map_or(1, |r| r.1 + 1);
        let abs = seq::unwrap(iss, seg.seq, reference);
        let (s, e) = (abs - 1, abs - 1 + seg.payload_len as u64);
        self.arrived.push((s, e));
        self.arrived.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for r in self.arrived.drain(..) {
            match merged.last_mut() {
                Some(m) if r.0 <= m.1 => m.1 = m.1.max(r.1),
                _ => merged.push(r),
            }
        }
        self.arrived = merged;
    }

    /// Stream bytes that have arrived at B contiguously from offset 0.
    pub fn arrived_prefix(&self) -> u64 {
        match self.arrived.first() {
            Some(&(0, e)) => e,
            _ => 0,
        }
    }

    pub fn a_iss(&self) -> u32 {
        self.log
            .iter()
            .find(|s| s.from == Side::A && s.seg.flags.syn())
            .map_or(0, |s| s.seg.seq)
    }

    fn step(&mut self, t: SimTime, ev: Ev) {
        self.now = t;
        match ev {
            Ev::Arrive(Side::B, seg) => {
                self.b_arrivals.push((t, seg));
                if self.b.is_none() {
                    if seg.flags.syn() && !seg.flags.ack() {
                        self.b = Some(TcpEndpoint::accept(
                            self.b_cfg, B_PORT, A_PORT, self.b_iss, &seg, t,
                        ));
                    }
                } else {
                    self.note_arrival_at_b(&seg);
                    self.b_mut().on_segment(t, &seg, false);
                    // exactly-once / no invention: B never holds bytes that did not arrive
                    let b = self.b();
                    let offset = b.stats().bytes_delivered + b.readable();
                    assert!(
                        offset <= self.arrived_prefix(),
                        "B delivered {offset} > arrived prefix {}",
                        self.arrived_prefix()
                    );
                    assert!(offset <= self.written, "B delivered more than written");
                }
            }
            Ev::Arrive(Side::A, seg) => {
                self.a_arrivals.push((t, seg));
                self.a.on_segment(t, &seg, false);
            }
            Ev::Timer(side) => {
                let i = side as usize;
                if self.timer_armed[i] == Some(t) {
                    self.timer_armed[i] = None;
                }
                if let Some(e) = self.ep(side) {
                    if e.next_deadline().is_some_and(|d| d <= t) {
                        e.on_timeout(t);
                    }
                }
            }
        }
        self.pump();
    }

    /// Runs until `stop` holds, the queue empties, or `t_end`.
    pub fn run_until(&mut self, t_end: SimTime, mut stop: impl FnMut(&Wire) -> bool) {
        self.pump();
        while let Some(t) = self.q.peek_time() {
            if t > t_end || stop(self) {
                break;
            }
            let (t, ev) = self.q.pop().unwrap();
            self.step(t, ev);
        }
        if self.now < t_end && self.q.peek_time().is_none() {
            self.now = self.now.max(self.now);
        }
    }

    pub fn run_for(&mut self, d: SimDuration) {
        let end = self.now + d;
        self.run_until(end, |_| false);
        self.now = self.now.max(end.min(self.now.max(end)));
    }

    pub fn both_closed(&self) -> bool {
        self.a.is_closed() && self.b.as_ref().is_some_and(|b| b.is_closed())
    }

    /// A's data transmissions (payload > 0) as (time, stream offset, len).
    pub fn a_data(&self) -> Vec<(SimTime, u64, u32)> {
        let iss = self.a_iss();
        let mut reference = 1u64;
        self.log
            .iter()
            .filter(|s| s.from == Side::A && s.seg.payload_len > 0)
            .map(|s| {
                let abs = seq::unwrap(iss, s.seg.seq, reference);
                reference = abs;
                (s.time, abs - 1, s.seg.payload_len)
            })
            .collect()
    }

    /// Segments B sent with no payload (ACKs), with time.
    pub fn b_acks(&self) -> Vec<(SimTime, TcpSegment)> {
        self.log
            .iter()
            .filter(|s| s.from == Side::B && s.seg.payload_len == 0 && !s.seg.flags.syn())
            .map(|s| (s.time, s.seg))
            .collect()
    }
}

/// Random loss, duplication and reordering on A's data and B's ACKs.
pub fn random_fate(loss: f64, dup: f64, reorder: f64, max_extra: SimDuration) -> FateFn {
    Box::new(move |_s, rng| {
        let x: f64 = rng.gen();
        if x < loss {
            Fate::Drop
        } else if x < loss + dup {
            Fate::Duplicate
        } else if x < loss + dup + reorder {
            Fate::Delay(SimDuration(rng.gen_range(1..=max_extra.0.max(1))))
        } else {
            Fate::Deliver
        }
    })
}

/// Drops A's data segments whose index (counting every data transmission) is in `idx`.
pub fn drop_data(idx: &'static [u64]) -> FateFn {
    Box::new(move |s, _| {
        if s.data_idx.is_some_and(|i| idx.contains(&i)) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    })
}

pub fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

pub fn at_ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}
