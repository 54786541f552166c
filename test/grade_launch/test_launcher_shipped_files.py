"""Every shipped launch file passes the frontend check that both `ros2 launch` and `grade launch`
accept (runs over whatever launch/*.launch.yaml exist)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_launch.validate import check_launch_file

LAUNCH_DIR = Path(__file__).resolve().parents[2] / "launch"
SHIPPED = sorted(LAUNCH_DIR.glob("*.launch.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_launch_file_passes_the_frontend_check(path: Path) -> None:
    result = check_launch_file(path)
    assert result.nodes + result.includes > 0, f"{path} starts nothing"


@pytest.mark.parametrize(
    ("name", "args", "lockstep_nodes"),
    [
        ("indoor_uav.launch.yaml", [], 1),
        ("multi_robot.launch.yaml", ["use_controllers:=true"], 4),
        ("outdoor_savanna.launch.yaml", ["use_controllers:=true"], 3),
    ],
)
def test_lockstep_reaches_the_simulator_and_the_controllers(
    name: str, args: list[str], lockstep_nodes: int, tmp_path: Path
) -> None:
    from grade_launch.executor import plan_launch

    plan = plan_launch(
        LAUNCH_DIR / name, dict(a.split(":=") for a in ["lockstep:=true", *args]), tmp_path
    )
    assert plan.undeclared({"lockstep": "true"}) == []
    with_lockstep = []
    for process in plan.processes:
        params = " ".join(process.cmd)
        files = [Path(a) for a in process.cmd if a.endswith(".yaml") and Path(a).is_file()]
        text = params + "".join(f.read_text() for f in files if f.parent == tmp_path)
        if "lockstep: true" in text or "lockstep:=true" in text:
            with_lockstep.append(process.label)
    assert len(with_lockstep) == lockstep_nodes, [p.cmd for p in plan.processes]


def test_indoor_noise_node_runs_on_simulated_time(tmp_path: Path) -> None:
    import yaml

    from grade_launch.executor import plan_launch

    plan = plan_launch(LAUNCH_DIR / "indoor_uav.launch.yaml", {"use_noise": "true"}, tmp_path)
    (noise,) = [p for p in plan.processes if "noise_node" in p.label]
    files = [Path(a) for a in noise.cmd if a.endswith(".yaml")]
    sim_time = [
        yaml.safe_load(f.read_text())["/**"]["ros__parameters"].get("use_sim_time")
        for f in files
        if "/**" in yaml.safe_load(f.read_text())
    ]
    assert sim_time == [True], noise.cmd
