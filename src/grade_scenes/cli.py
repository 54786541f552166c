"""`grade scenes reach|generate|select|run|overlay`: SceneReplica's tabletop scenes."""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import numpy as np
import trimesh
import yaml

from grade_common.atomic import StagedOutput
from grade_common.cli_args import add_quiet, command_parser
from grade_scenes.catalog import build_catalog
from grade_scenes.errors import ScenesError
from grade_scenes.generate import GenerateConfig, generate_scenes
from grade_scenes.objects import default_object_set, load_object_set
from grade_scenes.overlay import OverlayConfig, blend, load_rgb
from grade_scenes.plot_scenes import plot_scene_grid
from grade_scenes.pose_check import check_poses, describe_failures, settled_catalog
from grade_scenes.reach.plot import plot_reachability
from grade_scenes.reach.reachability import (
    compute_reachability,
    load_reachability,
    save_reachability,
)
from grade_scenes.render import render_reference, write_png
from grade_scenes.scenefile import (
    MESH_DIR,
    SCENE_DIR,
    read_candidates,
    scene_name,
    write_candidates,
)
from grade_scenes.select import SelectConfig, random_selection, select_scenes
from grade_scenes.settle import DRIFT_TOLERANCE_M, TILT_TOLERANCE_DEG, settle
from grade_scenes.table import TableConfig
from grade_sim.config.tabletop import load_tabletop_scene

REACH_FILE = "reachability.npz"
SETTLE_FILE = "settle.yaml"
POSE_CHECK_FILE = "pose_check.yaml"


