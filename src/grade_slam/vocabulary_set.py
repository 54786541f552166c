"""Where ORB-SLAM3's vocabulary comes from: `PYORBSLAM3_VOCAB`, or one grade builds on first use.

The built vocabulary is trained (`grade_slam.vocabulary`) from frames our own simulator renders
of `config/slam_vocabulary.yaml` for several seeds (other rooms, textures, lights, people and
flying objects per seed). It is cached under `<cache>/orb_vocabulary/v<VERSION>-<key>/ORBvoc.txt`
with `<cache>` = `$GRADE_CACHE_DIR`, else `$XDG_CACHE_HOME/grade`, else `~/.cache/grade`; the key
hashes everything that decides the training set and the tree (the scenario file's text, the
seeds, the duration, k, L, features per image, the training seed), so a changed recipe builds a
new file and an old one is never reused by mistake. A manifest beside it records the hash of the
rendered images themselves, the image and descriptor counts.

It is built the first time something needs it (`resolve_vocabulary`, called before a backend
starts, never inside a live callback) or by `grade slam vocab`: the same function, so the same
bytes. The build holds an exclusive `fcntl` lock on `<folder>.lock` beside the cache folder, so
parallel processes (test workers, several nodes) build it once: the others wait, then use it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar

import cv2
import numpy as np
import yaml
from numpy.typing import NDArray
from tqdm import tqdm

from grade_common.atomic import StagedOutput
from grade_common.cache_dir import cache_dir
from grade_common.rundir import RunLayout
from grade_common.schema import Checked, Wording, bounds
from grade_common.share import shipped_file
from grade_common.tum import ImageKind, list_file, read_list
from grade_slam.config import PARAMETER_WORDING
from grade_slam.errors import SlamConfigError, SlamOutputExistsError
from grade_slam.vocabulary import (
    VocabularyShape,
    check_vocabulary_file,
    orb_descriptors,
    train_vocabulary,
)

# Bump when the training code changes what it writes for the same recipe.
VOCABULARY_VERSION = 1
VOCAB_ENV = "PYORBSLAM3_VOCAB"
BUILD_STEP = "grade slam vocab"
TRAINING_SCENARIO = "config/slam_vocabulary.yaml"
# What a first use says it takes: 32 s for the default recipe on a quiet 2-core machine, 3 min
# of wall time (51 s of CPU) while other work shared the cores.
BUILD_TIME = "about 30 s on 2 free cores, a few minutes when they are busy"

Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class VocabularyRecipe(Checked):
    """The training set (scenario seeds and length) and the tree's shape."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    seeds: tuple[int, ...] = (1, 2, 3, 4)
    duration_s: float = field(default=25.0, metadata=bounds(0.0, exclusive_min=True))
    shape: VocabularyShape = field(default_factory=VocabularyShape)

    def validate(self, path: str) -> None:
        if not self.seeds:
            raise SlamConfigError("seeds = () is invalid: at least one seed")


# A small one for the test suite: one seed, a few seconds (about 20 images), built in seconds.
TEST_RECIPE = VocabularyRecipe(seeds=(7,), duration_s=8.0)


def cache_root() -> Path:
    """`$GRADE_CACHE_DIR`, else `$XDG_CACHE_HOME/grade`, else `~/.cache/grade`."""
    return cache_dir("GRADE_CACHE_DIR")


def _scenario_text() -> str:
    return shipped_file(TRAINING_SCENARIO).read_text()


