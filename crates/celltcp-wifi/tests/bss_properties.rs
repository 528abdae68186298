//! Properties of the BSS coordinator: every packet is delivered once or dropped once, in order
//! per sender–receiver pair, under collisions, frame errors, RTS/CTS and relaying; and the same
//! seed gives the same run.

use celltcp_engine::SimTime;
use celltcp_wifi::{Bss, BssConfig, Channel, Hears, Node, RateKind, Standard, WifiOutput};
use rand::{Rng, SeedableRng};

/// A packet: (source, destination, sequence number within the pair).
type Pkt = (Node, Node, u32);

struct Outcome {
    delivered: Vec<(SimTime, Pkt)>,
    dropped: Vec<Pkt>,
    refused: Vec<Pkt>,
    accepted: Vec<Pkt>,
}

/// Offers `per_pair` packets on every pair of `pairs` at random times over 2 s, runs until the
/// BSS is idle and returns what happened to each.
fn run(cfg: BssConfig, n_sta: usize, pairs: &[(Node, Node)], per_pair: u32, seed: u64) -> (Outcome, Bss<Pkt>) {
    run_hears(cfg, n_sta, pairs, per_pair, seed, None)
}

/// As [`run`], with a "hears" relation (the per-PPDU path of hidden stations).
fn run_hears(cfg: BssConfig, n_sta: usize, pairs: &[(Node, Node)], per_pair: u32, seed: u64, hears: Option<Hears>) -> (Outcome, Bss<Pkt>) {
    let mut bss: Bss<Pkt> = Bss::new(cfg, &vec![10.0; n_sta], seed, "props");
    if let Some(h) = hears {
        bss.set_hears(h);
    }
    let mut traffic_rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xabc);
    let mut arrivals: Vec<(SimTime, Pkt)> = Vec::new();
    for &(a, b) in pairs {
        for s in 0..per_pair {
            arrivals.push((SimTime::from_nanos(traffic_rng.gen_range(0..2_000_000_000)), (a, b, s)));
        }
    }
    // sequence numbers in arrival order within each pair
    arrivals.sort_by_key(|&(t, p)| (t, p.0, p.1, p.2));
    let mut counters = std::collections::HashMap::new();
    for (_, p) in arrivals.iter_mut() {
        let c = counters.entry((p.0, p.1)).or_insert(0u32);
        p.2 = *c;
        *c += 1;
    }
    let mut o = Outcome { delivered: vec![], dropped: vec![], refused: vec![], accepted: vec![] };
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let next_arrival = arrivals.get(i).map(|a| a.0);
        let next = match (next_arrival, bss.next_deadline()) {
            (Some(a), Some(d)) => a.min(d),
            (a, d) => match a.or(d) {
                Some(t) => t,
                None => break,
            },
        };
        while i < arrivals.len() && arrivals[i].0 == next {
            let (t, p) = arrivals[i];
            match bss.enqueue(t, p.0, p.1, p, 1000 + 37 * (p.2 % 13)) {
                Ok(()) => o.accepted.push(p),
                Err(p) => o.refused.push(p),
            }
            i += 1;
        }
        bss.on_timer(next, &mut out);
        for x in out.drain(..) {
            match x {
                WifiOutput::Delivered { at, from, to, pkt } => {
                    assert_eq!((from, to), (pkt.0, pkt.1));
                    o.delivered.push((at, pkt));
                }
                WifiOutput::Dropped { pkt, .. } => o.dropped.push(pkt),
            }
        }
    }
    (o, bss)
}

fn check_conservation(o: &Outcome) {
    let mut seen = std::collections::HashSet::new();
    for p in o.delivered.iter().map(|d| &d.1).chain(&o.dropped) {
        assert!(seen.insert(*p), "{p:?} came out twice");
    }
    let accepted: std::collections::HashSet<_> = o.accepted.iter().copied().collect();
    assert_eq!(seen, accepted, "what went in is not what came out");
    // in order per pair
    let mut last = std::collections::HashMap::new();
    for (t, p) in &o.delivered {
        if let Some(&(lt, ls)) = last.get(&(p.0, p.1)) {
            assert!(p.2 > ls && *t >= lt, "{p:?} after seq {ls}");
        }
        last.insert((p.0, p.1), (*t, p.2));
    }
}

