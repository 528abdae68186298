"""Study ``cc-variants-lte`` (paper 003, its LTE half): Malekzadeh & Abdul Ghani, "A Model for
Behavioral Tendency of TCP Congestion Control Variants in LTE Cellular and 802.11ac Networks".

The paper (§III, Table 1–2) runs ns-3 with 14 UEs on one 20 MHz (100 PRB) eNB, a TCP server
10 ms behind the PGW, 1 Mbit/s TCP flows, eleven congestion controls (loss-based: Bic, Hybla,
NewReno, HighSpeed, H-TCP, Scalable; delay-based: Vegas, Veno, Westwood; loss-delay-based:
Illinois, YeAH), RLC AM and UM, and TCP packets of 1000 B (no fragmentation) and 3000 B (IP
fragmentation over a 1500 B MTU), and reports throughput, end-to-end delay, jitter and loss
ratio (§IV, Figs. 2–18). The findings checked here are those of §IV and §V about LTE:

1. with RLC AM every variant reaches the full 1 Mbit/s of its flow (§IV-A, Bic);
2. RLC AM gives better throughput than RLC UM (§IV-A, §IV-A summary, §V);
3. in AM, 3000-byte packets give the same throughput as 1000-byte packets (§V);
4. in AM, larger packets give a lower loss ratio (§V);
5. in AM, larger packets give a higher delay (§V);
6. in UM, larger packets give a higher throughput (§V);
7. in UM, larger packets give a higher delay and a higher loss ratio (§V);
8. in AM the loss-based and loss-delay-based variants all perform alike (§V);
9. in AM, Westwood and Veno perform better than Vegas (§V);
10. in UM, YeAH performs better than Illinois (§V).

The scenario and sweep files (``cc-variants-lte/scenario.toml``, ``sweep.toml``,
``sweep-quick.toml``) are written separately; this module reads the results whatever the flows
are called: a flow ``<group>-<ue>`` (``to = "ue*"``) belongs to ``<group>``, and the checks use
the 1 Mbit/s group (:func:`primary_group`). Metrics are first averaged over the UEs of a run,
then over the seeds, so the intervals are over independent runs.

Part ``bulk`` (``cc-variants-lte/bulk/``): the same cell and grid with saturating flows (the
scenario without the application rate; flows ``bulk-<ue>``): the loaded cell, where ns-3's
10 KiB RLC buffer (set in both scenarios, as the paper's ns-3 had it) overflows. Every finding
but the 1 Mbit/s one is checked a second time there (key ``<key>@loaded``), and every verdict
states the setting it rests on. ns-3 3.37's runs of both settings (``bench/ns3/ccv.cc``, driven
by ``validation/ns3_ccv.py``, cached in ``cc-variants-lte/ns3.json``) are measured by the same
functions and shown beside celltcp's numbers.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import sweep_plots as sp
from ..report import Finding, Quantity, Verdict, graded
from . import MAIN, PART, Study, StudyFigure

#: The paper's variants, by category (§II), in celltcp's names.
LOSS_BASED = ["bic", "hybla", "newreno", "highspeed", "htcp", "scalable"]
DELAY_BASED = ["vegas", "veno", "westwood"]
LOSS_DELAY_BASED = ["illinois", "yeah"]
ALL_CCS = LOSS_BASED + DELAY_BASED + LOSS_DELAY_BASED
#: The other selectable controls in the grids (Westwood without the "+": per-ACK samples, the
#: original; TCP-LP), in figure order after the paper's. DCTCP is not run: it needs ECN marks
#: from a queue, and no LTE queue marks (see docs/studies.md).
OTHER_CCS = ["cubic", "bbr", "westwoodplain", "lp"]
CC_COLORS = sp.palette(ALL_CCS + OTHER_CCS)
#: The part with saturating flows, and its flow group.
BULK = "bulk"
CONFIG_COLORS = {"AM, 1000 B": "#0072B2", "AM, 3000 B": "#56B4E9",
                 "UM, 1000 B": "#D55E00", "UM, 3000 B": "#E69F00"}

METRICS = ["goodput_bps", "owd_mean_ms", "jitter_ms", "loss_ratio"]
#: Names a rate-limited (1 Mbit/s) flow group is likely to have, in order of preference.
_PRIMARY_HINTS = ("rate", "cbr", "onoff", "app", "mbps", "1m")

#: Thresholds of the checks.
FULL_RATE_BPS = 0.90e6     # "reaches 1 Mbit/s": at least 90 % of it (goodput counts set-up and the tail)
SAME_TOL = 0.05            # "the same": within ±5 %
BETTER_TOL = 0.01          # "better": more than 1 % higher throughput, or within 1 % and lower delay


def _find(df: pd.DataFrame, suffix: str) -> pd.Series:
    """The parameter column ending in ``suffix`` (``flow.rate.cc``); with several (the main
    sweep's ``flow.rate.cc`` and the bulk part's ``flow.bulk.cc``), each row's first non-null."""
    cols = sorted(str(c) for c in df.columns if str(c).endswith(suffix))
    if not cols:
        raise KeyError(f"results table has no column ending in {suffix!r}")
    out = df[cols[0]]
    for c in cols[1:]:
        out = out.combine_first(df[c])
    return out


