//! The TCP endpoint: one connection's state machine, sender and receiver, sans-IO.
//!
//! The caller feeds segments in ([`TcpEndpoint::on_segment`]), drains segments out
//! ([`TcpEndpoint::poll_transmit`] until `None`) and fires timers ([`TcpEndpoint::next_deadline`],
//! [`TcpEndpoint::on_timeout`]); nothing here reads a clock.
//!
//! What is modelled, with the governing text:
//!
//! - States and transitions of RFC 9293 §3.3.2 (no LISTEN: a passive open starts from a
//!   received SYN), orderly close with FIN both ways, a short TIME-WAIT (see
//!   [`TcpConfig::time_wait`]), RST received (the connection closes at once).
//! - Handshake options (RFC 9293 §3.7.1 MSS, RFC 7323 §2 window scale and §3 timestamps,
//!   RFC 2018 SACK-permitted), each used only if both sides offer it; SYN / SYN-ACK
//!   retransmission with exponential backoff (RFC 6298 §5.5, Linux `tcp_syn_retries`).
//! - Segment acceptability (RFC 9293 §3.10.7.4) and the send-window update rule with
//!   SND.WL1/SND.WL2. Deviation: the ACK field of an unacceptable segment is still processed
//!   (it is range-checked against SND.UNA..SND.NXT), which only matters for bidirectional data.
//! - Sender: cwnd from the [`Controller`], flow control by the peer's window, sender SWS avoidance
//!   (RFC 9293 §3.8.6.2.1), the persist timer and zero-window probes (RFC 9293 §3.8.6.1; probes
//!   are Linux-style: an ACK with SEG.SEQ = SND.UNA - 1 that the peer must answer).
//! - Segmentation: full segments are sent as soon as cwnd, the peer window and pacing allow; a
//!   partial segment (the last bytes the application wrote) with [`TcpConfig::nagle`] on waits
//!   while an earlier partial segment is unacknowledged (RFC 896 with Minshall's refinement, as
//!   Linux `tcp_nagle_check` / `tcp_minshall_check`), unless the application has closed (FIN);
//!   with Nagle off (`TCP_NODELAY`) it goes at once. Linux's autocorking is not modelled.
//! - Loss recovery: with SACK, RFC 6675 (IsLost with DupThresh, pipe, NextSeg rules 1-4,
//!   RecoveryPoint, exit on its cumulative ACK); without SACK, NewReno (RFC 6582: `recover`,
//!   fast retransmit on the third duplicate ACK, sender-side cwnd inflation by one SMSS per
//!   duplicate ACK, partial ACKs retransmit the next hole and deflate, a full ACK exits).
//! - Lost retransmissions (which RFC 6675 cannot see) are detected in time order as RACK does
//!   (RFC 8985 §6.2, reordering window min_rtt / 4; Linux `tcp_mark_lost_retrans` before RACK)
//!   and sent again within the same recovery episode, instead of waiting for the RTO.
//! - Spurious fast retransmits and RTOs are detected with timestamps (Eifel, RFC 3522 §2: the
//!   ACK covering the first retransmission echoes an older TSval than that retransmission's,
//!   Linux `tcp_packet_delayed` with `retrans_stamp`, the first retransmission of the episode,
//!   kept through a timeout inside it; an ACK advancing SND.UNA before anything was resent
//!   undoes too, as Linux 6.16+ does; in fast recovery an old echo
//!   counts only once no retransmission is in flight, as Linux `tcp_try_undo_partial`, since
//!   the ACK advancing SND.UNA may cover a merely delayed original) and undone (RFC 4015:
//!   [`Controller::on_spurious`], the episode ends, after an RTO no go-back-N; a partial undo
//!   in Linux recovery clears the loss marks, as `tcp_undo_cwnd_reduction(sk, true)`). Without
//!   timestamps nothing is detected (no DSACK / F-RTO).
//! - RTO as Linux computes it (RTO >= SRTT + `min_rto`) or by RFC 6298, see [`crate::rtt`]; the timer also restarts whenever the oldest outstanding
//!   segment is resent (Linux `tcp_xmit_retransmit_queue`); on expiry everything un-SACKed is marked lost and
//!   resent in order from SND.UNA (Linux `tcp_enter_loss`, RFC 6675 §5.1 keeps SACKed data),
//!   ssthresh is reduced only when no reduction was made for this window of data (Linux
//!   `tcp_enter_loss`; RFC 5681 with `recovery = "rfc6675"`, see `rto_ssthresh`),
//!   the timer backs off, and `recover` is set so later duplicate ACKs do not start a second
//!   reduction (RFC 6582 §3.2 step 1).
//! - RTT samples: from the send time of the oldest newly acknowledged, never retransmitted
//!   segment (as Linux does, exact to the nanosecond); when all newly acknowledged data was
//!   retransmitted, from the timestamp echo if timestamps are on (RFC 7323 §4, 1 ms clock),
//!   otherwise none (Karn's algorithm, RFC 6298 §3).
//! - Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation-02 §3) and app-limited
//!   marking (§3.4) for every ACK that delivers data.
//! - Pacing (Linux `tcp_update_pacing_rate` ratios, or the controller's own rate), in bursts of
//!   Linux's TSO autosize by default ([`TcpConfig::pacing_quantum`], [`crate::pacing`]).
//! - Receiver: see [`crate::receiver`].
//! - A closed endpoint answers a non-RST segment with a RST (RFC 9293 §3.10.7.1), so a peer
//!   whose last ACK was lost after our TIME-WAIT ended closes at once instead of retrying; keep
//!   delivering to and polling closed endpoints to get this. A RST in CLOSING, LAST-ACK or
//!   TIME-WAIT closes quietly; elsewhere [`TcpEndpoint::was_reset`] turns true.
//!
//! - ECN (RFC 3168 §6.1), when [`TcpConfig::ecn`] is on at both ends (or the controller needs it,
//!   DCTCP): negotiated with ECE+CWR on the SYN and ECE on the SYN-ACK (§6.1.1); new data
//!   segments ask IP for ECT(0) ([`TcpSegment::ect`]), pure ACKs, window probes and
//!   retransmissions do not (§6.1.5, §6.1.6). The receiver sets ECE on every ACK from a CE
//!   packet until a segment with CWR arrives (§6.1.3); with DCTCP it instead echoes the CE state
//!   of the segments it acknowledges (RFC 8257 §3.2: on a change of CE state it first ACKs what
//!   it holds with the old state, then ACKs at once). The sender reacts to ECE at most once per
//!   window of data and not in loss recovery (§6.1.2): the controller gets a congestion event
//!   with `ecn` (cwnd reduced, nothing retransmitted) and the next new data segment carries CWR.
//!   BBR v1 does not react to ECE (it only gets the feedback). Every ACK of data on an ECN
//!   connection also reaches [`Controller::on_ecn_feedback`] (DCTCP's estimator).
//!
//! - F-RTO (RFC 5682 §3.1 with the SACK enhancement of its Appendix A, as Linux runs it by
//!   default, `tcp_frto = 2`; [`TcpConfig::frto`]): armed on an RTO outside loss recovery or on
//!   a repeated RTO (`tcp_enter_loss`); the first ACK that advances SND.UNA releases new data
//!   instead of the rest of the window (step 2.b, Linux `REXMIT_NEW`); then a duplicate ACK or
//!   SACK means the loss was real and recovery goes on as without F-RTO (step 3.a), while an ACK
//!   or SACK of data sent before the timeout and never retransmitted undoes the RTO (step 3.b,
//!   `tcp_process_loss`, `tcp_try_undo_loss`).
//!
//! - Linux's loss recovery ([`TcpConfig::recovery`] = `"linux"`, the default, with SACK):
//!   RACK (RFC 8985 §6, Linux `tcp_rack_detect_loss`, see [`crate::rack`]) marks segments lost
//!   by time, for originals and retransmissions alike, with the reordering timer (§6.3);
//!   recovery starts as soon as a segment is lost (Linux `tcp_time_to_recover`: no DupThresh);
//!   PRR (RFC 6937, Linux `tcp_cwnd_reduction`, see [`crate::prr`]) sets the window on every
//!   ACK of fast recovery (not for BBR, which Linux leaves to its `cong_control`); TLP (RFC 8985
//!   §7, Linux `tcp_schedule_loss_probe` / `tcp_send_loss_probe` / `tcp_process_tlp_ack`) sends
//!   one probe (new data, else the last segment) 2 SRTT after the last ACK when the tail is
//!   silent, and a probe that repaired a loss costs one cwnd reduction; DSACKs (RFC 2883, sent
//!   by the receiver, see [`crate::receiver`]) widen RACK's reordering window once reordering
//!   has been seen and undo an episode whose every retransmission they show needless
//!   (RFC 3708, Linux `tcp_try_undo_dsack`). `"rfc6675"` keeps RFC 6675's DupThresh rules and
//!   the pipe/cwnd sending rule, with lost retransmissions detected in time order as above.
//!
//! Not modelled: PAWS (RFC 7323 §5), RACK's reordering timer for retransmissions (they are
//! judged on ACKs only), PRR in the ECN CWR state, ECN nonces and AccECN, urgent data,
//! simultaneous open (SYN in SYN-SENT), LISTEN.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::packet::TcpSegment;

