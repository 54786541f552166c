"""`grade eval gtmap RUN --lidar ROBOT/LIDAR`: the ground-truth map from a lidar's scans.

Every return goes into `world` with the true sensor pose at its own firing time (see
grade_eval.core.lidar_map); with `--reference MAP` the map is scored against another map (e.g.
the depth cameras' ground-truth map, or points sampled from a world mesh): nearest-neighbour
distances of the lidar map's voxels (accuracy) and of the reference's points (completeness).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from grade_eval.core.ame import ame_nearest
from grade_eval.core.gtmap import GtMapConfig
from grade_eval.core.lidar_map import build_lidar_map, mount_from_scans
from grade_eval.errors import EvalConfigError
from grade_eval.io.lidar_scans import LidarFolder, base_trajectory
from grade_eval.io.pointcloud import read_map, write_map


def run(args: argparse.Namespace, out: Path, cfg: GtMapConfig) -> int:
    robot, slash, lidar = str(args.lidar).partition("/")
    if not slash or not robot or not lidar:
        raise EvalConfigError(f"--lidar {args.lidar!r}: expected ROBOT/LIDAR, e.g. uav1/lidar")
    scans = LidarFolder.open(args.run, robot, lidar)
    dynamic = cfg.dynamic_ids
    base = mount = None
    if not args.no_deskew:
        base = base_trajectory(args.run, robot)
        mount = mount_from_scans(scans.frames(with_labels=False), base)
    frames = tqdm(
        scans.frames(with_labels=args.remove_dynamic),
        total=len(scans),
        desc="gt map",
        unit="scan",
        file=sys.stderr,
    )
    gt_map = build_lidar_map(frames, cfg, Path(args.run).name, base, mount)
    write_map(out, gt_map)
    print(
        f"{out}: {gt_map.size} voxels of {args.voxel} m from {len(scans)} scans of "
        f"{robot}/{lidar}"
        + (" (per-point poses)" if base is not None else " (stamp poses)")
        + (f", removed instance ids {sorted(dynamic)}" if dynamic else "")
    )
    if args.reference:
        res = ame_nearest(gt_map, read_map(args.reference), symmetric=True)
        s, c = res.stats, res.symmetric_stats
        print(
            f"against {args.reference}: accuracy (map -> reference) mean {s.mean:.4f} m, "
            f"median {s.median:.4f} m, max {s.max:.4f} m"
            + (
                f"; completeness (reference -> map) mean {c.mean:.4f} m, median {c.median:.4f} m"
                if c is not None
                else ""
            )
        )
    return 0
