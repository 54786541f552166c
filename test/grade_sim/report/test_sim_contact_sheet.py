"""The run contact sheet: frames in time order, RGB / depth / instances side by side."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from grade_common.errors import GradeError
from grade_sim.report.contact_sheet import contact_sheet

# Frame stamps whose text order differs from their time order.
STAMPS = ("1.000000", "4.966667", "9.966667", "14.000000")


def _camera(tmp_path: Path) -> Path:
    cam = tmp_path / "camera"
    for kind in ("rgb", "depth", "instance"):
        (cam / kind).mkdir(parents=True)
    for k, stamp in enumerate(STAMPS):
        rgb = np.full((48, 64, 3), 40 * (k + 1), dtype=np.uint8)  # brighter with time
        assert cv2.imwrite(str(cam / "rgb" / f"{stamp}.png"), rgb)
        assert cv2.imwrite(str(cam / "depth" / f"{stamp}.png"), np.full((48, 64), 1000, np.uint16))
        assert cv2.imwrite(str(cam / "instance" / f"{stamp}.png"), np.zeros((48, 64), np.uint16))
    return cam


def test_rows_follow_the_stamps_in_time_order(tmp_path: Path) -> None:
    out = contact_sheet(_camera(tmp_path), tmp_path / "sheet.png", frames=4, width=64)
    sheet = cv2.imread(str(out))
    assert sheet.shape == (4 * 48, 3 * 64, 3)
    # The bottom-right pixel of each row's RGB tile (clear of the stamp text).
    levels = [int(sheet[48 * r + 47, 63, 0]) for r in range(4)]
    assert levels == [40, 80, 120, 160]


def test_no_frames_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "camera" / "rgb").mkdir(parents=True)
    with pytest.raises(GradeError, match="no RGB frames in"):
        contact_sheet(tmp_path / "camera", tmp_path / "sheet.png")
