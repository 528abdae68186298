//! Static routing over a graph of hosts and routers (what ns-3's
//! `Ipv4GlobalRoutingHelper::PopulateRoutingTables` gives a point-to-point topology, with hop count
//! as the metric).
//!
//! Nodes are `0..n_nodes`; each directed edge `(from, to, link)` is one link direction, named by
//! the caller's link index. The next hop from `at` towards `dst` is the link of lowest index among
//! those leading to a neighbour one hop closer. The tie-break makes tables deterministic whatever
//! the edge order, and since each hop picks a link onto a shortest path, the routes are loop-free.
//!
//! # Scaling: stub nodes
//!
//! A *stub* is a node whose only neighbour (both ways) is one node that has other neighbours: a
//! UE behind its eNB, a sender behind its access router. Every path to or from a stub goes through
//! that neighbour, its *parent*, so the stub needs no table of its own: from a stub, the next hop is
//! its lowest-index link to the parent; towards a stub, it is the route towards the parent, then
//! the parent's lowest-index link down. (Shortest paths to a stub are the shortest paths to its
//! parent plus one hop, so this is exactly what the dense tables would say.) Only the other nodes,
//! the *core*, get dense `c × c` tables, computed with one breadth-first search per destination
//! over the reversed edges. 100,000 UEs behind a few eNBs make a core of a few nodes: memory is
//! `O(n + c²)` instead of `O(n²)`, and lookups stay O(1).

const NONE: u32 = u32::MAX;

/// Dense next-hop tables over the core nodes (indices `0..n` of the core).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Dense {
    n: usize,
    /// `next[at * n + dst]`: link index, or `NONE`.
    next: Vec<u32>,
    /// `dist[at * n + dst]`: hops, or `u32::MAX` if unreachable.
    dist: Vec<u32>,
}

impl Dense {
    fn compute(n: usize, edges: &[(usize, usize, usize)]) -> Dense {
        // Incoming adjacency, for the reverse BFS.
        let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(from, to, _) in edges {
            incoming[to].push(from);
        }
        let mut dist = vec![u32::MAX; n * n];
        let mut queue = std::collections::VecDeque::with_capacity(n);
        for dst in 0..n {
            dist[dst * n + dst] = 0;
            queue.clear();
            queue.push_back(dst);
            while let Some(v) = queue.pop_front() {
                let d = dist[v * n + dst];
                for &u in &incoming[v] {
                    if dist[u * n + dst] == u32::MAX {
                        dist[u * n + dst] = d + 1;
                        queue.push_back(u);
                    }
                }
            }
        }
        let mut next = vec![NONE; n * n];
        for &(from, to, link) in edges {
            for dst in 0..n {
                let (df, dt) = (dist[from * n + dst], dist[to * n + dst]);
                if df != u32::MAX && df != 0 && dt == df - 1 {
                    let slot = &mut next[from * n + dst];
                    if *slot == NONE || (link as u32) < *slot {
                        *slot = link as u32;
                    }
                }
            }
        }
        Dense { n, next, dist }
    }
}

/// Where a node sits: in the core (its index there) or a stub (its parent and the two links).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Core(u32),
    Stub { parent: u32, pcore: u32, up: u32, down: u32 },
}

/// Next-hop tables for every (node, destination) pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routes {
    n: usize,
    place: Vec<Place>,
    core: Dense,
    /// Far end of each link index (for walking paths).
    link_to: Vec<u32>,
}