def _add_attempt_arguments(parser: argparse.ArgumentParser) -> None:
    """What `run` and `table` both take: the selection, the (resumable) output, the seed and
    how many scenes."""
    parser.add_argument("selection", help="a folder made by `grade scenes select`")
    parser.add_argument("--out", required=True, help="folder (an existing one is resumed)")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the attempts' random draws (IK restarts, noise)",
    )
    parser.add_argument("--scenes", type=int, help="only the first N scenes of the selection")


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("grade scenes", __doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    reach = sub.add_parser("reach", help="reachability map of the table grid (Panda, IK)")
    reach.add_argument("--out", required=True, help="new .npz file; a .png is drawn beside it")
    reach.add_argument("--seed", type=int, default=0, help="seed of the IK restarts")
    reach.add_argument(
        "--standoff-m", type=float, default=0.15, help="tool centre point height above the table"
    )
    gen = sub.add_parser("generate", help="candidate scenes into a new folder")
    gen.add_argument("--out", required=True, help="new folder")
    gen.add_argument(
        "--seed", type=int, default=0, help="seed of the scenes (and their fixed orders)"
    )
    gen.add_argument("--count", type=int, default=164, help="candidate scenes to generate")
    gen.add_argument("--objects-per-scene", type=int, default=5, help="objects on the table")
    gen.add_argument("--objects", help="object-set YAML (default: the shipped 16 objects)")
    gen.add_argument("--reach", help="reachability .npz (default: computed, seeded by --seed)")
    sel = sub.add_parser("select", help="the benchmark set out of a candidate folder")
    sel.add_argument("candidates", help="a folder made by `grade scenes generate`")
    sel.add_argument("--out", required=True, help="new folder")
    sel.add_argument("--count", type=int, default=20, help="scenes to select")
    sel.add_argument(
        "--min-per-object", type=int, default=5, help="fewest selected scenes per object"
    )
    sel.add_argument(
        "--max-per-object", type=int, default=7, help="most selected scenes per object"
    )
    sel.add_argument("--seed", type=int, default=0, help="seed of the random baseline")
    sel.add_argument(
        "--no-references",
        dest="references",
        action="store_false",
        help="skip rendering the reference images (references/scene_NNN.png)",
    )
    run = sub.add_parser("run", help="pick and place every scene of a selection with the Panda")
    _add_attempt_arguments(run)
    run.add_argument("--pose-noise-m", type=float, default=0.0, help="perception noise (xy)")
    run.add_argument("--pose-noise-deg", type=float, default=0.0, help="perception noise")
    run.add_argument("--no-sheets", dest="sheets", action="store_false", help="no contact sheets")
    run.add_argument(
        "--pipeline", default="ground_truth", help="ground_truth, model_based or model_free"
    )
    run.add_argument("--ordering", default="near_to_far", help="near_to_far or fixed")
    add_quiet(run)
    table = sub.add_parser(
        "table", help="SceneReplica's tables: every pipeline x ordering over a selection"
    )
    _add_attempt_arguments(table)
    table.add_argument(
        "--pipelines", default="ground_truth,model_based,model_free", help="comma-separated"
    )
    table.add_argument("--orderings", default="near_to_far,fixed", help="comma-separated")
    add_quiet(table)
    ovl = sub.add_parser("overlay", help="blend a live image file with a reference image")
    ovl.add_argument("live", help="image file of the live camera")
    ovl.add_argument("reference", help="the scene's reference image (grade scenes select)")
    ovl.add_argument("--out", required=True, help="new PNG")
    ovl.add_argument("--live-weight", type=float, default=0.4, help="the live image's weight")
    ovl.add_argument(
        "--reference-weight", type=float, default=0.6, help="the reference image's weight"
    )
    return parser


def _overlay(args: argparse.Namespace) -> int:
    config = OverlayConfig(
        reference_image=args.reference,
        live_weight=args.live_weight,
        reference_weight=args.reference_weight,
    )
    out = blend(
        load_rgb(args.live),
        load_rgb(config.reference_image),
        config.live_weight,
        config.reference_weight,
    )
    write_png(out, args.out)
    print(f"{config.live_weight} x {args.live} + {config.reference_weight} x {args.reference}")
    print(f"-> {args.out}")
    return 0


def _reach(args: argparse.Namespace) -> int:
    out = Path(args.out)
    rng = np.random.default_rng(args.seed)
    reach = compute_reachability(TableConfig(), rng, standoff_m=args.standoff_m)
    save_reachability(reach, out)
    plot_reachability(reach, out.with_suffix(".png"))
    print(f"{int(reach.reachable.sum())}/{reach.reachable.size} blocks reachable -> {out}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    if args.objects:
        config, base = load_object_set(args.objects)
    else:
        config, base = default_object_set(), None
    gen_config = GenerateConfig(scenes=args.count, objects_per_scene=args.objects_per_scene)
    reach_rng, scene_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(args.seed).spawn(2)
    )
    with StagedOutput(args.out) as folder:
        t0 = time.perf_counter()
        if args.reach:
            reach = load_reachability(args.reach)
        else:
            reach = compute_reachability(TableConfig(), reach_rng)
        t1 = time.perf_counter()
        checks = check_poses(build_catalog(config, base), reach.table)
        rejected = describe_failures(checks)
        catalog = settled_catalog(build_catalog(config, base), checks)
        scenes = generate_scenes(catalog, reach, gen_config, scene_rng)
        t2 = time.perf_counter()
        header = {"seed": args.seed, "objects_per_scene": args.objects_per_scene}
        write_candidates(folder, scenes, catalog, reach.table, header, order_seed=args.seed)
        (folder / POSE_CHECK_FILE).write_text(
            yaml.safe_dump(
                {
                    "drift_tolerance_m": DRIFT_TOLERANCE_M,
                    "tilt_tolerance_deg": TILT_TOLERANCE_DEG,
                    "rejected": rejected,
                },
                sort_keys=False,
            )
        )
        save_reachability(reach, folder / REACH_FILE)
        plot_reachability(reach, folder / "reachability.png")
        results = {
            scene_name(s.index): settle(folder / SCENE_DIR / f"{scene_name(s.index)}.yaml")
            for s in scenes
        }
        settled = {
            "drift_tolerance_m": DRIFT_TOLERANCE_M,
            "tilt_tolerance_deg": TILT_TOLERANCE_DEG,
            "max_displacement_m": {n: round(r.max_displacement_m, 6) for n, r in results.items()},
            "max_tilt_deg": {n: round(r.max_tilt_deg, 4) for n, r in results.items()},
        }
        (folder / SETTLE_FILE).write_text(yaml.safe_dump(settled))
        t3 = time.perf_counter()
    unsettled = sorted(n for n, r in results.items() if not r.stays)
    print(f"stable poses rejected by the physics check: {rejected or 'none'}")
    print(
        f"{len(scenes)} scenes of {args.objects_per_scene} objects -> {args.out} "
        f"(reachability {t1 - t0:.1f} s, generation {t2 - t1:.1f} s, settling {t3 - t2:.1f} s); "
        f"{len(unsettled)} move >= {DRIFT_TOLERANCE_M} m or tilt >= {TILT_TOLERANCE_DEG} deg "
        f"when settling (select skips them): {unsettled}"
    )
    return 0


def _select(args: argparse.Namespace) -> int:
    source = Path(args.candidates)
    names, scenes = read_candidates(source)
    settle_file = source / SETTLE_FILE
    if settle_file.is_file():
        settled = yaml.safe_load(settle_file.read_text())
        if "max_tilt_deg" not in settled:
            raise ScenesError(
                f"{settle_file}: no max_tilt_deg (written before the tilt check); generate the "
                "candidates again with `grade scenes generate`"
            )
        moved, tilted = settled["max_displacement_m"], settled["max_tilt_deg"]
        stable = tuple(
            s
            for s in scenes
            if moved[scene_name(s.index)] < DRIFT_TOLERANCE_M
            and tilted[scene_name(s.index)] < TILT_TOLERANCE_DEG
        )
        print(f"{len(scenes) - len(stable)} candidates skipped: they move or tilt when settling")
        scenes = stable
    reach = load_reachability(source / REACH_FILE)
    config = SelectConfig(
        count=args.count, min_per_object=args.min_per_object, max_per_object=args.max_per_object
    )
    t0 = time.perf_counter()
    best = select_scenes(scenes, len(names), config, np.random.default_rng(args.seed))
    elapsed = time.perf_counter() - t0
    baseline = random_selection(scenes, len(names), config, np.random.default_rng(args.seed))
    chosen = [s for s in scenes if s.index in best.scene_indices]
    rgba: dict[str, tuple[float, ...]] = {}
    with StagedOutput(args.out) as folder:
        (folder / SCENE_DIR).mkdir(parents=True)
        shutil.copytree(source / MESH_DIR, folder / MESH_DIR)
        for scene in chosen:
            name = f"scene_{scene.index:03d}.yaml"
            shutil.copy2(source / SCENE_DIR / name, folder / SCENE_DIR / name)
            for obj in load_tabletop_scene(source / SCENE_DIR / name).objects:
                rgba[obj.name] = obj.rgba
        summary = {
            "method": (
                "max coverage (integer linear programme, HiGHS via scipy.optimize.milp), then "
                "one-swap search for SceneReplica's diversity"
            ),
            "count": config.count,
            "per_object_bounds": [config.min_per_object, config.max_per_object],
            "scenes": [f"scene_{i:03d}" for i in best.scene_indices],
            "coverage_pairs": best.coverage,
            "possible_pairs": best.possible_pairs,
            "optimality_gap": float(best.optimality_gap),
            "diversity_bits": round(best.diversity_bits, 4),
            "diversity_swaps": best.swaps,
            "joint_entropy_bits": round(best.joint_entropy_bits, 4),
            "object_counts": dict(zip(names, best.object_counts, strict=True)),
            "random_baseline": {
                "coverage_pairs": baseline.coverage,
                "diversity_bits": round(baseline.diversity_bits, 4),
                "joint_entropy_bits": round(baseline.joint_entropy_bits, 4),
            },
            "solve_time_s": round(elapsed, 3),
        }
        (folder / "selection.yaml").write_text(yaml.safe_dump(summary, sort_keys=False))
        shapes = []
        for name in names:
            mesh = trimesh.load(source / MESH_DIR / f"{name}.stl", force="mesh")
            assert isinstance(mesh, trimesh.Trimesh)  # force="mesh" always gives one
            shapes.append((mesh, rgba.get(name, (0.7, 0.7, 0.7, 1.0))))
        plot_scene_grid(tuple(chosen), shapes, reach, folder / "scenes.png")
        if args.references:
            (folder / "references").mkdir()
            for scene in chosen:
                name = f"scene_{scene.index:03d}"
                image = render_reference(folder / SCENE_DIR / f"{name}.yaml")
                write_png(image, folder / "references" / f"{name}.png")
    print(
        f"{len(chosen)} scenes -> {args.out}: coverage {best.coverage}/{best.possible_pairs} "
        f"pairs (coverage stage gap {best.optimality_gap:.3g}), random selection "
        f"{baseline.coverage}; SceneReplica diversity (sum of per-object pose entropies) "
        f"{best.diversity_bits:.3f} bits after {best.swaps} swaps vs {baseline.diversity_bits:.3f} "
        f"random; joint (object, pose) entropy {best.joint_entropy_bits:.3f} vs "
        f"{baseline.joint_entropy_bits:.3f} bits"
    )
    return 0


def _run(args: argparse.Namespace) -> int:
    from grade_scenes.pick.perception import Pipeline
    from grade_scenes.pick.protocol import Ordering, PickConfig, choice
    from grade_scenes.pick.run import RESULTS_FILE, TABLES_FILE, run_selection

    config = PickConfig(
        seed=args.seed,
        pose_noise_m=args.pose_noise_m,
        pose_noise_deg=args.pose_noise_deg,
        pipeline=choice(Pipeline, args.pipeline, "--pipeline"),
        ordering=choice(Ordering, args.ordering, "--ordering"),
    )
    attempts = run_selection(
        Path(args.selection), Path(args.out), config, args.sheets, args.quiet, args.scenes
    )
    lifted = sum(a.lifted for a in attempts)
    placed = sum(a.placed for a in attempts)
    n = max(len(attempts), 1)
    print(
        f"{len(attempts)} objects: grasp success (lifted and held) {lifted} "
        f"({100 * lifted / n:.1f} %), pick and place {placed} ({100 * placed / n:.1f} %) -> "
        f"{Path(args.out) / RESULTS_FILE}, tables in {Path(args.out) / TABLES_FILE}"
    )
    return 0


def _table(args: argparse.Namespace) -> int:
    from grade_scenes.pick.perception import Pipeline
    from grade_scenes.pick.protocol import Ordering, choice
    from grade_scenes.pick.table import TABLE_FILE, run_table

    pipelines = [choice(Pipeline, p, "--pipelines") for p in args.pipelines.split(",")]
    orderings = [choice(Ordering, o, "--orderings") for o in args.orderings.split(",")]
    text = run_table(
        Path(args.selection),
        Path(args.out),
        args.seed,
        pipelines,
        orderings,
        args.scenes,
        args.quiet,
    )
    print(text)
    print(f"-> {Path(args.out) / TABLE_FILE}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run one `grade scenes` command; returns the exit code."""
    handlers = {
        "table": _table,
        "reach": _reach,
        "generate": _generate,
        "select": _select,
        "overlay": _overlay,
        "run": _run,
    }
    return handlers[args.command](args)


def main(argv: list[str]) -> int:
    """Parse argv and run `grade scenes`."""
    return run(build_parser().parse_args(argv))
