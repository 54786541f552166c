"""The tutorials' marked command blocks run, in order, as a reader would run them.

A block marked ```{code-block} bash` with `:class: tutorial-step` in docs/tutorials/*.md is run
with bash (in the test's environment and ROS domain) in a fresh folder that holds a copy of
config/; the settings are made smaller (SMALLER) so that every tutorial runs in a minute or two,
and the files each page tells the reader to look at must exist at the end.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

# The docs lane (make test-docs), beside the site's build: each tutorial is minutes of runs.
pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "docs" / "tutorials"
STEP = re.compile(r"```\{code-block\} bash\n:class: tutorial-step\n\n(.*?)```", re.S)

# page -> (file under the page's folder, text, smaller text): shorter runs, fewer pixels.
SMALLER: dict[str, list[tuple[str, str, str]]] = {
    "person-dataset.md": [
        ("config/person_dataset.yaml", "duration_s: 3.0", "duration_s: 1.5"),
        ("config/person_dataset.yaml", "people.count: 10", "people.count: 4"),
        ("config/person_dataset.yaml", "width: 320", "width: 160"),
        ("config/person_dataset.yaml", "height: 240", "height: 120"),
    ],
    "own-robot-and-world.md": [("", "duration_s: 4.0", "duration_s: 1.5")],
    "changed-surroundings.md": [
        ("", "duration_s=3", "duration_s=1.5"),
        ("", "width=320", "width=160"),
        ("", "height=240", "height=120"),
    ],
    # 2 s flights are one straight line: SE(3) alignment is undefined there (the page says so)
    "slam-over-ros2.md": [
        ("", "duration_s:=20", "duration_s:=2"),
        ("", "--align se3", "--align origin"),
    ],
    "multi-robot.md": [("", "duration_s:=10", "duration_s:=2")],
    # fewer candidates and a set of 3 scenes (selection bounds loosened to allow it)
    "scenereplica.md": [
        (
            "",
            "--out runs/scenes/candidates --seed 0",
            "--out runs/scenes/candidates --seed 0 --count 30",
        ),
        (
            "",
            "--out runs/scenes/selected\n",
            "--out runs/scenes/selected --count 3 "
            "--min-per-object 0 --max-per-object 3 --no-references\n",
        ),
        ("", "--scenes 2", "--scenes 1"),
        (
            "",
            "--out runs/scenes/table --scenes 1",
            "--out runs/scenes/table --scenes 1 --pipelines ground_truth --orderings near_to_far",
        ),
    ],
}
# page -> what the reader is told to open at the end.
RESULTS = {
    "person-dataset.md": ["labels.png", "runs/person_dataset/dataset/README.md"],
    "own-robot-and-world.md": [
        "runs/my_robot/contact_sheet_quad1_camera.png",
        "runs/my_robot/trajectory.png",
    ],
    "changed-surroundings.md": [
        "runs/original/contact_sheet_uav1_camera.png",
        "runs/dim_no_people/contact_sheet_uav1_camera.png",
        "runs/dim_no_people/fidelity.json",
        "runs/original_pt/gt/uav1/camera/rgb.txt",
    ],
    "slam-over-ros2.md": [
        "runs/slam_lockstep_plots/trajectory_top.png",
        "runs/slam_lockstep_plots/error_over_time.png",
        "runs/slam_realtime_estimate.txt",
    ],
    "multi-robot.md": [
        "runs/multi_robot/trajectory.png",
        "runs/multi_robot/contact_sheet_omni1_camera.png",
        "runs/multi_robot/contact_sheet_uav2_camera.png",
    ],
    "scenereplica.md": [
        "runs/scenes/selected/scenes.png",
        "runs/scenes/run/results.md",
        "runs/scenes/run/scene_010/perception.png",
        "runs/scenes/table/tables.md",
    ],
}
# Tutorials that start ROS 2 processes (pytest's `ros` marker: CI's second lane runs them too).
ROS = {"slam-over-ros2.md", "multi-robot.md"}


def steps(page: Path) -> list[str]:
    """The marked command blocks of a tutorial page, in order."""
    return STEP.findall(page.read_text(encoding="utf-8"))


def test_every_tutorial_has_marked_steps_and_a_result() -> None:
    pages = sorted(p.name for p in TUTORIALS.glob("*.md") if p.name != "index.md")
    assert pages == sorted(RESULTS)
    for name in pages:
        assert steps(TUTORIALS / name), f"{name} has no tutorial-step blocks"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.ros] if n in ROS else []) for n in sorted(RESULTS)]
)
def test_tutorial_runs(name: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "config", tmp_path / "config")
    blocks = steps(TUTORIALS / name)
    for file_name, text, smaller in SMALLER[name]:
        if file_name:
            path = tmp_path / file_name
            assert text in path.read_text(), f"{file_name} no longer has {text!r}"
            path.write_text(path.read_text().replace(text, smaller))
        else:
            assert any(text in b for b in blocks), f"{name} no longer has {text!r}"
            blocks = [b.replace(text, smaller) for b in blocks]
    for i, block in enumerate(blocks):
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, f"{name} step {i + 1}:\n{block}\n{result.stderr[-3000:]}"
    for result_file in RESULTS[name]:
        assert (tmp_path / result_file).stat().st_size > 0, result_file
