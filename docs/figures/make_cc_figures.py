#!/usr/bin/env python3
"""Draws docs/figures/cc-<name>.png: one bulk flow's congestion window over 30 s for every
algorithm that ``celltcp list cc`` prints, all on the same dumbbell.

The dumbbell: sender -(100 Mbit/s, 1 ms)- left -(10 Mbit/s, 23 ms)- right -(100 Mbit/s, 1 ms)-
receiver, so a 50 ms base RTT; the bottleneck queue holds one bandwidth-delay product
(10 Mbit/s x 50 ms = 62.5 KB, 42 packets of 1500 bytes), drop-tail. DCTCP gets the same buffer as
a step-marking queue with K = 17 packets (about 0.4 BDP), since without CE marks it is NewReno.
TCP-LP's figure also marks the window at which its delay threshold fires, BDP + 0.15 x buffer
(Kuzmanovic & Knightly 2003, delta = 0.15).

Usage (from the repository root, with the ``celltcp`` command installed by scripts/install.sh):

    python3 docs/figures/make_cc_figures.py            # every algorithm
    python3 docs/figures/make_cc_figures.py cubic bbr  # some

Each run goes to a temporary directory; only the PNGs are kept. Set ``CELLTCP`` to the command
to use if ``celltcp`` is not on the PATH.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

OUT = Path(__file__).resolve().parent
MSS = 1448
BDP_PKTS = 42
#: TCP-LP's early-congestion threshold as a fraction of the buffer (paper and Linux: 0.15).
LP_DELTA = 0.15
DURATION = "30s"
#: The command that runs celltcp (override with e.g. CELLTCP="python3 -m celltcp").
CELLTCP = shlex.split(os.environ.get("CELLTCP", "celltcp"))

SCENARIO = """duration = "{duration}"
sample_interval = "10ms"
record_rtt = false

[[node]]
name = "left"
kind = "router"
[[node]]
name = "right"
kind = "router"

[[link]]
between = ["sender", "left"]
rate = "100Mbps"
delay = "1ms"
[[link]]
name = "bottleneck"
between = ["left", "right"]
rate = "10Mbps"
delay = "23ms"
queue = {queue}
[[link]]
between = ["right", "receiver"]
rate = "100Mbps"
delay = "1ms"

[[flow]]
name = "{cc}"
app = "bulk"
from = "sender"
to = "receiver"
cc = "{cc}"
"""


def algorithms() -> list[str]:
    """Names from ``celltcp list cc`` (first word of each line)."""
    out = subprocess.run([*CELLTCP, "list", "cc"], check=True, capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        word = line.strip().split(" ")[0].rstrip(":") if line.strip() else ""
        if word and word.isidentifier() and word.islower():
            names.append(word)
    return names


def queue_for(cc: str) -> str:
    if cc == "dctcp":
        return f'{{ type = "step", k = 17, limit = "{BDP_PKTS}p" }}'
    return f'"{BDP_PKTS}p"'


def run(cc: str, tmp: Path) -> pd.DataFrame:
    scen = tmp / f"{cc}.toml"
    scen.write_text(SCENARIO.format(duration=DURATION, queue=queue_for(cc), cc=cc))
    out = tmp / cc
    subprocess.run([*CELLTCP, "run", str(scen), "-o", str(out), "--overwrite", "-q", "--seed", "1"], check=True)
    return pd.read_parquet(out / "timeseries" / "tcp.parquet")


def draw(cc: str, tcp: pd.DataFrame) -> Path:
    t = tcp["time_s"].to_numpy(float)
    cwnd = tcp["cwnd_bytes"].to_numpy(float) / MSS
    ss = tcp["ssthresh_bytes"].to_numpy(float) / MSS
    ss[ss > 1e5] = float("nan")  # ssthresh not yet set
    with plt.rc_context({"font.size": 8, "axes.grid": True, "grid.alpha": 0.35,
                         "axes.spines.top": False, "axes.spines.right": False}):
        fig, ax = plt.subplots(figsize=(6.0, 2.4), dpi=100)
        ax.plot(t, cwnd, drawstyle="steps-post", linewidth=1.0, label="cwnd")
        ax.plot(t, ss, drawstyle="steps-post", linewidth=0.8, linestyle="--", label="ssthresh")
        ax.axhline(BDP_PKTS, color="0.4", linewidth=0.7, linestyle=":", label="BDP (42 pkts)")
        ax.axhline(2 * BDP_PKTS, color="0.6", linewidth=0.7, linestyle="-.", label="BDP + buffer")
        if cc == "lp":
            ax.axhline(BDP_PKTS * (1 + LP_DELTA), color="tab:red", linewidth=0.7, linestyle=":",
                       label="BDP + 0.15 buffer")
        top = min(float(max(cwnd.max(), 2 * BDP_PKTS)) * 1.1, 400.0)
        ax.set_ylim(0, top)
        ax.set_xlim(0, float(t.max()))
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (segments of 1448 B)")
        ax.set_title(f"{cc}: 10 Mbit/s, 50 ms RTT, 1 BDP buffer"
                     + (" (step K = 17)" if cc == "dctcp" else " (drop-tail)"))
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        fig.tight_layout()
        path = OUT / f"cc-{cc}.png"
        fig.savefig(path, metadata={"Software": None})
        plt.close(fig)
    return path


def main() -> None:
    names = sys.argv[1:] or algorithms()
    with tempfile.TemporaryDirectory() as d:
        for cc in names:
            p = draw(cc, run(cc, Path(d)))
            print(f"{p.relative_to(OUT.parent.parent)}  {p.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
