"""Errors of grade_eval; all derive from grade_common's GradeError so the CLI prints them."""

from __future__ import annotations

from dataclasses import replace

from grade_common import errors as common
from grade_common.errors import ConfigError, GradeError, OutputExistsError
from grade_common.schema import PARAMETER

__all__ = [
    "EVAL_WORDING",
    "AlignmentError",
    "AssociationError",
    "EvalConfigError",
    "EvalError",
    "EvalOutputExistsError",
    "FormatError",
    "MapError",
    "OutputExistsError",
    "RealismError",
    "RealismSetupError",
    "TrajectoryError",
]


class EvalError(GradeError):
    """Base of every error grade_eval raises on purpose."""


class FormatError(EvalError, common.FormatError):
    """An input file (TUM, YAML, PNG, bag) is malformed; the message names file and line."""


class TrajectoryError(EvalError):
    """A trajectory is inconsistent: shapes, non-finite values, non-monotonic stamps, too short."""


class AssociationError(EvalError):
    """Two trajectories share no stamps within the allowed difference."""


class AlignmentError(EvalError):
    """Alignment is impossible (too few or degenerate poses)."""


class MapError(EvalError):
    """A point map is empty, non-finite, or two maps cannot be compared."""


class EvalConfigError(EvalError, ConfigError):
    """A configuration value is out of range; the message names field, value and allowed range."""


class EvalOutputExistsError(EvalConfigError, OutputExistsError):
    """An output path (--out) exists already; grade_eval never overwrites."""


# How grade_eval's configs phrase a value out of range (`first_n = 2 is invalid: must be >= 3`).
EVAL_WORDING = replace(PARAMETER, error=EvalConfigError)


class RealismError(EvalError):
    """`grade bench realism` cannot read a run or its MediaPipe worker failed."""


class RealismSetupError(RealismError):
    """MediaPipe is not installed where `grade bench realism` looks for it (.venv-realism)."""
