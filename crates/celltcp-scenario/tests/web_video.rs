//! `app = "web"` and `app = "video"` end to end on a fixed-rate, fixed-delay link (no LTE),
//! against timelines computed by hand: round trips for handshakes, requests and slow-start
//! rounds (web), and the fluid playback-buffer timeline (video).

use celltcp_scenario::{RunOptions, Simulation};
use serde_json::Value;

/// Client and server joined by one 1 Gbit/s link of 20 ms one way (RTT 40 ms): a 1500-byte
/// packet serialises in 12 µs, so timelines are round trips to within a millisecond.
fn run(flow: &str, rate: &str, delay: &str, duration: &str) -> Value {
    let text = format!(
        r#"
duration = "{duration}"
[[link]]
between = ["client", "server"]
rate = "{rate}"
delay = "{delay}"
queue = "1000p"
[[flow]]
name = "f"
from = "client"
to = "server"
{flow}
"#
    );
    let mut sim = Simulation::from_text(&text, &[], &RunOptions { seed: Some(3), ..Default::default() }).unwrap();
    assert!(sim.run(&mut |_| true));
    sim.summary()["flows"][0].clone()
}

fn page_times(f: &Value) -> Vec<f64> {
    f["page_table"].as_array().unwrap().iter().map(|p| p["time_s"].as_f64().unwrap()).collect()
}

fn assert_times(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "pages {got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < tol, "page times {got:?}, hand-computed {want:?}");
    }
}

const RTT: f64 = 0.040;
const DNS: f64 = 0.100;

/// Small objects (each response fits one segment) so that every exchange is one round trip.
const FIXED: &str = r#"app = "web"
page_model = "fixed"
main_size = "1000B"
embedded_objects = 4
embedded_size = "1000B"
pages = 2
reading = "fixed"
reading_time = "1s"
dns_delay = "100ms""#;

#[test]
fn web_one_connection_no_pipelining_takes_one_round_trip_per_object() {
    let f = run(&format!("{FIXED}\nconnections = 1\npipelining = 1"), "1Gbps", "20ms", "10s");
    // page 1: DNS; handshake to the site + main request (2 RTT); handshake to the static host
    // (1 RTT); 4 embedded objects one after the other on one connection (4 RTT)
    // page 2: both connections open: main (1 RTT) + 4 embedded (4 RTT)
    assert_times(&page_times(&f), &[DNS + 7.0 * RTT, 5.0 * RTT], 0.002);
    assert_eq!(f["pages"], 2);
    assert_eq!(f["connections_opened"], 2);
    let mean = f["page_time_mean_s"].as_f64().unwrap();
    assert!((mean - (DNS + 12.0 * RTT) / 2.0).abs() < 0.002, "{mean}");
}

#[test]
fn web_parallel_connections_fetch_embedded_objects_in_one_round() {
    let f = run(&format!("{FIXED}\nconnections = 4\npipelining = 1"), "1Gbps", "20ms", "10s");
    // page 1: DNS + main (2 RTT) + four new connections in parallel (handshake + request: 2 RTT)
    // page 2: main (1 RTT) + the four open connections (1 RTT)
    assert_times(&page_times(&f), &[DNS + 4.0 * RTT, 2.0 * RTT], 0.002);
    assert_eq!(f["connections_opened"], 5);
}

#[test]
fn web_pipelining_sends_all_requests_at_once() {
    // three embedded objects of 200 B: the three requests (3 × 307 B) fit one segment, and so
    // do the three responses, which the server writes together (a partial segment leaves only
    // when nothing is outstanding: endpoint.rs's segmentation rule)
    let small = "app = \"web\"\npage_model = \"fixed\"\nmain_size = \"1000B\"\nembedded_objects = 3\nembedded_size = \"200B\"\npages = 2\nreading = \"fixed\"\nreading_time = \"1s\"\ndns_delay = \"100ms\"\nconnections = 1";
    let f = run(&format!("{small}\npipelining = 3"), "1Gbps", "20ms", "10s");
    // page 1: DNS + main (2 RTT) + static handshake (1 RTT) + one round for all three
    // page 2: main (1 RTT) + one round
    assert_times(&page_times(&f), &[DNS + 4.0 * RTT, 2.0 * RTT], 0.002);
    assert_eq!(f["connections_opened"], 2);
    // without pipelining: one round per object
    let f = run(&format!("{small}\npipelining = 1"), "1Gbps", "20ms", "10s");
    assert_times(&page_times(&f), &[DNS + 6.0 * RTT, 4.0 * RTT], 0.002);
}

