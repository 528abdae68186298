//! The LTE part of a run: the radio access network between the eNB and UE nodes, GTP-U on the
//! S1-U links, and the LTE metrics (per UE, per cell).
//!
//! In the topology a UE is a host and an eNB a router; between them sit two pseudo link
//! directions (downlink and uplink) attached to one shared medium, [`LteMedium`] (the device
//! seam, `device.rs`), which hands their packets to [`Ran`] instead of a wire. The
//! S1-U links between each eNB and the SGW/PGW node are ordinary links whose packets carry
//! the 36 bytes of GTP-U/UDP/IPv4 encapsulation (3GPP TS 29.281 §5.1: 8-byte GTP-U header,
//! plus UDP 8 and IPv4 20), so inner packets above `s1u_mtu − 36` are fragmented at the PGW.
//! The tunnels (TEIDs per UE and direction, the path switch) are `gtpu.rs`'s [`GtpTunnels`],
//! held here because they follow the RAN's handovers; [`X2Pcap`] captures X2-U forwarding.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use celltcp_engine::SimTime;
use celltcp_lte::ran::{HandoverEvent, Ran, RanOutput, RlfRecord, X2Sent};
use celltcp_lte::Direction;
use celltcp_net::gtpu::Tunnel;
use celltcp_net::pcap::{PcapWriter, Snaplen};
use celltcp_net::{Ipv4, Packet};
use serde_json::{json, Value};

use crate::device::{Medium, MediumOutput};
use crate::gtpu::GtpTunnels;
use crate::sinks::Sinks;

/// GTP-U (8) + UDP (8) + IPv4 (20) bytes added on S1-U (TS 29.281 §5.1).
pub const GTPU_OVERHEAD_BYTES: u32 = 36;

/// The port of UE `ue`'s downlink (`uplink` false) or uplink radio direction.
pub(crate) fn radio_port(ue: usize, uplink: bool) -> u32 {
    (ue as u32) << 1 | u32::from(uplink)
}

/// The counters at the previous time-series sample: (time, per UE (DL bits, DL PRBs, UL
/// bits), per cell (DL PRBs used, UL PRBs used)).
type LastSample = (SimTime, Vec<(u64, u64, u64)>, Vec<(u64, u64)>);

/// The RAN of a run as a shared medium: port [`radio_port`]`(ue, uplink)` is a UE's radio
/// direction; deliveries reach the UE node (downlink) or the serving eNB's node (uplink).
pub(crate) struct LteMedium {
    pub ran: Ran<Packet>,
    pub ue_node: Vec<usize>,
    pub enb_node: Vec<usize>,
    /// Downlink and uplink pseudo link directions of each UE.
    pub ue_dirs: Vec<[usize; 2]>,
    pub enb_names: Vec<String>,
    pub enb_positions: Vec<(f64, f64)>,
    last_bits: Option<Vec<(u64, u64)>>,
    out: Vec<RanOutput<Packet>>,
    last_sample: Option<LastSample>,
    /// The GTP-U tunnel endpoints of the eNBs and the SGW/PGW.
    pub gtp: GtpTunnels,
    /// The X2-U captures (`[lte.epc] pcap = true`).
    pub x2_pcap: Option<X2Pcap>,
    /// The WLAN legs of LWA UEs (`lwa.rs`), if any UE has one.
    pub lwa: Option<Box<crate::lwa::LwaLegs>>,
}

/// The X2-U captures: one file per pair of eNBs that forwarded data in a handover,
/// `pcap/x2-<a>-<b>.pcap` (`a` the one declared first), both directions, opened at the first
/// forwarded packet. Each packet is captured as its transmission on X2 starts: outer IPv4
/// source eNB → target eNB, UDP 2152, GTP-U with the target's forwarding TEID and the PDCP SN
/// in the PDCP PDU Number extension header (TS 36.424 §5.2; TS 29.281 §5.2.2.2), the SDU.
pub(crate) struct X2Pcap {
    dir: PathBuf,
    enb_addr: Vec<Ipv4>,
    /// Per pair of cells (lower index first): its file's path in the run directory, its writer.
    writers: Vec<((usize, usize), String, X2Writer)>,
}

