"""The reachability map as a top-view picture: table, blocks (reachable or not), robot base."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import Circle, Rectangle

from grade_common.atomic import StagedOutput
from grade_scenes.reach.reachability import ReachabilityMap


def plot_reachability(reach: ReachabilityMap, path: str | Path) -> Path:
    """Draw the map (x forward up the page, y to the left) into a new PNG."""
    table = reach.table
    fig, ax = plt.subplots(figsize=(4.2, 4.6), dpi=100)
    sx, sy = table.size_m
    # Page coordinates: right = -y (the robot's right), up = +x (forward).
    ax.add_patch(Rectangle((-sy / 2, table.center_x_m - sx / 2), sy, sx, color="#d8c3a5", zorder=0))
    centers = table.cell_centers_xy()
    half = table.cell_size_m / 2
    for i in range(table.grid_cells):
        for j in range(table.grid_cells):
            x, y = centers[i, j]
            ok = bool(reach.reachable[i, j])
            ax.add_patch(
                Rectangle(
                    (-y - half, x - half),
                    2 * half,
                    2 * half,
                    facecolor="#3c9a48" if ok else "#c0392b",
                    edgecolor="white",
                    linewidth=0.4,
                )
            )
    ax.add_patch(Circle((0.0, 0.0), 0.08, color="#34495e"))
    ax.annotate("Panda base", (0.0, 0.0), xytext=(0.12, -0.02), fontsize=8)
    ax.set_xlim(-sy / 2 - 0.05, sy / 2 + 0.05)
    ax.set_ylim(-0.15, table.center_x_m + sx / 2 + 0.05)
    ax.set_aspect("equal")
    ax.set_xlabel("-y (m)")
    ax.set_ylabel("x (m)")
    count = int(reach.reachable.sum())
    ax.set_title(
        f"reachable blocks: {count}/{reach.reachable.size} (green)\n"
        f"top-down TCP {reach.standoff_m:.2f} m above the table",
        fontsize=9,
    )
    fig.tight_layout()
    with StagedOutput(path) as tmp:
        fig.savefig(tmp)
    plt.close(fig)
    return Path(path)
