//! Channel access: the DCF (IEEE 802.11-2016 §10.3) and EDCA's best-effort access category
//! (§10.22.2).
//!
//! A station may start a transmission once the medium has been idle for AIFS = aSIFSTime +
//! AIFSN × aSlotTime (§10.22.2.4; DIFS = aSIFSTime + 2 × aSlotTime, §10.3.2.3.5, is the DCF's
//! AIFSN = 2; best effort uses AIFSN = 3, Table 9-137) and then for as many further idle slots as
//! its backoff counter holds (§10.3.4.3). The counter is drawn uniformly from [0, CW]; CW starts at
//! CWmin, becomes min(2·(CW + 1) − 1, CWmax) after each failed attempt and returns to CWmin after
//! a success or a discard at the retry limit (§10.3.3). The counter is frozen while the medium
//! is busy and resumes after the next AIFS. After every transmission a new backoff is drawn
//! even if no frame waits (post-backoff); a frame arriving at an idle station whose medium has
//! been idle for AIFS and whose counter is zero goes at once, while one arriving to a busy
//! medium with a zero counter first draws a backoff.
//!
//! A station that receives a frame in error defers EIFS = aSIFSTime + AckTxTime (at the lowest
//! basic rate) + AIFS instead of AIFS (§10.3.2.3.7). A transmitter that expects an ACK, block
//! ACK or CTS waits AckTimeout = aSIFSTime + aSlotTime + aRxPHYStartDelay after its PPDU
//! (§10.3.2.9) before concluding failure. With RTS/CTS (§10.3.2.6) the other stations set their
//! NAV from the Duration fields to the end of the expected ACK (§10.3.2.4) and keep deferring
//! until then even if the data fail. These rules are the `resume_after_*` methods of
//! [`MacTiming`]; the coordinator (`bss.rs`) applies them to every node after each exchange and
//! finds collisions (all contenders whose counters reach zero within [`CCA_TIME`] of the first).
//!
//! The backoff is event-driven: instead of ticking every slot, [`Backoff`] remembers when its
//! count-down (re)started and, when the medium turns busy at `t`, subtracts the whole idle
//! slots elapsed, ⌊(t − resume) / aSlotTime⌋, in one step. An idle BSS therefore costs nothing.

use celltcp_engine::{SimDuration, SimTime};
use rand::Rng;

use crate::phy::{txtime, PhyTiming, TxVector};

/// aCCATime, the time within which CCA reports the start of a PPDU it senses: 4 µs for the
/// OFDM PHYs (IEEE 802.11-2020 Table 17-21 "aCCATime < 4 µs", §17.3.10.6; clauses 19 and 21
/// take it over). A node whose backoff counter reaches zero within it of a PPDU's start has
/// not seen the medium turn busy and transmits: the two PPDUs collide. Both the whole-range
/// path (`medium::start_exchange`) and the per-PPDU path (`bss/hidden.rs`) apply it.
pub const CCA_TIME: SimDuration = SimDuration::from_micros(4);

/// Frame sizes of the control frames (§9.3.1): RTS 20, CTS 14, ACK 14, compressed block ACK 32
/// octets (with its 8-octet bitmap, §9.3.1.9.3).
pub const RTS_BYTES: u32 = 20;
pub const CTS_BYTES: u32 = 14;
pub const ACK_BYTES: u32 = 14;
pub const BLOCK_ACK_BYTES: u32 = 32;

/// Contention parameters of one access category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EdcaParams {
    pub aifsn: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// dot11ShortRetryLimit: attempts of a frame sent without RTS/CTS (and of the RTS itself).
    pub short_retry_limit: u32,
    /// dot11LongRetryLimit: attempts of a frame protected by RTS/CTS.
    pub long_retry_limit: u32,
}

impl EdcaParams {
    /// The DCF (non-QoS STAs): DIFS = SIFS + 2 slots, the PHY's CWmin/CWmax, retry limits 7
    /// and 4 (dot11ShortRetryLimit, dot11LongRetryLimit defaults, Annex C).
    pub fn dcf(t: &PhyTiming) -> EdcaParams {
        EdcaParams { aifsn: 2, cw_min: t.cw_min, cw_max: t.cw_max, short_retry_limit: 7, long_retry_limit: 4 }
    }

