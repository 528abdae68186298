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
from celltcp.studies import cc_variants_wifi as ccw
from celltcp.studies import handover as ho
from celltcp.studies import registry
from test_report import CHROMIUM, check_figures_render


def _study(name: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["study", name, "--quick", "-o", str(out), "--jobs", "2"])
    return rc, capsys.readouterr().out


def _agreement(html: str) -> dict[str, str]:
    # a row may hold a nested table of numbers (Quantity), so a row runs to the next finding's
    rows = [(part.split('"', 1)[0], part) for part in html.split('<tr data-finding="')[1:]]
    # both grades of agreement (in magnitude, in direction only) read "agrees" here
    verdict = {"yes": "agrees", "dir": "agrees", "no": "does not agree", "na": "not evaluated"}
    return {k: verdict[re.findall(r'<td class="(yes|dir|no|na)">', row)[0]] for k, row in rows}


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


def test_iperf_lte_quick_feeds_docnumbers(iperf_quick: tuple[Path, int, str],
                                          tmp_path: Path) -> None:
    """The real study directory: study.json says what ran, and the docs block of iperf-lte is
    rewritten from its findings (on a copy of docs/studies.md), the rest of the file unchanged."""
    from celltcp.studies import docnumbers as dn

    out = iperf_quick[0]
    meta = json.loads((out / "study.json").read_text())
    assert meta["study"] == "iperf-lte" and meta["quick"] is True
    assert meta["runs"]["done"] + meta["runs"]["skipped"] == 12 and meta["versions"]["celltcp"]
    doc = tmp_path / "studies.md"
    original = dn.DEFAULT_DOC.read_text(encoding="utf-8")
    doc.write_text(original, encoding="utf-8")
    assert dn.main(["--doc", str(doc), str(out)]) == 0
    new = doc.read_text(encoding="utf-8")
    a, b = dn.blocks(new)["iperf-lte"]
    block = new[a:b]
    findings = json.loads((out / "findings.json").read_text())
    assert "the `--quick` run of `celltcp study iperf-lte`" in block
    for k, f in enumerate(findings, 1):
        assert f"{k}. `{f['key']}`: " in block and f["grade"] in block
    oa, ob = dn.blocks(original)["iperf-lte"]
    assert new[:a] == original[:oa] and new[b:] == original[ob:]
    assert dn.main(["--doc", str(doc), "--check", str(out)]) == 0


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


def test_cc_variants_wifi_quick_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ccw"
    rc, text = _study("cc-variants-wifi", out, capsys)
    assert rc == 0, text
    # 22 runs over 802.11ac at 1 Mbit/s, 10 over LTE, 8 bulk
    assert "runs done 40, skipped 0, failed 0" in text
    html = (out / "report.html").read_text()
    verdicts = _agreement(html)
    assert list(verdicts) == [f.key for f in ccw.FINDINGS]
    # the quick grid has every variant the findings name, over both networks: all evaluated
    assert "not evaluated" not in verdicts.values(), verdicts
    df = ccw.prepare(pd.concat([pd.read_parquet(out / p / "results.parquet").assign(part=p or "main")
                                for p in ("", ccw.LTE_PART, ccw.BULK)], ignore_index=True))
    assert set(df["net"]) == {ccw.WIFI, ccw.LTE}
    assert sorted(set(df[df["net"] == ccw.WIFI]["flow"])) == sorted(
        [f"rate-sta{i}" for i in range(1, 15)] + [f"bulk-sta{i}" for i in range(1, 15)])
    names = {p.stem for p in (out / "figures").glob("*.png")}
    assert {"goodput_rate", "owd_rate", "loss_rate", "goodput_bulk"} <= names
    # saturating flows share the BSS: more than 1 Mbit/s each, far less than the BSS alone
    bulk = ccw.per_run(df, ccw.BULK)
    assert 2e6 < bulk["goodput_bps"].mean() < 45e6 / 14 * 1.2


def _synthetic(goodput: dict[tuple[str, str, int], float], delay: float = 20.0) -> pd.DataFrame:
    """A results table as the study's three sweeps write it: one row per run and station."""
    rows = []
    for (net, cc, size), g in goodput.items():
        part = ccw.LTE_PART if net == ccw.LTE else None
        for st in range(1, 3):
            rows.append({"run_id": f"{net}{cc}{size}", "seed": 1, "flow": f"rate-sta{st}",
                         "part": part, "flow.rate.cc": cc, "flow.rate.mss": size,
                         "goodput_bps": g, "owd_mean_ms": delay + size / 1000,
                         "jitter_ms": 1.0, "loss_ratio": 0.001 * size / 1000})
    return pd.DataFrame(rows)


