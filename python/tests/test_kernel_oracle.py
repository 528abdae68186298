"""validation/kernel/run.py, the kernel oracle of issue 12: its parsers on real outputs of
iperf3 3.12, iputils ping and nstat, its share/Jain arithmetic, its tables, and a short two-flow
case run for real (kernel CUBIC + Reno through `celltcp emu`, celltcp's beside them).

The run needs what `celltcp emu` needs (test_emu.require_emu: skipped without root, failed with
CELLTCP_REQUIRE_EMU=1).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from test_emu import require_emu

ROOT = Path(__file__).resolve().parents[2]


def _oracle():
    spec = importlib.util.spec_from_file_location("kernel_oracle", ROOT / "validation" / "kernel" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kernel_oracle"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


K = _oracle()

# the parts of an iperf3 3.12 -J client report the oracle reads
IPERF3 = {
    "start": {"test_start": {"protocol": "TCP", "num_streams": 1}},
    "end": {
        "streams": [{"sender": {"bytes": 11927552, "bits_per_second": 9541228.6, "retransmits": 7,
                                "max_snd_cwnd": 120000, "max_rtt": 99123, "min_rtt": 50211,
                                "mean_rtt": 87799, "sender": True}}],
        "sum_sent": {"bytes": 11927552, "bits_per_second": 9541228.6, "retransmits": 7, "sender": True},
        "sum_received": {"bytes": 11796480, "bits_per_second": 9536042.3, "sender": True},
    },
}

PING = """PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.

