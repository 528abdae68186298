//! The WLAN leg of LTE–WLAN aggregation in a run (`[[lte.ue]] lwa`, docs/lwa.md; the split
//! bearer itself is `celltcp_lte::lwa`).
//!
//! The eNB's PDCP steers a downlink PDU to the WLAN (`Ran::take_wlan`): the PDU crosses the Xw
//! link (a FIFO of its own per LWA UE, rate and one-way delay; serialisation then propagation)
//! to the AP, which queues it in its BSS for the UE's station (a [`MediumOutput::Relay`] to the
//! Wi-Fi medium's port, so it contends and is retried like any frame). On the WLAN the packet
//! carries the PDCP header and the LWAAP header (TS 36.360 §6.2.2, one octet) as `encap` bytes,
//! and its COUNT in `teid` (not counted in any size). The BSS hands it back to the UE's PDCP
//! (`wlan.rs`, a relay to [`lwa_rx_port`] of the LTE medium), where the reordering across both
//! legs delivers it. A PDU lost in the BSS (a full AP queue, the retry limit) is a loss of the
//! station's downlink direction; the reordering gives it up after t-Reordering.

use std::collections::VecDeque;

use celltcp_engine::{SimDuration, SimTime};
use celltcp_lte::lwa::LWAAP_HEADER_BYTES;
use celltcp_lte::pdcp::PdcpPdu;
use celltcp_lte::ran::{Ran, RanOutput};
use celltcp_net::Packet;

use crate::device::MediumOutput;

/// The bit of an LTE medium port that marks the WLAN leg's return to UE `port & !LWA_PORT_BIT`.
pub(crate) const LWA_PORT_BIT: u32 = 1 << 31;

/// The LTE medium's port where UE `ue`'s WLAN-leg PDUs come back from the BSS.
pub(crate) fn lwa_rx_port(ue: usize) -> u32 {
    LWA_PORT_BIT | ue as u32
}

/// One LWA UE's WLAN leg.
pub(crate) struct LwaUe {
    /// The Wi-Fi medium, the UE station's downlink port and direction.
    pub wifi_medium: u32,
    pub wifi_port: u32,
    pub sta_dir: u32,
    pub xw_rate_bps: u64,
    pub xw_delay: SimDuration,
    busy_until: SimTime,
    /// PDUs on Xw: (arrival at the AP, packet).
    xw: VecDeque<(SimTime, Packet)>,
    /// PDUs sent over Xw (packets and bytes, LWAAP and PDCP headers included).
    pub xw_pkts: u64,
    pub xw_bytes: u64,
}

impl LwaUe {
    pub fn new(wifi_medium: u32, wifi_port: u32, sta_dir: u32, xw_rate_bps: u64, xw_delay: SimDuration) -> Self {
        LwaUe { wifi_medium, wifi_port, sta_dir, xw_rate_bps, xw_delay, busy_until: SimTime::ZERO, xw: VecDeque::new(), xw_pkts: 0, xw_bytes: 0 }
    }
}

/// The WLAN legs of the LWA UEs of a run, held by the LTE medium.
pub(crate) struct LwaLegs {
    pub ues: Vec<Option<LwaUe>>,
    /// What the WLAN leg's arrivals delivered (or dropped) at the UEs, for the next `on_timer`.
    pub stash: Vec<RanOutput<Packet>>,
    buf: Vec<PdcpPdu<Packet>>,
}

impl LwaLegs {
    pub fn new(ues: Vec<Option<LwaUe>>) -> Self {
        LwaLegs { ues, stash: Vec::new(), buf: Vec::new() }
    }

    /// After a downlink SDU for `ue` went into its eNB's PDCP: the PDUs steered to the WLAN go
    /// onto Xw.
    pub fn after_downlink(&mut self, now: SimTime, ue: usize, ran: &mut Ran<Packet>) {
        let Some(l) = self.ues[ue].as_mut() else { return };
        ran.take_wlan(ue, &mut self.buf);
        for pdu in self.buf.drain(..) {
            let mut pkt = pdu.sdu;
            pkt.encap = (pdu.bytes - pdu.sdu_bytes + LWAAP_HEADER_BYTES) as u16;
            pkt.teid = pdu.count;
            let bytes = u64::from(pkt.size());
            let start = l.busy_until.max(now);
            l.busy_until = start + SimDuration::transmission(bytes, l.xw_rate_bps);
            l.xw.push_back((l.busy_until + l.xw_delay, pkt));
            l.xw_pkts += 1;
            l.xw_bytes += bytes;
        }
    }

