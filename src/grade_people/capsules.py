"""Collision capsules fitted to a skinned body: one per bone, rigid with it.

Core module (numpy only). The FCL placement (grade_sim/actors/placement.py) poses these with
the skeleton's joints at every physics step, so what it checks is the drawn skin's shape, not a
generic figure. A capsule is a segment and a radius; a point is inside when it is within the
radius of the segment.

Fit (`fit_capsules`, a pure function of the rest mesh: the same body gives the same capsules
bit for bit, there is nothing random in it): every vertex goes to the joint that weighs most
on it; a joint's capsule lies along the principal axis of its vertices (through their mean),
its radius the COVER_QUANTILE of their distances from that axis, its segment as long as the
vertices reach along the axis, less the radius at each end (the round caps cover those).
Joints with fewer than MIN_VERTICES vertices get no capsule (their skin is covered by their
neighbours': the mannequins' clavicles).

`body_capsules(body)` fits a person's skin (cached per body); `capsule_poses` poses them along
a timeline as FCL wants them (centre and rotation of a capsule along its local z).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_people.body_mesh import body_mesh, random_clothing
from grade_people.bvh import RetargetedMotion
from grade_people.motion import AnimationTrack, pose, pose_inputs
from grade_people.people import PersonTimeline
from grade_people.skeleton import BodyParams, rest_positions

COVER_QUANTILE = 0.98  # a capsule's radius: this quantile of its vertices' distances from its axis
MIN_VERTICES = 12  # a joint with fewer vertices than this gets no capsule


@dataclass(frozen=True)
class BoneCapsules:
    """Capsules rigid with the joints of one skeleton, in its rest pose."""

    joint: NDArray[np.int64]  # (C,) the joint each capsule moves with
    a_rest: FloatArray  # (C, 3) segment ends in the rest pose (world frame of the rest mesh)
    b_rest: FloatArray  # (C, 3)
    radius_m: FloatArray  # (C,)

    def posed(
        self, rest_joints: FloatArray, joint_pos: FloatArray, joint_rot: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Segment ends (..., C, 3) for posed joints (..., J, 3) and rotations (..., J, 3, 3)
        of a skeleton whose rest joint positions are rest_joints (J, 3)."""
        j = self.joint
        rot = joint_rot[..., j, :, :]
        pos = joint_pos[..., j, :]
        a = np.einsum("...cab,cb->...ca", rot, self.a_rest - rest_joints[j]) + pos
        b = np.einsum("...cab,cb->...ca", rot, self.b_rest - rest_joints[j]) + pos
        return a, b

    @property
    def half_length_m(self) -> FloatArray:
        out: FloatArray = 0.5 * np.linalg.norm(self.b_rest - self.a_rest, axis=1)
        return out


def fit_capsules(vertices: FloatArray, weights: FloatArray) -> BoneCapsules:
    """Capsules for the skin (V, 3) in the rest pose with bone weights (V, J) (module docstring)."""
    owner = np.argmax(weights, axis=1)
    joints, a_out, b_out, r_out = [], [], [], []
    for j in range(weights.shape[1]):
        v = vertices[owner == j]
        if len(v) < MIN_VERTICES:
            continue
        centre = v.mean(axis=0)
        _, _, vt = np.linalg.svd(v - centre, full_matrices=False)
        axis = vt[0] * (1.0 if vt[0][np.argmax(np.abs(vt[0]))] > 0 else -1.0)
        t = (v - centre) @ axis
        radial = np.linalg.norm((v - centre) - t[:, None] * axis, axis=1)
        r = float(np.quantile(radial, COVER_QUANTILE))
        lo, hi = float(t.min()) + r, float(t.max()) - r
        if lo > hi:
            lo = hi = 0.5 * (lo + hi)
        joints.append(j)
        a_out.append(centre + lo * axis)
        b_out.append(centre + hi * axis)
        r_out.append(r)
    return BoneCapsules(
        np.array(joints, dtype=np.int64), np.array(a_out), np.array(b_out), np.array(r_out)
    )


def outside_m(points: FloatArray, a: FloatArray, b: FloatArray, radius_m: FloatArray) -> FloatArray:
    """(N,) how far each point (N, 3) lies outside the nearest capsule (a, b: (C, 3) segment
    ends, radius_m (C,)); negative inside."""
    ab = b - a  # (C, 3)
    length2 = np.maximum(np.einsum("ck,ck->c", ab, ab), 1e-18)
    best = np.full(len(points), np.inf)
    for c in range(len(a)):
        s = np.clip((points - a[c]) @ ab[c] / length2[c], 0.0, 1.0)
        d = np.linalg.norm(points - (a[c] + s[:, None] * ab[c]), axis=1) - radius_m[c]
        best = np.minimum(best, d)
    return best


@functools.lru_cache(maxsize=256)
def body_capsules(body: BodyParams) -> BoneCapsules:
    """The capsules of a skinned person's body (MakeHuman or mannequin; the skin's shape does
    not depend on the clothing)."""
    mesh = body_mesh(body, random_clothing(np.random.default_rng(0)))
    return fit_capsules(mesh.vertices, mesh.weights)


def _z_to(u: FloatArray) -> FloatArray:
    """(..., 4) wxyz quaternions turning +z onto the unit vectors u (..., 3)."""
    w = 1.0 + u[..., 2]
    q = np.stack([w, -u[..., 1], u[..., 0], np.zeros_like(w)], axis=-1)
    flip = w < 1e-9  # u = -z: half a turn about x
    q[flip] = np.array([0.0, 1.0, 0.0, 0.0])
    out: FloatArray = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return out


def capsule_poses(
    body: BodyParams,
    timeline: PersonTimeline,
    track: AnimationTrack,
    dt_s: float,
    steps: NDArray[np.int64],
    clips: Sequence[RetargetedMotion] = (),
) -> tuple[FloatArray, FloatArray]:
    """Centres (K, C, 3) and wxyz rotations (K, C, 4) of body_capsules(body) posed by the
    motion library at `steps` (a capsule's segment along its local z), as the skin is drawn:
    the same poses, BVH clips included."""
    k = np.asarray(steps, dtype=np.int64)
    joint_pos, joint_rot = pose(
        [body] * len(k), pose_inputs(timeline, track, dt_s, k), [clips] * len(k)
    )
    caps = body_capsules(body)
    a, b = caps.posed(rest_positions(body), joint_pos, joint_rot)
    axis = b - a
    length = np.linalg.norm(axis, axis=-1, keepdims=True)
    u = np.where(length > 1e-12, axis / np.maximum(length, 1e-12), np.array([0.0, 0.0, 1.0]))
    return 0.5 * (a + b), _z_to(u)
