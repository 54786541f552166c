"""sensor_msgs/Image fields <-> numpy arrays, without cv_bridge (works for rclpy and rosbags)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from grade_noise.errors import NoiseInputError

# encoding -> (dtype, channels)
ENCODINGS: dict[str, tuple[type[np.generic], int]] = {
    "rgb8": (np.uint8, 3),
    "bgr8": (np.uint8, 3),
    "32FC1": (np.float32, 1),
    "16UC1": (np.uint16, 1),
}
RGB_ENCODINGS = ("rgb8", "bgr8")
DEPTH_ENCODINGS = ("32FC1", "16UC1")


def image_to_array(
    encoding: str,
    height: int,
    width: int,
    step: int,
    is_bigendian: int,
    data: bytes | bytearray | memoryview | NDArray[np.uint8],
    allowed: tuple[str, ...],
) -> NDArray[np.generic]:
    """View the message buffer as (h, w) or (h, w, 3); raise NoiseInputError for bad encodings."""
    if encoding not in allowed:
        raise NoiseInputError(
            f"unsupported image encoding '{encoding}'; this topic accepts {list(allowed)}"
        )
    dtype, channels = ENCODINGS[encoding]
    dt = np.dtype(dtype).newbyteorder(">" if is_bigendian else "<")
    row = width * channels * dt.itemsize
    buf = np.frombuffer(bytes(data) if isinstance(data, memoryview) else data, dtype=np.uint8)
    if step < row or buf.size < step * height:
        raise NoiseInputError(
            f"image buffer of {buf.size} bytes (step {step}) is too small for {width}x{height} "
            f"{encoding}"
        )
    rows = buf[: step * height].reshape(height, step)[:, :row]
    arr = np.ascontiguousarray(rows).view(dt).astype(dtype)
    return arr.reshape((height, width, 3) if channels == 3 else (height, width))


def array_to_data(array: NDArray[np.generic], encoding: str) -> tuple[bytes, int]:
    """Little-endian buffer and step of an array for `encoding`."""
    dtype, _ = ENCODINGS[encoding]
    arr = np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<"))
    return arr.tobytes(), int(
        arr.shape[1] * (arr.itemsize * (arr.shape[2] if arr.ndim == 3 else 1))
    )


def depth_to_metres(
    array: NDArray[np.generic], encoding: str, uint16_scale_m: float
) -> NDArray[np.float32]:
    """Float metres with NaN for "no return" (0 in either encoding, NaN/inf in 32FC1)."""
    z = array.astype(np.float32) * np.float32(uint16_scale_m if encoding == "16UC1" else 1.0)
    return np.where(np.isfinite(z) & (z > 0.0), z, np.float32(np.nan)).astype(np.float32)


def metres_to_depth(
    depth_m: NDArray[np.float32], encoding: str, uint16_scale_m: float
) -> NDArray[np.generic]:
    """Back to the message encoding: invalid -> NaN in 32FC1, 0 in 16UC1 (clipped to 65535)."""
    if encoding == "32FC1":
        return depth_m.astype(np.float32)
    units = np.where(np.isfinite(depth_m), np.rint(depth_m / uint16_scale_m), 0.0)
    return np.clip(units, 0, 65535).astype(np.uint16)
