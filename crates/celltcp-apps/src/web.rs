//! A browser-like HTTP/1.1 client (RFC 9112 §9: persistent connections and pipelining) that
//! downloads pages of the [`PageModel`] from an [`crate::http::HttpServer`] and measures each
//! page's download time.
//!
//! A page: the main object is requested from the site's host; once it has arrived the browser
//! knows (by parsing it) the number of embedded objects and requests them from the
//! static-content host over up to `connections` persistent connections (HTTP/1.1 browsers open 6
//! per host), sending up to `pipelining` requests on a connection before the first response
//! (RFC 9112 §9.3.2; 1 = no pipelining). An embedded object goes to an idle connection, else to
//! a new connection while fewer than `connections` are open, else is pipelined behind the least
//! loaded connection with fewer than `pipelining` requests outstanding. After the last embedded
//! object, the user reads for a reading time, then clicks to the next page. Connections stay open
//! for the whole session.
//!
//! Page download time = from the click (for the first page: the start, including the DNS lookup
//! of `dns_delay`, done once; later pages hit the browser's DNS cache) to the last byte of the
//! page's last object.

use std::collections::VecDeque;

use celltcp_engine::{component_rng, SimDuration, SimRng, SimTime};
use celltcp_net::Ipv4;
use celltcp_tcp::TcpConfig;

use crate::app::{App, SockAddr, SockId, SocketApi, SocketError, SocketEvent};
use crate::http::{exponential, request_bytes, response_bytes, ObjectClass, PageModel};

/// The time a user reads a page before the next click.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReadingTime {
    Fixed(SimDuration),
    /// Exponential of this mean (the NGMN model's 30 s).
    Exponential(SimDuration),
}

/// Everything a [`WebClient`] needs.
#[derive(Clone, Copy, Debug)]
pub struct WebConfig {
    pub server: Ipv4,
    /// The site's host (main objects) and the static-content host (embedded objects).
    pub www_port: u16,
    pub static_port: u16,
    /// Persistent connections per host (at least 1).
    pub connections: u32,
    /// Requests outstanding per connection (1 = no pipelining).
    pub pipelining: u32,
    pub dns_delay: SimDuration,
    /// Pages to download (None: until the end of the run).
    pub pages: Option<u32>,
    pub reading_time: ReadingTime,
    pub model: PageModel,
    /// Shared with the server: object sizes are keyed by it.
    pub seed: u64,
    pub cfg: TcpConfig,
}

/// One page downloaded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageRecord {
    /// The click.
    pub start: SimTime,
    pub time: SimDuration,
    /// Objects (main + embedded) and response bytes (headers included).
    pub objects: u32,
    pub bytes: u64,
}

#[derive(Clone, Debug)]
struct Conn {
    sock: SockId,
    class: ObjectClass,
    local_port: u16,
    /// Expected response lengths, in request order.
    outstanding: VecDeque<u64>,
    /// Bytes received of the front response.
    got: u64,
    requests: u64,
    /// Request bytes not yet accepted by the socket.
    unsent: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Waiting for the click (DNS lookup or reading) at this time.
    Click(SimTime),
    Main,
    Embedded { to_request: u32, to_finish: u32 },
    Done,
}

/// The browser (see the module doc).
#[derive(Clone, Debug)]
pub struct WebClient {
    pub cfg: WebConfig,
    conns: Vec<Conn>,
    phase: Phase,
    rng: SimRng,
    page_start: SimTime,
    page_objects: u32,
    page_bytes: u64,
    /// The pages downloaded, in order.
    pub pages: Vec<PageRecord>,
    pub error: Option<SocketError>,
}

impl WebClient {
    pub fn new(cfg: WebConfig) -> Self {
        WebClient {
            cfg,
            conns: Vec::new(),
            phase: Phase::Click(SimTime::ZERO),
            rng: component_rng(cfg.seed, 0x7765_6263_6c69_656e),
            page_start: SimTime::ZERO,
            page_objects: 0,
            page_bytes: 0,
            pages: Vec::new(),
            error: None,
        }
    }

    /// Connections opened so far (both hosts).
    pub fn connections_opened(&self) -> usize {
        self.conns.len()
    }

    fn open<S: SocketApi>(&mut self, now: SimTime, net: &mut S, class: ObjectClass) -> Option<usize> {
        let port = if class == ObjectClass::Main { self.cfg.www_port } else { self.cfg.static_port };
        match net.connect(now, SockAddr::new(self.cfg.server, port), &self.cfg.cfg) {
            Ok(s) => {
                let local_port = net.tcp(s).local_port();
                self.conns.push(Conn { sock: s, class, local_port, outstanding: VecDeque::new(), got: 0, requests: 0, unsent: 0 });
                Some(self.conns.len() - 1)
            }
            Err(e) => {
                self.error = Some(e);
                self.phase = Phase::Done;
                None
            }
        }
    }

    fn request<S: SocketApi>(&mut self, net: &mut S, c: usize) {
        let conn = &mut self.conns[c];
        let body = self.cfg.model.object_size(self.cfg.seed, conn.class, conn.local_port, conn.requests);
        conn.outstanding.push_back(response_bytes(body));
        conn.requests += 1;
        conn.unsent += request_bytes();
        let n = net.tcp(conn.sock).write(conn.unsent);
        conn.unsent -= n;
    }

