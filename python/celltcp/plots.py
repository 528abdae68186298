"""Figures from a finished run directory, fit for a paper.

Reads only the files of the run (``summary.json`` and ``timeseries/*.parquet``) and never runs
anything. Writes ``DIR/figures/NAME.png`` (300 dpi) and ``DIR/figures/NAME.svg``:

=============  ==============================================================================
cwnd           congestion window per flow over time, ssthresh dashed where finite
throughput     goodput per flow over time, from ``delivered_bytes`` in the ``tcp`` series
rtt_cdf        CDF of RTT samples per flow (``rtt`` series; ``srtt_ms`` of ``tcp`` otherwise)
queue          queue length per link over time
iperf          iperf interval reports per flow (when the run has an ``iperf`` series)
ping           ping RTT per flow over time (when the run has a ``ping`` series)
seq            segment-sequence ("Stevens") graph per traced flow: every data segment sent,
               retransmissions marked, the ACKs (when the run has a ``segments`` series, i.e.
               a flow with ``trace_segments = true``)
=============  ==============================================================================

and, for a run with an LTE radio access network (an ``lte`` section in ``summary.json``):

================  ===========================================================================
lte_cqi_mcs       per-UE distribution of the downlink CQI and MCS of scheduled transport blocks
lte_sinr          downlink effective SINR per UE against distance to the serving eNB
lte_rlc_buffer    downlink RLC buffer occupancy per UE over time (``lte_ue`` series)
lte_pdcp_buffer   downlink PDCP SDUs held until RLC AM confirms them, per UE over time (AM only)
lte_cell          PRB utilisation and PHY throughput per cell over time (``lte_cell`` series)
lte_harq_rlc      HARQ BLER and RLC retransmission ratio per UE
lte_prbs_goodput  PRBs per scheduled TTI and application goodput per UE
lte_handover      per handed-over UE: RSRP of serving and best other cell, serving cell, TCP
                  data acknowledged, with each handover's decision and interruption marked
lte_ho_zoom       around the first handover: the segment-sequence graph of the UE's download
                  when it is traced (study 001's plot), else the data acknowledged; cwnd below
================  ===========================================================================

and, for a run with Wi-Fi BSSs (a ``wifi`` section in ``summary.json``):

================  ===========================================================================
wifi_busy         channel busy fraction and BSS goodput over time (``wifi_bss`` series)
wifi_stations     per station: goodput down and up, and its share of the airtime
================  ===========================================================================

Uses matplotlib's object API with the Agg canvas, so it does not touch pyplot's global
backend (safe to call from a notebook).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib import cm as mcm
from matplotlib import colors as mcolors
from matplotlib import patheffects as mpe
from matplotlib import ticker as mticker
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

__all__ = ["plot_run", "run_figure", "FIGURES", "LTE_FIGURES", "WIFI_FIGURES"]

FIGURES = ("cwnd", "throughput", "rtt_cdf", "queue", "iperf", "ping", "seq")
#: The figures of runs with an LTE radio access network.
LTE_FIGURES = ("lte_cqi_mcs", "lte_sinr", "lte_rlc_buffer", "lte_pdcp_buffer", "lte_cell",
               "lte_harq_rlc", "lte_prbs_goodput", "lte_handover", "lte_ho_zoom")
#: The figures of runs with Wi-Fi BSSs.
WIFI_FIGURES = ("wifi_busy", "wifi_stations")
#: Most UEs drawn in the handover timeline.
_HO_UES_MAX = 4

#: ssthresh at or above this is "infinite" (the initial ssthresh of most stacks).
INFINITE_BYTES = 2.0**62
#: ... and so is one above this many times the largest cwnd (e.g. Linux's 0x7fffffff segments).
INFINITE_CWNDS = 100.0

_STYLE: dict[str, Any] = {
    # names come from the user's scenario: "$x$" in a flow name is text, not mathtext
    "text.parse_math": False,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.2,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": True,
    "legend.framealpha": 0.85,
    "legend.edgecolor": "0.8",
    "savefig.dpi": 300,
    "svg.fonttype": "none",
    "svg.hashsalt": "celltcp",
}
_FIGSIZE = (6.0, 3.4)
#: Up to this many flows each gets its own line (or cwnd panel); beyond, a percentile band across
#: the flows with a few highlighted ones (lowest, median, highest).
_MANY_FLOWS = 8
#: Most cwnd panels drawn as small multiples; beyond, the band.
_CWND_PANELS = 24
#: The colour map of figures with more series than the default colour cycle has colours.
_MANY_CMAP = "turbo"
#: Most points drawn for one CDF curve (keeps SVG files small for runs with many samples).
_CDF_POINTS = 2000


@contextmanager
def _style(font_scale: float = 1.0) -> Iterator[None]:
    style = dict(_STYLE)
    if font_scale != 1.0:
        for k in ("font.size", "axes.titlesize", "axes.labelsize", "legend.fontsize",
                  "xtick.labelsize", "ytick.labelsize"):
            style[k] = float(style[k]) * font_scale
    with mpl.rc_context(cast(Any, style)):
        yield


class _Run:
    """What the figures need from a run directory, or from a ``celltcp.Result`` (which may be
    kept in memory)."""

    def __init__(self, d: Path | Any) -> None:
        self.result = None if isinstance(d, Path) else d
        self.dir = d if isinstance(d, Path) else d.dir
        summary = (json.loads((d / "summary.json").read_text(encoding="utf-8"))
                   if isinstance(d, Path) else d.summary)
        self.flows: list[dict[str, Any]] = list(summary.get("flows", []))
        self.links: list[dict[str, Any]] = list(summary.get("links", []))
        lte = summary.get("lte")
        self.lte: dict[str, Any] | None = lte if isinstance(lte, dict) and lte.get("ues") else None
        wifi = summary.get("wifi")
        self.wifi: list[dict[str, Any]] = list(wifi) if isinstance(wifi, list) else []
        #: Flow names (glob patterns) to draw in per-flow figures; None draws every flow.
        self.only_flows: Sequence[str] | None = None

    def wants(self, i: int) -> bool:
        if self.only_flows is None:
            return True
        import fnmatch

        name = self.flow_name(i)
        return any(fnmatch.fnmatchcase(name, pat) for pat in self.only_flows)

    def table(self, name: str) -> pd.DataFrame | None:
        if self.result is not None:
            try:
                df = self.result.timeseries(name, names=False)
            except KeyError:
                return None
            return df if len(df) else None
        p = self.dir / "timeseries" / f"{name}.parquet"
        if not p.is_file():
            return None
        df = pd.read_parquet(p)
        return df if len(df) else None

    def flow_name(self, i: int) -> str:
        if 0 <= i < len(self.flows):
            return str(self.flows[i].get("name", f"flow {i}"))
        return f"flow {i}"

    def link_name(self, i: int) -> str:
        if 0 <= i < len(self.links):
            return str(self.links[i].get("name", f"link {i}"))
        return f"link {i}"


def _color(i: int, n: int = 0) -> Any:
    """Colour ``i`` of ``n``: the default cycle while it has enough colours, else ``n`` evenly
    spaced colours of a perceptual colour map, so that no two of the ``n`` series share one."""
    cycle = mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    if n <= len(cycle):
        return cycle[i % len(cycle)]
    return mpl.colormaps[_MANY_CMAP](0.02 + 0.96 * (i % n) / (n - 1))


def _flow_color(run: _Run, i: int) -> Any:
    """The colour of flow ``i`` in every per-flow figure of a run."""
    return _color(i, len(run.flows))


def _selected(run: _Run, ids: Sequence[int]) -> list[int]:
    """The flows of ``ids`` that the figures should draw (``flows=`` of :func:`plot_run`)."""
    return [i for i in ids if run.wants(i)]


def _highlights(values: dict[int, float], k: int = 3) -> list[int]:
    """The flows with the lowest, the median and the highest value: the few drawn over a band."""
    order = sorted(values, key=lambda i: (values[i], i))
    if len(order) <= k:
        return order
    return sorted({order[0], order[len(order) // 2], order[-1]})


def _band(ax: Axes, x: np.ndarray, rows: np.ndarray, color: Any, what: str) -> None:
    """Median and 10-90th percentile band over the rows (one per flow) at each x."""
    with np.errstate(all="ignore"):
        lo, med, hi = np.nanpercentile(rows, [10, 50, 90], axis=0)
    ax.fill_between(x, lo, hi, color=color, alpha=0.25, linewidth=0, step="pre",
                    label=f"{what}: 10th-90th percentile")
    ax.plot(x, med, color=color, linewidth=1.4, drawstyle="steps-pre", label=f"{what}: median")


def _groups(df: pd.DataFrame, key: str) -> Iterator[tuple[int, pd.DataFrame]]:
    for k, g in df.groupby(key, sort=True):
        yield int(k), g


def _bytes_unit(max_bytes: float) -> tuple[float, str]:
    if max_bytes >= 2e6:
        return 1e6, "MB"
    if max_bytes >= 2e3:
        return 1e3, "KB"
    return 1.0, "bytes"


def _new_figure() -> tuple[Figure, Axes]:
    fig = Figure(figsize=_FIGSIZE)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    return fig, ax


def _finish(fig: Figure, outdir: Path, name: str, formats: Sequence[str]) -> list[Path]:
    for ax in fig.axes:
        if getattr(fig, "_celltcp_no_legends", False):
            break
        labels = ax.get_legend_handles_labels()[1]
        if ax.get_legend() is None and labels:
            if len(labels) > _MANY_FLOWS:  # many entries: beside the axes, not over the data
                ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="x-small",
                          ncols=1 if len(labels) <= 20 else 2)
            else:
                ax.legend(loc="best")
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    written = []
    for fmt in formats:
        path = outdir / f"{name}.{fmt}"
        # No creation date in the files, so the same run gives the same figures.
        meta: dict[str, Any] = {"Date": None} if fmt in ("svg", "pdf") else {}
        fig.savefig(path, format=fmt, metadata=meta)
        written.append(path)
    return written


def _no_data(ax: Axes, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what} samples", transform=ax.transAxes, ha="center", va="center")


# ---------------------------------------------------------------------------------------------
# One function per figure; each returns the Figure, or None when the run has no data for it.


def fig_cwnd(run: _Run) -> Figure | None:
    """One panel per flow (shared axes), so that sawtooths do not hide each other: stacked for a
    few flows, small multiples for up to 24, and beyond that the 10-90th percentile band of all
    flows' cwnd with the lowest, median and highest flow drawn over it."""
    tcp = run.table("tcp")
    if tcp is None or "cwnd_bytes" not in tcp:
        return None
    max_cwnd = float(tcp["cwnd_bytes"].max())
    infinite = min(INFINITE_BYTES, INFINITE_CWNDS * max_cwnd) if max_cwnd > 0 else INFINITE_BYTES
    ss = tcp["ssthresh_bytes"].to_numpy(float) if "ssthresh_bytes" in tcp else None
    finite_ss = ss[ss < infinite] if ss is not None else np.array([])
    top = max(max_cwnd, float(finite_ss.max()) if finite_ss.size else 0.0)
    scale, unit = _bytes_unit(top)
    groups = [(i, g) for i, g in _groups(tcp, "flow") if run.wants(i)]
    n = len(groups)
    if n == 0:
        return None
    if n > _CWND_PANELS:
        return _cwnd_band(run, groups, scale, unit)
    cols = 1 if n <= 4 else 2 if n <= 8 else 3 if n <= 15 else 4
    rows = -(-n // cols)
    many = cols > 1
    height = (1.2 + 1.5 * rows) if n > 1 and not many else (0.9 + 1.25 * rows) if many else _FIGSIZE[1]
    fig = Figure(figsize=(_FIGSIZE[0] if not many else 2.6 * cols + 0.6, height))
    FigureCanvasAgg(fig)
    grid = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    axes = list(grid.flat)
    for ax, (i, g) in zip(axes, groups):
        t = g["time_s"].to_numpy(float)
        c = _flow_color(run, i)
        ax.plot(t, g["cwnd_bytes"].to_numpy(float) / scale, color=c,
                label="cwnd" if many else f"{run.flow_name(i)} cwnd", drawstyle="steps-post")
        if "ssthresh_bytes" in g:
            s = g["ssthresh_bytes"].to_numpy(float)
            s = np.where(s >= infinite, np.nan, s)
            if np.isfinite(s).any():
                ax.plot(t, s / scale, color=c, linestyle="--", linewidth=0.9,
                        drawstyle="steps-post", label="ssthresh")
        ax.set_ylim(0, top / scale * 1.05 if top > 0 else None)
        if many:
            ax.set_title(run.flow_name(i), fontsize="small", pad=2)
        else:
            ax.set_ylabel(f"cwnd ({unit})")
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    for ax in axes[n:]:
        ax.set_visible(False)
    if many:
        for r in range(rows):
            grid[r, 0].set_ylabel(unit)
        for ax in axes[max(0, n - cols):n]:
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("time (s)")
        fig.suptitle(f"Congestion window of {n} flows ({unit}; dashed: ssthresh)", x=0.02,
                     ha="left", fontsize=10)
        fig.set_layout_engine("tight", rect=(0, 0, 1, 0.98))
        # the panel titles name the flows: no legend in each panel (see _finish)
        fig._celltcp_no_legends = True  # type: ignore[attr-defined]
    else:
        axes[n - 1].set_xlabel("time (s)")
        axes[0].set_title("Congestion window")
    return fig


def _cwnd_band(run: _Run, groups: list[tuple[int, pd.DataFrame]], scale: float,
               unit: str) -> Figure:
    t_all = np.unique(np.concatenate([g["time_s"].to_numpy(float) for _, g in groups]))
    grid_t = np.linspace(t_all[0], t_all[-1], min(400, max(2, t_all.size)))
    rows = np.full((len(groups), grid_t.size), np.nan)
    means: dict[int, float] = {}
    for k, (i, g) in enumerate(groups):
        t = g["time_s"].to_numpy(float)
        w = g["cwnd_bytes"].to_numpy(float) / scale
        idx = np.searchsorted(t, grid_t, side="right") - 1
        ok = idx >= 0
        rows[k, ok] = w[idx[ok]]
        means[i] = float(np.mean(w)) if w.size else 0.0
    fig, ax = _new_figure()
    _band(ax, grid_t, rows, "0.45", f"{len(groups)} flows")
    for i in _highlights(means):
        g = dict(groups)[i]
        ax.plot(g["time_s"].to_numpy(float), g["cwnd_bytes"].to_numpy(float) / scale,
                color=_flow_color(run, i), linewidth=0.9, drawstyle="steps-post",
                label=run.flow_name(i))
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"cwnd ({unit})")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Congestion window: {len(groups)} flows, lowest, median and highest mean drawn")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def _goodput_series(t: np.ndarray, delivered: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Goodput (Mbit/s) in bins of ``width`` seconds from cumulative delivered bytes."""
    order = np.argsort(t, kind="stable")
    t, delivered = t[order], delivered[order]
    if t.size < 2 or t[-1] <= t[0]:
        return np.array([]), np.array([])
    edges = np.arange(t[0], t[-1] + width * 0.5, width)
    if edges.size < 2:
        edges = np.array([t[0], t[-1]])
    d = np.interp(edges, t, delivered)
    rate = np.diff(d) * 8.0 / np.diff(edges) / 1e6
    return edges[1:], rate


