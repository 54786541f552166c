"""The per-thread scratch arena: arrays of one frame never overlap, nested frames stack above
their parent, memory is reused by the next frame, and outputs of the models never alias it."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from grade_noise.depth import depth_noise, depth_preset
from grade_noise.scratch import scratch_frame


def test_arrays_of_open_frames_never_overlap() -> None:
    with scratch_frame() as outer:
        a = outer.array((100, 7), np.float32)
        with scratch_frame() as inner:
            b = inner.array((3, 5), np.uint16)
            c = inner.array((4096,), np.uint8)
            assert not np.shares_memory(a, b)
            assert not np.shares_memory(b, c)
            assert not np.shares_memory(a, c)
        d = outer.array((10,), np.bool_)
        assert not np.shares_memory(a, d)
    for arr, shape, dtype in ((a, (100, 7), np.float32), (c, (4096,), np.uint8)):
        assert arr.shape == shape
        assert arr.dtype == dtype
        assert arr.ctypes.data % 64 == 0


def test_memory_is_reused_by_the_next_frame() -> None:
    with scratch_frame() as first:  # grows the arena, when needed, as the frame closes
        first.array((1 << 21,), np.uint8)
    with scratch_frame() as second:
        x = second.array((1 << 20,), np.uint8)
    with scratch_frame() as third:
        y = third.array((1 << 19,), np.float32)  # other shape and type, same bytes
    assert np.shares_memory(x, y)


def test_threads_have_their_own_arena() -> None:
    addresses: list[int] = []

    def worker() -> None:
        with scratch_frame() as frame:
            frame.array((1 << 16,), np.uint8)
        with scratch_frame() as frame:
            addresses.append(frame.array((1 << 16,), np.uint8).ctypes.data)

    with scratch_frame() as frame:
        mine = frame.array((1 << 16,), np.uint8)
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert len(addresses) == 1
    assert addresses[0] != mine.ctypes.data


@pytest.mark.parametrize("preset", ["stereo_3_5m", "structured_light", "cutoff_5m"])
def test_depth_outputs_never_share_scratch_memory(preset: str) -> None:
    rng = np.random.default_rng(0)
    z = rng.uniform(0.2, 6.0, (60, 80)).astype(np.float32)
    z[rng.random(z.shape) < 0.3] = np.nan  # scattered invalid pixels
    params = depth_preset(preset)
    first = depth_noise(z, 60.0, np.random.default_rng(1), params)
    kept = first.copy()
    second = depth_noise(z[::-1].copy(), 60.0, np.random.default_rng(2), params)
    np.testing.assert_array_equal(first, kept)
    assert not np.shares_memory(first, second)
    # every input NaN stays invalid, and the outputs are exactly those of a fresh run
    assert np.all(np.isnan(first[np.isnan(z)]))
    np.testing.assert_array_equal(depth_noise(z, 60.0, np.random.default_rng(1), params), kept)
