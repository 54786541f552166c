"""A package's public names, imported on first use (PEP 562), so that importing the package (or
a light module in it) never pulls in what only some of its names need: MuJoCo, rclpy, Embree."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """The `__all__`, `__getattr__` and `__dir__` of `package`, whose public names are those of
    `modules` (module -> the names it defines that the package exports).

    Usage, as the last statement of a package's `__init__.py`:
        __all__, __getattr__, __dir__ = lazy_exports(
            __name__, {"grade_sim.scene": ("Scene", "build_scene"), ...}
        )
    """
    where = {name: module for module, names in modules.items() for name in names}

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def dir_() -> list[str]:
        return sorted(where)

    return sorted(where), getattr_, dir_
