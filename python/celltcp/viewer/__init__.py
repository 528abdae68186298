"""``celltcp view DIR``: a run, a sweep or a study in the browser.

::

    celltcp view out/lte                       # writes out/lte/view.html and opens it
    celltcp view sweep-dumbbell --export dumbbell.html --no-open

One self-contained HTML page (no network needed to open it: the plotting library, uPlot 1.6.32,
MIT licence, is embedded with the data) with

- **linked time series**: cwnd, goodput and smoothed RTT per TCP flow, queue occupancy per link,
  and for LTE runs per-UE CQI, PRBs per TTI, serving RSRP and PHY rate, and per-cell PRB
  utilisation. Dragging across a plot zooms every plot to that interval (double-click resets);
  the cursor moves in all plots at once; handovers are dashed lines in every plot;
- **a map** of the cells (sites, sector boresights) and the UEs' trajectories, handovers marked
  where they happened, and each UE's position at the cursor's time; a **timeline** of the
  handovers (click one to zoom to it);
- **for sweeps and studies**, a table of the runs (parameters, status, total goodput, mean RTT,
  retransmissions) with a filter; a click selects a run, Ctrl/Shift-click adds runs to compare
  (their series are overlaid, named by their parameter values).

Data are read from the run directories (``summary.json``, ``timeseries/*.parquet``), downsampled
to at most ``max_points`` samples per series; a sweep embeds at most ``max_runs`` runs' series
(the others are listed, greyed). Nothing is run.
"""

from __future__ import annotations

import html
import json
import math
import os
import string
import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ViewerError", "collect", "write_page", "run"]

HERE = Path(__file__).resolve().parent
#: default cap on samples per series: one run, and each run of a sweep (many runs' series make
#: the page heavy: a 90-run study with 2000 points per series was 45 MB)
MAX_POINTS = 2000
SWEEP_MAX_POINTS = 300
#: default cap on the runs of a sweep whose series are embedded
MAX_RUNS = 100
#: goodput is drawn in at most this many bins per run
GOODPUT_BINS = 200


class ViewerError(ValueError):
    """Bad input to ``celltcp view``: names the argument, the value and what was expected."""


def _clean(v: Any) -> Any:
    """JSON-safe: NaN/inf -> None, numpy scalars -> Python."""
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    return v


def _col(a: np.ndarray, digits: int = 4) -> list[Any]:
    """A column for the page: rounded to ``digits`` significant-ish decimals, NaN as null."""
    out: list[Any] = []
    for x in np.asarray(a, float):
        if not math.isfinite(x):
            out.append(None)
        else:
            out.append(float(f"{x:.{digits}g}"))
    return out


def _stride(n: int, max_points: int) -> int:
    return max(1, math.ceil(n / max(1, max_points)))


def _table(d: Path, name: str) -> pd.DataFrame | None:
    p = d / "timeseries" / f"{name}.parquet"
    if not p.is_file():
        return None
    df = pd.read_parquet(p)
    return df if len(df) else None


def _pivot(df: pd.DataFrame, key: str, value: str) -> pd.DataFrame:
    """time_s x entity (``key``), last value per sample time."""
    return df.pivot_table(index="time_s", columns=key, values=value, aggfunc="last").sort_index()


def _panel(pid: str, title: str, unit: str, piv: pd.DataFrame, names: dict[int, str],
           max_points: int, scale: float = 1.0, group: str = "") -> dict[str, Any]:
    k = _stride(len(piv), max_points)
    sub = piv.iloc[::k]
    return {
        "id": pid, "title": title, "unit": unit, "group": group,
        "t": _col(sub.index.to_numpy(float), 7),
        "series": [{"name": names.get(int(c), f"{c}"), "values": _col(sub[c].to_numpy(float) * scale)}
                   for c in sub.columns],
    }


