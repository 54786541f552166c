"""The procedural texture library: every kind draws, is seeded, tiles, and is cached on disk."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from grade_common import textures
from grade_common.textures import (
    CACHE_ENV,
    PROCEDURAL_KINDS,
    SURFACES,
    TextureCache,
    TextureKind,
    TextureSpec,
    default_cache_dir,
    generate,
    is_procedural,
)

SIZE = 128  # small: the generators scale with the size, their structure does not change
BROWN, DARK = (0.55, 0.36, 0.2), (0.3, 0.2, 0.1)


def spec(kind: TextureKind, seed: int = 1, size: int = SIZE) -> TextureSpec:
    return TextureSpec(kind, BROWN, DARK, seed=seed, size_px=size)


def test_the_issue_kinds_are_all_in_the_library() -> None:
    wanted = {
        "wood", "parquet", "tiles", "carpet", "plaster", "painted", "brick", "concrete",
        "fabric", "grass", "dirt", "bark", "leaves",
    }  # fmt: skip
    assert wanted <= {k.value for k in PROCEDURAL_KINDS}
    assert set(SURFACES) == set(PROCEDURAL_KINDS)
    for old in (TextureKind.NONE, TextureKind.CHECKER, TextureKind.GRADIENT, TextureKind.NOISE):
        assert not is_procedural(old)


@pytest.mark.parametrize("kind", PROCEDURAL_KINDS, ids=lambda k: k.value)
def test_each_kind_is_seeded_textured_and_tiles(kind: TextureKind) -> None:
    img = generate(spec(kind))
    assert img.shape == (SIZE, SIZE, 3)
    assert img.dtype == np.uint8
    np.testing.assert_array_equal(img, generate(spec(kind)))  # same spec, same image
    assert not np.array_equal(img, generate(spec(kind, seed=2)))
    assert img.astype(float).std() > 2.0  # a pattern, not a flat colour
    # Seamless: the jump from the last row (column) to the first is no larger than the jumps
    # between neighbouring rows inside (joints and grout lines included).
    f = img.astype(np.float64)
    for axis in (0, 1):
        inner = np.abs(np.diff(f, axis=axis)).mean(axis=(1 - axis, 2))
        wrap = np.abs(np.take(f, 0, axis=axis) - np.take(f, -1, axis=axis)).mean()
        assert wrap <= inner.max() + 1.0, (kind, axis, wrap, inner.max())


def test_noise_tiles_exactly_like_its_inside() -> None:
    rng = np.random.default_rng(0)
    for cells, stretch in ((4, 1), (8, 8), (6, 1)):  # 6 is rounded to a power of two
        f = textures._fbm(rng, SIZE, cells, 4, 0.5, stretch_x=stretch)
        for axis in (0, 1):
            inner = np.abs(np.diff(f, axis=axis)).mean()
            wrap = np.abs(np.take(f, 0, axis=axis) - np.take(f, -1, axis=axis)).mean()
            assert wrap < 1.5 * inner + 1e-3, (cells, stretch, axis)


def test_colours_follow_the_material() -> None:
    red = generate(TextureSpec(TextureKind.PLASTER, (0.8, 0.1, 0.1), (0.7, 0.1, 0.1), 0, SIZE))
    blue = generate(TextureSpec(TextureKind.PLASTER, (0.1, 0.1, 0.8), (0.1, 0.1, 0.7), 0, SIZE))
    assert red[..., 0].mean() > 150 > red[..., 2].mean()
    assert blue[..., 2].mean() > 150 > blue[..., 0].mean()


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (spec(TextureKind.CHECKER), "not procedural"),
        (spec(TextureKind.WOOD, size=100), "power of two"),
        (spec(TextureKind.WOOD, size=32), "power of two"),
    ],
)
def test_bad_specs_are_refused(bad: TextureSpec, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        generate(bad)


def test_cache_writes_once_and_reads_back(tmp_path: Path) -> None:
    s = spec(TextureKind.BRICK)
    first = TextureCache(tmp_path).image(s)
    path = TextureCache(tmp_path).path_of(s)
    assert path.is_file()
    assert not [p for p in tmp_path.iterdir() if p != path]  # no staging leftovers
    stamp = path.stat().st_mtime_ns
    again = TextureCache(tmp_path).image(s)  # a new process: read from disk, not regenerated
    np.testing.assert_array_equal(first, again)
    assert path.stat().st_mtime_ns == stamp
    # The key covers everything the image depends on.
    assert spec(TextureKind.BRICK, seed=2).key() != s.key()
    other_colour = TextureSpec(TextureKind.BRICK, BROWN, (0.3, 0.2, 0.11), 1, SIZE)
    assert other_colour.key() != s.key()


def test_a_damaged_cache_file_is_regenerated(tmp_path: Path) -> None:
    s = spec(TextureKind.TILES)
    cache = TextureCache(tmp_path)
    cache.path_of(s).write_bytes(b"truncated")
    np.testing.assert_array_equal(cache.image(s), generate(s))
    assert TextureCache(tmp_path).image(s).shape == (SIZE, SIZE, 3)


def test_saving_a_texture_another_process_saved_first_is_fine(tmp_path: Path) -> None:
    s = spec(TextureKind.DIRT)
    img = generate(s)
    path = TextureCache(tmp_path).path_of(s)
    textures._store(path, img)  # the other process
    textures._store(path, img)  # this one: finds it there, keeps it
    np.testing.assert_array_equal(TextureCache(tmp_path).image(s), img)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_cache_folder_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "tex"))
    assert default_cache_dir() == tmp_path / "tex"
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "grade" / "textures"
    assert os.environ.get(CACHE_ENV) is None
