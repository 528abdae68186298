mod common;
use celltcp_mptcp::MptcpConfig;
use common::*;

#[test]
fn smoke_transfer_two_paths() {
    let p = PathCfg::new(10, 10, 50);
    let mut n = Net::new(&[p, p], &[0, 1], MptcpConfig::default(), 1);
    n.to_write = 5_000_000;
    n.close_after = true;
    n.run_until(ms(20_000), |n| {
        n.a.is_closed() && n.b.as_ref().is_some_and(|b| b.is_closed())
    });
    let (per, total) = n.mptcp_bytes();
    eprintln!(
        "t={} per={per:?} total={total} a={:?} b={:?}",
        n.now,
        n.a.stats(),
        n.b.as_ref().map(|b| *b.stats())
    );
    for i in 0..n.a.subflow_count() {
        eprintln!(
            "sf {i}: {:?} {:?} {:?}",
            n.a.subflow_state(i),
            n.a.subflow_stats(i),
            n.a.subflow(i).stats().timeouts
        );
    }
    assert_eq!(total, 5_000_000);
}

#[test]
fn smoke_redundant_and_dead_path() {
    use celltcp_mptcp::scheduler::SchedulerKind;
    let p = PathCfg::new(10, 10, 50);
    let mut q = p;
    q.dies_at = Some(ms(1500));
    for sched in [SchedulerKind::Redundant, SchedulerKind::MinRtt] {
        let cfg = MptcpConfig {
            scheduler: sched,
            ..MptcpConfig::default()
        };
        let mut n = Net::new(&[p, q], &[0, 1], cfg, 1);
        n.to_write = 5_000_000;
        n.close_after = true;
        n.run_until(ms(60_000), |n| {
            n.b_read == 5_000_000
                && n.a.data_fin_acked()
                && n.b.as_ref().is_some_and(|b| b.data_fin_acked())
        });
        let (per, total) = n.mptcp_bytes();
        eprintln!(
            "{sched:?} t={} per={per:?} total={total} a={:?} b={:?}",
            n.now,
            n.a.stats(),
            n.b.as_ref().map(|b| *b.stats())
        );
        for i in 0..n.a.subflow_count() {
            eprintln!(
                "sf {i}: {:?} {:?} {:?}",
                n.a.subflow_state(i),
                n.a.subflow_stats(i),
                n.a.subflow(i).stats().timeouts
            );
        }
        assert_eq!(total, 5_000_000);
    }
}
