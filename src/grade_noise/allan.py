"""Allan deviation of a rate signal and a fit of white noise N plus bias random walk K."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grade_common.types import FloatArray
from grade_noise.errors import NoiseInputError


def allan_deviation(
    rate: FloatArray, dt_s: float, taus_s: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Overlapping Allan deviation of a 1-D rate signal sampled every dt_s.

    Returns:
        (taus actually used (multiples of dt_s, unique), ADEV at each of them).
    """
    x = np.asarray(rate, dtype=np.float64)
    if x.ndim != 1 or x.size < 3:
        raise NoiseInputError(f"Allan deviation needs a 1-D signal of >= 3 samples, got {x.shape}")
    theta = np.concatenate(([0.0], np.cumsum(x) * dt_s))
    n = x.size
    ms = np.unique(np.clip(np.round(np.asarray(taus_s) / dt_s).astype(np.int64), 1, (n - 1) // 2))
    adev = np.empty(ms.size)
    for i, m in enumerate(ms):
        tau = m * dt_s
        d = theta[2 * m :] - 2.0 * theta[m:-m] + theta[: n + 1 - 2 * m]
        adev[i] = np.sqrt(np.mean(d * d) / (2.0 * tau * tau))
    taus_used: FloatArray = (ms * dt_s).astype(np.float64)
    return taus_used, adev


@dataclass(frozen=True)
class AllanFit:
    """White noise density N and random walk K from ADEV^2 = N^2/tau + K^2 tau/3."""

    noise_density: float
    random_walk: float


def fit_white_and_random_walk(taus_s: FloatArray, adev: FloatArray) -> AllanFit:
    """Least-squares fit of ADEV^2 = N^2 / tau + K^2 tau / 3 with relative residuals."""
    taus = np.asarray(taus_s, dtype=np.float64)
    avar = np.asarray(adev, dtype=np.float64) ** 2
    # Divide each row by avar so every tau weighs the same in relative terms.
    design = np.stack([1.0 / taus, taus / 3.0], axis=1) / avar[:, None]
    coef, *_ = np.linalg.lstsq(design, np.ones_like(avar), rcond=None)
    return AllanFit(float(np.sqrt(max(coef[0], 0.0))), float(np.sqrt(max(coef[1], 0.0))))
