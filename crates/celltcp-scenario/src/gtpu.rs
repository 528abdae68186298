//! The GTP-U tunnel endpoints of the EPC's user plane: one at each eNB and one at the
//! SGW/PGW (3GPP TS 23.401 §5.3.2, TS 29.281), and the X2-U forwarding tunnels of handovers
//! (TS 36.424).
//!
//! A UE's default bearer has two S1-U tunnels, one per direction, each named by the TEID its
//! *receiving* endpoint allocated (TS 23.401 §5.3.2.1 and §5.5.1.1.2):
//!
//! - **uplink** (eNB → SGW/PGW): TEID allocated by the SGW at attach (Create Session Response,
//!   the "S1-U SGW F-TEID"); the SGW is not relocated by an X2 handover, so it keeps it;
//! - **downlink** (SGW/PGW → eNB): TEID allocated by the serving eNB at attach (Initial Context
//!   Setup Response); at an X2 handover the target allocates a new one at admission and the
//!   SGW switches to it, and to the target's address, at the path switch (Path Switch Request,
//!   Modify Bearer Request: TS 23.401 §5.5.1.1.2 steps 1–4).
//! - **X2-U forwarding**: the target allocates a DL forwarding TEID at admission (HANDOVER
//!   REQUEST ACKNOWLEDGE, TS 36.423 §9.1.1.2) and the source sends the forwarded PDCP SDUs to it
//!   with their PDCP SN in a GTP-U extension header (TS 36.424 §5.2).
//!
//! Each endpoint allocates from its own counter, from 1 (TEID 0 is reserved: TS 29.281 §5.1
//! allows it only for messages not tied to a tunnel).
//!
//! In the run the PGW encapsulates a UE's downlink and sends it on the S1-U of the eNB that
//! holds the UE's tunnel (the source until the path switch, the target after), and the eNB
//! decapsulates and hands the packet to the UE's bearer (an eNB that is not on the UE's IP
//! route, the target after a handover, finds the UE by the TEID: `World::gtp_encap`); uplink
//! packets are encapsulated at the eNB with the UE's uplink TEID and decapsulated at the PGW.
//! A packet carries its tunnel as two fields (`Packet::encap`, the 36 bytes counted in its
//! size, and `Packet::teid`, which it keeps after decapsulation); the outer addresses are the
//! S1-U link's ends, and pcap writes the outer headers from them ([`celltcp_net::gtpu`]).

use celltcp_lte::ran::{HandoverEvent, Ran};
use celltcp_net::{Ipv4, Packet};

use crate::world::FastMap;

/// No UE (a node that is not a UE).
const NO_UE: u32 = u32::MAX;

/// The tunnel endpoints of a run's EPC.
pub(crate) struct GtpTunnels {
    /// Per node: its UE index, or [`NO_UE`].
    ue_of_node: Vec<u32>,
    /// Per node: its cell (eNB) index, or [`NO_UE`].
    cell_of_node: Vec<u32>,
    pgw_node: usize,
    /// Per cell (eNB): the S1-U link direction SGW/PGW → eNB.
    s1u_dl_dir: Vec<u32>,
    /// Per UE: the downlink tunnel in use: (cell, TEID allocated by that cell's eNB).
    dl: Vec<(u32, u32)>,
    /// Per UE: the downlink tunnel the target of a handover allocated at admission, used
    /// from the path switch.
    dl_next: Vec<Option<(u32, u32)>>,
    /// Per UE: the uplink TEID (allocated by the SGW/PGW).
    ul: Vec<u32>,
    /// Per eNB: the TEIDs it allocated, to its UEs.
    enb_teid: Vec<FastMap<u32, u32>>,
    /// Per eNB: the next TEID it allocates.
    enb_next: Vec<u32>,
    /// The UE owning each address of a UE node (every interface's), for the tunnel lookup of
    /// every S1-U packet (`ue_at`).
    ue_addr: UeAddrs,
    /// Per handover event: the X2-U forwarding TEID the target allocated (0: none).
    pub fwd_teid: Vec<u32>,
}

