#!/usr/bin/env python3
"""Compare celltcp's LTE model against the stored ns-3 3.37 reference (bench/ns3/lte-reference.json).

    python3 validation/ns3_lte.py                 # run celltcp on the 1- and 10-UE cases and compare
    python3 validation/ns3_lte.py --per-ue        # one row per UE instead of mean/min/max
    python3 validation/ns3_lte.py --runs DIR      # reuse celltcp run directories DIR/<case>/ (from
                                                  #   bench/lte.py --keep DIR) instead of running
    python3 validation/ns3_lte.py --tolerance 10  # flag differences above 10 % (default 15 %)
    python3 validation/ns3_lte.py --keep DIR      # keep celltcp's scenarios and run directories

Cases: 1ue-um, 1ue-am, 10ue-um, 10ue-am (PF scheduler, 20 MHz, UEs 100 m from the eNB, NewReno
bulk download server -> every UE, 10 s; see bench/ns3/lte.cc and docs/validation.md, "LTE vs
ns-3"). The scenarios come from bench/lte.py (the same text bench/lte.py runs).

Metrics, each with the relative difference (celltcp - ns-3) / ns-3 and a flag "!!" above the
tolerance:
  * per-UE goodput and cell goodput, Mbit/s. ns-3's are measured over [1 s, 10 s]. celltcp's are
    taken over the same window from DIR/timeseries/tcp.parquet (delivered_bytes) when pyarrow is
    available; otherwise celltcp's whole-run goodput is compared with ns-3's whole-run figure
    (per_ue_rx_bytes_total / duration) and the table says so.
  * mean TCP RTT (ns-3: RTT samples at the server inside the window; celltcp: the samples of
    DIR/timeseries/rtt.parquet inside the same window, else the whole-run summary figure).
  * mean DL and UL PRBs per TTI over the window (celltcp: timeseries/lte_cell.parquet
    dl_/ul_prb_utilization x 100, else the whole-run summary figure).
Exit status: 0 all within tolerance, 1 something flagged, 2 celltcp could not run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("bench_lte", os.path.join(ROOT, "bench", "lte.py"))
bench_lte = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_lte)

CASES = ["1ue-um", "1ue-am", "10ue-um", "10ue-am"]


def _ue_index(name: str) -> int:
    m = re.search(r"(\d+)$", name or "")
    return int(m.group(1)) if m else 1


def celltcp_per_ue(run: dict, sc: dict) -> tuple[list[float], bool]:
    """Per-UE goodput (Mbit/s, UE order ue1..ueN) and whether it is windowed like ns-3's."""
    s = run["summary"]
    flows = [(i, f) for i, f in enumerate(s.get("flows", [])) if f.get("app") == "bulk"]
    flows.sort(key=lambda x: _ue_index(x[1].get("to", "")))
    try:
        import pyarrow.parquet as pq  # optional

        t = pq.read_table(os.path.join(run["dir"], "timeseries", "tcp.parquet"),
                          columns=["time_s", "flow", "delivered_bytes"]).to_pydict()
        series: dict[int, list[tuple[float, float]]] = {}
        for tm, fl, d in zip(t["time_s"], t["flow"], t["delivered_bytes"]):
            series.setdefault(int(fl), []).append((float(tm), float(d)))
        out = []
        for idx, _f in flows:
            pts = sorted(series[idx])
            start = next(d for tm, d in pts if tm >= sc["warmup"] - 1e-9)
            t_end, d_end = pts[-1]
            t0 = next(tm for tm, d in pts if tm >= sc["warmup"] - 1e-9)
            out.append((d_end - start) * 8 / (t_end - t0) / 1e6)
        return out, True
    except Exception:  # no pyarrow, no time series, unexpected layout: fall back to whole run
        dur = float(s["duration_s"])
        return [f["bytes_delivered"] * 8 / dur / 1e6 for _i, f in flows], False


def _window_mean(run: dict, table: str, column: str, t0: float):
    """Mean of `column` of timeseries/`table`.parquet over samples at t >= t0 (None if unreadable)."""
    try:
        import pyarrow.parquet as pq  # optional

        t = pq.read_table(os.path.join(run["dir"], "timeseries", f"{table}.parquet"),
                          columns=["time_s", column]).to_pydict()
    except Exception:
        return None
    xs = [float(x) for tm, x in zip(t["time_s"], t[column]) if tm >= t0 - 1e-9 and x is not None]
    return statistics.mean(xs) if xs else None


def celltcp_prb(run: dict, t0: float, direction: str = "dl"):
    """Mean PRBs allocated per TTI in `direction` ("dl" or "ul") over [t0, end] (100 PRB
    cell), and where it came from."""
    col = f"{direction}_prb_utilization"
    u = _window_mean(run, "lte_cell", col, t0)
    if u is not None:
        return 100.0 * u, f"timeseries/lte_cell.parquet {col} x 100 over t >= {t0:g} s"
    cells = run["summary"].get("lte", {}).get("cells", [])
    if cells:
        return 100.0 * float(cells[0][col]), f"summary lte.cells[0].{col} x 100 (whole run)"
    return None, None


def celltcp_rtt(run: dict, t0: float):
    """Mean of all TCP RTT samples over [t0, end] (ns-3: all samples at the server in the window)."""
    m = _window_mean(run, "rtt", "rtt_ms", t0)
    if m is not None:
        return m, f"timeseries/rtt.parquet, samples at t >= {t0:g} s"
    rtts = [f["rtt_mean_ms"] for f in run["summary"].get("flows", [])
            if f.get("app") == "bulk" and f.get("rtt_mean_ms") is not None]
    return (statistics.mean(rtts), "summary rtt_mean_ms (whole run)") if rtts else (None, None)


