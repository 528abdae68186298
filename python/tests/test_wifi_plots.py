"""Wi-Fi figures and outputs: a run with a ``[[wifi]]`` BSS has the ``wifi`` summary, the
``wifi_bss`` / ``wifi_sta`` series and the two figures (valid PNG and SVG); a run without one
draws none of them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import celltcp
from celltcp import plots
from conftest import SMALL_TOML
from test_lte_plots import _valid_png, _valid_svg

#: The documented example: four stations of an 802.11ac AP, two TCP downloads and two UDP loads.
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "wifi.toml"


@pytest.fixture(scope="module")
def wifi_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wifi-plots") / "run"
    celltcp.run(EXAMPLE.read_text(), out=out)
    return out


def test_wifi_run_has_the_outputs(wifi_dir: Path) -> None:
    summary = json.loads((wifi_dir / "summary.json").read_text())
    bss = summary["wifi"][0]
    assert [s["name"] for s in bss["stations"]] == ["laptop1", "laptop2", "phone1", "phone2"]
    assert 0.3 < bss["channel_busy_fraction"] <= 1.0
    # the UDP loads get their 10 Mbit/s through
    for s in bss["stations"][2:]:
        assert s["up"]["goodput_bps"] > 9e6
    busy = pd.read_parquet(wifi_dir / "timeseries" / "wifi_bss.parquet")
    sta = pd.read_parquet(wifi_dir / "timeseries" / "wifi_sta.parquet")
    assert len(busy) >= 45 and len(sta) == 4 * len(busy)
    assert busy["busy_fraction"].between(0, 1).all()


def test_wifi_figures_png_and_svg(wifi_dir: Path) -> None:
    out = wifi_dir / "figs"
    written = plots.plot_run(wifi_dir, outdir=out, only=list(plots.WIFI_FIGURES))
    assert sorted(p.name for p in written) == sorted(f"{n}.{e}" for n in plots.WIFI_FIGURES for e in ("png", "svg"))
    for n in plots.WIFI_FIGURES:
        _valid_png(out / f"{n}.png")
        _valid_svg(out / f"{n}.svg")


def test_no_wifi_figures_without_wifi(tmp_path: Path) -> None:
    out = tmp_path / "run"
    celltcp.run(SMALL_TOML, out=out)
    written = plots.plot_run(out, outdir=tmp_path / "figs", only=list(plots.WIFI_FIGURES))
    assert written == []
