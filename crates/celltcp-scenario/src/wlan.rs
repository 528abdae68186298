//! The Wi-Fi part of a run: each `[[wifi]]` BSS ([`celltcp_wifi::Bss`]) between its AP node and
//! its station nodes, and its metrics (per BSS, per station).
//!
//! In the topology the AP is a router and each station a host; between the AP and each station
//! sit two pseudo link directions (downlink AP → station, uplink station → AP) that hand their
//! packets to the BSS instead of a wire, as the LTE radio directions hand theirs to the RAN
//! (`cellular.rs`). The packet handed over is the IP datagram (at most the 1500-byte MTU); the
//! model adds LLC/SNAP, the MAC header and FCS (and A-MPDU delimiters) itself. Traffic between
//! two stations goes up to the AP node and down again, as the distribution system relays it
//! (IEEE 802.11-2016 §4.3.5.2): two transmissions on the air.
//!
//! All BSSs of a run are one shared medium of the device seam (`device.rs`): port
//! [`wifi_port`]`(k, uplink)` is the k-th station's (counted over the BSSs in order) downlink or
//! uplink direction. The BSSs sit in one [`celltcp_wifi::Medium`], which puts those with the
//! same `channel` (and band) in one contention domain and keeps the others apart;
//! `Medium::on_timer` runs each channel whose deadline has come; an idle one asks for no event
//! at all.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use celltcp_engine::SimTime;
use celltcp_net::pcap::{encode_headers, PcapWriter, Snaplen, LINKTYPE_RAW};
use celltcp_net::Packet;
use celltcp_wifi::air::{AirLog, LINKTYPE_IEEE802_11_RADIOTAP};
use celltcp_wifi::{Bss, Node, StaId, WifiOutput};

type Air = celltcp_wifi::Medium<Packet>;
use serde_json::{json, Value};

use crate::device::{Medium, MediumOutput};
use crate::error::ScenarioError;
use crate::plan::PlanWifi;
use crate::sinks::Sinks;

/// The port of the `k`-th station of the run (over every BSS, in order), one per direction.
pub(crate) fn wifi_port(k: usize, uplink: bool) -> u32 {
    (k as u32) << 1 | u32::from(uplink)
}

/// Counters of a BSS at the previous time-series sample: (time, busy ns attributed to the
/// intervals so far, per station (down bytes, up bytes, airtime ns)).
type LastSample = (SimTime, u64, Vec<(u64, u64, u64)>);

/// One BSS of the run and its place in the topology.
pub(crate) struct WlanBss {
    pub name: String,
    /// The channel number given in `[[wifi]]`, if any.
    pub channel: Option<u32>,
    pub ap_node: usize,
    pub sta_node: Vec<usize>,
    /// Downlink and uplink pseudo link directions of each station.
    pub sta_dirs: Vec<[usize; 2]>,
    pub distances_m: Vec<f64>,
    /// Each station's `[x, y]`, metres (with `positions`).
    pub positions: Option<Vec<[f64; 2]>>,
    pub ap_name: String,
    pub sta_names: Vec<String>,
    pcap: Option<PcapWriter<BufWriter<File>>>,
    /// `pcap/<name>.air.pcap`: the 802.11 frames on the air (`pcap_air`).
    air_pcap: Option<PcapWriter<BufWriter<File>>>,
    last_sample: Option<LastSample>,
    /// Per station: the LTE medium, port and downlink direction its LWA PDUs return to (a
    /// station that is an LWA UE, `lwa.rs`), else `None`.
    pub lwa_return: Vec<Option<(u32, u32, u32)>>,
}

/// Every BSS of a run, as one shared medium.
pub(crate) struct WifiMedium {
    pub bsss: Vec<WlanBss>,
    /// The models of the BSSs, in the order of `bsss`.
    pub air: Air,
    /// (BSS, station) of each port pair.
    ports: Vec<(u32, StaId)>,
    out: Vec<(usize, WifiOutput<Packet>)>,
}

