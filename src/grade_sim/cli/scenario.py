"""`grade scenario keys`: every key a scenario file (or `grade run --set`) accepts.

Each key is printed with its type, default, allowed values and meaning, from the same
dataclasses the validator checks (grade_sim.config.scenario). List items are written `[]`:
`robots[].cameras[].width` is set as `--set robots.0.cameras.0.width=320`.
"""

from __future__ import annotations

import argparse

from grade_common.cli_args import command_parser
from grade_common.config_keys import config_keys, format_keys
from grade_sim.config.scenario import Scenario


def build_parser() -> argparse.ArgumentParser:
    """The `grade scenario` argument parser."""
    parser = command_parser("grade scenario", __doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    keys = sub.add_parser("keys", help="list every scenario key (type, default, allowed, meaning)")
    keys.add_argument(
        "prefix", nargs="?", default="", help="only keys starting with this, e.g. robots[].cameras"
    )
    keys.add_argument("--names", action="store_true", help="only the key paths, one a line")
    return parser


def run(args: argparse.Namespace) -> int:
    """Print the keys; 1 when no key starts with the prefix."""
    keys = [k for k in config_keys(Scenario) if k.path.startswith(args.prefix)]
    if not keys:
        print(f"grade scenario keys: no key starts with {args.prefix!r}")
        return 1
    print("\n".join(k.path for k in keys) if args.names else format_keys(keys))
    return 0


def main(argv: list[str]) -> int:
    """Run `grade scenario` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
