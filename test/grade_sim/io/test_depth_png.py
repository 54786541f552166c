"""The compiled depth PNG encoding equals grade_common.tum's numpy formula, edge cases too."""

from __future__ import annotations

import numpy as np
import pytest

from grade_common.tum import MAX_DEPTH_M
from grade_common.tum import depth_to_png_u16 as numpy_formula
from grade_sim.io.depth_png import depth_to_png_u16


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_equals_the_numpy_formula(dtype: type[np.floating]) -> None:
    rng = np.random.default_rng(5)
    depth = (rng.random((48, 64)) * 16.0 - 1.0).astype(dtype)
    top = dtype(MAX_DEPTH_M)
    edges = [0.0, -0.0, -1.0, np.nan, np.inf, -np.inf, 1e-9, 0.5 / 5000, 1.5 / 5000, 2.5 / 5000]
    edges += [top, np.nextafter(top, dtype(0)), np.nextafter(top, dtype(20))]
    depth.flat[: len(edges)] = np.array(edges, dtype=dtype)
    got = depth_to_png_u16(depth)
    assert got.dtype == np.uint16
    assert got.shape == depth.shape
    np.testing.assert_array_equal(got, numpy_formula(depth))
    np.testing.assert_array_equal(depth_to_png_u16(depth[:, ::2]), numpy_formula(depth[:, ::2]))
