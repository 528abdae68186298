//! Endpoint configuration: plain serde data with Linux-like defaults.
//!
//! Units: bytes for sizes, [`SimDuration`] (integer nanoseconds in serde) for times.

use celltcp_engine::SimDuration;

use crate::cc::{CcConfig, CcKind};
pub use crate::rtt::RtoEstimator;

/// A socket buffer size: fixed (as `iperf3 -w` / `SO_SNDBUF`/`SO_RCVBUF` set it) or autotuned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BufSize {
    /// A fixed size in bytes (> 0).
    Fixed(u64),
    /// Start at `initial` bytes and grow up to `max` bytes (`initial <= max`). For the receive
    /// buffer this is Linux's `tcp_rcv_space_adjust` (dynamic right-sizing); for the send buffer it
    /// is `tcp_sndbuf_expand` (about twice the congestion window).
    Auto { initial: u64, max: u64 },
}

impl BufSize {
    /// Linux's autotuned receive buffer, counting payload only (no skb overhead): it starts
    /// at the window `tcp_rmem[1]` = 131072 bytes offers, `tcp_win_from_space` of it at
    /// [`LINUX_SCALING_RATIO`] (81,920 bytes: `tcp_measure_rcv_mss` sets the ratio from the
    /// first full-sized segment and `window_clamp` follows), and grows by DRS up to 6 MiB.
    /// The start matters beyond the window: `tcp_grow_window` raises `rcv_ssthresh`, and
    /// sends each of those segments' ACK at once, only while it is below the clamp, so a
    /// receiver whose clamp stops at 80 KB until DRS raises it ACKs every second segment
    /// for part of the sender's second round (measured on Linux 6.18, docs/tcp.md).
    pub const RCV_DEFAULT: BufSize = BufSize::Auto {
        initial: linux_win_from_space(128 * 1024),
        max: 6 * 1024 * 1024,
    };
    /// Linux `tcp_wmem` defaults (16384, 4 MiB).
    pub const SND_DEFAULT: BufSize = BufSize::Auto {
        initial: 16 * 1024,
        max: 4 * 1024 * 1024,
    };

    pub fn initial(self) -> u64 {
        match self {
            BufSize::Fixed(b) => b,
            BufSize::Auto { initial, .. } => initial,
        }
    }
    pub fn max(self) -> u64 {
        match self {
            BufSize::Fixed(b) => b,
            BufSize::Auto { initial, max } => max.max(initial),
        }
    }
    pub fn is_auto(self) -> bool {
        matches!(self, BufSize::Auto { .. })
    }

    /// The send and receive buffers Linux gives a socket on which the application set
    /// `SO_SNDBUF` and `SO_RCVBUF` to `requested` bytes, as `iperf3 -w` does at both ends:
    /// `(snd_buf, rcv_buf)`, in payload bytes.
    ///
    /// - The kernel doubles the value "to account for struct sk_buff overhead" and locks it
    ///   (net/core/sock.c `__sock_set_sndbuf` / `__sock_set_rcvbuf`: `sk_sndbuf = sk_rcvbuf =
    ///   2 x min(requested, net.core.[rw]mem_max)`; the sysctl cap is assumed not to bind, as on a
    ///   host with `rmem_max` = 4 MiB; the common default 212992 caps `-w` above 208 KiB).
    /// - Receive: the buffer is charged with `skb->truesize`, so the window the receiver
    ///   advertises is only the payload share of it, `tcp_win_from_space(sk_rcvbuf)` =
    ///   `sk_rcvbuf x scaling_ratio / 256` (include/net/tcp.h, Linux >= 6.5, where
    ///   `tcp_measure_rcv_mss` sets `scaling_ratio = skb->len x 256 / skb->truesize`;
    ///   see [`LINUX_SCALING_RATIO`]); `tcp_select_initial_window` clamps the window to
    ///   `tcp_full_space` = that value. `-w 64K` advertises 131072 x 160 / 256 = 81920 bytes.
    /// - Send: the write and retransmit queues are charged with `truesize` too, but of
    ///   multi-segment (TSO) buffers whose overhead is a few percent; the payload bound is
    ///   taken as the whole `sk_sndbuf`.
    pub fn linux_sockopt(requested: u64) -> (BufSize, BufSize) {
        let space = requested.saturating_mul(2);
        (BufSize::Fixed(space), BufSize::Fixed(linux_win_from_space(space)))
    }
}

