//! A golden end-to-end run: a small seeded grid (buffer × loss × congestion control) whose
//! results table is checked against `snapshots/golden__grid.snap`. Any change of behaviour —
//! intended or not — shows up here as a diff to review (`cargo insta review`), not silently.

use celltcp_validation::*;

#[test]
fn grid() {
    let mut table = String::from("cc       buffer  loss    goodput_Mbps  retx  timeouts  rtt_mean_ms\n");
    for cc in ["newreno", "cubic", "bbr"] {
        for queue in ["8p", "40p", "160p"] {
            for loss in [0.0, 0.001, 0.01] {
                let text = single_link("20s", "10Mbps", "20ms", queue, loss, &format!("cc = \"{cc}\""));
                let out = run_text(&text, 42);
                table += &format!(
                    "{cc:<8} {queue:>6}  {loss:<6}  {:>12.3}  {:>4}  {:>8}  {:>11.2}\n",
                    flow_f64(&out, 0, "goodput_bps") / 1e6,
                    flow_f64(&out, 0, "retransmitted_segments"),
                    flow_f64(&out, 0, "timeouts"),
                    flow_f64(&out, 0, "rtt_mean_ms"),
                );
            }
        }
    }
    insta::assert_snapshot!(table);
}
