//! Metrics taken in the network and at the sockets: per-flow one-way delay, jitter and drops
//! ([`FlowNet`]), the segment trace of a traced sender ([`SegTrace`]), and the periodic time
//! series (rows pushed into the run's [`crate::sinks::Sinks`] by `World::sample` below, the one
//! place that decides what a sample records). iperf-style interval reports of a flow are taken here too
//! (`World::meter_tick`): they combine the receiver's bytes and the sender's retransmissions,
//! as iperf3's end-of-test exchange does.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_apps::app::AnyApp;
use celltcp_metrics::StreamStats;
use celltcp_net::TcpSegment;
use celltcp_mptcp::SubflowState;
use celltcp_tcp::{seq, TcpSample, TcpStats};

use crate::device::{Device, Medium};
use crate::stack::SockKind;
use crate::world::{Ev, World};

/// Per-flow measurements taken in the network (one-way delay, jitter, drops).
#[derive(Default)]
pub(crate) struct FlowNet {
    /// One-way delays of the flow's data packets, ms (f32-rounded, as they were when kept).
    pub owd_ms: StreamStats,
    prev_transit: Option<i128>,
    jitter_ns: f64,
    pub data_pkts_sent: u64,
    pub data_pkts_dropped: u64,
    pub first_data_at: Option<SimTime>,
    pub last_data_at: Option<SimTime>,
}

impl FlowNet {
    /// RFC 3550 §6.4.1 interarrival jitter over the flow's data packets.
    pub(crate) fn on_data_arrival(&mut self, now: SimTime, created: SimTime) {
        let transit = now.as_nanos() as i128 - created.as_nanos() as i128;
        self.owd_ms.add(f64::from((transit as f64 * 1e-6) as f32));
        if let Some(prev) = self.prev_transit {
            let d = (transit - prev).abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.prev_transit = Some(transit);
        self.first_data_at.get_or_insert(now);
        self.last_data_at = Some(now);
    }
    pub fn jitter_ms(&self) -> f64 {
        self.jitter_ns * 1e-6
    }
}

/// The per-segment trace of a TCP flow's sender (`trace_segments = true`): what tcptrace and
/// Wireshark's "Stevens" graph plot. Sequence numbers are byte offsets of the stream's data
/// (the first data byte is 0, the SYN at −1), unwrapped to 64 bits with [`seq::unwrap`]
/// (RFC 9293 §3.4), so the trace of a flow longer than 4 GB stays monotone.
pub(crate) struct SegTrace {
    /// The sending connection's initial sequence number (the wire value of its SYN).
    pub(crate) isn: u32,
    /// The latest absolute offset seen, the reference for unwrapping (RFC 9293 §3.4: values
    /// in use are within 2^31 of it).
    reference: u64,
    /// The sender's `retransmitted_segments` after the last segment it sent: a segment after
    /// which it has grown is a retransmission.
    rtx_seen: u64,
    /// Rows are kept from `from` to `until` (`trace_window`), the whole run without one.
    from: SimTime,
    until: SimTime,
}

impl SegTrace {
    pub(crate) fn new(from: SimTime, until: SimTime) -> Self {
        SegTrace { isn: 0, reference: 0, rtx_seen: 0, from, until }
    }

    /// The stream offset of wire sequence number `wire` (first data byte 0).
    fn offset(&mut self, wire: u32) -> i64 {
        let abs = seq::unwrap(self.isn, wire, self.reference);
        self.reference = self.reference.max(abs);
        abs as i64 - 1
    }

    /// A segment the sender transmitted; `rtx_total` is its `retransmitted_segments` after it.
    /// Returns its `segments` row (sequence offset, length, retransmission) when it is one.
    pub(crate) fn on_sent(&mut self, now: SimTime, seg: &TcpSegment, rtx_total: u64) -> Option<(i64, i64, i64)> {
        let rtx = rtx_total > self.rtx_seen;
        self.rtx_seen = rtx_total;
        if seg.payload_len == 0 {
            return None;
        }
        // outside the window too: the unwrapping reference must follow the stream
        let off = self.offset(seg.seq);
        if now < self.from || now > self.until {
            return None;
        }
        Some((off, seg.payload_len as i64, rtx as i64))
    }

