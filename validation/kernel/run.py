"""The kernel as the oracle (issue 12): Linux's own TCP through `celltcp emu` beside celltcp's
TCP through `celltcp run`, on the same links.

    sudo PYTHONPATH=python python3 validation/kernel/run.py [--seconds 10] [--repeats 3]
        [--only SUBSTR] [--out docs/validation.md] [--json validation/kernel/results.json]
        [--reuse-kernel validation/kernel/results.json] [--keep DIR]

For every case the same scenario runs twice per repeat:

- **kernel**: `celltcp emu` with one iperf3 per flow (`-C <cc>`, `-w` where the case has one,
  each on its own port) between two real hosts (network namespaces whose kernel TCP is the
  host's, Linux 6.x) and `ping -i 0.2` beside them in the client's namespace; goodput is
  iperf3's `sum_received`, retransmissions its `sum_sent.retransmits`, the mean RTT the sender's
  `mean_rtt` (tcp_info's smoothed RTT once per 1 s interval, averaged), the RTO count the client
  namespace's `TcpExtTCPTimeouts` (`nstat`) after the flows ended, ping under load ping's mean;
- **celltcp**: `celltcp run` with one `iperf` flow per kernel flow (same length, cc (the kernel's
  reno as `newreno` with `ssthresh_from_cwnd = true`, Linux's `tcp_reno_ssthresh`), `window`,
  and `quickack = 16`, Linux's quick-ACK start; every other TCP setting is celltcp's default,
  which is Linux's) and a `ping` flow (every 200 ms) beside them; goodput, retransmitted
  segments as iperf3 counts them (`test_retransmits`: up to the test's end, the sum of the
  `iperf` interval reports; iperf3 reads `tcpi_total_retrans` at its last stats callback, at the
  test's end, while celltcp's sender goes on emptying its send buffer for up to ~0.7 s and the
  summary's `retransmitted_segments` counts those too: kept as `retx_all`), `timeouts`, and the
  mean RTT as iperf3 takes it: the sender's smoothed RTT from the `tcp` series once per second,
  averaged (`iperf3_mean_rtt`; the summary's mean of all RTT samples, one per ACK, is kept as
  `rtt_samples_mean_ms`).

Where CUBIC left slow start is recorded per repeat: the kernel's HyStart exits from the client
namespace's `nstat` (TcpExtTCPHystart{Train,Delay}{Detect,Cwnd}: how many exits by ACK train
and by delay, and the sum of cwnd at them, `hystart_update` in tcp_cubic.c) and celltcp's first
ssthresh from the `tcp` series (its cwnd in segments, the time, HyStart or loss); a third table
lists them per seed beside each run's queue delay.

The standing queue is the bottleneck queue's mean sojourn time (`queue_delay_mean_ms` of the
data direction of the link, the emulated link's own queue in both runs). Two-flow cases add
each flow's goodput, the first flow's share of the sum and Jain's index of the two.

Each repeat uses another seed (`seed = 1 + repeat`) in both runs, so the random losses differ
between repeats; a kernel run whose emulator lateness p99 exceeds 1 ms is run again (up to
twice; the table's footer counts them). The tables (mean and min-max over the repeats) go to
stdout and, with `--out`, replace the block between the markers `<!-- kernel-oracle:begin -->`
and `<!-- kernel-oracle:end -->` of that file. `--reuse-kernel FILE` takes the kernel runs from
an earlier `--json` file (same cases and repeats) and runs only celltcp's side again.

Needs root, /dev/net/tun, iperf3, ping, nstat and the kernel's reno/cubic/bbr (see
docs/emulation.md). Not part of CI: it takes real time (about 15 s per case and repeat) and its
kernel numbers depend on the host.

`--keep DIR` keeps every run's output directory, DIR/<case>/seed<N>/kernel (the emulator's
summary.json and timeseries/*.parquet, iperf3's JSON, ping's and nstat's output) and
DIR/<case>/seed<N>/celltcp (`celltcp run`'s), to compare the two over time: the queue's length
every 10 ms (`timeseries/queue.parquet`), the senders' interval reports (iperf3's `intervals`,
celltcp's `timeseries/iperf.parquet`, every 100 ms with `--keep` instead of every second: cwnd,
RTT and retransmissions per interval on both sides). The interval changes the reports and
the mean RTT's sampling (iperf3 averages its srtt per interval; celltcp's side follows).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import struct
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import celltcp  # noqa: E402
import celltcp.api  # noqa: E402

# celltcp's counterparts of the kernel's algorithms (TOML values of `cc`): the kernel's Reno halves
# cwnd on a loss (`tcp_reno_ssthresh`), celltcp's newreno FlightSize unless told otherwise
SIM_CC = {"cubic": '"cubic"', "reno": '{ name = "newreno", ssthresh_from_cwnd = true }', "bbr": '"bbr"'}
PING_INTERVAL_S = 0.2
LATENESS_LIMIT_US = 1000.0
MAX_RERUNS = 2


@dataclass
class Case:
    name: str
    rate: str
    delay: str  # one way
    queue: str
    ccs: tuple[str, ...]  # one flow per entry, all from client to server
    window: str | None = None  # iperf3 -w / celltcp `window`
    loss: float = 0.0  # on the data direction only

    @property
    def two_flow(self) -> bool:
        return len(self.ccs) > 1


def cases() -> list[Case]:
    out: list[Case] = []
    for cc in ("cubic", "reno", "bbr"):
        # 10 Mbit/s, 50 ms RTT: BDP 62.5 kB = 42 packets of 1500 B
        out.append(Case(f"10M/50ms, 1 BDP (42p), {cc}", "10Mbps", "25ms", "42p", (cc,)))
        out.append(Case(f"10M/50ms, 1000p, {cc}", "10Mbps", "25ms", "1000p", (cc,)))
        out.append(Case(f"10M/50ms, 5p, {cc}", "10Mbps", "25ms", "5p", (cc,)))
    for w in ("64K", "128K", "256K"):
        out.append(Case(f"100M/50ms, -w {w}, cubic", "100Mbps", "25ms", "1000p", ("cubic",), window=w))
    for cc in ("cubic", "reno", "bbr"):
        for p in (1e-3, 1e-4):
            out.append(Case(f"100M/100ms, loss {p:g} (data), {cc}", "100Mbps", "50ms", "1000p", (cc,), loss=p))
    for other in ("reno", "bbr"):
        for q, label in (("42p", "1 BDP (42p)"), ("1000p", "1000p")):
            out.append(Case(f"10M/50ms, {label}, cubic+{other}", "10Mbps", "25ms", q, ("cubic", other)))
    return out


def ping_count(secs: int) -> int:
    """Echo requests over the test's length, one every PING_INTERVAL_S."""
    return round(secs / PING_INTERVAL_S)


