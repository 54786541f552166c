"""Same scenario and seed: byte-identical images, ground truth, record and bag messages."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.sim.run import run_scenario

Bag = dict[str, list[tuple[int, str, bytes]]]


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, small_data: Callable[..., dict[str, Any]]
) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("determinism")
    out = {}
    for name, seed in (("a", 11), ("b", 11), ("c", 12)):
        scenario = scenario_from_mapping(small_data(seed=seed, duration_s=0.3, people={"count": 2}))
        out[name] = run_scenario(scenario, root / name).path
    return out


def files_under(root: Path) -> dict[str, bytes]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def test_ground_truth_files_are_byte_identical(runs: dict[str, Path]) -> None:
    a, b = files_under(runs["a"] / "gt"), files_under(runs["b"] / "gt")
    assert a.keys() == b.keys()
    pngs = [k for k in a if k.endswith(".png")]
    assert len(pngs) == 3 * 10  # rgb, depth, instance at 30 Hz over 0.3 s (+ first frame)
    for name in a:
        assert a[name] == b[name], name
    assert "uav1/camera/groundtruth.txt" in a
    assert "uav1/trajectory.txt" in a


def test_record_arrays_are_identical(runs: dict[str, Path]) -> None:
    with np.load(runs["a"] / "record.npz") as ra, np.load(runs["b"] / "record.npz") as rb:
        assert sorted(ra.files) == sorted(rb.files)
        assert len(ra.files) > 10
        for key in ra.files:
            np.testing.assert_array_equal(ra[key], rb[key], err_msg=key)


def test_bag_messages_are_identical(runs: dict[str, Path], read_bag: Callable[[Path], Bag]) -> None:
    a, b = read_bag(runs["a"] / "bag"), read_bag(runs["b"] / "bag")
    assert a == b
    assert (runs["a"] / "run.yaml").read_bytes() == (runs["b"] / "run.yaml").read_bytes()


def test_a_different_seed_gives_a_different_run(runs: dict[str, Path]) -> None:
    a, c = files_under(runs["a"] / "gt"), files_under(runs["c"] / "gt")
    rgb = [k for k in a if k.startswith("uav1/camera/rgb/")]
    assert rgb
    assert all(a[k] != c[k] for k in rgb)
    assert a["uav1/camera/groundtruth.txt"] != c["uav1/camera/groundtruth.txt"]
    assert a["instances.yaml"] != c["instances.yaml"]  # a different room layout


@pytest.mark.slow
def test_separate_processes_with_different_hash_seeds_agree(
    tmp_path: Path,
    small_data: Callable[..., dict[str, Any]],
    read_bag: Callable[[Path], Bag],
) -> None:
    """`grade run` twice in fresh interpreters (different PYTHONHASHSEED): same bytes."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(small_data(seed=3, duration_s=0.2)))
    procs = []
    for name, hash_seed in (("p1", "1"), ("p2", "2")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        argv = [
            sys.executable,
            "-m",
            "grade_cli.main",
            "run",
            str(scenario),
            "--out",
            str(tmp_path / name),
            "--quiet",
        ]
        procs.append(
            subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        )
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    assert files_under(tmp_path / "p1" / "gt") == files_under(tmp_path / "p2" / "gt")
    assert read_bag(tmp_path / "p1" / "bag") == read_bag(tmp_path / "p2" / "bag")
    with np.load(tmp_path / "p1" / "record.npz") as a, np.load(tmp_path / "p2" / "record.npz") as b:
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