    /// A segment the sender received: its cumulative ACK and the right edge of its highest
    /// SACK block (RFC 2018 §3), or the ACK again when it carries none: its `acks` row.
    pub(crate) fn on_ack(&mut self, now: SimTime, seg: &TcpSegment) -> Option<(i64, i64)> {
        if !seg.flags.ack() || now < self.from || now > self.until {
            return None;
        }
        let ack = self.offset(seg.ack);
        let mut sack = ack;
        for b in seg.options.sack_blocks() {
            sack = sack.max(self.offset(b.right));
        }
        Some((ack, sack))
    }
}

impl World {
    /// One interval report of iperf or UDP flow `f` (its `Ev::Meter` timer).
    pub(crate) fn meter_tick(&mut self, now: SimTime, f: usize) {
        let udp = match self.flows[f].server_app.map(|a| &self.apps[a as usize].app) {
            Some(AnyApp::UdpSink(u)) => Some((u.recv.received_bytes, u.recv.expected(), u.recv.expected().saturating_sub(u.recv.received), u.recv.jitter_ms())),
            _ => None,
        };
        let (recv_bytes, retx) = if udp.is_none() { self.tcp_progress(f) } else { (0, 0) };
        let fl = &mut self.flows[f];
        let Some(m) = fl.meter.as_mut() else { return };
        match udp {
            Some((bytes, expected, lost, jitter)) => m.tick_udp(now, bytes, expected, lost, jitter),
            None => m.tick(now, recv_bytes, retx),
        }
        let next = m.next_tick(now, fl.interval);
        match fl.stop_at {
            Some(s) if next > s + SimDuration::from_millis(1) => {
                // the last, partial interval ends with the test, as iperf3 reports it
                if now + SimDuration::from_millis(1) < s {
                    self.q.push(s, Ev::Meter(f as u32));
                }
            }
            _ => self.q.push(next, Ev::Meter(f as u32)),
        }
    }

    /// (bytes read by the receiving application, sender retransmitted segments) of a TCP flow.
    pub(crate) fn tcp_progress(&self, f: usize) -> (u64, u64) {
        let (snd, rcv) = self.tcp_roles(f);
        let recv = rcv.map_or(0, |c| self.conn_stats(c).bytes_delivered);
        let retx = snd.map_or(0, |c| self.conn_stats(c).retransmitted_segments);
        (recv, retx)
    }

    /// The counters of connection `s`: its endpoint's, or for an MPTCP connection the sum over
    /// its subflows, with the data level's bytes read as `bytes_delivered` (the goodput) and
    /// bytes DATA_ACKed as `bytes_acked`.
    pub(crate) fn conn_stats(&self, s: u32) -> TcpStats {
        match &self.stack.socks[s as usize].kind {
            SockKind::Mptcp(m) => {
                let mut t = TcpStats::default();
                for i in 0..m.subflow_count() {
                    let x = m.subflow(i).stats();
                    t.segments_sent += x.segments_sent;
                    t.segments_received += x.segments_received;
                    t.data_segments_sent += x.data_segments_sent;
                    t.bytes_sent += x.bytes_sent;
                    t.retransmitted_segments += x.retransmitted_segments;
                    t.retransmitted_bytes += x.retransmitted_bytes;
                    t.timeouts += x.timeouts;
                    t.fast_recoveries += x.fast_recoveries;
                }
                t.bytes_delivered = m.stats().bytes_read;
                t.bytes_acked = m.stats().bytes_acked;
                t
            }
            _ => *self.ep(s).stats(),
        }
    }

    /// A time-series snapshot of connection `s`; for an MPTCP connection the subflows' windows,
    /// bytes in flight and delivered bytes summed (failed subflows left out), the smallest
    /// smoothed RTT, and the first subflow's other fields.
    pub(crate) fn conn_sample(&self, s: u32, now: SimTime) -> TcpSample {
        match &self.stack.socks[s as usize].kind {
            SockKind::Mptcp(m) => {
                let mut t = m.subflow_sample(0, now);
                let (mut cwnd, mut ssth, mut fl, mut del, mut srtt) = (0, 0u64, 0, 0, None::<SimDuration>);
                for i in 0..m.subflow_count() {
                    if m.subflow_state(i) == SubflowState::Failed {
                        continue;
                    }
                    let x = m.subflow_sample(i, now);
                    cwnd += x.cwnd_bytes;
                    ssth = ssth.saturating_add(x.ssthresh_bytes);
                    fl += x.bytes_in_flight;
                    del += x.delivered_bytes;
                    if x.srtt > SimDuration::ZERO {
                        srtt = Some(srtt.map_or(x.srtt, |r| r.min(x.srtt)));
                    }
                }
                t.cwnd_bytes = cwnd;
                t.ssthresh_bytes = ssth;
                t.bytes_in_flight = fl;
                t.delivered_bytes = del;
                t.srtt = srtt.unwrap_or(SimDuration::ZERO);
                t
            }
            _ => self.ep(s).sample(now),
        }
    }