type X2Writer = PcapWriter<BufWriter<File>>;

impl X2Pcap {
    pub fn new(dir: PathBuf, enb_addr: Vec<Ipv4>) -> Self {
        X2Pcap { dir, enb_addr, writers: Vec::new() }
    }

    /// Captures `x`, sent in the forwarding tunnel `teid`.
    fn write(&mut self, names: &[String], x: &X2Sent<Packet>, teid: u32) {
        let key = (x.source.min(x.target), x.source.max(x.target));
        let i = match self.writers.iter().position(|w| w.0 == key) {
            Some(i) => i,
            None => {
                let fname = crate::plan::pcap_file(&format!("x2-{}-{}", names[key.0], names[key.1]));
                let w = std::fs::create_dir_all(&self.dir)
                    .and_then(|_| File::create(self.dir.join(&fname)))
                    .and_then(|f| PcapWriter::new(BufWriter::new(f), Snaplen::Headers));
                let Ok(w) = w else { return };
                self.writers.push((key, format!("pcap/{fname}"), w));
                self.writers.len() - 1
            }
        };
        // TS 36.424 §5.2 numbers with the PDCP SN of 7, 12 or 15 bits (longer ones need the
        // Long PDCP PDU Number header, which is not written)
        let tun = Tunnel { src: self.enb_addr[x.source], dst: self.enb_addr[x.target], teid, pdcp_sn: Some(x.sn as u16) };
        let _ = self.writers[i].2.write_tunnelled(x.at, &tun, &x.sdu);
    }

    /// Flushes the files; returns their paths in the run directory.
    pub fn flush(&mut self) -> Vec<String> {
        self.writers
            .iter_mut()
            .map(|(_, f, w)| {
                let _ = w.flush();
                f.clone()
            })
            .collect()
    }
}

impl LteMedium {
    pub fn new(ran: Ran<Packet>, ue_node: Vec<usize>, enb_node: Vec<usize>, ue_dirs: Vec<[usize; 2]>, enbs: &[celltcp_lte::ran::EnbSpec], gtp: GtpTunnels, x2_pcap: Option<X2Pcap>) -> Self {
        LteMedium {
            ran,
            ue_node,
            enb_node,
            ue_dirs,
            enb_names: enbs.iter().map(|e| e.name.clone()).collect(),
            enb_positions: enbs.iter().map(|e| e.position).collect(),
            last_bits: None,
            out: Vec::new(),
            last_sample: None,
            gtp,
            x2_pcap,
            lwa: None,
        }
    }

    /// A WLAN-leg PDU back from the BSS at port [`crate::lwa::lwa_rx_port`].
    #[cold]
    fn lwa_rx(&mut self, now: SimTime, port: u32, pkt: Packet) -> Result<(), Packet> {
        let ue = (port & !crate::lwa::LWA_PORT_BIT) as usize;
        match self.lwa.as_mut() {
            Some(l) => {
                l.on_wlan_arrival(now, ue, pkt, &mut self.ran);
                Ok(())
            }
            None => Err(pkt),
        }
    }

    fn push_outputs(&self, ran_out: &mut Vec<RanOutput<Packet>>, out: &mut Vec<MediumOutput>) {
        for o in ran_out.drain(..) {
            out.push(match o {
                RanOutput::ToUe { ue, sdu } => MediumOutput::Deliver { dir: self.ue_dirs[ue][0] as u32, node: self.ue_node[ue] as u32, pkt: sdu },
                RanOutput::ToEpc { enb, ue, sdu } => MediumOutput::Deliver { dir: self.ue_dirs[ue][1] as u32, node: self.enb_node[enb] as u32, pkt: sdu },
                RanOutput::Dropped { ue, dir, sdu } => MediumOutput::Lost { dir: self.ue_dirs[ue][if dir == Direction::Downlink { 0 } else { 1 }] as u32, pkt: sdu },
            });
        }
    }

