"""Study ``iperf-lte`` (paper 000): Kar & Mishra, "Performance Analysis of TCP over LTE"
(Clemson University, 2020).

The paper runs iperf3 between a UE and a public iperf3 server over an emulated end-to-end LTE
network (NextEPC + OpenAirInterface on POWDER; §V-B, Figs. 20 and 21) and over Clemson's private
band-41 TDD network (§IV, §V-A): downlink (``-R``) and uplink, the TCP window ``-w`` at the
64 KB default, 1 MB, 2 MB and 4 MB; TCP CUBIC against Reno; and RTT samples over LTE against a
wired connection between the same hosts (Fig. 22). Its findings (§VI):

1. the LTE uplink is far slower than the downlink (62.2 kbit/s against 6.27 Mbit/s);
2. on the uplink, a larger window raises the bandwidth from 64 KB up to 2 MB (by 1.23 Mbit/s);
3. beyond 2 MB a larger window brings no further increase;
4. on the downlink the window makes no difference (5.7–5.9 Mbit/s for every window);
5. CUBIC performs better than Reno on LTE;
6. the LTE RTT varies far more than the wired RTT between the same hosts;
7. RTTs over a commercial LTE network and a commercial Wi-Fi network are similar, the Wi-Fi
   mean slightly smaller (§VI-B, Fig. 23).

celltcp's setting is in ``iperf-lte/scenario.toml``: one UE 300 m from a 20 MHz band-41 eNB
(TDD configuration 2, EPA fading), an iperf server 40 ms beyond the PGW, and ping probes to the
UE and to a wired host with about the same idle RTT, behind a 20 Mbit/s access link it shares
with web browsing (cross traffic, so that "LTE varies more" can fail). The checks grade their
verdicts against the paper's numbers (:data:`PAPER_DL` and the others): the uplink figures of
the paper come from OpenAirInterface's simulated RAN (§V-B), which no radio setting of a working
cell reproduces at 64 KB (:data:`PAPER_UPLINK_REASON`). Finding 4 depends on where the paper's
downlink bottleneck was (a public server in France, 5.7–5.9 Mbit/s whatever the window, i.e.
not the LTE cell): celltcp's cell has no such cap, so that check is expected to disagree, and
the report says so with the numbers.

Part ``wifi`` (``iperf-lte/wifi/``, finding 7): the paper names neither network of Fig. 23
beyond "commercial", so celltcp puts the main scenario's LTE cell beside a Wi-Fi BSS as a laptop
meets it at home or in an office (802.11ac, 80 MHz, Minstrel-HT, 10 m from the AP, the AP behind
a 100 Mbit/s access link and the same 40 ms of Internet to the server as the PGW), another user
browsing the web on each network, and pings from the server to a UE and to the laptop (no other
traffic of their own, as the paper's pings). Its check compares the mean ping RTTs; the paper
gives no number, so it is graded *direction only* at best.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import sweep_plots as sp
from ..report import Finding, Grade, Quantity, Verdict, graded, within
from . import MAIN, PART, Study, StudyFigure, part_dir, run_dir

WINDOW = "flow.0.window"
REVERSE = "flow.0.reverse"
CC = "flow.0.cc"
WINDOWS = ["64KB", "1MB", "2MB", "4MB"]
CCS = ["cubic", "newreno"]
DIRECTIONS = ["downlink", "uplink"]
#: Fixed colours: per congestion control, per direction, per path.
CC_COLORS = {"cubic": "#D55E00", "newreno": "#0072B2"}
DIR_COLORS = {"downlink": "#009E73", "uplink": "#CC79A7"}
SERIES = "direction, cc"
SERIES_COLORS = {"downlink, cubic": "#D55E00", "downlink, newreno": "#0072B2",
                 "uplink, cubic": "#E69F00", "uplink, newreno": "#56B4E9"}

#: Thresholds of the checks (documented in docs/studies.md).
UL_DL_RATIO_MAX = 0.5      # "much slower": at most half the downlink
GROWTH_MIN = 1.10          # "grows": at least +10 %
FLAT_TOL = 0.10            # "no increase": within +10 %
SPREAD_FACTOR = 5.0        # "much more variation": 5x the wired spread ...
SPREAD_MIN_MS = 5.0        # ... and at least 5 ms
MAGNITUDE_FACTOR = 3.0     # "agrees in magnitude": a ratio within x3 of the paper's

#: The paper's numbers (§VI; Figs. 20 and 21, iperf3's receiver lines of the downlink runs).
PAPER_UL_64KB = 62.2e3                 # uplink at the 64 KB default window
PAPER_DL_64KB_SENDER = 6.27e6          # downlink at 64 KB, as §VI quotes it (iperf3's sender line)
PAPER_UL_2MB = 1.23e6                  # "an increase of up to 1.23 Mbps" from 64 KB to 2 MB
PAPER_DL = {"64KB": 5.35e6, "1MB": 5.72e6, "2MB": 5.76e6, "4MB": 5.69e6}  # receiver, Fig. 21
PAPER_UL_DL_64KB = PAPER_UL_64KB / PAPER_DL_64KB_SENDER   # 0.0099
PAPER_UL_DL_2MB = PAPER_UL_2MB / PAPER_DL["2MB"]          # 0.21
#: Where the paper's uplink figures come from: OpenAirInterface's simulated RAN (§V-B, §VI-B).
PAPER_UPLINK_REASON = (
    "the paper's uplink is OpenAirInterface's simulated RAN (§V-B): 62.2 kbit/s with a 64 KB "
    "window means an RTT of about 8 s, and the paper gives no TDD configuration, power or "
    "channel that a working cell could reproduce; celltcp's 64 KB uplink is window-limited like "
    "its downlink")
#: Part ``wifi`` (paper 000, Fig. 23): its ping flows and the network each crosses.
WIFI_PART = "wifi"
RTT_FLOWS = {"rtt-lte": "LTE", "rtt-wifi": "Wi-Fi"}
NET_COLORS = {"LTE": "#D55E00", "Wi-Fi": "#0072B2"}
#: "similar values ... the average RTT for the WiFi network was slightly smaller" (§VI-B): the
#: Wi-Fi mean below LTE's, by at most this share of LTE's
SIMILAR_MAX = 0.25
WIFI_SETTING = ("part wifi: the main scenario's band-41 cell (UE 300 m) beside an 802.11ac AP "
                "(80 MHz, Minstrel-HT, laptop 10 m) behind a 100 Mbit/s access link, both 40 ms "
                "of Internet from the server; another UE and another station browse the web; "
                "the pinged hosts carry no other traffic")
SETTING = ("band-41 TDD configuration 2 (2 uplink subframes of 10), UE 300 m, 23 dBm against the "
           "eNB's 46 dBm, EPA fading, server 40 ms beyond the PGW")


def _is_true(v: Any) -> bool:
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return False
    return v is True or v == 1 or str(v).lower() == "true"


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Adds ``direction`` (downlink for iperf -R), ``window`` and ``cc`` columns, and for the
    rows of part ``wifi`` (no iperf: those columns "–") the ``network`` each ping crosses."""
    df = df.copy()
    if REVERSE in df.columns:
        df["direction"] = ["downlink" if _is_true(v) else "uplink" for v in df[REVERSE]]
    if WINDOW in df.columns:
        df["window"] = df[WINDOW].astype(str)
    if CC in df.columns:
        df["cc"] = df[CC].astype(str)
    if PART in df.columns:
        other = df[PART].fillna(MAIN) != MAIN
        for c in ("direction", "window", "cc"):
            if c in df.columns:
                df.loc[other, c] = "–"
        df["network"] = df["flow"].map(RTT_FLOWS)
    if "direction" in df.columns and "cc" in df.columns:
        df[SERIES] = df["direction"] + ", " + df["cc"]
    return df


