//! A node's interfaces and the routing by address: which node and interface own an address,
//! the route to an address, source-address (policy) rules and the preferred source address.
//!
//! Every link a host is an endpoint of is one of its interfaces (the LTE radio, a Wi-Fi
//! association, a `[[link]]`). The first interface carries the node's own address; a host
//! whose other interfaces lead to routers (an LTE UE also wired to a router, or also a Wi-Fi
//! station; a host with two links to two routers) is *multihomed*: each of its other interfaces
//! gets an address of its own ([`crate::plan::IFACE_POOL`]). Routers are unnumbered (RFC 1812
//! §2.2.7): all their links carry the router's one address, as today.
//!
//! Routing, as a Linux host set up as in the Linux Advanced Routing HOWTO §4.2 ("Routing for
//! multiple uplinks/providers") and a network that routes each address to its subnet:
//!
//! - the network-wide routes (`celltcp_net::routing::Routes`) are computed over every link except
//!   the other interfaces of multihomed hosts: a host never forwards between its interfaces
//!   (Linux's `ip_forward = 0`), and a UE keeps its place as a stub behind its eNB, so its extra
//!   interface costs one entry here and nothing in the dense core tables;
//! - the route to a node's first address is the route to the node, as before; the route to
//!   another interface's address is the route to the node at that interface's far end (its
//!   router, the Wi-Fi AP) and then the interface's link;
//! - a multihomed host holds [`PolicyRoutes`]: for each other interface `k`,
//!   `ip rule add from ADDR_k lookup k` with table `k` = `default dev k src ADDR_k`, so a packet
//!   whose source is interface `k`'s address leaves by interface `k`. Other packets follow the
//!   main table: the network-wide route, which leaves by the first interface; a destination
//!   that only another interface reaches leaves by it (its connected network);
//! - a socket that does not bind takes the preferred source address of its route (Linux's
//!   `src` of `ip route get`): [`Ifaces::preferred_source`].
//!
//! The output path asks a node's forwarding table ([`Ifaces::out`]), built once from the above
//! for every address of the scenario ([`Ifaces::build_fib`]):
//!
//! - a *stub* (a UE, a sender behind its access router: `routing.rs`) whose parent reaches every
//!   node holds Linux's host table, `local ADDR` and `default via PARENT`: one comparison;
//! - any other single-interface node holds a [`Fib`] with a `local` route for each of its
//!   addresses and the network-wide route of every other address, consecutive addresses with
//!   the same next hop merged into prefixes (a PGW in front of 100,000 UEs numbered in order
//!   holds a prefix list per eNB, an eNB one host route per UE it serves), looked up by
//!   longest-prefix match;
//! - a multihomed host takes its source-address rules, then its main table, as above.
//!
//! A packet for an address no node has is dropped where no route covers it: at once by a
//! router, after its first hop by a stub (which, like a host, sends everything that is not its
//! own to its default gateway).

use celltcp_net::fib::{Fib, Hop};
use celltcp_net::policy::{Decision, PolicyRoutes, Prefix, Route};
use celltcp_net::routing::Routes;
use celltcp_net::Ipv4;

use crate::world::FastMap;

const NONE: u32 = u32::MAX;

/// One interface of a multihomed host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iface {
    pub addr: Ipv4,
    /// The link direction leaving by it (host → peer) and the one arriving (peer → host).
    pub out_dir: u32,
    pub in_dir: u32,
    /// The node at its far end.
    pub peer: u32,
}

/// A multihomed host: its interfaces (the first carries the node's address) and its rules.
#[derive(Clone, Debug)]
struct Multi {
    ifaces: Vec<Iface>,
    policy: PolicyRoutes,
    /// Per interface: down (an `[[event]]`, [`Ifaces::set_down`]): its routes are gone.
    down: Vec<bool>,
}

/// Where a node's output path sends a packet ([`Ifaces::out`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// It is for the node itself.
    Local,
    /// By this link direction.
    Dir(usize),
    /// A multihomed host: ask [`Ifaces::route`] (source-address rules).
    Policy,
    /// No route.
    Unreachable,
}

