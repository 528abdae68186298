//! GTP-U on S1-U and X2-U, and the UE-side captures, read by Wireshark (issue 11 item 2, issue 18
//! item 2): tshark decodes every S1-U packet as GTP-U with the UE's packet inside, TEIDs differ
//! per UE and direction, the inner TCP stream carries the flow's bytes, a handover's path switch
//! moves the downlink to the target's S1-U with the target's TEID, and the X2 capture of
//! `examples/handover.toml` holds the forwarded SDUs. Skipped (with a note) without tshark,
//! unless `CELLTCP_REQUIRE_TSHARK` is set (scripts/test.sh sets it after scripts/install.sh
//! installed tshark): then it fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use celltcp_scenario::{run, RunOptions};

const CELL: &str = r#"duration = "3s"
[lte]
bandwidth = "10MHz"
shadowing = "0dB"
fading = "none"
[lte.epc]
pcap = true
[[lte.enb]]
name = "enb"
position = [0.0, 0.0]
[[lte.ue]]
name = "ue"
count = 2
placement = { type = "distances", distances = ["200m", "400m"] }
pcap = true
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "10ms"
[[flow]]
name = "dl"
app = "bulk"
from = "server"
to = "ue*"
mss = 1400
bytes = "600KB" # 614,400 bytes
"#;

fn have_tshark() -> bool {
    let ok = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CELLTCP_REQUIRE_TSHARK").is_none(), "CELLTCP_REQUIRE_TSHARK is set but tshark is not installed (scripts/install.sh installs it)");
        eprintln!("note: tshark is not installed; skipping the GTP-U capture checks");
    }
    ok
}

/// tshark's fields of the packets of `file` that match `filter`, one row per packet.
fn fields(file: &Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut args = vec!["-r", file.to_str().unwrap(), "-Y", filter, "-T", "fields", "-E", "separator=;", "-E", "occurrence=a", "-E", "aggregator=,"];
    for f in fields {
        args.extend(["-e", f]);
    }
    args.extend(["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"]);
    let out = Command::new("tshark").args(&args).output().unwrap();
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split(';').map(str::to_string).collect()).collect()
}

fn count(file: &Path, filter: &str) -> usize {
    fields(file, filter, &["frame.number"]).len()
}

