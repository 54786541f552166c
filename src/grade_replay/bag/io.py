"""Reading and writing rosbag2 bags safely: clear errors naming the file, atomic outputs.

Every bag tool opens its input through `open_bag` (which turns rosbags' low-level failures into
`BagError`s that name the file) and writes its output through `atomic_output` (a temporary name
renamed into place only when complete, an existing output refused).
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import (
    Connection,
    ConnectionExtRosbag2,
    MessageDefinitionFormat,
    QosDurability,
)
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.typesys import get_types_from_msg
from tqdm import tqdm

from grade_common import ros_distro
from grade_common.atomic import StagedOutput
from grade_common.bagfile.compression import DECOMPRESSION_ERRORS
from grade_common.bagfile.integrity import (
    IntegrityReport,
    corruption_description,
    mcap_files,
    recover_hint,
    verify_bag,
)
from grade_common.bagfile.rosbag2 import BagOutput, OutputConnection
from grade_replay.errors import (
    BagCorruptError,
    BagFormatError,
    BagNotFoundError,
    BagOutputExistsError,
    TopicNotFoundError,
)

NS_PER_S = 1_000_000_000
START_MARKER_TOPIC = "/starting_experiment"
HEADER_TYPE = "std_msgs/msg/Header"
TIME_TYPE = "builtin_interfaces/msg/Time"
# Errors a truncated or corrupt storage file surfaces as while being parsed.
_CORRUPT_ERRORS: tuple[type[Exception], ...] = (
    ReaderError,
    struct.error,
    EOFError,
    ValueError,
    IndexError,
    KeyError,
    OSError,
    OverflowError,
    *DECOMPRESSION_ERRORS,
    TypeError,  # rosbags reading past the end of an 8-byte MCAP: ord() of b""
    MemoryError,  # a corrupt length field asking for gigabytes
)
_COUNT_ERRORS: tuple[type[Exception], ...] = (*_CORRUPT_ERRORS, ArithmeticError)


@dataclass(frozen=True)
class TopicSummary:
    """One topic of a bag: name, type and message count (from the bag's index)."""

    name: str
    msgtype: str
    count: int


class BagSource:
    """An open input bag; use through `open_bag`."""

    def __init__(self, path: Path, reader: Reader) -> None:
        self.path = path
        self._reader = reader
        self.typestore = ros_distro.typestore()
        self._register_bag_types()

    def _register_bag_types(self) -> None:
        # Types the typestore lacks (a user's custom messages) come from the bag's own definitions.
        for conn in self._reader.connections:
            if conn.msgtype in self.typestore.fielddefs:
                continue
            if conn.msgdef.format != MessageDefinitionFormat.MSG or not conn.msgdef.data:
                continue
            try:
                self.typestore.register(get_types_from_msg(conn.msgdef.data, conn.msgtype))
            except Exception:
                continue

    @property
    def connections(self) -> list[Connection]:
        """The bag's connections (one per topic, type and QoS)."""
        return list(self._reader.connections)

    @property
    def message_count(self) -> int:
        """Total number of messages from the bag's metadata."""
        return int(self._reader.message_count)

    @property
    def start_ns(self) -> int:
        """Receive time of the earliest message (ns); 0 for an empty bag."""
        return int(self._reader.start_time) if self.message_count else 0

    @property
    def end_ns(self) -> int:
        """Receive time of the latest message (ns); 0 for an empty bag."""
        return int(self._reader.end_time) - 1 if self.message_count else 0

    @property
    def size_bytes(self) -> int:
        """Size of the bag on disk."""
        if self.path.is_file():
            return self.path.stat().st_size
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())

    def topics(self) -> dict[str, TopicSummary]:
        """Topic name -> summary, sorted by name."""
        out: dict[str, TopicSummary] = {}
        for name, info in sorted(self._reader.topics.items()):
            msgtype = info.msgtype or "/".join(sorted({c.msgtype for c in info.connections}))
            out[name] = TopicSummary(name, msgtype, int(info.msgcount))
        return out

    def connections_of(self, topics: Collection[str]) -> list[Connection]:
        """The connections of the named topics.

        Raises:
            TopicNotFoundError: a topic is not in the bag (the error lists those that are).
        """
        present = {c.topic for c in self._reader.connections}
        missing = sorted(set(topics) - present)
        if missing:
            raise TopicNotFoundError(
                f"{self.path}: topic(s) {missing} not in the bag; it has {sorted(present)}"
            )
        return [c for c in self._reader.connections if c.topic in topics]

    def msgtype_of(self, topic: str) -> str:
        """The message type of a topic (the first connection's)."""
        return self.connections_of([topic])[0].msgtype

    def messages(
        self,
        connections: Collection[Connection] = (),
        start_ns: int | None = None,
        stop_ns: int | None = None,
        progress: bool = False,
        desc: str = "",
    ) -> Iterator[tuple[Connection, int, bytes]]:
        """Messages in receive-time order, as (connection, receive time ns, raw CDR bytes).

        Raises:
            BagCorruptError: the storage file is truncated or corrupt (raised while iterating).
        """
        total = sum(c.msgcount for c in connections) if connections else self.message_count
        bar = tqdm(
            total=total,
            unit="msg",
            desc=desc or self.path.name,
            file=sys.stderr,
            disable=not progress,
            leave=False,
        )
        try:
            for item in self._reader.messages(connections, start_ns, stop_ns):
                bar.update(1)
                yield item
        except _CORRUPT_ERRORS as err:
            # Name the damaged chunk's topics and times (a second pass that checks every CRC).
            found = corruption_description(self.path)
            raise BagCorruptError(
                found
                or f"{self.path}: bag is truncated or corrupt while reading messages ({err}); "
                f"{recover_hint(self.path)}"
            ) from err
        finally:
            bar.close()

    def verify(self) -> IntegrityReport:
        """Check the CRC of every chunk of the bag's MCAP files (sqlite3 bags have none).

        Raises:
            BagCorruptError: a chunk is corrupt (its topics and times named) or a file unclosed.
        """
        return verify_bag(self.path, error=BagCorruptError)

    def deserialize(self, data: bytes, msgtype: str) -> Any:
        """Decode raw CDR bytes of `msgtype` with this bag's typestore."""
        try:
            return self.typestore.deserialize_cdr(data, msgtype)
        except KeyError as err:
            raise BagFormatError(
                f"{self.path}: message type {msgtype!r} is unknown and the bag carries no "
                "definition for it"
            ) from err
        except Exception as err:
            raise BagCorruptError(
                f"{self.path}: a {msgtype} message cannot be decoded ({err})"
            ) from err

    def serialize(self, msg: object, msgtype: str) -> bytes:
        """Encode a message of `msgtype` to CDR (little endian)."""
        return bytes(self.typestore.serialize_cdr(msg, msgtype))

    def is_latched(self, conn: Connection) -> bool:
        """Whether the connection was offered transient local (e.g. /tf_static)."""
        ext = conn.ext
        if not isinstance(ext, ConnectionExtRosbag2):
            return False
        return any(q.durability == QosDurability.TRANSIENT_LOCAL for q in ext.offered_qos_profiles)

    def has_header(self, msgtype: str) -> bool:
        """Whether the type's first field is a std_msgs/Header (its stamp can be patched)."""
        return self._first_field_type(msgtype) == HEADER_TYPE

    def starts_with_time(self, msgtype: str) -> bool:
        """Whether the first field is a builtin_interfaces/Time (rosgraph_msgs/Clock).

        Its bytes sit where a Header's stamp would, so the same patching applies.
        """
        return self._first_field_type(msgtype) == TIME_TYPE

    def _first_field_type(self, msgtype: str) -> str | None:
        fields = self.typestore.fielddefs.get(msgtype)
        if not fields or not fields[1]:
            return None
        _, (_, typ) = fields[1][0]
        return typ if isinstance(typ, str) else None


