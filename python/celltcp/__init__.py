"""celltcp: a fast, validated simulator of TCP over cellular networks.

>>> import celltcp
>>> res = celltcp.run("scenario.toml", seed=1, link__0__rate="20Mbps")
>>> res.flows            # one row per flow: goodput, retransmissions, RTT, ...
>>> res.timeseries("tcp")  # cwnd, ssthresh, srtt, ... over time
"""

from ._core import DEMO_SCENARIO, ScenarioError
from ._core import version as _core_version
from .api import Result, list_cc, run, validate

__version__: str = _core_version()

__all__ = [
    "DEMO_SCENARIO",
    "Result",
    "ScenarioError",
    "__version__",
    "list_cc",
    "run",
    "validate",
]
