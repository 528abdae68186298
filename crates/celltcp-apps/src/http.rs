//! HTTP/1.1 (RFC 9112) over persistent TCP connections: an origin server ([`HttpServer`]), the
//! web page model ([`PageModel`]) and the request/response framing both ends share.
//!
//! ## Framing without payload
//!
//! celltcp's TCP carries byte *counts*, not bytes, so neither end can parse a message. The two
//! ends therefore agree on every message length in advance, as they would by reading
//! `Content-Length`:
//!
//! - every request is [`request_bytes`] long (a real `GET` request with a fixed-width object
//!   path, 307 bytes, near the 350 bytes of ns-3's 3GPP HTTP model), so the server cuts the
//!   request stream into requests by counting, pipelined or not;
//! - the body size of the `k`-th response on a connection is a deterministic draw keyed by
//!   `(seed, object class, client port, k)` ([`PageModel::object_size`]): the server draws it when
//!   it parses the request, the client draws the same value to know where the response ends, as
//!   it would from the header. Each response is preceded by a real status line and header
//!   ([`response_header_bytes`]: `HTTP/1.1 200 OK`, `Content-Length: <n>`, ...).
//!
//! The object class is the server port: a page's main object comes from the site's host, its
//! embedded objects from a static-content host (two listeners of the same server; sites commonly
//! serve images and scripts from a separate host name). A browser keeps up to `connections`
//! persistent connections to each host (HTTP/1.1 browsers: 6 per host).
//!
//! ## The page model
//!
//! [`PageModel::Ngmn`] is the HTTP browsing model of the NGMN Radio Access Performance Evaluation
//! Methodology (NGMN Alliance, 2008, Appendix A.3.3), which is the 3GPP2 C.R1002-0 (2004) §4.1.3
//! web model, also ns-3's `ThreeGppHttpVariables`:
//!
//! | quantity | distribution | parameters |
//! |---|---|---|
//! | main object size | truncated lognormal | σ = 1.37, μ = 8.37 (mean 10710 B, sd 25032 B), min 100 B, max 2 MB |
//! | embedded object size | truncated lognormal | σ = 2.36, μ = 6.17 (mean 7758 B, sd 126168 B), min 50 B, max 2 MB |
//! | embedded objects per page | truncated Pareto | α = 1.1, k = 2, m = 55: n = min(X, m) − k, mean 5.64, max 53 |
//! | reading time | exponential | mean 30 s |
//!
//! Truncation redraws out-of-range sizes; the object count is `min(X, m) − k` rounded to the
//! nearest integer. [`PageModel::Fixed`] gives every page the same structure (the paper's fixed
//! pages, and hand-checkable timelines).

use celltcp_engine::rng::{component_rng, SimRng};
use celltcp_engine::SimTime;
use celltcp_tcp::TcpConfig;
use rand::Rng;

use crate::app::{App, SockId, SocketApi, SocketError, SocketEvent};

/// One request as the client sends it (fixed width: every request has the same length).
const REQUEST: &str = "GET /objects/000000000000 HTTP/1.1\r\n\
Host: www.example.com\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
Accept-Language: en-US,en;q=0.5\r\n\
Accept-Encoding: gzip, deflate\r\n\
Connection: keep-alive\r\n\r\n";

/// The length of every request, bytes.
pub fn request_bytes() -> u64 {
    REQUEST.len() as u64
}

/// The status line and header of a response with a `body`-byte body, bytes.
pub fn response_header_bytes(body: u64) -> u64 {
    let h = format!(
        "HTTP/1.1 200 OK\r\nDate: Wed, 25 Nov 2026 15:20:00 GMT\r\nServer: Apache/2.4.58\r\n\
Content-Type: application/octet-stream\r\nContent-Length: {body}\r\nConnection: keep-alive\r\n\r\n"
    );
    h.len() as u64
}

/// A response's bytes on the wire: header and body.
pub fn response_bytes(body: u64) -> u64 {
    response_header_bytes(body) + body
}

