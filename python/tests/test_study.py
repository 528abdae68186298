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
from celltcp.report import Grade, evaluate
from celltcp.studies import cc_variants_lte as ccv
from celltcp.studies import cc_variants_wifi as ccw
from celltcp.studies import handover as ho
from celltcp.studies import split_tcp_proxy as stp
from celltcp.studies import registry
from test_report import CHROMIUM, check_figures_render


def _study(name: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["study", name, "--quick", "-o", str(out), "--jobs", "2"])
    return rc, capsys.readouterr().out


def _agreement(html: str) -> dict[str, str]:
    # up to the row's verdict cell (the numbers cell before it is a table with rows of its own)
    rows = re.findall(r'<tr data-finding="([^"]+)">.*?<td class="(yes|dir|no|na)">', html, re.S)
    # both grades of agreement (in magnitude, in direction only) read "agrees" here
    verdict = {"yes": "agrees", "dir": "agrees", "no": "does not agree", "na": "not evaluated"}
    return {k: verdict[v] for k, v in rows}


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
    # (two sweeps: the main one and part wifi, each named on its line)
    main_runs = [line for line in lines if line.startswith("study iperf-lte [main, sweep 1/2]: ")]
    assert main_runs[0].startswith("study iperf-lte [main, sweep 1/2]: 0/12 done, 0 failed"), lines
    assert re.match(r"study iperf-lte \[main, sweep 1/2\]: 12/12 done, 0 failed  elapsed "
                    r"\d\d:\d\d  left 00:00$", main_runs[-1]), lines
    wifi_runs = [line for line in lines if line.startswith("study iperf-lte [wifi, sweep 2/2]: ")]
    assert re.match(r"study iperf-lte \[wifi, sweep 2/2\]: 2/2 done, 0 failed  elapsed "
                    r"\d\d:\d\d  left 00:00$", wifi_runs[-1]), lines
    assert lines[-1] == "study iperf-lte: 14 runs finished, making the figures and the report"


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
    # five of the main sweep, two of part wifi (LTE vs Wi-Fi RTT, Fig. 23)
    assert len(figures) == 7 and len(list((out / "figures").glob("*.svg"))) == 7
    assert {"rtt_wifi_box", "rtt_wifi_cdf"} <= {p.stem for p in figures}
    assert html.count('src="data:image/png;base64,') == len(figures)
    # the files run are included verbatim
    for name in ("scenario.toml", "sweep-quick.toml"):
        src = (Path(celltcp.studies.__file__).parent / "iperf-lte" / name).read_text()
        assert src.splitlines()[2].replace("&", "&amp;").replace('"', "&quot;") in html
    first = _agreement(html)
    assert len(first) == 7 and "not evaluated" not in first.values()
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
        if "flow.0.reverse" not in res.table.columns:  # part wifi: no iperf
            return res
        t = res.table.copy()
        up = (t["flow"] == "iperf") & (t["flow.0.reverse"] == False)  # noqa: E712
        t.loc[up, "goodput_bps"] *= 10
        return dataclasses.replace(res, table=t)

    monkeypatch.setattr(celltcp.sweep, "run_sweep", faster_uplink)
    rc, text = _study("iperf-lte", out, capsys)
    assert rc == 0, text
    assert "runs done 0, skipped 14, failed 0" in text
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
    assert meta["runs"]["done"] + meta["runs"]["skipped"] == 14 and meta["versions"]["celltcp"]  # 12 + part wifi
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
    assert len(figures) == 7
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
    # ten findings in the paper's setting, nine again in the loaded cell (the bulk part)
    assert len(verdicts) == 19 and list(verdicts) == [f.key for f in ccv.FINDINGS]
    assert sum(k.endswith(ccv.LOADED_SUFFIX) for k in verdicts) == 9
    # every finding that only needs the RLC modes and the two sizes is evaluated; those that
    # compare named variants are, whenever the quick sweep has those variants (both sweeps run
    # the same seven controls)
    ccs = set(ccv.prepare(pd.read_parquet(out / "results.parquet"))["cc"])
    need = {"am-westwood-veno-beat-vegas": {"westwood", "veno", "vegas"},
            "um-yeah-beats-illinois": {"yeah", "illinois"}}
    for key, verdict in verdicts.items():
        if need.get(key.removesuffix(ccv.LOADED_SUFFIX), set()) <= ccs:
            assert verdict != "not evaluated", (key, verdicts)
    # each finding states the setting its verdict rests on, in the report and findings.json
    records = json.loads((out / "findings.json").read_text())
    for rec in records:
        want = "loaded cell" if rec["key"].endswith(ccv.LOADED_SUFFIX) else "1 Mbit/s"
        assert want in rec["setting"], rec
    assert html.count("setting: ") >= 19
    # the bulk part: its own sweep directory, one saturating flow per UE, its figures and rows
    # in the aggregated table, and the loaded-cell findings
    assert "runs done 56, skipped 0, failed 0" in text  # 28 at 1 Mbit/s + 28 bulk
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
    # 22 runs over 802.11ac at 1 Mbit/s, 22 over LTE, 24 bulk
    assert "runs done 68, skipped 0, failed 0" in text
    html = (out / "report.html").read_text()
    verdicts = _agreement(html)
    assert list(verdicts) == [f.key for f in ccw.FINDINGS]
    # eight findings in the paper's setting, the six 802.11ac-only ones again on the saturated BSS
    assert len(verdicts) == 14 and sum(k.endswith(ccw.LOADED_SUFFIX) for k in verdicts) == 6
    # the quick grids have every variant the findings name, over both networks: all evaluated
    assert "not evaluated" not in verdicts.values(), verdicts
    # each verdict states its setting; the paper's gives the offered load against the capacity
    # the bulk part measured
    records = json.loads((out / "findings.json").read_text())
    for rec in records:
        want = "saturated BSS" if rec["key"].endswith(ccw.LOADED_SUFFIX) else "Mbit/s offered"
        assert want in rec["setting"], rec
        assert rec["numbers"], rec
    df = ccw.prepare(pd.concat([pd.read_parquet(out / p / "results.parquet").assign(part=p or "main")
                                for p in ("", ccw.LTE_PART, ccw.BULK)], ignore_index=True))
    cap = ccw.bss_capacity(df)
    assert cap is not None and f"{cap / 1e6:.1f} Mbit/s the BSS carries" in records[0]["setting"]
    assert set(df["net"]) == {ccw.WIFI, ccw.LTE}
    assert sorted(set(df[df["net"] == ccw.WIFI]["flow"])) == sorted(
        [f"rate-sta{i}" for i in range(1, 15)] + [f"bulk-sta{i}" for i in range(1, 15)])
    names = {p.stem for p in (out / "figures").glob("*.png")}
    assert {"goodput_rate", "owd_rate", "loss_rate", "goodput_bulk"} <= names
    # saturating flows share the BSS: more than 1 Mbit/s each, less than the 65 Mbit/s PHY rate
    # (VHT MCS 7, 20 MHz, one stream, long GI) in all
    bulk = ccw.per_run(df, ccw.BULK)
    assert 2e6 < bulk["goodput_bps"].mean() and cap < 65e6
    # the paper's 14 x 1 Mbit/s does not saturate the BSS
    assert ccw.OFFERED_BPS < 0.5 * cap