use crate::cc::{AnyCc, Controller};
use crate::config::{Recovery, TcpConfig};
use crate::prr::Prr;
use crate::rack::Rack;
use crate::receiver::Receiver;
use crate::rtt::RttEstimator;
use crate::scoreboard::Scoreboard;

mod input;
mod output;
use output::Burst;
mod rate;
mod recovery;
mod timers;
#[cfg(test)]
mod tests;

/// MSS assumed when the peer's SYN carries no MSS option (RFC 9293 §3.7.1: 536).
pub const DEFAULT_PEER_MSS: u32 = 536;
/// Bytes of timestamp option (with its NOP padding) in every segment once negotiated
/// (RFC 7323 §3: 10 bytes, padded to 12).
pub const TS_OPTION_BYTES: u32 = 12;
/// `skb->truesize` of a TCP send skb without its payload: `tcp_stream_alloc_skb` allocates
/// `MAX_TCP_HEADER` (192 bytes on the oracle's host, see `input.rs`) of head; with
/// `skb_shared_info` that is `SKB_SMALL_HEAD_SIZE` = 192 + 320 = 512, a power of two, so the
/// small-head cache's objects are 512 + `L1_CACHE_BYTES` = 576 bytes
/// (`SKB_SMALL_HEAD_CACHE_SIZE`, net/core/skbuff.c), `skb_end_offset` is 576 - 320 = 256, and
/// `truesize = SKB_TRUESIZE(256)` = 256 + 256 (`struct sk_buff`, aligned) + 320
/// (`skb_shared_info`); the payload's page fragments add their length.
pub const LINUX_SKB_TRUESIZE_HEAD: u64 = 832;

