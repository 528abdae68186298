"""Sweep figures (celltcp.sweep_plots) on synthetic results tables and run directories.

The confidence intervals drawn (celltcp.sweep.aggregate) are compared with t-intervals computed
here from Student's t quantiles as printed in statistical tables, not with celltcp's own quantile.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.image import imread

from celltcp import sweep_plots as sp

#: Two-sided 95 % Student t quantiles t(0.975, dof) from a printed table.
T975 = {1: 12.70620, 2: 4.30265, 3: 3.18245, 4: 2.77645, 9: 2.26216, 29: 2.04523}

CCS = ["newreno", "cubic", "bbr"]
WINDOWS = ["64KB", "1MB", "2MB", "4MB"]  # deliberately not in this order in the table


def results(seeds: int = 5) -> pd.DataFrame:
    """A results table shaped like celltcp.sweep's: one row per run and flow."""
    rng = np.random.default_rng(3)
    rows = []
    for w in ["2MB", "64KB", "4MB", "1MB"]:
        for k, cc in enumerate(CCS):
            for seed in range(1, seeds + 1):
                base = {"64KB": 5e6, "1MB": 20e6, "2MB": 30e6, "4MB": 31e6}[w] * (1 + 0.1 * k)
                run = f"{w}-{cc}-{seed}"
                rows.append({"run_id": run, "seed": seed, "flow.0.window": w, "flow.0.cc": cc,
                             "flow": "iperf", "goodput_bps": base + rng.normal(0, 2e6),
                             "rtt_mean_ms": 40 + rng.normal(0, 3), "loss_ratio": rng.uniform(0, 0.02)})
                rows.append({"run_id": run, "seed": seed, "flow.0.window": w, "flow.0.cc": cc,
                             "flow": "ping", "goodput_bps": np.nan,
                             "rtt_mean_ms": 30 + rng.normal(0, 1), "loss_ratio": 0.0})
    return pd.DataFrame(rows)


def t_interval(v: np.ndarray) -> tuple[float, float, float]:
    n = v.size
    m = float(v.mean())
    h = T975[n - 1] * float(v.std(ddof=1)) / math.sqrt(n)
    return m, m - h, m + h


# --- statistics ---------------------------------------------------------------------------


@pytest.mark.parametrize("dof", sorted(T975))
def test_t_quantile_matches_printed_table(dof: int) -> None:
    assert sp.t_quantile(0.975, dof) == pytest.approx(T975[dof], abs=6e-6)


def test_t_quantile_other_levels_and_limits() -> None:
    # t(0.95, 5) = 2.015, t(0.995, 10) = 3.169 (tables); large dof -> the normal quantile 1.95996
    assert sp.t_quantile(0.95, 5) == pytest.approx(2.0150, abs=1e-4)
    assert sp.t_quantile(0.995, 10) == pytest.approx(3.1693, abs=1e-4)
    assert sp.t_quantile(0.975, 1e7) == pytest.approx(1.959964, abs=1e-5)
    assert sp.t_quantile(0.025, 4) == pytest.approx(-T975[4], abs=6e-6)
    with pytest.raises(ValueError, match="0 < p < 1"):
        sp.t_quantile(1.0, 3)


def test_ci_table_is_the_t_interval() -> None:
    df = pd.DataFrame({"g": ["a", "a", "a", "b"], "v": [1.0, 2.0, 6.0, 5.0]})
    s = sp.ci_table(df, ["g"], "v").set_index("g")
    half = 4.302652729911275 * math.sqrt(7.0) / math.sqrt(3.0)  # s^2 = (4 + 1 + 9) / 2
    assert s.loc["a", "mean"] == pytest.approx(3.0)
    assert s.loc["a", "std"] == pytest.approx(math.sqrt(7.0))
    assert s.loc["a", "n"] == 3
    assert s.loc["a", "ci_low"] == pytest.approx(3.0 - half, rel=1e-9)
    assert s.loc["a", "ci_high"] == pytest.approx(3.0 + half, rel=1e-9)
    # one replication: a mean but no interval
    assert s.loc["b", "mean"] == 5.0 and s.loc["b", "n"] == 1
    assert math.isnan(s.loc["b", "ci_low"]) and math.isnan(s.loc["b", "std"])


