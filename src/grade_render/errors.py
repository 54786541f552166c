"""Errors of grade render."""

from __future__ import annotations

from grade_common.errors import GradeError, OutputExistsError

SETUP_COMMAND = "make setup-render"


class RenderError(GradeError):
    """A render cannot start or failed (the message names the file, setting or cause)."""


class RenderSetupError(RenderError):
    """Blender's `bpy` is not installed where grade render looks for it."""


class RenderOutputExistsError(RenderError, OutputExistsError):
    """The output directory holds something that is not a resumable render of this run."""
