"""TUM encodings, 2D boxes from masks, and experiment-record errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from grade_common.tum import DEPTH_SCALE, depth_to_png_u16, tum_pose_line, tum_stamp
from grade_sim.config.scenario import Scenario
from grade_sim.io.record import RecordError, load_record
from grade_sim.sensors.boxes import Box3D, loose_box_2d, tight_boxes_2d
from grade_sim.sim.orchestrator import stamp_ns_of
from grade_sim.sim.run import run_scenario


@pytest.mark.parametrize(
    ("stamp_ns", "text"),
    [
        (0, "0.000000"),
        (4_166_667, "0.004167"),
        (466_666_667, "0.466667"),
        (1_000_000_000, "1.000000"),
        (12_345_678_901, "12.345679"),
        (86_399_999_999_000, "86399.999999"),
    ],
)
def test_tum_stamp_is_percent_6f_of_seconds(stamp_ns: int, text: str) -> None:
    assert tum_stamp(stamp_ns) == text == f"{stamp_ns / 1e9:.6f}"


def test_tum_stamps_of_physics_steps_are_unique_and_increasing() -> None:
    texts = [tum_stamp(stamp_ns_of(k, 240.0)) for k in range(0, 240 * 60)]
    assert len(set(texts)) == len(texts)
    assert [float(t) for t in texts] == sorted(float(t) for t in texts)


def test_tum_pose_line_orders_xyz_then_xyzw() -> None:
    line = tum_pose_line(1_500_000_000, np.array([1.0, -2.0, 3.25]), np.array([0.5, 0.1, 0.2, 0.3]))
    values = line.split()
    assert line.endswith("\n")
    assert values[0] == "1.500000"
    np.testing.assert_allclose([float(v) for v in values[1:]], [1, -2, 3.25, 0.1, 0.2, 0.3, 0.5])


def test_depth_png_encoding() -> None:
    depth = np.array([[0.0, 1.0, 2.00009, 13.107], [13.2, -1.0, np.nan, np.inf]], np.float32)
    png = depth_to_png_u16(depth)
    assert png.dtype == np.uint16
    np.testing.assert_array_equal(png, [[0, 5000, 10000, 65535], [0, 0, 0, 0]])
    rng = np.random.default_rng(0)
    d = rng.uniform(0.05, 13.0, (50, 50)).astype(np.float32)
    back = depth_to_png_u16(d).astype(np.float64) / DEPTH_SCALE
    assert np.max(np.abs(back - d)) <= 0.5 / DEPTH_SCALE + 1e-7


def test_tight_boxes_2d() -> None:
    mask = np.zeros((10, 12), dtype=np.uint16)
    mask[2:5, 3:7] = 7
    mask[8, 11] = 9
    mask[0, 0] = 3  # not an actor
    assert tight_boxes_2d(mask, {7, 9, 4}) == {7: (3, 2, 6, 4), 9: (11, 8, 11, 8)}


def test_loose_box_2d_projects_and_clips() -> None:
    k = np.array([[100.0, 0, 79.5], [0, 100.0, 59.5], [0, 0, 1]])
    r_wo = np.eye(3)  # optical frame = world
    box = Box3D(1, np.array([0.0, 0.0, 5.0]), np.array([1.0, 1.0, 1.0]), np.eye(3))
    x0, y0, x1, y1 = loose_box_2d(box, k, np.zeros(3), r_wo, 160, 120) or (0, 0, 0, 0)
    # Nearest face at z = 4.5: +-0.5 m -> +-11.1 px around the centre.
    assert (x0, x1) == (int(np.floor(79.5 - 100 / 9)), int(np.ceil(79.5 + 100 / 9)))
    assert (y0, y1) == (int(np.floor(59.5 - 100 / 9)), int(np.ceil(59.5 + 100 / 9)))
    behind = Box3D(2, np.array([0.0, 0.0, -5.0]), np.ones(3), np.eye(3))
    assert loose_box_2d(behind, k, np.zeros(3), r_wo, 160, 120) is None
    aside = Box3D(3, np.array([50.0, 0.0, 5.0]), np.ones(3), np.eye(3))
    assert loose_box_2d(aside, k, np.zeros(3), r_wo, 160, 120) is None
    partly = Box3D(4, np.array([0.8, 0.0, 2.0]), np.ones(3), np.eye(3))
    assert loose_box_2d(partly, k, np.zeros(3), r_wo, 160, 120)[2] == 159  # type: ignore[index]


@pytest.fixture(scope="module")
def record_file(
    tmp_path_factory: pytest.TempPathFactory, small_scenario: Callable[..., Scenario]
) -> Path:
    scenario = small_scenario(
        duration_s=0.1, people={"count": 1}, record={"bag": False, "ground_truth": False}
    )
    return run_scenario(scenario, tmp_path_factory.mktemp("record") / "run").path / "record.npz"


def test_record_round_trip(record_file: Path) -> None:
    record = load_record(record_file)
    assert record.status == "complete"
    assert record.n_steps == 49
    assert not (record_file.parent / "bag").exists()
    assert not (record_file.parent / "gt").exists()


def rewrite(src: Path, dst: Path, drop: str | None = None, **replace: object) -> Path:
    with np.load(src) as data:
        arrays = {k: data[k] for k in data.files if k != drop}
    arrays.update({k: np.array(v) for k, v in replace.items()})
    with open(dst, "wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]
    return dst


def test_record_errors(record_file: Path, tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"experiment record '.*nope\.npz' does not exist"):
        load_record(tmp_path / "nope.npz")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(record_file.read_bytes()[:200])
    with pytest.raises(RecordError, match=r"truncated\.npz' is unreadable \(truncated or corrupt"):
        load_record(truncated)
    with pytest.raises(RecordError, match=r"record version 99 is not supported \(expected 1\)"):
        load_record(rewrite(record_file, tmp_path / "v99.npz", version=99))
    with pytest.raises(RecordError, match=r"lacks 'robot/uav1/q'; it is not a complete grade"):
        load_record(rewrite(record_file, tmp_path / "noq.npz", drop="robot/uav1/q"))
