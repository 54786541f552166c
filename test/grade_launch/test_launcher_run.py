"""`grade launch` with real rclpy processes, checked from a separate process over ROS 2."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from process_support import CollectedProcess, grade_launch_command

rclpy = pytest.importorskip("rclpy")

REPORTER = """\
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from std_msgs.msg import String


def main():
    rclpy.init(args=sys.argv)
    node = Node("reporter", automatically_declare_parameters_from_overrides=True)
    pub = node.create_publisher(String, "chatter", 10)
    argv = rclpy.utilities.remove_ros_args(sys.argv)[1:]
    print(f"READY {node.get_fully_qualified_name()} {pub.topic_name} {argv}", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    print("BYE", flush=True)


main()
"""

# Exits with the code of its `exit_code` parameter once a publisher on `wait_for` exists, so the
# crash happens while the other nodes are certainly up.
CRASHER = """\
import sys
import time

import rclpy
from rclpy.node import Node

rclpy.init(args=sys.argv)
node = Node("crasher", automatically_declare_parameters_from_overrides=True)
topic = node.get_parameter("wait_for").value
deadline = time.monotonic() + 60.0
while node.count_publishers(topic) == 0 and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.1)
print("CRASHING", flush=True)
sys.exit(node.get_parameter("exit_code").value)
"""


@pytest.fixture
def prefix(tmp_path: Path) -> Path:
    """A temporary ament prefix with package `gradelaunchtest` and two rclpy executables."""
    root = tmp_path / "prefix"
    (root / "share/ament_index/resource_index/packages").mkdir(parents=True)
    (root / "share/ament_index/resource_index/packages/gradelaunchtest").write_text("")
    (root / "lib/gradelaunchtest").mkdir(parents=True)
    for name, body in (("reporter", REPORTER), ("crasher", CRASHER)):
        exe = root / "lib/gradelaunchtest" / name
        exe.write_text(f"#!{sys.executable}\n{body}")
        exe.chmod(0o755)
    return root


def launch_env(prefix: Path, tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["AMENT_PREFIX_PATH"] = f"{prefix}{os.pathsep}{env.get('AMENT_PREFIX_PATH', '')}"
    env["ROS_LOG_DIR"] = str(tmp_path / "ros_log")
    return env


class Runner(CollectedProcess):
    """`grade launch ARGS...` as a subprocess with the given environment."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        super().__init__(grade_launch_command(args), env=env)

    def finish(self, timeout_s: float = 60.0) -> int:
        return self.wait(timeout_s)

    def kill(self) -> None:
        self.cleanup()


def get_parameters(node: rclpy.node.Node, target: str, names: list[str]) -> list[object]:
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    client = node.create_client(GetParameters, f"{target}/get_parameters")
    assert client.wait_for_service(timeout_sec=20.0), f"no parameter service of {target}"
    future = client.call_async(GetParameters.Request(names=names))
    executor = rclpy.executors.SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    executor.spin_until_future_complete(future, timeout_sec=20.0)
    executor.remove_node(node)
    assert future.done(), f"no answer from {target}/get_parameters"
    return [parameter_value_to_python(v) for v in future.result().values]


def wait_graph(
    node: rclpy.node.Node, want_nodes: set[tuple[str, str]], want_topics: set[str]
) -> None:
    deadline = time.monotonic() + 120.0  # a bound on a condition: node start-up under load
    while time.monotonic() < deadline:
        nodes = set(node.get_node_names_and_namespaces())
        topics = {name for name, _ in node.get_topic_names_and_types()}
        if want_nodes <= nodes and want_topics <= topics:
            return
        time.sleep(0.2)
    pytest.fail(
        f"graph lacks {want_nodes - nodes} / {want_topics - topics}: "
        f"nodes {sorted(nodes)}, topics {sorted(topics)}"
    )


@pytest.mark.ros
def test_nodes_names_namespaces_remaps_params_and_sigint(
    prefix: Path, tmp_path: Path, observer: rclpy.node.Node
) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(
        "/**:\n  ros__parameters:\n    common: 7\n"
        "/robot1/talker:\n  ros__parameters:\n    specific: only-talker\n"
    )
    launch = tmp_path / "two.launch.yaml"
    launch.write_text(f"""\
launch:
- arg: {{name: robot, default: robot1}}
- arg: {{name: rate, default: "1.0"}}
- group:
    children:
    - push_ros_namespace: {{namespace: "$(var robot)"}}
    - node:
        pkg: gradelaunchtest
        exec: reporter
        name: talker
        output: screen
        args: "--flag $(var robot)"
        param:
        - {{from: "{params}"}}
        - {{name: rate_hz, value: "$(var rate)"}}
        - {{name: label, value: hello}}
        remap:
        - {{from: chatter, to: remapped_chatter}}
- node:
    pkg: gradelaunchtest
    exec: reporter
    name: listener
    namespace: /other
    output: screen
    param:
    - {{from: "{params}"}}
""")
    runner = Runner(
        [str(launch), "rate:=2.5", "--sigterm-timeout-s", "15"], launch_env(prefix, tmp_path)
    )
    try:
        runner.wait_for("READY", count=2)
        assert any(
            line.startswith(
                "[talker-1] READY /robot1/talker /robot1/remapped_chatter ['--flag', 'robot1']"
            )
            for line in runner.lines
        ), runner.lines
        assert any(
            line.startswith("[listener-2] READY /other/listener /other/chatter")
            for line in runner.lines
        ), runner.lines
        wait_graph(
            observer,
            {("talker", "/robot1"), ("listener", "/other")},
            {"/robot1/remapped_chatter", "/other/chatter"},
        )
        assert get_parameters(
            observer, "/robot1/talker", ["rate_hz", "label", "common", "specific"]
        ) == [2.5, "hello", 7, "only-talker"]
        assert get_parameters(observer, "/other/listener", ["common"]) == [7]
        # `specific` is only for /robot1/talker; rclpy answers nothing for an unknown name.
        assert get_parameters(observer, "/other/listener", ["specific"]) == []
        runner.popen.send_signal(signal.SIGINT)
        assert runner.finish() == 0, "\n".join(runner.lines)
    finally:
        runner.kill()
    assert sum(line.endswith("] BYE") for line in runner.lines) == 2, runner.lines
    assert sum("process has finished cleanly" in line for line in runner.lines) == 2


@pytest.mark.ros
def test_crashing_node_is_reported_and_the_others_are_stopped(prefix: Path, tmp_path: Path) -> None:
    launch = tmp_path / "crash.launch.yaml"
    launch.write_text("""\
launch:
- node: {pkg: gradelaunchtest, exec: reporter, name: survivor, namespace: crash, output: screen}
- node:
    pkg: gradelaunchtest
    exec: crasher
    name: crasher
    output: screen
    param:
    - {name: exit_code, value: 3}
    - {name: wait_for, value: /crash/chatter}
""")
    runner = Runner([str(launch)], launch_env(prefix, tmp_path))
    try:
        code = runner.finish(timeout_s=90)
    finally:
        runner.kill()
    text = "\n".join(runner.lines)
    assert code == 1, text
    assert "[crasher-2] CRASHING" in text
    assert "[ERROR] [crasher-2]: process has died" in text
    assert "exit code 3" in text
    assert "[survivor-1] BYE" in text
    assert "[INFO] [survivor-1]: process has finished cleanly" in text
    assert "failed: crasher-2 (exit code 3)" in text
