"""`grade SUBCOMMAND ...`: one entry point dispatching to each package's own CLI.

Each subcommand lives in its package and is imported only when used, so `grade eval` never pays
for MuJoCo and `grade bag` never needs rclpy.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence

from grade_common.errors import GradeError

# name -> ("module:function", one-line help). The function takes argv (list[str]) and returns
# an exit code.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "bag": ("grade_replay.bag.cli:main", "bag tools: info, clip, reindex, export (new bags only)"),
    "bench": ("grade_sim.cli.bench:main", "run the benchmarks (speed, memory, accuracy)"),
    "report": ("grade_sim.cli.report:main", "summary, contact sheet and top view of a run"),
    "replay": ("grade_replay.replay_cli:main", "exact replay of a run with changes + fidelity"),
    "run": ("grade_sim.cli.run:main", "simulate a scenario into a new run directory (no ROS)"),
    "launch": ("grade_sim.launcher.cli:main", "run a ROS 2 YAML launch file like `ros2 launch`"),
    "noise": ("grade_noise.cli:main", "sensor noise offline: grade noise apply BAG|TUM_FOLDER"),
    "eval": ("grade_eval.cli:main", "SLAM evaluation: ATE/RPE, tracking time, map error (AME)"),
}


def _usage() -> str:
    lines = ["usage: grade SUBCOMMAND [ARGS ...]", "", "subcommands:"]
    width = max((len(n) for n in SUBCOMMANDS), default=0)
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in sorted(SUBCOMMANDS.items())]
    lines.append("")
    lines.append("`grade SUBCOMMAND --help` describes each one.")
    return "\n".join(lines)


def _resolve(target: str) -> Callable[[list[str]], int]:
    module_name, func_name = target.split(":")
    func: Callable[[list[str]], int] = getattr(importlib.import_module(module_name), func_name)
    return func


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
        return _resolve(SUBCOMMANDS[name][0])(rest)
    except GradeError as err:
        print(f"grade {name}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"grade {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (`grade ... | head`): not a failure of the command.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
