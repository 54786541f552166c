"""Output paths: never an input or around one, creatable, and --overwrite only over grade's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grade_common.atomic import StagedOutput
from grade_common.errors import OutputExistsError
from grade_common.output_guard import OUTPUT_MARKER, OutputPathError, check_output, grade_owner


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_new_path_is_accepted_and_nothing_is_created(tmp_path: Path) -> None:
    assert check_output(tmp_path / "a" / "b" / "out", inputs=[tmp_path / "in.yaml"]) is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("out", "words"),
    [
        ("in.yaml", "is the input"),
        ("bag", "is the input"),
        ("bag/clip", "inside the input"),
        (".", "would contain the input"),
    ],
)
def test_output_overlapping_an_input_is_refused(tmp_path: Path, out: str, words: str) -> None:
    (tmp_path / "in.yaml").write_text("a: 1\n")
    (tmp_path / "bag").mkdir()
    with pytest.raises(OutputPathError, match=words):
        check_output(tmp_path / out, inputs=[tmp_path / "in.yaml", tmp_path / "bag"])


def test_output_under_a_file_or_unwritable_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match="is a file, not a folder"):
        check_output(tmp_path / "file" / "sub" / "out")
    with pytest.raises(OutputPathError, match="cannot write in '/proc'"):
        check_output(Path("/proc/grade_out"))


def test_overwrite_refuses_a_folder_grade_did_not_write_and_deletes_nothing(
    tmp_path: Path,
) -> None:
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "chapter1.tex").write_text("precious")
    before = _tree(thesis)
    with pytest.raises(OutputPathError, match="was not written by grade"):
        StagedOutput(thesis, overwrite=True)
    assert _tree(thesis) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thesis"]  # no staging left either


def test_overwrite_never_replaces_cwd_home_or_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / OUTPUT_MARKER).write_text("")  # even marked, the current directory is not replaced
    monkeypatch.chdir(work)
    for path in (work, tmp_path, Path("/"), Path.home()):
        with pytest.raises(OutputPathError, match="current directory, a home directory"):
            check_output(path, overwrite=True)


def test_overwrite_replaces_a_grade_output_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with StagedOutput(out) as tmp:
        tmp.mkdir()
        (tmp / "old.txt").write_text("old")
    assert (out / OUTPUT_MARKER).is_file()  # every committed folder is marked
    assert grade_owner(out / "old.txt") == out.resolve()
    with StagedOutput(out, overwrite=True) as tmp:
        tmp.mkdir()
        (tmp / "new.txt").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == [OUTPUT_MARKER, "new.txt"]
    assert "replacing" in capsys.readouterr().err


def test_without_overwrite_an_existing_output_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("mine")
    with pytest.raises(OutputExistsError, match="exists already"):
        StagedOutput(tmp_path / "x")
    assert (tmp_path / "x").read_text() == "mine"


def test_a_symlink_is_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / OUTPUT_MARKER).write_text("")
    os.symlink(target, tmp_path / "link")
    with pytest.raises(OutputPathError, match="symbolic link"):
        check_output(tmp_path / "link", overwrite=True)


def test_existing_folder_ok_for_folders_of_new_files(tmp_path: Path) -> None:
    (tmp_path / "plots").mkdir()
    assert check_output(tmp_path / "plots", existing_folder_ok=True) is None
    with pytest.raises(OutputPathError, match="inside the input"):
        check_output(tmp_path / "plots", inputs=[tmp_path], existing_folder_ok=True)
