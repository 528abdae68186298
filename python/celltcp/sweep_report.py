"""``celltcp report SWEEP_DIR``: a report of your own sweep, in the layout of a study's report.

::

    celltcp sweep examples/sweep-dumbbell.toml -o sweep-dumbbell
    celltcp report sweep-dumbbell                       # -> sweep-dumbbell/report.html
    celltcp report sweep-dumbbell --metrics goodput_bps,rtt_p95_ms --flows cubic \\
        --x link.bottleneck.queue --group flow.cubic.cc

The report (``report.html``, self-contained like a study's: figures embedded, the sweep and
base scenario files verbatim, the versions that ran) has

- the **parameters**: every swept path with its values, the seeds, and how many runs finished,
  failed or are still missing;
- **figures**: for each metric, its mean against one parameter (``--x``; default the first swept
  parameter with more than one value) with one line per value of another (``--group``; default
  the next swept parameter, or the flow when only one is swept), Student t-intervals over the
  seeds as error bars; a further swept parameter gives one figure per value (at most
  :data:`MAX_FACETS`). Then the cwnd and goodput over time of a few runs side by side, each
  titled by its parameter values (``cc=cubic, queue=20p``), never by its run id;
- the **aggregated table**: per point and flow, each metric's mean ± the half-width of its 95 %
  t-interval and the number of runs ``n``, in display units.

Figures go to ``DIR/figures/`` (PNG and SVG, or ``--format``). Nothing is run: the report reads
``results.parquet`` and ``runs.parquet`` (and the run directories for the time traces). Exit
status 2, with one line naming the option and the value, for a directory that is not a sweep
or an unknown metric, parameter or flow.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import sweep_plots
from .report import Figure, write_report

__all__ = ["SweepReportError", "make_report", "run", "run_label", "swept_params", "DEFAULT_METRICS"]

PROG = "celltcp report"

#: the metrics drawn and tabulated when ``--metrics`` is not given (those the results have)
DEFAULT_METRICS = ("goodput_bps", "rtt_mean_ms", "retransmitted_segments", "loss_ratio")
#: at most this many figures per metric for the values of a third swept parameter
MAX_FACETS = 6
#: at most this many runs in the time-trace figure
MAX_TRACES = 4


class SweepReportError(ValueError):
    """Bad input to ``celltcp report``: the message names the option, the value and what was
    expected."""


@dataclass(frozen=True)
class _Plan:
    params: list[str]
    metrics: list[str]
    flows: list[str]
    x: str | None
    group: str | None
    facets: list[str]


def swept_params(runs: pd.DataFrame) -> list[str]:
    """The swept parameter columns of a sweep's run table, in the order of the sweep file."""
    cols = list(runs.columns)
    try:
        start, stop = cols.index("seed") + 1, cols.index("status")
    except ValueError as e:
        raise SweepReportError(f"runs.parquet: no {e.args[0].split()[0]} column "
                               "(written by an older celltcp? run the sweep again)") from e
    return cols[start:stop]


def _short(param: str, params: Sequence[str]) -> str:
    """The shortest tail of a dotted path that no other parameter shares (``queue`` for
    ``link.bottleneck.queue``; ``cubic.cc`` when two flows' ``cc`` are swept)."""
    parts = param.split(".")
    for k in range(1, len(parts) + 1):
        tail = ".".join(parts[-k:])
        if not any(p != param and (p == tail or p.endswith("." + tail)) for p in params):
            return tail
    return param


def run_label(values: dict[str, Any], params: Sequence[str], seed: Any = None) -> str:
    """A readable name for one run: ``cc=cubic, queue=20p`` (and ``seed 2`` when given)."""
    items = [f"{_short(p, params)}={sweep_plots._fmt_value(values[p])}" for p in params
             if p in values]
    if seed is not None:
        items.append(f"seed {seed}")
    return ", ".join(items) or "run"


def _distinct(df: pd.DataFrame, col: str) -> list[Any]:
    return sweep_plots.ordered(df[col].tolist())


def _plan(df: pd.DataFrame, params: list[str], metrics: Sequence[str] | None,
          flows: Sequence[str] | None, x: str | None, group: str | None) -> _Plan:
    if metrics:
        for m in metrics:
            if m not in df.columns or not pd.api.types.is_numeric_dtype(df[m]):
                numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
                           and c not in ("seed",) and c not in params]
                raise SweepReportError(f"--metrics {m!r}: not a numeric column of the results "
                                       f"(e.g. {', '.join(numeric[:8])})")
        chosen = list(metrics)
    else:
        chosen = [m for m in DEFAULT_METRICS
                  if m in df.columns and pd.to_numeric(df[m], errors="coerce").notna().any()]
    all_flows = [str(f) for f in _distinct(df, "flow")]
    if flows:
        for f in flows:
            if f not in all_flows:
                raise SweepReportError(f"--flows {f!r}: no such flow (flows: {', '.join(all_flows)})")
        chosen_flows = list(flows)
    else:
        chosen_flows = all_flows
    for opt, v in (("--x", x), ("--group", group)):
        if v is not None and v not in params and v != "flow":
            raise SweepReportError(f"{opt} {v!r}: not a swept parameter "
                                   f"(parameters: {', '.join(params) or 'none'}, or flow)")
    varying = [p for p in params if len(_distinct(df, p)) > 1]
    if x is None:
        x = varying[0] if varying else None
    rest = [p for p in varying if p != x]
    if group is None:
        if rest:
            group = rest[0]
        elif len(chosen_flows) > 1 and x != "flow":
            group = "flow"
    facets = [p for p in rest if p != group][:1]
    return _Plan(params, chosen, chosen_flows, x, group, facets)


