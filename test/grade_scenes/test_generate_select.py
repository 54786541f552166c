"""Generated scenes: collision-free, resting on the table, reachable, seeded; the selection meets
the count bounds and covers at least as many stable poses as a random selection; a scene file
loads into the simulator and settles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from grade_scenes.catalog import CatalogEntry, build_catalog
from grade_scenes.generate import GenerateConfig, Scene, generate_scenes
from grade_scenes.objects import default_object_set
from grade_scenes.reach.reachability import ReachabilityMap
from grade_scenes.scenefile import read_candidates, write_candidates
from grade_scenes.select import SelectConfig, random_selection, select_scenes
from grade_scenes.settle import settle
from grade_scenes.table import TableConfig

TABLE = TableConfig()


@pytest.fixture(scope="module")
def catalog() -> tuple[CatalogEntry, ...]:
    return build_catalog(default_object_set())


@pytest.fixture(scope="module")
def scenes(catalog: tuple[CatalogEntry, ...], panda_reach: ReachabilityMap) -> tuple[Scene, ...]:
    return generate_scenes(
        catalog, panda_reach, GenerateConfig(scenes=60), np.random.default_rng(7)
    )


def _placed_mesh(catalog: tuple[CatalogEntry, ...], scene: Scene, k: int) -> trimesh.Trimesh:
    placed = scene.objects[k]
    mesh = catalog[placed.object_index].obj.mesh.convex_hull.copy()
    mesh.apply_transform(placed.transform_world_object)
    return mesh


def test_no_two_objects_intersect_and_all_rest_on_reachable_blocks(
    catalog: tuple[CatalogEntry, ...], scenes: tuple[Scene, ...], panda_reach: ReachabilityMap
) -> None:
    reach = panda_reach
    for scene in scenes:
        assert len({o.object_index for o in scene.objects}) == 5
        manager = trimesh.collision.CollisionManager()
        for k, placed in enumerate(scene.objects):
            mesh = _placed_mesh(catalog, scene, k)
            # Resting: the lowest point is on the table top, and the object is above the table.
            assert mesh.bounds[0, 2] == pytest.approx(TABLE.top_height_m, abs=1e-9)
            assert np.all(np.abs(mesh.vertices[:, 0] - TABLE.center_x_m) <= 0.5)
            assert np.all(np.abs(mesh.vertices[:, 1]) <= 0.5)
            assert reach.is_reachable_xy(placed.transform_world_object[:2, 3])
            if k:
                assert not manager.in_collision_single(mesh)
                assert manager.min_distance_single(mesh) >= 0.005 - 1e-9
            manager.add_object(str(k), mesh)


def test_same_seed_same_scenes(
    catalog: tuple[CatalogEntry, ...], scenes: tuple[Scene, ...], panda_reach: ReachabilityMap
) -> None:
    again = generate_scenes(
        catalog, panda_reach, GenerateConfig(scenes=5), np.random.default_rng(7)
    )
    for a, b in zip(again, scenes[:5], strict=True):
        assert a.pairs() == b.pairs()
        for pa, pb in zip(a.objects, b.objects, strict=True):
            np.testing.assert_array_equal(pa.transform_world_object, pb.transform_world_object)


def test_selection_meets_bounds_and_beats_random(
    catalog: tuple[CatalogEntry, ...], scenes: tuple[Scene, ...]
) -> None:
    config = SelectConfig(count=12, min_per_object=3, max_per_object=5)
    best = select_scenes(scenes, len(catalog), config, np.random.default_rng(0), swap=False)
    assert len(best.scene_indices) == 12
    assert all(3 <= c <= 5 for c in best.object_counts)
    assert sum(best.object_counts) == 60
    assert best.optimality_gap == pytest.approx(0.0)
    chosen = [s for s in scenes if s.index in best.scene_indices]
    assert best.coverage == len(set().union(*(s.pairs() for s in chosen)))
    for seed in range(3):
        baseline = random_selection(scenes, len(catalog), config, np.random.default_rng(seed))
        assert all(3 <= c <= 5 for c in baseline.object_counts)
        assert best.coverage >= baseline.coverage
        print(f"coverage: selection {best.coverage}, random {baseline.coverage}")


def _independent_diversity(chosen: list[Scene], num_objects: int) -> float:
    """SceneReplica's diversity written out plainly: per object, the entropy of the poses it
    shows over the chosen scenes, summed."""
    import math
    from collections import Counter

    total = 0.0
    for obj in range(num_objects):
        poses = Counter(o.pose_index for s in chosen for o in s.objects if o.object_index == obj)
        n = sum(poses.values())
        total -= sum(c / n * math.log2(c / n) for c in poses.values())
    return total


def test_diversity_is_scenereplicas_and_the_swap_search_raises_it(
    catalog: tuple[CatalogEntry, ...], scenes: tuple[Scene, ...]
) -> None:
    config = SelectConfig(count=12, min_per_object=3, max_per_object=5)
    coverage_only = select_scenes(
        scenes, len(catalog), config, np.random.default_rng(0), swap=False
    )
    best = select_scenes(scenes, len(catalog), config, np.random.default_rng(0))
    for selection in (coverage_only, best):
        chosen = [s for s in scenes if s.index in selection.scene_indices]
        assert selection.diversity_bits == pytest.approx(
            _independent_diversity(chosen, len(catalog)), abs=1e-12
        )
        assert all(3 <= c <= 5 for c in selection.object_counts)
    assert best.swaps > 0
    assert best.diversity_bits > coverage_only.diversity_bits
    # The joint entropy is another number (it is not the sum of the per-object entropies).
    assert abs(best.joint_entropy_bits - best.diversity_bits) > 1.0
    again = select_scenes(scenes, len(catalog), config, np.random.default_rng(0))
    assert again.scene_indices == best.scene_indices


def test_scene_files_roundtrip_and_settle_in_the_simulator(
    catalog: tuple[CatalogEntry, ...], scenes: tuple[Scene, ...], tmp_path: Path
) -> None:
    write_candidates(tmp_path / "c", scenes[:3], catalog, TABLE, {"seed": 7})
    names, back = read_candidates(tmp_path / "c")
    assert names == [e.obj.name for e in catalog]
    for a, b in zip(back, scenes[:3], strict=True):
        assert a.pairs() == b.pairs()
        for pa, pb in zip(a.objects, b.objects, strict=True):
            np.testing.assert_allclose(
                pa.transform_world_object, pb.transform_world_object, atol=1e-9
            )
    for k in range(3):
        result = settle(tmp_path / "c" / "scenes" / f"scene_{k:03d}.yaml", duration_s=2.0)
        assert len(result.names) == 5
        assert result.max_displacement_m < 0.005, result
        assert result.max_tilt_deg < 2.0, result


@pytest.mark.slow
def test_reference_image_shows_the_objects_where_the_camera_sees_them(
    catalog: tuple[CatalogEntry, ...], scenes: tuple[Scene, ...], tmp_path: Path
) -> None:
    import math

    import yaml

    from grade_scenes.render import render_reference
    from grade_sim.config.tabletop import load_tabletop_scene

    write_candidates(tmp_path / "c", scenes[:1], catalog, TABLE, {"seed": 7})
    scene_file = tmp_path / "c" / "scenes" / "scene_000.yaml"
    data = yaml.safe_load(scene_file.read_text())
    data["objects"] = []
    data["pick_order"] = []  # it must name the scene's objects
    (tmp_path / "c" / "scenes" / "empty.yaml").write_text(yaml.safe_dump(data))
    with_objects = render_reference(scene_file, settle_s=0.1).astype(int)
    empty = render_reference(tmp_path / "c" / "scenes" / "empty.yaml", settle_s=0.1).astype(int)
    changed = np.abs(with_objects - empty).sum(axis=2) > 0
    cam = load_tabletop_scene(scene_file).camera
    position, target = np.array(cam.position_xyz), np.array(cam.target_xyz)
    forward = (target - position) / np.linalg.norm(target - position)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    focal = (cam.width / 2) / math.tan(math.radians(cam.hfov_deg) / 2)
    for placed in scenes[0].objects:
        d = placed.transform_world_object[:3, 3] - position
        u = cam.width / 2 + focal * float(d @ right) / float(d @ forward)
        v = cam.height / 2 - focal * float(d @ up) / float(d @ forward)
        r, c = round(v), round(u)
        assert changed[r - 2 : r + 3, c - 2 : c + 3].any(), (placed.object_index, u, v)
    # Away from the objects nothing changes: the image's top rows show the floor far away.
    assert not changed[:10].any()


@pytest.mark.slow
def test_grade_run_of_a_scene_records_object_poses_per_frame(
    catalog: tuple[CatalogEntry, ...], scenes: tuple[Scene, ...], tmp_path: Path, repo_root: Path
) -> None:
    import json

    from grade_cli.main import main
    from grade_common.rotations import quat_to_matrix
    from grade_common.tum import OBJECT_POSES_JSONL

    write_candidates(tmp_path / "c", scenes[:1], catalog, TABLE, {"seed": 7})
    scene_file = tmp_path / "c" / "scenes" / "scene_000.yaml"
    env = f"environment={{type: tabletop, tabletop: {{scene: {scene_file}}}}}"
    run = tmp_path / "run"
    args = ["run", str(repo_root / "config/tabletop.yaml"), "--out", str(run), "--quiet"]
    assert main([*args, "--set", "duration_s=0.3", "--set", env]) == 0
    camera = run / "gt" / "camera_rig" / "camera"
    frames = [json.loads(line) for line in (camera / OBJECT_POSES_JSONL).read_text().splitlines()]
    assert len(frames) >= 3
    cams = {
        round(float(r[0]), 6): np.array(r[1:], dtype=float)
        for r in (ln.split() for ln in (camera / "groundtruth.txt").read_text().splitlines())
        if not r[0].startswith("#")
    }
    names = [catalog[p.object_index].obj.name for p in scenes[0].objects]
    for frame in frames:
        assert sorted(frame["objects"]) == sorted(names)
        tum = cams[round(frame["t"], 6)]  # x y z qx qy qz qw
        t_wo = np.eye(4)
        t_wo[:3, :3] = quat_to_matrix(np.array([tum[6], tum[3], tum[4], tum[5]]))
        t_wo[:3, 3] = tum[:3]
        for placed, name in zip(scenes[0].objects, names, strict=True):
            pose = frame["objects"][name]
            world = np.asarray(pose["position_world"])
            # The objects rest where the scene put them (settled, < 5 mm) ...
            assert np.linalg.norm(world - placed.transform_world_object[:3, 3]) < 0.005
            # ... and the camera-frame pose is the world pose seen from the camera.
            in_world = t_wo @ np.asarray(pose["transform_optical_object"])
            np.testing.assert_allclose(in_world[:3, 3], world, atol=1e-6)
