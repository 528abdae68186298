//! `[[event]]`: interfaces going down and coming back up during a run (docs/scenario.md,
//! "Events"). MPTCP's side (address removal and re-addition) is in `tests/mptcp.rs`.

use celltcp_scenario::{run, RunOptions};

fn run_text(text: &str) -> Result<celltcp_scenario::RunOutput, String> {
    run(text, &[], &RunOptions { seed: Some(1), ..Default::default() }, &mut |_| true).map_err(|e| e.to_string())
}

/// A 10 Mbit/s, 40 ms RTT path between `a` and `b` through router `r`, a bulk NewReno
/// download over it, and `events`.
fn path(events: &str) -> String {
    format!(
        "duration = \"20s\"\nrecord_rtt = false\n[[node]]\nname = \"r\"\nkind = \"router\"\n[[link]]\nname = \"access\"\nbetween = [\"a\", \"r\"]\nrate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = \"50KB\"\n[[link]]\nbetween = [\"r\", \"b\"]\nrate = \"1Gbps\"\ndelay = \"10ms\"\n[[flow]]\napp = \"bulk\"\nfrom = \"b\"\nto = \"a\"\ncc = \"newreno\"\n{events}"
    )
}

#[test]
fn a_link_down_stops_tcp_which_times_out_and_resumes_when_it_comes_back() {
    // Down from 5 s to 8 s: nothing is delivered meanwhile, the sender's RTO backs off
    // (RFC 6298 §5.5: 0.2, 0.4, 0.8, 1.6 s... after the last ACK), so it retransmits within
    // one backed-off RTO of 8 s and the flow carries on. Against the same run without events:
    // about 3 s of goodput and that wait lost, not more.
    let ev = "[[event]]\nat = \"5s\"\ninterface = \"access\"\nstate = \"down\"\n[[event]]\nat = \"8s\"\ninterface = \"access\"\nstate = \"up\"\n";
    let with = run_text(&path(ev)).unwrap();
    let without = run_text(&path("")).unwrap();
    let f = &with.summary["flows"][0];
    let g = f["goodput_bps"].as_f64().unwrap();
    let g0 = without.summary["flows"][0]["goodput_bps"].as_f64().unwrap();
    let rtos = f["timeouts"].as_u64().unwrap_or_else(|| panic!("no timeouts: {f}"));
    eprintln!("down 5-8 s: {:.2} Mbit/s, {rtos} RTOs; no event {:.2} Mbit/s", g / 1e6, g0 / 1e6);
    assert!(rtos >= 3, "the sender timed out and backed off: {f}");
    // 3 s down plus at most one backed-off RTO (3.2 s) and a slow start: within 17/20 and 11/20
    assert!(g < g0 * 17.0 / 20.0 && g > g0 * 11.0 / 20.0, "{g} against {g0}");
    // the queue's packets at 5 s and everything offered while down are counted as drops
    let drops: u64 = with.summary["links"].as_array().unwrap().iter().filter(|l| l["name"].as_str().unwrap().starts_with("access")).map(|l| l["drops"].as_u64().unwrap_or(0)).sum();
    assert!(drops > 0, "{}", with.summary["links"]);
}

#[test]
fn event_errors_name_the_key_the_value_and_what_was_expected() {
    let e = run_text(&path("[[event]]\nat = \"5s\"\ninterface = \"wlan0\"\nstate = \"down\"\n")).unwrap_err();
    assert!(e.contains("event[0].interface") && e.contains("\"wlan0\"") && e.contains("expected") && e.contains("access"), "{e}");
    let e = run_text(&path("[[event]]\nat = \"30s\"\ninterface = \"access\"\nstate = \"down\"\n")).unwrap_err();
    assert!(e.contains("event[0].at") && e.contains("30s") && e.contains("before the end of the run"), "{e}");
    let e = run_text(&path("[[event]]\nat = \"5s\"\ninterface = \"access\"\nstate = \"off\"\n")).unwrap_err();
    assert!(e.contains("state") && e.contains("off") && e.contains("down"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn the_coverage_example_runs_as_documented() {
    // examples/mptcp-coverage.toml (docs/scenario.md, "Events"): 28.5 Mbit/s over both paths,
    // LTE's 9.5 while Wi-Fi is down (8-14 s), both again after; three subflows, the third from
    // the Wi-Fi address again.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mptcp-coverage.toml")).unwrap();
    let out = run_text(&text).unwrap();
    let f = &out.summary["flows"][0];
    let sub = f["mptcp"]["subflows"].as_array().unwrap();
    assert_eq!(sub.len(), 3, "{f}");
    assert_eq!(sub[0]["state"], "failed", "{f}");
    assert_eq!(sub[0]["remote"].as_str().unwrap().split(':').next(), sub[2]["remote"].as_str().unwrap().split(':').next(), "{f}");
    let g = f["goodput_bps"].as_f64().unwrap();
    // 8 s and 6 s at about 28.5, 6 s at about 9.5 Mbit/s: 22.8 at most
    assert!(g > 20e6 && g < 23e6, "{g}");
}
