"""The module behind each `grade bench NAME` benchmark, imported only when it runs.

Below grade_cli.bench (which runs them) and grade_cli.commands (whose `bench` command is
grade_cli.bench): the table is here so that neither of those imports the other for it.
"""

from __future__ import annotations

from grade_cli.command import Command

# Every name load_benchmark knows (`grade bench` runs them sorted).
BENCHMARKS = (
    "sim",
    "control",
    "bag",
    "eval",
    "noise",
    "replay",
    "delivery",
    "recording",
    "slam",
    "scenes",
    "batch",
    "render",
    "lidar",
    "looks",
    "cameras",
    "people",
    "crowd",
    "realism",
)
# Benchmarks that take operands (`grade bench realism RUN ...`): named first, the rest of the
# command line is theirs; `grade bench` alone (all of them) leaves them out.
OPERAND_BENCHMARKS = ("realism",)


def load_benchmark(name: str) -> Command:
    """Import the module of `grade bench NAME` (e.g. "eval").

    Raises:
        KeyError: no benchmark has that name.
    """
    module: Command
    match name:
        case "scenes":
            from grade_scenes import bench as module
        case "slam":
            from grade_slam import bench as module
        case "sim":
            from grade_sim.cli import bench_sim as module
        case "looks":
            from grade_sim import bench_looks as module
        case "control":
            from grade_control import bench as module
        case "bag":
            from grade_replay import bench as module
        case "recording":
            from grade_replay import bench_recording as module
        case "eval":
            from grade_eval import bench as module
        case "render":
            from grade_render import bench as module
        case "noise":
            from grade_noise import bench as module
        case "lidar":
            from grade_sim.cli import bench_lidar as module
        case "cameras":
            from grade_sim.cli import bench_cameras as module
        case "people":
            from grade_sim.cli import bench_people as module
        case "crowd":
            from grade_sim.cli import bench_crowd as module
        case "replay":
            from grade_replay import replay_bench as module
        case "delivery":
            from grade_cli import delivery as module
        case "realism":
            from grade_eval.realism import bench as module
        case "batch":
            from grade_batch import bench as module
        case _:
            raise KeyError(f"bench {name}")
    return module
