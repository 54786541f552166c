"""The learned ray-drop model recovers a hidden drop rule from range-image pairs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grade_cli.main import main as grade
from grade_sim.config.lidar import LidarConfig, RayDropKind
from grade_sim.errors import LidarError
from grade_sim.sensors.lidar.learned_drop import LearnedRayDrop, RangeImagePair, fit
from grade_sim.sensors.lidar.sensor import ray_drop_model

RANGE_MAX = 100.0
TOLERANCE = 0.03  # absolute drop rate per (range, incidence) bin


def hidden_rule(r_m: np.ndarray, cos: np.ndarray, refl: np.ndarray) -> np.ndarray:
    # Not of the model's own form: a baseline, a steep far-range loss, grazing-angle loss.
    return 0.08 + 0.5 * (r_m / RANGE_MAX) ** 3 + 0.3 * (1 - cos) ** 2 * (1 - refl)


def make_pair(seed: int, shape: tuple[int, int] = (64, 128)) -> RangeImagePair:
    rng = np.random.default_rng(seed)
    r = rng.uniform(1.0, RANGE_MAX, shape)
    r[rng.random(shape) < 0.05] = 0.0  # the simulator hit nothing there
    cos = rng.uniform(0.05, 1.0, shape)
    refl = rng.uniform(0.05, 0.95, shape)
    real = r.copy()
    real[rng.random(shape) < hidden_rule(r, cos, refl)] = 0.0
    return RangeImagePair(r, cos, refl, real)


def bin_rates(model: LearnedRayDrop, pair: RangeImagePair) -> tuple[np.ndarray, np.ndarray]:
    hit = pair.sim_range_m > 0
    r, c, p = pair.sim_range_m[hit], pair.sim_cos_incidence[hit], pair.sim_reflectivity[hit]
    truth, pred = np.zeros((5, 5)), np.zeros((5, 5))
    rb = np.minimum((r / RANGE_MAX * 5).astype(int), 4)
    cb = np.minimum((c * 5).astype(int), 4)
    p_true, p_model = hidden_rule(r, c, p), model.drop_probability(r, c, p)
    for i in range(5):
        for j in range(5):
            sel = (rb == i) & (cb == j)
            truth[i, j], pred[i, j] = p_true[sel].mean(), p_model[sel].mean()
    return truth, pred


def test_fit_recovers_the_drop_rate_per_range_and_incidence_bin() -> None:
    model = fit([make_pair(s) for s in range(6)], RANGE_MAX)
    truth, pred = bin_rates(model, make_pair(99))
    assert np.abs(truth - pred).max() < TOLERANCE, np.round(pred - truth, 3)


def test_cli_writes_a_model_the_simulator_loads(tmp_path: Path) -> None:
    sims, reals = [], []
    for s in range(3):
        pair = make_pair(s)
        sim, real = tmp_path / f"sim{s}.npz", tmp_path / f"real{s}.npz"
        np.savez(
            sim,
            range_m=pair.sim_range_m,
            cos_incidence=pair.sim_cos_incidence,
            reflectivity=pair.sim_reflectivity,
        )
        np.savez(real, range_m=pair.real_range_m)
        sims.append(str(sim))
        reals.append(str(real))
    out = tmp_path / "drop.json"
    argv = ["lidar", "fit-raydrop", "--sim", *sims, "--real", *reals, "--range-max-m", "100"]
    assert grade([*argv, "--out", str(out)]) == 0
    cfg = LidarConfig(ray_drop=RayDropKind.LEARNED, ray_drop_model=str(out))
    model = ray_drop_model(cfg)
    assert isinstance(model, LearnedRayDrop)
    p = model.drop_probability(np.array([10.0, 95.0]), np.array([1.0, 0.1]), np.array([0.5, 0.5]))
    assert p[0] < 0.2 < 0.5 < p[1]
    assert grade([*argv[:-1], "0", "--out", str(tmp_path / "x.json")]) == 1
    assert grade([*argv, "--out", str(out)]) == 1  # never overwrites


def test_bad_model_files_and_inputs_are_clear_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something"}')
    with pytest.raises(LidarError, match="not a ray-drop model"):
        LearnedRayDrop.load(bad)
    with pytest.raises(LidarError, match="no range-image pairs"):
        fit([], RANGE_MAX)
    p = make_pair(0)
    with pytest.raises(LidarError, match="differ in shape"):
        fit(
            [
                RangeImagePair(
                    p.sim_range_m, p.sim_cos_incidence, p.sim_reflectivity, p.real_range_m[:3]
                )
            ],
            RANGE_MAX,
        )
