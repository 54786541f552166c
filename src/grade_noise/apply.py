"""Offline noise: a recorded rosbag2 bag -> a new bag, a TUM RGB-D folder -> a sibling noisy folder.

Inputs are never modified; outputs are written under a temporary name next to the final path and
renamed into place when complete; an existing output is refused. Messages are processed in the
bag's order with the same pipeline as the online node, so the same seed gives identical bytes.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation
from tqdm import tqdm

from grade_common import ros_distro, tum
from grade_common.atomic import StagedOutput
from grade_common.bagfile.compression import DECOMPRESSION_ERRORS
from grade_common.bagfile.integrity import corruption_description, recover_hint
from grade_common.bagfile.rosbag2 import BagOutput
from grade_common.images import array_to_data, image_to_array
from grade_common.output_guard import check_output as guard_output
from grade_noise.config import MESSAGE_TYPES, ModelKind, NoiseConfig, TopicNoise
from grade_noise.errors import NoiseInputError, NoiseOutputExistsError
from grade_noise.images import DEPTH_ENCODINGS, RGB_ENCODINGS
from grade_noise.masks import blurred_labels
from grade_noise.odometry import OdometrySample
from grade_noise.pipeline import NoisePipeline

TUM_DEPTH_SCALE_M = 1.0 / tum.DEPTH_SCALE
TUM_RGB_TOPIC = "/tum/rgb"
TUM_DEPTH_TOPIC = "/tum/depth"
TUM_MOTION_TOPIC = "/tum/groundtruth"

# Camera motion beyond these is refused as a damaged groundtruth.txt (NaN compares False).
MAX_CAMERA_SPEED_MPS = 1e4
MAX_CAMERA_RATE_RAD_S = 1e4


@dataclass(frozen=True)
class ApplyResult:
    """What `apply_to_bag` / `apply_to_tum` wrote."""

    output: Path
    noised: dict[str, int]
    copied: int


def check_output(input_path: Path, output_path: Path) -> None:
    """Refuse an output that exists, is the input, lies inside the input or holds it."""
    inp, out = input_path.resolve(), output_path.resolve()
    if out == inp or inp in out.parents:
        raise NoiseOutputExistsError(
            f"output {output_path} is (inside) the input {input_path}; the input is never modified"
        )
    if output_path.exists():
        raise NoiseOutputExistsError(f"output {output_path} exists already; choose a new path")
    if not output_path.parent.is_dir():
        raise NoiseOutputExistsError(f"output folder {output_path.parent} does not exist")
    # The rest of the common rules: not around the input, a writable folder.
    guard_output(output_path, inputs=[input_path], exists_error=NoiseOutputExistsError)


def _staged(output_path: Path) -> StagedOutput:
    """The output at `.<name>.partial/<name>` (names inside a bag derive from its folder name),
    moved to output_path on success and removed on failure."""
    return StagedOutput(output_path, nested=True, exists_error=NoiseOutputExistsError)


def _vec(v: Any) -> NDArray[np.float64]:
    return np.array([v.x, v.y, v.z], dtype=np.float64)


def _set_vec(v: Any, values: NDArray[np.float64]) -> Any:
    return dataclasses.replace(v, x=float(values[0]), y=float(values[1]), z=float(values[2]))


def _stamp_ns(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


def _noisy_message(pipeline: NoisePipeline, spec: TopicNoise, msg: Any) -> Any:
    """The noisy copy of a rosbags message (same header, same type)."""
    topic = spec.input_topic
    if spec.model is ModelKind.IMU:
        gyro, accel = pipeline.imu(
            topic, _stamp_ns(msg), _vec(msg.angular_velocity), _vec(msg.linear_acceleration)
        )
        return dataclasses.replace(
            msg,
            angular_velocity=_set_vec(msg.angular_velocity, gyro),
            linear_acceleration=_set_vec(msg.linear_acceleration, accel),
        )
    if spec.model is ModelKind.ODOMETRY:
        pose, twist = msg.pose.pose, msg.twist.twist
        q = pose.orientation
        noisy = pipeline.odometry(
            topic,
            OdometrySample(
                _stamp_ns(msg),
                _vec(pose.position),
                np.array([q.x, q.y, q.z, q.w]),
                _vec(twist.linear),
                _vec(twist.angular),
            ),
        )
        qx, qy, qz, qw = map(float, noisy.quat_xyzw)
        new_pose = dataclasses.replace(
            pose,
            position=_set_vec(pose.position, noisy.position),
            orientation=dataclasses.replace(q, x=qx, y=qy, z=qz, w=qw),
        )
        new_twist = dataclasses.replace(
            twist,
            linear=_set_vec(twist.linear, noisy.linear_m_s),
            angular=_set_vec(twist.angular, noisy.angular_rad_s),
        )
        return dataclasses.replace(
            msg,
            pose=dataclasses.replace(msg.pose, pose=new_pose),
            twist=dataclasses.replace(msg.twist, twist=new_twist),
        )
    allowed = RGB_ENCODINGS if spec.model is ModelKind.RGB else DEPTH_ENCODINGS
    arr = image_to_array(msg, allowed, error=NoiseInputError)
    if spec.model is ModelKind.RGB:
        noisy_img: NDArray[np.generic] = pipeline.rgb(topic, _stamp_ns(msg), arr, msg.encoding)
    else:
        noisy_img = pipeline.depth(topic, arr, msg.encoding)
    data, step = array_to_data(noisy_img, msg.encoding)
    return dataclasses.replace(
        msg, is_bigendian=0, step=step, data=np.frombuffer(data, dtype=np.uint8)
    )


def apply_to_bag(
    input_bag: Path,
    output_bag: Path,
    config: NoiseConfig,
    keep_ground_truth: bool = True,
    progress: bool = True,
) -> ApplyResult:
    """Write output_bag: every message of input_bag plus a noisy copy of each configured topic.

    Args:
        keep_ground_truth: keep the exact configured topics beside their noisy versions (paired
            by stamp); False drops them (the other topics are always copied).

    Raises:
        NoiseOutputExistsError: output exists or is the input.
        NoiseInputError: not a bag, a configured topic missing or of the wrong type, bad data.
    """
    from rosbags.rosbag2 import Reader
    from rosbags.rosbag2.errors import ReaderError

    read_errors: tuple[type[Exception], ...] = (ReaderError, *DECOMPRESSION_ERRORS)
    check_output(input_bag, output_bag)
    if not (input_bag / "metadata.yaml").is_file():
        raise NoiseInputError(f"{input_bag} is not a rosbag2 folder (no metadata.yaml)")
    typestore = ros_distro.typestore()
    specs = {s.input_topic: s for s in config.topics}
    try:
        reader = Reader(input_bag)
        reader.open()
    except ReaderError as err:
        raise NoiseInputError(
            f"cannot read bag {input_bag}: {err}; {recover_hint(input_bag)}"
        ) from err
    try:
        topics = {c.topic: c.msgtype for c in reader.connections}
        missing = sorted(set(specs) - set(topics))
        if missing:
            raise NoiseInputError(
                f"configured topics {missing} are not in bag {input_bag}; it has {sorted(topics)}"
            )
        for topic, spec in specs.items():
            if topics[topic] != MESSAGE_TYPES[spec.model]:
                raise NoiseInputError(
                    f"topic {topic} in {input_bag} has type {topics[topic]}; model "
                    f"'{spec.model.value}' needs {MESSAGE_TYPES[spec.model]}"
                )
        motion_type = (
            "sensor_msgs/msg/Imu" if config.motion_type == "imu" else "nav_msgs/msg/Odometry"
        )
        if config.motion_topic and topics.get(config.motion_topic) not in (None, motion_type):
            raise NoiseInputError(
                f"motion topic {config.motion_topic} has type {topics[config.motion_topic]}, "
                f"motion_type '{config.motion_type}' needs {motion_type}"
            )
        pipeline = NoisePipeline(config)
        counts = {t: 0 for t in specs}
        copied = 0
        with _staged(output_bag) as tmp:
            writer = BagOutput(tmp)
            try:
                out_conn: dict[int, Any] = {}
                noisy_conn: dict[int, Any] = {}
                for conn in reader.connections:
                    qos = getattr(conn.ext, "offered_qos_profiles", [])
                    kwargs: dict[str, Any] = (
                        {"typestore": typestore}
                        if conn.msgtype in typestore.types
                        else {"msgdef": conn.msgdef.data, "rihs01": conn.digest}
                    )
                    if keep_ground_truth or conn.topic not in specs:
                        out_conn[conn.id] = writer.add_connection(
                            conn.topic, conn.msgtype, offered_qos_profiles=qos, **kwargs
                        )
                    if conn.topic in specs:
                        noisy_conn[conn.id] = writer.add_connection(
                            specs[conn.topic].output_topic,
                            conn.msgtype,
                            offered_qos_profiles=qos,
                            **kwargs,
                        )
                bar = tqdm(
                    total=reader.message_count,
                    desc=f"noise {input_bag.name}",
                    unit="msg",
                    file=sys.stderr,
                    disable=not progress,
                )
                try:
                    with bar:
                        for conn, timestamp, raw in reader.messages():
                            bar.update(1)
                            if conn.id in out_conn:
                                writer.write(out_conn[conn.id], timestamp, raw)
                                copied += 1
                            if conn.topic == config.motion_topic:
                                m: Any = typestore.deserialize_cdr(raw, conn.msgtype)
                                if config.motion_type == "imu":
                                    pipeline.update_motion(
                                        _stamp_ns(m), _vec(m.angular_velocity), None
                                    )
                                else:
                                    pipeline.update_motion(
                                        _stamp_ns(m),
                                        _vec(m.twist.twist.angular),
                                        _vec(m.twist.twist.linear),
                                    )
                            if conn.id in noisy_conn:
                                msg = typestore.deserialize_cdr(raw, conn.msgtype)
                                try:
                                    noisy = _noisy_message(pipeline, specs[conn.topic], msg)
                                except NoiseInputError as err:
                                    raise NoiseInputError(
                                        f"{input_bag}: topic {conn.topic} at {timestamp} ns: {err}"
                                    ) from err
                                writer.write(
                                    noisy_conn[conn.id],
                                    timestamp,
                                    typestore.serialize_cdr(noisy, conn.msgtype),
                                )
                                counts[conn.topic] += 1
                except read_errors as err:
                    # Name the damaged chunk's topics and times (a pass that checks every CRC).
                    raise NoiseInputError(
                        corruption_description(input_bag)
                        or f"{input_bag}: bag is corrupt ({err}); {recover_hint(input_bag)}"
                    ) from err
            finally:
                writer.close()
    finally:
        reader.close()
    return ApplyResult(output_bag, counts, copied)


def _camera_motion_from_groundtruth(
    path: Path,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Stamps (s), angular and linear velocity in the optical frame, from TUM poses by central
    differences (the poses are the optical frame in the world)."""
    poses = tum.read_poses(path, increasing=False, error=NoiseInputError)
    if len(poses.stamps) < 2:
        raise NoiseInputError(f"{path}: expected >= 2 TUM lines 't tx ty tz qx qy qz qw'")
    t, pos = poses.stamps_s, poses.positions_xyz
    rot = Rotation.from_quat(poses.quats_wxyz[:, [1, 2, 3, 0]])
    i0 = np.clip(np.arange(len(t)) - 1, 0, len(t) - 1)
    i1 = np.clip(np.arange(len(t)) + 1, 0, len(t) - 1)
    dt = t[i1] - t[i0]
    if np.any(dt <= 0.0):
        raise NoiseInputError(f"{path}: timestamps must increase")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        omega = (rot[i0].inv() * rot[i1]).as_rotvec() / dt[:, None]
        vel = rot.inv().apply(pos[i1] - pos[i0]) / dt[:, None]
    if not (
        np.all(np.abs(omega) <= MAX_CAMERA_RATE_RAD_S)
        and np.all(np.abs(vel) <= MAX_CAMERA_SPEED_MPS)
    ):
        # Huge stamps or positions (1e300) give absurd or overflowing velocities, and the blur
        # would then warp without end; no camera moves like that.
        raise NoiseInputError(
            f"{path}: the poses give a camera velocity beyond {MAX_CAMERA_SPEED_MPS:g} m/s or "
            f"{MAX_CAMERA_RATE_RAD_S:g} rad/s (stamps from {t.min():g} to "
            f"{t.max():g} s, positions up to {np.abs(pos).max():g} m); check the file's values"
        )
    return t, omega, vel