#[test]
fn web_large_object_takes_slow_start_rounds() {
    // one main object whose response (body + real header) is exactly 35 segments of 1448 B, on
    // fixed 1 MB socket buffers (no send-buffer growth in the way): with an initial window of
    // 10 segments, slow start sends 10, then 20 (15 if the window grows by one segment per
    // delayed ACK), then the rest: 3 rounds either way. Page time = handshake (1 RTT) + 3 rounds.
    let total = 35 * 1448u64;
    let mut body = total - celltcp_apps::http::response_header_bytes(total);
    while celltcp_apps::http::response_bytes(body) > total {
        body -= 1;
    }
    assert_eq!(celltcp_apps::http::response_bytes(body), total);
    let flow = format!("app = \"web\"\npage_model = \"fixed\"\nmain_size = \"{body}B\"\nembedded_objects = 0\npages = 1\nconnections = 1\nwindow = \"1MB\"");
    let f = run(&flow, "1Gbps", "20ms", "5s");
    assert_times(&page_times(&f), &[4.0 * RTT], 0.003);
    assert_eq!(f["page_table"][0]["bytes"].as_u64().unwrap(), total);
}

#[test]
fn web_ngmn_pages_run_and_sizes_agree_at_both_ends() {
    // the NGMN model with exponential reading times: every page completes (a size mismatch
    // between the ends would hang a page forever), and page times are recorded
    let f = run("app = \"web\"\nreading_time = \"2s\"", "10Mbps", "20ms", "60s");
    let n = f["pages"].as_u64().unwrap();
    assert!(n >= 5, "{f}");
    assert!(f["page_time_mean_s"].as_f64().unwrap() >= 2.0 * RTT);
    assert!(f["connections_opened"].as_u64().unwrap() <= 7);
}

/// The fluid playback timeline (module doc of `video.rs`) for a download of `rate_media` media
/// seconds per second starting at `t0`: (start, stalls as (start, end), finish).
fn fluid_timeline(t0: f64, r: f64, length: f64, threshold: f64) -> (f64, Vec<(f64, f64)>, f64) {
    let media = |t: f64| ((t - t0) * r).clamp(0.0, length);
    let when = |m: f64| t0 + m / r; // media m downloaded by then
    let full = when(length);
    let start = when(threshold.min(length));
    let (mut t, mut pos) = (start, 0.0);
    let mut stalls = Vec::new();
    loop {
        // playing from t at pos runs dry when pos + (s − t) = (s − t0) r: s = (t − pos − r t0) / (1 − r)
        let dry = if r < 1.0 { (t - pos - r * t0) / (1.0 - r) } else { f64::INFINITY };
        if dry >= full {
            return (start, stalls, t + (length - pos));
        }
        pos = media(dry);
        let resume = when((pos + threshold).min(length));
        stalls.push((dry, resume));
        t = resume;
    }
}

#[test]
fn video_on_a_link_slower_than_the_bitrate_stalls_as_the_fluid_timeline_says() {
    // 10 s of 512 kbit/s over 400 kbit/s: goodput 400 × 1448/1500 kbit/s (52 bytes of headers per
    // 1500-byte packet) = 0.754 media-seconds per second.
    let flow = "app = \"video\"\nlength = \"10s\"\nbitrate = \"512kbps\"\nstartup_threshold = \"2s\"";
    let f = run(flow, "400kbps", "10ms", "30s");
    let r = 400_000.0 * 1448.0 / 1500.0 / 512_000.0;
    // the first body byte: SYN/SYN-ACK (1 RTT = 20 ms + serialisations), the request, and the
    // response header: about 60 ms
    let (start, stalls, _end) = fluid_timeline(0.06, r, 10.0, 2.0);
    assert_eq!(stalls.len(), 1, "hand-computed: {stalls:?}");
    let st = f["video_startup_s"].as_f64().unwrap();
    assert!((st - start).abs() < 0.1, "start-up {st} vs {start}");
    assert_eq!(f["video_stalls"].as_u64().unwrap() as usize, stalls.len(), "{f}");
    let stall_time: f64 = stalls.iter().map(|(a, b)| b - a).sum();
    let got = f["video_stall_time_s"].as_f64().unwrap();
    assert!((got - stall_time).abs() < 0.15, "stall time {got} vs {stall_time}");
    assert_eq!(f["video_satisfied"], false, "a {got:.2} s stall");
    assert_eq!(f["video_finished"], true);
}