impl GtpTunnels {
    /// The tunnels at attach: UE `u` (node `ue_node[u]`) served by cell `serving[u]` (node
    /// `enb_node[c]`, S1-U direction `s1u_dl_dir[c]` from the SGW/PGW at `pgw_node`); the
    /// SGW/PGW allocates the uplink TEIDs in UE order, each eNB its UEs' downlink TEIDs.
    pub fn new(n_nodes: usize, ue_node: &[usize], enb_node: &[usize], pgw_node: usize, serving: &[usize], s1u_dl_dir: Vec<u32>) -> Self {
        let n_cells = s1u_dl_dir.len();
        let mut ue_of_node = vec![NO_UE; n_nodes];
        for (u, &n) in ue_node.iter().enumerate() {
            ue_of_node[n] = u as u32;
        }
        let mut cell_of_node = vec![NO_UE; n_nodes];
        for (c, &n) in enb_node.iter().enumerate() {
            cell_of_node[n] = c as u32;
        }
        let mut t = GtpTunnels {
            ue_of_node,
            cell_of_node,
            pgw_node,
            s1u_dl_dir,
            dl: Vec::with_capacity(ue_node.len()),
            dl_next: vec![None; ue_node.len()],
            ul: (1..=ue_node.len() as u32).collect(),
            enb_teid: vec![FastMap::default(); n_cells],
            enb_next: vec![1; n_cells],
            fwd_teid: Vec::new(),
            ue_addr: UeAddrs::default(),
        };
        for (u, &c) in serving.iter().enumerate() {
            let teid = t.allocate(c, u);
            t.dl.push((c as u32, teid));
        }
        t
    }

    /// Indexes the addresses of the UE nodes among `addrs` (address, (node, interface)), as
    /// `Ifaces::addresses` lists them, for [`GtpTunnels::ue_at`].
    pub fn index_ue_addresses(&mut self, addrs: impl Iterator<Item = (Ipv4, (u32, u32))>) {
        let ues: Vec<(u32, u32)> = addrs.filter_map(|(a, (n, _))| self.ue_of(n as usize).map(|u| (a.0, u as u32))).collect();
        self.ue_addr = UeAddrs::new(&ues);
    }

    /// The UE owning address `a` (any of its interfaces' addresses), if a UE does: what
    /// `Ifaces::owner` and [`GtpTunnels::ue_of`] give together, without hashing.
    #[inline]
    pub fn ue_at(&self, a: Ipv4) -> Option<usize> {
        self.ue_addr.get(a.0).map(|u| u as usize)
    }

    /// eNB `cell` allocates a TEID for UE `ue`.
    fn allocate(&mut self, cell: usize, ue: usize) -> u32 {
        let teid = self.enb_next[cell];
        self.enb_next[cell] += 1;
        self.enb_teid[cell].insert(teid, ue as u32);
        teid
    }

    /// Whether `node` is the SGW/PGW.
    #[inline]
    pub fn is_pgw(&self, node: usize) -> bool {
        node == self.pgw_node
    }

    /// The UE at node `node`, if it is one.
    #[inline]
    pub fn ue_of(&self, node: usize) -> Option<usize> {
        match self.ue_of_node.get(node) {
            Some(&u) if u != NO_UE => Some(u as usize),
            _ => None,
        }
    }

    /// The new handovers in `events` (from `self.fwd_teid.len()` on): each target allocates
    /// the X2-U forwarding TEID and the UE's next S1-U downlink TEID at admission.
    pub fn on_handovers(&mut self, events: &[HandoverEvent]) {
        for e in &events[self.fwd_teid.len()..] {
            let fwd = if e.kind == "handover" { self.allocate(e.target, e.ue) } else { 0 };
            self.fwd_teid.push(fwd);
            let teid = self.allocate(e.target, e.ue);
            self.dl_next[e.ue] = Some((e.target as u32, teid));
        }
    }

