"""A new kind of actor is one module: a rolling ball, written here against the ActorGroup
protocol alone, is rendered, labelled, boxed, recorded and replayed exactly by the simulator,
with no change anywhere else."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from grade_common.types import FloatArray
from grade_replay.replay import RecordDriver
from grade_sim.actors.geometry import ActorGeometry, Box3D, InstanceInfo, RigidPart
from grade_sim.actors.group import ActorGroup, PlannedDefaults
from grade_sim.io.record import load_record, scene_from_record
from grade_sim.scene import Scene, build_scene
from grade_sim.sim.run import SimulatorSpec, run_scenario
from replay_kit import file_digests
from scenario_kit import small_scenario

AHEAD_M = 1.6  # the ball rolls this far in front of the robot
RADIUS_M = 0.3


@dataclass(frozen=True, kw_only=True)
class RollingBall(PlannedDefaults):
    """One ball rolling sideways across the view of a robot: position (n, 3) and wxyz
    quaternion (n, 4) at every physics step, spinning as it rolls. `PlannedDefaults` gives the
    protocol's methods for actors planned ahead (no shadow, no obstacle, no run state)."""

    name: str = "ball_0"
    instance_id: int = 0
    position_xyz: FloatArray = field(default_factory=lambda: np.zeros((1, 3)))
    quat_wxyz: FloatArray = field(default_factory=lambda: np.array([[1.0, 0.0, 0.0, 0.0]]))

    kind = "ball"

    @classmethod
    def in_front_of(cls, scene: Scene, instance_id: int) -> RollingBall:
        """A ball AHEAD_M in front of the first robot's planned pose, rolling left to right."""
        robot = scene.robots[0]
        assert robot.follower is not None
        dt = scene.scenario.physics_dt_s
        t = np.arange(scene.n_steps) * dt
        poses = [robot.follower.desired(max(0.0, s - scene.scenario.bootstrap_s))[0] for s in t]
        xyz = np.array([p[:3] for p in poses])
        yaw = np.array([p[3] for p in poses])
        forward = np.column_stack([np.cos(yaw), np.sin(yaw), np.zeros_like(yaw)])
        left = np.column_stack([-np.sin(yaw), np.cos(yaw), np.zeros_like(yaw)])
        sideways_m = 0.5 * np.sin(2.0 * t)  # across the view and back
        position = xyz + AHEAD_M * forward + sideways_m[:, None] * left
        rolled_rad = sideways_m / RADIUS_M  # rolling without slipping
        # About the forward axis, by the angle rolled (wxyz).
        half = rolled_rad[:, None] / 2
        quat = np.column_stack([np.cos(half), np.sin(half) * forward])
        return cls(instance_id=instance_id, position_xyz=position, quat_wxyz=quat)

    # -- the ActorGroup protocol -----------------------------------------------------------------
    def body_names(self) -> tuple[str, ...]:
        return (self.name,)

    def body_labels(self) -> tuple[str, ...]:
        return (f"ball {self.name}",)

    def instances(self) -> tuple[InstanceInfo, ...]:
        return (InstanceInfo(self.instance_id, self.name, "ball"),)

    def geometry(self) -> tuple[ActorGeometry, ...]:
        return (
            RigidPart(self.name, self.instance_id, "sphere", (RADIUS_M,), (0.9, 0.2, 0.1, 1.0)),
        )

    def poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        k = min(step, len(self.position_xyz) - 1)
        return self.position_xyz[k : k + 1], self.quat_wxyz[k : k + 1]

    def boxes(self, step: int, positions: FloatArray) -> list[Box3D]:
        return [Box3D(self.instance_id, positions[0].copy(), np.full(3, 2 * RADIUS_M), np.eye(3))]

    def record(self, n_steps: int) -> dict[str, np.ndarray]:
        return {
            f"ball/{self.name}/position_xyz": self.position_xyz[:n_steps],
            f"ball/{self.name}/quat_wxyz": self.quat_wxyz[:n_steps],
        }

    def replayed(self, recorded: Mapping[str, np.ndarray]) -> RollingBall:
        """The ball as recorded (not recomputed): the replay proves the record holds it."""
        return replace(
            self,
            position_xyz=recorded[f"ball/{self.name}/position_xyz"],
            quat_wxyz=recorded[f"ball/{self.name}/quat_wxyz"],
        )


def _with_ball(scene: Scene) -> Scene:
    return scene.with_group(RollingBall.in_front_of(scene, max(scene.instances) + 1))


@pytest.mark.slow
def test_a_ball_from_one_module_is_rendered_labelled_recorded_and_replayed(
    tmp_path: Path,
) -> None:
    scenario = small_scenario(duration_s=1.0, people={"count": 1}, flying_objects={"count": 0})
    scene = _with_ball(build_scene(scenario))
    ball = scene.groups[-1]
    assert isinstance(ball, ActorGroup)
    iid = ball.instances()[0].instance_id
    live = run_scenario(SimulatorSpec(scene), tmp_path / "live").path

    # Rendered and labelled: the ball's instance id covers pixels of the instance masks, and
    # its class is in the class table.
    cam = live / "gt" / "uav1" / "camera"
    masks = [cv2.imread(str(p), cv2.IMREAD_UNCHANGED) for p in sorted(cam.glob("instance/*.png"))]
    assert masks
    assert all((m == iid).sum() > 100 for m in masks)
    assert "ball" in (live / "gt" / "classes.yaml").read_text()
    assert f'"id": {iid}' in (cam / "boxes3d.jsonl").read_text()

    # Recorded: its arrays are in the record as it moved.
    record = load_record(live / "record.npz")
    np.testing.assert_array_equal(record.actors["ball/ball_0/position_xyz"], ball.position_xyz)

    # Replayed exactly from the record (the ball's poses come from the record, not recomputed).
    replayed_scene = scene_from_record(
        build_scene(record.scenario).with_group(RollingBall(name="ball_0", instance_id=iid)),
        record,
    )
    stop = threading.Event()
    driver = RecordDriver(record, teleport=True, stop_event=stop)
    spec = SimulatorSpec(replayed_scene, replay=driver, stop_event=stop)
    again = run_scenario(spec, tmp_path / "replay").path
    assert file_digests(live / "gt") == file_digests(again / "gt")
    with np.load(live / "record.npz") as a, np.load(again / "record.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_a_group_whose_instance_id_is_taken_is_refused() -> None:
    scene = build_scene(small_scenario())
    taken = next(iter(scene.instances))
    with pytest.raises(ValueError, match=f"instance id {taken} .* use ids from"):
        scene.with_group(RollingBall.in_front_of(scene, taken))
