"""The noise models' parameter sets (IMU, RGB, depth, odometry): looking up a named preset in a
model's table, and the range check each parameter dataclass makes of its fields."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
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


def check_fields(
    params: object,
    sensor: str,
    names: Iterable[str],
    *,
    positive: bool = False,
    rule: str | None = None,
) -> None:
    """Raise NoiseConfigError for the first of `names` that is not finite and >= 0 (> 0 where
    `positive`): `<sensor> noise field '<name>' = <value>: must be <rule>`.

    Args:
        rule: what the message says is allowed; by default "> 0" or ">= 0".
    """
    for name in names:
        value = getattr(params, name)
        if not (math.isfinite(value) and (value > 0.0 if positive else value >= 0.0)):
            must = rule or ("> 0" if positive else ">= 0")
            raise NoiseConfigError(f"{sensor} noise field '{name}' = {value!r}: must be {must}")
