//! Carrier sense per node, for a BSS whose nodes do not all sense each other
//! ([`crate::hears`]): the per-PPDU path of [`Bss`].
//!
//! The whole-range path of `bss.rs` lays out an exchange in full when a backoff reaches zero,
//! because nothing can interrupt it. With hidden nodes something can, so here each PPDU on the
//! air is an event of its own (its start and its end), and each node keeps its own view of the
//! medium (IEEE 802.11-2020 §10.3.2.1: CCA and the NAV, per STA):
//!
//! - **Counting down.** A node counts its backoff only while *it* senses the medium idle: every
//!   PPDU it senses freezes its counter at the PPDU's start (the idle slots before it counted,
//!   [`crate::dcf::Backoff::freeze`]) and it resumes AIFS after the last PPDU it sensed ends,
//!   EIFS if that one was received in error (§10.3.2.3.7), and not before the end of its NAV +
//!   AIFS (§10.3.2.4). A node that does not sense a transmitter keeps counting and may start
//!   during its exchange: the hidden-terminal problem. CCA reports a PPDU's start only
//!   aCCATime (4 µs) after it ([`CCA_TIME`]): a node whose counter reaches zero in between
//!   transmits and misses that PPDU. Exchanges that open on the shared slot grid never meet
//!   this; a hidden station's slot boundaries fall anywhere against the AP's CTS or ACK (a CTS
//!   starting 44 µs into a 54 Mbit/s exchange, a station counting since its start is on its
//!   fifth boundary at 45 µs), which ns-3 3.37 shows the same way (its PHY detects a preamble
//!   after 4 µs; docs/validation.md, "Hidden stations vs ns-3").
//! - **Reception.** A frame is received by a node that senses its transmitter when no other PPDU
//!   that node senses (or sends) overlaps it in time: no capture, whatever the powers (the
//!   simplest rule; a receiver locked on a preamble loses the frame to any overlap it senses).
//!   A node that transmits while a PPDU is on the air does not receive it and takes no EIFS or
//!   NAV from it. A data PPDU received without overlap then has its per-MPDU errors drawn from
//!   the link's SNR as in `bss.rs`; bystanders decode it when it had no overlap at them and,
//!   if its receiver drew the errors, some MPDU got through (the whole-range path's rule).
//! - **NAV.** A node that receives a frame addressed to another sets its NAV to the frame's end
//!   plus its Duration (§10.3.2.4: RTS 3·SIFS + CTS + data + ACK, CTS the rest of that, data
//!   SIFS + ACK or BlockAck). A station that hears only the CTS is thereby kept off the air during the
//!   data and the ACK it cannot sense. A node answers an RTS with a CTS only when its NAV is
//!   idle (§10.3.2.6).
//! - **Outcome.** The transmitter of an RTS that got no CTS, or of a data PPDU that got no
//!   ACK, waits AckTimeout (CTSTimeout) and then AIFS, and doubles its CW; retries and discards
//!   as in `bss.rs`. The ACK or BlockAck is on the air (the others sense it and defer) but is taken
//!   as received by the transmitter, as is the data's verdict at its receiver (a hidden node can
//!   still overlap the ACK at the AP; it then loses its own frame there).
//!
//! Counters: `collisions` counts each frame (RTS, CTS or data) lost to an overlap at its
//! receiver; the busy time is the time the AP senses a PPDU on the air (its own included).
//! With every node sensing every other this path gives the figures of the whole-range path
//! (`tests/hidden.rs` forces it through Bianchi's cases).

use celltcp_engine::SimTime;
use rand::Rng;

use super::capture::AirTx;
use super::{Bss, Node, Plan, Sent, WifiOutput};
use crate::ampdu;
use crate::dcf::{self, CCA_TIME};
use crate::error::per;
use crate::hears::Hears;
use crate::phy::txtime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Rts,
    Cts,
    Data,
    /// ACK or BlockAck.
    Resp,
}

/// One PPDU on the air (or scheduled: a response SIFS after its solicitation).
struct Ppdu {
    tx: usize,
    rx: usize,
    start: SimTime,
    end: SimTime,
    kind: Kind,
    /// The end of the NAV its Duration field sets where it is received (§10.3.2.4).
    nav_end: SimTime,
    /// Per node: another PPDU that node senses (or sends) overlapped this one there.
    bad: Vec<bool>,
    /// Per node: the node transmitted while this PPDU was on the air.
    txd: Vec<bool>,
}

