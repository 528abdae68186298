//! Linux-like loss recovery on plain links (issue 12), against the kernel's rules.

use celltcp_validation::*;

#[test]
fn linux_no_rto_on_100mbit_100ms_with_1e4_loss() {
    // Issue 12: Linux's RTO is at least SRTT + tcp_rto_min (tcp_rtt_estimator / tcp_set_rto), so
    // a fast retransmit on a 100 ms path completes before the timer, and each random loss costs
    // about one retransmission, never a go-back-N of the window. Before the change (RTO =
    // max(200 ms, SRTT + 4 RTTVAR)) the 2000-packet case timed out (seed 1: 1 RTO, 513
    // retransmissions; with Linux's RTO 0 and 71; with Linux's HyStart too, 0 and 7).
    for (queue, cc) in [("2000p", "cubic"), ("1000p", "newreno")] {
        let text = single_link("30s", "100Mbps", "50ms", queue, 1e-4, &format!("cc = \"{cc}\""));
        for seed in 1..=3 {
            let out = run_text(&text, seed);
            let to = flow_f64(&out, 0, "timeouts");
            let rtx = flow_f64(&out, 0, "retransmitted_segments");
            let fr = flow_f64(&out, 0, "fast_recoveries");
            println!("{cc} queue {queue} seed {seed}: timeouts {to} retransmissions {rtx} fast recoveries {fr}");
            assert_eq!(to, 0.0, "{cc} {queue} seed {seed}: RTO");
            if queue == "2000p" {
                // ~70 losses in 30 s (random plus a few at the buffer): no go-back-N
                assert!(rtx < 300.0, "{cc} {queue} seed {seed}: {rtx} retransmissions");
            }
        }
    }
}
