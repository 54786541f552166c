"""One person's MakeHuman body in grade's rest pose: skin mesh, rest joints, face points.

Core module (numpy only). `makehuman_body(shape)` blends the shape's targets into the base mesh,
places grade's joints from the mesh (rig.joint_positions), re-poses it into grade's rest pose,
keeps the decimated triangles of the body (decimate.py) and the eyeballs, stands it on the
floor at the origin, scales it to the shape's stature and splits vertices where the UV layout
has seams (MuJoCo's <skin> has one texture coordinate per vertex). The body
is a pure function of the shape (cached), so the same seed gives bit-identical bodies.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_people.makehuman.assets import EYE_GROUPS, MakeHumanAssets, load_assets
from grade_people.makehuman.rig import joint_positions, merged_weights, repose
from grade_people.makehuman.shape import MakeHumanShape, shaped_vertices_mh, to_grade_axes
from grade_people.skeleton import JOINT_INDEX, PARENTS

# Parts of the mesh, per vertex (the texture painter and tests use them).
PART_BODY, PART_EYE = 0, 1


@dataclass(frozen=True)
class MakeHumanBody:
    """A shaped body in grade's rest pose (standing at the origin, facing +x, z up, metres)."""

    vertices: FloatArray  # (V, 3), split at UV seams
    faces: NDArray[np.int32]  # (F, 3) counter-clockwise seen from outside
    texcoord: FloatArray  # (V, 2) MakeHuman's UV layout (v up)
    weights: FloatArray  # (V, J) rows sum to 1
    part: NDArray[np.int8]  # (V,) PART_BODY or PART_EYE
    source_vertex: NDArray[np.int32]  # (V,) index in base.obj
    joints: FloatArray  # (J, 3) rest joint positions
    face_points: FloatArray  # (5, 3) nose, left/right eye, left/right ear, from the head joint

    def rest_offsets(self) -> FloatArray:
        """(J, 3) each joint's offset from its parent (pelvis: from the floor)."""
        off = self.joints.copy()
        off[1:] -= self.joints[PARENTS[1:]]
        return off


def _split_seams(
    corners: NDArray[np.int64], n_uv: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int32]]:
    """Unique (vertex, uv) pairs of the triangles' corners (F, 3, 2): their vertex and uv
    indices, and the triangles over them."""
    flat = corners.reshape(-1, 2)
    key = flat[:, 0] * n_uv + flat[:, 1]
    uniq, inverse = np.unique(key, return_inverse=True)
    return uniq // n_uv, uniq % n_uv, inverse.reshape(-1, 3).astype(np.int32)


def _face_points(v: FloatArray, head: FloatArray, eye_centres: FloatArray) -> FloatArray:
    """COCO's nose, eyes and ears on the rest mesh, as offsets from the head joint.

    Nose: the most forward vertex near the midline between eye and mouth height. Eyes: the
    front of each eyeball. Ears: the most lateral vertex of each side at eye height behind the
    eyes.
    """
    eye_z = eye_centres[:, 2].mean()
    near = (np.abs(v[:, 1]) < 0.012) & (v[:, 2] < eye_z) & (v[:, 2] > eye_z - 0.06)
    nose = v[near][np.argmax(v[near, 0])]
    out = [nose]
    for c in eye_centres:
        out.append(c + np.array([0.011, 0.0, 0.0]))
    band = (np.abs(v[:, 2] - (eye_z - 0.01)) < 0.02) & (v[:, 0] < eye_centres[:, 0].mean() - 0.04)
    band &= v[:, 2] > head[2] - 0.02
    for sign in (1.0, -1.0):
        side = band & (sign * v[:, 1] > 0)
        out.append(v[side][np.argmax(sign * v[side, 1])])
    return np.asarray(out) - head


def build_body(assets: MakeHumanAssets, shape: MakeHumanShape) -> MakeHumanBody:
    """The body of `shape` (see the module docstring)."""
    v = to_grade_axes(shaped_vertices_mh(assets.vertices, assets.targets, shape))
    w_all = merged_weights(len(v), assets.weights, assets.bone_names)
    joints = joint_positions(v, assets.joint_groups)
    eye_vertices = np.unique(np.concatenate([assets.faces[g][:, :, 0].ravel() for g in EYE_GROUPS]))
    w_all[eye_vertices] = 0.0
    w_all[eye_vertices, JOINT_INDEX["head"]] = 1.0
    v, joints = repose(v, w_all, joints)
    eye_quads = np.concatenate([assets.faces[g] for g in EYE_GROUPS]).astype(np.int64)
    corners = np.concatenate(
        [
            np.stack([assets.coarse_tris, assets.coarse_tri_uv], axis=-1),
            eye_quads[:, [0, 1, 2]],
            eye_quads[:, [0, 2, 3]],
        ]
    )
    src, uv_idx, tris = _split_seams(corners, len(assets.uvs))
    part = np.where(np.isin(src, eye_vertices), PART_EYE, PART_BODY).astype(np.int8)
    body_v = v[np.unique(assets.coarse_tris)]
    floor = body_v[:, 2].min()
    scale = shape.height_m / (body_v[:, 2].max() - floor)
    origin = np.array([joints[0, 0], joints[0, 1], floor])
    verts = (v[src] - origin) * scale
    joints = (joints - origin) * scale
    eye_c = np.stack(
        [
            ((v[np.unique(assets.faces[g][:, :, 0])] - origin) * scale).mean(axis=0)
            for g in EYE_GROUPS
        ]
    )
    weights = w_all[src]
    if not np.allclose(weights.sum(axis=1), 1.0):
        raise ValueError("MakeHuman mesh has vertices without skin weights")
    face = _face_points(verts[part == PART_BODY], joints[JOINT_INDEX["head"]], eye_c)
    return MakeHumanBody(
        vertices=verts,
        faces=tris,
        texcoord=assets.uvs[uv_idx],
        weights=weights,
        part=part,
        source_vertex=src.astype(np.int32),
        joints=joints,
        face_points=face,
    )


@functools.lru_cache(maxsize=64)
def makehuman_body(shape: MakeHumanShape) -> MakeHumanBody:
    """The body of `shape` from the installed MakeHuman data (cached per shape)."""
    return build_body(load_assets(), shape)
