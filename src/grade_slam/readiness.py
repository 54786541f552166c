"""Whether each SLAM backend the benchmarks use works on this machine, and what to do if not.

One line per backend of slam_node (`grade_slam.backends`) and lidar_odometry_node
(`grade_slam.lidar_odometry`): "ready", "builds on first use" (ORB-SLAM3 with grade's
vocabulary not built yet: the first run builds it) or "missing: <install command>". A package
counts as installed only if it imports here (a wheel whose shared libraries are missing is
missing), so nothing listed as ready fails on first use for that reason.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from grade_slam.backends import BACKENDS, BackendSpec
from grade_slam.errors import SlamConfigError
from grade_slam.lidar_odometry import LIDAR_BACKENDS, LidarBackend, LidarBackendSpec


class Readiness(StrEnum):
    """Whether a backend can run now (the value is what `grade slam backends` prints)."""

    READY = "ready"  # installed, with everything it reads
    FIRST_USE = "builds on first use"  # installed; a cached input (the vocabulary) is made once
    MISSING = "missing"  # not installed or broken: the row names the fix


@dataclass(frozen=True)
class BackendReadiness:
    """One backend: which node runs it, what it is, whether it works, what to do if not."""

    name: str
    node: str
    description: str
    state: Readiness
    action: str = ""  # MISSING: the install command (or the fix); FIRST_USE: what happens

    def line(self) -> str:
        state = f"{self.state.value}: {self.action}" if self.action else self.state.value
        return f"{self.name} ({self.node}): {self.description} [{state}]"


def _imports(*modules: str) -> str | None:
    """None if every module imports, else the first error."""
    for module in modules:
        try:
            importlib.import_module(module)
        except (ImportError, OSError) as err:  # also a missing shared library
            return f"{module}: {err}"
    return None


def _orb_vocabulary() -> tuple[Readiness, str]:
    from grade_slam.vocabulary_set import BUILD_STEP, BUILD_TIME, VOCAB_ENV, resolve_vocabulary

    try:
        resolve_vocabulary("")
    except SlamConfigError as err:
        if os.environ.get(VOCAB_ENV):
            return Readiness.MISSING, f"fix ${VOCAB_ENV} ({err})"
        return (
            Readiness.FIRST_USE,
            f"the first run builds the ORB vocabulary ({BUILD_TIME}), or `{BUILD_STEP}` now",
        )
    return Readiness.READY, ""


def backend_readiness(
    camera: Mapping[str, BackendSpec] = BACKENDS,
    lidar: Mapping[LidarBackend, LidarBackendSpec] = LIDAR_BACKENDS,
) -> list[BackendReadiness]:
    """Every registered backend, camera ones (slam_node) first, in registry order."""
    out = []
    for name, spec in camera.items():
        state, action = Readiness.READY, ""
        if _imports(spec.module) is not None:
            state, action = Readiness.MISSING, spec.install
        elif spec.prepare is not None:
            state, action = _orb_vocabulary()
        out.append(BackendReadiness(name, "slam_node", spec.description, state, action))
    for backend, lidar_spec in lidar.items():
        state, action = Readiness.READY, ""
        if _imports(lidar_spec.config_module, lidar_spec.pipeline.split(":")[0]) is not None:
            state, action = Readiness.MISSING, lidar_spec.install
        out.append(
            BackendReadiness(
                backend.value, "lidar_odometry_node", lidar_spec.description, state, action
            )
        )
    return out