/// One node's view of the medium.
#[derive(Clone, Debug, Default)]
struct Cs {
    /// End of the last PPDU it sensed (its own included).
    busy_until: Option<SimTime>,
    nav_until: Option<SimTime>,
    /// The last PPDU it sensed was received in error: EIFS instead of AIFS after it.
    eifs: bool,
    /// Its own exchange keeps it off the air until then (end of the ACK + AIFS, or
    /// AckTimeout + AIFS).
    hold: SimTime,
}

/// A node's exchange in progress.
struct Exchange {
    plan: Plan,
    t0: SimTime,
}

/// The per-PPDU state of a BSS with hidden nodes.
pub(crate) struct Hidden {
    hears: Hears,
    air: Vec<Ppdu>,
    sched: Vec<Ppdu>,
    cs: Vec<Cs>,
    exch: Vec<Option<Exchange>>,
    ap_busy_until: SimTime,
}

impl Hidden {
    pub(crate) fn new(hears: Hears) -> Hidden {
        let n = hears.len();
        Hidden { hears, air: Vec::new(), sched: Vec::new(), cs: vec![Cs::default(); n], exch: (0..n).map(|_| None).collect(), ap_busy_until: SimTime::ZERO }
    }
    pub(crate) fn hears(&self) -> &Hears {
        &self.hears
    }
    pub(crate) fn in_exchange(&self, k: usize) -> bool {
        self.exch[k].is_some()
    }
    /// The next PPDU end or scheduled start.
    fn next_air(&self) -> Option<SimTime> {
        self.air.iter().map(|p| p.end).chain(self.sched.iter().map(|p| p.start)).min()
    }
}

fn index(n: Node) -> usize {
    match n {
        Node::Ap => 0,
        Node::Sta(i) => i as usize + 1,
    }
}

impl<P> Bss<P> {
    /// When node `j` may count down again, from its view of the medium.
    fn cs_resume(&self, c: &Cs) -> SimTime {
        let tm = self.timing;
        let mut r = c.hold;
        if let Some(b) = c.busy_until {
            r = r.max(b + if c.eifs { tm.eifs } else { tm.aifs });
        }
        if let Some(n) = c.nav_until {
            r = r.max(n + tm.aifs);
        }
        r
    }

    fn set_resume(&mut self, h: &Hidden, j: usize) {
        self.nodes[j].backoff.resume = self.cs_resume(&h.cs[j]);
    }

    fn hidden_tx_at(&self, h: &Hidden, k: usize) -> Option<SimTime> {
        if h.exch[k].is_some() {
            return None;
        }
        self.tx_at(k)
    }

    fn hidden_refresh(&mut self, h: &Hidden) {
        self.next_tx = (0..self.nodes.len()).filter_map(|k| self.hidden_tx_at(h, k)).min();
        self.inflight_at = h.next_air();
    }

    /// [`Bss::on_timer`] on the per-PPDU path.
    pub(super) fn hidden_on_timer(&mut self, now: SimTime, out: &mut Vec<WifiOutput<P>>) {
        let mut h = self.hidden.take().expect("the per-PPDU path");
        loop {
            self.hidden_refresh(&h);
            let t_end = h.air.iter().map(|p| p.end).min();
            let Some(t) = [t_end, h.sched.iter().map(|p| p.start).min(), self.next_tx].into_iter().flatten().min() else { break };
            if t > now {
                break;
            }
            if t_end == Some(t) {
                let i = h.air.iter().position(|p| p.end == t).expect("a PPDU ending");
                let q = h.air.remove(i);
                self.ppdu_end(&mut h, q, out);
                continue;
            }
            // every PPDU starting at t: scheduled ones and the nodes whose counters reach zero
            // (those cannot sense each other's start within the slot, §10.3.2.1)
            let mut starting = Vec::new();
            let mut i = 0;
            while i < h.sched.len() {
                if h.sched[i].start == t {
                    starting.push(h.sched.swap_remove(i));
                } else {
                    i += 1;
                }
            }
            let ready: Vec<usize> = (0..self.nodes.len()).filter(|&k| self.hidden_tx_at(&h, k) == Some(t)).collect();
            for k in ready {
                let q = self.exchange_start(&mut h, t, k);
                starting.push(q);
            }
            for q in starting {
                self.ppdu_start(&mut h, q);
            }
        }
        self.hidden = Some(h);
        self.bss_stats.last_event = now;
    }

