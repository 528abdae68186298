//! A data radio bearer's user plane at one end of the air interface: PDCP above a lower leg
//! (TS 36.323 §4.2.1: PDCP sits on RLC; TS 36.300 §22A.1 for LTE-WLAN aggregation, where a
//! split bearer's PDCP also sends over a WLAN leg).
//!
//! [`Bearer`] = [`PdcpTx`] + [`PdcpRx`] over a [`LowerLeg`]. PDCP numbers SDUs from above and
//! holds them until the leg confirms delivery (RLC AM) or lets them go at once when the leg
//! confirms nothing (RLC UM/TM), TS 36.323 §5.4; the leg's received PDUs go up through PDCP's
//! in-order delivery, and the leg's confirmations of what this end sent release PDCP's held
//! SDUs.
//!
//! The leg is a closed enum: [`LowerLeg::Lte`], an RLC entity that the LTE MAC serves, or a
//! split LWA bearer (`lwa.rs`): [`LowerLeg::LwaEnb`] at the eNB, where each downlink PDU is
//! steered to RLC or to the WLAN leg (LWAAP over Xw and the BSS, TS 36.360, carried by the
//! caller), and [`LowerLeg::LwaUe`] at the UE, where the PDUs of both legs meet in PDCP's
//! reordering (TS 36.323 §5.1.2.1.4). The uplink stays on RLC. Nothing above PDCP changes.

use celltcp_engine::SimTime;

use crate::lwa::{LwaLeg, LwaRx, LwaTx};
use crate::pdcp::{PdcpConfig, PdcpPdu, PdcpRx, PdcpTx};
use crate::rlc::{RlcConfig, RlcEntity, RlcPdu};

/// What carries PDCP PDUs under a bearer's PDCP.
#[derive(Debug)]
pub enum LowerLeg<P: Copy + std::fmt::Debug> {
    /// RLC (TM, UM or AM) over the LTE MAC.
    Lte(RlcEntity<PdcpPdu<P>>),
    /// The eNB end of a split LWA bearer: RLC, and the steering to the WLAN leg.
    LwaEnb(RlcEntity<PdcpPdu<P>>, Box<LwaTx<P>>),
    /// The UE end of a split LWA bearer: RLC, and the reordering across both legs.
    LwaUe(RlcEntity<PdcpPdu<P>>, Box<LwaRx<P>>),
}

impl<P: Copy + std::fmt::Debug> LowerLeg<P> {
    /// The leg's RLC entity.
    pub fn rlc(&self) -> &RlcEntity<PdcpPdu<P>> {
        match self {
            LowerLeg::Lte(r) | LowerLeg::LwaEnb(r, _) | LowerLeg::LwaUe(r, _) => r,
        }
    }

    /// The leg's RLC entity, mutably (the MAC's transmission opportunities and receptions).
    pub fn rlc_mut(&mut self) -> &mut RlcEntity<PdcpPdu<P>> {
        match self {
            LowerLeg::Lte(r) | LowerLeg::LwaEnb(r, _) | LowerLeg::LwaUe(r, _) => r,
        }
    }

    /// Whether the leg confirms delivery (RLC AM), so that PDCP holds SDUs until then.
    pub fn confirms_delivery(&self) -> bool {
        self.rlc().confirms_delivery()
    }

    /// Bytes waiting to be sent (new data and retransmissions).
    pub fn buffered_bytes(&self) -> u32 {
        self.rlc().buffer_status().total()
    }

    /// `buffered_bytes() > 0`, in O(1).
    #[inline]
    pub fn has_buffered(&self) -> bool {
        self.rlc().has_pending()
    }

    /// RLC re-establishment (TS 36.322 §5.4, at handover): a new entity takes over; the old
    /// one is returned with what it held.
    pub fn re_establish(&mut self, cfg: &RlcConfig) -> RlcEntity<PdcpPdu<P>> {
        match self {
            LowerLeg::Lte(r) | LowerLeg::LwaEnb(r, _) | LowerLeg::LwaUe(r, _) => std::mem::replace(r, RlcEntity::new(cfg)),
        }
    }

    /// The UE end's reordering timer (t-Reordering), if this is one and it runs.
    pub fn lwa_deadline(&self) -> Option<SimTime> {
        match self {
            LowerLeg::LwaUe(_, rx) => rx.next_deadline(),
            _ => None,
        }
    }
}

/// PDCP above a lower leg, at one end (eNB or UE) of one data radio bearer.
#[derive(Debug)]
pub struct Bearer<P: Copy + std::fmt::Debug> {
    pub pdcp_tx: PdcpTx<P>,
    pub pdcp_rx: PdcpRx<P>,
    pub leg: LowerLeg<P>,
}

