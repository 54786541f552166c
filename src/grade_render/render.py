"""`grade render`: re-render a recorded run with a path tracer into a new run directory.

RUN is only read. OUT gets the TUM layout of docs/conventions.md for the rendered cameras and
frames (rgb, depth and instance from the path tracer's own passes, groundtruth.txt and
camera_info.yaml as recorded), gt/instances.yaml and the robots' trajectory.txt, and a run.yaml
whose `render` key names the source run and the settings. Every image is written under a
temporary name and moved into place, so an interrupted render leaves only whole frames; running
the same command again renders only the frames that are missing.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import yaml

from grade_common.atomic import StagedOutput
from grade_common.output_guard import write_marker
from grade_common.rotations import quat_to_matrix
from grade_common.rundir import (
    RECORD_NPZ,
    SCENARIO_KEY,
    STATUS_KEY,
    RunLayout,
    RunStatus,
    read_run_yaml,
)
from grade_common.tum import (
    CAMERA_INFO_YAML,
    GROUNDTRUTH_TXT,
    IMAGE_KINDS,
    ImageKind,
    depth_to_png_u16,
    list_file,
    list_text,
    pose_header,
    pose_line,
    read_camera_info,
    read_poses,
)
from grade_render.errors import RenderError, RenderOutputExistsError
from grade_render.filament_env import probe_filament, vulkan_env
from grade_render.filament_job import FilamentJob, plan_filament, write_filament_job
from grade_render.job import FramePlan, headlight_entry, light_entries, write_job
from grade_render.settings import Engine, RenderSettings
from grade_render.worker_process import WORKER, blender_python, run_worker
from grade_render.world_state import GeomShape, SkinShape, WorldState, load_world
from grade_sim.io.record import load_record

LIGHTING_KEY = "lighting"  # written by grade_sim.sim.run (world/light_units.py)
RENDER_KEY = "render"
FILAMENT_WORKER = Path(__file__).with_name("filament_worker.py")
JOB_DIR = ".render-job"


@dataclass(frozen=True)
class CameraFrames:
    robot: str
    camera: str
    stamps: tuple[str, ...]  # selected frames, in order
    world_optical: dict[str, np.ndarray]  # stamp -> (4, 4)
    pose_wxyz: dict[str, tuple[np.ndarray, np.ndarray]]  # stamp -> recorded (position, quat)


@dataclass(frozen=True)
class RenderResult:
    path: Path
    rendered: int  # frames rendered by this call
    skipped: int  # frames already there (resumed)
    device: str  # "CPU" or the GPU kind Cycles used ("" when nothing was rendered)
    seconds_per_frame: tuple[float, ...]
    startup_s: float = 0.0  # from starting the worker to its first word (engine start-up)
    # CPU time of the worker's threads per frame (on a loaded machine steadier than wall time).
    cpu_seconds_per_frame: tuple[float, ...] = ()


def _pose_matrix(position: np.ndarray, quat_wxyz: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = quat_to_matrix(quat_wxyz)
    m[:3, 3] = position
    return m


def select_frames(source: RunLayout, settings: RenderSettings) -> list[CameraFrames]:
    """The cameras (all, or --cameras robot/camera) and their frames (--frames a:b:step).

    Raises:
        RenderError: a named camera is not in the run, or the run has no camera frames.
    """
    available = [(r, c) for r in source.robots() for c in source.cameras(r)]
    wanted = [tuple(name.split("/", 1)) for name in settings.cameras] or available
    missing = [f"{r}/{c}" for r, c in wanted if (r, c) not in available]
    if missing:
        have = ", ".join(f"{r}/{c}" for r, c in available) or "none"
        raise RenderError(f"{source.root}: no camera {missing}; the run has: {have}")
    out = []
    for robot, camera in wanted:
        poses = read_poses(source.camera_dir(robot, camera) / GROUNDTRUTH_TXT, error=RenderError)
        stamps = poses.stamps[settings.frame_slice()]
        recorded = {
            s: (p, q)
            for s, p, q in zip(poses.stamps, poses.positions_xyz, poses.quats_wxyz, strict=True)
        }
        by_stamp = {s: _pose_matrix(p, q) for s, (p, q) in recorded.items()}
        out.append(CameraFrames(robot, camera, tuple(stamps), by_stamp, recorded))
    if not any(cf.stamps for cf in out):
        raise RenderError(f"{source.root}: --frames {settings.frames!r} selects no frame")
    return out


def _frame_done(cam_dir: Path, stamp: str) -> bool:
    return all((cam_dir / kind / f"{stamp}.png").is_file() for kind in IMAGE_KINDS)


def _prepare_output(out: Path, source: Path, settings: RenderSettings) -> dict[str, Any]:
    """run.yaml's `render` key; an existing OUT must be a render of the same run and settings."""
    final, src = out.resolve(), source.resolve()
    if final == src or src in final.parents or final in src.parents:
        raise RenderError(f"--out {str(final)!r} overlaps the source run {str(src)!r}")
    info = {"source": str(src), "engine": settings.engine.value, **settings.pixel_settings()}
    layout = RunLayout(final)
    if final.exists():
        if not layout.run_yaml.is_file():
            raise RenderOutputExistsError(
                f"{str(final)!r} exists and is not a grade render; choose another --out"
            )
        old = read_run_yaml(layout.run_yaml, error=RenderError).get(RENDER_KEY)
        if not isinstance(old, dict) or {k: old.get(k) for k in info} != info:
            raise RenderOutputExistsError(
                f"{str(final)!r} holds a render of another run or with other settings "
                f"({old!r}); resume with the same settings or choose another --out"
            )
    return info


