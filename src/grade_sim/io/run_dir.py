"""Run directories: written under a temporary name, moved into place when closed.

An existing run directory is never overwritten unless the caller asks (`overwrite=True`), and
even then only a grade output (grade_common.output_guard) is replaced, once the new one is
complete.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from grade_common.atomic import StagedOutput
from grade_common.errors import OutputExistsError
from grade_common.output_guard import check_output, write_marker


def check_run_output(
    final: str | Path, overwrite: bool = False, inputs: Iterable[str | Path] = ()
) -> None:
    """Refuse a run directory path before any work (see grade_common.output_guard).

    Raises:
        OutputExistsError: it exists and `overwrite` is False.
        OutputPathError: an input overlaps it, it cannot be created, or `overwrite` would
            replace something grade did not write.
    """
    if Path(final).exists() and not overwrite:
        raise OutputExistsError(
            f"output directory {str(Path(final).resolve())!r} exists already; choose a new "
            "path (or pass --overwrite to replace an earlier grade run once the new one is "
            "complete)"
        )
    check_output(final, inputs=inputs, overwrite=overwrite)


class RunDirectory:
    """A run directory in the making: `.path` is where to write until `commit()`.

    Args:
        inputs: the files the run reads (scenario, URDFs, meshes): the run directory may not be
            one of them, sit inside one or hold one.
    """

    def __init__(
        self, final: str | Path, overwrite: bool = False, inputs: Iterable[str | Path] = ()
    ) -> None:
        self.final = Path(final).resolve()
        check_run_output(self.final, overwrite, inputs)
        self._staged = StagedOutput(self.final, overwrite=overwrite, inputs=inputs)
        self.path = self._staged.path
        self.path.mkdir()
        # Marked from the start: what the run writes inside may replace its own files.
        write_marker(self.path)

    def commit(self) -> Path:
        """Move the finished directory to its final name; returns that path."""
        return self._staged.commit()
