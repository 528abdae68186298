//! The glue between the node stack's sockets ([`crate::stack`]) and the apps
//! ([`celltcp_apps::app`]): local delivery of TCP, UDP and ICMP to sockets, TCP output, and the
//! calls into apps with what follows them (datagrams sent, sockets serviced, timers armed).
//!
//! # Order of work after an app callback
//!
//! 1. the datagrams it sent leave, in order;
//! 2. its timer is armed (a deadline not after `now` is ignored: such an app waits for a socket
//!    event);
//! 3. the sockets it used are flushed (TCP output, RTT samples, the socket's timer), in the
//!    order it first used them, then the connections it opened are serviced. A socket it only
//!    read (`SocketApi::tcp_peek`) that nothing changed since its last flush and whose timer is
//!    not due is skipped: its flush would do nothing. It keeps its place in the order all the
//!    same, so an app that reads many sockets and changes a few (the proxy's buffer survey)
//!    gets the flushes, and the packets, of one that had changed them all.
//!
//! Servicing a socket is: the app's `on_socket`, then a flush; a flush that frees send buffer
//! gives the app one more `Writable` (a window update lets a blocked writer write at once).

use celltcp_apps::app::{AnyApp, App, SockAddr, SockId, SocketEvent};
use celltcp_engine::SimTime;
use celltcp_net::{Body, IcmpEcho, Ipv4, MptcpOption, Packet, TcpSegment};
use celltcp_mptcp::options::MptcpOpt;
use celltcp_mptcp::MptcpConnection;
use celltcp_tcp::TcpEndpoint;

use crate::stack::{msa, NodeApi, SockKind, NO_FLOW, TCP, UDP};
use crate::world::{Ev, World};

/// An app in the arena, on its node.
pub(crate) struct AppSlot {
    pub app: AnyApp,
    pub node: u32,
    /// The flow whose metrics its sockets feed (`NO_FLOW`: none).
    pub flow: u32,
    pub timer_at: Option<SimTime>,
    /// Its sockets' source address (a flow's `bind`), if it binds one.
    pub bind: Option<celltcp_net::Ipv4>,
}

impl World {
    #[inline]
    pub(crate) fn ep(&self, s: u32) -> &TcpEndpoint {
        self.stack.socks[s as usize].ep_ref().expect("a TCP socket")
    }

    /// Runs `call` on app `a` with its node's socket API, then what follows (module doc).
    pub(crate) fn app_call(&mut self, now: SimTime, a: u32, call: impl FnOnce(&mut AnyApp, &mut NodeApi)) {
        let slot = &mut self.apps[a as usize];
        let (node, flow) = (slot.node, slot.flow);
        let mut api = NodeApi { stack: &mut self.stack, node, addr: self.nodes[node as usize].addr, app: a, flow, bind: slot.bind, routes: &self.routes, ifaces: &self.ifaces };
        call(&mut slot.app, &mut api);
        self.after_app(now, a);
    }

    fn after_app(&mut self, now: SimTime, a: u32) {
        if !self.stack.pending.tx.is_empty() {
            let mut tx = std::mem::take(&mut self.stack.pending.tx);
            for (node, src, dst, body, flow) in tx.drain(..) {
                if flow != NO_FLOW && matches!(body, Body::Udp(_)) {
                    self.flows[flow as usize].net.data_pkts_sent += 1;
                }
                let p = self.alloc_packet_from(now, node as usize, src, dst, body);
                self.ip_output(now, node as usize, p);
            }
            if self.stack.pending.tx.is_empty() {
                self.stack.pending.tx = tx;
            }
        }
        self.arm_app(now, a);
        // (the lists are taken and given back, so their buffers are reused: no allocation)
        if !self.stack.pending.touched.is_empty() {
            let mut touched = std::mem::take(&mut self.stack.pending.touched);
            for &s in &touched {
                self.stack.socks[s as usize].touched = false;
            }
            for &s in &touched {
                let k = &self.stack.socks[s as usize];
                if k.dirty || k.timer_at.is_some_and(|t| t <= now) {
                    self.flush_sock(now, s);
                }
            }
            if self.stack.pending.touched.is_empty() {
                touched.clear();
                self.stack.pending.touched = touched;
            }
        }
        if !self.stack.pending.created.is_empty() {
            let mut created = std::mem::take(&mut self.stack.pending.created);
            for &s in &created {
                self.register_sock(s, false);
                self.service_sock(now, s, SocketEvent::Writable);
            }
            if self.stack.pending.created.is_empty() {
                created.clear();
                self.stack.pending.created = created;
            }
        }
    }

