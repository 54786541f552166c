"""`grade doctor`: what works on this machine, line by line, and the one command that fixes each
part that does not. Exits 1 when a required part is broken (`make demo` and `make test` run it
first); optional parts only print their install command.

The probes (grade_common.doctor) run in child processes of the checked Python: this one, or
`--python` (e.g. the other distro's .venv-kilted/bin/python).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grade_common import doctor
from grade_common.cli_args import command_parser
from grade_common.doctor import Finding, Need, State
from grade_common.venv_worker import WorkerEnvironment

SETUP = "make setup"
TRANSPORT_FIX = "source scripts/env.sh (grade's Fast DDS profile; docs/transport.md)"
GL_FIX = (
    "apt-get install libegl1 libgl1-mesa-dri (EGL, the default), or libosmesa6 and MUJOCO_GL=osmesa"
)
# A 15 s run of the default scenario (`make demo`: bag, ground truth, record, report) is about
# 0.3 GB; twice that leaves room for the report and the bag's temporary chunks.
DEMO_RUN_BYTES = 600 * 2**20
DEFAULT_RUNS_DIR = Path("runs")

_EMBREE_PROBE = """
import numpy as np
from grade_sim.engine.raycast import EmbreeDevice, InstanceMesh, InstanceScene
tri = np.array([[[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]])
scene = InstanceScene([InstanceMesh(1, tri, np.ones(1))], EmbreeDevice())
hits = scene.cast(np.array([[0.0, 0.0, 1.0]]), np.array([[0.0, 0.0, -1.0]]), 10.0)
assert abs(hits.range_m[0] - 1.0) < 1e-5, hits.range_m
print("embreex: a test ray hits its triangle at 1.000 m")
"""
_RAY_PROBE = "import ray; print(f'ray {ray.__version__} (grade batch --ray)')"


def _worker_finding(part: str, worker: WorkerEnvironment, code: str) -> Finding:
    """A library in a venv of its own (bpy, MediaPipe): found where grade looks, and imports."""
    try:
        found = worker.python()
    except worker.error as err:
        why = str(err).split(";")[0]
        return Finding(part, Need.OPTIONAL, State.MISSING, why, worker.setup_command)
    return doctor.import_finding(part, found, code, Need.OPTIONAL, worker.setup_command)


def _filament_finding(python: str) -> Finding:
    from grade_render.errors import RenderSetupError
    from grade_render.filament_env import FILAMENT_SETUP_COMMAND, probe_filament

    try:
        probe_filament(python)
    except RenderSetupError as err:
        first = str(err).splitlines()[0].split(";")[0]
        return Finding(
            "Vulkan (Filament)", Need.OPTIONAL, State.MISSING, first, FILAMENT_SETUP_COMMAND
        )
    return Finding(
        "Vulkan (Filament)", Need.OPTIONAL, State.OK, "Filament renders headless through Vulkan"
    )


def _vocabulary_finding() -> Finding:
    from grade_slam.vocabulary_set import (
        BUILD_STEP,
        VOCAB_ENV,
        VocabularyRecipe,
        cached_vocabulary_path,
    )

    chosen = os.environ.get(VOCAB_ENV)
    path = Path(chosen) if chosen else cached_vocabulary_path(VocabularyRecipe())
    if path.is_file():
        return Finding("ORB vocabulary", Need.OPTIONAL, State.OK, f"{path}")
    where = f"{VOCAB_ENV}={chosen}" if chosen else str(path)
    return Finding(
        "ORB vocabulary",
        Need.OPTIONAL,
        State.MISSING,
        f"not built yet ({where})",
        f"{BUILD_STEP} (renders and trains, about 30 s)",
    )


def _bake_finding() -> Finding:
    from grade_sim.engine.bake.cache import CACHE_ENV, default_cache_dir

    return doctor.cache_finding(
        "bake cache", default_cache_dir(), f"set {CACHE_ENV} to a writable folder"
    )


def findings(python: str, runs_dir: Path) -> list[Finding]:
    """Every check, in the order of the report. The probes are child processes that mostly
    wait (for a GL or Vulkan context, an import), so they run side by side."""
    from grade_eval.realism.worker import MEDIAPIPE
    from grade_render.worker_process import BLENDER

    if not Path(python).is_file():
        # Nothing of grade can run: say so once instead of once per probe.
        why = f"{python} does not exist"
        return [Finding("Python environment", Need.REQUIRED, State.BROKEN, why, SETUP)]
    bpy_code = "import bpy; print('bpy', bpy.app.version_string)"
    mediapipe_code = "import mediapipe; print('mediapipe', mediapipe.__version__)"
    checks: list[Callable[[], list[Finding]]] = [
        lambda: doctor.ros_findings(python, SETUP, TRANSPORT_FIX),
        lambda: [doctor.gl_finding(python, GL_FIX)],
        lambda: [doctor.import_finding("Embree", python, _EMBREE_PROBE, Need.REQUIRED, SETUP)],
        lambda: [doctor.disk_finding(runs_dir.resolve(), DEMO_RUN_BYTES, "a default-scenario run")],
        lambda: [_filament_finding(python)],
        lambda: [_worker_finding("bpy (Cycles)", BLENDER, bpy_code)],
        lambda: [_worker_finding("MediaPipe", MEDIAPIPE, mediapipe_code)],
        lambda: [_vocabulary_finding()],
        lambda: [doctor.import_finding("Ray", python, _RAY_PROBE, Need.OPTIONAL, SETUP)],
        lambda: [_bake_finding()],
    ]
    with ThreadPoolExecutor(max_workers=len(checks)) as pool:
        done = list(pool.map(lambda check: check(), checks))
    return [finding for group in done for finding in group]


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "grade doctor",
        "What works on this machine and the command that fixes each part that does not.\n"
        "Exit 1 when a required part is broken.",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the Python environment to check (default: this one), e.g. .venv-kilted/bin/python",
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
        default=DEFAULT_RUNS_DIR,
        help="where runs are written, for the free-disk check (default: runs)",
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="one summary line (and the report only when a required part is broken)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Print the report (or the summary) and return 1 when a required part is broken."""
    found = findings(args.python, args.runs_dir)
    code = doctor.exit_code(found)
    if not args.summary or code:
        print("\n".join(doctor.report_lines(found)))
    print(doctor.summary_line(found))
    return code


def main(argv: Sequence[str]) -> int:
    return run(build_parser().parse_args(argv))
