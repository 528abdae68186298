//! The per-segment trace (`trace_segments = true`: the `segments` and `acks` tables, the data of
//! a tcptrace / Wireshark "Stevens" graph) against the sequence-space arithmetic of RFC 9293 §3.4
//! and the sender's own counters in `summary.json`.

use celltcp_scenario::{ColumnData, RunOutput};
use celltcp_validation::*;

fn col_i64<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a [i64] {
    let t = out.timeseries.iter().find(|t| t.name == table).unwrap_or_else(|| panic!("no {table} table"));
    match t.column(col) {
        Some(ColumnData::I64(v)) => v,
        _ => panic!("{table}.{col} is not an integer column"),
    }
}

fn col_f64<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a [f64] {
    let t = out.timeseries.iter().find(|t| t.name == table).unwrap_or_else(|| panic!("no {table} table"));
    match t.column(col) {
        Some(ColumnData::F64(v)) => v,
        _ => panic!("{table}.{col} is not a float column"),
    }
}

fn has_table(out: &RunOutput, name: &str) -> bool {
    out.timeseries.iter().any(|t| t.name == name)
}

fn non_decreasing(v: &[i64]) -> bool {
    v.windows(2).all(|w| w[0] <= w[1])
}

fn non_decreasing_f(v: &[f64]) -> bool {
    v.windows(2).all(|w| w[0] <= w[1])
}

#[test]
fn lossless_trace_is_one_mss_step_per_segment_and_matches_the_counters() {
    // A window-limited flow (64 KB) on a link whose queue holds more than the window: nothing is
    // lost, so the sender sends the stream once, in order, in full segments except where an
    // application write ended (Linux's Nagle, tcp_nagle_check with Minshall's rule, lets one
    // partial segment out at a time).
    let text = single_link("5s", "10Mbps", "20ms", "1000p", 0.0, "cc = \"cubic\"\nmss = 1000\nwindow_exact = \"64KB\"\ntrace_segments = true");
    let out = run_text(&text, 1);
    assert_eq!(flow_f64(&out, 0, "retransmitted_segments"), 0.0);
    let seq = col_i64(&out, "segments", "seq");
    let len = col_i64(&out, "segments", "len");
    assert_eq!(seq.len() as f64, flow_f64(&out, 0, "data_segments_sent"));
    assert!(seq.len() > 1000, "{} segments", seq.len());
    let mut next = 0;
    for (i, (s, l)) in seq.iter().zip(len).enumerate() {
        assert!(*s == next && *l > 0 && *l <= 1000, "segment {i}: ({s}, {l}), expected seq {next}");
        next = s + l;
    }
    let partial = len.iter().filter(|l| **l < 1000).count();
    assert!(partial * 20 < len.len(), "{partial} partial segments of {}", len.len());
    assert!(col_i64(&out, "segments", "retransmission").iter().all(|r| *r == 0));
    assert!(col_i64(&out, "segments", "flow").iter().all(|f| *f == 0));
    assert!(non_decreasing_f(col_f64(&out, "segments", "time_s")));
    // ACKs: the SYN-ACK acknowledges the SYN (offset 0), then cumulative ACKs that never go
    // back and never pass what was sent; no SACK block without a hole
    let ack = col_i64(&out, "acks", "ack");
    let sack = col_i64(&out, "acks", "sack");
    assert_eq!(ack[0], 0);
    assert!(non_decreasing(ack));
    assert!(*ack.last().unwrap() <= seq.last().unwrap() + 1000);
    assert_eq!(ack, sack);
    assert!(non_decreasing_f(col_f64(&out, "acks", "time_s")));
}

