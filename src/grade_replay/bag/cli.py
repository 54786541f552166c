"""`grade bag info|clip|reindex|export|recover`: bag tools that always write new bags.

The input is only read; every output goes to a temporary name and is renamed into place when
complete; an existing output is refused.
"""

from __future__ import annotations

import argparse
import sys

from grade_common.bagfile.compression import Compression
from grade_common.cli_args import add_choice, command_parser
from grade_common.tum import ImageKind
from grade_replay.bag.clip import ClipConfig, clip_bag
from grade_replay.bag.export import ExportConfig, export_bag
from grade_replay.bag.info import bag_info
from grade_replay.bag.recover import recover
from grade_replay.bag.reindex import Alignment, ReindexConfig, reindex_bag
from grade_replay.errors import ReplayConfigError


def _parse_rate(text: str) -> tuple[str, float]:
    topic, sep, value = text.rpartition("=")
    if not sep or not topic:
        raise ReplayConfigError(f"--rate {text!r}: expected TOPIC=HZ, e.g. /cam/rgb/image_raw=30")
    try:
        return topic, float(value)
    except ValueError as err:
        raise ReplayConfigError(f"--rate {text!r}: {value!r} is not a number of Hz") from err


def build_parser() -> argparse.ArgumentParser:
    """The `grade bag` argument parser."""
    parser = command_parser("grade bag", __doc__)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    sub = parser.add_subparsers(dest="tool", required=True)

    info = sub.add_parser("info", help="topics, types, counts, rates, duration, start marker")
    info.add_argument("bag", help="bag directory (read only)")

    clip = sub.add_parser("clip", help="keep a time window or everything after the start marker")
    clip.add_argument("bag", help="bag directory (read only)")
    clip.add_argument("--out", required=True, help="new bag (must not exist)")
    clip.add_argument("--start", type=float, help="seconds after the bag's first message")
    clip.add_argument("--end", type=float, help="seconds after the bag's first message")
    clip.add_argument(
        "--after-start-marker",
        action="store_true",
        help="keep everything from the /starting_experiment message on",
    )

    reindex = sub.add_parser("reindex", help="restamp topics of known rate to periodic series")
    reindex.add_argument("bag", help="bag directory (read only)")
    reindex.add_argument("--out", required=True, help="new bag (must not exist)")
    reindex.add_argument(
        "--rate",
        action="append",
        default=[],
        metavar="TOPIC=HZ",
        help="known rate of a topic (repeat per topic)",
    )
    reindex.add_argument(
        "--tolerance-us",
        type=float,
        default=1.0,
        help="stamps this close to their periodic value stay as they are",
    )
    add_choice(
        reindex,
        "--align",
        Alignment,
        Alignment.TOPIC_LAST,
        help="topic-last: each topic ends on its own last stamp; common-last: "
        "all end on the latest last stamp (GRADE)",
    )
    reindex.add_argument("--depth-cutoff-m", type=float, help="depth beyond this becomes NaN")
    reindex.add_argument("--depth-topic", help="32FC1 depth image topic for the cut-off")

    export = sub.add_parser("export", help="TUM trajectory and TUM RGB-D images")
    export.add_argument("bag", help="bag directory (read only)")
    export.add_argument("--out", required=True, help="new directory (must not exist)")
    export.add_argument("--pose-topic", help="PoseStamped or Odometry topic -> trajectory.txt")
    export.add_argument(
        "--tf",
        nargs=2,
        metavar=("PARENT", "CHILD"),
        help="TF edge parent -> child (from /tf, /tf_static) -> trajectory.txt",
    )
    for kind in ImageKind:
        export.add_argument(
            f"--{kind.value}",
            metavar="TOPIC",
            help=f"image topic -> {kind.value}/<t>.png and {kind.value}.txt",
        )
    export.add_argument(
        "--points",
        metavar="TOPIC",
        help="PointCloud2 topic -> KITTI velodyne/<n>.bin, labels/<n>.label, times.txt",
    )

    rec = sub.add_parser(
        "recover", help="rebuild a killed recording (no metadata.yaml or MCAP summary)"
    )
    rec.add_argument("bag", help="bag directory, .partial run's bag/ or .mcap file (only read)")
    rec.add_argument("--out", required=True, help="new bag (must not exist)")
    add_choice(
        rec, "--compression", Compression, Compression.ZSTD, help="chunk compression of the new bag"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Run one bag tool; errors are GradeErrors that the `grade` CLI prints."""
    progress = not args.no_progress
    if args.tool == "info":
        print(bag_info(args.bag, progress=progress).format())
    elif args.tool == "clip":
        clip_config = ClipConfig(args.start, args.end, args.after_start_marker)
        print(clip_bag(args.bag, args.out, clip_config, progress=progress).format())
        print(f"wrote {args.out}")
    elif args.tool == "reindex":
        rates = dict(_parse_rate(text) for text in args.rate)
        if not 0 <= args.tolerance_us <= 1e6:
            raise ReplayConfigError(
                f"--tolerance-us {args.tolerance_us}: not allowed; use [0, 1000000] microseconds"
            )
        reindex_config = ReindexConfig(
            rates,
            round(args.tolerance_us * 1000),
            Alignment(args.align),
            args.depth_cutoff_m,
            args.depth_topic,
        )
        print(reindex_bag(args.bag, args.out, reindex_config, progress=progress).format())
        print(f"wrote {args.out}")
    elif args.tool == "recover":
        print(recover(args.bag, args.out, Compression(args.compression)).describe())
    else:
        images = tuple(
            (kind, getattr(args, kind.value)) for kind in ImageKind if getattr(args, kind.value)
        )
        parent, child = args.tf if args.tf else (None, None)
        export_config = ExportConfig(args.pose_topic, parent, child, images, args.points)
        print(export_bag(args.bag, args.out, export_config, progress=progress).format())
        print(f"wrote {args.out}")
    sys.stdout.flush()
    return 0


def main(argv: list[str]) -> int:
    """Run `grade bag` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
