"""`grade bench realism RUN [RUN ...]`: does a pose model trained on photographs see our people?

For each recorded run, every 3rd camera frame: a square crop around each person's ground-truth
box (tight box from the mask, 25 % margin of its longer side on each side, resized to 256 px) goes
to MediaPipe Pose 0.10.21 (model complexity 1, the bundled pose_landmark_full); people at least
64 px high, at most half hidden, with at least 8 visible keypoints, and whose crop no other
person's box covers by more than 10 % (the model poses the most prominent person in a crop).
Printed per run:
  found     people on whom it finds a pose
  PCK@0.2   its keypoints (33 landmarks mapped onto COCO-17) within 0.2 x the longer side of the
            tight box of ours, over our visible keypoints of the people it found
  swapped   found poses that match ours better mirrored left <-> right (by > 5 % of the box),
            of all and of those facing the camera (our left shoulder on the image's right)
  faces     MediaPipe face detection (short range) finds a face containing our nose, on a crop
            around the head of the people whose nose and both eyes are visible
MediaPipe runs in its own environment (`make setup-realism`, .venv-realism).
"""

from __future__ import annotations

from pathlib import Path

from grade_common.bench_results import ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_eval.realism.evaluate import evaluate_run
from grade_eval.realism.samples import SampleSettings
from grade_eval.realism.scoring import RealismSummary
from grade_eval.realism.worker import mediapipe_python


def _fraction(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "-"


def table(rows: list[tuple[str, RealismSummary]]) -> str:
    """The benchmark's table: one line per run."""
    lines = [
        f"  {'run':<24} {'found':>16} {'PCK@0.2':>8} {'swapped':>14} {'swapped facing':>14}"
        f" {'faces':>14}"
    ]
    for name, s in rows:
        pck = f"{100 * s.pck:.1f} %" if s.counted else "-"
        lines.append(
            f"  {name:<24} {_fraction(s.found, s.people):>16} {pck:>8} "
            f"{_fraction(s.swapped, s.found):>14} {_fraction(s.swapped_facing, s.facing):>14} "
            f"{_fraction(s.faces_found, s.faces_tried):>14}"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = bench_parser("realism", __doc__)
    parser.add_argument("runs", type=Path, nargs="+", help="recorded run directories")
    parser.add_argument("--frame-stride", type=int, default=3, help="every n-th camera frame (3)")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    python = mediapipe_python()  # before any work: a missing install fails at once
    settings = SampleSettings(frame_stride=args.frame_stride)
    rows = []
    for run in args.runs:
        rows.append((run.name, evaluate_run(run, settings, python=python)))
    print(table(rows))
    columns = (
        "run",
        "people found",
        "PCK@0.2",
        "swapped",
        "swapped, facing the camera",
        "faces found",
    )
    cells = tuple(
        (
            name,
            _fraction(s.found, s.people),
            f"{100 * s.pck:.1f} %" if s.counted else "-",
            _fraction(s.swapped, s.found),
            _fraction(s.swapped_facing, s.facing),
            _fraction(s.faces_found, s.faces_tried),
        )
        for name, s in rows
    )
    title = f"MediaPipe Pose and face detection, every {args.frame_stride}th camera frame"
    write_results(args.json, "realism", argv, [ResultTable(title, columns, cells)])
    return 0