_CCS = ["bic", "newreno", "scalable", "hybla", "htcp", "highspeed", "vegas", "veno",
        "westwood", "illinois", "yeah"]


def _synthetic(values: dict[tuple[str, str, int], tuple[float, float, float]],
               loaded: bool = True) -> pd.DataFrame:
    """A results table as the study's three sweeps write it: one row per run and station;
    ``values``: (net, cc, size) -> (goodput, one-way delay, loss ratio). The 802.11ac rows are
    written twice, for the main sweep and (``loaded``) the bulk part."""
    rows = []
    for (net, cc, size), (g, d, lo) in values.items():
        parts = ([(ccw.LTE_PART, "rate")] if net == ccw.LTE
                 else [(None, "rate")] + ([(ccw.BULK, "bulk")] if loaded else []))
        for part, group in parts:
            for st in range(1, 3):
                rows.append({"run_id": f"{part}{net}{cc}{size}", "seed": 1,
                             "flow": f"{group}-sta{st}", "part": part,
                             f"flow.{group}.cc": cc, f"flow.{group}.mss": size,
                             "goodput_bps": g * (3 if group == "bulk" else 1), "owd_mean_ms": d,
                             "jitter_ms": 1.0, "loss_ratio": lo})
    return pd.DataFrame(rows)


def _paper_shape(loss_factor: float = 2.0) -> dict[tuple[str, str, int], tuple[float, float, float]]:
    """The paper's 802.11ac results as its text states them: 3000 B packets give more goodput,
    twice the delay (H-TCP) and ``loss_factor`` times the loss (NewReno); the named winners
    ahead; LTE ahead in goodput, its delay lower at 1000 B and twice 802.11ac's at 3000 B."""
    rank = {"bic": 0.9, "newreno": 0.9, "scalable": 0.9, "hybla": 0.6, "htcp": 0.6,
            "highspeed": 0.6, "veno": 0.9, "vegas": 0.7, "westwood": 0.7, "yeah": 0.9,
            "illinois": 0.8}
    wifi = {(ccw.WIFI, c, s): (rank[c] * 1e6 * (1.0 if s == 1000 else 1.1),
                               20.0 if s == 1000 else 40.0,
                               0.01 if s == 1000 else 0.01 * loss_factor)
            for c in _CCS for s in (1000, 3000)}
    lte = {(ccw.LTE, c, s): (1e6, 15.0 if s == 1000 else 80.0, 0.0) for c in _CCS for s in (1000, 3000)}
    return wifi | lte