impl Routes {
    /// Computes shortest-hop routes. Edges naming nodes outside `0..n_nodes` are a caller bug.
    pub fn compute(n_nodes: usize, edges: &[(usize, usize, usize)]) -> Routes {
        let n = n_nodes;
        let max_link = edges.iter().map(|e| e.2 + 1).max().unwrap_or(0);
        let mut link_to = vec![NONE; max_link];
        // Each node's distinct out- and in-neighbours, up to two (enough to tell a stub).
        let mut out_nb: Vec<[u32; 2]> = vec![[NONE; 2]; n];
        let mut in_nb: Vec<[u32; 2]> = vec![[NONE; 2]; n];
        let note = |nb: &mut [u32; 2], v: usize| {
            let v = v as u32;
            if nb[0] == NONE {
                nb[0] = v;
            } else if nb[0] != v && nb[1] == NONE {
                nb[1] = v;
            }
        };
        for &(from, to, link) in edges {
            assert!(from < n && to < n, "edge ({from}, {to}, {link}) outside 0..{n}");
            link_to[link] = to as u32;
            note(&mut out_nb[from], to);
            note(&mut in_nb[to], from);
        }
        let single = |v: usize| out_nb[v][0] != NONE && out_nb[v][1] == NONE && in_nb[v] == out_nb[v];
        let mut stub_parent = vec![NONE; n];
        for v in 0..n {
            // the parent must have another neighbour, else a pair of nodes would strip each other
            if single(v) && !single(out_nb[v][0] as usize) {
                stub_parent[v] = out_nb[v][0];
            }
        }
        let mut place = Vec::with_capacity(n);
        let mut n_core = 0u32;
        let mut core_index = vec![NONE; n];
        for (v, &parent) in stub_parent.iter().enumerate() {
            if parent == NONE {
                core_index[v] = n_core;
                n_core += 1;
            }
        }
        for &parent in &stub_parent {
            if parent == NONE {
                place.push(Place::Core(core_index[place.len()]));
            } else {
                place.push(Place::Stub { parent, pcore: core_index[parent as usize], up: NONE, down: NONE });
            }
        }
        let mut core_edges = Vec::new();
        for &(from, to, link) in edges {
            let l = link as u32;
            match (place[from], place[to]) {
                (Place::Core(a), Place::Core(b)) => core_edges.push((a as usize, b as usize, link)),
                // a stub's edges all lead to or from its parent
                (Place::Stub { .. }, _) => {
                    if let Place::Stub { up, .. } = &mut place[from] {
                        *up = (*up).min(l);
                    }
                }
                (_, Place::Stub { .. }) => {
                    if let Place::Stub { down, .. } = &mut place[to] {
                        *down = (*down).min(l);
                    }
                }
            }
        }
        let core = Dense::compute(n_core as usize, &core_edges);
        Routes { n, place, core, link_to }
    }

    pub fn n_nodes(&self) -> usize {
        self.n
    }

    /// Nodes with dense tables (the others are stubs).
    pub fn n_core(&self) -> usize {
        self.core.n
    }

    /// The core node standing for `v`: itself, or a stub's parent.
    #[inline]
    fn core_of(&self, v: usize) -> (u32, bool) {
        match self.place[v] {
            Place::Core(c) => (c, false),
            Place::Stub { pcore, .. } => (pcore, true),
        }
    }

    /// For a stub whose parent reaches every node (so its route to any node is its link up):
    /// that link. `None` for core nodes and for stubs in a network that is not connected.
    pub fn stub_uplink(&self, v: usize) -> Option<usize> {
        let Place::Stub { pcore, up, .. } = self.place[v] else { return None };
        let n = self.core.n;
        let row = &self.core.dist[pcore as usize * n..(pcore as usize + 1) * n];
        (up != NONE && row.iter().all(|&d| d != u32::MAX)).then_some(up as usize)
    }

    /// The link to take from `at` towards `dst`; `None` if unreachable or already there.
    #[inline]
    pub fn next_hop(&self, at: usize, dst: usize) -> Option<usize> {
        debug_assert!(at < self.n && dst < self.n);
        if at == dst {
            return None;
        }
        let l = match (self.place[at], self.place[dst]) {
            // up to the parent, if the destination is reachable from there
            (Place::Stub { up, pcore, .. }, _) => {
                let (d, _) = self.core_of(dst);
                if self.core.dist[pcore as usize * self.core.n + d as usize] == u32::MAX {
                    return None;
                }
                up
            }
            (Place::Core(_), Place::Stub { parent, down, .. }) if parent as usize == at => down,
            (Place::Core(a), _) => {
                let (d, _) = self.core_of(dst);
                self.core.next[a as usize * self.core.n + d as usize]
            }
        };
        (l != NONE).then_some(l as usize)
    }

