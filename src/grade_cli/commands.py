"""The module behind each `grade NAME` command (`grade bench NAME`: grade_cli.benchmarks).

A module is imported only when its command runs, so `grade eval` never pays for MuJoCo and
`grade bag` never needs rclpy; the imports are real statements, so mypy checks every module
against `Command`.
"""

from __future__ import annotations

from grade_cli.command import Command


def load(name: str) -> Command:
    """Import the module of `grade NAME` (e.g. "eval").

    Raises:
        KeyError: no command has that name.
    """
    module: Command
    match name:
        case "bag":
            from grade_replay.bag import cli as module
        case "bench":
            from grade_cli import bench as module
        case "report":
            from grade_sim.cli import report as module
        case "replay":
            from grade_replay import replay_cli as module
        case "run":
            from grade_sim.cli import run as module
        case "scenario":
            from grade_sim.cli import scenario as module
        case "recover":
            from grade_replay import recover_run as module
        case "launch":
            from grade_launch import cli as module
        case "noise":
            from grade_noise import cli as module
        case "eval":
            from grade_eval import cli as module
        case "scenes":
            from grade_scenes import cli as module
        case "batch":
            from grade_batch import cli as module
        case "explore":
            from grade_cli import explore as module
        case "slam":
            from grade_slam import cli as module
        case "render":
            from grade_render import cli as module
        case "lidar":
            from grade_sim.cli import lidar as module
        case "bvh":
            from grade_sim.cli import bvh as module
        case "export":
            from grade_usd import cli as module
        case "doctor":
            from grade_cli import doctor as module
        case _:
            raise KeyError(name)
    return module
