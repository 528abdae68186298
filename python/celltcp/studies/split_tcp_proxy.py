"""Study ``split-tcp-proxy`` (paper 004): Farkas, Héder, Nováczki, "A Split Connection TCP Proxy
in LTE Networks" (Nokia Siemens Networks): a split-connection TCP proxy (RFC 3135) in the SAE-GW
of a loaded, mobile LTE network, measured with FTP, web browsing and progressive video.

The paper's reference network (its §4.1), which every part of the study shares
(``split-tcp-proxy/scenario.toml``; a test keeps the parts' networks equal): TR 25.814's double
ring — 7 serving sites with one omnidirectional cell each inside 12 sites that only interfere
(celltcp keeps each interfering cell busy with one UE fed a UDP stream above the cell's
capacity, since an idle cell does not interfere) — 10 MHz FDD SISO, pedestrians on
random-waypoint walks with inter-site handovers, distance loss, shadowing, EPA fading and a
10 dB penetration loss (the paper names penetration loss without a value); the eNBs reach the
SAE-GW (celltcp's PGW) over 100 Mbit/s, 10 ms links through RED queues; the content server sits
behind a link with the "mean Internet delay" (50, 75, 125 ms).

**The paper's parameters** (the text copy, ``/papers/004``, carries no page numbers: sections and
figures are cited), and what celltcp does where the paper is silent:

- network (§4.1): TR 25.814 double ring, 7 serving eNBs, the outer ring only interferes; one
  omnidirectional cell per eNB; SISO, "two times 10 MHz" (FDD); random waypoint with inter-site
  handovers; distance loss, shadowing, multipath fading, penetration loss (no values given:
  TR 36.814 UMa, 8 dB, EPA, 10 dB here); eNBs to SAE-GW through IP routers with RED, 100 Mbit/s
  Ethernet, 10 ms; each content server (CS) on a 100 Mbit/s link with a fixed delay, "the mean
  Internet delay" (here a 1 Gbit/s link; its one-way delay is the swept 50/75/125 ms). The
  scheduler, the RLC mode and the run lengths are not given (proportional fair, RLC AM, 20 s FTP
  runs here);
- FTP (§4.1): "FTP users initiate a file download with unlimited file size" — one bulk download
  per user for the whole run, no file sizes or reading times (so no 3GPP FTP model 1/2); the
  measure is the per-user "average throughput" and Jain's index of the connections (§4.1; Figs.
  4-6, left and right);
- TCP (§4.1): New Reno (RFC 2582) and CUBIC, at the end points and in the proxy; no window,
  buffer, initial window, MSS or delayed-ACK setting is given;
- load (§4.2): 2 users per cell is "not congested", 4 and 6 "moderately congested", 8 and 10
  "congested"; the delays 50, 75, 125 ms; gains "more than 60 %", "2-17 %", "a few percents"
  at 50 ms; Jain's index "above 0.96 in all cases", "a bit worse with TCP proxy";
- web (§4.1, §4.2): HTTP/1.1 with pipelining, a typical mobile browser, the top-20 Alexa pages of
  Sept. 2011 (structures not published: NGMN pages here), DNS, reading time (no value: 5 s
  here), NewReno, 5 seeds; background FTP 0, 2-4, 6-8 per cell (Fig. 7);
- video (§4.1, §4.2): the web model with HTML5 video, 512 kbit/s, 90 s, no server-side rate
  control; satisfied if start-up < 8 s and at most 3 interruptions totalling at most 2 s;
  4 seeds, 228 playbacks each (Fig. 8).

**Why the paper's 2 users per cell are uncongested: its transfers are window-limited.** With
unlimited downloads and Linux's autotuned buffers (celltcp's default) two users fill a 10 MHz
cell (96-98 % of the downlink PRBs, ~14 Mbit/s per cell, Jain 0.59-0.73) and the proxy gains
+1 %. The paper's explanations only hold for transfers whose rate is bounded by window / RTT:
§3.2 "the theoretical maximum end-to-end throughput is the maximum throughput of the loop with
higher RTT" and "reduced RTT enables higher maximum throughput in the split loops"; §4.2 "the
larger RTT between the CS and the SAE-GW decreases the achievable maximum throughput on the
corresponding TCP loop" (an idle 100 Mbit/s loop has an RTT-bound maximum only under a bounded
window), "the bandwidth-delay product of the LTE system is not in the range where TCP CUBIC is
able to achieve a higher throughput", and Jain's index worse with the proxy because the RTTs
vary less without the fixed delay (equal windows over equal RTTs give equal rates). So every
TCP flow of the study has ``window_exact = "64KB"``: 65 536 bytes, the largest window without
RFC 7323 window scaling (the paper gives no value: an assumption). A download then gets at most
64 KB / RTT: end to end 64 KB / (2 × (delay + 10 ms) + RAN), with the proxy the smaller of the
server loop's 64 KB / (2 × delay) (the server's send buffer) and the radio loop's (the UE's
receive window). The expected uncongested gain is therefore the RTT ratio, e.g. 134 / 100 ms
= +34 % at 50 ms (measured: 3.17 → 4.21 Mbit/s per user, +33 %, cells 34-93 % busy, Jain 0.95
→ 0.92, 20 s, seed 1, NewReno), and less at 75 and 125 ms; the paper's > 60 % would need a
RAN + S1 round trip of 60 ms or more beyond the Internet's (celltcp's is ~34 ms in
these runs).

Parts, as the paper's experiments differ:

- main (FTP, Figs. 4-6): one unlimited, window-limited download per user, 2..10 users per cell,
  NewReno and CUBIC, the three delays; per-user mean throughput and Jain's index over the users;
- ``web`` / ``web-idle`` (Fig. 7): HTTP/1.1 browsing (NewReno, NGMN pages, pipelining) with 2-4
  or 6-8 background FTP downloads per cell, and with none (a part of its own: a sweep cannot
  remove UEs); mean page download time;
- ``video`` / ``video-idle`` (Fig. 8): a 512 kbit/s, 90 s clip per user, with the same
  background levels; the share of satisfied playbacks (start-up < 8 s, at most 3 stalls, at most
  2 s of stalling).

Every part is run with and without the proxy (``[[proxy]] node = "pgw"``, its legs running the
flows' variant); a results table without runs with it (an older sweep) is still read, and each
finding that compares the two then says "not evaluated" and why. :func:`proxy_state` reads whichever form the
parameter takes in the results table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import sweep_plots as sp
from ..report import Finding, Grade, Quantity, Verdict, graded, within
from ..sweep import t_quantile
from . import MAIN, PART, Study, StudyFigure, part_dir

# --- the results table --------------------------------------------------------------------------

WEB, WEB_IDLE, VIDEO, VIDEO_IDLE = "web", "web-idle", "video", "video-idle"
PARTS = (WEB, WEB_IDLE, VIDEO, VIDEO_IDLE)
FTP_FLOW, WEB_FLOW, VIDEO_FLOW = "ftp-", "web-", "clip-"
DELAY = "link.internet.delay"
CC = "flow.ftp.cc"
CELLS = 7
WITH, WITHOUT = "with proxy", "without proxy"
PROXY_ORDER = [WITHOUT, WITH]
#: background FTP downloads per cell: the paper's three levels
BACKGROUND = ["0", "2-4", "6-8"]
#: users per cell: the paper's three congestion levels (§4.2)
UNCONGESTED, MODERATE, CONGESTED = (2,), (4, 6), (8, 10)
COLORS = {WITHOUT: "#0072B2", WITH: "#D55E00"}
LINE_STYLE = {"newreno": "-", "cubic": "--"}


def proxy_state(value: Any) -> str:
    """``with proxy`` / ``without proxy`` from a swept proxy parameter as the results table stores
    it: a list of ``[[proxy]]`` tables (JSON text), a node name, a boolean, or nothing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return WITHOUT
    if isinstance(value, (bool, np.bool_)):
        return WITH if value else WITHOUT
    text = str(value).strip()
    if text.lower() in ("", "[]", "none", "false", "off", "no", "0", "nan"):
        return WITHOUT
    try:
        parsed = json.loads(text)
    except ValueError:
        return WITH
    return WITH if parsed else WITHOUT


