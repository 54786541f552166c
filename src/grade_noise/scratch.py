"""Per-thread scratch arrays reused from one frame to the next.

A 640x480 frame needs several multi-megabyte intermediates (float32 RGBA accumulators, lookup
indices). Allocated afresh per frame, glibc hands such blocks back to the kernel and every frame
pays page faults for them again, which doubled the cost of the RGB model. The buffers here belong
to the calling thread, have undefined contents, and must never be returned to a caller or kept
after the call that asked for them; each call site uses its own key.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

_LOCAL = threading.local()


def scratch(key: str, shape: tuple[int, ...], dtype: DTypeLike) -> NDArray[Any]:
    """The calling thread's buffer `key` with this shape and dtype (contents undefined)."""
    buffers: dict[str, NDArray[Any]] | None = getattr(_LOCAL, "buffers", None)
    if buffers is None:
        buffers = {}
        _LOCAL.buffers = buffers
    dt = np.dtype(dtype)
    buf = buffers.get(key)
    if buf is None or buf.shape != shape or buf.dtype != dt:
        buf = np.empty(shape, dt)
        buffers[key] = buf
    return buf
