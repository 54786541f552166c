"""`grade scenario keys` lists exactly the keys that `grade run --set` accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from grade_common.config_keys import config_keys
from grade_common.errors import ConfigError
from grade_common.schema import to_mapping
from grade_sim.cli import scenario as scenario_cli
from grade_sim.cli.run import parse_overrides
from grade_sim.config.scenario import Scenario, load_scenario, scenario_from_mapping

KEYS = list(config_keys(Scenario))

# A file with one item in every list of sections, so that index 0 exists for each `[]`.
SCENARIO_WITH_EVERY_LIST = {
    "duration_s": 1.0,
    "robots": [{"name": "uav1", "cameras": [{"name": "camera"}], "lidars": [{"name": "lidar"}]}],
}


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "every_list.yaml"
    path.write_text(yaml.safe_dump(SCENARIO_WITH_EVERY_LIST))
    return path


def _default_value(path: str) -> Any:
    """The key's value in the scenario with every list (its default where the file is silent)."""
    node: Any = scenario_from_mapping(SCENARIO_WITH_EVERY_LIST)
    for part in path.replace("[]", "").split("."):
        if isinstance(node, tuple):
            node = node[0]
        node = getattr(node, part)
    return node


def test_the_list_is_not_empty_and_has_no_duplicates() -> None:
    paths = [k.path for k in KEYS]
    assert len(paths) > 150
    assert len(set(paths)) == len(paths)
    assert "robots[].cameras[].width" in paths


@pytest.mark.parametrize("key", KEYS, ids=lambda k: k.path)
def test_every_listed_key_is_accepted_by_grade_run_set(key: Any, scenario_file: Path) -> None:
    # The key's own default, written as `grade run --set KEY=VALUE` writes it (YAML text).
    value = _default_value(key.path)
    text = yaml.safe_dump(to_mapping(value), default_flow_style=True).strip()
    text = text.removesuffix("...").strip()
    overrides = parse_overrides([f"{key.set_path()}={text}"])
    if key.path.startswith("environment.mesh.path") or key.path == "environment.tabletop.scene":
        # null is the default; a file path would have to exist: null is what is accepted here.
        assert overrides[key.set_path()] is None
    load_scenario(scenario_file, overrides)


SECTIONS = sorted({"", *(k.set_path().rsplit(".", 1)[0] for k in KEYS if "." in k.path)})


def _listed_children(section: str) -> list[str]:
    """The names directly under a section (`--set` form) that the key list has: leaves and
    nested sections."""
    prefix = f"{section}." if section else ""
    return sorted(
        {k.set_path()[len(prefix) :].split(".")[0] for k in KEYS if k.set_path().startswith(prefix)}
    )


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s or "top level")
def test_each_section_accepts_exactly_the_listed_keys(section: str, scenario_file: Path) -> None:
    # The validator refuses an unknown key and names the keys it allows there: they must be the
    # ones the list has under that section, no more and no fewer.
    key = f"{section}.no_such_key" if section else "no_such_key"
    with pytest.raises(ConfigError, match="unknown key") as refused:
        load_scenario(scenario_file, parse_overrides([f"{key}=1"]))
    allowed = yaml.safe_load(str(refused.value).rsplit("allowed keys: ", 1)[1])
    assert sorted(allowed) == _listed_children(section)


def test_grade_scenario_keys_prints_every_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert scenario_cli.main(["keys", "--names"]) == 0
    assert capsys.readouterr().out.split() == [k.path for k in KEYS]


def test_grade_scenario_keys_with_a_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    assert scenario_cli.main(["keys", "robots[].cameras[].w"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("robots[].cameras[].width\n    integer, default 640\n")
    assert scenario_cli.main(["keys", "nothing"]) == 1


def test_every_key_has_a_meaning() -> None:
    # A new config field needs a `#` comment (or doc metadata): the reference shows it.
    assert [k.path for k in KEYS if not k.meaning] == []
