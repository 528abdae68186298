//! Wireshark's MPTCP dissector reads the options celltcp writes to pcap (skipped without
//! tshark): the MP_CAPABLE keys, the join's token, the DSS mappings and DATA_ACKs, each at the
//! value RFC 8684 says (token and IDSN from SHA-256 of the key).

mod common;

use celltcp_mptcp::crypto;
use celltcp_mptcp::MptcpConfig;
use celltcp_net::{PcapWriter, Snaplen};
use common::*;

#[test]
fn tshark_decodes_our_mptcp_options() {
    let ok = std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("note: tshark not installed; skipping tshark_decodes_our_mptcp_options");
        return;
    }
    let p = PathCfg::new(10, 5, 50);
    let mut n = Net::new(&[p, p], &[0, 1], MptcpConfig::default(), 2);
    n.to_write = 200_000;
    n.close_after = true;
    n.capture = Some(Vec::new());
    n.run_until(ms(10_000), |n| {
        n.a.data_fin_acked() && n.b.as_ref().is_some_and(|b| b.data_fin_acked())
    });
    assert_eq!(n.b_read, 200_000);
    let path = std::env::temp_dir().join(format!("celltcp-mptcp-{}.pcap", std::process::id()));
    {
        let f = std::fs::File::create(&path).unwrap();
        let mut w = PcapWriter::new(f, Snaplen::Bytes(65_535)).unwrap();
        for (t, pkt, mptcp) in n.capture.as_ref().unwrap() {
            w.write_packet_mptcp(*t, pkt, mptcp).unwrap();
        }
        w.flush().unwrap();
    }
    let fields = [
        "tcp.options.mptcp.subtype",
        "tcp.options.mptcp.sendkey",
        "tcp.options.mptcp.recvkey",
        "tcp.options.mptcp.recvtok",
        "tcp.options.mptcp.rawdataseqno",
        "tcp.options.mptcp.rawdataack",
        "tcp.options.mptcp.datalvllen",
        "tcp.options.mptcp.datafin.flag",
        "tcp.checksum.status",
        "ip.src",
    ];
    let mut cmd = std::process::Command::new("tshark");
    cmd.args([
        "-r",
        path.to_str().unwrap(),
        "-T",
        "fields",
        "-E",
        "separator=;",
        "-o",
        "tcp.check_checksum:TRUE",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
    let (ka, kb) = (n.a_key, n.b.as_ref().unwrap().local_key());
    let hex = |k: u64| k.to_string();
    // The SYN/ACK carries B's key; the third ACK A's and B's (RFC 8684 §3.1).
    assert!(
        rows.iter()
            .any(|r| r[0] == "0" && r[1] == hex(kb) && r[2].is_empty()),
        "{text}"
    );
    assert!(
        rows.iter()
            .any(|r| r[0] == "0" && r[1] == hex(ka) && r[2] == hex(kb)),
        "{text}"
    );
    // The join's SYN carries token(B).
    let tok = crypto::token(kb).to_string();
    assert!(
        rows.iter().any(|r| r[0] == "1" && r[3] == tok),
        "no MP_JOIN with token {tok}: {text}"
    );
    // DSS mappings start at IDSN_A + 1 + offset; B's DATA_ACKs reach IDSN_A + 1 + 200000 + 1
    // (the DATA_FIN's octet).
    let idsn_a = crypto::idsn(ka);
    let dsns: Vec<u64> = rows
        .iter()
        .filter(|r| r[0] == "2" && !r[4].is_empty() && r[9].starts_with("10.0."))
        .map(|r| r[4].parse().unwrap())
        .collect();
    assert!(!dsns.is_empty(), "{text}");
    assert!(
        dsns.iter().all(|&d| d.wrapping_sub(idsn_a + 1) <= 200_000),
        "{dsns:?}"
    );
    // B's own DATA_FIN: a one-octet mapping at IDSN_B + 1 (it sent no data).
    let idsn_b = crypto::idsn(kb);
    assert!(
        rows.iter().any(|r| r[0] == "2"
            && r[9] == "10.9.0.1"
            && r[4] == (idsn_b + 1).to_string()
            && r[7] == "1"),
        "{text}"
    );
    let acks: Vec<u64> = rows
        .iter()
        .filter(|r| r[0] == "2" && !r[5].is_empty())
        .map(|r| r[5].parse().unwrap())
        .collect();
    assert!(
        acks.contains(&(idsn_a + 1 + 200_001)),
        "no DATA_ACK of the DATA_FIN"
    );
    assert!(
        rows.iter().any(|r| r[0] == "2" && r[7] == "1"),
        "no DATA_FIN"
    );
    // Every TCP checksum, options included, is right.
    assert!(rows.iter().all(|r| r[8] == "1"), "{text}");
}
