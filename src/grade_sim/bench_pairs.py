"""Whole-run comparison of two simulator commands, run side by side in pairs.

What a user waits for is the whole process: set-up, the step loop, and the writers' final flush.
Each side's figures come from two runs of the same scenario, a long and a short one: the
difference (long minus short) of the process's wall time and of its user+sys CPU time (its own
and its waited-for children's, as /usr/bin/time reports them) leaves the set-up out and keeps
the flush. This machine's speed drifts by a third from minute to minute, so the two sides are
compared only where they ran at the same time: each pair starts both sides' long runs together,
then both sides' short runs together (which comes first alternates by pair), and the comparison
is the median over pairs of the per-pair ratios. A run of each side alone gives the absolute
figures. One short run of each side before the pairs fills the caches a first run fills.

Each run is a session of its own, as if started from its own terminal. Linux shares the CPU
fairly between sessions (autogroup scheduling), and within one session between threads: in the
bench's own session, the side that keeps more threads busy (the one with more work) would take
more than half of the two cores while both run, and its real-time factor would gain from it.
Ctrl-C reaches the bench only, which passes it on to every run still going.

No ROS and no simulator imports: the sides are commands (argv, environment, folder), so a
checkout of an older commit with its own environment can be one side.
"""

from __future__ import annotations

import contextlib
import os
import signal
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grade_common.bench_results import Cell, ResultTable
from grade_common.errors import ConfigError


@dataclass(frozen=True)
class ProcessCost:
    """One finished process: wall seconds and user+sys CPU seconds (children's rusage)."""

    wall_s: float
    cpu_s: float


@dataclass(frozen=True)
class WholeRun:
    """A side's figures over `sim_s` simulated seconds: long run minus short run."""

    sim_s: float
    wall_s: float
    cpu_s: float

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall second (0 where the difference is not positive)."""
        return self.sim_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_per_sim_s(self) -> float:
        """CPU seconds (all threads, all children) per simulated second."""
        return self.cpu_s / self.sim_s


def whole_run(long: ProcessCost, short: ProcessCost, long_s: float, short_s: float) -> WholeRun:
    """The difference long minus short: set-up cancels, the final flush counts.

    Raises:
        ConfigError: when long_s is not longer than short_s.
    """
    if long_s <= short_s:
        raise ConfigError(f"--long-s: {long_s}; allowed: more than --short-s ({short_s})")
    return WholeRun(long_s - short_s, long.wall_s - short.wall_s, long.cpu_s - short.cpu_s)


@dataclass(frozen=True)
class PairRatios:
    """One pair's comparison, yours / baseline."""

    cpu_per_sim_s: float
    real_time_factor: float


def ratios(yours: WholeRun, baseline: WholeRun) -> PairRatios:
    """CPU per simulated second and whole-run real-time factor, yours / baseline."""
    rtf = baseline.real_time_factor
    return PairRatios(
        yours.cpu_per_sim_s / baseline.cpu_per_sim_s,
        yours.real_time_factor / rtf if rtf > 0 else 0.0,
    )


def median_ratios(pairs: Sequence[PairRatios]) -> PairRatios:
    """The median of each ratio over pairs (each ratio on its own).

    Raises:
        ConfigError: when there are no pairs.
    """
    if not pairs:
        raise ConfigError("--pairs: 0; allowed: 1 or more")
    return PairRatios(
        statistics.median(p.cpu_per_sim_s for p in pairs),
        statistics.median(p.real_time_factor for p in pairs),
    )


@dataclass(frozen=True)
class Side:
    """One side of the comparison: a command that simulates `duration_s`, given as `{s}`."""

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path

    def command(self, duration_s: float) -> list[str]:
        return [a.replace("{s}", f"{duration_s:g}") for a in self.argv]


# Runs a side's command for this many simulated seconds, logging to a file; its cost.
Runner = Callable[[Side, float, Path], ProcessCost]


