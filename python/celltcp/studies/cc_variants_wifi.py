"""Study ``cc-variants-wifi`` (paper 003, its 802.11ac half): Malekzadeh & Abdul Ghani, "A Model
for Behavioral Tendency of TCP Congestion Control Variants in LTE Cellular and 802.11ac Networks".

The paper (§III, Tables 1 and 3) runs ns-3 with one VHT access point (VhtMcs7, 20 MHz, A-MPDU,
SpectrumWifiPhy) and 14 stations, the AP wired to the PGW and a TCP server 10 ms / 100 Gbit/s
behind it, 1 Mbit/s TCP flows, the eleven congestion controls of the LTE half, and TCP packets of
1000 B (no fragmentation) and 3000 B (IP fragmentation over the 1500 B MTU). The findings checked
here are its statements about 802.11ac (§IV and §V) and its LTE-vs-802.11ac comparisons:

1. in 802.11ac, larger packets give a higher throughput (§V; §IV for Bic, Vegas, Veno,
   Westwood, Illinois, YeAH);
2. in 802.11ac, larger packets give a higher delay (§V), for H-TCP about twice (§IV-A5);
3. in 802.11ac, larger packets give a higher loss ratio (§V), for NewReno almost twice (§IV-A3);
4. Bic, NewReno and Scalable perform better than Hybla, H-TCP and HighSpeed (§V);
5. Veno performs better than Vegas and Westwood (§V, §IV-B);
6. YeAH performs better than Illinois (§V; the summary of §IV-C says the opposite);
7. every control but Scalable reaches a higher throughput over LTE (RLC AM) than over 802.11ac
   (§IV-A to §IV-C, one paragraph per control; Scalable's says "higher delay values for the
   LTE", a slip the paper does not resolve, so Scalable is left out);
8. with 3000 B packets 802.11ac gives a lower delay than LTE (Scalable: about half, §IV-A6;
   Illinois, YeAH, §IV-C), with 1000 B packets LTE does (Illinois, YeAH).

Every verdict is graded (:class:`celltcp.report.Grade`) with celltcp's numbers, computed from
the results, beside the paper's. The paper's figures are bar charts without values; its text
gives three numbers (the ratios of findings 2, 3 and 8), which are the only magnitudes judged
(within ×:data:`MAGNITUDE_FACTOR`); every other finding is at best *direction only*.

**The load.** The paper's server offers each station 1 Mbit/s (§III, "TCP flows with 1Mbps data
rates"): 14 Mbit/s in all, on a BSS whose PHY rate is 65 Mbit/s (VHT MCS 7, 20 MHz, one stream,
800 ns guard interval: IEEE 802.11-2016 Table 21-30; ns-3's defaults). Its flows therefore do
not saturate the BSS, and the main sweep keeps them at 1 Mbit/s, as the paper has them. How much
of the BSS that is, is computed from the ``bulk`` part (saturating flows, the same BSS) and
written in each verdict's setting (:func:`setting_text`). Because the paper's 802.11ac
differences between controls can only come from a BSS that is loaded (its §IV-A blames the
14 connections opening at once), every 802.11ac finding is checked a second time on the bulk
part's saturated BSS (key ``<key>@loaded``), where the control sets the rate; the LTE
comparisons are not (the ``lte/`` part runs the 1 Mbit/s flows only).

Three sweeps: the main one (``cc-variants-wifi/``: 1 Mbit/s flows over 802.11ac), ``lte/`` (the
cc-variants-lte cell with RLC AM and the same flows, the LTE side of findings 7 and 8) and
``bulk/`` (the 802.11ac scenario with saturating flows). Metrics are averaged over the 14
stations (UEs) of a run, then over the seeds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import sweep_plots as sp
from ..report import Finding, Quantity, Verdict, graded, within
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


#: Thresholds of the checks (documented in docs/studies.md).
MAGNITUDE_FACTOR = 1.5     # "agrees in magnitude": within ×1.5 of the paper's "about twice"/"about half"
#: The few numbers the paper states in its text (the rest are bar charts without values).
PAPER_NEWRENO_LOSS_RATIO = 2.0   # §IV-A3: in 802.11ac "bigger packets cause almost twice loss ratio"
PAPER_HTCP_DELAY_RATIO = 2.0     # §IV-A5: in 802.11ac larger packets "a higher delay, which reaches about twice"
PAPER_SCALABLE_DELAY_VS_LTE = 0.5  # §IV-A6: with larger packets "the 802.11ac delay is much less than the LTE (about half)"
NO_PAPER_NUMBER = "the paper gives no number for it (bar charts only): direction only"

#: The settings a finding is checked in: the paper's (the main sweep's 1 Mbit/s flows) and a
#: saturated BSS (part ``bulk``: saturating flows, where the control sets the rate).
PAPER_SETTING = "paper"
LOADED_SETTING = "loaded"
LOADED_SUFFIX = "@loaded"
OFFERED_BPS = 14 * 1e6     # the paper's offered load: 14 flows of 1 Mbit/s


def bss_capacity(df: pd.DataFrame) -> float | None:
    """The BSS's TCP goodput with 14 saturating flows: the sum over the stations of a bulk-part
    run, averaged over its runs (None without the bulk part)."""
    d = prepare(df) if "group" not in df.columns else df
    sel = d[(d["group"] == BULK) & (d["net"] == WIFI)]
    if sel.empty:
        return None
    g = pd.to_numeric(sel["goodput_bps"], errors="coerce")
    return float(g.groupby(sel["run_id"]).sum().mean())


def setting_text(df: pd.DataFrame, setting: str) -> str:
    """The setting a verdict rests on, with the offered load against the BSS's capacity when
    the bulk part ran (computed, never typed)."""
    cap = bss_capacity(df)
    bss = ("14 stations 5–15 m from one 802.11ac AP (VHT MCS 7, 20 MHz, one stream, long GI, "
           "A-MPDU), server 10 ms behind the PGW")
    if setting == LOADED_SETTING:
        return (f"a saturated BSS: {bss}, 14 saturating TCP downloads (part bulk"
                + (f", {cap / 1e6:.1f} Mbit/s of goodput in all)" if cap else ")"))
    load = (f": {OFFERED_BPS / 1e6:g} Mbit/s offered, {OFFERED_BPS / cap * 100:.0f} % of the "
            f"{cap / 1e6:.1f} Mbit/s the BSS carries to 14 saturating flows (part bulk)"
            if cap else "")
    return f"the paper's: {bss}, one 1 Mbit/s TCP flow per station{load}"


def _rows(df: pd.DataFrame, setting: str, net: str | None = WIFI) -> pd.DataFrame:
    d = prepare(df) if "group" not in df.columns else df
    return per_run(d, "rate" if setting == PAPER_SETTING else BULK, net)


def _sizes(r: pd.DataFrame) -> tuple[int, int]:
    s = sorted(int(x) for x in r["size"].dropna().unique())
    if len(s) < 2:
        raise ValueError("needs two packet sizes")
    return s[0], s[-1]


def _ratio(b: float, a: float) -> float:
    """b / a; NaN when a is 0 (e.g. no loss at either size)."""
    return b / a if a else float("nan")


def _pct(a: float, b: float) -> float:
    return (b / a - 1) * 100 if a else float("nan")


#: What a measure returns: the quantities (name, celltcp's value, the paper's or None, unit),
#: whether the paper's direction holds, whether the magnitude is within the tolerance (None:
#: the paper gives no number), and a sentence with the numbers.
Measured = tuple[list[tuple[str, float, float | None, str]], bool, bool | None, str]


def m_size_higher_throughput(r: pd.DataFrame) -> Measured:
    small, large = _sizes(r)
    a, b = _mean(r, "goodput_bps", size=small), _mean(r, "goodput_bps", size=large)
    return ([(f"goodput {large} B vs {small} B", _pct(a, b), None, "%")],
            b > a * (1 + BETTER_TOL), None,
            f"{WIFI} mean goodput per flow {_fmt('goodput_bps', a)} at {small} B, "
            f"{_fmt('goodput_bps', b)} at {large} B ({_pct(a, b):+.2f} %)")


def _size_ratio_measure(metric: str, cc: str, paper: float, what: str) -> Callable[[pd.DataFrame], Measured]:
    def measure(r: pd.DataFrame) -> Measured:
        small, large = _sizes(r)
        a, b = _mean(r, metric, size=small), _mean(r, metric, size=large)
        ca, cb = _mean(r, metric, size=small, cc=cc), _mean(r, metric, size=large, cc=cc)
        ratio = _ratio(cb, ca)
        scale, unit = (100.0, "%") if metric == "loss_ratio" else (1.0, "ms")
        return ([(f"{what} at {small} B, all controls", a * scale, None, unit),
                 (f"{what} at {large} B, all controls", b * scale, None, unit),
                 (f"{_CC_NAME.get(cc, cc)} {what} {large} B / {small} B", ratio, paper, "")],
                b > a, ratio == ratio and within(ratio, paper, MAGNITUDE_FACTOR),
                f"{WIFI} mean {what} {_fmt(metric, a)} at {small} B, {_fmt(metric, b)} at "
                f"{large} B; {_CC_NAME.get(cc, cc)} {_fmt(metric, ca)} and {_fmt(metric, cb)} "
                + (f"(×{ratio:.2f}, the paper's ×{paper:g})" if ratio == ratio else
                   f"(no ratio: none at {small} B; the paper's ×{paper:g})"))
    return measure


_CC_NAME = {"newreno": "NewReno", "htcp": "H-TCP", "scalable": "Scalable", "illinois": "Illinois",
            "yeah": "YeAH", "bic": "Bic", "vegas": "Vegas", "veno": "Veno", "westwood": "Westwood",
            "hybla": "Hybla", "highspeed": "HighSpeed"}


def _need(r: pd.DataFrame, ccs: Sequence[str]) -> None:
    missing = sorted(set(ccs) - set(r["cc"]))
    if missing:
        raise ValueError(f"needs the variants {', '.join(missing)}")


def _better(r: pd.DataFrame, a: str, b: str, **eq: Any) -> tuple[bool, str]:
    """Whether ``a`` performs better than ``b``: more than 1 % more goodput, or within 1 % and a
    lower mean delay (means over both sizes); ``eq`` selects the rows (``net=``)."""
    ga, gb = _mean(r, "goodput_bps", cc=a, **eq), _mean(r, "goodput_bps", cc=b, **eq)
    da, db = _mean(r, "owd_mean_ms", cc=a, **eq), _mean(r, "owd_mean_ms", cc=b, **eq)
    if ga > gb * (1 + BETTER_TOL):
        ok = True
    elif abs(ga / gb - 1) <= BETTER_TOL:
        ok = da < db
    else:
        ok = False
    return ok, f"{a} {ga / 1e6:.3f} Mbit/s, {da:.1f} ms vs {b} {gb / 1e6:.3f} Mbit/s, {db:.1f} ms"


def _all_better_measure(winners: list[str], losers: list[str]) -> Callable[[pd.DataFrame], Measured]:
    def measure(r: pd.DataFrame) -> Measured:
        _need(r, winners + losers)
        pairs = [(w, lo, *_better(r, w, lo)) for w in winners for lo in losers]
        failed = [f"{w} not better than {lo}" for w, lo, ok, _ in pairs if not ok]
        g = {c: _mean(r, "goodput_bps", cc=c) for c in winners + losers}
        worst = min(g[w] / g[lo] for w in winners for lo in losers)
        text = "; ".join(f"{c} {g[c] / 1e6:.3f} Mbit/s" for c in winners + losers)
        if failed:
            text += " — " + ", ".join(failed)
        name = ("goodput " + "/".join(_CC_NAME[c] for c in winners) + " over "
                + "/".join(_CC_NAME[c] for c in losers) + ", smallest pair ratio")
        return [(name, worst, None, "")], not failed, None, text
    return measure


#: the controls whose paragraph (§IV-A1 … §IV-C2) says LTE (RLC AM) gives the higher throughput
LTE_WINS = ["bic", "hybla", "newreno", "highspeed", "htcp", "vegas", "veno", "westwood",
            "illinois", "yeah"]


def m_lte_beats_wifi(r: pd.DataFrame) -> Measured:
    if LTE not in set(r["net"]):
        raise ValueError("no LTE runs (the study's lte/ part)")
    texts, failed, ratios = [], [], []
    for cc in LTE_WINS:
        if cc not in set(r[r["net"] == LTE]["cc"]) or cc not in set(r[r["net"] == WIFI]["cc"]):
            raise ValueError(f"needs {cc} over both networks")
        g_lte = _mean(r, "goodput_bps", cc=cc, net=LTE)
        g_wifi = _mean(r, "goodput_bps", cc=cc, net=WIFI)
        ratios.append(g_lte / g_wifi)
        texts.append(f"{cc} {g_lte / 1e6:.3f} vs {g_wifi / 1e6:.3f}")
        if not g_lte > g_wifi * (1 + BETTER_TOL):
            failed.append(cc)
    text = "mean goodput per flow, LTE AM vs 802.11ac (Mbit/s): " + ", ".join(texts)
    if failed:
        text += f" — not higher over LTE: {', '.join(failed)}"
    return ([(f"goodput LTE / 802.11ac, smallest of the {len(LTE_WINS)}", min(ratios), None, "")],
            not failed, None, text)


#: §IV-A6 (Scalable), §IV-C1 (Illinois), §IV-C2 (YeAH): with 3000 B packets 802.11ac has the
#: lower delay; with 1000 B, LTE (Illinois, YeAH)
DELAY_LARGE = ["scalable", "illinois", "yeah"]
DELAY_SMALL = ["illinois", "yeah"]


def m_wifi_delay_vs_lte(r: pd.DataFrame) -> Measured:
    if LTE not in set(r["net"]):
        raise ValueError("no LTE runs (the study's lte/ part)")
    small, large = _sizes(r)

    def ratio(cc: str, size: int) -> float:
        return (_mean(r, "owd_mean_ms", cc=cc, net=WIFI, size=size)
                / _mean(r, "owd_mean_ms", cc=cc, net=LTE, size=size))

    large_r = {cc: ratio(cc, large) for cc in DELAY_LARGE}
    small_r = {cc: ratio(cc, small) for cc in DELAY_SMALL}
    failed = ([f"{cc} at {large} B" for cc, x in large_r.items() if not x < 1 - BETTER_TOL]
              + [f"{cc} at {small} B" for cc, x in small_r.items() if not x > 1 + BETTER_TOL])
    qs: list[tuple[str, float, float | None, str]] = [
        (f"Scalable delay 802.11ac / LTE at {large} B", large_r["scalable"],
         PAPER_SCALABLE_DELAY_VS_LTE, "")]
    qs += [(f"{_CC_NAME[cc]} delay 802.11ac / LTE at {large} B", large_r[cc], None, "")
           for cc in DELAY_LARGE[1:]]
    qs += [(f"{_CC_NAME[cc]} delay 802.11ac / LTE at {small} B", small_r[cc], None, "")
           for cc in DELAY_SMALL]
    text = ("mean one-way delay 802.11ac / LTE AM: " + ", ".join(
        f"{cc} ×{x:.3f} at {large} B" for cc, x in large_r.items()) + "; " + ", ".join(
        f"{cc} ×{x:.3f} at {small} B" for cc, x in small_r.items()))
    if failed:
        text += " — not the paper's side: " + ", ".join(failed)
    return (qs, not failed, within(large_r["scalable"], PAPER_SCALABLE_DELAY_VS_LTE, MAGNITUDE_FACTOR),
            text)


def _check(measure: Callable[[pd.DataFrame], Measured], setting: str, both_nets: bool,
           tolerance: str) -> Callable[[pd.DataFrame], Verdict]:
    def check(df: pd.DataFrame) -> Verdict:
        d = prepare(df) if "group" not in df.columns else df
        qs, ok, magnitude, text = measure(_rows(d, setting, None if both_nets else WIFI))
        return Verdict(text, grade=graded(ok, magnitude),
                       numbers=tuple(Quantity(n, v, p, unit=u) for n, v, p, u in qs),
                       tolerance=tolerance, setting=setting_text(d, setting))
    return check


_BETTER_RULE = (f"'better': more than {BETTER_TOL * 100:g} % more goodput, or goodput within "
                f"{BETTER_TOL * 100:g} % and a lower mean one-way delay (means over both sizes)")
_RATIO_TOL = f"the ratio the paper states within ×{MAGNITUDE_FACTOR:g} of it"

#: (key, the paper's finding, measure, rule, tolerance, needs the LTE part)
_SPECS: list[tuple[str, str, Callable[[pd.DataFrame], Measured], str, str, bool]] = [
    ("wifi-size-higher-throughput",
     "In 802.11ac, larger packets (3000 B) give a higher throughput than 1000 B ones (§V).",
     m_size_higher_throughput,
     f"802.11ac mean goodput per flow at 3000 B > at 1000 B by more than {BETTER_TOL * 100:g} %",
     NO_PAPER_NUMBER, False),
    ("wifi-size-higher-delay",
     "In 802.11ac, larger packets cause a higher delay (§V); for H-TCP about twice (§IV-A5).",
     _size_ratio_measure("owd_mean_ms", "htcp", PAPER_HTCP_DELAY_RATIO, "delay"),
     "802.11ac mean one-way delay over all controls at 3000 B > at 1000 B; magnitude: H-TCP's "
     "delay ratio 3000 B / 1000 B", _RATIO_TOL, False),
    ("wifi-size-higher-loss",
     "In 802.11ac, larger packets cause a higher loss ratio (§V); for NewReno almost twice "
     "(§IV-A3).", _size_ratio_measure("loss_ratio", "newreno", PAPER_NEWRENO_LOSS_RATIO, "loss ratio"),
     "802.11ac mean loss ratio over all controls at 3000 B > at 1000 B; magnitude: NewReno's "
     "loss ratio 3000 B / 1000 B", _RATIO_TOL, False),
    ("wifi-loss-based-ranking",
     "In 802.11ac, Bic, NewReno and Scalable perform better than Hybla, H-TCP and HighSpeed (§V).",
     _all_better_measure(["bic", "newreno", "scalable"], ["hybla", "htcp", "highspeed"]),
     "each of the first three better than each of the last three; " + _BETTER_RULE,
     NO_PAPER_NUMBER, False),
    ("wifi-veno-beats-vegas-westwood",
     "In 802.11ac, Veno performs better than Vegas and Westwood (§V, §IV-B).",
     _all_better_measure(["veno"], ["vegas", "westwood"]), _BETTER_RULE, NO_PAPER_NUMBER, False),
    ("wifi-yeah-beats-illinois",
     "In 802.11ac, YeAH performs better than Illinois (§V; the summary of §IV-C says "
     "Illinois performs better).", _all_better_measure(["yeah"], ["illinois"]), _BETTER_RULE,
     NO_PAPER_NUMBER, False),
    ("lte-beats-wifi",
     "Every control but Scalable gives a higher throughput over LTE (RLC AM) than over "
     "802.11ac (§IV-A1 to §IV-C2; Bic, Hybla, NewReno, HighSpeed, H-TCP, Vegas, Veno, "
     "Westwood, Illinois, YeAH).", m_lte_beats_wifi,
     f"for each of them, mean goodput per flow over LTE AM > over 802.11ac by more than "
     f"{BETTER_TOL * 100:g} % (the lte/ part)", NO_PAPER_NUMBER, True),
    ("wifi-delay-vs-lte",
     "With 3000 B packets 802.11ac gives a lower delay than LTE (Scalable: about half, §IV-A6; "
     "Illinois §IV-C1; YeAH §IV-C2); with 1000 B packets LTE gives the lower delay (Illinois, "
     "YeAH).", m_wifi_delay_vs_lte,
     f"mean one-way delay 802.11ac / LTE AM below {1 - BETTER_TOL:g} at 3000 B for Scalable, "
     f"Illinois and YeAH, above {1 + BETTER_TOL:g} at 1000 B for Illinois and YeAH (the lte/ "
     "part); magnitude: Scalable's ratio at 3000 B", _RATIO_TOL, True),
]


def _finding(key: str, paper: str, measure: Callable[[pd.DataFrame], Measured], rule: str,
             tolerance: str, both_nets: bool, setting: str) -> Finding:
    if setting == LOADED_SETTING:
        key, paper = key + LOADED_SUFFIX, paper + " Checked in a saturated BSS (saturating flows)."
    return Finding(key, paper, _check(measure, setting, both_nets, tolerance), rule,
                   tolerance=tolerance)


#: The LTE comparisons have no loaded counterpart (the lte/ part runs the 1 Mbit/s flows only).
FINDINGS = ([_finding(*spec, PAPER_SETTING) for spec in _SPECS]
            + [_finding(*spec, LOADED_SETTING) for spec in _SPECS if not spec[5]])


def _paper_check(key: str) -> Callable[[pd.DataFrame], Verdict]:
    return next(f.check for f in FINDINGS if f.key == key)


check_size_higher_throughput = _paper_check("wifi-size-higher-throughput")
check_size_higher_delay = _paper_check("wifi-size-higher-delay")
check_size_higher_loss = _paper_check("wifi-size-higher-loss")
check_loss_based_ranking = _paper_check("wifi-loss-based-ranking")
check_veno_beats_vegas_westwood = _paper_check("wifi-veno-beats-vegas-westwood")
check_yeah_beats_illinois = _paper_check("wifi-yeah-beats-illinois")
check_lte_beats_wifi = _paper_check("lte-beats-wifi")
check_wifi_delay_vs_lte = _paper_check("wifi-delay-vs-lte")


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
        "<p><b>The load.</b> The paper offers each of the 14 stations 1 Mbit/s: 14 Mbit/s on a "
        "BSS whose PHY rate is 65 Mbit/s (VHT MCS 7, 20 MHz, one stream, long guard interval), "
        "so its flows do not saturate the BSS and the main sweep keeps them at 1 Mbit/s. Each "
        "verdict's setting gives that load as a share of the goodput the same BSS carries to 14 "
        "saturating flows (the <code>bulk/</code> part, measured in this run). At that load "
        "every control delivers its flow's rate and nothing queues, so the paper's differences "
        "between controls and sizes cannot appear; the paper's ns-3 runs lost throughput when "
        "the 14 connections opened at once (its §IV-A). Every 802.11ac finding is therefore "
        "checked a second time on the saturated BSS of the <code>bulk/</code> part (keys "
        "ending <code>@loaded</code>), where the controls do differ; each verdict states the "
        "setting it rests on. The paper gives values for three ratios only (H-TCP's delay and "
        "NewReno's loss ratio about twice at 3000 B, Scalable's delay over 802.11ac about half "
        "of LTE's at 3000 B): those are judged in magnitude, every other agreement is "
        "<i>direction only</i>.</p>"),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    aggregate_by=("cc", "net", "size", "group"),
    metrics=tuple(METRICS),
    table_rows=per_run_all,
    parts=(LTE_PART, BULK),
)
