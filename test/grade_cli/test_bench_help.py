"""`grade bench NAME --help` prints benchmark NAME's own options and starts nothing."""

from __future__ import annotations

import pytest

from grade_cli import bench
from grade_cli.benchmarks import BENCHMARKS


@pytest.mark.parametrize("name", BENCHMARKS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_each_benchmark_prints_its_own_help(
    name: str, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main([name, flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: grade bench {name} ")
    assert "== benchmark" not in out  # nothing ran
    assert "benchmarks to run" not in out  # not the generic `grade bench` help


def test_the_help_of_two_benchmarks_is_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["sim", "slam", "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: grade bench sim " in out
    assert "usage: grade bench slam " in out


def test_benchmark_options_are_listed() -> None:
    assert "--seeds" in bench.benchmark_help("slam")
    assert "--frame-stride" in bench.benchmark_help("realism")


def test_grade_bench_help_alone_is_the_generic_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        bench.main(["--help"])
    assert stop.value.code == 0
    assert "benchmarks to run" in capsys.readouterr().out