def link(c: Case, pcap: bool = False) -> str:
    loss = f"loss = {{ forward = {c.loss!r}, reverse = 0 }}\n" if c.loss else ""
    cap = "pcap = true\n" if pcap else ""
    return (f'[[link]]\nbetween = ["client", "server"]\nrate = "{c.rate}"\ndelay = "{c.delay}"\n'
            f'queue = "{c.queue}"\n{loss}{cap}')


def sim_window(w: str) -> str:
    return w.replace("K", "KB").replace("M", "MB")  # celltcp: KB = 1024 B, as iperf3 K


# ---- the kernel's side -------------------------------------------------------------------

def case_dir(keep: Path | None, c: Case, seed: int, side: str) -> Path | None:
    """With --keep: where this run's output directory goes (the case's name as a file name)."""
    if keep is None:
        return None
    return keep / re.sub(r"[^A-Za-z0-9.+-]+", "_", c.name).strip("_") / f"seed{seed}" / side


def kernel_scenario(c: Case, secs: int, seed: int, d: Path, interval: str = "") -> str:
    """The emulated scenario: one iperf3 server per flow, and on the client one shell line that
    starts the flows and ping together, waits for them and then reads the RTO counter."""
    w = f" -w {c.window}" if c.window else ""
    # two flows: the link's capture tells when each iperf3 client's data began (data_starts)
    text = f'duration = "{secs + 5}s"\nseed = {seed}\n' + link(c, pcap=c.two_flow) + f'[emu]\ncc = "{c.ccs[0]}"\n'
    client = []
    for i, cc in enumerate(c.ccs):
        port = 5201 + i
        text += f'[[exec]]\nnode = "server"\ncmd = "iperf3 -s -1 -p {port}"\nbackground = true\n'
        client.append(f"iperf3 -c {{addr:server}} -p {port} -t {secs} -C {cc}{w}{interval} -J > {d}/flow{i}.json &")
    client.append(f"ping -n -q -i {PING_INTERVAL_S} -c {ping_count(secs)} -w {secs + 2} {{addr:server}} > {d}/ping.txt &")
    client.append(f"wait; nstat -asz {' '.join(NSTAT_COUNTERS)} > {d}/nstat.txt")
    text += f'[[exec]]\nnode = "client"\ncmd = "{" ".join(client)}"\nstart = "0.3s"\n'
    return text