    fn ppdu(&self, tx: usize, rx: usize, start: SimTime, end: SimTime, kind: Kind, nav_end: SimTime) -> Ppdu {
        let n = self.nodes.len();
        Ppdu { tx, rx, start, end, kind, nav_end, bad: vec![false; n], txd: vec![false; n] }
    }

    /// Node `k`'s counter reached zero at `t`: its exchange starts with an RTS or the data.
    fn exchange_start(&mut self, h: &mut Hidden, t: SimTime, k: usize) -> Ppdu {
        let p = self.plan(t, k);
        self.bss_stats.txops += 1;
        let tm = self.timing;
        let resp = txtime(&p.ctrl, if p.ba { dcf::BLOCK_ACK_BYTES } else { dcf::ACK_BYTES }, tm.signal_extension);
        let rx = index(self.links[p.link].rx);
        h.cs[k].eifs = false;
        let q = if self.cfg.rts_cts {
            let (r, c) = tm.rts_cts(&p.ctrl);
            let end = t + r;
            self.ppdu(k, rx, t, end, Kind::Rts, end + tm.sifs * 3 + c + p.dur + resp)
        } else {
            let end = t + p.dur;
            self.ppdu(k, rx, t, end, Kind::Data, end + tm.sifs + resp)
        };
        h.exch[k] = Some(Exchange { plan: p, t0: t });
        q
    }

    /// `q` goes on the air: it overlaps every PPDU still there; the nodes that sense it freeze.
    fn ppdu_start(&mut self, h: &mut Hidden, mut q: Ppdu) {
        let n = self.nodes.len();
        for p in h.air.iter_mut() {
            for j in 0..n {
                if j == q.tx || h.hears.hears(j, q.tx) {
                    p.bad[j] = true;
                }
                if j == p.tx || h.hears.hears(j, p.tx) {
                    q.bad[j] = true;
                }
            }
            p.txd[q.tx] = true;
            q.txd[p.tx] = true;
        }
        let slot = self.timing.slot;
        for j in 0..n {
            if j != q.tx && h.hears.hears(j, q.tx) && self.hidden_tx_at(h, j).is_some_and(|r| r > q.start && r <= q.start + CCA_TIME) {
                // its counter reaches zero before its CCA can report the PPDU: it transmits
                // (and misses the PPDU: `txd`)
                continue;
            }
            if j == q.tx || h.hears.hears(j, q.tx) {
                self.nodes[j].backoff.freeze(q.start, slot);
                let c = &mut h.cs[j];
                c.busy_until = Some(c.busy_until.map_or(q.end, |b| b.max(q.end)));
                self.set_resume(h, j);
            }
        }
        if q.tx == 0 || h.hears.hears(0, q.tx) {
            let from = q.start.max(h.ap_busy_until);
            if q.end > from {
                self.bss_stats.busy_ns += (q.end - from).as_nanos();
                h.ap_busy_until = q.end;
            }
        }
        h.air.push(q);
    }

