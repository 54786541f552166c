"""Skinned people in the MuJoCo engine: drawn in RGB, depth and instance masks, seen by LiDAR
(the lofted mannequins and the MakeHuman bodies)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from scipy.spatial import cKDTree

from grade_common.rotations import quat_to_matrix
from grade_people.body_mesh import body_mesh, skin_vertices
from grade_people.skeleton import rest_positions
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import IMAGE_STREAMS, scenario_from_mapping
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.engine.protocol import MeshOwner
from grade_sim.scene import Scene, build_scene

STEP = 400


def _scenario(robot: dict[str, Any], body: str) -> dict[str, Any]:
    return {
        "seed": 11,
        "duration_s": 4.0,
        "environment": {"procedural": {"rooms_x": 1, "rooms_y": 1, "furniture_per_room": [0, 0]}},
        "people": {"count": 1, "body": body},
        "flying_objects": {"count": 0},
        "lights": {"shadows": False},
        # No antialiasing: the test compares where RGB changes with the exact mask.
        "render": {"supersample": 1.0, "fxaa": False},
        "robots": [
            {"name": "uav1", "cameras": [{"name": "camera", "width": 160, "height": 120}], **robot}
        ],
    }


@pytest.fixture(scope="module", params=["skinned", "makehuman"])
def facing(request: pytest.FixtureRequest) -> Iterator[tuple[Scene, MujocoEngine]]:
    """An engine whose robot camera looks at the one person, 2.2 m away, at step STEP."""
    body = str(request.param)
    probe = build_scene(scenario_from_mapping(_scenario({}, body)))
    xy = probe.group(People).timelines[0].position_xy[STEP]
    heading = float(probe.group(People).timelines[0].heading_rad[STEP])
    cam = xy + 2.2 * np.array([math.cos(heading), math.sin(heading)])
    robot = {
        "start_xyz": [float(cam[0]), float(cam[1]), 1.0],
        "start_yaw": float(math.remainder(heading + math.pi, 2 * math.pi)),
    }
    scene = build_scene(scenario_from_mapping(_scenario(robot, body)))
    engine = MujocoEngine(scene)
    engine.set_actor_poses(*scene.actor_body_poses(STEP))
    engine.step()
    yield scene, engine
    engine.close()


def test_the_skin_is_drawn_and_its_mask_is_exactly_where_it_is_drawn(
    facing: tuple[Scene, MujocoEngine],
) -> None:
    scene, engine = facing
    person = scene.group(People).specs[0].instance_id
    seen = engine.render("uav1", "camera", IMAGE_STREAMS)
    engine.set_hidden_instances(frozenset({person}))
    hidden = engine.render("uav1", "camera", IMAGE_STREAMS)
    engine.set_hidden_instances(frozenset())
    assert seen.instance is not None
    assert seen.rgb is not None
    assert seen.depth_m is not None
    assert hidden.instance is not None
    assert hidden.rgb is not None
    assert hidden.depth_m is not None
    mask = seen.instance == person
    assert mask.sum() > 400  # a person 2.2 m away fills a good part of a 160x120 image
    assert not (hidden.instance == person).any()
    changed = np.any(seen.rgb != hidden.rgb, axis=2)
    # Without shadows, hiding the person changes exactly the pixels the mask says are theirs.
    iou = (mask & changed).sum() / (mask | changed).sum()
    print(f"\nmask/drawn IoU {iou:.4f} over {mask.sum()} px")
    assert iou > 0.97
    behind = hidden.depth_m[mask]
    assert np.all((seen.depth_m[mask] < behind + 1e-6) | (behind == 0))
    assert 1.5 < float(np.median(seen.depth_m[mask])) < 2.6


def test_numpy_skinning_matches_mujocos_skin(facing: tuple[Scene, MujocoEngine]) -> None:
    import mujoco

    scene, engine = facing
    person = scene.group(People).specs[0]
    assert person.body is not None
    assert person.clothing is not None
    vscene = mujoco.MjvScene(engine.model, maxgeom=1000)
    mujoco.mjv_updateScene(
        engine.model,
        engine.data,
        mujoco.MjvOption(),
        None,
        mujoco.MjvCamera(),
        mujoco.mjtCatBit.mjCAT_ALL.value,
        vscene,
    )
    drawn = np.asarray(vscene.skinvert[: 3 * engine.model.skin_vertnum[0]]).reshape(-1, 3)
    pos, rot = scene.group(People).skeleton_poses(STEP)
    mesh = body_mesh(person.body, person.clothing)
    ours = skin_vertices(mesh, rest_positions(person.body), pos[0], rot[0])
    np.testing.assert_allclose(drawn, ours, atol=2e-5)  # MuJoCo skins in float32


def test_lidar_meshes_follow_the_skin_within_a_few_centimetres(
    facing: tuple[Scene, MujocoEngine],
) -> None:
    scene, engine = facing
    person = scene.group(People).specs[0]
    assert person.body is not None
    assert person.clothing is not None
    pieces = [m for m in engine.ray_meshes(12) if m.owner is MeshOwner.ACTOR]
    assert {m.instance_id for m in pieces} == {person.instance_id}
    pos, quat = scene.actor_body_poses(STEP)
    world = []
    for m in pieces:
        r = quat_to_matrix(quat[m.actor_index])
        world.append(m.triangles.reshape(-1, 3) @ r.T + pos[m.actor_index])
    rigid = np.concatenate(world)
    joint_pos, joint_rot = scene.group(People).skeleton_poses(STEP)
    mesh = body_mesh(person.body, person.clothing)
    skin = skin_vertices(mesh, rest_positions(person.body), joint_pos[0], joint_rot[0])
    assert len(rigid) == 3 * len(mesh.faces)  # every triangle is in exactly one piece
    dist, _ = cKDTree(skin).query(rigid)
    assert np.percentile(dist, 95) < 0.02
    assert dist.max() < 0.08