    #[inline]
    fn arm_app(&mut self, now: SimTime, a: u32) {
        let slot = &mut self.apps[a as usize];
        if let Some(t) = slot.app.next_deadline().filter(|&t| t > now) {
            if slot.timer_at.is_none_or(|s| t < s) {
                slot.timer_at = Some(t);
                self.q.push(t, Ev::AppTimer(a));
            }
        }
    }

    /// App `a`'s timer event.
    pub(crate) fn app_timer(&mut self, now: SimTime, a: u32) {
        let slot = &mut self.apps[a as usize];
        if slot.timer_at == Some(now) {
            slot.timer_at = None;
        }
        if slot.app.next_deadline().is_some_and(|t| t <= now) {
            self.app_call(now, a, |app, api| app.on_timer(now, api));
        } else {
            self.arm_app(now, a);
        }
    }

    /// App `a` starts.
    pub(crate) fn app_start(&mut self, now: SimTime, a: u32) {
        self.app_call(now, a, |app, api| app.start(now, api));
    }

    /// Records a new TCP socket of a flow as its client or server (the first of each), and
    /// marks the flow's sender for the segment trace.
    fn register_sock(&mut self, s: u32, accepted: bool) {
        let sock = &self.stack.socks[s as usize];
        let (SockKind::Tcp(_) | SockKind::Mptcp(_)) = sock.kind else { return };
        let (f, iss) = (sock.flow, sock.iss);
        if f == NO_FLOW {
            return;
        }
        let fl = &mut self.flows[f as usize];
        let slot = if accepted { &mut fl.server } else { &mut fl.client };
        if slot.is_some() {
            return;
        }
        *slot = Some(s);
        // the client sends unless reversed (`iperf3 -R`)
        if accepted == fl.reverse {
            if let Some(tr) = fl.seg_trace.as_mut() {
                tr.isn = iss;
                self.stack.socks[s as usize].traced = true;
            }
        }
    }

    /// Socket `s` changed (`ev`): its app looks at it, then the socket is flushed.
    ///
    /// Fast path: when nothing is pending, the app is called and, if it touched at most this
    /// socket and sent nothing else, the socket is flushed directly: the same work in the same
    /// order as [`World::after_app`] (its timer, then this socket's flush), without the lists.
    #[inline]
    pub(crate) fn service_sock(&mut self, now: SimTime, s: u32, ev: SocketEvent) {
        let k = &mut self.stack.socks[s as usize];
        k.dirty = true;
        let a = k.app;
        let p = &self.stack.pending;
        if k.touched || !p.touched.is_empty() || !p.tx.is_empty() || !p.created.is_empty() {
            // flushed after the app even if the app does not touch it (ACKs to send)
            if !k.touched {
                k.touched = true;
                self.stack.pending.touched.push(s);
            }
            self.app_call(now, a, |app, api| app.on_socket(now, SockId(s), ev, api));
            return;
        }
        let slot = &mut self.apps[a as usize];
        let (node, flow) = (slot.node, slot.flow);
        let mut api = NodeApi { stack: &mut self.stack, node, addr: self.nodes[node as usize].addr, app: a, flow, bind: slot.bind, routes: &self.routes, ifaces: &self.ifaces };
        slot.app.on_socket(now, SockId(s), ev, &mut api);
        let p = &mut self.stack.pending;
        let only_s = p.touched.is_empty() || (p.touched.len() == 1 && p.touched[0] == s);
        if only_s && p.tx.is_empty() && p.created.is_empty() {
            p.touched.clear();
            self.stack.socks[s as usize].touched = false;
            self.arm_app(now, a);
            self.flush_sock(now, s);
        } else {
            // as the general path would have it: `s` first in the touched list
            let touched = &mut self.stack.pending.touched;
            if let Some(i) = touched.iter().position(|&x| x == s) {
                touched.remove(i);
            }
            touched.insert(0, s);
            self.stack.socks[s as usize].touched = true;
            self.after_app(now, a);
        }
    }

