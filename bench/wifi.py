#!/usr/bin/env python3
"""Wi-Fi side by side: the same BSS in celltcp and in ns-3 3.37, back to back, throughput and speed.

Cases (bench/ns3/wifi.cc describes the ns-3 side; `wifi_toml` below writes the same scenario for
celltcp): stations 5 m around an AP wired to a server (1 Gbit/s, 1 ms), ns-3's default channel
(log-distance, 16.0206 dBm, 7 dB noise figure), constant rate, traffic from --start to the end.

  ac-udp-N   802.11ac VHT MCS 7, 20 MHz, one stream, A-MPDU: N stations send saturating UDP
             (1472-byte payloads, 90/N Mbit/s each, about 1.5x the channel) up to the server
  g-tcp-N    802.11g 54 Mbit/s (control at 24): one bulk TCP CUBIC download per station; the
             receivers ACK every second segment as ns-3's TCP does (DelAckCount 2): celltcp's
             flows run with quickack = 0, without Linux's quick ACKs (--quickack 16 restores them:
             an ACK per segment while the receive window grows, docs/validation.md)

    python3 bench/wifi.py                          # ac-udp-1/5/14 and g-tcp-1/5, 10 s, 1 rep
    python3 bench/wifi.py --cases ac-udp-14 --duration 20 --reps 3
    python3 bench/wifi.py --skip-ns3
    python3 bench/wifi.py --cases ac-udp-5,ac-udp-14 --ns3-args="--maxDelay=100000 --bar=0"
                                                   # isolate ns-3 mechanisms (bench/ns3/wifi.cc)
    python3 bench/wifi.py --ns3-args="--errorModel=ns3::NistErrorRateModel"
    python3 bench/wifi.py --cases g-tcp-1,g-tcp-5 --quickack 16
                                                   # celltcp's TCP with Linux's quick ACKs
                                                   # ns-3 with NIST (its 3.37 default is table-based)

Columns: goodput (Mbit/s over [start, end], summed over stations) and Jain's index of the
stations' goodputs in each simulator, wall seconds of the event loop (celltcp) and of
Simulator::Run() (ns-3), simulated seconds per wall second, and the speed ratio celltcp / ns-3
(median wall over the repetitions, the two simulators alternating). Python stdlib only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
CELLTCP = os.path.join(TARGET, "release", "examples", "bench")
NS3 = os.path.join(ROOT, "bench", "ns3", "build", "wifi")


def parse_case(name):
    std, transport, n = name.split("-")
    if std not in ("ac", "g") or transport not in ("udp", "tcp"):
        raise SystemExit(f"bench/wifi.py: unknown case {name!r} (expected ac|g-udp|tcp-N)")
    return std, transport, int(n)


def wifi_toml(std, transport, n, duration, start, quickack=0):
    lines = [f'duration = "{duration}s"', 'sample_interval = "1s"', "record_rtt = false", "",
             "[[wifi]]", 'name = "bss"', 'ap = "ap"', f'stations = {{ prefix = "sta", count = {n} }}',
             f'standard = "{"802.11ac" if std == "ac" else "802.11g"}"', 'width = "20MHz"', "mcs = 7",
             'distance = "5m"', "",
             "[[link]]", 'between = ["server", "ap"]', 'rate = "1Gbps"', 'delay = "1ms"', 'queue = "1000p"', ""]
    if transport == "udp":
        lines += ["[[flow]]", 'name = "up"', 'app = "udp"', 'from = "sta*"', 'to = "server"',
                  f'rate = "{90.0 / n:.4f}Mbps"', 'size = "1472B"', f'start = "{start}s"']
    else:
        lines += ["[[flow]]", 'name = "dl"', 'app = "bulk"', 'from = "server"', 'to = "sta*"', 'cc = "cubic"',
                  'window = "4MB"', f"quickack = {quickack}", f'start = "{start}s"']
    return "\n".join(lines) + "\n"


def jain(x):
    s2 = sum(v * v for v in x)
    return (sum(x) ** 2) / (len(x) * s2) if s2 else 1.0


def last_json(out):
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"no JSON line in output:\n{out}")
    return json.loads(lines[-1])


def run_celltcp(path):
    j = last_json(subprocess.run([CELLTCP, path, "1"], capture_output=True, text=True, check=True).stdout)
    per = j["per_flow_goodput_bps"]
    return {"wall": j["wall_seconds"], "sim": j["sim_seconds"], "events": j["events"], "goodput": sum(per),
            "jain": jain(per)}


def run_ns3(std, transport, n, duration, start, extra=()):
    cmd = [NS3, f"--standard={std}", f"--transport={transport}", f"--stations={n}", f"--duration={duration}",
           f"--start={start}", f"--udpRate={90.0 / n:.4f}Mbps", *extra]
    j = last_json(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return {"wall": j["wall_seconds"], "sim": j["sim_seconds"], "events": j["events"],
            "goodput": j["goodput_bps_total"], "jain": j["jain_fairness"], "frames": j.get("frames", {})}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="ac-udp-1,ac-udp-5,ac-udp-14,g-tcp-1,g-tcp-5")
    ap.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    ap.add_argument("--start", type=float, default=2.0,
                    help="traffic start, s (default 2: ns-3's stations associate first)")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--skip-ns3", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--json", metavar="FILE", help="also write every run as JSON")
    ap.add_argument("--ns3-args", default="", help="extra ns-3 options, e.g. \"--maxDelay=100000 --bar=0\"")
    ap.add_argument("--quickack", type=int, default=0,
                    help="celltcp's TCP receivers' quickack (default 0: an ACK per two segments as ns-3's "
                         "DelAckCount 2; 16: Linux's quick ACKs)")
    args = ap.parse_args()
    cases = [parse_case(c) for c in args.cases.split(",")]
    if not args.no_build:
        print("building celltcp bench binary ...", file=sys.stderr)
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "celltcp-validation", "--example", "bench"],
                       cwd=ROOT, check=True)
        if not args.skip_ns3:
            subprocess.run([os.path.join(ROOT, "bench", "ns3", "build.sh"), "wifi"], cwd=ROOT, check=True,
                           stdout=sys.stderr)
    rows, raw = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for std, transport, n in cases:
            name = f"{std}-{transport}-{n}"
            path = os.path.join(tmp, f"{name}.toml")
            with open(path, "w") as f:
                f.write(wifi_toml(std, transport, n, args.duration, args.start, args.quickack))
            c_runs, n_runs = [], []
            for _ in range(args.reps):
                c_runs.append(run_celltcp(path))
                if not args.skip_ns3:
                    n_runs.append(run_ns3(std, transport, n, args.duration, args.start, args.ns3_args.split()))
            raw.append({"case": name, "celltcp": c_runs, "ns3": n_runs})
            span = args.duration - args.start
            c_wall = statistics.median(r["wall"] for r in c_runs)
            row = [name, f"{c_runs[0]['goodput'] / 1e6:.2f}", f"{c_runs[0]['jain']:.3f}", f"{c_wall:.3f}",
                   f"{args.duration / c_wall:.0f}"]
            if n_runs:
                n_wall = statistics.median(r["wall"] for r in n_runs)
                diff = c_runs[0]["goodput"] / n_runs[0]["goodput"] - 1 if n_runs[0]["goodput"] else float("nan")
                row += [f"{n_runs[0]['goodput'] / 1e6:.2f}", f"{n_runs[0]['jain']:.3f}", f"{diff * 100:+.1f}%",
                        f"{n_wall:.3f}", f"{args.duration / n_wall:.2f}", f"{n_wall / c_wall:.0f}x"]
            rows.append(row)
            print(f"{name}: done ({span:g} s measured)", file=sys.stderr)
    head = ["case", "celltcp Mb/s", "Jain", "wall s", "sim/wall"]
    if not args.skip_ns3:
        head += ["ns-3 Mb/s", "Jain", "diff", "wall s", "sim/wall", "speed ratio"]
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    print(f"{args.duration:g} s simulated, traffic from {args.start:g} s, {args.reps} rep(s), "
          f"load average {os.getloadavg()[0]:.1f}")
    for r in [head] + rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "runs": raw}, f, indent=1)


if __name__ == "__main__":
    main()
