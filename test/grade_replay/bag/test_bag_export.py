"""`grade bag export`: TUM trajectories and the TUM RGB-D layout, checked pixel by pixel."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from bagkit import NS, BagSpec, image, odometry, pose_stamped, tf_message, write_bag

from grade_common.tum import ImageKind
from grade_replay.bag.export import ExportConfig, export_bag
from grade_replay.errors import BagFormatError, ReplayConfigError, TopicNotFoundError

IMG = "sensor_msgs/msg/Image"
RNG = np.random.default_rng(3)
RGB = [RNG.integers(0, 256, (4, 6, 3), dtype=np.uint8) for _ in range(3)]
DEPTH = [np.array([[0.0, 0.2, 1.0], [2.5, np.nan, 20.0]], dtype=np.float32) + k for k in range(3)]
INSTANCE = [np.array([[0, 1, 2], [300, 65535, 7]], dtype=np.uint16) for _ in range(3)]


def _bag(path: Path) -> Path:
    spec = BagSpec(latched={"/tf_static"})
    spec.add(
        "/tf_static",
        "tf2_msgs/msg/TFMessage",
        NS,
        tf_message(NS, [("world", "r/odom", (0.0, 0.0, 0.0))]),
    )
    for k in range(3):
        t_ns = NS + k * NS // 30 + 7  # sub-microsecond part: names use six decimals
        spec.add("/cam/rgb", IMG, t_ns, image(t_ns, RGB[k], "rgb8"))
        spec.add("/cam/depth", IMG, t_ns, image(t_ns, DEPTH[k], "32FC1"))
        spec.add("/cam/instance", IMG, t_ns, image(t_ns, INSTANCE[k], "mono16"))
        spec.add(
            "/cam/pose",
            "geometry_msgs/msg/PoseStamped",
            t_ns,
            pose_stamped(t_ns, (k, 2.0, 3.0), (0.0, 0.0, 0.6, 0.8)),
        )
        spec.add(
            "/r/odom",
            "nav_msgs/msg/Odometry",
            t_ns,
            odometry(t_ns, (k, -1.0, 0.5), (0.0, 0.0, 0.0, 1.0)),
        )
        spec.add(
            "/tf",
            "tf2_msgs/msg/TFMessage",
            t_ns,
            tf_message(
                t_ns,
                [
                    ("r/odom", "r/base_link", (k + 0.5, 0.0, 0.0)),
                    ("r/base_link", "r/cam", (9.0, 9.0, 9.0)),
                ],
            ),
        )
    spec.messages.sort(key=lambda m: m[2])
    return write_bag(path, spec)


def _names() -> list[str]:
    return [f"{(NS + k * NS // 30 + 7) / NS:.6f}" for k in range(3)]


def test_images_go_to_the_tum_rgbd_layout(tmp_path: Path) -> None:
    out = tmp_path / "tum"
    report = export_bag(
        _bag(tmp_path / "b"),
        out,
        ExportConfig(
            images=(
                (ImageKind.RGB, "/cam/rgb"),
                (ImageKind.DEPTH, "/cam/depth"),
                (ImageKind.INSTANCE, "/cam/instance"),
            )
        ),
    )
    assert report.frames == {"rgb": 3, "depth": 3, "instance": 3}
    names = _names()
    assert names[0] == "1.000000"
    for kind in ("rgb", "depth", "instance"):
        lines = (out / f"{kind}.txt").read_text().splitlines()
        assert lines[0].startswith("#")
        assert lines[2:] == [f"{n} {kind}/{n}.png" for n in names]
    for k, name in enumerate(names):
        rgb = cv2.imread(str(out / "rgb" / f"{name}.png"), cv2.IMREAD_UNCHANGED)
        np.testing.assert_array_equal(cv2.cvtColor(rgb, cv2.COLOR_BGR2RGB), RGB[k])
        depth = cv2.imread(str(out / "depth" / f"{name}.png"), cv2.IMREAD_UNCHANGED)
        assert depth.dtype == np.uint16
        want = np.round(np.nan_to_num(DEPTH[k], nan=0.0).astype(np.float64) * 5000)
        want[want > 65535] = 0  # beyond 13.107 m: no return
        np.testing.assert_array_equal(depth, want.astype(np.uint16))
        instance = cv2.imread(str(out / "instance" / f"{name}.png"), cv2.IMREAD_UNCHANGED)
        np.testing.assert_array_equal(instance, INSTANCE[k])
    # 20 m, 21 m, 22 m, and 12.x m for k=2 (2.5+2 ok, 1+2 ok) -> only the 20+k pixels
    assert report.depth_pixels_out_of_range == 3


@pytest.mark.parametrize(
    ("config", "xyz", "quat"),
    [
        (ExportConfig(pose_topic="/cam/pose"), lambda k: (k, 2.0, 3.0), (0.0, 0.0, 0.6, 0.8)),
        (ExportConfig(pose_topic="/r/odom"), lambda k: (k, -1.0, 0.5), (0.0, 0.0, 0.0, 1.0)),
        (
            ExportConfig(tf_parent="r/odom", tf_child="r/base_link"),
            lambda k: (k + 0.5, 0.0, 0.0),
            (0.0, 0.0, 0.0, 1.0),
        ),
    ],
    ids=["pose", "odometry", "tf"],
)
def test_trajectory_is_tum(
    tmp_path: Path, config: ExportConfig, xyz: object, quat: tuple[float, ...]
) -> None:
    out = tmp_path / "traj"
    report = export_bag(_bag(tmp_path / "b"), out, config)
    assert report.poses == 3
    rows = np.loadtxt(out / "trajectory.txt", comments="#")
    assert rows.shape == (3, 8)
    for k, row in enumerate(rows):
        assert row[0] == pytest.approx((NS + k * NS // 30 + 7) / NS, abs=1e-6)
        np.testing.assert_allclose(row[1:4], xyz(k))  # type: ignore[operator]
        np.testing.assert_allclose(row[4:], quat)


def test_tf_edge_that_never_appears_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(
        TopicNotFoundError, match=r"b: no transform world -> r/cam on /tf or /tf_static"
    ):
        export_bag(
            _bag(tmp_path / "b"), tmp_path / "o", ExportConfig(tf_parent="world", tf_child="r/cam")
        )
    assert not (tmp_path / "o").exists()


def test_unsupported_encoding_is_named(tmp_path: Path) -> None:
    spec = BagSpec()
    spec.add("/cam/rgb", IMG, NS, image(NS, np.zeros((2, 2, 2), np.uint8), "yuv422"))
    bag = write_bag(tmp_path / "b", spec)
    with pytest.raises(BagFormatError, match=r"image encoding 'yuv422' is not supported"):
        export_bag(bag, tmp_path / "o", ExportConfig(images=((ImageKind.RGB, "/cam/rgb"),)))
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tf_parent": "a"}, r"needs both parent and child"),
        ({"pose_topic": "/p", "tf_parent": "a", "tf_child": "b"}, r"one trajectory source"),
        ({}, r"nothing to export"),
        ({"images": ((ImageKind.RGB, "/a"), (ImageKind.RGB, "/b"))}, r"each image kind at most"),
    ],
)
def test_export_config_rejects(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ReplayConfigError, match=match):
        ExportConfig(**kwargs)  # type: ignore[arg-type]
