//! The DATA_ACK and the data-level window (RFC 8684 §3.3.2, §3.3.4) beside ADD_ADDR (§3.4.1):
//! transfers from the client to a listener with two addresses, the mptcp-lwa study's shape (the
//! server connects and sends; the UE listens on its LTE address and announces its Wi-Fi address
//! with ADD_ADDR, which the client echoes).
mod common;
use celltcp_mptcp::MptcpConfig;
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
