//! Closed-form checks of the whole stack (links, queues, TCP, congestion control), each against a
//! formula from the literature. These run in CI (`cargo test --release`).

use celltcp_validation::*;

/// Payload share of a full 1500-byte packet with timestamps: 1448 / 1500.
const PAYLOAD_SHARE: f64 = 1448.0 / 1500.0;

#[test]
fn window_limited_flow_gets_window_over_rtt() {
    // 100 Mbit/s, RTT 50 ms (BDP 625 KB) with a 64 KB fixed window: the window limits.
    // Expected goodput = W / RTT, where RTT includes serialising one window at 100 Mbit/s
    // (≈5.4 ms for 64 KB) only partly; allow the band [W/(RTT+ser), W/RTT].
    let w = 65536.0;
    let text = single_link("20s", "100Mbps", "25ms", "1000p", 0.0, "cc = \"cubic\"\nwindow_exact = \"64KB\"");
    let out = run_text(&text, 1);
    let g = flow_f64(&out, 0, "goodput_bps");
    let upper = w * 8.0 / 0.050;
    let lower = w * 8.0 / (0.050 + w * 8.0 / 100e6 / PAYLOAD_SHARE);
    assert!(g <= upper * 1.01 && g >= lower * 0.93, "goodput {g:.0} outside [{lower:.0}, {upper:.0}]");
}

#[test]
fn iperf_w_window_is_linux_doubled_buffer_share_over_rtt() {
    // `window` means `iperf3 -w` on Linux: SO_RCVBUF doubled (net/core/sock.c __sock_set_rcvbuf)
    // and tcp_win_from_space's payload share advertised (scaling_ratio 160/256): 64 KB -> 80 KB,
    // so goodput is 1.25x the `window_exact` case, W' / RTT with W' = 81920.
    let w = 81920.0;
    let text = single_link("20s", "100Mbps", "25ms", "1000p", 0.0, "cc = \"cubic\"\nwindow = \"64KB\"");
    let out = run_text(&text, 1);
    let g = flow_f64(&out, 0, "goodput_bps");
    let upper = w * 8.0 / 0.050;
    let lower = w * 8.0 / (0.050 + w * 8.0 / 100e6 / PAYLOAD_SHARE);
    assert!(g <= upper * 1.01 && g >= lower * 0.93, "goodput {g:.0} outside [{lower:.0}, {upper:.0}]");
    assert!(g > 65536.0 * 8.0 / 0.050 * 1.05, "goodput {g:.0} not above the exact 64 KB window's W/RTT");
}

#[test]
fn long_flow_with_bdp_buffer_fills_the_link() {
    // 10 Mbit/s, RTT 50 ms: BDP = 62.5 KB ≈ 42 packets; a 100-packet buffer ≥ 1 BDP keeps the link
    // busy through every window reduction (Villamizar & Song 1994), so goodput ≈ rate × 1448/1500.
    for cc in ["newreno", "cubic", "bbr"] {
        let text = single_link("60s", "10Mbps", "25ms", "100p", 0.0, &format!("cc = \"{cc}\""));
        let out = run_text(&text, 1);
        let g = flow_f64(&out, 0, "goodput_bps");
        let ideal = 10e6 * PAYLOAD_SHARE;
        assert!(g > 0.95 * ideal && g <= ideal * 1.001, "{cc}: goodput {g:.0} vs ideal {ideal:.0}");
        assert!(link_f64(&out, 0, "utilization") > 0.96, "{cc}: utilisation");
    }
}

#[test]
fn newreno_and_vegas_under_random_loss_land_between_padhye_and_mathis() {
    // p = 1 %, RTT 100 ms, a fat 100 Mbit/s link so only loss limits the window. With delayed
    // ACKs (b = 2) the Padhye model (with timeouts)
    // is the lower edge and Mathis with b = 1 the upper edge.
    // Vegas on this queue-free path has diff = 0 < α in every round (Brakmo & Peterson 1995
    // §3.2): +1 MSS per round and Reno's halving on loss, the AIMD both models assume. Its round
    // is a window less one segment (cc/round.rs), so it adds a = w/(w − 1) MSS per RTT, w the
    // window; Mathis scales as √a, taken at its own mean window √(3/2p). It held to these
    // bounds only once its rounds were counted in delivered bytes: counting bytes sent, each
    // retransmission lengthened every later round, and it got 0.52 Mbit/s, half of Padhye's.
    let p = 0.01;
    // T0: RFC 6298 RTO = max(200 ms floor, SRTT + 4·RTTVAR) ≈ 200 ms on this queue-free path
    let lower = padhye_bps(1448.0, 0.1, p, 2.0, 0.2);
    let w = (1.5 / p).sqrt();
    for (cc, a) in [("newreno", 1.0), ("vegas", w / (w - 1.0))] {
        let upper = mathis_bps(1448.0, 0.1, p, 1.0) * f64::sqrt(a);
        let mut goodputs = Vec::new();
        for seed in 1..=4 {
            let text = single_link("120s", "100Mbps", "50ms", "10000p", 0.0, &format!("cc = \"{cc}\"\nsack = true"));
            // loss only on the data direction matters; ACK loss is harmless at this rate
            let text = text.replace("loss = 0", &format!("loss = {p}"));
            let out = run_text(&text, seed);
            goodputs.push(flow_f64(&out, 0, "goodput_bps"));
        }
        let g = goodputs.iter().sum::<f64>() / goodputs.len() as f64;
        eprintln!("{cc}: goodput {:.2} Mbit/s, Padhye {:.2} .. Mathis {:.2}", g / 1e6, lower / 1e6, upper / 1e6);
        assert!(g >= lower * 0.9 && g <= upper * 1.1, "{cc} goodput {g:.0} outside Padhye {lower:.0} .. Mathis {upper:.0}");
    }
}

