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
//!   the connection's free receive buffer, relative to the DATA_ACK; the sender keeps new data
//!   within `DATA_ACK + window`.
//! - DATA_FIN (§3.3.3): after [`MptcpConnection::close`] and once all data has been handed to
//!   subflows, a DSS with F and a one-octet mapping (SSN 0) goes on a pure ACK, again every RTO
//!   until DATA_ACKed; when both DATA_FINs are acknowledged the subflows close with TCP FINs.
//! - Reinjection: when a subflow's retransmission timer fires, the data it holds that is not
//!   DATA_ACKed is queued again for the other subflows and the subflow is stale (no new data)
//!   until it makes progress (upstream Linux `mptcp_retransmit_timer` / stale subflows); a
//!   subflow reset, aborted, or whose address is removed, fails and gives back all its data.
//! - Path management: [`crate::path_manager`] decides the subflows; a listener announces its
//!   other addresses with ADD_ADDR (HMAC checked, echoed, §3.4.1); REMOVE_ADDR fails the
//!   subflows of that address; MP_FASTCLOSE with the right key resets everything (§3.5).
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

/// Option bytes a data segment's DSS takes (26, NOP-padded to 28): the subflow MSS is the
/// configured one less this, as Linux's `mptcp_established_options` shrinks `mss_now`.
pub const DSS_OPTION_BYTES: u32 = 28;
/// Largest mapping (the Data-Level Length is 16 bits, §3.3.1).
pub const MAX_MAPPING: u64 = 65_535;

