"""A backend over a recorded camera folder, frame by frame, as the live node would see it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from grade_common.rundir import run_root_of
from grade_common.tum import read_camera_info
from grade_slam.backends import BACKENDS, create_backend
from grade_slam.camera_folder import read_camera_folder
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamConfigError, SlamInputError
from grade_slam.interfaces import FrameTracker
from grade_slam.person_segmenter import LearnedMasks


def track_camera_folder(
    folder: str | Path,
    config: SlamConfig,
    *,
    imu: str = "imu",
    imu_frame: str = "imu_link",
    learned_masks: LearnedMasks | None = None,
) -> FrameTracker:
    """Track every RGB-D frame of `folder`; the tracker (closed) holds the trajectory and the
    counts. An inertial backend also gets, with each frame, the samples of /<robot>/<imu> since
    the previous one and the camera's mount in <robot>/<imu_frame>, from the run's bag.

    Args:
        learned_masks: with `mask_dynamic`, a segmenter's person masks
            (`person_segmenter.segment_folder`) take the place of the semantic image's: the
            DynaSLAM-style backend, masked by the oracle's mechanism.

    Raises:
        SlamInputError: an inertial backend on a folder outside a run directory with a bag.
        SlamConfigError: learned masks without `mask_dynamic`.
    """
    if learned_masks is not None and not config.mask_dynamic:
        raise SlamConfigError("learned masks need mask_dynamic = true (they mask like the oracle)")
    from_semantic = config.mask_dynamic and learned_masks is None
    tracker = create_backend(config)
    try:
        buffer = pose_imu_optical = None
        if BACKENDS[config.backend].needs_imu:
            from grade_slam.bag_imu import read_bag_imu

            root = run_root_of(folder)
            if root is None:
                raise SlamInputError(
                    f"{folder}: the inertial backend needs the run's bag; give a camera folder "
                    "inside its run directory (RUN/gt/<robot>/<camera>)"
                )
            robot = Path(folder).resolve().parent.name
            optical = read_camera_info(Path(folder) / "camera_info.yaml", error=SlamInputError)
            buffer, pose_imu_optical = read_bag_imu(
                root, f"/{robot}/{imu}", f"{robot}/{imu_frame}", optical.frame_id
            )
        for frame in read_camera_folder(folder, with_dynamic_mask=from_semantic):
            if learned_masks is not None:
                mask = learned_masks.mask(frame.stamp_ns, frame.depth_m.shape)
                frame = dataclasses.replace(frame, dynamic_mask=mask)
            if buffer is not None and pose_imu_optical is not None:
                samples = buffer.take_until(frame.stamp_ns, pose_imu_optical)
                frame = dataclasses.replace(frame, imu=samples)
            tracker.process(frame)
    finally:
        tracker.close()
    return tracker
