"""`grade bag ...` on bad input: one clear error naming the file, nothing written."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from bagkit import NS, BagSpec, image, pose_stamped, read_bag, write_bag

from grade_cli.main import main

IMG = "sensor_msgs/msg/Image"


def _good_bag(path: Path) -> Path:
    spec = BagSpec()
    for k in range(120):
        t_ns = NS + k * NS // 30
        spec.add("/cam/rgb", IMG, t_ns, image(t_ns, np.full((16, 16, 3), k, np.uint8), "rgb8"))
        spec.add(
            "/cam/pose",
            "geometry_msgs/msg/PoseStamped",
            t_ns,
            pose_stamped(t_ns, (k, 0, 0), (0, 0, 0, 1)),
        )
    return write_bag(path, spec)


def _missing(tmp: Path) -> tuple[Path, str]:
    return tmp / "nothing_here", r"nothing_here: bag does not exist"


def _unknown_storage(tmp: Path) -> tuple[Path, str]:
    bag = _good_bag(tmp / "foo_bag")
    meta = bag / "metadata.yaml"
    meta.write_text(meta.read_text().replace("storage_identifier: mcap", "storage_identifier: foo"))
    return bag, r"foo_bag: unknown storage format: Storage plugin 'foo' not supported"


def _unknown_suffix(tmp: Path) -> tuple[Path, str]:
    path = tmp / "data.bag"
    path.write_bytes(b"#ROSBAG V2.0\n")
    return path, r"data.bag: unknown storage format '.bag'"


def _not_a_bag_dir(tmp: Path) -> tuple[Path, str]:
    (tmp / "plain_dir").mkdir()
    return tmp / "plain_dir", r"plain_dir: not a rosbag2 directory \(no metadata.yaml in it\)"


def _truncated(tmp: Path) -> tuple[Path, str]:
    bag = _good_bag(tmp / "cut_bag")
    mcap = bag / "cut_bag.mcap"
    with mcap.open("r+b") as fh:
        fh.truncate(mcap.stat().st_size // 2)
    return bag, r"cut_bag: bag is truncated or corrupt"


def _corrupt_chunk(tmp: Path) -> tuple[Path, str]:
    bag = _good_bag(tmp / "bad_crc")
    mcap = bag / "bad_crc.mcap"
    data = bytearray(mcap.read_bytes())
    # garbage over the middle half: chunk and message record lengths no longer parse
    data[len(data) // 4 : 3 * len(data) // 4] = b"\xff" * (3 * len(data) // 4 - len(data) // 4)
    mcap.write_bytes(bytes(data))
    return bag, r"bad_crc: bag is truncated or corrupt"


BAD_INPUTS: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "missing": _missing,
    "unknown-storage": _unknown_storage,
    "unknown-suffix": _unknown_suffix,
    "not-a-bag": _not_a_bag_dir,
    "truncated": _truncated,
    "corrupt-chunk": _corrupt_chunk,
}
TOOLS: dict[str, list[str]] = {
    "info": [],
    "clip": ["--start", "0.5"],
    "reindex": ["--rate", "/cam/rgb=30"],
    "export": ["--rgb", "/cam/rgb", "--pose-topic", "/cam/pose"],
}


@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_a_clear_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tool: str, case: str
) -> None:
    bag, match = BAD_INPUTS[case](tmp_path)
    out = tmp_path / "out"
    argv = ["bag", "--no-progress", tool, str(bag)] + (
        [] if tool == "info" else ["--out", str(out), *TOOLS[tool]]
    )
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"grade bag: error: {bag}")
    assert re.search(match, err), err
    assert not out.exists()
    assert not (tmp_path / ".out.partial").exists()


@pytest.mark.parametrize(
    ("tool", "args", "match"),
    [
        ("reindex", ["--rate", "/nope=30"], r"topic\(s\) \['/nope'\] not in the bag; it has"),
        ("export", ["--rgb", "/nope"], r"topic\(s\) \['/nope'\] not in the bag"),
        ("export", ["--tf", "world", "base"], r"no /tf or /tf_static topic in the bag"),
        (
            "export",
            ["--pose-topic", "/cam/rgb"],
            r"/cam/rgb has type sensor_msgs/msg/Image; a traj",
        ),
        ("clip", ["--after-start-marker"], r"no start marker topic /starting_experiment"),
    ],
)
def test_topic_not_in_bag_names_file_and_topic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tool: str, args: list[str], match: str
) -> None:
    bag = _good_bag(tmp_path / "good")
    assert main(["bag", "--no-progress", tool, str(bag), "--out", str(tmp_path / "o"), *args]) == 1
    err = capsys.readouterr().err
    assert f"{bag}" in err
    assert re.search(match, err), err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("tool", ["clip", "reindex", "export"])
def test_existing_output_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tool: str
) -> None:
    bag = _good_bag(tmp_path / "good")
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["bag", "--no-progress", tool, str(bag), "--out", str(out), *TOOLS[tool]]) == 1
    assert f"{out}: output exists already" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_tools_never_modify_the_input(tmp_path: Path) -> None:
    bag = _good_bag(tmp_path / "good")
    before = {p.name: p.read_bytes() for p in bag.iterdir()}
    for i, (tool, args) in enumerate(TOOLS.items()):
        extra = [] if tool == "info" else ["--out", str(tmp_path / f"o{i}"), *args]
        assert main(["bag", "--no-progress", tool, str(bag), *extra]) == 0
    assert {p.name: p.read_bytes() for p in bag.iterdir()} == before


def test_progress_bar_goes_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = _good_bag(tmp_path / "good")
    assert main(["bag", "clip", str(bag), "--out", str(tmp_path / "c"), "--start", "1"]) == 0
    captured = capsys.readouterr()
    assert "clip" in captured.err
    assert "msg" in captured.err
    assert "kept" in captured.out
    assert len(read_bag(tmp_path / "c")) == 2 * (120 - 30)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["clip", "B", "--out", "O"], r"either a window \(--start/--end\) or --after-start-marker"),
        (["clip", "B", "--out", "O", "--start", "2", "--end", "1"], r"end_s=1.0 must be greater"),
        (["reindex", "B", "--out", "O", "--rate", "/a"], r"--rate '/a': expected TOPIC=HZ"),
        (["reindex", "B", "--out", "O", "--rate", "/a=fast"], r"'fast' is not a number of Hz"),
        (["export", "B", "--out", "O"], r"nothing to export"),
    ],
)
def test_bad_options_are_named(
    capsys: pytest.CaptureFixture[str], args: list[str], match: str
) -> None:
    assert main(["bag", *args]) == 1
    assert re.search(match, capsys.readouterr().err)


def test_good_bag_fixture_is_readable(tmp_path: Path) -> None:
    bag = _good_bag(tmp_path / "good")
    shutil.copytree(bag, tmp_path / "copy")
    assert len(read_bag(tmp_path / "copy")) == 240
