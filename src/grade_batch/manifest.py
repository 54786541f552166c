"""The batch manifest (`DIR/manifest.json`): the sweep's digest and each job's state.

Only the batch process writes it (workers report back), always atomically (a whole new file
moved into place), so a killed batch leaves the last complete manifest. Per job: status, seed,
settings, output checksum, attempts, the last error, wall time and the log's path.
"""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from grade_batch.errors import BatchError, BatchOutputError
from grade_batch.jobs import Job
from grade_common.atomic import write_bytes

MANIFEST_JSON = "manifest.json"
FORMAT_VERSION = 1


class JobStatus(enum.StrEnum):
    """A job's state in the manifest."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"


@dataclass
class JobEntry:
    """One job's line of the manifest."""

    job_id: str
    settings: dict[str, Any]
    status: JobStatus = JobStatus.PENDING
    checksum: str | None = None
    attempts: int = 0
    error: str | None = None
    wall_s: float | None = None
    log: str = ""


@dataclass
class Manifest:
    """The manifest of one batch folder."""

    sweep_name: str
    sweep_digest: str
    jobs: dict[str, JobEntry] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Jobs per status."""
        out = {s.value: 0 for s in JobStatus}
        for entry in self.jobs.values():
            out[entry.status.value] += 1
        return out

    def to_json(self) -> str:
        jobs = []
        for entry in self.jobs.values():
            data = asdict(entry)
            data["status"] = entry.status.value
            jobs.append(data)
        return json.dumps(
            {
                "format_version": FORMAT_VERSION,
                "sweep": self.sweep_name,
                "sweep_digest": self.sweep_digest,
                "counts": self.counts(),
                "jobs": jobs,
            },
            indent=1,
        )

    def save(self, batch_dir: Path) -> None:
        """Replace the manifest file atomically."""
        write_bytes(batch_dir / MANIFEST_JSON, self.to_json().encode(), overwrite=True)


def read_manifest(batch_dir: Path) -> Manifest | None:
    """The batch folder's manifest, or None when it has none yet.

    Raises:
        BatchError: the file is not a grade batch manifest.
    """
    path = batch_dir / MANIFEST_JSON
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        manifest = Manifest(str(data["sweep"]), str(data["sweep_digest"]))
        for item in data["jobs"]:
            entry = JobEntry(**{**item, "status": JobStatus(item["status"])})
            manifest.jobs[entry.job_id] = entry
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise BatchError(f"{path}: not a grade batch manifest: {err!r}") from err
    return manifest


def open_manifest(batch_dir: Path, name: str, digest: str, jobs: list[Job]) -> Manifest:
    """The manifest to continue: the existing one (same sweep) or a new one with every job
    pending. Entries a killed batch left `running` become pending again.

    Raises:
        BatchOutputError: the folder holds a batch of another sweep (or other files).
    """
    existing = read_manifest(batch_dir)
    if existing is None:
        if batch_dir.exists() and any(batch_dir.iterdir()):
            raise BatchOutputError(
                f"{batch_dir}: exists and is not a grade batch folder; choose a new path"
            )
        manifest = Manifest(name, digest)
    elif existing.sweep_digest != digest:
        raise BatchOutputError(
            f"{batch_dir}: holds the batch of another sweep ('{existing.sweep_name}', or the "
            "same sweep with changed settings); resume it with its own sweep file or choose "
            "a new path"
        )
    else:
        manifest = existing
    for job in jobs:
        entry = manifest.jobs.get(job.job_id)
        if entry is None:
            manifest.jobs[job.job_id] = JobEntry(job.job_id, job.describe())
        elif entry.status is JobStatus.RUNNING:
            entry.status = JobStatus.PENDING
    return manifest
