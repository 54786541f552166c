"""Perception in the loop on the head camera's rendered depth image: model-based 6D poses within
SceneReplica's ADD-S bound, model-free segments, both deterministic."""

from __future__ import annotations

import os
from pathlib import Path

import mujoco
import numpy as np
import pytest
import trimesh

from grade_eval.core.object_pose import adds_m
from grade_scenes.pick.camera import Cameras
from grade_scenes.pick.perception import (
    ModelBased,
    ModelFree,
    PerceptionConfig,
    Pipeline,
    make_perceiver,
)
from grade_scenes.pick.perception_sheet import draw_look
from grade_scenes.pick.world import HEAD_CAMERA, BinSpec, PickWorld, build_pick_world
from grade_scenes.reach.robot import HOME_Q

os.environ.setdefault("MUJOCO_GL", "egl")


def _world(scene: Path) -> PickWorld:
    world = build_pick_world(scene, 0.002, BinSpec())
    world.data.qpos[world.arm_qpos] = HOME_Q  # the arm at home: out of the head camera's view
    mujoco.mj_forward(world.model, world.data)
    return world


def _meshes(world: PickWorld) -> list[trimesh.Trimesh]:
    return [trimesh.load(m, force="mesh") for m in world.object_meshes]


@pytest.mark.slow
def test_model_based_poses_are_within_ten_percent_of_the_diameter(
    three_object_scene: Path,
) -> None:
    world = _world(three_object_scene)
    perceiver = make_perceiver(
        Pipeline.MODEL_BASED, world, _meshes(world), PerceptionConfig(), np.random.default_rng(0)
    )
    assert isinstance(perceiver, ModelBased)
    try:
        look = perceiver.look(world, [True, True, True])
        again = perceiver.look(world, [True, True, True])  # reuses the unchanged clusters' fits
    finally:
        perceiver.close()
    assert look.segments is not None
    assert len(look.segments.clusters) == 3
    assert sorted(look.estimates) == [0, 1, 2]  # every object in view is found
    for k, estimate in look.estimates.items():
        model = perceiver.models[k]
        error = adds_m(model.points, world.object_pose(k), estimate.transform_world_object)
        assert error < 0.1 * model.diameter_m, (world.object_names[k], error)
        assert error < 0.005  # on a noise-free depth image the fit is millimetre-close
    # each object got its own cluster, and a second look sees the same
    assert len({e.cluster for e in look.estimates.values()}) == 3
    for k, estimate in again.estimates.items():
        assert estimate.transform_world_object.tobytes() == (
            look.estimates[k].transform_world_object.tobytes()
        )


@pytest.mark.slow
def test_same_seed_same_model_based_estimates(three_object_scene: Path) -> None:
    poses = []
    for _ in range(2):
        world = _world(three_object_scene)
        perceiver = make_perceiver(
            Pipeline.MODEL_BASED,
            world,
            _meshes(world),
            PerceptionConfig(),
            np.random.default_rng(4),
        )
        try:
            look = perceiver.look(world, [True, True, False])  # the third is not looked for
        finally:
            perceiver.close()
        assert sorted(look.estimates) == [0, 1]
        poses.append(b"".join(e.transform_world_object.tobytes() for e in look.estimates.values()))
    assert poses[0] == poses[1]


def test_model_free_segments_every_object_and_shapes_it_down_to_the_table(
    three_object_scene: Path,
) -> None:
    world = _world(three_object_scene)
    perceiver = make_perceiver(
        Pipeline.MODEL_FREE, world, [], PerceptionConfig(), np.random.default_rng(0)
    )
    assert isinstance(perceiver, ModelFree)
    cameras = Cameras(world, width=960, height=720)
    try:
        look = perceiver.look(world, [True, True, True])
        rgb = cameras.rgb(HEAD_CAMERA)
    finally:
        perceiver.close()
        cameras.close()
    assert sorted(look.estimates) == [0, 1, 2]
    # the contact sheet's panel: segments tinted over the head image, the rest untouched
    assert look.segments is not None
    drawn = draw_look(rgb, look, world.object_names, 0, [], {})
    assert drawn.shape == rgb.shape
    changed = np.any(drawn != rgb, axis=2).ravel()
    in_segments = np.concatenate([look.segments.pixels[c] for c in look.segments.clusters])
    assert changed[in_segments].mean() > 0.9
    assert changed.mean() < 0.1
    top = world.table.top_height_m
    for k, estimate in look.estimates.items():
        assert estimate.fit is None
        assert estimate.surface_world is not None
        _, normals = estimate.surface_world
        assert np.allclose(np.linalg.norm(normals, axis=1), 1.0)
        hull = estimate.hull.copy().apply_transform(estimate.transform_world_object)
        truth = world.object_hull(k).apply_transform(world.object_pose(k))
        # the hull reaches down to the table and spans the observed part of the object
        assert abs(hull.bounds[0, 2] - top) < 0.008
        assert abs(hull.bounds[1, 2] - truth.bounds[1, 2]) < 0.005
        centre_gap = np.linalg.norm(hull.bounds.mean(axis=0)[:2] - truth.bounds.mean(axis=0)[:2])
        assert centre_gap < 0.03, world.object_names[k]
