"""Study ``cc-variants-wifi`` (paper 003, its 802.11ac half): Malekzadeh & Abdul Ghani, "A Model
for Behavioral Tendency of TCP Congestion Control Variants in LTE Cellular and 802.11ac Networks".

The paper (§III, Tables 1 and 3) runs ns-3 with one VHT access point (VhtMcs7, 20 MHz, A-MPDU,
SpectrumWifiPhy) and 14 stations, the AP wired to the PGW and a TCP server 10 ms / 100 Gbit/s
behind it, 1 Mbit/s TCP flows, the eleven congestion controls of the LTE half, and TCP packets of
1000 B (no fragmentation) and 3000 B (IP fragmentation over the 1500 B MTU). The findings checked
here are its statements about 802.11ac (§IV and §V) and its LTE-vs-802.11ac comparisons:

1. in 802.11ac, larger packets give a higher throughput (§V; §IV for Bic, Vegas, Veno,
   Westwood, Illinois, YeAH);
2. in 802.11ac, larger packets give a higher delay (§V);
3. in 802.11ac, larger packets give a higher loss ratio (§V; §IV for Vegas, Veno, Westwood,
   Illinois, YeAH);
4. Bic, NewReno and Scalable perform better than Hybla, H-TCP and HighSpeed (§V);
5. Veno performs better than Vegas and Westwood (§V, §IV-B);
6. YeAH performs better than Illinois (§V; the summary of §IV-C says the opposite);
7. Bic, Vegas, Veno, Illinois and YeAH reach a higher throughput over LTE (RLC AM) than over
   802.11ac (§IV-A to §IV-C).

Three sweeps: the main one (``cc-variants-wifi/``: 1 Mbit/s flows over 802.11ac), ``lte/`` (the
cc-variants-lte cell with RLC AM and the same flows, the LTE side of finding 7) and ``bulk/`` (the
802.11ac scenario with saturating flows, where the control sets the rate and the BSS is the
bottleneck; the paper has no such runs, so they are figures and table rows without a verdict).
Metrics are averaged over the 14 stations (UEs) of a run, then over the seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .. import sweep_plots as sp
from ..report import Finding, Verdict
from . import MAIN, PART, Study, StudyFigure
from .cc_variants_lte import _TITLES, BETTER_TOL, _cc_order, _find, _fmt, _group, _mean

WIFI = "802.11ac"
LTE = "LTE (AM)"
#: the parts: the LTE side of the comparisons, and the saturating flows
LTE_PART = "lte"
BULK = "bulk"
CONFIG_COLORS = {f"{WIFI}, 1000 B": "#009E73", f"{WIFI}, 3000 B": "#7FD1B9",
                 f"{LTE}, 1000 B": "#0072B2", f"{LTE}, 3000 B": "#56B4E9"}
METRICS = ["goodput_bps", "owd_mean_ms", "jitter_ms", "loss_ratio"]



def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Adds ``group`` (flow name without its station), ``cc``, ``size`` (the MSS in bytes),
    ``net`` (802.11ac or LTE (AM), from the part a row comes from) and ``setting``
    ("802.11ac, 1000 B") columns."""
    df = df.copy()
    df["group"] = [_group(str(f)) for f in df["flow"]]
    part = df[PART].fillna(MAIN) if PART in df.columns else pd.Series(MAIN, index=df.index)
    df["net"] = [LTE if p == LTE_PART else WIFI for p in part]
    try:
        df["cc"] = _find(df, ".cc").astype(str)
    except KeyError:
        pass
    try:
        df["size"] = pd.to_numeric(_find(df, ".mss")).astype(int)
    except KeyError:
        pass
    if "size" in df.columns:
        df["setting"] = df["net"] + ", " + df["size"].astype(str) + " B"
    return df


def per_run(df: pd.DataFrame, group: str = "rate", net: str | None = WIFI) -> pd.DataFrame:
    """One row per run: the mean of each metric over the stations' (UEs') flows of ``group`` on
    ``net`` (both networks when None)."""
    d = prepare(df) if "group" not in df.columns else df
    sel = d[d["group"] == group]
    if net is not None:
        sel = sel[sel["net"] == net]
    if sel.empty:
        raise ValueError(f"no {group!r} flows over {net or 'either network'}")
    keys = [c for c in ("run_id", "seed", "cc", "net", "size", "setting") if c in sel.columns]
    num = sel[keys].copy()
    for m in METRICS:
        if m in sel.columns:
            num[m] = pd.to_numeric(sel[m], errors="coerce")
    out = num.groupby(keys, sort=False, dropna=False)[[m for m in METRICS if m in num]].mean().reset_index()
    out["group"] = group
    return out


