"""The tracker chains motions into poses, handles failures and restarts; the Open3D backend
recovers a known motion from exactly rendered RGB-D frames; camera folders and TUM output."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from grade_common.tum import DEPTH_SCALE, CameraInfo, depth_to_png_u16
from grade_eval.io.tum import read_tum
from grade_slam.backends import create_backend
from grade_slam.camera_folder import read_camera_folder
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamInputError, SlamOutputExistsError
from grade_slam.frames import RgbdFrame
from grade_slam.interfaces import MotionEstimate
from grade_slam.tracker import RgbdTracker
from grade_slam.trajectory_file import write_trajectory

K = np.array([[60.0, 0.0, 40.0], [0.0, 60.0, 30.0], [0.0, 0.0, 1.0]])
WIDTH, HEIGHT = 80, 60


def _frame(stamp_ns: int, depth: np.ndarray | None = None) -> RgbdFrame:
    rgb = np.full((HEIGHT, WIDTH, 3), 128, dtype=np.uint8)
    return RgbdFrame(
        stamp_ns, rgb, np.ones((HEIGHT, WIDTH), np.float32) if depth is None else depth, K
    )


def _step(x_m: float) -> np.ndarray:
    motion = np.eye(4)
    motion[0, 3] = x_m
    return motion


class ScriptedBackend:
    """Answers each pair with the next scripted estimate (None: the backend failed)."""

    def __init__(self, answers: list[MotionEstimate | None]) -> None:
        self.answers = answers
        self.pairs: list[tuple[int, int]] = []
        self.guesses: list[np.ndarray] = []

    def estimate(
        self, reference: RgbdFrame, current: RgbdFrame, initial: np.ndarray
    ) -> MotionEstimate | None:
        self.pairs.append((reference.stamp_ns, current.stamp_ns))
        self.guesses.append(initial)
        return self.answers.pop(0)


def test_motions_chain_into_poses_and_failures_keep_the_reference() -> None:
    good = MotionEstimate(_step(0.1), 0.9)
    backend = ScriptedBackend([good, None, MotionEstimate(_step(0.5), 0.9), good])
    tracker = RgbdTracker(backend, SlamConfig(max_step_m=0.3))
    poses = [tracker.process(_frame(k)) for k in range(5)]
    assert poses[0] == pytest.approx(np.eye(4))
    assert poses[1][0, 3] == pytest.approx(0.1)
    assert poses[2] is None  # the backend failed
    assert poses[3] is None  # 0.5 m in one frame: more than max_step_m
    assert poses[4][0, 3] == pytest.approx(0.2)
    # after failures the next frame is matched against the last tracked one (frame 1)
    assert backend.pairs == [(0, 1), (1, 2), (1, 3), (1, 4)]
    assert tracker.trajectory.stamps_ns == [0, 1, 4]
    # the initial guess is the last motion at constant velocity over the gap to the reference
    assert [g[0, 3] for g in backend.guesses] == pytest.approx([0.0, 0.1, 0.2, 0.3])
    assert (tracker.stats.frames, tracker.stats.tracked, tracker.stats.failures) == (5, 3, 2)


def test_low_fitness_is_a_failure_and_too_many_in_a_row_restart_at_the_last_pose() -> None:
    weak = MotionEstimate(_step(0.01), 0.05)
    backend = ScriptedBackend([MotionEstimate(_step(0.1), 0.9), weak, weak, weak])
    backend.answers.append(MotionEstimate(_step(0.1), 0.9))
    tracker = RgbdTracker(backend, SlamConfig(min_fitness=0.2, max_lost_frames=3))
    poses = [tracker.process(_frame(k)) for k in range(6)]
    assert [p is None for p in poses] == [False, False, True, True, True, False]
    assert tracker.stats.restarts == 1
    assert backend.pairs[-1] == (4, 5)  # restarted at frame 4, the last failure
    assert poses[5][0, 3] == pytest.approx(0.2)  # the last pose (0.1) plus the new motion


def test_repeated_or_late_frames_are_not_tracked() -> None:
    backend = ScriptedBackend([MotionEstimate(_step(0.1), 0.9)])
    tracker = RgbdTracker(backend, SlamConfig())
    tracker.process(_frame(10))
    tracker.process(_frame(20))
    assert tracker.process(_frame(20)) is None
    assert tracker.process(_frame(15)) is None
    assert backend.pairs == [(10, 20)]


@pytest.mark.parametrize(
    ("rgb_shape", "depth_shape", "k", "match"),
    [
        ((60, 80), (60, 80), K, r"rgb must be \(H, W, 3\) uint8"),
        ((60, 80, 3), (30, 40), K, r"depth \(30, 40\) and rgb \(60, 80\) differ"),
        ((60, 80, 3), (60, 80), np.zeros((3, 3)), "positive focal lengths"),
    ],
)
def test_bad_frames_are_refused(
    rgb_shape: tuple[int, ...], depth_shape: tuple[int, ...], k: np.ndarray, match: str
) -> None:
    with pytest.raises(SlamInputError, match=match):
        RgbdFrame(0, np.zeros(rgb_shape, np.uint8), np.ones(depth_shape, np.float32), k)


def _box_depth(pose_world_camera: np.ndarray) -> np.ndarray:
    """Exact planar depth inside a 4 x 3 x 2.5 m box seen by an optical-frame camera."""
    v, u = np.mgrid[0:HEIGHT, 0:WIDTH]
    rays = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones(u.shape)], -1)
    rays_world = rays @ pose_world_camera[:3, :3].T
    origin = pose_world_camera[:3, 3]
    best = np.full(u.shape, np.inf)
    for axis, (lo, hi) in enumerate(((-2.0, 2.0), (-1.5, 1.5), (0.0, 2.5))):
        for plane in (lo, hi):
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (plane - origin[axis]) / rays_world[..., axis]
            best = np.minimum(best, np.where(t > 1e-9, t, np.inf))
    return best.astype(np.float32)


def _camera(x: float, yaw_rad: float) -> np.ndarray:
    # optical (z forward, x right, y down) looking along world +x, then yawed; 1.2 m high,
    # looking into the corner so three planes constrain the motion
    body_optical = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    pose = np.eye(4)
    pose[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ body_optical
    pose[:3, 3] = (x, 0.3, 1.2)
    return pose


def test_open3d_recovers_a_known_motion_from_exact_depth() -> None:
    pytest.importorskip("open3d")
    config = SlamConfig(method="point_to_plane", depth_max_m=8.0)  # type: ignore[arg-type]
    tracker = create_backend(config)
    first, second = _camera(-1.0, 0.4), _camera(-0.95, 0.43)
    tracker.process(_frame(0, _box_depth(first)))
    pose = tracker.process(_frame(1, _box_depth(second)))
    assert pose is not None
    truth = np.linalg.inv(first) @ second
    assert np.linalg.norm(pose[:3, 3] - truth[:3, 3]) < 0.005
    angle = math.acos(np.clip((np.trace(pose[:3, :3].T @ truth[:3, :3]) - 1) / 2, -1, 1))
    assert math.degrees(angle) < 0.3


def test_camera_folder_frames_and_tum_output(tmp_path: Path) -> None:
    folder = tmp_path / "camera"
    (folder / "rgb").mkdir(parents=True)
    (folder / "depth").mkdir()
    info = CameraInfo(WIDTH, HEIGHT, K)
    (folder / "camera_info.yaml").write_text(info.to_yaml())
    rgb_lines, depth_lines = ["# timestamp filename"], ["# timestamp filename"]
    for stamp in ("1.000000", "1.033333", "1.066667"):
        rgb = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
        rgb[..., 0] = 200  # red, written as BGR by OpenCV
        cv2.imwrite(str(folder / "rgb" / f"{stamp}.png"), rgb[..., ::-1])
        rgb_lines.append(f"{stamp} rgb/{stamp}.png")
        if stamp != "1.033333":  # one colour image without depth: not a frame
            depth = np.full((HEIGHT, WIDTH), 2.5, np.float32)
            cv2.imwrite(str(folder / "depth" / f"{stamp}.png"), depth_to_png_u16(depth))
            depth_lines.append(f"{stamp} depth/{stamp}.png")
    (folder / "rgb.txt").write_text("\n".join(rgb_lines) + "\n")
    (folder / "depth.txt").write_text("\n".join(depth_lines) + "\n")
    frames = list(read_camera_folder(folder))
    assert [f.stamp_ns for f in frames] == [1_000_000_000, 1_066_667_000]
    assert frames[0].rgb[0, 0].tolist() == [200, 0, 0]
    assert frames[0].depth_m[0, 0] == pytest.approx(round(2.5 * DEPTH_SCALE) / DEPTH_SCALE)
    backend = ScriptedBackend([MotionEstimate(_step(0.1), 0.9)])
    tracker = RgbdTracker(backend, SlamConfig())
    for frame in frames:
        tracker.process(frame)
    out = write_trajectory(tmp_path / "est.txt", tracker.trajectory, "test estimate")
    table = read_tum(out)
    assert table.stamps_s.tolist() == pytest.approx([1.0, 1.066667])
    assert table.positions_xyz[1].tolist() == pytest.approx([0.1, 0.0, 0.0])
    with pytest.raises(SlamOutputExistsError, match="exists already"):
        write_trajectory(out, tracker.trajectory, "again")


def test_folder_without_matching_depth_is_refused(tmp_path: Path) -> None:
    (tmp_path / "camera_info.yaml").write_text(CameraInfo(WIDTH, HEIGHT, K).to_yaml())
    (tmp_path / "rgb.txt").write_text("1.0 rgb/1.0.png\n")
    (tmp_path / "depth.txt").write_text("2.0 depth/2.0.png\n")
    with pytest.raises(SlamInputError, match="no stamp has both an RGB and a depth image"):
        list(read_camera_folder(tmp_path))


def test_mask_dynamic_removes_depth_and_texture_of_moving_classes() -> None:
    from grade_sim.engine.semantic import BASE_CLASSES
    from grade_slam.errors import SlamInputError
    from grade_slam.frames import dynamic_class_ids, dynamic_mask_of, mask_dynamic

    ids = dynamic_class_ids(BASE_CLASSES)
    assert {BASE_CLASSES[i] for i in ids} == {"person", *(c for c in BASE_CLASSES if "flying" in c)}
    classes = np.full((20, 30), BASE_CLASSES.index("wall"), np.uint16)
    classes[5:8, 10:12] = BASE_CLASSES.index("person")
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 255, (20, 30, 3), dtype=np.uint8)
    frame = RgbdFrame(
        1, rgb, np.ones((20, 30), np.float32), np.eye(3), dynamic_mask_of(classes, ids)
    )
    masked = mask_dynamic(frame, dilate_px=1)
    assert int(masked.dynamic_mask.sum()) == 5 * 4  # 3 x 2 grown by one pixel each side
    assert np.all(masked.depth_m[4:9, 9:13] == 0.0)
    assert masked.depth_m[0, 0] == 1.0
    assert np.all(masked.rgb[4:9, 9:13] == 128)
    assert np.array_equal(masked.rgb[0, 0], rgb[0, 0])
    with pytest.raises(SlamInputError, match="add `semantic` to the camera's streams"):
        mask_dynamic(RgbdFrame(1, rgb, np.ones((20, 30), np.float32), np.eye(3)), 1)
