#!/usr/bin/env python3
"""Copy the DeepMimic motion capture clips out of the pinned pybullet wheel (set-up step).

Usage: fetch_motions.py TARGET_DIR. Downloads the wheel named in requirements/motions.txt with
pip (no install, no dependencies), copies its pybullet_data/data/motions/*.txt (and walker/) and
the wheel's licence into TARGET_DIR, written to a temporary folder and moved into place. Does
nothing when TARGET_DIR already holds the clips of that version.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from grade_common.wheel_download import WheelDownloadError, download_wheel

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "pybullet_data/data/motions/"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    target = Path(argv[0])
    pin = next(
        line.strip()
        for line in (ROOT / "requirements" / "motions.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    stamp = target / "VERSION"
    if stamp.is_file() and stamp.read_text().strip() == pin:
        return 0
    with tempfile.TemporaryDirectory(prefix="grade-motions-") as tmp:
        try:
            wheel = download_wheel(pin, Path(tmp))
        except WheelDownloadError as err:
            print(f"[setup] error: {err}", file=sys.stderr)
            return 1
        stage = Path(tmp) / "stage"
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.startswith(PREFIX) and name.endswith(".txt"):
                    out = stage / name[len(PREFIX) :]
                elif name.endswith(".dist-info/LICENSE.txt"):
                    out = stage / "LICENSE-pybullet.txt"
                else:
                    continue
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(z.read(name))
        (stage / "VERSION").write_text(pin + "\n")
        target.parent.mkdir(parents=True, exist_ok=True)
        old = target.with_name(target.name + ".old")
        if target.exists():
            target.rename(old)
        shutil.move(str(stage), str(target))
        shutil.rmtree(old, ignore_errors=True)
    print(f"[setup] motion capture clips of {pin} in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