    /// (sending socket, receiving socket) of a TCP flow.
    pub(crate) fn tcp_roles(&self, f: usize) -> (Option<u32>, Option<u32>) {
        let fl = &self.flows[f];
        if fl.reverse {
            (fl.server, fl.client)
        } else {
            (fl.client, fl.server)
        }
    }


    pub(crate) fn sample(&mut self, now: SimTime) {
        let t = now.as_secs_f64();
        if now == SimTime::ZERO {
            self.reserve_series();
        }
        for f in 0..self.flows.len() {
            let (snd, _) = self.tcp_roles(f);
            if let Some(c) = snd {
                let s = self.conn_sample(c, now);
                self.sinks
                    .tcp
                    .f64(t)
                    .i64(f as i64)
                    .f64(s.cwnd_bytes as f64)
                    .f64(s.ssthresh_bytes as f64)
                    .f64(s.srtt.as_millis_f64())
                    .f64(s.bytes_in_flight as f64)
                    .f64(s.pacing_rate.map_or(f64::NAN, |r| r * 8.0))
                    .f64(s.delivered_bytes as f64)
                    .end_row();
                if self.sinks.mptcp_subflows.is_some() {
                    self.sample_subflows(now, f, c);
                }
            }
        }
        if self.tproxy.is_some() {
            self.sample_proxies(t);
        }
        for m in &mut self.media {
            m.medium.sample(now, &mut self.sinks);
        }
        for (i, d) in self.dirs.iter().enumerate() {
            let Device::Link(link) = &d.dev else { continue };
            let (bytes, pkts) = (link.queue_len_bytes_at(now), link.queue_len_pkts_at(now));
            self.sinks.queue.f64(t).i64(i as i64).f64(bytes as f64).f64(pkts as f64).end_row();
        }
        let next = now + self.sample_interval;
        if next <= self.end {
            self.q.push(next, Ev::Sample);
        }
    }

    /// The `mptcp_subflows` rows of flow `f` whose sending socket is `c` (nothing for plain TCP).
    #[inline(never)]
    fn sample_subflows(&mut self, now: SimTime, f: usize, c: u32) {
        let SockKind::Mptcp(m) = &self.stack.socks[c as usize].kind else { return };
        let Some(t) = self.sinks.mptcp_subflows.as_mut() else { return };
        for i in 0..m.subflow_count() {
            let x = m.subflow_sample(i, now);
            t.f64(now.as_secs_f64())
                .i64(f as i64)
                .i64(i as i64)
                .f64(x.cwnd_bytes as f64)
                .f64(x.srtt.as_millis_f64())
                .f64(x.bytes_in_flight as f64)
                .f64(x.delivered_bytes as f64)
                .end_row();
        }
    }

    /// Sizes the time-series columns for the whole run up front (capped; a file sink for at
    /// most one row group), so that they are written once instead of being copied at every
    /// doubling: with 100 flows and 204 link directions sampled every 10 ms for 60 s kept in
    /// memory that is 77 MB, and the copies cost more than the simulation.
    fn reserve_series(&mut self) {
        const MAX_ROWS: usize = 4 << 20;
        let samples = (self.end.as_nanos() / self.sample_interval.as_nanos().max(1)) as usize + 1;
        let tcp = self.flows.iter().filter(|f| f.is_tcp()).count();
        let tcp_rows = samples.saturating_mul(tcp).min(MAX_ROWS);
        let q_rows = samples.saturating_mul(self.dirs.len()).min(MAX_ROWS);
        self.sinks.tcp.reserve(tcp_rows);
        self.sinks.queue.reserve(q_rows);
    }

    /// An RTT sample of flow `f` (ms) taken at `t` (s): into its statistics and the `rtt` table.
    pub(crate) fn record_rtt_sample(&mut self, f: usize, t: f32, ms: f32) {
        self.flows[f].rtt_ms.add(f64::from(ms));
        self.sinks.rtt.f64(f64::from(t)).i64(f as i64).f64(f64::from(ms)).end_row();
    }
}
