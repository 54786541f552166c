"""`grade recover`: a run directory from a partial one, TUM lists matching the PNGs on disk."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from grade_cli.main import main
from grade_common.rundir import RunLayout
from grade_common.tum import IMAGE_KINDS, list_file, list_header, pose_header, read_list
from grade_replay.recover_run import RunRecoveryError, default_output, recover_run
from replay_kit import file_digests

STAMPS = ["1.000000", "1.033333", "1.066667", "1.100000"]


def _partial(tmp: Path) -> Path:
    """A killed run: frame 4 has PNGs but no list lines, rgb.txt's last line is cut off."""
    root = tmp / ".run.partial-4242"
    layout = RunLayout(root)
    cam = layout.camera_dir("uav1", "camera")
    for kind in IMAGE_KINDS:
        (cam / kind).mkdir(parents=True)
        for t in STAMPS:
            cv2.imwrite(str(cam / kind / f"{t}.png"), np.zeros((4, 4), np.uint8))
        lines = "".join(f"{t} {kind}/{t}.png\n" for t in STAMPS[:3])
        (cam / list_file(kind)).write_text(list_header(kind) + lines)
    with open(cam / "rgb.txt", "a") as f:
        f.write("1.100000 rgb/1.10")  # cut off mid-line by the kill
    poses = "".join(f"{t} 0 0 0 0 0 0 1\n" for t in STAMPS[:3])
    (cam / "groundtruth.txt").write_text(pose_header("optical frame in world") + poses)
    (layout.trajectory("uav1")).write_text(pose_header("base_link in world") + poses + "1.1 0 0")
    layout.run_yaml.write_text(yaml.safe_dump({"status": "running", "scenario": {"seed": 1}}))
    return root


def test_recover_run_keeps_exactly_the_listed_frames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    partial = _partial(tmp_path)
    before = file_digests(partial)
    assert main(["recover", str(partial)]) == 0
    assert "1 unfinished dropped" in capsys.readouterr().out
    run = RunLayout(tmp_path / "run")
    cam = run.camera_dir("uav1", "camera")
    for kind in IMAGE_KINDS:
        assert [t for t, _ in read_list(cam / list_file(kind))] == STAMPS[:3]
        assert sorted(p.stem for p in (cam / kind).glob("*.png")) == STAMPS[:3]
    assert (run.trajectory("uav1")).read_text().endswith("1.066667 0 0 0 0 0 0 1\n")
    info = yaml.safe_load(run.run_yaml.read_text())
    assert info["status"] == "interrupted"
    assert info["recovered"]["frames"] == {"uav1/camera": 3}
    assert any("record.npz" in item for item in info["recovered"]["lost"])
    assert file_digests(partial) == before
    assert main(["recover", str(partial)]) == 1  # the output exists now: refused


def test_recover_run_refuses_what_it_cannot_name_or_read(tmp_path: Path) -> None:
    with pytest.raises(RunRecoveryError, match=r"no run\.yaml"):
        recover_run(tmp_path)
    (tmp_path / "run.yaml").write_text("status: running\n")
    with pytest.raises(RunRecoveryError, match="pass --out"):
        recover_run(tmp_path)
    assert default_output(tmp_path / ".a.b.partial-12-3") == tmp_path / "a.b"
