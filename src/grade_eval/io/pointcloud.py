"""Point cloud files: PLY (binary little endian or ASCII) and PCD (ASCII or binary), .npy."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grade_common import atomic
from grade_eval.core.pointmap import PointMap
from grade_eval.errors import FormatError, OutputExistsError

_PLY_TYPES = {
    "float": "f4",
    "float32": "f4",
    "double": "f8",
    "float64": "f8",
    "uchar": "u1",
    "uint8": "u1",
    "char": "i1",
    "int8": "i1",
    "ushort": "u2",
    "uint16": "u2",
    "short": "i2",
    "int16": "i2",
    "uint": "u4",
    "uint32": "u4",
    "int": "i4",
    "int32": "i4",
}

# The PLY type name of each record type write_ply uses.
_PLY_WRITTEN_TYPES = {"<f8": "double", "u1": "uchar"}


def _write_cloud(path: str | Path, header_lines: list[str], data: np.ndarray) -> Path:
    """A text header (one item a line) then the binary records, written atomically."""
    header = "\n".join(header_lines) + "\n"
    return atomic.write_bytes(
        Path(path), header.encode() + data.tobytes(), exists_error=OutputExistsError
    )


def _xyz_records(point_map: PointMap, fields: list[tuple[str, str]]) -> np.ndarray:
    """One record of `fields` a point, with x, y and z filled in (the rest zero)."""
    data = np.zeros(point_map.size, dtype=fields)
    for i, axis in enumerate("xyz"):
        data[axis] = point_map.points_xyz[:, i]
    return data


def write_ply(path: str | Path, point_map: PointMap) -> Path:
    """Binary little-endian PLY with float64 x y z and, if present, uchar red green blue."""
    fields = [("x", "<f8"), ("y", "<f8"), ("z", "<f8")]
    if point_map.colors_rgb is not None:
        fields += [("red", "u1"), ("green", "u1"), ("blue", "u1")]
    data = _xyz_records(point_map, fields)
    if point_map.colors_rgb is not None:
        for i, c in enumerate(("red", "green", "blue")):
            data[c] = point_map.colors_rgb[:, i]
    header_lines = [
        "ply",
        "format binary_little_endian 1.0",
        "comment grade_eval map",
        f"element vertex {point_map.size}",
        *(f"property {_PLY_WRITTEN_TYPES[dtype]} {name}" for name, dtype in fields),
        "end_header",
    ]
    return _write_cloud(path, header_lines, data)


def write_pcd(path: str | Path, point_map: PointMap) -> Path:
    """Binary PCD v0.7 with float32 x y z and, if present, packed rgb (float32 field)."""
    colored = point_map.colors_rgb is not None
    fields = [("x", "<f4"), ("y", "<f4"), ("z", "<f4")] + ([("rgb", "<u4")] if colored else [])
    data = _xyz_records(point_map, fields)
    if point_map.colors_rgb is not None:
        c = point_map.colors_rgb.astype(np.uint32)
        data["rgb"] = (c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2]
    names = " ".join(n for n, _ in fields)
    header_lines = [
        "# .PCD v0.7 - grade_eval map",
        "VERSION 0.7",
        f"FIELDS {names}",
        "SIZE " + " ".join("4" for _ in fields),
        "TYPE " + " ".join("U" if n == "rgb" else "F" for n, _ in fields),
        "COUNT " + " ".join("1" for _ in fields),
        f"WIDTH {point_map.size}",
        "HEIGHT 1",
        "VIEWPOINT 0 0 0 1 0 0 0",
        f"POINTS {point_map.size}",
        "DATA binary",
    ]
    return _write_cloud(path, header_lines, data)


def write_map(path: str | Path, point_map: PointMap) -> Path:
    """Write by suffix: .ply or .pcd."""
    suffix = Path(path).suffix.lower()
    if suffix == ".ply":
        return write_ply(path, point_map)
    if suffix == ".pcd":
        return write_pcd(path, point_map)
    raise FormatError(f"{path}: unsupported map format {suffix!r}; use .ply or .pcd")


def _read_ply(path: Path, raw: bytes) -> PointMap:
    end = raw.find(b"end_header")
    if not raw.startswith(b"ply") or end < 0:
        raise FormatError(f"{path}: not a PLY file (missing 'ply' or 'end_header')")
    body_start = raw.index(b"\n", end) + 1
    header = raw[:end].decode("ascii", errors="replace").splitlines()
    fmt, count, props, in_vertex = "", 0, [], False
    for number, line in enumerate(header, start=1):
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "format":
            fmt = parts[1]
        elif parts[0] == "element":
            in_vertex = parts[1] == "vertex"
            if in_vertex:
                count = int(parts[2])
        elif parts[0] == "property" and in_vertex:
            if parts[1] == "list" or parts[1] not in _PLY_TYPES:
                raise FormatError(f"{path}:{number}: unsupported vertex property {line!r}")
            props.append((parts[2], _PLY_TYPES[parts[1]]))
    names = [n for n, _ in props]
    if not {"x", "y", "z"} <= set(names):
        raise FormatError(f"{path}: PLY vertices need x, y, z properties, got {names}")
    if fmt == "ascii":
        text = raw[body_start:].decode().split("\n")[:count]
        values = np.array([list(map(float, t.split()[: len(props)])) for t in text]).reshape(
            count, len(props)
        )
        data = {n: values[:, i] for i, n in enumerate(names)}
    elif fmt == "binary_little_endian":
        dtype = np.dtype([(n, "<" + t) for n, t in props])
        if len(raw) - body_start < dtype.itemsize * count:
            raise FormatError(f"{path}: truncated PLY body ({count} vertices declared)")
        arr = np.frombuffer(raw, dtype=dtype, count=count, offset=body_start)
        data = {n: arr[n] for n in names}
    else:
        raise FormatError(f"{path}: unsupported PLY format {fmt!r}")
    pts = np.stack([data["x"], data["y"], data["z"]], axis=1).astype(np.float64)
    colors = None
    if {"red", "green", "blue"} <= set(names):
        colors = np.stack([data["red"], data["green"], data["blue"]], axis=1).astype(np.uint8)
    return PointMap(pts, colors, path.stem)


def _read_pcd(path: Path, raw: bytes) -> PointMap:
    header: dict[str, list[str]] = {}
    offset = 0
    while True:
        nl = raw.find(b"\n", offset)
        if nl < 0:
            raise FormatError(f"{path}: PCD header has no DATA line")
        parts = raw[offset:nl].decode("ascii", errors="replace").split()
        offset = nl + 1
        if parts and not parts[0].startswith("#"):
            header[parts[0].upper()] = parts[1:]
            if parts[0].upper() == "DATA":
                break
    names = header.get("FIELDS", [])
    sizes = [int(s) for s in header.get("SIZE", [])]
    types = header.get("TYPE", [])
    count = int(header.get("POINTS", ["0"])[0])
    if not {"x", "y", "z"} <= set(names) or len(sizes) != len(names) or len(types) != len(names):
        raise FormatError(f"{path}: PCD needs FIELDS x y z with SIZE and TYPE for each field")
    kinds = {"F": "f", "U": "u", "I": "i"}
    dtype = np.dtype([(n, f"<{kinds[t]}{s}") for n, s, t in zip(names, sizes, types, strict=True)])
    mode = header["DATA"][0]
    if mode == "ascii":
        rows = raw[offset:].decode().split("\n")[:count]
        values = np.array([list(map(float, r.split())) for r in rows]).reshape(count, len(names))
        cols = {n: values[:, i] for i, n in enumerate(names)}
    elif mode == "binary":
        arr = np.frombuffer(raw, dtype=dtype, count=count, offset=offset)
        cols = {n: arr[n] for n in names}
    else:
        raise FormatError(f"{path}: unsupported PCD DATA mode {mode!r} (ascii or binary)")
    pts = np.stack([cols["x"], cols["y"], cols["z"]], axis=1).astype(np.float64)
    keep = np.all(np.isfinite(pts), axis=1)  # PCD marks invalid points with NaN by convention
    colors = None
    if "rgb" in cols:
        packed = (
            np.asarray(cols["rgb"])
            .astype(np.float32 if dtype["rgb"].kind == "f" else np.uint32)
            .view(np.uint32)
        )
        colors = np.stack([(packed >> 16) & 255, (packed >> 8) & 255, packed & 255], axis=1).astype(
            np.uint8
        )[keep]
    return PointMap(pts[keep], colors, path.stem)


def read_map(path: str | Path) -> PointMap:
    """Read a .ply, .pcd or .npy ((N, 3) float) point map.

    Raises:
        FormatError: unreadable or unsupported file.
    """
    file = Path(path)
    try:
        if file.suffix.lower() == ".npy":
            try:
                arr = np.load(file, allow_pickle=False)
            except (ValueError, EOFError) as err:  # not an .npy, truncated, or pickled objects
                raise FormatError(f"{file}: not a readable .npy array: {err}") from err
            if arr.ndim != 2 or arr.shape[1] < 3:
                raise FormatError(f"{file}: .npy map must be (N, 3+), got {arr.shape}")
            return PointMap(arr[:, :3].astype(np.float64), None, file.stem)
        raw = file.read_bytes()
    except OSError as err:
        raise FormatError(f"{file}: cannot read map: {err}") from err
    try:
        if file.suffix.lower() == ".ply":
            return _read_ply(file, raw)
        if file.suffix.lower() == ".pcd":
            return _read_pcd(file, raw)
    except (ValueError, KeyError, IndexError) as err:
        raise FormatError(f"{file}: malformed point cloud: {err}") from err
    raise FormatError(f"{file}: unsupported map format; use .ply, .pcd or .npy")
