"""`celltcp view`: the page of a run and of a sweep, opened in a real browser (Debian's chromium,
driven headless through chromedriver by Selenium).

Checked: the page loads without a JavaScript error; every plot is drawn with the run's own
numbers (compared with the time-series files); zooming one plot zooms all; the cursor moves the
UEs on the map to their positions at that time; the map has the cells, the track and the
handover where the summary says; clicking a handover zooms to it; in a sweep, the filter hides
runs, a click shows another run and Ctrl-click overlays two.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from celltcp.sweep import load_sweep, run_sweep
from conftest import SMALL_TOML
from conftest import cli as _cli

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian "
                                "package 'chromium'; scripts/install.sh installs it)")


def cli(*args: str) -> tuple[int, str, str]:
    r = _cli(*args)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture(scope="module")
def browser() -> Any:
    # chromium present: chromedriver and selenium must be too (scripts/install.sh and the
    # package's [test] extra install them), so this fails rather than skips
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    driver_path = shutil.which("chromedriver")
    assert driver_path, "chromedriver missing: install Debian's chromium-driver (scripts/install.sh)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
              "--disable-dev-shm-usage"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver_path), options=opts)
    drv.set_script_timeout(30)
    yield drv
    drv.quit()


def open_page(drv: Any, page: Path) -> None:
    drv.get(page.resolve().as_uri())
    t0 = time.monotonic()
    while not drv.execute_script("return !!(window.viewer && window.viewer.ready)"):
        assert time.monotonic() - t0 < 30, "the page did not finish loading"
        time.sleep(0.1)


def no_errors(drv: Any) -> None:
    assert drv.execute_script("return window.viewer.errors") == []
    severe = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
    assert severe == []


def at(series: pd.Series, t: float) -> float:
    """The value of a time series at the sample nearest ``t`` (the page rounds times to 7 digits)."""
    i = series.index.get_indexer([t], method="nearest")[0]
    assert abs(series.index[i] - t) < 1e-6
    return float(series.iloc[i])


def plot_info(drv: Any) -> list[dict[str, Any]]:
    return drv.execute_script("""
      return window.viewer.plots.map(function (u) {
        // count non-white pixels of the canvas: the plot was drawn
        var c = u.ctx.canvas, d = u.ctx.getImageData(0, 0, c.width, c.height).data, ink = 0;
        for (var i = 0; i < d.length; i += 4 * 7) if (d[i + 3] > 0 && (d[i] < 200 || d[i + 1] < 200)) ink++;
        return {panel: u.celltcpPanel, n: u.data[0].length, series: u.series.slice(1).map(function (s) { return s.label; }),
                x: u.data[0].slice(0, 50), y: u.data[1].slice(0, 50), min: u.scales.x.min, max: u.scales.x.max, ink: ink};
      });""")


@pytest.fixture(scope="module")
def handover_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("view") / "ho"
    code, _, err = cli("run", str(ROOT / "examples" / "handover.toml"), "-o", str(d), "-q")
    assert code == 0, err
    return d


def test_run_page_draws_the_runs_numbers_and_links_zoom_cursor_and_map(
        browser: Any, handover_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    code, out, err = cli("view", str(handover_run), "--export", str(page))
    assert code == 0 and out.strip() == str(page), err
    assert "http://" not in page.read_text().split("<script", 1)[0]  # nothing fetched from a network
    open_page(browser, page)
    no_errors(browser)
    plots = plot_info(browser)
    panels = [p["panel"] for p in plots]
    assert panels[:3] == ["cwnd", "goodput", "srtt"]
    assert {"cqi", "prbs", "rsrp", "phy", "cell_prb"} <= set(panels)
    for p in plots:
        assert p["n"] > 100 and p["ink"] > 200, p["panel"]
    # the cwnd plot shows the run's cwnd (KB) at the run's sample times
    tcp = pd.read_parquet(handover_run / "timeseries" / "tcp.parquet")
    want = tcp[tcp["flow"] == 0].set_index("time_s")["cwnd_bytes"] / 1024
    cw = plots[0]
    assert cw["series"] == ["dl"]
    for x, y in zip(cw["x"], cw["y"]):
        assert y == pytest.approx(at(want, x), rel=1e-3)
    # zooming one plot zooms every plot
    browser.execute_script("window.viewer.plots[2].setScale('x', {min: 5, max: 10})")
    for p in plot_info(browser):
        assert (p["min"], p["max"]) == (5, 10)
    # the map: two cells where the scenario puts them, one UE track, one handover mark
    summary = json.loads((handover_run / "summary.json").read_text())
    hos = summary["lte"]["handovers"]
    assert len(hos) == 1
    assert browser.execute_script("return document.querySelector('#map svg').dataset.cells") == "2"
    assert len(browser.find_elements("css selector", "#map polyline.track")) == 1
    assert len(browser.find_elements("css selector", "#map circle.ho-mark")) == 1
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('#map g.cell title')).map(t => t.textContent)")
    assert cells == ["source (0, 0) m", "target (750, 0) m"]
    # the cursor at t moves the UE's dot to its position at t
    ue = pd.read_parquet(handover_run / "timeseries" / "lte_ue.parquet")
    browser.execute_script("window.viewer.plots[0].setScale('x', {min: 0, max: 40})")
    browser.execute_script("""var u = window.viewer.plots[0];
      var i = u.data[0].findIndex(function (t) { return t >= 20; });
      u.setCursor({left: u.valToPos(u.data[0][i], 'x'), top: 10});""")
    t_cursor = browser.execute_script(
        "var u = window.viewer.plots[0]; return u.data[0][u.cursor.idx]")
    assert abs(t_cursor - 20) < 0.5
    cx = float(browser.find_element("css selector", "#map circle.ue-pos").get_attribute("cx"))
    near = ue.iloc[(ue["time_s"] - t_cursor).abs().argsort()[:1]]
    assert cx == pytest.approx(float(near["x_m"].iloc[0]), abs=3.0)  # 40 km/h: ~11 m/s
    # the timeline: clicking the handover zooms every plot to ±1 s around it
    (li,) = browser.find_elements("css selector", "#timeline li.ho")
    assert f"{hos[0]['detach_s']:.3f} s" in li.text and "source → target" in li.text
    li.click()
    for p in plot_info(browser):
        assert p["min"] == pytest.approx(hos[0]["detach_s"] - 1) and \
            p["max"] == pytest.approx(hos[0]["detach_s"] + 1)
    no_errors(browser)


BASE = SMALL_TOML.replace('duration = "3s"', 'duration = "1s"')
SWEEP = """\
base = "base.toml"
seeds = 1
[grid]
"flow.bulk.cc" = ["newreno", "cubic"]
"link.bottleneck.queue" = ["15KB", "60KB"]
"""


def test_sweep_page_filters_selects_and_compares_runs(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    (tmp_path / "base.toml").write_text(BASE)
    (tmp_path / "s.toml").write_text(SWEEP)
    out = tmp_path / "out"
    res = run_sweep(load_sweep(tmp_path / "s.toml"), out, jobs=2)
    assert res.done == 4
    code, _, err = cli("view", str(out), "--no-open")
    assert code == 0, err
    open_page(browser, out / "view.html")
    no_errors(browser)
    rows = browser.find_elements("css selector", "#runs tbody tr")
    assert len(rows) == 4
    # the filter keeps the runs whose cells contain every word
    f = browser.find_element("css selector", "#filter")
    f.send_keys("cubic 60KB")
    shown = [r for r in rows if r.is_displayed()]
    assert len(shown) == 1 and "cubic" in shown[0].text and "60KB" in shown[0].text
    assert browser.find_element("css selector", "#count").text == "1 of 4 runs"
    f.clear()
    f.send_keys(" ")  # an input event with an empty filter shows every run again
    assert all(r.is_displayed() for r in rows)
    # a click shows that run: the cwnd plot then holds that run's cwnd
    runs = pd.read_parquet(out / "runs.parquet")
    second = rows[1]
    rid = second.get_attribute("data-id")
    second.click()
    assert browser.execute_script("return window.viewer.selected") == [rid]
    tcp = pd.read_parquet(out / "runs" / rid / "timeseries" / "tcp.parquet")
    want = tcp[tcp["flow"] == 0].set_index("time_s")["cwnd_bytes"] / 1024
    cw = plot_info(browser)[0]
    assert cw["panel"] == "cwnd" and cw["series"] == ["bulk"]
    got = [(x, y) for x, y in zip(cw["x"], cw["y"]) if y is not None]
    assert got and all(y == pytest.approx(at(want, x), rel=1e-3) for x, y in got)
    # Ctrl-click adds the first run: its series are overlaid, named by parameter values
    ActionChains(browser).key_down(Keys.CONTROL).click(rows[0]).key_up(Keys.CONTROL).perform()
    first = rows[0].get_attribute("data-id")
    assert browser.execute_script("return window.viewer.selected") == [rid, first]
    labels = plot_info(browser)[0]["series"]
    r0 = runs.set_index("run_id").loc[first]
    assert len(labels) == 2 and any(f"cc={r0['flow.bulk.cc']}" in s and
                                     f"queue={r0['link.bottleneck.queue']}" in s for s in labels)
    assert np.all([(r.get_attribute("class") or "").count("selected") == 1
                   for r in rows[:2]])
    no_errors(browser)


def test_not_a_run_or_sweep_is_a_one_line_error(tmp_path: Path) -> None:
    code, _, err = cli("view", str(tmp_path), "--no-open")
    assert code == 2 and "not a run, sweep or study directory" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "view.html").exists()
    code, _, err = cli("view", str(tmp_path / "nope"), "--no-open")
    assert code == 2 and "not a directory" in err
