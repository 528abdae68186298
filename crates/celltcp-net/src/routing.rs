//! Static routing over a small graph of hosts and routers (what ns-3's
//! `Ipv4GlobalRoutingHelper::PopulateRoutingTables` gives a point-to-point topology, with hop count
//! as the metric).
//!
//! Nodes are `0..n_nodes`; each directed edge `(from, to, link)` is one link direction, named by
//! the caller's link index. [`Routes::compute`] runs one breadth-first search per destination over
//! the reversed edges, so every node learns its hop distance to every destination, and the next
//! hop from `at` towards `dst` is the link of lowest index among those leading to a neighbour one
//! hop closer. The tie-break makes tables deterministic whatever the edge order, and since each
//! hop picks a link onto a shortest path, the routes are loop-free. Tables are dense `n × n`
//! (fine for the tens of nodes of a scenario); lookups are O(1).

/// Next-hop tables for every (node, destination) pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routes {
    n: usize,
    /// `next[at * n + dst]`: link index, or `NONE`.
    next: Vec<u32>,
    /// `dist[at * n + dst]`: hops, or `u32::MAX` if unreachable.
    dist: Vec<u32>,
    /// Far end of each link index (for walking paths).
    link_to: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Routes {
    /// Computes shortest-hop routes. Edges naming nodes outside `0..n_nodes` are a caller bug.
    pub fn compute(n_nodes: usize, edges: &[(usize, usize, usize)]) -> Routes {
        let n = n_nodes;
        let max_link = edges.iter().map(|e| e.2 + 1).max().unwrap_or(0);
        let mut link_to = vec![NONE; max_link];
        // Incoming adjacency, for the reverse BFS.
        let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(from, to, link) in edges {
            assert!(from < n && to < n, "edge ({from}, {to}, {link}) outside 0..{n}");
            incoming[to].push(from);
            link_to[link] = to as u32;
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
        Routes { n, next, dist, link_to }
    }

    pub fn n_nodes(&self) -> usize {
        self.n
    }

    /// The link to take from `at` towards `dst`; `None` if unreachable or already there.
    #[inline]
    pub fn next_hop(&self, at: usize, dst: usize) -> Option<usize> {
        debug_assert!(at < self.n && dst < self.n);
        match *self.next.get(at * self.n + dst)? {
            NONE => None,
            l => Some(l as usize),
        }
    }

    /// Hops from `src` to `dst`, if reachable.
    pub fn hops(&self, src: usize, dst: usize) -> Option<u32> {
        if src >= self.n || dst >= self.n {
            return None;
        }
        match self.dist.get(src * self.n + dst).copied()? {
            u32::MAX => None,
            d => Some(d),
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
}
