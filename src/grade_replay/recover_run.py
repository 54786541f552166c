"""`grade recover PARTIAL_RUN [--out RUN]`: a usable run directory from one that a crash left
under its temporary name (`.NAME.partial-PID`, beside where NAME would have been).

The partial directory is only read. The new run directory (staged, moved into place when
complete) gets: the bag rebuilt by `grade bag recover`; gt/ copied with every TUM list
(rgb.txt, depth.txt, instance.txt) holding exactly the frames whose PNG is on disk (a frame
written while the process died is dropped, its half-written PNG left behind); run.yaml with
status `interrupted` and a `recovered` entry saying what was kept and lost. record.npz and
summary.json are written only when a run ends, so a killed run has neither: `grade replay`
cannot replay it exactly, and the report says so.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from grade_common import ros_distro
from grade_common.atomic import PARTIAL_MARK, StagedOutput
from grade_common.bagfile.recover import RecoveryReport, recover_bag
from grade_common.cli_args import command_parser
from grade_common.errors import OutputExistsError
from grade_common.gt_png import EXTRA_IMAGE_KINDS
from grade_common.rundir import STATUS_KEY, RunLayout, RunStatus, read_run_yaml
from grade_common.tum import (
    BOXES_2D_JSONL,
    BOXES_3D_JSONL,
    GROUNDTRUTH_TXT,
    IMAGE_KINDS,
    list_file,
    list_header,
)
from grade_replay.errors import BagCorruptError, ReplayError

RECOVERED_KEY = "recovered"
_PARTIAL_NAME = re.compile(rf"^\.(?P<name>.+){re.escape(PARTIAL_MARK)}-\d+(-\d+)?$")


class RunRecoveryError(ReplayError):
    """The directory is not a grade run (partial or not) that can be recovered."""


@dataclass
class RunRecovery:
    source: Path
    output: Path
    bag: RecoveryReport | None = None
    frames: dict[str, int] = field(default_factory=dict)  # camera folder -> frames kept
    dropped: dict[str, int] = field(default_factory=dict)  # camera folder -> frames dropped
    lost: list[str] = field(default_factory=list)

    def describe(self) -> str:
        lines = [f"recovered run {self.source} into {self.output}"]
        for cam, n in sorted(self.frames.items()):
            drop = self.dropped.get(cam, 0)
            lines.append(
                f"  {cam}: {n} frame(s)" + (f", {drop} unfinished dropped" if drop else "")
            )
        if self.bag is not None:
            lines.append("  bag: " + self.bag.describe().replace("\n", "\n  "))
        lines += [f"  lost: {item}" for item in self.lost]
        return "\n".join(lines)


def default_output(partial: Path) -> Path:
    """`DIR/NAME` for `DIR/.NAME.partial-PID`.

    Raises:
        RunRecoveryError: the name is not a partial run's.
    """
    match = _PARTIAL_NAME.match(partial.name)
    if match is None:
        raise RunRecoveryError(
            f"{partial}: not a partial run directory (.NAME{PARTIAL_MARK}-PID); pass --out"
        )
    return partial.parent / match.group("name")


def _complete_lines(path: Path) -> list[str]:
    """The whole lines of a text file (a line cut off by the crash has no newline)."""
    if not path.is_file():
        return []
    text = path.read_text(errors="replace")
    return [line for line in text.splitlines(keepends=True) if line.endswith("\n")]


def _fix_camera(camera: Path) -> tuple[int, int]:
    """Make a copied TUM camera folder consistent; returns (frames kept, frames dropped)."""
    stamps_per_kind: list[set[str]] = []
    extra = [k for k in EXTRA_IMAGE_KINDS if (camera / list_file(k)).is_file()]
    kinds = (*IMAGE_KINDS, *extra)
    for kind in kinds:
        listed = [
            line.split()
            for line in _complete_lines(camera / list_file(kind))
            if not line.startswith("#")
        ]
        on_disk = {p.stem for p in (camera / kind).glob("*.png")}
        stamps_per_kind.append({p[0] for p in listed if len(p) == 2 and p[0] in on_disk})
    present = [s for s in stamps_per_kind if s]
    keep = set.intersection(*present) if present else set()
    dropped: set[str] = set()
    for kind in kinds:
        for png in (camera / kind).glob("*.png"):
            if png.stem not in keep:
                dropped.add(png.stem)
                png.unlink()
        with open(camera / list_file(kind), "w") as f:
            f.write(list_header(kind))
            f.writelines(f"{t} {kind}/{t}.png\n" for t in sorted(keep, key=float))
    # Pose and box lines of frames that were dropped go too; the headers stay.
    for name in (GROUNDTRUTH_TXT, BOXES_2D_JSONL, BOXES_3D_JSONL):
        path = camera / name
        if not path.is_file():
            continue
        kept = [ln for ln in _complete_lines(path) if _line_stamp(ln) in keep or ln.startswith("#")]
        path.write_text("".join(kept))
    return len(keep), len(dropped)


def _line_stamp(line: str) -> str | None:
    if line.startswith("{"):
        try:
            return f"{float(json.loads(line)['t']):.6f}"
        except Exception:
            return None
    parts = line.split()
    return parts[0] if parts else None


def recover_run(partial: Path | str, out: Path | str | None = None) -> RunRecovery:
    """Build a new run directory from `partial` (see the module docstring).

    Raises:
        RunRecoveryError: `partial` has no run.yaml.
        OutputExistsError: the output exists.
    """
    source = Path(partial)
    layout = RunLayout(source)
    if not layout.run_yaml.is_file():
        raise RunRecoveryError(f"{source}: no run.yaml; not a grade run directory")
    run_info = read_run_yaml(layout.run_yaml, error=RunRecoveryError)
    target = Path(out) if out is not None else default_output(source)
    result = RunRecovery(source, target)
    with StagedOutput(target, exists_error=OutputExistsError) as tmp:
        tmp.mkdir()
        new = RunLayout(tmp)
        if layout.gt.is_dir():
            shutil.copytree(layout.gt, new.gt, ignore=shutil.ignore_patterns(f".*{PARTIAL_MARK}*"))
            for robot in new.robots():
                for camera in new.cameras(robot):
                    kept, dropped = _fix_camera(new.camera_dir(robot, camera))
                    result.frames[f"{robot}/{camera}"] = kept
                    result.dropped[f"{robot}/{camera}"] = dropped
                traj = new.trajectory(robot)
                traj.write_text("".join(_complete_lines(traj)))
        if layout.bag.is_dir():
            result.bag = recover_bag(
                layout.bag,
                new.bag,
                type_hash_of=ros_distro.type_hash,
                exists_error=OutputExistsError,
                error=BagCorruptError,
            )
            result.bag.output = target / new.bag.name
        for kept_file, what in ((layout.record, "record.npz"), (layout.summary_json, "summary")):
            if kept_file.is_file():
                shutil.copy2(kept_file, tmp / kept_file.name)
            else:
                result.lost.append(f"{what} (written only when a run ends)")
        info: dict[str, Any] = dict(run_info)
        info[STATUS_KEY] = RunStatus.INTERRUPTED.value
        info[RECOVERED_KEY] = {
            "from": str(source.resolve()),
            "bag_messages": result.bag.messages if result.bag else 0,
            "frames": dict(sorted(result.frames.items())),
            "lost": list(result.lost) + (result.bag.problems if result.bag else []),
        }
        new.run_yaml.write_text(yaml.safe_dump(info, sort_keys=False))
    return result


def build_parser() -> argparse.ArgumentParser:
    """The `grade recover` argument parser."""
    parser = command_parser("grade recover", __doc__)
    parser.add_argument("run", type=Path, help="the partial run directory (.NAME.partial-PID)")
    parser.add_argument("--out", type=Path, help="new run directory (default: NAME beside it)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Recover one run; errors are GradeErrors that the `grade` CLI prints."""
    print(recover_run(args.run, args.out).describe())
    return 0


def main(argv: list[str]) -> int:
    """Run `grade recover` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
