//! `summary.json`, and the `iperf` and `ping` tables, computed from the [`World`] (the other
//! time series went to the run's sinks as it ran). Every field is documented in `docs/outputs.md`.

use serde_json::{json, Value};

use celltcp_metrics::StreamStats;

use crate::output::Table;
use celltcp_apps::app::AnyApp;
use celltcp_apps::bulk::Role;

use crate::device::Medium;
use crate::stack::SockKind;
use crate::world::World;

/// Mean, p50, p95, p99, min and max of a sample.
#[derive(Default)]
struct Stats {
    mean: Option<f64>,
    p50: Option<f64>,
    p95: Option<f64>,
    p99: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
}

/// Mean, min and max are exact; the percentiles come from the streaming histogram, within
/// [`celltcp_metrics::stats::RELATIVE_ERROR`] (2^-8, about 0.4%) of the exact sample
/// percentiles (numpy's linear interpolation) that were computed when every sample was kept.
fn stats(v: &StreamStats) -> Stats {
    Stats { mean: v.mean(), p50: v.percentile(50.0), p95: v.percentile(95.0), p99: v.percentile(99.0), min: v.min(), max: v.max() }
}

fn r(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

fn opt(x: Option<f64>) -> Value {
    x.map_or(Value::Null, r)
}

/// An MPTCP flow's `mptcp` object: its sending connection's subflows (4-tuple, state, bytes,
/// retransmissions, srtt and cwnd at `end`) and its data-level counters; `None` for plain TCP.
fn mptcp_summary(w: &World, snd: Option<u32>, rcv: Option<u32>, end: celltcp_engine::SimTime) -> Option<Value> {
    let conn = |s: Option<u32>| match s.map(|s| &w.stack.socks[s as usize].kind) {
        Some(SockKind::Mptcp(m)) => Some(&**m),
        _ => None,
    };
    let (tx, rx) = (conn(snd), conn(rcv));
    let m = tx.or(rx)?;
    let cfg = w.stack.flow_mptcp.get(w.stack.socks[snd.or(rcv)? as usize].flow as usize).copied().flatten()?;
    let mut subflows = Vec::new();
    for i in 0..tx.map_or(0, |m| m.subflow_count()) {
        let m = tx?;
        let (l, rm) = m.subflow_addrs(i);
        let st = m.subflow(i).stats();
        let s = m.subflow_sample(i, end);
        let ss = m.subflow_stats(i);
        subflows.push(json!({
            "local": format!("{}:{}", l.ip, l.port),
            "remote": format!("{}:{}", rm.ip, rm.port),
            "state": format!("{:?}", m.subflow_state(i)).to_lowercase(),
            "bytes_sent": st.bytes_sent,
            "bytes_acked": st.bytes_acked,
            "bytes_scheduled": ss.bytes_scheduled,
            "bytes_reinjected": ss.bytes_reinjected,
            "retransmitted_segments": st.retransmitted_segments,
            "retransmitted_bytes": st.retransmitted_bytes,
            "timeouts": st.timeouts,
            "srtt_ms": r(s.srtt.as_millis_f64()),
            "final_cwnd_bytes": s.cwnd_bytes,
        }));
    }
    let pm = match cfg.path_manager {
        celltcp_mptcp::path_manager::PathManagerConfig::Fullmesh => "fullmesh",
        celltcp_mptcp::path_manager::PathManagerConfig::Ndiffports { .. } => "ndiffports",
        celltcp_mptcp::path_manager::PathManagerConfig::Kernel { .. } => "default",
    };
    let txs = tx.map(|m| *m.stats()).unwrap_or_default();
    let rxs = rx.map(|m| *m.stats()).unwrap_or_default();
    Some(json!({
        "cc": cfg.cc.name(),
        "scheduler": cfg.scheduler.name(),
        "path_manager": pm,
        "subflows": subflows,
        "subflows_opened": txs.subflows_opened,
        "subflows_failed": txs.subflows_failed,
        "bytes_written": txs.bytes_written,
        "bytes_data_acked": txs.bytes_acked,
        "bytes_reinjected": txs.reinjected_bytes,
        "bytes_read": rxs.bytes_read,
        "duplicate_bytes_received": rxs.duplicate_bytes,
        "established": m.is_established() || m.is_closed(),
    }))
}

/// The summary as of `end` (the run's end after a whole run; the clock of a stepped one).
pub(crate) fn summary(w: &World, end: celltcp_engine::SimTime) -> Value {
    let mut flows = Vec::new();
    for (f, fl) in w.flows.iter().enumerate() {
        let rtt = stats(&fl.rtt_ms);
        let owd = stats(&fl.net.owd_ms);
        let mut o = json!({
            "name": fl.name,
            "app": fl.app.name(),
            "from": w.nodes[fl.src].name,
            "to": w.nodes[fl.dst].name,
            "start_s": fl.start.as_secs_f64(),
            "rtt_mean_ms": opt(rtt.mean),
            "rtt_p50_ms": opt(rtt.p50),
            "rtt_p95_ms": opt(rtt.p95),
            "rtt_p99_ms": opt(rtt.p99),
            "rtt_min_ms": opt(rtt.min),
            "rtt_max_ms": opt(rtt.max),
            "rtt_samples": fl.rtt_ms.count(),
            "owd_mean_ms": opt(owd.mean),
            "owd_p95_ms": opt(owd.p95),
            "jitter_ms": r(fl.net.jitter_ms()),
        });
        let m = o.as_object_mut().unwrap();
        let client = &w.apps[fl.client_app as usize].app;
        let server = fl.server_app.map(|a| &w.apps[a as usize].app);
        match (client, server) {
            (AnyApp::TcpClient(_), _) => {
                let reverse = fl.reverse;
                let (snd, rcv) = w.tcp_roles(f);
                let mut delivered = rcv.map_or(0, |c| w.conn_stats(c).bytes_delivered);
                // iperf counts only the test's own bytes: those read by its end (the meter's
                // last report), not what the send buffer still delivers after it.
                if let (Some(mt), Some(s)) = (&fl.meter, fl.stop_at) {
                    if s <= end && mt.reports.last().is_some_and(|r| r.end >= s) {
                        delivered = mt.reports.iter().map(|r| r.bytes).sum();
                    }
                }
                let done = completed_at(client, server);
                let stop = fl.stop_at.map_or(end, |s| s.min(end));
                let active_end = done.unwrap_or(stop);
                let active = (active_end - fl.start).as_secs_f64();
                let st = snd.map(|c| w.conn_stats(c));
                let bytes_sent = st.as_ref().map_or(0, |s| s.bytes_sent);
                m.insert("cc".into(), json!(fl.cc.name()));
                m.insert("reverse".into(), json!(reverse));
                m.insert("bytes_delivered".into(), json!(delivered));
                m.insert("bytes_sent".into(), json!(bytes_sent));
                m.insert("goodput_bps".into(), r(if active > 0.0 { delivered as f64 * 8.0 / active } else { 0.0 }));
                m.insert("throughput_bps".into(), r(if active > 0.0 { bytes_sent as f64 * 8.0 / active } else { 0.0 }));
                m.insert("active_s".into(), r(active));
                m.insert("completed".into(), json!(done.is_some()));
                m.insert("completion_time_s".into(), done.map_or(Value::Null, |t| json!((t - fl.start).as_secs_f64())));
                if let Some(s) = &st {
                    m.insert("segments_sent".into(), json!(s.segments_sent));
                    m.insert("data_segments_sent".into(), json!(s.data_segments_sent));
                    m.insert("retransmitted_segments".into(), json!(s.retransmitted_segments));
                    m.insert("retransmitted_bytes".into(), json!(s.retransmitted_bytes));
                    m.insert("timeouts".into(), json!(s.timeouts));
                    m.insert("fast_recoveries".into(), json!(s.fast_recoveries));
                } else {
                    for k in ["segments_sent", "data_segments_sent", "retransmitted_segments", "retransmitted_bytes", "timeouts", "fast_recoveries"] {
                        m.insert(k.into(), json!(0));
                    }
                }
                let sent = fl.net.data_pkts_sent;
                m.insert("data_packets_sent".into(), json!(sent));
                m.insert("data_packets_lost".into(), json!(fl.net.data_pkts_dropped));
                m.insert("loss_ratio".into(), r(if sent > 0 { fl.net.data_pkts_dropped as f64 / sent as f64 } else { 0.0 }));
                if let Some(c) = snd {
                    let s = w.conn_sample(c, end);
                    m.insert("final_cwnd_bytes".into(), json!(s.cwnd_bytes));
                }
                if let Some(v) = mptcp_summary(w, snd, rcv, end) {
                    // coupled subflows run the coupled control, not the flow's `cc`
                    if v["cc"] != "uncoupled" {
                        m.insert("cc".into(), v["cc"].clone());
                    }
                    m.insert("mptcp".into(), v);
                }
            }
            (AnyApp::Cbr(c), Some(AnyApp::UdpSink(u))) => {
                let (sender, recv) = (&c.sender, &u.recv);
                let sent = sender.next_seq;
                let active = (end.min(sender.stop_at) - fl.start).as_secs_f64();
                m.insert("datagrams_sent".into(), json!(sent));
                m.insert("datagrams_received".into(), json!(recv.received));
                m.insert("datagrams_lost".into(), json!(recv.lost(sent)));
                m.insert("out_of_order".into(), json!(recv.out_of_order));
                m.insert("loss_ratio".into(), r(if sent > 0 { recv.lost(sent) as f64 / sent as f64 } else { 0.0 }));
                m.insert("bytes_sent".into(), json!(sender.sent_bytes));
                m.insert("bytes_delivered".into(), json!(recv.received_bytes));
                m.insert("goodput_bps".into(), r(if active > 0.0 { recv.received_bytes as f64 * 8.0 / active } else { 0.0 }));
                m.insert("throughput_bps".into(), r(if active > 0.0 { sender.sent_bytes as f64 * 8.0 / active } else { 0.0 }));
                m.insert("jitter_ms".into(), r(recv.jitter_ms()));
                m.insert("retransmitted_segments".into(), json!(0));
            }
            (AnyApp::Ping(p), _) => {
                let pinger = &p.pinger;
                m.insert("echo_sent".into(), json!(pinger.sent));
                m.insert("echo_received".into(), json!(pinger.replies.len()));
                let lost = pinger.sent as usize - pinger.replies.len();
                m.insert("loss_ratio".into(), r(if pinger.sent > 0 { lost as f64 / pinger.sent as f64 } else { 0.0 }));
                m.insert("retransmitted_segments".into(), json!(0));
                m.insert("goodput_bps".into(), json!(0.0));
            }
            (AnyApp::Web(_) | AnyApp::Video(_), _) => {
                m.insert("cc".into(), json!(fl.cc.name()));
                crate::web_apps::summary(m, w, client, server, fl.start, end);
            }
            _ => unreachable!("a flow's apps match its kind"),
        }
        if fl.stream > 0 {
            m.insert("test".into(), json!(fl.test));
            m.insert("stream".into(), json!(fl.stream));
        }
        if let Some(mt) = &fl.meter {
            m.insert("intervals".into(), json!(mt.reports.len()));
            if mt.omit_until > fl.start {
                // iperf3 -O: the test's totals leave the omitted intervals out
                let kept = mt.reports.iter().filter(|r| !r.omitted);
                let (bytes, secs) = kept.fold((0u64, 0.0), |(b, t), r| (b + r.bytes, t + (r.end - r.start).as_secs_f64()));
                m.insert("omit_s".into(), r((mt.omit_until - fl.start).as_secs_f64()));
                m.insert("goodput_bps".into(), r(if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 }));
            }
        }
        flows.push(o);
    }
    let secs = end.as_secs_f64();
    let links: Vec<Value> = w
        .dirs
        .iter()
        .map(|d| {
            let ls = d.dev.stats();
            let qs = ls.queue;
            json!({
                "name": d.name,
                "from": w.nodes[d.from].name,
                "to": w.nodes[d.to].name,
                "rate_bps": d.rate_bps,
                "delay_ms": d.delay.as_millis_f64(),
                "tx_packets": ls.tx_pkts,
                "tx_bytes": ls.tx_bytes,
                "delivered_packets": d.delivered_pkts,
                "drops": d.drops_pkts,
                "lost_packets": d.lost_pkts,
                "ecn_marked": qs.marked_pkts,
                "utilization": r(d.dev.utilisation(end)),
                "throughput_bps": r(if secs > 0.0 { ls.tx_bytes as f64 * 8.0 / secs } else { 0.0 }),
                "queue_delay_mean_ms": r(qs.mean_sojourn().as_millis_f64()),
            })
        })
        .collect();
    let nodes: Vec<Value> = w
        .nodes
        .iter()
        .map(|n| {
            let ifaces: Vec<Value> = n.ifaces.iter().map(|(name, a, dev)| json!({ "name": name, "address": a.to_string(), "device": dev })).collect();
            json!({ "name": n.name, "address": n.addr.to_string(), "interfaces": ifaces })
        })
        .collect();
    let mut out = json!({ "flows": flows, "links": links, "nodes": nodes, "duration_s": secs });
    for m in &w.media {
        if let Some((key, v)) = m.medium.summary(secs) {
            out[key] = v;
        }
    }
    if let Some(v) = crate::tproxy::summary(w, end) {
        out["proxies"] = v;
    }
    crate::fairness::annotate(&mut out);
    out
}

