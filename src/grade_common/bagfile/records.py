"""MCAP record layout (https://mcap.dev/spec): opcodes and the little-endian primitives.

Only what grade writes and reads back is here; unknown records are skipped by length, as the
specification requires.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Mapping

MAGIC = b"\x89MCAP0\r\n"
PROFILE = "ros2"
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
RECORD_PREFIX = struct.Struct("<BQ")  # opcode, content length


class Op(enum.IntEnum):
    """The MCAP record opcodes this package writes and reads (the MCAP specification's values)."""

    HEADER = 0x01
    FOOTER = 0x02
    SCHEMA = 0x03
    CHANNEL = 0x04
    MESSAGE = 0x05
    CHUNK = 0x06
    MESSAGE_INDEX = 0x07
    CHUNK_INDEX = 0x08
    STATISTICS = 0x0B
    METADATA = 0x0C
    METADATA_INDEX = 0x0D
    SUMMARY_OFFSET = 0x0E
    DATA_END = 0x0F


def u16(value: int) -> bytes:
    return _U16.pack(value)


def u32(value: int) -> bytes:
    return _U32.pack(value)


def u64(value: int) -> bytes:
    return _U64.pack(value)


def string(text: str) -> bytes:
    data = text.encode()
    return _U32.pack(len(data)) + data


def string_map(items: Mapping[str, str]) -> bytes:
    body = b"".join(string(k) + string(v) for k, v in items.items())
    return _U32.pack(len(body)) + body


def record(op: Op, content: bytes) -> bytes:
    return RECORD_PREFIX.pack(op, len(content)) + content


class Cursor:
    """Reads primitives from one record's content; raises ValueError past its end."""

    def __init__(self, data: bytes | memoryview, pos: int = 0) -> None:
        self.data = memoryview(data)
        self.pos = pos

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("record ends early")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def u16(self) -> int:
        return int(_U16.unpack(self.take(2))[0])

    def u32(self) -> int:
        return int(_U32.unpack(self.take(4))[0])

    def u64(self) -> int:
        return int(_U64.unpack(self.take(8))[0])

    def string(self) -> str:
        return bytes(self.take(self.u32())).decode()

    def string_map(self) -> dict[str, str]:
        end = self.u32() + self.pos
        out: dict[str, str] = {}
        while self.pos < end:
            key = self.string()
            out[key] = self.string()
        return out

    def rest(self) -> memoryview:
        return self.take(len(self.data) - self.pos)
