"""grade render end to end with Blender Cycles (tiny images, few samples): the path-traced ground
truth agrees with the simulator's, resuming renders only what is missing, the CPU is deterministic.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from grade_common.rotations import quat_to_matrix
from grade_common.tum import DEPTH_SCALE, read_camera_info, read_list, read_poses
from grade_render.errors import RenderError, RenderOutputExistsError, RenderSetupError
from grade_render.render import RenderResult, render_run
from grade_render.settings import Device, RenderSettings
from render_kit import bpy_available, needs_bpy

CAM = ("uav1", "camera")
SETTINGS = RenderSettings(samples=4, device=Device.CPU, frames="0:2", seed=3)


pytestmark = [pytest.mark.render, pytest.mark.slow]


def _cam(root: Path) -> Path:
    return root / "gt" / CAM[0] / CAM[1]


def _image(root: Path, kind: str, stamp: str) -> np.ndarray:
    img = cv2.imread(str(_cam(root) / kind / f"{stamp}.png"), cv2.IMREAD_UNCHANGED)
    assert img is not None, f"{kind}/{stamp}.png missing"
    return img


@pytest.fixture(scope="module")
def rendered(recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> RenderResult:
    if not bpy_available():
        pytest.skip("bpy is not installed: run `make setup-render`")
    out = tmp_path_factory.mktemp("rendered") / "pt"
    return render_run(recorded, out, SETTINGS)


@needs_bpy
def test_render_writes_a_tum_run_directory_naming_its_source(
    recorded: Path, rendered: RenderResult
) -> None:
    assert rendered.rendered == 2
    assert rendered.skipped == 0
    assert rendered.device == "CPU"
    run = yaml.safe_load((rendered.path / "run.yaml").read_text())
    assert run["status"] == "complete"
    assert run["render"]["source"] == str(recorded.resolve())
    assert run["render"]["samples"] == 4
    assert run["render"]["seed"] == 3
    stamps = [s for s, _ in read_list(_cam(recorded) / "rgb.txt")][:2]
    for kind in ("rgb", "depth", "instance"):
        assert [s for s, _ in read_list(_cam(rendered.path) / f"{kind}.txt")] == stamps
    assert read_poses(_cam(rendered.path) / "groundtruth.txt").stamps == tuple(stamps)
    rgb = _image(rendered.path, "rgb", stamps[0])
    assert rgb.shape == (60, 80, 3)
    assert rgb.std() > 5


@needs_bpy
def test_path_traced_depth_and_masks_match_the_simulator(
    recorded: Path, rendered: RenderResult
) -> None:
    for stamp, _ in read_list(_cam(rendered.path) / "depth.txt"):
        assert_geometry_agrees(recorded, rendered.path, stamp, max_median_depth_m=0.01)


def assert_geometry_agrees(
    source: Path, traced: Path, stamp: str, max_median_depth_m: float
) -> None:
    """Depth and instance masks of a path-traced frame against the simulator's: depth valid in
    both on 95 % of pixels, median |difference| under the bound, IoU >= 0.9 per instance."""
    sim = _image(source, "depth", stamp).astype(np.float64) / DEPTH_SCALE
    pt = _image(traced, "depth", stamp).astype(np.float64) / DEPTH_SCALE
    both = (sim > 0) & (pt > 0)
    assert both.mean() > 0.95
    median = float(np.median(np.abs(sim - pt)[both]))
    print(f"{stamp}: median |depth_pt - depth_sim| = {median * 1000:.2f} mm")
    assert median < max_median_depth_m
    sim_ids, pt_ids = _image(source, "instance", stamp), _image(traced, "instance", stamp)
    for iid in np.unique(sim_ids):
        a, b = sim_ids == iid, pt_ids == iid
        iou = (a & b).sum() / (a | b).sum()
        print(f"{stamp}: instance {iid}: IoU {iou:.3f} ({a.sum()} px)")
        assert iou >= 0.9, (stamp, iid, iou)


@pytest.fixture(scope="module")
def default_scenario_run(
    repo_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, RenderResult]:
    """The default scenario (config/indoor_uav.yaml, skinned people) at 96x72, re-rendered."""
    if not bpy_available():
        pytest.skip("bpy is not installed: run `make setup-render`")
    from grade_sim.config.scenario import load_scenario
    from grade_sim.sim.run import run_scenario

    overrides = {"duration_s": 0.4, "bootstrap_s": 0.2, "robots.0.cameras.0.width": 96}
    overrides |= {"robots.0.cameras.0.height": 72}
    scenario = load_scenario(repo_root / "config" / "indoor_uav.yaml", overrides)
    root = tmp_path_factory.mktemp("default_render")
    source = run_scenario(scenario, root / "run").path
    settings = RenderSettings(samples=8, device=Device.CPU, frames="0:12:11", seed=1)
    return source, render_run(source, root / "pt", settings)


@needs_bpy
def test_exposure_on_the_default_scenario_matches_the_raster_without_clipping(
    default_scenario_run: tuple[Path, RenderResult],
) -> None:
    """The scenario's lights with their own cone and fall-off, AgX at the default exposure: no
    blown-out image (the point lights of before clipped 77-86 % of pixels) and the raster's
    brightness within 25 %."""
    source, rendered = default_scenario_run
    assert rendered.rendered == 2
    for stamp, _ in read_list(_cam(rendered.path) / "rgb.txt"):
        raster = _image(source, "rgb", stamp).astype(np.float64)
        traced = _image(rendered.path, "rgb", stamp).astype(np.float64)
        clipped = float((traced >= 255).any(axis=2).mean())
        ratio = traced.mean() / raster.mean()
        print(f"{stamp}: clipped {clipped:.4f}, mean {traced.mean():.1f} vs {raster.mean():.1f}")
        assert clipped <= 0.02
        assert 0.75 <= ratio <= 1.25


@needs_bpy
def test_a_3d_box_corner_projects_to_the_same_pixel_in_both(
    recorded: Path, rendered: RenderResult
) -> None:
    """The recorded camera (pose + K) sees each actor's 3D box where both renderers draw it."""
    info = read_camera_info(_cam(rendered.path) / "camera_info.yaml")
    poses = read_poses(_cam(rendered.path) / "groundtruth.txt")
    lines = (_cam(recorded) / "boxes3d.jsonl").read_text().splitlines()
    boxes = {f"{json.loads(line)['t']:.6f}": json.loads(line)["boxes"] for line in lines}
    checked = 0
    for k, stamp in enumerate(poses.stamps):
        r_wo = quat_to_matrix(poses.quats_wxyz[k])
        p_wo = poses.positions_xyz[k]
        pt_ids = _image(rendered.path, "instance", stamp)
        sim_ids = _image(recorded, "instance", stamp)
        for box in boxes[stamp]:
            t = np.asarray(box["transform_world_box"])
            half = np.asarray(box["size"]) / 2
            corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
            world = (t[:3, :3] @ (corners * half).T).T + t[:3, 3]
            cam = (world - p_wo) @ r_wo  # optical frame: x right, y down, z forward
            if (cam[:, 2] <= 0).any():
                continue
            uv = (info.camera_matrix @ (cam / cam[:, 2:3]).T).T[:, :2]
            lo, hi = np.floor(uv.min(0)), np.ceil(uv.max(0))
            for ids in (pt_ids, sim_ids):
                vs, us = np.nonzero(ids == box["id"])
                if len(us) == 0:
                    continue
                # Every pixel of the instance lies inside its projected 3D box (1 px slack).
                assert us.min() >= lo[0] - 1
                assert us.max() <= hi[0] + 1
                assert vs.min() >= lo[1] - 1
                assert vs.max() <= hi[1] + 1
            vs, us = np.nonzero(pt_ids == box["id"])
            vs2, us2 = np.nonzero(sim_ids == box["id"])
            if len(us) and len(us2):
                # The extreme pixels (2D box corners) agree between path tracer and rasteriser.
                assert abs(int(us.min()) - int(us2.min())) <= 1
                assert abs(int(vs.max()) - int(vs2.max())) <= 1
                checked += 1
    assert checked > 0, "no actor in view: the scenario no longer shows one"


