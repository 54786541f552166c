"""The generic config walker: wordings, ranges, patterns, named items and configs built in code."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import ClassVar

import pytest

from grade_common.errors import ConfigError
from grade_common.schema import (
    KEY_PATH,
    PARAMETER,
    Checked,
    Wording,
    bounds,
    check,
    file_key,
    from_mapping,
    named_items,
    text,
)


class PluginError(ConfigError):
    """A family's own ConfigError subclass."""


@dataclass(frozen=True)
class Joint:
    name: str = field(metadata=text(r"[a-z]+"))
    gain: float = field(default=1.0, metadata=bounds(0.0))
    limit: float = field(default=math.inf, metadata=bounds(allow_inf=True))


@dataclass(frozen=True)
class Plugin:
    joints: tuple[Joint, ...] = field(default=(), metadata=named_items("name"))
    fov_deg: float = field(
        default=90.0, metadata=bounds(0.0, 180.0, exclusive_min=True, exclusive_max=True)
    )
    topic: str = field(default="", metadata=text(allow_empty=True))


@dataclass(frozen=True)
class SelfChecked(Checked):
    WORDING: ClassVar[Wording] = replace(PARAMETER, error=PluginError)

    rate_hz: float = field(default=10.0, metadata=bounds(0.0, 100.0, exclusive_min=True))
    low: float = 0.0
    high: float = 1.0

    def validate(self, path: str) -> None:
        if not self.low < self.high:
            raise PluginError(f"low = {self.low} must be < high = {self.high}")


def test_named_items_are_reported_by_name() -> None:
    data = {"joints": [{"name": "x"}, {"name": "z", "gain": -1.0}]}
    with pytest.raises(ConfigError, match=r"joints\.z\.gain: value -1\.0 is out of range"):
        from_mapping(Plugin, data)


def test_infinity_only_where_allowed() -> None:
    joint = from_mapping(Joint, {"name": "x", "limit": -math.inf})
    assert joint.limit == -math.inf
    with pytest.raises(ConfigError, match=r"gain: expected a finite number, got inf"):
        from_mapping(Joint, {"name": "x", "gain": math.inf})


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"fov_deg": 180.0}, r"fov_deg: value 180\.0 is out of range; allowed \(0\.0, 180\.0\)"),
        ({"joints": [{"name": "X1"}]}, r"joints\.X1\.name: 'X1' is not allowed; it must match"),
        ({"topic": 3}, r"topic: expected a string, got 3"),
    ],
)
def test_key_path_wording(data: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        from_mapping(Plugin, data)


def test_empty_string_only_where_allowed() -> None:
    assert from_mapping(Plugin, {"topic": ""}).topic == ""
    with pytest.raises(ConfigError, match=r"name: expected a non-empty string, got ''"):
        from_mapping(Joint, {"name": ""})


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"rate_hz": 0.0}, r"rate_hz = 0\.0 is invalid: must be > 0 \(allowed \(0\.0, 100\.0\]\)"),
        ({"rate_hz": 500}, r"rate_hz = 500 is invalid: must be <= 100"),
        ({"rate_hz": "fast"}, r"rate_hz = 'fast' is invalid: must be a number"),
        ({"low": 2.0}, r"low = 2\.0 must be < high = 1\.0"),
        ({"rate": 1.0}, r"unknown parameters \['rate'\]; allowed: \['high', 'low', 'rate_hz'\]"),
    ],
)
def test_parameter_wording_and_error_class(data: dict[str, object], match: str) -> None:
    with pytest.raises(PluginError, match=match):
        from_mapping(SelfChecked, data)


def test_checked_config_built_in_code_is_validated() -> None:
    with pytest.raises(PluginError, match=r"rate_hz = -1\.0 is invalid: must be > 0"):
        SelfChecked(rate_hz=-1.0)
    with pytest.raises(PluginError, match=r"must be < high"):
        SelfChecked(low=5.0)
    assert SelfChecked(rate_hz=20.0).rate_hz == 20.0


def test_check_validates_a_plain_dataclass_instance() -> None:
    check(Plugin(joints=(Joint("x"),)))
    with pytest.raises(ConfigError, match=r"joints\.y\.gain: value -2\.0"):
        check(Plugin(joints=(Joint("y", gain=-2.0),)))


def test_wording_renames_the_field() -> None:
    wording = replace(KEY_PATH, name="parameter '{path}'")
    with pytest.raises(ConfigError, match=r"parameter 'gain': value -1\.0 is out of range"):
        from_mapping(Joint, {"name": "x", "gain": -1.0}, wording=wording)


@dataclass(frozen=True)
class Heading:
    yaw_rad: float = field(default=0.0, metadata=file_key("yaw_deg", math.radians))


def test_file_key_names_and_converts_the_file_value() -> None:
    assert from_mapping(Heading, {"yaw_deg": 180.0}).yaw_rad == pytest.approx(math.pi)
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['yaw_rad'\]; allowed keys"):
        from_mapping(Heading, {"yaw_rad": 1.0})
    with pytest.raises(ConfigError, match=r"yaw_deg: expected a number, got 'north'"):
        from_mapping(Heading, {"yaw_deg": "north"})


@dataclass(frozen=True)
class _Optional:
    first_n: int | None = field(default=None, metadata=bounds(3))


def test_optional_value_reports_its_own_range() -> None:
    assert from_mapping(_Optional, {"first_n": None}).first_n is None
    assert from_mapping(_Optional, {"first_n": 5}).first_n == 5
    with pytest.raises(ConfigError, match=r"first_n: value 2 is out of range; allowed \[3, inf\]"):
        from_mapping(_Optional, {"first_n": 2})
