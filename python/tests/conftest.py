"""Shared scenarios and helpers for the Python tests (API, CLI, conversions, plots)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

def require_ray() -> object:
    """Import ray for a test, or skip the test when it is not installed -- unless
    ``CELLTCP_REQUIRE_RAY=1`` (set by scripts/test.sh, which installs ``.[test]`` with ray):
    then a missing ray fails the test instead of skipping it silently."""
    try:
        import ray
    except ImportError as e:
        if os.environ.get("CELLTCP_REQUIRE_RAY") == "1":
            pytest.fail(f"CELLTCP_REQUIRE_RAY=1 but ray cannot be imported ({e}); "
                        "pip install -e '.[test]' installs it")
        pytest.skip(f"ray is not installed ({e}); pip install 'celltcp[ray]'")
    return ray


#: A small, quick scenario: one CUBIC bulk flow and a ping over a 10 Mbit/s bottleneck.
SMALL_TOML = """\
duration = "3s"
seed = 7

[[link]]
name = "access"
between = ["server", "router"]
rate = "100Mbps"
delay = "1ms"

[[link]]
name = "bottleneck"
between = ["router", "client"]
rate = "10Mbps"
delay = "10ms"
queue = "50KB"

[[flow]]
name = "bulk"
app = "bulk"
from = "server"
to = "client"
cc = "cubic"

[[flow]]
name = "ping"
app = "ping"
from = "client"
to = "server"
interval = "100ms"
"""

#: The same scenario as a dict.
SMALL_DICT = {
    "duration": "3s",
    "seed": 7,
    "link": [
        {"name": "access", "between": ["server", "router"], "rate": "100Mbps", "delay": "1ms"},
        {"name": "bottleneck", "between": ["router", "client"], "rate": "10Mbps", "delay": "10ms",
         "queue": "50KB"},
    ],
    "flow": [
        {"name": "bulk", "app": "bulk", "from": "server", "to": "client", "cc": "cubic"},
        {"name": "ping", "app": "ping", "from": "client", "to": "server", "interval": "100ms"},
    ],
}

#: Long enough to have progress reports (every 65536 events) and to be interrupted.
LONG_OVERRIDES = ["duration=600s", "link.1.rate=200Mbps", "link.0.rate=1Gbps"]


@pytest.fixture
def small_toml(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL_TOML)
    return p


def cli(*args: str | os.PathLike[str], cwd: Path | None = None, timeout: float = 120
        ) -> subprocess.CompletedProcess[str]:
    """Run ``python -m celltcp ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "celltcp", *map(str, args)],
        capture_output=True, text=True, cwd=cwd, timeout=timeout,
    )


def leftovers(parent: Path, name: str) -> list[str]:
    """Anything a run into ``parent/name`` may have left: the DIR itself or its temp dirs."""
    return sorted(p.name for p in parent.iterdir() if p.name == name or p.name.startswith(f".{name}."))
