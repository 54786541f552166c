"""Rebuild a readable rosbag2 bag from MCAP files without footer or summary (a killed
recording), or with corrupt chunks: every message of every intact chunk is copied, in file
order, into a new bag with its own metadata.yaml. The source is only read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from grade_common.atomic import StagedOutput
from grade_common.bagfile.compression import Compression
from grade_common.bagfile.integrity import BagIntegrityError, mcap_files, problems
from grade_common.bagfile.metadata import QOS_KEY, TYPE_HASH_KEY
from grade_common.bagfile.rosbag2 import Rosbag2Topic, Rosbag2Writer
from grade_common.bagfile.scan import NS_PER_S, ChannelInfo, ScanReport, SchemaInfo, scan_mcap
from grade_common.errors import GradeError, OutputExistsError


@dataclass
class RecoveryReport:
    """What `grade bag recover` saved from a damaged bag: messages per topic, the time span,
    how much of the source was usable, and what could not be recovered and why."""

    source: Path
    output: Path
    topics: dict[str, int] = field(default_factory=dict)  # topic -> messages recovered
    start_ns: int | None = None
    end_ns: int | None = None
    problems: list[str] = field(default_factory=list)  # what could not be recovered, and why
    bytes_used: int = 0  # bytes of the source up to its last whole record
    bytes_total: int = 0

    @property
    def messages(self) -> int:
        return sum(self.topics.values())

    def describe(self) -> str:
        lines = [f"recovered {self.messages} message(s) from {self.source} into {self.output}"]
        if self.start_ns is not None and self.end_ns is not None:
            lines.append(
                f"  log time {self.start_ns / NS_PER_S:.3f} s to {self.end_ns / NS_PER_S:.3f} s"
            )
        width = max((len(t) for t in self.topics), default=0)
        lines += [f"  {t:<{width}}  {n}" for t, n in sorted(self.topics.items())]
        lines.append(f"  {self.bytes_used} of {self.bytes_total} bytes were whole records")
        lines += [f"  lost: {p}" for p in self.problems]
        return "\n".join(lines)


def _qos(channel: ChannelInfo) -> list[dict[str, Any]]:
    try:
        data = yaml.safe_load(channel.metadata.get(QOS_KEY, "") or "[]")
    except yaml.YAMLError:
        return []
    if isinstance(data, list) and all(isinstance(q, dict) for q in data):
        return data
    return []  # an older layout: the topic is kept, its offered QoS is not


class _Copier:
    def __init__(
        self, writer: Rosbag2Writer, report: RecoveryReport, type_hash_of: Callable[[str], str]
    ) -> None:
        self.writer = writer
        self.report = report
        self.type_hash_of = type_hash_of
        self._ids: dict[tuple[int, int], int] = {}
        self._file = 0

    def channel_id(self, channel: ChannelInfo, schema: SchemaInfo | None) -> int:
        key = (self._file, channel.id)
        if key not in self._ids:
            msgtype = schema.name if schema else ""
            self._ids[key] = self.writer.add_topic(
                Rosbag2Topic(
                    channel.topic,
                    msgtype,
                    schema.data.decode(errors="replace") if schema else "",
                    channel.metadata.get(TYPE_HASH_KEY) or self.type_hash_of(msgtype),
                    _qos(channel),
                    channel.message_encoding,
                )
            )
            self.report.topics.setdefault(channel.topic, 0)
        return self._ids[key]

    def sink(
        self, channel: ChannelInfo, schema: SchemaInfo | None, log_time_ns: int, data: memoryview
    ) -> None:
        rep = self.report
        self.writer.write(self.channel_id(channel, schema), log_time_ns, data)
        rep.topics[channel.topic] += 1
        rep.start_ns = log_time_ns if rep.start_ns is None else min(rep.start_ns, log_time_ns)
        rep.end_ns = log_time_ns if rep.end_ns is None else max(rep.end_ns, log_time_ns)

    def copy(self, path: Path) -> ScanReport:
        self._file += 1
        result = scan_mcap(path, self.sink)
        for channel in result.channels.values():  # topics without an intact message
            self.channel_id(channel, result.schemas.get(channel.schema_id))
        return result


def recover_bag(
    source: Path,
    output: Path,
    *,
    compression: Compression = Compression.ZSTD,
    type_hash_of: Callable[[str], str] = lambda msgtype: "",
    exists_error: type[GradeError] = OutputExistsError,
    error: type[GradeError] = BagIntegrityError,
) -> RecoveryReport:
    """Copy every intact message of `source` (a bag directory or an .mcap file) into the new
    bag directory `output`, written under a temporary name and moved into place when complete.

    Args:
        type_hash_of: the RIHS01 hash of a type whose channel does not carry one.

    Raises:
        exists_error: `output` exists.
        error: `source` has no MCAP file, is not MCAP, or `output` lies inside it.
    """
    files = mcap_files(source)
    if not files:
        raise error(f"{source}: no .mcap file to recover from")
    if output.resolve().is_relative_to(source.resolve()):
        raise error(f"{output}: the recovered bag must not be written inside {source}")
    report = RecoveryReport(source, output)
    staged = StagedOutput(output, nested=True, exists_error=exists_error)
    with staged as tmp:
        writer = Rosbag2Writer(tmp, compression=compression)
        copier = _Copier(writer, report, type_hash_of)
        try:
            for path in files:
                try:
                    scanned = copier.copy(path)
                except (ValueError, UnicodeDecodeError) as err:
                    raise error(f"{path}: cannot be recovered: {err}") from err
                report.problems += [f"{path.name}: {p}" for p in problems(scanned)]
                report.bytes_used += scanned.data_end
                report.bytes_total += scanned.file_size
        except BaseException:
            writer.abort()
            raise
        writer.close()
    return report