--- 10.0.0.2 ping statistics ---
50 packets transmitted, 50 received, 0% packet loss, time 9803ms
rtt min/avg/max/mdev = 50.412/87.315/101.204/9.871 ms
"""

NSTAT = """#kernel
TcpExtTCPTimeouts               3                  0.0
TcpExtTCPHystartTrainDetect     1                  0.0
TcpExtTCPHystartTrainCwnd       102                0.0
TcpExtTCPHystartDelayDetect     0                  0.0
TcpExtTCPHystartDelayCwnd       0                  0.0
"""


def test_parsers_read_real_outputs() -> None:
    f = K.parse_iperf3(json.dumps(IPERF3))
    assert f == {"goodput": 9536042.3, "retx": 7, "rtt_ms": 87.799}
    assert K.parse_ping(PING) == 87.315
    assert K.parse_nstat(NSTAT) == 3
    assert K.parse_nstat("#kernel\nTcpExtTCPTimeouts 0 0.0\n") == 0
    assert K.parse_hystart(NSTAT) == {"train": 1, "train_cwnd": 102, "delay": 0, "delay_cwnd": 0}


def test_slow_start_exits() -> None:
    """The kernel's exits as nstat counts them (tcp_cubic.c `hystart_update`: +1 per exit, +cwnd),
    and celltcp's from its `tcp` series: HyStart sets ssthresh = cwnd (never below the cwnd of
    the row before), a loss β·cwnd."""
    assert K.hystart_exit({"train": 1, "train_cwnd": 63, "delay": 0, "delay_cwnd": 0}) == "train 63"
    assert K.hystart_exit({"train": 0, "train_cwnd": 0, "delay": 1, "delay_cwnd": 88}) == "delay 88"
    assert K.hystart_exit({"train": 2, "train_cwnd": 150, "delay": 0, "delay_cwnd": 0}) == "train 2× 75"
    assert K.hystart_exit({"train": 0, "train_cwnd": 0, "delay": 0, "delay_cwnd": 0}) == "-"
    unset = 2.0 ** 64
    t = [0.30, 0.31, 0.32, 0.33]
    mss = K.MSS
    # HyStart at 62 segments: ssthresh = cwnd, cwnd grows on
    e = K.slow_start_exit(t, [60 * mss, 62 * mss, 63 * mss, 64 * mss], [unset, 62 * mss, 62 * mss, 62 * mss])
    assert e == {"cwnd": 62.0, "time_s": 0.31, "by": "hystart"}
    # a loss at 100: ssthresh 70, cwnd cut
    e = K.slow_start_exit(t, [90 * mss, 100 * mss, 70 * mss, 70 * mss], [unset, unset, 70 * mss, 70 * mss])
    assert e == {"cwnd": 70.0, "time_s": 0.32, "by": "loss"}
    # a loss at 64 found 10 ms after the row with 40: ssthresh 45 is above that row's cwnd,
    # but the loss's row still has cwnd 64
    e = K.slow_start_exit(t, [40 * mss, 64 * mss, 50 * mss, 45 * mss], [unset, 45 * mss, 45 * mss, 45 * mss])
    assert e == {"cwnd": 45.0, "time_s": 0.31, "by": "loss"}
    assert K.slow_start_exit(t, [10 * mss] * 4, [unset] * 4) is None
    assert K.sim_exit({"cwnd": 62.0, "time_s": 0.84, "by": "hystart"}) == "62 (0.54 s)"
    assert K.sim_exit({"cwnd": 70.0, "time_s": 1.3, "by": "loss"}) == "loss, 70 (1.00 s)"


def _ipv4_tcp(dport: int, payload: int) -> bytes:
    """An IPv4/TCP packet (20 + 32 bytes of headers: timestamps) carrying `payload` bytes."""
    import struct
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 52 + payload, 0, 0x4000, 64, 6, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    tcp = struct.pack(">HHIIBBHHH", 40000, dport, 1, 1, 8 << 4, 0x18, 1000, 0, 0) + bytes(12)
    return ip + tcp + bytes(payload)


def test_data_starts_from_the_links_capture(tmp_path: Path) -> None:
    """When each iperf3 client's data began: the first segment of at least 536 bytes to its
    port (iperf3's 37-byte cookie and control messages do not count), from a nanosecond pcap
    of raw IPv4 packets as celltcp writes it; and celltcp's side starts its flows as far
    apart."""
    import struct
    pkts = [(0.010, _ipv4_tcp(5201, 0)), (0.060, _ipv4_tcp(5201, 37)), (0.061, _ipv4_tcp(5202, 37)),
            (0.2074, _ipv4_tcp(5202, 1448)), (0.2101, _ipv4_tcp(5201, 1448)), (0.30, _ipv4_tcp(5201, 1448))]
    raw = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101)
    for t, b in pkts:
        raw += struct.pack("<IIII", int(t), round((t % 1) * 1e9), len(b), len(b)) + b
    cap = tmp_path / "c.pcap"
    cap.write_bytes(raw)
    t = K.data_starts(cap, [5201, 5202])
    assert t == [pytest.approx(0.2101), pytest.approx(0.2074)]
    with pytest.raises(ValueError, match="no data segment to port"):
        K.data_starts(cap, [5201, 5203])
    case = next(c for c in K.cases() if c.name == "10M/50ms, 1 BDP (42p), cubic+reno")
    text = K.sim_scenario(case, 10, 1, starts_ms=[2.7, 0.0])
    assert 'start = "302700us"' in text and 'start = "300000us"' in text
    assert K.sim_exit({"cwnd": 49.0, "time_s": 0.5427, "by": "hystart"}, 0.3027) == "49 (0.24 s)"
    assert K.kernel_exit({"hystart": {"train": 0, "train_cwnd": 0, "delay": 1, "delay_cwnd": 49},
                          "flow_starts_ms": [2.7, 0.0]}) == "delay 49 (other -3 ms)"
    # a two-flow kernel run captures its link; a single flow's does not
    assert "pcap = true" in K.kernel_scenario(case, 10, 1, tmp_path)
    alone = next(c for c in K.cases() if c.name == "10M/50ms, 1 BDP (42p), cubic")
    assert "pcap = true" not in K.kernel_scenario(alone, 10, 1, tmp_path)


def test_parsers_refuse_what_they_cannot_read() -> None:
    with pytest.raises(ValueError, match="rtt min/avg/max/mdev"):
        K.parse_ping("--- 10.0.0.2 ping statistics ---\n5 packets transmitted, 0 received, 100% packet loss\n")
    with pytest.raises(ValueError, match="TcpExtTCPTimeouts"):
        K.parse_nstat("#kernel\n")
    with pytest.raises(RuntimeError, match="unable to connect"):
        K.parse_iperf3(json.dumps({"start": {}, "end": {}, "error": "unable to connect to server"}))


def test_mean_rtt_as_iperf3_takes_it() -> None:
    """iperf3 3.12's `mean_rtt` is the socket's srtt sampled once per stats interval (1 s) and
    averaged (`iperf_stats_callback`), not a mean over ACKs. A synthetic sender whose first RTT
    sample comes at 0.35 s and whose srtt is 50 ms within 0.2 s of each whole second after that
    and 500 ms between, rows every 10 ms: iperf3's ticks at 1.35, 2.35, ..., 10.35 s all see 50;
    the mean over the rows (or over ACKs, one per row here) is 0.6 * 500 + 0.4 * 50 = 320."""
    times = [round(0.30 + 0.01 * i, 2) for i in range(1100)]

    def srtt_at(t: float) -> float:
        if t < 0.35:
            return 0.0
        frac = round(t - 0.35, 2) % 1.0
        return 50.0 if frac < 0.2 or frac >= 0.8 else 500.0

    srtt = [srtt_at(t) for t in times]
    assert K.iperf3_mean_rtt(times, srtt, 10) == pytest.approx(50.0)
    live = [r for r in srtt if r > 0]
    assert sum(live) / len(live) == pytest.approx(320.0, abs=5.0)  # the old measure's answer
    # a tick takes the last row at or before it, never a later one
    assert K.iperf3_mean_rtt([0.0, 1.0, 1.5], [10.0, 20.0, 99.0], 1) == 20.0
    assert K.iperf3_mean_rtt([0.0, 0.5, 2.5], [10.0, 20.0, 99.0], 2) == 20.0  # ticks 1 and 2 see 0.5's
    with pytest.raises(ValueError, match="srtt_ms > 0"):
        K.iperf3_mean_rtt([0.0, 1.0], [0.0, 0.0], 1)


def test_retransmissions_as_iperf3_counts_them() -> None:
    """celltcp's retransmissions are the flow's interval reports summed (the test's own, as
    iperf3's `sum_sent.retransmits`), not the sender's total after the test."""
    flows = ["iperf0", "ping", "iperf1", "iperf0", "iperf1", "iperf0"]
    retx = [3.0, float("nan"), 1.0, 0.0, 2.0, 12.0]
    assert K.test_retransmits(flows, retx, "iperf0") == 15
    assert K.test_retransmits(flows, retx, "iperf1") == 3
    with pytest.raises(ValueError, match="no iperf interval report of flow 'iperf2'"):
        K.test_retransmits(flows, retx, "iperf2")


def test_share_and_jain() -> None:
    share, jain = K.shares([6e6, 3e6])
    assert share == pytest.approx(2 / 3)
    assert jain == pytest.approx(81 / (2 * 45))  # (9)^2 / (2 * (36 + 9))
    assert K.shares([5.0, 5.0]) == (0.5, 1.0)
    assert K.shares([1.0, 0.0])[1] == pytest.approx(0.5)  # one flow starved: 1/n


def _rep(k: float, s: float, retx=(1, 2), exit_cwnd=(63, 62)) -> dict:
    def side(g, r):
        fl = [{"cc": "cubic", "goodput": g, "retx": r, "rtt_ms": 60.0}]
        out = K.summarize(fl, 0, 61.0, 10.0)
        out["lateness_p99_us"] = 50.0
        out["load1"] = 3.0
        return out
    k_side, s_side = side(k, retx[0]), side(s, retx[1])
    k_side["hystart"] = {"train": 1, "train_cwnd": exit_cwnd[0], "delay": 0, "delay_cwnd": 0}
    s_side["flows"][0]["ss_exit"] = {"cwnd": float(exit_cwnd[1]), "time_s": 0.84, "by": "hystart"}
    return {"kernel": k_side, "celltcp": s_side}


def test_table_mean_min_max_and_differences() -> None:
    c = K.Case("x", "10Mbps", "25ms", "42p", ("cubic",))
    rows = [(c, [_rep(9e6, 9.5e6), _rep(10e6, 9.5e6, exit_cwnd=(102, 62))])]
    md = K.tables(rows, 10)
    assert "| x | train 63; train 102 | 62 (0.54 s); 62 (0.54 s) | 10 / 10; 10 / 10 |" in md
    assert "| x | 9.50 (9.00–10.00) / 9.50 | 1.00 | 1 / 2 |" in md
    assert K.fmt((0.5, 0.0, 1.0), 0) == "0.5 (0–1)"
    assert "2 repeats per case" in md
    diffs = K.differences(rows)
    assert diffs == ["x: retransmissions kernel 1 / celltcp 2 (+100%)"]


def test_cases_cover_the_issue() -> None:
    names = [c.name for c in K.cases()]
    assert len(names) == len(set(names))
    two = [c for c in K.cases() if c.two_flow]
    assert sorted(c.ccs for c in two) == [("cubic", "bbr")] * 2 + [("cubic", "reno")] * 2
    assert {c.queue for c in two} == {"42p", "1000p"}
    # the same flows on both sides: one iperf3 per flow with its own -C and port, and ping
    text = K.kernel_scenario(two[0], 3, 7, Path("/tmp/d"))
    assert "seed = 7" in text
    assert text.count("iperf3 -s -1 -p ") == 2
    assert f"-C {two[0].ccs[1]} -J" in text and "-p 5202" in text and "ping -n -q -i 0.2" in text
    sim = K.sim_scenario(two[0], 3, 7)
    assert sim.count('app = "iperf"') == 2 and 'app = "ping"' in sim and sim.count("quickack = 16") == 2


def test_two_flow_case_short_run() -> None:
    """CUBIC + Reno over 10 Mbit/s, 50 ms, one-BDP buffer for 3 s, both sides: both flows get
    something, the two together fill the link (slow start of the first ~0.5 s aside), ping sees at
    least the base RTT, and the counters are counts."""
    require_emu()
    c = next(c for c in K.cases() if c.two_flow and c.ccs == ("cubic", "reno") and c.queue == "42p")
    secs = 3
    link = 10e6 * 1448 / 1500
    k = K.run_kernel_once(c, secs, 1)
    s = K.run_sim(c, secs, 1)
    print(f"\nkernel {k}\ncelltcp {s}")
    for side in (k, s):
        g = [f["goodput"] for f in side["flows"]]
        assert [f["cc"] for f in side["flows"]] == ["cubic", "reno"]
        assert min(g) > 0.05 * link, g
        assert 0.75 * link < sum(g) < 1.02 * link, g
        assert side["share"] == pytest.approx(g[0] / sum(g))
        assert 0.5 <= side["jain"] <= 1.0
        assert side["ping_ms"] >= 50.0
        assert side["rto"] >= 0 and side["retx"] >= 0
        assert not math.isnan(side["queue_ms"])
