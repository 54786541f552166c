"""`grade SUBCOMMAND ...`: one entry point above every package's command line.

grade_cli is the top layer: it imports the packages and none of them imports it. Each
subcommand's module is imported only when that subcommand runs (grade_cli.commands).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from grade_cli.commands import load
from grade_common.errors import GradeError
from grade_common.signals import interrupt_on_sigterm, stopped_exit_code

# name -> one-line help; grade_cli.commands.load imports the module behind each name.
SUBCOMMANDS: dict[str, str] = {
    "bag": "bag tools: info, clip, reindex, export, recover (new bags only)",
    "bench": "run the benchmarks (speed, memory, accuracy)",
    "report": "summary, contact sheet and top view of a run",
    "replay": "exact replay of a run with changes + fidelity",
    "run": "simulate a scenario into a new run directory (no ROS)",
    "scenario": "scenario files: every key with its type, default and allowed values",
    "recover": "rebuild a killed run's .NAME.partial-PID directory into a new run directory",
    "launch": "run a ROS 2 YAML launch file like `ros2 launch`",
    "noise": "sensor noise offline: grade noise apply BAG|TUM_FOLDER",
    "eval": "SLAM evaluation: ATE/RPE, tracking time, map error (AME)",
    "scenes": "SceneReplica tabletop scenes: reach, generate, select",
    "batch": "datasets at scale: sweep -> jobs on a local pool or Ray, COCO/YOLO, card",
    "explore": "exploration coverage: free floor seen over time (+ plot)",
    "slam": "third-party SLAM/odometry on RGB-D frames: backends, offline run",
    "render": "path-traced re-rendering of a run (Blender Cycles, new run directory)",
    "lidar": "lidar tools: fit-raydrop (learned ray-drop model from range images)",
    "export": "a recorded run in another format: usd (Isaac Sim, Omniverse, Blender)",
    "bvh": "BVH motion capture: joint mapping onto the person skeleton, retargeted copy",
    "doctor": "what works on this machine (ROS 2, GL, Vulkan, bpy, ...) and how to fix the rest",
}


def _usage() -> str:
    lines = ["usage: grade SUBCOMMAND [ARGS ...]", "", "subcommands:"]
    width = max((len(n) for n in SUBCOMMANDS), default=0)
    lines += [f"  {name:<{width}}  {help_}" for name, help_ in sorted(SUBCOMMANDS.items())]
    lines.append("")
    lines.append("`grade SUBCOMMAND --help` describes each one.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `grade` with argv (default: sys.argv[1:]) and return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(
            f"grade: unknown subcommand '{name}'; available: {', '.join(sorted(SUBCOMMANDS))}",
            file=sys.stderr,
        )
        return 2
    try:
        with interrupt_on_sigterm():
            return load(name).main(rest)
    except GradeError as err:
        print(f"grade {name}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        code = stopped_exit_code()
        print(f"grade {name}: interrupted", file=sys.stderr)
        return code
    except BrokenPipeError:
        # The reader of stdout went away (`grade ... | head`): not a failure of the command.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