def _goodput_panel(tcp: pd.DataFrame, names: dict[int, str], max_points: int) -> dict[str, Any]:
    piv = _pivot(tcp, "flow", "delivered_bytes")
    t = piv.index.to_numpy(float)
    # bins of at least 1/200 of the run: goodput per 10 ms sample is mostly packet-level noise
    k = max(_stride(len(t), max_points), _stride(len(t), GOODPUT_BINS))
    # goodput over the stride: difference of cumulative delivered bytes at the kept samples
    idx = np.arange(0, len(t), k)
    tt = t[idx]
    series = []
    for c in piv.columns:
        v = piv[c].ffill().to_numpy(float)[idx]
        g = np.full(len(idx), np.nan)
        if len(idx) > 1:
            dt = np.diff(tt)
            with np.errstate(all="ignore"):
                g[1:] = np.where(dt > 0, np.diff(v) * 8 / dt / 1e6, np.nan)
        series.append({"name": names.get(int(c), f"{c}"), "values": _col(g)})
    return {"id": "goodput", "title": "goodput", "unit": "Mbit/s", "group": "tcp",
            "t": _col(tt, 7), "series": series}


def _names(items: Sequence[dict[str, Any]], prefix: str) -> dict[int, str]:
    return {i: str(x.get("name", f"{prefix} {i}")) for i, x in enumerate(items)}


def _cells(summary: dict[str, Any], manifest: dict[str, Any]) -> list[dict[str, Any]]:
    lte = summary.get("lte") or {}
    cells = []
    conf = {e.get("name"): e for e in ((manifest.get("config") or {}).get("lte") or {}).get("enb", [])
            if isinstance(e, dict)}
    for c in lte.get("cells", []) or []:
        x, y = c.get("x_m"), c.get("y_m")
        if x is None and isinstance(conf.get(c.get("name"), {}).get("position"), list):
            x, y = conf[c["name"]]["position"][:2]
        cells.append({"name": c.get("name"), "x": _clean(x), "y": _clean(y),
                      "boresight": _clean(c.get("boresight_deg")),
                      "dl_prb_utilization": _clean(c.get("dl_prb_utilization"))})
    return cells


