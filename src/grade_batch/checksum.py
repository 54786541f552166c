"""The output checksum of a job: what the job produced, not when or where.

Same settings and seed give the same checksum on any worker (local pool or Ray). Hashed, by
relative path in sorted order: every file's bytes, except
- rosbag2 folders (a `metadata.yaml` beside storage files), hashed as their message stream
  (topic, log time, CDR payload, in order) because the container records when it was written;
- files that hold wall-clock measurements (WALL_CLOCK_FILES: timings, real-time factors).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rosbags.rosbag2 import Reader

# Files with wall-clock times in them; their content differs run to run by design.
WALL_CLOCK_FILES = frozenset({"summary.json", "fidelity.json"})
BAG_METADATA = "metadata.yaml"


def _is_bag(folder: Path) -> bool:
    return (folder / BAG_METADATA).is_file() and any(
        p.suffix in (".mcap", ".db3") for p in folder.iterdir()
    )


def _hash_bag(digest: hashlib._Hash, bag: Path) -> None:
    with Reader(bag) as reader:
        for connection, stamp_ns, raw in reader.messages():
            digest.update(connection.topic.encode() + b"\0" + str(stamp_ns).encode() + b"\0")
            digest.update(hashlib.sha256(bytes(raw)).digest())


def tree_checksum(root: Path) -> str:
    """sha256 over a folder's content (see the module docstring), independent of its location."""
    digest = hashlib.sha256()
    pending = [root]
    entries: list[tuple[str, Path, bool]] = []
    while pending:
        folder = pending.pop()
        for path in folder.iterdir():
            rel = path.relative_to(root).as_posix()
            if path.is_dir() and not path.is_symlink():
                if _is_bag(path):
                    entries.append((rel, path, True))
                else:
                    pending.append(path)
            elif path.name not in WALL_CLOCK_FILES:
                entries.append((rel, path, False))
    for rel, path, is_bag in sorted(entries):
        digest.update(rel.encode() + b"\0")
        if is_bag:
            _hash_bag(digest, path)
        else:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
