"""The one place where `grade` reaches down into the packages: the module behind each command.

A module is imported only when its command runs, so `grade eval` never pays for MuJoCo and
`grade bag` never needs rclpy; the imports are real statements, so mypy checks every module
against `Command`.
"""

from __future__ import annotations

from typing import Protocol


class Command(Protocol):
    """A command module (e.g. `grade_eval.cli`, `grade_sim.bench`)."""

    def main(self, argv: list[str]) -> int:
        """Parse argv, run the command and return its exit code."""
        ...


def load(name: str) -> Command:
    """Import the module of `grade NAME` (e.g. "eval") or `grade bench NAME` ("bench eval").

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
        case "bench scenes":
            from grade_scenes import bench as module
        case "batch":
            from grade_batch import cli as module
        case "explore":
            from grade_cli import explore as module
        case "slam":
            from grade_slam import cli as module
        case "bench slam":
            from grade_slam import bench as module
        case "render":
            from grade_render import cli as module
        case "lidar":
            from grade_sim.cli import lidar as module
        case "bench sim":
            from grade_sim import bench as module
        case "bench looks":
            from grade_sim import bench_looks as module
        case "bench control":
            from grade_control import bench as module
        case "bench bag":
            from grade_replay import bench as module
        case "bench recording":
            from grade_replay import bench_recording as module
        case "bench eval":
            from grade_eval import bench as module
        case "bench render":
            from grade_render import bench as module
        case "bench noise":
            from grade_noise import bench as module
        case "bench lidar":
            from grade_sim.cli import bench_lidar as module
        case "bench cameras":
            from grade_sim.cli import bench_cameras as module
        case "bvh":
            from grade_sim.cli import bvh as module
        case "bench people":
            from grade_sim.cli import bench_people as module
        case "bench crowd":
            from grade_sim.cli import bench_crowd as module
        case "bench replay":
            from grade_replay import replay_bench as module
        case "bench delivery":
            from grade_cli import delivery as module
        case "bench batch":
            from grade_batch import bench as module
        case _:
            raise KeyError(name)
    return module
