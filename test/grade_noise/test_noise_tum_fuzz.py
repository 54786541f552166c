"""Fuzz: `grade noise apply` on a TUM folder with one mutated index, pose or camera file either
works or is refused with an error naming the folder, leaving no output behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_noise_apply import make_tum

from fuzzkit import accepted_or_refused, mutated
from grade_common.errors import FormatError
from grade_common.tum import read_list
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


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("width: 0", "width = 0: allowed [1, 16384] pixels"),
        ("K: [.inf, 0, 32, 0, 30, 24, 0, 0, 1]", "K holds a non-finite value"),
        ("depth_scale: .nan", "depth_scale = nan: must be a finite number > 0"),
        ("K: [1e300, 0, 32, 0, 1e300, 24, 0, 0, 1]", "focal lengths and principal point"),
    ],
)
def test_absurd_camera_info_values_are_refused(
    tmp_path: Path, tum_files: dict[str, bytes], line: str, message: str
) -> None:
    # Found by the long fuzz run: these crashed the RGB blur (division by zero, inf to int).
    cam = tmp_path / "camera"
    for rel, content in tum_files.items():
        (cam / rel).parent.mkdir(parents=True, exist_ok=True)
        (cam / rel).write_bytes(content)
    info = cam / "camera_info.yaml"
    key = line.split(":")[0]
    kept = [x for x in info.read_text().splitlines() if not x.startswith((key, "-"))]
    if key != "K":
        kept += [x for x in info.read_text().splitlines() if x.startswith(("K:", "-"))]
    info.write_text("\n".join([*kept, line]) + "\n")
    argv = ["apply", str(cam), str(tmp_path / "noisy"), "--seed", "1", "--no-progress"]
    err = accepted_or_refused(lambda: noise_main(argv), tmp_path, str(info))
    assert message in str(err)


@pytest.mark.parametrize("value", ["1e300", "-1e300", "1e6"])
def test_poses_with_an_absurd_camera_velocity_are_refused(
    tmp_path: Path, tum_files: dict[str, bytes], value: str
) -> None:
    # Found by the long fuzz run: a huge position in groundtruth.txt overflowed the blur's
    # motion or made it warp without end.
    cam = tmp_path / "camera"
    for rel, content in tum_files.items():
        (cam / rel).parent.mkdir(parents=True, exist_ok=True)
        (cam / rel).write_bytes(content)
    truth = cam / "groundtruth.txt"
    lines = truth.read_text().splitlines()
    last = [i for i, line in enumerate(lines) if not line.startswith("#")][-1]
    fields = lines[last].split()
    fields[1] = value  # tx of the last pose
    lines[last] = " ".join(fields)
    truth.write_text("\n".join(lines) + "\n")
    argv = ["apply", str(cam), str(tmp_path / "noisy"), "--seed", "1", "--no-progress"]
    err = accepted_or_refused(lambda: noise_main(argv), tmp_path, str(truth))
    assert "camera velocity beyond" in str(err)


@pytest.mark.parametrize("stamp", ["1e999", "1e300", "nan"])
def test_an_absurd_list_stamp_is_refused_with_its_line(tmp_path: Path, stamp: str) -> None:
    # Found by the long fuzz run: an infinite stamp crashed the conversion to nanoseconds.
    listing = tmp_path / "rgb.txt"
    listing.write_text(f"# timestamp filename\n{stamp} rgb/0.png\n")
    with pytest.raises(FormatError, match=rf"rgb\.txt:2: timestamp '{stamp}' is out of range"):
        read_list(listing)
