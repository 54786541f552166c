"""The ground-truth PNGs' row filters and zlib strategies: lossless, and really the ones chosen."""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
import pytest

from grade_sim.io.ground_truth import PNG_FILTER_STRATEGY, png_params

# PNG filter type bytes (ISO/IEC 15948, 9.2) of OpenCV's filter flags.
FILTER_BYTE = {
    cv2.IMWRITE_PNG_FILTER_NONE: 0,
    cv2.IMWRITE_PNG_FILTER_SUB: 1,
    cv2.IMWRITE_PNG_FILTER_UP: 2,
    cv2.IMWRITE_PNG_FILTER_AVG: 3,
    cv2.IMWRITE_PNG_FILTER_PAETH: 4,
}


def _image(kind: str, rng: np.random.Generator) -> np.ndarray:
    """A 48x64 image of the kind's type: smooth gradients with noise, or patches of ids."""
    yy, xx = np.mgrid[0:48, 0:64]
    if kind == "rgb":
        base = np.stack([xx * 3, yy * 4, xx + yy], axis=-1).astype(np.int64)
        return np.clip(base + rng.integers(0, 8, base.shape), 0, 255).astype(np.uint8)
    if kind in ("instance", "semantic"):
        return (rng.integers(0, 5, (6, 8)).repeat(8, 0).repeat(8, 1) * 1000).astype(np.uint16)
    depth = 5000 + xx * 37 + yy * 11 + rng.integers(0, 3, xx.shape)
    if kind == "depth":
        return depth.astype(np.uint16)
    return np.stack([depth, depth + 7, depth * 2], axis=-1).astype(np.uint16)  # normals, flow


def _rows(png: bytes) -> tuple[list[int], bytes]:
    """The filter byte of each row and the zlib stream of a non-interlaced PNG."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", b""
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        tag, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        if tag == b"IHDR":
            ihdr = body
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", ihdr[:10])
    channels = {0: 1, 2: 3, 6: 4}[colour]
    stride = 1 + width * channels * depth // 8
    raw = zlib.decompress(idat)
    assert len(raw) == stride * height
    return [raw[r * stride] for r in range(height)], idat


@pytest.mark.parametrize("kind", sorted(PNG_FILTER_STRATEGY))
def test_each_kind_decodes_to_the_same_pixels_with_its_row_filter(kind: str) -> None:
    image = _image(kind, np.random.default_rng(3))
    ok, png = cv2.imencode(".png", image, png_params(kind, 1))
    assert ok
    np.testing.assert_array_equal(cv2.imdecode(png, cv2.IMREAD_UNCHANGED), image)
    filters, _ = _rows(png.tobytes())
    row_filter, _ = PNG_FILTER_STRATEGY[kind]
    assert set(filters) == {FILTER_BYTE[row_filter]}


def test_level_zero_stores_the_rows_uncompressed() -> None:
    image = _image("rgb", np.random.default_rng(4))
    _, stored = cv2.imencode(".png", image, png_params("rgb", 0))
    _, idat = _rows(stored.tobytes())
    assert len(idat) > image.size  # deflate's stored blocks: every byte plus headers
    np.testing.assert_array_equal(cv2.imdecode(stored, cv2.IMREAD_UNCHANGED), image)


def test_every_image_the_writer_writes_has_an_encoding() -> None:
    from grade_common.gt_png import EXTRA_IMAGE_KINDS
    from grade_common.tum import IMAGE_KINDS

    assert set(PNG_FILTER_STRATEGY) == {k.value for k in IMAGE_KINDS} | set(EXTRA_IMAGE_KINDS)
