"""Validation of nested frozen dataclasses from YAML data, with errors that name the field path.

One generic walker instead of hand-written checks per section: a dataclass field's type hint says
what is allowed, `field(metadata=bounds(...))` adds ranges or choices, and every error carries the
dotted path (`robots[0].cameras[1].width`), the offending value and what would be accepted.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from grade_common.errors import ConfigError

T = TypeVar("T")


def bounds(
    min_value: float | None = None,
    max_value: float | None = None,
    *,
    exclusive_min: bool = False,
    doc: str = "",
) -> dict[str, Any]:
    """Field metadata for a numeric range (applied to scalars and to each item of a list/tuple)."""
    return {"min": min_value, "max": max_value, "exclusive_min": exclusive_min, "doc": doc}


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
        return "a mapping with keys " + ", ".join(f.name for f in dataclasses.fields(tp))
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


def _check_range(value: float, meta: Mapping[str, Any], path: str) -> None:
    lo, hi = meta.get("min"), meta.get("max")
    too_low = lo is not None and (value <= lo if meta.get("exclusive_min") else value < lo)
    if too_low or (hi is not None and value > hi):
        lo_txt = "-inf" if lo is None else repr(lo)
        hi_txt = "inf" if hi is None else repr(hi)
        bracket = "(" if meta.get("exclusive_min") else "["
        raise ConfigError(
            f"{path}: value {value!r} is out of range; allowed {bracket}{lo_txt}, {hi_txt}]"
        )


def convert(tp: Any, value: Any, path: str, meta: Mapping[str, Any] | None = None) -> Any:
    """Convert YAML data `value` to type `tp`, raising ConfigError naming `path` on mismatch."""
    meta = meta or {}
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return convert(option, value, path, meta)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(f"{path}: {value!r} is not {_describe(tp)}")
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: expected {_describe(tp)}, got {value!r}")
        return from_mapping(tp, value, path)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise ConfigError(f"{path}: {value!r} is not allowed; use {_describe(tp)}") from None
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{path}: expected {_describe(tp)}, got {value!r}")
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(args[0], v, f"{path}[{i}]", meta) for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigError(
                f"{path}: expected {_describe(tp)}, got {len(value)} values {value!r}"
            )
        return tuple(
            convert(a, v, f"{path}[{i}]", meta)
            for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{path}: expected an integer, got {value!r}")
        _check_range(value, meta, path)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{path}: expected a number, got {value!r}")
        if value != value or value in (float("inf"), float("-inf")):
            raise ConfigError(f"{path}: expected a finite number, got {value!r}")
        _check_range(float(value), meta, path)
        return float(value)
    if tp is str:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{path}: expected a non-empty string, got {value!r}")
        return value
    raise TypeError(f"unsupported schema type {tp!r} at {path}")


def from_mapping(cls: type[T], data: Mapping[str, Any], path: str = "") -> T:
    """Build dataclass `cls` from a mapping; unknown keys and wrong values raise ConfigError."""
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        where = path or "scenario"
        raise ConfigError(f"{where}: unknown key(s) {unknown}; allowed keys: {sorted(fields)}")
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        sub = f"{path}.{name}" if path else name
        if name in data:
            kwargs[name] = convert(hints[name], data[name], sub, f.metadata)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{sub}: required key is missing ({_describe(hints[name])})")
    obj = cls(**kwargs)
    post = getattr(obj, "validate", None)
    if callable(post):
        post(path)
    return obj


def to_mapping(obj: Any) -> Any:
    """The plain-data form of a config object (for snapshots); inverse of from_mapping."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_mapping(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, tuple | list):
        return [to_mapping(v) for v in obj]
    return obj
