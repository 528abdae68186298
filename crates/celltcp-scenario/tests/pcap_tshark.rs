//! The pcap files against Wireshark's own analysis: tshark reads a capture of a lossy transfer and
//! its count of retransmissions and its sequence numbers must agree with celltcp's summary.
//! Skipped (with a note) where tshark is not installed; `scripts/install.sh` installs it.

use std::process::Command;

use celltcp_scenario::{run, RunOptions};

const SCENARIO: &str = r#"duration = "30s"

[[link]]
name = "wire"
between = ["sender", "receiver"]
rate = "20Mbps"
delay = "10ms"
queue = "40p"
loss = 0.01
pcap = true

[[flow]]
app = "bulk"
from = "sender"
to = "receiver"
cc = "cubic"
bytes = "3MB"
"#;

fn tshark(args: &[&str]) -> Option<String> {
    let out = Command::new("tshark").args(args).output().ok()?;
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn tshark_agrees_with_the_summary_on_retransmissions_and_sequence_numbers() {
    if Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("note: tshark is not installed; skipping the Wireshark cross-check");
        return;
    }
    let dir = std::env::temp_dir().join(format!("celltcp-tshark-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = run(SCENARIO, &[], &RunOptions { seed: Some(11), out_dir: Some(dir.clone()), ..Default::default() }, &mut |_| true).unwrap();
    let flow = &out.summary["flows"][0];
    let retx = flow["retransmitted_segments"].as_u64().unwrap();
    assert!(retx > 5, "the scenario should lose some segments: {flow}");
    let pcap = dir.join("pcap/wire.pcap");
    let pcap = pcap.to_str().unwrap();

    // Wireshark classifies a segment that repeats sequence space as a retransmission, a fast
    // retransmission, a spurious one, or (when it follows the previous segment closely) as
    // out-of-order; together these are the sender's retransmissions.
    let flagged = tshark(&[
        "-r",
        pcap,
        "-Y",
        "(tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order) && tcp.dstport == 5201",
        "-T",
        "fields",
        "-e",
        "frame.number",
    ])
    .unwrap();
    let n = flagged.lines().filter(|l| !l.trim().is_empty()).count() as u64;
    assert_eq!(n, retx, "tshark flags {n} retransmissions, the summary counts {retx}");

    // Relative sequence numbers: the highest data byte the sender put on the wire is the size of
    // the transfer, and the receiver's last ACK covers it plus the FIN.
    let data = tshark(&["-r", pcap, "-Y", "tcp.dstport == 5201 && tcp.len > 0", "-T", "fields", "-e", "tcp.seq", "-e", "tcp.len"]).unwrap();
    let (mut top, mut repeats) = (0u64, 0u64);
    for l in data.lines() {
        let mut it = l.split_whitespace().map(|x| x.parse::<u64>().unwrap());
        let (seq, len) = (it.next().unwrap(), it.next().unwrap());
        // independently of Wireshark's heuristics: a segment starting below the highest byte
        // already sent is a retransmission
        if seq < top {
            repeats += 1;
        }
        top = top.max(seq + len);
    }
    assert_eq!(repeats, retx, "sequence numbers show {repeats} retransmissions, the summary {retx}");
    let bytes = flow["bytes_delivered"].as_u64().unwrap();
    assert_eq!(bytes, 3 << 20);
    assert_eq!(top, bytes + 1, "relative sequence numbers start at 1 after the SYN");
    let acks = tshark(&["-r", pcap, "-Y", "tcp.srcport == 5201", "-T", "fields", "-e", "tcp.ack"]).unwrap();
    let last_ack = acks.lines().filter_map(|l| l.trim().parse::<u64>().ok()).max().unwrap();
    assert_eq!(last_ack, bytes + 2, "the last ACK covers the data and the FIN");

    // the handshake options decode: MSS 1460 on the SYN (1500 − 40), window scaling, SACK, timestamps
    let syn = tshark(&["-r", pcap, "-Y", "tcp.flags.syn == 1 && tcp.flags.ack == 0", "-T", "fields", "-e", "tcp.options.mss_val", "-e", "tcp.options.sack_perm", "-e", "tcp.options.wscale.shift", "-e", "tcp.options.timestamp.tsval"]).unwrap();
    let f: Vec<&str> = syn.lines().next().unwrap().split('\t').collect();
    assert!(!f[0].is_empty() && !f[2].is_empty() && !f[3].is_empty(), "SYN options: {syn:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
