"""The colour pass draws a scene's objects nearest first (less llvmpipe work, the same depth).

`mjr_render` draws opaque geoms in the scene's order. llvmpipe tests depth before it shades a
fragment, so a surface drawn after the one that hides it costs only the test, while one drawn
before it is textured, lit and then painted over. Drawn from near to far, the rooms and
furniture behind the nearest wall are left unshaded (docs/benchmarks.md). Transparent entries
are still sorted by `mjr_render` itself, far to near.

Objects are drawn whole: an object's entries (the geoms and skin of one instance, a shelf's
boards, a window's frame and pane) go together, where the distance of its nearest part puts
them, in the scene's order among themselves.

What it changes: depth is the nearest surface whatever the order, and the segmentation pass
keeps the scene's own order (the entries are put back after the colour pass), so depth,
instance and semantic images are identical. RGB could change only where faces of two objects
touch at exactly the same depth: MuJoCo's depth test (GL_GEQUAL) lets the one drawn last win
such a tie, and the order decides which that is. Faces of one object keep their order, and
with it the winner of their ties. The order depends only on the poses, so a run and its replay
draw alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.engine.mujoco.scene_geoms import SceneGeoms


def nearest_first(
    geoms: SceneGeoms, eye_world: FloatArray, object_of: NDArray[np.int64]
) -> NDArray[np.intp]:
    """Scene positions of this frame's entries, object by object, the object with the nearest
    part first; an object's parts keep the scene's order. `object_of[i]` names entry i's object
    (entries of one object, e.g. a shelf's boards, share it; -1: an object of its own)."""
    pos = np.asarray(geoms.records["pos"], dtype=np.float64)
    distance = np.linalg.norm(pos - eye_world, axis=1)
    index = np.arange(len(distance))
    obj = np.where(object_of >= 0, object_of, -1 - index)  # unnamed entries: one each
    _, group = np.unique(obj, return_inverse=True)
    nearest = np.full(group.max(initial=-1) + 1, np.inf)
    np.minimum.at(nearest, group, distance)
    return np.lexsort((index, group, nearest[group]))


@contextmanager
def drawn_nearest_first(
    geoms: SceneGeoms, eye_world: FloatArray, object_of: NDArray[np.int64]
) -> Iterator[None]:
    """Within the block, the scene's entries are in `nearest_first` order; after it, in their
    own order again (byte for byte), whatever the block raised."""
    entries = geoms.entries
    order = nearest_first(geoms, eye_world, object_of)
    if len(order) < 2 or bool(np.all(order[1:] > order[:-1])):
        yield
        return
    own = entries.copy()
    entries[...] = own[order]
    try:
        yield
    finally:
        entries[...] = own