    /// EDCA best effort (Table 9-137: AIFSN 3, aCWmin, aCWmax).
    pub fn best_effort(t: &PhyTiming) -> EdcaParams {
        EdcaParams { aifsn: 3, ..EdcaParams::dcf(t) }
    }
}

/// The MAC's derived intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacTiming {
    pub slot: SimDuration,
    pub sifs: SimDuration,
    pub aifs: SimDuration,
    pub eifs: SimDuration,
    pub ack_timeout: SimDuration,
    pub signal_extension: SimDuration,
}

impl MacTiming {
    pub fn new(t: &PhyTiming, p: &EdcaParams) -> MacTiming {
        let aifs = t.sifs + SimDuration::from_nanos(t.slot.as_nanos() * p.aifsn as u64);
        // AckTxTime at the lowest mandatory rate (6 Mbit/s), §10.3.2.3.7.
        let ack_lowest = txtime(&TxVector::ofdm(0), ACK_BYTES, t.signal_extension);
        MacTiming {
            slot: t.slot,
            sifs: t.sifs,
            aifs,
            eifs: t.sifs + ack_lowest + aifs,
            ack_timeout: t.sifs + t.slot + t.rx_phy_start_delay,
            signal_extension: t.signal_extension,
        }
    }
}

impl MacTiming {
    /// After a successful exchange whose last frame (ACK or block ACK) ends at `end`: every
    /// station counts down again AIFS later.
    pub fn resume_after_success(&self, end: SimTime) -> SimTime {
        end + self.aifs
    }

    /// The sender of a PPDU that ended at `own_end` and got no ACK, block ACK or CTS back, with
    /// the medium busy until `medium_end` (later than `own_end` when another station's PPDU
    /// collided with a longer one): it waits AckTimeout (§10.3.2.9), and for the medium to fall
    /// idle, then AIFS.
    pub fn resume_after_timeout(&self, own_end: SimTime, medium_end: SimTime) -> SimTime {
        (own_end + self.ack_timeout).max(medium_end) + self.aifs
    }

    /// A station that received a frame in error ending at `medium_end` (a collision, or an
    /// MPDU that failed its FCS) defers EIFS (§10.3.2.3.7), or to the end of a NAV it set from
    /// an earlier RTS/CTS (`nav_end`, §10.3.2.4) and AIFS after it, whichever is later.
    pub fn resume_after_error(&self, medium_end: SimTime, nav_end: Option<SimTime>) -> SimTime {
        let eifs = medium_end + self.eifs;
        nav_end.map_or(eifs, |n| eifs.max(n + self.aifs))
    }

    /// Durations of the RTS and the CTS sent at the control rate `ctrl` (§10.3.2.6); the data
    /// PPDU starts SIFS after the CTS.
    pub fn rts_cts(&self, ctrl: &TxVector) -> (SimDuration, SimDuration) {
        (txtime(ctrl, RTS_BYTES, self.signal_extension), txtime(ctrl, CTS_BYTES, self.signal_extension))
    }
}

/// One contender's backoff state.
#[derive(Clone, Debug)]
pub struct Backoff {
    /// Current contention window.
    pub cw: u32,
    /// Backoff slots still to count.
    pub slots: u32,
    /// When the count-down (re)starts: the end of the AIFS (or EIFS) after the last busy
    /// period this contender saw.
    pub resume: SimTime,
}

impl Backoff {
    pub fn new(cw_min: u32) -> Backoff {
        Backoff { cw: cw_min, slots: 0, resume: SimTime::ZERO }
    }

    /// Draws a new counter uniformly from [0, CW].
    pub fn draw<R: Rng>(&mut self, rng: &mut R) {
        self.slots = rng.gen_range(0..=self.cw);
    }

