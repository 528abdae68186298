//! Bianchi's saturation model (IEEE JSAC 18(3), 2000, Eq. (7), (9) and (13)) for the tests that
//! check DCF against it (`closed_forms.rs`, `cochannel.rs`), and the saturated uplink they and
//! `hidden.rs` drive a BSS with.

use celltcp_engine::{SimDuration, SimTime};
use celltcp_wifi::dcf::{ACK_BYTES, CTS_BYTES, RTS_BYTES};
use celltcp_wifi::phy::txtime;
use celltcp_wifi::{Band, Bss, Node, Standard, TxVector, WifiOutput};

/// A duration in microseconds.
pub fn us(d: SimDuration) -> f64 {
    d.as_nanos() as f64 * 1e-3
}

/// Bianchi (IEEE JSAC 18(3), 2000), Eq. (7) and (9): the fixed point of τ (a station's
/// transmission probability in a slot) and p (its conditional collision probability),
/// τ = 2(1 − 2p) / ((1 − 2p)(W + 1) + pW(1 − (2p)^m)) (written as 2 / (1 + W + pW·Σ_{i<m}(2p)^i)
/// to stay finite at p = ½), p = 1 − (1 − τ)^(n−1), solved by bisection on p; then
/// S = P_s·P_tr·E[P] / ((1 − P_tr)σ + P_tr·P_s·T_s + P_tr(1 − P_s)·T_c).
pub fn bianchi_bps(n: usize, w: f64, m: i32, sigma: f64, ts: f64, tc: f64, payload_bits: f64) -> f64 {
    let tau_of = |p: f64| 2.0 / (1.0 + w + p * w * (0..m).map(|i| (2.0 * p).powi(i)).sum::<f64>());
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let p = 0.5 * (lo + hi);
        let implied = 1.0 - (1.0 - tau_of(p)).powi(n as i32 - 1);
        if implied > p {
            lo = p;
        } else {
            hi = p;
        }
    }
    let tau = tau_of(0.5 * (lo + hi));
    let p_tr = 1.0 - (1.0 - tau).powi(n as i32);
    let p_s = n as f64 * tau * (1.0 - tau).powi(n as i32 - 1) / p_tr;
    p_s * p_tr * payload_bits / ((1.0 - p_tr) * sigma + p_tr * p_s * ts + p_tr * (1.0 - p_s) * tc)
}

/// Bianchi's parameters for 802.11a at 54 Mbit/s with `msdu`-octet MSDUs, basic access or
/// RTS/CTS: (W, m, slot, T_s, T_c), times in µs. T_c is the colliding PPDU (or RTS) plus EIFS,
/// what the bystanders see.
#[allow(dead_code)]
pub fn ofdm54_params(msdu: u32, rts: bool) -> (f64, i32, f64, f64, f64) {
    ofdm_params(7, msdu, rts)
}

/// As [`ofdm54_params`] with the data at OFDM rate index `rate` (0–7: 6 … 54 Mbit/s).
pub fn ofdm_params(rate: u8, msdu: u32, rts: bool) -> (f64, i32, f64, f64, f64) {
    let t = Standard::A.timing(Band::Ghz5);
    let data = TxVector::ofdm(rate);
    let ctrl = data.control_response();
    let mpdu = msdu + 8 + 24 + 4;
    let (sifs, slot) = (us(t.sifs), us(t.slot));
    let difs = sifs + 2.0 * slot;
    let eifs = sifs + us(txtime(&TxVector::ofdm(0), ACK_BYTES, SimDuration::ZERO)) + difs;
    let t_data = us(txtime(&data, mpdu, SimDuration::ZERO));
    let t_ack = us(txtime(&ctrl, ACK_BYTES, SimDuration::ZERO));
    let (ts, tc) = if rts {
        let t_rts = us(txtime(&ctrl, RTS_BYTES, SimDuration::ZERO));
        let t_cts = us(txtime(&ctrl, CTS_BYTES, SimDuration::ZERO));
        (t_rts + sifs + t_cts + sifs + t_data + sifs + t_ack + difs, t_rts + eifs)
    } else {
        (t_data + sifs + t_ack + difs, t_data + eifs)
    };
    let w = (t.cw_min + 1) as f64;
    let m = ((t.cw_max + 1) as f64 / w).log2().round() as i32;
    (w, m, slot, ts, tc)
}

/// Keeps `n` stations' uplink queues at 130 MSDUs of `msdu` octets until `end` and returns the
/// goodput delivered to the AP after `warm` (bit/s): Bianchi's saturation condition.
#[allow(dead_code)]
pub fn saturated_uplink_bps(bss: &mut Bss<()>, n: usize, msdu: u32, warm: SimTime, end: SimTime) -> f64 {
    let (mut now, mut out, mut bytes) = (SimTime::ZERO, Vec::new(), 0u64);
    while now < end {
        for s in 0..n as u16 {
            while bss.queue_len(Node::Sta(s), Node::Ap) < 130 {
                bss.enqueue(now, Node::Sta(s), Node::Ap, (), msdu).unwrap();
            }
        }
        now = bss.next_deadline().expect("saturated BSS is never idle");
        bss.on_timer(now, &mut out);
        for o in out.drain(..) {
            if let WifiOutput::Delivered { at, .. } = o {
                if at >= warm && at < end {
                    bytes += msdu as u64;
                }
            }
        }
    }
    bytes as f64 * 8.0 / (end - warm).as_secs_f64()
}