def data_starts(pcap: Path, ports: list[int], min_payload: int = 536) -> list[float]:
    """When the first full-sized data segment (payload >= min_payload bytes, so not iperf3's
    37-byte cookie nor its control messages) towards each of `ports` crossed the link, in
    seconds from the capture's start: the capture is celltcp's (pcap with nanosecond stamps,
    LINKTYPE_RAW IPv4 packets, docs/outputs.md)."""
    data = pcap.read_bytes()
    magic = data[:4]
    if magic not in (b"\x4d\x3c\xb2\xa1", b"\xd4\xc3\xb2\xa1"):
        raise ValueError(f"{pcap}: expected a little-endian pcap file, got magic {magic.hex()}")
    scale = 1e-9 if magic == b"\x4d\x3c\xb2\xa1" else 1e-6
    first: dict[int, float] = {}
    off = 24
    while off + 16 <= len(data) and len(first) < len(ports):
        sec, frac, incl, _ = struct.unpack_from("<IIII", data, off)
        pkt = data[off + 16: off + 16 + incl]
        off += 16 + incl
        if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != 6:
            continue
        ihl = (pkt[0] & 15) * 4
        total = struct.unpack_from(">H", pkt, 2)[0]
        if len(pkt) < ihl + 20:
            continue
        dport = struct.unpack_from(">H", pkt, ihl + 2)[0]
        doff = (pkt[ihl + 12] >> 4) * 4
        if dport in ports and dport not in first and total - ihl - doff >= min_payload:
            first[dport] = sec + frac * scale
    missing = [q for q in ports if q not in first]
    if missing:
        raise ValueError(f"{pcap}: no data segment to port(s) {missing}")
    return [first[q] for q in ports]


def parse_iperf3(text: str) -> dict:
    """One iperf3 -J client report: goodput (receiver), retransmissions, mean smoothed RTT."""
    rep = json.loads(text)
    if "error" in rep:
        raise RuntimeError(f"iperf3: {rep['error']}")
    end = rep["end"]
    snd = end["streams"][0]["sender"]
    return {
        "goodput": float(end["sum_received"]["bits_per_second"]),
        "retx": int(end["sum_sent"].get("retransmits", 0)),
        "rtt_ms": snd.get("mean_rtt", 0) / 1000.0,
    }


