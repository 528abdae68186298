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
=============  ==============================================================================

Uses matplotlib's object API with the Agg canvas, so it does not touch pyplot's global
backend (safe to call from a notebook).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["plot_run", "FIGURES"]

FIGURES = ("cwnd", "throughput", "rtt_cdf", "queue", "iperf", "ping")

#: ssthresh at or above this is "infinite" (the initial ssthresh of most stacks).
INFINITE_BYTES = 2.0**62
#: ... and so is one above this many times the largest cwnd (e.g. Linux's 0x7fffffff segments).
INFINITE_CWNDS = 100.0

_STYLE: dict[str, Any] = {
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
#: Most points drawn for one CDF curve (keeps SVG files small for runs with many samples).
_CDF_POINTS = 2000


@contextmanager
def _style() -> Iterator[None]:
    with mpl.rc_context(cast(Any, _STYLE)):
        yield


class _Run:
    """What the figures need from a run directory."""

    def __init__(self, d: Path) -> None:
        self.dir = d
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        self.flows: list[dict[str, Any]] = list(summary.get("flows", []))
        self.links: list[dict[str, Any]] = list(summary.get("links", []))

    def table(self, name: str) -> pd.DataFrame | None:
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


def _color(i: int) -> Any:
    cycle = mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    return cycle[i % len(cycle)]


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
        if ax.get_legend() is None and ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best")
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
    """One panel per flow (shared time axis), so that sawtooths do not hide each other."""
    tcp = run.table("tcp")
    if tcp is None or "cwnd_bytes" not in tcp:
        return None
    max_cwnd = float(tcp["cwnd_bytes"].max())
    infinite = min(INFINITE_BYTES, INFINITE_CWNDS * max_cwnd) if max_cwnd > 0 else INFINITE_BYTES
    ss = tcp["ssthresh_bytes"].to_numpy(float) if "ssthresh_bytes" in tcp else None
    finite_ss = ss[ss < infinite] if ss is not None else np.array([])
    top = max(max_cwnd, float(finite_ss.max()) if finite_ss.size else 0.0)
    scale, unit = _bytes_unit(top)
    groups = list(_groups(tcp, "flow"))
    n = len(groups)
    fig = Figure(figsize=(_FIGSIZE[0], 1.2 + 1.5 * n) if n > 1 else _FIGSIZE)
    FigureCanvasAgg(fig)
    axes = fig.subplots(n, 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    for ax, (i, g) in zip(axes, groups):
        t = g["time_s"].to_numpy(float)
        c = _color(i)
        ax.plot(t, g["cwnd_bytes"].to_numpy(float) / scale, color=c,
                label=f"{run.flow_name(i)} cwnd", drawstyle="steps-post")
        if "ssthresh_bytes" in g:
            s = g["ssthresh_bytes"].to_numpy(float)
            s = np.where(s >= infinite, np.nan, s)
            if np.isfinite(s).any():
                ax.plot(t, s / scale, color=c, linestyle="--", linewidth=0.9,
                        drawstyle="steps-post", label="ssthresh")
        ax.set_ylabel(f"cwnd ({unit})")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes[-1].set_xlabel("time (s)")
    axes[0].set_title("Congestion window")
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


def fig_throughput(run: _Run) -> Figure | None:
    tcp = run.table("tcp")
    if tcp is None or "delivered_bytes" not in tcp:
        return None
    span = float(tcp["time_s"].max() - tcp["time_s"].min())
    # About 100 points over the run, but never finer than the sampling interval.
    dt = np.diff(np.unique(tcp["time_s"].to_numpy(float)))
    sample = float(np.median(dt)) if dt.size else span
    width = _nice(max(span / 100.0, sample)) if span > 0 else 1.0
    fig, ax = _new_figure()
    for i, g in _groups(tcp, "flow"):
        x, y = _goodput_series(g["time_s"].to_numpy(float), g["delivered_bytes"].to_numpy(float), width)
        if x.size:
            ax.plot(x, y, color=_color(i), label=run.flow_name(i), drawstyle="steps-pre")
    if not ax.lines:
        _no_data(ax, "goodput")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(f"Goodput ({width:g} s bins)")
    ax.set_ylim(bottom=0)
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
        v = np.sort(g[col].to_numpy(float))
        v = v[np.isfinite(v)]
        if v.size == 0:
            continue
        p = np.arange(1, v.size + 1) / v.size
        if v.size > _CDF_POINTS:  # the same curve, drawn from evenly spaced quantiles
            keep = np.unique(np.linspace(0, v.size - 1, _CDF_POINTS).round().astype(np.int64))
            v, p = v[keep], p[keep]
        ax.plot(v, p, color=_color(i), label=run.flow_name(i), drawstyle="steps-post")
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
    flows = list(_groups(ip, "flow"))
    n = len(flows)
    for k, (i, g) in enumerate(flows):
        start = g["start_s"].to_numpy(float)
        end = g["end_s"].to_numpy(float)
        width = (end - start) / n * 0.9
        ax.bar(start + (end - start) * k / n, g["bits_per_second"].to_numpy(float) / 1e6,
               width=width, align="edge", color=_color(i), label=run.flow_name(i))
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
        ax.plot(g["time_s"].to_numpy(float), g["rtt_ms"].to_numpy(float), color=_color(i),
                marker=".", markersize=3, linewidth=0.8, label=run.flow_name(i))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("RTT (ms)")
    ax.set_title("ping")
    ax.set_ylim(bottom=0)
    return fig


_MAKERS = {
    "cwnd": fig_cwnd,
    "throughput": fig_throughput,
    "rtt_cdf": fig_rtt_cdf,
    "queue": fig_queue,
    "iperf": fig_iperf,
    "ping": fig_ping,
}


def plot_run(
    dir: str | Path, formats: Sequence[str] = ("png", "svg"), outdir: str | Path | None = None
) -> list[Path]:
    """Draw every figure the run has data for; returns the files written.

    ``outdir`` defaults to ``DIR/figures``.
    """
    d = Path(dir)
    if not (d / "summary.json").is_file():
        raise FileNotFoundError(f"{d} is not a celltcp run directory (no summary.json)")
    for fmt in formats:
        if fmt not in ("png", "svg", "pdf"):
            raise ValueError(f"figure format {fmt!r}: expected png, svg or pdf")
    out = Path(outdir) if outdir is not None else d / "figures"
    out.mkdir(parents=True, exist_ok=True)
    run = _Run(d)
    written: list[Path] = []
    with _style():
        for name, make in _MAKERS.items():
            fig = make(run)
            if fig is None:
                continue
            written += _finish(fig, out, name, formats)
    return written