/// Connection states (RFC 9293 §3.3.2). There is no LISTEN: a passive open is created from the
/// SYN it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TcpState {
    Closed,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// The sender's loss-recovery state (Linux `icsk_ca_state`, reduced).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaState {
    Open = 0,
    /// Fast recovery (RFC 6675 §5 / RFC 6582 §3.2).
    Recovery = 1,
    /// After an RTO, until everything outstanding then is acknowledged.
    Loss = 2,
}

/// What the handshake settled (valid once the peer's SYN has been seen).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    /// Payload bytes per full segment we send.
    pub mss: u32,
    pub sack: bool,
    pub timestamps: bool,
    pub window_scaling: bool,
    /// Our shift (applied to the windows we advertise).
    pub rcv_wscale: u8,
    /// The peer's shift (applied to the windows we receive).
    pub snd_wscale: u8,
    /// ECN is in use (RFC 3168 §6.1.1).
    pub ecn: bool,
}

/// A cheap snapshot for time series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpSample {
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: u64,
    /// Zero before the first RTT sample.
    pub srtt: SimDuration,
    pub rttvar: SimDuration,
    pub rto: SimDuration,
    pub bytes_in_flight: u64,
    /// Bytes per second, when pacing.
    pub pacing_rate: Option<f64>,
    /// `C.delivered`: payload bytes the peer has acknowledged (cumulatively or by SACK).
    pub delivered_bytes: u64,
    /// SND.UNA and SND.NXT as absolute offsets from our ISN (unwrapped; the SYN is 0).
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The receive window currently offered to the peer, bytes.
    pub rcv_wnd: u64,
    /// The controller's own state code ([`crate::cc::CcMetrics::state`]).
    pub cc_state: u8,
    pub ca_state: CaState,
}

/// Counters, updated inline.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpStats {
    pub segments_sent: u64,
    pub segments_received: u64,
    /// Segments with payload (including retransmissions).
    pub data_segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    pub syn_retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Recovery episodes and RTOs found spurious (Eifel detection with timestamps, or F-RTO)
    /// and undone.
    pub spurious: u64,
    /// Of those, RTOs found spurious by F-RTO (RFC 5682 §3.1 step 3.b).
    pub spurious_rtos: u64,
    pub rtt_samples_count: u64,
    pub rtt_sum: SimDuration,
    pub rtt_min: SimDuration,
    pub rtt_max: SimDuration,
    pub dup_acks_received: u64,
    /// Payload bytes cumulatively acknowledged by the peer.
    pub bytes_acked: u64,
    /// Payload bytes delivered in order to our application (receiver side).
    pub bytes_delivered: u64,
    pub ooo_segments_received: u64,
    pub duplicate_segments_received: u64,
    pub pure_acks_sent: u64,
    pub window_probes_sent: u64,
    /// Packets received with the CE mark (RFC 3168).
    pub ce_received: u64,
    /// ACKs received with ECE on an ECN connection.
    pub ece_received: u64,
    /// Window reductions in answer to ECE (at most one per window, RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// ACKs carrying a DSACK block (RFC 2883) that were not dubious.
    pub dsacks_received: u64,
    /// Recovery episodes undone because DSACKs showed every retransmission needless (RFC 3708).
    pub dsack_undos: u64,
    /// Tail loss probes sent (RFC 8985 §7).
    pub tlp_probes: u64,
    /// Probes that repaired a loss, answered with a cwnd reduction (RFC 8985 §7.4).
    pub tlp_recoveries: u64,
}

