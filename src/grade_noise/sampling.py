"""Fast standard-normal images: inverse-CDF lookup of 16-bit uniform draws.

`Generator.standard_normal` costs ~10 ns a sample on this machine, more than all the image warping
of a 640x480 frame; random bytes are ~30x cheaper. Each sample is Phi^-1((u + 0.5) / 65536) for a
uniform 16-bit u: the standard normal quantised to 65536 equiprobable levels (tails cut at 4.17
sigma, variance 0.9998), ample for pixel noise. Draws still come only from the given Generator.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri

_LUT: NDArray[np.float32] = ndtri((np.arange(65536) + 0.5) / 65536).astype(np.float32)


def fast_standard_normal(rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float32]:
    """float32 array of approximately standard-normal samples (see module docstring)."""
    n = int(np.prod(shape))
    idx = np.frombuffer(rng.bytes(2 * n), dtype="<u2")
    out: NDArray[np.float32] = _LUT[idx].reshape(shape)
    return out
