"""The celltcp command, run as a subprocess: success, bad input (exit 2, message, no DIR),
interrupts (no DIR), overwrite, validate, list, plot, demo."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import LONG_OVERRIDES, SMALL_TOML, cli, leftovers


def test_run_writes_the_run_dir_and_prints_a_flow_table(small_toml: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = cli("run", small_toml, "-o", out, "--seed", "3", "--set", "link.1.rate=8Mbps", "--plot")
    assert r.returncode == 0, r.stderr
    assert (out / "manifest.json").is_file() and (out / "summary.json").is_file()
    assert (out / "timeseries" / "tcp.parquet").is_file()
    assert (out / "figures" / "cwnd.png").is_file() and (out / "figures" / "cwnd.svg").is_file()
    m = json.loads((out / "manifest.json").read_text())
    assert m["seed"] == 3
    assert m["command"][:2] == ["celltcp", "run"] and "link.1.rate=8Mbps" in m["command"]
    assert m["scenario_file"] == str(small_toml)
    lines = r.stdout.splitlines()
    header = next(line for line in lines if line.startswith("flow"))
    for col in ["cc", "goodput Mbit/s", "retransmits", "RTT mean ms", "loss ratio"]:
        assert col in header
    bulk = next(line for line in lines if line.startswith("bulk"))
    assert bulk.split()[1:3] == ["bulk", "cubic"]
    goodput = float(bulk.split()[3])
    assert 1.0 < goodput <= 8.0
    assert leftovers(tmp_path, "run") == ["run"]


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (("[[flow]]\nname = \"bulk\"", "[[flow]]\nname = \"bulk\"\ncolour = \"red\""), "colour"),
        (("rate = \"10Mbps\"", "rate = \"10Mbs\""), "rate"),
        (("queue = \"50KB\"", "queue = \"50KB\"\nloss = 1.5"), "loss"),
    ],
    ids=["unknown-key", "bad-unit", "impossible-loss"],
)
def test_bad_scenario_exits_2_and_leaves_no_dir(edit: tuple[str, str], key: str,
                                                 tmp_path: Path) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(SMALL_TOML.replace(*edit))
    r = cli("run", scenario, "-o", tmp_path / "run")
    assert r.returncode == 2
    assert r.stderr.startswith("celltcp: error: ")
    assert key in r.stderr and "line" in r.stderr and "bad.toml" in r.stderr
    assert "Traceback" not in r.stderr
    assert leftovers(tmp_path, "run") == []


@pytest.mark.parametrize(
    "args",
    [
        ["--set", "link.1.rate=10Mbs"],
        ["--set", "link.7.rate=10Mbps"],
        ["--set", "nonsense"],
    ],
    ids=["bad-unit", "bad-index", "no-equals"],
)
def test_bad_override_exits_2(args: list[str], small_toml: Path, tmp_path: Path) -> None:
    r = cli("run", small_toml, "-o", tmp_path / "run", *args)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("celltcp: error: ")
    assert leftovers(tmp_path, "run") == []


def _scenario_bytes(kind: str) -> bytes:
    if kind == "utf16":
        return SMALL_TOML.encode("utf-16")
    if kind == "latin1":
        return SMALL_TOML.replace('name = "bulk"', 'name = "bülk"').encode("latin-1")
    if kind == "nul":
        return SMALL_TOML.replace('name = "bulk"', 'name = "bu\x00lk"').encode()
    raise AssertionError(kind)


@pytest.mark.parametrize(("kind", "needle"), [("utf16", "UTF-16"), ("latin1", "line 18: byte 0xfc"),
                                              ("nul", "line 18: a NUL byte")])
def test_scenario_that_is_not_utf8_text_exits_2(kind: str, needle: str, tmp_path: Path) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_bytes(_scenario_bytes(kind))
    for args in (["run", scenario, "-o", tmp_path / "run"], ["validate", scenario]):
        r = cli(*args)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("celltcp: error: ") and needle in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert leftovers(tmp_path, "run") == []


def test_unwritable_output_exits_2(small_toml: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    r = cli("run", small_toml, "-o", tmp_path / "file" / "run")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("celltcp: error: ") and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "file is a file, not a directory" in r.stderr, r.stderr
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("seed", ["-1", str(2**64), "1e3"])
def test_seed_outside_u64_exits_2(seed: str, small_toml: Path, tmp_path: Path) -> None:
    r = cli("run", small_toml, "-o", tmp_path / "run", "--seed", seed)
    assert r.returncode == 2 and "expected an integer 0 .. 2^64-1" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and leftovers(tmp_path, "run") == []
    assert cli("run", small_toml, "-o", tmp_path / "run", "-q", "--seed",
               str(2**64 - 1)).returncode == 0


def test_set_that_is_not_utf8_exits_2(small_toml: Path, tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "celltcp", "run", str(small_toml), "-o",
                        str(tmp_path / "run"), "--set", b"flow.0.cc=cu\xffbic"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not valid UTF-8" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and leftovers(tmp_path, "run") == []


def test_a_flow_name_with_dollars_plots_and_a_failed_figure_keeps_the_run(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SMALL_TOML.replace('name = "bulk"', 'name = "$x_1$ bulk $"'))
    r = cli("run", scenario, "-o", tmp_path / "run", "--plot", "-q")
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "run" / "figures").glob("*.png"))



def test_a_figure_that_fails_does_not_lose_the_run(small_toml: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from celltcp import cli as cli_mod, plots

    def broken(*_: object) -> None:
        raise RuntimeError("no figure today")

    monkeypatch.setattr(plots, "plot_run", broken)
    out = tmp_path / "run"
    assert cli_mod.main(["run", str(small_toml), "-o", str(out), "--plot", "-q"]) == 1
    err = capsys.readouterr().err
    assert f"the run is complete in {out}" in err and "no figure today" in err
    assert (out / "manifest.json").is_file() and (out / "summary.json").is_file()


def test_missing_scenario_file_exits_2(tmp_path: Path) -> None:
    r = cli("run", tmp_path / "nope.toml", "-o", tmp_path / "run")
    assert r.returncode == 2
    assert r.stderr.startswith("celltcp: error: ") and "nope.toml" in r.stderr
    assert leftovers(tmp_path, "run") == []


def test_usage_errors_exit_2(small_toml: Path) -> None:
    r = cli("run", small_toml)  # no -o
    assert r.returncode == 2 and "error: the following arguments are required: -o" in r.stderr
    assert cli("frobnicate").returncode == 2


def test_existing_dir_needs_overwrite(small_toml: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", small_toml, "-o", out, "-q").returncode == 0
    before = (out / "manifest.json").read_text()
    r = cli("run", small_toml, "-o", out, "-q")
    assert r.returncode == 2 and "--overwrite" in r.stderr
    assert (out / "manifest.json").read_text() == before
    r = cli("run", small_toml, "-o", out, "-q", "--overwrite", "--seed", "9")
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "manifest.json").read_text())["seed"] == 9
    assert leftovers(tmp_path, "run") == ["run"]


REPO = Path(__file__).resolve().parents[2]


def _readme_use_commands() -> list[list[str]]:
    """The ``celltcp run`` lines of the README's "Use" block, split into arguments."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## Use", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].split() for line in block.splitlines()
            if line.startswith("celltcp run ")]