@contextmanager
def open_bag(path: Path | str) -> Iterator[BagSource]:
    """Open a rosbag2 bag (directory with metadata.yaml, or a single .mcap/.db3 file).

    Raises:
        BagNotFoundError: the path does not exist.
        BagFormatError: not a rosbag2 bag, or a storage format grade cannot read.
        BagCorruptError: the metadata or storage file is truncated or corrupt.
    """
    path = Path(path)
    if not path.exists():
        raise BagNotFoundError(f"{path}: bag does not exist")
    if path.is_dir() and not (path / "metadata.yaml").is_file():
        if mcap_files(path):
            raise BagCorruptError(
                f"{path}: has an .mcap file but no metadata.yaml (the recording was "
                f"interrupted); {recover_hint(path)}"
            )
        raise BagFormatError(f"{path}: not a rosbag2 directory (no metadata.yaml in it)")
    if path.is_file() and path.suffix not in (".mcap", ".db3"):
        raise BagFormatError(
            f"{path}: unknown storage format {path.suffix!r}; grade reads "
            "rosbag2 directories, .mcap and .db3 files"
        )
    try:
        reader = Reader(path)
        reader.open()
    except ReaderError as err:
        text = str(err)
        if "not supported" in text or "Unrecognized storage" in text:
            raise BagFormatError(
                f"{path}: unknown storage format: {text} (grade reads mcap and sqlite3)"
            ) from err
        raise BagCorruptError(
            f"{path}: bag is truncated or corrupt: {text}; {recover_hint(path)}"
        ) from err
    except _CORRUPT_ERRORS as err:
        raise BagCorruptError(
            f"{path}: bag is truncated or corrupt: {err}; {recover_hint(path)}"
        ) from err
    try:
        source = BagSource(path, reader)
        _check_counts(source)
        yield source
    finally:
        reader.close()


