//! The air-capture hooks of [`Bss`]: what one frame exchange puts on the air, as
//! [`crate::air`] records. A child module of `bss` so that it reads the queues directly; `bss.rs`
//! calls [`Bss::capture`] at the two places an exchange is laid out (marked "air capture hook").
//!
//! Durations (§9.2.5): the data frames of an exchange carry SIFS + ACK (one MPDU) or SIFS +
//! BlockAck (an A-MPDU with its implicit block-ACK request), the RTS 3·SIFS + CTS + DATA +
//! ACK/BlockAck, the CTS the RTS's value − SIFS − CTS, the ACK and the BlockAck 0 (the
//! exchange ends with them: best effort has no TXOP limit to continue in, §10.22.2.8).

use celltcp_engine::{SimDuration, SimTime};

use super::{Bss, Node};
use crate::air::{duration_us, mac_address, AirFrame, AirLog, AmpduStatus, FrameKind};
use crate::channel::{noise_floor_dbm, Channel};
use crate::dcf;
use crate::phy::{txtime, PhyClass, TxVector};

/// One transmitter's PPDU in an exchange.
pub(super) struct AirTx {
    pub link: usize,
    pub txv: TxVector,
    pub n: usize,
    pub ba: bool,
    pub dur: SimDuration,
    pub ctrl: TxVector,
}

impl<P> Bss<P> {
    /// Records every frame this BSS puts on the air from now on (see [`crate::air`]); the
    /// records are read with [`Bss::air_log`]. `bss_name` gives the MAC addresses.
    pub fn enable_air_capture(&mut self, bss_name: &str)
    where
        P: Clone,
    {
        self.air = Some(AirLog::new(<P as Clone>::clone, self.cfg.band, bss_name));
    }

    /// The frames recorded since the last drain (with the capture enabled).
    pub fn air_log(&mut self) -> Option<&mut AirLog<P>> {
        self.air.as_mut()
    }

