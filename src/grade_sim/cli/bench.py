"""`grade bench [NAME ...]`: the project's benchmarks, each one documented command away.

Benchmarks print their measurements; none of them is a test and none asserts on time.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

# name -> "module:function"; the function takes argv (list[str]) and returns an exit code.
BENCHMARKS: dict[str, str] = {
    "sim": "grade_sim.bench:main",
    "control": "grade_control.bench:main",
    "bag": "grade_replay.bench:main",
    "eval": "grade_eval.bench:main",
    "noise": "grade_noise.bench:main",
    "replay": "grade_replay.replay_bench:main",
}


def main(argv: list[str]) -> int:
    """Run the named benchmarks (default: all) in a fixed order."""
    parser = argparse.ArgumentParser(prog="grade bench", description=__doc__)
    parser.add_argument(
        "names", nargs="*", help=f"benchmarks to run (default all): {sorted(BENCHMARKS)}"
    )
    args, rest = parser.parse_known_args(argv)
    names = args.names or sorted(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; available: {sorted(BENCHMARKS)}")
    for name in names:
        module_name, func_name = BENCHMARKS[name].split(":")
        func: Callable[[list[str]], int] = getattr(importlib.import_module(module_name), func_name)
        print(f"== benchmark {name}")
        code = func(rest)
        if code:
            return code
    return 0
