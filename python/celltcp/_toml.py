"""A small TOML writer: turns a scenario given as a dict into the TOML text the core reads.

Only what a scenario needs: tables, arrays of tables, and str/int/float/bool values and
arrays of them. ``None`` values are left out (TOML has no null), so a key set to ``None`` takes
its default.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: object) -> str:
    if not isinstance(k, str):
        raise TypeError(f"scenario keys must be str, got {k!r}")
    return k if _BARE_KEY.match(k) else json.dumps(k)


def _is_table(v: object) -> bool:
    return isinstance(v, Mapping)


def _is_table_array(v: object) -> bool:
    return (
        isinstance(v, Sequence)
        and not isinstance(v, (str, bytes))
        and len(v) > 0
        and all(_is_table(x) for x in v)
    )


def value(v: Any) -> str:
    """One TOML value (inline tables for mappings nested in arrays)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        # JSON string escapes are valid TOML basic-string escapes.
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        items = ", ".join(f"{_key(k)} = {value(x)}" for k, x in v.items() if x is not None)
        return "{" + (f" {items} " if items else "") + "}"
    if isinstance(v, Sequence) and not isinstance(v, bytes):
        return "[" + ", ".join(value(x) for x in v) + "]"
    # numpy scalars and the like
    if hasattr(v, "item"):
        return value(v.item())
    raise TypeError(f"cannot write {type(v).__name__} value {v!r} as TOML")


def _table(path: list[str], d: Mapping[str, Any], out: list[str]) -> None:
    scalars = [
        (k, v) for k, v in d.items() if v is not None and not _is_table(v) and not _is_table_array(v)
    ]
    for k, v in scalars:
        out.append(f"{_key(k)} = {value(v)}")
    for k, v in d.items():
        if _is_table(v):
            sub = [*path, _key(k)]
            out.append("")
            out.append(f"[{'.'.join(sub)}]")
            _table(sub, v, out)
        elif _is_table_array(v):
            sub = [*path, _key(k)]
            for item in v:
                out.append("")
                out.append(f"[[{'.'.join(sub)}]]")
                _table(sub, item, out)


def dumps(d: Mapping[str, Any]) -> str:
    """The TOML text of a scenario dict."""
    out: list[str] = []
    _table([], d, out)
    return "\n".join(out).lstrip("\n") + "\n"
