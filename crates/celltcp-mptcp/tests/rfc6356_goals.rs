//! RFC 6356's goals (§2) as tests, on the two-path harness (`common`): rate links with drop-tail
//! queues from `celltcp-net`, the engine's event queue, NewReno single-path TCP as the reference.
//!
//! - Goal 1 (improve throughput): over two disjoint equal paths an MPTCP connection gets at least
//!   1.8x what one TCP gets on one of them.
//! - Goal 2 (do no harm): at a bottleneck shared with a single-path TCP, a coupled connection of
//!   two subflows takes no more than about what the TCP takes; uncoupled subflows take about
//!   twice as much (which shows the test can fail).
//! - Goal 3 (balance congestion): traffic moves away from the more congested path.

mod common;

use celltcp_mptcp::coupled::CoupledKind;
use celltcp_mptcp::MptcpConfig;
use celltcp_tcp::TcpConfig;
use common::*;

fn cfg(cc: CoupledKind) -> MptcpConfig {
    MptcpConfig {
        cc,
        ..MptcpConfig::default()
    }
}

/// Goodput in Mbit/s of `bytes` over `secs`.
fn mbps(bytes: u64, secs: f64) -> f64 {
    bytes as f64 * 8.0 / secs / 1e6
}

const SECS: u64 = 30;

fn single_tcp(p: PathCfg) -> u64 {
    let mut n = Net::new(&[p], &[0], MptcpConfig::default(), 7);
    n.to_write = 0;
    n.add_tcp(0, TcpConfig::default(), ms(0));
    n.run_until(ms(SECS * 1000), |_| false);
    n.tcp[0].read
}

#[test]
fn goal1_aggregates_two_disjoint_equal_paths() {
    // 10 Mbit/s, 40 ms RTT, a BDP of queue (34 packets) each.
    let p = PathCfg::new(10, 20, 34);
    let tcp = single_tcp(p);
    assert!(
        mbps(tcp, SECS as f64) > 8.5,
        "one TCP fills its path: {}",
        mbps(tcp, SECS as f64)
    );
    for cc in CoupledKind::ALL {
        let mut n = Net::new(&[p, p], &[0, 1], cfg(cc), 3);
        n.run_until(ms(SECS * 1000), |_| false);
        let (per, total) = n.mptcp_bytes();
        let ratio = total as f64 / tcp as f64;
        eprintln!(
            "{cc:?}: per subflow {per:?}, total {:.2} Mbit/s = {ratio:.2} x TCP",
            mbps(total, SECS as f64)
        );
        assert_eq!(per.len(), 2);
        assert!(ratio >= 1.8, "{cc:?}: {ratio:.2}x one path");
    }
}

/// MPTCP (two subflows through one bottleneck) against one NewReno TCP: (mptcp, tcp) bytes.
fn shared_bottleneck(cc: CoupledKind) -> (u64, u64) {
    let p = PathCfg::new(10, 20, 34);
    let mut n = Net::new(&[p], &[0, 0], cfg(cc), 11);
    n.add_tcp(0, TcpConfig::default(), ms(0));
    n.run_until(ms(60_000), |_| false);
    let (per, total) = n.mptcp_bytes();
    assert_eq!(per.len(), 2, "two subflows over the one path");
    (total, n.tcp[0].read)
}

#[test]
fn goal2_coupled_takes_no_more_than_tcp_at_a_shared_bottleneck() {
    for cc in [CoupledKind::Lia, CoupledKind::Olia, CoupledKind::Balia] {
        let (m, t) = shared_bottleneck(cc);
        let r = m as f64 / t as f64;
        eprintln!(
            "{cc:?}: mptcp {:.2} Mbit/s, tcp {:.2} Mbit/s, ratio {r:.2}",
            mbps(m, 60.0),
            mbps(t, 60.0)
        );
        assert!(r <= 1.3, "{cc:?}: MPTCP took {r:.2}x the TCP's share");
        assert!(mbps(m + t, 60.0) > 9.0, "the bottleneck stays full");
    }
    let (m, t) = shared_bottleneck(CoupledKind::Uncoupled);
    let r = m as f64 / t as f64;
    eprintln!("uncoupled: ratio {r:.2}");
    assert!(
        r >= 1.5,
        "two uncoupled subflows behave as two TCPs: {r:.2}"
    );
}

#[test]
fn goal3_traffic_moves_away_from_the_congested_path() {
    // Path 0 is shared with two NewReno flows, path 1 is free; both 10 Mbit/s.
    let p = PathCfg::new(10, 20, 34);
    for cc in [CoupledKind::Lia, CoupledKind::Olia, CoupledKind::Balia] {
        let mut n = Net::new(&[p, p], &[0, 1], cfg(cc), 5);
        n.add_tcp(0, TcpConfig::default(), ms(0));
        n.add_tcp(0, TcpConfig::default(), ms(0));
        n.run_until(ms(60_000), |_| false);
        let (per, _) = n.mptcp_bytes();
        let tcp_mean = (n.tcp[0].read + n.tcp[1].read) / 2;
        eprintln!("{cc:?}: subflows {per:?}, tcp on path 0 {tcp_mean}");
        assert!(
            per[1] > 4 * per[0],
            "{cc:?}: most data on the free path: {per:?}"
        );
        assert!(
            per[0] < tcp_mean,
            "{cc:?}: on the congested path the subflow takes less than a TCP"
        );
    }
}
