"""Study 003's files: every combination of the full sweep is a valid scenario (the sweep loader
runs each through the core's validation), and the grid is the one the paper asks for."""

from __future__ import annotations

from pathlib import Path

import celltcp.studies
from celltcp.cli import main
from celltcp.sweep import load_sweep

HERE = Path(celltcp.studies.__file__).resolve().parent / "cc-variants-lte"


def test_full_sweep_validates_every_combination() -> None:
    sw = load_sweep(HERE / "sweep.toml")
    ccs = {p["flow.rate.cc"] for _, p, _ in sw.runs}
    assert {"newreno", "cubic", "bbr", "vegas", "westwood", "veno", "illinois", "yeah", "bic",
            "scalable", "highspeed", "htcp", "hybla"} <= ccs
    assert {p["lte.rlc.mode"] for _, p, _ in sw.runs} == {"am", "um"}
    assert {p["flow.rate.mss"] for _, p, _ in sw.runs} == {1000, 3000}
    assert len(sw.runs) == len(ccs) * 2 * 2 * 3


def test_every_cc_of_the_sweep_is_selectable(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["list", "cc"]) == 0
    listed = capsys.readouterr().out
    for _, p, _ in load_sweep(HERE / "sweep-quick.toml").runs:
        assert p["flow.rate.cc"] in listed
