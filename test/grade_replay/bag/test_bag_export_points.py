"""`grade bag export --points`: PointCloud2 -> KITTI .bin and SemanticKITTI .label, exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bagkit import NS, BagSpec, decode, image, write_bag

from grade_cli.main import main
from grade_common import kitti
from grade_replay.bag.export import ExportConfig, export_bag
from grade_replay.errors import BagFormatError
from grade_sim.sensors import messages
from grade_sim.sensors.lidar.cloud import POINT_DTYPE

CLOUD = "sensor_msgs/msg/PointCloud2"
RNG = np.random.default_rng(5)


def _points(n: int) -> np.ndarray:
    p = np.zeros(n, dtype=POINT_DTYPE)
    for name in ("x", "y", "z"):
        p[name] = RNG.uniform(-20, 20, n)
    p["intensity"] = RNG.uniform(0, 1, n)
    p["t"] = np.arange(n) * 1000
    p["ring"] = np.arange(n) % 16
    p["class_id"] = RNG.integers(0, 9, n)
    p["instance_id"] = RNG.integers(0, 40, n)
    return p


SCANS = [_points(100), _points(57)]


def _bag(path: Path) -> Path:
    spec = BagSpec()
    for k, pts in enumerate(SCANS):
        t_ns = NS + k * NS // 10
        spec.add(
            "/r/lidar/points",
            CLOUD,
            t_ns,
            decode(messages.pointcloud2(t_ns, "r/lidar_link", pts), CLOUD),
        )
    spec.add(
        "/r/cam", "sensor_msgs/msg/Image", NS, image(NS, np.zeros((2, 2), np.uint16), "mono16")
    )
    return write_bag(path, spec)


def test_points_become_kitti_bin_and_label_files(tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag")
    out = tmp_path / "out"
    report = export_bag(bag, out, ExportConfig(points_topic="/r/lidar/points"))
    assert report.scans == 2
    for k, pts in enumerate(SCANS):
        xyzi = np.fromfile(out / kitti.SCANS_DIR / f"{k:06d}.bin", dtype="<f4").reshape(-1, 4)
        np.testing.assert_array_equal(xyzi[:, 0], pts["x"])
        np.testing.assert_array_equal(xyzi[:, 3], pts["intensity"])
        instance, cls = kitti.read_label(out / kitti.LABELS_DIR / f"{k:06d}.label")
        np.testing.assert_array_equal(instance, pts["instance_id"])
        np.testing.assert_array_equal(cls, pts["class_id"])
    times = np.loadtxt(out / kitti.TIMES_TXT)
    np.testing.assert_allclose(times, [1.0, 1.1])


def test_cli_exports_points_and_rejects_a_non_cloud_topic(tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag")
    assert (
        main(
            [
                "bag",
                "--no-progress",
                "export",
                str(bag),
                "--out",
                str(tmp_path / "o"),
                "--points",
                "/r/lidar/points",
            ]
        )
        == 0
    )
    assert (tmp_path / "o" / kitti.SCANS_DIR / "000001.bin").is_file()
    with pytest.raises(BagFormatError, match="not sensor_msgs/msg/PointCloud2"):
        export_bag(bag, tmp_path / "x", ExportConfig(points_topic="/r/cam"))
    assert not (tmp_path / "x").exists()
