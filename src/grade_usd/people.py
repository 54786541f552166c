"""Skinned people as UsdSkel: one SkelRoot per person with its Skeleton, SkelAnimation and Mesh.

The simulator's skin is linear blend skinning with world-aligned rest frames
(grade_people.body_mesh.skin_vertices: v' = sum_j w_j (p_j + R_j (v - r_j))), which is UsdSkel's
skinning with bind transform j = translate(r_j) (the rest joint position, no rotation) and the
joint's posed world transform (R_j, p_j). The animation holds each joint's transform relative to
its parent, as UsdSkel wants, at the given steps; the mesh holds the rest pose and its weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import matrices_to_quats
from grade_common.types import FloatArray
from grade_people.skeleton import JOINT_NAMES, PARENTS, rest_positions
from grade_render.world_state import WorldState
from grade_sim.actors.people_group import People
from grade_sim.world.usd_semantics import apply_semantics
from grade_usd.materials import ST, MaterialLibrary


def joint_paths() -> list[str]:
    """UsdSkel joint paths ("pelvis/spine/chest", ...) in the skeleton's joint order."""
    paths: list[str] = []
    for j, name in enumerate(JOINT_NAMES):
        parent = int(PARENTS[j])
        paths.append(name if parent < 0 else f"{paths[parent]}/{name}")
    return paths


def local_transforms(pos: FloatArray, rot: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Joint transforms relative to their parents: translations (..., J, 3) and quaternions
    (..., J, 4) w x y z, from world positions (..., J, 3) and rotations (..., J, 3, 3)."""
    root = PARENTS < 0
    parent = np.where(root, np.arange(len(PARENTS)), PARENTS)
    rot_p_t = np.swapaxes(rot[..., parent, :, :], -1, -2)  # each joint's parent, inverted
    t = np.einsum("...ab,...b->...a", rot_p_t, pos - pos[..., parent, :])
    r = rot_p_t @ rot
    t[..., root, :] = pos[..., root, :]
    r[..., root, :, :] = rot[..., root, :, :]
    return t, matrices_to_quats(r)


def _influences(weights: FloatArray) -> tuple[NDArray[np.int32], NDArray[np.float32], int]:
    """Per vertex the joints with a weight and their weights, padded to the most any vertex
    has (UsdSkel's constant elementSize)."""
    per_vertex = int((weights > 0).sum(axis=1).max())
    order = np.argsort(-weights, axis=1)[:, :per_vertex]
    w = np.take_along_axis(weights, order, axis=1)
    idx = np.where(w > 0, order, 0).astype(np.int32)
    return idx, w.astype(np.float32), per_vertex


def define_people(stage: Any, world: WorldState, looks: MaterialLibrary) -> list[Any]:
    """Every skinned person under /World/People (SkelRoot, Skeleton, skinned Mesh); returns
    their SkelAnimation prims, in the scene's order of skinned people (`sample_people`)."""
    from pxr import Gf, Sdf, Tf, UsdGeom, UsdShade, UsdSkel, Vt

    scene = world.scene
    people = [p for p in scene.group(People).specs if p.body is not None]
    if not people:
        return []
    UsdGeom.Scope.Define(stage, "/World/People")
    skins = world.skins()
    joints = joint_paths()
    anims = []
    for i, (person, mesh, skin) in enumerate(
        zip(people, scene.group(People).meshes, skins, strict=True)
    ):
        assert person.body is not None
        name = str(Tf.MakeValidIdentifier(person.name))
        root = f"/World/People/{name}"
        UsdSkel.Root.Define(stage, root)
        skel = UsdSkel.Skeleton.Define(stage, f"{root}/Skeleton")
        rest = rest_positions(person.body)
        skel.CreateJointsAttr(joints)
        skel.CreateJointNamesAttr(list(JOINT_NAMES))
        bind = [Gf.Matrix4d(1.0).SetTranslate(Gf.Vec3d(*r.tolist())) for r in rest]
        skel.CreateBindTransformsAttr(Vt.Matrix4dArray(bind))
        rest_local, _ = local_transforms(rest, np.repeat(np.eye(3)[None], len(rest), axis=0))
        skel.CreateRestTransformsAttr(
            Vt.Matrix4dArray(
                [Gf.Matrix4d(1.0).SetTranslate(Gf.Vec3d(*t.tolist())) for t in rest_local]
            )
        )
        anim = UsdSkel.Animation.Define(stage, f"{root}/Skeleton/Animation")
        anim.CreateJointsAttr(joints)
        anim.CreateScalesAttr(Vt.Vec3hArray([Gf.Vec3h(1, 1, 1)] * len(joints)))
        binding = UsdSkel.BindingAPI.Apply(skel.GetPrim())
        binding.CreateAnimationSourceRel().SetTargets([anim.GetPath()])
        anims.append(anim)

        # A name unique in the stage: importers (Blender) name their objects after the prims.
        usd_mesh = UsdGeom.Mesh.Define(stage, f"{root}/{name}_skin")
        usd_mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(mesh.vertices.astype(np.float32)))
        faces = mesh.faces.astype(np.int32)
        usd_mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(faces), 3, np.int32)))
        usd_mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(faces.ravel()))
        usd_mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
        st = UsdGeom.PrimvarsAPI(usd_mesh).CreatePrimvar(
            ST, Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.vertex
        )
        st.Set(Vt.Vec2fArray.FromNumpy(skin.texcoord_uv.astype(np.float32)))
        mesh_binding = UsdSkel.BindingAPI.Apply(usd_mesh.GetPrim())
        mesh_binding.CreateSkeletonRel().SetTargets([skel.GetPath()])
        idx, w, per_vertex = _influences(mesh.weights)
        mesh_binding.CreateJointIndicesPrimvar(False, per_vertex).Set(
            Vt.IntArray.FromNumpy(idx.ravel())
        )
        mesh_binding.CreateJointWeightsPrimvar(False, per_vertex).Set(
            Vt.FloatArray.FromNumpy(w.ravel())
        )
        mesh_binding.CreateGeomBindTransformAttr(Gf.Matrix4d(1.0))
        material = looks.material(skin.rgba, skin.texture_rgb)
        UsdShade.MaterialBindingAPI.Apply(usd_mesh.GetPrim()).Bind(material)
        info = scene.instances.get(skin.instance_id)
        apply_semantics(usd_mesh.GetPrim(), info.label if info else "person", skin.instance_id)
        del i

    return anims


def sample_people(
    anims: list[Any], world: WorldState, steps: list[int], code: Callable[[int], float]
) -> None:
    """The joints' local transforms of every person at `steps` (time code `code(step)`)."""
    from pxr import Vt

    if not anims:
        return
    for k in steps:
        trans, quats = local_transforms(*world.scene.group(People).skeleton_poses(k))
        t = code(k)
        for i, anim in enumerate(anims):
            anim.GetTranslationsAttr().Set(Vt.Vec3fArray.FromNumpy(trans[i].astype(np.float32)), t)
            anim.GetRotationsAttr().Set(Vt.QuatfArray.FromNumpy(_xyzw(quats[i])), t)


def _xyzw(quats_wxyz: FloatArray) -> NDArray[np.float32]:
    """Vt.QuatfArray.FromNumpy takes (i, j, k, real): the imaginary part first."""
    return np.ascontiguousarray(np.roll(quats_wxyz, -1, axis=1), dtype=np.float32)
