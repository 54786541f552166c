"""grade export usd, read back with usd-core: stage settings, prim count, time range, and the
poses at sampled time codes equal to the run's own (camera ground truth, the regenerated flying
object, the people's skins)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grade_common.rotations import quat_to_matrix
from grade_common.tum import read_poses
from grade_render.world_state import WorldState
from grade_sim.io.record import load_record
from grade_sim.world.usd_semantics import semantic_class, semantic_instance
from grade_usd.errors import UsdExportError, UsdOutputExistsError
from grade_usd.export import UsdExportResult, export_usd, textures_dir_of

pxr = pytest.importorskip("pxr")
from pxr import Usd, UsdGeom, UsdSkel  # noqa: E402

FLIP = np.diag([1.0, -1.0, -1.0])  # USD camera (-z forward, y up) <-> optical frame


def _world_matrix(prim: Usd.Prim, code: float) -> np.ndarray:
    """4x4 column-vector matrix of a prim's local-to-world transform at a time code."""
    m = np.asarray(UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(code), dtype=np.float64)
    return m.T


@pytest.fixture(scope="module")
def stage(exported: UsdExportResult) -> Usd.Stage:
    return Usd.Stage.Open(str(exported.path))


@pytest.fixture(scope="module")
def world(usd_run: Path) -> WorldState:
    w = WorldState(load_record(usd_run / "record.npz"))
    yield w
    w.close()


def test_stage_units_axes_and_time_range(stage: Usd.Stage, world: WorldState) -> None:
    rec = world.record
    hz = rec.scenario.rates.physics_hz
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert stage.GetTimeCodesPerSecond() == hz
    assert stage.GetStartTimeCode() == pytest.approx(rec.stamps_ns[0] * hz / 1e9)
    assert stage.GetEndTimeCode() == pytest.approx(rec.stamps_ns[-1] * hz / 1e9)
    assert stage.GetEndTimeCode() - stage.GetStartTimeCode() == rec.n_steps - 1


def test_every_drawn_geom_person_camera_and_light_is_a_prim(
    stage: Usd.Stage, world: WorldState, exported: UsdExportResult
) -> None:
    meshes = [p for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)]
    skinned = [p for p in meshes if p.HasAPI(UsdSkel.BindingAPI)]
    world.pose(0)
    assert len(meshes) - len(skinned) == len(world.shapes())
    assert len(skinned) == 2 == len(stage.GetPrimAtPath("/World/People").GetChildren())
    cams = [p for p in stage.Traverse() if p.IsA(UsdGeom.Camera)]
    assert [c.GetName() for c in cams] == ["uav1_camera"]
    lights = [p.GetName() for p in stage.GetPrimAtPath("/World/Lights").GetChildren()]
    assert "ambient" in lights  # the scenario's ambient fill, a DomeLight
    assert len(lights) - 1 == sum(1 for li in world.lights() if max(li.diffuse_rgb) > 0)
    assert exported.prims == sum(1 for _ in stage.Traverse())
    # Every mesh is labelled with the simulator's class and instance id.
    for prim in meshes:
        iid = semantic_instance(prim)
        assert iid in world.scene.instances, prim.GetPath()
        assert semantic_class(prim) == world.scene.instances[int(iid or 0)].label
    assert {semantic_class(p) for p in skinned} == {"person"}


def test_camera_pose_at_every_frame_is_the_recorded_ground_truth(
    stage: Usd.Stage, usd_run: Path
) -> None:
    cam = stage.GetPrimAtPath("/World/Cameras/uav1_camera")
    hz = stage.GetTimeCodesPerSecond()
    poses = read_poses(usd_run / "gt" / "uav1" / "camera" / "groundtruth.txt")
    assert len(poses.stamps) >= 5
    for stamp, p, q in zip(poses.stamps, poses.positions_xyz, poses.quats_wxyz, strict=True):
        m = _world_matrix(cam, round(float(stamp) * hz))
        np.testing.assert_allclose(m[:3, 3], p, atol=2e-6)
        np.testing.assert_allclose(m[:3, :3] @ FLIP, quat_to_matrix(q), atol=1e-5)


