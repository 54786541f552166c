"""`grade bench slam --grade-table OUT`: GRADE's dynamic-SLAM experiment in one command.

For each sequence of the preset (worlds x kinds x seeds, `grade_sequences`, default
config/slam_grade_table.yaml) it simulates the run once, measures its dynamic-pixel share, runs
the learned person segmenter on every frame (scored against the ground-truth person masks) and
tracks the recorded frames offline with every backend, `--repeats` times each. Every step's
result is committed whole under OUT (`grade_common.atomic`), so a killed command resumes where it
stopped: run the same command again.

    OUT/runs/<sequence>/                 the simulated run (RGB, depth, semantic, VLP-16, bag),
                                         removed once its results are stored (--keep-runs)
    OUT/masks/<sequence>/                the learned person masks, one PNG per RGB frame
    OUT/sequences/<sequence>.json        dynamic-pixel share, segmenter IoU and missed share
    OUT/results/<sequence>__<backend>__r<k>.json   one scored run (and its .txt trajectory)
    OUT/table.csv                        one row per scored run
    OUT/summary.md                       backend x kind, and the segmenter per sequence
    OUT/plots/ate_vs_dynamic.png, OUT/plots/trajectories_<sequence>.png

With `--merge FOLDER...` it runs nothing: it builds OUT's table from the stored results of
other OUT folders of the same preset (the jobs of a `grade batch` slam_table sweep, one
sequence each; grade_slam.grade_table_merge).

Scores are GRADE's (`grade_eval`): ATE RMSE and RPE after SE(3) alignment (origin alignment
where the flight is too straight, said in the `align` column), missing time and tracking rate
with a gap of one frame period.
"""

from __future__ import annotations

import argparse
import enum
import math
import os
import resource
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from grade_common.atomic import StagedOutput, write_bytes
from grade_common.output_guard import OUTPUT_MARKER, write_marker
from grade_common.rundir import RUN_YAML, STATUS_KEY, RunLayout, RunStatus, read_run_yaml
from grade_common.share import shipped_file
from grade_common.tum import GROUNDTRUTH_TXT
from grade_eval.io.run import CameraStream
from grade_eval.io.tum import read_tum
from grade_eval.report import Row, format_table, write_rows
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.sim.run import run_scenario
from grade_slam.bench_live import evaluate_aligned
from grade_slam.config import SlamConfig
from grade_slam.dynamic_pixels import sequence_pixels
from grade_slam.errors import SlamConfigError, SlamError
from grade_slam.grade_sequences import (
    CAMERA,
    LIDAR,
    PRESET_FILE,
    GradePreset,
    load_preset,
    sequence_name,
    sequence_scenario,
    sequences,
)
from grade_slam.grade_table_files import (
    DEFAULT_LIVE_BACKENDS,
    LIVE_CHECK_MD,
    RECORDS_DIR,
    RESULTS_DIR,
    SCENARIO_SUFFIX,
    read_json,
    result_stem,
    scenario_text,
    write_json,
)
from grade_slam.grade_table_live import check_live_backends, live_check, uses_orb_slam3
from grade_slam.grade_table_merge import merge_folders
from grade_slam.grade_table_report import (
    markdown_table,
    plot_ate_vs_dynamic,
    plot_trajectories,
    segmenter_rows,
    summary_rows,
    world_rows,
)
from grade_slam.lidar_folder import track_lidar_folder
from grade_slam.lidar_odometry import LidarOdometryConfig
from grade_slam.offline import track_camera_folder
from grade_slam.person_segmenter import (
    DEFAULT_MODEL,
    DEFAULT_THRESHOLD,
    LearnedMasks,
    SegmenterModel,
    masks_in,
    segment_folder,
)
from grade_slam.trajectory_file import write_trajectory