def test_readme_first_example_sets_the_bottleneck_and_overwrite_keeps_nested_runs(
        tmp_path: Path) -> None:
    # Issue 18 item 1: the README's first example once set link.0.rate, an access link; and
    # `--overwrite` of out/ deleted the out/lte run the README nests inside it.
    (tmp_path / "examples").symlink_to(REPO / "examples")
    cmds = _readme_use_commands()
    first, lte = cmds[0], next(c for c in cmds if "examples/lte-cell.toml" in c)
    assert "link.bottleneck.rate=20Mbps" in first and first[first.index("-o") + 1] == "out/"
    assert lte[lte.index("-o") + 1] == "out/lte"
    r = cli(*first[1:], "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    links = {x["name"]: x["rate_bps"] for x in
             json.loads((tmp_path / "out" / "summary.json").read_text())["links"]}
    bottleneck = [n for n in links if n.startswith("bottleneck:")]
    assert bottleneck and all(links[n] == 20_000_000 for n in bottleneck), links
    assert all(rate == 100_000_000 for n, rate in links.items() if n not in bottleneck), links
    r = cli(*lte[1:], "-q", "--set", "duration=0.2s", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    before = (tmp_path / "out" / "manifest.json").read_text()
    r = cli(*first[1:], "-q", "--overwrite", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("celltcp: error: out")
    assert "out/lte" in r.stderr and "refusing to overwrite" in r.stderr
    assert (tmp_path / "out" / "lte" / "manifest.json").is_file()
    assert (tmp_path / "out" / "manifest.json").read_text() == before
    assert leftovers(tmp_path, "out") == ["out"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_run_leaves_no_dir(sig: signal.Signals, small_toml: Path,
                                       tmp_path: Path) -> None:
    out = tmp_path / "run"
    sets = [a for s in LONG_OVERRIDES for a in ("--set", s)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "celltcp", "run", str(small_toml), "-o", str(out), *sets],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        # wait for the run to start (its temporary directory appears), then one more second
        deadline = time.monotonic() + 30
        while not leftovers(tmp_path, "run") and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        assert proc.poll() is None, "the run ended before it could be interrupted; make it longer"
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert proc.returncode == (130 if sig == signal.SIGINT else 128 + signal.SIGTERM)
    assert "Traceback" not in stderr
    assert leftovers(tmp_path, "run") == []


def test_a_killed_run_leaves_a_temporary_that_the_next_run_removes(small_toml: Path,
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "run"
    sets = [a for s in LONG_OVERRIDES for a in ("--set", s)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "celltcp", "run", str(small_toml), "-o", str(out), *sets],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not leftovers(tmp_path, "run") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed; make it longer"
        proc.kill()  # SIGKILL: nothing in the process can clean up
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stale = leftovers(tmp_path, "run")
    assert len(stale) == 1 and stale[0].startswith(".run.tmp-"), stale
    # the next run into the same place removes the dead run's temporary (and only that)
    r = cli("run", small_toml, "-o", out)
    assert r.returncode == 0, r.stderr
    assert leftovers(tmp_path, "run") == ["run"]


def test_validate_prints_the_config_as_run(small_toml: Path) -> None:
    r = cli("validate", small_toml, "--seed", "4", "--set", "flow.0.cc=newreno")
    assert r.returncode == 0, r.stderr
    cfg = json.loads(r.stdout)
    assert cfg["seed"] == 4
    assert cfg["flow"][0]["cc"]["name"] == "newreno"


def test_validate_bad_file_exits_2(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text(SMALL_TOML.replace('"10Mbps"', '"10Mbs"'))
    r = cli("validate", p)
    assert r.returncode == 2 and "10Mbs" in r.stderr


#: Every control issue 5 asks for (Westwood+ and plain Westwood), plus the foundation's three,
#: by the names `cc` accepts.
ALL_CC = {"newreno", "cubic", "bbr", "bic", "highspeed", "htcp", "scalable", "hybla", "vegas",
          "veno", "westwood", "westwoodplain", "illinois", "yeah", "lp", "dctcp"}


def test_list_cc() -> None:
    r = cli("list", "cc")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    names = [line.split()[0] for line in lines]
    assert len(names) == len(set(names))
    assert set(names) == ALL_CC
    # one line each: the name, then a description
    assert all(len(line.split()) > 2 for line in lines)


def test_version() -> None:
    import celltcp

    r = cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"celltcp {celltcp.__version__}"


def test_plot_command_formats(small_toml: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", small_toml, "-o", out, "-q").returncode == 0
    assert not (out / "figures").exists()
    r = cli("plot", out, "--format", "png")
    assert r.returncode == 0, r.stderr
    figs = sorted(p.name for p in (out / "figures").iterdir())
    assert "cwnd.png" in figs and not any(f.endswith(".svg") for f in figs)
    assert cli("plot", out, "--format", "gif").returncode == 2
    r = cli("plot", tmp_path / "not-a-run")
    assert r.returncode == 2 and r.stderr.startswith("celltcp: error: ")


def test_demo_writes_figures(tmp_path: Path) -> None:
    r = cli("demo", "-o", "demo", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    figs = tmp_path / "demo" / "figures"
    for name in ["cwnd", "throughput", "rtt_cdf", "queue", "ping"]:
        assert (figs / f"{name}.png").is_file(), name
        assert (figs / f"{name}.svg").is_file(), name
    assert "results: demo" in r.stdout


def test_demo_show_scenario() -> None:
    import celltcp

    r = cli("demo", "--show-scenario")
    assert r.returncode == 0 and r.stdout == celltcp.DEMO_SCENARIO


@pytest.mark.skipif(shutil.which("celltcp") is None, reason="console script not installed")
def test_console_script(tmp_path: Path) -> None:
    r = subprocess.run(["celltcp", "list", "cc"], capture_output=True, text=True, timeout=60,
                       env={**os.environ})
    assert r.returncode == 0 and "cubic" in r.stdout


def test_help_and_import_do_not_load_pandas() -> None:
    # `celltcp --help` took ~2 s because pandas and numpy loaded eagerly; they load on first use
    code = ("import sys, contextlib, io\n"
            "import celltcp\n"
            "from celltcp import cli\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "    cli.main(['--help'])\n"
            "heavy = sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'pyarrow', 'celltcp.api')\n"
            "         if m in sys.modules)\n"
            "print(','.join(heavy) or 'none')\n"
            "print(celltcp.run.__module__, celltcp.Result.__name__)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    # nor the API module and what it pulls in (celltcp --help: 0.24 -> 0.17 s median under load)
    assert r.stdout.split("\n")[:2] == ["none", "celltcp.api Result"]


BIG_LTE = """
duration = "1s"
[lte]
bandwidth = "20MHz"
[[lte.enb]]
name = "enb"
[[lte.ue]]
name = "u"
count = 1000000
placement = { type = "disc", radius = "500m" }
[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "10ms"
[[flow]]
from = "server"
to = "u1"
app = "bulk"
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_building_of_a_large_scenario_at_once(sig: signal.Signals,
                                                                 tmp_path: Path) -> None:
    # Building 1,000,000 UEs takes the core several seconds with no progress report; the
    # signal must not wait for it (issue 17: 30 s were seen).
    scenario = tmp_path / "big.toml"
    scenario.write_text(BIG_LTE)
    proc = subprocess.Popen([sys.executable, "-m", "celltcp", "validate", str(scenario)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        assert proc.poll() is None, "validation ended before it could be interrupted; make it larger"
        sent = time.monotonic()
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (130 if sig == signal.SIGINT else 128 + signal.SIGTERM), stderr
    assert "Traceback" not in stderr
    assert waited < 1.5, f"the signal took {waited:.2f} s to stop the build"


def test_run_table_mentions_lte_and_handover_facts(tmp_path: Path) -> None:
    # issue 18 item 6: the table at the end of a run said nothing about the cells, the UEs'
    # radio or the handover of examples/handover.toml
    r = cli("run", REPO / "examples" / "handover.toml", "-o", tmp_path / "ho")
    assert r.returncode == 0, r.stderr
    lte = json.loads((tmp_path / "ho" / "summary.json").read_text())["lte"]
    (ho,) = lte["handovers"]
    lines = r.stdout.splitlines()
    cells = next(line for line in lines if line.startswith("LTE cells (2): source DL PRBs "))
    assert f"{lte['cells'][1]['dl_throughput_bps'] / 1e6:.2f} Mbit/s" in cells
    assert next(line for line in lines if line.startswith("LTE UEs (1): DL SINR mean "))
    assert (f"handovers: 1, interruption mean {ho['interruption_ms']:.1f} ms (max "
            f"{ho['interruption_ms']:.1f}), SDUs forwarded over X2 "
            f"{ho['sdus_forwarded'] + ho['sdus_forwarded_late']}, lost {ho['sdus_discarded']}; "
            "ping-pongs 0, radio link failures 0") in lines


def test_lte_notes_summarise_cells_ues_and_mobility() -> None:
    from celltcp.cli import _lte_notes

    assert _lte_notes(None) == [] and _lte_notes({}) == []
    hist = lambda *pairs: [dict(pairs).get(k, 0) for k in range(16)]  # noqa: E731
    lte = {
        "cells": [{"name": "a", "dl_prb_utilization": 0.5, "dl_throughput_bps": 12_345_678}],
        "ues": [{"dl": {"sinr_db_mean": 3.04, "cqi_hist": hist((5, 1), (7, 3))}},   # CQI 6.5
                {"dl": {"sinr_db_mean": 20.0, "cqi_hist": hist((15, 2))}}],
        "handovers": [
            {"kind": "handover", "interruption_ms": 40.0, "sdus_forwarded": 10,
             "sdus_forwarded_late": 2, "sdus_discarded": 1},
            {"kind": "handover", "interruption_ms": 61.0, "sdus_forwarded": 5,
             "sdus_forwarded_late": 0, "sdus_discarded": 0}],
        "mobility": {"handovers": 2, "ping_pongs": 1, "radio_link_failures": 3},
    }
    assert _lte_notes(lte) == [
        "LTE cells (1): a DL PRBs 50% 12.35 Mbit/s",
        "LTE UEs (2): DL SINR mean 3.0 to 20.0 dB, CQI mean 6.5 to 15.0 (per UE)",
        "handovers: 2, interruption mean 50.5 ms (max 61.0), SDUs forwarded over X2 17, lost 1; "
        "ping-pongs 1, radio link failures 3",
    ]


def test_every_shipped_example_validates() -> None:
    for p in sorted((REPO / "examples").glob("*.toml")):
        if p.name.startswith("sweep-"):
            continue  # sweep files, read by `celltcp sweep` (test_sweep.py)
        r = cli("validate", p)
        assert r.returncode == 0, (p.name, r.stderr)


def test_the_interference_example_shows_the_spread_lte_is_known_for(tmp_path: Path) -> None:
    # docs/lte.md: per-UE DL SINR from about -5 to 26 dB, CQI from about 2 to 15, and goodput in
    # the measured cell from Mbit/s near the site to almost nothing at its edge
    r = cli("run", REPO / "examples" / "lte-interference.toml", "-o", tmp_path / "i", "-q")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "i" / "summary.json").read_text())
    ues = s["lte"]["ues"]
    def mean_cqi(hist: list[int]) -> float:  # the reports' mean CQI from their histogram
        return sum(k * n for k, n in enumerate(hist)) / sum(hist)

    cqi = [mean_cqi(u["dl"]["cqi_hist"]) for u in ues if sum(u["dl"].get("cqi_hist") or [0])]
    sinr = [u["dl"]["sinr_db_mean"] for u in ues if u["dl"].get("sinr_db_mean") is not None]
    assert min(cqi) < 5 and max(cqi) > 13, cqi
    assert min(sinr) < 0 and max(sinr) > 20, sinr
    dl = [f["goodput_bps"] for f in s["flows"] if f["name"].startswith("dl-")]
    assert len(dl) == 8 and max(dl) > 2e6 and min(dl) < 0.2e6, dl
