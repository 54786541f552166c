"""Per-thread scratch memory shared by all noise models, reused from one call to the next.

A 640x480 frame needs several multi-megabyte intermediates (float32 RGBA accumulators, depth
gradients, lookup indices). Allocated afresh per call, glibc hands such blocks back to the kernel
and every call pays page faults for them again. Kept per model, the RGB and depth intermediates
add up to ~25 MB, and the models, run one after the other as the noise node does, evict each
other's from the last-level cache (about 0.4 ms a frame). So each thread has one arena: a call
opens a `scratch_frame`, takes its arrays from it, and they go back when the frame closes; the
next call, whichever model it runs, reuses the same (still cached) memory.

Frames nest like a stack (a frame opened inside another takes memory above the outer one's).
Arrays from a frame have undefined contents and must never be returned to a caller or used after
the frame closes.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

# Page-aligned arrays: SIMD-aligned rows, and no cache line shared between two arrays.
_ALIGN = 4096


class _Arena:
    """One thread's scratch memory: a byte buffer used from the bottom up by the open frames."""

    def __init__(self) -> None:
        self.buffer: NDArray[np.uint8] = np.empty(0, np.uint8)
        self.top = 0  # bytes in use by the open frames
        self.high_water = 0  # the most bytes ever asked for at once
        self.open_frames = 0


_LOCAL = threading.local()


def _arena() -> _Arena:
    arena: _Arena | None = getattr(_LOCAL, "arena", None)
    if arena is None:
        arena = _Arena()
        _LOCAL.arena = arena
    return arena


class ScratchFrame:
    """Hands out arrays from the thread's arena until its `scratch_frame` block ends."""

    __slots__ = ("_arena",)

    def __init__(self, arena: _Arena) -> None:
        self._arena = arena

    def array(self, shape: tuple[int, ...], dtype: DTypeLike) -> NDArray[Any]:
        """A new array view of this frame's memory (contents undefined)."""
        dt = np.dtype(dtype)
        nbytes = math.prod(shape) * dt.itemsize
        arena = self._arena
        start = arena.top
        arena.top = start + -(-nbytes // _ALIGN) * _ALIGN
        arena.high_water = max(arena.high_water, arena.top)
        if arena.top <= arena.buffer.size:
            raw = arena.buffer[start : start + nbytes]
        else:  # the arena grows when no frame is open; until then, plain memory
            raw = _aligned(nbytes)
        return raw.view(dt).reshape(shape)


def _aligned(nbytes: int) -> NDArray[np.uint8]:
    """New memory of nbytes starting at a multiple of _ALIGN."""
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    offset = -raw.ctypes.data % _ALIGN
    return raw[offset : offset + nbytes]


@contextmanager
def scratch_frame() -> Iterator[ScratchFrame]:
    """Open a frame of the calling thread's arena; its arrays are released when the block ends."""
    arena = _arena()
    mark = arena.top
    arena.open_frames += 1
    try:
        yield ScratchFrame(arena)
    finally:
        arena.top = mark
        arena.open_frames -= 1
        if arena.open_frames == 0 and arena.high_water > arena.buffer.size:
            arena.buffer = _aligned(arena.high_water)
