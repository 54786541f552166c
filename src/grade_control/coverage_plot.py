"""Plot of exploration coverage over time (matplotlib Agg), written through StagedOutput."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from grade_common.atomic import StagedOutput
from grade_common.types import FloatArray
from grade_control.coverage import SeenMap


def plot_coverage(
    times_s: FloatArray,
    coverage: FloatArray,
    seen: SeenMap,
    free_floor_xy_m: FloatArray,
    track_txy: FloatArray,
    path: str | Path,
    target: float | None = None,
) -> Path:
    """Coverage over time beside a top view of the free floor (seen / not seen) and the track."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    left.plot(times_s, 100.0 * coverage, color="tab:blue")
    if target is not None:
        left.axhline(100.0 * target, color="tab:red", linestyle="--", label="target")
        left.legend(loc="lower right")
    left.set_xlabel("simulated time [s]")
    left.set_ylabel("free floor seen [%]")
    left.set_ylim(0, 100)
    left.grid(alpha=0.3)
    left.set_title("coverage")
    seen_at = seen.seen_at(free_floor_xy_m)
    final = seen_at <= times_s[-1]
    right.scatter(*free_floor_xy_m[~final].T, s=1, color="0.8", label="not seen")
    right.scatter(*free_floor_xy_m[final].T, s=1, color="tab:green", label="seen")
    if len(track_txy):
        right.plot(track_txy[:, 1], track_txy[:, 2], color="black", linewidth=1, label="track")
    right.set_aspect("equal")
    right.set_xlabel("x [m]")
    right.set_ylabel("y [m]")
    right.legend(loc="upper right", markerscale=6, fontsize=8)
    right.set_title("free floor, top view")
    fig.tight_layout()
    out = Path(path)
    with StagedOutput(out) as tmp:
        fig.savefig(tmp, format=out.suffix.lstrip(".") or "png", dpi=100)
    plt.close(fig)
    return out
