"""6-DOF grasp planning for a parallel gripper: antipodal pairs sampled on the object's surface,
each with approaches from above, at an angle and from the side, ranked, and checked with FCL
(the gripper's real collision meshes) against the table and the objects.

Surface points come from the object's convex hull (the surface the simulator collides) or,
for the model-free pipeline, from the observed partial points with their estimated normals;
the hull (there: of the observed points and their shadow on the table) is where a ray leaves
the object. For a point p with outward normal n, rays along -n and along -n's horizontal part
leave the hull at q (normal n_q); the pair is antipodal when both normals lie within the
friction cone of the axis p -> q. (The horizontal ray keeps the chords a top-down grasp needs:
on a lying can, rays along -n find only diameters.)

For a pair with closing axis a and centre c, the approach z (the tool's axis) is perpendicular
to a: tilted by each of `approach_tilts_deg` from the most downward such direction d towards
the horizontal h = a x d, turned so that the hand comes from the robot's side (0 deg: from
above; 90 deg: from the side). A closing axis too steep for any approach from above gets only
the side approach. A grasp is ranked by how antipodal its normals are, how close its centre
lies to the centre of mass, and how far it tilts from top-down (top-down grasps are the surer
ones when both exist); it is kept when it fits the open gripper, its finger pads stay above
the table, and the open gripper at the grasp pose touches neither the table, nor the other
objects, nor the target.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np
import trimesh

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_scenes.errors import ObjectSetError
from grade_scenes.perceive.register import surface_samples
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
    approach_tilts_deg: tuple[float, ...] = field(
        default=(0.0, 45.0, 90.0), metadata=bounds(0.0, 90.0)
    )
    tilt_penalty_per_rad: float = field(default=0.5, metadata=bounds(0.0, 100.0))


@dataclass(frozen=True)
class Grasp:
    """A 6-DOF grasp: TCP pose in the world (z the approach, y along the closing axis)."""

    transform_world_tcp: FloatArray  # (4, 4)
    center_world: FloatArray  # (3,) midpoint of the two contacts (the pads' centre)
    width_m: float
    score: float
    tilt_deg: float = 0.0  # of the approach from straight down

    @property
    def closing(self) -> FloatArray:
        out: FloatArray = self.transform_world_tcp[:3, 1]
        return out

    @property
    def approach(self) -> FloatArray:
        out: FloatArray = self.transform_world_tcp[:3, 2]
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


def _tcp_pose(center: FloatArray, closing: FloatArray, approach: FloatArray) -> FloatArray:
    y = closing / np.linalg.norm(closing)
    z = approach / np.linalg.norm(approach)
    x = np.cross(y, z)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([x, y, z], axis=1)
    pose[:3, 3] = center + PAD_BELOW_TCP_M * z
    return pose


def approaches(
    axis: FloatArray, center: FloatArray, base_xy: FloatArray, tilts_deg: tuple[float, ...]
) -> list[tuple[float, FloatArray]]:
    """(tilt in degrees, approach direction) pairs perpendicular to the closing axis (module
    doc)."""
    down = DOWN - float(DOWN @ axis) * axis
    steep = float(np.linalg.norm(down)) < 0.2  # closing axis near vertical: no approach from above
    if steep:
        away = np.array([*(center[:2] - base_xy), 0.0])
        side = away - float(away @ axis) * axis
        if float(np.linalg.norm(side)) < 1e-6:
            return []
        return [(90.0, side / np.linalg.norm(side))]
    down /= np.linalg.norm(down)
    side = np.cross(axis, down)
    if float(side[:2] @ (center[:2] - base_xy)) < 0:
        side = -side
    out = []
    for tilt in tilts_deg:
        t = np.radians(tilt)
        out.append((float(tilt), np.cos(t) * down + np.sin(t) * side))
    return out


def sample_grasps(
    hull: trimesh.Trimesh,
    transform_world_object: FloatArray,
    table_top_m: float,
    config: GraspConfig,
    rng: np.random.Generator,
    base_xy: FloatArray | None = None,
    surface_world: tuple[FloatArray, FloatArray] | None = None,
) -> list[Grasp]:
    """Antipodal 6-DOF grasps of one object, best first (see module doc); FCL not yet.

    Args:
        base_xy: the robot base's position (approaches come from its side); default origin.
        surface_world: observed (points, outward normals) to sample contacts on instead of
            the hull's surface (model-free).
    """
    world_hull = hull.copy()
    world_hull.apply_transform(transform_world_object)
    com = transform_world_object[:3, 3]
    base = np.zeros(2) if base_xy is None else np.asarray(base_xy)
    if surface_world is None:
        points, faces = surface_samples(world_hull, config.samples, rng)
        normals = world_hull.face_normals[faces]
    else:
        picked = rng.choice(
            len(surface_world[0]), size=min(config.samples, len(surface_world[0])), replace=False
        )
        points, normals = surface_world[0][picked], surface_world[1][picked]
    # rays along -n, and along its horizontal part where that is not too short
    level = -normals.copy()
    level[:, 2] = 0.0
    size = np.linalg.norm(level, axis=1)
    usable = size > np.sin(config.friction_cone_rad)
    ray_points = np.vstack([points, points[usable]])
    ray_normals = np.vstack([normals, normals[usable]])
    directions = np.vstack([-normals, level[usable] / size[usable, None]])
    hits, ray_ids, hit_faces = world_hull.ray.intersects_location(
        ray_points - 1e-5 * ray_normals, directions, multiple_hits=False
    )
    grasps = []
    cos_cone = np.cos(config.friction_cone_rad)
    for hit, ray, face in zip(hits, ray_ids, hit_faces, strict=True):
        p, n = ray_points[ray], ray_normals[ray]
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
        base_score = quality - 10.0 * off_com - 3.0 * abs(center[2] - com[2])
        for tilt, approach in approaches(axis, center, base, config.approach_tilts_deg):
            score = base_score - config.tilt_penalty_per_rad * np.radians(tilt)
            grasps.append(Grasp(_tcp_pose(center, axis, approach), center, width, score, tilt))
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
    world: PickWorld, objects: list[tuple[trimesh.Trimesh, FloatArray]]
) -> trimesh.collision.CollisionManager:
    """FCL scene of the table (a box) and the given objects (hull, world pose of its frame)."""
    manager = trimesh.collision.CollisionManager()  # type: ignore[no-untyped-call]
    t = world.table
    table = trimesh.creation.box(extents=(t.size_m[0], t.size_m[1], t.thickness_m))
    pose = np.eye(4)
    pose[:3, 3] = [t.center_x_m, 0.0, t.top_height_m - t.thickness_m / 2]
    manager.add_object("table", table, pose)  # type: ignore[no-untyped-call]
    for k, (hull, transform) in enumerate(objects):
        manager.add_object(f"object_{k}", hull, transform)  # type: ignore[no-untyped-call]
    return manager
