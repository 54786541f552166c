"""Reading a user's text or YAML file: every way it can fail becomes one error naming the file.

A file can be unreadable (missing, a folder, no permission), not UTF-8 (a Latin-1 or binary
file), not YAML, or nested so deeply that the YAML parser recurses out; each is reported in the
caller's error type, with the file, and never as a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from grade_common.errors import FormatError, GradeError


def read_text(path: str | Path, what: str, *, error: type[GradeError] = FormatError) -> str:
    """The UTF-8 text of `path` (`what` says which file it is, e.g. "launch file").

    Raises:
        error: unreadable or not UTF-8 (the message names the file and the first bad byte).
    """
    file = Path(path)
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise error(
            f"{file}: {what} is not UTF-8 text (byte {err.start} is 0x{err.object[err.start]:02x})"
        ) from err
    except OSError as err:
        raise error(f"{file}: cannot read {what}: {err.strerror or err}") from err


def parse_yaml(text: str, source: str, *, error: type[GradeError] = FormatError) -> Any:
    """The YAML document in `text` (None for an empty one).

    Raises:
        error: not valid YAML, or nested too deeply to parse (names `source`).
    """
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise error(f"{source}: not valid YAML: {err}") from err
    except RecursionError as err:
        raise error(f"{source}: not valid YAML: nested too deeply") from err


def read_yaml(path: str | Path, what: str, *, error: type[GradeError] = FormatError) -> Any:
    """`parse_yaml(read_text(path))`: the YAML document of a file (None if it is empty)."""
    return parse_yaml(read_text(path, what, error=error), str(path), error=error)
