#!/usr/bin/env python3
"""Speed of celltcp against ns-3 3.37 on the LTE download scenarios (bench/ns3/lte.cc).

    python3 bench/lte.py                      # celltcp on every scenario, ns-3 figures from the reference
    python3 bench/lte.py --scenarios 10ue-um,50ue-um
    python3 bench/lte.py --rerun-ns3          # also rerun ns-3 (one process at a time) instead of reading it
    python3 bench/lte.py --rerun-ns3 --skip-celltcp --write-reference --reps 2   # regenerate the reference

ns-3 figures come from bench/ns3/lte-reference.json (written by --write-reference, with the exact
command line of every run); --rerun-ns3 builds bench/ns3/build/lte with bench/ns3/build-lte.sh and
runs it again. celltcp runs `celltcp run FILE -o DIR --overwrite` on the TOML text that
lte_toml() writes for the same scenario and reads DIR/manifest.json (sim_s_per_wall_s, measured
around the event loop) and DIR/summary.json. The celltcp command is `celltcp` when the installed
package imports, otherwise `python3 -m celltcp` with python/ on PYTHONPATH (the in-tree build);
--celltcp overrides it.

The table: scenario | ns-3 sim-s/wall-s | celltcp sim-s/wall-s | ratio (celltcp / ns-3), plus ns-3's
simulated seconds per CPU second (process CPU time, less sensitive to other load on a shared machine)
and the cell goodput of each. The stored reference was measured on a loaded machine (see its
load averages); for a fair ratio, rerun ns-3 (--rerun-ns3) on a quiet machine, next to celltcp. Simulators never run at the same time. Python stdlib only (pyarrow is used
when present, by validation/ns3_lte.py, for windowed goodput).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS3_DIR = os.path.join(ROOT, "bench", "ns3")
NS3_BIN = os.path.join(NS3_DIR, "build", "lte")
NS3_BUILD = os.path.join(NS3_DIR, "build-lte.sh")
REFERENCE = os.path.join(NS3_DIR, "lte-reference.json")

# name -> parameters. "validation" cases are compared by validation/ns3_lte.py; "speed" cases
# make up the speed table (10ue-um is both).
SCENARIOS = {
    "1ue-um": dict(ues=1, rlc="um", idle=False, kind=("validation",)),
    "1ue-am": dict(ues=1, rlc="am", idle=False, kind=("validation",)),
    "10ue-um": dict(ues=10, rlc="um", idle=False, kind=("validation", "speed")),
    "10ue-am": dict(ues=10, rlc="am", idle=False, kind=("validation",)),
    "20ue-um": dict(ues=20, rlc="um", idle=False, kind=("speed",)),
    "50ue-um": dict(ues=50, rlc="um", idle=False, kind=("speed",)),
    "40ue-idle": dict(ues=40, rlc="um", idle=True, kind=("speed",)),
}
# Common to every scenario (both simulators).
COMMON = dict(duration=10.0, warmup=1.0, scheduler="pf", distance=100.0, cc="newreno", mss=1400,
              tcp_buf="4MiB", tcp_buf_bytes=4 * 1024 * 1024, rlc_buf="10MB", rlc_buf_bytes=10_000_000)


def scenario(name: str) -> dict:
    if name not in SCENARIOS:
        sys.exit(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    return {"name": name, **COMMON, **SCENARIOS[name]}


# ---------------------------------------------------------------------------------------- ns-3

def ns3_args(sc: dict) -> list[str]:
    """Arguments of bench/ns3/build/lte for scenario sc (relative binary path, as recorded)."""
    args = ["bench/ns3/build/lte", f"--ues={sc['ues']}", f"--rlc={sc['rlc']}",
            f"--scheduler={sc['scheduler']}", f"--duration={sc['duration']:g}",
            f"--distance={sc['distance']:g}", f"--cc={sc['cc']}"]
    if sc["idle"]:
        args.append("--idle")
    return args


def build_ns3() -> None:
    subprocess.run([NS3_BUILD], cwd=ROOT, check=True, stdout=sys.stderr)
    if not os.path.exists(NS3_BIN):
        sys.exit(f"missing {NS3_BIN} after {NS3_BUILD}")


def last_json_line(out: str) -> dict:
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"no JSON line in output:\n{out}")
    return json.loads(lines[-1])


def run_ns3(sc: dict, reps: int = 1) -> dict:
    """Run ns-3 `reps` times (one after the other); keep the result of the fastest run (least
    disturbed by other load) and the wall/CPU times and load averages of every run."""
    args = ns3_args(sc)
    runs = []
    for _ in range(reps):
        load0 = os.getloadavg()[0]
        out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True).stdout
        r = last_json_line(out)
        runs.append({"result": r, "load_before": load0, "load_after": os.getloadavg()[0],
                     "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
    best = min(runs, key=lambda x: x["result"]["wall_seconds"])
    return {"command": shlex.join(args), "result": best["result"], "date_utc": best["date_utc"],
            "load_average_1min": [best["load_before"], best["load_after"]],
            "reps": [{"wall_seconds": x["result"]["wall_seconds"], "cpu_seconds": x["result"].get("cpu_seconds"),
                      "load_average_1min": [x["load_before"], x["load_after"]]} for x in runs]}


def machine_info() -> dict:
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu_model": cpu, "platform": platform.platform(),
            "load_average": os.getloadavg()}


def ns3_version() -> str:
    try:
        v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"], capture_output=True,
                           text=True, check=True).stdout.strip()
        return f"ns-3.37 (Debian package libns3-dev {v})"
    except (OSError, subprocess.CalledProcessError):
        return "ns-3.37"


def load_reference(path: str = REFERENCE) -> dict:
    if not os.path.exists(path):
        sys.exit(f"{path} not found; run: python3 bench/lte.py --rerun-ns3 --skip-celltcp --write-reference")
    with open(path) as f:
        return json.load(f)


# ------------------------------------------------------------------------------------- celltcp

def lte_toml(sc: dict) -> str:
    """celltcp scenario text equivalent to bench/ns3/lte.cc with the same parameters."""
    lines = [
        f"# generated by bench/lte.py: scenario {sc['name']} (ns-3: {shlex.join(ns3_args(sc))})",
        f'duration = "{sc["duration"]:g}s"',
        "",
        "[lte]",
        'bandwidth = "20MHz"',
        f'scheduler = "{sc["scheduler"]}"',
        "",
        "[lte.rlc]",
        f'mode = "{sc["rlc"]}"',
        f'buffer = "{sc["rlc_buf"]}"',
        "",
        # ns-3 3.37's PDCP holds nothing; celltcp's holds AM SDUs until RLC confirms them
        # (TS 36.323 §5.4), within half its SN space: make both limits larger than what the
        # 4 MiB windows can put in flight (18-bit SNs: 131072 SDUs), so that only RLC binds.
        "[lte.pdcp]",
        'buffer = "32MB"',
        "sn_field_bits = 18",
        "",
        "[[lte.enb]]",
        'name = "enb"',
        "position = [0.0, 0.0]",
        "",
        "[[lte.ue]]",
        'name = "ue"',
        f"count = {sc['ues']}",
        'enb = "enb"',
        f'placement = {{ type = "distances", distances = ["{sc["distance"]:g}m"] }}',
        "",
        "[lte.epc]",
        'pgw = "pgw"',
        "",
        "[[link]]",
        'between = ["server", "pgw"]',
        'rate = "10Gbps"',
        'delay = "10ms"',
        # ns-3's server sends into a pfifo_fast queue disc of 1000 packets (installed by
        # Ipv4AddressHelper::Assign) in front of the point-to-point device's 100-packet queue,
        # with flow control between them: 1100 packets before the sender's own link drops.
        'queue = "1100p"',
    ]
    if not sc["idle"]:
        lines += [
            "",
            "[[flow]]",
            'app = "bulk"',
            'from = "server"',
            'to = "ue*"',
            f'cc = "{sc["cc"]}"',
            f"mss = {sc['mss']}",
            f'window = "{sc["tcp_buf"]}"',
            # ns-3's BulkSendApplications start at 0.1 s (after the UEs attached).
            'start = "100ms"',
        ]
    return "\n".join(lines) + "\n"


class CelltcpError(RuntimeError):
    pass


def celltcp_reps(sc: dict, args: argparse.Namespace, workdir: str) -> list[dict]:
    """celltcp on sc `args.reps` times (the table keeps the fastest, as for ns-3)."""
    runs = []
    for _ in range(max(1, args.reps)):
        print(f"celltcp: {sc['name']} ...", file=sys.stderr, flush=True)
        runs.append(run_celltcp(sc, workdir, args.celltcp))
    return runs


def celltcp_command(override: str | None) -> tuple[list[str], dict]:
    env = dict(os.environ)
    if override:
        return shlex.split(override), env
    exe = shutil.which("celltcp")
    if exe and subprocess.run([exe, "--version"], capture_output=True).returncode == 0:
        return [exe], env
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    return [sys.executable, "-m", "celltcp"], env


def run_celltcp(sc: dict, workdir: str, override: str | None = None) -> dict:
    """Run celltcp on sc; returns {"toml", "dir", "manifest", "summary"}; raises CelltcpError."""
    path = os.path.join(workdir, f"{sc['name']}.toml")
    out_dir = os.path.join(workdir, sc["name"])
    with open(path, "w") as f:
        f.write(lte_toml(sc))
    cmd, env = celltcp_command(override)
    p = subprocess.run(cmd + ["run", path, "-o", out_dir, "--overwrite"], capture_output=True, text=True,
                       env=env, cwd=ROOT)
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip()
        raise CelltcpError(
            f"celltcp could not run the LTE scenario {sc['name']} (exit {p.returncode}).\n"
            f"  command: {shlex.join(cmd + ['run', path, '-o', out_dir, '--overwrite'])}\n"
            f"  celltcp said: {msg[-1500:]}\n"
            "  The [lte] part of the scenario format is probably not implemented (or the Python\n"
            "  extension was not rebuilt: maturin develop --release). The ns-3 half is unaffected.")
    try:
        with open(os.path.join(out_dir, "manifest.json")) as f:
            manifest = json.load(f)
        with open(os.path.join(out_dir, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        raise CelltcpError(f"celltcp ran {sc['name']} but its run directory is unreadable: {e}") from e
    return {"toml": path, "dir": out_dir, "manifest": manifest, "summary": summary}


def celltcp_sim_per_wall(run: dict) -> float:
    m = run["manifest"]
    if "sim_s_per_wall_s" in m:
        return float(m["sim_s_per_wall_s"])
    return float(m["sim_time_s"]) / float(m["wall_time_s"])


def celltcp_cell_goodput_mbps(run: dict) -> float:
    """Whole-run cell goodput (sum of bytes delivered / duration)."""
    s = run["summary"]
    flows = [f for f in s.get("flows", []) if f.get("app") == "bulk"]
    return sum(f["bytes_delivered"] for f in flows) * 8 / float(s["duration_s"]) / 1e6


# ------------------------------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenarios", default=None,
                    help=f"comma-separated subset of: {', '.join(SCENARIOS)} (default: all)")
    ap.add_argument("--rerun-ns3", action="store_true", help="rerun ns-3 instead of reading the reference JSON")
    ap.add_argument("--write-reference", action="store_true",
                    help=f"with --rerun-ns3: write the ns-3 results to {os.path.relpath(REFERENCE, ROOT)}")
    ap.add_argument("--reps", type=int, default=1,
                    help="runs per scenario of each simulator (ns-3 only with --rerun-ns3); the fastest "
                         "is kept (default 1)")
    ap.add_argument("--skip-celltcp", action="store_true", help="ns-3 only")
    ap.add_argument("--celltcp", metavar="CMD", help="celltcp command (default: see module doc)")
    ap.add_argument("--keep", metavar="DIR", help="keep celltcp's scenario files and run directories in DIR")
    ap.add_argument("--print-toml", metavar="SCENARIO", help="print the celltcp TOML of one scenario and exit")
    args = ap.parse_args()

    if args.print_toml:
        sys.stdout.write(lte_toml(scenario(args.print_toml)))
        return 0
    if args.write_reference and not args.rerun_ns3:
        ap.error("--write-reference needs --rerun-ns3")
    names = args.scenarios.split(",") if args.scenarios else list(SCENARIOS)
    scs = [scenario(n) for n in names]

    # ns-3 figures.
    ns3 = {}
    cel_runs: dict = {}
    workdir = args.keep or tempfile.mkdtemp(prefix="celltcp-lte-")
    os.makedirs(workdir, exist_ok=True)
    if args.rerun_ns3:
        build_ns3()
        started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        machine = machine_info()
        for sc in scs:
            print(f"ns-3: {shlex.join(ns3_args(sc))} ...", file=sys.stderr, flush=True)
            ns3[sc["name"]] = run_ns3(sc, args.reps)
            r = ns3[sc["name"]]["result"]
            print(f"  wall {r['wall_seconds']:.1f} s (cpu {r.get('cpu_seconds', float('nan')):.1f} s), "
                  f"{r['sim_seconds_per_wall_second']:.3f} sim-s/wall-s, "
                  f"cell {r['cell_goodput_mbps']:.2f} Mbit/s", file=sys.stderr, flush=True)
            if not args.skip_celltcp:
                # right after its ns-3 runs, so that a change in machine load hits both
                cel_runs[sc["name"]] = celltcp_reps(sc, args, workdir)
        if args.write_reference:
            ref = {
                "description": "ns-3 3.37 LTE reference runs for celltcp (bench/ns3/lte.cc); "
                               "regenerate with the command below",
                "regenerate": "python3 bench/lte.py --rerun-ns3 --skip-celltcp --write-reference",
                "build": "bench/ns3/build-lte.sh",
                "ns3_version": ns3_version(),
                "machine": machine,
                "date_utc": started,
                "common": COMMON,
                "note": "one ns-3 process at a time; wall_seconds (and cpu_seconds, the process CPU time) "
                        "measured around Simulator::Run() only; goodput over [1 s, 10 s]; the machine is "
                        "shared, so each scenario was run --reps times and the fastest run is stored "
                        "(all wall times under 'reps')",
                "reps": args.reps,
                "scenarios": {n: {**{k: v for k, v in SCENARIOS[n].items()}, "kind": list(SCENARIOS[n]["kind"]),
                                  **v} for n, v in ns3.items()},
            }
            machine["load_average_after"] = os.getloadavg()
            with open(REFERENCE, "w") as f:
                json.dump(ref, f, indent=1)
                f.write("\n")
            print(f"wrote {REFERENCE}", file=sys.stderr)
    else:
        ref = load_reference()
        for sc in scs:
            if sc["name"] not in ref["scenarios"]:
                sys.exit(f"scenario {sc['name']} not in {REFERENCE}; rerun with --rerun-ns3")
            ns3[sc["name"]] = ref["scenarios"][sc["name"]]

    if os.getloadavg()[0] > (os.cpu_count() or 1):
        print(f"bench/lte.py: warning: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
              "wall-clock figures will be pessimistic", file=sys.stderr)

    # celltcp figures.
    cel, error = {}, None
    if not args.skip_celltcp:
        try:
            for sc in scs:
                runs = cel_runs.get(sc["name"]) or celltcp_reps(sc, args, workdir)
                cel[sc["name"]] = min(runs, key=lambda c: -celltcp_sim_per_wall(c))
                cel[sc["name"]]["all_sim_s_per_wall_s"] = [round(celltcp_sim_per_wall(c), 1) for c in runs]
        except CelltcpError as e:
            error = str(e)
        finally:
            if not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)

    heads = ["scenario", "ns-3 sim-s/wall-s", "celltcp sim-s/wall-s", "ratio", "ns-3 sim-s/cpu-s",
             "celltcp sim-s/cpu-s", "cpu ratio", "ns-3 cell Mb/s", "celltcp cell Mb/s"]
    rows = []
    for sc in scs:
        r = ns3[sc["name"]]["result"]
        cpu = r.get("sim_seconds_per_cpu_second")
        row = [sc["name"], f"{r['sim_seconds_per_wall_second']:.3f}", "-", "-",
               "-" if cpu is None else f"{cpu:.3f}", "-", "-", f"{r['cell_goodput_mbps']:.2f}", "-"]
        if sc["name"] in cel:
            c = cel[sc["name"]]
            spw = celltcp_sim_per_wall(c)
            row[2] = f"{spw:.1f}"
            row[3] = f"{spw / r['sim_seconds_per_wall_second']:.0f}x"
            spc = c["manifest"].get("sim_s_per_cpu_s")  # the core's thread: build, event loop, summary
            row[5] = "-" if spc is None else f"{spc:.1f}"
            row[6] = "-" if cpu is None or spc is None else f"{spc / cpu:.0f}x"
            row[8] = f"{celltcp_cell_goodput_mbps(c):.2f}" if not sc["idle"] else "0.00"
        rows.append(row)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(heads)]
    src = "rerun now" if args.rerun_ns3 else f"from {os.path.relpath(REFERENCE, ROOT)}"
    print(f"# bench/lte.py: ns-3 {src}; celltcp cell goodput is whole-run, ns-3's over [1 s, end]")
    print(" | ".join(h.ljust(w) for h, w in zip(heads, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    if error:
        print(f"\nbench/lte.py: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
