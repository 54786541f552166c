"""Errors of grade export usd."""

from __future__ import annotations

from grade_common.errors import GradeError, OutputExistsError


class UsdExportError(GradeError):
    """A run cannot be exported (the message names the run, file or cause)."""


class UsdOutputExistsError(UsdExportError, OutputExistsError):
    """The stage (or its textures folder) already exists; exports never overwrite."""
