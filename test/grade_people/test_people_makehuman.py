"""MakeHuman bodies (people.body: makehuman): seeded shapes, joints from the mesh, skin weights,
keypoints on the new skeleton, painted looks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grade_people.body_mesh import Clothing, body_mesh, clothing_texture, skin_vertices
from grade_people.makehuman.assets import MakeHumanDataError, load_assets
from grade_people.makehuman.body import PART_BODY, PART_EYE, makehuman_body
from grade_people.makehuman.dress import makehuman_params
from grade_people.makehuman.look import Hair, random_outfit
from grade_people.makehuman.shape import (
    AGE_RANGE_YEARS,
    MakeHumanShape,
    random_shape,
    target_weights,
)
from grade_people.skeleton import (
    JOINT_INDEX,
    JOINT_NAMES,
    N_JOINTS,
    BodyParams,
    coco17_world,
    face_points,
    rest_offsets,
    rest_positions,
)

RANGE_M = (1.5, 1.95)


def _shapes(seed: int, n: int) -> list[MakeHumanShape]:
    rng = np.random.default_rng(seed)
    return [random_shape(RANGE_M, rng) for _ in range(n)]


def _params(shape: MakeHumanShape) -> BodyParams:
    return makehuman_params(shape)


def test_the_same_seed_gives_bit_identical_shapes_and_meshes() -> None:
    a, b = _shapes(5, 3), _shapes(5, 3)
    assert a == b
    makehuman_body.cache_clear()
    first = makehuman_body(a[0])
    makehuman_body.cache_clear()
    again = makehuman_body(b[0])
    assert np.array_equal(first.vertices, again.vertices)
    assert np.array_equal(first.joints, again.joints)
    assert np.array_equal(first.weights, again.weights)
    assert _shapes(6, 3) != a


def test_shapes_vary_like_adults_do() -> None:
    shapes = _shapes(1, 60)
    male = np.array([s.male > 0.5 for s in shapes])
    assert 0.25 < male.mean() < 0.75
    heights = np.array([s.height_m for s in shapes])
    assert RANGE_M[0] <= heights.min()
    assert heights.max() <= RANGE_M[1]
    assert heights[male].mean() - heights[~male].mean() > 0.07  # men ~13 cm taller on average
    ages = np.array([s.age_years for s in shapes])
    assert AGE_RANGE_YEARS[0] <= ages.min() < 25
    assert 55 < ages.max() <= AGE_RANGE_YEARS[1]
    assert np.ptp([s.weight for s in shapes]) > 0.4
    # Different phenotypes give different bodies, beyond their stature.
    bodies = [makehuman_body(s) for s in shapes[:4]]
    widths = [
        np.ptp(b.vertices[b.part == PART_BODY, 1]) / s.height_m
        for b, s in zip(bodies, shapes[:4], strict=True)
    ]
    assert np.ptp(widths) > 0.01


def test_macro_target_weights_form_a_partition_over_the_phenotype_corners() -> None:
    for shape in _shapes(2, 10):
        w = target_weights(shape)
        universal = sum(v for k, v in w.items() if k.startswith("universal-"))
        ancestry = sum(
            v for k, v in w.items() if k.split("-")[0] in ("african", "asian", "caucasian")
        )
        assert universal == pytest.approx(1.0)
        assert ancestry == pytest.approx(1.0)
        assert all(v > 0 for v in w.values())
        assert set(w) <= set(load_assets().targets)


def test_the_body_stands_on_the_floor_at_its_stature_in_the_rest_pose() -> None:
    for shape in _shapes(3, 3):
        body = makehuman_body(shape)
        v = body.vertices[body.part == PART_BODY]
        assert v[:, 2].min() == pytest.approx(0.0, abs=1e-12)
        assert v[:, 2].max() == pytest.approx(shape.height_m, abs=1e-9)
        off = rest_offsets(_params(shape))
        # Arms hang and legs stand straight: the offsets of grade's rest pose.
        for j in ("elbow", "wrist", "knee", "ankle"):
            for s in ("l", "r"):
                np.testing.assert_allclose(off[JOINT_INDEX[f"{j}_{s}"], :2], 0.0, atol=1e-9)
                assert off[JOINT_INDEX[f"{j}_{s}"], 2] < -0.15
        np.testing.assert_allclose(rest_positions(_params(shape)), body.joints, atol=1e-12)


def _ray_hits(origins: np.ndarray, dirs: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """(O, D) number of triangles each ray crosses (Moller-Trumbore, both faces)."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    e1, e2 = b - a, c - a
    out = np.zeros((len(origins), len(dirs)), dtype=np.int64)
    for k, d in enumerate(dirs):
        p = np.cross(d, e2)
        det = np.einsum("fi,fi->f", e1, p)
        ok = np.abs(det) > 1e-14
        inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        for i, o in enumerate(origins):
            s = o - a
            u = np.einsum("fi,fi->f", s, p) * inv
            q = np.cross(s, e1)
            v = (q @ d) * inv
            t = np.einsum("fi,fi->f", e2, q) * inv
            out[i, k] = int(np.sum(ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)))
    return out


