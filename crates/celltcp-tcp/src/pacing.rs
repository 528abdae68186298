//! The send quantum of a paced sender, as Linux sizes its TSO/GSO bursts (net/ipv4/tcp_output.c,
//! Linux 6.18).
//!
//! Linux does not pace segments, it paces skbs: `tcp_write_xmit` builds an skb of up to
//! `tcp_tso_segs` segments (fewer if the congestion window's quota, `tcp_cwnd_test`, or the data
//! allow), hands it to GSO, which cuts it into segments that reach the device back to back, and
//! stamps the next departure time (EDT, `tcp_update_skb_after_send`):
//! `tcp_wstamp_ns += skb->len / sk_pacing_rate`, where `skb->len` is the skb's payload (the
//! headers go on the clone that is sent). `tcp_pacing_check` holds the next skb until that time.
//!
//! - `tcp_tso_autosize`: `bytes = sk_pacing_rate >> sk_pacing_shift` (shift 10: about 1 ms of
//!   data per skb), plus an allowance for short paths, `sk_gso_max_size >> (tcp_min_rtt_us >>
//!   tcp_tso_rtt_log)` (`tcp_tso_rtt_log` = 9: halves every 512 µs of minimum RTT, below one
//!   1448-byte segment above about 3.5 ms), at most `sk_gso_max_size` (64 KB less
//!   `MAX_TCP_HEADER` + 1), then `max(bytes / mss, min_tso_segs)` segments;
//! - `tcp_tso_segs`: the controller's `min_tso_segs` (`ca_ops->min_tso_segs`; BBR:
//!   `bbr_min_tso_segs`, 1 below 1.2 Mbit/s (`bbr_min_tso_rate`), else 2) or the
//!   `tcp_min_tso_segs` sysctl (2); capped by `sk_gso_max_segs` (never below the byte cap here);
//! - `tcp_cwnd_test`: an skb takes at most `max(cwnd / 2, 1)` segments ("at least 2 GSO packets
//!   in flight") and what the window leaves;
//! - `tcp_update_skb_after_send`: the first 10 data segments of a connection are not paced
//!   (`tp->data_segs_out >= 10`), and time the sender lost since the previous departure time
//!   (`credit`) shortens the next skb's interval by up to half.
//!
//! BBR's cwnd budget (`bbr_quantization_budget`, 3 × `bbr_tso_segs_goal`) is the same quantum
//! without the short-path allowance ("sort of `tcp_tso_autosize()` but ignoring driver provided
//! `sk_gso_max_size`") and at most 127 segments: [`tso_segs`] with `min_rtt = None`, so the
//! controller's budget and the sender's bursts are one figure wherever the minimum RTT is above
//! about 3.5 ms.
//!
//! Not modelled: `tcp_tso_should_defer` (a cwnd-limited sender may wait for a bigger skb; it
//! does not defer in recovery or once an ACK is due within half an SRTT), TCP small queues
//! (`tcp_small_queue_check`, which bounds what waits in the qdisc/device below the socket,
//! nothing here), and skbs larger than one segment on retransmission (the burst quantum counts
//! retransmitted segments like new ones).

use celltcp_engine::SimDuration;

/// `sk_pacing_shift` (net/core/sock.c `sock_init_data`: 10): an skb carries about
/// `pacing_rate / 2^10` bytes, 1 ms of data.
pub const PACING_SHIFT: u32 = 10;
/// `tcp_min_tso_segs` sysctl default (net/ipv4/tcp_ipv4.c): 2.
pub const MIN_TSO_SEGS: u32 = 2;
/// `tcp_tso_rtt_log` sysctl default (Linux >= 5.18): 9, the short-path allowance halves every
/// 2^9 µs of minimum RTT.
pub const TSO_RTT_LOG: u32 = 9;
/// `sk_gso_max_size` for a 64 KB GSO device (a TUN, veth or Ethernet NIC): `GSO_LEGACY_MAX_SIZE`
/// (65536) - 1 - `MAX_TCP_HEADER` (320 on x86-64), the cap `bbr_tso_segs_goal` writes out.
pub const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// `bbr_tso_segs_goal`'s cap, 0x7F segments.
pub const BBR_MAX_TSO_SEGS: u32 = 127;
/// `tcp_update_skb_after_send`: data segments a connection sends before pacing applies.
pub const UNPACED_INITIAL_SEGS: u64 = 10;

