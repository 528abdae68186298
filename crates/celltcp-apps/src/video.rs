//! Progressive video (HTTP progressive download, as YouTube and the paper family's players did):
//! the player requests the whole clip with one HTTP/1.1 `GET` from an
//! [`crate::http::HttpServer`] and downloads it as fast as TCP allows, while playing it.
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
use crate::http::{request_bytes, response_header_bytes};

/// The paper's satisfaction thresholds.
pub const SATISFIED_STARTUP: SimDuration = SimDuration::from_secs(8);
pub const SATISFIED_STALLS: usize = 3;
pub const SATISFIED_STALL_TIME: SimDuration = SimDuration::from_secs(2);

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

/// The player app: one connection, one request, the [`Player`] fed as bytes arrive.
#[derive(Clone, Debug)]
pub struct VideoClient {
    pub remote: SockAddr,
    pub cfg: TcpConfig,
    pub player: Player,
    pub sock: Option<SockId>,
    received: u64,
    pub error: Option<SocketError>,
}

impl VideoClient {
    pub fn new(remote: SockAddr, cfg: TcpConfig, bitrate_bps: u64, length: SimDuration, startup_threshold: SimDuration) -> Self {
        VideoClient { remote, cfg, player: Player::new(bitrate_bps, length, startup_threshold, SimTime::ZERO), sock: None, received: 0, error: None }
    }

    /// The clip's body size, bytes.
    pub fn clip_bytes(&self) -> u64 {
        Player::clip_bytes(self.player.bitrate_bps, self.player.length)
    }
}

impl App for VideoClient {
    fn start<S: SocketApi>(&mut self, now: SimTime, net: &mut S) {
        self.player.requested_at = now;
        match net.connect(now, self.remote, &self.cfg) {
            Ok(s) => {
                self.sock = Some(s);
                net.tcp(s).write(request_bytes());
            }
            Err(e) => self.error = Some(e),
        }
    }

    fn on_socket<S: SocketApi>(&mut self, now: SimTime, s: SockId, _ev: SocketEvent, net: &mut S) {
        let tcp = net.tcp(s);
        let n = tcp.read(now, u64::MAX);
        if n > 0 {
            self.received += n;
            let clip = self.clip_bytes();
            let body = self.received.saturating_sub(response_header_bytes(clip)).min(clip);
            self.player.on_data(now, body);
            if body == clip {
                tcp.close();
            }
        } else {
            self.player.advance(now);
        }
    }

    fn on_timer<S: SocketApi>(&mut self, now: SimTime, _net: &mut S) {
        self.player.advance(now);
    }

    fn next_deadline(&self) -> Option<SimTime> {
        self.player.next_deadline()
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
