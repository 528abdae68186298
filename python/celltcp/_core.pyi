"""Type stubs for the native module ``celltcp._core`` (checked by ``mypy.stubtest``)."""

from collections.abc import Callable
from typing import Any, Union

#: One time-series column: ``("f8" | "i8", little-endian bytes)`` or ``("str", list[str])``.
_Column = tuple[str, Union[bytes, list[str]]]

__all__ = [
    "ScenarioError", "DEMO_SCENARIO", "run", "validate", "apply_overrides", "resolve_path", "list_cc",
    "version", "emu", "emu_cleanup",
]

DEMO_SCENARIO: str

class ScenarioError(ValueError):
    """An invalid scenario: the message names the key, the value, what was expected and the line."""

def run(
    scenario: str,
    *,
    seed: int | None = None,
    overrides: list[str] = ...,
    out_dir: str | None = None,
    base_dir: str | None = None,
    progress: Callable[[float], bool | None] | None = None,
    intervals: Callable[[list[tuple[str, float, float, int, float, int, int | None, int | None,
                                    float | None, bool]]], object] | None = None,
) -> dict[str, Any]: ...
def validate(scenario: str, *, seed: int | None = None, overrides: list[str] = ...) -> str: ...
def apply_overrides(scenario: str, overrides: list[str]) -> str: ...
def resolve_path(scenario: str, path: str) -> list[str]: ...
def list_cc() -> list[tuple[str, str]]: ...
def version() -> str: ...
def emu(
    scenario: str,
    *,
    out_dir: str,
    seed: int | None = None,
    overrides: list[str] = ...,
    base_dir: str | None = None,
    execs: list[tuple[str, list[str]]] = ...,
    shell: str | None = None,
) -> dict[str, Any]: ...
def emu_cleanup() -> list[str]: ...
