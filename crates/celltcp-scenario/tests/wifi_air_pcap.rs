//! The on-air capture (`pcap_air = true` in a `[[wifi]]`, `pcap/<name>.air.pcap`) as Wireshark
//! reads it: radiotap + 802.11 frames (link type 127) that tshark decodes without a malformed
//! frame, with the radiotap fields (VHT/HT MCS, legacy rate, A-MPDU reference) and FCSs that
//! tshark checks itself; frame counts by `wlan.fc.type_subtype` equal to the model's counters
//! in `summary.json`; every BlockAck's bitmap shows exactly the MPDUs of the A-MPDU before it
//! that were received (good FCS); the IP packets in the received data frames byte-equal to the
//! IP capture's; Duration values as §9.2.5 computes them by hand for the frames of each
//! scenario. Without tshark the test is skipped with a note, unless `CELLTCP_REQUIRE_TSHARK` is
//! set: then it fails.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use celltcp_scenario::{run, RunOptions};
use serde_json::Value;

fn have_tshark() -> bool {
    let ok = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CELLTCP_REQUIRE_TSHARK").is_none(), "CELLTCP_REQUIRE_TSHARK is set but tshark is not installed (scripts/install.sh installs it)");
        eprintln!("note: tshark is not installed; skipping the on-air capture checks");
    }
    ok
}

/// tshark's fields of the frames matching `filter`, with the FCS checked.
fn fields(file: &Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    tshark(file, filter, fields, true)
}

fn tshark(file: &Path, filter: &str, fields: &[&str], check_fcs: bool) -> Vec<Vec<String>> {
    let check = if check_fcs { "wlan.check_checksum:TRUE" } else { "wlan.check_checksum:FALSE" };
    let mut args = vec!["-r", file.to_str().unwrap(), "-o", check, "-Y", filter, "-T", "fields", "-E", "separator=;"];
    for f in fields {
        args.extend(["-e", f]);
    }
    let out = Command::new("tshark").args(&args).output().unwrap();
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split(';').map(str::to_string).collect()).collect()
}

fn count(file: &Path, filter: &str) -> u64 {
    fields(file, filter, &["frame.number"]).len() as u64
}

/// No frame malformed and no error (with the FCS not checked: a bad FCS, which the lost MPDUs
/// carry on purpose, is one of Wireshark's "malformed" errors) and, with it checked, none but
/// the bad FCSs.
fn assert_well_formed(file: &Path) {
    assert_eq!(tshark(file, "_ws.malformed || _ws.expert.severity == error", &["frame.number"], false).len(), 0);
    assert_eq!(count(file, "(_ws.malformed || _ws.expert.severity == error) && !wlan.fcs.bad_checksum"), 0);
}

