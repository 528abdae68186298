"""celltcp: a fast, validated simulator of TCP over cellular networks.

>>> import celltcp
>>> res = celltcp.run("scenario.toml", seed=1, link__0__rate="20Mbps")
>>> res.flows            # one row per flow: goodput, retransmissions, RTT, ...
>>> res.timeseries("tcp")  # cwnd, ssthresh, srtt, ... over time
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._core import DEMO_SCENARIO, ScenarioError
from ._core import version as _core_version

if TYPE_CHECKING:
    from .api import Result, list_cc, run, validate
    from .scenario import Scenario

__version__: str = _core_version()

_FROM_API = ("Result", "list_cc", "run", "validate")


def __getattr__(name: str) -> Any:
    # `celltcp --help` imports this package: the API module (and the standard library it pulls
    # in: tempfile, dataclasses, platform, ...) loads at the first use of one of its names
    if name == "Scenario":
        from .scenario import Scenario

        globals()[name] = Scenario
        return Scenario
    if name in _FROM_API:
        from . import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'celltcp' has no attribute {name!r}")

__all__ = [
    "DEMO_SCENARIO",
    "Result",
    "Scenario",
    "ScenarioError",
    "__version__",
    "list_cc",
    "run",
    "validate",
]
