//! A node's own routing: longest-prefix-match tables and source-address policy rules, with the
//! semantics of Linux's routing policy database (`ip rule`, `ip route`; `man 8 ip-rule`, and
//! RFC 1812 §5.2.4.3 for longest match).
//!
//! - A [`Table`] maps prefixes to a route (the caller's link-direction index and the preferred
//!   source address of the interface it leaves by, Linux's `src`). The most specific matching
//!   prefix wins; `0.0.0.0/0` is the default route.
//! - [`PolicyRoutes`] holds rules in priority order, each `from PREFIX lookup TABLE`, then the
//!   main table (Linux's rule 32766, `from all lookup main`). A lookup walks the rules in order;
//!   a rule whose selector matches the packet's source consults its table, and when that table
//!   has no matching route the walk continues with the next rule, as Linux does.
//! - A source of `0.0.0.0` (an unbound socket asking where to go and from which address) matches
//!   only `from all` rules (`/0`), as in the kernel, where `ip route get` without `from` goes
//!   through the main table and returns the route's `src`.
//!
//! The network-wide routes of the topology (`routing.rs`) stay the main table of every node that
//! has no [`PolicyRoutes`]: only nodes with several interfaces carry one, so 100,000
//! single-interface UEs cost nothing here.

use crate::Ipv4;

/// An IPv4 prefix `addr/len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prefix {
    pub addr: Ipv4,
    pub len: u8,
}

impl Prefix {
    /// `addr/len` with the host bits cleared. `len` above 32 is a caller bug.
    pub fn new(addr: Ipv4, len: u8) -> Prefix {
        assert!(len <= 32, "prefix length {len} above 32");
        Prefix { addr: Ipv4(addr.0 & mask(len)), len }
    }

    /// The prefix of all addresses (`0.0.0.0/0`, Linux's `all` and `default`).
    pub const ALL: Prefix = Prefix { addr: Ipv4(0), len: 0 };

    /// One host (`addr/32`).
    pub fn host(addr: Ipv4) -> Prefix {
        Prefix { addr, len: 32 }
    }

    #[inline]
    pub fn contains(&self, a: Ipv4) -> bool {
        a.0 & mask(self.len) == self.addr.0
    }
}

#[inline]
fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

/// Where a route sends a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The caller's link direction (the interface and neighbour it leaves by).
    pub dir: u32,
    /// The preferred source address (the address of the interface it leaves by).
    pub src: Ipv4,
}

/// One routing table: longest prefix match over a few prefixes (a node's own table holds a
/// default route and its connected subnets, so a linear scan over entries kept longest first is
/// the fastest structure).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// Longest prefix first; among equal lengths, in insertion order.
    entries: Vec<(Prefix, Route)>,
}

impl Table {
    /// Adds (or replaces) the route for `p`.
    pub fn add(&mut self, p: Prefix, r: Route) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.0 == p) {
            e.1 = r;
            return;
        }
        let at = self.entries.iter().position(|e| e.0.len < p.len).unwrap_or(self.entries.len());
        self.entries.insert(at, (p, r));
    }

    /// The route of the longest prefix containing `dst`.
    #[inline]
    pub fn lookup(&self, dst: Ipv4) -> Option<Route> {
        self.entries.iter().find(|e| e.0.contains(dst)).map(|e| e.1)
    }
}

/// What a policy lookup says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// A route of the node's own tables.
    Route(Route),
    /// No own route matched: use the topology's routes (`routing.rs`), the main table's
    /// remainder.
    Main,
}

/// A node's rules and tables (`ip rule` and `ip route table N`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyRoutes {
    /// `(from, table)` in priority order.
    rules: Vec<(Prefix, u32)>,
    tables: Vec<Table>,
    /// The main table's own entries (consulted after the rules, before the topology's routes).
    main: Table,
}

impl PolicyRoutes {
    /// The table numbered `id` (created empty on first use).
    pub fn table(&mut self, id: u32) -> &mut Table {
        let i = id as usize;
        if self.tables.len() <= i {
            self.tables.resize_with(i + 1, Table::default);
        }
        &mut self.tables[i]
    }

    /// The main table's own entries.
    pub fn main(&mut self) -> &mut Table {
        &mut self.main
    }

    /// Appends `ip rule add from <from> lookup <table>` (after the rules already added, before
    /// the main table).
    pub fn add_rule(&mut self, from: Prefix, table: u32) {
        self.table(table);
        self.rules.push((from, table));
    }

