"""Executing joint paths in physics: joint-position control of the Panda and its gripper.

The arm's torque motors get tau = bias + Kp (q_ref - q) - Kd dq, where `bias` is MuJoCo's
gravity and Coriolis torque for the current state (qfrc_bias) and q_ref moves along the path
at no more than `max_speed_rad_s` per joint; the torque is clipped to the motors' ranges. The
fingers are position servos: open = 4 cm each, closed = 0 (the 20 N force limit then holds
the object). Contacts of the arm with the table and with objects other than the held one are
counted while moving: an unplanned touch is a collision.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from grade_common.types import FloatArray
from grade_scenes.pick.record import BagRecorder
from grade_scenes.pick.world import FINGER_OPEN_M, PickWorld

KP = np.array([600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 60.0])
KD = np.array([60.0, 60.0, 60.0, 60.0, 25.0, 15.0, 6.0])


@dataclass(frozen=True)
class TimedTrajectory:
    """A joint trajectory as a JointTrajectory command gives it: waypoints reached at times
    after `start_s`, starting from where the arm was (`q_start`); linear in between, the last
    waypoint held afterwards."""

    start_s: float
    q_start: FloatArray  # (7,)
    times_s: FloatArray  # (n,) increasing, > 0
    positions: FloatArray  # (n, 7)

    def at(self, t_s: float) -> FloatArray:
        """The reference configuration at simulated time t_s."""
        times = np.concatenate([[0.0], self.times_s])
        points = np.vstack([self.q_start, self.positions])
        tau = float(np.clip(t_s - self.start_s, 0.0, times[-1]))
        out: FloatArray = np.array([np.interp(tau, times, points[:, j]) for j in range(7)])
        return out


@dataclass
class Executor:
    """Steps the world, keeping the arm on its reference and the gripper at its command."""

    world: PickWorld
    max_speed_rad_s: float
    q_ref: FloatArray = field(init=False)
    gripper_opening_m: float = 2 * FINGER_OPEN_M  # commanded distance between the pads
    unplanned_contacts: int = 0
    held_object: int | None = None  # object index whose contacts with the gripper are expected
    recorder: BagRecorder | None = None  # the run's bag: joint states, commands

    def __post_init__(self) -> None:
        self.q_ref = self.world.data.qpos[self.world.arm_qpos].copy()
        lo = self.world.model.actuator_ctrlrange[self.world.arm_actuators, 0]
        hi = self.world.model.actuator_ctrlrange[self.world.arm_actuators, 1]
        self._limits = (lo.copy(), hi.copy())

    @property
    def time_s(self) -> float:
        return float(self.world.data.time)

    def _control(self) -> None:
        w, d = self.world, self.world.data
        q = d.qpos[w.arm_qpos]
        dq = d.qvel[w.arm_dofs]
        tau = d.qfrc_bias[w.arm_dofs] + KP * (self.q_ref - q) - KD * dq
        d.ctrl[w.arm_actuators] = np.clip(tau, *self._limits)
        finger = float(np.clip(self.gripper_opening_m / 2, 0.0, FINGER_OPEN_M))
        d.ctrl[w.finger_actuators] = [finger, -finger]

    def _count_contacts(self) -> None:
        w, d = self.world, self.world.data
        allowed = (
            set(w.object_geoms[self.held_object : self.held_object + 1])
            if self.held_object is not None
            else set()
        )
        for c in d.contact[: d.ncon]:
            g1, g2 = int(c.geom1), int(c.geom2)
            r1, r2 = g1 in w.robot_geoms, g2 in w.robot_geoms
            if r1 == r2:
                continue
            other = g2 if r1 else g1
            if other not in allowed:
                self.unplanned_contacts += 1
                return

    @property
    def stamp_ns(self) -> int:
        return round(float(self.world.data.time) * 1e9)

    def step(self, count: int = 1, watch: bool = True) -> None:
        w, d = self.world, self.world.data
        for _ in range(count):
            self._control()
            mujoco.mj_step(w.model, d)
            if watch:
                self._count_contacts()
            if self.recorder is not None and self.recorder.due(self.stamp_ns):
                self.record_state()

    def record_state(self) -> None:
        """Write the joint states of this instant to the recorder."""
        assert self.recorder is not None
        w, d = self.world, self.world.data
        joints = np.concatenate([w.arm_qpos, w.finger_qpos])
        dofs = np.concatenate([w.arm_dofs, w.finger_dofs])
        self.recorder.joint_states(self.stamp_ns, d.qpos[joints], d.qvel[dofs])

    def wait(self, seconds: float, watch: bool = False) -> None:
        self.step(max(1, round(seconds / self.world.model.opt.timestep)), watch=watch)

    def follow(self, path: FloatArray, watch: bool = True) -> None:
        """Move the reference along `path` (configurations), then let the arm settle.

        The path is timed by its length in the max-joint norm with a smooth start and stop
        (s = 3 tau^2 - 2 tau^3, peak speed `max_speed_rad_s`): no velocity jumps that would
        shake a held object out of the fingers.
        """
        dt = self.world.model.opt.timestep
        path = np.vstack([self.q_ref, path])
        lengths = np.max(np.abs(np.diff(path, axis=0)), axis=1)
        arc = np.concatenate([[0.0], np.cumsum(lengths)])
        total = float(arc[-1])
        if total > 1e-9:
            duration = 1.5 * total / self.max_speed_rad_s
            steps = max(1, int(np.ceil(duration / dt)))
            if self.recorder is not None:
                self._record_trajectory(path, arc, steps * dt)
            for k in range(1, steps + 1):
                tau = k / steps
                s = total * (3 * tau**2 - 2 * tau**3)
                i = min(int(np.searchsorted(arc, s, side="right")) - 1, len(path) - 2)
                frac = (s - arc[i]) / max(float(lengths[i]), 1e-12)
                self.q_ref = path[i] + min(frac, 1.0) * (path[i + 1] - path[i])
                self.step(watch=watch)
            self.q_ref = path[-1].copy()
        self.wait(0.3, watch=watch)

    def _record_trajectory(self, path: FloatArray, arc: FloatArray, duration_s: float) -> None:
        """The path as the JointTrajectory command it is: at most 50 waypoints, each at the
        time the smooth timing reaches it."""
        assert self.recorder is not None
        keep = np.unique(np.linspace(0, len(path) - 1, min(len(path), 50)).round().astype(int))
        taus = np.linspace(0.0, 1.0, 2001)
        reached = np.interp(arc[keep] / arc[-1], 3 * taus**2 - 2 * taus**3, taus)
        self.recorder.trajectory(self.stamp_ns, path[keep], reached * duration_s)

    def set_gripper(self, open_: bool, seconds: float = 0.6) -> None:
        self.command_gripper(2 * FINGER_OPEN_M if open_ else 0.0)
        self.wait(seconds)

    def command_gripper(self, opening_m: float) -> None:
        """Set the commanded distance between the pads (0 = closed: squeeze with 20 N)."""
        self.gripper_opening_m = opening_m
        if self.recorder is not None:
            self.recorder.gripper(self.stamp_ns, opening_m)

    def pads_touch(self, geom: int) -> bool:
        """Whether both finger pads (or fingers) touch the given geom."""
        w, d = self.world, self.world.data
        model = w.model
        touching = set()
        for c in d.contact[: d.ncon]:
            g1, g2 = int(c.geom1), int(c.geom2)
            if geom not in (g1, g2):
                continue
            other = g2 if g1 == geom else g1
            name = model.geom(other).name
            if "finger1" in name:
                touching.add(1)
            elif "finger2" in name:
                touching.add(2)
        return touching == {1, 2}