/// A node's forwarding table.
#[derive(Clone, Debug)]
enum NodeFib {
    /// `local OWN`, `default via UP`.
    Stub { own: Ipv4, up: u32 },
    /// A longest-prefix-match table (index into `Ifaces::tables`).
    Table(u32),
    /// A multihomed host.
    Policy,
}

/// Every address's owner, the multihomed hosts' interfaces and rules, and every node's
/// forwarding table.
#[derive(Clone, Debug, Default)]
pub struct Ifaces {
    /// Per node: its index in `multi`, or `NONE` (empty when no node is multihomed).
    multi_of: Vec<u32>,
    multi: Vec<Multi>,
    /// Every address: (node, interface; 0 is the node's first address).
    addr_to: FastMap<Ipv4, (u32, u32)>,
    /// Per node (after [`Ifaces::build_fib`]).
    fib: Vec<NodeFib>,
    tables: Vec<Fib>,
}

impl Ifaces {
    /// The owners of the nodes' first addresses (`addrs[n]` is node `n`'s).
    pub fn new(addrs: impl Iterator<Item = Ipv4>) -> Ifaces {
        let addr_to = addrs.enumerate().map(|(n, a)| (a, (n as u32, 0))).collect();
        Ifaces { addr_to, ..Ifaces::default() }
    }

    /// Makes `node` multihomed with `ifaces` (the first carrying its existing address).
    pub fn add_multihomed(&mut self, n_nodes: usize, node: usize, ifaces: Vec<Iface>) {
        if self.multi_of.is_empty() {
            self.multi_of = vec![NONE; n_nodes];
        }
        let mut policy = PolicyRoutes::default();
        for (k, i) in ifaces.iter().enumerate().skip(1) {
            // ip route add default dev <k> src ADDR_k table k; ip rule add from ADDR_k table k
            policy.table(k as u32).add(Prefix::ALL, Route { dir: i.out_dir, src: i.addr });
            policy.add_rule(Prefix::host(i.addr), k as u32);
            self.addr_to.insert(i.addr, (node as u32, k as u32));
        }
        self.multi_of[node] = self.multi.len() as u32;
        let down = vec![false; ifaces.len()];
        self.multi.push(Multi { ifaces, policy, down });
    }

    /// Builds every node's forwarding table from the network-wide `routes` (see the module
    /// doc); call it after the last [`Ifaces::add_multihomed`].
    pub fn build_fib(&mut self, routes: &Routes) {
        let n = routes.n_nodes();
        let mut addrs: Vec<(Ipv4, u32, u32)> = self.addr_to.iter().map(|(&a, &(v, k))| (a, v, k)).collect();
        addrs.sort_unstable_by_key(|x| x.0);
        let mut first = vec![Ipv4(0); n];
        for &(a, v, k) in &addrs {
            if k == 0 {
                first[v as usize] = a;
            }
        }
        // the far end of a multihomed host's other interface reaches it by that link, not up
        let mut peer_of_other = vec![false; n];
        for m in &self.multi {
            for i in m.ifaces.iter().skip(1) {
                peer_of_other[i.peer as usize] = true;
            }
        }
        let mut fib = Vec::with_capacity(n);
        let mut tables = Vec::new();
        let mut hosts = Vec::with_capacity(addrs.len());
        for at in 0..n {
            if !self.plain(at) {
                fib.push(NodeFib::Policy);
                continue;
            }
            if let Some(up) = routes.stub_uplink(at).filter(|_| !peer_of_other[at]) {
                fib.push(NodeFib::Stub { own: first[at], up: up as u32 });
                continue;
            }
            hosts.clear();
            hosts.extend(addrs.iter().map(|&(a, v, k)| {
                let hop = if v as usize == at { Some(Hop::Local) } else { self.towards(routes, at, v as usize, k).map(|d| Hop::Via(d as u32)) };
                (a, hop)
            }));
            fib.push(NodeFib::Table(tables.len() as u32));
            tables.push(Fib::from_host_routes(&hosts));
        }
        self.fib = fib;
        self.tables = tables;
    }

