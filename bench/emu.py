"""Emulation bench: the rate a wired link carries in real time and the loop's lateness.

    sudo python3 bench/emu.py [--rates 100Mbps,1Gbps,5Gbps] [--seconds 3] [--offload on,off]
                              [--gso-writes on,off] [--repeat 3] [--lte10]

For each rate, a two-host scenario (one link of that rate, 1 ms, a queue of a BDP or more) runs
iperf3 (kernel CUBIC) through `celltcp emu`; the table gives iperf3's goodput against the
closed form rate x 1448/1500 and the event lateness (p50/p99/max). The largest rate whose
goodput stays within 5 % of the closed form is the limit the machine sustains. `--offload`
runs with the TUN devices' segmentation offload on (the default, `[emu] offload`) and/or off;
`--repeat` runs each case that many times and gives the medians (real time on a loaded machine
is noisy), with the emulator's CPU time per second, the packets per device read and per device
write (`--gso-writes`: trains of segments written as one GSO packet, `[emu] gso_writes`).
`--worst` prints each run's latest loop steps (`emu.worst_steps`: what delayed them).
`--starts N` adds N short programs (`true`, background) starting during the traffic, from 1 s to
the end, and reports the loop's lateness around them: the max lateness, the latest step that
followed a start (`prev_spawn_us` of `worst_steps`) and how late the programs started (their
`start_s` against their `start`).

`--lte10` runs the loaded-cell case instead: a 20 MHz LTE cell with 10 UEs, one real (iperf3 -R,
kernel CUBIC, from a real server 10 ms behind the PGW) and nine simulated UEs each downloading
with celltcp's CUBIC (bulk flows from a simulated server). It reports the real UE's goodput,
the simulated UEs' total, the loop's lateness (p50/p99/max) and whether the emulator kept real
time: its own measure, the loop's steps whose earliest event ran more than 1 ms late
(`emu.lateness.late_1ms`; simulated time is wall time, so a step late by more than 1 ms is the
simulation falling behind); it keeps real time when fewer than 0.1 % of the steps are.
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


LTE10 = """
duration = "{dur}s"
[lte]
bandwidth = "20MHz"
[lte.rlc]
mode = "am"
[[lte.enb]]
name = "enb"
position = [0.0, 0.0]
{ues}
[[link]]
between = ["server", "pgw"]
rate = "10Gbps"
delay = "10ms"
[[link]]
between = ["simserver", "pgw"]
rate = "10Gbps"
delay = "10ms"
{flows}
[[exec]]
node = "server"
cmd = "iperf3 -s -1"
background = true
[[exec]]
node = "ue0"
cmd = "iperf3 -c {{addr:server}} -R -t {secs} -O 1 -J"
start = "0.5s"
"""


def lte10_text(secs: int) -> str:
    """The 10-UE cell: ue0 real, ue1..ue9 simulated (bulk downloads), spread 60..420 m."""
    ues = "".join(f'[[lte.ue]]\nname = "ue{k}"\nposition = [{60 + 40 * k}.0, {(k % 3) * 30}.0]\n'
                  for k in range(10))
    flows = "".join(f'[[flow]]\nname = "sim{k}"\napp = "bulk"\nfrom = "simserver"\nto = "ue{k}"\n'
                    f'cc = "cubic"\nstart = "0.2s"\n' for k in range(1, 10))
    return LTE10.format(dur=secs + 3, ues=ues, flows=flows, secs=secs)


def lte10(secs: int, repeat: int) -> int:
    print(f"20 MHz LTE cell, 10 UEs (1 real iperf3 -R, 9 simulated bulk downloads), {secs} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'run':>4} {'real UE Mbit/s':>15} {'9 sim UEs Mbit/s':>17} {'p50 us':>8} {'p99 us':>8} "
          f"{'max us':>8} {'steps':>8} {'> 1 ms':>7} {'deliv p99 us':>12} {'cpu s/s':>8} {'load':>5} real time")
    kept_all = True
    for i in range(repeat):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.monotonic()
            c0 = resource.getrusage(resource.RUSAGE_SELF)
            res = celltcp.api.execute(lte10_text(secs), out=Path(d) / "o", emu=celltcp.api.EmuArgs())
            c1 = resource.getrusage(resource.RUSAGE_SELF)
            wall = time.monotonic() - t0
            rep = json.loads((Path(d) / "o" / "exec" / "1-ue0.out").read_text())
        e = res.summary["emu"]
        lat = e["lateness"]
        sim_bps = sum(f["goodput_bps"] for f in res.summary["flows"])
        cpu = (c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime) / wall
        frac = lat["late_1ms"] / max(lat["count"], 1)
        kept = frac < 0.001
        kept_all &= kept
        print(f"{i + 1:>4} {rep['end']['sum_received']['bits_per_second'] / 1e6:>15.2f} {sim_bps / 1e6:>17.2f} "
              f"{lat['p50_us']:>8.0f} {lat['p99_us']:>8.0f} {lat['max_us']:>8.0f} {lat['count']:>8} "
              f"{frac:>7.3%} {e['delivery_lateness']['p99_us']:>12.0f} {cpu:>8.2f} {os.getloadavg()[0]:>5.1f} "
              f"{'kept' if kept else 'NOT kept'}")
    print(f"keeps real time (fewer than 0.1 % of steps late by more than 1 ms) in every run: "
          f"{'yes' if kept_all else 'no'}")
    return 0


def starts(rate: str, secs: int, n: int, repeat: int, worst: bool) -> int:
    """iperf3 through one link of `rate` with `n` programs starting during the traffic."""
    due = [1.0 + k * (secs - 1.0) / n for k in range(n)]
    text = SCENARIO.format(rate=rate, secs=secs, dur=secs + 3)
    text += "".join(f'[[exec]]\nnode = "a"\ncmd = "true"\nbackground = true\nstart = "{t:.3f}s"\n' for t in due)
    print(f"{rate}, iperf3 for {secs} s, {n} programs starting from 1 s; load average {os.getloadavg()[0]:.1f}")
    print(f"{'run':>4} {'iperf3 Mbit/s':>14} {'p99 us':>8} {'max us':>8} {'late>1ms':>8} {'spawn-step late us':>19} "
          f"{'max prev_spawn us':>18} {'start late ms (med/max)':>24} {'load':>5}")
    for i in range(repeat):
        with tempfile.TemporaryDirectory() as d:
            res = celltcp.api.execute(text, out=Path(d) / "o", emu=celltcp.api.EmuArgs())
            rep = json.loads((Path(d) / "o" / "exec" / "1-a.out").read_text())
        e = res.summary["emu"]
        lat = e["lateness"]
        ws = e.get("worst_steps", [])
        after = [s["late_us"] for s in ws if s.get("prev_spawn_us", 0) > 100]
        spawn = max((s.get("prev_spawn_us", 0) for s in ws), default=0)
        late = sorted((p["start_s"] - due[p["index"] - 2]) * 1e3 for p in e["exec"] if p["index"] >= 2)
        if worst:
            for s in ws:
                print(f"    {json.dumps(s)}")
        print(f"{i + 1:>4} {rep['end']['sum_received']['bits_per_second'] / 1e6:>14.1f} {lat['p99_us']:>8.0f} "
              f"{lat['max_us']:>8.0f} {lat['late_1ms']:>8} {max(after, default=0):>19.0f} {spawn:>18.0f} "
              f"{statistics.median(late):>11.3f} / {max(late):>10.3f} {os.getloadavg()[0]:>5.1f}")
    return 0


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
    ap.add_argument("--gso-writes", default="on")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--lte10", action="store_true", help="the 10-UE LTE cell instead of the wired rates")
    ap.add_argument("--worst", action="store_true", help="print each run's latest steps (emu.worst_steps)")
    ap.add_argument("--starts", type=int, default=0, help="N programs starting during the traffic")
    args = ap.parse_args()
    if args.starts:
        return starts(args.rates.split(",")[0], args.seconds, args.starts, args.repeat, args.worst)
    if args.lte10:
        return lte10(args.seconds, args.repeat)
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.repeat}")
    print(f"{'rate':>10} {'offload':>7} {'gso wr':>6} {'iperf3 Mbit/s':>14} {'of closed form':>15} {'p50 us':>8} "
          f"{'p99 us':>8} {'max us':>8} {'cpu s/s':>8} {'pkts/read':>9} {'pkts/write':>10} {'load':>5}")
    best = None
    for r in args.rates.split(","):
        bps = parse_rate(r)
        cases = [(o, g) for o in args.offload.split(",") for g in args.gso_writes.split(",")
                 if o == "on" or g == args.gso_writes.split(",")[0]]
        for off, gw in cases:
            if off not in ("on", "off"):
                raise SystemExit(f"--offload: {off!r} (expected on, off or on,off)")
            if gw not in ("on", "off"):
                raise SystemExit(f"--gso-writes: {gw!r} (expected on, off or on,off)")
            runs = []
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as d:
                    text = SCENARIO.format(rate=r, secs=args.seconds, dur=args.seconds + 3)
                    text += f"[emu]\noffload = {'true' if off == 'on' else 'false'}\n"
                    text += f"gso_writes = {'true' if gw == 'on' else 'false'}\n"
                    t0 = time.monotonic()
                    c0 = resource.getrusage(resource.RUSAGE_SELF)
                    res = celltcp.api.execute(text, out=Path(d) / "o", emu=celltcp.api.EmuArgs())
                    c1 = resource.getrusage(resource.RUSAGE_SELF)
                    wall = time.monotonic() - t0
                    rep = json.loads((Path(d) / "o" / "exec" / "1-a.out").read_text())
                    e = res.summary["emu"]
                    cpu = (c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime) / wall
                    per_read = e["packets_in"] / e["reads"] if e.get("reads") else 1.0
                    per_write = e["packets_out"] / e["writes"] if e.get("writes") else 1.0
                    if args.worst:
                        for s in e.get("worst_steps", []):
                            print(f"    {r} {off}/{gw}: {json.dumps(s)}")
                    runs.append((rep["end"]["sum_received"]["bits_per_second"], e["lateness"]["p50_us"],
                                 e["lateness"]["p99_us"], e["lateness"]["max_us"], cpu, per_read, per_write,
                                 os.getloadavg()[0]))
            got, p50, p99, mx, cpu, per_read, per_write, load = (statistics.median(x) for x in zip(*runs))
            frac = got / (bps * 1448 / 1500)
            if frac >= 0.95:
                best = r
            print(f"{r:>10} {off:>7} {gw if off == 'on' else '-':>6} {got / 1e6:>14.1f} {frac:>14.1%} {p50:>8.0f} "
                  f"{p99:>8.0f} {mx:>8.0f} {cpu:>8.2f} {per_read:>9.2f} {per_write:>10.2f} {load:>5.1f}")
    print(f"largest rate carried within 5 %: {best or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