    /// Records the frames of `tx`'s exchange started at `t`, its data PPDU at `data_at`: `ok`
    /// is the mask of MPDUs received, `None` when the PPDU (or its RTS) collided.
    pub(super) fn capture(&mut self, t: SimTime, data_at: SimTime, tx: AirTx, ok: Option<u64>) {
        let Some(log) = self.air.as_mut() else { return };
        let link = &self.links[tx.link];
        let from = if tx.link.is_multiple_of(2) { Node::Ap } else { Node::Sta((tx.link / 2) as u16) };
        let (ta, ra, bssid) = (mac_address(&log.bss_name, from), mac_address(&log.bss_name, link.rx), mac_address(&log.bss_name, Node::Ap));
        // the receiver's noise floor: kTB + the noise figure (ns-3's 7 dB with a fixed SNR)
        let nf = match self.cfg.channel {
            Channel::PathLoss { noise_figure_db, .. } => noise_figure_db,
            Channel::FixedSnr(_) => 7.0,
        };
        let noise = noise_floor_dbm(self.cfg.width_mhz, nf);
        let signal = (noise + self.snr_db[tx.link / 2]).round().clamp(-128.0, 127.0) as i8;
        let noise = noise.round() as i8;
        let sig = self.timing.signal_extension;
        let sifs = self.timing.sifs;
        let resp = txtime(&tx.ctrl, if tx.ba { dcf::BLOCK_ACK_BYTES } else { dcf::ACK_BYTES }, sig);
        let frame = |at, txv, fcs_ok, duration_us, kind| AirFrame { at, txv, ampdu: None, fcs_ok, duration_us, signal_dbm: signal, noise_dbm: noise, kind };
        if self.cfg.rts_cts {
            let (rts, cts) = self.timing.rts_cts(&tx.ctrl);
            let d = duration_us(sifs * 3 + cts + tx.dur + resp);
            log.frames.push(frame(t, tx.ctrl, ok.is_some(), d, FrameKind::Rts { ra, ta }));
            if ok.is_none() {
                return;
            }
            log.frames.push(frame(t + rts + sifs, tx.ctrl, true, d.saturating_sub(duration_us(sifs + cts)), FrameKind::Cts { ra: ta }));
        }
        let aggregated = tx.ba || tx.txv.class == PhyClass::Vht;
        let reference = log.next_ampdu;
        if aggregated {
            log.next_ampdu = log.next_ampdu.wrapping_add(1);
        }
        let d = duration_us(sifs + resp);
        let mask = ok.unwrap_or(0);
        let ssn = link.pending[0].seq;
        let mut bitmap = 0u64;
        for (i, m) in link.pending.iter().take(tx.n).enumerate() {
            let received = mask & (1 << i) != 0;
            let (to_ds, addr) = match from {
                Node::Ap => (false, [ra, bssid, mac_address(&log.bss_name, m.msdu.src)]),
                Node::Sta(_) => (true, [bssid, ta, mac_address(&log.bss_name, m.msdu.dst)]),
            };
            let kind = FrameKind::Data { to_ds, qos: self.qos, addr, seq: (m.seq % 4096) as u16, retry: m.failures > 0, pkt: (log.copy)(&m.msdu.pkt), msdu_bytes: m.msdu.bytes };
            let mut f = frame(data_at, tx.txv, received, d, kind);
            f.ampdu = aggregated.then_some(AmpduStatus { reference, last: i + 1 == tx.n });
            log.frames.push(f);
            // the recipient's scoreboard: this A-MPDU's MPDUs as received, and the sequence
            // numbers between them that are no longer pending (received in an earlier PPDU)
            // (the window limits an A-MPDU to sequence numbers SSN … SSN + 63)
            let off = m.seq - ssn;
            if received {
                bitmap |= 1 << off;
            }
            if i > 0 {
                for gap in link.pending[i - 1].seq - ssn + 1..off {
                    bitmap |= 1 << gap;
                }
            }
        }
        if mask == 0 {
            return;
        }
        let at = data_at + tx.dur + sifs;
        let kind = if tx.ba { FrameKind::BlockAck { ra: ta, ta: ra, ssn: (ssn % 4096) as u16, bitmap } } else { FrameKind::Ack { ra: ta } };
        log.frames.push(frame(at, tx.ctrl, true, 0, kind));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bss::{BssConfig, WifiOutput};
    use crate::phy::Standard;

    fn run(b: &mut Bss<u32>) -> Vec<AirFrame<u32>> {
        let mut out = vec![];
        while let Some(t) = b.next_deadline() {
            b.on_timer(t, &mut out);
        }
        b.air_log().unwrap().drain().collect()
    }

    #[test]
    fn rts_cts_data_ack_on_the_air_with_hand_computed_durations() {
        // 802.11a, 1500-byte MSDU at 54 Mbit/s (1536-byte MPDU: 57 symbols, 248 µs), control
        // frames at 24 Mbit/s: RTS (20 B), CTS and ACK (14 B) 2 symbols each, 28 µs; SIFS 16 µs
        let mut cfg = BssConfig::new(Standard::A);
        cfg.channel = Channel::FixedSnr(60.0);
        cfg.rts_cts = true;
        let mut b: Bss<u32> = Bss::new(cfg, &[1.0], 5, "unit");
        b.enable_air_capture("unit");
        let t0 = SimTime::from_millis(2);
        b.enqueue(t0, Node::Ap, Node::Sta(0), 9, 1500).unwrap();
        let f = run(&mut b);
        let us = |x: u64| t0 + SimDuration::from_micros(x);
        let (ap, sta) = (mac_address("unit", Node::Ap), mac_address("unit", Node::Sta(0)));
        assert_eq!(f.len(), 4);
        // RTS: 3 SIFS + CTS + DATA + ACK = 48 + 28 + 248 + 28
        assert_eq!((f[0].at, f[0].duration_us, &f[0].kind), (us(0), 352, &FrameKind::Rts { ra: sta, ta: ap }));
        // CTS: the RTS's value - SIFS - CTS
        assert_eq!((f[1].at, f[1].duration_us, &f[1].kind), (us(44), 308, &FrameKind::Cts { ra: ap }));
        // DATA: SIFS + ACK; From DS: A1 = DA, A2 = BSSID, A3 = SA (the AP routes it)
        assert_eq!((f[2].at, f[2].duration_us), (us(88), 44));
        assert_eq!(f[2].kind, FrameKind::Data { to_ds: false, qos: false, addr: [sta, ap, ap], seq: 0, retry: false, pkt: 9, msdu_bytes: 1500 });
        assert!(f[2].fcs_ok && f[2].ampdu.is_none());
        // ACK at the end of DATA + SIFS, Duration 0: it ends where the RTS's NAV ends
        assert_eq!((f[3].at, f[3].duration_us, &f[3].kind), (us(352), 0, &FrameKind::Ack { ra: ap }));
        assert_eq!(f[0].at + SimDuration::from_micros(28 + 352), us(380));
        assert!(f.iter().all(|x| x.txv == if matches!(x.kind, FrameKind::Data { .. }) { TxVector::ofdm(7) } else { TxVector::ofdm(4) }));
    }

    /// Saturated HT stations at an SNR where about a third of the MPDUs fail: the capture's
    /// data MPDUs and retry bits match the counters, every BlockAck's bitmap shows exactly the
    /// MPDUs of the A-MPDU before it that were received, and sequence numbers run per link.
    #[test]
    fn ampdus_block_acks_and_retries_match_the_model() {
        let mut cfg = BssConfig::new(Standard::N);
        // MCS 7 at 23.5 dB: the NIST PER of a 1538-byte MPDU is 0.226
        cfg.channel = Channel::FixedSnr(23.5);
        let mut b: Bss<u32> = Bss::new(cfg, &[1.0; 3], 7, "unit");
        b.enable_air_capture("unit");
        let mut id = 0;
        for s in 0..3 {
            for _ in 0..300 {
                b.enqueue(SimTime::ZERO, Node::Sta(s), Node::Ap, id, 1500).unwrap();
                b.enqueue(SimTime::ZERO, Node::Ap, Node::Sta(s), id + 1, 1500).unwrap();
                id += 2;
            }
        }
        let mut out = vec![];
        let mut frames = vec![];
        while let Some(t) = b.next_deadline() {
            b.on_timer(t, &mut out);
            frames.extend(b.air_log().unwrap().drain());
        }
        let (mut data, mut retries, mut bad, mut bas, mut acks, mut lone, mut unanswered) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
        let mut i = 0;
        let mut next_seq = std::collections::HashMap::new();
        while i < frames.len() {
            // one PPDU: the MPDUs sharing an A-MPDU reference, or a lone MPDU (HT sends one
            // MPDU without A-MPDU framing, acknowledged by an ACK)
            let mut j = i + 1;
            if let Some(r) = frames[i].ampdu.map(|a| a.reference) {
                while j < frames.len() && frames[j].ampdu.map(|a| a.reference) == Some(r) {
                    j += 1;
                }
                assert!(frames[j - 1].ampdu.unwrap().last && frames[i..j - 1].iter().all(|f| !f.ampdu.unwrap().last));
            } else {
                lone += 1;
            }
            for f in &frames[i..j] {
                let FrameKind::Data { seq, retry, addr, .. } = f.kind else { panic!("{:?}", f.kind) };
                data += 1;
                retries += u64::from(retry);
                bad += u64::from(!f.fcs_ok);
                // a new MPDU takes the link's next sequence number; a retry one seen before
                let n = next_seq.entry((addr[0], addr[1])).or_insert(0u16);
                if !retry {
                    assert_eq!(seq, *n);
                    *n += 1;
                } else {
                    assert!(seq < *n);
                }
            }
            unanswered += u64::from(frames[i..j].iter().all(|f| !f.fcs_ok));
            match frames.get(j).map(|f| &f.kind) {
                Some(FrameKind::BlockAck { ssn, bitmap, .. }) => {
                    assert!(frames[i].ampdu.is_some());
                    bas += 1;
                    for f in &frames[i..j] {
                        let FrameKind::Data { seq, .. } = f.kind else { unreachable!() };
                        assert_eq!(bitmap >> (seq - ssn) & 1 == 1, f.fcs_ok, "seq {seq} ssn {ssn} bitmap {bitmap:#x}");
                    }
                    j += 1;
                }
                Some(FrameKind::Ack { .. }) => {
                    assert!(j == i + 1 && frames[i].ampdu.is_none() && frames[i].fcs_ok);
                    acks += 1;
                    j += 1;
                }
                _ => assert!(frames[i..j].iter().all(|f| !f.fcs_ok), "no answer: nothing received"),
            }
            i = j;
        }
        let (mut tx, mut retx, mut ok_ppdus) = (0, 0, 0);
        for s in 0..3 {
            for l in [&b.sta_stats(s).down, &b.sta_stats(s).up] {
                tx += l.mpdu_tx;
                retx += l.mpdu_retx;
                ok_ppdus += l.ppdu_tx - l.collisions - l.ppdu_failed;
            }
        }
        assert_eq!((data, retries, bas + acks), (tx, retx, ok_ppdus));
        assert!(lone > 0 && acks > 0);
        assert!(retries > 100 && bad > 100 && unanswered > 0 && bas > 50, "{retries} {bad} {unanswered} {bas}");
        assert!((bad as f64 / data as f64) > 0.2, "errors and collisions: {bad} of {data}");
        let delivered = out.iter().filter(|o| matches!(o, WifiOutput::Delivered { .. })).count() as u64;
        assert_eq!(data - bad, delivered);
        assert_eq!(delivered, 1800);
    }
}
