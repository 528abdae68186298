"""Figures of a sweep: a metric against a parameter, grouped by another, with confidence intervals.

Reads a results table (one row per run and flow, as :func:`celltcp.sweep.load_results` returns
it: ``run_id``, ``seed``, one column per swept parameter named by its dotted path, ``flow``, the
per-flow metrics of ``summary.json``) and, for the per-packet and time-series figures, the run
directories ``DIR/runs/<run_id>/`` (the layout of ``celltcp run``). Runs nothing.

==================  ===========================================================================
:func:`lines`       mean of a metric against a parameter, one line per group, with t-interval
                    error bars (or a shaded band)
:func:`bars`        the same as grouped bars with CI whiskers
:func:`boxes`       box plots of the replications, grouped
:func:`metric_cdf`  empirical CDF of a per-run metric, one curve per group
:func:`sample_cdf`  empirical CDF of per-packet samples (RTT, ping RTT, ...) of chosen runs
:func:`traces`      cwnd and goodput over time of chosen runs, side by side
:func:`save`        write a figure as PNG (300 dpi) and SVG
==================  ===========================================================================

Confidence intervals are Student t-intervals over the replications (seeds) of each point:
``mean ± t(1 - (1 - confidence)/2, n - 1) · s / sqrt(n)`` with ``s`` the sample standard
deviation, as :func:`celltcp.sweep.aggregate` computes them; a point with one replication has
no interval.

Colours are fixed per group value (:func:`palette`): the same congestion control or RLC mode has
the same colour in every figure of a study. Uses matplotlib's object API with the Agg canvas, so
it never touches pyplot's global state.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Union, cast

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plots import _STYLE as _RUN_STYLE
from .sweep import aggregate, t_quantile

__all__ = [
    "t_quantile", "ci_table", "display_table", "palette", "metric_label", "param_label",
    "lines", "bars", "boxes", "metric_cdf", "sample_cdf", "traces", "save",
]

PathLike = Union[str, Path]

_STYLE: dict[str, Any] = {**_RUN_STYLE, "font.size": 10, "axes.labelsize": 10,
                          "axes.titlesize": 10.5, "legend.fontsize": 8.5,
                          "xtick.labelsize": 9, "ytick.labelsize": 9}
_FIGSIZE = (6.0, 3.6)
_CDF_POINTS = 2000

# ---------------------------------------------------------------------------------------------
# Statistics


def ci_table(df: pd.DataFrame, by: Sequence[str], metric: str, confidence: float = 0.95) -> pd.DataFrame:
    """Mean, std, n and the t-interval ``ci_low``, ``ci_high`` of ``metric`` per ``by`` group
    (:func:`celltcp.sweep.aggregate`). Rows whose metric is missing are left out; a group with
    a single value has ``std`` and the interval NaN."""
    _need(df, [*by, metric])
    return aggregate(df, by=list(by), metric=metric, confidence=confidence)


# ---------------------------------------------------------------------------------------------
# Labels, units, order and colours

#: metric -> (axis label, unit, factor applied to the stored value).
METRICS: dict[str, tuple[str, str, float]] = {
    "goodput_bps": ("goodput", "Mbit/s", 1e-6),
    "throughput_bps": ("throughput", "Mbit/s", 1e-6),
    "rtt_ms": ("RTT", "ms", 1.0),
    "rtt_mean_ms": ("mean RTT", "ms", 1.0),
    "rtt_p50_ms": ("median RTT", "ms", 1.0),
    "rtt_p95_ms": ("95th percentile RTT", "ms", 1.0),
    "rtt_p99_ms": ("99th percentile RTT", "ms", 1.0),
    "rtt_min_ms": ("minimum RTT", "ms", 1.0),
    "rtt_max_ms": ("maximum RTT", "ms", 1.0),
    "owd_mean_ms": ("mean one-way delay", "ms", 1.0),
    "owd_p95_ms": ("95th percentile one-way delay", "ms", 1.0),
    "jitter_ms": ("jitter (RFC 3550)", "ms", 1.0),
    "loss_ratio": ("loss ratio", "%", 100.0),
    "retransmitted_segments": ("retransmitted segments", "segments", 1.0),
    "timeouts": ("retransmission timeouts", "count", 1.0),
    "fast_recoveries": ("fast recoveries", "count", 1.0),
    "bytes_delivered": ("bytes delivered", "MB", 1.0 / 2**20),
    "final_cwnd_bytes": ("final cwnd", "KB", 1.0 / 1024),
    "completion_time_s": ("completion time", "s", 1.0),
}

#: last component of a dotted parameter path -> axis label.
PARAMS: dict[str, str] = {
    "cc": "congestion control",
    "window": "TCP window (iperf -w)",
    "mss": "MSS (bytes)",
    "mode": "RLC mode",
    "reverse": "iperf -R (downlink)",
    "buffer": "buffer",
    "delay": "one-way delay",
    "rate": "rate",
    "loss": "loss probability",
    "count": "UEs",
    "seed": "seed",
    "config": "RLC mode, packet size",
    "setting": "network, packet size",
    "size": "packet size (bytes)",
    "rlc": "RLC mode",
}


def _log_x(ax: Axes) -> None:
    """A log x axis with plain tick labels ("100", "200"): the style turns mathtext off (names
    are text), and matplotlib's default log labels are mathtext ("$\\mathdefault{10^{2}}$"),
    which would then be printed literally. Minor ticks are labelled at 2, 3 and 5 x 10^k."""
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))

    def minor(v: float, _pos: int) -> str:
        if v <= 0:
            return ""
        lead = v / 10 ** math.floor(math.log10(v) + 1e-9)
        return f"{v:g}" if min(abs(lead - k) for k in (2, 3, 5)) < 1e-6 else ""

    ax.xaxis.set_minor_formatter(FuncFormatter(minor))


def display_table(df: pd.DataFrame, by: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """The aggregated table of a report: one row per value of ``by`` (in natural order), the
    number of runs ``n``, and per metric (in its display unit, labelled by :func:`metric_label`)
    ``mean ± half-width of the 95 % t-interval`` (just the mean for a single run). Metrics the
    table lacks or holds no number of are left out."""
    by = [c for c in by if c in df.columns]
    wide: pd.DataFrame | None = None
    for metric in metrics:
        if metric not in df.columns or pd.to_numeric(df[metric], errors="coerce").isna().all():
            continue
        a = aggregate(df, by=by, metric=metric)
        label, k = metric_label(metric)
        col = a[by].copy()
        col["n"] = a["n"].astype(int)
        col[label] = [f"{m:.4g}" if h != h else f"{m:.4g} ± {h:.2g}"
                      for m, h in zip(a["mean"] * k, a["ci_half"] * k)]
        wide = col if wide is None else wide.merge(col.drop(columns="n"), on=by, how="outer")
    if wide is None:
        return pd.DataFrame()
    if not by:
        return wide.reset_index(drop=True)
    rank = {c: {v: i for i, v in enumerate(ordered(wide[c]))} for c in by}
    return wide.sort_values(by, key=lambda c: c.map(rank[c.name])).reset_index(drop=True)


def metric_label(metric: str) -> tuple[str, float]:
    """Axis label with its unit, and the factor that turns stored values into that unit."""
    if metric in METRICS:
        name, unit, k = METRICS[metric]
        return f"{name} ({unit})", k
    base = metric.split(".")[-1]
    for suffix, unit, k in (("_bps", "Mbit/s", 1e-6), ("_ms", "ms", 1.0), ("_s", "s", 1.0),
                            ("_bytes", "KB", 1 / 1024), ("_ratio", "%", 100.0)):
        if base.endswith(suffix):
            return f"{base[: -len(suffix)].replace('_', ' ')} ({unit})", k
    return base.replace("_", " "), 1.0


def param_label(param: str) -> str:
    """Axis or legend title for a parameter column (a dotted path or a derived column)."""
    return PARAMS.get(param.split(".")[-1], param)


_UNITS = {
    "b": 1.0, "kb": 1024.0, "k": 1024.0, "kib": 1024.0, "mb": 2.0**20, "m": 2.0**20,
    "mib": 2.0**20, "gb": 2.0**30, "bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9,
    "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0,
}
_QUANTITY = re.compile(r"^\s*([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*([A-Za-z]+)\s*$")


def _magnitude(v: Any) -> float | None:
    """A number for ordering: numbers as they are, ``"64KB"`` / ``"10Mbps"`` / ``"5ms"`` parsed."""
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    if isinstance(v, str):
        m = _QUANTITY.match(v)
        if m and m.group(2).lower() in _UNITS:
            return float(m.group(1)) * _UNITS[m.group(2).lower()]
        try:
            return float(v)
        except ValueError:
            return None
    return None


def ordered(values: Any) -> list[Any]:
    """Distinct values in a natural order: by magnitude when every value has one (numbers,
    sizes, rates, durations), otherwise in order of first appearance."""
    seen: list[Any] = []
    for v in values:
        if not any(v == s for s in seen) and not (isinstance(v, float) and math.isnan(v)):
            seen.append(v)
    mags = [_magnitude(v) for v in seen]
    known = [m for m in mags if m is not None]
    if len(known) == len(seen):
        return [v for _, v in sorted(zip(known, seen), key=lambda t: t[0])]
    return seen


def palette(values: Sequence[Any]) -> dict[Any, Any]:
    """A colour per value, assigned in the given order from a colour-blind-safe cycle."""
    cycle = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442",
             "#000000", "#7F7F7F", "#8C564B", "#9467BD", "#17BECF", "#BCBD22", "#E377C2"]
    return {v: cycle[k % len(cycle)] for k, v in enumerate(values)}


def _fmt_value(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _need(df: pd.DataFrame, cols: Sequence[str]) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise KeyError(f"results table has no column {missing[0]!r} "
                       f"(columns: {', '.join(map(str, df.columns))})")


@contextmanager
def _style() -> Iterator[None]:
    with mpl.rc_context(cast(Any, _STYLE)):
        yield


def _figure(figsize: tuple[float, float] = _FIGSIZE) -> tuple[Figure, Axes]:
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _select(df: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.DataFrame:
    if not where:
        return df
    _need(df, list(where))
    mask = np.ones(len(df), dtype=bool)
    for k, v in where.items():
        if isinstance(v, (list, tuple, set)):
            mask &= df[k].isin(list(v)).to_numpy()
        else:
            mask &= (df[k] == v).to_numpy()
    return df[mask]


class _Plan:
    """What the summary figures share: the rows, the x and group orders, colours and labels."""

    def __init__(self, df: pd.DataFrame, x: str | None, metric: str, group: str | None,
                 where: Mapping[str, Any] | None, x_order: Sequence[Any] | None,
                 group_order: Sequence[Any] | None, colors: Mapping[Any, Any] | None) -> None:
        cols = [c for c in (x, group, metric) if c is not None]
        _need(df, cols)
        self.df = _select(df, where)
        if self.df.empty:
            raise ValueError(f"no rows left for {metric!r} after selecting {dict(where or {})}")
        self.x, self.metric, self.group = x, metric, group
        self.xs = list(x_order) if x_order is not None else (ordered(self.df[x]) if x else [None])
        self.groups = (list(group_order) if group_order is not None
                       else (ordered(self.df[group]) if group else [None]))
        self.colors = dict(colors) if colors else palette(self.groups)
        self.ylabel, self.scale = metric_label(metric)
        self.numeric_x = x is not None and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            for v in self.xs)

    def rows(self, g: Any) -> pd.DataFrame:
        return self.df if self.group is None else self.df[self.df[self.group] == g]

    def color(self, g: Any) -> Any:
        return self.colors.get(g, "#444444")

    def label(self, g: Any) -> str:
        return _fmt_value(g)

    def xlabel(self) -> str:
        return param_label(self.x) if self.x else ""

    def legend(self, ax: Axes, outside: bool = False) -> None:
        if self.group is None or not ax.get_legend_handles_labels()[0]:
            return
        if outside:  # beside the axes, where it cannot hide a bar or a box
            ax.legend(title=param_label(self.group), loc="upper left", bbox_to_anchor=(1.01, 1.0))
        else:
            ax.legend(title=param_label(self.group), loc="best")

    def categorical_ticks(self, ax: Axes) -> None:
        ax.set_xticks(np.arange(len(self.xs)))
        ax.set_xticklabels([_fmt_value(v) for v in self.xs])
        ax.set_xlim(-0.5, len(self.xs) - 0.5)
        ax.grid(False, axis="x")


def _title(ax: Axes, title: str | None) -> None:
    if title:
        ax.set_title(title)


# ---------------------------------------------------------------------------------------------
# Summary figures


def lines(df: pd.DataFrame, x: str, metric: str, group: str | None = None, *,
          where: Mapping[str, Any] | None = None, confidence: float = 0.95, band: bool = False,
          x_order: Sequence[Any] | None = None, group_order: Sequence[Any] | None = None,
          colors: Mapping[Any, Any] | None = None, logx: bool = False,
          title: str | None = None, ylim0: bool = True, ax: Axes | None = None) -> Figure:
    """Mean of ``metric`` against ``x``, one line per ``group`` value, with t-interval error
    bars (``band=True``: a shaded band). ``where`` keeps the rows whose columns equal the given
    values (a list: any of them). Categorical x (strings) are evenly spaced in natural order,
    and the groups are dodged sideways so that their bars do not hide each other. ``ax``: draw
    into this axes of an existing figure (a panel of small multiples) instead of a new one."""
    with _style():
        p = _Plan(df, x, metric, group, where, x_order, group_order, colors)
        own = ax is None
        if ax is None:
            fig, ax = _figure()
        else:
            fig = cast(Figure, ax.figure)
        k = len(p.groups)
        for j, g in enumerate(p.groups):
            s = ci_table(p.rows(g), [x], metric, confidence).set_index(x)
            s = s.reindex([v for v in p.xs if v in s.index])
            if s.empty:
                continue
            if p.numeric_x:
                xpos = s.index.to_numpy(float)
            else:
                dodge = 0.0 if band or k == 1 else (j - (k - 1) / 2) * min(0.08, 0.5 / k)
                xpos = np.array([p.xs.index(v) for v in s.index], float) + dodge
            y = s["mean"].to_numpy(float) * p.scale
            lo = s["ci_low"].to_numpy(float) * p.scale
            hi = s["ci_high"].to_numpy(float) * p.scale
            c = p.color(g)
            if band:
                ax.plot(xpos, y, color=c, marker="o", markersize=4, label=p.label(g))
                ok = np.isfinite(lo) & np.isfinite(hi)
                if ok.any():
                    ax.fill_between(xpos[ok], lo[ok], hi[ok], color=c, alpha=0.2, linewidth=0)
            else:
                err = np.vstack([np.where(np.isfinite(lo), y - lo, 0.0),
                                 np.where(np.isfinite(hi), hi - y, 0.0)])
                ax.errorbar(xpos, y, yerr=err, color=c, marker="o", markersize=4, capsize=3,
                            label=p.label(g))
        if p.numeric_x:
            if logx:
                _log_x(ax)
        else:
            p.categorical_ticks(ax)
        ax.set_xlabel(p.xlabel())
        ax.set_ylabel(p.ylabel)
        if ylim0:
            ax.set_ylim(bottom=0)
        p.legend(ax)
        _title(ax, title or _ci_note(confidence))
        if own:
            fig.tight_layout()
    return fig


def _ci_note(confidence: float) -> str:
    return f"mean and {confidence * 100:g} % t-interval over seeds"


def bars(df: pd.DataFrame, x: str, metric: str, group: str | None = None, *,
         where: Mapping[str, Any] | None = None, confidence: float = 0.95,
         x_order: Sequence[Any] | None = None, group_order: Sequence[Any] | None = None,
         colors: Mapping[Any, Any] | None = None, title: str | None = None,
         figsize: tuple[float, float] | None = None) -> Figure:
    """Grouped bars: the mean of ``metric`` per ``x`` value, one bar per ``group`` value, with
    t-interval whiskers."""
    with _style():
        p = _Plan(df, x, metric, group, where, x_order, group_order, colors)
        width_in = max(_FIGSIZE[0], min(12.0, 1.2 + 0.28 * len(p.xs) * len(p.groups)))
        fig, ax = _figure(figsize or (width_in, _FIGSIZE[1]))
        k = len(p.groups)
        w = 0.8 / k
        for j, g in enumerate(p.groups):
            s = ci_table(p.rows(g), [x], metric, confidence).set_index(x)
            s = s.reindex(p.xs)
            xpos = np.arange(len(p.xs)) - 0.4 + w * (j + 0.5)
            y = s["mean"].to_numpy(float) * p.scale
            lo = s["ci_low"].to_numpy(float) * p.scale
            hi = s["ci_high"].to_numpy(float) * p.scale
            ok = np.isfinite(y)
            ax.bar(xpos[ok], y[ok], width=w, color=p.color(g), label=p.label(g), linewidth=0)
            ci = ok & np.isfinite(lo) & np.isfinite(hi)
            if ci.any():
                ax.errorbar(xpos[ci], y[ci], yerr=np.vstack([y[ci] - lo[ci], hi[ci] - y[ci]]),
                            fmt="none", ecolor="0.15", elinewidth=1.0, capsize=2.5)
        p.categorical_ticks(ax)
        if len(p.xs) > 6 and max(len(_fmt_value(v)) for v in p.xs) > 5:
            for t in ax.get_xticklabels():
                t.set_rotation(35)
                t.set_horizontalalignment("right")
        ax.set_xlabel(p.xlabel())
        ax.set_ylabel(p.ylabel)
        ax.set_ylim(bottom=0)
        p.legend(ax, outside=True)
        _title(ax, title or _ci_note(confidence))
        fig.tight_layout()
    return fig


def boxes(df: pd.DataFrame, x: str, metric: str, group: str | None = None, *,
          where: Mapping[str, Any] | None = None, x_order: Sequence[Any] | None = None,
          group_order: Sequence[Any] | None = None, colors: Mapping[Any, Any] | None = None,
          title: str | None = None) -> Figure:
    """Box plots of ``metric`` over the runs of each (``x``, ``group``) point: median, quartiles,
    whiskers at 1.5 IQR, outliers as dots."""
    with _style():
        p = _Plan(df, x, metric, group, where, x_order, group_order, colors)
        width_in = max(_FIGSIZE[0], min(12.0, 1.2 + 0.3 * len(p.xs) * len(p.groups)))
        fig, ax = _figure((width_in, _FIGSIZE[1]))
        k = len(p.groups)
        w = 0.8 / k
        for j, g in enumerate(p.groups):
            rows = p.rows(g)
            data, pos = [], []
            for i, v in enumerate(p.xs):
                vals = pd.to_numeric(rows.loc[rows[x] == v, metric], errors="coerce").to_numpy(float)
                vals = vals[np.isfinite(vals)] * p.scale
                if vals.size:
                    data.append(vals)
                    pos.append(i - 0.4 + w * (j + 0.5))
            if not data:
                continue
            c = p.color(g)
            bp = ax.boxplot(data, positions=pos, widths=w * 0.85, patch_artist=True,
                            manage_ticks=False,
                            medianprops={"color": "black", "linewidth": 1.8},
                            flierprops={"marker": ".", "markersize": 3, "markerfacecolor": c,
                                        "markeredgecolor": c})
            for box in bp["boxes"]:
                box.set_facecolor(c)
                box.set_alpha(0.75)
            bp["boxes"][0].set_label(p.label(g))
        p.categorical_ticks(ax)
        ax.set_xlabel(p.xlabel())
        ax.set_ylabel(p.ylabel)
        p.legend(ax, outside=True)
        _title(ax, title or "median, quartiles and 1.5 IQR whiskers over runs")
        fig.tight_layout()
    return fig


def _ecdf(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = np.sort(v[np.isfinite(v)])
    p = np.arange(1, v.size + 1) / max(v.size, 1)
    if v.size > _CDF_POINTS:  # the same curve through evenly spaced ranks
        keep = np.unique(np.linspace(0, v.size - 1, _CDF_POINTS).round().astype(np.int64))
        v, p = v[keep], p[keep]
    return v, p


def metric_cdf(df: pd.DataFrame, metric: str, group: str | None = None, *,
               where: Mapping[str, Any] | None = None, group_order: Sequence[Any] | None = None,
               colors: Mapping[Any, Any] | None = None, title: str | None = None) -> Figure:
    """Empirical CDF of a per-run metric (one value per row), one curve per ``group``."""
    with _style():
        p = _Plan(df, None, metric, group, where, None, group_order, colors)
        fig, ax = _figure()
        for g in p.groups:
            v = pd.to_numeric(p.rows(g)[metric], errors="coerce").to_numpy(float) * p.scale
            x, y = _ecdf(v)
            if x.size:
                ax.plot(x, y, drawstyle="steps-post", color=p.color(g), label=p.label(g))
        ax.set_xlabel(p.ylabel)
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        p.legend(ax)
        _title(ax, title or f"distribution over {len(p.df)} runs")
        fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------
# Figures from run directories


class RunDir:
    """The files of one run directory that the figures read."""

    def __init__(self, d: PathLike) -> None:
        self.dir = Path(d)
        summary = self.dir / "summary.json"
        if not summary.is_file():
            raise FileNotFoundError(f"{self.dir}: not a run directory (no summary.json)")
        self.flows: list[dict[str, Any]] = list(
            json.loads(summary.read_text(encoding="utf-8")).get("flows", []))

    def table(self, name: str) -> pd.DataFrame | None:
        p = self.dir / "timeseries" / f"{name}.parquet"
        return pd.read_parquet(p) if p.is_file() else None

    def flow_index(self, flow: str | int) -> int:
        if isinstance(flow, (int, np.integer)):
            if not 0 <= int(flow) < len(self.flows):
                raise KeyError(f"{self.dir}: flow index {flow} out of range (0..{len(self.flows) - 1})")
            return int(flow)
        names = [str(f.get("name")) for f in self.flows]
        if flow not in names:
            raise KeyError(f"{self.dir}: no flow named {flow!r} (flows: {', '.join(names)})")
        return names.index(flow)

    def tcp_flows(self) -> list[int]:
        return [i for i, f in enumerate(self.flows) if f.get("cc") is not None]


#: a curve of :func:`sample_cdf`: (run directory, flow name or index).
CurveSpec = tuple[PathLike, Union[str, int]]


def sample_cdf(curves: Mapping[str, CurveSpec], series: str = "rtt", column: str = "rtt_ms", *,
               xlabel: str | None = None, colors: Mapping[Any, Any] | None = None,
               title: str | None = None, logx: bool = False) -> Figure:
    """Empirical CDF of per-packet samples: ``curves`` maps a legend label to a run directory
    and a flow; the samples are ``column`` of ``timeseries/<series>.parquet`` for that flow
    (``rtt``/``rtt_ms``: every TCP RTT sample; ``ping``/``rtt_ms``: every echo reply)."""
    with _style():
        fig, ax = _figure()
        cols = dict(colors) if colors else palette(list(curves))
        for label, (d, flow) in curves.items():
            run = RunDir(d)
            i = run.flow_index(flow)
            t = run.table(series)
            if t is None or column not in t.columns:
                raise KeyError(f"{run.dir}: no column {column!r} in timeseries/{series}.parquet")
            x, y = _ecdf(t.loc[t["flow"] == i, column].to_numpy(float))
            if x.size:
                ax.plot(x, y, drawstyle="steps-post", color=cols.get(label, "#444444"),
                        label=f"{label} (n = {int(np.isfinite(t.loc[t['flow'] == i, column]).sum())})")
        if logx:
            _log_x(ax)
        ax.set_xlabel(xlabel or metric_label(column)[0])
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        if ax.lines:
            ax.legend(loc="lower right")
        _title(ax, title)
        fig.tight_layout()
    return fig


def _goodput(t: np.ndarray, delivered: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Goodput (Mbit/s) in bins of ``width`` s from cumulative acknowledged bytes."""
    order = np.argsort(t, kind="stable")
    t, delivered = t[order], delivered[order]
    if t.size < 2 or t[-1] <= t[0]:
        return np.array([]), np.array([])
    edges = np.arange(t[0], t[-1] + width * 0.5, width)
    if edges.size < 2:
        edges = np.array([t[0], t[-1]])
    d = np.interp(edges, t, delivered)
    return edges[1:], np.diff(d) * 8.0 / np.diff(edges) / 1e6


