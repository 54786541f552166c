"""Benchmark results files: written atomically, read back the same, bad files named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grade_common.bench_results import (
    FORMAT,
    ResultTable,
    add_json_argument,
    read_results,
    write_results,
)
from grade_common.cli_args import bench_parser
from grade_common.errors import FormatError, OutputExistsError

TABLE = ResultTable("t", ("model", "ms"), (("pinhole", 41.25), ("fisheye", 120)))


def test_write_then_read_gives_the_same_results(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    written = write_results(out, "cameras", ["--frames", "3", "--json", str(out)], [TABLE], "n")
    read = read_results(out)
    assert read == written
    assert read.command == "grade bench cameras --frames 3"  # --json OUT is not part of it
    assert read.tables[0].rows == (("pinhole", 41.25), ("fisheye", 120))
    assert len(read.date) == 10
    assert read.machine
    assert json.loads(out.read_text())["format"] == FORMAT


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("mine")
    with pytest.raises(OutputExistsError):
        write_results(out, "cameras", [], [TABLE])
    assert out.read_text() == "mine"


def test_no_file_without_json(tmp_path: Path) -> None:
    results = write_results(None, "cameras", ["--json=x.json"], [TABLE])
    assert results.command == "grade bench cameras"
    assert not list(tmp_path.iterdir())


def test_json_option_parses_to_a_path() -> None:
    parser = bench_parser("x", None)
    add_json_argument(parser)
    assert parser.parse_args(["--json", "a.json"]).json == Path("a.json")
    assert parser.parse_args([]).json is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not a readable JSON file"),
        ('{"format": "other"}', "field 'format' must be"),
        (f'{{"format": "{FORMAT}", "tables": []}}', "field 'benchmark' must be a str"),
        (f'{{"format": "{FORMAT}", "tables": {{}}}}', "field 'tables' must be a list"),
    ],
)
def test_bad_files_are_refused_with_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(FormatError, match=message):
        read_results(path)


def test_a_row_must_fill_every_column() -> None:
    with pytest.raises(FormatError, match="row 0: 1 cells for 2 columns"):
        ResultTable("t", ("a", "b"), (("only",),))
