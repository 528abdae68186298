//! A node's forwarding table (FIB): IPv4 prefixes to a next hop, looked up by longest prefix
//! match (RFC 1812 §5.2.4.3: "the router MUST use the most specific matching route"), as Linux's
//! `fib_table_lookup` answers for `ip route` entries of the `local` and `main` tables.
//!
//! A route names what happens to a packet for a matching destination ([`Hop`]): delivered to
//! the node itself (Linux's `local` routes, one per address of the node), or sent by the
//! caller's link direction (`via`). Destinations no prefix covers have no route (the kernel's
//! `-ENETUNREACH`); `0.0.0.0/0` is the default route.
//!
//! # Lookup
//!
//! Prefixes are either disjoint or nested, so they cut the address space into *elementary
//! intervals*, each covered by one most specific prefix (or none). [`Fib`] keeps the prefixes as
//! given and, after each change, the intervals' starts in one sorted array beside their hops: a
//! lookup is one binary search (`O(log k)` for `k` prefixes, a handful of comparisons for a
//! router's table), the range-search form of longest-prefix match (Lampson, Srinivasan and
//! Varghese, "IP lookups using multiway and multicolumn search", IEEE/ACM ToN 7(3), 1999). A
//! table whose only route is a default route answers with one comparison.
//!
//! # Tables from host routes
//!
//! [`Fib::from_host_routes`] builds a small table from one route per address (what the
//! network-wide routes say for each host): consecutive addresses with the same next hop merge
//! into one range, cut into the fewest prefixes that cover it exactly (the CIDR blocks of
//! RFC 4632 §3.1), so a router in front of 10,000 consecutively numbered UEs holds a few dozen
//! prefixes, not 10,000 host routes. Addresses between two merged hosts that belong to no host
//! take their route (as a subnet route would); `local` routes are never merged, so only the
//! node's own addresses are delivered to it.

use crate::policy::Prefix;
use crate::Ipv4;

/// What a route does with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hop {
    /// Deliver it to the node itself (a `local` route: one of the node's addresses).
    Local,
    /// Send it by this link direction (the caller's index; the interface and neighbour).
    Via(u32),
}

/// Encoded hops in the interval array.
const LOCAL: u32 = u32::MAX - 1;
const NONE: u32 = u32::MAX;

#[inline]
fn encode(h: Hop) -> u32 {
    match h {
        Hop::Local => LOCAL,
        Hop::Via(d) => {
            assert!(d < LOCAL, "link direction {d} too large for a route");
            d
        }
    }
}

#[inline]
fn decode(v: u32) -> Option<Hop> {
    match v {
        NONE => None,
        LOCAL => Some(Hop::Local),
        d => Some(Hop::Via(d)),
    }
}

/// The first and last address of `p`.
#[inline]
fn range(p: Prefix) -> (u32, u32) {
    let size_m1 = if p.len == 0 { u32::MAX } else { (1u32 << (32 - u32::from(p.len))).wrapping_sub(1) };
    (p.addr.0, p.addr.0 | size_m1)
}

/// A forwarding table with longest-prefix-match lookup (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fib {
    /// The routes as added, at most one per prefix.
    routes: Vec<(Prefix, Hop)>,
    /// Elementary intervals: `starts[0] == 0`, increasing; `hops[i]` (encoded) holds from
    /// `starts[i]` up to the next start.
    starts: Vec<u32>,
    hops: Vec<u32>,
}

impl Default for Fib {
    fn default() -> Self {
        Fib { routes: Vec::new(), starts: vec![0], hops: vec![NONE] }
    }
}

impl Fib {
    /// An empty table (no route to anywhere).
    pub fn new() -> Fib {
        Fib::default()
    }

    /// A table from `routes` (a later route for the same prefix replaces an earlier one).
    pub fn from_routes(routes: impl IntoIterator<Item = (Prefix, Hop)>) -> Fib {
        let mut f = Fib::new();
        for (p, h) in routes {
            f.insert(p, h);
        }
        f.compile();
        f
    }

    /// Adds the route `p → hop`, replacing any route for the same prefix (`ip route replace`).
    pub fn add(&mut self, p: Prefix, hop: Hop) {
        self.insert(p, hop);
        self.compile();
    }

    fn insert(&mut self, p: Prefix, hop: Hop) {
        let p = Prefix::new(p.addr, p.len);
        match self.routes.iter_mut().find(|r| r.0 == p) {
            Some(r) => r.1 = hop,
            None => self.routes.push((p, hop)),
        }
    }

