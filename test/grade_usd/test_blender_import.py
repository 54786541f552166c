"""An exported stage imported by Blender's own USD importer and rendered by Cycles (tiny images,
few samples): at a camera frame with people, its depth and instance masks agree with the
simulator's (median depth error under 5 mm, IoU of every visible instance 0.9 or more); a run
with baked lighting looks as the simulator drew it."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from grade_common.tum import DEPTH_SCALE, read_list
from grade_sim.sim.run import run_scenario
from grade_usd.blender_check import render_stage
from grade_usd.export import UsdExportResult, export_usd
from render_kit import needs_bpy
from scenario_kit import small_scenario

pytestmark = [pytest.mark.render, pytest.mark.slow]
CAM_DIR = Path("gt") / "uav1" / "camera"
MIN_PIXELS = 30  # smaller masks are mostly boundary: their IoU says little


def _person_ids(run: Path) -> set[int]:
    table = yaml.safe_load((run / "gt" / "instances.yaml").read_text())
    return {int(iid) for iid, row in table.items() if row["class"] == "person"}


@needs_bpy
def test_blender_sees_the_simulators_depth_and_instances(
    usd_run: Path, exported: UsdExportResult
) -> None:
    people = _person_ids(usd_run)
    stamps = [s for s, _ in read_list(usd_run / CAM_DIR / "instance.txt")]

    def person_pixels(stamp: str) -> int:
        img = cv2.imread(str(usd_run / CAM_DIR / "instance" / f"{stamp}.png"), -1)
        return int(np.isin(img, list(people)).sum())

    stamp = max(stamps, key=person_pixels)
    assert person_pixels(stamp) >= MIN_PIXELS, "no frame of the run shows a person"
    depth_sim = cv2.imread(str(usd_run / CAM_DIR / "depth" / f"{stamp}.png"), -1) / DEPTH_SCALE
    inst_sim = cv2.imread(str(usd_run / CAM_DIR / "instance" / f"{stamp}.png"), -1)
    code = round(float(stamp) * 240.0)
    view = render_stage(exported.path, "uav1_camera", code, (160, 120), far_m=20.0)
    both = (depth_sim > 0) & (view.depth_m > 0)
    assert both.mean() > 0.9
    assert np.median(np.abs(depth_sim[both] - view.depth_m[both])) < 0.005
    checked = 0
    for iid in np.unique(inst_sim):
        sim = inst_sim == iid
        if iid == 0 or sim.sum() < MIN_PIXELS:
            continue
        blender = view.instance == iid
        iou = (sim & blender).sum() / (sim | blender).sum()
        assert iou >= 0.9, f"instance {iid}: IoU {iou:.3f}"
        checked += 1
    assert checked >= 3


@needs_bpy
def test_baked_surfaces_look_as_the_simulator_drew_them(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With the bake on, the stage's static world emits its baked textures in physical units:
    Blender, exposed at the world's EV100, shows the simulator's colours."""
    run = run_scenario(
        small_scenario(
            80, 60, duration_s=0.2, people={"count": 1, "body": "parts"},
            lights={"count": 2, "intensity": [1.4, 1.5], "bake": {"enabled": True}},
        ),
        tmp_path_factory.mktemp("baked") / "run",
    ).path  # fmt: skip
    stage = export_usd(run, run.parent / "baked.usd").path
    cam = run / CAM_DIR
    stamp = [s for s, _ in read_list(cam / "rgb.txt")][-1]
    view = render_stage(
        stage, "uav1_camera", round(float(stamp) * 240.0), (80, 60), 20.0, samples=8
    )
    assert view.rgb_png is not None
    blender = cv2.imdecode(np.frombuffer(view.rgb_png, np.uint8), cv2.IMREAD_COLOR).astype(float)
    sim = cv2.imread(str(cam / "rgb" / f"{stamp}.png")).astype(float)
    table = yaml.safe_load((run / "gt" / "instances.yaml").read_text())
    walls = [int(i) for i, row in table.items() if row["class"] in ("wall", "floor", "ceiling")]
    static = np.isin(cv2.imread(str(cam / "instance" / f"{stamp}.png"), -1), walls)
    assert static.sum() > 1000
    grey_sim, grey_blender = sim.mean(axis=2)[static], blender.mean(axis=2)[static]
    error = np.median(np.abs(grey_sim - grey_blender))
    spread = np.median(np.abs(grey_sim - np.median(grey_sim)))  # the image's own variation
    assert error < 3.0
    assert error < spread / 3
    assert abs(grey_sim.mean() - grey_blender.mean()) < 3.0