def _nice(x: float) -> float:
    """The smallest of 1, 2, 5 x 10^k that is at least ``x``."""
    k = np.floor(np.log10(x))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10**k >= x * (1 - 1e-9):
            return float(m * 10**k)
    return float(10 ** (k + 1))


def _capacity(run: _Run) -> tuple[float, str] | None:
    """The rate (bit/s) and name of the busiest rated link direction, drawn as the capacity the
    flows share; None when no link is busy (e.g. the radio is the bottleneck)."""
    best: tuple[float, float, str] | None = None
    for ln in run.links:
        rate, util = ln.get("rate_bps"), ln.get("utilization")
        if isinstance(rate, (int, float)) and isinstance(util, (int, float)) and rate > 0:
            if util >= 0.5 and (best is None or util > best[0]):
                best = (float(util), float(rate), str(ln.get("name", "")))
    return (best[1], best[2]) if best else None


def _udp_received(run: _Run) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Each UDP flow's cumulative bytes received at the ends of its interval reports (from 0
    at the first report's start), to bin like the TCP flows' delivered bytes."""
    ip = run.table("iperf")
    if ip is None or "bytes" not in ip:
        return {}
    out = {}
    for i, g in _groups(ip, "flow"):
        if 0 <= i < len(run.flows) and run.flows[i].get("app") == "udp" and len(g):
            g = g.sort_values("start_s")
            t = np.concatenate([[float(g["start_s"].iloc[0])], g["end_s"].to_numpy(float)])
            b = np.concatenate([[0.0], np.cumsum(g["bytes"].to_numpy(float))])
            out[i] = (t, b)
    return out


def _active_until(run: _Run, i: int) -> float | None:
    """When flow ``i``'s test ended (iperf ``duration``, a finite transfer), if it did."""
    if not 0 <= i < len(run.flows):
        return None
    f = run.flows[i]
    start, active = f.get("start_s"), f.get("active_s")
    if f.get("completed") or f.get("app") == "iperf":
        if isinstance(start, (int, float)) and isinstance(active, (int, float)) and active > 0:
            return float(start) + float(active)
    return None


