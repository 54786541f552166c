"""ORB-SLAM3 RGB-D-inertial without ROS: its generated settings (IMU noise from grade_noise's
presets, the camera-IMU extrinsic), the IMU samples handed out per frame, the mount between
sibling frames, and reading ORB-SLAM3's trajectory files back."""

from __future__ import annotations

import os
import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from grade_noise.imu import IMU_PRESETS
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamConfigError, SlamInputError
from grade_slam.frames import ImuBuffer, ImuSamples
from grade_slam.orb_slam3 import (
    _stdout_to_devnull,
    imu_settings,
    nearest_index,
    read_orb_tum,
    settings_yaml,
)
from grade_slam.rep105 import FrameChain

K = np.array([[325.9, 0.0, 319.5], [0.0, 325.9, 239.5], [0.0, 0.0, 1.0]])
# REP 103: the optical frame (z forward, x right, y down) 12 cm ahead of the IMU (x forward)
POSE_IMU_OPTICAL = np.array(
    [[0.0, 0.0, 1.0, 0.12], [-1.0, 0.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
)


def _pose(rotvec: tuple[float, float, float], xyz: tuple[float, float, float]) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = Rotation.from_rotvec(rotvec).as_matrix()
    m[:3, 3] = xyz
    return m


def _read_settings(text: str, tmp_path: object) -> cv2.FileStorage:
    path = f"{tmp_path}/settings.yaml"
    with open(path, "w") as f:
        f.write(text)
    return cv2.FileStorage(path, cv2.FILE_STORAGE_READ)


@pytest.mark.parametrize("preset", ["drone", "consumer"])
def test_inertial_settings_carry_the_noise_preset_and_the_extrinsic(
    preset: str, tmp_path: object
) -> None:
    config = SlamConfig(imu_noise_preset=preset, imu_rate_hz=240.0)
    text = settings_yaml(K, 640, 480, config, imu_settings(POSE_IMU_OPTICAL, config))
    # OpenCV's FileStorage is what ORB-SLAM3 reads the file with
    fs = _read_settings(text, tmp_path)
    noise = IMU_PRESETS[preset]
    assert fs.getNode("IMU.NoiseGyro").real() == pytest.approx(noise.gyro.noise_density)
    assert fs.getNode("IMU.NoiseAcc").real() == pytest.approx(noise.accel.noise_density)
    assert fs.getNode("IMU.GyroWalk").real() == pytest.approx(noise.gyro.random_walk)
    assert fs.getNode("IMU.AccWalk").real() == pytest.approx(noise.accel.random_walk)
    assert fs.getNode("IMU.Frequency").isInt()
    assert int(fs.getNode("IMU.Frequency").real()) == 240
    assert int(fs.getNode("IMU.fastInit").real()) == 1
    np.testing.assert_allclose(fs.getNode("Tbc").mat(), POSE_IMU_OPTICAL, atol=1e-7)
    assert fs.getNode("Camera.fx").real() == pytest.approx(325.9)


def test_rgbd_settings_have_no_imu_block() -> None:
    assert not re.search(r"^(Tbc|IMU\.)", settings_yaml(K, 640, 480, SlamConfig()), re.M)


@pytest.mark.parametrize(
    ("preset", "match"),
    [
        ("none", "imu_noise_preset = 'none' is invalid for ORB-SLAM3: its gyro noise density"),
        ("loud", r"imu_noise_preset = 'loud': unknown IMU noise preset 'loud'; available"),
    ],
)
def test_a_preset_orb_slam3_cannot_use_is_refused(preset: str, match: str) -> None:
    with pytest.raises(SlamConfigError, match=match):
        imu_settings(POSE_IMU_OPTICAL, SlamConfig(imu_noise_preset=preset))


def test_a_non_rigid_extrinsic_is_refused() -> None:
    bad = POSE_IMU_OPTICAL.copy()
    bad[:3, :3] *= 2.0
    with pytest.raises(SlamConfigError, match="pose_imu_optical must be a rigid 4x4"):
        imu_settings(bad, SlamConfig())


def test_imu_buffer_hands_out_the_samples_since_the_previous_frame() -> None:
    buffer = ImuBuffer()
    period_ns = 4_166_667  # 240 Hz
    for i in range(20):
        buffer.add(i * period_ns, (0.0, 0.0, 0.1 * i), (0.0, 0.0, 9.81))
    buffer.add(3 * period_ns, (9.0, 9.0, 9.0), (9.0, 9.0, 9.0))  # late: ignored
    assert buffer.received == 21
    frame_ns = 33_333_333  # 30 Hz
    assert buffer.covers(frame_ns)
    assert not buffer.covers(20 * period_ns)
    first = buffer.take_until(frame_ns, POSE_IMU_OPTICAL)
    second = buffer.take_until(2 * frame_ns, POSE_IMU_OPTICAL)
    assert first.stamps_ns.tolist() == [i * period_ns for i in range(8)]
    assert second.stamps_ns.tolist() == [i * period_ns for i in range(8, 16)]
    rows = second.as_orb_slam3_rows()
    assert rows.shape == (8, 7)
    np.testing.assert_allclose(rows[:, 0], second.stamps_ns * 1e-9)
    np.testing.assert_allclose(rows[:, 3], 0.1 * np.arange(8, 16))
    np.testing.assert_allclose(rows[:, 6], 9.81)
    assert buffer.take_until(2 * frame_ns, POSE_IMU_OPTICAL).stamps_ns.size == 0


def test_imu_samples_refuse_mismatched_shapes_and_unordered_stamps() -> None:
    with pytest.raises(SlamInputError, match=r"must be \(3, 3\)"):
        ImuSamples(np.arange(3), np.zeros((3, 3)), np.zeros((2, 3)), POSE_IMU_OPTICAL)
    with pytest.raises(SlamInputError, match="must increase strictly"):
        ImuSamples(np.array([2, 1]), np.zeros((2, 3)), np.zeros((2, 3)), POSE_IMU_OPTICAL)


def test_relative_gives_the_optical_frame_in_its_sibling_imu_frame() -> None:
    chain = FrameChain()
    base_imu = _pose((0.0, 0.0, 0.3), (0.0, 0.05, -0.02))
    base_camera = _pose((0.0, 0.0, 0.0), (0.2, 0.0, 0.0))
    camera_optical = _pose((-1.2092, 1.2092, -1.2092), (0.0, 0.0, 0.0))
    chain.add("uav1/base_link", "uav1/imu_link", base_imu)
    chain.add("uav1/base_link", "uav1/camera_link", base_camera)
    chain.add("uav1/camera_link", "uav1/camera_optical_frame", camera_optical)
    got = chain.relative("uav1/imu_link", "uav1/camera_optical_frame")
    np.testing.assert_allclose(got, np.linalg.inv(base_imu) @ base_camera @ camera_optical)
    with pytest.raises(SlamInputError, match="no transform chain joins 'uav1/imu_link' and 'x'"):
        chain.relative("uav1/imu_link", "x")


def test_orb_slam3_tum_rows_read_back_as_poses_and_match_frames_to_the_microsecond(
    tmp_path: object,
) -> None:
    # the layout ORB-SLAM3's SaveTrajectoryTUM writes: seconds to 6 digits, then xyz, qxyzw
    pose = _pose((0.0, 0.0, 0.5), (1.0, -2.0, 0.25))
    qx, qy, qz, qw = Rotation.from_matrix(pose[:3, :3]).as_quat()
    path = f"{tmp_path}/frames.txt"
    with open(path, "w") as f:
        f.write("3.000000 0 0 0 0 0 0 1\n")
        f.write(f"3.033333 1.0 -2.0 0.25 {qx:.9f} {qy:.9f} {qz:.9f} {qw:.9f}\n")
    stamps, poses = read_orb_tum(Path(path))
    assert stamps == [3_000_000_000, 3_033_333_000]
    np.testing.assert_allclose(poses[0], np.eye(4))
    np.testing.assert_allclose(poses[1], pose, atol=1e-8)
    # frames at 30 Hz in ns: a row matches its frame, not a neighbour, and nothing 1 ms off
    frames_ns = [3_000_000_000, 3_033_333_333, 3_066_666_667]
    assert [nearest_index(frames_ns, s) for s in stamps] == [0, 1]
    assert nearest_index(frames_ns, 3_050_000_000) is None
    assert nearest_index([], 3_000_000_000) is None
    assert read_orb_tum(Path(f"{tmp_path}/missing.txt")) == ([], [])


def test_the_per_frame_keyframe_read_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    """ORB-SLAM3's C++ writes "Saving keyframe trajectory ..." to file descriptor 1 at every
    keyframe read (once a frame): the read's block sends it to /dev/null, and output before and
    after it (Python's buffered too) still arrives."""
    print("before", end=" ")
    with _stdout_to_devnull():
        os.write(1, b"Saving keyframe trajectory to keyframes.txt ...\n")
    os.write(1, b"after\n")
    assert capfd.readouterr().out == "before after\n"
