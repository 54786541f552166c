"""A grid of scenes seen from above: table, reachable blocks and each object's footprint."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import trimesh
from matplotlib.patches import Polygon, Rectangle
from scipy.spatial import ConvexHull

from grade_common.atomic import StagedOutput
from grade_scenes.generate import Scene
from grade_scenes.reach.reachability import ReachabilityMap


def plot_scene_grid(
    scenes: tuple[Scene, ...],
    shapes: list[tuple[trimesh.Trimesh, tuple[float, ...]]],
    reach: ReachabilityMap,
    path: str | Path,
    columns: int = 5,
) -> Path:
    """Top views of `scenes` (x up the page, y to the left) in a grid, into a new PNG.

    `shapes[k]` is object k's mesh (centre-of-mass frame) and colour.
    """
    rows = max(1, -(-len(scenes) // columns))
    fig, axes = plt.subplots(rows, columns, figsize=(1.9 * columns, 1.9 * rows), dpi=90)
    table = reach.table
    centers = table.cell_centers_xy()
    half = table.cell_size_m / 2
    lo_x, hi_x = centers[..., 0].min() - half, centers[..., 0].max() + half
    lo_y, hi_y = centers[..., 1].min() - half, centers[..., 1].max() + half
    for k, ax in enumerate(np.atleast_1d(axes).ravel()):
        ax.set_axis_off()
        if k >= len(scenes):
            continue
        ax.add_patch(Rectangle((-hi_y, lo_x), hi_y - lo_y, hi_x - lo_x, color="#efe6d8"))
        for i, j in np.argwhere(reach.reachable):
            x, y = centers[i, j]
            ax.add_patch(Rectangle((-y - half, x - half), 2 * half, 2 * half, color="#d5ecd4"))
        for placed in scenes[k].objects:
            mesh, rgba = shapes[placed.object_index]
            t = placed.transform_world_object
            pts = mesh.convex_hull.vertices @ t[:3, :3].T + t[:3, 3]
            xy = np.stack([-pts[:, 1], pts[:, 0]], axis=1)
            hull = ConvexHull(xy)
            ax.add_patch(Polygon(xy[hull.vertices], color=rgba[:3], ec="black", lw=0.5))
        margin = 0.12  # objects reach beyond the blocks their centres stand on
        ax.set_xlim(-hi_y - margin, -lo_y + margin)
        ax.set_ylim(lo_x - margin, hi_x + margin)
        ax.set_aspect("equal")
        ax.set_title(f"scene {scenes[k].index}", fontsize=7)
    fig.tight_layout()
    with StagedOutput(path) as tmp:
        fig.savefig(tmp)
    plt.close(fig)
    return Path(path)