def _write_text(path: Path, text: str) -> None:
    # The render's own files, rewritten in place as frames are added: nothing to announce.
    with StagedOutput(path, overwrite=True, announce=False) as tmp:
        tmp.write_text(text)


def _write_run_yaml(
    out: RunLayout, source: RunLayout, status: RunStatus, info: dict[str, Any]
) -> None:
    src = read_run_yaml(source.run_yaml, error=RenderError)
    doc = {STATUS_KEY: status.value, SCENARIO_KEY: src.get(SCENARIO_KEY), RENDER_KEY: info}
    if LIGHTING_KEY in src:  # the exposure and the lights' physical units (both engines read)
        doc[LIGHTING_KEY] = src[LIGHTING_KEY]
    _write_text(out.run_yaml, yaml.safe_dump(doc, sort_keys=False))


def _copy_static(source: RunLayout, out: RunLayout, cams: list[CameraFrames]) -> None:
    """instances.yaml, trajectories and camera_info.yaml: geometry, the same for any renderer."""
    out.gt.mkdir(parents=True, exist_ok=True)
    if source.instances.is_file():
        _write_text(out.instances, source.instances.read_text())
    for robot in sorted({cf.robot for cf in cams}):
        if source.trajectory(robot).is_file():
            out.robot_dir(robot).mkdir(parents=True, exist_ok=True)
            _write_text(out.trajectory(robot), source.trajectory(robot).read_text())
    for cf in cams:
        cam_dir = out.camera_dir(cf.robot, cf.camera)
        for kind in IMAGE_KINDS:
            (cam_dir / kind).mkdir(parents=True, exist_ok=True)
        info = source.camera_dir(cf.robot, cf.camera) / CAMERA_INFO_YAML
        _write_text(cam_dir / CAMERA_INFO_YAML, info.read_text())


def _write_lists(out: RunLayout, cf: CameraFrames) -> None:
    """The list files and groundtruth.txt of every frame present (so a resumed render's too)."""
    cam_dir = out.camera_dir(cf.robot, cf.camera)
    # Recorded stamps only: staging files (hidden, `.<stamp>.partial-<pid>.png`) never count.
    done = sorted((s for s in cf.pose_wxyz if _frame_done(cam_dir, s)), key=float)
    for kind in IMAGE_KINDS:
        _write_text(cam_dir / list_file(kind), list_text(kind, done))
    lines = [pose_line(s, *cf.pose_wxyz[s]) for s in done]
    _write_text(cam_dir / GROUNDTRUTH_TXT, pose_header("optical frame in world") + "".join(lines))


def _camera_config(world: WorldState, robot: str, camera: str) -> tuple[float, float]:
    """near_m, far_m of a recorded camera (the simulator clips depth to them)."""
    for rc in world.record.scenario.robots:
        if rc.name == robot:
            for cam in rc.cameras:
                if cam.name == camera:
                    return cam.near_m, cam.far_m
    raise RenderError(f"camera {robot}/{camera} is not in the recorded scenario")