    fn click<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.page_start = now;
        self.page_objects = 0;
        self.page_bytes = 0;
        self.phase = Phase::Main;
        let c = match self.conns.iter().position(|c| c.class == ObjectClass::Main) {
            Some(c) => c,
            None => match self.open(now, net, ObjectClass::Main) {
                Some(c) => c,
                None => return,
            },
        };
        self.request(net, c);
    }

    /// Requests embedded objects while the connection policy (module doc) allows.
    fn dispatch<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        while let Phase::Embedded { to_request, to_finish } = self.phase {
            if to_request == 0 {
                break;
            }
            let statics = || self.conns.iter().enumerate().filter(|(_, c)| c.class == ObjectClass::Embedded);
            let idle = statics().find(|(_, c)| c.outstanding.is_empty()).map(|(i, _)| i);
            let count = statics().count() as u32;
            let c = if let Some(i) = idle {
                i
            } else if count < self.cfg.connections.max(1) {
                match self.open(now, net, ObjectClass::Embedded) {
                    Some(i) => i,
                    None => return,
                }
            } else {
                let depth = self.cfg.pipelining.max(1) as usize;
                match statics().filter(|(_, c)| c.outstanding.len() < depth).min_by_key(|(i, c)| (c.outstanding.len(), *i)) {
                    Some((i, _)) => i,
                    None => break,
                }
            };
            self.request(net, c);
            self.phase = Phase::Embedded { to_request: to_request - 1, to_finish };
        }
    }

    fn page_done(&mut self, now: SimTime, net: &mut impl SocketApi) {
        self.pages.push(PageRecord { start: self.page_start, time: now - self.page_start, objects: self.page_objects, bytes: self.page_bytes });
        if self.cfg.pages.is_some_and(|n| self.pages.len() as u32 >= n) {
            self.phase = Phase::Done;
            for c in &self.conns {
                net.tcp(c.sock).close();
            }
            return;
        }
        let read = match self.cfg.reading_time {
            ReadingTime::Fixed(d) => d,
            ReadingTime::Exponential(m) => SimDuration::from_secs_f64(exponential(&mut self.rng, m.as_secs_f64())),
        };
        self.phase = Phase::Click(now + read);
    }

    /// A response on connection `c` is complete.
    fn on_response<S: SocketApi>(&mut self, now: SimTime, net: &mut S, c: usize, bytes: u64) {
        self.page_objects += 1;
        self.page_bytes += bytes;
        match (self.phase, self.conns[c].class) {
            (Phase::Main, ObjectClass::Main) => {
                let n = self.cfg.model.embedded_count(&mut self.rng);
                if n == 0 {
                    self.page_done(now, net);
                } else {
                    self.phase = Phase::Embedded { to_request: n, to_finish: n };
                }
            }
            (Phase::Embedded { to_request, to_finish }, ObjectClass::Embedded) => {
                if to_finish == 1 {
                    self.page_done(now, net);
                } else {
                    self.phase = Phase::Embedded { to_request, to_finish: to_finish - 1 };
                }
            }
            _ => {}
        }
    }
}

impl App for WebClient {
    fn start<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        if self.cfg.dns_delay == SimDuration::ZERO {
            self.click(now, net);
            return;
        }
        self.phase = Phase::Click(now + self.cfg.dns_delay);
        // the first page's time counts the DNS lookup
        self.page_start = now;
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, _ev: SocketEvent, net: &mut S) {
        let Some(c) = self.conns.iter().position(|c| c.sock == s) else { return };
        let conn = &mut self.conns[c];
        let tcp = net.tcp(s);
        if conn.unsent > 0 {
            let n = tcp.write(conn.unsent);
            conn.unsent -= n;
        }
        let mut n = tcp.read(now, u64::MAX);
        while n > 0 {
            let conn = &mut self.conns[c];
            let Some(&want) = conn.outstanding.front() else { break };
            let take = n.min(want - conn.got);
            conn.got += take;
            n -= take;
            if conn.got == want {
                conn.outstanding.pop_front();
                conn.got = 0;
                self.on_response(now, net, c, want);
            }
        }
        self.dispatch(now, net);
        if !matches!(self.phase, Phase::Done) && net.tcp(s).peer_closed() {
            // the server closed a persistent connection: forget it (not reused)
            let conn = &self.conns[c];
            if conn.outstanding.is_empty() {
                net.tcp(s).close();
                self.conns.remove(c);
            }
        }
    }

    fn on_timer<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        if let Phase::Click(t) = self.phase {
            if t <= now {
                if self.pages.is_empty() {
                    // the first click: its time counts from the start (DNS lookup)
                    let start = self.page_start;
                    self.click(now, net);
                    self.page_start = start;
                } else {
                    self.click(now, net);
                }
            }
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        match self.phase {
            Phase::Click(t) => Some(t),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_time_draws_are_exponential_with_the_given_mean() {
        let mut rng = component_rng(5, 6);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| exponential(&mut rng, 30.0)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        assert!((mean - 30.0).abs() < 0.5, "{mean}");
        // P(X > 30) = e^-1 for an exponential of mean 30
        let tail = xs.iter().filter(|&&x| x > 30.0).count() as f64 / n as f64;
        assert!((tail - (-1f64).exp()).abs() < 0.01, "{tail}");
    }
}