    /// Sends what TCP socket `s` may send, gives its app a `Writable` when that freed send
    /// buffer, records RTT samples and re-arms the socket's timer.
    fn flush_sock(&mut self, now: SimTime, s: u32) {
        self.stack.socks[s as usize].dirty = false;
        self.stack.flushes += 1;
        let SockKind::Tcp(ep) = &self.stack.socks[s as usize].kind else {
            if let SockKind::Mptcp(_) = self.stack.socks[s as usize].kind {
                self.mptcp_flush(now, s);
            }
            return;
        };
        // sending moves bytes from unsent 64 KB skbs to sent ones of the TSO quantum, which
        // charges the buffer more: only space freed (a grown buffer) wakes the writer here
        let before = ep.send_buffer_free();
        self.transmit_sock(now, s);
        if self.stack.socks[s as usize].ep().send_buffer_free() > before {
            self.service_sock(now, s, SocketEvent::Writable);
            return;
        }
        let k = &mut self.stack.socks[s as usize];
        let f = k.flow;
        if self.record_rtt && f != NO_FLOW {
            let mut v = std::mem::take(&mut self.rtt_scratch);
            k.ep().drain_rtt_samples(&mut v);
            let t = now.as_secs_f64() as f32;
            for r in v.drain(..) {
                self.record_rtt_sample(f as usize, t, r.as_millis_f64() as f32);
            }
            self.rtt_scratch = v;
        }
        let k = &mut self.stack.socks[s as usize];
        if let Some(t) = k.ep().next_deadline() {
            let t = t.max(now);
            if k.timer_at.is_none_or(|old| t < old) {
                k.timer_at = Some(t);
                self.q.push(t, Ev::SockTimer(s));
            }
        }
    }

    /// Socket `s`'s timer event.
    pub(crate) fn sock_timer(&mut self, now: SimTime, s: u32) {
        let k = &mut self.stack.socks[s as usize];
        if k.timer_at == Some(now) {
            k.timer_at = None;
        }
        let SockKind::Tcp(ep) = &mut k.kind else {
            if let SockKind::Mptcp(m) = &mut k.kind {
                let was = m.is_established();
                m.on_timeout(now);
                let ev = classify_mptcp(was, m);
                self.service_sock(now, s, ev);
            }
            return;
        };
        let was = ep.is_established();
        ep.on_timeout(now);
        let ev = classify(was, ep);
        self.service_sock(now, s, ev);
    }

    /// Sends every segment socket `s` may send now.
    fn transmit_sock(&mut self, now: SimTime, s: u32) {
        let k = &self.stack.socks[s as usize];
        let (node, local, remote, f, traced) = (k.node as usize, k.local.addr, k.remote.addr, k.flow, k.traced);
        while let Some(seg) = self.stack.socks[s as usize].ep().poll_transmit(now) {
            if seg.payload_len > 0 && f != NO_FLOW {
                self.flows[f as usize].net.data_pkts_sent += 1;
            }
            if traced {
                self.trace_sent(now, s, f, &seg);
            }
            let mut p = self.alloc_packet_from(now, node, local, remote, Body::Tcp(seg));
            if seg.ect {
                p.ecn = celltcp_net::Ecn::Ect0; // RFC 3168 §6.1.2: ECN-capable transport
            }
            if f == NO_FLOW && self.tproxy.is_some() {
                self.tproxy_sent(&mut p, s);
            }
            self.ip_output(now, node, p);
        }
    }

    /// Records a segment of a traced sender (out of line: the untraced path stays small).
    #[inline(never)]
    fn trace_sent(&mut self, now: SimTime, s: u32, f: u32, seg: &TcpSegment) {
        let rtx_total = self.ep(s).stats().retransmitted_segments;
        let row = self.flows[f as usize].seg_trace.as_mut().and_then(|tr| tr.on_sent(now, seg, rtx_total));
        if let (Some((seq, len, rtx)), Some(t)) = (row, self.sinks.segments.as_mut()) {
            t.f64(now.as_secs_f64()).i64(f as i64).i64(seq).i64(len).i64(rtx).end_row();
        }
    }

    /// Records a segment a traced sender received.
    #[inline(never)]
    fn trace_ack(&mut self, now: SimTime, s: u32, seg: &TcpSegment) {
        let f = self.stack.socks[s as usize].flow;
        let row = self.flows[f as usize].seg_trace.as_mut().and_then(|tr| tr.on_ack(now, seg));
        if let (Some((ack, sack)), Some(t)) = (row, self.sinks.acks.as_mut()) {
            t.f64(now.as_secs_f64()).i64(f as i64).i64(ack).i64(sack).end_row();
        }
    }