/// What a server port serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectClass {
    /// A page's main (HTML) object.
    Main,
    /// An embedded object (image, script, style sheet).
    Embedded,
    /// One object of a fixed size (a video clip).
    Whole(u64),
    /// A `clip`-byte object fetched in `block`-byte ranges (HTTP range requests, RFC 9110
    /// §14): the `k`-th response on a connection carries bytes `k·block ..` of the clip, the
    /// last one the remainder (a paced video player, [`crate::video`]).
    Blocks { clip: u64, block: u64 },
}

impl ObjectClass {
    fn key(self) -> u64 {
        match self {
            ObjectClass::Main => 1,
            ObjectClass::Embedded => 2,
            ObjectClass::Whole(_) => 3,
            ObjectClass::Blocks { .. } => 4,
        }
    }
}

/// Sizes and counts of a web page (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PageModel {
    /// NGMN / 3GPP2 C.R1002 web browsing model.
    Ngmn,
    /// Every page: a main object of `main_bytes` and `embedded` objects of `embedded_bytes`.
    Fixed { main_bytes: u64, embedded: u32, embedded_bytes: u64 },
}

/// NGMN model constants (module doc table).
pub mod ngmn {
    pub const MAIN_MU: f64 = 8.37;
    pub const MAIN_SIGMA: f64 = 1.37;
    pub const MAIN_MIN: f64 = 100.0;
    pub const EMB_MU: f64 = 6.17;
    pub const EMB_SIGMA: f64 = 2.36;
    pub const EMB_MIN: f64 = 50.0;
    pub const SIZE_MAX: f64 = 2_000_000.0;
    pub const PARETO_ALPHA: f64 = 1.1;
    pub const PARETO_K: f64 = 2.0;
    pub const PARETO_M: f64 = 55.0;
    /// Mean reading time, seconds (exponential).
    pub const READING_MEAN_S: f64 = 30.0;
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut SimRng) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A lognormal draw redrawn until it lies in `[min, max]`.
fn truncated_lognormal(rng: &mut SimRng, mu: f64, sigma: f64, min: f64, max: f64) -> f64 {
    loop {
        let x = (mu + sigma * normal(rng)).exp();
        if (min..=max).contains(&x) {
            return x;
        }
    }
}

/// An exponential draw of mean `mean`.
pub fn exponential(rng: &mut SimRng, mean: f64) -> f64 {
    let u: f64 = 1.0 - rng.gen::<f64>();
    -mean * u.ln()
}

impl PageModel {
    /// The body size of the `k`-th response on the connection from client port `client_port`
    /// (both ends call this with the same arguments; module doc).
    pub fn object_size(&self, seed: u64, class: ObjectClass, client_port: u16, k: u64) -> u64 {
        match (self, class) {
            (_, ObjectClass::Whole(n)) => n,
            (_, ObjectClass::Blocks { clip, block }) => block.min(clip.saturating_sub(k.saturating_mul(block))),
            (PageModel::Fixed { main_bytes, .. }, ObjectClass::Main) => *main_bytes,
            (PageModel::Fixed { embedded_bytes, .. }, ObjectClass::Embedded) => *embedded_bytes,
            (PageModel::Ngmn, c) => {
                let key = (class.key() << 56) ^ (u64::from(client_port) << 40) ^ k;
                let mut rng = component_rng(seed, key);
                let x = if c == ObjectClass::Main {
                    truncated_lognormal(&mut rng, ngmn::MAIN_MU, ngmn::MAIN_SIGMA, ngmn::MAIN_MIN, ngmn::SIZE_MAX)
                } else {
                    truncated_lognormal(&mut rng, ngmn::EMB_MU, ngmn::EMB_SIGMA, ngmn::EMB_MIN, ngmn::SIZE_MAX)
                };
                x.round() as u64
            }
        }
    }

    /// The number of embedded objects of a page (the browser learns it by parsing the main
    /// object).
    pub fn embedded_count(&self, rng: &mut SimRng) -> u32 {
        match self {
            PageModel::Fixed { embedded, .. } => *embedded,
            PageModel::Ngmn => {
                // Pareto(α, k) by inversion: X = k / U^(1/α)
                let u: f64 = 1.0 - rng.gen::<f64>();
                let x = ngmn::PARETO_K / u.powf(1.0 / ngmn::PARETO_ALPHA);
                (x.min(ngmn::PARETO_M) - ngmn::PARETO_K).round() as u32
            }
        }
    }
}

