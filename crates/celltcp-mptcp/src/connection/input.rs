//! Segment input and the data-level receive side of [`MptcpConnection`] (RFC 8684 §3.1–§3.3):
//! the 4-tuple demultiplexing of one connection's subflows, the MPTCP options of each segment
//! (handshakes, DSS, ADD_ADDR, REMOVE_ADDR, MP_FASTCLOSE), DATA_ACKs, mappings from subflow to
//! data sequence numbers (§3.3.1) and data-level reassembly with duplicate dropping.

use super::*;

impl MptcpConnection {
    /// A segment arrived on the 4-tuple (`local`, `remote`) with the MPTCP option `mptcp` (empty
    /// if none). Returns false when it belongs to no subflow and opens none (a SYN with a wrong
    /// token, or stray).
    pub fn on_segment(
        &mut self,
        now: SimTime,
        local: SockAddr,
        remote: SockAddr,
        seg: &TcpSegment,
        mptcp: &MptcpOption,
        ce: bool,
    ) -> bool {
        let opt = match MptcpOpt::from_segment(mptcp) {
            Some(Ok(o)) => Some(o),
            _ => None,
        };
        let i = match self.find_subflow(local, remote) {
            Some(i) => i,
            None => {
                // A joining SYN (§3.2): the token must be ours.
                let Some(MptcpOpt::JoinSyn {
                    addr_id,
                    token,
                    nonce,
                    ..
                }) = opt
                else {
                    return false;
                };
                if !seg.flags.syn() || seg.flags.ack() || token != self.token() || self.reset {
                    self.stats.joins_refused += 1;
                    return false;
                }
                let n = self.subflows.len();
                let iss = derive32(self.local_key, b'i', n);
                let ep =
                    TcpEndpoint::accept(self.subflow_tcp(), local.port, remote.port, iss, seg, now);
                let local_id = self
                    .local_addrs
                    .iter()
                    .find(|a| a.addr == local.ip)
                    .map_or(0, |a| a.id);
                if !self.remote_addrs.iter().any(|a| a.id == addr_id) {
                    self.remote_addrs.push(AddrEntry {
                        id: addr_id,
                        addr: remote.ip,
                        announced: false,
                    });
                }
                self.push_subflow(ep, local, remote, local_id, addr_id, iss, true, false);
                let s = &mut self.subflows[n];
                s.nonce_remote = nonce;
                s.irs = Some(seg.seq);
                return true;
            }
        };
        if self.subflows[i].state == SubflowState::Failed {
            self.subflows[i].ep.on_segment(now, seg, ce);
            return true;
        }
        if seg.flags.syn() {
            self.subflows[i].irs = Some(seg.seq);
        }
        if let Some(o) = opt {
            if !self.on_option(now, i, seg, o) {
                return true;
            }
        }
        // §3.3.4: the window is the connection's, relative to the DATA_ACK.
        if !seg.flags.syn() {
            if let Some(Dss {
                data_ack: Some(_), ..
            }) = opt.and_then(|o| {
                if let MptcpOpt::Dss(d) = o {
                    Some(d)
                } else {
                    None
                }
            }) {
                let shift = self.subflows[i].ep.negotiated().snd_wscale as u32;
                let edge = self.data_una + ((seg.window as u64) << shift);
                self.peer_edge = self.peer_edge.max(edge);
            }
        }
        self.couple(i);
        self.subflows[i].ep.on_segment(now, seg, ce);
        if self.subflows[i].state == SubflowState::Connecting
            && !self.subflows[i].active
            && self.subflows[i].ep.is_established()
        {
            // The listener's side: the third ACK arrived (its MP_JOIN HMAC, if a join, was
            // checked in `on_option`).
            if !self.subflows[i].join || self.subflows[i].third_ack_sent {
                self.subflows[i].state = SubflowState::Established;
            }
        }
        self.pull_data(now, i);
        self.check_health(i);
        true
    }

