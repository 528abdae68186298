//! Hidden stations side by side with ns-3 3.37 (`bench/ns3/wifi-hidden.cc`; docs/validation.md,
//! "Hidden stations vs ns-3").
//!
//! The same cases in both: 802.11a, an AP and two saturated stations (1,500-byte MSDUs, i.e.
//! ns-3's 1,472-byte UDP payloads), SNR 60 dB to the AP (ns-3: 50 dB of matrix loss), the
//! stations hidden from each other (ns-3: 200 dB) or sensing each other (the control), 6 and
//! 54 Mbit/s, basic access and RTS/CTS for every frame, no aggregation, the retry limits of
//! both (dot11ShortRetryLimit 7, dot11LongRetryLimit 4; ns-3's MaxSsrc/MaxSlrc), control frames
//! at 6 (6 Mbit/s data) or 24 Mbit/s (54), 5 s counted, three seeds each. The ns-3 figures are
//! the means over seeds 1–3 of
//! `bench/ns3/build/wifi-hidden --rate=R --rts=0|1 --hidden=0|1 --seed=S [--errorModel=ns3::NistErrorRateModel]`.
//!
//! What is checked, and why not more (docs/validation.md explains each with ns-3's traces):
//! - goodput within 5 % of ns-3 in every case but one, and the fraction of data frames lost at
//!   the AP within 0.03 under basic access;
//! - the exception, 6 Mbit/s, basic access, hidden: ns-3's default table-based error model
//!   decodes the earlier of two overlapping frames at SINR ≈ 0 dB (BPSK 1/2) in about 11 % of
//!   the overlaps, celltcp never (no capture: an overlap loses both). With
//!   `NistErrorRateModel`, under which ns-3 decodes none of them, the figures agree (within
//!   10 %, the lost fraction within 0.03): checked against that run;
//! - the fraction of RTSs lost with RTS/CTS when hidden is printed, not checked: celltcp's is
//!   higher (0.149 and 0.155 against ns-3's 0.119 and 0.118) with the same goodput. It counts
//!   the RTSs that got no CTS over the RTSs sent, as ns-3's `lost_rts` does (it used to be
//!   `collisions / ppdu_tx`, which also counts the data frames lost after their CTS: 0.160 and
//!   0.171). Printed for seed 1: what each lost RTS overlapped at the AP (the other station's
//!   RTS, the AP's own CTS or ACK, the other station's data), beside ns-3's `--overlaps=1`
//!   counts. At 6 Mbit/s the overlapping RTS pairs are as frequent as in ns-3 (99 against 96)
//!   and the gap is ns-3's capture of the earlier RTS (under `NistErrorRateModel` its lost
//!   fraction is 0.090); at 54 Mbit/s every kind is 1.13–1.29 times ns-3's, not explained yet
//!   (docs/validation.md lists what was ruled out). Part of the gap was aCCATime, which celltcp
//!   now models (`bss/hidden.rs`; 0.19–0.20 without, in the old count).

use std::collections::BTreeMap;

use celltcp_engine::{SimDuration, SimTime};
use celltcp_wifi::air::{FrameKind, MacAddr};
use celltcp_wifi::dcf::RTS_BYTES;
use celltcp_wifi::phy::txtime;
use celltcp_wifi::{Bss, BssConfig, Channel, Hears, Node, RateKind, Standard, WifiOutput};

const MSDU: u32 = 1500;

/// One case: (data rate Mbit/s, RTS/CTS, hidden) and ns-3's mean goodput (Mbit/s) and lost
/// fraction at the AP (data MPDUs under basic access, RTSs under RTS/CTS), with its default
/// error model (table-based) and with `NistErrorRateModel`.
struct Case {
    rate_mbps: u32,
    rts: bool,
    hidden: bool,
    ns3: (f64, f64),
    ns3_nist: (f64, f64),
}

