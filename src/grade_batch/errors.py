"""Errors of grade_batch; all derive from the project's `GradeError`."""

from __future__ import annotations

from grade_common.errors import ConfigError, GradeError, OutputExistsError


class BatchError(GradeError):
    """Base of the errors grade_batch raises on purpose."""


class BatchConfigError(BatchError, ConfigError):
    """The sweep file is malformed or a value is out of range (the message names the key)."""


class JobFailedError(BatchError):
    """A step of a job's pipeline failed (the message names the step and the job's log)."""


class ExportError(BatchError):
    """A run directory cannot be exported (missing ground truth, malformed labels)."""


class BatchOutputError(BatchError, OutputExistsError):
    """The batch folder belongs to another sweep, or an output exists already."""


class LockHeldError(BatchError):
    """A live process holds the batch folder or a job (the message names its PID and lock file)."""
