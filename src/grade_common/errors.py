"""Errors of grade. Every package derives its own from `GradeError` so callers catch one type."""


class GradeError(Exception):
    """Base of every error grade raises on purpose; the CLI prints it without a traceback."""


class ConfigError(GradeError):
    """A configuration value (scenario, parameters file) is missing, malformed or out of range."""


class OutputExistsError(GradeError):
    """An output path exists already and would be overwritten."""


class FormatError(GradeError):
    """A file does not follow its format (TUM lists and poses, camera_info.yaml, run.yaml, ...).

    Readers in grade_common raise it, or a package's own subclass of GradeError passed as
    `error=`, so each tool reports the file and line in the error type its callers expect."""