const CASES: [Case; 8] = [
    Case { rate_mbps: 6, rts: false, hidden: true, ns3: (1.441, 0.815), ns3_nist: (0.820, 0.888) },
    Case { rate_mbps: 6, rts: false, hidden: false, ns3: (5.050, 0.101), ns3_nist: (5.050, 0.101) },
    Case { rate_mbps: 6, rts: true, hidden: true, ns3: (4.962, 0.118), ns3_nist: (4.922, 0.090) },
    Case { rate_mbps: 6, rts: true, hidden: false, ns3: (5.016, 0.106), ns3_nist: (5.016, 0.106) },
    Case { rate_mbps: 54, rts: false, hidden: true, ns3: (21.986, 0.345), ns3_nist: (22.034, 0.342) },
    Case { rate_mbps: 54, rts: false, hidden: false, ns3: (30.226, 0.109), ns3_nist: (30.226, 0.109) },
    Case { rate_mbps: 54, rts: true, hidden: true, ns3: (23.682, 0.119), ns3_nist: (23.667, 0.124) },
    Case { rate_mbps: 54, rts: true, hidden: false, ns3: (25.352, 0.110), ns3_nist: (25.352, 0.110) },
];

struct Run {
    goodput_bps: f64,
    /// Frames that open an exchange (data, or RTS) lost at the AP, over those sent (with RTS/CTS
    /// the RTSs only, as ns-3's `lost_rts`: a data frame lost after its CTS is not counted).
    lost: f64,
    /// With RTS/CTS: the RTSs lost, by what they overlapped at the AP: the other station's RTS,
    /// the AP's own CTS or ACK (it was transmitting), the other station's data, nothing.
    rts_lost_by: [u64; 4],
    rts_sent: usize,
    /// Pairs of exchange-opening PPDUs of the two stations whose starts are within 12 slots,
    /// by the offset in slots (0: the same slot).
    near: BTreeMap<i64, u64>,
    /// Per station, the failed openings (RTS without the station's data after it, or data not
    /// decoded) before each success, 7 = 7 or more (ns-3's "failures_before_success").
    fail_runs: BTreeMap<usize, u64>,
}

