"""Validation of nested frozen dataclasses from YAML data, with errors that name the field path.

One generic walker instead of hand-written checks per section: a dataclass field's type hint says
what is allowed, `field(metadata=bounds(...))` adds ranges or choices, and every error carries the
dotted path (`robots[0].cameras[1].width`), the offending value and what would be accepted.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from grade_common.errors import ConfigError

T = TypeVar("T")

Range = tuple[float, float]  # a [min, max] pair of a config field


def check_range_pair(value: Range, path: str) -> None:
    """A [min, max] field must not be written the wrong way round."""
    if value[0] > value[1]:
        raise ConfigError(f"{path}: range {list(value)} has min > max; write [min, max]")


def bounds(
    min_value: float | None = None,
    max_value: float | None = None,
    *,
    exclusive_min: bool = False,
    exclusive_max: bool = False,
    allow_inf: bool = False,
    doc: str = "",
) -> dict[str, Any]:
    """Field metadata for a numeric range (applied to scalars and to each item of a list/tuple).

    `allow_inf` lets a float be +-inf (an open limit); NaN is never accepted.
    """
    return {
        "min": min_value,
        "max": max_value,
        "exclusive_min": exclusive_min,
        "exclusive_max": exclusive_max,
        "allow_inf": allow_inf,
        "doc": doc,
    }


def text(pattern: str | None = None, *, allow_empty: bool = False) -> dict[str, Any]:
    """Field metadata for a string (or each string of a list): a regular expression it must match
    as a whole, and whether "" is accepted (strings must be non-empty otherwise)."""
    return {"pattern": pattern, "allow_empty": allow_empty}


def named_items(key: str) -> dict[str, Any]:
    """Field metadata: a list of mappings whose items are named by `key` in error paths.

    `axes: [{name: z, kp: -1}]` then reports `axes.z.kp`, the name a user knows, not `axes[0].kp`.
    """
    return {"item_name": key}


def file_key(key: str, to_field: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """Field metadata: the field is written as `key` in the file (errors name `key`), and
    `to_field` turns the checked file value into the field's (e.g. degrees into radians)."""
    return {"key": key, "to_field": to_field}


def _key(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get("key", f.name))


@dataclasses.dataclass(frozen=True)
class Wording:
    """How one config family phrases a failed check; the checks are the same for every family.

    Scenario files read `path: problem; allowed ...`, ROS 2 parameters `name = value is invalid:
    must be ...`; each family keeps the phrasing its users (and tests) know. Templates are
    `str.format` strings over: name (the key path as shown), value (as converted), raw (as
    given), expected (what the type accepts), allowed (the range or keys), violated (the broken
    side of a range), choices (enum values), unknown (unknown keys), count (list length), root.
    """

    error: type[ConfigError] = ConfigError
    root: str = "scenario"
    name: str = "{path}"
    wrong_type: str = "{name}: expected {expected}, got {raw!r}"
    not_any: str = "{name}: {raw!r} is not {expected}"
    wrong_length: str = "{name}: expected {expected}, got {count} values {raw!r}"
    not_finite: str = "{name}: expected a finite number, got {raw!r}"
    out_of_range: str = "{name}: value {value!r} is out of range; allowed {allowed}"
    not_allowed: str = "{name}: {raw!r} is not allowed; use {expected}"
    no_match: str = "{name}: {raw!r} is not allowed; it must match {allowed}"
    missing: str = "{name}: required key is missing ({expected})"
    unknown_keys: str = "{name}: unknown key(s) {unknown}; allowed keys: {allowed}"
    unknown_top_keys: str = "{name}: unknown key(s) {unknown}; allowed keys: {allowed}"

    def fail(self, template: str, path: str, raw: Any = None, **fields: Any) -> ConfigError:
        """The error for one failed check at `path`, phrased by `template`."""
        fields.setdefault("value", raw)
        name = self.name.format(path=path or self.root)
        return self.error(template.format(name=name, raw=raw, root=self.root, **fields))


KEY_PATH = Wording()
"""Scenario-file phrasing: `people.count: value 65 is out of range; allowed [0, 64]`."""