    /// Hops from `src` to `dst`, if reachable.
    pub fn hops(&self, src: usize, dst: usize) -> Option<u32> {
        if src >= self.n || dst >= self.n {
            return None;
        }
        if src == dst {
            return Some(0);
        }
        let (a, sa) = self.core_of(src);
        let (b, sb) = self.core_of(dst);
        match self.core.dist[a as usize * self.core.n + b as usize] {
            u32::MAX => None,
            d => Some(d + u32::from(sa) + u32::from(sb)),
        }
    }

    /// The links from `src` to `dst` in order (empty when `src == dst`), if reachable.
    pub fn path(&self, src: usize, dst: usize) -> Option<Vec<usize>> {
        self.hops(src, dst)?;
        let mut out = Vec::new();
        let mut at = src;
        while at != dst {
            let l = self.next_hop(at, dst)?;
            out.push(l);
            at = self.link_to[l] as usize;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full-duplex edge as two link directions with consecutive indices.
    fn duplex(edges: &mut Vec<(usize, usize, usize)>, a: usize, b: usize) {
        let i = edges.len();
        edges.push((a, b, i));
        edges.push((b, a, i + 1));
    }

    #[test]
    fn routing_chain() {
        // A chain 0-1-2-3: the only path goes through every node, one hop per link.
        let mut e = Vec::new();
        for i in 0..3 {
            duplex(&mut e, i, i + 1);
        }
        let r = Routes::compute(4, &e);
        assert_eq!(r.path(0, 3), Some(vec![0, 2, 4]));
        assert_eq!(r.path(3, 0), Some(vec![5, 3, 1]));
        assert_eq!(r.next_hop(1, 3), Some(2));
        assert_eq!(r.hops(0, 3), Some(3));
        assert_eq!(r.path(2, 2), Some(vec![]));
        assert_eq!(r.next_hop(2, 2), None);
    }

    #[test]
    fn routing_dumbbell_many_senders() {
        // Dumbbell: senders 0..k on router A, receivers on router B, one bottleneck A-B. Every
        // sender→receiver path is sender→A, A→B, B→receiver (3 hops).
        let k = 8;
        let (ra, rb) = (2 * k, 2 * k + 1);
        let mut e = Vec::new();
        duplex(&mut e, ra, rb);
        for s in 0..k {
            duplex(&mut e, s, ra);
            duplex(&mut e, k + s, rb);
        }
        let r = Routes::compute(2 * k + 2, &e);
        for s in 0..k {
            for d in k..2 * k {
                let p = r.path(s, d).unwrap();
                assert_eq!(p.len(), 3);
                assert_eq!(p[1], 0, "bottleneck A→B is link 0");
                assert_eq!(e[p[0]], (s, ra, p[0]));
                assert_eq!(e[p[2]], (rb, d, p[2]));
            }
            assert_eq!(r.path(k, s).unwrap()[1], 1);
        }
    }

    #[test]
    fn routing_ties_break_by_lowest_link_index() {
        // Two equal-cost paths 0→1→3 and 0→2→3: the first hop is the lower link index whatever the
        // edge order; a direct link (1 hop) beats both.
        let edges = [(0, 2, 5), (2, 3, 6), (0, 1, 7), (1, 3, 8)];
        let r = Routes::compute(4, &edges);
        assert_eq!(r.path(0, 3), Some(vec![5, 6]));
        let mut rev = edges;
        rev.reverse();
        assert_eq!(Routes::compute(4, &rev), r);
        let with_direct = [(0, 2, 5), (2, 3, 6), (0, 1, 7), (1, 3, 8), (0, 3, 9)];
        assert_eq!(Routes::compute(4, &with_direct).path(0, 3), Some(vec![9]));
    }

    #[test]
    fn routing_unreachable_is_none() {
        // No directed path (one-way link, or a separate component): no route.
        let r = Routes::compute(4, &[(0, 1, 0), (2, 3, 1)]);
        assert_eq!(r.next_hop(1, 0), None);
        assert_eq!(r.path(1, 0), None);
        assert_eq!(r.path(0, 3), None);
        assert_eq!(r.hops(0, 2), None);
        assert_eq!(r.path(0, 1), Some(vec![0]));
    }

    #[test]
    fn stub_routes_equal_dense_routes_on_random_graphs() {
        // Reference: the dense tables over every node (what Routes computed before stubs). On
        // random graphs with stubs, parallel links, one-way links and separate components, every
        // (node, destination) gets the same next hop and hop count.
        let mut x: u64 = 0x1234;
        let mut rnd = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for case in 0..200 {
            let n = 2 + rnd(12) as usize;
            let mut e = Vec::new();
            for _ in 0..rnd(3 * n as u64) {
                let (a, b) = (rnd(n as u64) as usize, rnd(n as u64) as usize);
                if a == b {
                    continue;
                }
                if rnd(5) == 0 {
                    let i = e.len();
                    e.push((a, b, i)); // one way
                } else {
                    duplex(&mut e, a, b);
                }
            }
            // shuffle the edge order (link indices stay)
            for i in (1..e.len()).rev() {
                let j = rnd(i as u64 + 1) as usize;
                e.swap(i, j);
            }
            let r = Routes::compute(n, &e);
            let d = Dense::compute(n, &e);
            for at in 0..n {
                for dst in 0..n {
                    let want = match d.next[at * n + dst] {
                        NONE => None,
                        l => Some(l as usize),
                    };
                    assert_eq!(r.next_hop(at, dst), want, "case {case}: next hop {at}->{dst} in {e:?}");
                    let hops = match d.dist[at * n + dst] {
                        u32::MAX => None,
                        h => Some(h),
                    };
                    assert_eq!(r.hops(at, dst), hops, "case {case}: hops {at}->{dst}");
                }
            }
        }
    }

    #[test]
    fn stub_uplink_only_when_the_parent_reaches_everything() {
        // 0, 2 and 3 are stubs of 1: each one's route to anything is its link up. With a second
        // component 4 - 5 - 6 added, a stub's parent no longer reaches every node, and a stub
        // has no single uplink (its route to the other component is none)
        let mut e = Vec::new();
        duplex(&mut e, 0, 1);
        duplex(&mut e, 1, 2);
        duplex(&mut e, 1, 3);
        let r = Routes::compute(4, &e);
        assert_eq!(r.stub_uplink(3), Some(5)); // the link 3 -> 1 (duplex pushes a->b, then b->a)
        assert_eq!(r.stub_uplink(0), Some(0));
        assert_eq!(r.stub_uplink(1), None, "core node");
        for at in [0, 2, 3] {
            for dst in 0..4 {
                if dst != at {
                    assert_eq!(r.next_hop(at, dst), r.stub_uplink(at));
                }
            }
        }
        duplex(&mut e, 4, 5);
        duplex(&mut e, 5, 6);
        let r = Routes::compute(7, &e);
        assert_eq!((r.stub_uplink(3), r.stub_uplink(4)), (None, None));
    }

    #[test]
    fn a_hundred_thousand_stubs_make_a_small_core() {
        // pgw(0) - 10 eNBs (1..=10), 10,000 UEs per eNB, a server behind the pgw
        let (enbs, per) = (10usize, 10_000usize);
        let n = 2 + enbs + enbs * per;
        let server = n - 1;
        let mut e = Vec::new();
        duplex(&mut e, server, 0);
        for k in 1..=enbs {
            duplex(&mut e, k, 0);
        }
        for u in 0..enbs * per {
            duplex(&mut e, 1 + u / per, 1 + enbs + u);
        }
        let r = Routes::compute(n, &e);
        // the server hangs off the pgw too: the core is the pgw and the eNBs
        assert_eq!(r.n_core(), 1 + enbs);
        let ue = 1 + enbs + 5 * per + 17; // behind eNB 6
        assert_eq!(r.hops(server, ue), Some(3));
        let p = r.path(server, ue).unwrap();
        assert_eq!(p.iter().map(|&l| e.iter().find(|x| x.2 == l).unwrap().1).collect::<Vec<_>>(), vec![0, 6, ue]);
        assert_eq!(r.path(ue, server).unwrap().len(), 3);
    }
}
