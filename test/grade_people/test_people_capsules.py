"""Collision capsules fitted to the MakeHuman skin: they cover it, standing and walking, and
are a pure function of the body."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_people.body_mesh import body_mesh, random_clothing, skin_vertices
from grade_people.capsules import fit_capsules, outside_m
from grade_people.config import PersonMotion
from grade_people.makehuman.dress import makehuman_params
from grade_people.makehuman.shape import random_shape
from grade_people.motion import animation_track, pose_timeline
from grade_people.people import MOTION_CODES, PersonTimeline, cadence_hz
from grade_people.skeleton import N_JOINTS, BodyParams, rest_positions

DT_S = 1 / 240
_RNG = np.random.default_rng(11)
SHAPES = [random_shape((1.5, 1.95), _RNG) for _ in range(3)]


def _walk(body: BodyParams, speed_mps: float, n: int) -> PersonTimeline:
    x = np.arange(n) * DT_S * speed_mps
    phase = math.pi * float(cadence_hz(speed_mps, body.height_m)) * np.arange(n) * DT_S
    code = np.full(n, MOTION_CODES[PersonMotion.WALK], dtype=np.int8)
    return PersonTimeline(
        np.stack([x, np.zeros(n)], 1), np.zeros(n), phase, np.ones(n), code, np.full(n, np.nan)
    )


@pytest.mark.parametrize("shape_index", range(len(SHAPES)))
def test_capsules_cover_the_makehuman_skin_standing_and_walking(shape_index: int) -> None:
    body = makehuman_params(SHAPES[shape_index])
    mesh = body_mesh(body, random_clothing(np.random.default_rng(0)))
    caps = fit_capsules(mesh.vertices, mesh.weights)
    assert len(caps.joint) == N_JOINTS  # one per bone
    rest = rest_positions(body)
    # Rest pose (measured: 0.15-0.26 % of the vertices more than 2 cm out, at most 3.5 cm; the
    # rigid parts scaled by height left 0.6 % more than 5 cm out, at most 7 cm).
    out = outside_m(mesh.vertices, caps.a_rest, caps.b_rest, caps.radius_m)
    assert np.mean(out > 0.02) < 0.005
    assert out.max() < 0.05
    # Posed with the skeleton through a walk (and a run): the skin blends between bones, the
    # capsules are rigid, and they still cover it.
    for speed in (1.3, 3.0):
        tl = _walk(body, speed, 480)
        pos, rot = pose_timeline(body, tl, animation_track(tl, DT_S), DT_S, np.arange(60, 480, 40))
        for p, r in zip(pos, rot, strict=True):
            a, b = caps.posed(rest, p, r)
            out = outside_m(skin_vertices(mesh, rest, p, r), a, b, caps.radius_m)
            assert np.mean(out > 0.02) < 0.01
            assert out.max() < 0.08
    # Not a trivially fat cover: no capsule is wider than the body's half width.
    half_width = 0.5 * np.ptp(mesh.vertices[:, 1])
    assert caps.radius_m.max() < half_width


def test_capsules_are_a_pure_function_of_the_body() -> None:
    a = makehuman_params(SHAPES[0])
    mesh = body_mesh(a, random_clothing(np.random.default_rng(0)))
    one = fit_capsules(mesh.vertices, mesh.weights)
    two = fit_capsules(mesh.vertices.copy(), mesh.weights.copy())
    for x, y in zip(
        (one.joint, one.a_rest, one.b_rest, one.radius_m),
        (two.joint, two.a_rest, two.b_rest, two.radius_m),
        strict=True,
    ):
        assert x.tobytes() == y.tobytes()
    other = makehuman_params(SHAPES[1])
    mesh2 = body_mesh(other, random_clothing(np.random.default_rng(0)))
    assert fit_capsules(mesh2.vertices, mesh2.weights).radius_m.tobytes() != one.radius_m.tobytes()
