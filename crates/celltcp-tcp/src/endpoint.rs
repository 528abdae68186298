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
//! - Segmentation ("Nagle-free bulk"): full segments are sent as soon as cwnd, the peer window
//!   and pacing allow; a partial segment only when nothing is outstanding or the application
//!   has closed (an approximation of Linux with Nagle off plus autocorking).
//! - Loss recovery: with SACK, RFC 6675 (IsLost with DupThresh, pipe, NextSeg rules 1-4,
//!   RecoveryPoint, exit on its cumulative ACK); without SACK, NewReno (RFC 6582: `recover`,
//!   fast retransmit on the third duplicate ACK, sender-side cwnd inflation by one SMSS per
//!   duplicate ACK, partial ACKs retransmit the next hole and deflate, a full ACK exits).
//! - Lost retransmissions (which RFC 6675 cannot see) are detected in time order as RACK does
//!   (RFC 8985 §6.2, reordering window min_rtt / 4; Linux `tcp_mark_lost_retrans` before RACK)
//!   and sent again within the same recovery episode, instead of waiting for the RTO.
//! - Spurious fast retransmits and RTOs are detected with timestamps (Eifel, RFC 3522 §2: the
//!   ACK covering the first retransmission echoes an older TSval) and undone (RFC 4015:
//!   [`Controller::on_spurious`], the episode ends, after an RTO no go-back-N). Without
//!   timestamps nothing is detected (no DSACK / F-RTO).
//! - RTO as Linux computes it (RTO >= SRTT + `min_rto`) or by RFC 6298, see [`crate::rtt`]; the timer also restarts whenever the oldest outstanding
//!   segment is resent (Linux `tcp_xmit_retransmit_queue`); on expiry everything un-SACKed is marked lost and
//!   resent in order from SND.UNA (Linux `tcp_enter_loss`, RFC 6675 §5.1 keeps SACKed data),
//!   the timer backs off, and `recover` is set so later duplicate ACKs do not start a second
//!   reduction (RFC 6582 §3.2 step 1).
//! - RTT samples: from the send time of the oldest newly acknowledged, never retransmitted
//!   segment (as Linux does, exact to the nanosecond); when all newly acknowledged data was
//!   retransmitted, from the timestamp echo if timestamps are on (RFC 7323 §4, 1 ms clock),
//!   otherwise none (Karn's algorithm, RFC 6298 §3).
//! - Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation-02 §3) and app-limited
//!   marking (§3.4) for every ACK that delivers data.
//! - Pacing (Linux `tcp_update_pacing_rate` ratios, or the controller's own rate).
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

use crate::cc::{Ack, AnyCc, CcKind, CongestionEvent, Controller, EcnFeedback};
use crate::config::{Recovery, TcpConfig};
use crate::prr::Prr;
use crate::rack::Rack;
use crate::receiver::Receiver;
use crate::rtt::RttEstimator;
use crate::scoreboard::Scoreboard;

use rate::RsBuild;

mod output;
mod rate;
#[cfg(test)]
mod tests;
use crate::seq;