def _tum_intrinsics(folder: Path) -> NDArray[np.float64] | None:
    info = folder / tum.CAMERA_INFO_YAML
    if not info.is_file():
        return None
    return tum.read_camera_info(info, error=NoiseInputError).camera_matrix


def apply_to_tum(
    input_dir: Path,
    output_dir: Path,
    config: NoiseConfig,
    progress: bool = True,
    blur_masks: bool = False,
) -> ApplyResult:
    """Write output_dir: a copy of the TUM camera folder with rgb/ and depth/ images noised.

    The config's topics TUM_RGB_TOPIC / TUM_DEPTH_TOPIC select the models; the blur motion comes
    from groundtruth.txt. All other files (lists, ground truth, masks, boxes) are copied unchanged
    so the noisy images stay paired with the exact data; with `blur_masks` (A-GRADE,
    grade_noise.masks) the instance and semantic masks get the RGB frames' blur and the 2D boxes
    in boxes2d.jsonl the extent of the blurred instances.
    """
    check_output(input_dir, output_dir)
    rgb_list, depth_list = tum.list_file("rgb"), tum.list_file("depth")
    if not (input_dir / rgb_list).is_file() and not (input_dir / depth_list).is_file():
        raise NoiseInputError(f"{input_dir} is not a TUM RGB-D folder (no rgb.txt or depth.txt)")
    pipeline = NoisePipeline(config)
    specs = {s.input_topic: s for s in config.topics}
    k = _tum_intrinsics(input_dir)
    jobs: list[tuple[float, str, str]] = []
    for topic, listing in ((TUM_RGB_TOPIC, rgb_list), (TUM_DEPTH_TOPIC, depth_list)):
        if topic in specs:
            if not (input_dir / listing).is_file():
                raise NoiseInputError(f"{input_dir / listing} is missing")
            entries = tum.read_list(input_dir / listing, error=NoiseInputError)
            jobs += [(float(s), topic, f) for s, f in entries]
    jobs.sort(key=lambda j: (j[0], j[1]))
    motion = None
    if TUM_RGB_TOPIC in specs and config.motion_topic:
        motion = _camera_motion_from_groundtruth(input_dir / tum.GROUNDTRUTH_TXT)
    counts = {t: 0 for t in specs}
    with _staged(output_dir) as tmp:
        shutil.copytree(input_dir, tmp, symlinks=True)
        for stamp_s, topic, rel in tqdm(
            jobs, desc=f"noise {input_dir.name}", unit="img", file=sys.stderr, disable=not progress
        ):
            src = input_dir / rel
            img = cv2.imread(str(src), cv2.IMREAD_UNCHANGED)
            if img is None:
                raise NoiseInputError(f"cannot read image {src}")
            stamp_ns = round(stamp_s * 1e9)
            try:
                if topic == TUM_RGB_TOPIC:
                    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
                        raise NoiseInputError(
                            f"expected an 8-bit 3-channel PNG, got {img.dtype} {img.shape}"
                        )
                    if motion is not None:
                        i = int(np.argmin(np.abs(motion[0] - stamp_s)))
                        # poses give the optical frame directly: no body -> optical rotation.
                        pipeline.update_camera_motion(stamp_ns, motion[1][i], motion[2][i])
                    out: NDArray[np.generic] = pipeline.rgb(topic, stamp_ns, img, "bgr8", k)
                else:
                    if img.ndim != 2 or img.dtype != np.uint16:
                        raise NoiseInputError(
                            f"expected a 16-bit depth PNG, got {img.dtype} {img.shape}"
                        )
                    f = None if k is None else float(k[0, 0])
                    out = pipeline.depth(topic, img, "16UC1", f, TUM_DEPTH_SCALE_M)
            except NoiseInputError as err:
                raise NoiseInputError(f"{src}: {err}") from err
            if not cv2.imwrite(str(tmp / rel), np.asarray(out, dtype=img.dtype)):
                raise NoiseInputError(f"cannot write {tmp / rel}")
            counts[topic] += 1
        if blur_masks:
            if TUM_RGB_TOPIC not in specs or motion is None:
                raise NoiseInputError(
                    "--blur-masks blurs masks like the RGB images: it needs an RGB preset and "
                    f"the camera motion from {tum.GROUNDTRUTH_TXT}"
                )
            counts["masks"] = _blur_masks(input_dir, tmp, pipeline, motion, k)
    return ApplyResult(output_dir, counts, 0)


