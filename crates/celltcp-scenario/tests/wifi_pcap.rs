//! The Wi-Fi capture (`pcap = true` in a `[[wifi]]`) as Wireshark reads it: tshark decodes every
//! record as an IPv4 packet (LINKTYPE_RAW) with valid IP, UDP and TCP checksums, no record is
//! malformed, the addresses are the stations' Wi-Fi addresses and the server's, both directions
//! are there, and the capture holds every packet the BSS was handed (delivered, dropped or
//! still queued). Without tshark the test is skipped with a note, unless
//! `CELLTCP_REQUIRE_TSHARK` is set (scripts/test.sh sets it after scripts/install.sh installed
//! tshark): then it fails.
//!
//! The capture holds the IP packets handed to the BSS; the 802.11 frames on the air are the
//! other capture, `pcap_air` (tests/wifi_air_pcap.rs).

use std::path::Path;
use std::process::Command;

use celltcp_scenario::{run, RunOptions};

const SCENARIO: &str = r#"
duration = "3s"

[[wifi]]
name = "home"
ap = "ap"
stations = ["laptop", "phone"]
standard = "802.11n"
pcap = true

[[link]]
between = ["server", "ap"]
rate = "1Gbps"
delay = "2ms"

[[flow]]
name = "up"
app = "udp"
from = "laptop"
to = "server"
rate = "5Mbps"
size = "1000B"

[[flow]]
name = "down"
app = "bulk"
from = "server"
to = "phone"
bytes = "400KB"
"#;

fn have_tshark() -> bool {
    let ok = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CELLTCP_REQUIRE_TSHARK").is_none(), "CELLTCP_REQUIRE_TSHARK is set but tshark is not installed (scripts/install.sh installs it)");
        eprintln!("note: tshark is not installed; skipping the Wi-Fi capture checks");
    }
    ok
}

fn fields(file: &Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut args = vec!["-r", file.to_str().unwrap(), "-Y", filter, "-T", "fields", "-E", "separator=;"];
    for f in fields {
        args.extend(["-e", f]);
    }
    args.extend(["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"]);
    let out = Command::new("tshark").args(&args).output().unwrap();
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split(';').map(str::to_string).collect()).collect()
}

#[test]
fn wifi_capture_decodes_in_tshark_with_the_stations_addresses() {
    if !have_tshark() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("celltcp-wifi-pcap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = run(SCENARIO, &[], &RunOptions { seed: Some(2), out_dir: Some(dir.clone()), ..Default::default() }, &mut |_| true).unwrap();
    assert!(out.files.iter().any(|f| f == "pcap/home.pcap"), "{:?}", out.files);
    let file = dir.join("pcap/home.pcap");
    let s = &out.summary;
    let addr = |node: &str| -> String {
        let n = s["nodes"].as_array().unwrap().iter().find(|n| n["name"] == node).unwrap_or_else(|| panic!("{node}: {}", s["nodes"]));
        // a station's Wi-Fi address; the server's only (wired) one
        let ifs = n["interfaces"].as_array().unwrap();
        ifs.iter().find(|i| i["device"] == "wifi").unwrap_or(&ifs[0])["address"].as_str().unwrap().to_string()
    };
    let (laptop, phone, server) = (addr("laptop"), addr("phone"), addr("server"));

    let all = fields(&file, "frame", &["frame.number", "ip.src", "ip.dst", "ip.proto", "_ws.col.Protocol"]);
    assert!(!all.is_empty());
    // nothing malformed, every record an IPv4 packet with good checksums
    assert!(fields(&file, "_ws.malformed || _ws.expert.severity == error", &["frame.number"]).is_empty());
    assert_eq!(fields(&file, "ip.version == 4", &["frame.number"]).len(), all.len());
    assert!(fields(&file, "ip.checksum.status == \"Bad\" || udp.checksum.status == \"Bad\" || tcp.checksum.status == \"Bad\"", &["frame.number"]).is_empty());
    // the UDP upload: laptop -> server, 1000-byte payloads; the TCP download: server -> phone
    // and the phone's ACKs back
    let pairs = |filter: &str| fields(&file, filter, &["ip.src", "ip.dst"]);
    let up = pairs("udp");
    assert!(!up.is_empty() && up.iter().all(|r| r[0] == laptop && r[1] == server), "{:?}", &up[..up.len().min(3)]);
    assert_eq!(fields(&file, "udp && udp.length != 1008", &["frame.number"]).len(), 0);
    let down = pairs(&format!("tcp && ip.src == {server}"));
    let acks = pairs(&format!("tcp && ip.src == {phone}"));
    assert!(!down.is_empty() && down.iter().all(|r| r[1] == phone));
    assert!(!acks.is_empty() && acks.iter().all(|r| r[1] == server));
    assert_eq!(fields(&file, "tcp", &["frame.number"]).len(), down.len() + acks.len());
    assert_eq!(up.len() + down.len() + acks.len(), all.len(), "only the two flows' packets");
    // every packet the BSS was handed is in the capture once: what it delivered, dropped, or
    // still holds at the end (the capture's count minus the delivered and dropped is what
    // remains queued, at most the queue limits)
    let st = s["wifi"][0]["stations"].as_array().unwrap();
    let handled: u64 = st.iter().flat_map(|x| ["down", "up"].map(|d| x[d]["delivered_packets"].as_u64().unwrap() + x[d]["queue_drops"].as_u64().unwrap() + x[d]["retry_drops"].as_u64().unwrap())).sum();
    assert!(handled <= all.len() as u64 && all.len() as u64 - handled <= 2000, "{handled} handled, {} captured", all.len());
    // the TCP download's data segments as Wireshark sees them: the stream's payload bytes
    // add up to at least the 400 KB written (plus retransmissions)
    let payload: u64 = fields(&file, &format!("tcp && ip.src == {server}"), &["tcp.len"]).iter().map(|r| r[0].parse::<u64>().unwrap()).sum();
    assert!(payload >= 400_000, "{payload}");
    let _ = std::fs::remove_dir_all(&dir);
}