/// One connection of the server: requests parsed, response bytes still to write.
#[derive(Clone, Copy, Debug)]
pub struct ServerConn {
    pub sock: SockId,
    pub class: ObjectClass,
    pub client_port: u16,
    /// Bytes of a request not yet complete.
    partial: u64,
    /// Requests parsed so far.
    pub requests: u64,
    /// Response bytes parsed but not yet written into the socket.
    to_write: u64,
    /// Response bytes written so far.
    pub written: u64,
    closed: bool,
}

/// An HTTP/1.1 origin server: listens on each of `ports` (each serving one [`ObjectClass`]) and
/// answers every request, in order, with a response of the size [`PageModel::object_size`] gives.
/// Connections are persistent; the server closes its side once the client closed and every
/// response is written.
#[derive(Clone, Debug)]
pub struct HttpServer {
    pub ports: Vec<(u16, ObjectClass)>,
    pub model: PageModel,
    pub seed: u64,
    pub cfg: TcpConfig,
    pub listeners: Vec<(SockId, ObjectClass)>,
    pub conns: Vec<ServerConn>,
    pub error: Option<SocketError>,
}

impl HttpServer {
    pub fn new(ports: Vec<(u16, ObjectClass)>, model: PageModel, seed: u64, cfg: TcpConfig) -> Self {
        HttpServer { ports, model, seed, cfg, listeners: Vec::new(), conns: Vec::new(), error: None }
    }

    /// Requests parsed (and answered) so far, all connections.
    pub fn requests(&self) -> u64 {
        self.conns.iter().map(|c| c.requests).sum()
    }
}

impl App for HttpServer {
    fn start<S: SocketApi>(&mut self, _now: SimTime, net: &mut S) {
        for &(port, class) in &self.ports {
            match net.listen(port, &self.cfg) {
                Ok(s) => self.listeners.push((s, class)),
                Err(e) => self.error = Some(e),
            }
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, ev: SocketEvent, net: &mut S) {
        if let SocketEvent::Accepted { listener } = ev {
            let Some(&(_, class)) = self.listeners.iter().find(|(l, _)| *l == listener) else { return };
            let client_port = net.tcp(s).remote_port();
            self.conns.push(ServerConn { sock: s, class, client_port, partial: 0, requests: 0, to_write: 0, written: 0, closed: false });
        }
        let Some(c) = self.conns.iter_mut().rev().find(|c| c.sock == s) else { return };
        let tcp = net.tcp(s);
        c.partial += tcp.read(now, u64::MAX);
        let req = request_bytes();
        while c.partial >= req {
            c.partial -= req;
            let body = self.model.object_size(self.seed, c.class, c.client_port, c.requests);
            c.requests += 1;
            c.to_write += response_bytes(body);
        }
        if c.to_write > 0 {
            let n = tcp.write(c.to_write);
            c.to_write -= n;
            c.written += n;
        }
        if !c.closed && c.to_write == 0 && tcp.peer_closed() {
            tcp.close();
            c.closed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_and_header_sizes_are_real_message_lengths() {
        // the request text as sent, counted by hand: 9 lines
        assert_eq!(request_bytes(), REQUEST.len() as u64);
        assert!((300..=400).contains(&request_bytes()), "{}", request_bytes());
        // "Content-Length: 7" vs "Content-Length: 1234567": six more digits
        assert_eq!(response_header_bytes(1_234_567) - response_header_bytes(7), 6);
        assert_eq!(response_bytes(1000), response_header_bytes(1000) + 1000);
    }

    #[test]
    fn range_blocks_cover_the_clip_exactly() {
        // 200000 bytes in 65536-byte ranges: 3 full blocks and 3392 bytes, then nothing
        let c = ObjectClass::Blocks { clip: 200_000, block: 65_536 };
        let sizes: Vec<u64> = (0..6).map(|k| PageModel::Ngmn.object_size(1, c, 5, k)).collect();
        assert_eq!(sizes, vec![65_536, 65_536, 65_536, 3_392, 0, 0]);
        assert_eq!(sizes.iter().sum::<u64>(), 200_000);
    }

    #[test]
    fn ngmn_sizes_are_the_same_at_both_ends_and_differ_by_key() {
        let m = PageModel::Ngmn;
        let a = m.object_size(7, ObjectClass::Main, 40000, 3);
        assert_eq!(a, m.object_size(7, ObjectClass::Main, 40000, 3));
        let others = [
            m.object_size(7, ObjectClass::Main, 40000, 4),
            m.object_size(7, ObjectClass::Main, 40001, 3),
            m.object_size(8, ObjectClass::Main, 40000, 3),
        ];
        assert!(others.iter().any(|&o| o != a));
    }

    /// Mean of a lognormal truncated to [a, b], closed form:
    /// E = e^(μ+σ²/2) (Φ((ln b − μ − σ²)/σ) − Φ((ln a − μ − σ²)/σ)) / (Φ((ln b − μ)/σ) − Φ((ln a − μ)/σ)).
    fn truncated_lognormal_mean(mu: f64, sigma: f64, a: f64, b: f64) -> f64 {
        let phi = |x: f64| 0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2));
        let (la, lb) = (a.ln(), b.ln());
        let s2 = sigma * sigma;
        (mu + s2 / 2.0).exp() * (phi((lb - mu - s2) / sigma) - phi((la - mu - s2) / sigma)) / (phi((lb - mu) / sigma) - phi((la - mu) / sigma))
    }

    /// erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
    fn erf(x: f64) -> f64 {
        let s = x.signum();
        let x = x.abs();
        let t = 1.0 / (1.0 + 0.327_591_1 * x);
        let y = 1.0 - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t + 0.254_829_592) * t * (-x * x).exp();
        s * y
    }

