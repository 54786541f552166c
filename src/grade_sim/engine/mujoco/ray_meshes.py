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
) -> list[RayMesh]:
    """The RayMesh of every rendered geom; `mocap_ids[i]` is actor body i's mocap index."""
    actor_of_mocap = {int(m): i for i, m in enumerate(mocap_ids)}
    out = []
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
