"""Emulation bench: the rate a wired link carries in real time and the loop's lateness.

    sudo python3 bench/emu.py [--rates 100Mbps,1Gbps,5Gbps] [--seconds 3] [--offload on,off] [--repeat 3]

For each rate, a two-host scenario (one link of that rate, 1 ms, a queue of a BDP or more) runs
iperf3 (kernel CUBIC) through `celltcp emu`; the table gives iperf3's goodput against the
closed form rate x 1448/1500 and the event lateness (p50/p99/max). The largest rate whose
goodput stays within 5 % of the closed form is the limit the machine sustains. `--offload`
runs with the TUN devices' segmentation offload on (the default, `[emu] offload`) and/or off;
`--repeat` runs each case that many times and gives the medians (real time on a loaded machine
is noisy), with the emulator's CPU time per second and the packets per device read.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import celltcp  # noqa: E402
import celltcp.api  # noqa: E402

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
    ap.add_argument("--offload", default="on")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.repeat}")
    print(f"{'rate':>10} {'offload':>7} {'iperf3 Mbit/s':>14} {'of closed form':>15} {'p50 us':>8} {'p99 us':>8} "
          f"{'max us':>8} {'cpu s/s':>8} {'pkts/read':>9}")
    best = None
    for r in args.rates.split(","):
        bps = parse_rate(r)
        for off in args.offload.split(","):
            if off not in ("on", "off"):
                raise SystemExit(f"--offload: {off!r} (expected on, off or on,off)")
            runs = []
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as d:
                    text = SCENARIO.format(rate=r, secs=args.seconds, dur=args.seconds + 3)
                    text += f"[emu]\noffload = {'true' if off == 'on' else 'false'}\n"
                    t0 = time.monotonic()
                    c0 = resource.getrusage(resource.RUSAGE_SELF)
                    res = celltcp.api.execute(text, out=Path(d) / "o", emu=celltcp.api.EmuArgs())
                    c1 = resource.getrusage(resource.RUSAGE_SELF)
                    wall = time.monotonic() - t0
                    rep = json.loads((Path(d) / "o" / "exec" / "1-a.out").read_text())
                    e = res.summary["emu"]
                    cpu = (c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime) / wall
                    per_read = e["packets_in"] / e["reads"] if e.get("reads") else 1.0
                    runs.append((rep["end"]["sum_received"]["bits_per_second"], e["lateness"]["p50_us"],
                                 e["lateness"]["p99_us"], e["lateness"]["max_us"], cpu, per_read))
            got, p50, p99, mx, cpu, per_read = (statistics.median(x) for x in zip(*runs))
            frac = got / (bps * 1448 / 1500)
            if frac >= 0.95:
                best = r
            print(f"{r:>10} {off:>7} {got / 1e6:>14.1f} {frac:>14.1%} {p50:>8.0f} {p99:>8.0f} {mx:>8.0f} "
                  f"{cpu:>8.2f} {per_read:>9.2f}")
    print(f"largest rate carried within 5 %: {best or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