@needs_bpy
def test_resume_renders_only_missing_frames_and_same_seed_is_identical(
    recorded: Path, rendered: RenderResult, tmp_path: Path
) -> None:
    stamps = [s for s, _ in read_list(_cam(rendered.path) / "rgb.txt")]
    before = _image(rendered.path, "rgb", stamps[1])
    (_cam(rendered.path) / "rgb" / f"{stamps[1]}.png").unlink()
    again = render_run(recorded, rendered.path, SETTINGS)
    assert (again.rendered, again.skipped) == (1, 1)
    # Same settings and seed on the CPU: the same pixels.
    assert np.array_equal(_image(rendered.path, "rgb", stamps[1]), before)
    assert [s for s, _ in read_list(_cam(rendered.path) / "rgb.txt")] == stamps
    nothing = render_run(recorded, rendered.path, SETTINGS)
    assert (nothing.rendered, nothing.skipped) == (0, 2)
    with pytest.raises(RenderOutputExistsError, match="other settings"):
        render_run(recorded, rendered.path, RenderSettings(samples=8, frames="0:2"))


def test_missing_bpy_names_the_set_up_command(recorded: Path, tmp_path: Path) -> None:
    # This test's interpreter is grade's own environment, which never has bpy.
    with pytest.raises(RenderSetupError, match="make setup-render"):
        render_run(recorded, tmp_path / "out", SETTINGS, python=sys.executable)


