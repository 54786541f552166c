"""`grade bench control`: controller cost per update and circle-tracking error.

The plant is first order (joint velocity = command, integrated at 240 Hz, command held between
50 Hz controller updates), the UAV defaults of GRADE, and an NMPC-like circle trajectory.
"""

from __future__ import annotations

import math
import time

import numpy as np

from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_control.config import ControllerConfig
from grade_control.controller import JointController, simulate_first_order
from grade_control.geometry import rpy_to_quaternion, wrap_angle


def circle_trajectory(
    radius_m: float, period_s: float, altitude_m: float, duration_s: float, step_s: float = 0.05
) -> tuple[np.ndarray, ...]:
    """Points of a horizontal circle flown facing the direction of travel.

    Returns:
        times_s (m,), positions (m, 3), quaternions xyzw (m, 4), linear velocities (m, 3),
        yaw rates (m,).
    """
    times = np.arange(0.0, duration_s + step_s / 2, step_s)
    omega = 2.0 * math.pi / period_s
    phase = omega * times
    positions = np.stack(
        [radius_m * np.cos(phase), radius_m * np.sin(phase), np.full_like(phase, altitude_m)],
        axis=1,
    )
    velocities = np.stack(
        [-radius_m * omega * np.sin(phase), radius_m * omega * np.cos(phase), np.zeros_like(phase)],
        axis=1,
    )
    yaws = phase + math.pi / 2
    quats = np.stack([rpy_to_quaternion(0.0, 0.0, float(y)) for y in yaws])
    return times, positions, quats, velocities, np.full_like(phase, omega)


def track_circle(
    feed_forward: bool, radius_m: float = 1.0, period_s: float = 20.0, duration_s: float = 40.0
) -> dict[str, float]:
    """Fly the circle on the first-order plant; RMS errors over the whole run."""
    config = ControllerConfig.uav()
    controller = JointController(config)
    times, positions, quats, velocities, yaw_rates = circle_trajectory(
        radius_m, period_s, 1.5, duration_s
    )
    controller.tracker.set_trajectory(
        times,
        positions,
        quats,
        velocities if feed_forward else None,
        yaw_rates if feed_forward else None,
        "world",
        0.0,
    )
    initial = np.array([radius_m, 0.0, 1.5, 0.0, 0.0, math.pi / 2])
    t, states, _ = simulate_first_order(controller, initial, duration_s)
    omega = 2.0 * math.pi / period_s
    desired_xy = radius_m * np.stack([np.cos(omega * t), np.sin(omega * t)], axis=1)
    position_error = np.linalg.norm(states[:, :2] - desired_xy, axis=1)
    position_error = np.hypot(position_error, states[:, 2] - 1.5)
    yaw_error = wrap_angle(states[:, 5] - (omega * t + math.pi / 2))
    return {
        "rms_position_m": float(np.sqrt(np.mean(position_error**2))),
        "max_position_m": float(np.max(position_error)),
        "rms_yaw_deg": float(np.degrees(np.sqrt(np.mean(yaw_error**2)))),
    }


def update_cost_us(updates: int) -> tuple[float, float]:
    """Mean and median wall time of `JointController.update` (trajectory mode), in µs."""
    controller = JointController(ControllerConfig.uav())
    times, positions, quats, velocities, yaw_rates = circle_trajectory(1.0, 20.0, 1.5, 60.0)
    controller.tracker.set_trajectory(times, positions, quats, velocities, yaw_rates, "world", 0.0)
    measured = np.array([1.0, 0.0, 1.5, 0.0, 0.0, math.pi / 2])
    costs = np.empty(updates)
    for k in range(updates):
        start = time.perf_counter()
        command = controller.update(k * 0.02, measured)
        costs[k] = time.perf_counter() - start
        measured = measured + command.velocities * 0.02
    return float(np.mean(costs) * 1e6), float(np.median(costs) * 1e6)


def main(argv: list[str]) -> int:
    """Print the controller's cost per update and its circle-tracking errors."""
    parser = bench_parser("control", __doc__)
    parser.add_argument("--updates", type=int, default=3000, help="updates to time")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    mean_us, median_us = update_cost_us(args.updates)
    print(
        f"controller update (6 joints, trajectory mode): mean {mean_us:.1f} us, "
        f"median {median_us:.1f} us over {args.updates} updates"
    )
    rows: list[tuple[Cell, ...]] = []
    for feed_forward in (True, False):
        result = track_circle(feed_forward)
        label = "with" if feed_forward else "without"
        print(
            f"circle r=1 m, 20 s period (0.31 m/s), 40 s, {label} velocity feed-forward: "
            f"RMS position error {result['rms_position_m'] * 100:.2f} cm "
            f"(max {result['max_position_m'] * 100:.2f} cm), "
            f"RMS yaw error {result['rms_yaw_deg']:.2f} deg"
        )
        rows.append(
            (
                label,
                round(result["rms_position_m"] * 100, 2),
                round(result["max_position_m"] * 100, 2),
                round(result["rms_yaw_deg"], 2),
            )
        )
    tables = [
        ResultTable(
            f"Controller update (6 joints, trajectory mode), {args.updates} updates",
            ("mean us", "median us"),
            ((round(mean_us, 1), round(median_us, 1)),),
        ),
        ResultTable(
            "Circle r = 1 m, 20 s period (0.31 m/s), 40 s",
            ("velocity feed-forward", "RMS position cm", "max position cm", "RMS yaw deg"),
            tuple(rows),
        ),
    ]
    write_results(args.json, "control", argv, tables)
    return 0
