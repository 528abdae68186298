//! Path managers: which subflows a connection opens (RFC 8684 §3.4 leaves the policy to the
//! host). The initiator runs the path manager; the listener only announces its other addresses
//! (ADD_ADDR) when configured to.
//!
//! - [`fullmesh`]: one subflow per pair of (local address, remote address), remote addresses
//!   including those learnt from ADD_ADDR (Linux out-of-tree `fullmesh`).
//! - [`ndiffports`]: `n` subflows over the initial address pair, with different source ports
//!   (Linux out-of-tree `ndiffports`; paper 002 uses it).
//! - [`kernel`]: upstream Linux's in-kernel path manager (`net/mptcp/pm_netlink.c`) with its
//!   limits: a subflow from each local endpoint flagged `subflow` to the peer's initial address,
//!   subflows to announced addresses only while `add_addr_accepted` allows, at most `subflows`
//!   extra subflows (defaults 2 and 0, so by default no announced address is used).

pub mod fullmesh;
pub mod kernel;
pub mod ndiffports;

/// An address known to the connection, with its MPTCP address id (RFC 8684 §3.4.1; the
/// initial subflow's addresses have id 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrEntry {
    pub id: u8,
    pub addr: celltcp_net::Ipv4,
    /// Learnt from an ADD_ADDR (remote addresses only).
    pub announced: bool,
}

/// A path manager: given the local and remote addresses and the (local id, remote id) pairs of
/// the subflows that exist or existed (a pair is tried once), the pairs to open now.
pub trait PathManager {
    fn wanted(
        &self,
        local: &[AddrEntry],
        remote: &[AddrEntry],
        existing: &[(u8, u8)],
        out: &mut Vec<(u8, u8)>,
    );
}

/// A path manager and its parameters, as a scenario writes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "name", rename_all = "lowercase", deny_unknown_fields)]
pub enum PathManagerConfig {
    #[default]
    Fullmesh,
    /// `subflows`: total subflows over the initial pair (paper 002: 2).
    Ndiffports { subflows: u8 },
    /// Upstream Linux's in-kernel manager, limits as `ip mptcp limits` sets them.
    Kernel { subflows: u8, add_addr_accepted: u8 },
}

impl PathManagerConfig {
    /// Linux's defaults for the in-kernel manager (`pm_netlink.c` `pm_nl_init_net`:
    /// `subflows_max` 2, `add_addr_accept_max` 0).
    pub const KERNEL_DEFAULT: PathManagerConfig = PathManagerConfig::Kernel {
        subflows: 2,
        add_addr_accepted: 0,
    };

    pub fn validate(&self) -> Result<(), String> {
        match *self {
            PathManagerConfig::Ndiffports { subflows } if subflows == 0 || subflows > 8 => {
                Err(format!("mptcp.path_manager.subflows = {subflows}: expected 1..=8"))
            }
            PathManagerConfig::Kernel { subflows, add_addr_accepted } if subflows > 8 || add_addr_accepted > 8 => Err(format!(
                "mptcp.path_manager: subflows = {subflows}, add_addr_accepted = {add_addr_accepted}: expected each in 0..=8 (Linux MPTCP_PM_ADDR_MAX)"
            )),
            _ => Ok(()),
        }
    }
}

/// Closed-enum dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnyPathManager {
    Fullmesh(fullmesh::Fullmesh),
    Ndiffports(ndiffports::Ndiffports),
    Kernel(kernel::Kernel),
}

impl AnyPathManager {
    pub fn new(cfg: PathManagerConfig) -> Self {
        match cfg {
            PathManagerConfig::Fullmesh => AnyPathManager::Fullmesh(fullmesh::Fullmesh),
            PathManagerConfig::Ndiffports { subflows } => {
                AnyPathManager::Ndiffports(ndiffports::Ndiffports { subflows })
            }
            PathManagerConfig::Kernel {
                subflows,
                add_addr_accepted,
            } => AnyPathManager::Kernel(kernel::Kernel {
                subflows,
                add_addr_accepted,
            }),
        }
    }
}

impl PathManager for AnyPathManager {
    fn wanted(
        &self,
        local: &[AddrEntry],
        remote: &[AddrEntry],
        existing: &[(u8, u8)],
        out: &mut Vec<(u8, u8)>,
    ) {
        match self {
            AnyPathManager::Fullmesh(p) => p.wanted(local, remote, existing, out),
            AnyPathManager::Ndiffports(p) => p.wanted(local, remote, existing, out),
            AnyPathManager::Kernel(p) => p.wanted(local, remote, existing, out),
        }
    }
}