/// One TCP connection endpoint.
#[derive(Clone, Debug)]
pub struct TcpEndpoint {
    cfg: TcpConfig,
    state: TcpState,
    local_port: u16,
    remote_port: u16,
    iss: u32,
    // --- negotiated (handshake)
    mss: u32,
    sack_ok: bool,
    ts_ok: bool,
    snd_wscale: u8,
    /// Both SYNs carry (or will carry) the window-scale option (RFC 7323 §2.2).
    wscale_ok: bool,
    syn_pending: bool,
    syn_tx_count: u32,
    syn_sent_time: SimTime,
    // --- send sequence space (absolute; our SYN is 0)
    snd_una: u64,
    snd_nxt: u64,
    snd_wnd: u64,
    max_snd_wnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    written: u64,
    snd_buf: u64,
    /// A write found the send buffer full: the writer sleeps until it is writeable again
    /// (Linux `SOCK_NOSPACE`, see [`Self::send_buffer_writable`]).
    snd_nospace: bool,
    fin_queued: bool,
    fin_end: Option<u64>,
    fin_acked: bool,
    sb: Scoreboard,
    rtt: RttEstimator,
    cc: AnyCc,
    // --- recovery
    ca_state: CaState,
    recovery_point: u64,
    /// RFC 6582 `recover`.
    recover: u64,
    rescue_done: bool,
    /// The next retransmission of the first hole goes out regardless of cwnd (RFC 6675 §5 step
    /// 4.3, RFC 6582 §3.2 steps 2 and 5: fast retransmit is not subject to the window).
    force_rtx: bool,
    dupacks: u32,
    /// Eifel detection (RFC 3522 §2) as Linux `tcp_packet_delayed`: the undo check is armed
    /// for the current recovery or loss episode (Linux `undo_marker != 0`), SND.UNA when it
    /// began (`undo_marker`), and the TSval of the episode's first retransmission (Linux
    /// `retrans_stamp`, set in `tcp_retransmit_skb` when zero, cleared when the episode ends;
    /// `None` while nothing has been retransmitted; not set by a TLP probe).
    undo_armed: bool,
    undo_marker: u64,
    retrans_stamp: Option<u32>,
    /// RFC 6582 sender-side window inflation (bytes), non-SACK fast recovery only.
    inflation: u64,
    /// F-RTO (RFC 5682 §3, Linux `tp->frto`) is running for the current RTO episode.
    frto: bool,
    /// F-RTO step 2.b (Linux `REXMIT_NEW`): until the next ACK, send new data, not the
    /// segments the RTO marked lost.
    frto_new_only: bool,
    retries: u32,
    // --- delivery rate (draft-cheng §3.1)
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    app_limited_until: u64,
    cwnd_limited: bool,
    // --- pacing
    /// When the next segment (or burst) may leave (Linux `tcp_wstamp_ns`).
    pacing_next: SimTime,
    pacing_blocked: bool,
    /// The burst being sent (`pacing_quantum = "tso"`, [`crate::pacing`]).
    burst: Burst,
    // --- timers
    rto_deadline: Option<SimTime>,
    persist_deadline: Option<SimTime>,
    persist_backoff: u32,
    probe_pending: bool,
    rwnd_blocked: bool,
    time_wait_deadline: Option<SimTime>,
    /// End of the last partial (less than one MSS) data segment sent (Linux `snd_sml`, for
    /// Minshall's Nagle check).
    snd_sml: u64,
    // --- receive side
    rcv: Receiver,
    peer_syn_seen: bool,
    reset: bool,
    /// A RST to send in answer to a segment that reached a closed connection: (SEQ, ACK).
    rst_pending: Option<(u32, Option<u32>)>,
    // --- ECN (RFC 3168 §6.1, RFC 8257 §3.2)
    ecn_ok: bool,
    /// Sender: SND.NXT at the last ECN reduction; the next one waits until SND.UNA passes it.
    ecn_high: u64,
    /// Sender: the next new data segment carries CWR.
    cwr_pending: bool,
    /// Receiver: our ACKs carry ECE (classic: from a CE until a CWR; DCTCP: the CE state).
    ece_out: bool,
    /// Receiver (DCTCP): the ACK of the data held before a CE-state change, sent first.
    ack_before: Option<TcpSegment>,
    // --- Linux recovery (`recovery = "linux"` with SACK): RACK-TLP, PRR, DSACK undo
    rack: Rack,
    /// RACK's reordering timer (RFC 8985 §6.3, Linux `ICSK_TIME_REO_TIMEOUT`).
    rack_deadline: Option<SimTime>,
    /// PRR for the current fast recovery, and the window it set on the last ACK.
    prr: Option<Prr>,
    prr_cwnd: Option<u64>,
    /// TLP (RFC 8985 §7): the probe timer, a probe to send, `TLPRxtOut`/`tlp_high_seq` and
    /// whether the probe was a retransmission (Linux `tlp_retrans`).
    tlp_deadline: Option<SimTime>,
    tlp_pending: bool,
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    /// DSACK undo (Linux `undo_marker`, `undo_retrans`): SND.UNA when the episode began and
    /// the retransmissions not yet shown needless by a DSACK (-1: none sent yet).
    dsack_undo: Option<(u64, i64)>,
    /// Segments reported duplicate by DSACKs (Linux `dsack_dups`).
    dsack_dups: u64,
    stats: TcpStats,
    rtt_samples: Vec<SimDuration>,
}

