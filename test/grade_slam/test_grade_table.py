"""`grade bench slam --grade-table`: the learned person segmenter and its backend on a few
frames, the segmenter's score, and a table that resumes after a kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from grade_common.tum import read_list
from grade_eval.realism.worker import PYTHON_ENV
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.sim.run import run_scenario
from grade_slam.config import SlamConfig
from grade_slam.dynamic_pixels import sequence_pixels
from grade_slam.errors import SlamConfigError, SlamInputError
from grade_slam.grade_sequences import load_preset, sequence_scenario
from grade_slam.offline import track_camera_folder
from grade_slam.person_segmenter import (
    LearnedMasks,
    MaskScore,
    SegmenterModel,
    segment_folder,
)

# A small world without baked lighting, so that a sequence simulates in seconds.
BASE = {
    "backend": "mujoco",
    "seed": 1,
    "duration_s": 2.0,
    "bootstrap_s": 0.5,
    "environment": {
        "type": "procedural",
        "procedural": {
            "rooms_x": 2,
            "rooms_y": 1,
            "room_size_m": [5.0, 5.5],
            "furniture_per_room": [1, 2],
        },
    },
    "lights": {"count": 3, "intensity": [0.9, 1.3], "ambient": [0.2, 0.3]},
    "robots": [
        {
            "name": "uav1",
            "type": "uav",
            "motion": {"mode": "path", "speed_mps": 0.8, "altitude_m": 1.4},
            "cameras": [{"name": "camera", "width": 640, "height": 480, "rate_hz": 30.0}],
        }
    ],
}
PRESET = {
    "scenario": "base.yaml",
    "duration_s": 1.5,
    "seeds": [3],
    "worlds": [{"name": "small"}],
    "kinds": ["static_H", "people_N_H"],
    "crowd": {"count": 6},
    "few_flying": 1,
    "lot_flying": 2,
}


def _has_mediapipe() -> bool:
    from grade_slam.person_segmenter import MEDIAPIPE

    try:
        python = MEDIAPIPE.python()
    except SlamConfigError:
        return False
    return subprocess.run([python, "-c", "import mediapipe"], check=False).returncode == 0


# For tests that track only the LiDAR: the images are not looked at, a small camera renders fast.
SMALL_CAMERA = {"width": 160, "height": 120}


def _preset_file(folder: Path, **changes: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "base.yaml").write_text(yaml.safe_dump(BASE))
    path = folder / "preset.yaml"
    path.write_text(yaml.safe_dump({**PRESET, **changes}))
    return path


def test_mask_score_counts_pixels() -> None:
    truth = np.zeros((4, 4), bool)
    truth[:2, :2] = True  # 4 person pixels
    learned = np.zeros((4, 4), bool)
    learned[:2, 1:3] = True  # 2 on the person, 2 beside
    score = MaskScore()
    score.add(learned, truth)
    assert (score.intersection_px, score.union_px, score.missed_px) == (2, 6, 2)
    assert score.iou == pytest.approx(2 / 6)
    assert score.missed_share == pytest.approx(0.5)
    assert np.isnan(MaskScore().iou)


def test_learned_mask_of_another_size_is_refused(tmp_path: Path) -> None:
    import cv2

    cv2.imwrite(str(tmp_path / "0.png"), np.zeros((240, 320), np.uint8))
    masks = LearnedMasks({5: tmp_path / "0.png"})
    with pytest.raises(SlamInputError, match=r"0.png: \(240, 320\), the frame is \(480, 640\)"):
        masks.mask(5, (480, 640))
    with pytest.raises(SlamInputError, match=r"no readable learned mask for the frame 6 ns"):
        masks.mask(6, (240, 320))


def test_learned_masks_need_mask_dynamic(tmp_path: Path) -> None:
    with pytest.raises(SlamConfigError, match=r"learned masks need mask_dynamic = true"):
        track_camera_folder(tmp_path, SlamConfig(), learned_masks=LearnedMasks({}))


def test_a_python_without_mediapipe_names_the_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rgb.txt").write_text("0.0 rgb/0.png\n")
    monkeypatch.setenv(PYTHON_ENV, sys.executable)  # grade's own Python: no mediapipe
    with pytest.raises(SlamConfigError, match=r"cannot import mediapipe; .*make setup-realism"):
        segment_folder(tmp_path, tmp_path / "masks")


@pytest.fixture(scope="module")
def people_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1.5 s sequence of the small world with six people (RGB, depth, semantic, VLP-16)."""
    folder = tmp_path_factory.mktemp("grade_table")
    preset = load_preset(_preset_file(folder / "preset"))
    data = sequence_scenario(preset, BASE, "small", "people_N_H", 3)
    run_scenario(scenario_from_mapping(data), folder / "run")
    return folder / "run" / "gt" / "uav1" / "camera"