def fig_throughput(run: _Run) -> Figure | None:
    """Goodput per flow over time (TCP from the delivered bytes, UDP from its interval
    reports); beyond 8 flows, the flows' 10-90th percentile band with the lowest, median and
    highest drawn, and the sum of all flows in a panel above; the capacity of the busiest link as
    a line. A flow's line ends when its test does."""
    tcp = run.table("tcp")
    if tcp is not None and "delivered_bytes" not in tcp:
        tcp = None
    # UDP flows, from their interval reports: (times, cumulative bytes received)
    udp = _udp_received(run)
    if tcp is None and not udp:
        return None
    times = [tcp["time_s"].to_numpy(float)] if tcp is not None else []
    times += [t for t, _ in udp.values()]
    t_all = np.concatenate(times)
    span = float(t_all.max() - t_all.min())
    # About 100 points over the run, but never finer than the sampling interval.
    dt = np.diff(np.unique(times[0]))
    sample = float(np.median(dt)) if dt.size else span
    width = _nice(max(span / 100.0, sample)) if span > 0 else 1.0
    cumulative = [(i, g["time_s"].to_numpy(float), g["delivered_bytes"].to_numpy(float))
                  for i, g in (_groups(tcp, "flow") if tcp is not None else [])]
    cumulative += [(i, t, b) for i, (t, b) in udp.items()]
    series: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for i, t, delivered in sorted(cumulative, key=lambda c: c[0]):
        if not run.wants(i):
            continue
        x, y = _goodput_series(t, delivered, width)
        end = _active_until(run, i)
        if end is not None and x.size:
            keep = x <= end + width * (1 + 1e-9)
            x, y = x[keep], y[keep]
        if x.size:
            series[i] = (x, y)
    cap = _capacity(run)
    n = len(series)
    if n <= _MANY_FLOWS:
        fig, ax = _new_figure()
        for i, (x, y) in series.items():
            ax.plot(x, y, color=_flow_color(run, i), label=run.flow_name(i), drawstyle="steps-pre")
        if not ax.lines:
            _no_data(ax, "goodput")
        axes = [ax]
    else:
        fig = Figure(figsize=(_FIGSIZE[0] * 1.3, _FIGSIZE[1] * 1.6))
        FigureCanvasAgg(fig)
        ax_sum, ax = fig.subplots(2, 1, sharex=True, height_ratios=(1, 1.6))
        xs = max((x for x, _ in series.values()), key=len)
        rows = np.full((n, xs.size), np.nan)
        for k, (x, y) in enumerate(series.values()):
            pos = np.searchsorted(xs, x)
            ok = pos < xs.size
            rows[k, pos[ok]] = y[ok]
        ax_sum.plot(xs, np.nansum(rows, axis=0), color="0.15", drawstyle="steps-pre",
                    label=f"all {n} flows")
        ax_sum.set_ylabel("Mbit/s")
        ax_sum.set_ylim(bottom=0)
        _band(ax, xs, rows, "0.45", f"{n} flows")
        means = {i: float(np.mean(y)) for i, (_, y) in series.items()}
        for i in _highlights(means):
            x, y = series[i]
            ax.plot(x, y, color=_flow_color(run, i), linewidth=0.9, drawstyle="steps-pre",
                    label=run.flow_name(i))
        ax_sum.set_title(f"Goodput of all {n} flows together ({width:g} s bins)")
        ax.set_title("Goodput per flow")
        axes = [ax_sum, ax]
    if cap is not None:
        rate, name = cap
        axes[0].axhline(rate / 1e6, color="0.3", linestyle=":", linewidth=1.0,
                        label=f"capacity of {name} ({rate / 1e6:g} Mbit/s)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbit/s)")
    if n <= _MANY_FLOWS:
        ax.set_title(f"Goodput ({width:g} s bins)")
    ax.set_ylim(bottom=0)
    for a in axes:
        handles = a.get_legend_handles_labels()[0]
        if handles and n <= _MANY_FLOWS:
            # below the axes, in columns: the plot keeps the figure's whole width
            a.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=min(3, len(handles)),
                     frameon=False)
        elif handles:
            a.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def fig_rtt_cdf(run: _Run) -> Figure | None:
    rtt = run.table("rtt")
    col, source = "rtt_ms", "RTT samples"
    if rtt is None or "rtt_ms" not in rtt:
        rtt = run.table("tcp")
        col, source = "srtt_ms", "smoothed RTT"
        if rtt is None or col not in rtt:
            return None
    fig, ax = _new_figure()
    for i, g in _groups(rtt, "flow"):
        if not run.wants(i):
            continue
        v = np.sort(g[col].to_numpy(float))
        v = v[np.isfinite(v)]
        if v.size == 0:
            continue
        p = np.arange(1, v.size + 1) / v.size
        if v.size > _CDF_POINTS:  # the same curve, drawn from evenly spaced quantiles
            keep = np.unique(np.linspace(0, v.size - 1, _CDF_POINTS).round().astype(np.int64))
            v, p = v[keep], p[keep]
        ax.plot(v, p, color=_flow_color(run, i), label=run.flow_name(i), drawstyle="steps-post")
    if not ax.lines:
        _no_data(ax, "RTT")
    ax.set_xlabel("RTT (ms)")
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"RTT distribution ({source})")
    return fig


def fig_queue(run: _Run) -> Figure | None:
    q = run.table("queue")
    if q is None:
        return None
    use_bytes = "queue_bytes" in q
    col = "queue_bytes" if use_bytes else "queue_pkts"
    if col not in q:
        return None
    scale, unit = _bytes_unit(float(q[col].max())) if use_bytes else (1.0, "packets")
    groups = list(_groups(q, "link"))
    # Links whose queue never holds anything (fast access links) only clutter the figure.
    busy = [(i, g) for i, g in groups if float(g[col].max()) > 0]
    fig, ax = _new_figure()
    if not busy:
        _no_data(ax, "non-empty queue")
    for i, g in busy:
        ax.plot(g["time_s"].to_numpy(float), g[col].to_numpy(float) / scale, color=_color(i),
                label=run.link_name(i), drawstyle="steps-post")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"queue length ({unit})")
    omitted = len(groups) - len(busy)
    ax.set_title("Queue length" + (f" ({omitted} always-empty omitted)" if busy and omitted else ""))
    ax.set_ylim(bottom=0)
    return fig