    /// The LTE medium's timer with LWA: the WLAN leg's arrivals at the UEs, the Xw arrivals at
    /// the APs, then the TTI if one is due.
    #[cold]
    fn on_timer_lwa(&mut self, now: SimTime, out: &mut Vec<MediumOutput>) {
        let mut l = self.lwa.take().expect("LWA");
        let mut stash = std::mem::take(&mut l.stash);
        self.push_outputs(&mut stash, out);
        l.stash = stash;
        l.on_timer(now, out);
        self.lwa = Some(l);
        if self.ran.next_tti(now).is_some_and(|t| t <= now) {
            self.tti(now, out);
        }
    }

    fn tti(&mut self, now: SimTime, out: &mut Vec<MediumOutput>) {
        let mut ran_out = std::mem::take(&mut self.out);
        self.ran.on_tti(now, &mut ran_out);
        if self.ran.handover_events().len() > self.gtp.fwd_teid.len() || self.ran.has_x2_log() {
            self.after_ran();
        }
        self.push_outputs(&mut ran_out, out);
        self.out = ran_out;
    }

    /// Follows the RAN's new handovers (the targets' TEIDs) and captures what it sent on X2-U.
    #[cold]
    fn after_ran(&mut self) {
        if self.ran.handover_events().len() > self.gtp.fwd_teid.len() {
            self.gtp.on_handovers(self.ran.handover_events());
        }
        if let Some(x2) = self.x2_pcap.as_mut() {
            let (gtp, names) = (&self.gtp, &self.enb_names);
            self.ran.take_x2_log(|x| x2.write(names, x, gtp.fwd_teid[x.event]));
        }
    }
}

impl Medium for LteMedium {
    /// Hands `pkt` to the radio: the eNB's PDCP for a downlink port, the UE's for an uplink one.
    #[inline]
    fn send(&mut self, now: SimTime, port: u32, pkt: Packet) -> Result<(), Packet> {
        if port & crate::lwa::LWA_PORT_BIT != 0 {
            return self.lwa_rx(now, port, pkt);
        }
        let ue = (port >> 1) as usize;
        let bytes = pkt.size();
        let r = if port & 1 == 0 { self.ran.on_downlink_sdu(now, ue, pkt, bytes) } else { self.ran.on_uplink_sdu(now, ue, pkt, bytes) };
        if let Some(l) = self.lwa.as_mut() {
            l.after_downlink(now, ue, &mut self.ran);
        }
        if self.ran.has_x2_log() {
            // a downlink SDU forwarded over X2-U during a handover
            self.after_ran();
        }
        r
    }

    /// The next TTI with work (data, a timer, a moving UE, a planned handover).
    #[inline]
    fn next_deadline(&mut self, after: SimTime) -> Option<SimTime> {
        match &self.lwa {
            None => self.ran.next_tti(after),
            Some(l) => [self.ran.next_tti(after), l.next_deadline(after)].into_iter().flatten().min(),
        }
    }

    /// One TTI of the RAN.
    fn on_timer(&mut self, now: SimTime, out: &mut Vec<MediumOutput>) {
        if self.lwa.is_some() {
            return self.on_timer_lwa(now, out);
        }
        self.tti(now, out);
    }