    /// The routes, in the order added.
    pub fn routes(&self) -> &[(Prefix, Hop)] {
        &self.routes
    }

    /// Number of routes (prefixes).
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// The hop of the most specific route covering `dst`; `None` when no route covers it.
    #[inline]
    pub fn lookup(&self, dst: Ipv4) -> Option<Hop> {
        if self.starts.len() == 1 {
            return decode(self.hops[0]);
        }
        // the last interval starting at or below dst (starts[0] == 0, so there is one)
        let i = self.starts.partition_point(|&s| s <= dst.0) - 1;
        decode(self.hops[i])
    }

    /// Recomputes the elementary intervals from the routes: a sweep over the prefixes in
    /// address order (outer before inner at the same start) with a stack of the prefixes that
    /// cover the current address; the top of the stack is the most specific.
    fn compile(&mut self) {
        let mut sorted: Vec<(u32, u32, u32)> = self.routes.iter().map(|&(p, h)| (range(p).0, range(p).1, encode(h))).collect();
        // same start: the larger (outer) prefix first
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut starts = Vec::with_capacity(2 * sorted.len() + 1);
        let mut hops = Vec::with_capacity(2 * sorted.len() + 1);
        let mut emit = |from: u64, hop: u32| {
            if hops.last() != Some(&hop) {
                starts.push(from as u32);
                hops.push(hop);
            }
        };
        // the next address not yet assigned to an interval (u64: it may pass 2^32 - 1)
        let mut cur: u64 = 0;
        let mut stack: Vec<(u64, u32)> = Vec::new();
        for &(lo, hi, hop) in &sorted {
            let lo = u64::from(lo);
            // prefixes that end before this one starts: their remainder
            while let Some(&(end, h)) = stack.last() {
                if end >= lo {
                    break;
                }
                if cur <= end {
                    emit(cur, h);
                    cur = end + 1;
                }
                stack.pop();
            }
            if cur < lo {
                emit(cur, stack.last().map_or(NONE, |t| t.1));
            }
            cur = lo;
            stack.push((u64::from(hi), hop));
        }
        while let Some((end, h)) = stack.pop() {
            if cur <= end {
                emit(cur, h);
                cur = end + 1;
            }
        }
        if cur <= u64::from(u32::MAX) {
            emit(cur, NONE);
        }
        self.starts = starts;
        self.hops = hops;
    }

    /// A table from one route per address (`hosts` sorted by address, no address twice):
    /// consecutive hosts with the same `Via` hop merge into one range cut into CIDR prefixes;
    /// `Local` hosts and hosts with no route (`None`) stay single (see the module doc).
    pub fn from_host_routes(hosts: &[(Ipv4, Option<Hop>)]) -> Fib {
        let mut f = Fib::new();
        let mut i = 0;
        while i < hosts.len() {
            let (a, h) = hosts[i];
            let mut j = i + 1;
            if let Some(Hop::Via(_)) = h {
                while j < hosts.len() && hosts[j].1 == h {
                    j += 1;
                }
            }
            if let Some(h) = h {
                let last = hosts[j - 1].0;
                for p in cidr_cover(a.0, last.0) {
                    f.routes.push((p, h));
                }
            }
            i = j;
        }
        f.compile();
        f
    }
}

