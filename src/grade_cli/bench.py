"""`grade bench [NAME ...]`: the project's benchmarks, each one documented command away.

Benchmarks print their measurements; none of them is a test and none asserts on time.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from grade_cli.command import Command


# As in `grade`: only the benchmarks that run are imported.
def _sim() -> Command:
    from grade_sim import bench

    return bench


def _control() -> Command:
    from grade_control import bench

    return bench


def _bag() -> Command:
    from grade_replay import bench

    return bench


def _eval() -> Command:
    from grade_eval import bench

    return bench


def _noise() -> Command:
    from grade_noise import bench

    return bench


def _replay() -> Command:
    from grade_replay import replay_bench

    return replay_bench


BENCHMARKS: dict[str, Callable[[], Command]] = {
    "sim": _sim,
    "control": _control,
    "bag": _bag,
    "eval": _eval,
    "noise": _noise,
    "replay": _replay,
}


def build_parser() -> argparse.ArgumentParser:
    """The `grade bench` argument parser; options it does not know go on to every benchmark."""
    parser = argparse.ArgumentParser(prog="grade bench", description=__doc__)
    parser.add_argument(
        "names", nargs="*", help=f"benchmarks to run (default all): {sorted(BENCHMARKS)}"
    )
    return parser


def run(names: list[str], bench_argv: list[str]) -> int:
    """Run the named benchmarks in order, each with bench_argv; stop at the first failure."""
    for name in names:
        bench = BENCHMARKS[name]()
        print(f"== benchmark {name}")
        code = bench.main(bench_argv)
        if code:
            return code
    return 0


def main(argv: list[str]) -> int:
    """Run the named benchmarks (default: all) in a fixed order."""
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    names = args.names or sorted(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; available: {sorted(BENCHMARKS)}")
    return run(names, rest)