    /// Samples the LTE series into the `lte_ue` and `lte_cell` sinks: queues and CQI per UE,
    /// PRB use and throughput per cell over the last interval.
    fn sample(&mut self, now: SimTime, sinks: &mut Sinks) {
        let lte = self;
        let (Some(ue_sink), Some(cell_sink)) = (sinks.lte_ue.as_mut(), sinks.lte_cell.as_mut()) else { return };
        let t = now.as_secs_f64();
        let ran = &lte.ran;
        let ue_now: Vec<(u64, u64, u64)> = (0..ran.n_ues()).map(|u| {
            let s = ran.ue_stats(u);
            (s.dl_bits, s.dl_prbs, s.ul_bits)
        }).collect();
        let cell_now: Vec<(u64, u64)> = (0..ran.n_cells()).map(|c| {
            let s = ran.cell_stats(c);
            (s.dl_prbs_used, s.ul_prbs_used)
        }).collect();
        let cell_bits: Vec<(u64, u64)> = (0..ran.n_cells()).map(|c| {
            let s = ran.cell_stats(c);
            (s.dl_bits, s.ul_bits)
        }).collect();
        if let Some((t0, prev_ue, prev_cell)) = &lte.last_sample {
            let dt = now.saturating_since(*t0).as_secs_f64();
            if dt > 0.0 {
                let ttis = dt * 1000.0;
                for u in 0..ran.n_ues() {
                    let q = ran.ue_queues(u);
                    let cell = ran.serving_cell(u);
                    let pos = ran.position(u);
                    let best = (0..ran.n_cells()).filter(|&c| c != cell).map(|c| ran.rsrp_dbm(u, c)).fold(f64::NAN, f64::max);
                    ue_sink
                        .f64(t)
                        .i64(u as i64)
                        .f64(q.enb_rlc_tx_bytes as f64)
                        .f64(q.enb_rlc_retx_bytes as f64)
                        .f64(q.ue_rlc_tx_bytes as f64)
                        .f64(q.enb_pdcp_held_bytes as f64)
                        .f64(q.ue_pdcp_held_bytes as f64)
                        .f64(f64::from(q.cqi))
                        .f64((ue_now[u].0 - prev_ue[u].0) as f64 / dt / 1e6)
                        .f64((ue_now[u].1 - prev_ue[u].1) as f64 / ttis)
                        .i64(cell as i64)
                        .f64(pos.0)
                        .f64(pos.1)
                        .f64(ran.rsrp_dbm(u, cell))
                        .f64(best)
                        .i64(i64::from(ran.is_detached(u)))
                        .end_row();
                }
                let dl_prbs = f64::from(ran.config().dl_prbs);
                let ul_prbs = f64::from(ran.config().ul_prbs);
                for c in 0..ran.n_cells() {
                    // Throughput per cell from the bit counters (kept apart from PRBs).
                    let (dl_mbps, ul_mbps) = match &lte.last_bits {
                        Some(prev_bits) => ((cell_bits[c].0 - prev_bits[c].0) as f64 / dt / 1e6, (cell_bits[c].1 - prev_bits[c].1) as f64 / dt / 1e6),
                        None => (f64::NAN, f64::NAN),
                    };
                    cell_sink
                        .f64(t)
                        .i64(c as i64)
                        .f64((cell_now[c].0 - prev_cell[c].0) as f64 / (ttis * dl_prbs))
                        .f64((cell_now[c].1 - prev_cell[c].1) as f64 / (ttis * ul_prbs))
                        .f64(dl_mbps)
                        .f64(ul_mbps)
                        .end_row();
                }
            }
        }
        lte.last_bits = Some(cell_bits);
        lte.last_sample = Some((now, ue_now, cell_now));
    }

    fn summary(&self, secs: f64) -> Option<(&'static str, Value)> {
        lte_summary(self, secs).map(|v| ("lte", v))
    }
}