class _Sessions:
    """The runs still going. Each leads a session of its own, which the terminal's Ctrl-C does
    not reach, so the bench passes an interrupt on to them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: set[int] = set()

    def add(self, pid: int) -> None:
        with self._lock:
            self._pids.add(pid)

    def remove(self, pid: int) -> None:
        with self._lock:
            self._pids.discard(pid)

    def interrupt(self) -> None:
        """SIGINT to every running session (each run's whole process group)."""
        with self._lock:
            pids = list(self._pids)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.killpg(pid, signal.SIGINT)


_RUNNING = _Sessions()


def run_process(side: Side, duration_s: float, log: Path) -> ProcessCost:
    """Run the side's command to its end, in a session of its own; its wall time and user+sys
    CPU (with children).

    Raises:
        RuntimeError: when the command fails (the message names its log file).
    """
    with open(log, "w") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            side.command(duration_s),
            cwd=side.cwd,
            env=dict(side.env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _RUNNING.add(proc.pid)
        try:
            # wait4 reaps this child alone and returns its rusage, which includes its own
            # waited-for children: the same figures as /usr/bin/time, free of the other side's.
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # Ctrl-C while waiting here: the run ends too, then the bench
            _RUNNING.interrupt()
            proc.wait()
            raise
        finally:
            _RUNNING.remove(proc.pid)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{side.name}: exit status {proc.returncode}; see {log}")
    return ProcessCost(wall, usage.ru_utime + usage.ru_stime)


def run_together(
    sides: Sequence[Side], duration_s: float, logs: Sequence[Path], runner: Runner = run_process
) -> list[ProcessCost]:
    """Start every side at once (one thread each waits for its process); their costs."""
    costs: list[ProcessCost | None] = [None] * len(sides)
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            costs[i] = runner(sides[i], duration_s, logs[i])
        except BaseException as err:  # re-raised below, after the other side has finished
            errors.append(err)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(sides))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:  # Ctrl-C arrives here, in the main thread: end the runs, then wait
        _RUNNING.interrupt()
        for t in threads:
            t.join()
        raise
    if errors:
        raise errors[0]
    return [c for c in costs if c is not None]


@dataclass
class Comparison:
    """Every pair's whole-run figures and ratios, the median ratios, and each side alone."""

    long_s: float
    short_s: float
    commands: dict[str, list[str]]
    pairs: list[dict[str, WholeRun]] = field(default_factory=list)
    pair_ratios: list[PairRatios] = field(default_factory=list)
    alone: dict[str, WholeRun] = field(default_factory=dict)

    @property
    def median(self) -> PairRatios:
        return median_ratios(self.pair_ratios)

    def tables(self) -> list[ResultTable]:
        """The comparison as a results file's tables (grade_common.bench_results): every pair's
        figures and ratios with the median last, and each side alone."""
        names = list(self.commands)
        per_side = ("CPU s per sim s", "RTF")
        columns = (
            "pair",
            *(f"{n} {c}" for n in names for c in per_side),
            "CPU ratio",
            "RTF ratio",
        )
        rows: list[tuple[Cell, ...]] = []
        for k, (figures, r) in enumerate(zip(self.pairs, self.pair_ratios, strict=True)):
            side_cells = [
                round(v, 3)
                for n in names
                for v in (figures[n].cpu_per_sim_s, figures[n].real_time_factor)
            ]
            rows.append(
                (k + 1, *side_cells, round(r.cpu_per_sim_s, 3), round(r.real_time_factor, 3))
            )
        if self.pair_ratios:
            m = self.median
            blank: tuple[Cell, ...] = ("",) * (len(names) * len(per_side))
            rows.append(("median", *blank, round(m.cpu_per_sim_s, 3), round(m.real_time_factor, 3)))
        title = (
            f"Whole runs side by side, {self.long_s:g} s minus {self.short_s:g} s simulated "
            f"({names[0]} / {names[1]})"
        )
        out = [ResultTable(title, columns, tuple(rows))]
        if self.alone:
            out.append(
                ResultTable(
                    "Each side alone",
                    ("side", "CPU s per sim s", "RTF", "wall s", "CPU s", "sim s"),
                    tuple(
                        (
                            n,
                            round(a.cpu_per_sim_s, 3),
                            round(a.real_time_factor, 3),
                            round(a.wall_s, 2),
                            round(a.cpu_s, 2),
                            round(a.sim_s, 3),
                        )
                        for n, a in self.alone.items()
                    ),
                )
            )
        return out


def compare(
    yours: Side,
    baseline: Side,
    *,
    pairs: int,
    long_s: float,
    short_s: float,
    logs: Path,
    alone: bool = True,
    runner: Runner = run_process,
    report: Callable[[str], None] = print,
) -> Comparison:
    """`pairs` pairs of whole runs of both sides at the same time, then each side alone.

    Args:
        logs: folder for each run's output (one file per run, named by pair, side and length).
        runner: runs one command (run_process; tests pass their own).
        report: called with one line per finished pair or lone run.

    Raises:
        ConfigError: for pairs < 1 or long_s <= short_s.
    """
    if pairs < 1:
        raise ConfigError(f"--pairs: {pairs}; allowed: 1 or more")
    if long_s <= short_s:
        raise ConfigError(f"--long-s: {long_s}; allowed: more than --short-s ({short_s})")
    sides = (yours, baseline)
    result = Comparison(long_s, short_s, {s.name: list(s.argv) for s in sides})
    # One short run of each side first, not counted: a checkout's first run fills caches (numba's
    # compiled kernels, the baked lighting) that would otherwise land in one pair's long run.
    run_together(sides, short_s, [logs / f"warm_up_{s.name}.log" for s in sides], runner)
    for i in range(pairs):
        # Alternate which length runs first, so a drift over the pair hits long and short alike.
        order = (long_s, short_s) if i % 2 == 0 else (short_s, long_s)
        cost: dict[float, list[ProcessCost]] = {}
        for duration in order:
            names = [logs / f"pair{i + 1}_{s.name}_{duration:g}s.log" for s in sides]
            cost[duration] = run_together(sides, duration, names, runner)
        figures = {
            s.name: whole_run(cost[long_s][k], cost[short_s][k], long_s, short_s)
            for k, s in enumerate(sides)
        }
        result.pairs.append(figures)
        result.pair_ratios.append(ratios(figures[yours.name], figures[baseline.name]))
        report(pair_line(i + 1, figures, result.pair_ratios[-1]))
    if alone:
        for s in sides:
            long = runner(s, long_s, logs / f"alone_{s.name}_{long_s:g}s.log")
            short = runner(s, short_s, logs / f"alone_{s.name}_{short_s:g}s.log")
            result.alone[s.name] = whole_run(long, short, long_s, short_s)
            report(f"alone {s.name}: {figures_text(result.alone[s.name])}")
    return result


def figures_text(run: WholeRun) -> str:
    return (
        f"RTF {run.real_time_factor:.3f}, {run.cpu_per_sim_s:.3f} CPU s per simulated s "
        f"({run.wall_s:.1f} s wall, {run.cpu_s:.1f} CPU s for {run.sim_s:g} simulated s)"
    )


def pair_line(n: int, figures: Mapping[str, WholeRun], r: PairRatios) -> str:
    sides = "; ".join(f"{name} {figures_text(run)}" for name, run in figures.items())
    return (
        f"pair {n}: {sides}; yours/baseline CPU per simulated s {r.cpu_per_sim_s:.3f}, "
        f"RTF {r.real_time_factor:.3f}"
    )
