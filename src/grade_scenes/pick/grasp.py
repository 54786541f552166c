"""Grasp planning for a parallel gripper approaching from above: antipodal pairs sampled on
the object's collision mesh, ranked, and checked with FCL against the table and the objects.

The samples are taken on the object's convex hull, the surface the simulator collides. The hand
comes straight down, so the closing axis is horizontal (top-down grasps; side and tilted
approaches are not planned): for a point p with outward normal n, the horizontal ray from p
along -n's horizontal part leaves the hull at q (normal n_q); the pair is antipodal when both
normals lie within the friction cone of that axis. (Casting along -n itself would find only
diameters on curved objects: a lying can's lower chords, which keep the palm clear of its top,
would be missed.) A grasp is ranked by how antipodal its normals are and how close its centre
lies to the object's centre of mass; it is kept when it fits the open gripper, its finger pads
stay above the table, and the open gripper at the grasp pose (its real collision meshes, FCL)
touches neither the table, nor the other objects, nor the target.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np
import trimesh

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_scenes.errors import ObjectSetError
from grade_scenes.pick.world import PAD_BELOW_TCP_M, PickWorld
from grade_scenes.reach.robot import HOME_Q

DOWN = np.array([0.0, 0.0, -1.0])


@dataclass(frozen=True)
class GraspConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="grasp")

    samples: int = field(default=400, metadata=bounds(1, 100000))  # surface points per object
    # the pads open to 0.079 m; keep a margin
    max_width_m: float = field(default=0.075, metadata=bounds(0.001, 0.079))
    min_width_m: float = field(default=0.005, metadata=bounds(0.0, 0.079))
    friction_cone_rad: float = field(default=0.35, metadata=bounds(0.0, 1.5))
    # pad centre above the table top (pad half height 8 mm)
    pad_clearance_m: float = field(default=0.012, metadata=bounds(0.008, 0.5))
    keep: int = field(default=40, metadata=bounds(1, 10000))  # best-ranked grasps handed to IK


@dataclass(frozen=True)
class Grasp:
    """A top-down grasp: TCP pose in the world (z down, y along the closing axis)."""

    transform_world_tcp: FloatArray  # (4, 4)
    center_world: FloatArray  # (3,) midpoint of the two contacts (the pads' centre)
    width_m: float
    score: float

    @property
    def closing_xy(self) -> FloatArray:
        out: FloatArray = self.transform_world_tcp[:2, 1]
        return out


def gripper_shapes(world: PickWorld) -> list[tuple[trimesh.Trimesh, FloatArray]]:
    """The gripper's collision geoms (fingers open) as hulls with their poses in the TCP frame."""
    data = mujoco.MjData(world.model)
    data.qpos[world.arm_qpos] = HOME_Q
    data.qpos[world.finger_qpos] = [0.04, -0.04]
    mujoco.mj_kinematics(world.model, data)
    tcp = np.eye(4)
    tcp[:3, :3] = data.site_xmat[world.tcp_site].reshape(3, 3)
    tcp[:3, 3] = data.site_xpos[world.tcp_site]
    inv = np.linalg.inv(tcp)
    model = world.model
    shapes = []
    gripper_body = model.body("panda/gripper/right_gripper").id
    for g in sorted(world.robot_geoms):
        body = int(model.geom_bodyid[g])
        # Gripper geoms: the hand body and its descendants.
        chain = body
        while chain not in (0, gripper_body):
            chain = int(model.body_parentid[chain])
        if chain != gripper_body:
            continue
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            mesh_id = int(model.geom_dataid[g])
            start, count = model.mesh_vertadr[mesh_id], model.mesh_vertnum[mesh_id]
            vertices = np.asarray(model.mesh_vert[start : start + count], dtype=np.float64)
            shape = trimesh.convex.convex_hull(vertices)
        else:
            shape = trimesh.creation.box(extents=2 * np.asarray(model.geom_size[g]))
        pose = np.eye(4)
        pose[:3, :3] = data.geom_xmat[g].reshape(3, 3)
        pose[:3, 3] = data.geom_xpos[g]
        shapes.append((shape, inv @ pose))
    return shapes