def test_cc_variants_wifi_checks_decide_from_the_numbers() -> None:
    df = _synthetic(_paper_shape())
    grades = {f.key: f.check(df).grade for f in ccw.FINDINGS}
    assert all(g.agrees for g in grades.values()), grades
    # the three ratios the paper states are judged in magnitude, the rest direction only
    with_number = {"wifi-size-higher-delay", "wifi-size-higher-loss", "wifi-delay-vs-lte"}
    for key, g in grades.items():
        want = Grade.MAGNITUDE if key.removesuffix(ccw.LOADED_SUFFIX) in with_number else Grade.DIRECTION
        assert g is want, (key, g)
    v = ccw.check_size_higher_loss(df)
    assert [(q.name, q.paper, q.celltcp) for q in v.numbers][-1] == (
        "NewReno loss ratio 3000 B / 1000 B", 2.0, pytest.approx(2.0))
    # the setting is computed: 14 Mbit/s offered against the bulk rows' goodput (2 stations of
    # the synthetic table each getting three times the 1 Mbit/s rows' goodput)
    cap = ccw.bss_capacity(df)
    assert cap == pytest.approx(ccw.prepare(df).query("group == 'bulk'").groupby("run_id")["goodput_bps"].sum().mean())
    assert f"{ccw.OFFERED_BPS / cap * 100:.0f} % of the {cap / 1e6:.1f} Mbit/s" in v.setting
    # the paper's direction but not its number: NewReno loses 10 % more at 3000 B, not twice
    assert ccw.check_size_higher_loss(_synthetic(_paper_shape(loss_factor=1.1))).grade is Grade.DIRECTION
    # every control at its 1 Mbit/s on both networks, the same delay at both sizes, no loss
    # (what celltcp measures at the paper's load): no finding agrees
    flat = _synthetic({(n, c, s): (1e6, 18.0, 0.0)
                       for n in (ccw.WIFI, ccw.LTE) for c in _CCS for s in (1000, 3000)})
    assert {f.key: f.check(flat).grade for f in ccw.FINDINGS} == {
        f.key: Grade.DISAGREES for f in ccw.FINDINGS}
    # without the LTE part the comparisons are not evaluated rather than decided; without the
    # bulk part the loaded findings are not, and the setting says nothing about the capacity
    wifi_only = _synthetic({k: v for k, v in _paper_shape().items() if k[0] == ccw.WIFI}, loaded=False)
    ev = {e.finding.key: e.verdict for e in evaluate(ccw.FINDINGS, wifi_only)}
    assert {k for k, v in ev.items() if v.grade is Grade.NOT_EVALUATED} == (
        {"lte-beats-wifi", "wifi-delay-vs-lte"} | {k for k in ev if k.endswith(ccw.LOADED_SUFFIX)})
    assert ev["wifi-size-higher-delay"].grade is Grade.MAGNITUDE
    assert "offered" not in ev["wifi-size-higher-delay"].setting


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


# --- split-tcp-proxy (paper 004) ------------------------------------------------------------------

STP_DIR = Path(celltcp.studies.__file__).parent / "split-tcp-proxy"


def test_split_tcp_proxy_quick_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "stp"
    rc, text = _study("split-tcp-proxy", out, capsys)
    assert rc == 0, text
    df = stp.prepare(pd.concat(
        [pd.read_parquet(out / p / "results.parquet").assign(part=p or "main")
         for p in ("", *stp.PARTS)], ignore_index=True))
    proxied = (df["proxy"] == stp.WITH).any()
    n = 8 * (2 if proxied else 1)  # FTP 2, 6, 10 users NewReno + 2 CUBIC; one run per other part
    assert f"runs done {n}, skipped 0, failed 0" in text
    html = (out / "report.html").read_text()
    verdicts = _agreement(html)
    assert list(verdicts) == [f.key for f in stp.FINDINGS]
    # what the quick grid can decide without the proxy is decided; the rest says why not
    assert verdicts["ftp-cc-minimal"] != "not evaluated" and verdicts["web-congestion-slower"] != "not evaluated"
    assert verdicts["web-delay-slower"] == "not evaluated"  # one delay in the quick sweep
    findings = {f["key"]: f for f in json.loads((out / "findings.json").read_text())}
    if not proxied:
        for key in ("ftp-gain-uncongested", "web-proxy-faster", "video-proxy-more-satisfied"):
            assert verdicts[key] == "not evaluated" and "proxy parameter" in findings[key]["result"]
    figures = {p.stem for p in (out / "figures").glob("*.png")}
    assert {"ftp_throughput", "ftp_jain", "ftp_user_cdf", "web_page_time", "video_satisfaction"} <= figures
    assert html.count('src="data:image/png;base64,') == len(figures)
    # every FTP user of the 7 serving cells has a flow; the interferer ring's cells are kept busy
    ftp = df[df["app"] == "ftp"]
    for (rid, users), g in ftp.groupby(["run_id", "users"]):
        assert len(g) == 7 * users
    runs = stp.ftp_runs(df)
    assert sorted(set(runs["users"])) == [2, 6, 10]
    # the study's Jain's index is the run summary's index of the bulk (FTP) flows
    for rid, j in zip(runs["run_id"], runs["jain"]):
        assert j == pytest.approx(float(ftp[ftp["run_id"] == rid]["jain_index"].iloc[0]), rel=1e-9)
    one = runs[runs["users"] == 2]["run_id"].iloc[0]
    summary = json.loads((out / "runs" / one / "summary.json").read_text())
    busy = {c["name"]: c for c in summary["lte"]["cells"]}
    assert all(busy[f"site{k}"]["dl_prb_utilization"] > 0.5 for k in range(7, 19)), busy
    # more users per cell, less throughput each (the cells are shared)
    per_user = runs[(runs["cc"] == "newreno") & (runs["proxy"] == stp.WITHOUT)].set_index("users")["goodput_bps"]
    assert per_user[2] > per_user[6] > per_user[10] > 0
    # window-limited downloads (64 KB): no user beats 64 KB over the shortest round trip it can
    # have, 2 x (50 ms Internet + 10 ms S1-U) end to end, 2 x 50 ms to the proxy at the SAE-GW
    cap = {stp.WITHOUT: 65536 * 8 / 0.120, stp.WITH: 65536 * 8 / 0.100}
    assert (ftp["goodput_bps"] <= ftp["proxy"].map(cap) * 1.01).all()
    # so 2 users per cell leave the serving cells room (the paper's uncongested case), and the
    # proxy's shorter loop raises the throughput there
    ref = runs[(runs["users"] == 2) & (runs["cc"] == "newreno") & (runs["proxy"] == stp.WITHOUT)]["run_id"].iloc[0]
    ref_cells = json.loads((out / "runs" / ref / "summary.json").read_text())["lte"]["cells"]
    cells = [c["dl_prb_utilization"] for c in ref_cells if c["name"] in {f"site{k}" for k in range(7)}]
    assert len(cells) == 7 and sum(cells) / 7 < 0.9, cells
    if proxied:
        assert all(g > 0.1 for *_, g in stp._ftp_gains(df, stp.UNCONGESTED, 50.0))
    # web pages and video playbacks happened in every web and video part
    assert (df[df["app"] == "web"]["pages"] > 0).all()
    videos = stp.video_runs(df)
    assert set(videos[stp.PART]) == {stp.VIDEO, stp.VIDEO_IDLE} and (videos["videos"] == 14).all()


