//! Nodes with several interfaces (issue 11 item 1): an LTE UE also wired to a router, an LTE UE
//! also a Wi-Fi station, a host with two links to two routers. Each address is reached by its
//! own interface, a packet from an address leaves by its interface (Linux's `ip rule from ADDR
//! lookup TABLE`, the multihomed host of the Linux Advanced Routing HOWTO §4.2), a socket that
//! does not bind takes its route's source address, and `bind` picks the interface.

use celltcp_scenario::{run, validate, RunOptions};
use serde_json::Value;

fn run_in(text: &str, dir: Option<&std::path::Path>) -> Value {
    let opts = RunOptions { seed: Some(1), out_dir: dir.map(|d| d.to_path_buf()), ..Default::default() };
    run(text, &[], &opts, &mut |_| true).unwrap_or_else(|e| panic!("{e}\n{text}")).summary
}

fn link<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["links"].as_array().unwrap().iter().find(|l| l["name"] == name).unwrap_or_else(|| panic!("no link direction {name}: {:#}", s["links"]))
}

fn flow<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["flows"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("no flow {name}"))
}

fn tx_bytes(s: &Value, dir: &str) -> f64 {
    link(s, dir)["tx_bytes"].as_f64().unwrap()
}

/// A server behind a core router that reaches the PGW and a router `r1`; the UE `ue` is an
/// LTE UE and is also wired to `r1`.
fn lte_and_wire(flows: &str, pcap: bool) -> String {
    format!(
        r#"duration = "4s"
[lte]
bandwidth = "10MHz"
[[lte.enb]]
name = "enb"
position = [0.0, 0.0]
[[lte.ue]]
name = "ue"
position = [100.0, 0.0]
[[node]]
name = "core"
kind = "router"
[[node]]
name = "r1"
kind = "router"
[[link]]
between = ["server", "core"]
rate = "1Gbps"
delay = "2ms"
[[link]]
between = ["core", "pgw"]
rate = "1Gbps"
delay = "2ms"
[[link]]
between = ["core", "r1"]
rate = "1Gbps"
delay = "2ms"
[[link]]
name = "wire"
between = ["ue", "r1"]
rate = "8Mbps"
delay = "5ms"
pcap = {pcap}
{flows}"#
    )
}

const TWO_FLOWS: &str = r#"
[[flow]]
name = "via-lte"
app = "bulk"
from = "server"
to = "ue"
mss = 1400
[[flow]]
name = "via-wire"
app = "iperf"
from = "ue"
to = "server"
reverse = true
bind = "wire"
"#;

