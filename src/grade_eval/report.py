"""Result tables: one row per sequence and method, printed or written as CSV/JSON."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path

from grade_eval.errors import EvalError
from grade_eval.io.tum import write_text_atomic

Row = dict[str, str | float]

KEY_COLUMNS = ("sequence", "method")


def columns_of(rows: Sequence[Row]) -> list[str]:
    """Key columns first, then every other column in first-seen order."""
    cols = [c for c in KEY_COLUMNS if any(c in r for r in rows)]
    for row in rows:
        cols += [c for c in row if c not in cols]
    return cols


def _fmt(value: str | float | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def format_table(rows: Sequence[Row]) -> str:
    """Aligned text table."""
    cols = columns_of(rows)
    cells = [[_fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def to_csv(rows: Sequence[Row]) -> str:
    """CSV text with a header line."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns_of(rows), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {
                k: _fmt(v) if isinstance(v, float) and not math.isfinite(v) else v
                for k, v in row.items()
            }
        )
    return buf.getvalue()


def write_rows(path: str | Path, rows: Sequence[Row]) -> Path:
    """Write rows as .csv or .json (by suffix), atomically; never overwrite."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix == ".csv":
        return write_text_atomic(target, to_csv(rows))
    if suffix == ".json":
        return write_text_atomic(target, json.dumps(list(rows), indent=2, allow_nan=False) + "\n")
    raise EvalError(f"{target}: unsupported report format {suffix!r}; use .csv or .json")