PING_RTT = re.compile(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")


def parse_ping(text: str) -> float:
    """Mean RTT (ms) from ping's summary line."""
    m = PING_RTT.search(text)
    if not m:
        raise ValueError(f"ping output: expected a line 'rtt min/avg/max/mdev = ...', got {text!r}")
    return float(m.group(2))


# what the client namespace's `nstat` reports after the flows: the RTO count, and how slow start
# ended in tcp_cubic.c's `hystart_update` (each exit adds 1 to ...Detect and cwnd, in segments,
# to ...Cwnd; a CUBIC flow that leaves slow start by a loss adds to neither)
NSTAT_COUNTERS = ("TcpExtTCPTimeouts", "TcpExtTCPHystartTrainDetect", "TcpExtTCPHystartTrainCwnd",
                  "TcpExtTCPHystartDelayDetect", "TcpExtTCPHystartDelayCwnd")


def parse_nstat(text: str, counter: str = "TcpExtTCPTimeouts") -> int:
    """A counter's value from `nstat -asz COUNTER` (`NAME  VALUE  RATE`)."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == counter:
            return int(parts[1])
    raise ValueError(f"nstat output: expected a line '{counter} <value>', got {text!r}")


def parse_hystart(text: str) -> dict:
    """The kernel's HyStart exits from `nstat -asz NSTAT_COUNTERS`: how many by ACK train and
    by delay, and the sum of cwnd (segments) at each kind."""
    return {"train": parse_nstat(text, "TcpExtTCPHystartTrainDetect"),
            "train_cwnd": parse_nstat(text, "TcpExtTCPHystartTrainCwnd"),
            "delay": parse_nstat(text, "TcpExtTCPHystartDelayDetect"),
            "delay_cwnd": parse_nstat(text, "TcpExtTCPHystartDelayCwnd")}


def hystart_exit(h: dict) -> str:
    """A run's HyStart exits as a table cell: `train 63`, `delay 88`, `train 70 + 95` (two
    flows: the cwnd of each exit is known only as their sum, so a mean per exit), `-` (none)."""
    parts = []
    for kind in ("train", "delay"):
        n, cw = h.get(kind, 0), h.get(f"{kind}_cwnd", 0)
        if n == 1:
            parts.append(f"{kind} {cw}")
        elif n > 1:
            parts.append(f"{kind} {n}× {cw / n:.0f}")
    return ", ".join(parts) or "-"


def shares(goodputs: list[float]) -> tuple[float, float]:
    """The first flow's share of the sum and Jain's index (sum x)^2 / (n sum x^2)."""
    tot = sum(goodputs)
    sq = sum(g * g for g in goodputs)
    if tot <= 0 or sq <= 0:
        return 0.0, 0.0
    return goodputs[0] / tot, tot * tot / (len(goodputs) * sq)


def summarize(flows: list[dict], rto: int, ping_ms: float, queue_ms: float) -> dict:
    share, jain = shares([f["goodput"] for f in flows])
    return {
        "flows": flows,
        "goodput": sum(f["goodput"] for f in flows),
        "retx": sum(f["retx"] for f in flows),
        "rto": rto,
        "rtt_ms": flows[0]["rtt_ms"],
        "ping_ms": ping_ms,
        "queue_ms": queue_ms,
        "share": share,
        "jain": jain,
    }


def run_kernel_once(c: Case, secs: int, seed: int, keep: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="kern-oracle-") as d:
        dp = Path(d)
        os.chmod(dp, 0o777)
        interval = " -i 0.1" if keep else ""
        res = celltcp.api.execute(kernel_scenario(c, secs, seed, dp, interval), out=dp / "o",
                                  emu=celltcp.api.EmuArgs())
        flows = []
        for i, cc in enumerate(c.ccs):
            f = parse_iperf3((dp / f"flow{i}.json").read_text())
            f["cc"] = cc
            flows.append(f)
        nstat = (dp / "nstat.txt").read_text()
        out = summarize(flows, parse_nstat(nstat), parse_ping((dp / "ping.txt").read_text()),
                        data_queue_ms(res.summary))
        out["hystart"] = parse_hystart(nstat)
        if c.two_flow:
            # which iperf3 client began first, and by how much, is the host's draw: celltcp's
            # side starts its flows alike (run_sim)
            t = data_starts(dp / "o" / "pcap" / "client-server.pcap", [5201 + i for i in range(len(c.ccs))])
            out["flow_starts_ms"] = [round((x - min(t)) * 1e3, 3) for x in t]
        if keep is not None:
            kd = case_dir(keep, c, seed, "kernel")
            if kd.exists():
                shutil.rmtree(kd)
            kd.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(dp, kd)
    out["lateness_p99_us"] = float(res.summary["emu"]["lateness"]["p99_us"])
    return out


def run_kernel(c: Case, secs: int, seed: int, keep: Path | None = None) -> dict:
    """A kernel run, again (at most MAX_RERUNS times) while the emulator ran late."""
    reruns = 0
    while True:
        load = os.getloadavg()[0]
        k = run_kernel_once(c, secs, seed, keep)
        k["load1"] = load
        if k["lateness_p99_us"] <= LATENESS_LIMIT_US or reruns >= MAX_RERUNS:
            k["reruns"] = reruns
            return k
        print(f"  {c.name}: lateness p99 {k['lateness_p99_us']:.0f} µs > 1 ms at load {load:.1f}; again",
              flush=True)
        reruns += 1


# ---- celltcp's side ----------------------------------------------------------------------

SIM_START_S = 0.3  # celltcp's flows start here, as the kernel's iperf3 clients do


def sim_scenario(c: Case, secs: int, seed: int, interval: str = "",
                 starts_ms: list[float] | None = None) -> str:
    """celltcp's scenario; `starts_ms`: each flow's start after the first's (the kernel run's
    `flow_starts_ms`), all at SIM_START_S without it."""
    w = f'window = "{sim_window(c.window)}"\n' if c.window else ""
    text = f'duration = "{secs + 1}s"\nseed = {seed}\n' + link(c)
    for i, cc in enumerate(c.ccs):
        start_us = round(SIM_START_S * 1e6 + (starts_ms[i] * 1e3 if starts_ms else 0))
        text += (f'[[flow]]\nname = "iperf{i}"\napp = "iperf"\nfrom = "client"\nto = "server"\n'
                 f'cc = {SIM_CC[cc]}\nduration = "{secs}s"\nstart = "{start_us}us"\nquickack = 16\n{w}{interval}')
    text += (f'[[flow]]\nname = "ping"\napp = "ping"\nfrom = "client"\nto = "server"\n'
             f'interval = "{int(PING_INTERVAL_S * 1000)}ms"\ncount = {ping_count(secs)}\nstart = "0.3s"\n')
    return text


IPERF3_INTERVAL_S = 1.0  # iperf3's stats interval (`-i`, default 1 s)


def iperf3_mean_rtt(times: list[float], srtt_ms: list[float], secs: int,
                    interval: float = IPERF3_INTERVAL_S) -> float:
    """The sender's smoothed RTT averaged as iperf3 3.12 averages `tcpi_rtt` into `mean_rtt`:
    `iperf_stats_callback` adds the socket's srtt once per stats interval, at 1, 2, ... s after
    the test's timers started (the last, at the test's end, from the end-of-test callback; the
    stats timer of that instant finds the test done), and divides by the count. Here the
    samples are the series `times` / `srtt_ms` (the `tcp` series, every 10 ms), the timers start
    at the flow's first RTT sample (its handshake, when its data starts), and each tick takes the
    last row at or before it."""
    t0 = next((t for t, r in zip(times, srtt_ms) if r > 0), None)
    if t0 is None:
        raise ValueError("iperf3_mean_rtt: the series has no RTT sample (srtt_ms > 0)")
    picked = []
    j = 0
    for k in range(1, round(secs / interval) + 1):
        tick = t0 + k * interval + 1e-9
        while j + 1 < len(times) and times[j + 1] <= tick:
            j += 1
        picked.append(srtt_ms[j])
    return sum(picked) / len(picked)


MSS = 1448  # both sides' MSS on these 1500-byte links: 40 bytes of headers, 12 of timestamps
UNSET_SSTHRESH = 2.0 ** 62  # the `tcp` series' ssthresh_bytes at or above this: not yet set


def slow_start_exit(times: list[float], cwnd: list[float], ssthresh: list[float]) -> dict | None:
    """Where a celltcp flow left its first slow start, from its `tcp` series: the first row with
    ssthresh set. HyStart sets ssthresh = cwnd and congestion avoidance grows cwnd slowly from
    there (`hystart_update`), so ssthresh is at least the row before's cwnd and the row's cwnd
    at most 10 % above it; a loss sets it to β·cwnd, below the cwnd of the loss (which the row
    before or the row itself still shows, as recovery brings cwnd down over a round trip).
    Returns ssthresh in segments, the time and "hystart" or "loss"; None if slow start never
    ended."""
    for i, (t, st) in enumerate(zip(times, ssthresh)):
        if st < UNSET_SSTHRESH:
            prev = cwnd[i - 1] if i > 0 else cwnd[i]
            hystart = st >= prev and cwnd[i] <= 1.1 * st
            return {"cwnd": round(st / MSS, 1), "time_s": round(t, 3), "by": "hystart" if hystart else "loss"}
    return None


def test_retransmits(iperf_flow: list[str], iperf_retx: list[float], flow: str) -> int:
    """A celltcp iperf flow's retransmissions as iperf3 reports them: the sum of its interval
    reports (the `iperf` table's rows of flow `flow`), which end at the test's end. iperf3 3.12
    adds each interval's `tcpi_total_retrans` increase and stops at its last stats callback, at
    the test's end; what the sender retransmits afterwards, emptying its send buffer, is not in
    it."""
    rows = [r for f, r in zip(iperf_flow, iperf_retx) if f == flow]
    if not rows:
        raise ValueError(f"test_retransmits: no iperf interval report of flow {flow!r}")
    return int(sum(rows))


def run_sim(c: Case, secs: int, seed: int, keep: Path | None = None,
            starts_ms: list[float] | None = None) -> dict:
    sd = case_dir(keep, c, seed, "celltcp")
    interval = 'interval = "100ms"\n' if keep else ""
    if sd is not None:
        sd.parent.mkdir(parents=True, exist_ok=True)
    r = celltcp.run(sim_scenario(c, secs, seed, interval, starts_ms), out=sd, overwrite=True)
    by = {f["name"]: f for f in r.summary["flows"]}
    tcp = r.timeseries("tcp")
    ip = r.timeseries("iperf")
    flows = []
    rto = 0
    for i, cc in enumerate(c.ccs):
        f = by[f"iperf{i}"]
        ts = tcp[tcp["flow_name"] == f"iperf{i}"]
        retx = test_retransmits(ip["flow_name"].astype(str).tolist(), ip["retransmits"].tolist(), f"iperf{i}")
        flows.append({"cc": cc, "start_s": SIM_START_S + (starts_ms[i] / 1e3 if starts_ms else 0.0),
                      "goodput": float(f["goodput_bps"]), "retx": retx,
                      "retx_all": int(f["retransmitted_segments"]),
                      "rtt_ms": iperf3_mean_rtt(ts["time_s"].tolist(), ts["srtt_ms"].tolist(), secs,
                                            0.1 if keep else IPERF3_INTERVAL_S),
                      "rtt_samples_mean_ms": float(f["rtt_mean_ms"]),
                      "ss_exit": slow_start_exit(ts["time_s"].tolist(), ts["cwnd_bytes"].tolist(),
                                                 ts["ssthresh_bytes"].tolist())})
        rto += int(f["timeouts"])
    return summarize(flows, rto, float(by["ping"]["rtt_mean_ms"]), data_queue_ms(r.summary))


def data_queue_ms(summary: dict) -> float:
    for lk in summary["links"]:
        if lk["from"] == "client":
            return float(lk["queue_delay_mean_ms"])
    raise KeyError("no client->server link direction in the summary")


# ---- the tables ----------------------------------------------------------------------------

def stat(runs: list[dict], get) -> tuple[float, float, float]:
    xs = [float(get(r)) for r in runs]
    return sum(xs) / len(xs), min(xs), max(xs)


def fmt(st: tuple[float, float, float], prec: int, scale: float = 1.0) -> str:
    m, lo, hi = (x / scale for x in st)
    # a count's mean keeps one decimal when the repeats differ (0.7 RTOs, not 1)
    mp = 1 if prec == 0 and m != round(m) else prec
    if lo == hi:
        return f"{m:.{mp}f}"
    return f"{m:.{mp}f} ({lo:.{prec}f}–{hi:.{prec}f})"


def pair(rep: list[dict], get, prec: int, scale: float = 1.0) -> str:
    return (f"{fmt(stat([r['kernel'] for r in rep], get), prec, scale)} / "
            f"{fmt(stat([r['celltcp'] for r in rep], get), prec, scale)}")


def ratio(rep: list[dict], get) -> str:
    k = stat([r["kernel"] for r in rep], get)[0]
    s = stat([r["celltcp"] for r in rep], get)[0]
    return f"{s / k:.2f}" if k else "-"


def flow_get(i: int, key: str):
    return lambda r: r["flows"][i][key]


def tables(rows: list[tuple[Case, list[dict]]], secs: int) -> str:
    one = [(c, rep) for c, rep in rows if not c.two_flow]
    two = [(c, rep) for c, rep in rows if c.two_flow]
    lines: list[str] = []
    counts = "retransmissions kernel / celltcp | RTOs kernel / celltcp | "
    delays = "ping under load kernel / celltcp (ms) | queue delay kernel / celltcp (ms) |"
    if one:
        lines += [
            "| case | goodput kernel / celltcp (Mbit/s) | ratio | " + counts
            + "mean RTT kernel / celltcp (ms) | " + delays,
            "|---|---|---|---|---|---|---|---|",
        ]
        for c, rep in one:
            lines.append(
                f"| {c.name} | {pair(rep, lambda r: r['goodput'], 2, 1e6)} | {ratio(rep, lambda r: r['goodput'])} | "
                f"{pair(rep, lambda r: r['retx'], 0)} | {pair(rep, lambda r: r['rto'], 0)} | "
                f"{pair(rep, lambda r: r['rtt_ms'], 1)} | {pair(rep, lambda r: r['ping_ms'], 1)} | "
                f"{pair(rep, lambda r: r['queue_ms'], 1)} |")
    if two:
        if lines:
            lines.append("")
        lines += [
            "| two flows | CUBIC's goodput kernel / celltcp (Mbit/s) | other's goodput kernel / celltcp (Mbit/s) | "
            "CUBIC's share kernel / celltcp | Jain's index kernel / celltcp | sum kernel / celltcp (Mbit/s) | "
            + counts + delays,
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c, rep in two:
            lines.append(
                f"| {c.name} | {pair(rep, flow_get(0, 'goodput'), 2, 1e6)} | {pair(rep, flow_get(1, 'goodput'), 2, 1e6)} | "
                f"{pair(rep, lambda r: r['share'], 2)} | {pair(rep, lambda r: r['jain'], 2)} | "
                f"{pair(rep, lambda r: r['goodput'], 2, 1e6)} | "
                f"{pair(rep, lambda r: r['retx'], 0)} | {pair(rep, lambda r: r['rto'], 0)} | "
                f"{pair(rep, lambda r: r['ping_ms'], 1)} | {pair(rep, lambda r: r['queue_ms'], 1)} |")
    cubic = [(c, rep) for c, rep in rows if c.ccs[0] == "cubic"]
    if cubic:
        lines += ["", exits_table(cubic)]
    ks = [r["kernel"] for _, rep in rows for r in rep]
    n = max((len(rep) for _, rep in rows), default=0)
    if ks:
        late = [k["lateness_p99_us"] for k in ks]
        loads = [k.get("load1", float("nan")) for k in ks]
        reruns = sum(k.get("reruns", 0) for k in ks)
        lines.append("")
        lines.append(
            f"{secs} s per run, {n} repeats per case (seeds 1–{n}): mean (min–max) over the repeats. "
            f"Emulator event lateness p99 over the kernel runs: median {sorted(late)[len(late) // 2]:.0f} µs, "
            f"at most {max(late):.0f} µs; {reruns} kernel run(s) were run again for a lateness p99 above 1 ms. "
            f"Load average (1 min) when the kernel runs started: {min(loads):.1f}–{max(loads):.1f}.")
    return "\n".join(lines)


def sim_exit(e: dict | None, start_s: float = SIM_START_S) -> str:
    if e is None:
        return "-"
    how = "" if e["by"] == "hystart" else "loss, "
    return f"{how}{e['cwnd']:.0f} ({e['time_s'] - start_s:.2f} s)"


def kernel_exit(k: dict) -> str:
    """The kernel's HyStart exit, and in a two-flow run when the other flow's data began
    relative to CUBIC's (`flow_starts_ms`; negative: before it)."""
    if "hystart" not in k:
        return "not recorded"
    cell = hystart_exit(k["hystart"])
    st = k.get("flow_starts_ms")
    if st and len(st) == 2:
        cell += f" (other {st[1] - st[0]:+.0f} ms)"
    return cell


def exits_table(rows: list[tuple[Case, list[dict]]]) -> str:
    """Where the CUBIC flow left slow start in each repeat (seeds in order): the kernel's
    HyStart exits from nstat, celltcp's first ssthresh (segments; the time after the flow's start),
    beside each repeat's queue delay."""
    lines = ["| CUBIC's slow-start exit | kernel: HyStart exit, cwnd (nstat), per seed | "
             "celltcp: ssthresh set at, segments (time), per seed | queue delay per seed, kernel / celltcp (ms) |",
             "|---|---|---|---|"]
    for c, rep in rows:
        kern = "; ".join(kernel_exit(r["kernel"]) for r in rep)
        sim = "; ".join(sim_exit(r["celltcp"]["flows"][0].get("ss_exit"),
                                 r["celltcp"]["flows"][0].get("start_s", SIM_START_S)) for r in rep)
        q = "; ".join(f"{r['kernel']['queue_ms']:.0f} / {r['celltcp']['queue_ms']:.0f}" for r in rep)
        lines.append(f"| {c.name} | {kern} | {sim} | {q} |")
    return "\n".join(lines)


METRICS = [("goodput (Mbit/s)", lambda r: r["goodput"] / 1e6), ("retransmissions", lambda r: r["retx"]),
           ("RTOs", lambda r: r["rto"]), ("mean RTT", lambda r: r["rtt_ms"]),
           ("ping", lambda r: r["ping_ms"]), ("queue delay", lambda r: r["queue_ms"]),
           ("share", lambda r: r["share"]), ("Jain", lambda r: r["jain"])]


def differences(rows: list[tuple[Case, list[dict]]], limit: float = 0.15) -> list[str]:
    """Every metric whose celltcp mean differs from the kernel's by more than `limit`."""
    out = []
    for c, rep in rows:
        mets = METRICS if c.two_flow else METRICS[:6]
        if c.two_flow:
            mets = mets + [(f"{cc} goodput (Mbit/s)", lambda r, i=i: r["flows"][i]["goodput"] / 1e6)
                           for i, cc in enumerate(c.ccs)]
        for name, get in mets:
            k = stat([r["kernel"] for r in rep], get)[0]
            s = stat([r["celltcp"] for r in rep], get)[0]
            if k == s:
                continue
            rel = (s - k) / k if k else float("inf")
            if abs(rel) > limit:
                out.append(f"{c.name}: {name} kernel {k:.3g} / celltcp {s:.3g} ({rel:+.0%})")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    ap.add_argument("--out", default=None, help="markdown file whose kernel-oracle block is replaced")
    ap.add_argument("--json", default=None, help="also write the raw numbers here")
    ap.add_argument("--reuse-kernel", default=None,
                    help="take the kernel runs from this --json file; run only celltcp's side")
    ap.add_argument("--keep", default=None, type=Path,
                    help="keep every run's output directory under DIR/<case>/seed<N>/{kernel,celltcp}")
    args = ap.parse_args()
    if args.repeats < 1:
        raise SystemExit(f"validation/kernel/run.py: --repeats {args.repeats}: expected at least 1")
    old = {}
    if args.reuse_kernel:
        old = {e["case"]: e for e in json.loads(Path(args.reuse_kernel).read_text())}
    elif os.geteuid() != 0:
        raise SystemExit("validation/kernel/run.py: needs root for `celltcp emu` (network namespaces, TUN)")
    rows: list[tuple[Case, list[dict]]] = []
    for c in cases():
        if args.only not in c.name:
            continue
        rep = []
        for i in range(args.repeats):
            seed = 1 + i
            if args.reuse_kernel:
                try:
                    k = old[c.name]["repeats"][i]["kernel"]
                except (KeyError, IndexError):
                    raise SystemExit(f"--reuse-kernel {args.reuse_kernel}: no kernel run {i + 1} of case {c.name!r}")
            else:
                k = run_kernel(c, args.seconds, seed, args.keep)
            s = run_sim(c, args.seconds, seed, args.keep, k.get("flow_starts_ms"))
            print(f"{c.name} [seed {seed}]: kernel {k}, celltcp {s}", flush=True)
            rep.append({"seed": seed, "kernel": k, "celltcp": s})
        rows.append((c, rep))
    md = tables(rows, args.seconds)
    print(md)
    print("\nDifferences above 15 % (celltcp's mean against the kernel's):")
    for line in differences(rows):
        print("- " + line)
    if args.json:
        Path(args.json).write_text(json.dumps(
            [{"case": c.name, "ccs": list(c.ccs), "seconds": args.seconds, "repeats": rep} for c, rep in rows],
            indent=1) + "\n")
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
