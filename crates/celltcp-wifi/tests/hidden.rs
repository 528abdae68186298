//! Hidden stations: carrier sense per node ([`celltcp_wifi::Hears`], the per-PPDU path of
//! `bss/hidden.rs`) against closed forms.
//!
//! - With every node sensing every other, the per-PPDU path gives the whole-range path's
//!   figures (Bianchi's cases of `closed_forms.rs` forced through it): identical, the same
//!   deliveries to the bit rate, for every N (both paths apply aCCATime, which matters after
//!   collisions).
//! - Two saturated stations hidden from each other, the AP between them (the textbook
//!   hidden-terminal setting, ns-3's examples/wireless/wifi-hidden-terminal.cc), basic access:
//!   the AP loses most frames to overlaps and the goodput collapses against Bianchi's for two
//!   stations; the fraction of frames lost is checked against the vulnerable-period argument.
//! - The same with RTS/CTS: the CTS's NAV protects the data, only RTSs overlap, and the goodput
//!   comes back to Bianchi's figure with RTS/CTS.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_wifi::dcf::{EdcaParams, ACK_BYTES};
use celltcp_wifi::phy::txtime;
use celltcp_wifi::{Band, Bss, BssConfig, Channel, Hears, RateKind, Standard, TxVector};

mod common;
use common::{bianchi_bps, saturated_uplink_bps, us};

const MSDU: u32 = 1500;

fn cfg_a(rts: bool, retry_limit: bool) -> BssConfig {
    let mut cfg = BssConfig::new(Standard::A);
    cfg.channel = Channel::FixedSnr(60.0);
    cfg.rate = RateKind::Constant(7);
    cfg.rts_cts = rts;
    if !retry_limit {
        // Bianchi's model has no retry limit
        cfg.edca = Some(EdcaParams { short_retry_limit: u32::MAX, long_retry_limit: u32::MAX, ..EdcaParams::dcf(&Standard::A.timing(Band::Ghz5)) });
    }
    cfg
}

struct Sat {
    goodput_bps: f64,
    bss: Bss<()>,
}

/// Saturates the uplink of `n` stations for `secs` seconds with `hears` (None: the whole-range
/// path); goodput after a 0.2 s warm-up.
fn saturated(cfg: BssConfig, n: usize, hears: Option<Hears>, secs: f64, seed: u64) -> Sat {
    let mut bss: Bss<()> = Bss::new(cfg, &vec![5.0; n], seed, "hidden");
    if let Some(h) = hears {
        bss.set_hears_per_ppdu(h);
    }
    let end = SimTime::from_nanos((secs * 1e9) as u64);
    let goodput_bps = saturated_uplink_bps(&mut bss, n, MSDU, SimTime::from_millis(200), end);
    Sat { goodput_bps, bss }
}

fn two_hidden() -> Hears {
    let mut h = Hears::all(3);
    h.set_hidden(1, 2);
    h
}

/// Every node senses every other: the per-PPDU path against the whole-range one and Bianchi,
/// N = 1 … 10 and 20 saturated stations, both access modes.
#[test]
fn full_hears_relation_through_the_per_ppdu_path_gives_the_whole_range_figures() {
    for rts in [false, true] {
        let (w, m, slot, ts, tc) = common::ofdm54_params(MSDU, rts);
        for n in (1..=10).chain([20]) {
            let want = bianchi_bps(n, w, m, slot, ts, tc, MSDU as f64 * 8.0) * 1e6;
            let fast = saturated(cfg_a(rts, false), n, None, 3.0, 42).goodput_bps;
            let per_ppdu = saturated(cfg_a(rts, false), n, Some(Hears::all(n + 1)), 3.0, 42).goodput_bps;
            let d = (per_ppdu - fast) / fast;
            println!("rts {rts} n {n:2}: Bianchi {:.3} Mbit/s, whole-range {:.3}, per-PPDU {:.3} ({:+.3} %)", want / 1e6, fast / 1e6, per_ppdu / 1e6, d * 100.0);
            // both paths apply aCCATime (dcf::CCA_TIME: a counter reaching zero within 4 µs of a
            // PPDU's start sends), which with one slot grid matters only after a collision, where
            // the transmitters resume AckTimeout + DIFS (84 µs) after it and the others EIFS
            // (94 µs), 1 µs apart modulo the slot; before the whole-range path had it the two
            // differed by up to 1.9 % (N = 7), and agreed only for N ≤ 2
            assert!(d.abs() < 1e-9, "rts {rts} n {n}: per-PPDU {per_ppdu} against whole-range {fast}");
            // and both within closed_forms.rs's tolerance of Bianchi
            assert!(((per_ppdu - want) / want).abs() < 0.04, "rts {rts} n {n}: {per_ppdu} against Bianchi {want}");
        }
    }
}

