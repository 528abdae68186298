"""Sweep speed: the same sweep of short runs with the local executor at --jobs 1 and --jobs 2.

    python3 bench/sweep.py [--runs 200] [--duration 20s] [--jobs 2] [--abba] [--keep DIR]

The sweep is examples/dumbbell.toml (its pcap off) with the "cubic" flow's congestion control x
the bottleneck queue, replicated over seeds until it has --runs runs. Both executions start from
an empty directory; the wall times include the worker start-up, the runs, writing every run
directory and the results table. Prints both wall times and the ratio jobs-1 / jobs-N (the
ideal on an idle machine with N cores is N), and the cores kept busy (CPU seconds of the
driver and its workers per wall second): on a machine shared with other work the ratio falls
short of N while the busy cores show whether the executor kept its N processes fed. For the
same reason it measures, before and after, how much faster a pure-CPU loop runs on N processes
than on one: the ceiling the machine offers at that moment.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from celltcp.sweep import load_sweep, run_sweep

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "examples" / "dumbbell.toml"
CCS = ["newreno", "cubic", "bbr", "vegas"]
QUEUES = ["20p", "40p", "60p", "80p", "100p"]


def sweep_toml(runs: int, duration: str) -> str:
    combos = len(CCS) * len(QUEUES)
    seeds = max(1, -(-runs // combos))
    return "\n".join([
        f"base = {str(BASE)!r}".replace("'", '"'),
        f"seeds = {seeds}",
        "[set]",
        f'duration = "{duration}"',
        '"link.bottleneck.pcap" = false',
        '"flow.iperf-bbr.start" = "0.5s"',
        '"flow.iperf-bbr.duration" = "1s"',
        '"flow.newreno-10MB.start" = "0s"',
        "[grid]",
        f'"flow.cubic.cc" = {CCS!r}'.replace("'", '"'),
        f'"link.bottleneck.queue" = {QUEUES!r}'.replace("'", '"'),
        "",
    ])


def _cpu_s() -> float:
    """CPU seconds used so far by this process and its finished children (the workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


def _spin(n: int) -> int:
    x = 0
    for i in range(n):
        x ^= i * i
    return x


def machine_ratio(jobs: int, n: int = 20_000_000) -> float:
    """What the machine gives right now: the same pure-CPU loop done ``jobs`` times one after
    another, over ``jobs`` copies at once (``jobs`` on an idle machine with that many cores)."""
    import multiprocessing as mp

    t0 = time.perf_counter()
    for _ in range(jobs):
        _spin(n)
    serial = time.perf_counter() - t0
    ctx = mp.get_context("fork")
    t0 = time.perf_counter()
    with ctx.Pool(jobs) as pool:
        pool.map(_spin, [n] * jobs)
    return serial / (time.perf_counter() - t0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--duration", default="20s", help="simulated time of each run (default 20s)")
    p.add_argument("--jobs", type=int, default=2, help="the parallel case (default 2)")
    p.add_argument("--keep", metavar="DIR", help="keep the sweep directories under DIR")
    p.add_argument("--abba", action="store_true",
                   help="run jobs 1, N, N, 1 and compare the sums (cancels a load that drifts)")
    args = p.parse_args()

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="celltcp-bench-sweep-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        path = work / "sweep.toml"
        path.write_text(sweep_toml(args.runs, args.duration))
        sweep = load_sweep(path)
        sweep.runs = sweep.runs[: args.runs]
        print(f"{len(sweep.runs)} runs of {args.duration} simulated "
              f"({len(CCS)} controls x {len(QUEUES)} queues x {len(sweep.seeds)} seeds), "
              f"{os.cpu_count()} cores", flush=True)
        before = machine_ratio(args.jobs)
        print(f"machine: a pure-CPU loop runs {before:.2f}x faster on {args.jobs} processes than "
              f"on one (before)", flush=True)
        walls = {1: 0.0, args.jobs: 0.0}
        order = (1, args.jobs, args.jobs, 1) if args.abba else (1, args.jobs)
        for jobs in order:
            out = work / f"jobs{jobs}"
            shutil.rmtree(out, ignore_errors=True)
            cpu0 = _cpu_s()
            t0 = time.perf_counter()
            res = run_sweep(sweep, out, jobs=jobs)
            wall = time.perf_counter() - t0
            walls[jobs] += wall
            busy = (_cpu_s() - cpu0) / wall
            assert res.done == len(sweep.runs) and res.failed == 0, (res.done, res.failed)
            sim = res.table.drop_duplicates("run_id")["run.wall_time_s"].sum()
            print(f"--jobs {jobs}: {wall:7.1f} s wall  ({wall / len(sweep.runs) * 1e3:.0f} ms "
                  f"per run; simulation alone {sim:.1f} s; {busy:.2f} cores busy)", flush=True)
        print(f"ratio jobs 1 / jobs {args.jobs}: {walls[1] / walls[args.jobs]:.2f}")
        after = machine_ratio(args.jobs)
        print(f"machine: a pure-CPU loop runs {after:.2f}x faster on {args.jobs} processes than "
              f"on one (after)")
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load average (1, 5, 15 min) at the end: {load}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
