//! Progressive video (HTTP progressive download, as YouTube and the paper family's players did):
//! the player fetches a constant-bit-rate clip from an [`crate::http::HttpServer`] over one
//! persistent HTTP/1.1 connection while playing it, in one of two [`Mode`]s:
//!
//! - [`Mode::Greedy`] (the default): one `GET` for the whole clip, read as fast as TCP allows.
//! - [`Mode::Paced`]: the player downloads in blocks (HTTP range requests, one outstanding at a
//!   time) and keeps about `buffer_target` of media ahead of the playhead. While the buffered
//!   media is below the target (start-up, a stall, or a buffer drawn down by playback) it requests
//!   the next block as soon as the previous one is in; once the buffer exceeds the target it
//!   waits until playback has drained it back to the target. This is the kind of ON/OFF pattern
//!   Rao et al. measured for YouTube and Netflix ("Network characteristics of video streaming
//!   traffic", CoNEXT 2011; its abstract: ON/OFF cycles that are not ACK-clocked, up to bulk
//!   transfer, depending on the player and container): a buffering phase at the rate TCP
//!   allows, then a steady state of blocks at the encoding rate with idle periods in between.
//!   The block sizes and buffer amounts per player in the paper's body could not be checked
//!   (docs/scenario.md, "Paced video"); in 2011 YouTube's servers paced the blocks (Alcock and
//!   Nelson, SIGCOMM CCR 2011), here the client does with range requests.
//!   In steady state on a link of goodput `R` above the bitrate `b`, each block of `B` bytes
//!   (`8B/b` seconds of media) is requested when the buffer is back at the target, so the
//!   ON/OFF period is `8B/b`, the ON time about one round trip plus `B/R`, the duty cycle their
//!   ratio, and the body downloaded by time `t` is about `b/8 · (t − start-up + buffer_target)`
//!   (within a block): a user who leaves early has cost the network far less than the greedy
//!   player's whole clip. Below the bitrate the player is never OFF and stalls as the greedy one,
//!   less one round trip per block.
//!
//! Framing of the ranges: the server answers the `k`-th request on the connection with bytes
//! `k·block ..` of the clip ([`crate::http::ObjectClass::Blocks`]); its status line and header are
//! the `200 OK` ones of [`crate::http::response_header_bytes`] (a real `206 Partial Content`
//! with `Content-Range` is some 30 bytes longer per block).
//!
//! Playback ([`Player`]): the player starts once `startup_threshold` of media is buffered (or the
//! whole clip is in); playing drains the buffer at one second of media per second. When the
//! buffer runs dry before the clip is fully downloaded, playback stalls; it resumes once
//! `startup_threshold` of media is buffered again (rebuffering), or the rest of the clip is in.
//! The clip of `length` at `bitrate` is `bitrate × length / 8` bytes of body (constant bit rate).
//!
//! Metrics: start-up delay (request to first frame), number of stalls and their total length,
//! and satisfaction by the rule of the split-TCP proxy paper (Farkas et al.): start-up under 8 s,
//! at most 3 stalls, at most 2 s of stalling in total ([`Player::satisfied`]).

use celltcp_engine::{SimDuration, SimTime};
use celltcp_tcp::TcpConfig;

use crate::app::{App, SockAddr, SockId, SocketApi, SocketError, SocketEvent};
use crate::http::{request_bytes, response_bytes, response_header_bytes};

/// The paper's satisfaction thresholds.
pub const SATISFIED_STARTUP: SimDuration = SimDuration::from_secs(8);
pub const SATISFIED_STALLS: usize = 3;
pub const SATISFIED_STALL_TIME: SimDuration = SimDuration::from_secs(2);

/// How the player downloads (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One request for the whole clip, read as fast as TCP allows.
    Greedy,
    /// Range requests of `block` bytes while less than `buffer_target` of media is buffered
    /// (`buffer_target` at least the start-up threshold, `block` at least 1 byte).
    Paced { buffer_target: SimDuration, block: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Before the first frame or during a stall.
    Buffering,
    /// Playing since `since`, from media position `pos` (at `since`).
    Playing { since: SimTime, pos: SimDuration },
    /// The whole clip was played.
    Done,
}

