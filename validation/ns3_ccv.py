#!/usr/bin/env python3
"""Run the ns-3 3.37 counterpart of the study cc-variants-lte (bench/ns3/ccv.cc) over the paper's
grid and cache the results in the repository, beside the study:

    python3 validation/ns3_ccv.py                      # the whole grid, 2 processes at a time
    python3 validation/ns3_ccv.py --jobs 1 --duration 5 --out FILE

Grid: the paper's eleven congestion controls (and CUBIC) x RLC AM/UM x 1000/3000-byte
packets, in two settings:

  * ``paper``: the paper's configuration (14 UEs, OnOff 1 Mbit/s TCP flows, ns-3's default RLC
    transmit buffer of 10 KiB, ns-3's TCP defaults);
  * ``bulk``: the same cell loaded: each UE receives a saturating (BulkSend) download, so the
    10 KiB RLC buffer really drops and the congestion control sets the rate.

Each run is one short simulation (--duration simulated seconds, default 5: 0.5 s attach, the
applications write until duration - 1 s, the last second drains what is in flight). The JSON
written (default python/celltcp/studies/cc-variants-lte/ns3.json) holds, per run, the command
that made it and ns-3's figures (mean goodput per UE, FlowMonitor end-to-end delay, jitter,
loss ratio, the RLC buffer's drops), and at the top the command that regenerates the file.
The study reads it (celltcp.studies.cc_variants_lte.ns3_results) to put ns-3's numbers beside
the paper's and celltcp's. Exit status: 0 written, 1 some run failed, 2 ns-3 could not be built.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "bench" / "ns3" / "build.sh"
BINARY = ROOT / "bench" / "ns3" / "build" / "ccv"
DEFAULT_OUT = ROOT / "python" / "celltcp" / "studies" / "cc-variants-lte" / "ns3.json"
CCS = ["bic", "hybla", "newreno", "highspeed", "htcp", "scalable", "vegas", "veno", "westwood",
       "illinois", "yeah", "cubic"]
SETTINGS = {"paper": 1_000_000, "bulk": 0}


def _run(args: list[str]) -> dict:
    cmd = [str(BINARY.relative_to(ROOT)), *args]
    p = subprocess.run([str(BINARY), *args], capture_output=True, text=True, cwd=ROOT, check=False)
    if p.returncode != 0:
        return {"command": " ".join(cmd), "error": p.stderr.strip()[-500:]}
    return {"command": " ".join(cmd), "result": json.loads(p.stdout.strip().splitlines()[-1])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=5.0, help="simulated seconds per run")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    if subprocess.run(["bash", str(BUILD), "ccv"], check=False).returncode != 0:
        sys.stderr.write("ns3_ccv: error: bench/ns3/build.sh ccv failed\n")
        return 2
    grid = [(s, cc, rlc, size) for s in SETTINGS for cc in CCS for rlc in ("am", "um")
            for size in (1000, 3000)]
    jobs = [[f"--cc={cc}", f"--rlc={rlc}", f"--packetSize={size}", f"--rate={SETTINGS[s]}",
             f"--duration={a.duration:g}", f"--seed={a.seed}"] for s, cc, rlc, size in grid]
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(_run, jobs))
    runs = []
    for (s, cc, rlc, size), r in zip(grid, results):
        runs.append({"setting": s, "cc": cc, "rlc": rlc, "packet_size": size, **r})
    failed = [r for r in runs if "error" in r]
    doc = {
        "description": "ns-3 3.37 counterpart of celltcp's study cc-variants-lte (paper 003, LTE "
                       "half): bench/ns3/ccv.cc over the paper's grid; setting 'paper' = 14 UEs "
                       "with OnOff 1 Mbit/s TCP flows and ns-3's default 10 KiB RLC buffer; "
                       "'bulk' = the same cell with saturating BulkSend downloads",
        "regenerate": "python3 validation/ns3_ccv.py"
                      + (f" --duration {a.duration:g}" if a.duration != 5.0 else "")
                      + (f" --seed {a.seed}" if a.seed != 1 else ""),
        "build": "bench/ns3/build.sh ccv",
        "ns3_version": "ns-3.37 (Debian package libns3-dev)",
        "platform": platform.platform(),
        "date_utc": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "metrics": {
            "goodput_mbps": "PacketSink bytes / (duration - 1.5 s), mean over the 14 UEs",
            "delay_ms": "FlowMonitor delaySum / rxPackets (IP end to end), mean over flows",
            "jitter_ms": "FlowMonitor jitterSum / (rxPackets - 1), mean over flows",
            "loss_ratio": "sum(tx - rx) / sum(tx) IP packets of the downlink flows",
            "rlc_tx_drops": "SDUs dropped by the eNB's RLC transmit buffer (LteRlc TxDrop)",
        },
        "runs": runs,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"ns3_ccv: {len(runs) - len(failed)} runs written to "
          f"{os.path.relpath(a.out, ROOT)}; {len(failed)} failed")
    for r in failed:
        print(f"  failed: {r['command']}: {r['error']}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
