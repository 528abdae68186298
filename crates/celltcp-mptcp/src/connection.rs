//! One MPTCP connection (RFC 8684): a set of `celltcp-tcp` subflows under one data sequence
//! space, sans-IO.
//!
//! The caller feeds every segment of any of its subflows to [`MptcpConnection::on_segment`]
//! (with the 4-tuple it arrived on), drains [`MptcpConnection::poll_transmit`] until `None` (each
//! [`Outgoing`] names the 4-tuple to send from), and fires [`MptcpConnection::on_timeout`] at
//! [`MptcpConnection::next_deadline`]. The application writes and reads at the data level
//! ([`MptcpConnection::write`], [`MptcpConnection::read`], [`MptcpConnection::close`]). New
//! subflows are opened when the path manager asks ([`MptcpConnection::wanted_subflows`]) and the
//! caller has chosen a source port and an ISS ([`MptcpConnection::open_subflow`]).
//!
//! What is modelled, with the governing text:
//!
//! - Handshakes: MP_CAPABLE v1 on SYN (no key), SYN/ACK (the listener's key) and the third ACK
//!   (both keys) (§3.1); MP_JOIN with the token of the listener's key and random nonces, the
//!   SYN/ACK's 64-bit truncated HMAC and the third ACK's 160-bit HMAC, both checked (§3.2); a
//!   join whose HMAC or token is wrong is reset and never carries data. A joined subflow takes
//!   data once its third ACK has left (Linux waits for its acknowledgement: one RTT earlier here).
//! - Data sequence space: DSN = IDSN + 1 + offset, IDSN the low 64 bits of SHA-256(key) (§3.1).
//!   Data is handed to a subflow as one mapping per write (at most 65535 bytes, a whole number of
//!   subflow MSS where possible), and only when everything the subflow was given before has been
//!   sent, so no TCP segment spans two mappings. Every data segment carries a DSS with its
//!   mapping (64-bit DSN) and a 64-bit DATA_ACK (§3.3); pure ACKs carry the DATA_ACK.
//! - Receiver: mappings by subflow sequence number, in-order reassembly at the data level,
//!   duplicates (reinjected or redundant copies) dropped; the DATA_ACK is the next expected DSN.
//! - Connection-level receive window (§3.3.4): the TCP window field of every subflow segment is
//!   the connection's window, relative to the DATA_ACK; the sender keeps new data within
//!   `DATA_ACK + window`. As Linux (`connection/rcv_space.rs`): the connection's receive buffer
//!   autotunes from the subflows' initial buffer (`mptcp_rcv_space_adjust`) and every subflow's
//!   buffer follows it; each subflow offers the connection's free space capped by its own
//!   `rcv_ssthresh` ramp (`__tcp_select_window`, `tcp_grow_window`), and the connection's
//!   right edge is the furthest any subflow advertised (`mptcp_set_rwin`); an application read
//!   sends a window update by `mptcp_cleanup_rbuf`'s rule. (Before, the subflows ran without
//!   the ramp and the buffer was fixed at `rcv_buf`, because a subflow's ramp alone stopped at
//!   its own autotuned buffer, sized by its own share of the data, and starved the others: two
//!   ndiffports subflows on one path, 0.23 MB for one of them in 6 s instead of more than
//!   0.5 MB.)
//! - DATA_FIN (§3.3.3): after [`MptcpConnection::close`] and once all data has been handed to
//!   subflows, a DSS with F and a one-octet mapping (SSN 0) goes on a pure ACK, again every RTO
//!   until DATA_ACKed; when both DATA_FINs are acknowledged the subflows close with TCP FINs.
//! - Reinjection: when a subflow's retransmission timer fires, the data it holds that is not
//!   DATA_ACKed is queued again for the other subflows and the subflow is stale (no new data)
//!   until it makes progress (upstream Linux `mptcp_retransmit_timer` / stale subflows); a
//!   subflow reset, aborted, or whose address is removed, fails and gives back all its data.
//! - Path management: [`crate::path_manager`] decides the subflows; a listener announces its
//!   other addresses with ADD_ADDR (HMAC checked, echoed, §3.4.1); a removed local address
//!   is announced with REMOVE_ADDR, and a received REMOVE_ADDR fails the subflows of that
//!   address (§3.4.2); MP_FASTCLOSE with the right key resets everything (§3.5).
//! - Coupled congestion control: before a subflow handles a segment, its
//!   [`Coupling`](celltcp_tcp::cc::coupled::Coupling) is recomputed from every established
//!   subflow ([`crate::coupled`]).
//!
//! Not modelled: fallback to TCP (middleboxes are not simulated), MP_CAPABLE with data and the
//! DSS checksum on the wire (encoded and decoded by [`crate::options`] but not sent: Linux's
//! default is no checksum), MP_PRIO/backup subflows, MP_FAIL, MP_TCPRST, more than 4 GiB per
//! subflow, address ids beyond the configured addresses, and TCP-level options other than the
//! one MPTCP option per segment.

use std::collections::{BTreeMap, VecDeque};

use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::{Ipv4, MptcpOption, TcpSegment};
use celltcp_tcp::cc::coupled::CoupledConfig;
use celltcp_tcp::cc::CcConfig;
use celltcp_tcp::{CaState, TcpConfig, TcpEndpoint, TcpSample, TcpState};