/// How a paced flow spaces what it sends ([`crate::TcpConfig::pacing_quantum`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PacingQuantum {
    /// Linux: bursts of [`tso_segs`] segments back to back, the next burst after its payload /
    /// pacing rate (module doc).
    #[default]
    Tso,
    /// Every segment on its own, the next after its bytes (payload and TCP header) / pacing
    /// rate: celltcp before issue 12, and a fluid-like sender.
    Segment,
}

impl PacingQuantum {
    pub fn name(self) -> &'static str {
        match self {
            PacingQuantum::Tso => "tso",
            PacingQuantum::Segment => "segment",
        }
    }
}

/// `tcp_tso_autosize` in segments: `pacing_rate` in bytes per second, `mss` the payload per
/// segment, `min_tso_segs` the controller's floor; `min_rtt` adds the short-path allowance
/// (`None`: none, as `bbr_tso_segs_goal`, or before the first RTT sample, when the kernel's
/// `tcp_min_rtt` is ~0U).
pub fn tso_segs(
    pacing_rate: f64,
    mss: u64,
    min_tso_segs: u32,
    min_rtt: Option<SimDuration>,
) -> u32 {
    let mut bytes = (pacing_rate.max(0.0) as u64) >> PACING_SHIFT;
    if let Some(rtt) = min_rtt {
        let r = (rtt.as_nanos() / 1_000) >> TSO_RTT_LOG;
        if r < 32 {
            bytes += GSO_MAX_BYTES >> r;
        }
    }
    let segs = bytes.min(GSO_MAX_BYTES) / mss.max(1);
    segs.max(min_tso_segs as u64).min(u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tso_segs_is_about_1ms_of_data_with_a_floor() {
        // 10 Mbit/s: 1.25e6 >> 10 = 1220 bytes < one 1448-byte segment: the floor, 2.
        assert_eq!(tso_segs(1.25e6, 1448, 2, None), 2);
        // 100 Mbit/s: 12.5e6 >> 10 = 12207 bytes = 8 segments.
        assert_eq!(tso_segs(12.5e6, 1448, 2, None), 8);
        // 1 Gbit/s: 122070 bytes, capped at 65215 = 45 segments.
        assert_eq!(tso_segs(125e6, 1448, 2, None), 45);
        // BBR's floor below 1.2 Mbit/s.
        assert_eq!(tso_segs(100e3, 1448, 1, None), 1);
    }

    #[test]
    fn tso_segs_short_path_allowance_halves_every_512us() {
        // min RTT 1 ms: 1000 >> 9 = 1, + 65215 >> 1 = 32607 bytes: 1220 + 32607 -> 23 segments.
        assert_eq!(
            tso_segs(1.25e6, 1448, 2, Some(SimDuration::from_millis(1))),
            23
        );
        // 200 µs: r = 0, the whole 64 KB (capped): 45 segments.
        assert_eq!(
            tso_segs(1.25e6, 1448, 2, Some(SimDuration::from_micros(200))),
            45
        );
        // 5 ms: r = 9, 128 bytes: nothing on top of the floor.
        assert_eq!(
            tso_segs(1.25e6, 1448, 2, Some(SimDuration::from_millis(5))),
            2
        );
        // 50 ms: r = 97 >= 32, no allowance (the shift would overflow).
        assert_eq!(
            tso_segs(12.5e6, 1448, 2, Some(SimDuration::from_millis(50))),
            8
        );
    }
}
