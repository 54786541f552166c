"""Looking up a named noise preset in a model's table (IMU, RGB, depth, odometry)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from grade_noise.errors import NoiseConfigError

P = TypeVar("P")


def lookup(table: Mapping[str, P], name: str, sensor: str) -> P:
    """Return preset `name` of `table`; raise NoiseConfigError listing the valid names.

    Args:
        sensor: how the model is named in the error (`IMU`, `depth`, ...).
    """
    try:
        return table[name]
    except KeyError:
        raise NoiseConfigError(
            f"unknown {sensor} noise preset '{name}'; available: {sorted(table)}"
        ) from None
