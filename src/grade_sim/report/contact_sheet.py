"""A contact sheet of a run: a few RGB / depth / instance frames side by side."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from grade_common.atomic import StagedOutput
from grade_common.errors import GradeError
from grade_common.tum import DEPTH_SCALE


def _colorize_depth(depth_u16: np.ndarray, max_m: float) -> np.ndarray:
    metres = depth_u16.astype(np.float32) / DEPTH_SCALE
    scaled = np.clip(metres / max_m, 0, 1)
    img: np.ndarray = np.asarray(
        cv2.applyColorMap((scaled * 255).astype(np.uint8), cv2.COLORMAP_VIRIDIS)
    )
    img[depth_u16 == 0] = 0
    return img


def _colorize_instances(ids: np.ndarray) -> np.ndarray:
    # A fixed hash per id so the same actor keeps its colour across frames.
    hashed = (ids.astype(np.uint32) * np.uint32(2654435761)) >> np.uint32(8)
    img = np.stack([(hashed >> s) & 0xFF for s in (0, 8, 16)], axis=-1).astype(np.uint8)
    img[ids == 0] = 0
    return img


def contact_sheet(camera_dir: Path, out: Path, frames: int = 4, width: int = 320) -> Path:
    """Write a PNG with `frames` evenly spaced frames (rows) of RGB, depth and instance ids.

    Raises:
        GradeError: the camera directory holds no frames.
    """
    # Frame names are stamps in seconds: ordered by value ("14.0" comes after "9.9").
    rgb_files = sorted((camera_dir / "rgb").glob("*.png"), key=lambda p: float(p.stem))
    if not rgb_files:
        raise GradeError(f"no RGB frames in {camera_dir / 'rgb'}")
    picks = [
        rgb_files[int(i)] for i in np.linspace(0, len(rgb_files) - 1, min(frames, len(rgb_files)))
    ]
    rows = []
    for f in picks:
        rgb = cv2.imread(str(f))
        if rgb is None:
            raise GradeError(f"cannot read {f}")
        h, w = rgb.shape[:2]
        scale = width / w
        size = (width, round(h * scale))
        tiles = [cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)]
        depth = cv2.imread(str(camera_dir / "depth" / f.name), cv2.IMREAD_UNCHANGED)
        if depth is not None:
            tiles.append(
                cv2.resize(_colorize_depth(depth, 8.0), size, interpolation=cv2.INTER_NEAREST)
            )
        ids = cv2.imread(str(camera_dir / "instance" / f.name), cv2.IMREAD_UNCHANGED)
        if ids is not None:
            tiles.append(
                cv2.resize(_colorize_instances(ids), size, interpolation=cv2.INTER_NEAREST)
            )
        row = np.hstack(tiles)
        cv2.putText(
            row,
            f"t={f.stem} s",
            (6, 18),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.5,
            (255, 255, 255),
            1,
            cv2.LINE_AA,
        )
        rows.append(row)
    sheet = np.vstack(rows)
    with StagedOutput(out, overwrite=True) as tmp:
        cv2.imwrite(str(tmp), sheet)
    return out
