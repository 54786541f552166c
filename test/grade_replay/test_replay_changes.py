"""Replay changes: parsing, validation, and that no change alters the seeded scene draw."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from grade_replay.changes import (
    CameraChange,
    LidarChange,
    ReplayChanges,
    apply_to_scenario,
    apply_to_scene,
    check_draw_inputs_unchanged,
    hidden_instance_ids,
    parse_camera_change,
    parse_lidar_change,
    parse_rate,
    parse_rgb,
)
from grade_replay.errors import ReplayConfigError
from grade_sim.actors.flying import FlyingObjects
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import Scenario, Stream
from grade_sim.scene import Scene, build_scene
from scenario_kit import small_scenario


def _scenario(**overrides: Any) -> Scenario:
    return small_scenario(**{"seed": 11, "lights": {"count": 2}, **overrides})


def _assert_same_draw(a: Scene, b: Scene) -> None:
    assert a.n_steps == b.n_steps
    assert a.instances == b.instances
    assert a.world.boxes == b.world.boxes
    for ta, tb in zip(a.group(People).timelines, b.group(People).timelines, strict=True):
        for field in ("position_xy", "heading_rad", "phase_rad", "amplitude"):
            np.testing.assert_array_equal(getattr(ta, field), getattr(tb, field))
    for oa, ob in zip(
        a.group(FlyingObjects).timelines, b.group(FlyingObjects).timelines, strict=True
    ):
        np.testing.assert_array_equal(oa.position_xyz, ob.position_xyz)
        np.testing.assert_array_equal(oa.quat_wxyz, ob.quat_wxyz)
    for ra, rb in zip(a.robots, b.robots, strict=True):
        np.testing.assert_array_equal(ra.start_xyz, rb.start_xyz)
        assert ra.start_yaw == rb.start_yaw
        assert ra.instance_id == rb.instance_id
    for k in (0, a.n_steps // 2, a.n_steps - 1):
        pa, qa = a.actor_body_poses(k)
        pb, qb = b.actor_body_poses(k)
        np.testing.assert_array_equal(pa, pb)
        np.testing.assert_array_equal(qa, qb)


def test_parse_camera_change_reads_yaml_values_streams_and_mounts() -> None:
    change = parse_camera_change("uav1/wide:width=320,hfov_deg=100.5,streams=rgb+depth,mount_z=0.1")
    assert change == CameraChange(
        "uav1",
        "wide",
        (("width", 320), ("hfov_deg", 100.5), ("streams", ["rgb", "depth"]), ("mount_z", 0.1)),
    )
    assert parse_camera_change("uav1/camera").values == ()
    assert parse_rgb("1,0.5,0.25") == (1.0, 0.5, 0.25)
    assert parse_rate("imu_hz=100") == ("imu_hz", 100.0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: parse_camera_change("camera:width=3"), r"expected ROBOT/CAMERA"),
        (lambda: parse_camera_change("uav1/c:width"), r"'width' is not key=value"),
        (
            lambda: parse_camera_change("uav1/..:width=32,height=32"),
            r"CAMERA '\.\.' is not a valid ROS name",
        ),
        (lambda: parse_camera_change("../x/cam:width=32"), r"ROBOT '\.\.' is not a valid"),
        (lambda: parse_camera_change("uav1/a b"), r"CAMERA 'a b' is not a valid ROS name"),
        (lambda: parse_rgb("1,2"), r"three numbers"),
        (lambda: parse_rate("imu_hz"), r"expected NAME=HZ"),
        (lambda: ReplayChanges(light_scale=-1.0), r"light_scale: -1.0 is out of range"),
        (lambda: ReplayChanges(light_color_rgb=(1.0, 1.0, -2.0)), r"light_color"),
        (lambda: ReplayChanges(rates_hz=(("gps_hz", 5.0),)), r"rate 'gps_hz' is unknown"),
        (
            lambda: ReplayChanges(rates_hz=(("imu_hz", 0.0),)),
            r"imu_hz: 0.0 Hz must be a positive number",
        ),
        (lambda: ReplayChanges(noise_seed=-1), r"noise_seed"),
        (
            lambda: ReplayChanges(cameras=(CameraChange("uav1", "c", (("zoom", 2),)),)),
            r"key 'zoom' is unknown",
        ),
        (lambda: parse_lidar_change("lidar:preset=vlp16"), r"expected ROBOT/LIDAR"),
        (lambda: parse_lidar_change("uav1/a b"), r"LIDAR 'a b' is not a valid ROS name"),
        (
            lambda: ReplayChanges(lidars=(LidarChange("uav1", "l", (("width", 2),)),)),
            r"lidar uav1/l: key 'width' is unknown; allowed: preset",
        ),
    ],
)
def test_bad_change_values_are_rejected(call: Any, match: str) -> None:
    with pytest.raises(ReplayConfigError, match=match):
        call()


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        (
            ReplayChanges(rates_hz=(("physics_hz", 500.0),)),
            r"rates.physics_hz: 500.0 Hz differs from the recorded 240.0 Hz",
        ),
        (ReplayChanges(rates_hz=(("imu_hz", 1000.0),)), r"rates.imu_hz: 1000.0 Hz exceeds"),
        (
            ReplayChanges(remove_cameras=("uav1/nope",)),
            r"--remove-camera uav1/nope: camera 'nope' is unknown on robot 'uav1'; "
            r"cameras: \['camera'",
        ),
        (
            ReplayChanges(cameras=(CameraChange("ugv", "c", ()),)),
            r"robot 'ugv' is not in the recorded run; robots: \['uav1'\]",
        ),
        (
            ReplayChanges(cameras=(CameraChange("uav1", "camera", (("width", 5),)),)),
            r"robots\[0\].cameras\[0\].width: value 5 is out of range",
        ),
        (ReplayChanges(cameras=(CameraChange("uav1", "camera", (("rate_hz", 300),)),)), r"rate_hz"),
        (
            ReplayChanges(lidars=(LidarChange("uav1", "lidar", (("preset", "hdl65"),)),)),
            r"robots\[0\]\.lidars\[0\]\.preset: unknown preset 'hdl65'",
        ),
        (
            ReplayChanges(lidars=(LidarChange("uav1", "camera", ()),)),
            r"lidars: names must differ",
        ),
        (
            ReplayChanges(remove_lidars=("uav1/lidar",)),
            r"--remove-lidar uav1/lidar: lidar 'lidar' is unknown on robot 'uav1'; lidars: \[\]",
        ),
    ],
)
def test_apply_to_scenario_rejects_what_a_replay_cannot_do(
    changes: ReplayChanges, match: str
) -> None:
    with pytest.raises(ReplayConfigError, match=match):
        apply_to_scenario(_scenario(), changes)


def test_camera_and_rate_changes_leave_the_scene_draw_unchanged() -> None:
    recorded = _scenario()
    changes = ReplayChanges(
        cameras=(
            CameraChange("uav1", "camera", (("width", 80), ("height", 60), ("far_m", 4.0))),
            CameraChange(
                "uav1",
                "wide",
                (("hfov_deg", 120), ("rate_hz", 20), ("mount_yaw", 0.5), ("streams", ["rgb"])),
            ),
        ),
        rates_hz=(("imu_hz", 100.0), ("physics_hz", 240.0)),
    )
    replayed = apply_to_scenario(recorded, changes)
    cams = {c.name: c for c in replayed.robots[0].cameras}
    assert (cams["camera"].width, cams["camera"].height, cams["camera"].far_m) == (80, 60, 4.0)
    assert cams["wide"].streams == (Stream.RGB,)
    assert cams["wide"].mount.rpy == (0.0, 0.0, 0.5)
    assert cams["wide"].mount.xyz == (0.12, 0.0, 0.0)
    assert replayed.rates.imu_hz == 100.0
    assert replayed.seed == recorded.seed
    drawn = build_scene(recorded)
    # The sensor-side changes alone do not change the draw: drawing from them gives the same scene.
    _assert_same_draw(drawn, build_scene(replayed))
    scene = apply_to_scene(drawn, replayed, changes)
    _assert_same_draw(drawn, scene)
    assert [c.name for c in scene.robots[0].model.config.cameras] == ["camera", "wide"]
    assert scene.scenario is replayed


def test_light_changes_apply_after_the_draw() -> None:
    recorded = _scenario()
    drawn = build_scene(recorded)
    changes = ReplayChanges(light_scale=0.5, light_color_rgb=(1.0, 0.5, 0.0))
    scene = apply_to_scene(drawn, apply_to_scenario(recorded, changes), changes)
    assert len(scene.world.lights) == 2
    for before, after in zip(drawn.world.lights, scene.world.lights, strict=True):
        assert after.position_xyz == before.position_xyz
        np.testing.assert_allclose(
            after.diffuse_rgb, np.array(before.diffuse_rgb) * 0.5 * np.array([1.0, 0.5, 0.0])
        )
    _assert_same_draw(drawn, scene)


def test_draw_guard_names_the_changed_field() -> None:
    with pytest.raises(ReplayConfigError, match=r"^seed: a replay must keep the recorded value 11"):
        check_draw_inputs_unchanged(_scenario(), _scenario(seed=12))
    with pytest.raises(ReplayConfigError, match=r"robots\[0\].start_xyz"):
        check_draw_inputs_unchanged(
            _scenario(),
            _scenario(robots=[{"name": "uav1", "start_xyz": [1.0, 1.0, 1.0]}]),
        )


def test_hidden_instance_ids_by_class_and_id() -> None:
    scene = build_scene(_scenario())
    people = {p.instance_id for p in scene.group(People).specs}
    objects = {o.instance_id for o in scene.group(FlyingObjects).specs}
    assert hidden_instance_ids(scene, ReplayChanges(hide_classes=("person",))) == people
    assert hidden_instance_ids(scene, ReplayChanges(hide_classes=("object",))) == objects
    one = min(people)
    assert hidden_instance_ids(scene, ReplayChanges(hide_ids=(one,))) == {one}
    with pytest.raises(ReplayConfigError, match=r"--hide 'dog': no instance of this class.*person"):
        hidden_instance_ids(scene, ReplayChanges(hide_classes=("dog",)))
    with pytest.raises(ReplayConfigError, match=r"--hide-id 999: no such instance id"):
        hidden_instance_ids(scene, ReplayChanges(hide_ids=(999,)))


def test_to_mapping_lists_only_changes() -> None:
    assert ReplayChanges().to_mapping() == {}
    mapping = ReplayChanges(
        hide_classes=("person",), noise_seed=3, rates_hz=(("imu_hz", 100.0),)
    ).to_mapping()
    assert mapping == {"hide_classes": ["person"], "noise_seed": 3, "rates_hz": {"imu_hz": 100.0}}


def test_lidar_change_adds_a_lidar_and_leaves_the_scene_draw_unchanged() -> None:
    change = parse_lidar_change(
        "uav1/lidar:preset=custom,kind=rotating,elevations_deg=-10+0+10,columns=90,fov_deg=360,"
        "rate_hz=10,range_min_m=0.1,range_max_m=30,beam_divergence_mrad=3,mount_z=0.3"
    )
    assert ("elevations_deg", [-10, 0, 10]) in change.values
    recorded = _scenario()
    replayed = apply_to_scenario(recorded, ReplayChanges(lidars=(change,)))
    (lidar,) = replayed.robots[0].lidars
    assert lidar.name == "lidar"
    assert lidar.resolved().elevations_deg == (-10.0, 0.0, 10.0)
    assert lidar.beam_divergence_mrad == 3.0
    assert lidar.mount.xyz == (0.0, 0.0, 0.3)
    _assert_same_draw(build_scene(recorded), build_scene(replayed))
    # ... and removing it again gives back the recorded sensor set.
    back = apply_to_scenario(replayed, ReplayChanges(remove_lidars=("uav1/lidar",)))
    assert back.robots[0].lidars == ()