use crate::coupled::{AnyCoupled, CoupledCc, CoupledKind, PathView};
use crate::crypto;
use crate::options::{CapableKeys, Dss, Mapping, MptcpOpt, FLAG_HMAC_SHA256};
use crate::path_manager::{AddrEntry, AnyPathManager, PathManager, PathManagerConfig};
use crate::scheduler::{AnyScheduler, Candidate, Scheduler, SchedulerKind};

mod input;
mod output;
mod rcv_space;
mod reinject;

use rcv_space::RcvSpace;

/// Option bytes a data segment's DSS takes (26, NOP-padded to 28): the subflow MSS is the
/// configured one less this, as Linux's `mptcp_established_options` shrinks `mss_now`.
pub const DSS_OPTION_BYTES: u32 = 28;
/// Largest mapping (the Data-Level Length is 16 bits, §3.3.1).
pub const MAX_MAPPING: u64 = 65_535;
/// An ADD_ADDR not echoed is sent again after this long (Linux's `net.mptcp.add_addr_timeout`
/// default, 120 s; RFC 8684 §3.4.1 leaves the retransmission policy to the implementation).
pub const ADD_ADDR_TIMEOUT: SimDuration = SimDuration::from_secs(120);
/// At most this many retransmissions of an ADD_ADDR (Linux `ADD_ADDR_RETRANS_MAX`, pm.c).
pub const ADD_ADDR_RETRANS_MAX: u8 = 3;

/// Configuration of one MPTCP connection (the flow's `mptcp = { ... }`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MptcpConfig {
    /// Coupled congestion control (`"olia"`, `"lia"`, `"balia"` or `"uncoupled"`: each subflow
    /// then runs `tcp.cc`).
    pub cc: CoupledKind,
    pub scheduler: SchedulerKind,
    pub path_manager: PathManagerConfig,
    /// At most this many subflows at once, the initial one included, whatever the path
    /// manager wants (0: no limit); failed ones do not count.
    pub max_subflows: u8,
    /// Connection-level send buffer, bytes (written and not DATA_ACKed).
    pub snd_buf: u64,
    /// The most the connection-level receive buffer holds, bytes (the window of §3.3.4 is its
    /// free space). The buffer itself follows `tcp.rcv_buf`: autotuned from its initial size up
    /// to the smaller of its maximum and this (Linux `mptcp_rcv_space_adjust`, `tcp_rmem[2]`),
    /// or fixed at the smaller of its fixed size and this (`SO_RCVBUF`, as the flow's `window`
    /// sets it).
    pub rcv_buf: u64,
    /// The listener announces its addresses other than the initial one with ADD_ADDR.
    pub announce: bool,
    /// Every subflow's TCP configuration (its `mss` is reduced by [`DSS_OPTION_BYTES`]).
    pub tcp: TcpConfig,
}

impl Default for MptcpConfig {
    fn default() -> Self {
        MptcpConfig {
            cc: CoupledKind::Olia,
            scheduler: SchedulerKind::MinRtt,
            path_manager: PathManagerConfig::Fullmesh,
            max_subflows: 0,
            snd_buf: 4 << 20,
            rcv_buf: 6 << 20,
            announce: true,
            tcp: TcpConfig::default(),
        }
    }
}

impl MptcpConfig {
    /// Checks ranges; the error names the key, the value and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        if self.snd_buf < 65_536 {
            return Err(format!(
                "mptcp.snd_buf = {}: expected at least 65536 bytes",
                self.snd_buf
            ));
        }
        if self.rcv_buf < 65_536 {
            return Err(format!(
                "mptcp.rcv_buf = {}: expected at least 65536 bytes",
                self.rcv_buf
            ));
        }
        if self.tcp.mss <= DSS_OPTION_BYTES + 64 {
            return Err(format!("mptcp.tcp.mss = {}: expected more than {} (the DSS takes {DSS_OPTION_BYTES} bytes)", self.tcp.mss, DSS_OPTION_BYTES + 64));
        }
        self.path_manager.validate()
    }
}

/// An address and port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SockAddr {
    pub ip: Ipv4,
    pub port: u16,
}

/// A segment to send on the subflow with this 4-tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing {
    pub subflow: usize,
    pub local: SockAddr,
    pub remote: SockAddr,
    pub seg: TcpSegment,
    /// The segment's MPTCP option, to go beside its packet
    /// ([`celltcp_net::MptcpSideTable::attach`]).
    pub mptcp: MptcpOption,
}

/// Which side opened the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
    Listener,
}

/// A subflow's MPTCP state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubflowState {
    /// The TCP and MPTCP handshakes are under way.
    Connecting,
    /// Carries data.
    Established,
    /// Reset, aborted, refused (bad HMAC) or its address removed: never used again.
    Failed,
}

/// Per-subflow counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowStats {
    /// Data bytes handed to this subflow (reinjections included).
    pub bytes_scheduled: u64,
    /// Of those, reinjected (or redundant) copies of data first given to another subflow.
    pub bytes_reinjected: u64,
    /// Data bytes received in order on this subflow and passed to the data level.
    pub bytes_received: u64,
}

#[derive(Clone, Copy, Debug)]
struct TxMap {
    /// Subflow data offset (0 = the first payload byte, relative SSN 1).
    ssn_off: u64,
    /// Data offset (0 = DSN IDSN + 1).
    dsn_off: u64,
    len: u64,
    reinjected: bool,
}

