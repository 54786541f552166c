"""`grade export FORMAT RUN --out PATH`: a recorded run in another tool's format.

Formats:
  usd   one USD stage (Isaac Sim, Omniverse, Blender): the world with its materials and
        textures, skinned people (UsdSkel), moving bodies, cameras and lights, animated at
        the physics rate (docs/usd.md)

Examples:
  grade export usd runs/demo --out runs/demo.usd        # binary crate; STAGE.textures/ beside it
  grade export usd runs/demo --out runs/demo.usda       # the same as text

A refusal (not a recorded run, an existing output) creates nothing; the stage is written under
a temporary name and moved into place.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from grade_common.cli_args import add_recorded_run, command_parser

if TYPE_CHECKING:
    from grade_usd.export import UsdExportResult


def build_parser() -> argparse.ArgumentParser:
    """The `grade export` parser (one subcommand per format)."""
    parser = command_parser("grade export", __doc__)
    formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    usd = formats.add_parser("usd", help="a USD stage of the run (docs/usd.md)")
    add_recorded_run(usd)
    usd.add_argument(
        "--out", type=Path, required=True, help="new stage: .usd (binary), .usda or .usdc"
    )
    usd.add_argument(
        "--albedo",
        action="store_true",
        help="the world's unlit materials even when the run baked its lighting (for renderers "
        "that light the world themselves); default: the materials the simulator drew",
    )
    return parser


def run(args: argparse.Namespace) -> UsdExportResult:
    """Export as the parsed arguments say (one format: usd)."""
    from grade_usd.export import export_usd

    return export_usd(args.run_dir, args.out, albedo=args.albedo)


def main(argv: list[str]) -> int:
    """Parse argv, export, print a summary; return the exit code."""
    result = run(build_parser().parse_args(argv))
    textures = f" + {result.textures}" if result.textures else ""
    print(
        f"exported {result.prims} prims, time codes {result.start_time_code:g}.."
        f"{result.end_time_code:g} at {result.time_codes_per_second:g}/s, "
        f"{result.bytes / 1e6:.1f} MB in {result.seconds:.1f} s -> {result.path}{textures}"
    )
    return 0
