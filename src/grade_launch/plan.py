"""A launch plan: every node process of a launch, as `ros2 launch` would start it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from grade_launch.actions import Where


class Output(Enum):
    """Where a process's output goes, as launch's `output` attribute."""

    SCREEN = "screen"  # stdout and stderr to the screen
    LOG = "log"  # stdout and stderr to the log file, stderr also to the screen
    BOTH = "both"  # stdout and stderr to the screen and the log file

    @property
    def to_screen(self) -> bool:
        """stdout goes to the screen (stderr always does)."""
        return self in (Output.SCREEN, Output.BOTH)

    @property
    def to_log(self) -> bool:
        """stdout and stderr go to the launch log file."""
        return self in (Output.LOG, Output.BOTH)


@dataclass(frozen=True)
class ProcessPlan:
    """One node process as `ros2 launch` would start it."""

    label: str  # `[label]` output prefix: node name (or executable) and a launch-wide counter
    node_name: str | None  # fully qualified when name and namespace are known
    cmd: tuple[str, ...]
    env: Mapping[str, str]
    output: Output
    shutdown_on_exit: bool
    where: Where


@dataclass(frozen=True)
class LaunchPlan:
    """Every process of a launch, in start order, the final launch configurations and the
    launch arguments the files declared."""

    processes: tuple[ProcessPlan, ...]
    launch_configurations: Mapping[str, str]
    declared_arguments: tuple[str, ...] = ()

    def undeclared(self, arguments: Mapping[str, str]) -> list[str]:
        """The given `name:=value` arguments no launch file declares (typos, mostly)."""
        return [name for name in arguments if name not in self.declared_arguments]