fn run(c: &Case, seed: u64) -> Run {
    let mut cfg = BssConfig::new(Standard::A);
    cfg.channel = Channel::FixedSnr(60.0);
    cfg.rate = RateKind::Constant(if c.rate_mbps == 6 { 0 } else { 7 });
    cfg.rts_cts = c.rts;
    let mut bss: Bss<()> = Bss::new(cfg, &[5.0, 5.0], seed, "hidden");
    let mut h = Hears::all(3);
    if c.hidden {
        h.set_hidden(1, 2);
    }
    bss.set_hears_per_ppdu(h);
    bss.enable_air_capture("hidden");
    let mut opens: Vec<(SimTime, MacAddr)> = Vec::new();
    // every station frame (RTS or data) in air order, for the failures before each success
    let mut sta_frames: Vec<(SimTime, MacAddr, bool, bool)> = Vec::new();
    // the AP's CTSs and ACKs (their starts)
    let mut ap_frames: Vec<(SimTime, bool)> = Vec::new();
    let mut out = Vec::new();
    let warm = SimTime::from_millis(200);
    let end = SimTime::from_millis(5200);
    let mut now = SimTime::ZERO;
    let mut bytes = 0u64;
    let mut at_warm = None;
    let counters = |b: &Bss<()>| (0..2).map(|i| &b.sta_stats(i).up).fold((0, 0), |a, u| (a.0 + u.ppdu_tx, a.1 + u.collisions));
    while now < end {
        for s in 0..2 {
            while bss.queue_len(Node::Sta(s), Node::Ap) < 130 {
                bss.enqueue(now, Node::Sta(s), Node::Ap, (), MSDU).unwrap();
            }
        }
        now = bss.next_deadline().expect("saturated BSS is never idle");
        if at_warm.is_none() && now >= warm {
            at_warm = Some(counters(&bss));
        }
        bss.on_timer(now, &mut out);
        for f in bss.air_log().expect("capture on").drain() {
            match &f.kind {
                FrameKind::Cts { .. } if f.at >= warm => ap_frames.push((f.at, true)),
                FrameKind::Ack { .. } if f.at >= warm => ap_frames.push((f.at, false)),
                _ => {}
            }
            match &f.kind {
                FrameKind::Rts { ta, .. } if f.at >= warm => sta_frames.push((f.at, *ta, false, f.fcs_ok)),
                FrameKind::Data { addr, .. } if f.at >= warm => sta_frames.push((f.at, addr[1], true, f.fcs_ok)),
                _ => {}
            }
            match &f.kind {
                FrameKind::Rts { ta, .. } if c.rts && f.at >= warm => opens.push((f.at, *ta)),
                FrameKind::Data { addr, .. } if !c.rts && f.at >= warm => opens.push((f.at, addr[1])),
                _ => {}
            }
        }
        for o in out.drain(..) {
            if let WifiOutput::Delivered { at, .. } = o {
                if at >= warm && at < end {
                    bytes += MSDU as u64;
                }
            }
        }
    }
    let (tx0, lost0) = at_warm.unwrap();
    let (tx, lost) = counters(&bss);
    let mut rts_lost_by = [0u64; 4];
    let mut rts_sent = 0;
    let mut lost = (lost - lost0) as f64 / (tx - tx0) as f64;
    if c.rts {
        // PPDU lengths: RTS, CTS and ACK at the control rate, the data at the data rate
        let ctrl = celltcp_wifi::TxVector::ofdm(if c.rate_mbps == 6 { 0 } else { 4 });
        let data = celltcp_wifi::TxVector::ofdm(if c.rate_mbps == 6 { 0 } else { 7 });
        let (t_rts, t_resp) = (txtime(&ctrl, RTS_BYTES, SimDuration::ZERO), txtime(&ctrl, 14, SimDuration::ZERO));
        let t_data = txtime(&data, MSDU + 36, SimDuration::ZERO);
        let overlaps = |a: SimTime, da: SimDuration, b: SimTime, db: SimDuration| a < b + db && b < a + da;
        // an RTS got its CTS when its station's next frame is data (the capture marks every
        // frame of an exchange whose data collided as lost, its RTS included)
        let mut sorted = sta_frames.clone();
        sorted.sort_by_key(|x| x.0);
        let answered = |i: usize| sorted[i + 1..].iter().find(|y| y.1 == sorted[i].1).is_some_and(|y| y.2);
        let rtss: Vec<usize> = (0..sorted.len()).filter(|&i| !sorted[i].2).collect();
        for x in rtss.iter().filter(|&&i| !answered(i)).map(|&i| &sorted[i]) {
            let other = |d: bool, len: SimDuration| sta_frames.iter().any(|y| y.1 != x.1 && y.2 == d && overlaps(x.0, t_rts, y.0, len));
            let k = if other(false, t_rts) {
                0
            } else if ap_frames.iter().any(|&(b, _)| overlaps(x.0, t_rts, b, t_resp)) {
                1
            } else if other(true, t_data) {
                2
            } else {
                3
            };
            rts_lost_by[k] += 1;
        }
        rts_sent = rtss.len();
        lost = rts_lost_by.iter().sum::<u64>() as f64 / rts_sent as f64;
    }
    opens.sort_by_key(|o| o.0);
    let mut near = BTreeMap::new();
    for (i, a) in opens.iter().enumerate() {
        for b in opens[i + 1..].iter().take_while(|b| b.0 < a.0 + SimDuration::from_micros(12 * 9)) {
            if b.1 != a.1 {
                *near.entry(((b.0 - a.0).as_secs_f64() / 9e-6).round() as i64).or_insert(0) += 1;
            }
        }
    }
    sta_frames.sort_by_key(|x| x.0);
    let mut fail_runs = BTreeMap::new();
    let stations: Vec<MacAddr> = { let mut v: Vec<MacAddr> = sta_frames.iter().map(|x| x.1).collect(); v.sort(); v.dedup(); v };
    for st in stations {
        let mine: Vec<_> = sta_frames.iter().filter(|x| x.1 == st).collect();
        let mut run = 0;
        for (i, x) in mine.iter().enumerate() {
            if c.rts && x.2 {
                continue;
            }
            let ok = if c.rts { mine.get(i + 1).is_some_and(|y| y.2) } else { x.3 };
            if ok {
                *fail_runs.entry(run.min(7)).or_insert(0u64) += 1;
                run = 0;
            } else {
                run += 1;
            }
        }
    }
    Run { goodput_bps: bytes as f64 * 8.0 / (end - warm).as_secs_f64(), lost, rts_lost_by, rts_sent, near, fail_runs }
}

