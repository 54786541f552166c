"""Fuzz: bags with a truncated or byte-flipped storage file or metadata.yaml are read, clipped and
exported, or refused with a GradeError naming the bag; a refused bag leaves nothing behind.

Only what grade checks today: MCAP CRCs are not verified yet, so a flipped payload byte may
pass unnoticed (that check belongs to the crash-safe recording work).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from bagkit import NS, BagSpec, image, pose_stamped, string, write_bag
from hypothesis import given
from hypothesis import strategies as st

from fuzzkit import accepted_or_refused, mutated
from grade_replay.bag.cli import main as bag_main

IMG = "sensor_msgs/msg/Image"


@pytest.fixture(scope="module")
def good_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = BagSpec(latched={"/starting_experiment"})
    spec.add("/starting_experiment", "std_msgs/msg/String", NS, string("starting"))
    for k in range(4):
        t_ns = NS + k * NS // 30
        rgb = np.full((4, 6, 3), 40 * k, dtype=np.uint8)
        spec.add("/cam/rgb", IMG, t_ns, image(t_ns, rgb, "rgb8"))
        pose = pose_stamped(t_ns, (k, 2.0, 3.0), (0.0, 0.0, 0.0, 1.0))
        spec.add("/cam/pose", "geometry_msgs/msg/PoseStamped", t_ns, pose)
    return write_bag(tmp_path_factory.mktemp("good") / "bag", spec)


def _commands(bag: Path, out: Path) -> list[list[str]]:
    return [
        ["--no-progress", "info", str(bag)],
        ["--no-progress", "clip", str(bag), "--out", str(out), "--start", "0.05"],
        ["--no-progress", "reindex", str(bag), "--out", str(out), "--rate", "/cam/rgb=30"],
        ["--no-progress", "export", str(bag), "--out", str(out), "--rgb", "/cam/rgb"],
        ["--no-progress", "export", str(bag), "--out", str(out), "--pose-topic", "/cam/pose"],
    ]


@given(
    data=st.data(), which=st.sampled_from(["bag.mcap", "metadata.yaml"]), command=st.integers(0, 4)
)
def test_a_damaged_bag_is_read_or_refused(
    tmp_path_factory: pytest.TempPathFactory,
    good_bag: Path,
    data: st.DataObject,
    which: str,
    command: int,
) -> None:
    root = tmp_path_factory.mktemp("case")
    bag = root / "bag"
    shutil.copytree(good_bag, bag)
    (bag / which).write_bytes(data.draw(mutated((good_bag / which).read_bytes()), label=which))
    out = root / "out"
    argv = _commands(bag, out)[command]
    result = accepted_or_refused(lambda: bag_main(argv), root, str(bag))
    assert result == 0 or not out.exists()


@pytest.mark.parametrize("size", [0, 8, 100])
def test_a_truncated_single_mcap_file_is_refused(tmp_path: Path, good_bag: Path, size: int) -> None:
    mcap = tmp_path / "cut.mcap"
    mcap.write_bytes((good_bag / "bag.mcap").read_bytes()[:size])
    err = accepted_or_refused(lambda: bag_main(["info", str(mcap)]), tmp_path, str(mcap))
    assert "truncated or corrupt" in str(err)


EXTRA = {
    "clip": ["--start", "0"],
    "reindex": ["--rate", "/cam/rgb=30"],
    "export": ["--rgb", "/cam/rgb"],
}


@pytest.mark.parametrize("tool", sorted(EXTRA))
def test_an_output_inside_the_input_bag_is_refused(
    tmp_path: Path, good_bag: Path, tool: str
) -> None:
    bag = tmp_path / "bag"
    shutil.copytree(good_bag, bag)
    extra = EXTRA[tool]
    argv = ["--no-progress", tool, str(bag), "--out", str(bag / "inner"), *extra]
    err = accepted_or_refused(lambda: bag_main(argv), tmp_path, "inside the input")
    assert str(bag) in str(err)


def test_reindex_refuses_an_absurd_rate(tmp_path: Path, good_bag: Path) -> None:
    argv = ["reindex", str(good_bag), "--out", str(tmp_path / "o"), "--rate", "/cam/rgb=1e12"]
    err = accepted_or_refused(lambda: bag_main(argv), tmp_path, "/cam/rgb")
    assert "is not allowed; use (0, 1e+06] Hz" in str(err)