    /// The route for a packet from `src` (`0.0.0.0`: not yet chosen) to `dst`.
    pub fn lookup(&self, src: Ipv4, dst: Ipv4) -> Decision {
        for &(from, t) in &self.rules {
            let matches = if src.0 == 0 { from.len == 0 } else { from.contains(src) };
            if matches {
                if let Some(r) = self.tables[t as usize].lookup(dst) {
                    return Decision::Route(r);
                }
            }
        }
        match self.main.lookup(dst) {
            Some(r) => Decision::Route(r),
            None => Decision::Main,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Ipv4 {
        let o: Vec<u8> = s.split('.').map(|x| x.parse().unwrap()).collect();
        Ipv4::new(o[0], o[1], o[2], o[3])
    }

    fn p(s: &str) -> Prefix {
        let (x, l) = s.split_once('/').unwrap();
        Prefix::new(a(x), l.parse().unwrap())
    }

    fn r(dir: u32, src: &str) -> Route {
        Route { dir, src: a(src) }
    }

    #[test]
    fn lpm_most_specific_wins_whatever_the_insertion_order() {
        // RFC 1812 §5.2.4.3: of the matching routes, the longest prefix.
        let routes = [("0.0.0.0/0", 1), ("10.0.0.0/8", 2), ("10.1.0.0/16", 3), ("10.1.2.0/24", 4), ("10.1.2.3/32", 5)];
        let mut orders = vec![routes.to_vec()];
        let mut rev = routes.to_vec();
        rev.reverse();
        orders.push(rev);
        for order in orders {
            let mut t = Table::default();
            for (s, d) in order {
                t.add(p(s), r(d, "1.1.1.1"));
            }
            assert_eq!(t.lookup(a("10.1.2.3")).unwrap().dir, 5);
            assert_eq!(t.lookup(a("10.1.2.4")).unwrap().dir, 4);
            assert_eq!(t.lookup(a("10.1.3.4")).unwrap().dir, 3);
            assert_eq!(t.lookup(a("10.2.0.1")).unwrap().dir, 2);
            assert_eq!(t.lookup(a("192.168.0.1")).unwrap().dir, 1);
        }
        let mut no_default = Table::default();
        no_default.add(p("10.0.0.0/8"), r(2, "1.1.1.1"));
        assert_eq!(no_default.lookup(a("11.0.0.1")), None);
    }

    #[test]
    fn prefix_clears_host_bits_and_replaces_the_same_prefix() {
        assert_eq!(p("10.1.2.3/16"), Prefix { addr: a("10.1.0.0"), len: 16 });
        assert!(Prefix::ALL.contains(a("255.255.255.255")));
        let mut t = Table::default();
        t.add(p("10.0.0.0/8"), r(1, "1.1.1.1"));
        t.add(p("10.9.9.9/8"), r(2, "1.1.1.1")); // same prefix as 10.0.0.0/8: replaced
        assert_eq!(t.lookup(a("10.5.5.5")).unwrap().dir, 2);
    }

    #[test]
    fn policy_source_rules_as_linux_ip_rule() {
        // A multihomed host as set up for two uplinks (the Linux Advanced Routing HOWTO §4.2):
        //   ip route add default via <lte> src 10.45.0.1              (main)
        //   ip route add default via <wire> src 10.0.0.7 table 1
        //   ip rule add from 10.0.0.7 table 1
        let (lte, wire) = (a("10.45.0.1"), a("10.0.0.7"));
        let mut pr = PolicyRoutes::default();
        pr.table(1).add(Prefix::ALL, Route { dir: 20, src: wire });
        pr.add_rule(Prefix::host(wire), 1);
        pr.main().add(Prefix::ALL, Route { dir: 10, src: lte });
        let server = a("192.0.2.1");
        // a packet from the wired address leaves by the wire, from the LTE address by LTE
        assert_eq!(pr.lookup(wire, server), Decision::Route(Route { dir: 20, src: wire }));
        assert_eq!(pr.lookup(lte, server), Decision::Route(Route { dir: 10, src: lte }));
        // an unbound socket (no source yet) follows the main table and takes its `src`
        assert_eq!(pr.lookup(Ipv4(0), server), Decision::Route(Route { dir: 10, src: lte }));
    }

    #[test]
    fn policy_falls_through_a_table_without_a_match() {
        // `ip rule`: when the rule's table has no route, the lookup continues with the next
        // rule, then main; with no own route anywhere, the topology's routes decide.
        let src = a("10.0.0.7");
        let mut pr = PolicyRoutes::default();
        pr.table(1).add(p("172.16.0.0/12"), r(30, "10.0.0.7"));
        pr.add_rule(Prefix::host(src), 1);
        pr.table(2).add(p("192.0.2.0/24"), r(40, "10.0.0.7"));
        pr.add_rule(p("10.0.0.0/24"), 2);
        assert_eq!(pr.lookup(src, a("172.16.5.5")), Decision::Route(r(30, "10.0.0.7")));
        assert_eq!(pr.lookup(src, a("192.0.2.9")), Decision::Route(r(40, "10.0.0.7")));
        assert_eq!(pr.lookup(src, a("198.51.100.1")), Decision::Main);
        // another source skips both rules
        assert_eq!(pr.lookup(a("10.0.1.1"), a("192.0.2.9")), Decision::Main);
        // rules are tried in order: the first matching one with a route wins
        let mut first = PolicyRoutes::default();
        first.table(1).add(Prefix::ALL, r(1, "10.0.0.7"));
        first.table(2).add(Prefix::ALL, r(2, "10.0.0.7"));
        first.add_rule(Prefix::host(src), 1);
        first.add_rule(Prefix::ALL, 2);
        assert_eq!(first.lookup(src, a("8.8.8.8")).dir(), Some(1));
        assert_eq!(first.lookup(a("10.9.9.9"), a("8.8.8.8")).dir(), Some(2));
        assert_eq!(first.lookup(Ipv4(0), a("8.8.8.8")).dir(), Some(2));
    }

    impl Decision {
        fn dir(self) -> Option<u32> {
            match self {
                Decision::Route(r) => Some(r.dir),
                Decision::Main => None,
            }
        }
    }
}
