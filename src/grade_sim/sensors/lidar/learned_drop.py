"""The learned ray-drop model: logistic regression on range, incidence and reflectivity.

LiDARsim learns drops with a U-Net on the 64 x 2048 range image. Here a logistic regression on
quadratic features of (range / range_max, cos incidence, reflectivity) is fitted by Newton's
method: ten weights, fitted on a CPU in well under a second from millions of rays, smooth in
every feature (so it extrapolates calmly to bins with few rays), and it predicts the probability
that the simulator samples from, the same interface as the physics model. What it cannot learn
is context across pixels (the U-Net sees neighbourhoods): drops caused by e.g. wet patches.

Training pairs are range images of the same scans: the simulated image gives range, incidence and
reflectivity of each ray that hit; the real one says whether that ray returned (0: dropped).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grade_common.atomic import StagedOutput
from grade_common.types import FloatArray
from grade_sim.errors import LidarError

FEATURES = ("1", "r", "r^2", "c", "c^2", "p", "p^2", "r*c", "r*p", "c*p")
FORMAT = "grade-raydrop-logistic-v1"


def features(
    range_norm: FloatArray, cos_incidence: FloatArray, reflectivity: FloatArray
) -> FloatArray:
    r, c, p = range_norm, cos_incidence, reflectivity
    one = np.ones_like(r)
    out: FloatArray = np.stack([one, r, r * r, c, c * c, p, p * p, r * c, r * p, c * p], axis=1)
    return out


@dataclass(frozen=True)
class LearnedRayDrop:
    """A fitted model: drop probability = sigmoid(features . weights)."""

    range_max_m: float
    weights: FloatArray

    def drop_probability(
        self, range_m: FloatArray, cos_incidence: FloatArray, reflectivity: FloatArray
    ) -> FloatArray:
        x = features(range_m / self.range_max_m, cos_incidence, reflectivity)
        out: FloatArray = 1.0 / (1.0 + np.exp(-(x @ self.weights)))
        return out

    def save(self, path: Path) -> None:
        data = {
            "format": FORMAT,
            "features": list(FEATURES),
            "range_max_m": self.range_max_m,
            "weights": [float(w) for w in self.weights],
        }
        with StagedOutput(path) as tmp:
            tmp.write_text(json.dumps(data, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> LearnedRayDrop:
        try:
            data = json.loads(Path(path).read_text())
            if data.get("format") != FORMAT:
                raise LidarError(f"{path}: not a ray-drop model (format {data.get('format')!r})")
            weights = np.asarray(data["weights"], dtype=np.float64)
            if weights.shape != (len(FEATURES),):
                raise LidarError(f"{path}: expected {len(FEATURES)} weights, got {weights.shape}")
            return cls(float(data["range_max_m"]), weights)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise LidarError(f"{path}: cannot read the ray-drop model: {err}") from err


@dataclass(frozen=True)
class RangeImagePair:
    """One scan as simulated (range, incidence, reflectivity) and as really measured (range)."""

    sim_range_m: FloatArray  # (H, W), 0 = no hit
    sim_cos_incidence: FloatArray
    sim_reflectivity: FloatArray
    real_range_m: FloatArray  # (H, W), 0 = no return


def fit(
    pairs: list[RangeImagePair], range_max_m: float, l2: float = 1e-3, iterations: int = 50
) -> LearnedRayDrop:
    """Fit the logistic model on every ray the simulator hit (target: the real one dropped it).

    Raises:
        LidarError: no pairs, mismatched shapes, or no simulated hits.
    """
    if not pairs:
        raise LidarError("fit-raydrop: no range-image pairs given")
    xs, ys = [], []
    for i, pair in enumerate(pairs):
        if pair.sim_range_m.shape != pair.real_range_m.shape:
            raise LidarError(
                f"fit-raydrop: pair {i}: simulated image {pair.sim_range_m.shape} and real "
                f"image {pair.real_range_m.shape} differ in shape"
            )
        hit = pair.sim_range_m > 0
        xs.append(
            features(
                pair.sim_range_m[hit] / range_max_m,
                pair.sim_cos_incidence[hit],
                pair.sim_reflectivity[hit],
            )
        )
        ys.append((pair.real_range_m[hit] <= 0).astype(np.float64))
    x, y = np.concatenate(xs), np.concatenate(ys)
    if not len(y):
        raise LidarError("fit-raydrop: the simulated images have no hits to learn from")
    w = np.zeros(x.shape[1])
    reg = l2 * len(y) * np.eye(len(w))
    reg[0, 0] = 0.0  # the intercept is not shrunk
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + reg @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + reg + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return LearnedRayDrop(range_max_m, w)


def load_pair(sim_file: Path, real_file: Path) -> RangeImagePair:
    """A pair from two .npz files: sim with range_m, cos_incidence, reflectivity; real: range_m."""
    try:
        with np.load(sim_file) as sim, np.load(real_file) as real:
            return RangeImagePair(
                sim["range_m"].astype(np.float64),
                sim["cos_incidence"].astype(np.float64),
                sim["reflectivity"].astype(np.float64),
                real["range_m"].astype(np.float64),
            )
    except (OSError, KeyError, ValueError) as err:
        raise LidarError(
            f"fit-raydrop: cannot read the pair {sim_file}, {real_file}: {err}"
        ) from err
