"""`celltcp emu`: real kernel TCP and real programs through the emulated links (issue 13).

These need root, network namespaces, TUN devices, iperf3 and ping. Where they cannot exist the
tests skip with the reason -- unless ``CELLTCP_REQUIRE_EMU=1`` (scripts/test.sh sets it as root),
then they fail. Each runs a few seconds of real time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import celltcp
import celltcp.api

ROOT = Path(__file__).resolve().parents[2]
RATE = 10_000_000
DELAY_S = 0.020


def require_emu() -> None:
    """Skip (or fail, with CELLTCP_REQUIRE_EMU=1) where the emulator cannot run."""
    why = None
    if os.geteuid() != 0:
        why = "not root"
    elif not Path("/dev/net/tun").exists():
        why = "no /dev/net/tun"
    elif subprocess.run(["unshare", "--net", "--pid", "--fork", "true"],
                        capture_output=True).returncode != 0:
        why = "network/PID namespaces cannot be created (unshare failed)"
    else:
        missing = [t for t in ("iperf3", "ping", "nsenter", "ip") if shutil.which(t) is None]
        if missing:
            why = f"missing tools: {', '.join(missing)} (scripts/install.sh installs them)"
    if why is None:
        return
    if os.environ.get("CELLTCP_REQUIRE_EMU") == "1":
        pytest.fail(f"CELLTCP_REQUIRE_EMU=1 but the emulator cannot run here: {why}")
    pytest.skip(f"celltcp emu cannot run here: {why}")


WIRED = f"""
duration = "8s"
[[link]]
between = ["client", "server"]
rate = "10Mbps"
delay = "20ms"
queue = {{ type = "droptail", limit = "100p" }}
"""

WIRED_EXEC = WIRED + """
[[exec]]
node = "server"
cmd = "iperf3 -s -1"
background = true
[[exec]]
node = "client"
cmd = "ping -c 6 -i 0.2 -n {addr:server}; iperf3 -c {addr:server} -t 5 -O 1 -J"
start = "0.3s"
"""


def _leftovers(emulator: int | None = None) -> list[str]:
    """Processes and devices an emulation run names (ctemu...): the holders of the emulator
    whose pid is `emulator` (default this process; holders are ctemu-<run>-<pid>-<node>, so
    another user's concurrent run does not count) and any ctemu device in this namespace."""
    pid = str(os.getpid() if emulator is None else emulator)
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            argv0 = (p / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if argv0.startswith("ctemu-") and argv0.split("-")[2:3] == [pid]:
            found.append(f"process {p.name} {argv0}")
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    found += [f"device {m}" for m in re.findall(r"^\d+: (ctemu[^:@]*)", links, re.M)]
    return found


def test_emu_wired_iperf3_goodput_and_ping_rtt(tmp_path: Path) -> None:
    require_emu()
    out = tmp_path / "emu"
    r = celltcp.api.execute(WIRED_EXEC, out=out, emu=celltcp.api.EmuArgs())
    text = (out / "exec" / "1-client.out").read_text()
    # idle ping: RTT = 2 x (20 ms + 84 B at 10 Mbit/s) = 40.134 ms (closed form)
    # Real time only adds to it: each crossing waits for the emulator to wake and read the TUN
    # device, and for the kernel to answer (a few hundred us a round trip on a loaded 2-core
    # machine; CI saw 40.5-41.0 ms). So the fastest ping may not beat the closed form and stays
    # within 1 ms of it (a model that timed 1500 B instead of 84, +2.3 ms, or added a delay
    # twice, fails); the median within 2 ms.
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", text)]
    assert len(rtts) >= 5, text[:500]
    want_rtt = 2 * (DELAY_S + 84 * 8 / RATE) * 1e3
    med = sorted(rtts)[len(rtts) // 2]
    # iperf3: goodput = rate x 1448/1500 (MSS 1448 with timestamps, 1500-byte packets)
    report = json.loads(text[text.index("{"):])
    got = report["end"]["sum_received"]["bits_per_second"]
    want = RATE * 1448 / 1500
    # the same link in simulation, celltcp's CUBIC side by side
    sim = celltcp.run(WIRED + '[[flow]]\nname = "cubic"\napp = "bulk"\nfrom = "client"\n'
                      'to = "server"\ncc = "cubic"\nstart = "1s"\n')
    sim_bps = float(sim.flows["goodput_bps"].iloc[0])
    lat = r.summary["emu"]["lateness"]
    print(f"\nkernel cubic (iperf3): {got / 1e6:.3f} Mbit/s; celltcp cubic: {sim_bps / 1e6:.3f} "
          f"Mbit/s; closed form {want / 1e6:.3f} Mbit/s; ping median {med:.3f} ms (want "
          f"{want_rtt:.3f}); lateness p50 {lat['p50_us']:.0f} us p99 {lat['p99_us']:.0f} us")
    # ping prints 3 significant digits below 100 ms (40.1), hence the 0.05 ms of rounding
    assert want_rtt - 0.05 <= min(rtts) <= want_rtt + 1.0, (rtts, want_rtt)
    assert med <= want_rtt + 2.0, (rtts, want_rtt)
    assert abs(got / want - 1) <= 0.02, (got, want)
    assert abs(sim_bps / want - 1) <= 0.02, (sim_bps, want)
    assert r.summary["emu"]["ended_by"] == "commands exited"
    assert r.summary["emu"]["packets_refused"] == 0
    assert "exec/1-client.out" in r.manifest["files"]
    assert _leftovers() == []


def test_emu_raw_store_holds_the_packets_in_flight_not_the_dropped_ones(tmp_path: Path) -> None:
    """Real UDP through a link that loses 5 % of packets: the store of real packets' bytes
    (`emu.raw_store_peak_bytes`) stays at what is in flight. Before drops released their bytes
    it grew by every lost packet: 5 % of 8 Mbit/s for 6 s is 300 KB, against the 8 Mbit/s x
    20 ms = 20 KB in flight."""
    require_emu()
    scen = WIRED.replace('"20ms"', '"20ms"\nloss = { forward = 0.05, reverse = 0.0 }') + """
[[exec]]
node = "server"
cmd = "iperf3 -s -1"
background = true
[[exec]]
node = "client"
cmd = "iperf3 -c {addr:server} -u -b 8M -l 1400 -t 6 -J"
start = "0.3s"
"""
    r = celltcp.api.execute(scen, out=tmp_path / "emu", emu=celltcp.api.EmuArgs())
    text = (tmp_path / "emu" / "exec" / "1-client.out").read_text()
    report = json.loads(text[text.index("{"):])
    lost = report["end"]["sum"]["lost_packets"]
    sent = report["end"]["sum"]["packets"]
    emu = r.summary["emu"]
    link = next(x for x in r.summary["links"] if x["name"].endswith("client->server"))
    print(f"\n{sent} datagrams, {lost} lost (iperf3), {link['lost_packets']} lost on the link; "
          f"raw store peak {emu['raw_store_peak_bytes']} B, {emu['raw_store_bytes']} B at the end")
    assert link["lost_packets"] > 100, link
    assert emu["raw_store_evicted"] == 0 and emu["packets_expired"] == 0
    # in flight at most: 20 ms of 8 Mbit/s each way (20 KB) and iperf3's bursts in the queue
    # (100 packets, 150 KB, at most); the lost packets alone were 300 KB
    assert emu["raw_store_peak_bytes"] < 150_000, emu["raw_store_peak_bytes"]
    assert emu["raw_store_bytes"] < 150_000, emu["raw_store_bytes"]
    assert _leftovers() == []


def test_emu_programs_start_off_the_loop_at_their_time(tmp_path: Path) -> None:
    """Eight programs starting during iperf3 traffic: the loop only posts them to its spawning
    thread, so no step of the loop waits for a start (`prev_spawn_us` of the latest steps; a
    fork in the loop's turn took 1.5-10 ms here), and each program's recorded start is its
    actual one, within a few ms after its `start` (`due_s`)."""
    require_emu()
    due = [round(1.0 + 0.4 * k, 1) for k in range(8)]
    scen = WIRED_EXEC.replace("-t 5", "-t 4") + "".join(
        f'[[exec]]\nnode = "client"\ncmd = "echo {k}"\nbackground = true\nstart = "{t}s"\n'
        for k, t in enumerate(due))
    r = celltcp.api.execute(scen, out=tmp_path / "emu", emu=celltcp.api.EmuArgs())
    emu = r.summary["emu"]
    extra = [p for p in emu["exec"] if p["index"] >= 2]
    assert len(extra) == 8
    for p in extra:
        k = p["index"] - 2
        assert p["due_s"] == pytest.approx(due[k])
        assert (tmp_path / "emu" / "exec" / f"{p['index']}-client.out").read_text() == f"{k}\n"
        assert p["exit_code"] == 0
    late = [p["start_s"] - p["due_s"] for p in extra]
    spawn = max(s["prev_spawn_us"] for s in emu["worst_steps"])
    print(f"\nstarts late by {min(late) * 1e3:.2f}..{max(late) * 1e3:.2f} ms; lateness max "
          f"{emu['lateness']['max_us']:.0f} us; max prev_spawn_us of the latest steps {spawn:.0f}")
    assert all(0 <= x < 0.05 for x in late), late
    assert spawn < 500, emu["worst_steps"]
    assert emu["ended_by"] == "commands exited"
    assert _leftovers() == []


def test_emu_kill9_leaves_nothing(tmp_path: Path) -> None:
    require_emu()
    scen = tmp_path / "s.toml"
    scen.write_text(WIRED + '[[exec]]\nnode = "client"\ncmd = "sleep 30 & sleep 30"\n')
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.Popen([sys.executable, "-m", "celltcp", "emu", str(scen), "-o",
                          str(tmp_path / "out")], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    while not any(x.startswith("process") for x in _leftovers(p.pid)):
        assert p.poll() is None, "the emulator exited early"
        assert time.monotonic() - t0 < 10, "the run did not start in 10 s"
        time.sleep(0.05)
    time.sleep(0.5)  # the commands run
    sleeps_before = subprocess.run(["pgrep", "-f", "^sleep 30"], capture_output=True, text=True).stdout.split()
    assert sleeps_before, "the programs were started"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 5 and (_leftovers(p.pid) or any(
            Path(f"/proc/{s}").exists() for s in sleeps_before)):
        time.sleep(0.05)
    assert _leftovers(p.pid) == []
    assert [s for s in sleeps_before if Path(f"/proc/{s}").exists()] == []
    # and --cleanup finds nothing more to remove
    c = subprocess.run([sys.executable, "-m", "celltcp", "emu", "--cleanup"], env=env,
                       capture_output=True, text=True)
    assert c.returncode == 0 and c.stdout == "", c


def test_emu_sigterm_ends_run_and_keeps_outputs(tmp_path: Path) -> None:
    require_emu()
    scen = tmp_path / "s.toml"
    scen.write_text(WIRED + '[[exec]]\nnode = "client"\ncmd = "echo started; sleep 30"\n')
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.Popen([sys.executable, "-m", "celltcp", "emu", str(scen), "-o",
                          str(tmp_path / "out")], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while not any(x.startswith("process") for x in _leftovers(p.pid)):
        assert time.monotonic() - t0 < 10
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["emu"]["ended_by"] == f"signal {int(signal.SIGTERM)}"
    assert (tmp_path / "out" / "exec" / "0-client.out").read_text() == "started\n"
    assert _leftovers(p.pid) == []


def test_emu_refuses_bad_input_with_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    scen = tmp_path / "s.toml"
    scen.write_text(WIRED + '[[exec]]\nnode = "nowhere"\ncmd = "true"\n')
    r = subprocess.run([sys.executable, "-m", "celltcp", "emu", str(scen), "-o",
                        str(tmp_path / "o")], env=env, capture_output=True, text=True)
    assert r.returncode == 2
    if os.geteuid() == 0:
        assert r.stderr.strip().count("\n") == 0 and "exec[0].node: \"nowhere\"" in r.stderr, r.stderr
    else:
        assert "needs root" in r.stderr
    assert not (tmp_path / "o").exists()


def test_emu_refuses_without_root(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        r = subprocess.run([sys.executable, "-m", "celltcp", "emu", "x.toml", "-o", "o"],
                           env=dict(os.environ, PYTHONPATH=str(ROOT / "python")),
                           capture_output=True, text=True)
    else:
        # drop to nobody in the child
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            sys.executable, "-m", "celltcp", "emu", "x.toml", "-o", "o"],
                           env=dict(os.environ, PYTHONPATH=str(ROOT / "python")),
                           capture_output=True, text=True, cwd="/")
    assert r.returncode == 2, r.stderr
    assert "needs root" in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr


def test_emu_lte_one_ue_kernel_download_vs_celltcp(tmp_path: Path) -> None:
    """iperf3 (kernel CUBIC) through the 1-UE 20 MHz cell of examples/emu-lte.toml against
    celltcp's own CUBIC on the same cell: steady-state goodput within 5 %."""
    require_emu()
    text = (ROOT / "examples" / "emu-lte.toml").read_text()
    r = celltcp.api.execute(text, out=tmp_path / "emu", emu=celltcp.api.EmuArgs())
    rep = json.loads((tmp_path / "emu" / "exec" / "1-server.out").read_text())
    # the receiver's goodput over the test's 5 s after iperf3's 2 omitted seconds (`-O 2`): the
    # sender's 1 s intervals count socket writes, which under load swing 37-84 Mbit/s around it
    kernel = rep["end"]["sum_received"]["bits_per_second"]
    sim_text = text[:text.index("\n[[exec]]")] + (
        '\n[[flow]]\nname = "dl"\napp = "iperf"\nfrom = "ue"\nto = "server"\nreverse = true\n'
        'cc = "cubic"\nstart = "0.5s"\nduration = "9s"\n')
    sim = celltcp.run(sim_text)
    iv = sim.timeseries("iperf")
    # celltcp's CUBIC ramps up more slowly in this cell (see docs/emulation.md): its steady
    # state is the last two seconds
    steady = float(iv["bits_per_second"].iloc[-2:].mean())
    lat = r.summary["emu"]["lateness"]
    print(f"\nLTE 1 UE: kernel cubic {kernel / 1e6:.2f} Mbit/s, celltcp cubic {steady / 1e6:.2f} "
          f"Mbit/s; lateness p99 {lat['p99_us']:.0f} us")
    assert abs(kernel / steady - 1) <= 0.05, (kernel, steady)
    assert _leftovers() == []


def _path_goodputs(summary: dict, total_bps: float) -> dict[str, float]:
    """The download's goodput per path: its total split by the data bytes each path's
    downlink carried (the `wifi` and `lte` links into the phone)."""
    tx = {l["name"].split(":")[0]: l["tx_bytes"] for l in summary["links"]
          if l["to"] == "phone"}
    return {k: total_bps * v / sum(tx.values()) for k, v in tx.items()}


def test_emu_kernel_mptcp_aggregates_two_paths_beside_celltcp_mptcp(tmp_path: Path) -> None:
    """examples/emu-mptcp.toml: the kernel's MPTCP (iperf3 under mptcpize, a 10 s download)
    over a 20 Mbit/s and a 10 Mbit/s path from a phone with two interfaces (a TUN device each,
    with its address, source-address rule and MPTCP endpoint).

    Bound: the paths are disjoint, so the most MPTCP can get is the sum of what one TCP gets on
    each, (20 + 10) Mbit/s x 1448/1500 = 28.96 Mbit/s, 1.5x the faster path alone (1.6x is out
    of reach with these paths); RFC 6356 goal 1 only asks for at least the best path (19.31).
    Linux's MPTCP runs uncoupled subflows (each its own CUBIC), so it should come close to the
    sum: required >= 90 % of it (>= 1.35x the faster path), each path carrying >= 80 % of its
    own share, and the client's join counters showing the second subflow. celltcp's simulated
    MPTCP (OLIA and uncoupled CUBIC) runs the same paths for the comparison table in
    docs/emulation.md and docs/mptcp.md."""
    require_emu()
    if shutil.which("mptcpize") is None:
        if os.environ.get("CELLTCP_REQUIRE_EMU") == "1":
            pytest.fail("CELLTCP_REQUIRE_EMU=1 but mptcpize (Debian's mptcpd) is missing")
        pytest.skip("mptcpize (mptcpd) is missing")
    if not Path("/proc/sys/net/mptcp/enabled").exists():
        pytest.fail("the kernel has no MPTCP (net.mptcp.enabled missing)")
    text = (ROOT / "examples" / "emu-mptcp.toml").read_text()
    r = celltcp.api.execute(text, out=tmp_path / "emu", emu=celltcp.api.EmuArgs())
    out = (tmp_path / "emu" / "exec" / "1-phone.out").read_text()
    rep, end = json.JSONDecoder().raw_decode(out[out.index("{"):])
    assert "error" not in rep, rep.get("error")
    nstat = dict((m[0], int(m[1])) for m in re.findall(r"^(MPTcpExt\w+)\s+(\d+)", out[end:], re.M))
    kernel = rep["end"]["sum_received"]["bits_per_second"]
    paths = _path_goodputs(r.summary, kernel)
    phone = next(h for h in r.summary["emu"]["hosts"] if h["node"] == "phone")
    assert [d["iface"] for d in phone["devices"]] == ["wifi", "lte"], phone
    assert len({d["addr"] for d in phone["devices"]}) == 2, phone

    sim_base = text[:text.index("\n[[exec]]")]
    sim = {}
    for name, mp, cc in [("olia", '{ cc = "olia" }', "cubic"), ("uncoupled", '{ cc = "uncoupled" }', "cubic")]:
        s = celltcp.run(sim_base + f'\n[[flow]]\napp = "iperf"\nfrom = "phone"\nto = "server"\n'
                        f'reverse = true\ncc = "{cc}"\nstart = "0.5s"\nduration = "12s"\nmptcp = {mp}\n')
        iv = s.timeseries("iperf")
        total = float(iv["bits_per_second"].iloc[2:-1].mean())  # after 2 s, as iperf3 -O 2
        sim[name] = (total, _path_goodputs(s.summary, total))
    per_rate = {"wifi": 20e6, "lte": 10e6}
    want_sum = 30e6 * 1448 / 1500
    lat = r.summary["emu"]["lateness"]
    print(f"\nkernel MPTCP (uncoupled CUBIC): {kernel / 1e6:.2f} Mbit/s = "
          + " + ".join(f"{k} {v / 1e6:.2f}" for k, v in paths.items())
          + f"; joins {nstat}; lateness p99 {lat['p99_us']:.0f} us")
    for k, (t, p) in sim.items():
        print(f"celltcp MPTCP {k}: {t / 1e6:.2f} Mbit/s = "
              + " + ".join(f"{n} {v / 1e6:.2f}" for n, v in p.items()))
    assert nstat.get("MPTcpExtMPCapableSYNTX", 0) >= 1 and nstat.get("MPTcpExtMPJoinSynAckRx", 0) >= 1, nstat
    assert kernel >= 0.9 * want_sum, (kernel, want_sum)
    for k, v in paths.items():
        assert v >= 0.8 * per_rate[k] * 1448 / 1500, (k, v, paths)
    for k, (t, _) in sim.items():
        assert t >= 0.9 * want_sum, (k, t)
    assert r.summary["emu"]["packets_refused"] == 0
    assert _leftovers() == []


PING_SIM = """
duration = "8s"
[[node]]
name = "r"
kind = "router"
address = "10.0.9.1"
[[node]]
name = "server"
address = "10.0.9.9"
[[link]]
between = ["client", "r"]
rate = "100Mbps"
delay = "3ms"
[[link]]
between = ["r", "server"]
rate = "100Mbps"
delay = "5ms"
[[exec]]
node = "client"
cmd = "ping -c 8 -i 0.2 -n {addr:r}; ping -c 8 -i 0.2 -n 10.0.9.9"
"""


def test_emu_ping_of_simulated_router_and_host_answered_through_the_links(tmp_path: Path) -> None:
    """A real ping of nodes that have no namespace (the router, a simulated server): their IP
    layer answers (RFC 792) and the replies cross the modelled links back."""
    require_emu()
    out = tmp_path / "emu"
    r = celltcp.api.execute(PING_SIM, out=out, emu=celltcp.api.EmuArgs())
    assert [h["node"] for h in r.summary["emu"]["hosts"]] == ["client"], "only the pinger is real"
    text = (out / "exec" / "0-client.out").read_text()
    blocks = text.split("--- ")
    # closed form: 2 x (propagation + 84 B at 100 Mbit/s on each link crossed)
    ser = 84 * 8 / 100e6
    for ip, want in (("10.0.9.1", 2 * (0.003 + ser)), ("10.0.9.9", 2 * (0.008 + 2 * ser))):
        rtts = [float(x) for x in re.findall(rf"from {re.escape(ip)}: icmp_seq=\d+ ttl=\d+ time=([\d.]+) ms", text)]
        assert len(rtts) >= 7, (ip, text)
        med = sorted(rtts)[len(rtts) // 2]
        print(f"\nping {ip}: median {med:.3f} ms, closed form {want * 1e3:.3f} ms")
        # real time only adds (the emulator's wake-up to read the request): as in the wired test
        assert want * 1e3 - 0.05 <= min(rtts) <= want * 1e3 + 1.0, (ip, rtts, want)
        assert med <= want * 1e3 + 2.0, (ip, rtts, want)
    # TTL: 64 from the router; from the server one less (the router forwarded it)
    assert "from 10.0.9.1: icmp_seq=1 ttl=64" in text and "from 10.0.9.9: icmp_seq=1 ttl=63" in text, text
    assert len(blocks) == 3
    assert r.summary["emu"]["packets_refused"] == 0
    assert _leftovers() == []


def test_emu_fragmented_ping_of_a_simulated_host_answered(tmp_path: Path) -> None:
    """`ping -s 3000` of a simulated host: the kernel sends each 3028-byte request as three
    fragments (1500-byte MTU); the host reassembles them (RFC 791 section 3.2) and answers with
    a 3028-byte reply in fragments, which the pinger's kernel reassembles and ping checks (it
    reports a wrong payload as "wrong data byte")."""
    require_emu()
    text = PING_SIM.replace('cmd = "ping -c 8 -i 0.2 -n {addr:r}; ping -c 8 -i 0.2 -n 10.0.9.9"',
                            'cmd = "ping -c 3 -i 0.2 -s 3000 -n 10.0.9.9"')
    out = tmp_path / "emu"
    r = celltcp.api.execute(text, out=out, emu=celltcp.api.EmuArgs())
    ping = (out / "exec" / "0-client.out").read_text()
    rtts = [float(x) for x in re.findall(r"^3008 bytes from 10\.0\.9\.9: icmp_seq=\d+ ttl=63 time=([\d.]+) ms", ping, re.M)]
    print("\n" + ping)
    assert len(rtts) == 3, ping
    assert "3 received" in ping and "wrong" not in ping and "truncated" not in ping, ping
    # closed form: each way 8 ms of propagation, the first fragment (1500 B) at 100 Mbit/s on
    # the first link, then all three (1500 + 1500 + 68 B) back to back on the second
    want = 2 * (0.008 + (1500 + 3068) * 8 / 100e6) * 1e3
    med = sorted(rtts)[1]
    print(f"ping -s 3000: median {med:.3f} ms, closed form {want:.3f} ms")
    assert want - 0.1 <= med <= want + 1.0, (rtts, want)
    assert r.summary["emu"]["packets_refused"] == 0
    assert r.summary["emu"]["raw_store_bytes"] == 0
    assert _leftovers() == []


def test_emu_ping_of_the_pgw_answered_through_the_cell(tmp_path: Path) -> None:
    """A UE pings the PGW (simulated, `{addr:pgw}`) and the server 10 ms behind it (real): the
    PGW answers every request through the cell (its reply forwarded by the eNB: ttl 63), and
    the server's RTT is the longer by about its link's 2 x 10 ms."""
    require_emu()
    text = (ROOT / "examples" / "emu-lte.toml").read_text()
    text = text[:text.index("\n[[exec]]")] + (
        '\n[[exec]]\nnode = "ue"\ncmd = "ping -c 15 -i 0.2 -n {addr:pgw}; ping -c 15 -i 0.2 -n {addr:server}"\n')
    out = tmp_path / "emu"
    r = celltcp.api.execute(text, out=out, emu=celltcp.api.EmuArgs())
    assert sorted(h["node"] for h in r.summary["emu"]["hosts"]) == ["server", "ue"]
    out_text = (out / "exec" / "0-ue.out").read_text()
    pgw, server = out_text.split("--- ")[:2]
    rtt_pgw = [float(x) for x in re.findall(r"from 10\.44\.0\.1: icmp_seq=\d+ ttl=63 time=([\d.]+) ms", pgw)]
    rtt_server = [float(x) for x in re.findall(r"ttl=\d+ time=([\d.]+) ms", server)]
    assert len(rtt_pgw) == 15 and len(rtt_server) >= 13, out_text
    med = [sorted(x)[len(x) // 2] for x in (rtt_pgw, rtt_server)]
    print(f"\nping pgw median {med[0]:.3f} ms (min {min(rtt_pgw):.3f}), server {med[1]:.3f} ms "
          f"(min {min(rtt_server):.3f})")
    # the radio part varies by several ms from ping to ping (scheduling): only the order is held
    assert min(rtt_server) > min(rtt_pgw) + 10 and med[1] > med[0] + 10, (med, out_text)
    assert _leftovers() == []


def test_emu_shell_runs_in_the_namespace_and_leaves_nothing(tmp_path: Path) -> None:
    """`--shell NODE` under a pseudo-terminal: the shell sees the namespace's device and
    address, `exit` ends the run, nothing is left."""
    import pty
    import select

    require_emu()
    scen = tmp_path / "s.toml"
    scen.write_text(WIRED.replace('duration = "8s"', 'duration = "60s"'))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), SHELL="/bin/sh", PS1="$ ")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the emulator with the pty as its terminal
        os.execve(sys.executable, [sys.executable, "-m", "celltcp", "emu", str(scen), "-o",
                                   str(tmp_path / "out"), "--shell", "client"], env)
    got = b""

    def read_until(marker: bytes, timeout: float) -> None:
        nonlocal got
        t0 = time.monotonic()
        while marker not in got:
            assert time.monotonic() - t0 < timeout, got.decode(errors="replace")
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # EIO: the other side closed
                    break
                got += chunk

    # `echo` of a sum, so that the marker is in the output and not in the echoed command line
    os.write(fd, b"ip -br addr; echo done-$((6*7))\n")
    read_until(b"done-42", 20)
    os.write(fd, b"exit\n")
    t0 = time.monotonic()
    status = None
    while status is None and time.monotonic() - t0 < 20:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                got += os.read(fd, 4096)
            except OSError:
                pass
        p, st = os.waitpid(pid, os.WNOHANG)
        if p == pid:
            status = st
    os.close(fd)
    assert status is not None, "the run did not end after exit"
    assert os.waitstatus_to_exitcode(status) == 0, got.decode(errors="replace")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    host = summary["emu"]["hosts"][0]
    # `ip -br addr` in the shell: the namespace's loopback and its TUN device with the address
    lines = got.decode(errors="replace").replace("\r", "").splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("ip -br addr"))
    j = lines.index("done-42")
    ifaces = {x.removeprefix("$ ").split()[0]: x.split()[-1] for x in lines[i + 1:j]}
    # only the loopback and the TUN device: nothing of the host's interfaces
    assert ifaces == {"lo": "127.0.0.1/8", host["device"]: f"{host['addr']}/32"}, lines
    assert summary["emu"]["ended_by"] == "commands exited"
    assert _leftovers(pid) == []
