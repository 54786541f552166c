"""The generated reference pages list every scenario key, command, option and node."""

from __future__ import annotations

from pathlib import Path

from grade_cli import main as cli
from grade_cli import reference
from grade_cli.commands import load
from grade_common.config_keys import config_keys
from grade_sim.config.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]


def test_the_scenario_page_lists_every_key() -> None:
    page = reference.scenario_page()
    for key in config_keys(Scenario):
        assert f"`{key.path}`\n: " in page, key.path


def test_the_command_page_lists_every_command_and_option() -> None:
    page = reference.cli_page()
    for name in cli.SUBCOMMANDS:
        assert f"## grade {name}\n" in page, name
        for action in load(name).build_parser()._actions:  # type: ignore[attr-defined]
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in page, f"grade {name} {flag}"


def test_the_node_page_lists_every_executable_and_its_parameters() -> None:
    executables = reference.node_executables(ROOT / "setup.py")
    assert "sim_node" in executables
    page = reference.nodes_page(ROOT / "setup.py", with_topics=False)
    for name in executables:
        assert f"## {name}\n" in page, name
    for parameter in ("lockstep_acks", "publish_world_odom", "image_qos"):
        assert f"`{parameter}`\n: " in page, parameter


def test_prose_escapes_html_outside_code() -> None:
    assert reference._prose("/<robot>/odom and `<robot>` *x*") == (
        "/&lt;robot&gt;/odom and `<robot>` \\*x\\*"
    )


def test_the_api_pages_cover_the_cores_without_their_nodes() -> None:
    modules = reference.core_modules("grade_noise", ("grade_noise.node", "grade_noise.cli"))
    assert "grade_noise.imu" in modules
    assert not any(m.startswith(("grade_noise.node", "grade_noise.cli")) for m in modules)
