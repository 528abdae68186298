"""Study ``iperf-lte`` (paper 000): Kar & Mishra, "Performance Analysis of TCP over LTE"
(Clemson University, 2020).

The paper runs iperf3 between a UE and a public iperf3 server over an emulated end-to-end LTE
network (NextEPC + OpenAirInterface on POWDER; §V-B, Figs. 20 and 21) and over Clemson's private
band-41 TDD network (§IV, §V-A): downlink (``-R``) and uplink, the TCP window ``-w`` at the
64 KB default, 1 MB, 2 MB and 4 MB; TCP CUBIC against Reno; and RTT samples over LTE against a
wired connection between the same hosts (Fig. 22). Its findings (§VI):

1. the LTE uplink is far slower than the downlink (62.2 kbit/s against 6.27 Mbit/s);
2. on the uplink, a larger window raises the bandwidth from 64 KB up to 2 MB (by 1.23 Mbit/s);
3. beyond 2 MB a larger window brings no further increase;
4. on the downlink the window makes no difference (5.7–5.9 Mbit/s for every window);
5. CUBIC performs better than Reno on LTE;
6. the LTE RTT varies far more than the wired RTT between the same hosts.

celltcp's setting is in ``iperf-lte/scenario.toml``: one UE 300 m from a 20 MHz band-41 eNB
(TDD configuration 2, EPA fading), an iperf server 40 ms beyond the PGW, and ping probes to the
UE and to a wired host with about the same idle RTT. Finding 4 depends on where the paper's
downlink bottleneck was (a public server in France, 5.7–5.9 Mbit/s whatever the window, i.e.
not the LTE cell): celltcp's cell has no such cap, so that check is expected to disagree, and
the report says so with the numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import sweep_plots as sp
from ..report import Finding, Verdict
from . import Study, StudyFigure, run_dir

WINDOW = "flow.0.window"
REVERSE = "flow.0.reverse"
CC = "flow.0.cc"
WINDOWS = ["64KB", "1MB", "2MB", "4MB"]
CCS = ["cubic", "newreno"]
DIRECTIONS = ["downlink", "uplink"]
#: Fixed colours: per congestion control, per direction, per path.
CC_COLORS = {"cubic": "#D55E00", "newreno": "#0072B2"}
DIR_COLORS = {"downlink": "#009E73", "uplink": "#CC79A7"}
SERIES = "direction, cc"
SERIES_COLORS = {"downlink, cubic": "#D55E00", "downlink, newreno": "#0072B2",
                 "uplink, cubic": "#E69F00", "uplink, newreno": "#56B4E9"}

#: Thresholds of the checks (documented in docs/studies.md).
UL_DL_RATIO_MAX = 0.5      # "much slower": at most half the downlink
GROWTH_MIN = 1.10          # "grows": at least +10 %
FLAT_TOL = 0.10            # "no increase": within +10 %
SPREAD_FACTOR = 5.0        # "much more variation": 5x the wired spread ...
SPREAD_MIN_MS = 5.0        # ... and at least 5 ms


def _is_true(v: Any) -> bool:
    return v is True or v == 1 or str(v).lower() == "true"


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Adds ``direction`` (downlink for iperf -R), ``window`` and ``cc`` columns."""
    df = df.copy()
    if REVERSE in df.columns:
        df["direction"] = ["downlink" if _is_true(v) else "uplink" for v in df[REVERSE]]
    if WINDOW in df.columns:
        df["window"] = df[WINDOW].astype(str)
    if CC in df.columns:
        df["cc"] = df[CC].astype(str)
    if "direction" in df.columns and "cc" in df.columns:
        df[SERIES] = df["direction"] + ", " + df["cc"]
    return df


def _iperf(df: pd.DataFrame) -> pd.DataFrame:
    d = prepare(df) if "direction" not in df.columns else df
    sel = d[d["flow"] == "iperf"]
    if sel.empty:
        raise ValueError("no rows for the iperf flow")
    return sel