#[derive(Debug)]
struct Subflow {
    ep: TcpEndpoint,
    local: SockAddr,
    remote: SockAddr,
    local_id: u8,
    remote_id: u8,
    iss: u32,
    irs: Option<u32>,
    join: bool,
    active: bool,
    state: SubflowState,
    nonce_local: u32,
    nonce_remote: u32,
    third_ack_sent: bool,
    /// Subflow data bytes written so far.
    written: u64,
    tx_maps: VecDeque<TxMap>,
    /// Received mappings: subflow data offset -> (DSN as on the wire, length). Kept raw so
    /// that a mapping that arrives before the peer's key is still usable once it is known.
    rx_maps: BTreeMap<u64, (u64, u64)>,
    /// Subflow data bytes read from the endpoint.
    rx_read: u64,
    timeouts_seen: u64,
    /// Redundant scheduler: the next data offset this subflow has not carried.
    red_nxt: u64,
    stale: bool,
    stale_una: u64,
    /// A pure ACK of its own was queued for an ADD_ADDR or an ADD_ADDR echo: the next pure ACK
    /// carries that option (and so no DSS).
    signal_ack: bool,
    /// OLIA's loss bookkeeping: congestion events seen and the delivered counts at the last two.
    losses_seen: u64,
    loss_marks: [u64; 2],
    stats: SubflowStats,
}

impl Subflow {
    fn sample(&self) -> TcpSample {
        self.ep.sample(SimTime::ZERO)
    }
    fn usable(&self) -> bool {
        self.state == SubflowState::Established && self.ep.state() == TcpState::Established
    }
    /// Data written to the endpoint and not yet sent once.
    fn unsent(&self) -> u64 {
        let sent = self.sample().snd_nxt.saturating_sub(1);
        self.written.saturating_sub(sent)
    }
    /// Subflow data offset of a segment's sequence number.
    fn tx_off(&self, seq: u32) -> u64 {
        celltcp_tcp::seq::unwrap(self.iss, seq, self.written + 1).saturating_sub(1)
    }
}

/// Connection counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MptcpStats {
    /// Data bytes the application wrote.
    pub bytes_written: u64,
    /// Data bytes DATA_ACKed by the peer.
    pub bytes_acked: u64,
    /// Data bytes delivered in order to our application (read).
    pub bytes_read: u64,
    /// Data bytes received more than once (reinjected or redundant copies), dropped.
    pub duplicate_bytes: u64,
    /// Data bytes queued again after a subflow timed out or failed.
    pub reinjected_bytes: u64,
    pub subflows_opened: u64,
    pub subflows_failed: u64,
    pub joins_refused: u64,
}

/// One MPTCP connection.
#[derive(Debug)]
pub struct MptcpConnection {
    cfg: MptcpConfig,
    role: Role,
    local_key: u64,
    remote_key: Option<u64>,
    local_addrs: Vec<AddrEntry>,
    remote_addrs: Vec<AddrEntry>,
    subflows: Vec<Subflow>,
    pm: AnyPathManager,
    sched: AnyScheduler,
    cc: AnyCoupled,
    cursor: usize,
    // --- sender (offsets in our data sequence space)
    app_written: u64,
    snd_nxt: u64,
    data_una: u64,
    peer_edge: u64,
    reinject: VecDeque<(u64, u64)>,
    app_closed: bool,
    data_fin_acked: bool,
    data_fin_deadline: Option<SimTime>,
    /// Address ids to announce with ADD_ADDR at the next signal ACK.
    add_addr_pending: Vec<u8>,
    /// Announced and not echoed yet: (id, when to send it again, retransmissions so far).
    add_addr_unechoed: Vec<(u8, SimTime, u8)>,
    add_addr_echo: Vec<(u8, Ipv4)>,
    /// Local address ids removed and not yet announced with REMOVE_ADDR.
    rm_addr_pending: Vec<u8>,
    /// The id the next local address added during the connection gets ([`Self::add_local_addr`]).
    next_local_id: u8,
    // --- receiver (offsets in the peer's data sequence space)
    rcv_nxt: u64,
    ooo: BTreeMap<u64, u64>,
    ooo_bytes: u64,
    app_read: u64,
    peer_fin: Option<u64>,
    fin_rcvd: bool,
    /// The connection's right edge advertised so far (Linux `msk->rcv_wnd_sent`).
    last_adv_edge: u64,
    /// The window last advertised, bytes (Linux `msk->old_wspace`): the reference of the
    /// window-update rule ([`MptcpConnection::read`]).
    old_wspace: u64,
    /// Connection-level receive-buffer autotuning (Linux `msk->rcvq_space`).
    rcv_space: RcvSpace,
    reset: bool,
    stats: MptcpStats,
    scratch: Vec<usize>,
}

fn derive32(key: u64, what: u8, n: usize) -> u32 {
    let h = crypto::sha256(&[&key.to_be_bytes(), &[what], &(n as u64).to_be_bytes()]);
    u32::from_be_bytes([h[0], h[1], h[2], h[3]])
}

