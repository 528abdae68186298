//! The DATA_ACK and the data-level window (RFC 8684 §3.3.2, §3.3.4) beside ADD_ADDR (§3.4.1):
//! transfers from the client to a listener with two addresses, the mptcp-lwa study's shape (the
//! server connects and sends; the UE listens on its LTE address and announces its Wi-Fi address
//! with ADD_ADDR, which the client echoes); and the connection-level receive buffer's
//! autotuning (Linux `mptcp_rcv_space_adjust`) over two high-BDP paths, or its fixed size.
mod common;
use celltcp_mptcp::MptcpConfig;
use celltcp_tcp::{BufSize, TcpConfig};
use common::*;

/// A `bytes` transfer from A (one address) to B (two addresses, on paths 0 and 1, one-way
/// delays `d0` and `d1` ms); at most `max_subflows` subflows (0: fullmesh's two).
fn to_two_addresses(max_subflows: u8, d0: u64, d1: u64, bytes: u64) -> Net {
    let lte = PathCfg::new(10, d0, 100);
    let wifi = PathCfg::new(20, d1, 100);
    let cfg = MptcpConfig {
        max_subflows,
        ..MptcpConfig::default()
    };
    let mut n = Net::new(&[lte, wifi], &[0], cfg, 3).with_listener_paths(&[0, 1]);
    n.to_write = bytes;
    n.close_after = true;
    n.run_until(ms(20_000), |n| {
        n.b_read == bytes
            && n.a.data_fin_acked()
            && n.b.as_ref().is_some_and(|b| b.data_fin_acked())
    });
    n
}

#[test]
fn a_listener_announcing_an_address_data_acks_a_client_that_sends_at_full_tilt() {
    // Regression (study mptcp-lwa: 7 of 25 quick downloads stuck at 65,535 bytes for ever, not
    // one DATA_ACK): the listener put its ADD_ADDR on every pure ACK instead of the DSS until
    // the client echoed it, and the client, which always had data to send while ACKs came in
    // (slow start), echoed only on a pure ACK. Its data-level window, the initial 65,535 bytes,
    // ran out first; the echo reached the listener after its last ACK had left (each carrying
    // ADD_ADDR), so no DATA_ACK ever came and neither side sent again. It showed once the
    // receiver's rcv_ssthresh ramp ACKed every segment at once (no delayed ACK after the echo).
    // Linux sends ADD_ADDR and its echo each on a pure ACK of its own
    // (`mptcp_pm_nl_addr_send_ack`), once, the ADD_ADDR again only after `add_addr_timeout`.
    let bytes = 2_000_000;
    // (subflow cap, one-way delays): one subflow on a short path, and both subflows on paths
    // of 80 and 180 ms RTT (the LTE and Wi-Fi RTTs of the study are about 180 ms)
    for (cap, d0, d1) in [(1u8, 20u64, 5u64), (0, 40, 40), (0, 90, 90)] {
        let n = to_two_addresses(cap, d0, d1, bytes);
        let b = n.b.as_ref().expect("listener");
        let what = format!(
            "cap {cap}, {d0}/{d1} ms: t={} read={} a={:?} b={:?}",
            n.now,
            n.b_read,
            n.a.stats(),
            b.stats()
        );
        eprintln!("{what}");
        assert_eq!(n.b_read, bytes, "every byte delivered in order: {what}");
        assert_eq!(
            n.a.stats().bytes_acked,
            bytes,
            "every byte DATA_ACKed: {what}"
        );
        assert!(n.a.data_fin_acked() && b.data_fin_acked(), "{what}");
        // 2 MB at 10 Mbit/s (one path) takes 1.6 s; the runs took 1.2 to 2.5 s with the fix
        assert!(n.now < ms(3_000), "{what}");
        if cap == 0 {
            // the announced address was echoed and used: the join carried data
            assert_eq!(n.a.subflow_count(), 2, "{what}");
            assert!(n.a.subflow_stats(1).bytes_scheduled > 0, "{what}");
        }
    }
}

