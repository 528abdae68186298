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

#[test]
fn every_data_byte_arrives_once_under_loss_for_every_control_and_scheduler() {
    // Data-level byte conservation (RFC 8684 §3.3): with 1 % random loss each way, the
    // receiving application reads exactly the bytes written, for every coupled control and
    // scheduler (redundant sends each byte on every subflow: the copies are dropped as
    // duplicates), and both DATA_FINs complete (the flow is `completed`).
    let bytes = 1_500_000u64;
    for (i, (cc, sched)) in [("lia", "minrtt"), ("olia", "roundrobin"), ("balia", "redundant"), ("uncoupled", "minrtt")].into_iter().enumerate() {
        let text = format!(
            "duration = \"60s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"20ms\"\nqueue = \"50KB\"\nloss = 0.01\n[[flow]]\napp = \"bulk\"\nfrom = \"a\"\nto = \"b\"\nbytes = \"{bytes}B\"\nmptcp = {{ cc = \"{cc}\", scheduler = \"{sched}\", path_manager = \"ndiffports\", subflows = 3 }}\n"
        );
        let out = run_ok(&text, 10 + i as u64);
        let f = &out.summary["flows"][0];
        let m = &f["mptcp"];
        assert_eq!(f["bytes_delivered"].as_u64(), Some(bytes), "{cc}/{sched}: {f}");
        assert_eq!(f["completed"], true, "{cc}/{sched}: {f}");
        assert_eq!(m["bytes_read"].as_u64(), Some(bytes), "{cc}/{sched}: {m}");
        assert_eq!(m["bytes_data_acked"].as_u64(), Some(bytes), "{cc}/{sched}: {m}");
        assert_eq!(m["subflows"].as_array().unwrap().len(), 3, "{cc}/{sched}: {m}");
        assert!(f["retransmitted_segments"].as_u64().unwrap() > 0, "1 % loss: {f}");
        if sched == "redundant" {
            assert!(m["duplicate_bytes_received"].as_u64().unwrap() > bytes / 2, "redundant copies are dropped: {m}");
        }
    }
}

#[test]
fn an_iperf_reverse_flow_sends_from_the_listener_and_reports_its_subflows() {
    // `iperf3 -R` over MPTCP: the server's accepted connection writes; the joins reach it by
    // token. Its subflows are the ones listed, and the time series has a row per subflow per
    // sample.
    let text = "duration = \"6s\"\nsample_interval = \"100ms\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"10ms\"\n[[flow]]\napp = \"iperf\"\nfrom = \"a\"\nto = \"b\"\nreverse = true\nmptcp = { path_manager = \"ndiffports\", subflows = 2, cc = \"lia\" }\n";
    let out = run_ok(text, 3);
    let f = &out.summary["flows"][0];
    let sub = f["mptcp"]["subflows"].as_array().unwrap();
    assert_eq!(sub.len(), 2, "{f}");
    for s in sub {
        assert!(s["local"].as_str().unwrap().ends_with(":5201"), "the server's subflows: {f}");
        assert_eq!(s["state"], "established", "{f}");
        assert!(s["bytes_acked"].as_u64().unwrap() > 500_000, "{f}");
    }
    let g = f["goodput_bps"].as_f64().unwrap();
    assert!(g > 7e6 && g < 10e6, "{g}: {f}");
    let t = out.timeseries.iter().find(|t| t.name == "mptcp_subflows").expect("an mptcp_subflows table");
    let rows = t.rows();
    // 61 samples (0..6 s every 100 ms) x 2 subflows, less the samples before they existed
    assert!((100..=122).contains(&rows), "{rows} rows");
    assert!(!out.timeseries.iter().any(|t| t.name == "segments"));
}

#[test]
fn plain_tcp_runs_have_no_mptcp_table_or_field() {
    let out = run_ok(&one_path("bytes = \"100KB\""), 1);
    assert!(out.summary["flows"][0].get("mptcp").is_none());
    assert!(!out.timeseries.iter().any(|t| t.name == "mptcp_subflows"));
    // and `mptcp = false` is plain TCP
    let out = run_ok(&one_path("bytes = \"100KB\"\nmptcp = false"), 1);
    assert!(out.summary["flows"][0].get("mptcp").is_none());
}

#[test]
fn the_example_runs_as_documented() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mptcp.toml")).unwrap();
    let out = run_ok(&text, 1);
    let f = &out.summary["flows"][0];
    assert_eq!(f["bytes_delivered"].as_u64(), Some(8 << 20), "{f}");
    assert_eq!(f["mptcp"]["cc"], "olia");
    assert_eq!(f["mptcp"]["subflows"].as_array().unwrap().len(), 2);
}

#[test]
fn wireshark_reads_the_mptcp_options_of_a_scenario_pcap() {
    // tshark's MPTCP dissector on the link's pcap: MP_CAPABLE on the initial handshake, MP_JOIN
    // on the second subflow's, DSS on the data; its count of data segments with a DSS mapping
    // is the sender's count of data segments. Skipped (with a note) without tshark
    // (`scripts/install.sh` installs it).
    if std::process::Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("note: tshark is not installed; skipping the Wireshark MPTCP check");
        return;
    }
    let dir = std::env::temp_dir().join(format!("celltcp-mptcp-tshark-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let text = "duration = \"10s\"\n[[link]]\nname = \"wire\"\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\ndelay = \"10ms\"\npcap = true\n[[flow]]\napp = \"bulk\"\nfrom = \"a\"\nto = \"b\"\nbytes = \"1MB\"\nmptcp = { path_manager = \"ndiffports\", subflows = 2 }\n";
    let out = run(text, &[], &RunOptions { seed: Some(5), out_dir: Some(dir.clone()), ..Default::default() }, &mut |_| true).unwrap();
    let f = &out.summary["flows"][0];
    let pcap = dir.join("pcap/wire.pcap");
    let count = |filter: &str| -> u64 {
        let o = std::process::Command::new("tshark").args(["-r", pcap.to_str().unwrap(), "-Y", filter, "-T", "fields", "-e", "frame.number"]).output().unwrap();
        assert!(o.status.success(), "tshark: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.trim().is_empty()).count() as u64
    };
    assert!(count("mptcp") > 100, "tshark sees MPTCP options");
    // MP_CAPABLE (subtype 0) on SYN, SYN/ACK and third ACK (and the first data segment)
    assert!(count("tcp.options.mptcp.subtype == 0 && tcp.flags.syn == 1") == 2);
    // MP_JOIN (subtype 1) on the second subflow's SYN, SYN/ACK, ACK
    assert_eq!(count("tcp.options.mptcp.subtype == 1"), 3);
    // the capture is of what the link carried: the sender's data segments less those its queue
    // dropped; each carries a DSS with a mapping (a 64-bit DSN), or on the first data of the
    // initial subflow MP_CAPABLE with the data-level length (RFC 8684 §3.1)
    let data = count("tcp.dstport == 5201 && tcp.len > 0");
    assert_eq!(data, f["data_segments_sent"].as_u64().unwrap() - f["data_packets_lost"].as_u64().unwrap(), "{f}");
    let dss = count("tcp.dstport == 5201 && tcp.len > 0 && tcp.options.mptcp.subtype == 2 && tcp.options.mptcp.rawdataseqno");
    let capable = count("tcp.dstport == 5201 && tcp.len > 0 && tcp.options.mptcp.subtype == 0");
    assert!(capable >= 1 && dss > 100, "{capable} {dss}");
    assert_eq!(dss + capable, data);
    let _ = std::fs::remove_dir_all(&dir);
}
