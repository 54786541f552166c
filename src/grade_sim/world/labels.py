"""Class labels of mesh-world parts from their names: a label map file, else the name itself.

A label map is a YAML mapping of glob patterns (fnmatch, case-insensitive) to class names, tried
in file order against a part's object/node name, then its material name; the first match wins:

    "chair*": chair
    "*table*": table
    "wall_*": wall
    "*": environment     # optional catch-all

Without a map (or when no pattern matches), the class is the name's leading word, lower-case
(`Chair_01` and `chair.003` -> `chair`); names that say nothing (exporters' defaults such as
`geometry_0`, `mesh`, `default`) give `environment`.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from grade_common.errors import ConfigError

FALLBACK_CLASS = "environment"
# Names exporters give parts that had none: they carry no class.
GENERIC_NAMES = frozenset(
    {"", "geometry", "mesh", "object", "default", "node", "group", "scene", "material", "none"}
)
_LEADING_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class LabelMap:
    rules: tuple[tuple[str, str], ...]  # (glob pattern, class), in file order

    @classmethod
    def load(cls, path: Path) -> LabelMap:
        """Read a label map file.

        Raises:
            ConfigError: the file is missing or not a mapping of pattern strings to class names.
        """
        where = f"environment.mesh.label_map: {str(path)!r}"
        if not path.is_file():
            raise ConfigError(f"{where} does not exist")
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as err:
            raise ConfigError(f"{where} is not valid YAML: {err}") from err
        if not isinstance(data, dict) or not data:
            raise ConfigError(
                f"{where} must map glob patterns to class names, e.g. 'chair*: chair'"
            )
        rules = []
        for pattern, label in data.items():
            if not isinstance(label, str) or not label or not isinstance(pattern, str):
                raise ConfigError(
                    f"{where}: entry {pattern!r}: {label!r} is not allowed; "
                    "use a non-empty class name string"
                )
            rules.append((pattern.lower(), label))
        return cls(tuple(rules))

    def match(self, name: str) -> str | None:
        for pattern, label in self.rules:
            if fnmatch.fnmatchcase(name.lower(), pattern):
                return label
        return None


def name_class(name: str) -> str | None:
    """The leading word of a name, lower-case; None for names that say nothing."""
    found = _LEADING_WORD.match(name.strip().lower())
    word = found.group(0) if found else ""
    return None if word in GENERIC_NAMES else word


def class_of(object_name: str, material_name: str, label_map: LabelMap | None) -> str:
    """A part's class: label map on the object name, then on the material name, then the
    object name's leading word, then the material's, else FALLBACK_CLASS."""
    if label_map is not None:
        for name in (object_name, material_name):
            if name and (label := label_map.match(name)) is not None:
                return label
    return name_class(object_name) or name_class(material_name) or FALLBACK_CLASS