class MaskSource(enum.Enum):
    """What a backend removes before tracking."""

    NONE = "none"
    LEARNED = "learned"  # the person segmenter's masks (DynaSLAM-style)
    GROUND_TRUTH = "ground_truth"  # people and flying objects from the semantic labels (oracle)


@dataclass(frozen=True)
class TableBackend:
    """A column of the table: the sensor it tracks, its settings, what it masks."""

    lidar: bool  # the VLP-16's scans (else the RGB-D camera)
    settings: tuple[tuple[str, Any], ...]  # SlamConfig or LidarOdometryConfig fields
    mask: MaskSource = MaskSource.NONE


TABLE_BACKENDS: dict[str, TableBackend] = {
    "orb_slam3_rgbd": TableBackend(False, (("backend", "orb_slam3_rgbd"),)),
    "orb_slam3_rgbd_learned": TableBackend(
        False, (("backend", "orb_slam3_rgbd"), ("mask_dynamic", True)), MaskSource.LEARNED
    ),
    "orb_slam3_rgbd_masked": TableBackend(
        False, (("backend", "orb_slam3_rgbd"), ("mask_dynamic", True)), MaskSource.GROUND_TRUTH
    ),
    "orb_slam3_rgbd_inertial": TableBackend(False, (("backend", "orb_slam3_rgbd_inertial"),)),
    "kiss_icp": TableBackend(True, (("backend", "kiss_icp"),)),
    "kiss_icp_masked": TableBackend(True, (("backend", "kiss_icp"),), MaskSource.GROUND_TRUTH),
    "genz_icp": TableBackend(True, (("backend", "genz_icp"),)),
    "genz_icp_masked": TableBackend(True, (("backend", "genz_icp"),), MaskSource.GROUND_TRUTH),
}
LIDAR_RATE_HZ = 10.0  # the VLP-16 preset's scan rate
RESULT_SCORES = ("ate_rmse_m", "rpe_trans_rmse_m", "rpe_rot_rmse_deg", "missing_time_s")


@dataclass(frozen=True)
class TableOptions:
    """What the command was asked for, besides the preset."""

    out: Path
    backends: tuple[str, ...]
    repeats: int
    segmenter: SegmenterModel = DEFAULT_MODEL
    threshold: float = DEFAULT_THRESHOLD
    vocabulary: str = ""
    keep_runs: bool = False  # keep OUT/runs/<sequence> once all its results are stored


def prepare_out(out: Path) -> None:
    """Create OUT as a grade output, or accept the OUT of an earlier run of this command.

    Raises:
        SlamError: OUT exists but was not written by grade (nothing in it is touched).
    """
    if out.exists():
        if not (out / OUTPUT_MARKER).is_file():
            raise SlamError(
                f"{out}: exists and is not the folder of an earlier --grade-table run (no "
                f"{OUTPUT_MARKER}); choose a new folder"
            )
        return
    out.mkdir(parents=True)
    write_marker(out)


