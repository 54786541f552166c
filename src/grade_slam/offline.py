"""A backend over a recorded camera folder, frame by frame, as the live node would see it."""

from __future__ import annotations

from pathlib import Path

from grade_slam.backends import create_backend
from grade_slam.camera_folder import read_camera_folder
from grade_slam.config import SlamConfig
from grade_slam.tracker import RgbdTracker


def track_camera_folder(folder: str | Path, config: SlamConfig) -> RgbdTracker:
    """Track every RGB-D frame of `folder`; the tracker holds the trajectory and the counts."""
    tracker = RgbdTracker(create_backend(config), config)
    for frame in read_camera_folder(folder):
        tracker.process(frame)
    return tracker