/// The fewest prefixes that cover exactly `lo..=hi` (RFC 4632 §3.1 blocks): at each step the
/// largest block that starts at `lo`, is aligned there, and does not pass `hi`.
pub fn cidr_cover(lo: u32, hi: u32) -> Vec<Prefix> {
    debug_assert!(lo <= hi);
    let mut out = Vec::new();
    let (mut lo, hi) = (u64::from(lo), u64::from(hi));
    while lo <= hi {
        // alignment of lo (2^32 for 0), capped by the remaining length
        let mut size: u64 = if lo == 0 { 1 << 32 } else { 1 << lo.trailing_zeros() };
        while size > hi - lo + 1 {
            size >>= 1;
        }
        let len = 32 - size.trailing_zeros() as u8;
        out.push(Prefix { addr: Ipv4(lo as u32), len });
        lo += size;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Prefix {
        let (a, l) = s.split_once('/').unwrap();
        let o: Vec<u8> = a.split('.').map(|x| x.parse().unwrap()).collect();
        Prefix::new(Ipv4::new(o[0], o[1], o[2], o[3]), l.parse().unwrap())
    }
    fn a(s: &str) -> Ipv4 {
        p(&format!("{s}/32")).addr
    }

    /// The reference: every route checked, the longest containing prefix wins (a plain reading
    /// of RFC 1812 §5.2.4.3).
    fn naive(routes: &[(Prefix, Hop)], dst: Ipv4) -> Option<Hop> {
        routes.iter().filter(|r| r.0.contains(dst)).max_by_key(|r| r.0.len).map(|r| r.1)
    }

    #[test]
    fn fib_most_specific_prefix_wins_as_in_linux() {
        // ip route add default via A; 10.0.0.0/8 via B; 10.1.0.0/16 via C; 10.1.2.0/24 via D;
        // 10.1.2.3/32 local: `ip route get` picks the longest match, whatever the order added
        let routes = [(p("10.1.2.0/24"), Hop::Via(4)), (p("0.0.0.0/0"), Hop::Via(1)), (p("10.1.2.3/32"), Hop::Local), (p("10.0.0.0/8"), Hop::Via(2)), (p("10.1.0.0/16"), Hop::Via(3))];
        for perm in [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]] {
            let f = Fib::from_routes(perm.iter().map(|&k| routes[k]));
            assert_eq!(f.lookup(a("10.1.2.3")), Some(Hop::Local));
            assert_eq!(f.lookup(a("10.1.2.4")), Some(Hop::Via(4)));
            assert_eq!(f.lookup(a("10.1.3.4")), Some(Hop::Via(3)));
            assert_eq!(f.lookup(a("10.2.0.0")), Some(Hop::Via(2)));
            assert_eq!(f.lookup(a("10.255.255.255")), Some(Hop::Via(2)));
            assert_eq!(f.lookup(a("11.0.0.0")), Some(Hop::Via(1)));
            assert_eq!(f.lookup(a("9.255.255.255")), Some(Hop::Via(1)));
            assert_eq!(f.lookup(a("255.255.255.255")), Some(Hop::Via(1)));
            assert_eq!(f.lookup(a("0.0.0.0")), Some(Hop::Via(1)));
        }
    }

    #[test]
    fn fib_default_route_and_no_route() {
        // an empty table routes nothing; a default route alone routes everything; without a
        // default, only the covered prefixes have a route (ENETUNREACH elsewhere)
        assert_eq!(Fib::new().lookup(a("1.2.3.4")), None);
        let mut f = Fib::new();
        f.add(Prefix::ALL, Hop::Via(7));
        assert_eq!(f.lookup(a("1.2.3.4")), Some(Hop::Via(7)));
        assert_eq!(f.lookup(a("255.255.255.255")), Some(Hop::Via(7)));
        let g = Fib::from_routes([(p("192.168.0.0/16"), Hop::Via(1))]);
        assert_eq!(g.lookup(a("192.168.7.7")), Some(Hop::Via(1)));
        assert_eq!(g.lookup(a("192.167.255.255")), None);
        assert_eq!(g.lookup(a("192.169.0.0")), None);
        // `ip route replace`: the same prefix again replaces the route
        f.add(Prefix::ALL, Hop::Via(8));
        assert_eq!((f.len(), f.lookup(a("1.2.3.4"))), (1, Some(Hop::Via(8))));
        // a host route at either end of the address space
        let h = Fib::from_routes([(p("0.0.0.0/32"), Hop::Local), (p("255.255.255.255/32"), Hop::Via(2))]);
        assert_eq!((h.lookup(a("0.0.0.0")), h.lookup(a("0.0.0.1"))), (Some(Hop::Local), None));
        assert_eq!((h.lookup(a("255.255.255.255")), h.lookup(a("255.255.255.254"))), (Some(Hop::Via(2)), None));
    }

    #[test]
    fn fib_lpm_equals_the_naive_reference_on_random_tables() {
        // random tables (nested, adjacent and disjoint prefixes of every length, duplicates
        // replaced), looked up at random addresses and at every prefix's edges and neighbours
        let mut x: u64 = 0x5eed;
        let mut rnd = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for case in 0..500 {
            let n = rnd(40) as usize;
            let mut routes: Vec<(Prefix, Hop)> = Vec::new();
            // addresses from a small pool of bases, so prefixes nest and touch
            let bases = [0u32, 0x0a00_0000, 0x0a2d_0000, 0x0a2d_0100, 0xffff_ff00, 0xc0a8_0000];
            for _ in 0..n {
                let base = bases[rnd(bases.len() as u64) as usize];
                let addr = base.wrapping_add(rnd(1 << 12) as u32);
                let len = match rnd(4) {
                    0 => rnd(33) as u8,
                    1 => 32,
                    2 => 24 + rnd(9) as u8,
                    _ => 8 + rnd(17) as u8,
                };
                let hop = if rnd(6) == 0 { Hop::Local } else { Hop::Via(rnd(5) as u32) };
                let pf = Prefix::new(Ipv4(addr), len);
                match routes.iter_mut().find(|r| r.0 == pf) {
                    Some(r) => r.1 = hop,
                    None => routes.push((pf, hop)),
                }
            }
            let f = Fib::from_routes(routes.iter().copied());
            let mut probes: Vec<u32> = (0..200).map(|_| rnd(1 << 32) as u32).collect();
            for r in &routes {
                let (lo, hi) = range(r.0);
                probes.extend([lo, hi, lo.wrapping_sub(1), hi.wrapping_add(1), lo.wrapping_add(1)]);
            }
            for &d in &probes {
                assert_eq!(f.lookup(Ipv4(d)), naive(&routes, Ipv4(d)), "case {case}: {} in {routes:?}", Ipv4(d));
            }
            // the intervals are minimal: no two neighbours share a hop
            assert!(f.hops.windows(2).all(|w| w[0] != w[1]), "case {case}");
        }
    }

    #[test]
    fn cidr_cover_is_exact_and_minimal() {
        // 10.45.0.1 - 10.45.39.250 (10,000 UEs at 250 per /24)
        let (lo, hi) = (a("10.45.0.1").0, a("10.45.39.250").0);
        let c = cidr_cover(lo, hi);
        assert_eq!(c.first(), Some(&p("10.45.0.1/32")));
        assert!(c.len() <= 2 * 32);
        let mut next = u64::from(lo);
        for q in &c {
            let (l, h) = range(*q);
            assert_eq!(u64::from(l), next, "{c:?}");
            next = u64::from(h) + 1;
        }
        assert_eq!(next, u64::from(hi) + 1);
        assert_eq!(cidr_cover(0, u32::MAX), vec![Prefix::ALL]);
        assert_eq!(cidr_cover(a("10.0.0.0").0, a("10.255.255.255").0), vec![p("10.0.0.0/8")]);
        // brute force on small ranges: exact cover, and never two blocks that merge into one
        for lo in 0..70u32 {
            for hi in lo..70 {
                let c = cidr_cover(lo, hi);
                let covered: Vec<u32> = c.iter().flat_map(|q| range(*q).0..=range(*q).1).collect();
                assert_eq!(covered, (lo..=hi).collect::<Vec<_>>());
                for w in c.windows(2) {
                    let merged = w[0].len == w[1].len && w[0].len > 0 && Prefix::new(w[0].addr, w[0].len - 1) == Prefix::new(w[1].addr, w[1].len - 1);
                    assert!(!merged, "{lo}..={hi}: {c:?}");
                }
            }
        }
    }

    #[test]
    fn host_routes_merge_into_few_prefixes() {
        // a router in front of 10,000 consecutively numbered UEs (250 per /24) behind one
        // neighbour, 10,000 more behind another, itself, and a server
        let mut hosts = Vec::new();
        hosts.push((a("10.0.0.1"), Some(Hop::Via(9))));
        hosts.push((a("10.44.0.1"), Some(Hop::Local)));
        for u in 0..20_000u32 {
            let addr = Ipv4::new(10, 45 + (u / 64_000) as u8, ((u % 64_000) / 250) as u8, (u % 250 + 1) as u8);
            hosts.push((addr, Some(Hop::Via(if u < 10_000 { 1 } else { 2 }))));
        }
        let f = Fib::from_host_routes(&hosts);
        assert!(f.len() < 100, "{} prefixes", f.len());
        for &(h, hop) in &hosts {
            assert_eq!(f.lookup(h), hop, "{h}");
        }
        // an address between two merged hosts takes their route; local routes are exact
        assert_eq!(f.lookup(a("10.45.0.0")), None); // below the first UE: no host there
        assert_eq!(f.lookup(a("10.45.0.255")), Some(Hop::Via(1)));
        assert_eq!(f.lookup(a("10.44.0.2")), None);
        assert_eq!(f.lookup(a("10.0.0.2")), None);
    }
}
