"""Every key of a config dataclass tree, with its type, default, allowed values and meaning.

The scenario reference (docs/reference/scenario.md) and `grade scenario keys` are both made
here, from the dataclasses that the validator (grade_common.schema) checks, so the documented
keys are exactly the accepted ones. A key's meaning is its `doc` metadata, else the `#` comment
above or beside the field in the source; list items are written `[]` (`robots[].cameras[].width`).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import io
import textwrap
import tokenize
import types
import typing
from collections.abc import Iterator
from functools import cache
from typing import Any, get_args, get_origin, get_type_hints

from grade_common.schema import _describe, _key


@dataclasses.dataclass(frozen=True)
class ConfigKey:
    """One leaf key of a config tree: what a scenario file (or `--set`) may write."""

    path: str  # dotted, list items as `[]`: robots[].cameras[].width
    type: str  # what the validator accepts, in words
    default: str  # as YAML would write it; "required" when the key has no default
    allowed: str  # range, choices or pattern; "" when the type says it all
    meaning: str  # one line

    def set_path(self, index: int = 0) -> str:
        """The `--set` form of the path, every list item at `index`: robots.0.cameras.0.width."""
        return self.path.replace("[]", f".{index}")


def _nested_dataclass(tp: Any) -> tuple[type | None, bool]:
    """(the dataclass a field holds, whether it is a list of them) or (None, False)."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return tp, False
    if get_origin(tp) is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis and dataclasses.is_dataclass(args[0]):
            return typing.cast(type, args[0]), True
    return None, False


def _yaml_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_yaml_text(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _type_text(tp: Any) -> str:
    """The type in a few words: number, integer, boolean, string, choice, list of ..."""
    names = {float: "number", int: "integer", bool: "boolean", str: "string"}
    if tp in names:
        return names[tp]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "choice"
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(a) for a in get_args(tp))
    if tp is type(None):
        return "null"
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list of {_type_text(args[0])}"
        if len(set(args)) == 1:
            return f"list of {len(args)} {_type_text(args[0])}"
        return "list of " + ", ".join(_type_text(a) for a in args)
    return _describe(tp)


def _number(value: float) -> str:
    """A range limit as written: 2^63-1 for the largest seed rather than 9.22337e+18."""
    if value == 2**63 - 1:
        return "2^63-1"
    return f"{value:g}"


def _allowed(tp: Any, meta: typing.Mapping[str, Any]) -> str:
    parts = []
    if meta.get("min") is not None or meta.get("max") is not None:
        lo = "-inf" if meta.get("min") is None else _number(meta["min"])
        hi = "inf" if meta.get("max") is None else _number(meta["max"])
        left = "(" if meta.get("exclusive_min") else "["
        right = ")" if meta.get("exclusive_max") else "]"
        parts.append(f"{left}{lo}, {hi}{right}")
    if meta.get("pattern"):
        parts.append(f"matches {meta['pattern']}")
    for arg in (tp, *get_args(tp), *(a for t in get_args(tp) for a in get_args(t))):
        if isinstance(arg, type) and issubclass(arg, enum.Enum):
            parts.append(", ".join(str(m.value) for m in arg))
            break
    return "; ".join(parts)


@cache
def field_comments(cls: type) -> dict[str, str]:
    """field name -> its source comment (the `#` lines right above it plus the one beside it)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    lines = source.splitlines()
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    class_def = typing.cast(ast.ClassDef, ast.parse(source).body[0])
    out: dict[str, str] = {}
    previous_end = class_def.lineno  # the `class` line: comments above the first field count
    for node in class_def.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            above: list[str] = []
            line = node.lineno - 1
            while line > previous_end and lines[line - 1].strip().startswith("#"):
                above.insert(0, comments.get(line, ""))
                line -= 1
            end = node.end_lineno or node.lineno
            beside = [comments[n] for n in range(node.lineno, end + 1) if n in comments]
            text = " ".join(p for p in (*above, *beside) if p and not p.startswith("noqa"))
            if text:
                out[node.target.id] = text
        previous_end = node.end_lineno or node.lineno
    return out


def first_sentence(text: str) -> str:
    """Text up to its first ". " or "; " outside brackets (a comment's first statement)."""
    depth = 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        elif char in ".;" and depth == 0 and text[i + 1 : i + 2] in (" ", ""):
            return text[:i].strip()
    return text.strip()


def _meaning(cls: type, f: dataclasses.Field[Any]) -> str:
    doc = f.metadata.get("doc")
    if doc:
        return str(doc)
    return first_sentence(field_comments(cls).get(f.name, ""))


def _defaults_of(cls: type) -> Any:
    """An instance with every default, or None when the class has required fields."""
    try:
        return cls()
    except TypeError:
        return None


def config_keys(cls: type, prefix: str = "", defaults: Any = None) -> Iterator[ConfigKey]:
    """Every leaf key of dataclass `cls` in field order, nested sections and list items expanded.

    A leaf is a value a file writes directly (a number, string, choice, plain list); a field
    that holds a config dataclass (or a list of them) is walked into instead. Defaults are
    those a file gets when it leaves the key out: a section's from its parent's default (a
    camera's mount sits 0.12 m forward), a list item's from its class.
    """
    hints = get_type_hints(cls)
    if defaults is None:
        defaults = _defaults_of(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        path = f"{prefix}{_key(f)}"
        nested, is_list = _nested_dataclass(tp)
        if nested is not None:
            if is_list:
                yield from config_keys(nested, f"{path}[].")
            else:
                inner = None if defaults is None else getattr(defaults, f.name)
                yield from config_keys(nested, f"{path}.", inner)
            continue
        if defaults is not None:
            default = _yaml_text(getattr(defaults, f.name))
        elif f.default is not dataclasses.MISSING:
            default = _yaml_text(f.default)
        else:
            default = "required"
        yield ConfigKey(
            path=path,
            type=_type_text(tp),
            default=default,
            allowed=_allowed(tp, f.metadata),
            meaning=_meaning(cls, f),
        )


def format_keys(keys: typing.Iterable[ConfigKey]) -> str:
    """The keys as terminal text: the path, then its type and default, allowed values, meaning."""
    lines = []
    for key in keys:
        lines.append(key.path)
        lines.append(f"    {key.type}, default {key.default}")
        if key.allowed:
            lines.append(f"    allowed: {key.allowed}")
        if key.meaning:
            lines.append(f"    {key.meaning}")
    return "\n".join(lines)
