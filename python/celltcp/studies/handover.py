"""Study ``handover`` (paper 001): Nguyen et al., TCP over LTE handovers with PDCP seamless and
lossless forwarding (ns-3 with RLC AM and a lossless handover added, Linux CUBIC through NSC),
and a sudden load increase in a cell.

Scenario 1 of the paper: two eNBs 750 m apart, X2 with 6 ms of delay, a UE at a speed drawn from
a normal distribution (mean 40 km/h, σ 5 km/h) driving from one to the other while downloading
with TCP CUBIC; the PDCP (retransmission) queue from 64 KB to 4 MB. Its findings:

1. in seamless handovers, the larger the PDCP queue, the lower the TCP goodput (more SDUs sit in
   the RLC queues the source discards);
2. in lossless handovers, the larger the PDCP queue, the larger the end-to-end delay;
3. seamless handover costs throughput, lossless handover costs delay.

celltcp's setting is ``handover/scenario.toml`` (the UE drives from the source eNB for 70 s, the
time to cover the 750 m at 40 km/h); the sweep crosses the forwarding with the paper's queue
over seeds (each seed draws a speed). The paper's queue is the PDCP *retransmission* queue: what
the source keeps for forwarding at a handover, ``[lte.pdcp] forwarding_buffer``; the bearer's
steady-state queue (``[lte.pdcp] buffer``) is 4 MB in every run, so the standing queue is the
same everywhere and the checks read the handover window (:func:`handover_window`: 2 s before
and after the UE leaves the source), not the whole run.

Scenario 2 (part ``surge``, ``handover/surge/``): UEs uniformly within 250 m of one eNB, Levy
walk, attached from the start; they start downloading at the same instant. celltcp adds a
"tagged" UE that downloads from the start, so the surge is seen by a TCP connection under way,
and sweeps the size of the crowd. The paper's findings (its abstract): a load increase in a cell

4. causes a dramatic bandwidth reduction on the UEs, and
5. significantly degrades TCP's performance.

Both are read from the tagged flow's time series over equal windows before and after the surge
(:func:`enrich` adds them to the results table).

The paper's scenario 2 names the cause of the load: "neighbor eNodeBs fail and users are handed
to a survived eNodeB". Part ``failure`` (``handover/failure/``) runs that: three eNBs in a row,
the tagged UE in the middle (surviving) cell, the two neighbours' UEs downloading from the
start; both neighbours fail at 10 s and their UEs re-establish in the survivor. Findings 4 and
5 are checked on it as well, over windows before and after the failure, against the number of
UEs moved.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import plots
from .. import sweep_plots as sp
from ..report import Finding, Grade, Quantity, Verdict, graded
from ..sweep import t_quantile
from . import MAIN, PART, Study, StudyFigure, part_dir, run_dir

MODE = "lte.handover.forwarding"
#: the swept queue: the source's PDCP forwarding buffer ("PDCP retransmission queue" in the
#: paper), separate from the bearer's steady-state backlog (``[lte.pdcp] buffer``, fixed)
QUEUE = "lte.pdcp.forwarding_buffer"
#: 3GPP seamless (only what RLC had sent is lost), ns-3's flushing seamless (the source's whole
#: RLC backlog is lost: study 001's seamless), lossless.
MODES = ["seamless", "seamless-flush", "lossless"]
COLORS = {"seamless": "#D55E00", "seamless-flush": "#CC79A7", "lossless": "#0072B2"}
#: the handover window: seconds before and after the UE leaves the source (``detach_s``) over
#: which the checks compare goodput and RTT
HO_BEFORE_S = 2.0
HO_AFTER_S = 2.0
#: how long after the detach the largest delivery gap (the stall) is looked for
HO_STALL_S = 3.0

SURGE = "surge"
CROWD = "lte.ue.crowd.count"
#: scenario 2 with cell failures: the part, the failing cells' UE groups (their counts, summed,
#: are the UEs moved to the survivor: prepare's column ``moved``) and their flows' name
FAILURE = "failure"
FAILED_CELL_UES = ("lte.ue.ue-west.count", "lte.ue.ue-east.count")
MOVED_FLOW = "moved"
TAGGED = "tagged"
PHASES = ["before", "after"]
PHASE_COLORS = {"before": "#009E73", "after": "#D55E00"}
#: "a dramatic bandwidth reduction": the tagged UE's goodput after the surge at most this
#: fraction of before (fixed from the wording, before any run)
DROP_MAX = 0.5
#: "significantly degrades TCP": its smoothed RTT after the surge at least this many times before
RTT_GROWTH_MIN = 2.0


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    if MODE in df.columns:
        df["forwarding"] = df[MODE].astype(str)
    if QUEUE in df.columns:
        df["pdcp_queue"] = df[QUEUE].astype(str)
    if CROWD in df.columns:
        df["crowd"] = pd.to_numeric(df[CROWD], errors="coerce").astype("Int64")
    if all(c in df.columns for c in FAILED_CELL_UES):
        moved = sum(pd.to_numeric(df[c], errors="coerce") for c in FAILED_CELL_UES)
        df["moved"] = pd.Series(moved, index=df.index).astype("Int64")
    return df


# --- scenario 2: metrics over time windows around the load's arrival ------------------------


@dataclass(frozen=True)
class Load:
    """One form of scenario 2: the part that runs it and how its results are named."""

    part: str
    #: prepare's column with the size of the load (the swept UE count)
    x: str
    #: "crowd 20" / "20 moved": how a point is named in the verdicts
    point: str
    #: "the surge" / "the failure": the instant the load arrives
    event: str
    #: name prefix of the flows of the UEs that make the load
    flows: str
    #: figure titles
    title: str


LOADS = {
    SURGE: Load(SURGE, "crowd", "crowd {n}", "the surge", f"{SURGE}-", "Load surge"),
    FAILURE: Load(FAILURE, "moved", "{n} moved", "the failure", f"{MOVED_FLOW}-", "Cell failure"),
}


def window_metrics(tcp: pd.DataFrame, at_s: float, width_s: float) -> dict[str, float]:
    """Goodput and mean smoothed RTT of one TCP flow (its rows of ``timeseries/tcp.parquet``)
    over ``[at - width, at)`` ("before") and ``[at, at + width)`` ("after"). Goodput is the
    growth of the cumulative acknowledged bytes over the window (interpolated between samples;
    0 before the flow's first sample); a window without samples gives NaN."""
    g = tcp.sort_values("time_s")
    t = g["time_s"].to_numpy(float)
    d = g["delivered_bytes"].to_numpy(float)
    srtt = g["srtt_ms"].to_numpy(float)
    out: dict[str, float] = {}
    for name, lo, hi in (("before", at_s - width_s, at_s), ("after", at_s, at_s + width_s)):
        inside = (t >= lo) & (t < hi)
        if width_s <= 0 or not inside.any():
            out[f"goodput_{name}_bps"] = out[f"srtt_{name}_ms"] = float("nan")
            continue
        gained = np.interp(hi, t, d, left=0.0) - np.interp(lo, t, d, left=0.0)
        out[f"goodput_{name}_bps"] = float(gained * 8.0 / width_s)
        s = srtt[inside]
        s = s[np.isfinite(s) & (s > 0)]
        out[f"srtt_{name}_ms"] = float(s.mean()) if s.size else float("nan")
    return out


def event_time(part: str, summary: Mapping[str, Any]) -> float | None:
    """When the load arrives in a run of ``part`` (from its ``summary.json``): the latest flow
    start in the surge part; the first cell failure (``lte.handovers`` of kind
    ``cell-failure``: when its UEs were detached) in the failure part, None without one."""
    if part == FAILURE:
        ts = [float(h["detach_s"]) for h in (summary.get("lte") or {}).get("handovers", [])
              if h.get("kind") == "cell-failure"]
        return min(ts) if ts else None
    return max((float(f.get("start_s") or 0.0) for f in summary.get("flows", [])), default=0.0)


def handover_window(tcp: pd.DataFrame, ho: Mapping[str, Any]) -> dict[str, float]:
    """The handover window of one run's download (its rows of ``timeseries/tcp.parquet``) and
    its first X2 handover (an entry of ``summary.json``'s ``lte.handovers``): goodput and mean
    smoothed RTT over the ``HO_BEFORE_S`` before the detach and the ``HO_AFTER_S`` after it, the
    longest time without any newly acknowledged byte within ``HO_STALL_S`` after it (sample
    resolution), and the SDUs forwarded, lost at the source and not forwarded."""
    at = float(ho["detach_s"])
    before = window_metrics(tcp, at, HO_BEFORE_S)
    after = window_metrics(tcp, at, HO_AFTER_S)
    g = tcp.sort_values("time_s")
    t = g["time_s"].to_numpy(float)
    d = g["delivered_bytes"].to_numpy(float)
    inside = (t >= at) & (t < at + HO_STALL_S)
    stall, start = 0.0, None
    for ti, grew in zip(t[inside][1:], np.diff(d[inside]) > 0):
        if not grew:
            start = ti if start is None else start
        else:
            if start is not None:
                stall = max(stall, ti - start)
            start = None
    if start is not None:
        stall = max(stall, float(t[inside][-1]) - start)
    return {
        "ho_at_s": at,
        "ho_goodput_before_bps": before["goodput_before_bps"],
        "ho_goodput_after_bps": after["goodput_after_bps"],
        "ho_srtt_before_ms": before["srtt_before_ms"],
        "ho_srtt_after_ms": after["srtt_after_ms"],
        "ho_rtt_added_ms": after["srtt_after_ms"] - before["srtt_before_ms"],
        "ho_stall_s": stall,
        "ho_sdus_forwarded": float(ho.get("sdus_forwarded", 0)) + float(ho.get("sdus_forwarded_late", 0)),
        "ho_sdus_lost": float(ho.get("sdus_discarded", 0)),
        "ho_sdus_not_forwarded": float(ho.get("sdus_not_forwarded", 0)),
    }


HO_COLS = ["ho_at_s", "ho_goodput_before_bps", "ho_goodput_after_bps", "ho_srtt_before_ms",
           "ho_srtt_after_ms", "ho_rtt_added_ms", "ho_stall_s", "ho_sdus_forwarded", "ho_sdus_lost",
           "ho_sdus_not_forwarded"]


def _enrich_handover(df: pd.DataFrame, sweep_dir: Path) -> pd.DataFrame:
    """Adds :func:`handover_window`'s columns (``HO_COLS``) to the rows of the main part's
    download."""
    sel = df["flow"] == "dl"
    if PART in df.columns:
        sel &= df[PART] == MAIN
    if not sel.any():
        return df
    rows = []
    for run_id in df.loc[sel, "run_id"].unique():
        d = Path(sweep_dir) / "runs" / str(run_id)
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        hos = [h for h in (summary.get("lte") or {}).get("handovers", []) if h.get("kind") == "handover"]
        tcp_path = d / "timeseries" / "tcp.parquet"
        idx = next((i for i, f in enumerate(summary.get("flows", [])) if f.get("name") == "dl"), None)
        if not hos or idx is None or not tcp_path.is_file():
            continue
        tcp = pd.read_parquet(tcp_path)
        rows.append({"run_id": run_id, "flow": "dl", **handover_window(tcp[tcp["flow"] == idx], hos[0])})
    extra = pd.DataFrame(rows, columns=["run_id", "flow", *HO_COLS])
    part = df[sel].drop(columns=[c for c in HO_COLS if c in df.columns]).merge(extra, on=["run_id", "flow"], how="left")
    return pd.concat([df[~sel], part], ignore_index=True, sort=False)


def enrich(df: pd.DataFrame, sweep_dir: Path) -> pd.DataFrame:
    """Adds the handover window of the main part (:func:`handover_window`) and the load windows
    of the surge and failure parts (:func:`enrich_load`)."""
    return enrich_load(_enrich_handover(df, sweep_dir), sweep_dir)


def enrich_load(df: pd.DataFrame, sweep_dir: Path) -> pd.DataFrame:
    """Adds ``surge_at_s`` (when the load arrives, :func:`event_time`), ``goodput_before_bps``,
    ``goodput_after_bps``, ``srtt_before_ms`` and ``srtt_after_ms`` to the rows of the surge and
    failure parts: per flow, over equal windows before and after that instant, each as long as
    the shorter of the two sides."""
    cols = ["surge_at_s", "goodput_before_bps", "goodput_after_bps", "srtt_before_ms", "srtt_after_ms"]
    if PART not in df.columns:
        return df
    parts = [p for p in LOADS if (df[PART] == p).any()]
    if not parts:
        return df
    rows = []
    for part in parts:
        for run_id in df.loc[df[PART] == part, "run_id"].unique():
            d = part_dir(sweep_dir, part) / "runs" / str(run_id)
            summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
            at = event_time(part, summary)
            width = 0.0 if at is None else min(at, float(summary.get("duration_s") or 0.0) - at)
            tcp_path = d / "timeseries" / "tcp.parquet"
            tcp = pd.read_parquet(tcp_path) if tcp_path.is_file() else None
            for i, f in enumerate(summary.get("flows", [])):
                row: dict[str, object] = {"run_id": run_id, "flow": f.get("name"),
                                          "surge_at_s": float("nan") if at is None else at}
                if tcp is not None and at is not None and at > 0:
                    row.update(window_metrics(tcp[tcp["flow"] == i], at, width))
                rows.append(row)
    extra = pd.DataFrame(rows, columns=["run_id", "flow", *cols])
    sel = df[PART].isin(parts)
    loaded = df[sel].drop(columns=[c for c in cols if c in df.columns])
    loaded = loaded.merge(extra, on=["run_id", "flow"], how="left")
    return pd.concat([df[~sel], loaded], ignore_index=True, sort=False)


def _tagged(df: pd.DataFrame, load: Load = LOADS[SURGE]) -> pd.DataFrame:
    d = df if load.x in df.columns else prepare(df)
    if load.x not in d.columns:
        raise ValueError(f"no {load.title.lower()} runs (no {load.x!r} column: the part "
                         f"{load.part!r} did not run)")
    sel = d[(d["flow"] == TAGGED) & d[load.x].notna()]
    if PART in sel.columns:
        sel = sel[sel[PART] == load.part]
    for c in ("goodput_before_bps", "goodput_after_bps", "srtt_before_ms", "srtt_after_ms"):
        if c not in sel.columns:
            raise KeyError(f"results have no {c!r} (the windows around the load are added by enrich)")
    if sel.empty:
        raise ValueError(f"no rows for the {TAGGED!r} flow of the {load.part!r} runs")
    return sel


def _by_size(sel: pd.DataFrame, x: str, before: str, after: str) -> list[tuple[int, float, float]]:
    out = []
    for n in sorted(int(v) for v in sel[x].dropna().unique()):
        g = sel[sel[x] == n]
        b = pd.to_numeric(g[before], errors="coerce").dropna()
        a = pd.to_numeric(g[after], errors="coerce").dropna()
        if b.empty or a.empty:
            raise ValueError(f"no {before}/{after} for {x} = {n}")
        out.append((n, float(b.mean()), float(a.mean())))
    return out


def _bandwidth_drops(df: pd.DataFrame, load: Load) -> Verdict:
    pts = _by_size(_tagged(df, load), load.x, "goodput_before_bps", "goodput_after_bps")
    text = "; ".join(f"{load.point.format(n=n)}: {b / 1e6:.2f} → {a / 1e6:.2f} Mbit/s (×{a / b:.2f})"
                     for n, b, a in pts)
    n, b, a = pts[-1]
    return Verdict(f"tagged UE's goodput before → after {load.event}: {text}", a <= DROP_MAX * b)


def _rtt_grows(df: pd.DataFrame, load: Load) -> Verdict:
    pts = _by_size(_tagged(df, load), load.x, "srtt_before_ms", "srtt_after_ms")
    text = "; ".join(f"{load.point.format(n=n)}: {b:.0f} → {a:.0f} ms (×{a / b:.1f})" for n, b, a in pts)
    n, b, a = pts[-1]
    return Verdict(f"tagged flow's smoothed RTT before → after {load.event}: {text}",
                   a >= RTT_GROWTH_MIN * b)


def check_surge_bandwidth_drops(df: pd.DataFrame) -> Verdict:
    return _bandwidth_drops(df, LOADS[SURGE])


def check_surge_rtt_grows(df: pd.DataFrame) -> Verdict:
    return _rtt_grows(df, LOADS[SURGE])


def check_failure_bandwidth_drops(df: pd.DataFrame) -> Verdict:
    return _bandwidth_drops(df, LOADS[FAILURE])


def check_failure_rtt_grows(df: pd.DataFrame) -> Verdict:
    return _rtt_grows(df, LOADS[FAILURE])


def _dl(df: pd.DataFrame) -> pd.DataFrame:
    d = prepare(df) if "forwarding" not in df.columns else df
    sel = d[d["flow"] == "dl"]
    if PART in sel.columns:
        sel = sel[sel[PART] == MAIN]
    if sel.empty:
        raise ValueError("no rows for the dl flow")
    return sel


def _queues(d: pd.DataFrame) -> list[str]:
    qs = [str(q) for q in sp.ordered(d["pdcp_queue"])]
    if len(qs) < 2:
        raise ValueError("needs two PDCP forwarding buffers")
    return qs


def _mean(d: pd.DataFrame, metric: str, mode: str, queue: str) -> float:
    if metric not in d.columns:
        raise KeyError(f"results have no {metric!r} (the handover window is added by enrich)")
    v = pd.to_numeric(d[(d["forwarding"] == mode) & (d["pdcp_queue"] == queue)][metric], errors="coerce").dropna()
    if v.empty:
        raise ValueError(f"no {metric} for {mode}, {queue}")
    return float(v.mean())


#: The smallest relative change that counts as a trend: a paper reports a change a reader can
#: see on its figure, not a difference in the third digit.
TREND_MIN_FALL = 0.01

#: what every scenario-1 verdict rests on (the sweep's fixed settings)
SETTING = ("scenario 1, handover window (2 s before / 2 s after the UE leaves the source); "
           "forwarding buffer swept, steady-state PDCP queue ([lte.pdcp] buffer) 4 MB in every run")


def _paired_fall(d: pd.DataFrame, metric: str, mode: str, first: str, last: str) -> tuple[float, float, int]:
    """Seed-paired mean of ``metric`` at ``first`` minus at ``last`` (the same seed draws the same
    speed for every buffer), its one-sided 95 % Student-t bound, and the number of pairs."""
    s = d[d["forwarding"] == mode]
    a = s[s["pdcp_queue"] == first].groupby("seed")[metric].mean()
    b = s[s["pdcp_queue"] == last].groupby("seed")[metric].mean()
    paired = (a - b).dropna()
    if len(paired) < 2:
        return float(paired.mean()) if len(paired) else float("nan"), float("nan"), len(paired)
    bound = t_quantile(0.95, len(paired) - 1) * float(paired.std()) / np.sqrt(len(paired))
    return float(paired.mean()), bound, len(paired)


def check_seamless_goodput_falls(df: pd.DataFrame, mode: str = "seamless") -> Verdict:
    """Agrees (in direction) when the mean goodput of ``mode`` over the ``HO_AFTER_S`` after the
    handover at the largest forwarding buffer is at least ``TREND_MIN_FALL`` below the one at the
    smallest, with two or more seeds the seed-paired fall is above its one-sided 95 % Student-t
    bound, and the SDUs lost at the handover grow with the buffer (the paper's reason: a larger
    queue, more discarded); a fall without more loss does not agree."""
    d = _dl(df)
    qs = _queues(d)
    g = [_mean(d, "ho_goodput_after_bps", mode, q) for q in qs]
    lost = [_mean(d, "ho_sdus_lost", mode, q) for q in qs]
    before = [_mean(d, "ho_goodput_before_bps", mode, q) for q in qs]
    fall = (g[0] - g[-1]) / g[0]
    ok = fall >= TREND_MIN_FALL
    text = (f"{mode}, goodput in the {HO_AFTER_S:g} s after the handover (Mbit/s) by forwarding "
            f"buffer: " + ", ".join(f"{q} {x / 1e6:.2f}" for q, x in zip(qs, g))
            + f" (before it: {min(before) / 1e6:.2f}–{max(before) / 1e6:.2f}); SDUs lost at the "
            "handover: " + ", ".join(f"{x:.0f}" for x in lost)
            + f"; fall {fall * 100:.2f} % (needs ≥ {TREND_MIN_FALL * 100:g} %)")
    mean, bound, n = _paired_fall(d, "ho_goodput_after_bps", mode, qs[0], qs[-1])
    if n >= 2:
        ok = ok and mean > bound
        text += f"; seed-paired fall {mean / 1e6:.3f} Mbit/s vs one-sided 95 % bound {bound / 1e6:.3f} over {n} seeds"
    # The paper's reason: a larger queue loses more at the handover. A fall without it is not
    # the paper's finding.
    if ok and not lost[-1] > lost[0]:
        ok = False
        text += (f"; the goodput falls, but not for the paper's reason: the SDUs lost do not grow "
                 f"with the buffer ({lost[0]:.0f} → {lost[-1]:.0f})")
    return Verdict(text, grade=graded(bool(ok)), setting=SETTING,
                   tolerance="no number in the paper: direction only",
                   numbers=(Quantity(f"{mode} goodput after the handover, {qs[0]} → {qs[-1]}",
                                     f"{g[0] / 1e6:.2f} → {g[-1] / 1e6:.2f}", unit="Mbit/s"),
                            Quantity(f"SDUs lost at the handover, {qs[0]} → {qs[-1]}",
                                     f"{lost[0]:.0f} → {lost[-1]:.0f}")))


def check_flush_goodput_falls(df: pd.DataFrame) -> Verdict:
    d = _dl(df)
    if "seamless-flush" not in set(d["forwarding"]):
        raise ValueError("no seamless-flush runs")
    return check_seamless_goodput_falls(df, "seamless-flush")


def check_lossless_delay_grows(df: pd.DataFrame) -> Verdict:
    """Agrees (in direction) when the lossless download's mean smoothed RTT over the
    ``HO_AFTER_S`` after the handover, less the one over the ``HO_BEFORE_S`` before it (the delay
    the handover adds, not the standing queue), rises with every forwarding buffer."""
    d = _dl(df)
    qs = _queues(d)
    after = [_mean(d, "ho_srtt_after_ms", "lossless", q) for q in qs]
    before = [_mean(d, "ho_srtt_before_ms", "lossless", q) for q in qs]
    fwd = [_mean(d, "ho_sdus_forwarded", "lossless", q) for q in qs]
    added = [a - b for a, b in zip(after, before)]
    text = ("lossless, smoothed RTT after − before the handover (ms) by forwarding buffer: "
            + ", ".join(f"{q} {x:+.0f} ({b:.0f} → {a:.0f})" for q, x, b, a in zip(qs, added, before, after))
            + "; SDUs forwarded: " + ", ".join(f"{x:.0f}" for x in fwd))
    return Verdict(text, grade=graded(bool(np.all(np.diff(added) > 0))), setting=SETTING,
                   tolerance="no number in the paper: direction only",
                   numbers=(Quantity(f"RTT added by the handover, {qs[0]} → {qs[-1]}",
                                     f"{added[0]:+.0f} → {added[-1]:+.0f}", unit="ms"),))


def check_tradeoff(df: pd.DataFrame) -> Verdict:
    """At the largest forwarding buffer, over the handover window: the paper's seamless (its ns-3
    flushes the source's RLC: ``seamless-flush``) has a lower goodput after the handover than
    lossless by at least ``TREND_MIN_FALL``, loses SDUs where lossless loses none, and lossless
    adds more delay (smoothed RTT after − before). 3GPP seamless is shown beside it."""
    d = _dl(df)
    q = _queues(d)[-1]
    modes = [m for m in MODES if m in set(d["forwarding"])]
    if "seamless-flush" not in modes or "lossless" not in modes:
        raise ValueError("needs seamless-flush and lossless runs")
    g = {m: _mean(d, "ho_goodput_after_bps", m, q) for m in modes}
    lost = {m: _mean(d, "ho_sdus_lost", m, q) for m in modes}
    added = {m: _mean(d, "ho_srtt_after_ms", m, q) - _mean(d, "ho_srtt_before_ms", m, q) for m in modes}
    stall = {m: _mean(d, "ho_stall_s", m, q) for m in modes}
    text = (f"forwarding buffer {q}, handover window: " + "; ".join(
        f"{m}: goodput after {g[m] / 1e6:.2f} Mbit/s, {lost[m]:.0f} SDUs lost, RTT {added[m]:+.0f} ms, "
        f"longest stall {stall[m] * 1e3:.0f} ms" for m in modes))
    ok = (g["lossless"] >= g["seamless-flush"] * (1 + TREND_MIN_FALL)
          and lost["lossless"] < lost["seamless-flush"] and added["lossless"] > added["seamless-flush"])
    return Verdict(text, grade=graded(bool(ok)), setting=SETTING + "; the paper's seamless = seamless-flush",
                   tolerance="no number in the paper: direction only",
                   numbers=(Quantity("goodput after the handover, seamless-flush / lossless",
                                     f"{g['seamless-flush'] / 1e6:.2f} / {g['lossless'] / 1e6:.2f}", unit="Mbit/s"),
                            Quantity("RTT added by the handover, seamless-flush / lossless",
                                     f"{added['seamless-flush']:+.0f} / {added['lossless']:+.0f}", unit="ms")))


FINDINGS = [
    Finding("seamless-goodput-falls",
            "In seamless handovers, the larger the PDCP queue, the lower the TCP goodput.",
            check_seamless_goodput_falls,
            f"mean seamless goodput over the {HO_AFTER_S:g} s after the handover ≥ "
            f"{TREND_MIN_FALL * 100:g} % lower at the largest forwarding buffer than at the smallest, "
            "(≥ 2 seeds) the seed-paired fall above its one-sided 95 % t bound, and more SDUs lost at "
            "the handover with the largest buffer than with the smallest (the paper's reason)"),
    Finding("seamless-flush-goodput-falls",
            "In seamless handovers, the larger the PDCP queue, the lower the TCP goodput "
            "(the paper's seamless: its ns-3 discards the source's RLC backlog; celltcp's "
            "forwarding = \"seamless-flush\").",
            check_flush_goodput_falls,
            "the same check as above, on the seamless-flush runs"),
    Finding("lossless-delay-grows",
            "In lossless handovers, the larger the PDCP queue, the larger the end-to-end delay.",
            check_lossless_delay_grows,
            f"lossless: the mean smoothed RTT over the {HO_AFTER_S:g} s after the handover less the one "
            f"over the {HO_BEFORE_S:g} s before it rises with every forwarding buffer"),
    Finding("seamless-throughput-lossless-delay",
            "Seamless handover suffers a throughput reduction while lossless handover "
            "experiences a high delay.", check_tradeoff,
            f"at the largest forwarding buffer, handover window: lossless goodput after the handover "
            f"≥ {TREND_MIN_FALL * 100:g} % above the paper's seamless (seamless-flush), fewer SDUs "
            "lost and more RTT added by the handover with lossless"),
    Finding("surge-bandwidth-drops",
            "Scenario 2: a load increase in a cell causes a dramatic bandwidth reduction on the "
            "UEs (abstract, finding 1).", check_surge_bandwidth_drops,
            f"the tagged UE's mean goodput over the window after the surge ≤ {DROP_MAX} × the "
            "window before it, with the largest crowd"),
    Finding("surge-degrades-tcp",
            "Scenario 2: a sudden load increase significantly degrades TCP performance "
            "(abstract, finding 1).", check_surge_rtt_grows,
            f"the tagged flow's mean smoothed RTT over the window after the surge ≥ "
            f"{RTT_GROWTH_MIN:g} × before it, with the largest crowd"),
    Finding("failure-bandwidth-drops",
            "Scenario 2, when neighbour eNBs fail and their users are handed to a surviving eNB: "
            "the load increase causes a dramatic bandwidth reduction on the UEs (slides, "
            "scenario 2; abstract, finding 1).", check_failure_bandwidth_drops,
            f"the tagged UE's (in the surviving cell) mean goodput over the window after the "
            f"failure ≤ {DROP_MAX} × the window before it, with the most UEs moved"),
    Finding("failure-degrades-tcp",
            "Scenario 2, cell failure: the sudden load increase in the surviving eNB "
            "significantly degrades TCP performance (abstract, finding 1).",
            check_failure_rtt_grows,
            f"the tagged flow's mean smoothed RTT over the window after the failure ≥ "
            f"{RTT_GROWTH_MIN:g} × before it, with the most UEs moved"),
]


def figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    out = _handover_figures(df, sweep_dir) if (df["flow"] == "dl").any() else []
    for load in LOADS.values():
        if load.x in df.columns and (df["flow"] == TAGGED).any() and df[load.x].notna().any():
            out += _load_figures(df, sweep_dir, load)
    return out


def _before_after(rows: pd.DataFrame, x: str) -> pd.DataFrame:
    """One row per input row and phase: goodput and smoothed RTT over the window before and
    after the load arrives."""
    long = pd.concat([
        rows[["run_id", "seed", x]].assign(phase=phase, goodput_bps=rows[f"goodput_{k}_bps"],
                                           srtt_ms=rows[f"srtt_{k}_ms"])
        for phase, k in zip(PHASES, ("before", "after"))], ignore_index=True)
    long[x] = long[x].astype(int)
    return long


def _load_figures(df: pd.DataFrame, sweep_dir: Path, load: Load) -> list[StudyFigure]:
    d = df[df[load.x].notna()]
    if PART in d.columns:
        d = d[d[PART] == load.part]
    tag = d[d["flow"] == TAGGED]
    sizes = [int(x) for x in sp.ordered(tag[load.x].dropna())]
    x, p = load.x, load.part
    xlabel = {"crowd": "the crowd's size", "moved": "the number of UEs moved to the surviving cell"}[x]
    arrives = {SURGE: "the crowd starts downloading",
               FAILURE: "the neighbour cells fail and their UEs move to the surviving cell"}[p]
    out = []
    if {"goodput_before_bps", "srtt_before_ms"} <= set(tag.columns):
        long = _before_after(tag, x)
        at = float(pd.to_numeric(tag["surge_at_s"], errors="coerce").max())
        out += [
            StudyFigure(f"{p}_goodput", f"{load.title}: the tagged UE's goodput",
                        f"Goodput of the tagged UE's download over equal windows before and after "
                        f"{arrives} ({at:g} s), against {xlabel}; mean over seeds with 95 % "
                        "t-intervals (paper: scenario 2).",
                        sp.lines(long, x, "goodput_bps", "phase", x_order=sizes,
                                 group_order=PHASES, colors=PHASE_COLORS,
                                 title=f"Tagged UE's goodput around {load.event}")),
            StudyFigure(f"{p}_rtt", f"{load.title}: the tagged flow's RTT",
                        "Mean smoothed RTT of the tagged flow over the same windows.",
                        sp.lines(long, x, "srtt_ms", "phase", x_order=sizes,
                                 group_order=PHASES, colors=PHASE_COLORS,
                                 title=f"Tagged flow's smoothed RTT around {load.event}")),
        ]
    others = d[d["flow"].astype(str).str.startswith(load.flows)].copy()
    if not others.empty and p == SURGE:
        others[x] = others[x].astype(int)
        out.append(StudyFigure(
            "surge_crowd_cdf", "Load surge: goodput of the crowd's UEs",
            "CDF over the crowd's UEs (all seeds) of each one's goodput from the surge to the "
            "end of the run, per crowd size.",
            sp.metric_cdf(others, "goodput_bps", x, group_order=sizes,
                          title="Per-UE goodput of the downloads that start together")))
    elif not others.empty and "goodput_before_bps" in others.columns:
        out.append(StudyFigure(
            "failure_moved_goodput", "Cell failure: goodput of the moved UEs",
            "Goodput of the failed cells' UEs over the windows before (in their own cell) and "
            f"after the failure (in the surviving one, including the re-establishment), against "
            f"{xlabel}; mean over the UEs and seeds with 95 % t-intervals over them.",
            sp.lines(_before_after(others, x), x, "goodput_bps", "phase", x_order=sizes,
                     group_order=PHASES, colors=PHASE_COLORS,
                     title="Moved UEs' goodput around the failure")))
    try:
        what = {"crowd": "crowd of {n}", "moved": "{n} UEs moved"}[x]
        runs = {what.format(n=n): run_dir(part_dir(sweep_dir, p), d, **{x: n})
                for n in (sizes[0], sizes[-1])}
        out.append(StudyFigure(
            f"{p}_traces", f"{load.title}: the tagged flow over time",
            f"cwnd, goodput and smoothed RTT of the tagged flow (first seed) with the smallest and "
            f"the largest load ({xlabel}), side by side.",
            sp.traces(runs, flows=[TAGGED], rows=("cwnd", "throughput", "srtt"))))
    except (KeyError, FileNotFoundError, IndexError):
        pass
    return out


def _handover_figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    d = _dl(df)
    qs = [str(q) for q in sp.ordered(d["pdcp_queue"])]
    out = [
        StudyFigure("goodput_queue", "TCP goodput after the handover against the forwarding buffer",
                    f"Goodput of the download over the {HO_AFTER_S:g} s after the UE leaves the source, "
                    "against the PDCP forwarding buffer, per forwarding; mean over seeds (speeds) "
                    "with 95 % t-intervals (paper: TCP good-put).",
                    sp.lines(d, "pdcp_queue", "ho_goodput_after_bps", "forwarding", x_order=qs,
                             group_order=MODES, colors=COLORS, title="TCP goodput after the handover")),
        StudyFigure("delay_queue", "Delay the handover adds against the forwarding buffer",
                    f"Mean smoothed RTT over the {HO_AFTER_S:g} s after the handover less the one over "
                    f"the {HO_BEFORE_S:g} s before it (paper: end-to-end delay).",
                    sp.lines(d, "pdcp_queue", "ho_rtt_added_ms", "forwarding", x_order=qs,
                             group_order=MODES, colors=COLORS, title="RTT added by the handover")),
        StudyFigure("retx_queue", "TCP retransmissions",
                    "TCP retransmitted segments per run, whole run (grouped bars, 95 % t-interval whiskers).",
                    sp.bars(d, "pdcp_queue", "retransmitted_segments", "forwarding", x_order=qs,
                            group_order=MODES, colors=COLORS)),
    ]
    try:
        q = qs[-1]
        runs = {f"{m}, {q}": run_dir(sweep_dir, d, forwarding=m, pdcp_queue=q) for m in MODES}
        out.append(StudyFigure("traces", "cwnd and goodput over the run",
                               f"cwnd and goodput of the first seed with a {q} PDCP queue, seamless "
                               "and lossless side by side (paper: congestion window and throughput).",
                               sp.traces(runs, flows=["dl"], rows=("cwnd", "throughput"))))
        for m in MODES:
            fig = plots.run_figure(runs[f"{m}, {q}"], "lte_ho_zoom")
            if fig is not None:
                out.append(StudyFigure(
                    f"ho_zoom_{m}", f"Around the handover, {m}",
                    f"Segment sequence (every data segment the server sent, retransmissions "
                    f"marked, the ACKs and the highest SACKed byte), cwnd and bytes in flight "
                    f"from 2 s before to 3 s after the handover decision, {m} forwarding with a "
                    f"{q} PDCP queue (first seed); the interruption is shaded (paper: congestion "
                    "window and segment sequence around the handover).", fig))
    except (KeyError, FileNotFoundError):
        pass
    return out


#: ns-3 3.37's own X2 handover setting, cached by ``validation/ns3_x2.py --refresh``
NS3_X2 = Path(__file__).resolve().parents[3] / "validation" / "ns3_x2" / "ns3-reference.json"


def _ns3_paragraph() -> str:
    """The report's paragraph on ns-3 3.37's X2 handover (from the cached runs; empty outside a
    source checkout)."""
    try:
        ref = json.loads(NS3_X2.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    cases = "; ".join(f"{name}: {c['goodput_before_mbps']:.2f} Mbit/s before, largest gap "
                      f"{c['largest_gap_s'] * 1e3:.0f} ms, recovery {c['recovery_s'] * 1e3:.0f} ms, "
                      f"{c['rto_after_handover']} RTO" for name, c in ref["cases"].items())
    return ("<p>ns-3 3.37 on its own X2 setting (<code>bench/ns3/x2.cc</code>, cached in "
            "<code>validation/ns3_x2/ns3-reference.json</code>; two eNBs 750 m apart, UE from 300 m "
            "at 40 km/h, CUBIC, RLC AM): " + html.escape(cases) + ". ns-3 discards the source's RLC "
            "buffers and forwards only what reaches the source after the handover command "
            "(celltcp's seamless-flush); it does not stall for a second in this setting. "
            "<code>python3 validation/ns3_x2.py</code> runs celltcp's side.</p>")


STUDY = Study(
    name="handover",
    paper_id="001",
    summary="X2 handover with PDCP seamless vs lossless forwarding, PDCP queue 64 KB..4 MB, "
            "a UE at ~40 km/h between two eNBs; a sudden load surge in a cell, and cell "
            "failures moving their UEs to a survivor (paper 001)",
    paper="Nguyen et al., TCP performance over LTE handovers: PDCP seamless and lossless "
          "forwarding (ns-3 study, paper 001 in /papers)",
    intro_html=(
        "<p>The paper adds RLC AM and a lossless PDCP handover to ns-3 and measures a Linux "
        "CUBIC download across an X2 handover between two eNBs 750 m apart (X2 6 ms), the UE at "
        "a normally distributed speed (40 km/h, σ 5 km/h), with PDCP queues from 64 KB to "
        "4 MB.</p><p>celltcp runs the same geometry with its X2 handover (A3, 3 dB, 256 ms), "
        "seamless, seamless-flush (ns-3's: the source's RLC backlog is discarded) or lossless "
        "forwarding, and the paper's queue as the source's PDCP forwarding buffer "
        "(<code>[lte.pdcp] forwarding_buffer</code>), the steady-state queue being 4 MB in every "
        "run; each seed draws a speed. The UE drives from the source eNB for 70 s (750 m at "
        "40 km/h take 67.5 s), handing over about halfway. The checks read the handover window "
        "(2 s before and after the UE leaves the source).</p>" + _ns3_paragraph() +
        "<p>Scenario 2, a sudden load increase: UEs uniformly within 250 m of one eNB, walking "
        "(Levy walk), attached from the start, all start downloading at the same instant. "
        "celltcp adds a tagged UE that downloads from the start, compares its goodput and RTT "
        "over equal windows before and after the surge, and varies the size of the crowd "
        "(sweep in <code>surge/</code>).</p>"
        "<p>The same scenario as the paper words it, with cell failures (sweep in "
        "<code>failure/</code>): three eNBs 500 m apart; the tagged UE walks in the middle "
        "cell, the two neighbours' UEs download from the start, both neighbours fail at 10 s "
        "and their UEs re-establish in the surviving middle cell. The tagged UE's goodput and "
        "RTT are compared over equal windows before and after the failure, against the number "
        "of UEs moved.</p>"),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    aggregate_by=("forwarding", "pdcp_queue", "flow"),
    metrics=("goodput_bps", "owd_mean_ms", "rtt_mean_ms", "retransmitted_segments"),
    table_flows=("dl",),
    parts=(SURGE, FAILURE),
    enrich=enrich,
)
