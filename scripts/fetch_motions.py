#!/usr/bin/env python3
"""Copy the motion capture clips people use (set-up step).

Usage: fetch_motions.py TARGET_DIR.
- DeepMimic: downloads the wheel named in requirements/motions.txt with pip (no install, no
  dependencies), copies its pybullet_data/data/motions/*.txt (and walker/) and the wheel's
  licence into TARGET_DIR.
- CMU: downloads the Debian package pinned in grade_people.clips.CMU_PACKAGE with
  `apt-get download` (not installed), copies its two CMU BVH clips and their source/licence
  text into TARGET_DIR/cmu.
Each is written to a temporary folder and moved into place, and skipped when already there in
that version.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from grade_common.wheel_download import WheelDownloadError, download_wheel
from grade_people.clips import CMU_PACKAGE

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "pybullet_data/data/motions/"
CMU_PREFIX = "./usr/share/assimp/models/BVH/"
CMU_FILES = ("01_01.bvh", "01_03.bvh", "01_nn.bvh.source.txt")


def _replace_dir(stage: Path, target: Path) -> None:
    """Move `stage` to `target`, replacing what was there (the old folder goes last)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    shutil.move(str(stage), str(target))
    shutil.rmtree(old, ignore_errors=True)


def fetch_cmu(target: Path) -> int:
    """The CMU clips into `target` (see the module docstring); 0 when done, 1 with an error."""
    stamp = target / "VERSION"
    if stamp.is_file() and stamp.read_text().strip() == CMU_PACKAGE:
        return 0
    fix = f"`apt-get download {CMU_PACKAGE}` (Debian/Ubuntu, as root after apt-get update)"
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        print(f"[setup] error: the CMU clips need apt-get and dpkg: {fix}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="grade-cmu-") as tmp:
        download = ["apt-get", "download", "-q", CMU_PACKAGE]
        run = subprocess.run(download, cwd=tmp, capture_output=True, text=True, check=False)
        if run.returncode != 0:  # no package lists yet: update them once and try again
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, check=False)
            run = subprocess.run(download, cwd=tmp, capture_output=True, text=True, check=False)
        debs = sorted(Path(tmp).glob("*.deb"))
        if run.returncode != 0 or not debs:
            print(f"[setup] error: {fix} failed: {run.stderr.strip()}", file=sys.stderr)
            return 1
        stage = Path(tmp) / "stage"
        stage.mkdir()
        members = [CMU_PREFIX + f for f in CMU_FILES]
        tar = subprocess.run(
            f"dpkg --fsys-tarfile {debs[0].name} | tar -x -C stage {' '.join(members)}",
            shell=True,
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        if tar.returncode != 0:
            print(f"[setup] error: unpacking {debs[0].name}: {tar.stderr.strip()}", file=sys.stderr)
            return 1
        out = Path(tmp) / "cmu"
        out.mkdir()
        for f in CMU_FILES:
            shutil.move(str(stage / CMU_PREFIX / f), str(out / f))
        (out / "VERSION").write_text(CMU_PACKAGE + "\n")
        _replace_dir(out, target)
    print(f"[setup] CMU motion capture clips of {CMU_PACKAGE} in {target}")
    return 0


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
    if not (stamp.is_file() and stamp.read_text().strip() == pin):
        status = fetch_deepmimic(pin, target)
        if status:
            return status
    return fetch_cmu(target / "cmu")


def fetch_deepmimic(pin: str, target: Path) -> int:
    """The DeepMimic clips of wheel `pin` into `target` (keeping its cmu/ folder)."""
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
        if (target / "cmu").is_dir():
            shutil.copytree(target / "cmu", stage / "cmu")
        _replace_dir(stage, target)
    print(f"[setup] motion capture clips of {pin} in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
