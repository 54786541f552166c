"""The results file of a benchmark: what `grade bench NAME --json OUT` writes.

One JSON object per file, the one format every benchmark writes and the documentation's
benchmarks page reads (docs/benchmarks/*.json, rendered at build time by `grade_cli.bench_page`):

```json
{"format": "grade-bench-results/1",
 "benchmark": "cameras",
 "command": "grade bench cameras --frames 30",
 "machine": "2 CPU cores x86_64, ..., no GPU",
 "date": "2026-12-01",
 "tables": [{"title": "...", "columns": ["model", "ms/frame"], "rows": [["pinhole", 41.2]]}],
 "notes": "..."}
```

`command` is the command line that reproduces the numbers, `machine` the machine they were
measured on and `date` the day (UTC, ISO 8601). A table's cells are strings or numbers, one per
column. The file is written atomically (`grade_common.atomic`) and never overwrites one.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grade_common.atomic import write_bytes
from grade_common.errors import FormatError

FORMAT = "grade-bench-results/1"

Cell = str | int | float


@dataclass(frozen=True)
class ResultTable:
    """One table of a benchmark's results: a title, column names and rows of cells."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise FormatError(
                    f"table {self.title!r} row {i}: {len(row)} cells for "
                    f"{len(self.columns)} columns {list(self.columns)}"
                )


@dataclass(frozen=True)
class BenchResults:
    """A benchmark's results with the command, machine and date they were measured with."""

    benchmark: str
    command: str
    machine: str
    date: str
    tables: tuple[ResultTable, ...]
    notes: str = ""
    # optional bar chart for the docs: {"table": index, "x": column, "y": [columns], "ylabel": ...}
    plot: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "format": FORMAT,
            "benchmark": self.benchmark,
            "command": self.command,
            "machine": self.machine,
            "date": self.date,
            "tables": [
                {"title": t.title, "columns": list(t.columns), "rows": [list(r) for r in t.rows]}
                for t in self.tables
            ],
            "notes": self.notes,
        }
        if self.plot:
            data["plot"] = self.plot
        # allow_nan=False: a NaN or infinity is a benchmark bug, and no JSON reader takes it
        return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine_description() -> str:
    """This machine in one line: cores, CPU, OS, Python (what a results file's `machine` holds)."""
    return (
        f"{os.cpu_count()} CPU cores {platform.machine()} ({_cpu_model()}), "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    """`--json OUT`: a benchmark's option to write its results file (a new file)."""
    parser.add_argument(
        "--json",
        type=Path,
        metavar="OUT",
        help="also write the results to this new JSON file (grade_common.bench_results)",
    )


def _without_json(argv: Sequence[str]) -> list[str]:
    """argv less `--json OUT` (the command reproduces the numbers, not the file name)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--json":
            skip = True
        elif arg and not arg.startswith("--json="):
            out.append(arg)
    return out


def write_results(
    out: Path | None,
    benchmark: str,
    argv: Sequence[str],
    tables: Sequence[ResultTable],
    notes: str = "",
) -> BenchResults:
    """The results of `grade bench <benchmark> <argv>` measured now on this machine; written to
    `out` (atomically, a new file) unless it is None."""
    results = BenchResults(
        benchmark=benchmark,
        command=shlex.join(["grade", "bench", benchmark, *_without_json(argv)]),
        machine=machine_description(),
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
        tables=tuple(tables),
        notes=notes,
    )
    if out is not None:
        write_bytes(out, results.to_json().encode("utf-8"))
        print(f"results -> {out}")
    return results


def _field(data: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise FormatError(f"{path}: field {key!r} must be a {kind.__name__}, got {value!r}")
    return value


def read_results(path: Path) -> BenchResults:
    """Read and check a results file.

    Raises:
        FormatError: not JSON, another format, or a field missing or of the wrong type.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise FormatError(f"{path}: not a readable JSON file ({err})") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise FormatError(f"{path}: field 'format' must be {FORMAT!r}, got {found!r}")
    tables = []
    for i, table in enumerate(_field(data, "tables", list, path)):
        if not isinstance(table, dict):
            raise FormatError(f"{path}: tables[{i}] must be an object, got {table!r}")
        tables.append(
            ResultTable(
                title=str(table.get("title", "")),
                columns=tuple(str(c) for c in _field(table, "columns", list, path)),
                rows=tuple(tuple(r) for r in _field(table, "rows", list, path)),
            )
        )
    return BenchResults(
        benchmark=_field(data, "benchmark", str, path),
        command=_field(data, "command", str, path),
        machine=_field(data, "machine", str, path),
        date=_field(data, "date", str, path),
        tables=tuple(tables),
        notes=str(data.get("notes", "")),
        plot=dict(data.get("plot") or {}),
    )