def _tcp_pose(center: FloatArray, closing: FloatArray) -> FloatArray:
    y = np.array([closing[0], closing[1], 0.0])
    y /= np.linalg.norm(y)
    z = DOWN
    x = np.cross(y, z)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([x, y, z], axis=1)
    pose[:3, 3] = center + PAD_BELOW_TCP_M * z
    return pose


def sample_grasps(
    hull: trimesh.Trimesh,
    transform_world_object: FloatArray,
    table_top_m: float,
    config: GraspConfig,
    rng: np.random.Generator,
) -> list[Grasp]:
    """Antipodal top-down grasps of one object, best first (see module doc); FCL not yet."""
    world_hull = hull.copy()
    world_hull.apply_transform(transform_world_object)
    com = transform_world_object[:3, 3]
    areas = world_hull.area_faces
    faces = rng.choice(len(areas), size=config.samples, p=areas / areas.sum())
    tri = world_hull.triangles[faces]
    a, b = rng.uniform(size=(2, config.samples))
    flip = a + b > 1
    a[flip], b[flip] = 1 - a[flip], 1 - b[flip]
    points = tri[:, 0] + a[:, None] * (tri[:, 1] - tri[:, 0]) + b[:, None] * (tri[:, 2] - tri[:, 0])
    normals = world_hull.face_normals[faces]
    inward = -normals.copy()
    inward[:, 2] = 0.0
    level = np.linalg.norm(inward, axis=1)
    usable = level > np.sin(config.friction_cone_rad)  # else n is outside any horizontal cone
    points, normals = points[usable], normals[usable]
    inward = inward[usable] / level[usable, None]
    origins = points - 1e-5 * normals
    hits, ray_ids, hit_faces = world_hull.ray.intersects_location(
        origins, inward, multiple_hits=False
    )
    grasps = []
    cos_cone = np.cos(config.friction_cone_rad)
    for hit, ray, face in zip(hits, ray_ids, hit_faces, strict=True):
        p, n = points[ray], normals[ray]
        axis = hit - p
        width = float(np.linalg.norm(axis))
        if not config.min_width_m <= width <= config.max_width_m:
            continue
        axis /= width
        n_q = world_hull.face_normals[face]
        if float(-n @ axis) < cos_cone or float(n_q @ axis) < cos_cone:
            continue
        center = (p + hit) / 2
        if center[2] < table_top_m + config.pad_clearance_m:
            continue
        quality = float(-n @ n_q)
        off_com = float(np.linalg.norm(center[:2] - com[:2]))
        score = quality - 10.0 * off_com - 3.0 * abs(center[2] - com[2])
        grasps.append(Grasp(_tcp_pose(center, axis), center, width, score))
    grasps.sort(key=lambda g: -g.score)
    return grasps


def collision_free(
    grasps: list[Grasp],
    shapes: list[tuple[trimesh.Trimesh, FloatArray]],
    obstacles: trimesh.collision.CollisionManager,
    keep: int,
) -> list[Grasp]:
    """The first `keep` grasps at which the open gripper touches no obstacle (FCL)."""
    out = []
    for grasp in grasps:
        hit = False
        for shape, transform_tcp_geom in shapes:
            pose = grasp.transform_world_tcp @ transform_tcp_geom
            if obstacles.in_collision_single(shape, pose):  # type: ignore[no-untyped-call]
                hit = True
                break
        if not hit:
            out.append(grasp)
            if len(out) >= keep:
                break
    return out


def obstacle_manager(
    world: PickWorld,
    hulls: list[trimesh.Trimesh],
    transforms_world_object: list[FloatArray],
    present: list[bool],
) -> trimesh.collision.CollisionManager:
    """FCL scene of the table (a box) and every object still on it, at the given poses."""
    manager = trimesh.collision.CollisionManager()  # type: ignore[no-untyped-call]
    t = world.table
    table = trimesh.creation.box(extents=(t.size_m[0], t.size_m[1], t.thickness_m))
    pose = np.eye(4)
    pose[:3, 3] = [t.center_x_m, 0.0, t.top_height_m - t.thickness_m / 2]
    manager.add_object("table", table, pose)  # type: ignore[no-untyped-call]
    for k, (hull, transform) in enumerate(zip(hulls, transforms_world_object, strict=True)):
        if present[k]:
            manager.add_object(f"object_{k}", hull, transform)  # type: ignore[no-untyped-call]
    return manager