def rel(ns3: float | None, cel: float | None):
    if ns3 is None or cel is None or ns3 == 0:
        return None
    return (cel - ns3) / ns3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}")
    ap.add_argument("--tolerance", type=float, default=15.0, help="flag threshold in percent (default 15)")
    ap.add_argument("--per-ue", action="store_true", help="one row per UE")
    ap.add_argument("--runs", metavar="DIR", help="use existing celltcp run directories DIR/<case>")
    ap.add_argument("--celltcp", metavar="CMD", help="celltcp command (see bench/lte.py)")
    ap.add_argument("--keep", metavar="DIR", help="keep celltcp's scenario files and run directories in DIR")
    args = ap.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    workdir = args.keep or tempfile.mkdtemp(prefix="celltcp-lte-val-")
    try:
        return compare(args, workdir)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def compare(args, workdir: str) -> int:
    tol = args.tolerance / 100
    ref = bench_lte.load_reference()

    rows = []  # (case, metric, ns3, celltcp, rel)
    notes = set()
    for name in args.cases.split(","):
        sc = bench_lte.scenario(name)
        r = ref["scenarios"][name]["result"]
        if args.runs:
            import json

            d = os.path.join(args.runs, name)
            try:
                with open(os.path.join(d, "summary.json")) as f:
                    summary = json.load(f)
                with open(os.path.join(d, "manifest.json")) as f:
                    manifest = json.load(f)
            except OSError as e:
                print(f"validation/ns3_lte.py: error: no celltcp run for {name} in {args.runs}: {e}", file=sys.stderr)
                return 2
            run = {"dir": d, "summary": summary, "manifest": manifest}
        else:
            try:
                print(f"celltcp: {name} ...", file=sys.stderr, flush=True)
                run = bench_lte.run_celltcp(sc, workdir, args.celltcp)
            except bench_lte.CelltcpError as e:
                print(f"validation/ns3_lte.py: error: {e}", file=sys.stderr)
                return 2
        cel_ue, windowed = celltcp_per_ue(run, sc)
        if windowed:
            ns_ue = list(r["per_ue_goodput_mbps"])
        else:
            notes.add("celltcp time series unreadable: goodput compared over the whole run")
            ns_ue = [b * 8 / r["duration"] / 1e6 for b in r["per_ue_rx_bytes_total"]]
        if len(cel_ue) != len(ns_ue):
            print(f"validation/ns3_lte.py: error: {name}: celltcp has {len(cel_ue)} bulk flows, ns-3 {len(ns_ue)}",
                  file=sys.stderr)
            return 2
        if args.per_ue or len(ns_ue) == 1:
            for i, (a, b) in enumerate(zip(ns_ue, cel_ue)):
                rows.append((name, f"goodput ue{i + 1} Mb/s", a, b, rel(a, b)))
        else:
            rows.append((name, "goodput per UE, mean", statistics.mean(ns_ue), statistics.mean(cel_ue),
                         rel(statistics.mean(ns_ue), statistics.mean(cel_ue))))
            rows.append((name, "goodput per UE, min", min(ns_ue), min(cel_ue), rel(min(ns_ue), min(cel_ue))))
            rows.append((name, "goodput per UE, max", max(ns_ue), max(cel_ue), rel(max(ns_ue), max(cel_ue))))
            worst = max((abs(rel(a, b)) for a, b in zip(ns_ue, cel_ue) if rel(a, b) is not None), default=None)
            rows.append((name, "worst per-UE |diff|", None, None, worst))
        rows.append((name, "cell goodput Mb/s", sum(ns_ue), sum(cel_ue), rel(sum(ns_ue), sum(cel_ue))))
        cel_rtt, key = celltcp_rtt(run, sc["warmup"])
        if key:
            notes.add(f"celltcp RTT figure: {key}")
        rows.append((name, "mean TCP RTT ms", r.get("mean_tcp_rtt_ms"), cel_rtt, rel(r.get("mean_tcp_rtt_ms"), cel_rtt)))
        for d in ("dl", "ul"):
            prb, key = celltcp_prb(run, sc["warmup"], d)
            if key:
                notes.add(f"celltcp PRB figure: {key}")
            ns = r.get(f"mean_{d}_prb_per_tti")
            rows.append((name, f"mean {d.upper()} PRBs/TTI", ns, prb, rel(ns, prb)))

    def f(x):
        return "n/a" if x is None else f"{x:.3f}"

    heads = ["case", "metric", "ns-3", "celltcp", "rel diff", "flag"]
    table = []
    flagged = 0
    for case, metric, a, b, d in rows:
        flag = ""
        if d is not None and abs(d) > tol:
            flag, flagged = "!!", flagged + 1
        sign = "" if metric.startswith("worst") else "+"
        table.append([case, metric, f(a), f(b), "n/a" if d is None else f"{d * 100:{sign}.1f}%", flag])
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(heads)]
    print(f"# celltcp vs ns-3 3.37 LTE ({ref.get('ns3_version', 'ns-3.37')}, reference {ref.get('date_utc')}); "
          f"flag !! when |rel diff| > {args.tolerance:g} %")
    print(" | ".join(h.ljust(w) for h, w in zip(heads, widths)))
    print("-|-".join("-" * w for w in widths))
    for t in table:
        print(" | ".join(c.ljust(w) for c, w in zip(t, widths)))
    for n in sorted(notes):
        print(f"# note: {n}")
    print(f"# {flagged} flagged")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