#[test]
fn video_on_a_fast_link_starts_at_once_and_satisfies() {
    let f = run("app = \"video\"", "20Mbps", "20ms", "120s");
    assert!(f["video_startup_s"].as_f64().unwrap() < 1.0, "{f}");
    assert_eq!(f["video_stalls"], 0);
    assert_eq!(f["video_satisfied"], true);
    assert_eq!(f["video_finished"], true);
    assert_eq!(f["video_length_s"], 90.0);
}

/// A paced player (`mode = "paced"`): 512 kbit/s (64000 byte/s), threshold 2 s, target 10 s,
/// blocks of 64 KiB (1.024 s of media).
const PACED: &str = "app = \"video\"\nmode = \"paced\"\nbitrate = \"512kbps\"\nlength = \"90s\"\nstartup_threshold = \"2s\"\nbuffer_target = \"10s\"\nblock = \"64KB\"";

#[test]
fn paced_video_on_a_fast_link_runs_on_off_blocks_at_the_encoding_rate() {
    // 2 Mbit/s, 5 ms one way: a 1500-byte packet carries 1448 body bytes and serialises in 6 ms,
    // so the body arrives at 250000 × 1448/1500 byte/s; IW10 (14.5 KB) covers the 2.5 KB
    // bandwidth-delay product, so the link stays busy during a block even after an idle period.
    let (link, one_way) = (250_000.0, 0.005);
    let wire = |bytes: f64| bytes * 1500.0 / 1448.0 / link;
    let block = 65_536.0;
    let hdr = celltcp_apps::http::response_header_bytes(65_536) as f64;
    let req = one_way + (celltcp_apps::http::request_bytes() as f64 + 52.0) / link;
    // ON: the request's trip, then the response's first packet's propagation and its bytes
    let on = req + one_way + wire(hdr + block);
    let period = block / 64_000.0; // 1.024 s of media per block
    // start-up: handshake (1 RTT), block 1, then block 2 up to 2 s of media (128000 bytes)
    let startup = 2.0 * one_way + on + req + one_way + wire(hdr + 128_000.0 - block);
    let a = run(PACED, "2Mbps", "5ms", "30s");
    let b = run(PACED, "2Mbps", "5ms", "70s");
    for f in [&a, &b] {
        assert_eq!(f["video_mode"], "paced", "{f}");
        assert_eq!(f["video_stalls"], 0, "{f}");
        let st = f["video_startup_s"].as_f64().unwrap();
        assert!((st - startup).abs() < 0.02, "start-up {st} vs hand-computed {startup}");
    }
    // steady state between 30 s and 70 s: one block per 1.024 s, each ON for `on`
    let d = |k: &str| b[k].as_f64().unwrap() - a[k].as_f64().unwrap();
    let (requests, on_time) = (d("video_requests"), d("video_on_time_s"));
    let got_period = 40.0 / requests;
    eprintln!("start-up {} (hand {startup:.4}); period {got_period:.4} (hand {period}); duty {:.4} (hand {:.4}); downloaded {} / {}", a["video_startup_s"], on_time / 40.0, on / period, a["video_downloaded_bytes"], b["video_downloaded_bytes"]);
    assert!((got_period - period).abs() / period < 0.03, "ON/OFF period {got_period} vs {period} ({requests} requests)");
    let duty = on_time / 40.0;
    assert!((duty - on / period).abs() < 0.02, "duty cycle {duty} vs hand-computed {} (ON {on} s)", on / period);
    // bytes downloaded by t: 64000 byte/s × (t − start-up + target), to within a block
    for (f, t) in [(&a, 30.0), (&b, 70.0)] {
        let got = f["video_downloaded_bytes"].as_f64().unwrap();
        let want = 64_000.0 * (t - startup + 10.0);
        assert!((got - want).abs() <= block + 1000.0, "downloaded {got} by {t} s vs {want}");
    }
    // the greedy player has the whole clip by 30 s: the paced one costs well under half
    let greedy = run("app = \"video\"", "2Mbps", "5ms", "30s");
    assert_eq!(greedy["video_downloaded_bytes"], 5_760_000, "{greedy}");
    assert!(a["video_downloaded_bytes"].as_f64().unwrap() < 0.5 * 5_760_000.0);
}