_UE_SUFFIX = re.compile(r"^(.*)-[A-Za-z_]+\d+$")


def _group(flow: str) -> str:
    m = _UE_SUFFIX.match(flow)
    return m.group(1) if m else flow


def primary_group(df: pd.DataFrame) -> str:
    """The flow group of the paper's 1 Mbit/s flows: the group whose name suggests a rate, else
    the group with the lowest mean goodput (the rate-limited one), else the only group. Only
    the main sweep's rows count (the ``bulk`` part's flows are never the paper's)."""
    if PART in df.columns:
        df = df[df[PART].fillna(MAIN) == MAIN]
        if df.empty:
            raise ValueError("no rows of the main (1 Mbit/s) sweep")
    groups = sp.ordered(df["group"])
    for hint in _PRIMARY_HINTS:
        for g in groups:
            if hint in str(g).lower():
                return str(g)
    if len(groups) == 1:
        return str(groups[0])
    means = df.groupby("group")["goodput_bps"].mean()
    return str(means.idxmin())


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Adds ``group`` (flow name without its UE), ``cc``, ``rlc`` (AM/UM), ``size`` (the MSS in
    bytes) and ``config`` ("AM, 1000 B") columns."""
    df = df.copy()
    df["group"] = [_group(str(f)) for f in df["flow"]]
    try:
        df["cc"] = _find(df, ".cc").astype(str)
    except KeyError:
        pass
    try:
        df["rlc"] = _find(df, "rlc.mode").astype(str).str.upper()
    except KeyError:
        pass
    try:
        df["size"] = pd.to_numeric(_find(df, ".mss")).astype(int)
    except KeyError:
        pass
    if "rlc" in df.columns and "size" in df.columns:
        df["config"] = df["rlc"] + ", " + df["size"].astype(str) + " B"
    return df


def per_run(df: pd.DataFrame, group: str | None = None) -> pd.DataFrame:
    """One row per run: the mean of each metric over the UEs' flows of ``group``."""
    d = prepare(df) if "group" not in df.columns else df
    g = group or primary_group(d)
    sel = d[d["group"] == g]
    if sel.empty:
        raise ValueError(f"no flows in group {g!r}")
    keys = [c for c in ("run_id", "seed", "cc", "rlc", "size", "config") if c in sel.columns]
    metrics = [m for m in METRICS if m in sel.columns]
    num = sel[keys].copy()
    for m in metrics:
        num[m] = pd.to_numeric(sel[m], errors="coerce")
    out = num.groupby(keys, sort=False, dropna=False)[metrics].mean().reset_index()
    out["group"] = g
    return out