impl MptcpConnection {
    fn new(
        cfg: MptcpConfig,
        role: Role,
        local_key: u64,
        local_addrs: &[Ipv4],
        remote_addrs: &[Ipv4],
    ) -> Self {
        let entries = |v: &[Ipv4], announced| {
            v.iter()
                .enumerate()
                .map(|(i, &addr)| AddrEntry {
                    id: i as u8,
                    addr,
                    announced: announced && i > 0,
                })
                .collect()
        };
        MptcpConnection {
            cfg,
            role,
            local_key,
            remote_key: None,
            local_addrs: entries(local_addrs, false),
            remote_addrs: entries(&remote_addrs[..remote_addrs.len().min(1)], false),
            subflows: Vec::new(),
            pm: AnyPathManager::new(cfg.path_manager),
            sched: AnyScheduler::new(cfg.scheduler),
            cc: AnyCoupled::new(cfg.cc),
            cursor: 0,
            app_written: 0,
            snd_nxt: 0,
            data_una: 0,
            peer_edge: 65_535,
            reinject: VecDeque::new(),
            app_closed: false,
            data_fin_acked: false,
            data_fin_deadline: None,
            add_addr_pending: if role == Role::Listener && cfg.announce {
                (1..local_addrs.len() as u8).collect()
            } else {
                Vec::new()
            },
            add_addr_unechoed: Vec::new(),
            add_addr_echo: Vec::new(),
            rm_addr_pending: Vec::new(),
            next_local_id: local_addrs.len() as u8,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            app_read: 0,
            peer_fin: None,
            fin_rcvd: false,
            last_adv_edge: 0,
            old_wspace: 0,
            rcv_space: RcvSpace::new(&cfg),
            reset: false,
            stats: MptcpStats::default(),
            scratch: Vec::new(),
        }
    }

    fn subflow_tcp(&self) -> TcpConfig {
        let mut t = self.cfg.tcp;
        t.mss -= DSS_OPTION_BYTES;
        if self.cc.is_coupled() {
            t.cc = CcConfig::Coupled(CoupledConfig::default());
        }
        t
    }

    /// Active open: the initial subflow from `local_addrs[0]:local_port` to `remote`. The other
    /// local addresses (ids 1, 2, ...) are for the path manager. `key` is this host's 64-bit key
    /// (random in Linux; the caller draws it from its seeded stream).
    pub fn connect(
        cfg: MptcpConfig,
        key: u64,
        local_addrs: &[Ipv4],
        local_port: u16,
        remote: SockAddr,
        iss: u32,
        now: SimTime,
    ) -> Self {
        let mut c = Self::new(cfg, Role::Client, key, local_addrs, &[remote.ip]);
        let ep = TcpEndpoint::connect(c.subflow_tcp(), local_port, remote.port, iss, now);
        let local = SockAddr {
            ip: local_addrs[0],
            port: local_port,
        };
        c.push_subflow(ep, local, remote, 0, 0, iss, false, true);
        c
    }

    /// Passive side: a listener with these addresses (id 0 the one it listens on) that accepts
    /// the connection whose SYN (with MP_CAPABLE option `syn_opt`) `syn` is. `None` when `syn`
    /// is no MP_CAPABLE SYN (the caller then falls back to plain TCP).
    #[allow(clippy::too_many_arguments)]
    pub fn accept(
        cfg: MptcpConfig,
        key: u64,
        local_addrs: &[Ipv4],
        local: SockAddr,
        remote: SockAddr,
        syn: &TcpSegment,
        syn_opt: &MptcpOption,
        now: SimTime,
    ) -> Option<Self> {
        match MptcpOpt::from_segment(syn_opt) {
            Some(Ok(MptcpOpt::Capable { .. })) if syn.flags.syn() && !syn.flags.ack() => {}
            _ => return None,
        }
        let mut c = Self::new(cfg, Role::Listener, key, local_addrs, &[remote.ip]);
        let iss = derive32(key, b'i', 0);
        let ep = TcpEndpoint::accept(c.subflow_tcp(), local.port, remote.port, iss, syn, now);
        c.push_subflow(ep, local, remote, 0, 0, iss, false, false);
        c.subflows[0].irs = Some(syn.seq);
        Some(c)
    }

    #[allow(clippy::too_many_arguments)]
    fn push_subflow(
        &mut self,
        ep: TcpEndpoint,
        local: SockAddr,
        remote: SockAddr,
        local_id: u8,
        remote_id: u8,
        iss: u32,
        join: bool,
        active: bool,
    ) {
        let n = self.subflows.len();
        self.subflows.push(Subflow {
            ep,
            local,
            remote,
            local_id,
            remote_id,
            iss,
            irs: None,
            join,
            active,
            state: SubflowState::Connecting,
            nonce_local: derive32(self.local_key, b'n', n),
            nonce_remote: 0,
            third_ack_sent: false,
            written: 0,
            tx_maps: VecDeque::new(),
            rx_maps: BTreeMap::new(),
            rx_read: 0,
            timeouts_seen: 0,
            red_nxt: 0,
            stale: false,
            stale_una: 0,
            signal_ack: false,
            losses_seen: 0,
            loss_marks: [0; 2],
            stats: SubflowStats::default(),
        });
        self.stats.subflows_opened += 1;
        self.sync_rcv_space();
    }

    // ================================================================== accessors