    /// Slots still to count at `t` if the medium stays idle until then.
    pub fn remaining_at(&self, t: SimTime, slot: SimDuration) -> u32 {
        if t <= self.resume {
            return self.slots;
        }
        let idle = (t - self.resume).as_nanos() / slot.as_nanos();
        self.slots.saturating_sub(idle.min(u32::MAX as u64) as u32)
    }

    /// The medium turns busy at `t`: the idle slots before it are counted and the counter
    /// freezes.
    pub fn freeze(&mut self, t: SimTime, slot: SimDuration) {
        self.slots = self.remaining_at(t, slot);
    }

    /// When the counter reaches zero if the medium stays idle.
    pub fn ready_at(&self, slot: SimDuration) -> SimTime {
        self.resume + SimDuration::from_nanos(slot.as_nanos() * self.slots as u64)
    }

    /// Success or discard: CW back to CWmin (§10.3.3).
    pub fn reset_cw(&mut self, cw_min: u32) {
        self.cw = cw_min;
    }

    /// Failed attempt: CW ← min(2·(CW + 1) − 1, CWmax) (§10.3.3).
    pub fn double_cw(&mut self, cw_max: u32) {
        self.cw = (2 * (self.cw + 1) - 1).min(cw_max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::{Band, Standard};
    use celltcp_engine::rng::component_rng;

    #[test]
    fn difs_eifs_and_ack_timeout_for_80211a() {
        let t = Standard::A.timing(Band::Ghz5);
        let m = MacTiming::new(&t, &EdcaParams::dcf(&t));
        // DIFS = 16 + 2·9 = 34 µs; EIFS = 16 + 44 + 34 = 94 µs; AckTimeout = 16 + 9 + 20 = 45 µs
        // (aRxPHYStartDelay 20 µs, IEEE 802.11-2020 Table 17-21).
        assert_eq!(m.aifs, SimDuration::from_micros(34));
        assert_eq!(m.eifs, SimDuration::from_micros(94));
        assert_eq!(m.ack_timeout, SimDuration::from_micros(45));
        let be = MacTiming::new(&t, &EdcaParams::best_effort(&t));
        assert_eq!(be.aifs, SimDuration::from_micros(43));
    }

    #[test]
    fn difs_eifs_and_ack_timeout_for_80211g() {
        // ERP-OFDM (IEEE 802.11-2020 Table 18-5, short slot): DIFS = 10 + 2·9 = 28 µs; the 6 Mbit/s
        // ACK 20 + 24 µs + 6 µs signal extension, EIFS = 10 + 50 + 28 = 88 µs (§10.3.2.3.7);
        // AckTimeout = aSIFSTime + aSlotTime + aRxPHYStartDelay = 10 + 9 + 20 = 39 µs (§10.3.2.11),
        // the value ns-3 arms (SIFS + slot + the ACK's PHY preamble and header). After a
        // collision of PPDUs ending together the colliders resume 39 + 28 = 67 µs after it, the
        // bystanders 88 µs: 2 slots + 3 µs apart.
        let t = Standard::G.timing(Band::Ghz2_4);
        let m = MacTiming::new(&t, &EdcaParams::dcf(&t));
        assert_eq!((m.aifs, m.eifs, m.ack_timeout), (SimDuration::from_micros(28), SimDuration::from_micros(88), SimDuration::from_micros(39)));
        let e = SimTime::from_micros(1_000);
        assert_eq!((m.resume_after_timeout(e, e), m.resume_after_error(e, None)), (SimTime::from_micros(1_067), SimTime::from_micros(1_088)));
    }

    #[test]
    fn ack_timeout_for_ht_and_vht_from_the_2020_tables() {
        // AckTimeout = aSIFSTime + aSlotTime + aRxPHYStartDelay (IEEE 802.11-2020 §10.3.2.11), with
        // aRxPHYStartDelay 28 µs for HT-mixed (Table 19-25) and 36 + 4 × max N_VHT-LTF + 4 = 72 µs
        // for VHT (Table 21-28, N_VHT-LTF ≤ 8 by Table 21-13). Before: 33 and 40 µs, from memory.
        let ack_timeout_us = |s: Standard, b: Band| {
            let t = s.timing(b);
            MacTiming::new(&t, &EdcaParams::best_effort(&t)).ack_timeout.as_nanos() / 1_000
        };
        assert_eq!(ack_timeout_us(Standard::N, Band::Ghz5), 16 + 9 + 28);
        assert_eq!(ack_timeout_us(Standard::N, Band::Ghz2_4), 10 + 9 + 28);
        assert_eq!(ack_timeout_us(Standard::Ac, Band::Ghz5), 16 + 9 + 72);
        // the non-HT PHYs keep Tables 17-21 and 18-5's 20 µs
        assert_eq!(ack_timeout_us(Standard::A, Band::Ghz5), 16 + 9 + 20);
        assert_eq!(ack_timeout_us(Standard::G, Band::Ghz2_4), 10 + 9 + 20);
    }

    #[test]
    fn resume_rules_after_success_timeout_error_and_nav() {
        let t = Standard::A.timing(Band::Ghz5);
        let m = MacTiming::new(&t, &EdcaParams::dcf(&t));
        let e = SimTime::from_micros(1_000);
        assert_eq!(m.resume_after_success(e), SimTime::from_micros(1_034));
        // alone: AckTimeout 45 + DIFS 34; behind a longer colliding PPDU: that PPDU's end + DIFS
        assert_eq!(m.resume_after_timeout(e, e), SimTime::from_micros(1_079));
        assert_eq!(m.resume_after_timeout(e, SimTime::from_micros(1_200)), SimTime::from_micros(1_234));
        // EIFS 94; a NAV running past it wins
        assert_eq!(m.resume_after_error(e, None), SimTime::from_micros(1_094));
        assert_eq!(m.resume_after_error(e, Some(SimTime::from_micros(1_100))), SimTime::from_micros(1_134));
        // RTS (20 B) and CTS (14 B) at 24 Mbit/s: 28 µs each; at 6 Mbit/s: 52 and 44 µs
        assert_eq!(m.rts_cts(&TxVector::ofdm(4)), (SimDuration::from_micros(28), SimDuration::from_micros(28)));
        assert_eq!(m.rts_cts(&TxVector::ofdm(0)), (SimDuration::from_micros(52), SimDuration::from_micros(44)));
    }

    #[test]
    fn cw_doubles_to_cwmax_and_resets() {
        let mut b = Backoff::new(15);
        let seq: Vec<u32> = (0..7)
            .map(|_| {
                b.double_cw(1023);
                b.cw
            })
            .collect();
        assert_eq!(seq, vec![31, 63, 127, 255, 511, 1023, 1023]);
        b.reset_cw(15);
        assert_eq!(b.cw, 15);
    }

    #[test]
    fn backoff_counts_whole_idle_slots_and_freezes() {
        let slot = SimDuration::from_micros(9);
        let mut b = Backoff { cw: 15, slots: 10, resume: SimTime::from_micros(100) };
        assert_eq!(b.ready_at(slot), SimTime::from_micros(190));
        // busy at 100 + 3 slots + 5 µs: three slots counted, seven left.
        b.freeze(SimTime::from_micros(132), slot);
        assert_eq!(b.slots, 7);
        // busy before the AIFS ended: nothing counted.
        b.resume = SimTime::from_micros(500);
        b.freeze(SimTime::from_micros(400), slot);
        assert_eq!(b.slots, 7);
        // busy exactly at a slot boundary counts that slot.
        b.freeze(SimTime::from_micros(518), slot);
        assert_eq!(b.slots, 5);
    }

    #[test]
    fn draws_are_uniform_over_the_window() {
        let mut rng = component_rng(1, 2);
        let mut b = Backoff::new(15);
        let mut hist = [0u32; 16];
        for _ in 0..160_000 {
            b.draw(&mut rng);
            hist[b.slots as usize] += 1;
        }
        for h in hist {
            assert!((h as f64 - 10_000.0).abs() < 500.0, "{hist:?}");
        }
    }
}
