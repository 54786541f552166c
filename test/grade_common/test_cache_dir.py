"""grade_common.cache_dir: the kind's own variable, else under $XDG_CACHE_HOME, else ~/.cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_common.cache_dir import cache_dir

ENV = "GRADE_TEST_CACHE"


def test_the_kind_variable_names_the_folder_outright(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir(ENV, "textures") == tmp_path / "mine"


@pytest.mark.parametrize("explicit", [None, ""])  # an empty variable counts as unset
def test_without_it_the_kind_goes_under_xdg_cache_home(
    explicit: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if explicit is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, explicit)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir(ENV, "bake") == tmp_path / "grade" / "bake"
    assert cache_dir(ENV) == tmp_path / "grade"


def test_without_xdg_cache_home_it_is_under_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir(ENV, "makehuman") == tmp_path / ".cache" / "grade" / "makehuman"
