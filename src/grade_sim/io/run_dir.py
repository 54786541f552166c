"""Run directories: written under a temporary name, moved into place when closed.

An existing run directory is never overwritten unless the caller asks (`overwrite=True`), and
even then the old one is only removed once the new one is complete.
"""

from __future__ import annotations

from pathlib import Path

from grade_common.atomic import StagedOutput
from grade_common.errors import OutputExistsError


class RunDirectory:
    """A run directory in the making: `.path` is where to write until `commit()`."""

    def __init__(self, final: str | Path, overwrite: bool = False) -> None:
        self.final = Path(final).resolve()
        if self.final.exists() and not overwrite:
            raise OutputExistsError(
                f"output directory {str(self.final)!r} exists already; choose a new "
                "path (or pass --overwrite to replace it once the new run is complete)"
            )
        self._staged = StagedOutput(self.final, overwrite=overwrite)
        self.path = self._staged.path
        self.path.mkdir()

    def commit(self) -> Path:
        """Move the finished directory to its final name; returns that path."""
        return self._staged.commit()