@pytest.mark.slow
@pytest.mark.realism
@pytest.mark.skipif(not _has_mediapipe(), reason="mediapipe is not installed: make setup-realism")
def test_learned_mask_backend_on_a_few_frames(people_run: Path, tmp_path: Path) -> None:
    from grade_slam.vocabulary_set import TEST_RECIPE, build_vocabulary

    masks = segment_folder(people_run, tmp_path / "masks", SegmenterModel.SELFIE)
    frames = len(read_list(people_run / "rgb.txt"))
    assert len(masks.files) == frames
    pixels = sequence_pixels(people_run, masks)
    assert pixels.person_share_mean > 0.0  # people are in view
    assert pixels.segmenter.intersection_px > 0  # and the network finds some of them
    assert 0.0 < pixels.segmenter.iou <= 1.0
    config = SlamConfig(
        backend="orb_slam3_rgbd",
        mask_dynamic=True,
        vocabulary=str(build_vocabulary(TEST_RECIPE)),
    )
    tracker = track_camera_folder(people_run, config, learned_masks=masks)
    assert tracker.stats.frames == frames
    assert tracker.stats.tracked > 0


@pytest.mark.slow
def test_table_resumes_after_a_kill(tmp_path: Path) -> None:
    preset = _preset_file(tmp_path / "preset", **SMALL_CAMERA)
    out = tmp_path / "out"
    command = [
        *("grade", "bench", "slam", "--grade-table", str(out), "--preset", str(preset)),
        *("--backends", "kiss_icp", "kiss_icp_masked", "--keep-runs"),
    ]
    first_run = out / "runs" / "small_static_H_s3"
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        while not (first_run / "run.yaml").is_file() and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[0]
        os.killpg(proc.pid, signal.SIGKILL)  # the command and every process it started
    finally:
        proc.wait()
    simulated_at = (first_run / "run.yaml").stat().st_mtime_ns
    # a killed run's staging folder: removed on resume (its process is gone)
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = out / "runs" / f".small_people_N_H_s3.partial-{gone.pid}"
    stale.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "simulated small_static_H_s3" not in done.stdout  # its run was reused
    assert (first_run / "run.yaml").stat().st_mtime_ns == simulated_at
    assert not stale.exists()
    rows = (out / "table.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2  # header, 2 sequences x 2 backends
    summary = (out / "summary.md").read_text()
    assert "| kiss_icp_masked | people_N_H |" in summary
    assert (out / "plots" / "ate_vs_dynamic.png").is_file()
    # everything is stored: a third run simulates and tracks nothing
    again = subprocess.run(command, capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "simulated" not in again.stdout
    # another crowd makes other sequences: OUT's are not reused for them
    preset.write_text(yaml.safe_dump({**PRESET, **SMALL_CAMERA, "crowd": {"count": 7}}))
    changed = subprocess.run(command, capture_output=True, text=True, check=False)
    assert changed.returncode == 2
    assert "small_people_N_H_s3 in" in changed.stdout
    assert "was made from another scenario" in changed.stdout


@pytest.mark.slow
def test_a_stopped_simulation_stops_the_table_and_leaves_no_score(tmp_path: Path) -> None:
    # long enough that Ctrl-C lands while it simulates; it is stopped after a few frames
    preset = _preset_file(tmp_path / "preset", duration_s=30.0, **SMALL_CAMERA)
    out = tmp_path / "out"
    command = [
        *("grade", "bench", "slam", "--grade-table", str(out), "--preset", str(preset)),
        *("--backends", "kiss_icp"),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # a frame in the staging folder: the simulation loop is running
        while proc.poll() is None and not any((out / "runs").glob(".small_static_H_s3.*/**/*.png")):
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout = proc.communicate(timeout=120)[0]
    finally:
        proc.kill()
    assert proc.returncode == 2, stdout
    assert "small_static_H_s3: the simulation stopped early" in stdout
    # nothing measured on the stopped run: the next command simulates it again
    assert not (out / "sequences" / "small_static_H_s3.json").exists()
    assert not list((out / "results").glob("*.json"))
    status = yaml.safe_load((out / "runs" / "small_static_H_s3" / "run.yaml").read_text())
    assert status["status"] != "complete"


def test_table_refuses_a_folder_grade_did_not_write(tmp_path: Path) -> None:
    from grade_slam.errors import SlamError
    from grade_slam.grade_table import prepare_out

    (tmp_path / "mine.txt").write_text("a user's file\n")
    with pytest.raises(SlamError, match=r"is not the folder of an earlier --grade-table run"):
        prepare_out(tmp_path)
    prepare_out(tmp_path / "new")
    prepare_out(tmp_path / "new")  # the OUT of an earlier run: accepted, to resume


@pytest.mark.slow
@pytest.mark.realism
@pytest.mark.skipif(not _has_mediapipe(), reason="mediapipe is not installed: make setup-realism")
def test_grade_slam_segment_scores_the_masks(
    people_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from grade_slam.cli import main

    assert main(["segment", str(people_run), "--out", str(tmp_path / "m"), "--model", "pose"]) == 0
    out = capsys.readouterr().out
    frames = len(read_list(people_run / "rgb.txt"))
    assert f"{frames} masks (pose)" in out
    assert "against the ground-truth person masks" in out
    assert len(list((tmp_path / "m").glob("*.png"))) == frames
