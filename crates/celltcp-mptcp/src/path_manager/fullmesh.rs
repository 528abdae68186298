//! Full mesh: a subflow between every local and every remote address (Linux out-of-tree
//! `mptcp_fullmesh.c`, without its per-address `num_subflows` > 1 option).

use super::{AddrEntry, PathManager};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fullmesh;

impl PathManager for Fullmesh {
    fn wanted(
        &self,
        local: &[AddrEntry],
        remote: &[AddrEntry],
        existing: &[(u8, u8)],
        out: &mut Vec<(u8, u8)>,
    ) {
        for l in local {
            for r in remote {
                if !existing.contains(&(l.id, r.id)) {
                    out.push((l.id, r.id));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celltcp_net::Ipv4;

    #[test]
    fn fullmesh_pairs_every_local_with_every_remote_address() {
        let a = |id, x| AddrEntry {
            id,
            addr: Ipv4::new(10, 0, x, 1),
            announced: id != 0,
        };
        let mut out = Vec::new();
        Fullmesh.wanted(
            &[a(0, 1), a(1, 2)],
            &[a(0, 9), a(5, 8)],
            &[(0, 0)],
            &mut out,
        );
        assert_eq!(out, [(0, 5), (1, 0), (1, 5)]);
    }
}
