"""Isaac Sim backend: not implemented yet; selecting it fails with a clear error.

Isaac Sim needs an RTX GPU and ships cp311 wheels only for 5.x; it can be added behind the same
EngineBackend interface. Until then this module only reports why it cannot be used.
"""

from __future__ import annotations

import importlib.util

from grade_sim.engine.protocol import EngineBackend
from grade_sim.errors import BackendError
from grade_sim.scene import Scene

UNAVAILABLE_REASON = "Isaac Sim (the 'isaacsim' package, RTX GPU) is not importable"


def is_available() -> bool:
    # Even with isaacsim importable, the backend itself is not written yet.
    return False


def create(scene: Scene) -> EngineBackend:
    reason = (
        UNAVAILABLE_REASON
        if importlib.util.find_spec("isaacsim") is None
        else "the Isaac Sim backend is not implemented yet"
    )
    raise BackendError(f"backend: 'isaac' cannot run: {reason}")
