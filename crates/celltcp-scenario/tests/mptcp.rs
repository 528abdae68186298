//! MPTCP flows in scenarios (`mptcp = {...}` on a bulk or iperf flow, RFC 8684): the model of
//! `celltcp-mptcp` through the node stack, checked end to end against RFC 6356's goals and
//! data-level byte conservation.

use celltcp_scenario::{run, RunOptions};

fn run_ok(text: &str, seed: u64) -> celltcp_scenario::RunOutput {
    run(text, &[], &RunOptions { seed: Some(seed), ..Default::default() }, &mut |_| true).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run_err(text: &str) -> String {
    match run(text, &[], &RunOptions::default(), &mut |_| true) {
        Ok(_) => panic!("expected an error\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// One 10 Mbit/s, 40 ms RTT path with a BDP queue between `a` and `b`.
fn one_path(flow: &str) -> String {
    format!(
        "duration = \"20s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = \"50KB\"\n[[flow]]\napp = \"bulk\"\nfrom = \"a\"\nto = \"b\"\n{flow}\n"
    )
}

#[test]
fn ndiffports_opens_n_subflows_over_one_pair_and_delivers_every_byte() {
    // Two subflows of one connection over the one address pair (paper 002's ndiffports): the
    // transfer completes with every byte, both subflows carry data, and the summary lists them
    // with their 4-tuples (same addresses, different source ports).
    let bytes = 3_000_000u64;
    let text = one_path(&format!("bytes = \"{bytes}B\"\nmptcp = {{ path_manager = \"ndiffports\", subflows = 2 }}"));
    let out = run_ok(&text, 1);
    let f = &out.summary["flows"][0];
    assert_eq!(f["bytes_delivered"].as_u64(), Some(bytes), "{f}");
    assert_eq!(f["completed"], true, "{f}");
    let sub = f["mptcp"]["subflows"].as_array().unwrap_or_else(|| panic!("no mptcp.subflows: {f}"));
    assert_eq!(sub.len(), 2, "{f}");
    let (l0, l1) = (sub[0]["local"].as_str().unwrap(), sub[1]["local"].as_str().unwrap());
    assert_ne!(l0, l1);
    assert_eq!(l0.split(':').next(), l1.split(':').next());
    let acked: u64 = sub.iter().map(|s| s["bytes_acked"].as_u64().unwrap()).sum();
    for s in sub {
        assert!(s["bytes_acked"].as_u64().unwrap() > bytes / 10, "each subflow carries data: {f}");
    }
    // every byte is DATA_ACKed once at the data level; subflow-level ACKs cover at least that
    assert!(acked >= bytes, "{acked} < {bytes}: {f}");
    // the goodput is the connection's: one 10 Mbit/s path is not exceeded
    let g = f["goodput_bps"].as_f64().unwrap();
    assert!(g > 5e6 && g < 10e6, "goodput {g}: {f}");
}

#[test]
fn mptcp_errors_name_the_key_the_value_and_what_was_expected() {
    let e = run_err(&one_path("mptcp = { cc = \"cubic\" }"));
    assert!(e.contains("flow[0].mptcp.cc") && e.contains("\"cubic\"") && e.contains("expected"), "{e}");
    let e = run_err(&one_path("mptcp = { subflows = 0 }"));
    assert!(e.contains("mptcp.subflows") && e.contains("1..=8"), "{e}");
    let e = run_err(&one_path("mptcp = { schedule = \"minrtt\" }"));
    assert!(e.contains("schedule"), "{e}");
    let e = run_err("duration = \"5s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"1ms\"\n[[flow]]\napp = \"udp\"\nfrom = \"a\"\nto = \"b\"\nmptcp = true\n");
    assert!(e.contains("mptcp"), "{e}");
}