    /// The flow a data packet belongs to: that of the socket that sent it (by its 4-tuple).
    pub(crate) fn flow_of(&self, pkt: &Packet) -> Option<usize> {
        let (proto, sp, dp) = match &pkt.body {
            Body::Tcp(s) => (TCP, s.src_port, s.dst_port),
            Body::Udp(u) => (UDP, u.src_port, u.dst_port),
            Body::Icmp(_) | Body::Raw(_) => return None,
        };
        let s = self.stack.lookup(proto, SockAddr::new(pkt.src, sp), SockAddr::new(pkt.dst, dp))?;
        let f = self.stack.socks[s as usize].flow;
        (f != NO_FLOW).then_some(f as usize)
    }

    /// A packet for this node: to its socket (TCP, UDP) or its ICMP.
    pub(crate) fn local_deliver(&mut self, now: SimTime, node: usize, pkt: Packet) {
        match pkt.body {
            // A real packet (emulation) for a simulated host: no socket of celltcp's takes it,
            // but its IP layer answers a real ping (RFC 792) with real bytes.
            Body::Raw(r) => {
                if r.proto == 1 && pkt.frag.is_none() {
                    self.raw_echo_reply(now, node, r.key);
                } else {
                    self.raw.release(r.key);
                }
            }
            Body::Tcp(seg) => self.tcp_input(now, node, &pkt, seg),
            Body::Udp(u) => {
                let Some(s) = self.udp_bound(node, pkt.dst, u.dst_port) else { return };
                let k = &self.stack.socks[s as usize];
                let (a, f) = (k.app, k.flow);
                if f != NO_FLOW {
                    self.flows[f as usize].net.on_data_arrival(now, pkt.created);
                }
                let ev = SocketEvent::Datagram { from: SockAddr::new(pkt.src, u.src_port), datagram: u };
                self.app_call(now, a, |app, api| app.on_socket(now, SockId(s), ev, api));
            }
            Body::Icmp(icmp) => {
                if !icmp.reply {
                    // the host's IP layer answers an echo request (RFC 792)
                    let reply = IcmpEcho { reply: true, ..icmp };
                    // from the address the request was sent to
                    let p = self.alloc_packet_from(now, node, pkt.dst, pkt.src, Body::Icmp(reply));
                    self.ip_output(now, node, p);
                } else if let Some(&s) = self.stack.echo.get(&(pkt.dst, icmp.ident)) {
                    let k = &self.stack.socks[s as usize];
                    let (a, f) = (k.app, k.flow);
                    if f != NO_FLOW {
                        let ms = (now - icmp.sent_at).as_millis_f64() as f32;
                        self.record_rtt_sample(f as usize, now.as_secs_f64() as f32, ms);
                    }
                    self.app_call(now, a, |app, api| app.on_socket(now, SockId(s), SocketEvent::EchoReply(icmp), api));
                }
            }
        }
    }

    /// Answers the real ICMP echo request stored under `key` from `node` (emulation: `ping` of
    /// a simulated host from a namespace): the reply (`raw::echo_reply`) enters the store and
    /// leaves by the node's routes like any packet of it.
    fn raw_echo_reply(&mut self, now: SimTime, node: usize, key: u64) {
        let ident = self.next_ident(node);
        let Some(req) = self.raw.get(key) else { return };
        let mut b = Vec::with_capacity(req.len());
        let ok = celltcp_net::raw::echo_reply(req, ident, &mut b);
        self.raw.release(key);
        if !ok {
            return;
        }
        let Ok(mut p) = celltcp_net::raw::parse_ipv4(&b, self.raw.next_key(), now) else { return };
        self.raw.put(&b);
        p.uid = self.fresh_uid();
        self.ip_output(now, node, p);
    }

