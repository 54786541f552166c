"""Outputs written under a temporary name next to their final path and moved into place when
complete, so a crash or Ctrl-C never leaves a half-written file under the final name.

One naming scheme for every tool:
- a file or folder is staged as `.<stem>.partial-<pid><suffix>` beside it (the suffix stays last
  so OpenCV, matplotlib and numpy still infer the format from the name);
- `nested=True` stages a folder as `.<name>.partial/<name>`, for outputs that name their own
  files after their folder (a rosbag2 directory names its storage file `<name>.mcap`).

Only what the staging created is ever removed: an existing output is refused (or, with
`overwrite=True`, replaced only once the new one is complete, and only if grade wrote it), and a
leftover staging folder of another process is left alone. Before anything is created the path is
checked by `grade_common.output_guard` (never an input or around one, creatable, and what
`overwrite` may replace); a committed folder gets the grade output marker.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from grade_common.errors import GradeError, OutputExistsError
from grade_common.output_guard import OUTPUT_MARKER, OutputPathError, check_output, write_marker

PARTIAL_MARK = ".partial"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


class StagedOutput:
    """One output in the making: write at `.path`, then `commit()` (or use it as a context
    manager: committed on success, discarded on an exception).

    Args:
        final: where the output belongs.
        overwrite: replace an existing output once the new one is complete (default: refuse).
        nested: stage a folder as `.<name>.partial/<name>` (see the module docstring).
        exists_error: the error type raised for an existing output (a package's own subclass of
            GradeError, so its callers catch what they expect).
        inputs: the paths the output is made from; the output may not be, be inside or hold one.
        announce: say on stderr what `overwrite` will replace (off for a tool rewriting its own
            files in place, such as a resumable output's lists).

    Raises:
        exists_error: `final` exists and `overwrite` is False, or (nested) a leftover
            `.<name>.partial` folder of an earlier run is in the way.
        OutputPathError: see `grade_common.output_guard.check_output`.
    """

    def __init__(
        self,
        final: str | Path,
        *,
        overwrite: bool = False,
        nested: bool = False,
        exists_error: type[GradeError] = OutputExistsError,
        inputs: Iterable[str | Path] = (),
        announce: bool = True,
    ) -> None:
        self.final = Path(final)
        self.overwrite = overwrite
        self._exists_error = exists_error
        replacing = check_output(
            self.final, inputs=inputs, overwrite=overwrite, exists_error=exists_error
        )
        if replacing is not None and announce:
            print(f"grade: {replacing}", file=sys.stderr)
        parent = self.final.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputPathError(f"{self.final}: cannot create {str(parent)!r}: {err}") from err
        self._staging: Path | None = None
        if nested:
            self._staging = parent / f".{self.final.name}{PARTIAL_MARK}"
            if self._staging.exists():
                raise exists_error(
                    f"{self._staging}: a partial output from an earlier run is in the way; "
                    "move it and retry"
                )
            self._staging.mkdir()
            self.path = self._staging / self.final.name
        else:
            self.path = _free_sibling(self.final)
        self.committed = False

    def commit(self) -> Path:
        """Move the finished output to its final path (idempotent); returns that path.

        Raises:
            exists_error: without `overwrite`, the final path appeared while writing; the new
                output stays at `.path` (the caller keeps or discards it).
        """
        if self.committed:
            return self.final
        if self.path.is_dir() and not (self.path / OUTPUT_MARKER).exists():
            write_marker(self.path)
        if self.final.exists() or self.final.is_symlink():
            if not self.overwrite:
                raise self._exists_error(
                    f"{self.final}: output appeared while writing; not overwriting it"
                )
            aside = _free_sibling(self.final, mark=".replaced")
            os.replace(self.final, aside)
            os.replace(self.path, self.final)
            _remove(aside)
        else:
            os.replace(self.path, self.final)
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
        self.committed = True
        return self.final

    def discard(self) -> None:
        """Remove what was written so far (only the staging's own paths)."""
        if self.committed:
            return
        _remove(self._staging if self._staging is not None else self.path)

    def __enter__(self) -> Path:
        return self.path

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def _free_sibling(final: Path, mark: str = PARTIAL_MARK) -> Path:
    """`.<stem><mark>-<pid>[-n]<suffix>` beside `final`, a name nothing uses yet."""
    suffix = final.suffix
    stem = final.name[: len(final.name) - len(suffix)] if suffix else final.name
    base = f".{stem}{mark}-{os.getpid()}"
    candidate = final.with_name(f"{base}{suffix}")
    n = 0
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = final.with_name(f"{base}-{n}{suffix}")
    return candidate


def write_bytes(
    final: str | Path,
    data: bytes,
    *,
    overwrite: bool = False,
    exists_error: type[GradeError] = OutputExistsError,
) -> Path:
    """Write a whole file atomically; returns its final path."""
    with StagedOutput(final, overwrite=overwrite, exists_error=exists_error) as tmp:
        tmp.write_bytes(data)
    return Path(final)
