"""`grade SUBCOMMAND ...`: one entry point above every package's command line.

Each subcommand's module is imported only when that subcommand runs, so `grade eval` never pays
for MuJoCo and `grade bag` never needs rclpy.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from grade_cli.command import Command
from grade_common.errors import GradeError


@dataclass(frozen=True)
class Subcommand:
    """A `grade` subcommand: its one-line help and the import of its module."""

    help: str
    load: Callable[[], Command]


# The imports stand inside these functions so that only the subcommand that runs is imported.
def _bag() -> Command:
    from grade_replay.bag import cli

    return cli


def _bench() -> Command:
    from grade_cli import bench

    return bench


def _report() -> Command:
    from grade_sim.cli import report

    return report


def _replay() -> Command:
    from grade_replay import replay_cli

    return replay_cli


def _run() -> Command:
    from grade_sim.cli import run

    return run


def _launch() -> Command:
    from grade_sim.launcher import cli

    return cli


def _noise() -> Command:
    from grade_noise import cli

    return cli


def _eval() -> Command:
    from grade_eval import cli

    return cli


SUBCOMMANDS: dict[str, Subcommand] = {
    "bag": Subcommand("bag tools: info, clip, reindex, export (new bags only)", _bag),
    "bench": Subcommand("run the benchmarks (speed, memory, accuracy)", _bench),
    "report": Subcommand("summary, contact sheet and top view of a run", _report),
    "replay": Subcommand("exact replay of a run with changes + fidelity", _replay),
    "run": Subcommand("simulate a scenario into a new run directory (no ROS)", _run),
    "launch": Subcommand("run a ROS 2 YAML launch file like `ros2 launch`", _launch),
    "noise": Subcommand("sensor noise offline: grade noise apply BAG|TUM_FOLDER", _noise),
    "eval": Subcommand("SLAM evaluation: ATE/RPE, tracking time, map error (AME)", _eval),
}


def _usage() -> str:
    lines = ["usage: grade SUBCOMMAND [ARGS ...]", "", "subcommands:"]
    width = max((len(n) for n in SUBCOMMANDS), default=0)
    lines += [f"  {name:<{width}}  {sub.help}" for name, sub in sorted(SUBCOMMANDS.items())]
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
        return SUBCOMMANDS[name].load().main(rest)
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
