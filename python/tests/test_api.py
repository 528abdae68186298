"""celltcp.run() and Result: inputs (TOML file, TOML text, dict, overrides), outputs
(DataFrames, run directory, manifest), errors and the atomic run directory."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import celltcp
from celltcp import _toml
from conftest import LONG_OVERRIDES, SMALL_DICT, SMALL_TOML, leftovers

FLOW_COLUMNS = {"name", "app", "from", "to", "cc", "goodput_bps", "throughput_bps",
                "retransmitted_segments", "rtt_mean_ms"}


def test_run_toml_text_gives_flows_and_timeseries() -> None:
    res = celltcp.run(SMALL_TOML)
    assert res.dir is None
    flows = res.flows
    assert isinstance(flows, pd.DataFrame)
    assert FLOW_COLUMNS <= set(flows.columns)
    assert list(flows["name"]) == ["bulk", "ping"]
    bulk = flows.set_index("name").loc["bulk"]
    assert bulk["cc"] == "cubic"
    # a single flow alone on 10 Mbit/s for most of 3 s
    assert 2e6 < bulk["goodput_bps"] <= 10e6
    assert {"name"} <= set(res.links.columns)
    assert res.seed == 7
    assert res.manifest["events"] > 0 and res.manifest["sim_time_s"] == pytest.approx(3.0)


def test_timeseries_are_typed_columns() -> None:
    res = celltcp.run(SMALL_TOML)
    assert {"tcp", "queue", "rtt"} <= set(res.timeseries_names)
    tcp = res.timeseries("tcp")
    for col in ["time_s", "flow", "cwnd_bytes", "ssthresh_bytes", "srtt_ms", "bytes_in_flight",
                "pacing_rate_bps", "delivered_bytes"]:
        assert col in tcp.columns
    assert tcp["time_s"].dtype == np.float64
    assert tcp["flow"].dtype == np.int64
    assert len(tcp) > 10
    assert set(tcp["flow"]) == {0}  # only the bulk flow is TCP
    assert tcp["delivered_bytes"].is_monotonic_increasing
    q = res.timeseries("queue")
    assert {"time_s", "link", "queue_bytes", "queue_pkts"} <= set(q.columns)
    with pytest.raises(KeyError, match="no time series 'nope'"):
        res.timeseries("nope")


def test_dict_and_path_give_the_same_run(small_toml: Path) -> None:
    from_text = celltcp.run(SMALL_TOML)
    from_dict = celltcp.run(SMALL_DICT)
    from_path = celltcp.run(small_toml)
    from_str_path = celltcp.run(str(small_toml))
    assert from_dict.summary == from_text.summary == from_path.summary == from_str_path.summary
    assert from_dict.config == from_text.config


def test_keyword_and_set_overrides() -> None:
    res = celltcp.run(SMALL_TOML, link__1__rate="5Mbps", set=["flow.0.cc=newreno"])
    flows = res.flows.set_index("name")
    assert flows.loc["bulk", "cc"] == "newreno"
    assert flows.loc["bulk", "goodput_bps"] <= 5e6
    seeded = celltcp.run(SMALL_TOML, seed=99)
    assert seeded.seed == 99 and seeded.manifest["seed"] == 99


def test_validate_returns_config_as_run() -> None:
    cfg = celltcp.validate(SMALL_TOML, seed=3, set=["link.1.delay=20ms"])
    assert cfg["seed"] == 3
    assert len(cfg["link"]) == 2 and len(cfg["flow"]) == 2
    assert "20" in json.dumps(cfg["link"][1])


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("[[flow]]\nname = \"bulk\"", "[[flow]]\nname = \"bulk\"\ncolour = \"red\""), "colour"),
        (("rate = \"10Mbps\"", "rate = \"10Mbs\""), "10Mbs"),
        (("queue = \"50KB\"", "queue = \"50KB\"\nloss = 1.5"), "loss"),
    ],
    ids=["unknown-key", "bad-unit", "impossible-loss"],
)
def test_scenario_error_names_the_key(edit: tuple[str, str], expected: str, tmp_path: Path) -> None:
    bad = SMALL_TOML.replace(*edit)
    assert bad != SMALL_TOML
    out = tmp_path / "run"
    with pytest.raises(celltcp.ScenarioError, match=expected) as info:
        celltcp.run(bad, out=out)
    assert isinstance(info.value, ValueError)
    assert "line" in str(info.value)
    assert leftovers(tmp_path, "run") == []


def test_scenario_error_from_file_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text(SMALL_TOML.replace('"10Mbps"', '"10Mbs"'))
    with pytest.raises(celltcp.ScenarioError, match=r"bad\.toml: line \d+: .*rate"):
        celltcp.run(p)


def test_bad_override_is_a_scenario_error() -> None:
    with pytest.raises(celltcp.ScenarioError, match="rate"):
        celltcp.run(SMALL_TOML, link__1__rate="fast")
    with pytest.raises(celltcp.ScenarioError, match="key.path=value"):
        celltcp.run(SMALL_TOML, set=["no-equals-sign"])


def test_missing_scenario_file() -> None:
    with pytest.raises(FileNotFoundError):
        celltcp.run("no-such-scenario.toml")


def test_run_dir_is_complete_and_reloads(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = celltcp.run(SMALL_TOML, out=out)
    assert res.dir == out
    names = sorted(p.name for p in out.iterdir())
    assert names == ["manifest.json", "summary.json", "timeseries"]
    assert leftovers(tmp_path, "run") == ["run"]
    m = json.loads((out / "manifest.json").read_text())
    for key in ["celltcp_version", "seed", "config", "wall_time_s", "events", "sim_time_s",
                "created_utc", "python", "platform", "files", "command"]:
        assert key in m, key
    assert m["celltcp_version"] == celltcp.__version__
    assert m["config"] == res.config and m["seed"] == 7
    # CPU time of the core: positive, and the per-CPU-second rate follows from it
    assert m["cpu_time_s"] > 0
    assert m["sim_s_per_cpu_s"] == pytest.approx(m["sim_time_s"] / m["cpu_time_s"])
    assert json.loads((out / "summary.json").read_text()) == res.summary
    for name in res.timeseries_names:
        assert f"timeseries/{name}.parquet" in m["files"]
    again = celltcp.Result.load(out)
    assert again.summary == res.summary
    assert again.manifest == res.manifest
    pd.testing.assert_frame_equal(again.flows, res.flows)
    for name in res.timeseries_names:
        pd.testing.assert_frame_equal(again.timeseries(name), res.timeseries(name),
                                      check_dtype=False)
    with pytest.raises(FileNotFoundError):
        celltcp.Result.load(tmp_path)


def test_pcap_files_land_in_the_run_dir(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = celltcp.run(SMALL_TOML, out=out, link__1__pcap=True)
    pcaps = [f for f in res.manifest["files"] if f.startswith("pcap/")]
    assert pcaps, res.manifest["files"]
    for f in pcaps:
        assert (out / f).stat().st_size > 24  # more than the pcap file header


def test_existing_dir_is_refused_without_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = celltcp.run(SMALL_TOML, out=out)
    with pytest.raises(FileExistsError, match="overwrite"):
        celltcp.run(SMALL_TOML, out=out)
    assert json.loads((out / "manifest.json").read_text()) == first.manifest
    second = celltcp.run(SMALL_TOML, out=out, overwrite=True, seed=5)
    assert second.manifest["seed"] == 5
    assert json.loads((out / "manifest.json").read_text())["seed"] == 5
    assert leftovers(tmp_path, "run") == ["run"]


def test_overwrite_never_replaces_a_foreign_directory(tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    with pytest.raises(FileExistsError, match="not a celltcp run directory"):
        celltcp.run(SMALL_TOML, out=out, overwrite=True)
    assert (out / "thesis.tex").read_text() == "years of work"
    assert leftovers(tmp_path, "precious") == ["precious"]


def test_failed_overwrite_keeps_the_old_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = celltcp.run(SMALL_TOML, out=out)
    with pytest.raises(celltcp.ScenarioError):
        celltcp.run(SMALL_TOML, out=out, overwrite=True, link__1__rate="10Mbs")
    assert json.loads((out / "manifest.json").read_text()) == first.manifest
    assert leftovers(tmp_path, "run") == ["run"]


def test_progress_callback_sees_fractions_and_can_abort(tmp_path: Path) -> None:
    seen: list[float] = []

    def stop_at_first(fraction: float) -> bool:
        seen.append(fraction)
        return False

    out = tmp_path / "run"
    with pytest.raises(celltcp.ScenarioError, match="interrupt"):
        celltcp.run(SMALL_TOML, out=out, progress=stop_at_first, set=LONG_OVERRIDES)
    assert len(seen) == 1 and 0.0 <= seen[0] < 1.0
    assert leftovers(tmp_path, "run") == []


def test_progress_callback_exception_propagates(tmp_path: Path) -> None:
    class Boom(Exception):
        pass

    def boom(fraction: float) -> None:
        raise Boom(fraction)

    with pytest.raises(Boom):
        celltcp.run(SMALL_TOML, out=tmp_path / "run", progress=boom, set=LONG_OVERRIDES)
    assert leftovers(tmp_path, "run") == []


def test_streamed_files_read_back_like_in_memory_columns(tmp_path: Path) -> None:
    # With `out` the core streams the tables to Parquet itself; without it they come back as
    # columns. Both must give the same DataFrames: names, dtypes and values.
    mem = celltcp.run(SMALL_TOML, link__1__loss=0.01)
    disk = celltcp.run(SMALL_TOML, out=tmp_path / "run", link__1__loss=0.01)
    assert mem.summary == disk.summary
    assert mem.timeseries_names == disk.timeseries_names
    for name in mem.timeseries_names:
        a, b = mem.timeseries(name), disk.timeseries(name)
        assert list(a.columns) == list(b.columns), name
        assert list(a.dtypes) == list(b.dtypes), name
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    meta = pq.ParquetFile(tmp_path / "run" / "timeseries" / "tcp.parquet").metadata
    assert meta.num_rows == len(disk.timeseries("tcp")) and meta.num_row_groups == 1


def test_keyboard_interrupt_in_progress_leaves_no_dir(tmp_path: Path) -> None:
    def interrupt(fraction: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        celltcp.run(SMALL_TOML, out=tmp_path / "run", progress=interrupt, set=LONG_OVERRIDES)
    assert leftovers(tmp_path, "run") == []


def test_same_seed_gives_identical_results(tmp_path: Path) -> None:
    a = celltcp.run(SMALL_TOML, out=tmp_path / "a", seed=11, link__1__loss=0.01)
    b = celltcp.run(SMALL_TOML, out=tmp_path / "b", seed=11, link__1__loss=0.01)
    assert a.summary == b.summary
    assert a.timeseries_names == b.timeseries_names
    for name in a.timeseries_names:
        fa = tmp_path / "a" / "timeseries" / f"{name}.parquet"
        fb = tmp_path / "b" / "timeseries" / f"{name}.parquet"
        # NaN (e.g. pacing rate without pacing) counts as equal to NaN here
        pd.testing.assert_frame_equal(pq.read_table(fa).to_pandas(), pq.read_table(fb).to_pandas(),
                                      check_exact=True)
        assert fa.read_bytes() == fb.read_bytes(), name


def test_list_cc_and_version() -> None:
    ccs = celltcp.list_cc()
    names = [n for n, _ in ccs]
    assert "cubic" in names and "newreno" in names
    assert all(isinstance(d, str) and d for _, d in ccs)
    assert celltcp.__version__.count(".") >= 2


def test_demo_scenario_validates() -> None:
    cfg = celltcp.validate(celltcp.DEMO_SCENARIO)
    assert len(cfg["flow"]) >= 2


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_toml_writer_round_trips() -> None:
    import tomllib

    doc = {
        "duration": "3s",
        "seed": 7,
        "ratio": 0.25,
        "flag": True,
        "list": [1, 2, 3],
        "weird key": "quote \" and \\ and é",
        "table": {"a": 1, "sub": {"b": "x"}},
        "link": [{"name": "l0", "between": ["a", "b"], "queue": {"type": "red", "limit": "100p"}},
                 {"name": "l1", "skip": None}],
    }
    back = tomllib.loads(_toml.dumps(doc))
    expected = json.loads(json.dumps(doc))
    del expected["link"][1]["skip"]
    assert back == expected
    assert tomllib.loads(_toml.dumps(SMALL_DICT)) == tomllib.loads(SMALL_TOML)


def test_run_releases_the_gil() -> None:
    import threading
    import time

    ticks = 0
    stop = threading.Event()

    def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.005)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        start = time.monotonic()
        celltcp.run(SMALL_TOML, set=["duration=30s", "link.1.rate=200Mbps", "link.0.rate=1Gbps"])
        wall = time.monotonic() - start
    finally:
        stop.set()
        t.join()
    assert wall > 0.2, "the run is too short to tell; make it longer"
    # A thread sleeping 5 ms at a time keeps ticking while the core runs: it would barely move
    # if the run held the GIL.
    assert ticks > 0.3 * wall / 0.005, (ticks, wall)


def test_cpu_time_is_the_cores_not_the_waiting_threads(tmp_path: Path) -> None:
    # The core runs on a thread of its own while the caller waits; the manifest's CPU time must
    # be the core's work (it was the waiting thread's: a few ms for a run of a second).
    out = tmp_path / "run"
    celltcp.run(SMALL_TOML, out=out, set=["duration=60s", "link.1.rate=100Mbps"])
    m = json.loads((out / "manifest.json").read_text())
    assert m["wall_time_s"] > 0.2, "make the run longer"
    assert m["cpu_time_s"] >= 0.05 * m["wall_time_s"], (m["cpu_time_s"], m["wall_time_s"])
