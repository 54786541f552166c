"""launch/explore.launch.yaml end to end: sim_node, joint_controller and explorer as separate
processes in lockstep; the explorer's seen map covers a stated share of the free floor.

A short run in a small world (two 5 x 5 m rooms, no people), depth-only 160 x 120 camera: the
UAV turns on the spot (about 13 s), then flies to frontiers; after 25 simulated seconds the
explorer must have seen at least 70 % of the free floor (measured: 96.9 %). Lockstep makes the
run independent of the machine's speed: the simulator waits for the controller's command at
every odometry sample and for the explorer's acknowledgement of every depth image.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("rclpy")

from grade_cli.explore import free_floor_of_run
from grade_control.coverage import coverage_over_time, load_seen_map
from process_support import CollectedProcess, grade_launch_command

SCENARIO = {
    "seed": 4,
    "duration_s": 25.0,
    "bootstrap_s": 0.5,
    "environment": {
        "procedural": {
            "rooms_x": 2,
            "rooms_y": 1,
            "room_size_m": [5.0, 5.0],
            "furniture_per_room": [1, 1],
        }
    },
    "people": {"count": 0},
    "flying_objects": {"count": 0},
    "robots": [
        {
            "name": "uav1",
            "type": "uav",
            "motion": {"mode": "commands", "altitude_m": 1.4},
            "cameras": [
                {
                    "name": "camera",
                    "width": 160,
                    "height": 120,
                    "hfov_deg": 88.95,
                    "rate_hz": 15.0,
                    "streams": ["depth"],
                }
            ],
        }
    ],
    "record": {"bag": False, "ground_truth": False, "experiment_record": False},
}
MIN_COVERAGE = 0.7


@pytest.mark.slow
@pytest.mark.ros
def test_explorer_covers_the_free_floor_of_a_short_run(tmp_path: Path, repo_root: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    run_dir, seen_file = tmp_path / "run", tmp_path / "seen.npz"
    launch = CollectedProcess(
        grade_launch_command(
            [
                str(repo_root / "launch" / "explore.launch.yaml"),
                f"scenario:={scenario}",
                f"output_dir:={run_dir}",
                f"map_output:={seen_file}",
            ]
        ),
        cwd=tmp_path,
    )
    try:
        assert launch.wait(timeout_s=300) == 0, launch.text
    finally:
        launch.cleanup()
    assert "acknowledged by followers: /uav1/camera/depth/image_raw:/uav1/explorer/depth_ack" in (
        launch.text
    )
    assert "look around" in launch.text
    assert "frontier at" in launch.text, launch.text
    seen, track = load_seen_map(seen_file)
    travelled = float(np.sum(np.linalg.norm(np.diff(track[:, 1:], axis=0), axis=1)))
    assert travelled > 1.0, f"the UAV moved only {travelled:.2f} m"
    coverage = coverage_over_time(seen, free_floor_of_run(run_dir), np.array([track[-1, 0]]))
    print(f"explorer coverage after {track[-1, 0]:.1f} s: {coverage[0]:.3f}")
    assert coverage[0] >= MIN_COVERAGE, f"coverage {coverage[0]:.2f} < {MIN_COVERAGE}"