fn r3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A UE's `lwa` block (docs/lwa.md): per leg the PDUs and bytes steered, arrived, lost and the
/// mean and maximum one-way delay; the LTE:Wi-Fi packet ratio; the UE's reordering.
fn lwa_summary(l: &(celltcp_lte::lwa::LwaTxStats, celltcp_lte::lwa::ReorderStats, celltcp_engine::SimDuration), xw: Option<&crate::lwa::LwaUe>) -> Value {
    use celltcp_lte::lwa::LwaLeg;
    let (tx, rx, t_reo) = l;
    let leg = |g: LwaLeg| {
        let i = g as usize;
        json!({
            "pdus": tx.pdus[i],
            "bytes": tx.bytes[i],
            "arrived": tx.arrived[i],
            "lost": tx.lost[i],
            "delay_mean_ms": tx.mean_delay_s(g).map_or(f64::NAN, |d| r3(d * 1e3)),
            "delay_max_ms": r3(tx.delay_max_s[i] * 1e3),
            "probes": tx.probes[i],
        })
    };
    json!({
        "lte": leg(LwaLeg::Lte),
        "wifi": leg(LwaLeg::Wlan),
        "wifi_fraction": if tx.pdus[0] + tx.pdus[1] > 0 { r3(tx.pdus[1] as f64 / (tx.pdus[0] + tx.pdus[1]) as f64) } else { f64::NAN },
        "lte_to_wifi_ratio": if tx.pdus[1] > 0 { r3(tx.pdus[0] as f64 / tx.pdus[1] as f64) } else { f64::NAN },
        "xw_pkts": xw.map_or(0, |x| x.xw_pkts),
        "xw_bytes": xw.map_or(0, |x| x.xw_bytes),
        "reorder": {
            "delivered": rx.delivered,
            "reordered": rx.reordered,
            "delay_mean_ms": rx.mean_reorder_delay_s().map_or(f64::NAN, |d| r3(d * 1e3)),
            "delay_max_ms": r3(rx.reorder_delay_max_s * 1e3),
            "timeouts": rx.timeouts,
            "skipped": rx.skipped,
            "discarded": rx.discarded,
            "t_reordering_ms": r3(t_reo.as_millis_f64()),
        },
    })
}