def test_cc_variants_wifi_checks_decide_from_the_numbers() -> None:
    ccs = ["bic", "newreno", "scalable", "hybla", "htcp", "highspeed", "vegas", "veno",
           "westwood", "illinois", "yeah"]
    # the paper's world: 3000 B better over Wi-Fi, the named winners ahead, LTE ahead of Wi-Fi
    rank = {"bic": 0.9, "newreno": 0.9, "scalable": 0.9, "hybla": 0.6, "htcp": 0.6,
            "highspeed": 0.6, "veno": 0.9, "vegas": 0.7, "westwood": 0.7, "yeah": 0.9,
            "illinois": 0.8}
    paper = {(ccw.WIFI, c, s): rank[c] * 1e6 * (1.0 if s == 1000 else 1.1) for c in ccs for s in (1000, 3000)}
    paper |= {(ccw.LTE, c, s): 1e6 for c in ccs for s in (1000, 3000)}
    df = _synthetic(paper)
    for f in ccw.FINDINGS:
        assert f.check(df).agrees is True, (f.key, f.check(df))
    # every control at its 1 Mbit/s on both networks (what celltcp measures): none agrees
    flat = _synthetic({(n, c, s): 1e6 for n in (ccw.WIFI, ccw.LTE) for c in ccs for s in (1000, 3000)})
    results = {f.key: f.check(flat).agrees for f in ccw.FINDINGS}
    # (delay and loss still grow with the size in the synthetic table)
    assert results == {"wifi-size-higher-throughput": False, "wifi-size-higher-delay": True,
                       "wifi-size-higher-loss": True, "wifi-loss-based-ranking": False,
                       "wifi-veno-beats-vegas-westwood": False, "wifi-yeah-beats-illinois": False,
                       "lte-beats-wifi": False}
    # without the LTE part the comparison is not evaluated rather than decided
    wifi_only = _synthetic({k: v for k, v in paper.items() if k[0] == ccw.WIFI})
    with pytest.raises(ValueError, match="no 'rate' flows|no LTE runs"):
        ccw.check_lte_beats_wifi(wifi_only)


def test_cc_variants_wifi_parts_stay_in_step_with_their_sources() -> None:
    """``lte/scenario.toml`` is cc-variants-lte's scenario, and ``bulk/scenario.toml`` the main
    one without the application rate: nothing else may drift apart."""
    from celltcp.sweep import tomllib

    studies = Path(celltcp.studies.__file__).parent
    folder = studies / "cc-variants-wifi"
    assert (tomllib.loads((folder / "lte" / "scenario.toml").read_text())
            == tomllib.loads((studies / "cc-variants-lte" / "scenario.toml").read_text()))
    main_sc = tomllib.loads((folder / "scenario.toml").read_text())
    bulk_sc = tomllib.loads((folder / "bulk" / "scenario.toml").read_text())
    (rate_flow,), (bulk_flow,) = main_sc.pop("flow"), bulk_sc.pop("flow")
    assert main_sc == bulk_sc
    assert rate_flow.pop("rate") == "1Mbps" and "rate" not in bulk_flow
    assert (rate_flow.pop("name"), bulk_flow.pop("name")) == ("rate", ccw.BULK)
    assert rate_flow == bulk_flow
    # the paper's 802.11ac: VHT MCS 7, 20 MHz, A-MPDU, 14 stations
    (bss,) = main_sc["wifi"]
    assert (bss["standard"], bss["mcs"], bss["width"], bss["ampdu"], bss["stations"]["count"]) == (
        "802.11ac", 7, "20MHz", True, 14)
    grids = [tomllib.loads((f / "sweep.toml").read_text())["grid"] for f in (folder, folder / "lte", folder / "bulk")]
    ccs = [next(v for k, v in g.items() if k.endswith(".cc")) for g in grids]
    assert ccs[0] == ccs[1] == ccs[2]


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
    # the handover itself (steady-state queue 4 MB in every run): lossless with a 4 MB
    # forwarding buffer forwards every SDU; a 64 KB one cannot hold the backlog, and what it does
    # not keep is lost; seamless-flush forwards nothing at detach and loses the RLC backlog
    for rid, mode, q in zip(dl["run_id"], dl["lte.handover.forwarding"], dl["lte.pdcp.forwarding_buffer"]):
        hos = json.loads((out / "runs" / rid / "summary.json").read_text())["lte"]["handovers"]
        assert [h["kind"] for h in hos] == ["handover"]
        h = hos[0]
        if mode == "lossless" and q == "4MB":
            assert h["sdus_discarded"] == 0 and h["sdus_not_forwarded"] == 0, h
        if mode == "lossless" and q == "64KB":
            assert h["sdus_not_forwarded"] > 0 and h["sdus_forwarded"] * 1400 <= 64 * 1024, h
        if mode == "seamless-flush":
            assert h["sdus_forwarded"] == 0 and h["sdus_not_forwarded"] == 0 and h["sdus_discarded"] > 0, h
    # the checks read the handover window of each run's time series (one seed: the means are
    # the runs' own figures)
    findings = {f["key"]: f for f in json.loads((out / "findings.json").read_text())}
    lossless = dl[dl["lte.handover.forwarding"] == "lossless"]
    for rid, q in zip(lossless["run_id"], lossless["lte.pdcp.forwarding_buffer"]):
        run = out / "runs" / rid
        tcp = pd.read_parquet(run / "timeseries" / "tcp.parquet")
        h0 = json.loads((run / "summary.json").read_text())["lte"]["handovers"][0]
        w = ho.handover_window(tcp[tcp["flow"] == 0], h0)
        assert w["ho_at_s"] == h0["detach_s"] and 30 < w["ho_at_s"] < 50, w
        text = (f"{q} {w['ho_rtt_added_ms']:+.0f} ({w['ho_srtt_before_ms']:.0f} → "
                f"{w['ho_srtt_after_ms']:.0f})")
        assert text in findings["lossless-delay-grows"]["result"], (text, findings["lossless-delay-grows"])

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
