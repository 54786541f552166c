"""What the robot knows about the objects before each attempt: one perception pipeline per name.

- `ground_truth`: the poses from the physics state (with optional seeded noise) and the known
  collision hulls: the upper bound.
- `model_based`: the head camera's depth image, rendered each time the arm looks (arm at home,
  out of the view); the table plane and Euclidean clusters (`perceive.cloud`); each known
  object's mesh registered to the clusters (`perceive.register`: FPFH + RANSAC, then ICP; the
  assignment picks which cluster is which object). Grasps are planned on the known hull at the
  estimated pose.
- `model_free`: the same segmentation, no meshes. Each cluster's shape is the convex hull of
  its observed points and their shadow on the table plane (the hidden side is assumed to go
  straight down to the table); grasps are sampled on the observed points with their normals
  (Open3D's estimate, turned towards the camera). Which physical object a cluster is (for the
  books, and for the fixed ordering's "pick this one") is read from the simulator's
  segmentation image: the object most of the cluster's pixels show, as the operator of
  SceneReplica's fixed ordering points at the object to pick.

An object without a cluster is not found: it is no obstacle for planning, and an attempt on it
is a perception failure.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol

import mujoco
import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_scenes.errors import ObjectSetError
from grade_scenes.perceive.cloud import CameraView, SegmentConfig, Segments, segment_table
from grade_scenes.perceive.register import Fit, Model, RegisterConfig, assign
from grade_scenes.pick.world import HEAD_CAMERA, PickWorld
from grade_scenes.render import offscreen_renderer


class Pipeline(enum.Enum):
    GROUND_TRUTH = "ground_truth"
    MODEL_BASED = "model_based"
    MODEL_FREE = "model_free"


@dataclass(frozen=True)
class PerceptionConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="perception")

    pose_noise_m: float = field(default=0.0, metadata=bounds(0.0, 0.05))  # ground truth only
    pose_noise_deg: float = field(default=0.0, metadata=bounds(0.0, 30.0))  # ground truth only
    # the head camera's depth image for perception (the scene camera's field of view)
    width: int = field(default=960, metadata=bounds(16, 4096))
    height: int = field(default=720, metadata=bounds(16, 4096))
    segment: SegmentConfig = field(default_factory=SegmentConfig)
    register: RegisterConfig = field(default_factory=RegisterConfig)


@dataclass(frozen=True)
class Estimate:
    """One object as the pipeline sees it."""

    transform_world_object: FloatArray  # (4, 4): the hull's frame in the world
    hull: trimesh.Trimesh  # in that frame: what planning collides and grasps
    surface_world: tuple[FloatArray, FloatArray] | None = None  # observed points, normals
    fit: Fit | None = None  # model-based registration
    cluster: int | None = None  # index into the look's segments


@dataclass(frozen=True)
class Look:
    """The result of one look: estimates of the objects found (by object index)."""

    estimates: dict[int, Estimate]
    segments: Segments | None = None
    view: CameraView | None = None
    depth_m: FloatArray | None = None


class Perceiver(Protocol):
    def look(self, world: PickWorld, present: list[bool]) -> Look: ...

    def close(self) -> None: ...


def head_view(world: PickWorld, width: int, height: int) -> CameraView:
    cam = world.model.camera(HEAD_CAMERA).id
    pose = np.eye(4)
    pose[:3, :3] = world.data.cam_xmat[cam].reshape(3, 3)
    pose[:3, 3] = world.data.cam_xpos[cam]
    return CameraView(width, height, float(world.model.cam_fovy[cam]), pose)


class GroundTruth:
    """Physics-state poses (+ seeded noise) and the collision hulls."""

    def __init__(self, world: PickWorld, config: PerceptionConfig, rng: np.random.Generator):
        self.config, self.rng = config, rng
        self.hulls = [world.object_hull(k) for k in range(len(world.object_names))]

    def look(self, world: PickWorld, present: list[bool]) -> Look:
        out = {}
        for k in range(len(present)):
            pose = world.object_pose(k)
            c = self.config
            if c.pose_noise_m > 0 or c.pose_noise_deg > 0:
                pose[:3, 3] += self.rng.normal(scale=c.pose_noise_m, size=3) * [1, 1, 0]
                turn = Rotation.from_rotvec(np.radians(c.pose_noise_deg) * self.rng.normal(size=3))
                pose[:3, :3] = turn.as_matrix() @ pose[:3, :3]
            if present[k]:
                out[k] = Estimate(pose, self.hulls[k])
        return Look(out)

    def close(self) -> None:
        pass


class _Camera:
    """The head camera's depth and segmentation images at the perception resolution."""

    def __init__(self, world: PickWorld, config: PerceptionConfig, rng: np.random.Generator):
        self.config, self.rng = config, rng
        self.renderer = offscreen_renderer(world.model, config.height, config.width)
        self.option = mujoco.MjvOption()
        self.option.sitegroup[:] = 0

    def depth(self, world: PickWorld) -> FloatArray:
        self.renderer.enable_depth_rendering()
        self.renderer.update_scene(world.data, camera=HEAD_CAMERA, scene_option=self.option)
        out: FloatArray = np.asarray(self.renderer.render(), dtype=np.float64).copy()
        self.renderer.disable_depth_rendering()
        return out

    def body_ids(self, world: PickWorld) -> np.ndarray:
        """(h, w) body id per pixel (-1: background), from MuJoCo's segmentation render."""
        self.renderer.enable_segmentation_rendering()
        self.renderer.update_scene(world.data, camera=HEAD_CAMERA, scene_option=self.option)
        seg = np.asarray(self.renderer.render()).copy()
        self.renderer.disable_segmentation_rendering()
        geoms, types = seg[..., 0], seg[..., 1]
        out = np.full(geoms.shape, -1, dtype=np.int64)
        is_geom = (geoms >= 0) & (types == int(mujoco.mjtObj.mjOBJ_GEOM))
        out[is_geom] = world.model.geom_bodyid[geoms[is_geom]]
        return out

    def segments(self, world: PickWorld) -> tuple[Segments, CameraView, FloatArray]:
        depth = self.depth(world)
        view = head_view(world, self.config.width, self.config.height)
        t = world.table
        segments = segment_table(
            depth,
            view,
            (t.center_x_m, 0.0),
            t.size_m,
            t.top_height_m,
            self.config.segment,
            self.rng,
        )
        return segments, view, depth

    def close(self) -> None:
        self.renderer.close()