def per_run_all(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`per_run` for every flow group (the 1 Mbit/s flows first, then e.g. bulk): the rows
    of the aggregated table."""
    d = prepare(df) if "group" not in df.columns else df
    try:
        primary: list[str] = [primary_group(d)]
    except ValueError:  # only the bulk part's rows
        primary = []
    groups = primary + [str(g) for g in sp.ordered(d["group"]) if str(g) not in primary]
    return pd.concat([per_run(d, g) for g in groups], ignore_index=True)


def _mean(r: pd.DataFrame, metric: str, **eq: Any) -> float:
    sel = r
    for k, v in eq.items():
        sel = sel[sel[k].isin(v) if isinstance(v, (list, tuple)) else sel[k] == v]
    v = sel[metric].dropna()
    if v.empty:
        raise ValueError(f"no runs with {eq}")
    return float(v.mean())


def _sizes(r: pd.DataFrame) -> tuple[int, int]:
    s = sorted(int(x) for x in r["size"].unique())
    if len(s) < 2:
        raise ValueError("needs two packet sizes")
    return s[0], s[-1]


def _fmt(metric: str, v: float) -> str:
    if metric == "goodput_bps":
        return f"{v / 1e6:.3f} Mbit/s"
    if metric == "loss_ratio":
        return f"{v * 100:.3f} %"
    return f"{v:.1f} ms"


#: The settings a finding is checked in: the paper's (the main sweep's 1 Mbit/s flows) and a
#: loaded cell (part ``bulk``: saturating flows, where the congestion control sets the rate).
PAPER_SETTING = "paper"
LOADED_SETTING = "loaded"
_SETTING_TEXT = {
    PAPER_SETTING: "the paper's: 14 UEs, 1 Mbit/s TCP flows, 20 MHz cell (celltcp: main sweep; "
                   "ns-3 3.37: OnOff 1 Mbit/s, its default 10 KiB RLC buffer)",
    LOADED_SETTING: "a loaded cell: 14 saturating TCP downloads (celltcp: part bulk, RLC buffer "
                    "of bulk/scenario.toml; ns-3 3.37: BulkSend, its default 10 KiB RLC buffer)",
}
#: ns-3 3.37's runs of the same grid (validation/ns3_ccv.py writes it; bench/ns3/ccv.cc).
NS3_FILE = Path(__file__).resolve().parent / "cc-variants-lte" / "ns3.json"
_NS3_SETTING = {PAPER_SETTING: "paper", LOADED_SETTING: "bulk"}
NO_PAPER_NUMBER = "the paper gives no number for it (bar charts only): direction only"


def ns3_results(path: Path | None = None) -> pd.DataFrame | None:
    """ns-3 3.37's cached runs as :func:`per_run` rows (``cc``, ``rlc``, ``size``, the four
    metrics in celltcp's units) with a ``setting`` column (``paper``/``bulk``); None without
    the file (default :data:`NS3_FILE`)."""
    path = NS3_FILE if path is None else path
    if not path.is_file():
        return None
    import json

    doc = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for run in doc.get("runs", []):
        res = run.get("result")
        if not res:
            continue
        rows.append({"setting": run["setting"], "cc": run["cc"], "rlc": run["rlc"].upper(),
                     "size": int(run["packet_size"]), "seed": res.get("seed", 1),
                     "goodput_bps": res["goodput_mbps"] * 1e6, "owd_mean_ms": res["delay_ms"],
                     "jitter_ms": res["jitter_ms"], "loss_ratio": res["loss_ratio"],
                     "rlc_tx_drops": res.get("rlc_tx_drops", 0)})
    if not rows:
        return None
    out = pd.DataFrame(rows)
    out["config"] = out["rlc"] + ", " + out["size"].astype(str) + " B"
    return out


def ns3_summary(path: Path | None = None) -> str:
    """One sentence per setting of ns-3 3.37's cached runs: the range of each metric over every
    control, RLC mode and packet size, and whether the goodput is the same for all of them
    (within ±2 %). Empty without the file."""
    ns = ns3_results(path)
    if ns is None:
        return ""
    out = []
    for setting, label in (("paper", "in the paper's setting (OnOff 1 Mbit/s)"),
                           ("bulk", "in the loaded cell (BulkSend)")):
        r = ns[ns["setting"] == setting]
        if r.empty:
            continue
        g = r["goodput_bps"] / 1e6
        same = g.max() <= g.min() * 1.02 + 1e-12
        by_cfg = r.groupby("config")["goodput_bps"].mean() / 1e6
        out.append(
            f"ns-3 3.37 {label}, {len(r)} runs ({r['cc'].nunique()} controls × "
            f"{r['rlc'].nunique()} RLC modes × {r['size'].nunique()} sizes): goodput per flow "
            f"{g.min():.3f}–{g.max():.3f} Mbit/s"
            + (" — the same figure for every control and configuration" if same else
               " (by configuration: " + ", ".join(f"{c} {v:.2f}" for c, v in by_cfg.items()) + ")")
            + f"; loss ratio {r['loss_ratio'].min() * 100:.2f}–{r['loss_ratio'].max() * 100:.2f} %"
            f"; end-to-end delay {r['owd_mean_ms'].min():.1f}–{r['owd_mean_ms'].max():.1f} ms"
            f"; RLC buffer drops {int(r['rlc_tx_drops'].min())}–{int(r['rlc_tx_drops'].max())} per run.")
    return " ".join(out)


def _ns3_rows(setting: str) -> pd.DataFrame | None:
    ns = ns3_results()
    if ns is None:
        return None
    sel = ns[ns["setting"] == _NS3_SETTING[setting]]
    return sel if len(sel) else None


def _rows(df: pd.DataFrame, setting: str) -> pd.DataFrame:
    """celltcp's per-run rows of a setting: the 1 Mbit/s flows, or the bulk part's flows."""
    d = prepare(df) if "group" not in df.columns else df
    if setting == PAPER_SETTING:
        return per_run(d)
    if PART in d.columns:
        d = d[d[PART].fillna(MAIN) == BULK]
    if d.empty or BULK not in set(d["group"]):
        raise ValueError("no rows of the bulk part (the loaded cell)")
    return per_run(d, BULK)


def _size_effect(r: pd.DataFrame, rlc: str, metric: str) -> tuple[float, float, str]:
    small, large = _sizes(r)
    a, b = _mean(r, metric, rlc=rlc, size=small), _mean(r, metric, rlc=rlc, size=large)
    return a, b, f"{rlc} {metric}: {_fmt(metric, a)} at {small} B, {_fmt(metric, b)} at {large} B"


def _pct(a: float, b: float) -> float:
    """(b / a − 1) in per cent; 0 for 0 → 0 (no loss either way)."""
    if a == 0:
        return 0.0 if b == 0 else float("inf")
    return (b / a - 1) * 100


#: A measure reads per-run rows and returns its quantities (name, value, unit), whether the
#: paper's direction holds, and a sentence with the numbers.
Measure = Callable[[pd.DataFrame], tuple[list[tuple[str, float, str]], bool, str]]


def m_am_full_rate(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    am = r[r["rlc"] == "AM"]
    if am.empty:
        raise ValueError("no AM runs")
    per_cc = am.groupby("cc")["goodput_bps"].mean()
    low = per_cc[per_cc < FULL_RATE_BPS]
    text = (f"AM mean goodput per flow over {len(per_cc)} variants: "
            f"{per_cc.min() / 1e6:.3f}..{per_cc.max() / 1e6:.3f} Mbit/s")
    if len(low):
        text += f"; below {FULL_RATE_BPS / 1e6:g} Mbit/s: " + ", ".join(f"{c} {v / 1e6:.3f}" for c, v in low.items())
    return [("AM goodput per flow, lowest variant", float(per_cc.min()) / 1e6, "Mbit/s")], low.empty, text


def m_am_beats_um(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    am, um = _mean(r, "goodput_bps", rlc="AM"), _mean(r, "goodput_bps", rlc="UM")
    return ([("AM / UM goodput", am / um, "")], am > um * (1 + BETTER_TOL),
            f"mean goodput per flow AM {_fmt('goodput_bps', am)}, UM {_fmt('goodput_bps', um)} "
            f"({(am / um - 1) * 100:+.2f} %)")


def m_am_size_same_throughput(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    a, b, text = _size_effect(r, "AM", "goodput_bps")
    return ([("AM goodput 3000 B vs 1000 B", _pct(a, b), "%")], abs(b / a - 1) <= SAME_TOL,
            text + f" ({_pct(a, b):+.2f} %)")


def m_am_size_lower_loss(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    a, b, text = _size_effect(r, "AM", "loss_ratio")
    return [("AM loss ratio at 1000 B", a * 100, "%"), ("AM loss ratio at 3000 B", b * 100, "%")], b < a, text


def m_am_size_higher_delay(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    a, b, text = _size_effect(r, "AM", "owd_mean_ms")
    return [("AM delay at 1000 B", a, "ms"), ("AM delay at 3000 B", b, "ms")], b > a, text


def m_um_size_higher_throughput(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    a, b, text = _size_effect(r, "UM", "goodput_bps")
    return ([("UM goodput 3000 B vs 1000 B", _pct(a, b), "%")], b > a * (1 + BETTER_TOL),
            text + f" ({_pct(a, b):+.2f} %)")


def m_um_size_higher_delay_loss(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    a, b, t1 = _size_effect(r, "UM", "owd_mean_ms")
    c, d, t2 = _size_effect(r, "UM", "loss_ratio")
    return ([("UM delay at 1000 B", a, "ms"), ("UM delay at 3000 B", b, "ms"),
             ("UM loss ratio at 1000 B", c * 100, "%"), ("UM loss ratio at 3000 B", d * 100, "%")],
            b > a and d > c, f"{t1}; {t2}")


def m_am_loss_based_alike(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    am = r[(r["rlc"] == "AM") & r["cc"].isin(LOSS_BASED + LOSS_DELAY_BASED)]
    if am["cc"].nunique() < 2:
        raise ValueError("needs at least two loss-based or loss-delay-based variants in AM")
    per_cc = am.groupby("cc")["goodput_bps"].mean()
    mean = float(per_cc.mean())
    dev = float((per_cc / mean - 1).abs().max())
    return ([("largest deviation from their mean goodput", dev * 100, "%")], dev <= SAME_TOL,
            f"AM goodput of {per_cc.size} loss-based/loss-delay-based variants "
            f"{per_cc.min() / 1e6:.3f}..{per_cc.max() / 1e6:.3f} Mbit/s, at most "
            f"{dev * 100:.2f} % from their mean")


def _better(r: pd.DataFrame, rlc: str, a: str, b: str) -> tuple[bool, str]:
    """Whether ``a`` performs better than ``b``: > 1 % more goodput, or within 1 % and a lower
    mean delay."""
    ga, gb = _mean(r, "goodput_bps", rlc=rlc, cc=a), _mean(r, "goodput_bps", rlc=rlc, cc=b)
    da, db = _mean(r, "owd_mean_ms", rlc=rlc, cc=a), _mean(r, "owd_mean_ms", rlc=rlc, cc=b)
    if ga > gb * (1 + BETTER_TOL):
        ok = True
    elif abs(ga / gb - 1) <= BETTER_TOL:
        ok = da < db
    else:
        ok = False
    return ok, (f"{a} {ga / 1e6:.3f} Mbit/s, {da:.1f} ms vs {b} {gb / 1e6:.3f} Mbit/s, "
                f"{db:.1f} ms")


def _goodput_ratio(r: pd.DataFrame, rlc: str, a: str, b: str) -> float:
    return _mean(r, "goodput_bps", rlc=rlc, cc=a) / _mean(r, "goodput_bps", rlc=rlc, cc=b)


def m_am_westwood_veno_beat_vegas(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    ok1, t1 = _better(r, "AM", "westwood", "vegas")
    ok2, t2 = _better(r, "AM", "veno", "vegas")
    return ([("Westwood / Vegas goodput (AM)", _goodput_ratio(r, "AM", "westwood", "vegas"), ""),
             ("Veno / Vegas goodput (AM)", _goodput_ratio(r, "AM", "veno", "vegas"), "")],
            ok1 and ok2, f"AM: {t1}; {t2}")


def m_um_yeah_beats_illinois(r: pd.DataFrame) -> tuple[list[tuple[str, float, str]], bool, str]:
    ok, t = _better(r, "UM", "yeah", "illinois")
    return ([("YeAH / Illinois goodput (UM)", _goodput_ratio(r, "UM", "yeah", "illinois"), "")],
            ok, f"UM: {t}")


def _check(measure: Measure, setting: str, paper: Sequence[float | None] = (),
           magnitude_from_direction: bool = False, tolerance: str = NO_PAPER_NUMBER
           ) -> Callable[[pd.DataFrame], Verdict]:
    """A check of ``measure`` on celltcp's rows of ``setting``, with ns-3 3.37's rows of the
    same setting beside it. ``paper``: the paper's number for each quantity (None: none).
    ``magnitude_from_direction``: the rule already tests the paper's number (e.g. "reaches the
    1 Mbit/s"), so a verdict that holds agrees in magnitude."""

    def check(df: pd.DataFrame) -> Verdict:
        qs, ok, text = measure(_rows(df, setting))
        ns = _ns3_rows(setting)
        ns_vals: list[float | None] = [None] * len(qs)
        if ns is not None:
            try:
                nqs, nok, ntext = measure(ns)
                ns_vals = [v for _, v, _ in nqs]
                text += (f". ns-3 3.37, same setting: {ntext} (the paper's direction "
                         f"{'holds' if nok else 'does not hold'} there)")
            except (KeyError, ValueError, ZeroDivisionError) as e:
                text += f". ns-3 3.37: not evaluated ({e})"
        numbers = tuple(Quantity(name, v, paper[i] if i < len(paper) else None, ns_vals[i], unit)
                        for i, (name, v, unit) in enumerate(qs))
        return Verdict(text, grade=graded(ok, ok if magnitude_from_direction else None),
                       numbers=numbers, tolerance=tolerance, setting=_SETTING_TEXT[setting])

    return check


_BETTER_RULE = (f"'better': more than {BETTER_TOL * 100:g} % more goodput, or goodput within "
                f"{BETTER_TOL * 100:g} % and a lower mean one-way delay")

#: (key, the paper's finding, measure, rule, the paper's numbers, magnitude from direction)
_SPECS: list[tuple[str, str, Measure, str, tuple[float | None, ...], bool]] = [
    ("am-full-rate",
     "With RLC AM, the throughput reaches full link utilisation, the 1 Mbit/s of the flows (§IV-A).",
     m_am_full_rate,
     "mean goodput per flow ≥ 0.9 Mbit/s (90 % of the flows' rate) for every variant in AM",
     (1.0,), True),
    ("am-beats-um",
     "In LTE, RLC AM gives better throughput than RLC UM (§IV-A, §V).", m_am_beats_um,
     f"mean goodput per flow, AM > UM by more than {BETTER_TOL * 100:g} %", (), False),
    ("am-size-same-throughput",
     "In RLC AM, larger packets (3000 B) give the same throughput as 1000 B ones (§V).",
     m_am_size_same_throughput,
     f"AM mean goodput at 3000 B within ±{SAME_TOL * 100:g} % of 1000 B", (), False),
    ("am-size-lower-loss",
     "In RLC AM, larger packets give a lower loss ratio (§V).", m_am_size_lower_loss,
     "AM mean loss ratio at 3000 B < at 1000 B", (), False),
    ("am-size-higher-delay",
     "In RLC AM, larger packets cause a higher delay (§V).", m_am_size_higher_delay,
     "AM mean one-way delay at 3000 B > at 1000 B", (), False),
    ("um-size-higher-throughput",
     "In RLC UM, larger packets give a higher throughput (§V).", m_um_size_higher_throughput,
     f"UM mean goodput at 3000 B > 1000 B by more than {BETTER_TOL * 100:g} %", (), False),
    ("um-size-higher-delay-loss",
     "In RLC UM, larger packets give a higher delay and a higher loss ratio (§V).",
     m_um_size_higher_delay_loss,
     "UM mean one-way delay and mean loss ratio both higher at 3000 B than at 1000 B", (), False),
    ("am-loss-based-alike",
     "In RLC AM, the loss-based and loss-delay-based variants all perform similarly (§V).",
     m_am_loss_based_alike,
     f"AM mean goodput of each of them within ±{SAME_TOL * 100:g} % of their mean", (), False),
    ("am-westwood-veno-beat-vegas",
     "In RLC AM, among the delay-based variants Westwood and Veno perform better than Vegas (§V).",
     m_am_westwood_veno_beat_vegas, _BETTER_RULE, (), False),
    ("um-yeah-beats-illinois",
     "In RLC UM, YeAH performs better than Illinois (§V).", m_um_yeah_beats_illinois,
     _BETTER_RULE, (), False),
]
#: Findings that make no sense with saturating flows (their rule names the 1 Mbit/s rate).
_PAPER_ONLY = {"am-full-rate"}
LOADED_SUFFIX = "@loaded"


def _finding(key: str, paper: str, measure: Measure, rule: str, numbers: tuple[float | None, ...],
             from_direction: bool, setting: str) -> Finding:
    tol = ("the rule tests the paper's 1 Mbit/s itself" if from_direction else NO_PAPER_NUMBER)
    if setting == LOADED_SETTING:
        key, paper = key + LOADED_SUFFIX, paper + " Checked in a loaded cell (saturating flows)."
    return Finding(key, paper, _check(measure, setting, numbers, from_direction, tol), rule,
                   tolerance=tol)


FINDINGS = ([_finding(*spec, PAPER_SETTING) for spec in _SPECS]
            + [_finding(*spec, LOADED_SETTING) for spec in _SPECS if spec[0] not in _PAPER_ONLY])


# The checks by name, on the paper's setting (kept for callers and tests).
def _paper_check(key: str) -> Callable[[pd.DataFrame], Verdict]:
    return next(f.check for f in FINDINGS if f.key == key)


check_am_full_rate = _paper_check("am-full-rate")
check_am_beats_um = _paper_check("am-beats-um")
check_am_size_same_throughput = _paper_check("am-size-same-throughput")
check_am_size_lower_loss = _paper_check("am-size-lower-loss")
check_am_size_higher_delay = _paper_check("am-size-higher-delay")
check_um_size_higher_throughput = _paper_check("um-size-higher-throughput")
check_um_size_higher_delay_loss = _paper_check("um-size-higher-delay-loss")
check_am_loss_based_alike = _paper_check("am-loss-based-alike")
check_am_westwood_veno_beat_vegas = _paper_check("am-westwood-veno-beat-vegas")
check_um_yeah_beats_illinois = _paper_check("um-yeah-beats-illinois")

_TITLES = {"goodput_bps": "Throughput", "owd_mean_ms": "End-to-end delay",
           "jitter_ms": "Jitter", "loss_ratio": "Loss ratio"}


def _cc_order(ccs: set[str]) -> list[str]:
    known = ALL_CCS + OTHER_CCS
    return [c for c in known if c in ccs] + sorted(ccs - set(known))


def figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    d = prepare(df)
    out = []
    groups = [str(g) for g in sp.ordered(d["group"])]
    try:
        primary: str | None = primary_group(d)
    except ValueError:
        primary = None
    for g in ([primary] if primary else []) + [x for x in groups if x != primary]:
        r = per_run(d, g)
        ccs = _cc_order(set(r["cc"]))
        configs = [c for c in CONFIG_COLORS if c in set(r["config"])]
        # every metric of the 1 Mbit/s flows and of the saturating ones; goodput of any other
        metrics = METRICS if g in (primary, BULK) else ["goodput_bps"]
        paper = ("paper: Figs. 2–18" if g == primary else
                 "not in the paper, which runs 1 Mbit/s flows only" if g == BULK else
                 "not in the paper")
        for m in metrics:
            if r[m].isna().all():
                continue
            what = _TITLES[m]
            out.append(StudyFigure(
                f"{m.split('_')[0]}_{g}", f"{what} per congestion control ({g} flows)",
                f"{what} of the '{g}' flows (mean over the UEs of a run, then over seeds, with "
                f"95 % t-intervals) per congestion control, by RLC mode and packet size ({paper}).",
                sp.bars(r, "cc", m, "config", x_order=ccs, group_order=configs,
                        colors=CONFIG_COLORS, title=f"{what}, {g} flows")))
    if primary is not None:
        r = per_run(d)
        out.append(StudyFigure(
            "goodput_cdf", "Distribution of per-run throughput",
            "CDF of the per-run mean throughput of the 1 Mbit/s flows, by RLC mode and packet size.",
            sp.metric_cdf(r, "goodput_bps", "config",
                          group_order=[c for c in CONFIG_COLORS if c in set(r["config"])],
                          colors=CONFIG_COLORS)))
    return out


STUDY = Study(
    name="cc-variants-lte",
    paper_id="003",
    summary="eleven congestion controls (and four more) x RLC AM/UM x 1000/3000-byte packets, "
            "14 UEs with 1 Mbit/s or bulk flows on a 20 MHz cell (paper 003, LTE half)",
    paper="M. Malekzadeh, A. A. Abdul Ghani, \"A Model for Behavioral Tendency of TCP Congestion "
          "Control Variants in LTE Cellular and 802.11ac Networks\"",
    intro_html=(
        "<p>The paper compares eleven TCP congestion controls in ns-3 over LTE (14 UEs, one "
        "20 MHz eNB, server 10 ms behind the PGW, 1 Mbit/s flows) with RLC AM and UM and TCP "
        "packets of 1000 B and 3000 B (the latter IP-fragmented over the 1500 B MTU), and "
        "reports throughput, delay, jitter and loss ratio. celltcp runs the same grid; only "
        "the LTE half of the paper is reproduced here; the 802.11ac half is the study "
        "<code>cc-variants-wifi</code>.</p>"
        "<p>Metrics are per flow, averaged over the 14 UEs of a run and then over the seeds; "
        "the checks use the 1 Mbit/s flows. celltcp adds CUBIC, BBR, Westwood without the "
        "&ldquo;+&rdquo; and TCP-LP to the grid (DCTCP is left out: it needs ECN marks, and no "
        "LTE queue marks).</p>"
        "<p>A second sweep (<code>bulk/</code>) runs the same cell and grid with saturating "
        "flows (no application rate), where the congestion control sets the rate and the "
        "10 KiB RLC buffer (ns-3's default, which the paper's runs had) overflows: the loaded "
        "cell. Every finding is checked twice, in the paper's setting and in the loaded cell "
        "(keys ending <code>@loaded</code>); each verdict says which setting it rests on. "
        "Beside celltcp's numbers are ns-3 3.37's in the same two settings "
        "(<code>bench/ns3/ccv.cc</code>, run by <code>validation/ns3_ccv.py</code>, cached in "
        "<code>cc-variants-lte/ns3.json</code> with the command of every run).</p>"
        "<p><b>What celltcp reproduces, what not, and why.</b> In the paper's setting fourteen "
        "1 Mbit/s flows load the 20 MHz cell to a seventh: no queue builds, nothing is lost, "
        "and every control, RLC mode and packet size delivers the flows' 1 Mbit/s. ns-3 3.37 "
        "run in the same setting agrees with celltcp, not with the paper: the same goodput for "
        "every control and configuration, no loss, and the paper's throughput and loss "
        "differences absent (the numbers are in each row). So the full rate and the "
        "&ldquo;alike&rdquo; findings are reproduced, and the differences between controls, "
        "modes and sizes are not, by either simulator: they cannot come from this load. In "
        "the loaded cell the 10 KiB buffer drops and the packet size matters (3000-byte "
        "segments lose a whole segment with any of their three fragments); which of the "
        "paper's differences appear there, in celltcp and in ns-3, is in the <code>@loaded</code> "
        "rows. The paper gives no numbers for them (bar charts only), so an agreement is "
        "graded <i>direction only</i>, except the 1 Mbit/s itself.</p>"
        + (f"<p>{html.escape(ns3_summary())} (computed from <code>cc-variants-lte/ns3.json"
           "</code>)</p>" if ns3_summary() else "")),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    aggregate_by=("cc", "rlc", "size", "group"),
    metrics=tuple(METRICS),
    table_rows=per_run_all,
    parts=(BULK,),
)
