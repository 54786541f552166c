"""What every command module offers: the type that `grade` and `grade bench` dispatch on.

It sits below both dispatch tables (grade_cli.commands for `grade NAME`, grade_cli.benchmarks
for `grade bench NAME`), so neither has to import the other for it.
"""

from __future__ import annotations

from typing import Protocol


class Command(Protocol):
    """A command module (e.g. `grade_eval.cli`, `grade_sim.cli.bench_sim`)."""

    def main(self, argv: list[str]) -> int:
        """Parse argv, run the command and return its exit code."""
        ...
