"""The studies of ``celltcp study``: published experiments as sweeps, figures and checked findings.

A study is a folder of data (``studies/<name>/``: ``scenario.toml``, ``sweep.toml`` and
``sweep-quick.toml``) and a Python module (``studies/<name with _>.py``) that defines its
:class:`Study`: the figures it draws from the results and the paper's findings, each with the
function that checks it against the results (:class:`celltcp.report.Finding`). A paper with a
second scenario (a different topology, or a change a sweep cannot make such as removing a key;
not just other parameter values) gives it a *part*: a subfolder ``studies/<name>/<part>/``
with its own three files, run as a second sweep into ``DIR/<part>/``; its rows join the
results table with ``part = "<part>"`` (the main sweep's rows have ``part = "main"``).

====================  =====  ===================================================================
name                  paper  what it reproduces
====================  =====  ===================================================================
``iperf-lte``         000    iperf3 over a TDD band-41 LTE cell: window 64 KB..4 MB, uplink vs
                             downlink, CUBIC vs Reno, RTT over LTE vs a wired path; part
                             ``wifi``: ping RTT over LTE vs an 802.11ac BSS (Fig. 23)
``handover``          001    X2 handover, PDCP seamless vs lossless forwarding, PDCP queue 64 KB..4 MB;
                             part ``surge``: a sudden load increase in a cell; part
                             ``failure``: neighbour cells fail, their UEs move to the survivor
``mptcp-lwa``         002    16/32/64 MB downloads over LTE (5 MHz) and 802.11g: LTE only, Wi-Fi
                             only, MPTCP (OLIA) under server loss 0 to 1e-2; part ``contention``:
                             2 or 4 Wi-Fi stations sending UDP uplink; parts ``lwa`` and
                             ``lwa-contention``: the same with an LWA split bearer (LWA, MLWA)
``cc-variants-lte``   003    eleven congestion controls (and four more) × RLC AM/UM ×
                             1000/3000-byte segments, 14 UEs with 1 Mbit/s flows: throughput,
                             delay, jitter, loss; part ``bulk``: the loaded cell (saturating
                             flows, 10 KiB RLC buffer), every finding checked again there;
                             ns-3 3.37's numbers beside celltcp's (``ns3.json``)
``split-tcp-proxy``   004    a split-connection TCP proxy at the SAE-GW of a loaded 7-cell LTE
                             network: FTP (users per cell, NewReno/CUBIC, Internet delay); parts
                             ``web``/``web-idle`` and ``video``/``video-idle``: browsing and video
                             with and without background FTP
====================  =====  ===================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from ..report import Finding

__all__ = ["Study", "StudyFigure", "registry", "get", "UnknownStudy", "run_dir", "part_dir", "MAIN", "PART"]

HERE = Path(__file__).resolve().parent
#: the results table's column that names the sweep (part) a row comes from, and the main one's name
PART = "part"
MAIN = "main"


@dataclass(frozen=True)
class StudyFigure:
    """A figure a study draws: file name (without extension), title, caption, the figure."""

    name: str
    title: str
    caption: str
    figure: Figure


@dataclass(frozen=True)
class Study:
    name: str
    #: the paper's number in /papers (e.g. "000")
    paper_id: str
    #: one line for ``celltcp study --list``
    summary: str
    #: the paper, as a citation
    paper: str
    #: what the study reproduces and how (trusted HTML for the report)
    intro_html: str
    findings: Sequence[Finding]
    #: draws the figures from the prepared results table and the sweep directory
    figures: Callable[[pd.DataFrame, Path], list[StudyFigure]]
    #: adds derived columns (e.g. ``direction`` from ``flow.0.reverse``) to the results table
    prepare: Callable[[pd.DataFrame], pd.DataFrame] = lambda df: df
    #: the aggregated table of the report: grouping columns and metrics
    aggregate_by: Sequence[str] = ()
    metrics: Sequence[str] = ("goodput_bps",)
    #: flows (by name) to keep in the aggregated table; empty: all
    table_flows: Sequence[str] = ()
    #: the rows the aggregated table is computed from (default: the results table itself,
    #: restricted to ``table_flows``), e.g. one row per run averaged over the UEs
    table_rows: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: further scenarios of the paper, each a sweep of its own in ``<folder>/<part>/``, run into
    #: ``DIR/<part>/``; their rows join the results table with ``part = <part>``
    parts: Sequence[str] = ()
    #: adds columns computed from the run directories (e.g. metrics over a time window, from the
    #: time series) to the results table, before ``prepare``; gets the table (with its ``part``
    #: column) and the study's output directory
    enrich: Callable[[pd.DataFrame, Path], pd.DataFrame] | None = None

    @property
    def folder(self) -> Path:
        return HERE / self.name

    def part_folder(self, part: str = MAIN) -> Path:
        if part == MAIN:
            return self.folder
        if part not in self.parts:
            raise KeyError(f"study {self.name!r} has no part {part!r} (parts: {MAIN}, "
                           f"{', '.join(self.parts)})")
        return self.folder / part

    def sweep_file(self, quick: bool = False, part: str = MAIN) -> Path:
        return self.part_folder(part) / ("sweep-quick.toml" if quick else "sweep.toml")

    def scenario_file(self, part: str = MAIN) -> Path:
        return self.part_folder(part) / "scenario.toml"


def part_dir(sweep_dir: Path, part: str = MAIN) -> Path:
    """Where the sweep of ``part`` of a study runs inside the study's output directory."""
    return Path(sweep_dir) if part == MAIN else Path(sweep_dir) / part


class UnknownStudy(KeyError):
    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(name)
        self.name = name
        self.known = list(known)

    def __str__(self) -> str:
        return f"no study named {self.name!r} (studies: {', '.join(self.known)})"


def registry() -> dict[str, Study]:
    """Every study, by name, in the order of the papers."""
    from . import cc_variants_lte, cc_variants_wifi, handover, iperf_lte
    from . import mptcp_lwa, split_tcp_proxy

    studies = [iperf_lte.STUDY, handover.STUDY, cc_variants_lte.STUDY, cc_variants_wifi.STUDY,
               mptcp_lwa.STUDY, split_tcp_proxy.STUDY]
    return {s.name: s for s in sorted(studies, key=lambda s: s.paper_id)}


def get(name: str) -> Study:
    studies = registry()
    if name not in studies:
        raise UnknownStudy(name, list(studies))
    return studies[name]


def run_dir(sweep_dir: Path, df: pd.DataFrame, **params: Any) -> Path:
    """The run directory of the first run (lowest seed) whose columns equal ``params``.

    Keyword names use ``__`` for the dots of a parameter path: ``flow__0__cc="cubic"``.
    """
    sel = df
    for k, v in params.items():
        col = k.replace("__", ".")
        if col not in sel.columns:
            raise KeyError(f"results table has no column {col!r}")
        sel = sel[sel[col] == v]
    if sel.empty:
        raise KeyError(f"no run with {params}")
    run_id = str(sel.sort_values("seed").iloc[0]["run_id"])
    return Path(sweep_dir) / "runs" / run_id
