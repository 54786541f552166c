"""Setpoint modes -> a reference (joint positions + velocities) for each control update.

Each joint is owned by the last setpoint that covered it: a position goal, a velocity command,
a trajectory or a waypoint path. A setpoint older than `setpoint_timeout_s` (a trajectory: that
long after its last point) is stale: its joints hold the position measured at that moment and
never fly on. A rejected setpoint (non-finite value, unknown frame or joint, outside the limits)
raises `SetpointError` and makes every joint hold where it is.

Messages are converted by the ROS node; this module sees only arrays and names.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from grade_common.types import BoolArray, FloatArray
from grade_control.config import BODY_POSE_AXES, ControllerConfig, VelocityFrame
from grade_control.errors import SetpointError
from grade_control.geometry import (
    body_rates_to_euler_rates,
    quaternion_to_rpy,
    rpy_to_matrix,
    wrap_angle,
)


class SetpointMode(Enum):
    """What drives a joint's reference."""

    HOLD = "hold"
    POSITION = "position"
    VELOCITY = "velocity"
    TRAJECTORY = "trajectory"
    PATH = "path"


@dataclass(frozen=True)
class Reference:
    """Reference of one update: positions, fed-forward velocities, mode per joint, and notes
    (e.g. which setpoint went stale) for the caller to log."""

    position: FloatArray
    velocity: FloatArray
    modes: tuple[SetpointMode, ...]
    notes: tuple[str, ...]


def pose_to_body_values(position_xyz: Sequence[float], quat_xyzw: Sequence[float]) -> FloatArray:
    """(x, y, z, roll, pitch, yaw) of a pose.

    Raises:
        SetpointError: for a non-finite value or a zero quaternion.
    """
    position = np.asarray(position_xyz, dtype=np.float64)
    quat = np.asarray(quat_xyzw, dtype=np.float64)
    if not (np.all(np.isfinite(position)) and np.all(np.isfinite(quat))):
        raise SetpointError(
            f"pose has non-finite values: position {position.tolist()}, orientation {quat.tolist()}"
        )
    try:
        rpy = quaternion_to_rpy(quat)
    except ValueError as err:
        raise SetpointError(f"pose orientation: {err}") from err
    return np.concatenate([position, rpy])


@dataclass(eq=False)
class _Setpoint:
    """One accepted setpoint; covers the joints in `mask`."""

    mode = SetpointMode.HOLD

    mask: BoolArray
    stamp_s: float

    def stale(self, now_s: float, timeout_s: float) -> bool:
        return now_s - self.stamp_s > timeout_s

    def sample(self, now_s: float, measured: FloatArray) -> tuple[FloatArray, FloatArray]:
        raise NotImplementedError


