"""Odometry drift and the generic Gaussian scalar model."""

from __future__ import annotations

import numpy as np
import pytest

from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.odometry import (
    GaussianParams,
    OdometrySample,
    OdometryState,
    gaussian_noise,
    odometry_noise,
    odometry_preset,
)


def _straight_line(n: int, speed_m_s: float = 1.0, rate_hz: float = 60.0) -> list[OdometrySample]:
    return [
        OdometrySample(
            int(i * 1e9 / rate_hz),
            np.array([speed_m_s * i / rate_hz, 0.0, 0.0]),
            np.array([0.0, 0.0, 0.0, 1.0]),
            np.array([speed_m_s, 0.0, 0.0]),
            np.zeros(3),
        )
        for i in range(n)
    ]


def _run(samples: list[OdometrySample], preset: str, seed: int) -> list[OdometrySample]:
    rng = np.random.default_rng(seed)
    state = OdometryState()
    out = []
    for s in samples:
        noisy, state = odometry_noise(s, state, rng, odometry_preset(preset))
        out.append(noisy)
    return out


def test_drift_grows_with_distance_and_starts_exact() -> None:
    samples = _straight_line(600)  # 10 m
    errors = []
    for seed in range(20):
        out = _run(samples, "wheel", seed)
        np.testing.assert_array_equal(out[0].position, samples[0].position)
        errors.append([np.linalg.norm(out[i].position - samples[i].position) for i in (60, 599)])
    err = np.array(errors)
    assert np.mean(err[:, 1]) > 3 * np.mean(err[:, 0])
    assert 0.0 < np.mean(err[:, 1]) < 1.0


def test_twist_only_keeps_pose_and_noises_twist() -> None:
    samples = _straight_line(100)
    out = _run(samples, "twist_only", 0)
    for s, o in zip(samples, out, strict=True):
        np.testing.assert_allclose(o.position, s.position, atol=1e-9)
    lin = np.array([o.linear_m_s[0] for o in out])
    assert np.std(lin) == pytest.approx(0.01, rel=0.25)


def test_same_seed_same_drift() -> None:
    samples = _straight_line(50)
    a = _run(samples, "visual", 9)
    b = _run(samples, "visual", 9)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.position, y.position)
        np.testing.assert_array_equal(x.quat_xyzw, y.quat_xyzw)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("position", np.array([np.nan, 0.0, 0.0]), "NaN"),
        ("quat_xyzw", np.array([0.0, 0.0, 0.0, 0.0]), "unit quaternion"),
    ],
)
def test_bad_odometry_input(field: str, value: np.ndarray, match: str) -> None:
    base = _straight_line(1)[0]
    kwargs = {**base.__dict__, field: value}
    with pytest.raises(NoiseInputError, match=match):
        odometry_noise(
            OdometrySample(**kwargs),
            OdometryState(),
            np.random.default_rng(0),
            odometry_preset("wheel"),
        )


def test_gaussian_scalar_model() -> None:
    out = gaussian_noise(np.full(100_000, 5.0), np.random.default_rng(0), GaussianParams(0.3, 1.0))
    assert np.mean(out) == pytest.approx(6.0, abs=0.01)
    assert np.std(out) == pytest.approx(0.3, rel=0.02)
    assert float(gaussian_noise(2.0, np.random.default_rng(0), GaussianParams(0.0))) == 2.0
    with pytest.raises(NoiseInputError, match="NaN"):
        gaussian_noise(np.array([1.0, np.nan]), np.random.default_rng(0), GaussianParams(0.1))
    with pytest.raises(NoiseConfigError, match="sigma"):
        GaussianParams(-1.0)
    with pytest.raises(NoiseConfigError, match="available"):
        odometry_preset("gps")