@needs_bpy
def test_motion_blur_blurs_colour_but_not_the_ground_truth(
    recorded: Path, rendered: RenderResult, tmp_path: Path
) -> None:
    blurred = render_run(
        recorded,
        tmp_path / "blur",
        RenderSettings(samples=4, device=Device.AUTO, frames="1", seed=3, motion_blur_s=0.03),
    )
    assert blurred.rendered == 1
    # --device auto: a GPU kind where Cycles finds one, else the CPU (this machine, CI).
    assert blurred.device in ("CPU", "OPTIX", "CUDA", "HIP", "ONEAPI", "METAL")
    stamp = read_list(_cam(blurred.path) / "rgb.txt")[0][0]
    # The ground-truth pass is the sharp one at the frame's stamp (the shutter closes there).
    assert np.array_equal(
        _image(blurred.path, "instance", stamp), _image(rendered.path, "instance", stamp)
    )
    depth = _image(blurred.path, "depth", stamp).astype(int)
    assert np.abs(depth - _image(rendered.path, "depth", stamp).astype(int)).max() <= 5  # 1 mm
    # Things moved during the shutter: the colour image is not the sharp one (same seed).
    sharp = _image(rendered.path, "rgb", stamp)
    assert not np.array_equal(_image(blurred.path, "rgb", stamp), sharp)


@needs_bpy
def test_cli_resumes_a_complete_render_without_rendering(
    recorded: Path, rendered: RenderResult, capsys: pytest.CaptureFixture[str]
) -> None:
    from grade_cli.main import main as grade_main

    argv = ["render", str(recorded), "--out", str(rendered.path), "--samples", "4"]
    argv += ["--device", "cpu", "--frames", "0:2", "--seed", "3"]
    assert grade_main(argv) == 0
    assert "rendered 0 frame(s)" in capsys.readouterr().out