def _check_counts(bag: BagSource) -> None:
    """The metadata's counts and times are whole numbers (a damaged metadata.yaml can hold
    `.nan` or `1e999`, which rosbags passes on).

    Raises:
        BagCorruptError: a count or time that is not a number, naming the bag.
    """
    try:
        for conn in bag.connections:
            int(conn.msgcount)
        bag.start_ns, bag.end_ns  # noqa: B018  (the conversions are the check)
    except _COUNT_ERRORS as err:
        raise BagCorruptError(
            f"{bag.path}: bag metadata is corrupt: a message count or time is not a whole "
            f"number ({err})"
        ) from err


def atomic_output(out: Path | str, source: Path | str | None = None) -> StagedOutput:
    """A temporary path to write `out` at (`with atomic_output(out) as tmp:`), renamed to `out`
    only on success; `<parent>/.<name>.partial/<name>` so a bag keeps its own file names.

    Raises:
        BagOutputExistsError: `out` exists already (it is never overwritten).
        OutputPathError: `out` is, is inside or holds the input bag `source`, or cannot be
            created (grade_common.output_guard).
    """
    inputs = [source] if source is not None else []
    return StagedOutput(out, nested=True, exists_error=BagOutputExistsError, inputs=inputs)


def open_writer(path: Path) -> BagOutput:
    """A rosbag2 v9 MCAP writer (zstd chunks with CRCs) at a path that must not exist."""
    return BagOutput(path)


def copy_connection(writer: BagOutput, conn: Connection, bag: BagSource) -> OutputConnection:
    """Add a connection with the same topic, type, definition and offered QoS as `conn`."""
    ext = conn.ext
    fmt = ext.serialization_format if isinstance(ext, ConnectionExtRosbag2) else "cdr"
    qos = ext.offered_qos_profiles if isinstance(ext, ConnectionExtRosbag2) else []
    if conn.msgdef.format != MessageDefinitionFormat.NONE and conn.msgdef.data and conn.digest:
        return writer.add_connection(
            conn.topic,
            conn.msgtype,
            msgdef=conn.msgdef.data,
            rihs01=conn.digest,
            serialization_format=fmt,
            offered_qos_profiles=qos,
        )
    if conn.msgtype not in bag.typestore.fielddefs:
        raise BagFormatError(
            f"{bag.path}: topic {conn.topic} has type {conn.msgtype!r} without "
            "a definition in the bag or the ROS 2 typestore"
        )
    return writer.add_connection(
        conn.topic,
        conn.msgtype,
        typestore=bag.typestore,
        serialization_format=fmt,
        offered_qos_profiles=qos,
    )


def _stamp_format(data: bytes | memoryview) -> str:
    # CDR encapsulation header: byte 1 is 0x01 for little endian, 0x00 for big endian.
    return "<iI" if data[1] == 1 else ">iI"


def header_stamp_ns(data: bytes | memoryview) -> int:
    """header.stamp (ns) of raw CDR bytes of a message whose first field is a Header."""
    sec, nanosec = struct.unpack_from(_stamp_format(data), data, 4)
    return int(sec) * NS_PER_S + int(nanosec)


def with_header_stamp(data: bytes | memoryview, stamp_ns: int) -> bytes:
    """Raw CDR bytes with header.stamp replaced (all other bytes identical)."""
    out = bytearray(data)
    sec, nanosec = divmod(int(stamp_ns), NS_PER_S)
    struct.pack_into(_stamp_format(data), out, 4, sec, nanosec)
    return bytes(out)


def stamp_to_ns(stamp: Any) -> int:
    """builtin_interfaces/Time -> ns."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def median_rate_hz(stamps_ns: np.ndarray) -> float:
    """Rate from the median period of sorted stamps; 0 with fewer than two distinct stamps."""
    if stamps_ns.size < 2:
        return 0.0
    periods = np.diff(np.sort(stamps_ns))
    median = float(np.median(periods))
    return NS_PER_S / median if median > 0 else 0.0