@dataclass(frozen=True)
class _Seen:
    """A cluster of an earlier look and its fits by object index."""

    count: int
    centroid: FloatArray
    fits: dict[int, Fit]

    def same(self, points: FloatArray) -> bool:
        """The same observation: point count within 1 %, centroid within 1 mm. Registration
        is deterministic, so reusing its fits saves time and changes nothing else."""
        close = float(np.linalg.norm(points.mean(axis=0) - self.centroid)) < 0.001
        return close and abs(len(points) - self.count) <= 0.01 * self.count


class ModelBased:
    """Known meshes registered to the head camera's clusters (module doc)."""

    def __init__(
        self,
        world: PickWorld,
        meshes: list[trimesh.Trimesh],
        config: PerceptionConfig,
        rng: np.random.Generator,
    ):
        self.camera = _Camera(world, config, rng)
        self.config = config
        self.seed = int(rng.integers(2**31))
        self.models = [
            Model.from_mesh(n, m, config.register.model_points, rng)
            for n, m in zip(world.object_names, meshes, strict=True)
        ]
        self.hulls = [world.object_hull(k) for k in range(len(world.object_names))]
        self.seen: list[_Seen] = []

    def look(self, world: PickWorld, present: list[bool]) -> Look:
        """Segment, then register every present object's model to every cluster (fits of a
        cluster unchanged since the last look are reused, `_Seen`)."""
        segments, view, depth = self.camera.segments(world)
        keys = [k for k in range(len(present)) if present[k]]
        clusters = [segments.points_world[c] for c in segments.clusters]
        known = {}
        for j, points in enumerate(clusters):
            old = next((s for s in self.seen if s.same(points)), None)
            if old is not None:
                known.update({(i, j): old.fits[k] for i, k in enumerate(keys) if k in old.fits})
        matched, fits = assign(
            clusters,
            [self.models[k] for k in keys],
            depth,
            view,
            self.config.register,
            self.seed,
            known,
        )
        self.seen = [
            _Seen(
                len(points),
                points.mean(axis=0),
                {k: fits[i, j] for i, k in enumerate(keys) if (i, j) in fits},
            )
            for j, points in enumerate(clusters)
        ]
        estimates = {
            keys[i]: Estimate(fit.transform_world_object, self.hulls[keys[i]], fit=fit, cluster=j)
            for i, (j, fit) in matched.items()
        }
        return Look(estimates, segments, view, depth)

    def close(self) -> None:
        self.camera.close()


class ModelFree:
    """Clusters as unknown objects, grasps on the observed points (module doc)."""

    def __init__(self, world: PickWorld, config: PerceptionConfig, rng: np.random.Generator):
        self.camera = _Camera(world, config, rng)
        self.config = config

    def look(self, world: PickWorld, present: list[bool]) -> Look:
        import open3d as o3d

        segments, view, depth = self.camera.segments(world)
        bodies = self.camera.body_ids(world).ravel()
        index = {b: k for k, b in enumerate(world.object_bodies)}
        estimates: dict[int, Estimate] = {}
        eye = view.transform_world_camera[:3, 3]
        for j, cluster in enumerate(segments.clusters):
            shown = bodies[segments.pixels[cluster]]
            shown = shown[np.isin(shown, list(index))]
            if len(shown) == 0:
                continue
            values, counts = np.unique(shown, return_counts=True)
            k = index[int(values[np.argmax(counts)])]
            if not present[k] or k in estimates:
                continue
            points = segments.points_world[cluster]
            cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
            cloud.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=0.01, max_nn=30))
            normals = np.asarray(cloud.normals)
            normals[np.einsum("ij,ij->i", normals, eye - points) < 0] *= -1
            n, offset = segments.normal, segments.offset_m
            shadow = points - np.outer(points @ n - offset, n)
            centre = points.mean(axis=0)
            pose = np.eye(4)
            pose[:3, 3] = centre
            hull = trimesh.convex.convex_hull(np.vstack([points, shadow]) - centre)
            estimates[k] = Estimate(pose, hull, (points, normals), cluster=j)
        return Look(estimates, segments, view, depth)

    def close(self) -> None:
        self.camera.close()


def make_perceiver(
    pipeline: Pipeline,
    world: PickWorld,
    meshes: list[trimesh.Trimesh],
    config: PerceptionConfig,
    rng: np.random.Generator,
) -> Perceiver:
    """The pipeline's perceiver for this world (`meshes`: the known object meshes, object
    frame, for model-based)."""
    if pipeline is Pipeline.MODEL_BASED:
        return ModelBased(world, meshes, config, rng)
    if pipeline is Pipeline.MODEL_FREE:
        return ModelFree(world, config, rng)
    return GroundTruth(world, config, rng)