def fig_iperf(run: _Run) -> Figure | None:
    ip = run.table("iperf")
    if ip is None or "bits_per_second" not in ip:
        return None
    fig, ax = _new_figure()
    flows = [(i, g) for i, g in _groups(ip, "flow") if run.wants(i)]
    n = len(flows)
    if n == 0:
        return None
    for k, (i, g) in enumerate(flows):
        start = g["start_s"].to_numpy(float)
        end = g["end_s"].to_numpy(float)
        width = (end - start) / n * 0.9
        ax.bar(start + (end - start) * k / n, g["bits_per_second"].to_numpy(float) / 1e6,
               width=width, align="edge", color=_flow_color(run, i), label=run.flow_name(i))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title("iperf interval reports")
    top = float(ip["bits_per_second"].max()) / 1e6
    if top > 0:
        ax.set_ylim(0, top * 1.3)  # room for the legend above the bars
    return fig


def fig_ping(run: _Run) -> Figure | None:
    pg = run.table("ping")
    if pg is None or "rtt_ms" not in pg:
        return None
    fig, ax = _new_figure()
    for i, g in _groups(pg, "flow"):
        if not run.wants(i):
            continue
        ax.plot(g["time_s"].to_numpy(float), g["rtt_ms"].to_numpy(float), color=_flow_color(run, i),
                marker=".", markersize=3, linewidth=0.8, label=run.flow_name(i))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("RTT (ms)")
    ax.set_title("ping")
    ax.set_ylim(bottom=0)
    return fig


def _seg_trace(run: _Run, f: int | None = None) -> dict[int, tuple[pd.DataFrame, pd.DataFrame | None]]:
    """The ``segments`` and ``acks`` rows of each traced flow (of flow ``f`` only, if given)."""
    seg = run.table("segments")
    if seg is None or not {"time_s", "flow", "seq", "len", "retransmission"} <= set(seg.columns):
        return {}
    ack = run.table("acks")
    if ack is not None and not {"time_s", "flow", "ack"} <= set(ack.columns):
        ack = None
    out: dict[int, tuple[pd.DataFrame, pd.DataFrame | None]] = {}
    for i, g in _groups(seg, "flow"):
        if f is None or i == f:
            a = ack[ack["flow"] == i] if ack is not None else None
            out[i] = (g, a if a is not None and len(a) else None)
    return out


def _stevens(ax: Axes, seg: pd.DataFrame, ack: pd.DataFrame | None, base: float, scale: float) -> None:
    """A tcptrace / Wireshark "Stevens" graph: a dot at the sequence offset of every data
    segment sent, retransmissions as red crosses, the cumulative ACK (and the highest SACKed
    byte, where above it) as steps. Offsets are drawn as ``(seq - base) / scale``. The points
    are rasterised (a long run has hundreds of thousands), the axes and text stay vector."""
    rtx = seg["retransmission"].to_numpy() != 0
    t = seg["time_s"].to_numpy(float)
    y = (seg["seq"].to_numpy(float) - base) / scale
    ax.scatter(t[~rtx], y[~rtx], s=3, marker=".", linewidths=0, color=_color(0),
               label="segment sent", rasterized=True, zorder=2)
    if rtx.any():
        ax.scatter(t[rtx], y[rtx], s=16, marker="x", linewidths=0.9, color="tab:red",
                   label=f"retransmission ({int(rtx.sum())})", rasterized=True, zorder=3)
    if ack is not None:
        ta = ack["time_s"].to_numpy(float)
        a = ack["ack"].to_numpy(float)
        ax.plot(ta, (a - base) / scale, color=_color(2), linewidth=0.9, drawstyle="steps-post",
                label="ACK", rasterized=True, zorder=1)
        if "sack" in ack:
            sk = ack["sack"].to_numpy(float)
            if (sk > a).any():
                ax.plot(ta, (sk - base) / scale, color=_color(4), linewidth=0.7, linestyle="--",
                        drawstyle="steps-post", label="highest SACK", rasterized=True, zorder=1)


def _ue_of(run: _Run, f: int) -> str | None:
    """The UE at either end of flow ``f`` (for marking its handovers), if any."""
    ues = {str(u.get("name")) for u in _ues(run)} if run.lte else set()
    fl = run.flows[f] if 0 <= f < len(run.flows) else {}
    for end in ("to", "from"):
        if str(fl.get(end)) in ues:
            return str(fl.get(end))
    return None


def fig_seq(run: _Run) -> Figure | None:
    """One Stevens graph per traced flow (``trace_segments = true``), handovers of its UE marked."""
    traced = _seg_trace(run)
    if not traced:
        return None
    n = len(traced)
    fig = Figure(figsize=(_FIGSIZE[0], 1.2 + 2.2 * n) if n > 1 else (_FIGSIZE[0], 3.8))
    FigureCanvasAgg(fig)
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for ax, (i, (seg, ack)) in zip(axes, traced.items()):
        top = float((seg["seq"] + seg["len"]).max())
        scale, unit = _bytes_unit(top)
        _stevens(ax, seg, ack, 0.0, scale)
        ue = _ue_of(run, i)
        hos = [h for h in _handovers(run) if ue is not None and h.get("ue") == ue]
        _mark_handovers(ax, hos, label=True)
        ax.set_ylabel(f"sequence ({unit})")
        ax.set_ylim(bottom=0)
        ax.set_title(run.flow_name(i), fontsize=9, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), markerscale=2)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("Segment sequence (Stevens graph)", fontsize=10)
    return fig


# ---------------------------------------------------------------------------------------------
# LTE: drawn only when summary.json has an ``lte`` section (per UE and per cell) and, for the
# time-series figures, the ``lte_ue`` / ``lte_cell`` tables. UEs keep their summary order (the
# ``ue`` index of the series) on every per-UE axis.

#: CQI values (TS 36.213 Table 7.2.3-1) and downlink MCS indices (Table 7.1.7.1-1).
_N_CQI, _N_MCS = 16, 29
#: Block error target of the CQI (TS 36.213 §7.2.3), drawn as a reference line.
_CQI_BLER_TARGET = 0.10
#: Up to this many UEs, lines are told apart by colour and a legend; beyond, by distance.
_UE_LEGEND_MAX = 8


