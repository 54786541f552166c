"""Beam divergence against hand-computed footprints: mixed pixels at a small step, one surface
(never between) at a deep edge, partial-footprint intensity, a thin pole only a cone can see."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.lidar import LidarKind, LidarPreset, ReturnMode
from grade_sim.engine import tessellate
from grade_sim.engine.raycast import InstanceMesh
from grade_sim.sensors.lidar.beams import firing
from grade_sim.sensors.lidar.divergence import Footprint, expand
from grade_sim.sensors.lidar.scanner import RawScan, ScanCaster

pytest.importorskip("embreex")

REFL = 0.5
# Ring sub-rays at divergence / (2 sqrt 2) off the axis; 7 sub-rays: centre + 6 at 60 deg steps.
DIVERGENCE_RAD = 0.010


def table() -> LidarPreset:
    # One beam per degree, horizontal: the beam of column 180 points along +x.
    return LidarPreset(LidarKind.ROTATING, (0.0,), 360, 360.0, 10.0, 0.05, 100.0)


def at_origin(times_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
    return np.zeros((len(times_ns), 3)), np.tile(np.eye(3), (len(times_ns), 1, 1))


def no_parts(t_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
    return np.zeros((len(t_ns), 0, 3)), np.zeros((len(t_ns), 0, 3, 3))


def wall(instance: int, x: float, y_from: float, y_to: float) -> InstanceMesh:
    """A wall facing the sensor at distance x, spanning y_from..y_to, 2 m tall."""
    half = np.array([0.001, (y_to - y_from) / 2, 1.0])
    tris = tessellate.box(half) + np.array([x + 0.001, (y_to + y_from) / 2, 0.0])
    return InstanceMesh(instance, tris, np.full(len(tris), REFL))


def forward_beam(
    meshes: list[InstanceMesh], mode: ReturnMode = ReturnMode.STRONGEST, divergent: bool = True
) -> tuple[float, int, float]:
    fp = Footprint(DIVERGENCE_RAD, 7, 0.3, mode) if divergent else None
    caster = ScanCaster(table(), meshes, [], slices=1, rolling_shutter=False, footprint=fp)
    scan: RawScan = caster.cast(0, at_origin, no_parts)  # type: ignore[arg-type]
    assert len(scan.hits.range_m) == 360  # one return per beam, not per sub-ray
    i = int(np.argmax(scan.firing.directions[:, 0]))
    h = scan.hits
    return float(h.range_m[i]), int(h.instance_id[i]), float(h.reflectivity[i] * h.cos_incidence[i])


def test_sub_rays_form_a_cone_of_the_configured_angle() -> None:
    fp = Footprint(DIVERGENCE_RAD, 7, 0.3, ReturnMode.STRONGEST)
    b = expand(firing(table(), 0), fp)
    assert len(b.fire.directions) == 7 * 360
    axis = firing(table(), 0).directions[b.beam_of]
    angle = np.arccos(np.clip(np.sum(axis * b.fire.directions, axis=1), -1, 1))
    assert np.isclose(angle.min(), 0.0, atol=1e-7)
    assert np.allclose(np.sort(angle)[360:], DIVERGENCE_RAD / (2 * np.sqrt(2)), rtol=1e-6)
    # Every column keeps the same elevations in ascending order (the cull's beam table).
    el = b.fire.directions[:, 2].reshape(360, 7)
    assert np.all(np.diff(el, axis=1) >= 0)
    assert np.allclose(el, el[0])


def test_a_small_step_gives_a_mixed_pixel_between_the_surfaces() -> None:
    # Near wall (5.0 m) for y < 1 mm, far wall (5.2 m) behind everything: within echo_merge.
    scene = [wall(1, 5.0, -3.0, 0.001), wall(2, 5.2, -3.0, 3.0)]
    thin, _, _ = forward_beam(scene, divergent=False)
    assert abs(thin - 5.0) < 1e-4
    # Centre and 3 ring rays on the near wall, 3 on the far one: the mean of equal energies.
    mixed, _, intensity = forward_beam(scene)
    assert abs(mixed - (4 * 5.0 + 3 * 5.2) / 7) < 2e-3
    assert abs(intensity - REFL) < 1e-3  # the whole footprint returned


@pytest.mark.parametrize(
    ("mode", "range_m", "instance", "share"),
    [
        (ReturnMode.STRONGEST, 5.0, 1, 4 / 7),
        (ReturnMode.FIRST, 5.0, 1, 4 / 7),
        (ReturnMode.LAST, 8.0, 2, 3 / 7),
    ],
)
def test_a_deep_edge_returns_one_surface_with_its_share_of_the_footprint(
    mode: ReturnMode, range_m: float, instance: int, share: float
) -> None:
    scene = [wall(1, 5.0, -3.0, 0.001), wall(2, 8.0, -3.0, 3.0)]
    got, inst, intensity = forward_beam(scene, mode)
    assert abs(got - range_m) < 1e-3  # on a surface, not between them
    assert inst == instance
    assert abs(intensity - REFL * share) < 1e-3


def test_a_thin_pole_between_beam_axes_is_seen_only_by_a_divergent_beam() -> None:
    # 4 mm pole 17.7 mm off the axis at 10 m: two ring sub-rays (60 deg up and down) meet it.
    off = 10.0 * np.tan(DIVERGENCE_RAD / (2 * np.sqrt(2))) * 0.5
    scene = [wall(1, 10.0, off - 0.002, off + 0.002), wall(2, 20.0, -5.0, 5.0)]
    thin, inst, _ = forward_beam(scene, ReturnMode.FIRST, divergent=False)
    assert inst == 2
    assert abs(thin - 20.0) < 1e-3
    first, inst, intensity = forward_beam(scene, ReturnMode.FIRST)
    assert inst == 1
    assert abs(first - 10.0) < 1e-3
    assert abs(intensity - REFL * 2 / 7) < 1e-3
    strongest, inst, _ = forward_beam(scene, ReturnMode.STRONGEST)
    assert inst == 2
    assert abs(strongest - 20.0) < 1e-2
