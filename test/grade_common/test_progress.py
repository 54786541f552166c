"""step_bar: the run's step count and position reach the bar; quiet shows nothing."""

from __future__ import annotations

import pytest

from grade_common.progress import step_bar


def test_step_bar_shows_the_last_step_of_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    with step_bar("simulating") as progress:
        progress(0, 480)
        progress(120, 480)
        progress(480, 480)
    err = capsys.readouterr().err
    assert "simulating" in err
    assert "480/480" in err
    assert err.endswith("\n")


def test_step_bar_is_closed_when_the_run_is_cut(capsys: pytest.CaptureFixture[str]) -> None:
    def cut_run() -> None:
        with step_bar("replaying") as progress:
            progress(7, 50)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cut_run()
    err = capsys.readouterr().err
    assert "7/50" in err
    assert err.endswith("\n")  # closed: the bar's line is finished


def test_quiet_step_bar_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with step_bar("simulating", quiet=True) as progress:
        progress(10, 10)
    assert capsys.readouterr().err == ""