impl TcpEndpoint {
    /// Linux `tp->rcv_ssthresh`: the most the receiver's advertised window may offer now, grown
    /// by in-order data (`tcp_grow_window`).
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv.rcv_ssthresh
    }

    /// The receiver's RTT estimate (Linux `rcv_rtt_est`; zero before any): an MPTCP connection
    /// times its receive-buffer autotuning with its subflows' (`mptcp_rcv_space_adjust`).
    pub fn rcv_rtt_est(&self) -> SimDuration {
        self.rcv.rtt_est()
    }

    /// An MPTCP subflow: the receive buffer and window clamp are the connection's `buf` bytes
    /// (no autotuning of the subflow's own), the window offered at most the connection's free
    /// space `free` (see [`Receiver::set_mptcp_space`]).
    pub fn set_mptcp_rcv_space(&mut self, buf: u64, free: u64) {
        self.rcv.set_mptcp_space(buf, free);
    }

    /// Raises the window the receiver accepts to `wnd` bytes beyond RCV.NXT (never lowers it):
    /// an MPTCP subflow whose segment carried the connection's right edge (see
    /// [`Receiver::raise_window`]).
    pub fn raise_rcv_window(&mut self, wnd: u64) {
        self.rcv.raise_window(wnd);
    }

    fn new(cfg: TcpConfig, local_port: u16, remote_port: u16, iss: u32, now: SimTime) -> Self {
        let mss = cfg.mss.max(1);
        let snd_buf = cfg.snd_buf.initial().max(1);
        TcpEndpoint {
            cfg,
            state: TcpState::Closed,
            local_port,
            remote_port,
            iss,
            mss,
            sack_ok: false,
            ts_ok: false,
            snd_wscale: 0,
            wscale_ok: false,
            syn_pending: false,
            syn_tx_count: 0,
            syn_sent_time: now,
            snd_una: 0,
            snd_nxt: 1,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            written: 0,
            snd_buf,
            snd_nospace: false,
            fin_queued: false,
            fin_end: None,
            fin_acked: false,
            sb: Scoreboard::default(),
            rtt: RttEstimator::with_mode(
                cfg.rto_estimator,
                cfg.initial_rto,
                cfg.min_rto,
                cfg.max_rto,
            ),
            cc: AnyCc::new(cfg.cc, mss, cfg.initial_cwnd_pkts, now, cfg.cc_seed),
            ca_state: CaState::Open,
            recovery_point: 0,
            recover: 0,
            rescue_done: false,
            force_rtx: false,
            dupacks: 0,
            undo_armed: false,
            undo_marker: 0,
            retrans_stamp: None,
            inflation: 0,
            frto: false,
            frto_new_only: false,
            retries: 0,
            delivered: 0,
            delivered_time: now,
            first_sent_time: now,
            app_limited_until: 0,
            cwnd_limited: false,
            pacing_next: now,
            pacing_blocked: false,
            burst: Burst::default(),
            rto_deadline: None,
            persist_deadline: None,
            persist_backoff: 0,
            probe_pending: false,
            rwnd_blocked: false,
            time_wait_deadline: None,
            rcv: {
                let mut r = Receiver::new(
                    cfg.rcv_buf,
                    0,
                    mss as u64,
                    cfg.delayed_ack,
                    cfg.delayed_ack_timeout,
                );
                r.quickack = cfg.quickack_segments;
                r
            },
            snd_sml: 0,
            peer_syn_seen: false,
            reset: false,
            rst_pending: None,
            ecn_ok: false,
            ecn_high: 0,
            cwr_pending: false,
            ece_out: false,
            ack_before: None,
            rack: Rack::default(),
            rack_deadline: None,
            prr: None,
            prr_cwnd: None,
            tlp_deadline: None,
            tlp_pending: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            dsack_undo: None,
            dsack_dups: 0,
            stats: TcpStats::default(),
            rtt_samples: Vec::new(),
        }
    }

    /// Active open: a SYN is queued (RFC 9293 §3.5).
    pub fn connect(
        cfg: TcpConfig,
        local_port: u16,
        remote_port: u16,
        iss: u32,
        now: SimTime,
    ) -> Self {
        let mut e = Self::new(cfg, local_port, remote_port, iss, now);
        e.state = TcpState::SynSent;
        e.syn_pending = true;
        e
    }

    /// Passive open from a received SYN: a SYN-ACK is queued.
    pub fn accept(
        cfg: TcpConfig,
        local_port: u16,
        remote_port: u16,
        iss: u32,
        syn: &TcpSegment,
        now: SimTime,
    ) -> Self {
        let mut e = Self::new(cfg, local_port, remote_port, iss, now);
        e.state = TcpState::SynReceived;
        e.on_peer_syn(syn, now);
        e.syn_pending = true;
        e
    }

    // ================================================================== application side

    /// The application writes `bytes` of (virtual) payload; returns how many fit in the send
    /// buffer. Nothing is accepted after [`close`](Self::close).
    pub fn write(&mut self, bytes: u64) -> u64 {
        let open = matches!(
            self.state,
            TcpState::SynSent | TcpState::SynReceived | TcpState::Established | TcpState::CloseWait
        );
        if !open || self.fin_queued {
            return 0;
        }
        if bytes > 0 && self.snd_nospace {
            // Linux tcp_sendmsg_locked -> tcp_rate_check_app_limited: the writer woken after a
            // full buffer finds the data it wrote all sent (module doc of `output`, `idle`).
            let in_flight = self.sb.in_flight();
            let cwnd = self.cwnd();
            self.check_app_limited(in_flight, cwnd);
        }
        let n = bytes.min(self.send_buffer_room());
        self.written += n;
        if bytes > 0 {
            // only for an autotuned buffer for now (see `send_buffer_writable`)
            self.snd_nospace = self.cfg.snd_buf.is_auto() && self.send_buffer_room() == 0;
        }
        n
    }

    /// Free space in the send buffer: the buffer less [`Self::send_buffer_charge`].
    pub fn send_buffer_free(&self) -> u64 {
        self.snd_buf.saturating_sub(self.send_buffer_charge())
    }

    /// What a write may copy now. A fixed buffer: its free space. An autotuned one as Linux
    /// `tcp_sendmsg_locked` copies: into the unsent tail skb up to its size goal without a
    /// memory check, and into a new skb of up to the size goal (64 KB, `tcp_xmit_size_goal`)
    /// whenever `sk_wmem_queued < sk_sndbuf` as it starts (`sk_stream_memory_free` at
    /// `new_segment`), so writes go in whole skbs and the charge may pass the buffer by one.
    fn send_buffer_room(&self) -> u64 {
        if !self.cfg.snd_buf.is_auto() {
            return self.send_buffer_free();
        }
        let goal = self.skb_size_goal();
        let unsent = (1 + self.written).saturating_sub(self.snd_nxt.max(self.snd_una).max(1));
        let mut room = (goal - unsent % goal) % goal;
        let mut charge = self.send_buffer_charge();
        while charge < self.snd_buf {
            room += goal;
            charge += goal + LINUX_SKB_TRUESIZE_HEAD;
        }
        room
    }

    /// `tcp_xmit_size_goal`: the payload of an unsent skb, whole segments up to
    /// [`crate::pacing::GSO_MAX_BYTES`].
    fn skb_size_goal(&self) -> u64 {
        let mss = (self.mss as u64).max(1);
        (crate::pacing::GSO_MAX_BYTES / mss).max(1) * mss
    }

    /// Written and not yet acknowledged payload bytes.
    pub fn send_buffer_used(&self) -> u64 {
        (1 + self.written).saturating_sub(self.snd_una.max(1))
    }

    /// What the written, not yet acknowledged data costs the send buffer (Linux
    /// `sk_wmem_queued`). A fixed buffer (`SO_SNDBUF`, `window`) holds payload
    /// ([`crate::BufSize::linux_sockopt`]). An autotuned one is charged as Linux charges
    /// `skb->truesize`: the payload plus [`LINUX_SKB_TRUESIZE_HEAD`] per skb
    /// (`tcp_stream_alloc_skb`). Unsent data sits in skbs of up to 64 KB
    /// (`tcp_xmit_size_goal`; [`crate::pacing::GSO_MAX_BYTES`]), about 1.4 % of overhead;
    /// `tcp_write_xmit` cuts the skb it sends to its TSO quantum (`tso_fragment`, each piece
    /// a new skb with its own head), so sent data carries a head per
    /// [`Self::send_quantum_segs`] segments at Linux's `sk_pacing_rate`
    /// ([`Self::linux_pacing_rate`]): 2 segments (416 bytes each) at 10 Mbit/s, about 3 % at
    /// 100 Mbit/s. All sent data is charged at the current quantum. Measured with `ss -tinm`
    /// on Linux 6.18 (10 Mbit/s, 1000-packet queue, Reno, docs/tcp.md "The 1000-packet Reno
    /// gap"): 1,835 bytes per segment in flight at the end of slow start (this rule: 1,864 at
    /// 2, 1,725 at 3 segments per skb). Not modelled: the split of an skb whose segments are
    /// retransmitted one by one (`tcp_fragment`: a head per retransmitted segment; the
    /// kernel's charge grew by ~650 kB over that run's recovery of 868 segments), and a partly
    /// acknowledged skb keeping its head (`tcp_trim_head`).
    pub fn send_buffer_charge(&self) -> u64 {
        let used = self.send_buffer_used();
        if !self.cfg.snd_buf.is_auto() {
            return used;
        }
        let mss = (self.mss as u64).max(1);
        let sent = self.snd_nxt.min(1 + self.written).saturating_sub(self.snd_una.max(1)).min(used);
        let unsent = used - sent;
        let quantum = self.send_quantum_segs(self.linux_pacing_rate()).max(1) as u64;
        used + sent.div_ceil(mss).div_ceil(quantum) * LINUX_SKB_TRUESIZE_HEAD
            + unsent.div_ceil(self.skb_size_goal()) * LINUX_SKB_TRUESIZE_HEAD
    }

    /// What a blocking writer can add now, as Linux wakes it: once a write has filled the send
    /// buffer (`sk_stream_wait_memory`, `SOCK_NOSPACE`), the writer sleeps until the free space
    /// is at least half of what the buffer holds (`sk_stream_write_space` ->
    /// `__sk_stream_is_writeable`: `sk_stream_wspace >= sk_stream_min_wspace`, i.e. the buffer
    /// down to 2/3 full; `tcp_poll` reports `EPOLLOUT` at the same point), both counted in
    /// [`Self::send_buffer_charge`] (`sk_wmem_queued`'s `truesize`); otherwise what a write may
    /// copy ([`Self::send_buffer_room`]: whole skbs for an autotuned buffer). A
    /// sender whose flight's charge exceeds 2/3 of the buffer therefore runs out of
    /// unsent data while the writer sleeps, and its rate samples are app-limited
    /// (`tcp_rate_check_app_limited`), as Linux's are.
    ///
    /// Applied to autotuned buffers only, for now: Linux wakes a writer on a fixed buffer
    /// (`SO_SNDBUF`, `window`) the same way, but that lowers buffer-limited flows (the proxy
    /// example's downloads, docs/scenario.md: 4.5 instead of 5.7+ Mbit/s) and has not been checked
    /// against the kernel with `iperf3 -w` yet; a fixed buffer is refilled on every ACK.
    pub fn send_buffer_writable(&self) -> u64 {
        if self.snd_nospace && {
            let charge = self.send_buffer_charge();
            self.snd_buf.saturating_sub(charge) < charge / 2
        } {
            0
        } else {
            self.send_buffer_room()
        }
    }

    /// `poll()`/`select()` for writing, as Linux `tcp_poll`: writable while the free space is
    /// at least half the charge (`__sk_stream_is_writeable`, the rule of
    /// [`Self::send_buffer_writable`]); otherwise the writer is marked as waiting
    /// (`SOCK_NOSPACE`) and is woken by that rule, though the buffer is not full. An
    /// application that writes a few blocks per `select()` (iperf3) therefore waits at 2/3 of
    /// the buffer, not only once a write has filled it. Autotuned buffers only, as
    /// [`Self::send_buffer_writable`].
    pub fn poll_writable(&mut self) -> bool {
        if !self.cfg.snd_buf.is_auto() {
            return self.send_buffer_free() > 0;
        }
        let charge = self.send_buffer_charge();
        let writable = self.snd_buf.saturating_sub(charge) >= charge / 2;
        if !writable {
            self.snd_nospace = true;
        }
        writable
    }

    /// The application reads up to `max` in-order bytes at `now`. Frees receive buffer; a
    /// window update is queued when the window can open by `min(2 MSS, buffer / 2)`
    /// (RFC 9293 §3.8.6.2.2). `now` drives receive-buffer autotuning (once per receiver RTT).
    pub fn read(&mut self, now: SimTime, max: u64) -> u64 {
        let n = self.rcv.read(now, max);
        self.stats.bytes_delivered += n;
        n
    }

    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> u64 {
        self.rcv.readable
    }

    /// Close our direction: a FIN follows all written data (RFC 9293 §3.10.4).
    pub fn close(&mut self) {
        self.snd_nospace = false; // no writer waits any more
        match self.state {
            TcpState::SynSent => self.enter_closed(),
            TcpState::SynReceived | TcpState::Established => {
                self.fin_queued = true;
                self.state = TcpState::FinWait1;
            }
            TcpState::CloseWait => {
                self.fin_queued = true;
                self.state = TcpState::LastAck;
            }
            _ => {}
        }
    }

    pub fn state(&self) -> TcpState {
        self.state
    }

    pub fn is_closed(&self) -> bool {
        self.state == TcpState::Closed
    }

    /// True once the peer's FIN has arrived and every byte before it has been read.
    pub fn peer_closed(&self) -> bool {
        self.rcv.fin_received && self.rcv.readable == 0
    }

    /// True once the peer's FIN has arrived (bytes before it may still be unread).
    pub fn peer_fin_received(&self) -> bool {
        self.rcv.fin_received
    }

    /// True if the connection ended with a RST or gave up retransmitting.
    pub fn was_reset(&self) -> bool {
        self.reset
    }

    pub fn is_established(&self) -> bool {
        !matches!(
            self.state,
            TcpState::Closed | TcpState::SynSent | TcpState::SynReceived
        )
    }

    /// Payload bytes per segment in use (after negotiation).
    pub fn mss(&self) -> u32 {
        self.mss
    }

    /// The options the handshake negotiated.
    pub fn negotiated(&self) -> Negotiated {
        Negotiated {
            mss: self.mss,
            sack: self.sack_ok,
            timestamps: self.ts_ok,
            window_scaling: self.wscale_ok,
            rcv_wscale: self.rcv.wscale,
            snd_wscale: self.snd_wscale,
            ecn: self.ecn_ok,
        }
    }

    pub fn local_port(&self) -> u16 {
        self.local_port
    }

    pub fn remote_port(&self) -> u16 {
        self.remote_port
    }

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// The current receive buffer size (grows when autotuned).
    pub fn rcv_buf(&self) -> u64 {
        self.rcv.buf
    }

    /// Sets the receive buffer as `SO_RCVBUF` does (fixed from now on, autotuning off); the
    /// window already advertised is never shrunk, a larger buffer may send a window update.
    pub fn set_rcv_buf(&mut self, bytes: u64) {
        self.rcv.set_buf(bytes);
    }

    /// Caps the receive buffer (autotuning stays on below the cap; the window already
    /// advertised is never shrunk, a larger cap may send a window update).
    pub fn set_rcv_buf_cap(&mut self, cap: u64) {
        self.rcv.set_cap(cap);
    }

    /// Would [`TcpEndpoint::set_rcv_buf_cap`]`(cap)` change nothing (the cap is already in
    /// force and no window update would be queued by it)?
    pub fn rcv_buf_cap_settled(&self, cap: u64) -> bool {
        self.rcv.cap_settled(cap)
    }

    /// Bytes in the receive buffer: unread in-order plus out-of-order.
    pub fn rcv_used(&self) -> u64 {
        self.rcv.used()
    }

    /// Out-of-order bytes in the receive buffer.
    pub fn rcv_ooo(&self) -> u64 {
        self.rcv.ooo_bytes()
    }

    /// The window last advertised (right edge minus RCV.NXT), bytes.
    pub fn rcv_wnd(&self) -> u64 {
        self.rcv.window()
    }

    /// The most bytes the receive buffer can come to hold without a new advertisement (the
    /// unread bytes plus the window offered).
    pub fn rcv_committed(&self) -> u64 {
        self.rcv.committed()
    }

    /// The granularity of the advertised window: 2^(our window-scale shift), the shift we
    /// offer before the handshake has settled it (an upper bound).
    pub fn rcv_wnd_granularity(&self) -> u64 {
        let offered = if self.cfg.window_scaling { self.cfg.wscale_shift() } else { 0 };
        1 << self.rcv.wscale.max(offered)
    }

    /// The current send buffer size (grows when autotuned).
    pub fn snd_buf(&self) -> u64 {
        self.snd_buf
    }

    /// The peer's advertised window (scaled), bytes.
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd
    }

    pub fn ca_state(&self) -> CaState {
        self.ca_state
    }

    pub fn controller(&self) -> &AnyCc {
        &self.cc
    }

    /// The congestion controller, mutably: the hook through which an MPTCP connection sets a
    /// coupled subflow controller's increase and decrease ([`crate::cc::coupled::Coupling`]).
    pub fn controller_mut(&mut self) -> &mut AnyCc {
        &mut self.cc
    }

    /// Sends an ACK at the next [`TcpEndpoint::poll_transmit`] (once the peer's SYN has been
    /// seen): the hook through which MPTCP sends a DATA_ACK or DATA_FIN on a pure ACK, as
    /// Linux's `mptcp_send_ack` does.
    pub fn send_ack_now(&mut self) {
        self.rcv.ack_now = true;
    }

    /// Builds a pure ACK now, to leave at the next [`TcpEndpoint::poll_transmit`] ahead of any
    /// data: the hook through which MPTCP sends an option that needs a segment of its own (an
    /// ADD_ADDR or its echo, as Linux's `mptcp_pm_nl_addr_send_ack` sends a pure ACK for it even
    /// while the subflow has data to send). False if the peer's SYN has not been seen or another
    /// such ACK is still waiting.
    pub fn queue_pure_ack(&mut self, now: SimTime) -> bool {
        if !self.peer_syn_seen || self.ack_before.is_some() || self.state == TcpState::Closed {
            return false;
        }
        self.stats.pure_acks_sent += 1;
        let a = self.build(now, self.snd_nxt, 0, false);
        self.ack_before = Some(a);
        true
    }

    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    /// Moves the recorded RTT samples into `out` (only recorded with
    /// [`TcpConfig::record_rtt_samples`]).
    pub fn drain_rtt_samples(&mut self, out: &mut Vec<SimDuration>) {
        out.append(&mut self.rtt_samples);
    }

    pub fn sample(&self, _now: SimTime) -> TcpSample {
        let m = self.cc.metrics();
        TcpSample {
            cwnd_bytes: self.cwnd(),
            ssthresh_bytes: m.ssthresh_bytes,
            srtt: self.rtt.srtt().unwrap_or(SimDuration::ZERO),
            rttvar: self.rtt.rttvar(),
            rto: self.rtt.rto(),
            bytes_in_flight: self.sb.in_flight(),
            pacing_rate: self.pacing_rate(),
            delivered_bytes: self.delivered,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            rcv_wnd: self.rcv.window(),
            cc_state: m.state,
            ca_state: self.ca_state,
        }
    }

    // ================================================================== helpers

    /// The window used for sending: PRR's in fast recovery (`recovery = "linux"`), else the
    /// controller's cwnd plus RFC 6582 inflation.
    fn cwnd(&self) -> u64 {
        if self.ca_state == CaState::Recovery {
            if let Some(c) = self.prr_cwnd {
                return c;
            }
        }
        self.cc.window() + self.inflation
    }

    /// Linux's loss recovery is in use: `recovery = "linux"` and SACK negotiated.
    fn linux_recovery(&self) -> bool {
        self.sack_ok && self.cfg.recovery == Recovery::Linux
    }

    /// RFC 7323 §4 TSval: a 1 ms clock, offset by one so that TSval is never zero.
    fn ts_now(now: SimTime) -> u32 {
        (now.as_nanos() / 1_000_000) as u32 + 1
    }

    /// The send quantum a burst may take now, in segments ([`crate::pacing`]): the TSO autosize
    /// at `rate` (`tcp_tso_segs`) within `tcp_cwnd_test`'s max(cwnd / 2, 1).
    pub fn send_quantum_segs(&self, rate: f64) -> u32 {
        let min_rtt = self.rtt.srtt().map(|_| self.rtt.min_rtt());
        let segs = crate::pacing::tso_segs(rate, self.mss as u64, self.cc.min_tso_segs(), min_rtt);
        let half_cwnd = (self.cwnd() / (self.mss as u64).max(1) / 2).max(1);
        segs.min(half_cwnd.min(u32::MAX as u64) as u32)
    }

    /// Linux's `sk_pacing_rate` in bytes per second, which sizes its skbs whether or not the
    /// sender paces (`tcp_update_pacing_rate`): the controller's rate, else 200 % (slow start,
    /// cwnd below ssthresh / 2) or 120 % of max(cwnd, packets out) / srtt; before the first RTT
    /// sample none (0: the `tcp_min_tso_segs` floor).
    pub fn linux_pacing_rate(&self) -> f64 {
        if let Some(r) = self.cc.pacing_rate() {
            return r;
        }
        let Some(srtt) = self.rtt.srtt() else { return 0.0 };
        let cwnd = self.cc.window();
        let ratio = if cwnd < self.cc.ssthresh() / 2 { 2.0 } else { 1.2 };
        ratio * cwnd.max(self.sb.outstanding()) as f64 / srtt.as_secs_f64().max(1e-6)
    }

    /// Pacing rate in bytes per second: the controller's, else Linux's 200% / 120% of
    /// cwnd / srtt in slow start / congestion avoidance when `pacing` is on.
    pub fn pacing_rate(&self) -> Option<f64> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r);
        }
        if !self.cfg.pacing {
            return None;
        }
        let srtt = self.rtt.srtt()?.as_secs_f64().max(1e-6);
        let cwnd = self.cc.window();
        let ratio = if cwnd < self.cc.ssthresh() { 2.0 } else { 1.2 };
        Some(ratio * cwnd as f64 / srtt)
    }

    fn record_rtt(&mut self, r: SimDuration) {
        self.rtt.on_sample(r, self.snd_una, self.snd_nxt);
        let s = &mut self.stats;
        if s.rtt_samples_count == 0 {
            s.rtt_min = r;
            s.rtt_max = r;
        } else {
            s.rtt_min = s.rtt_min.min(r);
            s.rtt_max = s.rtt_max.max(r);
        }
        s.rtt_samples_count += 1;
        s.rtt_sum += r;
        if self.cfg.record_rtt_samples {
            self.rtt_samples.push(r);
        }
    }

}