def _num(x: Any) -> float:
    """A summary number; ``null`` (not computable, e.g. a UE never scheduled) as NaN."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def _ues(run: _Run) -> list[dict[str, Any]]:
    return list(run.lte["ues"]) if run.lte else []


def _ue_labels(ues: Sequence[dict[str, Any]]) -> tuple[list[str], str]:
    """Tick labels (``*`` marks a radio link failure) and the note that explains the mark."""
    labels = [str(u.get("name", f"UE {i}")) + ("*" if u.get("radio_link_failure") else "")
              for i, u in enumerate(ues)]
    note = " (* radio link failure)" if any(u.get("radio_link_failure") for u in ues) else ""
    return labels, note


def _ue_figure(n: int, rows: int, height: float) -> tuple[Figure, np.ndarray]:
    """Panels sharing a per-UE x axis, wider for many UEs so that every label stays legible."""
    width = _FIGSIZE[0] if n <= 30 else min(9.0, _FIGSIZE[0] + 0.1 * (n - 30))
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return fig, axes


def _ue_axis(ax: Axes, labels: Sequence[str]) -> None:
    """UE names as x ticks: horizontal for a few UEs, vertical beyond, thinned beyond 60."""
    n = len(labels)
    x = np.arange(n)
    step = int(np.ceil(n / 60)) if n > 60 else 1
    size = 8.0 if n <= 30 else 7.0
    # horizontal while the longest label (about 0.6 em a character) fits in its slot
    slot_pt = ax.get_figure().get_figwidth() * 0.8 * 72.0 / max(n, 1) * step  # type: ignore[union-attr]
    longest = max((len(s) for s in labels), default=0)
    flat = longest * 0.6 * size + 3.0 <= slot_pt
    ax.set_xticks(x[::step])
    ax.set_xticklabels(labels[::step], rotation=0 if flat else 90, fontsize=size)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_xlabel("UE")
    ax.grid(False, axis="x")


def _bars(ax: Axes, series: Sequence[tuple[str, np.ndarray, Any]]) -> None:
    """Grouped bars, one group per UE: ``series`` is (label, values, colour)."""
    k = len(series)
    width = 0.8 / k
    for j, (label, v, c) in enumerate(series):
        x = np.arange(v.size) - 0.4 + width * (j + 0.5)
        ax.bar(x, np.nan_to_num(v), width=width, color=c, label=label, linewidth=0)


def _headroom(ax: Axes, frac: float = 0.12) -> None:
    """y from 0 to a little above the highest bar or marker (bars never touch the frame)."""
    top = 0.0
    for p in ax.patches:
        if isinstance(p, Rectangle):
            top = max(top, float(p.get_height()))
    for line in ax.lines:
        y = np.asarray(line.get_ydata(), dtype=float)
        if y.size and np.isfinite(y).any():
            top = max(top, float(np.nanmax(y)))
    ax.set_ylim(0, top * (1 + frac) if top > 0 else 1.0)


def _legend_above(ax: Axes, ncol: int) -> None:
    """Legend in one row above the panel, clear of the bars; bars first."""
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda k: (not isinstance(handles[k], BarContainer), k))
    ax.legend([handles[k] for k in order], [labels[k] for k in order], loc="lower right",
              bbox_to_anchor=(1.0, 1.0), ncol=ncol, borderaxespad=0.2, fontsize=7.5)


def fig_lte_cqi_mcs(run: _Run) -> Figure | None:
    """Heat maps: share of each UE's new transport blocks per CQI (top) and MCS (bottom)."""
    ues = _ues(run)
    if not ues:
        return None
    labels, note = _ue_labels(ues)
    n = len(ues)
    cqi = np.array([(list(u["dl"].get("cqi_hist") or []) + [0] * _N_CQI)[:_N_CQI] for u in ues],
                   dtype=float)
    mcs = np.array([(list(u["dl"].get("mcs_hist") or []) + [0] * _N_MCS)[:_N_MCS] for u in ues],
                   dtype=float)
    fig, axes = _ue_figure(n, 2, 5.6)

    def shares(h: np.ndarray) -> np.ndarray:
        tot = h.sum(axis=1, keepdims=True)
        return np.asarray(np.divide(h, tot, out=np.zeros_like(h), where=tot > 0) * 100.0)

    peak = max(float(shares(cqi).max()), float(shares(mcs).max()))
    vmax = min(100.0, _nice(peak)) if peak > 0 else 100.0
    mesh = None
    for ax, h, top, what in ((axes[0], cqi, _N_CQI, "CQI"), (axes[1], mcs, _N_MCS, "MCS index")):
        tot = h.sum(axis=1, keepdims=True)
        # zero cells stay white, so that the occupied values stand out
        mesh = ax.pcolormesh(np.arange(n + 1) - 0.5, np.arange(top + 1) - 0.5,
                             np.ma.masked_equal(shares(h).T, 0.0), cmap="viridis_r", vmin=0,
                             vmax=vmax, shading="flat", rasterized=True)
        mean = np.divide((h * np.arange(top)).sum(axis=1), tot[:, 0],
                         out=np.full(n, np.nan), where=tot[:, 0] > 0)
        ax.plot(np.arange(n), mean, linestyle="none", marker="_", markersize=9 if n <= 30 else 5,
                markeredgewidth=1.6, color="#d62728", label="mean" if top == _N_CQI else "_mean",
                path_effects=[mpe.withStroke(linewidth=3.2, foreground="white")])
        ax.set_ylim(-0.5, top - 0.5)
        ax.set_ylabel(what)
        ax.grid(False)
        ax.yaxis.set_major_locator(mticker.MaxNLocator(integer=True, nbins=8))
    if mesh is not None:
        cb = fig.colorbar(mesh, ax=list(axes), fraction=0.035, pad=0.02, aspect=40)
        cb.set_label("share of the UE's transport blocks (%)")
    _ue_axis(axes[1], labels)
    _legend_above(axes[0], 1)  # outside the map: no cell is hidden
    fig.suptitle("Downlink CQI and MCS of scheduled transport blocks" + note, fontsize=10)
    fig.set_layout_engine("constrained")
    return fig


def fig_lte_sinr(run: _Run) -> Figure | None:
    """Mean downlink effective SINR per UE against distance, min–max as error bars."""
    ues = _ues(run)
    if not ues:
        return None
    cells = sorted({str(u.get("cell", "")) for u in ues})
    fig, ax = _new_figure()
    drawn = False
    for k, cell in enumerate(cells):
        mine = [u for u in ues if str(u.get("cell", "")) == cell]
        d = np.array([_num(u.get("distance_m")) for u in mine])
        dl = [u.get("dl", {}) for u in mine]
        mean = np.array([_num(x.get("sinr_db_mean")) for x in dl])
        lo = np.array([_num(x.get("sinr_db_min")) for x in dl])
        hi = np.array([_num(x.get("sinr_db_max")) for x in dl])
        ul = np.array([_num(u.get("ul", {}).get("sinr_db_mean")) for u in mine])
        ok = np.isfinite(d) & np.isfinite(mean)
        tag = f"{cell}: " if len(cells) > 1 else ""
        c = _color(k)
        if ok.any():
            err = np.vstack([np.nan_to_num(mean - lo)[ok], np.nan_to_num(hi - mean)[ok]])
            ax.errorbar(d[ok], mean[ok], yerr=np.clip(err, 0, None), fmt="o", markersize=4,
                        color=c, ecolor=c, elinewidth=0.8, capsize=2.5, alpha=0.9,
                        label=f"{tag}downlink\nmean, min–max")
            drawn = True
        okul = np.isfinite(d) & np.isfinite(ul)
        if okul.any():
            ax.plot(d[okul], ul[okul], linestyle="none", marker="^", markersize=4.5,
                    markerfacecolor="none", color=c, label=f"{tag}uplink\nmean")
            drawn = True
    if not drawn:
        _no_data(ax, "SINR")
    ax.set_xlabel("distance to serving eNB (m)")
    ax.set_ylabel("effective SINR (dB)")
    ax.set_xlim(left=0)
    if drawn and len(cells) > 1:
        # one entry per cell (its colour) and one per direction (its marker), not cells x
        # directions: seven cells would make a legend taller than the plot
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=_color(k), marker="s", linestyle="none", markersize=6)
                   for k in range(len(cells))]
        handles += [Line2D([], [], color="0.2", marker="o", markersize=4, linestyle="none"),
                    Line2D([], [], color="0.2", marker="^", markersize=4.5, markerfacecolor="none",
                           linestyle="none")]
        names = [*cells, "downlink: mean,\nmin–max", "uplink: mean"]
        ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small",
                  ncols=1 if len(cells) <= 10 else 2)
    elif drawn:  # beside the axes: with many UEs no corner is free; downlink first
        handles, names = ax.get_legend_handles_labels()
        order = sorted(range(len(names)), key=lambda k: ("uplink" in names[k], k))
        ax.legend([handles[k] for k in order], [names[k] for k in order], loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    ax.set_title("SINR of first transmissions per UE")
    return fig


def _ue_distances(run: _Run) -> np.ndarray:
    return np.array([_num(u.get("distance_m")) for u in _ues(run)])


def _ue_occupancy(run: _Run, t: pd.DataFrame, occ: np.ndarray, what: str, title: str) -> Figure:
    """One line per UE of a per-UE byte count over time (KB or MB): named lines up to
    ``_UE_LEGEND_MAX`` UEs, beyond that coloured by distance to the eNB with a colour bar."""
    t = t.assign(_occ=occ)
    scale, unit = _bytes_unit(float(np.nanmax(occ)) if occ.size else 0.0)
    if unit == "bytes":
        scale, unit = 1e3, "KB"
    ues = _ues(run)
    groups = list(_groups(t, "ue"))
    fig, ax = _new_figure()
    by_distance = len(groups) > _UE_LEGEND_MAX
    dist = _ue_distances(run)
    cmap = mpl.colormaps["viridis"]
    finite = dist[np.isfinite(dist)]
    norm = mcolors.Normalize(vmin=float(finite.min()) if finite.size else 0.0,
                                vmax=float(finite.max()) if finite.size else 1.0)
    for i, g in groups:
        name = str(ues[i].get("name", f"UE {i}")) if i < len(ues) else f"UE {i}"
        if by_distance:
            d = dist[i] if i < dist.size else np.nan
            c = cmap(norm(d)) if np.isfinite(d) else "0.5"
            ax.plot(g["time_s"].to_numpy(float), g["_occ"].to_numpy(float) / scale, color=c,
                    linewidth=0.8, alpha=0.9)
        else:
            ax.plot(g["time_s"].to_numpy(float), g["_occ"].to_numpy(float) / scale,
                    color=_color(i), linewidth=0.9, label=name)
    if by_distance:
        sm = mcm.ScalarMappable(norm=norm, cmap=cmap)
        cb = fig.colorbar(sm, ax=ax, fraction=0.05, pad=0.02)
        cb.set_label("UE distance to eNB (m)")
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"{what} ({unit})")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{title}, {len(groups)} UEs")
    return fig


