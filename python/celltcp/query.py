"""``celltcp query DIR "SQL"``: ad-hoc SQL over a sweep's results, through DuckDB.

The tables of a sweep directory (see :mod:`celltcp.sweep`) are views of its Parquet files:

- ``results``: one row per run and flow (``DIR/results.parquet``),
- ``runs``: one row per run of the sweep, with ``status`` done / failed / pending,
- ``links``: one row per run and link.

Column names with dots (the swept parameters) are quoted: ``SELECT "flow.dl.cc", avg(goodput_bps)
FROM results GROUP BY 1``.

The query cannot touch files: the tables are read into an in-memory database first, then DuckDB's
external access is switched off and its configuration locked, so ``COPY ... TO``, ``read_csv`` or
``ATTACH`` fail and a shared study definition or notebook cannot overwrite the sweep's own tables.
``unsafe=True`` (``celltcp query --unsafe``) keeps the tables as views of the files and allows it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from .sweep import LINKS_TABLE, RESULTS, RUNS_TABLE

__all__ = ["query", "format_table"]

_TABLES = {"results": RESULTS, "runs": RUNS_TABLE, "links": LINKS_TABLE}


def _connect(out_dir: str | os.PathLike[str], unsafe: bool = False) -> Any:
    try:
        import duckdb
    except ImportError:
        raise ImportError("celltcp query needs DuckDB: pip install duckdb") from None
    d = Path(out_dir)
    if not (d / RESULTS).is_file():
        raise FileNotFoundError(f"{d} has no {RESULTS} (is it a sweep directory? run "
                                f"`celltcp sweep SWEEP.toml -o {d}` first)")
    con = duckdb.connect(":memory:")
    for name, file in _TABLES.items():
        path = d / file
        if path.is_file():
            literal = str(path.resolve()).replace("'", "''")
            kind = "VIEW" if unsafe else "TABLE"
            con.execute(f"CREATE {kind} {name} AS SELECT * FROM read_parquet('{literal}')")
    if not unsafe:
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    return con


def query(out_dir: str | os.PathLike[str], sql: str, *, unsafe: bool = False) -> pd.DataFrame:
    """Run ``sql`` over the tables of a sweep directory; the answer as a DataFrame.

    The SQL cannot read or write files unless ``unsafe`` is true (see the module doc). Raises
    ``ValueError`` with DuckDB's message for SQL it rejects.
    """
    con = _connect(out_dir, unsafe)
    import duckdb
    try:
        df: pd.DataFrame = con.execute(sql).df()
    except duckdb.Error as e:
        # DuckDB's message continues with the statement and a caret; one line is the error
        first = next((ln for ln in str(e).splitlines() if ln.strip()), str(e))
        raise ValueError(f"SQL error: {first.strip()}") from None
    finally:
        con.close()
    return df


def _cell(v: Any) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def format_table(df: pd.DataFrame, stream: TextIO, max_rows: int = 1000) -> None:
    """A plain aligned text table: text columns to the left, numbers to the right."""
    cols = [str(c) for c in df.columns]
    rows = [[_cell(v) for v in row] for row in df.head(max_rows).itertuples(index=False, name=None)]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
               for c in df.columns]
    widths = [max([len(c), *(len(r[k]) for r in rows)]) for k, c in enumerate(cols)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if num else c.ljust(w)
                         for c, w, num in zip(cells, widths, numeric)).rstrip()

    stream.write(line(cols) + "\n")
    stream.write("  ".join("-" * w for w in widths) + "\n")
    for r in rows:
        stream.write(line(r) + "\n")
    if len(df) > max_rows:
        stream.write(f"... {len(df) - max_rows} more rows (use --csv or --json for all)\n")
    stream.write(f"({len(df)} row{'s' if len(df) != 1 else ''})\n")


def write_json(df: pd.DataFrame, stream: TextIO) -> None:
    """One JSON array of objects (missing values as null)."""
    records = json.loads(df.to_json(orient="records", date_format="iso"))
    stream.write(json.dumps(records, indent=1) + "\n")