    /// `q` ends: who received it, then the exchange's next step.
    fn ppdu_end(&mut self, h: &mut Hidden, q: Ppdu, out: &mut Vec<WifiOutput<P>>) {
        let t = q.end;
        let tm = self.timing;
        let (tx, rx) = (q.tx, q.rx);
        let mut rx_ok = !q.bad[rx] && !q.txd[rx] && h.hears.hears(rx, tx);
        if matches!(q.kind, Kind::Rts | Kind::Data) {
            rx_ok &= h.exch[rx].is_none();
        }
        let mut data_ok = 0u64;
        if q.kind == Kind::Data && rx_ok {
            let e = h.exch[tx].as_ref().expect("data of an exchange");
            let snr = self.snr_db[e.plan.link / 2];
            let rng = &mut self.nodes[tx].rng;
            for (i, m) in self.links[e.plan.link].pending.iter().take(e.plan.n).enumerate() {
                if rng.gen::<f64>() >= per(&e.plan.txv, snr, ampdu::mpdu_bytes(m.msdu.bytes, self.qos)) {
                    data_ok |= 1 << i;
                }
            }
        }
        let channel_ok = q.kind != Kind::Data || !rx_ok || data_ok != 0;
        for j in 0..self.nodes.len() {
            if j != tx && !h.hears.hears(j, tx) {
                continue;
            }
            if j != tx && !q.txd[j] {
                let received = !q.bad[j] && channel_ok;
                let c = &mut h.cs[j];
                c.eifs = !received;
                if received && j != rx {
                    c.nav_until = Some(c.nav_until.map_or(q.nav_end, |v| v.max(q.nav_end)));
                }
            }
            self.set_resume(h, j);
        }
        match q.kind {
            Kind::Rts => {
                let nav_idle = h.cs[rx].nav_until.is_none_or(|v| v <= t);
                if rx_ok && nav_idle {
                    let ctrl = h.exch[tx].as_ref().expect("RTS of an exchange").plan.ctrl;
                    let (_, c) = tm.rts_cts(&ctrl);
                    let s = t + tm.sifs;
                    let cts = self.ppdu(rx, tx, s, s + c, Kind::Cts, q.nav_end);
                    h.sched.push(cts);
                } else {
                    self.rts_failed(h, tx, t, t + tm.ack_timeout + tm.aifs, out);
                }
            }
            Kind::Cts => {
                // the CTS's receiver is the RTS's sender
                let ok = !q.bad[rx] && !q.txd[rx] && h.hears.hears(rx, tx);
                if ok {
                    let p = &h.exch[rx].as_ref().expect("CTS of an exchange").plan;
                    let resp = txtime(&p.ctrl, if p.ba { dcf::BLOCK_ACK_BYTES } else { dcf::ACK_BYTES }, tm.signal_extension);
                    let s = t + tm.sifs;
                    let e = s + p.dur;
                    let data = self.ppdu(rx, tx, s, e, Kind::Data, e + tm.sifs + resp);
                    h.sched.push(data);
                } else {
                    self.rts_failed(h, rx, t, t + tm.aifs, out);
                }
            }
            Kind::Data => self.data_outcome(h, &q, rx_ok, data_ok, out),
            Kind::Resp => {}
        }
    }

    /// The RTS of node `k`'s exchange got no usable CTS (known at `t`): `k` holds until `hold`.
    fn rts_failed(&mut self, h: &mut Hidden, k: usize, t: SimTime, hold: SimTime, out: &mut Vec<WifiOutput<P>>) {
        let Exchange { plan: p, t0 } = h.exch[k].take().expect("an exchange");
        let (rts, _) = self.timing.rts_cts(&p.ctrl);
        self.bss_stats.collisions += 1;
        let st = self.link_stats(p.link);
        st.collisions += 1;
        st.airtime_ns += rts.as_nanos();
        if self.air.is_some() {
            // air capture hook: the RTS that got no CTS
            self.capture(t0, t0, AirTx { link: p.link, txv: p.txv, n: p.n, ba: p.ba, dur: p.dur, ctrl: p.ctrl }, None);
        }
        let dropped = self.fail(k, p.link, p.n, 0, true, true);
        self.close(h, k, t, hold, Sent { link: p.link, n: p.n, txv: p.txv, ok: 0, dropped }, out);
    }

