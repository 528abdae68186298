//! Metrics taken in the network and at the sockets: per-flow one-way delay, jitter and drops
//! ([`FlowNet`]), the segment trace of a traced sender ([`SegTrace`]), and the periodic time
//! series (rows pushed into the run's [`crate::sinks::Sinks`] by `World::sample` below, the one
//! place that decides what a sample records). iperf-style interval reports of a flow are taken here too
//! (`World::meter_tick`): they combine the receiver's bytes and the sender's retransmissions,
//! as iperf3's end-of-test exchange does.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_metrics::StreamStats;
use celltcp_net::TcpSegment;
use celltcp_tcp::seq;

use crate::device::{Device, Medium};
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
    /// One interval report of iperf flow `f` (its `Ev::Meter` timer).
    pub(crate) fn meter_tick(&mut self, now: SimTime, f: usize) {
        let (recv_bytes, retx) = self.tcp_progress(f);
        let fl = &mut self.flows[f];
        let Some(m) = fl.meter.as_mut() else { return };
        m.tick(now, recv_bytes, retx);
        let next = now + fl.interval;
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
        let recv = rcv.map_or(0, |c| self.ep(c).stats().bytes_delivered);
        let retx = snd.map_or(0, |c| self.ep(c).stats().retransmitted_segments);
        (recv, retx)
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
                let s = self.ep(c).sample(now);
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
            }
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