    /// The earliest Xw arrival, or `after` when arrivals wait in the stash.
    pub fn next_deadline(&self, after: SimTime) -> Option<SimTime> {
        if !self.stash.is_empty() {
            return Some(after);
        }
        self.ues.iter().flatten().filter_map(|l| l.xw.front().map(|x| x.0.max(after))).min()
    }

    /// Xw arrivals due at `now` go into the AP's BSS.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<MediumOutput>) {
        for l in self.ues.iter_mut().flatten() {
            while l.xw.front().is_some_and(|x| x.0 <= now) {
                let (_, pkt) = l.xw.pop_front().expect("front checked");
                out.push(MediumOutput::Relay { dir: l.sta_dir, medium: l.wifi_medium, port: l.wifi_port, pkt });
            }
        }
    }

    /// A WLAN-leg PDU reached UE `ue`'s station: back into a PDCP PDU, into the reordering.
    pub fn on_wlan_arrival(&mut self, now: SimTime, ue: usize, mut pkt: Packet, ran: &mut Ran<Packet>) {
        let header = u32::from(pkt.encap).saturating_sub(LWAAP_HEADER_BYTES);
        let count = pkt.teid;
        pkt.encap = 0;
        pkt.teid = 0;
        let sdu_bytes = pkt.size();
        let sn = count & (ran.config().pdcp.sn_space() - 1);
        let pdu = PdcpPdu { sn, count, sdu: pkt, sdu_bytes, bytes: sdu_bytes + header };
        ran.on_wlan_pdu(now, ue, pdu, &mut self.stash);
    }
}

/// Wires the LWA UEs of a run (`ue_lwa`, per UE of the RAN) to their APs' BSSs: the RAN's split
/// bearers, the LTE medium's WLAN legs, the Wi-Fi medium's way back. `wifi_medium` is the Wi-Fi
/// medium's index, `sta_base[b]` the first station port index of BSS `b`.
pub(crate) fn wire(
    lte: Option<&mut crate::cellular::LteMedium>,
    mut wifi: Option<&mut crate::wlan::WifiMedium>,
    ue_lwa: &[Option<crate::lwa_config::LwaUePlan>],
    wifi_medium: u32,
    sta_base: &[usize],
) -> Result<(), crate::error::ScenarioError> {
    let Some(lte) = lte else { return Ok(()) };
    if ue_lwa.iter().all(Option::is_none) {
        return Ok(());
    }
    let mut legs = Vec::with_capacity(ue_lwa.len());
    for (ue, p) in ue_lwa.iter().enumerate() {
        let Some(p) = p else {
            legs.push(None);
            continue;
        };
        let name = lte.ran.ue_name(ue).to_string();
        let node = lte.ue_node[ue];
        let found = wifi.as_deref().and_then(|w| {
            w.bsss.iter().enumerate().filter(|(_, b)| b.ap_name == p.ap).find_map(|(b, bss)| bss.sta_node.iter().position(|&n| n == node).map(|s| (b, s)))
        });
        let Some((b, s)) = found else {
            return Err(crate::error::ScenarioError::new(
                "lte.ue.lwa.ap",
                format!("ap = {:?} (UE {name:?}): expected the name of a [[wifi]] ap that has {name:?} among its stations", p.ap),
            ));
        };
        let w = wifi.as_deref_mut().expect("found in it");
        let sta_dir = w.bsss[b].sta_dirs[s][0] as u32;
        let bss = &mut w.bsss[b];
        if bss.lwa_return.len() < bss.sta_node.len() {
            bss.lwa_return.resize(bss.sta_node.len(), None);
        }
        bss.lwa_return[s] = Some((0, lwa_rx_port(ue), lte.ue_dirs[ue][0] as u32));
        // the probe response's way back over the LTE uplink (lwa.rs in celltcp-lte): a small
        // packet's uplink access, the mean wait for an SR opportunity plus the grant's 4 ms
        // (TS 36.213 §8.0) and the PUSCH's 1 ms (the closed form checked in ran/tests.rs)
        let mut cfg = p.cfg;
        cfg.probe_return = lte.ran.config().sr_period / 2 + SimDuration::from_millis(5);
        lte.ran.enable_lwa(ue, cfg);
        legs.push(Some(LwaUe::new(wifi_medium, crate::wlan::wifi_port(sta_base[b] + s, false), sta_dir, p.xw_rate_bps, p.xw_delay)));
    }
    lte.lwa = Some(Box::new(LwaLegs::new(legs)));
    Ok(())
}