def _stp_table(ftp_gain: dict[int, float], page: dict[tuple[float, str, str], float],
               satisfied: dict[tuple[float, str, str], float], jain_spread: dict[str, float]) -> pd.DataFrame:
    """A raw results table of the study's shape: FTP runs (7 cells × users, two variants, three
    delays, with/without proxy: goodput `base(users) × (1 + gain)`), web and video runs."""
    rows: list[dict[str, Any]] = []

    def common(part: str, proxy: str, delay: float, bg: int | None) -> dict[str, Any]:
        r: dict[str, Any] = {"part": part, "seed": 1, "link.internet.delay": f"{delay:g}ms",
                             "proxy": '[{"node": "pgw"}]' if proxy == stp.WITH else "[]"}
        if bg is not None:
            r |= {f"lte.ue.b{i}u.count": bg for i in range(7)}
        return r

    for proxy in stp.PROXY_ORDER:
        for delay in (50.0, 75.0, 125.0):
            for cc in ("newreno", "cubic"):
                for users in (2, 4, 6, 8, 10):
                    rid = f"ftp{proxy}{delay}{cc}{users}"
                    g = 20e6 / users * (1 + (ftp_gain[users] * (1.0 if delay == 50 else 0.5 if users == 2 else 1.5)
                                             if proxy == stp.WITH else 0.0))
                    for k in range(7 * users):
                        spread = 1 + jain_spread[proxy] * (1 if k % 2 else -1)
                        rows.append(common("main", proxy, delay, None) | {
                            "run_id": rid, "flow": f"ftp-c{k % 7}u{k // 7 + 1}", "flow.ftp.cc": cc,
                            **{f"lte.ue.c{i}u.count": users for i in range(7)}, "goodput_bps": g * spread})
    for (delay, bg, proxy), t in page.items():
        part = stp.WEB_IDLE if bg == "0" else stp.WEB
        for w in range(3):
            rows.append(common(part, proxy, delay, None if bg == "0" else {"2-4": 3, "6-8": 7}[bg]) | {
                "run_id": f"web{delay}{bg}{proxy}", "flow": f"web-w0u{w + 1}", "pages": 4,
                "page_time_mean_s": t})
    for (delay, bg, proxy), s in satisfied.items():
        part = stp.VIDEO_IDLE if bg == "0" else stp.VIDEO
        for v in range(10):
            rows.append(common(part, proxy, delay, None if bg == "0" else {"2-4": 3, "6-8": 7}[bg]) | {
                "run_id": f"vid{delay}{bg}{proxy}", "flow": f"clip-v0u{v + 1}",
                "video_satisfied": v < round(s * 10)})
    return stp.prepare(pd.DataFrame(rows))