/// The playback buffer of a constant-bit-rate clip (module doc). Feed it the body bytes
/// downloaded so far with [`Player::on_data`] and fire [`Player::advance`] at
/// [`Player::next_deadline`].
#[derive(Clone, Debug)]
pub struct Player {
    pub bitrate_bps: u64,
    pub length: SimDuration,
    pub startup_threshold: SimDuration,
    /// When the clip was requested.
    pub requested_at: SimTime,
    /// Media downloaded (whole clip: `length`).
    downloaded: SimDuration,
    /// Media played when not playing.
    pos: SimDuration,
    state: State,
    /// When playback began.
    pub started_at: Option<SimTime>,
    /// Stalls: start and end (None while stalling).
    pub stalls: Vec<(SimTime, Option<SimTime>)>,
    pub finished_at: Option<SimTime>,
}

impl Player {
    pub fn new(bitrate_bps: u64, length: SimDuration, startup_threshold: SimDuration, requested_at: SimTime) -> Self {
        Player {
            bitrate_bps: bitrate_bps.max(1),
            length,
            startup_threshold,
            requested_at,
            downloaded: SimDuration::ZERO,
            pos: SimDuration::ZERO,
            state: State::Buffering,
            started_at: None,
            stalls: Vec::new(),
            finished_at: None,
        }
    }

    /// The clip's body size, bytes.
    pub fn clip_bytes(bitrate_bps: u64, length: SimDuration) -> u64 {
        (u128::from(bitrate_bps) * length.as_nanos() as u128 / 8 / 1_000_000_000) as u64
    }

    /// Media time of `bytes` of body.
    fn media(&self, bytes: u64) -> SimDuration {
        let ns = u128::from(bytes) * 8 * 1_000_000_000 / u128::from(self.bitrate_bps);
        SimDuration::from_nanos(ns as u64).min(self.length)
    }

    /// Media downloaded but not yet played, at `now` (`now` not before the last event).
    pub fn buffered(&self, now: SimTime) -> SimDuration {
        match self.state {
            State::Playing { since, pos } => self.downloaded.saturating_sub(pos + now.saturating_since(since)),
            _ => self.downloaded - self.pos,
        }
    }

    /// A paced player's next request time: at once while less than `target` is buffered (or
    /// playback is waiting for data), else when playing has drained the buffer to `target`.
    /// None once the clip is played.
    pub fn request_due(&self, now: SimTime, target: SimDuration) -> Option<SimTime> {
        match self.state {
            State::Done => None,
            State::Buffering => Some(now),
            State::Playing { since, pos } => {
                let dry = since + (self.downloaded - pos);
                Some((dry - target.min(dry.saturating_since(SimTime::ZERO))).max(now))
            }
        }
    }

    /// When the buffer runs dry if nothing more arrives (while playing).
    pub fn next_deadline(&self) -> Option<SimTime> {
        match self.state {
            State::Playing { since, pos } => Some(since + (self.downloaded - pos)),
            _ => None,
        }
    }

    /// Plays up to `now`: the buffer may have run dry (a stall, or the end of the clip).
    pub fn advance(&mut self, now: SimTime) {
        if let Some(dry) = self.next_deadline() {
            if dry <= now {
                self.pos = self.downloaded;
                if self.downloaded >= self.length {
                    self.state = State::Done;
                    self.finished_at = Some(dry);
                } else {
                    self.state = State::Buffering;
                    self.stalls.push((dry, None));
                }
            }
        }
    }

