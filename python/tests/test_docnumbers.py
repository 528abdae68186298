"""celltcp.studies.docnumbers: the figures docs/studies.md quotes, rewritten from findings.json."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from celltcp.report import Finding, Grade, Quantity, Verdict, evaluate, write_report
from celltcp.studies import docnumbers as dn

DOC = """# Studies

Some text the script must not touch: 1.23 Mbit/s.

<!-- numbers: alpha -->
hand-typed 9.99 Mbit/s (stale)
<!-- /numbers: alpha -->

Between the blocks.

<!-- numbers: beta -->
<!-- /numbers: beta -->
The end.
"""


def _study_dir(tmp: Path, name: str, ratio: float, quick: bool = False) -> Path:
    def check(df: pd.DataFrame) -> Verdict:
        r = float(df["r"].mean())
        return Verdict(f"ratio {r:.3f}", grade=Grade.MAGNITUDE if r < 0.05 else Grade.DIRECTION,
                       numbers=(Quantity("uplink/downlink", r, paper=0.0099, ns3=0.02),),
                       tolerance="within ×5", setting="TDD configuration 2")

    d = tmp / name
    ev = evaluate([Finding("ul", "uplink much slower | than downlink", check, "ratio < 1")],
                  pd.DataFrame({"r": [ratio]}))
    write_report(d / "report.html", title=f"celltcp study {name}" + (" (quick)" if quick else ""),
                 evaluated=ev, version_info={"celltcp": "9.9", "git commit": "abc123",
                                             "date (UTC)": "2026-01-01 00:00:00"})
    (d / "study.json").write_text(json.dumps({
        "study": name, "quick": quick, "runs": {"done": 3, "skipped": 0, "failed": 0},
        "versions": {"celltcp": "9.9", "git commit": "abc123",
                     "date (UTC)": "2026-01-01 00:00:00"}}))
    return d


def test_docs_have_a_block_per_study_it_quotes() -> None:
    text = dn.DEFAULT_DOC.read_text(encoding="utf-8")
    have = dn.blocks(text)
    for name in ("iperf-lte", "cc-variants-lte", "cc-variants-wifi"):
        assert name in have, (name, list(have))
    from celltcp.studies import registry

    assert set(have) <= set(registry()), have  # every block names a real study


def test_rewrite_round_trips_and_leaves_the_rest_alone(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "studies.md"
    doc.write_text(DOC)
    a = _study_dir(tmp_path, "alpha", 0.21)
    assert dn.main(["--doc", str(doc), "--check", str(a)]) == 1  # stale: would change
    assert dn.main(["--doc", str(doc), str(a)]) == 0
    new = doc.read_text()
    assert "9.99" not in new and "hand-typed" not in new
    # outside the block: byte for byte the same
    head, rest = DOC.split("<!-- numbers: alpha -->", 1)
    assert new.startswith(head + "<!-- numbers: alpha -->\n")
    assert new.endswith(DOC[DOC.index("<!-- /numbers: alpha -->"):])
    # the numbers side by side, grade, tolerance, setting, provenance; '|' escaped in the table
    assert ("| 1 | uplink much slower \\| than downlink | uplink/downlink: 0.0099 | "
            "uplink/downlink: 0.21 | uplink/downlink: 0.02 | agrees in direction only "
            "(within ×5) | TDD configuration 2 |") in new
    assert "from the full run of `celltcp study alpha` (celltcp 9.9, commit abc123" in new
    assert "1. `ul`: ratio 0.210 (check: ratio < 1)" in new
    # a second run changes nothing, and --check agrees
    assert dn.main(["--doc", str(doc), str(a)]) == 0
    assert doc.read_text() == new
    assert dn.main(["--doc", str(doc), "--check", str(a)]) == 0
    # a new run with other numbers replaces them; beta's block is untouched
    b = _study_dir(tmp_path / "again", "alpha", 0.03, quick=True)
    assert dn.main(["--doc", str(doc), str(b)]) == 0
    newer = doc.read_text()
    assert "uplink/downlink: 0.03" in newer and "0.21" not in newer
    assert "agrees in magnitude (within ×5)" in newer and "the `--quick` run" in newer
    assert newer.endswith("<!-- numbers: beta -->\n<!-- /numbers: beta -->\nThe end.\n")
    capsys.readouterr()


def test_name_from_report_title_or_by_hand(tmp_path: Path) -> None:
    d = _study_dir(tmp_path, "beta", 0.5, quick=True)
    (d / "study.json").unlink()  # an older directory: the name and quick come from the title
    s = dn.load(str(d))
    assert s.name == "beta" and s.meta["quick"] is True
    assert dn.load(f"alpha={d}").name == "alpha"


def test_bad_input_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "studies.md"
    doc.write_text(DOC)
    assert dn.main(["--doc", str(doc), str(tmp_path / "nope")]) == 2
    assert "no findings.json" in capsys.readouterr().err
    g = _study_dir(tmp_path, "gamma", 0.5)
    assert dn.main(["--doc", str(doc), str(g)]) == 2
    err = capsys.readouterr().err
    assert "no block '<!-- numbers: NAME -->' for gamma (blocks: alpha, beta)" in err
    doc.write_text("<!-- numbers: alpha -->\nno end\n")
    a = _study_dir(tmp_path, "alpha", 0.5)
    assert dn.main(["--doc", str(doc), str(a)]) == 2
    assert "has no '<!-- /numbers: alpha -->'" in capsys.readouterr().err
    (a / "findings.json").write_text('[{"key": "x", "agrees": true}]')  # written before grades
    assert dn.main(["--doc", str(doc), str(a)]) == 2
    assert "expected a list of findings with 'key' and 'grade'" in capsys.readouterr().err
