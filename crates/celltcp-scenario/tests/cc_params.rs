//! A flow's `cc` parameters reach its controller: the same run with the parameters written out
//! at their defaults is bit-identical to the name alone, and a changed parameter changes it.

use celltcp_scenario::{run, RunOptions};

fn scenario(cc: &str) -> String {
    format!(
        r#"
duration = "10s"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "20ms"
queue = "30p"
[[flow]]
app = "bulk"
from = "a"
to = "b"
cc = {cc}
"#
    )
}

fn flow_summary(cc: &str) -> serde_json::Value {
    let out = run(&scenario(cc), &[], &RunOptions::default(), &mut |_| true).unwrap();
    let mut f = out.summary["flows"][0].clone();
    f.as_object_mut().unwrap().remove("cc");
    f
}

#[test]
fn cc_parameters_from_the_scenario_reach_the_controller() {
    let by_name = flow_summary("\"cubic\"");
    let explicit = flow_summary("{ name = \"cubic\", c = 0.4, beta = 0.7, fast_convergence = true, hystart = true, abc_limit_segments = 2 }");
    assert_eq!(by_name, explicit, "the defaults written out must run exactly as the name alone");
    let halved = flow_summary("{ name = \"cubic\", beta = 0.5 }");
    assert_ne!(by_name["retransmitted_segments"], serde_json::Value::Null);
    assert_ne!(by_name, halved, "beta = 0.5 must change the run");
}

#[test]
fn the_config_as_run_lists_every_cc_parameter() {
    let cfg = celltcp_scenario::validate(&scenario("\"bbr\""), &[], None).unwrap();
    let cc = &cfg["flow"][0]["cc"];
    assert_eq!(cc["name"], "bbr");
    assert_eq!(cc["probe_rtt_duration"], "200ms");
    assert_eq!(cc["cwnd_gain"], 2.0);
}
