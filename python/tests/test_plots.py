"""Figures: drawn from the run directory's files only, PNG + SVG, not blank, robust to flows
without samples."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest

import celltcp
from celltcp import plots
from conftest import SMALL_TOML, cli


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plots") / "run"
    celltcp.run(SMALL_TOML, out=out, link__1__loss=0.005, set=["duration=5s"])
    return out


def _not_blank(png: Path) -> None:
    img = mpimg.imread(png)
    assert img.ndim == 3 and img.shape[0] > 500 and img.shape[1] > 900  # 300 dpi
    rgb = img[..., :3]
    ink = (rgb < 0.9).any(axis=-1).mean()  # fraction of pixels that are not (near) white
    assert 0.01 < ink < 0.6, f"{png.name}: {ink:.3f} of the pixels are drawn"
    codes = (rgb * 255).astype(np.uint32) @ np.array([65536, 256, 1], dtype=np.uint32)
    assert np.unique(codes).size > 10  # several colours: lines, text, grid


def test_figures_png_and_svg(run_dir: Path) -> None:
    written = plots.plot_run(run_dir)
    figs = run_dir / "figures"
    assert all(p.parent == figs for p in written)
    for name in ["cwnd", "throughput", "rtt_cdf", "queue", "ping"]:
        png, svg = figs / f"{name}.png", figs / f"{name}.svg"
        assert png in written and svg in written
        assert png.stat().st_size > 20_000, name
        assert svg.stat().st_size > 5_000, name
        assert svg.read_text().lstrip().startswith("<?xml")
        _not_blank(png)
    # the demo-like run has no iperf flow, so no iperf figure, and traces no segments
    assert not (figs / "iperf.png").exists()
    assert not (figs / "seq.png").exists()


def test_plots_read_only_files(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("plots must not run a simulation")

    monkeypatch.setattr(celltcp._core, "run", no_run)
    out = run_dir.parent / "only-files"
    assert plots.plot_run(run_dir, ["svg"], outdir=out)


def test_plots_are_deterministic(run_dir: Path, tmp_path: Path) -> None:
    plots.plot_run(run_dir, ["svg", "png"], outdir=tmp_path / "a")
    plots.plot_run(run_dir, ["svg", "png"], outdir=tmp_path / "b")
    for f in sorted((tmp_path / "a").iterdir()):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name


def _write_run(d: Path, flows: list[dict[str, object]], tables: dict[str, pd.DataFrame]) -> None:
    (d / "timeseries").mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"flows": flows, "links": [{"name": "l0"}]}))
    (d / "manifest.json").write_text(json.dumps({"seed": 1, "config": {}}))
    for name, df in tables.items():
        df.to_parquet(d / "timeseries" / f"{name}.parquet")


def test_flows_without_samples(tmp_path: Path) -> None:
    t = np.arange(0, 2, 0.01)
    flows = [{"name": "has-data"}, {"name": "silent"}, {"name": "late"}]
    tcp = pd.DataFrame({
        "time_s": t, "flow": np.zeros(t.size, dtype=np.int64),
        "cwnd_bytes": 1e4 + 1e3 * t, "ssthresh_bytes": np.full(t.size, 2.0**63),
        "srtt_ms": np.full(t.size, 30.0), "bytes_in_flight": np.full(t.size, 1e4),
        "pacing_rate_bps": np.full(t.size, 1e7), "delivered_bytes": 1e6 * t,
    })
    # flow 2 has a single sample: no goodput can be computed from it
    one = tcp.iloc[:1].assign(flow=2)
    tcp = pd.concat([tcp, one], ignore_index=True)
    empty_rtt = pd.DataFrame({"time_s": np.array([], float), "flow": np.array([], np.int64),
                              "rtt_ms": np.array([], float)})
    queue = pd.DataFrame({"time_s": t, "link": np.zeros(t.size, np.int64),
                          "queue_bytes": np.zeros(t.size), "queue_pkts": np.zeros(t.size)})
    _write_run(tmp_path / "run", flows, {"tcp": tcp, "rtt": empty_rtt, "queue": queue})
    written = plots.plot_run(tmp_path / "run", ["png"])
    names = sorted(p.stem for p in written)
    # empty rtt table: the CDF falls back to srtt from the tcp series
    assert names == ["cwnd", "queue", "rtt_cdf", "throughput"]


def test_run_without_timeseries(tmp_path: Path) -> None:
    _write_run(tmp_path / "run", [{"name": "f"}], {})
    assert plots.plot_run(tmp_path / "run") == []


def test_not_a_run_dir(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        plots.plot_run(tmp_path)
    with pytest.raises(ValueError, match="gif"):
        _write_run(tmp_path / "run", [], {})
        plots.plot_run(tmp_path / "run", ["gif"])


def test_iperf_and_udp_flows(tmp_path: Path) -> None:
    scenario = SMALL_TOML.replace('name = "ping"\napp = "ping"', 'name = "voip"\napp = "udp"')
    scenario = scenario.replace('interval = "100ms"', 'rate = "1Mbps"')
    scenario += '\n[[flow]]\nname = "iperf"\napp = "iperf"\nfrom = "client"\nto = "server"\nreverse = true\n'
    res = celltcp.run(scenario, out=tmp_path / "run")
    assert list(res.flows["app"]) == ["bulk", "udp", "iperf"]
    ip = res.timeseries("iperf")
    assert {"flow", "start_s", "end_s", "bytes", "bits_per_second", "retransmits"} <= set(ip.columns)
    # UDP flows report intervals too (iperf3 -u): datagrams, losses, jitter; TCP: retransmits
    assert set(ip["flow"]) == {1, 2} and len(ip) >= 4
    udp, tcp = ip[ip["flow"] == 1], ip[ip["flow"] == 2]
    assert udp["packets"].notna().all() and udp["retransmits"].isna().all()
    assert tcp["retransmits"].notna().all() and tcp["packets"].isna().all()
    written = plots.plot_run(tmp_path / "run", ["png"])
    assert tmp_path / "run" / "figures" / "iperf.png" in written
    _not_blank(tmp_path / "run" / "figures" / "iperf.png")
    # issue 18 item 4: the UDP flow is on the goodput figure too, at its rate
    fig = plots.run_figure(tmp_path / "run", "throughput")
    assert fig is not None
    lines = {ln.get_label(): ln for ln in fig.axes[0].lines}
    assert {"bulk", "voip", "iperf"} <= set(lines)
    y = lines["voip"].get_ydata()
    assert np.median(y) == pytest.approx(res.summary["flows"][1]["goodput_bps"] / 1e6, rel=0.05)


def test_seq_figure_of_a_traced_flow(tmp_path: Path) -> None:
    """``trace_segments``: a Stevens graph of the traced flow only, retransmissions counted."""
    scenario = SMALL_TOML.replace('cc = "cubic"', 'cc = "cubic"\ntrace_segments = true')
    res = celltcp.run(scenario, out=tmp_path / "run", link__1__loss=0.01)
    seg = res.timeseries("segments")
    assert set(seg["flow"]) == {0}
    n_rtx = int(seg["retransmission"].sum())
    assert n_rtx == res.summary["flows"][0]["retransmitted_segments"] > 0
    written = plots.plot_run(tmp_path / "run")
    png, svg = tmp_path / "run" / "figures" / "seq.png", tmp_path / "run" / "figures" / "seq.svg"
    assert png in written and svg in written
    _not_blank(png)
    fig = plots.run_figure(tmp_path / "run", "seq")
    assert fig is not None
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels[:3] == ["segment sent", f"retransmission ({n_rtx})", "ACK"], labels
    # the points are rasterised: the SVG stays small however many segments the flow sent
    assert svg.stat().st_size < 400_000


def test_seq_figure_from_files(tmp_path: Path) -> None:
    """Two traced flows, one panel each; a SACK line only where SACK blocks reach above the ACK;
    a ``segments`` table without its columns draws nothing."""
    seq = np.arange(0, 100, dtype=np.int64) * 1000
    seg = pd.DataFrame({"time_s": np.tile(np.arange(100) * 0.01, 2), "flow": np.repeat([0, 2], 100),
                        "seq": np.tile(seq, 2), "len": np.full(200, 1000, np.int64),
                        "retransmission": np.zeros(200, np.int64)})
    ack = pd.DataFrame({"time_s": np.tile(np.arange(100) * 0.01 + 0.02, 2), "flow": np.repeat([0, 2], 100),
                        "ack": np.tile(seq, 2), "sack": np.concatenate([seq, seq + 3000])})
    flows = [{"name": "a"}, {"name": "b"}, {"name": "c"}]
    _write_run(tmp_path / "run", flows, {"segments": seg, "acks": ack})
    fig = plots.run_figure(tmp_path / "run", "seq")
    assert fig is not None and len(fig.axes) == 2
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["a", "c"]
    assert "highest SACK" not in fig.axes[0].get_legend_handles_labels()[1]
    assert "highest SACK" in fig.axes[1].get_legend_handles_labels()[1]
    assert "retransmission (0)" not in fig.axes[0].get_legend_handles_labels()[1]
    _write_run(tmp_path / "bad", flows, {"segments": seg.drop(columns="retransmission")})
    assert plots.run_figure(tmp_path / "bad", "seq") is None


def _many_flows_run(tmp_path: Path, n: int) -> Path:
    """A dumbbell with ``n`` bulk flows (2 s), run into ``tmp_path/run``."""
    links = "\n".join(f'[[link]]\nbetween = ["s{i}", "left"]\nrate = "100Mbps"\ndelay = "1ms"\n'
                      for i in range(n))
    flows = "\n".join(f'[[flow]]\nname = "f{i}"\napp = "bulk"\nfrom = "s{i}"\nto = "dst"\n'
                      for i in range(n))
    text = (f'duration = "2s"\n{links}\n[[link]]\nname = "bottleneck"\nbetween = ["left", "dst"]\n'
            f'rate = "20Mbps"\ndelay = "10ms"\nqueue = "100KB"\n{flows}')
    out = tmp_path / "run"
    celltcp.run(text, out=out)
    return out


@pytest.mark.parametrize(("n", "panels"), [(3, 3), (14, 14), (30, 1)])
def test_cwnd_figure_scales_with_flows(tmp_path: Path, n: int, panels: int) -> None:
    from celltcp import plots

    fig = plots.run_figure(_many_flows_run(tmp_path, n), "cwnd")
    assert fig is not None
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == panels
    # small multiples stay a figure a page can hold (14 stacked panels were 22 inches tall)
    assert fig.get_size_inches()[1] <= 8.5
    if n == 30:  # the band, and three highlighted flows named in the legend
        labels = visible[0].get_legend_handles_labels()[1]
        assert any("10th-90th percentile" in lb for lb in labels)
        assert sum(lb.startswith("f") for lb in labels) == 3


def test_many_flows_get_distinct_colours_a_sum_panel_and_the_capacity(tmp_path: Path) -> None:
    from matplotlib.colors import to_hex

    from celltcp import plots

    d = _many_flows_run(tmp_path, 14)
    fig = plots.run_figure(d, "rtt_cdf")
    assert fig is not None
    colours = [to_hex(line.get_color()) for line in fig.axes[0].lines]
    assert len(colours) == 14 and len(set(colours)) == 14
    fig = plots.run_figure(d, "throughput")
    assert fig is not None
    top, per_flow = fig.axes[0], fig.axes[1]
    labels = top.get_legend_handles_labels()[1]
    assert "all 14 flows" in labels
    cap = [lb for lb in labels if lb.startswith("capacity of bottleneck")]
    assert cap and "(20 Mbit/s)" in cap[0], labels
    # the flows together fill the bottleneck and, on average, never exceed it (a bin can: the
    # receiver reads a burst when a retransmission fills a hole)
    total = np.asarray(top.lines[0].get_ydata(), float)
    assert 15.0 <= float(np.mean(total[len(total) // 2:])) <= 20.0


def test_plot_only_and_flows_select_figures_and_flows(tmp_path: Path) -> None:
    from celltcp import plots

    d = _many_flows_run(tmp_path, 4)
    written = plots.plot_run(d, ["png"], only=["rtt_cdf", "cwnd"], flows=["f1", "f3"])
    assert sorted(p.name for p in written) == ["cwnd.png", "rtt_cdf.png"]
    run = plots._Run(d)
    run.only_flows = ["f1", "f3"]
    with plots._style():
        fig = plots.fig_rtt_cdf(run)
    assert fig is not None and fig.axes[0].get_legend_handles_labels()[1] == ["f1", "f3"]
    r = cli("plot", d, "--only", "nope")
    assert r.returncode == 2 and "figure 'nope'" in r.stderr and "Traceback" not in r.stderr