def fig_lte_rlc_buffer(run: _Run) -> Figure | None:
    """Bytes waiting in each UE's downlink RLC entity at the eNB (new data + retransmissions)."""
    t = run.table("lte_ue")
    if t is None or "dl_rlc_buffer_bytes" not in t or not run.lte:
        return None
    occ = t["dl_rlc_buffer_bytes"].to_numpy(float)
    if "dl_rlc_retx_bytes" in t:
        occ = occ + t["dl_rlc_retx_bytes"].to_numpy(float)
    return _ue_occupancy(run, t, occ, "RLC buffer", "Downlink RLC buffer occupancy")


def fig_lte_pdcp_buffer(run: _Run) -> Figure | None:
    """SDU bytes each UE's downlink PDCP transmitter holds until RLC AM confirms delivery (the
    queue lossless handover forwards); none with RLC UM/TM, where PDCP holds nothing."""
    t = run.table("lte_ue")
    if t is None or "dl_pdcp_buffer_bytes" not in t or not run.lte:
        return None
    occ = t["dl_pdcp_buffer_bytes"].to_numpy(float)
    if not np.any(occ > 0):
        return None
    return _ue_occupancy(run, t, occ, "PDCP held", "Downlink PDCP SDUs held until RLC AM confirms them")


def _binned(t: np.ndarray, v: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Means of ``v`` in bins of ``width`` seconds ending at the returned times."""
    ok = np.isfinite(v)
    t, v = t[ok], v[ok]
    if t.size == 0:
        return t, v
    idx = np.floor((t - t.min()) / width * (1 - 1e-12)).astype(np.int64)
    sums = np.bincount(idx, weights=v)
    counts = np.bincount(idx)
    keep = counts > 0
    ends = t.min() + width * (np.arange(sums.size) + 1)
    return ends[keep], sums[keep] / counts[keep]


def fig_lte_cell(run: _Run) -> Figure | None:
    """Two panels per run: PRB utilisation and PHY throughput of every cell, both directions."""
    c = run.table("lte_cell")
    if c is None or "dl_prb_utilization" not in c:
        return None
    cells = list(run.lte.get("cells", [])) if run.lte else []
    times = np.unique(c["time_s"].to_numpy(float))
    span = float(times[-1] - times[0]) if times.size else 0.0
    dt = np.diff(times)
    sample = float(np.median(dt)) if dt.size else span
    width = _nice(max(span / 100.0, sample)) if span > 0 else 1.0
    fig = Figure(figsize=(_FIGSIZE[0], 4.8))
    FigureCanvasAgg(fig)
    ax_u, ax_t = fig.subplots(2, 1, sharex=True)
    groups = list(_groups(c, "cell"))
    for i, g in groups:
        name = str(cells[i].get("name", f"cell {i}")) if i < len(cells) else f"cell {i}"
        tag = f"{name} " if len(groups) > 1 else ""
        tt = g["time_s"].to_numpy(float)
        for col_u, col_t, ls, what in (("dl_prb_utilization", "dl_phy_mbps", "-", "downlink"),
                                       ("ul_prb_utilization", "ul_phy_mbps", "--", "uplink")):
            if col_u in g:
                x, y = _binned(tt, g[col_u].to_numpy(float) * 100.0, width)
                ax_u.plot(x, y, color=_color(i), linestyle=ls, label=f"{tag}{what}",
                          drawstyle="steps-pre")
            if col_t in g:
                x, y = _binned(tt, g[col_t].to_numpy(float), width)
                ax_t.plot(x, y, color=_color(i), linestyle=ls, label=f"{tag}{what}",
                          drawstyle="steps-pre")
    ax_u.set_ylabel("PRB utilisation (%)")
    ax_u.set_ylim(0, 105)
    ax_t.set_ylabel("PHY throughput (Mbit/s)")
    ax_t.set_ylim(bottom=0)
    ax_t.set_xlabel("time (s)")
    for ax in (ax_u, ax_t):
        if ax.lines:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax_u.set_title(f"Cell load ({width:g} s bins)")
    return fig


def fig_lte_harq_rlc(run: _Run) -> Figure | None:
    """HARQ block error ratio (top) and RLC AM retransmission ratio (bottom) per UE."""
    ues = _ues(run)
    if not ues:
        return None
    labels, note = _ue_labels(ues)
    n = len(ues)

    def col(d: str, key: str) -> np.ndarray:
        return np.array([_num(u.get(d, {}).get(key)) for u in ues])

    def ratio(d: str) -> np.ndarray:
        tx, retx = col(d, "rlc_pdus_tx"), col(d, "rlc_pdus_retx")
        return np.asarray(np.divide(retx, tx, out=np.zeros(n), where=tx > 0) * 100.0)

    fig, (ax_b, ax_r) = _ue_figure(n, 2, 4.8)
    dl_c, ul_c = _color(0), _color(1)
    _bars(ax_b, [("downlink", col("dl", "bler") * 100.0, dl_c),
                 ("uplink", col("ul", "bler") * 100.0, ul_c)])
    res = col("dl", "residual_bler") * 100.0
    res = np.where(res > 0, res, np.nan)  # markers only where HARQ gave blocks up
    if np.isfinite(res).any():
        ax_b.plot(np.arange(n) - 0.2, res, linestyle="none", marker="v", markersize=3.5,
                  color="k", label="downlink residual")
    ax_b.axhline(_CQI_BLER_TARGET * 100.0, color="0.3", linestyle=":", linewidth=1.0,
                 label=f"CQI target ({_CQI_BLER_TARGET:.0%})")
    ax_b.set_ylabel("HARQ BLER (%)")
    _headroom(ax_b)
    _legend_above(ax_b, 4)
    # same colours as the legend above; no second legend
    _bars(ax_r, [("_downlink", ratio("dl"), dl_c), ("_uplink", ratio("ul"), ul_c)])
    ax_r.set_ylabel("RLC PDUs retx. (%)")
    _headroom(ax_r)
    if not (ratio("dl").any() or ratio("ul").any()):
        ax_r.set_ylim(0, 1)
        ax_r.text(0.5, 0.5, "no RLC retransmissions (or RLC UM/TM)", transform=ax_r.transAxes,
                  ha="center", va="center")
    _ue_axis(ax_r, labels)
    fig.suptitle("HARQ block errors and RLC ARQ retransmissions" + note, fontsize=10)
    return fig


def _goodput_per_ue(run: _Run, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Application goodput (Mbit/s) received by (downlink) and sent from (uplink) each UE."""
    index = {nm: i for i, nm in enumerate(names)}
    dl, ul = np.zeros(len(names)), np.zeros(len(names))
    for f in run.flows:
        if f.get("app") == "ping":
            continue
        g = _num(f.get("goodput_bps"))
        if not np.isfinite(g):
            continue
        src, dst = str(f.get("from", "")), str(f.get("to", ""))
        if f.get("reverse"):  # iperf -R: the data flows from `to` to `from`
            src, dst = dst, src
        if dst in index:
            dl[index[dst]] += g / 1e6
        if src in index:
            ul[index[src]] += g / 1e6
    return dl, ul


def fig_lte_prbs_goodput(run: _Run) -> Figure | None:
    """PRBs per scheduled TTI (top) and application goodput against PHY throughput (bottom)."""
    ues = _ues(run)
    if not ues:
        return None
    labels, note = _ue_labels(ues)
    n = len(ues)
    names = [str(u.get("name", "")) for u in ues]

    def col(d: str, key: str) -> np.ndarray:
        return np.array([_num(u.get(d, {}).get(key)) for u in ues])

    fig, (ax_p, ax_g) = _ue_figure(n, 2, 4.8)
    dl_c, ul_c = _color(0), _color(1)
    _bars(ax_p, [("downlink", col("dl", "prbs_per_tti"), dl_c),
                 ("uplink", col("ul", "prbs_per_tti"), ul_c)])
    ax_p.set_ylabel("PRBs per\nscheduled TTI")
    _headroom(ax_p)
    _legend_above(ax_p, 2)
    dl, ul = _goodput_per_ue(run, names)
    series = [("downlink goodput", dl, dl_c)]
    if ul.any():
        series.append(("uplink goodput", ul, ul_c))
    _bars(ax_g, series)
    phy = col("dl", "phy_throughput_bps") / 1e6
    x_dl = np.arange(n) - 0.4 + 0.8 / len(series) * 0.5
    ax_g.plot(x_dl, phy, linestyle="none", marker="_", markersize=9 if n <= 30 else 5,
              markeredgewidth=1.6, color="k", label="downlink PHY throughput")
    ax_g.set_ylabel("throughput (Mbit/s)")
    _headroom(ax_g)
    _legend_above(ax_g, 3)
    _ue_axis(ax_g, labels)
    fig.suptitle("Radio resources and goodput per UE" + note, fontsize=10)
    return fig


def _handovers(run: _Run) -> list[dict[str, Any]]:
    return [h for h in (run.lte or {}).get("handovers", []) or [] if isinstance(h, dict)]


def _mark_handovers(ax: Axes, hos: Sequence[dict[str, Any]], label: bool) -> None:
    """Decision (dotted line) and detach-to-attach interruption (shaded) of each handover."""
    for k, h in enumerate(hos):
        first = label and k == 0
        ax.axvline(_num(h.get("decided_s")), color="0.35", linestyle=":", linewidth=0.9,
                   label="handover decided" if first else None)
        a, b = _num(h.get("detach_s")), _num(h.get("attach_s"))
        if np.isfinite(a) and np.isfinite(b):
            ax.axvspan(a, b, color="tab:red", alpha=0.25, linewidth=0,
                       label="interruption" if first else None)


def _flow_to(run: _Run, ue: str) -> int | None:
    for i, f in enumerate(run.flows):
        if f.get("to") == ue and f.get("app") in ("bulk", "iperf") and not f.get("reverse"):
            return i
    return None


def fig_lte_handover(run: _Run) -> Figure | None:
    """Timeline of each handed-over UE: RSRPs, serving cell, TCP data delivered."""
    hos = _handovers(run)
    t = run.table("lte_ue")
    if not hos or t is None or "rsrp_serving_dbm" not in t:
        return None
    ues = _ues(run)
    names = [str(u.get("name", f"UE {i}")) for i, u in enumerate(ues)]
    moved = list(dict.fromkeys(h.get("ue") for h in hos))[:_HO_UES_MAX]
    cells = [str(c.get("name", f"cell {i}")) for i, c in enumerate((run.lte or {}).get("cells", []))]
    tcp = run.table("tcp")
    fig = Figure(figsize=(_FIGSIZE[0], 6.2))
    FigureCanvasAgg(fig)
    ax_r, ax_c, ax_s = fig.subplots(3, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1.3, 2.4]})
    for k, ue in enumerate(moved):
        if ue not in names:
            continue
        i = names.index(str(ue))
        g = t[t["ue"] == i]
        tt = g["time_s"].to_numpy(float)
        c = _color(k)
        ax_r.plot(tt, g["rsrp_serving_dbm"].to_numpy(float), color=c, label=f"{ue}: serving")
        ax_r.plot(tt, g["rsrp_best_neighbour_dbm"].to_numpy(float), color=c, linestyle="--",
                  linewidth=0.9, label=f"{ue}: best other cell")
        ax_c.step(tt, g["cell"].to_numpy(float), where="post", color=c, label=str(ue))
        f = _flow_to(run, str(ue))
        if tcp is not None and f is not None and "delivered_bytes" in tcp:
            fl = tcp[tcp["flow"] == f]
            # delivered_bytes is the sender's C.delivered: bytes the UE has acknowledged
            ax_s.plot(fl["time_s"].to_numpy(float), fl["delivered_bytes"].to_numpy(float) / 1e6,
                      color=c, label=f"{run.flow_name(f)} → {ue}")
    mine = [h for h in hos if h.get("ue") in moved]
    for ax in (ax_r, ax_c, ax_s):
        _mark_handovers(ax, mine, label=ax is ax_r)
    ax_r.set_ylabel("RSRP (dBm)")
    ax_r.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax_c.set_ylabel("serving cell")
    if cells:
        ax_c.set_yticks(range(len(cells)))
        ax_c.set_yticklabels(cells)
    ax_s.set_ylabel("TCP data acked (MB)")
    ax_s.set_xlabel("time (s)")
    if ax_s.lines:
        ax_s.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax_s.set_ylim(bottom=0)
    else:
        _no_data(ax_s, "no TCP flow to these UEs")
    n = sum(1 for h in hos if h.get("kind") == "handover")
    ax_r.set_title(f"Handovers: {n} (interruption shaded, decision dotted)")
    return fig