fn run_to(text: &str, overrides: &[String], name: &str) -> (PathBuf, serde_json::Value) {
    let dir = std::env::temp_dir().join(format!("celltcp-gtpu-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = run(text, overrides, &RunOptions { seed: Some(3), out_dir: Some(dir.clone()), ..Default::default() }, &mut |_| true).unwrap();
    for f in &out.files {
        if f.starts_with("pcap/") {
            assert!(dir.join(f).exists(), "{f} is listed but missing");
        }
    }
    (dir, serde_json::json!({ "summary": out.summary, "files": out.files }))
}

#[test]
fn s1u_capture_is_gtpu_with_teids_per_ue_and_the_flow_inside() {
    if !have_tshark() {
        return;
    }
    let (dir, out) = run_to(CELL, &[], "cell");
    let files: Vec<&str> = out["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    for f in ["pcap/s1u-enb.pcap", "pcap/ue-ue1.pcap", "pcap/ue-ue2.pcap"] {
        assert!(files.contains(&f), "{f} not in {files:?}");
    }
    let s1u = dir.join("pcap/s1u-enb.pcap");
    // every packet on S1-U is a G-PDU (TS 29.281: version 1, type 255) on UDP 2152 whose outer
    // IPv4 and UDP checksums verify; the inner packet is the UE's IPv4/TCP
    let all = count(&s1u, "frame");
    let rows = fields(&s1u, "gtp", &["gtp.flags.version", "gtp.message", "udp.dstport", "gtp.teid", "ip.src", "ip.dst", "ip.checksum.status", "udp.checksum.status", "tcp.len", "tcp.ack", "gtp.length", "ip.len"]);
    assert!(all > 200, "{all} packets on S1-U");
    assert_eq!(rows.len(), all, "every S1-U packet decodes as GTP-U");
    // DL: outer src is the PGW; inner dst the UE. UL the other way.
    let mut dl_teids: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut ul_teids: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut dl_bytes: BTreeMap<String, u64> = BTreeMap::new();
    let mut last_ack: BTreeMap<String, u64> = BTreeMap::new();
    let pgw = rows.iter().find(|r| r[8] != "0" && !r[8].is_empty()).map(|r| r[4].split(',').next().unwrap().to_string()).unwrap();
    for r in &rows {
        assert_eq!((r[0].as_str(), r[1].as_str(), r[2].as_str()), ("1", "0xff", "2152"), "{r:?}");
        // both IPv4 checksums verify; UDP's covers the payload, which a headers-only capture
        // leaves out, so Wireshark leaves it unverified (2) but must not find it bad (0);
        // celltcp-net's gtpu tests verify it on whole packets
        assert_eq!(r[6].as_str(), "1,1", "IPv4 checksums verify: {r:?}");
        assert_ne!(r[7].as_str(), "0", "UDP checksum: {r:?}");
        let src: Vec<&str> = r[4].split(',').collect();
        let dst: Vec<&str> = r[5].split(',').collect();
        let ip_len: Vec<u64> = r[11].split(',').map(|x| x.parse().unwrap()).collect();
        // TS 29.281 §5.1: the GTP length is the inner packet's; the outer adds 36 bytes
        assert_eq!(r[10].parse::<u64>().unwrap(), ip_len[1], "{r:?}");
        assert_eq!(ip_len[0], ip_len[1] + 36, "{r:?}");
        if src[0] == pgw {
            dl_teids.entry(dst[1].to_string()).or_default().insert(r[3].clone());
            *dl_bytes.entry(dst[1].to_string()).or_default() += r[8].parse::<u64>().unwrap();
        } else {
            ul_teids.entry(src[1].to_string()).or_default().insert(r[3].clone());
            let ack: u64 = r[9].parse().unwrap();
            let e = last_ack.entry(src[1].to_string()).or_default();
            *e = (*e).max(ack);
        }
    }
    assert_eq!(dl_teids.len(), 2, "two UEs' downlinks: {dl_teids:?}");
    assert_eq!(ul_teids.len(), 2, "two UEs' uplinks: {ul_teids:?}");
    // one TEID per UE and direction, different between the UEs
    for m in [&dl_teids, &ul_teids] {
        assert!(m.values().all(|s| s.len() == 1), "{m:?}");
        let all: BTreeSet<_> = m.values().flatten().collect();
        assert_eq!(all.len(), 2, "{m:?}");
        assert!(!all.contains(&"0x00000000".to_string()), "TEID 0 is reserved: {m:?}");
    }
    // the inner TCP streams carry each flow's bytes: 600 KB (614,400 bytes) each, with no loss on the way, and
    // the UE's last ACK covers them and the FIN (Wireshark's relative numbers)
    let flows = out["summary"]["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2);
    for f in flows {
        assert_eq!(f["bytes_delivered"].as_u64().unwrap(), 614_400, "{f}");
    }
    for (ue, b) in &dl_bytes {
        assert!(*b >= 614_400, "{ue}: {b} bytes on S1-U");
        assert_eq!(last_ack[ue], 614_402, "{ue}");
    }

    // The UE side: plain IP (no tunnel), its uplink as sent and its downlink as received; the
    // stream it received carries the 614,400 bytes in order.
    for ue in ["ue1", "ue2"] {
        let f = dir.join(format!("pcap/ue-{ue}.pcap"));
        assert_eq!(count(&f, "gtp || udp.port == 2152"), 0);
        let rows = fields(&f, "tcp", &["ip.src", "ip.dst", "tcp.len", "tcp.seq", "tcp.ack"]);
        let addr = rows.iter().find(|r| r[2] != "0").map(|r| r[1].clone()).unwrap();
        assert!(dl_bytes.contains_key(&addr), "{addr} is a UE of the S1-U capture");
        let down: Vec<&Vec<String>> = rows.iter().filter(|r| r[1] == addr).collect();
        let up: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == addr).collect();
        assert!(!down.is_empty() && !up.is_empty());
        let max_seq = down.iter().filter(|r| r[2] != "0").map(|r| r[3].parse::<u64>().unwrap() + r[2].parse::<u64>().unwrap()).max().unwrap();
        assert_eq!(max_seq, 614_401, "{ue}: the last data byte (relative, after the SYN)");
        assert_eq!(up.iter().map(|r| r[4].parse::<u64>().unwrap()).max().unwrap(), 614_402, "{ue}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn handover_example_captures_x2_forwarding_and_the_path_switch() {
    if !have_tshark() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/handover.toml");
    let text = std::fs::read_to_string(root).unwrap();
    // as docs/outputs.md runs it: `--set lte.epc.pcap=true` (the example has no [lte.epc])
    let (dir, out) = run_to(&text, &["lte.epc.pcap=true".to_string()], "handover");
    let ho = &out["summary"]["lte"]["handovers"];
    let ho = ho.as_array().unwrap_or_else(|| panic!("handovers: {}", out["summary"]["lte"]));
    assert_eq!(ho.len(), 1, "{ho:?}");
    let fwd = ho[0]["sdus_forwarded"].as_u64().unwrap() + ho[0]["sdus_forwarded_late"].as_u64().unwrap();
    assert!(fwd > 0, "{ho:?}");
    // X2-U: GTP-U from the source eNB to the target with the PDCP SN extension header (TS
    // 36.424 §5.2), one packet per forwarded SDU, one forwarding TEID
    let x2 = dir.join("pcap/x2-source-target.pcap");
    let rows = fields(&x2, "gtp", &["gtp.teid", "gtp.ext_hdr.pdcp_sn", "ip.src", "tcp.len", "udp.checksum.status"]);
    assert_eq!(rows.len() as u64, fwd, "forwarded SDUs in the X2 capture");
    assert_eq!(count(&x2, "frame"), rows.len());
    let teids: BTreeSet<_> = rows.iter().map(|r| r[0].clone()).collect();
    assert_eq!(teids.len(), 1, "{teids:?}");
    assert!(rows.iter().all(|r| !r[1].is_empty() && r[4] != "0"), "{:?}", &rows[..3.min(rows.len())]);
    // lossless forwarding keeps the PDCP SNs in order
    let sns: Vec<u32> = rows.iter().map(|r| r[1].parse().unwrap()).collect();
    assert!(sns.windows(2).all(|w| (w[1].wrapping_sub(w[0]) & 0xfff) == 1), "{sns:?}");
    // The path switch: the downlink moves to the target's S1-U with a TEID the target
    // allocated; before, it came on the source's
    let src_dl = fields(&dir.join("pcap/s1u-source.pcap"), "gtp && tcp.len > 0", &["gtp.teid", "frame.time_epoch"]);
    let tgt_dl = fields(&dir.join("pcap/s1u-target.pcap"), "gtp && tcp.len > 0", &["gtp.teid", "frame.time_epoch"]);
    assert!(!src_dl.is_empty() && !tgt_dl.is_empty(), "downlink data on both S1-U links");
    let switch = ho[0]["path_switch_s"].as_f64().unwrap();
    let last_src: f64 = src_dl.iter().map(|r| r[1].parse::<f64>().unwrap()).fold(0.0, f64::max);
    let first_tgt: f64 = tgt_dl.iter().map(|r| r[1].parse::<f64>().unwrap()).fold(f64::MAX, f64::min);
    assert!(last_src <= switch + 0.002 && first_tgt >= switch - 0.002, "source until {last_src}, target from {first_tgt}, switch at {switch}");
    let (a, b): (BTreeSet<_>, BTreeSet<_>) = (src_dl.iter().map(|r| r[0].clone()).collect(), tgt_dl.iter().map(|r| r[0].clone()).collect());
    assert_eq!((a.len(), b.len()), (1, 1), "{a:?} {b:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
