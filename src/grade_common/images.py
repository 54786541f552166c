"""sensor_msgs/Image buffers <-> numpy arrays, without cv_bridge (works for rclpy and rosbags
messages alike: both have encoding, height, width, step, is_bigendian and data)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from grade_common.errors import FormatError, GradeError

# encoding -> (dtype, channels), for the encodings grade reads and writes (REP 118 names)
ENCODINGS: dict[str, tuple[type[np.generic], int]] = {
    "rgb8": (np.uint8, 3),
    "bgr8": (np.uint8, 3),
    "rgba8": (np.uint8, 4),
    "bgra8": (np.uint8, 4),
    "mono8": (np.uint8, 1),
    "8UC1": (np.uint8, 1),
    "mono16": (np.uint16, 1),
    "16UC1": (np.uint16, 1),
    "32FC1": (np.float32, 1),
    "32FC2": (np.float32, 2),  # optical flow (dx, dy)
    "32FC3": (np.float32, 3),  # surface normals
}


class ImageMessage(Protocol):
    """The fields of sensor_msgs/Image that hold the pixels (rclpy and rosbags messages)."""

    encoding: str
    height: int
    width: int
    step: int
    is_bigendian: int
    data: Any  # bytes-like: rclpy's array.array('B'), rosbags' uint8 ndarray, bytes


def image_to_array(
    msg: ImageMessage,
    allowed: Collection[str] | None = None,
    error: type[GradeError] = FormatError,
) -> NDArray[np.generic]:
    """The image as (h, w) or (h, w, channels) in its encoding's dtype, native byte order.

    Args:
        allowed: the encodings the caller accepts (default: every one in ENCODINGS).
        error: the error type raised for a bad encoding or a short buffer.
    """
    encoding, height, width, step = msg.encoding, msg.height, msg.width, msg.step
    accepted = ENCODINGS.keys() if allowed is None else allowed
    if encoding not in accepted or encoding not in ENCODINGS:
        raise error(f"unsupported image encoding '{encoding}'; expected one of {sorted(accepted)}")
    dtype, channels = ENCODINGS[encoding]
    wire = np.dtype(dtype).newbyteorder(">" if msg.is_bigendian else "<")
    row_bytes = width * channels * wire.itemsize
    buf = np.frombuffer(msg.data, dtype=np.uint8)
    if step < row_bytes or buf.size < step * height:
        raise error(
            f"image buffer of {buf.size} bytes (step {step}) is too small for {width}x{height} "
            f"{encoding}"
        )
    rows = buf[: step * height].reshape(height, step)[:, :row_bytes]
    array = np.ascontiguousarray(rows).view(wire).astype(dtype)
    return array.reshape((height, width) if channels == 1 else (height, width, channels))


def array_to_data(array: NDArray[np.generic], encoding: str) -> tuple[bytes, int]:
    """Little-endian buffer and row step (bytes) of an array for `encoding`."""
    dtype, _ = ENCODINGS[encoding]
    arr = np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<"))
    channels = arr.shape[2] if arr.ndim == 3 else 1
    return arr.tobytes(), int(arr.shape[1] * arr.itemsize * channels)