def test_split_tcp_proxy_checks_decide_from_the_numbers() -> None:
    delays = (50.0, 75.0, 125.0)
    # the paper's world: +70 % at 2 users, +10 % at 4-6, +2 % at 8-10 (50 ms); the uncongested gain
    # halves and the moderate one grows at longer delays; fairness 0.99 without, 0.98 with; the
    # proxy saves 0.3 s of page time at every delay; video satisfaction gains more with delay and load
    paper_gain = {2: 0.70, 4: 0.10, 6: 0.10, 8: 0.02, 10: 0.02}
    page = {(d, b, p): 1.0 + d / 100 + {"0": 0, "2-4": 0.5, "6-8": 1.0}[b] - (0.3 if p == stp.WITH else 0)
            for d in delays for b in stp.BACKGROUND for p in stp.PROXY_ORDER}
    sat = {(d, b, p): 0.9 - d / 1000 - {"0": 0, "2-4": 0.1, "6-8": 0.3}[b]
           + (d / 1000 + {"0": 0, "2-4": 0.1, "6-8": 0.2}[b] if p == stp.WITH else 0)
           for d in delays for b in stp.BACKGROUND for p in stp.PROXY_ORDER}
    df = _stp_table(paper_gain, page, sat, {stp.WITHOUT: 0.05, stp.WITH: 0.10})
    verdicts = {f.key: f.check(df) for f in stp.FINDINGS}
    assert all(v.agrees is True for v in verdicts.values()), {k: v for k, v in verdicts.items() if not v.agrees}
    assert "+70 %" in verdicts["ftp-gain-uncongested"].result and "paper: > +60 %" in verdicts["ftp-gain-uncongested"].result
    for key in ("ftp-gain-uncongested", "ftp-gain-moderate", "ftp-gain-congested", "ftp-cc-minimal",
                "ftp-jain-high", "ftp-jain-lower-with-proxy", "web-relative-gain-falls-with-delay"):
        assert verdicts[key].grade is Grade.MAGNITUDE, (key, verdicts[key])
    (q,) = verdicts["ftp-gain-uncongested"].numbers
    assert (q.paper, q.celltcp, q.unit) == ("> 60", pytest.approx(70.0), "%")
    # a proxy that helps, but by far less than the paper's: direction only
    small = _stp_table({2: 0.2, 4: 0.3, 6: 0.3, 8: 0.12, 10: 0.12}, page, sat, {stp.WITHOUT: 0.05, stp.WITH: 0.3})
    assert stp.check_ftp_gain_uncongested(small).grade is Grade.DIRECTION
    assert stp.check_ftp_gain_moderate(small).grade is Grade.DIRECTION
    assert stp.check_ftp_gain_congested(small).grade is Grade.DIRECTION
    assert stp.check_ftp_jain_lower_with_proxy(small).grade is Grade.DIRECTION  # 0.998 -> 0.917
    # the opposite world: the proxy costs throughput, page time and satisfaction; unfair users
    flat_gain = {u: -0.2 for u in (2, 4, 6, 8, 10)}
    page_bad = {k: v + (0.6 if k[2] == stp.WITH else 0) for k, v in page.items()}
    sat_bad = {k: 0.5 if k[2] == stp.WITH else 0.8 for k in sat}
    bad = _stp_table(flat_gain, {k: 1.0 for k in page}, sat_bad, {stp.WITHOUT: 0.6, stp.WITH: 0.3})
    results = {f.key: f.check(bad).agrees for f in stp.FINDINGS}
    assert results == {
        "ftp-gain-uncongested": False, "ftp-gain-moderate": False, "ftp-gain-congested": False,
        "ftp-cc-minimal": True,  # both variants alike in the synthetic table
        "ftp-jain-high": False, "ftp-jain-lower-with-proxy": False,
        # -20 % everywhere at 50 ms, -10 % (2 users) and -30 % (moderate) at 75 and 125 ms
        "ftp-uncongested-gain-falls-with-delay": False, "ftp-moderate-gain-grows-with-delay": False,
        "web-proxy-faster": False, "web-congestion-slower": False, "web-delay-slower": False,
        "web-relative-gain-falls-with-delay": False,
        "video-proxy-more-satisfied": False, "video-gain-grows": False}
    assert stp.check_web_proxy_faster(_stp_table(paper_gain, page_bad, sat, {stp.WITHOUT: 0, stp.WITH: 0})).agrees is False
    # without runs with the proxy the comparisons are not evaluated, and say why
    ref = df[df["proxy"] == stp.WITHOUT]
    with pytest.raises(ValueError, match="proxy parameter"):
        stp.check_ftp_gain_uncongested(ref)
    assert stp.check_ftp_jain_high(ref).agrees is True and stp.check_web_delay_slower(ref).agrees is True


def test_split_tcp_proxy_web_mean_over_the_same_pages() -> None:
    """With the browsers' page tables the mean page time of every run is over the pages that
    every web run of the seed completed (per browser, the first k): a run that leaves a large
    last page unfinished does not look faster for it."""
    def row(rid: str, proxy: str, bg: int, flow: str, times: list[float], seed: int = 1) -> dict[str, Any]:
        part = stp.WEB if bg else stp.WEB_IDLE
        r = {"part": part, "seed": seed, "run_id": rid, "flow": flow, "link.internet.delay": "50ms",
             "proxy": '[{"node": "pgw"}]' if proxy == stp.WITH else "[]", "pages": len(times),
             "page_time_mean_s": sum(times) / len(times), "page_times": json.dumps(times)}
        return r | ({f"lte.ue.b{i}u.count": bg for i in range(7)} if bg else {})

    rows = [row("idle", stp.WITHOUT, 0, "web-w0u1", [0.5, 4.0, 0.5, 0.5]),
            row("idle", stp.WITHOUT, 0, "web-w0u2", [0.4, 0.4, 0.4]),
            # the loaded run finished the first page of w0u1 only (its 4 s page was cut by the end)
            row("busy", stp.WITHOUT, 6, "web-w0u1", [0.9]),
            row("busy", stp.WITHOUT, 6, "web-w0u2", [0.8, 0.8, 0.8, 0.8]),
            # another seed: its own page sequence, its own k
            row("idle2", stp.WITHOUT, 0, "web-w0u1", [1.0, 1.0], seed=2),
            row("busy2", stp.WITHOUT, 6, "web-w0u1", [2.0, 2.0, 2.0], seed=2)]
    w = stp.web_runs(stp.prepare(pd.DataFrame(rows))).set_index("run_id")
    # seed 1: w0u1's first page and w0u2's first three, in both runs
    assert w.loc["idle", "pages"] == 4 and w.loc["idle", "page_time_s"] == pytest.approx((0.5 + 1.2) / 4)
    assert w.loc["busy", "pages"] == 4 and w.loc["busy", "page_time_s"] == pytest.approx((0.9 + 2.4) / 4)
    assert w.loc["idle2", "page_time_s"] == 1.0 and w.loc["busy2", "page_time_s"] == 2.0
    assert w.loc["busy2", "pages"] == 2
    # every completed page (no page tables): the loaded run looks faster than the idle one
    plain = stp.web_runs(stp.prepare(pd.DataFrame(rows).drop(columns="page_times"))).set_index("run_id")
    assert plain.loc["busy", "page_time_s"] < plain.loc["idle", "page_time_s"]


