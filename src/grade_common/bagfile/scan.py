"""Reading an MCAP file front to back, record by record, checking every chunk's CRC.

Works without the summary section or footer (a recording that was killed), stops cleanly at a
record cut off by the end of the file, and reports each chunk whose data fails its CRC (or
does not decompress) with the topics and log times it held, taken from the message index
records written after it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from grade_common.bagfile.compression import decompress
from grade_common.bagfile.records import MAGIC, RECORD_PREFIX, Cursor, Op

NS_PER_S = 1_000_000_000


@dataclass(frozen=True)
class SchemaInfo:
    """One MCAP schema record as read from a file: the message type's name and definition."""

    id: int
    name: str
    encoding: str
    data: bytes


@dataclass(frozen=True)
class ChannelInfo:
    """One MCAP channel record as read from a file: a topic, its schema and message encoding."""

    id: int
    schema_id: int
    topic: str
    message_encoding: str
    metadata: dict[str, str]


@dataclass
class BadChunk:
    """A chunk whose data cannot be trusted; its messages are not delivered."""

    offset: int
    start_ns: int
    end_ns: int
    reason: str
    topics: list[str] = field(default_factory=list)

    def describe(self) -> str:
        topics = ", ".join(sorted(set(self.topics))) or "unknown topics"
        return (
            f"chunk at byte {self.offset} ({topics}; log time {self.start_ns / NS_PER_S:.3f} s"
            f" to {self.end_ns / NS_PER_S:.3f} s, {self.start_ns}..{self.end_ns} ns): "
            f"{self.reason}"
        )


@dataclass
class ScanReport:
    """What one pass over a file found."""

    path: Path
    file_size: int
    schemas: dict[int, SchemaInfo] = field(default_factory=dict)
    channels: dict[int, ChannelInfo] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)  # channel id -> messages delivered
    chunk_records: list[tuple[int, int]] = field(default_factory=list)  # (byte offset, length)
    chunks_without_crc: int = 0
    bad_chunks: list[BadChunk] = field(default_factory=list)
    data_end: int = 0  # byte after the last whole record read
    has_summary: bool = False  # the data section ended and the file ends in a footer
    tail_problem: str | None = None  # why reading stopped before a Data End record
    start_ns: int | None = None
    end_ns: int | None = None

    @property
    def messages(self) -> int:
        return sum(self.counts.values())

    @property
    def chunks(self) -> int:
        return len(self.chunk_records)


# (channel, its schema if the file defined it, log time ns, message bytes)
MessageSink = Callable[[ChannelInfo, SchemaInfo | None, int, memoryview], None]