#[test]
fn cubic_beats_newreno_at_long_rtt_and_matches_it_at_short_rtt() {
    // RFC 9438 §5: at long RTT and low loss CUBIC's window grows faster than Reno's (its response
    // function does not fall with the RTT); at short RTT it stays in the Reno-friendly region.
    let run = |cc: &str, delay: &str, p: f64, dur: &str| {
        let mut total = 0.0;
        for seed in 1..=3 {
            let text = single_link(dur, "1Gbps", delay, "100000p", 0.0, &format!("cc = \"{cc}\"")).replace("loss = 0", &format!("loss = {p}"));
            total += flow_f64(&run_text(&text, seed), 0, "goodput_bps");
        }
        total / 3.0
    };
    let cubic_long = run("cubic", "100ms", 1e-5, "60s");
    let reno_long = run("newreno", "100ms", 1e-5, "60s");
    assert!(cubic_long > 1.5 * reno_long, "long RTT: cubic {cubic_long:.0} vs newreno {reno_long:.0}");
    let cubic_short = run("cubic", "2ms", 1e-3, "30s");
    let reno_short = run("newreno", "2ms", 1e-3, "30s");
    let ratio = cubic_short / reno_short;
    assert!((0.8..1.6).contains(&ratio), "short RTT: cubic {cubic_short:.0} vs newreno {reno_short:.0}");
}

#[test]
fn bbr_fills_a_small_buffer_and_keeps_a_large_one_short() {
    // Cardwell et al. 2016: BBR paces at the bottleneck rate, so it needs little buffer to keep
    // the link busy, and caps inflight at 2·BDP, so a deep buffer does not fill as with CUBIC.
    let small = single_link("60s", "10Mbps", "25ms", "10p", 0.0, "cc = \"bbr\"");
    let out = run_text(&small, 1);
    let g = flow_f64(&out, 0, "goodput_bps");
    assert!(g > 0.90 * 10e6 * PAYLOAD_SHARE, "BBR with a 0.25-BDP buffer: goodput {g:.0}");

    let big = single_link("60s", "10Mbps", "25ms", "1000p", 0.0, "cc = \"bbr\"");
    let bbr = run_text(&big, 1);
    let cubic = run_text(&big.replace("\"bbr\"", "\"cubic\""), 1);
    let bbr_rtt = flow_f64(&bbr, 0, "rtt_mean_ms");
    let cubic_rtt = flow_f64(&cubic, 0, "rtt_mean_ms");
    // 50 ms base RTT; BBR's queue stays below about one BDP (≤ 2× base RTT on average)
    assert!(bbr_rtt < 100.0, "BBR mean RTT {bbr_rtt:.1} ms with a 1000-packet buffer");
    assert!(cubic_rtt > 2.0 * bbr_rtt, "CUBIC fills the deep buffer: {cubic_rtt:.1} ms vs BBR {bbr_rtt:.1} ms");
}

#[test]
fn no_congestion_control_starves_alone_on_a_bdp_buffer() {
    // Every control that `celltcp list cc` offers, alone on a 10 Mbit/s, 50 ms RTT path with a
    // one-BDP drop-tail buffer (62.5 KB ≈ 42 packets), keeps the link at least 80 % busy.
    for (cc, _) in celltcp_scenario::list_cc() {
        let text = single_link("60s", "10Mbps", "25ms", "42p", 0.0, &format!("cc = \"{cc}\""));
        let out = run_text(&text, 1);
        let u = link_f64(&out, 0, "utilization");
        assert!(u >= 0.80, "{cc}: utilisation {u:.3}");
    }
}