def fig_lte_ho_zoom(run: _Run) -> Figure | None:
    """From 2 s before to 3 s after the first handover decision: the segment-sequence graph of
    the download to the UE when the run traced it (``trace_segments``), else the bytes the UE
    acknowledged (sampled ``delivered_bytes``); cwnd and bytes in flight below."""
    hos = [h for h in _handovers(run) if np.isfinite(_num(h.get("attach_s")))]
    tcp = run.table("tcp")
    if not hos or tcp is None or "delivered_bytes" not in tcp:
        return None
    h = hos[0]
    f = _flow_to(run, str(h.get("ue")))
    if f is None:
        return None
    t0 = _num(h.get("decided_s"))
    lo, hi = t0 - 2.0, t0 + 3.0
    fl = tcp[(tcp["flow"] == f) & (tcp["time_s"] >= lo) & (tcp["time_s"] <= hi)]
    if len(fl) < 2:
        return None
    seg, ack = _seg_trace(run, f).get(f, (None, None))
    if seg is not None:
        seg = seg[(seg["time_s"] >= lo) & (seg["time_s"] <= hi)]
        if ack is not None:
            ack = ack[(ack["time_s"] >= lo) & (ack["time_s"] <= hi)]
        if seg.empty:
            seg = None
    fig = Figure(figsize=(_FIGSIZE[0], 5.2 if seg is not None else 4.6))
    FigureCanvasAgg(fig)
    ax_s, ax_w = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2, 1]} if seg is not None else None)
    tt = fl["time_s"].to_numpy(float)
    if seg is not None:
        # offsets from the lowest byte in view: the first ACK of the window, or the first segment
        base = float(seg["seq"].min())
        if ack is not None and len(ack):
            base = min(base, float(ack["ack"].iloc[0]))
        span = float((seg["seq"] + seg["len"]).max()) - base
        scale, unit = _bytes_unit(span)
        _stevens(ax_s, seg, ack, base, scale)
        ax_s.set_ylabel(f"sequence − {base / 1e6:.1f} MB ({unit})")
    else:
        d = fl["delivered_bytes"].to_numpy(float)
        ax_s.plot(tt, (d - d[0]) / 1e6, color=_color(0), label="acknowledged by the UE")
        ax_s.set_ylabel(f"data since {tt[0]:.1f} s (MB)")
    if "cwnd_bytes" in fl:
        ax_w.plot(tt, fl["cwnd_bytes"].to_numpy(float) / 1e3, color=_color(1), label="cwnd")
    if "bytes_in_flight" in fl:
        ax_w.plot(tt, fl["bytes_in_flight"].to_numpy(float) / 1e3, color=_color(2), linewidth=0.9,
                  label="in flight")
    for ax in (ax_s, ax_w):
        _mark_handovers(ax, [h], label=ax is ax_s)
        ax.legend(loc="upper left", markerscale=2 if ax is ax_s and seg is not None else 1)
    ax_w.set_ylabel("KB")
    ax_w.set_ylim(bottom=0)
    ax_w.set_xlabel("time (s)")
    ax_s.set_title(
        f"{run.flow_name(f)} around the handover of {h.get('ue')} "
        f"({h.get('source')} → {h.get('target')}): {int(_num(h.get('sdus_forwarded')) + _num(h.get('sdus_forwarded_late')))} SDUs forwarded, "
        f"{int(_num(h.get('sdus_discarded')))} discarded",
        fontsize=9,
    )
    return fig