def plan_frames(
    world: WorldState,
    source: RunLayout,
    settings: RenderSettings,
    todo: list[tuple[CameraFrames, str]],
    drawn: list[int],
    drawn_skins: Sequence[int] = (),
) -> list[FramePlan]:
    """Pose the recorded world at each frame to render and collect what the worker needs."""
    hz = world.record.scenario.rates.physics_hz
    blur_steps = round(settings.motion_blur_s * hz)
    plans = []
    for index, (cf, stamp) in enumerate(todo):
        info = read_camera_info(
            source.camera_dir(cf.robot, cf.camera) / CAMERA_INFO_YAML, error=RenderError
        )
        near, far = _camera_config(world, cf.robot, cf.camera)
        step = world.step_of(round(float(stamp) * 1e9))
        world.pose(step)
        pos, mat = world.geom_poses()
        skin_vertices = world.skin_vertices(step) if drawn_skins else []
        at = cf.world_optical[stamp]
        if blur_steps:
            world.pose(step - blur_steps)
            open_pos, open_mat = world.geom_poses()
            p, q = world.engine.camera_pose(cf.robot, cf.camera)
            open_at = _pose_matrix(p, q)
        else:
            open_pos, open_mat, open_at = pos, mat, at
        plans.append(
            FramePlan(
                index, cf.robot, cf.camera, stamp, step, info.width, info.height,
                info.camera_matrix, near, far, at, open_at,
                pos[drawn], mat[drawn], open_pos[drawn], open_mat[drawn],
                tuple(skin_vertices[k] for k in drawn_skins),
            )
        )  # fmt: skip
    return plans


def _store_frame(out: RunLayout, plan: FramePlan, frame_dir: Path) -> None:
    """Move the worker's frame into the run directory: rgb, depth (TUM PNG), instance ids."""
    cam_dir = out.camera_dir(plan.robot, plan.camera)
    gt = np.load(frame_dir / "gt.npy")
    depth = gt[0].astype(np.float64)
    # The simulator's depth: planar z, nothing nearer than near_m or farther than far_m.
    depth[(depth < plan.near_m) | (depth > plan.far_m)] = 0.0
    instance = np.rint(gt[1]).astype(np.uint16)
    name = f"{plan.stamp}.png"
    for kind, array in ((ImageKind.DEPTH, depth_to_png_u16(depth)), (ImageKind.INSTANCE, instance)):
        with StagedOutput(cam_dir / kind / name, overwrite=True, announce=False) as tmp:
            if not cv2.imwrite(str(tmp), array):
                raise RenderError(f"cannot write {cam_dir / kind / name}")
    # rgb last: a frame counts as done once all three exist.
    with StagedOutput(cam_dir / ImageKind.RGB / name, overwrite=True, announce=False) as tmp:
        shutil.move(frame_dir / "rgb.png", tmp)


