"""Records keep which people a run had: old records (no people.body) replay with rigid parts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml

from grade_people.config import PersonBody
from grade_sim.config.scenario import Scenario
from grade_sim.io.record import load_record
from grade_sim.sim.run import run_scenario


def test_people_body_survives_the_record_and_old_records_mean_parts(
    tmp_path: Path, small_scenario: Callable[..., Scenario]
) -> None:
    result = run_scenario(small_scenario(duration_s=0.1), tmp_path / "run")
    path = result.path / "record.npz"
    assert load_record(path).scenario.people.body is PersonBody.MAKEHUMAN  # the default
    # An old record: the same file with people.body removed from its scenario snapshot.
    with np.load(path, allow_pickle=False) as data:
        files = {k: data[k] for k in data.files}
    mapping = yaml.safe_load(str(files["scenario_yaml"]))
    del mapping["people"]["body"]
    files["scenario_yaml"] = np.array(yaml.safe_dump(mapping))
    old = tmp_path / "old.npz"
    np.savez(old, **files)  # type: ignore[arg-type]
    assert load_record(old).scenario.people.body is PersonBody.PARTS