def _mean_gp(d: pd.DataFrame, **eq: str) -> float:
    sel = d
    for k, v in eq.items():
        sel = sel[sel[k] == v]
    v = pd.to_numeric(sel["goodput_bps"], errors="coerce").dropna()
    if v.empty:
        raise ValueError(f"no goodput for {eq}")
    return float(v.mean())


def _windows(d: pd.DataFrame) -> list[str]:
    return [str(w) for w in sp.ordered(d["window"])]


def _mbps(x: float) -> str:
    return f"{x / 1e6:.2f} Mbit/s"


# --- the findings' checks ------------------------------------------------------------------


def check_uplink_slower(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    w = _windows(d)[-1]
    parts, ok = [], True
    for cc in sp.ordered(d["cc"]):
        ul = _mean_gp(d, direction="uplink", window=w, cc=cc)
        dl = _mean_gp(d, direction="downlink", window=w, cc=cc)
        ratio = ul / dl
        ok &= ratio <= UL_DL_RATIO_MAX
        parts.append(f"{cc}: uplink {_mbps(ul)} vs downlink {_mbps(dl)} (ratio {ratio:.2f})")
    return Verdict(f"window {w}: " + "; ".join(parts), ok)


def check_uplink_grows(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    if "64KB" not in set(d["window"]) or "2MB" not in set(d["window"]):
        raise ValueError("needs windows 64KB and 2MB")
    lo = _mean_gp(d, direction="uplink", window="64KB")
    hi = _mean_gp(d, direction="uplink", window="2MB")
    return Verdict(f"uplink {_mbps(lo)} at 64 KB, {_mbps(hi)} at 2 MB "
                   f"(×{hi / lo:.2f}, +{(hi - lo) / 1e6:.2f} Mbit/s)", hi >= GROWTH_MIN * lo)


def check_no_gain_beyond_2mb(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    if "4MB" not in set(d["window"]) or "2MB" not in set(d["window"]):
        raise ValueError("needs windows 2MB and 4MB")
    parts, ok = [], True
    for direction in DIRECTIONS:
        a = _mean_gp(d, direction=direction, window="2MB")
        b = _mean_gp(d, direction=direction, window="4MB")
        ok &= b <= (1 + FLAT_TOL) * a
        parts.append(f"{direction} {_mbps(a)} at 2 MB, {_mbps(b)} at 4 MB ({(b / a - 1) * 100:+.1f} %)")
    return Verdict("; ".join(parts), ok)


def check_downlink_flat(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    ws = _windows(d)
    g = {w: _mean_gp(d, direction="downlink", window=w) for w in ws}
    spread = max(g.values()) / min(g.values())
    text = ", ".join(f"{w} {g[w] / 1e6:.2f}" for w in ws)
    return Verdict(f"downlink Mbit/s by window: {text} (max/min ×{spread:.2f}); the paper's "
                   "downlink was capped outside the cell, celltcp's only by the window and the "
                   "cell", spread <= 1 + FLAT_TOL)


def check_cubic_beats_reno(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    keys = ["direction", "window", "seed"]
    cub = d[d["cc"] == "cubic"].set_index(keys)["goodput_bps"]
    ren = d[d["cc"] == "newreno"].set_index(keys)["goodput_bps"]
    both = pd.concat({"cubic": cub, "newreno": ren}, axis=1).dropna()
    if both.empty:
        raise ValueError("no (direction, window, seed) run with both cubic and newreno")
    ratio = float(both["cubic"].sum() / both["newreno"].sum())
    wins = int((both["cubic"] > both["newreno"] * 1.005).sum())
    losses = int((both["newreno"] > both["cubic"] * 1.005).sum())
    return Verdict(f"CUBIC/Reno goodput over {len(both)} paired runs ×{ratio:.3f}; CUBIC ahead "
                   f"by > 0.5 % in {wins}, behind in {losses}, equal (window-limited) in "
                   f"{len(both) - wins - losses}", ratio > 1.0 and wins > losses)


def _spread(d: pd.DataFrame, flow: str) -> np.ndarray:
    sel = d[d["flow"] == flow]
    if sel.empty:
        raise ValueError(f"no rows for flow {flow!r}")
    p95 = pd.to_numeric(sel["rtt_p95_ms"], errors="coerce").to_numpy(float)
    low = pd.to_numeric(sel["rtt_min_ms"], errors="coerce").to_numpy(float)
    spread: np.ndarray = p95 - low
    return spread


def check_rtt_variation(df: pd.DataFrame) -> Verdict:
    d = prepare(df)
    lte, wired = _spread(d, "ping-lte"), _spread(d, "ping-wired")
    lte_m, wired_m = float(np.nanmedian(lte)), float(np.nanmedian(wired))
    base_lte = float(np.nanmedian(pd.to_numeric(d.loc[d["flow"] == "ping-lte", "rtt_min_ms"])))
    base_w = float(np.nanmedian(pd.to_numeric(d.loc[d["flow"] == "ping-wired", "rtt_min_ms"])))
    ok = lte_m >= max(SPREAD_FACTOR * wired_m, SPREAD_MIN_MS)
    return Verdict(f"ping RTT p95 − min, median over runs: LTE {lte_m:.1f} ms, wired "
                   f"{wired_m:.2f} ms (minimum RTT LTE {base_lte:.1f} ms, wired {base_w:.1f} ms)", ok)


FINDINGS = [
    Finding("uplink-slower",
            "The LTE uplink is much slower than the downlink: 62.2 kbit/s against 6.27 Mbit/s "
            "(§VI, Figs. 20 and 21).", check_uplink_slower,
            f"mean uplink goodput ≤ {UL_DL_RATIO_MAX} × downlink at the largest window, for "
            "each congestion control"),
    Finding("uplink-window-grows",
            "On the uplink, a larger TCP window raises the bandwidth, by up to 1.23 Mbit/s "
            "from the 64 KB default to 2 MB (§VI).", check_uplink_grows,
            f"mean uplink goodput at 2 MB ≥ {GROWTH_MIN} × at 64 KB"),
    Finding("no-gain-beyond-2mb",
            "Beyond 2 MB, a larger window does not increase the bandwidth (§VI).",
            check_no_gain_beyond_2mb,
            f"mean goodput at 4 MB ≤ {1 + FLAT_TOL} × at 2 MB, on the uplink and on the downlink"),
    Finding("downlink-window-flat",
            "On the downlink, changing the window (64 KB, 1 MB, 2 MB, 4 MB) does not change "
            "the bandwidth: 5.7–5.9 Mbit/s (§VI, Fig. 21).", check_downlink_flat,
            f"max/min of the mean downlink goodput over the windows ≤ {1 + FLAT_TOL}"),
    Finding("cubic-better",
            "TCP CUBIC performs better than TCP Reno on LTE (§VI).", check_cubic_beats_reno,
            "paired by direction, window and seed: total CUBIC goodput > total NewReno goodput, "
            "and CUBIC ahead in more pairs than behind"),
    Finding("lte-rtt-varies",
            "RTT samples over LTE vary much more than over a wired connection between the "
            "same hosts (§VI, Fig. 22).", check_rtt_variation,
            f"median over runs of the ping RTT spread (p95 − min) on LTE ≥ "
            f"max({SPREAD_FACTOR:g} × the wired spread, {SPREAD_MIN_MS:g} ms)"),
]


# --- figures -------------------------------------------------------------------------------


def figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    d = prepare(df)
    ip = d[d["flow"] == "iperf"]
    ws = _windows(ip)
    out = [
        StudyFigure(
            "goodput_window", "Goodput against the TCP window",
            "iperf goodput against the window (-w), downlink (-R) and uplink, CUBIC and NewReno; "
            "mean over seeds with 95 % t-intervals (paper: Figs. 20 and 21).",
            sp.lines(ip, "window", "goodput_bps", SERIES, x_order=ws,
                     group_order=list(SERIES_COLORS), colors=SERIES_COLORS,
                     title="iperf goodput, band 41 TDD (config 2), 20 MHz")),
        StudyFigure(
            "goodput_direction", "Uplink against downlink",
            "CUBIC goodput per window, downlink against uplink (grouped bars, 95 % t-interval "
            "whiskers).",
            sp.bars(ip, "window", "goodput_bps", "direction", where={"cc": "cubic"}, x_order=ws,
                    group_order=DIRECTIONS, colors=DIR_COLORS, title="CUBIC: downlink vs uplink")),
        StudyFigure(
            "rtt_window", "TCP RTT against the window",
            "Mean TCP RTT of the iperf flow over the runs of each window (box plots): a window "
            "beyond the path's BDP only fills the RLC/PDCP buffers.",
            sp.boxes(ip, "window", "rtt_mean_ms", "direction", x_order=ws,
                     group_order=DIRECTIONS, colors=DIR_COLORS)),
    ]
    # RTT distributions: ping over LTE (light and heavy load) against the wired path.
    try:
        light = run_dir(sweep_dir, d, window=ws[0], direction="downlink", cc="cubic")
        heavy = run_dir(sweep_dir, d, window=ws[-1], direction="downlink", cc="cubic")
        out.append(StudyFigure(
            "rtt_cdf", "RTT over LTE and over a wired path",
            f"CDF of ping RTT samples (every 23 ms) to the UE over LTE, while the downlink iperf "
            f"runs with a {ws[0]} and a {ws[-1]} window, and to a wired host with about the same "
            "idle RTT (paper: Fig. 22).",
            sp.sample_cdf({f"LTE, iperf -w {ws[0]}": (light, "ping-lte"),
                           f"LTE, iperf -w {ws[-1]}": (heavy, "ping-lte"),
                           "wired": (light, "ping-wired")}, "ping", "rtt_ms",
                          colors={f"LTE, iperf -w {ws[0]}": "#009E73",
                                  f"LTE, iperf -w {ws[-1]}": "#D55E00", "wired": "#000000"},
                          logx=True, title="ping RTT, LTE vs wired")))
        runs = {f"{cc}, -w {w}": run_dir(sweep_dir, d, window=w, direction="downlink", cc=cc)
                for w in (ws[0], ws[-1]) for cc in CCS if ((ip["window"] == w) & (ip["cc"] == cc)).any()}
        out.append(StudyFigure(
            "traces_downlink", "cwnd and goodput over time",
            "Downlink cwnd and goodput of the first seed's runs, CUBIC and NewReno with the "
            "smallest and largest window, side by side.",
            sp.traces(runs, flows=["iperf"], rows=("cwnd", "throughput"))))
    except (KeyError, FileNotFoundError):
        pass  # run directories not available (e.g. a table loaded on its own)
    return out


STUDY = Study(
    name="iperf-lte",
    paper_id="000",
    summary="iperf over a TDD band-41 LTE cell: window 64 KB..4 MB, uplink vs downlink, "
            "CUBIC vs Reno, RTT over LTE vs wired (paper 000)",
    paper="S. Kar, P. K. Mishra, \"Performance Analysis of TCP over LTE\", Clemson University "
          "project report, 2020",
    intro_html=(
        "<p>The paper measures TCP with iperf3 over LTE networks (Clemson's private band-41 "
        "network and an emulated end-to-end network: NextEPC and OpenAirInterface): uplink and "
        "downlink (<code>-R</code>), windows (<code>-w</code>) of 64 KB, 1 MB, 2 MB and 4 MB, "
        "CUBIC against Reno, and RTT samples over LTE against a wired path.</p>"
        "<p>celltcp runs one UE 300 m from a 20 MHz TDD eNB at 2.6 GHz (band 41, "
        "uplink/downlink configuration 2, EPA fading, RLC AM), an iperf server 40 ms beyond the "
        "PGW, and ping probes (every 23 ms) to the UE and to a wired host whose idle RTT is about "
        "the LTE path's. The sweep varies the window, the direction and the congestion control "
        "over several seeds (shadowing and fading draws).</p>"),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    aggregate_by=("direction", "window", "cc", "flow"),
    metrics=("goodput_bps", "rtt_mean_ms", "rtt_p95_ms", "retransmitted_segments"),
    table_flows=("iperf", "ping-lte", "ping-wired"),
)
