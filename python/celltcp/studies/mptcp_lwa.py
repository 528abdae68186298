"""Study ``mptcp-lwa`` (paper 002): Pasca, Sen, Reddy, Tamma & Franklin, "A Framework for
Integrating MPTCP over LWA — A Testbed Evaluation" (WiNTECH '18).

The paper's testbed (§4, Table 1): an OpenAirInterface eNB (band 7, 5 MHz = 25 PRBs, round-robin
MAC scheduler) with LWA to an off-the-shelf 802.11g AP, a UE on both, and an Apache file server
behind an 80 ms netem delay; MPTCP with OLIA, the lowest-RTT-first scheduler and one subflow per
address pair. It downloads files of 16, 32 and 64 MB under random loss at the server (0, 10⁻⁴,
10⁻³, 10⁻², "network congestion", §5.1), with 2 or 4 Wi-Fi stations each sending 1.5 Mbit/s of
UDP uplink ("channel contention", §5.2), and both (§5.3), and compares LWA (one TCP connection
over a bearer split at PDCP, Wi-Fi downlink only), MPTCP (a subflow per interface) and MLWA
(MPTCP with its LTE subflow over LWA). Its conclusions (§6):

1. under high network congestion MPTCP is the best solution (Fig. 4);
2. LWA fails to aggregate the link capacities when the network is congested (Figs. 4, 5);
3. LWA suits small downloads (Figs. 5, 6);
4. under high contention LWA improves its own performance and lowers the channel's busy time,
   to the benefit of every Wi-Fi user (Figs. 6b, 7, 8b);
5. MLWA is robust: the best when losses and contention are both high (Fig. 8a).

Two further statements with numbers or a trend the checks can read: §5.1.2, the LTE:Wi-Fi packet
ratio of the 64 MB download at 10⁻⁴ is 1:4 for LWA and 1:27 for MPTCP; and §5.1.1, as the loss
grows the architectures end up performing alike.

celltcp runs every mode as a download from the server: ``LTE only`` (to the UE's LTE address),
``Wi-Fi only`` (to a Wi-Fi-only station beside it), ``MPTCP``, and LWA and MLWA once the ``lwa``
branch provides them. The main sweep is §5.1 (no contention), the part ``contention/`` is §5.2
and §5.3. A check whose modes are not in the results says *not evaluated* and why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .. import sweep_plots as sp
from ..report import Finding, Quantity, Verdict, graded, within
from . import MAIN, PART, Study, StudyFigure, part_dir

#: the part with Wi-Fi contention (§5.2, §5.3), and the two with the UE's bearer split by LWA
CONTENTION = "contention"
LWA_PART = "lwa"
LWA_CONTENTION = "lwa-contention"
LTE, WIFI, LWA, MPTCP, MLWA = "LTE only", "Wi-Fi only", "LWA", "MPTCP", "MLWA"
MODES = [LTE, WIFI, LWA, MPTCP, MLWA]
MODE_COLORS = {LTE: "#0072B2", WIFI: "#009E73", LWA: "#E69F00", MPTCP: "#D55E00", MLWA: "#CC79A7"}
#: the aggregation architectures the paper compares (its findings need them)
PAPER_MODES = [LWA, MPTCP, MLWA]
#: why LWA and MLWA may be missing
NO_LWA = ("LWA and MLWA are not in the results: the LWA bearer (issue 15 item 2, branch lwa) "
          "has not landed in this build")
#: "ahead" / "alike" margins on means over seeds
TOL = 0.05
#: the paper's §5.1.2 LTE:Wi-Fi packet ratios (64 MB, 10⁻⁴ loss)
PAPER_RATIO = {LWA: 1 / 4, MPTCP: 1 / 27}
#: a contention level counts as "high" from this many stations on
HIGH = 4
DL = "dl"
#: the summary figures' style (sweep_plots')
_STYLE = cast(Any, sp._STYLE)


def _missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, (str, list, tuple, dict, np.ndarray)):
        return False
    return bool(pd.isna(v))


def _mode(row: pd.Series) -> str:
    to = str(row.get("flow.dl.to", "ue"))
    lwa = row.get(PART) in (LWA_PART, LWA_CONTENTION)
    mp = row.get("flow.dl.mptcp", False)
    mptcp = not (_missing(mp) or mp is False or str(mp).lower() in ("false", "none", ""))
    if to not in ("ue", "nan", "None", "<NA>"):
        return WIFI
    if lwa:
        return MLWA if mptcp else LWA
    return MPTCP if mptcp else LTE


def _loss(v: Any) -> float:
    """The forward (data) loss probability of the ``link.backhaul.loss`` column."""
    if _missing(v):
        return 0.0
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v)
    try:
        d = json.loads(s)
    except ValueError:
        return float(s)
    if isinstance(d, dict):
        f: Any = d.get("forward", d.get("p", 0.0))
        return float(f["p"] if isinstance(f, dict) else f)
    return float(d)


def _size_mb(v: Any) -> int:
    s = str(v).strip().upper()
    for unit, f in (("MB", 1), ("KB", 1 / 1024), ("B", 1 / 1024 ** 2)):
        if s.endswith(unit):
            return int(round(float(s[: -len(unit)]) * f))
    return int(round(float(s) / 1024 ** 2))


def _contention(v: Any) -> int:
    if _missing(v):
        return 0
    names = json.loads(v) if isinstance(v, str) else list(v)
    return sum(1 for n in names if str(n).startswith("c"))


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """The download's rows with ``mode``, ``loss`` (forward probability), ``size_mb``,
    ``contention`` (UDP stations in the BSS), ``download_s`` (completion time, NaN when the
    download did not finish within the run) and ``throughput_bps`` (bytes delivered over the
    active time: the file size over the download time when it finished)."""
    d = df[df["flow"] == DL].copy() if "flow" in df.columns else df.copy()
    if PART not in d.columns:
        d[PART] = MAIN
    d[PART] = d[PART].fillna(MAIN)
    d["mode"] = [_mode(r) for _, r in d.iterrows()]
    d["loss"] = [_loss(v) for v in d.get("link.backhaul.loss", pd.Series(0.0, index=d.index))]
    if "flow.dl.bytes" in d.columns:
        d["size_mb"] = [_size_mb(v) for v in d["flow.dl.bytes"]]
    col = d["wifi.bss.stations"] if "wifi.bss.stations" in d.columns else pd.Series(None, index=d.index)
    d["contention"] = [_contention(v) for v in col]
    done = d["completed"].astype(bool) if "completed" in d.columns else pd.Series(True, index=d.index)
    d["download_s"] = pd.to_numeric(d["completion_time_s"], errors="coerce").where(done)
    d["throughput_bps"] = pd.to_numeric(d["goodput_bps"], errors="coerce")
    return d


def _run_path(out: Path, row: pd.Series) -> Path:
    part = row.get(PART, MAIN)
    part = MAIN if not isinstance(part, str) else part
    return part_dir(out, part) / "runs" / str(row["run_id"])


def enrich(table: pd.DataFrame, out: Path) -> pd.DataFrame:
    """Adds, per run (on the download's row): ``busy`` (the Wi-Fi channel's busy fraction from the
    start to the end of the download, or of the run), ``lte_bytes`` and ``wifi_bytes`` (data
    bytes the server sent towards the UE's LTE and Wi-Fi addresses, retransmissions included:
    the LTE:Wi-Fi packet ratio's terms)."""
    t = table.copy()
    for c in ("busy", "lte_bytes", "wifi_bytes"):
        t[c] = np.nan
    for i, row in t.iterrows():
        if row.get("flow") != DL:
            continue
        rd = _run_path(Path(out), row)
        try:
            summary = json.loads((rd / "summary.json").read_text())
        except (OSError, ValueError):
            continue
        end = row.get("completion_time_s")
        end = float(end) if end is not None and np.isfinite(float(end)) else None
        try:
            bss = pd.read_parquet(rd / "timeseries" / "wifi_bss.parquet")
            sel = bss if end is None else bss[bss["time_s"] <= end + 0.1]
            t.at[i, "busy"] = float(sel["busy_fraction"].mean()) if not sel.empty else np.nan
        except OSError:
            t.at[i, "busy"] = summary.get("wifi", [{}])[0].get("channel_busy_fraction", np.nan)
        devices = {ifc["address"]: ifc["device"] for n in summary.get("nodes", [])
                   for ifc in n.get("interfaces", [])}
        flow = next((f for f in summary.get("flows", []) if f.get("name") == DL), None)
        if flow is None:
            continue
        lte = wifi = 0.0
        subs = (flow.get("mptcp") or {}).get("subflows")
        legs = next((u.get("lwa") for u in (summary.get("lte") or {}).get("ues", [])
                     if u.get("lwa")), None)
        if subs:
            for s in subs:
                dev = devices.get(str(s["remote"]).split(":")[0])
                if dev == "lte" and legs:  # MLWA: the LTE subflow over the split bearer
                    lte += float(legs["lte"]["bytes"])
                    wifi += float(legs["wifi"]["bytes"])
                elif dev == "lte":
                    lte += float(s["bytes_sent"])
                elif dev == "wifi":
                    wifi += float(s["bytes_sent"])
        elif legs:  # LWA: the PDCP PDUs steered to each leg
            lte, wifi = float(legs["lte"]["bytes"]), float(legs["wifi"]["bytes"])
        else:
            dev = "wifi" if str(row.get("flow.dl.to", "ue")) != "ue" else "lte"
            lte, wifi = (float(flow["bytes_sent"]), 0.0) if dev == "lte" else (0.0, float(flow["bytes_sent"]))
        t.at[i, "lte_bytes"], t.at[i, "wifi_bytes"] = lte, wifi
    return t


# ---------------------------------------------------------------------------------------------
# checks


def _d(df: pd.DataFrame) -> pd.DataFrame:
    return df if "mode" in df.columns else prepare(df)


def _need_modes(d: pd.DataFrame, modes: list[str]) -> None:
    missing = [m for m in modes if m not in set(d["mode"])]
    if missing:
        if set(missing) & {LWA, MLWA}:
            raise ValueError(f"needs {', '.join(missing)}: {NO_LWA}")
        raise ValueError(f"no {', '.join(missing)} runs")


def _means(d: pd.DataFrame, metric: str, **eq: Any) -> pd.Series:
    sel = d
    for k, v in eq.items():
        sel = sel[sel[k] == v]
    if sel.empty:
        raise ValueError(f"no runs with {eq}")
    return sel.groupby("mode")[metric].mean()


def _mbit(v: float) -> str:
    return f"{v / 1e6:.2f}"


def _main(df: pd.DataFrame) -> pd.DataFrame:
    d = _d(df)
    return d[d["contention"] == 0]


def check_mptcp_best_under_congestion(df: pd.DataFrame) -> Verdict:
    d = _main(df)
    _need_modes(d, PAPER_MODES)
    loss = d["loss"].max()
    if loss <= 0:
        raise ValueError("no runs with loss")
    m = _means(d, "throughput_bps", loss=loss)
    others = {k: v for k, v in m.items() if k in PAPER_MODES and k != MPTCP}
    best = max(others.values())
    text = (f"throughput at loss {loss:g}, mean over file sizes and seeds (Mbit/s): "
            + ", ".join(f"{k} {_mbit(m[k])}" for k in PAPER_MODES))
    return Verdict(text, grade=graded(bool(m[MPTCP] >= best * (1 - TOL))),
                   numbers=(Quantity("MPTCP / best of LWA, MLWA throughput", m[MPTCP] / best,
                                     paper="> 1 (Fig. 4)"),),
                   setting=f"no contention, loss {loss:g}, all file sizes")


def check_lwa_fails_under_congestion(df: pd.DataFrame) -> Verdict:
    d = _main(df)
    _need_modes(d, [LWA, LTE, WIFI])
    loss = d["loss"].max()
    if loss <= 0:
        raise ValueError("no runs with loss")
    m = _means(d, "throughput_bps", loss=loss)
    best = max(m[LTE], m[WIFI])
    text = (f"throughput at loss {loss:g} (Mbit/s): LWA {_mbit(m[LWA])}, LTE only {_mbit(m[LTE])}, "
            f"Wi-Fi only {_mbit(m[WIFI])} (LWA / best single path {m[LWA] / best:.2f})")
    return Verdict(text, grade=graded(bool(m[LWA] <= best * (1 + TOL))),
                   numbers=(Quantity("LWA / best single-path throughput", m[LWA] / best,
                                     paper="≈ 1 (Fig. 4)"),),
                   setting=f"no contention, loss {loss:g}, all file sizes")


def check_lwa_small_files(df: pd.DataFrame) -> Verdict:
    d = _main(df)
    _need_modes(d, [LWA, MPTCP])
    d = d[d["loss"] == d["loss"].min()]
    sizes = sorted(set(d["size_mb"]))
    if len(sizes) < 2:
        raise ValueError("needs two file sizes")
    ratios = []
    for s in sizes:
        m = _means(d, "download_s", size_mb=s)
        ratios.append(m[MPTCP] / m[LWA])
    text = ("download time MPTCP / LWA without loss: "
            + ", ".join(f"{s} MB {r:.2f}" for s, r in zip(sizes, ratios)))
    return Verdict(text, grade=graded(bool(ratios[0] > 1 and ratios[0] >= ratios[-1])),
                   numbers=(Quantity(f"MPTCP / LWA download time, {sizes[0]} MB", ratios[0],
                                     paper="> 1 (Fig. 6a)"),),
                   setting="no contention, no loss")


def check_lwa_relieves_contention(df: pd.DataFrame) -> Verdict:
    d = _d(df)
    d = d[(d["contention"] >= HIGH) & (d["loss"] == 0)]
    _need_modes(d, [LWA, MPTCP])
    t = _means(d, "download_s")
    b = _means(d, "busy")
    text = (f"high contention ({HIGH} stations), no loss, mean over file sizes: download LWA "
            f"{t[LWA]:.1f} s vs MPTCP {t[MPTCP]:.1f} s; channel busy {b[LWA] * 100:.0f} % vs "
            f"{b[MPTCP] * 100:.0f} %")
    return Verdict(text, grade=graded(bool(t[LWA] < t[MPTCP] and b[LWA] < b[MPTCP])),
                   numbers=(Quantity("LWA / MPTCP download time", t[LWA] / t[MPTCP], paper="< 1 (Fig. 6b)"),
                            Quantity("LWA / MPTCP channel busy time", b[LWA] / b[MPTCP], paper="< 1 (Fig. 7b)")),
                   setting=f"{HIGH} stations × 1.5 Mbit/s UDP up, no loss")


def check_mlwa_robust(df: pd.DataFrame) -> Verdict:
    d = _d(df)
    d = d[d["contention"] >= HIGH]
    _need_modes(d, PAPER_MODES)
    loss = d["loss"].max()
    if loss <= 0:
        raise ValueError("no high-contention runs with loss")
    m = _means(d, "download_s", loss=loss)
    text = (f"high contention, loss {loss:g}, download time (s): "
            + ", ".join(f"{k} {m[k]:.1f}" for k in PAPER_MODES))
    best = min(m[LWA], m[MPTCP])
    return Verdict(text, grade=graded(bool(m[MLWA] <= best * (1 + TOL))),
                   numbers=(Quantity("MLWA / best of LWA, MPTCP download time", m[MLWA] / best,
                                     paper="< 1 (Fig. 8a)"),),
                   setting=f"{HIGH} stations, loss {loss:g}")


def _ratio_text(r: float) -> str:
    return "all on Wi-Fi" if r == 0 else ("all on LTE" if not np.isfinite(r) else f"1:{1 / r:.1f}")


def check_mptcp_packet_ratio(df: pd.DataFrame) -> Verdict:
    d = _main(df)
    _need_modes(d, [MPTCP])
    d = d[(d["mode"] == MPTCP) & (d["loss"] > 0)]
    if d.empty:
        raise ValueError("no MPTCP runs with loss")
    loss = d["loss"].min()
    size = d["size_mb"].max()
    sel = d[(d["loss"] == loss) & (d["size_mb"] == size)]
    lte, wifi = sel["lte_bytes"].sum(), sel["wifi_bytes"].sum()
    if not wifi > 0:
        raise ValueError("no MPTCP bytes on Wi-Fi")
    r = lte / wifi
    paper = PAPER_RATIO[MPTCP]
    text = (f"MPTCP, {size} MB at loss {loss:g}: LTE:Wi-Fi {_ratio_text(r)} (paper 1:27); "
            f"LTE share {lte / (lte + wifi) * 100:.0f} % (paper {paper / (1 + paper) * 100:.1f} %)")
    numbers = [Quantity("MPTCP LTE:Wi-Fi data ratio", r, paper=paper)]
    lwa = _main(df)
    lwa = lwa[(lwa["mode"] == LWA) & (lwa["loss"] == loss) & (lwa["size_mb"] == size)]
    if not lwa.empty and lwa["wifi_bytes"].sum() > 0:
        rl = lwa["lte_bytes"].sum() / lwa["wifi_bytes"].sum()
        numbers.append(Quantity("LWA LTE:Wi-Fi PDU bytes ratio", rl, paper=PAPER_RATIO[LWA]))
        text += f"; LWA {_ratio_text(rl)} (paper 1:4)"
    # direction: more skewed to Wi-Fi than the paper's LWA (1:4); magnitude: within ×2 of 1:27
    return Verdict(text, grade=graded(bool(r < PAPER_RATIO[LWA]), within(r, paper, 2) if r > 0 else False),
                   numbers=tuple(numbers),
                   tolerance="ratio within ×2 of the paper's 1:27 (0.037)",
                   setting=f"no contention, {size} MB, loss {loss:g}")


def check_modes_converge(df: pd.DataFrame) -> Verdict:
    d = _main(df)
    modes = [m for m in PAPER_MODES if m in set(d["mode"])]
    if len(modes) < 2:
        raise ValueError(f"needs two of {', '.join(PAPER_MODES)}: {NO_LWA}")
    lo, hi = d["loss"].min(), d["loss"].max()
    if lo == hi:
        raise ValueError("needs two loss rates")
    spread = []
    for loss in (lo, hi):
        m = _means(d[d["mode"].isin(modes)], "throughput_bps", loss=loss)
        spread.append(m.max() / m.min())
    text = (f"spread (max/min mean throughput) of {', '.join(modes)}: {spread[0]:.2f} at loss "
            f"{lo:g}, {spread[1]:.2f} at {hi:g}")
    return Verdict(text, grade=graded(bool(spread[1] < spread[0])),
                   numbers=(Quantity(f"max/min throughput at {hi:g}", spread[1], paper="≈ 1 (Fig. 4)"),),
                   setting="no contention, all file sizes")


def check_mptcp_suffers_contention(df: pd.DataFrame) -> Verdict:
    d = _d(df)
    d = d[(d["contention"] > 0) & (d["loss"] == 0)]
    _need_modes(d, [MPTCP])
    levels = sorted(set(d["contention"]))
    if len(levels) < 2:
        raise ValueError("needs low and high contention runs")
    lo, hi = levels[0], levels[-1]
    rows = []
    for mode in [m for m in (MPTCP, LTE, LWA) if m in set(d["mode"])]:
        a = _means(d[d["mode"] == mode], "download_s", contention=lo)[mode]
        b = _means(d[d["mode"] == mode], "download_s", contention=hi)[mode]
        rows.append((mode, a, b))
    text = (f"mean download time (s) with {lo} → {hi} contending stations, no loss: "
            + ", ".join(f"{m} {a:.1f} → {b:.1f} ({(b / a - 1) * 100:+.0f} %)" for m, a, b in rows))
    _, a, b = rows[0]
    return Verdict(text, grade=graded(bool(b > a * (1 + TOL))),
                   numbers=(Quantity(f"MPTCP download time, {hi} / {lo} stations", b / a,
                                     paper="> 1 (Figs. 6a, 6b)"),),
                   setting="no loss, all file sizes")


FINDINGS = [
    Finding("mptcp-best-under-congestion",
            "(i) Under high network congestion MPTCP handles the losses best: the highest "
            "throughput of LWA, MPTCP and MLWA (§5.1.1, Fig. 4, at 10⁻²; the paper gives the "
            "values in the figure only).", check_mptcp_best_under_congestion,
            f"at the highest loss, MPTCP's mean throughput ≥ (1 − {TOL:g}) × the best of LWA and MLWA"),
    Finding("lwa-fails-under-congestion",
            "(ii) LWA fails to aggregate the link capacities when the network is congested: one "
            "congestion window for both links (§5.1.1, Figs. 4, 5a).",
            check_lwa_fails_under_congestion,
            f"at the highest loss, LWA's mean throughput ≤ (1 + {TOL:g}) × the better single path"),
    Finding("lwa-small-files",
            "(iii) LWA is best suited to small downloads (§5.1.2, §6; Fig. 6).",
            check_lwa_small_files,
            "without loss, MPTCP's download time / LWA's > 1 for the smallest file, and no "
            "smaller for the smallest file than for the largest"),
    Finding("lwa-relieves-contention",
            "(iv) Under high Wi-Fi contention LWA does better than MPTCP and lowers the channel's "
            "busy time, to the benefit of every Wi-Fi user: its TCP ACKs go up on LTE (§5.2, "
            "Figs. 6b, 7b).", check_lwa_relieves_contention,
            f"{HIGH} contending stations, no loss: LWA's mean download time and channel busy "
            "fraction both below MPTCP's"),
    Finding("mlwa-robust",
            "(v) MLWA is robust: with high contention and losses it does at least as well as LWA "
            "and MPTCP (§5.3, Fig. 8a, 32 MB).", check_mlwa_robust,
            f"{HIGH} stations at the highest loss: MLWA's mean download time ≤ (1 + {TOL:g}) × "
            "the better of LWA and MPTCP"),
    Finding("mptcp-packet-ratio",
            "MPTCP sends almost everything over Wi-Fi: LTE:Wi-Fi packet ratio 1:27 (LWA 1:4) for "
            "the 64 MB download at 10⁻⁴ (§5.1.2, Fig. 5).", check_mptcp_packet_ratio,
            "direction: MPTCP's LTE:Wi-Fi ratio of data bytes sent (largest file, lowest non-zero "
            "loss) more skewed to Wi-Fi than the paper's LWA ratio 1:4; magnitude: within ×2 of "
            "1:27"),
    Finding("mptcp-suffers-contention",
            "MPTCP does well under low Wi-Fi contention and poorly under high contention: its "
            "TCP ACKs go up over the contended Wi-Fi (§5.2.1, Fig. 6).",
            check_mptcp_suffers_contention,
            f"MPTCP's mean download time with 4 stations > (1 + {TOL:g}) × with 2 (no loss)"),
    Finding("modes-converge",
            "As the network congestion grows the architectures perform alike (§5.1.1, Fig. 4).",
            check_modes_converge,
            "the max/min ratio of the architectures' mean throughputs is smaller at the highest "
            "loss than without loss (the architectures present among LWA, MPTCP, MLWA)"),
]


# ---------------------------------------------------------------------------------------------
# figures


def _panels(n: int, width: float = 3.3, height: float = 3.0) -> tuple[Figure, Any]:
    fig = Figure(figsize=(max(4.0, width * n + 0.8), height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, n, sharey=True, squeeze=False)[0]
    return fig, axes


def _modes(d: pd.DataFrame) -> list[str]:
    return [m for m in MODES if m in set(d["mode"])]


def _bars(ax: Any, d: pd.DataFrame, x: str, metric: str, xs: list[Any], scale: float,
          legend: bool) -> None:
    modes = _modes(d)
    k = len(modes)
    w = 0.8 / max(k, 1)
    for j, mode in enumerate(modes):
        s = sp.ci_table(d[d["mode"] == mode], [x], metric).set_index(x).reindex(xs)
        pos = np.arange(len(xs)) + (j - (k - 1) / 2) * w
        y = s["mean"].to_numpy(float) * scale
        lo = s["ci_low"].to_numpy(float) * scale
        hi = s["ci_high"].to_numpy(float) * scale
        err = np.vstack([np.where(np.isfinite(lo), y - lo, 0.0), np.where(np.isfinite(hi), hi - y, 0.0)])
        ax.bar(pos, np.nan_to_num(y), w, color=MODE_COLORS[mode], label=mode, yerr=err, capsize=2)
    ax.set_xticks(np.arange(len(xs)))
    ax.grid(False, axis="x")
    if legend:
        ax.legend(fontsize=8)


def fig_throughput_loss(d: pd.DataFrame) -> Figure | None:
    """Fig. 4: throughput against the loss rate, a panel per file size."""
    m = d[d["contention"] == 0]
    if m.empty:
        return None
    sizes = sorted(set(m["size_mb"]))
    losses = sorted(set(m["loss"]))
    with mpl.rc_context(_STYLE):
        fig, axes = _panels(len(sizes))
        for i, (ax, s) in enumerate(zip(axes, sizes)):
            _bars(ax, m[m["size_mb"] == s], "loss", "throughput_bps", losses, 1e-6, i == 0)
            ax.set_xticklabels([f"{v:g}" for v in losses])
            ax.set_title(f"{s} MB")
            ax.set_xlabel("loss rate at the server")
        axes[0].set_ylabel("throughput (Mbit/s)")
        fig.tight_layout()
    return fig


def fig_download_contention(d: pd.DataFrame) -> Figure | None:
    """Fig. 6: download time against the file size, a panel per contention level (no loss)."""
    c = d[(d["contention"] > 0) & (d["loss"] == 0)]
    if c.empty:
        return None
    levels = sorted(set(c["contention"]))
    sizes = sorted(set(c["size_mb"]))
    with mpl.rc_context(_STYLE):
        fig, axes = _panels(len(levels))
        for i, (ax, n) in enumerate(zip(axes, levels)):
            _bars(ax, c[c["contention"] == n], "size_mb", "download_s", sizes, 1.0, i == 0)
            ax.set_xticklabels([f"{s} MB" for s in sizes])
            ax.set_title(f"{'low' if n < HIGH else 'high'} contention: {n} stations × 1.5 Mbit/s")
            ax.set_xlabel("file size")
        axes[0].set_ylabel("download time (s)")
        fig.tight_layout()
    return fig


def fig_busy(d: pd.DataFrame) -> Figure | None:
    """Fig. 7: the Wi-Fi channel's busy fraction during the download, per contention level."""
    c = d[(d["loss"] == 0) & d["busy"].notna()] if "busy" in d.columns else d.iloc[:0]
    if c.empty:
        return None
    size = 32 if 32 in set(c["size_mb"]) else max(c["size_mb"])
    c = c[c["size_mb"] == size]
    levels = sorted(set(c["contention"]))
    with mpl.rc_context(_STYLE):
        fig, axes = _panels(1, 4.5)
        _bars(axes[0], c, "contention", "busy", levels, 100.0, True)
        axes[0].set_xticklabels([f"{n} stations" for n in levels])
        axes[0].set_xlabel("contending stations (1.5 Mbit/s UDP up each)")
        axes[0].set_ylabel("channel busy time (%)")
        axes[0].set_title(f"{size} MB download, no loss")
        fig.tight_layout()
    return fig


def fig_mixed(d: pd.DataFrame) -> Figure | None:
    """Fig. 8: download time and channel busy time against the loss, high contention."""
    c = d[d["contention"] >= HIGH]
    if c.empty or len(set(c["loss"])) < 2:
        return None
    size = 32 if 32 in set(c["size_mb"]) else max(c["size_mb"])
    c = c[c["size_mb"] == size]
    losses = sorted(set(c["loss"]))
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(7.4, 3.0))
        FigureCanvasAgg(fig)
        a, b = fig.subplots(1, 2, squeeze=True)
        _bars(a, c, "loss", "download_s", losses, 1.0, True)
        a.set_ylabel("download time (s)")
        a.set_title(f"(a) {size} MB, {HIGH} stations")
        if "busy" in c.columns:
            _bars(b, c, "loss", "busy", losses, 100.0, False)
        b.set_ylabel("channel busy time (%)")
        b.set_title("(b) channel busy time")
        for ax in (a, b):
            ax.set_xticklabels([f"{v:g}" for v in losses])
            ax.set_xlabel("loss rate at the server")
        fig.tight_layout()
    return fig


def _cwnd_series(run: Path, mode: str, summary: dict[str, Any]) -> list[tuple[str, pd.DataFrame]]:
    """(label, time_s/cwnd_bytes) per congestion window of the download: the TCP connection, or
    each MPTCP subflow named by the UE interface it goes to."""
    ts = run / "timeseries"
    if mode in (MPTCP, MLWA):
        t = pd.read_parquet(ts / "mptcp_subflows.parquet")
        flow = next(f for f in summary["flows"] if f["name"] == DL)
        devices = {ifc["address"]: ifc["device"] for n in summary["nodes"] for ifc in n.get("interfaces", [])}
        out = []
        for k, s in enumerate(flow["mptcp"]["subflows"]):
            dev = devices.get(str(s["remote"]).split(":")[0], "?")
            label = {"lte": "LTE subflow", "wifi": "Wi-Fi subflow"}.get(dev, f"subflow {k}")
            out.append((label, t[t["subflow"] == k]))
        return out
    t = pd.read_parquet(ts / "tcp.parquet")
    idx = next(i for i, f in enumerate(summary["flows"]) if f["name"] == DL)
    return [("TCP", t[t["flow"] == idx])]


def fig_cwnd(d: pd.DataFrame, out: Path, **where: Any) -> Figure | None:
    """Figs. 5 and 9: the congestion windows of one download per mode (the lowest seed)."""
    sel = d
    for k, v in where.items():
        sel = sel[sel[k] == v]
    if sel.empty:
        return None
    modes = _modes(sel)
    colors = {"TCP": "#444444", "LTE subflow": MODE_COLORS[LTE], "Wi-Fi subflow": MODE_COLORS[WIFI]}
    with mpl.rc_context(_STYLE):
        fig, axes = _panels(len(modes), 3.0, 2.8)
        for ax, mode in zip(axes, modes):
            row = sel[sel["mode"] == mode].sort_values("seed").iloc[0]
            run = _run_path(out, row)
            summary = json.loads((run / "summary.json").read_text())
            end = row["download_s"] if np.isfinite(row["download_s"]) else float(summary.get("run", {}).get("duration_s", 0) or 0)
            for label, s in _cwnd_series(run, mode, summary):
                s = s[s["time_s"] <= end] if end else s
                ax.plot(s["time_s"], s["cwnd_bytes"] / 1024, color=colors.get(label, "#888888"),
                        label=label, linewidth=1)
            ax.set_title(mode)
            ax.set_xlabel("time (s)")
            ax.legend(fontsize=7, loc="upper right")
        axes[0].set_ylabel("congestion window (KB)")
        fig.tight_layout()
    return fig


def fig_ratio(d: pd.DataFrame) -> Figure | None:
    """The LTE share of the data each mode sent, against the paper's 1:4 (LWA) and 1:27 (MPTCP)."""
    m = d[(d["contention"] == 0) & d["mode"].isin([MPTCP, LWA, MLWA])]
    if m.empty or "lte_bytes" not in m.columns:
        return None
    m = m.assign(lte_share=m["lte_bytes"] / (m["lte_bytes"] + m["wifi_bytes"]))
    losses = sorted(set(m["loss"]))
    with mpl.rc_context(_STYLE):
        fig, axes = _panels(1, 5.0)
        ax = axes[0]
        _bars(ax, m, "loss", "lte_share", losses, 100.0, True)
        ax.set_xticklabels([f"{v:g}" for v in losses])
        for mode, r in PAPER_RATIO.items():
            ax.axhline(r / (1 + r) * 100, color=MODE_COLORS[mode], linestyle="--", linewidth=1.2,
                       label=f"paper: {mode} 1:{round(1 / r)}")
        ax.legend(fontsize=8, loc="upper right")
        ax.set_xlabel("loss rate at the server")
        ax.set_ylabel("share of data sent over LTE (%)")
        ax.set_title("LTE:Wi-Fi split, all file sizes")
        ax.set_ylim(0, 100)
        fig.tight_layout()
    return fig


def figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    d = _d(df)
    out: list[StudyFigure] = []
    missing = "" if {LWA, MLWA} <= set(d["mode"]) else " LWA and MLWA are missing: " + NO_LWA + "."

    def add(name: str, title: str, caption: str, fig: Figure | None) -> None:
        if fig is not None:
            out.append(StudyFigure(name, title, caption + missing, fig))

    add("throughput_loss", "Throughput against the network loss (paper Fig. 4)",
        "Throughput (file size over download time; bytes delivered over the run when the "
        "download did not finish) per mode, against the random loss at the server, one panel per "
        "file size, no Wi-Fi contention; mean and 95 % t-interval over seeds.",
        fig_throughput_loss(d))
    main = d[d["contention"] == 0]
    if not main.empty:
        loss5 = 1e-4 if 1e-4 in set(main["loss"]) else main["loss"].max()
        size5 = main["size_mb"].max()
        add("cwnd_congestion", f"Congestion windows, {size5} MB at loss {loss5:g} (paper Fig. 5)",
            f"Congestion window of the download (per subflow for MPTCP) over time, one "
            f"{size5} MB download per mode at loss {loss5:g} without contention (lowest seed).",
            fig_cwnd(d, sweep_dir, contention=0, loss=loss5, size_mb=size5))
    add("download_contention", "Download time under Wi-Fi contention (paper Fig. 6)",
        "Download time per mode and file size with 2 (low) and 4 (high) stations each sending "
        "1.5 Mbit/s of UDP uplink, no loss; mean and 95 % t-interval over seeds.",
        fig_download_contention(d))
    add("busy", "Wi-Fi channel busy time (paper Fig. 7)",
        "Fraction of time a frame was on the air during the download, per mode and contention "
        "level (the 32 MB download, no loss).", fig_busy(d))
    add("mixed", "Congestion and high contention (paper Fig. 8)",
        "Download time (a) and channel busy time (b) against the loss at the server with 4 "
        "contending stations (32 MB).", fig_mixed(d))
    high = d[d["contention"] >= HIGH]
    if not high.empty and high["loss"].max() > 0:
        size9 = 32 if 32 in set(high["size_mb"]) else high["size_mb"].max()
        loss9 = high["loss"].max()
        add("cwnd_mixed", f"Congestion windows, {size9} MB at loss {loss9:g}, high contention (paper Fig. 9)",
            f"Congestion window of the download (per subflow for MPTCP) over time, {size9} MB at "
            f"loss {loss9:g} with 4 contending stations (lowest seed).",
            fig_cwnd(d, sweep_dir, contention=high["contention"].max(), loss=loss9, size_mb=size9))
    add("lte_wifi_ratio", "LTE:Wi-Fi split of the data (paper §5.1.2)",
        "Share of the data bytes (retransmissions included) the server sent over LTE, per "
        "aggregating mode and loss, no contention; dashed: the paper's packet ratios for the "
        "64 MB download at 10⁻⁴ (LWA 1:4, MPTCP 1:27).", fig_ratio(d))
    return out


def table_rows(df: pd.DataFrame) -> pd.DataFrame:
    d = _d(df)
    d = d.assign(lte_share=d["lte_bytes"] / (d["lte_bytes"] + d["wifi_bytes"])) if "lte_bytes" in d else d
    return d


STUDY = Study(
    name="mptcp-lwa",
    paper_id="002",
    summary="LTE 5 MHz + 802.11g: 16/32/64 MB downloads over LTE, Wi-Fi, MPTCP (OLIA), LWA and "
            "MLWA, under server loss 0..1e-2 and 0/2/4 contending Wi-Fi stations (paper 002)",
    paper="T. V. Pasca, N. Sen, V. Reddy, B. R. Tamma, A. Franklin, \"A Framework for Integrating "
          "MPTCP over LWA — A Testbed Evaluation\", WiNTECH '18",
    intro_html=(
        "<p>The paper downloads files of 16, 32 and 64 MB over an OpenAirInterface LTE eNB (5 MHz, "
        "25 PRBs, round robin) aggregated with an 802.11g AP, from a server 80 ms away, under "
        "random loss at the server (0 to 10<sup>−2</sup>) and with 2 or 4 Wi-Fi stations sending "
        "1.5 Mbit/s of UDP uplink, and compares LWA (one TCP connection over a PDCP split bearer, "
        "Wi-Fi downlink only), MPTCP (OLIA, lowest-RTT-first, a subflow per interface) and MLWA "
        "(MPTCP with its LTE subflow over LWA).</p>"
        "<p>celltcp runs the same downloads over its LTE and 802.11g models with LTE only, Wi-Fi "
        "only and MPTCP; the main sweep has no contention (§5.1), the part "
        "<code>contention/</code> adds 2 or 4 UDP stations (§5.2) and, with 4, loss (§5.3). The "
        "parts <code>lwa/</code> and <code>lwa-contention/</code> repeat both with the UE's "
        "bearer split at PDCP to the AP (dynamic steering): LWA (TCP) and MLWA (MPTCP). The "
        "paper gives its results in figures; the only numbers in its text are the LTE:Wi-Fi "
        "packet ratios 1:4 (LWA) and 1:27 (MPTCP).</p>"),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    enrich=enrich,
    aggregate_by=(PART, "mode", "contention", "loss", "size_mb"),
    metrics=("download_s", "throughput_bps", "busy", "lte_share"),
    table_rows=table_rows,
    parts=(CONTENTION, LWA_PART, LWA_CONTENTION),
)