def test_every_joint_lies_inside_the_mesh() -> None:
    body = makehuman_body(_shapes(4, 1)[0])
    tri = body.vertices[body.faces]
    dirs = np.array(
        [
            [1, 0, 0],
            [-1, 0, 0],
            [0, 1, 0],
            [0, -1, 0],
            [0, 0, 1],
            [0, 0, -1],
            [1, 1, 1],
            [-1, -1, 1],
        ],
        dtype=np.float64,
    )
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    hits = _ray_hits(body.joints, dirs, tri)
    # Enclosed: a ray from a joint leaves the body whichever way it goes.
    enclosed = (hits > 0).all(axis=1)
    assert enclosed.all(), [JOINT_NAMES[j] for j in np.flatnonzero(~enclosed)]


def test_skin_weights_sum_to_one_on_grades_joints_and_keep_the_fingers_as_mesh() -> None:
    shape = _shapes(7, 1)[0]
    body = makehuman_body(shape)
    assert body.weights.shape == (len(body.vertices), N_JOINTS)
    np.testing.assert_allclose(body.weights.sum(axis=1), 1.0, atol=1e-12)
    assert (body.weights >= 0).all()
    assert (body.weights > 0).any(axis=0).all()  # every joint moves some skin
    # Vertices MakeHuman's rig moves with finger bones only move with grade's wrist.
    weights = load_assets().weights
    for s in ("l", "r"):
        finger = np.zeros(len(load_assets().vertices), dtype=bool)
        for bone, pairs in weights.items():
            if bone.split("_")[0] in (
                "thumb",
                "index",
                "middle",
                "ring",
                "pinky",
            ) and bone.endswith(s):
                finger[pairs[pairs[:, 1] > 0.999, 0].astype(np.int64)] = True
        ours = finger[body.source_vertex]
        assert ours.sum() > 100  # five fingers of a few dozen vertices each
        np.testing.assert_allclose(body.weights[ours, JOINT_INDEX[f"wrist_{s}"]], 1.0)
    assert (body.weights[body.part == PART_EYE, JOINT_INDEX["head"]] == 1.0).all()
    # Rest-pose skinning is the identity (MuJoCo's <skin> binds at these joints).
    mesh = body_mesh(_params(shape), Clothing({}, False, False))  # type: ignore[arg-type]
    eye = np.broadcast_to(np.eye(3), (N_JOINTS, 3, 3))
    np.testing.assert_allclose(
        skin_vertices(mesh, body.joints, body.joints, eye), body.vertices, atol=1e-12
    )