    /// This host's token (the 32 bits the peer's MP_JOIN SYNs carry): the glue finds the
    /// connection of a joining SYN by it.
    pub fn token(&self) -> u32 {
        crypto::token(self.local_key)
    }
    /// This host's key (for pcap analysis: Wireshark derives tokens and IDSNs from the keys
    /// it sees in MP_CAPABLE).
    pub fn local_key(&self) -> u64 {
        self.local_key
    }
    pub fn role(&self) -> Role {
        self.role
    }
    pub fn stats(&self) -> &MptcpStats {
        &self.stats
    }
    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }
    pub fn subflow_state(&self, i: usize) -> SubflowState {
        self.subflows[i].state
    }
    pub fn subflow_stats(&self, i: usize) -> SubflowStats {
        self.subflows[i].stats
    }
    /// The subflow's TCP endpoint (cwnd, srtt, counters for per-subflow time series).
    pub fn subflow(&self, i: usize) -> &TcpEndpoint {
        &self.subflows[i].ep
    }
    pub fn subflow_addrs(&self, i: usize) -> (SockAddr, SockAddr) {
        (self.subflows[i].local, self.subflows[i].remote)
    }
    /// The subflow with this 4-tuple.
    pub fn find_subflow(&self, local: SockAddr, remote: SockAddr) -> Option<usize> {
        self.subflows
            .iter()
            .position(|s| s.local == local && s.remote == remote)
    }
    pub fn remote_addrs(&self) -> &[AddrEntry] {
        &self.remote_addrs
    }
    /// In-order data bytes waiting to be read.
    pub fn readable(&self) -> u64 {
        self.rcv_nxt - self.app_read
    }
    /// The peer's DATA_FIN has arrived and everything before it has been read.
    pub fn peer_closed(&self) -> bool {
        self.fin_rcvd && self.readable() == 0
    }
    /// Our DATA_FIN has been DATA_ACKed.
    pub fn data_fin_acked(&self) -> bool {
        self.data_fin_acked
    }
    /// Both DATA_FINs are acknowledged and every subflow is closed (or failed).
    pub fn is_closed(&self) -> bool {
        self.reset
            || (self.data_fin_acked
                && self.fin_rcvd
                && self
                    .subflows
                    .iter()
                    .all(|s| s.state == SubflowState::Failed || s.ep.is_closed()))
    }
    /// The connection carries data: the keys are exchanged (MP_CAPABLE done) and a subflow is
    /// established. The client's initial subflow counts once the SYN/ACK with the listener's key
    /// is in (its TCP endpoint established): the third ACK leaves with its next transmission
    /// and data may follow at once (RFC 8684 §3.1), so a caller that tells its app "connected"
    /// from this after the SYN/ACK lets the app write then, not at the next timer.
    pub fn is_established(&self) -> bool {
        !self.reset
            && self.remote_key.is_some()
            && self.subflows.iter().any(|s| {
                s.state == SubflowState::Established
                    || (s.active && !s.join && s.ep.is_established())
            })
    }
    pub fn was_reset(&self) -> bool {
        self.reset
    }
    /// Free space of the connection-level send buffer.
    pub fn send_buffer_free(&self) -> u64 {
        self.cfg
            .snd_buf
            .saturating_sub(self.app_written - self.data_una)
    }

    // ================================================================== application side

    /// Writes `bytes` of data; returns how many fit in the connection's send buffer.
    pub fn write(&mut self, bytes: u64) -> u64 {
        if self.app_closed || self.reset {
            return 0;
        }
        let n = bytes.min(self.send_buffer_free());
        self.app_written += n;
        self.stats.bytes_written += n;
        n
    }

    /// Reads up to `max` in-order data bytes. Then, as Linux's `mptcp_recvmsg`: the receive
    /// buffer's autotuning (`mptcp_rcv_space_adjust`) and the window-update rule
    /// (`mptcp_cleanup_rbuf`), both in `connection/rcv_space.rs`.
    pub fn read(&mut self, now: SimTime, max: u64) -> u64 {
        let n = max.min(self.readable());
        self.app_read += n;
        self.stats.bytes_read += n;
        if n > 0 {
            self.rcv_space_adjust(now, n);
            self.sync_rcv_space();
            self.cleanup_rbuf(n);
        }
        n
    }

    /// Close our direction: a DATA_FIN follows all written data.
    pub fn close(&mut self) {
        self.app_closed = true;
    }

    /// Abort at once: every subflow stops (sending MP_FASTCLOSE to the peer is not modelled
    /// yet; receiving one is).
    pub fn abort(&mut self) {
        self.reset = true;
    }

    // ================================================================== path management

    /// (local address id, remote address id) of the subflows the path manager wants opened now
    /// (client only, once the initial subflow is established).
    pub fn wanted_subflows(&self) -> Vec<(u8, u8)> {
        let mut out = Vec::new();
        // Linux's path manager opens subflows on a connection that is established, whichever
        // of its subflows carries it (the initial one may have gone with its address)
        if self.role != Role::Client
            || self.reset
            || self.data_fin_acked
            || !self.subflows.iter().any(|s| s.usable())
        {
            return out;
        }
        // Failed subflows count too: a pair is tried once (a refused join is not retried, and a
        // dead path is not probed again; Linux's managers retry only on address events).
        let existing: Vec<(u8, u8)> = self
            .subflows
            .iter()
            .map(|s| (s.local_id, s.remote_id))
            .collect();
        self.pm
            .wanted(&self.local_addrs, &self.remote_addrs, &existing, &mut out);
        if self.cfg.max_subflows > 0 {
            // the cap counts the subflows that are still there, as Linux's `pm.subflows`
            // (decremented when one closes, `__mptcp_pm_close_subflow`): an address that
            // comes back may open a subflow in place of the one that went with it
            let live = self.subflows.iter().filter(|s| s.state != SubflowState::Failed).count();
            out.truncate(usize::from(self.cfg.max_subflows).saturating_sub(live));
        }
        out
    }

    /// The address with this id (local or remote).
    pub fn local_addr(&self, id: u8) -> Option<Ipv4> {
        self.local_addrs.iter().find(|a| a.id == id).map(|a| a.addr)
    }
    pub fn remote_addr(&self, id: u8) -> Option<Ipv4> {
        self.remote_addrs
            .iter()
            .find(|a| a.id == id)
            .map(|a| a.addr)
    }

    /// Opens a subflow with MP_JOIN from local address `local_id` (source port `local_port`,
    /// chosen by the caller's port allocator) to remote address `remote_id` (at the port of the
    /// initial subflow, or the one ADD_ADDR gave). Returns its index.
    pub fn open_subflow(
        &mut self,
        now: SimTime,
        local_id: u8,
        remote_id: u8,
        local_port: u16,
        iss: u32,
    ) -> Option<usize> {
        let lip = self.local_addr(local_id)?;
        let rip = self.remote_addr(remote_id)?;
        let remote = SockAddr {
            ip: rip,
            port: self.subflows[0].remote.port,
        };
        let ep = TcpEndpoint::connect(self.subflow_tcp(), local_port, remote.port, iss, now);
        self.push_subflow(
            ep,
            SockAddr {
                ip: lip,
                port: local_port,
            },
            remote,
            local_id,
            remote_id,
            iss,
            true,
            true,
        );
        Some(self.subflows.len() - 1)
    }

    // ================================================================== timers

    /// The earliest time [`MptcpConnection::on_timeout`] has something to do.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let sub = self
            .subflows
            .iter()
            .filter_map(|s| s.ep.next_deadline())
            .min();
        let add_addr = self
            .add_addr_unechoed
            .iter()
            .filter(|e| e.2 < ADD_ADDR_RETRANS_MAX)
            .map(|e| e.1)
            .min();
        // The DATA_FIN timer only while the DATA_FIN is due (all data handed out, none queued
        // for reinjection): otherwise `poll_transmit` does not send it, and a deadline in the
        // past would call for a timeout at once, again and again (a reinjection waiting for
        // window room at its expiry spun the conservation test's seed 52 at one instant).
        let fin_due =
            !self.data_fin_acked && self.snd_nxt == self.app_written && self.reinject.is_empty();
        [sub, self.data_fin_deadline.filter(|_| fin_due), add_addr]
            .into_iter()
            .flatten()
            .min()
    }

    /// Fires every subflow timer due at `now`.
    pub fn on_timeout(&mut self, now: SimTime) {
        for i in 0..self.subflows.len() {
            if self.subflows[i]
                .ep
                .next_deadline()
                .is_some_and(|d| d <= now)
            {
                self.subflows[i].ep.on_timeout(now);
                self.check_health(i);
            }
        }
    }

    /// Removes a local address (an interface went down): its subflows fail, their data is
    /// reinjected, and REMOVE_ADDR with its id (RFC 8684 §3.4.2) goes to the peer once, on a
    /// pure ACK of its own on a remaining subflow (Linux `mptcp_pm_remove_addr` and
    /// `mptcp_pm_nl_addr_send_ack`), so that the peer closes its subflows of that address at
    /// once instead of keeping them until they time out. Not sent when no subflow remains.
    pub fn remove_local_addr(&mut self, id: u8) {
        for j in 0..self.subflows.len() {
            if self.subflows[j].local_id == id {
                self.fail(j);
            }
        }
        self.local_addrs.retain(|a| a.id != id);
        if self.remote_key.is_some()
            && !self.reset
            && self.subflows.iter().any(|s| s.usable())
            && !self.rm_addr_pending.contains(&id)
        {
            self.rm_addr_pending.push(id);
        }
    }

    /// The id of local address `addr`, if the connection has it.
    pub fn local_id_of(&self, addr: Ipv4) -> Option<u8> {
        self.local_addrs.iter().find(|a| a.addr == addr).map(|a| a.id)
    }

    /// Adds a local address (an interface came up, or came back after
    /// [`Self::remove_local_addr`]); returns its id, or `None` if the connection has it already
    /// or has ended. The id is a new one, as Linux's in-kernel path manager numbers a new
    /// endpoint after the last it gave (`mptcp_pm_nl_append_new_local_addr`, `next_id`), so a
    /// peer never confuses it with the removed one. A client's path manager then wants its
    /// subflows ([`Self::wanted_subflows`], opened with MP_JOIN as any other); a listener that
    /// announces its addresses sends ADD_ADDR for it (RFC 8684 §3.4.1).
    pub fn add_local_addr(&mut self, addr: Ipv4) -> Option<u8> {
        if self.reset || self.data_fin_acked || self.local_id_of(addr).is_some() || self.next_local_id == u8::MAX {
            return None;
        }
        let id = self.next_local_id;
        self.next_local_id += 1;
        self.local_addrs.push(AddrEntry { id, addr, announced: false });
        if self.role == Role::Listener && self.cfg.announce {
            self.add_addr_pending.push(id);
        }
        Some(id)
    }

    /// A per-subflow snapshot for time series: (cwnd, srtt, bytes scheduled, bytes acked).
    pub fn subflow_sample(&self, i: usize, now: SimTime) -> TcpSample {
        self.subflows[i].ep.sample(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A0: Ipv4 = Ipv4::new(10, 0, 0, 1);
    const A1: Ipv4 = Ipv4::new(10, 0, 1, 1);
    const B0: Ipv4 = Ipv4::new(10, 9, 0, 1);
    const KA: u64 = 0x1111_2222_3333_4444;
    const KB: u64 = 0x5555_6666_7777_8888;

    /// Client and listener wired back to back (no delay, no loss); `tamper` may change every
    /// segment on its way. Returns (client, listener, every segment with its direction).
    fn pair(
        bytes: u64,
        rounds: usize,
        mut tamper: impl FnMut(bool, &mut Outgoing),
    ) -> (
        MptcpConnection,
        Option<MptcpConnection>,
        Vec<(bool, Outgoing)>,
    ) {
        let cfg = MptcpConfig::default();
        let mut a = MptcpConnection::connect(
            cfg,
            KA,
            &[A0, A1],
            40_000,
            SockAddr { ip: B0, port: 80 },
            7,
            SimTime::ZERO,
        );
        let mut b: Option<MptcpConnection> = None;
        let mut log = Vec::new();
        let mut written = 0;
        let mut port = 40_001;
        for r in 0..rounds {
            let now = SimTime::from_millis(r as u64);
            for (l, rid) in a.wanted_subflows() {
                a.open_subflow(now, l, rid, port, 1000 + port as u32);
                port += 1;
            }
            written += a.write(bytes - written);
            while let Some(mut o) = a.poll_transmit(now) {
                tamper(true, &mut o);
                match &mut b {
                    Some(b) => {
                        b.on_segment(now, o.remote, o.local, &o.seg, &o.mptcp, false);
                    }
                    None => {
                        b = MptcpConnection::accept(
                            cfg,
                            KB,
                            &[B0],
                            o.remote,
                            o.local,
                            &o.seg,
                            &o.mptcp,
                            now,
                        )
                    }
                }
                log.push((true, o));
            }
            if let Some(bb) = &mut b {
                bb.read(now, u64::MAX);
                while let Some(mut o) = bb.poll_transmit(now) {
                    tamper(false, &mut o);
                    a.on_segment(now, o.remote, o.local, &o.seg, &o.mptcp, false);
                    log.push((false, o));
                }
            }
            if a.next_deadline().is_some_and(|d| d <= now) {
                a.on_timeout(now);
            }
            if let Some(bb) = &mut b {
                if bb.next_deadline().is_some_and(|d| d <= now) {
                    bb.on_timeout(now);
                }
            }
        }
        (a, b, log)
    }

    fn opt(o: &Outgoing) -> Option<MptcpOpt> {
        MptcpOpt::from_segment(&o.mptcp).map(|r| r.unwrap())
    }

    #[test]
    fn handshake_exchanges_keys_then_joins_with_checked_hmacs() {
        let (a, b, log) = pair(100_000, 200, |_, _| {});
        let b = b.unwrap();
        // RFC 8684 §3.1: SYN without key, SYN/ACK with B's key, third ACK with both.
        assert!(matches!(
            opt(&log[0].1),
            Some(MptcpOpt::Capable {
                keys: CapableKeys::None,
                ..
            })
        ));
        assert!(matches!(
            opt(&log[1].1),
            Some(MptcpOpt::Capable {
                keys: CapableKeys::One(KB),
                ..
            })
        ));
        assert!(matches!(
            opt(&log[2].1),
            Some(MptcpOpt::Capable {
                keys: CapableKeys::Two {
                    sender: KA,
                    receiver: KB
                },
                ..
            })
        ));
        // §3.2: the join's SYN carries B's token.
        let join = log.iter().find_map(|(_, s)| match opt(s) {
            Some(MptcpOpt::JoinSyn { token, addr_id, .. }) => Some((token, addr_id)),
            _ => None,
        });
        assert_eq!(join, Some((crypto::token(KB), 1)));
        assert_eq!(a.subflow_count(), 2);
        assert_eq!(b.subflow_count(), 2);
        for i in 0..2 {
            assert_eq!(a.subflow_state(i), SubflowState::Established);
            assert_eq!(b.subflow_state(i), SubflowState::Established);
        }
        assert_eq!(b.readable() + b.stats().bytes_read, 100_000);
        assert_eq!(a.stats().bytes_acked, 100_000);
        // Every non-SYN segment from B carries the DATA_ACK of A's data space: IDSN_A + 1 + n.
        let last_ack = log
            .iter()
            .rev()
            .find(|(to_b, _)| !to_b)
            .and_then(|(_, s)| match opt(s) {
                Some(MptcpOpt::Dss(d)) => d.data_ack,
                _ => None,
            });
        assert_eq!(last_ack, Some(crypto::idsn(KA).wrapping_add(1 + 100_000)));
    }

    #[test]
    fn join_with_a_wrong_hmac_is_refused_and_carries_no_data() {
        // Flip a bit of the SYN/ACK's truncated HMAC: A must refuse the subflow (§3.2).
        let (a, _, _) = pair(200_000, 200, |to_b, s| {
            if let (
                false,
                Some(MptcpOpt::JoinSynAck {
                    backup,
                    addr_id,
                    hmac,
                    nonce,
                }),
            ) = (to_b, opt(s))
            {
                s.mptcp = MptcpOpt::JoinSynAck {
                    backup,
                    addr_id,
                    hmac: hmac ^ 1,
                    nonce,
                }
                .encode();
            }
        });
        assert_eq!(a.stats().joins_refused, 1);
        assert_eq!(a.subflow_state(1), SubflowState::Failed);
        assert_eq!(a.subflow_stats(1).bytes_scheduled, 0);
        assert_eq!(
            a.stats().bytes_acked,
            200_000,
            "the initial subflow carries everything"
        );
    }

    #[test]
    fn join_syn_with_a_wrong_token_is_refused_by_the_listener() {
        let (_, b, _) = pair(10_000, 100, |to_b, s| {
            if let (
                true,
                Some(MptcpOpt::JoinSyn {
                    backup,
                    addr_id,
                    token,
                    nonce,
                }),
            ) = (to_b, opt(s))
            {
                s.mptcp = MptcpOpt::JoinSyn {
                    backup,
                    addr_id,
                    token: token ^ 1,
                    nonce,
                }
                .encode();
            }
        });
        let b = b.unwrap();
        assert!(b.stats().joins_refused >= 1);
        assert_eq!(b.subflow_count(), 1);
    }

    #[test]
    fn max_subflows_caps_what_the_path_manager_wants() {
        // fullmesh over 3 local x 1 remote addresses wants 2 joins; a cap of 2 in all leaves 1
        let cfg = MptcpConfig {
            max_subflows: 2,
            ..MptcpConfig::default()
        };
        let mut a = MptcpConnection::connect(
            cfg,
            KA,
            &[A0, A1, Ipv4::new(10, 0, 2, 1)],
            40_000,
            SockAddr { ip: B0, port: 80 },
            1,
            SimTime::ZERO,
        );
        let mut b = None::<MptcpConnection>;
        let t = SimTime::ZERO;
        // the initial handshake, back to back
        for _ in 0..4 {
            while let Some(o) = a.poll_transmit(t) {
                match b.as_mut() {
                    None => {
                        b = MptcpConnection::accept(
                            MptcpConfig::default(),
                            KB,
                            &[B0],
                            o.remote,
                            o.local,
                            &o.seg,
                            &o.mptcp,
                            t,
                        )
                    }
                    Some(b) => {
                        b.on_segment(t, o.remote, o.local, &o.seg, &o.mptcp, false);
                    }
                }
            }
            if let Some(b) = b.as_mut() {
                while let Some(o) = b.poll_transmit(t) {
                    a.on_segment(t, o.remote, o.local, &o.seg, &o.mptcp, false);
                }
            }
        }
        assert!(a.is_established());
        assert_eq!(a.wanted_subflows(), vec![(1, 0)]);
        let uncapped = MptcpConnection {
            cfg: MptcpConfig::default(),
            ..a
        };
        assert_eq!(uncapped.wanted_subflows(), vec![(1, 0), (2, 0)]);
    }

    #[test]
    fn client_is_established_when_the_syn_ack_arrives() {
        // A stack tells its app "connected" from is_established() after on_segment; the app
        // then writes. The client must count as established once the SYN/ACK with the key is
        // in, not only after its third ACK has left (the scenario's bulk client then sent its
        // first data at the SYN's 1 s retransmission timer, 0.8 s after the handshake).
        let cfg = MptcpConfig::default();
        let t = SimTime::ZERO;
        let dst = SockAddr { ip: B0, port: 80 };
        let mut a = MptcpConnection::connect(cfg, KA, &[A0], 40_000, dst, 7, t);
        let syn = a.poll_transmit(t).unwrap();
        let mut b = MptcpConnection::accept(
            cfg,
            KB,
            &[B0],
            syn.remote,
            syn.local,
            &syn.seg,
            &syn.mptcp,
            t,
        )
        .unwrap();
        let synack = b.poll_transmit(t).unwrap();
        assert!(!a.is_established());
        a.on_segment(
            t,
            synack.remote,
            synack.local,
            &synack.seg,
            &synack.mptcp,
            false,
        );
        assert!(a.is_established());
        // data written now leaves right behind the third ACK, in the same flush
        assert_eq!(a.write(10_000), 10_000);
        let out: Vec<Outgoing> = std::iter::from_fn(|| a.poll_transmit(t)).collect();
        assert!(matches!(
            opt(&out[0]),
            Some(MptcpOpt::Capable {
                keys: CapableKeys::Two { .. },
                ..
            })
        ));
        let data: u64 = out.iter().map(|o| u64::from(o.seg.payload_len)).sum();
        assert_eq!(data, 10_000, "all the data leaves with the third ACK");
        // the listener is established by the third ACK, and then reads the data
        for o in &out {
            b.on_segment(t, o.remote, o.local, &o.seg, &o.mptcp, false);
        }
        assert!(b.is_established());
        assert_eq!(b.readable(), data);
    }

    #[test]
    fn config_errors_name_the_key() {
        let e = MptcpConfig {
            rcv_buf: 10,
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.contains("mptcp.rcv_buf = 10"), "{e}");
        let e = MptcpConfig {
            path_manager: PathManagerConfig::Ndiffports { subflows: 0 },
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.contains("subflows = 0"), "{e}");
    }
}