# Wi-Fi: drawn only when summary.json has a ``wifi`` section.


def fig_wifi_busy(run: _Run) -> Figure | None:
    """Channel busy fraction (top) and goodput (bottom) of every BSS over time."""
    t = run.table("wifi_bss")
    if t is None or not run.wifi or "busy_fraction" not in t:
        return None
    fig = Figure(figsize=(_FIGSIZE[0], 4.4))
    FigureCanvasAgg(fig)
    ax_b, ax_g = fig.subplots(2, 1, sharex=True)
    groups = list(_groups(t, "bss"))
    for i, g in groups:
        name = str(run.wifi[i].get("name", f"bss {i}")) if i < len(run.wifi) else f"bss {i}"
        tt = g["time_s"].to_numpy(float)
        ax_b.plot(tt, g["busy_fraction"].to_numpy(float) * 100.0, color=_color(i), label=name,
                  drawstyle="steps-pre")
        ax_g.plot(tt, g["goodput_mbps"].to_numpy(float), color=_color(i), label=name, drawstyle="steps-pre")
    ax_b.set_ylabel("channel busy (%)")
    ax_b.set_ylim(0, 105)
    ax_g.set_ylabel("goodput (Mbit/s)")
    ax_g.set_ylim(bottom=0)
    ax_g.set_xlabel("time (s)")
    ax_b.set_title("Wi-Fi channel busy time and BSS goodput")
    if len(groups) < 2:
        fig._celltcp_no_legends = True  # type: ignore[attr-defined]
    return fig


def fig_wifi_stations(run: _Run) -> Figure | None:
    """Per station of every BSS: goodput down and up (top), share of the airtime (bottom)."""
    stas = [(b, s) for b in run.wifi for s in b.get("stations", [])]
    if not stas:
        return None
    many = len(run.wifi) > 1
    labels = [f"{b.get('name')}/{s.get('name')}" if many else str(s.get("name")) for b, s in stas]
    def g(k: str, d: str) -> np.ndarray:
        return np.array([_num(s.get(d, {}).get(k)) for _, s in stas], dtype=float)

    fig = Figure(figsize=(max(_FIGSIZE[0], 0.35 * len(stas) + 2.0), 4.6))
    FigureCanvasAgg(fig)
    ax_g, ax_a = fig.subplots(2, 1, sharex=True)
    _bars(ax_g, [("down", g("goodput_bps", "down") / 1e6, _color(0)), ("up", g("goodput_bps", "up") / 1e6, _color(1))])
    _bars(ax_a, [("down", g("airtime_fraction", "down") * 100.0, _color(0)),
                 ("up", g("airtime_fraction", "up") * 100.0, _color(1))])
    ax_g.set_ylabel("goodput (Mbit/s)")
    ax_a.set_ylabel("airtime (%)")
    for ax in (ax_g, ax_a):
        _headroom(ax)
    _legend_above(ax_g, 2)
    fig._celltcp_no_legends = True  # type: ignore[attr-defined]  # one legend, above
    ax_a.set_xticks(np.arange(len(labels)))
    ax_a.set_xticklabels(labels, rotation=90 if len(labels) > 8 else 0)
    ax_g.set_title("Wi-Fi stations", loc="left")
    return fig


_MAKERS = {
    "cwnd": fig_cwnd,
    "throughput": fig_throughput,
    "rtt_cdf": fig_rtt_cdf,
    "queue": fig_queue,
    "iperf": fig_iperf,
    "ping": fig_ping,
    "seq": fig_seq,
    "lte_cqi_mcs": fig_lte_cqi_mcs,
    "lte_sinr": fig_lte_sinr,
    "lte_rlc_buffer": fig_lte_rlc_buffer,
    "lte_pdcp_buffer": fig_lte_pdcp_buffer,
    "lte_cell": fig_lte_cell,
    "lte_harq_rlc": fig_lte_harq_rlc,
    "lte_prbs_goodput": fig_lte_prbs_goodput,
    "lte_handover": fig_lte_handover,
    "lte_ho_zoom": fig_lte_ho_zoom,
    "wifi_busy": fig_wifi_busy,
    "wifi_stations": fig_wifi_stations,
}


def _run_of(dir: str | Path | Any) -> _Run:
    """A run directory, or a ``celltcp.Result`` (in memory or not)."""
    if hasattr(dir, "summary") and hasattr(dir, "timeseries"):
        return _Run(dir)
    d = Path(dir)
    if not (d / "summary.json").is_file():
        raise FileNotFoundError(f"{d} is not a celltcp run directory (no summary.json)")
    return _Run(d)


def run_figure(dir: str | Path | Any, name: str) -> Figure | None:
    """One figure of a run (``name`` as in :func:`plot_run`'s file names, e.g. ``"lte_ho_zoom"``),
    or None when the run has no data for it -- for reports that place a run's figure among
    others. ``dir`` is a run directory or a ``celltcp.Result``."""
    if name not in _MAKERS:
        raise ValueError(f"figure {name!r}: expected one of {', '.join(_MAKERS)}")
    run = _run_of(dir)
    with _style():
        return _MAKERS[name](run)


def plot_run(
    dir: str | Path | Any, formats: Sequence[str] = ("png", "svg"),
    outdir: str | os.PathLike[str] | None = None,
    *, only: Sequence[str] | None = None, flows: Sequence[str] | None = None,
    font_scale: float = 1.0, width: float | None = None,
) -> list[Path]:
    """Draw every figure the run has data for; returns the files written.

    ``dir`` is a run directory or a ``celltcp.Result`` (one kept in memory needs ``outdir``).
    ``outdir`` defaults to ``DIR/figures``. ``only`` names the figures to draw (default all);
    ``flows`` the flow names or glob patterns that per-flow figures draw (default all);
    ``font_scale`` multiplies every font size; ``width`` is the width in inches of single-panel
    figures (default 6), their height in proportion.
    """
    if only is not None:
        unknown = [n for n in only if n not in _MAKERS]
        if unknown:
            raise ValueError(f"figure {unknown[0]!r}: expected one of {', '.join(_MAKERS)}")
    if not (0.2 <= font_scale <= 5.0) or font_scale != font_scale:
        raise ValueError(f"font scale {font_scale}: expected a number between 0.2 and 5")
    if width is not None and not (1.0 <= width <= 40.0):
        raise ValueError(f"width {width}: expected between 1 and 40 inches")
    run = _run_of(dir)
    for fmt in formats:
        if fmt not in ("png", "svg", "pdf"):
            raise ValueError(f"figure format {fmt!r}: expected png, svg or pdf")
    if outdir is None and run.dir is None:
        raise ValueError("a run kept in memory has no directory: give plot_run an outdir")
    out = Path(outdir) if outdir is not None else run.dir / "figures"
    out.mkdir(parents=True, exist_ok=True)
    run.only_flows = list(flows) if flows is not None else None
    written: list[Path] = []
    # the figure functions size themselves from _FIGSIZE: set it for this call only
    global _FIGSIZE
    saved = _FIGSIZE
    if width is not None:
        _FIGSIZE = (width, width * saved[1] / saved[0])
    try:
        with _style(font_scale):
            for name, make in _MAKERS.items():
                if only is not None and name not in only:
                    continue
                fig = make(run)
                if fig is None:
                    continue
                written += _finish(fig, out, name, formats)
    finally:
        _FIGSIZE = saved
    return written