def test_split_tcp_proxy_ftp_table() -> None:
    """The docs' FTP table: per users and delay, without → with, the gain and Jain's index."""
    gain = {2: 0.70, 4: 0.10, 6: 0.10, 8: 0.02, 10: 0.02}
    df = _stp_table(gain, {}, {}, {stp.WITHOUT: 0.0, stp.WITH: 0.0})
    lines = stp.ftp_table(df).splitlines()
    assert lines[0] == "| users/cell | 50 ms | 75 ms | 125 ms |" and len(lines) == 2 + 5
    # 20 Mbit/s / 2 users = 10 Mbit/s each, +70 % at 50 ms and +35 % at 75 ms with the proxy
    assert lines[2].startswith("| 2 | 10.00 → 17.00 (+70 %); 1.00 → 1.00; – | 10.00 → 13.50 (+35 %)")


def test_split_tcp_proxy_jain_and_proxy_state() -> None:
    # Jain's index: equal shares 1, one flow taking everything 1/n, (1+2+3)^2 / (3*14)
    assert stp.jain([5.0, 5.0, 5.0]) == 1.0
    assert stp.jain([7.0, 0.0, 0.0, 0.0]) == 0.25
    assert stp.jain([1.0, 2.0, 3.0]) == pytest.approx(36 / 42)
    for v in (None, float("nan"), "[]", "", "none", False):
        assert stp.proxy_state(v) == stp.WITHOUT, v
    for v in ('[{"node": "pgw"}]', "pgw", True):
        assert stp.proxy_state(v) == stp.WITH, v


def test_split_tcp_proxy_parts_share_the_network() -> None:
    """Every part runs on the FTP part's network; the idle parts are their background parts
    without the background UEs and downloads."""
    from celltcp.sweep import tomllib

    main_sc = tomllib.loads((STP_DIR / "scenario.toml").read_text())

    def network(sc: dict[str, Any]) -> dict[str, Any]:
        lte = {k: v for k, v in sc["lte"].items() if k != "ue"}
        interferers = [u for u in sc["lte"]["ue"] if u["name"].startswith("x")]
        load = [f for f in sc["flow"] if f["name"] == "load"]
        return {"lte": lte, "x": interferers, "link": sc["link"], "load": load}

    assert main_sc["lte"]["layout"] == {"type": "hex", "rings": 1, "interferer_rings": 1, "isd": "500m", "sectors": 1}
    assert main_sc["lte"]["epc"]["s1u_queue"]["type"] == "red" and main_sc["lte"]["penetration_loss"] != "0dB"
    assert len(network(main_sc)["x"]) == 12
    walkers = [u for u in main_sc["lte"]["ue"] if u["name"].startswith("c")]
    assert len(walkers) == 7 and all(u["mobility"]["model"] == "random_waypoint" for u in walkers)
    # the paper's transfers are window-limited (its §3.2, §4.2): every TCP flow of every part has
    # the 64 KB window of a stack without window scaling
    for sc_file in [STP_DIR / "scenario.toml", *(STP_DIR / p / "scenario.toml" for p in stp.PARTS)]:
        tcp = [f for f in tomllib.loads(sc_file.read_text())["flow"] if f["app"] != "udp"]
        assert tcp and all(f.get("window_exact") == "64KB" for f in tcp), sc_file
    for app in ("web", "video"):
        busy = tomllib.loads((STP_DIR / app / "scenario.toml").read_text())
        idle = tomllib.loads((STP_DIR / f"{app}-idle" / "scenario.toml").read_text())
        assert network(busy) == network(main_sc) == network(idle)
        bg = [u for u in busy["lte"]["ue"] if u["name"].startswith("b")]
        assert [u["count"] for u in bg] == [2, 3, 4, 2, 3, 4, 3]
        busy["lte"]["ue"] = [u for u in busy["lte"]["ue"] if not u["name"].startswith("b")]
        busy["flow"] = [f for f in busy["flow"] if f["name"] != "bg"]
        assert busy == idle
# ---------------------------------------------------------------------------------------------
# mptcp-lwa (paper 002)