#[test]
fn retransmission_flags_count_the_senders_retransmissions() {
    // 1 % random loss: the flagged rows are exactly the sender's retransmitted segments and
    // bytes; every unflagged row is new data, right after the highest byte sent before it, and
    // every flagged row re-sends bytes sent before.
    for (sack, seed) in [("true", 3), ("false", 4)] {
        let text = single_link("20s", "10Mbps", "20ms", "200p", 0.01, &format!("cc = \"cubic\"\nsack = {sack}\ntrace_segments = true"));
        let out = run_text(&text, seed);
        let seq = col_i64(&out, "segments", "seq");
        let len = col_i64(&out, "segments", "len");
        let rtx = col_i64(&out, "segments", "retransmission");
        let n_rtx = rtx.iter().filter(|r| **r == 1).count();
        assert!(n_rtx > 10, "sack {sack}: {n_rtx} retransmissions");
        assert_eq!(n_rtx as f64, flow_f64(&out, 0, "retransmitted_segments"), "sack {sack}");
        assert_eq!(seq.len() as f64, flow_f64(&out, 0, "data_segments_sent"), "sack {sack}");
        let rtx_bytes: i64 = len.iter().zip(rtx).filter(|(_, r)| **r == 1).map(|(l, _)| *l).sum();
        assert_eq!(rtx_bytes as f64, flow_f64(&out, 0, "retransmitted_bytes"), "sack {sack}");
        assert_eq!(len.iter().sum::<i64>() as f64, flow_f64(&out, 0, "bytes_sent"), "sack {sack}");
        let mut high = 0;
        for i in 0..seq.len() {
            if rtx[i] == 1 {
                assert!(seq[i] + len[i] <= high, "sack {sack}: row {i} flagged but sends new data");
            } else {
                assert_eq!(seq[i], high, "sack {sack}: row {i} unflagged but not the next new data");
                high = seq[i] + len[i];
            }
        }
        let ack = col_i64(&out, "acks", "ack");
        let sack_col = col_i64(&out, "acks", "sack");
        assert!(non_decreasing(ack), "sack {sack}");
        assert!(ack.iter().zip(sack_col).all(|(a, s)| s >= a && *s <= high));
        // SACK blocks report data above a hole only when SACK is negotiated
        let above = ack.iter().zip(sack_col).filter(|(a, s)| s > a).count();
        assert_eq!(above > 0, sack == "true", "sack {sack}: {above} ACKs with SACK blocks above the ACK");
    }
}

#[test]
fn trace_follows_the_sender_of_a_reverse_flow_and_only_the_flows_asked_for() {
    // iperf -R: the server sends; the second flow is not traced, and a run without the key has
    // no tables at all
    let base = r#"
duration = "4s"
[[link]]
between = ["client", "server"]
rate = "20Mbps"
delay = "10ms"
queue = "1000p"
[[flow]]
app = "bulk"
from = "client"
to = "server"
window_exact = "64KB"
[[flow]]
app = "iperf"
from = "client"
to = "server"
reverse = true
mss = 1200
window_exact = "64KB"
"#;
    let out = run_text(&base.replace("reverse = true", "reverse = true\ntrace_segments = true"), 1);
    assert!(col_i64(&out, "segments", "flow").iter().all(|f| *f == 1));
    assert!(col_i64(&out, "acks", "flow").iter().all(|f| *f == 1));
    let seq = col_i64(&out, "segments", "seq");
    assert_eq!(seq.len() as f64, flow_f64(&out, 1, "data_segments_sent"));
    let len = col_i64(&out, "segments", "len");
    assert!(seq.windows(2).zip(len.iter()).all(|(w, l)| w[1] == w[0] + l), "one contiguous stream");
    assert_eq!(seq[0], 0);
    assert_eq!(col_i64(&out, "acks", "ack")[0], 0);

    let off = run_text(base, 1);
    assert!(!has_table(&off, "segments") && !has_table(&off, "acks"));
    let off = run_text(&base.replace("reverse = true", "reverse = true\ntrace_segments = false"), 1);
    assert!(!has_table(&off, "segments") && !has_table(&off, "acks"));
}

#[test]
fn a_trace_window_keeps_the_rows_of_the_full_trace_inside_it() {
    // the same seeded run traced whole and from 3 s to 6 s: the window's rows are exactly the
    // full trace's rows at those times, retransmission flags included
    let flow = "cc = \"cubic\"\ntrace_segments = true";
    let full = run_text(&single_link("10s", "10Mbps", "20ms", "100p", 0.01, flow), 5);
    let part = run_text(&single_link("10s", "10Mbps", "20ms", "100p", 0.01, &format!("{flow}\ntrace_window = [\"3s\", \"6s\"]")), 5);
    for (table, cols) in [("segments", &["seq", "len", "retransmission"][..]), ("acks", &["ack", "sack"][..])] {
        let t_full = col_f64(&full, table, "time_s");
        let keep: Vec<usize> = (0..t_full.len()).filter(|&i| (3.0..=6.0).contains(&t_full[i])).collect();
        assert!(keep.len() > 100 && keep.len() < t_full.len() / 2, "{table}: {} of {}", keep.len(), t_full.len());
        assert_eq!(col_f64(&part, table, "time_s"), keep.iter().map(|&i| t_full[i]).collect::<Vec<_>>(), "{table}");
        for c in cols {
            let v = col_i64(&full, table, c);
            assert_eq!(col_i64(&part, table, c), keep.iter().map(|&i| v[i]).collect::<Vec<_>>(), "{table}.{c}");
        }
    }
    assert!(col_i64(&part, "segments", "retransmission").contains(&1));
}
