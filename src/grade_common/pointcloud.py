"""sensor_msgs/PointCloud2 -> arrays, for any reader (a bag's deserialised message or a live
rclpy one: both have `fields`, `point_step`, `is_bigendian` and `data`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from grade_common.errors import FormatError, GradeError

# sensor_msgs/PointField datatype -> numpy type (little endian added by the reader)
POINT_FIELD_DTYPES = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 8: "f8"}


def cloud_fields(msg: Any, *, error: type[GradeError] = FormatError) -> dict[str, np.ndarray]:
    """The named fields of a sensor_msgs/PointCloud2 as arrays (one value per point).

    Raises:
        error: big-endian data or a field of an unknown datatype.
    """
    if msg.is_bigendian:
        raise error("PointCloud2: big-endian clouds are not supported")
    spec = []
    for f in msg.fields:
        if f.datatype not in POINT_FIELD_DTYPES:
            raise error(f"PointCloud2: field {f.name!r} has datatype {f.datatype}")
        spec.append((f.name, "<" + POINT_FIELD_DTYPES[f.datatype], f.offset))
    dtype = np.dtype(
        {
            "names": [n for n, _, _ in spec],
            "formats": [t for _, t, _ in spec],
            "offsets": [o for _, _, o in spec],
            "itemsize": msg.point_step,
        }
    )
    rows = np.frombuffer(np.asarray(msg.data, dtype=np.uint8).tobytes(), dtype=dtype)
    return {name: np.asarray(rows[name]) for name in dtype.names or ()}
