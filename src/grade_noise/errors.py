"""Errors of grade_noise; all derive from the project's `GradeError`."""

from __future__ import annotations

from grade_common.errors import ConfigError, GradeError, OutputExistsError


class NoiseError(GradeError):
    """Base of the errors grade_noise raises on purpose."""


class NoiseConfigError(NoiseError, ConfigError):
    """A noise parameter (preset, topic, model, value) is unknown or out of range."""


class NoiseInputError(NoiseError):
    """Input data cannot be noised: NaN values, unsupported encoding, wrong shape, no motion."""


class NoiseOutputExistsError(NoiseError, OutputExistsError):
    """The output of `grade noise apply` exists already or is the input itself."""