    /// Handles the MPTCP option of a segment on subflow `i`; false if the segment must be dropped.
    pub(super) fn on_option(
        &mut self,
        now: SimTime,
        i: usize,
        seg: &TcpSegment,
        o: MptcpOpt,
    ) -> bool {
        match o {
            MptcpOpt::Capable { keys, data_len, .. } => match keys {
                CapableKeys::One(k) if seg.flags.syn() && seg.flags.ack() => {
                    self.remote_key = Some(k)
                }
                CapableKeys::Two { sender, receiver }
                    if receiver == self.local_key && !self.subflows[i].join =>
                {
                    self.remote_key = Some(sender);
                    self.subflows[i].third_ack_sent = true;
                    if let Some(l) = data_len {
                        // §3.1 (v1): MP_CAPABLE with data implies the mapping DSN = IDSN + 1,
                        // SSN = 1, of `data_len` bytes.
                        self.subflows[i]
                            .rx_maps
                            .insert(0, (crypto::idsn(sender).wrapping_add(1), l as u64));
                    }
                }
                _ => {}
            },
            MptcpOpt::JoinSynAck {
                hmac,
                nonce,
                addr_id,
                ..
            } => {
                let s = &mut self.subflows[i];
                s.nonce_remote = nonce;
                let rk = self.remote_key.unwrap_or(0);
                let want = crypto::join_hmac(rk, self.local_key, nonce, s.nonce_local);
                if u64::from_be_bytes(want[..8].try_into().unwrap()) != hmac {
                    self.fail(i);
                    self.stats.joins_refused += 1;
                    return false;
                }
                let _ = addr_id;
            }
            MptcpOpt::JoinAck { hmac } => {
                let s = &self.subflows[i];
                let rk = self.remote_key.unwrap_or(0);
                let want = crypto::join_hmac(rk, self.local_key, s.nonce_remote, s.nonce_local);
                if want[..20] != hmac {
                    self.fail(i);
                    self.stats.joins_refused += 1;
                    return false;
                }
                self.subflows[i].third_ack_sent = true;
            }
            MptcpOpt::Dss(d) => {
                if let Some(ack) = d.data_ack {
                    let base = crypto::idsn(self.local_key).wrapping_add(1);
                    let off = ack.wrapping_sub(base);
                    self.on_data_ack(now, off);
                }
                if let Some(m) = d.mapping {
                    let dsn = if m.dsn64 { m.dsn } else { m.dsn & 0xffff_ffff };
                    if !(d.data_fin && m.ssn == 0) {
                        let s = &mut self.subflows[i];
                        let ssn_off =
                            celltcp_tcp::seq::unwrap(0, m.ssn, s.rx_read + 1).saturating_sub(1);
                        s.rx_maps
                            .insert(ssn_off, (dsn, m.len as u64 - d.data_fin as u64));
                    }
                    if let (true, Some(rk)) = (d.data_fin, self.remote_key) {
                        // The DATA_FIN is the mapping's last octet (§3.3.3).
                        let off = dsn.wrapping_sub(crypto::idsn(rk).wrapping_add(1));
                        self.peer_fin = Some(off + m.len as u64 - 1);
                    }
                    self.advance_fin(i);
                }
            }
            MptcpOpt::AddAddr {
                echo: false,
                addr_id,
                addr,
                port,
                hmac,
            } => {
                if let Some(rk) = self.remote_key {
                    let want = crypto::add_addr_hmac(
                        rk,
                        self.local_key,
                        addr_id,
                        addr.octets(),
                        port.unwrap_or(0),
                    );
                    if Some(want) == hmac {
                        if !self.remote_addrs.iter().any(|a| a.id == addr_id) {
                            self.remote_addrs.push(AddrEntry {
                                id: addr_id,
                                addr,
                                announced: true,
                            });
                        }
                        // echoed on a pure ACK of its own (`poll_transmit`)
                        self.add_addr_echo.push((addr_id, addr));
                    }
                }
            }
            MptcpOpt::AddAddr {
                echo: true,
                addr_id,
                ..
            } => {
                self.add_addr_pending.retain(|&a| a != addr_id);
                self.add_addr_unechoed.retain(|e| e.0 != addr_id);
            }
            MptcpOpt::RemoveAddr { ids, n } => {
                for &id in &ids[..n as usize] {
                    self.remote_addrs.retain(|a| a.id != id || id == 0);
                    for j in 0..self.subflows.len() {
                        if self.subflows[j].remote_id == id {
                            self.fail(j);
                        }
                    }
                }
            }
            MptcpOpt::FastClose { receiver_key } if receiver_key == self.local_key => {
                self.reset = true;
                for j in 0..self.subflows.len() {
                    self.fail(j);
                }
            }
            _ => {}
        }
        true
    }

