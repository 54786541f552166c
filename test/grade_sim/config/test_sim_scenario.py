"""Scenario files: every bad value is a ConfigError naming the key path, the value and what is
allowed; good files round-trip through their plain-data snapshot."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from grade_common.errors import ConfigError, GradeError
from grade_people.config import PersonMotion
from grade_sim.config.scenario import (
    EnvironmentKind,
    RobotKind,
    Scenario,
    Stream,
    load_scenario,
    scenario_from_mapping,
    scenario_to_mapping,
)


def cam(**fields: Any) -> dict[str, Any]:
    return {"robots": [{"name": "uav1", "cameras": [{"name": "camera", **fields}]}]}


def robot(**fields: Any) -> dict[str, Any]:
    return {"robots": [{"name": "uav1", **fields}]}


BAD = [
    # --- out-of-range numbers: path, value and the allowed interval
    ({"duration_s": 0}, r"duration_s: value 0\.0 is out of range; allowed \(0\.0, 86400\.0\]"),
    ({"duration_s": -3.5}, r"duration_s: value -3\.5 is out of range; allowed \(0\.0, 86400"),
    ({"seed": -1}, r"seed: value -1 is out of range; allowed \[0, "),
    ({"people": {"count": 65}}, r"people\.count: value 65 is out of range; allowed \[0, 64\]"),
    ({"rates": {"physics_hz": 10}}, r"rates\.physics_hz: value 10\.0 .*allowed \[30\.0, 2000\.0\]"),
    (cam(width=8), r"robots\[0\]\.cameras\[0\]\.width: value 8 .*allowed \[16, 4096\]"),
    (cam(hfov_deg=175), r"robots\[0\]\.cameras\[0\]\.hfov_deg: value 175\.0 .*\[10\.0, 170\.0\]"),
    (
        {"environment": {"procedural": {"room_size_m": [1.0, 6.0]}}},
        r"environment\.procedural\.room_size_m\[0\]: value 1\.0 .*allowed \[2\.5, 30\.0\]",
    ),
    (
        {"environment": {"mesh": {"scale": 0}}},
        r"environment\.mesh\.scale: value 0\.0 is out of range; allowed \(0\.0001, 10000",
    ),
    (robot(mass_kg=0.0), r"robots\[0\]\.mass_kg: value 0\.0 .*allowed \[0\.01, 1000\.0\]"),
    ({"duration_s": math.nan}, r"duration_s: expected a finite number, got nan"),
    ({"duration_s": math.inf}, r"duration_s: expected a finite number, got inf"),
    # --- wrong types
    ({"seed": "abc"}, r"seed: expected an integer, got 'abc'"),
    ({"seed": True}, r"seed: expected an integer, got True"),
    ({"seed": 1.5}, r"seed: expected an integer, got 1\.5"),
    ({"realtime": "yes"}, r"realtime: expected true or false, got 'yes'"),
    ({"duration_s": "long"}, r"duration_s: expected a number, got 'long'"),
    ({"people": [1, 2]}, r"people: expected a mapping with keys count, .*got \[1, 2\]"),
    ({"robots": {"name": "uav1"}}, r"robots: expected a list of a mapping with keys name"),
    ({"backend": ""}, r"backend: expected a non-empty string, got ''"),
    (robot(start_xyz=[1.0, 2.0]), r"robots\[0\]\.start_xyz: \[1\.0, 2\.0\] is not a list of 3"),
    (
        cam(mount={"xyz": [0, 0, "up"]}),
        r"robots\[0\]\.cameras\[0\]\.mount\.xyz\[2\]: expected a number, got 'up'",
    ),
    # --- unknown keys at several depths, listing the allowed ones
    ({"sede": 1}, r"scenario: unknown key\(s\) \['sede'\]; allowed keys: \[.*'seed'"),
    (
        {"environment": {"procedural": {"rooms": 3}}},
        r"environment\.procedural: unknown key\(s\) \['rooms'\]; allowed keys: \[.*'rooms_x'",
    ),
    (cam(fps=30), r"robots\[0\]\.cameras\[0\]: unknown key\(s\) \['fps'\]; .*'rate_hz'"),
    (
        cam(mount={"xyz": [0, 0, 0], "rot": [0, 0, 0]}),
        r"robots\[0\]\.cameras\[0\]\.mount: unknown key\(s\) \['rot'\]; .*'rpy'",
    ),
    ({"rates": {"lidar_hz": 10}}, r"rates: unknown key\(s\) \['lidar_hz'\]"),
    # --- bad enum values, listing the choices
    (
        {"environment": {"type": "cave"}},
        r"environment\.type: 'cave' is not allowed; use one of 'procedural', 'mesh'",
    ),
    (robot(type="car"), r"robots\[0\]\.type: 'car' is not allowed; use one of 'uav', 'omni'"),
    (
        robot(motion={"mode": "auto"}),
        r"robots\[0\]\.motion\.mode: 'auto' is not allowed; use one of 'path', 'commands'",
    ),
    (
        cam(streams=["rgb", "thermal"]),
        r"robots\[0\]\.cameras\[0\]\.streams\[1\]: 'thermal' is not allowed; use one of 'rgb'",
    ),
    (
        {"people": {"motions": ["walk", "dance"]}},
        r"people\.motions\[1\]: 'dance' is not allowed; use one of 'walk', 'stand', 'turn', "
        r"'run', 'sit', 'wave', 'look', 'phone'",
    ),
    (
        {"people": {"motions": ["walk", "run"]}},
        r"people\.motions: 'run' is not a stop to draw: people run when their speed",
    ),
    (
        {"people": {"motions": ["walk", "sit"], "body": "parts"}},
        r"people\.motions: 'sit' needs skinned people \(people\.body: skinned\); got body: parts",
    ),
    # --- min > max ranges
    (
        {"people": {"speed_mps": [1.4, 0.8]}},
        r"people\.speed_mps: range \[1\.4, 0\.8\] has min > max",
    ),
    ({"people": {"height_m": [1.9, 1.5]}}, r"people\.height_m: range \[1\.9, 1\.5\] has min > max"),
    (
        {"environment": {"procedural": {"room_size_m": [7.0, 5.0]}}},
        r"environment\.procedural\.room_size_m: range \[7\.0, 5\.0\] has min > max",
    ),
    (
        {"environment": {"procedural": {"furniture_per_room": [3, 1]}}},
        r"environment\.procedural\.furniture_per_room: range \[3\.0, 1\.0\] has min > max",
    ),
    (
        {"flying_objects": {"height_m": [2.0, 1.0]}},
        r"flying_objects\.height_m: range \[2\.0, 1\.0\] has min > max",
    ),
    ({"lights": {"intensity": [0.9, 0.1]}}, r"lights\.intensity: range \[0\.9, 0\.1\] has min"),
    # --- duplicate names
    (
        {"robots": [{"name": "uav1"}, {"name": "uav1"}]},
        r"robots: duplicate robot names \['uav1', 'uav1'\]",
    ),
    (
        robot(cameras=[{"name": "front"}, {"name": "front"}]),
        r"robots\[0\]\.cameras: duplicate camera names \['front', 'front'\]",
    ),
    ({"robots": []}, r"robots: at least one robot is required"),
    (robot(name="uav-1"), r"robots\[0\]\.name: 'uav-1' is not a valid ROS name"),
    (robot(name="1uav"), r"robots\[0\]\.name: '1uav' is not a valid ROS name"),
    # --- rates above the physics rate
    (
        {"rates": {"imu_hz": 500.0}},
        r"rates\.imu_hz: 500\.0 Hz exceeds physics_hz 240\.0; allowed \(0, 240\.0\]",
    ),
    (
        {"rates": {"physics_hz": 100.0, "clock_hz": 240.0}},
        r"rates\.clock_hz: 240\.0 Hz exceeds physics_hz 100\.0",
    ),
    (
        {
            "rates": {
                "physics_hz": 100.0,
                "clock_hz": 100,
                "imu_hz": 100,
                "tf_hz": 100,
                "joint_states_hz": 100,
            },
            **cam(rate_hz=200.0),
        },
        r"robots\[0\]\.cameras\[0\]\.rate_hz: 200\.0 Hz exceeds physics_hz 100\.0",
    ),
    # --- cross-field checks
    (cam(near_m=5.0, far_m=1.0), r"robots\[0\]\.cameras\[0\]\.near_m: 5\.0 must be below far_m"),
    (cam(streams=[]), r"robots\[0\]\.cameras\[0\]\.streams: empty"),
    (
        {"people": {"count": 3, "motions": ["stand"]}},
        r"people\.motions: must include 'walk'.*\['stand'\]",
    ),
    ({"environment": {"type": "mesh"}}, r"environment\.mesh\.path: required when"),
    (
        {"environment": {"mesh": {"path": "x.obj", "up_axis": "x"}}},
        r"environment\.mesh\.up_axis: 'x' is not allowed; use 'y' or 'z'",
    ),
    (
        {"environment": {"procedural": {"room_size_m": [2.6, 3.0], "door_width_m": 2.5}}},
        r"environment\.procedural\.door_width_m: 2\.5 does not fit rooms",
    ),
]


def _case_id(message: str) -> str:
    return message.split(":")[0].replace("\\", "")


@pytest.mark.parametrize(("data", "message"), BAD, ids=[_case_id(m) for _, m in BAD])
def test_bad_values_name_path_value_and_allowed(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        scenario_from_mapping(data, "my.yaml")
    assert str(info.value).startswith("my.yaml: ")
    assert isinstance(info.value, GradeError)


def test_sit_is_a_stop_of_skinned_people() -> None:
    scenario = scenario_from_mapping({"people": {"motions": ["walk", "sit", "stand"]}})
    assert PersonMotion.SIT in scenario.people.motions


@pytest.mark.parametrize(("top", "kind"), [([1, 2], "list"), ("text", "str"), (3, "int")])
def test_non_mapping_top_level(top: Any, kind: str) -> None:
    with pytest.raises(ConfigError, match=rf"expected a mapping at the top level, got {kind}"):
        scenario_from_mapping(top)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("seed: [1, 2\n", r"not valid YAML"),
        ("a: b: c\n", r"not valid YAML"),
        ("- 1\n- 2\n", r"expected a mapping at the top level, got list"),
        ("people:\n  count: many\n", r"people\.count: expected an integer, got 'many'"),
    ],
)
def test_bad_yaml_files(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_scenario(file)
    assert str(file) in str(info.value)


def test_missing_scenario_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"scenario file '.*nope\.yaml' does not exist"):
        load_scenario(tmp_path / "nope.yaml")


def test_missing_mesh_file_is_reported_with_resolved_path(tmp_path: Path) -> None:
    file = tmp_path / "mesh.yaml"
    file.write_text("environment:\n  type: mesh\n  mesh:\n    path: meshes/room.obj\n")
    expected = str(tmp_path / "meshes" / "room.obj")
    with pytest.raises(ConfigError, match=r"environment\.mesh\.path: mesh file .* does not exist"):
        load_scenario(file)
    with pytest.raises(ConfigError) as info:
        load_scenario(file)
    assert expected in str(info.value)


def test_mesh_path_resolves_relative_to_the_scenario_file(tmp_path: Path) -> None:
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "room.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    file = tmp_path / "mesh.yaml"
    file.write_text("environment:\n  type: mesh\n  mesh:\n    path: meshes/room.obj\n")
    scenario = load_scenario(file)
    assert scenario.environment.type is EnvironmentKind.MESH
    assert scenario.environment.mesh.path == str((tmp_path / "meshes" / "room.obj").resolve())


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n\n"])
def test_empty_file_is_refused_not_run_with_the_defaults(tmp_path: Path, text: str) -> None:
    file = tmp_path / "empty.yaml"
    file.write_text(text)
    with pytest.raises(ConfigError, match=r"empty\.yaml: the scenario file is empty"):
        load_scenario(file)


def test_an_explicit_empty_mapping_gives_the_defaults(tmp_path: Path) -> None:
    file = tmp_path / "defaults.yaml"
    file.write_text("{}\n")
    assert load_scenario(file) == Scenario()


def test_a_camera_name_must_be_a_ros_name_and_one_path_component(tmp_path: Path) -> None:
    file = tmp_path / "s.yaml"
    for bad in ("../../../x", "/abs", "a b", "kameraä"):
        file.write_text(yaml.safe_dump({"robots": [{"name": "uav1", "cameras": [{"name": bad}]}]}))
        with pytest.raises(ConfigError, match=r"robots\[0\]\.cameras\[0\]\.name: .* is not"):
            load_scenario(file)


def test_a_non_utf8_scenario_is_refused_with_its_name(tmp_path: Path) -> None:
    file = tmp_path / "latin1.yaml"
    file.write_bytes(b"robots:\n  - name: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1\.yaml: not UTF-8 text"):
        load_scenario(file)


def test_overrides_replace_top_level_keys(tmp_path: Path) -> None:
    file = tmp_path / "s.yaml"
    file.write_text("seed: 1\nduration_s: 20\n")
    scenario = load_scenario(file, {"duration_s": 2.5, "seed": 9})
    assert (scenario.duration_s, scenario.seed) == (2.5, 9)
    with pytest.raises(ConfigError, match=r"duration_s: value -1\.0 is out of range"):
        load_scenario(file, {"duration_s": -1})


def test_dotted_overrides_set_any_key_of_the_shipped_scenario(repo_root: Path) -> None:
    file = repo_root / "config" / "indoor_uav.yaml"
    before = load_scenario(file)
    scenario = load_scenario(
        file, {"people.count": 20, "robots.0.cameras.0.width": 160, "lights.shadows": True}
    )
    assert scenario.people.count == 20
    assert scenario.robots[0].cameras[0].width == 160
    assert scenario.lights.shadows is True
    # Everything else of those sections is the file's, not the defaults'.
    assert scenario.people.motions == before.people.motions
    assert scenario.robots[0].cameras[0].height == before.robots[0].cameras[0].height


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"people.cuont": 20}, r"people: unknown key\(s\) \['cuont'\]"),
        ({"people.count": -3}, r"people\.count: value -3 is out of range"),
        ({"robots.4.name": "x"}, r"'robots\.4' is not an item of 'robots', a list of 1 item"),
        ({"seed.x": 1}, r"override 'seed\.x': 'seed' is 42, not a mapping or a list"),
        ({"people..count": 1}, r"override 'people\.\.count': empty part in the key path"),
    ],
)
def test_dotted_overrides_name_the_key_path_in_errors(
    repo_root: Path, overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_scenario(repo_root / "config" / "indoor_uav.yaml", overrides)


def test_an_override_of_a_list_the_file_leaves_out_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "s.yaml"
    file.write_text("seed: 1\n")
    with pytest.raises(
        ConfigError, match=r"'robots' is not a list in the file, so it has no item 0"
    ):
        load_scenario(file, {"robots.0.name": "uav2"})


def test_defaults_follow_grade() -> None:
    s = Scenario()
    assert s.backend == "mujoco"
    assert (s.rates.physics_hz, s.rates.imu_hz, s.rates.tf_hz) == (240.0, 240.0, 120.0)
    assert (s.rates.joint_states_hz, s.rates.odom_hz, s.rates.camera_pose_hz) == (120, 60, 60)
    assert s.robots[0].cameras[0].rate_hz == 30.0
    assert s.physics_dt_s == pytest.approx(1 / 240)


def test_shipped_indoor_uav_loads(repo_root: Path) -> None:
    scenario = load_scenario(repo_root / "config" / "indoor_uav.yaml")
    assert scenario.seed == 42
    assert scenario.environment.type is EnvironmentKind.PROCEDURAL
    assert scenario.people.count >= 8
    assert scenario.flying_objects.count >= 1
    (uav,) = scenario.robots
    assert uav.type is RobotKind.UAV
    (camera,) = uav.cameras
    assert (camera.width, camera.height, camera.rate_hz) == (640, 480, 30.0)
    assert set(camera.streams) == {Stream.RGB, Stream.DEPTH, Stream.INSTANCE}
    # The shipped default shows the baked look (docs/looks.md#baked-lighting); probes and
    # contact shadows come with it.
    bake = scenario.lights.bake
    assert bake.enabled
    assert bake.probes
    assert bake.contact_shadows


ROUND_TRIP = [
    {},
    {
        "seed": 123,
        "duration_s": 3.25,
        "environment": {"type": "procedural", "procedural": {"rooms_x": 3, "rooms_y": 1}},
        "people": {"count": 4, "motions": ["walk", "turn"], "speed_mps": [0.5, 1.0]},
        "flying_objects": {"count": 0},
        "robots": [
            {
                "name": "uav1",
                "start_xyz": [1.0, 2.0, 1.5],
                "motion": {"waypoints": [[1, 2, 1.5], [3, 2, 1.5]], "loop": False},
                "cameras": [
                    {"name": "front", "streams": ["rgb"], "mount": {"rpy": [0, 0.2, 0]}},
                    {"name": "down", "width": 320, "height": 240, "rate_hz": 10},
                ],
            },
            {"name": "ground", "type": "omni", "motion": {"mode": "commands"}},
        ],
        "record": {"bag": False, "png_compression": 3},
    },
]


@pytest.mark.parametrize("data", ROUND_TRIP)
def test_round_trip_through_snapshot(data: dict[str, Any]) -> None:
    scenario = scenario_from_mapping(data)
    snapshot = scenario_to_mapping(scenario)
    assert scenario_from_mapping(snapshot) == scenario
    # The snapshot is plain YAML data (run.yaml, record.npz store it as text).
    assert scenario_from_mapping(yaml.safe_load(yaml.safe_dump(snapshot))) == scenario


def test_round_trip_keeps_types(small_scenario: Callable[..., Scenario]) -> None:
    scenario = scenario_from_mapping(
        {"people": {"motions": ["walk", "stand"]}, "robots": [{"name": "r", "type": "omni"}]}
    )
    again = scenario_from_mapping(scenario_to_mapping(scenario))
    assert again.people.motions == (PersonMotion.WALK, PersonMotion.STAND)
    assert again.robots[0].type is RobotKind.OMNI
    assert isinstance(again.robots[0].cameras, tuple)
    assert again == scenario
    assert small_scenario(seed=5) != small_scenario(seed=6)


def test_every_robot_and_motion_key_is_explained_in_the_scenarios_guide(repo_root: Path) -> None:
    """The generated reference lists every key; the how-to guide must also explain how a robot
    moves, so a new key of RobotConfig or MotionConfig needs a sentence there."""
    from dataclasses import fields

    from grade_sim.config.scenario import MotionConfig, RobotConfig
    from grade_sim.robots.path_follower import ACCEL_MPS2

    guide = (repo_root / "docs" / "how-to" / "scenarios.md").read_text(encoding="utf-8")
    documented = {"cameras", "imu", "lidars", "urdf", "urdf_base_link", "name", "type"}
    for f in fields(RobotConfig):
        if f.name not in documented and f.name != "motion":
            assert f"`{f.name}" in guide or f"`robots[].{f.name}" in guide, (
                f"robots[].{f.name} is not in docs/how-to/scenarios.md"
            )
    for f in fields(MotionConfig):
        assert f"`motion.{f.name}" in guide or f"`robots[].motion.{f.name}" in guide, (
            f"robots[].motion.{f.name} is not in docs/how-to/scenarios.md"
        )
    assert f"{ACCEL_MPS2:g} m/s²" in guide


@pytest.mark.parametrize(
    ("document", "relative", "named"),
    [
        (
            "environment: {type: mesh, mesh: {path: m/room.obj}}",
            "m/room.obj",
            "environment.mesh.path: mesh file",
        ),
        (
            "environment: {type: tabletop, tabletop: {scene: s/t.yaml}}",
            "s/t.yaml",
            "environment.tabletop.scene:",
        ),
        ("people: {clips: [c/walk.bvh]}", "c/walk.bvh", "people.clips[0]: BVH file"),
        ("robots: [{urdf: r/arm.urdf}]", "r/arm.urdf", "robots[0].urdf: URDF file"),
    ],
)
def test_missing_referenced_file_names_key_and_resolved_path(
    tmp_path: Path, document: str, relative: str, named: str
) -> None:
    file = tmp_path / "refs.yaml"
    file.write_text(document + "\n")
    expected = f"{file}: {named} {str((tmp_path / relative).resolve())!r} does not exist"
    with pytest.raises(ConfigError) as info:
        load_scenario(file)
    assert str(info.value) == expected
