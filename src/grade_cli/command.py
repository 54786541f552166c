"""What `grade` needs of a command module: `main(argv)`, which parses argv and runs the command."""

from __future__ import annotations

from typing import Protocol


class Command(Protocol):
    """A command module (e.g. `grade_eval.cli`); mypy checks each module against it."""

    def main(self, argv: list[str]) -> int:
        """Parse argv, run the command and return its exit code."""
        ...
