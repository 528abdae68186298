"""Python conveniences (issue 18 item 8): Result.ues / .cells / .handovers, flow names in the
time series, figures of a run kept in memory, run_sweep given a dict."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import celltcp
from celltcp import sweep
from conftest import SMALL_TOML

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def handover() -> celltcp.Result:
    return celltcp.run(REPO / "examples" / "handover.toml", seed=1)


def test_lte_tables_are_dataframes_of_the_summary(handover: celltcp.Result) -> None:
    lte = handover.summary["lte"]
    cells, ues, hos = handover.cells, handover.ues, handover.handovers
    assert list(cells["name"]) == [c["name"] for c in lte["cells"]] == ["source", "target"]
    assert list(cells["dl_throughput_bps"]) == [c["dl_throughput_bps"] for c in lte["cells"]]
    assert list(ues["name"]) == ["ue"]
    assert ues.loc[0, "dl.sinr_db_mean"] == lte["ues"][0]["dl"]["sinr_db_mean"]
    assert len(hos) == 1 and hos.loc[0, "interruption_ms"] == lte["handovers"][0]["interruption_ms"]
    assert (hos.loc[0, "source"], hos.loc[0, "target"]) == ("source", "target")
    plain = celltcp.run(SMALL_TOML)
    assert plain.ues.empty and plain.cells.empty and plain.handovers.empty


def test_time_series_name_their_flows_links_and_ues(handover: celltcp.Result) -> None:
    tcp = handover.timeseries("tcp")
    assert list(tcp.columns[:3]) == ["time_s", "flow", "flow_name"]
    assert set(tcp["flow_name"]) == {"dl"}
    queue = handover.timeseries("queue")
    names = [ln["name"] for ln in handover.summary["links"]]
    assert (queue["link_name"].astype(str) == [names[i] for i in queue["link"]]).all()
    ue = handover.timeseries("lte_ue")
    assert set(ue["ue_name"]) == {"ue"}
    assert "flow_name" not in handover.timeseries("tcp", names=False)


def test_figures_of_a_result_kept_in_memory(tmp_path: Path) -> None:
    r = celltcp.run(SMALL_TOML)
    assert r.dir is None
    fig = r.figure("throughput")
    assert fig is not None and "bulk" in {ln.get_label() for ln in fig.axes[0].lines}
    written = r.plot(tmp_path / "figs", only=["cwnd", "throughput"])
    assert sorted(p.name for p in written) == ["cwnd.png", "throughput.png"]
    with pytest.raises(celltcp.api.InputError, match="in memory"):
        r.plot()


def test_run_sweep_takes_a_dict(tmp_path: Path) -> None:
    base = dict(__import__("tomllib").loads(SMALL_TOML))
    res = sweep.run_sweep({"base": base, "grid": {"flow.bulk.cc": ["cubic", "bbr"]}},
                          tmp_path / "sw", jobs=1)
    assert (res.done, res.failed) == (2, 0)
    t = res.table
    assert sorted(set(t["flow.bulk.cc"])) == ["bbr", "cubic"]
    assert isinstance(t, pd.DataFrame) and (t[t["flow"] == "bulk"]["goodput_bps"] > 0).all()
    # the sweep directory holds the sweep and its base as files, so `celltcp sweep` resumes it
    again = sweep.run_sweep(tmp_path / "sw" / "sweep.toml", tmp_path / "sw", jobs=1)
    assert (again.done, again.skipped) == (0, 2)
    with pytest.raises(sweep.SweepError, match="base"):
        sweep.run_sweep({"grid": {"flow.bulk.cc": ["cubic"]}}, tmp_path / "bad")


def test_scenario_objects_edit_validate_and_run(tmp_path: Path) -> None:
    s = celltcp.Scenario.load(REPO / "examples" / "dumbbell.toml")
    assert s.set("link.bottleneck.rate", "20Mbps") is s
    s.set("flow.cubic.cc", "bbr").set("duration", "8s")
    cfg = s.validate(seed=2)
    rates = {ln.get("name"): ln["rate"] for ln in cfg["link"]}
    assert rates["bottleneck"] == "20Mbps"
    assert next(f for f in cfg["flow"] if f["name"] == "cubic")["cc"]["name"] == "bbr"
    # a bad edit is refused at once, naming the path; a bad value when validated, with its line
    with pytest.raises(celltcp.ScenarioError, match="nosuchlink"):
        s.set("link.nosuchlink.rate", "1Mbps")
    bad = s.copy().set("link.bottleneck.rate", "20Mbs")
    with pytest.raises(celltcp.ScenarioError, match=r"dumbbell.toml: line \d+: link\[4\].rate") as e:
        bad.validate()
    line = int(str(e.value).split("line ")[1].split(":")[0])  # still a line of the file's link
    text = (REPO / "examples" / "dumbbell.toml").read_text().splitlines()
    assert "bottleneck" in text[line - 1] or text[line - 1].startswith("rate")
    r = s.run(seed=2)
    assert r.manifest["scenario_file"].endswith("dumbbell.toml")
    assert next(f for f in r.summary["flows"] if f["name"] == "cubic")["cc"] == "bbr"
    assert r.summary["duration_s"] == 8.0
    d = celltcp.Scenario.from_dict({"duration": "1s", "link": [{"between": ["a", "b"], "delay": "5ms",
                                              "rate": "10Mbps"}],
                                    "flow": [{"app": "bulk", "from": "a", "to": "b"}]})
    assert d.to_dict()["duration"] == "1s" and d.validate()["duration"] == "1s"