/// Configuration of one MPTCP connection (the flow's `mptcp = { ... }`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MptcpConfig {
    /// Coupled congestion control (`"olia"`, `"lia"`, `"balia"` or `"uncoupled"`: each subflow
    /// then runs `tcp.cc`).
    pub cc: CoupledKind,
    pub scheduler: SchedulerKind,
    pub path_manager: PathManagerConfig,
    /// Connection-level send buffer, bytes (written and not DATA_ACKed).
    pub snd_buf: u64,
    /// Connection-level receive buffer, bytes: bounds the window of §3.3.4.
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
    add_addr_pending: Vec<u8>,
    add_addr_echo: Vec<(u8, Ipv4)>,
    // --- receiver (offsets in the peer's data sequence space)
    rcv_nxt: u64,
    ooo: BTreeMap<u64, u64>,
    ooo_bytes: u64,
    app_read: u64,
    peer_fin: Option<u64>,
    fin_rcvd: bool,
    last_adv_edge: u64,
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
            add_addr_echo: Vec::new(),
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            app_read: 0,
            peer_fin: None,
            fin_rcvd: false,
            last_adv_edge: 0,
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
            losses_seen: 0,
            loss_marks: [0; 2],
            stats: SubflowStats::default(),
        });
        self.stats.subflows_opened += 1;
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

    /// Reads up to `max` in-order data bytes.
    pub fn read(&mut self, _now: SimTime, max: u64) -> u64 {
        let n = max.min(self.readable());
        self.app_read += n;
        self.stats.bytes_read += n;
        // A window update when the window opened by a quarter of the buffer (RFC 9293 §3.8.6.2.2
        // in spirit; Linux `mptcp_cleanup_rbuf`).
        if n > 0 && self.adv_edge() >= self.last_adv_edge + self.cfg.rcv_buf / 4 {
            if let Some(s) = self.subflows.iter_mut().find(|s| s.usable()) {
                s.ep.send_ack_now();
            }
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
        if self.role != Role::Client
            || self.reset
            || self.data_fin_acked
            || self.subflows.first().is_none_or(|s| !s.usable())
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

    // ================================================================== input

    /// A segment arrived on the 4-tuple (`local`, `remote`) with the MPTCP option `mptcp` (empty
    /// if none). Returns false when it belongs to no subflow and opens none (a SYN with a wrong
    /// token, or stray).
    pub fn on_segment(
        &mut self,
        now: SimTime,
        local: SockAddr,
        remote: SockAddr,
        seg: &TcpSegment,
        mptcp: &MptcpOption,
        ce: bool,
    ) -> bool {
        let opt = match MptcpOpt::from_segment(mptcp) {
            Some(Ok(o)) => Some(o),
            _ => None,
        };
        let i = match self.find_subflow(local, remote) {
            Some(i) => i,
            None => {
                // A joining SYN (§3.2): the token must be ours.
                let Some(MptcpOpt::JoinSyn {
                    addr_id,
                    token,
                    nonce,
                    ..
                }) = opt
                else {
                    return false;
                };
                if !seg.flags.syn() || seg.flags.ack() || token != self.token() || self.reset {
                    self.stats.joins_refused += 1;
                    return false;
                }
                let n = self.subflows.len();
                let iss = derive32(self.local_key, b'i', n);
                let ep =
                    TcpEndpoint::accept(self.subflow_tcp(), local.port, remote.port, iss, seg, now);
                let local_id = self
                    .local_addrs
                    .iter()
                    .find(|a| a.addr == local.ip)
                    .map_or(0, |a| a.id);
                if !self.remote_addrs.iter().any(|a| a.id == addr_id) {
                    self.remote_addrs.push(AddrEntry {
                        id: addr_id,
                        addr: remote.ip,
                        announced: false,
                    });
                }
                self.push_subflow(ep, local, remote, local_id, addr_id, iss, true, false);
                let s = &mut self.subflows[n];
                s.nonce_remote = nonce;
                s.irs = Some(seg.seq);
                return true;
            }
        };
        if self.subflows[i].state == SubflowState::Failed {
            self.subflows[i].ep.on_segment(now, seg, ce);
            return true;
        }
        if seg.flags.syn() {
            self.subflows[i].irs = Some(seg.seq);
        }
        if let Some(o) = opt {
            if !self.on_option(now, i, seg, o) {
                return true;
            }
        }
        // §3.3.4: the window is the connection's, relative to the DATA_ACK.
        if !seg.flags.syn() {
            if let Some(Dss {
                data_ack: Some(_), ..
            }) = opt.and_then(|o| {
                if let MptcpOpt::Dss(d) = o {
                    Some(d)
                } else {
                    None
                }
            }) {
                let shift = self.subflows[i].ep.negotiated().snd_wscale as u32;
                let edge = self.data_una + ((seg.window as u64) << shift);
                self.peer_edge = self.peer_edge.max(edge);
            }
        }
        self.couple(i);
        self.subflows[i].ep.on_segment(now, seg, ce);
        if self.subflows[i].state == SubflowState::Connecting
            && !self.subflows[i].active
            && self.subflows[i].ep.is_established()
        {
            // The listener's side: the third ACK arrived (its MP_JOIN HMAC, if a join, was
            // checked in `on_option`).
            if !self.subflows[i].join || self.subflows[i].third_ack_sent {
                self.subflows[i].state = SubflowState::Established;
            }
        }
        self.pull_data(now, i);
        self.check_health(i);
        true
    }

    /// Handles the MPTCP option of a segment on subflow `i`; false if the segment must be dropped.
    fn on_option(&mut self, now: SimTime, i: usize, seg: &TcpSegment, o: MptcpOpt) -> bool {
        match o {
            MptcpOpt::Capable { keys, data_len, .. } => match keys {
                CapableKeys::One(k) if seg.flags.syn() && seg.flags.ack() => {
                    self.remote_key = Some(k)
                }
                CapableKeys::Two { sender, receiver }
                    if receiver == self.local_key && !self.subflows[i].join =>
                {
                    self.remote_key = Some(sender);
                    self.subflows[i].third_ack_sent = true;
                    if let Some(l) = data_len {
                        // §3.1 (v1): MP_CAPABLE with data implies the mapping DSN = IDSN + 1,
                        // SSN = 1, of `data_len` bytes.
                        self.subflows[i]
                            .rx_maps
                            .insert(0, (crypto::idsn(sender).wrapping_add(1), l as u64));
                    }
                }
                _ => {}
            },
            MptcpOpt::JoinSynAck {
                hmac,
                nonce,
                addr_id,
                ..
            } => {
                let s = &mut self.subflows[i];
                s.nonce_remote = nonce;
                let rk = self.remote_key.unwrap_or(0);
                let want = crypto::join_hmac(rk, self.local_key, nonce, s.nonce_local);
                if u64::from_be_bytes(want[..8].try_into().unwrap()) != hmac {
                    self.fail(i);
                    self.stats.joins_refused += 1;
                    return false;
                }
                let _ = addr_id;
            }
            MptcpOpt::JoinAck { hmac } => {
                let s = &self.subflows[i];
                let rk = self.remote_key.unwrap_or(0);
                let want = crypto::join_hmac(rk, self.local_key, s.nonce_remote, s.nonce_local);
                if want[..20] != hmac {
                    self.fail(i);
                    self.stats.joins_refused += 1;
                    return false;
                }
                self.subflows[i].third_ack_sent = true;
            }
            MptcpOpt::Dss(d) => {
                if let Some(ack) = d.data_ack {
                    let base = crypto::idsn(self.local_key).wrapping_add(1);
                    let off = ack.wrapping_sub(base);
                    self.on_data_ack(now, off);
                }
                if let Some(m) = d.mapping {
                    let dsn = if m.dsn64 { m.dsn } else { m.dsn & 0xffff_ffff };
                    if !(d.data_fin && m.ssn == 0) {
                        let s = &mut self.subflows[i];
                        let ssn_off =
                            celltcp_tcp::seq::unwrap(0, m.ssn, s.rx_read + 1).saturating_sub(1);
                        s.rx_maps
                            .insert(ssn_off, (dsn, m.len as u64 - d.data_fin as u64));
                    }
                    if let (true, Some(rk)) = (d.data_fin, self.remote_key) {
                        // The DATA_FIN is the mapping's last octet (§3.3.3).
                        let off = dsn.wrapping_sub(crypto::idsn(rk).wrapping_add(1));
                        self.peer_fin = Some(off + m.len as u64 - 1);
                    }
                    self.advance_fin(i);
                }
            }
            MptcpOpt::AddAddr {
                echo: false,
                addr_id,
                addr,
                port,
                hmac,
            } => {
                if let Some(rk) = self.remote_key {
                    let want = crypto::add_addr_hmac(
                        rk,
                        self.local_key,
                        addr_id,
                        addr.octets(),
                        port.unwrap_or(0),
                    );
                    if Some(want) == hmac {
                        if !self.remote_addrs.iter().any(|a| a.id == addr_id) {
                            self.remote_addrs.push(AddrEntry {
                                id: addr_id,
                                addr,
                                announced: true,
                            });
                        }
                        self.add_addr_echo.push((addr_id, addr));
                        self.subflows[i].ep.send_ack_now();
                    }
                }
            }
            MptcpOpt::AddAddr {
                echo: true,
                addr_id,
                ..
            } => self.add_addr_pending.retain(|&a| a != addr_id),
            MptcpOpt::RemoveAddr { ids, n } => {
                for &id in &ids[..n as usize] {
                    self.remote_addrs.retain(|a| a.id != id || id == 0);
                    for j in 0..self.subflows.len() {
                        if self.subflows[j].remote_id == id {
                            self.fail(j);
                        }
                    }
                }
            }
            MptcpOpt::FastClose { receiver_key } if receiver_key == self.local_key => {
                self.reset = true;
                for j in 0..self.subflows.len() {
                    self.fail(j);
                }
            }
            _ => {}
        }
        true
    }

    fn on_data_ack(&mut self, now: SimTime, off: u64) {
        let fin_end = self.app_written + 1;
        let limit = if self.app_closed && self.snd_nxt == self.app_written {
            fin_end
        } else {
            self.snd_nxt
        };
        if off > self.data_una && off <= limit {
            let newly = off.min(self.app_written) - self.data_una.min(self.app_written);
            self.stats.bytes_acked += newly;
            self.data_una = off.min(self.app_written);
            while let Some(&(a, b)) = self.reinject.front() {
                if b <= self.data_una {
                    self.reinject.pop_front();
                } else {
                    if a < self.data_una {
                        self.reinject[0].0 = self.data_una;
                    }
                    break;
                }
            }
            if self.app_closed && off >= fin_end {
                self.data_fin_acked = true;
                self.data_fin_deadline = None;
            }
        }
        let _ = now;
        self.maybe_close_subflows();
    }

    /// Reads subflow `i`'s in-order bytes and moves them to the data level through its mappings.
    fn pull_data(&mut self, now: SimTime, i: usize) {
        if self.remote_key.is_none() {
            return;
        }
        let n = self.subflows[i].ep.read(now, u64::MAX);
        if n == 0 {
            return;
        }
        let base = crypto::idsn(self.remote_key.unwrap_or(0)).wrapping_add(1);
        let s = &mut self.subflows[i];
        let (mut a, b) = (s.rx_read, s.rx_read + n);
        s.rx_read = b;
        s.stats.bytes_received += n;
        let mut ranges = Vec::new();
        while a < b {
            // the mapping covering subflow offset `a`
            let Some((&m_ssn, &(m_wire, m_len))) = s.rx_maps.range(..=a).next_back() else {
                break;
            };
            let m_dsn = m_wire.wrapping_sub(base);
            if a >= m_ssn + m_len {
                // no mapping for these bytes (cannot happen: every data segment carries one)
                debug_assert!(false, "subflow bytes {a}.. without a mapping");
                break;
            }
            let end = b.min(m_ssn + m_len);
            ranges.push((m_dsn + (a - m_ssn), m_dsn + (end - m_ssn)));
            a = end;
        }
        // forget mappings wholly consumed
        while let Some((&m_ssn, &(_, m_len))) = s.rx_maps.iter().next() {
            if m_ssn + m_len <= s.rx_read {
                s.rx_maps.remove(&m_ssn);
            } else {
                break;
            }
        }
        for (x, y) in ranges {
            self.data_arrived(x, y);
        }
        self.advance_fin(i);
    }

    /// Data-level reassembly of `[a, b)`.
    fn data_arrived(&mut self, a: u64, b: u64) {
        let a0 = a.max(self.rcv_nxt);
        if b <= a0 {
            self.stats.duplicate_bytes += b - a;
            return;
        }
        self.stats.duplicate_bytes += a0 - a;
        // merge [a0, b) into the out-of-order set, counting overlaps as duplicates
        let (mut lo, mut hi) = (a0, b);
        let overl: Vec<(u64, u64)> = self
            .ooo
            .range(..=hi)
            .filter(|(&s, &e)| e >= lo && s <= hi)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in overl {
            let ov = e.min(b).saturating_sub(s.max(a0));
            self.stats.duplicate_bytes += ov;
            self.ooo.remove(&s);
            self.ooo_bytes -= e - s;
            lo = lo.min(s);
            hi = hi.max(e);
        }
        self.ooo.insert(lo, hi);
        self.ooo_bytes += hi - lo;
        while let Some((&s, &e)) = self.ooo.iter().next() {
            if s <= self.rcv_nxt {
                self.ooo.remove(&s);
                self.ooo_bytes -= e - s;
                self.rcv_nxt = self.rcv_nxt.max(e);
            } else {
                break;
            }
        }
    }

    fn advance_fin(&mut self, i: usize) {
        if !self.fin_rcvd && self.peer_fin.is_some_and(|f| f <= self.rcv_nxt) {
            self.fin_rcvd = true;
            self.subflows[i].ep.send_ack_now();
            self.maybe_close_subflows();
        }
    }

    fn maybe_close_subflows(&mut self) {
        if self.data_fin_acked && self.fin_rcvd {
            for s in &mut self.subflows {
                if s.state != SubflowState::Failed {
                    s.ep.close();
                }
            }
        }
    }

    /// Subflow `i` failed: all its data not DATA_ACKed goes back to the reinjection queue.
    fn fail(&mut self, i: usize) {
        if self.subflows[i].state == SubflowState::Failed {
            return;
        }
        self.subflows[i].state = SubflowState::Failed;
        self.stats.subflows_failed += 1;
        self.reinject_from(i, 0);
        self.subflows[i].ep.close();
    }

    /// Queues again the data of subflow `i` at subflow offsets >= `from` (not yet DATA_ACKed).
    fn reinject_from(&mut self, i: usize, from: u64) {
        let una = self.data_una;
        let mut ranges = Vec::new();
        for m in self.subflows[i].tx_maps.iter_mut() {
            if m.ssn_off + m.len > from && !m.reinjected && m.dsn_off + m.len > una {
                m.reinjected = true;
                ranges.push((m.dsn_off.max(una), m.dsn_off + m.len));
            }
        }
        for (a, b) in ranges {
            self.stats.reinjected_bytes += b - a;
            self.reinject.push_back((a, b));
        }
        let mut v: Vec<_> = self.reinject.drain(..).collect();
        v.sort_unstable();
        self.reinject = v.into();
    }

    /// After any input or timer on subflow `i`: timeouts make it stale and reinject its
    /// outstanding data; a reset or abort fails it.
    fn check_health(&mut self, i: usize) {
        let s = &mut self.subflows[i];
        if s.state == SubflowState::Failed {
            return;
        }
        let sample = s.sample();
        let timeouts = s.ep.stats().timeouts;
        if s.ep.was_reset() || (s.ep.is_closed() && !(self.data_fin_acked && self.fin_rcvd)) {
            self.fail(i);
            return;
        }
        // OLIA's inter-loss distances
        let losses = s.ep.stats().fast_recoveries + timeouts;
        if losses > s.losses_seen {
            s.losses_seen = losses;
            s.loss_marks = [s.loss_marks[1], sample.delivered_bytes];
        }
        if s.stale && sample.snd_una > s.stale_una {
            s.stale = false;
        }
        if timeouts > s.timeouts_seen {
            s.timeouts_seen = timeouts;
            if s.state == SubflowState::Established {
                s.stale = true;
                s.stale_una = sample.snd_una;
                let from = sample.snd_una.saturating_sub(1);
                if self.subflows.iter().any(|t| t.usable() && !t.stale) {
                    self.reinject_from(i, from);
                }
            }
        }
        let una = self.data_una;
        // forget mappings acknowledged at both levels
        let s = &mut self.subflows[i];
        let acked = sample.snd_una.saturating_sub(1);
        while let Some(m) = s.tx_maps.front() {
            if m.ssn_off + m.len <= acked && m.dsn_off + m.len <= una {
                s.tx_maps.pop_front();
            } else {
                break;
            }
        }
    }

    /// Sets subflow `i`'s coupled increase and decrease from every established subflow.
    fn couple(&mut self, i: usize) {
        if !self.cc.is_coupled() {
            return;
        }
        let mut views = Vec::with_capacity(self.subflows.len());
        let mut me = None;
        for (j, s) in self.subflows.iter().enumerate() {
            if !s.usable() {
                continue;
            }
            let x = s.sample();
            if x.srtt == SimDuration::ZERO {
                continue;
            }
            let cwnd = if x.ca_state == CaState::Recovery {
                x.ssthresh_bytes.min(x.cwnd_bytes)
            } else {
                x.cwnd_bytes
            };
            let l = (s.loss_marks[1] - s.loss_marks[0]).max(x.delivered_bytes - s.loss_marks[1]);
            if j == i {
                me = Some(views.len());
            }
            views.push(PathView {
                cwnd: cwnd as f64,
                srtt: x.srtt.as_secs_f64(),
                mss: s.ep.mss() as f64,
                inter_loss_bytes: l as f64,
            });
        }
        let Some(r) = me else { return };
        let c = self.cc.coupling(&views, r);
        if let Some(cc) = self.subflows[i].ep.controller_mut().as_coupled_mut() {
            cc.set_coupling(c);
        }
    }

    // ================================================================== output

    /// The right edge of the receive window we advertise (peer's data offsets).
    fn adv_edge(&self) -> u64 {
        let used = (self.rcv_nxt - self.app_read) + self.ooo_bytes;
        self.rcv_nxt + self.cfg.rcv_buf.saturating_sub(used)
    }

    /// Hands data to subflows with window room, as the scheduler chooses.
    fn schedule(&mut self) {
        loop {
            let mut cands = Vec::new();
            for (j, s) in self.subflows.iter().enumerate() {
                // A joined subflow once its MP_JOIN third ACK has left (client) or been checked
                // (listener); the initial one once the keys are exchanged.
                let ready = if s.join || s.active {
                    s.third_ack_sent
                } else {
                    self.remote_key.is_some()
                };
                if !s.usable() || s.stale || !ready || s.unsent() > 0 {
                    continue;
                }
                let x = s.sample();
                let room = x.cwnd_bytes.saturating_sub(x.bytes_in_flight);
                if room > 0 {
                    cands.push(Candidate {
                        subflow: j,
                        srtt: x.srtt,
                        room,
                    });
                }
            }
            if cands.is_empty() {
                return;
            }
            if self.sched.kind() == SchedulerKind::Redundant && self.reinject.is_empty() {
                // Every subflow carries all the data: each from the first offset it has not
                // carried yet (not below the DATA_ACK), within the peer's window.
                let end = self.app_written.min(self.peer_edge);
                let mut any = false;
                for c in &cands {
                    let s = &mut self.subflows[c.subflow];
                    let start = s.red_nxt.max(self.data_una);
                    if start >= end {
                        continue;
                    }
                    let mss = s.ep.mss() as u64;
                    let len = (c.room.div_ceil(mss) * mss)
                        .min(MAX_MAPPING / mss * mss)
                        .min(end - start);
                    let n = s.ep.write(len);
                    if n == 0 {
                        continue;
                    }
                    s.tx_maps.push_back(TxMap {
                        ssn_off: s.written,
                        dsn_off: start,
                        len: n,
                        reinjected: false,
                    });
                    s.written += n;
                    s.red_nxt = start + n;
                    s.stats.bytes_scheduled += n;
                    s.stats.bytes_reinjected += self.snd_nxt.min(start + n).saturating_sub(start);
                    self.snd_nxt = self.snd_nxt.max(start + n);
                    any = true;
                }
                if !any {
                    return;
                }
                continue;
            }
            // the next chunk: reinjections first, then new data within the peer's window
            let (start, end, reinj) = if let Some(&(a, b)) = self.reinject.front() {
                (a, b, true)
            } else {
                let end = self.app_written.min(self.peer_edge);
                if self.snd_nxt >= end {
                    return;
                }
                (self.snd_nxt, end, false)
            };
            self.scratch.clear();
            let mut picks = std::mem::take(&mut self.scratch);
            self.sched.pick(&cands, &mut picks);
            if picks.is_empty() {
                self.scratch = picks;
                return;
            }
            let mut taken = 0;
            for (k, &p) in picks.iter().enumerate() {
                let c = cands[p];
                let s = &mut self.subflows[c.subflow];
                let mss = s.ep.mss() as u64;
                let max_map = MAX_MAPPING / mss * mss;
                let want = c.room.div_ceil(mss) * mss;
                let len = want.min(max_map).min(end - start);
                let n = s.ep.write(len);
                if n == 0 {
                    continue;
                }
                s.tx_maps.push_back(TxMap {
                    ssn_off: s.written,
                    dsn_off: start,
                    len: n,
                    reinjected: false,
                });
                s.written += n;
                s.stats.bytes_scheduled += n;
                if reinj || k > 0 {
                    s.stats.bytes_reinjected += n;
                }
                taken = taken.max(n);
            }
            self.scratch = picks;
            if taken == 0 {
                return;
            }
            if reinj {
                let f = &mut self.reinject[0];
                f.0 += taken;
                if f.0 >= f.1 {
                    self.reinject.pop_front();
                }
            } else {
                self.snd_nxt += taken;
            }
        }
    }

    /// The next segment to send, or `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Outgoing> {
        if self.reset {
            return None;
        }
        self.schedule();
        // DATA_FIN due: everything handed out and none waiting for reinjection.
        if self.app_closed
            && !self.data_fin_acked
            && self.snd_nxt == self.app_written
            && self.reinject.is_empty()
        {
            let due = self.data_fin_deadline.is_none_or(|d| now >= d);
            if due {
                // On the fastest subflow that is not stale; with none, when one recovers (a
                // later call), the timer being off meanwhile.
                self.data_fin_deadline = None;
                if let Some(s) = self
                    .subflows
                    .iter_mut()
                    .filter(|s| s.usable() && !s.stale)
                    .min_by_key(|s| s.sample().srtt)
                {
                    s.ep.send_ack_now();
                    let rto = s.sample().rto;
                    self.data_fin_deadline = Some(now + rto.max(SimDuration::from_millis(200)));
                }
            }
        }
        let n = self.subflows.len();
        for k in 0..n {
            let i = (self.cursor + k) % n;
            if let Some(mut seg) = self.subflows[i].ep.poll_transmit(now) {
                self.cursor = (i + 1) % n;
                let mptcp = self.decorate(i, &mut seg);
                let s = &self.subflows[i];
                return Some(Outgoing {
                    subflow: i,
                    local: s.local,
                    remote: s.remote,
                    seg,
                    mptcp,
                });
            }
        }
        None
    }

    /// The MPTCP option for a subflow's segment; puts the connection-level window on it.
    fn decorate(&mut self, i: usize, seg: &mut TcpSegment) -> MptcpOption {
        let syn = seg.flags.syn();
        let ack = seg.flags.ack();
        let lk = self.local_key;
        let rk = self.remote_key;
        let s = &mut self.subflows[i];
        let opt = if syn && !ack {
            if s.join {
                MptcpOpt::JoinSyn {
                    backup: false,
                    addr_id: s.local_id,
                    token: crypto::token(rk.unwrap_or(0)),
                    nonce: s.nonce_local,
                }
            } else {
                MptcpOpt::Capable {
                    flags: FLAG_HMAC_SHA256,
                    keys: CapableKeys::None,
                    data_len: None,
                    checksum: None,
                }
            }
        } else if syn {
            if s.join {
                let h = crypto::join_hmac(lk, rk.unwrap_or(0), s.nonce_local, s.nonce_remote);
                MptcpOpt::JoinSynAck {
                    backup: false,
                    addr_id: s.local_id,
                    hmac: u64::from_be_bytes(h[..8].try_into().unwrap()),
                    nonce: s.nonce_local,
                }
            } else {
                MptcpOpt::Capable {
                    flags: FLAG_HMAC_SHA256,
                    keys: CapableKeys::One(lk),
                    data_len: None,
                    checksum: None,
                }
            }
        } else if s.active && !s.third_ack_sent {
            s.third_ack_sent = true;
            s.state = SubflowState::Established;
            if s.join {
                let h = crypto::join_hmac(lk, rk.unwrap_or(0), s.nonce_local, s.nonce_remote);
                MptcpOpt::JoinAck {
                    hmac: h[..20].try_into().unwrap(),
                }
            } else {
                MptcpOpt::Capable {
                    flags: FLAG_HMAC_SHA256,
                    keys: CapableKeys::Two {
                        sender: lk,
                        receiver: rk.unwrap_or(0),
                    },
                    data_len: None,
                    checksum: None,
                }
            }
        } else if seg.payload_len == 0 && !self.add_addr_echo.is_empty() {
            let (id, addr) = self.add_addr_echo.remove(0);
            MptcpOpt::AddAddr {
                echo: true,
                addr_id: id,
                addr,
                port: None,
                hmac: None,
            }
        } else if seg.payload_len == 0
            && s.usable()
            && !self.add_addr_pending.is_empty()
            && rk.is_some()
        {
            let id = self.add_addr_pending[0];
            let addr = self
                .local_addrs
                .iter()
                .find(|a| a.id == id)
                .map(|a| a.addr)
                .unwrap_or_default();
            let h = crypto::add_addr_hmac(lk, rk.unwrap_or(0), id, addr.octets(), 0);
            MptcpOpt::AddAddr {
                echo: false,
                addr_id: id,
                addr,
                port: None,
                hmac: Some(h),
            }
        } else {
            let data_ack = rk.map(|k| {
                crypto::idsn(k)
                    .wrapping_add(1)
                    .wrapping_add(self.rcv_nxt + self.fin_rcvd as u64)
            });
            let base = crypto::idsn(lk).wrapping_add(1);
            let mut d = Dss {
                data_ack,
                ack64: true,
                mapping: None,
                data_fin: false,
            };
            let first_map = |m: &TxMap| m.ssn_off == 0 && m.dsn_off == 0;
            let off = s.tx_off(seg.seq);
            let cur = s
                .tx_maps
                .iter()
                .find(|m| off >= m.ssn_off && off < m.ssn_off + m.len)
                .copied();
            if seg.payload_len > 0 && s.active && !s.join && cur.is_some_and(|m| first_map(&m)) {
                // §3.1 (v1): the first data carries MP_CAPABLE with both keys and the length of
                // the implied first mapping, so the listener learns our key even if the third
                // ACK was lost.
                let m = cur.unwrap();
                let keys = CapableKeys::Two {
                    sender: lk,
                    receiver: rk.unwrap_or(0),
                };
                MptcpOpt::Capable {
                    flags: FLAG_HMAC_SHA256,
                    keys,
                    data_len: Some(m.len as u16),
                    checksum: None,
                }
            } else {
                if seg.payload_len > 0 {
                    if let Some(m) = cur {
                        d.mapping = Some(Mapping {
                            dsn: base.wrapping_add(m.dsn_off),
                            dsn64: true,
                            ssn: (m.ssn_off + 1) as u32,
                            len: m.len as u16,
                            checksum: None,
                        });
                    }
                } else if self.app_closed
                    && !self.data_fin_acked
                    && self.snd_nxt == self.app_written
                    && self.reinject.is_empty()
                {
                    d.data_fin = true;
                    d.mapping = Some(Mapping {
                        dsn: base.wrapping_add(self.app_written),
                        dsn64: true,
                        ssn: 0,
                        len: 1,
                        checksum: None,
                    });
                }
                MptcpOpt::Dss(d)
            }
        };
        if !syn {
            // §3.3.4: the connection-level window, scaled by this subflow's shift.
            let edge = self.adv_edge();
            self.last_adv_edge = self.last_adv_edge.max(edge);
            let shift = self.subflows[i].ep.negotiated().rcv_wscale as u32;
            let wnd = (edge - self.rcv_nxt) >> shift;
            seg.window = wnd.min(65_535) as u16;
        }
        opt.encode()
    }

    // ================================================================== timers

    /// The earliest time [`MptcpConnection::on_timeout`] has something to do.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let sub = self
            .subflows
            .iter()
            .filter_map(|s| s.ep.next_deadline())
            .min();
        match (sub, self.data_fin_deadline.filter(|_| !self.data_fin_acked)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
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

    /// Removes a local address (an interface went down): its subflows fail and their data is
    /// reinjected (sending REMOVE_ADDR to the peer is not modelled yet; receiving one is).
    pub fn remove_local_addr(&mut self, id: u8) {
        for j in 0..self.subflows.len() {
            if self.subflows[j].local_id == id {
                self.fail(j);
            }
        }
        self.local_addrs.retain(|a| a.id != id);
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
