"""Geometry of scans against analytic values: box room, sphere, plane at a known incidence,
rolling-shutter skew, a moving part crossing the scan."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.lidar import LidarKind, LidarPreset
from grade_sim.engine import tessellate
from grade_sim.engine.raycast import EmbreeDevice, Hits, InstanceMesh, InstanceScene
from grade_sim.sensors.lidar.beams import sweep_ns
from grade_sim.sensors.lidar.scanner import MovingPart, ScanCaster

pytest.importorskip("embreex")


def table(
    elevations: tuple[float, ...] = (-10.0, 0.0, 10.0), columns: int = 360, fov: float = 360.0
) -> LidarPreset:
    return LidarPreset(LidarKind.ROTATING, elevations, columns, fov, 10.0, 0.05, 100.0)


def still(position: FloatArray, yaw_rate_rps: float = 0.0) -> object:
    def pose_at(times_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        yaw = yaw_rate_rps * times_ns * 1e-9
        c, s = np.cos(yaw), np.sin(yaw)
        rot = np.zeros((len(times_ns), 3, 3))
        rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1] = c, -s, s, c
        rot[:, 2, 2] = 1.0
        return np.tile(position, (len(times_ns), 1)), rot

    return pose_at


def no_parts(t_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
    return np.zeros((len(t_ns), 0, 3)), np.zeros((len(t_ns), 0, 3, 3))


def mesh(instance: int, tris: FloatArray) -> InstanceMesh:
    return InstanceMesh(instance, tris, np.full(len(tris), 0.5))


def box_room(half: FloatArray) -> FloatArray:
    # The inside of a closed box: the ray from the centre hits the wall its direction points to.
    return tessellate.box(half)


def test_box_room_ranges_match_the_analytic_distance_to_the_walls() -> None:
    half = np.array([4.0, 3.0, 2.5])
    centre = np.array([0.3, -0.2, 0.1])
    caster = ScanCaster(table(), [mesh(7, box_room(half))], [], slices=1, rolling_shutter=False)
    scan = caster.cast(0, still(centre), no_parts)  # type: ignore[arg-type]
    d = scan.firing.directions
    # Distance along d from the centre to each pair of parallel walls; the nearest one counts.
    with np.errstate(divide="ignore"):
        t = np.where(d > 0, (half - centre) / d, np.where(d < 0, (-half - centre) / d, np.inf))
    expected = t.min(axis=1)
    assert np.all(scan.hits.instance_id == 7)
    assert np.abs(scan.hits.range_m - expected).max() < 1e-3


def test_sphere_at_a_known_distance_within_a_millimetre() -> None:
    centre, radius = np.array([5.0, 0.0, 0.0]), 0.5
    sphere = tessellate.sphere(radius, 256) + centre
    caster = ScanCaster(
        table(elevations=tuple(np.linspace(-5, 5, 11)), columns=3600),
        [mesh(3, sphere)],
        [],
        slices=1,
        rolling_shutter=False,
    )
    scan = caster.cast(0, still(np.zeros(3)), no_parts)  # type: ignore[arg-type]
    d = scan.firing.directions
    hit = np.isfinite(scan.hits.range_m)
    assert hit.sum() > 50
    # Ray-sphere: t = b - sqrt(b^2 - |c|^2 + r^2), b = d . c
    b = d[hit] @ centre
    analytic = b - np.sqrt(b**2 - centre @ centre + radius**2)
    assert np.abs(scan.hits.range_m[hit] - analytic).max() < 1e-3
    # Rays that miss the analytic sphere miss the mesh too (up to the chord error at the rim).
    b_all = d @ centre
    clearly_outside = b_all**2 - centre @ centre + radius**2 < -0.01
    assert not np.any(hit & clearly_outside)


@pytest.mark.parametrize("incidence_deg", [0.0, 30.0, 60.0])
def test_plane_at_a_known_incidence(incidence_deg: float) -> None:
    # A plane through (3, 0, 0) whose normal is tilted by the incidence about z.
    a = np.deg2rad(incidence_deg)
    normal = np.array([-np.cos(a), -np.sin(a), 0.0])
    rot = np.array([[0, -np.sin(a), np.cos(a)], [0, np.cos(a), np.sin(a)], [-1.0, 0, 0]])
    plane = tessellate.transform(tessellate.plane(50.0, 50.0), rot, np.array([3.0, 0, 0]))
    caster = ScanCaster(table(columns=720), [mesh(1, plane)], [], slices=1, rolling_shutter=False)
    scan = caster.cast(0, still(np.zeros(3)), no_parts)  # type: ignore[arg-type]
    d = scan.firing.directions
    ahead = (np.abs(np.arctan2(d[:, 1], d[:, 0])) < 1e-9) & (np.abs(d[:, 2]) < 1e-9)
    assert ahead.sum() == 1
    expected = 3.0 * np.cos(a) / np.cos(a)  # the x axis crosses the plane at x = 3
    assert abs(scan.hits.range_m[ahead][0] - expected) < 1e-3
    assert abs(scan.hits.cos_incidence[ahead][0] - np.cos(a)) < 1e-4
    hit = np.isfinite(scan.hits.range_m)
    analytic = (3.0 * -normal[0]) / (d[hit] @ -normal)
    assert np.abs(scan.hits.range_m[hit] - analytic).max() < 1e-3


def pole_scan(rolling: bool, yaw_rate: float) -> tuple[FloatArray, FloatArray]:
    """Azimuth (sensor frame) at which a thin pole straight ahead (world +x) is seen, and the
    column firing times."""
    pole = tessellate.cylinder(0.02, 3.0, 32) + np.array([5.0, 0.0, 0.0])
    room = box_room(np.array([20.0, 20.0, 5.0]))
    t = table(elevations=(0.0,), columns=3600)
    caster = ScanCaster(t, [mesh(1, room), mesh(2, pole)], [], slices=1, rolling_shutter=rolling)
    scan = caster.cast(0, still(np.zeros(3), yaw_rate), no_parts)  # type: ignore[arg-type]
    on_pole = scan.hits.instance_id == 2
    d = scan.firing.directions[on_pole]
    return np.arctan2(d[:, 1], d[:, 0]), scan.offset_ns[on_pole] * 1e-9


def test_rolling_shutter_skews_azimuth_by_the_yaw_turned_since_the_stamp() -> None:
    yaw_rate = 2.0  # rad/s; the pole is seen half a sweep (0.05 s) after the stamp
    azimuth, t_s = pole_scan(True, yaw_rate)
    assert len(azimuth)
    # The pole at world azimuth 0 shows at sensor azimuth -yaw(t) of the ray that hit it.
    np.testing.assert_allclose(azimuth, -yaw_rate * t_s, atol=0.02 / 5 + 2 * np.pi / 3600)
    assert abs(np.mean(azimuth) + yaw_rate * 0.05) < 0.01
    still_azimuth, still_t = pole_scan(False, yaw_rate)
    assert np.all(still_t == 0)
    assert abs(np.mean(still_azimuth)) < 0.005  # no skew: every ray from the stamp's pose


def test_a_moving_part_appears_where_it_is_at_the_ray_time() -> None:
    # A part crossing in front of the sensor at 60 m/s (6 m per sweep): each ray sees it where
    # it is at that ray's own firing time. Its motion is linear, as Embree's motion blur
    # interpolates between time steps, so 8 segments place it exactly.
    part = MovingPart(9, tessellate.box(np.array([0.2, 0.2, 1.0])), np.full(12, 0.8))
    t = table(elevations=(0.0,), columns=3600)

    def part_at(t_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        y = -3.0 + 60.0 * t_ns * 1e-9
        pos = np.stack([np.full(len(y), 4.0), y, np.zeros(len(y))], axis=1)[:, None]
        return pos, np.tile(np.eye(3), (len(y), 1, 1, 1))

    caster = ScanCaster(t, [], [part], slices=8, rolling_shutter=True)
    scan = caster.cast(0, still(np.zeros(3)), part_at)  # type: ignore[arg-type]
    seen = scan.hits.instance_id == 9
    assert seen.sum() > 3
    d = scan.firing.directions[seen]
    pts = d * scan.hits.range_m[seen][:, None]
    y_at_ray = -3.0 + 60.0 * scan.offset_ns[seen] * 1e-9
    assert np.abs(pts[:, 1] - y_at_ray).max() < 0.2 + 1e-3  # on the 0.4 m wide face
    assert np.abs(pts[:, 0] - 3.8).max() < 1e-3
    # The rays that hit are exactly those whose line crosses the face at their firing time.
    all_d = scan.firing.directions
    y_face = all_d[:, 1] * 3.8 / np.maximum(all_d[:, 0], 1e-9)
    y_part = -3.0 + 60.0 * scan.offset_ns * 1e-9
    clearly_in = (all_d[:, 0] > 0) & (np.abs(y_face - y_part) < 0.2 - 2e-3)
    clearly_out = np.abs(y_face - y_part) > 0.2 + 2e-3
    assert np.all(seen[clearly_in])
    assert not np.any(seen[clearly_out & (all_d[:, 0] > 0)])
    assert sweep_ns(t) == 100_000_000


def test_moving_parts_match_a_cast_with_every_part_posed_at_each_ray_time() -> None:
    # A turning, tilting, moving sensor in a room with parts spinning and flying all around
    # it. Reference (embreex, independent of the motion-blur path): for every firing time, the
    # parts posed exactly at that time in one flat scene with the room.
    t = table(elevations=tuple(np.linspace(-20.0, 15.0, 16)), columns=360)
    rng = np.random.default_rng(4)
    shapes = [tessellate.box(np.array([0.3, 0.2, 0.6])), tessellate.sphere(0.4, 12) * [1, 1, 2]]
    parts = [MovingPart(10 + i, shapes[i % 2], np.full(len(shapes[i % 2]), 0.7)) for i in range(8)]
    start = rng.uniform([-6, -6, -1.5], [6, 6, 1.5], size=(8, 3))
    start[np.linalg.norm(start[:, :2], axis=1) < 1.5, :2] += 2.0  # not inside the sensor
    spin = rng.uniform(-20, 20, size=8)

    def part_at(t_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        s = t_ns[:, None] * 1e-9
        pos = start[None] + np.stack([3 * s, -2 * s, 0 * s], axis=2)
        c, sn = np.cos(spin * s), np.sin(spin * s)
        rot = np.zeros((len(t_ns), 8, 3, 3))
        rot[..., 0, 0], rot[..., 0, 2], rot[..., 2, 0], rot[..., 2, 2] = c, sn, -sn, c
        rot[..., 1, 1] = 1.0
        return pos, rot

    def sensor_at(t_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        s = t_ns * 1e-9
        yaw, tilt = 8.0 * s, 0.3 + 2.0 * s
        cy, sy, ct, st = np.cos(yaw), np.sin(yaw), np.cos(tilt), np.sin(tilt)
        rz = np.zeros((len(s), 3, 3))
        rz[:, 0, 0], rz[:, 0, 1], rz[:, 1, 0], rz[:, 1, 1], rz[:, 2, 2] = cy, -sy, sy, cy, 1
        rx = np.zeros((len(s), 3, 3))
        rx[:, 0, 0], rx[:, 1, 1], rx[:, 1, 2], rx[:, 2, 1], rx[:, 2, 2] = 1, ct, -st, st, ct
        return np.stack([4 * s, 5 * s, 0 * s], axis=1), rz @ rx

    room = mesh(1, box_room(np.array([9.0, 9.0, 3.0])))
    # 128 segments: the spin turns 16 mrad per segment, where linear blending of the rotation
    # is within 0.01 mm of the true pose at these sizes.
    caster = ScanCaster(t, [room], parts, slices=128, rolling_shutter=True)
    scan = caster.cast(1000, sensor_at, part_at)  # type: ignore[arg-type]

    _, offset, origins, dirs = caster.rays(1000, sensor_at)  # type: ignore[arg-type]
    best = Hits.none(len(offset))
    device = EmbreeDevice()
    for time in np.unique(offset):
        rows = np.flatnonzero(offset == time)
        pos, rot = part_at(np.array([1000 + time]))
        posed = [
            InstanceMesh(p.instance_id, p.triangles @ rot[0, i].T + pos[0, i], p.reflectivity)
            for i, p in enumerate(parts)
        ]
        found = InstanceScene([room, *posed], device).cast(origins[rows], dirs[rows], 100.0)
        best.take_nearer(found, rows)
    on_parts = np.isin(best.instance_id, np.arange(10, 18))
    assert on_parts.sum() > 200
    same = scan.hits.instance_id == best.instance_id
    # Only rays grazing a part's silhouette may differ (float32 rounding of other transforms).
    assert (~same).sum() <= 0.002 * len(same)
    np.testing.assert_allclose(scan.hits.range_m[same], best.range_m[same], atol=1e-3)
    np.testing.assert_allclose(
        scan.hits.cos_incidence[same & on_parts], best.cos_incidence[same & on_parts], atol=1e-3
    )


def test_scanners_one_after_another_share_the_process_s_embree_device() -> None:
    # A second threads=1 Embree device in a process leaves a TBB worker spinning on a core
    # (embree_api.shared_device): every scanner, also after an earlier one closed, uses one.
    from grade_sim.sensors.lidar import embree_api

    half, centre = np.array([4.0, 3.0, 2.5]), np.array([0.3, -0.2, 0.1])
    ranges = []
    for _ in range(2):
        caster = ScanCaster(table(), [mesh(7, box_room(half))], [], slices=1, rolling_shutter=False)
        assert caster._device.handle == embree_api.shared_device()
        ranges.append(caster.cast(0, still(centre), no_parts).hits.range_m)  # type: ignore[arg-type]
        caster.close()
    np.testing.assert_array_equal(ranges[0], ranges[1])


@pytest.mark.parametrize("physics_hz", [None, 240.0])
def test_part_pose_times_are_the_times_the_next_cast_asks_for(physics_hz: float | None) -> None:
    # The lidar stream freezes the actors' poses at these times only, for a cast on another
    # thread: they must be the times the cast then asks for, scan after scan.
    part = MovingPart(9, tessellate.box(np.array([0.2, 0.2, 1.0])), np.full(12, 0.8))
    caster = ScanCaster(table(), [], [part], slices=8, rolling_shutter=True, physics_hz=physics_hz)
    asked: list[NDArray[np.int64]] = []

    def part_at(t_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        asked.append(np.array(t_ns))
        pos = np.tile([4.0, 0.0, 0.0], (len(t_ns), 1))[:, None]
        return pos, np.tile(np.eye(3), (len(t_ns), 1, 1, 1))

    assert caster.part_pose_times(0) is None  # the pattern is made at the first scan
    caster.cast(0, still(np.zeros(3)), part_at)  # type: ignore[arg-type]
    for stamp_ns in (100_000_000, 200_004_167, 300_000_000):
        predicted = caster.part_pose_times(stamp_ns)
        assert predicted is not None
        caster.cast(stamp_ns, still(np.zeros(3)), part_at)  # type: ignore[arg-type]
        np.testing.assert_array_equal(predicted, asked[-1])
