"""Where an output may go: the checks every grade output passes before anything is written.

- An output is never an input, inside an input, or a folder that would hold an input (a clip
  written into the bag it reads, a run directory around its own scenario file).
- Its folder can be created: no parent is a file, and the file system accepts new entries there
  (`/proc`, a read-only mount); the error says so before any work is done.
- `overwrite` only ever replaces something grade wrote itself: a folder holding the marker file
  `.grade-output` (every grade output folder gets one when it is committed), or a file inside
  such a folder; never the current directory, a home directory, `/`, or a parent of any of them.

`StagedOutput` (grade_common.atomic) runs these checks; tools pass their inputs to it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from grade_common.errors import GradeError, OutputExistsError

OUTPUT_MARKER = ".grade-output"
MARKER_TEXT = "Written by grade. `--overwrite` may replace this folder; grade replaces no other.\n"


class OutputPathError(GradeError):
    """An output path that grade refuses to write: an input, under a file, not writable."""


def write_marker(folder: Path) -> None:
    """Mark a folder as a grade output (the only kind `overwrite` may replace)."""
    (folder / OUTPUT_MARKER).write_text(MARKER_TEXT)


def grade_owner(path: Path) -> Path | None:
    """The nearest folder at or above `path` that holds the grade output marker, or None."""
    for folder in (path, *path.parents):
        if (folder / OUTPUT_MARKER).is_file():
            return folder
    return None


def _protected() -> set[Path]:
    """Folders no output may replace: `/`, the current and home directories and their parents."""
    out = {Path("/")}
    for start in (Path.cwd(), Path.home()):
        resolved = start.resolve()
        out.add(resolved)
        out.update(resolved.parents)
    return out


def _check_inputs(final: Path, inputs: Iterable[str | Path]) -> None:
    for given in inputs:
        source = Path(given).resolve()
        if final == source:
            raise OutputPathError(
                f"{final}: the output is the input {str(given)!r}; choose a new path"
            )
        if source in final.parents:
            raise OutputPathError(
                f"{final}: the output would be inside the input {str(given)!r}; "
                "write it somewhere else"
            )
        if final in source.parents:
            raise OutputPathError(
                f"{final}: the output would contain the input {str(given)!r}; "
                "write it somewhere else"
            )


def _check_creatable(final: Path) -> None:
    """The nearest existing ancestor is a writable folder (else a clear error, nothing made)."""
    ancestor = final.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputPathError(
            f"{final}: cannot be created: {str(ancestor)!r} is a file, not a folder"
        )
    try:
        # A probe, because os.access says yes to root on /proc and on read-only mounts.
        os.rmdir(tempfile.mkdtemp(prefix=".grade-probe-", dir=ancestor))
    except OSError as err:
        raise OutputPathError(
            f"{final}: cannot write in {str(ancestor)!r}: {err.strerror or err}"
        ) from err


def check_output(
    final: str | Path,
    *,
    inputs: Iterable[str | Path] = (),
    overwrite: bool = False,
    exists_error: type[GradeError] = OutputExistsError,
    existing_folder_ok: bool = False,
) -> str | None:
    """Check that `final` may be written (see the module doc); nothing is created or removed.

    Args:
        existing_folder_ok: `final` is a folder that new files go into (a plot folder): an
            existing folder is fine, only the input and creatability rules apply.

    Returns:
        None for a new path (or an accepted existing folder), or (with `overwrite`) a
        sentence saying what will be replaced.

    Raises:
        OutputPathError: an input overlaps the output, a parent is a file, the folder is not
            writable, or `overwrite` would replace something grade did not write.
        exists_error: `final` exists and `overwrite` is False.
    """
    given = Path(final)
    resolved = given.resolve()
    _check_inputs(resolved, inputs)
    if existing_folder_ok and given.is_dir():
        _check_creatable(resolved / "_")
        return None
    if not (given.exists() or given.is_symlink()):
        _check_creatable(resolved)
        return None
    if not overwrite:
        raise exists_error(
            f"{given}: output exists already; grade never overwrites, choose a new path"
        )
    if given.is_symlink():
        raise OutputPathError(f"{given}: is a symbolic link; --overwrite replaces no links")
    if resolved in _protected():
        raise OutputPathError(
            f"{given}: is the current directory, a home directory or a parent of one; "
            "--overwrite never replaces it (nothing was deleted)"
        )
    owner = grade_owner(resolved)
    if owner is None:
        raise OutputPathError(
            f"{given}: was not written by grade (no {OUTPUT_MARKER} file in it or above it); "
            "--overwrite only replaces grade outputs (nothing was deleted); choose a new path"
        )
    return f"replacing {str(given)!r} (a grade output) once the new one is complete"
