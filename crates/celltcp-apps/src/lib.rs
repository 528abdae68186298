//! # celltcp-apps
//!
//! Applications as sans-IO state machines that the run loop drives:
//!
//! - [`app`]: the [`app::App`] trait (start, socket events, one timer by deadline), the
//!   [`app::SocketApi`] a node's stack implements for its apps, and [`app::AnyApp`].
//! - [`bulk`]: a sender that keeps a TCP socket's buffer full (a file of N bytes, unlimited, or
//!   until a deadline as `iperf3 -t` does) and a sink that reads everything.
//! - [`udp`]: constant-bit-rate UDP like `iperf3 -u -b`, with the receiver's loss, reordering and
//!   RFC 3550 jitter.
//! - [`ping`]: ICMP echo at an interval with RTT samples.
//! - [`interval`]: iperf3-style interval reports (taken by the run's metrics for an iperf flow).
//! - [`proxy`]: a split-TCP proxy (RFC 3135) with per-connection and shared buffers and
//!   backpressure.
//! - [`relay`]: a TCP relay that terminates one connection and opens another (split TCP).
//! - [`http`]: an HTTP/1.1 server, the NGMN/3GPP2 web page model and the message framing;
//!   [`web`]: a browser (persistent connections, pipelining, page download times);
//!   [`video`]: a progressive-download video player (start-up, stalls, satisfaction).
//!
//! Apps: [`bulk::TcpClient`] and [`bulk::TcpServer`] (bulk and iperf, either direction),
//! [`udp::CbrApp`] and [`udp::UdpSinkApp`], [`ping::PingApp`], [`relay::Relay`], [`http::HttpServer`], [`web::WebClient`],
//! [`video::VideoClient`].

pub mod app;
pub mod bulk;
pub mod http;
pub mod interval;
pub mod ping;
pub mod proxy;
pub mod relay;
pub mod udp;
pub mod video;
pub mod web;
