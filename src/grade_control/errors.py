"""Errors of grade_control; all derive from the project's `GradeError`."""

from __future__ import annotations

from grade_common.errors import ConfigError, GradeError


class ControlError(GradeError):
    """Base of the errors the controller, its setpoint sources and missions raise on purpose."""


class ControlConfigError(ControlError, ConfigError):
    """A controller or mission setting is missing, malformed or out of its allowed range."""


class SetpointError(ControlError):
    """A setpoint was refused (non-finite value, unknown frame or joint, outside the limits).

    The controller then holds the robot where it is; the message says why.
    """
