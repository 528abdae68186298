//! REMOVE_ADDR (RFC 8684 §3.4.2): a client whose second address goes away (a UE leaving Wi-Fi
//! coverage; [`MptcpConnection::remove_local_addr`]) tells the listener, which closes its
//! subflow of that address at once, as Linux's `mptcp_pm_remove_addr` and
//! `mptcp_pm_nl_rm_addr_received` do.
mod common;
use celltcp_mptcp::options::MptcpOpt;
use celltcp_mptcp::{MptcpConfig, SubflowState};
use common::*;

#[test]
fn a_removed_address_is_announced_once_and_the_peer_closes_its_subflow() {
    // Two 10 Mbit/s paths (40 ms RTT); path 1 stops delivering at 2 s and the client removes
    // its address 1 then. Without REMOVE_ADDR the listener's subflow of that address would
    // stay established (it only sends ACKs, which never time out); with it, the listener
    // fails it one path-0 trip later (20 ms one way, plus queueing).
    let bytes = 6_000_000;
    let mut p1 = PathCfg::new(10, 20, 50);
    p1.dies_at = Some(ms(2_000));
    let mut n = Net::new(
        &[PathCfg::new(10, 20, 50), p1],
        &[0, 1],
        MptcpConfig::default(),
        9,
    );
    n.to_write = bytes;
    n.close_after = true;
    n.capture = Some(Vec::new());
    n.run_until(ms(2_000), |_| false);
    {
        let b = n.b.as_ref().expect("listener");
        assert_eq!(b.subflow_count(), 2);
        assert_eq!(b.subflow_state(1), SubflowState::Established);
    }
    n.a.remove_local_addr(1);
    assert_eq!(n.a.subflow_state(1), SubflowState::Failed);
    n.run_until(ms(2_200), |_| false);
    let b = n.b.as_ref().expect("listener");
    assert_eq!(
        b.subflow_state(1),
        SubflowState::Failed,
        "the listener closed the subflow of the removed address"
    );
    assert_eq!(b.subflow_state(0), SubflowState::Established);
    n.run_until(ms(60_000), |n| {
        n.b_read == bytes
            && n.a.data_fin_acked()
            && n.b.as_ref().is_some_and(|b| b.data_fin_acked())
    });
    assert_eq!(n.b_read, bytes, "every byte delivered over path 0");
    // exactly one REMOVE_ADDR, with id 1, from the client, on a pure ACK on path 0's subflow
    let rm: Vec<_> = n
        .capture
        .as_ref()
        .unwrap()
        .iter()
        .filter_map(|(t, p, o)| match MptcpOpt::from_segment(o) {
            Some(Ok(MptcpOpt::RemoveAddr { ids, n: k })) => {
                Some((*t, p.src, ids[..k as usize].to_vec()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(rm.len(), 1, "{rm:?}");
    assert_eq!(rm[0].1, a_ip(0));
    assert_eq!(rm[0].2, vec![1]);
    assert!(rm[0].0 >= ms(2_000) && rm[0].0 < ms(2_050), "{rm:?}");
}

#[test]
fn an_address_that_comes_back_gets_a_new_id_and_a_new_subflow() {
    // The same two paths; path 1 is down from 2 s to 3 s (the UE out of Wi-Fi coverage): the
    // client removes its address 1 at 2 s and adds it again at 3 s. It comes back as id 2 (a
    // new endpoint id, as Linux's in-kernel manager gives), the path manager joins a subflow
    // from it, and that subflow carries data again: the transfer ends sooner than over path 0
    // alone.
    let bytes = 12_000_000;
    let run = |back: bool| {
        let mut p1 = PathCfg::new(10, 20, 50);
        p1.dies_at = Some(ms(2_000));
        p1.back_at = Some(ms(3_000));
        let mut n = Net::new(&[PathCfg::new(10, 20, 50), p1], &[0, 1], MptcpConfig::default(), 9);
        n.to_write = bytes;
        n.close_after = true;
        n.run_until(ms(2_000), |_| false);
        n.a.remove_local_addr(1);
        assert_eq!(n.a.local_id_of(a_ip(1)), None);
        n.run_until(ms(3_000), |_| false);
        if back {
            assert_eq!(n.a.add_local_addr(a_ip(1)), Some(2));
            assert_eq!(n.a.add_local_addr(a_ip(1)), None, "an address the connection has is not added twice");
        }
        n.run_until(ms(60_000), |n| n.b_read == bytes && n.a.data_fin_acked());
        assert_eq!(n.b_read, bytes);
        n
    };
    let back = run(true);
    assert_eq!(back.a.subflow_count(), 3, "the initial subflow, the removed one, the new one");
    let (local, _) = back.a.subflow_addrs(2);
    assert_eq!(local.ip, a_ip(1));
    assert_eq!(back.a.subflow_state(1), SubflowState::Failed);
    let moved = back.a.subflow_stats(2).bytes_scheduled;
    assert!(moved > 2_000_000, "the new subflow carried {moved} bytes");
    let b = back.b.as_ref().expect("listener");
    assert_eq!(b.subflow_count(), 3, "the listener accepted the join from the address's new id");
    let alone = run(false);
    assert_eq!(alone.a.subflow_count(), 2, "no address, no new subflow");
    assert!(back.now < alone.now, "with the address back the transfer ends sooner: {:?} against {:?}", back.now, alone.now);
}
