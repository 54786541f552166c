"""The MuJoCo model's visible geoms as triangle meshes (RayMesh), read generically from the model.

Whatever the builder put into the model (rooms, furniture, people's body parts, flying objects,
robots) comes out the same way: by geom type and size, so the lidar sees exactly what the
cameras render, and a change of the people's geometry needs no change here.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import quat_to_matrix
from grade_common.types import FloatArray
from grade_sim.engine import tessellate
from grade_sim.engine.protocol import MeshOwner, RayMesh

RENDERED_GROUPS = 3  # MuJoCo's default visualisation shows geom groups 0, 1 and 2


def geom_triangles(model: Any, geom: int, segments: int) -> FloatArray:
    """One geom's triangles in its own frame (MuJoCo size conventions)."""
    gtype = int(model.geom_type[geom])
    size = model.geom_size[geom]
    g = mujoco.mjtGeom
    if gtype == g.mjGEOM_BOX:
        return tessellate.box(size)
    if gtype == g.mjGEOM_SPHERE:
        return tessellate.sphere(float(size[0]), segments)
    if gtype == g.mjGEOM_CAPSULE:
        return tessellate.capsule(float(size[0]), float(size[1]), segments)
    if gtype == g.mjGEOM_CYLINDER:
        return tessellate.cylinder(float(size[0]), float(size[1]), segments)
    if gtype == g.mjGEOM_ELLIPSOID:
        return tessellate.ellipsoid(size, segments)
    if gtype == g.mjGEOM_PLANE:
        return tessellate.plane(float(size[0]), float(size[1]))
    if gtype == g.mjGEOM_MESH:
        mesh = int(model.geom_dataid[geom])
        v0, nv = int(model.mesh_vertadr[mesh]), int(model.mesh_vertnum[mesh])
        f0, nf = int(model.mesh_faceadr[mesh]), int(model.mesh_facenum[mesh])
        verts = np.asarray(model.mesh_vert[v0 : v0 + nv], dtype=np.float64)
        out: FloatArray = verts[model.mesh_face[f0 : f0 + nf]]
        return out
    return np.zeros((0, 3, 3))  # height fields and SDFs: not built by this project


def ray_meshes(
    model: Any,
    data: Any,
    geom_instance_ids: NDArray[np.uint16],
    mocap_ids: NDArray[np.int64],
    segments: int,
    skin_instance_ids: NDArray[np.uint16] | None = None,
) -> list[RayMesh]:
    """The RayMesh of every rendered geom and skin; `mocap_ids[i]` is actor body i's mocap index."""
    actor_of_mocap = {int(m): i for i, m in enumerate(mocap_ids)}
    out = skin_ray_meshes(model, skin_instance_ids, actor_of_mocap) if model.nskin else []
    for geom in range(model.ngeom):
        if model.geom_group[geom] >= RENDERED_GROUPS:
            continue
        mat = int(model.geom_matid[geom])
        rgba = np.asarray(model.mat_rgba[mat] if mat >= 0 else model.geom_rgba[geom], float)
        if rgba[3] <= 0.0:
            continue
        local = geom_triangles(model, geom, segments)
        if not len(local):
            continue
        body = int(model.geom_bodyid[geom])
        instance = int(geom_instance_ids[geom])
        if body == 0:
            world = tessellate.transform(
                local, data.geom_xmat[geom].reshape(3, 3), data.geom_xpos[geom]
            )
            out.append(RayMesh(instance, MeshOwner.STATIC, world, rgba))
            continue
        in_body = tessellate.transform(
            local, quat_to_matrix(model.geom_quat[geom]), model.geom_pos[geom]
        )
        mocap = int(model.body_mocapid[body])
        if mocap >= 0:
            out.append(
                RayMesh(instance, MeshOwner.ACTOR, in_body, rgba, actor_index=actor_of_mocap[mocap])
            )
            continue
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body) or ""
        robot, _, link = name.partition("/")
        out.append(RayMesh(instance, MeshOwner.ROBOT, in_body, rgba, robot=robot, link=link))
    return out


def _skin_rgba(model: Any, skin: int) -> FloatArray:
    """The skin's mean colour: its material's texture averaged (LiDAR reflectivity needs one)."""
    rgba = np.asarray(model.skin_rgba[skin], float)
    mat = int(model.skin_matid[skin])
    if mat < 0:
        return rgba
    tex = int(model.mat_texid[mat][mujoco.mjtTextureRole.mjTEXROLE_RGB])
    if tex < 0:
        return np.asarray(model.mat_rgba[mat], float)
    adr, n = int(model.tex_adr[tex]), int(model.tex_nchannel[tex])
    size = int(model.tex_width[tex]) * int(model.tex_height[tex]) * n
    mean = np.asarray(model.tex_data[adr : adr + size], float).reshape(-1, n)[:, :3].mean(axis=0)
    out: FloatArray = np.array([*(mean / 255.0), 1.0]) * np.asarray(model.mat_rgba[mat], float)
    return out


def skin_ray_meshes(
    model: Any, skin_instance_ids: NDArray[np.uint16] | None, actor_of_mocap: dict[int, int]
) -> list[RayMesh]:
    """Each skin split into rigid pieces, one per bone body: a triangle goes to the bone that
    weighs most on its corners, in that bone's frame at the bind pose.

    Exact where one bone moves a triangle; near bent joints the blended surface the cameras see
    and these rigid pieces differ by a few centimetres (test_ray_meshes measures it).
    """
    out = []
    for skin in range(model.nskin):
        if model.skin_group[skin] >= RENDERED_GROUPS:
            continue
        v0, nv = int(model.skin_vertadr[skin]), int(model.skin_vertnum[skin])
        f0, nf = int(model.skin_faceadr[skin]), int(model.skin_facenum[skin])
        verts = np.asarray(model.skin_vert[v0 : v0 + nv], dtype=np.float64)
        faces = np.asarray(model.skin_face[f0 : f0 + nf], dtype=np.int64)
        b0, nb = int(model.skin_boneadr[skin]), int(model.skin_bonenum[skin])
        weights = np.zeros((nv, nb))
        for k in range(nb):
            a, n = int(model.skin_bonevertadr[b0 + k]), int(model.skin_bonevertnum[b0 + k])
            weights[model.skin_bonevertid[a : a + n], k] = model.skin_bonevertweight[a : a + n]
        owner = weights[faces].sum(axis=1).argmax(axis=1)
        rgba = _skin_rgba(model, skin)
        instance = int(skin_instance_ids[skin]) if skin_instance_ids is not None else 0
        for k in range(nb):
            tris = verts[faces[owner == k]]
            if not len(tris):
                continue
            rot = quat_to_matrix(model.skin_bonebindquat[b0 + k])
            local = (tris - model.skin_bonebindpos[b0 + k]) @ rot
            body = int(model.skin_bonebodyid[b0 + k])
            mocap = int(model.body_mocapid[body])
            out.append(
                RayMesh(instance, MeshOwner.ACTOR, local, rgba, actor_index=actor_of_mocap[mocap])
            )
    return out
