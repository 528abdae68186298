//! The time-series tables of a run, as [`Sink`]s the run loop pushes rows into.
//!
//! Every table and its columns are declared here (`docs/outputs.md` documents them). With an
//! output directory each sink streams to `DIR/timeseries/<table>.parquet` in row groups of
//! [`celltcp_metrics::sink::ROW_GROUP_ROWS`] rows, so memory stays bounded whatever the
//! simulated duration; without one the rows are kept in memory and returned as [`Table`]s.
//!
//! Rows are in push order: time order across flows, links, UEs and cells (a series of one
//! flow is still in time order). The `iperf` and `ping` tables are built from the apps' own
//! reports at the end (one row per interval or echo) and written the same way.
//!
//! A table nobody asked for is not opened: `lte_ue`/`lte_cell` only with `[lte]`,
//! `wifi_bss`/`wifi_sta` only with `[[wifi]]`,
//! `segments`/`acks` only when a flow has `trace_segments`, `mptcp_subflows` only when a flow
//! uses MPTCP; `rtt` is always there but gets
//! rows only with `record_rtt` (or ping flows).

use std::path::{Path, PathBuf};

use celltcp_metrics::sink::ROW_GROUP_ROWS;
use celltcp_metrics::ColType::{self, F64, I64};
use celltcp_metrics::{Sink, SinkError, Table};

/// The subdirectory of the output directory that holds the tables.
pub const TIMESERIES_DIR: &str = "timeseries";

pub const TCP: &[(&str, ColType)] = &[
    ("time_s", F64),
    ("flow", I64),
    ("cwnd_bytes", F64),
    ("ssthresh_bytes", F64),
    ("srtt_ms", F64),
    ("bytes_in_flight", F64),
    ("pacing_rate_bps", F64),
    ("delivered_bytes", F64),
];
pub const QUEUE: &[(&str, ColType)] = &[("time_s", F64), ("link", I64), ("queue_bytes", F64), ("queue_pkts", F64)];
pub const RTT: &[(&str, ColType)] = &[("time_s", F64), ("flow", I64), ("rtt_ms", F64)];
pub const IPERF: &[(&str, ColType)] = &[("flow", I64), ("start_s", F64), ("end_s", F64), ("bytes", F64), ("bits_per_second", F64), ("retransmits", F64), ("packets", F64), ("lost_packets", F64), ("jitter_ms", F64), ("omitted", I64)];
pub const LTE_UE: &[(&str, ColType)] = &[
    ("time_s", F64),
    ("ue", I64),
    ("dl_rlc_buffer_bytes", F64),
    ("dl_rlc_retx_bytes", F64),
    ("ul_rlc_buffer_bytes", F64),
    ("dl_pdcp_buffer_bytes", F64),
    ("ul_pdcp_buffer_bytes", F64),
    ("cqi", F64),
    ("dl_phy_mbps", F64),
    ("dl_prbs_per_tti", F64),
    ("cell", I64),
    ("x_m", F64),
    ("y_m", F64),
    ("rsrp_serving_dbm", F64),
    ("rsrp_best_neighbour_dbm", F64),
    ("detached", I64),
];
pub const LTE_CELL: &[(&str, ColType)] = &[("time_s", F64), ("cell", I64), ("dl_prb_utilization", F64), ("ul_prb_utilization", F64), ("dl_phy_mbps", F64), ("ul_phy_mbps", F64)];
pub const WIFI_BSS: &[(&str, ColType)] = &[("time_s", F64), ("bss", I64), ("busy_fraction", F64), ("goodput_mbps", F64)];
pub const WIFI_STA: &[(&str, ColType)] = &[
    ("time_s", F64),
    ("bss", I64),
    ("sta", I64),
    ("down_goodput_mbps", F64),
    ("up_goodput_mbps", F64),
    ("airtime_fraction", F64),
    ("ap_queue_pkts", F64),
    ("sta_queue_pkts", F64),
    ("down_mcs", I64),
    ("up_mcs", I64),
];
pub const SEGMENTS: &[(&str, ColType)] = &[("time_s", F64), ("flow", I64), ("seq", I64), ("len", I64), ("retransmission", I64)];
pub const ACKS: &[(&str, ColType)] = &[("time_s", F64), ("flow", I64), ("ack", I64), ("sack", I64)];
/// One row per `[[proxy]]` per sample: the bytes it holds (read and not yet acknowledged by
/// the other leg's peer) and its open intercepted connections.
pub const PROXY: &[(&str, ColType)] = &[("time_s", F64), ("proxy", I64), ("held_bytes", F64), ("connections", I64)];
/// One row per subflow of an MPTCP flow's sending connection per sample.
pub const MPTCP_SUBFLOWS: &[(&str, ColType)] = &[
    ("time_s", F64),
    ("flow", I64),
    ("subflow", I64),
    ("cwnd_bytes", F64),
    ("srtt_ms", F64),
    ("bytes_in_flight", F64),
    ("delivered_bytes", F64),
];
pub const PING: &[(&str, ColType)] = &[("flow", I64), ("seq", I64), ("time_s", F64), ("rtt_ms", F64)];

