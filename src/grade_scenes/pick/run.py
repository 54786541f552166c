"""`grade scenes run`: the pick-and-place protocol over every scene of a selection, into a
resumable run folder.

Scenes run in the selection's order (SceneReplica's: by scene index). Each scene gets its own
folder `RUN/scene_NNN/` with the head camera's RGB-D view before the first grasp
(`head_rgb.png`, `head_depth_mm.png` as 16-bit millimetres), the settled object poses
(`ground_truth.yaml`), the arm's rosbag2 in simulated time (`bag/`: /clock, /joint_states,
/arm/joint_trajectory, /gripper/command; `record`), the contact sheet of the grasp sequence
(`sheet.png`), with a perception pipeline the contact sheet of its looks (`perception.png`:
segments and estimated poses over the head image, `perception_sheet`) and, written last
(it marks the scene done), `attempts.yaml` in `grade_eval.pick_place`'s format. A second run
into the same folder with the same selection and settings (`run.yaml`) skips finished scenes;
other settings are refused. `results.yaml` (all attempts) and `results.md`
(the per-object, per-scene and failure tables) are rewritten after every scene.

Each scene's random state comes from (seed, scene index), so a scene's result does not
depend on which other scenes ran before it.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import trimesh
import yaml
from tqdm import tqdm

from grade_common.atomic import StagedOutput
from grade_common.output_guard import write_marker
from grade_common.schema import to_mapping
from grade_eval.core.object_pose import adds_m
from grade_eval.pick_place import (
    Attempt,
    add_s_table,
    category_table,
    dump_attempts,
    failure_table,
    load_attempts,
    results_table,
    scene_table,
)
from grade_scenes.errors import ScenesError
from grade_scenes.pick.perception import Look
from grade_scenes.pick.perception_sheet import draw_look
from grade_scenes.pick.protocol import PickConfig, SceneOutcome, run_scene
from grade_scenes.pick.world import HEAD_CAMERA, VIEW_CAMERA, PickWorld
from grade_scenes.render import write_png
from grade_scenes.scenefile import SCENE_DIR

RUN_FILE = "run.yaml"  # the selection and the settings: a resumed run must keep them
ATTEMPTS_FILE = "attempts.yaml"
RESULTS_FILE = "results.yaml"
BAG_DIR = "bag"
TABLES_FILE = "results.md"
PERCEPTION_SHEET = "perception.png"


def selected_scenes(selection: Path) -> list[str]:
    """Scene names of a selection folder, in its order.

    Raises:
        ScenesError: not a selection folder made by `grade scenes select`.
    """
    try:
        names = [
            str(n) for n in yaml.safe_load((selection / "selection.yaml").read_text())["scenes"]
        ]
    except (OSError, KeyError, TypeError, yaml.YAMLError) as err:
        raise ScenesError(
            f"{selection}: not a selection folder ({err}); make one with `grade scenes select`"
        ) from err
    missing = [n for n in names if not (selection / SCENE_DIR / f"{n}.yaml").is_file()]
    if missing:
        raise ScenesError(f"{selection}: scene files missing for {missing}")
    return names


def attempts_of(outcome: SceneOutcome) -> tuple[Attempt, ...]:
    return tuple(
        Attempt(
            scene=outcome.scene,
            object=o.name,
            grasped=o.grasped,
            lifted=o.lifted,
            placed=o.placed,
            failure=o.failure.value,
            time_s=round(o.sim_time_s, 3),
            add_m=o.add_m,
            add_s_m=o.add_s_m,
            diameter_m=o.diameter_m,
        )
        for o in outcome.objects
    )


def scene_seed(seed: int, scene: str) -> int:
    index = int(scene.rsplit("_", 1)[-1]) if scene.rsplit("_", 1)[-1].isdigit() else 0
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def _write(path: Path, data: bytes | str) -> None:
    with StagedOutput(path, overwrite=True, announce=False) as tmp:
        if isinstance(data, str):
            tmp.write_text(data)
        else:
            tmp.write_bytes(data)


def run_one(
    scene_file: Path, folder: Path, config: PickConfig, sheets: bool
) -> tuple[Attempt, ...]:
    """One scene into `folder` (created); returns its attempts."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    import cv2

    from grade_scenes.pick.camera import Cameras, contact_sheet

    if folder.exists():  # left by an interrupted run: the scene starts over
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    frames: list[tuple[str, np.ndarray]] = []
    looks: list[tuple[str, np.ndarray]] = []
    cameras: dict[str, Cameras] = {}
    first = True
    drawn_points: list[np.ndarray] = []

    def on_look(world: PickWorld, look: Look, target: int) -> None:
        if look.view is None:
            return
        if not drawn_points:  # model points to draw estimates with (drawing only)
            rng = np.random.default_rng(0)
            for mesh in world.object_meshes:
                sampled = trimesh.sample.sample_surface(trimesh.load_mesh(mesh), 400, seed=rng)
                drawn_points.append(np.asarray(sampled[0]))
        cams = cameras.setdefault(
            "look", Cameras(world, width=look.view.width, height=look.view.height)
        )
        add_s = {
            k: adds_m(drawn_points[k], world.object_pose(k), e.transform_world_object)
            for k, e in look.estimates.items()
            if e.fit is not None
        }
        image = draw_look(
            cams.rgb(HEAD_CAMERA), look, world.object_names, target, drawn_points, add_s
        )
        half = cv2.resize(
            image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_AREA
        )
        looks.append((f"look {len(looks) + 1}: {world.object_names[target]}", half))

    def snapshot(world: PickWorld, label: str) -> None:
        nonlocal first
        cams = cameras.setdefault("c", Cameras(world))
        if first:
            first = False
            write_png(cams.rgb(HEAD_CAMERA), folder / "head_rgb.png")
            depth_mm = np.clip(np.round(cams.depth_m(HEAD_CAMERA) * 1000), 0, 65535).astype(
                np.uint16
            )
            ok, png = cv2.imencode(".png", depth_mm)
            assert ok
            _write(folder / "head_depth_mm.png", png.tobytes())
            poses = {
                name: np.round(world.object_pose(k), 6).tolist()
                for k, name in enumerate(world.object_names)
            }
            _write(
                folder / "ground_truth.yaml",
                yaml.safe_dump({"transform_world_object": poses}, sort_keys=False),
            )
        if sheets and label != "start":
            frames.append((label, cams.rgb(VIEW_CAMERA)))

    try:
        outcome = run_scene(
            scene_file,
            config,
            snapshot=snapshot,
            bag_dir=folder / BAG_DIR,
            on_look=on_look if sheets else None,
        )
    finally:
        for cams in cameras.values():
            cams.close()
    if frames:
        write_png(contact_sheet(frames), folder / "sheet.png")
    if looks:
        write_png(contact_sheet(looks, columns=3), folder / PERCEPTION_SHEET)
    attempts = attempts_of(outcome)
    _write(folder / ATTEMPTS_FILE, dump_attempts(attempts))
    return attempts