def test_ordering_by_magnitude() -> None:
    assert sp.ordered(["2MB", "64KB", "4MB", "1MB", "64KB"]) == ["64KB", "1MB", "2MB", "4MB"]
    assert sp.ordered([3000, 1000]) == [1000, 3000]
    assert sp.ordered(["um", "am", "um"]) == ["um", "am"]  # no magnitude: first appearance
    assert sp.ordered(["10Mbps", "500kbps"]) == ["500kbps", "10Mbps"]


# --- summary figures ----------------------------------------------------------------------


def test_lines_error_bars_equal_independent_t_intervals() -> None:
    df = results()
    fig = sp.lines(df, "flow.0.window", "goodput_bps", "flow.0.cc", where={"flow": "iperf"})
    ax = fig.axes[0]
    conts = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(conts) == len(CCS)
    assert [t.get_text() for t in ax.get_xticklabels()] == WINDOWS
    assert ax.get_ylabel() == "goodput (Mbit/s)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == CCS
    iperf = df[df["flow"] == "iperf"]
    for cc, cont in zip(CCS, conts):
        line, _caps, (bars,) = cont.lines
        ys = np.asarray(line.get_ydata(), float)
        segs = bars.get_segments()
        assert len(segs) == len(WINDOWS)
        for k, w in enumerate(WINDOWS):
            v = iperf.loc[(iperf["flow.0.cc"] == cc) & (iperf["flow.0.window"] == w), "goodput_bps"]
            m, lo, hi = t_interval(v.to_numpy(float) / 1e6)
            assert ys[k] == pytest.approx(m, rel=1e-9)
            y0, y1 = sorted((segs[k][0][1], segs[k][1][1]))
            tol = 1e-5 * (hi - lo)  # the table's quantiles have 6 significant digits
            assert y0 == pytest.approx(lo, abs=tol) and y1 == pytest.approx(hi, abs=tol)


def test_lines_band_spans_the_interval() -> None:
    df = results(seeds=3)
    fig = sp.lines(df, "flow.0.window", "rtt_mean_ms", "flow.0.cc", band=True,
                   where={"flow": "iperf", "flow.0.cc": "bbr"})
    ax = fig.axes[0]
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(polys) == 1 and len(ax.lines) == 1
    verts = polys[0].get_paths()[0].vertices
    sel = df[(df["flow"] == "iperf") & (df["flow.0.cc"] == "bbr")]
    for k, w in enumerate(WINDOWS):
        _, lo, hi = t_interval(sel.loc[sel["flow.0.window"] == w, "rtt_mean_ms"].to_numpy(float))
        at = verts[np.isclose(verts[:, 0], k)][:, 1]
        tol = 1e-5 * (hi - lo)
        assert at.min() == pytest.approx(lo, abs=tol)
        assert at.max() == pytest.approx(hi, abs=tol)


def test_bars_heights_and_whiskers() -> None:
    df = results(seeds=4)
    fig = sp.bars(df, "flow.0.cc", "loss_ratio", "flow.0.window", where={"flow": "iperf"})
    ax = fig.axes[0]
    bcs = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(bcs) == len(WINDOWS)
    assert all(len(b.patches) == len(CCS) for b in bcs)
    assert ax.get_ylabel() == "loss ratio (%)"
    errs = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(errs) == len(WINDOWS)
    sel = df[df["flow"] == "iperf"]
    for w, bc, ec in zip(WINDOWS, bcs, errs):
        segs = ec.lines[2][0].get_segments()
        for k, cc in enumerate(CCS):
            v = sel.loc[(sel["flow.0.cc"] == cc) & (sel["flow.0.window"] == w), "loss_ratio"]
            m, lo, hi = t_interval(v.to_numpy(float) * 100)
            assert bc.patches[k].get_height() == pytest.approx(m, rel=1e-9)
            y0, y1 = sorted((segs[k][0][1], segs[k][1][1]))
            tol = 1e-5 * (hi - lo)
            assert y0 == pytest.approx(lo, abs=tol) and y1 == pytest.approx(hi, abs=tol)
    # one colour per window, the same for every bar of that window
    assert len({tuple(b.patches[0].get_facecolor()) for b in bcs}) == len(WINDOWS)


