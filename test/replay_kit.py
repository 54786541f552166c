"""What replay tests compare: a folder's files by content, and a replay of a recorded run
that must reproduce it exactly.

One definition, so every test of exactness checks the same things the same way.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from grade_replay.replay import ReplayConfig, ReplayMode, replay_run


def file_digests(root: Path) -> dict[str, str]:
    """SHA-256 of every file below root, by its path relative to root."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def replay_exactly(recorded: Path, out: Path, record_prefixes: tuple[str, ...]) -> Path:
    """Replays a recorded run (teleport) into `out` and asserts that it is exact: fidelity,
    every ground-truth file byte for byte, and every record array under each prefix (each
    prefix must have some). Returns the replay's run directory."""
    result = replay_run(ReplayConfig(recorded, out, ReplayMode.TELEPORT))
    assert result.fidelity.exact
    assert file_digests(recorded / "gt") == file_digests(result.path / "gt")
    with np.load(recorded / "record.npz") as a, np.load(result.path / "record.npz") as b:
        for prefix in record_prefixes:
            keys = [k for k in a.files if k.startswith(prefix)]
            assert keys, f"the record has no {prefix!r} arrays"
            for key in keys:
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    return result.path
