"""Fuzz: any scenario file is either a valid Scenario or a ConfigError naming the file and key.

Bytes (non-UTF-8, truncated YAML), and valid scenarios with one value replaced by something
wrong (huge, non-finite, wrong type, a path as a name). Never another exception, never a file
written. Profiles: see test/conftest.py (GRADE_FUZZ_PROFILE=long for a long search).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from fuzzkit import accepted_or_refused
from grade_common.errors import ConfigError
from grade_sim.config.scenario import Scenario, load_scenario

BASE: dict[str, Any] = {
    "seed": 7,
    "duration_s": 0.5,
    "environment": {"type": "procedural", "procedural": {"rooms_x": 2, "room_size_m": [5, 7]}},
    "people": {"count": 2, "speed_mps": [0.8, 1.4]},
    "rates": {"physics_hz": 240, "imu_hz": 240},
    "robots": [
        {
            "name": "uav1",
            "start_xyz": [1.0, 1.0, 1.0],
            "motion": {"mode": "path", "waypoints": [[1, 1, 1], [2, 2, 1]]},
            "cameras": [{"name": "camera", "width": 64, "height": 48, "streams": ["rgb"]}],
        }
    ],
}

WEIRD = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e9, -1e308, 1e308, 2**64, -(2**63), 0, -1]),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.text(max_size=12),
    st.sampled_from(["../../../x", "/etc", "a b", "caf\u00e9", "", ".", "..", "x/y", "1e9"]),
    st.none(),
    st.booleans(),
    st.lists(st.one_of(st.integers(), st.floats(), st.text(max_size=3)), max_size=5),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path into nested dicts/lists."""
    out = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += _paths(value, (*prefix, i))
    return out


PATHS = _paths(BASE)


def _replace(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(data)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _load_or_refuse(file: Path) -> None:
    """Loads, or raises a ConfigError naming the file; nothing is written either way."""
    result = accepted_or_refused(lambda: load_scenario(file), file.parent, str(file), ConfigError)
    if isinstance(result, Scenario):
        for robot in result.robots:
            assert all(math.isfinite(v) for v in robot.start_xyz or ())


@given(data=st.binary(max_size=300))
def test_any_bytes_are_a_scenario_or_a_clear_error(tmp_path: Path, data: bytes) -> None:
    file = tmp_path / "fuzz.yaml"
    file.write_bytes(data)
    _load_or_refuse(file)


@given(path=st.sampled_from(PATHS), value=WEIRD)
def test_one_wrong_value_is_refused_with_its_key(
    tmp_path: Path, path: tuple[Any, ...], value: Any
) -> None:
    file = tmp_path / "fuzz.yaml"
    file.write_text(yaml.safe_dump(_replace(BASE, path, value)))
    _load_or_refuse(file)


@given(cut=st.integers(min_value=0, max_value=len(yaml.safe_dump(BASE))))
def test_a_truncated_scenario_is_a_scenario_or_a_clear_error(tmp_path: Path, cut: int) -> None:
    file = tmp_path / "fuzz.yaml"
    file.write_text(yaml.safe_dump(BASE)[:cut])
    _load_or_refuse(file)


def test_the_base_scenario_is_valid(tmp_path: Path) -> None:
    file = tmp_path / "base.yaml"
    file.write_text(yaml.safe_dump(BASE))
    assert load_scenario(file).robots[0].cameras[0].width == 64