impl<P: Copy + std::fmt::Debug> Bearer<P> {
    /// A bearer whose leg is RLC over the LTE MAC.
    pub fn lte(pdcp: PdcpConfig, rlc: &RlcConfig) -> Self {
        Bearer { pdcp_tx: PdcpTx::new(pdcp), pdcp_rx: PdcpRx::new(pdcp), leg: LowerLeg::Lte(RlcEntity::new(rlc)) }
    }

    /// PDCP numbering of an SDU from above (TS 36.323 §5.1.1). With a leg that confirms
    /// nothing, PDCP lets the SDU go now (§5.4); otherwise it holds it until the leg confirms
    /// delivery (what lossless handover forwards, §5.2.1.1). `Err(sdu)`: PDCP's buffer is full.
    pub fn number(&mut self, now: SimTime, sdu: P, bytes: u32) -> Result<PdcpPdu<P>, P> {
        let pdu = self.pdcp_tx.on_sdu(now, sdu, bytes)?;
        if !self.leg.confirms_delivery() {
            self.pdcp_tx.on_transmitted(pdu.sn);
        }
        Ok(pdu)
    }

    /// A numbered PDU to the leg. `Err(sdu)`: the leg's buffer is full; PDCP forgets it.
    /// On a split LWA bearer's eNB end, a PDU steered to the WLAN is released by PDCP (nothing
    /// confirms it) and queued for the caller (`LwaTx::take_wlan`).
    pub fn submit(&mut self, now: SimTime, pdu: PdcpPdu<P>) -> Result<(), P> {
        if let LowerLeg::LwaEnb(_, lwa) = &mut self.leg {
            if lwa.steer(now, pdu) == LwaLeg::Wlan {
                self.pdcp_tx.on_transmitted(pdu.sn);
                return Ok(());
            }
        }
        match self.leg.rlc_mut().on_sdu(now, pdu, pdu.bytes) {
            Ok(()) => Ok(()),
            Err(p) => {
                self.pdcp_tx.forget(p.sn);
                Err(p.sdu)
            }
        }
    }

    /// [`number`](Self::number) then [`submit`](Self::submit).
    pub fn send(&mut self, now: SimTime, sdu: P, bytes: u32) -> Result<(), P> {
        let pdu = self.number(now, sdu, bytes)?;
        self.submit(now, pdu)
    }

    /// PDUs the leg received (a decoded transport block's RLC PDUs): SDUs delivered in order go
    /// to `up`; the peer's confirmations carried in them (RLC STATUS) release PDCP's held
    /// SDUs. `scratch` is a reusable buffer.
    pub fn on_rx(&mut self, now: SimTime, pdus: impl IntoIterator<Item = RlcPdu<PdcpPdu<P>>>, scratch: &mut Vec<PdcpPdu<P>>, up: &mut Vec<P>) {
        let rlc = self.leg.rlc_mut();
        for pdu in pdus {
            rlc.on_rx_pdu(now, pdu, scratch);
        }
        self.up(now, scratch, up);
        self.leg.rlc_mut().take_delivered(scratch);
        for p in scratch.drain(..) {
            self.pdcp_tx.on_lower_layer_ack(p.sn);
        }
    }

    /// The leg's timers due at `now` (RLC t-Reordering, t-PollRetransmit, …): SDUs they
    /// deliver go to `up`.
    pub fn on_leg_timeout(&mut self, now: SimTime, scratch: &mut Vec<PdcpPdu<P>>, up: &mut Vec<P>) {
        self.leg.rlc_mut().on_timeout(now, scratch);
        self.up(now, scratch, up);
        if let LowerLeg::LwaUe(_, rx) = &mut self.leg {
            rx.on_timeout(now, up);
        }
    }

    /// PDUs RLC delivered, to PDCP's receiver (or, at a split LWA bearer's UE end, to its
    /// reordering across both legs).
    fn up(&mut self, now: SimTime, scratch: &mut Vec<PdcpPdu<P>>, up: &mut Vec<P>) {
        match &mut self.leg {
            LowerLeg::LwaUe(_, rx) => {
                for p in scratch.drain(..) {
                    rx.on_pdu(now, LwaLeg::Lte, p, up);
                }
            }
            _ => {
                for p in scratch.drain(..) {
                    self.pdcp_rx.on_pdu(now, p, up);
                }
            }
        }
    }

    /// RLC re-establishment at handover (TS 36.322 §5.4): a new entity takes over the leg;
    /// the old one's receiving side first delivers the SDUs it can reassemble, which go up
    /// through PDCP (with reordering, if the caller turned it on: TS 36.323 §5.1.2.1.2, "PDUs
    /// received due to re-establishment of lower layers") to `up`. The old entity is returned
    /// with what else it held (its transmit side, the SDUs UM gave up on).
    pub fn re_establish(&mut self, now: SimTime, cfg: &RlcConfig, up: &mut Vec<P>) -> RlcEntity<PdcpPdu<P>> {
        let mut old = self.leg.re_establish(cfg);
        let mut scratch = Vec::new();
        old.reestablish_rx(&mut scratch);
        self.up(now, &mut scratch, up);
        old
    }