def _remove_stale_partials(folder: Path) -> None:
    """Remove the staging leftovers of a killed run of this command (`.<name>.partial-<pid>`
    whose process is gone): they are this command's own, and a 60 s run's is large."""
    if not folder.is_dir():
        return
    for path in folder.glob(".*.partial-*"):
        pid_text = path.name.rsplit(".partial-", 1)[1].split("-")[0].split(".")[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
            continue  # its process still runs: not ours to remove
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def check_scenario(out: Path, name: str, scenario: dict[str, Any]) -> None:
    """Record the scenario a sequence is made from (OUT/sequences/<name>.scenario.yaml), or
    check that it is the recorded one: what OUT holds is reused only for the same scenario.

    Raises:
        SlamError: OUT holds the sequence made from another scenario (the preset changed).
    """
    path = out / RECORDS_DIR / f"{name}{SCENARIO_SUFFIX}"
    text = scenario_text(scenario)
    if path.is_file():
        if path.read_text() != text:
            raise SlamError(
                f"{path}: {name} in {out} was made from another scenario (the preset, its base "
                "scenario or the options changed since); give a new OUT to run this one"
            )
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(path, text.encode())


def simulate(
    preset: GradePreset, base: dict[str, Any], seq: tuple[str, str, int], out: Path
) -> Path:
    """The sequence's run directory, simulated now unless a complete one is there."""
    runs = out / "runs"
    _remove_stale_partials(runs)
    run_dir = runs / sequence_name(*seq)
    overwrite = False
    if run_dir.is_dir():
        status = read_run_yaml(run_dir / RUN_YAML, error=SlamError).get(STATUS_KEY)
        if status == RunStatus.COMPLETE.value:
            return run_dir
        overwrite = True  # this command's own run, stopped early: simulate it again
    scenario = scenario_from_mapping(sequence_scenario(preset, base, *seq))
    start, cpu = time.perf_counter(), cpu_s()
    status = run_scenario(scenario, run_dir, overwrite=overwrite).stats.status
    if status != RunStatus.COMPLETE.value:
        # Ctrl-C or a kill's SIGTERM ends the simulation early with a readable run: no mask,
        # share or score may come from it (the next command simulates the sequence again)
        raise SlamError(
            f"{run_dir.name}: the simulation stopped early (run.yaml status {status}); run the "
            "same command again to resume"
        )
    print(
        f"  simulated {run_dir.name} in {time.perf_counter() - start:.0f} s "
        f"({cpu_s() - cpu:.0f} CPU s)",
        flush=True,
    )
    return run_dir


def cpu_s() -> float:
    """CPU seconds of this process (all threads) and of its finished child processes: a
    step's cost that another job's load on the cores does not inflate as much as wall time."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def camera_dir(run_dir: Path) -> Path:
    """The recorded camera folder of a sequence."""
    return RunLayout(run_dir).camera_dir(_robot(run_dir), CAMERA)


def _robot(run_dir: Path) -> str:
    scenario = read_run_yaml(run_dir / RUN_YAML, error=SlamError)["scenario"]
    return str(scenario["robots"][0]["name"])


def learned_masks(run_dir: Path, options: TableOptions, out: Path) -> LearnedMasks:
    """The segmenter's masks of the sequence, segmented now unless they are there."""
    folder = out / "masks" / run_dir.name
    cam = camera_dir(run_dir)
    if folder.is_dir():
        return masks_in(cam, folder)
    _remove_stale_partials(folder.parent)
    start, cpu = time.perf_counter(), cpu_s()
    with StagedOutput(folder, exists_error=SlamError) as staging:
        segment_folder(cam, staging, options.segmenter, options.threshold)
    print(
        f"  segmented {run_dir.name} in {time.perf_counter() - start:.0f} s "
        f"({cpu_s() - cpu:.0f} CPU s)",
        flush=True,
    )
    return masks_in(cam, folder)


def sequence_record(
    run_dir: Path, masks: LearnedMasks | None, options: TableOptions, out: Path
) -> dict[str, Any]:
    """The sequence's dynamic-pixel share and segmenter score, measured now unless stored."""
    path = out / RECORDS_DIR / f"{run_dir.name}.json"
    if path.is_file():
        return read_json(path)
    pixels = sequence_pixels(camera_dir(run_dir), masks)
    reference = CameraStream.open(run_dir, _robot(run_dir), CAMERA).trajectory
    record = {
        "frames": pixels.frames,
        "dynamic_share": pixels.dynamic_share_mean,
        "dynamic_share_max": pixels.dynamic_share_max,
        "person_share": pixels.person_share_mean,
        "segmenter": options.segmenter.value if masks is not None else "none",
        "segmenter_iou": pixels.segmenter.iou,
        "segmenter_missed": pixels.segmenter.missed_share,
        "reference_xy": np.round(reference.positions_xyz[:, :2], 3).tolist(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, record)
    return record


def track(
    run_dir: Path,
    backend: str,
    repeat: int,
    masks: LearnedMasks | None,
    options: TableOptions,
    out: Path,
    preset: GradePreset,
) -> dict[str, Any]:
    """One scored run of `backend` on the sequence, tracked now unless stored."""
    name = result_stem(run_dir.name, backend, repeat)
    result_path = out / RESULTS_DIR / f"{name}.json"
    if result_path.is_file():
        return read_json(result_path)
    result_path.parent.mkdir(parents=True, exist_ok=True)
    estimate_path = result_path.with_suffix(".txt")
    estimate_path.unlink(missing_ok=True)  # a killed run's estimate without its score
    spec = TABLE_BACKENDS[backend]
    robot = _robot(run_dir)
    start, cpu = time.perf_counter(), cpu_s()
    if spec.lidar:
        folder = RunLayout(run_dir).robot_dir(robot) / LIDAR
        lidar_config = LidarOdometryConfig(**dict(spec.settings))
        tracker: Any = track_lidar_folder(
            folder, lidar_config, drop_dynamic=spec.mask is MaskSource.GROUND_TRUTH
        )
        reference = read_tum(folder / GROUNDTRUTH_TXT)
        rate_hz = LIDAR_RATE_HZ
    else:
        slam_config = SlamConfig(vocabulary=options.vocabulary, **dict(spec.settings))
        tracker = track_camera_folder(
            camera_dir(run_dir),
            slam_config,
            learned_masks=masks if spec.mask is MaskSource.LEARNED else None,
        )
        reference = CameraStream.open(run_dir, robot, CAMERA).trajectory
        rate_hz = preset.rate_hz
    wall_s, used_cpu_s = time.perf_counter() - start, cpu_s() - cpu
    write_trajectory(estimate_path, tracker.trajectory, f"{backend} estimate of {run_dir.name}")
    evaluation, align = evaluate_aligned(reference, read_tum(estimate_path), name, rate_hz)
    summary = evaluation.summary() if evaluation is not None else {}
    result: dict[str, Any] = {
        "backend": backend,
        "repeat": repeat,
        "align": align.value,
        "frames": tracker.stats.frames,
        "tracked": tracker.stats.tracked,
        "wall_ms_per_frame": 1000.0 * wall_s / max(1, tracker.stats.frames),
        # ORB-SLAM3's child process counts once it has ended (tracker.close())
        "cpu_ms_per_frame": 1000.0 * used_cpu_s / max(1, tracker.stats.frames),
        "tracking_rate": summary.get("tracking_rate", 0.0),
        **{k: summary.get(k, math.nan) for k in RESULT_SCORES},
        "estimate_xy": (
            np.round(evaluation.estimate_aligned.positions_xyz[:, :2], 3).tolist()
            if evaluation is not None
            else []
        ),
    }
    write_json(result_path, result)
    return result


def run_table(
    preset: GradePreset, options: TableOptions, log: Callable[[str], object] = print
) -> list[Row]:
    """Every sequence and backend of the table, resuming from what OUT holds; the rows."""
    base = yaml.safe_load(Path(preset.scenario).read_text())
    rows: list[Row] = []
    # the segmenter runs for the learned-mask backend (and its IoU is then in the table)
    segment = any(TABLE_BACKENDS[b].mask is MaskSource.LEARNED for b in options.backends)
    for seq in sequences(preset):
        world, kind, seed = seq
        name = sequence_name(*seq)
        results = {
            (b, r): options.out / RESULTS_DIR / f"{result_stem(name, b, r)}.json"
            for b in options.backends
            for r in range(options.repeats)
        }
        check_scenario(options.out, name, sequence_scenario(preset, base, *seq))
        record_path = options.out / RECORDS_DIR / f"{name}.json"
        run_dir = options.out / "runs" / name
        if record_path.is_file() and all(p.is_file() for p in results.values()):
            record = read_json(record_path)  # done: its run is not needed again
            masks = None
        else:
            run_dir = simulate(preset, base, seq, options.out)
            masks = learned_masks(run_dir, options, options.out) if segment else None
            record = sequence_record(run_dir, masks, options, options.out)
        log(
            f"{name}: dynamic pixels {100 * record['dynamic_share']:.1f} %, people "
            f"{100 * record['person_share']:.1f} %, segmenter IoU {record['segmenter_iou']:.2f}"
            f", missed {record['segmenter_missed']:.2f}"
        )
        for backend in options.backends:
            for repeat in range(options.repeats):
                result = track(run_dir, backend, repeat, masks, options, options.out, preset)
                log(
                    f"  {backend} run {repeat + 1}: ATE {result['ate_rmse_m']:.3f} m, tracking "
                    f"rate {result['tracking_rate']:.3f}"
                )
                rows.append(
                    {
                        "sequence": name,
                        "world": world,
                        "kind": kind,
                        "seed": float(seed),
                        "backend": backend,
                        "repeat": float(repeat),
                        "dynamic_share": record["dynamic_share"],
                        "segmenter_iou": record["segmenter_iou"],
                        "segmenter_missed": record["segmenter_missed"],
                        "align": result["align"],
                        "frames": float(result["frames"]),
                        "tracked": float(result["tracked"]),
                        "ate_rmse_m": result["ate_rmse_m"],
                        "rpe_trans_rmse_m": result["rpe_trans_rmse_m"],
                        "rpe_rot_rmse_deg": result["rpe_rot_rmse_deg"],
                        "missing_time_s": result["missing_time_s"],
                        "tracking_rate": result["tracking_rate"],
                        "wall_ms_per_frame": result["wall_ms_per_frame"],
                    }
                )
        if not options.keep_runs and run_dir.is_dir():
            # a 60 s run with its bag is a few GB; every score of it is stored
            shutil.rmtree(run_dir)
    return rows


def write_report(rows: list[Row], preset: GradePreset, options: TableOptions) -> None:
    """table.csv, summary.md and the plots, replacing the previous report of OUT."""
    out = options.out
    names = list(dict.fromkeys(str(r["sequence"]) for r in rows))
    table = out / "table.csv"
    if table.exists():
        table.unlink()  # this command's own report of fewer rows: rewritten from the results
    write_rows(table, rows)
    worlds = list(dict.fromkeys(str(r["world"]) for r in rows))
    text = [
        "# GRADE table (grade bench slam --grade-table)\n",
        f"{len(names)} sequences of {preset.duration_s:g} s, backends x repeats: "
        f"{list(options.backends)} x {options.repeats}\n",
        *(
            part
            for world in worlds
            for part in (
                f"## {world}: ATE RMSE [m], median over seeds and runs [min, max]\n",
                "(tr x): the lowest tracking rate, where a run lost frames\n",
                markdown_table(world_rows(rows, world)),
            )
        ),
        "## Backend x kind, all worlds\n",
        markdown_table(summary_rows(rows)),
        "## Sequences: dynamic pixels and the learned segmenter\n",
        markdown_table(segmenter_rows(out, names)),
    ]
    summary = out / "summary.md"
    write_bytes(summary, "\n".join(text).encode(), overwrite=summary.exists())
    plot_ate_vs_dynamic(rows, out / "plots" / "ate_vs_dynamic.png")
    camera_backends = tuple(b for b in options.backends if not TABLE_BACKENDS[b].lidar)
    for name in names:
        plot_trajectories(out, name, camera_backends, out / "plots" / f"trajectories_{name}.png")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `--grade-table` options of `grade bench slam`."""
    group = parser.add_argument_group(
        "GRADE's table (--grade-table OUT: sequences x backends, resumable; grade_slam.grade_table)"
    )
    group.add_argument(
        "--grade-table",
        type=Path,
        metavar="OUT",
        help="run GRADE's dynamic-SLAM table into OUT (new, or the OUT of a stopped run: it "
        "resumes)",
    )
    group.add_argument(
        "--keep-runs",
        action="store_true",
        help="keep each simulated run (OUT/runs; a 60 s sequence's is a few GB) after its "
        "results are stored",
    )
    group.add_argument("--preset", type=Path, help=f"the sequence set (default {PRESET_FILE})")
    group.add_argument("--kinds", nargs="*", help="only these kinds (default: the preset's)")
    group.add_argument(
        "--table-seeds", nargs="*", type=int, help="these seeds (default: the preset's)"
    )
    group.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="FOLDER",
        help="simulate and track nothing: build OUT's table from these --grade-table folders' "
        "stored results (same preset, --backends, --repeats and --duration-s; the jobs of a "
        "`grade batch` slam_table sweep)",
    )
    group.add_argument(
        "--live-check",
        nargs="*",
        metavar="BACKEND",
        help="then fly one sequence per kind (the first world and seed) with these backends "
        f"live in lockstep (default {list(DEFAULT_LIVE_BACKENDS)}) and write "
        f"OUT/{LIVE_CHECK_MD}: live against the table's offline runs (grade_table_live)",
    )
    group.add_argument(
        "--segmenter",
        default=DEFAULT_MODEL.value,
        choices=[m.value for m in SegmenterModel],
        help=f"the learned-mask backend's MediaPipe model (default {DEFAULT_MODEL.value})",
    )


def main_grade_table(args: argparse.Namespace) -> int:
    """Run the table of `args` (parsed by `grade bench slam`); the exit code."""
    overrides: dict[str, Any] = {}
    if args.duration_s_given:
        overrides["duration_s"] = args.duration_s
    if args.kinds:
        overrides["kinds"] = list(args.kinds)
    if args.table_seeds:
        overrides["seeds"] = list(args.table_seeds)
    backends = tuple(args.backends or TABLE_BACKENDS)
    unknown = sorted(set(backends) - set(TABLE_BACKENDS))
    try:
        if unknown:
            raise SlamConfigError(
                f"--backends {unknown} unknown; allowed with --grade-table: {list(TABLE_BACKENDS)}"
            )
        preset = load_preset(args.preset or shipped_file(PRESET_FILE), overrides)
        if args.worlds_given:
            for world in args.worlds:
                preset.world(world)
            keep = [w for w in preset.worlds if w.name in args.worlds]
            preset = GradePreset(**{**preset.__dict__, "worlds": tuple(keep)})
        live_backends: tuple[str, ...] | None = None
        if args.live_check is not None:
            # before the table's hours, not after them
            live_backends = tuple(args.live_check) or DEFAULT_LIVE_BACKENDS
            check_live_backends(live_backends, backends)
        vocabulary = args.vocabulary
        table_needs_vocabulary = not args.merge and any(
            not TABLE_BACKENDS[b].lidar for b in backends
        )
        if table_needs_vocabulary or uses_orb_slam3(live_backends or ()):
            from grade_slam.vocabulary_set import resolve_vocabulary

            vocabulary = str(resolve_vocabulary(args.vocabulary, log=print))
        options = TableOptions(
            out=args.grade_table,
            backends=backends,
            repeats=args.repeats,
            segmenter=SegmenterModel(args.segmenter),
            vocabulary=vocabulary,
            keep_runs=args.keep_runs,
        )
        prepare_out(options.out)
        if args.merge:
            preset = merge_folders(preset, options.out, backends, args.repeats, list(args.merge))
        rows = run_table(preset, options)
        write_report(rows, preset, options)
        if live_backends is not None:
            args.vocabulary = vocabulary
            live_check(preset, options.out, live_backends, args)
    except SlamError as err:
        print(f"grade bench slam --grade-table: {err}")
        return 2
    print(format_table(summary_rows(rows)))
    print(f"table: {options.out / 'table.csv'}; summary: {options.out / 'summary.md'}")
    return 0