_TRACE_ROWS: dict[str, str] = {"cwnd": "cwnd (KB)", "throughput": "goodput (Mbit/s)",
                               "srtt": "smoothed RTT (ms)", "inflight": "bytes in flight (KB)"}


def traces(runs: Mapping[str, PathLike], flows: Sequence[str | int] | None = None,
           rows: Sequence[str] = ("cwnd", "throughput"), *, bin_s: float | None = None,
           title: str | None = None) -> Figure:
    """Time traces of chosen runs side by side: one column per run (``runs`` maps a column
    title to a run directory), one row per quantity in ``rows`` (``cwnd``, ``throughput``,
    ``srtt``, ``inflight``), one line per TCP flow (``flows`` picks them by name or index;
    default every TCP flow). Rows share their y axis, so the runs compare at a glance.
    Goodput is from the cumulative acknowledged bytes in bins of ``bin_s`` (default 1/50
    of the run)."""
    bad = [r for r in rows if r not in _TRACE_ROWS]
    if bad:
        raise ValueError(f"traces: unknown row {bad[0]!r}, expected one of {', '.join(_TRACE_ROWS)}")
    if not runs:
        raise ValueError("traces: no runs given")
    with _style():
        ncol, nrow = len(runs), len(rows)
        fig = Figure(figsize=(max(4.0, 3.2 * ncol), 1.0 + 2.0 * nrow))
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrow, ncol, sharex="col", sharey="row", squeeze=False)
        names: list[str] = []
        for col, (label, d) in enumerate(runs.items()):
            run = RunDir(d)
            tcp = run.table("tcp")
            idx = [run.flow_index(f) for f in flows] if flows is not None else run.tcp_flows()
            for i in idx:
                name = str(run.flows[i].get("name", f"flow {i}"))
                if name not in names:
                    names.append(name)
            cols = palette(names)
            for r, what in enumerate(rows):
                ax = axes[r, col]
                for i in idx:
                    g = tcp[tcp["flow"] == i] if tcp is not None else None
                    name = str(run.flows[i].get("name", f"flow {i}"))
                    if g is None or g.empty:
                        continue
                    t = g["time_s"].to_numpy(float)
                    if what == "cwnd":
                        x, y = t, g["cwnd_bytes"].to_numpy(float) / 1024
                    elif what == "inflight":
                        x, y = t, g["bytes_in_flight"].to_numpy(float) / 1024
                    elif what == "srtt":
                        x, y = t, g["srtt_ms"].to_numpy(float)
                    else:
                        span = float(t.max() - t.min()) if t.size else 0.0
                        x, y = _goodput(t, g["delivered_bytes"].to_numpy(float),
                                        bin_s or max(span / 50.0, 1e-3))
                    ax.plot(x, y, color=cols[name], label=name,
                            drawstyle="steps-post" if what != "throughput" else "steps-pre")
                if not ax.lines:
                    ax.text(0.5, 0.5, "no TCP samples", transform=ax.transAxes, ha="center",
                            va="center")
                if col == 0:
                    ax.set_ylabel(_TRACE_ROWS[what])
                if r == 0:
                    ax.set_title(label)
                if r == nrow - 1:
                    ax.set_xlabel("time (s)")
        for r in range(nrow):  # one y range per row, from 0 to the highest value of any run
            top = max((float(np.nanmax(np.asarray(line.get_ydata(), float)))
                       for ax in axes[r] for line in ax.lines
                       if np.isfinite(np.asarray(line.get_ydata(), float)).any()), default=1.0)
            axes[r, 0].set_ylim(0, top * 1.05 if top > 0 else 1.0)
        handles, labels = axes[0, 0].get_legend_handles_labels()
        legend = len(names) > 1 and bool(handles)
        if legend:  # below the panels, where it hides no title or curve
            fig.legend(handles, labels, loc="lower center", ncol=min(len(names), 6),
                       frameon=False)
        if title:
            fig.suptitle(title)
        fig.tight_layout(rect=(0, 0.4 / fig.get_figheight() if legend else 0, 1, 1))
    return fig


# ---------------------------------------------------------------------------------------------
# Output


def save(fig: Figure, outdir: PathLike, name: str, formats: Sequence[str] = ("png", "svg"),
         dpi: float | None = None) -> list[Path]:
    """Write ``outdir/name.<fmt>`` for each format (PNG at 300 dpi unless ``dpi``; SVG and PDF
    without a creation date, so the same results give byte-identical files)."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with _style():
        for fmt in formats:
            if fmt not in ("png", "svg", "pdf"):
                raise ValueError(f"figure format {fmt!r}: expected png, svg or pdf")
            path = out / f"{name}.{fmt}"
            meta: dict[str, Any] = {"Date": None} if fmt in ("svg", "pdf") else {}
            if dpi is not None:
                fig.savefig(path, format=fmt, metadata=meta, dpi=dpi)
            else:  # the style's savefig.dpi
                fig.savefig(path, format=fmt, metadata=meta)
            written.append(path)
    return written

