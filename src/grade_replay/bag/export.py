"""`grade bag export`: TUM trajectories, TUM RGB-D image folders and KITTI scans out of a bag.

Layout (docs/conventions.md): `trajectory.txt` ("t tx ty tz qx qy qz qw"), `rgb/<t>.png`
(8-bit colour), `depth/<t>.png` (uint16, metres x 5000, 0 = no return), `instance/<t>.png`
(uint16 ids), and `rgb.txt` / `depth.txt` / `instance.txt` index files; `<t>` is the header
stamp in seconds with six decimals. A PointCloud2 topic becomes KITTI `velodyne/<n>.bin`
(+ SemanticKITTI `labels/<n>.label` when the cloud has class_id and instance_id fields) and
`times.txt` (layout: grade_common.kitti).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from grade_common import images, kitti, tum
from grade_common.images import ENCODINGS
from grade_common.pointcloud import cloud_fields
from grade_common.tum import ImageKind
from grade_replay.bag.io import BagSource, atomic_output, open_bag, stamp_to_ns
from grade_replay.errors import BagFormatError, ReplayConfigError, TopicNotFoundError

POSE_TYPES = ("geometry_msgs/msg/PoseStamped", "nav_msgs/msg/Odometry")
TF_TOPICS = ("/tf", "/tf_static")
IMAGE_TYPE = "sensor_msgs/msg/Image"
CLOUD_TYPE = "sensor_msgs/msg/PointCloud2"
# sensor_msgs/PointField datatype -> numpy type


@dataclass(frozen=True)
class ExportConfig:
    """What to export.

    Attributes:
        pose_topic: a PoseStamped or Odometry topic -> trajectory.txt.
        tf_parent, tf_child: a /tf (or /tf_static) edge parent -> child -> trajectory.txt.
        images: kind -> image topic.
    """

    pose_topic: str | None = None
    tf_parent: str | None = None
    tf_child: str | None = None
    images: tuple[tuple[ImageKind, str], ...] = ()
    points_topic: str | None = None

    def __post_init__(self) -> None:
        if (self.tf_parent is None) != (self.tf_child is None):
            raise ReplayConfigError(
                "export: a TF trajectory needs both parent and child frames "
                f"(got {self.tf_parent!r} -> {self.tf_child!r})"
            )
        if self.pose_topic is not None and self.tf_parent is not None:
            raise ReplayConfigError(
                "export: give one trajectory source, --pose-topic or --tf, not both"
            )
        kinds = [k for k, _ in self.images]
        if len(set(kinds)) != len(kinds):
            raise ReplayConfigError(f"export: each image kind at most once; got {kinds}")
        if (
            self.pose_topic is None
            and self.tf_parent is None
            and not self.images
            and self.points_topic is None
        ):
            raise ReplayConfigError(
                "export: nothing to export; give --pose-topic, --tf PARENT "
                "CHILD, --rgb/--depth/--instance TOPIC and/or --points TOPIC"
            )


@dataclass(frozen=True)
class ExportReport:
    """How many poses and frames were written, and depth pixels out of the uint16 range."""

    poses: int
    frames: dict[str, int]
    depth_pixels_out_of_range: int
    scans: int = 0

    def format(self) -> str:
        """Human-readable summary."""
        parts = [f"{self.poses} poses"] + [f"{n} {k} frames" for k, n in self.frames.items()]
        parts += [f"{self.scans} lidar scans"] if self.scans else []
        return (
            ", ".join(parts) + f"; {self.depth_pixels_out_of_range} depth pixels beyond "
            f"{tum.MAX_DEPTH_M:.3f} m (or invalid) written as 0"
        )


def _tum_line(t_ns: int, position: Any, orientation: Any) -> str:
    return tum.tum_pose_line(
        t_ns,
        (position.x, position.y, position.z),
        (orientation.w, orientation.x, orientation.y, orientation.z),
    )


def image_to_array(msg: Any) -> np.ndarray:
    """sensor_msgs/Image -> (H, W) or (H, W, C) array in the encoding's dtype and channel order.

    Raises:
        BagFormatError: an encoding other than those of grade_common.images.ENCODINGS.
    """
    if msg.encoding not in ENCODINGS:
        raise BagFormatError(
            f"image encoding {msg.encoding!r} is not supported; expected one of {sorted(ENCODINGS)}"
        )
    return images.image_to_array(msg, error=BagFormatError)


def depth_to_tum(msg: Any) -> tuple[np.ndarray, int]:
    """Depth image (32FC1 metres, or 16UC1/mono16 millimetres) -> uint16 m x 5000.

    Returns:
        The uint16 image and the number of valid pixels beyond the uint16 range written as 0.
    """
    if msg.encoding not in ("32FC1", "16UC1", "mono16"):
        raise BagFormatError(f"depth encoding {msg.encoding!r} is not 32FC1 or 16UC1")
    array = image_to_array(msg)
    depth_m = array.astype(np.float64) / 1000.0 if array.dtype == np.uint16 else array
    return tum.depth_to_png_u16(depth_m), tum.depth_beyond_range(depth_m)


def _rgb_to_bgr(msg: Any) -> np.ndarray:
    array = image_to_array(msg)
    conversions = {
        "rgb8": cv2.COLOR_RGB2BGR,
        "rgba8": cv2.COLOR_RGBA2BGR,
        "bgra8": cv2.COLOR_BGRA2BGR,
    }
    if msg.encoding in conversions:
        return np.asarray(cv2.cvtColor(array, conversions[msg.encoding]))
    return array


def _write_scan(folder: Path, index: int, msg: Any) -> None:
    fields = cloud_fields(msg, error=BagFormatError)
    if not {"x", "y", "z"} <= set(fields):
        raise BagFormatError(f"PointCloud2 without x, y, z fields: {sorted(fields)}")
    n = len(fields["x"])
    intensity = fields.get("intensity", np.zeros(n))
    xyzi = np.stack([fields["x"], fields["y"], fields["z"], intensity], axis=1)
    name = kitti.scan_name(index)
    (folder / kitti.SCANS_DIR / f"{name}.bin").write_bytes(xyzi.astype(kitti.BIN_DTYPE).tobytes())
    if "class_id" in fields and "instance_id" in fields:
        label = (fields["instance_id"].astype(np.uint32) << 16) | fields["class_id"].astype(
            np.uint32
        )
        (folder / kitti.LABELS_DIR / f"{name}.label").write_bytes(
            label.astype(kitti.LABEL_DTYPE).tobytes()
        )


def _write_png(path: Path, image: np.ndarray) -> None:
    if not cv2.imwrite(str(path), image):
        raise BagFormatError(f"{path}: OpenCV could not write the PNG")


def _tf_connections(bag: BagSource) -> list[Any]:
    conns = [c for c in bag.connections if c.topic in TF_TOPICS]
    if not conns:
        raise TopicNotFoundError(
            f"{bag.path}: no /tf or /tf_static topic in the bag; it has "
            f"{sorted({c.topic for c in bag.connections})}"
        )
    return conns


def export_bag(
    src: Path | str, out: Path | str, config: ExportConfig, progress: bool = False
) -> ExportReport:
    """Export a trajectory and/or images from `src` into the new directory `out`.

    Raises:
        BagError: the input bag cannot be read.
        TopicNotFoundError: a topic is not in the bag, or the TF edge never appears.
        BagFormatError: a topic has the wrong type or an unsupported image encoding.
        BagOutputExistsError: `out` exists.
    """
    with open_bag(src) as bag:
        wanted: list[str] = [topic for _, topic in config.images]
        if config.pose_topic is not None:
            wanted.append(config.pose_topic)
        if config.points_topic is not None:
            wanted.append(config.points_topic)
            if bag.msgtype_of(config.points_topic) != CLOUD_TYPE:
                raise BagFormatError(
                    f"{bag.path}: {config.points_topic} has type "
                    f"{bag.msgtype_of(config.points_topic)}, not {CLOUD_TYPE}"
                )
        conns = bag.connections_of(wanted)
        if config.pose_topic is not None and bag.msgtype_of(config.pose_topic) not in POSE_TYPES:
            raise BagFormatError(
                f"{bag.path}: {config.pose_topic} has type "
                f"{bag.msgtype_of(config.pose_topic)}; a trajectory needs one "
                f"of {list(POSE_TYPES)} (or use --tf PARENT CHILD)"
            )
        for _, topic in config.images:
            if bag.msgtype_of(topic) != IMAGE_TYPE:
                raise BagFormatError(
                    f"{bag.path}: {topic} has type {bag.msgtype_of(topic)}, not {IMAGE_TYPE}"
                )
        if config.tf_parent is not None and config.tf_child is not None:
            conns += _tf_connections(bag)
        kind_of = {topic: kind for kind, topic in config.images}
        poses: list[str] = []
        index: dict[ImageKind, list[str]] = {kind: [] for kind, _ in config.images}  # frame names
        seen: dict[ImageKind, set[str]] = {kind: set() for kind, _ in config.images}
        out_of_range = 0
        scan_times: list[str] = []
        with atomic_output(out, src) as tmp:
            tmp.mkdir()
            for kind in index:
                (tmp / kind.value).mkdir()
            if config.points_topic is not None:
                (tmp / kitti.SCANS_DIR).mkdir()
                (tmp / kitti.LABELS_DIR).mkdir()
            for conn, _, data in bag.messages(conns, progress=progress, desc="export"):
                if conn.topic in TF_TOPICS:
                    msg = bag.deserialize(data, conn.msgtype)
                    poses += [
                        _tum_line(
                            stamp_to_ns(tr.header.stamp),
                            tr.transform.translation,
                            tr.transform.rotation,
                        )
                        for tr in msg.transforms
                        if tr.header.frame_id.lstrip("/") == config.tf_parent
                        and tr.child_frame_id.lstrip("/") == config.tf_child
                    ]
                    continue
                msg = bag.deserialize(data, conn.msgtype)
                stamp_ns = stamp_to_ns(msg.header.stamp)
                if conn.topic == config.pose_topic:
                    pose = msg.pose.pose if conn.msgtype == POSE_TYPES[1] else msg.pose
                    poses.append(_tum_line(stamp_ns, pose.position, pose.orientation))
                    continue
                if conn.topic == config.points_topic:
                    _write_scan(tmp, len(scan_times), msg)
                    scan_times.append(f"{stamp_ns / 1e9:.9f}\n")
                    continue
                kind = kind_of[conn.topic]
                name = tum.tum_stamp(stamp_ns)
                if name in seen[kind]:
                    raise BagFormatError(
                        f"{bag.path}: {conn.topic} has two images stamped "
                        f"{name} s; the TUM layout needs unique stamps"
                    )
                seen[kind].add(name)
                if kind is ImageKind.DEPTH:
                    image, beyond = depth_to_tum(msg)
                    out_of_range += beyond
                elif kind is ImageKind.RGB:
                    image = _rgb_to_bgr(msg)
                else:
                    image = image_to_array(msg)
                _write_png(tmp / kind.value / f"{name}.png", image)
                index[kind].append(name)
            if config.tf_parent is not None and not poses:
                raise TopicNotFoundError(
                    f"{bag.path}: no transform {config.tf_parent} -> {config.tf_child} on /tf or "
                    "/tf_static"
                )
            if config.pose_topic is not None or config.tf_parent is not None:
                source = config.pose_topic or f"tf {config.tf_parent} -> {config.tf_child}"
                (tmp / tum.TRAJECTORY_TXT).write_text(tum.pose_header(source) + "".join(poses))
            for kind, names in index.items():
                (tmp / tum.list_file(kind)).write_text(tum.list_text(kind, names))
            if config.points_topic is not None:
                (tmp / kitti.TIMES_TXT).write_text("".join(scan_times))
    return ExportReport(
        len(poses), {k.value: len(v) for k, v in index.items()}, out_of_range, len(scan_times)
    )
