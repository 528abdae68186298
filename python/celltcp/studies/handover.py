"""Study ``handover`` (paper 001): Nguyen et al., TCP over LTE handovers with PDCP seamless and
lossless forwarding (ns-3 with RLC AM and a lossless handover added, Linux CUBIC through NSC).

Scenario 1 of the paper: two eNBs 750 m apart, X2 with 6 ms of delay, a UE at a speed drawn from
a normal distribution (mean 40 km/h, σ 5 km/h) driving from one to the other while downloading
with TCP CUBIC; the PDCP (retransmission) queue from 64 KB to 4 MB. Its findings:

1. in seamless handovers, the larger the PDCP queue, the lower the TCP goodput (more SDUs sit in
   the RLC queues the source discards);
2. in lossless handovers, the larger the PDCP queue, the larger the end-to-end delay;
3. seamless handover costs throughput, lossless handover costs delay.

celltcp's setting is ``handover/scenario.toml`` (the UE starts 250 m from the source so that it
hands over early in the run); the sweep crosses the forwarding with the queue over seeds (each
seed draws a speed). The 64 KB queue limits TCP to about queue/RTT in both modes, so the trends
are read from 256 KB up.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import sweep_plots as sp
from ..report import Finding, Verdict
from . import Study, StudyFigure, run_dir

MODE = "lte.handover.forwarding"
QUEUE = "lte.pdcp.buffer"
MODES = ["seamless", "lossless"]
COLORS = {"seamless": "#D55E00", "lossless": "#0072B2"}
#: the smallest queue whose goodput is not limited by queue/RTT (see the module doc)
TREND_FROM = "256KB"


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    if MODE in df.columns:
        df["forwarding"] = df[MODE].astype(str)
    if QUEUE in df.columns:
        df["pdcp_queue"] = df[QUEUE].astype(str)
    return df


def _dl(df: pd.DataFrame) -> pd.DataFrame:
    d = prepare(df) if "forwarding" not in df.columns else df
    sel = d[d["flow"] == "dl"]
    if sel.empty:
        raise ValueError("no rows for the dl flow")
    return sel


def _queues(d: pd.DataFrame) -> list[str]:
    qs = [str(q) for q in sp.ordered(d["pdcp_queue"])]
    if TREND_FROM in qs:
        qs = qs[qs.index(TREND_FROM):]
    if len(qs) < 2:
        raise ValueError(f"needs two PDCP queues of at least {TREND_FROM}")
    return qs


def _mean(d: pd.DataFrame, metric: str, mode: str, queue: str) -> float:
    v = pd.to_numeric(d[(d["forwarding"] == mode) & (d["pdcp_queue"] == queue)][metric], errors="coerce").dropna()
    if v.empty:
        raise ValueError(f"no {metric} for {mode}, {queue}")
    return float(v.mean())


def check_seamless_goodput_falls(df: pd.DataFrame) -> Verdict:
    d = _dl(df)
    qs = _queues(d)
    g = [_mean(d, "goodput_bps", "seamless", q) for q in qs]
    text = ", ".join(f"{q} {x / 1e6:.2f}" for q, x in zip(qs, g))
    return Verdict(f"seamless goodput (Mbit/s) by PDCP queue: {text}", g[-1] < g[0])


def check_lossless_delay_grows(df: pd.DataFrame) -> Verdict:
    d = _dl(df)
    qs = _queues(d)
    o = [_mean(d, "owd_mean_ms", "lossless", q) for q in qs]
    text = ", ".join(f"{q} {x:.0f}" for q, x in zip(qs, o))
    return Verdict(f"lossless mean one-way delay (ms) by PDCP queue: {text}",
                   bool(np.all(np.diff(o) > 0)))


def check_tradeoff(df: pd.DataFrame) -> Verdict:
    d = _dl(df)
    q = _queues(d)[-1]
    gs, gl = _mean(d, "goodput_bps", "seamless", q), _mean(d, "goodput_bps", "lossless", q)
    rs, rl = _mean(d, "retransmitted_segments", "seamless", q), _mean(d, "retransmitted_segments", "lossless", q)
    os_, ol = _mean(d, "owd_mean_ms", "seamless", q), _mean(d, "owd_mean_ms", "lossless", q)
    return Verdict(f"queue {q}: goodput seamless {gs / 1e6:.2f} vs lossless {gl / 1e6:.2f} Mbit/s, "
                   f"TCP retransmissions {rs:.0f} vs {rl:.0f}, mean one-way delay {os_:.0f} vs {ol:.0f} ms",
                   gl > gs and rl < rs)


FINDINGS = [
    Finding("seamless-goodput-falls",
            "In seamless handovers, the larger the PDCP queue, the lower the TCP goodput.",
            check_seamless_goodput_falls,
            f"mean seamless goodput at the largest queue < at {TREND_FROM}"),
    Finding("lossless-delay-grows",
            "In lossless handovers, the larger the PDCP queue, the larger the end-to-end delay.",
            check_lossless_delay_grows,
            f"mean one-way delay of the lossless runs rises with every queue from {TREND_FROM}"),
    Finding("seamless-throughput-lossless-delay",
            "Seamless handover suffers a throughput reduction while lossless handover "
            "experiences a high delay.", check_tradeoff,
            "at the largest queue: lossless goodput > seamless goodput, and fewer TCP "
            "retransmissions with lossless"),
]


def figures(df: pd.DataFrame, sweep_dir: Path) -> list[StudyFigure]:
    d = _dl(df)
    qs = [str(q) for q in sp.ordered(d["pdcp_queue"])]
    out = [
        StudyFigure("goodput_queue", "TCP goodput against the PDCP queue",
                    "Goodput of the download against the PDCP queue, seamless and lossless "
                    "forwarding; mean over seeds (speeds) with 95 % t-intervals (paper: TCP good-put).",
                    sp.lines(d, "pdcp_queue", "goodput_bps", "forwarding", x_order=qs,
                             group_order=MODES, colors=COLORS, title="TCP goodput across a handover")),
        StudyFigure("delay_queue", "End-to-end delay against the PDCP queue",
                    "Mean one-way delay of the download's packets against the PDCP queue "
                    "(paper: end-to-end delay).",
                    sp.lines(d, "pdcp_queue", "owd_mean_ms", "forwarding", x_order=qs,
                             group_order=MODES, colors=COLORS, title="End-to-end delay")),
        StudyFigure("retx_queue", "TCP retransmissions",
                    "TCP retransmitted segments per run (grouped bars, 95 % t-interval whiskers).",
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
    except (KeyError, FileNotFoundError):
        pass
    return out


STUDY = Study(
    name="handover",
    paper_id="001",
    summary="X2 handover with PDCP seamless vs lossless forwarding, PDCP queue 64 KB..4 MB, "
            "a UE at ~40 km/h between two eNBs (paper 001)",
    paper="Nguyen et al., TCP performance over LTE handovers: PDCP seamless and lossless "
          "forwarding (ns-3 study, paper 001 in /papers)",
    intro_html=(
        "<p>The paper adds RLC AM and a lossless PDCP handover to ns-3 and measures a Linux "
        "CUBIC download across an X2 handover between two eNBs 750 m apart (X2 6 ms), the UE at "
        "a normally distributed speed (40 km/h, σ 5 km/h), with PDCP queues from 64 KB to "
        "4 MB.</p><p>celltcp runs the same geometry with its X2 handover (A3, 3 dB, 256 ms), "
        "seamless or lossless forwarding, and the PDCP queue as the bearer's backlog limit; each "
        "seed draws a speed.</p>"),
    findings=FINDINGS,
    figures=figures,
    prepare=prepare,
    aggregate_by=("forwarding", "pdcp_queue", "flow"),
    metrics=("goodput_bps", "owd_mean_ms", "rtt_mean_ms", "retransmitted_segments"),
    table_flows=("dl",),
)
