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
