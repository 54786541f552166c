"""Fuzz: a mutated launch file is checked or refused with a LaunchFileError naming the file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given

from fuzzkit import accepted_or_refused, loaded_or_refused, mutated
from grade_launch.errors import LaunchFileError
from grade_launch.validate import check_launch_file

REPO = Path(__file__).resolve().parents[2]
BASE = (REPO / "launch" / "indoor_uav.launch.yaml").read_bytes()


@given(data=mutated(BASE))
def test_a_mutated_launch_file_is_checked_or_refused(tmp_path: Path, data: bytes) -> None:
    loaded_or_refused(tmp_path, "fuzz.launch.yaml", data, check_launch_file, LaunchFileError)


def test_a_non_utf8_launch_file_names_the_byte(tmp_path: Path) -> None:
    file = tmp_path / "latin1.launch.yaml"
    file.write_bytes(b"launch:\n- arg: {name: caf\xe9}\n")
    err = accepted_or_refused(lambda: check_launch_file(file), tmp_path, str(file))
    assert isinstance(err, LaunchFileError)
    assert "not UTF-8 text (byte 25 is 0xe9)" in str(err)