/// The vulnerable-period argument for two saturated stations that cannot sense each other
/// (Tobagi & Kleinrock, IEEE Trans. Commun. 23(12), 1975, "Packet switching in radio channels:
/// Part II — the hidden terminal problem in carrier sense multiple-access": a station sees
/// only the hidden one's attempts, and, as in pure ALOHA, a frame of duration T is lost when
/// the other starts within the 2T around its own start). The other's attempts taken as a
/// Poisson stream of rate 1/C: p = 1 − exp(−V/C(p)), V the vulnerable period, C(p) the mean
/// time between one station's attempts, σ·E[backoff](p) + its own frame + (1 − p)·(what a
/// success adds) + p·(AckTimeout + DIFS) + `frozen`·(1 − p) (the time the other's successes
/// keep it from counting), E[backoff] over Bianchi's stages without a retry limit (P(stage i)
/// = (1 − p)p^i for i < m, p^m at m; mean (W·2^i − 1)/2). Returns (p, C) in µs.
fn vulnerable_period_p(v: f64, own: f64, success: f64, frozen: f64) -> (f64, f64) {
    let t = Standard::A.timing(Band::Ghz5);
    let (w, m, slot) = ((t.cw_min + 1) as f64, 6, us(t.slot));
    let (sifs, difs) = (us(t.sifs), us(t.sifs) + 2.0 * us(t.slot));
    let ack_timeout = sifs + slot + us(t.rx_phy_start_delay);
    let cycle = |p: f64| {
        let eb: f64 = (0..=m).map(|i| if i < m { (1.0 - p) * p.powi(i) } else { p.powi(m) } * (w * 2f64.powi(i) - 1.0) / 2.0).sum();
        slot * eb + own + (1.0 - p) * (success + frozen) + p * (ack_timeout + difs)
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..100 {
        let p = 0.5 * (lo + hi);
        if 1.0 - (-v / cycle(p)).exp() > p {
            lo = p;
        } else {
            hi = p;
        }
    }
    let p = 0.5 * (lo + hi);
    (p, cycle(p))
}

/// The fraction of data PPDUs (or RTSs) lost to overlaps at the AP.
fn lost_fraction(b: &Bss<()>) -> f64 {
    let (tx, lost) = (0..2).map(|i| &b.sta_stats(i).up).fold((0, 0), |a, u| (a.0 + u.ppdu_tx, a.1 + u.collisions));
    lost as f64 / tx as f64
}

/// 802.11a at 6 Mbit/s (its basic rate: a 1500-byte frame lasts 2,072 µs, 230 slots, long
/// against the backoff), two saturated stations hidden from each other, basic access. The AP
/// loses most frames; goodput well under half Bianchi's for two stations. The lost fraction
/// is within 10 % of the vulnerable-period argument (V = 2T; a success adds SIFS + ACK + DIFS;
/// the other's successes freeze a station only for their ACK + DIFS, counted in `success`
/// already by symmetry, so `frozen` = 0). Why not closer: the AP's ACKs, which both stations
/// sense, make them restart together, so their attempts are not independent as the argument
/// assumes. With short frames that correlation dominates: at 54 Mbit/s (248 µs, 28 slots)
/// the station that just succeeded, back at CWmin, keeps winning while the other sits in a
/// large window, and the lost fraction (about 0.14) is far below the argument's (0.53): the
/// figures are printed for the record, not checked against it.
#[test]
fn hidden_stations_collapse_under_basic_access() {
    let rate = 0;
    let (w, m, slot, ts, tc) = common::ofdm_params(rate, MSDU, false);
    let bianchi2 = bianchi_bps(2, w, m, slot, ts, tc, MSDU as f64 * 8.0) * 1e6;
    let mut cfg = cfg_a(false, false);
    cfg.rate = RateKind::Constant(rate);
    let full = saturated(cfg.clone(), 2, Some(Hears::all(3)), 5.0, 7);
    let hid = saturated(cfg, 2, Some(two_hidden()), 5.0, 7);
    let t = Standard::A.timing(Band::Ghz5);
    let data = us(txtime(&TxVector::ofdm(rate), MSDU + 36, SimDuration::ZERO));
    let ack = us(txtime(&TxVector::ofdm(rate).control_response(), ACK_BYTES, SimDuration::ZERO));
    let (sifs, difs) = (us(t.sifs), us(t.sifs) + 2.0 * us(t.slot));
    let (p, c) = vulnerable_period_p(2.0 * data, data, sifs + ack + difs, 0.0);
    let lost = lost_fraction(&hid.bss);
    println!("6 Mbit/s basic: Bianchi(2) {:.3} Mbit/s, all sensing {:.3}, hidden {:.3} ({:.0} %); lost at the AP {lost:.3}, vulnerable period {p:.3} (cycle {c:.0} µs)", bianchi2 / 1e6, full.goodput_bps / 1e6, hid.goodput_bps / 1e6, 100.0 * hid.goodput_bps / bianchi2);
    assert!(((full.goodput_bps - bianchi2) / bianchi2).abs() < 0.03, "all sensing: {} against Bianchi {bianchi2}", full.goodput_bps);
    assert!(hid.goodput_bps < 0.5 * bianchi2, "hidden: {} against Bianchi {bianchi2}", hid.goodput_bps);
    assert!(lost > 0.5, "most frames lost at the AP: {lost}");
    assert!(((lost - p) / p).abs() < 0.10, "lost fraction {lost} against the vulnerable-period {p}");
    // the same at 54 Mbit/s, for the record
    let full = saturated(cfg_a(false, false), 2, None, 5.0, 7);
    let hid = saturated(cfg_a(false, false), 2, Some(two_hidden()), 5.0, 7);
    let d54 = us(txtime(&TxVector::ofdm(7), MSDU + 36, SimDuration::ZERO));
    let a54 = us(txtime(&TxVector::ofdm(4), ACK_BYTES, SimDuration::ZERO));
    let (p54, _) = vulnerable_period_p(2.0 * d54, d54, sifs + a54 + difs, 0.0);
    println!("54 Mbit/s basic: all sensing {:.3} Mbit/s, hidden {:.3}; lost at the AP {:.3}, vulnerable period {p54:.3}", full.goodput_bps / 1e6, hid.goodput_bps / 1e6, lost_fraction(&hid.bss));
}

/// The same with RTS/CTS: a station hears the AP's CTS and keeps off the air for the data and
/// the ACK it cannot sense (§10.3.2.4), so only RTSs overlap: every RTS that got its CTS
/// delivers its frame (no frame errors at 60 dB), and the goodput is within 3 % of Bianchi's
/// with RTS/CTS for two stations (whose collisions are RTS against RTS too, in one slot
/// instead of within the RTS's vulnerable period). The lost RTS fraction is printed beside the
/// vulnerable-period argument (V = 2·T_RTS, the other's successes keeping a station frozen for
/// CTS + data + ACK + 3 SIFS + DIFS) but not checked against it: both stations sense the AP's
/// ACK and restart their counts together after every exchange, so their RTSs are far from
/// independent (they overlap when the two counters end within ⌈T_RTS/σ⌉ = 6 slots of each
/// other), and the argument understates the losses about fourfold (0.02 against 0.08).
#[test]
fn rts_cts_protects_hidden_stations() {
    let rate = 0;
    let (w, m, slot, ts, tc) = common::ofdm_params(rate, MSDU, true);
    let bianchi2 = bianchi_bps(2, w, m, slot, ts, tc, MSDU as f64 * 8.0) * 1e6;
    let mut cfg = cfg_a(true, false);
    cfg.rate = RateKind::Constant(rate);
    let hid = saturated(cfg, 2, Some(two_hidden()), 5.0, 7);
    let t = Standard::A.timing(Band::Ghz5);
    let ctrl = TxVector::ofdm(rate).control_response();
    let data = us(txtime(&TxVector::ofdm(rate), MSDU + 36, SimDuration::ZERO));
    let ack = us(txtime(&ctrl, ACK_BYTES, SimDuration::ZERO));
    let rts = us(txtime(&ctrl, celltcp_wifi::dcf::RTS_BYTES, SimDuration::ZERO));
    let cts = us(txtime(&ctrl, celltcp_wifi::dcf::CTS_BYTES, SimDuration::ZERO));
    let (sifs, difs) = (us(t.sifs), us(t.sifs) + 2.0 * us(t.slot));
    let rest = sifs + cts + sifs + data + sifs + ack + difs;
    let (p, c) = vulnerable_period_p(2.0 * rts, rts, rest, rest);
    let lost = lost_fraction(&hid.bss);
    let err = (hid.goodput_bps - bianchi2) / bianchi2;
    println!("6 Mbit/s RTS/CTS: Bianchi(2) {:.3} Mbit/s, hidden {:.3} ({:+.2} %); RTSs lost at the AP {lost:.3}, vulnerable period {p:.3} (cycle {c:.0} µs)", bianchi2 / 1e6, hid.goodput_bps / 1e6, err * 100.0);
    assert!(err.abs() < 0.03, "hidden with RTS/CTS: {} against Bianchi {bianchi2}", hid.goodput_bps);
    assert!(lost > 0.0 && lost < 0.2, "lost RTS fraction {lost}");
    let (mut sent, mut lost_rts, mut delivered) = (0, 0, 0);
    for i in 0..2 {
        let u = &hid.bss.sta_stats(i).up;
        (sent, lost_rts, delivered) = (sent + u.ppdu_tx, lost_rts + u.collisions, delivered + u.delivered_pkts);
    }
    // at most the one exchange in flight at the end of the run is not delivered yet
    assert!(sent - lost_rts - delivered <= 2, "{sent} RTSs, {lost_rts} lost, {delivered} frames delivered: a data PPDU was lost");
}