PARAMETER = Wording(
    root="parameters",
    wrong_type="{name} = {raw!r} is invalid: must be {expected}",
    not_any="{name} = {raw!r} is invalid: must be {expected}",
    wrong_length="{name} = {raw!r} is invalid: must be {expected}",
    not_finite="{name} = {raw!r} is invalid: must be a finite number",
    out_of_range="{name} = {raw!r} is invalid: must be {violated} (allowed {allowed})",
    not_allowed="{name} = {raw!r} is invalid: allowed values {choices}",
    no_match="{name} = {raw!r} is invalid: must match {allowed}",
    missing="{name} is missing: must be {expected}",
    unknown_keys="{name} = {raw!r} is invalid: unknown key(s) {unknown}; allowed: {allowed}",
    unknown_top_keys="unknown {root} {unknown}; allowed: {allowed}",
)
"""ROS 2 parameter phrasing: `axes.z.kp = -1.0 is invalid: must be >= 0 (allowed [0, inf])`."""


def _describe(tp: Any) -> str:
    origin = get_origin(tp)
    if tp is float:
        return "a number"
    if tp is int:
        return "an integer"
    if tp is bool:
        return "true or false"
    if tp is str:
        return "a string"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "one of " + ", ".join(repr(m.value) for m in tp)
    if dataclasses.is_dataclass(tp):
        return "a mapping with keys " + ", ".join(_key(f) for f in dataclasses.fields(tp))
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {_describe(args[0])}"
        return f"a list of {len(args)} values ({', '.join(_describe(a) for a in args)})"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in get_args(tp))
    if tp is type(None):
        return "null"
    return str(tp)


def _check_range(
    raw: Any, value: float, meta: Mapping[str, Any], path: str, wording: Wording
) -> None:
    lo, hi = meta.get("min"), meta.get("max")
    exclusive, exclusive_max = bool(meta.get("exclusive_min")), bool(meta.get("exclusive_max"))
    too_low = lo is not None and (value <= lo if exclusive else value < lo)
    too_high = hi is not None and (value >= hi if exclusive_max else value > hi)
    if too_low or too_high:
        lo_txt = "-inf" if lo is None else repr(lo)
        hi_txt = "inf" if hi is None else repr(hi)
        bracket = "(" if exclusive else "["
        closing = ")" if exclusive_max else "]"
        violated = (
            f"{'>' if exclusive else '>='} {lo:g}"
            if too_low
            else f"{'<' if exclusive_max else '<='} {hi:g}"
        )
        raise wording.fail(
            wording.out_of_range,
            path,
            raw,
            value=value,
            allowed=f"{bracket}{lo_txt}, {hi_txt}{closing}",
            violated=violated,
        )


def _item_path(path: str, index: int, item: Any, meta: Mapping[str, Any]) -> str:
    key = meta.get("item_name")
    if key is not None and isinstance(item, Mapping) and isinstance(item.get(key), str):
        return f"{path}.{item[key]}"
    if key is not None and dataclasses.is_dataclass(item):
        return f"{path}.{getattr(item, key)}"
    return f"{path}[{index}]"