/// Builds the BSSs of a plan into one medium; a BSS with `pcap` gets `pcap/<name>.pcap` in
/// `out_dir` (added to `files`). `node_names` names the plan's nodes.
pub(crate) fn build(plans: Vec<PlanWifi>, node_names: &[String], seed: u64, out_dir: Option<&Path>, files: &mut Vec<String>) -> Result<WifiMedium, ScenarioError> {
    let io = |e: std::io::Error| ScenarioError::new("", format!("cannot create output files: {e}"));
    let mut bsss = Vec::with_capacity(plans.len());
    let mut ports = Vec::new();
    let mut air = Air::new();
    for (b, p) in plans.into_iter().enumerate() {
        let stem = p.plan.name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_', "_");
        let mut open = |on: bool, fname: String, snaplen: Snaplen, link_type: u32| -> Result<_, ScenarioError> {
            let Some(dir) = out_dir.filter(|_| on) else { return Ok(None) };
            let pdir = dir.join("pcap");
            std::fs::create_dir_all(&pdir).map_err(io)?;
            let w = PcapWriter::with_link_type(BufWriter::new(File::create(pdir.join(&fname)).map_err(io)?), snaplen, link_type).map_err(io)?;
            files.push(format!("pcap/{fname}"));
            Ok(Some(w))
        };
        let pcap = open(p.plan.pcap, format!("{stem}.pcap"), Snaplen::Headers, LINKTYPE_RAW)?;
        // the name's '.' is never in a sanitised stem: no link's or BSS's file can be this one
        let air_pcap = open(p.plan.pcap_air, format!("{stem}.air.pcap"), Snaplen::Bytes(65_535), LINKTYPE_IEEE802_11_RADIOTAP)?;
        ports.extend((0..p.sta_node.len()).map(|s| (b as u32, s as StaId)));
        let mut bss = match &p.plan.snrs_db {
            Some(snrs) => Bss::with_snrs(p.plan.bss, snrs, seed, &p.plan.name),
            None => Bss::new(p.plan.bss, &p.plan.distances_m, seed, &p.plan.name),
        };
        if air_pcap.is_some() {
            bss.enable_air_capture(&p.plan.name);
        }
        if let Some(h) = p.plan.hears {
            bss.set_hears(h);
        }
        if let Some((pos, ap)) = &p.plan.positions {
            // other BSSs on its channel judge its frames with their own SNR, and it theirs
            bss.set_positions(*ap, pos, seed, &p.plan.name);
        }
        air.add(bss, p.plan.channel).map_err(|m| ScenarioError::new(format!("wifi[{b}].channel"), m))?;
        bsss.push(WlanBss {
            name: p.plan.name,
            channel: p.plan.channel,
            ap_node: p.ap_node,
            ap_name: node_names[p.ap_node].clone(),
            sta_names: p.sta_node.iter().map(|&n| node_names[n].clone()).collect(),
            sta_node: p.sta_node,
            sta_dirs: p.sta_dirs,
            distances_m: p.plan.distances_m,
            positions: p.plan.positions.map(|x| x.0),
            pcap,
            air_pcap,
            last_sample: None,
            lwa_return: Vec::new(),
        });
    }
    Ok(WifiMedium { bsss, air, ports, out: Vec::new() })
}

impl Medium for WifiMedium {
    /// Queues `pkt` in its BSS: at the AP for the station (downlink port) or at the station for
    /// the AP (uplink port); a full queue hands it back.
    fn send(&mut self, now: SimTime, port: u32, pkt: Packet) -> Result<(), Packet> {
        let (b, sta) = self.ports[(port >> 1) as usize];
        let wb = &mut self.bsss[b as usize];
        if let Some(w) = wb.pcap.as_mut() {
            let _ = w.write_packet(now, &pkt);
        }
        let (from, to) = if port & 1 == 0 { (Node::Ap, Node::Sta(sta)) } else { (Node::Sta(sta), Node::Ap) };
        let bytes = pkt.size();
        self.air.bss_mut(b as usize).enqueue(now, from, to, pkt, bytes)
    }

    fn next_deadline(&mut self, after: SimTime) -> Option<SimTime> {
        self.air.next_deadline().map(|t| t.max(after))
    }

    /// Runs every channel whose deadline has come: PPDUs end (their MSDUs reach the AP or the
    /// station node) and the next exchanges start.
    fn on_timer(&mut self, now: SimTime, out: &mut Vec<MediumOutput>) {
        self.air.on_timer(now, &mut self.out);
        for (b, o) in self.out.drain(..) {
            let wb = &self.bsss[b];
            match o {
                WifiOutput::Delivered { from, to, pkt, .. } => {
                    let (node, dir) = match (from, to) {
                        (Node::Sta(s), _) => (if let Node::Sta(t) = to { wb.sta_node[t as usize] } else { wb.ap_node }, wb.sta_dirs[s as usize][1]),
                        (Node::Ap, Node::Sta(s)) => {
                            // an LWA PDU (LWAAP + PDCP headers as `encap`) goes back to the
                            // UE's PDCP, not to its IP layer
                            if pkt.encap != 0 {
                                if let Some(&Some((medium, port, dir))) = wb.lwa_return.get(s as usize) {
                                    out.push(MediumOutput::Relay { dir, medium, port, pkt });
                                    continue;
                                }
                            }
                            (wb.sta_node[s as usize], wb.sta_dirs[s as usize][0])
                        }
                        (Node::Ap, Node::Ap) => unreachable!("the AP never sends to itself"),
                    };
                    out.push(MediumOutput::Deliver { dir: dir as u32, node: node as u32, pkt });
                }
                WifiOutput::Dropped { node, to, pkt, .. } => {
                    let dir = match (node, to) {
                        (Node::Sta(s), _) => wb.sta_dirs[s as usize][1],
                        (Node::Ap, Node::Sta(s)) => wb.sta_dirs[s as usize][0],
                        (Node::Ap, Node::Ap) => unreachable!("the AP never sends to itself"),
                    };
                    out.push(MediumOutput::Lost { dir: dir as u32, pkt });
                }
            }
        }
        for (b, wb) in self.bsss.iter_mut().enumerate() {
            if let (Some(w), Some(log)) = (wb.air_pcap.as_mut(), self.air.bss_mut(b).air_log()) {
                write_air(w, log);
            }
        }
    }

