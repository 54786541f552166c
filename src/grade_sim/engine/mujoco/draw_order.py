"""The colour pass draws a scene's entries nearest first (less llvmpipe work, the same depth).

`mjr_render` draws opaque geoms in the scene's order. llvmpipe tests depth before it shades a
fragment, so a surface drawn after the one that hides it costs only the test, while one drawn
before it is textured, lit and then painted over. Drawn from near to far, the rooms and
furniture behind the nearest wall are left unshaded: a fifth or so of llvmpipe's colour-pass
CPU in the default scenario (docs/benchmarks.md). Transparent entries are still sorted by
`mjr_render` itself, far to near.

What it changes: depth is the nearest surface whatever the order, and the segmentation pass
keeps the scene's own order (the entries are put back after the colour pass), so depth,
instance and semantic images are identical. RGB can change only where two surfaces lie at
exactly the same depth (coplanar faces that touch): MuJoCo's depth test (GL_GEQUAL) lets the
one drawn last win such a tie, and the order decides which that is. The order depends only on
the poses, so a run and its replay draw alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.engine.mujoco.scene_geoms import SceneGeoms


def nearest_first(geoms: SceneGeoms, eye_world: FloatArray) -> NDArray[np.intp]:
    """Scene positions of this frame's entries, nearest centre to `eye_world` first (stable)."""
    pos = np.asarray(geoms.records["pos"], dtype=np.float64)
    return np.argsort(np.linalg.norm(pos - eye_world, axis=1), kind="stable")


@contextmanager
def drawn_nearest_first(geoms: SceneGeoms, eye_world: FloatArray) -> Iterator[None]:
    """Within the block, the scene's entries are in `nearest_first` order; after it, in their
    own order again (byte for byte), whatever the block raised."""
    entries = geoms.entries
    order = nearest_first(geoms, eye_world)
    if len(order) < 2 or bool(np.all(order[1:] > order[:-1])):
        yield
        return
    own = entries.copy()
    entries[...] = own[order]
    try:
        yield
    finally:
        entries[...] = own