    /// Downlink encapsulation at the SGW/PGW of a packet for UE `ue`: the S1-U direction to the
    /// eNB that holds its tunnel, and the TEID.
    #[inline]
    pub fn downlink(&mut self, ran: &Ran<Packet>, ue: usize) -> (usize, u32) {
        let c = ran.s1_path_cell(ue) as u32;
        if self.dl[ue].0 != c {
            self.switch_path(ue, c);
        }
        let (c, teid) = self.dl[ue];
        (self.s1u_dl_dir[c as usize] as usize, teid)
    }

    /// The path switch of UE `ue` to cell `c` (Modify Bearer Request): the tunnel its target
    /// allocated at admission, or a new one.
    #[cold]
    fn switch_path(&mut self, ue: usize, c: u32) {
        self.dl[ue] = match self.dl_next[ue].take() {
            Some(n) if n.0 == c => n,
            _ => (c, self.allocate(c as usize, ue)),
        };
    }

    /// The uplink TEID of UE `ue`.
    #[inline]
    pub fn uplink(&self, ue: usize) -> u32 {
        self.ul[ue]
    }

    /// Decapsulation at `node`, if it is an eNB: the UE whose tunnel `teid` is.
    #[inline]
    pub fn enb_decap(&self, node: usize, teid: u32) -> Option<usize> {
        let c = *self.cell_of_node.get(node)?;
        if c == NO_UE {
            return None;
        }
        self.enb_teid[c as usize].get(&teid).map(|&u| u as usize)
    }
}

/// Addresses to UE indices. UE addresses come from one pool in order (`plan.rs`: 10.45.0.0
/// on), so a table indexed by the offset from the lowest is dense; scattered addresses (a
/// span above four slots per address) fall back to a hash map.
#[derive(Default)]
enum UeAddrs {
    #[default]
    None,
    Dense { base: u32, ue: Vec<u32> },
    Sparse(FastMap<u32, u32>),
}

impl UeAddrs {
    fn new(pairs: &[(u32, u32)]) -> UeAddrs {
        let (Some(lo), Some(hi)) = (pairs.iter().map(|p| p.0).min(), pairs.iter().map(|p| p.0).max()) else {
            return UeAddrs::None;
        };
        let span = (hi - lo) as u64 + 1;
        if span > 4 * pairs.len() as u64 + 64 {
            return UeAddrs::Sparse(pairs.iter().copied().collect());
        }
        let mut ue = vec![NO_UE; span as usize];
        for &(a, u) in pairs {
            ue[(a - lo) as usize] = u;
        }
        UeAddrs::Dense { base: lo, ue }
    }

