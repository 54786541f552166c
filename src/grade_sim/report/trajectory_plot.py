"""Top view of a run: the world's walls and furniture, robot trajectories, people's paths."""

from __future__ import annotations

from pathlib import Path

from grade_common.atomic import StagedOutput
from grade_common.rundir import RunLayout
from grade_common.tum import read_poses
from grade_sim.actors.flying import FlyingObjects
from grade_sim.actors.people_group import People
from grade_sim.io.record import load_record, scene_from_record
from grade_sim.scene import build_scene

# Robots' colours: matplotlib's cycle less the people's orange and the flying objects' purple,
# so a second robot is never drawn in the people's colour.
ROBOT_COLORS = (
    "tab:blue",
    "tab:green",
    "tab:red",
    "tab:brown",
    "tab:pink",
    "tab:olive",
    "tab:cyan",
)


def trajectory_plot(run_dir: Path, out: Path) -> Path:
    """Write a PNG top view of a run directory (needs record.npz and gt/<robot>/trajectory.txt)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    layout = RunLayout(run_dir)
    record = load_record(layout.record)
    scene = scene_from_record(build_scene(record.scenario), record)
    fig, ax = plt.subplots(figsize=(8, 7), dpi=110)
    for box in scene.world.boxes:
        # Floors, ceilings and door lintels would hide the room layout seen from above.
        if box.label in ("floor", "ceiling") or box.center_xyz[2] - box.half_size_xyz[2] > 1.0:
            continue
        cx, cy, _ = box.center_xyz
        hx, hy, _ = box.half_size_xyz
        color = "0.25" if box.label == "wall" else "tan"
        ax.add_patch(Rectangle((cx - hx, cy - hy), 2 * hx, 2 * hy, color=color, alpha=0.9))
    n = record.n_steps
    start = record.start_step
    for tl in scene.group(People).timelines:
        xy = tl.position_xy[start:n]
        ax.plot(xy[:, 0], xy[:, 1], lw=0.8, alpha=0.6, color="tab:orange")
        ax.plot(xy[-1:, 0], xy[-1:, 1], "o", ms=3, color="tab:orange")
    for otl in scene.group(FlyingObjects).timelines:
        p = otl.position_xyz[start:n]
        ax.plot(p[:, 0], p[:, 1], lw=0.8, ls="--", alpha=0.6, color="tab:purple")
    for k, robot in enumerate(scene.robots):
        xyz = read_poses(layout.trajectory(robot.model.name), allow_empty=True).positions_xyz
        if len(xyz):
            color = ROBOT_COLORS[k % len(ROBOT_COLORS)]
            label = f"{robot.model.name} (ground truth)"
            ax.plot(xyz[:, 0], xyz[:, 1], lw=2, color=color, label=label)
            ax.plot(xyz[0, 0], xyz[0, 1], "k^", ms=7)
    ax.plot([], [], color="tab:orange", label="people")
    ax.plot([], [], color="tab:purple", ls="--", label="flying objects")
    ax.set_aspect("equal")
    lo, hi = scene.world.bounds_min_xyz, scene.world.bounds_max_xyz
    ax.set_xlim(lo[0] - 0.5, hi[0] + 0.5)
    ax.set_ylim(lo[1] - 0.5, hi[1] + 0.5)
    ax.set_xlabel("x [m] (world)")
    ax.set_ylabel("y [m] (world)")
    ax.set_title(f"{run_dir.name}: top view, seed {record.scenario.seed}")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    with StagedOutput(out, overwrite=True) as tmp:
        fig.savefig(tmp)
    plt.close(fig)
    return out