    pub(super) fn on_data_ack(&mut self, now: SimTime, off: u64) {
        let fin_end = self.app_written + 1;
        let limit = if self.app_closed && self.snd_nxt == self.app_written {
            fin_end
        } else {
            self.snd_nxt
        };
        if off > self.data_una && off <= limit {
            let newly = off.min(self.app_written) - self.data_una.min(self.app_written);
            self.stats.bytes_acked += newly;
            self.data_una = off.min(self.app_written);
            while let Some(&(a, b)) = self.reinject.front() {
                if b <= self.data_una {
                    self.reinject.pop_front();
                } else {
                    if a < self.data_una {
                        self.reinject[0].0 = self.data_una;
                    }
                    break;
                }
            }
            if self.app_closed && off >= fin_end {
                self.data_fin_acked = true;
                self.data_fin_deadline = None;
            }
        }
        let _ = now;
        self.maybe_close_subflows();
    }

    /// Reads subflow `i`'s in-order bytes and moves them to the data level through its mappings.
    pub(super) fn pull_data(&mut self, now: SimTime, i: usize) {
        if self.remote_key.is_none() {
            return;
        }
        let n = self.subflows[i].ep.read(now, u64::MAX);
        if n == 0 {
            return;
        }
        let base = crypto::idsn(self.remote_key.unwrap_or(0)).wrapping_add(1);
        let s = &mut self.subflows[i];
        let (mut a, b) = (s.rx_read, s.rx_read + n);
        s.rx_read = b;
        s.stats.bytes_received += n;
        let mut ranges = Vec::new();
        while a < b {
            // the mapping covering subflow offset `a`
            let Some((&m_ssn, &(m_wire, m_len))) = s.rx_maps.range(..=a).next_back() else {
                break;
            };
            let m_dsn = m_wire.wrapping_sub(base);
            if a >= m_ssn + m_len {
                // no mapping for these bytes (cannot happen: every data segment carries one)
                debug_assert!(false, "subflow bytes {a}.. without a mapping");
                break;
            }
            let end = b.min(m_ssn + m_len);
            ranges.push((m_dsn + (a - m_ssn), m_dsn + (end - m_ssn)));
            a = end;
        }
        // forget mappings wholly consumed
        while let Some((&m_ssn, &(_, m_len))) = s.rx_maps.iter().next() {
            if m_ssn + m_len <= s.rx_read {
                s.rx_maps.remove(&m_ssn);
            } else {
                break;
            }
        }
        for (x, y) in ranges {
            self.data_arrived(x, y);
        }
        self.advance_fin(i);
    }

    /// Data-level reassembly of `[a, b)`.
    pub(super) fn data_arrived(&mut self, a: u64, b: u64) {
        let a0 = a.max(self.rcv_nxt);
        if b <= a0 {
            self.stats.duplicate_bytes += b - a;
            return;
        }
        self.stats.duplicate_bytes += a0 - a;
        // merge [a0, b) into the out-of-order set, counting overlaps as duplicates
        let (mut lo, mut hi) = (a0, b);
        let overl: Vec<(u64, u64)> = self
            .ooo
            .range(..=hi)
            .filter(|(&s, &e)| e >= lo && s <= hi)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in overl {
            let ov = e.min(b).saturating_sub(s.max(a0));
            self.stats.duplicate_bytes += ov;
            self.ooo.remove(&s);
            self.ooo_bytes -= e - s;
            lo = lo.min(s);
            hi = hi.max(e);
        }
        self.ooo.insert(lo, hi);
        self.ooo_bytes += hi - lo;
        while let Some((&s, &e)) = self.ooo.iter().next() {
            if s <= self.rcv_nxt {
                self.ooo.remove(&s);
                self.ooo_bytes -= e - s;
                self.rcv_nxt = self.rcv_nxt.max(e);
            } else {
                break;
            }
        }
    }

    pub(super) fn advance_fin(&mut self, i: usize) {
        if !self.fin_rcvd && self.peer_fin.is_some_and(|f| f <= self.rcv_nxt) {
            self.fin_rcvd = true;
            self.subflows[i].ep.send_ack_now();
            self.maybe_close_subflows();
        }
    }

    pub(super) fn maybe_close_subflows(&mut self) {
        if self.data_fin_acked && self.fin_rcvd {
            for s in &mut self.subflows {
                if s.state != SubflowState::Failed {
                    s.ep.close();
                }
            }
        }
    }
}