fn pairs(n: u16) -> Vec<(Node, Node)> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push((Node::Ap, Node::Sta(i)));
        v.push((Node::Sta(i), Node::Ap));
    }
    // two relayed station-to-station flows
    v.push((Node::Sta(0), Node::Sta(1)));
    v.push((Node::Sta(2), Node::Sta(0)));
    v
}

#[test]
fn conservation_without_loss_delivers_everything_in_order() {
    let mut cfg = BssConfig::new(Standard::Ac);
    cfg.channel = Channel::FixedSnr(45.0);
    cfg.edca = Some(celltcp_wifi::dcf::EdcaParams { short_retry_limit: 1000, long_retry_limit: 1000, ..celltcp_wifi::dcf::EdcaParams::best_effort(&Standard::Ac.timing(celltcp_wifi::Band::Ghz5)) });
    let (o, bss) = run(cfg, 6, &pairs(6), 500, 1);
    eprintln!("accepted {} delivered {} dropped {} refused {} collisions {}", o.accepted.len(), o.delivered.len(), o.dropped.len(), o.refused.len(), bss.bss_stats().collisions);
    check_conservation(&o);
    assert!(o.dropped.is_empty() && o.refused.is_empty());
    assert_eq!(o.delivered.len(), o.accepted.len());
    // the offered load (≈ 14 × 1500 × 8.7 kbit / 2 s ≈ 90 Mbit/s) beats one 65 Mbit/s channel:
    // collisions and aggregation both happen
    assert!(bss.bss_stats().collisions > 0);
    assert!((0..6).any(|i| bss.sta_stats(i).down.mean_ampdu_mpdus() > 2.0));
}

