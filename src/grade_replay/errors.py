"""Errors of grade_replay: bad bags, bad topics, bad configuration, existing outputs."""

from __future__ import annotations

from grade_common.errors import ConfigError, GradeError, OutputExistsError


class ReplayError(GradeError):
    """Base of every error grade_replay raises on purpose."""


class BagError(ReplayError):
    """A bag cannot be used: missing, unknown storage format, truncated or corrupt."""


class BagNotFoundError(BagError):
    """The input bag path does not exist."""


class BagFormatError(BagError):
    """The input is not a bag in a storage format grade can read."""


class BagCorruptError(BagError):
    """The bag's files are truncated or corrupt."""


class TopicNotFoundError(ReplayError):
    """A topic named on the command line or in a config is not in the bag."""


class ReplayConfigError(ReplayError, ConfigError):
    """A grade_replay tool or node option is out of range or malformed."""


class BagOutputExistsError(ReplayError, OutputExistsError):
    """The output path of a bag tool exists already; grade never overwrites it."""