/// Linux's `scaling_ratio` (payload bytes per 256 bytes of receive-buffer charge) for
/// full-sized segments of a 1500-byte MTU: 1448 bytes of payload in an skb whose `truesize` is
/// 2304 (a 2 KiB data buffer plus `struct sk_buff`) gives 1448 x 256 / 2304 = 160 (net/ipv4/
/// tcp_input.c `tcp_measure_rcv_mss`). Kernels before 6.5 used `tcp_adv_win_scale = 1`, a
/// ratio of 128 (half the buffer).
pub const LINUX_SCALING_RATIO: u64 = 160;

/// Linux `tcp_win_from_space`: the window a receive buffer of `space` bytes advertises
/// (`space x scaling_ratio >> TCP_RMEM_TO_WIN_SCALE`, the shift being 8).
pub const fn linux_win_from_space(space: u64) -> u64 {
    space.saturating_mul(LINUX_SCALING_RATIO) >> 8
}

/// The loss-recovery rules of a sender with SACK.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// Linux's defaults (`tcp_recovery = 1`, `tcp_early_retrans = 3`): RACK-TLP (RFC 8985)
    /// detects losses by time, PRR (RFC 6937) paces fast recovery, DSACKs (RFC 2883) widen
    /// RACK's reordering window and undo recoveries whose every retransmission was needless
    /// (RFC 3708). See [`crate::rack`] and [`crate::prr`].
    #[default]
    Linux,
    /// RFC 6675 (DupThresh `IsLost`, pipe vs cwnd) with RFC 6582 NewReno without SACK, no TLP,
    /// no DSACK-based undo: close to ns-3's `TcpClassicRecovery`, for side-by-side comparisons.
    Rfc6675,
}

impl Recovery {
    pub fn name(self) -> &'static str {
        match self {
            Recovery::Linux => "linux",
            Recovery::Rfc6675 => "rfc6675",
        }
    }
}

