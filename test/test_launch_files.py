"""Every shipped launch file, run through `grade launch` with real processes, checked from a
separate process over ROS 2: node names, namespaces, remaps and parameters. Also the static
contract of the shipped files: declared arguments with descriptions, parameter files in the
standard ROS 2 form."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from grade_launch.actions import DeclareArg, Group
from grade_launch.parser import parse_launch_file
from process_support import CollectedProcess, grade_launch_command

REPO = Path(__file__).resolve().parent.parent
LAUNCH_DIR = REPO / "launch"
DATA = REPO / "test/grade_sim/node/data"
SHIPPED = sorted(LAUNCH_DIR.glob("*.launch.yaml"))
SCENARIO_LAUNCH_FILES = ("indoor_uav", "multi_robot", "outdoor_savanna")
# The arguments the issue asks every scenario launch file to declare.
SCENARIO_ARGS = {
    "scenario",
    "robot_count",
    "duration_s",
    "record",
    "output_dir",
    "use_noise",
    "realtime",
}


def _declared(path: Path) -> list[DeclareArg]:
    def walk(actions: Any) -> Iterator[DeclareArg]:
        for action in actions:
            if isinstance(action, DeclareArg):
                yield action
            elif isinstance(action, Group):
                yield from walk(action.children)

    return list(walk(parse_launch_file(path).actions))


def test_every_scenario_has_a_launch_file() -> None:
    names = {p.name.removesuffix(".launch.yaml") for p in SHIPPED}
    assert set(SCENARIO_LAUNCH_FILES) <= names, names


@pytest.mark.parametrize("name", SCENARIO_LAUNCH_FILES)
def test_scenario_launch_file_declares_the_common_arguments_with_defaults(name: str) -> None:
    args = {a.name: a for a in _declared(LAUNCH_DIR / f"{name}.launch.yaml")}
    assert set(args) >= SCENARIO_ARGS, SCENARIO_ARGS - set(args)
    for arg in args.values():
        assert arg.default is not None, f"{name}: argument {arg.name} has no default"


@pytest.mark.parametrize(
    ("name", "robots"),
    [
        ("indoor_uav", [("uav1", "uav")]),
        ("multi_robot", [("uav1", "uav"), ("uav2", "uav"), ("omni1", "omni")]),
        ("outdoor_savanna", [("uav1", "uav"), ("omni1", "omni")]),
    ],
)
def test_default_scenario_of_each_launch_file_loads(
    name: str,
    robots: list[tuple[str, str]],
) -> None:
    from grade_sim.config.scenario import load_scenario
    from grade_sim.scene import build_scene

    default = {a.name: a for a in _declared(LAUNCH_DIR / f"{name}.launch.yaml")}["scenario"]
    assert default.default is not None
    text = "".join(getattr(part, "text", "") for part in default.default)
    assert text == f"/config/{name}.yaml"  # after $(find-pkg-share grade)
    scenario = load_scenario(REPO / "config" / f"{name}.yaml", {"duration_s": 0.1})
    assert [(r.name, r.type.value) for r in scenario.robots] == robots
    scene = build_scene(scenario)
    starts = [r.start_xyz[:2] for r in scene.robots]
    for i, a in enumerate(starts):  # placed collision-free
        for b in starts[i + 1 :]:
            assert float(((a - b) ** 2).sum()) ** 0.5 > 1.0
        assert scene.world.free_space.is_free(a)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_declared_argument_has_a_description(path: Path) -> None:
    for arg in _declared(path):
        assert arg.description.strip(), f"{path.name}: argument {arg.name} has no description"


NODE_KEY = re.compile(r"/\*\*|(/\*\*)?(/[A-Za-z_][A-Za-z0-9_]*)+|[A-Za-z_][A-Za-z0-9_]*")
PARAM_FILES = sorted(
    p
    for p in (REPO / "config").glob("*.yaml")
    if p.name in ("sim.yaml", "noise.yaml", "recorder.yaml")
    or p.name.startswith("controller_")
    or "params" in p.name
)


@pytest.mark.parametrize("path", PARAM_FILES, ids=lambda p: p.name)
def test_parameter_files_have_the_standard_ros2_form(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), path
    assert data, path
    for key, value in data.items():
        # A node name, a namespaced node name, or a wildcard pattern (/**, /**/name).
        assert NODE_KEY.fullmatch(str(key)), f"{path.name}: bad node key {key!r}"
        assert isinstance(value, dict), f"{path.name}: {key!r} must be a mapping"
        assert list(value) == ["ros__parameters"], (
            f"{path.name}: {key!r} must hold only 'ros__parameters'"
        )
        assert isinstance(value["ros__parameters"], dict)


def test_launch_check_cli_passes_over_every_shipped_file() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "grade_cli.main", "launch", "--check", *map(str, SHIPPED)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(": ok (") == len(SHIPPED), proc.stdout


# ------------------------------------------------------------------------------ running them


class Runner(CollectedProcess):
    """`grade launch ARGS...` as a subprocess in tmp_path."""

    def __init__(self, args: list[str], tmp_path: Path) -> None:
        super().__init__(grade_launch_command(args), tmp_path)

    def stop(self, timeout_s: float = 60.0) -> int:
        return self.interrupt(timeout_s)


def wait_nodes(
    node: Any, want: set[tuple[str, str]], runner: Runner, timeout_s: float = 60.0
) -> set[tuple[str, str]]:
    deadline = time.monotonic() + timeout_s
    have: set[tuple[str, str]] = set()
    while time.monotonic() < deadline and runner.popen.poll() is None:
        have = set(node.get_node_names_and_namespaces())
        if want <= have:
            return have
        time.sleep(0.2)
    pytest.fail(
        f"nodes {sorted(want - have)} never appeared (have {sorted(have)}):\n" + runner.text
    )


def get_parameters(node: Any, target: str, names: list[str]) -> dict[str, Any]:
    import rclpy
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    client = node.create_client(GetParameters, f"{target}/get_parameters")
    try:
        assert client.wait_for_service(timeout_sec=30.0), f"no parameter service of {target}"
        future = client.call_async(GetParameters.Request(names=names))
        executor = rclpy.executors.SingleThreadedExecutor(context=node.context)
        executor.add_node(node)
        executor.spin_until_future_complete(future, timeout_sec=30.0)
        executor.remove_node(node)
        assert future.done(), f"no answer from {target}/get_parameters"
        values = [parameter_value_to_python(v) for v in future.result().values]
    finally:
        node.destroy_client(client)
    assert len(values) == len(names), f"{target} lacks some of {names}: {values}"
    return dict(zip(names, values, strict=True))


def publishers_of(node: Any, name: str, namespace: str, want: set[str]) -> set[str]:
    """The topics a node publishes, once `want` are among them (or after 120 s: a bound on a
    condition, for node start-up on a busy machine)."""
    deadline = time.monotonic() + 120.0
    topics: set[str] = set()
    while time.monotonic() < deadline:
        topics = {t for t, _ in node.get_publisher_names_and_types_by_node(name, namespace)}
        if want <= topics:
            break
        time.sleep(0.2)
    return topics


def wait_clock(node: Any, runner: Runner, timeout_s: float = 60.0) -> None:
    """Wait for a /clock message: the simulation loop runs (SIGINT now stops a run, not the
    start-up)."""
    import rclpy
    from rosgraph_msgs.msg import Clock

    got: list[Any] = []
    sub = node.create_subscription(Clock, "/clock", got.append, 10)
    executor = rclpy.executors.SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + timeout_s
    try:
        while not got:
            if time.monotonic() > deadline or runner.popen.poll() is not None:
                pytest.fail("no /clock message:\n" + runner.text)
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.remove_node(node)
        node.destroy_subscription(sub)


# Long enough (real-time paced) to inspect the graph; every run is stopped with SIGINT.
LIVE = ["record:=false", "realtime:=true", "duration_s:=60.0"]


@pytest.mark.ros
@pytest.mark.slow
def test_indoor_launch_with_noise(observer: Any, tmp_path: Path) -> None:
    runner = Runner(
        [
            str(LAUNCH_DIR / "indoor_uav.launch.yaml"),
            *LIVE,
            "use_noise:=true",
            f"scenario:={DATA / 'indoor_small.yaml'}",
        ],
        tmp_path,
    )
    try:
        wait_nodes(observer, {("sim", "/"), ("noise_node", "/")}, runner)
        wait_clock(observer, runner)
        sim = get_parameters(
            observer,
            "/sim",
            ["scenario", "realtime", "duration_s", "robot_count", "output_dir", "start_delay_s"],
        )
        assert sim == {
            "scenario": str(DATA / "indoor_small.yaml"),
            "realtime": True,
            "duration_s": 60.0,
            "robot_count": -1,
            "output_dir": "",
            "start_delay_s": 1.0,
        }
        noise = get_parameters(observer, "/noise_node", ["input_topics", "seed"])
        assert noise["input_topics"][0] == "/uav1/imu"
        want = {"/uav1/imu_noisy", "/uav1/camera/rgb_noisy/image_raw"}
        assert want <= publishers_of(observer, "noise_node", "/", want)
    finally:
        code = runner.stop()
    assert code == 0, runner.text
    assert "run interrupted" in runner.text


@pytest.mark.ros
@pytest.mark.slow
def test_multi_robot_launch_namespaced_robot_nodes(observer: Any, tmp_path: Path) -> None:
    runner = Runner(
        [
            str(LAUNCH_DIR / "multi_robot.launch.yaml"),
            *LIVE,
            "use_noise:=true",
            "use_controllers:=true",
            "uav2_nodes:=false",
            "robot_count:=3",
            f"scenario:={DATA / 'multi_robot_small.yaml'}",
        ],
        tmp_path,
    )
    try:
        have = wait_nodes(
            observer,
            {
                ("sim", "/"),
                ("joint_controller", "/uav1"),
                ("noise_node", "/uav1"),
                ("joint_controller", "/omni1"),
                ("noise_node", "/omni1"),
            },
            runner,
        )
        assert not {n for n in have if n[1] == "/uav2"}, "uav2_nodes:=false still started nodes"
        assert get_parameters(observer, "/sim", ["robot_count"]) == {"robot_count": 3}
        wait_clock(observer, runner)
        for robot, kind_joints, imu_preset in (
            ("uav1", ["x", "y", "z", "roll", "pitch", "yaw"], "drone"),
            ("omni1", ["x", "y", "yaw", "camera_yaw"], "consumer"),
        ):
            ctrl = get_parameters(
                observer,
                f"/{robot}/joint_controller",
                ["robot", "joints", "use_sim_time", "rate_hz"],
            )
            assert ctrl == {
                "robot": robot,
                "joints": kind_joints,
                "use_sim_time": True,
                "rate_hz": 50.0,
            }
            noise = get_parameters(
                observer,
                f"/{robot}/noise_node",
                ["input_topics", "presets", "use_sim_time", "motion_topic"],
            )
            assert noise["input_topics"] == [
                f"/{robot}/imu",
                f"/{robot}/camera/rgb/image_raw",
                f"/{robot}/camera/depth/image_raw",
                f"/{robot}/odom",
            ]
            assert noise["presets"][0] == imu_preset
            assert noise["use_sim_time"] is True
            assert noise["motion_topic"] == f"/{robot}/imu"
            want = {f"/{robot}/joint_commands"}
            assert want <= publishers_of(observer, "joint_controller", f"/{robot}", want)
    finally:
        code = runner.stop()
    assert code == 0, runner.text
    assert "run interrupted" in runner.text
    assert runner.text.count("process has finished cleanly") == 5, runner.text


@pytest.mark.ros
@pytest.mark.slow
def test_outdoor_launch(observer: Any, tmp_path: Path) -> None:
    runner = Runner(
        [
            str(LAUNCH_DIR / "outdoor_savanna.launch.yaml"),
            *LIVE,
            "seed:=9",
            f"scenario:={DATA / 'outdoor_small.yaml'}",
        ],
        tmp_path,
    )
    try:
        have = wait_nodes(observer, {("sim", "/")}, runner)
        assert not {n for n in have if n[1] in ("/uav1", "/omni1")}, (
            f"robot nodes started although use_controllers and use_noise are false: {have}"
        )
        sim = get_parameters(observer, "/sim", ["scenario", "seed", "robot_count"])
        assert sim == {"scenario": str(DATA / "outdoor_small.yaml"), "seed": 9, "robot_count": -1}
        want = {"/uav1/camera/rgb/image_raw", "/omni1/camera/depth/image_raw", "/clock", "/tf"}
        topics = publishers_of(observer, "sim", "/", want)
        assert want <= topics, topics
        wait_clock(observer, runner)
    finally:
        code = runner.stop()
    assert code == 0, runner.text
    assert "(seed 9, 60.0 s, 2 robot(s))" in runner.text
    assert "run interrupted" in runner.text


@pytest.mark.ros
@pytest.mark.slow
def test_robot_nodes_launch_remaps_the_controller_output(observer: Any, tmp_path: Path) -> None:
    runner = Runner(
        [
            str(LAUNCH_DIR / "robot_nodes.launch.yaml"),
            "robot:=uav2",
            "use_controller:=true",
            "commands_topic:=/uav2/joint_commands_raw",
        ],
        tmp_path,
    )
    try:
        wait_nodes(observer, {("joint_controller", "/uav2")}, runner)
        assert get_parameters(observer, "/uav2/joint_controller", ["robot", "use_sim_time"]) == {
            "robot": "uav2",
            "use_sim_time": True,
        }
        topics = publishers_of(observer, "joint_controller", "/uav2", {"/uav2/joint_commands_raw"})
        assert "/uav2/joint_commands_raw" in topics, topics
        assert "/uav2/joint_commands" not in topics, topics
    finally:
        code = runner.stop()
    assert code == 0, runner.text
