"""`grade bench realism RUN ...`: a benchmark that takes operands gets them, and `grade bench`
alone leaves it out."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_cli import bench
from grade_cli.benchmarks import BENCHMARKS, OPERAND_BENCHMARKS
from grade_eval.errors import RealismError


def test_realism_gets_its_runs(tmp_path: Path) -> None:
    # Without .venv-realism the set-up error comes first; with it the run is refused: either
    # way the operand reached the benchmark instead of being taken for a benchmark name.
    with pytest.raises(RealismError, match=r"setup-realism|not a grade run"):
        bench.main(["realism", str(tmp_path)])


def test_operand_benchmarks_are_benchmarks() -> None:
    assert set(OPERAND_BENCHMARKS) <= set(BENCHMARKS)


def test_unknown_benchmark_is_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(["no_such_bench"])
    assert "unknown benchmark" in capsys.readouterr().err