/// Configuration of one TCP endpoint.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Payload bytes per full segment (default 1448: a 1500-byte IP packet with timestamps).
    /// Range 64..=65495. We advertise `mss + 12` in the SYN when timestamps are configured, so two
    /// default endpoints see 1460 on the wire, as Linux does; the payload actually sent is the
    /// smaller of our `mss` and the peer's MSS option less the negotiated option overhead.
    pub mss: u32,
    /// Offer SACK (RFC 2018); used only if both sides offer it.
    pub sack: bool,
    /// Offer timestamps (RFC 7323 §3); used only if both sides offer them.
    pub timestamps: bool,
    /// Offer window scaling (RFC 7323 §2); used only if both sides offer it.
    pub window_scaling: bool,
    /// Send buffer: bytes written by the application and not yet acknowledged.
    pub snd_buf: BufSize,
    /// Receive buffer: in-order unread plus out-of-order bytes; bounds the advertised window.
    pub rcv_buf: BufSize,
    /// Delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2): ACK every second full-sized segment or
    /// when the delayed-ACK timer expires. Off: ACK every segment.
    pub delayed_ack: bool,
    /// A fixed delayed-ACK timer (RFC 5681 caps it at 500 ms; ns-3 uses 200 ms). `None`
    /// (default): Linux's adaptive ATO, 40 ms (`TCP_ATO_MIN`) in a busy flow, adapted to the
    /// data's inter-arrival time and bounded by the RTT (see [`crate::receiver`]).
    pub delayed_ack_timeout: Option<SimDuration>,
    /// Quick-ACK mode: at most this many in-order data segments are ACKed at once at the start
    /// of the connection and after an idle gap longer than RTO (Linux `tcp_event_data_recv` ->
    /// `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`: min(rcv_wnd / (2 rcv_mss), 16), at least 2).
    /// Default 16 as Linux (`TCP_MAX_QUICKACKS`); 0: plain delayed ACKs from the first segment.
    pub quickack_segments: u32,
    /// Nagle's algorithm (RFC 896) as Linux runs it (`tcp_nagle_check` with Minshall's
    /// refinement, `tcp_minshall_check`): a partial segment waits while an earlier partial
    /// segment is unacknowledged. Default on, as Linux; off is `TCP_NODELAY` (`iperf3 -N`).
    pub nagle: bool,
    /// Initial window in segments (RFC 6928: 10).
    pub initial_cwnd_pkts: u32,
    /// Linux `tcp_rto_min` (`TCP_RTO_MIN`: 200 ms): with the default `rto_estimator = "linux"`
    /// the floor of the variance term, so RTO >= SRTT + `min_rto`; with `"rfc6298"` the floor of
    /// the RTO itself (RFC 6298 §2.4 says 1 s). See [`crate::rtt`].
    pub min_rto: SimDuration,
    /// How the RTO follows the RTT samples: `"linux"` (default; `tcp_rtt_estimator`,
    /// `tcp_set_rto`) or `"rfc6298"` (RFC 6298 §2 to the letter, as ns-3 does).
    pub rto_estimator: RtoEstimator,
    /// F-RTO (RFC 5682, SACK-enhanced as Linux's `tcp_process_loss` with the default
    /// `tcp_frto = 2`): after an RTO, the first ACK that advances SND.UNA releases new data
    /// rather than retransmissions, and an ACK of data never retransmitted marks the RTO spurious
    /// and undoes it. Off: every RTO goes back N at once (ns-3).
    pub frto: bool,
    /// Loss recovery with SACK: `"linux"` (default: RACK-TLP, PRR, DSACK undo) or `"rfc6675"`
    /// (the RFC 6675 DupThresh rules, as ns-3). Without SACK both use NewReno (RFC 6582).
    pub recovery: Recovery,
    /// Report duplicate segments with DSACK (RFC 2883; Linux `tcp_dsack = 1`); used only when
    /// SACK is negotiated.
    pub dsack: bool,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: SimDuration,
    /// RTO ceiling (RFC 6298 §2.5 allows >= 60 s; Linux `TCP_RTO_MAX`: 120 s).
    pub max_rto: SimDuration,
    /// Congestion control and its parameters (a [`CcKind`] converts with `.into()` to its
    /// defaults).
    pub cc: CcConfig,
    /// Seed of the controller's own random choices (BBR's PROBE_BW start phase, §4.3.4.1 of
    /// draft-cardwell-iccrg-bbr-congestion-control-00); any `u64`, default 0. Give each connection
    /// its own (the scenario layer derives it from the run seed and the flow name) so that flows
    /// sharing a bottleneck do not move in lock step; the same seed gives the same run.
    pub cc_seed: u64,
    /// Pace when the controller does not: 2x cwnd/srtt in slow start, 1.2x in congestion
    /// avoidance (Linux `tcp_update_pacing_rate`). A controller with a pacing rate (BBR) is always
    /// paced at its rate.
    pub pacing: bool,
    /// How a paced flow spaces its data ([`crate::pacing`]): `"tso"` (default, Linux) sends bursts
    /// of the kernel's TSO autosize (`tcp_tso_autosize`: about 1 ms of data at the pacing rate,
    /// at least the controller's `min_tso_segs`) back to back and the next after the burst's
    /// payload / pacing rate (`tcp_update_skb_after_send`); `"segment"` paces every segment on
    /// its own. No effect on a flow that does not pace.
    pub pacing_quantum: crate::pacing::PacingQuantum,
    /// SYN / SYN-ACK retransmissions before giving up (Linux `tcp_syn_retries`: 6).
    pub syn_retries: u32,
    /// Consecutive RTOs without progress before the connection is aborted (Linux `tcp_retries2`: 15).
    pub max_retries: u32,
    /// Duplicate-ACK threshold (RFC 5681 §3.2, RFC 6675 `DupThresh`: 3).
    pub dupthresh: u32,
    /// TIME-WAIT length. RFC 9293 §3.6 says 2 MSL (Linux: 60 s); we default to 1 s, long enough to
    /// re-ACK a retransmitted FIN and short enough not to keep finished flows alive. Zero skips
    /// TIME-WAIT.
    pub time_wait: SimDuration,
    /// Keep every RTT sample for [`crate::TcpEndpoint::drain_rtt_samples`] (off: one branch).
    pub record_rtt_samples: bool,
    /// Explicit Congestion Notification (RFC 3168 §6.1): request it on our SYN (ECE+CWR) or
    /// accept it on our SYN-ACK (ECE); used only if both sides want it. Default off, as Linux's
    /// `tcp_ecn = 2` default does not request ECN on active opens. Selecting `cc = dctcp` turns
    /// it on regardless ([`TcpConfig::ecn_enabled`]): DCTCP needs ECN (RFC 8257 §3).
    pub ecn: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            sack: true,
            timestamps: true,
            window_scaling: true,
            snd_buf: BufSize::SND_DEFAULT,
            rcv_buf: BufSize::RCV_DEFAULT,
            delayed_ack: true,
            delayed_ack_timeout: None,
            quickack_segments: 16,
            nagle: true,
            initial_cwnd_pkts: 10,
            min_rto: SimDuration::from_millis(200),
            rto_estimator: RtoEstimator::Linux,
            frto: true,
            recovery: Recovery::Linux,
            dsack: true,
            initial_rto: SimDuration::from_secs(1),
            max_rto: SimDuration::from_secs(120),
            cc: CcKind::NewReno.into(),
            cc_seed: 0,
            pacing: false,
            pacing_quantum: crate::pacing::PacingQuantum::Tso,
            syn_retries: 6,
            max_retries: 15,
            dupthresh: 3,
            time_wait: SimDuration::from_secs(1),
            record_rtt_samples: false,
            ecn: false,
        }
    }
}

