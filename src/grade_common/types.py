"""Array type aliases shared by every package (numpy.typing spelled once)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
Float32Array = NDArray[np.float32]
UInt8Array = NDArray[np.uint8]
BoolArray = NDArray[np.bool_]
