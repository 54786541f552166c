"""The `grade` dispatcher."""

from __future__ import annotations

import pytest

from grade_cli import main as cli


def test_unknown_subcommand_lists_available(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["no-such-command"]) == 2
    assert "unknown subcommand 'no-such-command'" in capsys.readouterr().err


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in cli.SUBCOMMANDS:
        assert name in out