impl TcpConfig {
    /// Whether this endpoint asks for (or accepts) ECN: `ecn`, or a controller that needs it
    /// (DCTCP).
    pub fn ecn_enabled(&self) -> bool {
        self.ecn || self.cc.kind().needs_ecn()
    }

    /// The window-scale shift we offer: the smallest shift that lets the largest receive buffer be
    /// advertised in 16 bits (RFC 7323 §2.3), at most 14.
    pub fn wscale_shift(&self) -> u8 {
        // max >> s fits 16 bits iff max >> 16 < 2^s: s is the bit length of max >> 16 (without
        // a loop: the proxy asks for it on every socket it reads)
        let bits = 64 - (self.rcv_buf.max() >> 16).leading_zeros();
        bits.min(14) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_wscale_shift_fits_max_buffer() {
        // RFC 7323 §2.3: shift <= 14, chosen from the largest buffer.
        let mut c = TcpConfig::default();
        assert_eq!(c.wscale_shift(), 7); // 6 MiB >> 7 = 49152
        c.rcv_buf = BufSize::Fixed(65_535);
        assert_eq!(c.wscale_shift(), 0);
        c.rcv_buf = BufSize::Fixed(1 << 40);
        assert_eq!(c.wscale_shift(), 14);
        // the definition, as a loop: the smallest shift that fits, at most 14
        let by_loop = |max: u64| (0u8..14).find(|&s| (max >> s) <= 65_535).unwrap_or(14);
        for max in (0..40).flat_map(|b| [(1u64 << b) - 1, 1 << b, (1 << b) + 1, 3 << b]).chain([0, 65_535, 65_536, 131_071, 131_072, 524_288, u64::MAX]) {
            c.rcv_buf = BufSize::Fixed(max);
            assert_eq!(c.wscale_shift(), by_loop(max), "buffer {max}");
        }
    }

    #[test]
    fn iperf_w_doubles_and_advertises_the_payload_share() {
        // net/core/sock.c __sock_set_rcvbuf doubles; tcp_win_from_space with scaling_ratio 160
        // (1448-byte payload in a 2304-byte truesize): -w 64K -> 131072 x 160 / 256 = 81920.
        let (snd, rcv) = BufSize::linux_sockopt(65_536);
        assert_eq!(snd, BufSize::Fixed(131_072));
        assert_eq!(rcv, BufSize::Fixed(81_920));
        assert_eq!(LINUX_SCALING_RATIO, 1448 * 256 / 2304);
        // the pre-6.5 rule (tcp_adv_win_scale = 1) would give half the doubled buffer
        assert_eq!(linux_win_from_space(131_072) * 128 / LINUX_SCALING_RATIO, 65_536);
        let (_, rcv) = BufSize::linux_sockopt(262_144);
        assert_eq!(rcv.max(), 327_680);
    }
}