    /// `body_bytes` of the clip have been downloaded by `now` (a running total).
    pub fn on_data(&mut self, now: SimTime, body_bytes: u64) {
        self.advance(now);
        self.downloaded = self.media(body_bytes);
        if self.state == State::Buffering {
            let buffered = self.downloaded - self.pos;
            if buffered >= self.startup_threshold || self.downloaded >= self.length {
                self.state = State::Playing { since: now, pos: self.pos };
                if self.started_at.is_none() {
                    self.started_at = Some(now);
                } else if let Some(last) = self.stalls.last_mut() {
                    last.1 = Some(now);
                }
            }
        }
    }

    pub fn startup_delay(&self) -> Option<SimDuration> {
        self.started_at.map(|t| t - self.requested_at)
    }

    /// Total stall time as of `now` (a stall still running counts up to `now`).
    pub fn stall_time(&self, now: SimTime) -> SimDuration {
        self.stalls.iter().map(|&(a, b)| b.unwrap_or(now.max(a)) - a).fold(SimDuration::ZERO, |x, y| x + y)
    }

    /// The paper's rule, as of `now`: started within 8 s, at most 3 stalls of at most 2 s in
    /// total. A clip that has not started is not satisfying.
    pub fn satisfied(&self, now: SimTime) -> bool {
        self.startup_delay().is_some_and(|d| d < SATISFIED_STARTUP) && self.stalls.len() <= SATISFIED_STALLS && self.stall_time(now) <= SATISFIED_STALL_TIME
    }
}

/// A paced player's outstanding range request.
#[derive(Clone, Copy, Debug)]
struct Block {
    /// Where its response starts and ends in the connection's byte stream.
    start: u64,
    end: u64,
    /// Its body size.
    body: u64,
    sent_at: SimTime,
}

/// The player app: one connection; one request for the whole clip, or range requests of a
/// block each ([`Mode`]); the [`Player`] fed as bytes arrive.
#[derive(Clone, Debug)]
pub struct VideoClient {
    pub remote: SockAddr,
    pub cfg: TcpConfig,
    pub player: Player,
    pub mode: Mode,
    pub sock: Option<SockId>,
    received: u64,
    /// Body bytes of the clip downloaded so far.
    pub body: u64,
    /// Paced: range requests sent, body bytes requested, the outstanding one, the next request
    /// time while OFF.
    pub requests: u64,
    requested: u64,
    block: Option<Block>,
    body_done: u64,
    next_request: Option<SimTime>,
    /// Paced: the total ON time (request sent to last byte of its response in).
    pub on_time: SimDuration,
    pub error: Option<SocketError>,
}

impl VideoClient {
    pub fn new(remote: SockAddr, cfg: TcpConfig, bitrate_bps: u64, length: SimDuration, startup_threshold: SimDuration) -> Self {
        VideoClient {
            remote,
            cfg,
            player: Player::new(bitrate_bps, length, startup_threshold, SimTime::ZERO),
            mode: Mode::Greedy,
            sock: None,
            received: 0,
            body: 0,
            requests: 0,
            requested: 0,
            block: None,
            body_done: 0,
            next_request: None,
            on_time: SimDuration::ZERO,
            error: None,
        }
    }

    /// The same player in `mode`.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// The clip's body size, bytes.
    pub fn clip_bytes(&self) -> u64 {
        Player::clip_bytes(self.player.bitrate_bps, self.player.length)
    }

    /// Paced: sends the next range request if it is due, else sets the timer for it.
    fn maybe_request<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        let (Mode::Paced { buffer_target, block }, Some(s)) = (self.mode, self.sock) else { return };
        let clip = self.clip_bytes();
        self.next_request = None;
        if self.block.is_some() || self.requested >= clip {
            return;
        }
        match self.player.request_due(now, buffer_target) {
            Some(t) if t <= now => {
                let body = block.min(clip - self.requested);
                net.tcp(s).write(request_bytes());
                let start = self.received;
                self.block = Some(Block { start, end: start + response_bytes(body), body, sent_at: now });
                self.requested += body;
                self.requests += 1;
            }
            t => self.next_request = t,
        }
    }
}

