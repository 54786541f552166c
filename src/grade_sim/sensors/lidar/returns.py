"""Which returns a lidar drops: the ray-drop models' probabilities.

What a return reports is computed per ray in `scan_kernel.returns`: intensity is the calibrated
(range-compensated) reflectance a real sensor reports, the target's reflectivity times the
cosine of the incidence angle (a Lambertian target) in [0, 1]; the range gets zero-mean
Gaussian noise (never negative); a return is dropped where a uniform draw falls below the
model's drop probability.

Physics-based ray drop (LiDARsim's factors: range, incidence angle, reflectivity; random baseline):
the received power relative to a white target head-on at the maximum range,
`signal = reflectivity * cos(incidence) * (range_max / range)^2`, is weak below 1, so
`p_weak = 1 / (1 + signal^4)`, and a return survives both the weak-signal loss and the baseline:
`p_drop = 1 - (1 - baseline) * (1 - p_weak)`.
"""

from __future__ import annotations

from typing import Protocol

import numba
import numpy as np

from grade_common.types import FloatArray


class RayDropModel(Protocol):
    """Drop probability of each return from its range, incidence and reflectivity."""

    def drop_probability(
        self, range_m: FloatArray, cos_incidence: FloatArray, reflectivity: FloatArray
    ) -> FloatArray: ...


class PhysicsRayDrop:
    """The module's physics-based model (see the module doc)."""

    def __init__(self, range_max_m: float, baseline: float) -> None:
        self.range_max_m = range_max_m
        self.baseline = baseline

    def drop_probability(
        self, range_m: FloatArray, cos_incidence: FloatArray, reflectivity: FloatArray
    ) -> FloatArray:
        out = np.empty(len(range_m))
        _physics_drop(
            np.ascontiguousarray(range_m, dtype=np.float64),
            np.ascontiguousarray(cos_incidence, dtype=np.float64),
            np.ascontiguousarray(reflectivity, dtype=np.float64),
            float(self.range_max_m),
            float(self.baseline),
            out,
        )
        return out


@numba.njit(nogil=True, cache=True)
def _physics_drop(
    range_m: FloatArray,
    cos_incidence: FloatArray,
    reflectivity: FloatArray,
    range_max_m: float,
    baseline: float,
    out: FloatArray,
) -> None:  # pragma: no cover - compiled
    """The module's physics model per return (a scan has 100k+ of them: one compiled pass)."""
    for i in range(len(range_m)):
        r = max(range_m[i], 1e-6)
        signal = reflectivity[i] * cos_incidence[i] * (range_max_m / r) ** 2
        s4 = signal**4
        keep = 1.0 if s4 > 1e300 else s4 / (1.0 + s4)  # a huge signal: inf / inf would be nan
        out[i] = 1.0 - (1.0 - baseline) * keep


class NoRayDrop:
    def drop_probability(
        self, range_m: FloatArray, cos_incidence: FloatArray, reflectivity: FloatArray
    ) -> FloatArray:
        return np.zeros_like(range_m)
