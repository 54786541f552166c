"""Fuzz: `grade noise apply` on a TUM folder with one mutated index, pose or camera file either
works or is refused with an error naming the folder, leaving no output behind."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_noise_apply import make_tum

from fuzzkit import accepted_or_refused, mutated
from grade_noise.cli import main as noise_main

FILES = ("rgb.txt", "depth.txt", "groundtruth.txt", "camera_info.yaml")


@pytest.fixture(scope="module")
def tum_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    cam = tmp_path_factory.mktemp("tum") / "camera"
    make_tum(cam, frames=3)
    return {p.relative_to(cam).as_posix(): p.read_bytes() for p in cam.rglob("*") if p.is_file()}


@given(data=st.data(), name=st.sampled_from(FILES))
def test_a_tum_folder_with_a_mutated_file_is_noised_or_refused(
    tmp_path_factory: pytest.TempPathFactory,
    tum_files: dict[str, bytes],
    data: st.DataObject,
    name: str,
) -> None:
    root = tmp_path_factory.mktemp("case")
    cam = root / "camera"
    for rel, content in tum_files.items():
        (cam / rel).parent.mkdir(parents=True, exist_ok=True)
        (cam / rel).write_bytes(content)
    (cam / name).write_bytes(data.draw(mutated(tum_files[name]), label=name))
    out = root / "noisy"
    argv = ["apply", str(cam), str(out), "--seed", "1", "--no-progress"]
    result = accepted_or_refused(lambda: noise_main(argv), root, str(cam))
    assert result == 0 or not out.exists()
