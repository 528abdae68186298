"""Emulation bench: the rate a wired link carries in real time and the loop's lateness.

    sudo python3 bench/emu.py [--rates 100Mbps,1Gbps,5Gbps] [--seconds 3]

For each rate, a two-host scenario (one link of that rate, 1 ms, a queue of a BDP or more) runs
iperf3 (kernel CUBIC) through `celltcp emu`; the table gives iperf3's goodput against the
closed form rate x 1448/1500 and the event lateness (p50/p99/max). The largest rate whose
goodput stays within 5 % of the closed form is the limit the machine sustains.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import celltcp  # noqa: E402

SCENARIO = """
duration = "{dur}s"
[[link]]
between = ["a", "b"]
rate = "{rate}"
delay = "1ms"
queue = {{ type = "droptail", limit = "1000p" }}
[[exec]]
node = "b"
cmd = "iperf3 -s -1"
background = true
[[exec]]
node = "a"
cmd = "iperf3 -c {{addr:b}} -t {secs} -O 1 -J"
start = "0.3s"
"""


def parse_rate(s: str) -> float:
    units = {"kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "bps": 1.0}
    low = s.lower()
    for u, f in units.items():
        if low.endswith(u):
            return float(low[: -len(u)]) * f
    raise SystemExit(f"--rates: {s!r} (expected e.g. 100Mbps)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="100Mbps,1Gbps,5Gbps")
    ap.add_argument("--seconds", type=int, default=3)
    args = ap.parse_args()
    print(f"{'rate':>10} {'iperf3 Mbit/s':>14} {'of closed form':>15} {'p50 us':>8} {'p99 us':>8} {'max us':>8}")
    best = None
    for r in args.rates.split(","):
        bps = parse_rate(r)
        with tempfile.TemporaryDirectory() as d:
            text = SCENARIO.format(rate=r, secs=args.seconds, dur=args.seconds + 3)
            res = celltcp.api.execute(text, out=Path(d) / "o", emu=celltcp.api.EmuArgs())
            rep = json.loads((Path(d) / "o" / "exec" / "1-a.out").read_text())
            got = rep["end"]["sum_received"]["bits_per_second"]
        lat = res.summary["emu"]["lateness"]
        frac = got / (bps * 1448 / 1500)
        if frac >= 0.95:
            best = r
        print(f"{r:>10} {got / 1e6:>14.1f} {frac:>14.1%} {lat['p50_us']:>8.0f} {lat['p99_us']:>8.0f} {lat['max_us']:>8.0f}")
    print(f"largest rate carried within 5 %: {best or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