    /// A TCP segment for this node: to its connection by 4-tuple, or to a listener (a SYN).
    fn tcp_input(&mut self, now: SimTime, node: usize, pkt: &Packet, seg: TcpSegment) {
        let local = SockAddr::new(pkt.dst, seg.dst_port);
        let remote = SockAddr::new(pkt.src, seg.src_port);
        let Some(s) = self.stack.lookup(TCP, local, remote) else {
            // a listener on this address, else (a multihomed node's other address) on its first
            let l = match self.stack.listeners.get(&(local.addr, local.port)) {
                Some(&l) => l,
                None if local.addr != self.nodes[node].addr => match self.stack.listeners.get(&(self.nodes[node].addr, local.port)) {
                    Some(&l) => l,
                    None => return,
                },
                None => return,
            };
            if !seg.flags.syn() || seg.flags.ack() {
                return;
            }
            if pkt.mptcp_len > 0 {
                self.mptcp_syn(now, node, l, pkt, &seg);
                return;
            }
            let s = self.stack.accept(now, l, local.addr, remote, &seg);
            self.register_sock(s, true);
            self.service_sock(now, s, SocketEvent::Accepted { listener: SockId(l) });
            return;
        };
        let f = self.stack.socks[s as usize].flow;
        if seg.payload_len > 0 && f != NO_FLOW {
            self.flows[f as usize].net.on_data_arrival(now, pkt.created);
        }
        if self.stack.socks[s as usize].traced {
            self.trace_ack(now, s, &seg);
        }
        let ce = pkt.ecn == celltcp_net::Ecn::Ce;
        let SockKind::Tcp(ep) = &mut self.stack.socks[s as usize].kind else {
            let opt = self.mptcp_opts.take(pkt);
            self.mptcp_segment(now, s, local, remote, &seg, &opt, ce);
            return;
        };
        let was = ep.is_established();
        ep.on_segment(now, &seg, ce);
        let ev = classify(was, ep);
        self.service_sock(now, s, ev);
    }
}

impl World {
    /// A SYN with an MPTCP option for listener `l`: MP_JOIN goes to the connection of its
    /// token (RFC 8684 §3.2; an unknown token is ignored, as a closed port); MP_CAPABLE opens an
    /// MPTCP connection when the listener's flow is MPTCP, else plain TCP (the option ignored,
    /// as a host without MPTCP does).
    #[inline(never)]
    fn mptcp_syn(&mut self, now: SimTime, node: usize, l: u32, pkt: &Packet, seg: &TcpSegment) {
        let local = SockAddr::new(pkt.dst, seg.dst_port);
        let remote = SockAddr::new(pkt.src, seg.src_port);
        let opt = self.mptcp_opts.take(pkt);
        if let Some(Ok(MptcpOpt::JoinSyn { token, .. })) = MptcpOpt::from_segment(&opt) {
            if let Some(&s) = self.stack.tokens.get(&token) {
                let f = self.stack.socks[s as usize].flow;
                if f != NO_FLOW && seg.payload_len > 0 {
                    self.flows[f as usize].net.on_data_arrival(now, pkt.created);
                }
                self.mptcp_segment(now, s, local, remote, seg, &opt, pkt.ecn == celltcp_net::Ecn::Ce);
            }
            return;
        }
        // the node's other addresses, for ADD_ADDR
        let others: Vec<celltcp_net::Ipv4> = self.ifaces.of(node).iter().map(|i| i.addr).collect();
        let s = match self.stack.accept_mptcp(now, l, local.addr, remote, seg, &opt, &others) {
            Some(s) => s,
            None => self.stack.accept(now, l, local.addr, remote, seg),
        };
        self.register_sock(s, true);
        self.service_sock(now, s, SocketEvent::Accepted { listener: SockId(l) });
    }

