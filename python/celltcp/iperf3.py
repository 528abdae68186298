"""Each iperf (and UDP) flow's results in iperf3's ``-J`` JSON schema, so that tools written
for iperf3 read them: ``DIR/iperf3/<flow>.json``.

The layout and field names are those iperf3 3.12 writes (``iperf_api.c``:
``iperf_json_start``, ``iperf_print_intervals``, ``iperf_print_results``): ``start`` (with
``connected``, ``connecting_to``, ``test_start``), ``intervals[]`` (``streams[]`` and ``sum``,
plus ``sum_bidir_reverse`` for ``--bidir``) and ``end`` (``streams[]`` with ``sender`` and
``receiver``, or ``udp``; ``sum_sent``, ``sum_received``, their ``_bidir_reverse`` twins, ``sum``
for UDP; ``sender_tcp_congestion``). A flow with ``parallel = N`` (iperf3 ``-P``) is one test of N
streams, numbered with the sockets iperf3 would give them (5, 7, 9, ...).

What a simulation cannot say is left out rather than made up: ``system_info``,
``cpu_utilization_percent``, ``snd_wnd``/``max_snd_wnd``, ``rttvar``, ``pmtu``, ``cookie``. Interval bytes are
what the receiving application read in the interval (iperf3's client reports what it wrote);
``omitted`` intervals (``-O``) come first, their times from the test's start, the others' from the
end of the omitted part, as iperf3 numbers them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

IPERF3_DIR = "iperf3"
#: the iperf3 release whose -J output this follows
SCHEMA_VERSION = "3.12"

_SIZE = {"b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}
_TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_RATE = {"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}


def _unit(v: Any, units: Mapping[str, float]) -> float:
    """A config-as-run value (``"128KB"``, ``"20s"``, ``"5Mbps"``) in base units; 0 if absent."""
    if v is None:
        return 0.0
    if isinstance(v, (int, float)):
        return float(v)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]+)\s*", str(v))
    if not m or m.group(2).lower() not in units:
        return 0.0
    return float(m.group(1)) * units[m.group(2).lower()]


def _num(x: Any) -> float:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(f) else f


def tests(summary: Mapping[str, Any]) -> dict[str, list[int]]:
    """The iperf tests of a run: test name -> indices of its flows (streams) in ``summary``."""
    out: dict[str, list[int]] = {}
    for i, f in enumerate(summary.get("flows", [])):
        if f.get("app") in ("iperf", "udp"):
            out.setdefault(str(f.get("test", f.get("name"))), []).append(i)
    return out


def build(test: str, summary: Mapping[str, Any], config: Mapping[str, Any],
          iperf_rows: Sequence[Mapping[str, Any]], cwnd_max: Mapping[int, float] | None = None,
          version: str = "") -> dict[str, Any]:
    """The iperf3 ``-J`` document of ``test``. ``iperf_rows`` are the rows of the run's
    ``iperf`` table (any order), ``cwnd_max`` the largest cwnd of each TCP flow index."""
    flows = summary.get("flows", [])
    idx = tests(summary)[test]
    first = flows[idx[0]]
    cfg: Mapping[str, Any] = next((c for c in config.get("flow", []) if c.get("name") == test), {})
    udp = first.get("app") == "udp"
    sockets = {i: 5 + 2 * k for k, i in enumerate(idx)}
    # a stream "sends" when the data goes from the client, as iperf3's `sender` flag says
    sends = {i: not flows[i].get("reverse", False) for i in idx}
    bidir = len(set(sends.values())) > 1
    omit = _num(first.get("omit_s"))
    rows: dict[int, list[Mapping[str, Any]]] = {i: [] for i in idx}
    for r in iperf_rows:
        if int(r["flow"]) in rows:
            rows[int(r["flow"])].append(r)
    for i in idx:
        rows[i].sort(key=lambda r: float(r["start_s"]))
    start_s = float(first.get("start_s", 0.0))

    def rel(t: float, omitted: bool) -> float:
        return round(t - start_s - (0.0 if omitted else omit), 6)

    def interval_entry(i: int, r: Mapping[str, Any]) -> dict[str, Any]:
        omitted = bool(_num(r.get("omitted")))
        s, e = rel(float(r["start_s"]), omitted), rel(float(r["end_s"]), omitted)
        d: dict[str, Any] = {"socket": sockets[i], "start": s, "end": e, "seconds": e - s,
                             "bytes": int(_num(r["bytes"])),
                             "bits_per_second": _num(r["bits_per_second"])}
        if udp:
            packets, lost = int(_num(r.get("packets"))), int(_num(r.get("lost_packets")))
            d.update(packets=packets, jitter_ms=_num(r.get("jitter_ms")), lost_packets=lost,
                     lost_percent=100.0 * lost / packets if packets else 0.0)
        elif sends[i]:
            # iperf3's client knows the retransmissions of the streams it sends only
            d["retransmits"] = int(_num(r.get("retransmits")))
        d.update(omitted=omitted, sender=sends[i])
        return d

    def total(entries: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
        s = {k: entries[0][k] for k in ("start", "end", "seconds")}
        s["end"] = max(e["end"] for e in entries)
        s["seconds"] = s["end"] - s["start"]
        byt = sum(e["bytes"] for e in entries)
        s.update(bytes=byt, bits_per_second=byt * 8.0 / s["seconds"] if s["seconds"] > 0 else 0.0)
        for k in (k for k in keys if k in entries[0]):
            if k == "jitter_ms":
                s[k] = sum(e[k] for e in entries) / len(entries)
            elif k == "lost_percent":
                s[k] = 100.0 * s["lost_packets"] / s["packets"] if s.get("packets") else 0.0
            else:
                s[k] = sum(e[k] for e in entries)
        return s

    extra = ("packets", "jitter_ms", "lost_packets", "lost_percent") if udp else ("retransmits",)
    intervals = []
    for k in range(max(len(rows[i]) for i in idx)):
        streams = [interval_entry(i, rows[i][k]) for i in idx if k < len(rows[i])]
        entry: dict[str, Any] = {"streams": streams}
        for key, want in (("sum", True), ("sum_bidir_reverse", False)):
            part = [s for s in streams if s["sender"] == want or not bidir]
            if part and (key == "sum" or bidir):
                sm = total(part, extra)
                sm.update(omitted=part[0]["omitted"], sender=part[0]["sender"])
                entry[key] = sm
        intervals.append(entry)

    # end: the test's totals, without the omitted intervals
    end: dict[str, Any] = {"streams": []}
    per: dict[int, dict[str, Any]] = {}
    for i in idx:
        f = flows[i]
        kept = [r for r in rows[i] if not _num(r.get("omitted"))]
        omitted_bytes = sum(_num(r["bytes"]) for r in rows[i] if _num(r.get("omitted")))
        if omit > 0 or not f.get("active_s"):
            # as summary.json's goodput_bps with `omit`: the intervals after the omitted part
            secs = sum(float(r["end_s"]) - float(r["start_s"]) for r in kept)
            recv_bytes = int(sum(_num(r["bytes"]) for r in kept))
        else:
            secs = float(f["active_s"])
            recv_bytes = int(_num(f.get("bytes_delivered")))
        base = {"socket": sockets[i], "start": 0, "end": secs, "seconds": secs}
        if udp:
            size = _unit(cfg.get("size"), _SIZE) or 1448
            sent = int(_num(f.get("datagrams_sent")))
            lost = sum(int(_num(r.get("lost_packets"))) for r in kept)
            packets = sum(int(_num(r.get("packets"))) for r in kept)
            u = dict(base, bytes=recv_bytes, bits_per_second=recv_bytes * 8.0 / secs if secs > 0 else 0.0,
                     jitter_ms=_num(f.get("jitter_ms")), lost_packets=lost, packets=packets,
                     lost_percent=100.0 * lost / packets if packets else 0.0,
                     out_of_order=int(_num(f.get("out_of_order"))), sender=sends[i])
            end["streams"].append({"udp": u})
            per[i] = {"recv": u, "sent": dict(u, bytes=int(sent * size), packets=sent, lost_packets=0,
                                               jitter_ms=0.0, lost_percent=0.0,
                                               bits_per_second=sent * size * 8.0 / secs if secs > 0 else 0.0)}
        else:
            sent_bytes = int(_num(f.get("bytes_sent")) - omitted_bytes)
            # iperf3 adds each reported interval's retransmissions (tcpi_total_retrans increases)
            # after the omitted ones, up to the test's end: what the sender resends afterwards,
            # emptying its buffer, is not in its end figure (validation/kernel/run.py does the same)
            retx = (sum(int(_num(r.get("retransmits"))) for r in kept) if kept
                    else int(_num(f.get("retransmitted_segments"))))
            snd = dict(base, bytes=sent_bytes, bits_per_second=sent_bytes * 8.0 / secs if secs > 0 else 0.0,
                       retransmits=retx)
            if cwnd_max and i in cwnd_max:
                snd["max_snd_cwnd"] = int(cwnd_max[i])
            for key, k2 in (("max_rtt", "rtt_max_ms"), ("min_rtt", "rtt_min_ms"), ("mean_rtt", "rtt_mean_ms")):
                if f.get(k2) is not None:
                    snd[key] = int(round(float(f[k2]) * 1000))  # iperf3 writes microseconds
            snd["sender"] = sends[i]
            rcv = dict(base, bytes=recv_bytes, bits_per_second=recv_bytes * 8.0 / secs if secs > 0 else 0.0,
                       sender=sends[i])
            end["streams"].append({"sender": snd, "receiver": rcv})
            per[i] = {"sent": snd, "recv": rcv}

    def end_sum(ids: list[int], which: str) -> dict[str, Any]:
        parts = [per[i][which] for i in ids]
        secs = max(p["seconds"] for p in parts)
        byt = sum(p["bytes"] for p in parts)
        s: dict[str, Any] = {"start": 0, "end": secs, "seconds": secs, "bytes": byt,
                             "bits_per_second": byt * 8.0 / secs if secs > 0 else 0.0}
        if udp:
            lost, packets = sum(p["lost_packets"] for p in parts), sum(p["packets"] for p in parts)
            s.update(jitter_ms=sum(p["jitter_ms"] for p in parts) / len(parts), lost_packets=lost,
                     packets=packets, lost_percent=100.0 * lost / packets if packets else 0.0)
        elif which == "sent":
            s["retransmits"] = sum(p["retransmits"] for p in parts)
        s["sender"] = (which == "sent") if udp else sends[ids[0]]
        return s

    fwd = [i for i in idx if sends[i] or not bidir]
    rev = [i for i in idx if bidir and not sends[i]]
    if udp:
        end["sum"] = end_sum(fwd, "recv")
        end["sum"]["sender"] = sends[fwd[0]]
    end["sum_sent"] = end_sum(fwd, "sent")
    end["sum_received"] = end_sum(fwd, "recv")
    if rev:
        end["sum_sent_bidir_reverse"] = end_sum(rev, "sent")
        end["sum_received_bidir_reverse"] = end_sum(rev, "recv")
    if not udp:
        end["sender_tcp_congestion"] = end["receiver_tcp_congestion"] = first.get("cc") or "cubic"

    length = _unit(cfg.get("length"), _SIZE) or (_unit(cfg.get("size"), _SIZE) if udp else 0) or (
        1448 if udp else 131072)
    start: dict[str, Any] = {
        "connected": [{"socket": sockets[i], "local_host": flows[i].get("from"), "local_port": 0,
                       "remote_host": flows[i].get("to"), "remote_port": 5201} for i in idx],
        "version": f"celltcp {version} (iperf {SCHEMA_VERSION} JSON schema)".replace("  ", " "),
        "connecting_to": {"host": first.get("to"), "port": 5201},
    }
    if not udp:
        start["tcp_mss_default"] = int(_num(cfg.get("mss")) or 1448)
    rate = _unit(cfg.get("rate"), _RATE) or (1e6 if udp else 0)
    start.update(target_bitrate=int(rate), sock_bufsize=int(_unit(cfg.get("window"), _SIZE)))
    start["test_start"] = {
        "protocol": "UDP" if udp else "TCP",
        "num_streams": len(fwd),
        "blksize": int(length),
        "omit": omit,
        "duration": _unit(cfg.get("duration"), _TIME),
        "bytes": 0,
        "blocks": 0,
        "reverse": int(bool(first.get("reverse")) and not bidir),
        "tos": 0,
        "target_bitrate": int(rate),
    }
    if bidir:
        start["test_start"]["bidir"] = 1
    return {"start": start, "intervals": intervals, "end": end}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def write(run_dir: str | Path, summary: Mapping[str, Any], config: Mapping[str, Any],
          version: str = "") -> list[str]:
    """Writes ``run_dir/iperf3/<test>.json`` for each iperf or UDP test of a finished run whose
    time series are in ``run_dir/timeseries``; returns the files written, relative to
    ``run_dir``."""
    names = tests(summary)
    if not names:
        return []
    run_dir = Path(run_dir)
    ts = run_dir / "timeseries"
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    if (ts / "iperf.parquet").is_file():
        rows = pq.read_table(ts / "iperf.parquet").to_pylist()
    cwnd: dict[int, float] = {}
    if (ts / "tcp.parquet").is_file():
        t = pq.read_table(ts / "tcp.parquet", columns=["flow", "cwnd_bytes"])
        import pyarrow.compute as pc

        grouped = t.group_by("flow").aggregate([("cwnd_bytes", "max")]).to_pydict()
        cwnd = {int(f): float(c) for f, c in zip(grouped["flow"], grouped["cwnd_bytes_max"])
                if c is not None and not pc.is_nan(c).as_py()} if grouped["flow"] else {}
    out = run_dir / IPERF3_DIR
    out.mkdir(exist_ok=True)
    written = []
    for test in names:
        doc = build(test, summary, config, rows, cwnd, version)
        path = out / f"{_safe(test)}.json"
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        written.append(f"{IPERF3_DIR}/{path.name}")
    return written
