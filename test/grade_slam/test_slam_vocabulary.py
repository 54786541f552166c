"""The ORB vocabulary: DBoW2 text that ORB-SLAM3 reads, deterministic for a seed, and a missing
one refused with the step that builds it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grade_slam.backends import create_backend
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamConfigError
from grade_slam.vocabulary import VocabularyShape, check_vocabulary_file, train_vocabulary
from grade_slam.vocabulary_set import (
    TEST_RECIPE,
    VocabularyRecipe,
    cached_vocabulary_path,
    recipe_key,
    resolve_vocabulary,
)


def _descriptors(seed: int, images: int = 6, per_image: int = 80) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    # Clustered bits (a few prototypes with flipped bits), as real descriptors are.
    prototypes = rng.integers(0, 256, size=(12, 32), dtype=np.uint8)
    out = []
    for _ in range(images):
        rows = prototypes[rng.integers(0, 12, size=per_image)]
        flips = np.packbits(rng.random((per_image, 256)) < 0.05, axis=1)
        out.append(np.bitwise_xor(rows, flips))
    return out


def test_vocabulary_text_is_dbow2_and_the_same_for_the_same_seed(tmp_path: Path) -> None:
    shape = VocabularyShape(k=4, levels=3, seed=5)
    text = train_vocabulary(_descriptors(1), shape)
    assert text == train_vocabulary(_descriptors(1), shape)
    assert text != train_vocabulary(_descriptors(1), VocabularyShape(k=4, levels=3, seed=6))
    lines = text.split("\n")
    assert lines[0] == "4 3 0 0"
    assert not text.endswith("\n")  # ORB-SLAM3 would read one more, empty node
    nodes = [line.split() for line in lines[1:]]
    assert all(len(n) == 35 for n in nodes)
    parents = [int(n[0]) for n in nodes]
    assert all(0 <= p <= i for i, p in enumerate(parents))  # a parent precedes its children
    assert max(sum(1 for p in parents if p == parent) for parent in set(parents)) <= 4
    leaves = [n for n in nodes if n[1] == "1"]
    assert leaves
    assert all(float(n[-1]) >= 0.0 for n in leaves)
    assert all(float(n[-1]) == 0.0 for n in nodes if n[1] == "0")
    # every leaf is at depth 3 (DBoW2 grows each branch to L)
    depth = {0: 0}
    for i, p in enumerate(parents, start=1):
        depth[i] = depth[p] + 1
    assert {depth[i] for i, n in enumerate(nodes, start=1) if n[1] == "1"} == {3}
    path = tmp_path / "voc.txt"
    path.write_text(text)
    assert check_vocabulary_file(path) == (4, 3)


def test_training_refuses_no_descriptors() -> None:
    with pytest.raises(ValueError, match="no ORB descriptors"):
        train_vocabulary([np.zeros((0, 32), np.uint8)], VocabularyShape())


def test_cache_key_follows_the_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path))
    assert recipe_key(TEST_RECIPE) == recipe_key(VocabularyRecipe(seeds=(7,), duration_s=8.0))
    assert recipe_key(TEST_RECIPE) != recipe_key(VocabularyRecipe())
    path = cached_vocabulary_path(TEST_RECIPE)
    assert path.parent.parent == tmp_path / "orb_vocabulary"
    assert path.parent.name.startswith("v1-")


@pytest.mark.parametrize(
    ("explicit", "env", "match"),
    [
        ("", "", r"no ORB vocabulary: .* build it with `grade slam vocab`"),
        ("/nonexistent/ORBvoc.txt", "", r"vocabulary = '/nonexistent/ORBvoc.txt' is invalid"),
        ("", "/nonexistent/voc.txt", r"\$PYORBSLAM3_VOCAB = '/nonexistent/voc.txt' is invalid"),
    ],
)
def test_missing_vocabulary_is_refused_with_the_build_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explicit: str, env: str, match: str
) -> None:
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYORBSLAM3_VOCAB", env)
    with pytest.raises(SlamConfigError, match=match):
        resolve_vocabulary(explicit)


def test_not_a_vocabulary_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "voc.txt"
    bad.write_text("10 5 0 0\n0 0 1 2 3\n")
    with pytest.raises(SlamConfigError, match=r"not a DBoW2 text vocabulary .*line 2 has 5 fields"):
        resolve_vocabulary(str(bad))


def test_orb_slam3_backend_refuses_a_named_vocabulary_that_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyorbslam3")
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PYORBSLAM3_VOCAB", raising=False)
    missing = tmp_path / "ORBvoc.txt"
    with pytest.raises(SlamConfigError, match=f"vocabulary = '{missing}' is invalid: no such"):
        create_backend(SlamConfig(backend="orb_slam3_rgbd", vocabulary=str(missing)))