/// An upload of `secs` seconds from A (one address per path) to B over two high-BDP paths:
/// 40 Mbit/s with 100 ms RTT and 40 Mbit/s with 200 ms RTT (1.5 MB of BDP in all), a BDP
/// of queue each (334 and 667 packets, so that the coupled control keeps both paths full
/// after its losses). Returns (B's bytes read at `secs / 2` and at the end, B's receive buffer
/// at the end).
fn high_bdp(tcp: TcpConfig, secs: u64) -> (u64, u64, u64) {
    let paths = [PathCfg::new(40, 50, 334), PathCfg::new(40, 100, 667)];
    let cfg = MptcpConfig {
        tcp,
        ..MptcpConfig::default()
    };
    let mut n = Net::new(&paths, &[0, 1], cfg, 5);
    n.run_until(ms(secs * 500), |_| false);
    let half = n.b_read;
    n.run_until(ms(secs * 1000), |_| false);
    let b = n.b.as_ref().expect("listener");
    (half, n.b_read, b.rcv_buf())
}

#[test]
fn the_connection_buffer_autotunes_until_the_transfer_is_not_window_limited() {
    // Linux `mptcp_rcv_space_adjust` (net/mptcp/protocol.c): the connection's buffer starts at
    // the subflows' initial one (tcp_rmem[1], 128 KiB) and grows with the bytes the
    // application reads per RTT, up to tcp_rmem[2] (6 MiB); every subflow's buffer follows.
    // Over 40 + 40 Mbit/s paths of 100 and 200 ms RTT the connection needs about 1.5 MB of
    // window (the BDPs) plus what the slower path's data waits out of order at the data level:
    // a 128 KiB window would allow at most 128 KiB per 100 ms, 10.5 Mbit/s (RFC 8684 §3.3.4:
    // one window for the connection). Grown, the second half of the transfer fills both paths.
    let secs = 20;
    let (half, end, buf) = high_bdp(TcpConfig::default(), secs);
    let second = (end - half) as f64 * 8.0 / (secs as f64 / 2.0) / 1e6;
    // the reference: the same transfer with the largest buffer from the start
    let big = TcpConfig {
        rcv_buf: BufSize::Fixed(6 << 20),
        ..TcpConfig::default()
    };
    let (h6, e6, _) = high_bdp(big, secs);
    let second6 = (e6 - h6) as f64 * 8.0 / (secs as f64 / 2.0) / 1e6;
    eprintln!("autotuned: buffer {buf} B, second-half goodput {second:.2} Mbit/s (paths 40 + 40; with 6 MiB fixed from the start {second6:.2})");
    assert!(
        buf >= 1_500_000,
        "the buffer grew past the paths' BDP: {buf}"
    );
    assert!(buf <= 6 << 20, "at most tcp_rmem[2]: {buf}");
    assert!(
        second > 0.85 * 80.0,
        "not window-limited once grown: {second:.2} Mbit/s"
    );
    assert!(second <= 80.0, "{second:.2} Mbit/s");
    assert!(
        second > 0.97 * second6,
        "as with the largest buffer: {second:.2} vs {second6:.2} Mbit/s"
    );
}

#[test]
fn a_fixed_window_keeps_the_connection_buffer_fixed() {
    // `window` (SO_RCVBUF) fixes the buffer: Linux's `mptcp_rcvbuf_grow` returns at once under
    // SOCK_RCVBUF_LOCK. 256 KiB on the same two paths: the transfer is window-limited, at most
    // one window per the shorter RTT (100 ms): 21 Mbit/s.
    let w = 256 * 1024;
    let tcp = TcpConfig {
        rcv_buf: BufSize::Fixed(w),
        ..TcpConfig::default()
    };
    let secs = 10;
    let (half, end, buf) = high_bdp(tcp, secs);
    let second = (end - half) as f64 * 8.0 / (secs as f64 / 2.0) / 1e6;
    let bound = w as f64 * 8.0 / 0.1 / 1e6;
    eprintln!(
        "fixed {w}: buffer {buf} B, second-half goodput {second:.2} Mbit/s (W/RTT {bound:.2})"
    );
    assert_eq!(buf, w, "a fixed buffer never grows");
    assert!(
        second <= bound * 1.02,
        "window-limited: {second:.2} > W/RTT {bound:.2} Mbit/s"
    );
    assert!(second > 0.5 * bound, "{second:.2} Mbit/s");
}