    /// PDCP's discard timer (TS 36.323 §5.4): the SDUs whose timer expired are discarded, and
    /// so are their PDUs in the leg if no piece of them was sent yet (TS 36.322 §5.3); a PDU
    /// already on its way is left to RLC. The SDUs discarded from the leg go to `dropped`.
    pub fn on_discard_timeout(&mut self, now: SimTime, lost: &mut Vec<PdcpPdu<P>>, dropped: &mut Vec<P>) {
        lost.clear();
        self.pdcp_tx.on_timeout(now, lost);
        if lost.is_empty() {
            return;
        }
        let first = lost[0].count;
        let last = lost[lost.len() - 1].count;
        let gone = self.leg.rlc_mut().discard_untransmitted(|p| p.count.wrapping_sub(first) <= last.wrapping_sub(first));
        dropped.extend(gone.into_iter().map(|p| p.sdu));
    }

    /// The earliest timer of PDCP's transmitter and the leg.
    pub fn next_deadline(&self) -> Option<SimTime> {
        [self.leg.rlc().next_deadline(), self.pdcp_tx.next_deadline(), self.leg.lwa_deadline()].into_iter().flatten().min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rlc::{AmConfig, UmConfig};

    const T0: SimTime = SimTime::ZERO;

    /// Moves everything `a` has to send into `b` in one PDU per call (a lossless channel).
    fn carry(a: &mut Bearer<u32>, b: &mut Bearer<u32>, now: SimTime, up: &mut Vec<u32>) {
        let mut scratch = Vec::new();
        while let Some(pdu) = a.leg.rlc_mut().on_tx_opportunity(now, 10_000) {
            b.on_rx(now, [pdu], &mut scratch, up);
        }
    }

    // TS 36.323 §5.4 with RLC UM: PDCP lets an SDU go as soon as the leg has it; with RLC AM it
    // holds it until the peer's RLC STATUS confirms delivery (§5.1.1, what lossless handover
    // forwards, §5.2.1.1).
    #[test]
    fn bearer_holds_sdus_until_the_leg_confirms() {
        let um = RlcConfig::Um(UmConfig::default());
        let mut a = Bearer::<u32>::lte(PdcpConfig::default(), &um);
        a.send(T0, 1, 500).unwrap();
        assert_eq!(a.pdcp_tx.held_bytes(), 0, "UM: released at once");

        let am = RlcConfig::Am(AmConfig::default());
        let (mut a, mut b) = (Bearer::<u32>::lte(PdcpConfig::default(), &am), Bearer::<u32>::lte(PdcpConfig::default(), &am));
        let mut up = Vec::new();
        for id in 0..3 {
            a.send(T0, id, 400).unwrap();
        }
        assert_eq!(a.pdcp_tx.held().count(), 3);
        carry(&mut a, &mut b, T0, &mut up);
        assert_eq!(up, vec![0, 1, 2], "delivered in order at the peer");
        // the peer's STATUS goes back (polled by the last PDU): the sender's PDCP lets go
        let mut t = T0;
        for _ in 0..200 {
            t += celltcp_engine::SimDuration::from_millis(1);
            let mut none = Vec::new();
            if b.next_deadline().is_some_and(|d| d <= t) {
                b.on_leg_timeout(t, &mut Vec::new(), &mut none);
            }
            carry(&mut b, &mut a, t, &mut none);
            if a.pdcp_tx.held().count() == 0 {
                break;
            }
        }
        assert_eq!(a.pdcp_tx.held().count(), 0, "released by the RLC STATUS");
    }

    // A full PDCP buffer refuses the SDU and gives it back; so does a full leg, and PDCP then
    // forgets the SDU it had numbered.
    #[test]
    fn bearer_refuses_when_full() {
        let am = RlcConfig::Am(AmConfig { tx_buffer_bytes: 1000, ..AmConfig::default() });
        let mut a = Bearer::<u32>::lte(PdcpConfig { tx_buffer_bytes: 10_000, ..PdcpConfig::default() }, &am);
        assert!(a.send(T0, 1, 900).is_ok());
        assert_eq!(a.send(T0, 2, 900), Err(2), "the leg is full");
        assert_eq!(a.pdcp_tx.held().count(), 1, "PDCP forgot SDU 2");
        let mut p = Bearer::<u32>::lte(PdcpConfig { tx_buffer_bytes: 1000, ..PdcpConfig::default() }, &am);
        assert!(p.send(T0, 1, 900).is_ok());
        assert_eq!(p.number(T0, 2, 900), Err(2), "PDCP is full");
    }
}