impl App for VideoClient {
    fn start<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.player.requested_at = now;
        match net.connect(now, self.remote, &self.cfg) {
            Ok(s) => {
                self.sock = Some(s);
                match self.mode {
                    Mode::Greedy => {
                        net.tcp(s).write(request_bytes());
                    }
                    Mode::Paced { .. } => self.maybe_request(now, net),
                }
            }
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, _ev: SocketEvent, net: &mut S) {
        let clip = self.clip_bytes();
        let tcp = net.tcp(s);
        let n = tcp.read(now, u64::MAX);
        if n == 0 {
            self.player.advance(now);
            if matches!(self.mode, Mode::Paced { .. }) {
                self.maybe_request(now, net);
            }
            return;
        }
        self.received += n;
        self.body = match self.mode {
            Mode::Greedy => self.received.saturating_sub(response_header_bytes(clip)).min(clip),
            Mode::Paced { .. } => {
                let mut partial = 0;
                if let Some(b) = self.block {
                    if self.received >= b.end {
                        self.body_done += b.body;
                        self.on_time += now - b.sent_at;
                        self.block = None;
                    } else {
                        partial = (self.received - b.start).saturating_sub(response_header_bytes(b.body)).min(b.body);
                    }
                }
                self.body_done + partial
            }
        };
        self.player.on_data(now, self.body);
        if self.body == clip {
            tcp.close();
        } else {
            self.maybe_request(now, net);
        }
    }