    /// Samples the Wi-Fi series: per BSS the channel busy fraction over the last interval,
    /// per station its goodput both ways, airtime share, queues and MCS.
    fn sample(&mut self, now: SimTime, sinks: &mut Sinks) {
        let (Some(bss_sink), Some(sta_sink)) = (sinks.wifi_bss.as_mut(), sinks.wifi_sta.as_mut()) else { return };
        let t = now.as_secs_f64();
        let air = &self.air;
        for (b, wb) in self.bsss.iter_mut().enumerate() {
            let bss = air.bss(b);
            let n = bss.n_stations();
            let busy = bss.bss_stats().busy_ns;
            let cur: Vec<(u64, u64, u64)> = (0..n)
                .map(|s| {
                    let st = bss.sta_stats(s as StaId);
                    (st.down.delivered_bytes, st.up.delivered_bytes, st.airtime_ns())
                })
                .collect();
            if let Some((t0, busy0, prev)) = &wb.last_sample {
                let dt_ns = now.saturating_since(*t0).as_nanos();
                if dt_ns > 0 {
                    let dt = dt_ns as f64 * 1e-9;
                    // The model counts an exchange's air time when it starts; an exchange that
                    // runs past this sample has its remainder carried into the next interval.
                    let busy_here = (busy - busy0).min(dt_ns);
                    bss_sink.f64(t).i64(b as i64).f64(busy_here as f64 / dt_ns as f64).f64(cur.iter().zip(prev).map(|(c, p)| (c.0 - p.0) + (c.1 - p.1)).sum::<u64>() as f64 * 8.0 / dt / 1e6).end_row();
                    for s in 0..n {
                        let st = bss.sta_stats(s as StaId);
                        let mcs = |h: &[u64; 10]| h.iter().enumerate().rev().max_by_key(|(_, &c)| c).filter(|(_, &c)| c > 0).map_or(-1, |(m, _)| m as i64);
                        sta_sink
                            .f64(t)
                            .i64(b as i64)
                            .i64(s as i64)
                            .f64((cur[s].0 - prev[s].0) as f64 * 8.0 / dt / 1e6)
                            .f64((cur[s].1 - prev[s].1) as f64 * 8.0 / dt / 1e6)
                            .f64((cur[s].2 - prev[s].2) as f64 / dt_ns as f64)
                            .f64(bss.queue_len(Node::Ap, Node::Sta(s as StaId)) as f64)
                            .f64(bss.queue_len(Node::Sta(s as StaId), Node::Ap) as f64)
                            .i64(mcs(&st.down.mcs_hist))
                            .i64(mcs(&st.up.mcs_hist))
                            .end_row();
                    }
                }
            }
            // the busy time attributed so far (the carry stays unattributed until the next one)
            let attributed = match &wb.last_sample {
                Some((t0, busy0, _)) => busy0 + (busy - busy0).min(now.saturating_since(*t0).as_nanos()),
                None => busy,
            };
            wb.last_sample = Some((now, attributed, cur));
        }
    }

    fn summary(&self, secs: f64) -> Option<(&'static str, Value)> {
        wifi_summary(self, secs).map(|v| ("wifi", v))
    }
}

/// Writes the frames `log` recorded (each exchange whole when it starts, so a file can end
/// with an exchange that runs past the end of the run): radiotap + 802.11 frame + FCS, the
/// MSDU the IP packet with its real headers and a zero payload (as the IP capture has it; an
/// LWA PDU's LWAAP/PDCP bytes are left out).
fn write_air(w: &mut PcapWriter<BufWriter<File>>, log: &mut AirLog<Packet>) {
    let ch = log.channel;
    let mut buf = Vec::with_capacity(2048);
    let mut ip = |p: &Packet, out: &mut Vec<u8>| {
        let start = out.len();
        encode_headers(p, out);
        out.resize(start + (p.size() - p.encap as u32) as usize, 0);
    };
    for f in log.drain() {
        buf.clear();
        f.encode_radiotap(ch, &mut buf);
        f.encode_mac(&mut ip, &mut buf);
        let _ = w.write_frame(f.at, &buf);
    }
}

