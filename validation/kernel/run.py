"""The kernel as the oracle (issue 12): Linux's own TCP through `celltcp emu` beside celltcp's
TCP through `celltcp run`, on the same links.

    sudo PYTHONPATH=python python3 validation/kernel/run.py [--seconds 10] [--only SUBSTR]
        [--out docs/validation.md]

For every case the same scenario runs twice:

- **kernel**: `celltcp emu` with iperf3 (`-C <cc>`, `-w` where the case has one) between two real
  hosts (network namespaces whose kernel TCP is the host's, Linux 6.x); goodput is iperf3's
  `sum_received`, retransmissions its `sum_sent.retransmits`, the mean RTT the sender's
  `mean_rtt` (tcp_info's smoothed RTT, averaged over iperf3's samples);
- **celltcp**: `celltcp run` with an `iperf` flow of the same length, cc and `window`; goodput,
  retransmitted segments and the mean of the RTT samples from its summary.

The standing queue is the bottleneck queue's mean sojourn time (`queue_delay_mean_ms` of the
data direction of the link, the emulated link's own queue in both runs). The table goes to
stdout and, with `--out`, replaces the block between the markers
`<!-- kernel-oracle:begin -->` and `<!-- kernel-oracle:end -->` of that file.

Needs root, /dev/net/tun, iperf3 and the kernel's reno/cubic/bbr (see docs/emulation.md). Not part
of CI: it takes real time (about 25 s per case) and its kernel numbers depend on the host.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import celltcp  # noqa: E402

# celltcp's names for the kernel's algorithms
SIM_CC = {"cubic": "cubic", "reno": "newreno", "bbr": "bbr"}


@dataclass
class Case:
    name: str
    rate: str
    delay: str  # one way
    queue: str
    cc: str
    window: str | None = None  # iperf3 -w / celltcp `window`
    loss: float = 0.0  # on the data direction only


def cases() -> list[Case]:
    out: list[Case] = []
    for cc in ("cubic", "reno", "bbr"):
        # 10 Mbit/s, 50 ms RTT: BDP 62.5 kB = 42 packets of 1500 B
        out.append(Case(f"10M/50ms, 1 BDP (42p), {cc}", "10Mbps", "25ms", "42p", cc))
        out.append(Case(f"10M/50ms, 1000p, {cc}", "10Mbps", "25ms", "1000p", cc))
        out.append(Case(f"10M/50ms, 5p, {cc}", "10Mbps", "25ms", "5p", cc))
    for w in ("64K", "128K", "256K"):
        out.append(Case(f"100M/50ms, -w {w}, cubic", "100Mbps", "25ms", "1000p", "cubic", window=w))
    for cc in ("cubic", "reno", "bbr"):
        for p in (1e-3, 1e-4):
            out.append(Case(f"100M/100ms, loss {p:g} (data), {cc}", "100Mbps", "50ms", "1000p", cc, loss=p))
    return out


def link(c: Case) -> str:
    loss = f"loss = {{ forward = {c.loss!r}, reverse = 0 }}\n" if c.loss else ""
    return (f'[[link]]\nbetween = ["client", "server"]\nrate = "{c.rate}"\ndelay = "{c.delay}"\n'
            f'queue = "{c.queue}"\n{loss}')


def sim_window(w: str) -> str:
    return w.replace("K", "KB").replace("M", "MB")  # celltcp: KB = 1024 B, as iperf3 K


def run_kernel(c: Case, secs: int) -> dict:
    w = f" -w {c.window}" if c.window else ""
    text = (f'duration = "{secs + 4}s"\n' + link(c)
            + f'[emu]\ncc = "{c.cc}"\n'
            + '[[exec]]\nnode = "server"\ncmd = "iperf3 -s -1"\nbackground = true\n'
            + f'[[exec]]\nnode = "client"\ncmd = "iperf3 -c {{addr:server}} -t {secs} -C {c.cc}{w} -J"\n'
            + 'start = "0.3s"\n')
    with tempfile.TemporaryDirectory() as d:
        res = celltcp.api.execute(text, out=Path(d) / "o", emu=celltcp.api.EmuArgs())
        rep = json.loads((Path(d) / "o" / "exec" / "1-client.out").read_text())
    end = rep["end"]
    snd = end["streams"][0]["sender"]
    return {
        "goodput": end["sum_received"]["bits_per_second"],
        "retx": end["sum_sent"].get("retransmits", 0),
        "rtt_ms": snd.get("mean_rtt", 0) / 1000.0,
        "queue_ms": data_queue_ms(res.summary),
        "lateness_p99_us": res.summary["emu"]["lateness"]["p99_us"],
    }


def run_sim(c: Case, secs: int) -> dict:
    w = f'window = "{sim_window(c.window)}"\n' if c.window else ""
    text = (f'duration = "{secs + 1}s"\n' + link(c)
            + f'[[flow]]\nname = "iperf"\napp = "iperf"\nfrom = "client"\nto = "server"\n'
            + f'cc = "{SIM_CC[c.cc]}"\nduration = "{secs}s"\nstart = "0.3s"\n{w}')
    r = celltcp.run(text)
    f = r.flows.iloc[0]
    return {
        "goodput": float(f["goodput_bps"]),
        "retx": int(f["retransmitted_segments"]),
        "rtt_ms": float(f["rtt_mean_ms"]),
        "queue_ms": data_queue_ms(r.summary),
    }


def data_queue_ms(summary: dict) -> float:
    for lk in summary["links"]:
        if lk["from"] == "client":
            return float(lk["queue_delay_mean_ms"])
    raise KeyError("no client->server link direction in the summary")


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def table(rows: list[tuple[Case, dict, dict]], secs: int) -> str:
    lines = [
        f"| case | goodput kernel / celltcp (Mbit/s) | ratio | retransmissions kernel / celltcp | "
        f"mean RTT kernel / celltcp (ms) | queue delay kernel / celltcp (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for c, k, s in rows:
        lines.append(
            f"| {c.name} | {k['goodput'] / 1e6:.2f} / {s['goodput'] / 1e6:.2f} | {ratio(s['goodput'], k['goodput'])} | "
            f"{k['retx']} / {s['retx']} | {k['rtt_ms']:.1f} / {s['rtt_ms']:.1f} | "
            f"{k['queue_ms']:.1f} / {s['queue_ms']:.1f} |")
    worst = max((k["lateness_p99_us"] for _, k, _ in rows), default=0)
    lines.append("")
    lines.append(f"{secs} s per run; emulator event lateness p99 at most {worst:.0f} µs over the kernel runs.")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    ap.add_argument("--out", default=None, help="markdown file whose kernel-oracle block is replaced")
    ap.add_argument("--json", default=None, help="also write the raw numbers here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("validation/kernel/run.py: needs root for `celltcp emu` (network namespaces, TUN)")
    rows = []
    for c in cases():
        if args.only not in c.name:
            continue
        k = run_kernel(c, args.seconds)
        s = run_sim(c, args.seconds)
        print(f"{c.name}: kernel {k}, celltcp {s}", flush=True)
        rows.append((c, k, s))
    md = table(rows, args.seconds)
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps([{"case": c.name, "kernel": k, "celltcp": s} for c, k, s in rows], indent=1))
    if args.out:
        p = Path(args.out)
        text = p.read_text()
        a, b = "<!-- kernel-oracle:begin -->", "<!-- kernel-oracle:end -->"
        if a not in text or b not in text:
            raise SystemExit(f"--out {p}: expected the markers {a} and {b}")
        head, rest = text.split(a, 1)
        _, tail = rest.split(b, 1)
        p.write_text(head + a + "\n" + md + "\n" + b + tail)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
