"""grade_sim.bench_pairs: differences, ratios, medians, pairing and the process's rusage."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grade_common.bench_results import read_results, write_results
from grade_common.errors import ConfigError, OutputExistsError
from grade_sim.bench_pairs import (
    PairRatios,
    ProcessCost,
    Side,
    WholeRun,
    compare,
    median_ratios,
    ratios,
    run_process,
    run_together,
    whole_run,
)


def test_whole_run_is_long_minus_short() -> None:
    run = whole_run(ProcessCost(30.0, 45.0), ProcessCost(10.0, 15.0), 12.0, 2.0)
    assert run == WholeRun(sim_s=10.0, wall_s=20.0, cpu_s=30.0)
    assert run.real_time_factor == pytest.approx(0.5)
    assert run.cpu_per_sim_s == pytest.approx(3.0)


def test_whole_run_needs_a_longer_long_run() -> None:
    with pytest.raises(ConfigError, match=r"--long-s: 2\.0; allowed: more than --short-s"):
        whole_run(ProcessCost(1.0, 1.0), ProcessCost(1.0, 1.0), 2.0, 2.0)


def test_ratios_are_yours_over_baseline() -> None:
    yours = WholeRun(10.0, 5.0, 14.0)  # RTF 2.0, 1.4 CPU s per simulated s
    base = WholeRun(10.0, 10.0, 20.0)  # RTF 1.0, 2.0
    r = ratios(yours, base)
    assert r.cpu_per_sim_s == pytest.approx(0.7)
    assert r.real_time_factor == pytest.approx(2.0)


def test_median_takes_each_ratio_on_its_own() -> None:
    pairs = [PairRatios(0.6, 1.5), PairRatios(0.8, 1.1), PairRatios(0.7, 1.9)]
    assert median_ratios(pairs) == PairRatios(0.7, 1.5)
    with pytest.raises(ConfigError, match="--pairs: 0"):
        median_ratios([])


def _fake_runner(calls: list[tuple[str, float]]):  # type: ignore[no-untyped-def]
    """Costs as a linear function of the duration: set-up 5 s; 'yours' half the baseline's
    per-second cost."""

    def runner(side: Side, duration_s: float, log: Path) -> ProcessCost:
        calls.append((side.name, duration_s))
        per_s = 1.0 if side.name == "yours" else 2.0
        return ProcessCost(5.0 + per_s * duration_s, 7.0 + 1.5 * per_s * duration_s)

    return runner


def _side(name: str) -> Side:
    return Side(name, ("true",), {}, Path("."))


def test_compare_pairs_alternate_and_setup_cancels(tmp_path: Path) -> None:
    calls: list[tuple[str, float]] = []
    result = compare(
        _side("yours"),
        _side("baseline"),
        pairs=3,
        long_s=12.0,
        short_s=2.0,
        logs=tmp_path,
        runner=_fake_runner(calls),
        report=lambda _line: None,
    )
    assert len(result.pairs) == 3
    # A warm-up run of each side, then pair 1 runs long first, pair 2 short first; both sides
    # of a length run together.
    assert [d for _, d in calls[:2]] == [2.0, 2.0]
    firsts = [calls[2 + 4 * i][1] for i in range(3)]
    assert firsts == [12.0, 2.0, 12.0]
    assert result.pairs[0]["yours"] == WholeRun(10.0, 10.0, 15.0)
    assert result.pairs[0]["baseline"] == WholeRun(10.0, 20.0, 30.0)
    assert result.median == PairRatios(pytest.approx(0.5), pytest.approx(2.0))  # type: ignore[arg-type]
    assert set(result.alone) == {"yours", "baseline"}
    pairs_table, alone_table = result.tables()
    assert pairs_table.columns == (
        "pair",
        "yours CPU s per sim s",
        "yours RTF",
        "baseline CPU s per sim s",
        "baseline RTF",
        "CPU ratio",
        "RTF ratio",
    )
    assert pairs_table.rows[0] == (1, 1.5, 1.0, 3.0, 0.5, 0.5, 2.0)
    assert pairs_table.rows[-1] == ("median", "", "", "", "", 0.5, 2.0)
    assert [row[0] for row in alone_table.rows] == ["yours", "baseline"]
    # what `grade bench sim --baseline DIR --json OUT` writes: a results file the docs read
    out = tmp_path / "results.json"
    write_results(out, "sim", ["--baseline", "DIR", "--json", str(out)], result.tables())
    read = read_results(out)
    assert read.command == "grade bench sim --baseline DIR"
    assert read.tables[0].rows[-1] == ("median", "", "", "", "", 0.5, 2.0)
    with pytest.raises(OutputExistsError):  # a results file is never overwritten
        write_results(out, "sim", [], result.tables())


@pytest.mark.parametrize(
    ("pairs", "long_s", "short_s", "match"),
    [(0, 12.0, 2.0, "--pairs: 0"), (2, 2.0, 12.0, r"--long-s: 2\.0")],
)
def test_compare_rejects_bad_settings(
    tmp_path: Path, pairs: int, long_s: float, short_s: float, match: str
) -> None:
    with pytest.raises(ConfigError, match=match):
        compare(
            _side("yours"),
            _side("baseline"),
            pairs=pairs,
            long_s=long_s,
            short_s=short_s,
            logs=tmp_path,
            runner=_fake_runner([]),
        )


# Burns CPU for a number of loop iterations given as {s}, in a child process of its own (so the
# rusage must include waited-for children), then prints a marker.
_BURN = (
    "import subprocess, sys; "
    "subprocess.run([sys.executable, '-c', 'sum(range(int({s}) * 10**6))'], check=True); "
    "print('burnt')"
)


def test_run_process_counts_the_children_cpu(tmp_path: Path) -> None:
    side = Side("burn", (sys.executable, "-c", _BURN), {}, tmp_path)
    small = run_process(side, 1, tmp_path / "small.log")
    big = run_process(side, 40, tmp_path / "big.log")
    assert (tmp_path / "big.log").read_text().strip() == "burnt"
    assert big.cpu_s > small.cpu_s > 0
    assert big.wall_s > 0


def test_run_process_names_the_log_of_a_failure(tmp_path: Path) -> None:
    side = Side("bad", (sys.executable, "-c", "raise SystemExit(3)"), {}, tmp_path)
    with pytest.raises(RuntimeError, match=r"bad: exit status 3; see .*bad\.log"):
        run_process(side, 1, tmp_path / "bad.log")


def test_each_run_is_a_session_of_its_own(tmp_path: Path) -> None:
    # Its own session: the scheduler shares the CPU between the two sides, not between their
    # threads (autogroup), whatever the number of threads each keeps busy.
    code = "import os; print(os.getsid(0) == os.getpid() != os.getsid(os.getppid()))"
    run_process(Side("s", (sys.executable, "-c", code), {}, tmp_path), 1, tmp_path / "s.log")
    assert (tmp_path / "s.log").read_text().strip() == "True"


# A side that waits for SIGINT and says it got it; the bench's script runs two of them together.
_WAIT_FOR_INT = (
    "import signal, sys, time, pathlib; "
    "signal.signal(signal.SIGINT, lambda *a: (print('interrupted', flush=True), sys.exit(0))); "
    "print('waiting', flush=True); time.sleep(60)"
)


def test_ctrl_c_on_the_bench_ends_the_runs_of_both_sides(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from grade_sim.bench_pairs import Side, run_together
        side = (sys.executable, "-c", {_WAIT_FOR_INT!r})
        root = Path({str(tmp_path)!r})
        sides = [Side(n, side, {{}}, root) for n in ("a", "b")]
        run_together(sides, 1, [root / "a.log", root / "b.log"])
        """
    )
    bench = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    deadline = time.monotonic() + 60
    while not all(p.exists() and "waiting" in p.read_text() for p in logs):
        assert time.monotonic() < deadline
        assert bench.poll() is None
        time.sleep(0.05)
    # Ctrl-C in the bench's terminal reaches the bench's process group, never the runs' sessions.
    os.kill(bench.pid, signal.SIGINT)
    _, err = bench.communicate(timeout=30)
    assert "KeyboardInterrupt" in err
    assert [p.read_text().split() for p in logs] == [["waiting", "interrupted"]] * 2


def test_run_together_returns_each_sides_cost(tmp_path: Path) -> None:
    sides = [Side(n, (sys.executable, "-c", _BURN), {}, tmp_path) for n in ("a", "b")]
    costs = run_together(sides, 2, [tmp_path / "a.log", tmp_path / "b.log"])
    assert len(costs) == 2
    assert all(c.cpu_s > 0 for c in costs)
