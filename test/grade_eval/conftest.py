"""Shared synthetic trajectories for the grade_eval tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from grade_eval.core.trajectory import PoseTrajectory


def make_trajectory(
    num_poses: int = 600, rate_hz: float = 30.0, start_s: float = 0.0, name: str = "gt"
) -> PoseTrajectory:
    """A smooth 3D curve with changing orientation (never collinear)."""
    t = start_s + np.arange(num_poses) / rate_hz
    pos = np.stack(
        [2 * np.sin(0.3 * t), 1.5 * np.cos(0.2 * t), 0.5 + 0.2 * np.sin(0.7 * t)], axis=1
    )
    rot = Rotation.from_euler(
        "zyx", np.stack([0.4 * t, 0.2 * np.sin(0.5 * t), 0.1 * np.cos(0.3 * t)], axis=1)
    )
    return PoseTrajectory(t, pos, rot.as_quat()[:, [3, 0, 1, 2]], name)


def perturbed(
    gt: PoseTrajectory, rng: np.random.Generator, sigma_m: float = 0.02, sigma_rad: float = 0.01
) -> PoseTrajectory:
    """gt with Gaussian position and rotation noise."""
    noise = Rotation.from_rotvec(rng.normal(0, sigma_rad, (gt.num_poses, 3)))
    rot = Rotation.from_quat(gt.orientations_quat_wxyz[:, [1, 2, 3, 0]]) * noise
    return PoseTrajectory(
        gt.stamps_s,
        gt.positions_xyz + rng.normal(0, sigma_m, (gt.num_poses, 3)),
        rot.as_quat()[:, [3, 0, 1, 2]],
        "est",
    )


@pytest.fixture
def gt_traj() -> PoseTrajectory:
    return make_trajectory()


# --- a small synthetic run directory (docs/conventions.md) -----------------------------------

WIDTH, HEIGHT, FOCAL = 40, 30, 25.0
K = np.array([[FOCAL, 0, WIDTH / 2], [0, FOCAL, HEIGHT / 2], [0, 0, 1.0]])
# Optical frame (z forward, x right, y down) looking along world +x from a 1 m high camera.
R_WORLD_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
WALL_X = 3.0
PERSON_ID = 7
FLOOR_RGB = (200, 10, 10)
WALL_RGB = (10, 200, 10)
PERSON_RGB = (10, 10, 200)


def render_frame(cam_y: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact z-depth, RGB and instance ids of floor z=0 + wall x=3 + a 'person' patch."""
    v, u = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64)
    d_cam = np.stack([(u - K[0, 2]) / FOCAL, (v - K[1, 2]) / FOCAL, np.ones_like(u)], axis=-1)
    d_world = d_cam @ R_WORLD_OPTICAL.T
    t_wall = WALL_X / d_world[..., 0]
    with np.errstate(divide="ignore"):
        t_floor = np.where(d_world[..., 2] < 0, -1.0 / d_world[..., 2], np.inf)
    depth = np.minimum(t_wall, t_floor)
    rgb = np.where((t_floor < t_wall)[..., None], FLOOR_RGB, WALL_RGB).astype(np.uint8)
    inst = np.where(t_floor < t_wall, 1, 2).astype(np.uint16)
    person = (u >= 17) & (u < 23) & (v >= 8) & (v < 20)
    depth[person] = 1.5
    rgb[person] = PERSON_RGB
    inst[person] = PERSON_ID
    del cam_y
    return depth, rgb, inst


def write_run(root: Path, num_frames: int = 5) -> Path:
    """A run directory with one robot 'r1' and one camera 'cam' moving sideways along y."""
    import cv2
    import yaml

    from grade_eval.io.tum import write_tum

    run = root / "run"
    cam_dir = run / "gt" / "r1" / "cam"
    for sub in ("rgb", "depth", "instance"):
        (cam_dir / sub).mkdir(parents=True)
    (run / "gt" / "instances.yaml").write_text(
        yaml.safe_dump(
            {
                1: {"name": "floor", "class": "floor"},
                2: {"name": "wall", "class": "wall"},
                PERSON_ID: {"name": "walker_0", "class": "person"},
            }
        )
    )
    (cam_dir / "camera_info.yaml").write_text(
        yaml.safe_dump(
            {
                "width": WIDTH,
                "height": HEIGHT,
                "K": K.ravel().tolist(),
                "distortion_model": "plumb_bob",
            }
        )
    )
    stamps = 1.0 + np.arange(num_frames) / 30.0
    ys = 0.1 * np.arange(num_frames)
    lists: dict[str, list[str]] = {"rgb": [], "depth": [], "instance": []}
    for stamp, y in zip(stamps, ys, strict=True):
        depth, rgb, inst = render_frame(y)
        name = f"{stamp:.6f}.png"
        cv2.imwrite(str(cam_dir / "depth" / name), np.round(depth * 5000).astype(np.uint16))
        cv2.imwrite(str(cam_dir / "rgb" / name), rgb[:, :, ::-1])
        cv2.imwrite(str(cam_dir / "instance" / name), inst)
        for key in lists:
            lists[key].append(f"{stamp:.6f} {key}/{name}")
    for key, lines in lists.items():
        (cam_dir / f"{key}.txt").write_text("# timestamp filename\n" + "\n".join(lines) + "\n")
    quat = Rotation.from_matrix(np.repeat(R_WORLD_OPTICAL[None], num_frames, axis=0)).as_quat()
    positions = np.stack([np.zeros(num_frames), ys, np.ones(num_frames)], axis=1)
    write_tum(
        cam_dir / "groundtruth.txt", PoseTrajectory(stamps, positions, quat[:, [3, 0, 1, 2]], "cam")
    )
    body = np.stack([np.zeros(num_frames), ys, np.zeros(num_frames)], axis=1)
    write_tum(
        run / "gt" / "r1" / "trajectory.txt",
        PoseTrajectory(stamps, body, np.tile([1.0, 0, 0, 0], (num_frames, 1)), "r1"),
    )
    return run
