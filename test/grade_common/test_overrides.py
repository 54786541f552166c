"""Dotted-key overrides: the document is copied, paths walk mappings and existing list items."""

from __future__ import annotations

import re

import pytest

from grade_common.errors import ConfigError
from grade_common.overrides import apply_overrides


def test_overrides_set_nested_keys_on_a_copy() -> None:
    data = {"people": {"count": 8, "motions": ["walk"]}, "robots": [{"name": "uav1"}]}
    out = apply_overrides(
        data, [("people.count", 20), ("robots.0.name", "uav2"), ("lights.shadows", True)]
    )
    assert out == {
        "people": {"count": 20, "motions": ["walk"]},
        "robots": [{"name": "uav2"}],
        "lights": {"shadows": True},
    }
    assert data["people"]["count"] == 8
    assert data["robots"][0]["name"] == "uav1"
    assert "lights" not in data


def test_later_overrides_win_and_values_are_not_shared() -> None:
    value = {"count": 1}
    out = apply_overrides({}, [("people", value), ("people.count", 5)])
    assert out == {"people": {"count": 5}}
    assert value == {"count": 1}


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("robots.x.name", r"'robots\.x' is not an item of 'robots', a list of 1 item"),
        ("robots.1", r"'robots\.1' is not an item of 'robots'"),
        ("seed.value", r"'seed' is 3, not a mapping or a list, so it has no key 'value'"),
        ("", r"empty part in the key path"),
        ("cameras.0.width", r"'cameras' is not a list in the file, so it has no item 0"),
    ],
)
def test_bad_paths_name_the_whole_key(key: str, message: str) -> None:
    with pytest.raises(ConfigError, match=rf"^--set {re.escape(repr(key))}: {message}"):
        apply_overrides({"seed": 3, "robots": [{"name": "a"}]}, [(key, 1)])