/// The `wifi` part of `summary.json`: one entry per BSS with its stations.
fn wifi_summary(w: &WifiMedium, secs: f64) -> Option<Value> {
    if w.bsss.is_empty() {
        return None;
    }
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let elapsed = celltcp_engine::SimDuration::from_nanos((secs * 1e9).round() as u64);
    let bsss: Vec<Value> = w
        .bsss
        .iter()
        .enumerate()
        .map(|(b, wb)| {
            let bss = w.air.bss(b);
            let cfg = bss.config();
            let bs = bss.bss_stats();
            let dir = |l: &celltcp_wifi::LinkStats| {
                let ratio = |a: u64, b: u64| if b > 0 { r3(a as f64 / b as f64) } else { 0.0 };
                json!({
                    "goodput_bps": r3(l.goodput_bps(elapsed)),
                    "delivered_packets": l.delivered_pkts,
                    "delivered_bytes": l.delivered_bytes,
                    "queue_drops": l.queue_drops,
                    "retry_drops": l.retry_drops,
                    "mpdu_tx": l.mpdu_tx,
                    "mac_retries": l.mpdu_retx,
                    "retry_ratio": ratio(l.mpdu_retx, l.mpdu_tx),
                    "ppdu_tx": l.ppdu_tx,
                    "collisions": l.collisions,
                    "ppdu_failed": l.ppdu_failed,
                    "ampdu_mpdus_mean": r3(l.mean_ampdu_mpdus()),
                    "queue_delay_mean_ms": r3(l.mean_queue_delay_s() * 1e3),
                    "mac_delay_mean_ms": if l.delivered_pkts > 0 { r3(l.mac_delay_ns_sum as f64 / l.delivered_pkts as f64 * 1e-6) } else { f64::NAN },
                    "airtime_fraction": if secs > 0.0 { r3(l.airtime_ns as f64 * 1e-9 / secs) } else { 0.0 },
                    "mcs_hist": l.mcs_hist.to_vec(),
                })
            };
            let stations: Vec<Value> = (0..bss.n_stations())
                .map(|s| {
                    let st = bss.sta_stats(s as StaId);
                    let mut j = json!({
                        "name": wb.sta_names[s],
                        "distance_m": r3(wb.distances_m[s]),
                        "snr_db": r3(bss.snr_db(s as StaId)),
                        "down": dir(&st.down),
                        "up": dir(&st.up),
                    });
                    if let Some(p) = &wb.positions {
                        j["position_m"] = json!([r3(p[s][0]), r3(p[s][1])]);
                    }
                    j
                })
                .collect();
            let goodputs: Vec<f64> = (0..bss.n_stations())
                .map(|s| {
                    let st = bss.sta_stats(s as StaId);
                    (st.down.delivered_bytes + st.up.delivered_bytes) as f64
                })
                .collect();
            let total: f64 = goodputs.iter().sum();
            let mut j = json!({
                "name": wb.name,
                "ap": wb.ap_name,
                "standard": cfg.standard.name(),
                "width_mhz": cfg.width_mhz,
                "streams": cfg.nss,
                "short_gi": cfg.short_gi,
                "rate_control": match cfg.rate {
                    celltcp_wifi::RateKind::Constant(m) => format!("constant:{m}"),
                    celltcp_wifi::RateKind::Ideal => "ideal".into(),
                    celltcp_wifi::RateKind::Minstrel => "minstrel".into(),
                },
                "ampdu": cfg.ampdu,
                "rts_cts": cfg.rts_cts,
                "goodput_bps": r3(if secs > 0.0 { total * 8.0 / secs } else { 0.0 }),
                "channel_busy_fraction": r3(bs.busy_fraction(elapsed)),
                "txops": bs.txops,
                "collisions": bs.collisions,
                "jain_index": r3(crate::fairness::jain(&goodputs).unwrap_or(1.0)),
                "stations": stations,
            });
            if let Some(c) = wb.channel {
                j["channel"] = json!(c);
                j["cochannel_bsss"] = json!(w.air.cochannel(b).iter().map(|&o| w.bsss[o].name.as_str()).collect::<Vec<_>>());
            }
            j
        })
        .collect();
    Some(Value::Array(bsss))
}