def test_colors_are_fixed_per_group_across_figures() -> None:
    df = results(seeds=2)
    colors = sp.palette(CCS)
    a = sp.lines(df, "flow.0.window", "goodput_bps", "flow.0.cc", where={"flow": "iperf"},
                 colors=colors)
    b = sp.lines(df, "flow.0.window", "goodput_bps", "flow.0.cc",
                 where={"flow": "iperf", "flow.0.cc": ["bbr"]}, colors=colors)
    from matplotlib.colors import to_hex
    got_a = {c.get_label(): to_hex(c.lines[0].get_color()) for c in a.axes[0].containers}
    got_b = {c.get_label(): to_hex(c.lines[0].get_color()) for c in b.axes[0].containers}
    assert list(got_b) == ["bbr"] and len(got_a) == 3
    assert got_b["bbr"] == got_a["bbr"] == to_hex(colors["bbr"])


def test_boxes_count_and_medians() -> None:
    df = results(seeds=5)
    fig = sp.boxes(df, "flow.0.window", "goodput_bps", "flow.0.cc", where={"flow": "iperf"})
    ax = fig.axes[0]
    boxes = [p for p in ax.patches]
    assert len(boxes) == len(CCS) * len(WINDOWS)
    medians = sorted(float(np.mean(l.get_ydata())) for l in ax.lines
                     if l.get_color() == "black" and l.get_linewidth() == 1.8)
    sel = df[df["flow"] == "iperf"]
    expect = sorted(sel.groupby(["flow.0.cc", "flow.0.window"])["goodput_bps"].median() / 1e6)
    assert medians == pytest.approx(expect, rel=1e-9)


def test_metric_cdf_curves() -> None:
    df = results(seeds=3)
    fig = sp.metric_cdf(df, "rtt_mean_ms", "flow")
    ax = fig.axes[0]
    assert len(ax.lines) == 2
    for line in ax.lines:
        flow = line.get_label()
        v = np.sort(df.loc[df["flow"] == flow, "rtt_mean_ms"].to_numpy(float))
        assert np.allclose(line.get_xdata(), v)
        assert np.allclose(line.get_ydata(), np.arange(1, v.size + 1) / v.size)


def test_bad_column_names_it() -> None:
    with pytest.raises(KeyError, match="flow.9.cc"):
        sp.lines(results(2), "flow.9.cc", "goodput_bps")
    with pytest.raises(ValueError, match="no rows"):
        sp.bars(results(2), "flow.0.cc", "goodput_bps", where={"flow": "nope"})


# --- run directories ----------------------------------------------------------------------


def write_run(d: Path, rate_bps: float, rtt: np.ndarray, cwnd0: float) -> Path:
    """A run directory with two flows (TCP 'bulk' and a ping) and its tcp/rtt/ping series."""
    (d / "timeseries").mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"flows": [
        {"name": "bulk", "app": "bulk", "cc": "cubic"}, {"name": "ping", "app": "ping"}]}))
    t = np.arange(0, 10.001, 0.01)
    pd.DataFrame({"time_s": t, "flow": 0, "cwnd_bytes": cwnd0 + 1000 * t,
                  "ssthresh_bytes": 2.0**62, "srtt_ms": 40.0, "bytes_in_flight": 1e4,
                  "pacing_rate_bps": np.nan, "delivered_bytes": rate_bps / 8 * t}
                 ).to_parquet(d / "timeseries" / "tcp.parquet")
    pd.DataFrame({"time_s": np.linspace(0, 10, rtt.size), "flow": 0, "rtt_ms": rtt}
                 ).to_parquet(d / "timeseries" / "rtt.parquet")
    pd.DataFrame({"flow": 1, "seq": np.arange(5), "time_s": np.arange(5.0),
                  "rtt_ms": [30.0, 31.0, 29.0, np.nan, 30.5]}
                 ).to_parquet(d / "timeseries" / "ping.parquet")
    return d


