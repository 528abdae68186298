"""The one path editor (``_core.apply_overrides``/``resolve_path``, behind ``--set``, sweeps and
the API) and the configuration as run (every default filled in) as Python sees them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import celltcp
from celltcp import _core
from celltcp._core import ScenarioError
from conftest import SMALL_TOML

TWO_LINKS = """duration = "2s"
[[link]]
name = "bottleneck"
between = ["a", "b"]
rate = "10Mbps"
delay = "10ms"
[[link]]
between = ["b", "c"]  # no name: answers to "b-c"
rate = "100Mbps"
delay = "1ms"
[[flow]]
name = "dl"
app = "bulk"
from = "a"
to = "c"
"""


def test_the_editor_addresses_list_entries_by_name_index_and_star() -> None:
    text = _core.apply_overrides(TWO_LINKS, ["link.bottleneck.rate=20Mbps", "link.b-c.delay=2ms",
                                             "flow.dl.cc={ name = \"cubic\", beta = 0.5 }"])
    assert 'rate = "20Mbps"' in text and 'delay = "2ms"' in text
    assert "# no name" in text, "comments and lines are kept"
    assert _core.resolve_path(TWO_LINKS, "link.*.mtu") == ["link.0.mtu", "link.1.mtu"]
    with pytest.raises(ScenarioError) as e:
        _core.apply_overrides(TWO_LINKS, ["link.bottlneck.rate=1Mbps"])
    msg = str(e.value)
    assert "link.bottlneck.rate" in msg and "'bottlneck'" in msg and "bottleneck, b-c" in msg
    assert "\n" not in msg


def test_validate_and_run_accept_names_in_set() -> None:
    cfg = celltcp.validate(TWO_LINKS, set=["link.bottleneck.rate=20Mbps"])
    assert cfg["link"][0]["rate"] == "20Mbps"


def test_the_manifest_records_every_default(tmp_path: Path) -> None:
    res = celltcp.run(TWO_LINKS, out=tmp_path / "r",
                      set=["flow.dl.cc={ name = \"cubic\", beta = 0.5 }"])
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    flow = manifest["config"]["flow"][0]
    assert flow["cc"] == {"name": "cubic", "c": 0.4, "beta": 0.5, "fast_convergence": True,
                          "hystart": True, "hystart_variant": "linux", "abc_limit_segments": 2,
                          "ssthresh_from_cwnd": True}
    assert flow["mss"] == 1448 and flow["initial_cwnd"] == 10 and flow["min_rto"] == "200ms"
    assert manifest["config"]["link"][1]["name"] == "b-c"
    assert res.config == manifest["config"]
    # read back as a scenario, the configuration as run validates to itself
    assert celltcp.validate(manifest["config"]) == manifest["config"]


def test_a_bad_cc_parameter_names_key_and_value() -> None:
    with pytest.raises(ScenarioError) as e:
        celltcp.validate(SMALL_TOML, set=["flow.bulk.cc={ name = \"cubic\", betta = 0.5 }"])
    assert "betta" in str(e.value) and "0.5" in str(e.value)
