#!/usr/bin/env python3
"""Per-PPDU comparison of one 802.11a/g BSS in celltcp and in ns-3 3.37: who collides with whom,
and when each node transmits after the medium falls idle.

Inputs: celltcp's on-air capture (`pcap_air = true`: radiotap + 802.11, every PPDU with its start
as TSFT, collided and failed MPDUs with a bad FCS) and the trace of bench/ns3/wifi.cc --trace
(`tx <ns> <node> <kind> <bytes> <duration ns>` per PPDU, nodes numbered as in celltcp: 0 the
AP, 1 + i station i). For bench/wifi.py's g-tcp-5 case (docs/validation.md, "Wi-Fi vs ns-3"):

    celltcp run g-tcp-5.toml -o out/g5 --set wifi.0.pcap_air=true      # bench/wifi.py's scenario
    bench/ns3/build/wifi --standard=g --transport=tcp --stations=5 --duration=10 --start=2 --trace=ns3.txt
    python3 bench/wifi_trace.py --celltcp out/g5/pcap/bss.air.pcap --ns3 ns3.txt --from 3

(`python3 bench/wifi_trace.py --toml g-tcp-5 --quickack 0` prints bench/wifi.py's scenario for
celltcp.) For each simulator it prints: data PPDUs by sender and the share not acknowledged; the
overlapping PPDUs (collisions) by who collided and by the offset of the second start; TCP ACKs
per TCP segment (station data PPDUs over AP data PPDUs, both acknowledged) per second; and the
idle time before the first PPDU after a successful exchange (ACK end to the next start, µs:
DIFS + k slots), for the AP and the stations. A data PPDU counts as acknowledged when an ACK
starts SIFS after its end. Non-HT (802.11a/g) only; Python stdlib only.
"""

import argparse
import collections
import math
import os
import struct
import sys

# 802.11g / 802.11a timing, ns
PHY = {"g": {"slot": 9_000, "sifs": 10_000, "ext": 6_000}, "a": {"slot": 9_000, "sifs": 16_000, "ext": 0}}
DBPS = {6: 24, 9: 36, 12: 48, 18: 72, 24: 96, 36: 144, 48: 192, 54: 216}


def txtime_ns(psdu_bytes, mbps, ext_ns):
    """Non-HT OFDM TXTIME (IEEE 802.11-2020 §17.4.3): preamble 16 + SIGNAL 4 + 4 µs symbols."""
    return (20 + 4 * math.ceil((16 + 8 * psdu_bytes + 6) / DBPS[mbps])) * 1000 + ext_ns


def read_celltcp(path, phy):
    """The PPDUs of a celltcp air capture (radiotap TSFT, flags, rate; 802.11 frame with FCS)."""
    data = open(path, "rb").read()
    (magic,) = struct.unpack("<I", data[:4])
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        raise SystemExit(f"bench/wifi_trace.py: {path} is not a little-endian pcap file")
    off, out, last_data = 24, [], None
    while off + 16 <= len(data):
        incl = struct.unpack("<I", data[off + 8:off + 12])[0]
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        rt_len, present = struct.unpack("<HI", pkt[2:8])
        if present & 0x7 != 0x7:
            raise SystemExit("bench/wifi_trace.py: expected radiotap TSFT, flags and rate (a non-HT capture)")
        (tsft,) = struct.unpack("<Q", pkt[8:16])
        bad_fcs = bool(pkt[16] & 0x40)
        mbps = pkt[17] // 2
        mac = pkt[rt_len:]
        kind = {0x08: "data", 0x88: "data", 0xD4: "ack", 0xB4: "rts", 0xC4: "cts"}.get(mac[0], "other")
        ppdu = {"t": tsft * 1000, "kind": kind, "ok": not bad_fcs}
        ppdu["end"] = ppdu["t"] + txtime_ns(len(mac), mbps, phy["ext"])
        if kind == "data":
            ppdu["node"], last_data = mac[15], mac[9]  # TA's last octet (0 the AP, 1 + i); RA's
        else:
            ppdu["node"] = last_data  # an ACK comes from the receiver of the data before it
        out.append(ppdu)
    return out


def read_ns3(path, phy):
    out = []
    for line in open(path):
        f = line.split()
        if f and f[0] == "tx":
            t = int(f[1])
            out.append({"t": t, "end": t + int(f[5]), "node": int(f[2]), "kind": f[3], "ok": None})
    out.sort(key=lambda p: p["t"])
    for i, p in enumerate(out):
        if p["kind"] == "data":
            p["ok"] = any(q["kind"] == "ack" and abs(q["t"] - p["end"] - phy["sifs"]) <= 2_000 for q in out[i + 1:i + 6])
    return out


