"""The TUM RGB-D format as grade writes and reads it (docs/conventions.md, "Run directory").

A camera folder holds `rgb/ depth/ instance/` PNGs named `<t>.png`, list files `rgb.txt`,
`depth.txt`, `instance.txt` ("timestamp filename" lines), `groundtruth.txt` (poses) and
`camera_info.yaml`; a robot folder holds `trajectory.txt`. `<t>` is the stamp in seconds with
six decimals. Poses are "t tx ty tz qx qy qz qw" (quaternion x, y, z, w as TUM writes it; grade's
arrays are w, x, y, z). Depth PNGs are uint16 metres x 5000, 0 = no return.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

from grade_common.errors import FormatError, GradeError
from grade_common.textfile import read_text
from grade_common.types import FloatArray

DEPTH_SCALE = 5000.0  # uint16 depth units per metre
MAX_DEPTH_M = 65535 / DEPTH_SCALE  # deepest representable depth, 13.107 m
MAX_STAMP_S = 9e9  # stamps become int64 nanoseconds (up to 9.22e18 ns)
MAX_CAMERA_MATRIX_PX = 1e7  # camera_info K entries limit (a 16384 px image at 0.1 deg fov: 1e7)
MAX_IMAGE_SIZE_PX = 16384  # camera_info width/height limit (well above any camera grade renders)
GROUNDTRUTH_TXT = "groundtruth.txt"  # camera (optical frame) poses of a camera folder
TRAJECTORY_TXT = "trajectory.txt"  # base_link poses of a robot folder, or of an export
CAMERA_INFO_YAML = "camera_info.yaml"
BOXES_2D_JSONL = "boxes2d.jsonl"  # per frame: tight (and loose) 2D boxes of visible actors
BOXES_3D_JSONL = "boxes3d.jsonl"  # per frame: 3D boxes of visible actors
OBJECT_POSES_JSONL = "object_poses.jsonl"  # per frame: 6D poses of loose objects (tabletop)
KEYPOINTS_JSONL = "keypoints.jsonl"  # per frame: people's COCO-17 keypoints (3D world and 2D)
POSE_COLUMNS = "# timestamp tx ty tz qx qy qz qw"
LIST_COLUMNS = "# timestamp filename"
Vector = Sequence[float] | FloatArray


class ImageKind(enum.StrEnum):
    """The image folders of a camera folder (and the names of their list files)."""

    RGB = "rgb"
    DEPTH = "depth"
    INSTANCE = "instance"


IMAGE_KINDS = tuple(ImageKind)


def list_file(kind: str) -> str:
    """The list file of an image kind: `rgb.txt`, `depth.txt`, `instance.txt`."""
    return f"{kind}.txt"


def tum_stamp(stamp_ns: int) -> str:
    """The stamp in seconds as frames are named: `%.6f` (rounded, like every other tool that
    derives a frame name from a message stamp)."""
    return f"{stamp_ns / 1e9:.6f}"


def pose_header(what: str) -> str:
    """The two comment lines opening a pose file: what the poses are, then the columns."""
    return f"# {what}\n{POSE_COLUMNS}\n"


def tum_pose_line(stamp_ns: int, position: Vector, quat_wxyz: Vector) -> str:
    """One pose line of a simulated stamp (see `tum_stamp`), ending in a newline."""
    return pose_line(tum_stamp(stamp_ns), position, quat_wxyz)


def pose_line(stamp: str, position: Vector, quat_wxyz: Vector) -> str:
    """One pose line (nine decimals) ending in a newline; `stamp` is already formatted."""
    p, q = position, quat_wxyz
    return f"{stamp} {p[0]:.9f} {p[1]:.9f} {p[2]:.9f} {q[1]:.9f} {q[2]:.9f} {q[3]:.9f} {q[0]:.9f}\n"


def list_header(kind: str) -> str:
    """The two comment lines opening a list file."""
    return f"# {kind} images\n{LIST_COLUMNS}\n"


def list_line(stamp: str, kind: str) -> str:
    """One list line for the `<kind>/<stamp>.png` frame, ending in a newline."""
    return f"{stamp} {kind}/{stamp}.png\n"


def list_text(kind: str, stamps: Iterable[str]) -> str:
    """A whole list file: its header, then one line a frame (`stamps` already formatted)."""
    return list_header(kind) + "".join(list_line(s, kind) for s in stamps)


def depth_to_png_u16(depth_m: NDArray[Any]) -> NDArray[np.uint16]:
    """Depth in metres -> TUM uint16; no return (<= 0, NaN, inf) and depths beyond MAX_DEPTH_M
    (not representable, counted by `depth_beyond_range`) become 0."""
    scaled = np.rint(depth_m.astype(np.float64) * DEPTH_SCALE)
    scaled[(depth_m <= 0) | (depth_m > MAX_DEPTH_M) | ~np.isfinite(depth_m)] = 0
    return scaled.astype(np.uint16)


def depth_beyond_range(depth_m: NDArray[Any]) -> int:
    """Pixels with a valid depth too deep for the uint16 encoding (written as 0)."""
    return int(np.count_nonzero(np.isfinite(depth_m) & (depth_m > MAX_DEPTH_M)))


@dataclass(frozen=True)
class PoseTable:
    """The poses of a TUM file, in file order."""

    stamps: tuple[str, ...]  # as written (frame names use them)
    stamps_s: FloatArray  # (N,)
    positions_xyz: FloatArray  # (N, 3)
    quats_wxyz: FloatArray  # (N, 4)


def _data_lines(path: Path, text: str) -> list[tuple[int, str]]:
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            lines.append((number, line))
    return lines


def _read(path: Path, what: str, error: type[GradeError]) -> str:
    return read_text(path, what, error=error)


def read_poses(
    path: str | Path,
    *,
    increasing: bool = True,
    allow_empty: bool = False,
    error: type[GradeError] = FormatError,
) -> PoseTable:
    """Read a TUM pose file (spaces or commas between the 8 numbers, '#' comments).

    Raises:
        error: unreadable file, a malformed line (file and line number in the message), no
            poses (unless `allow_empty`), or (with `increasing`) stamps that do not strictly
            increase.
    """
    file = Path(path)
    rows: list[list[float]] = []
    stamps: list[str] = []
    numbers: list[int] = []
    for number, line in _data_lines(file, _read(file, "trajectory", error)):
        fields = line.replace(",", " ").split()
        if len(fields) != 8:
            raise error(
                f"{file}:{number}: expected 8 numbers 't tx ty tz qx qy qz qw', "
                f"got {len(fields)} fields: {line[:80]!r}"
            )
        try:
            values = [float(f) for f in fields]
        except ValueError as err:
            raise error(f"{file}:{number}: not a number in {line[:80]!r}") from err
        if not all(np.isfinite(values)):
            raise error(f"{file}:{number}: non-finite value in {line[:80]!r}")
        rows.append(values)
        stamps.append(fields[0])
        numbers.append(number)
    if not rows and not allow_empty:
        raise error(f"{file}: no poses (only comments or blank lines)")
    data = np.asarray(rows, dtype=np.float64).reshape(-1, 8)
    steps = np.diff(data[:, 0])
    if increasing and (steps <= 0).any():
        k = int(np.argmax(steps <= 0)) + 1
        raise error(
            f"{file}:{numbers[k]}: stamp {data[k, 0]:.9f} is not after the "
            f"previous stamp {data[k - 1, 0]:.9f} (line {numbers[k - 1]}); "
            "stamps must be strictly increasing"
        )
    return PoseTable(tuple(stamps), data[:, 0], data[:, 1:4], data[:, [7, 4, 5, 6]])


def read_list(path: str | Path, *, error: type[GradeError] = FormatError) -> list[tuple[str, str]]:
    """A list file's (stamp as written, relative file name) pairs, in file order.

    Raises:
        error: unreadable file, or a line that is not 'timestamp filename' with a numeric stamp.
    """
    file = Path(path)
    out: list[tuple[str, str]] = []
    for number, line in _data_lines(file, _read(file, "list", error)):
        parts = line.split()
        if len(parts) != 2:
            raise error(f"{file}:{number}: expected 'timestamp filename', got {line!r}")
        try:
            stamp_s = float(parts[0])
        except ValueError as err:
            raise error(f"{file}:{number}: bad timestamp {parts[0]!r}") from err
        if not abs(stamp_s) < MAX_STAMP_S:  # NaN too
            raise error(
                f"{file}:{number}: timestamp {parts[0]!r} is out of range; allowed seconds "
                f"within +-{MAX_STAMP_S:g} (integer nanoseconds)"
            )
        out.append((parts[0], parts[1]))
    return out


def read_boxes_2d(
    path: str | Path, *, error: type[GradeError] = FormatError
) -> dict[float, list[dict[str, Any]]]:
    """boxes2d.jsonl as {t: [box entry]}: each entry has `id`, the tight inclusive pixel bounds
    `x_min y_min x_max y_max` (from the instance mask) and, where it projects, `loose` (the
    projected 3D box, [x_min, y_min, x_max, y_max]).

    Raises:
        error: the file is unreadable or a line is malformed (names the file and line).
    """
    file = Path(path)
    out: dict[float, list[dict[str, Any]]] = {}
    for number, line in enumerate(_read(file, "2D boxes", error).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            out[float(entry["t"])] = list(entry["boxes"])
        except (ValueError, KeyError, TypeError) as err:
            raise error(f"{file}:{number}: malformed 2D boxes line: {err!r}") from err
    return out


def box_occlusion(box: dict[str, Any]) -> float:
    """The occlusion proxy of a boxes2d entry: 1 - tight area / loose area, in [0, 1] (0 when
    it has no loose box)."""
    loose = box.get("loose")
    if loose is None:
        return 0.0
    tight = _box_area((box["x_min"], box["y_min"], box["x_max"], box["y_max"]))
    return float(max(0.0, 1.0 - tight / max(_box_area(loose), 1)))


def _box_area(box: Sequence[Any]) -> int:
    return (int(box[2]) - int(box[0]) + 1) * (int(box[3]) - int(box[1]) + 1)


@dataclass(frozen=True)
class CameraInfo:
    """camera_info.yaml of a camera folder: image size, 3x3 intrinsics, depth PNG scale.

    Written in the camera_calibration_parsers YAML format (what camera_info_manager and
    `ros2 run camera_calibration` read and write): camera_name, image_width, image_height,
    camera_matrix / distortion_coefficients / rectification_matrix / projection_matrix as
    {rows, cols, data}, distortion_model; plus grade's keys frame_id, hfov_deg, vfov_deg and
    depth_scale, which those readers ignore.
    """

    width: int
    height: int
    camera_matrix: FloatArray
    depth_scale: float = DEPTH_SCALE
    frame_id: str = ""
    hfov_deg: float | None = None
    vfov_deg: float | None = None
    camera_name: str = ""
    # "plumb_bob" (k1 k2 p1 p2 k3) or "equidistant" (k1 k2 k3 k4); () = five zeros, a pinhole.
    distortion_model: str = "plumb_bob"
    distortion: tuple[float, ...] = ()
    # What depth pixels measure: "planar" (z in the optical frame) or "range" (along the ray).
    depth_kind: str = "planar"

    def to_yaml(self) -> str:
        """The file as grade writes it (identity rectification, P = [K | 0])."""
        k = [float(v) for v in self.camera_matrix.reshape(-1)]
        # The distorted image's own K: rectifying with P = [K | 0] keeps the focal length.
        p = [*k[0:3], 0.0, *k[3:6], 0.0, *k[6:9], 0.0]
        d = [float(v) for v in self.distortion] or [0.0] * 5
        text: str = yaml.safe_dump(
            {
                "image_width": self.width,
                "image_height": self.height,
                "camera_name": self.camera_name or _camera_name(self.frame_id),
                "camera_matrix": _matrix(3, 3, k),
                "distortion_model": self.distortion_model,
                "distortion_coefficients": _matrix(1, len(d), d),
                "rectification_matrix": _matrix(3, 3, [float(v) for v in np.eye(3).ravel()]),
                "projection_matrix": _matrix(3, 4, p),
                "frame_id": self.frame_id,
                "hfov_deg": self.hfov_deg,
                "vfov_deg": self.vfov_deg,
                "depth_scale": self.depth_scale,
                "depth_kind": self.depth_kind,
            },
            sort_keys=False,
            default_flow_style=None,
        )
        return text


def _matrix(rows: int, cols: int, data: list[float]) -> dict[str, Any]:
    return {"rows": rows, "cols": cols, "data": data}


def _camera_name(frame_id: str) -> str:
    # camera_info_manager accepts only letters, digits and '_' in a camera name.
    return re.sub(r"[^A-Za-z0-9_]", "_", frame_id) or "camera"


def _standard_k(data: dict[str, Any]) -> np.ndarray:
    """K from camera_matrix {rows: 3, cols: 3, data: [9]}."""
    m = data["camera_matrix"]
    if (m["rows"], m["cols"]) != (3, 3):
        raise ValueError(f"camera_matrix is {m['rows']}x{m['cols']}, must be 3x3")
    return np.asarray(m["data"], dtype=np.float64).reshape(3, 3)


def _distortion(data: dict[str, Any]) -> tuple[float, ...]:
    """D from distortion_coefficients {rows: 1, cols: n, data: [n]}; absent: () (no distortion)."""
    m = data.get("distortion_coefficients")
    if m is None:
        return ()
    values = tuple(float(v) for v in m["data"])
    if len(values) != int(m["rows"]) * int(m["cols"]):
        raise ValueError(f"distortion_coefficients has {len(values)} numbers, not rows x cols")
    return values


def read_camera_info(path: str | Path, *, error: type[GradeError] = FormatError) -> CameraInfo:
    """Read camera_info.yaml: the camera_calibration_parsers format (image_width, image_height,
    camera_matrix {rows, cols, data}) or grade's earlier one (width, height, K as 9 numbers;
    `k` is accepted too), with an optional depth_scale.

    Raises:
        error: unreadable file, a missing or malformed field, non-positive scale or focal length.
    """
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text())
        if "camera_matrix" in data:
            k = _standard_k(data)
            size = (int(data["image_width"]), int(data["image_height"]))
        else:
            k = np.asarray(data["K"] if "K" in data else data["k"], dtype=np.float64)
            k = k.reshape(3, 3)
            size = (int(data["width"]), int(data["height"]))
        info = CameraInfo(
            size[0],
            size[1],
            k,
            float(data.get("depth_scale", DEPTH_SCALE)),
            str(data.get("frame_id", "")),
            camera_name=str(data.get("camera_name", "")),
            distortion_model=str(data.get("distortion_model", "plumb_bob")),
            distortion=_distortion(data),
            depth_kind=str(data.get("depth_kind", "planar")),
        )
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as err:
        raise error(
            f"{file}: camera info needs image_width, image_height and camera_matrix "
            f"{{rows: 3, cols: 3, data: [9 numbers]}} (or width, height and K): {err!r}"
        ) from err
    if not (math.isfinite(info.depth_scale) and info.depth_scale > 0):
        raise error(f"{file}: depth_scale = {info.depth_scale}: must be a finite number > 0")
    for name, pixels in (("image_width", info.width), ("image_height", info.height)):
        if not 1 <= pixels <= MAX_IMAGE_SIZE_PX:
            raise error(f"{file}: {name} = {pixels}: allowed [1, {MAX_IMAGE_SIZE_PX}] pixels")
    if not np.all(np.isfinite(k)):
        raise error(
            f"{file}: K holds a non-finite value {k.ravel().tolist()}; K needs 9 finite numbers"
        )
    if not (k[0, 0] > 0 and k[1, 1] > 0):
        raise error(f"{file}: K has non-positive focal lengths fx={k[0, 0]}, fy={k[1, 1]}")
    if np.abs(k).max() > MAX_CAMERA_MATRIX_PX:
        # A finite but absurd K (1e300) overflows every projection that uses it.
        raise error(
            f"{file}: K = {k.ravel().tolist()}: focal lengths and principal point must be "
            f"within [-{MAX_CAMERA_MATRIX_PX:g}, {MAX_CAMERA_MATRIX_PX:g}] pixels"
        )
    return info
