//! Upstream Linux's in-kernel path manager (`net/mptcp/pm_netlink.c`,
//! `mptcp_pm_create_subflow_or_signal_addr` and `mptcp_pm_nl_add_addr_received`), as far as it
//! decides which subflows exist: every local address other than the initial one is an endpoint
//! flagged `subflow` and gets one subflow to the peer's initial address (id 0); an address the
//! peer announced gets one subflow from the initial local address while fewer than
//! `add_addr_accepted` announced addresses are in use; never more than `subflows` subflows besides
//! the initial one. Linux's defaults (`subflows` 2, `add_addr_accepted` 0) are
//! [`super::PathManagerConfig::KERNEL_DEFAULT`].

use super::{AddrEntry, PathManager};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub subflows: u8,
    pub add_addr_accepted: u8,
}

impl PathManager for Kernel {
    fn wanted(
        &self,
        local: &[AddrEntry],
        remote: &[AddrEntry],
        existing: &[(u8, u8)],
        out: &mut Vec<(u8, u8)>,
    ) {
        let mut extra = existing.len().saturating_sub(1);
        for l in local.iter().filter(|l| l.id != 0) {
            if extra >= self.subflows as usize {
                return;
            }
            if !existing.contains(&(l.id, 0)) {
                out.push((l.id, 0));
                extra += 1;
            }
        }
        let mut accepted = existing.iter().filter(|&&(_, r)| r != 0).count();
        for r in remote.iter().filter(|r| r.announced) {
            if extra >= self.subflows as usize || accepted >= self.add_addr_accepted as usize {
                return;
            }
            if !existing.iter().any(|&(_, rid)| rid == r.id) {
                out.push((0, r.id));
                extra += 1;
                accepted += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_net::Ipv4;

    fn a(id: u8, announced: bool) -> AddrEntry {
        AddrEntry {
            id,
            addr: Ipv4::new(10, 0, id, 1),
            announced,
        }
    }

    #[test]
    fn kernel_default_ignores_announced_addresses_and_uses_local_endpoints() {
        // Linux defaults: add_addr_accepted 0, so an ADD_ADDR opens nothing; a second local
        // endpoint flagged `subflow` opens one subflow to the initial remote address.
        let k = Kernel {
            subflows: 2,
            add_addr_accepted: 0,
        };
        let mut out = Vec::new();
        k.wanted(
            &[a(0, false)],
            &[a(0, false), a(1, true)],
            &[(0, 0)],
            &mut out,
        );
        assert!(out.is_empty());
        k.wanted(
            &[a(0, false), a(1, false)],
            &[a(0, false), a(1, true)],
            &[(0, 0)],
            &mut out,
        );
        assert_eq!(out, [(1, 0)]);
    }

    #[test]
    fn kernel_limits_bound_the_subflows() {
        let k = Kernel {
            subflows: 1,
            add_addr_accepted: 1,
        };
        let mut out = Vec::new();
        k.wanted(
            &[a(0, false), a(1, false), a(2, false)],
            &[a(0, false), a(3, true)],
            &[(0, 0)],
            &mut out,
        );
        assert_eq!(out, [(1, 0)]);
        let k = Kernel {
            subflows: 2,
            add_addr_accepted: 1,
        };
        out.clear();
        k.wanted(
            &[a(0, false)],
            &[a(0, false), a(3, true), a(4, true)],
            &[(0, 0)],
            &mut out,
        );
        assert_eq!(out, [(0, 3)]);
    }
}
