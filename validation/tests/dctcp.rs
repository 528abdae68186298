//! DCTCP (RFC 8257) on a step-marking bottleneck against NewReno on RED with ECN (RFC 3168).
//!
//! Two long flows share a 100 Mbit/s bottleneck, 8 ms base RTT (BDP ≈ 67 packets of 1500 bytes).
//! DCTCP with a step threshold K = 20 packets (above the C·RTT/7 ≈ 10 the DCTCP paper's §3.3
//! asks for full throughput) keeps the queue near K and the link busy; NewReno with ECN halves
//! its window at each mark, DCTCP cuts by α/2 with α small.

use celltcp_scenario::{ColumnData, RunOutput};
use celltcp_validation::*;

const K: f64 = 20.0;

fn dumbbell(cc: &str, queue: &str, ecn: bool) -> String {
    let flows: String = (1..=2)
        .map(|i| format!("[[flow]]\nname = \"f{i}\"\napp = \"bulk\"\nfrom = \"s{i}\"\nto = \"d\"\ncc = \"{cc}\"\necn = {ecn}\nstart = \"{}ms\"\n", (i - 1) * 100))
        .collect();
    format!(
        r#"duration = "10s"
sample_interval = "1ms"
record_rtt = false
[[node]]
name = "left"
kind = "router"
[[node]]
name = "right"
kind = "router"
[[link]]
between = ["s1", "left"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["s2", "left"]
rate = "1Gbps"
delay = "1ms"
[[link]]
name = "bottleneck"
between = ["left", "right"]
rate = "100Mbps"
delay = "2ms"
queue = {queue}
[[link]]
between = ["right", "d"]
rate = "1Gbps"
delay = "1ms"
{flows}"#
    )
}

/// The summary entry of the bottleneck's forward direction.
fn bottleneck(out: &RunOutput) -> usize {
    let links = out.summary["links"].as_array().unwrap();
    links
        .iter()
        .position(|l| l["from"] == "left" && l["to"] == "right")
        .expect("left -> right")
}


fn i64s<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a [i64] {
    let t = out.timeseries.iter().find(|t| t.name == table).unwrap();
    match t.column(col) {
        Some(ColumnData::I64(v)) => v,
        _ => panic!("{table}.{col}"),
    }
}

/// Time-average queue length (packets) of link direction `d` after `from_s`.
fn mean_queue(out: &RunOutput, d: usize, from_s: f64) -> f64 {
    let (t, l, q) = (
        f64_column(out, "queue", "time_s"),
        i64s(out, "queue", "link"),
        f64_column(out, "queue", "queue_pkts"),
    );
    let v: Vec<f64> = (0..t.len())
        .filter(|&i| l[i] == d as i64 && t[i] >= from_s)
        .map(|i| q[i])
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// Ratios cwnd_after / cwnd_before of every decrease between consecutive samples of each flow
/// (1 ms apart: at most one reduction per 8 ms round trip falls between two samples).
fn cut_ratios(out: &RunOutput) -> Vec<f64> {
    let (f, c) = (i64s(out, "tcp", "flow"), f64_column(out, "tcp", "cwnd_bytes"));
    let mut r = vec![];
    for flow in 0..2 {
        let w: Vec<f64> = (0..f.len())
            .filter(|&i| f[i] == flow)
            .map(|i| c[i])
            .collect();
        r.extend(w.windows(2).filter(|p| p[1] < p[0]).map(|p| p[1] / p[0]));
    }
    r.sort_by(f64::total_cmp);
    r
}

#[test]
fn dctcp_keeps_the_queue_near_k_and_the_link_full() {
    let out = run_text(
        &dumbbell(
            "dctcp",
            &format!("{{ type = \"step\", k = {K}, limit = \"200p\" }}"),
            false,
        ),
        1,
    );
    let d = bottleneck(&out);
    let util = link_f64(&out, d, "utilization");
    let q = mean_queue(&out, d, 2.0);
    let marks = link_f64(&out, d, "ecn_marked");
    let drops = link_f64(&out, d, "drops");
    let cuts = cut_ratios(&out);
    let median_cut = cuts[cuts.len() / 2];
    eprintln!("dctcp: utilisation {util:.4}, mean queue {q:.2} pkts (K = {K}), marks {marks}, drops {drops}, {} cuts, median ratio {median_cut:.3}", cuts.len());
    assert!(util >= 0.90, "utilisation {util}");
    // DCTCP's queue oscillates around K with a small amplitude (Alizadeh et al. 2010 §3.3):
    // the time-average stays within K ± 50 %.
    assert!(
        (0.5 * K..=1.5 * K).contains(&q),
        "mean queue {q} vs K = {K}"
    );
    assert!(marks > 0.0);
    assert_eq!(drops, 0.0, "no loss: the queue never reaches its limit");
    // cuts by α/2 with α well below 1
    assert!(median_cut > 0.75, "median cwnd cut ratio {median_cut}");
    for i in 0..2 {
        assert_eq!(
            out.summary["flows"][i]["retransmitted_segments"], 0,
            "{}",
            out.summary["flows"][i]
        );
    }
}

#[test]
fn newreno_with_ecn_on_red_halves_at_each_mark() {
    let red =
        "{ type = \"red\", limit = \"200p\", min_th = 10, max_th = 30, max_p = 0.1, ecn = true }";
    let out = run_text(&dumbbell("newreno", red, true), 1);
    let d = bottleneck(&out);
    let util = link_f64(&out, d, "utilization");
    let q = mean_queue(&out, d, 2.0);
    let marks = link_f64(&out, d, "ecn_marked");
    let cuts = cut_ratios(&out);
    let median_cut = cuts[cuts.len() / 2];
    eprintln!("newreno+red+ecn: utilisation {util:.4}, mean queue {q:.2} pkts, marks {marks}, {} cuts, median ratio {median_cut:.3}", cuts.len());
    assert!(marks > 0.0);
    // RFC 3168 §6.1.2: the window is halved (FlightSize / 2, RFC 5681 eq. 4)
    assert!(
        (0.45..=0.55).contains(&median_cut),
        "median cwnd cut ratio {median_cut}"
    );
    // RED's lagging average lets the slow-start overshoot overflow once (at most one loss
    // episode per flow); every later reduction is an ECN one, without retransmission.
    for i in 0..2 {
        let f = &out.summary["flows"][i];
        assert!(
            f["fast_recoveries"].as_u64().unwrap() <= 1 && f["timeouts"] == 0,
            "{f}"
        );
    }
    assert!(cuts.len() > 20, "{} reductions", cuts.len());
    // halving drains the queue now and then: the link is less busy than under DCTCP (≥ 0.99)
    assert!(util < 0.97, "utilisation {util}");
    // the same flows without ECN lose packets to RED instead
    let out = run_text(
        &dumbbell("newreno", &red.replace("ecn = true", "ecn = false"), false),
        1,
    );
    assert!(link_f64(&out, bottleneck(&out), "drops") > 0.0);
}

fn tshark(args: &[&str]) -> String {
    let out = std::process::Command::new("tshark").args(args).output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            // scripts/install.sh installs tshark; CI must have it
            assert!(
                std::env::var_os("CI").is_none(),
                "tshark is required in CI: {e}"
            );
            eprintln!("note: tshark is not installed; skipping the Wireshark check");
            return String::new();
        }
    };
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn wireshark_sees_ecn_setup_ect_ce_ece_and_cwr() {
    // RFC 3168 on the wire: the SYN carries ECE+CWR (tcp.flags 0x0c2), the SYN-ACK ECE (0x052),
    // data is ECT(0) (ECN field 2) or CE (3) after the step queue, ACKs echo ECE, and the
    // sender's CWR appears on data.
    if std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_err()
    {
        tshark(&[]);
        return;
    }
    let text = dumbbell(
        "dctcp",
        "{ type = \"step\", k = 20, limit = \"200p\" }\npcap = true",
        false,
    )
    .replace("duration = \"10s\"", "duration = \"2s\"");
    let dir = std::env::temp_dir().join(format!("celltcp-dctcp-pcap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let opts = celltcp_scenario::RunOptions {
        seed: Some(1),
        out_dir: Some(dir.clone()),
        ..Default::default()
    };
    celltcp_scenario::run(&text, &[], &opts, &mut |_| true).unwrap();
    let pcap = dir.join("pcap/bottleneck.pcap");
    let pcap = pcap.to_str().unwrap();
    let fields = |filter: &str| -> Vec<String> {
        tshark(&[
            "-r",
            pcap,
            "-Y",
            filter,
            "-T",
            "fields",
            "-e",
            "tcp.flags",
            "-e",
            "ip.dsfield.ecn",
        ])
        .lines()
        .map(str::to_string)
        .collect()
    };
    let syns = fields("tcp.flags.syn == 1 && tcp.flags.ack == 0");
    assert_eq!(syns.len(), 2, "{syns:?}");
    assert!(
        syns.iter().all(|l| l.starts_with("0x00c2\t0")),
        "SYN: ECE+CWR, Not-ECT: {syns:?}"
    );
    let synacks = fields("tcp.flags.syn == 1 && tcp.flags.ack == 1");
    assert!(
        synacks.iter().all(|l| l.starts_with("0x0052\t0")),
        "SYN-ACK: ECE only: {synacks:?}"
    );
    let ect0 = fields("tcp.len > 0 && ip.dsfield.ecn == 2").len();
    let ce = fields("tcp.len > 0 && ip.dsfield.ecn == 3").len();
    let not_ect_data =
        fields("tcp.len > 0 && ip.dsfield.ecn == 0 && tcp.analysis.retransmission").len();
    eprintln!(
        "pcap: {ect0} ECT(0) and {ce} CE data packets, {not_ect_data} Not-ECT retransmissions"
    );
    assert!(ect0 > 1000 && ce > 10, "ECT(0) {ect0}, CE {ce}");
    assert!(
        !fields("tcp.len > 0 && tcp.flags.cwr == 1").is_empty(),
        "CWR on data"
    );
    assert!(
        !fields("tcp.len == 0 && tcp.flags.syn == 0 && tcp.flags.ece == 1").is_empty(),
        "ECE on ACKs"
    );
    assert!(
        fields("tcp.len > 0 && tcp.flags.ece == 1").is_empty(),
        "no ECE on the senders' data"
    );
    std::fs::remove_dir_all(&dir).ok();
}