def run_selection(
    selection: Path,
    out: Path,
    config: PickConfig,
    sheets: bool = True,
    quiet: bool = False,
    limit: int | None = None,
    on_scene: Callable[[str, tuple[Attempt, ...], bool], None] | None = None,
) -> tuple[Attempt, ...]:
    """Every scene of the selection (or the first `limit`), resuming finished ones (module doc).

    Raises:
        ScenesError: `selection` is not a selection folder.
    """
    names = selected_scenes(selection)[:limit]
    settings = {"selection": str(selection.resolve()), "pick": to_mapping(config)}
    run_file = out / RUN_FILE
    if out.exists():
        old = yaml.safe_load(run_file.read_text()) if run_file.is_file() else None
        if old != settings:
            raise ScenesError(
                f"{str(out)!r} exists and is not a run of this selection with these settings "
                f"({run_file.name}: {old!r}); resume with the same ones or choose another --out"
            )
    out.mkdir(parents=True, exist_ok=True)
    # Scene by scene (resumable): marked as grade's own output at once, its files replaced
    # in place.
    write_marker(out)
    _write(run_file, yaml.safe_dump(settings, sort_keys=False))
    everything: list[Attempt] = []
    bar = tqdm(names, unit="scene", desc="pick and place", disable=quiet, file=sys.stderr)
    for name in bar:
        folder = out / name
        done = folder / ATTEMPTS_FILE
        resumed = done.is_file()
        if resumed:
            attempts = load_attempts(done)
        else:
            seeded = replace(config, seed=scene_seed(config.seed, name))
            attempts = run_one(selection / SCENE_DIR / f"{name}.yaml", folder, seeded, sheets)
        everything += attempts
        if on_scene is not None:
            on_scene(name, attempts, resumed)
        all_attempts = tuple(everything)
        _write(out / RESULTS_FILE, dump_attempts(all_attempts))
        _write(out / TABLES_FILE, tables_markdown(all_attempts))
    return tuple(everything)


def tables_markdown(attempts: tuple[Attempt, ...]) -> str:
    scored = any(a.add_s_m is not None for a in attempts)
    return (
        "## Per object\n\n"
        + results_table(attempts)
        + "\n\n## Failure categories (SceneReplica)\n\n"
        + category_table(attempts)
        + ("\n\n## Pose estimates\n\n" + add_s_table(attempts) if scored else "")
        + "\n\n## Per scene\n\n"
        + scene_table(attempts)
        + "\n\n## Outcomes\n\n"
        + failure_table(attempts)
        + "\n"
    )