def per_run_all(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the aggregated table: the 1 Mbit/s flows over both networks, then bulk."""
    d = prepare(df)
    parts = [per_run(d, g, None) for g in ("rate", BULK) if (d["group"] == g).any()]
    if not parts:
        raise ValueError("no 'rate' or 'bulk' flows")
    return pd.concat(parts, ignore_index=True)


def _size_effect(df: pd.DataFrame, metric: str) -> tuple[float, float, str]:
    r = per_run(df)
    sizes = sorted(int(x) for x in r["size"].unique())
    if len(sizes) < 2:
        raise ValueError("needs two packet sizes")
    small, large = sizes[0], sizes[-1]
    a, b = _mean(r, metric, size=small), _mean(r, metric, size=large)
    return a, b, f"{WIFI} {metric}: {_fmt(metric, a)} at {small} B, {_fmt(metric, b)} at {large} B"


def check_size_higher_throughput(df: pd.DataFrame) -> Verdict:
    a, b, text = _size_effect(df, "goodput_bps")
    return Verdict(text + f" ({(b / a - 1) * 100:+.2f} %)", b > a * (1 + BETTER_TOL))


def check_size_higher_delay(df: pd.DataFrame) -> Verdict:
    a, b, text = _size_effect(df, "owd_mean_ms")
    return Verdict(text, b > a)


def check_size_higher_loss(df: pd.DataFrame) -> Verdict:
    a, b, text = _size_effect(df, "loss_ratio")
    return Verdict(text, b > a)


def _better(r: pd.DataFrame, a: str, b: str, **eq: Any) -> tuple[bool, str]:
    """Whether ``a`` performs better than ``b``: more than 1 % more goodput, or within 1 % and a
    lower mean delay. ``eq`` selects the rows (``net=``); ``a``/``b`` are controls unless
    ``key`` says otherwise."""
    key = eq.pop("key", "cc")
    ga, gb = _mean(r, "goodput_bps", **{key: a}, **eq), _mean(r, "goodput_bps", **{key: b}, **eq)
    da, db = _mean(r, "owd_mean_ms", **{key: a}, **eq), _mean(r, "owd_mean_ms", **{key: b}, **eq)
    if ga > gb * (1 + BETTER_TOL):
        ok = True
    elif abs(ga / gb - 1) <= BETTER_TOL:
        ok = da < db
    else:
        ok = False
    return ok, f"{a} {ga / 1e6:.3f} Mbit/s, {da:.1f} ms vs {b} {gb / 1e6:.3f} Mbit/s, {db:.1f} ms"


def _all_better(r: pd.DataFrame, winners: list[str], losers: list[str]) -> Verdict:
    missing = sorted(set(winners + losers) - set(r["cc"]))
    if missing:
        raise ValueError(f"needs the variants {', '.join(missing)}")
    results = [(w, lo, *_better(r, w, lo)) for w in winners for lo in losers]
    failed = [f"{w} not better than {lo}" for w, lo, ok, _ in results if not ok]
    means = r.groupby("cc")["goodput_bps"].mean()
    text = "; ".join(f"{c} {means[c] / 1e6:.3f} Mbit/s" for c in winners + losers)
    if failed:
        text += " — " + ", ".join(failed)
    return Verdict(text, not failed)


def check_loss_based_ranking(df: pd.DataFrame) -> Verdict:
    return _all_better(per_run(df), ["bic", "newreno", "scalable"], ["hybla", "htcp", "highspeed"])


def check_veno_beats_vegas_westwood(df: pd.DataFrame) -> Verdict:
    return _all_better(per_run(df), ["veno"], ["vegas", "westwood"])


def check_yeah_beats_illinois(df: pd.DataFrame) -> Verdict:
    return _all_better(per_run(df), ["yeah"], ["illinois"])


LTE_WINS = ["bic", "vegas", "veno", "illinois", "yeah"]


def check_lte_beats_wifi(df: pd.DataFrame) -> Verdict:
    r = per_run(df, "rate", None)
    if LTE not in set(r["net"]):
        raise ValueError("no LTE runs (the study's lte/ part)")
    texts, failed = [], []
    for cc in LTE_WINS:
        if cc not in set(r[r["net"] == LTE]["cc"]) or cc not in set(r[r["net"] == WIFI]["cc"]):
            raise ValueError(f"needs {cc} over both networks")
        g_lte = _mean(r, "goodput_bps", cc=cc, net=LTE)
        g_wifi = _mean(r, "goodput_bps", cc=cc, net=WIFI)
        texts.append(f"{cc} {g_lte / 1e6:.3f} vs {g_wifi / 1e6:.3f}")
        if not g_lte > g_wifi * (1 + BETTER_TOL):
            failed.append(cc)
    text = "mean goodput per flow, LTE AM vs 802.11ac (Mbit/s): " + ", ".join(texts)
    if failed:
        text += f" — not higher over LTE: {', '.join(failed)}"
    return Verdict(text, not failed)


_BETTER_RULE = (f"'better': more than {BETTER_TOL * 100:g} % more goodput, or goodput within "
                f"{BETTER_TOL * 100:g} % and a lower mean one-way delay (means over both sizes)")

FINDINGS = [
    Finding("wifi-size-higher-throughput",
            "In 802.11ac, larger packets (3000 B) give a higher throughput than 1000 B ones (§V).",
            check_size_higher_throughput,
            f"802.11ac mean goodput per flow at 3000 B > at 1000 B by more than {BETTER_TOL * 100:g} %"),
    Finding("wifi-size-higher-delay",
            "In 802.11ac, larger packets cause a higher delay (§V).", check_size_higher_delay,
            "802.11ac mean one-way delay at 3000 B > at 1000 B"),
    Finding("wifi-size-higher-loss",
            "In 802.11ac, larger packets cause a higher loss ratio (§V).", check_size_higher_loss,
            "802.11ac mean loss ratio at 3000 B > at 1000 B"),
    Finding("wifi-loss-based-ranking",
            "In 802.11ac, Bic, NewReno and Scalable perform better than Hybla, H-TCP and HighSpeed "
            "(§V).", check_loss_based_ranking, "each of the first three better than each of the "
            "last three; " + _BETTER_RULE),
    Finding("wifi-veno-beats-vegas-westwood",
            "In 802.11ac, Veno performs better than Vegas and Westwood (§V, §IV-B).",
            check_veno_beats_vegas_westwood, _BETTER_RULE),
    Finding("wifi-yeah-beats-illinois",
            "In 802.11ac, YeAH performs better than Illinois (§V; the summary of §IV-C says "
            "Illinois performs better).", check_yeah_beats_illinois, _BETTER_RULE),
    Finding("lte-beats-wifi",
            "Bic, Vegas, Veno, Illinois and YeAH give a higher throughput over LTE (RLC AM) than "
            "over 802.11ac (§IV-A to §IV-C).", check_lte_beats_wifi,
            f"for each of them, mean goodput per flow over LTE AM > over 802.11ac by more than "
            f"{BETTER_TOL * 100:g} % (the lte/ part)"),
]


def figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    d = prepare(df)
    out = []
    for g, paper in (("rate", "paper: Figs. 2–18, 802.11ac and LTE bars"),
                     (BULK, "not in the paper, which runs 1 Mbit/s flows only")):
        if not (d["group"] == g).any():
            continue
        r = per_run(d, g, None)
        ccs = _cc_order(set(r["cc"]))
        configs = [c for c in CONFIG_COLORS if c in set(r["setting"])]
        for m in METRICS:
            if m not in r or r[m].isna().all():
                continue
            what = _TITLES[m]
            label = "1 Mbit/s" if g == "rate" else "saturating"
            out.append(StudyFigure(
                f"{m.split('_')[0]}_{g}", f"{what} per congestion control ({label} flows)",
                f"{what} of the {label} flows (mean over the 14 stations or UEs of a run, then "
                f"over seeds, with 95 % t-intervals) per congestion control, by network and "
                f"packet size ({paper}).",
                sp.bars(r, "cc", m, "setting", x_order=ccs, group_order=configs,
                        colors=CONFIG_COLORS, title=f"{what}, {label} flows")))
    return out


STUDY = Study(
    name="cc-variants-wifi",
    paper_id="003",
    summary="eleven congestion controls (and four more) x 1000/3000-byte packets, 14 stations "
            "with 1 Mbit/s or bulk flows on an 802.11ac VHT MCS 7 BSS, beside the same flows "
            "over the LTE cell (paper 003, 802.11ac half)",
    paper="M. Malekzadeh, A. A. Abdul Ghani, \"A Model for Behavioral Tendency of TCP Congestion "
          "Control Variants in LTE Cellular and 802.11ac Networks\"",
    intro_html=(
        "<p>The paper compares eleven TCP congestion controls in ns-3 over 802.11ac (one VHT "
        "AP, VhtMcs7, 20 MHz, A-MPDU, 14 stations, the AP wired to the PGW and a server 10 ms "
        "behind it, 1 Mbit/s flows) with TCP packets of 1000 B and 3000 B (the latter "
        "IP-fragmented over the 1500 B MTU), beside the same flows over LTE, and reports "
        "throughput, delay, jitter and loss ratio. celltcp runs the same grid over its "
        "802.11ac model (EDCA best effort, A-MPDU with block ACK, the NIST error model) and, in "
        "the <code>lte/</code> part, over the cc-variants-lte cell with RLC AM.</p>"
        "<p>Fourteen 1 Mbit/s flows load the BSS to about a third of what it carries (VHT MCS 7 "
        "at 20 MHz gives ~45 Mbit/s of TCP to 14 stations), so in celltcp every control "
        "delivers its 1 Mbit/s and the differences the paper reports in throughput do not "
        "appear; the paper's ns-3 runs lost throughput at the start, when the 14 connections "
        "open at once (its §IV-A). The <code>bulk/</code> part runs saturating flows, where the "
        "controls do differ; the paper has no such runs, so they are figures and rows of the "
        "aggregated table without a verdict.</p>"),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    aggregate_by=("cc", "net", "size", "group"),
    metrics=tuple(METRICS),
    table_rows=per_run_all,
    parts=(LTE_PART, BULK),
)
