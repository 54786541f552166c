"""Chunk compression of grade's MCAP files: zstd (default), lz4 or none."""

from __future__ import annotations

import enum

import lz4.frame  # type: ignore[import-untyped]

try:  # Python 3.14 has zstd in the standard library; older ones use its backport.
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

# What a reader's decompression of damaged chunk bytes raises (zstd; lz4 raises RuntimeError).
DECOMPRESSION_ERRORS: tuple[type[Exception], ...] = (zstd.ZstdError, RuntimeError)

# zstd level 1: about as small as level 3 on rendered images, and fast enough for the writer
# thread to keep up with the simulator on 2 cores (measured by `grade bench bag`).
ZSTD_LEVEL = 1


class Compression(enum.StrEnum):
    """The `compression` string an MCAP chunk record carries ('' for none)."""

    ZSTD = "zstd"
    LZ4 = "lz4"
    NONE = "none"

    @property
    def mcap_name(self) -> str:
        return "" if self is Compression.NONE else self.value


def compress(data: bytes | bytearray, how: Compression) -> bytes:
    if how is Compression.ZSTD:
        return bytes(zstd.compress(data, level=ZSTD_LEVEL))
    if how is Compression.LZ4:
        return bytes(lz4.frame.compress(data))
    return bytes(data)


def decompress(data: bytes | memoryview, mcap_name: str, size: int) -> bytes:
    """Chunk records from compressed bytes.

    Raises:
        ValueError: unknown compression, undecodable data or a size other than `size`.
    """
    try:
        if mcap_name == "zstd":
            raw = bytes(zstd.decompress(bytes(data)))
        elif mcap_name == "lz4":
            raw = bytes(lz4.frame.decompress(bytes(data)))
        elif mcap_name == "":
            raw = bytes(data)
        else:
            raise ValueError(f"unknown chunk compression {mcap_name!r}")
    except ValueError:
        raise
    except Exception as err:  # zstd.ZstdError, lz4's RuntimeError: damaged compressed bytes
        raise ValueError(f"{mcap_name} data cannot be decompressed ({err})") from err
    if len(raw) != size:
        raise ValueError(f"chunk decompresses to {len(raw)} bytes, its record says {size}")
    return raw
