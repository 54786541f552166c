"""Errors of grade_slam; all derive from the project's `GradeError`."""

from __future__ import annotations

from grade_common.errors import ConfigError, GradeError, OutputExistsError


class SlamError(GradeError):
    """Base of the errors grade_slam raises on purpose."""


class SlamConfigError(SlamError, ConfigError):
    """A SLAM parameter is unknown or out of range, or its backend package is not installed."""


class SlamInputError(SlamError):
    """A frame cannot be used: wrong shape or encoding, mismatched RGB and depth, bad intrinsics."""


class SlamOutputExistsError(SlamError, OutputExistsError):
    """The trajectory file to write exists already."""
