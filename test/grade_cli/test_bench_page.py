"""The benchmarks page's tables and plots come from the committed results files."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_cli.bench import benchmark_help
from grade_cli.bench_page import results_markdown, table_markdown, write_plots
from grade_cli.benchmarks import BENCHMARKS
from grade_common.bench_results import read_results

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks"


def test_numeric_columns_keep_their_precision_and_align_right() -> None:
    lines = table_markdown(("a", "b"), (("x|y", 0.02), ("z", 0.019)))
    assert lines == ["| a | b |", "| --- | ---: |", "| x\\|y | 0.020 |", "| z | 0.019 |"]


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_every_committed_results_file_renders_with_its_provenance(path: Path) -> None:
    results = read_results(path)
    text = results_markdown(results)
    assert results.date in text
    assert results.machine in text
    assert results.command.splitlines()[0] in text
    lines = text.splitlines()
    for table in results.tables:  # each table's header row follows its title and a blank line
        header = lines[lines.index(f"**{table.title}**") + 2] if table.title else lines[0]
        assert all(f" {c} |" in header for c in table.columns)


def test_plots_are_drawn_for_the_files_that_ask(tmp_path: Path) -> None:
    written = write_plots(RESULTS, tmp_path / "generated")
    asked = [p for p in sorted(RESULTS.glob("*.json")) if read_results(p).plot]
    assert [p.name for p in written] == [p.stem + ".png" for p in asked]
    assert all(p.stat().st_size > 0 for p in written)


# The benchmarks that do not write a results file yet (docs/benchmarks.md says which).
WITHOUT_JSON = {"slam"}


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_benchmarks_offer_json_as_the_page_says(name: str) -> None:
    assert ("--json OUT" in benchmark_help(name)) == (name not in WITHOUT_JSON)
    page = (RESULTS.parent / "benchmarks.md").read_text()
    assert " and ".join(f"`{n}`" for n in sorted(WITHOUT_JSON)) in page.replace("\n", " ")
