"""Modules imported on first use.

``import celltcp`` and ``celltcp --help`` must not pay for pandas and numpy (about a second on a
laptop) when nothing needs them yet. ``pd = lazy("pandas")`` binds a stand-in that imports the
module at its first attribute access and forwards every access to it afterwards, so the code that
uses ``pd.DataFrame`` is unchanged. Type annotations are strings (``from __future__ import
annotations``) and never touch it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy(name: str) -> Any:
    """A stand-in for module ``name`` that imports it on first use."""
    return _LazyModule(name)