def convert(
    tp: Any,
    value: Any,
    path: str,
    meta: Mapping[str, Any] | None = None,
    wording: Wording = KEY_PATH,
) -> Any:
    """Convert YAML data `value` to type `tp`, raising wording.error naming `path` on mismatch.

    Values that already have the type (a dataclass instance, an enum member) are checked too, so
    `check` can validate a config built directly in code.
    """
    meta = meta or {}
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        present = [o for o in options if o is not type(None)]
        if len(present) == 1 and present[0] in (int, float):
            # `number | None`: a number out of range is reported with its range, not as "not
            # a number or null".
            return convert(present[0], value, path, meta, wording)
        if (
            len(present) == 1
            and dataclasses.is_dataclass(present[0])
            and isinstance(value, Mapping)
        ):
            # `Section | None` given a mapping: a bad key inside is reported with its own path,
            # not as "not a mapping or null".
            return convert(present[0], value, path, meta, wording)
        for option in options:
            if option is type(None):
                continue
            try:
                return convert(option, value, path, meta, wording)
            except ConfigError:
                continue
        raise wording.fail(wording.not_any, path, value, expected=_describe(tp))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if isinstance(value, tp):
            check(value, path, wording)
            return value
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise wording.fail(wording.wrong_type, path, value, expected=_describe(tp))
        return from_mapping(tp, value, path, wording)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            choices = [m.value for m in tp]
            raise wording.fail(
                wording.not_allowed, path, value, expected=_describe(tp), choices=choices
            ) from None
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise wording.fail(wording.wrong_type, path, value, expected=_describe(tp))
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(
                convert(args[0], v, _item_path(path, i, v, meta), meta, wording)
                for i, v in enumerate(value)
            )
        if len(value) != len(args):
            raise wording.fail(
                wording.wrong_length, path, value, expected=_describe(tp), count=len(value)
            )
        return tuple(
            convert(a, v, f"{path}[{i}]", meta, wording)
            for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if tp is bool:
        if not isinstance(value, bool):
            raise wording.fail(wording.wrong_type, path, value, expected=_describe(tp))
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wording.fail(wording.wrong_type, path, value, expected=_describe(tp))
        _check_range(value, value, meta, path, wording)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise wording.fail(wording.wrong_type, path, value, expected=_describe(tp))
        infinite = value in (float("inf"), float("-inf"))
        if value != value or (infinite and not meta.get("allow_inf")):
            raise wording.fail(wording.not_finite, path, value)
        _check_range(value, float(value), meta, path, wording)
        return float(value)
    if tp is str:
        if not isinstance(value, str) or not (value or meta.get("allow_empty")):
            expected = "a string" if meta.get("allow_empty") else "a non-empty string"
            raise wording.fail(wording.wrong_type, path, value, expected=expected)
        pattern = meta.get("pattern")
        if pattern is not None and value and not re.fullmatch(pattern, value):
            raise wording.fail(wording.no_match, path, value, allowed=pattern)
        return value
    raise TypeError(f"unsupported schema type {tp!r} at {path}")


def from_mapping(
    cls: type[T], data: Mapping[str, Any], path: str = "", wording: Wording | None = None
) -> T:
    """Build dataclass `cls` from a mapping; unknown keys and wrong values raise a ConfigError.

    Args:
        wording: how errors are phrased and which ConfigError subclass they are; default the
            class's own `WORDING` (see `Checked`), else scenario-file phrasing.
    """
    if wording is None:
        wording = getattr(cls, "WORDING", KEY_PATH)
    hints = get_type_hints(cls)
    fields = {_key(f): f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        template = wording.unknown_keys if path else wording.unknown_top_keys
        raise wording.fail(template, path, dict(data), unknown=unknown, allowed=sorted(fields))
    kwargs: dict[str, Any] = {}
    for key, f in fields.items():
        sub = f"{path}.{key}" if path else key
        if key in data:
            value = convert(hints[f.name], data[key], sub, f.metadata, wording)
            to_field = f.metadata.get("to_field")
            kwargs[f.name] = value if to_field is None else to_field(value)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise wording.fail(wording.missing, sub, expected=_describe(hints[f.name]))
    obj = cls(**kwargs)
    if not isinstance(obj, Checked):  # a Checked config validated itself on construction
        _validate(obj, path)
    return obj


def check(obj: Any, path: str = "", wording: Wording | None = None) -> None:
    """Validate a config object built in code (not from a mapping) like `from_mapping` would.

    Raises:
        ConfigError: (wording.error) naming the field, the value and what is allowed.
    """
    if wording is None:
        wording = getattr(type(obj), "WORDING", KEY_PATH)
    hints = get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        sub = f"{path}.{f.name}" if path else f.name
        convert(hints[f.name], getattr(obj, f.name), sub, f.metadata, wording)
    _validate(obj, path)


def _validate(obj: Any, path: str) -> None:
    post = getattr(obj, "validate", None)
    if callable(post):
        post(path)


class Checked:
    """Mixin for a frozen config dataclass that validates itself whenever it is built.

    Configs that code and tests also construct directly (not only from a file) derive from it
    and set `WORDING`; `__post_init__` then runs the same checks as `from_mapping`.
    """

    WORDING: typing.ClassVar[Wording] = KEY_PATH

    def __post_init__(self) -> None:
        check(self, "", self.WORDING)


def to_mapping(obj: Any) -> Any:
    """The plain-data form of a config object (for snapshots); inverse of from_mapping."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_mapping(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, tuple | list):
        return [to_mapping(v) for v in obj]
    return obj
