//! `app = "web"` and `app = "video"`: building the browser or player and the HTTP server from a
//! flow's keys, and their part of `summary.json` (docs/scenario.md "Web browsing and video",
//! docs/outputs.md).

use serde_json::{json, Map, Value};

use celltcp_apps::app::{AnyApp, SockAddr};
use celltcp_apps::http::{HttpServer, ObjectClass, PageModel};
use celltcp_apps::video::{Mode, Player, VideoClient};
use celltcp_apps::web::{ReadingTime, WebClient, WebConfig};
use celltcp_engine::{SimDuration, SimTime};
use celltcp_net::Ipv4;
use celltcp_tcp::TcpConfig;

use crate::config::{app_defaults as d, AppKind, FlowCfg, PageModelKind, ReadingDist, VideoMode};
use crate::units::Length;
use crate::world::World;

/// The client app and the server app of a web or video flow; the server listens on `port` (and
/// `port + 1`, the static-content host, for the web).
pub(crate) fn build(f: &FlowCfg, cfg: TcpConfig, seed: u64, server: Ipv4, port: u16) -> (AnyApp, Option<AnyApp>) {
    let ms = SimDuration::from_millis;
    if f.app == AppKind::Video {
        let bitrate = f.bitrate.map_or(d::VIDEO_BITRATE_BPS, |r| r.0);
        let length = f.length.and_then(|l| l.time()).unwrap_or(SimDuration::from_secs(d::VIDEO_LENGTH_S));
        let threshold = f.startup_threshold.map_or(ms(d::VIDEO_STARTUP_MS), |t| t.0);
        let clip = Player::clip_bytes(bitrate, length);
        let mode = match f.mode.unwrap_or(VideoMode::Greedy) {
            VideoMode::Greedy => Mode::Greedy,
            VideoMode::Paced => Mode::Paced {
                buffer_target: f.buffer_target.map_or(ms(d::VIDEO_BUFFER_TARGET_S * 1000), |t| t.0),
                block: match f.block {
                    Some(Length::Time(t)) => Player::clip_bytes(bitrate, t.0).max(1),
                    Some(Length::Size(b)) => b.0,
                    None => d::VIDEO_BLOCK,
                },
            },
        };
        let class = match mode {
            Mode::Greedy => ObjectClass::Whole(clip),
            Mode::Paced { block, .. } => ObjectClass::Blocks { clip, block },
        };
        let srv = HttpServer::new(vec![(port, class)], PageModel::Ngmn, seed, cfg);
        let cl = VideoClient::new(SockAddr::new(server, port), cfg, bitrate, length, threshold).with_mode(mode);
        return (AnyApp::Video(cl), Some(AnyApp::Http(srv)));
    }
    let model = match f.page_model.unwrap_or(PageModelKind::Ngmn) {
        PageModelKind::Ngmn => PageModel::Ngmn,
        PageModelKind::Fixed => PageModel::Fixed {
            main_bytes: f.main_size.map_or(d::WEB_MAIN_SIZE, |b| b.0),
            embedded: f.embedded_objects.unwrap_or(d::WEB_EMBEDDED_OBJECTS),
            embedded_bytes: f.embedded_size.map_or(d::WEB_EMBEDDED_SIZE, |b| b.0),
        },
    };
    let reading = f.reading_time.map_or(ms(d::WEB_READING_S * 1000), |t| t.0);
    let web = WebConfig {
        server,
        www_port: port,
        static_port: port + 1,
        connections: f.connections.unwrap_or(d::WEB_CONNECTIONS),
        pipelining: f.pipelining.unwrap_or(d::WEB_PIPELINING),
        dns_delay: f.dns_delay.map_or(SimDuration::ZERO, |t| t.0),
        pages: f.pages,
        reading_time: match f.reading.unwrap_or(ReadingDist::Exponential) {
            ReadingDist::Exponential => ReadingTime::Exponential(reading),
            ReadingDist::Fixed => ReadingTime::Fixed(reading),
        },
        model,
        seed,
        cfg,
    };
    let srv = HttpServer::new(vec![(port, ObjectClass::Main), (port + 1, ObjectClass::Embedded)], model, seed, cfg);
    (AnyApp::Web(Box::new(WebClient::new(web))), Some(AnyApp::Http(srv)))
}

fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// Bytes the server's connections sent, their retransmissions, and delivered bytes at the client.
fn server_totals(w: &World, server: Option<&AnyApp>) -> (u64, u64, u64) {
    let Some(AnyApp::Http(s)) = server else { return (0, 0, 0) };
    let (mut sent, mut rtx, mut segs) = (0, 0, 0);
    for c in &s.conns {
        let st = w.ep(c.sock.0).stats();
        sent += st.bytes_sent;
        rtx += st.retransmitted_segments;
        segs += st.data_segments_sent;
    }
    (sent, rtx, segs)
}

/// The web or video fields of a flow's summary entry.
pub(crate) fn summary(m: &mut Map<String, Value>, w: &World, client: &AnyApp, server: Option<&AnyApp>, start: SimTime, end: SimTime) {
    let (bytes_sent, rtx, data_segs) = server_totals(w, server);
    m.insert("bytes_sent".into(), json!(bytes_sent));
    m.insert("retransmitted_segments".into(), json!(rtx));
    m.insert("data_segments_sent".into(), json!(data_segs));
    let active = (end - start).as_secs_f64();
    match client {
        AnyApp::Web(c) => {
            let times: Vec<f64> = c.pages.iter().map(|p| p.time.as_secs_f64()).collect();
            let bytes: u64 = c.pages.iter().map(|p| p.bytes).sum();
            let mean = if times.is_empty() { f64::NAN } else { times.iter().sum::<f64>() / times.len() as f64 };
            let max = times.iter().copied().fold(f64::NAN, f64::max);
            m.insert("pages".into(), json!(times.len()));
            m.insert("page_time_mean_s".into(), num(mean));
            m.insert("page_time_max_s".into(), num(max));
            m.insert("bytes_delivered".into(), json!(bytes));
            m.insert("goodput_bps".into(), num(if active > 0.0 { bytes as f64 * 8.0 / active } else { 0.0 }));
            m.insert("connections_opened".into(), json!(c.connections_opened()));
            let table: Vec<Value> = c
                .pages
                .iter()
                .map(|p| json!({ "start_s": p.start.as_secs_f64(), "time_s": p.time.as_secs_f64(), "objects": p.objects, "bytes": p.bytes }))
                .collect();
            m.insert("page_table".into(), Value::Array(table));
        }
        AnyApp::Video(v) => {
            let p = &v.player;
            let delivered = v.sock.map_or(0, |s| w.ep(s.0).stats().bytes_delivered);
            m.insert("bytes_delivered".into(), json!(delivered));
            m.insert("goodput_bps".into(), num(if active > 0.0 { delivered as f64 * 8.0 / active } else { 0.0 }));
            m.insert("video_bitrate_bps".into(), json!(p.bitrate_bps));
            m.insert("video_length_s".into(), json!(p.length.as_secs_f64()));
            m.insert("video_startup_s".into(), p.startup_delay().map_or(Value::Null, |d| json!(d.as_secs_f64())));
            m.insert("video_stalls".into(), json!(p.stalls.len()));
            m.insert("video_stall_time_s".into(), json!(p.stall_time(end).as_secs_f64()));
            m.insert("video_satisfied".into(), json!(p.satisfied(end)));
            m.insert("video_finished".into(), json!(p.finished_at.is_some()));
            m.insert("video_downloaded_bytes".into(), json!(v.body));
            if let Mode::Paced { buffer_target, block } = v.mode {
                m.insert("video_mode".into(), json!("paced"));
                m.insert("video_buffer_target_s".into(), json!(buffer_target.as_secs_f64()));
                m.insert("video_block_bytes".into(), json!(block));
                m.insert("video_requests".into(), json!(v.requests));
                m.insert("video_on_time_s".into(), json!(v.on_time.as_secs_f64()));
            } else {
                m.insert("video_mode".into(), json!("greedy"));
            }
        }
        _ => unreachable!("a web or video flow"),
    }
}