def render_run(
    run_dir: Path,
    out: Path,
    settings: RenderSettings,
    progress: Callable[[int, int, float], None] | None = None,
    python: str | None = None,
) -> RenderResult:
    """Render the selected frames of `run_dir` that `out` lacks; see the module docstring.

    `progress(done, total, seconds_of_last_frame)` is called once before the first frame
    (done = 0) and after each frame.

    Raises:
        RenderError: the source run, a setting or the worker failed (names the cause).
        RenderOutputExistsError: `out` holds something else than this render.
        RenderSetupError: bpy (Cycles) or Vulkan (Filament) is missing (names the set-up step).
    """
    # Before anything is written: a missing bpy or Vulkan fails early (naming the set-up step).
    if settings.engine == Engine.FILAMENT:
        python = python or sys.executable
        probe_filament(python)
    else:
        python = python or blender_python()
    source = RunLayout(Path(run_dir))
    if not source.run_yaml.is_file() or not source.record.is_file():
        raise RenderError(
            f"{str(source.root)!r} is not a complete run directory (needs run.yaml and "
            f"{RECORD_NPZ}: record the run with experiment_record on)"
        )
    info = _prepare_output(Path(out), source.root, settings)
    cams = select_frames(source, settings)
    layout = RunLayout(Path(out).resolve())
    todo = [
        (cf, s)
        for cf in cams
        for s in cf.stamps
        if not _frame_done(layout.camera_dir(cf.robot, cf.camera), s)
    ]
    skipped = sum(len(cf.stamps) for cf in cams) - len(todo)
    # Everything that can refuse the run (the record, the world, a geom it cannot draw) is
    # done before OUT is touched: a refusal creates nothing.
    job = _plan_job(source, settings, todo) if todo else None
    layout.root.mkdir(parents=True, exist_ok=True)
    # Rendered frame by frame (resumable), so the run folder is marked as grade's own output
    # at once: its files are then replaced in place, and `--overwrite` elsewhere may replace it.
    write_marker(layout.root)
    _copy_static(source, layout, cams)
    _write_run_yaml(layout, source, RunStatus.RUNNING, info)
    seconds: list[float] = []
    startup: list[float] = []
    cpu_seconds: list[float] = []
    device = ""
    status = RunStatus.INTERRUPTED
    try:
        if job is not None:
            device = _render_frames(
                job, layout, settings, seconds, progress, python, startup, cpu_seconds
            )
        status = RunStatus.COMPLETE
    finally:
        for cf in cams:
            _write_lists(layout, cf)
        _write_run_yaml(layout, source, status, {**info, "device": device or None})
    return RenderResult(
        layout.root,
        len(todo),
        skipped,
        device,
        tuple(seconds),
        sum(startup[:1]),
        tuple(cpu_seconds),
    )


@dataclass(frozen=True)
class _PlannedJob:
    """What the worker draws: the scene once, then each frame's poses."""

    shapes: list[GeomShape]
    skins: tuple[SkinShape, ...]
    lights: list[dict[str, Any]]
    plans: list[FramePlan]
    headlight: dict[str, Any]


def _plan_job(
    source: RunLayout, settings: RenderSettings, todo: list[tuple[CameraFrames, str]]
) -> _PlannedJob | FilamentJob:
    """Rebuild the recorded world and pose it at every frame to render (writes nothing)."""
    record = load_record(source.record)
    world = load_world(source.root, record)
    try:
        if settings.engine == Engine.FILAMENT:
            return plan_filament(world, plan_frames(world, source, settings, todo, []))
        shapes = world.shapes()
        skins = tuple(world.skins())
        lights = light_entries(world.lights())
        plans = plan_frames(
            world, source, settings, todo, [s.geom_id for s in shapes], [s.skin_id for s in skins]
        )
        headlight = headlight_entry(world.model.vis.headlight.diffuse.astype(np.float64))
    finally:
        world.close()
    return _PlannedJob(shapes, skins, lights, plans, headlight)


def _render_frames(
    job: _PlannedJob | FilamentJob,
    layout: RunLayout,
    settings: RenderSettings,
    seconds: list[float],
    progress: Callable[[int, int, float], None] | None,
    python: str | None,
    startup: list[float],
    cpu_seconds: list[float],
) -> str:
    plans = job.plans
    job_dir = layout.root / f"{JOB_DIR}-{os.getpid()}"
    shutil.rmtree(job_dir, ignore_errors=True)
    if isinstance(job, FilamentJob):
        write_filament_job(job_dir, settings, job)
        worker, env = FILAMENT_WORKER, vulkan_env()
    else:
        write_job(job_dir, settings, job.shapes, job.lights, plans, job.headlight, job.skins)
        worker, env = WORKER, None
    by_index = {p.index: p for p in plans}
    if progress is not None:
        progress(0, len(plans), 0.0)  # the total is known before Blender starts
    device = ["CPU"]

    started = time.perf_counter()

    def on_event(event: dict[str, Any]) -> None:
        if not startup:
            startup.append(time.perf_counter() - started)
        if "device" in event:
            device[0] = str(event.get("kind") or event["device"])
        if "frame" in event:
            plan = by_index[int(event["frame"])]
            _store_frame(layout, plan, job_dir / "frames" / str(plan.index))
            seconds.append(float(event["seconds"]))
            cpu_seconds.append(float(event.get("cpu_s", 0.0)))
            if progress is not None:
                progress(len(seconds), len(plans), seconds[-1])

    try:
        run_worker(job_dir, on_event, python, worker, env)
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)
    return device[0]