/// The sinks of one run.
pub(crate) struct Sinks {
    /// `DIR/timeseries`, or `None` to keep the tables in memory.
    dir: Option<PathBuf>,
    row_group_rows: usize,
    pub tcp: Sink,
    pub queue: Sink,
    pub rtt: Sink,
    pub lte_ue: Option<Sink>,
    pub lte_cell: Option<Sink>,
    pub wifi_bss: Option<Sink>,
    pub wifi_sta: Option<Sink>,
    pub segments: Option<Sink>,
    pub acks: Option<Sink>,
    pub mptcp_subflows: Option<Sink>,
    /// Opened by [`Sinks::open_proxy`] in a run with `[[proxy]]`.
    pub proxy: Option<Sink>,
}

impl Sinks {
    /// Opens the `proxy` table (a run with `[[proxy]]`). A file that cannot be created leaves
    /// the table out (the other tables of the run were created in the same directory).
    pub fn open_proxy(&mut self) {
        self.proxy = open_sink(self.dir.as_deref(), "proxy", PROXY, self.row_group_rows).ok();
    }

    /// Opens the tables of a run: files under `out_dir/timeseries` when there is an output
    /// directory, memory otherwise.
    pub fn open(out_dir: Option<&Path>, lte: bool, wifi: bool, traced: bool, mptcp: bool) -> Result<Sinks, SinkError> {
        Sinks::open_with(out_dir, lte, wifi, traced, mptcp, ROW_GROUP_ROWS)
    }

    pub fn open_with(out_dir: Option<&Path>, lte: bool, wifi: bool, traced: bool, mptcp: bool, row_group_rows: usize) -> Result<Sinks, SinkError> {
        let dir = out_dir.map(|d| d.join(TIMESERIES_DIR));
        if let Some(d) = &dir {
            std::fs::create_dir_all(d).map_err(|e| SinkError { path: d.clone(), message: e.to_string() })?;
        }
        let open = |name: &str, cols: &[(&str, ColType)]| open_sink(dir.as_deref(), name, cols, row_group_rows);
        let some = |on: bool, name: &str, cols: &[(&str, ColType)]| on.then(|| open(name, cols)).transpose();
        Ok(Sinks {
            tcp: open("tcp", TCP)?,
            queue: open("queue", QUEUE)?,
            rtt: open("rtt", RTT)?,
            lte_ue: some(lte, "lte_ue", LTE_UE)?,
            lte_cell: some(lte, "lte_cell", LTE_CELL)?,
            wifi_bss: some(wifi, "wifi_bss", WIFI_BSS)?,
            wifi_sta: some(wifi, "wifi_sta", WIFI_STA)?,
            segments: some(traced, "segments", SEGMENTS)?,
            acks: some(traced, "acks", ACKS)?,
            mptcp_subflows: some(mptcp, "mptcp_subflows", MPTCP_SUBFLOWS)?,
            proxy: None,
            dir,
            row_group_rows,
        })
    }

    /// Ends every table, adding `iperf` and `ping` (built at the end, `None` when the run has
    /// no such rows). Returns the in-memory tables (none with an output directory) and the
    /// files written, relative to the output directory.
    pub fn finish(self, iperf: Option<Table>, ping: Option<Table>) -> Result<(Vec<Table>, Vec<String>), SinkError> {
        let Sinks { dir, row_group_rows, tcp, queue, rtt, lte_ue, lte_cell, wifi_bss, wifi_sta, segments, acks, mptcp_subflows, proxy } = self;
        let built = |t: Option<Table>, cols: &[(&str, ColType)]| -> Result<Option<Sink>, SinkError> {
            let Some(t) = t else { return Ok(None) };
            let mut s = open_sink(dir.as_deref(), &t.name, cols, row_group_rows)?;
            s.push_table(&t);
            Ok(Some(s))
        };
        let iperf = built(iperf, IPERF)?;
        let ping = built(ping, PING)?;
        let (mut tables, mut files) = (Vec::new(), Vec::new());
        for s in [Some(tcp), Some(queue), Some(rtt), iperf, lte_ue, lte_cell, wifi_bss, wifi_sta, segments, acks, mptcp_subflows, proxy, ping].into_iter().flatten() {
            let name = s.name().to_string();
            match s.finish()? {
                Some(t) => tables.push(t),
                None => files.push(format!("{TIMESERIES_DIR}/{name}.parquet")),
            }
        }
        Ok((tables, files))
    }
}

fn open_sink(dir: Option<&Path>, name: &str, cols: &[(&str, ColType)], row_group_rows: usize) -> Result<Sink, SinkError> {
    match dir {
        Some(d) => Sink::parquet(&d.join(format!("{name}.parquet")), name, cols, row_group_rows),
        None => Ok(Sink::memory(name, cols)),
    }
}
