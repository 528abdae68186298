"""DIR/iperf3/<flow>.json (issue 18 item 3): read as iperf3's users' tools read iperf3 -J output,
and its key sets compared with those of a real iperf3 -J run on loopback."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import celltcp

SCENARIO = """
duration = "5s"
[[link]]
name = "bottleneck"
between = ["a", "b"]
rate = "20Mbps"
delay = "10ms"
queue = "100KB"
loss = 0.002
[[flow]]
name = "par"
app = "iperf"
from = "a"
to = "b"
parallel = 2
omit = "1s"
duration = "3s"
[[flow]]
name = "bi"
app = "iperf"
from = "b"
to = "a"
start = "4s"
bidir = true
[[flow]]
name = "u"
app = "udp"
from = "a"
to = "b"
rate = "2Mbps"
"""

# What a simulation cannot give, left out on purpose (see python/celltcp/iperf3.py)
LEFT_OUT = {"system_info", "timestamp", "cookie", "sndbuf_actual", "rcvbuf_actual",
            "cpu_utilization_percent", "snd_cwnd", "snd_wnd", "max_snd_wnd", "rtt", "rttvar", "pmtu"}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("iperf3") / "run"
    celltcp.run(SCENARIO, out=out, seed=4)
    return out


def _load(run_dir: Path, name: str) -> dict[str, Any]:
    return json.loads((run_dir / "iperf3" / f"{name}.json").read_text())


def test_one_file_per_test_listed_in_the_manifest(run_dir: Path) -> None:
    assert sorted(p.name for p in (run_dir / "iperf3").iterdir()) == ["bi.json", "par.json", "u.json"]
    files = json.loads((run_dir / "manifest.json").read_text())["files"]
    assert {"iperf3/bi.json", "iperf3/par.json", "iperf3/u.json"} <= set(files)


def test_parallel_test_reads_as_iperf3_tools_read_it(run_dir: Path) -> None:
    d = _load(run_dir, "par")
    flows = {f["name"]: f for f in json.loads((run_dir / "summary.json").read_text())["flows"]}
    assert d["start"]["test_start"]["num_streams"] == 2 and d["start"]["test_start"]["omit"] == 1.0
    assert [c["socket"] for c in d["start"]["connected"]] == [5, 7]
    # the [SUM] the way iperf3 tools read it: end.sum_received.bits_per_second
    got = d["end"]["sum_received"]["bits_per_second"]
    want = flows["par.1"]["goodput_bps"] + flows["par.2"]["goodput_bps"]
    assert got == pytest.approx(want, rel=0.02)
    assert 10e6 < got < 20e6 * 1448 / 1500
    # iperf3's end figure adds the reported intervals' retransmissions after the omitted ones,
    # so it is at most the senders' totals (which go on after the test's end)
    after_omit = sum(s["retransmits"] for i in d["intervals"] if not i["sum"]["omitted"] for s in i["streams"])
    assert d["end"]["sum_sent"]["retransmits"] == after_omit
    assert after_omit <= (flows["par.1"]["retransmitted_segments"] + flows["par.2"]["retransmitted_segments"])
    assert d["end"]["sum_sent"]["seconds"] == pytest.approx(3.0)
    # intervals[].sum is the sum of the streams; omitted ones first, their times restart after
    iv = d["intervals"]
    assert [i["sum"]["omitted"] for i in iv] == [True, False, False, False]
    assert [(i["sum"]["start"], i["sum"]["end"]) for i in iv] == [(0, 1), (0, 1), (1, 2), (2, 3)]
    for i in iv:
        assert i["sum"]["bytes"] == sum(s["bytes"] for s in i["streams"])
        assert i["sum"]["bits_per_second"] == pytest.approx(i["sum"]["bytes"] * 8 / i["sum"]["seconds"])
    kept = sum(i["sum"]["bytes"] for i in iv if not i["sum"]["omitted"])
    assert d["end"]["sum_received"]["bytes"] == pytest.approx(kept, rel=0.02)
    assert d["end"]["sender_tcp_congestion"] == "cubic"


def test_bidir_and_udp_tests(run_dir: Path) -> None:
    d = _load(run_dir, "bi")
    assert {"sum", "sum_bidir_reverse"} <= set(d["intervals"][0])
    assert d["intervals"][0]["sum"]["sender"] is True
    assert d["intervals"][0]["sum_bidir_reverse"]["sender"] is False
    for k in ("sum_received", "sum_received_bidir_reverse"):
        assert d["end"][k]["bits_per_second"] > 5e6
    u = _load(run_dir, "u")
    assert u["start"]["test_start"]["protocol"] == "UDP"
    assert u["start"]["test_start"]["target_bitrate"] == 2_000_000
    s = u["end"]["sum"]
    assert s["bits_per_second"] == pytest.approx(2e6, rel=0.05)
    assert s["packets"] == sum(i["sum"]["packets"] for i in u["intervals"])
    assert s["lost_packets"] == sum(i["sum"]["lost_packets"] for i in u["intervals"])
    assert 0 <= s["lost_percent"] < 2
    assert all(i["streams"][0]["jitter_ms"] >= 0 for i in u["intervals"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _real_iperf3(*args: str) -> dict[str, Any]:
    """iperf3 -J on loopback (retried: a loaded machine can make a try fail)."""
    last = ""
    for _ in range(5):
        port = _free_port()
        server = subprocess.Popen(["iperf3", "-s", "-p", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):  # until the server listens
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.05)
            time.sleep(0.2)  # the server drops the probe above and listens on
            r = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", "2", "-J",
                                *args], capture_output=True, text=True, timeout=60)
            d = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
            if r.returncode == 0 and "error" not in d and d.get("intervals"):
                return dict(d)
            last = d.get("error", r.stderr)
        except subprocess.TimeoutExpired:
            last = "timeout"
        finally:
            server.kill()
            server.wait()
    raise AssertionError(f"iperf3 {args} failed: {last}")


def _shape(d: Any, path: str = "") -> dict[str, set[str]]:
    """The key set of every object in ``d`` by its path (list elements merged)."""
    out: dict[str, set[str]] = {}
    if isinstance(d, dict):
        out.setdefault(path, set()).update(d)
        for k, v in d.items():
            for p, ks in _shape(v, f"{path}.{k}").items():
                out.setdefault(p, set()).update(ks)
    elif isinstance(d, list):
        for v in d:
            for p, ks in _shape(v, f"{path}[]").items():
                out.setdefault(p, set()).update(ks)
    return out


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed "
                    "(scripts/install.sh installs it)")
@pytest.mark.parametrize(("name", "args"), [("par", ("-P", "2", "-O", "1")),
                                            ("bi", ("--bidir",)),
                                            ("u", ("-u", "-b", "2M", "-R"))])
def test_key_sets_match_a_real_iperf3_run(run_dir: Path, name: str, args: tuple[str, ...]) -> None:
    ours, real = _shape(_load(run_dir, name)), _shape(_real_iperf3(*args))
    # the objects iperf3 writes are there, and no object of ours is one iperf3 does not write
    # (start.test_start.bidir aside: iperf3 3.17 and later write it)
    assert set(real) - {p for p in real if p.split(".")[-1] in LEFT_OUT} == set(ours)
    for path, keys in ours.items():
        extra = keys - real[path] - ({"bidir"} if path == ".start.test_start" else set())
        assert not extra, f"{path}: {sorted(extra)} are not iperf3's"
        missing = real[path] - keys
        assert missing <= LEFT_OUT, f"{path}: {sorted(missing - LEFT_OUT)} are missing"


def test_run_table_has_iperf3s_sum_line(tmp_path: Path) -> None:
    from conftest import cli

    scenario = tmp_path / "p.toml"
    scenario.write_text(SCENARIO)
    r = cli("run", scenario, "-o", tmp_path / "run", "--seed", "4")
    assert r.returncode == 0, r.stderr
    flows = {f["name"]: f for f in json.loads((tmp_path / "run" / "summary.json").read_text())["flows"]}
    line = next(x for x in r.stdout.splitlines() if x.startswith("[SUM] par "))
    cells = line.split()
    assert cells[2:4] == ["iperf", "cubic"]
    assert float(cells[4]) == pytest.approx(
        (flows["par.1"]["goodput_bps"] + flows["par.2"]["goodput_bps"]) / 1e6, abs=0.006)
    assert int(cells[5]) == flows["par.1"]["retransmitted_segments"] + flows["par.2"]["retransmitted_segments"]
    # bidir with one stream each way: no [SUM], as iperf3 prints none without -P
    assert not any(x.startswith("[SUM] bi") for x in r.stdout.splitlines())


def test_interval_reports_arrive_live_and_equal_the_files(tmp_path: Path) -> None:
    # A 40 s run (~145,000 events): the core reports every 65,536 events, so the first
    # intervals must arrive while the run goes on, before the final report.
    scen = SCENARIO.replace('duration = "5s"', 'duration = "40s"').replace(
        'duration = "3s"', 'duration = "30s"')
    log: list[tuple[str, Any]] = []
    got: list[celltcp.api.IntervalLine] = []

    def intervals(rows: list[celltcp.api.IntervalLine]) -> None:
        got.extend(rows)
        log.append(("i", len(rows)))

    def progress(f: float) -> None:
        log.append(("p", f))

    res = celltcp.run(scen, out=tmp_path / "run", seed=4, intervals=intervals, progress=progress)
    first = next(k for k, e in enumerate(log) if e[0] == "i")
    assert any(e[0] == "p" and e[1] < 1.0 for e in log[first:]), "intervals came only at the end"
    assert log[first][1] < len(got), "the first batch held every interval"
    # every interval once, equal to what the iperf3 JSON files hold
    for test, streams in (("par", ["par.1", "par.2"]), ("u", ["u"])):
        d = _load(tmp_path / "run", test)
        for k, name in enumerate(streams):
            mine = [r for r in got if r.flow == name]
            theirs = [i["streams"][k] for i in d["intervals"]]
            assert len(mine) == len(theirs) > 3
            for r, j in zip(mine, theirs):
                assert r.bytes == j["bytes"] and r.omitted == j["omitted"]
                assert r.bits_per_second == pytest.approx(j["bits_per_second"])
                if test == "u":
                    assert r.packets == j["packets"] and r.lost_packets == j["lost_packets"]
    assert res.flows.shape[0] >= 4
    line = celltcp.api.format_interval(next(r for r in got if r.flow == "par.1" and not r.omitted))
    assert line.startswith("[par.1]   0.00-1.00   sec") and "Mbits/sec" in line


def test_cli_prints_iperf3_style_lines_as_they_complete(tmp_path: Path) -> None:
    from conftest import cli

    scenario = tmp_path / "p.toml"
    scenario.write_text(SCENARIO)
    r = cli("run", scenario, "-o", tmp_path / "run", "--seed", "4", "--intervals")
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if x.startswith("[")]
    d = _load(tmp_path / "run", "par")
    par1 = [x for x in lines if x.startswith("[par.1] ")]
    assert len(par1) == len(d["intervals"]) == 4
    # the omitted first second, then 0-1, 1-2, 2-3 as iperf3 -O restarts its clock
    assert par1[0].endswith("(omitted)") and " 0.00-1.00 " in par1[0]
    cells = par1[1].split()
    assert cells[1] == "0.00-1.00" and cells[2] == "sec" and cells[6] == "Mbits/sec"
    mbps = d["intervals"][1]["streams"][0]["bits_per_second"] / 1e6
    assert float(cells[5]) == pytest.approx(mbps, abs=0.006)
    assert int(cells[7]) == d["intervals"][1]["streams"][0]["retransmits"]
    udp = [x for x in lines if x.startswith("[u] ")]
    assert udp and all(" ms " in x and "%)" in x for x in udp)
    # the interval lines come before the final table; -q and --no-intervals print none
    assert r.stdout.index("iperf intervals") < r.stdout.index("goodput Mbit/s")
    for flag in ("-q", "--no-intervals"):
        q = cli("run", scenario, "-o", tmp_path / f"run{flag}", "--seed", "4", flag)
        assert q.returncode == 0 and not any(x.startswith("[par.1] ") for x in q.stdout.splitlines())