def test_sample_cdf_reads_the_chosen_flows(tmp_path: Path) -> None:
    rtt = np.random.default_rng(1).gamma(4.0, 10.0, 500)
    a = write_run(tmp_path / "a", 10e6, rtt, 1e4)
    fig = sp.sample_cdf({"LTE (TCP)": (a, "bulk")}, "rtt", "rtt_ms")
    (line,) = fig.axes[0].lines
    assert np.allclose(line.get_xdata(), np.sort(rtt))
    assert line.get_ydata()[-1] == pytest.approx(1.0)
    assert fig.axes[0].get_xlabel() == "RTT (ms)"
    fig = sp.sample_cdf({"ping": (a, "ping")}, "ping", "rtt_ms")
    (line,) = fig.axes[0].lines
    assert list(line.get_xdata()) == [29.0, 30.0, 30.5, 31.0]  # the lost echo is left out
    assert "n = 4" in line.get_label()
    with pytest.raises(KeyError, match="no flow named 'x'"):
        sp.sample_cdf({"x": (a, "x")})


def test_traces_side_by_side(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", 8e6, np.ones(10), 1e4)
    b = write_run(tmp_path / "b", 24e6, np.ones(10), 5e4)
    fig = sp.traces({"64 KB": a, "4 MB": b}, rows=("cwnd", "throughput"), bin_s=0.5)
    axes = np.array(fig.axes).reshape(2, 2)
    assert [ax.get_title() for ax in axes[0]] == ["64 KB", "4 MB"]
    assert axes[0, 0].get_ylabel() == "cwnd (KB)" and axes[1, 0].get_ylabel() == "goodput (Mbit/s)"
    for col, (rate, cwnd0) in enumerate([(8.0, 1e4), (24.0, 5e4)]):
        (cw,) = axes[0, col].lines
        assert cw.get_ydata()[0] == pytest.approx(cwnd0 / 1024)
        (gp,) = axes[1, col].lines
        assert np.allclose(gp.get_ydata(), rate)  # constant delivery rate, Mbit/s
    # rows share y, and the top is the highest value of any run (the 4 MB run's cwnd)
    assert axes[0, 0].get_ylim() == axes[0, 1].get_ylim()
    assert axes[0, 0].get_ylim()[1] >= (5e4 + 1000 * 10) / 1024
    assert axes[1, 0].get_ylim()[1] >= 24.0
    with pytest.raises(ValueError, match="unknown row"):
        sp.traces({"a": a}, rows=("queue",))


def test_save_writes_png_and_svg(tmp_path: Path) -> None:
    fig = sp.lines(results(2), "flow.0.window", "goodput_bps", "flow.0.cc", where={"flow": "iperf"})
    paths = sp.save(fig, tmp_path / "fig", "goodput")
    assert [p.name for p in paths] == ["goodput.png", "goodput.svg"]
    img = imread(paths[0])
    assert img.shape[1] == 6 * 300  # 6 in at 300 dpi
    assert (img[..., :3] < 0.5).any()  # something dark was drawn
    svg = paths[1].read_text()
    assert "<svg" in svg and "goodput (Mbit/s)" in svg
    again = sp.save(fig, tmp_path / "fig2", "goodput", ["svg"])[0].read_text()
    assert again == svg  # no date: the same figure gives the same file
    with pytest.raises(ValueError, match="expected png, svg or pdf"):
        sp.save(fig, tmp_path, "x", ["jpg"])
