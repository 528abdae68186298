"""``celltcp study``: each study's quick variant end to end through the CLI, its report, and the
agreement table being computed from the results (a changed result changes the verdict)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import celltcp.sweep
from celltcp.cli import main
from celltcp.studies import cc_variants_lte as ccv
from celltcp.studies import handover as ho
from celltcp.studies import registry
from test_report import CHROMIUM, check_figures_render


def _study(name: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["study", name, "--quick", "-o", str(out), "--jobs", "2"])
    return rc, capsys.readouterr().out


def _agreement(html: str) -> dict[str, str]:
    rows = re.findall(r'<tr data-finding="([^"]+)">(.*?)</tr>', html, re.S)
    verdict = {"yes": "agrees", "no": "does not agree", "na": "not evaluated"}
    return {k: verdict[re.findall(r'<td class="(yes|no|na)">', row)[0]] for k, row in rows}


def test_study_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in out]
    assert names == list(registry())
    assert all(len(line.split(None, 1)[1]) > 20 for line in out)  # a description each


def test_unknown_study_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "no-such-study", "-o", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "no study named 'no-such-study'" in err and "iperf-lte" in err
    assert not (tmp_path / "x").exists()  # nothing ran


@pytest.fixture(scope="module")
def iperf_quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """``celltcp study iperf-lte --quick``, run once for the tests of this module: its
    directory, exit status and standard output."""
    out = tmp_path_factory.mktemp("iperf-lte") / "study"
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        rc = main(["study", "iperf-lte", "--quick", "-o", str(out), "--jobs", "2", "--progress"])
    (out.parent / "stderr.txt").write_text(err.getvalue())
    return out, rc, buf.getvalue()


def test_study_progress_line_like_sweep(iperf_quick: tuple[Path, int, str]) -> None:
    # issue 18 item 6: `celltcp study` showed no progress unless stderr was a terminal, and then
    # only as "sweep: ..."; --progress draws the sweep's line (runs done, failed, time left)
    lines = (iperf_quick[0].parent / "stderr.txt").read_text().splitlines()
    runs = [line for line in lines if line.startswith("study iperf-lte: ")]
    assert runs[0].startswith("study iperf-lte: 0/12 done, 0 failed"), lines
    assert re.match(r"study iperf-lte: 12/12 done, 0 failed  elapsed \d\d:\d\d  left 00:00$",
                    runs[-2]), lines
    assert runs[-1] == "study iperf-lte: 12 runs finished, making the figures and the report"


def test_iperf_lte_quick_end_to_end(iperf_quick: tuple[Path, int, str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # a copy, so that the re-run below leaves the module's study as it was
    out = tmp_path / "iperf-lte"
    shutil.copytree(iperf_quick[0], out)
    rc, text = iperf_quick[1:]
    assert rc == 0, text
    report = out / "report.html"
    html = report.read_text()
    figures = sorted((out / "figures").glob("*.png"))
    assert len(figures) == 5 and len(list((out / "figures").glob("*.svg"))) == 5
    assert html.count('src="data:image/png;base64,') == len(figures)
    # the files run are included verbatim
    for name in ("scenario.toml", "sweep-quick.toml"):
        src = (Path(celltcp.studies.__file__).parent / "iperf-lte" / name).read_text()
        assert src.splitlines()[2].replace("&", "&amp;").replace('"', "&quot;") in html
    first = _agreement(html)
    assert len(first) == 6 and "not evaluated" not in first.values()
    findings = {f["key"]: f for f in json.loads((out / "findings.json").read_text())}
    assert {k: f["agrees"] for k, f in findings.items()} == {
        k: v == "agrees" for k, v in first.items()}
    assert first["uplink-slower"] == "agrees"
    # the numbers in the result column are the table's
    table = pd.read_parquet(out / "results.parquet")
    ul = table[(table["flow"] == "iperf") & (table["flow.0.reverse"] == False)  # noqa: E712
               & (table["flow.0.window"] == "4MB") & (table["flow.0.cc"] == "cubic")]
    assert f"uplink {ul['goodput_bps'].mean() / 1e6:.2f} Mbit/s" in findings["uplink-slower"]["result"]

    # Same study again with the uplink results made 10x faster: nothing is re-run, and the
    # verdict of "the uplink is much slower" flips, because it is computed from the results.
    real = celltcp.sweep.run_sweep

    def faster_uplink(*a: Any, **k: Any) -> Any:
        res = real(*a, **k)
        t = res.table.copy()
        up = (t["flow"] == "iperf") & (t["flow.0.reverse"] == False)  # noqa: E712
        t.loc[up, "goodput_bps"] *= 10
        return dataclasses.replace(res, table=t)

    monkeypatch.setattr(celltcp.sweep, "run_sweep", faster_uplink)
    rc, text = _study("iperf-lte", out, capsys)
    assert rc == 0, text
    assert "runs done 0, skipped 12, failed 0" in text
    second = _agreement(report.read_text())
    assert second.pop("uplink-slower") == "does not agree"
    assert first.pop("uplink-slower") == "agrees"


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package "
                    "'chromium'; scripts/install.sh installs it)")
def test_iperf_lte_quick_report_renders_in_chromium(iperf_quick: tuple[Path, int, str],
                                                     tmp_path: Path) -> None:
    """The real report of a study (not a synthetic one): every figure decodes and is laid out,
    and the first one is drawn."""
    out, rc, text = iperf_quick
    assert rc == 0, text
    figures = list((out / "figures").glob("*.png"))
    assert len(figures) == 5
    check_figures_render(out / "report.html", tmp_path, len(figures))


@pytest.mark.skipif(not (Path(celltcp.studies.__file__).parent / "cc-variants-lte"
                         / "sweep-quick.toml").is_file(),
                    reason="cc-variants-lte's scenario and sweep files are not in the tree yet")
def test_cc_variants_lte_quick_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ccv"
    rc, text = _study("cc-variants-lte", out, capsys)
    assert rc == 0, text
    html = (out / "report.html").read_text()
    figures = sorted((out / "figures").glob("*.png"))
    assert len(figures) >= 5
    assert html.count('src="data:image/png;base64,') == len(figures)
    verdicts = _agreement(html)
    assert len(verdicts) == 10
    # every finding that only needs the RLC modes and the two sizes is evaluated; those that
    # compare named variants are, whenever the quick sweep has those variants
    ccs = set(ccv.prepare(pd.read_parquet(out / "results.parquet"))["cc"])
    need = {"am-westwood-veno-beat-vegas": {"westwood", "veno", "vegas"},
            "um-yeah-beats-illinois": {"yeah", "illinois"}}
    for key, verdict in verdicts.items():
        if key not in need or need[key] <= ccs:
            assert verdict != "not evaluated", (key, verdicts)
    # the bulk part: its own sweep directory, one saturating flow per UE, its figures and rows
    # in the aggregated table, and no finding of its own
    assert "runs done 40, skipped 0, failed 0" in text  # 28 at 1 Mbit/s + 12 bulk
    bulk = pd.read_parquet(out / "bulk" / "results.parquet")
    assert sorted(set(bulk["flow"])) == sorted(f"bulk-ue{i}" for i in range(1, 15))
    assert "rate" not in set(bulk["flow.bulk.cc"])
    names = {p.stem for p in figures}
    assert {"goodput_bulk", "owd_bulk", "jitter_bulk", "loss_bulk"} <= names
    assert "<h3>bulk/scenario.toml</h3>" in html and "<td>bulk</td>" in html
    # saturating flows get more than their 1 Mbit/s counterparts
    assert bulk["goodput_bps"].mean() > 2e6


def test_cc_variants_lte_bulk_scenario_differs_only_in_the_rate() -> None:
    """``bulk/scenario.toml`` is the main scenario with the flow renamed and its rate removed
    (a sweep cannot delete a key): nothing else may drift apart."""
    from celltcp.sweep import tomllib

    folder = Path(celltcp.studies.__file__).parent / "cc-variants-lte"
    main_sc = tomllib.loads((folder / "scenario.toml").read_text())
    bulk_sc = tomllib.loads((folder / "bulk" / "scenario.toml").read_text())
    (rate_flow,), (bulk_flow,) = main_sc.pop("flow"), bulk_sc.pop("flow")
    assert main_sc == bulk_sc
    assert rate_flow.pop("rate") == "1Mbps" and "rate" not in bulk_flow
    assert (rate_flow.pop("name"), bulk_flow.pop("name")) == ("rate", ccv.BULK)
    assert rate_flow == bulk_flow
    # and the bulk grid is the 1 Mbit/s grid (full sweep)
    grid = {k.split(".", 2)[-1]: v for k, v in tomllib.loads((folder / "sweep.toml").read_text())["grid"].items()}
    bulk_grid = {k.split(".", 2)[-1]: v for k, v in
                 tomllib.loads((folder / "bulk" / "sweep.toml").read_text())["grid"].items()}
    assert grid == bulk_grid and "dctcp" not in grid["cc"] and {"lp", "westwoodplain"} <= set(grid["cc"])


def test_handover_quick_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "handover"
    rc, text = _study("handover", out, capsys)
    assert rc == 0, text
    assert "runs done 13, skipped 0, failed 0" in text  # 9 handover + 2 load-surge + 2 cell-failure runs
    html = (out / "report.html").read_text()
    figures = sorted(p.stem for p in (out / "figures").glob("*.png"))
    assert figures == sorted(["goodput_queue", "delay_queue", "retx_queue", "traces",
                              "ho_zoom_seamless", "ho_zoom_seamless-flush", "ho_zoom_lossless", "surge_goodput",
                              "surge_rtt", "surge_crowd_cdf", "surge_traces", "failure_goodput",
                              "failure_rtt", "failure_moved_goodput", "failure_traces"])
    assert html.count('src="data:image/png;base64,') == len(figures)
    verdicts = _agreement(html)
    assert set(verdicts) == {"seamless-goodput-falls", "seamless-flush-goodput-falls", "lossless-delay-grows",
                             "seamless-throughput-lossless-delay", "surge-bandwidth-drops",
                             "surge-degrades-tcp", "failure-bandwidth-drops", "failure-degrades-tcp"}
    assert "not evaluated" not in verdicts.values()
    # both scenarios' files are in the report
    for name in ("scenario.toml", "sweep-quick.toml", "surge/scenario.toml", "surge/sweep-quick.toml",
                 "failure/scenario.toml", "failure/sweep-quick.toml"):
        assert f"<h3>{name}</h3>" in html
    table = pd.read_parquet(out / "results.parquet")
    dl = table[table["flow"] == "dl"]
    assert len(dl) == 9
    # the handover itself: lossless forwards every SDU; seamless discards those RLC was sending
    # (with a 64 KB queue the window is so small that there may be none)
    for rid, mode, q in zip(dl["run_id"], dl["lte.handover.forwarding"], dl["lte.pdcp.buffer"]):
        hos = json.loads((out / "runs" / rid / "summary.json").read_text())["lte"]["handovers"]
        assert [h["kind"] for h in hos] == ["handover"]
        if mode == "lossless":
            assert hos[0]["sdus_discarded"] == 0, hos[0]
        elif q != "64KB":
            assert hos[0]["sdus_discarded"] > 0, hos[0]
    assert verdicts["lossless-delay-grows"] == "agrees"

    # scenario 2, in its own sweep directory: a tagged flow and one flow per UE of the crowd
    surge = pd.read_parquet(out / "surge" / "results.parquet")
    assert sorted(surge["lte.ue.crowd.count"].unique()) == [5, 20]
    for n, g in surge.groupby("lte.ue.crowd.count"):
        assert sorted(g["flow"]) == sorted(["tagged", *(f"surge-crowd{i}" for i in range(1, n + 1))])
    # the verdict's numbers are the tagged flow's time series over the windows around the surge
    big = surge[(surge["lte.ue.crowd.count"] == 20) & (surge["flow"] == "tagged")]
    run = out / "surge" / "runs" / big["run_id"].iloc[0]
    tcp = pd.read_parquet(run / "timeseries" / "tcp.parquet")
    m = ho.window_metrics(tcp[tcp["flow"] == 0], 10.0, 10.0)
    findings = {f["key"]: f for f in json.loads((out / "findings.json").read_text())}
    assert (f"crowd 20: {m['goodput_before_bps'] / 1e6:.2f} → {m['goodput_after_bps'] / 1e6:.2f} "
            "Mbit/s") in findings["surge-bandwidth-drops"]["result"]
    assert m["goodput_after_bps"] < m["goodput_before_bps"]

    # scenario 2 with cell failures: both neighbours fail at 10 s, every one of their UEs moves to
    # the surviving cell and keeps downloading there (a failed cell's last transmission no longer
    # interferes with the CQI reports of the UEs it lost)
    fail = pd.read_parquet(out / "failure" / "results.parquet")
    for (w, e), g in fail.groupby(list(ho.FAILED_CELL_UES)):
        run = out / "failure" / "runs" / g["run_id"].iloc[0]
        summary = json.loads((run / "summary.json").read_text())
        moved = [h for h in summary["lte"]["handovers"] if h["kind"] == "cell-failure"]
        assert sorted(h["ue"] for h in moved) == sorted(
            [f"ue-west{i}" for i in range(1, w + 1)] + [f"ue-east{i}" for i in range(1, e + 1)])
        assert all(h["target"] == "enb" and h["detach_s"] == 10.0 for h in moved), moved
        assert {u["cell"] for u in summary["lte"]["ues"]} == {"enb"}
        tcp = pd.read_parquet(run / "timeseries" / "tcp.parquet")
        for i, f in enumerate(summary["flows"]):
            after = ho.window_metrics(tcp[tcp["flow"] == i], 10.0, 10.0)["goodput_after_bps"]
            assert after > 0.5e6, (f["name"], after)
    big = fail[(fail["lte.ue.ue-west.count"] == 10) & (fail["flow"] == "tagged")]
    tcp = pd.read_parquet(out / "failure" / "runs" / big["run_id"].iloc[0] / "timeseries" / "tcp.parquet")
    m = ho.window_metrics(tcp[tcp["flow"] == 0], 10.0, 10.0)
    assert (f"20 moved: {m['goodput_before_bps'] / 1e6:.2f} → {m['goodput_after_bps'] / 1e6:.2f} "
            "Mbit/s") in findings["failure-bandwidth-drops"]["result"]