@dataclass(eq=False)
class _Position(_Setpoint):
    mode = SetpointMode.POSITION

    target: FloatArray

    def sample(self, now_s: float, measured: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.target, np.zeros_like(self.target)


@dataclass(eq=False)
class _Velocity(_Setpoint):
    mode = SetpointMode.VELOCITY

    start_s: float  # when the velocity setpoint was accepted
    start: FloatArray  # (J,) joint positions then (NaN until the first measurement)
    velocity: FloatArray  # (J,) per joint, held from start_s on
    low: FloatArray  # (J,) the joint limits the integrated position stops at
    high: FloatArray

    def sample(self, now_s: float, measured: FloatArray) -> tuple[FloatArray, FloatArray]:
        if np.any(np.isnan(self.start)):  # accepted before any measurement: start from the first
            self.start = np.where(np.isnan(self.start), measured, self.start)
        position = self.start + self.velocity * max(0.0, now_s - self.start_s)
        clipped = np.clip(position, self.low, self.high)
        return clipped, np.where(clipped == position, self.velocity, 0.0)


@dataclass(eq=False)
class _Trajectory(_Setpoint):
    mode = SetpointMode.TRAJECTORY

    times_s: FloatArray  # (N,) increasing
    positions: FloatArray  # (N, J), interpolated linearly between the times
    velocities: FloatArray  # (N, J)

    def stale(self, now_s: float, timeout_s: float) -> bool:
        return now_s - float(self.times_s[-1]) > timeout_s

    def sample(self, now_s: float, measured: FloatArray) -> tuple[FloatArray, FloatArray]:
        times = self.times_s
        if now_s >= times[-1]:
            return self.positions[-1], np.zeros(self.positions.shape[1])
        if now_s <= times[0]:
            return self.positions[0], self.velocities[0]
        k = int(np.searchsorted(times, now_s, side="right")) - 1
        w = (now_s - times[k]) / (times[k + 1] - times[k])
        position = (1 - w) * self.positions[k] + w * self.positions[k + 1]
        velocity = (1 - w) * self.velocities[k] + w * self.velocities[k + 1]
        return position, velocity


@dataclass(eq=False)
class _Path(_Setpoint):
    mode = SetpointMode.PATH

    poses: FloatArray
    angular: BoolArray
    accept_m: float
    accept_rad: float
    index: int = field(default=0, init=False)  # the pose being approached

    def stale(self, now_s: float, timeout_s: float) -> bool:
        return False  # a path is a complete plan, not a stream; it ends by holding its last pose

    def sample(self, now_s: float, measured: FloatArray) -> tuple[FloatArray, FloatArray]:
        while self.index < len(self.poses) - 1:
            error = self.poses[self.index] - measured
            error = np.where(self.angular, wrap_angle(error), error)
            linear = np.linalg.norm(error[self.mask & ~self.angular])
            angular = np.max(np.abs(error[self.mask & self.angular]), initial=0.0)
            if linear > self.accept_m or angular > self.accept_rad:
                break
            self.index += 1
        return self.poses[self.index], np.zeros(self.poses.shape[1])


class SetpointTracker:
    """Keeps the active setpoints of one robot and yields the reference for each update."""

    def __init__(self, config: ControllerConfig) -> None:
        self.config = config
        names = config.joint_names
        self._index = {name: i for i, name in enumerate(names)}
        self._n = len(names)
        self._take_limits(config)
        self._angular = np.array([a.angular for a in config.axes])
        # body value k (x, y, z, roll, pitch, yaw) -> joint index, for joints this robot has
        self._body_mask = np.array([name in BODY_POSE_AXES for name in names])
        self._owner: list[_Setpoint | None] = [None] * self._n
        self._hold = np.full(self._n, np.nan)
        self._reference = np.full(self._n, np.nan)
        self._measured = np.full(self._n, np.nan)
        self._notes: list[str] = []

    def reconfigure(self, config: ControllerConfig) -> None:
        """Take new limits (same joints) at run time."""
        if config.joint_names != self.config.joint_names:
            raise ValueError("joints cannot change at run time")
        self.config = config
        self._take_limits(config)

    def _take_limits(self, config: ControllerConfig) -> None:
        """Position and velocity limits per joint, as arrays (at start and on reconfigure)."""
        self._low = np.array([a.position_min for a in config.axes])
        self._high = np.array([a.position_max for a in config.axes])
        self._v_limit = np.array([a.velocity_limit for a in config.axes])

    @property
    def modes(self) -> tuple[SetpointMode, ...]:
        """Current mode of each joint."""
        return tuple(SetpointMode.HOLD if o is None else o.mode for o in self._owner)

    # ---- setpoint input -------------------------------------------------------------------

    def hold(self, reason: str) -> None:
        """Drop every setpoint; all joints hold the position measured at the next update."""
        self._owner = [None] * self._n
        self._hold[:] = np.nan
        self._notes.append(f"holding position: {reason}")

    @contextmanager
    def _holding_if_rejected(self, what: str) -> Iterator[None]:
        """Run the checks of a `what` setpoint: a SetpointError in them makes the robot hold
        (with the reason) and goes on to the caller."""
        try:
            yield
        except SetpointError as err:
            self.hold(f"{what} rejected: {err}")
            raise err from None

    def _check_stamp(self, stamp_s: float, now_s: float) -> float:
        if not math.isfinite(stamp_s):
            raise SetpointError(f"stamp {stamp_s} is not finite")
        if stamp_s == 0.0:
            return now_s  # unstamped: take it as current
        if stamp_s - now_s > self.config.setpoint_timeout_s:
            # it would never go stale: most likely wall-clock stamps against simulated time
            raise SetpointError(
                f"stamp {stamp_s:.3f} s is more than setpoint_timeout_s ahead of the clock "
                f"({now_s:.3f} s); check use_sim_time on both sides"
            )
        if now_s - stamp_s > self.config.setpoint_timeout_s:
            raise SetpointError(
                f"stamp {stamp_s:.3f} s is older than setpoint_timeout_s = "
                f"{self.config.setpoint_timeout_s} s at {now_s:.3f} s (stale)"
            )
        return stamp_s

    def _check_world_frame(self, frame_id: str) -> None:
        if frame_id not in self.config.world_frames:
            raise SetpointError(
                f"frame {frame_id!r} is unknown: allowed frames {list(self.config.world_frames)}"
            )

    def _check_limits(self, values: FloatArray, mask: BoolArray, what: str) -> None:
        if not np.all(np.isfinite(values[mask])):
            raise SetpointError(f"{what} has non-finite values {values[mask].tolist()}")
        bad = mask & ((values < self._low) | (values > self._high))
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            raise SetpointError(
                f"{what}: joint {self.config.joint_names[j]} = {values[j]:.4g} is outside its "
                f"limits [{self._low[j]:.4g}, {self._high[j]:.4g}]"
            )

    def _check_velocity(self, velocity: FloatArray, mask: BoolArray, what: str) -> None:
        if not np.all(np.isfinite(velocity[mask])):
            raise SetpointError(f"{what} has non-finite velocities {velocity[mask].tolist()}")
        bad = mask & (np.abs(velocity) > self._v_limit + 1e-9)
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            raise SetpointError(
                f"{what}: joint {self.config.joint_names[j]} velocity {velocity[j]:.4g} exceeds "
                f"its limit {self._v_limit[j]:.4g}"
            )

    def _body_to_joints(self, body: FloatArray) -> FloatArray:
        """(…, 6) body values (x, y, z, roll, pitch, yaw) -> (…, n) joint values (NaN elsewhere)."""
        out = np.full((*body.shape[:-1], self._n), np.nan)
        for j, name in enumerate(self.config.joint_names):
            if name in BODY_POSE_AXES:
                out[..., j] = body[..., BODY_POSE_AXES.index(name)]
        return out

    def _names_to_mask(
        self, values: Mapping[str, float], what: str
    ) -> tuple[FloatArray, BoolArray]:
        unknown = [name for name in values if name not in self._index]
        if unknown:
            raise SetpointError(
                f"{what}: unknown joint(s) {unknown}; this robot has "
                f"{list(self.config.joint_names)}"
            )
        array = np.full(self._n, np.nan)
        mask = np.zeros(self._n, dtype=bool)
        for name, value in values.items():
            array[self._index[name]] = float(value)
            mask[self._index[name]] = True
        return array, mask

    def _named_joints(
        self,
        values: Mapping[str, float],
        stamp_s: float,
        now_s: float,
        what: str,
        check: Callable[[FloatArray, BoolArray, str], None],
    ) -> tuple[float, FloatArray, BoolArray]:
        """The checked stamp, the values as a joint array and the mask of the named joints of a
        per-joint setpoint (`check`: its limit check); on an error the robot holds."""
        with self._holding_if_rejected(what):
            stamp_s = self._check_stamp(stamp_s, now_s)
            array, mask = self._names_to_mask(values, what)
            check(array, mask, what)
        return stamp_s, array, mask

    def _start_reference(self, now_s: float) -> FloatArray:
        """Where the current reference is at `now_s` (a new velocity setpoint continues from it;
        NaN where nothing is known yet: filled from the first measurement)."""
        start = self._reference.copy()
        sampled: dict[int, FloatArray] = {}
        for j, owner in enumerate(self._owner):
            if owner is None:
                start[j] = self._hold[j] if math.isfinite(self._hold[j]) else self._measured[j]
                continue
            if id(owner) not in sampled:
                sampled[id(owner)] = owner.sample(now_s, self._measured)[0]
            start[j] = sampled[id(owner)][j]
        return start

    def _install(self, setpoint: _Setpoint) -> None:
        for j in np.flatnonzero(setpoint.mask):
            self._owner[int(j)] = setpoint

    def set_pose(
        self,
        position_xyz: Sequence[float],
        quat_xyzw: Sequence[float],
        frame_id: str,
        stamp_s: float,
        now_s: float,
    ) -> None:
        """Position goal from a pose in a world frame (the joints this robot has).

        Raises:
            SetpointError: with the reason; the robot then holds.
        """
        with self._holding_if_rejected("pose setpoint"):
            stamp_s = self._check_stamp(stamp_s, now_s)
            self._check_world_frame(frame_id)
            target = self._body_to_joints(pose_to_body_values(position_xyz, quat_xyzw))
            self._check_limits(target, self._body_mask, "pose setpoint")
        self._install(_Position(self._body_mask.copy(), stamp_s, target))

    def set_joint_positions(
        self, positions: Mapping[str, float], stamp_s: float, now_s: float
    ) -> None:
        """Position goal for named joints (e.g. `camera_yaw`); other joints keep their setpoint."""
        stamp_s, target, mask = self._named_joints(
            positions, stamp_s, now_s, "joint position setpoint", self._check_limits
        )
        self._install(_Position(mask, stamp_s, target))

    def set_joint_velocities(
        self, velocities: Mapping[str, float], stamp_s: float, now_s: float
    ) -> None:
        """Velocity command for named joints; the reference position integrates it."""
        stamp_s, velocity, mask = self._named_joints(
            velocities, stamp_s, now_s, "joint velocity setpoint", self._check_velocity
        )
        self._install(
            _Velocity(
                mask,
                stamp_s,
                now_s,
                self._start_reference(now_s),
                np.where(mask, velocity, 0.0),
                self._low,
                self._high,
            )
        )

    def set_twist(
        self,
        linear: Sequence[float],
        angular: Sequence[float],
        frame_id: str | None,
        stamp_s: float,
        now_s: float,
    ) -> None:
        """Velocity command from a twist.

        Args:
            frame_id: the body frame, a world frame, or None for the configured
                `velocity_frame` (a plain Twist).

        Raises:
            SetpointError: non-finite values, unknown frame, a non-zero component this robot
                has no joint for, or a joint velocity above its limit.
        """
        with self._holding_if_rejected("twist setpoint"):
            stamp_s = self._check_stamp(stamp_s, now_s)
            lin = np.asarray(linear, dtype=np.float64)
            ang = np.asarray(angular, dtype=np.float64)
            if not (np.all(np.isfinite(lin)) and np.all(np.isfinite(ang))):
                raise SetpointError(
                    f"twist has non-finite values: linear {lin.tolist()}, angular {ang.tolist()}"
                )
            if frame_id is None:
                body = self.config.velocity_frame is VelocityFrame.BODY
            elif frame_id == self.config.body_frame:
                body = True
            elif frame_id in self.config.world_frames:
                body = False
            else:
                raise SetpointError(
                    f"frame {frame_id!r} is unknown: allowed frames "
                    f"{[self.config.body_frame, *self.config.world_frames]}"
                )
            rpy = self._measured_rpy()
            rotation = rpy_to_matrix(*rpy)
            lin_world = rotation @ lin if body else lin
            rates_body = ang if body else rotation.T @ ang
            try:
                euler_rates = body_rates_to_euler_rates(rpy, rates_body)
            except ValueError as err:
                raise SetpointError(str(err)) from err
            body_velocity = np.concatenate([lin_world, euler_rates])
            joint_velocity = self._body_to_joints(body_velocity)
            missing = [
                BODY_POSE_AXES[k]
                for k in range(6)
                if abs(body_velocity[k]) > 1e-9 and BODY_POSE_AXES[k] not in self._index
            ]
            if missing:
                raise SetpointError(
                    f"twist moves joint(s) {missing} this robot does not have "
                    f"({list(self.config.joint_names)})"
                )
            self._check_velocity(joint_velocity, self._body_mask, "twist setpoint")
        self._install(
            _Velocity(
                self._body_mask.copy(),
                stamp_s,
                now_s,
                self._start_reference(now_s),
                np.where(self._body_mask, joint_velocity, 0.0),
                self._low,
                self._high,
            )
        )

    def set_trajectory(
        self,
        times_s: Sequence[float] | FloatArray,
        positions_xyz: FloatArray,
        quats_xyzw: FloatArray,
        linear_velocities: FloatArray | None,
        yaw_rates: FloatArray | None,
        frame_id: str,
        now_s: float,
        joint_names: Sequence[str] = (),
    ) -> None:
        """Trajectory (e.g. from an NMPC): tracked at the current time with its velocity fed
        forward. Velocities are world-frame linear and yaw rate; None means zero.

        Args:
            times_s: absolute time of each point (header stamp + time_from_start), increasing.
            positions_xyz: (m, 3); quats_xyzw: (m, 4); linear_velocities: (m, 3); yaw_rates: (m,).
            joint_names: the trajectory's joint names: none, or the one body joint
                (`<robot>/base_link` or `base_link`).
        """
        with self._holding_if_rejected("trajectory setpoint"):
            self._check_world_frame(frame_id)
            accepted = (self.config.body_frame, "base_link")
            if list(joint_names) not in ([], [accepted[0]], [accepted[1]]):
                raise SetpointError(
                    f"trajectory joint names {list(joint_names)} are unknown: "
                    f"expected one of {list(accepted)} (or none)"
                )
            times = np.asarray(times_s, dtype=np.float64)
            m = len(times)
            if m == 0:
                raise SetpointError("trajectory has no points")
            if not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
                raise SetpointError(
                    f"trajectory times {times.tolist()} must be finite and strictly increasing"
                )
            if now_s - times[-1] > self.config.setpoint_timeout_s:
                raise SetpointError(
                    f"trajectory ended at {times[-1]:.3f} s, more than "
                    f"setpoint_timeout_s before now ({now_s:.3f} s) (stale)"
                )
            body = np.stack(
                [
                    pose_to_body_values(p, q)
                    for p, q in zip(np.asarray(positions_xyz), np.asarray(quats_xyzw), strict=True)
                ]
            )
            # unwrap the angles along time so interpolation takes the short way
            body[:, 3:] = np.unwrap(body[:, 3:], axis=0)
            body_velocity = np.zeros((m, 6))
            if linear_velocities is not None:
                body_velocity[:, :3] = np.asarray(linear_velocities, dtype=np.float64)
            if yaw_rates is not None:
                body_velocity[:, 5] = np.asarray(yaw_rates, dtype=np.float64)
            positions = self._body_to_joints(body)
            velocities = np.nan_to_num(
                self._body_to_joints(body_velocity), nan=0.0, posinf=np.inf, neginf=-np.inf
            )
            for k in range(m):
                wrapped = np.where(
                    self._angular & ~np.isinf(self._high), wrap_angle(positions[k]), positions[k]
                )
                self._check_limits(wrapped, self._body_mask, f"trajectory point {k}")
                self._check_velocity(velocities[k], self._body_mask, f"trajectory point {k}")
        self._install(
            _Trajectory(self._body_mask.copy(), float(times[0]), times, positions, velocities)
        )

    def set_path(
        self, positions_xyz: FloatArray, quats_xyzw: FloatArray, frame_id: str, now_s: float
    ) -> None:
        """Waypoint path: go to each pose in turn, advancing within the acceptance radius."""
        with self._holding_if_rejected("path setpoint"):
            self._check_world_frame(frame_id)
            if len(positions_xyz) == 0:
                raise SetpointError("path has no poses")
            body = np.stack(
                [
                    pose_to_body_values(p, q)
                    for p, q in zip(np.asarray(positions_xyz), np.asarray(quats_xyzw), strict=True)
                ]
            )
            poses = self._body_to_joints(body)
            for k in range(len(poses)):
                self._check_limits(poses[k], self._body_mask, f"path pose {k}")
        self._install(
            _Path(
                self._body_mask.copy(),
                now_s,
                poses,
                self._angular,
                self.config.path_acceptance_m,
                self.config.path_acceptance_rad,
            )
        )

    # ---- per update -----------------------------------------------------------------------

    def _measured_rpy(self) -> FloatArray:
        rpy = np.zeros(3)
        for k, name in enumerate(("roll", "pitch", "yaw")):
            if name in self._index and math.isfinite(self._measured[self._index[name]]):
                rpy[k] = self._measured[self._index[name]]
        return rpy

    def observe(self, measured: FloatArray) -> None:
        """Record the latest measured joint positions (needed by body-frame twists)."""
        self._measured = np.asarray(measured, dtype=np.float64).copy()

    def reference(self, now_s: float, measured: FloatArray) -> Reference:
        """Reference positions and velocities for this update."""
        self.observe(measured)
        position = np.empty(self._n)
        velocity = np.zeros(self._n)
        seen: set[int] = set()
        for owner in self._owner:
            if owner is None or id(owner) in seen:
                continue
            seen.add(id(owner))
            if owner.stale(now_s, self.config.setpoint_timeout_s):
                self._notes.append(
                    f"{owner.mode.value} setpoint stamped {owner.stamp_s:.3f} s is "
                    f"stale at {now_s:.3f} s: holding position"
                )
                for stale_j in np.flatnonzero(owner.mask):
                    self._owner[int(stale_j)] = None
                    self._hold[stale_j] = np.nan
        sampled: dict[int, tuple[FloatArray, FloatArray]] = {}
        for j, owner in enumerate(self._owner):
            if owner is None:
                if math.isnan(self._hold[j]):
                    self._hold[j] = self._measured[j]
                position[j] = self._hold[j]
                continue
            if id(owner) not in sampled:
                sampled[id(owner)] = owner.sample(now_s, self._measured)
            position[j] = sampled[id(owner)][0][j]
            velocity[j] = sampled[id(owner)][1][j]
        self._reference = position.copy()
        notes, self._notes = tuple(self._notes), []
        return Reference(position, velocity, self.modes, notes)
