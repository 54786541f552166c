"""The parts every `grade` command line shares: its parser and the arguments with one wording.

`grade SUBCOMMAND` (grade_cli) hands the rest of the command line to the subcommand's own
`main(argv)`; each one builds its parser here, so `grade X --help` shows `prog` and the module
docstring with its line breaks, and the same argument reads the same in every command.
"""

from __future__ import annotations

import argparse
import enum
from pathlib import Path

RECORDED_RUN_HELP = "recorded run directory (run.yaml, record.npz)"


def command_parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """The parser of `prog` (e.g. "grade render"); `description` is usually the module `__doc__`."""
    return argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def add_choice(
    parser: argparse.ArgumentParser,
    flag: str,
    choices: type[enum.Enum],
    default: enum.Enum,
    *,
    help: str | None = None,
) -> None:
    """An option taking one value of the enum `choices` (parsed as the value's string)."""
    parser.add_argument(
        flag, choices=[member.value for member in choices], default=default.value, help=help
    )


def add_recorded_run(parser: argparse.ArgumentParser) -> None:
    """The positional `run_dir`: a run directory that `grade run` recorded."""
    parser.add_argument("run_dir", type=Path, help=RECORDED_RUN_HELP)


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """`--quiet`: no progress bar."""
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def bench_parser(name: str, description: str | None) -> argparse.ArgumentParser:
    """The parser of `grade bench NAME`; read it with `parse_bench_args`."""
    return command_parser(f"grade bench {name}", description)


def parse_bench_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse a benchmark's own options out of argv and ignore the rest.

    `grade bench` passes every option it does not know on to each benchmark it runs, so an
    option meant for another benchmark is not an error here.
    """
    args, _ = parser.parse_known_args(argv)
    return args
