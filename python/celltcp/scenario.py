"""``celltcp.Scenario``: a scenario to edit, check and run from Python.

>>> s = celltcp.Scenario.load("examples/dumbbell.toml")
>>> s.set("link.bottleneck.rate", "20Mbps").set("flow.*.cc", "bbr")
>>> s.validate()          # the configuration as it would run; ScenarioError if it would not
>>> r = s.run(seed=2)

It keeps the scenario as TOML text and edits it with the same path editor as ``--set`` (names,
indices, ``*``; the text is edited in place, so an error's line number still points into the
file), and remembers the file it came from, so relative paths (traces) still resolve against it.
``celltcp.run``, ``validate`` and ``sweep`` accept it wherever they accept a scenario.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from . import _core, _toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib


class Scenario:
    """A scenario: its TOML ``text`` and the ``source`` file it came from (None if built)."""

    def __init__(self, text: str, source: str | os.PathLike[str] | None = None) -> None:
        self.text = text
        self.source = str(source) if source is not None else None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """A scenario file."""
        from .api import _read_toml

        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"no such scenario file: {p}")
        return cls(_read_toml(p), p)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scenario:
        """A scenario given as a dict with the structure of the TOML file."""
        return cls(_toml.dumps(d))

    def set(self, path: str, value: Any) -> Scenario:
        """Sets the key at ``path`` (``link.bottleneck.rate``, ``flow.0.cc``, ``flow.*.cc``) to
        ``value`` (a string as ``--set`` takes it, or a number, bool, list or dict); returns the
        scenario, so that calls chain. Raises ``ScenarioError`` for a path that names nothing."""
        from .api import _override_value

        try:
            self.text = _core.apply_overrides(self.text, [f"{path}={_override_value(value)}"])
        except _core.ScenarioError as e:
            raise _core.ScenarioError(f"{self.source}: {e}" if self.source else str(e)) from None
        return self

    def to_dict(self) -> dict[str, Any]:
        """The scenario as a dict (what the TOML says; defaults are in :meth:`validate`)."""
        return dict(tomllib.loads(self.text))

    def validate(self, seed: int | None = None) -> dict[str, Any]:
        """The configuration as it would run, defaults filled in; ``ScenarioError`` (naming the
        key, its line and what was expected) if it would not run."""
        from .api import validate

        return validate(self, seed=seed)

    def run(self, **kwargs: Any) -> Any:
        """``celltcp.run(self, **kwargs)``: a ``Result``."""
        from .api import run

        return run(self, **kwargs)

    def copy(self) -> Scenario:
        return Scenario(self.text, self.source)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        src = f"source={self.source!r}" if self.source else "built in Python"
        return f"<celltcp.Scenario {src}, {len(self.text.splitlines())} lines>"