def test_coco_keypoints_sit_on_the_new_skeleton_and_face() -> None:
    shape = _shapes(8, 1)[0]
    params = _params(shape)
    body = makehuman_body(shape)
    rest = rest_positions(params)
    eye = np.broadcast_to(np.eye(3), (N_JOINTS, 3, 3))
    kp = coco17_world(rest, eye, np.array(params.scale), face_points(params))
    np.testing.assert_allclose(kp[5], rest[JOINT_INDEX["shoulder_l"]])
    np.testing.assert_allclose(kp[16], rest[JOINT_INDEX["ankle_r"]])
    nose, eye_l, eye_r, ear_l, ear_r = kp[:5]
    skin = body.vertices
    for point, limit in (
        (nose, 1e-9),
        (ear_l, 1e-9),
        (ear_r, 1e-9),
        (eye_l, 0.015),
        (eye_r, 0.015),
    ):
        assert np.linalg.norm(skin - point, axis=1).min() <= limit
    assert nose[0] > eye_l[0] > ear_l[0]  # facing +x
    assert eye_l[1] > 0 > eye_r[1]
    assert ear_l[1] > eye_l[1]
    assert eye_l[2] > nose[2]
    assert rest[JOINT_INDEX["neck"], 2] < nose[2] < shape.height_m


def test_looks_are_seeded_and_painted_into_the_layout() -> None:
    shape = _shapes(9, 1)[0]
    a = random_outfit(shape, np.random.default_rng(3))
    assert a == random_outfit(shape, np.random.default_rng(3))
    tex = clothing_texture(Clothing({}, False, False, a))  # type: ignore[arg-type]
    assert tex.shape == (1024, 1024, 3)
    assert tex.dtype == np.uint8
    assert np.array_equal(tex, clothing_texture(Clothing({}, False, False, a)))  # type: ignore[arg-type]
    colours = tex.reshape(-1, 3).astype(np.int64)
    skin = np.round(np.asarray(a.skin) * 255)
    assert (np.abs(colours - skin).max(axis=1) <= 12).mean() > 0.03  # face, hands, neck
    # Looks vary over people: several hair styles and garments among 40 draws.
    rng = np.random.default_rng(4)
    looks = [random_outfit(s, rng) for s in _shapes(10, 40)]
    assert len({o.hair for o in looks}) >= 4
    assert len({o.top for o in looks}) >= 3
    assert len({o.bottom for o in looks}) >= 3
    assert Hair.LONG in {o.hair for o in looks}
    tones = np.array([np.mean(o.skin) for o in looks])
    assert tones.min() < 0.45
    assert tones.max() > 0.7


def test_missing_data_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(MakeHumanDataError, match="make setup"):
        load_assets(tmp_path / "none.npz")


def _people(seed: int):  # type: ignore[no-untyped-def]
    """The People group of a small scene of MakeHuman people."""
    from grade_sim.actors.people_group import People
    from grade_sim.config.scenario import scenario_from_mapping
    from grade_sim.scene import build_scene

    return build_scene(
        scenario_from_mapping(
            {
                "seed": seed,
                "duration_s": 2.0,
                "environment": {"procedural": {"rooms_x": 1, "rooms_y": 1}},
                "people": {"count": 3, "body": "makehuman"},
                "flying_objects": {"count": 0},
            }
        )
    ).group(People)


def test_a_scene_of_makehuman_people_is_bit_identical_for_a_seed() -> None:
    a, b = _people(3), _people(3)
    assert a.specs == b.specs
    assert all(p.body is not None and p.body.shape is not None for p in a.specs)
    assert len({p.body.shape for p in a.specs if p.body is not None}) == 3
    step = 40
    for sa, sb in zip(a.skins_world(step), b.skins_world(step), strict=True):
        assert np.array_equal(sa, sb)
    kp = a.keypoints_world(step)
    assert np.array_equal(kp, b.keypoints_world(step))
    # The face's keypoints stay on the posed skin (nose and ears are skin vertices).
    for i, skin in enumerate(a.skins_world(step)):
        for k in (0, 3, 4):
            assert np.linalg.norm(skin - kp[i, k], axis=1).min() < 1e-9
    assert _people(4).specs != a.specs