def _proxy_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c == "proxy" or c.startswith("proxy.")]


def _ms(v: Any) -> float:
    s = str(v).strip()
    for unit, k in (("ms", 1.0), ("us", 1e-3), ("s", 1e3)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * k
    return float(s)


def _level(total: float) -> str:
    """The background level named by the summed per-cell counts (2-4: 21 in 7 cells; 6-8: 49)."""
    per_cell = total / CELLS
    return "0" if per_cell == 0 else "2-4" if per_cell <= 5 else "6-8"


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Adds ``proxy``, ``delay_ms``, ``cc``, ``users`` (FTP users per cell), ``background``
    (background FTP downloads per cell: 0, 2-4, 6-8) and ``app`` (ftp, web, video, bg, load)."""
    df = df.copy()
    if PART not in df.columns:
        df[PART] = MAIN
    pcols = _proxy_columns(df)
    state = pd.Series(WITHOUT, index=df.index)
    for c in pcols:
        state = state.where(df[c].map(proxy_state) == WITHOUT, WITH)
    df["proxy_param"] = df[pcols[0]].astype(str) if pcols else ""
    df["proxy"] = state
    df["delay_ms"] = df[DELAY].map(_ms) if DELAY in df.columns else 50.0
    df["cc"] = df[CC].astype(str) if CC in df.columns else "newreno"
    df.loc[df[PART] != MAIN, "cc"] = "newreno"
    ftp_cols = [f"lte.ue.c{i}u.count" for i in range(CELLS)]
    if all(c in df.columns for c in ftp_cols):
        users = sum(pd.to_numeric(df[c], errors="coerce") for c in ftp_cols) / CELLS
        df["users"] = pd.Series(users, index=df.index).round().astype("Int64")
    else:
        df["users"] = pd.Series(pd.NA, index=df.index, dtype="Int64")
    bg_cols = [f"lte.ue.b{i}u.count" for i in range(CELLS)]
    bg = pd.Series(0.0, index=df.index)
    if all(c in df.columns for c in bg_cols):
        bg = sum(pd.to_numeric(df[c], errors="coerce").fillna(0) for c in bg_cols)
    df["background"] = [_level(t) if p != MAIN else "" for t, p in zip(bg, df[PART])]
    name = df["flow"].astype(str)
    df["app"] = np.select([name.str.startswith(FTP_FLOW), name.str.startswith(WEB_FLOW),
                           name.str.startswith(VIDEO_FLOW), name.str.startswith("bg-")],
                          ["ftp", "web", "video", "bg"], "load")
    return df


def jain(x: Sequence[float]) -> float:
    """Jain's fairness index (Σx)² / (n Σx²) (Jain, Chiu, Hawe, DEC-TR-301, 1984)."""
    a = np.asarray(x, float)
    s2 = float((a * a).sum())
    return float(a.sum() ** 2 / (len(a) * s2)) if len(a) and s2 > 0 else float("nan")


_KEYS = ["run_id", "seed", PART, "proxy", "cc", "delay_ms", "users", "background"]


def ftp_runs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per FTP run: the per-user mean throughput (``goodput_bps``) and Jain's index of the
    users' throughputs (``jain``)."""
    d = df[(df["app"] == "ftp") & (df[PART] == MAIN)]
    if d.empty:
        raise ValueError("no FTP runs (the main sweep's ftp-* flows)")
    g = d.groupby(_KEYS, dropna=False)["goodput_bps"]
    out = g.mean().rename("goodput_bps").to_frame()
    out["jain"] = g.apply(lambda s: jain(s.to_numpy(float)))
    out["n_users"] = g.size()
    return out.reset_index()


def enrich(table: pd.DataFrame, out: Path) -> pd.DataFrame:
    """Adds ``page_times`` to each browser's row: the download times of its completed pages in
    the order it loaded them (JSON text), from the run's ``summary.json`` page table."""
    t = table.copy()
    t["page_times"] = None
    flows: dict[Path, dict[str, Any]] = {}
    for i, row in t.iterrows():
        if not str(row.get("flow", "")).startswith(WEB_FLOW):
            continue
        part = row.get(PART, MAIN)
        rd = part_dir(Path(out), part if isinstance(part, str) else MAIN) / "runs" / str(row["run_id"])
        if rd not in flows:
            try:
                summary = json.loads((rd / "summary.json").read_text(encoding="utf-8"))
                flows[rd] = {f["name"]: f for f in summary.get("flows", [])}
            except (OSError, ValueError, KeyError):
                flows[rd] = {}
        f = flows[rd].get(row["flow"])
        if f is not None and f.get("page_table") is not None:
            t.at[i, "page_times"] = json.dumps([p["time_s"] for p in f["page_table"]])
    return t


def web_runs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per web run: the mean page download time (``page_time_s``) and the pages counted.

    With the browsers' page tables (``page_times``, :func:`enrich`) the mean is over the *same
    pages in every run*: a browser loads the same page sequence in every run of a seed (the page
    model's draws depend on the seed only), so per seed and browser the pages counted are the
    first k, k the fewest any web run of that seed completed. A plain mean over the completed
    pages would compare different pages: a slower run leaves its last, often large, page
    unfinished and drops it (the paper's pages are the same top-20 pages in every condition).
    Without page tables: every completed page of every browser."""
    d = df[df["app"] == "web"].copy()
    if d.empty:
        raise ValueError("no web runs (parts web and web-idle)")
    d["pages"] = pd.to_numeric(d["pages"], errors="coerce").fillna(0)
    d["t"] = pd.to_numeric(d["page_time_mean_s"], errors="coerce").fillna(0) * d["pages"]
    if "page_times" in d.columns and d["page_times"].notna().all():
        times = d["page_times"].map(json.loads)
        common = times.map(len).groupby([d["seed"], d["flow"]]).transform("min")
        d["t"] = [float(sum(ts[:k])) for ts, k in zip(times, common)]
        d["pages"] = common
    g = d.groupby(_KEYS, dropna=False)[["t", "pages"]].sum().reset_index()
    g = g[g["pages"] > 0]
    g["page_time_s"] = g["t"] / g["pages"]
    return g.drop(columns="t")


def video_runs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per video run: playbacks, how many were satisfied, and their ratio."""
    d = df[df["app"] == "video"].copy()
    if d.empty:
        raise ValueError("no video runs (parts video and video-idle)")
    d["ok"] = d["video_satisfied"].map(lambda v: bool(v) if v == v and v is not None else False)
    g = d.groupby(_KEYS, dropna=False)["ok"]
    out = pd.DataFrame({"satisfied": g.sum(), "videos": g.size()}).reset_index()
    out["satisfied_ratio"] = out["satisfied"] / out["videos"]
    return out


def per_run(df: pd.DataFrame) -> pd.DataFrame:
    """The aggregated table's rows: one per run, each part with its own metric."""
    tables = []
    for f in (ftp_runs, web_runs, video_runs):
        try:
            tables.append(f(df))
        except ValueError:
            pass
    out = pd.concat(tables, ignore_index=True, sort=False)
    # in the paper's order (the table lists values in order of appearance when some are empty),
    # then the grouping columns as text, empty where a part has no such parameter (users: FTP only)
    rank = {p: i for i, p in enumerate((MAIN, *PARTS))}
    out = out.assign(_p=out[PART].map(rank), _x=out["proxy"].map(PROXY_ORDER.index),
                     _u=pd.to_numeric(out["users"], errors="coerce"))
    out = out.sort_values(["_p", "_x", "cc", "delay_ms", "_u", "background"]).drop(columns=["_p", "_x", "_u"])
    # (right-aligned: the aggregation groups text in lexical order, " 8" < "10")
    out["users"] = [str(int(u)).rjust(2) if pd.notna(u) else "" for u in out["users"]]
    out["delay_ms"] = [f"{d:g}" for d in out["delay_ms"]]
    return out


# --- findings ------------------------------------------------------------------------------------

NO_PROXY = ("no runs with the proxy: the sweep's proxy parameter has no [[proxy]] entry (the "
            "study's sweeps run with and without it), so nothing compares the two")


def _need_both(rows: pd.DataFrame) -> None:
    if not (rows["proxy"] == WITH).any():
        raise ValueError(NO_PROXY)
    if not (rows["proxy"] == WITHOUT).any():
        raise ValueError("no runs without the proxy")


def _mean(rows: pd.DataFrame, metric: str, **sel: Any) -> float:
    for k, v in sel.items():
        rows = rows[rows[k].isin(v) if isinstance(v, (list, tuple)) else rows[k] == v]
    if rows.empty:
        raise ValueError(f"no runs with {sel}")
    return float(rows[metric].mean())


def _gain(rows: pd.DataFrame, metric: str, **sel: Any) -> tuple[float, float, float]:
    """(without, with, with / without − 1) of the mean of ``metric`` at the point ``sel``."""
    a = _mean(rows, metric, proxy=WITHOUT, **sel)
    b = _mean(rows, metric, proxy=WITH, **sel)
    return a, b, b / a - 1.0


def _pct(x: float) -> str:
    return f"{x * 100:+.0f} %"


def _ftp_gains(df: pd.DataFrame, users: Sequence[int], delay: float) -> list[tuple[str, int, float, float, float]]:
    r = ftp_runs(df)
    _need_both(r)
    out = []
    for cc in sp.ordered(r["cc"]):
        for u in users:
            try:
                out.append((str(cc), u, *_gain(r, "goodput_bps", cc=cc, users=u, delay_ms=delay)))
            except ValueError:
                continue
    if not out:
        raise ValueError(f"no FTP runs with {list(users)} users per cell at {delay:g} ms")
    return out


def _gain_text(gains: Sequence[tuple[str, int, float, float, float]], delay: float) -> str:
    return "; ".join(f"{cc} {u}/cell: {a / 1e6:.2f} → {b / 1e6:.2f} Mbit/s ({_pct(g)})"
                     for cc, u, a, b, g in gains) + f" (per-user mean, {delay:g} ms)"


#: "more than 60 %" (no congestion), "2-17 %" (moderate), "a few percents" (congested), §4.2
GAIN_UNCONGESTED = 0.60
GAIN_MODERATE = (0.02, 0.17)
GAIN_CONGESTED_MAX = 0.05
#: magnitude tolerance: the uncongested gain within ×1.5 below the paper's 60 %; the moderate and
#: congested gains within this many percentage points of the paper's range
GAIN_FACTOR = 1.5
GAIN_TOL = 0.05
SETTING = ("7 cells of 10 MHz inside an interfering ring, walking users, RED S1-U; proxy at the "
           "PGW (SAE-GW)")


def _gain_quantity(name: str, gains: Sequence[tuple[str, int, float, float, float]], paper: str) -> Quantity:
    """The mean gain over the variants and points (each is in the verdict's sentence)."""
    return Quantity(name + " (mean)", float(np.mean([g for *_, g in gains])) * 100, paper=paper, unit="%")


def check_ftp_gain_uncongested(df: pd.DataFrame) -> Verdict:
    gains = _ftp_gains(df, UNCONGESTED, 50.0)
    low = min(g for *_, g in gains)
    return Verdict(f"paper: > +60 %; celltcp: {_gain_text(gains, 50)}",
                   grade=graded(low > 0, low >= GAIN_UNCONGESTED / GAIN_FACTOR),
                   numbers=(_gain_quantity("throughput gain, 2 users/cell, 50 ms", gains, "> 60"),),
                   tolerance=f"every variant's gain ≥ {GAIN_UNCONGESTED / GAIN_FACTOR * 100:g} % "
                             f"(the paper's 60 % within ×{GAIN_FACTOR:g})", setting=SETTING)


def check_ftp_gain_moderate(df: pd.DataFrame) -> Verdict:
    gains = _ftp_gains(df, MODERATE, 50.0)
    lo, hi = GAIN_MODERATE
    gs = [g for *_, g in gains]
    return Verdict(f"paper: +2 to +17 %; celltcp: {_gain_text(gains, 50)}",
                   grade=graded(min(gs) > 0, all(lo - GAIN_TOL <= g <= hi + GAIN_TOL for g in gs)),
                   numbers=(_gain_quantity("throughput gain, 4-6 users/cell, 50 ms", gains, "2..17"),),
                   tolerance=f"every gain within {(lo - GAIN_TOL) * 100:g}..{(hi + GAIN_TOL) * 100:g} % "
                             f"(the paper's range ± {GAIN_TOL * 100:g} points)", setting=SETTING)


def check_ftp_gain_congested(df: pd.DataFrame) -> Verdict:
    gains = _ftp_gains(df, CONGESTED, 50.0)
    gs = [g for *_, g in gains]
    light = float(np.mean([g for *_, g in _ftp_gains(df, UNCONGESTED, 50.0)]))
    return Verdict(f"paper: a few per cent; celltcp: {_gain_text(gains, 50)}; at 2 users/cell "
                   f"{_pct(light)}",
                   grade=graded(float(np.mean(gs)) < light,
                                all(-GAIN_TOL <= g <= GAIN_CONGESTED_MAX + GAIN_TOL for g in gs)),
                   numbers=(_gain_quantity("throughput gain, 8-10 users/cell, 50 ms", gains, "a few"),),
                   tolerance=f"direction: the gain below the uncongested one; magnitude: every gain "
                             f"within {-GAIN_TOL * 100:g}..{(GAIN_CONGESTED_MAX + GAIN_TOL) * 100:g} %",
                   setting=SETTING)


#: "the TCP variant had minimal impact on the achievable throughput": CUBIC within this of NewReno
CC_SAME = 0.10


def check_ftp_cc_minimal(df: pd.DataFrame) -> Verdict:
    r = ftp_runs(df)
    ccs = set(r["cc"])
    if not {"newreno", "cubic"} <= ccs:
        raise ValueError(f"needs NewReno and CUBIC runs, has {sorted(ccs)}")
    ratios = []
    for (p, d, u), g in r.groupby(["proxy", "delay_ms", "users"]):
        if {"newreno", "cubic"} <= set(g["cc"]):
            ratios.append((p, d, int(u), _mean(g, "goodput_bps", cc="cubic") / _mean(g, "goodput_bps", cc="newreno")))
    if not ratios:
        raise ValueError("no point has both NewReno and CUBIC runs")
    worst = max(ratios, key=lambda t: abs(t[3] - 1))
    dev = abs(worst[3] - 1)
    return Verdict(f"paper: minimal; celltcp: CUBIC/NewReno per-user throughput "
                   f"{min(q for *_, q in ratios):.3f}..{max(q for *_, q in ratios):.3f} over "
                   f"{len(ratios)} points (furthest: {worst[2]}/cell, {worst[1]:g} ms, {worst[0]}: "
                   f"{worst[3]:.3f})",
                   grade=graded(dev <= CC_SAME, dev <= CC_SAME / 2),
                   numbers=(Quantity("largest |CUBIC/NewReno − 1|", dev * 100, paper="minimal", unit="%"),),
                   tolerance=f"direction: within ± {CC_SAME * 100:g} % at every point; magnitude: "
                             f"± {CC_SAME * 50:g} %", setting=SETTING)


#: "the Jain's Fairness Index was above 0.96 in all cases"; "generally means a good fairness":
#: the direction holds above JAIN_GOOD
JAIN_MIN = 0.96
JAIN_GOOD = 0.90


def check_ftp_jain_high(df: pd.DataFrame) -> Verdict:
    r = ftp_runs(df)
    pts = r.groupby(["proxy", "cc", "delay_ms", "users"])["jain"].mean()
    lo = pts.idxmin()
    return Verdict(f"paper: > 0.96 everywhere; celltcp: mean Jain's index over the FTP users "
                   f"{pts.min():.2f}..{pts.max():.2f} over {len(pts)} points (lowest: "
                   f"{lo[3]}/cell, {lo[2]:g} ms, {lo[1]}, {lo[0]})",
                   grade=graded(bool(pts.min() > JAIN_GOOD), bool(pts.min() > JAIN_MIN)),
                   numbers=(Quantity("lowest Jain's index", float(pts.min()), paper="> 0.96"),),
                   tolerance=f"magnitude: > {JAIN_MIN} everywhere; direction (good fairness): > {JAIN_GOOD}",
                   setting=SETTING)


#: "a bit worse": the mean index at most this much lower with the proxy
JAIN_A_BIT = 0.05


def check_ftp_jain_lower_with_proxy(df: pd.DataFrame) -> Verdict:
    r = ftp_runs(df)
    _need_both(r)
    pts = r.groupby(["cc", "delay_ms", "users", "proxy"])["jain"].mean().unstack("proxy").dropna()
    if pts.empty:
        raise ValueError("no point has runs with and without the proxy")
    lower = int((pts[WITH] < pts[WITHOUT]).sum())
    drop = float(pts[WITHOUT].mean() - pts[WITH].mean())
    return Verdict(f"paper: a bit lower with the proxy; celltcp: lower with the proxy at {lower} of "
                   f"{len(pts)} points, mean {pts[WITHOUT].mean():.3f} without, "
                   f"{pts[WITH].mean():.3f} with",
                   grade=graded(lower > len(pts) / 2 and drop > 0, drop <= JAIN_A_BIT),
                   numbers=(Quantity("mean Jain's index, without − with", drop, paper="a bit"),),
                   tolerance=f"direction: lower at more than half the points and on average; "
                             f"magnitude ('a bit'): at most {JAIN_A_BIT} lower on average", setting=SETTING)


def _mean_gain(df: pd.DataFrame, users: Sequence[int], delay: float) -> float:
    return float(np.mean([g for *_, g in _ftp_gains(df, users, delay)]))


def _trend(df: pd.DataFrame, users: Sequence[int], what: str, falls: bool) -> Verdict:
    g = {d: _mean_gain(df, users, d) for d in (50.0, 75.0, 125.0)}
    ok = (g[75.0] < g[50.0] and g[125.0] < g[50.0]) if falls else (g[75.0] > g[50.0] and g[125.0] > g[50.0])
    return Verdict(f"{what}, gain over both variants: " + ", ".join(f"{d:g} ms {_pct(v)}" for d, v in g.items()),
                   grade=graded(ok),
                   numbers=tuple(Quantity(f"gain, {what}, {d:g} ms", v * 100, unit="%") for d, v in g.items()),
                   tolerance="the paper gives the trend only", setting=SETTING)


def check_ftp_uncongested_gain_falls_with_delay(df: pd.DataFrame) -> Verdict:
    return _trend(df, UNCONGESTED, "2 users/cell", falls=True)


def check_ftp_moderate_gain_grows_with_delay(df: pd.DataFrame) -> Verdict:
    return _trend(df, MODERATE, "4 and 6 users/cell", falls=False)


def _web_points(df: pd.DataFrame) -> pd.DataFrame:
    """Mean page time per (delay, background, proxy), points as columns ``without``/``with``."""
    r = web_runs(df)
    return r.groupby(["delay_ms", "background", "proxy"])["page_time_s"].mean().unstack("proxy")


WEB_SETTING = "NGMN pages, HTTP/1.1, 6 connections per host, pipelining 4; " + SETTING


def check_web_proxy_faster(df: pd.DataFrame) -> Verdict:
    r = web_runs(df)
    _need_both(r)
    pts = _web_points(df).dropna()
    faster = pts[WITH] < pts[WITHOUT]
    text = "; ".join(f"{d:g} ms, bg {b}: {w:.2f} → {p:.2f} s" for (d, b), w, p
                     in zip(pts.index, pts[WITHOUT], pts[WITH]))
    return Verdict(f"paper: shorter in every case; celltcp: {text}", grade=graded(bool(faster.all())),
                   numbers=(Quantity("points where the proxy is faster", f"{int(faster.sum())} of {len(pts)}",
                                     paper="all"),),
                   tolerance="the paper gives figures, no numbers in the text", setting=WEB_SETTING)


def check_web_congestion_slower(df: pd.DataFrame) -> Verdict:
    pts = _web_points(df)
    rows, ok = [], True
    for d in sorted(set(pts.index.get_level_values(0))):
        for p in pts.columns:
            col = pts[p].xs(d).dropna()
            levels = [b for b in BACKGROUND if b in col.index]
            if len(levels) < 2:
                continue
            vals = [float(col[b]) for b in levels]
            ok &= all(b > a for a, b in zip(vals, vals[1:]))
            rows.append(f"{d:g} ms, {p}: " + ", ".join(f"bg {b} {v:.2f} s" for b, v in zip(levels, vals)))
    if not rows:
        raise ValueError("needs web runs at two background levels")
    return Verdict("mean page time " + "; ".join(rows), grade=graded(bool(ok)),
                   tolerance="the paper gives the trend only", setting=WEB_SETTING)


def check_web_delay_slower(df: pd.DataFrame) -> Verdict:
    pts = _web_points(df)
    delays = sorted(set(pts.index.get_level_values(0)))
    if len(delays) < 2:
        raise ValueError(f"needs web runs at two Internet delays, has {delays}")
    rows, ok = [], True
    for p in pts.columns:
        for b in BACKGROUND:
            vals = [(d, pts[p].get((d, b), np.nan)) for d in delays]
            vals = [(d, float(v)) for d, v in vals if v == v]
            if len(vals) < 2:
                continue
            ok &= all(y > x for (_, x), (_, y) in zip(vals, vals[1:]))
            rows.append(f"bg {b}, {p}: " + ", ".join(f"{d:g} ms {v:.2f} s" for d, v in vals))
    return Verdict("mean page time " + "; ".join(rows), grade=graded(bool(ok)),
                   tolerance="the paper gives the trend only", setting=WEB_SETTING)


#: "decrease the download time by the same amount": the saving at the longest delay within this
#: factor of the one at the shortest
SAME_AMOUNT = 1.5


def check_web_relative_gain_falls_with_delay(df: pd.DataFrame) -> Verdict:
    r = web_runs(df)
    _need_both(r)
    pts = _web_points(df).dropna()
    delays = sorted(set(pts.index.get_level_values(0)))
    if len(delays) < 2:
        raise ValueError(f"needs web runs at two Internet delays, has {delays}")
    rows, ok, same = [], True, True
    for b in BACKGROUND:
        sav = [(d, pts[WITHOUT].get((d, b)), pts[WITH].get((d, b))) for d in delays]
        sav = [(d, w - p, (w - p) / w) for d, w, p in sav if w is not None and p is not None]
        if len(sav) < 2:
            continue
        ok &= sav[-1][2] < sav[0][2]
        same &= sav[0][1] > 0 and within(sav[-1][1], sav[0][1], SAME_AMOUNT)
        rows.append(f"bg {b}: " + ", ".join(f"{d:g} ms −{s:.2f} s ({rel * 100:.0f} %)" for d, s, rel in sav))
    if not rows:
        raise ValueError("no background level has web runs at two delays with and without the proxy")
    return Verdict("page time saved by the proxy " + "; ".join(rows), grade=graded(bool(ok), bool(same)),
                   tolerance=f"direction: the relative saving falls from the shortest to the longest "
                             f"delay; magnitude ('the same amount'): the absolute saving at the longest "
                             f"within ×{SAME_AMOUNT:g} of the shortest's, at each background level",
                   setting=WEB_SETTING)


def _video_points(df: pd.DataFrame) -> pd.DataFrame:
    """Satisfied / all playbacks per (delay, background, proxy), pooled over seeds (as the paper:
    "from altogether 896 video downloads a user satisfaction ratio was calculated")."""
    r = video_runs(df)
    g = r.groupby(["delay_ms", "background", "proxy"])[["satisfied", "videos"]].sum()
    return (g["satisfied"] / g["videos"]).unstack("proxy")


VIDEO_SETTING = "512 kbit/s, 90 s clip downloaded as fast as TCP allows; " + SETTING


def check_video_proxy_more_satisfied(df: pd.DataFrame) -> Verdict:
    _need_both(video_runs(df))
    pts = _video_points(df).dropna()
    ok = bool((pts[WITH] >= pts[WITHOUT]).all() and (pts[WITH] > pts[WITHOUT]).any())
    text = "; ".join(f"{d:g} ms, bg {b}: {w * 100:.0f} → {p * 100:.0f} %" for (d, b), w, p
                     in zip(pts.index, pts[WITHOUT], pts[WITH]))
    return Verdict(f"paper: higher in every case; celltcp: satisfied {text}", grade=graded(ok),
                   numbers=(Quantity("points where the proxy satisfies more",
                                     f"{int((pts[WITH] > pts[WITHOUT]).sum())} of {len(pts)}", paper="all"),),
                   tolerance="the paper gives figures, no numbers in the text", setting=VIDEO_SETTING)


def check_video_gain_grows(df: pd.DataFrame) -> Verdict:
    _need_both(video_runs(df))
    pts = _video_points(df).dropna()
    gain = (pts[WITH] - pts[WITHOUT]).rename("gain").reset_index()
    by_d = gain.groupby("delay_ms")["gain"].mean()
    by_b = gain.groupby("background")["gain"].mean()
    bs = [b for b in BACKGROUND if b in by_b.index]
    if len(by_d) < 2 and len(bs) < 2:
        raise ValueError("needs two Internet delays or two background levels")
    ok = True
    if len(by_d) >= 2:
        ok &= by_d.iloc[-1] > by_d.iloc[0]
    if len(bs) >= 2:
        ok &= by_b[bs[-1]] > by_b[bs[0]]
    return Verdict("satisfaction gain (percentage points) by delay " +
                   ", ".join(f"{d:g} ms {v * 100:+.0f}" for d, v in by_d.items()) +
                   "; by background " + ", ".join(f"{b} {by_b[b] * 100:+.0f}" for b in bs),
                   grade=graded(bool(ok)), tolerance="the paper gives the trend only",
                   setting=VIDEO_SETTING)


def _paper_side(check: Callable[[pd.DataFrame], Verdict], name: str, paper: str,
                unit: str = "%") -> Callable[[pd.DataFrame], Verdict]:
    """``check``, except that a table without runs with the proxy gives *not evaluated* with the
    reason and the paper's number still in the table (celltcp's side empty)."""
    def wrapped(df: pd.DataFrame) -> Verdict:
        try:
            return check(df)
        except ValueError as e:
            if NO_PROXY not in str(e):
                raise
            return Verdict(f"not evaluated: {e}", grade=Grade.NOT_EVALUATED,
                           numbers=(Quantity(name, None, paper=paper, unit=unit),), setting=SETTING)
    wrapped.__name__ = check.__name__
    wrapped.__doc__ = check.__doc__
    return wrapped


FINDINGS = [
    Finding("ftp-gain-uncongested",
            "FTP, 50 ms (Fig. 4): the proxy increases the mean throughput by more than 60 % "
            "where there is no congestion (2 users per cell).", _paper_side(check_ftp_gain_uncongested, "throughput gain, 2 users/cell, 50 ms (mean)", "> 60"),
            f"per-user mean throughput with / without the proxy − 1 > {GAIN_UNCONGESTED * 100:g} % "
            "at 2 users per cell, 50 ms, for each TCP variant"),
    Finding("ftp-gain-moderate",
            "FTP, 50 ms (Fig. 4): by 2-17 % under moderate congestion (4 and 6 users per cell).",
            _paper_side(check_ftp_gain_moderate, "throughput gain, 4-6 users/cell, 50 ms (mean)", "2..17"),
            f"the gain within {(GAIN_MODERATE[0] - GAIN_TOL) * 100:g}..{(GAIN_MODERATE[1] + GAIN_TOL) * 100:g} % "
            f"(the paper's range ± {GAIN_TOL * 100:g} points) at 4 and 6 users per cell, each variant"),
    Finding("ftp-gain-congested",
            "FTP, 50 ms (Fig. 4): by a few per cent under heavy congestion (8 and 10 users per cell): "
            "the proxy cannot raise throughput when the load is at its maximum.",
            _paper_side(check_ftp_gain_congested, "throughput gain, 8-10 users/cell, 50 ms (mean)", "a few"),
            f"the gain within {-GAIN_TOL * 100:g}..{(GAIN_CONGESTED_MAX + GAIN_TOL) * 100:g} % at 8 "
            "and 10 users per cell, each variant"),
    Finding("ftp-cc-minimal",
            "FTP (Figs. 4-6): the TCP variant (NewReno or CUBIC) has minimal impact on the "
            "achievable throughput.", check_ftp_cc_minimal,
            f"CUBIC's per-user mean throughput within ± {CC_SAME * 100:g} % of NewReno's at every "
            "point (users, delay, proxy)"),
    Finding("ftp-jain-high",
            "FTP (Figs. 4-6): Jain's fairness index is above 0.96 in all cases.", check_ftp_jain_high,
            f"the mean over seeds of Jain's index of the FTP users' throughputs > {JAIN_MIN} at every point"),
    Finding("ftp-jain-lower-with-proxy",
            "FTP (Figs. 4-6): the fairness index is a bit worse with the proxy than without.",
            _paper_side(check_ftp_jain_lower_with_proxy, "mean Jain's index, without − with", "a bit", ""),
            "mean Jain's index with the proxy below without at more than half of the points, and "
            "lower on average"),
    Finding("ftp-uncongested-gain-falls-with-delay",
            "FTP (Figs. 5, 6): at 75 and 125 ms the gain without congestion is smaller than at "
            "50 ms (the longer server loop limits the proxy's server-side leg).",
            check_ftp_uncongested_gain_falls_with_delay,
            "the gain at 2 users per cell (mean over both variants) lower at 75 and at 125 ms than at 50 ms"),
    Finding("ftp-moderate-gain-grows-with-delay",
            "FTP (Figs. 5, 6): under moderate congestion the gain is larger at 75 and 125 ms "
            "(the longer delay degrades the reference, so the transport saturates later).",
            check_ftp_moderate_gain_grows_with_delay,
            "the gain at 4 and 6 users per cell (mean over both and both variants) higher at 75 and "
            "at 125 ms than at 50 ms"),
    Finding("web-proxy-faster",
            "Web (Fig. 7): the proxy decreases the mean page download time in all investigated cases.",
            _paper_side(check_web_proxy_faster, "points where the proxy is faster", "all", ""),
            "mean page time with the proxy below without at every (delay, background) point"),
    Finding("web-congestion-slower",
            "Web (Fig. 7): the mean download time increases as the transport gets more congested "
            "(background FTP 0, 2-4, 6-8 per cell).", check_web_congestion_slower,
            "mean page time rises with every background level, at each delay, with and without the proxy"),
    Finding("web-delay-slower",
            "Web (Fig. 7 b, c): the mean download time increases with the Internet delay.",
            check_web_delay_slower,
            "mean page time rises with every delay, at each background level, with and without the proxy"),
    Finding("web-relative-gain-falls-with-delay",
            "Web (Fig. 7): the proxy saves about the same time at every delay, so its relative "
            "gain falls as the Internet delay grows.", check_web_relative_gain_falls_with_delay,
            "the relative page-time saving at the largest delay below the one at the smallest, at each background level"),
    Finding("video-proxy-more-satisfied",
            "Video (Fig. 8): the proxy improves the ratio of satisfied playbacks in all investigated "
            "conditions.", _paper_side(check_video_proxy_more_satisfied, "points where the proxy satisfies more", "all", ""),
            "satisfied / all playbacks (pooled over seeds) with the proxy ≥ without at every point, "
            "and > at one at least"),
    Finding("video-gain-grows",
            "Video (Fig. 8): the improvement is more profound when the Internet delay or the "
            "congestion level is higher.", check_video_gain_grows,
            "the satisfaction gain (points) at the largest delay above the smallest (mean over "
            "backgrounds), and at 6-8 background downloads above none (mean over delays)"),
]


# --- figures -------------------------------------------------------------------------------------


def _ci(v: np.ndarray) -> tuple[float, float]:
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return float("nan"), float("nan")
    m = float(v.mean())
    h = float(t_quantile(0.975, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan")
    return m, h


def _panels(rows: pd.DataFrame, x: str, metric: str, scale: float, ylabel: str, *,
            series: Callable[[pd.DataFrame], list[tuple[str, pd.DataFrame, dict[str, Any]]]],
            xlabel: str, bars: bool = False, ylim: tuple[float, float] | None = None,
            hline: float | None = None, hline_label: str = "",
            bar_text: Callable[[pd.DataFrame], str] | None = None) -> Figure:
    """One panel per Internet delay (the paper's (a), (b), (c)), ``metric`` against ``x``: lines
    with 95 % t-interval bars over the seeds, or grouped bars with t-interval whiskers (and
    ``bar_text`` of each bar's rows written on it, e.g. the counts behind a ratio)."""
    delays = sorted(set(rows["delay_ms"]))
    xs = list(sp.ordered(rows[x]))
    if x == "background":
        xs = [b for b in BACKGROUND if b in xs]
    numeric = not bars and all(isinstance(v, (int, np.integer)) for v in xs)
    with sp._style():
        fig = Figure(figsize=(3.6 * len(delays) + 0.6, 3.4))
        axes = fig.subplots(1, len(delays), sharey=True, squeeze=False)[0]
        for k, (ax, d) in enumerate(zip(axes, delays)):
            ss = series(rows[rows["delay_ms"] == d])
            for j, (label, s, style) in enumerate(ss):
                stats = [_ci(s[s[x] == v][metric].to_numpy(float)) for v in xs]
                y = np.array([m for m, _ in stats]) * scale
                h = np.array([e for _, e in stats]) * scale
                err = np.nan_to_num(h) if np.isfinite(h).any() else None
                if bars:
                    w = 0.8 / max(2, len(ss))
                    pos = np.arange(len(xs), dtype=float) + (j - (len(ss) - 1) / 2) * w
                    ax.bar(pos, y, w, yerr=err, capsize=3, label=label, color=style.get("color"),
                           edgecolor="black", linewidth=0.4)
                    if bar_text is not None:
                        for px, py, v in zip(pos, y, xs):
                            sel = s[s[x] == v]
                            if not sel.empty and np.isfinite(py):
                                ax.text(px, py / 2, bar_text(sel), ha="center", va="center",
                                        rotation=90, fontsize=7, color="white")
                else:
                    pos = np.array(xs, float) if numeric else np.arange(len(xs), dtype=float)
                    ax.errorbar(pos, y, yerr=err, marker=style.get("marker", "o"), markersize=4,
                                capsize=3, label=label, color=style.get("color"),
                                linestyle=style.get("linestyle", "-"))
            if numeric:
                ax.set_xticks([float(v) for v in xs])
            else:
                ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs])
            if hline is not None:
                ax.axhline(hline, color="grey", linewidth=0.8, linestyle=":",
                           label=hline_label if k == len(delays) - 1 else None)
            ax.set_title(f"({'abcdefgh'[k]}) Internet delay {d:g} ms", fontsize=9)
            ax.set_xlabel(xlabel)
        # once every panel is drawn: the shared y axis then covers them all
        if ylim is not None:
            axes[0].set_ylim(*ylim)
        else:
            axes[0].set_ylim(bottom=0)
        axes[0].set_ylabel(ylabel)
        # one legend above the panels: inside one it hides a bar or a point of that panel
        handles, labels = axes[-1].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 5), fontsize=8,
                   frameon=False)
        fig.tight_layout(rect=(0, 0, 1, 0.9))
    return fig


def _ftp_series(sub: pd.DataFrame) -> list[tuple[str, pd.DataFrame, dict[str, Any]]]:
    out = []
    for p in PROXY_ORDER:
        for cc in ("newreno", "cubic"):
            s = sub[(sub["proxy"] == p) & (sub["cc"] == cc)]
            if not s.empty:
                out.append((f"{'NewReno' if cc == 'newreno' else 'CUBIC'}, {p}", s,
                            {"color": COLORS[p], "linestyle": LINE_STYLE[cc],
                             "marker": "o" if cc == "newreno" else "s"}))
    return out


def _proxy_series(sub: pd.DataFrame) -> list[tuple[str, pd.DataFrame, dict[str, Any]]]:
    return [(p, sub[sub["proxy"] == p], {"color": COLORS[p]}) for p in PROXY_ORDER
            if (sub["proxy"] == p).any()]


#: the paper's gains at 50 ms (§4.2) by users per cell, drawn as bands behind the measured lines
PAPER_GAIN_BANDS = (((1.5, 2.5), (GAIN_UNCONGESTED * 100, None), "paper: > 60 %"),
                    ((3.5, 6.5), (GAIN_MODERATE[0] * 100, GAIN_MODERATE[1] * 100), "paper: 2-17 %"),
                    ((7.5, 10.5), (0.0, GAIN_CONGESTED_MAX * 100), "paper: a few %"))


def _gain_figure(gd: pd.DataFrame) -> Figure:
    """The proxy's gain (%) against the users per cell: one line per delay (colour) and variant
    (line style), the paper's 50 ms ranges as grey bands."""
    with sp._style():
        fig = Figure(figsize=(5.6, 3.6))
        ax = fig.subplots()
        # up to 70 %: the paper's "> 60 %" band stays in view
        top = max(float(gd["gain"].max()) * 1.15, GAIN_UNCONGESTED * 100 + 10)
        for k, ((x0, x1), (lo, hi), _) in enumerate(PAPER_GAIN_BANDS):
            ax.fill_between([x0, x1], lo, hi if hi is not None else top, color="0.87", linewidth=0,
                            zorder=0, label="the paper at 50 ms (§4.2)" if k == 0 else None)
        palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7"]
        for k, d in enumerate(sorted(set(gd["delay_ms"]))):
            for cc in ("newreno", "cubic"):
                g = gd[(gd["delay_ms"] == d) & (gd["cc"] == cc)].sort_values("users")
                if g.empty:
                    continue
                ax.plot(g["users"], g["gain"], marker="o" if cc == "newreno" else "s", markersize=4,
                        linestyle=LINE_STYLE[cc], color=palette[k % len(palette)],
                        label=f"{d:g} ms, {'NewReno' if cc == 'newreno' else 'CUBIC'}")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(sorted(set(int(u) for u in gd["users"])))
        ax.set_xlim(1.5, 10.5)
        ax.set_ylim(min(0.0, float(gd["gain"].min()) * 1.15), top)
        ax.set_xlabel("FTP users per cell")
        ax.set_ylabel("throughput gain with the proxy (%)")
        ax.legend(fontsize=7, loc="upper right")
        fig.tight_layout()
    return fig


def figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    out: list[StudyFigure] = []
    proxied = (df["proxy"] == WITH).any()
    note = "" if proxied else (" No run has the proxy (the sweep's proxy parameter has no [[proxy]] "
                               "entry): only the reference curves are drawn.")
    try:
        f = ftp_runs(df)
    except ValueError:
        f = None
    if f is not None:
        f = f.assign(users=f["users"].astype(int))
        out.append(StudyFigure(
            "ftp_throughput", "FTP: per-user throughput (Figs. 4-6)",
            "Mean throughput per FTP user against the users per cell, with and without the proxy, "
            "NewReno and CUBIC, one panel per Internet delay; mean over seeds with 95 % "
            "t-intervals (paper: Figs. 4-6, left)." + note,
            _panels(f, "users", "goodput_bps", 1e-6, "throughput per user (Mbit/s)",
                    series=_ftp_series, xlabel="FTP users per cell")))
        out.append(StudyFigure(
            "ftp_jain", "FTP: Jain's fairness index (Figs. 4-6)",
            "Jain's index of the FTP users' throughputs in a run, against the users per cell; the "
            "dotted line is the paper's lower bound, 0.96 (paper: Figs. 4-6, right)." + note,
            _panels(f, "users", "jain", 1.0, "Jain's fairness index", series=_ftp_series,
                    xlabel="FTP users per cell", ylim=(0, 1.02), hline=JAIN_MIN,
                    hline_label=f"paper: > {JAIN_MIN}")))
        if proxied:
            gains = []
            for (cc, d, u), g in f.groupby(["cc", "delay_ms", "users"]):
                try:
                    gains.append({"cc": cc, "delay_ms": d, "users": int(u),
                                  "gain": _gain(g, "goodput_bps")[2] * 100})
                except ValueError:
                    pass
            if gains:
                gd = pd.DataFrame(gains)
                gd["delay"] = gd["delay_ms"].map(lambda v: f"{v:g} ms")
                out.append(StudyFigure(
                    "ftp_gain", "FTP: the proxy's throughput gain",
                    "Per-user mean throughput with the proxy over without, minus one, against the "
                    "users per cell, per Internet delay and variant; grey: the paper's ranges at 50 ms "
                    "(> 60 % at 2 users, 2-17 % at 4-6, a few per cent at 8-10).",
                    _gain_figure(gd)))
        users = sorted(set(f["users"]))
        d = df[(df["app"] == "ftp") & (df[PART] == MAIN) & (df["delay_ms"] == min(df["delay_ms"]))]
        d = d[d["users"].isin([users[0], users[-1]])].copy()
        if not d.empty:
            d["point"] = d["users"].astype(int).astype(str) + "/cell, " + d["proxy"]
            out.append(StudyFigure(
                "ftp_user_cdf", "FTP: distribution of the users' throughput",
                f"CDF of each FTP user's throughput over the run (all seeds, both variants), with "
                f"the fewest and the most users per cell, {min(df['delay_ms']):g} ms: the spread "
                "behind Jain's index (cell edge against cell centre).",
                sp.metric_cdf(d, "goodput_bps", "point",
                              title=f"throughput of each of {len(d)} FTP users (all runs)")))
    try:
        w = web_runs(df)
    except ValueError:
        w = None
    if w is not None:
        out.append(StudyFigure(
            "web_page_time", "Web: mean page download time (Fig. 7)",
            "Mean page download time (over every page of every browser in a run) against the "
            "background FTP downloads per cell, with and without the proxy, one panel per Internet "
            "delay; mean over seeds with 95 % t-intervals (paper: Fig. 7)." + note,
            _panels(w, "background", "page_time_s", 1.0, "mean page download time (s)",
                    series=_proxy_series, xlabel="background FTP downloads per cell", bars=True)))
    try:
        v = video_runs(df)
    except ValueError:
        v = None
    if v is not None:
        out.append(StudyFigure(
            "video_satisfaction", "Video: satisfied playbacks (Fig. 8)",
            "Share of satisfied playbacks (start-up < 8 s, at most 3 stalls, at most 2 s of "
            "stalling) against the background FTP downloads per cell, with and without the "
            "proxy, one panel per Internet delay; mean over seeds with 95 % t-intervals, on each "
            "bar the satisfied and all playbacks pooled over the seeds (paper: Fig. 8)." + note,
            _panels(v, "background", "satisfied_ratio", 100.0, "satisfied playbacks (%)",
                    series=_proxy_series, xlabel="background FTP downloads per cell", bars=True,
                    ylim=(0, 105),
                    bar_text=lambda r: f"{int(r['satisfied'].sum())}/{int(r['videos'].sum())}")))
    return out


def ftp_table(df: pd.DataFrame, out: Path | None = None, cc: str = "newreno") -> str:
    """The FTP results of one variant as a markdown table (docs/studies.md): per users per cell
    and Internet delay, the per-user mean throughput without → with the proxy (Mbit/s) and the
    gain, Jain's index without → with, and the proxy's peak held bytes (``proxies[].
    peak_held_bytes`` of the run's summary.json under ``out``; "–" without it). Means over seeds."""
    r = ftp_runs(df)
    r = r[r["cc"] == cc]

    def held(rid: str) -> float:
        try:
            s = json.loads((Path(out) / "runs" / str(rid) / "summary.json").read_text(encoding="utf-8"))
            return float(s["proxies"][0]["peak_held_bytes"])
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return float("nan")

    delays = sorted(set(r["delay_ms"]))
    lines = ["| users/cell | " + " | ".join(f"{d:g} ms" for d in delays) + " |",
             "|---|" + "---|" * len(delays)]
    for u in sorted(set(int(x) for x in r["users"])):
        cells = []
        for d in delays:
            pt = r[(r["users"] == u) & (r["delay_ms"] == d)]
            a, b = pt[pt["proxy"] == WITHOUT], pt[pt["proxy"] == WITH]
            if a.empty or b.empty:
                cells.append("–")
                continue
            ga, gb = a["goodput_bps"].mean(), b["goodput_bps"].mean()
            mb = np.nanmax([held(x) for x in b["run_id"]]) / 2**20 if out is not None else float("nan")
            cells.append(f"{ga / 1e6:.2f} → {gb / 1e6:.2f} ({_pct(gb / ga - 1)}); "
                         f"{a['jain'].mean():.2f} → {b['jain'].mean():.2f}; "
                         + (f"{mb:.0f} MB" if np.isfinite(mb) else "–"))
        lines.append(f"| {u} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m celltcp.studies.split_tcp_proxy STUDY_DIR [CC]``: :func:`ftp_table` of a
    finished study directory."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write("usage: python3 -m celltcp.studies.split_tcp_proxy STUDY_DIR [newreno|cubic]\n")
        return 2
    out = Path(args[0])
    df = prepare(pd.read_parquet(out / "results.parquet").assign(**{PART: MAIN}))
    print(ftp_table(df, out, args[1] if len(args) > 1 else "newreno"))
    return 0


STUDY = Study(
    name="split-tcp-proxy",
    paper_id="004",
    summary="a split-connection TCP proxy at the SAE-GW of a loaded 7-cell LTE network with "
            "walking users: FTP 2..10 users per cell (NewReno, CUBIC, 50/75/125 ms), web "
            "browsing and video with background FTP (paper 004)",
    paper="Farkas, Héder, Nováczki, A Split Connection TCP Proxy in LTE Networks (Nokia Siemens "
          "Networks; paper 004 in /papers)",
    intro_html=(
        "<p>The paper simulates a split-connection TCP proxy (RFC 3135) in the SAE-GW of an LTE "
        "network: TR 25.814's double ring (7 serving eNBs, one omnidirectional cell each, inside "
        "an interfering ring), 10 MHz FDD, pedestrians on random-waypoint walks with handovers, "
        "RED routers between the eNBs and the SAE-GW (100 Mbit/s, 10 ms), content servers behind "
        "a fixed Internet delay of 50, 75 or 125 ms. It measures FTP (per-user throughput and "
        "Jain's index, 2..10 users per cell, NewReno and CUBIC; Figs. 4-6), web browsing (mean "
        "page download time with 0, 2-4 or 6-8 background FTP downloads per cell; Fig. 7) and a "
        "512 kbit/s, 90 s progressive video (share of satisfied playbacks; Fig. 8), each with "
        "and without the proxy.</p>"
        "<p>celltcp builds the same network (<code>scenario.toml</code>; the interfering cells "
        "are kept busy by a UDP stream each, a 10 dB penetration loss stands for the paper's "
        "unstated one, and the web pages follow the NGMN model since the paper's 2011 Alexa page "
        "structures are not published). Every TCP flow has a 64 KB window "
        "(<code>window_exact = \"64KB\"</code>, no window scaling; the paper gives no value): the "
        "paper's explanations (the loop with the longer RTT bounds the transfer's throughput; a "
        "longer server loop lowers the proxy's maximum; Jain's index is worse with the proxy as the "
        "RTTs vary less) hold only for window-limited transfers, and with Linux's autotuned buffers "
        "2 unlimited downloads fill a 10 MHz cell, which the paper calls uncongested. "
        "The FTP sweep is the main one; <code>web/</code>, "
        "<code>web-idle/</code>, <code>video/</code> and <code>video-idle/</code> are the web "
        "and video experiments with and without background FTP. The proxy is the parameter "
        "<code>[[proxy]] node = \"pgw\"</code>; findings that compare with and without it say "
        "<em>not evaluated</em> when the sweeps have no runs with it.</p>"),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    enrich=enrich,
    aggregate_by=(PART, "proxy", "cc", "delay_ms", "users", "background"),
    metrics=("goodput_bps", "jain", "page_time_s", "satisfied_ratio"),
    table_rows=per_run,
    parts=PARTS,
)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