def _metric_figures(df: pd.DataFrame, plan: _Plan) -> list[tuple[str, str, str, Any]]:
    """(name, title, caption, matplotlib figure) per metric and facet value: small multiples,
    one panel per flow whose metric means something (not all missing or zero)."""
    import math

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    out: list[tuple[str, str, str, Any]] = []
    if plan.x is None:
        return out
    facet = plan.facets[0] if plan.facets else None
    facet_values = _distinct(df, facet)[:MAX_FACETS] if facet else [None]
    by_flow = "flow" not in (plan.x, plan.group)
    for metric in plan.metrics:
        label, _ = sweep_plots.metric_label(metric)
        for fv in facet_values:
            sel = df if facet is None else df[df[facet] == fv]
            sel = sel[sel["flow"].isin(plan.flows)]
            panels: list[tuple[str | None, pd.DataFrame]] = []
            for flow in (plan.flows if by_flow else [None]):
                rows = sel if flow is None else sel[sel["flow"] == flow]
                vals = pd.to_numeric(rows[metric], errors="coerce")
                if rows.empty or vals.isna().all() or (vals.fillna(0) == 0).all():
                    continue  # the metric means nothing for this flow (goodput of a ping)
                panels.append((flow, rows))
            if not panels:
                continue
            ncol = min(3, len(panels))
            nrow = math.ceil(len(panels) / ncol)
            with sweep_plots._style():
                fig = MplFigure(figsize=(4.4 * ncol if ncol > 1 else 6.0, 3.3 * nrow + 0.3))
                FigureCanvasAgg(fig)
                axes = fig.subplots(nrow, ncol, squeeze=False)
                for k, (flow, rows) in enumerate(panels):
                    ax = axes[k // ncol][k % ncol]
                    sweep_plots.lines(rows, plan.x, metric, plan.group, ax=ax,
                                      title=f"flow {flow}" if flow is not None else label)
                    if k and ax.get_legend() is not None:
                        ax.get_legend().remove()  # one legend, in the first panel
                for k in range(len(panels), nrow * ncol):
                    axes[k // ncol][k % ncol].set_visible(False)
                where = f"{_short(facet, plan.params)}={sweep_plots._fmt_value(fv)}" \
                    if facet is not None else ""
                title = label + (f" — {where}" if where else "")
                if len(panels) > 1 or where:
                    fig.suptitle(title)
                fig.tight_layout()
            slug = "_".join(x for x in (metric, sweep_plots._fmt_value(fv) if fv is not None
                                        else None) if x)
            name = "".join(c if c.isalnum() or c in "-_." else "_" for c in slug)
            what = f"Mean {label} against {sweep_plots.param_label(plan.x)}"
            if plan.group:
                what += f", one line per {sweep_plots.param_label(plan.group)}"
            if by_flow and len(panels) > 1:
                what += ", one panel per flow"
            out.append((name, title, what + "; error bars: 95 % Student t-interval over the "
                        "seeds (none for a single seed).", fig))
    return out


def _trace_runs(sweep_dir: Path, runs: pd.DataFrame, params: list[str]) -> dict[str, Path]:
    """Up to :data:`MAX_TRACES` finished runs of the lowest seed, one per point, titled by
    their parameter values."""
    done = runs[runs["status"] == "done"]
    if done.empty:
        return {}
    first = done[done["seed"] == done["seed"].min()]
    chosen: dict[str, Path] = {}
    for rec in first.to_dict("records"):
        d = sweep_dir / "runs" / str(rec["run_id"])
        if d.is_dir():
            chosen[run_label(rec, params)] = d
        if len(chosen) == MAX_TRACES:
            break
    return chosen


def _aggregated(df: pd.DataFrame, plan: _Plan) -> pd.DataFrame:
    by = [p for p in plan.params if p in df.columns] + ["flow"]
    wide = sweep_plots.display_table(df[df["flow"].isin(plan.flows)], by, plan.metrics)
    return wide.rename(columns={p: _short(p, plan.params) for p in plan.params})


def make_report(sweep_dir: str | Path, out: str | Path | None = None, *,
                metrics: Sequence[str] | None = None, flows: Sequence[str] | None = None,
                x: str | None = None, group: str | None = None,
                formats: Sequence[str] = ("png", "svg"), traces: bool = True) -> Path:
    """Write the report of the sweep in ``sweep_dir`` (default ``sweep_dir/report.html``)."""
    from .sweep import BASE_FILE, RESULTS, RUNS_TABLE, SWEEP_FILE

    d = Path(sweep_dir)
    if not (d / SWEEP_FILE).is_file() or not (d / RUNS_TABLE).is_file():
        raise SweepReportError(f"SWEEP_DIR {str(d)!r}: not a sweep directory (no {SWEEP_FILE} "
                               f"or {RUNS_TABLE}; make one with `celltcp sweep SWEEP.toml -o DIR`)")
    runs = pd.read_parquet(d / RUNS_TABLE)
    params = swept_params(runs)
    df = pd.read_parquet(d / RESULTS) if (d / RESULTS).is_file() else pd.DataFrame()
    if df.empty or "flow" not in df.columns:
        raise SweepReportError(f"SWEEP_DIR {str(d)!r}: no finished run yet (runs.parquet: "
                               f"{len(runs)} runs, none done)")
    plan = _plan(df, params, metrics, flows, x, group)

    figdir = d / "figures"
    figures = []
    for name, title, caption, fig in _metric_figures(df, plan):
        written = sweep_plots.save(fig, figdir, name, formats)
        png = next((p for p in written if p.suffix == ".png"), None)
        if png is None:  # the report embeds PNGs: draw one beside the chosen formats
            png = sweep_plots.save(fig, figdir, name, ("png",))[0]
        svg = next((p for p in written if p.suffix == ".svg"), None)
        figures.append(Figure(png=png, svg=svg, caption=caption, title=title))
    chosen = _trace_runs(d, runs, params) if traces else {}
    tcp_flows = [f for f in plan.flows
                 if "app" not in df.columns or df.loc[df["flow"] == f, "app"].isin(
                     ["bulk", "iperf", "web", "video"]).any()]
    if chosen and tcp_flows:
        try:
            fig = sweep_plots.traces(chosen, flows=tcp_flows)
        except (KeyError, ValueError, IndexError):
            fig = None  # runs without TCP time series (series switched off)
        if fig is not None:
            written = sweep_plots.save(fig, figdir, "traces", formats)
            png = next((p for p in written if p.suffix == ".png"), None) or \
                sweep_plots.save(fig, figdir, "traces", ("png",))[0]
            figures.append(Figure(
                png=png, svg=next((p for p in written if p.suffix == ".svg"), None),
                title="cwnd and goodput over time",
                caption="Congestion window and goodput of the TCP flows over time in "
                        f"{len(chosen)} runs (the first seed of each), titled by their "
                        "parameter values."))

    counts = runs["status"].value_counts().to_dict()
    values = "; ".join(f"{p} = {', '.join(sweep_plots._fmt_value(v) for v in _distinct(runs, p))}"
                       for p in params)
    seeds = ", ".join(str(s) for s in sorted(runs["seed"].unique()))
    intro = (f"<p>Sweep directory <code>{_html(str(d))}</code>. Swept: {_html(values) or 'nothing'}"
             f"; seeds {_html(seeds)}. Metrics: {_html(', '.join(plan.metrics))}; flows: "
             f"{_html(', '.join(plan.flows))}.</p>")
    files = {}
    for name in (SWEEP_FILE, BASE_FILE):
        if (d / name).is_file():
            files[name] = (d / name).read_text(encoding="utf-8")
    notes = []
    if counts.get("failed"):
        notes.append(f"{counts['failed']} run(s) failed (their errors are in runs.parquet and "
                     "failed/); the figures and the table use the runs that finished.")
    if counts.get("pending"):
        notes.append(f"{counts['pending']} run(s) have not run yet: `celltcp sweep` on the same "
                     "file and directory runs them.")
    target = Path(out) if out is not None else d / "report.html"
    return write_report(
        target, title=f"celltcp sweep report: {d.name}",
        subtitle=f"{len(runs)} runs over {len(params)} swept parameter(s)",
        intro_html=intro, figures=figures, aggregated=_aggregated(df, plan), files=files,
        run_counts={"done": int(counts.get("done", 0)), "failed": int(counts.get("failed", 0)),
                    "not run yet": int(counts.get("pending", 0))},
        notes=notes)


def _html(s: str) -> str:
    import html

    return html.escape(s, quote=True)


def run(args: argparse.Namespace) -> int:
    try:
        path = make_report(args.dir, args.out, metrics=args.metrics, flows=args.flows, x=args.x,
                           group=args.group, formats=args.format, traces=not args.no_traces)
    except (SweepReportError, FileNotFoundError) as e:
        sys.stderr.write(f"celltcp: error: {e}\n")
        return 2
    print(path)
    return 0
