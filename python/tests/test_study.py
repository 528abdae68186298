"""``celltcp study``: each study's quick variant end to end through the CLI, its report, and the
agreement table being computed from the results (a changed result changes the verdict)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import celltcp.sweep
from celltcp.cli import main
from celltcp.studies import cc_variants_lte as ccv
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


def test_iperf_lte_quick_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "iperf-lte"
    rc, text = _study("iperf-lte", out, capsys)
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

    if CHROMIUM is not None:
        check_figures_render(report, tmp_path, len(figures))


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


def test_handover_quick_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "handover"
    rc, text = _study("handover", out, capsys)
    assert rc == 0, text
    html = (out / "report.html").read_text()
    figures = sorted((out / "figures").glob("*.png"))
    assert len(figures) == 4
    assert html.count('src="data:image/png;base64,') == len(figures)
    verdicts = _agreement(html)
    assert set(verdicts) == {"seamless-goodput-falls", "lossless-delay-grows", "seamless-throughput-lossless-delay"}
    assert "not evaluated" not in verdicts.values()
    table = pd.read_parquet(out / "results.parquet")
    dl = table[table["flow"] == "dl"]
    lossless = dl[dl["lte.handover.forwarding"] == "lossless"]
    # with a 4 MB queue nothing overflows: a lossless handover leaves TCP nothing to retransmit
    assert (lossless["retransmitted_segments"][lossless["lte.pdcp.buffer"] == "4MB"] == 0).all()
    assert verdicts["lossless-delay-grows"] == "agrees"
