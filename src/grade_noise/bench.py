"""`grade bench noise`: single-core speed of the noise models at 640x480, and the real-time factor
of a 30 Hz RGB-D camera plus a 240 Hz IMU (target: >= 5x real time).

Rates are per CPU-second of this process, pinned to one core with OpenCV single-threaded, so
they do not depend on what else the machine runs."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import cv2
import numpy as np

from grade_noise.depth import depth_noise, depth_preset
from grade_noise.imu import imu_noise, imu_preset, initial_imu_state
from grade_noise.rgb import (
    CameraMotion,
    RgbSequenceState,
    blur_subposes,
    intrinsics_from_hfov,
    pixel_motion_px,
    rgb_noise,
    rgb_preset,
)


def _rate(func: Callable[[], object], min_s: float) -> float:
    """Calls per CPU-second of func (process time, so other load on the machine does not count),
    timed over at least min_s of wall time after one warm-up call."""
    func()
    n, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while True:
        func()
        n += 1
        if time.perf_counter() - start >= min_s:
            return n / max(time.process_time() - cpu_start, 1e-9)


def main(argv: list[str]) -> int:
    """Print frames/s and samples/s of the noise models on one core."""
    parser = argparse.ArgumentParser(prog="grade bench noise", description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument(
        "--omega",
        type=float,
        default=0.5,
        help="camera angular speed for blur/rolling shutter, rad/s",
    )
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = np.random.default_rng(0)
    w, h = 640, 480
    k = intrinsics_from_hfov(w, h, 88.95)
    yy, xx = np.mgrid[0:h, 0:w]
    image = np.stack([(xx * 3) % 256, (yy * 2) % 256, ((xx ^ yy) * 5) % 256], 2).astype(np.uint8)
    axis = np.array([0.3, 1.0, 0.2]) / np.linalg.norm([0.3, 1.0, 0.2])
    motion = CameraMotion(axis * args.omega, np.array([0.3, 0.0, 0.5]))
    state = RgbSequenceState(exposure_s=0.02, readout_s=0.015)
    travel = pixel_motion_px(k, (w, h), motion, state.exposure_s, 2.0)
    print(
        f"camera motion: |omega| {args.omega} rad/s, |v| 0.58 m/s, plane at 2 m: "
        f"{travel:.1f} px during the 0.02 s exposure -> "
        f"{blur_subposes(travel, 1.0, 64)} blur sub-poses"
    )
    blur_rs = _rate(
        lambda: rgb_noise(image, k, motion, state, rng, rgb_preset("blur_only"), 2.0), args.seconds
    )
    rgb_full = _rate(
        lambda: rgb_noise(image, k, motion, state, rng, rgb_preset("online"), 2.0), args.seconds
    )
    depth_img = (1.0 + 2.0 * xx / w).astype(np.float32)
    f = float(k[0, 0])
    depth_fps = _rate(
        lambda: depth_noise(depth_img, f, rng, depth_preset("stereo_3_5m")), args.seconds
    )
    params = imu_preset("drone")
    imu_state = [initial_imu_state(params, rng)]
    gyro, accel = np.zeros(3), np.array([0.0, 0.0, 9.81])

    def one_imu() -> None:
        _, _, imu_state[0] = imu_noise(gyro, accel, 1 / 240, imu_state[0], rng, params)

    imu_per_msg = _rate(one_imu, args.seconds)
    block = np.zeros((24_000, 3))
    imu_batch = 24_000 * _rate(
        lambda: imu_noise(block, block, 1 / 240, imu_state[0], rng, params), args.seconds
    )
    print(f"RGB 640x480 blur + rolling shutter : {blur_rs:8.1f} frames/s")
    print(f"RGB 640x480 + shot/read noise      : {rgb_full:8.1f} frames/s")
    print(f"depth 640x480 stereo_3_5m          : {depth_fps:8.1f} frames/s")
    print(f"IMU, one message per call (online) : {imu_per_msg:8.0f} samples/s")
    print(f"IMU, 24000-sample blocks (offline) : {imu_batch:8.0f} samples/s")
    for label, rgb_rate in (("blur + rolling shutter", blur_rs), ("full RGB noise", rgb_full)):
        cost_s = 30 / rgb_rate + 30 / depth_fps + 240 / imu_per_msg
        factor = 1.0 / cost_s
        verdict = "meets" if factor >= 5.0 else "MISSES"
        print(
            f"30 Hz RGB-D ({label}) + 240 Hz IMU on one core: {factor:.2f}x real time "
            f"({verdict} the 5x target)"
        )
    return 0
