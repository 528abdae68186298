"""TCP around a handover on examples/handover.toml variants: what PDCP and RLC re-establishment
(docs/lte.md, "Re-establishment at handover") do to goodput, retransmissions and out-of-order
arrivals. Run it with two builds of the core to compare them:

    PYTHONPATH=<dir with celltcp and its _core> python3 validation/handover_reestablishment.py LABEL

prints one JSON line per variant and writes LABEL.json in the current directory.
Variants: the example (DL CUBIC, RLC AM) lossless and seamless; an uplink CUBIC flow (UE ->
server) lossless and seamless; the example with a 4 Mbit/s UDP upload beside it (uplink SDUs
reach the UE's PDCP while it is detached); RLC UM seamless downlink; and four of them again with EPA fading
(so that HARQ retransmits, and RLC receivers hold PDUs behind a gap). Around the (first) handover: goodput
from 1 s before the command to 2 s after (from the sender's delivered_bytes), TCP
retransmissions and timeouts (whole run), ACKs that carry a SACK above the cumulative ACK
(segments that arrived out of order at the receiver, within the window), RAN drops.
"""
import json
import os
import sys
import tempfile

import numpy as np
import celltcp

EX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "handover.toml")
base = open(EX).read()

UDP_UP = """
[[flow]]
name = "ul-udp"
app = "udp"
from = "ue"
to = "server"
rate = "4Mbps"
"""


def variant(fwd, up=False, rlc="am", fading=False, udp=False):
    s = base.replace('forwarding = "lossless"', f'forwarding = "{fwd}"').replace('mode = "am"', f'mode = "{rlc}"')
    s = s.replace('cc = "cubic"\nmss = 1400', 'cc = "cubic"\nmss = 1400\ntrace_segments = true')
    if fading:
        s = s.replace('shadowing = "0dB"', 'shadowing = "0dB"\nfading = "epa"')
    if up:
        s = s.replace('from = "server"\nto = "ue"', 'from = "ue"\nto = "server"')
    if udp:
        s += UDP_UP
    return s

cases = {
    "dl-am-lossless": variant("lossless"),
    "dl-am-seamless": variant("seamless"),
    "ul-am-lossless": variant("lossless", up=True),
    "ul-am-seamless": variant("seamless", up=True),
    "dl-um-seamless": variant("seamless", rlc="um"),
    "dl+ul-udp-am-lossless": variant("lossless", udp=True),
    "dl+ul-udp-am-seamless": variant("seamless", udp=True),
    "dl-am-lossless-epa": variant("lossless", fading=True),
    "dl-am-seamless-epa": variant("seamless", fading=True),
    "ul-am-lossless-epa": variant("lossless", up=True, fading=True),
    "dl-um-seamless-epa": variant("seamless", rlc="um", fading=True),
}
label = sys.argv[1]
res = {}
for name, toml in cases.items():
    with tempfile.TemporaryDirectory() as d:
        r = celltcp.run(toml, out=os.path.join(d, "o"))
        s = r.summary
        f = s["flows"][0]
        hos = s["lte"]["handovers"]
        ho = hos[0]
        t0 = ho["detach_s"]
        tcp = r.timeseries("tcp")
        tcp = tcp[tcp.flow == tcp.flow.iloc[0]]
        def deliv(t):
            return float(np.interp(t, tcp.time_s.values, tcp.delivered_bytes.values))
        win = (deliv(t0 + 2.0) - deliv(t0 - 1.0)) * 8 / 3.0
        after = (deliv(t0 + 1.0) - deliv(t0)) * 8 / 1.0
        acks = r.timeseries("acks")
        w = acks[(acks.time_s >= t0 - 1.0) & (acks.time_s <= t0 + 2.0)]
        ooo = int((w.sack > w.ack).sum())
        ue = s["lte"]["ues"][0]
        seg = r.timeseries("segments")
        sw = seg[(seg.time_s >= t0 - 1.0) & (seg.time_s <= t0 + 2.0)]
        retx_win = int(sw.retransmission.sum())
        res[name] = dict(
            handovers=len(hos), detach_s=round(t0, 4),
            goodput_mbps=round(f["goodput_bps"] / 1e6, 3),
            goodput_ho_window_mbps=round(win / 1e6, 3),
            goodput_1s_after_mbps=round(after / 1e6, 3),
            retransmitted_segments=f["retransmitted_segments"], timeouts=f["timeouts"],
            sack_acks_in_window=ooo, retx_in_window=retx_win,
            ho={k: ho[k] for k in ("sdus_forwarded", "sdus_discarded", "sdus_discarded_received", "sdus_already_received", "ul_sdus_resent", "harq_blocks_lost")},
            drops={d: {k: ue[d][k] for k in ("pdcp_sdus_dropped", "rlc_sdus_dropped", "rlc_sdus_lost")} for d in ("dl", "ul")},
            bler={d: ue[d]["first_tx_bler"] for d in ("dl", "ul")},
            udp=[{k: g[k] for k in ("datagrams_sent", "datagrams_received", "datagrams_lost", "out_of_order")} for g in s["flows"] if "datagrams_sent" in g],
        )
        print(label, name, json.dumps(res[name]), flush=True)
with open(f"{label}.json", "w") as fh:
    json.dump(res, fh, indent=1)