    /// Where `node`'s output path sends a packet for `dst`.
    #[inline]
    pub fn out(&self, node: usize, dst: Ipv4) -> Out {
        match self.fib[node] {
            NodeFib::Stub { own, up } => {
                if dst == own {
                    Out::Local
                } else {
                    Out::Dir(up as usize)
                }
            }
            NodeFib::Table(t) => match self.tables[t as usize].lookup(dst) {
                Some(Hop::Via(d)) => Out::Dir(d as usize),
                Some(Hop::Local) => Out::Local,
                None => Out::Unreachable,
            },
            NodeFib::Policy => Out::Policy,
        }
    }

    /// The forwarding table of `node`, if it has one of its own (not a stub's two routes, not
    /// a multihomed host's rules).
    pub fn fib(&self, node: usize) -> Option<&Fib> {
        match self.fib.get(node)? {
            NodeFib::Table(t) => Some(&self.tables[*t as usize]),
            _ => None,
        }
    }

    /// The node and interface owning `a`.
    #[inline]
    pub fn owner(&self, a: Ipv4) -> Option<(u32, u32)> {
        self.addr_to.get(&a).copied()
    }

    /// Every address with its (node, interface), in no particular order.
    pub fn addresses(&self) -> impl Iterator<Item = (Ipv4, (u32, u32))> + '_ {
        self.addr_to.iter().map(|(&a, &o)| (a, o))
    }

    /// `node` has one address (the fast path: no multihomed node, or not this one).
    #[inline]
    pub fn plain(&self, node: usize) -> bool {
        self.multi.is_empty() || self.multi_of[node] == NONE
    }

    /// `a` is an address of `node` other than its first one.
    #[inline]
    pub fn is_other_addr_of(&self, node: usize, a: Ipv4) -> bool {
        !self.plain(node) && self.owner(a).is_some_and(|(n, k)| n as usize == node && k != 0)
    }

    /// The interfaces of a multihomed `node` (empty for others).
    pub fn of(&self, node: usize) -> &[Iface] {
        if self.plain(node) {
            &[]
        } else {
            &self.multi[self.multi_of[node] as usize].ifaces
        }
    }

    /// The link direction to take from `at` for a packet from `src` to `dst_addr`, interface
    /// `ifc` of node `dst` (see the module doc); `None` if there is no route.
    pub fn route(&self, routes: &Routes, at: usize, src: Ipv4, dst_addr: Ipv4, dst: usize, ifc: u32) -> Option<usize> {
        if !self.plain(at) {
            let m = &self.multi[self.multi_of[at] as usize];
            if let Decision::Route(r) = m.policy.lookup(src, dst_addr) {
                // the interface of that source address is down: its table is empty, and a
                // packet from an address that is gone has no route (`ENETUNREACH`)
                return m.ifaces.iter().zip(&m.down).all(|(i, &d)| !d || i.out_dir != r.dir).then_some(r.dir as usize);
            }
            if m.down[0] && src == m.ifaces[0].addr {
                return None;
            }
            return self.main_route(routes, m, at, dst, ifc).map(|i| i.1);
        }
        self.towards(routes, at, dst, ifc)
    }

    /// The network-wide route from `at` (not multihomed, or by its first interface) to
    /// interface `ifc` of `dst`.
    #[inline]
    fn towards(&self, routes: &Routes, at: usize, dst: usize, ifc: u32) -> Option<usize> {
        if ifc == 0 {
            return routes.next_hop(at, dst);
        }
        let i = &self.multi[self.multi_of[dst] as usize].ifaces[ifc as usize];
        if at == i.peer as usize {
            Some(i.in_dir as usize)
        } else {
            routes.next_hop(at, i.peer as usize)
        }
    }

    /// The main table of multihomed `at`: the network-wide route (by its first interface), else
    /// the first other interface whose far end reaches the destination. Returns the interface
    /// and the link direction.
    fn main_route(&self, routes: &Routes, m: &Multi, at: usize, dst: usize, ifc: u32) -> Option<(usize, usize)> {
        if !m.down[0] {
            if let Some(d) = self.towards(routes, at, dst, ifc) {
                return Some((0, d));
            }
        }
        m.ifaces.iter().enumerate().skip(1).filter(|&(k, _)| !m.down[k]).find_map(|(k, i)| {
            let p = i.peer as usize;
            ((ifc == 0 && p == dst) || self.towards(routes, p, dst, ifc).is_some()).then_some((k, i.out_dir as usize))
        })
    }

    /// Interface `k` of multihomed `node` goes down or comes back up (an `[[event]]`): while
    /// it is down, as Linux after `ip link set dev K down`, its routes are gone: a packet
    /// from its address has no route, and the main table leaves by another interface whose
    /// far end reaches the destination. Returns its address (`None`: not a multihomed node's
    /// interface).
    pub fn set_down(&mut self, node: usize, out_dir: u32, down: bool) -> Option<Ipv4> {
        if self.plain(node) {
            return None;
        }
        let m = &mut self.multi[self.multi_of[node] as usize];
        let k = m.ifaces.iter().position(|i| i.out_dir == out_dir)?;
        m.down[k] = down;
        Some(m.ifaces[k].addr)
    }

    /// The source address a socket of `node` that did not bind takes towards `dst` (the
    /// address of the interface its route leaves by); `None` if `dst` is unknown or
    /// unreachable. `first` is the node's first address.
    pub fn preferred_source(&self, routes: &Routes, node: usize, first: Ipv4, dst: Ipv4) -> Option<Ipv4> {
        if self.plain(node) {
            return Some(first);
        }
        let (d, ifc) = self.owner(dst)?;
        if d as usize == node {
            return Some(dst);
        }
        let m = &self.multi[self.multi_of[node] as usize];
        let (k, _) = self.main_route(routes, m, node, d as usize, ifc)?;
        Some(m.ifaces[k].addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UE (node 3) behind eNB 2 behind the PGW 1, a server 0 on the PGW, and a router 4
    /// between the server's side (link from the PGW) and the UE's second interface:
    /// links: 0 server→pgw, 1 pgw→server, 2 pgw→enb, 3 enb→pgw, 4 enb→ue, 5 ue→enb,
    /// 6 pgw→router, 7 router→pgw, 8 router→ue, 9 ue→router (the UE's wired interface).
    fn net() -> (Routes, Ifaces, Ipv4, Ipv4) {
        let all = [(0, 1, 0), (1, 0, 1), (1, 2, 2), (2, 1, 3), (2, 3, 4), (3, 2, 5), (1, 4, 6), (4, 1, 7), (4, 3, 8), (3, 4, 9)];
        // the UE's wired interface is left out of the network-wide routes
        let edges: Vec<_> = all.iter().copied().filter(|e| e.2 < 8).collect();
        let routes = Routes::compute(5, &edges);
        let addrs = [Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 44, 0, 1), Ipv4::new(10, 44, 1, 1), Ipv4::new(10, 45, 0, 1), Ipv4::new(10, 0, 0, 2)];
        let mut ifs = Ifaces::new(addrs.iter().copied());
        let (lte, wired) = (addrs[3], Ipv4::new(10, 32, 0, 1));
        ifs.add_multihomed(5, 3, vec![Iface { addr: lte, out_dir: 5, in_dir: 4, peer: 2 }, Iface { addr: wired, out_dir: 9, in_dir: 8, peer: 4 }]);
        (routes, ifs, lte, wired)
    }

    #[test]
    fn each_address_is_reached_by_its_own_interface() {
        let (r, ifs, lte, wired) = net();
        assert_eq!(ifs.owner(wired), Some((3, 1)));
        assert_eq!(ifs.owner(lte), Some((3, 0)));
        // server → the LTE address: through the PGW and the eNB (2 hops then the radio)
        assert_eq!(ifs.route(&r, 0, Ipv4(0), Ipv4(0), 3, 0), Some(0));
        assert_eq!(ifs.route(&r, 1, Ipv4(0), Ipv4(0), 3, 0), Some(2));
        assert_eq!(ifs.route(&r, 2, Ipv4(0), Ipv4(0), 3, 0), Some(4));
        // server → the wired address: towards the router, then its link down
        assert_eq!(ifs.route(&r, 1, Ipv4(0), Ipv4(0), 3, 1), Some(6));
        assert_eq!(ifs.route(&r, 4, Ipv4(0), Ipv4(0), 3, 1), Some(8));
        // the UE: from the wired address by the wire, from the LTE address (or none) by LTE
        assert_eq!(ifs.route(&r, 3, wired, Ipv4(0), 0, 0), Some(9));
        assert_eq!(ifs.route(&r, 3, lte, Ipv4(0), 0, 0), Some(5));
        assert_eq!(ifs.route(&r, 3, Ipv4(0), Ipv4(0), 0, 0), Some(5));
        // preferred source: the first interface's address, whose route reaches the server
        assert_eq!(ifs.preferred_source(&r, 3, lte, Ipv4::new(10, 0, 0, 1)), Some(lte));
        assert!(ifs.plain(0) && !ifs.plain(3));
        assert!(ifs.is_other_addr_of(3, wired) && !ifs.is_other_addr_of(3, lte) && !ifs.is_other_addr_of(4, wired));
    }

    /// What the output path did before forwarding tables: the owner of the address, then the
    /// network-wide route towards it (the reference for [`Ifaces::out`]).
    fn reference_out(ifs: &Ifaces, r: &Routes, at: usize, dst: Ipv4) -> Out {
        if !ifs.plain(at) {
            return Out::Policy; // (the output path then asks `route`)
        }
        let Some((v, k)) = ifs.owner(dst) else { return Out::Unreachable };
        if v as usize == at {
            Out::Local
        } else {
            ifs.towards(r, at, v as usize, k).map_or(Out::Unreachable, Out::Dir)
        }
    }

    #[test]
    fn forwarding_tables_route_every_address_as_the_network_wide_routes() {
        // the multihomed fixture: every node, every address
        let (r, mut ifs, _, _) = net();
        ifs.build_fib(&r);
        let all: Vec<Ipv4> = ifs.addr_to.keys().copied().collect();
        for at in 0..5 {
            for &a in &all {
                assert_eq!(ifs.out(at, a), reference_out(&ifs, &r, at, a), "node {at} to {a}");
            }
        }
        // the router 4 is the far end of the UE's wired interface: a table, not a stub's default
        assert!(ifs.fib(4).is_some() && ifs.fib(0).is_none());
        // random graphs (stubs, one-way links, separate components) with addresses handed out
        // in random order from a few runs, so consecutive addresses share next hops or not
        let mut x: u64 = 0xf1b;
        let mut rnd = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for case in 0..300 {
            let n = 2 + rnd(30) as usize;
            let mut e = Vec::new();
            for _ in 0..rnd(3 * n as u64) {
                let (a, b) = (rnd(n as u64) as usize, rnd(n as u64) as usize);
                if a != b {
                    e.push((a, b, e.len()));
                    if rnd(5) != 0 {
                        e.push((b, a, e.len()));
                    }
                }
            }
            // stubs: half the cases hang hosts off node 0
            if rnd(2) == 0 {
                for h in 1..n {
                    if rnd(2) == 0 && !e.iter().any(|&(a, b, _)| a == h || b == h) {
                        e.push((0, h, e.len()));
                        e.push((h, 0, e.len()));
                    }
                }
            }
            let r = Routes::compute(n, &e);
            let mut addrs: Vec<Ipv4> = Vec::new();
            let mut next = 0x0a2d_0001u32;
            for _ in 0..n {
                next += 1 + if rnd(4) == 0 { rnd(300) as u32 } else { 0 };
                addrs.push(Ipv4(next));
            }
            for i in (1..n).rev() {
                let j = rnd(i as u64 + 1) as usize;
                addrs.swap(i, j);
            }
            let mut ifs = Ifaces::new(addrs.iter().copied());
            ifs.build_fib(&r);
            for at in 0..n {
                for &a in &addrs {
                    assert_eq!(ifs.out(at, a), reference_out(&ifs, &r, at, a), "case {case}: node {at} to {a} in {e:?}");
                }
            }
        }
    }

    #[test]
    fn a_destination_only_another_interface_reaches_leaves_by_it() {
        // UE 2 behind eNB 1 (first interface) and wired to router 3, which alone reaches the
        // server 0 (no link between the eNB and the server's side)
        let edges = [(2, 1, 0), (1, 2, 1), (0, 3, 2), (3, 0, 3)];
        let routes = Routes::compute(4, &edges);
        let addrs = [Ipv4::new(10, 0, 0, 1), Ipv4::new(10, 44, 1, 1), Ipv4::new(10, 45, 0, 1), Ipv4::new(10, 0, 0, 2)];
        let mut ifs = Ifaces::new(addrs.iter().copied());
        let wired = Ipv4::new(10, 32, 0, 1);
        ifs.add_multihomed(4, 2, vec![Iface { addr: addrs[2], out_dir: 0, in_dir: 1, peer: 1 }, Iface { addr: wired, out_dir: 4, in_dir: 5, peer: 3 }]);
        assert_eq!(ifs.preferred_source(&routes, 2, addrs[2], addrs[0]), Some(wired));
        assert_eq!(ifs.route(&routes, 2, Ipv4(0), Ipv4(0), 0, 0), Some(4));
        // and the server reaches the wired address through the router
        assert_eq!(ifs.route(&routes, 0, Ipv4(0), Ipv4(0), 2, 1), Some(2));
        assert_eq!(ifs.route(&routes, 3, Ipv4(0), Ipv4(0), 2, 1), Some(5));
        // the LTE address is unreachable from the server: no route, no source
        assert_eq!(ifs.route(&routes, 0, Ipv4(0), Ipv4(0), 2, 0), None);
    }

    #[test]
    fn a_down_interface_has_no_routes_and_the_main_table_leaves_by_another() {
        // `net()`: the UE 3's LTE (out 5) and wired (out 9) interfaces; the server 0 is node 0
        let (r, mut ifs, lte, wired) = net();
        let server = Ipv4::new(10, 0, 0, 1);
        assert_eq!(ifs.set_down(3, 9, true), Some(wired));
        assert_eq!(ifs.route(&r, 3, wired, server, 0, 0), None, "from the wired address: gone");
        assert_eq!(ifs.route(&r, 3, lte, server, 0, 0), Some(5));
        assert_eq!(ifs.preferred_source(&r, 3, lte, server), Some(lte));
        ifs.set_down(3, 9, false);
        assert_eq!(ifs.route(&r, 3, wired, server, 0, 0), Some(9), "back up");
        // the first interface down: its address has no route; the main table (no source yet)
        // leaves by the wire, whose router reaches the server, and new sockets take its address
        assert_eq!(ifs.set_down(3, 5, true), Some(lte));
        assert_eq!(ifs.route(&r, 3, lte, server, 0, 0), None);
        assert_eq!(ifs.route(&r, 3, Ipv4(0), server, 0, 0), Some(9));
        assert_eq!(ifs.preferred_source(&r, 3, lte, server), Some(wired));
        assert_eq!(ifs.route(&r, 3, wired, server, 0, 0), Some(9));
        // both down: nothing leaves
        ifs.set_down(3, 9, true);
        assert_eq!(ifs.route(&r, 3, Ipv4(0), server, 0, 0), None);
        assert_eq!(ifs.preferred_source(&r, 3, lte, server), None);
        // a node that is not multihomed has no interface to mark
        assert_eq!(ifs.set_down(0, 0, true), None);
    }
}
