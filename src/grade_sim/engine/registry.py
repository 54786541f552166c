"""Registry of engine backends keyed by the scenario's `backend:` value."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from grade_sim.engine.protocol import EngineBackend
from grade_sim.errors import BackendError
from grade_sim.scene import Scene

# name -> "module:factory". Modules are imported only when chosen, so an optional engine's heavy
# (or absent) dependencies cost nothing to users of another one. A module may say it cannot run
# here (`is_available()` false, `UNAVAILABLE_REASON`). Only engines that run are registered: an
# Isaac Sim backend (RTX GPU, isaacsim 5.x wheels for cp311) is not written.
BACKENDS: dict[str, str] = {
    "mujoco": "grade_sim.engine.mujoco.engine:MujocoEngine",
}


def available_backends() -> list[str]:
    """Backends whose dependencies import on this machine."""
    names = []
    for name, target in sorted(BACKENDS.items()):
        module = target.split(":")[0]
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        if getattr(mod, "is_available", lambda: True)():
            names.append(name)
    return names


def create_backend(scene: Scene) -> EngineBackend:
    """Build the scenario's backend for `scene`.

    Raises:
        BackendError: the name is unknown or its engine cannot run here; lists what is available.
    """
    name = scene.scenario.backend
    if name not in BACKENDS:
        raise BackendError(
            f"backend: unknown engine {name!r}; available: {', '.join(available_backends())}"
        )
    module_name, factory_name = BACKENDS[name].split(":")
    module = importlib.import_module(module_name)
    if not getattr(module, "is_available", lambda: True)():
        raise BackendError(
            f"backend: {name!r} cannot run on this machine "
            f"({getattr(module, 'UNAVAILABLE_REASON', 'dependencies missing')}); "
            f"available: {', '.join(available_backends())}"
        )
    factory: Callable[[Scene], EngineBackend] = getattr(module, factory_name)
    return factory(scene)


def engine_log_in(name: str, folder: Path) -> AbstractContextManager[None]:
    """While active, the engine `name` writes its own log file into `folder` (the run directory)
    instead of the current directory; engines without a log file (or unknown here) do nothing.
    """
    target = BACKENDS.get(name)
    if target is None:
        return contextlib.nullcontext()
    try:
        module = importlib.import_module(target.split(":")[0])
    except ImportError:
        return contextlib.nullcontext()
    log_into: Callable[[Path], AbstractContextManager[None]] | None = getattr(
        module, "log_into", None
    )
    if log_into is None or not getattr(module, "is_available", lambda: True)():
        return contextlib.nullcontext()
    return log_into(folder)
