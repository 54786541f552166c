"""A real `grade run` killed with SIGKILL while recording: what is on disk, and recovery.

The simulator runs in its own process and is killed mid-run; `grade bag recover` must give back
every message up to the bound the bag writer promises (one open chunk of at most one simulated
second, plus the writer's queue), and the TUM lists must list exactly the PNGs on disk (at most
the frame being written when the kill came is on disk without its list line).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import Reader

from grade_cli.main import main
from grade_common.rundir import RunLayout
from grade_common.tum import IMAGE_KINDS, list_file, read_list, read_poses
from replay_kit import file_digests

NS = 1_000_000_000
# Promised loss bound in simulated time: the open chunk (1 s) plus the writer's 256-message
# queue (about 0.3 s at the ~900 messages/s of this scenario).
LOSS_BOUND_S = 1.3
RGB_TOPIC = "/uav1/camera/rgb/image_raw"


def _run_and_kill(tmp: Path, scenario_data: dict[str, Any], frames: int) -> Path:
    scenario = tmp / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(scenario_data))
    proc = subprocess.Popen(
        [sys.executable, "-m", "grade_cli.main", "run", str(scenario), "--out", str(tmp / "run")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            pngs = list(tmp.glob(".run.partial-*/gt/uav1/camera/rgb/*.png"))
            if len(pngs) >= frames:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    (partial,) = tmp.glob(".run.partial-*")
    return partial


@pytest.mark.slow
def test_sigkill_then_recover(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    small_data: Callable[..., dict[str, Any]],
) -> None:
    # Long enough that the kill comes mid-run (at ~1 s), short enough that drawing the scene
    # (every actor's whole timeline) takes no time.
    partial = _run_and_kill(tmp_path, small_data(duration_s=20.0), frames=24)
    layout = RunLayout(partial)
    before = file_digests(partial)

    # TUM lists on disk right after the kill: every listed PNG exists, at most one is unlisted.
    cam = layout.camera_dir("uav1", "camera")
    listed = {}
    for kind in IMAGE_KINDS:
        entries = read_list(cam / list_file(kind))
        assert all((cam / name).is_file() for _, name in entries), kind
        on_disk = {p.name for p in (cam / kind).glob("*.png")}
        assert len(on_disk) - len(entries) in (0, 1), kind
        listed[kind] = [t for t, _ in entries]
    assert listed["rgb"] == listed["depth"] == listed["instance"]
    assert len(listed["rgb"]) >= 20
    poses = read_poses(cam / "groundtruth.txt")
    assert list(poses.stamps) == listed["rgb"]
    progress_ns = round(read_poses(layout.trajectory("uav1")).stamps_s[-1] * NS)

    # The bag: unreadable as it is, recovered in full up to the bound.
    assert main(["bag", "info", str(layout.bag)]) == 1
    assert "grade bag recover" in capsys.readouterr().err
    out = tmp_path / "recovered"
    assert main(["bag", "recover", str(layout.bag), "--out", str(out)]) == 0
    print(capsys.readouterr().out)
    with Reader(out) as reader:
        stamps: dict[str, list[int]] = {}
        for conn, t_ns, _ in reader.messages():
            stamps.setdefault(conn.topic, []).append(t_ns)
    rgb = np.asarray(stamps[RGB_TOPIC])
    assert np.allclose(np.diff(rgb), NS / 30, atol=1e6)  # every frame from the first one on
    imu = np.asarray(stamps["/uav1/imu"])
    assert np.allclose(np.diff(imu), NS / 240, atol=1e6)
    last_ns = max(max(v) for v in stamps.values())
    lost_s = (progress_ns - last_ns) / NS
    print(f"simulated time lost by the kill: {lost_s:.3f} s (bound {LOSS_BOUND_S} s)")
    assert lost_s <= LOSS_BOUND_S
    # The bag's frames are a superset of the listed PNGs' up to the last one the bag holds.
    bag_frames = {f"{t / NS:.6f}" for t in rgb}
    assert {t for t in listed["rgb"] if float(t) * NS <= last_ns} <= bag_frames

    # The whole run directory: a new one beside it, lists exactly matching the PNGs.
    assert main(["recover", str(partial)]) == 0
    run = RunLayout(tmp_path / "run")
    info = yaml.safe_load(run.run_yaml.read_text())
    assert info["status"] == "interrupted"
    assert info["recovered"]["bag_messages"] > 0
    new_cam = run.camera_dir("uav1", "camera")
    for kind in IMAGE_KINDS:
        names = {name for _, name in read_list(new_cam / list_file(kind))}
        assert names == {f"{kind}/{p.name}" for p in (new_cam / kind).glob("*.png")}
    assert len(read_poses(new_cam / "groundtruth.txt").stamps) == len(names)
    with Reader(run.bag) as reader:
        assert reader.message_count == sum(len(v) for v in stamps.values())
    assert file_digests(partial) == before  # the partial run was only read