    /// The data PPDU `q` of node `q.tx`'s exchange ended: ACK (or BlockAck) if any MPDU got
    /// through, else nothing and AckTimeout.
    fn data_outcome(&mut self, h: &mut Hidden, q: &Ppdu, rx_ok: bool, ok: u64, out: &mut Vec<WifiOutput<P>>) {
        let tm = self.timing;
        let k = q.tx;
        let Exchange { plan: p, t0 } = h.exch[k].take().expect("an exchange");
        let rts = self.cfg.rts_cts;
        let t = q.end;
        if self.air.is_some() {
            // air capture hook: RTS/CTS (if any: the CTS came, the data went), the data MPDUs
            // (all lost when the data met an overlap at the AP), the ACK or block ACK if any
            self.capture(t0, q.start, AirTx { link: p.link, txv: p.txv, n: p.n, ba: p.ba, dur: p.dur, ctrl: p.ctrl }, Some(ok));
        }
        let hold;
        let dropped;
        if ok != 0 {
            let resp = txtime(&p.ctrl, if p.ba { dcf::BLOCK_ACK_BYTES } else { dcf::ACK_BYTES }, tm.signal_extension);
            let s = t + tm.sifs;
            let ack = self.ppdu(q.rx, k, s, s + resp, Kind::Resp, s + resp);
            h.sched.push(ack);
            self.link_stats(p.link).airtime_ns += (s + resp - t0).as_nanos();
            dropped = self.fail(k, p.link, p.n, ok, rts, false);
            let c = &mut self.nodes[k];
            c.backoff.reset_cw(self.edca.cw_min);
            c.ssrc = 0;
            hold = s + resp + tm.aifs;
        } else {
            let st = self.link_stats(p.link);
            if rx_ok {
                st.ppdu_failed += 1;
            } else {
                st.collisions += 1;
                self.bss_stats.collisions += 1;
            }
            self.link_stats(p.link).airtime_ns += (t - t0).as_nanos();
            dropped = self.fail(k, p.link, p.n, 0, rts, false);
            hold = t + tm.ack_timeout + tm.aifs;
        }
        self.close(h, k, t, hold, Sent { link: p.link, n: p.n, txv: p.txv, ok, dropped }, out);
    }

    /// Ends node `k`'s exchange at `t`: a new backoff, held until `hold`, and the MPDUs
    /// acknowledged or discarded leave the queue (delivered at `t`, the end of the data PPDU).
    fn close(&mut self, h: &mut Hidden, k: usize, t: SimTime, hold: SimTime, sent: Sent, out: &mut Vec<WifiOutput<P>>) {
        let c = &mut self.nodes[k];
        c.backoff.draw(&mut c.rng);
        h.cs[k].hold = hold;
        self.set_resume(h, k);
        self.inflight = vec![sent];
        let at = self.inflight_at;
        // `finish` clears `inflight_at`; the per-PPDU path sets it again in `hidden_refresh`
        self.finish(t, out);
        self.inflight_at = at;
    }
}

#[cfg(test)]
mod tests {
    use celltcp_engine::SimDuration;

    use super::*;
    use crate::bss::BssConfig;
    use crate::channel::Channel;
    use crate::phy::{Standard, TxVector};

    const US: fn(u64) -> SimDuration = SimDuration::from_micros;

    /// 802.11a at 54 Mbit/s, two stations hidden from each other, both sensing the AP.
    fn hidden_pair(rts: bool) -> Bss<u32> {
        let mut cfg = BssConfig::new(Standard::A);
        cfg.channel = Channel::FixedSnr(60.0);
        cfg.rts_cts = rts;
        let mut b = Bss::new(cfg, &[1.0, 1.0], 5, "unit");
        let mut h = Hears::all(3);
        h.set_hidden(1, 2);
        b.set_hears(h);
        assert!(b.hears().is_some());
        b
    }

    fn run(b: &mut Bss<u32>, arrivals: &[(SimTime, u16, u32)]) -> Vec<WifiOutput<u32>> {
        let mut out = vec![];
        let mut i = 0;
        loop {
            let t = match (arrivals.get(i).map(|a| a.0), b.next_deadline()) {
                (Some(a), Some(d)) => a.min(d),
                (a, d) => match a.or(d) {
                    Some(t) => t,
                    None => break,
                },
            };
            while i < arrivals.len() && arrivals[i].0 == t {
                let (at, s, pkt) = arrivals[i];
                b.enqueue(at, Node::Sta(s), Node::Ap, pkt, 1500).unwrap();
                i += 1;
            }
            b.on_timer(t, &mut out);
        }
        out
    }

    fn data_ack_rts_cts() -> (SimDuration, SimDuration, SimDuration, SimDuration) {
        let c = TxVector::ofdm(4);
        (txtime(&TxVector::ofdm(7), 1536, SimDuration::ZERO), txtime(&c, dcf::ACK_BYTES, SimDuration::ZERO), txtime(&c, dcf::RTS_BYTES, SimDuration::ZERO), txtime(&c, dcf::CTS_BYTES, SimDuration::ZERO))
    }

