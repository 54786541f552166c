"""Integrity of a bag's MCAP files: every chunk's CRC, a closed file, what to run if not."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grade_common.bagfile.scan import ScanReport, scan_mcap
from grade_common.errors import GradeError


class BagIntegrityError(GradeError):
    """A bag's storage file fails its CRCs, or was never closed."""


@dataclass(frozen=True)
class IntegrityReport:
    """What `grade bag info` checked of a bag's MCAP files: each file's chunks and their CRCs.

    One ScanReport per file; `describe()` is the line the command prints, and a bag stored as
    sqlite3 (no CRCs) has no files here.
    """

    files: list[ScanReport]

    @property
    def chunks(self) -> int:
        return sum(r.chunks for r in self.files)

    @property
    def chunks_without_crc(self) -> int:
        return sum(r.chunks_without_crc for r in self.files)

    def describe(self) -> str:
        if not self.files:
            return "not checked (no MCAP file: sqlite3 storage carries no CRCs)"
        text = f"{self.chunks} chunk(s) checked"
        if self.chunks_without_crc:
            text += f", {self.chunks_without_crc} without a CRC (written by another tool)"
        return text


def mcap_files(bag: Path) -> list[Path]:
    """The MCAP storage files of a bag directory (or the file itself), sorted."""
    if bag.is_dir():
        return sorted(bag.glob("*.mcap"))
    return [bag] if bag.suffix == ".mcap" else []


def recover_hint(bag: Path) -> str:
    return f"`grade bag recover {bag} --out NEW_BAG` copies every intact message to a new bag"


def problems(report: ScanReport) -> list[str]:
    """Human-readable problems of one scanned file; empty when it is intact and closed."""
    out = [bad.describe() for bad in report.bad_chunks]
    if not report.has_summary and report.tail_problem is not None:
        out.append(report.tail_problem)
    return out


def verify_bag(bag: Path, *, error: type[GradeError] = BagIntegrityError) -> IntegrityReport:
    """Read every chunk of every MCAP file of `bag` and check its CRC.

    Raises:
        error: a chunk is corrupt (its topics and log times are named), a file was never closed,
            or a file is not MCAP at all.
    """
    reports: list[ScanReport] = []
    for path in mcap_files(bag):
        try:
            report = scan_mcap(path)
        except (ValueError, UnicodeDecodeError) as err:
            raise error(
                f"{bag}: bag is truncated or corrupt: {path.name} is not readable MCAP ({err}); "
                f"{recover_hint(bag)}"
            ) from err
        except OSError as err:
            raise error(f"{path}: cannot be read ({err})") from err
        found = problems(report)
        if found:
            raise error(
                f"{bag}: bag is truncated or corrupt: {path.name}: "
                + "; ".join(found)
                + f"; {recover_hint(bag)}"
            )
        reports.append(report)
    return IntegrityReport(reports)


def corruption_description(bag: Path) -> str | None:
    """What is wrong with `bag` (for an error raised by another reader), or None."""
    try:
        verify_bag(bag)
    except BagIntegrityError as err:
        return str(err)
    return None