/// The `lte` section of `summary.json`: per UE and per cell.
fn lte_summary(lte: &LteMedium, secs: f64) -> Option<Value> {
    let ran = &lte.ran;
    let ues: Vec<Value> = (0..ran.n_ues())
        .map(|u| {
            let s = ran.ue_stats(u);
            let (enb_rlc, ue_rlc) = ran.rlc_stats(u);
            // where the UE is at the end (a moving UE has left its start position)
            let pos = ran.position(u);
            let cell = ran.serving_cell(u);
            let dist = {
                let p = pos;
                let e = lte.enb_positions[cell];
                ((p.0 - e.0).powi(2) + (p.1 - e.1).powi(2)).sqrt()
            };
            let mean = |sum: f64, n: u64| if n > 0 { r3(sum / n as f64) } else { f64::NAN };
            let ratio = |a: u64, b: u64| if b > 0 { r3(a as f64 / b as f64) } else { 0.0 };
            let mut v = json!({
                "name": ran.ue_name(u),
                "cell": lte.enb_names[cell],
                "position_m": [r3(pos.0), r3(pos.1)],
                "distance_m": r3(dist),
                "dl": {
                    "sinr_db_mean": mean(s.dl_sinr_db_sum, s.dl_sinr_db_n),
                    "sinr_db_min": if s.dl_sinr_db_n > 0 { r3(s.dl_sinr_db_min) } else { f64::NAN },
                    "sinr_db_max": if s.dl_sinr_db_n > 0 { r3(s.dl_sinr_db_max) } else { f64::NAN },
                    "cqi_hist": s.dl_cqi_hist.to_vec(),
                    "mcs_hist": s.dl_mcs_hist.to_vec(),
                    "prbs_per_tti": ratio(s.dl_prbs, s.dl_ttis),
                    "prbs_total": s.dl_prbs,
                    "ttis_scheduled": s.dl_ttis,
                    "phy_throughput_bps": r3(s.dl_bits as f64 / secs),
                    "harq_tx": s.dl_tb_tx,
                    "harq_retx": s.dl_tb_retx,
                    "harq_failed": s.dl_tb_failed,
                    "bler": ratio(s.dl_tb_errors, s.dl_tb_tx + s.dl_tb_retx),
                    "residual_bler": ratio(s.dl_tb_failed, s.dl_tb_tx),
                    "first_tx_bler": ratio(s.dl_tb_first_errors, s.dl_tb_tx),
                    "rlc_pdus_tx": enb_rlc.pdus_tx,
                    "rlc_pdus_retx": enb_rlc.pdus_retx,
                    "rlc_sdus_dropped": enb_rlc.sdus_dropped_buffer,
                    "rlc_sdus_lost": ue_rlc.sdus_lost,
                    "pdcp_sdus_dropped": s.dl_sdus_dropped,
                },
                "ul": {
                    "sinr_db_mean": mean(s.ul_sinr_db_sum, s.ul_sinr_db_n),
                    "mcs_hist": s.ul_mcs_hist.to_vec(),
                    "prbs_per_tti": ratio(s.ul_prbs, s.ul_ttis),
                    "prbs_total": s.ul_prbs,
                    "ttis_scheduled": s.ul_ttis,
                    "phy_throughput_bps": r3(s.ul_bits as f64 / secs),
                    "harq_tx": s.ul_tb_tx,
                    "harq_retx": s.ul_tb_retx,
                    "harq_failed": s.ul_tb_failed,
                    "bler": ratio(s.ul_tb_errors, s.ul_tb_tx + s.ul_tb_retx),
                    "residual_bler": ratio(s.ul_tb_failed, s.ul_tb_tx),
                    "first_tx_bler": ratio(s.ul_tb_first_errors, s.ul_tb_tx),
                    "rlc_pdus_tx": ue_rlc.pdus_tx,
                    "rlc_pdus_retx": ue_rlc.pdus_retx,
                    "rlc_sdus_dropped": ue_rlc.sdus_dropped_buffer,
                    "rlc_sdus_lost": enb_rlc.sdus_lost,
                    "pdcp_sdus_dropped": s.ul_sdus_dropped,
                    "scheduling_requests": s.scheduling_requests,
                },
                "radio_link_failure": ran.radio_link_failure(u),
                "handovers": s.handovers,
                "radio_link_failures": s.radio_link_failures,
            });
            if let Some(l) = ran.lwa_stats(u) {
                v["lwa"] = lwa_summary(&l, lte.lwa.as_ref().and_then(|x| x.ues[u].as_ref()));
            }
            v
        })
        .collect();
    let ttis = secs * 1000.0;
    let cells: Vec<Value> = (0..ran.n_cells())
        .map(|c| {
            let s = ran.cell_stats(c);
            let ((x, y), boresight) = ran.cell_site(c);
            json!({
                "name": lte.enb_names[c],
                "x_m": x,
                "y_m": y,
                "boresight_deg": boresight,
                "dl_prb_utilization": r3(s.dl_prbs_used as f64 / (ttis * f64::from(ran.config().dl_prbs))),
                "ul_prb_utilization": r3(s.ul_prbs_used as f64 / (ttis * f64::from(ran.config().ul_prbs))),
                "dl_throughput_bps": r3(s.dl_bits as f64 / secs),
                "ul_throughput_bps": r3(s.ul_bits as f64 / secs),
            })
        })
        .collect();
    let events = ran.handover_events();
    let handovers: Vec<Value> = events
        .iter()
        .map(|e| {
            json!({
                "kind": e.kind,
                "ue": ran.ue_name(e.ue),
                "source": lte.enb_names[e.source],
                "target": lte.enb_names[e.target],
                "decided_s": e.decided_s,
                "detach_s": e.detach_s,
                "attach_s": if e.attach_s.is_finite() { json!(e.attach_s) } else { Value::Null },
                "path_switch_s": if e.path_switch_s.is_finite() { json!(e.path_switch_s) } else { Value::Null },
                "interruption_ms": if e.attach_s.is_finite() { json!(r3((e.attach_s - e.detach_s) * 1e3)) } else { Value::Null },
                "sdus_forwarded": e.sdus_forwarded,
                "sdus_forwarded_late": e.sdus_forwarded_late,
                "sdus_discarded": e.sdus_discarded,
                "sdus_discarded_received": e.sdus_discarded_received,
                "sdus_not_forwarded": e.sdus_not_forwarded,
                "sdus_already_received": e.sdus_already_received,
                "ul_sdus_resent": e.ul_sdus_resent,
                "harq_blocks_lost": e.harq_blocks_lost,
            })
        })
        .collect();
    // Mobility robustness classes of a radio link failure (TS 36.300 §22.4.2.2): too late
    // (after a long stay in the failed cell, or while a handover was being prepared, the UE
    // re-establishes in a different cell), too early (shortly after a handover into the failed
    // cell, back in the handover's source), to a wrong cell (shortly after a handover, in a
    // third cell); a failure re-established in the same cell after a long stay is coverage
    // (no better cell). "Shortly" is less than `MRO_SHORT_STAY_S` after arrival.
    let causes: Vec<&str> = ran.rlf_records().iter().map(|r| rlf_cause(r, events)).collect();
    let rlf: Vec<Value> = ran
        .rlf_records()
        .iter()
        .zip(&causes)
        .map(|(r, cause)| {
            json!({
                "ue": ran.ue_name(r.ue),
                "cell": lte.enb_names[r.cell],
                "t310_start_s": if r.t310_start_s.is_finite() { json!(r.t310_start_s) } else { Value::Null },
                "failure_s": r.failure_s,
                "reestablished_to": lte.enb_names[r.reestablished_to],
                "during_handover": r.during_handover,
                "cause": cause,
            })
        })
        .collect();
    // A ping-pong: a handover back to the cell the UE left less than 1 s earlier (the
    // minimum time of stay of 3GPP TR 36.839 §6.2.1).
    let mut ping_pongs = 0;
    for (i, e) in events.iter().enumerate().filter(|(_, e)| e.kind == "handover") {
        if let Some(prev) = events[..i].iter().rev().find(|p| p.ue == e.ue) {
            if prev.target == e.source && e.target == prev.source && prev.attach_s.is_finite() && e.decided_s - prev.attach_s < 1.0 {
                ping_pongs += 1;
            }
        }
    }
    let counts = json!({
        "handovers": events.iter().filter(|e| e.kind == "handover").count(),
        "reestablishments": events.iter().filter(|e| e.kind == "reestablishment").count(),
        "radio_link_failures": ran.rlf_records().len(),
        "too_late_handovers": causes.iter().filter(|&&c| c == "too-late").count(),
        "too_early_handovers": causes.iter().filter(|&&c| c == "too-early").count(),
        "wrong_cell_handovers": causes.iter().filter(|&&c| c == "wrong-cell").count(),
        "ping_pongs": ping_pongs,
    });
    Some(json!({ "ues": ues, "cells": cells, "handovers": handovers, "radio_link_failures": rlf, "mobility": counts }))
}

