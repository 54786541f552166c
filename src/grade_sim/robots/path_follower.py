"""The built-in waypoint follower of `motion.mode: path` (data generation without a controller).

The desired trajectory is analytic: at each waypoint the robot turns on the spot to face the next
one, then flies a straight segment with a trapezoidal speed profile. The joint velocity command is
the trajectory's velocity plus a proportional correction, so the motion goes through the physics
(true IMU readings) while staying within centimetres of the path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from grade_common.types import FloatArray
from grade_sim.robots.model import RobotModel

ACCEL_MPS2 = 1.0
POSITION_GAIN = 4.0


@dataclass(frozen=True)
class _Segment:
    t0: float
    kind: str  # "turn" or "move"
    start: FloatArray  # (x, y, z, yaw)
    end: FloatArray
    duration: float


class PathFollower:
    """Time-parameterised path through waypoints (x, y, z); yaw faces the direction of travel."""

    def __init__(
        self,
        model: RobotModel,
        start_xyz: FloatArray,
        start_yaw: float,
        waypoints: list[FloatArray],
        speed_mps: float,
        yaw_rate_rps: float,
        loop: bool,
    ) -> None:
        self._model = model
        self._speed = speed_mps
        self._yaw_rate = yaw_rate_rps
        self._segments: list[_Segment] = []
        state = np.array([*start_xyz, start_yaw], dtype=np.float64)
        targets = list(waypoints) + ([start_xyz] if loop else [])
        t = 0.0
        for wp in targets:
            delta = np.asarray(wp, dtype=np.float64) - state[:3]
            if np.linalg.norm(delta[:2]) > 1e-6:
                want = math.atan2(delta[1], delta[0])
                yaw_to = state[3] + math.remainder(want - state[3], 2 * math.pi)
                turn = abs(yaw_to - state[3]) / self._yaw_rate
                if turn > 1e-6:
                    end = state.copy()
                    end[3] = yaw_to
                    self._segments.append(_Segment(t, "turn", state, end, turn))
                    t += turn
                    state = end
            dist = float(np.linalg.norm(delta))
            if dist > 1e-6:
                end = state.copy()
                end[:3] = wp
                dur = self._move_duration(dist)
                self._segments.append(_Segment(t, "move", state, end, dur))
                t += dur
                state = end
        self._period = t
        self._loop = loop and t > 0
        self._final = state

    def _move_duration(self, dist: float) -> float:
        v, a = self._speed, ACCEL_MPS2
        if dist < v * v / a:  # triangular profile
            return 2 * math.sqrt(dist / a)
        return dist / v + v / a

    def _profile(self, dist: float, duration: float, tau: float) -> tuple[float, float]:
        """Fraction travelled and speed along a segment at time tau."""
        v, a = self._speed, ACCEL_MPS2
        t_acc = min(v / a, duration / 2)
        v_peak = a * t_acc
        if tau < t_acc:
            s, sd = 0.5 * a * tau * tau, a * tau
        elif tau < duration - t_acc:
            s, sd = 0.5 * a * t_acc * t_acc + v_peak * (tau - t_acc), v_peak
        else:
            r = max(duration - tau, 0.0)
            s, sd = dist - 0.5 * a * r * r, a * r
        return min(s / dist, 1.0), sd

    @property
    def period_s(self) -> float:
        return self._period

    def desired(self, t_s: float) -> tuple[FloatArray, FloatArray]:
        """Desired (x, y, z, yaw) and its time derivative at time t_s."""
        if not self._segments:
            return self._final.copy(), np.zeros(4)
        if self._loop:
            t_s = math.fmod(t_s, self._period)
        for seg in self._segments:
            if t_s < seg.t0 + seg.duration:
                tau = max(t_s - seg.t0, 0.0)
                delta = seg.end - seg.start
                if seg.kind == "turn":
                    frac = tau / seg.duration
                    rate = delta[3] / seg.duration
                    return seg.start + delta * frac, np.array([0.0, 0.0, 0.0, rate])
                dist = float(np.linalg.norm(delta[:3]))
                frac, speed = self._profile(dist, seg.duration, tau)
                vel = np.zeros(4)
                vel[:3] = delta[:3] / dist * speed
                return seg.start + delta * frac, vel
        return self._final.copy(), np.zeros(4)

    def joint_trajectory(
        self, t_s: float, joint_names: tuple[str, ...], dt_s: float
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Exact joint positions, velocities and accelerations of the path at t_s (teleport).

        Accelerations are central differences of the analytic velocity over dt_s, exact on the
        piecewise-constant acceleration of the trapezoidal profile away from its corners.
        """
        pose, vel = self.desired(t_s)
        _, vel_after = self.desired(t_s + dt_s / 2)
        _, vel_before = self.desired(max(t_s - dt_s / 2, 0.0))
        acc = (vel_after - vel_before) / (dt_s if t_s >= dt_s / 2 else dt_s / 2 + t_s)
        index = {"x": 0, "y": 1, "z": 2, "yaw": 3}
        q = np.array([pose[index[j]] if j in index else 0.0 for j in joint_names])
        qd = np.array([vel[index[j]] if j in index else 0.0 for j in joint_names])
        qdd = np.array([acc[index[j]] if j in index else 0.0 for j in joint_names])
        return q, qd, qdd

    def command(self, t_s: float, joint_positions: dict[str, float]) -> dict[str, float]:
        """Joint velocity commands tracking the path at t_s from the current joint positions."""
        pose, vel = self.desired(t_s)
        cmd: dict[str, float] = {}
        for k, name in enumerate(("x", "y", "z", "yaw")):
            if name not in joint_positions:
                continue
            err = pose[k] - joint_positions[name]
            if name == "yaw":
                err = math.remainder(err, 2 * math.pi)
            cmd[name] = float(vel[k] + POSITION_GAIN * err)
        for name in ("roll", "pitch", "camera_yaw"):
            if name in joint_positions:
                cmd[name] = -POSITION_GAIN * joint_positions[name]
        return cmd
