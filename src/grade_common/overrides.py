"""Dotted-key overrides of a parsed config document (`--set people.count=20`, sweep `set:`).

One owner for the key-path syntax: every `--set` and every sweep setting goes through
`apply_overrides`, so `a.b.0.c` means the same everywhere. A path only walks mappings (creating
missing ones, whose defaults the validator fills in later) and existing list items; the
validator, not this module, decides whether the leaf key is allowed, and its error names the path.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from grade_common.errors import ConfigError


def apply_overrides(
    data: dict[str, Any], overrides: Iterable[tuple[str, Any]], source: str = "--set"
) -> dict[str, Any]:
    """A deep copy of `data` with each (dotted key, value) set, in order.

    Args:
        data: the parsed document (a mapping at the top); never changed.
        overrides: (key path, value) pairs: `duration_s`, `people.count`, `robots.0.start_xyz`.
        source: what the error messages name as the origin, e.g. `--set` or a sweep group.

    Raises:
        ConfigError: a path is empty, indexes past a list or into a value that is no mapping;
            the message names the whole key path and the part that does not fit.
    """
    out = copy.deepcopy(data)
    for key, value in overrides:
        set_key_path(out, key, copy.deepcopy(value), source)
    return out


def set_key_path(node: dict[str, Any], key: str, value: Any, source: str = "--set") -> None:
    """Set `value` at dotted `key` in `node`, in place (see `apply_overrides`)."""
    parts = key.split(".")
    if not all(p.strip() for p in parts):
        raise ConfigError(f"{source} {key!r}: empty part in the key path; e.g. people.count")
    here: Any = node
    for i, part in enumerate(parts):
        path = ".".join(parts[: i + 1])
        last = i == len(parts) - 1
        if isinstance(here, list):
            if not part.isdigit() or int(part) >= len(here):
                raise ConfigError(
                    f"{source} {key!r}: {path!r} is not an item of {'.'.join(parts[:i])!r}, "
                    f"a list of {len(here)} item(s) (indices 0..{len(here) - 1})"
                )
            if last:
                here[int(part)] = value
            else:
                here = here[int(part)]
        elif isinstance(here, dict):
            if last:
                here[part] = value
            else:
                if here.get(part) is None:
                    if parts[i + 1].isdigit():
                        raise ConfigError(
                            f"{source} {key!r}: {path!r} is not a list in the file, so it has "
                            f"no item {parts[i + 1]}; write the list in the file first"
                        )
                    # A section the file leaves out: its defaults come from the validator.
                    here[part] = {}
                here = here[part]
        else:
            raise ConfigError(
                f"{source} {key!r}: {'.'.join(parts[:i])!r} is {here!r}, not a mapping or a list, "
                f"so it has no key {part!r}"
            )