#[test]
fn paced_video_on_a_link_slower_than_the_bitrate_stalls_as_the_fluid_timeline_says() {
    // 10 s of 512 kbit/s over 400 kbit/s, target 4 s: the buffer never reaches the target, so
    // the player is always ON, one block after the other; each block of 65536 bytes takes its
    // request's trip (20 ms + 359 bytes) and its response at 400 × 1448/1500 kbit/s: an
    // effective rate of 1.024 media-seconds per block time.
    let flow = "app = \"video\"\nmode = \"paced\"\nlength = \"10s\"\nbitrate = \"512kbps\"\nstartup_threshold = \"2s\"\nbuffer_target = \"4s\"\nblock = \"64KB\"";
    let f = run(flow, "400kbps", "10ms", "30s");
    let link = 50_000.0;
    let hdr = celltcp_apps::http::response_header_bytes(65_536) as f64;
    let per_block = 0.02 + (celltcp_apps::http::request_bytes() as f64 + 52.0) / link + (hdr + 65_536.0) * 1500.0 / 1448.0 / link;
    let r = 1.024 / per_block;
    let (start, stalls, _end) = fluid_timeline(0.06, r, 10.0, 2.0);
    assert!(!stalls.is_empty(), "hand-computed: {stalls:?}");
    eprintln!("fluid: r {r:.4}, start {start:.3}, stalls {stalls:?}; run: {f}");
    let st = f["video_startup_s"].as_f64().unwrap();
    assert!((st - start).abs() < 0.1, "start-up {st} vs {start}");
    assert_eq!(f["video_stalls"].as_u64().unwrap() as usize, stalls.len(), "{f} vs {stalls:?}");
    let stall_time: f64 = stalls.iter().map(|(a, b)| b - a).sum();
    let got = f["video_stall_time_s"].as_f64().unwrap();
    assert!((got - stall_time).abs() < 0.15, "stall time {got} vs {stall_time}");
    assert_eq!(f["video_finished"], true);
    assert_eq!(f["video_downloaded_bytes"], 640_000);
    assert_eq!(f["video_requests"], 10, "9 blocks of 65536 bytes and one of 50176");
}

#[test]
fn web_and_video_keys_are_checked() {
    let bad = |flow: &str| {
        let text = format!("duration = \"1s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flow]]\nfrom = \"a\"\nto = \"b\"\n{flow}\n");
        Simulation::from_text(&text, &[], &RunOptions::default()).err().map(|e| e.to_string()).unwrap_or_default()
    };
    assert!(bad("app = \"web\"\nconnections = 0").contains("connections"));
    assert!(bad("app = \"web\"\nmain_size = \"1KB\"").contains("page_model"));
    assert!(bad("app = \"video\"\nlength = \"64KB\"").contains("length"));
    assert!(bad("app = \"bulk\"\nlength = \"3s\"").contains("length"));
    assert!(bad("app = \"bulk\"\npages = 3").contains("pages"));
    assert!(bad("app = \"video\"\npipelining = 2").contains("pipelining"));
    assert!(bad("app = \"video\"\nblock = \"64KB\"").contains("mode = \"paced\""));
    assert!(bad("app = \"video\"\nmode = \"paced\"\nbuffer_target = \"1s\"").contains("buffer_target"));
    assert!(bad("app = \"video\"\nmode = \"paced\"\nblock = \"0B\"").contains("block"));
    assert!(bad("app = \"video\"\nmode = \"fast\"").contains("mode"));
    assert!(bad("app = \"bulk\"\nmode = \"paced\"").contains("mode"));
}

#[test]
fn the_examples_run_as_written() {
    for (file, field) in [("web.toml", "page_time_mean_s"), ("video.toml", "video_startup_s"), ("video-paced.toml", "video_downloaded_bytes")] {
        let path = format!("{}/../../examples/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let mut sim = Simulation::from_text(&text, &[], &RunOptions::default()).unwrap();
        assert!(sim.run(&mut |_| true));
        let s = sim.summary();
        let f = &s["flows"][0];
        assert!(f[field].as_f64().is_some(), "{file}: {f}");
        eprintln!("{file}: {f}");
    }
}
