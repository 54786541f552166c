"""Run directories: never overwrite, close cleanly when interrupted, `grade run` on the CLI."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from grade_cli import main as cli
from grade_common.errors import OutputExistsError
from grade_common.output_guard import write_marker
from grade_sim.config.scenario import Scenario, load_scenario
from grade_sim.io.record import load_record
from grade_sim.io.run_dir import RunDirectory
from grade_sim.scene import build_scene
from grade_sim.sim.run import SimulatorSpec, run_scenario

Bag = dict[str, list[tuple[int, str, bytes]]]
STOP_STEP = 60


class StopAt:
    """An observer that asks the simulator to stop at a step (like a Ctrl-C would)."""

    def __init__(self, stop: threading.Event, step: int, use_sigint: bool) -> None:
        self.stop, self.step, self.use_sigint = stop, step, use_sigint

    def on_message(self, topic: object, stamp_ns: int, cdr: bytes) -> None:
        return None

    def on_camera(self, sample: object) -> None:
        return None

    def on_step(self, step: int, stamp_ns: int, robot_states: object) -> None:
        if step == self.step:
            if self.use_sigint:
                os.kill(os.getpid(), signal.SIGINT)
            else:
                self.stop.set()

    def close(self, status: str) -> None:
        return None


def stopping_at(scenario: Scenario, step: int, use_sigint: bool = False) -> SimulatorSpec:
    stop = threading.Event()
    return SimulatorSpec(
        build_scene(scenario), observers=(StopAt(stop, step, use_sigint),), stop_event=stop
    )


@pytest.mark.parametrize("use_sigint", [False, True], ids=["stop_event", "sigint"])
def test_interrupted_run_leaves_a_readable_bag(
    tmp_path: Path,
    small_scenario: Callable[..., Scenario],
    read_bag: Callable[[Path], Bag],
    use_sigint: bool,
) -> None:
    scenario = small_scenario(duration_s=1.0)
    # The handler the process had (SIG_IGN where the suite runs in a shell's background job).
    sigint_before = signal.getsignal(signal.SIGINT)
    result = run_scenario(stopping_at(scenario, STOP_STEP, use_sigint), tmp_path / "run")
    assert result.path == tmp_path / "run"
    assert result.stats.status == "interrupted"
    assert result.stats.steps == STOP_STEP + 1
    summary = json.loads((result.path / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert summary["steps"] == STOP_STEP + 1
    assert yaml.safe_load((result.path / "run.yaml").read_text())["status"] == "interrupted"
    bag = read_bag(result.path / "bag")  # every message deserialisable by the standard reader
    assert {t: len(v) for t, v in bag.items()} == {
        t: v["count"] for t, v in summary["topics"].items()
    }
    assert len(bag["/clock"]) == STOP_STEP + 1
    assert len(bag["/uav1/camera/rgb/image_raw"]) == STOP_STEP // 8 + 1
    record = load_record(result.path / "record.npz")
    assert record.status == "interrupted"
    assert record.n_steps == STOP_STEP + 1
    # Ground truth: every frame listed is on disk (from the experiment start at step 24).
    cam = result.path / "gt" / "uav1" / "camera"
    rows = [r.split() for r in (cam / "rgb.txt").read_text().splitlines() if r[0] != "#"]
    assert len(rows) == (STOP_STEP - 24) // 8 + 1
    assert all((cam / name).is_file() for _, name in rows)
    # The SIGINT handler is restored afterwards.
    assert signal.getsignal(signal.SIGINT) is sigint_before


@pytest.mark.parametrize("existing", ["dir", "file"])
def test_existing_output_is_refused_and_untouched(
    tmp_path: Path, small_scenario: Callable[..., Scenario], existing: str
) -> None:
    out = tmp_path / "run"
    if existing == "dir":
        out.mkdir()
        (out / "keep.txt").write_text("precious")
    else:
        out.write_text("precious")
    with pytest.raises(OutputExistsError, match=r"output directory '.*run' exists already"):
        run_scenario(small_scenario(), out)
    if existing == "dir":
        assert [p.name for p in out.iterdir()] == ["keep.txt"]
        assert (out / "keep.txt").read_text() == "precious"
    else:
        assert out.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_overwrite_replaces_only_once_complete(
    tmp_path: Path, small_scenario: Callable[..., Scenario]
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("old")
    write_marker(out)  # an earlier grade output: the only kind --overwrite replaces
    result = run_scenario(small_scenario(duration_s=0.2), out, overwrite=True)
    assert result.stats.status == "complete"
    assert not (out / "keep.txt").exists()
    assert (out / "summary.json").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_run_directory_is_written_under_a_temporary_name(tmp_path: Path) -> None:
    run_dir = RunDirectory(tmp_path / "run")
    assert run_dir.path.parent == tmp_path
    assert run_dir.path.name.startswith(".run.partial-")
    (run_dir.path / "x.txt").write_text("1")
    assert not (tmp_path / "run").exists()
    assert run_dir.commit() == tmp_path / "run"
    assert (tmp_path / "run" / "x.txt").read_text() == "1"
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
    with pytest.raises(OutputExistsError):
        RunDirectory(tmp_path / "run")


def write_scenario(path: Path, small_data: Callable[..., dict[str, Any]], **over: Any) -> Path:
    path.write_text(yaml.safe_dump(small_data(**over)))
    return path


def test_grade_run_cli(
    tmp_path: Path,
    small_data: Callable[..., dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = write_scenario(tmp_path / "s.yaml", small_data)
    out = tmp_path / "run"
    argv = ["run", str(scenario), "--out", str(out), "--set", "duration_s=0.2", "--quiet"]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert f"run complete: {out}" in printed
    assert "/uav1/camera/rgb/image_raw" in printed
    assert "real-time factor" in printed
    run_yaml = yaml.safe_load((out / "run.yaml").read_text())
    assert run_yaml["scenario"]["duration_s"] == 0.2
    # A second run into the same directory is refused and changes nothing.
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    assert cli.main(argv) == 1
    assert "exists already" in capsys.readouterr().err
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--set", "duration_s"], r"--set 'duration_s': expected KEY=VALUE"),
        (["--set", "duration_s=-1"], r"duration_s: value -1\.0 is out of range"),
        (["--set", "people={count: 999}"], r"people\.count: value 999 is out of range"),
        (["--set", "backend=bullet"], r"unknown engine 'bullet'; available: mujoco"),
    ],
)
def test_grade_run_cli_errors(
    tmp_path: Path,
    small_data: Callable[..., dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    scenario = write_scenario(tmp_path / "s.yaml", small_data)
    out = tmp_path / "run"
    assert cli.main(["run", str(scenario), "--out", str(out), "--quiet", *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith("grade run: error: ")
    assert re.search(message, err), err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_grade_run_cli_rejects_an_invalid_scenario_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("robots:\n  - name: uav1\n    cameras:\n      - name: c\n        width: 2\n")
    assert cli.main(["run", str(bad), "--out", str(tmp_path / "run"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err
    assert "robots[0].cameras[0].width: value 2 is out of range" in err
    assert [p.name for p in tmp_path.iterdir()] == ["bad.yaml"]


def test_mesh_environment_scenario_runs_end_to_end(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]]
) -> None:
    import trimesh

    floor = trimesh.creation.box(extents=(8.0, 6.0, 0.02))
    floor.apply_translation((4.0, 3.0, -0.01))
    pillar = trimesh.creation.box(extents=(1.0, 1.0, 2.5))
    pillar.apply_translation((4.0, 3.0, 1.25))
    (tmp_path / "meshes").mkdir()
    trimesh.util.concatenate([floor, pillar]).export(tmp_path / "meshes" / "hall.ply")
    data = small_data(duration_s=0.2, people={"count": 1}, flying_objects={"count": 1})
    data["environment"] = {"type": "mesh", "mesh": {"path": "meshes/hall.ply"}}
    file = tmp_path / "hall.yaml"
    file.write_text(yaml.safe_dump(data))
    result = run_scenario(load_scenario(file), tmp_path / "run")
    assert result.stats.status == "complete"
    run_yaml = yaml.safe_load((result.path / "run.yaml").read_text())
    assert run_yaml["scenario"]["environment"]["mesh"]["path"] == str(
        (tmp_path / "meshes" / "hall.ply").resolve()
    )
    instances = yaml.safe_load((result.path / "gt" / "instances.yaml").read_text())
    assert [v["class"] for v in instances.values()].count("environment") == 1
    assert result.summary["ground_truth_frames_written"] == 7


def test_realtime_run_is_paced_to_the_wall_clock(
    tmp_path: Path, small_scenario: Callable[..., Scenario]
) -> None:
    scenario = small_scenario(duration_s=0.4, bootstrap_s=0.0, realtime=True)
    result = run_scenario(scenario, tmp_path / "run")
    assert result.stats.wall_time_s >= 0.39
    assert result.stats.real_time_factor <= 1.05