def test_mptcp_lwa_quick_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from celltcp.report import Grade, evaluate
    from celltcp.studies import mptcp_lwa as ml

    assert "mptcp-lwa" in registry() and registry()["mptcp-lwa"].parts == (
        ml.CONTENTION, ml.LWA_PART, ml.LWA_CONTENTION)
    out = tmp_path / "lwa"
    rc, text = _study("mptcp-lwa", out, capsys)
    assert rc == 0, text
    # main: LTE only, Wi-Fi only, MPTCP x 2 losses; contention: 3 modes x 2 levels + 3 with
    # loss; lwa: LWA, MLWA x 2 losses; lwa-contention: 2 modes x 2 levels + 2 with loss
    assert "runs done 25, skipped 0, failed 0" in text
    html = (out / "report.html").read_text()
    verdicts = _agreement(html)
    assert list(verdicts) == [f.key for f in ml.FINDINGS]
    table = pd.concat([pd.read_parquet(out / p / "results.parquet").assign(part=p or "main")
                       for p in ("", ml.CONTENTION, ml.LWA_PART, ml.LWA_CONTENTION)],
                      ignore_index=True)
    df = ml.prepare(ml.enrich(table, out))
    modes = set(df["mode"])
    if not {ml.LWA, ml.MLWA} <= modes:
        # the findings about LWA/MLWA say why they are not evaluated
        for key in ("mptcp-best-under-congestion", "lwa-fails-under-congestion", "lwa-small-files",
                    "lwa-relieves-contention", "mlwa-robust"):
            assert verdicts[key] == "not evaluated", key
        assert "has not landed" in html
    # the findings that need only MPTCP are evaluated on the quick sweep
    assert verdicts["mptcp-packet-ratio"] != "not evaluated"
    assert verdicts["mptcp-suffers-contention"] != "not evaluated"
    assert modes == {ml.LTE, ml.WIFI, ml.MPTCP, ml.LWA, ml.MLWA}
    # LWA steers PDUs to both legs; MLWA's data goes over LTE, the LWA WLAN leg and Wi-Fi
    for mode in (ml.LWA, ml.MLWA):
        sel = df[df["mode"] == mode]
        assert (sel["lte_bytes"] > 0).all() and (sel["wifi_bytes"] > 0).all(), (mode, sel)
    assert sorted(set(df["contention"])) == [0, 2, 4]
    assert set(df["loss"]) == {0.0, 1e-3, 1e-2}
    # every 2 MB download finishes in the 20 s runs, and the loss slows each mode down
    assert df["download_s"].notna().all(), df[["mode", "loss", "download_s"]]
    main_df = df[df["contention"] == 0]
    for mode in (ml.LTE, ml.WIFI, ml.MPTCP, ml.LWA, ml.MLWA):
        t = main_df[main_df["mode"] == mode].set_index("loss")["download_s"]
        assert t[1e-2] > 2 * t[0.0], (mode, t)
    # enrich: the split of the data by interface and the channel's busy fraction
    mp = df[df["mode"] == ml.MPTCP]
    assert (mp["lte_bytes"] > 0).all() and (mp["wifi_bytes"] > 0).all()
    assert (df[df["mode"] == ml.LTE]["wifi_bytes"] == 0).all()
    assert (df[df["mode"] == ml.WIFI]["lte_bytes"] == 0).all()
    assert df["busy"].between(0, 1).all()
    # contention keeps the channel busier for an LTE-only download (whose Wi-Fi is idle)
    lte = df[df["mode"] == ml.LTE].groupby("contention")["busy"].mean()
    assert lte[0] < 0.01 < lte[2] < lte[4]
    names = {p.stem for p in (out / "figures").glob("*.png")}
    assert {"throughput_loss", "cwnd_congestion", "download_contention", "busy", "mixed",
            "cwnd_mixed", "lte_wifi_ratio"} <= names
    findings = {f["key"]: f for f in json.loads((out / "findings.json").read_text())}
    ratio = findings["mptcp-packet-ratio"]
    assert ratio["numbers"][0]["paper"] == pytest.approx(1 / 27)
    assert Grade.parse(ratio["grade"]) != Grade.NOT_EVALUATED


def _lwa_table(download: dict[tuple[str, int, float, int], float], busy: float = 0.5,
               ratio: float = 1 / 27) -> pd.DataFrame:
    """A results table as the study's sweeps and enrich() give it: one download row per run;
    ``download`` maps (mode, contention, loss, size in MB) to the download time in seconds."""
    from celltcp.studies import mptcp_lwa as ml

    rows = []
    for n, ((mode, cont, loss, size), t) in enumerate(download.items()):
        size_b = size * 1024 ** 2
        lte = (size_b * ratio / (1 + ratio) if mode in (ml.MPTCP, ml.MLWA, ml.LWA)
               else (size_b if mode == ml.LTE else 0.0))
        rows.append({"run_id": f"r{n}", "seed": 1, "flow": "dl", "mode": mode, "part": "main",
                     "contention": cont, "loss": loss, "size_mb": size, "download_s": t,
                     "throughput_bps": size_b * 8 / t,
                     "busy": busy * (0.5 if mode == ml.LWA else 1.0) + 0.1 * cont,
                     "lte_bytes": lte, "wifi_bytes": size_b - lte})
    return pd.DataFrame(rows)


