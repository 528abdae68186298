//! Output of [`MptcpConnection`]: the coupled controls' per-subflow increase and decrease
//! ([`crate::coupled`]), the scheduler handing mappings to subflows, the connection-level window
//! (RFC 8684 §3.3.4), DATA_FIN (§3.3.3) and the MPTCP option each outgoing segment carries.

use super::*;

impl MptcpConnection {
    /// Sets subflow `i`'s coupled increase and decrease from every established subflow.
    pub(super) fn couple(&mut self, i: usize) {
        if !self.cc.is_coupled() {
            return;
        }
        let mut views = Vec::with_capacity(self.subflows.len());
        let mut me = None;
        for (j, s) in self.subflows.iter().enumerate() {
            if !s.usable() {
                continue;
            }
            let x = s.sample();
            if x.srtt == SimDuration::ZERO {
                continue;
            }
            let cwnd = if x.ca_state == CaState::Recovery {
                x.ssthresh_bytes.min(x.cwnd_bytes)
            } else {
                x.cwnd_bytes
            };
            let l = (s.loss_marks[1] - s.loss_marks[0]).max(x.delivered_bytes - s.loss_marks[1]);
            if j == i {
                me = Some(views.len());
            }
            views.push(PathView {
                cwnd: cwnd as f64,
                srtt: x.srtt.as_secs_f64(),
                mss: s.ep.mss() as f64,
                inter_loss_bytes: l as f64,
            });
        }
        let Some(r) = me else { return };
        let c = self.cc.coupling(&views, r);
        if let Some(cc) = self.subflows[i].ep.controller_mut().as_coupled_mut() {
            cc.set_coupling(c);
        }
    }

    /// The right edge of the receive window we advertise (peer's data offsets).
    pub(super) fn adv_edge(&self) -> u64 {
        let used = (self.rcv_nxt - self.app_read) + self.ooo_bytes;
        self.rcv_nxt + self.rcv_space.buf.saturating_sub(used)
    }

    /// Hands data to subflows with window room, as the scheduler chooses.
    pub(super) fn schedule(&mut self) {
        loop {
            let mut cands = Vec::new();
            for (j, s) in self.subflows.iter().enumerate() {
                // A joined subflow once its MP_JOIN third ACK has left (client) or been checked
                // (listener); the initial one once the keys are exchanged.
                let ready = if s.join || s.active {
                    s.third_ack_sent
                } else {
                    self.remote_key.is_some()
                };
                if !s.usable() || s.stale || !ready || s.unsent() > 0 {
                    continue;
                }
                let x = s.sample();
                let room = x.cwnd_bytes.saturating_sub(x.bytes_in_flight);
                if room > 0 {
                    cands.push(Candidate {
                        subflow: j,
                        srtt: x.srtt,
                        room,
                    });
                }
            }
            if cands.is_empty() {
                return;
            }
            if self.sched.kind() == SchedulerKind::Redundant && self.reinject.is_empty() {
                // Every subflow carries all the data: each from the first offset it has not
                // carried yet (not below the DATA_ACK), within the peer's window.
                let end = self.app_written.min(self.peer_edge);
                let mut any = false;
                for c in &cands {
                    let s = &mut self.subflows[c.subflow];
                    let start = s.red_nxt.max(self.data_una);
                    if start >= end {
                        continue;
                    }
                    let mss = s.ep.mss() as u64;
                    let len = (c.room.div_ceil(mss) * mss)
                        .min(MAX_MAPPING / mss * mss)
                        .min(end - start);
                    let n = s.ep.write(len);
                    if n == 0 {
                        continue;
                    }
                    s.tx_maps.push_back(TxMap {
                        ssn_off: s.written,
                        dsn_off: start,
                        len: n,
                        reinjected: false,
                    });
                    s.written += n;
                    s.red_nxt = start + n;
                    s.stats.bytes_scheduled += n;
                    s.stats.bytes_reinjected += self.snd_nxt.min(start + n).saturating_sub(start);
                    self.snd_nxt = self.snd_nxt.max(start + n);
                    any = true;
                }
                if !any {
                    return;
                }
                continue;
            }
            // the next chunk: reinjections first, then new data within the peer's window
            let (start, end, reinj) = if let Some(&(a, b)) = self.reinject.front() {
                (a, b, true)
            } else {
                let end = self.app_written.min(self.peer_edge);
                if self.snd_nxt >= end {
                    return;
                }
                (self.snd_nxt, end, false)
            };
            self.scratch.clear();
            let mut picks = std::mem::take(&mut self.scratch);
            self.sched.pick(&cands, &mut picks);
            if picks.is_empty() {
                self.scratch = picks;
                return;
            }
            let mut taken = 0;
            for (k, &p) in picks.iter().enumerate() {
                let c = cands[p];
                let s = &mut self.subflows[c.subflow];
                let mss = s.ep.mss() as u64;
                let max_map = MAX_MAPPING / mss * mss;
                let want = c.room.div_ceil(mss) * mss;
                let len = want.min(max_map).min(end - start);
                let n = s.ep.write(len);
                if n == 0 {
                    continue;
                }
                s.tx_maps.push_back(TxMap {
                    ssn_off: s.written,
                    dsn_off: start,
                    len: n,
                    reinjected: false,
                });
                s.written += n;
                s.stats.bytes_scheduled += n;
                if reinj || k > 0 {
                    s.stats.bytes_reinjected += n;
                }
                taken = taken.max(n);
            }
            self.scratch = picks;
            if taken == 0 {
                return;
            }
            if reinj {
                let f = &mut self.reinject[0];
                f.0 += taken;
                if f.0 >= f.1 {
                    self.reinject.pop_front();
                }
            } else {
                self.snd_nxt += taken;
            }
        }
    }