#[test]
fn hidden_stations_side_by_side_with_ns3() {
    // the RTS size the ns-3 program's traces show (20 octets at the control rate)
    assert_eq!(txtime(&celltcp_wifi::TxVector::ofdm(4), RTS_BYTES, SimDuration::ZERO), SimDuration::from_micros(28));
    println!("| rate | access | stations | celltcp Mbit/s | ns-3 | diff | ns-3 (Nist) | celltcp lost | ns-3 lost | ns-3 (Nist) lost |");
    for c in &CASES {
        let r: Vec<Run> = (1..=3).map(|s| run(c, s)).collect();
        let mbps = r.iter().map(|x| x.goodput_bps).sum::<f64>() / 3e6;
        let lost = r.iter().map(|x| x.lost).sum::<f64>() / 3.0;
        let d = (mbps - c.ns3.0) / c.ns3.0;
        let access = if c.rts { "RTS/CTS" } else { "basic" };
        let who = if c.hidden { "hidden" } else { "sensing" };
        println!("| {} | {access} | {who} | {mbps:.3} | {:.3} | {:+.1} % | {:.3} | {lost:.3} | {:.3} | {:.3} |", c.rate_mbps, c.ns3.0, d * 100.0, c.ns3_nist.0, c.ns3.1, c.ns3_nist.1);
        if c.hidden {
            println!("    exchange-opening PPDUs of the two stations starting within 12 slots, by offset (seed 1): {:?}", r[0].near);
            println!("    failed openings before each success (seed 1): {:?}", r[0].fail_runs);
            if c.rts {
                let b = r[0].rts_lost_by;
                println!("    RTSs lost (seed 1) overlapping the other's RTS {}, the AP's CTS/ACK {}, the other's data {}, nothing {}, of {} sent", b[0], b[1], b[2], b[3], r[0].rts_sent);
            }
        }
        if c.rate_mbps == 6 && !c.rts && c.hidden {
            // no capture in celltcp: against ns-3 with the error model under which it decodes
            // no frame of an overlap
            let dn = (mbps - c.ns3_nist.0) / c.ns3_nist.0;
            assert!(dn.abs() < 0.10, "{access} {who} {}: {mbps} Mbit/s against ns-3 (Nist) {}", c.rate_mbps, c.ns3_nist.0);
            assert!((lost - c.ns3_nist.1).abs() < 0.03, "{access} {who}: lost {lost} against ns-3 (Nist) {}", c.ns3_nist.1);
            // and ns-3's default model does better, by decoding some earlier frames
            assert!(mbps < 0.75 * c.ns3.0, "{mbps} against ns-3's {}", c.ns3.0);
            continue;
        }
        assert!(d.abs() < 0.05, "{access} {who} {}: {mbps} Mbit/s against ns-3 {}", c.rate_mbps, c.ns3.0);
        if !c.rts || !c.hidden {
            assert!((lost - c.ns3.1).abs() < 0.03, "{access} {who} {}: lost {lost} against ns-3 {}", c.rate_mbps, c.ns3.1);
        }
    }
}
