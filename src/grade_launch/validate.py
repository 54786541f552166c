"""Check launch files against the frontend subset that both `ros2 launch` and `grade launch` run.

The check is static: YAML structure, tags, attributes, value kinds and substitution syntax of the
file itself (includes are checked when they are files given to the check too, since their path
is only known once substitutions are evaluated).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from grade_launch.actions import Action, DeclareArg, Group, Include, NodeDecl
from grade_launch.errors import LaunchFileError
from grade_launch.parser import parse_launch_file


@dataclass(frozen=True)
class CheckResult:
    """What a valid launch file contains, for a summary line."""

    path: Path
    arguments: tuple[str, ...]
    nodes: int
    includes: int


def _count(actions: Iterable[Action]) -> tuple[list[str], int, int]:
    args: list[str] = []
    nodes = includes = 0
    for action in actions:
        if isinstance(action, DeclareArg):
            args.append(action.name)
        elif isinstance(action, NodeDecl):
            nodes += 1
        elif isinstance(action, Include):
            includes += 1
        elif isinstance(action, Group):
            sub_args, sub_nodes, sub_includes = _count(action.children)
            args += sub_args
            nodes += sub_nodes
            includes += sub_includes
    return args, nodes, includes


def check_launch_file(path: Path) -> CheckResult:
    """Check one launch file.

    Raises:
        LaunchFileError: the first violation, naming file and line.
    """
    launch_file = parse_launch_file(Path(path))
    args, nodes, includes = _count(launch_file.actions)
    return CheckResult(launch_file.path, tuple(args), nodes, includes)


def check_launch_files(paths: Iterable[Path]) -> tuple[list[CheckResult], list[LaunchFileError]]:
    """Check several launch files, collecting every file's first violation."""
    results: list[CheckResult] = []
    errors: list[LaunchFileError] = []
    for path in paths:
        try:
            results.append(check_launch_file(path))
        except LaunchFileError as err:
            errors.append(err)
    return results, errors