def _iperf(df: pd.DataFrame) -> pd.DataFrame:
    d = prepare(df) if "direction" not in df.columns else df
    sel = d[d["flow"] == "iperf"]
    if sel.empty:
        raise ValueError("no rows for the iperf flow")
    return sel


def _mean_gp(d: pd.DataFrame, **eq: str) -> float:
    sel = d
    for k, v in eq.items():
        sel = sel[sel[k] == v]
    v = pd.to_numeric(sel["goodput_bps"], errors="coerce").dropna()
    if v.empty:
        raise ValueError(f"no goodput for {eq}")
    return float(v.mean())


def _windows(d: pd.DataFrame) -> list[str]:
    return [str(w) for w in sp.ordered(d["window"])]


def _mbps(x: float) -> str:
    return f"{x / 1e6:.2f} Mbit/s"


# --- the findings' checks ------------------------------------------------------------------


def _ratio_at(d: pd.DataFrame, w: str) -> float | None:
    if w not in set(d["window"]):
        return None
    return _mean_gp(d, direction="uplink", window=w) / _mean_gp(d, direction="downlink", window=w)


def check_uplink_slower(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    w = _windows(d)[-1]
    parts, ok = [], True
    for cc in sp.ordered(d["cc"]):
        ul = _mean_gp(d, direction="uplink", window=w, cc=cc)
        dl = _mean_gp(d, direction="downlink", window=w, cc=cc)
        ratio = ul / dl
        ok &= ratio <= UL_DL_RATIO_MAX
        parts.append(f"{cc}: uplink {_mbps(ul)} vs downlink {_mbps(dl)} (ratio {ratio:.2f})")
    r64, r2 = _ratio_at(d, "64KB"), _ratio_at(d, "2MB")
    numbers = [Quantity("uplink/downlink at 64 KB", r64, PAPER_UL_DL_64KB),
               Quantity("uplink/downlink at 2 MB", r2, PAPER_UL_DL_2MB)]
    mags = [within(r, p, MAGNITUDE_FACTOR) for r, p in ((r64, PAPER_UL_DL_64KB),
                                                        (r2, PAPER_UL_DL_2MB)) if r is not None]
    magnitude = bool(mags) and all(mags)
    text = f"window {w}: " + "; ".join(parts)
    if ok and not magnitude:
        text += (f". Magnitude: at 2 MB ×{r2:.2f} against the paper's ×{PAPER_UL_DL_2MB:.2f}"
                 if r2 is not None else ". Magnitude")
        text += (f"; at 64 KB ×{r64:.2f} against ×{PAPER_UL_DL_64KB:.4f}: " if r64 is not None
                 else ": ") + PAPER_UPLINK_REASON
    return Verdict(text, grade=graded(ok, magnitude), numbers=tuple(numbers),
                   tolerance=f"each ratio within ×{MAGNITUDE_FACTOR:g} of the paper's",
                   setting=SETTING)


def check_uplink_grows(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    if "64KB" not in set(d["window"]) or "2MB" not in set(d["window"]):
        raise ValueError("needs windows 64KB and 2MB")
    lo = _mean_gp(d, direction="uplink", window="64KB")
    hi = _mean_gp(d, direction="uplink", window="2MB")
    paper = PAPER_UL_2MB / PAPER_UL_64KB
    ok = hi >= GROWTH_MIN * lo
    magnitude = within(hi / lo, paper, MAGNITUDE_FACTOR)
    text = f"uplink {_mbps(lo)} at 64 KB, {_mbps(hi)} at 2 MB (×{hi / lo:.2f}, +{(hi - lo) / 1e6:.2f} Mbit/s)"
    if ok and not magnitude:
        text += f"; the paper's ×{paper:.1f} starts from its 62.2 kbit/s: " + PAPER_UPLINK_REASON
    return Verdict(text, grade=graded(ok, magnitude),
                   numbers=(Quantity("uplink at 64 KB", lo / 1e6, PAPER_UL_64KB / 1e6, unit="Mbit/s"),
                            Quantity("uplink at 2 MB", hi / 1e6, PAPER_UL_2MB / 1e6, unit="Mbit/s"),
                            Quantity("2 MB / 64 KB", hi / lo, paper)),
                   tolerance=f"the factor 2 MB / 64 KB within ×{MAGNITUDE_FACTOR:g} of the paper's",
                   setting=SETTING)


def check_no_gain_beyond_2mb(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    if "4MB" not in set(d["window"]) or "2MB" not in set(d["window"]):
        raise ValueError("needs windows 2MB and 4MB")
    parts, ok, magnitude, numbers = [], True, True, []
    for direction in DIRECTIONS:
        a = _mean_gp(d, direction=direction, window="2MB")
        b = _mean_gp(d, direction=direction, window="4MB")
        ok &= b <= (1 + FLAT_TOL) * a
        magnitude &= abs(b / a - 1) <= FLAT_TOL
        parts.append(f"{direction} {_mbps(a)} at 2 MB, {_mbps(b)} at 4 MB ({(b / a - 1) * 100:+.1f} %)")
        paper = (PAPER_DL["4MB"] / PAPER_DL["2MB"] - 1) * 100 if direction == "downlink" else None
        numbers.append(Quantity(f"{direction} 2 MB → 4 MB", (b / a - 1) * 100, paper, unit="%"))
    return Verdict("; ".join(parts), grade=graded(ok, magnitude), numbers=tuple(numbers),
                   tolerance=f"change within ±{FLAT_TOL * 100:g} % both ways (the paper: "
                             "downlink −1.2 %, uplink 'no further increase')",
                   setting=SETTING)


def check_downlink_flat(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    ws = _windows(d)
    g = {w: _mean_gp(d, direction="downlink", window=w) for w in ws}
    spread = max(g.values()) / min(g.values())
    paper_ws = [w for w in ws if w in PAPER_DL] or list(PAPER_DL)
    paper = max(PAPER_DL[w] for w in paper_ws) / min(PAPER_DL[w] for w in paper_ws)
    text = ", ".join(f"{w} {g[w] / 1e6:.2f}" for w in ws)
    ok = spread <= 1 + FLAT_TOL
    return Verdict(f"downlink Mbit/s by window: {text} (max/min ×{spread:.2f}); the paper's "
                   "downlink was capped outside the cell (a public iperf3 server in France, "
                   "5.4–5.8 Mbit/s whatever the window), celltcp's only by the window and the "
                   "cell", grade=graded(ok, ok),
                   numbers=(Quantity("downlink max/min over the windows", spread, paper),
                            Quantity(f"downlink at {ws[-1]}", g[ws[-1]] / 1e6,
                                     PAPER_DL.get(ws[-1], np.nan) / 1e6, unit="Mbit/s")),
                   tolerance=f"max/min ≤ {1 + FLAT_TOL:g} (the paper: ×{paper:.3f})",
                   setting=SETTING + "; no cap between the server and the PGW")


def check_cubic_beats_reno(df: pd.DataFrame) -> Verdict:
    d = _iperf(df)
    keys = ["direction", "window", "seed"]
    cub = d[d["cc"] == "cubic"].set_index(keys)["goodput_bps"]
    ren = d[d["cc"] == "newreno"].set_index(keys)["goodput_bps"]
    both = pd.concat({"cubic": cub, "newreno": ren}, axis=1).dropna()
    if both.empty:
        raise ValueError("no (direction, window, seed) run with both cubic and newreno")
    ratio = float(both["cubic"].sum() / both["newreno"].sum())
    wins = int((both["cubic"] > both["newreno"] * 1.005).sum())
    losses = int((both["newreno"] > both["cubic"] * 1.005).sum())
    return Verdict(f"CUBIC/Reno goodput over {len(both)} paired runs ×{ratio:.3f}; CUBIC ahead "
                   f"by > 0.5 % in {wins}, behind in {losses}, equal (window-limited) in "
                   f"{len(both) - wins - losses}", grade=graded(ratio > 1.0 and wins > losses),
                   numbers=(Quantity("CUBIC / Reno goodput", ratio),),
                   tolerance="the paper gives no number: direction only", setting=SETTING)


def _spread(d: pd.DataFrame, flow: str) -> np.ndarray:
    sel = d[d["flow"] == flow]
    if sel.empty:
        raise ValueError(f"no rows for flow {flow!r}")
    p95 = pd.to_numeric(sel["rtt_p95_ms"], errors="coerce").to_numpy(float)
    low = pd.to_numeric(sel["rtt_min_ms"], errors="coerce").to_numpy(float)
    spread: np.ndarray = p95 - low
    return spread


def check_rtt_variation(df: pd.DataFrame) -> Verdict:
    d = prepare(df)
    lte, wired = _spread(d, "ping-lte"), _spread(d, "ping-wired")
    lte_m, wired_m = float(np.nanmedian(lte)), float(np.nanmedian(wired))
    base_lte = float(np.nanmedian(pd.to_numeric(d.loc[d["flow"] == "ping-lte", "rtt_min_ms"])))
    base_w = float(np.nanmedian(pd.to_numeric(d.loc[d["flow"] == "ping-wired", "rtt_min_ms"])))
    ok = lte_m >= max(SPREAD_FACTOR * wired_m, SPREAD_MIN_MS)
    return Verdict(f"ping RTT p95 − min, median over runs: LTE {lte_m:.1f} ms, wired "
                   f"{wired_m:.2f} ms (minimum RTT LTE {base_lte:.1f} ms, wired {base_w:.1f} ms)",
                   grade=graded(ok),
                   numbers=(Quantity("LTE ping p95 − min", lte_m, unit="ms"),
                            Quantity("wired ping p95 − min", wired_m, unit="ms")),
                   tolerance="the paper gives no number (Fig. 22 only): direction only",
                   setting="wired path: 1 Gbit/s, then the host's 20 Mbit/s access link shared "
                           "with web browsing (NGMN pages, 0.5 s reading time)")


def _ping_rows(df: pd.DataFrame) -> pd.DataFrame:
    d = prepare(df) if "network" not in df.columns else df
    if PART not in d.columns or "network" not in d.columns:
        raise ValueError(f"no rows of part {WIFI_PART!r} (ping over LTE and Wi-Fi)")
    sel = d[(d[PART] == WIFI_PART) & d["network"].notna()]
    for net in RTT_FLOWS.values():
        if not (sel["network"] == net).any():
            raise ValueError(f"part {WIFI_PART!r} has no ping over {net}")
    return sel


def check_wifi_rtt(df: pd.DataFrame) -> Verdict:
    sel = _ping_rows(df)

    def stat(net: str, col: str) -> float:
        v = pd.to_numeric(sel.loc[sel["network"] == net, col], errors="coerce").dropna()
        if v.empty:
            raise ValueError(f"no {col} for the ping over {net}")
        return float(v.mean())

    lte, wifi = stat("LTE", "rtt_mean_ms"), stat("Wi-Fi", "rtt_mean_ms")
    ok = wifi < lte and (lte - wifi) <= SIMILAR_MAX * lte
    runs = int((sel["network"] == "LTE").sum())
    text = (f"ping RTT over {runs} runs, mean LTE {lte:.1f} ms, Wi-Fi {wifi:.1f} ms "
            f"(Wi-Fi {(wifi / lte - 1) * 100:+.1f} %); median LTE {stat('LTE', 'rtt_p50_ms'):.1f}, "
            f"Wi-Fi {stat('Wi-Fi', 'rtt_p50_ms'):.1f} ms; p95 LTE {stat('LTE', 'rtt_p95_ms'):.1f}, "
            f"Wi-Fi {stat('Wi-Fi', 'rtt_p95_ms'):.1f} ms; minimum LTE {stat('LTE', 'rtt_min_ms'):.1f}, "
            f"Wi-Fi {stat('Wi-Fi', 'rtt_min_ms'):.1f} ms")
    return Verdict(text, grade=graded(ok),
                   numbers=(Quantity("mean ping RTT over LTE", lte, unit="ms"),
                            Quantity("mean ping RTT over Wi-Fi", wifi, unit="ms"),
                            Quantity("Wi-Fi / LTE mean RTT", wifi / lte),
                            Quantity("p95 ping RTT over LTE", stat("LTE", "rtt_p95_ms"), unit="ms"),
                            Quantity("p95 ping RTT over Wi-Fi", stat("Wi-Fi", "rtt_p95_ms"), unit="ms")),
                   tolerance="the paper gives no number (Fig. 23 only): direction only",
                   setting=WIFI_SETTING)


FINDINGS = [
    Finding("uplink-slower",
            "The LTE uplink is much slower than the downlink: 62.2 kbit/s against 6.27 Mbit/s "
            "(§VI, Figs. 20 and 21).", check_uplink_slower,
            f"mean uplink goodput ≤ {UL_DL_RATIO_MAX} × downlink at the largest window, for "
            "each congestion control"),
    Finding("uplink-window-grows",
            "On the uplink, a larger TCP window raises the bandwidth, by up to 1.23 Mbit/s "
            "from the 64 KB default to 2 MB (§VI).", check_uplink_grows,
            f"mean uplink goodput at 2 MB ≥ {GROWTH_MIN} × at 64 KB"),
    Finding("no-gain-beyond-2mb",
            "Beyond 2 MB, a larger window does not increase the bandwidth (§VI).",
            check_no_gain_beyond_2mb,
            f"mean goodput at 4 MB ≤ {1 + FLAT_TOL} × at 2 MB, on the uplink and on the downlink"),
    Finding("downlink-window-flat",
            "On the downlink, changing the window (64 KB, 1 MB, 2 MB, 4 MB) does not change "
            "the bandwidth: 5.7–5.9 Mbit/s (§VI, Fig. 21).", check_downlink_flat,
            f"max/min of the mean downlink goodput over the windows ≤ {1 + FLAT_TOL}"),
    Finding("cubic-better",
            "TCP CUBIC performs better than TCP Reno on LTE (§VI).", check_cubic_beats_reno,
            "paired by direction, window and seed: total CUBIC goodput > total NewReno goodput, "
            "and CUBIC ahead in more pairs than behind"),
    Finding("lte-rtt-varies",
            "RTT samples over LTE vary much more than over a wired connection between the "
            "same hosts (§VI, Fig. 22).", check_rtt_variation,
            f"median over runs of the ping RTT spread (p95 − min) on LTE ≥ "
            f"max({SPREAD_FACTOR:g} × the wired spread, {SPREAD_MIN_MS:g} ms)"),
    Finding("wifi-rtt-similar",
            "RTTs over a commercial LTE network and a commercial Wi-Fi network are similar, the "
            "Wi-Fi mean slightly smaller (§VI-B, Fig. 23).", check_wifi_rtt,
            f"part wifi: mean ping RTT over Wi-Fi < over LTE, and LTE − Wi-Fi ≤ "
            f"{SIMILAR_MAX * 100:g} % of LTE's (similar)"),
]


# --- figures -------------------------------------------------------------------------------


def figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    d = prepare(df)
    ip = d[d["flow"] == "iperf"]
    ws = _windows(ip)
    out = [
        StudyFigure(
            "goodput_window", "Goodput against the TCP window",
            "iperf goodput against the window (-w), downlink (-R) and uplink, CUBIC and NewReno; "
            "mean over seeds with 95 % t-intervals (paper: Figs. 20 and 21).",
            sp.lines(ip, "window", "goodput_bps", SERIES, x_order=ws,
                     group_order=list(SERIES_COLORS), colors=SERIES_COLORS,
                     title="iperf goodput, band 41 TDD (config 2), 20 MHz")),
        StudyFigure(
            "goodput_direction", "Uplink against downlink",
            "CUBIC goodput per window, downlink against uplink (grouped bars, 95 % t-interval "
            "whiskers).",
            sp.bars(ip, "window", "goodput_bps", "direction", where={"cc": "cubic"}, x_order=ws,
                    group_order=DIRECTIONS, colors=DIR_COLORS, title="CUBIC: downlink vs uplink")),
        StudyFigure(
            "rtt_window", "TCP RTT against the window",
            "Mean TCP RTT of the iperf flow over the runs of each window (box plots): a window "
            "beyond the path's BDP only fills the RLC/PDCP buffers.",
            sp.boxes(ip, "window", "rtt_mean_ms", "direction", x_order=ws,
                     group_order=DIRECTIONS, colors=DIR_COLORS)),
    ]
    # RTT distributions: ping over LTE (light and heavy load) against the wired path.
    try:
        light = run_dir(sweep_dir, d, window=ws[0], direction="downlink", cc="cubic")
        heavy = run_dir(sweep_dir, d, window=ws[-1], direction="downlink", cc="cubic")
        out.append(StudyFigure(
            "rtt_cdf", "RTT over LTE and over a wired path",
            f"CDF of ping RTT samples (every 23 ms) to the UE over LTE, while the downlink iperf "
            f"runs with a {ws[0]} and a {ws[-1]} window, and to a wired host with about the same "
            "idle RTT (paper: Fig. 22).",
            sp.sample_cdf({f"LTE, iperf -w {ws[0]}": (light, "ping-lte"),
                           f"LTE, iperf -w {ws[-1]}": (heavy, "ping-lte"),
                           "wired": (light, "ping-wired")}, "ping", "rtt_ms",
                          colors={f"LTE, iperf -w {ws[0]}": "#009E73",
                                  f"LTE, iperf -w {ws[-1]}": "#D55E00", "wired": "#000000"},
                          logx=True, title="ping RTT, LTE vs wired")))
        runs = {f"{cc}, -w {w}": run_dir(sweep_dir, d, window=w, direction="downlink", cc=cc)
                for w in (ws[0], ws[-1]) for cc in CCS if ((ip["window"] == w) & (ip["cc"] == cc)).any()}
        out.append(StudyFigure(
            "traces_downlink", "cwnd and goodput over time",
            "Downlink cwnd and goodput of the first seed's runs, CUBIC and NewReno with the "
            "smallest and largest window, side by side.",
            sp.traces(runs, flows=["iperf"], rows=("cwnd", "throughput"))))
    except (KeyError, FileNotFoundError):
        pass  # run directories not available (e.g. a table loaded on its own)
    out += wifi_figures(d, sweep_dir)
    return out


def wifi_figures(d: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    """Part ``wifi`` (Fig. 23): the per-run ping RTT statistics per network, and the CDF of the
    first seed's echo replies over each network."""
    try:
        pings = _ping_rows(d)
    except ValueError:
        return []
    nets = list(RTT_FLOWS.values())
    long = pd.concat([pings.assign(statistic=name, rtt_ms=pd.to_numeric(pings[col], errors="coerce"))
                      for name, col in (("mean", "rtt_mean_ms"), ("median", "rtt_p50_ms"),
                                        ("p95", "rtt_p95_ms"))], ignore_index=True)
    out = [StudyFigure(
        "rtt_wifi_box", "Ping RTT over LTE and Wi-Fi, per run",
        "Mean, median and 95th percentile of the ping RTT (every 23 ms, from the server) of each "
        "run of part wifi, over the LTE cell and over the Wi-Fi BSS (box plots over the seeds; "
        "paper: Fig. 23, commercial LTE against commercial Wi-Fi).",
        sp.boxes(long, "statistic", "rtt_ms", "network", x_order=["mean", "median", "p95"],
                 group_order=nets, colors=NET_COLORS, title="ping RTT per run, LTE vs Wi-Fi"))]
    try:
        rows = d[d[PART] == WIFI_PART]
        run = run_dir(part_dir(sweep_dir, WIFI_PART), rows)
        out.append(StudyFigure(
            "rtt_wifi_cdf", "Ping RTT over LTE and Wi-Fi",
            "CDF of the ping RTT samples (every 23 ms, from the same server) to a UE of the LTE "
            "cell and to a laptop on the Wi-Fi BSS, first seed of part wifi (paper: Fig. 23).",
            sp.sample_cdf({net: (run, flow) for flow, net in RTT_FLOWS.items()}, "ping", "rtt_ms",
                          colors=NET_COLORS, title="ping RTT, LTE vs Wi-Fi")))
    except (KeyError, FileNotFoundError):
        pass
    return out


STUDY = Study(
    name="iperf-lte",
    paper_id="000",
    summary="iperf over a TDD band-41 LTE cell: window 64 KB..4 MB, uplink vs downlink, "
            "CUBIC vs Reno, RTT over LTE vs wired and vs Wi-Fi (paper 000)",
    paper="S. Kar, P. K. Mishra, \"Performance Analysis of TCP over LTE\", Clemson University "
          "project report, 2020",
    intro_html=(
        "<p>The paper measures TCP with iperf3 over LTE networks (Clemson's private band-41 "
        "network and an emulated end-to-end network: NextEPC and OpenAirInterface): uplink and "
        "downlink (<code>-R</code>), windows (<code>-w</code>) of 64 KB, 1 MB, 2 MB and 4 MB, "
        "CUBIC against Reno, and RTT samples over LTE against a wired path.</p>"
        "<p>celltcp runs one UE 300 m from a 20 MHz TDD eNB at 2.6 GHz (band 41, "
        "uplink/downlink configuration 2, EPA fading, RLC AM), an iperf server 40 ms beyond the "
        "PGW, and ping probes (every 23 ms) to the UE and to a wired host whose idle RTT is about "
        "the LTE path's. The wired host sits behind a 20 Mbit/s access link that it shares "
        "with web browsing (NGMN pages every 0.5 s on average), so the wired RTT varies as a "
        "real one does and the comparison with LTE can fail. The sweep varies the window, the "
        "direction and the congestion control over several seeds (shadowing and fading "
        "draws).</p>"
        "<p><b>What celltcp reproduces, what not, and why.</b> The uplink is slower than the "
        "downlink once the window no longer limits both (4 MB: about a fifth of the downlink, "
        "the TDD configuration's 2 uplink subframes of 10 and the UE's 23 dBm against the "
        "eNB's 46), and at 2 MB the ratio is the paper's own (its 1.23 Mbit/s uplink against "
        "5.76 Mbit/s downlink, 0.21); no gain beyond 2 MB is reproduced in magnitude. The "
        "paper's 62.2 kbit/s at the 64 KB default is not: its uplink figures come from "
        "OpenAirInterface's simulated RAN (eNB and UE in software on one POWDER node), whose "
        "uplink at 64 KB implies an RTT of about 8 s; the paper gives no TDD configuration, "
        "power or channel for it and no working radio setting gives it, so those findings are "
        "graded <i>direction only</i>. The flat downlink is not reproduced: the paper's was "
        "capped at 5.4&ndash;5.8 Mbit/s by a public iperf3 server in France, celltcp's grows "
        "with the window to the cell's capacity. CUBIC against Reno: the paper gives no "
        "number, and in celltcp both are window-limited in most runs. The LTE RTT varies far "
        "more than the wired one under cross traffic (its large-window runs fill the RLC and "
        "PDCP buffers); the paper shows this only as a figure, so direction only.</p>"
        "<p><b>LTE against Wi-Fi (Fig. 23, part <code>wifi</code>).</b> The paper compares ping "
        "RTTs over a commercial LTE network and a commercial Wi-Fi network: similar values, the "
        "Wi-Fi mean slightly smaller. It gives neither network's setting, so celltcp puts the "
        "main scenario's cell beside an 802.11ac BSS as a laptop meets it at home (80 MHz, "
        "Minstrel-HT, 10 m from the AP, a 100 Mbit/s access link and the same 40 ms of Internet "
        "as the PGW), with another user browsing the web on each network; the server pings a "
        "UE and the laptop every 23 ms. The verdict, the per-run box plots and the CDF of the "
        "samples are below; the paper gives no number, so at best direction only.</p>"),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    aggregate_by=("direction", "window", "cc", "flow"),
    metrics=("goodput_bps", "rtt_mean_ms", "rtt_p95_ms", "retransmitted_segments"),
    table_flows=("iperf", "ping-lte", "ping-wired", *RTT_FLOWS),
    parts=(WIFI_PART,),
)
