"""The ORB vocabulary builds itself on first use: under a file lock, so that two processes
asking for it at once build it once, and byte for byte what `grade slam vocab` builds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grade_slam.vocabulary_set import TEST_RECIPE, build_vocabulary, cached_vocabulary_path

# resolve_vocabulary as a backend's first use calls it (log given: it builds what is missing)
_FIRST_USE = (
    "from grade_slam.vocabulary_set import TEST_RECIPE, resolve_vocabulary; "
    "print(resolve_vocabulary('', TEST_RECIPE, log=print), flush=True)"
)
_CLI = [sys.executable, "-m", "grade_cli.main", "slam", "vocab"]
_TEST_RECIPE_ARGS = [
    "--seeds",
    *map(str, TEST_RECIPE.seeds),
    "--duration-s",
    str(TEST_RECIPE.duration_s),
]


@pytest.mark.slow
def test_first_use_and_grade_slam_vocab_at_once_build_one_vocabulary_with_the_same_bytes(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "GRADE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PYORBSLAM3_VOCAB", None)
    first_use = subprocess.Popen(
        [sys.executable, "-c", _FIRST_USE],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    cli = subprocess.Popen(
        [*_CLI, *_TEST_RECIPE_ARGS],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    first_text, _ = first_use.communicate(timeout=600)
    cli_text, _ = cli.communicate(timeout=600)
    assert first_use.returncode == 0, first_text
    assert cli.returncode == 0, cli_text
    assert "building ORB-SLAM3's vocabulary before tracking" in first_text
    # One of them rendered the training images, the other waited on the lock and took it.
    built = ["images:" in text for text in (first_text, cli_text)]
    assert built.count(True) == 1, (first_text, cli_text)
    assert "waiting for another process that builds the ORB vocabulary" in (
        cli_text if built[0] else first_text
    )
    path = Path(first_text.strip().splitlines()[-1])
    assert path.is_file()
    assert f"vocabulary (cached) {path}" in cli_text or f"vocabulary {path}" in (cli_text)
    # The same bytes as the suite's own build of the recipe (another cache, another process).
    assert path.read_bytes() == build_vocabulary(TEST_RECIPE).read_bytes()
    assert path.parent.parent == tmp_path / "cache" / "orb_vocabulary"
    assert path.name == cached_vocabulary_path(TEST_RECIPE).name
