"""The shared command-line pieces: enum options, kept line breaks, benchmark options."""

from __future__ import annotations

import enum
from pathlib import Path

import pytest

from grade_common.cli_args import (
    add_choice,
    add_quiet,
    add_recorded_run,
    bench_parser,
    command_parser,
    parse_bench_args,
)


class Colour(enum.Enum):
    RED = "red"
    DARK_BLUE = "dark-blue"


def test_choice_takes_the_enum_values_and_defaults_to_the_member_value() -> None:
    parser = command_parser("grade test", None)
    add_choice(parser, "--colour", Colour, Colour.DARK_BLUE, help="which colour")
    assert parser.parse_args([]).colour == "dark-blue"
    assert parser.parse_args(["--colour", "red"]).colour == "red"
    assert "{red,dark-blue}" in parser.format_help()


def test_choice_rejects_a_value_outside_the_enum(capsys: pytest.CaptureFixture[str]) -> None:
    parser = command_parser("grade test", None)
    add_choice(parser, "--colour", Colour, Colour.RED)
    with pytest.raises(SystemExit):
        parser.parse_args(["--colour", "green"])
    assert "invalid choice: 'green'" in capsys.readouterr().err


def test_command_parser_keeps_the_description_line_breaks() -> None:
    doc = "`grade test`: one line.\n\nExamples:\n  grade test a\n  grade test b\n"
    help_text = command_parser("grade test", doc).format_help()
    assert help_text.startswith("usage: grade test")
    assert "Examples:\n  grade test a\n  grade test b\n" in help_text


def test_recorded_run_and_quiet() -> None:
    parser = command_parser("grade test", None)
    add_recorded_run(parser)
    add_quiet(parser)
    args = parser.parse_args(["runs/demo", "--quiet"])
    assert args.run_dir == Path("runs/demo")
    assert args.quiet is True
    assert parser.parse_args(["runs/demo"]).quiet is False


def test_bench_options_of_other_benchmarks_are_ignored() -> None:
    parser = bench_parser("test", None)
    parser.add_argument("--frames", type=int, default=3)
    assert parser.prog == "grade bench test"
    args = parse_bench_args(parser, ["--frames", "5", "--rounds", "2"])
    assert args.frames == 5
    assert not hasattr(args, "rounds")
