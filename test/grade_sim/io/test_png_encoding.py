"""The ground-truth PNGs (grade_common.png_file): lossless, standard, with the chosen filters."""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
import pytest

from grade_common.errors import ConfigError
from grade_common.png_file import RowFilter, encode_png
from grade_sim.io.ground_truth import PNG_ROW_FILTER


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


def _bgr(image: np.ndarray) -> np.ndarray:
    """What OpenCV decodes an image written R, G, B as: B, G, R."""
    return image[..., ::-1] if image.ndim == 3 else image


@pytest.mark.parametrize("kind", sorted(PNG_ROW_FILTER))
def test_each_kind_decodes_to_the_same_pixels_with_its_row_filter(kind: str) -> None:
    image = _image(kind, np.random.default_rng(3))
    png = encode_png(image, PNG_ROW_FILTER[kind], 1)
    decoded = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    np.testing.assert_array_equal(decoded, _bgr(image))
    filters, _ = _rows(png)
    assert set(filters) == {int(PNG_ROW_FILTER[kind])}


@pytest.mark.parametrize("row_filter", list(RowFilter))
@pytest.mark.parametrize("level", [1, 2, 3, 9])
@pytest.mark.parametrize("kind", ["rgb", "depth", "flow"])
def test_every_filter_and_level_is_lossless_and_readable_by_libpng(
    kind: str, level: int, row_filter: RowFilter
) -> None:
    image = _image(kind, np.random.default_rng(5))
    png = encode_png(image, row_filter, level)
    decoded = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    assert decoded.dtype == image.dtype
    np.testing.assert_array_equal(decoded, _bgr(image))


def test_same_pixels_as_opencvs_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    image = _image("rgb", np.random.default_rng(6))
    assert cv2.imwrite(str(tmp_path / "cv.png"), _bgr(image))
    (tmp_path / "own.png").write_bytes(encode_png(image, RowFilter.SUB))
    own = cv2.imread(str(tmp_path / "own.png"), cv2.IMREAD_UNCHANGED)
    np.testing.assert_array_equal(own, cv2.imread(str(tmp_path / "cv.png"), cv2.IMREAD_UNCHANGED))


def test_level_zero_stores_the_rows_uncompressed() -> None:
    image = _image("rgb", np.random.default_rng(4))
    stored = encode_png(image, RowFilter.SUB, 0)
    _, idat = _rows(stored)
    assert len(idat) > image.size  # deflate's stored blocks: every byte plus headers
    decoded = cv2.imdecode(np.frombuffer(stored, np.uint8), cv2.IMREAD_UNCHANGED)
    np.testing.assert_array_equal(decoded, _bgr(image))


@pytest.mark.parametrize(
    ("image", "level", "match"),
    [
        (np.zeros((4, 4), np.float32), 1, "dtype: float32; allowed: uint8, uint16"),
        (np.zeros((4, 4, 4), np.uint8), 1, r"shape: \(4, 4, 4\)"),
        (np.zeros((4, 4), np.uint8), 10, "level: 10; allowed: 0 to 9"),
    ],
)
def test_bad_images_and_levels_are_named(image: np.ndarray, level: int, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        encode_png(image, RowFilter.UP, level)


def test_every_image_the_writer_writes_has_an_encoding() -> None:
    from grade_common.gt_png import EXTRA_IMAGE_KINDS
    from grade_common.tum import IMAGE_KINDS

    assert set(PNG_ROW_FILTER) == {k.value for k in IMAGE_KINDS} | set(EXTRA_IMAGE_KINDS)