    #[test]
    fn hidden_station_transmits_during_the_others_frame_and_both_are_lost() {
        // station 1 gets a frame 100 µs into station 0's: it senses nothing, its counter is
        // zero and the medium idle to it, so it sends at once; the AP receives neither (and
        // their retries, 28 slots long against CW 31, may well overlap again)
        let mut b = hidden_pair(false);
        let t0 = SimTime::from_millis(1);
        let out = run(&mut b, &[(t0, 0, 1), (t0 + US(100), 1, 2)]);
        let (data, _, _, _) = data_ack_rts_cts();
        assert!(b.sta_stats(0).up.collisions >= 1 && b.sta_stats(1).up.collisions >= 1);
        assert_eq!(b.sta_stats(0).up.ppdu_tx + b.sta_stats(1).up.ppdu_tx, b.bss_stats().collisions + 2);
        // the AP sensed both: busy from t0 to the end of the second frame
        assert!(b.bss_stats().busy_ns >= (data + US(100)).as_nanos());
        // both retried and got through later
        let mut got: Vec<u32> = out.iter().filter_map(|o| if let WifiOutput::Delivered { pkt, .. } = o { Some(*pkt) } else { None }).collect();
        got.sort();
        assert_eq!(got, vec![1, 2]);
    }

    #[test]
    fn the_cts_nav_keeps_the_hidden_station_off_the_data_and_ack() {
        // with RTS/CTS, station 1's frame arrives during station 0's CTS: it decodes the CTS
        // (addressed to station 0) and sets its NAV to the end of the ACK (§10.3.2.4), so it
        // sends only DIFS after the ACK (with a zero counter: §10.3.4.3 draws one first)
        let mut b = hidden_pair(true);
        let t0 = SimTime::from_millis(1);
        let (data, ack, rts, cts) = data_ack_rts_cts();
        let during_cts = t0 + rts + US(16) + US(5);
        let out = run(&mut b, &[(t0, 0, 1), (during_cts, 1, 2)]);
        let first_end = t0 + rts + US(16) + cts + US(16) + data;
        assert_eq!(out[0], WifiOutput::Delivered { at: first_end, from: Node::Sta(0), to: Node::Ap, pkt: 1 });
        let WifiOutput::Delivered { at, pkt: 2, .. } = out[1] else { panic!("{out:?}") };
        let ack_end = first_end + US(16) + ack;
        let earliest = ack_end + US(34) + rts + US(16) + cts + US(16) + data;
        assert!(at >= earliest && (at - earliest).as_nanos().is_multiple_of(9_000) && at - earliest <= US(9 * 15), "{at:?} {earliest:?}");
        assert_eq!(b.bss_stats().collisions, 0);
    }

    #[test]
    fn without_rts_the_hidden_station_overlaps_the_ack_window() {
        // basic access: station 1's frame arrives during station 0's ACK: it senses the ACK and
        // defers (it does not sense the data, only the AP)
        let mut b = hidden_pair(false);
        let t0 = SimTime::from_millis(1);
        let (data, ack, _, _) = data_ack_rts_cts();
        let out = run(&mut b, &[(t0, 0, 1), (t0 + data + US(20), 1, 2)]);
        assert_eq!(out[0], WifiOutput::Delivered { at: t0 + data, from: Node::Sta(0), to: Node::Ap, pkt: 1 });
        let WifiOutput::Delivered { at, pkt: 2, .. } = out[1] else { panic!("{out:?}") };
        assert!(at >= t0 + data + US(16) + ack + US(34) + data, "{at:?}");
        assert_eq!(b.bss_stats().collisions, 0);
    }