    /// The next segment to send, or `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Outgoing> {
        if self.reset {
            return None;
        }
        self.schedule();
        // DATA_FIN due: everything handed out and none waiting for reinjection.
        if self.app_closed
            && !self.data_fin_acked
            && self.snd_nxt == self.app_written
            && self.reinject.is_empty()
        {
            let due = self.data_fin_deadline.is_none_or(|d| now >= d);
            if due {
                // On the fastest subflow that is not stale; with none, when one recovers (a
                // later call), the timer being off meanwhile.
                self.data_fin_deadline = None;
                if let Some(s) = self
                    .subflows
                    .iter_mut()
                    .filter(|s| s.usable() && !s.stale)
                    .min_by_key(|s| s.sample().srtt)
                {
                    s.ep.send_ack_now();
                    let rto = s.sample().rto;
                    self.data_fin_deadline = Some(now + rto.max(SimDuration::from_millis(200)));
                }
            }
        }
        self.queue_signal_ack(now);
        // the subflows' windows are taken from the connection's free space (rcv_space.rs)
        self.sync_rcv_space();
        let n = self.subflows.len();
        for k in 0..n {
            let i = (self.cursor + k) % n;
            if let Some(mut seg) = self.subflows[i].ep.poll_transmit(now) {
                self.cursor = (i + 1) % n;
                let mptcp = self.decorate(now, i, &mut seg);
                let s = &self.subflows[i];
                return Some(Outgoing {
                    subflow: i,
                    local: s.local,
                    remote: s.remote,
                    seg,
                    mptcp,
                });
            }
        }
        None
    }

    /// An ADD_ADDR to send (a new one, or one not echoed within [`ADD_ADDR_TIMEOUT`]), an
    /// echo to return or a REMOVE_ADDR: queues a pure ACK of its own for it on an established
    /// subflow. An option of its own because a pure ACK carrying ADD_ADDR carries no DSS (one
    /// MPTCP option per segment here; Linux drops the other suboptions of a pure ACK for an ADD_ADDR,
    /// `mptcp_pm_add_addr_signal`), and of its own so that it never takes the place of the ACK
    /// that carries a DATA_ACK: Linux sends it with `mptcp_pm_nl_addr_send_ack` even while the
    /// subflow has data to send. Regression: the listener put its ADD_ADDR on every pure ACK
    /// until echoed and the client echoed only when it had nothing else to send, so a client
    /// sending at full tilt got no DATA_ACK at all and stopped for ever at the initial 65,535
    /// bytes of data-level window (study mptcp-lwa).
    pub(super) fn queue_signal_ack(&mut self, now: SimTime) {
        for e in &mut self.add_addr_unechoed {
            if e.1 <= now && e.2 < ADD_ADDR_RETRANS_MAX {
                e.1 = now + ADD_ADDR_TIMEOUT;
                e.2 += 1;
                if !self.add_addr_pending.contains(&e.0) {
                    self.add_addr_pending.push(e.0);
                }
            }
        }
        let due = !self.add_addr_echo.is_empty()
            || ((!self.add_addr_pending.is_empty() || !self.rm_addr_pending.is_empty())
                && self.remote_key.is_some());
        if !due || self.subflows.iter().any(|s| s.signal_ack && s.usable()) {
            return;
        }
        if let Some(s) = self
            .subflows
            .iter_mut()
            .find(|s| s.usable() && (s.third_ack_sent || !s.active) && !s.stale)
        {
            if s.ep.queue_pure_ack(now) {
                s.signal_ack = true;
            }
        }
    }

    /// The MPTCP option for a subflow's segment; puts the connection-level window on it.
    pub(super) fn decorate(&mut self, now: SimTime, i: usize, seg: &mut TcpSegment) -> MptcpOption {
        let syn = seg.flags.syn();
        let ack = seg.flags.ack();
        let lk = self.local_key;
        let rk = self.remote_key;
        let s = &mut self.subflows[i];
        let opt = if syn && !ack {
            if s.join {
                MptcpOpt::JoinSyn {
                    backup: false,
                    addr_id: s.local_id,
                    token: crypto::token(rk.unwrap_or(0)),
                    nonce: s.nonce_local,
                }
            } else {
                MptcpOpt::Capable {
                    flags: FLAG_HMAC_SHA256,
                    keys: CapableKeys::None,
                    data_len: None,
                    checksum: None,
                }
            }
        } else if syn {
            if s.join {
                let h = crypto::join_hmac(lk, rk.unwrap_or(0), s.nonce_local, s.nonce_remote);
                MptcpOpt::JoinSynAck {
                    backup: false,
                    addr_id: s.local_id,
                    hmac: u64::from_be_bytes(h[..8].try_into().unwrap()),
                    nonce: s.nonce_local,
                }
            } else {
                MptcpOpt::Capable {
                    flags: FLAG_HMAC_SHA256,
                    keys: CapableKeys::One(lk),
                    data_len: None,
                    checksum: None,
                }
            }
        } else if s.active && !s.third_ack_sent {
            s.third_ack_sent = true;
            s.state = SubflowState::Established;
            if s.join {
                let h = crypto::join_hmac(lk, rk.unwrap_or(0), s.nonce_local, s.nonce_remote);
                MptcpOpt::JoinAck {
                    hmac: h[..20].try_into().unwrap(),
                }
            } else {
                MptcpOpt::Capable {
                    flags: FLAG_HMAC_SHA256,
                    keys: CapableKeys::Two {
                        sender: lk,
                        receiver: rk.unwrap_or(0),
                    },
                    data_len: None,
                    checksum: None,
                }
            }
        } else if seg.payload_len == 0 && s.signal_ack && !self.add_addr_echo.is_empty() {
            s.signal_ack = false;
            let (id, addr) = self.add_addr_echo.remove(0);
            MptcpOpt::AddAddr {
                echo: true,
                addr_id: id,
                addr,
                port: None,
                hmac: None,
            }
        } else if seg.payload_len == 0
            && s.signal_ack
            && !self.add_addr_pending.is_empty()
            && rk.is_some()
        {
            s.signal_ack = false;
            let id = self.add_addr_pending.remove(0);
            if !self.add_addr_unechoed.iter().any(|e| e.0 == id) {
                self.add_addr_unechoed.push((id, now + ADD_ADDR_TIMEOUT, 0));
            }
            let addr = self
                .local_addrs
                .iter()
                .find(|a| a.id == id)
                .map(|a| a.addr)
                .unwrap_or_default();
            let h = crypto::add_addr_hmac(lk, rk.unwrap_or(0), id, addr.octets(), 0);
            MptcpOpt::AddAddr {
                echo: false,
                addr_id: id,
                addr,
                port: None,
                hmac: Some(h),
            }
        } else if seg.payload_len == 0
            && s.signal_ack
            && !self.rm_addr_pending.is_empty()
            && rk.is_some()
        {
            // §3.4.2: REMOVE_ADDR with the ids of the local addresses gone, once
            s.signal_ack = false;
            let n = self.rm_addr_pending.len().min(8);
            let mut ids = [0u8; 8];
            ids[..n].copy_from_slice(&self.rm_addr_pending[..n]);
            self.rm_addr_pending.drain(..n);
            MptcpOpt::RemoveAddr { ids, n: n as u8 }
        } else {
            let data_ack = rk.map(|k| {
                crypto::idsn(k)
                    .wrapping_add(1)
                    .wrapping_add(self.rcv_nxt + self.fin_rcvd as u64)
            });
            let base = crypto::idsn(lk).wrapping_add(1);
            let mut d = Dss {
                data_ack,
                ack64: true,
                mapping: None,
                data_fin: false,
            };
            let first_map = |m: &TxMap| m.ssn_off == 0 && m.dsn_off == 0;
            let off = s.tx_off(seg.seq);
            let cur = s
                .tx_maps
                .iter()
                .find(|m| off >= m.ssn_off && off < m.ssn_off + m.len)
                .copied();
            if seg.payload_len > 0 && s.active && !s.join && cur.is_some_and(|m| first_map(&m)) {
                // §3.1 (v1): the first data carries MP_CAPABLE with both keys and the length of
                // the implied first mapping, so the listener learns our key even if the third
                // ACK was lost.
                let m = cur.unwrap();
                let keys = CapableKeys::Two {
                    sender: lk,
                    receiver: rk.unwrap_or(0),
                };
                MptcpOpt::Capable {
                    flags: FLAG_HMAC_SHA256,
                    keys,
                    data_len: Some(m.len as u16),
                    checksum: None,
                }
            } else {
                if seg.payload_len > 0 {
                    if let Some(m) = cur {
                        d.mapping = Some(Mapping {
                            dsn: base.wrapping_add(m.dsn_off),
                            dsn64: true,
                            ssn: (m.ssn_off + 1) as u32,
                            len: m.len as u16,
                            checksum: None,
                        });
                    }
                } else if self.app_closed
                    && !self.data_fin_acked
                    && self.snd_nxt == self.app_written
                    && self.reinject.is_empty()
                {
                    d.data_fin = true;
                    d.mapping = Some(Mapping {
                        dsn: base.wrapping_add(self.app_written),
                        dsn64: true,
                        ssn: 0,
                        len: 1,
                        checksum: None,
                    });
                }
                MptcpOpt::Dss(d)
            }
        };
        if !syn {
            // §3.3.4: the connection-level window (Linux `mptcp_set_rwin`, rcv_space.rs).
            self.set_rwin(i, seg);
        }
        opt.encode()
    }
}
