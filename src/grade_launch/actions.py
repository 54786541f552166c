"""The actions of a parsed launch file: what `parser` produces and `executor` runs.

Every value that may hold a substitution is a `Template`, evaluated only when executed; every
action keeps where it was written so that errors name the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grade_launch.substitution import Template


@dataclass(frozen=True)
class Where:
    """A place in a launch file (line counts from 1)."""

    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Condition:
    """An `if` (negate=False) or `unless` (negate=True) attribute."""

    expression: Template
    negate: bool
    where: Where


@dataclass(frozen=True)
class _Located:
    """Whatever is written in a launch file keeps its place, so that errors name it."""

    where: Where


@dataclass(frozen=True)
class _Conditional(_Located):
    """An action: gated by an `if`/`unless` attribute, or by none."""

    condition: Condition | None


@dataclass(frozen=True)
class DeclareArg(_Conditional):
    """`arg`: a launch argument, required when it has no default."""

    name: str
    default: Template | None
    description: str


@dataclass(frozen=True)
class _NameValue(_Conditional):
    name: Template
    value: Template


@dataclass(frozen=True)
class SetLaunchConfiguration(_NameValue):
    """`let`: set a launch configuration in the current scope."""


@dataclass(frozen=True)
class SetEnv(_NameValue):
    """`set_env`: set an environment variable of the processes started after it in scope."""


@dataclass(frozen=True)
class PushNamespace(_Conditional):
    """`push_ros_namespace`: nodes after it in scope go below this namespace."""

    namespace: Template


@dataclass(frozen=True)
class Group(_Conditional):
    """`group`: child actions, in a scope of their own unless `scoped` is false."""

    scoped: bool | Template
    children: tuple[Action, ...]


@dataclass(frozen=True)
class IncludeArg(_Located):
    """One `arg` of an `include`."""

    name: Template  # a `name` the included file declares with `arg`
    value: Template  # resolved in the including file's context


@dataclass(frozen=True)
class Include(_Conditional):
    """`include`: run another launch file's actions with these arguments set."""

    file: Template
    args: tuple[IncludeArg, ...]


ParamScalar = Template | bool | int | float


@dataclass(frozen=True)
class ParamList:
    """A list-valued param (each item a scalar)."""

    items: tuple[ParamScalar, ...]


@dataclass(frozen=True)
class ParamFile(_Located):
    """A node `param` with `from:`, a parameter file passed unchanged."""

    path: Template


@dataclass(frozen=True)
class ParamValue(_Located):
    """A node `param` with `name:` and `value:`."""

    name: Template
    value: ParamScalar | ParamList


@dataclass(frozen=True)
class Remap(_Located):
    """A node `remap` from one topic/service name to another."""

    source: Template  # `from`: the name the node's code uses
    target: Template  # `to`: the name it gets on the graph


@dataclass(frozen=True)
class NodeDecl(_Conditional):
    """`node`: one process to start."""

    package: Template | None
    executable: Template
    name: Template | None
    namespace: Template | None
    output: Template | None
    params: tuple[ParamFile | ParamValue, ...]
    remaps: tuple[Remap, ...]
    args: tuple[Template, ...]
    ros_args: tuple[Template, ...] | None
    shutdown_on_exit: bool


Action = DeclareArg | SetLaunchConfiguration | SetEnv | PushNamespace | Group | Include | NodeDecl


@dataclass(frozen=True)
class LaunchFile:
    """A parsed launch file."""

    path: Path
    actions: tuple[Action, ...]
