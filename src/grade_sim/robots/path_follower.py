"""The built-in waypoint follower of `motion.mode: path` (data generation without a controller).

The desired trajectory is analytic: at each waypoint the robot turns on the spot to face the next
one, then flies a straight segment with a trapezoidal speed profile. A UAV flies level
(`motion.stabilised`, GRADE's "H" flight) or tilts as a multirotor must to accelerate: its thrust,
along the body's z axis, points along the path's acceleration plus gravity, the acceleration
averaged over `motion.tilt_response_s` (the attitude's response; the profile's own acceleration
jumps at the segment ends). The joint velocity command is
the trajectory's velocity plus a proportional correction, so the motion goes through the physics
(true IMU readings) while staying within centimetres of the path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from grade_common.types import FloatArray
from grade_sim.config.scenario import RobotKind
from grade_sim.robots.model import ROLL_PITCH_LIMIT_RAD, RobotModel

ACCEL_MPS2 = 1.0
POSITION_GAIN = 4.0
GRAVITY_MPS2 = 9.81


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
        motion = model.config.motion
        tilts = model.config.type is RobotKind.UAV and not motion.stabilised
        # Seconds over which the tilt averages the path's acceleration; None: level flight.
        self._tilt_window_s = motion.tilt_response_s if tilts else None
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
        if self._tilt_window_s is not None:
            # Roll and pitch by central differences of the (smooth) tilt over dt_s.
            before, now, after = (self.tilt(max(t_s + s * dt_s, 0.0)) for s in (-1, 0, 1))
            for j, name in enumerate(joint_names):
                if name in now:
                    q[j] = now[name]
                    qd[j] = (after[name] - before[name]) / (2 * dt_s)
                    qdd[j] = (after[name] - 2 * now[name] + before[name]) / dt_s**2
        return q, qd, qdd

    def tilt(self, t_s: float) -> dict[str, float]:
        """The roll and pitch (rad) that point an unstabilised UAV's thrust along the path's
        acceleration (averaged over the tilt response) plus gravity at t_s; level when
        stabilised. Body orientation Rz(yaw) Ry(pitch) Rx(roll): thrust along the body z is
        (sin(pitch) cos(roll), -sin(roll), cos(pitch) cos(roll)) in the heading frame."""
        if self._tilt_window_s is None:
            return {"roll": 0.0, "pitch": 0.0}
        half = self._tilt_window_s / 2
        _, vel_after = self.desired(t_s + half)
        _, vel_before = self.desired(max(t_s - half, 0.0))
        acc = (vel_after[:3] - vel_before[:3]) / (t_s + half - max(t_s - half, 0.0))
        yaw = float(self.desired(t_s)[0][3])
        forward = math.cos(yaw) * acc[0] + math.sin(yaw) * acc[1]
        left = -math.sin(yaw) * acc[0] + math.cos(yaw) * acc[1]
        up = GRAVITY_MPS2 + float(acc[2])
        thrust = math.sqrt(forward**2 + left**2 + up**2)
        limit = ROLL_PITCH_LIMIT_RAD / 2  # within the joints' range, as a flight controller keeps
        pitch = float(np.clip(math.atan2(forward, up), -limit, limit))
        roll = float(np.clip(-math.asin(left / thrust), -limit, limit))
        return {"roll": roll, "pitch": pitch}

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
        if self._tilt_window_s is not None:
            # Track the tilt: its rate (a forward difference) plus the proportional correction.
            step_s = 1e-3
            tilt, ahead = self.tilt(t_s), self.tilt(t_s + step_s)
            for name, target in tilt.items():
                rate = (ahead[name] - target) / step_s
                cmd[name] = rate + POSITION_GAIN * (target - joint_positions[name])
        return cmd
