"""The recorded world rebuilt for rendering: same camera poses, same instances, every geom posed."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from grade_common.rotations import quat_to_matrix
from grade_common.rundir import RunLayout
from grade_common.tum import read_poses
from grade_render.world_state import WorldState
from grade_sim.config.scenario import Stream
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
            frame = world.engine.render("uav1", "camera", frozenset({Stream.INSTANCE}))
            recorded_mask = cv2.imread(str(cam_dir / "instance" / f"{stamp}.png"), -1)
            assert frame.instance is not None
            assert np.array_equal(frame.instance, recorded_mask)
        shapes = world.shapes()
        skins = world.skins()
    finally:
        world.close()
    ids = {s.instance_id for s in shapes} | {s.instance_id for s in skins}
    # Every instance of the run is drawn: people as skins, flying objects and the rest as geoms.
    recorded_ids = {int(i) for i in np.unique(recorded_mask)} - {0}
    assert recorded_ids <= ids
    assert all(len(s.faces) > 0 and s.vertices_xyz.shape[1] == 3 for s in shapes)
    assert any(s.texture_rgb is not None for s in shapes)  # the simulator's textures come along


def test_motion_blur_plans_the_shutter_opening_from_earlier_recorded_steps(recorded: Path) -> None:
    from grade_render.render import plan_frames, select_frames
    from grade_render.settings import RenderSettings

    layout = RunLayout(recorded)
    settings = RenderSettings(frames="2", motion_blur_s=0.05)
    cams = select_frames(layout, settings)
    world = WorldState(load_record(layout.record))
    try:
        shapes = world.shapes()
        drawn = [s.geom_id for s in shapes]
        (plan,) = plan_frames(world, layout, settings, [(cams[0], cams[0].stamps[0])], drawn)
        world.pose(plan.step - 12)  # 0.05 s at 240 Hz
        open_pos, _ = world.geom_poses()
    finally:
        world.close()
    assert np.allclose(plan.open_geom_pos, open_pos[drawn])
    moving = np.linalg.norm(plan.geom_pos - plan.open_geom_pos, axis=1) > 1e-4
    objects = np.array(["object" in s.name for s in shapes])
    assert objects.any()
    assert moving[objects].all()  # the flying object moved during the shutter
    static = np.array(
        [
            s.instance_id in world.scene.instances
            and not any(k in s.name for k in ("person", "object", "uav1"))
            for s in shapes
        ]
    )
    assert static.sum() > 5
    assert not moving[static].any()  # walls, floor and furniture stay


def test_skins_are_what_the_simulator_draws(recorded: Path) -> None:
    import mujoco

    world = WorldState(load_record(RunLayout(recorded).record))
    try:
        skins = world.skins()
        assert [s.instance_id for s in skins] == [
            i for i, info in world.scene.instances.items() if info.label == "person"
        ]
        for step in (0, world.record.n_steps - 1):
            world.pose(step)
            scn = mujoco.MjvScene(world.model, maxgeom=2000)
            mujoco.mjv_updateScene(
                world.model, world.data, mujoco.MjvOption(), None, mujoco.MjvCamera(),
                mujoco.mjtCatBit.mjCAT_ALL, scn,
            )  # fmt: skip
            drawn = np.asarray(scn.skinvert, dtype=np.float64)
            for skin, verts in zip(skins, world.skin_vertices(step), strict=True):
                a, n = int(scn.skinvertadr[skin.skin_id]), int(scn.skinvertnum[skin.skin_id])
                assert np.allclose(verts, drawn[3 * a : 3 * (a + n)].reshape(-1, 3), atol=1e-5)
    finally:
        world.close()
    for skin in skins:
        assert skin.texcoord_uv.shape == (len(verts), 2)
        assert skin.faces.max() < len(skin.texcoord_uv)
        assert skin.texture_rgb is not None
        assert skin.texture_rgb.std() > 1