def test_mptcp_lwa_checks_decide_from_the_numbers() -> None:
    from celltcp.report import Grade, evaluate
    from celltcp.studies import mptcp_lwa as ml

    modes = [ml.LTE, ml.WIFI, ml.LWA, ml.MPTCP, ml.MLWA]
    # the paper's world: without loss LWA fastest for small files, MPTCP for large ones; with
    # much loss MPTCP best and the rest alike; under high contention LWA beats MPTCP; MLWA the
    # most robust with contention and loss; MPTCP 1:27 on LTE:Wi-Fi
    base = {ml.LTE: 1.0, ml.WIFI: 0.9, ml.LWA: 0.4, ml.MPTCP: 0.6, ml.MLWA: 0.55}
    paper: dict[tuple[str, int, float, int], float] = {}
    for m in modes:
        for size in (16, 32, 64):
            big = {ml.LWA: 0.7, ml.MPTCP: 0.5}.get(m, base[m]) if size == 64 else base[m]
            paper[(m, 0, 0.0, size)] = big * size
            paper[(m, 0, 1e-2, size)] = (9.0 if m == ml.MPTCP else 10.0) * size
            paper[(m, 2, 0.0, size)] = base[m] * size
            paper[(m, 4, 0.0, size)] = {ml.MPTCP: 0.8, ml.LWA: 0.6}.get(m, base[m]) * size
        paper[(m, 4, 1e-3, 32)] = {ml.MLWA: 30.0, ml.LWA: 40.0, ml.MPTCP: 40.0}.get(m, 50.0)
    df = _lwa_table(paper)
    for f in ml.FINDINGS:
        v = f.check(df)
        assert v.agrees is True, (f.key, v)
    ratio = ml.check_mptcp_packet_ratio(df)
    assert ratio.grade == Grade.MAGNITUDE and ratio.numbers[0].celltcp == pytest.approx(1 / 27)
    # the opposite world: LWA and MLWA ahead of MPTCP under loss (LWA far ahead of the single
    # paths, the modes further apart than without loss), LWA slow for small files and under
    # contention, MPTCP's split even, MLWA slowest with contention and loss, MPTCP unaffected
    # by contention
    other = dict(paper)
    for size in (16, 32, 64):
        other[(ml.LWA, 0, 1e-2, size)] = 4.0 * size
        other[(ml.MLWA, 0, 1e-2, size)] = 4.0 * size
        other[(ml.LWA, 0, 0.0, size)] = 2.0 * size
        other[(ml.MPTCP, 4, 0.0, size)] = other[(ml.MPTCP, 2, 0.0, size)]
        other[(ml.LWA, 4, 0.0, size)] = 2.0 * size
        for m in modes:
            other[(m, 0, 1e-2, size)] = {ml.LWA: 4.0, ml.MLWA: 1.0, ml.MPTCP: 8.0}.get(m, 10.0) * size
    other[(ml.MLWA, 4, 1e-3, 32)] = 60.0
    flipped = _lwa_table(other, ratio=1.0)
    results = {f.key: f.check(flipped).grade for f in ml.FINDINGS}
    assert all(g == Grade.DISAGREES for g in results.values()), results
    # without the LWA and MLWA modes the findings about them cannot be decided
    no_lwa = df[~df["mode"].isin([ml.LWA, ml.MLWA])]
    for check in (ml.check_mptcp_best_under_congestion, ml.check_lwa_fails_under_congestion,
                  ml.check_lwa_small_files, ml.check_lwa_relieves_contention,
                  ml.check_mlwa_robust, ml.check_modes_converge):
        with pytest.raises(ValueError, match="LWA"):
            check(no_lwa)
    assert ml.check_mptcp_packet_ratio(no_lwa).agrees is True


def test_mptcp_lwa_parts_stay_in_step() -> None:
    """``contention/scenario.toml`` is the main scenario plus the contending stations and their
    UDP flow; the sweeps share the modes."""
    from celltcp.studies import mptcp_lwa as ml
    from celltcp.sweep import tomllib

    folder = Path(celltcp.studies.__file__).parent / "mptcp-lwa"
    main_sc = tomllib.loads((folder / "scenario.toml").read_text())
    cont_sc = tomllib.loads((folder / ml.CONTENTION / "scenario.toml").read_text())
    (dl,) = main_sc.pop("flow")
    dl2, cont = cont_sc.pop("flow")
    assert dl == dl2 and cont["app"] == "udp" and cont["rate"] == "1.5Mbps" and cont["from"] == "c*"
    (bss,), (bss2,) = main_sc.pop("wifi"), cont_sc.pop("wifi")
    assert bss2.pop("stations") == bss.pop("stations") + ["c1", "c2", "c3", "c4"]
    bss2.pop("distances"), bss.pop("distances")
    assert bss == bss2 and bss["standard"] == "802.11g"
    assert main_sc == cont_sc
    # the LWA parts are these two with the UE's bearer split to the AP, nothing else
    for plain, name in (("scenario.toml", ml.LWA_PART), (f"{ml.CONTENTION}/scenario.toml", ml.LWA_CONTENTION)):
        a = tomllib.loads((folder / plain).read_text())
        b = tomllib.loads((folder / name / "scenario.toml").read_text())
        lwa = b["lte"]["ue"][0].pop("lwa")
        assert a == b and lwa["ap"] == "ap" and lwa["steering"] == "dynamic"
    # the paper's cell and backhaul
    assert (main_sc["lte"]["bandwidth"], main_sc["lte"]["scheduler"]) == ("5MHz", "rr")
    (backhaul,) = [lk for lk in main_sc["link"] if lk.get("name") == "backhaul"]
    assert backhaul["delay"] == "80ms"
    for quick in (False, True):
        name = "sweep-quick.toml" if quick else "sweep.toml"
        g1 = tomllib.loads((folder / name).read_text())["grid"]
        g2 = tomllib.loads((folder / ml.CONTENTION / name).read_text())["grid"]
        assert g1["flow.dl.to"] == g2["flow.dl.to"] and g1["flow.dl.mptcp"] == g2["flow.dl.mptcp"]
    full = tomllib.loads((folder / "sweep.toml").read_text())["grid"]
    assert full["flow.dl.bytes"] == ["16MB", "32MB", "64MB"] and len(full["link.backhaul.loss"]) == 4
