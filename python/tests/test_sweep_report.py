"""`celltcp report SWEEP_DIR`: a report of one's own sweep in the layout of a study's report.

The aggregated table is checked against t-intervals computed here from the results table with a
printed Student-t quantile; the figures against the runs they draw; bad input against one-line
errors with exit status 2.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from celltcp import sweep_report
from celltcp.sweep import load_sweep, run_sweep
from conftest import SMALL_TOML
from conftest import cli as _cli

BASE = SMALL_TOML.replace('duration = "3s"', 'duration = "1s"')
SWEEP = """\
base = "base.toml"
seeds = 3
[grid]
"flow.bulk.cc" = ["newreno", "cubic"]
"link.bottleneck.queue" = ["15KB", "60KB"]
"""
#: t(0.975, 2) from a printed table (three seeds per point)
T975_2 = 4.30265


def cli(*args: str) -> tuple[int, str, str]:
    r = _cli(*args)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("sweep")
    (d / "base.toml").write_text(BASE)
    (d / "s.toml").write_text(SWEEP)
    out = d / "out"
    res = run_sweep(load_sweep(d / "s.toml"), out, jobs=2)
    assert res.failed == 0 and res.done == 12
    return out


def _table(report: str) -> list[list[str]]:
    """The rows of the aggregated table (after the 'Aggregated results' heading)."""
    part = report.split('id="results"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", part, re.S)
    return [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)]
            for r in rows]


def test_report_of_a_sweep_has_parameters_intervals_figures_and_readable_run_names(
        sweep_dir: Path) -> None:
    code, out, err = cli("report", str(sweep_dir))
    assert code == 0, err
    report = sweep_dir / "report.html"
    assert out.strip() == str(report) and report.is_file()
    text = report.read_text()
    # the parameters and their values, the seeds, the run counts
    assert "flow.bulk.cc = newreno, cubic" in html.unescape(text)
    assert "link.bottleneck.queue = 15KB, 60KB" in html.unescape(text)
    assert "done: 12" in text and "failed: 0" in text
    # the files run, verbatim
    assert html.escape(SWEEP.splitlines()[0], quote=True) in text
    # aggregated table: one row per point and flow, the mean ± t-interval half-width over the
    # three seeds, recomputed here from the results table with a printed t quantile
    import pandas as pd

    df = pd.read_parquet(sweep_dir / "results.parquet")
    rows = _table(text)
    head, body = rows[0], rows[1:]
    assert head[:4] == ["cc", "queue", "flow", "n"] and "goodput (Mbit/s)" in head
    assert len(body) == 2 * 2 * 2  # points x flows (bulk, ping)
    col = head.index("goodput (Mbit/s)")
    for r in body:
        if r[2] != "bulk":
            continue
        v = df[(df["flow.bulk.cc"] == r[0]) & (df["link.bottleneck.queue"] == r[1])
               & (df["flow"] == "bulk")]["goodput_bps"].to_numpy(float) / 1e6
        assert int(r[3]) == v.size == 3
        m, h = v.mean(), T975_2 * v.std(ddof=1) / math.sqrt(3)
        mean_s, half_s = r[col].split(" ± ")
        assert float(mean_s) == pytest.approx(m, rel=1e-3)
        assert float(half_s) == pytest.approx(h, rel=0.05)
    # figures: small multiples per metric (goodput of the ping flow is left out), the traces
    # titled by parameter values, never by run ids
    figs = sweep_dir / "figures"
    assert (figs / "goodput_bps.png").is_file() and (figs / "goodput_bps.svg").is_file()
    assert imread(figs / "goodput_bps.png").shape[1] > 1000
    svg = (figs / "traces.svg").read_text()
    assert "cc=newreno, queue=15KB" in svg
    for run_id in df["run_id"].unique():
        assert run_id not in svg and run_id not in (figs / "goodput_bps.svg").read_text()


def test_figure_groups_and_panels_follow_the_options(sweep_dir: Path, tmp_path: Path) -> None:
    df_plan = sweep_report._plan
    import pandas as pd

    df = pd.read_parquet(sweep_dir / "results.parquet")
    params = ["flow.bulk.cc", "link.bottleneck.queue"]
    p = df_plan(df, params, None, None, None, None)
    assert (p.x, p.group, p.facets) == ("flow.bulk.cc", "link.bottleneck.queue", [])
    assert p.metrics[0] == "goodput_bps" and p.flows == ["bulk", "ping"]
    p = df_plan(df, params, ["rtt_mean_ms"], ["bulk"], "link.bottleneck.queue", "flow.bulk.cc")
    ((name, title, caption, fig),) = sweep_report._metric_figures(df, p)
    assert name == "rtt_mean_ms" and "one line per congestion control" in caption
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("link.bottleneck.queue") or "queue" in ax.get_xlabel()
    # one line per cc, each point the mean of the three seeds
    bulk = df[df["flow"] == "bulk"]
    want = bulk.groupby(["flow.bulk.cc", "link.bottleneck.queue"])["rtt_mean_ms"].mean()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["newreno", "cubic"]
    for cont, cc in zip(ax.containers, labels):
        y = cont.lines[0].get_ydata()
        assert np.allclose(y, [want[(cc, "15KB")], want[(cc, "60KB")]])
    # both flows: one panel each
    p = df_plan(df, params, ["rtt_mean_ms"], None, None, None)
    ((_, _, caption, fig),) = sweep_report._metric_figures(df, p)
    assert "one panel per flow" in caption
    assert [a.get_title() for a in fig.axes if a.get_visible()] == ["flow bulk", "flow ping"]
    out = tmp_path / "r.html"
    code, _, err = cli("report", str(sweep_dir), "-o", str(out), "--metrics", "rtt_p95_ms",
                       "--no-traces", "--format", "png")
    assert code == 0 and out.is_file(), err
    assert "95th percentile RTT (ms)" in out.read_text()


@pytest.mark.parametrize("args, needle", [
    (["--metrics", "nope"], "--metrics 'nope': not a numeric column"),
    (["--metrics", "flow"], "--metrics 'flow': not a numeric column"),
    (["--flows", "x"], "--flows 'x': no such flow (flows: bulk, ping)"),
    (["--x", "flow.0.cc"], "--x 'flow.0.cc': not a swept parameter"),
    (["--group", "seeds"], "--group 'seeds': not a swept parameter"),
])
def test_bad_options_are_one_line_errors(sweep_dir: Path, tmp_path: Path, args: list[str],
                                         needle: str) -> None:
    out = tmp_path / "r.html"
    code, _, err = cli("report", str(sweep_dir), "-o", str(out), *args)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_a_directory_that_is_not_a_sweep_is_refused(tmp_path: Path) -> None:
    code, _, err = cli("report", str(tmp_path))
    assert code == 2 and "not a sweep directory" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "report.html").exists()


def test_run_labels_use_the_shortest_unique_tail() -> None:
    params = ["flow.a.cc", "flow.b.cc", "link.x.rate"]
    assert sweep_report.run_label({"flow.a.cc": "bbr", "flow.b.cc": "cubic", "link.x.rate": "5Mbps"},
                                  params, seed=2) == "a.cc=bbr, b.cc=cubic, rate=5Mbps, seed 2"
