"""Fuzz: a mutated noise parameters file loads or is refused with an error naming the file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given

from fuzzkit import loaded_or_refused, mutated
from grade_noise.config import load_config
from grade_noise.errors import NoiseConfigError

REPO = Path(__file__).resolve().parents[2]
BASE = (REPO / "config" / "noise.yaml").read_bytes()


@given(data=mutated(BASE))
def test_a_mutated_parameters_file_loads_or_is_refused(tmp_path: Path, data: bytes) -> None:
    loaded_or_refused(tmp_path, "noise.yaml", data, load_config, NoiseConfigError)
