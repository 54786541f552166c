"""A backend over a recorded camera folder, frame by frame, as the live node would see it."""

from __future__ import annotations

from pathlib import Path

from grade_slam.backends import create_backend
from grade_slam.camera_folder import read_camera_folder
from grade_slam.config import SlamConfig
from grade_slam.interfaces import FrameTracker


def track_camera_folder(folder: str | Path, config: SlamConfig) -> FrameTracker:
    """Track every RGB-D frame of `folder`; the tracker (closed) holds the trajectory and the
    counts."""
    tracker = create_backend(config)
    try:
        for frame in read_camera_folder(folder, with_dynamic_mask=config.mask_dynamic):
            tracker.process(frame)
    finally:
        tracker.close()
    return tracker
