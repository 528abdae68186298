#!/usr/bin/env python3
"""Speed of celltcp against ns-3 3.37 on the bench dumbbell (bench/README.md), back to back.

For each case (flows x simulated seconds) the two simulators run one after the other, never at
the same time, `--reps` times each, alternating (celltcp, ns-3, celltcp, ns-3, ...) so that
a change in machine load hits both alike. The table shows medians over the repetitions.

    python3 bench/run.py                 # 1, 10, 100 flows x 60 s, 3 repetitions
    python3 bench/run.py --quick         # 1, 10, 100 flows x 10 s, 3 repetitions
    python3 bench/run.py --cases 1:60,100:60 --reps 5 --json results.json
    python3 bench/run.py --sample-interval 1s   # celltcp samples its time series every second

celltcp side: `target/release/examples/bench` (validation/examples/bench.rs), built here with
`cargo build --release -p celltcp-validation --example bench` unless --no-build; it runs the
scenario that bench/dumbbell.py writes and prints one JSON line, its wall time being the event
loop only. ns-3 side: bench/ns3/build.sh (idempotent), then bench/ns3/build/dumbbell, whose wall
time is Simulator::Run() only. Neither includes setup.

Columns: events executed; events per wall second; simulated seconds per wall second; ns of wall
per event; us of wall per packet sent over the bottleneck (left -> right) -- the flat-cost check,
it should not grow with the number of flows; total goodput (both should be near 9.5 Mbit/s); and
the ratio of the simulated-seconds-per-wall-second figures, celltcp / ns-3. Python stdlib only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from dumbbell import dumbbell_toml  # noqa: E402

CELLTCP = os.path.join(ROOT, "target", "release", "examples", "bench")
NS3 = os.path.join(ROOT, "bench", "ns3", "build", "dumbbell")


def parse_cases(text):
    cases = []
    for item in text.split(","):
        flows, _, dur = item.partition(":")
        cases.append((int(flows), float(dur or 60)))
    return cases


def build(args):
    if not args.no_build:
        print("building celltcp bench binary ...", file=sys.stderr)
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "celltcp-validation", "--example", "bench"],
                       cwd=ROOT, check=True)
    if not os.path.exists(CELLTCP):
        sys.exit(f"missing {CELLTCP}; run without --no-build")
    if not args.skip_ns3:
        print("building ns-3 dumbbell (bench/ns3/build.sh) ...", file=sys.stderr)
        subprocess.run([os.path.join(ROOT, "bench", "ns3", "build.sh")], cwd=ROOT, check=True,
                       stdout=sys.stderr)
        if not os.path.exists(NS3):
            sys.exit(f"missing {NS3} after bench/ns3/build.sh")


def last_json_line(out):
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"no JSON line in output:\n{out}")
    return json.loads(lines[-1])


def run_celltcp(toml_path):
    out = subprocess.run([CELLTCP, toml_path, "1"], capture_output=True, text=True, check=True).stdout
    j = last_json_line(out)
    return {
        "wall": j["wall_seconds"], "sim": j["sim_seconds"], "events": j["events"],
        # over the whole run, as ns-3's goodput_bps_total (the per-flow figures in celltcp's
        # summary divide by each flow's own active time)
        "goodput": j["bytes_delivered"] * 8 / j["sim_seconds"],
        "pkts": j["bottleneck_tx_pkts"], "drops": j["bottleneck_drops"],
    }


def run_ns3(flows, duration, cc):
    cmd = [NS3, f"--flows={flows}", f"--duration={duration:g}", f"--cc={cc}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    j = last_json_line(out)
    return {
        "wall": j["wall_seconds"], "sim": j["sim_seconds"], "events": j["events"],
        "goodput": j["goodput_bps_total"], "pkts": j["bottleneck_enqueued_pkts"], "drops": j["bottleneck_drops"],
    }


def summarise(runs):
    """Median wall over the repetitions; events and the rest are deterministic (checked)."""
    wall = statistics.median(r["wall"] for r in runs)
    r0 = runs[0]
    if any(r["events"] != r0["events"] for r in runs):
        print("warning: event counts differ between repetitions", file=sys.stderr)
    return {
        "wall_s": wall,
        "wall_min_s": min(r["wall"] for r in runs),
        "events": r0["events"],
        "events_per_s": r0["events"] / wall,
        "sim_per_wall": r0["sim"] / wall,
        "ns_per_event": wall / r0["events"] * 1e9,
        "us_per_pkt": wall / r0["pkts"] * 1e6 if r0["pkts"] else float("nan"),
        "goodput_mbps": r0["goodput"] / 1e6,
        "bottleneck_pkts": r0["pkts"],
        "bottleneck_drops": r0["drops"],
        "reps": len(runs),
    }


def fmt_row(cols, widths):
    return "  ".join(str(c).rjust(w) for c, w in zip(cols, widths))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=None, help="flows:seconds,... (default 1:60,10:60,100:60)")
    ap.add_argument("--quick", action="store_true", help="10 simulated seconds per case instead of 60")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per simulator and case (default 3)")
    ap.add_argument("--cc", default="cubic", help="congestion control, both sides (default cubic)")
    ap.add_argument("--sample-interval", metavar="DUR",
                    help="celltcp's time-series sampling interval (scenario default 10ms; ns-3 records none)")
    ap.add_argument("--skip-ns3", action="store_true", help="celltcp only (no ratio)")
    ap.add_argument("--no-build", action="store_true", help="use the existing celltcp binary")
    ap.add_argument("--json", metavar="FILE", help="also write every run and the summaries as JSON")
    args = ap.parse_args()
    cases = parse_cases(args.cases or ("1:10,10:10,100:10" if args.quick else "1:60,10:60,100:60"))

    build(args)
    load0 = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for flows, duration in cases:
            path = os.path.join(tmp, f"dumbbell{flows}.toml")
            with open(path, "w") as f:
                text = dumbbell_toml(flows, duration, cc=args.cc)
                if args.sample_interval:
                    text = f'sample_interval = "{args.sample_interval}"\n' + text
                f.write(text)
            cel, ns3 = [], []
            for rep in range(args.reps):
                cel.append(run_celltcp(path))
                print(f"  {flows} flows x {duration:g} s, rep {rep + 1}: celltcp {cel[-1]['wall']:.3f} s", end="",
                      file=sys.stderr, flush=True)
                if not args.skip_ns3:
                    ns3.append(run_ns3(flows, duration, args.cc))
                    print(f", ns-3 {ns3[-1]['wall']:.3f} s", end="", file=sys.stderr)
                print(file=sys.stderr)
            row = {"flows": flows, "duration_s": duration, "celltcp": summarise(cel), "celltcp_runs": cel}
            if ns3:
                row["ns3"] = summarise(ns3)
                row["ns3_runs"] = ns3
                row["ratio"] = row["celltcp"]["sim_per_wall"] / row["ns3"]["sim_per_wall"]
            results.append(row)
    load1 = os.getloadavg()

    heads = ["flows", "sim s", "simulator", "events", "events/s", "sim s/wall s", "ns/event", "us/pkt",
             "goodput Mb/s", "celltcp/ns-3"]
    widths = [5, 5, 9, 9, 10, 12, 8, 6, 12, 12]
    sampling = f"celltcp sample_interval {args.sample_interval or '10ms (default)'}"
    print(f"# bench/run.py, {started}, {args.reps} reps, median wall; load average {load0[0]:.2f} before, "
          f"{load1[0]:.2f} after; {os.cpu_count()} CPUs; {sampling}")
    print(fmt_row(heads, widths))
    for row in results:
        sims = [("celltcp", row["celltcp"])] + ([("ns-3", row["ns3"])] if "ns3" in row else [])
        for name, s in sims:
            ratio = f"{row['ratio']:.1f}x" if name == "celltcp" and "ratio" in row else ""
            print(fmt_row([row["flows"], f"{row['duration_s']:g}", name, s["events"], f"{s['events_per_s']:.3g}",
                           f"{s['sim_per_wall']:.1f}", f"{s['ns_per_event']:.0f}", f"{s['us_per_pkt']:.2f}",
                           f"{s['goodput_mbps']:.3f}", ratio], widths))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"started": started, "load_before": load0, "load_after": load1, "reps": args.reps,
                       "cases": results}, f, indent=1)


if __name__ == "__main__":
    main()