class _Scanner:
    def __init__(self, path: Path, stream: BinaryIO, sink: MessageSink | None) -> None:
        self.stream = stream
        self.sink = sink
        size = path.stat().st_size
        self.report = ScanReport(path, size)
        self._last_bad: BadChunk | None = None

    def run(self) -> ScanReport:
        rep = self.report
        if self.stream.read(len(MAGIC)) != MAGIC:
            raise ValueError(f"{rep.path}: not an MCAP file (no MCAP magic at its start)")
        pos = len(MAGIC)
        rep.data_end = pos
        while True:
            prefix = self.stream.read(RECORD_PREFIX.size)
            if not prefix:
                rep.tail_problem = "the file ends without a summary (the writer never closed it)"
                return rep
            if len(prefix) < RECORD_PREFIX.size or not self._fits(pos, prefix):
                rep.tail_problem = (
                    f"the record at byte {pos} is cut off by the end of the file "
                    "(the writer was stopped while writing it)"
                )
                return rep
            op, length = RECORD_PREFIX.unpack(prefix)
            content = self.stream.read(length)
            pos += RECORD_PREFIX.size + length
            if op == Op.DATA_END or op == Op.FOOTER:
                rep.data_end = pos
                rep.has_summary = self._ends_in_footer()
                if not rep.has_summary:
                    rep.tail_problem = "the summary section or footer is cut off"
                return rep
            self._record(op, content, pos - length - RECORD_PREFIX.size)
            rep.data_end = pos

    def _ends_in_footer(self) -> bool:
        size = self.report.file_size
        footer = RECORD_PREFIX.size + 20
        if size < len(MAGIC) + footer + len(MAGIC):
            return False
        self.stream.seek(size - len(MAGIC) - footer)
        tail = self.stream.read(footer + len(MAGIC))
        return tail[0] == Op.FOOTER and tail.endswith(MAGIC)

    def _fits(self, pos: int, prefix: bytes) -> bool:
        _, length = RECORD_PREFIX.unpack(prefix)
        return bool(pos + RECORD_PREFIX.size + length <= self.report.file_size)

    def _record(self, op: int, content: bytes, offset: int) -> None:
        if op != Op.MESSAGE_INDEX:
            self._last_bad = None
        if op == Op.SCHEMA or op == Op.CHANNEL or op == Op.MESSAGE:
            self._inner(op, Cursor(content))
        elif op == Op.CHUNK:
            self.report.chunk_records.append((offset, RECORD_PREFIX.size + len(content)))
            self._chunk(content, offset)
        elif op == Op.MESSAGE_INDEX and self._last_bad is not None:
            channel = self.report.channels.get(Cursor(content).u16())
            if channel is not None:
                self._last_bad.topics.append(channel.topic)

    def _inner(self, op: int, cur: Cursor) -> None:
        rep = self.report
        if op == Op.SCHEMA:
            sid = cur.u16()
            name, encoding = cur.string(), cur.string()
            rep.schemas[sid] = SchemaInfo(sid, name, encoding, bytes(cur.take(cur.u32())))
        elif op == Op.CHANNEL:
            cid, sid = cur.u16(), cur.u16()
            topic, encoding = cur.string(), cur.string()
            rep.channels[cid] = ChannelInfo(cid, sid, topic, encoding, cur.string_map())
        elif op == Op.MESSAGE:
            cid = cur.u16()
            cur.u32()  # sequence
            log_time = cur.u64()
            cur.u64()  # publish time
            channel = rep.channels.get(cid)
            if channel is None:
                raise ValueError(f"message on channel {cid}, which the file never defined")
            rep.counts[cid] = rep.counts.get(cid, 0) + 1
            rep.start_ns = log_time if rep.start_ns is None else min(rep.start_ns, log_time)
            rep.end_ns = log_time if rep.end_ns is None else max(rep.end_ns, log_time)
            if self.sink is not None:
                self.sink(channel, rep.schemas.get(channel.schema_id), log_time, cur.rest())

    def _chunk(self, content: bytes, offset: int) -> None:
        rep = self.report
        cur = Cursor(content)
        start_ns, end_ns, size, crc = cur.u64(), cur.u64(), cur.u64(), cur.u32()
        try:
            compression = cur.string()
            data = cur.take(cur.u64())
            raw = decompress(data, compression, size)
            if crc == 0:
                rep.chunks_without_crc += 1
            elif zlib.crc32(raw) != crc:
                raise ValueError("its data fails the CRC check (bytes changed after writing)")
        except (ValueError, UnicodeDecodeError) as err:
            self._last_bad = BadChunk(offset, start_ns, end_ns, str(err))
            rep.bad_chunks.append(self._last_bad)
            return
        inner = Cursor(raw)
        while inner.pos < len(raw):
            op = inner.take(1)[0]
            body = Cursor(bytes(inner.take(inner.u64())))
            if op in (Op.SCHEMA, Op.CHANNEL, Op.MESSAGE):
                self._inner(op, body)


def scan_mcap(path: Path, sink: MessageSink | None = None) -> ScanReport:
    """Read `path` front to back; `sink(channel, schema, log_time_ns, data)` gets every message
    of an intact chunk (or outside chunks), in file order.

    Raises:
        ValueError: not an MCAP file, or a record inside an intact chunk is malformed.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as stream:
        return _Scanner(path, stream, sink).run()
