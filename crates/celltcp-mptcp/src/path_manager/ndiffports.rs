//! ndiffports: `subflows` subflows over the initial address pair, told apart by their source
//! ports (Linux out-of-tree `mptcp_ndiffports.c`, sysctl `mptcp_ndiffports`); for paths that
//! ECMP splits, or, in paper 002, to fill an LWA bearer with two subflows.

use super::{AddrEntry, PathManager};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ndiffports {
    pub subflows: u8,
}

impl PathManager for Ndiffports {
    fn wanted(
        &self,
        _local: &[AddrEntry],
        _remote: &[AddrEntry],
        existing: &[(u8, u8)],
        out: &mut Vec<(u8, u8)>,
    ) {
        let have = existing.iter().filter(|&&p| p == (0, 0)).count();
        for _ in have..self.subflows as usize {
            out.push((0, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndiffports_fills_the_initial_pair_to_n() {
        let mut out = Vec::new();
        Ndiffports { subflows: 3 }.wanted(&[], &[], &[(0, 0)], &mut out);
        assert_eq!(out, [(0, 0), (0, 0)]);
        out.clear();
        Ndiffports { subflows: 1 }.wanted(&[], &[], &[(0, 0)], &mut out);
        assert!(out.is_empty());
    }
}