    #[test]
    fn data_lost_after_its_cts_is_captured_with_the_rts_and_cts() {
        // station 1 misses the CTS to station 0 (its RTS 1 µs into it, as below) and, with no
        // NAV, sends its next RTS 9 µs after AckTimeout + DIFS, into station 0's data: the AP
        // loses both. The capture shows station 0's RTS and the AP's CTS received and its data
        // lost, no ACK (it used to show only a lost RTS, as if the CTS had never come)
        let (data, _, _, _) = data_ack_rts_cts();
        let mut b = hidden_pair(true);
        b.enable_air_capture("unit");
        let t0 = SimTime::from_millis(1);
        b.enqueue(t0, Node::Sta(0), Node::Ap, 1, 1500).unwrap();
        b.enqueue(t0, Node::Sta(1), Node::Ap, 2, 1500).unwrap();
        b.nodes[2].backoff.slots = 5;
        b.nodes[2].backoff.resume = t0;
        let mut out = vec![];
        b.on_timer(t0 + US(73), &mut out);
        // station 1's RTS (t0 + 45 … 73 µs) got no CTS: it resumes CTSTimeout 45 µs (16 + 9 + 20,
        // Table 17-21's aRxPHYStartDelay) + DIFS 34 µs after it
        assert_eq!(b.nodes[2].backoff.resume, t0 + US(73 + 79));
        b.nodes[2].backoff.slots = 1;
        run(&mut b, &[]);
        assert_eq!(b.sta_stats(0).up.collisions, 1);
        let sta0 = crate::air::mac_address("unit", Node::Sta(0));
        let frames: Vec<_> = b.air_log().unwrap().drain().filter(|f| f.at < t0 + US(400)).map(|f| (f.at - t0, f.fcs_ok, f.kind)).collect();
        let first: Vec<(SimDuration, bool)> = frames.iter().filter(|f| match &f.2 {
            crate::air::FrameKind::Rts { ta, .. } => *ta == sta0,
            crate::air::FrameKind::Cts { ra } => *ra == sta0,
            crate::air::FrameKind::Data { addr, .. } => addr[1] == sta0,
            crate::air::FrameKind::Ack { ra } => *ra == sta0,
            _ => false,
        }).map(|f| (f.0, f.1)).collect();
        assert_eq!(first, vec![(US(0), true), (US(44), true), (US(88), false)], "{frames:?}");
        assert!(data > US(161 - 88));
    }

    #[test]
    fn a_counter_ending_within_the_cca_time_of_the_cts_sends_and_misses_it() {
        // station 0's RTS at t0 (28 µs at 24 Mbit/s), the AP's CTS from t0 + 44 µs. Station 1,
        // hidden from station 0, counts 5 slots from t0: its counter reaches zero at t0 + 45
        // µs, 1 µs into the CTS, before its CCA can report it (aCCATime 4 µs): it sends its RTS
        // then, which the AP (transmitting) does not receive. Counting from t0 + 4 µs it would
        // reach zero 5 µs into the CTS: frozen, it decodes the CTS and waits for the NAV.
        let (data, ack, rts, cts) = data_ack_rts_cts();
        assert_eq!((rts, cts), (US(28), US(28)));
        for (resume_after, first_rts_at, lost) in [(US(0), US(45), true), (US(4), US(44 + 28 + 16) + data + US(16) + ack + US(34), false)] {
            let mut b = hidden_pair(true);
            b.enable_air_capture("unit");
            let t0 = SimTime::from_millis(1);
            b.enqueue(t0, Node::Sta(0), Node::Ap, 1, 1500).unwrap();
            b.enqueue(t0, Node::Sta(1), Node::Ap, 2, 1500).unwrap();
            b.nodes[2].backoff.slots = 5;
            b.nodes[2].backoff.resume = t0 + resume_after;
            let out = run(&mut b, &[]);
            let sta1 = crate::air::mac_address("unit", Node::Sta(1));
            let rts1: Vec<SimTime> = b.air_log().unwrap().drain().filter_map(|f| match f.kind {
                crate::air::FrameKind::Rts { ta, .. } if ta == sta1 => Some(f.at),
                _ => None,
            }).collect();
            if lost {
                assert_eq!(rts1[0], t0 + first_rts_at, "{rts1:?}");
                assert!(b.sta_stats(1).up.collisions >= 1);
            } else {
                // the earliest it may start: DIFS after the ACK, its counter at zero
                assert!(rts1[0] >= t0 + first_rts_at && rts1[0] - (t0 + first_rts_at) <= US(9 * 15), "{rts1:?}");
                assert_eq!(b.bss_stats().collisions, 0);
                assert_eq!(out[0], WifiOutput::Delivered { at: t0 + US(44 + 28 + 16) + data, from: Node::Sta(0), to: Node::Ap, pkt: 1 });
            }
            let mut got: Vec<u32> = out.iter().filter_map(|o| if let WifiOutput::Delivered { pkt, .. } = o { Some(*pkt) } else { None }).collect();
            got.sort();
            assert_eq!(got, vec![1, 2]);
        }
    }
}