#[test]
fn each_address_of_a_wired_lte_ue_is_reached_by_its_own_path() {
    let dir = tempdir("lte-wire");
    let s = run_in(&lte_and_wire(TWO_FLOWS, true), Some(&dir));
    // the interfaces and their addresses: LTE first (the PGW's UE pool), then the wire
    let ue = s["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "ue").unwrap();
    let ifs = ue["interfaces"].as_array().unwrap();
    assert_eq!(ifs.len(), 2, "{ue}");
    assert_eq!((ifs[0]["name"].as_str(), ifs[0]["address"].as_str(), ifs[0]["device"].as_str()), (Some("radio-ue"), Some("10.45.0.1"), Some("lte")));
    assert_eq!((ifs[1]["name"].as_str(), ifs[1]["address"].as_str(), ifs[1]["device"].as_str()), (Some("wire"), Some("10.32.0.1"), Some("link")));
    assert_eq!(ue["address"], "10.45.0.1");

    let lte_bytes = flow(&s, "via-lte")["bytes_delivered"].as_f64().unwrap();
    let wire_bytes = flow(&s, "via-wire")["bytes_delivered"].as_f64().unwrap();
    assert!(lte_bytes > 1e6 && wire_bytes > 1e6, "both flows deliver: {lte_bytes} {wire_bytes}");
    // the wired downlink carries the wired flow's data and nothing of the LTE flow's: its bytes
    // are the wired flow's payload plus headers (40 IP+TCP + 12 timestamps per 1448 bytes), and
    // far below both flows together
    let wire_down = tx_bytes(&s, "wire:r1->ue");
    // (payload + 3.6 % headers + what is still queued at the end)
    assert!(wire_down >= wire_bytes && wire_down < wire_bytes * 1.15, "wire r1->ue {wire_down} vs wired flow {wire_bytes}");
    assert!(wire_down < 0.5 * lte_bytes, "wire r1->ue {wire_down} vs the LTE flow {lte_bytes}");
    // 8 Mbit/s for (4 s minus the handshake): the wire is what limits the wired flow
    assert!(wire_down * 8.0 / 4.0 > 0.8 * 8e6, "the wired flow fills the wire: {wire_down}");
    // the S1-U downlink (so the radio) carries the LTE flow (payload, headers, 36 bytes of
    // GTP-U each)
    let radio_down = tx_bytes(&s, "s1u-enb:pgw->enb");
    assert!(radio_down >= lte_bytes && radio_down < lte_bytes * 1.15, "radio {radio_down} vs LTE flow {lte_bytes}");
    // replies come back the same way: the UE's ACKs of the wired flow go up the wire, those of
    // the LTE flow up the radio and the S1-U (about one ACK of 52 bytes per two segments: 1.8 %
    // of the data)
    let (wire_up, radio_up) = (tx_bytes(&s, "wire:ue->r1"), tx_bytes(&s, "s1u-enb:enb->pgw"));
    assert!(wire_up > 0.01 * wire_bytes && wire_up < 0.05 * wire_bytes, "wire up {wire_up} for {wire_bytes}");
    assert!(radio_up > 0.01 * lte_bytes && radio_up < 0.05 * lte_bytes, "radio up {radio_up} for {lte_bytes}");
    // and the core's link to r1 carries only the wired flow, the one to the PGW only the LTE flow
    let to_r1 = tx_bytes(&s, "core-r1:core->r1");
    assert!(to_r1 >= wire_bytes && to_r1 < wire_bytes * 1.15 && to_r1 < 0.5 * lte_bytes, "core->r1 {to_r1}");
    let to_pgw = tx_bytes(&s, "core-pgw:core->pgw");
    assert!(to_pgw >= lte_bytes && to_pgw < lte_bytes * 1.15, "core->pgw {to_pgw}");

    // a pcap of the wired link: only the wired flow's two addresses, both ways
    let pkts = pcap_addrs(&dir.join("pcap/wire.pcap"));
    assert!(pkts.len() > 1000, "{} packets", pkts.len());
    let server_addr = s["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "server").unwrap()["address"].as_str().unwrap().to_string();
    let octets = |a: &str| -> [u8; 4] { a.split('.').map(|x| x.parse().unwrap()).collect::<Vec<u8>>().try_into().unwrap() };
    let (server, wired) = (octets(&server_addr), [10, 32, 0, 1]);
    let (mut down, mut up) = (0, 0);
    for (src, dst) in &pkts {
        match (src, dst) {
            (s, d) if *s == server && *d == wired => down += 1,
            (s, d) if *s == wired && *d == server => up += 1,
            other => panic!("packet {other:?} on the wired link"),
        }
    }
    assert!(down > 0 && up > 0, "{down} {up}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unbound_socket_takes_its_routes_source_and_an_lte_flow_alone_is_unchanged() {
    // without `bind`, the UE's connection leaves by LTE (its main route) from its LTE address:
    // the wire carries nothing
    let flows = r#"
[[flow]]
name = "up"
app = "bulk"
from = "ue"
to = "server"
"#;
    let s = run_in(&lte_and_wire(flows, false), None);
    assert!(flow(&s, "up")["bytes_delivered"].as_f64().unwrap() > 1e5);
    assert_eq!(tx_bytes(&s, "wire:ue->r1"), 0.0);
    assert_eq!(tx_bytes(&s, "wire:r1->ue"), 0.0);
    // the same flow bound to the wire's address: all of it on the wire
    let bound = flows.replace("to = \"server\"", "to = \"server\"\nbind = \"10.32.0.1\"");
    let b = run_in(&lte_and_wire(&bound, false), None);
    let bytes = flow(&b, "up")["bytes_delivered"].as_f64().unwrap();
    assert!(tx_bytes(&b, "wire:ue->r1") >= bytes && bytes > 1e6);
    assert_eq!(tx_bytes(&b, "s1u-enb:enb->pgw"), 0.0);
}

#[test]
fn a_ue_that_is_also_a_wifi_station_runs_one_flow_per_interface_at_each_paths_goodput() {
    let base = r#"duration = "4s"
[lte]
bandwidth = "10MHz"
[[lte.enb]]
name = "enb"
position = [0.0, 0.0]
[[lte.ue]]
name = "ue"
position = [100.0, 0.0]
[[wifi]]
name = "home"
ap = "ap"
stations = ["ue"]
standard = "802.11g"
distances = ["5m"]
[[node]]
name = "core"
kind = "router"
[[link]]
between = ["server", "core"]
rate = "1Gbps"
delay = "2ms"
[[link]]
between = ["core", "pgw"]
rate = "1Gbps"
delay = "2ms"
[[link]]
between = ["core", "ap"]
rate = "1Gbps"
delay = "2ms"
"#;
    let lte = "[[flow]]\nname = \"lte\"\napp = \"bulk\"\nfrom = \"server\"\nto = \"ue\"\nmss = 1400\n";
    let wifi = "[[flow]]\nname = \"wifi\"\napp = \"iperf\"\nfrom = \"ue\"\nto = \"server\"\nreverse = true\nbind = \"wifi-home-ue\"\n";
    let both = run_in(&format!("{base}{lte}{wifi}"), None);
    let lte_alone = run_in(&format!("{base}{lte}"), None);
    let wifi_alone = run_in(&format!("{base}{wifi}"), None);
    let g = |s: &Value, f: &str| flow(s, f)["goodput_bps"].as_f64().unwrap();
    let (gl, gw) = (g(&both, "lte"), g(&both, "wifi"));
    assert!(gl > 5e6 && gw > 5e6, "{gl} {gw}");
    // each close to its path alone (they share only the 1 Gbit/s server link)
    assert!((gl / g(&lte_alone, "lte") - 1.0).abs() < 0.05, "LTE {gl} vs alone {}", g(&lte_alone, "lte"));
    assert!((gw / g(&wifi_alone, "wifi") - 1.0).abs() < 0.05, "Wi-Fi {gw} vs alone {}", g(&wifi_alone, "wifi"));
    let ue = both["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "ue").unwrap();
    let devs: Vec<&str> = ue["interfaces"].as_array().unwrap().iter().map(|i| i["device"].as_str().unwrap()).collect();
    assert_eq!(devs, ["lte", "wifi"]);
    // the Wi-Fi flow's bytes are not on the radio, the LTE flow's not on the AP's link
    let radio_down = tx_bytes(&both, "s1u-enb:pgw->enb");
    let lte_bytes = flow(&both, "lte")["bytes_delivered"].as_f64().unwrap();
    assert!(radio_down < lte_bytes * 1.15, "radio {radio_down} vs {lte_bytes}");
    let ap_down = tx_bytes(&both, "core-ap:core->ap");
    let wifi_bytes = flow(&both, "wifi")["bytes_delivered"].as_f64().unwrap();
    assert!(ap_down >= wifi_bytes && ap_down < wifi_bytes * 1.15, "core->ap {ap_down} vs {wifi_bytes}");
}

#[test]
fn a_host_with_two_links_to_two_routers_has_two_addresses() {
    let text = r#"duration = "2s"
[[node]]
name = "a"
kind = "router"
[[node]]
name = "b"
kind = "router"
[[link]]
between = ["h", "a"]
rate = "10Mbps"
delay = "5ms"
[[link]]
between = ["h", "b"]
rate = "20Mbps"
delay = "5ms"
[[node]]
name = "core"
kind = "router"
[[link]]
between = ["a", "core"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["b", "core"]
rate = "1Gbps"
delay = "1ms"
[[link]]
between = ["core", "server"]
rate = "1Gbps"
delay = "1ms"
[[flow]]
name = "one"
app = "bulk"
from = "h"
to = "server"
[[flow]]
name = "two"
app = "bulk"
from = "h"
to = "server"
bind = "h-b"
"#;
    let s = run_in(text, None);
    let h = s["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "h").unwrap();
    let addrs: Vec<&str> = h["interfaces"].as_array().unwrap().iter().map(|i| i["address"].as_str().unwrap()).collect();
    assert_eq!(addrs, [h["address"].as_str().unwrap(), "10.32.0.1"]);
    let g = |f: &str| flow(&s, f)["goodput_bps"].as_f64().unwrap();
    // each flow has its own link: close to 10 and 20 Mbit/s (less headers and slow start)
    assert!(g("one") > 0.8 * 10e6 && g("one") < 10e6, "{}", g("one"));
    assert!(g("two") > 0.8 * 20e6 && g("two") < 20e6, "{}", g("two"));
    // the server's replies to the second address come back over b
    assert!(tx_bytes(&s, "h-b:b->h") > 0.0 && tx_bytes(&s, "h-a:a->h") > 0.0);
}

#[test]
fn bind_to_an_address_or_name_the_host_does_not_have_is_refused() {
    for (bad, shown) in [("10.9.9.9", "\"10.9.9.9\""), ("eth7", "\"eth7\""), ("10.0.0.2", "\"10.0.0.2\"") /* r1's */] {
        let flows = format!("[[flow]]\nname = \"x\"\napp = \"bulk\"\nfrom = \"ue\"\nto = \"server\"\nbind = \"{bad}\"\n");
        let e = validate(&lte_and_wire(&flows, false), &[], None).unwrap_err().to_string();
        assert!(e.contains("flow[0].bind") && e.contains(shown) && e.contains("radio-ue (10.45.0.1, lte)") && e.contains("wire (10.32.0.1, link)"), "{e}");
    }
}

/// The (source, destination) addresses of every packet of a pcap file (LINKTYPE_RAW).
fn pcap_addrs(path: &std::path::Path) -> Vec<([u8; 4], [u8; 4])> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= b.len() {
        let incl = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        let ip = &b[at + 16..at + 16 + incl];
        assert_eq!(ip[0] >> 4, 4, "IPv4");
        out.push((ip[12..16].try_into().unwrap(), ip[16..20].try_into().unwrap()));
        at += 16 + incl;
    }
    out
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("celltcp-iface-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