def test_a_refused_run_creates_nothing(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record that does not belong to its scenario is refused before OUT is touched."""
    src = tmp_path / "src"
    shutil.copytree(recorded, src)
    with np.load(src / "record.npz") as data:
        files = {k: data[k] for k in data.files}
    scenario = yaml.safe_load(str(files["scenario_yaml"]))
    scenario["duration_s"] = 0.05  # fewer steps than the record holds
    files["scenario_yaml"] = np.array(yaml.safe_dump(scenario))
    np.savez(src / "record.npz", **files)
    out = tmp_path / "out"
    # Any interpreter: the refusal comes before the worker would start.
    with pytest.raises(RenderError, match="does not belong to this scenario"):
        render_run(src, out, SETTINGS, python=sys.executable)
    assert not out.exists()
    assert "replacing" not in capsys.readouterr().err


def test_cli_rejects_bad_settings_naming_them(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from grade_cli.main import main as grade_main

    out = tmp_path / "out"
    assert grade_main(["render", str(recorded), "--out", str(out), "--samples", "0"]) == 1
    assert "samples" in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture(scope="module")
def mesh_world_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RenderResult]:
    """The sample mesh world (OBJ + MTL + PNG textures through texture coordinates), seen from a
    still UAV looking down at the floor's four coloured quadrants, and its path-traced render."""
    if not bpy_available():
        pytest.skip("bpy is not installed: run `make setup-render`")
    from grade_sim.config.scenario import scenario_from_mapping
    from grade_sim.sim.run import run_scenario
    from grade_sim.world.sample_world import write_sample_world

    root = tmp_path_factory.mktemp("mesh_render")
    obj = write_sample_world(root / "world")
    mount = {"xyz": [0.25, 0.0, -0.1], "rpy": [0.0, 1.2, 0.0]}  # in front of the body
    camera = {"name": "camera", "width": 96, "height": 72, "mount": mount}
    scenario = scenario_from_mapping(
        {
            "seed": 3,
            "duration_s": 0.2,
            "bootstrap_s": 0.1,
            "environment": {"type": "mesh", "mesh": {"path": str(obj)}},
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "robots": [
                {
                    "name": "uav1",
                    "start_xyz": [-0.5, 0.0, 2.2],
                    "motion": {"mode": "teleport"},
                    "cameras": [camera],
                }
            ],
        }
    )
    source = run_scenario(scenario, root / "run").path
    settings = RenderSettings(samples=8, device=Device.CPU, frames="0", seed=1)
    return source, render_run(source, root / "pt", settings)


@needs_bpy
def test_a_mesh_world_renders_its_textures_through_their_coordinates(
    mesh_world_run: tuple[Path, RenderResult],
) -> None:
    from grade_sim.world.sample_world import QUADRANT_RGB

    source, rendered = mesh_world_run
    (stamp,) = [s for s, _ in read_list(_cam(rendered.path) / "rgb.txt")]
    assert_geometry_agrees(source, rendered.path, stamp, max_median_depth_m=0.005)
    sim_ids = _image(source, "instance", stamp)
    # The floor's quadrant colours land where the rasteriser draws them (hue per pixel).
    raster = _image(source, "rgb", stamp)[:, :, ::-1].astype(np.float64)
    traced = _image(rendered.path, "rgb", stamp)[:, :, ::-1].astype(np.float64)
    palette = np.array(list(QUADRANT_RGB.values()), dtype=np.float64)
    palette /= np.linalg.norm(palette, axis=1, keepdims=True)

    def nearest(img: np.ndarray) -> np.ndarray:
        unit = img / np.maximum(np.linalg.norm(img, axis=2, keepdims=True), 1e-6)
        return np.argmax(unit @ palette.T, axis=2)

    floor = sim_ids == int(np.bincount(sim_ids.ravel()).argmax())  # the most seen instance
    agree = (nearest(raster) == nearest(traced))[floor].mean()
    seen = set(np.unique(nearest(raster)[floor]).tolist())
    print(f"floor pixels {floor.sum()}, quadrant colours seen {seen}, agreement {agree:.3f}")
    assert len(seen) >= 2
    assert agree >= 0.9


def test_lights_carry_the_simulators_cone_fall_off_and_power() -> None:
    from grade_render.job import headlight_entry, light_entries
    from grade_render.world_state import LightSpec

    spot = LightSpec(
        np.array([1.0, 2.0, 2.9]), np.array([0.0, 0.0, -1.0]), np.array([0.6, 0.5, 0.3]),
        directional=False, cast_shadow=False, cutoff_deg=75.0, exponent=2.0,
        attenuation=(1.0, 0.0, 0.02),
    )  # fmt: skip
    sun = LightSpec(np.zeros(3), np.array([0.0, 0.6, -0.8]), np.array([0.8, 0.8, 0.7]), True, True)
    dark = LightSpec(np.zeros(3), np.array([0.0, 0.0, -1.0]), np.zeros(3), False, False)
    entries = light_entries([spot, sun, dark])
    assert len(entries) == 2  # a light with no diffuse colour adds nothing
    lamp, sky = entries
    # Constant fall-off in the worker: 4 pi^2 d makes a white surface facing the lamp d * att.
    assert lamp["power"] == pytest.approx(4 * np.pi**2 * 0.6)
    assert lamp["rgb"] == pytest.approx([1.0, 0.5 / 0.6, 0.3 / 0.6])
    assert (lamp["cutoff_deg"], lamp["exponent"]) == (75.0, 2.0)
    assert lamp["attenuation"] == [1.0, 0.0, 0.02]
    assert sky["directional"]
    assert sky["power"] == pytest.approx(np.pi * 0.8)
    head = headlight_entry(np.array([0.35, 0.35, 0.35]))
    assert head["power"] == pytest.approx(4 * np.pi**2 * 0.35)
    assert head["attenuation"] == [1.0, 0.0, 0.0]  # MuJoCo's headlight has no fall-off


@pytest.fixture(scope="module")
def baked_and_unbaked(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """The same small world recorded with the baked lighting on and off (80x60, 0.1 s)."""
    from grade_sim.sim.run import run_scenario
    from scenario_kit import small_scenario

    root = tmp_path_factory.mktemp("bake")
    mp = pytest.MonkeyPatch()
    mp.setenv("GRADE_BAKE_CACHE", str(root / "cache"))  # not the user's cache
    try:
        runs = {}
        for baked in (False, True):
            lights = {"count": 2, "bake": {"enabled": baked}}
            scenario = small_scenario(80, 60, duration_s=0.1, lights=lights)
            runs[baked] = run_scenario(scenario, root / f"run-{baked}").path
    finally:
        mp.undo()
    return runs


@needs_bpy
def test_a_baked_run_is_path_traced_from_albedo_not_from_its_lightmaps(
    baked_and_unbaked: dict[bool, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bake makes the static boxes emissive textures of albedo x light in the simulator;
    Cycles lights the world itself, so it must draw the albedo materials (else the light would
    count twice): a baked run renders as its unbaked twin does."""
    from grade_render.world_state import load_world
    from grade_sim.engine.mujoco.engine import MujocoEngine
    from grade_sim.io.record import load_record

    monkeypatch.setenv("GRADE_BAKE_CACHE", str(tmp_path / "cache"))
    baked = baked_and_unbaked[True]
    world = load_world(baked, load_record(baked / "record.npz"))
    try:
        simulated = MujocoEngine(world.scene).model  # what the simulator drew: baked
        assert simulated.mat_emission.max() > 0.5  # the lightmaps glow
        assert world.model.mat_emission.max() == 0.0  # the renderer's: no emission
        twin = baked_and_unbaked[False]
        unbaked = load_world(twin, load_record(twin / "record.npz"))
        try:
            np.testing.assert_array_equal(world.model.tex_data, unbaked.model.tex_data)
        finally:
            unbaked.close()
    finally:
        world.close()
    settings = RenderSettings(samples=4, device=Device.CPU, frames="0", seed=3)
    images = {}
    for key, run in baked_and_unbaked.items():
        out = render_run(run, tmp_path / f"pt-{key}", settings).path
        stamp = read_list(_cam(out) / "rgb.txt")[0][0]
        images[key] = _image(out, "rgb", stamp).astype(np.float64)
    ratio = images[True].mean() / images[False].mean()
    print(f"baked / unbaked mean brightness {ratio:.3f} ({images[False].mean():.1f})")
    assert 0.75 <= ratio <= 1.25
    np.testing.assert_array_equal(images[True], images[False])  # the same scene, the same seed