#[test]
fn conservation_under_collisions_errors_and_retry_drops() {
    for (standard, rts, ampdu) in [(Standard::Ac, false, true), (Standard::Ac, true, true), (Standard::G, false, false), (Standard::G, true, false), (Standard::N, false, true)] {
        let mut cfg = BssConfig::new(standard);
        // the SNR at which a 1200-byte MPDU at MCS 7 fails 30 % of the time
        let v = celltcp_wifi::TxVector { mcs: 7, ..celltcp_wifi::TxVector::ofdm(0) };
        let v = match standard {
            Standard::G => v,
            Standard::N => celltcp_wifi::TxVector { class: celltcp_wifi::phy::PhyClass::Ht, ..v },
            _ => celltcp_wifi::TxVector { class: celltcp_wifi::phy::PhyClass::Vht, ..v },
        };
        let (mut lo, mut hi) = (0.0, 40.0);
        for _ in 0..50 {
            let mid = (lo + hi) / 2.0;
            if celltcp_wifi::error::per(&v, mid, 1200) > 0.3 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        cfg.channel = Channel::FixedSnr(lo);
        cfg.rts_cts = rts;
        cfg.ampdu = ampdu;
        cfg.queue_limit_pkts = 200;
        let (o, bss) = run(cfg, 8, &pairs(8), 600, 7);
        let retry_drops: u64 = (0..8).map(|i| bss.sta_stats(i).up.retry_drops + bss.sta_stats(i).down.retry_drops).sum();
        eprintln!("{standard:?} rts {rts}: accepted {} delivered {} dropped {} (retry {retry_drops}) refused {} collisions {}", o.accepted.len(), o.delivered.len(), o.dropped.len(), o.refused.len(), bss.bss_stats().collisions);
        check_conservation(&o);
        assert!(!o.dropped.is_empty(), "{standard:?} rts {rts}: no retry drops");
        assert!(o.delivered.len() > o.dropped.len());
        assert!(bss.bss_stats().collisions > 0, "{standard:?} rts {rts}: no collisions");
        let retx: u64 = (0..8).map(|i| bss.sta_stats(i).up.mpdu_retx + bss.sta_stats(i).down.mpdu_retx).sum();
        assert!(retx > 0);
    }
}

#[test]
fn conservation_with_hidden_stations() {
    // stations 0–1, 2–3, 0–3 and 4–5 do not sense each other (the per-PPDU path): overlaps at
    // the AP, frame errors at PER 0.2 and retry drops, with and without RTS/CTS and A-MPDU
    let mut h = Hears::all(9);
    for (a, b) in [(1, 2), (3, 4), (1, 4), (5, 6)] {
        h.set_hidden(a, b);
    }
    for (standard, rts, ampdu) in [(Standard::Ac, false, true), (Standard::Ac, true, true), (Standard::G, false, false), (Standard::G, true, false)] {
        let mut cfg = BssConfig::new(standard);
        cfg.channel = Channel::FixedSnr(if standard == Standard::G { 24.0 } else { 27.0 });
        cfg.rts_cts = rts;
        cfg.ampdu = ampdu;
        cfg.queue_limit_pkts = 200;
        let (o, bss) = run_hears(cfg.clone(), 8, &pairs(8), 600, 7, Some(h.clone()));
        eprintln!("hidden {standard:?} rts {rts}: accepted {} delivered {} dropped {} refused {} collisions {}", o.accepted.len(), o.delivered.len(), o.dropped.len(), o.refused.len(), bss.bss_stats().collisions);
        assert!(bss.hears().is_some());
        check_conservation(&o);
        assert!(o.delivered.len() > o.dropped.len());
        assert!(bss.bss_stats().collisions > 0, "{standard:?} rts {rts}: no collisions");
        // the same seed, the same run
        let (o2, bss2) = run_hears(cfg, 8, &pairs(8), 600, 7, Some(h.clone()));
        assert_eq!((o.delivered, o.dropped), (o2.delivered, o2.dropped));
        assert_eq!(bss.bss_stats(), bss2.bss_stats());
    }
}

#[test]
fn minstrel_and_ideal_conserve_too() {
    for rate in [RateKind::Minstrel, RateKind::Ideal] {
        let mut cfg = BssConfig::new(Standard::Ac);
        cfg.rate = rate;
        let mut bss: Bss<u32> = Bss::new(cfg, &[5.0, 20.0, 40.0, 60.0], 3, "mi");
        let mut out = Vec::new();
        let mut accepted = 0;
        for k in 0..4000u32 {
            let t = SimTime::from_micros(k as u64 * 500);
            while bss.next_deadline().is_some_and(|d| d <= t) {
                let d = bss.next_deadline().unwrap();
                bss.on_timer(d, &mut out);
            }
            if bss.enqueue(t, Node::Ap, Node::Sta((k % 4) as u16), k, 1200).is_ok() {
                accepted += 1;
            }
        }
        while let Some(d) = bss.next_deadline() {
            bss.on_timer(d, &mut out);
        }
        assert_eq!(out.len(), accepted, "{rate:?}");
        let delivered = out.iter().filter(|o| matches!(o, WifiOutput::Delivered { .. })).count();
        assert!(delivered as f64 > 0.9 * accepted as f64, "{rate:?}: {delivered} of {accepted}");
    }
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let mk = || {
        let mut cfg = BssConfig::new(Standard::Ac);
        cfg.channel = Channel::FixedSnr(22.0);
        cfg
    };
    let (a, ba) = run(mk(), 5, &pairs(5), 400, 11);
    let (b, bb) = run(mk(), 5, &pairs(5), 400, 11);
    let (c, bc) = run(mk(), 5, &pairs(5), 400, 12);
    assert_eq!(a.delivered, b.delivered);
    assert_eq!(a.dropped, b.dropped);
    for i in 0..5 {
        assert_eq!(ba.sta_stats(i), bb.sta_stats(i));
    }
    assert_eq!(ba.bss_stats(), bb.bss_stats());
    assert!(a.delivered != c.delivered || (0..5).any(|i| ba.sta_stats(i) != bc.sta_stats(i)));
}

#[test]
fn idle_bss_has_no_deadline() {
    let mut bss: Bss<u8> = Bss::new(BssConfig::new(Standard::G), &[10.0; 14], 1, "idle");
    assert_eq!(bss.next_deadline(), None);
    let mut out = Vec::new();
    bss.enqueue(SimTime::from_secs(5), Node::Sta(3), Node::Ap, 1, 100).unwrap();
    // the medium has been idle for longer than DIFS and the counter is zero: immediate access
    assert_eq!(bss.next_deadline(), Some(SimTime::from_secs(5)));
    while let Some(d) = bss.next_deadline() {
        bss.on_timer(d, &mut out);
    }
    assert!(matches!(out[..], [WifiOutput::Delivered { pkt: 1, .. }]));
    assert!(bss.enqueue(SimTime::from_secs(6), Node::Sta(3), Node::Sta(3), 2, 100).is_err());
    assert!(bss.enqueue(SimTime::from_secs(6), Node::Ap, Node::Sta(14), 2, 100).is_err());
}
