"""Run directories: written under a temporary name, moved into place when closed.

An existing run directory is never overwritten unless the caller asks (`overwrite=True`), and
even then the old one is only removed once the new one is complete.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.path = self.final.parent / f".{self.final.name}.partial-{os.getpid()}"
        if self.path.exists():
            shutil.rmtree(self.path)
        self.path.mkdir()
        self._committed = False

    def commit(self) -> Path:
        """Move the finished directory to its final name; returns that path."""
        if self._committed:
            return self.final
        if self.final.exists():
            trash = self.final.parent / f".{self.final.name}.replaced-{os.getpid()}"
            os.replace(self.final, trash)
            os.replace(self.path, self.final)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(self.path, self.final)
        self._committed = True
        return self.final