def recipe_key(recipe: VocabularyRecipe) -> str:
    """16 hex digits of the SHA-256 of the recipe, the training scenario with every default
    filled in (a new default look, e.g. the antialiasing, renders other images) and the
    version."""
    from grade_sim.config.scenario import scenario_from_mapping, scenario_to_mapping

    scenario = scenario_to_mapping(scenario_from_mapping(yaml.safe_load(_scenario_text())))
    blob = json.dumps(
        {"version": VOCABULARY_VERSION, "recipe": asdict(recipe), "scenario": scenario},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def cached_vocabulary_path(recipe: VocabularyRecipe) -> Path:
    """Where the vocabulary of `recipe` is (or will be) cached."""
    folder = f"v{VOCABULARY_VERSION}-{recipe_key(recipe)}"
    return cache_root() / "orb_vocabulary" / folder / "ORBvoc.txt"


def training_images(recipe: VocabularyRecipe, work: Path) -> Iterator[NDArray[np.uint8]]:
    """Grey images our simulator renders of the training scenario, seed after seed."""
    # Imported here: the simulator is needed only to build a vocabulary, not to use one.
    from grade_sim.config.scenario import scenario_from_mapping
    from grade_sim.sim.run import run_scenario

    base = yaml.safe_load(_scenario_text())
    for seed in recipe.seeds:
        data = {**base, "seed": seed, "duration_s": recipe.duration_s}
        scenario = scenario_from_mapping(data)
        run_dir = work / f"seed{seed}"
        run_scenario(scenario, run_dir)
        robot, camera = scenario.robots[0].name, scenario.robots[0].cameras[0].name
        folder = RunLayout(run_dir).camera_dir(robot, camera)
        for _, name in read_list(folder / list_file(ImageKind.RGB)):
            gray = cv2.imread(str(folder / name), cv2.IMREAD_GRAYSCALE)
            if gray is None:
                raise SlamConfigError(f"{folder / name}: cannot read a rendered training image")
            yield np.asarray(gray, dtype=np.uint8)


@contextlib.contextmanager
def stderr_progress() -> Iterator[Progress]:
    """A `build_vocabulary` progress callback drawing one tqdm bar per stage on stderr."""
    bars: dict[str, tqdm[None]] = {}

    def progress(stage: str, done: int, total: int | None) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(desc=stage, total=total, unit="", file=sys.stderr)
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        for bar in bars.values():
            bar.close()


@contextlib.contextmanager
def _build_lock(target: Path, log: Callable[[str], object] | None) -> Iterator[None]:
    """Hold the exclusive lock of `target`'s build (waiting for another process's build)."""
    lock_path = target.parent.with_name(target.parent.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if log is not None:
                log(f"waiting for another process that builds the ORB vocabulary {target}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build_vocabulary(
    recipe: VocabularyRecipe,
    *,
    progress: Progress | None = None,
    log: Callable[[str], object] | None = None,
) -> Path:
    """The cached vocabulary of `recipe`, rendering and training it first if it is not there
    (under the build lock: a process that finds another one building waits for it).

    Args:
        progress: called as (stage, done, total) while rendering ("images") and training
            ("descriptors"); total is None when it is not known in advance.
        log: told when this call waits for another process's build.
    """
    target = cached_vocabulary_path(recipe)
    if target.is_file():
        return target
    with _build_lock(target, log):
        if not target.is_file():  # nobody built it while this one waited
            _build(recipe, target, progress)
    return target


def _build(recipe: VocabularyRecipe, target: Path, progress: Progress | None) -> None:
    digest = hashlib.sha256()
    descriptors = []
    with tempfile.TemporaryDirectory(prefix="grade_vocab_") as tmp:
        for gray in training_images(recipe, Path(tmp)):
            digest.update(gray.tobytes())
            descriptors.append(orb_descriptors(gray, recipe.shape.features_per_image))
            if progress is not None:
                progress("images", len(descriptors), None)
    total = sum(len(d) for d in descriptors)
    placed = 0

    def on_leaf(count: int) -> None:
        nonlocal placed
        placed += count
        if progress is not None:
            progress("descriptors", placed, total)

    text = train_vocabulary(descriptors, recipe.shape, on_leaf)
    manifest = {
        "version": VOCABULARY_VERSION,
        "recipe": asdict(recipe),
        "scenario": TRAINING_SCENARIO,
        "images": len(descriptors),
        "descriptors": total,
        "images_sha256": digest.hexdigest(),
    }
    with StagedOutput(target.parent, exists_error=SlamOutputExistsError) as staged:
        staged.mkdir(parents=True, exist_ok=True)
        (staged / target.name).write_text(text)
        (staged / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def resolve_vocabulary(
    explicit: str,
    recipe: VocabularyRecipe = VocabularyRecipe(),
    *,
    log: Callable[[str], object] | None = None,
) -> Path:
    """The vocabulary ORB-SLAM3 loads: `explicit` if given, else `$PYORBSLAM3_VOCAB`, else the
    cached one of `recipe`, which is built first if it is missing and `log` is given (it says
    so, and the build draws progress bars on stderr).

    Raises:
        SlamConfigError: the file named does not exist or is not a vocabulary, or nothing is
            named, grade's has not been built and `log` is None (the message names
            `grade slam vocab`).
    """
    env = os.environ.get(VOCAB_ENV, "")
    if explicit:
        path, source = Path(explicit), "vocabulary"
    elif env:
        path, source = Path(env), f"${VOCAB_ENV}"
    else:
        path = cached_vocabulary_path(recipe)
        if path.is_file():
            return path
        if log is None:
            raise SlamConfigError(
                f"no ORB vocabulary: vocabulary is empty, ${VOCAB_ENV} is not set, and grade's "
                f"own has not been built yet ({path} is missing); build it with "
                f"`{BUILD_STEP}` (renders and trains, {BUILD_TIME}), or set ${VOCAB_ENV} to "
                "an ORBvoc.txt"
            )
        log(
            "building ORB-SLAM3's vocabulary before tracking (first use; renders and trains, "
            f"{BUILD_TIME}; cached at {path}; `{BUILD_STEP}` does the same ahead of time)"
        )
        with stderr_progress() as progress:
            built = build_vocabulary(recipe, progress=progress, log=log)
        log(f"ORB vocabulary ready: {built}")
        return built
    if not path.is_file():
        raise SlamConfigError(
            f"{source} = {str(path)!r} is invalid: no such file; give an ORB vocabulary in "
            f"DBoW2 text format (ORBvoc.txt), or leave it empty and grade builds its own "
            f"(`{BUILD_STEP}`)"
        )
    try:
        check_vocabulary_file(path)
    except (ValueError, UnicodeDecodeError) as err:
        raise SlamConfigError(
            f"{source} = {str(path)!r} is invalid: not a DBoW2 text vocabulary ({err})"
        ) from err
    return path
