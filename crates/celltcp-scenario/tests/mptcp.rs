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
    // (how the minimum-RTT scheduler splits one path between two subflows is the run's draw:
    // the second carries 6.6 % here, 10 % or more before the receive window started at Linux's
    // 80 KB payload share)
    for s in sub {
        assert!(s["bytes_acked"].as_u64().unwrap() > bytes / 100, "each subflow carries data: {f}");
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
    // examples/mptcp.toml: a download over a 20 and a 10 Mbit/s path; one subflow per interface,
    // together well above the faster path alone
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mptcp.toml")).unwrap();
    let out = run_ok(&text, 1);
    let f = &out.summary["flows"][0];
    assert_eq!(f["mptcp"]["cc"], "olia");
    let sub = f["mptcp"]["subflows"].as_array().unwrap();
    assert_eq!(sub.len(), 2, "{f}");
    assert_ne!(sub[0]["remote"].as_str().unwrap().split(':').next(), sub[1]["remote"].as_str().unwrap().split(':').next(), "{f}");
    let g = f["goodput_bps"].as_f64().unwrap();
    eprintln!("example: {:.2} Mbit/s", g / 1e6);
    assert!(g > 24e6 && g < 30e6, "{g}: {f}");
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

// ---------------------------------------------------------------- two interfaces, two paths

/// Host `h` with two interfaces: `h`–`a` and `h`–`b`, each 10 Mbit/s with 10 ms one way and a
/// drop-tail queue of about one BDP (40 KB), then 1 Gbit/s links `a`/`b`–`core`–`server`. `h`
/// is multihomed (both its links lead to routers): its second interface has its own address,
/// and the paths are disjoint up to `core`. `extra_a` is added to the `h`–`a` link's table
/// (loss, trace), `flows` appended.
fn two_paths(duration_s: u32, extra_a: &str, flows: &str) -> String {
    format!(
        r#"duration = "{duration_s}s"
[[node]]
name = "a"
kind = "router"
[[node]]
name = "b"
kind = "router"
[[node]]
name = "core"
kind = "router"
[[link]]
name = "path-a"
between = ["h", "a"]
rate = "10Mbps"
delay = "10ms"
queue = "40KB"
{extra_a}
[[link]]
name = "path-b"
between = ["h", "b"]
rate = "10Mbps"
delay = "10ms"
queue = "40KB"
[[link]]
between = ["a", "core"]
rate = "1Gbps"
delay = "5ms"
[[link]]
between = ["b", "core"]
rate = "1Gbps"
delay = "5ms"
[[link]]
between = ["core", "server"]
rate = "1Gbps"
delay = "1ms"
{flows}
"#
    )
}

fn bulk(name: &str, extra: &str) -> String {
    format!("[[flow]]\nname = \"{name}\"\napp = \"bulk\"\nfrom = \"h\"\nto = \"server\"\ncc = \"newreno\"\n{extra}\n")
}

/// Bytes each subflow of flow `f` carried (acknowledged at the subflow level), keyed by whether
/// it leaves by `path-a` (the host's first address).
fn bytes_by_path(out: &celltcp_scenario::RunOutput, f: usize) -> (u64, u64) {
    let h = out.summary["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "h").unwrap();
    let addr_a = h["interfaces"].as_array().unwrap().iter().find(|i| i["name"] == "path-a").unwrap()["address"].as_str().unwrap().to_string();
    let (mut a, mut b) = (0, 0);
    for s in out.summary["flows"][f]["mptcp"]["subflows"].as_array().unwrap() {
        let bytes = s["bytes_acked"].as_u64().unwrap();
        if s["local"].as_str().unwrap().split(':').next() == Some(addr_a.as_str()) {
            a += bytes;
        } else {
            b += bytes;
        }
    }
    (a, b)
}

#[test]
fn over_two_disjoint_paths_mptcp_aggregates_at_least_1_8_times_one_path() {
    // RFC 6356 goal 1 in spirit (and issue 15): over two disjoint 10 Mbit/s paths a coupled
    // MPTCP connection (fullmesh: one subflow per interface) gets at least 1.8x the goodput of
    // one NewReno TCP over one of them alone.
    let tcp = run_ok(&two_paths(30, "", &bulk("tcp", "bind = \"path-a\"")), 1);
    let one = tcp.summary["flows"][0]["goodput_bps"].as_f64().unwrap();
    assert!(one > 8.5e6 && one < 10e6, "one path: {one}");
    for cc in ["lia", "olia", "balia"] {
        let out = run_ok(&two_paths(30, "", &bulk("mp", &format!("mptcp = {{ cc = \"{cc}\" }}"))), 1);
        let f = &out.summary["flows"][0];
        let g = f["goodput_bps"].as_f64().unwrap();
        let sub = f["mptcp"]["subflows"].as_array().unwrap();
        assert_eq!(sub.len(), 2, "{cc}: one subflow per interface: {f}");
        assert_ne!(sub[0]["local"].as_str().unwrap().split(':').next(), sub[1]["local"].as_str().unwrap().split(':').next(), "{f}");
        let (a, b) = bytes_by_path(&out, 0);
        eprintln!("{cc}: {:.2} Mbit/s = {:.2}x one path ({:.2}); path a {a} B, path b {b} B", g / 1e6, g / one, one / 1e6);
        assert!(g >= 1.8 * one, "{cc}: {g} < 1.8 x {one}: {f}");
    }
}

#[test]
fn a_coupled_connection_moves_its_traffic_away_from_the_path_it_shares_with_tcp() {
    // RFC 6356 goal 3: path a also carries a NewReno TCP flow; a coupled MPTCP connection puts
    // most of its data on the free path b (uncoupled subflows each take a fair share of their
    // path, so the uncoupled share on path a is the reference a coupled one must stay well below).
    let flows = |cc: &str| bulk("tcp", "bind = \"path-a\"") + &bulk("mp", &format!("mptcp = {{ cc = \"{cc}\" }}"));
    let share = |cc: &str| {
        let out = run_ok(&two_paths(40, "", &flows(cc)), 2);
        let (a, b) = bytes_by_path(&out, 1);
        let tcp = out.summary["flows"][0]["goodput_bps"].as_f64().unwrap();
        let mp = out.summary["flows"][1]["goodput_bps"].as_f64().unwrap();
        eprintln!("{cc}: MPTCP share on the shared path {:.1} %, TCP {:.2} Mbit/s, MPTCP {:.2} Mbit/s", 100.0 * a as f64 / (a + b) as f64, tcp / 1e6, mp / 1e6);
        (a as f64 / (a + b) as f64, tcp)
    };
    let (unc, tcp_unc) = share("uncoupled");
    // measured (40 s, seed 2): uncoupled 31.5 % (TCP 5.3 Mbit/s); LIA 26.0 % (6.3), OLIA 23.4 %
    // (6.8), BALIA 11.5 % (8.4). LIA is known to leave too much on the congested path (Khalili
    // et al. 2013, the reason for OLIA); each coupled control must still do clearly better than
    // uncoupled subflows, and leave the TCP flow more of its path.
    let all: Vec<_> = ["lia", "olia", "balia"].into_iter().map(|cc| (cc, share(cc))).collect();
    for (cc, (s, tcp)) in all {
        assert!(s < 0.3 && s < unc * 0.9, "{cc}: {:.1} % of its data on the shared path (uncoupled {:.1} %)", 100.0 * s, 100.0 * unc);
        assert!(tcp > 6e6 && tcp > tcp_unc * 1.1, "{cc}: the TCP flow got {tcp} (beside uncoupled subflows {tcp_unc})");
    }
}

#[test]
fn every_byte_arrives_once_with_loss_on_one_path() {
    // Data-level conservation over two real paths, one with 1 % random loss each way.
    let bytes = 4_000_000u64;
    for (i, cc) in ["lia", "olia", "balia", "uncoupled"].into_iter().enumerate() {
        let out = run_ok(&two_paths(60, "loss = 0.01", &bulk("mp", &format!("bytes = \"{bytes}B\"\nmptcp = {{ cc = \"{cc}\" }}"))), 20 + i as u64);
        let f = &out.summary["flows"][0];
        assert_eq!(f["bytes_delivered"].as_u64(), Some(bytes), "{cc}: {f}");
        assert_eq!(f["completed"], true, "{cc}: {f}");
        assert_eq!(f["mptcp"]["bytes_data_acked"].as_u64(), Some(bytes), "{cc}: {f}");
        let (a, b) = bytes_by_path(&out, 0);
        assert!(a > 0 && b > 0, "{cc}: both paths carry data: {a} {b}");
        assert!(a + b >= bytes, "{cc}: {a} + {b} < {bytes}");
    }
}

#[test]
fn a_path_that_dies_mid_transfer_has_its_data_reinjected_and_the_transfer_completes() {
    // Path a's data direction stops at 3 s (a Mahimahi trace with delivery opportunities for
    // 3 s only, then none for 100 s): its subflow times out, its data not DATA_ACKed is
    // reinjected on path b (upstream Linux's stale subflows), and the 12 MB transfer completes.
    let dir = std::env::temp_dir().join(format!("celltcp-mptcp-dies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("dies.trace");
    let mut lines: Vec<String> = (1..=3000).map(|t| t.to_string()).collect();
    lines.push("100000".into());
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let bytes = 12_000_000u64;
    let extra = format!("trace = \"{}\"", trace.display());
    for cc in ["olia", "lia"] {
        let out = run_ok(&two_paths(40, &extra, &bulk("mp", &format!("bytes = \"{bytes}B\"\nmptcp = {{ cc = \"{cc}\" }}"))), 4);
        let f = &out.summary["flows"][0];
        let m = &f["mptcp"];
        assert_eq!(f["bytes_delivered"].as_u64(), Some(bytes), "{cc}: {f}");
        assert_eq!(f["completed"], true, "{cc}: {f}");
        assert!(m["bytes_reinjected"].as_u64().unwrap() > 0, "{cc}: data was reinjected: {m}");
        let dead = m["subflows"].as_array().unwrap().iter().find(|s| s["timeouts"].as_u64().unwrap() > 0);
        assert!(dead.is_some(), "{cc}: the dead path's subflow timed out: {m}");
        // once path a is dead everything goes by path b: the completion takes about
        // (12 MB - what path a carried) / 10 Mbit/s
        let t = f["completion_time_s"].as_f64().unwrap();
        eprintln!("{cc}: completed at {t:.2} s, reinjected {} B, subflows {}", m["bytes_reinjected"], m["subflows"]);
        // (path b alone would take 12 MB / 9.6 Mbit/s = 10 s). The connection's receive
        // window starts at Linux's 80 KB payload share of tcp_rmem[1] and fills with data held
        // behind path a's lost segments until they are reinjected, so path b waits for the
        // dead path's timeouts: olia 10.33 s (7.28 s with a 128 KiB start, 7.48 s with 128 KiB
        // and the rest of today's receiver).
        assert!(t < 11.0, "{cc}: completed at {t} s");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_pcap_of_one_path_holds_only_that_paths_subflow() {
    // tshark on path a's capture: the initial subflow's MP_CAPABLE handshake and its DSS data,
    // from the host's first address only; the join (MP_JOIN) and the second address travel by
    // path b. Skipped (with a note) without tshark.
    if std::process::Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("note: tshark is not installed; skipping the Wireshark MPTCP check");
        return;
    }
    let dir = std::env::temp_dir().join(format!("celltcp-mptcp-path-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let text = two_paths(10, "pcap = true", &bulk("mp", "bytes = \"2MB\"\nmptcp = true"));
    let out = run(&text, &[], &RunOptions { seed: Some(6), out_dir: Some(dir.clone()), ..Default::default() }, &mut |_| true).unwrap();
    let h = out.summary["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "h").unwrap();
    let addr = |name: &str| h["interfaces"].as_array().unwrap().iter().find(|i| i["name"] == name).unwrap()["address"].as_str().unwrap().to_string();
    let (a, b) = (addr("path-a"), addr("path-b"));
    assert_ne!(a, b);
    let pcap = dir.join("pcap/path-a.pcap");
    let count = |filter: &str| -> u64 {
        let o = std::process::Command::new("tshark").args(["-r", pcap.to_str().unwrap(), "-Y", filter, "-T", "fields", "-e", "frame.number"]).output().unwrap();
        assert!(o.status.success(), "tshark: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.trim().is_empty()).count() as u64
    };
    assert!(count("mptcp") > 100);
    assert_eq!(count("tcp.options.mptcp.subtype == 0 && tcp.flags.syn == 1"), 2, "MP_CAPABLE SYN and SYN/ACK");
    assert_eq!(count("tcp.options.mptcp.subtype == 1"), 0, "no MP_JOIN on path a");
    assert_eq!(count(&format!("ip.addr == {b}")), 0, "the second address never crosses path a");
    assert!(count(&format!("ip.src == {a} && tcp.len > 0 && tcp.options.mptcp.rawdataseqno")) > 100);
    let (pa, pb) = bytes_by_path(&out, 0);
    assert!(pa > 0 && pb > 0, "{pa} {pb}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[[event]]`s taking interface `iface` down at `down` s and, if given, back up at `up` s.
fn down_up(iface: &str, down: f64, up: Option<f64>) -> String {
    let mut s = format!("[[event]]\nat = \"{down}s\"\ninterface = \"{iface}\"\nstate = \"down\"\n");
    if let Some(u) = up {
        s += &format!("[[event]]\nat = \"{u}s\"\ninterface = \"{iface}\"\nstate = \"up\"\n");
    }
    s
}

#[test]
fn an_interface_that_goes_down_and_comes_back_loses_and_regains_its_subflow() {
    // Path b (the host's second interface) is down from 5 s to 10 s of a 20 s download. At 5 s
    // the connection removes its address (the subflow fails, REMOVE_ADDR); at 10 s the address
    // comes back under a new id and the path manager joins a new subflow from it. Against the
    // same run whose interface stays down: more goodput, and the third subflow carries about
    // (20 - 10) s of path b.
    let text = |up: Option<f64>| two_paths(20, "", &(bulk("mp", "mptcp = { cc = \"olia\" }") + &down_up("path-b", 5.0, up)));
    let back = run_ok(&text(Some(10.0)), 3);
    let gone = run_ok(&text(None), 3);
    let subs = |o: &celltcp_scenario::RunOutput| o.summary["flows"][0]["mptcp"]["subflows"].as_array().unwrap().clone();
    let (sb, sg) = (subs(&back), subs(&gone));
    assert_eq!(sb.len(), 3, "initial (path a), path b, path b again: {sb:?}");
    assert_eq!(sg.len(), 2, "{sg:?}");
    assert_eq!(sb[1]["local"].as_str().unwrap().split(':').next(), sb[2]["local"].as_str().unwrap().split(':').next(), "the new subflow leaves from the same address");
    let new = sb[2]["bytes_acked"].as_u64().unwrap() as f64;
    // 10 s of a 10 Mbit/s path shared by a coupled control: at least a third of it
    assert!(new > 10.0 * 10e6 / 8.0 / 3.0, "the new subflow carried {new} B: {sb:?}");
    let g = |o: &celltcp_scenario::RunOutput| o.summary["flows"][0]["goodput_bps"].as_f64().unwrap();
    eprintln!("down 5-10 s: {:.2} Mbit/s, new subflow {new} B; down from 5 s: {:.2} Mbit/s", g(&back) / 1e6, g(&gone) / 1e6);
    // gone: 5 s of two paths then 15 s of one, about 12.5 Mbit/s at most; back: about 15
    assert!(g(&back) > g(&gone) * 1.12, "{} against {}", g(&back), g(&gone));
    assert!(g(&gone) < 13.0e6 && g(&gone) > 8.0e6, "{}", g(&gone));
}

#[test]
fn the_first_interface_going_down_leaves_the_connection_on_the_other() {
    // Path a carries the initial subflow (and the host's first address). Down at 3 s for good:
    // the connection goes on over path b, every one of the 12 MB arrives once, and it ends
    // about when path b alone would carry the rest.
    let bytes = 12_000_000u64;
    let out = run_ok(&two_paths(40, "", &(bulk("mp", &format!("bytes = \"{bytes}B\"\nmptcp = {{ cc = \"olia\" }}")) + &down_up("path-a", 3.0, None))), 5);
    let f = &out.summary["flows"][0];
    assert_eq!(f["bytes_delivered"].as_u64(), Some(bytes), "{f}");
    assert_eq!(f["completed"], true, "{f}");
    let t = f["completion_time_s"].as_f64().unwrap();
    // about 3 s of two paths (~7 MB) then the rest at 9.6 Mbit/s: well under 12 MB over path b alone (10 s)
    assert!(t < 10.0, "completed at {t} s: {f}");
}