/// Runs `scenario` (one BSS named "bss" with both captures) and returns the run directory and
/// the summary.
fn run_capture(scenario: &str, tag: &str) -> (PathBuf, Value) {
    let dir = std::env::temp_dir().join(format!("celltcp-wifi-air-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = run(scenario, &[], &RunOptions { seed: Some(3), out_dir: Some(dir.clone()), ..Default::default() }, &mut |_| true).unwrap();
    assert!(out.files.iter().any(|f| f == "pcap/bss.air.pcap") && out.files.iter().any(|f| f == "pcap/bss.pcap"), "{:?}", out.files);
    std::fs::write(dir.join("summary.json"), out.summary.to_string()).unwrap();
    (dir, out.summary)
}

/// Σ over the BSS's stations and both directions of `f(direction)`.
fn total(s: &Value, f: impl Fn(&Value) -> u64) -> u64 {
    s["wifi"][0]["stations"].as_array().unwrap().iter().flat_map(|x| [f(&x["down"]), f(&x["up"])]).sum()
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// The records of a classic little-endian pcap file: (link type, records).
fn records(file: &Path) -> (u32, Vec<Vec<u8>>) {
    let b = std::fs::read(file).unwrap();
    let le = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as usize;
    let mut out = vec![];
    let mut i = 24;
    while i < b.len() {
        let cap = le(i + 8);
        out.push(b[i + 16..i + 16 + cap].to_vec());
        i += 16 + cap;
    }
    (le(20) as u32, out)
}

/// The IP packet of every received (good FCS) data frame of the on-air capture, cut to `caps`'
/// captured length (the IP capture keeps headers only), checked against the IP capture's.
fn ip_payloads_match(dir: &Path) -> usize {
    let (lt, air) = records(&dir.join("pcap/bss.air.pcap"));
    assert_eq!(lt, 127);
    let (lt, ip) = records(&dir.join("pcap/bss.pcap"));
    assert_eq!(lt, 101);
    let ip: HashSet<Vec<u8>> = ip.into_iter().collect();
    let mut n = 0;
    for r in &air {
        let rt = u16::from_le_bytes([r[2], r[3]]) as usize;
        let flags = r[16];
        let mac = &r[rt..];
        let hdr = match mac[0] {
            0x88 => 26,
            0x08 => 24,
            _ => continue,
        };
        if flags & 0x40 != 0 {
            continue;
        }
        assert_eq!(&mac[hdr..hdr + 8], &[0xaa, 0xaa, 3, 0, 0, 0, 8, 0]);
        let pkt = &mac[hdr + 8..mac.len() - 4];
        // the IP capture's record of it: IPv4 + transport headers (IHL, then TCP's data offset
        // or UDP's 8 bytes)
        let ihl = (pkt[0] & 0x0f) as usize * 4;
        let frag_off = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1fff;
        let th = match (frag_off, pkt[9]) {
            (0, 6) => (pkt[ihl + 12] >> 4) as usize * 4,
            (0, 17) => 8,
            (0, 1) => 8,
            _ => 0,
        };
        let head = &pkt[..(ihl + th).min(pkt.len())];
        assert!(ip.contains(head), "an IP packet on the air that the IP capture does not hold: {head:02x?}");
        assert!(pkt[head.len()..].iter().all(|&b| b == 0), "payload bytes are zeros as in the IP capture");
        n += 1;
    }
    n
}

#[test]
fn vht_ampdus_block_acks_and_retries_as_the_model_counts_them() {
    if !have_tshark() {
        return;
    }
    // paper 003's BSS, smaller: VHT MCS 7, 20 MHz, A-MPDU; three stations sending UDP up (they
    // collide), one TCP download; an SNR at which the NIST PER of a 1538-byte MPDU is 0.23
    let (dir, s) = run_capture(
        r#"
duration = "1s"

[[wifi]]
name = "bss"
ap = "ap"
stations = { prefix = "sta", count = 4 }
standard = "802.11ac"
mcs = 7
snr = "23.5dB"
pcap = true
pcap_air = true

[[link]]
between = ["server", "ap"]
rate = "1Gbps"
delay = "2ms"

[[flow]]
name = "up1"
app = "udp"
from = "sta1"
to = "server"
rate = "20Mbps"
size = "1400B"

[[flow]]
name = "up2"
app = "udp"
from = "sta2"
to = "server"
rate = "20Mbps"
size = "1400B"

[[flow]]
name = "up3"
app = "udp"
from = "sta3"
to = "server"
rate = "20Mbps"
size = "1000B"

[[flow]]
name = "down"
app = "bulk"
from = "server"
to = "sta4"
bytes = "1MB"
"#,
        "vht",
    );
    let file = dir.join("pcap/bss.air.pcap");
    let all = count(&file, "frame");
    assert!(all > 1000, "{all}");
    assert_well_formed(&file);
    assert_eq!(count(&file, "radiotap && wlan"), all);
    // type/subtype counts against the model's counters
    let data = count(&file, "wlan.fc.type_subtype == 0x0028");
    let ba = count(&file, "wlan.fc.type_subtype == 0x0019");
    let ack = count(&file, "wlan.fc.type_subtype == 0x001d");
    assert_eq!(data + ba + ack, all, "only QoS data, BlockAck and ACK without RTS/CTS");
    assert_eq!(data, total(&s, |d| u(d, "mpdu_tx")));
    assert_eq!(count(&file, "wlan.fc.type_subtype == 0x0028 && wlan.fc.retry == 1"), total(&s, |d| u(d, "mac_retries")));
    assert_eq!(ba + ack, total(&s, |d| u(d, "ppdu_tx") - u(d, "collisions") - u(d, "ppdu_failed")));
    // a VHT PPDU carries its MPDUs in an A-MPDU: a reference on every data frame, VHT MCS 7
    assert_eq!(count(&file, "wlan.fc.type_subtype == 0x0028 && radiotap.ampdu.reference && radiotap.vht.mcs.0 == 7"), data);
    // control responses at 24 Mbit/s (the highest basic rate ≤ 64-QAM 5/6's reference 54)
    assert_eq!(count(&file, "radiotap.datarate == 24"), ba + ack);
    // FCSs: tshark finds the good ones good, and the bad ones are the MPDUs the model lost
    let bad = count(&file, "wlan.fcs.status == 0");
    assert_eq!(bad, count(&file, "radiotap.flags.badfcs == 1"));
    assert_eq!(count(&file, "wlan.fcs.status == 1") + bad, all);
    let retries = total(&s, |d| u(d, "mac_retries"));
    assert!(retries > 50 && bad > retries / 2, "{retries} retries, {bad} bad");
    // Duration (§9.2.5): A-MPDU data SIFS + BlockAck = 16 + 32 µs (32-octet BlockAck at 24
    // Mbit/s: 20 µs preamble + 3 symbols); a single VHT MPDU SIFS + ACK = 16 + 28 µs; BlockAck
    // and ACK 0
    let durs: HashSet<String> =
        fields(&file, "wlan.fc.type_subtype == 0x0028", &["wlan.duration", "radiotap.ampdu.flags.last", "radiotap.ampdu.reference"]).into_iter().map(|r| r[0].clone()).collect();
    assert!(durs.iter().all(|d| d == "48" || d == "44") && durs.contains("48"), "{durs:?}");
    assert_eq!(count(&file, "(wlan.fc.type_subtype == 0x0019 || wlan.fc.type_subtype == 0x001d) && wlan.duration != 0"), 0);
    // every BlockAck's bitmap: the MPDUs of the A-MPDU just before it, set if received
    let rows = fields(&file, "frame", &["wlan.fc.type_subtype", "radiotap.ampdu.reference", "wlan.seq", "wlan.fcs.status", "wlan.fixed.ssc.sequence", "wlan.ba.bm", "wlan.ta", "wlan.ra"]);
    let (mut group, mut checked) = (Vec::<(u16, bool, String)>::new(), 0);
    let mut prev_ref = String::new();
    for r in &rows {
        match r[0].as_str() {
            "0x0028" => {
                if r[1] != prev_ref {
                    group.clear();
                    prev_ref = r[1].clone();
                }
                group.push((r[2].parse().unwrap(), r[3] == "1", r[6].clone()));
            }
            "0x0019" => {
                let ssn: u16 = r[4].parse().unwrap();
                let bm = u64::from_le_bytes(hex(&r[5]).try_into().unwrap());
                assert!(!group.is_empty() && group.iter().all(|g| g.2 == r[7]), "a BlockAck to the A-MPDU's transmitter");
                for &(seq, ok, _) in &group {
                    let off = (seq + 4096 - ssn) % 4096;
                    assert!(off < 64);
                    assert_eq!(bm >> off & 1 == 1, ok, "seq {seq} ssn {ssn} bitmap {bm:#x}");
                }
                checked += 1;
                group.clear();
                prev_ref.clear();
            }
            _ => {
                group.clear();
                prev_ref.clear();
            }
        }
    }
    assert_eq!(checked, ba);
    // the IP packets: every received one is in the IP capture, byte for byte
    let n = ip_payloads_match(&dir);
    assert_eq!(n as u64, data - bad);
    assert!(n as u64 >= total(&s, |d| u(d, "delivered_packets")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rts_cts_on_80211g_with_hand_computed_durations() {
    if !have_tshark() {
        return;
    }
    // two saturated 802.11g stations at 54 Mbit/s with RTS/CTS: RTSs collide, data never does
    let (dir, s) = run_capture(
        r#"
duration = "1s"

[[wifi]]
name = "bss"
ap = "ap"
stations = ["sta1", "sta2"]
standard = "802.11g"
mcs = 7
snr = "40dB"
rts_cts = true
pcap = true
pcap_air = true

[[link]]
between = ["server", "ap"]
rate = "1Gbps"
delay = "1ms"

[[flow]]
name = "up"
app = "udp"
from = "sta*"
to = "server"
rate = "20Mbps"
size = "1000B"
"#,
        "erp",
    );
    let file = dir.join("pcap/bss.air.pcap");
    let all = count(&file, "frame");
    assert_well_formed(&file);
    let (data, rts, cts, ack) = (
        count(&file, "wlan.fc.type_subtype == 0x0020"),
        count(&file, "wlan.fc.type_subtype == 0x001b"),
        count(&file, "wlan.fc.type_subtype == 0x001c"),
        count(&file, "wlan.fc.type_subtype == 0x001d"),
    );
    assert_eq!(data + rts + cts + ack, all);
    let (ppdus, coll, failed) = (total(&s, |d| u(d, "ppdu_tx")), total(&s, |d| u(d, "collisions")), total(&s, |d| u(d, "ppdu_failed")));
    assert!(coll > 10, "{coll} collisions");
    assert_eq!(rts, ppdus);
    assert_eq!(count(&file, "wlan.fc.type_subtype == 0x001b && radiotap.flags.badfcs == 1"), coll);
    assert_eq!((cts, data, ack), (ppdus - coll, ppdus - coll, ppdus - coll - failed));
    // ERP-OFDM, 2.412 GHz, data at 54 Mbit/s and control at 24
    assert_eq!(count(&file, "radiotap.channel.freq == 2412 && radiotap.channel.flags.ofdm == 1 && radiotap.channel.flags.2ghz == 1"), all);
    assert_eq!(count(&file, "wlan.fc.type_subtype == 0x0020 && radiotap.datarate == 54 && wlan.fc.tods == 1 && wlan.fc.fromds == 0"), data);
    assert_eq!(count(&file, "radiotap.datarate == 24"), rts + cts + ack);
    // Durations, §9.2.5, with SIFS 10 µs and ERP's 6 µs signal extension in every TXTIME: the
    // 1064-octet MPDU (1028-byte IP + LLC/SNAP 8 + header 24 + FCS 4) at 54 Mbit/s takes
    // 20 + 4·⌈(16 + 8·1064 + 6)/216⌉ + 6 = 186 µs; RTS, CTS, ACK at 24 Mbit/s 20 + 4·2 + 6 = 34
    // µs each. DATA: SIFS + ACK = 44; RTS: 3·SIFS + CTS + DATA + ACK = 284; CTS: 284 − SIFS −
    // CTS = 240; ACK: 0.
    let durs = |t: &str| -> HashSet<String> { fields(&file, &format!("wlan.fc.type_subtype == {t}"), &["wlan.duration"]).into_iter().map(|r| r[0].clone()).collect() };
    let one = |v: &str| HashSet::from([v.to_string()]);
    assert_eq!(durs("0x0020"), one("44"));
    assert_eq!(durs("0x001b"), one("284"));
    assert_eq!(durs("0x001c"), one("240"));
    assert_eq!(durs("0x001d"), one("0"));
    // the exchange's timing in the timestamps: CTS at RTS + 34 + 10, DATA at CTS + 44, ACK at
    // DATA + 186 + 10; the NAV of the RTS ends with the ACK
    let rows = fields(&file, "frame", &["frame.time_epoch", "wlan.fc.type_subtype", "radiotap.flags.badfcs"]);
    let ns = |s: &str| (s.parse::<f64>().unwrap() * 1e9).round() as i64;
    let mut exchanges = 0;
    for w in rows.windows(4) {
        if w.iter().map(|r| r[1].as_str()).collect::<Vec<_>>() == ["0x001b", "0x001c", "0x0020", "0x001d"] {
            let t: Vec<i64> = w.iter().map(|r| ns(&r[0])).collect();
            assert_eq!((t[1] - t[0], t[2] - t[1], t[3] - t[2]), (44_000, 44_000, 196_000), "{w:?}");
            assert_eq!(t[3] + 34_000, t[0] + 34_000 + 284_000);
            exchanges += 1;
        }
    }
    assert_eq!(exchanges as u64, ack);
    assert_eq!(ip_payloads_match(&dir) as u64, ack);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_example_of_docs_outputs_md_writes_an_air_capture() {
    if !have_tshark() {
        return;
    }
    // `celltcp run examples/wifi.toml -o out/wifi --set wifi.0.pcap_air=true`, shorter
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/wifi.toml")).unwrap();
    let dir = std::env::temp_dir().join(format!("celltcp-wifi-air-example-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = run(&text, &["wifi.0.pcap_air=true".into(), "duration=0.3s".into()], &RunOptions { seed: Some(1), out_dir: Some(dir.clone()), ..Default::default() }, &mut |_| true).unwrap();
    assert_eq!(out.files.iter().filter(|f| f.starts_with("pcap/")).collect::<Vec<_>>(), ["pcap/bss1.air.pcap"]);
    let file = dir.join("pcap/bss1.air.pcap");
    assert!(count(&file, "wlan.fc.type_subtype == 0x0028 && tcp") > 100);
    assert!(count(&file, "wlan.fc.type_subtype == 0x0019") > 10);
    assert_well_formed(&file);
    let _ = std::fs::remove_dir_all(&dir);
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}