    fn on_timer<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.player.advance(now);
        self.maybe_request(now, net);
    }

    fn next_deadline(&self) -> Option<SimTime> {
        match (self.player.next_deadline(), self.next_request) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> SimTime {
        SimTime::ZERO + SimDuration::from_secs_f64(x)
    }

    #[test]
    fn player_stalls_when_the_download_is_slower_than_the_bitrate() {
        // 10 s of 8 kbit/s video (1000 byte/s) arriving at 500 byte/s from t = 0, threshold
        // 2 s: media(t) = t/2 s. Start: 2 s buffered at t = 4. Playing from 4 at 1 s/s, the
        // position t − 4 reaches the media t/2 at t = 8: stall 1 at 8 (position 4). 2 s buffered
        // again when t/2 = 6, t = 12. Position 4 + (t − 12) reaches t/2 at t = 16 (media 8 < 10):
        // stall 2 at 16. Resume when t/2 = 10, t = 20 (all in). Done at 20 + 2 = 22.
        let mut p = Player::new(8000, SimDuration::from_secs(10), SimDuration::from_secs(2), SimTime::ZERO);
        let mut t = 0.0;
        while t <= 25.0 {
            // data arrives every 10 ms; the timer fires at the deadline in between
            if let Some(d) = p.next_deadline() {
                if d <= s(t) {
                    p.advance(d);
                }
            }
            p.on_data(s(t), (t * 500.0f64).round() as u64);
            t = ((t + 0.01) * 100.0f64).round() / 100.0;
        }
        // each event lags by up to one 10 ms arrival step, and the lags add up over the timeline
        let close = |a: SimTime, b: f64| (a.as_secs_f64() - b).abs() < 0.05;
        assert!(close(p.started_at.unwrap(), 4.0), "{:?}", p.started_at);
        assert_eq!(p.stalls.len(), 2, "{:?}", p.stalls);
        assert!(close(p.stalls[0].0, 8.0) && close(p.stalls[0].1.unwrap(), 12.0), "{:?}", p.stalls);
        assert!(close(p.stalls[1].0, 16.0) && close(p.stalls[1].1.unwrap(), 20.0), "{:?}", p.stalls);
        assert!(close(p.finished_at.unwrap(), 22.0), "{:?}", p.finished_at);
        assert!((p.stall_time(s(25.0)).as_secs_f64() - 8.0).abs() < 0.05);
        assert!(!p.satisfied(s(25.0)), "8 s of stalling");
    }

    #[test]
    fn paced_player_settles_into_on_off_blocks_at_the_encoding_rate() {
        // 8 kbit/s (1000 byte/s), threshold 2 s, target 10 s, blocks of 2000 bytes (2 s of
        // media). Each block's first byte arrives 0.1 s after its request and the rest at
        // 4000 byte/s: ON = 0.1 + 0.5 = 0.6 s. By hand: block 1 in at 0.6 (2 s: playback starts).
        // Back to back while the buffer is below 10 s: after block k (k ≥ 1) it holds
        // 2k − 0.6(k − 1) s: 2, 3.4, 4.8, 6.2, 7.6, 9.0, then 10.4 after block 7 (in at 4.2).
        // OFF until it drains to 10 s: request 8 at 4.6, and from then one request every 2 s
        // (each adds 2 s of media, playback drains 2 s): ON 0.6 s of a 2 s period, duty 0.3,
        // and at each request the media downloaded is the playhead (t − 0.6) plus the 10 s target.
        let target = SimDuration::from_secs(10);
        let mut p = Player::new(8000, SimDuration::from_secs(100), SimDuration::from_secs(2), SimTime::ZERO);
        let (block, first, on) = (2000u64, 0.1, 0.6);
        let (mut body, mut now) = (0u64, s(0.0));
        let mut requests = Vec::new();
        while requests.len() < 20 {
            let due = p.request_due(now, target).unwrap();
            p.advance(due);
            requests.push((due.as_secs_f64(), body));
            for i in 1..=4u64 {
                let t = due + SimDuration::from_secs_f64(first + (on - first) * i as f64 / 4.0);
                p.on_data(t, body + block * i / 4);
            }
            body += block;
            now = due + SimDuration::from_secs_f64(on);
        }
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(close(p.started_at.unwrap().as_secs_f64(), 0.6), "{:?}", p.started_at);
        for (k, &(t, _)) in requests.iter().enumerate().take(7) {
            assert!(close(t, 0.6 * k as f64), "buffering phase: request {k} at {t}: {requests:?}");
        }
        for (k, &(t, bytes)) in requests.iter().enumerate().skip(7) {
            let want = 4.6 + 2.0 * (k - 7) as f64;
            assert!(close(t, want), "steady state: request {k} at {t}, want {want}: {requests:?}");
            assert_eq!(bytes, (1000.0 * (t - 0.6 + 10.0)).round() as u64, "request {k}");
        }
        let period = requests[19].0 - requests[18].0;
        assert!(close(period, 2.0) && close(on / period, 0.3));
        assert!(p.stalls.is_empty(), "{:?}", p.stalls);
        // before playback starts and while stalled, a request is due at once
        let fresh = Player::new(8000, SimDuration::from_secs(100), SimDuration::from_secs(2), SimTime::ZERO);
        assert_eq!(fresh.request_due(s(3.0), target), Some(s(3.0)));
    }

    #[test]
    fn player_satisfaction_rule() {
        // a fast download: starts when 2 s are in, never stalls
        let mut p = Player::new(8000, SimDuration::from_secs(10), SimDuration::from_secs(2), SimTime::ZERO);
        p.on_data(s(1.0), 1000);
        assert!(p.started_at.is_none());
        p.on_data(s(1.5), 10_000);
        assert_eq!(p.startup_delay(), Some(SimDuration::from_millis(1500)));
        p.advance(s(11.5));
        assert_eq!(p.finished_at, Some(s(11.5)));
        assert!(p.satisfied(s(12.0)));
        // start-up of 8 s is not under 8 s
        let mut late = Player::new(8000, SimDuration::from_secs(10), SimDuration::from_secs(2), SimTime::ZERO);
        late.on_data(s(8.0), 10_000);
        assert!(!late.satisfied(s(9.0)));
        // not started: not satisfied
        assert!(!Player::new(8000, SimDuration::from_secs(10), SimDuration::from_secs(2), SimTime::ZERO).satisfied(s(1.0)));
        assert_eq!(Player::clip_bytes(512_000, SimDuration::from_secs(90)), 5_760_000);
    }
}