def run_data(d: Path, max_points: int = MAX_POINTS) -> dict[str, Any]:
    """What the page shows of one run directory."""
    summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    mpath = d / "manifest.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8")) if mpath.is_file() else {}
    flows, links = summary.get("flows", []) or [], summary.get("links", []) or []
    lte = summary.get("lte") or {}
    ues = lte.get("ues", []) or []
    fnames, lnames = _names(flows, "flow"), _names(links, "link")
    unames, cnames = _names(ues, "ue"), _names(lte.get("cells", []) or [], "cell")
    panels: list[dict[str, Any]] = []
    tcp = _table(d, "tcp")
    if tcp is not None:
        panels.append(_panel("cwnd", "congestion window", "KB", _pivot(tcp, "flow", "cwnd_bytes"),
                             fnames, max_points, 1 / 1024, "tcp"))
        panels.append(_goodput_panel(tcp, fnames, max_points))
        panels.append(_panel("srtt", "smoothed RTT", "ms", _pivot(tcp, "flow", "srtt_ms"),
                             fnames, max_points, 1.0, "tcp"))
    q = _table(d, "queue")
    if q is not None:
        piv = _pivot(q, "link", "queue_bytes")
        piv = piv[[c for c in piv.columns if (piv[c].fillna(0) > 0).any()]]
        if len(piv.columns):
            panels.append(_panel("queue", "queue occupancy", "KB", piv, lnames, max_points,
                                 1 / 1024, "links"))
    ue = _table(d, "lte_ue")
    if ue is not None:
        for col, pid, title, unit in (("cqi", "cqi", "CQI", "CQI index"),
                                      ("dl_prbs_per_tti", "prbs", "downlink PRBs per TTI", "PRBs"),
                                      ("rsrp_serving_dbm", "rsrp", "serving-cell RSRP", "dBm"),
                                      ("dl_phy_mbps", "phy", "downlink PHY rate", "Mbit/s")):
            if col in ue.columns:
                panels.append(_panel(pid, title, unit, _pivot(ue, "ue", col), unames,
                                     max_points, 1.0, "lte"))
    cell = _table(d, "lte_cell")
    if cell is not None and "dl_prb_utilization" in cell.columns:
        panels.append(_panel("cell_prb", "cell downlink PRB utilisation", "%",
                             _pivot(cell, "cell", "dl_prb_utilization"), cnames, max_points,
                             100.0, "lte"))
    tracks = []
    if ue is not None and {"x_m", "y_m"} <= set(ue.columns):
        for u, g in ue.groupby("ue", sort=True):
            g = g.sort_values("time_s")
            k = _stride(len(g), max(50, max_points // 4))
            s = g.iloc[::k]
            tracks.append({"name": unames.get(int(u), f"ue {u}"), "t": _col(s["time_s"], 7),
                           "x": _col(s["x_m"], 6), "y": _col(s["y_m"], 6)})
    handovers = []
    for h in lte.get("handovers", []) or []:
        t = h.get("detach_s", h.get("decided_s"))
        handovers.append({"t": _clean(t), "end": _clean(h.get("attach_s")), "ue": h.get("ue"),
                          "source": h.get("source"), "target": h.get("target"),
                          "kind": h.get("kind", "handover"),
                          "interruption_ms": _clean(h.get("interruption_ms"))})
    return {
        "duration": _clean(summary.get("duration_s")),
        "flows": [{"name": f.get("name"), "app": f.get("app"), "cc": f.get("cc"),
                   "goodput_mbps": _clean((f.get("goodput_bps") or 0) / 1e6)} for f in flows],
        "panels": panels,
        "map": {"cells": _cells(summary, manifest), "tracks": tracks},
        "handovers": handovers,
    }


def _is_run(d: Path) -> bool:
    return (d / "summary.json").is_file()


def _sweep_dirs(d: Path) -> list[tuple[str, Path]]:
    """(part, sweep directory) of a sweep or a study (its parts are sweeps in subfolders)."""
    out = [("main", d)] if (d / "runs.parquet").is_file() else []
    for sub in sorted(p for p in d.iterdir() if p.is_dir()):
        if (sub / "runs.parquet").is_file():
            out.append((sub.name, sub))
    return out


def _label(params: dict[str, Any], names: Sequence[str]) -> str:
    from .. import sweep_report

    return sweep_report.run_label(params, list(names))


def collect(dir: str | Path, *, max_points: int | None = None, max_runs: int = MAX_RUNS
            ) -> dict[str, Any]:
    """Everything the page shows of a run, sweep or study directory (``max_points`` per
    series: default :data:`MAX_POINTS` for a run, :data:`SWEEP_MAX_POINTS` per run of a sweep)."""
    d = Path(dir)
    if not d.is_dir():
        raise ViewerError(f"DIR {str(d)!r}: not a directory")
    if _is_run(d):
        return {"kind": "run", "title": d.resolve().name, "columns": [],
                "runs": [{"id": "run", "label": d.resolve().name, "cells": {}, "embedded": True}],
                "data": {"run": run_data(d, max_points or MAX_POINTS)}}
    sweeps = _sweep_dirs(d)
    if not sweeps:
        raise ViewerError(f"DIR {str(d)!r}: not a run, sweep or study directory (no summary.json "
                          "or runs.parquet)")
    rows: list[dict[str, Any]] = []
    data: dict[str, Any] = {}
    all_params: list[str] = []
    for part, sd in sweeps:
        runs = pd.read_parquet(sd / "runs.parquet")
        cols = list(runs.columns)
        params = cols[cols.index("seed") + 1: cols.index("status")] if "status" in cols else []
        all_params += [p for p in params if p not in all_params]
        res = pd.read_parquet(sd / "results.parquet") if (sd / "results.parquet").is_file() \
            else pd.DataFrame()
        for rec in runs.to_dict("records"):
            rid = str(rec["run_id"])
            sel = res[res["run_id"] == rid] if len(res) else res
            cells: dict[str, Any] = {p: _clean(rec.get(p)) for p in params}
            cells["seed"] = _clean(rec.get("seed"))
            cells["status"] = rec.get("status")
            if len(sweeps) > 1:
                cells["part"] = part
            if len(sel):
                cells["goodput (Mbit/s)"] = _clean(round(float(sel["goodput_bps"].fillna(0).sum()) / 1e6, 3)) \
                    if "goodput_bps" in sel else None
                cells["mean RTT (ms)"] = _clean(round(float(sel["rtt_mean_ms"].mean()), 2)) \
                    if "rtt_mean_ms" in sel and sel["rtt_mean_ms"].notna().any() else None
                cells["retransmissions"] = _clean(int(sel["retransmitted_segments"].fillna(0).sum())) \
                    if "retransmitted_segments" in sel else None
            key = rid if part == "main" else f"{part}/{rid}"
            run_dir = sd / "runs" / rid
            embedded = rec.get("status") == "done" and _is_run(run_dir) and len(data) < max_runs
            if embedded:
                data[key] = run_data(run_dir, max_points or SWEEP_MAX_POINTS)
            label = _label({p: rec.get(p) for p in params}, params) + f", seed {rec.get('seed')}"
            rows.append({"id": key, "label": (f"[{part}] " if part != "main" else "") + label,
                         "cells": cells, "embedded": embedded})
    columns = (["part"] if len(sweeps) > 1 else []) + all_params + \
        ["seed", "status", "goodput (Mbit/s)", "mean RTT (ms)", "retransmissions"]
    findings = []
    if (d / "findings.json").is_file():
        try:
            findings = json.loads((d / "findings.json").read_text(encoding="utf-8"))
        except ValueError:
            findings = []
    # a study's directory has its findings (a sweep's report.html writes an empty list)
    kind = "study" if findings else "sweep"
    return {"kind": kind, "title": d.resolve().name, "columns": columns, "runs": rows,
            "data": data, "findings": findings, "max_runs": max_runs}


def write_page(dir: str | Path, out: str | Path | None = None, *, max_points: int | None = None,
               max_runs: int = MAX_RUNS) -> Path:
    """Write the self-contained page of ``dir`` (default ``DIR/view.html``); returns its path."""
    info = collect(dir, max_points=max_points, max_runs=max_runs)
    target = Path(out) if out is not None else Path(dir) / "view.html"
    payload = json.dumps(info, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/")  # never closes the script element early
    tpl = string.Template((HERE / "view.html").read_text(encoding="utf-8"))
    page = tpl.substitute(
        title=html.escape(f"celltcp view: {info['title']}"),
        uplot_css=(HERE / "uPlot.min.css").read_text(encoding="utf-8"),
        uplot_js=(HERE / "uPlot.iife.min.js").read_text(encoding="utf-8"),
        viewer_js=(HERE / "viewer.js").read_text(encoding="utf-8"),
        data=payload,
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(target)
    return target


def run(args: Any) -> int:
    """``celltcp view``."""
    try:
        if args.max_points is not None and args.max_points < 10:
            raise ViewerError(f"--max-points {args.max_points}: expected at least 10")
        if args.max_runs < 1:
            raise ViewerError(f"--max-runs {args.max_runs}: expected at least 1")
        path = write_page(args.dir, args.export, max_points=args.max_points,
                          max_runs=args.max_runs)
    except (ViewerError, FileNotFoundError) as e:
        sys.stderr.write(f"celltcp: error: {e}\n")
        return 2
    print(path)
    if not args.export and not args.no_open:
        if not webbrowser.open(path.resolve().as_uri()):
            print(f"(no browser found here: open {path} in one)")
    return 0
