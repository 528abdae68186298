"""LTE figures: drawn for runs with an ``lte`` section (PNG + SVG, valid, not blank, legible with
many UEs), and not at all for runs without one."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest

import celltcp
from celltcp import plots
from conftest import SMALL_TOML

#: Two UEs at fixed distances in a 5 MHz cell, a TCP download to each and an upload from ue1.
LTE_TOML = """\
duration = "2s"
seed = 11

[lte]
bandwidth = "5MHz"

[[lte.enb]]
name = "enb"

[[lte.ue]]
name = "ue"
count = 2
placement = { type = "distances", distances = ["150m", "450m"] }

[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "5ms"

[[flow]]
name = "dl"
app = "bulk"
from = "server"
to = "ue*"
cc = "cubic"
mss = 1400

[[flow]]
name = "ul"
app = "bulk"
from = "ue1"
to = "server"
cc = "cubic"
mss = 1400
"""

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

HANDOVER_FIGURES = ("lte_handover", "lte_ho_zoom")

#: Two eNBs 300 m apart, a UE driving from one to the other at 120 km/h while downloading.
HANDOVER_TOML = """\
duration = "6s"
seed = 3

[lte]
bandwidth = "5MHz"
shadowing = "0dB"

[lte.handover]
forwarding = "lossless"
time_to_trigger = "100ms"

[[lte.enb]]
name = "a"
position = [0.0, 0.0]

[[lte.enb]]
name = "b"
position = [300.0, 0.0]

[[lte.ue]]
name = "car"
enb = "a"
mobility = { model = "constant_velocity", start = [20.0, 5.0], heading_deg = 0.0, speed = { dist = "constant", kmh = 120.0 } }

[[link]]
between = ["server", "pgw"]
rate = "1Gbps"
delay = "10ms"
queue = "1000p"

[[flow]]
name = "dl"
app = "bulk"
from = "server"
to = "car"
cc = "cubic"
mss = 1400
window = "512KB"
"""


@pytest.fixture(scope="module")
def lte_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lte-plots") / "run"
    celltcp.run(LTE_TOML, out=out)
    return out


def _valid_png(png: Path) -> None:
    assert png.read_bytes()[:8] == PNG_MAGIC, png.name
    assert png.stat().st_size > 20_000, png.name
    img = mpimg.imread(png)
    assert img.ndim == 3 and img.shape[0] > 900 and img.shape[1] > 1500, img.shape  # 300 dpi
    rgb = img[..., :3]
    ink = (rgb < 0.9).any(axis=-1).mean()
    assert 0.01 < ink < 0.7, f"{png.name}: {ink:.3f} of the pixels are drawn"
    codes = (rgb * 255).astype(np.uint32) @ np.array([65536, 256, 1], dtype=np.uint32)
    assert np.unique(codes).size > 10


def _valid_svg(svg: Path) -> None:
    assert svg.stat().st_size > 5_000, svg.name
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml")
    root = ET.fromstring(text)
    assert root.tag.endswith("svg")
    assert "<dc:date>" not in text  # reproducible: no creation date


def test_lte_run_has_the_inputs(lte_dir: Path) -> None:
    summary = json.loads((lte_dir / "summary.json").read_text())
    ues = summary["lte"]["ues"]
    assert [u["name"] for u in ues] == ["ue1", "ue2"]
    for name in ("lte_ue", "lte_cell"):
        assert len(pd.read_parquet(lte_dir / "timeseries" / f"{name}.parquet")) > 10


def test_lte_figures_png_and_svg(lte_dir: Path) -> None:
    written = plots.plot_run(lte_dir)
    figs = lte_dir / "figures"
    for name in plots.LTE_FIGURES:
        png, svg = figs / f"{name}.png", figs / f"{name}.svg"
        if name in HANDOVER_FIGURES:  # a run without handovers has none
            assert png not in written, name
            continue
        assert png in written and svg in written, name
        _valid_png(png)
        _valid_svg(svg)
    # the ordinary figures are still there
    for name in ("cwnd", "throughput", "rtt_cdf"):
        assert (figs / f"{name}.png").is_file()


def test_handover_figures(tmp_path: Path) -> None:
    out = tmp_path / "ho"
    celltcp.run(HANDOVER_TOML, out=out)
    summary = json.loads((out / "summary.json").read_text())
    hos = summary["lte"]["handovers"]
    assert [(h["source"], h["target"]) for h in hos] == [("a", "b")]
    ue = pd.read_parquet(out / "timeseries" / "lte_ue.parquet")
    assert set(ue["cell"]) == {0, 1}
    assert ue["x_m"].iloc[-1] > ue["x_m"].iloc[0] + 150  # 120 km/h for 6 s: 200 m
    written = plots.plot_run(out)
    for name in HANDOVER_FIGURES:
        png, svg = out / "figures" / f"{name}.png", out / "figures" / f"{name}.svg"
        assert png in written and svg in written, name
        _valid_png(png)
        _valid_svg(svg)
    svg = (out / "figures" / "lte_handover.svg").read_text(encoding="utf-8")
    assert "interruption" in svg and "handover decided" in svg
    # one figure on its own, as the handover study's report places it; without a segment
    # trace it shows the sampled bytes the UE acknowledged
    fig = plots.run_figure(out, "lte_ho_zoom")
    assert fig is not None and "around the handover of car (a → b)" in fig.axes[0].get_title()
    assert fig.axes[0].get_legend_handles_labels()[1][0] == "acknowledged by the UE"
    assert not (out / "figures" / "seq.png").exists()


def test_handover_zoom_is_a_segment_sequence_graph_when_traced(tmp_path: Path) -> None:
    out = tmp_path / "ho"
    res = celltcp.run(HANDOVER_TOML.replace('window = "512KB"', 'window = "512KB"\ntrace_segments = true'),
                      out=out)
    h = res.summary["lte"]["handovers"][0]
    written = plots.plot_run(out)
    for name in ("lte_ho_zoom", "seq"):
        png = out / "figures" / f"{name}.png"
        assert png in written, name
        _valid_png(png)
    fig = plots.run_figure(out, "lte_ho_zoom")
    assert fig is not None
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert labels[0] == "segment sent" and "ACK" in labels and "interruption" in labels, labels
    assert ax.get_ylabel().startswith("sequence − ")
    # the dots are the trace's segments from 2 s before to 3 s after the decision
    seg = res.timeseries("segments")
    t0 = h["decided_s"]
    inside = seg[(seg.time_s >= t0 - 2) & (seg.time_s <= t0 + 3)]
    dots = ax.collections[0].get_offsets()
    assert len(dots) == int((inside.retransmission == 0).sum()) > 100
    assert dots[:, 0].min() >= t0 - 2 and dots[:, 0].max() <= t0 + 3
    # the ACK clock stops while the UE is detached: in that gap the sender sends less than
    # half its mean rate over the window
    gap = inside[(inside.time_s > h["detach_s"]) & (inside.time_s < h["attach_s"])]
    assert len(gap) < 0.5 * len(inside) * (h["attach_s"] - h["detach_s"]) / 5.0 + 1


def test_run_figure_one_by_name(lte_dir: Path, tmp_path: Path) -> None:
    assert plots.run_figure(lte_dir, "lte_ho_zoom") is None  # no handover in this run
    fig = plots.run_figure(lte_dir, "cwnd")
    assert fig is not None and fig.axes[0].lines
    with pytest.raises(ValueError, match="figure 'nope': expected one of cwnd, "):
        plots.run_figure(lte_dir, "nope")
    with pytest.raises(FileNotFoundError, match="not a celltcp run directory"):
        plots.run_figure(tmp_path, "cwnd")


def test_lte_goodput_matches_flows_by_host(lte_dir: Path) -> None:
    run = plots._Run(lte_dir)
    dl, ul = plots._goodput_per_ue(run, ["ue1", "ue2"])
    flows = run.flows
    to = {f["to"]: f["goodput_bps"] / 1e6 for f in flows if f["from"] == "server"}
    assert dl == pytest.approx([to["ue1"], to["ue2"]])
    assert ul[0] == pytest.approx(next(f["goodput_bps"] for f in flows if f["from"] == "ue1") / 1e6)
    assert ul[0] > 0 and ul[1] == 0


def test_lte_figures_are_deterministic(lte_dir: Path, tmp_path: Path) -> None:
    # SVG only: it holds the rasterised heat map as an embedded PNG, so PNG is covered too
    plots.plot_run(lte_dir, ["svg"], outdir=tmp_path / "a")
    plots.plot_run(lte_dir, ["svg"], outdir=tmp_path / "b")
    for f in sorted((tmp_path / "a").glob("lte_*")):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name


def test_no_lte_figures_without_lte(tmp_path: Path) -> None:
    celltcp.run(SMALL_TOML, out=tmp_path / "run", set=["duration=1s"])
    written = plots.plot_run(tmp_path / "run", ["png", "svg"])
    assert written
    assert not [p for p in written if p.stem.startswith("lte")]
    assert not list((tmp_path / "run" / "figures").glob("lte*"))


def _fake_lte_run(d: Path, n: int, failed: int | None = None) -> None:
    """A run directory with an ``lte`` section for ``n`` UEs (no simulation)."""
    rng = np.random.default_rng(1)
    ues, flows = [], []
    for i in range(n):
        cqi = rng.integers(0, 50, 16).tolist()
        mcs = rng.integers(0, 50, 29).tolist()
        side = {"sinr_db_mean": 10.0 - i * 0.3, "sinr_db_min": -2.0, "sinr_db_max": 25.0,
                "cqi_hist": cqi, "mcs_hist": mcs, "prbs_per_tti": 20.0, "prbs_total": 1000,
                "ttis_scheduled": 50, "phy_throughput_bps": 2e6, "harq_tx": 50, "harq_retx": 5,
                "harq_failed": 0, "bler": 0.1, "residual_bler": 0.0, "rlc_pdus_tx": 100,
                "rlc_pdus_retx": 2, "rlc_sdus_dropped": 0, "rlc_sdus_lost": 0,
                "pdcp_sdus_dropped": 0, "scheduling_requests": 3}
        ues.append({"name": f"ue{i + 1}", "cell": "enb", "position_m": [10.0 * i, 0.0],
                    "distance_m": 10.0 * i, "dl": side, "ul": {**side, "sinr_db_min": None},
                    "radio_link_failure": i == failed})
        flows.append({"name": f"dl{i}", "app": "bulk", "from": "server", "to": f"ue{i + 1}",
                      "goodput_bps": 1.5e6})
    cells = [{"name": "enb", "dl_prb_utilization": 0.9, "ul_prb_utilization": 0.1,
              "dl_throughput_bps": 3e7, "ul_throughput_bps": 1e6}]
    (d / "timeseries").mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"flows": flows, "links": [], "duration_s": 1.0,
                                                "lte": {"ues": ues, "cells": cells}}))
    t = np.repeat(np.arange(1, 101) * 0.01, n)
    ue = np.tile(np.arange(n, dtype=np.int64), 100)
    pd.DataFrame({"time_s": t, "ue": ue, "dl_rlc_buffer_bytes": rng.uniform(0, 5e5, t.size),
                  "dl_rlc_retx_bytes": np.zeros(t.size), "ul_rlc_buffer_bytes": np.zeros(t.size),
                  "dl_pdcp_buffer_bytes": rng.uniform(0, 8e5, t.size),
                  "cqi": np.full(t.size, 9.0), "dl_phy_mbps": np.ones(t.size),
                  "dl_prbs_per_tti": np.ones(t.size)}).to_parquet(d / "timeseries" / "lte_ue.parquet")
    tc = np.arange(1, 101) * 0.01
    pd.DataFrame({"time_s": tc, "cell": np.zeros(tc.size, np.int64),
                  "dl_prb_utilization": np.full(tc.size, 0.9), "ul_prb_utilization": np.full(tc.size, 0.1),
                  "dl_phy_mbps": np.full(tc.size, 30.0), "ul_phy_mbps": np.full(tc.size, 1.0)}
                 ).to_parquet(d / "timeseries" / "lte_cell.parquet")


@pytest.mark.parametrize("n", [1, 50])
def test_lte_figures_any_number_of_ues(tmp_path: Path, n: int) -> None:
    _fake_lte_run(tmp_path / "run", n, failed=0)
    written = plots.plot_run(tmp_path / "run", ["png"])
    assert sorted(p.stem for p in written) == sorted(f for f in plots.LTE_FIGURES if f not in HANDOVER_FIGURES)
    for p in written:
        _valid_png(p)


def test_lte_without_series_or_samples(tmp_path: Path) -> None:
    """Summary-only figures still come; a UE never scheduled (null SINR) does not break them."""
    _fake_lte_run(tmp_path / "run", 3)
    for f in (tmp_path / "run" / "timeseries").iterdir():
        f.unlink()
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    s["lte"]["ues"][1]["dl"].update(sinr_db_mean=None, sinr_db_min=None, sinr_db_max=None,
                                    cqi_hist=[0] * 16, mcs_hist=[0] * 29)
    (tmp_path / "run" / "summary.json").write_text(json.dumps(s))
    written = plots.plot_run(tmp_path / "run", ["png"])
    assert sorted(p.stem for p in written) == sorted(
        {"lte_cqi_mcs", "lte_sinr", "lte_harq_rlc", "lte_prbs_goodput"})
