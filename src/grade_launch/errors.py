"""Errors of the launcher."""

from grade_common.errors import ConfigError, GradeError


class LaunchFileError(ConfigError):
    """A launch file breaks the supported frontend rules; the message names the file and line."""


class LaunchRuntimeError(GradeError):
    """A launched process could not be started."""
