"""Fidelity metrics: SSIM (standard definition), depth MAE, pose deviation, joint-chain poses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from grade_common.rotations import quat_from_rpy, quat_to_matrix
from grade_replay.fidelity import (
    SSIM_SIGMA,
    SSIM_WINDOW,
    FidelityError,
    FidelityReport,
    Stats,
    base_poses,
    camera_fidelity,
    depth_mae,
    pose_deviation,
    ssim,
)
from grade_sim.config.scenario import RobotConfig, RobotKind
from grade_sim.robots.model import robot_model

C1 = (0.01 * 255) ** 2
C2 = (0.03 * 255) ** 2


def _rng_image(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize("shape", [(40, 50), (40, 50, 3)])
def test_ssim_of_identical_images_is_exactly_one(shape: tuple[int, ...]) -> None:
    img = _rng_image(1, shape)
    assert ssim(img, img.copy()) == 1.0


def test_ssim_of_constant_images_matches_the_closed_form() -> None:
    # Constant images: no variance, SSIM = luminance term (2ab + C1) / (a^2 + b^2 + C1).
    a = np.full((20, 20), 100, dtype=np.uint8)
    b = np.full((20, 20), 140, dtype=np.uint8)
    expected = (2 * 100 * 140 + C1) / (100**2 + 140**2 + C1)
    assert ssim(a, b) == pytest.approx(expected, rel=1e-12)


def test_ssim_on_one_window_equals_the_weighted_statistics_by_hand() -> None:
    # An 11x11 image has exactly one valid window: compute its weighted moments directly.
    a = _rng_image(2, (SSIM_WINDOW, SSIM_WINDOW)).astype(np.float64)
    b = np.clip(a + np.random.default_rng(3).normal(0, 20, a.shape), 0, 255)
    r = np.arange(SSIM_WINDOW) - SSIM_WINDOW // 2
    g = np.exp(-(r[:, None] ** 2 + r[None, :] ** 2) / (2 * SSIM_SIGMA**2))
    w = g / g.sum()
    mx, my = (w * a).sum(), (w * b).sum()
    vx, vy = (w * (a - mx) ** 2).sum(), (w * (b - my) ** 2).sum()
    cxy = (w * (a - mx) * (b - my)).sum()
    expected = ((2 * mx * my + C1) * (2 * cxy + C2)) / ((mx**2 + my**2 + C1) * (vx + vy + C2))
    assert ssim(a, b) == pytest.approx(expected, rel=1e-9)


def test_ssim_is_symmetric_and_falls_with_noise() -> None:
    img = cv2.GaussianBlur(_rng_image(4, (60, 80, 3)), (7, 7), 2)
    rng = np.random.default_rng(5)
    values = []
    for sigma in (2.0, 10.0, 40.0):
        noisy = np.clip(img + rng.normal(0, sigma, img.shape), 0, 255).astype(np.uint8)
        assert ssim(img, noisy) == pytest.approx(ssim(noisy, img), rel=1e-12)
        values.append(ssim(img, noisy))
    assert 1.0 > values[0] > values[1] > values[2] > -1.0


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "match"),
    [((20, 20), (20, 21), "shapes differ"), ((10, 40), (10, 40), "smaller than the 11x11")],
)
def test_ssim_rejects_bad_shapes(
    a_shape: tuple[int, int], b_shape: tuple[int, int], match: str
) -> None:
    with pytest.raises(FidelityError, match=match):
        ssim(np.zeros(a_shape), np.zeros(b_shape))


def test_depth_mae_uses_pixels_valid_in_both() -> None:
    a = np.array([[1.0, 2.0], [0.0, 4.0]])
    b = np.array([[1.5, 0.0], [3.0, 3.0]])
    mae, n = depth_mae(a, b)
    assert n == 2
    assert mae == pytest.approx((0.5 + 1.0) / 2)
    mae0, n0 = depth_mae(np.zeros((2, 2)), b)
    assert n0 == 0
    assert math.isnan(mae0)


def test_pose_deviation_angles_and_zero_for_identical() -> None:
    qa = quat_from_rpy(0.1, -0.2, 0.3)
    qb = quat_from_rpy(0.1, -0.2, 0.3 + 1e-7)
    qc = quat_from_rpy(0.1, -0.2, 0.3 + 2.5)
    pa = np.array([[1.0, 2.0, 3.0]] * 4)
    pb = pa + np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    dpos, ang = pose_deviation(pa, np.array([qa] * 4), pb, np.array([qa, qb, -qc, qc]))
    assert dpos.tolist() == [0.0, 5.0, 0.0, 0.0]
    assert ang[0] == 0.0
    assert ang[1] == pytest.approx(1e-7, rel=1e-6)
    # q and -q are the same rotation.
    assert ang[2] == pytest.approx(2.5, rel=1e-12)
    assert ang[3] == pytest.approx(2.5, rel=1e-12)


def test_base_poses_of_a_uav_chain_is_translation_then_rz_ry_rx() -> None:
    model = robot_model(RobotConfig(name="uav1", type=RobotKind.UAV))
    assert model.joint_names == ("x", "y", "z", "yaw", "pitch", "roll")
    q = np.array([[1.0, -2.0, 1.5, 0.7, 0.2, -0.3], [0.0, 0.0, 0.0, -3.0, 0.0, 0.1]])
    pos, quat = base_poses(model, q)
    for row, p, qt in zip(q, pos, quat, strict=True):
        np.testing.assert_allclose(p, row[:3], atol=1e-15)
        expected = quat_to_matrix(quat_from_rpy(row[5], row[4], row[3]))
        np.testing.assert_allclose(quat_to_matrix(qt), expected, atol=1e-12)


def test_base_poses_of_omni_skips_the_camera_joint() -> None:
    model = robot_model(RobotConfig(name="ugv", type=RobotKind.OMNI))
    pos, quat = base_poses(model, np.array([[1.0, 2.0, 0.5, 1.2]]))
    np.testing.assert_allclose(pos[0], [1.0, 2.0, 0.0])
    np.testing.assert_allclose(
        quat_to_matrix(quat[0]), quat_to_matrix(quat_from_rpy(0, 0, 0.5)), atol=1e-12
    )


def _camera_dir(root: Path, rgb: np.ndarray, depth_m: np.ndarray, width: int = 32) -> Path:
    root.mkdir(parents=True)
    for sub in ("rgb", "depth", "instance"):
        (root / sub).mkdir()
    (root / "camera_info.yaml").write_text(
        yaml.safe_dump({"width": width, "height": 24, "K": [20.0, 0, 15.5, 0, 20.0, 11.5, 0, 0, 1]})
    )
    cv2.imwrite(str(root / "rgb" / "1.000000.png"), rgb)
    cv2.imwrite(str(root / "depth" / "1.000000.png"), np.rint(depth_m * 5000).astype(np.uint16))
    cv2.imwrite(str(root / "instance" / "1.000000.png"), np.zeros((24, 32), np.uint16))
    for name in ("rgb", "depth", "instance"):
        (root / f"{name}.txt").write_text(f"# x\n1.000000 {name}/1.000000.png\n")
    (root / "groundtruth.txt").write_text("# x\n1.000000 1 2 3 0 0 0 1\n")
    return root


def test_camera_fidelity_compares_frames_and_skips_changed_intrinsics(tmp_path: Path) -> None:
    rgb = _rng_image(6, (24, 32, 3))
    depth = np.full((24, 32), 2.0)
    depth[0, :] = 0.0
    orig = _camera_dir(tmp_path / "a", rgb, depth)
    same = _camera_dir(tmp_path / "b", rgb, depth)
    other_rgb = rgb.copy()
    other_rgb[5:10, 5:10] = 0
    changed = _camera_dir(tmp_path / "c", other_rgb, depth + 0.01)
    wider = _camera_dir(tmp_path / "d", rgb, depth, width=40)

    exact = camera_fidelity(orig, same, "uav1", "camera")
    assert exact.compared
    assert exact.frames_compared == 1
    assert exact.rgb_identical_frames == 1
    assert exact.ssim.mean == 1.0
    assert exact.depth_mae_m.max == 0.0
    assert exact.pose_position_m.max == 0.0

    diff = camera_fidelity(orig, changed, "uav1", "camera")
    assert diff.rgb_identical_frames == 0
    assert diff.ssim.mean < 1.0
    assert diff.depth_mae_m.mean == pytest.approx(0.01, abs=2e-4)
    assert diff.frames[0].depth_valid_px == 23 * 32

    skipped = camera_fidelity(orig, wider, "uav1", "camera")
    assert not skipped.compared
    assert "intrinsics" in skipped.reason
    missing = camera_fidelity(orig, tmp_path / "none", "uav1", "camera")
    assert not missing.compared
    assert "not in the replay" in missing.reason

    report = FidelityReport("teleport", (), (exact, diff, skipped))
    assert not report.exact
    path = report.write(tmp_path)
    data = json.loads(path.read_text())
    assert data["cameras"][1]["frames"][0]["ssim"] == pytest.approx(diff.ssim.mean)
    assert "not compared: intrinsics" in report.format_table()
    assert FidelityReport("teleport", (), (exact,)).exact


def test_camera_fidelity_names_an_unreadable_image(tmp_path: Path) -> None:
    rgb = _rng_image(7, (24, 32, 3))
    orig = _camera_dir(tmp_path / "a", rgb, np.ones((24, 32)))
    broken = _camera_dir(tmp_path / "b", rgb, np.ones((24, 32)))
    (broken / "rgb" / "1.000000.png").write_bytes(b"not a png")
    with pytest.raises(FidelityError, match=r"b/rgb/1\.000000\.png"):
        camera_fidelity(orig, broken, "uav1", "camera")


def test_stats_of_empty_sample_is_nan_and_serialises_as_null() -> None:
    s = Stats.of([])
    assert s.n == 0
    assert math.isnan(s.mean)
    assert s.to_mapping()["mean"] is None
    assert Stats.of([1.0, 3.0]) == Stats(2, 2.0, 1.0, 1.0, 3.0)