    /// A segment for MPTCP socket `s` on the subflow (`local`, `remote`).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn mptcp_segment(&mut self, now: SimTime, s: u32, local: SockAddr, remote: SockAddr, seg: &TcpSegment, opt: &MptcpOption, ce: bool) {
        let SockKind::Mptcp(m) = &mut self.stack.socks[s as usize].kind else { return };
        let n = m.subflow_count();
        let was = m.is_established();
        // `false`: a join refused (wrong token or HMAC) or a stray segment; nothing to answer
        // (no RST is sent for a closed port either)
        let _ = m.on_segment(now, msa(local), msa(remote), seg, opt, ce);
        let ev = classify_mptcp(was, m);
        if m.subflow_count() > n {
            self.stack.register_subflows(s, n);
        }
        self.service_sock(now, s, ev);
    }

    /// Interface `addr` of multihomed `node` went down (`up` false) or came back: each MPTCP
    /// connection of the node removes the address (its subflows fail, their data is
    /// reinjected, REMOVE_ADDR goes to the peer) or adds it back under a new id (a client's
    /// path manager joins subflows from it; a listener announces it), as Linux's in-kernel
    /// path manager does when NetworkManager deletes or adds the interface's endpoint
    /// (`mptcp_pm_nl_del_addr_doit`, `mptcp_pm_nl_add_addr_doit`).
    pub(crate) fn mptcp_iface(&mut self, now: SimTime, node: usize, addr: Ipv4, up: bool) {
        for s in 0..self.stack.socks.len() as u32 {
            let k = &mut self.stack.socks[s as usize];
            if k.node as usize != node {
                continue;
            }
            let SockKind::Mptcp(m) = &mut k.kind else { continue };
            let was = m.is_established();
            if up {
                if m.add_local_addr(addr).is_none() {
                    continue;
                }
            } else {
                let Some(id) = m.local_id_of(addr) else { continue };
                m.remove_local_addr(id);
            }
            let ev = classify_mptcp(was, m);
            self.service_sock(now, s, ev);
        }
    }

    /// [`World::flush_sock`] for an MPTCP socket: opens the subflows its path manager wants,
    /// sends every segment of every subflow, gives the app a `Writable` when send buffer was
    /// freed, and re-arms the socket's timer.
    #[inline(never)]
    fn mptcp_flush(&mut self, now: SimTime, s: u32) {
        self.stack.open_wanted_subflows(now, s);
        let k = &self.stack.socks[s as usize];
        let (node, f) = (k.node as usize, k.flow);
        let SockKind::Mptcp(m) = &k.kind else { return };
        let before = m.send_buffer_free();
        loop {
            let SockKind::Mptcp(m) = &mut self.stack.socks[s as usize].kind else { return };
            let Some(o) = m.poll_transmit(now) else { break };
            if o.seg.payload_len > 0 && f != NO_FLOW {
                self.flows[f as usize].net.data_pkts_sent += 1;
            }
            // from the subflow's own address: the source rules of a multihomed node send it by
            // that address's interface (RFC 8684 §3.2)
            let mut p = self.alloc_packet_from(now, node, o.local.ip, o.remote.ip, Body::Tcp(o.seg));
            self.mptcp_opts.attach(&mut p, o.mptcp);
            if o.seg.ect {
                p.ecn = celltcp_net::Ecn::Ect0;
            }
            self.ip_output(now, node, p);
        }
        let k = &mut self.stack.socks[s as usize];
        let SockKind::Mptcp(m) = &k.kind else { return };
        if m.send_buffer_free() != before {
            self.service_sock(now, s, SocketEvent::Writable);
            return;
        }
        if let Some(t) = m.next_deadline() {
            let t = t.max(now);
            if k.timer_at.is_none_or(|old| t < old) {
                k.timer_at = Some(t);
                self.q.push(t, Ev::SockTimer(s));
            }
        }
    }

    /// The UDP socket bound to `port` on `addr`, else (a multihomed node's other address) on
    /// the node's first address.
    #[inline]
    fn udp_bound(&self, node: usize, addr: celltcp_net::Ipv4, port: u16) -> Option<u32> {
        match self.stack.udp_bound.get(&(addr, port)) {
            Some(&s) => Some(s),
            None if addr != self.nodes[node].addr => self.stack.udp_bound.get(&(self.nodes[node].addr, port)).copied(),
            None => None,
        }
    }
}

/// [`classify`] for an MPTCP connection.
fn classify_mptcp(was_established: bool, m: &MptcpConnection) -> SocketEvent {
    if m.is_closed() {
        SocketEvent::Closed
    } else if !was_established && m.is_established() {
        SocketEvent::Connected
    } else if m.readable() > 0 || m.peer_closed() {
        SocketEvent::Readable
    } else {
        SocketEvent::Writable
    }
}

/// What changed on a connection, for its app (the first that applies).
#[inline]
pub(crate) fn classify(was_established: bool, ep: &TcpEndpoint) -> SocketEvent {
    if ep.is_closed() {
        SocketEvent::Closed
    } else if !was_established && ep.is_established() {
        SocketEvent::Connected
    } else if ep.readable() > 0 || ep.peer_closed() {
        SocketEvent::Readable
    } else {
        SocketEvent::Writable
    }
}
