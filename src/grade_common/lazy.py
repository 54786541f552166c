"""A package's public names, imported on first use (PEP 562), so that importing the package (or
a light module in it) never pulls in what only some of its names need: MuJoCo, rclpy, Embree."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of `package`, whose public names are
    `exports` (name -> the module that defines it).

    Usage, in a package's `__init__.py`:
        _EXPORTS = {"Scene": "grade_sim.scene", ...}
        __all__ = sorted(_EXPORTS)
        __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
    """

    def getattr_(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def dir_() -> list[str]:
        return sorted(exports)

    return getattr_, dir_