/// Below this time in a cell after a handover into it, a radio link failure there is blamed
/// on that handover (too early, or to a wrong cell); TS 36.300 §22.4.2.2 leaves the limit to
/// the network (it keeps the UE context that long), this is the 1 s minimum time of stay of
/// TR 36.839 §6.2.1 that also defines ping-pongs.
const MRO_SHORT_STAY_S: f64 = 1.0;

/// The mobility robustness class of radio link failure `r` (TS 36.300 §22.4.2.2):
/// `"too-late"`, `"too-early"`, `"wrong-cell"` or `"coverage"`.
fn rlf_cause(r: &RlfRecord, events: &[HandoverEvent]) -> &'static str {
    if r.during_handover {
        return "too-late";
    }
    let arrival = events
        .iter()
        .rev()
        .find(|e| e.ue == r.ue && e.kind == "handover" && e.target == r.cell && e.attach_s.is_finite() && e.attach_s <= r.failure_s);
    match arrival {
        Some(e) if r.failure_s - e.attach_s < MRO_SHORT_STAY_S => {
            if r.reestablished_to == e.source {
                "too-early"
            } else if r.reestablished_to != r.cell {
                "wrong-cell"
            } else {
                "coverage"
            }
        }
        _ if r.reestablished_to != r.cell => "too-late",
        _ => "coverage",
    }
}
