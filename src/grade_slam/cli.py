"""`grade slam backends|track|segment|vocab`: the SLAM backends and whether each works here, a
backend run offline on a camera folder, a learned person segmenter on one (DynaSLAM-style
masks), and the ORB vocabulary ORB-SLAM3 needs (built from our own
rendered worlds the first time a run needs it; `vocab` builds it ahead of time).

`grade slam track RUN/gt/<robot>/<camera> --out est.txt` runs the same tracker as `slam_node`
on every recorded frame (the live node can only track the frames the transport delivers), then
`grade eval traj --ref RUN --camera <camera> --est est.txt` scores it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from grade_common.schema import from_mapping
from grade_slam import vocabulary_set
from grade_slam.backends import BACKENDS
from grade_slam.config import OdometryMethod, SlamConfig
from grade_slam.offline import track_camera_folder
from grade_slam.person_segmenter import (
    DEFAULT_MODEL,
    DEFAULT_THRESHOLD,
    SegmenterModel,
    masks_in,
    segment_folder,
)
from grade_slam.trajectory_file import write_trajectory


def build_parser() -> argparse.ArgumentParser:
    """The `grade slam` argument parser."""
    parser = argparse.ArgumentParser(prog="grade slam", description=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser(
        "backends",
        help="list every backend (slam_node and lidar_odometry_node) and whether it is ready, "
        "builds on first use, or is missing (with the install command)",
    )
    track = sub.add_parser("track", help="track a recorded camera folder, write a TUM file")
    track.add_argument("camera_dir", type=Path, help="RUN/gt/<robot>/<camera> (TUM RGB-D layout)")
    track.add_argument("--out", type=Path, required=True, help="new TUM trajectory file")
    track.add_argument("--backend", default="open3d_rgbd", help=f"one of {sorted(BACKENDS)}")
    track.add_argument("--method", default="point_to_plane", help=f"one of {list(OdometryMethod)}")
    track.add_argument(
        "--depth-max-m", type=float, default=6.0, help="depth beyond this is ignored [m]"
    )
    track.add_argument(
        "--mask-dynamic",
        action="store_true",
        help="oracle masking: people and flying objects lose depth and texture (needs the "
        "camera's semantic stream)",
    )
    track.add_argument(
        "--learned-masks",
        type=Path,
        help="DynaSLAM-style masking: the person masks `grade slam segment` wrote for this "
        "folder (implies --mask-dynamic)",
    )
    track.add_argument("--vocabulary", default="", help="ORB-SLAM3 vocabulary file (ORBvoc.txt)")
    track.add_argument(
        "--imu-noise-preset",
        default="drone",
        help="orb_slam3_rgbd_inertial: the grade_noise IMU preset its settings take the noise "
        "from (the IMU itself is read from the run's bag)",
    )
    segment = sub.add_parser(
        "segment",
        help="segment people in every RGB frame of a camera folder with MediaPipe (in "
        ".venv-realism); with the semantic stream, score the masks against the ground truth",
    )
    segment.add_argument("camera_dir", type=Path, help="RUN/gt/<robot>/<camera>")
    segment.add_argument("--out", type=Path, required=True, help="new folder of mask PNGs")
    segment.add_argument(
        "--model",
        default=DEFAULT_MODEL.value,
        choices=[m.value for m in SegmenterModel],
        help=f"MediaPipe model (default {DEFAULT_MODEL.value}, the best on our frames)",
    )
    segment.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    default = vocabulary_set.VocabularyRecipe()
    vocab = sub.add_parser(
        "vocab",
        help="build ORB-SLAM3's vocabulary from our rendered worlds now (a run that needs it "
        "builds it otherwise; cached)",
        description=vocabulary_set.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    vocab.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=list(default.seeds),
        help=f"training scenario seeds ({' '.join(map(str, default.seeds))}; another set is "
        "another vocabulary, which runs use only when named with --vocabulary)",
    )
    vocab.add_argument(
        "--duration-s",
        type=float,
        default=default.duration_s,
        help=f"simulated seconds per seed ({default.duration_s:g})",
    )
    return parser


def _vocab(args: argparse.Namespace) -> int:
    recipe = from_mapping(
        vocabulary_set.VocabularyRecipe,
        {"seeds": tuple(args.seeds), "duration_s": args.duration_s},
    )
    cached = vocabulary_set.cached_vocabulary_path(recipe).is_file()
    with vocabulary_set.stderr_progress() as progress:
        path = vocabulary_set.build_vocabulary(recipe, progress=progress, log=print)
    print(f"vocabulary {'(cached) ' if cached else ''}{path}")
    return 0


def _segment(args: argparse.Namespace) -> int:
    from grade_common.atomic import StagedOutput
    from grade_slam.dynamic_pixels import sequence_pixels
    from grade_slam.errors import SlamOutputExistsError

    start = time.perf_counter()
    with StagedOutput(args.out, exists_error=SlamOutputExistsError) as staging:
        segment_folder(args.camera_dir, staging, SegmenterModel(args.model), args.threshold)
    masks = masks_in(args.camera_dir, args.out)
    elapsed = time.perf_counter() - start
    print(f"{len(masks.files)} masks ({args.model}) in {elapsed:.1f} s: {args.out}")
    if (Path(args.camera_dir) / "semantic.txt").is_file():
        pixels = sequence_pixels(args.camera_dir, masks)
        score = pixels.segmenter
        print(
            f"against the ground-truth person masks of {pixels.frames} frames: IoU "
            f"{score.iou:.3f}, person pixels missed {score.missed_share:.3f}; people cover "
            f"{100 * pixels.person_share_mean:.1f} % of the frame on average"
        )
    return 0


def _backends() -> int:
    from grade_slam.readiness import backend_readiness

    for backend in backend_readiness():
        print(backend.line())
    return 0


def run(args: argparse.Namespace) -> int:
    """List the backends, or track a camera folder and write the trajectory."""
    if args.action == "backends":
        return _backends()
    if args.action == "vocab":
        return _vocab(args)
    if args.action == "segment":
        return _segment(args)
    config = from_mapping(
        SlamConfig,
        {
            "backend": args.backend,
            "method": args.method,
            "depth_max_m": args.depth_max_m,
            "mask_dynamic": args.mask_dynamic or args.learned_masks is not None,
            "vocabulary": args.vocabulary,
            "imu_noise_preset": args.imu_noise_preset,
        },
    )
    start = time.perf_counter()
    learned = None if args.learned_masks is None else masks_in(args.camera_dir, args.learned_masks)
    tracker = track_camera_folder(args.camera_dir, config, learned_masks=learned)
    elapsed = time.perf_counter() - start
    stats = tracker.stats
    what = f"{config.backend} estimate of {args.camera_dir}: optical frame in the first frame's"
    write_trajectory(args.out, tracker.trajectory, what)
    print(
        f"{stats.tracked} of {stats.frames} frames tracked ({stats.failures} failures, "
        f"{stats.restarts} restarts) in {elapsed:.1f} s; trajectory: {args.out}"
    )
    if BACKENDS[config.backend].needs_imu:
        since = stats.inertial_since_ns
        print(
            "inertial state (gravity, biases) initialised "
            + ("never" if since is None else f"at {since * 1e-9:.3f} s")
        )
    return 0


def main(argv: list[str]) -> int:
    """Run `grade slam` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
