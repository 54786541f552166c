"""The recorded world rebuilt for rendering: same camera poses, same instances, every geom posed."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from grade_common.rotations import quat_to_matrix
from grade_common.rundir import RunLayout
from grade_common.tum import read_poses
from grade_render.world_state import WorldState
from grade_sim.io.record import load_record


def test_posing_a_step_reproduces_the_recorded_camera_and_masks(recorded: Path) -> None:
    layout = RunLayout(recorded)
    cam_dir = layout.camera_dir("uav1", "camera")
    poses = read_poses(cam_dir / "groundtruth.txt")
    world = WorldState(load_record(layout.record))
    try:
        for k in (0, len(poses.stamps) - 1):
            stamp = poses.stamps[k]
            world.pose(world.step_of(round(float(stamp) * 1e9)))
            p, q = world.engine.camera_pose("uav1", "camera")
            assert np.allclose(p, poses.positions_xyz[k], atol=1e-8)
            assert np.allclose(quat_to_matrix(q), quat_to_matrix(poses.quats_wxyz[k]), atol=1e-8)
            # The simulator's own renderer at the re-posed state draws the recorded mask.
            frame = world.engine.render("uav1", "camera", rgb=False, depth=False, instance=True)
            recorded_mask = cv2.imread(str(cam_dir / "instance" / f"{stamp}.png"), -1)
            assert frame.instance is not None
            assert np.array_equal(frame.instance, recorded_mask)
        shapes = world.shapes()
    finally:
        world.close()
    ids = {s.instance_id for s in shapes}
    # Every instance of the run is drawn, people and flying objects included, by geom only.
    recorded_ids = {int(i) for i in np.unique(recorded_mask)} - {0}
    assert recorded_ids <= ids
    assert all(len(s.faces) > 0 and s.vertices_xyz.shape[1] == 3 for s in shapes)
    assert any(s.texture_rgb is not None for s in shapes)  # the simulator's textures come along
