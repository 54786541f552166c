"""PNG encodings of flow (KITTI) and normals round-trip within their quantisation."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from grade_common.gt_png import (
    flow_to_png_u16,
    normals_to_png_u16,
    png_u16_to_flow,
    png_u16_to_normals,
)


def test_flow_round_trips_through_a_png_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    flow = rng.uniform(-100, 100, size=(20, 30, 2)).astype(np.float32)
    flow[3, 4] = np.nan
    path = tmp_path / "flow.png"
    assert cv2.imwrite(str(path), flow_to_png_u16(flow)[..., ::-1])
    back = png_u16_to_flow(cv2.imread(str(path), cv2.IMREAD_UNCHANGED)[..., ::-1])
    assert np.isnan(back[3, 4]).all()
    ok = np.isfinite(flow).all(axis=-1)
    assert np.abs(back[ok] - flow[ok]).max() <= 0.5 / 64 + 1e-6
    # KITTI: the valid flag is the third channel in the file's RGB order.
    assert flow_to_png_u16(np.zeros((1, 1, 2), np.float32)).tolist() == [[[32768, 32768, 1]]]


def test_normals_round_trip_and_keep_no_surface() -> None:
    rng = np.random.default_rng(1)
    n = rng.normal(size=(10, 12, 3))
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    n[0, 0] = 0
    back = png_u16_to_normals(normals_to_png_u16(n.astype(np.float32)))
    assert np.all(back[0, 0] == 0)
    assert np.abs(back - n).max() < 2e-5
