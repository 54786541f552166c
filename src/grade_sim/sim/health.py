"""Physics health: the state of every robot and actor after a step is finite and plausible.

MuJoCo resets its state when it meets NaN/Inf (and only warns, in a log file), and a body far
outside any world (a start position of 1e9 m) simulates on silently; neither is a valid run.
These checks turn both into an error that names the robot or actor, the step and what to change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from grade_common.types import FloatArray
from grade_sim.engine.protocol import RobotState
from grade_sim.errors import SimulationUnstableError

# No world grade builds is larger than a few km (outdoor ground <= 500 m); beyond 100 km float
# positions lose millimetres and nothing is rendered, so such a state is an error, not data.
MAX_POSITION_M = 1e5
# Robot velocity limits are <= 50 m/s and 50 rad/s (scenario bounds); 100x that is divergence.
MAX_SPEED_MPS = 5e3
MAX_ANGULAR_SPEED_RPS = 5e3

ADVICE = (
    "check its start_xyz and motion.waypoints (they must lie in the world), lower "
    "max_velocity_mps / max_angular_velocity_rps, or raise rates.physics_hz"
)


def _where(step: int, stamp_ns: int) -> str:
    return f"at physics step {step} (t = {stamp_ns / 1e9:.6f} s)"


def _problem(name: str, values: FloatArray, limit: float, unit: str) -> str | None:
    if not np.all(np.isfinite(values)):
        return f"{name} is not finite ({np.array2string(values, precision=4)})"
    size = float(np.max(np.abs(values))) if values.size else 0.0
    if size > limit:
        return f"{name} {np.array2string(values, precision=4)} exceeds {limit:g} {unit}"
    return None


def _plausible(state: RobotState) -> bool:
    """Every checked value finite and below 1e3, which is under every limit: the common case,
    each step, in one comparison (NaN fails it too). Otherwise the fields are checked one by one."""
    values = np.concatenate(
        (
            state.position_world_base,
            state.quat_world_base,
            state.linear_velocity_base,
            state.angular_velocity_base,
            state.joint_positions,
            state.joint_velocities,
            state.imu_specific_force,
        )
    )
    return bool(np.abs(values).max(initial=0.0) < 1e3)


def check_robot_states(
    states: Mapping[str, RobotState], step: int, stamp_ns: int, robot_index: Mapping[str, int]
) -> None:
    """Raise SimulationUnstableError for the first robot whose state is non-finite or huge."""
    for name, state in states.items():
        if _plausible(state):
            continue  # the common case, every step: one comparison, no per-field work
        checks = (
            ("base position", state.position_world_base, MAX_POSITION_M, "m"),
            ("base orientation", state.quat_world_base, 2.0, ""),
            ("linear velocity", state.linear_velocity_base, MAX_SPEED_MPS, "m/s"),
            ("angular velocity", state.angular_velocity_base, MAX_ANGULAR_SPEED_RPS, "rad/s"),
            ("joint positions", state.joint_positions, MAX_POSITION_M, "m/rad"),
            ("joint velocities", state.joint_velocities, MAX_SPEED_MPS, "m/s or rad/s"),
            ("IMU specific force", state.imu_specific_force, 1e6, "m/s^2"),
        )
        for label, values, limit, unit in checks:
            problem = _problem(label, np.asarray(values, dtype=np.float64), limit, unit)
            if problem is not None:
                i = robot_index.get(name)
                key = f"robots[{i}]" if i is not None else "the scenario"
                raise SimulationUnstableError(
                    f"robot {name!r} {_where(step, stamp_ns)}: {problem}; the simulation is "
                    f"unstable or the robot left the world; in {key}: {ADVICE}"
                )


def check_actor_positions(
    positions: FloatArray | None, names: Sequence[str], step: int, stamp_ns: int
) -> None:
    """Raise SimulationUnstableError for the first actor at a non-finite or huge position."""
    if positions is None or bool(np.abs(positions).max(initial=0.0) <= MAX_POSITION_M):
        return  # the common case: one comparison (NaN fails it)
    for i, row in enumerate(np.asarray(positions, dtype=np.float64)):
        problem = _problem("position", row, MAX_POSITION_M, "m")
        if problem is not None:
            raise SimulationUnstableError(
                f"actor {names[i]!r} {_where(step, stamp_ns)}: {problem}; check the people / "
                "flying_objects settings of the scenario"
            )