/// MSS assumed when the peer's SYN carries no MSS option (RFC 9293 §3.7.1: 536).
pub const DEFAULT_PEER_MSS: u32 = 536;
/// Bytes of timestamp option (with its NOP padding) in every segment once negotiated
/// (RFC 7323 §3: 10 bytes, padded to 12).
pub const TS_OPTION_BYTES: u32 = 12;

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
    /// Eifel detection (RFC 3522 §2): the TSval of our first retransmission in the current
    /// recovery or loss episode, and SND.UNA when it began.
    undo_tsval: Option<u32>,
    undo_marker: u64,
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
    pacing_next: SimTime,
    pacing_blocked: bool,
    // --- timers
    rto_deadline: Option<SimTime>,
    persist_deadline: Option<SimTime>,
    persist_backoff: u32,
    probe_pending: bool,
    rwnd_blocked: bool,
    time_wait_deadline: Option<SimTime>,
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
            undo_tsval: None,
            undo_marker: 0,
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
        let n = bytes.min(self.send_buffer_free());
        self.written += n;
        n
    }

    /// Free space in the send buffer (written and not yet acknowledged bytes count as used).
    pub fn send_buffer_free(&self) -> u64 {
        let unacked = (1 + self.written).saturating_sub(self.snd_una.max(1));
        self.snd_buf.saturating_sub(unacked)
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

    // ================================================================== timers

    /// The earliest time [`on_timeout`](Self::on_timeout) has something to do.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let pace = if self.pacing_blocked {
            Some(self.pacing_next)
        } else {
            None
        };
        [
            self.rto_deadline,
            self.rack_deadline,
            self.tlp_deadline,
            self.rcv.delack_deadline,
            self.persist_deadline,
            self.time_wait_deadline,
            pace,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Handles every timer due at `now`; harmless when none is.
    pub fn on_timeout(&mut self, now: SimTime) {
        if self.rcv.delack_deadline.is_some_and(|t| t <= now) {
            // RFC 5681 §4.2: the delayed-ACK timer expired.
            self.rcv.delack_deadline = None;
            self.rcv.ack_now = true;
        }
        if self.tlp_deadline.is_some_and(|t| t <= now) {
            self.on_tlp_timeout(now);
        }
        if self.rack_deadline.is_some_and(|t| t <= now) {
            self.on_rack_timeout(now);
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.rto_deadline = None;
            self.on_rto(now);
        }
        if self.persist_deadline.is_some_and(|t| t <= now) {
            // RFC 9293 §3.8.6.1: probe the zero window, backing off like the RTO.
            self.probe_pending = true;
            self.persist_backoff = (self.persist_backoff + 1).min(16);
            self.persist_deadline = Some(now + self.persist_interval());
        }
        if self.time_wait_deadline.is_some_and(|t| t <= now) {
            self.enter_closed();
        }
        if self.pacing_blocked && self.pacing_next <= now {
            self.pacing_blocked = false;
        }
    }

    fn persist_interval(&self) -> SimDuration {
        let base = self.rtt.base_rto().0;
        SimDuration(base.saturating_mul(1 << self.persist_backoff)).min(self.cfg.max_rto)
    }

    fn on_rto(&mut self, now: SimTime) {
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => {
                if self.syn_tx_count > self.cfg.syn_retries {
                    self.reset = true;
                    self.enter_closed();
                    return;
                }
                self.rtt.backoff();
                self.syn_pending = true;
                self.stats.syn_retransmits += 1;
            }
            TcpState::Closed | TcpState::TimeWait => {}
            _ => {
                if self.sb.is_empty() {
                    return;
                }
                self.retries += 1;
                if self.retries > self.cfg.max_retries {
                    self.reset = true;
                    self.enter_closed();
                    return;
                }
                self.stats.timeouts += 1;
                self.prr = None;
                self.prr_cwnd = None;
                self.rack_deadline = None;
                self.tlp_deadline = None;
                self.tlp_pending = false;
                self.tlp_high_seq = None;
                // RFC 5681 §3.1 eq. 4, FlightSize taken as the pipe before everything is marked
                // lost (close to cwnd, as Linux's tcp_enter_loss uses). On a repeated RTO the
                // controller holds ssthresh.
                self.cc.on_rto(now, self.sb.in_flight(), self.mss);
                // RFC 5682 §3.1 step 1 / §3.2, Linux `tcp_enter_loss`: F-RTO unless a loss
                // recovery was already under way, except for repeated timeouts of the same
                // SND.UNA.
                let new_recovery = self.ca_state == CaState::Open;
                if new_recovery {
                    self.dsack_undo = Some((self.snd_una, -1));
                }
                self.frto = self.cfg.frto && (new_recovery || self.retries > 1);
                self.frto_new_only = false;
                self.ca_state = CaState::Loss;
                self.recovery_point = self.snd_nxt;
                self.recover = self.snd_nxt;
                self.inflation = 0;
                self.dupacks = 0;
                self.force_rtx = false;
                if self.ts_ok && self.undo_tsval.is_none() {
                    self.undo_tsval = Some(Self::ts_now(now));
                    self.undo_marker = self.snd_una;
                }
                self.sb.mark_all_lost();
                self.rtt.backoff(); // RFC 6298 §5.5
                self.pacing_next = now;
                self.pacing_blocked = false;
            }
        }
    }

    fn enter_closed(&mut self) {
        self.state = TcpState::Closed;
        self.rto_deadline = None;
        self.rack_deadline = None;
        self.tlp_deadline = None;
        self.persist_deadline = None;
        self.time_wait_deadline = None;
        self.rcv.delack_deadline = None;
        self.rcv.ack_now = false;
        self.syn_pending = false;
        self.probe_pending = false;
        self.pacing_blocked = false;
    }

    fn enter_time_wait(&mut self, now: SimTime) {
        self.state = TcpState::TimeWait;
        self.rto_deadline = None;
        self.rack_deadline = None;
        self.tlp_deadline = None;
        self.persist_deadline = None;
        if self.cfg.time_wait == SimDuration::ZERO {
            // the final ACK still goes out on the next poll
            self.time_wait_deadline = Some(now);
        } else {
            self.time_wait_deadline = Some(now + self.cfg.time_wait);
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

    fn on_peer_syn(&mut self, syn: &TcpSegment, now: SimTime) {
        let o = &syn.options;
        // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR, an ECN-setup SYN-ACK ECE only.
        let f = syn.flags;
        let peer_ecn = if f.ack() { f.ece() && !f.cwr() } else { f.ece() && f.cwr() };
        self.ecn_ok = self.cfg.ecn_enabled() && peer_ecn;
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        // RFC 7323 §2.2: scaling is on only if both SYNs carry the option; shift <= 14 (§2.3).
        self.wscale_ok = self.cfg.window_scaling && o.wscale.is_some();
        if self.wscale_ok {
            self.snd_wscale = o.wscale.unwrap_or(0).min(14);
            self.rcv.wscale = self.cfg.wscale_shift();
        } else {
            self.snd_wscale = 0;
            self.rcv.wscale = 0;
        }
        let peer_mss = o.mss.map_or(DEFAULT_PEER_MSS, u32::from);
        let overhead = if self.ts_ok { TS_OPTION_BYTES } else { 0 };
        self.mss = self.cfg.mss.min(peer_mss.saturating_sub(overhead)).max(1);
        self.rcv.on_syn(syn.seq, now);
        self.rcv.set_mss(self.mss as u64);
        self.rcv.dsack_enabled = self.sack_ok && self.cfg.dsack;
        if let Some((tsval, _)) = o.timestamps {
            self.rcv.ts_recent = tsval;
        }
        // RFC 7323 §2.2: the window in a SYN is never scaled.
        self.snd_wnd = syn.window as u64;
        self.max_snd_wnd = self.snd_wnd;
        self.peer_syn_seen = true;
        // The controller was built with the configured MSS; rebuild it for the negotiated one.
        if self.mss != self.cfg.mss {
            self.cc = AnyCc::new(
                self.cfg.cc,
                self.mss,
                self.cfg.initial_cwnd_pkts,
                now,
                self.cfg.cc_seed,
            );
        }
    }

    // ================================================================== input

    /// A segment arrived from the peer; `ce` is true when its IP header carried CE (RFC 3168).
    pub fn on_segment(&mut self, now: SimTime, seg: &TcpSegment, ce: bool) {
        self.stats.segments_received += 1;
        if ce {
            self.stats.ce_received += 1;
        }
        let f = seg.flags;
        match self.state {
            TcpState::Closed => {
                // RFC 9293 §3.10.7.1: a segment without RST reaching CLOSED is answered with
                // a RST (e.g. a FIN retransmitted after our TIME-WAIT ended).
                if !f.rst() && self.peer_syn_seen {
                    self.rst_pending = Some(if f.ack() {
                        (seg.ack, None)
                    } else {
                        (0, Some(seg.seq.wrapping_add(seg.seq_len())))
                    });
                }
                return;
            }
            TcpState::SynSent => {
                if f.rst() {
                    if f.ack() && seq::wrap(self.iss, 1) == seg.ack {
                        self.reset = true;
                        self.enter_closed();
                    }
                    return;
                }
                // RFC 9293 §3.10.7.3: a SYN-ACK acknowledging our SYN.
                if !(f.syn() && f.ack() && seg.ack == seq::wrap(self.iss, 1)) {
                    return;
                }
                self.on_peer_syn(seg, now);
                self.snd_una = 1;
                self.handshake_rtt(now, seg);
                self.rto_deadline = None;
                self.state = TcpState::Established;
                self.expand_sndbuf();
                self.snd_wl1 = 0;
                self.snd_wl2 = 1;
                self.rcv.ack_now = true;
                return;
            }
            TcpState::SynReceived => {
                if f.rst() {
                    self.reset = true;
                    self.enter_closed();
                    return;
                }
                if f.syn() {
                    if !f.ack() && seg.seq == self.rcv.irs {
                        // our SYN-ACK was lost: send it again
                        self.syn_pending = true;
                    }
                    return;
                }
                if !f.ack() || seg.ack != seq::wrap(self.iss, 1) {
                    return;
                }
                self.snd_una = 1;
                self.handshake_rtt(now, seg);
                self.rto_deadline = None;
                self.expand_sndbuf();
                self.state = if self.fin_queued {
                    TcpState::FinWait1
                } else {
                    TcpState::Established
                };
                self.snd_wl1 = 0;
                self.snd_wl2 = 1;
                // fall through: the ACK may carry data and a window
            }
            _ => {}
        }
        if f.syn() {
            // a retransmitted SYN-ACK: our ACK of it was lost (RFC 9293 §3.10.7.4)
            self.rcv.ack_now = true;
            return;
        }
        let seg_abs = seq::unwrap(self.rcv.irs, seg.seq, self.rcv.rcv_nxt);
        let seg_len = seg.payload_len as u64 + f.fin() as u64;
        let acceptable = self.rcv.acceptable(seg_abs, seg_len);
        if f.rst() {
            // RFC 9293 §3.10.7.4 (RFC 5961 §3 tightens this to an exact match; in-window is
            // enough here). In CLOSING, LAST-ACK and TIME-WAIT the connection simply closes;
            // elsewhere the user is told of a reset.
            if acceptable {
                if !matches!(
                    self.state,
                    TcpState::Closing | TcpState::LastAck | TcpState::TimeWait
                ) {
                    self.reset = true;
                }
                self.enter_closed();
            }
            return;
        }
        if self.state == TcpState::TimeWait {
            // a retransmitted FIN: ACK it and restart the 2 MSL timer (RFC 9293 §3.10.7.4)
            if f.fin() {
                self.rcv.ack_now = true;
                self.time_wait_deadline = Some(now + self.cfg.time_wait);
            }
            return;
        }
        if self.ecn_ok {
            self.ecn_receive(now, seg, ce);
        }
        // RFC 7323 §4.3: TS.Recent from segments that cover Last.ACK.sent.
        if self.ts_ok {
            if let Some((tsval, tsecr)) = seg.options.timestamps {
                if seg_abs <= self.rcv.last_ack_sent
                    && (tsval.wrapping_sub(self.rcv.ts_recent) as i32) >= 0
                {
                    self.rcv.ts_recent = tsval;
                }
                if seg.payload_len > 0 && tsecr != 0 {
                    let ms = Self::ts_now(now).wrapping_sub(tsecr) as u64;
                    self.rcv.rtt_measure_ts(SimDuration::from_millis(ms.max(1)));
                }
            }
        }
        if f.ack() {
            self.process_ack(now, seg, seg_abs);
            if self.state == TcpState::Closed {
                return;
            }
        }
        if seg_len == 0 {
            if !acceptable {
                // RFC 9293 §3.10.7.4: answer an unacceptable segment (e.g. a window probe) with an ACK.
                self.rcv.ack_now = true;
            }
            return;
        }
        let receiving = matches!(
            self.state,
            TcpState::Established | TcpState::FinWait1 | TcpState::FinWait2
        );
        if !acceptable || !receiving {
            self.stats.duplicate_segments_received += 1;
            self.rcv.ack_now = true;
            if seg_abs < self.rcv.rcv_nxt {
                // RFC 2883 §4 / Linux `tcp_send_dupack`: report the old data with DSACK.
                let end = (seg_abs + seg.payload_len as u64).min(self.rcv.rcv_nxt);
                self.rcv.set_dsack(seg_abs, end);
            }
            return;
        }
        let out = self
            .rcv
            .on_data(now, seg_abs, seg.payload_len as u64, f.fin());
        if out.out_of_order {
            self.stats.ooo_segments_received += 1;
        }
        if out.duplicate {
            self.stats.duplicate_segments_received += 1;
        }
        if out.fin {
            match self.state {
                TcpState::Established => self.state = TcpState::CloseWait,
                TcpState::FinWait1 => self.state = TcpState::Closing,
                TcpState::FinWait2 => self.enter_time_wait(now),
                _ => {}
            }
        }
    }

    /// The receiver's ECN echo state (RFC 3168 §6.1.3; with DCTCP RFC 8257 §3.2).
    fn ecn_receive(&mut self, now: SimTime, seg: &TcpSegment, ce: bool) {
        if self.cfg.cc.kind().needs_ecn() {
            if seg.payload_len == 0 || ce == self.ece_out {
                return;
            }
            // The CE state changed: the data held for a delayed ACK is acknowledged now with
            // the old state, then this segment is acknowledged at once with the new one.
            if self.rcv.delack_deadline.is_some() && self.peer_syn_seen {
                self.stats.pure_acks_sent += 1;
                let a = self.build(now, self.snd_nxt, 0, false);
                self.ack_before = Some(a);
                self.rcv.delack_deadline = None;
            }
            self.ece_out = ce;
            self.rcv.ack_now = true;
        } else {
            if seg.flags.cwr() {
                self.ece_out = false;
            }
            if ce {
                self.ece_out = true;
            }
        }
    }

    fn handshake_rtt(&mut self, now: SimTime, seg: &TcpSegment) {
        if self.syn_tx_count == 1 {
            self.record_rtt(now.saturating_since(self.syn_sent_time));
        } else if let (true, Some((_, ecr))) = (self.ts_ok, seg.options.timestamps) {
            if ecr != 0 {
                let ms = Self::ts_now(now).wrapping_sub(ecr) as u64;
                self.record_rtt(SimDuration::from_millis(ms.max(1)));
            }
        }
    }

    fn process_ack(&mut self, now: SimTime, seg: &TcpSegment, seg_abs: u64) {
        let ack = seq::unwrap(self.iss, seg.ack, self.snd_una);
        if ack > self.snd_nxt {
            // RFC 9293 §3.10.7.4: an ACK for something not yet sent: ACK and drop.
            self.rcv.ack_now = true;
            return;
        }
        if ack < self.snd_una {
            return; // old
        }
        let mss = self.mss as u64;
        let prior_in_flight = self.sb.in_flight();
        let prior_outstanding = self.sb.outstanding();
        // --- send window (RFC 9293 §3.10.7.4, SND.WL1/SND.WL2)
        let wnd = (seg.window as u64) << self.snd_wscale;
        let mut window_changed = false;
        if self.snd_wl1 < seg_abs || (self.snd_wl1 == seg_abs && self.snd_wl2 <= ack) {
            window_changed = wnd != self.snd_wnd;
            self.snd_wnd = wnd;
            self.max_snd_wnd = self.max_snd_wnd.max(wnd);
            self.snd_wl1 = seg_abs;
            self.snd_wl2 = ack;
            if wnd > 0 && window_changed {
                self.persist_deadline = None;
                self.persist_backoff = 0;
            }
        }
        // --- SACK scoreboard and delivery-rate bookkeeping
        let mut rs = RsBuild::default();
        let mut newly_sacked = 0u64;
        let mut sack_rtt_from: Option<SimTime> = None;
        let mut delivered = self.delivered;
        // RFC 8985 §6.2 RACK.xmit_ts: the latest send time among segments this ACK delivered
        // (a retransmitted segment counts only if its RTT is plausible).
        let min_rtt = self.rtt.min_rtt();
        let mut rack_time = SimTime::ZERO;
        // Linux FLAG_ORIG_SACK_ACKED: this ACK newly delivered a segment sent before the RTO
        // (at or below high_seq) and never retransmitted (F-RTO, RFC 5682 §3.1 step 3.b).
        let high_seq = self.recovery_point;
        let mut orig_acked = false;
        // RACK (Linux recovery): RACK.xmit_ts advances on every delivery; reordering is seen
        // when a never-retransmitted segment below the highest SACK arrives (Linux
        // `tcp_check_sack_reordering`).
        let linux = self.linux_recovery();
        let prior_hs = self.sb.highest_sacked();
        let mut reordered = false;
        let rack = &mut self.rack;
        // Linux `tcp_skb_spurious_retrans` (cumulative ACKs, `tcp_clean_rtx_queue`): an ACK
        // echoing a TSval older than a segment's retransmission was caused by the original;
        // it does not advance RACK.
        let ecr = match (self.ts_ok, seg.options.timestamps) {
            (true, Some((_, e))) if e != 0 => Some(e),
            _ => None,
        };
        let spurious_rtx = move |s: &crate::scoreboard::SentSeg| {
            s.retransmitted
                && ecr.is_some_and(|e| (e.wrapping_sub(Self::ts_now(s.sent_time)) as i32) < 0)
        };
        let mut dsack = None;
        if self.sack_ok {
            let blocks = seg.options.sack_blocks();
            // RFC 2883 §4 (Linux `tcp_check_dsack`): a first block below the cumulative ACK, or
            // inside the second block, reports a duplicate.
            if let Some(b0) = blocks.first() {
                let l0 = seq::unwrap(self.iss, b0.left, self.snd_una);
                let r0 = seq::unwrap(self.iss, b0.right, self.snd_una);
                let inside = blocks.get(1).is_some_and(|b1| {
                    let l1 = seq::unwrap(self.iss, b1.left, self.snd_una);
                    let r1 = seq::unwrap(self.iss, b1.right, self.snd_una);
                    l1 <= l0 && r0 <= r1
                });
                if r0 > l0 && (l0 < ack || inside) {
                    dsack = Some((l0, r0));
                }
            }
            for (k, b) in blocks.iter().enumerate() {
                if k == 0 && dsack.is_some() {
                    continue;
                }
                let l = seq::unwrap(self.iss, b.left, self.snd_una);
                let r = seq::unwrap(self.iss, b.right, self.snd_una);
                if r <= l || r <= ack || r > self.snd_nxt {
                    continue; // stale or bogus
                }
                self.sb.sack(l.max(ack), r, |s| {
                    if !s.retransmitted || now.saturating_since(s.sent_time) >= min_rtt {
                        rack_time = rack_time.max(s.sent_time);
                    }
                    if linux {
                        // (`tcp_sacktag_one`: the min_rtt check only)
                        rack.advance(now, s.sent_time, s.end, s.retransmitted, min_rtt);
                    }
                    if linux {
                        reordered |= !s.retransmitted && s.end <= prior_hs;
                    }
                    newly_sacked += s.payload();
                    orig_acked |= !s.retransmitted && s.end <= high_seq;
                    delivered += s.payload();
                    rs.update(s, delivered, now);
                    if !s.retransmitted {
                        sack_rtt_from = Some(
                            sack_rtt_from.map_or(s.sent_time, |t: SimTime| t.min(s.sent_time)),
                        );
                    }
                });
            }
            self.sb.end_sack_round();
        }
        // --- cumulative ACK
        let newly_acked_seq = ack - self.snd_una;
        let mut newly_acked = 0u64; // payload bytes newly delivered by the cumulative ACK
        let mut cum_payload = 0u64;
        let mut oldest_clean: Option<SimTime> = None;
        let mut any_retrans = false;
        if newly_acked_seq > 0 {
            self.sb.cum_ack(ack, |s, newly| {
                cum_payload += s.payload();
                if s.retransmitted {
                    any_retrans = true;
                } else if oldest_clean.is_none() {
                    oldest_clean = Some(s.sent_time);
                }
                if newly {
                    if !s.retransmitted || now.saturating_since(s.sent_time) >= min_rtt {
                        rack_time = rack_time.max(s.sent_time);
                    }
                    if linux && !spurious_rtx(s) {
                        rack.advance(now, s.sent_time, s.end, s.retransmitted, min_rtt);
                    }
                    if linux {
                        reordered |= !s.retransmitted && s.end <= prior_hs;
                    }
                    newly_acked += s.payload();
                    orig_acked |= !s.retransmitted && s.end <= high_seq;
                    delivered += s.payload();
                    rs.update(s, delivered, now);
                }
            });
            self.snd_una = ack;
            self.retries = 0;
            self.stats.bytes_acked += cum_payload;
        }
        self.delivered = delivered;
        if reordered {
            self.rack.reord_seen += 1;
        }
        let tlp_dsack = dsack.is_some_and(|d| self.on_dsack(d));
        if linux && rs.set {
            self.rack.update_reo_wnd(rs.prior_delivered, self.delivered);
        }
        if rs.set {
            self.delivered_time = now;
            self.first_sent_time = rs.sent_time;
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        // --- RTT (see module doc: Linux order, RFC 7323 §4, Karn)
        let mut rtt_sample = None;
        if newly_acked_seq > 0 {
            if let (Some(t), false) = (oldest_clean, any_retrans) {
                rtt_sample = Some(now.saturating_since(t));
            } else if let (true, Some((_, ecr))) = (self.ts_ok, seg.options.timestamps) {
                if ecr != 0 {
                    let ms = Self::ts_now(now).wrapping_sub(ecr) as u64;
                    rtt_sample = Some(SimDuration::from_millis(ms.max(1)));
                }
            }
        }
        if rtt_sample.is_none() {
            rtt_sample = sack_rtt_from.map(|t| now.saturating_since(t));
        }
        if let Some(r) = rtt_sample {
            self.record_rtt(r.max(SimDuration::from_nanos(1)));
        }
        // --- Eifel detection (RFC 3522 §2): the first ACK covering the first retransmission
        // echoes a TSval older than that retransmission -> the original arrived; undo.
        if let Some(tv) = self.undo_tsval {
            if self.ca_state != CaState::Open && self.snd_una > self.undo_marker {
                self.undo_tsval = None;
                if let Some((_, ecr)) = seg.options.timestamps {
                    if ecr != 0 && (ecr.wrapping_sub(tv) as i32) < 0 {
                        self.undo_spurious(now);
                    }
                }
            }
        }
        // --- DSACK undo (RFC 3708, Linux `tcp_try_undo_dsack` / `tcp_may_undo`): every
        // retransmission of the episode was reported needless.
        if linux && self.ca_state != CaState::Open && self.dsack_undo.is_some_and(|(_, n)| n == 0) {
            self.dsack_undo = None;
            self.stats.dsack_undos += 1;
            self.undo_spurious(now);
        }
        // --- TLP outcome (RFC 8985 §7.4, Linux `tcp_process_tlp_ack`)
        if let Some(h) = self.tlp_high_seq {
            if ack >= h {
                if !self.tlp_retrans || tlp_dsack {
                    // New data probed, or the DSACK says original and probe both arrived.
                    self.tlp_high_seq = None;
                } else if ack > h {
                    // The probe repaired a loss: reduce cwnd once (Linux CWR).
                    self.tlp_high_seq = None;
                    self.stats.tlp_recoveries += 1;
                    if self.cc.kind() != CcKind::Bbr {
                        let ev = CongestionEvent {
                            bytes_in_flight: prior_in_flight,
                            lost_sent_at: now,
                            ecn: false,
                            mss: self.mss,
                        };
                        self.cc.on_congestion_event(now, &ev);
                        self.cc.on_recovery_exit(now);
                    }
                } else if newly_acked_seq == 0 && newly_sacked == 0 && seg.payload_len == 0 {
                    // A pure duplicate ACK: original and probe both arrived.
                    self.tlp_high_seq = None;
                }
            }
        }
        // --- duplicate ACKs (RFC 5681 §2; RFC 6675 §2 with SACK)
        let is_dup = if self.sack_ok {
            newly_acked_seq == 0 && newly_sacked > 0
        } else {
            newly_acked_seq == 0
                && seg.payload_len == 0
                && !seg.flags.fin()
                && !window_changed
                && prior_outstanding > 0
        };
        if is_dup {
            self.dupacks += 1;
            self.stats.dup_acks_received += 1;
        } else if newly_acked_seq > 0 {
            self.dupacks = 0;
        }
        // --- F-RTO (RFC 5682 §3.1, SACK-enhanced as Linux's `tcp_process_loss`)
        self.frto_new_only = false;
        if self.ca_state == CaState::Loss && self.frto {
            let dup = newly_sacked > 0 || is_dup;
            self.frto_process(now, newly_acked_seq > 0, orig_acked, dup);
        }
        // --- loss detection and recovery
        let mut newly_lost = 0;
        if linux {
            // RFC 8985 §6.2 (Linux `tcp_rack_mark_lost`); recovery starts as soon as anything
            // is lost (Linux `tcp_time_to_recover` with RACK: no DupThresh).
            if self.rack.advanced {
                newly_lost += self.rack_detect(now);
            }
            if self.ca_state == CaState::Open && self.sb.lost_bytes() > 0 {
                self.enter_recovery(now, prior_in_flight);
            }
        } else if self.sack_ok {
            if rack_time > SimTime::ZERO {
                // RFC 8985 §6.2: reordering window min_rtt / 4.
                newly_lost += self.sb.detect_lost_retransmits(rack_time, min_rtt / 4);
            }
            newly_lost += self.sb.detect_losses(self.cfg.dupthresh, mss);
            // RFC 6675 §5: DupAcks >= DupThresh, or IsLost(HighACK + 1), starts recovery.
            if self.ca_state == CaState::Open
                && !self.sb.is_empty()
                && (self.dupacks >= self.cfg.dupthresh || self.sb.front_lost())
            {
                newly_lost += self.sb.mark_front_lost();
                self.enter_recovery(now, prior_in_flight);
            }
        } else {
            match self.ca_state {
                CaState::Open => {
                    // RFC 6582 §3.2 step 2: only if the ACK covers more than `recover`.
                    if is_dup && self.dupacks == self.cfg.dupthresh && ack > self.recover {
                        newly_lost += self.sb.mark_front_lost();
                        self.enter_recovery(now, prior_in_flight);
                        // RFC 6582 §3.2 step 2: cwnd = ssthresh + 3 * SMSS.
                        self.inflation = self.cfg.dupthresh as u64 * mss;
                    }
                }
                CaState::Recovery => {
                    if is_dup {
                        // RFC 6582 §3.2 step 4: inflate by one SMSS per further duplicate ACK.
                        self.inflation += mss;
                    } else if newly_acked_seq > 0 && ack < self.recovery_point {
                        // RFC 6582 §3.2 step 5: partial ACK: retransmit the first unacknowledged
                        // segment, deflate by the amount acknowledged, add back one SMSS if at
                        // least one SMSS was acknowledged.
                        newly_lost += self.sb.mark_front_lost();
                        self.force_rtx = true;
                        self.inflation = self.inflation.saturating_sub(newly_acked_seq);
                        if newly_acked_seq >= mss {
                            self.inflation += mss;
                        }
                    }
                }
                CaState::Loss => {}
            }
        }
        // --- recovery exit on the cumulative ACK of RecoveryPoint (RFC 6675 §5, RFC 6582 §3.2 step 6)
        if self.ca_state != CaState::Open && self.snd_una >= self.recovery_point {
            if self.ca_state == CaState::Recovery {
                self.cc.on_recovery_exit(now);
                self.rack.on_recovery_exit();
            }
            self.ca_state = CaState::Open;
            self.inflation = 0;
            self.dupacks = 0;
            self.undo_tsval = None;
            self.prr = None;
            self.prr_cwnd = None;
            self.dsack_undo = None;
        }
        // --- the controller
        let acked_bytes = newly_acked + newly_sacked;
        if self.ecn_ok && acked_bytes > 0 {
            let fb = EcnFeedback {
                acked_bytes,
                ece: seg.flags.ece(),
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
            };
            self.cc.on_ecn_feedback(now, &fb);
        }
        if acked_bytes > 0 {
            let cwnd = self.cc.window();
            let slow_start = cwnd < self.cc.ssthresh();
            let cwnd_limited = self.cwnd_limited
                || (slow_start && 2 * prior_in_flight > cwnd)
                || prior_in_flight + mss > cwnd;
            let rate = rs.finish(self.delivered, self.rtt.min_rtt(), newly_lost);
            let a = Ack {
                acked_bytes,
                prior_in_flight,
                bytes_in_flight: self.sb.in_flight(),
                rtt: rtt_sample,
                srtt: self.rtt.srtt().unwrap_or(SimDuration::ZERO),
                min_rtt: self.rtt.min_rtt(),
                delivered: self.delivered,
                rate,
                in_recovery: self.ca_state == CaState::Recovery,
                app_limited: !cwnd_limited,
                mss: self.mss,
            };
            self.cc.on_ack(now, &a);
            // PRR (RFC 6937, Linux `tcp_cwnd_reduction`) after the controller, as
            // `tcp_cong_control` orders it.
            if self.ca_state == CaState::Recovery {
                if let Some(p) = self.prr.as_mut() {
                    let c = p.on_ack(
                        acked_bytes,
                        self.sb.in_flight(),
                        self.cc.ssthresh(),
                        newly_acked_seq > 0,
                        newly_lost > 0,
                        mss,
                    );
                    if c.is_some() {
                        self.prr_cwnd = c;
                    }
                }
            }
        }
        if self.ecn_ok && seg.flags.ece() {
            self.ecn_echo(now, prior_in_flight);
        }
        self.cwnd_limited = false;
        self.expand_sndbuf();
        // --- RTO timer (RFC 6298 §5.2, §5.3)
        if newly_acked_seq > 0 {
            self.rto_deadline = if self.sb.is_empty() {
                None
            } else {
                Some(now + self.rtt.rto())
            };
        }
        if self.sb.is_empty() {
            self.rack_deadline = None;
        }
        // RFC 8985 §7.2: (re)arm the probe timer on every ACK of data.
        if linux && (acked_bytes > 0 || self.sb.is_empty()) {
            self.arm_tlp(now);
        }
        // --- our FIN acknowledged
        if let Some(fe) = self.fin_end {
            if !self.fin_acked && self.snd_una >= fe {
                self.fin_acked = true;
                match self.state {
                    TcpState::FinWait1 => self.state = TcpState::FinWait2,
                    TcpState::Closing => self.enter_time_wait(now),
                    TcpState::LastAck => self.enter_closed(),
                    _ => {}
                }
            }
        }
    }

    /// Starts fast recovery. `flight` is the pipe before the triggering ACK: FlightSize of
    /// RFC 5681 eq. 4 less SACKed and lost data (counting SACKed data would ratchet ssthresh up
    /// when recoveries follow each other, since new data keeps flowing during recovery).
    /// Send-buffer autotuning (Linux `tcp_sndbuf_expand`): about twice cwnd, never shrinking,
    /// up to the maximum. Also run when the connection is established, as Linux
    /// `tcp_init_buffer_space` does, so the initial window fits.
    fn expand_sndbuf(&mut self) {
        if self.cfg.snd_buf.is_auto() {
            let want = (2 * self.cc.window()).min(self.cfg.snd_buf.max());
            self.snd_buf = self.snd_buf.max(want);
        }
    }

    /// The Eifel response (RFC 4015 §2, as Linux `tcp_try_undo_recovery` / `tcp_try_undo_loss`):
    /// the controller restores its state, the episode ends, and after a spurious RTO the data
    /// marked lost but not yet resent is considered in flight again (no go-back-N).
    fn undo_spurious(&mut self, now: SimTime) {
        self.stats.spurious += 1;
        self.cc.on_spurious(now);
        if self.ca_state == CaState::Recovery {
            self.rack.on_recovery_exit();
        }
        self.prr = None;
        self.prr_cwnd = None;
        self.dsack_undo = None;
        if self.ca_state == CaState::Loss {
            self.sb.undo_loss_marks();
        }
        self.ca_state = CaState::Open;
        self.inflation = 0;
        self.dupacks = 0;
        self.force_rtx = false;
    }

    /// F-RTO on an ACK in the Loss state (RFC 5682 §3.1 and Appendix A's SACK-enhanced
    /// variant, in the order of Linux `tcp_process_loss` after the Eifel check).
    fn frto_process(&mut self, now: SimTime, una_advanced: bool, orig_acked: bool, dup: bool) {
        if orig_acked {
            // Step 3.b: data sent before the timeout and never retransmitted arrived: the RTO
            // was spurious (`tcp_try_undo_loss(sk, true)`).
            self.frto = false;
            self.stats.spurious_rtos += 1;
            self.undo_spurious(now);
            return;
        }
        if self.snd_nxt > self.recovery_point {
            // New data went out after the first ACK (step 2.b); a duplicate ACK or SACK now
            // means the loss was real (step 3.a): conventional recovery from here.
            if dup {
                self.frto = false;
            }
        } else if una_advanced && self.snd_una < self.recovery_point {
            // Step 2.b: the first ACK advancing SND.UNA: send new data instead of the rest of
            // the window (Linux `REXMIT_NEW`), and wait for the next ACK.
            self.recovery_point = self.snd_nxt;
            let unsent = 1 + self.written > self.snd_nxt;
            let wnd_open = self.snd_una + self.snd_wnd > self.snd_nxt;
            if unsent && wnd_open {
                self.frto_new_only = true;
            } else {
                self.frto = false;
            }
        }
    }

    /// An ACK with ECE (RFC 3168 §6.1.2): reduce once per window of data, not during loss
    /// recovery or after a reduction for loss in the same window; CWR goes on the next new data.
    fn ecn_echo(&mut self, now: SimTime, flight: u64) {
        self.stats.ece_received += 1;
        if self.ca_state != CaState::Open || self.snd_una <= self.ecn_high.max(self.recover) {
            return;
        }
        self.ecn_high = self.snd_nxt;
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        if self.cc.kind() != CcKind::Bbr {
            let ev = CongestionEvent {
                bytes_in_flight: flight,
                lost_sent_at: now,
                ecn: true,
                mss: self.mss,
            };
            self.cc.on_congestion_event(now, &ev);
        }
    }

    fn enter_recovery(&mut self, now: SimTime, flight: u64) {
        let prior_cwnd = self.cc.window();
        if self.linux_recovery() {
            // Linux `tcp_init_cwnd_reduction` / `tcp_init_undo`; BBR keeps its own window.
            if self.cc.kind() != CcKind::Bbr {
                self.prr = Some(Prr::start(prior_cwnd));
            }
            self.prr_cwnd = None;
            self.dsack_undo = Some((self.snd_una, -1));
            self.tlp_high_seq = None;
            self.tlp_deadline = None;
            self.tlp_pending = false;
        }
        self.ca_state = CaState::Recovery;
        self.recovery_point = self.snd_nxt;
        self.recover = self.snd_nxt;
        self.rescue_done = false;
        self.force_rtx = true;
        if self.ts_ok {
            self.undo_tsval = Some(Self::ts_now(now));
            self.undo_marker = self.snd_una;
        }
        self.stats.fast_recoveries += 1;
        let lost_sent_at = self.sb.front().map_or(now, |s| s.sent_time);
        let ev = CongestionEvent {
            bytes_in_flight: flight,
            lost_sent_at,
            ecn: false,
            mss: self.mss,
        };
        self.cc.on_congestion_event(now, &ev);
    }

    /// RACK loss detection (RFC 8985 §6.2 step 5, Linux `tcp_rack_detect_loss`) with the current
    /// reordering window; arms the reordering timer (§6.3, plus Linux's `TCP_TIMEOUT_MIN`,
    /// 2 ms) for segments not yet late enough. Returns the bytes newly marked lost.
    fn rack_detect(&mut self, now: SimTime) -> u64 {
        self.rack.advanced = false;
        if self.rack.xmit_ts == SimTime::ZERO {
            return 0;
        }
        let reo = self.rack.reo_wnd(
            self.ca_state != CaState::Open,
            self.sb.sacked_segs(),
            self.cfg.dupthresh,
            self.rtt.min_rtt(),
            self.rtt.srtt().unwrap_or(SimDuration::ZERO),
        );
        let mut n = self.sb.detect_lost_retransmits(self.rack.xmit_ts, reo);
        let (lost, wait) = self.sb.rack_detect_originals(
            now,
            self.rack.xmit_ts,
            self.rack.end_seq,
            self.rack.rtt,
            reo,
        );
        n += lost;
        self.rack_deadline = wait.map(|w| now + w + SimDuration::from_millis(2));
        n
    }

    /// RACK's reordering timer expired (RFC 8985 §6.3, Linux `tcp_rack_reo_timeout`): detect
    /// again; a loss found outside recovery starts it, with one PRR step.
    fn on_rack_timeout(&mut self, now: SimTime) {
        self.rack_deadline = None;
        if !self.linux_recovery() || self.sb.is_empty() {
            return;
        }
        let lost = self.rack_detect(now);
        if lost > 0 && self.ca_state == CaState::Open {
            let flight = self.sb.in_flight() + lost;
            self.enter_recovery(now, flight);
            let (pipe, ssthresh, mss) = (self.sb.in_flight(), self.cc.ssthresh(), self.mss as u64);
            if let Some(p) = self.prr.as_mut() {
                self.prr_cwnd = p.on_ack(mss, pipe, ssthresh, false, true, mss);
            }
        }
    }

    /// Arms the tail-loss probe (RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`): in the Open
    /// state with data outstanding and no probe already out, PTO = 2 SRTT, plus `min_rto` when a
    /// single segment is outstanding (for a delayed ACK) and Linux's 2 ms otherwise, never later
    /// than the RTO.
    fn arm_tlp(&mut self, now: SimTime) {
        self.tlp_deadline = None;
        if self.ca_state != CaState::Open || self.sb.is_empty() || self.tlp_high_seq.is_some() {
            return;
        }
        let Some(srtt) = self.rtt.srtt() else { return };
        let extra = if self.sb.len() == 1 {
            self.cfg.min_rto
        } else {
            SimDuration::from_millis(2)
        };
        let mut at = now + SimDuration(2 * srtt.0) + extra;
        if let Some(r) = self.rto_deadline {
            at = at.min(r);
        }
        self.tlp_deadline = Some(at);
    }

    /// The probe timer expired (RFC 8985 §7.3, Linux `tcp_send_loss_probe`): one probe goes out
    /// on the next poll, and the RTO restarts from now.
    fn on_tlp_timeout(&mut self, now: SimTime) {
        self.tlp_deadline = None;
        if self.ca_state != CaState::Open || self.sb.is_empty() || self.tlp_high_seq.is_some() {
            return;
        }
        self.tlp_pending = true;
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// A DSACK block `[l, r)` (RFC 2883, Linux `tcp_check_dsack` / `tcp_dsack_seen`): counts it,
    /// feeds RACK's window adaptation and the undo count. Returns true if it reports the TLP
    /// probe as a duplicate (Linux `FLAG_DSACK_TLP`).
    fn on_dsack(&mut self, (l, r): (u64, u64)) -> bool {
        let segs = (r - l).div_ceil(self.mss as u64).max(1);
        self.dsack_dups += segs;
        // Linux skips a DSACK reporting more duplicates than were ever retransmitted.
        if self.dsack_dups > self.stats.retransmitted_segments {
            return false;
        }
        self.stats.dsacks_received += 1;
        if !self.linux_recovery() {
            return false;
        }
        let tlp = self.tlp_retrans && self.tlp_high_seq == Some(r);
        if !tlp {
            self.rack.on_dsack();
        }
        if let Some((marker, n)) = self.dsack_undo.as_mut() {
            if *n > 0 && r > *marker {
                *n = (*n - segs as i64).max(0);
            }
        }
        tlp
    }
}