def busy_periods(ppdus):
    """PPDUs grouped into busy periods: overlapping PPDUs, and an ACK SIFS after its data."""
    periods, cur, end = [], [], -1
    for p in ppdus:
        if cur and (p["t"] < end or (p["kind"] == "ack" and p["t"] <= end + 20_000)):
            cur.append(p)
            end = max(end, p["end"])
            continue
        if cur:
            periods.append((cur, end))
        cur, end = [p], p["end"]
    if cur:
        periods.append((cur, end))
    return periods


def who(node):
    return "AP" if node == 0 else "STA"


def report(name, ppdus, t_from, phy):
    ppdus = [p for p in ppdus if p["t"] >= t_from]
    data = [p for p in ppdus if p["kind"] == "data"]
    lost = [p for p in data if not p["ok"]]
    by = collections.Counter(who(p["node"]) for p in data)
    lost_by = collections.Counter(who(p["node"]) for p in lost)
    print(f"{name}: {len(data)} data PPDUs (AP {by['AP']}, stations {by['STA']}), "
          f"not acknowledged {len(lost)} = {len(lost) / max(len(data), 1):.3f} (AP {lost_by['AP']}, stations {lost_by['STA']})")
    periods = busy_periods(ppdus)
    coll = [g for g, _ in periods if sum(p["kind"] == "data" for p in g) > 1]
    pairs = collections.Counter("+".join(sorted(who(p["node"]) for p in g if p["kind"] == "data")) for g in coll)
    offs = collections.Counter((g[1]["t"] - g[0]["t"]) // 1000 for g in coll)
    print(f"  collisions {len(coll)}: " + ", ".join(f"{k} {v}" for k, v in pairs.most_common()))
    print("  second start after the first, µs: " + ", ".join(f"{k}: {v}" for k, v in sorted(offs.items())))
    per_s = collections.defaultdict(collections.Counter)
    for p in data:
        if p["ok"]:
            per_s[p["t"] // 1_000_000_000][who(p["node"])] += 1
    print("  TCP ACKs per segment by second: " + ", ".join(
        f"{s}: {c['STA'] / max(c['AP'], 1):.2f}" for s, c in sorted(per_s.items())))
    gaps = {"AP": collections.Counter(), "STA": collections.Counter()}
    for (a, a_end), (b, _) in zip(periods, periods[1:]):
        ok = any(p["kind"] == "ack" for p in a) and sum(p["kind"] == "data" for p in a) == 1
        if ok and b[0]["kind"] == "data":
            gaps[who(b[0]["node"])][(b[0]["t"] - a_end) // 1000] += 1
    difs = (phy["sifs"] + 2 * phy["slot"]) // 1000
    for w, h in gaps.items():
        n = sum(h.values())
        if n:
            top = ", ".join(f"{g}: {c}" for g, c in sorted(h.items())[:8])
            print(f"  {w} first after a success ({n}): at DIFS ({difs} µs) {h[difs] / n:.3f}; µs: {top}, ...")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--celltcp", metavar="PCAP", help="celltcp's on-air capture (pcap_air)")
    ap.add_argument("--ns3", metavar="TRACE", help="bench/ns3/wifi.cc --trace output")
    ap.add_argument("--standard", choices=["a", "g"], default="g")
    ap.add_argument("--from", dest="t_from", type=float, default=3.0, help="count from this second (default 3)")
    ap.add_argument("--toml", metavar="CASE", help="print bench/wifi.py's celltcp scenario of CASE (e.g. g-tcp-5) and exit")
    ap.add_argument("--quickack", type=int, default=0, help="with --toml: the TCP flows' quickack (default 0, as bench/wifi.py)")
    args = ap.parse_args()
    if args.toml:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import wifi

        std, transport, n = wifi.parse_case(args.toml)
        print(wifi.wifi_toml(std, transport, n, 10, 2, args.quickack), end="")
        return
    if not args.celltcp and not args.ns3:
        ap.error("give --celltcp PCAP and/or --ns3 TRACE (or --toml CASE)")
    phy = PHY[args.standard]
    t_from = int(args.t_from * 1e9)
    if args.celltcp:
        report("celltcp", read_celltcp(args.celltcp, phy), t_from, phy)
    if args.ns3:
        report("ns-3", read_ns3(args.ns3, phy), t_from, phy)


if __name__ == "__main__":
    main()