def test_camera_intrinsics_give_the_recorded_k(stage: Usd.Stage, world: WorldState) -> None:
    cam = UsdGeom.Camera(stage.GetPrimAtPath("/World/Cameras/uav1_camera"))
    gf = cam.GetCamera(0)
    w, h = 160, 120
    fx = gf.focalLength / gf.horizontalAperture * w
    fy = gf.focalLength / gf.verticalAperture * h
    cx = w / 2 - gf.horizontalApertureOffset / gf.horizontalAperture * w - 0.5
    cy = h / 2 + gf.verticalApertureOffset / gf.verticalAperture * h - 0.5
    k = np.asarray(cam.GetPrim().GetAttribute("grade:cameraMatrix").Get()).reshape(3, 3)
    np.testing.assert_allclose([fx, fy, cx, cy], [k[0, 0], k[1, 1], k[0, 2], k[1, 2]], atol=1e-4)
    assert cam.GetPrim().GetAttribute("grade:distortionModel").Get() == "pinhole"


@pytest.mark.parametrize("fraction", [0.0, 0.5, 1.0])
def test_moving_bodies_and_skins_at_sampled_steps_equal_the_record(
    stage: Usd.Stage, world: WorldState, fraction: float
) -> None:
    step = round(fraction * (world.record.n_steps - 1))
    code = stage.GetStartTimeCode() + step
    world.pose(step)
    bodies = stage.GetPrimAtPath("/World/Bodies").GetChildren()
    classes = {semantic_class(g) for b in bodies for g in b.GetChildren()}
    assert {"flying_sphere", "gazelle", "robot_uav"} <= classes
    for body in bodies:
        bid = int(body.GetName().split("_")[0][1:])
        m = _world_matrix(body, code)
        np.testing.assert_allclose(m[:3, 3], world.data.xpos[bid], atol=1e-6)
        np.testing.assert_allclose(m[:3, :3], world.data.xmat[bid].reshape(3, 3), atol=1e-6)
    # The people's skins as UsdSkel poses them: the simulator's skin vertices at that step
    # (people are sampled at the camera rate: compare at a sampled step).
    every = int(world.record.scenario.rates.physics_hz // 30)
    people_step = step - step % every
    expected = world.skin_vertices(people_step)
    cache = UsdSkel.Cache()
    for i, person in enumerate(stage.GetPrimAtPath("/World/People").GetChildren()):
        root = UsdSkel.Root(person)
        cache.Populate(root, Usd.TraverseInstanceProxies())
        binding = cache.ComputeSkelBindings(root, Usd.TraverseInstanceProxies())[0]
        skel_query = cache.GetSkelQuery(binding.GetSkeleton())
        t = stage.GetStartTimeCode() + people_step
        xforms = skel_query.ComputeSkinningTransforms(t)
        query = binding.GetSkinningTargets()[0]
        points = UsdGeom.Mesh(query.GetPrim()).GetPointsAttr().Get(t)
        query.ComputeSkinnedPoints(xforms, points, t)
        np.testing.assert_allclose(np.asarray(points), expected[i], atol=2e-5)


def test_textures_are_written_beside_the_stage(exported: UsdExportResult) -> None:
    assert exported.textures == textures_dir_of(exported.path)
    files = sorted(p.name for p in exported.textures.iterdir() if not p.name.startswith("."))
    assert files
    assert all(f.endswith(".png") for f in files)


@pytest.mark.parametrize(
    ("case", "error", "match"),
    [
        ("exists", UsdOutputExistsError, "exists; exports never overwrite"),
        ("no_run", UsdExportError, "is not a grade run directory"),
        ("no_record", UsdExportError, "has no record.npz"),
        ("suffix", UsdExportError, "use one of .usd, .usda, .usdc"),
    ],
)
def test_a_refusal_creates_nothing(
    usd_run: Path, tmp_path: Path, case: str, error: type[Exception], match: str
) -> None:
    run, out = usd_run, tmp_path / "x.usd"
    if case == "exists":
        out.write_text("mine")
    elif case == "no_run":
        run = tmp_path / "nothing"
    elif case == "no_record":
        run = tmp_path / "partial"
        run.mkdir()
        (run / "run.yaml").write_text((usd_run / "run.yaml").read_text())
    else:
        out = tmp_path / "x.obj"
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(error, match=match):
        export_usd(run, out)
    assert sorted(tmp_path.rglob("*")) == before
    if case == "exists":
        assert out.read_text() == "mine"


def test_grade_export_usd_command(
    usd_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from grade_cli.main import main

    out = tmp_path / "cli.usda"
    assert main(["export", "usd", str(usd_run), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"-> {out}" in printed
    last = load_record(usd_run / "record.npz").n_steps - 1
    assert f"time codes 0..{last} at 240/s" in printed
    assert Usd.Stage.Open(str(out)).GetPrimAtPath("/World/Cameras/uav1_camera")