def _blur_masks(
    input_dir: Path,
    out_dir: Path,
    pipeline: NoisePipeline,
    motion: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]],
    k: NDArray[np.float64] | None,
) -> int:
    """Blur instance/ and semantic/ masks of out_dir like their RGB frames and widen the boxes
    of boxes2d.jsonl to the blurred instances; returns the masks written."""
    written = 0
    boxes_by_stamp: dict[str, dict[int, tuple[int, int, int, int]]] = {}
    for kind in ("instance", "semantic"):
        listing = input_dir / tum.list_file(kind)
        if not listing.is_file():
            continue
        for stamp, rel in tum.read_list(listing, error=NoiseInputError):
            labels = cv2.imread(str(input_dir / rel), cv2.IMREAD_UNCHANGED)
            if labels is None or labels.ndim != 2:
                raise NoiseInputError(f"cannot read the 1-channel mask {input_dir / rel}")
            stamp_s = float(stamp)
            stamp_ns = round(stamp_s * 1e9)
            i = int(np.argmin(np.abs(motion[0] - stamp_s)))
            pipeline.update_camera_motion(stamp_ns, motion[1][i], motion[2][i])

            def blur(mask: NDArray[np.uint8], t: int = stamp_ns) -> NDArray[np.uint8]:
                return pipeline.rgb_geometry(TUM_RGB_TOPIC, t, mask, k)

            blurred, boxes = blurred_labels(labels.astype(np.uint16), blur)
            if not cv2.imwrite(str(out_dir / rel), blurred.astype(labels.dtype)):
                raise NoiseInputError(f"cannot write {out_dir / rel}")
            if kind == "instance":
                boxes_by_stamp[stamp] = boxes
            written += 1
    boxes_file = out_dir / tum.BOXES_2D_JSONL
    if boxes_by_stamp and boxes_file.is_file():
        lines = []
        for line in boxes_file.read_text().splitlines():
            frame = json.loads(line)
            blurred_boxes = boxes_by_stamp.get(f"{frame['t']:.6f}", {})
            for box in frame["boxes"]:
                if box["id"] in blurred_boxes:
                    x0, y0, x1, y1 = blurred_boxes[box["id"]]
                    box.update(x_min=x0, y_min=y0, x_max=x1, y_max=y1)
            lines.append(json.dumps(frame) + "\n")
        boxes_file.write_text("".join(lines))  # out_dir as a whole is staged
    return written
