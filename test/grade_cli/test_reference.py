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
        assert f"`{key.path}`{{#{reference.key_anchor(key.path)}}}\n: " in page, key.path


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


def test_every_option_of_the_command_page_has_a_meaning() -> None:
    rows = [line for line in reference.cli_page().splitlines() if line.startswith("| `")]
    assert rows
    empty = [row for row in rows if row.rstrip(" |").endswith("|")]
    assert not empty, "\n".join(empty)


def test_every_scenario_key_has_its_own_anchor() -> None:
    page = reference.scenario_page()
    anchors = [reference.key_anchor(key.path) for key in config_keys(Scenario)]
    assert len(set(anchors)) == len(anchors)
    assert reference.key_anchor("robots[].cameras[].width") == "key-robots-cameras-width"
    for anchor in anchors:
        assert f"{{#{anchor}}}\n: " in page, anchor


def test_the_formats_page_names_the_files_and_the_bag_from_the_code() -> None:
    from grade_common import rundir, tum
    from grade_common.bagfile import metadata

    page = reference.formats_page()
    for name in (rundir.RUN_YAML, rundir.RECORD_NPZ, tum.GROUNDTRUTH_TXT, tum.CAMERA_INFO_YAML):
        assert f"`{name}`" in page, name
    assert f"`{metadata.METADATA_YAML}` version {metadata.METADATA_VERSION}" in page
    assert "| `/uav1/camera/rgb/image_raw` | `sensor_msgs/msg/Image` |" in page