/// When the sink of a finite transfer read its last byte (the first connection's, for a flow).
fn completed_at(client: &AnyApp, server: Option<&AnyApp>) -> Option<celltcp_engine::SimTime> {
    let sink = |r: &Role| match r {
        Role::Sink(s) => s.completed_at,
        Role::Writer(_) => None,
    };
    let c = match client {
        AnyApp::TcpClient(c) => sink(&c.role),
        _ => None,
    };
    let s = match server {
        Some(AnyApp::TcpServer(s)) => s.conns.first().and_then(|(_, r)| sink(r)),
        _ => None,
    };
    c.or(s)
}

/// The `iperf` (one row per interval report) and `ping` (one row per echo reply) tables, or
/// `None` when the run has no such rows.
pub(crate) fn app_tables(w: &World) -> (Option<Table>, Option<Table>) {
    let mut ip = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut udp = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut pg = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, f) in w.flows.iter().enumerate() {
        if let Some(m) = &f.meter {
            for rep in &m.reports {
                ip.0.push(i as i64);
                ip.1.push(rep.start.as_secs_f64());
                ip.2.push(rep.end.as_secs_f64());
                ip.3.push(rep.bytes as f64);
                ip.4.push(rep.bits_per_second);
                ip.5.push(if f.is_tcp() { rep.retransmits as f64 } else { f64::NAN });
                udp.0.push(rep.packets.map_or(f64::NAN, |p| p as f64));
                udp.1.push(rep.lost_packets.map_or(f64::NAN, |p| p as f64));
                udp.2.push(rep.jitter_ms.unwrap_or(f64::NAN));
                udp.3.push(i64::from(rep.omitted));
            }
        } else if let AnyApp::Ping(p) = &w.apps[f.client_app as usize].app {
            for (seq, sent, rtt) in &p.pinger.replies {
                pg.0.push(i as i64);
                pg.1.push(*seq as i64);
                pg.2.push(sent.as_secs_f64());
                pg.3.push(rtt.as_millis_f64());
            }
        }
    }
    let iperf = (!ip.0.is_empty()).then(|| {
        Table::new("iperf").i64("flow", ip.0).f64("start_s", ip.1).f64("end_s", ip.2).f64("bytes", ip.3).f64("bits_per_second", ip.4).f64("retransmits", ip.5)
            .f64("packets", udp.0).f64("lost_packets", udp.1).f64("jitter_ms", udp.2).i64("omitted", udp.3)
    });
    let ping = (!pg.0.is_empty()).then(|| Table::new("ping").i64("flow", pg.0).i64("seq", pg.1).f64("time_s", pg.2).f64("rtt_ms", pg.3));
    (iperf, ping)
}
