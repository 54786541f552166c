"""Bad input through the `grade` entry point: exit 1 and one clear line, nothing deleted or
written; SIGTERM exits 143; a failed launch leaves no temporary folder."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from grade_cli import main as cli
from grade_common.output_guard import OUTPUT_MARKER

SCENARIO = {
    "duration_s": 30.0,
    "bootstrap_s": 0.1,
    "people": {"count": 0},
    "flying_objects": {"count": 0},
    "environment": {"procedural": {"rooms_x": 1, "rooms_y": 1}},
    "robots": [{"name": "uav1", "cameras": [{"name": "cam", "width": 32, "height": 24}]}],
}


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    return path


def _refused(argv: list[str], folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = _tree(folder)
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert _tree(folder) == before  # nothing written, nothing deleted
    return err


def test_overwrite_of_a_non_run_folder_is_refused_and_nothing_deleted(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "thesis.tex").write_text("years of work")
    argv = ["run", str(scenario), "--out", str(thesis), "--overwrite", "--quiet"]
    err = _refused(argv, tmp_path, capsys)
    assert "was not written by grade" in err
    assert "nothing was deleted" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml", "thesis"]


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("s.yaml", "the output is the input"),  # --out equal to the scenario file
        (".", "would contain the input"),
        ("notes.txt/run", "is a file, not a folder"),
        ("/proc/grade_run", "cannot write in '/proc'"),
    ],
)
def test_run_refuses_bad_output_paths(
    tmp_path: Path,
    scenario: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    out: str,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    for extra in ([], ["--overwrite"]):
        argv = ["run", str(scenario), "--out", out, "--quiet", *extra]
        err = _refused(argv, tmp_path, capsys)
        if Path(out).exists() and not extra:
            assert "exists already" in err
        else:
            assert message in err, err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--set", "people={count: ["], "the value is not valid YAML"),
        (["--set", "=3"], "the key is empty"),
        (
            ["--set", "robots=[{name: uav1, cameras: [{name: ../../../x}]}]"],
            "'../../../x' is not allowed; it must match",
        ),
    ],
)
def test_run_refuses_bad_overrides(
    tmp_path: Path,
    scenario: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    argv = ["run", str(scenario), "--out", str(tmp_path / "run"), "--quiet", *extra]
    assert message in _refused(argv, tmp_path, capsys)


def test_run_refuses_an_empty_scenario_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    err = _refused(["run", str(empty), "--out", str(tmp_path / "run")], tmp_path, capsys)
    assert "the scenario file is empty" in err


def test_eval_map_refuses_a_negative_max_dist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("est.npy", "gt.npy"):
        import numpy as np

        np.save(tmp_path / name, np.random.default_rng(0).normal(size=(10, 3)))
    argv = ["eval", "map", "--est", str(tmp_path / "est.npy"), "--gt", str(tmp_path / "gt.npy")]
    err = _refused([*argv, "--max-dist", "-1"], tmp_path, capsys)
    assert "--max-dist" in err
    assert "-1.0 is not allowed" in err


def test_eval_refuses_an_output_inside_an_input_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "gt.txt").write_text("0 0 0 0 0 0 0 1\n")
    argv = ["eval", "traj", "--ref", str(run), "--est", str(run / "gt.txt")]
    err = _refused([*argv, "--out", str(run / "ate.csv")], tmp_path, capsys)
    assert "inside the input" in err


def test_a_failed_launch_leaves_no_temporary_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    bad = tmp_path / "bad.launch.yaml"
    bad.write_bytes(b"launch:\n- node: {pkg: grade, exec: \xff}\n")
    for extra in ([], ["--print"]):
        assert cli.main(["launch", str(bad), *extra]) == 1
        assert "not UTF-8" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.launch.yaml"]


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_grade_run_exit_code_after_a_signal(
    tmp_path: Path, scenario: Path, sig: signal.Signals, code: int
) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "grade_cli.main", "run", str(scenario), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    seen = ""
    # Stepping has begun once the progress bar knows its total (about 7200 steps).
    while not re.search(r"\d+/\d{4}", seen) and time.monotonic() < deadline:
        seen += proc.stderr.read(1)
    proc.send_signal(sig)
    _, rest = proc.communicate(timeout=120)
    assert proc.returncode == code, seen + rest
    run_yaml = yaml.safe_load((out / "run.yaml").read_text())
    assert run_yaml["status"] == "interrupted"
    assert (out / OUTPUT_MARKER).is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