    #[inline]
    fn get(&self, a: u32) -> Option<u32> {
        match self {
            UeAddrs::Dense { base, ue } => match ue.get(a.wrapping_sub(*base) as usize) {
                Some(&u) if u != NO_UE => Some(u),
                _ => None,
            },
            UeAddrs::Sparse(m) => m.get(&a).copied(),
            UeAddrs::None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: &'static str, ue: usize, source: usize, target: usize) -> HandoverEvent {
        HandoverEvent {
            kind,
            ue,
            source,
            target,
            decided_s: 0.0,
            detach_s: 0.0,
            attach_s: f64::NAN,
            path_switch_s: f64::NAN,
            sdus_forwarded: 0,
            sdus_forwarded_late: 0,
            sdus_discarded: 0,
            sdus_discarded_received: 0,
            sdus_not_forwarded: 0,
            sdus_already_received: 0,
            ul_sdus_resent: 0,
            status_report_s: f64::NAN,
            harq_blocks_lost: 0,
        }
    }

    /// `ue_at` finds the UE of every address of a UE node (a second interface's too) and
    /// nothing for other nodes or unknown addresses, in the dense and the sparse table alike.
    #[test]
    fn gtpu_ue_at_matches_owner_then_ue_of() {
        // nodes: 0 PGW, 1 eNB, 2..=4 UEs; node 4 has a second address
        for (base, step) in [(0x0a2d_0000u32, 1u32), (0x0a2d_0000, 1 << 20)] {
            let mut t = GtpTunnels::new(5, &[2, 3, 4], &[1], 0, &[0, 0, 0], vec![7]);
            let a = |k: u32| Ipv4(base + k * step);
            let addrs = vec![(Ipv4(0x0a00_0001), (0, 0)), (Ipv4(0x0a2c_0101), (1, 0)), (a(0), (2, 0)), (a(1), (3, 0)), (a(2), (4, 0)), (a(5), (4, 1))];
            t.index_ue_addresses(addrs.iter().copied());
            for &(addr, (n, _)) in &addrs {
                assert_eq!(t.ue_at(addr), t.ue_of(n as usize), "{addr:?}");
            }
            assert_eq!((t.ue_at(a(0)), t.ue_at(a(2)), t.ue_at(a(5))), (Some(0), Some(2), Some(2)));
            assert_eq!((t.ue_at(a(3)), t.ue_at(a(6))), (None, None));
            assert_eq!(t.ue_at(Ipv4(base.wrapping_sub(1))), None);
            assert_eq!(t.ue_at(Ipv4(0x0a00_0001)), None);
            assert_eq!(matches!(t.ue_addr, UeAddrs::Dense { .. }), step == 1, "pool order gives a dense table");
        }
    }

    #[test]
    fn gtpu_teids_per_ue_and_direction_and_handover() {
        // Three UEs: 0 and 1 in cell 0, 2 in cell 1. Each receiving endpoint allocates from 1
        // (TS 29.281 §5.1: TEID 0 is not a tunnel's).
        // nodes: 0 PGW, 1 and 2 the eNBs of cells 0 and 1, 3..=5 the UEs
        let mut t = GtpTunnels::new(6, &[3, 4, 5], &[1, 2], 0, &[0, 0, 1], vec![10, 12]);
        assert_eq!((t.ue_of(3), t.ue_of(0)), (Some(0), None));
        assert!(t.is_pgw(0) && !t.is_pgw(1));
        assert_eq!(t.dl, vec![(0, 1), (0, 2), (1, 1)]);
        assert_eq!((t.uplink(0), t.uplink(1), t.uplink(2)), (1, 2, 3));
        assert_eq!((t.enb_decap(1, 2), t.enb_decap(2, 2), t.enb_decap(0, 1)), (Some(1), None, None));
        // UE 1 hands over to cell 1: the target allocates the X2 forwarding TEID and the new
        // downlink TEID at admission (TS 36.423 §9.1.1.2, TS 23.401 §5.5.1.1.2); the SGW's
        // uplink TEID stays.
        t.on_handovers(&[ev("handover", 1, 0, 1)]);
        assert_eq!(t.fwd_teid, vec![2]);
        assert_eq!(t.dl_next[1], Some((1, 3)));
        t.switch_path(1, 1);
        assert_eq!(t.dl[1], (1, 3));
        assert_eq!(t.enb_decap(2, 3), Some(1));
        // the source's TEID still decapsulates what was in flight
        assert_eq!(t.enb_decap(1, 2), Some(1));
        assert_eq!(t.uplink(1), 2);
        // a re-establishment forwards nothing; a path to a cell nobody prepared gets a new TEID
        t.on_handovers(&[ev("handover", 1, 0, 1), ev("reestablishment", 0, 0, 1)]);
        assert_eq!(t.fwd_teid, vec![2, 0]);
        t.switch_path(2, 0);
        assert_eq!(t.dl[2], (0, 3));
    }
}