    #[test]
    fn ngmn_main_object_sizes_match_the_truncated_lognormal_mean() {
        let m = PageModel::Ngmn;
        let n = 200_000u64;
        let mean = (0..n).map(|k| m.object_size(1, ObjectClass::Main, 1, k) as f64).sum::<f64>() / n as f64;
        let want = truncated_lognormal_mean(ngmn::MAIN_MU, ngmn::MAIN_SIGMA, ngmn::MAIN_MIN, ngmn::SIZE_MAX);
        // the untruncated mean is the NGMN table's 10710 B; truncation at 2 MB barely moves it
        assert!((want - 10_710.0).abs() / 10_710.0 < 0.05, "{want}");
        assert!((mean - want).abs() / want < 0.03, "sample mean {mean} vs closed form {want}");
        let sizes: Vec<u64> = (0..1000).map(|k| m.object_size(2, ObjectClass::Embedded, 9, k)).collect();
        assert!(sizes.iter().all(|&s| (50..=2_000_000).contains(&s)));
    }

    #[test]
    fn ngmn_embedded_count_matches_the_truncated_pareto_distribution() {
        // P(n = j) for n = round(min(X, 55) − 2), X ~ Pareto(1.1, 2): F(x) = 1 − (2/x)^1.1
        let f = |x: f64| if x <= 2.0 { 0.0 } else { 1.0 - (2.0 / x).powf(1.1) };
        let mut want = 0.0;
        for j in 0..=53u32 {
            let (lo, hi) = (j as f64 - 0.5 + 2.0, j as f64 + 0.5 + 2.0);
            let p = if j == 53 { 1.0 - f(lo) } else { f(hi) - f(lo) };
            want += j as f64 * p;
        }
        // the continuous mean is the table's 5.64
        let cont = 2.0 * 1.1 / 0.1 - 2f64.powf(1.1) * 55f64.powf(-0.1) / 0.1 - 2.0;
        assert!((cont - 5.64).abs() < 0.01, "{cont}");
        let mut rng = component_rng(3, 4);
        let n = 200_000;
        let mut sum = 0u64;
        let mut max = 0;
        for _ in 0..n {
            let c = PageModel::Ngmn.embedded_count(&mut rng);
            sum += u64::from(c);
            max = max.max(c);
        }
        let mean = sum as f64 / n as f64;
        assert!((mean - want).abs() < 0.05, "sample mean {mean} vs {want}");
        assert_eq!(max, 53);
    }
}
